r"""Continuous spins on ``[-1, 1]`` with a Gaussian site weight (the "box" prior): the entropic
term of k-step RSB and its channel.

Derivation in ``docs/rsb.md`` section 11.  A variable ``m in [-1, 1]`` (the magnetization of
the stochastic perceptron, Baldassi et al., PRL 120, 268103 (2018)) with overlaps
``q_0 <= ... <= q_k`` between replicas, conjugates ``q_hat_0 <= ... <= q_hat_k`` and the
diagonal weight ``exp(-A m^2/2)`` (``A = lambda + q_hat_k``, ``lambda`` the multiplier of a
fixed self-overlap ``q* = <m^2>``, which the model adds as ``(A - q_hat_k) q*/2``).  The
replicated site integral ``int prod_a dm^a exp(-A/2 sum (m^a)^2 + 1/2 sum_{a != b} Q_hat_ab m^a
m^b + q_hat_k/2 sum (m^a)^2)`` of a Parisi matrix is the nested average (K1) of the channel::

    f(q_hat_k, h) = log zeta(A, h),    zeta(A, h) = int_{-1}^{1} dm exp(-A m^2/2 + h m),

with field variances ``q_hat_i - q_hat_{i-1}``, and with ``-1/2 sum_{a != b} Q_hat_ab Q_ab ->
n/2 sum_i (m_{i+1} - m_i) q_hat_i q_i`` (``m_0 = 0``, ``m_{k+1} = 1``)::

    G_B = 1/2 sum_{i=0}^{k} (m_{i+1} - m_i) q_hat_i q_i + I(q_hat, m, A)                 (B1)

At k = 0 this is ``q_hat q/2 + E_z log zeta(A, sqrt(q_hat) z)``, the RS site term of the
stochastic perceptron.  As for Ising spins (:mod:`statmech.rsb.ising`) the field variance is
unbounded, so (B1) is evaluated in compact coordinates ``g = sqrt(p) h``, ``p = 1/(1 + q_hat_k)``
(:class:`BoxTerminal`, on the lattice of :func:`statmech.rsb.ising_lattice`: ``log zeta`` has
the far field ``|h| - A/2 - log|h|`` and the curvature ``Var(m) <= 1`` of ``log 2cosh``).

``zeta`` and the moments ``<m>``, ``<m^2>`` of the site measure are tanh--sinh sums on
``[-1, 0]`` and ``[0, 1]`` (double-exponential clustering at the ends resolves the boundary
layers of width ``1/|h - A|`` where the measure piles up at ``m = +-1``), with the exponent
shifted by its maximum over ``[-1, 1]``: no overflow for any ``A``, ``h``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numba
import numpy as np

from ..gaussian import tanh_sinh_rule
from . import ising, kstep

__all__ = ["BoxTerminal", "BoxEntropic", "box_entropic", "box_site", "BOX_LEVEL"]

#: tanh--sinh level of the m-integrals (2 x 257 nodes: exact to rounding, tested against mpmath)
BOX_LEVEL = 5


@lru_cache(maxsize=4)
def _m_rule(level):
    x, xc, w = tanh_sinh_rule(level)
    return np.ascontiguousarray(x), np.ascontiguousarray(w)


@numba.njit(cache=True, fastmath=False)
def _site(h, A, x, w):
    """``(log zeta, <m>, <m^2>)`` of ``exp(-A m^2/2 + h m)`` on [-1, 1] (tanh--sinh on each half)."""
    if A > 0.0 and abs(h) <= A:
        c = 0.5 * h * h / A          # interior maximum at m = h/A
    else:
        c = max(abs(h) - 0.5 * A, 0.0)  # at an end (or at m = 0)
    Z = 0.0
    M = 0.0
    Q = 0.0
    for i in range(x.size):
        m = x[i]
        a = -0.5 * A * m * m - c
        ep = w[i] * math.exp(a + h * m)
        en = w[i] * math.exp(a - h * m)
        Z += ep + en
        M += (ep - en) * m
        Q += (ep + en) * m * m
    return c + math.log(Z), M / Z, Q / Z


@numba.njit(cache=True, fastmath=False)
def _site_grid(h0, d, n, scale, A, x, w):
    """``_site`` at ``h = (h0 + j d) * scale``, j < n: arrays log zeta, <m>, <m^2>."""
    F = np.empty(n)
    M = np.empty(n)
    Q = np.empty(n)
    for j in range(n):
        F[j], M[j], Q[j] = _site((h0 + j * d) * scale, A, x, w)
    return F, M, Q


@numba.njit(cache=True, fastmath=False)
def _site_vec(hs, A, x, w):
    F = np.empty(hs.size)
    M = np.empty(hs.size)
    Q = np.empty(hs.size)
    for j in range(hs.size):
        F[j], M[j], Q[j] = _site(hs[j], A, x, w)
    return F, M, Q


def box_site(h, A, level=BOX_LEVEL):
    """``(log zeta(A, h), <m>, <m^2>)`` of the site measure ``exp(-A m^2/2 + h m)`` on [-1, 1]
    (``h`` scalar or array; floats for a scalar)."""
    x, w = _m_rule(level)
    h = np.asarray(h, dtype=float)
    F, M, Q = _site_vec(np.ascontiguousarray(h.ravel()), float(A), x, w)
    if h.ndim == 0:
        return float(F[0]), float(M[0]), float(Q[0])
    return F.reshape(h.shape), M.reshape(h.shape), Q.reshape(h.shape)


@dataclass(frozen=True)
class BoxTerminal(kstep.Channel):
    """``log zeta(A, g/sqrt(p))`` at ``p = 1 - c_k`` (compact coordinates, (B1)); ``A`` fixed.

    ``moments(h0, d, n, p)`` gives ``<m^2>`` on the same lattice (for ``dG/dA = -P @ <m^2>/2``)."""
    A: float
    level: int = BOX_LEVEL

    @property
    def curvature_scale(self):
        return 0.0  # 1/f'' = p / Var(m) >= p: set from p by make_lattice

    def tabulate(self, h0, d, n, p, y):
        x, w = _m_rule(self.level)
        s = 1.0 / math.sqrt(p)
        F, M, _ = _site_grid(float(h0), float(d), int(n), s, float(self.A), x, w)
        g = (h0 + d * np.arange(n)) * s
        return F, -0.5 * g * M / p, np.zeros(n)

    def second_moment(self, h0, d, n, p):
        x, w = _m_rule(self.level)
        return _site_grid(float(h0), float(d), int(n), 1.0 / math.sqrt(p), float(self.A), x, w)[2]


@dataclass(frozen=True)
class BoxEntropic:
    """Value of (B1) and its gradient in ``q``, ``q_hat``, ``m`` and ``A``."""
    value: float
    dq: np.ndarray
    dq_hat: np.ndarray
    dm: np.ndarray
    dA: float
    lattice: kstep.Lattice


def box_entropic(q, q_hat, m, A, *, lattice=None, res=1.0, grad=True, level=BOX_LEVEL):
    r"""The entropic term (B1) of continuous spins on [-1, 1] with site weight ``exp(-A m^2/2)``.

    Parameters
    ----------
    q, q_hat : arrays of length k + 1 (non-decreasing, ``q_hat_0 >= 0``)
    m : array of length k (Parisi parameters, positive, non-decreasing; empty for RS)
    A : the diagonal coefficient (any real)
    lattice : fixed lattice (from :func:`statmech.rsb.ising_lattice` at ``q_hat, m``) for
        consistent finite differences

    Returns
    -------
    :class:`BoxEntropic`
    """
    q = np.asarray(q, dtype=float)
    qh = np.asarray(q_hat, dtype=float)
    m = np.atleast_1d(np.asarray(m, dtype=float))
    k = m.size
    if q.size != k + 1 or qh.size != k + 1:
        raise ValueError(f"q and q_hat must have len(m) + 1 = {k + 1} entries, got {q.size} and {qh.size}")
    if np.any(np.diff(qh) < 0) or qh[0] < 0 or not np.all(np.isfinite(qh)):
        raise ValueError(f"q_hat must be finite and non-decreasing from >= 0, got {qh}")
    if k and (np.any(m <= 0) or np.any(np.diff(m) < 0)):
        raise ValueError(f"m must be positive and non-decreasing, got {m}")
    if not math.isfinite(A):
        raise ValueError(f"A must be finite, got {A!r}")
    p = 1.0 / (1.0 + qh[k])
    c = p * qh
    ch = BoxTerminal(float(A), level)
    lat = lattice if lattice is not None else ising.ising_lattice(qh, m, frozen=False, res=res)
    r = kstep.kstep_average(c, m, ch, lattice=lat, grad=grad)
    mm = np.concatenate([[0.0], m, [1.0]])
    dmm = 0.5 * (mm[1:] - mm[:-1])
    val = float(np.sum(dmm * qh * q)) + r.value
    dq = np.zeros(k + 1)
    dqh = np.zeros(k + 1)
    dm = np.zeros(k)
    dA = 0.0
    if grad:
        dq[:] = dmm * qh
        dqh[:] = dmm * q
        # c_i = p q_hat_i, p = 1/(1 + q_hat_k): dI/dq_hat_j = p dV/dc_j - p^2 sum_i dV/dc_i q_hat_i [j = k]
        dqh += p * r.dq
        dqh[k] -= p * p * float(r.dq @ qh)
        dm += r.dm
        if k:
            dm += 0.5 * (qh[:k] * q[:k] - qh[1:] * q[1:])
        h0, d, P = r.top
        dA = -0.5 * float(P @ ch.second_moment(h0, d, P.size, 1.0 - c[k]))
    return BoxEntropic(val, dq, dqh, dm, dA, lat)
