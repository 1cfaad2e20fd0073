"""Tree committee at K = inf beyond RS (docs/committee.md, "K = infinity: full RSB"): output kernels,
the kernel jamming functional of the RSB core (statmech.rsb.kernel), the frozen power hinge,
RS / 1RSB / k-step / full RSB for ReLU and erf, and the sign large-K theory."""
import math

import mpmath as mp
import numpy as np
import pytest

from statmech import committee as cm
from statmech import rsb
from statmech.committee import large_k_rsb as L
from statmech.committee.large_k import _relu_inf_1rsb_point
from statmech.perceptron.spherical_rsb import JammingProblem

RS_RELU = 2 * math.pi / (math.pi - 1)
RS_ERF = 4 * math.sqrt(3) / math.pi


# --------------------------------------------------------------------------- kernels
def _gbar(activation, mu, sd):
    """E_x g(mu + sd x), x ~ N(0, 1) (textbook closed forms, independent of the kernels)."""
    if activation == "relu":
        return mu * mp.ncdf(mu / sd) + sd * mp.npdf(mu / sd)
    if activation == "erf":          # g = erf(x/sqrt 2)
        return mp.erf(mu / mp.sqrt(2 * (1 + sd ** 2)))
    if activation == "quadratic":    # g = x^2
        return mu ** 2 + sd ** 2
    return mp.erf(mu / (sd * mp.sqrt(2)))


def _Q_mpmath(activation, q):
    """(E[g(u) g(v)] - (E g)^2)/(E g^2 - (E g)^2), corr(u, v) = q, as E_z[gbar(sqrt(q) z)^2]."""
    mean = {"relu": 1 / mp.sqrt(2 * mp.pi), "erf": 0, "quadratic": 1, "sign": 0}[activation]
    second = {"relu": mp.mpf(1) / 2, "erf": 2 / mp.pi * mp.asin(mp.mpf(1) / 2), "quadratic": 3, "sign": 1}[activation]
    q = mp.mpf(q)
    k = mp.quad(lambda z: mp.npdf(z) * _gbar(activation, mp.sqrt(q) * z, mp.sqrt(1 - q)) ** 2, [-mp.inf, 0, mp.inf])
    return (k - mean ** 2) / (second - mean ** 2)


@pytest.mark.parametrize("activation", ["relu", "erf", "quadratic", "sign"])
def test_output_kernel_against_mpmath_with_derivative(activation):
    for q in (0.1, 0.5, 0.9):
        Q, dQ = cm.advanced.tcm_output_kernel(q, activation)
        with mp.workdps(20):
            ref = _Q_mpmath(activation, q)
            d = mp.diff(lambda t: _Q_mpmath(activation, t), mp.mpf(q))
        assert Q == pytest.approx(float(ref), rel=1e-12, abs=1e-14)
        assert dQ == pytest.approx(float(d), rel=1e-8)
    Q1, dQ1 = cm.advanced.tcm_output_kernel(1.0, activation)
    assert Q1 == pytest.approx(1.0, abs=1e-15)
    assert dQ1 == {"relu": math.pi / (math.pi - 1), "erf": 2 * math.sqrt(3) / math.pi, "quadratic": 2.0,
                   "sign": math.inf}[activation]
    # ReLU: the same function as the older relu_kernel_Q
    if activation == "relu":
        q = np.linspace(0, 1, 7)
        np.testing.assert_allclose(cm.advanced.tcm_output_kernel(q, "relu")[0], cm.advanced.relu_kernel_Q(q)[0], rtol=1e-14, atol=1e-15)


