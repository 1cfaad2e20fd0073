r"""k-step RSB: the nested average, the entropic terms and their gradients.

Notation (``docs/rsb.md`` section 1).  Overlaps ``q_0 <= q_1 <= ... <= q_k``, Parisi
parameters ``m_1 <= ... <= m_k`` (``x(q) = m_i`` on ``(q_{i-1}, q_i)``).  The energetic
(channel) term is the nested average::

    f(q_k, h) = innermost level (the channel)
    f(q_{i-1}, h) = (1/m_i) log E_z exp(m_i f(q_i, h + sqrt(q_i - q_{i-1}) z))     i = k .. 1
    Phi = E_z f(q_0, sqrt(q_0) z)                                                 (K1)

i.e. ``E_{z_0} (1/m_1) log E_{z_1} ( ... E_{z_k} e^{m_k f})^{m_1/m_2}`` -- the recursion is
the Parisi PDE ``d_q f = -(f'' + x(q) f'^2)/2`` integrated exactly over each interval
where ``x`` is constant.  A *frozen* channel (``q_k = 1``) does its own last step in
closed form (SAT/UNSAT point of the perceptron family with ``m = y (1 - q)``, SK at T = 0
with ``m = y T``); there ``m_k`` is that step's ``y``.

:func:`kstep_average` returns ``Phi`` and its exact gradient with respect to every
``q_i`` and ``m_i`` (adjoint of the discrete recursion, :mod:`statmech.rsb._lattice`).
:func:`spherical_entropic` and :func:`ising_entropic_t0` are the entropic terms of a
spherical prior and of Ising spins (SK at zero temperature), with gradients.
:func:`minimize` (in :mod:`statmech.rsb._newton`, re-exported here) is Newton's method for
the minimum of such a functional, the Hessian being the finite difference of the analytic
gradient.
"""
from __future__ import annotations

from abc import ABC, abstractmethod

import math
from dataclasses import dataclass

import numpy as np

from . import _lattice, channels
from ._newton import MinimizeInfo, fd_hessian, minimize  # noqa: F401 (public here since the first release)

__all__ = ["Channel", "HingeFrozen", "AbsFrozen", "LogHTerminal", "KStepAverage", "Lattice",
           "kstep_average", "make_lattice", "spherical_entropic", "ising_entropic_t0",
           "minimize", "fd_hessian", "MinimizeInfo"]

H_SPAN = 10.0        # half-width of the field lattice beyond |kappa| (unit variance: weight e^-50)
RES_WIDTH = 3.0      # lattice points per smoothness width of a level (res=2 changes values by <2e-14)
RES_SIGMA = 1.0      # lattice points per standard deviation of a step
TAIL_MARGIN = 1.2    # level ranges of quadratic-tail channels: zones of TAIL_MARGIN * GAUSS_L widths


# --------------------------------------------------------------------------- channels
class Channel(ABC):
    """Innermost level of the recursion (abstract: a channel defines :meth:`tabulate`).

    ``frozen``: the channel performs the last step ``q_{k-1} -> q_k = 1`` itself
    (parameters ``s2 = 1 - q_{k-1}`` and ``y = m_k``); otherwise it is ``f(q_k, h)``
    with parameter ``p = 1 - q_k``.  ``center`` is where its structure sits (kappa),
    ``curvature_scale`` a lower bound on ``1/|f''|`` at ``p = 1`` (in the lattice heuristics).
    ``concave``: the channel's function is concave in h (log-concave weights, e.g. the
    perceptron family); the nested average then sums each tilted Gaussian over a window
    centred on its peak (``_lattice._window``), which is much cheaper at large ``m``.
    Leave it False unless concavity holds for every parameter value.
    ``quadratic_tails``: (frozen channels) the function is quadratic with curvature
    ``-1/curvature_scale`` for ``h < center`` and constant for ``h > center``, up to terms
    ``~exp(-d^2/(2 w^2))`` at distance d from a zone of width w around ``center``; then every
    level is, and :func:`make_lattice` keeps each level only on its zone (the rest is
    continued exactly by ``_lattice._at``), which makes the fine inner levels cheap.
    """
    frozen = False
    center = 0.0
    curvature_scale = math.inf
    concave = False
    quadratic_tails = False

    @abstractmethod
    def tabulate(self, h0, d, n, s2_or_p, y):
        """(F, dF/d s2_or_p, dF/dy) on ``h0 + d*arange(n)``."""

    def terminal_scale(self, p):
        """(non-frozen channels) A lower bound on ``1/|f''|`` of the terminal at ``p = 1 - q_k``,
        the curvature scale the lattice spacings follow (``p`` for the ``log H`` and Ising
        terminals)."""
        return p


