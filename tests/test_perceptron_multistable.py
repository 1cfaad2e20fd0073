"""Several RS stationary points of the storage problems at strongly negative kappa: the solvers
return the global minimum of the RS free entropy (the n -> 0 rule), checked against an independent
scan of the public free entropy; the domains of the storage and RSB solvers."""
import math
import time

import mpmath as mp
import numpy as np
import pytest

import statmech.perceptron as P
from statmech.perceptron import _multistable as M
from statmech.perceptron._common import KAPPA_MIN
from statmech.perceptron._quadrature import _st_out
from statmech.perceptron.spherical_rsb import KAPPA_MIN_RSB


def _stationary_by_scan(kind, alpha, kappa, n=4000):
    """Independent search: every sign change of the public gradient along q (spherical) or along
    q_hat with q eliminated by its own stationarity (Ising), refined by bisection; returns
    [(q, phi)] of the minima."""
    if kind == "spherical":
        ys = np.linspace(-60.0, 30.0, n)
        qs = 1.0 / (1.0 + np.exp(-ys))
        g = np.array([P.spherical_storage_gradient([q], alpha, kappa)[0] for q in qs])
        out = []
        for i in np.flatnonzero(np.sign(g[1:]) != np.sign(g[:-1])):
            if g[i] < 0 < g[i + 1]:   # gradient - -> +: a minimum of phi
                lo, hi = ys[i], ys[i + 1]
                for _ in range(80):
                    mid = 0.5 * (lo + hi)
                    q = 1.0 / (1.0 + math.exp(-mid))
                    if P.spherical_storage_gradient([q], alpha, kappa)[0] < 0:
                        lo = mid
                    else:
                        hi = mid
                q = 1.0 / (1.0 + math.exp(-0.5 * (lo + hi)))
                out.append((q, P.spherical_storage_free_entropy([q], alpha, kappa)))
        return out
    raise AssertionError(kind)


# ---------------------------------------------------------------------------- the branch maps
@pytest.mark.parametrize("kappa", np.linspace(KAPPA_MIN_RSB + 1.0, 3.0, 21))
def test_branch_maps_monotone_above_the_check(kappa):
    """KAPPA_CHECK is justified: above it alpha*(s) has no fold (fine scan, both models)."""
    if kappa < M.KAPPA_CHECK:
        pytest.skip("below the check")
    assert M._folds(M._sph_alpha, -40.0, 25.0, float(kappa)) == ()
    assert M._folds(M._bin_alpha, -30.0, 25.0, float(kappa)) == ()


@pytest.mark.parametrize("kappa", [-2.9, -3.5, -4.0, -5.0])
def test_spherical_folds_and_window(kappa):
    folds = M.spherical_folds(kappa)
    assert len(folds) == 2
    (s1, a1), (s2, a2) = folds
    assert s1 < s2 and a2 < a1 < P.gardner_capacity(kappa) * 1e9
    a = 0.5 * (a1 + a2)
    pts = M.stationary_points("spherical", a, kappa)
    assert len(pts) == 2 and pts[0][1] < pts[1][1]


@pytest.mark.parametrize("kappa", [-2.7, -3.0, -4.0, -5.0])
def test_binary_folds_exist(kappa):
    assert len(M.binary_folds(kappa)) == 2


# ---------------------------------------------------------------------------- completeness
_POINTS = [(-3.0, 0.66), (-3.0, 0.68), (-3.0, 0.69), (-4.0, 0.78), (-4.0, 0.81), (-4.0, 0.9), (-4.0, 2.0),
           (-5.0, 0.82), (-5.0, 0.9), (-5.0, 50.0), (-2.0, 0.5), (-1.0, 0.9), (0.0, 0.5)]


