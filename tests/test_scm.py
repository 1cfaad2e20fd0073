"""Soft committee machines at high temperature (statmech.scm): physics checks."""
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy import integrate, special

from statmech import ConvergenceError, scm
from statmech.scm._equations import _kern


def erf_act(x):
    return special.erf(np.asarray(x) / math.sqrt(2.0))


def relu_act(x):
    return np.maximum(np.asarray(x, dtype=float), 0.0)


def site_symmetric(K, R, S, C):
    Rm = np.full((K, K), S) + (R - S) * np.eye(K)
    Qm = np.full((K, K), C) + (1 - C) * np.eye(K)
    return Rm, Qm


# --------------------------------------------------------------- generalization error
@pytest.mark.parametrize("K", [1, 2, 5, 10])
def test_random_student_is_K_independent(K):
    Rm, Qm = site_symmetric(K, 0.0, 0.0, 0.0)
    assert scm.generalization_error(Rm, Qm, np.eye(K), "erf") == pytest.approx(1 / 3, rel=1e-14)
    assert scm.generalization_error(Rm, Qm, np.eye(K), "relu") == pytest.approx(0.5 - 0.5 / math.pi, rel=1e-14)
    if K > 1:
        fe = scm.free_energy(0.0, K, 0.0, 0.0, 0.0, "erf", derivatives=True)
        assert fe.generalization_error == pytest.approx(1 / 3, rel=1e-14)
        fe = scm.free_energy(0.0, K, 0.0, 0.0, 0.0, "relu", derivatives=True)
        assert fe.generalization_error == pytest.approx(0.5 - 0.5 / math.pi, rel=1e-14)


def _quad_pair(g, a, b, c, kink=False):
    """E[g(x) g(y)] for var a, b and covariance c by 2-D adaptive quadrature (scipy).

    With ``kink`` (g = 0 for negative arguments) the domain is cut along the kink lines."""
    sa, sb = math.sqrt(a), math.sqrt(b)
    r = c / (sa * sb)
    s = math.sqrt(1 - r * r)
    f = lambda y, x: g(sa * x) * g(sb * (r * x + s * y)) * math.exp(-(x * x + y * y) / 2) / (2 * math.pi)
    if kink:
        v, err = integrate.dblquad(f, 0, 14, lambda x: -r * x / s, 14, epsabs=1e-13, epsrel=1e-12)
    else:
        v, err = integrate.dblquad(f, -14, 14, -14, 14, epsabs=1e-13, epsrel=1e-12)
    return v


@pytest.mark.parametrize("a,b,c", [(1.0, 1.0, 0.3), (0.7, 1.4, -0.5), (2.0, 0.5, 0.99)])
def test_pair_moments_closed_forms_vs_2d_quadrature(a, b, c):
    g_erf = lambda x: math.erf(x / math.sqrt(2))
    g_relu = lambda x: max(x, 0.0)
    for name, g in (("erf", g_erf), ("relu", g_relu), ("linear", lambda x: x)):
        closed = float(getattr(_kern, f"pm2_{name}")(a, b, c))
        assert closed == pytest.approx(_quad_pair(g, a, b, c, kink=name == "relu"), abs=1e-10), name


def test_generalization_error_general_overlaps_closed_vs_callable_and_mc(rng):
    # K = 2 student, M = 3 teacher, random (non-normalized) weights in N = 6 dimensions
    W = rng.normal(size=(2, 6)) / math.sqrt(6) * 1.3
    Ws = rng.normal(size=(3, 6)) / math.sqrt(6)
    R, Q, T = W @ Ws.T, W @ W.T, Ws @ Ws.T
    for name, g in (("erf", erf_act), ("relu", relu_act)):
        closed = scm.generalization_error(R, Q, T, name)
        generic = scm.generalization_error(R, Q, T, g)
        # piecewise tanh-sinh quadrature with breakpoints at the kinks: ~1e-13 for both
        assert closed == pytest.approx(generic, rel=1e-11)
        # Monte Carlo of eq. 25 itself (outputs K^-1/2 sum g, M^-1/2 sum g)
        xi = rng.normal(size=(200_000, 6))
        d = g(xi @ W.T).sum(1) / math.sqrt(2) - g(xi @ Ws.T).sum(1) / math.sqrt(3)
        e = 0.5 * d ** 2
        assert abs(e.mean() - closed) < 4 * e.std() / math.sqrt(e.size)


