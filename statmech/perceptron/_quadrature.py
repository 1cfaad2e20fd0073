"""Quadrature node table of the perceptron's Gaussian expectations, and the four channel averages.

``_st_out`` (storage output channel, u = (kappa - sqrt(q) t)/sqrt(1-q)), ``_ts_out``
(teacher--student output channel), ``_is_in`` (Ising storage entropic channel) and
``_ts_in`` (Ising teacher--student entropic channel) return the tuples of expectations
of :mod:`statmech.perceptron._equations`.  The rule of each average is chosen at the point
inside numba (:mod:`statmech.perceptron._quadrature_nb`): Gauss--Hermite while the integrand
is smooth, otherwise the tanh--sinh rule of :func:`statmech.gaussian.piecewise_nodes` split
at the sharp layer, used *shifted* (``E_t f(t) = E_s[f(s + c) e^{-c s - c^2/2}]``) so that
its nodes come from the table :func:`_table` built here once.  Accuracy against mpmath:
``docs/perceptron.md`` ("Quadrature and accuracy").
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from ..gaussian import gauss_hermite, piecewise_nodes, tanh_sinh_rule
from ._equations import _K
from ._quadrature_nb import GH_ORDERS, PW_LEVELS, TS_LEVELS


@lru_cache(maxsize=1)
def _table():
    """(tab, off): every rule the channel averages use, in one flat read-only array (layout in
    :mod:`statmech.perceptron._quadrature_nb`): Gauss--Hermite of the orders GH_ORDERS,
    the tanh--sinh rule broken at 0 of the levels PW_LEVELS, the raw tanh--sinh (x, 1-x, w)
    of the levels TS_LEVELS."""
    parts = [a for n in GH_ORDERS for a in gauss_hermite(n)]
    parts += [a for level in PW_LEVELS for a in piecewise_nodes([0.0], level)]
    parts += [a for level in TS_LEVELS for a in tanh_sinh_rule(level)]
    off = np.zeros(len(parts) + 1, dtype=np.int64)
    off[1:] = np.cumsum([a.size for a in parts])
    tab = np.concatenate(parts)
    # read-only, like the rules of statmech.gaussian: the core's numba fills (piecewise_fill)
    # are then compiled for one array type, shared with the other models
    for a in (tab, off):
        a.setflags(write=False)
    return tab, off


def _st_out(q, kappa, p=None):
    """E_t of (log H, IM^2, d/dq IM^2, replicon term, raw d/dq log H) at u(t); p = 1 - q."""
    return _K.st_out_at(q, 1.0 - q if p is None else p, kappa, *_table())


# small R: the R-derivatives of the teacher--student output averages are 0/0 pointwise at R = 0
# and lose precision below R ~ 1e-8 (5e-13 there, 1e133 at R = 1e-300).  There the series in
# a^2 = R/(1-R) of E f(a t) = f_0 + f_2 a^2 + 3 f_4 a^4 + ..., to O(R^2), is used (remainder < 1e-15).
_R_SERIES = 1e-8


def _ts_out_series(R):
    # the slots of ``_equations.ts_out``: E hl, E gi, d/dR E gi, replicon average, d/dR E hl
    pi = math.pi
    g1, g2 = 4 / pi ** 2 - 2 / pi, 24 / pi ** 3 - 12 / pi ** 2 + 1 / pi
    return (-math.log(2.0) + R / pi + R ** 2 / pi ** 2,
            2 / pi + g1 * R + g2 * R ** 2,
            g1 + 2 * g2 * R,
            4 / pi ** 2 + (48 / pi ** 3 - 24 / pi ** 2 + 2 / pi) * R
            + (720 / pi ** 4 - 480 / pi ** 3 + 92 / pi ** 2 - 4 / pi) * R ** 2,
            1 / pi + 2 * R / pi ** 2)


def _ts_out(R, p=None):
    """E_t of the teacher--student output channel at R; p = 1 - R (the series below R = 1e-8)."""
    if 0.0 <= R < _R_SERIES:
        return _ts_out_series(R)
    return _K.ts_out_at(R, 1.0 - R if p is None else p, *_table())


# small q_hat: the q_hat-derivatives are 0/0 pointwise at q_hat = 0 and lose precision (or divide
# by an underflowed power) below ~1e-8.  There the series E f(sqrt(q_hat) z) = sum_n f_2n(0)
# q_hat^n (2n-1)!!/(2n)! is used, to the order whose remainder is < 1e-16 for q_hat < 1e-8
# (log cosh b = b^2/2 - b^4/12 + b^6/45, tanh^2 b = b^2 - 2 b^4/3, sech^4 b = 1 - 2 b^2 + 7 b^4/3).
_QH_SERIES = 1e-8


def _is_in_series(qh):
    # the slots of ``_equations.is_in``
    return (math.log(2.0) + qh / 2 - qh ** 2 / 4,      # E log 2cosh
            1.0 - qh + 2 * qh ** 2,                    # E sech^2
            -1.0 + 4 * qh,                             # d/dq_hat E sech^2
            1.0 - 2 * qh + 7 * qh ** 2,                # E sech^4
            qh - 2 * qh ** 2)                          # E tanh^2


def _is_in(qh):
    """E_z of the Ising storage entropic channel at q_hat (the series below q_hat = 1e-8)."""
    if qh < _QH_SERIES:
        return _is_in_series(qh)
    return _K.is_in_at(qh, *_table())


def _ts_in_series(qh):
    # E g(u), u = sqrt(q_hat) z + q_hat: E u = q_hat, E u^2 = q_hat + q_hat^2, E u^3 = 3 q_hat^2 + ...,
    # E u^4 = 3 q_hat^2 + 6 q_hat^3, ...; E tanh = E tanh^2 = q_hat - q_hat^2 (Nishimori)
    return (math.log(2.0) + qh / 2 + qh ** 2 / 4,      # E log 2cosh
            1.0 - qh + qh ** 2,                        # E (1 - tanh)
            1.0 - qh + qh ** 2,                        # E sech^2
            -1.0 + 2 * qh,                             # d/dq_hat E (1 - tanh)
            -1.0 + 2 * qh,                             # d/dq_hat E sech^2
            1.0 - 2 * qh + 5 * qh ** 2,                # E sech^4
            qh - qh ** 2)                              # E tanh^2


def _ts_in(qh):
    """E_z of the Ising teacher--student entropic channel at q_hat (the series below 1e-8)."""
    if qh < _QH_SERIES:
        return _ts_in_series(qh)
    return _K.ts_in_at(qh, *_table())

