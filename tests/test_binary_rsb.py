"""Binary (Ising) perceptron in 1RSB on the RSB core (docs/rsb.md, "Binary perceptron")."""
import math

import mpmath as mp
import numpy as np
import pytest

from statmech.perceptron.advanced import binary_capacity_1rsb, binary_rsb_free_entropy, binary_storage_1rsb
from statmech.perceptron import binary_capacity, binary_storage
from statmech.perceptron.binary_rsb import _lattices

KM = 0.8330785997396   # Krauth & Mézard 1989 (kappa = 0), docs/perceptron.md


def _gl_rule(n=100, L=12.0):
    """Gauss-Legendre nodes on [-L, L] with the Gaussian density folded in (mpmath, 25 digits).

    The weight beyond |z| = 12 is 4e-33; the integrands below are entire, so the rule
    converges exponentially (100 and 160 nodes both agree with the core to 2e-15)."""
    mp.mp.dps = 25
    xs, ws = zip(*[(x * L, w * L) for x, w in _legendre(n)])
    g = [mp.exp(-x * x / 2) / mp.sqrt(2 * mp.pi) for x in xs]
    return xs, [w * gi for w, gi in zip(ws, g)]


def _legendre(n):
    # nodes and weights of the n-point Gauss-Legendre rule on [-1, 1] (Newton on P_n)
    out = []
    for i in range(1, n + 1):
        x = mp.cos(mp.pi * (i - mp.mpf(1) / 4) / (n + mp.mpf(1) / 2))
        for _ in range(100):
            p0, p1 = mp.mpf(1), x
            for k in range(2, n + 1):
                p0, p1 = p1, ((2 * k - 1) * x * p1 - (k - 1) * p0) / k
            dp = n * (x * p1 - p0) / (x * x - 1)
            dx = p1 / dp
            x -= dx
            if abs(dx) < mp.mpf(10) ** -24:
                break
        out.append((x, 2 / ((1 - x * x) * dp * dp)))
    return out


def _mp_general(q0, q1, qh0, qh1, m, alpha, kappa):
    """(B1-1) by brute-force nested quadrature in mpmath (independent of the core's lattices)."""
    xs, ws = _gl_rule()
    Hm = lambda x: mp.erfc(x / mp.sqrt(2)) / 2  # noqa: E731

    def nested(inner):
        return sum(w0 * mp.log(sum(w1 * inner(z0, z1) for z1, w1 in zip(xs, ws))) for z0, w0 in zip(xs, ws)) / m
    a, b = mp.sqrt(qh0), mp.sqrt(qh1 - qh0)
    I = nested(lambda z0, z1: (2 * mp.cosh(a * z0 + b * z1)) ** m)
    c, d, e = mp.sqrt(q0), mp.sqrt(q1 - q0), mp.sqrt(1 - q1)
    E = nested(lambda z0, z1: Hm((kappa - c * z0 - d * z1) / e) ** m)
    return float(m * qh0 * q0 / 2 + (1 - m) * qh1 * q1 / 2 - qh1 / 2 + I + alpha * E)


def _mp_frozen(q0, qh0, m, alpha, kappa):
    """(B1-fr) by mpmath quadrature."""
    mp.mp.dps = 20
    g = lambda z: mp.exp(-z * z / 2) / mp.sqrt(2 * mp.pi)  # noqa: E731
    I = mp.quad(lambda z: g(z) * mp.log(2 * mp.cosh(m * mp.sqrt(qh0) * z)), [-mp.inf, 0, mp.inf]) / m
    E = mp.quad(lambda z: g(z) * mp.log(mp.erfc((kappa - mp.sqrt(q0) * z) / mp.sqrt(2 * (1 - q0))) / 2),
                [-mp.inf, kappa / math.sqrt(q0), mp.inf]) / m
    return float(-m * qh0 * (1 - q0) / 2 + I + alpha * E)


@pytest.mark.parametrize("point", [(0.3, 0.7, 0.8, 2.5, 0.6, 0.5, 0.3),
                                   pytest.param((0.1, 0.5, 0.2, 1.0, 0.3, 0.8, -0.4), marks=pytest.mark.slow)])
def test_general_functional_matches_mpmath(point):
    q0, q1, qh0, qh1, m, alpha, kappa = point
    ours = binary_rsb_free_entropy(q0, q1, qh0, qh1, m, alpha, kappa)
    assert ours == pytest.approx(_mp_general(*point), abs=1e-10)


@pytest.mark.parametrize("point", [(0.56, 2.6, 1.0, 0.83, 0.0), (0.3, 5.0, 0.4, 0.5, 0.7)])
def test_frozen_functional_matches_mpmath(point):
    q0, qh0, m, alpha, kappa = point
    ours = binary_rsb_free_entropy(q0, 1.0, qh0, 0.0, m, alpha, kappa)
    assert ours == pytest.approx(_mp_frozen(*point), abs=1e-11)