@dataclass(frozen=True)
class HingeFrozen(Channel):
    """Perceptron family at the SAT/UNSAT point: terminal ``-(kappa - h)_+^2/2``, frozen."""
    kappa: float
    frozen = True
    curvature_scale = 1.0
    concave = True   # the Gaussian average of the log-concave exp(-y (.)_+^2/2) (Prekopa)
    quadratic_tails = True   # terminal -(kappa - h)_+^2/2: quadratic for h < kappa, 0 above

    @property
    def center(self):
        return self.kappa

    def tabulate(self, h0, d, n, s2, y):
        return channels.hinge_frozen(h0, d, n, s2, y, self.kappa)


@dataclass(frozen=True)
class AbsFrozen(Channel):
    """SK at zero temperature: terminal ``|h|``, frozen."""
    frozen = True

    def tabulate(self, h0, d, n, s2, y):
        return channels.abs_frozen(h0, d, n, s2, y)


@dataclass(frozen=True)
class LogHTerminal(Channel):
    """Perceptron family at finite alpha: ``f(q_k, h) = beta log H((kappa - h)/sqrt(1 - q_k))``.

    ``beta = 1`` (default): the uniform measure on solutions.  ``beta < inf``: the Gibbs weight
    ``H(.)^beta`` of a soft likelihood (the stochastic perceptron of Baldassi et al. 2018 with
    ``1 - q_k`` the fixed variance ``1 - q*``); there ``q_k = q*`` is the self-overlap, not a
    breakpoint, and the step ``q_{k-1} -> q_k`` has Parisi parameter 1 (docs/rsb.md section 11).
    """
    kappa: float
    beta: float = 1.0
    concave = True   # log H is concave

    @property
    def center(self):
        return self.kappa

    @property
    def curvature_scale(self):
        return 0.0  # 1/|f''| <= p/beta: set from p in make_lattice (terminal_scale)

    def terminal_scale(self, p):
        return p / self.beta  # |d^2/du^2 log H| <= 1

    def tabulate(self, h0, d, n, p, y):
        F, Fp = channels.logh_terminal(h0, d, n, p, self.kappa)
        if self.beta != 1.0:
            F, Fp = self.beta * F, self.beta * Fp
        return F, Fp, np.zeros_like(F)


# --------------------------------------------------------------------------- lattice
@dataclass(frozen=True)
class Lattice:
    """Field lattice ``h = j delta``, ``|j| <= J``; level i lives on stride ``strides[i]``.

    ``lo``, ``size`` (optional, int arrays): level i holds only the indices
    ``lo[i] .. lo[i] + size[i] - 1`` (in units of ``strides[i] delta``) instead of
    ``|j| <= J/strides[i]`` (see ``Channel.quadratic_tails``).  These ranges belong to the
    point the lattice was made at; :func:`kstep_average` re-derives them (for the same
    spacings) at every point it evaluates, so a fixed lattice stays valid along a
    minimization (the value changes with the ranges only by terms ~exp(-GAUSS_L^2/2))."""
    delta: float
    J: int
    strides: np.ndarray
    lo: np.ndarray = None
    size: np.ndarray = None

    def ranges(self):
        """``(lo, size)`` of every level (int64 arrays)."""
        if self.lo is not None:
            return np.asarray(self.lo, dtype=np.int64), np.asarray(self.size, dtype=np.int64)
        half = self.J // np.asarray(self.strides, dtype=np.int64)
        return -half, 2 * half + 1

    @property
    def points(self):
        return int(np.sum(self.ranges()[1]))

    def same(self, other):
        """Same spacings, strides and extent (ranged or not); ranges follow the point."""
        return (self.delta == other.delta and self.J == other.J and np.array_equal(self.strides, other.strides)
                and (self.lo is None) == (other.lo is None))


