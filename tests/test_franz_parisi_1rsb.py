"""The stochastic perceptron on a 1RSB reference and the Franz--Parisi entropy around sign(m) on it:
the RS limit (q1 = q0), the exact reduction at mu = 1, brute-force nested quadrature, the
unconstrained point (d = d_typ), and the reference's stationary point by two independent methods
(tilted tables and the RSB core's lattice).  Derivations: docs/franz_parisi.md."""
import math

import numpy as np
import pytest
from scipy.special import log_ndtr

from statmech import franz_parisi as fp
from statmech.franz_parisi import stochastic as fst, stochastic_1rsb as s1, stochastic_fp as fps
from statmech.franz_parisi import stochastic_fp_1rsb as f1
from statmech.gaussian import gauss_hermite
from statmech.rsb import box_site

ALPHA, BETA = 0.55, 20.0
# the mu = 1 (dynamical) 1RSB reference at q* = 0.9 (stochastic_reference(0.55, 0.9, ansatz='1rsb'))
REF09 = dict(q0=0.701390564968, q1=0.890429576259, qh0=13.7254360049, qh1=20.4596943479, A=-11.7081977886)

# a smooth reference point (not a stationary one) on which the FP functional is defined all the same
SMOOTH = dict(q_star=0.7, beta=3.0, q0=0.3, q1=0.5, qh0=2.0, qh1=5.0, A=1.0, mu=0.6)
X9 = [np.array([0.45, 0.2, 0.25, 0.3, 1.5, 0.5, 0.7, 0.9, 0.3]), np.array([0.6, 0.15, 0.3, 0.45, 2.5, 0.4, 0.9, 1.4, 0.8])]


def _smooth_tables(quad=f1.FP1Quad(s1._Quad1(3, 3, 3), 3, 3)):
    s = SMOOTH
    return f1._FP1Tables(s["q_star"], s["beta"], s["q0"], s["q1"], s["qh0"], s["qh1"], s["A"], s["mu"], quad)


def _brute_force(x, p, n=40):
    """S_FP at x by an independent nested quadrature: Gauss-Hermite in z0, z1, y, e, x with the
    reference tilts computed on the same nodes, Gauss-Legendre on each half of m."""
    s = SMOOTH
    Q, t0, t1, R, Qh, th0, th1, Rh, ph = x
    mu, A, qh0, qh1, q0, q1, qs, beta = s["mu"], s["A"], s["qh0"], s["qh1"], s["q0"], s["q1"], s["q_star"], s["beta"]
    z, w = gauss_hermite(n)
    y, wy = gauss_hermite(n)
    gl, gw = np.polynomial.legendre.leggauss(n)
    m = np.concatenate((-(gl + 1) / 2, (gl + 1) / 2))
    wm = np.concatenate((gw / 2, gw / 2))
    # entropic: (z0, z1) with the tilt zeta^mu, m with exp(-A m^2/2 + h m)
    h = math.sqrt(qh0) * z[:, None] + math.sqrt(qh1 - qh0) * z[None, :]
    lz = box_site(h, A)[0]
    P1 = w[None, :] * np.exp(mu * (lz - lz.max(axis=1, keepdims=True)))
    P1 /= P1.sum(axis=1, keepdims=True)
    d0, d1 = th0 / math.sqrt(qh0), (th1 - th0) / math.sqrt(qh1 - qh0)
    sig = math.sqrt(Qh - d0 ** 2 - d1 ** 2)
    GS = 0.0
    for i in range(n):
        for j in range(n):
            lw = -A * m ** 2 / 2 + h[i, j] * m
            rho = wm * np.exp(lw - lw.max())
            rho /= rho.sum()
            u = d0 * z[i] + d1 * z[j] + (Rh - th1) * m + ph * np.sign(m)
            f = np.logaddexp(u[:, None] + sig * y[None, :], -(u[:, None] + sig * y[None, :])) @ wy
            GS += w[i] * P1[i, j] * (rho @ f)
    # energetic: (z0, z1) with the tilt Z_x^mu, x with H(u)^beta
    D = math.sqrt(q0) * z[:, None] + math.sqrt(q1 - q0) * z[None, :]
    ux = -(D[:, :, None] + math.sqrt(qs - q1) * z[None, None, :]) / math.sqrt(1 - qs)
    lx = beta * log_ndtr(-ux)
    lZ = np.log((w * np.exp(lx)).sum(axis=2))
    P1 = w[None, :] * np.exp(mu * (lZ - lZ.max(axis=1, keepdims=True)))
    P1 /= P1.sum(axis=1, keepdims=True)
    c0, c1, c2 = t0 / math.sqrt(q0), (t1 - t0) / math.sqrt(q1 - q0), (R - t1) / math.sqrt(qs - q1)
    sv = math.sqrt(Q - c0 ** 2 - c1 ** 2 - c2 ** 2)
    GE = 0.0
    for i in range(n):
        for j in range(n):
            rho = w * np.exp(lx[i, j] - lx[i, j].max())
            rho /= rho.sum()
            v = c0 * z[i] + c1 * z[j] + c2 * z
            f = log_ndtr((v[:, None] + sv * y[None, :]) / math.sqrt(1 - Q)) @ wy
            GE += w[i] * P1[i, j] * (rho @ f)
    return 0.5 * Qh * (Q - 1) - Rh * R + (1 - mu) * th1 * t1 + mu * th0 * t0 - ph * p + GS + ALPHA * GE


