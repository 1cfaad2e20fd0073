"""Exact storability of tiny tree committee machines (statmech.simulate.tcm.storable_exact)."""
import itertools
import math

import numpy as np
import pytest
from scipy.optimize import linprog

from statmech.simulate import tcm, tcm_exact


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
    for trial in range(14):
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


def _cover(P, N):
    """Cover (1965): probability that P points in general position in R^N, random labels, are
    separable by a hyperplane through the origin: 2 sum_{k<N} C(P-1, k) / 2^P."""
    return 2 * sum(math.comb(P - 1, k) for k in range(N)) / 2 ** P


def test_least_action_solutions_are_confirmed_by_the_milp():
    rng = np.random.default_rng(2)
    seen = 0
    for _ in range(4):
        N, P = 9, 11
        xi = rng.standard_normal((P, N))
        sigma = rng.choice([-1.0, 1.0], size=P)
        W, ok, _ = tcm.train_least_action(xi, sigma, 3, seed=0)
        if ok:
            seen += 1
            r = tcm.storable_exact(xi, sigma, 3, try_least_action=False, time_limit=60)
            assert r.stored is True and r.status == "stored (milp)"
            assert np.all(tcm.tcm_output(r.weights, xi) == sigma)
            assert r.min_field > 0
    assert seen >= 2


@pytest.mark.parametrize("K,N", [(3, 15), (5, 15), (1, 4)])
def test_at_most_n_patterns_are_always_storable(K, N):
    # P <= n = N/K Gaussian points are linearly independent in each branch: every unit can be right
    rng = np.random.default_rng(K)
    n = N // K
    for P in range(1, n + 1):
        xi = rng.standard_normal((P, N))
        sigma = rng.choice([-1.0, 1.0], size=P)
        r = tcm.storable_exact(xi, sigma, K, try_least_action=False)
        assert r.stored is True and np.all(tcm.tcm_output(r.weights, xi) == sigma)


def test_least_action_shortcut_and_far_beyond_capacity():
    rng = np.random.default_rng(4)
    xi = rng.standard_normal((6, 15))
    sigma = rng.choice([-1.0, 1.0], size=6)
    r = tcm.storable_exact(xi, sigma, 3)
    assert r.stored is True and r.status == "stored (least action)"
    assert np.all(tcm.tcm_output(r.weights, xi) == sigma)
    # alpha = 6 at N = 6, beyond every capacity (and K = 3 with n = 2): proven unstorable
    xi = rng.standard_normal((36, 6))
    sigma = rng.choice([-1.0, 1.0], size=36)
    r = tcm.storable_exact(xi, sigma, 3)
    assert r.stored is False and r.weights is None and r.status == "unstorable (milp)"


def test_time_limit_is_reported_as_undecided_never_as_unstorable():
    rng = np.random.default_rng(5)
    xi = rng.standard_normal((40, 15))
    sigma = rng.choice([-1.0, 1.0], size=40)
    r = tcm.storable_exact(xi, sigma, 3, try_least_action=False, time_limit=0.05)
    assert r.stored is None and r.status == "time limit"
    f = tcm.storage_fraction_exact([2.0, 2.6], K=3, N=15, n_instances=2, progress=False, time_limit=0.05, seed=1)
    assert f.timeouts.sum() >= 1
    assert np.all(f.decided + f.timeouts == 2)
    assert np.all(f.stored <= f.decided)


def test_nested_bisection_matches_direct_solves():
    f = tcm.storage_fraction_exact(np.arange(7, 13) / 6, K=3, N=6, n_instances=2, seed=3, progress=False)
    assert np.all(np.diff(f.status, axis=1) <= 0)      # monotone in P for each instance
    assert np.any(f.status == 1) and np.any(f.status == 0)
    for i in range(2):
        rng = np.random.default_rng([3, i])
        xi = rng.standard_normal((12, 6))
        sigma = rng.choice([-1.0, 1.0], size=12)
        for j, P in enumerate(f.P):
            direct = tcm.storable_exact(xi[:P], sigma[:P], 3, try_least_action=False).stored
            assert int(direct) == f.status[i, j]
    assert f.solve_times.size < 3 * f.P.size             # bisection: fewer solves than grid points


def test_executor_gives_the_same_answer_as_serial():
    from concurrent.futures import ThreadPoolExecutor
    a = np.arange(8, 12) / 6
    serial = tcm.storage_fraction_exact(a, K=3, N=6, n_instances=3, seed=8, progress=False)
    with ThreadPoolExecutor(2) as ex:
        par = tcm.storage_fraction_exact(a, K=3, N=6, n_instances=3, seed=8, progress=False, executor=ex)
    assert np.array_equal(serial.status, par.status)
    assert np.allclose(serial.fraction, serial.stored / 3)
    assert np.allclose(serial.stderr, np.sqrt(serial.fraction * (1 - serial.fraction) / 3))


