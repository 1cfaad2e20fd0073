r"""Online SGD of soft committee machines at finite N: direct simulation and an exact overlap chain.

The model of :func:`statmech.scm.online`: inputs xi ~ N(0, I_N), students w_i (K), teachers B_n (M),
fields x_i = w_i.xi/sqrt N, y_n = B_n.xi/sqrt N, outputs sigma = a sum g(x_i), tau = b sum g(y_n)
(``saad-solla``: a = b = 1; ``normalized``: a = K^-1/2, b = M^-1/2), label tau + noise zeta, one
fresh example per step, w_i <- w_i + (lr/sqrt N) delta_i xi with delta_i = a g'(x_i)(label - sigma);
alpha = steps/N.  Teachers B_n = sqrt N (L e)_n with T = L L^T (so y = L xi_{1..M}).

``method="direct"``: the N-dimensional weights, O(N K) per step.

``method="overlaps"`` (the default): a Markov chain on (Q, R) alone that is exact in
distribution.  Given the weights, the step depends on xi only through u = (x, y) and xi.xi.
u ~ N(0, C), C = [[Q, R], [R^T, T]]; with V the d = rank C dimensional span of the w_i and B_n,
xi.xi = |P_V xi|^2 + |P_perp xi|^2 where |P_V xi|^2 = N u^T C^+ u and |P_perp xi|^2 ~ chi^2_{N-d}
independently of u.  Hence

    Q_ik += (lr/N)(delta_i x_k + delta_k x_i) + (lr^2/N) delta_i delta_k (u^T C^+ u + chi^2_{N-d}/N)
    R_in += (lr/N) delta_i y_n

reproduces the joint law of the overlap trajectory of the direct simulation exactly, at
O((K + M)^3) per step instead of O(N K) (tests compare the two).  The initial overlaps are drawn
from the exact finite-N law of w_i ~ N(0, q0 I_N): R0 = sqrt(q0/N) Z L^-T (Z standard normal,
K x M) and Q0 = R0 T^-1 R0^T + q0 W/N with W ~ Wishart(K, N - M) -- or are given.

``online_sgd`` runs many seeds (one point each of :func:`statmech.sweep.sweep`: any
``concurrent.futures`` executor or a dask client, progress bar, checkpoint/resume with ``out=``)
and returns eps_g (computed exactly from the overlaps) at the requested alphas with standard
errors, and the escape time of every run: the first alpha at which eps_g falls below
``escape_fraction`` times the plateau height (on a grid of 2000 points, linear interpolation).
"""
from __future__ import annotations

import math
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numba
import numpy as np

from ..errors import ConvergenceError, check_choice, check_int, check_range
from ..result import Result, check_real

__all__ = ["online_sgd", "OnlineSimulation", "initial_overlaps"]

_2_PI = 2.0 / math.pi
_SQ2 = math.sqrt(2.0)
_SQ2PI = math.sqrt(2.0 / math.pi)


# ------------------------------------------------------------------ numba kernels
@numba.njit(cache=True)
def _store_outputs(out_t, io, t, Q, R, Qo, Ro):
    """Copy (Q, R) into the output slots of every requested time <= t not yet written; the next slot."""
    K, M = R.shape
    while io < out_t.size and out_t[io] <= t + 1e-12:
        for i in range(K):
            for k in range(K):
                Qo[io, i, k] = Q[i, k]
            for n in range(M):
                Ro[io, i, n] = R[i, n]
        io += 1
    return io


@numba.njit(cache=True)
def _g(code, x):
    if code == 0:
        return math.erf(x / _SQ2)
    if code == 1:
        return x if x > 0.0 else 0.0
    return x


@numba.njit(cache=True)
def _dg(code, x):
    if code == 0:
        return _SQ2PI * math.exp(-0.5 * x * x)
    if code == 1:
        return 1.0 if x > 0.0 else 0.0
    return 1.0


