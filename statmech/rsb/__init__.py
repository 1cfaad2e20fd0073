r"""Replica symmetry breaking, shared by every model: k-step and full (Parisi) RSB.

Layers (each file a few hundred lines; derivations in ``docs/rsb.md``):

* :mod:`statmech.rsb._lattice` -- numba: the Parisi step
  ``f(q_{i-1}, h) = (1/m) log E_z exp(m f(q_i, h + sqrt(q_i - q_{i-1}) z))`` on nested
  field lattices in log space, and its adjoint (exact gradient of the discrete functional).
* :mod:`statmech.rsb.channels` -- innermost levels written in sympy: the frozen soft hinge
  (perceptron family at the SAT/UNSAT point, ``m = y (1 - q_1)``), the frozen ``|h|``
  (SK at T = 0, ``m = y T``), the ``log H`` terminal (perceptron at finite alpha).
* :mod:`statmech.rsb.kstep` -- :func:`kstep_average` (the nested average and its gradient
  in every q and m), :func:`spherical_entropic`, :func:`ising_entropic_t0`,
  :func:`minimize` (Newton, Hessian by differences of the analytic gradient).
* :mod:`statmech.rsb.parisi` -- :class:`Problem`, :func:`solve_kstep` (free breakpoints),
  :func:`solve_frsb` (full RSB on graded grids, K -> inf extrapolation,
  :class:`ParisiSolution` with its convergence report).
* :mod:`statmech.rsb.sk` -- the validation case, SK at zero temperature.
* :mod:`statmech.rsb.kernel` -- Gaussian processes with an overlap kernel ``Q(q)`` (infinitely
  wide two-layer networks): :func:`kernel_kstep_average`, :class:`KernelJammingProblem`, and
  the frozen power-hinge channel :class:`PowerHingeFrozen` (cost ``(kappa - h)_+^p``).
* :mod:`statmech.rsb.nested_quadrature` -- a second discretisation of the jammed k-step kernel
  functional, written apart from the lattice code (Gauss--Legendre Nystrom): the cross-check of
  the K = inf committee ladder (:func:`jamming_ratio_quadrature`, :func:`nested_jamming_average`).
* :mod:`statmech.rsb.ising` -- the Ising (+-1) prior: the entropic term (I1) and its frozen
  limit (I2), the frozen hard-constraint channel, and
  :func:`~statmech.rsb.ising.solve_stationary` (Newton on the equations of a saddle).
"""
from .kstep import (AbsFrozen, Channel, HingeFrozen, KStepAverage, Lattice, LogHTerminal, MinimizeInfo,
                    fd_hessian, ising_entropic_t0, kstep_average, make_lattice, minimize, spherical_entropic)
from .parisi import KStepSolution, ParisiSolution, Problem, graded_grid, richardson, solve_frsb, solve_kstep
from .kernel import KernelJammingProblem, PowerHingeFrozen, identity_kernel, kernel_kstep_average
from .ising import (HardFrozen, IsingEntropic, IsingFrozen, IsingTerminal, Stationary, ising_entropic,
                    ising_lattice, solve_stationary)
from .sk import SKGroundState, sk_ground_state
from .nested_quadrature import (frozen_cubic_moment, frozen_soft_hinge, jammed_spherical_entropic,
                                jamming_ratio_quadrature, nested_jamming_average)

__all__ = ["Channel", "HingeFrozen", "AbsFrozen", "LogHTerminal", "Lattice", "KStepAverage", "MinimizeInfo",
           "kstep_average", "make_lattice", "spherical_entropic", "ising_entropic_t0", "minimize", "fd_hessian",
           "Problem", "KStepSolution", "ParisiSolution", "solve_kstep", "solve_frsb", "graded_grid", "richardson",
           "SKGroundState", "sk_ground_state",
           "PowerHingeFrozen", "kernel_kstep_average", "KernelJammingProblem", "identity_kernel",
           "IsingTerminal", "IsingFrozen", "HardFrozen", "IsingEntropic", "ising_entropic", "ising_lattice",
           "Stationary", "solve_stationary",
           "frozen_soft_hinge", "frozen_cubic_moment", "jammed_spherical_entropic", "nested_jamming_average",
           "jamming_ratio_quadrature"]
