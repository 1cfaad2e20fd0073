r"""Soft committee machines (SCM) learning from an SCM teacher at high temperature.

Model (Oostwal, Straat & Biehl 2019, the seed ``003``; Biehl, Schloesser & Ahr 1998):
student output :math:`\sigma = K^{-1/2}\sum_{i=1}^K g(x_i)`, teacher
:math:`\tau = M^{-1/2}\sum_{m=1}^M g(x^*_m)`, local fields :math:`x_i = w_i\cdot\xi/\sqrt N`,
student norms :math:`Q_{ii}=1`, orthonormal teacher :math:`T = I`.  Training at high
temperature (:math:`\beta\to 0`, :math:`\alpha = \beta P/(KN)` fixed) gives

.. math::  \beta f = \alpha K\,\epsilon_g - s,\qquad s = \tfrac12\ln\det\mathcal C

(seed Eqs. 16-20).  With :math:`m(\rho) = E[g(u)g(v)]` for unit-variance u, v of
correlation :math:`\rho` and site-symmetric overlaps :math:`R_{ii}=R`, :math:`R_{i\neq j}=S`,
:math:`Q_{i\neq j}=C`:

.. math::  \epsilon_g = m(1) - m(R) + \tfrac{K-1}{2}\,[m(C) + m(0) - 2m(S)]

(derived from seed Eq. 25 with the correct :math:`1/\sqrt{KM}` cross term; for erf this
is seed Eq. 11 *without* its spurious overall 1/K, for ReLU it is seed Eq. 12) and

.. math::  s = \tfrac12\ln[1+(K-1)C-(R+(K-1)S)^2] + \tfrac{K-1}2\ln[1-C-(R-S)^2]

(seed Eq. 19, checked against ``ln det``).  Pair moments: erf
:math:`m=\tfrac2\pi\arcsin(\rho/2)`, ReLU :math:`m=\rho/4+(\sqrt{1-\rho^2}+\rho\arcsin\rho)/(2\pi)`
(seed Eq. 27), linear :math:`m=\rho`; any other activation g(x) through a Chebyshev
interpolant of :math:`m(\rho)` in :math:`\theta=\arcsin\rho` computed by 2-D piecewise tanh-sinh quadrature (or
from ``g.pair_moment``/``g.mean`` when the object provides them).

K -> infinity (``K=math.inf``): with :math:`S=\sigma/K`, :math:`C=\gamma/K` the free energy per
hidden unit is :math:`\beta f/K \to \alpha[m(1)-m(R)+\tfrac12 m'(0)(\gamma-2\sigma)] - \tfrac12\ln(1-R^2)`
on the domain :math:`(R+\sigma)^2\le 1+\gamma`; its minimum over the collective overlaps
lies on the boundary :math:`\sigma = 1-R`, :math:`\gamma=0` (``R+(K-1)S -> 1``,
``1+(K-1)C -> 1``), leaving the one-dimensional
:math:`\varphi(R) = \alpha[m(1)-m(R)-m'(0)(1-R)] - \tfrac12\ln(1-R^2)`.  This gives
erf :math:`\alpha_s=60.9926\ldots`, :math:`\alpha_c=69.0875\ldots` and ReLU :math:`\alpha_c=2\pi`.

Files (one topic each; the public names are imported here)
-------------------------------------------------------------
::

    ``_equations.py``      the sympy equations (``@kernels``): pair moments, beta f with gradient and
                           Hessian, the K = inf forms
    ``_solver.py``         numba Newton / trace / multistart, compiled with the generated kernels
    ``_activation.py``     activations: closed forms, or any g(x) by quadrature + Chebyshev in arcsin(rho)
    ``_free_energy.py``    eps_g and s for general overlaps; the site-symmetric beta f
    ``_full_space.py``     Hessian in the K^2 + K(K-1)/2 individual overlaps, S_K symmetry blocks
    ``_common.py``         traced R = S branch, multistart, the :class:`Transitions` result
    ``_equilibria.py``     all local minima at (alpha, K)
    ``_learning_curve.py`` every branch over an alpha grid
    ``_scaled.py``         beta f in scaled variables usable at any K: the R = S branch, its exact
                           stability condition alpha m''(R) (1 - C) = 1, alpha_d
    ``_direct.py``         transitions by the direct solver in those variables (any finite K)
    ``_landau.py``         weakly first-order transitions by the Landau reduction at the bifurcation
    ``_engine.py``         the one continuation-problem builder and transitions read off the engine
    ``_transitions.py``    ``transitions``: dispatch, and engine lines continued in K for a sequence of K
    ``_phase_diagram.py``  (K, alpha) lines by two-parameter continuation, sweeps over K
    ``_infinite_k.py``     K = inf: phi(R), its equilibria, transitions and branch; the large-K expansion
    ``_single_unit.py``    K = 1 (seed Appendix C)

Online learning (Saad & Solla 1995; docs/online.md)::

    ``_online_integrals.py``   I2, I3, I4 for erf, ReLU (Stein + orthant probabilities), linear (numba)
    ``_online_generic.py``     the same integrals for any g (tensor Gauss-Hermite, error estimate)
    ``_online_odes.py``        the ODE right-hand sides: full, and symmetric pattern sums (O(1) in K)
    ``_online_integrate.py``   Dormand-Prince 8(5,3) with dense output in numba
    ``_online_common.py``      checks, conventions, activations, state layout, symmetry detection
    ``_online_trajectory.py``  ``online``: trajectories, plateau passage, checkpoints
    ``_online_fixed_points.py`` ``online_plateau``: symmetric fixed points, S_K x S_M block stability
    ``_online_asymptotics.py`` ``online_asymptotics``: linearisation at the perfect solution

Public API
----------
``generalization_error(R, Q, T, activation)``, ``entropy(R, Q, T)``,
``free_energy(alpha, K, R, S, C, activation, derivatives=False)``,
``full_hessian(alpha, K, R, S, C, activation)`` (the K^2 + K(K-1)/2 individual overlaps),
``equilibria(alpha, K, activation)``, ``learning_curve(K, activation, alphas)``,
``transitions(K or [K...], activation, method="auto")`` (alpha_s <= alpha_c <= alpha_d at every
K > 1 and K = inf; the direct solver in scaled variables, the Landau reduction where the transition
is weakly first order, or ``method="continuation"``: the engine :mod:`statmech.continuation`, lines
continued in K for sequences), ``continuation_problem(K, activation)``,
``scm_problem(K, activation)`` (the same in (R, S, C)), ``scm_transitions(K, activation)``
(the engine's full analysis, a dict), ``scm_lines(activation, K_min, K_max)`` and
``scm_grid(activation, Ks, out)`` (phase-diagram lines and sweeps),
``infinite_K_branch(R, activation)``, ``pair_moment(rho, activation)``,
``alpha_of_R_single_unit(R, activation)`` and ``single_unit(alpha, activation)``
(K = 1, seed Eqs. 29-33).  Simulation: :func:`statmech.simulate.gibbs_scm`.

Online learning (online SGD, Saad & Solla 1995): ``online(K, M, activation, lr, alphas, Q0=, R0=)``
(the order-parameter ODEs, with the plateau passed through), ``online_plateau(K, M, activation,
lr)`` (the symmetric plateau and identical-students fixed points, their full stability spectrum and
escape rate), ``online_asymptotics(K, K, activation)`` (lr_max, lr_opt, the optimal rate,
eigenvalues(lr)); conventions ``"saad-solla"`` and ``"normalized"``.  Simulation:
:func:`statmech.simulate.online_sgd`.
See ``docs/scm.md`` for the derivations, corrections and validation numbers.
"""
from ._activation import ACTIVATIONS, Activation, activation_info, pair_moment
from ._common import Transitions
from ._engine import continuation_problem, scm_problem, scm_transitions
from ._equilibria import equilibria
from ._free_energy import FreeEnergy, entropy, free_energy, generalization_error
from ._full_space import full_hessian
from ._infinite_k import infinite_K_branch
from ._learning_curve import Branch, LearningCurve, learning_curve
from ._phase_diagram import scm_grid, scm_lines, scm_point
from ._online_asymptotics import OnlineAsymptotics, online_asymptotics
from ._online_fixed_points import OnlinePlateau, online_plateau
from ._online_trajectory import OnlineTrajectory, PlateauPassage, online
from ._single_unit import alpha_of_R_single_unit, single_unit
from ._transitions import transitions

__all__ = ["ACTIVATIONS", "Activation", "activation_info", "pair_moment", "generalization_error", "continuation_problem",
           "entropy", "free_energy", "FreeEnergy", "full_hessian", "equilibria", "learning_curve", "Branch",
           "LearningCurve", "transitions", "Transitions", "alpha_of_R_single_unit", "single_unit",
           "infinite_K_branch", "scm_problem", "scm_transitions", "scm_lines", "scm_point", "scm_grid",
           "online", "online_plateau", "online_asymptotics", "OnlineTrajectory", "PlateauPassage", "OnlinePlateau",
           "OnlineAsymptotics"]
