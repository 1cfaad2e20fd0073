"""Learning curves: every branch of stationary points of beta f over an alpha grid (numba continuation in
the well-conditioned charts, anchored by the multistart of :mod:`statmech.scm._minima`; or the
continuation engine through folds), the equilibrium at every alpha."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..continuation import analyze
from ..errors import ConvergenceError, check_choice, check_range
from ..result import Result, check_real
from ._activation import activation_info
from ._charts import ROW
from ._common import _spec_starts_at, _trace, _unspecialized_path, at_point
from ._engine import continuation_problem
from ._equations import _kern
from ._free_energy import ALPHA_MAX, K_MAX, _check_K
from ._infinite_k import _phi_roots
from ._minima import COL, _args, _same, classify, stationary_points, unspecialized_row

_MAX_ANCHORS = 8
_PRIORITY = {"specialized": 0, "unspecialized": 1, "anti-specialized": 2}


@dataclass(frozen=True, repr=False)
class Branch(Result):
    """One branch of stationary points over the alpha grid.

    ``exists`` (n,) bool; ``R, S, C, free_energy, generalization_error, entropy, one_minus_R`` (n,) masked
    arrays (masked where the branch does not exist; ``one_minus_R`` keeps its digits where R rounds to 1);
    ``hessian_eigenvalues`` (n, 3): the eigenvalues of the Hessian relative to the entropy metric (see
    :func:`statmech.scm.equilibria`); ``stable`` (n,) bool: a local minimum in the site-symmetric space;
    ``free_energy_error`` (n,) the rounding bound of beta f.
    """
    name: str
    alpha: np.ndarray
    exists: np.ndarray
    R: np.ndarray
    S: np.ndarray
    C: np.ndarray
    free_energy: np.ndarray
    generalization_error: np.ndarray
    entropy: np.ndarray
    hessian_eigenvalues: np.ndarray
    stable: np.ndarray
    one_minus_R: np.ndarray = None
    free_energy_error: np.ndarray = None
    headline: ClassVar[str | None] = None     # a branch over a grid: no one headline number

    @property
    def converged(self):
        return bool(np.any(self.exists))

    @property
    def residual(self):
        return 0.0

    @property
    def iterations(self):
        return 0

    @property
    def ansatz(self):
        return "rs"

    @property
    def rs_stable(self):
        return None

    @property
    def error(self):
        e = None if self.free_energy_error is None else np.ma.masked_invalid(self.free_energy_error)
        return 0.0 if e is None or e.count() == 0 else float(e.max())

    @property
    def stability(self):
        return None


@dataclass(frozen=True, repr=False)
class LearningCurve(Result):
    """All branches of the site-symmetric beta f over an alpha grid (:func:`learning_curve`).

    Attributes
    ----------
    K : float
    activation : str
    alpha : ndarray (n,)
    branches : dict
        name -> :class:`Branch` ("unspecialized", "specialized", "anti-specialized"; a second distinct
        branch of one kind gets "-2"; ``method="continuation"`` adds "-unstable" saddle sheets).
    equilibrium : dict
        The global minimum among the locally stable branches at each alpha: ``branch`` (names),
        ``R, S, C, generalization_error, free_energy`` arrays.  Every alpha has one (else ConvergenceError).
    converged : bool
        True (a failure raises).
    residual : float
        The largest Newton step (curvature units) of the equilibrium points.
    error : float
        The largest rounding bound of the equilibrium beta f.
    iterations, ansatz, rs_stable, stability
        0, "rs", None (site-symmetric theory: full-space stability per point from
        :func:`statmech.scm.equilibria`), None.
    """
    K: float
    activation: str
    alpha: np.ndarray
    branches: dict
    equilibrium: dict
    residual: float = 0.0
    error: float = 0.0
    converged: bool = True
    iterations: int = 0
    ansatz: str = "rs"
    rs_stable: object = None
    stability: object = None
    headline: ClassVar[str | None] = None     # a curve over a grid: no one headline number


def _branch_from(name, alphas, out):
    out = np.asarray(out, dtype=float)
    ok = out[:, COL["conv"]] == 1.0

    def mk(a):
        return np.ma.masked_invalid(np.where(ok, a, np.nan))  # masked (never NaN) where the branch does not exist
    lam = out[:, COL["lam"]:COL["lam"] + 3]
    return Branch(name, alphas, ok, mk(out[:, COL["R"]]), mk(out[:, COL["S"]]), mk(out[:, COL["C"]]),
                  mk(out[:, COL["f"]]), mk(out[:, COL["eps"]]), mk(out[:, COL["s"]]),
                  np.ma.masked_invalid(np.where(ok[:, None], lam, np.nan)), ok & (lam[:, 0] > 0),
                  mk(out[:, COL["omr"]]), mk(out[:, COL["noise"]]))


def _equilibrium(branches, alphas):
    """The thermodynamic state: lowest free energy among the stable branches at each alpha;
    ConvergenceError naming the alpha where no branch is stable."""
    names = list(branches)
    n = alphas.size
    F = np.stack([np.where(branches[m].stable, np.ma.filled(branches[m].free_energy, np.inf), np.inf) for m in names])
    have = np.isfinite(F.min(axis=0))
    if not have.all():
        i = int(np.argmin(have))
        raise ConvergenceError(f"no stable branch at alpha={alphas[i]!r}",
                               diagnostics={"alpha": float(alphas[i]), "branches": names})
    # ties within the rounding of beta f (K = 2, K = inf for even phi) go to the first kind in
    # _PRIORITY, so that the answer does not depend on the last bit
    E = np.stack([np.ma.filled(branches[m].free_energy_error.astype(float), 0.0)
                  if branches[m].free_energy_error is not None else np.zeros(n) for m in names])
    fmin = F.min(axis=0)
    tol = 2.0 * np.max(np.where(np.isfinite(F), E, 0.0), axis=0) + 1e-13 * np.abs(fmin)
    rank = np.array([_PRIORITY.get(m, len(_PRIORITY)) for m in names])
    cand = F <= fmin + tol
    best = np.argmin(np.where(cand, rank[:, None], 10 ** 6), axis=0)
    eq = {"branch": np.array([names[b] for b in best])}
    for key in ("R", "S", "C", "generalization_error", "free_energy"):
        vals = np.stack([np.ma.filled(getattr(branches[m], key).astype(float), np.nan) for m in names])
        eq[key] = np.ma.masked_invalid(vals[best, np.arange(n)])
    return eq


def _check_alphas(alphas):
    check_real("alphas", alphas)
    alphas = np.asarray(check_range("alphas", alphas, 0.0, ALPHA_MAX), dtype=float).ravel()
    if alphas.size == 0:
        raise ValueError("alphas must be a non-empty array of alpha >= 0")
    if np.any(np.diff(alphas) < 0):
        raise ValueError("alphas must be sorted in increasing order")
    return alphas


def learning_curve(K, activation="erf", alphas=None, *, method="newton"):
    """All branches of stationary points of beta f over a sorted alpha grid, and the equilibrium.

    The free energy is Oostwal et al. (2019) Eq. 20 with eps_g corrected (:func:`free_energy`).

    Domain: K any real in [2, 1e15] (see :func:`equilibria` for 1 < K < 2), or ``math.inf`` (branches of
    phi(R), beta f per hidden unit);
    ``alphas`` sorted, 0 <= alpha <= 1e100 (default: 201 points up to 100 for erf, 20 otherwise); any
    activation.  The equilibrium exists at every alpha (ConvergenceError naming alpha otherwise).

    ``method="newton"`` (default): the unspecialized branch R = S is solved exactly at every alpha; the
    other branches are the minima found by the multistart of :func:`equilibria` at up to 8 anchors (the
    largest alpha, the smallest positive one and decades in between), each continued in both directions
    through the grid by Newton in the well-conditioned charts (secant predictor in ln alpha, steps halved
    where Newton fails, jumps or reaches R = S) until it ends at a fold or merges into R = S.  A branch
    keeps its name from the anchor ("specialized", "anti-specialized"; a second distinct one of a kind
    "-2").  Every point carries the stability eigenvalues; ``stable`` marks local minima.  K = inf: the
    stationary points of phi(R) at every alpha (minima, and R = 0 always).

    ``method="continuation"`` (finite K, alpha up to ~1e3 K): the branches, including the unstable
    specialized saddle between a fold and the bifurcation of R = S, traced by the continuation engine
    (:func:`statmech.continuation.analyze`) through folds, every monotone sheet re-solved on the grid.
    Branch names get a suffix ``-unstable`` (saddle sheets) and ``-2``, ``-3`` for repeats.

    Returns a :class:`LearningCurve`.  For the positions of the transitions use :func:`transitions`; for
    full-space stability at one alpha, :func:`equilibria`.
    """
    K = _check_K(K)
    if math.isfinite(K) and not 2.0 <= K <= K_MAX:
        raise ValueError(f"K must be in [2, {K_MAX:g}] or math.inf, got {K!r} (for 1 < K < 2 the positive "
                         f"definite site-symmetric overlaps are not confined to |S|, |C| < 1, and the minimum can "
                         f"lie on that boundary)")
    info = activation_info(activation)
    if alphas is None:
        alphas = np.linspace(0.0, 100.0 if info.name == "erf" else 20.0, 201)
    alphas = _check_alphas(alphas)
    check_choice("method", method, ("newton", "continuation"))
    if math.isinf(K) and info.dm0 <= 0:
        raise ValueError("activation must have E[g'(z)] != 0 for K = inf")
    with at_point("learning_curve", K=K, activation=info.name, alphas=f"{alphas.size} values in "
                  f"[{alphas[0]:g}, {alphas[-1]:g}]", method=method):
        if math.isinf(K):
            return _learning_curve_inf(info, alphas)
        if method == "continuation":
            return _learning_curve_continuation(info, K, alphas)
        return _learning_curve_newton(info, K, alphas)


def _learning_curve_newton(info, K, alphas):
    n = alphas.size
    out_u = np.full((n, ROW), np.nan)
    out_u[:, COL["conv"]] = 0.0
    for i, a in enumerate(alphas):
        r = unspecialized_row(info, float(a), K)
        if r is not None:
            out_u[i] = r
    branches = {"unspecialized": out_u}
    for i in _anchors(alphas):
        for row in stationary_points(info, float(alphas[i]), K):
            if row[COL["lam"]] <= 0 or classify(row) == "unspecialized":
                continue
            if any(o[i, COL["conv"]] == 1.0 and _same(o[i], row) for o in branches.values()):
                continue
            out = _trace_both(info, K, alphas, i, row)
            name, k = classify(row), 2
            key = name
            while key in branches:
                key = f"{name}-{k}"
                k += 1
            branches[key] = out
    br = {k: _branch_from(k, alphas, v) for k, v in branches.items()}
    return _curve(info.name, K, alphas, br)


def _curve(name, K, alphas, br):
    eq = _equilibrium(br, alphas)
    res = err = 0.0
    for i, b in enumerate(eq["branch"]):
        if b in br:
            e = br[b].free_energy_error
            err = max(err, 0.0 if e is None or np.ma.is_masked(e[i]) else float(e[i]))
    return LearningCurve(K, name, alphas, br, eq, residual=res, error=err)


def _anchors(alphas):
    """Indices where the multistart runs: the largest alpha, the smallest positive one, and the grid
    points nearest to alpha_max / 10^k between them (at most 8)."""
    n = alphas.size
    pos = np.nonzero(alphas > 0)[0]
    if pos.size == 0:
        return []
    if pos.size <= _MAX_ANCHORS:
        return list(pos[::-1])
    la = np.log(alphas[pos])
    lt = la[-1] - math.log(10.0) * np.arange(0, int((la[-1] - la[0]) / math.log(10.0)) + 1)
    idx = [int(pos[np.argmin(np.abs(la - t))]) for t in lt] + [int(pos[0])]
    idx = list(dict.fromkeys(idx))
    if len(idx) > _MAX_ANCHORS:
        keep = np.unique(np.round(np.linspace(0, len(idx) - 1, _MAX_ANCHORS)).astype(int))
        idx = [idx[j] for j in keep]
    return idx


def _trace_both(info, K, alphas, i, row):
    """The branch through the minimum ``row`` at alphas[i], continued down to alphas[0] and up to alphas[-1]."""
    n = alphas.size
    out = np.full((n, ROW), np.nan)
    out[:, COL["conv"]] = 0.0
    args = _args(info)
    chart = int(row[COL["chart"]])
    y0 = np.ascontiguousarray(row[:3], dtype=float)
    down = np.full((i + 1, ROW), np.nan)
    _kern.chart_trace(chart, *args, float(K), np.ascontiguousarray(alphas[i::-1]), y0, down)
    out[:i + 1] = down[::-1]
    if i < n - 1:
        up = np.full((n - i, ROW), np.nan)
        _kern.chart_trace(chart, *args, float(K), np.ascontiguousarray(alphas[i:]), y0, up)
        out[i + 1:] = up[1:]
    return out


def _learning_curve_inf(info, alphas):
    """K = inf: the stationary points of phi(R) at every alpha (R = 0 always; the minima with R > 0, R < 0)."""
    n = alphas.size
    outs = {k: np.full((n, ROW), np.nan) for k in ("unspecialized", "specialized", "anti-specialized")}
    for o in outs.values():
        o[:, COL["conv"]] = 0.0
    for i, a in enumerate(alphas):
        roots, args = _phi_roots(info, float(a))
        for side, e in roots:
            v, d1, d2, eps, s, R = _kern.phi_at(*args, e, side)
            w = e * (2.0 - e)
            lam = d2 / ((1.0 + R * R) / (w * w))
            name = "unspecialized" if e == 1.0 else ("specialized" if side > 0 else "anti-specialized")
            if name != "unspecialized" and not lam > 0:
                continue
            r = outs[name][i]
            if r[COL["conv"]] == 1.0 and r[COL["f"]] <= v:
                continue
            omr = e if side > 0 else 2.0 - e
            r[:] = np.nan
            r[COL["R"]], r[COL["S"]], r[COL["C"]] = R, omr, 0.0
            r[COL["f"]], r[COL["eps"]], r[COL["s"]] = v, eps, s
            r[COL["lam"]:COL["lam"] + 3] = (lam, 1.0, 1.0)
            r[COL["conv"]], r[COL["its"]], r[COL["step"]] = 1.0, 0, 0.0
            r[COL["omr"]] = omr
            r[COL["noise"]] = 8 * 2.3e-16 * (a * (abs(eps) + 2.0 * abs(info.dm0) * omr) + abs(s))
    br = {k: _branch_from(k, alphas, v) for k, v in outs.items() if (v[:, COL["conv"]] == 1.0).any()}
    return _curve(info.name, math.inf, alphas, br)


def _rows_from_rsc(out):
    """Rows of the old (R, S, C) trace (12 columns) in the :data:`ROW` layout (stability: the (R, S, C)
    Hessian eigenvalues)."""
    n = out.shape[0]
    r = np.full((n, ROW), np.nan)
    r[:, COL["R"]], r[:, COL["S"]], r[:, COL["C"]] = out[:, 0], out[:, 1], out[:, 2]
    r[:, COL["f"]], r[:, COL["eps"]], r[:, COL["s"]] = out[:, 3], out[:, 4], out[:, 5]
    r[:, COL["lam"]:COL["lam"] + 3] = out[:, 6:9]
    r[:, COL["conv"]] = np.where(out[:, 9] == 1.0, 1.0, 0.0)
    r[:, COL["its"]], r[:, COL["step"]] = out[:, 10], out[:, 11]
    r[:, COL["omr"]] = 1.0 - out[:, 0]
    return r


def _learning_curve_continuation(info, K, alphas):
    top = float(alphas[-1])
    if top <= 0:
        raise ValueError("alphas must contain a value > 0 for method='continuation'")
    u_top = _unspecialized_path(info, K, top)
    spec = _spec_starts_at(info, K, top)
    scale = np.array([1.0, K - 1.0, K - 1.0])
    prob = continuation_problem(K, info, top, u_top[:3])
    an = analyze(prob, 0.0, top, starts=[u_top[:3] * scale] + [r[:3] * scale for r in spec.values()],
                 scan=0, ds=0.01)
    branches = {}
    n = alphas.size
    for b in an.branches:
        X = b.x / scale
        P = b.p
        # monotone sheets in p (cut at folds)
        d = np.sign(np.diff(P))
        rs = X[:, 0] - X[:, 1]
        cls = np.where(np.abs(rs) <= 1e-7 * (1 + np.abs(X[:, 0])), 0, np.sign(rs))
        cuts = sorted(set([0, P.size] + [i + 1 for i in range(1, d.size) if d[i] != d[i - 1] and d[i] != 0]
                          + [i + 1 for i in range(cls.size - 1) if cls[i] != cls[i + 1] and cls[i] * cls[i + 1] != 0]))
        for a0, a1 in zip(cuts[:-1], cuts[1:]):
            lo, hi = max(a0 - 1, 0), a1
            ps, xs = P[lo:hi], X[lo:hi]
            if ps.size < 2:
                continue
            order = np.argsort(ps)
            ps, xs = ps[order], xs[order]
            out = np.full((n, 12), np.nan)
            out[:, 9] = 0.0
            tol_a = 1e-6 * (1 + ps[-1])
            inside = (alphas >= ps[0] - tol_a) & (alphas <= ps[-1] + tol_a)
            for i in np.where(inside)[0]:
                x0 = np.array([np.interp(alphas[i], ps, xs[:, j]) for j in range(3)])
                unspec = abs(x0[0] - x0[1]) <= 1e-7 * (1 + abs(x0[0]))
                row = _trace(info, K, alphas[i:i + 1], x0, unspec)[0]
                if row[9] == 1.0 and np.max(np.abs(row[:3] - x0)) < 1e-2:
                    out[i] = row
            ok = out[:, 9] == 1.0
            if not ok.any():
                continue
            sel = out[ok]
            rsd = np.median(sel[:, 0] - sel[:, 1])
            name = "unspecialized" if abs(rsd) <= 1e-7 else ("specialized" if rsd > 0 else "anti-specialized")
            if np.mean(out[ok, 6] > 0) < 0.5:
                name += "-unstable"
            key, k = name, 2
            while key in branches:
                key = f"{name}-{k}"
                k += 1
            branches[key] = _branch_from(key, alphas, _rows_from_rsc(out))
    return _curve(info.name, K, alphas, branches)
