"""Mean-field activations (channel model, ESP/Swish), ESP pair moments, small-network Hessians."""
import math
import mpmath as mp
import numba
import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from statmech import activations as A
from statmech.saddle import jacobian_fd
from statmech.simulate import small_networks as sn


# ------------------------------------------------------------------ symbolic derivation
def _spec(name):
    return A._K.specs()[name].exprs


def _syms():
    return sp.Symbol("h", real=True), sp.Symbol("beta", real=True)


def _exp(e):
    return e.rewrite(sp.exp)


def test_channel_equations_are_gibbs_averages():
    h, b = _syms()
    Z = sum(sp.exp(b * s * h) for s in (0, 1))
    avg = lambda f: sum(f(s) * sp.exp(b * s * h) for s in (0, 1)) / Z  # noqa: E731
    assert sp.simplify(_exp(_spec("log_partition")) - sp.log(Z)) == 0
    assert sp.simplify(_exp(_spec("gate")) - avg(lambda s: s)) == 0            # <s>
    assert sp.simplify(_exp(_spec("esp")) - avg(lambda s: h * s)) == 0         # <j> = <h s>
    # <j> = d log Z / d beta, and the variance of j is the second derivative
    assert sp.simplify(_exp(_spec("esp")) - sp.diff(sp.log(Z), b)) == 0
    var = avg(lambda s: (h * s) ** 2) - avg(lambda s: h * s) ** 2
    assert sp.simplify(_exp(_spec("esp_variance")) - var) == 0


def test_backprop_factor_matches_seed_form_and_even_part():
    h, b = _syms()
    sig = lambda x: 1 / (1 + sp.exp(-x))  # noqa: E731
    seed_g = sig(b * h) * (1 + b * h * sig(-b * h))
    assert sp.simplify(_exp(_spec("esp_derivative")) - seed_g) == 0
    even = _spec("even")
    assert sp.simplify(_exp(_spec("esp") - h / 2 - even)) == 0


def test_limits_symbolic():
    b = sp.Symbol("beta", positive=True)
    hp = sp.Symbol("h", positive=True)
    hn = sp.Symbol("h", negative=True)
    h, b0 = _syms()
    esp_e = _exp(_spec("esp"))
    g_e = _exp(_spec("esp_derivative"))
    assert sp.limit(esp_e.subs({h: hp, b0: b}), b, sp.oo) == hp        # ReLU for h > 0
    assert sp.limit(esp_e.subs({h: hn, b0: b}), b, sp.oo) == 0         # ReLU for h < 0
    assert sp.limit(esp_e.subs({b0: b}), b, 0) == h / 2                # linear
    assert sp.limit(g_e.subs({h: hp, b0: b}), b, sp.oo) == 1
    assert sp.limit(g_e.subs({h: hn, b0: b}), b, sp.oo) == 0
    assert sp.limit(g_e.subs({b0: b}), b, 0) == sp.Rational(1, 2)


# ------------------------------------------------------------------ numerics
H_GRID = np.array([-1e4, -745.0, -300.0, -40.0, -3.0, -0.5, -1e-9, 0.0, 1e-9, 0.5, 3.0, 40.0, 300.0, 745.0, 1e4])


def _mp_ref(h, b):
    mp.mp.dps = 40
    h, b = mp.mpf(h), mp.mpf(b)
    s = 1 / (1 + mp.exp(-b * h))
    sm = 1 / (1 + mp.exp(b * h))
    return {"gate": s, "esp": h * s, "esp_derivative": s * (1 + b * h * sm), "log_partition": mp.log1p(mp.exp(b * h))}


