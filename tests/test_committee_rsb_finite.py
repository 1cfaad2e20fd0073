"""Finite-alpha 1RSB (Eqs. F.1-F.8) and frozen 2RSB (Eq. 2RSB.1) of the sign tree committee, K = 3.

Checks: the energetic term against a brute-force tensor Gauss-Hermite quadrature written
here in numpy (independent of the package's sorted-order rule), the analytic gradient
against finite differences, the 2RSB function against its 1RSB limits, the Eq. F.8 fit on
synthetic data; slow: a branch point near capacity against the frozen expansion, and the
branch extrapolation against the frozen 1RSB capacity on the same outer rule.
"""
import itertools
import math

import numpy as np
import pytest
from scipy.special import log_ndtr

from statmech.committee import sign_1rsb, sign_1rsb_branch, sign_1rsb_finite, sign_2rsb
from statmech.committee.advanced import TCMRSBPoint, tcm_1rsb_branch, tcm_1rsb_point

F = sign_1rsb_finite


def _gh(n):
    x, w = np.polynomial.hermite_e.hermegauss(n)
    return x, w / w.sum()


def _brute_GE(q0, q1, m, n_out, n_in):
    """G_E = E_t0 (1/m) ln E_t1 Z^m on tensor Gauss-Hermite rules (numpy, K = 3)."""
    xo, wo = _gh(n_out)
    xi, wi = _gh(n_in)
    T1 = np.array(list(itertools.product(xi, repeat=3)))
    W1 = np.prod(np.array(list(itertools.product(wi, repeat=3))), axis=1)
    se, b, a = math.sqrt(1 - q1), math.sqrt(q1 - q0), math.sqrt(q0)
    tot = 0.0
    for (i, j, k) in itertools.product(range(n_out), repeat=3):
        h = a * np.array([xo[i], xo[j], xo[k]]) + b * T1
        lp = log_ndtr(h / se)          # P(unit +) = H(-h/se)
        lq = log_ndtr(-h / se)
        p, q = np.exp(lp), np.exp(lq)
        Z = p[:, 0] * p[:, 1] * p[:, 2] + p[:, 0] * p[:, 1] * q[:, 2] + p[:, 0] * q[:, 1] * p[:, 2] \
            + q[:, 0] * p[:, 1] * p[:, 2]
        tot += wo[i] * wo[j] * wo[k] * np.log(np.sum(W1 * Z ** m)) / m
    return tot


@pytest.mark.slow
@pytest.mark.parametrize("inner", [("sorted", 6, 4, 1), ("gh", 20)])
def test_energetic_matches_brute_force(inner):
    q0, q1, m = 0.3, 0.6, 0.5
    rule = F.Rule(inner=inner, outer=("gh", 6))
    ge = F._energetic(3, q0, q1, m, rule)[0]
    assert ge == pytest.approx(_brute_GE(q0, q1, m, 6, 24), abs=1e-8)


def test_energetic_gradient_is_the_derivative():
    """dG/d(q0, q1, m) of Eq. F.4 against central differences of G on the same rule (near capacity)."""
    rule = F.Rule(inner=("sorted", 6, 4, 1), outer=("gh", 4))
    x = np.array([0.64, 0.98, 0.4])
    g = F._energetic(3, *x, rule)
    for c in range(3):
        e = np.zeros(3)
        e[c] = 1e-5
        fd = (F._energetic(3, *(x + e), rule)[0] - F._energetic(3, *(x - e), rule)[0]) / 2e-5
        assert g[1 + c] == pytest.approx(fd, rel=1e-4, abs=1e-6)


def test_entropic_is_eq_F1():
    q0, q1, m = 0.4, 0.9, 0.3
    L1, L0 = 1 - q1, 1 - q1 + m * (q1 - q0)
    S = 0.5 * (math.log(L1) + math.log(L0 / L1) / m + q0 / L0)
    assert F._entropic(q0, q1, m)[0] == pytest.approx(S, rel=1e-14)