@numba.njit(cache=True)
def _pm(code, caa, cbb, cab):
    if code == 0:
        x = cab / math.sqrt((1.0 + caa) * (1.0 + cbb))
        return _2_PI * math.asin(min(1.0, max(-1.0, x)))
    if code == 1:
        if caa <= 0.0 or cbb <= 0.0:
            return 0.0
        s = math.sqrt(caa * cbb)
        rho = min(1.0, max(-1.0, cab / s))
        return (s * math.sqrt(max(0.0, 1.0 - rho * rho)) + cab * (math.pi - math.acos(rho))) / (2.0 * math.pi)
    return cab


@numba.njit(cache=True)
def eps_overlaps(code, Q, R, T, a, b):
    """eps_g = (1/2) E[(sigma - tau)^2] of the overlaps."""
    K, M = R.shape
    tot = 0.0
    for i in range(K):
        for k in range(K):
            tot += a * a * _pm(code, Q[i, i], Q[k, k], Q[i, k])
        for n in range(M):
            tot -= 2.0 * a * b * _pm(code, Q[i, i], T[n, n], R[i, n])
    for n in range(M):
        for m in range(M):
            tot += b * b * _pm(code, T[n, n], T[m, m], T[n, m])
    return 0.5 * tot


@numba.njit(cache=True)
def _record(code, Q, R, T, a, b, rec_t, ir, t, eps_rec):
    while ir < rec_t.size and rec_t[ir] <= t + 1e-12:
        eps_rec[ir] = eps_overlaps(code, Q, R, T, a, b)
        ir += 1
    return ir


@numba.njit(cache=True)
def _chol_pd(C, L):
    """Cholesky of the (semi)definite C, tolerating a rank deficit; returns the rank."""
    n = C.shape[0]
    rank = 0
    scale = 0.0
    for i in range(n):
        scale = max(scale, C[i, i])
    for j in range(n):
        s = C[j, j]
        for k in range(j):
            s -= L[j, k] * L[j, k]
        if s <= 1e-13 * scale:
            for i in range(j, n):
                L[i, j] = 0.0
            continue
        rank += 1
        L[j, j] = math.sqrt(s)
        for i in range(j + 1, n):
            t = C[i, j]
            for k in range(j):
                t -= L[i, k] * L[j, k]
            L[i, j] = t / L[j, j]
        for i in range(j):
            L[i, j] = 0.0
    return rank


@numba.njit(cache=True)
def _chain(code, Q, R, T, a, b, lr, noise, N, t_end, out_t, rec_t, seed):
    """The exact overlap chain from (Q, R) to alpha = t_end; (Q, R) at out_t, eps_g at rec_t."""
    np.random.seed(seed)
    K, M = R.shape
    U = K + M
    C = np.empty((U, U))
    L = np.zeros((U, U))
    z = np.empty(U)
    u = np.empty(U)
    d = np.empty(K)
    Qo = np.empty((out_t.size, K, K))
    Ro = np.empty((out_t.size, K, M))
    eps_rec = np.empty(rec_t.size)
    steps = int(round(t_end * N))
    io = 0
    ir = 0
    for s in range(steps + 1):
        t = s / N
        io = _store_outputs(out_t, io, t, Q, R, Qo, Ro)
        ir = _record(code, Q, R, T, a, b, rec_t, ir, t, eps_rec)
        if s == steps:
            break
        for i in range(U):
            for k in range(U):
                if i < K and k < K:
                    C[i, k] = Q[i, k]
                elif i < K:
                    C[i, k] = R[i, k - K]
                elif k < K:
                    C[i, k] = R[k, i - K]
                else:
                    C[i, k] = T[i - K, k - K]
        rank = _chol_pd(C, L)
        for i in range(U):
            z[i] = np.random.standard_normal()
        for i in range(U):
            acc = 0.0
            for k in range(i + 1):
                acc += L[i, k] * z[k]
            u[i] = acc
        # |P_V xi|^2 / N = u^T C^+ u = |z restricted to the rank directions|^2 (u = L z)
        pv = 0.0
        for i in range(U):
            if L[i, i] > 0.0:
                pv += z[i] * z[i]
        xx = pv / N + np.random.chisquare(N - rank) / N
        sig = 0.0
        for i in range(K):
            sig += _g(code, u[i])
        tau = 0.0
        for n in range(M):
            tau += _g(code, u[K + n])
        err = b * tau + noise * np.random.standard_normal() - a * sig
        for i in range(K):
            d[i] = a * _dg(code, u[i]) * err
        for i in range(K):
            for k in range(i, K):
                v = Q[i, k] + lr / N * (d[i] * u[k] + d[k] * u[i]) + lr * lr / N * d[i] * d[k] * xx
                Q[i, k] = v
                Q[k, i] = v
            for n in range(M):
                R[i, n] += lr / N * d[i] * u[K + n]
    return Qo, Ro, eps_rec


