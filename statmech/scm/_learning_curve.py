"""Learning curves: every branch of stationary points of beta f over an alpha grid
(numba Newton along alpha, or the continuation engine through folds)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..continuation import analyze
from ..errors import check_choice, check_range
from ._activation import activation_info
from ._common import _spec_starts_at, _trace, _unspecialized_path
from ._engine import continuation_problem
from ._free_energy import _check_K


@dataclass(frozen=True)
class Branch:
    """One branch of stationary points over the alpha grid.

    ``exists`` (n,) bool; ``R, S, C, free_energy, generalization_error, entropy`` (n,) masked
    arrays (masked where the branch does not exist);
    ``hessian_eigenvalues`` (n, 3) in (R, S, C); ``stable`` (n,) bool: a local minimum in
    the site-symmetric space.
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


@dataclass(frozen=True)
class LearningCurve:
    """All branches of the site-symmetric beta f over an alpha grid.

    ``branches``: dict name -> :class:`Branch` ("unspecialized", "specialized",
    "anti-specialized"); ``equilibrium``: the global minimum among the locally stable
    branches at each alpha (``R, S, C, generalization_error, free_energy`` arrays and
    ``branch`` names).
    """
    K: float
    activation: str
    alpha: np.ndarray
    branches: dict
    equilibrium: dict


def _branch_from(name, alphas, out):
    ok = out[:, 9] == 1.0
    mk = lambda a: np.ma.masked_invalid(a.copy())  # masked (never NaN) where the branch does not exist
    return Branch(name, alphas, ok, mk(out[:, 0]), mk(out[:, 1]), mk(out[:, 2]), mk(out[:, 3]),
                  mk(out[:, 4]), mk(out[:, 5]), mk(out[:, 6:9]), ok & (out[:, 6] > 0))


def _cut_at_merge(out, sign):
    """Invalidate rows after a traced specialized branch reaches or crosses R = S."""
    d = out[:, 0] - out[:, 1]
    ok = out[:, 9] == 1.0
    bad = ok & ((sign * d) <= 1e-7 * (1 + np.abs(out[:, 0])))
    if np.any(bad):
        first = np.argmax(bad)
        out[first:, :] = np.nan
        out[first:, 9] = 0.0
    return out




def _equilibrium(branches, n):
    """The thermodynamic state: lowest free energy among the stable branches at each alpha."""
    names = list(branches)
    F = np.stack([np.where(branches[m].stable, np.ma.filled(branches[m].free_energy, np.inf), np.inf) for m in names])
    best = np.argmin(F, axis=0)
    have = np.isfinite(F.min(axis=0))
    eq = {"branch": np.array([names[b] if h else "" for b, h in zip(best, have)])}
    for key in ("R", "S", "C", "generalization_error", "free_energy"):
        vals = np.stack([np.ma.filled(getattr(branches[m], key), np.nan) for m in names])
        eq[key] = np.ma.masked_invalid(np.where(have, vals[best, np.arange(n)], np.nan))
    return eq


def learning_curve(K, activation="erf", alphas=None, *, method="newton"):
    """All branches of stationary points of beta f (seed Eq. 20) over a sorted alpha grid.

    ``method="continuation"``: the branches (including the unstable specialized saddle branch
    between a fold and the bifurcation of R = S) are traced by the continuation engine
    (:func:`statmech.continuation.analyze`) through folds; every monotone sheet is then
    re-solved exactly at the grid points (numba Newton warm-started from the engine's points).
    Branch names get a suffix ``-unstable`` (saddle sheets) and ``-2``, ``-3`` for repeats.
    ``method="newton"`` (default, fastest) is described below.

    The unspecialized branch (R = S) is traced upward from alpha = 0 (2-D Newton in (R, C)
    on R = S, warm-started with a secant predictor); the specialized (R > S) and
    anti-specialized (R < S) branches are found at the largest alpha by multi-start Newton
    and traced downward until they end (fold) or merge into R = S.  Every point carries the
    site-symmetric Hessian eigenvalues; ``stable`` marks local minima.  Everything runs in one
    numba loop per branch (about 1e-5 s per point).  For the positions of the transitions
    use :func:`transitions`; for full-space stability at one alpha use :func:`equilibria`.
    """
    K = _check_K(K, allow_inf=False)
    info = activation_info(activation)
    if alphas is None:
        alphas = np.linspace(0.0, 100.0 if info.name == "erf" else 20.0, 201)
    alphas = np.asarray(check_range("alphas", alphas, 0.0), dtype=float).ravel()
    if alphas.size == 0:
        raise ValueError("alphas must be a non-empty array of alpha >= 0")
    if np.any(np.diff(alphas) < 0):
        raise ValueError("alphas must be sorted in increasing order")
    check_choice("method", method, ("newton", "continuation"))
    if method == "continuation":
        return _learning_curve_continuation(info, K, alphas)
    branches = {}
    if alphas[0] > 0:
        x0 = _unspecialized_path(info, K, float(alphas[0]))[:3]
    else:
        x0 = np.zeros(3)
    branches["unspecialized"] = _branch_from("unspecialized", alphas, _trace(info, K, alphas, x0, True))
    top = float(alphas[-1])
    starts = _spec_starts_at(info, K, top) if top > 0 else {}
    rev = alphas[::-1].copy()
    for name, sign in (("specialized", 1.0), ("anti-specialized", -1.0)):
        if name in starts:
            out = _cut_at_merge(_trace(info, K, rev, starts[name][:3], False), sign)[::-1].copy()
        else:
            out = np.full((alphas.size, 12), np.nan)
            out[:, 9] = 0.0
        branches[name] = _branch_from(name, alphas, out)
    return LearningCurve(K, info.name, alphas, branches, _equilibrium(branches, alphas.size))



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
            branches[key] = _branch_from(key, alphas, out)
    return LearningCurve(K, info.name, alphas, branches, _equilibrium(branches, alphas.size))
