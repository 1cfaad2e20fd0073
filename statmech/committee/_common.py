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
import numbers

import numpy as np
from scipy import special

from ..errors import ConvergenceError, check_int
from ..result import check_real
from ..saddle import newton


ACTIVATIONS = ("sign", "relu")
ANSATZE = ("rs", "1rsb")

#: largest K of the sign RS capacity (thesis Eq. 3.5): beyond, the incomplete-beta quadrature
#: loses its 1e-12 agreement between levels (K = 1e11: 2e-12; 1e12: 5e-5)
K_MAX_RS_FORMULA = 10 ** 10
#: largest K of the randomized-QMC sign theories at finite K (RS storage, AT line, 1RSB capacity):
#: the cost grows like K^2 (1RSB capacity ~20 min at K = 201, the largest K computed, stored in
#: figures/data/committee_1rsb_largeK.json; RS storage ~2.5 min at K = 21); for larger K the
#: large-K theories apply (:func:`statmech.committee.sign_capacity_large_K`, Eq. 1RSB.L)
K_MAX_RQMC = 201
#: largest even K of the ReLU RS capacity by RQMC (~80 s at K = 100, relative standard error 1e-3)
K_MAX_RELU_RS = 100


def _check_K_max(k, k_max, function, what, hint=""):
    """ValueError naming K and the limit when a finite ``k`` exceeds ``k_max``."""
    if k != math.inf and k > k_max:
        raise ValueError(f"{function}: K must be <= {k_max} for {what}, got K={k}" + (f"; {hint}" if hint else ""))
    return k


def _check_K(K, activation, function=None):
    """K as an int (odd >= 1 for sign units, even >= 2 for ReLU) or ``math.inf``.

    TypeError for what is not a real number (strings, None, booleans), ValueError naming K and
    the allowed values otherwise (NaN, -inf, non-integers, wrong parity)."""
    where = f"{function}: " if function else ""
    check_real("K", K, function=function)
    if isinstance(K, (float, np.floating)) and not math.isfinite(K):
        if K == math.inf:
            return math.inf
        raise ValueError(f"{where}K must be a positive integer or math.inf, got {K!r}")
    if activation == "relu":
        if not isinstance(K, (numbers.Integral, np.integer)) and K != int(K):
            raise ValueError(f"{where}K must be an even integer >= 2 or math.inf, got {K!r}")
        k = check_int("K", K, 2)
        if k % 2:
            raise ValueError(f"{where}K must be an even integer >= 2 for activation='relu' (balanced second layer), "
                             f"got {K!r}")
        return k
    if not isinstance(K, (numbers.Integral, np.integer)) and K != int(K):
        raise ValueError(f"{where}K must be an odd integer >= 1 or math.inf, got {K!r}")
    if K < 1:
        raise ValueError(f"{where}K must be an odd integer >= 1 or math.inf, got {K!r}")
    k = check_int("K", K, 1)
    if k % 2 == 0:
        raise ValueError(f"{where}K must be an odd integer >= 1 for activation='sign' (majority vote of K units), "
                         f"got {K!r}")
    return k


def _stationary_2d(f, x0, h=1e-3, tol=1e-7, name=None, where=""):
    """Stationary point of a smooth f(p), p in R^2, by Newton on central-difference gradients.

    f is evaluated once per point: the Hessian's diagonal stencil reuses the gradient's points
    (f is a pure function of p), so the results are bit-identical to evaluating every stencil
    point afresh.  The Hessian is computed on one triangle and mirrored (exactly symmetric).
    With ``name``, a failed Newton solve raises ConvergenceError naming the function and ``where``.
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
        # one triangle, mirrored: symmetric by construction (the (1, 0) stencil sums the same four
        # values in another order, which may differ from (0, 1) in the last bit)
        Hm = np.empty((2, 2))
        f0 = f(p)
        for i in range(2):
            for j in range(i, 2):
                ei = np.zeros(2)
                ej = np.zeros(2)
                ei[i] = h
                ej[j] = h
                if i == j:
                    Hm[i, i] = (f(p + ei) - 2 * f0 + f(p - ei)) / (h * h)
                else:
                    Hm[i, j] = Hm[j, i] = (f(p + ei + ej) - f(p + ei - ej) - f(p - ei + ej) + f(p - ei - ej)) / (4 * h * h)
        return Hm
    try:
        info = newton(grad, x0, hess, tol=tol, xtol=1e-8, maxiter=30)
    except ConvergenceError as exc:
        if name is None:
            raise
        raise ConvergenceError(f"{name}: no stationary point of alpha(logit q0, log y) found{' at ' + where if where else ''} "
                               f"({exc})", x=exc.x, residual=exc.residual, iterations=exc.iterations) from None
    return info, hess(info.x)


def _sobol_normal_points(K, log2_points, seed):
    """2^log2_points points of a scrambled Sobol sequence (scipy.stats.qmc, ``seed``) mapped to N(0, I_K) by ndtri."""
    from scipy.stats import qmc
    return np.ascontiguousarray(special.ndtri(qmc.Sobol(d=K, scramble=True, seed=seed).random_base2(log2_points)))


def _bar(desc, total=None, progress=True):
    """A tqdm progress bar (stderr, removed when done) or a silent stand-in when ``progress`` is False."""
    from tqdm.auto import tqdm
    return tqdm(total=total, desc=desc, disable=not progress, leave=False)


#: modules whose source keys the on-disk results of the committee package (any edit invalidates them)
_CACHE_SOURCES = ("statmech.committee", "statmech.gaussian", "statmech.saddle", "statmech.symbolic",
                  "statmech._nb", "statmech.rsb")


def _disk_cached(name, key, compute):
    """``compute()`` (a JSON value) cached on disk under ``committee/<name>`` (:func:`statmech.io.cached_json`)."""
    from ..io import cached_json
    return cached_json(f"committee/{name}", key, compute, sources=_CACHE_SOURCES)
