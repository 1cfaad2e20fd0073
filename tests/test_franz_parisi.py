"""Franz--Parisi entropies: physics checks (identities, limits, independent quadrature,
derivatives, enumeration), input validation.  Long cross-checks are marked slow."""
import math

import numpy as np
import pytest
from scipy import integrate, special

from statmech import ConvergenceError
from statmech import franz_parisi as fp
from statmech.franz_parisi import _common as fpc, binary as fpb, reference as fpr, stochastic_fp as fps
from statmech.simulate.fp_enumeration import fp_counts, fp_enumeration


def H2(d):
    return -d * math.log(d) - (1 - d) * math.log(1 - d)


# ------------------------------------------------------------------ references
def test_references_match_perceptron_module():
    from statmech import perceptron
    for a in (0.3, 0.6):
        rb, pb = fp.equilibrium_binary(a), perceptron.binary_storage(a)
        assert rb.q == pytest.approx(pb.q, abs=1e-10)
        assert rb.entropy == pytest.approx(pb.entropy, abs=1e-10)
        rs, ps = fp.equilibrium_spherical(a), perceptron.spherical_storage(a)
        assert rs.q == pytest.approx(ps.q, abs=1e-10)
        assert rs.entropy == pytest.approx(ps.entropy, abs=1e-10)
        assert rb.rs_stable and rs.rs_stable


# ------------------------------------------------------------------ typical distance identity
@pytest.mark.parametrize("model", ["binary", "spherical"])
def test_entropy_equals_equilibrium_at_typical_distance(model):
    f = fp.binary_perceptron if model == "binary" else fp.spherical_perceptron
    alpha = 0.5
    ref = (fp.equilibrium_binary if model == "binary" else fp.equilibrium_spherical)(alpha)
    d_typ = ref.d_typical
    exact = f(alpha, d_typ)                       # the degenerate point itself
    assert exact.entropy == ref.entropy
    # S_FP is maximal at d_typ and approaches S_eq quadratically from both sides
    dd = np.array([-0.06, -0.03, 0.03, 0.06])
    r = f(alpha, d_typ + dd)
    gap = ref.entropy - r.entropy
    assert np.all(gap > 0)
    assert gap[0] / gap[1] == pytest.approx(4.0, rel=0.15)
    assert gap[3] / gap[2] == pytest.approx(4.0, rel=0.15)
    # slope: positive below d_typ, negative above, vanishing linearly
    assert r.dS_dd[1] > 0 > r.dS_dd[2]
    assert r.dS_dd[0] / r.dS_dd[1] == pytest.approx(2.0, rel=0.15)
    # at the typical point the constrained replicas are other reference replicas: t = q0 there;
    # away from it t != q0 (the pair is not exchangeable) but t -> q0 continuously
    assert abs(r.t[2] - ref.q) < abs(r.t[3] - ref.q)
    assert np.all(r.converged) and np.all(r.residual < 1e-9)


def test_dS_dd_matches_finite_difference():
    d = np.array([0.22 - 1e-4, 0.22, 0.22 + 1e-4])
    r = fp.binary_perceptron(0.5, d)
    fd = (r.entropy[2] - r.entropy[0]) / 2e-4
    assert r.dS_dd[1] == pytest.approx(fd, rel=1e-5)


# ------------------------------------------------------------------ limits
def _small_alpha_slope(d):
    """d S_FP/d alpha at alpha = 0 (both weight types): a pattern satisfied by the reference
    (field x > 0) is satisfied by a fraction H(-p x/sqrt(1-p^2)) of the configurations at
    overlap p; the quenched average of the log over patterns gives
    2 E[theta(x) log H(-p x/sqrt(1 - p^2))] (NOT the annealed log(1 - arccos(p)/pi))."""
    p = 1 - 2 * d
    f = lambda x: 2 * math.exp(-x * x / 2) / math.sqrt(2 * math.pi) * special.log_ndtr(p * x / math.sqrt(1 - p * p))
    return integrate.quad(f, 0, np.inf, epsabs=1e-13)[0]


@pytest.mark.parametrize("alpha,d", [(0.15, [0.1, 0.3]),
                                     pytest.param(0.1, [0.05, 0.2, 0.4], marks=pytest.mark.slow),
                                     pytest.param(0.05, [0.05, 0.2, 0.4], marks=pytest.mark.slow)])
