"""RSB core: channels, nested averages and their gradients, entropic terms, SK at T = 0."""
import math

import mpmath as mp
import numpy as np
import pytest
from scipy import integrate, optimize
from scipy.special import log_ndtr

from statmech import ConvergenceError
from statmech.rsb import kstep, parisi, sk


# --------------------------------------------------------------- channels vs mpmath
def _mp_frozen(g, h, s2, y, kink):
    s = mp.sqrt(s2)
    f = lambda z: mp.npdf(z) * mp.exp(y * g(h + s * z))
    return mp.log(mp.quad(f, [-mp.inf, (kink - h) / s, mp.inf])) / y


@pytest.mark.parametrize("h,s2,y", [(0.5, 0.3, 2.0), (-2.0, 0.05, 40.0), (3.0, 0.9, 0.3)])
def test_frozen_channels_match_mpmath_with_derivatives(h, s2, y):
    mp.mp.dps = 20
    kappa = -1.0
    hinge = lambda u: -max(kappa - u, 0) ** 2 / 2
    F, Fs, Fy = kstep.HingeFrozen(kappa).tabulate(h, 1.0, 1, s2, y)
    A, As, Ay = kstep.AbsFrozen().tabulate(h, 1.0, 1, s2, y)
    for (v, vs, vy), g, kink in (((F, Fs, Fy), hinge, kappa), ((A, As, Ay), abs, 0.0)):
        ref = _mp_frozen(g, h, s2, y, kink)
        assert v[0] == pytest.approx(float(ref), rel=1e-12, abs=1e-14)
        assert vs[0] == pytest.approx(float(mp.diff(lambda s: _mp_frozen(g, h, s, y, kink), s2)), rel=1e-9, abs=1e-12)
        assert vy[0] == pytest.approx(float(mp.diff(lambda t: _mp_frozen(g, h, s2, t, kink), y)), rel=1e-9, abs=1e-12)


def test_frozen_channels_m_to_zero_limit_is_the_plain_average():
    F0 = kstep.HingeFrozen(-0.5).tabulate(0.3, 1.0, 1, 0.4, 0.0)[0][0]
    Fs = kstep.HingeFrozen(-0.5).tabulate(0.3, 1.0, 1, 0.4, 1e-7)[0][0]
    assert F0 == pytest.approx(Fs, abs=1e-7)
    A0 = kstep.AbsFrozen().tabulate(0.0, 1.0, 1, 1.0, 0.0)[0][0]
    assert A0 == pytest.approx(math.sqrt(2 / math.pi), rel=1e-15)


# --------------------------------------------------------------- nested average
CASES = [
    (kstep.AbsFrozen(), [0.1, 0.6, 1.0], [0.9, 2.5]),
    (kstep.HingeFrozen(-1.0), [0.3, 0.7, 1.0], [3.0, 10.0]),
    (kstep.LogHTerminal(-0.5), [0.3, 0.7, 0.9], [0.3, 0.6]),
]


@pytest.mark.parametrize("ch,q,m", CASES)
def test_kstep_gradient_matches_finite_differences(ch, q, m):
    q, m = np.array(q), np.array(m)
    r = kstep.kstep_average(q, m, ch)
    lat = r.lattice
    h = 1e-5
    free = range(q.size - 1) if ch.frozen else range(q.size)
    for i in free:
        e = np.zeros_like(q)
        e[i] = h
        fd = (kstep.kstep_average(q + e, m, ch, lattice=lat).value
              - kstep.kstep_average(q - e, m, ch, lattice=lat).value) / (2 * h)
        assert r.dq[i] == pytest.approx(fd, rel=1e-7, abs=1e-10)
    for i in range(m.size):
        e = np.zeros_like(m)
        e[i] = h
        fd = (kstep.kstep_average(q, m + e, ch, lattice=lat).value
              - kstep.kstep_average(q, m - e, ch, lattice=lat).value) / (2 * h)
        assert r.dm[i] == pytest.approx(fd, rel=1e-7, abs=1e-10)


@pytest.mark.parametrize("ch,q,m", CASES)
def test_kstep_lattice_converged(ch, q, m):
    v1 = kstep.kstep_average(q, m, ch, grad=False).value
    v2 = kstep.kstep_average(q, m, ch, res=2.0, grad=False).value
    assert abs(v1 - v2) < 1e-9