@pytest.mark.parametrize("beta", [0.0, 1e-3, 1.0, 2.5, 40.0])
def test_kernels_match_mpmath_everywhere(beta):
    fns = {"gate": A.gate_expectation, "esp": A.esp, "esp_derivative": A.esp_derivative,
           "log_partition": A.log_partition}
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        vals = {k: f(H_GRID, beta) for k, f in fns.items()}
    for i, h in enumerate(H_GRID):
        ref = _mp_ref(h, beta)
        for k in fns:
            r = float(ref[k])
            v = vals[k][i]
            assert np.isfinite(v)
            if abs(r) < 1e-300:
                assert abs(v) <= 1e-300
            else:
                # g = sigma(bh)[1 + bh sigma(-bh)] has a zero at bh = -1.2785: absolute accuracy there
                tol_abs = 1e-16 if k == "esp_derivative" else 0.0
                assert v == pytest.approx(r, rel=4e-15, abs=tol_abs), (k, h, beta)


def test_esp_is_beta_derivative_of_log_partition_numerically():
    h = np.linspace(-4, 4, 17)
    for beta in (0.3, 1.0, 3.0):
        d = 1e-6
        fd = (A.log_partition(h, beta + d) - A.log_partition(h, beta - d)) / (2 * d)
        np.testing.assert_allclose(A.esp(h, beta), fd, rtol=1e-8, atol=1e-9)
        fdh = (A.log_partition(h + d, beta) - A.log_partition(h - d, beta)) / (2 * d) / beta
        np.testing.assert_allclose(A.gate_expectation(h, beta), fdh, rtol=1e-8, atol=1e-9)
        fdg = (A.esp(h + d, beta) - A.esp(h - d, beta)) / (2 * d)
        np.testing.assert_allclose(A.esp_derivative(h, beta), fdg, rtol=1e-8, atol=1e-9)
        fdv = (A.esp(h, beta + d) - A.esp(h, beta - d)) / (2 * d)
        np.testing.assert_allclose(A.esp_variance(h, beta), fdv, rtol=1e-7, atol=1e-9)


def test_limits_numerically():
    h = np.linspace(-3, 3, 13)
    np.testing.assert_array_equal(A.esp(h, math.inf), np.maximum(h, 0))
    np.testing.assert_allclose(A.esp(h, 1e9), np.maximum(h, 0), atol=1e-9)
    np.testing.assert_allclose(A.esp(h, 1e-9), h / 2, atol=1e-9)
    assert A.esp(2.0, 0.0) == 1.0 and A.esp_derivative(-7.0, 0.0) == 0.5
    np.testing.assert_array_equal(A.esp_derivative([-1.0, 0.0, 2.0], math.inf), [0.0, 0.5, 1.0])
    assert A.log_partition(0.0, math.inf) == pytest.approx(math.log(2))
    np.testing.assert_allclose(A.partition_function([-2.0, 0.0, 1.0], 0.7), 1 + np.exp(0.7 * np.array([-2.0, 0.0, 1.0])),
                               rtol=1e-15)
    assert A.partition_function(1e4, 1.0) == math.inf


def test_swish_minimum_constants():
    for beta in (0.5, 2.0):
        x = A.SWISH_MIN_X / beta
        assert abs(A.esp_derivative(x, beta)) < 1e-15
        assert A.esp(x, beta) * beta == pytest.approx(A.SWISH_MIN_VALUE, rel=1e-15)
    assert A.SWISH_MIN_VALUE == pytest.approx(-float(mp.lambertw(1 / mp.e)), rel=1e-15)


@settings(max_examples=60, deadline=None)
@given(st.floats(-1e3, 1e3), st.floats(0, 1e3))
def test_properties(h, beta):
    e_p, e_m = A.esp(h, beta), A.esp(-h, beta)
    assert e_p - e_m == pytest.approx(h, rel=1e-14, abs=1e-300)      # odd part is h/2 exactly
    s = A.gate_expectation(h, beta)
    assert 0.0 <= s <= 1.0
    assert s + A.gate_expectation(-h, beta) == pytest.approx(1.0, rel=1e-15)
    if beta > 0:
        assert e_p * beta >= A.SWISH_MIN_VALUE - 1e-14


def test_numba_callable():
    esp_nb = A.esp_nb
    g_nb = A.esp_derivative_nb

    @numba.njit
    def total(hs, beta):
        s = 0.0
        for x in hs:
            s += esp_nb(x, beta) + g_nb(x, beta)
        return s
    hs = np.linspace(-50, 50, 101)
    assert total(hs, 1.5) == pytest.approx(float(np.sum(A.esp(hs, 1.5) + A.esp_derivative(hs, 1.5))), rel=1e-14)


