"""Quadrature sums of the FP integrands around sign(m) (stochastic perceptron).

Not imported directly: ``@kernels(include=("statmech.franz_parisi._sums",))`` on
``statmech.franz_parisi._equations._STFP`` appends this text to the generated kernel module,
where the kernels of the integrands ``stfp_S`` and ``stfp_E`` (with their gradients and
Hessians) in moment form (``*_uv``, ``*_mom``, ``*_row``, see ``_equations._affine_chain``) are
module globals; call the loops as ``_STFP.stfp_sum_S`` and ``_STFP.stfp_sum_E``.

Both loops compute the sums of ``P[i, j] * W[i, j, k] * f(...)`` over the reference-side nodes
``(i, j)``
(outer shared field ``z`` and the magnetization ``m`` or the pattern field ``x``, with the
normalized reference weights ``P``) and the innermost Gaussian nodes ``k`` (``y`` or ``e``,
weights ``W``) as ``P[i, j]`` times the chain rule of the moments over ``k``; rows padded with
zero weight are skipped, and so are the innermost nodes at the ends of a row whose weight
``P W`` is below ``_rules.W_MIN``.
"""
import typing

import numba
import numpy as np

if typing.TYPE_CHECKING:
    from statmech.franz_parisi._equations import (l2c_mom, logH_mom, stfp_E_row, stfp_E_uv, stfp_S_row,
                                                  stfp_S_uv)
    from statmech.franz_parisi._rules import W_MIN, support


@numba.njit(cache=True)
def stfp_sum_S(P, Z, M, Sg, Y, WY, qh, qh1, th, Rh, ph):
    """E_z <E_y [value, gradient (4), Hessian upper triangle (10)]>_{m|z} of the entropic term:
    per reference node (z, m), the moments over y of log 2cosh(u + v y) and the chain rule."""
    out = np.zeros(15)
    for i in range(P.shape[0]):
        for j in range(P.shape[1]):
            if P[i, j] == 0.0:
                continue
            z, m, sg = Z[i, j], M[i, j], Sg[i, j]
            u, v = stfp_S_uv(z, m, sg, qh, qh1, th, Rh, ph)
            k0, k1 = support(WY[i, j], WY.shape[2], W_MIN / P[i, j])
            m0, mu, mv, muu, muv, mvv = l2c_mom(Y[i, j, k0:k1], WY[i, j, k0:k1], u, v)
            r = stfp_S_row(qh, qh1, th, Rh, ph, z, m, sg, m0, mu, mv, muu, muv, mvv)
            for a in range(15):
                out[a] += P[i, j] * r[a]
    return out


@numba.njit(cache=True)
def stfp_sum_E(P, Z, X, E, WE, qm, qs, q1, t, R):
    """E_z <E_e [value, gradient (3), Hessian upper triangle (6)]>_{x|z} of the energetic term:
    per reference node (z, x), the moments over e of log H(u + v e) and the chain rule."""
    out = np.zeros(10)
    for i in range(P.shape[0]):
        for j in range(P.shape[1]):
            if P[i, j] == 0.0:
                continue
            z, x = Z[i, j], X[i, j]
            u, v = stfp_E_uv(z, x, qm, qs, q1, t, R)
            k0, k1 = support(WE[i, j], WE.shape[2], W_MIN / P[i, j])
            m0, mu, mv, muu, muv, mvv = logH_mom(E[i, j, k0:k1], WE[i, j, k0:k1], u, v)
            r = stfp_E_row(qm, qs, q1, t, R, z, x, m0, mu, mv, muu, muv, mvv)
            for a in range(10):
                out[a] += P[i, j] * r[a]
    return out
