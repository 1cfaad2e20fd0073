"""``online``: integrate the online-learning ODEs from given overlaps, with the plateau passage."""
from __future__ import annotations

import hashlib
import json
import math
import time
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np

from ..errors import ConvergenceError, check_range
from ..result import Result, check_real
from ._online_common import (check_convention, check_lr, check_noise, check_sizes, check_state, check_teacher, expand,
                             generic_rhs, pack, resolve_activation, symmetric_mode, teacher_parts, unpack, weights)
from ._online_integrate import dop853, tableau
from ._online_odes import eps_state, n_state

__all__ = ["online", "OnlineTrajectory", "PlateauPassage"]

_MODE_NAMES = {0: "full", 1: "symmetric (Q, C, R)", 2: "site-symmetric (Q, C, R, S)"}


@dataclass(frozen=True)
class PlateauPassage:
    """The plateau a trajectory passed through (:attr:`OnlineTrajectory.plateau`).

    ``height``: eps_g of the unspecialized fixed point (:func:`statmech.scm.online_plateau`) of
    the same problem.  ``entry``: the first alpha at which ``|eps_g / height - 1| <= tol``;
    ``exit``: the first alpha after the entry at which ``eps_g < (1 - tol) height``, or None if
    the trajectory is still on the plateau at its last alpha.  Both are located on an internal
    grid of 32 points per decade of alpha (and the requested alphas) by linear interpolation in
    log alpha.  ``escape_rate``: the plateau's escape rate (largest real part of its Jacobian).
    """
    height: float
    entry: float
    exit: "float | None"
    tol: float
    escape_rate: float
    criterion: str = "|eps_g/height - 1| <= tol on entry; eps_g < (1 - tol) height on exit"

    @property
    def length(self):
        """exit - entry (None while on the plateau)."""
        return None if self.exit is None else self.exit - self.entry


@dataclass(frozen=True, repr=False)
class OnlineTrajectory(Result):
    """The solution of the online-learning ODEs (:func:`statmech.scm.online`).

    Attributes
    ----------
    alphas : ndarray
        The requested alphas (steps / N).
    Q, R : ndarray
        Q_ik and R_in at every alpha, shapes (n, K, K) and (n, K, M).
    eps_g : ndarray
        The generalization error (1/2) E[(sigma - tau)^2] at every alpha (without output noise).
    eps_g_final : float
        eps_g at the last alpha (the headline).
    plateau : PlateauPassage or None
        The unspecialized plateau passed through; None when the trajectory never came within
        ``plateau_tol`` of its height, or when T is not invariant under permutations of the
        teachers (then the plateau is not a symmetric fixed point).
    method : str
        ``"dop853 full"`` or ``"dop853 symmetric ..."`` (a state invariant under permutations is
        integrated in the reduced variables, exactly).
    iterations, rejected, n_rhs : int
        Accepted and rejected steps and right-hand-side evaluations (of the returned run).
    error : float
        max over alphas of ``|eps_g - eps_g'|``, eps_g' from a second run with rtol and atol
        divided by 100 (the returned run is the tighter one), or with ``estimate_error=False``
        the sum of the accepted steps' local error estimates (it does not include the amplification
        of errors near the plateau).  For activations without closed forms the quadrature error
        estimate of the right-hand side is added.
    converged : bool
        True (a failed integration raises :class:`statmech.ConvergenceError`).
    stability : None
        Not computed for a trajectory (see :func:`statmech.scm.online_plateau`).
    """
    K: int
    M: int
    activation: str
    convention: str
    lr: float
    noise: float
    alphas: np.ndarray
    Q: np.ndarray
    R: np.ndarray
    T: np.ndarray
    eps_g: np.ndarray
    eps_g_final: float
    plateau: "PlateauPassage | None"
    method: str
    iterations: int
    rejected: int
    n_rhs: int
    error: float
    residual: float = 0.0
    converged: bool = True
    ansatz: str = "-"
    rs_stable: "bool | None" = None
    stability: "np.ndarray | None" = field(default=None)

    headline = "eps_g_final"


# ------------------------------------------------------------------ checkpoints
def _fingerprint(*parts):
    h = hashlib.sha256()
    for p in parts:
        h.update(np.ascontiguousarray(p, dtype=float).tobytes() if isinstance(p, np.ndarray) else repr(p).encode())
    return h.hexdigest()


def _read_ckpt(path, fp):
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return None
    return data if data.get("fingerprint") == fp else None


def _write_ckpt(path, fp, t, y, h, Y, n_done, counters):
    from ..io import atomic_write_json
    atomic_write_json(path, {"fingerprint": fp, "t": t, "y": list(map(float, y)), "h": h, "n_done": int(n_done),
                             "Y": [list(map(float, r)) for r in Y[:n_done]], "counters": list(map(float, counters))})


