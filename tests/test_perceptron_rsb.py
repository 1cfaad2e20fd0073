"""Spherical perceptron beyond RS: jamming line RS/1RSB/FRSB, storage above the AT line."""
import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from statmech import ConvergenceError
from statmech import perceptron as P
from statmech.perceptron import spherical_rsb as PR
from statmech.rsb import kstep


# --------------------------------------------------------------- RS and the collapse for kappa >= 0
@pytest.mark.parametrize("kappa", [-2.0, -0.5, 0.0, 1.0])
def test_rs_jamming_from_the_core_is_gardner(kappa):
    """y = 0 (m -> 0) of the jammed functional: R = 1/E(kappa - t)_+^2, any q0."""
    prob = PR.JammingProblem(kappa)
    for q0 in (0.2, 0.7):
        q = np.array([q0, 1.0])
        R = prob.evaluate(q, np.array([0.0]), kstep.make_lattice(q, [0.0], prob.channel), grad=False)[0]
        assert R == pytest.approx(P.gardner_capacity(kappa), rel=1e-12)


@pytest.mark.parametrize("kappa", [0.0, 0.5, 2.0])
@pytest.mark.parametrize("ansatz", ["1rsb", "frsb"])
def test_kappa_nonnegative_collapses_to_rs(kappa, ansatz):
    r = PR.gardner_capacity_point(kappa, ansatz)
    assert r.alpha_c == pytest.approx(P.gardner_capacity(kappa), rel=1e-10)
    assert r.extra["collapsed_to_rs"] and r.ansatz == ansatz
    if ansatz == "1rsb":
        assert r.q0 == r.q1 == 1.0


@pytest.mark.parametrize("kappa", [0.0, 0.5])
def test_no_rsb_minimum_below_rs_for_kappa_nonnegative(kappa):
    """The reason for the collapse: R(q0, y) >= alpha_RS on the whole 1RSB parameter space."""
    prob = PR.JammingProblem(kappa)
    a_rs = P.gardner_capacity(kappa)
    for q0 in (0.05, 0.3, 0.6, 0.9, 0.99):
        for y in (0.1, 1.0, 10.0, 100.0):
            q = np.array([q0, 1.0])
            R = prob.evaluate(q, np.array([y]), kstep.make_lattice(q, [y], prob.channel), grad=False)[0]
            assert R >= a_rs * (1 - 1e-12)


def test_jamming_replicon_is_the_q_to_1_limit_of_the_rs_replicon():
    kappa = -0.5
    ac = P.gardner_capacity(kappa)
    r = P.spherical_storage(ac * (1 - 1e-7), kappa)
    assert r.replicon == pytest.approx(PR.jamming_replicon(kappa), abs=2e-3)
    assert PR.jamming_replicon(0.0) == pytest.approx(0.0, abs=1e-14)   # isostatic at kappa = 0
    assert PR.jamming_replicon(-0.1) < 0 < PR.jamming_replicon(0.1)
    rs = PR.gardner_capacity_point(-1.0, "rs")
    assert rs.rs_stable is False and rs.replicon < 0


# --------------------------------------------------------------- kappa < 0
@pytest.mark.parametrize("kappa", [-0.5, -1.0, -2.0])
def test_one_rsb_below_rs_and_stationary(kappa):
    r = PR.gardner_capacity_point(kappa, "1rsb")
    assert r.alpha_c < P.gardner_capacity(kappa)
    assert 0 < r.q0 < 1 and r.y > 0 and r.residual < 1e-9
    assert np.all(r.hessian_eigenvalues > 0)  # a minimum of R


@pytest.mark.slow
def test_one_rsb_jamming_matches_mpmath_functional():
    """R(q0, y) at the 1RSB minimum, kappa = -1, by brute-force double quadrature."""
    kappa = -1.0
    r = PR.gardner_capacity_point(kappa, "1rsb")
    q0, y = r.q0, r.y
    mp.mp.dps = 15
    a, b = math.sqrt(q0), math.sqrt(1 - q0)

    def inner(z0):
        c = kappa - a * z0
        f = lambda z1: mp.npdf(z1) * mp.exp(-y * max(c - b * z1, 0) ** 2 / 2)
        return mp.log(mp.quad(f, [-mp.inf, c / b, mp.inf])) / y
    E = mp.quad(lambda z0: mp.npdf(z0) * inner(z0), [-mp.inf, kappa / a, mp.inf])
    L1 = 1 + y * (1 - q0)
    S = (mp.log(L1) / y + q0 / L1) / 2
    assert r.alpha_c == pytest.approx(float(-S / E), rel=1e-9)


