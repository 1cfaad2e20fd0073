r"""Validation case of the RSB core: the Sherrington--Kirkpatrick model at zero temperature.

``H = -sum_{i<j} J_ij s_i s_j``, ``J_ij ~ N(0, 1/N)``.  As ``T -> 0`` with
``x(q) = T gamma(q)`` (``m_i = y_i T``), the Parisi formula becomes (docs/rsb.md
section 2; Auffinger & Chen 2017)::

    -e_0 = min_gamma  P(gamma),   P = Psi(0, 0) - (1/2) int_0^1 q gamma(q) dq
    d_q Psi = -(Psi'' + gamma(q) Psi'^2)/2,   Psi(1, h) = |h|                       (SK0)

For piecewise-constant gamma (k-step, ``gamma = y_i`` on ``(q_{i-1}, q_i)``, ``q_k = 1``)
the integral is ``-(1/4) sum_i y_i (q_i^2 - q_{i-1}^2)`` and ``Psi`` is the nested
average of :mod:`statmech.rsb.kstep` with the frozen ``|h|`` channel.  The lowest
breakpoint ``q_0`` is free in k-step (gamma = 0 below it; 1RSB: q_0 = 0.4768); the
continuum's support starts at ``q = 0`` in zero field.

* RS: ``gamma = 0`` -- ``e_0 = -E|z| = -sqrt(2/pi)``.
* 1RSB: ``gamma = y`` on (q_0, 1); with q_0 = 0 it is ``min_y [y/4 + log(2 Phi(y))/y]``
  (= 0.7688, the restricted optimum); free q_0 gives Parisi's 1RSB value 0.76526.
* k-RSB (free breakpoints) and full RSB (graded grid, K -> inf extrapolation).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..result import Result, check_ansatz
from . import kstep, parisi

__all__ = ["SKGroundState", "sk_ground_state", "SKProblem", "CRISANTI_RIZZO_E0"]

#: Crisanti & Rizzo 2002 (Phys. Rev. E 65, 046137) full-RSB ground-state energy, as printed
CRISANTI_RIZZO_E0 = -0.7631667


class SKProblem(parisi.Problem):
    """``P(q, y) = Psi_k(0, 0) - (1/4) sum y_i (q_i^2 - q_{i-1}^2)`` (minimized)."""
    channel = kstep.AbsFrozen()
    q0_fixed = None
    name = "SK T=0"

    def evaluate(self, q, m, lattice, grad=True):
        r = kstep.kstep_average(q, m, self.channel, lattice=lattice, grad=grad)
        e, gq, gy = kstep.ising_entropic_t0(q, m)
        return r.value + e, r.dq + gq, r.dm + gy


@dataclass(frozen=True, repr=False)
class SKGroundState(Result):
    """Ground-state energy per spin of SK in an ansatz, with its order parameters.

    ``energy`` (the headline); ``error`` (discretization error estimate; 0 for closed forms within
    rounding); ``q`` breakpoints, ``y`` values of ``gamma = x/T`` on the intervals; ``residual``
    (max|grad| of P); ``solution`` the raw solver result.  Protocol: ``converged`` True (a failed
    solve raises), ``iterations`` of the solve, ``rs_stable`` the ansatz's own stability (RS: False,
    its replicon is negative at T = 0; k-step and full RSB: the solution is a minimum of the
    Parisi functional), ``stability`` the Hessian eigenvalues of that minimum (None for RS).
    """
    headline = "energy"
    ansatz: str
    energy: float
    error: float
    q: np.ndarray
    y: np.ndarray
    residual: float
    solution: object = field(default=None, repr=False)

    @property
    def converged(self):
        return True

    @property
    def iterations(self):
        return 0 if self.solution is None else int(self.solution.iterations)

    @property
    def stability(self):
        return None if self.solution is None else self.solution.hessian_eigenvalues

    @property
    def rs_stable(self):
        h = self.stability
        return False if self.ansatz == "rs" else bool(np.all(np.asarray(h) > 0))


class _SKContinuum(SKProblem):
    q0_fixed = 0.0  # in zero field the support of the continuum x(q) starts at q = 0


_PROB = SKProblem()


def _one_rsb():
    # 1RSB: q = (q_0, 1), gamma = y on (q_0, 1)
    return parisi.solve_kstep(_PROB, [0.4, 1.0], [1.5])


def sk_ground_state(ansatz=None, k=None, *, Ks=(8, 16, 32)):
    """SK ground-state energy at T = 0 from the RSB core.

    Parameters
    ----------
    ansatz : ``"rs"`` (the default), ``"1rsb"``, ``"2rsb"``, ..., ``"krsb"`` (with ``k`` >= 1
        steps, free breakpoints) or ``"frsb"`` (graded grids ``Ks``, extrapolated to the
        continuum).  With ``k`` given and no ansatz, ``k`` steps (``sk_ground_state(k=3)`` is
        3RSB); ``k=0`` is RS.  A ``k`` that contradicts ``ansatz`` is a ValueError.
    """
    if ansatz is None:
        ansatz = "rs" if k is None else "krsb"
    ansatz, steps = check_ansatz(ansatz, ("rs", "krsb", "frsb"), k=k, function="sk_ground_state")
    if steps == 0:
        # gamma = 0: the m -> 0 limit of the frozen step, a plain average of |z|
        v = kstep.kstep_average([0.0, 1.0], [0.0], _PROB.channel, grad=False).value
        return SKGroundState("rs", -v, 0.0, np.array([0.0, 1.0]), np.array([0.0]), 0.0)
    if steps == 1:
        s = _one_rsb()
        return SKGroundState("1rsb", -s.value, s.lattice_error, s.q, s.m, s.residual, s)
    if steps < math.inf:
        prev = _one_rsb()
        for _ in range(2, steps + 1):
            # start from the (kk-1)-step solution with its top interval split in two
            q = np.concatenate([prev.q[:-1], [0.5 * (prev.q[-2] + 1.0)], [1.0]])
            y = np.concatenate([prev.m, [2.0 * prev.m[-1]]])
            prev = parisi.solve_kstep(_PROB, q, y)
        return SKGroundState(f"{steps}rsb", -prev.value, prev.lattice_error, prev.q, prev.m, prev.residual, prev)
    s = parisi.solve_frsb(_SKContinuum(), 0.0, 1.0, lambda qm: 0.8 / np.sqrt(1.0 - qm), Ks=tuple(Ks))
    return SKGroundState("frsb", -s.value, s.error, s.q, s.x, s.residual, s)