def test_fp_on_1rsb_reference_against_brute_force_nested_quadrature():
    """The nine-parameter functional (tables, tabulated inner moments, sympy coefficient maps) at
    two points against an independent tensor Gauss-Hermite/Legendre quadrature of the nested
    integrals; the gradient against central differences of the library's own value."""
    tabs = _smooth_tables(f1.FP1Quad(s1._Quad1(3, 3, 3), 4, 4))
    small = _smooth_tables(f1.FP1Quad(s1._Quad1(2, 2, 2), 2, 2))   # (derivatives: any rule)
    for x, p in zip(X9, (0.6, 0.2)):
        # (brute force: 50 and 60 nodes per variable differ by < 1e-10 here)
        assert f1.fp1_functional(x, p, tabs, ALPHA)[0] == pytest.approx(_brute_force(x, p, 50), abs=5e-10)
        tabs_ = tabs
        tabs = small
        S, g, H = f1.fp1_functional(x, p, tabs, ALPHA)
        for k in (2, 6):
            e = np.zeros(9)
            e[k] = 1e-5
            fd = (f1.fp1_functional(x + e, p, tabs, ALPHA)[0] - f1.fp1_functional(x - e, p, tabs, ALPHA)[0]) / 2e-5
            assert g[k] == pytest.approx(fd, abs=1e-7)
            gd = (f1.fp1_functional(x + e, p, tabs, ALPHA)[1] - f1.fp1_functional(x - e, p, tabs, ALPHA)[1]) / 2e-5
            np.testing.assert_allclose(H[:, k], gd, atol=2e-6)
        tabs = tabs_


