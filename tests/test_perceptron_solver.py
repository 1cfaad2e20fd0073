"""The perceptron's numba solves: agreement with the Python-level algorithm they replace, the
vectorized call (one numba call, warm-started along the grid) against point-by-point solves,
the failure contract, and properties over the documented domains."""
import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy import optimize

from statmech import ConvergenceError
from statmech import perceptron as P
from statmech.gaussian import inv_mills
from statmech.perceptron import _common, _quadrature
from statmech.perceptron._branches_nb import BS, BTS_ENT, BTS_SLOPE, SS
from statmech.perceptron._equations import _K
from statmech.perceptron._newton_nb import NST
from statmech.perceptron._quadrature import _table
from statmech.perceptron.binary_teacher_student_rs import _bts_transition
from statmech.saddle import newton


# --------------------------------------------------------------------------- Ising channels vs mpmath
def _mp_E(f, breaks):
    g = lambda z: f(z) * mp.exp(-z * z / 2) / mp.sqrt(2 * mp.pi)
    return mp.quad(g, [-mp.inf] + sorted(breaks) + [mp.inf])


@pytest.mark.parametrize("qh", [1e-8, 0.2, 0.45, 0.7, 3.0, 16.0, 40.0, 1e4])
def test_ising_channels_vs_mpmath(qh):
    """Every average of the two Ising entropic channels (written through one exponential)
    against mpmath, from q_hat -> 0 (relative precision of tanh^2 ~ q_hat z^2) to large q_hat."""
    with mp.workdps(30):
        Q = mp.mpf(qh)
        s = mp.sqrt(Q)
        sech2 = lambda b: 1 / mp.cosh(b) ** 2
        # storage: b = sqrt(q_hat) z
        b1 = lambda z: s * z
        ref = [_mp_E(f, [-1 / s, 0, 1 / s]) for f in (
            lambda z: mp.log(2 * mp.cosh(b1(z))), lambda z: sech2(b1(z)),
            lambda z: -sech2(b1(z)) * mp.tanh(b1(z)) * z / s, lambda z: sech2(b1(z)) ** 2,
            lambda z: mp.tanh(b1(z)) ** 2)]
        got = _quadrature._is_in(qh)
        for i, (g, r) in enumerate(zip(got, ref)):
            assert g == pytest.approx(float(r), rel=2e-13, abs=1e-300), ("is_in", i)
        if qh > 100:
            return  # the teacher-student rule is documented to R_hat = 100
        # teacher-student: b = sqrt(q_hat) z + q_hat, b' = db/dq_hat = z/(2 sqrt(q_hat)) + 1
        b2 = lambda z: s * z + Q
        d1 = lambda z: z / (2 * s) + 1
        ref = [_mp_E(f, [-s - 1 / s, -s, -s + 1 / s]) for f in (
            lambda z: mp.log(2 * mp.cosh(b2(z))), lambda z: 1 - mp.tanh(b2(z)), lambda z: sech2(b2(z)),
            lambda z: -sech2(b2(z)) * d1(z), lambda z: -2 * sech2(b2(z)) * mp.tanh(b2(z)) * d1(z),
            lambda z: sech2(b2(z)) ** 2, lambda z: mp.tanh(b2(z)) ** 2)]
        got = _quadrature._ts_in(qh)
        for i, (g, r) in enumerate(zip(got, ref)):
            assert g == pytest.approx(float(r), rel=2e-13, abs=1e-300), ("ts_in", i)


# --------------------------------------------------------------------------- the previous Python-level solves
def _expit(y):
    return 1.0 / (1.0 + math.exp(-y)) if y >= 0 else math.exp(y) / (1.0 + math.exp(y))


def _logit(q):
    return math.log(q) - math.log1p(-q)


def _newton_y(fd, y0, hi=math.inf):
    """The former ``_common._solve_y`` without its fallback: statmech.saddle.newton on the
    branch map, derivative from the same evaluation."""
    info = newton(lambda y: np.array([fd(y[0])[0]]), [y0], lambda y: np.array([[fd(y[0])[1]]]),
                  tol=1e-14, xtol=1e-14, maxiter=40, in_domain=None if hi == math.inf else (lambda y: y[0] < hi))
    return float(info.x[0]), info.iterations


