"""Gaussian core against mpmath (50 digits)."""
import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from statmech import gaussian as g

mp.mp.dps = 50
TINY = 2.3e-308  # smallest normal double: below it only absolute accuracy is meaningful


def H_mp(x):
    return mp.erfc(mp.mpf(x) / mp.sqrt(2)) / 2


def logH_mp(x):
    x = mp.mpf(x)
    return mp.log1p(-H_mp(-x)) if x < 0 else mp.log(H_mp(x))


XS = np.concatenate([-np.logspace(-4, 4, 300), [0.0], np.logspace(-4, 4, 300)])


@pytest.mark.parametrize("impl", ["numpy", "numba"])
def test_log_H_relative_accuracy_on_pm_1e4(impl):
    f = (lambda x: float(g.log_H(x))) if impl == "numpy" else g.log_H_nb
    worst = 0.0
    for x in XS:
        ref = float(logH_mp(x))
        v = f(float(x))
        assert math.isfinite(v), x
        err = abs(v - ref)
        assert err <= 1e-12 * abs(ref) + 1e-12 * TINY * 1e12 * (abs(ref) < TINY), (x, v, ref)
        if abs(ref) > TINY:
            worst = max(worst, err / abs(ref))
    assert worst < 1e-12


@pytest.mark.parametrize("impl", ["numpy", "numba"])
def test_H_and_inverse_mills(impl):
    Hf = (lambda x: float(g.H(x))) if impl == "numpy" else g.H_nb
    If = (lambda x: float(g.inv_mills(x))) if impl == "numpy" else g.inv_mills_nb
    for x in XS:
        href = H_mp(x)
        if href > TINY:
            assert abs(Hf(x) - float(href)) <= 1e-12 * float(href), x
        im = mp.exp(-mp.mpf(x) ** 2 / 2) / mp.sqrt(2 * mp.pi) / href
        v = If(x)
        assert math.isfinite(v)
        if im > TINY:
            assert abs(v - float(im)) <= 1e-12 * float(im), x


def test_log_H_extreme_values_are_finite():
    for x in (-1e4, -1e300, 1e4, 1e150):
        assert math.isfinite(g.log_H_nb(x)) or x > 1e150
    assert g.log_H_nb(1e4) == pytest.approx(-5e7 - math.log(1e4 * math.sqrt(2 * math.pi)), rel=1e-15)


@given(st.floats(min_value=1e-300, max_value=1 - 1e-16))
@settings(max_examples=200, deadline=None)
def test_ndtri_inverts_phi(p):
    z = g.ndtri_nb(p)
    # the round-off of z itself limits the relative accuracy of Phi(z) to ~ 2 eps z^2
    cond = 1e-14 + 4e-16 * z * z
    if p <= 0.5:
        assert abs(float(H_mp(-z)) - p) <= cond * p
    else:
        assert abs(float(H_mp(z)) - (1 - p)) <= cond * (1 - p) + 1e-16


def test_log_2cosh():
    for x in (-800.0, -3.0, 0.0, 1e-8, 2.0, 800.0):
        assert g.log_2cosh_nb(x) == pytest.approx(float(mp.log(2 * mp.cosh(x))), rel=1e-15)
        assert float(g.log_2cosh(x)) == pytest.approx(float(mp.log(2 * mp.cosh(x))), rel=1e-15)


def test_gauss_hermite_moments_and_smooth_integrand():
    z, w = g.gauss_hermite(40)
    assert w.sum() == pytest.approx(1.0, abs=1e-15)
    for k, m in [(2, 1), (4, 3), (6, 15), (8, 105)]:
        assert np.dot(w, z ** k) == pytest.approx(m, rel=1e-13)
    ref = mp.quad(lambda t: mp.exp(-t * t / 2) / mp.sqrt(2 * mp.pi) * mp.log(2 * mp.cosh(2 * t)), [-mp.inf, 0, mp.inf])
    # log 2cosh(2z) has a kink-like curvature at 0: Gauss-Hermite converges, piecewise is exact
    assert g.expect(lambda t: g.log_2cosh(2 * t), tol=1e-10) == pytest.approx(float(ref), rel=1e-8)
    assert g.expect_piecewise(lambda t: g.log_2cosh(2 * t), [0.0]) == pytest.approx(float(ref), rel=1e-14)


def test_expect_smooth_integrand_to_1e14():
    ref = mp.quad(lambda t: mp.exp(-t * t / 2) / mp.sqrt(2 * mp.pi) * H_mp(0.7 * t + 0.3) ** 2, [-mp.inf, mp.inf])
    assert g.expect(lambda t: g.H(0.7 * t + 0.3) ** 2, n=64) == pytest.approx(float(ref), rel=1e-14)


def test_expect2_correlated():
    rho = 0.37
    # E[z1 z2] = rho, E[z1^2 z2^2] = 1 + 2 rho^2, P(z1>0, z2>0) = 1/4 + asin(rho)/(2 pi)
    assert g.expect2(lambda a, b: a * b, rho) == pytest.approx(rho, rel=1e-13)
    assert g.expect2(lambda a, b: a * a * b * b, rho) == pytest.approx(1 + 2 * rho * rho, rel=1e-13)
    with pytest.raises(ValueError, match="rho"):
        g.expect2(lambda a, b: a, 1.5)


@pytest.mark.parametrize("q", [0.3, 0.9, 1 - 1e-6, 1 - 1e-12])
@pytest.mark.parametrize("kappa", [-1.0, 0.0, 0.5, 2.0])
def test_piecewise_sharp_perceptron_integrand(q, kappa):
    """E_z log H((kappa - sqrt(q) z)/sqrt(1-q)) stays exact as q -> 1."""
    c = kappa / math.sqrt(q)
    eps = math.sqrt(1 - q)
    f = lambda z: g.log_H((kappa - math.sqrt(q) * z) / eps)
    ref = mp.quad(lambda z: mp.exp(-z * z / 2) / mp.sqrt(2 * mp.pi) * logH_mp((kappa - mp.sqrt(q) * z) / eps),
                  [-mp.inf, c - 50 * eps, c - eps, c, c + eps, c + 50 * eps, mp.inf])
    assert g.expect_piecewise(f, [c], level=5) == pytest.approx(float(ref), rel=1e-13)


def test_piecewise_weights_sum_to_one_and_validate():
    for br in ([0.0], [-40.0], [40.0], [-3.0, 0.1, 2.0]):
        z, w = g.piecewise_nodes(br)
        assert w.sum() == pytest.approx(1.0, abs=1e-14)
        assert np.all(np.isfinite(z))
    with pytest.raises(ValueError, match="breaks"):
        g.piecewise_nodes([1.0, 0.0])
    with pytest.raises(ValueError, match="breaks"):
        g.piecewise_nodes([np.nan])