def test_site_symmetric_eps_matches_general_and_seed_eq12():
    K, R, S, C = 4, 0.6, 0.1, 0.05
    Rm, Qm = site_symmetric(K, R, S, C)
    for act in ("erf", "relu", "linear"):
        fe = scm.free_energy(1.0, K, R, S, C, act, derivatives=True)
        assert fe.generalization_error == pytest.approx(scm.generalization_error(Rm, Qm, np.eye(K), act), rel=1e-13)
    # Eq. 12 (ReLU) of Oostwal, Straat & Biehl (arXiv:1910.07476) as printed
    h = lambda x: x / 4 + (math.sqrt(1 - x * x) + x * math.asin(x)) / (2 * math.pi)
    eq12 = (K + K * (K - 1) / (2 * math.pi) - 2 * K * h(R) + K * (K - 1) * h(C) - 2 * K * (K - 1) * h(S)) / (2 * K)
    assert scm.free_energy(1.0, K, R, S, C, "relu", derivatives=True).generalization_error == pytest.approx(eq12, rel=1e-14)
    # their Eq. 11 (erf) is K times too small: the corrected form is K * Eq. 11
    eq11 = (1 / 3 + (K - 1) / math.pi * (math.asin(C / 2) - 2 * math.asin(S / 2)) - 2 / math.pi * math.asin(R / 2)) / K
    assert scm.free_energy(1.0, K, R, S, C, "erf", derivatives=True).generalization_error == pytest.approx(K * eq11, rel=1e-14)


@settings(max_examples=30, deadline=None)
@given(st.integers(2, 5), st.integers(0, 10_000))
def test_eps_nonnegative_and_permutation_invariant(K, seed):
    r = np.random.default_rng(seed)
    W = r.normal(size=(K, 3 * K))
    W /= np.linalg.norm(W, axis=1, keepdims=True) / math.sqrt(3 * K)
    Ws = np.linalg.qr(r.normal(size=(3 * K, K)))[0].T * math.sqrt(3 * K)
    N = 3 * K
    R, Q, T = W @ Ws.T / N, W @ W.T / N, Ws @ Ws.T / N
    P = np.eye(K)[r.permutation(K)]
    for act in ("erf", "relu"):
        e = scm.generalization_error(R, Q, T, act)
        assert e >= -1e-14
        assert scm.generalization_error(P @ R, P @ Q @ P.T, T, act) == pytest.approx(e, rel=1e-12, abs=1e-15)
    # perfect student
    assert scm.generalization_error(np.eye(K), np.eye(K), np.eye(K), "relu") == pytest.approx(0.0, abs=1e-15)


# --------------------------------------------------------------- entropy and free energy
@pytest.mark.parametrize("K", [2, 3, 6])
def test_entropy_site_symmetric_equals_half_logdet(K):
    R, S, C = 0.5, 0.06, 0.04
    Rm, Qm = site_symmetric(K, R, S, C)
    fe = scm.free_energy(0.0, K, R, S, C, "erf", derivatives=True)
    assert fe.entropy == pytest.approx(scm.entropy(Rm, Qm, np.eye(K)), rel=1e-13)
    assert fe.value == pytest.approx(-fe.entropy, rel=1e-14)


@pytest.mark.parametrize("K,act", [(3, "erf"), (2.5, "relu"), (3, "linear"), (4, erf_act)])
def test_gradient_and_hessian_vs_finite_differences(K, act):
    x = np.array([0.45, 0.1, 0.03])
    a = 7.0
    fe = scm.free_energy(a, K, *x, act, derivatives=True)
    f = lambda y: scm.free_energy(a, K, *y, act)
    h = 1e-5
    for i in range(3):
        e = np.zeros(3)
        e[i] = h
        gfd = (f(x + e) - f(x - e)) / (2 * h)
        assert fe.gradient[i] == pytest.approx(gfd, rel=1e-6, abs=1e-7)
        gp = scm.free_energy(a, K, *(x + e), act, derivatives=True).gradient
        gm = scm.free_energy(a, K, *(x - e), act, derivatives=True).gradient
        np.testing.assert_allclose(fe.hessian[i], (gp - gm) / (2 * h), rtol=1e-6, atol=1e-6)


