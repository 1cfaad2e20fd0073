"""Pieces shared by the tree committee theories: argument checks and the 2-d stationary-point search.

* :func:`_check_K` -- K odd (sign, majority vote) or even (ReLU, balanced second layer), or
  ``math.inf``;
* :func:`_stationary_2d` -- Newton on central-difference gradients of alpha(logit q0, log y),
  used by every 1RSB capacity (sign K <= 5 and RQMC, the large-K continuum, ReLU K = inf);
* :func:`_sobol_normal_points` -- a scrambled Sobol set mapped to N(0, I_K), the point sets of
  every randomized-QMC average (sign RS and 1RSB, ReLU RS and 1RSB).
"""
from __future__ import annotations

import math

import numpy as np
from scipy import special

from ..errors import check_int
from ..saddle import newton


ACTIVATIONS = ("sign", "relu")
ANSATZE = ("rs", "1rsb")


def _check_K(K, activation):
    if activation == "relu":
        if isinstance(K, float) and math.isinf(K):
            return math.inf
        k = check_int("K", K, 2)
        if k % 2:
            raise ValueError(f"K must be an even integer >= 2 for activation='relu' (balanced second layer), got {K!r}")
        return k
    if isinstance(K, float) and math.isinf(K):
        return math.inf
    k = check_int("K", K, 1)
    if k % 2 == 0:
        raise ValueError(f"K must be an odd integer >= 1 for activation='sign' (majority vote of K units), got {K!r}")
    return k


def _stationary_2d(f, x0, h=1e-3, tol=1e-7):
    """Stationary point of a smooth f(p), p in R^2, by Newton on central-difference gradients.

    f is evaluated once per point: the Hessian's diagonal stencil reuses the gradient's points
    and the (1, 0) element reuses the (0, 1) stencil points (f is a pure function of p), so the
    results are bit-identical to evaluating every stencil point afresh.
    """
    f_raw = f
    memo = {}

    def f(p):
        key = (float(p[0]), float(p[1]))
        if key not in memo:
            memo[key] = f_raw(p)
        return memo[key]

    def grad(p):
        g = np.empty(2)
        for i in range(2):
            e = np.zeros(2)
            e[i] = h
            g[i] = (f(p + e) - f(p - e)) / (2 * h)
        return g

    def hess(p):
        Hm = np.empty((2, 2))
        f0 = f(p)
        for i in range(2):
            for j in range(2):
                ei = np.zeros(2)
                ej = np.zeros(2)
                ei[i] = h
                ej[j] = h
                if i == j:
                    Hm[i, i] = (f(p + ei) - 2 * f0 + f(p - ei)) / (h * h)
                else:
                    Hm[i, j] = (f(p + ei + ej) - f(p + ei - ej) - f(p - ei + ej) + f(p - ei - ej)) / (4 * h * h)
        return Hm
    info = newton(grad, x0, hess, tol=tol, xtol=1e-8, maxiter=30)
    return info, hess(info.x)


def _sobol_normal_points(K, log2_points, seed):
    """2^log2_points points of a scrambled Sobol sequence (scipy.stats.qmc, ``seed``) mapped to N(0, I_K) by ndtri."""
    from scipy.stats import qmc
    return np.ascontiguousarray(special.ndtri(qmc.Sobol(d=K, scramble=True, seed=seed).random_base2(log2_points)))