def ref_spherical_storage(alpha, kappa):
    la = math.log(alpha)

    def fd(y):
        q, p = _expit(y), _expit(-y)
        e = _quadrature._st_out(q, kappa, p)
        return (y - math.log(e[1])) - la, 1.0 - e[2] / e[1] * q * p

    ac = P.gardner_capacity(kappa)
    y, it = _newton_y(fd, min(la + 2 * math.log(float(inv_mills(kappa))), -math.log1p(-alpha / ac)))
    q, p = _expit(y), _expit(-y)
    e = _quadrature._st_out(q, kappa, p)
    return {"q": q, "entropy": 0.5 * math.log(p) + 0.5 * q / p + alpha * e[0], "replicon": 1 - alpha * e[3],
            "residual": abs(q / p - alpha * e[1]) / max(1.0, q / p)}, it


def ref_spherical_teacher_student(alpha):
    la = math.log(alpha)

    def fd(y):
        R, p = _expit(y), _expit(-y)
        e = _quadrature._ts_out(R, p)
        return math.log(R) - math.log(e[1]) - la, p - e[2] / e[1] * R * p

    y0 = (_logit(2 * alpha / math.pi) if alpha < 0.5 else
          2 * math.log(alpha) - math.log(0.5 * (math.pi * 0.6246582) ** 2) if alpha > 20 else
          _logit(min(0.95, 2 * alpha / math.pi / (1 + 2 * alpha / math.pi))))
    y, it = _newton_y(fd, y0)
    R, p = _expit(y), _expit(-y)
    e = _quadrature._ts_out(R, p)
    return {"R": R, "entropy": 0.5 * math.log(p) + 0.5 * R + alpha * e[0], "replicon": 1 - alpha * e[3],
            "residual": abs(R - alpha * e[1])}, it


def _bin_branch(y, kappa):
    qh = math.exp(y)
    ei = _quadrature._is_in(qh)
    q, p = ei[4], ei[1]
    e = _quadrature._st_out(q, kappa, p)
    return qh * p / e[1], qh, q, p, e, ei


def ref_binary_storage(alpha, kappa):
    la = math.log(alpha)

    def fd(y):
        a, qh, q, p, e, ei = _bin_branch(y, kappa)
        return math.log(a) - la, 1.0 + qh * ei[2] * (1.0 / p + e[2] / e[1])

    y, it = _newton_y(fd, la + 2 * math.log(float(inv_mills(kappa))))
    a, qh, q, p, e, ei = _bin_branch(y, kappa)
    return {"q": q, "q_hat": qh, "entropy": -0.5 * qh * p + ei[0] + a * e[0],
            "replicon": 1.0 - a * e[3] * ei[3] / p ** 2}, it


def _bts_branch(y):
    rh = math.exp(y)
    ei = _quadrature._ts_in(rh)
    p = ei[2]
    R = ei[6] if ei[6] < 0.5 else 1.0 - p
    e = _quadrature._ts_out(R, p)
    return rh * p / e[1], rh, R, p, e, ei


def ref_binary_teacher_student_poor(alpha):
    la = math.log(alpha)
    ysp = _bts_transition()[1]

    def fd(y):
        a, rh, R, p, e, ei = _bts_branch(y)
        D = ei[4]
        return math.log(a) - la, 1.0 + rh * D / p + rh * e[2] * D / e[1]

    y, it = _newton_y(fd, min(la, ysp - 0.7), hi=ysp)
    a, rh, R, p, e, ei = _bts_branch(y)
    return {"R": R, "R_hat": rh, "entropy": -0.5 * rh * (1 + R) + ei[0] + alpha * e[0],
            "replicon": 1.0 - alpha * e[3] * ei[5] / p ** 2}, it


def _agree(res, ref, it_ref, same_start=True):
    for k, v in ref.items():
        if k == "residual":
            assert res.residual < 1e-13 and v < 1e-13
        else:
            assert getattr(res, k) == pytest.approx(v, rel=1e-13, abs=1e-15), k
    # the numba Newton is the same iteration; it may stop one step earlier, where the
    # remaining correction is already at round-off (instead of taking and checking it)
    assert it_ref - 1 <= res.iterations <= it_ref if same_start else res.iterations <= it_ref


@pytest.mark.parametrize("alpha,kappa", [(0.3, 0.0), (1.0, 0.0), (1.0, 0.2), (1.9, 0.0), (3.0, -0.8), (0.15, 2.0)])
def test_spherical_storage_agrees_with_python_newton(alpha, kappa):
    _agree(P.spherical_storage(alpha, kappa), *ref_spherical_storage(alpha, kappa))


@pytest.mark.parametrize("alpha", [0.01, 1.0, 5.0, 30.0, 1e3])
def test_spherical_teacher_student_agrees_with_python_newton(alpha):
    # started from the tabulated branch (not the cold start of the reference): fewer steps
    _agree(P.spherical_teacher_student(alpha), *ref_spherical_teacher_student(alpha), same_start=False)


