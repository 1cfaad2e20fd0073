r"""Spherical perceptron storage, RS, written only with the cores: the template for a new model.

This file is what the README's "Adding a model" section asks a newcomer to copy.  It solves the
same saddle point as :func:`statmech.perceptron.spherical_storage` (whose numba solver is built
for speed, not for reading) in the plain way, and the test suite checks the two against each
other, so it is also an independent cross-check of the fast path.

Equations (docs/perceptron.md, Gardner 1988)::

    phi(q) = 1/2 log(1-q) + q / (2 (1-q)) + alpha E_t log H(u),   u = (kappa - sqrt(q) t)/sqrt(1-q)
    d phi/dq = 0                                                              (saddle point)
    lambda_AT = 1 - alpha E_t [ (log H)''(u)^2 ]          (replicon; RS stable iff > 0)

The recipe: the equations once, in sympy, inside a ``@kernels`` function (the kernel generator
compiles them to numba, with their derivatives); a Gaussian rule from :mod:`statmech.gaussian`
that resolves the sharp layer at ``t = kappa/sqrt(q)``; the bracketed root finder of
:mod:`statmech.saddle`, which raises :class:`statmech.ConvergenceError` instead of returning a
wrong number; argument checks from :mod:`statmech.errors`; a :class:`statmech.saddle.SaddlePoint`.
"""
from __future__ import annotations

import math

import numpy as np
import sympy as sp

from ..errors import check_range
from ..gaussian import piecewise_nodes
from ..saddle import SaddlePoint, root_scalar
from ..symbolic import Expectation, LogH, kernels

__all__ = ["spherical_storage_reference"]


@kernels
def _K():
    t, q, k = sp.symbols("t q kappa")
    energetic = LogH((k - sp.sqrt(q) * t) / sp.sqrt(1 - q))        # log H(u)
    # (log H)''(u) = ((1 - q)/q) d^2/dt^2 log H(u)
    curvature = (1 - q) / q * sp.diff(energetic, t, 2)
    return {"G_E": Expectation(t, (q, k), (energetic, sp.diff(energetic, q), curvature ** 2))}


def spherical_storage_reference(alpha, kappa=0.0):
    """RS storage saddle point of the spherical perceptron at load ``alpha`` and margin ``kappa``.

    Parameters
    ----------
    alpha : float
        Load P/N, ``alpha >= 0``.
    kappa : float
        Margin; any real number (RS is unstable for ``kappa < 0`` near capacity: see
        ``rs_stable``).

    Returns
    -------
    SaddlePoint
        ``q`` (typical overlap of two solutions); ``entropy`` (the RS free entropy phi(q));
        ``replicon`` and ``rs_stable``; ``hessian_eigenvalues`` holds d^2 phi/dq^2.

    Raises
    ------
    ValueError
        If ``alpha`` is negative or not finite.
    statmech.ConvergenceError
        If there is no RS solution (``alpha`` at or above Gardner's capacity for ``kappa``).
    """
    alpha = float(check_range("alpha", alpha, 0.0))
    kappa = float(check_range("kappa", kappa))
    params = {"alpha": alpha, "kappa": kappa}
    if alpha == 0.0:                                   # no constraint: two solutions are orthogonal
        return SaddlePoint("perceptron.spherical_storage_reference", params, {"q": 0.0},
                           {"entropy": 0.0}, True, 0.0, 0, np.array([-0.5]), 1.0, True)

    def averages(q):
        z, w = piecewise_nodes([kappa / math.sqrt(q)])            # sharp layer at t = kappa/sqrt(q)
        return _K.G_E(z, w, q, kappa)

    def dphi(q):                                                  # d phi / dq
        return q / (2 * (1 - q) ** 2) + alpha * averages(q)[1]

    info = root_scalar(dphi, (1e-12, 1 - 1e-12))          # raises ConvergenceError if not bracketed
    q = float(info.x[0])
    E = averages(q)
    h = 1e-6 * min(q, 1 - q)
    d2phi = (dphi(q + h) - dphi(q - h)) / (2 * h)
    replicon = 1.0 - alpha * float(E[2])
    entropy = 0.5 * math.log1p(-q) + q / (2 * (1 - q)) + alpha * float(E[0])
    return SaddlePoint("perceptron.spherical_storage_reference", params, {"q": q}, {"entropy": entropy},
                       True, abs(info.residual), info.iterations, np.array([d2phi]), replicon,
                       replicon > 0)