@pytest.mark.slow
def test_unconstrained_point_gives_the_equilibrium_entropy():
    """d -> d_typ: at p_hat = 0 the constrained measure is uniform over the Ising solutions: the
    solution has Q, Q_hat of the Gardner Ising solution, t0 = t1 = R and t_hat0 = t_hat1 = R_hat
    (the reference replicas are exchangeable -- which needs a *stationary* reference: here the 1RSB
    point at q* = 0.9 with mu = 0.9 held fixed, a genuinely broken one, q1 - q0 = 0.2), and S_FP
    equals the Ising equilibrium entropy (which the package's 1RSB binary perceptron gives too:
    frozen states of entropy zero, Sigma = s_RS)."""
    from statmech import perceptron
    eq = fp.equilibrium_binary(ALPHA)
    s_1rsb = perceptron.binary_storage(ALPHA, ansatz="1rsb").thermo["entropy"]
    mu = 0.9
    v, res, _ = s1._newton_fd(lambda v: s1._Tables(0.9, BETA, *v, mu).equations(ALPHA),
                              [0.686252, 0.884646, 14.2539, 20.5449, -12.7861],
                              lambda v: 0 < v[0] < v[1] < 0.9 and 0 < v[2] < v[3], 1e-10)
    assert v[1] - v[0] > 0.15
    tabs = f1._FP1Tables(0.9, BETA, *v, mu, f1.FP1Quad(m=3, x=3))
    info, p_typ, S = f1.fp1_unconstrained(tabs, ALPHA, eq.order_params["q"], eq.order_params["q_hat"])
    Q, t0, t1, R, Qh, th0, th1, Rh, ph = info.x
    assert S == pytest.approx(eq.entropy, abs=1e-9) and S == pytest.approx(s_1rsb, abs=1e-9)
    assert Q == pytest.approx(eq.order_params["q"], abs=1e-8) and Qh == pytest.approx(eq.order_params["q_hat"], abs=1e-7)
    # (exchangeability holds to the accuracy of the reference's own equations, 1e-9, amplified by the
    # shallow t1 direction, whose curvature is ~ 1 - mu: measured 2e-8)
    assert t0 == pytest.approx(R, abs=1e-7) and t1 == pytest.approx(R, abs=1e-7) and R > 0.05
    assert th0 == pytest.approx(Rh, abs=1e-6) and th1 == pytest.approx(Rh, abs=1e-6) and abs(ph) < 1e-12
    assert 0 < p_typ < 1
    # and S_FP < S_eq on both sides of d_typ (a maximum)
    for dp in (-0.02, 0.02):
        i = f1._newton(tabs, ALPHA, info.x, p_typ + dp)
        assert f1.fp1_functional(i.x, p_typ + dp, tabs, ALPHA)[0] < S - 1e-6


@pytest.mark.slow
def test_rs_limit_of_the_fp_functional_is_the_rs_code():
    """q1 = q0 (no states): the nested code with a one-node z1 rule and the RS coefficient maps
    against the RS implementation of stochastic_fp (independent tables and inner sums), at two
    points, to 1e-10 once both rules are converged (the defaults differ by ~5e-8: quadrature)."""
    r = fst._stochastic_reference(ALPHA, 0.7, BETA)
    tabs = f1._FP1Tables(0.7, BETA, r.q_m, r.q_m, r.q_hat, r.q_hat, r.A, 1.0, f1.FP1Quad(m=4, x=4))
    ref = fps._StfpRef(ALPHA, 0.7, BETA, fps._StfpQuad().finer())
    for x, p in ((np.array([0.8, 0.5, 0.55, 0.5, 3.0, 3.5, 0.9]), 0.9), (np.array([0.5, 0.35, 0.4, 0.7, 4.0, 4.2, 0.1]), 0.5)):
        S1, g1, H1 = f1.fp1_functional(x, p, tabs, ALPHA)
        g0, S0, GS, GE = fps._stfp_grad(x, p, ref)
        assert S1 == pytest.approx(S0, abs=1e-10)
        np.testing.assert_allclose(g1, g0, atol=1e-10)


@pytest.mark.slow
def test_mu_one_reduces_exactly_to_the_rs_functional():
    """At mu = 1 the z1 integrals can be done exactly: the nine-parameter functional on the 1RSB
    reference equals the RS one with (q0, q_hat0, A - q_hat1 + q_hat0) and t = t0, whatever t1, t_hat1."""
    r = REF09
    tg = f1._FP1Tables(0.9, BETA, r["q0"], r["q1"], r["qh0"], r["qh1"], r["A"], 1.0, f1.FP1Quad(m=4, x=4))
    tr = f1._FP1Tables(0.9, BETA, r["q0"], r["q0"], r["qh0"], r["qh0"], r["A"] - r["qh1"] + r["qh0"], 1.0,
                       f1.FP1Quad(m=4, x=4))
    for x7, t1, th1, p in ((np.array([0.8, 0.5, 0.55, 5.0, 3.0, 3.5, 0.9]), 0.52, 3.2, 0.9),
                           (np.array([0.5, 0.35, 0.4, 7.0, 4.0, 4.2, 0.1]), 0.36, 4.5, 0.5)):
        Q, t0, R, Qh, th0, Rh, ph = x7
        S9, g9, _ = f1.fp1_functional(np.array([Q, t0, t1, R, Qh, th0, th1, Rh, ph]), p, tg, ALPHA)
        S7, g7, _ = f1.fp1_functional(x7, p, tr, ALPHA)
        assert S9 == pytest.approx(S7, abs=1e-10)
        np.testing.assert_allclose(g9[[0, 1, 3, 4, 5, 7, 8]], g7, atol=1e-9)
        assert abs(g9[2]) < 1e-9 and abs(g9[6]) < 1e-9