def test_K_infinity_is_the_limit_of_beta_f_over_K():
    R, sig, gam, a = 0.4, 0.5, 0.2, 30.0
    inf = scm.free_energy(a, math.inf, R, sig, gam, "erf")
    errs = []
    for K in (1e3, 1e4, 1e5):
        fK = scm.free_energy(a, K, R, sig / K, gam / K, "erf")
        # the O(1) entropy terms are subleading: beta f / K -> phi with O(log K / K) corrections
        errs.append(abs(fK / K - inf))
    assert errs[2] < errs[1] < errs[0] and errs[2] < 1e-3


def test_bad_input_names_the_argument():
    with pytest.raises(ValueError, match="alpha"):
        scm.free_energy(-1.0, 2, 0.1, 0.1, 0.0)
    with pytest.raises(ValueError, match="K"):
        scm.free_energy(1.0, 0.5, 0.1, 0.1, 0.0)
    with pytest.raises(ValueError, match="K"):
        scm.transitions(1.0)
    with pytest.raises(ValueError, match="activation"):
        scm.free_energy(1.0, 2, 0.1, 0.1, 0.0, "tanh")
    with pytest.raises(ValueError, match="C"):
        scm.free_energy(1.0, 2, 0.5, 0.1, 0.9)
    with pytest.raises(ValueError, match="R"):
        scm.free_energy(1.0, 2, 1.5, 0.1, 0.0)
    with pytest.raises(ValueError, match="R"):
        scm.entropy(np.array([[2.0]]), np.array([[1.0]]))
    with pytest.raises(ValueError, match="alphas"):
        scm.learning_curve(2, "erf", [3.0, -1.0])
    with pytest.raises(ValueError, match="alpha"):
        scm.equilibria(-2.0, 3)


# --------------------------------------------------------------- full space of individual overlaps
def test_full_space_blocks_match_full_hessian_and_gradient_vanishes():
    K, a = 4, 50.0
    eq = scm.equilibria(a, K, "erf")
    for p in eq:
        g, Hm = scm.full_hessian(a, K, p.R, p.S, p.C, "erf")
        assert np.max(np.abs(g)) < 1e-8  # site-symmetric stationary points are stationary in full space
        full = np.sort(np.linalg.eigvalsh(Hm))
        blocks = p.full_space_blocks
        ev = np.sort(np.concatenate([np.repeat(v, m) for v, m in blocks.values()]))
        assert ev.size == K * K + K * (K - 1) // 2
        np.testing.assert_allclose(ev, full, rtol=1e-9, atol=1e-9)


# --------------------------------------------------------------- transitions: published numbers
def test_erf_K2_second_order():
    tr = scm.transitions(2, "erf")
    assert tr.order == 2
    assert tr.alpha_c == pytest.approx(23.675957245, rel=1e-10)
    assert tr.alpha_s == tr.alpha_c == tr.alpha_d


def test_relu_K2_second_order():
    tr = scm.transitions(2, "relu")
    assert tr.order == 2
    assert tr.alpha_c == pytest.approx(6.0940738933, rel=1e-10)


def test_erf_K5_first_order():
    tr = scm.transitions(5, "erf")
    assert tr.order == 1
    assert tr.alpha_s == pytest.approx(44.3378030, rel=1e-8)
    assert tr.alpha_s < tr.alpha_c < tr.alpha_d
    # Oostwal et al.'s figure readings (Fig. 2) 46.6 and 62.8 are ~1.5% and ~1% high
    assert abs(tr.alpha_c - 46.6) < 1.0 and abs(tr.alpha_d - 62.8) < 1.0


