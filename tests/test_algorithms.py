"""Learning algorithms (Tartaglione 2019, PhD thesis, ch. 2-3): stochastic perceptron, classic rules, Metropolis SA, TCM paths.

Known answers: teacher-generated (hence solvable) instances, tiny instances checked by
exhaustive enumeration, the minimum-norm interpolant of ADALINE, the clipped-Hebb teacher
overlap erf(sqrt(alpha/pi)), exact limits of the loss (Eqs. 2.60, 2.61), and finite
differences for every gradient and Hessian.  Success-rate statistics at N = 1001 are slow.
"""
import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import special

from statmech import simulate
from statmech.simulate import algorithms as A
from statmech.simulate import tcm_paths as T


# --------------------------------------------------------------------------- helpers
def enumerate_errors(X, y):
    """Training errors of every binary weight vector (2^N of them), by brute force."""
    N = X.shape[1]
    W = np.array(list(itertools.product([-1, 1], repeat=N)), dtype=np.int64)
    stab = (W @ X.T.astype(np.int64)) * y.astype(np.int64)[None, :]
    return W, (stab <= 0).sum(axis=1)


def fd_grad(f, x, h=1e-6):
    g = np.empty_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e.flat[i] = h
        g.flat[i] = (f(x + e) - f(x - e)) / (2 * h)
    return g


# --------------------------------------------------------------------------- loss Eq. 2.59
def test_sp_loss_value_and_gradient_match_finite_differences(rng):
    X = rng.choice([-1.0, 1.0], size=(9, 15))
    y = rng.choice([-1.0, 1.0], size=9)
    m = rng.uniform(-0.9, 0.9, 15)
    for gamma in (0.3, 1.0, 4.0):
        L, g = A.stochastic_perceptron_loss(m, X, y, gamma)
        a = X @ m
        V = (1 - m * m).sum()
        ref = -np.mean(special.log_ndtr(y * a / np.sqrt(gamma * V)))
        assert L == pytest.approx(ref, rel=1e-13)
        gfd = fd_grad(lambda mm: A.stochastic_perceptron_loss(mm, X, y, gamma)[0], m)
        assert np.allclose(g, gfd, rtol=1e-6, atol=1e-9)


def test_sp_loss_real_patterns_gradient(rng):
    X = rng.standard_normal((6, 11))  # Eq. 2.49 with general (xi_i)^2
    y = rng.choice([-1.0, 1.0], size=6)
    m = rng.uniform(-0.8, 0.8, 11)
    L, g = A.stochastic_perceptron_loss(m, X, y, 0.7)
    V = (X * X) @ (1 - m * m)
    assert L == pytest.approx(-np.mean(special.log_ndtr(y * (X @ m) / np.sqrt(0.7 * V))), rel=1e-13)
    assert np.allclose(g, fd_grad(lambda mm: A.stochastic_perceptron_loss(mm, X, y, 0.7)[0], m), rtol=1e-6, atol=1e-9)


def test_sp_loss_limits_eqs_2_60_2_61(rng):
    X = rng.choice([-1.0, 1.0], size=(20, 31))
    y = rng.choice([-1.0, 1.0], size=20)
    m = rng.uniform(-0.5, 0.5, 31)
    # gamma -> infinity: every pattern is a coin flip, L -> log 2 (Eq. 2.61)
    assert A.stochastic_perceptron_loss(m, X, y, 1e12)[0] == pytest.approx(math.log(2), abs=1e-6)
    # gamma -> 0: zero loss on patterns classified by m, divergent loss on the others (Eq. 2.60)
    ok = y * (X @ m) > 0
    l_ok = A.stochastic_perceptron_loss(m, X[ok], y[ok], 1e-6)[0]
    l_bad = A.stochastic_perceptron_loss(m, X[~ok], y[~ok], 1e-6)[0]
    assert l_ok < 1e-12 and l_bad > 1e3 and np.isfinite(l_bad)


def test_sp_loss_gauge_and_label_symmetry(rng):
    X = rng.choice([-1.0, 1.0], size=(7, 13))
    y = rng.choice([-1.0, 1.0], size=7)
    m = rng.uniform(-0.9, 0.9, 13)
    L = A.stochastic_perceptron_loss(m, X, y)[0]
    assert A.stochastic_perceptron_loss(-m, X, -y)[0] == pytest.approx(L, rel=1e-14)
    s = rng.choice([-1.0, 1.0], size=13)  # gauge xi_i -> s_i xi_i, m_i -> s_i m_i
    assert A.stochastic_perceptron_loss(s * m, X * s, y)[0] == pytest.approx(L, rel=1e-13)