@pytest.mark.parametrize("alpha,kappa", [(0.1, 0.0), (0.6, 0.0), (1.2, 0.0), (0.3, 0.8)])
def test_binary_storage_agrees_with_python_newton(alpha, kappa):
    _agree(P.binary_storage(alpha, kappa), *ref_binary_storage(alpha, kappa))


@pytest.mark.parametrize("alpha", [0.05, 1.0, 1.4])
def test_binary_teacher_student_agrees_with_python_newton(alpha):
    # started from the tabulated poor branch (not the former cold start): fewer steps
    _agree(P.binary_teacher_student(alpha, "poor"), *ref_binary_teacher_student_poor(alpha), same_start=False)


def test_brent_is_scipy_brentq():
    """The numba Brent (transition roots) takes scipy's iterates: same root, same count."""
    tab, off = _table()
    mod = _K.load()
    ysp = _bts_transition()[1]
    st_ = np.zeros(NST)

    def ent(y):
        a, rh, R, p, e, ei = _bts_branch(y)
        return -0.5 * rh * (1 + R) + ei[0] + a * e[0]

    for model, f, bracket in ((BTS_ENT, ent, (-8.0, ysp)),
                              (BTS_ENT, ent, (-3.0, ysp)),
                              (BTS_SLOPE, lambda y: mod._branch(BTS_SLOPE, y, 0.0, 0.0, tab, off, False, st_, 0)[0],
                               (ysp - 0.2, ysp + 0.05))):
        status, root, r, it = mod._brentq(model, 1.0, *bracket, 0.0, 0.0, tab, off, 200, st_)
        ref, info = optimize.brentq(f, *bracket, xtol=1e-15, full_output=True)
        assert status == 0 and root == ref and it == info.iterations


@pytest.mark.parametrize("model, alpha, y0", [(SS, 1.0, 3.0), (SS, 0.2, -6.0), (BS, 0.6, 4.0)])
def test_bracket_expansion_is_common_bracket_solve(model, alpha, y0):
    """The numba bracketed fallback (expansion from y0, then Brent) takes the iterates of
    ``_common._bracket_solve`` on the same branch function: same root, same count."""
    tab, off = _table()
    mod = _K.load()
    st_ = np.zeros(NST)
    la = math.log(alpha)
    status, root, r, it = mod._expand(model, 1.0, y0, la, 0.0, tab, off, 200, st_)
    ref, it_ref = _common._bracket_solve(lambda y: mod._f(model, 1.0, y, la, 0.0, tab, off, st_), y0)
    assert status == 0 and root == ref and it == it_ref and r < 1e-13


# --------------------------------------------------------------------------- vectorized = point by point
def _count_calls(monkeypatch, name):
    calls = []
    entry = getattr(_K, name)

    def counted(*args):
        calls.append(args[0].shape[0])
        return entry(*args)
    monkeypatch.setattr(_K, name, counted)
    return calls


def test_spherical_storage_vectorized_is_one_call_and_equals_points(monkeypatch):
    alphas = np.linspace(0.0, 0.99, 400) * P.gardner_capacity(0.3)
    calls = _count_calls(monkeypatch, "ss_solve")
    rv = P.spherical_storage(alphas, 0.3)
    assert calls == [400]
    assert rv.q.shape == (400,) and rv.hessian_eigenvalues.shape == (400, 1) and rv.iterations.dtype.kind == "i"
    # the grid is continued: far fewer Newton steps than from the cold starts
    cold = [P.spherical_storage(float(a), 0.3).iterations for a in alphas[1:]]
    assert rv.iterations[1:].mean() < 0.5 * np.mean(cold)
    for i in range(0, 400, 13):
        rs = P.spherical_storage(float(alphas[i]), 0.3)
        assert rv.q[i] == pytest.approx(rs.q, rel=1e-13, abs=1e-300)
        assert rv.entropy[i] == pytest.approx(rs.entropy, rel=1e-13, abs=1e-15)
        assert rv.replicon[i] == pytest.approx(rs.replicon, rel=1e-12)
        assert rv.hessian_eigenvalues[i, 0] == pytest.approx(rs.hessian_eigenvalues[0], rel=1e-12)
        assert rv.residual[i] < 1e-10 and rv.rs_stable[i] == rs.rs_stable


