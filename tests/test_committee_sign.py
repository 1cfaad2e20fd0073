"""Sign tree committee machine: RS storage at any odd K, AT line, 1RSB capacity for K >= 7.

Complements tests/test_committee.py (session 2, task B).  Default tests are fast; the
long cross-checks (AT line at K = 7, 1RSB capacities from RQMC vs the multiset rule) are slow.
"""
import math

import numpy as np
import pytest

from statmech import ConvergenceError
from statmech import committee as cm
from statmech import gaussian as gs
from statmech.committee import sign_1rsb, sign_rs


# --------------------------------------------------------------------------- K -> inf reference
def _rs_K_inf(alpha):
    """RS solution of the K -> inf sign TCM, derived independently of the library's K-unit code.

    By the CLT the majority vote of K -> inf units sees a Gaussian field with output overlap
    Q(q) = (2/pi) arcsin(q) (the sign kernel); the model is then a perceptron with
    s(q) = 1/2 ln(1-q) + q/(2(1-q)) + alpha E_t ln H(-sqrt(Q/(1-Q)) t), minimized over q.
    """
    from scipy import optimize
    z, w = gs.piecewise_nodes([0.0], 6)

    def s(q):
        Q = 2.0 / math.pi * math.asin(q)
        x = math.sqrt(Q / (1.0 - Q))
        return 0.5 * math.log(1.0 - q) + q / (2.0 * (1.0 - q)) + alpha * float(np.sum(w * gs.log_H(-x * z)))
    r = optimize.minimize_scalar(s, bounds=(1e-6, 0.99), method="bounded", options={"xatol": 1e-12})
    return r.x, r.fun


# --------------------------------------------------------------------------- RS storage, K >= 7
def test_fast_rs_point_equals_reference_kernel(rng):
    """O(K^2)/O(K^3) prefix-suffix kernel == the direct leave-one/two-out kernel (K = 1 ... 51)."""
    for K in (1, 3, 7, 21, 51):
        for x in (0.3, 1.0, 4.0):
            t = rng.standard_normal(K) * rng.choice([0.5, 2.0])
            a = np.array(sign_rs._rs_point(t, x, True))
            b = np.array(sign_rs._rs_point_fast(t, x, True))
            assert b == pytest.approx(a, rel=1e-11, abs=1e-13)
    # the derivative term against central differences of ln Z (K = 9)
    t = rng.standard_normal(9)
    x, h = 1.3, 1e-6
    d = (sign_rs._rs_point_fast(t, x + h, False)[0] - sign_rs._rs_point_fast(t, x - h, False)[0]) / (2 * h)
    assert sign_rs._rs_point_fast(t, x, False)[1] == pytest.approx(d, rel=1e-7)


def test_storage_K7_gauss_hermite_and_rqmc_agree_within_their_errors():
    """Two independent rules for the 7-dimensional averages (GH multiset vs antithetic RQMC)."""
    a = cm.tcm_storage(1.0, 7, method="gh", level=12)
    b = cm.tcm_storage(1.0, 7, method="rqmc", level=14)
    ea, eb = a.extra["quadrature_error"], b.extra["quadrature_error"]
    assert 0 < ea < 1e-4 and 0 < eb < 3e-4
    assert abs(a.q - b.q) < ea + eb
    assert abs(a.entropy - b.entropy) < ea + eb
    assert abs(a.replicon - b.replicon) < 3 * b.extra["stderr_replicon"] + 1e-3
    for r in (a, b):
        assert r.converged and r.rs_stable and r.hessian_eigenvalues[0] > 0
        assert r.q_hat == pytest.approx(r.q / (1 - r.q) ** 2, rel=1e-9)


def test_storage_rqmc_error_bar_is_honest_against_a_converged_rule_K5():
    """K = 5: the RQMC error bars (several independent seeds) cover the GH n = 24 multiset value."""
    ref = cm.tcm_storage(1.0, 5, method="gh", level=24)
    assert ref.extra["quadrature_error"] < 1e-7
    z = []
    for seed in range(4):
        r = sign_rs._storage_one(1.0, 5, ("rqmc", 12, 10 * seed), tol=math.inf)
        z.append((r.q - ref.q) / r.extra["stderr_q"])
        assert abs(r.q - ref.q) < r.extra["quadrature_error"] * 2.5   # 5 sigma
        assert abs(r.entropy - ref.entropy) < 5 * r.extra["stderr_entropy"]
    # the standard errors are not grossly too large either (a useless bar would pass the above)
    assert np.sqrt(np.mean(np.square(z))) > 0.05