@pytest.mark.slow
def test_reference_by_tables_and_by_the_core():
    """The 1RSB reference at q* = 0.9: the tilted tables and the core's lattice give the same free
    entropy (1e-11) and the same d phi/d mu at mu = 1 (the complexity); the stationary point of the
    table equations is a stationary point of the core functional; at mu = 1 it has the RS free
    entropy; q1 = q0 is the RS point for any mu (core)."""
    r = REF09
    T = s1._Tables(0.9, BETA, r["q0"], r["q1"], r["qh0"], r["qh1"], r["A"], 1.0)
    assert np.max(np.abs(T.equations(ALPHA))) < 1e-9
    phi, g = s1.ref1_functional([r["q0"], r["q1"], r["qh0"], r["qh1"], r["A"], 1.0], 0.9, ALPHA, BETA)
    assert T.free_entropy(ALPHA) == pytest.approx(phi, abs=1e-11)
    assert np.max(np.abs(g[:5])) < 1e-8
    dphi = 0.5 * (r["qh0"] * r["q0"] - r["qh1"] * r["q1"]) \
        + T.wS0 @ (np.sum(T.PS1 * T.logzeta, axis=1) - T.log_site_level) \
        + ALPHA * (T.wE0 @ (np.sum(T.PE1 * T.logZx, axis=1) - T.log_pattern_level))
    assert g[5] == pytest.approx(dphi, abs=1e-10) and -g[5] == pytest.approx(3.42146e-4, rel=1e-4)
    rs = fst._stochastic_reference(ALPHA, 0.9, BETA)
    assert phi == pytest.approx(rs.free_entropy, abs=1e-10)
    for mu in (0.5, 1.0):
        phi_rs, g_rs = s1.ref1_functional([rs.q_m, rs.q_m, rs.q_hat, rs.q_hat, rs.A, mu], 0.9, ALPHA, BETA)
        assert phi_rs == pytest.approx(rs.free_entropy, abs=1e-10)
        assert np.max(np.abs(g_rs[:5])) < 1e-8


@pytest.mark.slow
def test_public_1rsb_reference_and_fp_at_q_star_09():
    ref = fp.stochastic_reference(ALPHA, 0.9, BETA, ansatz="1rsb")
    assert ref.extra["phase"] == "dynamical" and ref.ansatz == "1rsb"
    assert ref.q1 == pytest.approx(REF09["q1"], abs=1e-8) and ref.mu == 1.0
    assert ref.complexity == pytest.approx(3.42146e-4, rel=1e-4)
    rs = fp.stochastic_reference(ALPHA, 0.9, BETA)
    assert ref.free_entropy == pytest.approx(rs.free_entropy, abs=1e-10) and rs.rs_stable and rs.replicon > 0
    d = np.array([0.02, 0.2])
    a = fp.stochastic_perceptron(ALPHA, d, 0.9, ansatz="1rsb")
    b = fp.stochastic_perceptron(ALPHA, d, 0.9)
    # mu = 1 (dynamical phase): the FP entropy is the RS one, up to the solvers' tolerance
    np.testing.assert_allclose(a.entropy, b.entropy, rtol=0, atol=1e-10)
    assert a.ansatz == "1rsb" and a.extra["reference_phase"] == "dynamical"