def test_grid_in_alpha_and_kappa_equals_points():
    a = np.linspace(0.05, 0.9, 30)[:, None]
    k = np.linspace(-1.0, 1.0, 7)[None, :]
    alpha = a * P.gardner_capacity(k)
    rv = P.spherical_storage(alpha, k)
    assert rv.q.shape == (30, 7) and rv.kappa.shape == (30, 7)
    for i, j in [(0, 0), (7, 3), (29, 6), (15, 1)]:
        rs = P.spherical_storage(float(alpha[i, j]), float(k[0, j]))
        assert rv.q[i, j] == pytest.approx(rs.q, rel=1e-13)
        assert rv.entropy[i, j] == pytest.approx(rs.entropy, rel=1e-13, abs=1e-15)
    rb = P.binary_storage(0.9 * alpha[:, :3] / np.pi, k[:, :3])
    for i, j in [(0, 0), (20, 2)]:
        rs = P.binary_storage(float(0.9 * alpha[i, j] / np.pi), float(k[0, j]))
        assert rb.q_hat[i, j] == pytest.approx(rs.q_hat, rel=1e-12)
        assert rb.entropy[i, j] == pytest.approx(rs.entropy, rel=1e-13, abs=1e-15)
        np.testing.assert_allclose(rb.hessian_eigenvalues[i, j], rs.hessian_eigenvalues, rtol=1e-11)


def test_teacher_student_vectorized_equals_points(monkeypatch):
    alphas = np.concatenate([[0.0, 1e-120], np.geomspace(1e-3, 1e4, 300)])
    calls = _count_calls(monkeypatch, "sts_solve")
    rv = P.spherical_teacher_student(alphas)
    assert calls == [302]
    for i in [0, 1, 2, 50, 151, 250, 301]:
        rs = P.spherical_teacher_student(float(alphas[i]))
        assert rv.R[i] == pytest.approx(rs.R, rel=1e-13, abs=1e-300)
        assert rv.generalization_error[i] == pytest.approx(rs.generalization_error, rel=1e-12)
        assert rv.entropy[i] == pytest.approx(rs.entropy, rel=1e-12, abs=1e-15)
    tr = P.binary_teacher_student_transition()
    ab = np.linspace(0.0, tr.alpha_spinodal, 40)
    calls = _count_calls(monkeypatch, "bts_solve")
    rb = P.binary_teacher_student(ab, "poor")
    assert calls == [39]  # alpha = 0 is the closed form
    for i in [0, 1, 20, 39]:
        rs = P.binary_teacher_student(float(ab[i]), "poor")
        assert rb.R[i] == pytest.approx(rs.R, rel=1e-13) and rb.entropy[i] == pytest.approx(rs.entropy, rel=1e-13)


# --------------------------------------------------------------------------- failure contract
def test_forced_failure_raises_convergence_error_with_diagnostics(monkeypatch):
    # no Newton iteration and no Brent iteration: every solve must fail (the binary
    # teacher-student start from its tabulated branch is good enough for one iteration)
    monkeypatch.setattr(_common, "_NEWTON_MAXITER", 0)
    monkeypatch.setattr(_common, "_BRENT_MAXITER", 0)
    for call, params in [(lambda: P.spherical_storage(1.0, 0.2), {"alpha": 1.0, "kappa": 0.2}),
                         (lambda: P.spherical_storage(np.array([0.5, 1.0])), {"alpha": 0.5, "kappa": 0.0}),
                         (lambda: P.spherical_teacher_student(2.0), {"alpha": 2.0}),
                         (lambda: P.binary_storage(0.6), {"alpha": 0.6, "kappa": 0.0}),
                         (lambda: P.binary_teacher_student(1.0, "poor"), {"alpha": 1.0}),
                         (lambda: P.binary_capacity(0.3), {"kappa": 0.3})]:
        with pytest.raises(ConvergenceError) as exc:
            call()
        e = exc.value
        assert e.x is not None and e.x.shape == (1,) and np.isfinite(e.x[0])
        assert e.iterations >= 0 and e.residual is not None
        assert e.diagnostics == pytest.approx(params)
    _bts_transition.cache_clear()
    try:
        with pytest.raises(ConvergenceError, match="Brent"):
            P.binary_teacher_student_transition()
    finally:
        monkeypatch.undo()
        _bts_transition.cache_clear()
    assert P.binary_teacher_student_transition().alpha_c == pytest.approx(1.2446839898506925, rel=1e-14)


def test_newton_failure_falls_back_to_brent(monkeypatch):
    ref = [P.spherical_storage(1.0), P.binary_storage(0.6), P.binary_teacher_student(1.0, "poor")]
    monkeypatch.setattr(_common, "_NEWTON_MAXITER", 1)
    got = [P.spherical_storage(1.0), P.binary_storage(0.6), P.binary_teacher_student(1.0, "poor")]
    for r, g in zip(ref, got):
        assert g.converged and g.residual < 1e-10
        for k in r.order_params:
            assert getattr(g, k) == pytest.approx(getattr(r, k), rel=1e-13)
        assert g.entropy == pytest.approx(r.entropy, rel=1e-13, abs=1e-15)
    assert P.binary_capacity(0.0) == pytest.approx(0.8330785997395783, rel=1e-13)