def test_extrapolation_recovers_a_known_branch():
    eps = np.array([0.02, 0.01, 0.005, 0.0025])
    a = 3.1 - 40 * eps + 55 * eps ** 1.5
    fit = sign_1rsb_branch.extrapolate_capacity(eps, a)
    assert fit["alpha_c"] == pytest.approx(3.1, abs=1e-12) and fit["c1"] == pytest.approx(-40, rel=1e-10)
    with pytest.raises(ValueError, match="eps"):
        sign_1rsb_branch.extrapolate_capacity([0.0, 0.1, 0.2], [1, 2, 3])


def test_invalid_arguments_name_the_argument():
    with pytest.raises(ValueError, match="K must be 3, 5 or 7"):
        tcm_1rsb_point(9, 0.99)
    with pytest.raises(ValueError, match="K must be 3, 5 or 7"):
        tcm_1rsb_point(4, 0.99)
    with pytest.raises(ValueError, match="q1"):
        tcm_1rsb_point(3, 1.0)
    with pytest.raises(ValueError, match="1 - q1 must be <= 0.05"):
        tcm_1rsb_point(5, 0.9)
    with pytest.raises(ValueError, match="guess"):
        tcm_1rsb_point(3, 0.99, guess=(0.995, 0.2, 3.0))
    with pytest.raises(TypeError, match="q1 must be a real number"):
        tcm_1rsb_point(3, "0.99")
    with pytest.raises(ValueError, match="eps"):
        tcm_1rsb_branch(5, eps=(1e-3, 2e-3, 3e-3))


# --------------------------------------------------------------------------- the order-statistics rule (any K)
def test_order_dominant_term_equals_the_sorted_bulk():
    """E[D^m] of Eq. F.10 (1-d reduction over the M-th largest field, :mod:`._rsb_order`) against the
    separable bulk of the independent K = 3 sorted-order rule, which is the same integral: 1e-12."""
    from statmech import gaussian as gs
    from statmech.committee._rsb_order import point_terms
    from statmech.committee._rsb_sorted import _inner_sorted3
    xs, xcs, tw = gs.tanh_sinh_rule(2)
    gx, gw = np.polynomial.legendre.leggauss(10)
    for a, b, se, m in [([-0.3, 0.1, 0.5], 0.6, 0.05, 0.05), ([-1.2, -0.8, 0.3], 0.59, 0.025, 0.014),
                        ([0.2, 0.4, 1.1], 0.6, 0.1, 0.2)]:
        wd = point_terms(np.array(a), b, se, m, log2_samples=6)[0]
        res = np.empty(7)
        _inner_sorted3(np.array(a), b, se, m, gx, gw, np.empty(0), np.empty(0), xs, xcs, tw, res)
        assert math.log(wd) == pytest.approx(res[0], abs=1e-12)


def _brute_terms(a, b, se, m, N=2 ** 20, seed=1):
    """Plain Monte Carlo of D^m and of the pair control c = D^m [(1 + p_i q_j/p_j)^m - 1] (any K)."""
    K = len(a)
    M = (K + 1) // 2
    h = np.asarray(a) + b * np.random.default_rng(seed).standard_normal((N, K))
    lp, lq = log_ndtr(h / se), log_ndtr(-h / se)
    order = np.argsort(-h, axis=1)
    lD = np.take_along_axis(lp, order[:, :M], axis=1).sum(1)
    pick = lambda x, col: np.take_along_axis(x, order[:, col:col + 1], 1)[:, 0]
    lr = pick(lp, M) + pick(lq, M - 1) - pick(lp, M - 1)
    Dm = np.exp(m * lD)
    c = Dm * np.expm1(m * np.log1p(np.exp(lr)))
    return Dm.mean(), Dm.std() / math.sqrt(N), c.mean(), c.std() / math.sqrt(N)