@numba.njit(cache=True)
def _direct(code, W, Lt, a, b, lr, noise, t_end, out_t, rec_t, seed, T):
    """Direct online SGD of the weights W (K x N), teachers y = Lt xi[:M]."""
    np.random.seed(seed)
    K, N = W.shape
    M = Lt.shape[0]
    xi = np.empty(N)
    x = np.empty(K)
    y = np.empty(M)
    d = np.empty(K)
    Q = np.empty((K, K))
    R = np.empty((K, M))
    Qo = np.empty((out_t.size, K, K))
    Ro = np.empty((out_t.size, K, M))
    eps_rec = np.empty(rec_t.size)
    sq = math.sqrt(N)
    steps = int(round(t_end * N))
    io = 0
    ir = 0
    # teacher vectors B_n = sqrt N (Lt e)_n: B.w/N = (Lt w[:M]) / sqrt N
    for s in range(steps + 1):
        t = s / N
        if (io < out_t.size and out_t[io] <= t + 1e-12) or (ir < rec_t.size and rec_t[ir] <= t + 1e-12):
            for i in range(K):
                for k in range(i, K):
                    acc = 0.0
                    for j in range(N):
                        acc += W[i, j] * W[k, j]
                    Q[i, k] = acc / N
                    Q[k, i] = acc / N
                for n in range(M):
                    acc = 0.0
                    for m in range(M):
                        acc += Lt[n, m] * W[i, m]
                    R[i, n] = acc / sq
            io = _store_outputs(out_t, io, t, Q, R, Qo, Ro)
            ir = _record(code, Q, R, T, a, b, rec_t, ir, t, eps_rec)
        if s == steps:
            break
        for j in range(N):
            xi[j] = np.random.standard_normal()
        for i in range(K):
            acc = 0.0
            for j in range(N):
                acc += W[i, j] * xi[j]
            x[i] = acc / sq
        for n in range(M):
            acc = 0.0
            for m in range(M):
                acc += Lt[n, m] * xi[m]
            y[n] = acc
        sig = 0.0
        for i in range(K):
            sig += _g(code, x[i])
        tau = 0.0
        for n in range(M):
            tau += _g(code, y[n])
        err = b * tau + noise * np.random.standard_normal() - a * sig
        for i in range(K):
            d[i] = lr / sq * a * _dg(code, x[i]) * err
        for i in range(K):
            di = d[i]
            for j in range(N):
                W[i, j] += di * xi[j]
    return Qo, Ro, eps_rec


# ------------------------------------------------------------------ one run (a sweep point)
def initial_overlaps(K, M, N, q0, T, rng):
    """(Q0, R0) of students w_i ~ N(0, q0 I_N) and teachers with overlaps T (the exact finite-N law)."""
    Lt = np.linalg.cholesky(T)
    Z = rng.standard_normal((K, M))
    R0 = math.sqrt(q0 / N) * Z @ Lt.T            # w.B/N with B = sqrt N Lt e: R = (w[:M] Lt^T)/sqrt N
    G = rng.standard_normal((K, N - M))
    Q0 = R0 @ np.linalg.solve(T, R0.T) + q0 * (G @ G.T) / N
    return 0.5 * (Q0 + Q0.T), R0


