"""Exact storability of tiny tree committee machines (statmech.simulate.tcm.storable_exact)."""
import itertools
import math

import numpy as np
import pytest
from scipy.optimize import linprog

from statmech.simulate import tcm


def _separable(X, y):
    """Is there w with y_mu w.x_mu > 0 for all mu?  Homogeneous LP: y w.x >= 1, w free (exact)."""
    if len(y) == 0:
        return True
    A = -(X * y[:, None])
    res = linprog(np.zeros(X.shape[1]), A_ub=A, b_ub=-np.ones(len(y)), bounds=[(None, None)] * X.shape[1],
                  method="highs")
    assert res.status in (0, 2)
    return res.status == 0


def _brute_force_storable(xi, sigma, K):
    """Enumerate the admissible internal representations (each pattern: at most (K-1)/2 wrong
    hidden units) depth-first over the patterns, testing each branch's labels for linear
    separability with an LP; a prefix that is not separable is not extended (every extension
    contains it, so it is not separable either).  Returns True iff some representation works."""
    P, N = xi.shape
    n = N // K
    per_pattern = [w for r in range((K - 1) // 2 + 1) for w in itertools.combinations(range(K), r)]
    cache = {}

    def ok(l, labels):
        key = (l, labels)
        if key not in cache:
            cache[key] = _separable(xi[:len(labels), l * n:(l + 1) * n], np.array(labels, dtype=float))
        return cache[key]

    def dfs(mu, labels):
        if mu == P:
            return True
        for wrong in per_pattern:
            new = [labels[l] + ((-sigma[mu] if l in wrong else sigma[mu]),) for l in range(K)]
            if all(ok(l, new[l]) for l in range(K)) and dfs(mu + 1, new):
                return True
        return False

    return dfs(0, [()] * K)


def test_milp_agrees_with_brute_force_enumeration():
    rng = np.random.default_rng(11)
    n_true = n_false = 0
    for trial in range(30):
        N = (3, 6)[trial % 2]
        P = int(rng.integers(2, 8) if N == 3 else rng.integers(6, 12))
        xi = rng.standard_normal((P, N))
        sigma = rng.choice([-1.0, 1.0], size=P)
        bf = _brute_force_storable(xi, sigma, 3)
        r = tcm.storable_exact(xi, sigma, 3, try_least_action=False, time_limit=60)
        assert r.stored is bf, (trial, P, r)
        if bf:
            n_true += 1
            assert np.all(tcm.tcm_output(r.weights, xi) == sigma)
        else:
            n_false += 1
    assert n_true >= 3 and n_false >= 3   # both answers exercised