@pytest.mark.parametrize("a", [[-0.3, 0.1, 0.5], [-0.5, -0.2, 0.1, 0.4, 0.9]])
def test_order_pair_term_against_monte_carlo(a):
    """E[D^m] and the exact pair term E[c] (Eq. F.11, flag recursions over a 2-d (s, d) rule) against
    plain Monte Carlo of the same functions of the fields (2^20 samples, within 4.5 standard errors),
    K = 3 and 5; the RQMC remainder E[Z^m - D^m - c] is >= 0 and small."""
    from statmech.committee._rsb_order import point_terms
    b, se, m = 0.6, 0.045, 0.05
    wd, wc, r, rse = point_terms(np.array(a), b, se, m)
    bd, bdse, bc, bcse = _brute_terms(a, b, se, m)
    assert abs(wd - bd) < 4.5 * bdse and abs(wc - bc) < 4.5 * bcse
    assert 0.0 <= r < 0.1 * wc and rse < 0.1 * r + 1e-12


def test_order_rule_matches_the_sorted_rule_at_K3():
    """The order-statistics G_E and its central-difference gradient against the exact sorted-order
    rule at a near-capacity point (1 - q1 = 6.25e-4, outer n = 4): G_E to 1e-6 relative, dG/dq1 and
    dG/dm to 2e-5 (the RQMC remainder; the sorted rule's own inner error is ~1e-7)."""
    q0, q1, m = 0.6608, 1 - 6.25e-4, 0.01339
    ex = F._energetic(3, q0, q1, m, F.Rule(inner=("sorted", 8, 6, 1), outer=("gh", 4)))
    od = F._energetic(3, q0, q1, m, F.Rule(inner=("order", 16, 0), outer=("gh", 4)), both=True)
    assert od[0] == pytest.approx(ex[0], rel=1e-6)
    assert od[4] < 1e-5                                # the RQMC standard error of G_E
    assert od[2] == pytest.approx(ex[2], rel=2e-5) and od[3] == pytest.approx(ex[3], rel=2e-5)


def test_2rsb_reduces_to_1rsb_on_its_boundaries():
    """q1 = q0 (the middle level empty) gives alpha(q0, y2) of Eq. 1RSB.1 on the same outer rule
    (the tabulated Gauss--Legendre inner reduction against the tanh--sinh one of Eq. 1RSB.1)."""
    q0, y = 0.64, 21.4
    a1 = sign_1rsb._alpha_of(3, q0, y, 4, 5)
    a2 = sign_2rsb.tcm_2rsb_alpha(q0, q0 + 1e-12, 7.0, y, n_outer=4, n_middle=3)
    assert a2 == pytest.approx(a1, rel=1e-11)
    # y1 = y2: E_t1 Y2 = Y(var 1 - q0) exactly; the middle rule converges to it
    a3 = sign_2rsb.tcm_2rsb_alpha(q0, 0.8, y, y, n_outer=4, n_middle=8)
    assert a3 == pytest.approx(a1, rel=2e-4)
    a4 = sign_2rsb.tcm_2rsb_alpha(q0, 0.8, y, y, n_outer=4, n_middle=24)
    assert abs(a4 - a1) < 0.1 * abs(a3 - a1) + 1e-8


@pytest.mark.slow
def test_2rsb_middle_rules_agree():
    """At point C (q1 = 0.89) the order-statistics middle average (exact dominant and pair terms,
    RQMC triple term, Eqs. M.1-M.3) and the tensor Gauss--Hermite rule (n = 48, converged there to
    3e-7) agree within the RQMC error (measured 1.6e-5)."""
    C = (0.587, 0.893, 19.45, 33.74)
    a_gh = sign_2rsb.tcm_2rsb_alpha(*C, n_outer=4, n_middle=48)
    a_or = sign_2rsb.tcm_2rsb_alpha(*C, n_outer=4, method="order")
    assert a_or == pytest.approx(a_gh, abs=6e-5)


def test_2rsb_arguments():
    with pytest.raises(ValueError, match="K must be 3"):
        sign_2rsb.tcm_2rsb_alpha(0.5, 0.8, 10.0, 20.0, K=5)
    with pytest.raises(ValueError, match="q0, q1"):
        sign_2rsb.tcm_2rsb_alpha(0.8, 0.5, 10.0, 20.0)
    with pytest.raises(ValueError, match="y1, y2"):
        sign_2rsb.tcm_2rsb_alpha(0.5, 0.8, 30.0, 20.0)
    with pytest.raises(TypeError, match="q0 must be a real number"):
        sign_2rsb.tcm_2rsb_alpha("a", 0.8, 10.0, 20.0)


