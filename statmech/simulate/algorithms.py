r"""Learning algorithms for the perceptron (thesis ch. 2) as simulation backends.

Source: E. Tartaglione, "From Statistical Physics to Algorithms in Deep Neural Systems", PhD thesis,
Politecnico di Torino, 2019 ("the thesis" below).

Binary perceptron with weights :math:`w_i = \pm 1`, patterns :math:`\xi^\mu` (rows of
``patterns``, shape (P, N)), labels :math:`\sigma^\mu = \pm 1`; a configuration solves
the training set when every stability :math:`\sigma^\mu \sum_i w_i \xi_i^\mu` is > 0
(use N odd with +-1 patterns so that a field is never zero).

Algorithms (all reproducible from ``seed``; all return :class:`AlgorithmResult`):

* :func:`stochastic_perceptron` -- the stochastic perceptron of thesis Sec. 2.4:
  gradient descent on the magnetizations ``m`` of a factorized distribution over binary
  weights, loss Eq. 2.57 with the gamma-scaled variance of Eq. 2.59 and gamma annealing,
  clipped updates Eq. 2.51, binarization ``sign(m)``, monitoring of q* (Eq. 2.52).
* :func:`perceptron_rule` -- Rosenblatt's rule (Eq. 2.31, corrected), continuous weights.
* :func:`delta_rule` -- online gradient descent on the squared error (Eqs. 2.33-2.34,
  corrected), continuous weights.
* :func:`clipped_hebb` -- ``w = sign(sum_mu sigma^mu xi^mu)`` (Sec. 2.3.3), binary weights.
* :func:`metropolis_annealing` -- Metropolis single-flip Monte Carlo on binary weights with
  simulated annealing in beta, energy = number of misclassified patterns (Sec. 2.3.3).

Helpers: :func:`random_binary_instance` (random +-1 patterns and labels, optionally from a
binary teacher), :func:`stochastic_perceptron_loss` (loss and exact gradient, Eq. 2.59),
:func:`training_errors`; success statistics: :func:`success_rate` (fraction of fresh instances
solved; :class:`SuccessRate`, a dict) and :func:`algorithmic_capacity` (:class:`CapacityEstimate`, a fit of
the success curve).  Every result follows the result protocol of :class:`statmech.result.Result`.

Files (this module is the public face; every name above imports from here and from
:mod:`statmech.simulate`):

* ``stochastic.py`` -- the stochastic perceptron: its per-pattern loss and derivatives written
  once in sympy (``_SP``) and the numba loop that calls the generated kernel;
* ``classic_rules.py`` -- perceptron rule, Delta rule, clipped Hebb, Metropolis annealing;
* ``success.py`` -- success rates on fresh instances and the algorithmic-capacity fit;
* ``_learning.py`` -- shared: :class:`AlgorithmResult`, the data checks, random instances,
  training errors, the seeding of the numba loops.
"""
from __future__ import annotations

from ._learning import AlgorithmResult, random_binary_instance, training_errors
from .classic_rules import clipped_hebb, delta_rule, metropolis_annealing, perceptron_rule
from .stochastic import stochastic_perceptron, stochastic_perceptron_loss
from .success import CapacityEstimate, SuccessRate, algorithmic_capacity, success_rate

__all__ = ["AlgorithmResult", "random_binary_instance", "training_errors",
           "stochastic_perceptron", "stochastic_perceptron_loss", "perceptron_rule",
           "delta_rule", "clipped_hebb", "metropolis_annealing", "CapacityEstimate",
           "algorithmic_capacity", "success_rate", "SuccessRate"]
