"""Perceptron simulation backends: enumeration (Ising), LP/LDP (spherical storage),
hit-and-run (spherical teacher-student), finite-size helpers.

Physics checks: brute-force agreement, exact finite-N identities (annealed counts, Cover's
theorem, uniform measure on a half-sphere), symmetries, and theory vs simulation with
stated error bars.  Theory values come from ``statmech.perceptron`` when it is available;
otherwise from the clearly marked local STAND-INS below (independent implementations of
the same RS equations, checked against the published numbers in ``test_standins``).
"""
import math
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy.optimize import brentq
from scipy.special import comb, gammaln

from statmech.gaussian import G, H, gauss_hermite, inv_mills, log_2cosh, log_H
from statmech.simulate import enumeration as en
from statmech.simulate import finite_size as fs
from statmech.simulate import lp
from statmech.simulate import version_space as vs


# ----------------------------------------------------------------------------- theory
def gardner_alpha_c(kappa):
    """alpha_c(kappa) = 1 / int_{-kappa}^inf Dt (t + kappa)^2 = 1/((1+k^2) H(-k) + k G(k))."""
    return 1.0 / ((1 + kappa ** 2) * H(-kappa) + kappa * G(kappa))


# STAND-IN (tests only): Gibbs learning, Engel & Van den Broeck Eq. (2.42)
def _standin_R(alpha):
    z, w = gauss_hermite(200)

    def f(R):
        integ = np.sum(w * np.exp(-R * z * z / 2 - log_H(-math.sqrt(R) * z)))
        return R / math.sqrt(1 - R) - alpha / math.pi * integ
    return brentq(f, 1e-12, 1 - 1e-12, xtol=1e-15)


# STAND-IN (tests only): RS entropy of the Ising perceptron (Gardner & Derrida 1988)
def _standin_binary_entropy(alpha, kappa=0.0):
    z, w = gauss_hermite(200)
    q = 0.5
    for _ in range(5000):
        u = (kappa - math.sqrt(q) * z) / math.sqrt(1 - q)
        qh = alpha / (1 - q) * np.sum(w * inv_mills(u) ** 2)
        qn = np.sum(w * np.tanh(math.sqrt(qh) * z) ** 2)
        if abs(qn - q) < 1e-15:
            break
        q = 0.5 * q + 0.5 * qn
    u = (kappa - math.sqrt(q) * z) / math.sqrt(1 - q)
    return float(-qh * (1 - q) / 2 + np.sum(w * log_2cosh(math.sqrt(qh) * z)) + alpha * np.sum(w * log_H(u)))


def theory_R(alpha):
    try:
        from statmech.perceptron import spherical_teacher_student
        return float(spherical_teacher_student(alpha).order_params["R"])
    except (ImportError, AttributeError, KeyError):
        return _standin_R(alpha)


def theory_binary_entropy(alpha):
    try:
        from statmech.perceptron import binary_storage
        return float(binary_storage(alpha).thermo["entropy"])
    except (ImportError, AttributeError, KeyError):
        return _standin_binary_entropy(alpha)


def test_standins():
    assert _standin_R(1.0) == pytest.approx(0.486263637016, abs=1e-11)
    assert math.acos(_standin_R(5.0)) / math.pi == pytest.approx(0.118006033298, abs=1e-11)
    assert gardner_alpha_c(0.0) == pytest.approx(2.0, rel=1e-14)
    assert gardner_alpha_c(1.0) == pytest.approx(0.519572229605, rel=1e-11)
    # annealed bound (1 - alpha) ln 2 is above the quenched RS entropy and touches it at alpha -> 0
    for a in (0.1, 0.5):
        assert _standin_binary_entropy(a) < (1 - a) * math.log(2)
    assert _standin_binary_entropy(1e-4) == pytest.approx((1 - 1e-4) * math.log(2), abs=1e-7)


# ----------------------------------------------------------------------------- enumeration
def _brute(xi, sigma, kappa):
    P, N = xi.shape
    codes = np.arange(2 ** N)
    W = en.codes_to_weights(codes, N).astype(float)
    if P == 0:
        return codes, W
    ok = np.all(sigma[:, None] * (xi @ W.T) / math.sqrt(N) > kappa, axis=0)
    return codes[ok], W


