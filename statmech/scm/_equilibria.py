"""Equilibria: every local minimum of the site-symmetric beta f at (alpha, K), with its stability in
(R, S, C) and in the full space of individual overlaps."""
from __future__ import annotations

import math

import numpy as np

from ..errors import ConvergenceError
from ..saddle import SaddlePoint
from ._activation import activation_info
from ._free_energy import K_MAX, _check_alpha, _check_K
from ._full_space import _full_blocks
from ._infinite_k import _equilibria_inf
from ._common import at_point
from ._minima import COL, classify, stationary_points

def _point(info, alpha, K, row, full=True):
    R, S, C = (float(row[COL[k]]) for k in ("R", "S", "C"))
    lam = np.asarray(row[COL["lam"]:COL["lam"] + 3], dtype=float)
    ss_stable = bool(lam[0] > 0)
    full_ev = blocks = full_stable = None
    if full and K == int(K):
        blocks = _full_blocks(info, alpha, K, R, S, C, math.exp(row[COL["t1"]]), math.exp(row[COL["t2"]]),
                              float(row[COL["omr"]]))
        full_ev = np.unique(np.concatenate([b[0] for b in blocks.values()]))
        full_stable = bool(full_ev[0] > 0)
    branch = classify(row)
    extra = {"branch": branch, "site_symmetric_stable": ss_stable, "full_space_eigenvalues": full_ev,
             "full_space_stable": full_stable,
             "full_space_blocks": None if blocks is None else {k: (v[0], v[1]) for k, v in blocks.items()},
             "activation": info.name, "one_minus_R": float(row[COL["omr"]]),
             "a1": math.exp(row[COL["t1"]]), "a2": math.exp(row[COL["t2"]]),
             "chart": ("delta,t,v", "t1,t2,S", "t1,t2,v", "delta,u,v")[int(row[COL["chart"]])]}
    return SaddlePoint("scm.equilibrium", {"alpha": alpha, "K": K}, {"R": R, "S": S, "C": C},
                       {"free_energy": float(row[COL["f"]]), "generalization_error": float(row[COL["eps"]]),
                        "entropy": float(row[COL["s"]])},
                       converged=True, residual=float(row[COL["step"]]), iterations=int(row[COL["its"]]),
                       hessian_eigenvalues=lam, replicon=None,
                       rs_stable=full_stable if full_stable is not None else ss_stable, extra=extra,
                       error=float(row[COL["noise"]]), stability=full_ev if full_ev is not None else lam,
                       headline="free_energy")


_ORDER = {"specialized": 0, "unspecialized": 1, "anti-specialized": 2}


def _sorted(points):
    """By free energy, the global minimum first; free energies equal within their rounding bounds (K = 2,
    K = inf for even phi) ordered specialized, unspecialized, anti-specialized, so that the order does not
    depend on the last bits."""
    pts = sorted(points, key=lambda p: (p.free_energy, _ORDER[p.branch]))
    out = []
    while pts:
        f0 = pts[0].free_energy
        tie = [p for p in pts if p.free_energy <= f0 + 2.0 * max(p.error, pts[0].error) + 1e-13 * abs(f0)]
        best = min(tie, key=lambda p: _ORDER[p.branch])
        out.append(best)
        pts.remove(best)
    return tuple(out)


def _mirror_K2(p):
    """At K = 2 beta f is symmetric under R <-> S (relabel the two students): the anti-specialized
    minimum is the specialized one relabelled; built from it exactly."""
    ex = dict(p.extra, branch="anti-specialized", one_minus_R=1.0 - p.S)
    return SaddlePoint(p.model, dict(p.params), {"R": p.S, "S": p.R, "C": p.C}, dict(p.thermo),
                       converged=True, residual=p.residual, iterations=p.iterations,
                       hessian_eigenvalues=p.hessian_eigenvalues, replicon=None, rs_stable=p.rs_stable,
                       extra=ex, error=p.error, stability=p.stability, headline="free_energy")


