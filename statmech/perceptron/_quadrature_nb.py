"""Quadrature rules of the perceptron's channel averages, chosen and summed inside numba.

Not imported for its functions: ``@kernels(include=(...))`` on
:data:`statmech.perceptron._equations._K` appends this text to the generated kernel module,
where the sympy kernels ``st_out``, ``ts_out``, ``is_in``, ``ts_in`` (and their Newton-step
subsets ``st_step``, ``ts_step``, ``is_step``, ``ts_in_step``) are module globals.  :mod:`statmech.perceptron._quadrature`
imports the constants below and packs the node table.

The rule of each average depends on the point (``q``, ``R`` or ``q_hat``): Gauss--Hermite
while the integrand is smooth on the unit scale, otherwise the tanh--sinh rule of
:func:`statmech.gaussian.piecewise_nodes` split at the sharp layer, used *shifted*
(``E_t f(t) = E_s[f(s + c) e^{-c s - c^2/2}]``, node table built once) while the shift is
at most ``C_SHIFT_MAX``, else built here for the point.  Accuracy against mpmath:
``docs/perceptron.md`` ("Quadrature and accuracy").

Node table ``tab`` (one flat array) with offsets ``off``: part ``i`` is
``tab[off[i]:off[i + 1]]``.  Parts ``2 j, 2 j + 1`` (j = 0..3) are the Gauss--Hermite nodes
and weights of order ``GH_ORDERS[j]``; parts ``8 + 2 j, 9 + 2 j`` (j = 0..2) the tanh--sinh
rule broken at 0 of level ``PW_LEVELS[j]``; parts ``14..16`` and ``17..19`` the raw tanh--sinh
``(x, 1 - x, w)`` of levels ``TS_LEVELS`` for rules built at a point.
"""
import math
import typing

import numba
import numpy as np

from statmech.gaussian import piecewise_fill

if typing.TYPE_CHECKING:
    from statmech.perceptron._equations import is_in, is_step, st_out, st_step, ts_in, ts_in_step, ts_out, ts_step

GH_ORDERS = (48, 64, 96, 128)
PW_LEVELS = (4, 5, 6)
TS_LEVELS = (5, 6)
Q_SMOOTH = 0.6      # q (or R) <= this: Gauss-Hermite for the output channels
QH_SMOOTH = 0.5     # q_hat <= this: Gauss-Hermite for the Ising entropic channels
C_SHIFT_MAX = 6.0   # largest shift of the cached piecewise rule
GH_OUT = (0.4, 0.5, 0.6)    # output channels: q (or R) <= these -> 48, 64, 96 nodes, else 128
GH_IN = (-1.0, 0.3, 0.5)    # Ising entropic channels: q_hat <= these -> 64, 96 nodes, else 128


@numba.njit(cache=True)
def _part(tab, off, i):
    return tab[off[i]:off[i + 1]]


@numba.njit(cache=True)
def _gh(x, bounds):
    """Index into GH_ORDERS of the first of ``bounds`` (GH_OUT or GH_IN) not below x: the
    Gauss-Hermite order that reaches <= 2e-15 relative vs mpmath there."""
    for j in range(3):
        if x <= bounds[j]:
            return j
    return 3


@numba.njit(cache=True)
def _rule_at(tab, off, b0, b1, nbreak, level):
    """``piecewise_nodes([b0])`` or ``piecewise_nodes([b0, b1])`` at tanh-sinh ``level``."""
    j = 14 if level == TS_LEVELS[0] else 17
    x = _part(tab, off, j)
    xc = _part(tab, off, j + 1)
    w = _part(tab, off, j + 2)
    breaks = np.empty(nbreak)
    breaks[0] = b0
    if nbreak == 2:
        breaks[1] = b1
    zs = np.empty(x.size * (nbreak + 1))
    ws = np.empty(zs.size)
    piecewise_fill(breaks, x, xc, w, zs, ws)
    return zs, ws


@numba.njit(cache=True)
def _st_rule(tab, off, q, kappa):
    """(nodes, weights, shift) of the storage output channel: sharp layer at t = kappa/sqrt(q)."""
    if q <= Q_SMOOTH:
        j = _gh(q, GH_OUT)
        return _part(tab, off, 2 * j), _part(tab, off, 2 * j + 1), 0.0
    b = kappa / math.sqrt(q)
    if abs(b) <= C_SHIFT_MAX:
        return _part(tab, off, 8), _part(tab, off, 9), b
    zs, ws = _rule_at(tab, off, b, 0.0, 1, 5)
    return zs, ws, 0.0