@pytest.mark.parametrize("dist", ["binary", "gaussian"])
@pytest.mark.parametrize("kappa", [0.0, 0.4, -0.3])
def test_enumeration_matches_brute_force(dist, kappa, rng):
    for N, P in [(1, 1), (5, 3), (9, 6), (12, 9), (11, 0)]:
        xi = en.random_patterns(rng, P, N, dist)
        sigma = rng.choice([-1.0, 1.0], size=P)
        got = en.solutions_bitmask(xi, sigma, kappa)
        want, W = _brute(xi, sigma, kappa)
        assert np.array_equal(got, want)
        ref = int(rng.integers(0, 2 ** N))
        pc = en.prefix_counts(xi, sigma, kappa, reference=ref)
        for p in range(P + 1):
            sol_p, _ = _brute(xi[:p], sigma[:p], kappa)
            assert pc.n_solutions[p] == sol_p.size
            assert np.array_equal(pc.overlap_counts[p], np.bincount(en.hamming_distances(sol_p, ref), minlength=N + 1))
        assert pc.capacity == max(p for p in range(P + 1) if pc.n_solutions[p] > 0)
        assert en.count_solutions(xi, sigma, kappa) == want.size


@settings(max_examples=20, deadline=None)
@given(N=st.integers(1, 14), P=st.integers(1, 10), kappa=st.sampled_from([0.0, 0.3, 1.0]),
       seed=st.integers(0, 2 ** 31))
def test_popcount_path_equals_gray_code_path(N, P, kappa, seed):
    """+-1 patterns: the popcount kernels and the Gray-code incremental-field kernels agree."""
    rng = np.random.default_rng(seed)
    xi = en.random_patterns(rng, P, N, "binary")
    sigma = rng.choice([-1.0, 1.0], size=P)
    At, thr, _, _ = en._prepare(xi, sigma, kappa)
    xc = en._pattern_codes(At)
    ref = np.int64(rng.integers(0, 2 ** N))
    assert np.array_equal(en._enum_prefix_pop(xc, N, thr, ref, True), en._enum_prefix(At, thr, ref, True))
    assert np.array_equal(np.sort(en._enum_codes_pop(xc, N, thr)), np.sort(en._enum_codes(At, thr)))


@settings(max_examples=25, deadline=None)
@given(N=st.integers(1, 13), P=st.integers(1, 12), seed=st.integers(0, 2 ** 31))
def test_enumeration_symmetry_w_to_minus_w(N, P, seed):
    """kappa = 0: w solves (xi, sigma) iff -w solves (xi, -sigma); -w has the complement code."""
    rng = np.random.default_rng(seed)
    xi = rng.standard_normal((P, N))
    sigma = rng.choice([-1.0, 1.0], size=P)
    a = en.solutions_bitmask(xi, sigma)
    b = en.solutions_bitmask(xi, -sigma)
    mask = (1 << N) - 1
    assert np.array_equal(np.sort(a ^ mask), b)
    # weights <-> codes round trip
    W = en.codes_to_weights(a, N)
    assert np.array_equal(en.weights_to_codes(W) if a.size else a, a)


def test_pair_distance_histogram(rng):
    codes = np.unique(rng.integers(0, 2 ** 10, size=60))
    h = en.pair_distance_histogram(codes, 10)
    d = [bin(int(x) ^ int(y)).count("1") for i, x in enumerate(codes) for y in codes[i + 1:]]
    assert np.array_equal(h, np.bincount(d, minlength=11))


def test_annealed_count_is_exact():
    """E[N_sol] = 2^N H(kappa)^P for Gaussian patterns (|w|^2 = N, w.xi/sqrt(N) ~ N(0,1))."""
    N, n = 12, 300
    for kappa in (0.0, 0.5):
        s = en.binary_storage_enumeration(N, n, alpha_max=1.0, kappa=kappa, seed=3, dist="gaussian", progress=False)
        for P in (3, 6, 9):
            c = s.counts[:, P].astype(float)
            exact = 2.0 ** N * H(kappa) ** P
            assert abs(c.mean() - exact) < 4 * c.std(ddof=1) / math.sqrt(n)


def test_annealed_count_binary_patterns():
    """+-1 patterns: P(sigma w.xi > kappa sqrt N) is a binomial tail (exact, with the strict inequality)."""
    N, n, kappa = 11, 300, 0.3
    s = en.binary_storage_enumeration(N, n, alpha_max=0.8, kappa=kappa, seed=5, progress=False)
    k = np.arange(N + 1)
    field = 2 * k - N
    p1 = np.sum(comb(N, k)[field > kappa * math.sqrt(N)]) / 2 ** N
    for P in (2, 5, 8):
        c = s.counts[:, P].astype(float)
        assert abs(c.mean() - 2.0 ** N * p1 ** P) < 4 * c.std(ddof=1) / math.sqrt(n)


