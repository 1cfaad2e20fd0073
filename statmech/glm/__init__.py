r"""Generalized linear models from a specification: any prior, teacher channel and loss, learned by
ERM, Gibbs learning or Bayes-optimal inference; RS with its stability, RSB where it breaks.

A **model** (:class:`Model`) is a teacher -- a prior on its weights (:class:`Prior`: ``gaussian``,
``ising``, ``spherical``, ``gauss_bernoulli`` or a sympy density) and a channel (:class:`Channel`:
``sign(noise)``, ``probit``, ``random_labels`` (storage), ``linear(noise)`` (regression) or a sympy
``P(y | z)``) -- and an estimator: a loss (:class:`Loss`: ``square``, ``logistic``, ``hinge``,
``squared_hinge``, ``exponential``, ``margin_counting(kappa)`` or any sympy expression in
``glm.y, glm.h``) with a penalty (:class:`Penalty`: ``ridge(lam)``, ``l1``, ``elastic_net``, the
``spherical`` and ``ising`` constraints, or a sympy expression in ``glm.w``).  Parameters are
run-time values: changing one never recompiles.

Theories (each returns a :class:`statmech.Result`):

* :func:`erm` -- empirical risk minimisation, RS at zero temperature through the Moreau envelope
  and the proximal operator of the loss (closed form where sympy finds one, else Newton per
  quadrature node), solved by Newton with the exact Jacobian; replicon (AT) and ``rs_stable``.
* :func:`gibbs` -- Gibbs learning at temperature T (spherical or Ising student, step costs).
* :func:`bayes_optimal` -- the teacher's own prior and channel on the Nishimori line; all fixed
  points (:func:`bayes_branches`), the information-theoretic and algorithmic thresholds
  (:func:`bayes_transition`).
* :func:`thresholds` -- SAT/UNSAT, interpolation/separability, Krauth--Mézard and
  Gardner--Derrida, Bayes thresholds; :func:`max_margin`, :func:`separability`,
  :func:`ridge_peak_line` (double descent, traced by the continuation engine).
* :func:`sat_unsat_rsb`, :func:`storage_rsb` -- 1RSB and full RSB through :mod:`statmech.rsb`.
* :func:`learning_curve`, :func:`regularisation_path`, :func:`optimal_lam` -- continuation in
  alpha and lam (:mod:`statmech.glm.advanced`: any parameter, the engine's Problem).
* :class:`Denoisers` -- the same compiled kernels for finite-N algorithms
  (:mod:`statmech.simulate.glm`: exact ERM and GAMP).

Conventions, derivations and the checks behind every value: ``docs/glm.md``.
"""
from .spec import (LOSSES, Channel, Loss, Model, Penalty, Prior, as_channel, as_loss, as_penalty, as_prior,
                   elastic_net, exponential, gauss_bernoulli, gaussian, h, hinge, ising, l1, linear, logistic,
                   margin_counting, margin_loss, probit, random_labels, ridge, sign, spherical, square,
                   squared_hinge, u, w, y, z)
from .erm import ERMResult, erm, ridge_closed_form
from .gibbs import GibbsResult, gibbs
from .bayes import BayesResult, BayesTransition, bayes_branches, bayes_optimal, bayes_transition
from .thresholds import (Thresholds, jamming_ratio, max_margin, ridge_peak, ridge_peak_line, sat_unsat,
                         separability, separability_line, thresholds, zero_set)
from .replica_breaking import sat_unsat_rsb, storage_rsb
from .denoisers import Denoisers
from .curves import (erm_problem, learning_curve, optimal_lam, optimal_lam_curve, parameter_path,
                     regularisation_path)

from . import advanced

# the questions a user asks; the building blocks are in statmech.glm.advanced (also attributes here)
__all__ = [
    # specification
    "Model", "Loss", "Penalty", "Prior", "Channel", "LOSSES",
    "square", "logistic", "hinge", "squared_hinge", "exponential", "margin_counting", "margin_loss",
    "ridge", "l1", "elastic_net", "spherical", "ising", "gaussian", "gauss_bernoulli",
    "random_labels", "sign", "probit", "linear", "y", "h", "z", "w", "u",
    # theories
    "erm", "ERMResult", "gibbs", "GibbsResult", "bayes_optimal", "BayesResult", "bayes_transition", "BayesTransition",
    "thresholds", "Thresholds", "sat_unsat_rsb", "storage_rsb",
    "learning_curve", "regularisation_path", "optimal_lam",
]
