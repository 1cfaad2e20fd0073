"""Expert entry points of :mod:`statmech.glm`: the building blocks behind the theories.

* component coercion: :func:`as_loss`, :func:`as_penalty`, :func:`as_prior`, :func:`as_channel`;
* closed forms and tables: :func:`ridge_closed_form` (a dict), :func:`bayes_branches` (the branch
  ``alpha(q_hat)`` of all Bayes-optimal fixed points, a dict of arrays);
* threshold pieces (numbers and tuples; :func:`statmech.glm.thresholds` returns the result):
  :func:`zero_set`, :func:`sat_unsat`, :func:`jamming_ratio`, :func:`separability`,
  :func:`max_margin`, :func:`ridge_peak`, and the lines :func:`separability_line`,
  :func:`ridge_peak_line` traced by the continuation engine (dicts of arrays);
* continuation: :func:`parameter_path` (any parameter; :func:`statmech.glm.regularisation_path`
  is the lam case), :func:`optimal_lam_curve`, :func:`erm_problem` (a
  :class:`statmech.continuation.Problem`);
* :class:`Denoisers`: the compiled prox/denoisers for finite-N algorithms
  (:mod:`statmech.simulate.glm`).

These names are also attributes of :mod:`statmech.glm` (not in its ``__all__``).
"""
from .spec import as_channel, as_loss, as_penalty, as_prior
from .erm import ridge_closed_form
from .bayes import bayes_branches
from .thresholds import (jamming_ratio, max_margin, ridge_peak, ridge_peak_line, sat_unsat, separability,
                         separability_line, zero_set)
from .curves import erm_problem, optimal_lam_curve, parameter_path
from .denoisers import Denoisers

__all__ = ["as_loss", "as_penalty", "as_prior", "as_channel", "ridge_closed_form", "bayes_branches", "zero_set",
           "sat_unsat", "jamming_ratio", "separability", "max_margin", "ridge_peak", "separability_line",
           "ridge_peak_line", "parameter_path", "optimal_lam_curve", "erm_problem", "Denoisers"]