def equilibria(alpha, K, activation="erf", *, include_saddles=False, full_space=True):
    r"""Every local minimum of the site-symmetric beta f at (alpha, K), the global one first.

    The free energy is Oostwal et al. (2019) Eq. 20 with eps_g corrected (:func:`free_energy`).

    Domain: 0 <= alpha <= 1e100; K any real in [2, 1e15], or ``math.inf`` (for 1 < K < 2 the positive
    definite site-symmetric overlaps are not confined to ``|S|, |C| < 1`` and the minimum can sit on that
    boundary: ValueError); any activation of :func:`activation_info`.  Every answer is a non-empty tuple
    (beta f is bounded below and diverges on the boundary of the domain, so a global minimum always
    exists); if none is found ConvergenceError is raised, naming alpha and K.  The global minimum is
    checked against an independent random-restart search of :func:`free_energy` over alpha up to 1e8, K
    up to 1e7 and inf, every activation (the completeness tests, docs/scm.md); every other local minimum is
    found up to alpha ~ 1e20 (beyond, only the specialized one is guaranteed: the others' beta f ~ alpha K
    eps_g leaves double precision).

    Method (docs/scm.md, "Equilibria"): a descent (Newton on the Hessian with its eigenvalues replaced by
    their moduli, Armijo line search on beta f) from a grid of starts over the whole domain, placed on the
    scales the minima take at large alpha and K, and from the large-alpha law of :func:`large_alpha`; each
    descent runs in the well-conditioned chart of the region it is in (scaled variables that keep every
    digit of 1 - R, S, C and of the two eigenvalues of the overlap matrix up to alpha = 1e100 and K = 1e15)
    and moves between charts as it goes.  The R = S point is solved exactly.  Distinct stationary points
    are classified as "unspecialized" (R = S), "specialized" (R > S), "anti-specialized" (R < S; at K = 2
    the relabelled specialized minimum).

    Each :class:`SaddlePoint` has ``R, S, C``, ``free_energy`` (beta f; K = inf: beta f / K),
    ``generalization_error``, ``entropy``; ``hessian_eigenvalues``: the eigenvalues of the Hessian of
    beta f in (R, S, C) relative to the entropy metric -Hess(s) (the generalized problem H x = lambda G x:
    dimensionless, independent of the coordinates, > 0 at a minimum); ``error``: a bound on the rounding
    error of beta f; ``residual``: the last Newton step in the chart's curvature units.  ``extra``: branch,
    ``site_symmetric_stable``, for integer K (any size) ``full_space_eigenvalues`` (the distinct
    eigenvalues of the Hessian in the K^2 + K(K-1)/2 individual overlaps, from the S_K blocks, memory
    independent of K), ``full_space_stable``, ``full_space_blocks`` {block: (eigenvalues, multiplicity)};
    ``one_minus_R``, ``a1``, ``a2`` (accurate where R, S, C as floats are not), ``chart``.
    ``rs_stable`` = full-space stability for integer K, else site-symmetric; ``stability`` the
    corresponding eigenvalues.  For non-integer K and K = inf, or ``full_space=False``, the full-space
    fields are None.  ``include_saddles`` also returns stationary points that are not minima in the
    site-symmetric space.

    K = inf: minima of the reduced phi(R) (see the package docstring); the free energy is per hidden unit
    and S, C report sigma = K S and gamma = K C.
    """
    alpha = _check_alpha(alpha)
    K = _check_K(K)
    if math.isfinite(K) and not 2.0 <= K <= K_MAX:
        raise ValueError(f"K must be in [2, {K_MAX:g}] or math.inf, got {K!r} (for 1 < K < 2 the positive "
                         f"definite site-symmetric overlaps are not confined to |S|, |C| < 1, and the minimum can "
                         f"lie on that boundary)")
    info = activation_info(activation)
    with at_point("equilibria", alpha=alpha, K=K, activation=info.name):
        if math.isinf(K):
            if info.dm0 <= 0:
                raise ValueError("activation must have E[g'(z)] != 0 for K = inf")
            res = _sorted(_equilibria_inf(info, alpha, include_saddles))
        else:
            rows = stationary_points(info, alpha, K, minima=True, saddles=include_saddles)
            keep = [r for r in rows if r[COL["lam"]] > 0 or include_saddles]
            res = [_point(info, alpha, K, r, full=full_space) for r in keep]
            if K == 2.0:
                spec = [p for p in res if p.branch == "specialized"]
                if spec:
                    res = [p for p in res if p.branch != "anti-specialized"] + [_mirror_K2(q) for q in spec]
        res = _sorted(res)
        if not any(p.site_symmetric_stable for p in res):
            raise ConvergenceError("no minimum of beta f found",
                                   diagnostics={"alpha": alpha, "K": K, "activation": info.name,
                                                "stationary_points": len(res)})
        return res