def test_sp_clt_probability_matches_sampling(rng):
    """H(-sigma a/sqrt(V)) (Eq. 2.49) is the probability that w ~ Q_m (Eq. 2.46) classifies xi."""
    N = 201
    m = rng.uniform(-0.6, 0.6, N)
    xi = rng.choice([-1.0, 1.0], size=N)
    a, V = xi @ m, (1 - m * m).sum()
    w = np.where(rng.random((40000, N)) < (1 + m) / 2, 1.0, -1.0)
    p_mc = np.mean(w @ xi > 0)
    p_clt = special.ndtr(a / math.sqrt(V))
    assert abs(p_mc - p_clt) < 4 * math.sqrt(p_clt * (1 - p_clt) / 40000) + 0.01  # CLT error O(1/sqrt N)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10**6), st.floats(0.05, 20.0))
def test_sp_loss_gradient_property(seed, gamma):
    r = np.random.default_rng(seed)
    X = r.choice([-1.0, 1.0], size=(5, 9))
    y = r.choice([-1.0, 1.0], size=5)
    m = r.uniform(-0.95, 0.95, 9)
    L, g = A.stochastic_perceptron_loss(m, X, y, gamma)
    assert np.isfinite(L) and L > 0
    assert np.allclose(g, fd_grad(lambda mm: A.stochastic_perceptron_loss(mm, X, y, gamma)[0], m, 1e-7),
                       rtol=1e-5, atol=1e-7)


# --------------------------------------------------------------------------- stochastic perceptron
def test_sp_solves_teacher_instances():
    for s in range(3):
        X, y, Tt = A.random_binary_instance(201, 0.5, seed=s, teacher=True)
        r = A.stochastic_perceptron(X, y, seed=s, max_epochs=2000)
        assert r.solved and r.errors == 0 and r.extra["status"] == "solved"
        assert A.training_errors(r.weights, X, y) == 0
        assert set(np.unique(r.weights)) <= {-1, 1}


def test_sp_solves_random_storage_instances_at_alpha_04():
    for s in range(3):
        X, y, _ = A.random_binary_instance(301, 0.4, seed=100 + s)
        r = A.stochastic_perceptron(X, y, seed=s, max_epochs=2000)
        assert r.solved and A.training_errors(r.weights, X, y) == 0


def test_sp_history_is_consistent(rng):
    X, y, _ = A.random_binary_instance(151, 0.5, seed=3)
    r = A.stochastic_perceptron(X, y, seed=1, max_epochs=300, gamma0=2.0, gamma_end=0.5, gamma_rate=0.9)
    h = r.history
    assert len(h["q_star"]) == r.epochs == len(h["errors"]) == len(h["gamma"])
    assert h["errors"][-1] == r.errors == A.training_errors(r.weights, X, y)
    assert h["q_star"][-1] == pytest.approx(np.mean(r.m ** 2), rel=1e-12)
    assert np.all((h["q_star"] >= 0) & (h["q_star"] <= 1)) and np.all(np.abs(r.m) <= 1)
    g = 0.5 + 1.5 * 0.9 ** np.arange(r.epochs)
    assert np.allclose(h["gamma"], g, rtol=1e-12)
    assert np.all(np.isfinite(h["loss"])) and np.all(h["loss"] > 0)


def test_sp_reproducible_from_seed():
    X, y, _ = A.random_binary_instance(101, 0.6, seed=7)
    r1 = A.stochastic_perceptron(X, y, seed=11, max_epochs=50)
    r2 = A.stochastic_perceptron(X, y, seed=11, max_epochs=50)
    r3 = A.stochastic_perceptron(X, y, seed=12, max_epochs=50)
    assert np.array_equal(r1.m, r2.m) and np.array_equal(r1.history["loss"], r2.history["loss"])
    assert not np.array_equal(r1.m, r3.m)
    X2, y2, _ = A.random_binary_instance(101, 0.6, seed=7)
    assert np.array_equal(X, X2) and np.array_equal(y, y2)


def test_sp_tiny_instances_against_enumeration():
    N = 11
    solvable_seen = unsolvable_seen = 0
    for s in range(12):
        X, y, _ = A.random_binary_instance(N, 0.6 if s % 2 else 2.5, seed=500 + s)
        W, errs = enumerate_errors(X, y)
        r = A.stochastic_perceptron(X, y, seed=s, max_epochs=300)
        e = A.training_errors(r.weights, X, y)
        assert r.errors == e >= errs.min()
        if r.solved:  # a claimed solution is one of the enumerated solutions
            assert errs[np.all(W == r.weights.astype(np.int64), axis=1)][0] == 0
        if errs.min() > 0:
            unsolvable_seen += 1
            assert not r.solved
        elif s % 2:
            solvable_seen += 1
            assert r.solved  # at alpha = 0.6 with N = 11 the solution space is large
    assert solvable_seen >= 3 and unsolvable_seen >= 3


