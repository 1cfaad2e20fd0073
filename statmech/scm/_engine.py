"""The SCM free energy as a continuation problem, and transitions read off the generic
engine :mod:`statmech.continuation` (branches, folds, branch points, coexistence)."""
from __future__ import annotations

import math

import numpy as np

from ..continuation import Problem, analyze
from ..errors import ConvergenceError, check_choice
from ._activation import activation_info
from ._common import Transitions, _spec_starts_at, _trace, _unspecialized_path
from ._equations import _kern
from ._free_energy import _check_K
from ._scaled import _polish_alpha_d

_SCM_STARTS = ([0.05, 0.05, 0.0], [0.9, 0.0, 0.0], [0.1, 0.3, 0.0])


def continuation_problem(K, activation="erf", alpha0=0.0, x0=(0.0, 0.0, 0.0), tol=None, *,
                         coordinates="collective"):
    """The site-symmetric beta f as a :class:`statmech.continuation.Problem`, p = alpha.

    ``coordinates="collective"`` (default): order parameters y = (R, (K-1) S, (K-1) C)
    (``names`` "R", "KS", "KC"); the collective scaling keeps the Hessian well conditioned at
    large K (S, C = O(1/K)).  ``coordinates="overlaps"``: y = (R, S, C) (``names`` "R", "S",
    "C"), convenient at small K.  ``x0`` is given in (R, S, C) either way.  Free energy,
    gradient and Hessian are the generated kernels of seed Eq. 20 (eps_g corrected),
    transformed linearly; beta f is affine in alpha (``affine_in_p``); ``params = {"K": K}``.
    ``tol`` defaults to 1e-12 (1 + alpha0 K), the rounding floor of the gradient (never below 1e-11).
    """
    K = _check_K(K, allow_inf=False)
    check_choice("coordinates", coordinates, ("collective", "overlaps"))
    info = activation_info(activation)
    code, cc, m0, m1, fgh, point = info.code, info.cc, info.m0, info.m1, _kern.fgh, _kern.continuation_point
    collective = coordinates == "collective"

    def scale(K):  # x = (R, S, C) = (y0, c y1, c y2)
        return 1.0 / (K - 1.0) if collective else 1.0

    def fg(y, p, K):
        K = float(K)
        c = scale(K)
        return fgh(code, cc, m0, m1, float(p), K, float(y[0]), float(y[1]) * c, float(y[2]) * c), c

    def f(y, p, K):
        return fg(y, p, K)[0][0]

    def g(y, p, K):
        o, c = fg(y, p, K)
        return np.array((o[1], o[2] * c, o[3] * c))

    def h(y, p, K):
        o, c = fg(y, p, K)
        c2 = c * c
        return np.array(((o[4], o[5] * c, o[6] * c), (o[5] * c, o[7] * c2, o[8] * c2), (o[6] * c, o[8] * c2, o[9] * c2)))

    def fused(y, p, K):  # all of the above (and the alpha derivatives) in one numba call
        K = float(K)
        return point(code, cc, m0, m1, float(p), K, scale(K), y)

    M = np.array([1.0, scale(K), scale(K)])
    c0 = scale(K)

    def dom(y, p):
        return bool(p >= 0 and _kern.in_domain_scaled(K, c0, np.asarray(y, dtype=float)))
    tol = 1e-12 * (1.0 + abs(alpha0) * K) if tol is None else tol
    return Problem(free_energy=f, gradient=g, hessian=h, evaluate=fused, x0=np.asarray(x0, dtype=float) / M,
                   p0=float(alpha0), params={"K": K}, in_domain=dom,
                   names=("R", "KS", "KC") if collective else ("R", "S", "C"), p_name="alpha",
                   tol=max(tol, 1e-11), affine_in_p=True)


def scm_problem(K, activation="erf", alpha0=0.5, x0=(0.05, 0.05, 0.0)):
    """:func:`continuation_problem` in the overlaps (R, S, C), tolerance 1e-10, started at
    alpha0 = 0.5 near the origin: the problem that :func:`scm_transitions` analyzes."""
    return continuation_problem(K, activation, alpha0, x0, tol=1e-10, coordinates="overlaps")