def _mp_inf_erf():
    from mpmath import asin, diff, findroot, log, mp, mpf, pi, sqrt
    with mp.workdps(30):
        m = lambda r: 2 / pi * asin(r / 2)
        dm = lambda r: 2 / pi / sqrt(4 - r * r)
        al = lambda R: R / ((1 - R * R) * (dm(R) - dm(0)))
        Rs = findroot(lambda R: diff(al, R), 0.8)
        phi = lambda a, R: a * (mpf(1) / 3 - m(R) - dm(0) * (1 - R)) - log(1 - R * R) / 2
        Rc = findroot(lambda R: phi(al(R), R) - phi(al(R), 0), 0.9)
        return float(mp.re(al(Rs))), float(mp.re(al(Rc)))


def test_K_infinity_transitions():
    a_s, a_c = _mp_inf_erf()
    tr = scm.transitions(math.inf, "erf")
    assert tr.alpha_s == pytest.approx(a_s, rel=1e-12) and round(tr.alpha_s, 2) == 60.99
    assert tr.alpha_c == pytest.approx(a_c, rel=1e-12) and round(tr.alpha_c, 2) == 69.09
    assert tr.alpha_d == math.inf and tr.order == 1  # alpha_d grows like 4 pi K (a number, never None)
    tr = scm.transitions(math.inf, "relu")
    assert tr.order == 2 and tr.alpha_c == pytest.approx(2 * math.pi, rel=1e-13)
    # plateau before the transition: eps_g = 1/4 - 1/(2 pi) at R = 0
    eq = scm.equilibria(3.0, math.inf, "relu")
    assert len(eq) == 1 and eq[0].generalization_error == pytest.approx(0.25 - 0.5 / math.pi, rel=1e-14)


def test_erf_alpha_d_grows_like_4piK():
    r = [scm.transitions(K, "erf", method="direct").alpha_d / (4 * math.pi * K) for K in (10, 40)]
    assert abs(r[1] - 1) < abs(r[0] - 1) < 0.01


def test_transitions_approach_K_infinity():
    t40 = scm.transitions(40, "erf", method="direct")
    tinf = scm.transitions(math.inf, "erf")
    assert abs(t40.alpha_s - tinf.alpha_s) < 3.0 and t40.alpha_s < tinf.alpha_s
    r40 = scm.transitions(40, "relu", method="direct")
    assert abs(r40.alpha_c - 2 * math.pi) < 1e-3


def test_generic_callable_reproduces_erf_and_relu():
    tr = scm.transitions(2, erf_act, method="direct")
    assert tr.alpha_c == pytest.approx(23.675957245, rel=1e-8)
    tr = scm.transitions(2, relu_act, method="direct")  # kink: Chebyshev in arcsin(rho) stays spectral
    assert tr.alpha_c == pytest.approx(6.0940738933, rel=1e-8)

    class G:
        def __call__(self, x):
            return erf_act(x)

        def pair_moment(self, rho):
            return 2 / np.pi * np.arcsin(np.asarray(rho) / 2)

        def mean(self):
            return 0.0
    fe1 = scm.free_energy(10.0, 3, 0.3, 0.1, 0.05, G(), derivatives=True)
    fe2 = scm.free_energy(10.0, 3, 0.3, 0.1, 0.05, "erf", derivatives=True)
    np.testing.assert_allclose(fe1.hessian, fe2.hessian, rtol=1e-10)


# --------------------------------------------------------------- equilibria and learning curves
def test_equilibria_erf_K5_coexistence_region():
    assert [p.branch for p in scm.equilibria(40.0, 5, "erf")] == ["unspecialized"]
    eq = scm.equilibria(50.0, 5, "erf")
    assert [p.branch for p in eq] == ["specialized", "unspecialized"]  # specialized is global beyond alpha_c
    for p in eq:
        assert p.full_space_stable and p.hessian_eigenvalues[0] > 0
        assert np.max(np.abs(scm.free_energy(50.0, 5, p.R, p.S, p.C, "erf", derivatives=True).gradient)) < 1e-9
    eq = scm.equilibria(70.0, 5, "erf")
    assert sorted(p.branch for p in eq) == ["anti-specialized", "specialized"]