def test_small_alpha_limit(alpha, d):
    d = np.array(d)
    slope = np.array([_small_alpha_slope(x) for x in d])
    rb = fp.binary_perceptron(alpha, d)
    rs = fp.spherical_perceptron(alpha, d)
    db = (rb.entropy - fp.binary_entropy_free(d)) / alpha
    ds = (rs.entropy - 0.5 * np.log(4 * d * (1 - d))) / alpha
    assert np.all(np.abs(db - slope) < 0.3 * alpha)   # O(alpha) corrections
    assert np.all(np.abs(ds - slope) < 0.3 * alpha)
    assert np.all(db < slope)                         # the O(alpha^2) term is negative here
    assert fp.binary_entropy_free(0.2) == pytest.approx(H2(0.2), rel=1e-15)


# ------------------------------------------------------------------ binary: isolation, crossing
def test_binary_negative_at_small_distance_and_crossing():
    r = fp.binary_zero_crossing(0.5)
    d0 = r.d_zero
    assert abs(d0 - 0.007) < 2e-4                 # published: "near d ~ 0.007"
    assert abs(r.entropy) < 1e-10                 # it is a root
    s = fp.binary_perceptron(0.5, [0.5 * d0, 2 * d0])
    assert s.entropy[0] < 0 < s.entropy[1]
    assert all(v > 0 for v in r.extra["margins"].values())


@pytest.mark.slow
def test_binary_crossing_increases_with_alpha():
    r = fp.binary_zero_crossing([0.6, 0.7])
    assert 0.007 < r.d_zero[0] < r.d_zero[1] < fp.equilibrium_binary(0.7).d_typical


@pytest.mark.slow
@pytest.mark.parametrize("alpha", [0.2, 0.3, 0.4, 0.8])
def test_binary_negative_small_d_every_alpha(alpha):
    r = fp.binary_zero_crossing(alpha)
    s = fp.binary_perceptron(alpha, 0.5 * r.d_zero)
    assert s.entropy < 0 and r.d_zero > 0


# ------------------------------------------------------------------ spherical: not isolated
@pytest.mark.parametrize("d", [[0.01, 0.04, 0.1], pytest.param([1e-3, 1e-2, 0.05], marks=pytest.mark.slow)])
def test_spherical_small_d_is_dense(d):
    """Spherical typical solutions sit in a connected (convex, kappa = 0) region: the FP
    entropy follows the free-space law log(4d(1-d))/2 as d -> 0 (deficit -> 0)."""
    d = np.array(d)
    r = fp.spherical_perceptron(0.5, d)
    deficit = r.entropy - 0.5 * np.log(4 * d * (1 - d))
    assert np.all(deficit < 0)
    assert abs(deficit[0]) < abs(deficit[1]) < abs(deficit[2])
    # deficit ~ c sqrt(d): the fraction of a small cap violating a constraint ~ alpha sqrt(d)
    assert deficit[0] / deficit[1] == pytest.approx(math.sqrt(d[0] / d[1]), rel=0.3)


# ------------------------------------------------------------------ independent quadrature
def _phi_binary_bruteforce(x, p, q0, qh0, alpha):
    """Phi of the Ising FP functional by scipy.integrate (no kernels, no custom nodes)."""
    q1, t, qh1, th, ph = x
    B = math.sqrt(qh1 - th * th / qh0)
    G = lambda u: math.exp(-u * u / 2) / math.sqrt(2 * math.pi)
    logH = lambda u: special.log_ndtr(-u)
    l2c = lambda u: abs(u) + math.log1p(math.exp(-2 * abs(u)))

    def fS(y, z):
        h = th / math.sqrt(qh0) * z + ph - th + B * y
        return G(z) * G(y) * (1 + math.tanh(math.sqrt(qh0) * z)) * l2c(h)

    v = q1 - t * t / q0
    sv = math.sqrt(v)
    sx = math.sqrt(1 - q0 - (p - t) ** 2 / v)

    def fE(e, z):
        a = (-math.sqrt(q0) * z - (p - t) / sv * e) / sx
        a0 = -math.sqrt(q0) * z / math.sqrt(1 - q0)
        b = (-t / math.sqrt(q0) * z - sv * e) / math.sqrt(1 - q1)
        return G(z) * G(e) * math.exp(logH(a) - logH(a0)) * logH(b)

    L = 12.0
    S = integrate.dblquad(fS, -L, L, -L, L, epsabs=1e-12, epsrel=1e-12)[0]
    E = integrate.dblquad(fE, -L, L, -L, L, epsabs=1e-12, epsrel=1e-12)[0]
    return th * t - ph * p + qh1 * (q1 - 1) / 2 + S + alpha * E


