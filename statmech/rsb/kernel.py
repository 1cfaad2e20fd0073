r"""RSB functionals whose energetic Gaussian process has an overlap kernel ``Q(q)``.

Infinitely wide two-layer networks with non-overlapping receptive fields (the tree committee
as K -> inf) reduce, by the central limit theorem over the hidden units, to a perceptron
whose *output* field is Gaussian with covariance ``Q(q_ab)`` between replicas, where ``q_ab``
is the overlap of the hidden weights and ``Q`` an activation-dependent kernel (``Q(1) = 1``,
increasing); the entropic term stays that of the spherical weights, in ``q``.  The Parisi
structure of ``Q(q_ab)`` is that of ``q_ab`` with the breakpoints mapped by ``Q`` and the
same Parisi parameters (derivation in ``docs/committee.md``, "K = infinity: full RSB").

* :func:`kernel_kstep_average` -- the nested average (K1) of :mod:`statmech.rsb.kstep` with
  breakpoints ``Q(q_i)``; gradient in ``q`` by the chain rule.
* :class:`KernelJammingProblem` -- the SAT/UNSAT (jamming) functional
  ``R(q, yhat) = s S~(q, s yhat) / (-Phi~(Q(q), yhat))``, ``alpha_J = min R``: ``yhat`` are the
  Parisi parameters of the energetic term (``m_i = s yhat_i (1 - q_max)``), ``s`` the ratio
  between the entropic and energetic scales of ``1 - q`` at the jamming point (``Q'(1)`` for
  a smooth activation).  With ``Q(q) = q`` and ``s = 1`` it is the perceptron's (J4).
* :class:`PowerHingeFrozen` -- the frozen channel of the terminal cost ``(kappa - h)_+^p``
  (``p = 3``: sign hidden units at large K), tabulated by quadrature
  (:mod:`statmech.rsb._power_hinge`); ``p = 2`` equals :class:`~statmech.rsb.HingeFrozen`
  with ``y -> 2 y``, ``F -> F/2``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from . import _power_hinge, kstep, parisi

__all__ = ["PowerHingeFrozen", "kernel_kstep_average", "KernelJammingProblem", "identity_kernel"]

_GL = np.polynomial.legendre.leggauss(16)   # the panel rule of _power_hinge (16 nodes per panel)


def identity_kernel(q):
    """``Q(q) = q`` (the perceptron): returns ``(q, 1)``."""
    q = np.asarray(q, dtype=float)
    return q.copy(), np.ones_like(q)


@dataclass(frozen=True)
class PowerHingeFrozen(kstep.Channel):
    """Frozen channel of the terminal cost ``(kappa - h)_+^p`` (p >= 2), by quadrature.

    The level is ``F(h) = (1/y) log E_z exp(-y (kappa - h - sqrt(s2) z)_+^p)`` (y = 0: the
    plain average ``-E (.)_+^p``); see :mod:`statmech.rsb._power_hinge`.  ``|F''|`` is below
    ``p (p-1) u^(p-2)`` at distance ``u`` into the violated side, so the lattice heuristics use
    ``curvature_scale = 1/(p (p-1) (|kappa| + 6)^(p-2))`` (the field range that carries weight).
    """
    kappa: float
    p: float = 3.0
    frozen = True

    def __post_init__(self):
        if not (self.p >= 2.0 and math.isfinite(self.p)):
            raise ValueError(f"p must be a finite number >= 2, got {self.p!r}")

    @property
    def center(self):
        return self.kappa

    @property
    def curvature_scale(self):
        return 1.0 / (self.p * (self.p - 1.0) * (abs(self.kappa) + 6.0) ** (self.p - 2.0))

    def tabulate(self, h0, d, n, s2, y):
        return _power_hinge.power_hinge_frozen_grid(float(h0), float(d), int(n), float(s2), float(y),
                                                    float(self.kappa), float(self.p), _GL[0], _GL[1])


def _mapped(q, kernel, frozen):
    """Breakpoints Q(q_i) (clipped to [0, 1], non-decreasing) and dQ/dq_i; for a frozen channel
    q_k = 1 is not a variable (Q = 1, derivative set to 0: Q'(1) may be infinite)."""
    q = np.asarray(q, dtype=float)
    Q, dQ = kernel(q)
    Q = np.maximum.accumulate(np.clip(np.asarray(Q, dtype=float), 0.0, 1.0))
    dQ = np.array(dQ, dtype=float)
    if frozen:
        Q[-1], dQ[-1] = 1.0, 0.0
    return Q, dQ


def kernel_kstep_average(q, m, channel, kernel, *, lattice=None, res=1.0, grad=True):
    """The nested average (K1) of a Gaussian process with covariance ``Q(q_ab)``.

    ``q = (q_0 .. q_k)`` are the overlaps of the weights, ``m`` the Parisi parameters of the
    energetic term; the average is :func:`statmech.rsb.kstep_average` at ``Q(q)`` (lattice made
    at ``Q(q)`` unless given).  Returns a :class:`~statmech.rsb.KStepAverage` whose ``dq`` is
    the derivative with respect to ``q`` (``dPhi/dQ_i Q'(q_i)``; 0 for the fixed ``q_k = 1`` of a
    frozen channel).
    """
    Q, dQ = _mapped(q, kernel, channel.frozen)
    r = kstep.kstep_average(Q, m, channel, lattice=lattice, res=res, grad=grad)
    return kstep.KStepAverage(r.value, r.dq * dQ, r.dm, r.lattice)


class KernelJammingProblem(parisi.Problem):
    r"""Jamming functional of a kernel perceptron, minimized: ``alpha_J = min R``.

    ``R(q, yhat) = s S~(q, s yhat) / (-Phi~(Q(q), yhat))`` with ``S~`` the jammed spherical
    entropic term (:func:`statmech.rsb.spherical_entropic`, ``jammed=True``) and ``Phi~`` the
    nested average with the frozen ``channel`` (cost ``c(h)`` per pattern in units of
    ``1/(s (1 - q_max))``).  ``kernel(q) -> (Q, dQ/dq)`` with ``Q(1) = 1``.

    The optimization variables are the breakpoints (``q_k = 1``) and the energetic Parisi
    parameters ``yhat``.  By default the breakpoints are the weight overlaps ``q``; with
    ``inverse`` (``inverse(Q) -> (q, dq/dQ)``) they are the output overlaps ``Q`` instead, so
    that the graded grids of :func:`~statmech.rsb.solve_frsb` are graded in ``Q`` (needed when
    ``Q'(1) = inf``: the structure near ``q = 1`` is then much finer in ``q`` than in ``Q``).
    """
    q0_fixed = None

    def __init__(self, channel, kernel, scale, name="kernel jamming", *, inverse=None):
        if not channel.frozen:
            raise ValueError("channel must be frozen (the jamming limit q_max -> 1)")
        if not (scale > 0.0 and math.isfinite(scale)):
            raise ValueError(f"scale must be a finite number > 0, got {scale!r}")
        self.channel, self.kernel, self.scale, self.name = channel, kernel, float(scale), name
        self.inverse = inverse

    def _breakpoints(self, x):
        """``(q, dq/dx, Q, dQ/dx)`` at the breakpoint variables ``x`` (``x_k = 1`` fixed: derivative 0)."""
        x = np.asarray(x, dtype=float)
        if self.inverse is None:
            Q, dQ = _mapped(x, self.kernel, True)
            return x, np.ones_like(x), Q, dQ
        q, dq = _mapped(x, self.inverse, True)
        Q, dQ = x.copy(), np.ones_like(x)
        Q[-1], dQ[-1] = 1.0, 0.0
        return q, dq, Q, dQ

    def overlaps(self, x):
        """Weight overlaps ``q`` and output overlaps ``Q`` at the breakpoints ``x`` (either)."""
        q, _, Q, _ = self._breakpoints(x)
        return q, Q

    def lattice(self, x, m, res=1.0):
        return kstep.make_lattice(self.overlaps(x)[1], m, self.channel, res=res)

    def evaluate(self, x, yh, lattice, grad=True):
        s = self.scale
        yh = np.asarray(yh, dtype=float)
        q, dq, Q, dQ = self._breakpoints(x)
        r = kstep.kstep_average(Q, yh, self.channel, lattice=lattice, grad=grad)
        S, gq, gy = kstep.spherical_entropic(q, s * yh, jammed=True)
        gq, dE = gq * dq, r.dq * dQ
        E = r.value
        if not E < 0.0:
            raise ValueError("energetic term of the jammed functional must be negative")
        return -s * S / E, -s * (gq * E - S * dE) / E ** 2, -s * (s * gy * E - S * r.dm) / E ** 2
