"""Quadrature rules for the perceptron's Gaussian expectations, and the four channel averages.

``_st_out`` (storage output channel, u = (kappa - sqrt(q) t)/sqrt(1-q)), ``_ts_out``
(teacher--student output channel), ``_is_in`` (Ising storage entropic channel) and
``_ts_in`` (Ising teacher--student entropic channel) return the tuples of expectations
of :mod:`statmech.perceptron._equations`.  Gauss--Hermite while the integrand is smooth,
otherwise the tanh--sinh rule of :func:`statmech.gaussian.piecewise_nodes` split at the
sharp layer, used *shifted* (``E_t f(t) = E_s[f(s + c) e^{-c s - c^2/2}]``) so that its
nodes are cached.  Accuracy against mpmath: ``docs/perceptron.md`` ("Quadrature and accuracy").
"""
from __future__ import annotations

import math
from functools import lru_cache

from ..gaussian import gauss_hermite, piecewise_nodes
from ._equations import _K


# =========================================================================== quadrature rules
_GH_N = 128          # Gauss-Hermite order in the smooth regime
_PW_LEVEL = 4        # tanh-sinh level of the (shifted) piecewise rule
_Q_SMOOTH = 0.6      # q <= _Q_SMOOTH: integrand smooth on the unit scale -> Gauss-Hermite
_C_SHIFT_MAX = 6.0   # largest shift for which the cached shifted rule is used
_QH_SMOOTH = 0.5     # Ising channels: q_hat <= this -> Gauss-Hermite


@lru_cache(maxsize=4)
def _pw0(level=_PW_LEVEL):
    return piecewise_nodes([0.0], level)


# Gauss-Hermite orders by smoothness (q, R or q_hat): each reaches <= 2e-15 relative vs mpmath
_GH_T = ((0.4, 48), (0.5, 64), (0.6, 96))      # storage / teacher-student output channels, by q
_GH_Z = ((0.3, 64), (0.5, 96))                 # Ising channels, by q_hat


def _gh_n(x, table):
    for bound, n in table:
        if x <= bound:
            return n
    return _GH_N


def _rule(break_at, smooth, n=_GH_N):
    """(nodes, weights, shift) for E_t f(t) with f sharp at t = break_at."""
    if smooth:
        z, w = gauss_hermite(n)
        return z, w, 0.0
    if abs(break_at) <= _C_SHIFT_MAX:
        z, w = _pw0()
        return z, w, float(break_at)
    z, w = piecewise_nodes([break_at], _PW_LEVEL + 1)
    return z, w, 0.0


def _st_out(q, kappa, p=None):
    """E_t of (log H, IM^2, d/dq IM^2, replicon term, raw d/dq log H) at u(t); p = 1 - q."""
    p = 1.0 - q if p is None else p
    z, w, c = _rule(kappa / math.sqrt(q) if q > 0 else 0.0, q <= _Q_SMOOTH, _gh_n(q, _GH_T))
    return _K.st_out(z, w, q, p, kappa, c)


def _ts_out(R, p=None):
    # the whole integrand lives in the layer |t| <~ sqrt(1-R): refine the tanh-sinh level with R
    if R <= _Q_SMOOTH:
        z, w = gauss_hermite(_gh_n(R, _GH_T))
    else:
        z, w = _pw0(_PW_LEVEL if R <= 0.99 else _PW_LEVEL + 1 if R <= 0.9999 else _PW_LEVEL + 2)
    return _K.ts_out(z, w, R, 1.0 - R if p is None else p, 0.0)


# small q_hat: the q_hat-derivatives are 0/0 pointwise at q_hat = 0 and lose precision (or divide
# by an underflowed power) below ~1e-8.  There the series E f(sqrt(q_hat) z) = sum_n f_2n(0)
# q_hat^n (2n-1)!!/(2n)! is used, to the order whose remainder is < 1e-16 for q_hat < 1e-8
# (log cosh b = b^2/2 - b^4/12 + b^6/45, tanh^2 b = b^2 - 2 b^4/3, sech^4 b = 1 - 2 b^2 + 7 b^4/3).
_QH_SERIES = 1e-8


def _is_in_series(qh):
    return (math.log(2.0) + qh / 2 - qh ** 2 / 4,      # E log 2cosh
            1.0 - qh + 2 * qh ** 2,                    # E sech^2
            -1.0 + 4 * qh,                             # d/dq_hat E sech^2
            1.0 - 2 * qh + 7 * qh ** 2,                # E sech^4
            0.5 - qh / 2,                              # d/dq_hat E log 2cosh
            -0.5 + 2 * qh,                             # d^2/dq_hat^2 E log 2cosh
            qh - 2 * qh ** 2)                          # E tanh^2


def _is_in(qh):
    # layer of width 1/sqrt(q_hat) at z = 0: refine the level with q_hat (<= 3e-13 vs mpmath to 1e10)
    if qh < _QH_SERIES:
        return _is_in_series(qh)
    if qh <= _QH_SMOOTH:
        z, w = gauss_hermite(_gh_n(qh, _GH_Z))
    else:
        z, w = _pw0(_PW_LEVEL if qh <= 1e3 else _PW_LEVEL + 1 if qh <= 1e8 else _PW_LEVEL + 2)
    return _K.is_in(z, w, qh, 0.0)


def _ts_in_series(qh):
    # E g(u), u = sqrt(q_hat) z + q_hat: E u = q_hat, E u^2 = q_hat + q_hat^2, E u^3 = 3 q_hat^2 + ...,
    # E u^4 = 3 q_hat^2 + 6 q_hat^3, ...; E tanh = E tanh^2 = q_hat - q_hat^2 (Nishimori)
    return (math.log(2.0) + qh / 2 + qh ** 2 / 4,      # E log 2cosh
            1.0 - qh + qh ** 2,                        # E (1 - tanh)
            1.0 - qh + qh ** 2,                        # E sech^2
            -1.0 + 2 * qh,                             # d/dq_hat E (1 - tanh)
            -1.0 + 2 * qh,                             # d/dq_hat E sech^2
            1.0 - 2 * qh + 5 * qh ** 2,                # E sech^4
            0.5 + qh / 2,                              # d/dq_hat E log 2cosh
            0.5 - qh,                                  # d^2/dq_hat^2 E log 2cosh
            qh - qh ** 2)                              # E tanh^2


def _ts_in(qh):
    # layer at z = -sqrt(q_hat): cached shifted rule up to q_hat = 16, then breaks at the layer
    # and one unit above it, level 6 (<= 2e-15 vs mpmath to q_hat = 100, ~2e-7 at 300)
    if qh < _QH_SERIES:
        return _ts_in_series(qh)
    if qh <= _QH_SMOOTH or qh <= 16.0:
        z, w, c = _rule(-math.sqrt(qh), qh <= _QH_SMOOTH, _gh_n(qh, _GH_Z))
        return _K.ts_in(z, w, qh, c)
    c = -math.sqrt(qh)
    z, w = piecewise_nodes([c, c + 1.0], _PW_LEVEL + 2)
    return _K.ts_in(z, w, qh, 0.0)