@pytest.mark.slow
def test_kstep_1rsb_log_h_matches_mpmath_double_integral():
    """E_z0 (1/m) log E_z1 H(u)^m, u = (kappa - sqrt(q0) z0 - sqrt(q1-q0) z1)/sqrt(1-q1)."""
    q0, q1, m, kappa = 0.3, 0.8, 0.4, -0.5
    v = kstep.kstep_average([q0, q1], [m], kstep.LogHTerminal(kappa), grad=False).value
    mp.mp.dps = 15
    a, b, c = math.sqrt(q0), math.sqrt(q1 - q0), math.sqrt(1 - q1)

    def inner(z0):
        f = lambda z1: mp.npdf(z1) * (mp.ncdf(-(kappa - a * z0 - b * z1) / c)) ** m
        return mp.log(mp.quad(f, [-mp.inf, (kappa - a * z0) / b, mp.inf])) / m
    ref = mp.quad(lambda z0: mp.npdf(z0) * inner(z0), [-mp.inf, 0, mp.inf])
    assert v == pytest.approx(float(ref), rel=1e-10)


def test_kstep_collapses_to_rs_when_breakpoints_merge():
    """q0 = q1: the 1RSB average equals the RS one for any m (RS is contained in 1RSB)."""
    q, kappa = 0.6, -0.3
    ch = kstep.LogHTerminal(kappa)
    rs = kstep.kstep_average([q], [], ch, grad=False).value
    for m in (0.1, 0.5, 0.9):
        assert kstep.kstep_average([q, q], [m], ch, grad=False).value == pytest.approx(rs, abs=1e-13)


def test_spherical_entropic_rs_limit_and_gradient():
    q = 0.7
    S = kstep.spherical_entropic([q, q], [0.4])[0]
    assert S == pytest.approx(0.5 * math.log(1 - q) + q / (2 * (1 - q)), rel=1e-14)
    for jammed in (False, True):
        qq = np.array([0.3, 0.7, 1.0 if jammed else 0.9])
        mm = np.array([0.3, 0.6])
        S, gq, gm = kstep.spherical_entropic(qq, mm, jammed=jammed)
        for i in range(qq.size - int(jammed)):
            e = np.zeros(3)
            e[i] = 1e-6
            fd = (kstep.spherical_entropic(qq + e, mm, jammed=jammed)[0]
                  - kstep.spherical_entropic(qq - e, mm, jammed=jammed)[0]) / 2e-6
            assert gq[i] == pytest.approx(fd, rel=1e-7)
        for i in range(2):
            e = np.zeros(2)
            e[i] = 1e-6
            fd = (kstep.spherical_entropic(qq, mm + e, jammed=jammed)[0]
                  - kstep.spherical_entropic(qq, mm - e, jammed=jammed)[0]) / 2e-6
            assert gm[i] == pytest.approx(fd, rel=1e-7)


def test_kstep_average_rejects_bad_input():
    with pytest.raises(ValueError, match="m must have"):
        kstep.kstep_average([0.1, 0.5], [0.2, 0.3], kstep.LogHTerminal(0.0))
    with pytest.raises(ValueError, match="non-decreasing"):
        kstep.kstep_average([0.5, 0.1], [0.2], kstep.LogHTerminal(0.0))
    with pytest.raises(ValueError, match="frozen"):
        kstep.kstep_average([0.1, 0.5], [0.2], kstep.AbsFrozen())


def test_minimize_raises_convergence_error_with_diagnostics():
    with pytest.raises(ConvergenceError) as ei:
        kstep.minimize(lambda x: -float(x[0] ** 2), lambda x: np.array([-2 * x[0]]), [1.0], maxiter=5)
    assert ei.value.x is not None and ei.value.residual > 0


# --------------------------------------------------------------- SK at T = 0
def test_sk_rs_is_minus_sqrt_2_over_pi():
    assert sk.sk_ground_state("rs").energy == pytest.approx(-math.sqrt(2 / math.pi), rel=1e-14)