@pytest.mark.parametrize("kappa,frac", _POINTS)
def test_spherical_storage_is_the_global_minimum(kappa, frac):
    """The returned q is the lowest of every minimum of phi found by an independent scan."""
    ac = P.gardner_capacity(kappa)
    a_max = M.spherical_folds(kappa)[0][1] if M.spherical_folds(kappa) else ac
    alpha = min(frac * ac, 0.5 * (a_max + ac)) if frac > 1 else frac * ac
    if not alpha < ac:
        alpha = 0.999 * ac
    r = P.spherical_storage(alpha, kappa)
    mins = _stationary_by_scan("spherical", alpha, kappa)
    assert mins, "the scan found no minimum"
    best = min(v for _, v in mins)
    assert r.entropy <= best + 1e-9 * max(1.0, abs(best))
    assert any(abs(q - r.q) <= 1e-7 * max(q, 1e-300) + 1e-12 for q, _ in mins)
    if len(mins) > 1:
        other = r.extra["other_minimum"]
        assert other["entropy"] >= r.entropy


def test_vectorized_agrees_with_pointwise_through_the_jump():
    kappa = -4.0
    ac = P.gardner_capacity(kappa)
    a = np.linspace(0.7, 0.95, 26) * ac
    v = P.spherical_storage(a, kappa)
    for i, x in enumerate(a):
        s = P.spherical_storage(float(x), kappa)
        assert abs(v.q[i] - s.q) <= 1e-9 * s.q + 1e-15
    # the RS minimum jumps from small q (stable) to large q (AT-unstable) at one alpha
    jump = np.flatnonzero(np.diff(v.q) > 0.5)
    assert jump.size == 1
    assert v.rs_stable[jump[0]] and not v.rs_stable[jump[0] + 1]


def test_at_line_is_the_first_order_point_below_the_cusp():
    """At kappa = -4 the small-q minimum is RS-stable up to the jump: the AT line is the jump."""
    kappa = -4.0
    a_at = P.spherical_storage_at_line(kappa)
    lo, hi = P.spherical_storage(a_at * (1 - 1e-7), kappa), P.spherical_storage(a_at * (1 + 1e-7), kappa)
    assert lo.q < 0.01 < 0.9 < hi.q
    assert lo.replicon > 0.5 and hi.replicon < -1.0
    # and the two minima have equal phi there
    assert abs(lo.entropy - hi.entropy) < 1e-5 * abs(lo.entropy)


@pytest.mark.parametrize("kappa,frac", [(-4.0, 0.9), (-4.0, 0.95), (-3.0, 0.9), (-5.0, 0.9)])
def test_binary_storage_global_minimum(kappa, frac):
    amax = 2 / math.pi * P.gardner_capacity(kappa)
    r = P.binary_storage(frac * amax, kappa)
    other = r.extra["other_minimum"]
    assert r.entropy < other["entropy"]
    # independent: phi at both stationary points from the public free entropy
    for s, q in M.stationary_points("binary", frac * amax, kappa):
        if math.isfinite(s):
            assert r.entropy <= P.binary_storage_free_entropy([q, math.exp(s)], frac * amax, kappa) + 1e-10


# ---------------------------------------------------------------------------- domains
def test_storage_kappa_domain():
    with pytest.raises(ValueError, match="kappa must be >= -5"):
        P.spherical_storage(1.0, -6.0)
    with pytest.raises(ValueError, match="kappa must be >= -5"):
        P.binary_storage(1.0, -5.5)
    with pytest.raises(ValueError, match="kappa must be >= -5"):
        P.spherical_storage_at_line(-50)
    assert math.isinf(P.gardner_capacity(-38.0))      # overflow, documented
    assert math.isfinite(P.gardner_capacity(-37.0))


