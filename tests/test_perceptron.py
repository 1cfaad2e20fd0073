"""Perceptron theory: published values, mpmath cross-checks, derivatives, limits, errors."""
import json
import math
import subprocess
import sys

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from statmech import ConvergenceError
from statmech import perceptron as P
from statmech.perceptron import _common, _quadrature

mp.mp.dps = 20


# --------------------------------------------------------------------------- mpmath references
def _H(x):
    return mp.erfc(x / mp.sqrt(2)) / 2


def _G(x):
    return mp.exp(-x * x / 2) / mp.sqrt(2 * mp.pi)


def _E(f, breaks=()):
    pts = sorted(set([mp.mpf(b) for b in breaks] + [mp.mpf(0)]))
    return mp.quad(lambda t: f(t) * _G(t), [-mp.inf] + pts + [mp.inf])


def _st_energetic(q, k, fn):
    q, k = mp.mpf(q), mp.mpf(k)
    c = k / mp.sqrt(q)
    w = mp.sqrt((1 - q) / q)
    u = lambda t: (k - mp.sqrt(q) * t) / mp.sqrt(1 - q)
    return _E(lambda t: fn(u(t)), [c - 6 * w, c - w, c, c + w, c + 6 * w])


def mp_spherical_storage_phi(q, alpha, k):
    q = mp.mpf(q)
    return mp.log(1 - q) / 2 + q / (2 * (1 - q)) + alpha * _st_energetic(q, k, lambda u: mp.log(_H(u)))


def mp_ts_energetic(R):
    R = mp.mpf(R)
    a = mp.sqrt(R / (1 - R))
    return _E(lambda t: 2 * _H(-a * t) * mp.log(_H(-a * t)), [-6 / a, -1 / a, 1 / a, 6 / a])


def mp_binary_storage_phi(q, qh, alpha, k):
    qh = mp.mpf(qh)
    s = mp.sqrt(qh)
    ein = _E(lambda z: mp.log(2 * mp.cosh(s * z)), [-1 / s, 1 / s])
    return -qh * (1 - mp.mpf(q)) / 2 + ein + alpha * _st_energetic(q, k, lambda u: mp.log(_H(u)))


def mp_binary_ts_phi(R, rh, alpha):
    rh = mp.mpf(rh)
    s = mp.sqrt(rh)
    ein = _E(lambda z: mp.log(2 * mp.cosh(s * z + rh)), [-s - 1 / s, -s, -s + 1 / s])
    return -rh * (1 + mp.mpf(R)) / 2 + ein + alpha * mp_ts_energetic(R)


def rel(a, b):
    return abs(float(a) - float(b)) / max(abs(float(b)), 1e-300)


def err(a, b):
    """Relative error for O(1) quantities, absolute for small ones (free entropies near 0)."""
    return abs(float(a) - float(b)) / max(abs(float(b)), 1.0)


# --------------------------------------------------------------------------- Gardner capacity
def test_gardner_capacity_published_and_mpmath():
    assert P.gardner_capacity(0.0) == pytest.approx(2.0, rel=1e-15)
    assert P.gardner_capacity(1.0) == pytest.approx(0.519572229605, rel=1e-11)
    for k in (-8.0, -3.5, -2.5, -1.0, 0.3, 5.0):
        with mp.workdps(30):
            ref = 1 / mp.quad(lambda t: (k - t) ** 2 * _G(t), [-mp.inf, k - 1, k])
        assert rel(P.gardner_capacity(k), ref) < 1e-13, k


def test_gardner_capacity_vectorized_and_limits():
    k = np.array([-1.0, 0.0, 0.5, 1.0])
    out = P.gardner_capacity(k)
    assert isinstance(out, np.ndarray) and out.shape == (4,)
    assert np.all(np.diff(out) < 0)  # decreasing in kappa
    np.testing.assert_allclose(out, [P.gardner_capacity(x) for x in k], rtol=0, atol=0)
    # kappa -> inf: 1/alpha_c = 1 + kappa^2 up to Gaussian tails
    assert P.gardner_capacity(12.0) == pytest.approx(1 / 145.0, rel=1e-14)
    # kappa -> -inf: alpha_c grows like sqrt(pi/2) |k|^3 e^{k^2/2}/2 ... and stays finite until overflow
    assert math.isinf(P.gardner_capacity(-40.0))
    assert np.isfinite(P.gardner_capacity(-30.0))