def test_quenched_entropy_vs_rs_small_N():
    """<ln N_sol>/N at N = 16 vs the RS entropy.  Stated tolerance: 3 standard errors plus a
    finite-size allowance 0.15/N (measured corrections at N = 8..20 are below 0.01)."""
    N, n = 16, 120
    s = en.binary_storage_enumeration(N, n, alpha_max=0.5, seed=11, dist="gaussian", progress=False)
    alpha, sv, se, sat = s.entropy()
    with pytest.raises(ValueError, match="censored"):
        s.alpha_50()                                  # alpha_max = 0.5 is far below capacity
    for P in (4, 8):
        th = theory_binary_entropy(P / N)
        assert sat[P] == 1.0
        assert abs(sv[P] - th) < 3 * se[P] + 0.15 / N, (P, sv[P], se[P], th)


def test_binary_teacher_student_exact_annealed_and_monotone():
    """E[#students at distance d after p examples] = binom(N,d) (1 - arccos(R_d)/pi)^p (Gaussian
    examples, exact); the teacher is always in the version space; <R> increases with alpha."""
    N, n = 11, 200
    s = en.binary_teacher_student_enumeration(N, n, alpha_max=1.5, seed=2, dist="gaussian", progress=False)
    oc = s.overlap_counts.astype(float)
    assert np.all(oc[:, :, 0] == 1)                      # teacher, at distance 0, always a solution
    Rd = 1 - 2 * np.arange(N + 1) / N
    for p in (3, 8, 16):
        exact = comb(N, np.arange(N + 1)) * (1 - np.arccos(Rd) / np.pi) ** p
        tot = oc[:, p].sum(axis=1)
        assert abs(tot.mean() - exact.sum()) < 4 * tot.std(ddof=1) / math.sqrt(n)
    alpha, R, R_err, eps, eps_err, pp = s.gibbs()
    assert R[0] == pytest.approx(0.0, abs=1e-12)        # no data: uniform over the hypercube
    assert np.all(np.diff(R) > -3 * R_err[1:])
    assert R[-1] > 0.6 and eps[-1] < 0.3


def test_binary_teacher_student_annealed_formula():
    """The exact finite-N annealed curve: R = 0, eps = 1/2 without data, monotone, and equal to
    the ratio-of-averages of the enumeration within its sampling error."""
    R0, e0 = en.binary_teacher_student_annealed(13, 0.0)
    assert R0 == pytest.approx(0.0, abs=1e-12) and e0 == pytest.approx(0.5, abs=1e-12)
    R, e = en.binary_teacher_student_annealed(13, np.linspace(0, 3, 40))
    assert np.all(np.diff(R) >= -1e-12) and np.all(np.diff(e) <= 1e-12) and e[-1] < 0.05
    s = en.binary_teacher_student_enumeration(13, 400, alpha_max=0.5, seed=4, dist="gaussian", progress=False)
    alpha, Ra, ea = s.gibbs_annealed()
    Rx, ex = en.binary_teacher_student_annealed(13, alpha)
    assert np.max(np.abs(Ra - Rx)) < 0.03


@pytest.mark.slow
def test_binary_capacity_trend_slow():
    """Finite-N capacity <P_c>/N (Krauth-Opper definition, +-1 patterns, odd N = 15..25)
    extrapolated linearly in 1/N is consistent with the Krauth-Mezard 0.8330786."""
    Ns, vals, errs = [15, 17, 19, 21, 23, 25], [], []
    for N in Ns:
        s = en.binary_storage_enumeration(N, 300 if N < 25 else 200, alpha_max=2.5, seed=9, progress=False)
        assert not s.capacity_censored
        m, e = s.mean_capacity()
        a50, a50_err = s.alpha_50()
        # two definitions of the finite-N capacity: the fitted latent threshold is ~ P_c + 1/2
        assert abs(a50 - (m + 0.5 / N)) < 0.04
        vals.append(m)
        errs.append(e)
    ex = fs.extrapolate(Ns, vals, errs)
    assert ex.y_inf_err < 0.04
    assert abs(ex.y_inf - 0.8330786) < 3 * ex.y_inf_err + 0.01