def test_learning_curve_matches_equilibria_and_transitions():
    alphas = np.linspace(0, 80, 161)
    lc = scm.learning_curve(5, "erf", alphas)
    tr = scm.transitions(5, "erf", method="direct")
    U, P, N = (lc.branches[k] for k in ("unspecialized", "specialized", "anti-specialized"))
    assert U.exists.all()
    np.testing.assert_array_equal(U.stable, alphas < tr.alpha_d)
    np.testing.assert_array_equal(P.exists & P.stable, alphas >= tr.alpha_s)
    assert not N.exists[alphas < tr.alpha_d].any() and N.stable[alphas > tr.alpha_d + 0.5].all()
    np.testing.assert_array_equal(lc.equilibrium["branch"] == "specialized", alphas > tr.alpha_c)
    i = np.searchsorted(alphas, 50.0)
    eq = scm.equilibria(50.0, 5, "erf")
    assert P.R[i] == pytest.approx(eq[0].R, rel=1e-10) and U.C[i] == pytest.approx(eq[1].C, rel=1e-9)


def test_learning_curve_relu_K10_large_alpha_and_speed():
    import time
    alphas = np.linspace(0.0, 30.0, 1000)
    scm.learning_curve(10, "relu", alphas)
    t0 = time.perf_counter()
    lc = scm.learning_curve(10, "relu", alphas)
    dt = time.perf_counter() - t0
    P, N = lc.branches["specialized"], lc.branches["anti-specialized"]
    assert P.stable[-1] and N.stable[-1]
    # two competing minima with similar eps_g (Oostwal et al. Fig. 3): R -> 1 and R < 0, S > 0
    assert P.R[-1] > 0.8 and N.R[-1] < -0.5 and N.S[-1] > 0
    assert abs(P.generalization_error[-1] - N.generalization_error[-1]) < 0.02
    assert dt < 2.0  # the benchmark asserts the 0.2 s target on an idle machine


# --------------------------------------------------------------- K = 1
def test_single_unit_inverse_curves_and_asymptotics():
    R = np.array([0.1, 0.5, 0.9, 0.999])
    np.testing.assert_allclose(scm.alpha_of_R_single_unit(R, "erf"),
                               np.pi * R * np.sqrt(4 - R * R) / (2 * (1 - R * R)), rtol=1e-13)
    np.testing.assert_allclose(scm.alpha_of_R_single_unit(R, "relu"),
                               4 * np.pi * R / ((1 - R * R) * (np.pi + 2 * np.arcsin(R))), rtol=1e-13)
    for act in ("erf", "relu"):
        s = scm.single_unit([1e4, 1e5], act)
        np.testing.assert_allclose(s.generalization_error * 2 * np.array([1e4, 1e5]), 1.0, rtol=2e-2)
        assert np.all(s.converged)


# --------------------------------------------------------------- Monte Carlo cross-check
def _mc_vs_theory(act, alpha, Ns=(100, 200, 400), sweeps=150, chains=16):
    """Extrapolate the Gibbs-sampled overlaps linearly in 1/N and compare with the theory."""
    from statmech.simulate.scm_mc import gibbs_scm
    eq = [p for p in scm.equilibria(alpha, 2, act) if p.R >= p.S - 1e-9][0]
    rows = []
    for N in Ns:
        s = gibbs_scm(alpha, 2, act, N=N, n_chains=chains, n_sweeps=sweeps, n_burn=80, seed=N)
        rows.append(((s.R + s.S) / 2, abs(s.R - s.S), s.C, s.generalization_error,
                     math.hypot(s.R_err, s.S_err) / 2, math.hypot(s.R_err, s.S_err), s.C_err, s.generalization_error_err))
    rows = np.array(rows)
    x = 1.0 / np.array(Ns)
    theory = [(eq.R + eq.S) / 2, abs(eq.R - eq.S), eq.C, eq.generalization_error]
    for k in range(4):
        y, e = rows[:, k], rows[:, 4 + k]
        A = np.vstack([np.ones_like(x), x]).T / e[:, None]
        coef, *_ = np.linalg.lstsq(A, y / e, rcond=None)
        cov = np.linalg.inv(A.T @ A)
        err0 = math.sqrt(cov[0, 0])
        if k == 1 and theory[1] < 1e-9:
            continue  # |R - S| of the unspecialized state is a pure fluctuation, O(N^-1/2)
        assert abs(coef[0] - theory[k]) < 4 * err0 + 1e-4, (act, alpha, k, coef[0], err0, theory[k])


