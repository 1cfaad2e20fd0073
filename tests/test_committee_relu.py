"""Tree committee machine with ReLU hidden units, K = 2: finite-alpha RS storage and 1RSB capacity.

Equations R2.1-R2.6 of docs/committee.md ("ReLU hidden units").  Independent references used
here: Owen's T closed form of the bivariate normal CDF (scipy), 40-digit mpmath quadrature in
the deep tail, Monte Carlo of the brute-force flip cost, finite differences, and an exact
(linear-programming) storage experiment at finite N.
"""
import math

import mpmath as mp
import numpy as np
import pytest
from scipy import integrate, special
from scipy.optimize import linprog

from statmech import committee as cm
from statmech import gaussian as gs
from statmech.committee import _kernels, flip_cost, relu_1rsb, relu_k2

RHO = 1 / math.sqrt(2)
XS, XCS, TW = gs.tanh_sinh_rule(3)


# --------------------------------------------------------------------------- references
def _bvn_owens_t(a, b, rho):
    """Phi_2(a, b; rho) by Owen's T (absolute accuracy only; a, b != 0)."""
    s = math.sqrt(1 - rho * rho)
    beta = 0.0 if a * b > 0 else 0.5
    return (0.5 * special.ndtr(a) + 0.5 * special.ndtr(b)
            - special.owens_t(a, (b - rho * a) / (a * s)) - special.owens_t(b, (a - rho * b) / (b * s)) - beta)


def _log_bvn_mpmath(a, b, rho, dps=30):
    """log Phi_2 by mpmath quadrature of int_{-inf}^a phi(s) Phi((b - rho s)/sig) ds around its mode."""
    mp.mp.dps = dps
    a, b, rho = mp.mpf(a), mp.mpf(b), mp.mpf(rho)
    sig = mp.sqrt(1 - rho ** 2)
    g = lambda s: -s ** 2 / 2 - mp.log(mp.sqrt(2 * mp.pi)) + mp.log(mp.erfc(-(b - rho * s) / (sig * mp.sqrt(2))) / 2)
    m = a if mp.diff(g, a) > 0 else mp.findroot(lambda s: mp.diff(g, s), (a - 400, a), solver="bisect")
    pts = sorted({-mp.inf, a, *[m - d for d in (30, 10, 3, 1, mp.mpf("0.2"), 0)],
                  *[x for x in (m + mp.mpf("0.2"), m + 1, m + 3, m + 10) if x < a]})
    return float(g(m) + mp.log(mp.quad(lambda s: mp.exp(g(s) - g(m)), pts)))


def _cost2(l1, l2):
    """K = 2 ReLU flip cost, vectorized closed form (distance^2 to the cone lambda_1 > max(0, lambda_2))."""
    return np.where((l1 > 0) & (l1 > l2), 0.0,
                    np.where((l1 <= 0) & (l2 <= 0), l1 ** 2,
                             np.where(l1 + l2 > 0, (l2 - l1) ** 2 / 2, l1 ** 2 + l2 ** 2)))


# --------------------------------------------------------------------------- log Phi_2
def test_log_bvn_matches_owens_t():
    for rho in (RHO, -RHO):
        for a in (-3.1, -1.2, -0.3, 0.4, 1.7, 3.3):
            for b in (-2.9, -0.7, 0.2, 1.1, 2.6):
                ref = _bvn_owens_t(a, b, rho)   # absolute accuracy only
                v = relu_k2._log_bvn(a, b, rho, XS, XCS, TW)
                assert math.exp(v) == pytest.approx(ref, abs=5e-14)
                if ref > 1e-4:
                    assert v == pytest.approx(math.log(ref), rel=1e-11, abs=1e-13)


@pytest.mark.parametrize("a,b,rho", [(-30.0, -25.0, RHO), (-80.0, 2.0, RHO), (3.0, -60.0, RHO),
                                     (-20.0, -20.0, -RHO), (-1.0, -40.0, -RHO), (-200.0, -150.0, RHO)])