@numba.njit(cache=True)
def _refined_rule(tab, off, x, smooth, gh, lo, hi):
    """Rule of a channel with a layer that narrows as x grows: Gauss--Hermite (``_gh(x, gh)``)
    up to ``smooth``, then the tanh--sinh rules 0, 1, 2 of the table (x <= lo, <= hi, above)."""
    if x <= smooth:
        j = _gh(x, gh)
        return _part(tab, off, 2 * j), _part(tab, off, 2 * j + 1)
    j = 0 if x <= lo else 1 if x <= hi else 2
    return _part(tab, off, 8 + 2 * j), _part(tab, off, 9 + 2 * j)


@numba.njit(cache=True)
def _ts_rule(tab, off, R):
    """Teacher-student output channel: the integrand lives in |t| <~ sqrt(1-R), so the
    tanh-sinh level is refined with R."""
    return _refined_rule(tab, off, R, Q_SMOOTH, GH_OUT, 0.99, 0.9999)


@numba.njit(cache=True)
def st_out_at(q, p, kappa, tab, off):
    """E_t of (log H, IM^2, d/dq IM^2, replicon term, raw d/dq log H) at u(t); p = 1 - q."""
    z, w, c = _st_rule(tab, off, q, kappa)
    return st_out(z, w, q, p, kappa, c)


@numba.njit(cache=True)
def st_step_at(q, p, kappa, tab, off):
    """E_t of (IM^2, d/dq IM^2): what a Newton step of the storage branch needs."""
    z, w, c = _st_rule(tab, off, q, kappa)
    return st_step(z, w, q, p, kappa, c)


@numba.njit(cache=True)
def ts_out_at(R, p, tab, off):
    """E_t of the teacher-student output channel (see ``_equations``); p = 1 - R."""
    z, w = _ts_rule(tab, off, R)
    return ts_out(z, w, R, p)


@numba.njit(cache=True)
def ts_step_at(R, p, tab, off):
    """E_t of (2 G IM, its d/dR): what a Newton step of the teacher-student branch needs."""
    z, w = _ts_rule(tab, off, R)
    return ts_step(z, w, R, p)


@numba.njit(cache=True)
def _is_rule(tab, off, qh):
    """Ising storage entropic channel: layer of width 1/sqrt(q_hat) at z = 0, the level
    refined with q_hat (<= 3e-13 vs mpmath to q_hat = 1e10)."""
    return _refined_rule(tab, off, qh, QH_SMOOTH, GH_IN, 1e3, 1e8)


@numba.njit(cache=True)
def is_in_at(qh, tab, off):
    """E_z of the Ising storage entropic channel at q_hat (see ``_equations``)."""
    z, w = _is_rule(tab, off, qh)
    return is_in(z, w, qh)


@numba.njit(cache=True)
def is_step_at(qh, tab, off):
    """E_z of (sech^2, d/dq_hat, tanh^2): what a Newton step of the storage branch needs."""
    z, w = _is_rule(tab, off, qh)
    return is_step(z, w, qh)


@numba.njit(cache=True)
def ts_in_at(qh, tab, off, full=True):
    """E_z of the Ising teacher-student entropic channel; layer at z = -sqrt(q_hat): the
    shifted cached rule up to q_hat = 16, then breaks at the layer and one unit above it,
    level 6 (<= 2e-15 vs mpmath to q_hat = 100, ~2e-7 at 300).  ``full=False``: only
    (sech^2, d/dq_hat, tanh^2), in the slots 2, 4, 6 of the full tuple (others 0)."""
    c = 0.0
    if qh <= QH_SMOOTH:
        j = _gh(qh, GH_IN)
        z, w = _part(tab, off, 2 * j), _part(tab, off, 2 * j + 1)
    elif qh <= 16.0:
        z, w = _part(tab, off, 8), _part(tab, off, 9)
        c = -math.sqrt(qh)
    else:
        c = -math.sqrt(qh)
        z, w = _rule_at(tab, off, c, c + 1.0, 2, 6)
        c = 0.0
    if full:
        return ts_in(z, w, qh, c)
    s2, ds2, t2 = ts_in_step(z, w, qh, c)
    return 0.0, 0.0, s2, 0.0, ds2, 0.0, t2