@pytest.mark.slow
def test_branch_point_near_capacity_follows_the_frozen_expansion():
    """At 1 - q1 = 6.25e-4 (outer n = 6) the 1RSB solution at finite alpha sits just above the
    linear law of Eq. F.8 computed from the frozen (q1 = 1) solution on the same outer rule:
    the remainder is the positive O(eps^{3/2}) term (~3.6e-3 here, docs/committee.md)."""
    eps = 6.25e-4
    ce = sign_1rsb_branch.capacity_expansion(3, n_outer=6)
    rule = F.Rule(inner=("sorted", 6, 4, 1), outer=("gh", 6))
    p = tcm_1rsb_point(3, 1 - eps, rule=rule)       # default guess: the linear law of Eq. F.8
    assert isinstance(p, TCMRSBPoint) and p.converged and p.ansatz == "1rsb" and p.residual < 1e-8
    assert p.q0 == pytest.approx(ce["q0"], abs=0.01)
    assert p.m / eps == pytest.approx(ce["y"], rel=0.15)
    rem = p.alpha - (ce["alpha_c"] + ce["slope"] * eps)
    assert 0.0 < rem < 500 * eps ** 1.5      # c2 of Eq. F.8 ~ 230 from the branch fit


@pytest.mark.slow
def test_2rsb_lowers_the_capacity_below_1rsb():
    """An interior 2RSB point with R below the frozen 1RSB capacity on the same outer rule (n = 6),
    by more than the middle-rule error (n_middle = 10 against 12)."""
    x = (0.589, 0.851, 16.96, 27.87)
    r10 = sign_2rsb.tcm_2rsb_alpha(*x, n_outer=6, n_middle=10)
    r12 = sign_2rsb.tcm_2rsb_alpha(*x, n_outer=6, n_middle=12)
    info, _, _, _ = sign_1rsb._capacity_1rsb_cached(3, 6, 5)
    a1 = sign_1rsb._alpha_of(3, 1 / (1 + math.exp(-info.x[0])), math.exp(info.x[1]), 6, 5)
    assert abs(r10 - r12) < 1e-4
    assert r12 < a1 - 2e-3


@pytest.mark.slow
def test_order_rule_branch_point_at_K3_equals_the_sorted_rule():
    """A K = 3 branch point (1 - q1 = 6.25e-4, outer n = 6) solved with the order-statistics rule equals
    the exact sorted rule's (alpha = 3.1228601, docs/committee.md) to 1e-5."""
    r = F.Rule(inner=("order", 17, 0), outer=("gh", 6))
    p = tcm_1rsb_point(3, 1 - 6.25e-4, rule=r, guess=(0.6608, 0.01339, 3.12286), progress=False)
    assert p.converged and p.residual < 1e-8 and p.error < 1e-5
    assert p.alpha == pytest.approx(3.1228601, abs=1e-5)


@pytest.mark.slow
def test_K5_branch_point_near_capacity_follows_the_frozen_expansion():
    """K = 5 at 1 - q1 = 3.125e-4 (default rule, outer n = 8) from the frozen expansion of Eq. F.8 on
    the same outer rule: converged, q0 and m/eps near the frozen (q0*, y*), and alpha above the
    linear law by a positive O(eps^{3/2}) remainder."""
    from statmech.committee import sign_1rsb_branch
    eps = 3.125e-4
    ce = sign_1rsb_branch.capacity_expansion(5, n_outer=8)
    p = tcm_1rsb_point(5, 1 - eps, progress=False)
    assert isinstance(p, TCMRSBPoint) and p.converged and p.residual < 1e-8 and p.error < 1e-5
    assert p.q0 == pytest.approx(ce["q0"], abs=0.01) and p.m / eps == pytest.approx(ce["y"], rel=0.15)
    rem = p.alpha - (ce["alpha_c"] + ce["slope"] * eps)
    assert 0.0 < rem < 1500 * eps ** 1.5
    # the first point of the documented branch (docs/committee.md, "K = 5, 1RSB at finite alpha"; RQMC
    # point sets fixed by their seeds, so the same solve reproduces it to the solver tolerance)
    assert p.alpha == pytest.approx(3.5998549, abs=2e-6)