def test_storage_K7_entropy_is_stationary_and_matches_tensor_free_check():
    """ds/dq = 0 at the returned q, with s(q) re-evaluated from the library's own averages."""
    r = cm.tcm_storage(1.5, 7, method="gh", level=12)
    lev = ("gh", 12)

    def s(q):
        l0 = sign_rs._rs_averages(7, q, lev, want_hess=False)[0]
        return 0.5 * math.log(1 - q) + q / (2 * (1 - q)) + 1.5 * l0
    h = 1e-4
    assert abs(s(r.q + h) - s(r.q - h)) / (2 * h) < 1e-6
    assert s(r.q) == pytest.approx(r.entropy, abs=1e-12)
    # the RS saddle point is a minimum of s(q) (n -> 0 inversion)
    assert s(r.q + 0.02) > r.entropy and s(r.q - 0.02) > r.entropy


def test_storage_approaches_the_K_infinity_limit_like_1_over_K():
    """q_K(alpha = 1) -> q_inf (effective perceptron, sign kernel) with K (q_K - q_inf) ~ const."""
    q_inf, s_inf = _rs_K_inf(1.0)
    qs = {3: cm.tcm_storage(1.0, 3, level=2).q, 5: cm.tcm_storage(1.0, 5, method="gh", level=16).q,
          7: cm.tcm_storage(1.0, 7, method="gh", level=12).q}
    d = {K: K * (q - q_inf) for K, q in qs.items()}
    assert qs[3] > qs[5] > qs[7] > q_inf
    # K (q_K - q_inf) = 0.233, 0.204, 0.195: a 1/K correction with a slowly varying coefficient
    assert 0.15 < d[7] < d[5] < d[3] < 0.3


def test_storage_K9_rqmc_default_and_errors():
    r = cm.tcm_storage(1.0, 9, level=12)      # default method for K >= 9 is RQMC
    assert r.extra["quadrature_level"][0] == "rqmc"
    assert r.extra["quadrature_error"] < 2e-3 and r.extra["sets"] == 5
    q_inf, _ = _rs_K_inf(1.0)
    q7 = cm.tcm_storage(1.0, 7, method="gh", level=12).q
    assert q_inf < r.q < q7
    with pytest.raises(ConvergenceError, match="quadrature error"):
        cm.tcm_storage(1.0, 9, level=10, tol=1e-6)


def test_storage_argument_validation_any_K():
    with pytest.raises(ValueError, match="method must be one of"):
        cm.tcm_storage(1.0, 7, method="sobol")
    with pytest.raises(ValueError, match="level must be given"):
        cm.tcm_storage(1.0, 7, method="multiset")
    with pytest.raises(ValueError, match="K must be a finite odd integer"):
        cm.tcm_storage(1.0, math.inf)
    with pytest.raises(ValueError, match="K must be an odd integer"):
        cm.tcm_storage(1.0, 8)
    with pytest.raises(ValueError, match="alpha must be < alpha_c"):
        cm.tcm_storage(7.4, 7)


def test_at_line_q_parametrization_reproduces_K3():
    """The AT line solved along the RS line alpha(q) agrees with the replicon of tcm_storage."""
    a = cm.tcm_at_line(3, level=2)
    assert a == pytest.approx(1.72936, abs=2e-5)        # docs: level-2 value of the former alpha-root
    r = cm.tcm_storage(a, 3, level=2)
    assert abs(r.replicon) < 1e-7
    p = cm.tcm_at_line_point(3, level=2)
    assert p.extra["alpha_over_alpha_c"] == pytest.approx(a / cm.tcm_capacity(3), rel=1e-12)


@pytest.mark.slow
def test_at_line_K7_and_ratio_trend():
    p7 = cm.tcm_at_line_point(7)                      # RQMC 2^16 by default for K >= 7
    assert p7.alpha == pytest.approx(2.320, abs=3e-3) and p7.extra["quadrature_error"] < 3e-3
    r = cm.tcm_storage(p7.alpha, 7, method="rqmc")    # same sets: the replicon vanishes there
    assert abs(r.replicon) < r.extra["replicon_error"]   # 2 standard errors (~1e-3, i.e. 2e-3 in alpha)
    a5 = cm.tcm_at_line(5)
    # alpha_AT grows with K but more slowly than alpha_c^RS ~ sqrt(K)
    assert a5 < p7.alpha < cm.tcm_capacity(7)
    assert p7.extra["alpha_over_alpha_c"] < a5 / cm.tcm_capacity(5) < cm.tcm_at_line(3, level=2) / cm.tcm_capacity(3)
    # two independent rules for the 7-d averages (GH n = 16 is low by 6e-3, within its estimate)
    b = cm.tcm_at_line_point(7, method="gh")
    assert abs(b.alpha - p7.alpha) < b.extra["quadrature_error"] + p7.extra["quadrature_error"] + 1e-4