def test_log_bvn_deep_tail_vs_mpmath(a, b, rho):
    """log Phi_2 deep in the tail (Phi_2 down to e^-20000): no underflow, relative accuracy 1e-13."""
    assert relu_k2._log_bvn(a, b, rho, XS, XCS, TW) == pytest.approx(_log_bvn_mpmath(a, b, rho), rel=1e-13)


# --------------------------------------------------------------------------- RS point function
def test_Z_is_the_probability_that_the_relu_output_is_correct(rng):
    u = np.array([0.4, 0.9])
    lam = u + rng.standard_normal((400000, 2))
    ok = (np.maximum(lam[:, 0], 0) - np.maximum(lam[:, 1], 0)) > 0
    Z = math.exp(relu_k2._relu2_rs_point(u[0], u[1], XS, XCS, TW)[0])
    assert abs(ok.mean() - Z) < 4 * math.sqrt(Z * (1 - Z) / ok.size)
    # Z(0) = Phi_2(0, 0; 1/sqrt 2) = 1/4 + arcsin(1/sqrt 2)/(2 pi) = 3/8
    assert math.exp(relu_k2._relu2_rs_point(0.0, 0.0, XS, XCS, TW)[0]) == pytest.approx(3 / 8, rel=1e-14)


@pytest.mark.parametrize("u", [(0.4, -1.3), (-3.0, 2.0), (-8.0, 5.0), (6.0, 1.0), (-25.0, -30.0)])
def test_rs_point_gradient_and_hessian_vs_finite_differences(u):
    f = lambda v: np.array(relu_k2._relu2_rs_point(v[0], v[1], XS, XCS, TW))
    p = f(np.array(u))
    h = 1e-5 * max(1.0, abs(u[0]), abs(u[1]))
    for i, e in enumerate(np.eye(2)):
        d = (f(np.array(u) + h * e) - f(np.array(u) - h * e)) / (2 * h)
        scale = max(1.0, abs(p[1 + i]))
        assert d[0] == pytest.approx(p[1 + i], abs=2e-7 * scale)
        # Hessian rows: (h11, h12) for i = 0, (h12, h22) for i = 1
        row = (p[3], p[4]) if i == 0 else (p[4], p[5])
        assert d[1] == pytest.approx(row[0], abs=1e-5 * max(1, abs(row[0])))
        assert d[2] == pytest.approx(row[1], abs=1e-5 * max(1, abs(row[1])))


def test_polar_rule_and_independent_tensor_gauss_hermite():
    """E_t ln Z(x t) and E_t[t . grad ln Z] (RS.1, RS.2) on the polar rule vs a tensor GH rule with
    Owen's-T Z and finite-difference gradients (independent implementation), q = 0.2."""
    q = 0.2
    x = math.sqrt(q / (1 - q))
    s0, s1, _, _ = relu_k2._relu2_rs_averages(q, relu_k2._RELU2_LEVELS)
    z, w = gs.gauss_hermite(40)
    lnZ = lambda u1, u2: math.log(_bvn_owens_t(u1, (u1 - u2) * RHO, RHO))
    r0 = r1 = 0.0
    h = 1e-6
    for t1, w1 in zip(z, w):
        for t2, w2 in zip(z, w):
            u1, u2 = x * t1, x * t2
            if u1 == u2:   # Owen's-T form is singular at b = 0: evaluate just off the diagonal
                u2 = u1 - 1e-9
            r0 += w1 * w2 * lnZ(u1, u2)
            g1 = (lnZ(u1 + h, u2) - lnZ(u1 - h, u2)) / (2 * h)
            g2 = (lnZ(u1, u2 + h) - lnZ(u1, u2 - h)) / (2 * h)
            r1 += w1 * w2 * (t1 * g1 + t2 * g2)
    assert s0 == pytest.approx(r0, abs=1e-8)
    assert s1 == pytest.approx(r1, abs=1e-7)
    T1, T2, W = relu_k2._relu2_polar(3)
    assert W.sum() == pytest.approx(1.0, abs=1e-13)
    assert np.dot(W, T1 ** 2 + T2 ** 2) == pytest.approx(2.0, abs=1e-12)
    assert np.dot(W, T1 * T2) == pytest.approx(0.0, abs=1e-13)


