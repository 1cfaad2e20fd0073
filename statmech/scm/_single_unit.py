"""K = 1 (Oostwal, Straat & Biehl 2019, Appendix C, Eqs. 29-33): the single-unit learning curve from the same
site-symmetric beta f (S and C drop out at K = 1)."""
from __future__ import annotations

import math

import numpy as np

from ..errors import ConvergenceError, check_range
from ..result import check_real
from ..saddle import SaddlePoint, root_scalar, vectorize_over
from ._activation import activation_info
from ._common import at_point
from ._equations import _kern


def alpha_of_R_single_unit(R, activation="erf"):
    r"""K = 1 inverse learning curve alpha(R) from d(beta f)/dR = 0 (Oostwal et al. 2019, Eqs. 29-33).

    beta f = alpha [m(1) - m(R)] - (1/2) ln(1 - R^2) gives alpha = R / ((1 - R^2) m'(R)):
    erf :math:`\alpha = \pi R\sqrt{4-R^2}/(2(1-R^2))` (Eq. 32), ReLU
    :math:`\alpha = 4\pi R/((1-R^2)(\pi + 2\arcsin R))` (Eq. 33).  Vectorized over R in [0, 1).

    Domain: R in [0, 1) (ValueError otherwise), any activation.
    """
    check_real("R", R)
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
    """K = 1 learning curve: R(alpha) and eps_g(alpha) = m(1) - m(R) (Oostwal et al. 2019, Eqs. 29-31): the root of
    beta f'(R) = R / (1 - R^2) - alpha m'(R) in e = 1 - R (Brent in ln e, beta f evaluated from the exact e
    without cancellation), so that it holds to alpha = 1e100 (``extra["one_minus_R"]`` keeps the digits
    R loses).  Vectorized over alpha.

    Domain: 0 <= alpha <= 1e100 (ValueError beyond), any activation with m'(R) > 0 on [0, 1) (the
    stationary point is then unique)."""
    from ._minima import ref_moments
    check_real("alpha", alpha)
    alpha = np.asarray(check_range("alpha", alpha, 0.0, 1e100), dtype=float)
    info = activation_info(activation)
    m0, m1 = ref_moments(info)

    def one(a, guess=None):
        args = (info.code, info.cc, m0, m1, 0.0, a)       # K = 1: phi of the K = inf kernel without m'(0)
        if a == 0.0:
            e = 1.0
        else:
            lo, hi = math.log(1e-3 / (1.0 + a * (m1 + 1.0))), 0.0
            if not _kern.phi_at(*args, math.exp(lo), 1.0)[1] > 0.0:
                raise ConvergenceError("single_unit: no root of beta f'(R) bracketed", diagnostics={"alpha": a})
            t = root_scalar(lambda x: _kern.phi_at(*args, math.exp(x), 1.0)[1], (lo, hi), xtol=1e-15, rtol=1e-15).x[0]
            e = math.exp(t)
        f, d1, d2, eps, s_, R = _kern.phi_at(*args, e, 1.0)
        return SaddlePoint("scm.single_unit", {"alpha": a, "K": 1.0}, {"R": float(R)},
                           {"free_energy": float(f), "generalization_error": float(eps), "entropy": float(s_)},
                           converged=True, residual=abs(float(d1)) * e * (2.0 - e), iterations=0,
                           hessian_eigenvalues=np.array([d2]), rs_stable=bool(d2 > 0),
                           extra={"activation": info.name, "one_minus_R": float(e)},
                           stability=np.array([d2]), headline="R")
    with at_point("single_unit", alpha=float(alpha) if alpha.ndim == 0 else f"{alpha.size} values",
                  activation=info.name):
        return vectorize_over(one, alpha, model="scm.single_unit")