def test_sp_input_validation():
    X, y, _ = A.random_binary_instance(11, 0.5, seed=0)
    with pytest.raises(ValueError, match="labels"):
        A.stochastic_perceptron(X, np.zeros(len(y)))
    with pytest.raises(ValueError, match="gamma0"):
        A.stochastic_perceptron(X, y, gamma0=0.0)
    with pytest.raises(ValueError, match="gamma_rate"):
        A.stochastic_perceptron(X, y, gamma_rate=1.5)
    with pytest.raises(ValueError, match="eta"):
        A.stochastic_perceptron(X, y, eta=-1.0)
    with pytest.raises(ValueError, match="m0"):
        A.stochastic_perceptron(X, y, m0=np.full(11, 2.0))
    with pytest.raises(ValueError, match="N must be an odd"):
        A.random_binary_instance(10, 0.5)
    with pytest.raises(ValueError, match="alpha"):
        A.random_binary_instance(11, -0.5)
    with pytest.raises(ValueError, match="patterns"):
        A.stochastic_perceptron(np.ones(5), [1])


def test_simulate_package_reexports():
    assert simulate.stochastic_perceptron is A.stochastic_perceptron
    assert simulate.tcm_path is T.tcm_path


# --------------------------------------------------------------------------- classic rules
def test_perceptron_rule_converges_on_separable_data_and_not_beyond_cover():
    X, y, _ = A.random_binary_instance(101, 1.5, seed=1, teacher=True)
    r = A.perceptron_rule(X, y, seed=0, max_epochs=2000)
    assert r.solved and A.training_errors(r.weights, X, y) == 0
    # P = 6N random labels is far beyond the capacity 2N (Cover): never separable
    X, y, _ = A.random_binary_instance(21, 6.0, seed=2)
    r = A.perceptron_rule(X, y, seed=0, max_epochs=50)
    assert not r.solved and r.errors == A.training_errors(r.weights, X, y) > 0


def test_perceptron_rule_margin():
    X, y, _ = A.random_binary_instance(101, 0.5, seed=4)
    r = A.perceptron_rule(X, y, seed=0, kappa=0.3, max_epochs=3000)
    stab = y * (X @ r.weights) / np.linalg.norm(r.weights)
    assert r.solved and stab.min() > 0  # kappa is a margin on the unnormalized field


def test_delta_rule_linear_converges_to_min_norm_interpolant():
    X, y, _ = A.random_binary_instance(61, 0.5, seed=3)
    r = A.delta_rule(X, y, seed=0, eta=0.2, activation="linear", stop_when_solved=False, max_epochs=3000)
    Xf = X.astype(float)
    w_star = math.sqrt(61) * Xf.T @ np.linalg.solve(Xf @ Xf.T, y.astype(float))
    assert np.max(np.abs(r.weights - w_star)) < 1e-8
    assert r.solved


def test_delta_rule_tanh_solves_teacher():
    X, y, _ = A.random_binary_instance(101, 1.0, seed=5, teacher=True)
    r = A.delta_rule(X, y, seed=0, eta=0.1, max_epochs=2000)
    assert r.solved and A.training_errors(r.weights, X, y) == 0
    assert np.all(np.diff(r.history["loss"][:20]) < 0.05)


def test_clipped_hebb_teacher_overlap():
    """Each w_i agrees with T_i with probability Phi(sqrt(2 alpha/pi)): R = erf(sqrt(alpha/pi))."""
    N, alpha = 2001, 1.0
    R = []
    for s in range(4):
        X, y, Tt = A.random_binary_instance(N, alpha, seed=40 + s, teacher=True)
        R.append(A.clipped_hebb(X, y).weights.astype(np.int64) @ Tt / N)
    R_th = math.erf(math.sqrt(alpha / math.pi))
    sd = math.sqrt((1 - R_th ** 2) / N / len(R))
    assert abs(np.mean(R) - R_th) < 4 * sd + 2.0 / N