def _transitions_continuation(info, K):
    """Transitions found by the generic continuation engine from the free energy alone:
    branches traced from the minima at the top of the range (and from R = S = C = 0),
    branch points / stability changes (alpha_d), folds (alpha_s) and coexistence (alpha_c)."""
    # range: beyond the point where the R = S branch becomes unstable (numba scan)
    amax = 40.0 * math.pi * K + 400.0
    grid = np.concatenate([[0.0], np.geomspace(0.05, amax, 300)])
    out = _trace(info, K, grid, np.zeros(3), True)
    ok = out[:, 9] == 1.0
    bad = np.where(ok & (out[:, 6] <= 0))[0]
    if bad.size == 0:
        raise ConvergenceError("continuation: no instability of R = S on the (R, S, C) trace up to alpha = %.4g "
                               "(beyond the range, or the trace fails at large K)" % amax, diagnostics={"K": K})
    p_top = float(1.15 * grid[bad[0]] + 1.0)
    top = _spec_starts_at(info, K, p_top)
    u_top = _unspecialized_path(info, K, p_top)
    prob = continuation_problem(K, info, p_top, u_top[:3])
    scale = np.array([1.0, K - 1.0, K - 1.0])
    starts = [u_top[:3] * scale] + [r[:3] * scale for r in top.values()]
    an = analyze(prob, 0.0, p_top, starts=starts, scan=0, ds=0.01)

    def rs(y):
        return float(y[0] - y[1] / (K - 1.0))

    def is_u(x):
        return abs(rs(x)) <= 1e-6 * (1 + abs(x[0]))
    sps = an.special_points
    ad = [sp.p for sp in sps if sp.kind in ("stability_change", "branch_point") and is_u(sp.x)]
    details = {"solver": "continuation", "branches": len(an.branches),
               "special_points": [(sp.kind, float(sp.p), tuple(map(float, sp.x / scale))) for sp in sps]}
    if not ad:
        raise ConvergenceError("continuation: no instability of the R = S branch found", diagnostics={"K": K})
    alpha_d = float(min(ad))
    # polish: the engine's branch-point location is limited by the conditioning at large K;
    # refine alpha_d by Brent on the exact R = S stability condition near it
    details["alpha_d_engine"] = alpha_d
    try:
        alpha_d = _polish_alpha_d(info, K, alpha_d, 1e-4)
    except ConvergenceError:
        details["alpha_d_polish"] = "not bracketed within 1e-4: engine value kept"
    folds = [sp for sp in sps if sp.kind == "fold" and rs(sp.x) > 1e-7 * (1 + abs(sp.x[0])) and sp.p < alpha_d]
    afold = [sp for sp in sps if sp.kind == "fold" and rs(sp.x) < -1e-7 * (1 + abs(sp.x[0])) and sp.p < alpha_d]
    details["anti_specialized_fold"] = float(min(sp.p for sp in afold)) if afold else None
    if not folds:
        # does a specialized branch exist at all (R > S beyond alpha_d)?
        spec = any(np.any(b.x[:, 0] - b.x[:, 1] / (K - 1.0) > 1e-6) for b in an.branches)
        if not spec:
            raise ConvergenceError("continuation: no specialized branch found", diagnostics={"K": K})
        return Transitions(K, info.name, alpha_d, alpha_d, alpha_d, 2, details)
    fold = min(folds, key=lambda sp: sp.p)
    alpha_s = float(fold.p)
    cx = [c for c in an.coexistence
          if c.stable1 and c.stable2 and ((is_u(c.x1) and rs(c.x2) > 1e-7) or (is_u(c.x2) and rs(c.x1) > 1e-7))]
    alpha_c = float(min(c.p for c in cx)) if cx else None
    if alpha_c is None:
        raise ConvergenceError("continuation: no coexistence of the specialized and unspecialized minima",
                               diagnostics={"K": K})
    sc = [sp for sp in sps if sp.kind == "stability_change" and is_u(sp.x)]
    details["_engine"] = {"problem": prob, "fold": fold, "coexistence": min(cx, key=lambda c: c.p),
                          "stability_change": min(sc, key=lambda sp: sp.p) if sc else None}
    return Transitions(K, info.name, alpha_s, alpha_c, alpha_d, 1, details)