# --------------------------------------------------------------------------- free entropies vs mpmath
@pytest.mark.parametrize("q,alpha,k", [(0.3, 0.7, 0.0), (0.999999, 1.9, 0.0), (0.97, 1.0, -0.6), (0.2, 0.1, 2.5)])
def test_spherical_storage_free_entropy_vs_mpmath(q, alpha, k):
    assert rel(P.spherical_storage_free_entropy([q], alpha, k), mp_spherical_storage_phi(q, alpha, k)) < 1e-12


@pytest.mark.parametrize("R", [0.1, 0.5, 0.8, 0.999, 0.9999999])
def test_teacher_student_energetic_vs_mpmath(R):
    got = P.spherical_teacher_student_free_entropy([R], 1.0) - (0.5 * math.log1p(-R) + 0.5 * R)
    assert rel(got, mp_ts_energetic(R)) < 1e-11


@pytest.mark.parametrize("q,qh,alpha,k", [(0.4, 0.8, 0.5, 0.0), (0.9, 12.0, 1.1, 0.0), (0.6, 2.0, 0.3, 0.7)])
def test_binary_storage_free_entropy_vs_mpmath(q, qh, alpha, k):
    assert err(P.binary_storage_free_entropy([q, qh], alpha, k), mp_binary_storage_phi(q, qh, alpha, k)) < 1e-12


@pytest.mark.parametrize("R,rh,alpha", [(0.3, 0.4, 0.5), (0.7, 1.6, 1.245), (0.9, 3.3, 1.49), (0.99, 9.0, 1.0)])
def test_binary_teacher_student_free_entropy_vs_mpmath(R, rh, alpha):
    assert err(P.binary_teacher_student_free_entropy([R, rh], alpha), mp_binary_ts_phi(R, rh, alpha)) < 1e-12


# --------------------------------------------------------------------------- derivatives (sympy) vs FD
CASES = [
    (P.spherical_storage_free_entropy, P.spherical_storage_gradient, P.spherical_storage_hessian,
     [0.63], (1.3, 0.4)),
    (P.spherical_storage_free_entropy, P.spherical_storage_gradient, P.spherical_storage_hessian,
     [0.2], (0.5, -0.7)),
    (P.spherical_teacher_student_free_entropy, P.spherical_teacher_student_gradient,
     P.spherical_teacher_student_hessian, [0.71], (2.2,)),
    (P.binary_storage_free_entropy, P.binary_storage_gradient, P.binary_storage_hessian,
     [0.55, 1.7], (0.8, 0.0)),
    (P.binary_storage_free_entropy, P.binary_storage_gradient, P.binary_storage_hessian,
     [0.3, 0.4], (0.3, 1.0)),
    (P.binary_teacher_student_free_entropy, P.binary_teacher_student_gradient,
     P.binary_teacher_student_hessian, [0.69, 1.56], (1.245,)),
    (P.binary_teacher_student_free_entropy, P.binary_teacher_student_gradient,
     P.binary_teacher_student_hessian, [0.3, 0.3], (0.5,)),
]