def _levels(q, channel):
    q = np.asarray(q, dtype=float)
    k = q.size - 1
    return k, (k if channel.frozen else k + 1)


def make_lattice(q, m, channel, *, res=1.0, span=H_SPAN):
    """Lattice for the recursion at (q, m): spacing of level i a fraction of its scales.

    Level i (the function ``f(q_i, .)``) gets spacing
    ``min(sigma_{i+1... }, sqrt(1 - q_i) / RES_WIDTH, sqrt(lambda_i / m_i) / RES_SIGMA) / res``
    where ``sigma`` is the step it feeds and ``lambda_i`` the curvature scale of the level
    (``1 - q_k + sum_{j > i} m_j (q_j - q_{j-1})`` for the log-concave perceptron channels);
    spacings are rounded to powers of two of the finest, inner levels finer.  ``res``
    refines every spacing (the convergence checks use res = 2).
    """
    q = np.asarray(q, dtype=float)
    m = np.asarray(m, dtype=float)
    k, nl = _levels(q, channel)
    s2 = np.diff(np.concatenate([[0.0], q]))
    if channel.frozen:
        lam = channel.curvature_scale
    else:
        lam = channel.terminal_scale(1.0 - q[k])
    lam_i = np.empty(nl)
    for i in range(nl - 1, -1, -1):
        lam_i[i] = lam
        if i >= 1:
            lam += m[i - 1] * s2[i]
    sp = np.empty(nl)
    for i in range(nl):
        width = math.sqrt(max(1.0 - q[i], 0.0)) if i < k or not channel.frozen else 0.0
        if channel.frozen and i == nl - 1:
            width = math.sqrt(s2[k])  # f(q_{k-1}) is smooth on the scale of the frozen step
        if not channel.frozen and i == k:
            width = math.sqrt(1.0 - q[k])
        cands = [width / RES_WIDTH] if width > 0 else []
        sig = math.sqrt(s2[i]) if s2[i] > 0 else math.inf
        if sig < math.inf:
            cands.append(sig / RES_SIGMA)
        if i >= 1 and m[i - 1] > 0 and math.isfinite(lam_i[i]) and lam_i[i] > 0:
            cands.append(math.sqrt(lam_i[i] / m[i - 1]) / RES_SIGMA)
        sp[i] = min(cands) / res if cands else 0.05 / res
    delta = float(sp.min())
    strides = np.ones(nl, dtype=np.int64)
    for i in range(nl):
        strides[i] = 1 << max(0, int(math.floor(math.log2(sp[i] / delta) + 1e-12)))
        if i > 0:
            strides[i] = min(strides[i], strides[i - 1])
    hmax = span + abs(channel.center)
    J = int(math.ceil(hmax / delta / strides[0])) * int(strides[0])
    if not (channel.frozen and channel.quadratic_tails):
        return Lattice(delta, J, strides)
    lo, size = _tail_ranges(q, m, channel, s2, delta, strides, J)
    return Lattice(delta, J, strides, lo, size)


def _tail_ranges(q, m, channel, s2, delta, strides, J):
    """Per-level index ranges for a channel with ``quadratic_tails`` (docs/rsb.md, "Lattice").

    Level i is kept on the zone ``[c - L w_i, c + L v_i]`` (c = center, L = TAIL_MARGIN
    GAUSS_L), clipped to the master lattice.  On the quadratic side, a step with parameter m and variance s2 maps a
    gap a = c - h to the tilted mean ``a Lam_i / Lam_{i-1}`` with variance
    ``s2 Lam_i / Lam_{i-1}`` (``Lam_{i-1} = Lam_i + m s2``, Lam the curvature scale), so
    ``w_{i-1}^2 = (Lam_{i-1}/Lam_i)^2 w_i^2 + s2 Lam_{i-1}/Lam_i``; on the constant side
    ``f' >= 0`` tilts away from c and ``v_{i-1}^2 = v_i^2 + s2``.  The frozen level itself
    has ``Lam = curvature_scale + y s2_k`` relative to ``curvature_scale``.
    """
    k = q.size - 1
    L = TAIL_MARGIN * _lattice.GAUSS_L
    lam_in = channel.curvature_scale
    lam = lam_in + m[k - 1] * s2[k]
    w2, v2 = s2[k] * lam / lam_in, s2[k]
    nl = k
    lo = np.empty(nl, dtype=np.int64)
    size = np.empty(nl, dtype=np.int64)
    c = channel.center
    for i in range(nl - 1, -1, -1):
        d = delta * strides[i]
        jmax = J // strides[i]
        a = max(int(math.floor((c - L * math.sqrt(w2)) / d)) - 1, -jmax)
        b = min(int(math.ceil((c + L * math.sqrt(v2)) / d)) + 1, jmax)
        if b - a < 2:  # at least three points (the continuation is quadratic)
            a, b = a - 1, a + 1
        lo[i], size[i] = a, b - a + 1
        if i >= 1:
            lam_prev = lam + m[i - 1] * s2[i]
            w2 = (lam_prev / lam) ** 2 * w2 + s2[i] * lam_prev / lam
            v2 = v2 + s2[i]
            lam = lam_prev
    return lo, size