@pytest.mark.parametrize("activation", ["relu", "erf", "quadratic", "sign"])
def test_output_kernel_is_the_covariance_of_the_committee_output(activation):
    # Monte Carlo of the committee output of two replicas with branch overlap q (any K: the covariance
    # of the normalized, mean-free output is Q(q) exactly; the CLT only makes it Gaussian)
    rng = np.random.default_rng(7)
    K, n, q = 16, 40000, 0.6
    g = {"relu": lambda x: np.maximum(x, 0.0), "erf": lambda x: np.vectorize(math.erf)(x / math.sqrt(2)),
         "quadratic": np.square, "sign": np.sign}[activation]
    # balanced second layer (relu, quadratic: it cancels the mean of g)
    c = np.where(np.arange(K) < K // 2, 1.0, -1.0) if activation in ("relu", "quadratic") else np.ones(K)
    var = {"relu": 0.5 - 1 / (2 * math.pi), "erf": 2 / math.pi * math.asin(0.5), "quadratic": 2.0,
           "sign": 1.0}[activation]
    z = rng.standard_normal((n, K))
    la = math.sqrt(q) * z + math.sqrt(1 - q) * rng.standard_normal((n, K))
    lb = math.sqrt(q) * z + math.sqrt(1 - q) * rng.standard_normal((n, K))
    Ya = (g(la) * c).sum(1) / math.sqrt(K * var)
    Yb = (g(lb) * c).sum(1) / math.sqrt(K * var)
    prod = Ya * Yb
    assert abs(prod.mean() - cm.advanced.tcm_output_kernel(q, activation)[0]) < 4 * prod.std() / math.sqrt(n)
    assert abs((Ya ** 2).mean() - 1.0) < 4 * (Ya ** 2).std() / math.sqrt(n)


# --------------------------------------------------------------------------- core pieces
def _power_hinge_mpmath(h, s2, y, kappa=0.0, p=3):
    """(1/y) log E_z exp(-y (kappa - h - sqrt(s2) z)_+^p) (y = 0: -E (.)_+^p), split at the peak."""
    a, s2, y = mp.mpf(kappa) - mp.mpf(h), mp.mpf(s2), mp.mpf(y)
    if y == 0:
        lg = lambda u: -(u - a) ** 2 / (2 * s2) + p * mp.log(u)  # noqa: E731
        us = (a + mp.sqrt(a * a + 4 * p * s2)) / 2
        w = 1 / mp.sqrt(1 / s2 + p / us ** 2)
    else:
        lg = lambda u: -(u - a) ** 2 / (2 * s2) - y * u ** p  # noqa: E731
        us = max(mp.findroot(lambda u: (a - u) / s2 - p * y * u ** (p - 1), a / 2), 0) if a > 0 else mp.mpf(0)
        w = 1 / mp.sqrt(1 / s2 + p * (p - 1) * y * us ** (p - 2)) if us > 0 else mp.sqrt(s2)
    g0 = lg(us) if us > 0 else -a * a / (2 * s2)
    pts = sorted({mp.mpf(0)} | {us + k * w for k in range(-30, 60) if us + k * w > 0}) + [mp.inf]
    logJ = mp.log(mp.quad(lambda u: mp.exp(lg(u) - g0), pts)) + g0 - mp.log(mp.sqrt(2 * mp.pi * s2))
    if y == 0:
        return -mp.exp(logJ)
    P_satisfied = mp.erfc(a / mp.sqrt(2 * s2)) / 2     # H(a/sigma): no cancellation against 1
    return mp.log(P_satisfied + mp.exp(logJ)) / y


@pytest.mark.slow
def test_power_hinge_p3_against_mpmath_with_derivatives():
    ch = rsb.PowerHingeFrozen(0.0, 3.0)
    for s2, y in [(0.3, 1.0), (0.05, 40.0), (0.7, 0.0), (0.2, 300.0)]:
        for h in (-6.0, -1.0, -0.2, 0.0, 0.4, 2.0):
            F, Fs, Fy = ch.tabulate(h, 1.0, 1, s2, y)
            with mp.workdps(30):
                ref = _power_hinge_mpmath(h, s2, y)
                dref = mp.diff(lambda t: _power_hinge_mpmath(h, t, y), mp.mpf(s2))
                yref = mp.diff(lambda t: _power_hinge_mpmath(h, s2, t), mp.mpf(y)) if y > 0 else 0
            assert F[0] == pytest.approx(float(ref), rel=1e-13, abs=1e-15)
            assert Fs[0] == pytest.approx(float(dref), rel=1e-9, abs=1e-14)
            assert Fy[0] == pytest.approx(float(yref), rel=1e-8, abs=1e-14)


def test_power_hinge_p2_is_the_closed_form_soft_hinge():
    # cost (kappa - h)_+^2 with parameter y  ==  soft hinge (kappa - h)_+^2/2 with 2 y, F doubled
    for kappa, s2, y in [(0.0, 0.3, 1.0), (-1.0, 0.05, 40.0), (0.5, 1.0, 0.0), (0.0, 0.7, 300.0)]:
        F, Fs, Fy = rsb.PowerHingeFrozen(kappa, 2.0).tabulate(-12.0, 0.05, 481, s2, y)
        G, Gs, Gy = rsb.HingeFrozen(kappa).tabulate(-12.0, 0.05, 481, s2, 2 * y)
        np.testing.assert_allclose(F, 2 * G, rtol=1e-13, atol=1e-14)
        np.testing.assert_allclose(Fs, 2 * Gs, rtol=1e-12, atol=1e-13)
        if y > 0:
            np.testing.assert_allclose(Fy, 4 * Gy, rtol=1e-12, atol=1e-13)
    with pytest.raises(ValueError, match="p"):
        rsb.PowerHingeFrozen(0.0, 1.0)


def test_identity_kernel_gives_the_perceptron_jamming_functional():
    kp = rsb.KernelJammingProblem(rsb.HingeFrozen(-1.0), rsb.identity_kernel, 1.0)
    jp = JammingProblem(-1.0)
    q, y = np.array([0.4, 0.8, 1.0]), np.array([7.0, 30.0])
    lat = jp.lattice(q, y)
    for a, b in zip(kp.evaluate(q, y, lat), jp.evaluate(q, y, lat)):
        np.testing.assert_allclose(np.atleast_1d(a)[:2], np.atleast_1d(b)[:2], rtol=1e-14)


def test_kernel_kstep_average_is_the_core_average_at_Q_with_chain_rule():
    ch, kern = rsb.HingeFrozen(0.0), L._erf_Q
    q, y = np.array([0.5, 0.9, 1.0]), np.array([2.0, 9.0])
    Q = kern(q)[0]
    Q[-1] = 1.0
    lat = rsb.make_lattice(Q, y, ch)
    r = rsb.kernel_kstep_average(q, y, ch, kern, lattice=lat)
    assert r.value == rsb.kstep_average(Q, y, ch, lattice=lat).value
    for i in range(2):
        e = np.zeros(3)
        e[i] = 1e-6
        num = (rsb.kernel_kstep_average(q + e, y, ch, kern, lattice=lat, grad=False).value
               - rsb.kernel_kstep_average(q - e, y, ch, kern, lattice=lat, grad=False).value) / 2e-6
        assert r.dq[i] == pytest.approx(num, rel=1e-6)
    assert r.dq[-1] == 0.0


@pytest.mark.parametrize("activation, ln_K", [("relu", 0.0), ("erf", 0.0), ("sign", 8.0)])
def test_kernel_problem_gradient_against_central_differences(activation, ln_K):
    prob = L._problem(activation, ln_K)
    x, y = np.array([0.55, 0.85, 1.0]), np.array([3.0, 12.0])
    lat = prob.lattice(x, y)
    v, gx, gy = prob.evaluate(x, y, lat)
    h = 1e-6
    for i in range(2):
        e = np.zeros(3)
        e[i] = h
        num = (prob.evaluate(x + e, y, lat, grad=False)[0] - prob.evaluate(x - e, y, lat, grad=False)[0]) / (2 * h)
        assert gx[i] == pytest.approx(num, rel=1e-6, abs=1e-9)
        e = np.zeros(2)
        e[i] = h * y[i]
        num = (prob.evaluate(x, y + e, lat, grad=False)[0] - prob.evaluate(x, y - e, lat, grad=False)[0]) / (2 * h * y[i])
        assert gy[i] == pytest.approx(num, rel=1e-6, abs=1e-9)


# --------------------------------------------------------------------------- RS and 1RSB
@pytest.mark.parametrize("activation, exact", [("relu", RS_RELU), ("erf", RS_ERF), ("quadratic", 4.0)])
def test_rs_from_the_core_functional(activation, exact):
    # y -> 0 is RS: R = 2 Q'(1) for every q0 (the plain averages of the core's frozen channel)
    # (lattices twice finer than the default: quadratic at q0 = 0.2 has Q0 = 0.04, an outer step only a
    # few default spacings wide, off by 3e-8 at res = 1 -- the k-step solves refine such lattices)
    prob = L._problem(activation, 0.0)
    for q0 in (0.2, 0.7):
        x, y = np.array([q0, 1.0]), np.array([0.0])
        assert prob.evaluate(x, y, prob.lattice(x, y, res=2.0), grad=False)[0] == pytest.approx(exact, rel=1e-10)
    assert cm.tcm_capacity(math.inf, activation, "rs") == pytest.approx(exact, rel=1e-15)
    assert cm.tcm_capacity(math.inf, "relu", "rs") == 2 * math.pi / (math.pi - 1)   # unchanged closed form
    r = cm.tcm_capacity_point(math.inf, activation, "rs")
    assert r.ansatz == "rs" and r.replicon == pytest.approx(1 - exact / 2) and r.replicon < 0 and not r.rs_stable


def test_sign_rs_from_the_core_is_sqrt_72_over_pi_sqrt_K():
    for ln_K in (6.0, 30.0):
        prob = L._problem("sign", ln_K)
        x, y = np.array([0.5, 1.0]), np.array([0.0])
        got = prob.evaluate(x, y, prob.lattice(x, y), grad=False)[0]
        assert got == pytest.approx(math.sqrt(72 / math.pi) * math.exp(ln_K / 2), rel=1e-10)
        assert cm.sign_capacity_large_K(ln_K=ln_K, ansatz="rs") == pytest.approx(got, rel=1e-12)


def test_relu_1rsb_reproduces_the_effective_perceptron_route():
    # a different route: large_k._relu_inf_1rsb_point (96-point GH, Newton on finite differences)
    r = cm.advanced.tcm_capacity_inf_point("relu", "1rsb")
    old = _relu_inf_1rsb_point()
    assert r.alpha_c == pytest.approx(old.alpha_c, rel=1e-10)
    assert round(r.alpha_c, 5) == 2.66428
    assert r.q0 == pytest.approx(old.q0, rel=1e-6) and r.y == pytest.approx(old.y, rel=1e-6)
    assert np.all(r.hessian_eigenvalues > 0) and r.lattice_error < 1e-12
    assert r.converged and r.ansatz == "1rsb" and r.iterations > 0 and r.residual < 1e-8
    assert cm.tcm_capacity(math.inf, "relu", "1rsb") == old.alpha_c     # the public number is unchanged


def test_kstep_decreases_monotonically_relu():
    a = [cm.tcm_capacity(math.inf, "relu", "rs")] + [cm.advanced.tcm_kstep_inf("relu", k).alpha_c for k in (1, 2)]
    assert a[0] > a[1] > a[2]
    assert a[1] - a[2] > 1e-3     # 2RSB lowers 1RSB by 0.011


def test_erf_frsb_on_coarse_grids_is_below_1rsb_below_rs():
    r = cm.advanced.tcm_capacity_inf_point("erf", "frsb", Ks=(2, 4))
    one = cm.advanced.tcm_capacity_inf_point("erf", "1rsb")
    assert r.alpha_c < one.alpha_c < RS_ERF
    assert r.error < 1e-4 and r.alpha_1rsb == one.alpha_c
    assert r.converged and r.ansatz == "frsb" and r.iterations > 0 and r.residual < 1e-6
    x = r.yhat
    assert np.all(np.diff(r.q) > 0) and np.all(x > 0)


def test_bad_input():
    with pytest.raises(ValueError, match="K"):
        cm.tcm_capacity(3, "erf")
    with pytest.raises(ValueError, match="K"):
        cm.tcm_capacity(5, "sign", "frsb")
    assert cm.tcm_capacity(math.inf, "sign", "frsb") == math.inf
    with pytest.raises(ValueError, match="sign"):
        cm.tcm_capacity_point(math.inf, "sign", "1rsb")
    with pytest.raises(ValueError, match="K"):
        cm.tcm_capacity_point(14, "relu", "1rsb")
    with pytest.raises(ValueError, match="activation"):
        cm.advanced.tcm_capacity_inf_point("tanh")
    with pytest.raises(ValueError, match="ansatz"):
        cm.advanced.tcm_capacity_inf_point("relu", "7rsb")
    with pytest.raises(ValueError, match="Ks"):
        cm.advanced.tcm_capacity_inf_point("relu", "frsb", Ks=(4, 6))
    with pytest.raises(ValueError, match="K"):
        cm.sign_capacity_large_K(K=2)
    with pytest.raises(ValueError, match="ln_K"):
        cm.sign_capacity_large_K(ln_K=2000.0)
    with pytest.raises(ValueError):
        cm.sign_capacity_large_K(K=100, ln_K=5.0)
    with pytest.raises(ValueError, match="K"):
        cm.advanced.tcm_kstep_inf("relu", 2, K=100)
    with pytest.raises(ValueError, match="k"):
        cm.advanced.tcm_kstep_inf("relu", 0)
    with pytest.raises(ValueError, match="q"):
        cm.advanced.tcm_output_kernel(1.5)


# --------------------------------------------------------------------------- slow: full RSB
@pytest.mark.slow
@pytest.mark.parametrize("activation", ["relu", "erf", "quadratic"])
def test_frsb_below_kstep_below_1rsb_below_rs(activation):
    r = cm.tcm_capacity_point(math.inf, activation, "frsb")
    ks = [cm.advanced.tcm_kstep_inf(activation, k).alpha_c for k in (1, 2, 3)]
    rs = cm.tcm_capacity(math.inf, activation, "rs")
    assert rs > ks[0] > ks[1] > ks[2] > r.alpha_K[-1] > r.alpha_c
    assert np.all(np.diff(r.alpha_K) < 0)                 # monotone in the grid size
    assert r.error < 5e-4 and r.lattice_error < 1e-10
    assert np.all(r.hessian_eigenvalues > 0)
    assert cm.tcm_capacity(math.inf, activation, "frsb") == r.alpha_c


@pytest.mark.slow
def test_sign_1rsb_reproduces_eq_1rsb_L():
    # the core with the power-hinge channel vs the older log-panel implementation of Eq. 1RSB.L
    for ln_K in (10.0, 69.0):
        r = cm.sign_capacity_large_K_point(ln_K=ln_K, ansatz="1rsb")
        old = cm.advanced.tcm_1rsb_large_K(ln_K=ln_K)
        assert r.alpha_c == pytest.approx(old.alpha_c, rel=1e-10)
        assert r.q0 == pytest.approx(old.q0, rel=1e-6) and r.yhat == pytest.approx(old.y_hat, rel=1e-5)
        assert r.scaled_alpha_c == pytest.approx(old.ratio, rel=1e-10)


@pytest.mark.slow
def test_sign_frsb_on_coarse_grids_is_below_1rsb_below_rs():
    # large-K sign theory at ln K = 10: breaking is strong (1RSB is 1 % of RS, full RSB ~17 % below 1RSB)
    r = cm.sign_capacity_large_K_point(ln_K=10.0, ansatz="frsb", Ks=(2, 4))
    one = cm.sign_capacity_large_K_point(ln_K=10.0, ansatz="1rsb")
    rs = cm.sign_capacity_large_K(ln_K=10.0, ansatz="rs")
    assert r.converged and r.ansatz == "frsb" and r.iterations > 0
    assert r.alpha_K[-1] < r.alpha_K[0] < one.alpha_c < rs
    assert r.scaled_alpha_c == pytest.approx(r.alpha_c / math.sqrt(10.0), rel=1e-15)
    assert np.all(np.diff(r.Q) > 0) and np.all(np.diff(r.q) > 0) and r.Q[-1] == 1.0
