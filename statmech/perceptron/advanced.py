"""Method-specific entry points of the perceptron theories (the ``advanced`` namespace).

The questions a user asks are answered by :mod:`statmech.perceptron` (``gardner_capacity``,
``spherical_storage``, ``binary_storage``, ``binary_capacity``, the teacher--student functions,
the AT lines), with ``ansatz=`` choosing the theory.  This namespace holds the pieces those
questions are built from, for those who study a method itself:

* :func:`binary_storage_1rsb`, :func:`binary_capacity_1rsb`, :func:`binary_rsb_free_entropy` --
  the Ising perceptron's 1RSB functional and its solves (``binary_storage(alpha, kappa,
  ansatz="1rsb")`` and ``binary_capacity(kappa, ansatz="1rsb")`` call them);
* :func:`jamming_kstep` (k-step jamming point with free breakpoints, for the k -> inf study) and
  :func:`jamming_replicon` (the RS replicon at the RS jamming point);
* :func:`binary_storage_problem` -- the continuation problem of the Ising storage free entropy.
"""
from __future__ import annotations

from .binary_rsb import binary_capacity_1rsb, binary_rsb_free_entropy, binary_storage_1rsb
from .phase_diagram import binary_storage_problem
from .spherical_rsb import jamming_kstep, jamming_replicon

__all__ = ["binary_storage_1rsb", "binary_capacity_1rsb", "binary_rsb_free_entropy", "jamming_kstep",
           "jamming_replicon", "binary_storage_problem"]
