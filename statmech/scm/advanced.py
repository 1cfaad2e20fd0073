"""Method-specific entry points of the soft-committee-machine theory (the ``advanced`` namespace).

The questions a user asks are answered by :mod:`statmech.scm` (``free_energy``, ``equilibria``,
``learning_curve``, ``transitions``, ``single_unit``, ``large_alpha``, ``scm_lines``, the online-learning
functions).  This namespace holds the pieces those answers are built from, for those who study a
method itself:

* :func:`full_hessian` -- the Hessian of beta f in the K^2 + K(K-1)/2 individual overlaps at a
  site-symmetric point (dense, K <= 40; ``equilibria`` uses its S_K blocks at any K);
* :func:`infinite_K_branch` (K = inf: the stationary curve alpha(R) of phi(R)) and
  :func:`alpha_of_R_single_unit` (K = 1: alpha(R) in closed form);
* :func:`continuation_problem`, :func:`scm_problem` -- beta f as a problem of the continuation engine
  (collective or (R, S, C) variables), :func:`scm_transitions` -- the engine's full analysis at one K
  (a dict), :func:`scm_point` and :func:`scm_grid` -- one point and a checkpointed sweep of it over K.
"""
from __future__ import annotations

from ._engine import continuation_problem, scm_problem, scm_transitions
from ._full_space import full_hessian
from ._infinite_k import infinite_K_branch
from ._phase_diagram import scm_grid, scm_point
from ._single_unit import alpha_of_R_single_unit

__all__ = ["full_hessian", "infinite_K_branch", "alpha_of_R_single_unit", "continuation_problem", "scm_problem",
           "scm_transitions", "scm_point", "scm_grid"]