def _alpha_max(K, activation):
    return 14.0 * K + 10.0 if activation == "erf" else 20.0


def scm_transitions(K, activation="erf", alpha_max=None, ds=0.005):
    """alpha_s, alpha_c, alpha_d of the SCM at one K, read off :func:`statmech.continuation.analyze`.

    alpha_d: the stability change (stable -> unstable) of the unspecialized branch (the
    branch through the R = S solution at small alpha).  alpha_c: a coexistence point of
    two locally stable minima involving that branch; if there is none the transition is
    continuous and alpha_c = alpha_d.  alpha_s: the lowest fold (not at a branch point)
    where a stable branch begins; alpha_s = alpha_c for a continuous transition.
    Returns a dict with the three values, ``order`` ("first"/"second"), the Analysis and
    ``points`` (the fold, coexistence and branch points; ``fold`` and ``coexistence`` are None
    for a continuous transition, which has neither).
    Raises ConvergenceError when the unspecialized branch, its loss of stability (within
    ``alpha_max``, default 14 K + 10 for erf, 20 otherwise) or the fold is not found.  For the
    transitions at any K use :func:`statmech.scm.transitions`.
    """
    prob = scm_problem(K, activation)
    a_max = _alpha_max(K, activation) if alpha_max is None else float(alpha_max)
    an = analyze(prob, 0.5, a_max, starts=[np.array(s) for s in _SCM_STARTS], scan=3, ds=ds)
    unspec = None
    for i, b in enumerate(an.branches):
        k = int(np.argmin(b.p))
        if b.p[k] == 0.5 and abs(b.x[k, 0] - b.x[k, 1]) < 1e-9:
            unspec = i
            break
    if unspec is None:
        raise ConvergenceError("scm_transitions: no unspecialized branch found", diagnostics={"K": K})
    drops = [s for s in an.points("stability_change", branch=unspec)
             if s.stable_before != s.stable_after]
    if not drops:
        raise ConvergenceError("scm_transitions: the unspecialized minimum never loses stability in range",
                               diagnostics={"K": K, "alpha_max": a_max})
    d = min(drops, key=lambda s: s.p)
    coex = [c for c in an.coexistence if unspec in c.branches and c.stable1 and c.stable2]
    # At a (near-)tricritical point (ReLU, K = 2) the specialized branch leaves the branch point
    # with a vanishing cubic term: rounding can bend it a hair below alpha_d and produce a
    # "coexistence" within 1e-6 of the branch point, with no fold of its own -- a continuous
    # transition at this precision (it appeared with numba compiled for a generic x86-64 CPU).
    coex = [c for c in coex if abs(c.p - d.p) > 1e-6 * (1.0 + abs(d.p))
            or any(s.coincides is None and s.branch != unspec for s in an.points("fold"))]
    if coex:
        c = min(coex, key=lambda c: c.p)
        folds = [s for s in an.points("fold") if s.coincides is None and s.branch != unspec]
        if not folds:
            raise ConvergenceError("scm_transitions: coexistence found but no fold of the specialized branch",
                                   diagnostics={"K": K, "alpha_c": c.p})
        s_ = min(folds, key=lambda s: s.p)
        return {"K": K, "activation": activation, "order": "first", "alpha_s": s_.p,
                "alpha_c": c.p, "alpha_d": d.p, "analysis": an, "points": {"fold": s_, "coexistence": c, "bp": d}}
    return {"K": K, "activation": activation, "order": "second", "alpha_s": d.p, "alpha_c": d.p, "alpha_d": d.p,
            "analysis": an, "points": {"fold": None, "coexistence": None, "bp": d}}

