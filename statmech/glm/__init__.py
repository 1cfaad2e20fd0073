"""Generalized linear models from a specification (placeholder docstring, completed below)."""
from .spec import (LOSSES, Channel, Loss, Model, Penalty, Prior, as_channel, as_loss, as_penalty, as_prior,
                   elastic_net, exponential, gauss_bernoulli, gaussian, h, hinge, ising, l1, linear, logistic,
                   margin_counting, margin_loss, probit, random_labels, ridge, sign, spherical, square,
                   squared_hinge, u, w, y, z)
from .erm import ERMResult, erm, ridge_closed_form
from .gibbs import GibbsResult, gibbs
from .thresholds import (Thresholds, max_margin, ridge_peak, ridge_peak_line, sat_unsat, separability,
                         separability_line, thresholds, zero_set)
from .denoisers import Denoisers
from .curves import (erm_problem, learning_curve, optimal_lam, optimal_lam_curve, parameter_path,
                     regularisation_path)
from .replica_breaking import sat_unsat_rsb, storage_rsb
from .bayes import BayesResult, BayesTransition, bayes_branches, bayes_optimal, bayes_transition

__all__ = ["Model", "Loss", "Penalty", "Prior", "Channel", "erm", "ERMResult", "ridge_closed_form"]