def _weights_for(Q0, R0, T, N, rng):
    """Weights W (K x N) with overlaps (Q0, R0) for teachers B = sqrt N (Lt e) (the direct method)."""
    K, M = R0.shape
    Lt = np.linalg.cholesky(T)
    # w[:M] = sqrt N R0 Lt^-T ; the rest has Gram Q0 - R0 T^-1 R0^T in a random orthonormal frame
    head = math.sqrt(N) * np.linalg.solve(Lt, R0.T).T
    rest = Q0 - R0 @ np.linalg.solve(T, R0.T)
    lam, V = np.linalg.eigh(0.5 * (rest + rest.T))
    A = V * np.sqrt(np.clip(lam, 0.0, None))
    frame, _ = np.linalg.qr(rng.standard_normal((N - M, K)))
    tail = math.sqrt(N) * A @ frame.T
    return np.ascontiguousarray(np.concatenate([head, tail], axis=1))


def run_one(point):
    """One seed (a :func:`statmech.sweep.sweep` point, JSON in and out)."""
    p = point
    K, M, N = p["K"], p["M"], p["N"]
    T = np.array(p["T"], dtype=float)
    rng = np.random.default_rng([p["seed"], 2019])
    if p["Q0"] is None:
        Q0, R0 = initial_overlaps(K, M, N, p["q0"], T, rng)
    else:
        Q0, R0 = np.array(p["Q0"], dtype=float), np.array(p["R0"], dtype=float)
    out_t = np.array(p["alphas"], dtype=float)
    rec_t = np.array(p["rec"], dtype=float)
    t_end = float(max(out_t[-1], rec_t[-1]))
    seed = int(rng.integers(2 ** 31 - 1))
    if p["method"] == "direct":
        W = _weights_for(Q0, R0, T, N, rng)
        Qo, Ro, er = _direct(p["code"], W, np.linalg.cholesky(T), p["a"], p["b"], p["lr"], p["noise"], t_end, out_t,
                             rec_t, seed, T)
    else:
        Qo, Ro, er = _chain(p["code"], Q0.copy(), R0.copy(), T, p["a"], p["b"], p["lr"], p["noise"], N, t_end, out_t,
                            rec_t, seed)
    eps = [float(eps_overlaps(p["code"], Qo[j], Ro[j], T, p["a"], p["b"])) for j in range(out_t.size)]
    esc = None
    lev = p["escape_level"]
    if lev is not None:
        below = np.nonzero(er < lev)[0]
        # the first drop below the level after the plateau has been reached (eps_g > level before)
        above = np.nonzero(er >= lev)[0]
        if below.size and above.size:
            first_above = above[0]
            later = below[below > first_above]
            if later.size:
                j = int(later[0])
                t0, t1, e0, e1 = rec_t[j - 1], rec_t[j], er[j - 1], er[j]
                esc = float(t0 + (t1 - t0) * (e0 - lev) / (e0 - e1)) if e0 != e1 else float(t1)
    return {"eps": eps, "Q": Qo.tolist(), "R": Ro.tolist(), "escape": esc, "Q0": Q0.tolist(), "R0": R0.tolist()}


