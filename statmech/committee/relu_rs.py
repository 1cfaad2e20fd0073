r"""Balanced ReLU tree committee machine, RS capacity (Eq. RS.4: 1/alpha_c^RS = E_t C(t)).

K = 2: E C = 3/4 exactly (docs/committee.md), alpha_c = 4/3.  K >= 4: E C(t) = K E C(u) on the
unit sphere (homogeneity of the flip cost C, :mod:`.flip_cost`), averaged by randomized
quasi-Monte Carlo (``_relu_rs_rqmc``) with the standard error :func:`relu_rs_capacity_error`.
The RS saddle point at finite alpha (K = 2) is in :mod:`.relu_k2`, K = inf in :mod:`.large_k`.
"""
from __future__ import annotations

import math
from functools import lru_cache

import numba
import numpy as np

from ._common import K_MAX_RELU_RS, _check_K, _check_K_max, _disk_cached, _sobol_normal_points
from .flip_cost import _relu_cost

__all__ = ["relu_rs_capacity_error"]


@numba.njit(cache=True)
def _relu_mean_cost_dir(T, K):
    """mean over rows of K C(t/|t|) (homogeneity: E C(t) = E|t|^2 E C(t/|t|) = K E C(u))."""
    half = K // 2
    acc = 0.0
    u = np.empty(K)
    for r in range(T.shape[0]):
        n2 = 0.0
        for j in range(K):
            n2 += T[r, j] * T[r, j]
        inv = 1.0 / math.sqrt(n2)
        for j in range(K):
            u[j] = T[r, j] * inv
        acc += K * _relu_cost(u, half)
    return acc / T.shape[0]


def _relu_rs_rqmc(K, log2_points=16, reps=8, seed=2024):
    """E_t C(t) for the balanced ReLU TCM by randomized (scrambled Sobol) quasi-Monte Carlo.

    Returns (mean, standard error over ``reps`` independent scramblings).
    """
    vals = []
    for r in range(reps):
        vals.append(_relu_mean_cost_dir(_sobol_normal_points(K, log2_points, seed + r), K))
    vals = np.array(vals)
    return float(vals.mean()), float(vals.std(ddof=1) / math.sqrt(reps))


@lru_cache(maxsize=32)
def _alpha_rs_relu(K):
    """(alpha_c^RS, standard error) for the balanced ReLU TCM (Eq. RS.4).

    K = 2: E C = 3/4 exactly (derived in docs/committee.md), alpha_c = 4/3.
    K >= 4: randomized QMC (2^16 scrambled Sobol points x 8 scramblings) of K E C(u).
    """
    if K == 2:
        return 4.0 / 3.0, 0.0
    m, se = _disk_cached("relu_rs_rqmc", {"K": K, "log2_points": 16, "reps": 8, "seed": 2024},
                         lambda: list(_relu_rs_rqmc(K)))
    return 1.0 / m, se / (m * m)


def relu_rs_capacity_error(K):
    """Standard error of ``tcm_capacity(K, "relu", "rs")`` (0 for K = 2 and K = inf: exact).

    Domain: even K with 2 <= K <= 100, or ``math.inf`` (ValueError otherwise, naming K)."""
    k = _check_K(K, "relu", "relu_rs_capacity_error")
    _check_K_max(k, K_MAX_RELU_RS, "relu_rs_capacity_error", "the ReLU RS capacity (RQMC)")
    return 0.0 if k == math.inf else float(_alpha_rs_relu(k)[1])