# --------------------------------------------------------------------------- 1RSB inner average, large y
def test_1rsb_inner_grid_K1_closed_form_at_large_y():
    """K = 1: Y = H(-h/sqrt v) + e^{-y h^2/(2(1+yv))} (1+yv)^{-1/2} H(h/sqrt(v(1+yv))) exactly."""
    v = 0.25
    for y in (50.0, 5000.0, 1e5):
        for h0 in (-1.5, -0.2, 0.0, 0.3):
            Yc = gs.H(-h0 / math.sqrt(v)) + math.exp(-y * h0 ** 2 / (2 * (1 + y * v))) / math.sqrt(1 + y * v) \
                * gs.H(h0 / math.sqrt(v * (1 + y * v)))
            assert sign_1rsb._inner_Y_grid(np.array([h0]), v, y, *sign_1rsb._GL8) == pytest.approx(Yc, rel=1e-12)


def test_1rsb_inner_grid_matches_tanh_sinh_version_at_large_K_and_y(rng):
    """The common-grid inner average vs the independent per-unit tanh-sinh version (K = 25, 49)."""
    for K, y, v in [(25, 512.0, 0.3), (49, 1200.0, 0.27)]:
        h = math.sqrt(1 - v) * rng.standard_normal(K)
        xs, xcs, tw = gs.tanh_sinh_rule(6)
        n = len(xs)
        a = sign_1rsb._inner_Y(h, v, y, xs, xcs, tw)
        b = sign_1rsb._inner_Y_grid(h, v, y, *sign_1rsb._GL8)
        assert b == pytest.approx(a, rel=1e-11)


def test_1rsb_rqmc_small_run_K5_consistent_with_multiset_value():
    r = cm.advanced.tcm_capacity_1rsb_rqmc(5, log2_points=8, reps=4)
    se = r.extra["stderr"]
    assert 0 < se < 0.03 and len(r.extra["alpha_c_sets"]) == 5
    assert abs(r.alpha_c - 3.619289) < 4 * se + 1e-3
    assert np.all(r.hessian_eigenvalues > 0)          # a minimum in (logit q0, log y)


def test_1rsb_capacity_routes_K7_to_rqmc(monkeypatch):
    """tcm_capacity(K >= 7, 'sign', '1rsb') no longer raises: it returns the RQMC point's value."""
    calls = {}

    def fake(k, **kw):
        calls["k"], calls["kw"] = k, kw
        from statmech.saddle import SaddlePoint
        return SaddlePoint("x", {"K": k}, {"q0": 0.6, "y": 80.0}, {"alpha_c": 3.9}, True, 0.0, 1,
                           np.array([0.1, 0.5]), extra={"stderr": 0.001})
    sign_1rsb._capacity_1rsb_rqmc_cached.cache_clear()
    monkeypatch.setattr(sign_1rsb, "tcm_capacity_1rsb_rqmc", fake)
    assert cm.tcm_capacity(7, "sign", "1rsb") == 3.9
    p = cm.advanced.tcm_capacity_1rsb_point(7)
    assert calls["k"] == 7 and p.extra["quadrature_error"] == pytest.approx(0.002)
    sign_1rsb._capacity_1rsb_rqmc_cached.cache_clear()
    with pytest.raises(ValueError, match="K must be an odd integer"):
        cm.tcm_capacity(8, "sign", "1rsb")


@pytest.mark.slow
def test_1rsb_capacity_K7_rqmc_vs_multiset_outer_rule():
    """K = 7: the RQMC capacity vs alpha at the same (q0, y) with a Gauss-Hermite multiset outer rule."""
    p = cm.advanced.tcm_capacity_1rsb_point(7)
    se = p.extra["stderr"]
    assert se < 2e-3 * p.alpha_c
    a_ms = sign_1rsb._alpha_of(7, p.q0, p.y, 10, 4)
    assert abs(a_ms - p.alpha_c) < 4 * se + 2e-3
    assert cm.advanced.tcm_capacity_1rsb_point(5).alpha_c < p.alpha_c < cm.tcm_capacity(7)


@pytest.mark.slow
def test_1rsb_capacity_large_K_table_grows_like_sqrt_log_K():
    """Stored large-K values (figures/data/committee_1rsb_largeK.json) are reproduced at K = 25 and
    alpha_c/sqrt(ln K) decreases slowly (3.00 at K = 3, ~2.7 at K = 25, below 2.7 beyond)."""
    from statmech.figures import load_data
    rows = {r["K"]: r for r in load_data("committee_1rsb_largeK").results}
    r = cm.advanced.tcm_capacity_1rsb_rqmc(25, seed=1000)    # sets independent of the stored ones (0-8, 100-123)
    ref = rows[25]
    assert abs(r.alpha_c - ref["alpha_c"]) < 4 * math.hypot(r.extra["stderr"], ref["stderr"])
    Ks = sorted(k for k in rows if k >= 25)
    ratios = [rows[k]["alpha_c"] / math.sqrt(math.log(k)) for k in Ks]
    assert all(2.3 < x < 2.75 for x in ratios)
    assert all(rows[a]["alpha_c"] < rows[b]["alpha_c"] for a, b in zip(Ks, Ks[1:]))