def test_binary_entropy_against_independent_quadrature():
    alpha, d = 0.5, 0.15
    r = fp.binary_perceptron(alpha, d)
    x = [r.q1, r.t, r.q1_hat, r.t_hat, r.p_hat]
    val = _phi_binary_bruteforce(x, 1 - 2 * d, r.q0, r.q_hat0, alpha)
    assert val == pytest.approx(r.entropy, abs=1e-8)


@pytest.mark.slow
def test_binary_stationarity_against_independent_quadrature():
    alpha, d = 0.5, 0.15
    r = fp.binary_perceptron(alpha, d)
    x = np.array([r.q1, r.t, r.q1_hat, r.t_hat, r.p_hat])
    for i in range(5):
        h = 1e-4
        e = np.zeros(5)
        e[i] = h
        g = (_phi_binary_bruteforce(x + e, 1 - 2 * d, r.q0, r.q_hat0, alpha)
             - _phi_binary_bruteforce(x - e, 1 - 2 * d, r.q0, r.q_hat0, alpha)) / (2 * h)
        assert abs(g) < 1e-6


def test_analytic_derivatives_match_finite_differences():
    """Gradient and Hessian of the RS functional (sympy-generated kernels) vs finite
    differences of the kernel values, at a generic interior point."""
    ref = fpr._reference("binary", 0.5, 0.0)
    p = 0.8
    x = np.array([0.7, 0.33, 2.0, 0.7, 1.5])
    assert fpb._binary_domain(x, p, ref)

    def phi(v):
        F, J, S, E = fpb._binary_eval(v, p, ref, 0.5, 0.0)
        q1, t, qh1, th, ph = v
        return th * t - ph * p + qh1 * q1 / 2 + S[0] - qh1 / 2 + 0.5 * E[0]

    F, J, _, _ = fpb._binary_eval(x, p, ref, 0.5, 0.0)
    for i in range(5):
        h = 1e-5
        e = np.zeros(5)
        e[i] = h
        assert F[i] == pytest.approx((phi(x + e) - phi(x - e)) / (2 * h), rel=1e-6, abs=1e-8)
        Fp = fpb._binary_eval(x + e, p, ref, 0.5, 0.0)[0]
        Fm = fpb._binary_eval(x - e, p, ref, 0.5, 0.0)[0]
        np.testing.assert_allclose(J[:, i], (Fp - Fm) / (2 * h), rtol=1e-5, atol=1e-7)


def test_quadrature_refinement_changes_nothing():
    ref = fpr._reference("binary", 0.5, 0.0)
    p = 0.98
    x = np.array([0.975, 0.324, 3.5, 0.7, 2.5])
    if not fpb._binary_domain(x, p, ref):
        pytest.skip("test point outside domain")
    a = fpb._binary_eval(x, p, ref, 0.5, 0.0)
    b = fpb._binary_eval(x, p, ref, 0.5, 0.0, fpc._Q.finer())
    np.testing.assert_allclose(a[0], b[0], atol=1e-11)
    np.testing.assert_allclose(a[2][:4], b[2][:4], atol=1e-11)
    np.testing.assert_allclose(a[3][:3], b[3][:3], atol=1e-11)


# ------------------------------------------------------------------ interior / report
def test_boundary_solution_is_rejected():
    prob = fpb._BinaryProblem(0.5, 0.0)
    p = 0.9
    x = np.array([0.9, 0.3, 1.0, 0.8174, 1.0])       # q1_hat - t_hat^2/q_hat0 ~ 0 (boundary)
    x[3] = math.sqrt(prob.ref.qh0 * x[2])
    from statmech.saddle import SolveInfo
    with pytest.raises(ConvergenceError):
        fpc._assemble(prob, 0.05, p, SolveInfo(x, 0.0, 1, True), x, prob.ref.entropy, 0.3)


def test_result_report_and_shapes():
    d = np.array([[0.25], [0.4]])
    r = fp.binary_perceptron(0.5, d)
    assert r.entropy.shape == (2, 1) and r.q1.shape == (2, 1)
    assert np.all(r.converged) and np.all(np.isfinite(r.entropy))
    assert r.hessian_eigenvalues.shape == (2, 1, 5)
    assert np.all(r.replicon > 0) and np.all(r.rs_stable)
    s = fp.binary_perceptron(0.5, 0.25)
    assert all(v > 0 for v in s.extra["margins"].values())
    assert s.entropy == pytest.approx(r.entropy[0, 0], abs=1e-10)


