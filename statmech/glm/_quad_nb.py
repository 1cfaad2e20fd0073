"""Quadrature rules of the GLM averages, built inside numba at every evaluation.

Not imported for its functions: appended to a model's generated kernel module by
:mod:`statmech.glm._codegen`.  Every average is ``E_xi f(xi)`` over a standard Gaussian, with
an integrand that is smooth except at known points (kinks and jumps of a prox, the layer of a
sign channel at ``xi = 0``).  The rule (``docs/glm.md``, "Quadrature"):

* the two tails ``(-inf, -T]`` and ``[T, inf)``, ``T = TAIL`` = 8.5, each carry a Gaussian mass
  ``H(T) = 9.5e-18``; their nodes are those of :func:`statmech.gaussian.piecewise_nodes`
  (probability-scale tanh--sinh, no cut-off) at a coarse level, computed once in Python and
  passed in (``tz, tw``: the left tail's nodes first, then the right tail's);
* ``[-T, T]`` is split at the break points inside it, and each piece gets the tanh--sinh rule
  with the Gaussian weight (:func:`statmech.gaussian.interval_fill`) -- a kink at a piece's end
  costs nothing in accuracy (double-exponential convergence at end-point singularities).

A break point beyond ``|xi| > T`` is not split: the integrand's kink lies where the Gaussian
weight is below 1e-17, so its effect on the average is below 1e-17 relative to the integrand's
scale there (the tail rule is smooth-accurate, and the tail's whole mass is 9.5e-18).
"""
import math

import numba
import numpy as np

from statmech.gaussian import interval_fill

TAIL = 8.5
#: Gauss--Hermite (order n = 96) for averages E_xi f(xi), xi ~ N(0, 1), whose integrand is analytic
#: in the strip |Im xi| < d: with x = xi/sqrt 2 (weight e^{-x^2}, strip d/sqrt 2) the error is
#: ~exp(-2 (d/sqrt 2) sqrt(2 n)) = exp(-19.6 d), below 1e-15 for d >= 1.76.
#: Channel side: no kink and the narrowest layer of width >= 1/sqrt(GH_A2) in xi (H(a xi) with
#: a^2 <= GH_A2; noiseless sign channel: log H(a xi) is singular at the first zero of erfc,
#: Im xi = 2.816/a >= 3.37; with label noise the accuracy is checked against mpmath at p = 0.1, 0.25).  The earlier bound 1.5 (the perceptron's q <= 0.6) gave Bayes-optimal q
#: wrong by 2e-12 (Gaussian prior, p = 0.1, alpha = 2) against 30-digit mpmath state evolution
#: (tests/test_glm.py::test_bayes_state_evolution_against_mpmath).
GH_A2 = 0.7
#: prior averages of a field b = mu + s xi with s^2 <= GH_PRIOR by Gauss--Hermite: tanh(b) and the
#: posterior moments of a mixture are analytic within |Im xi| < pi/(2 s) (>= 1.88 here, error
#: ~1e-16).  The earlier bound 1.5 (d = 1.28, error ~1e-11) gave the Ising Bayes-optimal q wrong by
#: 3e-11 (p = 0, alpha = 1) and 7.5e-11 (p = 0.1, alpha = 2) against mpmath.
GH_PRIOR = 0.7


@numba.njit(cache=True)
def _sort(v, n):
    for i in range(1, n):
        x = v[i]
        j = i - 1
        while j >= 0 and v[j] > x:
            v[j + 1] = v[j]
            j -= 1
        v[j + 1] = x


@numba.njit(cache=True)
def rule_size(nb, rx, tz):
    """Upper bound of the number of nodes of :func:`build_rule` for ``nb`` break points."""
    return (nb + 1) * rx.shape[0] + tz.shape[0]


@numba.njit(cache=True)
def build_rule(br, n, rx, rxc, rw, tz, tw, zs, ws):
    """Nodes and weights into ``zs, ws`` for the break points ``br[:n]`` (any order; duplicates,
    non-finite points and points beyond the tails allowed); returns the number of nodes."""
    b = np.empty(n + 2)
    m = 0
    b[m] = -TAIL
    m += 1
    for i in range(n):
        x = br[i]
        if math.isfinite(x) and -TAIL < x < TAIL:
            b[m] = x
            m += 1
    b[m] = TAIL
    m += 1
    _sort(b, m)
    k = 0
    for i in range(tz.shape[0]):
        zs[k] = tz[i]
        ws[k] = tw[i]
        k += 1
    prev = b[0]
    for i in range(1, m):
        if b[i] > prev:
            k = interval_fill(prev, b[i], rx, rxc, rw, zs, ws, k)
            prev = b[i]
    return k


@numba.njit(cache=True)
def gh_rule(rule, zs, ws):
    """The Gauss--Hermite nodes of ``rule`` (elements 5, 6) into ``zs, ws``; returns their number."""
    gz = rule[5]
    gw = rule[6]
    for i in range(gz.shape[0]):
        zs[i] = gz[i]
        ws[i] = gw[i]
    return gz.shape[0]