@dataclass(frozen=True, repr=False)
class OnlineSimulation(Result):
    """Online SGD at finite N over many seeds (:func:`online_sgd`).

    Attributes
    ----------
    alphas : ndarray
        The requested alphas.
    eps_g : ndarray
        (n_seeds, n_alphas): eps_g of every run, computed exactly from its overlaps.
    eps_g_mean, eps_g_err : ndarray
        Mean over seeds and its standard error (standard deviation / sqrt(n_seeds)).
    Q, R : ndarray
        (n_seeds, n_alphas, K, K) and (n_seeds, n_alphas, K, M).
    Q0, R0 : ndarray
        The initial overlaps of every run.
    escape : ndarray
        The escape time of every run (first alpha with eps_g < escape_level after the plateau,
        interpolated on a 2000-point grid); ``inf`` for a run that had not escaped by the last
        alpha.
    escape_level : float
        ``escape_fraction`` times the plateau height (:func:`statmech.scm.online_plateau`); ``inf``
        (and every escape ``inf``) when there is no plateau (linear g, or no symmetric plateau found).
    error : float
        The largest standard error of the mean eps_g (a bound on the error of the headline
        ``eps_g_final``, the mean eps_g at the last alpha).

    Protocol: ``iterations`` = the SGD steps of all runs together; ``converged`` True (a run
    whose eps_g is not finite, i.e. that diverged, raises ConvergenceError); ``residual`` 0.0; ``ansatz`` ``"-"``.
    """
    K: int
    M: int
    activation: str
    convention: str
    lr: float
    noise: float
    N: int
    n_seeds: int
    method: str
    alphas: np.ndarray
    eps_g: np.ndarray
    eps_g_mean: np.ndarray
    eps_g_err: np.ndarray
    Q: np.ndarray
    R: np.ndarray
    Q0: np.ndarray
    R0: np.ndarray
    escape: np.ndarray
    escape_level: float
    error: float
    iterations: int
    T: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    converged: bool = True
    residual: float = 0.0
    ansatz: str = "-"
    rs_stable: "bool | None" = None
    stability: "np.ndarray | None" = None

    headline = "eps_g_final"

    @property
    def eps_g_final(self):
        """Mean eps_g over the seeds at the last alpha."""
        return float(self.eps_g_mean[-1])

    @property
    def escape_mean(self):
        """Mean escape time of the runs that escaped (inf if none did)."""
        e = self.escape[np.isfinite(self.escape)]
        return float(e.mean()) if e.size else math.inf


