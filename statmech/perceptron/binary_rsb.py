r"""Binary (Ising) perceptron, storage, one-step replica symmetry breaking (q0, q1, m).

Derivation in ``docs/rsb.md`` section "Binary perceptron".  The 1RSB free entropy
(``(1/N) log`` of the number of solutions, extremized -- a saddle: the conjugates
``q_hat`` are not minimized over) is, with the Ising entropic term of the RSB core
(:func:`statmech.rsb.ising.ising_entropic`, Eq. (I1)) and the ``log H`` channel
(:class:`statmech.rsb.LogHTerminal`) in the nested average (K1)::

    phi = G_S(q0, q1, q_hat0, q_hat1, m) + alpha E_{z0} (1/m) log E_{z1} H(u)^m             (B1-1)
    G_S = m q_hat0 q0/2 + (1 - m) q_hat1 q1/2 - q_hat1/2
          + E_{z0} (1/m) log E_{z1} (2 cosh(sqrt(q_hat0) z0 + sqrt(q_hat1 - q_hat0) z1))^m
    u   = (kappa - sqrt(q0) z0 - sqrt(q1 - q0) z1) / sqrt(1 - q1)

Frozen limit ``q1 = 1`` (``q_hat1 -> inf``; states are single configurations), Eq. (I2)
and :class:`statmech.rsb.ising.HardFrozen`::

    phi_fr = -m q_hat0 (1 - q0)/2 + (1/m) E_z log 2cosh(m sqrt(q_hat0) z)
             + (alpha/m) E_z log H((kappa - sqrt(q0) z)/sqrt(1 - q0))                       (B1-fr)

The complexity of the frozen states is ``Sigma = m phi_fr`` (their internal entropy is 0)
and ``Sigma = -m^2 d phi/dm`` at the m-stationary point, so the capacity is the alpha
where the three equations ``d phi_fr/d(q0, q_hat0, m) = 0`` have a solution
(Krauth--Mézard 1989): :func:`binary_capacity_1rsb`.  It does not depend on m
(``q_hat0 m^2`` is the invariant), which the tests check.

Public names: :func:`binary_capacity_1rsb`, :func:`binary_storage_1rsb`,
:func:`binary_rsb_free_entropy`.
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import ConvergenceError, check_range
from ..rsb import ising, kstep
from ..saddle import SaddlePoint
from ._common import KAPPA_MIN
from .binary_storage_rs import binary_capacity, binary_storage

__all__ = ["binary_capacity_1rsb", "binary_storage_1rsb", "binary_rsb_free_entropy"]

RES = 2.0   # lattice refinement: the trapezoid error exp(-2 pi^2 (sigma/delta)^2) is 1e-8 at res = 1 (alpha = 0.1), < 1e-13 at 2


# =========================================================================== functionals
def binary_rsb_free_entropy(q0, q1, q_hat0, q_hat1, m, alpha, kappa=0.0, *, lattices=None, grad=False):
    """The 1RSB free entropy (B1-1), or (B1-fr) if ``q1 == 1`` (then ``q_hat1`` is ignored).

    Returns the value, or ``(value, d/dq (2,), d/dq_hat (2,), d/dm)`` with ``grad``.
    ``lattices``: ``(entropic, energetic)`` lattices to hold fixed (finite differences).
    """
    frozen = q1 == 1.0
    q = [q0, q1]
    qh = [q_hat0, 0.0 if frozen else q_hat1]
    ch = ising.HardFrozen(kappa) if frozen else kstep.LogHTerminal(kappa)
    Ls, Le = lattices if lattices is not None else (None, None)
    S = ising.ising_entropic(q, qh, [m], frozen=frozen, lattice=Ls, grad=grad)
    E = kstep.kstep_average(q, [m], ch, lattice=Le, grad=grad)
    val = S.value + alpha * E.value
    if not grad:
        return val
    return val, S.dq + alpha * E.dq, S.dq_hat, float(S.dm[0] + alpha * E.dm[0])


def _lattices(q0, q1, q_hat0, q_hat1, m, kappa, res=RES):
    frozen = q1 == 1.0
    ch = ising.HardFrozen(kappa) if frozen else kstep.LogHTerminal(kappa)
    return (ising.ising_lattice([q_hat0, 0.0 if frozen else q_hat1], [m], frozen=frozen, res=res),
            kstep.make_lattice([q0, q1], [m], ch, res=res))


# =========================================================================== capacity (frozen)
def _km_equations(kappa, m):
    def eqs(u, L):
        q0, lqh, a = u
        qh = math.exp(lqh)
        _, gq, gqh, gm = binary_rsb_free_entropy(q0, 1.0, qh, 0.0, m, a, kappa, lattices=L, grad=True)
        return np.array([gq[0], gqh[0] * qh, gm])

    def lats(u):
        return _lattices(u[0], 1.0, math.exp(u[1]), 0.0, m, kappa)
    return eqs, lats


def binary_capacity_1rsb(kappa=0.0, m=1.0, *, tol=1e-12):
    r"""Krauth--Mézard capacity from the frozen 1RSB equations (B1-fr) at Parisi parameter m.

    Solves ``d phi_fr/dq0 = d phi_fr/dq_hat0 = d phi_fr/dm = 0`` for ``(q0, q_hat0, alpha)``
    by Newton on the core's lattices (:func:`statmech.rsb.ising.solve_stationary`).  The
    result is independent of ``m`` (``m^2 q_hat0`` and ``q0`` are); m is a check, not a
    choice.  0.8330785997396 at kappa = 0.

    Returns
    -------
    SaddlePoint (model ``perceptron.binary_capacity``, ansatz ``"1rsb"``) with
    ``thermo["alpha_c"]``, ``thermo["complexity"]`` (= ``m phi_fr``, zero to the residual),
    order parameters ``q0, q1 = 1, m, q_hat0``; ``hessian_eigenvalues`` are those of the
    Jacobian of the three equations (in ``q0, log q_hat0, alpha``) at the root.
    """
    kappa = float(check_range("kappa", kappa, KAPPA_MIN))
    m = float(check_range("m", m, 0.0, lo_open=True))
    eqs, lats = _km_equations(kappa, m)
    a0 = float(binary_capacity(kappa, "gardner_derrida")) * 0.65
    u0 = np.array([0.56, math.log(2.6 / m ** 2), a0])
    st = ising.solve_stationary(eqs, u0, lats, tol=tol, what="binary 1RSB (frozen) capacity")
    q0, lqh, a = (float(v) for v in st.u)
    qh = math.exp(lqh)
    phi = float(binary_rsb_free_entropy(q0, 1.0, qh, 0.0, m, a, kappa, lattices=st.lattices))
    return SaddlePoint("perceptron.binary_capacity", {"kappa": kappa}, {"q0": q0, "q1": 1.0, "m": m, "q_hat0": qh},
                       {"alpha_c": a, "complexity": m * phi, "entropy": phi}, True, st.residual, st.iterations,
                       np.sort(np.linalg.eigvals(st.jacobian).real), None, None,
                       {"lattices": st.lattices, "q_hat0_m2": qh * m * m}, "1rsb", headline="alpha_c")


# =========================================================================== finite alpha
def _frozen_storage(alpha, kappa, m, tol):
    def eqs(u, L):
        q0, lqh = u
        qh = math.exp(lqh)
        _, gq, gqh, _ = binary_rsb_free_entropy(q0, 1.0, qh, 0.0, m, alpha, kappa, lattices=L, grad=True)
        return np.array([gq[0], gqh[0] * qh])

    rs = binary_storage(alpha, kappa)
    u0 = np.array([rs.q, math.log(max(rs.q_hat, 1e-12) / m ** 2)])
    st = ising.solve_stationary(eqs, u0, lambda u: _lattices(u[0], 1.0, math.exp(u[1]), 0.0, m, kappa), tol=tol,
                                what="binary 1RSB (frozen) storage")
    return st, rs


def _iterate_general(alpha, kappa, m, q0, q1, qh0, qh1, tol, maxiter):
    """Fixed-point iteration of the general 1RSB equations at fixed m (``q1 < 1``).

    ``x <- x - 2 grad phi/(m_{i+1} - m_i)`` is each equation in its standard form (e.g.
    ``q_hat0 = -2 alpha dE/dq0 / m``).  Stops when the breaking ``q1 - q0`` falls below
    ``tol`` or changes sign (the fixed point is then RS to within one step; the core's
    lattice cannot resolve a step of variance below its spacing, so the iteration is not
    continued to ``q0 = q1`` exactly).  Returns a dict with the last iterate and the
    history of ``q1 - q0``; ConvergenceError if the breaking does not die out.
    """
    w = np.array([m, 1.0 - m])
    hist = [q1 - q0]
    for it in range(1, maxiter + 1):
        _, gq, gqh, _ = binary_rsb_free_entropy(q0, q1, qh0, qh1, m, alpha, kappa, grad=True)
        nq = np.array([q0, q1]) - 2.0 * gqh / w
        nqh = np.array([qh0, qh1]) - 2.0 * gq / w
        q0, q1, qh0, qh1 = float(nq[0]), float(nq[1]), float(nqh[0]), float(nqh[1])
        hist.append(q1 - q0)
        if q1 - q0 <= tol or qh1 <= qh0:
            return {"q0": q0, "q1": q1, "q_hat0": qh0, "q_hat1": qh1, "m": m, "iterations": it,
                    "q1_minus_q0": np.array(hist)}
        if not 0.0 <= q0 < q1 < 1.0 or not 0.0 <= qh0 < qh1:
            break
    raise ConvergenceError("binary 1RSB (q1 < 1): the fixed-point iteration did not collapse to RS",
                           x=[q0, q1, qh0, qh1], residual=hist[-1], iterations=it,
                           diagnostics={"alpha": alpha, "m": m})


def binary_storage_1rsb(alpha, kappa=0.0, *, m=1.0, tol=1e-11, collapse_m=0.5, collapse_tol=1e-6,
                        collapse_maxiter=400):
    r"""1RSB solution of Ising storage at load ``alpha`` (scalar), on the general equations.

    Two kinds of stationary points of (B1-1) exist below the capacity:

    * ``q1 < 1``: started broken (``q0 = q_RS/2``, ``q1 = (1 + q_RS)/2``) at
      ``m = collapse_m``, the fixed-point iteration of the general equations collapses to
      RS (``q0 = q1 = q_RS``, where ``m`` drops out); reported in ``extra["collapse"]``.
    * ``q1 = 1`` (frozen, isolated solutions), solved from (B1-fr) at the given ``m``
      (default 1, the equilibrium value below the capacity, where ``phi_fr = s_RS``).

    The returned order parameters are the frozen state's (``q0, q1 = 1, m, q_hat0``);
    ``thermo``: ``entropy`` = ``phi_fr``, ``complexity`` = ``m phi_fr`` (log number of
    frozen states per N; equal to the RS entropy at m = 1), ``entropy_rs``.
    ``hessian_eigenvalues``: of the Hessian of (B1-fr) in ``(q0, q_hat0)`` (a saddle:
    one of each sign).  ``replicon``: of the RS solution (B3), whose ``rs_stable`` is in
    ``extra["rs_stable_rs"]``; ``rs_stable`` (the frozen 1RSB state's own stability against
    further breaking) is not computed: None.  ``stability`` is None (the saddle has no
    single-signed Hessian).

    Raises ValueError for ``alpha`` outside ``[0, binary_capacity(kappa))`` (no solutions
    above the Krauth--Mézard capacity: the complexity is negative).
    """
    kappa = float(check_range("kappa", kappa, KAPPA_MIN))
    akm = float(binary_capacity(kappa))
    alpha = float(check_range("alpha", alpha, 0.0, akm, hi_open=True))
    m = float(check_range("m", m, 0.0, lo_open=True))
    if not 0.0 < collapse_m < 1.0:
        raise ValueError(f"collapse_m must be in (0, 1), got {collapse_m!r}")
    if alpha == 0.0:
        raise ValueError("alpha must be > 0 for the 1RSB solution (at alpha = 0 every configuration is a solution)")
    st, rs = _frozen_storage(alpha, kappa, m, tol)
    q0, lqh = (float(v) for v in st.u)
    qh = math.exp(lqh)
    phi = float(binary_rsb_free_entropy(q0, 1.0, qh, 0.0, m, alpha, kappa, lattices=st.lattices))
    collapse = _iterate_general(alpha, kappa, collapse_m, 0.5 * rs.q, 0.5 * (1 + rs.q), 0.5 * rs.q_hat, 2.0 * rs.q_hat,
                         collapse_tol, collapse_maxiter)
    # Hessian of phi_fr in (q0, q_hat0): the Jacobian of the gradient, un-scaling the log
    J = st.jacobian.copy()
    J[:, 1] /= qh
    J[1, :] /= qh
    return SaddlePoint("perceptron.binary_storage", {"alpha": alpha, "kappa": kappa},
                       {"q0": q0, "q1": 1.0, "m": m, "q_hat0": qh},
                       {"entropy": phi, "complexity": m * phi, "entropy_rs": rs.entropy}, True, st.residual,
                       st.iterations, np.linalg.eigvalsh(0.5 * (J + J.T)), rs.replicon, None,
                       {"collapse": collapse, "alpha_c": akm, "rs_stable_rs": rs.rs_stable}, "1rsb",
                       headline="entropy")