@pytest.mark.parametrize("call,match", [
    (lambda: fp.binary_perceptron(-0.1, 0.1), "alpha must be"),
    (lambda: fp.binary_perceptron(0.5, 0.0), "d must be"),
    (lambda: fp.binary_perceptron(0.5, [0.1, 0.7]), "d must be"),
    (lambda: fp.spherical_perceptron(0.5, float("nan")), "d must not be NaN"),
    (lambda: fp.binary_perceptron(0.5, 0.1, kappa=-1), "kappa must be"),
    (lambda: fp.stochastic_energy(0.55, 1.0, 20), "q_star must be"),
    (lambda: fp.stochastic_energy(0.55, 0.5, -1), "beta must be"),
])
def test_invalid_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


# ------------------------------------------------------------------ enumeration
def test_fp_counts_by_popcount():
    codes = np.array([0b000, 0b001, 0b011, 0b111])
    c = fp_counts(codes, [0b001], 3)
    np.testing.assert_array_equal(c[0], [1, 2, 1, 0])


def test_enumeration_matches_theory_small_N():
    N = 15
    r = fp_enumeration(N, 0.5, n_instances=40, n_refs=10, seed=3)
    alpha = r.P / N
    ks = np.array([3, 5])
    th = fp.binary_perceptron(alpha, ks / N)
    theory_deficit = th.entropy - np.array([H2(k / N) for k in ks])
    assert np.all(r.fraction_nonzero[ks] > 0.95)
    # the leading (combinatorial) finite-size correction is removed by comparing deficits
    assert np.all(np.abs(r.deficit[ks] - theory_deficit) < 3 * r.deficit_err[ks] + 0.015)


@pytest.mark.slow
def test_enumeration_finite_size_trend():
    """Deficit at d ~ 0.2 for N = 13..25: compatible with the theory and its O(1/N) trend."""
    alpha = 0.5
    Ns = [13, 17, 21, 25]
    dev = []
    err = []
    for N in Ns:
        P = int(round(alpha * N))
        k = int(round(0.2 * N))
        r = fp_enumeration(N, alpha, n_instances=60 if N < 25 else 24, n_refs=10, seed=N)
        th = fp.binary_perceptron(P / N, k / N).entropy - H2(k / N)
        dev.append(r.deficit[k] - th)
        err.append(r.deficit_err[k])
    dev, err = np.array(dev), np.array(err)
    # linear fit in 1/N: the extrapolated deviation is compatible with 0
    w = 1 / err ** 2
    X = np.vstack([np.ones(len(Ns)), 1 / np.array(Ns)]).T
    cov = np.linalg.inv(X.T @ (w[:, None] * X))
    coef = cov @ X.T @ (w * dev)
    assert abs(coef[0]) < 3 * math.sqrt(cov[0, 0]) + 0.01


# ------------------------------------------------------------------ stochastic perceptron
@pytest.mark.slow
def test_stochastic_energy_limits():
    """Eq. 2.54: no training (beta -> 0) gives chance error 1/2; training at larger beta
    lowers the error of sign(m); the RS equations hold at the returned point."""
    hi_T = fp.stochastic_energy(0.55, 0.3, 0.05)
    assert hi_T.energy == pytest.approx(0.5, abs=0.02)
    lo_T = fp.stochastic_energy(0.55, 0.3, 5.0)
    assert lo_T.energy < hi_T.energy < 0.5
    r = fp.stochastic_reference(0.55, 0.3, 5.0)
    assert r.converged and r.residual < 1e-9
    assert 0 < r.q_m < 0.3 and r.M1 > r.t_s > 0 and r.M1 <= math.sqrt(0.3) + 1e-12