def test_sk_1rsb_matches_independent_quadrature():
    """1RSB (q_0 free): minimize E_z F(sqrt(q0) z) - (y/4)(1 - q0^2), F the frozen step in closed
    form, with scipy quad + Nelder-Mead, independently of the core."""
    r = sk.sk_ground_state("1rsb")

    def F(h, s, y):
        a = y * h + log_ndtr((h + y * s * s) / s)
        b = -y * h + log_ndtr((-h + y * s * s) / s)
        return y * s * s / 2 + np.logaddexp(a, b) / y

    def P(x):
        q0, y = x
        s = math.sqrt(1 - q0)
        e = integrate.quad(lambda z: math.exp(-z * z / 2) / math.sqrt(2 * math.pi) * F(math.sqrt(q0) * z, s, y),
                           -np.inf, np.inf, epsabs=1e-14, epsrel=1e-13)[0]
        return e - y / 4 * (1 - q0 ** 2)
    res = optimize.minimize(P, [0.45, 1.3], method="Nelder-Mead", options={"xatol": 1e-9, "fatol": 1e-14})
    assert r.energy == pytest.approx(-res.fun, abs=1e-11)
    assert r.energy == pytest.approx(-0.76525943, abs=1e-8)
    assert r.q[0] == pytest.approx(res.x[0], abs=1e-5) and r.y[0] == pytest.approx(res.x[1], abs=1e-5)
    # restricted to q0 = 0 it is min_y y/4 + log(2 Phi(y))/y
    f = lambda y: y / 4 + (math.log(2) + log_ndtr(y)) / y
    y0 = optimize.minimize_scalar(f, bracket=(0.5, 1.5), tol=1e-12).x
    assert kstep.kstep_average([0.0, 1.0], [y0], kstep.AbsFrozen(), grad=False).value - y0 / 4 == \
        pytest.approx(f(y0), abs=1e-13)


def test_sk_kstep_energies_increase_monotonically_towards_full_rsb():
    e = [sk.sk_ground_state("krsb", k).energy for k in (1, 2, 3)]
    assert e[0] < e[1] < e[2] < sk.CRISANTI_RIZZO_E0
    assert e[2] == pytest.approx(-0.7633134810, abs=1e-9)


def test_sk_full_rsb_to_1e6():
    """K = 8, 16, 32 graded grids, extrapolated: Crisanti & Rizzo's -0.7631667 to 1e-6."""
    r = sk.sk_ground_state("frsb")
    assert abs(r.energy - sk.CRISANTI_RIZZO_E0) < 1e-6
    assert r.error < 1e-6
    assert 2.5 < r.solution.p < 3.5
    v = r.solution.values
    assert v[0] > v[1] > v[2]  # -e decreases (the energy increases) as K doubles
    assert np.all(np.diff(r.y) > 0)  # gamma(q) increasing
    assert np.all(r.solution.hessian_eigenvalues > 0)  # a minimum of the Parisi functional


@pytest.mark.slow
def test_sk_full_rsb_finer_sequence_agrees():
    r = sk.sk_ground_state("frsb", Ks=(16, 32, 64))
    assert abs(r.energy - sk.sk_ground_state("frsb").energy) < 3e-7


def test_sk_ansatz_vocabulary():
    """The common ansatz vocabulary: 'rs' (the default), '1rsb', '2rsb', ..., 'krsb' with k=,
    'frsb'; k alone means k steps; a k that contradicts the ansatz, an unknown ansatz or 'krsb'
    without k is a ValueError naming what the model supports."""
    assert sk.sk_ground_state().ansatz == "rs"
    assert sk.sk_ground_state(k=2).ansatz == "2rsb"
    assert sk.sk_ground_state("krsb", 0).ansatz == "rs"
    assert sk.sk_ground_state("2rsb").energy == pytest.approx(sk.sk_ground_state("krsb", k=2).energy, abs=1e-14)
    with pytest.raises(ValueError, match="contradicts"):
        sk.sk_ground_state("frsb", k=3)
    with pytest.raises(ValueError, match="needs k"):
        sk.sk_ground_state("krsb")
    with pytest.raises(ValueError, match="'rs', 'krsb', 'frsb'"):
        sk.sk_ground_state("3rs")
    with pytest.raises(TypeError, match="ansatz must be a string"):
        sk.sk_ground_state(2)


def test_richardson_recovers_a_power_law():
    Ks = (8, 16, 32)
    v = [1.0 + 3.0 * K ** -3.0 for K in Ks]
    v_inf, p, err = parisi.richardson(Ks, v)
    assert v_inf == pytest.approx(1.0, abs=1e-14) and p == pytest.approx(3.0, abs=1e-10)