def test_gradient_matches_central_differences():
    x = np.array([0.3, 0.7, 0.8, 2.5, 0.6])
    L = _lattices(*x, 0.2)
    f = lambda v: binary_rsb_free_entropy(*v, 0.5, 0.2, lattices=L)  # noqa: E731
    _, gq, gqh, gm = binary_rsb_free_entropy(*x, 0.5, 0.2, lattices=L, grad=True)
    g = np.concatenate([gq, gqh, [gm]])
    h = 1e-6
    fd = [(f(x + h * e) - f(x - h * e)) / (2 * h) for e in np.eye(5)]
    np.testing.assert_allclose(g, fd, atol=1e-8)
    # frozen (q1 = 1): derivatives in (q0, q_hat0, m)
    y = np.array([0.4, 1.0, 3.0, 0.0, 0.8])
    L = _lattices(*y, -0.2)
    f = lambda v: binary_rsb_free_entropy(v[0], 1.0, v[1], 0.0, v[2], 0.7, -0.2, lattices=L)  # noqa: E731
    _, gq, gqh, gm = binary_rsb_free_entropy(*y, 0.7, -0.2, lattices=L, grad=True)
    x3 = y[[0, 2, 4]]
    fd = [(f(x3 + h * e) - f(x3 - h * e)) / (2 * h) for e in np.eye(3)]
    np.testing.assert_allclose([gq[0], gqh[0], gm], fd, atol=1e-8)


@pytest.mark.parametrize("m", [1.0, 0.5, 2.0])
def test_krauth_mezard_from_frozen_general_equations(m):
    r = binary_capacity_1rsb(0.0, m)
    assert r.converged and r.residual < 1e-11 and r.ansatz == "1rsb"
    assert abs(r.thermo["alpha_c"] - KM) < 1e-9
    assert abs(r.thermo["complexity"]) < 1e-10
    # the invariants of the frozen solution: q0 and m^2 q_hat0
    assert r.q0 == pytest.approx(0.56394908008, abs=1e-9)
    assert r.q_hat0 * m * m == pytest.approx(2.57635131908, rel=1e-9)


def test_krauth_mezard_nonzero_kappa_matches_rs_zero_entropy():
    for kappa in (0.5, -0.3, 2.0, -2.0):
        one = binary_capacity(kappa, ansatz="1rsb")
        assert abs(one - binary_capacity(kappa)) < 1e-9 * max(1.0, one)
    assert binary_capacity(0.5, ansatz="1rsb") < binary_capacity(0.0, ansatz="1rsb")


@pytest.mark.slow
def test_general_approaches_frozen_as_q1_to_1():
    # along q1 = 1 - 1/Q^2, q_hat1 = Q the general functional and its q0-derivative tend
    # to the frozen ones at fixed (q0, q_hat0, m) (the divergent terms cancel, docs/rsb.md
    # (I2)); measured: value 0.0276, 0.0142 and d/dq0 0.111, 0.034 at Q = 10, 30.  The
    # m-derivative converges much more slowly (-0.109, -0.091); see docs/rsb.md.
    q0, qh0, m, alpha = 0.5639490800845, 2.5763513190757, 0.7, KM
    fr, gqf, _, _ = binary_rsb_free_entropy(q0, 1.0, qh0, 0.0, m, alpha, grad=True)
    dv, dg = [], []
    for Q in (10.0, 30.0):
        v, gq, _, _ = binary_rsb_free_entropy(q0, 1.0 - Q ** -2, qh0, Q, m, alpha, grad=True)
        dv.append(abs(v - fr))
        dg.append(abs(gq[0] - gqf[0]))
    assert dv[1] < 0.6 * dv[0] and dg[1] < 0.4 * dg[0]


def test_one_rsb_storage_frozen_state_and_rs_collapse():
    for alpha in (0.3, 0.6):
        rs = binary_storage(alpha)
        r = binary_storage(alpha, ansatz="1rsb")
        assert r.ansatz == "1rsb" and r.converged and r.q1 == 1.0
        # frozen branch at m = 1: q0 = q_RS and phi_fr = complexity = s_RS
        assert r.q0 == pytest.approx(rs.q, abs=1e-9)
        assert r.thermo["entropy"] == pytest.approx(rs.entropy, abs=1e-10)
        assert r.thermo["complexity"] == pytest.approx(rs.entropy, abs=1e-10)
        # the q1 < 1 branch: started with q1 - q0 = 1/2, the general equations collapse to RS
        c = r.extra["collapse"]
        assert c["q1_minus_q0"][0] == pytest.approx(0.5) and c["q1_minus_q0"][-1] <= 1e-6
        assert abs(c["q0"] - rs.q) < 5e-4 and abs(c["q1"] - rs.q) < 5e-4
        # saddle: one direction of each sign (q0 and q_hat0 are conjugate)
        ev = r.hessian_eigenvalues
        assert ev[0] < 0 < ev[1]


def test_bad_input():
    with pytest.raises(ValueError, match="alpha"):
        binary_storage_1rsb(0.9)
    with pytest.raises(ValueError, match="m"):
        binary_capacity_1rsb(0.0, m=0.0)
    with pytest.raises(ValueError, match="ansatz"):
        binary_storage(0.3, ansatz="frsb")
    with pytest.raises(ValueError, match="method"):
        binary_capacity(0.0, "gardner_derrida", ansatz="1rsb")


@pytest.mark.slow
def test_one_rsb_storage_table():
    # complexity decreases to 0 at alpha_KM; the frozen q0 follows the RS overlap
    prev = math.inf
    for alpha in (0.1, 0.4, 0.7, 0.83):
        r = binary_storage_1rsb(alpha, m=0.5)
        assert r.q0 == pytest.approx(binary_storage(alpha).q, abs=1e-9)
        assert r.thermo["complexity"] == pytest.approx(binary_storage(alpha).entropy, abs=1e-10)
        assert 0 < r.thermo["complexity"] < prev
        prev = r.thermo["complexity"]