# ------------------------------------------------------------------ CLI
def test_cli_entropy_and_bad_arguments():
    import json
    import subprocess
    import sys
    p = subprocess.run([sys.executable, "-m", "statmech", "franz-parisi", "entropy", "--alpha", "0.5",
                        "--d", "0.3", "--weights", "spherical", "--json"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["entropy"][0] < out["entropy_equilibrium"][0]
    # the one JSON schema of the command line (statmech.cli.emit_results)
    from statmech.result import PROTOCOL
    assert out["command"] == "franz-parisi entropy" and out["model"] == "franz_parisi.spherical_perceptron"
    assert set(PROTOCOL) <= set(out) and out["ansatz"] == "rs" and out["converged"] == [True]
    p = subprocess.run([sys.executable, "-m", "statmech", "franz-parisi", "entropy", "--alpha", "0.5",
                        "--d", "0.9"], capture_output=True, text=True)
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1 and "d must be" in p.stderr


def test_typical_point_inside_array_has_no_nan():
    ref = fp.equilibrium_spherical(0.5)
    r = fp.spherical_perceptron(0.5, [ref.d_typical, 0.3])
    assert r.entropy[0] == ref.entropy and r.entropy[1] < ref.entropy
    for v in (r.entropy, r.q1, r.t, r.replicon, r.dS_dd, r.residual):
        assert np.all(np.isfinite(np.asarray(v, dtype=float)))
    assert r.hessian_eigenvalues is None and r.extra["hessian_eigenvalues"][0] is None


# ------------------------------------------------------------------ FP around sign(m) (stochastic perceptron)
@pytest.mark.slow
def test_stochastic_fp_unconstrained_point_is_the_gardner_solution():
    """At p_hat = 0 the constrained measure is uniform over Ising solutions: q1 = q0, q1_hat = q_hat0,
    R = t, R_hat = t_hat and S_FP = S_eq(binary) exactly, although (t, t_hat) are non-trivial."""
    alpha = 0.55
    ref, x, p_typ, S_typ, S_eq = fps._stfp_setup(alpha, 0.5, 20.0)
    eq = fp.equilibrium_binary(alpha)
    q1, t, R, qh1, th, Rh, ph = x
    assert S_typ == pytest.approx(eq.entropy, abs=1e-7)   # quadrature accuracy of the outer rule, ~5e-8
    # (order parameters agree to the accuracy of the two independent quadratures, ~1e-7)
    assert q1 == pytest.approx(eq.q, abs=1e-6) and qh1 == pytest.approx(eq.q_hat, abs=1e-6)
    assert R == pytest.approx(t, abs=1e-7) and Rh == pytest.approx(th, abs=1e-6)
    assert abs(ph) < 1e-10 and t > 0.1 and th > 0.1 and 0 < p_typ < 1
    # the public function reproduces S_eq at d_typ and is below it elsewhere (maximum)
    d_typ = (1 - p_typ) / 2
    r = fp.stochastic_perceptron(alpha, np.array([d_typ, d_typ - 0.03, d_typ + 0.03, d_typ + 0.031]), 0.5)
    assert r.entropy[0] == pytest.approx(S_eq, abs=1e-7)
    assert np.all(r.entropy[1:] < S_eq - 1e-5)
    assert np.all(r.converged) and np.all(r.residual < 1e-8)
    # dS/dd = 2 p_hat (envelope theorem) against the finite difference of two close points
    fd = (r.entropy[3] - r.entropy[2]) / 0.001
    assert fd == pytest.approx(0.5 * (r.dS_dd[2] + r.dS_dd[3]), rel=1e-3)


def test_stochastic_fp_sympy_derivatives_match_finite_differences():
    # (a coarse outer rule: this checks the sympy derivatives, not the quadrature)
    ref = fps._StfpRef(0.55, 0.5, 20.0, fps._StfpQuad(nz=24, level=3, zlevel=1))
    for x, p in ((np.array([0.8, 0.5, 0.55, 0.5, 3.0, 3.5, 0.9]), 0.9),
                 (np.array([0.5, 0.35, 0.4, 0.7, 4.0, 4.2, 0.1]), 0.5)):
        g, S, GS, GE = fps._stfp_grad(x, p, ref)
        H = fps._stfp_hess(GS, GE, 0.55)
        h = 1e-5
        for j in range(7):
            e = np.zeros(7)
            e[j] = h
            gp, Sp = fps._stfp_grad(x + e, p, ref)[:2]
            gm, Sm = fps._stfp_grad(x - e, p, ref)[:2]
            assert (Sp - Sm) / (2 * h) == pytest.approx(g[j], abs=1e-6)
            np.testing.assert_allclose((gp - gm) / (2 * h), H[:, j], atol=1e-5)
        np.testing.assert_allclose(H, H.T, atol=1e-12)


@pytest.mark.slow
def test_stochastic_fp_fig27_curves():
    """Fig. 2.7: around sign(m) the Ising S_FP stays positive at small d (dense region), above the
    typical-reference curve (negative there), below the alpha = 0 bound, and grows with q* at small
    d (0.7 < 0.8 < 0.9, the thesis's ordering); q* = 0.9 is computed (its RS reference is physical
    and AT-stable once the outer rules resolve the layer at z = 0)."""
    alpha, d = 0.55, np.array([0.01, 0.02, 0.1])
    r = {q: fp.stochastic_perceptron(alpha, d, q) for q in (0.7, 0.8, 0.9)}
    rb = fp.binary_perceptron(alpha, d)
    assert np.all(r[0.7].entropy > 0) and np.all(r[0.8].entropy[:2] > r[0.7].entropy[:2])
    assert np.all(r[0.9].entropy[:2] > r[0.8].entropy[:2])
    assert np.all(r[0.7].entropy > rb.entropy) and rb.entropy[0] < 0
    assert np.all(r[0.9].entropy <= fp.binary_entropy_free(d))
    assert all(np.all(x.converged) for x in r.values())
    # the values quoted in docs/franz_parisi.md (one run of the figure's data set)
    np.testing.assert_allclose([r[q].entropy[0] for q in (0.7, 0.8, 0.9)], [0.023139, 0.044368, 0.052044], atol=2e-6)


@pytest.mark.slow
def test_stochastic_fp_quadrature_refinement():
    """The solution is stationary to 1e-6 under an independent, finer quadrature (2x outer nodes,
    one level finer everywhere, 96-node inner Gauss-Hermite)."""
    alpha, qs = 0.55, 0.7
    r = fp.stochastic_perceptron(alpha, np.array([0.02, 0.1, 0.4]), qs)
    fine = fps._StfpRef(alpha, qs, 20.0, fps._StfpQuad().finer())
    for i, dd in enumerate(r.d):
        x = np.array([r.order_params[k][i] for k in fps._STFP_NAMES])
        g, S = fps._stfp_grad(x, 1 - 2 * dd, fine)[:2]
        assert np.max(np.abs(g)) < 1e-6
        assert S == pytest.approx(r.entropy[i], abs=1e-7)


@pytest.mark.parametrize("kw,match", [({"alpha": 0.9}, "alpha"), ({"q_star": 1.0}, "q_star"),
                                      ({"d": 0.0}, "d"), ({"beta": -1.0}, "beta")])
def test_stochastic_fp_invalid_input(kw, match):
    args = {"alpha": 0.55, "d": 0.1, "q_star": 0.7, "beta": 20.0}
    args.update(kw)
    with pytest.raises(ValueError, match=match):
        fp.stochastic_perceptron(**args)


def test_cli_stochastic_bad_arguments(capsys):
    from statmech.cli import main
    for argv in (["franz-parisi", "stochastic", "--alpha", "0.55", "--q-star", "1.5", "--d", "0.1"],
                 ["franz-parisi", "stochastic", "--alpha", "0.55", "--q-star", "0.7", "--d", "0.7"]):
        assert main(argv) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and ("q_star" in err[0] or "d must" in err[0])


# ------------------------------------------------------------------ fast paths against their definitions
def test_affine_moment_sums_equal_the_per_node_integrands():
    """The quadrature loops sum, per outer node, six moments of the inner affine field and apply
    the chain rule (``_equations._affine_chain``); the result must equal the sum of the per-node
    integrands with their sympy gradients and Hessians (``fp_S``, ``stfp_S``, ``stfp_E``) over
    the same nodes, to rounding."""
    from statmech.franz_parisi._equations import _FP, _STFP
    from statmech.gaussian import gauss_hermite
    rng = np.random.default_rng(3)
    ys, wy = gauss_hermite(40)
    # Ising entropic term at one outer node z (all 12 outputs, replicon and weight included)
    for z, qh0, qh1, th, ph in ((0.7, 0.8, 2.5, 0.6, 1.1), (-1.9, 1.5, 9.0, 2.0, -0.4)):
        direct = np.array(_FP.fp_S(ys, wy, z, qh0, qh1, th, ph))
        mom = _FP.fp_S_mom(ys, wy, *_FP.fp_S_uv(z, qh0, qh1, th, ph))
        fast = np.array(_FP.fp_S_row(z, qh0, qh1, th, ph, *mom))
        np.testing.assert_allclose(fast, direct, rtol=1e-12, atol=1e-13 * np.max(np.abs(direct)))
    # stochastic FP sums over a small random reference grid (rows (i, j), inner GH nodes)
    n1, n2 = 3, 4
    P = rng.uniform(0.05, 1.0, (n1, n2))
    P /= P.sum()
    Z, M = rng.normal(size=(n1, n2)), rng.uniform(-1, 1, (n1, n2))
    Sg, X = np.sign(M), rng.normal(size=(n1, n2))
    Y, W = np.broadcast_to(ys, (n1, n2, ys.size)), np.broadcast_to(wy, (n1, n2, ys.size))
    qh, qh1, th, Rh, ph = 4.0, 5.0, 2.5, 3.0, 0.7
    qm, qs, q1, t, R = 0.5, 0.7, 0.8, 0.45, 0.55
    fS = _STFP.stfp_sum_S(P, Z, M, Sg, Y, W, qh, qh1, th, Rh, ph)
    fE = _STFP.stfp_sum_E(P, Z, X, Y, W, qm, qs, q1, t, R)
    dS, dE = np.zeros(15), np.zeros(10)
    for i in range(n1):
        for j in range(n2):
            for k in range(ys.size):
                dS += P[i, j] * wy[k] * np.array(_STFP.stfp_S(Z[i, j], M[i, j], Sg[i, j], ys[k], qh, qh1, th, Rh, ph))
                dE += P[i, j] * wy[k] * np.array(_STFP.stfp_E(Z[i, j], X[i, j], ys[k], qm, qs, q1, t, R))
    np.testing.assert_allclose(fS, dS, rtol=1e-12, atol=1e-13 * np.max(np.abs(dS)))
    np.testing.assert_allclose(fE, dE, rtol=1e-12, atol=1e-13 * np.max(np.abs(dE)))


@pytest.mark.parametrize("model", ["binary", "spherical"])
def test_branch_tangent_matches_finite_difference(model):
    """The exact tangent dx/dp of the FP branch (predictor of the continuation in d) against the
    central difference of three Newton solutions."""
    from statmech.franz_parisi.spherical import _SphericalProblem
    prob = (fpb._BinaryProblem if model == "binary" else _SphericalProblem)(0.5, 0.0)
    sols = fpc._march(prob, [0.8, 0.8 - 1e-4, 0.8 + 1e-4], prob.ref.q0, prob.typical(), prob.first_guess)
    fd = (sols[0.8 + 1e-4].x - sols[0.8 - 1e-4].x) / 2e-4
    np.testing.assert_allclose(prob.tangent(sols[0.8].x, 0.8), fd, rtol=1e-5, atol=1e-7)


def test_stochastic_reference_block_jacobian_matches_finite_differences():
    from statmech.franz_parisi import stochastic as fst
    from statmech.saddle import jacobian_fd
    x = fst._sto_solution(0.55, 0.5, 20.0).x
    J = fst._sto_jacobian(x, 0.5, 0.55, 20.0)
    Jfd = jacobian_fd(lambda v: fst._sto_residual(v, 0.5, 0.55, 20.0), x)
    np.testing.assert_allclose(J, Jfd, rtol=1e-7, atol=1e-9 * np.max(np.abs(Jfd)))


def test_branch_following_stops_where_no_progress_is_possible():
    """A branch that ends (here at s = 0.5) must raise ConvergenceError, not re-solve the same
    point forever once the halved step is below the resolution of s."""
    from statmech.saddle import SolveInfo

    def solve(x0, s):
        if s >= 0.5:
            raise ConvergenceError("no solution")
        return SolveInfo(np.array([s]), 0.0, 1, True)

    def step(s, goal, hist):  # the continuation rule of _continue: at most 4x the last step
        return min(goal - s, 4.0 * abs(hist[-1][0] - hist[-2][0]))

    hist = [(0.0, np.array([0.0])), (0.1, np.array([0.1]))]
    with pytest.raises(ConvergenceError, match="branch ends"):
        fpc._follow(hist, 1.0, solve, lambda h, s: h[-1][1], step, 60,
                    lambda s, x: ConvergenceError("branch ends", x=x))
    assert 0.5 - 1e-12 < hist[-1][0] < 0.5


# ------------------------------------------------------------------ trust: domains, corners, portability
def test_boundary_is_tested_before_any_kernel_divides():
    """On the boundary q1_hat = t_hat^2/q_hat0 (exactly, or to the last bit either way) the entropic
    kernel would divide by zero; the domain test comes first, so the outcome is a ConvergenceError
    naming the function and the point in every build (it was a ZeroDivisionError with FMA)."""
    prob = fpb._BinaryProblem(0.5, 0.0)
    qh0 = prob.ref.qh0
    for qh1 in (1.0, 2.0, 0.7):
        th = math.sqrt(qh0 * qh1)
        for th_ in (th, np.nextafter(th, 0.0), np.nextafter(th, 1.0)):
            x = np.array([0.9, 0.3, qh1, th_, 1.0])
            with pytest.raises(ConvergenceError, match="binary_perceptron.*alpha=0.5"):
                prob.eval(x, 0.9)
            from statmech.saddle import SolveInfo
            with pytest.raises(ConvergenceError, match="boundary of the RS domain.*alpha=0.5"):
                fpc._assemble(prob, 0.05, 0.9, SolveInfo(x, 0.0, 1, True), x, prob.ref.entropy, 0.3)


@pytest.mark.parametrize("alpha", [0.5, 0.3])
def test_sweep_through_the_typical_distance_is_continuous(alpha):
    """S_FP is continuous (and smooth) in d through d_typ: S_eq there exactly, S_eq - S ~ c (d - d_typ)^2
    on both sides, the interpolated gap |p - p_typ| < 4e-3 agreeing with direct solves next to it."""
    eq = fp.equilibrium_binary(alpha)
    d_typ, S_eq = eq.d_typical, eq.entropy
    dd = np.array([-6e-3, -2.5e-3, -1.5e-3, -1e-5, -3.2e-7, 0.0, 3.2e-7, 1e-5, 1.5e-3, 2.5e-3, 6e-3])
    r = fp.binary_perceptron(alpha, d_typ + dd)
    assert np.all(np.isfinite(r.entropy)) and np.all(r.converged)
    assert r.entropy[5] == S_eq
    c = (S_eq - r.entropy) / np.where(dd == 0, 1.0, dd) ** 2
    c = c[dd != 0]
    assert np.all(c > 0) and np.ptp(c) < 0.01 * np.mean(c)     # one smooth parabola through d_typ
    # the gap polynomial against direct solves at |p - p_typ| = 3e-3 (inside the gap) and the
    # slope dS/dd against the parabola
    prob = fpb._BinaryProblem(alpha, 0.0)
    for s in (-1.0, 1.0):
        p = prob.ref.q0 + s * 3e-3
        info = fpc._march(prob, [p], prob.ref.q0, prob.typical(), prob.first_guess)[p]
        direct = prob.thermo(info.x, p)[0]
        assert fp.binary_perceptron(alpha, (1 - p) / 2).entropy == pytest.approx(direct, abs=1e-11)
    assert r.dS_dd[8] == pytest.approx(-2 * c[7] * 1.5e-3, rel=0.02)
    if alpha == 0.5:   # the point of the report: the typical distance of the reference
        assert fp.binary_perceptron(0.5, 0.338807).entropy == pytest.approx(0.3143900669, abs=1e-10)


def test_domains_at_the_door():
    import time
    with pytest.raises(ValueError, match=r"alpha must be in \(0, alpha_c\(kappa\)\) = \(0, 2\)"):
        fp.spherical_perceptron(3, 0.1)
    with pytest.raises(ValueError, match=r"alpha_KM.*0\.8330785997"):
        fp.binary_perceptron(0.9, 0.1)
    with pytest.raises(ValueError, match="alpha_KM"):
        fp.binary_zero_crossing(0.85)
    with pytest.raises(ValueError, match="alpha_KM"):
        fp.equilibrium_binary(0.9)
    with pytest.raises(ValueError, match="d must be in"):
        fp.spherical_perceptron(0.5, 1e-6)
    t = time.perf_counter()
    with pytest.raises(ValueError, match="freezing distance.*d_f ~ 0.000"):
        fp.binary_perceptron(0.5, 1e-12)
    assert time.perf_counter() - t < 10.0
    for call in (lambda: fp.binary_perceptron("0.5", 0.1), lambda: fp.spherical_perceptron(0.5, None),
                 lambda: fp.equilibrium_spherical(0.5, "x")):
        with pytest.raises(TypeError):
            call()


def test_krauth_mezard_capacity_of_the_reference():
    from statmech import perceptron
    for kappa in (0.0, 1.0):
        assert fpr._km_capacity(kappa) == pytest.approx(perceptron.binary_capacity(kappa), rel=1e-12)


@pytest.mark.slow
def test_binary_freezing_distance():
    """Towards small d the RS constrained replicas freeze: 1 - q1 -> 0 linearly at d_f (4.7e-4 at
    alpha = 0.5); above d_f the solution exists, well below it ValueError names d_f."""
    r = fp.binary_perceptron(0.5, np.array([1e-3, 7e-4, 6e-4]))
    eps = 1 - r.q1
    assert np.all(np.diff(eps) < 0) and eps[-1] < 5e-4
    slope = (eps[0] - eps[1]) / 3e-4
    d_f = 6e-4 - eps[2] / slope
    assert 3e-4 < d_f < 6e-4
    with pytest.raises(ValueError, match="freezing"):
        fp.binary_perceptron(0.5, 1e-4)
