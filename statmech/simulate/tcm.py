"""Tree committee machine (sign units, majority vote) storage experiments at finite N.

Two independent checks of the RS / 1RSB capacities of docs/committee.md, one file each:

* :mod:`statmech.simulate.tcm_least_action` -- least-action learning (Nilsson 1965; Mitchison
  & Durbin 1989), an incomplete learner, so its stored fraction is a LOWER bound on the
  probability that a random instance is storable: :func:`tcm_output`,
  :func:`train_least_action`, :func:`storage_fraction` (:class:`StorageFraction`);
* :mod:`statmech.simulate.tcm_exact` -- exact storability (a complete decision, not a bound):
  :func:`storable_exact` (mixed-integer LP, HiGHS; :class:`ExactStorage`),
  :func:`storage_fraction_exact` (nested random instances, bisection over the load;
  :class:`ExactStorageFraction`), :func:`fifty_percent_point` (:class:`FiftyPercentPoint`),
  :func:`extrapolate_inverse_N` (:class:`InverseNFit`);
  see docs/committee.md, "Simulation cross-check".

This module gathers their public names (``statmech.simulate.tcm.<name>``).  Kernels are numba
(cache=True) and compile on first use.
"""
from .tcm_exact import (ExactStorage, ExactStorageFraction, FiftyPercentPoint, InverseNFit, extrapolate_inverse_N,
                        fifty_percent_point, storable_exact, storage_fraction_exact)
from .tcm_least_action import StorageFraction, storage_fraction, tcm_output, train_least_action

__all__ = ["tcm_output", "train_least_action", "storage_fraction", "StorageFraction", "storable_exact",
           "ExactStorage", "storage_fraction_exact", "ExactStorageFraction", "fifty_percent_point",
           "FiftyPercentPoint", "extrapolate_inverse_N", "InverseNFit"]