def test_jamming_gradient_matches_finite_differences():
    prob = PR.JammingProblem(-1.0)
    q = np.array([0.55, 0.8, 1.0])
    y = np.array([15.0, 40.0])
    lat = kstep.make_lattice(q, y, prob.channel)
    v, gq, gy = prob.evaluate(q, y, lat)
    h = 1e-6
    for i in range(2):
        e = np.zeros(3)
        e[i] = h
        fd = (prob.evaluate(q + e, y, lat, False)[0] - prob.evaluate(q - e, y, lat, False)[0]) / (2 * h)
        assert gq[i] == pytest.approx(fd, rel=1e-6)
        e = np.zeros(2)
        e[i] = h
        fd = (prob.evaluate(q, y + e, lat, False)[0] - prob.evaluate(q, y - e, lat, False)[0]) / (2 * h)
        assert gy[i] == pytest.approx(fd, rel=1e-6, abs=1e-10)


def test_frsb_below_1rsb_below_rs_short_grids():
    r = PR.gardner_capacity_point(-1.0, "frsb", Ks=(2, 4))
    a1 = PR.gardner_capacity_rsb(-1.0, "1rsb")
    aK = r.extra["alpha_K"]
    assert aK[0] > aK[1] and aK[0] < a1 < P.gardner_capacity(-1.0)
    assert r.alpha_c < aK[-1]


