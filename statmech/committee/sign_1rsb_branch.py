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

import numpy as np

from .. import gaussian as gs
from ._kernels import _LOGFACT, _eqs
from .sign_1rsb import _capacity_1rsb_cached, _outer_lnY_mu

__all__ = ["frozen_nbar", "capacity_expansion", "extrapolate_capacity"]


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


def extrapolate_capacity(eps, alpha, *, slope=None):
    """alpha_c from branch points alpha(eps), eps = 1 - q1, by a least-squares fit of Eq. F.8,

        alpha(eps) = alpha_c + c1 eps + c2 eps^{3/2}   (c1 fitted, or fixed to ``slope``).

    Returns dict(alpha_c, c1, c2, residual_rms, n).  With one more point than unknowns the
    rms residual measures the neglected O(eps^2) terms."""
    e = np.asarray(eps, dtype=float)
    a = np.asarray(alpha, dtype=float)
    if e.shape != a.shape or e.ndim != 1 or np.any(e <= 0) or np.any(e >= 1):
        raise ValueError(f"eps must be a 1-d array in (0, 1) of the shape of alpha, got {eps!r}")
    cols = [np.ones_like(e)] + ([e] if slope is None else []) + [e ** 1.5]
    rhs = a - (0.0 if slope is None else slope * e)
    nunk = len(cols)
    if e.size < nunk:
        raise ValueError(f"need at least {nunk} points for this fit, got {e.size}")
    M = np.stack(cols, axis=1)
    c, *_ = np.linalg.lstsq(M, rhs, rcond=None)
    r = M @ c - rhs
    c1 = float(c[1]) if slope is None else float(slope)
    return {"alpha_c": float(c[0]), "c1": c1, "c2": float(c[-1]),
            "residual_rms": float(np.sqrt(np.mean(r ** 2))), "n": int(e.size)}