# --------------------------------------------------------------------------- finite-alpha RS storage
def test_storage_small_alpha_q_linear():
    """alpha -> 0: q -> 0 with q/alpha -> -tr Hess_u ln Z(0) (expansion of RS.2 at small q)."""
    tr = -(relu_k2._relu2_rs_point(0.0, 0.0, XS, XCS, TW)[3] + relu_k2._relu2_rs_point(0.0, 0.0, XS, XCS, TW)[5])
    r = cm.tcm_storage(np.array([0.0, 1e-3]), 2, "relu")
    assert r.q[0] == 0.0 and r.entropy[0] == 0.0
    assert r.q[1] / 1e-3 == pytest.approx(tr, rel=2e-3)
    assert bool(np.all(r.converged))


def test_storage_is_stationary_and_derivatives_match_fd():
    """q solves RS.2: the finite-difference derivative of s(q) (RS.1) vanishes there; the reported
    Hessian matches the second finite difference of s; q_hat = q/(1-q)^2."""
    alpha = 0.7
    r = cm.tcm_storage(alpha, 2, "relu")
    lev = relu_k2._RELU2_LEVELS

    def s(q):
        return _kernels._eqs.gs_rs(q)[0] + alpha * relu_k2._relu2_rs_averages(q, lev)[0]
    q, h = r.q, 1e-4
    d1 = (s(q + h) - s(q - h)) / (2 * h)
    d2 = (s(q + h) - 2 * s(q) + s(q - h)) / h ** 2
    assert abs(d1) < 1e-7
    assert r.entropy == pytest.approx(s(q), abs=1e-13)
    assert r.hessian_eigenvalues[0] == pytest.approx(d2, rel=1e-4)
    assert r.q_hat == pytest.approx(q / (1 - q) ** 2, rel=1e-13)
    assert r.quadrature_error < 1e-6 and r.rs_stable


def test_storage_approaches_capacity_and_replicon_marginal():
    """As alpha -> 4/3, q -> 1 with 1 - q ~ (1 - 3 alpha/4)/(1 + 3 alpha/4) (leading order, see docs)
    and the entropy -> -inf; alpha >= 4/3 is rejected.  Replicon (RS.3): > 0 and decreasing;
    at q -> 1 the replicon sum E||Hess_u ln Z||_F^2 -> E||Hess C/2||_F^2 = P(A) + P(B) + 2 P(P)
    = 3/4, so it vanishes exactly at alpha_c = 4/3 (marginal, like the perceptron)."""
    r = cm.tcm_storage(np.array([1.0, 1.3, 1.325]), 2, "relu")
    assert np.all(np.diff(r.q) > 0) and np.all(np.diff(r.entropy) < 0)
    a = r.alpha
    ratio = (1 - r.q) * (1 + 0.75 * a) / (1 - 0.75 * a)
    assert np.all(np.abs(ratio[1:] - 1) < [0.15, 0.1])
    assert abs(ratio[2] - 1) < abs(ratio[1] - 1)
    assert r.entropy[2] < -5
    assert np.all(r.replicon > 0) and np.all(np.diff(r.replicon) < 0) and np.all(r.rs_stable)
    fro = []
    for q in (1 - 1e-4, 1 - 1e-6):
        _, _, A11, A12 = relu_k2._relu2_rs_averages(q, relu_k2._RELU2_LEVELS)
        fro.append(2 * (A11 + A12))
    assert abs(fro[1] - 0.75) < abs(fro[0] - 0.75) < 0.02
    with pytest.raises(ValueError, match="alpha must be < alpha_c"):
        cm.tcm_storage(4 / 3, 2, "relu")


@pytest.mark.slow
def test_at_line_is_capacity():
    assert cm.advanced.relu_at_line(2) == pytest.approx(4 / 3, rel=1e-15)


# --------------------------------------------------------------------------- 1RSB at capacity
@pytest.mark.parametrize("h,v,y", [((0.3, -0.5), 0.4, 3.0), ((-1.0, 0.8), 0.3, 15.0), ((-0.4, -1.2), 0.5, 0.7),
                                   ((2.0, 1.9), 0.2, 40.0)])