def test_kstep_jamming_monotone_in_k():
    a = [PR.jamming_kstep(-1.0, k).value for k in (1, 2)]
    assert a[1] < a[0] == pytest.approx(PR.gardner_capacity_rsb(-1.0, "1rsb"), rel=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("kappa", [-0.5, -1.0, -2.0])
def test_frsb_jamming_converged_sequence(kappa):
    r = PR.gardner_capacity_point(kappa, "frsb")
    aK = r.extra["alpha_K"]
    assert aK[0] > aK[1] > aK[2] > r.alpha_c
    assert r.alpha_c < r.extra["alpha_1rsb"] < r.extra["alpha_rs"]
    assert 1.5 < r.extra["order"] < 2.5
    assert r.extra["error"] < 2e-4 * r.alpha_c
    assert r.extra["lattice_error"] < 1e-9 * r.alpha_c


@pytest.mark.slow
def test_frsb_jamming_y_grows_with_the_jamming_exponent():
    """At fixed q the minimizing y of the graded grid grows like eps_K^-(1 - 1/kappa_J),
    eps_K the top-cell width (docs/rsb.md (J7)): measured between K = 8 and K = 16."""
    from statmech.rsb import parisi
    prob, s1 = PR._one_rsb_jamming(-1.0)
    q0, y1 = float(s1.q[0]), float(s1.m[0])
    sols = [parisi.solve_frsb(prob, q0, 1.0, lambda qm: 0.5 * y1 * np.sqrt((1 - q0) / (1 - qm)), Ks=Ks)
            for Ks in ((4, 8), (4, 8, 16))]
    qs = np.array([0.7, 0.8, 0.9])

    def log_y(s):
        qm = 0.5 * (s.q[1:] + s.q[:-1])
        return np.interp(-np.log1p(-qs), -np.log1p(-qm), np.log(s.x))
    rate = (log_y(sols[1]) - log_y(sols[0])) / math.log((1 - sols[0].q[-2]) / (1 - sols[1].q[-2]))
    assert np.all(np.abs(rate - PR.JammingProblem.x_growth) < 0.02), rate


def test_jamming_line_on_any_submit_executor():
    class SubmitOnly:   # the dask.distributed.Client interface: submit() -> future.result()
        def submit(self, fn, *args):
            class Done:
                def result(self, value=fn(*args)):
                    return value
            return Done()
    k = np.array([-1.0, 0.5])
    a = PR.gardner_capacity_rsb(k, "1rsb", executor=SubmitOnly())
    assert a[0] == pytest.approx(PR.gardner_capacity_rsb(-1.0, "1rsb"), rel=1e-12)
    assert a[1] == pytest.approx(P.gardner_capacity(0.5), rel=1e-12)
    with pytest.raises(ValueError, match="executor"):
        PR.gardner_capacity_rsb(k, "1rsb", executor=object())


# --------------------------------------------------------------- storage at finite alpha
def test_storage_below_at_line_collapses_to_rs():
    r = PR.spherical_storage_rsb(5.0, -1.0, "1rsb")
    rs = P.spherical_storage(5.0, -1.0)
    assert r.q0 == r.q1 == rs.q and r.entropy == rs.entropy and r.extra["collapsed_to_rs"]


def test_storage_above_at_line_breaks_replica_symmetry():
    alpha, kappa = 9.0, -1.0
    assert alpha > P.spherical_storage_at_line(kappa)
    r1 = PR.spherical_storage_rsb(alpha, kappa, "1rsb")
    rf = PR.spherical_storage_rsb(alpha, kappa, "frsb", Ks=(2, 4))
    rs = P.spherical_storage(alpha, kappa)
    assert r1.q0 < rs.q < r1.q1 and 0 < r1.m < 1
    assert rf.entropy < r1.entropy < rs.entropy   # the free entropy is minimized over the ansatz
    # rs_stable is the ansatz's own stability (its minimum); the RS replicon says why RS broke
    assert r1.rs_stable is True and np.all(r1.stability > 0) and r1.replicon < 0
    assert abs(r1.complexity) < 1e-8   # interior minimum in m: the selected states have zero complexity


def test_bad_input_names_the_argument():
    with pytest.raises(ValueError, match="ansatz"):
        PR.gardner_capacity_point(-1.0, "2rsb")
    with pytest.raises(ValueError, match="kappa"):
        PR.gardner_capacity_point(float("nan"), "1rsb")
    with pytest.raises(ValueError, match="alpha"):
        PR.spherical_storage_rsb(-1.0, 0.0)
    with pytest.raises(ValueError, match="k must be"):
        PR.jamming_kstep(-1.0, 0)


def test_vectorized_over_kappa():
    r = PR.gardner_capacity_point(np.array([0.5, -1.0]), "1rsb")   # collapsed point first
    assert r.alpha_c.shape == (2,) and r.extra["points"][0]["collapsed_to_rs"]
    k = np.array([-1.0, -0.5, 0.5])
    a = PR.gardner_capacity_rsb(k, "1rsb")
    assert a.shape == (3,)
    assert a[2] == pytest.approx(P.gardner_capacity(0.5), rel=1e-12)
    assert a[0] == pytest.approx(PR.gardner_capacity_rsb(-1.0, "1rsb"), rel=1e-12)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kappa=st.floats(-5, 5), alpha=st.floats(0, 1e4))
def test_storage_finite_or_raises(kappa, alpha):
    try:
        r = PR.spherical_storage_rsb(alpha, kappa, "1rsb")
    except (ValueError, ConvergenceError):
        return
    assert np.isfinite(r.entropy) and np.isfinite(r.q0) and np.isfinite(r.q1)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kappa=st.floats(PR.KAPPA_MIN_RSB, 5))
def test_one_rsb_capacity_answers_over_its_domain(kappa):
    """Every kappa of the documented domain answers (no ConvergenceError), at or below RS
    (within the lattice error of the discretised 1RSB functional and the 1e-10 relative accuracy
    of its minimum value: near kappa = 0- the minimum is flat along y -> 0)."""
    r = PR.gardner_capacity_point(kappa, "1rsb")
    a = r.thermo["alpha_c"]
    tol = r.extra.get("lattice_error", 0.0) + 1e-10 * a
    assert np.isfinite(a) and a <= P.gardner_capacity(kappa) + tol


def test_one_rsb_capacity_outside_its_domain_is_a_value_error():
    with pytest.raises(ValueError, match="kappa must be >= -3"):
        PR.gardner_capacity_rsb(-3.01, "1rsb")