def test_monte_carlo_quick_specialized_erf():
    from statmech.simulate.scm_mc import gibbs_scm
    s = gibbs_scm(35.0, 2, "erf", N=300, n_chains=12, n_sweeps=60, n_burn=60, seed=1)
    eq = [p for p in scm.equilibria(35.0, 2, "erf") if p.R > p.S][0]
    # finite-size corrections are O(1/N); allow 4 standard errors + 2/N
    for mc, err, th in ((s.R, s.R_err, eq.R), (s.S, s.S_err, eq.S), (s.C, s.C_err, eq.C)):
        assert abs(mc - th) < 4 * err + 2.0 / 300


@pytest.mark.slow
@pytest.mark.parametrize("act,alpha", [("erf", 15.0), ("erf", 35.0), ("relu", 4.0), ("relu", 9.0)])
def test_monte_carlo_extrapolated_in_N_matches_theory(act, alpha):
    _mc_vs_theory(act, alpha)


# --------------------------------------------------------------- stability beyond site symmetry, engine, CLI
def test_anti_specialized_state_is_a_saddle_in_the_full_space():
    """The R < S minimum of the site-symmetric beta f (seed: 'persists for all alpha > alpha_d')
    is unstable against non-site-symmetric perturbations ([K-2,1,1] and [K-2,2] blocks); checked
    by finite differences of the full-space beta f built from generalization_error and entropy."""
    K, a = 5, 70.0
    p = [q for q in scm.equilibria(a, K, "erf") if q.branch == "anti-specialized"][0]
    assert p.site_symmetric_stable and not p.full_space_stable
    g, Hm = scm.full_hessian(a, K, p.R, p.S, p.C, "erf")
    w, V = np.linalg.eigh(Hm)
    v = V[:, 0]
    Rm, Qm = site_symmetric(K, p.R, p.S, p.C)
    iu = np.triu_indices(K, 1)

    def f(x):
        dq = np.zeros((K, K))
        dq[iu] = x[K * K:]
        R, Q = Rm + x[:K * K].reshape(K, K), Qm + dq + dq.T
        return a * K * scm.generalization_error(R, Q, np.eye(K), "erf") - scm.entropy(R, Q, np.eye(K))
    h = 3e-4
    curv = (f(h * v) - 2 * f(0 * v) + f(-h * v)) / h ** 2
    assert w[0] < -0.1 and curv == pytest.approx(w[0], rel=1e-5)
    # the specialized and unspecialized minima are stable in the full space
    for q in scm.equilibria(55.0, K, "erf"):
        assert q.full_space_stable


@pytest.mark.parametrize("act,K", [("erf", 3), ("relu", 3), ("erf", 2.5)])
def test_continuation_engine_agrees_with_direct_solver(act, K):
    c = scm.transitions(K, act, method="continuation")
    d = scm.transitions(K, act, method="direct")
    assert c.details["solver"] == "continuation" and c.order == d.order
    for key in ("alpha_s", "alpha_c", "alpha_d"):
        assert getattr(c, key) == pytest.approx(getattr(d, key), rel=1e-9)


def test_relu_K3_is_weakly_first_order():
    tr = scm.transitions(3, "relu", method="direct")
    assert tr.order == 1
    assert tr.alpha_s == pytest.approx(6.2462317308, rel=1e-9)
    assert 0 < tr.alpha_c - tr.alpha_s < tr.alpha_d - tr.alpha_s < 0.01