def test_unbracketable_root_raises_with_diagnostics():
    # alpha this small on the unstable branch needs R_hat beyond the resolvable range
    with pytest.raises(ConvergenceError, match="bracket") as exc:
        P.binary_teacher_student(1e-200, "unstable")
    assert exc.value.diagnostics == {"alpha": 1e-200} and exc.value.x[0] > math.log(700.0)


def test_residual_failure_names_the_point(monkeypatch):
    monkeypatch.setattr(_common, "_RES_TOL", 0.0)
    with pytest.raises(ConvergenceError, match="residual") as exc:
        P.spherical_storage(np.array([0.0, 0.7, 1.2]))
    assert exc.value.diagnostics["alpha"] == 0.0  # the first point in order (residual 0 is not < 0)
    with pytest.raises(ConvergenceError, match="residual") as exc:
        P.binary_storage(np.array([0.3, 0.6, 0.9]))
    assert {"alpha", "kappa", "q", "q_hat"} <= set(exc.value.diagnostics)


# --------------------------------------------------------------------------- properties over the domains
def _finite(res, names):
    for n in names:
        v = np.asarray(getattr(res, n), dtype=float)
        assert np.all(np.isfinite(v)), n
    assert np.all(res.converged) and np.all(np.asarray(res.residual) < 1e-10)


@settings(max_examples=40, deadline=None)
@given(alpha=st.floats(0.0, 1e4), kappa=st.floats(-5.0, 5.0))
def test_spherical_storage_finite_or_error(alpha, kappa):
    ac = P.gardner_capacity(kappa)
    if alpha >= ac:
        with pytest.raises(ValueError, match="alpha"):
            P.spherical_storage(alpha, kappa)
        return
    r = P.spherical_storage(alpha, kappa)
    _finite(r, ["q", "entropy", "replicon", "hessian_eigenvalues"])
    assert 0.0 <= r.q < 1.0 and r.entropy <= 0.0


@settings(max_examples=40, deadline=None)
@given(alpha=st.floats(0.0, 1e4))
def test_spherical_teacher_student_finite(alpha):
    r = P.spherical_teacher_student(alpha)
    _finite(r, ["R", "entropy", "generalization_error", "replicon", "hessian_eigenvalues"])
    assert 0.0 <= r.R < 1.0 and 0.0 < r.generalization_error <= 0.5


@settings(max_examples=40, deadline=None)
@given(alpha=st.floats(0.0, 1e4), kappa=st.floats(-5.0, 5.0))
def test_binary_storage_finite_or_error(alpha, kappa):
    agd = P.binary_capacity(kappa, "gardner_derrida")
    if alpha >= agd:
        with pytest.raises(ValueError, match="alpha"):
            P.binary_storage(alpha, kappa)
        return
    r = P.binary_storage(alpha, kappa)
    _finite(r, ["q", "q_hat", "entropy", "replicon", "hessian_eigenvalues"])
    assert 0.0 <= r.q < 1.0 and r.entropy <= math.log(2.0) + 1e-15


@settings(max_examples=30, deadline=None)
@given(alpha=st.floats(0.0, 1e4))
def test_binary_teacher_student_finite_or_error(alpha):
    r = P.binary_teacher_student(alpha)
    assert np.isfinite(r.entropy) and 0.0 <= r.R <= 1.0
    tr = P.binary_teacher_student_transition()
    if alpha > tr.alpha_spinodal:
        with pytest.raises(ValueError, match="alpha"):
            P.binary_teacher_student(alpha, "poor")
    else:
        _finite(P.binary_teacher_student(alpha, "poor"), ["R", "R_hat", "entropy", "replicon"])


@settings(max_examples=15, deadline=None)
@given(alphas=st.lists(st.floats(0.0, 0.99), min_size=2, max_size=30), kappa=st.floats(-5.0, 5.0))
def test_vectorized_random_points_equal_scalar(alphas, kappa):
    """Any order of points (not a grid): the continuation must not change the solutions."""
    a = np.array(alphas) * P.gardner_capacity(kappa)
    rv = P.spherical_storage(a, kappa)
    for i in range(len(a)):
        rs = P.spherical_storage(float(a[i]), kappa)
        assert rv.q[i] == pytest.approx(rs.q, rel=1e-12, abs=1e-300)
        assert rv.entropy[i] == pytest.approx(rs.entropy, rel=1e-12, abs=1e-14)