@pytest.mark.slow
def test_binary_entropy_extrapolation_slow():
    """<ln N_sol>/N at alpha = 0.5 for N = 8..20 (Gaussian patterns) extrapolated in 1/N
    agrees with the RS entropy within 3 standard errors."""
    Ns, vals, errs = [8, 10, 12, 14, 16, 18, 20], [], []
    for N in Ns:
        s = en.binary_storage_enumeration(N, 400, alpha_max=0.5, seed=21, dist="gaussian", progress=False)
        _, sv, se, _ = s.entropy()
        vals.append(sv[N // 2])
        errs.append(se[N // 2])
    ex = fs.extrapolate(Ns, vals, errs)
    assert abs(ex.y_inf - theory_binary_entropy(0.5)) < 3 * ex.y_inf_err


# ----------------------------------------------------------------------------- LP / LDP
def test_max_stability_certified_and_matches_direct_qp(rng):
    from scipy.optimize import minimize
    N, P = 8, 10
    xi = rng.standard_normal((P, N))
    sigma = rng.choice([-1.0, 1.0], size=P)
    xi = xi[:P]
    r = lp.max_stability(xi[:6], sigma[:6])
    assert r.separable and r.kappa_upper - r.kappa_lower < 1e-12
    assert np.linalg.norm(r.w) == pytest.approx(math.sqrt(N))
    stab = sigma[:6] * (xi[:6] @ r.w) / math.sqrt(N)
    assert stab.min() == pytest.approx(r.kappa_max, abs=1e-12)
    # direct: maximize t s.t. stabilities >= t, |w|^2 = N (SLSQP from the LDP point)
    A = sigma[:6, None] * xi[:6] / math.sqrt(N)
    cons = [{"type": "ineq", "fun": lambda v: A @ v[:N] - v[N]},
            {"type": "eq", "fun": lambda v: v[:N] @ v[:N] - N}]
    best = minimize(lambda v: -v[N], np.r_[rng.standard_normal(N), -5.0], constraints=cons, method="SLSQP",
                    options={"ftol": 1e-14, "maxiter": 2000})
    assert -best.fun <= r.kappa_max + 1e-8          # nothing beats the certified optimum
    assert -best.fun == pytest.approx(r.kappa_max, abs=1e-6)


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2 ** 31), P=st.integers(1, 30))
def test_max_stability_rotation_invariant_and_monotone(seed, P):
    rng = np.random.default_rng(seed)
    N = 10
    xi = rng.standard_normal((P, N))
    sigma = rng.choice([-1.0, 1.0], size=P)
    Q, _ = np.linalg.qr(rng.standard_normal((N, N)))
    a = lp.max_stability(xi, sigma)
    b = lp.max_stability(xi @ Q, sigma)
    assert a.separable == b.separable == lp.lp_separable(xi, sigma)[0] == lp.lp_separable(xi, sigma, method="lp")[0]
    if a.separable:
        assert a.kappa_max == pytest.approx(b.kappa_max, rel=1e-9, abs=1e-12)
        if P > 1:   # adding patterns can only lower the margin
            assert lp.max_stability(xi[:-1], sigma[:-1]).kappa_max >= a.kappa_max - 1e-12
        for k in (0.5 * a.kappa_max, 1.5 * a.kappa_max):
            assert lp.is_storable(xi, sigma, k) == (k <= a.kappa_max)


def test_cover_theorem_fraction_and_mean():
    """kappa = 0: P(P_c >= P) is Cover's binomial formula and E[P_c] = 2N, exactly, at every N."""
    N, n = 20, 300
    s = lp.spherical_storage_lp(N, n, 0.0, seed=1, progress=False)
    assert s.n_censored == 0
    P = np.array([30, 36, 40, 44, 50])
    frac, _, _ = s.fraction(P / N)
    exact = lp.cover_probability(P, N)
    assert np.all(np.abs(frac - exact) < 4 * np.sqrt(exact * (1 - exact) / n) + 1e-12)
    m, e = s.mean_capacity()
    assert abs(m - 2.0) < 4 * e


def test_kappa_half_extrapolation_small_sizes():
    """kappa = 0.5, N = 25..100: the 50 % point extrapolated in 1/N is within 2 % of alpha_c(0.5)."""
    samples = [lp.spherical_storage_lp(N, 150, 0.5, seed=4, progress=False) for N in (25, 50, 100)]
    ex = lp.capacity_extrapolation(samples)
    ac = gardner_alpha_c(0.5)
    assert abs(ex.y_inf - ac) < 0.02 * ac
    assert abs(ex.y_inf - ac) < 3 * ex.y_inf_err + 0.005


@pytest.mark.slow
@pytest.mark.parametrize("kappa", [0.0, 0.5])
def test_capacity_extrapolation_N50_to_400_slow(kappa):
    """N = 50, 100, 200, 400: 50 % point extrapolated to N -> inf within 2 % of alpha_c(kappa)."""
    n = {50: 200, 100: 120, 200: 60, 400: 30}
    with ThreadPoolExecutor(2) as ex_:
        samples = [lp.spherical_storage_lp(N, n[N], kappa, seed=8, executor=ex_, progress=False) for N in n]
    ex = lp.capacity_extrapolation(samples)
    ac = gardner_alpha_c(kappa)
    assert abs(ex.y_inf - ac) < 0.02 * ac
    assert abs(ex.y_inf - ac) < 3 * ex.y_inf_err + 0.005


def test_lp_method_auto_equals_pure_lp():
    """kappa = 0 capacities certified by the Farkas/LDP path equal those certified by HiGHS alone."""
    a = lp.spherical_storage_lp(30, 12, 0.0, seed=6, progress=False)
    b = lp.spherical_storage_lp(30, 12, 0.0, seed=6, method="lp", progress=False)
    assert np.array_equal(a.capacity, b.capacity)


def test_process_pool_executor_reproducible():
    from concurrent.futures import ProcessPoolExecutor
    with ProcessPoolExecutor(2) as ex:
        b = en.binary_storage_enumeration(9, 4, seed=1, executor=ex, progress=False)
        c = vs.spherical_teacher_student_sampling(20, [1.0], 2, n_sweeps=40, seed=1, executor=ex, progress=False)
    assert np.array_equal(b.counts, en.binary_storage_enumeration(9, 4, seed=1, progress=False).counts)
    assert np.array_equal(c.R, vs.spherical_teacher_student_sampling(20, [1.0], 2, n_sweeps=40, seed=1,
                                                                     progress=False).R)


def test_lp_reproducible_and_executor_independent():
    a = lp.spherical_storage_lp(15, 6, 0.3, seed=12, progress=False)
    with ThreadPoolExecutor(2) as ex:
        b = lp.spherical_storage_lp(15, 6, 0.3, seed=12, executor=ex, progress=False)
    assert np.array_equal(a.capacity, b.capacity)
    c = lp.spherical_storage_lp(15, 6, 0.3, seed=13, progress=False)
    assert not np.array_equal(a.capacity, c.capacity)


# ----------------------------------------------------------------------------- hit-and-run
def test_hit_and_run_uniform_on_half_sphere():
    """One constraint a.x > 0: the direction is uniform on the half-sphere, so
    E[a.u] = E|u_1| = Gamma(N/2) / (sqrt(pi) Gamma((N+1)/2)) and E[(a.u)^2] = 1/N."""
    N = 20
    a = np.zeros((1, N))
    a[0, 0] = 1.0
    x0 = np.full(N, 0.1)
    tr, x = vs.hit_and_run(a, x0, 6000, seed=3, refs=a)
    v = tr[500:, 0]
    exact = math.exp(gammaln(N / 2) - gammaln((N + 1) / 2)) / math.sqrt(math.pi)
    tau = vs.autocorr_time(v)
    err = v.std() * math.sqrt(2 * tau / v.size)
    assert np.all(v > 0)
    assert abs(v.mean() - exact) < 4 * err
    assert abs(np.mean(v ** 2) - 1 / N) < 4 * np.std(v ** 2) * math.sqrt(2 * tau / v.size)


def test_version_space_R_vs_theory_small():
    """Gibbs learning, N = 60, alpha = 1 and 3: R (and the student-student q, equal to R by
    the Nishimori symmetry) agree with theory within 3.5 error bars + 1/N finite size."""
    s = vs.spherical_teacher_student_sampling(60, [1.0, 3.0], n_instances=6, n_sweeps=1200, seed=5, progress=False)
    for k, a in enumerate(s.alpha):
        th = theory_R(a)
        assert abs(s.R[k] - th) < 3.5 * s.R_err[k] + 1.0 / 60, (a, s.R[k], s.R_err[k], th)
        assert abs(s.q[k] - th) < 3.5 * s.q_err[k] + 1.0 / 60
        assert s.mixed_fraction[k] >= 0.5


@pytest.mark.slow
def test_version_space_R_vs_theory_N150_slow():
    s = vs.spherical_teacher_student_sampling(150, [0.5, 1.0, 2.0, 5.0], n_instances=8, n_sweeps=3000, seed=7,
                                              progress=False)
    for k, a in enumerate(s.alpha):
        th = theory_R(a)
        assert abs(s.R[k] - th) < 3 * s.R_err[k] + 0.5 / 150, (a, s.R[k], s.R_err[k], th)
        assert s.mixed_fraction[k] >= 0.75


def test_version_space_without_data_is_uniform():
    """alpha = 0: the student is uniform on the sphere, R = 0 within 1/sqrt(N)-sized errors."""
    s = vs.spherical_teacher_student_sampling(40, [0.0], 4, n_sweeps=200, seed=1, progress=False)
    assert abs(s.R[0]) < 4 * s.R_err[0] and s.R_err[0] < 0.2
    assert abs(s.q[0]) < 4 * s.q_err[0]


def test_gelman_rubin_detects_unmixed():
    rng = np.random.default_rng(0)
    good = rng.standard_normal((3, 500))
    bad = good + np.array([[0.0], [1.0], [2.0]])
    assert vs.gelman_rubin(good) < 1.02
    assert vs.gelman_rubin(bad) > 1.3
    ar = np.zeros(4000)
    for t in range(1, ar.size):
        ar[t] = 0.9 * ar[t - 1] + rng.standard_normal()
    assert vs.autocorr_time(ar) == pytest.approx((1 + 0.9) / (1 - 0.9) / 2, rel=0.25)


# ----------------------------------------------------------------------------- finite-size helpers
def test_extrapolate_and_censored_fit():
    N = np.array([10.0, 20, 40, 80, 160])
    y = 0.8 + 1.3 / N - 2.0 / N ** 2
    ex = fs.extrapolate(N, y, np.full(5, 1e-6), exponents=(1, 2))
    assert ex.y_inf == pytest.approx(0.8, abs=1e-9)
    assert ex(N) == pytest.approx(y, abs=1e-9)
    rng = np.random.default_rng(1)
    X = rng.normal(37.3, 4.0, size=4000)
    mu, mu_err, sig, sig_err = fs.censored_normal_fit(np.floor(X))
    assert abs(mu - 37.3) < 4 * mu_err and abs(sig - 4.0) < 4 * sig_err
    lo, hi = fs.binomial_interval(50, 100)
    assert lo < 0.5 < hi and hi - lo == pytest.approx(2 * 0.05, rel=0.02)
    x = np.linspace(0, 2, 21)
    n = np.full(21, 400)
    k = rng.binomial(n, H((x - 1.1) / 0.2))
    tp = fs.transition_point(x, k, n)
    assert abs(tp.x50 - 1.1) < 4 * tp.x50_err


def test_instance_rng_reproducible():
    a = fs.instance_rng(3, 10, 2).standard_normal(4)
    b = fs.instance_rng(3, 10, 2).standard_normal(4)
    c = fs.instance_rng(3, 10, 3).standard_normal(4)
    assert np.array_equal(a, b) and not np.array_equal(a, c)


# ----------------------------------------------------------------------------- bad input
def test_bad_input_raises_value_error():
    xi = np.ones((2, 3))
    with pytest.raises(ValueError, match="labels"):
        en.solutions_bitmask(xi, [1, 0])
    with pytest.raises(ValueError, match="N"):
        en.solutions_bitmask(np.ones((1, 41)), [1])
    with pytest.raises(ValueError, match="kappa"):
        en.solutions_bitmask(xi, [1, 1], kappa=float("nan"))
    with pytest.raises(ValueError, match="kappa"):
        lp.is_storable(xi, [1, 1], kappa=-0.5)
    with pytest.raises(ValueError, match="n_instances"):
        lp.spherical_storage_lp(10, 1)
    with pytest.raises(ValueError, match="alpha"):
        vs.spherical_teacher_student_sampling(10, [-1.0])
    with pytest.raises(ValueError, match="N must be odd"):
        en.binary_teacher_student_enumeration(10, 3)
    with pytest.raises(ValueError, match="x0"):
        vs.hit_and_run(np.ones((1, 3)), -np.ones(3) * 0.1, 10)