def test_K5_branch_extrapolation_agrees_with_the_frozen_capacity():
    """The documented K = 5 branch (one run of tcm_1rsb_branch(5), default rule, outer n = 8) extrapolated
    by Eq. F.8 with the branch code's fits: within its error of the frozen capacity on the same outer
    rule (3.6210536), and the fitted free slope within 1 % of the frozen -alpha_c A/S = -80.22 for the
    four smallest eps."""
    from statmech.committee.sign_1rsb_branch import _branch_fits
    eps = np.array([3.125e-4, 6.25e-4, 1.25e-3, 2.5e-3, 5e-3, 1e-2])
    alpha = np.array([3.5998548530, 3.5815938437, 3.5495190812, 3.4955925693, 3.4095235658, 3.2807448791])
    fits = _branch_fits(eps, alpha, -80.21765992246834)
    vals = np.array([f["alpha_c"] for f in fits.values()])
    err = 0.5 * np.ptp(vals) + 9.2e-5
    assert abs(vals.mean() - 3.6210536) < err < 1e-3
    assert fits["free slope, 4 smallest"]["c1"] == pytest.approx(-80.22, rel=0.01)


@pytest.mark.slow
def test_2rsb_minimum_at_K3_is_stationary_and_interior():
    """The documented 2RSB minimum on the (n_outer, n_middle) = (6, 48) rules (default start of
    tcm_2rsb_search): R = 3.1335922, gradient below 1e-5 in the mapped coordinates, positive
    curvature along every coordinate, 0.0104 below the 1RSB capacity on the same outer rule."""
    p = sign_2rsb._tomap(*sign_2rsb._2RSB_START)
    R = lambda x: sign_2rsb.tcm_2rsb_alpha(*sign_2rsb._unmap(x), n_outer=6, n_middle=48)
    r0 = R(p)
    assert r0 == pytest.approx(3.1335922, abs=1e-6)
    h = 1e-3
    for i in range(4):
        e = np.zeros(4)
        e[i] = h
        fp, fm = R(p + e), R(p - e)
        assert abs(fp - fm) / (2 * h) < 1e-5
        assert (fp - 2 * r0 + fm) / h ** 2 > 0
    info, _, _, _ = sign_1rsb._capacity_1rsb_cached(3, 6, 5)
    a1 = sign_1rsb._alpha_of(3, 1 / (1 + math.exp(-info.x[0])), math.exp(info.x[1]), 6, 5)
    assert r0 - a1 == pytest.approx(-0.010415, abs=2e-5)


def test_K7_branch_extrapolation_agrees_with_the_frozen_capacity():
    """The documented K = 7 branch (one run of tcm_1rsb_branch(7, eps=4 smallest), outer n = 7): the fits of
    Eq. F.8 lie within their error of the frozen capacity on the same outer rule (3.9066913), and within
    the combined error of the RQMC capacity 3.9077 +- 0.0018."""
    from statmech.committee.sign_1rsb_branch import _branch_fits
    eps = np.array([3.125e-4, 6.25e-4, 1.25e-3, 2.5e-3])
    alpha = np.array([3.87431863825, 3.84755792709, 3.80201371531, 3.72832690945])
    fits = _branch_fits(eps, alpha, -128.98973425428423)
    vals = np.array([f["alpha_c"] for f in fits.values()])
    err = 0.5 * np.ptp(vals) + 1.15e-4
    assert abs(vals.mean() - 3.9066913) < err < 1e-3
    assert abs(vals.mean() - 3.9077) < err + 0.0018