def test_metropolis_reaches_enumerated_ground_state():
    for s in range(3):
        X, y, _ = A.random_binary_instance(11, 2.0, seed=900 + s)
        _, errs = enumerate_errors(X, y)
        r = A.metropolis_annealing(X, y, seed=s, beta0=0.3, beta1=8.0, sweeps=400)
        assert A.training_errors(r.weights, X, y) == r.errors
        assert r.errors == errs.min() == min(r.history["energy"].min(), r.errors)
    X, y, _ = A.random_binary_instance(61, 0.5, seed=3, teacher=True)
    r = A.metropolis_annealing(X, y, seed=0, sweeps=2000)
    assert r.solved and A.training_errors(r.weights, X, y) == 0


# --------------------------------------------------------------------------- tree committee machine
def test_tcm_gradient_and_exact_hessian_match_finite_differences(rng):
    K, N = 3, 15
    d = T.tcm_instance(N, K, 1.0, seed=1)
    W = rng.standard_normal((K, N // K))
    for lam in (1.0, 2.5):
        L, g = T.tcm_loss(W, d["patterns"], d["labels"], K, lam)
        assert np.allclose(g, fd_grad(lambda w: T.tcm_loss(w, d["patterns"], d["labels"], K, lam)[0], W),
                           rtol=1e-6, atol=1e-9)
        Hm = T.tcm_hessian(W, d["patterns"], d["labels"], K, lam)
        Hfd = np.array([fd_grad(lambda w: T.tcm_loss(w, d["patterns"], d["labels"], K, lam)[1].ravel()[i], W).ravel()
                        for i in range(N)])
        assert np.allclose(Hm, Hm.T, atol=1e-14)
        assert np.allclose(Hm, Hfd, rtol=1e-5, atol=1e-8)


def test_tcm_loss_is_cross_entropy():
    d = T.tcm_instance(9, 3, 1.0, seed=2)
    W = np.ones((3, 3))
    X3 = d["patterns"].reshape(-1, 3, 3)
    z = np.tanh(np.einsum("pkn,kn->pk", X3, W) / math.sqrt(3)).sum(1)
    p = special.expit(z)
    yy = (d["labels"] + 1) / 2
    bce = -np.mean(yy * np.log(p) + (1 - yy) * np.log(1 - p))
    assert T.tcm_loss(W, d["patterns"], d["labels"], 3)[0] == pytest.approx(bce, rel=1e-13)


def test_tcm_K1_is_the_perceptron(rng):
    X, y, _ = A.random_binary_instance(21, 1.0, seed=3)
    w = rng.standard_normal(21)
    assert T.tcm_errors(w[None, :], X, y, 1) == A.training_errors(w, X, y)


def test_tcm_training_methods_and_reproducibility():
    d = T.tcm_instance(45, 3, 0.4, seed=3, teacher=True)
    for method in ("gd", "sgd", "easgd"):
        r = T.tcm_train(d["patterns"], d["labels"], 3, method=method, seed=1, epochs=2000)
        assert r.solved and T.tcm_errors(r.weights, d["patterns"], d["labels"], 3) == 0
    r1 = T.tcm_train(d["patterns"], d["labels"], 3, method="sgd", seed=5, epochs=3)
    r2 = T.tcm_train(d["patterns"], d["labels"], 3, method="easgd", workers=1, coupling=0.0, seed=5, epochs=3)
    assert np.array_equal(r1.weights, r2.weights)  # one uncoupled replica: EASGD is SGD


def test_tcm_easgd_replicas_collapse():
    d = T.tcm_instance(45, 3, 2.0, seed=4)
    r = T.tcm_train(d["patterns"], d["labels"], 3, method="easgd", workers=4, coupling=0.5, seed=0, epochs=5)
    assert r.epochs == 5 and not r.solved and r.errors == T.tcm_errors(r.weights, d["patterns"], d["labels"], 3)


def test_tcm_path_between_two_solutions():
    d = T.tcm_instance(45, 3, 0.5, seed=5, teacher=True, n_test=300)
    Wa = T.tcm_train(d["patterns"], d["labels"], 3, method="sgd", seed=1, epochs=2000).weights
    Wb = T.tcm_train(d["patterns"], d["labels"], 3, method="sgd", seed=2, epochs=2000).weights
    p = T.tcm_path(Wa, Wb, d["patterns"], d["labels"], 3, test_patterns=d["test_patterns"],
                   test_labels=d["test_labels"], n_hessian=3)
    assert p.line_train_errors[0] == 0 and p.line_train_errors[-1] == 0
    assert p.reached and p.t_path[0] == 0.0 and p.t_path[-1] >= 1 - 1e-3
    assert p.path_norm[-1] == pytest.approx(np.linalg.norm(Wb), rel=1e-2)
    assert p.hess_eigenvalues.shape == (3, 45)
    assert np.allclose(p.hess_eigenvalues[0], np.linalg.eigvalsh(T.tcm_hessian(Wa, d["patterns"], d["labels"], 3)))
    assert np.all(np.isfinite(p.path_test_errors))
    with pytest.raises(ValueError, match="differ"):
        T.tcm_path(Wa, Wa, d["patterns"], d["labels"], 3)


def test_tcm_input_validation():
    with pytest.raises(ValueError, match="K must be an odd"):
        T.tcm_instance(40, 4, 1.0)
    with pytest.raises(ValueError, match="multiple of K"):
        T.tcm_instance(40, 3, 1.0)
    d = T.tcm_instance(9, 3, 1.0, seed=0)
    with pytest.raises(ValueError, match="method"):
        T.tcm_train(d["patterns"], d["labels"], 3, method="adam")
    with pytest.raises(ValueError, match="coupling"):
        T.tcm_train(d["patterns"], d["labels"], 3, method="easgd", coupling=2.0)


# --------------------------------------------------------------------------- slow statistics
@pytest.mark.slow
def test_sp_success_rates_at_N1001():
    """The targets at N = 1001: alpha = 0.4 solved almost always, alpha = 0.55 most of the time, each run in seconds."""
    import time
    for alpha, need in ((0.4, 9), (0.55, 7)):
        ok, times = 0, []
        for s in range(10):
            X, y, _ = A.random_binary_instance(1001, alpha, seed=10_000 + s)
            t0 = time.perf_counter()
            r = A.stochastic_perceptron(X, y, seed=s)
            times.append(time.perf_counter() - t0)
            ok += r.solved
        assert ok >= need, (alpha, ok)
        assert np.median(times) < 10.0


@pytest.mark.slow
def test_sp_N10001_is_feasible():
    X, y, _ = A.random_binary_instance(10001, 0.4, seed=1)
    r = A.stochastic_perceptron(X, y, seed=0, max_epochs=500)
    assert r.solved


def test_algorithmic_capacity_recovers_known_threshold():
    """ML fit of P(solve) = H((alpha - alpha_c)/w) on synthetic binomial data with known alpha_c."""
    rng = np.random.default_rng(3)
    a = np.linspace(0.5, 0.8, 9)
    n = np.full(a.size, 300)
    hits = 0
    for _ in range(5):
        k = rng.binomial(n, special.ndtr(-(a - 0.66) / 0.04))
        cap = A.algorithmic_capacity(a, k, n)
        assert abs(cap.alpha_c - 0.66) < 4 * cap.stderr + 1e-3
        assert abs(cap.width - 0.04) < 4 * cap.width_stderr
        hits += cap.ci_low <= 0.66 <= cap.ci_high
    assert hits >= 2
    with pytest.raises(ValueError, match="at least one success and one failure"):
        A.algorithmic_capacity([0.5, 0.6], [3, 3], [3, 3])
    with pytest.raises(ValueError, match="successes"):
        A.algorithmic_capacity([0.5, 0.6], [4, 1], [3, 3])


def test_tcm_path_without_test_set_has_no_nan():
    d = T.tcm_instance(27, 3, 0.3, seed=8, teacher=True)
    Wa = T.tcm_train(d["patterns"], d["labels"], 3, seed=1, epochs=2000).weights
    Wb = T.tcm_train(d["patterns"], d["labels"], 3, seed=2, epochs=2000).weights
    p = T.tcm_path(Wa, Wb, d["patterns"], d["labels"], 3, n_hessian=0)
    assert p.line_test_errors is None and p.path_test_errors is None
    assert np.all(np.isfinite(p.path_train_errors)) and np.all(np.isfinite(p.path_loss))
    assert p.max_path_train_errors == 0.0  # Gamma(t) stays in the version space


def test_cli_simulate(capsys):
    import json

    from statmech.cli import main
    assert main(["simulate", "stochastic-perceptron", "--N", "101", "--alpha", "0.3", "--seed", "1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["solved"] is True and out["errors"] == 0 and out["P"] == 30 and 0 < out["q_star"] <= 1
    assert main(["simulate", "clipped-hebb", "--N", "101", "--alpha", "0.5", "--teacher", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["algorithm"] == "clipped_hebb"
    assert main(["simulate", "stochastic-perceptron", "--N", "100"]) == 2
    assert "N must be an odd" in capsys.readouterr().err
    assert main(["simulate", "stochastic-perceptron", "--gamma-rate", "2"]) == 2
    assert main(["simulate", "tcm-train", "--method", "adam"]) == 2