def online_sgd(K, M, activation, lr, alphas, *, N, n_seeds=16, q0=0.2, Q0=None, R0=None, T=None,
               convention="saad-solla", noise=0.0, method="overlaps", seed=0, escape_fraction=0.5, n_record=2000,
               out=None, executor=None, workers=None, progress=True):
    """Online SGD at input dimension N for ``n_seeds`` seeds, compared with :func:`statmech.scm.online`.

    Parameters
    ----------
    K, M : int
        Student and teacher hidden units.
    activation : {"erf", "relu", "linear"}
    lr : float
        Learning rate (> 0); alphas: increasing alphas >= 0 at which the overlaps are recorded.
    N : int
        Input dimension (>= K + M + 2).
    n_seeds : int
        Independent runs.
    q0 : float
        Initial weights w_i ~ N(0, q0 I_N) (the overlaps are drawn from their exact finite-N law),
        unless ``Q0`` and ``R0`` are given (the same initial overlaps for every run).
    T : array_like, optional
        Teacher overlaps, default I.
    convention, noise :
        As in :func:`statmech.scm.online`.
    method : {"overlaps", "direct"}
        The exact overlap chain (O((K + M)^3) per step) or the N-dimensional weights (O(N K)).
    escape_fraction : float
        Escape: eps_g below this fraction of the plateau height.
    out : path, optional
        Keep the runs in this sweep file (resumable); default a temporary file.
    executor, workers, progress :
        As in :func:`statmech.sweep.sweep` (default: a process pool).

    Returns
    -------
    OnlineSimulation
    """
    from .. import scm
    from ..sweep import sweep
    fn = "online_sgd"
    check_real("K", K, function=fn)
    check_real("M", M, function=fn)
    K = check_int("K", K, 1)
    M = check_int("M", M, 1)
    N = check_int("N", N, K + M + 2)
    n_seeds = check_int("n_seeds", n_seeds, 1)
    check_real("lr", lr, function=fn)
    lr = float(check_range("lr", lr, 0.0, lo_open=True))
    check_choice("activation", activation, ("erf", "relu", "linear"))
    check_choice("convention", convention, ("saad-solla", "normalized"))
    check_choice("method", method, ("overlaps", "direct"))
    noise = float(check_range("noise", noise, 0.0))
    q0 = float(check_range("q0", q0, 0.0, lo_open=True))
    escape_fraction = float(check_range("escape_fraction", escape_fraction, 0.0, 1.0, lo_open=True, hi_open=True))
    n_record = check_int("n_record", n_record, 2)
    al = np.atleast_1d(np.asarray(alphas, dtype=float))
    if al.ndim != 1 or al.size == 0 or not np.all(np.isfinite(al)) or al[0] < 0 or np.any(np.diff(al) <= 0):
        raise ValueError(f"{fn}: alphas must be a non-empty, strictly increasing sequence of finite numbers >= 0")
    T = np.eye(M) if T is None else np.array(T, dtype=float)
    if T.shape != (M, M):
        raise ValueError(f"{fn}: T must have shape ({M}, {M}), got {T.shape}")
    if (Q0 is None) != (R0 is None):
        raise ValueError(f"{fn}: give both Q0 and R0 or neither")
    if Q0 is not None:
        Q0 = np.array(Q0, dtype=float)
        R0 = np.array(R0, dtype=float)
        if Q0.shape != (K, K) or R0.shape != (K, M):
            raise ValueError(f"{fn}: Q0 and R0 must have shapes ({K}, {K}) and ({K}, {M})")
    a, b = (1.0, 1.0) if convention == "saad-solla" else (1.0 / math.sqrt(K), 1.0 / math.sqrt(M))
    code = {"erf": 0, "relu": 1, "linear": 2}[activation]
    level = None
    if activation != "linear":
        try:
            pl = scm.online_plateau(K, M, activation, lr, convention=convention, noise=noise, T=T)
            level = escape_fraction * pl.eps_g
        except (ValueError, ConvergenceError):
            level = None
    rec = np.linspace(0.0, float(al[-1]), n_record)
    base = {"K": K, "M": M, "N": N, "code": code, "a": a, "b": b, "lr": lr, "noise": noise, "q0": q0,
            "T": T.tolist(), "Q0": None if Q0 is None else Q0.tolist(), "R0": None if R0 is None else R0.tolist(),
            "alphas": al.tolist(), "rec": rec.tolist(), "method": method, "escape_level": level}
    points = [{**base, "seed": int(seed) * 100003 + s} for s in range(n_seeds)]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(out) if out is not None else Path(tmp) / "online_sgd.json"
        res = sweep(run_one, points, path, executor=executor, workers=workers, progress=progress,
                    desc=f"online SGD N={N}")
    eps = np.array([r["eps"] for r in res], dtype=float)
    if not np.all(np.isfinite(eps)):
        bad = int(np.argmax(~np.all(np.isfinite(eps), axis=1)))
        raise ConvergenceError(f"{fn}: SGD diverged (eps_g not finite) in run {bad} at lr={lr}, K={K}, M={M}, N={N}",
                               diagnostics={"activation": activation, "seed": points[bad]["seed"]})
    esc = np.array([math.inf if r["escape"] is None else r["escape"] for r in res], dtype=float)
    err = eps.std(axis=0, ddof=1) / math.sqrt(n_seeds) if n_seeds > 1 else np.zeros(al.size)
    return OnlineSimulation(K=K, M=M, activation=activation, convention=convention, lr=lr, noise=noise, N=N,
                            n_seeds=n_seeds, method=method, alphas=al, eps_g=eps, eps_g_mean=eps.mean(axis=0),
                            eps_g_err=err, Q=np.array([r["Q"] for r in res]), R=np.array([r["R"] for r in res]),
                            Q0=np.array([r["Q0"] for r in res]), R0=np.array([r["R0"] for r in res]), escape=esc,
                            escape_level=math.inf if level is None else float(level), error=float(err.max()),
                            iterations=int(round(float(al[-1]) * N)) * n_seeds, T=T)