def test_inner_Y_vs_monte_carlo(h, v, y, rng):
    """Y(h) = E exp(-y C(lambda)/2) (Eq. R2.2) vs Monte Carlo of the brute-force flip cost."""
    lam = np.array(h) + math.sqrt(v) * rng.standard_normal((300000, 2))
    f = np.exp(-y * _cost2(lam[:, 0], lam[:, 1]) / 2)
    Y = math.exp(relu_k2._relu2_log_Y(h[0], h[1], v, y)[0])
    assert abs(Y - f.mean()) < 4.5 * f.std() / math.sqrt(f.size)
    # the numba flip cost of the library agrees with the closed form used above
    assert cm.advanced.relu_flip_cost(lam[0]) == pytest.approx(float(_cost2(lam[0, 0], lam[0, 1])), abs=1e-12)


def test_inner_Y_limits():
    """y -> 0: ln Y ~ -y E[C]/2;  y -> inf: Y -> P(correct) = Z;  deep tail stays finite."""
    h, v = (-0.6, 0.9), 0.35
    sv = math.sqrt(v)
    # E[C] at h by adaptive 2-d quadrature (scipy dblquad, 1e-11) of the brute-force cost
    f = lambda z2, z1: math.exp(-(z1 * z1 + z2 * z2) / 2) / (2 * math.pi) * float(_cost2(h[0] + sv * z1, h[1] + sv * z2))
    lam_mean_C = integrate.dblquad(f, -12, 12, -12, 12, epsabs=1e-12, epsrel=1e-11)[0]
    y = 1e-6
    assert relu_k2._relu2_log_Y(h[0], h[1], v, y)[0] / y == pytest.approx(-lam_mean_C / 2, rel=1e-5)
    lZ = relu_k2._relu2_rs_point(h[0] / math.sqrt(v), h[1] / math.sqrt(v), XS, XCS, TW)[0]
    d = [relu_k2._relu2_log_Y(h[0], h[1], v, y)[0] - lZ for y in (1e8, 1e10)]
    # the strips next to the correct cone contribute O(y^-1/2)
    assert 0 < d[1] < 1e-4 and d[0] / d[1] == pytest.approx(10.0, rel=1e-3)
    deep = relu_k2._relu2_log_Y(-40.0, 30.0, 0.1, 50.0)[0]
    assert np.isfinite(deep) and deep < -1000


def test_1rsb_y_to_zero_gives_rs_capacity():
    """alpha(q0, y) of Eq. 1RSB.1 -> 1/E C = 4/3 as y -> 0 (at any q0), from above."""
    for q0 in (0.3, 0.7):
        a = [relu_k2._relu2_alpha_of(q0, y, 2) for y in (1e-3, 1e-2)]
        assert 0 < a[0] - 4 / 3 < a[1] - 4 / 3
        assert a[0] - 4 / 3 < 1e-3


def test_1rsb_outer_rule_converged():
    a = [relu_k2._relu2_alpha_of(0.6, 20.0, lev) for lev in (2, 3)]
    assert a[0] == pytest.approx(a[1], rel=1e-7)


@pytest.mark.slow
def test_1rsb_capacity_K2_equals_rs():
    """No interior stationary point of alpha(q0, y) below the RS value: alpha_c^1RSB(2) = 4/3."""
    r = cm.advanced.relu_capacity_1rsb_point(2)
    assert r.alpha_c == 4 / 3 and r.grid_min_excess > 1e-7
    assert cm.tcm_capacity(2, "relu", "1rsb") == 4 / 3
    # along q0 -> 1 with y (1 - q0) fixed, alpha -> 4/3 from above as well
    ex = [relu_k2._relu2_alpha_of(q0, 1.0 / (1 - q0), 2) - 4 / 3 for q0 in (0.99, 0.999)]
    assert 0 < ex[1] < ex[0] < 1e-3


