"""Large-K limit of the sign 1RSB capacity (Eq. 1RSB.L, docs/committee.md "1RSB at large K")."""
import math

import numpy as np
import pytest

from statmech import committee as cm
from statmech.committee import large_k
from statmech.gaussian import expect_piecewise


def test_coefficient_is_half_monasson_zecchina():
    assert cm.advanced.one_rsb_large_K_coefficient() == pytest.approx(8 / math.pi, rel=1e-15)
    assert cm.advanced.monasson_zecchina(math.e) == pytest.approx(2 * cm.advanced.one_rsb_large_K_coefficient(), rel=1e-15)


def test_inner_average_against_direct_quadrature():
    # ln E_g exp(-yh (m + s g)_+^3) against a brute-force expectation (no log-space tricks needed
    # at moderate arguments), including m < 0 (maximum on the boundary u = 0) and m >> s
    for m, s, yh in [(-0.7, 0.5, 3.0), (0.4, 0.3, 50.0), (2.5, 0.6, 1e3), (0.05, 0.05, 1e6)]:
        direct = expect_piecewise(lambda g: np.exp(-yh * np.maximum(m + s * g, 0.0) ** 3),
                                  [-m / s, -m / s + 0.5 * yh ** (-1 / 3) / s], level=7)
        got = float(large_k._log_inner_continuum(np.array([m]), s, yh, 16)[0])
        assert got == pytest.approx(math.log(direct), rel=1e-10, abs=1e-12)
    # deep tail: m/s = 400 -> finite, and equal to the Laplace estimate within its error
    m, s, yh = 40.0, 0.1, 10.0
    got = float(large_k._log_inner_continuum(np.array([m]), s, yh, 16)[0])
    assert np.isfinite(got) and got < -1e4


def test_large_K_limit_approaches_8_over_pi_from_below():
    r = cm.advanced.tcm_1rsb_large_K(ln_K=1e6)
    assert r.converged and np.all(r.hessian_eigenvalues > 0)
    assert r.extra["quadrature_error"] < 1e-8 * r.alpha_c
    assert r.ratio == pytest.approx(8 / math.pi, rel=0.01)
    assert r.ratio < 8 / math.pi
    # 1 - q0 -> 2 / ln K (the asymptotic optimum v = 1/L, L = ln K / 2)
    assert (1 - r.q0) * 1e6 / 2 == pytest.approx(1.0, abs=0.03)


@pytest.mark.slow
def test_large_K_ratio_increases_towards_8_over_pi():
    ratios = [cm.advanced.tcm_1rsb_large_K(ln_K=L).ratio for L in (1e2, 1e4, 1e6)]
    assert ratios[0] < ratios[1] < ratios[2] < 8 / math.pi


def test_large_K_rejects_bad_input():
    with pytest.raises(ValueError, match="K"):
        cm.advanced.tcm_1rsb_large_K(K=1)
    with pytest.raises(ValueError):
        cm.advanced.tcm_1rsb_large_K()
    with pytest.raises(ValueError, match="ln_K"):
        cm.advanced.tcm_1rsb_large_K(ln_K=float("nan"))


def test_large_K_started_from_a_neighbour_finds_the_same_minimum():
    # a curve in ln K started point to point (as the committee figure does) reaches the minimum
    # of the Nelder-Mead search from the asymptotic start, in a few Newton steps
    a = cm.advanced.tcm_1rsb_large_K(ln_K=30.0)
    b = cm.advanced.tcm_1rsb_large_K(ln_K=50.0)
    c = cm.advanced.tcm_1rsb_large_K(ln_K=50.0, start=(a.q0, a.y_hat))
    assert c.alpha_c == pytest.approx(b.alpha_c, rel=1e-13)
    assert c.q0 == pytest.approx(b.q0, rel=1e-6) and c.y_hat == pytest.approx(b.y_hat, rel=1e-5)
    assert c.iterations < b.iterations
    # a start far outside the basin (a saddle or no convergence) falls back to the search
    d = cm.advanced.tcm_1rsb_large_K(ln_K=50.0, start=(1e-6, 1e-6))
    assert d.alpha_c == pytest.approx(b.alpha_c, rel=1e-13)
    for bad in [(0.0, 1.0), (0.5, -1.0), (1.0, 2.0), (float("nan"), 1.0)]:
        with pytest.raises(ValueError, match="start"):
            cm.advanced.tcm_1rsb_large_K(ln_K=50.0, start=bad)