def test_stored_fig27_data_set():
    """The data set behind franz_parisi_fig27.png (statmech figures --recompute fp_stochastic): q* = 0.7
    and 0.8 on the RS reference, 0.9 on the dynamical 1RSB reference; every curve peaks at the Ising
    equilibrium entropy at its d_typ, lies below the alpha = 0 bound H2(d), and at small d is denser
    the larger q* (the thesis's ordering)."""
    from statmech.figures._data import load
    data = load("fp_stochastic")
    r7, r8, r9, ref9 = data.results[:4]
    assert (r7.ansatz, r8.ansatz, r9.ansatz, ref9.ansatz) == ("rs", "rs", "1rsb", "1rsb")
    assert r9.extra["reference_phase"] == "dynamical" and r9.extra["reference_mu"] == 1.0
    assert ref9.q1 == pytest.approx(REF09["q1"], abs=1e-8) and ref9.complexity == pytest.approx(3.42146e-4, rel=1e-4)
    d = np.array(data.points[0]["kwargs"]["d"])
    S_eq = fp.equilibrium_binary(ALPHA).entropy
    for r in (r7, r8, r9):
        assert np.all(np.asarray(r.converged)) and np.max(r.residual) < 1e-8
        assert np.all(r.entropy > 0) and np.all(r.entropy < fp.binary_entropy_free(d))
        assert np.all(r.entropy <= S_eq + 1e-9) and np.ravel(r.entropy_equilibrium)[0] == pytest.approx(S_eq, abs=1e-12)
    assert r7.entropy[0] < r8.entropy[0] < r9.entropy[0]
    # the table of docs/franz_parisi.md
    np.testing.assert_allclose([r7.entropy[-1], r8.entropy[-1], r9.entropy[-1]], [0.085735, 0.099583, 0.113062],
                               atol=1e-6)
    # Eq. 2.54 along q* (the last call): the energy of sign(m) grows with q* up to 0.9 -- it does not
    # approach 0 as q* -> 1 (the thesis's statement for Fig. 2.6; docs/franz_parisi.md)
    E = data.results[4].energy
    q = np.array(data.points[4]["kwargs"]["q_star"])
    np.testing.assert_allclose(E[np.isin(q, (0.7, 0.8, 0.9, 0.95))], [0.0031710, 0.0043923, 0.0057295, 0.0048351],
                               atol=2e-7)
    assert np.all(np.diff(E[(q >= 0.5) & (q <= 0.9)]) > 0) and E.min() > 2e-3


@pytest.mark.slow
def test_no_1rsb_reference_at_q_star_08():
    """Below q*_d ~ 0.856 the 1RSB equations of the reference have no solution with q1 > q0 (the
    solver collapses to the RS point and says so), and the RS reference is AT-stable: the q* = 0.7
    and 0.8 curves of Fig. 2.7 need no 1RSB reference."""
    r = fp.stochastic_reference(ALPHA, 0.8, BETA, ansatz="1rsb")
    rs = fp.stochastic_reference(ALPHA, [0.7, 0.8], BETA)
    assert r.extra["phase"] == "rs" and r.q1 == pytest.approx(r.q0, abs=1e-6)
    assert r.free_entropy == pytest.approx(rs.free_entropy[1], abs=1e-9)
    np.testing.assert_allclose(rs.replicon, [0.4282, 0.1684], atol=1e-4)
    assert np.all(rs.rs_stable)


@pytest.mark.slow
def test_1rsb_reference_along_q_star():
    """The table of docs/franz_parisi.md: dynamical at 0.86, condensed (mu < 1, Sigma = 0) at 0.88,
    no states again at 0.95."""
    r86, r88, r95 = (fp.stochastic_reference(ALPHA, q, BETA, ansatz="1rsb") for q in (0.86, 0.88, 0.95))
    assert r86.extra["phase"] == "dynamical" and r86.complexity == pytest.approx(1.28279e-3, rel=1e-4)
    assert r86.q1 == pytest.approx(0.826407064, abs=1e-7)
    assert r88.extra["phase"] == "static" and r88.mu == pytest.approx(0.989398, abs=1e-5)
    assert abs(r88.complexity) < 1e-9 and r88.free_entropy == pytest.approx(-2.23741645, abs=1e-7)
    assert r95.extra["phase"] == "rs" and r95.q1 == pytest.approx(r95.q0, abs=1e-6)