# --------------------------------------------------------------------------- exact finite-N storage (LP)
def _storable(N, P, rng):
    """Exact: the K = 2 ReLU constraints are linear in (w1, w2) (label +: w1.x1 > 0, w1.x1 > w2.x2;
    label -: the same with the branches exchanged), so storability is an LP feasibility problem."""
    n = N // 2
    X1, X2 = rng.standard_normal((P, n)), rng.standard_normal((P, n))
    s = rng.choice([-1, 1], P)
    Z = np.zeros((P, n))
    pos = s[:, None] > 0
    rows1 = np.where(pos, np.hstack([X1, Z]), np.hstack([Z, X2]))
    rows2 = np.where(pos, np.hstack([X1, -X2]), np.hstack([-X1, X2]))
    A = np.vstack([rows1, rows2])
    r = linprog(np.zeros(N), A_ub=-A, b_ub=-np.ones(2 * P), bounds=[(None, None)] * N, method="highs")
    return r.status == 0


def test_exact_storage_fraction_crosses_at_four_thirds(rng):
    """Theory vs simulation: with N = 100 the fraction of storable instances is ~1 at alpha = 1.1,
    ~1/2 at alpha_c = 4/3 and ~0 at alpha = 1.6 (measured with 40 instances at N = 100, 200, 400:
    0.525, 0.55, 0.475 at 4/3; docs/committee.md)."""
    N = 100
    frac = {a: np.mean([_storable(N, int(round(a * N)), rng) for _ in range(30)]) for a in (1.1, 4 / 3, 1.6)}
    assert frac[1.1] >= 0.85
    assert 0.2 <= frac[4 / 3] <= 0.8
    assert frac[1.6] <= 0.1


# --------------------------------------------------------------------------- API
def test_relu_argument_validation():
    with pytest.raises(ValueError, match="K must be 2"):
        cm.tcm_storage(0.5, 4, "relu")
    with pytest.raises(ValueError, match="K must be an even integer"):
        cm.tcm_storage(0.5, 3, "relu")
    with pytest.raises(ValueError, match="alpha must be >= 0"):
        cm.tcm_storage(-0.1, 2, "relu")
    with pytest.raises(ValueError, match="ansatz must be one of"):
        cm.tcm_storage(0.5, 2, "relu", ansatz="1rsb")
    with pytest.raises(ValueError, match="K must be 2, 4, 6, 8, 10, 12 or math.inf"):
        cm.tcm_capacity(14, "relu", "1rsb")
    with pytest.raises(ValueError, match="K must be 2"):
        cm.advanced.relu_capacity_1rsb_point(6)