# --------------------------------------------------------------------------- the average
@dataclass(frozen=True)
class KStepAverage:
    """Value of (K1) and its gradient: ``dq`` (len k+1) and ``dm`` (len k).

    ``top`` (with the gradient): ``(h0, d, P)``, the sensitivity ``P[j] = dPhi/df_top(h_j)`` of the
    value to the innermost level on its lattice ``h_j = h0 + j d`` (the tilted measure of the
    Parisi solution there, total mass 1): the derivative with respect to any further parameter
    ``a`` of the channel is ``P @ df_top/da`` on that lattice."""
    value: float
    dq: np.ndarray
    dm: np.ndarray
    lattice: Lattice
    top: tuple = None


def kstep_average(q, m, channel, *, lattice=None, res=1.0, grad=True):
    """The nested average (K1) for overlaps ``q = (q_0..q_k)`` and ``m = (m_1..m_k)``.

    For a frozen channel ``q_k`` must be 1 and ``m_k`` is the frozen step's ``y``
    (``y = 0`` is the plain-average, replica-symmetric, limit).  Pass ``lattice``
    to evaluate on a fixed lattice (needed for consistent finite differences);
    otherwise :func:`make_lattice` with ``res``.
    """
    q = np.ascontiguousarray(q, dtype=float)
    m = np.ascontiguousarray(m, dtype=float)
    k, nl = _levels(q, channel)
    if m.size != k:
        raise ValueError(f"m must have len(q) - 1 = {k} entries, got {m.size}")
    if np.any(np.diff(q) < 0) or q[0] < 0 or q[-1] > 1:
        raise ValueError(f"q must be non-decreasing in [0, 1], got {q}")
    if channel.frozen and (k < 1 or q[k] != 1.0):
        raise ValueError("a frozen channel needs k >= 1 and q_k = 1")
    lat = lattice if lattice is not None else make_lattice(q, m, channel, res=res)
    s2 = np.diff(np.concatenate([[0.0], q]))
    top = nl - 1
    st = int(lat.strides[top])
    if lat.lo is not None and channel.frozen and channel.quadratic_tails:  # ranges at this point
        lo, size = _tail_ranges(q, m, channel, s2, lat.delta, lat.strides, lat.J)
    else:
        lo, size = lat.ranges()
    n = int(size[top])
    h0 = int(lo[top]) * st * lat.delta
    if channel.frozen:
        F, Fa, Fy = channel.tabulate(h0, st * lat.delta, n, s2[k], m[k - 1])
    else:
        F, Fa, Fy = channel.tabulate(h0, st * lat.delta, n, 1.0 - q[k], 0.0)
    s2_lat = np.ascontiguousarray(s2[:nl])
    m_lat = np.concatenate([[0.0], m[:nl - 1]])
    val, g_s2, g_m, P = _lattice.nested_average_ranges(np.ascontiguousarray(F), lo, size, lat.delta,
                                                       np.asarray(lat.strides, dtype=np.int64), s2_lat, m_lat,
                                                       _lattice.GAUSS_L, grad, bool(channel.concave))
    dq = np.zeros(k + 1)
    dm = np.zeros(k)
    top = None
    if grad:
        top = (h0, st * lat.delta, P)
        # s2_i = q_i - q_{i-1}
        for i in range(nl):
            dq[i] += g_s2[i]
            if i >= 1:
                dq[i - 1] -= g_s2[i]
        dm[:nl - 1] = g_m[1:nl]
        ga = float(P @ Fa)
        if channel.frozen:   # s2_k = 1 - q_{k-1}
            dq[k - 1] -= ga
            dm[k - 1] = float(P @ Fy)
        else:                # p = 1 - q_k
            dq[k] -= ga
    return KStepAverage(float(val), dq, dm, lat, top)