def test_perceptron_limit_reproduces_cover():
    # K = 1: the TCM is a perceptron; the exact fraction must follow Cover's formula
    N, n = 3, 50
    f = tcm.storage_fraction_exact(np.arange(3, 11) / N, K=1, N=N, n_instances=n, seed=0, progress=False)
    p = np.array([_cover(int(P), N) for P in f.P])
    z = (f.fraction - p) / np.sqrt(p * (1 - p) / n + 1e-300)
    assert f.fraction[0] == 1.0 and p[0] == 1.0
    assert np.all(np.abs(z[1:]) < 4), z
    # 50 % point estimator: exact Cover fractions cross 1/2 at alpha = 2 for every N
    for M in (3, 7, 20):
        Ps = np.arange(M, 4 * M)
        assert tcm_exact._crossing(Ps, np.array([_cover(int(P), M) for P in Ps]), M) == 2.0


def test_fifty_percent_point_and_extrapolation():
    P = np.arange(10, 20)
    pc = np.repeat([12, 13, 14, 15], 10)
    S = (P[None, :] <= pc[:, None]).astype(int)   # instance stored iff P <= its critical load
    r = tcm.fifty_percent_point(P, S, 5, n_boot=200)
    # f(P) = 1, .75, .5, .25, 0 at P = 12..16: the crossing is at P = 14 exactly
    assert r["alpha_50"] == pytest.approx(14 / 5, abs=1e-12)
    assert r["ci68"][0] <= r["alpha_50"] <= r["ci68"][1] and r["stderr"] > 0
    with pytest.raises(ValueError, match="bracket"):
        tcm.fifty_percent_point(P[:3], S[:, :3], 5)
    e = tcm.extrapolate_inverse_N([6, 9, 12, 15], [3 - 6 / 6, 3 - 6 / 9, 3 - 6 / 12, 3 - 6 / 15], [0.1] * 4)
    assert e["limit"] == pytest.approx(3.0, abs=1e-12) and e["coef"][1] == pytest.approx(-6.0, abs=1e-10)
    e = tcm.extrapolate_inverse_N([6, 9, 12, 15], [3 - 2 / math.sqrt(N) for N in (6, 9, 12, 15)], [0.1] * 4,
                                  power=0.5)
    assert e["limit"] == pytest.approx(3.0, abs=1e-12) and e["chi2"] < 1e-20


def test_invalid_arguments():
    xi = np.random.default_rng(0).standard_normal((4, 6))
    s = np.ones(4)
    with pytest.raises(ValueError, match="K"):
        tcm.storable_exact(xi, s, 2)
    with pytest.raises(ValueError, match="multiple of K"):
        tcm.storable_exact(xi[:, :5], s, 3)
    with pytest.raises(ValueError, match="sigma"):
        tcm.storable_exact(xi, np.array([1, 0, 1, 1]), 3)
    with pytest.raises(ValueError, match="weight_bound"):
        tcm.storable_exact(xi, s, 3, weight_bound=0)
    with pytest.raises(ValueError, match="N must be a positive multiple of K"):
        tcm.storage_fraction_exact(1.0, K=3, N=10)
    with pytest.raises(ValueError, match="K"):
        tcm.storage_fraction_exact(1.0, K=4, N=12)
    with pytest.raises(ValueError, match="alpha"):
        tcm.storage_fraction_exact(-0.5, K=3, N=9)
    with pytest.raises(ValueError, match="n_instances"):
        tcm.storage_fraction_exact(1.0, K=3, N=9, n_instances=0)


@pytest.mark.slow
def test_perceptron_fifty_percent_point_is_two():
    # Cover: the 50 % point of the perceptron is alpha = 2 at every N; the whole pipeline
    # (nested instances, bisection, interpolated crossing, bootstrap) must reproduce it
    N = 5
    f = tcm.storage_fraction_exact(np.arange(5, 21) / N, K=1, N=N, n_instances=300, seed=1, progress=False)
    r = tcm.fifty_percent_point(f.P, f.status, N, n_boot=500)
    assert abs(r["alpha_50"] - 2.0) < 3 * r["stderr"] + 0.02, r


@pytest.mark.slow
def test_answers_do_not_depend_on_the_weight_bound():
    # homogeneity: B only sets the smallest normalized margin 1/B that the MILP can see;
    # near the 50 % point B = 1e4 and B = 1e5 must give identical answers
    rng = np.random.default_rng(77)
    n_true = 0
    for _ in range(30):
        xi = rng.standard_normal((19, 9))
        sigma = rng.choice([-1.0, 1.0], size=19)
        a = tcm.storable_exact(xi, sigma, 3, try_least_action=False, weight_bound=1e4)
        b = tcm.storable_exact(xi, sigma, 3, try_least_action=False, weight_bound=1e5)
        assert a.stored is b.stored
        n_true += bool(a.stored)
    assert 3 <= n_true <= 27