def test_cli_transitions_json_and_bad_argument(capsys):
    import json
    import subprocess
    import sys
    from statmech.cli import main
    assert main(["scm", "transitions", "--K", "2", "inf", "--method", "direct", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["transitions"][0]["alpha_c"] == pytest.approx(23.675957245, rel=1e-9)
    assert d["transitions"][1]["alpha_s"] == pytest.approx(60.9926164267, rel=1e-9)
    p = subprocess.run([sys.executable, "-m", "statmech", "scm", "equilibria", "--alpha", "-3", "--K", "2"],
                       capture_output=True, text=True)
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1 and "alpha" in p.stderr


@pytest.mark.slow
def test_finite_K_fold_against_mpmath():
    """alpha_s(K=3, erf) from an independent mpmath computation: the fold of the stationary
    equations of beta f written directly in mpmath (derivatives by mpmath.diff)."""
    from mpmath import asin, det, diff, findroot, log, matrix, mp, pi
    mp.dps = 25
    K = 3

    def f(a, R, S, C):
        m = lambda r: 2 / pi * asin(r / 2)
        eps = m(1) - m(R) + (K - 1) / mp.mpf(2) * (m(C) + m(0) - 2 * m(S))
        s = log(1 + (K - 1) * C - (R + (K - 1) * S) ** 2) / 2 + (K - 1) / mp.mpf(2) * log(1 - C - (R - S) ** 2)
        return a * K * eps - s

    def eqs(a, R, S, C):
        g = [diff(lambda x: f(a, x, S, C), R), diff(lambda x: f(a, R, x, C), S), diff(lambda x: f(a, R, S, x), C)]
        Hm = matrix(3, 3)
        X = [R, S, C]
        for i in range(3):
            for j in range(3):
                def fij(u, v, i=i, j=j):
                    Y = list(X)
                    Y[i] += u
                    Y[j] += v
                    return f(a, *Y)
                Hm[i, j] = diff(fij, (0, 0), (1, 1)) if i != j else diff(lambda u: fij(u, 0), 0, 2)
        return g + [det(Hm) * 1e-3]
    tr = scm.transitions(K, "erf", method="direct")
    p = [q for q in scm.equilibria(tr.alpha_s + 1e-3, K, "erf") if q.branch == "specialized"][0]
    sol = findroot(lambda a, R, S, C: eqs(a, R, S, C), (tr.alpha_s, p.R, p.S, p.C))
    assert float(sol[0]) == pytest.approx(tr.alpha_s, rel=1e-9)


def test_transitions_sweep_in_K_by_two_parameter_continuation():
    """Every transition for K up to 50 (integer and not) comes from the engine's lines continued
    in K -- no fallback -- and agrees with the independent direct solver to 1e-8."""
    Ks = [2, 3, 4, 6, 9, 13, 20, 27.5, 30, 40, 45.25, 50]
    for act in ("erf", "relu"):
        sw = scm.transitions(Ks, act, method="continuation")
        for t, K in zip(sw, Ks):
            assert t.details["solver"].startswith("continuation"), (act, K, t.details)
            if K > 3:
                assert t.details["solver"] == "continuation (two-parameter in K)"
                assert "alpha_d_polish" not in t.details  # the engine's alpha_d was within 1e-6
            d = scm.transitions(K, act, method="direct")
            assert t.K == K and t.order == d.order
            for key in ("alpha_s", "alpha_c", "alpha_d"):
                assert getattr(t, key) == pytest.approx(getattr(d, key), rel=1e-8), (act, K, key)
    # erf: alpha_d ~ 4 pi K - pi / K; alpha_s, alpha_c approach the K = inf values like 1/K
    e = scm.transitions([40, 50], "erf", method="continuation")
    assert e[1].alpha_d == pytest.approx(4 * math.pi * 50 - math.pi / 50, rel=2e-6)
    for key, lim in (("alpha_s", 60.992616427), ("alpha_c", 69.087482943)):
        a40, a50 = getattr(e[0], key), getattr(e[1], key)
        assert a40 < a50 < lim
        assert a50 + (a50 - a40) * 4.0 == pytest.approx(lim, rel=2e-3)  # linear extrapolation in 1/K


def test_auto_does_not_fall_back_silently(monkeypatch):
    def broken(info, K):
        raise ConvergenceError("solver broken (test)", diagnostics={"K": K})
    monkeypatch.setattr("statmech.scm._transitions._transitions_continuation", broken)
    with pytest.raises(ConvergenceError):
        scm.transitions(5, "erf", method="continuation")
    with pytest.raises(ConvergenceError):
        scm.transitions([3, 4, 5], "erf", method="continuation")
    assert scm.transitions(5, "erf").details["solver"] == "direct"  # auto: the direct solver
    monkeypatch.setattr("statmech.scm._transitions._transitions_direct", broken)
    with pytest.raises(ConvergenceError):  # ... and never the engine in its place
        scm.transitions(5, "erf")
    with pytest.raises(ConvergenceError):
        scm.transitions([3, 4, 5], "erf")
    assert scm.transitions(300, "relu").details["solver"].startswith("Landau")  # weakly first order


def test_learning_curve_through_the_engine_finds_the_saddle_branch():
    alphas = np.linspace(0.0, 80.0, 161)
    lc = scm.learning_curve(5, "erf", alphas, method="continuation")
    ref = scm.learning_curve(5, "erf", alphas)
    tr = scm.transitions(5, "erf", method="direct")
    sad = lc.branches["specialized-unstable"]
    a = alphas[sad.exists & ~sad.stable]
    assert a.min() > tr.alpha_s and a.max() < tr.alpha_d  # the saddle connects the fold to the bifurcation
    np.testing.assert_array_equal(lc.equilibrium["branch"], ref.equilibrium["branch"])
    np.testing.assert_allclose(lc.equilibrium["R"], ref.equilibrium["R"], rtol=1e-10, atol=1e-14)


@pytest.mark.slow
def test_large_K_alpha_d_from_engine_lines_against_mpmath():
    """erf alpha_d(K = 50) ~ 628 (Hessian entries ~1e8 there): the engine's K-continued line and
    the polished value against an independent 40-digit solution of {grad beta f = 0 on R = S,
    det H = 0} (sympy derivatives of Oostwal et al.'s Eq. 20, eps_g corrected, evaluated in mpmath)."""
    import mpmath as mp
    import sympy as sy
    R, S, C, a, K = sy.symbols("R S C alpha K")
    m = lambda r: 2 / sy.pi * sy.asin(r / 2)
    eps = m(1) - m(R) + (K - 1) / 2 * (m(C) + m(0) - 2 * m(S))
    f = a * K * eps - (sy.log(1 + (K - 1) * C - (R + (K - 1) * S) ** 2) / 2
                       + (K - 1) / 2 * sy.log(1 - C - (R - S) ** 2))
    X = [R, S, C]
    g = [sy.diff(f, v) for v in X]
    gl = sy.lambdify([R, S, C, a, K], [g[0], g[2]], "mpmath")
    Hl = sy.lambdify([R, S, C, a, K], sy.Matrix([[sy.diff(gi, v) for v in X] for gi in g]), "mpmath")
    tr = scm.transitions([3, 50], "erf", method="continuation")[1]
    assert tr.details["solver"] == "continuation (two-parameter in K)"
    row = [q for q in scm.equilibria(tr.alpha_d * (1 - 1e-6), 50, "erf") if q.branch == "unspecialized"][0]
    with mp.workdps(40):
        Kv = mp.mpf(50)

        def eqs(r, c, al):
            g0, g2 = gl(r, r, c, al, Kv)
            return [g0, g2, mp.det(mp.matrix(Hl(r, r, c, al, Kv))) / Kv ** 4]
        sol = mp.findroot(eqs, [mp.mpf(row.R), mp.mpf(row.C), mp.mpf(tr.alpha_d)])
        ref = float(sol[2])
    assert ref == pytest.approx(628.2557113030548, rel=1e-12)
    assert tr.alpha_d == pytest.approx(ref, rel=1e-8)
    assert tr.details["alpha_d_engine"] == pytest.approx(ref, rel=1e-7)
