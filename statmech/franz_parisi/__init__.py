r"""Franz--Parisi entropies: the local geometry of perceptron solutions.

The Franz--Parisi (FP) entropy :math:`S_{FP}(d)` is the log-number (per weight) of
solutions ``W`` of a perceptron storage problem at normalized distance ``d`` from a
*reference* solution ``W~`` drawn from an equilibrium measure, averaged over the
patterns and over the reference (thesis Eqs. 2.41--2.42 and 2.55--2.56; Franz &
Parisi 1998; Huang & Kabashima 2014 for the binary perceptron with a typical
reference).  The distance is ``d = (1 - p)/2`` with ``p = W.W~/N`` the overlap; for
Ising weights this is the normalized Hamming distance, for spherical weights
(``|W|^2 = N``) it is ``|W - W~|^2/(4N)``.

Public API
----------
``binary_perceptron(alpha, d, kappa=0.0)``
    RS :math:`S_{FP}(d)` for Ising weights around a typical (uniformly drawn) solution.
``spherical_perceptron(alpha, d, kappa=0.0)``
    The same for spherical weights; the entropy is the log of the *fraction* of the
    sphere (so ``S = log(1 - p^2)/2`` at ``alpha = 0``).
``binary_zero_crossing(alpha, kappa=0.0)``
    The smallest ``d > 0`` where the binary :math:`S_{FP}` becomes positive (below it
    the RS entropy is negative: typical solutions are isolated).
``binary_entropy_free(d)``
    The ``alpha = 0`` curve of the Ising weights, ``-d log d - (1-d) log(1-d)``.
``equilibrium_binary(alpha, kappa)``, ``equilibrium_spherical(alpha, kappa)``
    The reference (Gardner RS) saddle points ``q0, q_hat0`` and entropy.
``stochastic_reference(alpha, q_star, beta, ansatz="rs")``, ``stochastic_energy(alpha, q_star, beta)``
    The equilibrium theory of the stochastic perceptron (thesis Eqs. 2.53--2.54): RS or 1RSB order
    parameters and the training error of the binarized configuration ``sign(m)``.
``stochastic_perceptron(alpha, d, q_star, beta=20.0, ansatz="rs")``
    :math:`S_{FP}(d)` of Ising solutions around ``sign(m)`` of the stochastic perceptron
    (Eqs. 2.55--2.56 with the reference of Eq. 2.53, RS or 1RSB; the stochastic curves of Fig. 2.7).

Every solver returns a :class:`statmech.saddle.SaddlePoint` (vectorized over ``d``)
and raises :class:`statmech.ConvergenceError` rather than return a wrong number.
Derivations, corrections to the thesis equations and validation numbers are in
``docs/franz_parisi.md``.

Replica structure (RS, derived in docs/franz_parisi.md)
-------------------------------------------------------
``n -> 0`` reference replicas, each with ``s -> 0`` constrained replicas.  Order
parameters of the constrained system: ``q1`` (overlap of two constrained replicas of the
same reference), ``t`` (overlap of a constrained replica with *another* reference
replica), the fixed overlap ``p = 1 - 2d`` with its own reference, and their conjugates
``q1_hat, t_hat, p_hat`` (Ising case).  The overlap between constrained replicas of
different references drops out at order ``n s``.  ``t`` is *not* equal to ``q0`` away
from the typical distance: the pair (reference, constrained) is not exchangeable.

Files
-----
``reference.py``
    the reference systems (Gardner RS, Ising and spherical), cached per ``(alpha, kappa)``.
``binary.py``, ``spherical.py``
    FP around a typical reference, Ising and spherical weights (and the zero crossing);
    what they share -- the energetic term, the RS domain of ``(q1, t)``, the continuation in
    ``d`` and the result assembly -- is in ``_common.py``.
``stochastic.py``
    the stochastic-perceptron reference (Eq. 2.53) and the energy of ``sign(m)`` (Eq. 2.54).
``stochastic_fp.py``
    FP around ``sign(m)`` of the stochastic perceptron (Eqs. 2.55--2.56).
``_equations.py``
    every equation, once, in sympy (one ``@kernels`` namespace per theory);
    ``_sums.py`` the numba quadrature loops compiled with the stochastic-FP kernels;
    ``_quadrature.py`` the inner piecewise tanh--sinh rules.
"""
from .binary import binary_entropy_free, binary_perceptron, binary_zero_crossing
from .reference import equilibrium_binary, equilibrium_spherical
from .spherical import spherical_perceptron
from .stochastic import stochastic_energy, stochastic_reference
from .stochastic_fp import stochastic_perceptron

__all__ = [
    "binary_perceptron", "spherical_perceptron", "binary_zero_crossing",
    "equilibrium_binary", "equilibrium_spherical",
    "stochastic_reference", "stochastic_energy", "stochastic_perceptron",
    "binary_entropy_free",
]