def test_validation():
    with pytest.raises(ValueError, match="beta must be >= 0"):
        A.esp(1.0, -1.0)
    with pytest.raises(ValueError, match="h must be finite"):
        A.esp(float("nan"), 1.0)
    with pytest.raises(ValueError, match="beta"):
        A.ESP(beta=float("nan"))
    with pytest.raises(ValueError, match="rho must be in"):
        A.ESP(1.0).pair_moment(1.5)


# ------------------------------------------------------------------ ESP pair moments
def _mp_pair(beta, rho, deriv=0):
    mp.mp.dps = 18
    b = mp.mpf(beta)
    if deriv == 0:
        g = lambda x: x / (1 + mp.exp(-b * x))  # noqa: E731
    else:
        g = lambda x: (1 + mp.exp(-b * x) * (1 + b * x)) / (1 + mp.exp(-b * x)) ** 2  # noqa: E731
    s = mp.sqrt(1 - mp.mpf(rho) ** 2)
    f = lambda x, y: g(x) * g(rho * x + s * y) * mp.npdf(x) * mp.npdf(y)  # noqa: E731
    return float(mp.quad(f, [-mp.inf, 0, mp.inf], [-mp.inf, 0, mp.inf]))


def test_pair_moment_vs_gauss_hermite():
    # independent brute force: 2-d Gauss-Hermite (converges fast for small beta: poles at +-i pi/beta)
    from statmech.gaussian import gauss_hermite
    z, w = gauss_hermite(160)
    for beta, rho in ((0.5, 0.6), (0.8, -0.7), (0.3, 0.99)):
        v = rho * z[:, None] + math.sqrt(1 - rho * rho) * z[None, :]
        ref = float(w @ (A.esp(z, beta)[:, None] * A.esp(v, beta)) @ w)
        assert A.ESP(beta).pair_moment(rho) == pytest.approx(ref, rel=1e-13)


@pytest.mark.slow
def test_pair_moment_vs_mpmath():
    assert A.ESP(2.0).pair_moment(0.6) == pytest.approx(_mp_pair(2.0, 0.6), rel=1e-13)