@pytest.mark.parametrize("q", [1e-4, 0.3, 0.9, 0.999, 0.99999])
def test_storage_quadrature_accurate_at_the_domain_end(q):
    """The storage channel at kappa = KAPPA_MIN against 40-digit quadrature (1e-11 relative)."""
    mp.mp.dps = 40
    k = KAPPA_MIN

    def integrand(j):
        def f(t):
            u = (k - mp.sqrt(q) * t) / mp.sqrt(1 - q)
            h = mp.erfc(u / mp.sqrt(2)) / 2
            w = mp.exp(-t * t / 2) / mp.sqrt(2 * mp.pi)
            return w * (mp.log(h) if j == 0 else (mp.exp(-u * u / 2) / mp.sqrt(2 * mp.pi) / h) ** 2)
        return f

    c = k / mp.sqrt(q)
    brk = [-mp.inf, c - 10, c - 3, c, c + 3, c + 10, 0, mp.inf]
    e = _st_out(q, k)
    for j in (0, 1):
        ref = float(mp.quad(integrand(j), brk))
        assert abs(e[j] / ref - 1) < 1e-11


def test_rsb_kappa_domain_and_fast_failure():
    for ansatz in ("1rsb", "frsb"):
        with pytest.raises(ValueError, match="kappa must be >= -3"):
            P.gardner_capacity(-6, ansatz=ansatz)
    P.gardner_capacity_point(-1.0, "1rsb")   # warm the kernels
    t = time.perf_counter()
    with pytest.raises(ValueError, match="alpha_J\\^1RSB"):
        P.spherical_storage(13.0, kappa=-1, ansatz="1rsb")
    assert time.perf_counter() - t < 5.0


@pytest.mark.parametrize("kappa", [-3.0, -2.5])
def test_rsb_jamming_at_the_domain_end(kappa):
    r1 = P.gardner_capacity_point(kappa, "1rsb")
    assert r1.residual < 1e-9 and r1.alpha_c < P.gardner_capacity(kappa)
    assert np.all(r1.hessian_eigenvalues > 0)


@pytest.mark.slow
@pytest.mark.parametrize("kappa", [-3.0, -2.75, -2.25])
def test_frsb_jamming_at_the_domain_end(kappa):
    r1 = P.gardner_capacity_point(kappa, "1rsb")
    rf = P.gardner_capacity_point(kappa, "frsb")
    assert rf.alpha_c + rf.extra["error"] < r1.alpha_c


# ---------------------------------------------------------------------------- teacher-student
def _ts_psi(R, alpha):
    """psi(R) = phi(R, R_hat*(R)) of the Ising teacher-student free entropy, R_hat from its own
    stationarity (public gradient), by bracketed root: an independent route to every branch."""
    from scipy import optimize
    g = lambda rh: P.binary_teacher_student_gradient([R, rh], alpha)[1]  # noqa: E731
    rh = optimize.brentq(g, 1e-12, 1e6, xtol=1e-14)
    return P.binary_teacher_student_free_entropy([R, rh], alpha)


@pytest.mark.parametrize("alpha,n", [(0.8, 60), (1.24, 60), (1.25, 60), (1.49, 60)]
                         + [pytest.param(a, 400, marks=pytest.mark.slow) for a in (0.3, 1.2, 1.4, 2.0, 3.0)])
def test_binary_teacher_student_equilibrium_is_the_global_maximum(alpha, n):
    """Gibbs learning of an Ising teacher: the equilibrium is the largest free entropy among every
    local maximum of psi(R) on a scan (60 points by default, 400 in the slow variant) and the
    perfect state R = 1 (entropy 0)."""
    Rs = np.linspace(1e-3, 1 - 1e-6, n)
    psi = np.array([_ts_psi(R, alpha) for R in Rs])
    from scipy import optimize
    i = np.flatnonzero((psi[1:-1] >= psi[:-2]) & (psi[1:-1] >= psi[2:])) + 1
    peaks = [-optimize.minimize_scalar(lambda R: -_ts_psi(R, alpha), bounds=(Rs[j - 1], Rs[j + 1]),
                                       method="bounded", options={"xatol": 1e-10}).fun for j in i]
    best = max([0.0] + peaks)
    r = P.binary_teacher_student(alpha)
    assert r.entropy >= best - 1e-6
    assert r.entropy <= best + 1e-6 or r.R == 1.0