@pytest.mark.parametrize("phi,grad,hess,x,args", CASES)
def test_gradient_and_hessian_match_finite_differences(phi, grad, hess, x, args):
    x = np.array(x, dtype=float)
    h = 1e-6
    g = grad(x, *args)
    Hm = hess(x, *args)
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = h
        fd = (phi(x + e, *args) - phi(x - e, *args)) / (2 * h)
        assert g[i] == pytest.approx(fd, rel=1e-7, abs=1e-8)
        fdg = (grad(x + e, *args) - grad(x - e, *args)) / (2 * h)
        np.testing.assert_allclose(Hm[:, i], fdg, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(Hm, Hm.T, atol=1e-12)


def test_stein_form_equals_raw_sympy_derivative():
    # d/dq E log H(u): raw sympy derivative (kernel entry 4) == -E IM^2/(2(1-q)) (Gaussian integration by parts)
    for q, k in ((0.3, 0.0), (0.8, 0.5), (0.95, -1.0)):
        e = _quadrature._st_out(q, k)
        assert e[4] == pytest.approx(-e[1] / (2 * (1 - q)), rel=1e-12)
    for R in (0.2, 0.7, 0.99):
        e = _quadrature._ts_out(R)
        assert e[4] == pytest.approx(e[1] / (2 * (1 - R)), rel=1e-11)


# --------------------------------------------------------------------------- spherical storage
def test_spherical_storage_saddle_vs_mpmath_root():
    alpha, k = 1.21, 0.25
    res = P.spherical_storage(alpha, k)
    assert res.converged and res.residual < 1e-13

    def eq(q):  # (S2): q/(1-q) = alpha E IM(u)^2
        return q / (1 - q) - alpha * _st_energetic(q, k, lambda u: (_G(u) / _H(u)) ** 2)

    # one secant step from the returned q gives the exact root to O(err^2)
    q0, q1 = mp.mpf(res.q), mp.mpf(res.q) * (1 + mp.mpf("1e-8"))
    f0, f1 = eq(q0), eq(q1)
    qref = q0 - f0 * (q1 - q0) / (f1 - f0)
    assert rel(res.q, qref) < 1e-12
    assert rel(res.entropy, mp_spherical_storage_phi(qref, alpha, k)) < 1e-12


def test_spherical_storage_limits_and_vectorization():
    # alpha -> 0: q ~ alpha IM(kappa)^2, entropy ~ alpha log H(kappa)
    for k in (0.0, 0.7):
        a = 1e-7
        r = P.spherical_storage(a, k)
        im = float(_G(k) / _H(k))
        assert r.q == pytest.approx(a * im ** 2, rel=1e-5)
        assert r.entropy == pytest.approx(a * float(mp.log(_H(k))), rel=1e-5)
    r0 = P.spherical_storage(0.0)
    assert r0.q == 0.0 and r0.entropy == 0.0
    # q -> 1 as alpha -> alpha_c(kappa), entropy -> -inf
    ac = P.gardner_capacity(0.5)
    r = P.spherical_storage(ac * (1 - 1e-7), 0.5)
    assert 1 - r.q < 1e-5 and r.entropy < -5
    # vectorized == scalar
    alphas = np.array([0.2, 0.9, 1.6])
    rv = P.spherical_storage(alphas, 0.0)
    for i, a in enumerate(alphas):
        rs = P.spherical_storage(a, 0.0)
        assert rv.q[i] == pytest.approx(rs.q, rel=1e-14)
        assert rv.entropy[i] == pytest.approx(rs.entropy, rel=1e-14)
    assert np.all(np.diff(rv.q) > 0) and np.all(np.diff(rv.entropy) < 0)


def test_spherical_storage_at_line():
    # kappa >= 0: RS stable up to capacity; at kappa = 0 the replicon -> 0 exactly at alpha_c = 2
    r = P.spherical_storage(np.linspace(0.1, 1.999, 6), 0.0)
    assert np.all(r.rs_stable) and np.all(r.replicon > 0)
    assert P.spherical_storage(2 * (1 - 1e-9)).replicon < 1e-3
    # q -> 1 limit of the replicon: 1 - alpha_c(kappa) H(-kappa)
    k = 0.5
    ac = P.gardner_capacity(k)
    assert P.spherical_storage(ac * (1 - 1e-10), k).replicon == pytest.approx(1 - ac * float(_H(-k)), abs=1e-3)
    # kappa < 0: RS unstable near capacity, stable at small alpha
    k = -0.5
    ac = P.gardner_capacity(k)
    assert P.spherical_storage(0.5, k).rs_stable
    r = P.spherical_storage(ac * 0.999, k)
    assert not r.rs_stable and r.replicon < 0


@settings(max_examples=15, deadline=None)
@given(k=st.floats(-1.0, 2.0), frac=st.floats(0.02, 0.98))
def test_spherical_storage_property_envelope(k, frac):
    """Saddle-point property: d(entropy)/d(alpha) = E_t log H(u) at the saddle (envelope theorem)."""
    alpha = frac * P.gardner_capacity(k)
    r = P.spherical_storage(alpha, k)
    assert r.converged and abs(r.extra["gradient"]) < 1e-9 * max(1.0, 1 / (1 - r.q) ** 2)
    h = 1e-5 * alpha
    d = (P.spherical_storage(alpha + h, k).entropy - P.spherical_storage(alpha - h, k).entropy) / (2 * h)
    e_logH = (r.entropy - 0.5 * math.log1p(-r.q) - 0.5 * r.q / (1 - r.q)) / alpha
    assert d == pytest.approx(e_logH, rel=1e-5)


# --------------------------------------------------------------------------- spherical teacher-student
def test_spherical_teacher_student_published():
    assert P.spherical_teacher_student(1.0).R == pytest.approx(0.486263637016, rel=1e-11)
    assert P.spherical_teacher_student(5.0).generalization_error == pytest.approx(0.118006033298, rel=1e-11)
    assert P.SPHERICAL_TS_ASYMPTOTIC_CONSTANT == pytest.approx(0.62465819, abs=5e-9)


def test_spherical_teacher_student_vs_thesis_equation_2_25():
    # independent form of the saddle point: R/sqrt(1-R) = (alpha/pi) int Dt e^{-R t^2/2}/H(sqrt(R) t)
    alpha = 2.7
    R = P.spherical_teacher_student(alpha).R
    rhs = alpha / mp.pi * _E(lambda t: mp.exp(-R * t * t / 2) / _H(mp.sqrt(R) * t))
    assert rel(R / math.sqrt(1 - R), rhs) < 1e-12


def test_spherical_teacher_student_limits():
    # alpha -> 0: R ~ 2 alpha/pi
    a = 1e-6
    assert P.spherical_teacher_student(a).R == pytest.approx(2 * a / math.pi, rel=1e-5)
    # large alpha: alpha eps -> c from below, the asymptotic form agrees
    c = P.SPHERICAL_TS_ASYMPTOTIC_CONSTANT
    vals = [a * P.spherical_teacher_student(a).generalization_error for a in (1e2, 1e3, 1e4, 1e5)]
    assert np.all(np.diff(vals) > 0) and vals[-1] < c
    assert vals[-1] == pytest.approx(c, rel=1e-8)
    asym = P.spherical_teacher_student_asymptotic(1e5)
    assert asym["generalization_error"] == pytest.approx(P.spherical_teacher_student(1e5).generalization_error, rel=1e-8)
    r = P.spherical_teacher_student(np.array([0.5, 3.0, 30.0]))
    assert np.all(np.diff(r.R) > 0) and np.all(r.rs_stable)
    np.testing.assert_allclose(r.generalization_error, np.arccos(r.R) / np.pi, rtol=1e-12)


# --------------------------------------------------------------------------- binary storage
def test_binary_capacity_published():
    assert P.binary_capacity(0.0) == pytest.approx(0.8330785997, abs=2e-10)
    assert P.binary_capacity(0.0, method="gardner_derrida") == pytest.approx(4 / math.pi, rel=1e-15)
    out = P.binary_capacity(np.array([0.0, 0.5]))
    assert isinstance(out, np.ndarray) and out.shape == (2,) and out[1] < out[0]
    assert isinstance(P.binary_capacity(0.3), float)


def test_binary_capacity_is_zero_of_entropy():
    for k in (0.0, 0.6):
        ac = P.binary_capacity(k)
        r = P.binary_storage(ac, k)
        assert abs(r.entropy) < 1e-11
        assert abs(float(mp_binary_storage_phi(r.q, r.q_hat, ac, k))) < 1e-11
        assert ac < P.binary_capacity(k, "gardner_derrida")


@pytest.mark.parametrize("k", [0.0, 0.5])
def test_binary_gardner_derrida_is_q_to_one_limit(k):
    agd = P.binary_capacity(k, method="gardner_derrida")
    q = [P.binary_storage(agd * (1 - d), k).q for d in (1e-2, 1e-3, 1e-4)]
    assert np.all(np.diff(q) > 0) and q[-1] > 0.999
    # asymptotics used in the derivation: 1-q ~ sqrt(2/(pi q_hat)), q_hat (1-q)^2 -> alpha/alpha_c^sph
    r = P.binary_storage(agd * (1 - 1e-9), k)
    assert 1 - r.q == pytest.approx(math.sqrt(2 / (math.pi * r.q_hat)), rel=1e-3)
    assert r.q_hat * (1 - r.q) ** 2 == pytest.approx(agd / P.gardner_capacity(k), rel=1e-3)
    with pytest.raises(ValueError, match="alpha"):
        P.binary_storage(agd * 1.0001, k)


def test_binary_storage_small_alpha_and_saddle_equations():
    a = 1e-7
    r = P.binary_storage(a, 0.0)
    assert r.entropy == pytest.approx(math.log(2) - a * math.log(2), rel=1e-12)
    r = P.binary_storage(0.6, 0.3)
    # the two saddle-point equations (thesis Eqs. 2.39, 2.40), evaluated with mpmath
    s = mp.sqrt(r.q_hat)
    q_ref = _E(lambda z: mp.tanh(s * z) ** 2, [-1 / s, 1 / s])
    qh_ref = 0.6 / (2 * mp.pi * (1 - r.q)) * _st_energetic(r.q, 0.3, lambda u: mp.exp(-u * u) / _H(u) ** 2)
    assert rel(r.q, q_ref) < 1e-12 and rel(r.q_hat, qh_ref) < 1e-12
    assert r.converged and r.rs_stable


# --------------------------------------------------------------------------- binary teacher-student
def test_binary_teacher_student_transition():
    tr = P.binary_teacher_student_transition()
    assert tr.alpha_c == pytest.approx(1.245, abs=1e-3)
    assert tr.alpha_spinodal == pytest.approx(1.49, abs=5e-3)
    assert tr.R_c < tr.R_spinodal < 1
    # entropy of the poor branch vanishes at alpha_c (independently evaluated with mpmath)
    assert abs(float(mp_binary_ts_phi(tr.R_c, tr.R_hat_c, tr.alpha_c))) < 1e-11
    # and (R_c, R_hat_c) solves the saddle-point equations in the Györgyi form (mpmath):
    # R = E tanh(sqrt(R_hat) z + R_hat),  R_hat = (alpha/pi) int Dt e^{-R t^2/2}/H(sqrt(R) t) / sqrt(1-R)
    R, rh = mp.mpf(tr.R_c), mp.mpf(tr.R_hat_c)
    s = mp.sqrt(rh)
    assert rel(R, _E(lambda z: mp.tanh(s * z + rh), [-s - 1 / s, -s, -s + 1 / s])) < 1e-12
    X = _E(lambda t: mp.exp(-R * t * t / 2) / _H(mp.sqrt(R) * t))
    assert rel(rh, tr.alpha_c / mp.pi * X / mp.sqrt(1 - R)) < 1e-12
    # the poor branch ends at the spinodal: poor and unstable branches merge there
    d = 1e-7
    rp = P.binary_teacher_student(tr.alpha_spinodal * (1 - d), "poor")
    ru = P.binary_teacher_student(tr.alpha_spinodal * (1 - d), "unstable")
    assert rp.R < tr.R_spinodal < ru.R and ru.R - rp.R < 1e-2
    with pytest.raises(ValueError, match="alpha"):
        P.binary_teacher_student(tr.alpha_spinodal * 1.001, "poor")


def test_binary_teacher_student_branches_and_nishimori():
    tr = P.binary_teacher_student_transition()
    r = P.binary_teacher_student(np.array([0.5, tr.alpha_c * 0.999, tr.alpha_c * 1.001, 3.0]))
    assert list(r.extra["branch"]) == ["poor", "poor", "perfect", "perfect"]
    assert r.R[2] == 1.0 and r.generalization_error[2] == 0.0 and r.entropy[2] == 0.0
    assert r.entropy[1] > 0
    # metastable poor branch has negative entropy between alpha_c and the spinodal
    assert P.binary_teacher_student(1.4, "poor").entropy < 0
    # Nishimori: R = E tanh(b) = E tanh^2(b) at the solution (mpmath)
    res = P.binary_teacher_student(0.9, "poor")
    s, rh = mp.sqrt(res.R_hat), mp.mpf(res.R_hat)
    brk = [-s - 1 / s, -s, -s + 1 / s]
    m1 = _E(lambda z: mp.tanh(s * z + rh), brk)
    m2 = _E(lambda z: mp.tanh(s * z + rh) ** 2, brk)
    assert rel(res.R, m1) < 1e-12 and rel(res.R, m2) < 1e-12
    assert res.rs_stable and res.replicon > 0


# --------------------------------------------------------------------------- errors
@pytest.mark.parametrize("call", [
    lambda: P.spherical_storage(-1.0), lambda: P.spherical_storage(float("nan")),
    lambda: P.spherical_storage(2.5), lambda: P.spherical_teacher_student(-0.1),
    lambda: P.binary_storage(float("nan")), lambda: P.binary_teacher_student(-2.0),
    lambda: P.spherical_teacher_student_asymptotic(0.0),
])
def test_bad_alpha_raises_value_error_naming_alpha(call):
    with pytest.raises(ValueError, match="alpha"):
        call()


def test_other_bad_arguments():
    with pytest.raises(ValueError, match="kappa"):
        P.gardner_capacity(float("nan"))
    with pytest.raises(ValueError, match="kappa"):
        P.spherical_storage(1.0, float("inf"))
    with pytest.raises(ValueError, match="method"):
        P.binary_capacity(0.0, method="rsb")
    with pytest.raises(ValueError, match="branch"):
        P.binary_teacher_student(1.0, branch="best")
    with pytest.raises(ValueError, match="q must be"):
        P.spherical_storage_free_entropy([1.0], 1.0)
    with pytest.raises(ValueError, match="x must be"):
        P.binary_storage_free_entropy([0.5], 1.0)


def test_convergence_error_is_raised_not_swallowed(monkeypatch):
    def failing(*a, **k):
        raise ConvergenceError("forced", residual=1.0)
    monkeypatch.setattr(_common, "root_scalar", failing)
    monkeypatch.setattr(_common, "newton", failing)
    with pytest.raises(ConvergenceError):
        P.spherical_storage(1.0)
    with pytest.raises(ConvergenceError):
        P.binary_capacity(0.1)
    # a function that cannot be bracketed raises with diagnostics
    monkeypatch.undo()
    with pytest.raises(ConvergenceError, match="bracket"):
        _common._bracket_solve(lambda y: -1.0, 0.0, maxexp=5)


# --------------------------------------------------------------------------- CLI
def _cli(*args):
    return subprocess.run([sys.executable, "-m", "statmech", "perceptron", *args], capture_output=True, text=True)


def test_cli_capacity_json_and_errors():
    p = _cli("capacity", "--kappa", "0.5", "--json")
    assert p.returncode == 0
    assert json.loads(p.stdout)["alpha_c"] == pytest.approx(P.gardner_capacity(0.5), rel=1e-15)


def test_cli_in_process(capsys):
    from statmech.cli import main
    assert main(["perceptron", "capacity", "--weights", "binary", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["alpha_c"] == pytest.approx(0.8330785997, abs=2e-10)
    assert main(["perceptron", "teacher-student", "--alpha", "1.0", "--weights", "binary", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["extra"]["branch"] == "poor" and 0 < d["R"] < 1
    assert main(["perceptron", "transition", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["alpha_c"] == pytest.approx(1.245, abs=1e-3)
    for bad in (["perceptron", "capacity", "--kappa", "nan"], ["perceptron", "storage", "--alpha", "9"],
                ["perceptron", "capacity", "--weights", "ising"]):
        assert main(bad) == 2
        assert len(capsys.readouterr().err.strip().splitlines()) == 1


# --------------------------------------------------------------------------- slow cross-checks
@pytest.mark.slow
def test_binary_capacity_mpmath_root_slow():
    """Zero-entropy capacity from an independent mpmath solve of Eqs. 2.38-2.40 (kappa = 0)."""
    def solve(alpha):
        def eqs(q, qh):
            s = mp.sqrt(qh)
            e1 = q - _E(lambda z: mp.tanh(s * z) ** 2, [-1 / s, 1 / s])
            e2 = qh - alpha / (1 - q) * _st_energetic(q, 0, lambda u: (_G(u) / _H(u)) ** 2)
            return [e1, e2]
        r = P.binary_storage(float(alpha))
        return mp.findroot(eqs, (mp.mpf(r.q), mp.mpf(r.q_hat)), tol=1e-20)
    mp.mp.dps = 20
    try:
        ac = P.binary_capacity(0.0)
        q, qh = solve(ac)
        assert abs(float(mp_binary_storage_phi(q, qh, ac, 0))) < 1e-10
    finally:
        mp.mp.dps = 20


def test_alpha_zero_hessians_match_finite_differences():
    # closed forms used at alpha = 0 (where 1/sqrt(q_hat) derivative terms are 0/0)
    r = P.binary_storage(0.0)
    Hm = P.binary_storage_hessian([1e-9, 1e-9], 0.0)
    np.testing.assert_allclose(r.hessian_eigenvalues, np.linalg.eigvalsh(Hm), atol=1e-6)
    r = P.binary_teacher_student(0.0, "poor")
    Hm = P.binary_teacher_student_hessian([1e-9, 1e-9], 0.0)
    np.testing.assert_allclose(r.hessian_eigenvalues, np.linalg.eigvalsh(Hm), atol=1e-6)


def test_binary_storage_entropy_vs_exhaustive_enumeration():
    """Theory vs simulation: quenched (1/N) <log #solutions> at N = 17 within finite-size error."""
    sim = pytest.importorskip("statmech.simulate.enumeration")
    rng = np.random.default_rng(7)
    N, Pm, n_inst = 17, 6, 40
    logs = []
    for _ in range(n_inst):
        xi = sim.random_patterns(rng, Pm, N)
        y = 2.0 * rng.integers(0, 2, Pm) - 1
        n = sim.prefix_counts(xi, y).n_solutions.astype(float)
        assert np.all(n > 0)  # alpha <= 0.35: every instance is satisfiable at this N
        logs.append(np.log(n) / N)
    logs = np.array(logs)
    mean, sem = logs.mean(axis=0), logs.std(axis=0, ddof=1) / math.sqrt(n_inst)
    alphas = np.arange(Pm + 1) / N
    theory = P.binary_storage(alphas).entropy
    # statistical error (3 sem) + O(1/N) finite-size correction (observed <~ 0.01 at N = 15-17)
    assert np.all(np.abs(mean - theory) <= 3 * sem + 0.015), (mean - theory, sem)


def test_continuation_engine_finds_transition_and_spinodal_from_free_entropy():
    """The generic continuation engine, given only (G1) and its sympy derivatives, finds the
    zero-entropy point (first-order transition) and the fold (spinodal) of the poor branch."""
    C = pytest.importorskip("statmech.continuation")
    r = P.binary_teacher_student(1.0, "poor")
    prob = C.Problem(free_energy=P.binary_teacher_student_free_entropy,
                     gradient=P.binary_teacher_student_gradient, hessian=P.binary_teacher_student_hessian,
                     x0=np.array([r.R, r.R_hat]), p0=1.0, stability="none", affine_in_p=True,
                     events={"zero_entropy": lambda x, p: P.binary_teacher_student_free_entropy(x, p)})
    br = C.trace(prob, p_min=0.5, p_max=1.6, ds=0.05, direction=+1, s_max=3.0)
    tr = P.binary_teacher_student_transition()
    ev = [s for s in br.special_points if s.kind == "event"]
    fold = [s for s in br.special_points if s.kind == "fold"]
    assert ev and ev[0].p == pytest.approx(tr.alpha_c, rel=1e-9)
    assert fold and fold[0].p == pytest.approx(tr.alpha_spinodal, rel=1e-9)
    assert fold[0].x[0] == pytest.approx(tr.R_spinodal, rel=1e-5)


@pytest.mark.parametrize("alpha", [1e-300, 1e-99, 1e-30])
def test_tiny_alpha_is_finite_and_linear(alpha):
    r = P.binary_storage(alpha, 0.5)
    assert r.converged and r.q == pytest.approx(alpha * float(_G(0.5) / _H(0.5)) ** 2, rel=1e-12)
    r = P.binary_teacher_student(alpha)
    assert r.converged and r.R == pytest.approx(2 * alpha / math.pi, rel=1e-12)
    for f in (P.spherical_storage, P.spherical_teacher_student):
        r = f(alpha)
        assert r.converged and np.isfinite(r.entropy) and 0 < r.q < 1e-20 + 2 * alpha


def test_at_lines():
    a_at = P.spherical_storage_at_line(-0.5)
    assert a_at < P.gardner_capacity(-0.5)
    assert P.spherical_storage(a_at * (1 - 1e-6), -0.5).rs_stable
    assert not P.spherical_storage(a_at * (1 + 1e-6), -0.5).rs_stable
    assert P.spherical_storage_at_line(0.5) == P.gardner_capacity(0.5)  # stable up to capacity
    b_at = P.binary_storage_at_line(0.0)
    assert b_at == pytest.approx(1.015, abs=1e-3)  # Gardner & Derrida 1988
    assert P.binary_capacity(0.0) < b_at < P.binary_capacity(0.0, "gardner_derrida")
    assert abs(P.binary_storage(b_at).replicon) < 1e-9


@settings(max_examples=12, deadline=None)
@given(k=st.floats(0.0, 1.5), frac=st.floats(0.02, 0.97))
def test_binary_storage_property_stationary_and_envelope(k, frac):
    alpha = frac * P.binary_capacity(k, "gardner_derrida")
    r = P.binary_storage(alpha, k)
    g = P.binary_storage_gradient([r.q, r.q_hat], alpha, k)
    assert r.converged and np.max(np.abs(g)) < 1e-10 * max(1.0, r.q_hat)
    h = 1e-5 * alpha
    d = (P.binary_storage(alpha + h, k).entropy - P.binary_storage(alpha - h, k).entropy) / (2 * h)
    # envelope theorem: d entropy/d alpha = E_t log H(u) = (phi(alpha) - phi(0 at same x))/alpha
    e_logH = (r.entropy - P.binary_storage_free_entropy([r.q, r.q_hat], 0.0, k)) / alpha
    assert d == pytest.approx(e_logH, rel=1e-5, abs=1e-8)


@settings(max_examples=10, deadline=None)
@given(frac=st.floats(0.01, 0.999))
def test_binary_teacher_student_property_poor_branch(frac):
    tr = P.binary_teacher_student_transition()
    alpha = frac * tr.alpha_spinodal
    r = P.binary_teacher_student(alpha, "poor")
    g = P.binary_teacher_student_gradient([r.R, r.R_hat], alpha)
    assert r.converged and np.max(np.abs(g)) < 1e-10 * max(1.0, r.R_hat)
    assert 0 < r.R < tr.R_spinodal + 1e-12
    assert (r.entropy > 0) == (alpha < tr.alpha_c)
    assert r.generalization_error == pytest.approx(math.acos(r.R) / math.pi, rel=1e-13)


def test_unconverged_residual_raises(monkeypatch):
    monkeypatch.setattr(_common, "_RES_TOL", 0.0)  # no residual can pass: must raise, never return
    with pytest.raises(ConvergenceError, match="residual"):
        P.spherical_storage(1.0)
    with pytest.raises(ConvergenceError, match="residual"):
        P.binary_teacher_student(1.0, "poor")


def test_teacher_student_output_series_at_small_R():
    """Below R = 1e-8 the output averages come from their series in R: equal to the
    quadrature at the switch, equal to mpmath at R = 1e-9, finite (no 0/0) down to R = 0."""
    import math

    import mpmath as mp

    from statmech.perceptron import spherical_teacher_student_hessian
    from statmech.perceptron._quadrature import _ts_out, _ts_out_series

    for x, y in zip(_ts_out_series(1.001e-8), _ts_out(1.001e-8)):     # at the switch, same R
        assert x == pytest.approx(y, rel=2e-12, abs=1e-15)
    mp.mp.dps = 40
    R = mp.mpf("1e-9")
    a = mp.sqrt(R / (1 - R))

    def gi(R_):
        b = mp.sqrt(R_ / (1 - R_))
        return mp.quad(lambda t: mp.npdf(t) * 2 * mp.npdf(b * t) ** 2 / mp.ncdf(b * t), [-mp.inf, 0, mp.inf])

    e = _ts_out(float(R))
    assert e[1] == pytest.approx(float(gi(R)), rel=1e-14)
    assert e[2] == pytest.approx(float(mp.diff(gi, R)), rel=1e-9)
    hl = mp.quad(lambda t: mp.npdf(t) * 2 * mp.ncdf(a * t) * mp.log(mp.ncdf(a * t)), [-mp.inf, 0, mp.inf])
    assert e[0] == pytest.approx(float(hl), rel=1e-14)
    for R0 in (0.0, 2e-313, 1e-300):
        assert all(math.isfinite(v) for v in _ts_out(R0))
    assert np.all(np.isfinite(spherical_teacher_student_hessian([2e-313], 0.0)))
