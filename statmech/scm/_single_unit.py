"""K = 1 (seed Appendix C, Eqs. 29-33): the single-unit learning curve from the same
site-symmetric beta f (S and C drop out at K = 1)."""
from __future__ import annotations

import numpy as np

from ..errors import ConvergenceError, check_range
from ..saddle import SaddlePoint, root_scalar, vectorize_over
from ._activation import activation_info
from ._equations import _kern


def alpha_of_R_single_unit(R, activation="erf"):
    r"""K = 1 inverse learning curve alpha(R) from d(beta f)/dR = 0 (seed Eqs. 29-33).

    beta f = alpha [m(1) - m(R)] - (1/2) ln(1 - R^2) gives alpha = R / ((1 - R^2) m'(R)):
    erf :math:`\alpha = \pi R\sqrt{4-R^2}/(2(1-R^2))` (Eq. 32), ReLU
    :math:`\alpha = 4\pi R/((1-R^2)(\pi + 2\arcsin R))` (Eq. 33).  Vectorized over R in [0, 1).
    """
    R = np.asarray(check_range("R", R, 0.0, 1.0, hi_open=True), dtype=float)
    info = activation_info(activation)
    out = np.empty(R.shape)
    for idx in np.ndindex(R.shape):
        r = float(R[idx])
        # K = 1 in the site-symmetric expression: S and C drop out (single source of truth)
        g0 = _kern.fgh(info.code, info.cc, info.m0, info.m1, 0.0, 1.0, r, 0.0, 0.0)[1]
        g1 = _kern.fgh(info.code, info.cc, info.m0, info.m1, 1.0, 1.0, r, 0.0, 0.0)[1]
        out[idx] = -g0 / (g1 - g0) if r != 0 else 0.0
    return out[()] if out.ndim == 0 else out


def single_unit(alpha, activation="erf"):
    """K = 1 learning curve: R(alpha) and eps_g(alpha) = m(1) - m(R) (seed Eqs. 29-31), by inverting
    the monotone alpha(R) of :func:`alpha_of_R_single_unit` (Brent).  Vectorized over alpha."""
    alpha = np.asarray(check_range("alpha", alpha, 0.0), dtype=float)
    info = activation_info(activation)

    def one(a, guess=None):
        if a == 0.0:
            R = 0.0
        else:
            hi = 0.5
            while alpha_of_R_single_unit(hi, info) < a:
                hi = 1.0 - (1.0 - hi) / 4.0
                if hi >= 1.0:
                    raise ConvergenceError("single_unit: alpha too large for double precision", diagnostics={"alpha": a})
            R = root_scalar(lambda r: alpha_of_R_single_unit(r, info) - a, (0.0, hi), xtol=1e-16, rtol=1e-15).x[0]
        o = _kern.fgh(info.code, info.cc, info.m0, info.m1, a, 1.0, R, 0.0, 0.0)
        d2 = o[4]
        return SaddlePoint("scm.single_unit", {"alpha": a, "K": 1.0}, {"R": R},
                           {"free_energy": o[0], "generalization_error": o[10], "entropy": o[11]},
                           converged=True, residual=abs(o[1]), iterations=0, hessian_eigenvalues=np.array([d2]),
                           rs_stable=bool(d2 > 0), extra={"activation": info.name},
                           stability=np.array([d2]), headline="R")
    return vectorize_over(one, alpha, model="scm.single_unit")

