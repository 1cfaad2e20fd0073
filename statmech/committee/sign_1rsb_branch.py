r"""Sign TCM, finite-alpha 1RSB: the approach to capacity (q1 -> 1) and its extrapolation.

Near capacity, with eps = 1 - q1 and m = y eps, the 1RSB free entropy (Eq. F.1) expands as

    2 eps s = F(q0, y; alpha) + A eps ln eps + O(eps),   A = 1 + alpha nbar,           (F.7)

F the frozen functional of Eq. 1RSB.1 and nbar = E_{t0} <n_f> the mean number of flipped
units under the frozen tilted measure exp(-y C/2)/Y (each flipped unit contributes
(1/2) ln eps to ln Z).  The eps-equation then gives F = A eps, hence along the branch

    alpha(eps) = alpha_c (1 - A eps / S(q0*, y*)) + O(eps^{3/2})                        (F.8)

(the O(eps^{3/2}) term comes from the zero layers of width sqrt(eps)).  :func:`frozen_nbar`
computes nbar; :func:`capacity_expansion` the coefficients of Eq. F.8.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from .. import gaussian as gs
from ..result import Result, check_real
from ._kernels import _LOGFACT, _eqs
from .sign_1rsb import _capacity_1rsb_cached, _outer_lnY_mu

__all__ = ["frozen_nbar", "capacity_expansion", "extrapolate_capacity", "TCM1RSBBranch", "tcm_1rsb_branch"]


def frozen_nbar(K, q0, y, *, n_outer=12, inner_level=5, dmu=1e-4):
    """nbar = E_{t0} <n_f>: the tilted mean number of flipped units at (q0, y) (Eq. F.7).

    Central difference in mu of E ln Y_mu (ln Y_mu is smooth in mu; the O(dmu^2) error is
    ~1e-9 at dmu = 1e-4, checked against dmu = 2e-4 in the tests)."""
    z, w = gs.gauss_hermite(n_outer)
    xs, xcs, tw = gs.tanh_sinh_rule(inner_level)
    z = np.ascontiguousarray(z)
    w = np.ascontiguousarray(w)
    f = lambda mu: _outer_lnY_mu(z, w, K, q0, y, mu, xs, xcs, tw, _LOGFACT)
    return (f(dmu) - f(-dmu)) / (2.0 * dmu)


def capacity_expansion(K=3, *, n_outer=12, inner_level=5):
    """Coefficients of Eq. F.8 at the frozen 1RSB saddle point computed with the same outer rule.

    Returns dict(alpha_c, q0, y, S, nbar, A, slope) with slope = d alpha/d eps at eps = 0,
    = -alpha_c A / S.
    """
    info, ac, _, _ = _capacity_1rsb_cached(K, n_outer, inner_level)
    q0 = 1.0 / (1.0 + math.exp(-info.x[0]))
    y = math.exp(info.x[1])
    S = _eqs.s1rsb(q0, y)[0]
    nbar = frozen_nbar(K, q0, y, n_outer=n_outer, inner_level=inner_level)
    A = 1.0 + ac * nbar
    return {"alpha_c": ac, "q0": q0, "y": y, "S": S, "nbar": nbar, "A": A, "slope": -ac * A / S}


def extrapolate_capacity(eps, alpha, *, slope=None, quadratic=False):
    """alpha_c from branch points alpha(eps), eps = 1 - q1, by a least-squares fit of Eq. F.8,

        alpha(eps) = alpha_c + c1 eps + c2 eps^{3/2} [+ c3 eps^2]   (c1 fitted, or fixed to ``slope``;
                                                                      c3 with ``quadratic``).

    Returns dict(alpha_c, c1, c2, c3, residual_rms, n).  With one more point than unknowns the
    rms residual measures the neglected higher-order terms."""
    check_real("eps", eps, function="extrapolate_capacity")
    check_real("alpha", alpha, function="extrapolate_capacity")
    e = np.asarray(eps, dtype=float)
    a = np.asarray(alpha, dtype=float)
    if e.shape != a.shape or e.ndim != 1 or np.any(~(e > 0)) or np.any(~(e < 1)):
        raise ValueError(f"extrapolate_capacity: eps must be a 1-d array in (0, 1) of the shape of alpha, got {eps!r}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"extrapolate_capacity: alpha must be finite, got {alpha!r}")
    cols = [np.ones_like(e)] + ([e] if slope is None else []) + [e ** 1.5] + ([e ** 2] if quadratic else [])
    rhs = a - (0.0 if slope is None else slope * e)
    nunk = len(cols)
    if e.size < nunk:
        raise ValueError(f"extrapolate_capacity: need at least {nunk} points for this fit, got {e.size}")
    M = np.stack(cols, axis=1)
    c, *_ = np.linalg.lstsq(M, rhs, rcond=None)
    r = M @ c - rhs
    c1 = float(c[1]) if slope is None else float(slope)
    c2 = float(c[2] if slope is None else c[1])
    c3 = float(c[-1]) if quadratic else 0.0
    return {"alpha_c": float(c[0]), "c1": c1, "c2": c2, "c3": c3,
            "residual_rms": float(np.sqrt(np.mean(r ** 2))), "n": int(e.size)}


# --------------------------------------------------------------------------- the branch towards capacity
@dataclass(frozen=True, repr=False)
class TCM1RSBBranch(Result):
    """The finite-alpha 1RSB branch of the sign TCM traced towards capacity, and its limit.

    alpha_c (headline): the capacity extrapolated from the branch (mean of the fits of Eq. F.8 listed
    in ``fits``); error: half the spread of those fits plus the largest propagated point error;
    alpha_c_frozen, q0_frozen, y_frozen, slope_frozen: the frozen (q1 -> 1) solution of Eq. 1RSB.1 on
    the same outer rule and the slope -alpha_c A/S of Eq. F.8; eps, alpha, q0, m, point_errors: the
    branch points (eps = 1 - q1); fits: name -> dict of :func:`extrapolate_capacity`; rule: the
    quadrature; converged, residual (largest over the points), iterations (sum); ansatz "1rsb";
    rs_stable, stability: None (not computed).
    """
    headline: ClassVar[str] = "alpha_c"
    K: int
    alpha_c: float
    error: float
    alpha_c_frozen: float
    q0_frozen: float
    y_frozen: float
    slope_frozen: float
    eps: np.ndarray
    alpha: np.ndarray
    q0: np.ndarray
    m: np.ndarray
    point_errors: np.ndarray
    fits: dict
    rule: str
    converged: bool
    residual: float
    iterations: int
    ansatz: str = "1rsb"
    rs_stable: bool | None = None
    stability: np.ndarray | None = None


#: the default eps = 1 - q1 of :func:`tcm_1rsb_branch` (those of the K = 3 study in docs/committee.md)
BRANCH_EPS = (3.125e-4, 6.25e-4, 1.25e-3, 2.5e-3, 5e-3, 1e-2)


def _branch_fits(e, a, slope):
    """The fits of Eq. F.8 used for the limit: the 4, 5, 6 ... smallest-eps points, with the eps^2
    term, the slope free and fixed to the frozen slope."""
    order = np.argsort(e)
    e, a = e[order], a[order]
    fits = {}
    for n in range(4, e.size + 1):
        fits[f"free slope, {n} smallest"] = extrapolate_capacity(e[:n], a[:n], quadratic=True)
        fits[f"frozen slope, {n} smallest"] = extrapolate_capacity(e[:n], a[:n], slope=slope, quadratic=True)
    return fits


def tcm_1rsb_branch(K, eps=BRANCH_EPS, *, rule=None, progress=True, tol=1e-9):
    """Trace the finite-alpha 1RSB branch of the sign TCM towards capacity and extrapolate alpha_c.

    Solves :func:`tcm_1rsb_point` at q1 = 1 - eps for every eps (smallest first: the first guess is
    the frozen expansion of Eq. F.8 on the same outer rule, which is accurate there; each further
    guess is extrapolated in sqrt(eps) from the points already found), then fits Eq. F.8,
    alpha(eps) = alpha_c + c1 eps + c2 eps^{3/2} + c3 eps^2, to the smallest-eps points (slope free,
    and fixed to the frozen slope -alpha_c A/S; :func:`extrapolate_capacity`).  The limit is to be
    compared with the frozen capacity of Eq. 1RSB.1 on the same outer rule (``alpha_c_frozen``): the
    outer-rule error is common to both routes.

    Domain: K = 3, 5, 7; at least 4 values of eps in (0, 0.05] (the order-statistics rule) or
    (0, 1) (K = 3, sorted rule).  Cost: minutes per point (K = 5, 7, default rules, loaded machine);
    a progress bar per point.  Returns a :class:`TCM1RSBBranch`.
    """
    from .sign_1rsb_finite import _check_point_args, tcm_1rsb_point
    check_real("eps", eps, function="tcm_1rsb_branch")
    e = np.sort(np.asarray(eps, dtype=float).ravel())
    if e.size < 4 or np.any(~(e > 0)) or np.any(~(e < 1)) or np.unique(e).size != e.size:
        raise ValueError(f"tcm_1rsb_branch: eps must hold at least 4 distinct values in (0, 1), got {eps!r}")
    k, _, rule = _check_point_args(K, 1.0 - float(e[-1]), rule, "tcm_1rsb_branch")
    ce = capacity_expansion(k, n_outer=rule.outer[1])
    pts = []
    for i, ei in enumerate(e):
        if i == 0:
            guess = (ce["q0"], ce["y"] * ei, ce["alpha_c"] + ce["slope"] * ei)
        else:
            x = np.sqrt(e[:i])
            deg = min(i - 1, 2)
            guess = tuple(float(np.polyval(np.polyfit(x, v, deg), math.sqrt(ei))) * (ei if j == 1 else 1.0)
                          for j, v in enumerate((np.array([p.q0 for p in pts]), np.array([p.m / p.q1c for p in pts]),
                                                 np.array([p.alpha for p in pts]))))
        p = tcm_1rsb_point(k, 1.0 - ei, guess=guess, rule=rule, tol=tol, progress=progress)
        pts.append(_Pt(p.q0, p.m, p.alpha, ei, p.error, p.residual, p.iterations))
    a = np.array([p.alpha for p in pts])
    fits = _branch_fits(e, a, ce["slope"])
    vals = np.array([f["alpha_c"] for f in fits.values()])
    perr = np.array([p.error for p in pts])
    return TCM1RSBBranch(K=k, alpha_c=float(vals.mean()), error=float(0.5 * np.ptp(vals) + perr.max()),
                         alpha_c_frozen=float(ce["alpha_c"]), q0_frozen=float(ce["q0"]), y_frozen=float(ce["y"]),
                         slope_frozen=float(ce["slope"]), eps=e, alpha=a, q0=np.array([p.q0 for p in pts]),
                         m=np.array([p.m for p in pts]), point_errors=perr, fits=fits, rule=repr(rule),
                         converged=True, residual=float(max(p.residual for p in pts)),
                         iterations=int(sum(p.iterations for p in pts)))


@dataclass(frozen=True)
class _Pt:
    q0: float
    m: float
    alpha: float
    q1c: float        # eps = 1 - q1 (m / eps is extrapolated)
    error: float
    residual: float
    iterations: int