@pytest.mark.slow
def test_one_rsb_storage_approaches_the_jamming_scaling():
    """Second route to the 1RSB jamming point: at finite alpha, as alpha -> alpha_J^1RSB,
    q1 -> 1 with m/(1 - q1) -> y_J and q0 -> q0_J of the jammed functional (J4)."""
    jam = PR.gardner_capacity_point(-1.0, "1rsb")
    ys, q0s = [], []
    for alpha in (12.0, 12.2):
        r = PR.spherical_storage_rsb(alpha, -1.0, "1rsb")
        ys.append(r.m / (1 - r.q1))
        q0s.append(r.q0)
    assert ys[0] < ys[1] < jam.y and abs(ys[1] - jam.y) < 0.25 * jam.y
    assert q0s[0] < q0s[1] < jam.q0 and abs(q0s[1] - jam.q0) < 0.02


# --------------------------------------------------------------- full RSB at finite alpha
def _check_frsb_storage(alpha, kappa):
    """Full RSB at the default grids: converged, x(q) in (0, 1), the discretization error
    reported, and every grid value at most the 1RSB one.  The free entropy is *minimized*
    over x(q) (docs/rsb.md section 3) and the 1RSB step function (x = m on (q_0, q_1)) lies
    in every grid's parameter space (constant x on the grid), so phi_K <= phi_1RSB."""
    r = PR.spherical_storage_rsb(alpha, kappa, "frsb")
    x = r.extra["x"]
    assert r.ansatz == "frsb" and r.converged and r.residual <= 1e-9
    assert np.all((x > 0) & (x < 1))
    assert 0 < r.extra["error"] < 1e-6 and r.extra["lattice_error"] < min(1e-7, r.extra["error"])
    slack = r.extra["error"] + 1e-10
    assert all(v <= r.entropy_1rsb + slack for v in r.extra["entropy_K"])
    assert r.entropy <= r.entropy_1rsb + slack and r.entropy_1rsb < r.entropy_rs
    assert r.q_min < r.q_max < 1
    return r


def test_frsb_storage_converges_at_the_default_grids():
    r = _check_frsb_storage(10.0, -1.0)
    assert r.entropy < r.entropy_1rsb - 1e-5    # far above the AT line the continuum gains
    assert np.all(np.diff(r.extra["x"]) > 0)    # Parisi's x(q) is increasing


@pytest.mark.slow
@pytest.mark.parametrize("alpha,kappa", [(8.0, -1.0), (9.0, -1.0), (10.0, -1.0), (11.0, -1.0),
                                         (4.0, -0.5), (4.3, -0.5), (4.5, -0.5)])
def test_frsb_storage_above_the_at_line(alpha, kappa):
    _check_frsb_storage(alpha, kappa)


def test_storage_functional_is_unbounded_below_for_m_above_one():
    """Why the core keeps 0 < m < 1 below a non-frozen terminal: for m -> inf the nested
    average stays bounded while the entropic term keeps log(1 - q_1)/2 -> -inf."""
    prob = PR.StorageProblem(8.0, -1.0)
    rs = P.spherical_storage(8.0, -1.0)
    vals = []
    for eps, m in ((1e-2, 10.0), (1e-6, 1e3)):
        q, mm = np.array([0.9, 1 - eps]), np.array([m])
        vals.append(prob.evaluate(q, mm, prob.lattice(q, mm), grad=False)[0])
        assert vals[-1] < 0.5 * math.log(eps) + 1.0
    assert vals[1] < vals[0] < rs.entropy


@pytest.mark.slow
def test_frsb_storage_q_max_tends_to_one_at_the_frsb_jamming_point():
    """As alpha -> alpha_J^FRSB, 1 - q_max -> 0; a power-law fit eps = C (alpha_J - alpha)^nu
    through three points extrapolates to the full-RSB jamming point, not the 1RSB one."""
    from scipy.optimize import brentq
    alphas = np.array([12.2, 12.25, 12.27])
    eps = np.array([1 - PR.spherical_storage_rsb(a, -1.0, "frsb").q_max for a in alphas])
    assert np.all(np.diff(eps) < 0) and eps[-1] < 1e-4

    def nu(aj, i, j):
        return math.log(eps[i] / eps[j]) / math.log((aj - alphas[i]) / (aj - alphas[j]))
    aj = brentq(lambda a: nu(a, 0, 1) - nu(a, 1, 2), alphas[-1] + 1e-4, 12.5)
    a_frsb = PR.gardner_capacity_rsb(-1.0, "frsb")
    a_1rsb = PR.gardner_capacity_rsb(-1.0, "1rsb")
    assert abs(aj - a_frsb) < 0.01 < a_1rsb - aj