# --------------------------------------------------------------------------- K >= 4 1RSB machinery (RQMC)
def test_relu_projection_is_the_nearest_correct_point(rng):
    """_relu_proj: the point behind the flip cost is correct (output >= 0, on the boundary when
    C > 0), at squared distance C, and no random correct point is closer."""
    for K in (2, 4, 6):
        for _ in range(100):
            t = 2 * rng.standard_normal(K)
            P = np.empty(K)
            c = flip_cost._relu_proj(t, K // 2, P)
            assert c == pytest.approx(cm.advanced.relu_flip_cost(t), abs=1e-10)
            assert np.sum((P - t) ** 2) == pytest.approx(c, rel=1e-9, abs=1e-12)
            out = np.maximum(P[:K // 2], 0).sum() - np.maximum(P[K // 2:], 0).sum()
            assert out >= -1e-9 and (c == 0 or abs(out) < 1e-9)


@pytest.mark.parametrize("q0,y", [(0.7, 10.0), (0.9, 40.0)])
def test_importance_sampled_inner_average_vs_exact_K2(q0, y):
    """The importance-sampled QMC inner average (K >= 4 1RSB) vs the exact K = 2 ln Y (R2.2):
    per-point error ~1e-3 and no bias at 2^10 inner points, also at large y where plain
    sampling is off by O(1) (measured 0.5 at y = 40)."""
    from scipy.stats import qmc
    T = np.ascontiguousarray(special.ndtri(qmc.Sobol(d=2, scramble=True, seed=3).random_base2(9)))
    U = np.ascontiguousarray(qmc.Sobol(d=2, scramble=True, seed=4).random_base2(10))
    sh = np.ascontiguousarray(np.random.default_rng(5).random((T.shape[0], 2)))
    lc, _, ch = relu_1rsb._relu_outer_1rsb_is(T, U, sh, q0, y)
    exact = relu_k2._relu2_log_Y(math.sqrt(q0) * T[:, 0], math.sqrt(q0) * T[:, 1], 1 - q0, y)
    d = lc - exact
    assert np.mean(np.abs(d)) < 3e-3
    assert abs(d.mean()) < 4 * d.std() / math.sqrt(d.size) + 1e-5
    assert ch == pytest.approx([cm.advanced.relu_flip_cost(math.sqrt(q0) * t) for t in T], abs=1e-12)


def test_relu_1rsb_alpha_rqmc_K4():
    """alpha(q0, y) at K = 4: y -> 0 gives alpha_c^RS(4) = 2.4746; near the minimum (0.754, 11.8)
    it is far below RS (RSB lowers the K = 4 capacity, alpha_c^1RSB(4) = 2.316)."""
    a_rs = cm.tcm_capacity(4, "relu")
    a, se, dinner = cm.advanced.relu_1rsb_alpha_rqmc(0.6, 0.01, 4, log2_outer=9, log2_inner=6)
    assert a == pytest.approx(a_rs, abs=0.01)
    a, se, dinner = cm.advanced.relu_1rsb_alpha_rqmc(0.754, 11.8, 4, log2_outer=8, log2_inner=9)
    assert a == pytest.approx(2.316, abs=max(0.01, 4 * se)) and abs(dinner) < 0.01
    with pytest.raises(ValueError, match="K must be a finite even integer >= 4"):
        cm.advanced.relu_1rsb_alpha_rqmc(0.5, 1.0, 2)
    with pytest.raises(ValueError, match="q0 must be in"):
        cm.advanced.relu_1rsb_alpha_rqmc(1.0, 1.0, 4)


@pytest.mark.slow
def test_relu_capacity_1rsb_K4():
    r = cm.advanced.relu_capacity_1rsb_rqmc(4)
    assert r.alpha_c == pytest.approx(2.316, abs=max(0.005, 4 * r.stderr))
    assert r.alpha_c < cm.tcm_capacity(4, "relu") - 0.1
    assert np.all(r.hessian_eigenvalues > 0) and abs(r.inner_change) < 2e-3
    assert 0.65 < r.q0 < 0.85 and 7 < r.y < 20
    assert cm.tcm_capacity(4, "relu", "1rsb") == r.alpha_c   # same (cached) computation
    with pytest.raises(ValueError, match="K must be 4 or 6"):
        cm.advanced.relu_capacity_1rsb_rqmc(8)


@pytest.mark.slow
def test_relu_capacity_1rsb_K6_between_K4_and_K_inf():
    r = cm.advanced.relu_capacity_1rsb_rqmc(6)
    assert r.alpha_c == pytest.approx(2.578, abs=max(0.008, 4 * r.stderr))
    assert cm.advanced.relu_capacity_1rsb_rqmc(4).alpha_c < r.alpha_c < cm.tcm_capacity(math.inf, "relu", "1rsb")
    assert r.alpha_c < cm.tcm_capacity(6, "relu") - 0.15


def test_cli_relu_storage_matches_library():
    import json
    import subprocess
    import sys
    p = subprocess.run([sys.executable, "-m", "statmech", "committee", "storage", "--alpha", "1", "--K", "2",
                        "--activation", "relu", "--json"], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    r = cm.tcm_storage(1.0, 2, "relu")
    assert d["q"] == pytest.approx(r.q, rel=1e-12) and d["rs_stable"] is True
    p = subprocess.run([sys.executable, "-m", "statmech", "committee", "storage", "--alpha", "1", "--K", "3",
                        "--activation", "relu"], capture_output=True, text=True, timeout=300)
    assert p.returncode == 2 and "K" in p.stderr and len(p.stderr.strip().splitlines()) == 1