# ------------------------------------------------------------------ one integration
def _integrate(mode, act, y0, t_out, K, M, T, a, b, lr, noise2, rtol, atol, checkpoint, fp, every, bar):
    """States at t_out (from alpha = 0): (Y, steps, rejected, n_rhs, local error sum, quadrature error)."""
    n = y0.size
    nout = t_out.size
    t_end = float(t_out[-1])
    Y = np.empty((nout, n))
    t, y, h, done = 0.0, y0.copy(), 0.0, 0
    counters = [0, 0, 0, 0.0]
    if checkpoint is not None:
        data = _read_ckpt(checkpoint, fp)
        if data is not None:
            t, y, h, done = float(data["t"]), np.array(data["y"]), float(data["h"]), int(data["n_done"])
            Y[:done] = np.array(data["Y"]).reshape(done, n)
            counters = list(data["counters"])
    tab = tableau()
    chunk = 200
    last_save = time.monotonic()
    quad = 0.0
    while done < nout:
        if bar is not None:
            bar.n = min(t, t_end)
            bar.refresh()
        t0 = time.perf_counter()
        if act.code < 3:
            out = dop853(mode, act.code, y, t, t_end, t_out[done:], K, M, T, a, b, lr, noise2, rtol, atol, h, chunk, *tab)
            Yc, y, h, t, io, st, rj, nf, status, es = out
            Y[done:done + io] = Yc[:io]
            done += io
            counters = [counters[0] + st, counters[1] + rj, counters[2] + nf, counters[3] + es]
            if status >= 2:
                raise ConvergenceError(f"online: the integration failed at alpha = {t:.6g} ("
                                       f"{'step size underflow' if status == 2 else 'non-finite overlaps'}); "
                                       f"lr may exceed the stable learning rate", x=y if y.size <= 8 else None,
                                       iterations=int(counters[0]))
        else:
            from scipy.integrate import solve_ivp
            stop = float(t_out[min(nout - 1, done + max(1, nout // 20))])

            def f(_t, z):
                return generic_rhs(mode, act, z, K, M, T, a, b, lr, noise2)[0]
            sel = t_out[done:][t_out[done:] <= stop]
            sol = solve_ivp(f, (t, stop), y, method="DOP853", t_eval=sel, rtol=rtol, atol=atol,
                            first_step=h if h > 0 else None)
            if sol.status != 0 or not np.all(np.isfinite(sol.y)):
                raise ConvergenceError(f"online: the integration failed before alpha = {stop:.6g}: {sol.message}",
                                       iterations=int(counters[0]))
            Y[done:done + sel.size] = sol.y.T
            done += sel.size
            t, y = stop, sol.y[:, -1].copy()
            counters = [counters[0] + sol.t.size, counters[1], counters[2] + sol.nfev, counters[3]]
            quad = max(quad, generic_rhs(mode, act, y, K, M, T, a, b, lr, noise2, estimate=True)[2])
        dt = time.perf_counter() - t0
        if act.code < 3:
            chunk = int(min(100000, max(20, chunk * min(4.0, max(0.25, 0.5 * every / max(dt, 1e-6))))))
        if checkpoint is not None and done < nout and time.monotonic() - last_save >= every:
            _write_ckpt(checkpoint, fp, t, y, h, Y, done, counters)
            last_save = time.monotonic()
    if bar is not None:
        bar.n = t_end
        bar.refresh()
    return Y, int(counters[0]), int(counters[1]), int(counters[2]), float(counters[3]), quad


def _eps(mode, act, Y, K, M, T, a, b):
    if act.code < 3:
        return np.array([eps_state(mode, act.code, np.ascontiguousarray(r), K, M, T, a, b) for r in Y])
    return np.array([generic_rhs(mode, act, r, K, M, T, a, b, 0.0, 0.0)[1] for r in Y])


def _crossing(al, v, i, level):
    """log-linear interpolation of the crossing of v = level between grid points i-1 and i."""
    if i == 0 or al[i - 1] <= 0.0:
        return float(al[i])
    x0, x1 = math.log(al[i - 1]), math.log(al[i])
    f0, f1 = v[i - 1] - level, v[i] - level
    if f1 == f0:
        return float(al[i])
    return float(math.exp(x0 + (x1 - x0) * f0 / (f0 - f1)))


def _passage(al, eps, height, tol, rate):
    inside = np.abs(eps / height - 1.0) <= tol
    if not inside.any():
        return None
    i = int(np.argmax(inside))
    level = height * (1.0 + tol if eps[max(i - 1, 0)] > height else 1.0 - tol)
    entry = _crossing(al, eps, i, level)
    below = np.nonzero(eps[i:] < (1.0 - tol) * height)[0]
    exit_ = None
    if below.size:
        j = i + int(below[0])
        exit_ = _crossing(al, eps, j, (1.0 - tol) * height)
    return PlateauPassage(height=float(height), entry=entry, exit=exit_, tol=float(tol), escape_rate=float(rate))


def _plateau(K, M, activation, lr, convention, noise, T):
    from ._online_fixed_points import online_plateau
    return online_plateau(K, M, activation, lr, convention=convention, noise=noise, T=T)


@lru_cache(maxsize=64)
def _plateau_cached(K, M, name, lr, convention, noise, T_bytes):
    """The plateau of a closed-form activation (cached: trajectories of one problem share it)."""
    T = np.frombuffer(T_bytes).reshape(M, M)
    return _plateau(K, M, name, lr, convention, noise, T)


def online(K, M, activation, lr, alphas, *, Q0, R0, T=None, convention="saad-solla", noise=0.0, rtol=1e-10,
           atol=None, symmetric=True, estimate_error=True, plateau_tol=0.01, checkpoint=None, checkpoint_every=30.0,
           progress=False):
    """Integrate the online-SGD order-parameter ODEs of a soft committee machine (Saad & Solla 1995).

    Students x_i = w_i.xi/sqrt N (i < K), teachers y_n = B_n.xi/sqrt N (n < M), inputs xi ~ N(0, I);
    Q = w.w/N, R = w.B/N, T = B.B/N.  One SGD step per fresh example on (1/2)(tau - sigma)^2 with
    learning rate lr/N (w_i += (lr/sqrt N) delta_i xi); alpha = steps/N.  The ODEs, with the lr^2
    term, are written out in ``docs/online.md`` (and :mod:`statmech.scm._online_odes`).

    Parameters
    ----------
    K, M : int
        Student and teacher hidden units (>= 1).
    activation : str or callable
        ``"erf"`` (g(x) = erf(x/sqrt 2): closed-form I2, I3, I4), ``"relu"`` (I2, I3 closed form, I4
        by Stein's lemma and a one-dimensional orthant integral, ~1e-15), ``"linear"``, or any g(x)
        (a vectorized callable, an :class:`statmech.scm.Activation` or
        :class:`statmech.activations.ESP`; tensor Gauss--Hermite rules, error estimated, slow).
    lr : float
        Learning rate (> 0).
    alphas : array_like
        Strictly increasing alphas >= 0 at which to return the state.
    Q0, R0 : array_like
        Initial overlaps, (K, K) symmetric positive definite and (K, M); [[Q0, R0], [R0^T, T]] must
        be a Gram matrix.
    T : array_like, optional
        Teacher overlaps (M, M), symmetric positive definite; default I.
    convention : {"saad-solla", "normalized"}
        ``saad-solla``: sigma = sum_i g(x_i), tau = sum_n g(y_n); ``normalized``: sigma =
        K^-1/2 sum_i g(x_i), tau = M^-1/2 sum_n g(y_n) (the output scale of :mod:`statmech.scm`).
    noise : float
        Standard deviation of Gaussian noise added to the teacher's output (>= 0); eps_g is the
        noiseless test error.
    rtol, atol : float
        Local error tolerances of the Dormand--Prince 8(5,3) integrator; ``atol`` defaults to 1e-13
        for erf and linear, 1e-11 for ReLU and any other g (near the perfect solution the ReLU
        right-hand side varies on the scale 1 - rho of nearly parallel student and teacher
        fields, and a tighter atol only shortens the steps: eps_g stays accurate to ~1e-10 absolute).
    symmetric : bool
        Integrate a permutation-invariant initial state (S_K x S_M, or K = M with simultaneous
        permutations) in its reduced variables (exact, O(1) per step at any K); False forces the
        full system.
    estimate_error : bool
        Run twice (rtol, atol and 100 times tighter) and report the difference (see ``error``).
    plateau_tol : float
        Relative band of the plateau criterion (see :class:`PlateauPassage`).
    checkpoint : path, optional
        Write the integration state there (atomically) every ``checkpoint_every`` seconds and
        resume from it when called again with the same arguments; removed when done.
    progress : bool
        Show a progress bar in alpha.

    Returns
    -------
    OnlineTrajectory

    Raises
    ------
    ValueError
        lr <= 0, K or M < 1, shapes of Q0, R0, T that do not match K, M, Q0 not positive definite,
        overlaps that are not a Gram matrix, an unknown convention or activation.
    ConvergenceError
        The integration failed (the overlaps diverge, e.g. lr above the stable learning rate).
    """
    fn = "online"
    K, M = check_sizes(K, M, fn)
    lr = check_lr(lr, fn)
    convention = check_convention(convention, fn)
    noise = check_noise(noise, fn)
    act = resolve_activation(activation, fn)
    T = check_teacher(T, M, fn)
    Q0, R0 = check_state(Q0, R0, T, K, M, fn)
    check_real("alphas", alphas, function=fn)
    al = np.atleast_1d(np.asarray(alphas, dtype=float))
    if al.ndim != 1 or al.size == 0 or not np.all(np.isfinite(al)) or al[0] < 0 or np.any(np.diff(al) <= 0):
        raise ValueError(f"{fn}: alphas must be a non-empty, strictly increasing sequence of finite numbers >= 0, "
                         f"got {alphas!r}")
    if atol is None:
        atol = 1e-13 if act.code in (0, 2) else 1e-11
    for name, v in (("rtol", rtol), ("atol", atol)):
        check_real(name, v, function=fn)
        check_range(name, v, 0.0, 1.0, lo_open=True)
    check_real("plateau_tol", plateau_tol, function=fn)
    plateau_tol = float(check_range("plateau_tol", plateau_tol, 0.0, 1.0, lo_open=True, hi_open=True))
    check_real("checkpoint_every", checkpoint_every, function=fn)
    every = float(check_range("checkpoint_every", checkpoint_every, 0.0))
    a, b = weights(convention, K, M)
    mode, x0 = symmetric_mode(Q0, R0, T) if symmetric else (0, None)
    y0 = x0 if mode else pack(Q0, R0)

    # the plateau of this problem (T invariant under permutations of the teachers)
    Td, To = teacher_parts(T)
    plateau_fp = None
    if M == 1 or np.allclose(T, To + (Td - To) * np.eye(M), rtol=0.0, atol=1e-14 * max(1.0, abs(Td))):
        try:
            plateau_fp = (_plateau_cached(K, M, act.name, lr, convention, noise, T.tobytes()) if act.code < 3 else
                          _plateau(K, M, activation, lr, convention, noise, T))
        except ConvergenceError:
            plateau_fp = None
    # outputs: the requested alphas and, for the plateau criterion, 32 points per decade
    amax = float(al[-1])
    grid = np.geomspace(amax * 1e-6, amax, 6 * 32 + 1) if amax > 0 else np.zeros(0)
    t_all = np.unique(np.concatenate([al[al > 0], grid]))
    fp = _fingerprint("online-v1", K, M, act.name, lr, convention, noise, mode, rtol, atol, T, y0, t_all)

    bar = None
    if progress:
        from tqdm.auto import tqdm
        bar = tqdm(total=amax, desc=f"online K={K} M={M} {act.name}", leave=False, unit="alpha")
    try:
        if t_all.size:
            Y, st, rj, nf, es, quad = _integrate(mode, act, y0, t_all, K, M, T, a, b, lr, noise ** 2, rtol, atol,
                                                 checkpoint, fp, every, bar)
        else:
            Y, st, rj, nf, es, quad = np.zeros((0, y0.size)), 0, 0, 0, 0.0, 0.0
        eps_all = _eps(mode, act, Y, K, M, T, a, b) if t_all.size else np.zeros(0)
        error = es
        if estimate_error and t_all.size:
            Y2, st, rj, nf, es2, quad2 = _integrate(mode, act, y0, t_all, K, M, T, a, b, lr, noise ** 2, rtol / 100.0,
                                                    atol / 100.0, None, fp, every, None)
            eps2 = _eps(mode, act, Y2, K, M, T, a, b)
            error = float(np.max(np.abs(eps2 - eps_all)))
            Y, eps_all = Y2, eps2
        error += quad
    finally:
        if bar is not None:
            bar.close()
    if checkpoint is not None:
        Path(checkpoint).unlink(missing_ok=True)
    # the requested alphas
    idx = np.searchsorted(t_all, al)
    Qs = np.empty((al.size, K, K))
    Rs = np.empty((al.size, K, M))
    eps = np.empty(al.size)
    eps0 = float(_eps(mode, act, y0[None, :], K, M, T, a, b)[0])
    for j, (alpha, i) in enumerate(zip(al, idx)):
        yj = y0 if alpha == 0 else Y[i]
        eps[j] = eps0 if alpha == 0 else eps_all[i]
        Qs[j], Rs[j] = expand(mode, yj, K, M) if mode else unpack(yj, K, M)
    plateau = None
    if plateau_fp is not None and t_all.size:
        plateau = _passage(np.concatenate([[0.0], t_all]), np.concatenate([[eps0], eps_all]), plateau_fp.eps_g,
                           plateau_tol, plateau_fp.escape_rate)
    return OnlineTrajectory(K=K, M=M, activation=act.name, convention=convention, lr=lr, noise=noise, alphas=al,
                            Q=Qs, R=Rs, T=T.copy(), eps_g=eps, eps_g_final=float(eps[-1]), plateau=plateau,
                            method=f"dop853 {_MODE_NAMES[mode]}", iterations=st, rejected=rj, n_rhs=nf,
                            error=float(error))