# --------------------------------------------------------------------------- entropic terms
def spherical_entropic(q, m, *, jammed=False):
    r"""Entropic term of a spherical prior and its gradient (``docs/rsb.md`` Eq. (S-k)).

    ``S = 1/2 [log L_{k+1} + sum_i (1/m_i) log(L_i / L_{i+1}) + q_0 / L_1]`` with
    ``L_{k+1} = 1 - q_k``, ``L_i = L_{i+1} + m_i (q_i - q_{i-1})``  (= (1/2n) log det Q).
    ``jammed=True``: the coefficient of ``1/(1 - q_k)`` as ``q_k -> 1`` with
    ``m_i = y_i (1 - q_k)`` (``m`` holds the ``y_i``): ``L_{k+1} = 1`` and no log term.
    Returns ``(S, dS/dq, dS/dm)``.
    """
    q = np.asarray(q, dtype=float)
    m = np.asarray(m, dtype=float)
    k = q.size - 1
    L = np.empty(k + 2)
    L[k + 1] = 1.0 if jammed else 1.0 - q[k]
    dq_ = np.diff(q)
    for i in range(k, 0, -1):
        L[i] = L[i + 1] + m[i - 1] * dq_[i - 1]
    logL = np.log(L[1:])
    S = 0.0 if jammed else logL[k]
    gL = np.zeros(k + 2)
    if not jammed:
        gL[k + 1] += 1.0 / L[k + 1]
    gm = np.zeros(k)
    for i in range(1, k + 1):
        mi = m[i - 1]
        if mi > 0:
            S += (logL[i - 1] - logL[i]) / mi
            gL[i] += 1.0 / (mi * L[i])
            gL[i + 1] -= 1.0 / (mi * L[i + 1])
            gm[i - 1] -= (logL[i - 1] - logL[i]) / mi ** 2
        else:  # m -> 0 limit: (q_i - q_{i-1}) / L_{i+1}
            S += dq_[i - 1] / L[i + 1]
            gL[i + 1] -= dq_[i - 1] / L[i + 1] ** 2
            gm[i - 1] -= 0.5 * dq_[i - 1] ** 2 / L[i + 1] ** 2
    S += q[0] / L[1]
    gL[1] -= q[0] / L[1] ** 2
    gq = np.zeros(k + 1)
    gq[0] += 1.0 / L[1]
    for i in range(1, k + 1):
        if m[i - 1] <= 0:
            gq[i] += 1.0 / L[i + 1]
            gq[i - 1] -= 1.0 / L[i + 1]
    # back-propagate through L: L_i = L_{k+1} + sum_{j >= i} m_j (q_j - q_{j-1})
    acc = 0.0  # sum of gL over L_1 .. L_j
    for j in range(1, k + 1):
        acc += gL[j]
        gm[j - 1] += acc * dq_[j - 1]
        gq[j] += acc * m[j - 1]
        gq[j - 1] -= acc * m[j - 1]
    if not jammed:
        gq[k] -= acc + gL[k + 1]
    return 0.5 * S, 0.5 * gq, 0.5 * gm


def ising_entropic_t0(q, y):
    r"""SK at T = 0: ``-(1/4) sum_i y_i (q_i^2 - q_{i-1}^2)`` (``= -(1/2) int q gamma(q) dq``).

    Returns ``(value, d/dq, d/dy)``.
    """
    q = np.asarray(q, dtype=float)
    y = np.asarray(y, dtype=float)
    dq2 = np.diff(q ** 2)
    val = -0.25 * float(y @ dq2)
    gq = np.zeros(q.size)
    gq[1:] -= 0.5 * y * q[1:]
    gq[:-1] += 0.5 * y * q[:-1]
    return val, gq, -0.25 * dq2