@pytest.mark.slow
@pytest.mark.parametrize("beta,rho", [(0.5, -0.8), (5.0, 0.3), (20.0, 0.95), (5.0, -0.99)])
def test_pair_moment_vs_mpmath_slow(beta, rho):
    assert A.ESP(beta).pair_moment(rho) == pytest.approx(_mp_pair(beta, rho), rel=1e-12, abs=1e-15)
    assert A.ESP(beta).pair_moment(rho, order=1) == pytest.approx(_mp_pair(beta, rho, 1), rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("beta", [0.3, 3.0, 60.0])
def test_pair_moment_identities(beta):
    e = A.ESP(beta)
    rho = np.array([-0.9, -0.4, 0.0, 0.4, 0.9])
    m = e.pair_moment(rho)
    assert m[2] == pytest.approx(e.mean() ** 2, rel=1e-13)               # independent units
    np.testing.assert_allclose(m - rho / 4, (m - rho / 4)[::-1], rtol=1e-13, atol=1e-16)  # even part
    # m(1) = E[g^2] by 1-d quadrature
    from statmech.gaussian import expect_piecewise
    eg2 = float(expect_piecewise(lambda z: A.esp(z, beta) ** 2, [0.0], level=7))
    assert e.pair_moment(1.0) == pytest.approx(eg2, rel=1e-13)
    # Price's theorem: d m/d rho = E[g'(u) g'(v)], d^2 m / d rho^2 = E[g'' g'']
    d = 1e-5
    for r in (-0.5, 0.2, 0.7):
        fd1 = (e.pair_moment(r + d) - e.pair_moment(r - d)) / (2 * d)
        assert e.pair_moment(r, order=1) == pytest.approx(fd1, rel=1e-8)
        fd2 = (e.pair_moment(r + d, order=1) - e.pair_moment(r - d, order=1)) / (2 * d)
        assert e.pair_moment(r, order=2) == pytest.approx(fd2, rel=1e-7)


def test_pair_moment_limits():
    rho = np.array([-0.95, -0.3, 0.2, 0.8, 1.0])
    np.testing.assert_array_equal(A.ESP(math.inf).pair_moment(rho), A.relu_pair_moment(rho))
    # beta -> inf: corrections O(beta^-2)
    big = A.ESP(1e4).pair_moment(rho)
    np.testing.assert_allclose(big, A.relu_pair_moment(rho), atol=1e-7)
    assert A.ESP(1e4).mean() == pytest.approx(1 / math.sqrt(2 * math.pi), rel=1e-7)
    # beta -> 0: g = x/2 + beta x^2/4 + ..., m = rho/4 + beta^2 (1 + 2 rho^2)/16 + O(beta^4)
    b = 1e-3
    np.testing.assert_allclose(A.ESP(b).pair_moment(rho), rho / 4 + b * b * (1 + 2 * rho ** 2) / 16, rtol=0, atol=1e-12)
    # relu closed form derivative consistency
    d = 1e-6
    fd = (A.relu_pair_moment(0.3 + d) - A.relu_pair_moment(0.3 - d)) / (2 * d)
    assert A.relu_pair_moment(0.3, 1) == pytest.approx(fd, rel=1e-9)


# ------------------------------------------------------------------ small networks
@pytest.mark.parametrize("activation", sn.ACTIVATIONS)
@pytest.mark.parametrize("hidden", [(10,), (8, 2)])
def test_exact_gradient_and_hessian_vs_finite_differences(activation, hidden):
    task = sn.nonlinear_task(40, seed=2)
    net = sn.Network((2,) + hidden + (1,), activation, 1.3)
    th = net.init(1) + 0.1 * np.random.default_rng(0).standard_normal(net.n_params)
    L, g = net.loss_and_grad(th, task)
    assert L == pytest.approx(net.loss(th, task), rel=1e-15)
    gfd = jacobian_fd(lambda x: np.array([net.loss(x, task)]), th)[0]
    np.testing.assert_allclose(g, gfd, atol=2e-9)
    Hm = net.hessian(th, task)
    Hfd = jacobian_fd(lambda x: net.loss_and_grad(x, task)[1], th)
    np.testing.assert_allclose(Hm, Hfd, atol=5e-9)
    np.testing.assert_allclose(Hm, Hm.T, atol=1e-15)
    # block size must not matter
    np.testing.assert_allclose(net.hessian(th, task, block=7), Hm, atol=1e-15)


def test_softmax_output_hessian():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((30, 5))
    Y = np.eye(3)[rng.integers(0, 3, 30)]
    task = sn.Task("toy", X, Y)
    net = sn.Network((5, 4, 3), "esp_trainable", 0.7)
    th = net.init(2)
    Hm = net.hessian(th, task)
    Hfd = jacobian_fd(lambda x: net.loss_and_grad(x, task)[1], th)
    np.testing.assert_allclose(Hm, Hfd, atol=5e-9)


def test_tasks_reproducible_and_as_specified():
    a, b = sn.linear_task(), sn.linear_task()
    assert a.m == 51 and np.array_equal(a.X, b.X) and np.array_equal(a.Y, b.Y)
    assert sn.nonlinear_task().m == 863 and sn.nonlinear_task().d == 2
    assert not np.array_equal(sn.linear_task(seed=1).X, a.X)
    # separable: a logistic-regression-free check, labels are given by the line with margin
    w = np.array([-0.6, 1.0]) / math.hypot(0.6, 1.0)
    marg = (a.X @ w - 0.1 / math.hypot(0.6, 1.0)) * (2 * a.Y[:, 0] - 1)
    assert marg.min() > 0.05
    y = sn.nonlinear_task().Y[:, 0]
    assert 0.45 < y.mean() < 0.55


def test_hessian_indices():
    lam = np.array([-2.0, -1e-9, 0.0, 1e-7, 0.5, 3.0])
    al, ga = sn.hessian_indices(lam, zero_tol=1e-5)
    assert al == pytest.approx(1 / 6) and ga == pytest.approx(3 / 6)


def test_training_decreases_loss_and_reports_indices():
    run = sn.train_network(sn.linear_task(), (10,), "esp_trainable", epochs=300, n_checkpoints=5)
    assert run.loss[-1] < 0.5 * run.loss[0]
    assert run.accuracy[-1] == 1.0
    assert run.eigenvalues.shape == (len(run.checkpoints), run.n_params) and run.n_params == 51
    assert np.all((run.alpha_index >= 0) & (run.alpha_index + run.gamma_index <= 1))
    assert run.betas.shape == (len(run.checkpoints), 10) and not np.allclose(run.betas[-1], 1.0)


def test_relu_dead_units_give_zero_eigenvalues():
    task = sn.linear_task()
    net = sn.Network((2, 3, 1), "relu")
    th = net.init(0)
    W = net.unpack(th)[0]
    W["W"][:, 0] = 0.0
    W["b"][0] = -1.0                     # unit 0 is dead on every example
    lam = np.linalg.eigvalsh(net.hessian(th, task))
    _, ga = sn.hessian_indices(lam)
    assert ga >= 4 / net.n_params          # its 2 weights, bias and outgoing weight are flat


def test_digits_task_if_available():
    pytest.importorskip("sklearn")
    t = sn.digits_task()
    assert t.X.shape == (1797, 64) and t.n_out == 10 and t.X.max() == 1.0


# ------------------------------------------------------------------ CLI
def test_cli_eval_and_bad_argument(capsys):
    import json
    from statmech.cli import main
    assert main(["activations", "eval", "--h", "1.5", "-2", "--beta", "2", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["esp"][0] == pytest.approx(float(A.esp(1.5, 2.0)), rel=1e-15)
    assert d["gate"][1] == pytest.approx(float(A.gate_expectation(-2.0, 2.0)), rel=1e-15)
    assert main(["activations", "pair", "--rho", "0.5", "--beta", "inf", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["pair_moment"][0] == pytest.approx(float(A.relu_pair_moment(0.5)), rel=1e-15)
    assert main(["activations", "eval", "--h", "1", "--beta", "-1"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "beta" in err


# ------------------------------------------------------------------ SCM with ESP units
def test_esp_is_accepted_by_scm_and_reduces_to_relu():
    scm = pytest.importorskip("statmech.scm")
    R = np.array([[0.6, 0.1], [0.2, 0.5]])
    Q = np.array([[1.0, 0.3], [0.3, 1.0]])
    T = np.eye(2)
    e_relu = scm.generalization_error(R, Q, T, "relu")
    e_big = scm.generalization_error(R, Q, T, A.ESP(1e4))
    assert e_big == pytest.approx(e_relu, abs=2e-7)          # O(beta^-2) corrections
    # the pair moment scm uses is the ESP one (interior accuracy of its interpolant)
    rho = np.array([-0.5, 0.1, 0.7])
    np.testing.assert_allclose(scm.pair_moment(rho, A.ESP(2.0)), A.ESP(2.0).pair_moment(rho), atol=1e-13)


@pytest.mark.slow
def test_scm_esp_transition_approaches_relu():
    scm = pytest.importorskip("statmech.scm")
    relu = scm.transitions(2, activation="relu").alpha_c
    assert relu == pytest.approx(6.0940738933, abs=1e-9)
    r = A.scm_transitions(2, [1.0, 3.0, 100.0, 300.0, math.inf])
    assert np.all(r.order[:-1] == 2)
    assert r.alpha_c[0] == pytest.approx(8.623081883, rel=1e-7)
    assert r.alpha_c[1] < 5.4                                  # earlier than ReLU at intermediate noise
    gaps = relu - r.alpha_c[2:4]
    assert 0 < gaps[1] < gaps[0] < 3e-3                         # monotone approach from below ...
    assert gaps[0] * 100.0 ** 2 == pytest.approx(gaps[1] * 300.0 ** 2, rel=1e-2)   # ... as beta^-2
    # ESP(inf) through the generic (interpolated) path of statmech.scm reproduces the closed forms
    assert scm.transitions(2, activation=A.ESP(math.inf)).alpha_c == pytest.approx(relu, rel=1e-9)
    assert r.alpha_c[-1] == relu


@pytest.mark.slow
def test_scm_esp_small_beta_scaling():
    r = A.scm_transitions(2, [0.1, 0.2])
    ab2 = r.alpha_c * r.beta ** 2
    assert np.all((ab2 > 4.0) & (ab2 < 4.3)) and ab2[0] < ab2[1]   # alpha_c ~ 4/beta^2 as beta -> 0


@pytest.mark.slow
@pytest.mark.parametrize("alpha", [3.0, 9.0])
def test_scm_esp_theory_vs_monte_carlo(alpha):
    """Gibbs Monte Carlo at N = 400 (statmech.simulate.scm_mc) vs the saddle point, ESP(3), K = 2."""
    scm = pytest.importorskip("statmech.scm")
    from statmech.simulate.scm_mc import gibbs_scm
    act = A.ESP(3.0)
    eq = scm.equilibria(alpha, 2, activation=act)[0]
    s = gibbs_scm(alpha, 2, activation=act, N=400, n_chains=8, n_sweeps=200, n_burn=80, seed=1)
    Rt, St = max(eq.R, eq.S), min(eq.R, eq.S)                  # K = 2: R > S and R < S are the same state
    tol = lambda err: 5 * err + 4e-3                           # noqa: E731  (statistics + O(1/N))
    assert abs(s.R - Rt) < tol(s.R_err) and abs(s.S - St) < tol(s.S_err)
    assert abs(s.C - eq.C) < tol(s.C_err)
    assert abs(s.generalization_error - eq.generalization_error) < 5 * s.generalization_error_err + 5e-4


def test_channel_values_result():
    h = np.array([-3.0, -0.5, 0.0, 0.7, 4.0])
    r = A.channel_values(h, 2.0)
    assert r.converged and r.error == 0.0 and r.ansatz == "-"
    assert np.array_equal(r.esp, A.esp(h, 2.0)) and np.array_equal(r.gate, A.gate_expectation(h, 2.0))
    # the definitions: <j> = h <s>, log Z = softplus(beta h)
    assert np.allclose(r.esp, h * r.gate, rtol=1e-15, atol=0) and np.allclose(r.log_partition, np.logaddexp(0, 2 * h))
    relu = A.channel_values(h, math.inf)
    assert np.array_equal(relu.esp, np.maximum(h, 0.0)) and np.isinf(relu.log_partition[-1])
    with pytest.raises(ValueError, match="beta"):
        A.channel_values(h, [1.0, 2.0])


def test_esp_pair_moment_point_carries_its_quadrature_error():
    rho = np.array([-0.9, 0.0, 0.5, 1.0])
    r = A.esp_pair_moment_point(rho, 2.0)
    assert np.array_equal(r.pair_moment, A.ESP(2.0).pair_moment(rho))
    assert 0.0 <= r.error < 1e-13 and r.iterations == 5
    # rho = 1: E[g(z)^2] by mpmath, beta = 2
    m2 = mp.quad(lambda z: (z / (1 + mp.e ** (-2 * z))) ** 2 * mp.npdf(z), [-mp.inf, 0, mp.inf])
    assert abs(r.pair_moment[-1] - float(m2)) < 1e-14 + r.error
    # closed forms at beta = 0 (x/2) and beta = inf (ReLU) are exact
    lin = A.esp_pair_moment_point(rho, 0.0)
    assert lin.error == 0.0 and np.allclose(lin.pair_moment, rho / 4, rtol=0, atol=1e-16)
    relu = A.esp_pair_moment_point(rho, math.inf, order=1)
    assert relu.error == 0.0 and np.array_equal(relu.pair_moment, A.relu_pair_moment(rho, 1))
    with pytest.raises(ValueError, match="level"):
        A.esp_pair_moment_point(rho, 2.0, level=3)
