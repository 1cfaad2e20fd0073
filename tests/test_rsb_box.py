"""RSB core: the box channel (continuous spins on [-1, 1] with a Gaussian site weight) and the
finite-beta log H terminal -- against mpmath and independent nested quadrature, gradients against
finite differences, the RS (k = 0) and q1 = q0 limits."""
import math

import mpmath as mp
import numpy as np
import pytest
from scipy.special import log_ndtr

from statmech.gaussian import gauss_hermite, piecewise_nodes
from statmech.rsb import LogHTerminal, box_entropic, box_site, kstep_average, make_lattice


@pytest.mark.parametrize("A,h", [(5.0, 0.3), (-20.0, 1.0), (-50.0, 200.0), (300.0, -2.0), (0.0, 0.0),
                                 (-3.0, -40.0), (-200.0, 0.01)])
def test_box_site_matches_mpmath(A, h):
    mp.mp.dps = 30
    w = lambda m: mp.exp(-A * m * m / 2 + h * m)
    Z = mp.quad(w, [-1, 0, 1])
    M = mp.quad(lambda m: m * w(m), [-1, 0, 1]) / Z
    Q = mp.quad(lambda m: m * m * w(m), [-1, 0, 1]) / Z
    F, Mm, Qq = box_site(h, A)
    assert F == pytest.approx(float(mp.log(Z)), abs=1e-13 * max(1.0, abs(float(mp.log(Z)))))
    assert Mm == pytest.approx(float(M), abs=1e-14) and Qq == pytest.approx(float(Q), abs=1e-14)


def _nested(f_top, s2s, mus, rules):
    """Independent nested quadrature E_z0 (1/mu) log E_z1 exp(mu f(h)) on tensor rules."""
    (z0, w0), (z1, w1) = rules
    inner = np.empty(z0.size)
    for i in range(z0.size):   # row by row (memory)
        F = f_top(math.sqrt(s2s[0]) * z0[i] + math.sqrt(s2s[1]) * z1)
        c = F.max()
        inner[i] = c + math.log(float(w1 @ np.exp(mus[0] * (F - c)))) / mus[0]
    return float(w0 @ inner)


def test_box_entropic_rs_and_1rsb_against_nested_quadrature():
    A = -5.0
    z, w = piecewise_nodes([-1.0, 0.0, 1.0], 7)
    # RS: q_hat q/2 + E_z log zeta(A, sqrt(q_hat) z)
    qh, q = 50.0, 0.7
    ref = qh * q / 2 + float(w @ box_site(math.sqrt(qh) * z, A)[0])
    assert box_entropic([q], [qh], [], A).value == pytest.approx(ref, abs=1e-12)
    # 1RSB: the linear terms plus the nested average of log zeta
    q0, q1, qh0, qh1, mu = 0.4, 0.8, 10.0, 80.0, 0.4
    rules = (piecewise_nodes([-1.0, 0.0, 1.0], 6), piecewise_nodes([-1.0, 0.0, 1.0], 6))
    ref = 0.5 * (mu * qh0 * q0 + (1 - mu) * qh1 * q1) + _nested(lambda h: box_site(h, A)[0],
                                                                (qh0, qh1 - qh0), (mu,), rules)
    assert box_entropic([q0, q1], [qh0, qh1], [mu], A).value == pytest.approx(ref, abs=1e-11)


def test_box_entropic_gradient_matches_finite_differences():
    q, qh, m, A = np.array([0.4, 0.8]), np.array([10.0, 80.0]), np.array([0.4]), -5.0
    r = box_entropic(q, qh, m, A)
    lat = r.lattice
    val = lambda q_, qh_, m_, A_: box_entropic(q_, qh_, m_, A_, lattice=lat).value
    fd = []
    for arr, k, h in ((q, 0, 1e-6), (q, 1, 1e-6), (qh, 0, 1e-5), (qh, 1, 1e-5), (m, 0, 1e-6)):
        e = np.zeros_like(arr)
        e[k] = h
        args_p = [q, qh, m]
        args_m = [q, qh, m]
        i = [id(q), id(qh), id(m)].index(id(arr))
        args_p[i], args_m[i] = arr + e, arr - e
        fd.append((val(*args_p, A) - val(*args_m, A)) / (2 * h))
    fd.append((val(q, qh, m, A + 1e-6) - val(q, qh, m, A - 1e-6)) / 2e-6)
    an = np.concatenate([r.dq, r.dq_hat, r.dm, [r.dA]])
    np.testing.assert_allclose(an, fd, rtol=1e-6, atol=1e-7)


def test_beta_log_h_terminal_against_nested_quadrature():
    """The finite-beta terminal f(q*, h) = beta log H(-h/sqrt(1 - q*)) below a mu = 1 step
    (the stochastic perceptron's pattern term): RS (q = (q_m, q*)) and 1RSB (q = (q0, q1, q*))
    against tensor quadrature of E_z0 (1/mu) log E_z1 [E_x H(.)^beta]^mu."""
    beta, qs = 20.0, 0.9
    ch = LogHTerminal(0.0, beta)
    x, wx = piecewise_nodes([-3.0, 0.0, 3.0], 7)

    def logZx(D, q1):   # log E_x H^beta at field D (mode-free: moderate D only)
        u = -(D[..., None] + math.sqrt(qs - q1) * x) / math.sqrt(1 - qs)
        lw = beta * log_ndtr(-u)
        c = lw.max(axis=-1, keepdims=True)
        return c[..., 0] + np.log((wx * np.exp(lw - c)).sum(axis=-1))

    qm = 0.5
    z, w = piecewise_nodes([-1.0, 0.0, 1.0], 7)
    ref = float(w @ logZx(math.sqrt(qm) * z, qm))
    assert kstep_average([qm, qs], [1.0], ch).value == pytest.approx(ref, abs=1e-11)
    q0, q1, mu = 0.3, 0.6, 0.5
    # levels 3 (z) and 4 (x) already agree with levels 5 and 7 to rounding (measured: |diff| 4e-16,
    # 146 s at the higher levels against 1.4 s here)
    x, wx = piecewise_nodes([-3.0, 0.0, 3.0], 4)
    rules = (piecewise_nodes([-1.0, 0.0, 1.0], 3), piecewise_nodes([-1.0, 0.0, 1.0], 3))
    ref = _nested(lambda h: logZx(h, q1), (q0, q1 - q0), (mu,), rules)
    r = kstep_average([q0, q1, qs], [mu, 1.0], ch)
    assert r.value == pytest.approx(ref, abs=1e-10)
    # the lattice follows the terminal's curvature p/beta (Channel.terminal_scale)
    lat1 = make_lattice([q0, q1, qs], [mu, 1.0], LogHTerminal(0.0, 1.0))
    assert r.lattice.delta < lat1.delta


def test_box_entropic_q1_equal_q0_is_rs():
    """q1 = q0, q_hat1 = q_hat0: the k = 1 term equals the k = 0 one for any mu (to the lattice
    accuracy of a zero-variance step)."""
    A = 2.0
    rs = box_entropic([0.5], [8.0], [], A).value
    for mu in (0.3, 0.9):
        assert box_entropic([0.5, 0.5], [8.0, 8.0], [mu], A).value == pytest.approx(rs, abs=1e-10)
