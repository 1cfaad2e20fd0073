"""Continuation engine: textbook bifurcations exact to 1e-10, coexistence, deflation,
two-parameter lines, and (when the models exist) the soft-committee and perceptron
transitions found from the free energy alone."""
import math

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings, strategies as st

from statmech import ConvergenceError
from statmech.continuation import (KINDS, Problem, analyze, coexistence, continue_point, curve_intersections,
                                   deflate, switch_branch, trace)

x, p, q = sp.symbols("x p q")
FOLD_P = 2 / (3 * math.sqrt(3))


def cubic_residual():
    """F = p - x^3 + x, analytic Jacobian (two folds at p = -+2/(3 sqrt 3))."""
    return Problem(residual=lambda x, p: np.array([p - x[0] ** 3 + x[0]]),
                   jacobian=lambda x, p: np.array([[1 - 3 * x[0] ** 2]]),
                   dFdp=lambda x, p: np.array([1.0]), x0=[-1.5], p0=-1.0)


# ------------------------------------------------------------------ textbook cases
def test_two_folds_exact_and_stability():
    br = trace(cubic_residual(), p_min=-1.0, p_max=1.0, ds=0.05)
    assert br.complete and br.status == ("p_max",)
    folds = br.points("fold")
    assert len(folds) == 2
    upper, lower = sorted(folds, key=lambda s: s.p)[::-1]
    assert upper.p == pytest.approx(FOLD_P, abs=1e-12) and upper.x[0] == pytest.approx(-1 / math.sqrt(3), abs=1e-7)
    assert lower.p == pytest.approx(-FOLD_P, abs=1e-12) and lower.x[0] == pytest.approx(1 / math.sqrt(3), abs=1e-7)
    # dx/dt = F: outer sheets stable, middle sheet unstable
    assert upper.stable_before and not upper.stable_after
    assert not lower.stable_before and lower.stable_after
    away = np.abs(np.abs(br.x[:, 0]) - 1 / math.sqrt(3)) > 1e-6  # the margin is 0 at the folds
    assert np.all(br.stable[away] == (np.abs(br.x[away, 0]) > 1 / math.sqrt(3)))
    changes = br.points("stability_change")
    assert len(changes) == 2 and all(c.coincides == "fold" for c in changes)
    # every point of the branch solves F = 0, the branch ends exactly on the bounds
    assert np.max(np.abs(br.p - br.x[:, 0] ** 3 + br.x[:, 0])) < 1e-10
    assert br.p[0] == -1.0 and br.p[-1] == 1.0
    assert np.all(np.diff(br.s) > 0)


def test_pitchfork_exact_and_switch():
    prob = Problem.from_sympy([p * x - x ** 3], [x], p, kind="residual", x0=[0.0], p0=-1.0, tol=1e-12)
    br = trace(prob, -1.0, 1.0, ds=0.05)
    bps = br.points("branch_point")
    assert len(bps) == 1 and abs(bps[0].p) < 1e-13 and abs(bps[0].x[0]) < 1e-13
    assert bps[0].stable_before and not bps[0].stable_after
    assert not br.points("fold")
    other = switch_branch(prob, bps[0], -1.0, 1.0, ds=0.05)
    assert other.status == ("p_max", "p_max")
    xs = other.x[:, 0]
    assert np.max(np.abs(xs ** 2 - other.p)) < 1e-10 and xs.min() == pytest.approx(-1, abs=1e-10) \
        and xs.max() == pytest.approx(1, abs=1e-10)
    # supercritical: the bifurcated branches are stable
    assert np.all(other.stable[np.abs(xs) > 1e-3])


def test_transcritical_exact_and_switch():
    prob = Problem.from_sympy([p * x - x ** 2], [x], p, kind="residual", x0=[0.0], p0=-1.0)
    br = trace(prob, -1.0, 1.0, ds=0.05)
    (bp,) = br.points("branch_point")
    assert abs(bp.p) < 1e-13
    other = switch_branch(prob, bp, -1.0, 1.0, ds=0.05)
    assert other.p[0] == -1.0 and other.p[-1] == 1.0
    assert np.max(np.abs(other.x[:, 0] - other.p)) < 1e-10
    # exchange of stability: x = p is stable for p > 0
    assert np.all(other.stable[other.p > 1e-3]) and not np.any(other.stable[other.p < -1e-3])


def bratu(N):
    h = 1.0 / (N + 1)
    off = np.ones(N - 1) / h ** 2

    def F(u, lam):
        up = np.concatenate([[0.0], u, [0.0]])
        return (up[:-2] - 2 * up[1:-1] + up[2:]) / h ** 2 + lam * np.exp(u)

    def J(u, lam):
        return np.diag(-2 / h ** 2 + lam * np.exp(u)) + np.diag(off, 1) + np.diag(off, -1)

    return Problem(residual=F, jacobian=J, dFdp=lambda u, lam: np.exp(u), x0=np.zeros(N), p0=0.0,
                   weights=np.r_[np.ones(N) / N, 1.0], tol=1e-9)


def test_bratu_fold_converges_with_refinement():
    from threadpoolctl import threadpool_limits
    lam = {}
    with threadpool_limits(1):
        for N in (31, 63, 127):
            br = trace(bratu(N), 0.0, 4.0, ds=0.1, direction=1, s_max=4.5)
            (fold,) = br.points("fold")
            lam[N] = fold.p
            assert fold.residual < 1e-9
    # second-order discretization: lambda*(h) = lambda* + c2 h^2 + c4 h^4 + ...; h halves exactly
    r1 = (4 * lam[63] - lam[31]) / 3
    r2 = (4 * lam[127] - lam[63]) / 3
    lam_star = (16 * r2 - r1) / 15
    assert lam_star == pytest.approx(3.513830719125162, abs=1e-10)
    assert lam[31] < lam[63] < lam[127] < 3.513830719


def test_closed_loop_and_hard_cap():
    prob = Problem(residual=lambda x, p: np.array([x[0] ** 2 + p ** 2 - 1.0]), x0=[1.0], p0=0.0)
    br = trace(prob, -2, 2, ds=0.1, direction=1)
    assert br.status == ("closed_loop",) and br.complete
    folds = sorted(br.points("fold"), key=lambda s: s.p)
    assert len(folds) == 2
    assert folds[0].p == pytest.approx(-1, abs=1e-12) and folds[1].p == pytest.approx(1, abs=1e-12)
    capped = trace(prob, -2, 2, ds=0.01, direction=1, max_steps=7, ds_max=0.01)
    assert capped.status == ("max_steps",) and capped.steps == 7 and not capped.complete


def test_no_branch_jumping():
    # two parallel branches x = p^2 and x = p^2 + 0.05: large steps must not jump
    d = 0.05
    prob = Problem(residual=lambda x, p: np.array([(x[0] - p ** 2) * (x[0] - p ** 2 - d)]), x0=[0.0], p0=0.0)
    br = trace(prob, -2, 2, ds=0.5, ds_max=2.0)
    assert np.max(np.abs(br.x[:, 0] - br.p ** 2)) < 1e-8  # tol / |F_x| = 1e-10 / 0.05
    assert br.p.min() == -2 and br.p.max() == 2


def test_events_located():
    prob = cubic_residual()
    prob = Problem(residual=prob.residual, jacobian=prob.jacobian, x0=[-1.5], p0=-1.0,
                   events={"x=1.2": lambda x, p: x[0] - 1.2})
    br = trace(prob, -1, 1, ds=0.05)
    (ev,) = br.points("event")
    assert ev.name == "x=1.2" and ev.p == pytest.approx(1.2 ** 3 - 1.2, abs=1e-12)


# ------------------------------------------------------------------ free-energy form, coexistence
def quartic():
    return Problem.from_sympy(x ** 4 / 4 - x ** 2 / 2 - p * x, [x], p, x0=[-1.5], p0=-1.0)


def test_free_energy_form_and_maxwell_coexistence():
    br = trace(quartic(), -1, 1, ds=0.05)
    folds = sorted(br.points("fold"), key=lambda s: s.p)
    assert [f.p for f in folds] == pytest.approx([-FOLD_P, FOLD_P], abs=1e-12)
    # minima are stable: the outer sheets
    away = np.abs(np.abs(br.x[:, 0]) - 1 / math.sqrt(3)) > 1e-6
    assert np.all(br.stable[away] == (np.abs(br.x[away, 0]) > 1 / math.sqrt(3)))
    (c,) = coexistence(br)
    assert abs(c.p) < 1e-12 and sorted([c.x1[0], c.x2[0]]) == pytest.approx([-1, 1], abs=1e-12)
    assert c.f == pytest.approx(-0.25, abs=1e-14) and c.stable1 and c.stable2


def test_free_energy_finite_difference_fallback():
    prob = Problem(free_energy=lambda x, p: x[0] ** 4 / 4 - x[0] ** 2 / 2 - p * x[0], x0=[-1.5], p0=-1.0)
    br = trace(prob, -1, 1, ds=0.05)
    folds = sorted(br.points("fold"), key=lambda s: s.p)
    assert [f.p for f in folds] == pytest.approx([-FOLD_P, FOLD_P], abs=1e-7)


def test_first_order_transcritical_analyze():
    """f = -p x^2/2 - x^3/3 + x^4/4: transcritical point at p = 0, spinodal (fold) at p = -1/4,
    coexistence of x = 0 and x = 2/3 at p = -2/9 (all exact)."""
    prob = Problem.from_sympy(-p * x ** 2 / 2 - x ** 3 / 3 + x ** 4 / 4, [x], p, x0=[0.0], p0=-1.0)
    an = analyze(prob, -1.0, 1.0, ds=0.05)
    assert len(an.branches) == 2
    folds = an.points("fold")
    assert len(folds) == 1 and folds[0].p == pytest.approx(-0.25, abs=1e-13) and folds[0].x[0] == pytest.approx(0.5, abs=1e-7)
    bps = an.points("branch_point")
    assert {b.branch for b in bps} == {0, 1} and all(abs(b.p) < 1e-12 for b in bps)
    (c,) = an.coexistence
    assert c.p == pytest.approx(-2 / 9, abs=1e-13)
    assert sorted([c.x1[0], c.x2[0]]) == pytest.approx([0.0, 2 / 3], abs=1e-12)
    assert c.stable1 and c.stable2 and c.branches == (0, 1)
    # where the x = 0 minimum loses stability: the stability change at the branch point
    sc = [s for s in an.points("stability_change", branch=0)]
    assert len(sc) == 1 and sc[0].coincides == "branch_point" and abs(sc[0].p) < 1e-12


def test_deflation_finds_all_roots():
    sols = deflate(quartic(), 0.0, starts=[[0.3]])
    assert sorted(s.x for s in sols) == pytest.approx([-1.0, 0.0, 1.0], abs=1e-12)
    stable = {round(s.x, 6): s.rs_stable for s in sols}
    assert stable == {-1.0: True, 0.0: False, 1.0: True}
    assert sols[0].free_energy == pytest.approx(-0.25, abs=1e-14)


def test_analyze_s_curve_from_one_start():
    an = analyze(quartic(), -1, 1, ds=0.05)
    assert len(an.branches) == 1
    assert len(an.points("fold")) == 2 and len(an.coexistence) == 1


# ------------------------------------------------------------------ two-parameter lines
def tricritical():
    """f = -p x^2/2 - q x^3/3 + x^4/4: BP line p = 0, spinodal p = -q^2/4, coexistence p = -2 q^2/9;
    all three meet at q = 0 (first order turning second order)."""
    return Problem.from_sympy(-p * x ** 2 / 2 - q * x ** 3 / 3 + x ** 4 / 4, [x], p, params=[q],
                              param_values={"q": 1.0}, x0=[0.0], p0=-1.0, tol=1e-12)


def test_two_parameter_lines_exact():
    prob = tricritical()
    an = analyze(prob, -1.0, 1.0, ds=0.05)
    (fold,) = an.points("fold")
    bp = an.points("branch_point")[0]
    (c,) = an.coexistence
    qs = dict(q_min=0.2, q_max=1.5, ds=0.05)
    fl = continue_point(prob, fold, "q", **qs)
    bl = continue_point(prob, bp, "q", **qs)
    cl = continue_point(prob, c, "q", **qs)
    for line in (fl, bl, cl):
        assert line.q.min() == pytest.approx(0.2) and line.q.max() == pytest.approx(1.5)
    assert np.max(np.abs(fl.p + fl.q ** 2 / 4)) < 1e-10
    assert np.max(np.abs(bl.p)) < 1e-10 and np.max(np.abs(bl.b)) < 1e-10
    assert np.max(np.abs(cl.p + 2 * cl.q ** 2 / 9)) < 1e-10
    assert cl.p_at(0.7) == pytest.approx(-2 * 0.49 / 9, abs=1e-11)


def test_curve_intersections():
    # spinodal p = -q^2/4 of  f = -p x^2/2 - q x^3/3 + x^4/4  against the line p = -1/8 + 0*q
    # given as the fold of a second problem g = x^3/3 - (p + 1/8 + 0 q) x (fold at p = -1/8 for all q)
    prob = tricritical()
    an = analyze(prob, -1.0, 1.0, ds=0.05)
    fl = continue_point(prob, an.points("fold")[0], "q", 0.2, 1.5, ds=0.05)
    other = Problem.from_sympy(x ** 3 / 3 - (p + sp.Rational(1, 8) + 0 * q) * x, [x], p, params=[q],
                               param_values={"q": 1.0}, x0=[1.0], p0=0.5)
    b = trace(other, -1, 1, ds=0.05)
    ol = continue_point(other, b.points("fold")[0], "q", 0.2, 1.5, ds=0.05)
    (hit,) = curve_intersections(fl, ol)
    assert hit[0] == pytest.approx(math.sqrt(0.5), abs=1e-10) and hit[1] == pytest.approx(-0.125, abs=1e-10)


# ------------------------------------------------------------------ properties, errors
@settings(max_examples=15, deadline=None)
@given(a=st.floats(0.3, 3.0), c=st.floats(-2.0, 2.0))
def test_folds_solve_extended_system(a, c):
    # F = p + a x - x^3 + c: folds at x = +-sqrt(a/3), p = -c -+ (2a/3) sqrt(a/3)
    prob = Problem(residual=lambda x, p: np.array([p + a * x[0] - x[0] ** 3 + c]),
                   jacobian=lambda x, p: np.array([[a - 3 * x[0] ** 2]]), x0=[-3.0], p0=-c - 2 * a - 5)
    br = trace(prob, -c - 2 * a - 5, -c + 2 * a + 5, ds=0.005, ds_max=0.01)
    folds = sorted(br.points("fold"), key=lambda s: s.p)
    r = math.sqrt(a / 3)
    assert len(folds) == 2
    assert folds[0].p == pytest.approx(-c - 2 * a / 3 * r, abs=1e-10)
    assert folds[1].p == pytest.approx(-c + 2 * a / 3 * r, abs=1e-10)


def test_bad_arguments():
    prob = cubic_residual()
    with pytest.raises(ValueError, match="p_min"):
        trace(prob, 1.0, -1.0)
    with pytest.raises(ValueError, match="ds"):
        trace(prob, -1.0, 1.0, ds=0.0)
    with pytest.raises(ValueError, match="p0"):
        trace(prob, 0.0, 1.0)
    with pytest.raises(ValueError, match="x0"):
        Problem(residual=prob.residual, x0=[np.nan], p0=0.0)
    with pytest.raises(ValueError, match="sense"):
        Problem(free_energy=lambda x, p: 0.0, x0=[0.0], p0=0.0, sense="minimum")
    with pytest.raises(ValueError, match="residual"):
        Problem(x0=[0.0], p0=0.0)
    with pytest.raises(ValueError, match="problem"):
        trace("not a problem")
    with pytest.raises(ValueError, match="detect"):
        trace(prob, -1, 1, detect=("cusp",))
    assert set(KINDS) == {"fold", "branch_point", "stability_change", "event"}


def test_start_not_converging_raises():
    prob = Problem(residual=lambda x, p: np.array([x[0] ** 2 + 1.0 + p * 0]), x0=[0.5], p0=0.0)
    with pytest.raises(ConvergenceError):
        trace(prob, -1, 1)


# ------------------------------------------------------------------ the models, from their free energy alone
def _standin_scm(activation):
    """Independent high-precision implementation of the SCM free energy (Oostwal, Straat & Biehl,
    arXiv:1910.07476, Eqs. 11 corrected, 12, 19, 20) in sympy, for mpmath root finding of the transition systems."""
    R, S, C, a, K = sp.symbols("R S C alpha K")
    if activation == "erf":
        eg = sp.Rational(1, 3) + (K - 1) / sp.pi * (sp.asin(C / 2) - 2 * sp.asin(S / 2)) - 2 / sp.pi * sp.asin(R / 2)
    else:
        h = lambda u: u / 4 + sp.sqrt(1 - u ** 2) / (2 * sp.pi) + u * sp.asin(u) / (2 * sp.pi)
        eg = (K + K * (K - 1) / (2 * sp.pi) - 2 * K * h(R) + K * (K - 1) * h(C) - 2 * K * (K - 1) * h(S)) / (2 * K)
    s = sp.log(1 + (K - 1) * C - (R + (K - 1) * S) ** 2) / 2 + (K - 1) / 2 * sp.log(1 - C - (R - S) ** 2)
    f = a * K * eg - s
    xs = [R, S, C]
    grad = [sp.diff(f, v) for v in xs]
    hess = [[sp.diff(g, v) for v in xs] for g in grad]
    lam = lambda e: sp.lambdify([R, S, C, a, K], e, "mpmath")
    hl = [[lam(e) for e in row] for row in hess]

    def det(*args):
        import mpmath as mp
        return mp.det(mp.matrix([[e(*args) for e in row] for row in hl]))
    return lam(f), [lam(g) for g in grad], det


def _mp_singular(activation, K, x, p):
    """Solve grad f = 0, det Hess f = 0 (fold or branch point) with mpmath at 30 digits."""
    import mpmath as mp
    mp.mp.dps = 30
    f, grad, det = _standin_scm(activation)
    eqs = lambda R, S, C, a: [g(R, S, C, a, mp.mpf(K)) for g in grad] + [det(R, S, C, a, mp.mpf(K))]
    sol = mp.findroot(eqs, [mp.mpf(v) for v in list(x) + [p]], tol=mp.mpf(10) ** -25)
    return float(sol[3])


def _mp_coexistence(activation, K, x1, x2, p):
    import mpmath as mp
    mp.mp.dps = 30
    f, grad, _ = _standin_scm(activation)
    Km = mp.mpf(K)

    def eqs(R1, S1, C1, R2, S2, C2, a):
        return ([g(R1, S1, C1, a, Km) for g in grad] + [g(R2, S2, C2, a, Km) for g in grad]
                + [f(R1, S1, C1, a, Km) - f(R2, S2, C2, a, Km)])
    sol = mp.findroot(eqs, [mp.mpf(v) for v in list(x1) + list(x2) + [p]], tol=mp.mpf(10) ** -25)
    return float(sol[6])


@pytest.mark.parametrize("activation,K,key,published,tol", [
    ("erf", 2.0, "alpha_c", 23.675957245, 1e-8), ("relu", 2.0, "alpha_c", 6.0940738933, 1e-9),
    ("erf", 5.0, "alpha_s", 44.3378030, 6e-8)])
def test_scm_published_transitions_from_free_energy(activation, K, key, published, tol):
    """The engine on the SCM free energy alone reproduces the published digits."""
    from statmech.scm import scm_transitions
    tr = scm_transitions(K, activation)
    assert tr["order"] == ("second" if K == 2 else "first")
    assert tr[key] == pytest.approx(published, abs=tol)
    assert tr["alpha_s"] <= tr["alpha_c"] <= tr["alpha_d"]


@pytest.mark.slow
@pytest.mark.parametrize("activation,K,alpha_c", [("erf", 2.0, 23.675957245), ("relu", 2.0, 6.0940738933)])
def test_scm_k2_continuous_transition_from_free_energy(activation, K, alpha_c):
    from statmech.scm import scm_transitions
    tr = scm_transitions(K, activation)
    assert tr["order"] == "second"
    bp = tr["points"]["bp"]
    assert abs(bp.x[0] - bp.x[1]) < 1e-9  # on the unspecialized branch R = S
    assert tr["alpha_c"] == pytest.approx(alpha_c, abs=1e-8)  # published digits
    assert tr["alpha_c"] == pytest.approx(_mp_singular(activation, K, bp.x, bp.p), abs=1e-9)


@pytest.mark.slow
@pytest.mark.parametrize("activation,K", [("erf", 5.0), ("erf", 2.5), ("relu", 3.0)])
def test_scm_first_order_transitions_from_free_energy(activation, K):
    """alpha_s (fold), alpha_c (coexistence), alpha_d (branch point) against mpmath solutions of the
    independent systems; erf K = 5 alpha_s = 44.3378030 (published digits)."""
    from statmech.scm import scm_transitions
    tr = scm_transitions(K, activation)
    assert tr["order"] == "first" and tr["alpha_s"] < tr["alpha_c"] < tr["alpha_d"]
    pts = tr["points"]
    assert tr["alpha_s"] == pytest.approx(_mp_singular(activation, K, pts["fold"].x, pts["fold"].p), abs=1e-8)
    assert tr["alpha_d"] == pytest.approx(_mp_singular(activation, K, pts["bp"].x, pts["bp"].p), abs=1e-8)
    c = pts["coexistence"]
    assert tr["alpha_c"] == pytest.approx(_mp_coexistence(activation, K, c.x1, c.x2, c.p), abs=1e-8)
    if (activation, K) == ("erf", 5.0):
        assert tr["alpha_s"] == pytest.approx(44.3378030, abs=6e-8)


def test_binary_teacher_student_transition_found_by_engine():
    from statmech import perceptron as P
    prob = Problem(free_energy=lambda x, a: P.binary_teacher_student_free_entropy(x, a),
                   gradient=lambda x, a: P.binary_teacher_student_gradient(x, a),
                   hessian=lambda x, a: P.binary_teacher_student_hessian(x, a),
                   x0=[0.3, 0.5], p0=0.5, stability="none", names=("R", "R_hat"), p_name="alpha",
                   events={"entropy=0": lambda x, a: P.binary_teacher_student_free_entropy(x, a)},
                   in_domain=lambda x, a: -1 < x[0] < 1 and x[1] >= 0, affine_in_p=True)
    br = trace(prob, 0.5, 2.0, ds=0.01)
    (ev,) = br.points("event")
    (fold,) = br.points("fold")
    ref = P.binary_teacher_student_transition()
    assert ev.p == pytest.approx(ref.alpha_c, abs=1e-10) and abs(ev.p - 1.245) < 1e-3
    assert fold.p == pytest.approx(ref.alpha_spinodal, abs=1e-10) and abs(fold.p - 1.49) < 5e-3
    assert ev.value("R") == pytest.approx(ref.R_c, abs=1e-8)


def test_binary_capacity_line_in_kappa():
    from statmech import perceptron as P
    from statmech.perceptron.advanced import binary_storage_problem
    prob = binary_storage_problem(0.0)
    br = trace(prob, 0.05, 1.0, ds=0.01, max_steps=400)
    (ev,) = [s for s in br.points("event") if s.name == "entropy=0"]
    assert ev.p == pytest.approx(P.binary_capacity(0.0), abs=1e-10)
    line = continue_point(prob, ev, "kappa", -0.5, 1.0, ds=0.02)
    for k in (-0.5, 0.5, 1.0):
        assert line.p_at(k) == pytest.approx(P.binary_capacity(k), abs=1e-9)


def test_phase_diagram_cli_rejects_bad_ranges(capsys):
    from statmech.cli import main
    for args in (["scm", "--K", "5:2"], ["scm", "--K", "0.5:3"], ["scm", "--K", "two:five"],
                 ["perceptron", "--kappa", "1"], ["scm", "--activation", "tanh"]):
        assert main(["phase-diagram", *args]) == 2, args
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_scm_lines_in_continuous_K_match_direct_analysis():
    """alpha_s, alpha_c, alpha_d continued in K from K = 5 down to the non-integer K = 2.5 agree
    with a fresh one-parameter analysis at K = 2.5 (two independent paths, 1e-8)."""
    from statmech.scm import scm_problem, scm_transitions
    t5 = scm_transitions(5.0, "erf")
    t25 = scm_transitions(2.5, "erf")
    prob = scm_problem(5.0, "erf")
    for key, pt in (("alpha_s", "fold"), ("alpha_c", "coexistence"), ("alpha_d", "bp")):
        line = continue_point(prob, t5["points"][pt], "K", 2.4, 5.0, ds=0.03)
        assert line.p_at(2.5) == pytest.approx(t25[key], abs=1e-8), key
    assert 29.58 < t25["alpha_s"] < t25["alpha_c"] < t25["alpha_d"] < 30.3


def test_scm_grid_sweep_matches_direct(tmp_path):
    from statmech.scm import scm_grid, scm_transitions
    from statmech.sweep import load
    res = scm_grid("erf", [2, 3], tmp_path / "grid.json", executor="serial", progress=False)
    pts, stored = load(tmp_path / "grid.json")
    assert [p["K"] for p in pts] == [2.0, 3.0] and stored == res
    assert res[0]["order"] == "second" and res[1]["order"] == "first"
    assert res[1]["alpha_c"] == pytest.approx(scm_transitions(3.0, "erf")["alpha_c"], abs=1e-12)


# ------------------------------------------------------------------ scaled residual tests
def _scaled_cubic(L=1e12, rtol=1e-10):
    """F = L (p - x^3 + x): the rounding floor of F (~L eps) is far above the absolute tol."""
    return Problem(residual=lambda x, p: np.array([L * (p - x[0] ** 3 + x[0])]),
                   jacobian=lambda x, p: np.array([[L * (1 - 3 * x[0] ** 2)]]),
                   dFdp=lambda x, p: np.array([L]), x0=[-1.5], p0=-1.0, rtol=rtol)


def test_large_terms_converge_by_backward_error_and_folds_stay_exact():
    br = trace(_scaled_cubic(), -1.0, 1.0, ds=0.05)
    assert br.complete
    folds = sorted(br.points("fold"), key=lambda s: s.p)
    assert len(folds) == 2
    assert folds[0].p == pytest.approx(-FOLD_P, abs=1e-12) and folds[1].p == pytest.approx(FOLD_P, abs=1e-12)
    # without the scaled test the absolute tolerance cannot be met
    with pytest.raises(ConvergenceError):
        trace(_scaled_cubic(rtol=0.0), -1.0, 1.0, ds=0.05)


def test_fold_line_followed_while_the_terms_grow_like_exp_q():
    """F = e^q (p - x^3 + q x): the fold line p = 2 (q/3)^(3/2) is continued from q = 1 to 30
    (terms ~1e13, an absolute tol of 1e-10 is below the rounding floor beyond q ~ 14)."""
    prob = Problem(residual=lambda x, p, q: np.array([math.exp(q) * (p - x[0] ** 3 + q * x[0])]),
                   jacobian=lambda x, p, q: np.array([[math.exp(q) * (q - 3 * x[0] ** 2)]]),
                   dFdp=lambda x, p, q: np.array([math.exp(q)]), x0=[-1.5], p0=-1.0, params={"q": 1.0})
    br = trace(prob, -1.0, 1.0, ds=0.05)
    fold = max(br.points("fold"), key=lambda s: s.p)
    line = continue_point(prob, fold, "q", 1.0, 30.0, ds=0.05)
    assert line.q.max() == 30.0
    for qq in (2.0, 14.5, 22.0, 30.0):
        assert line.p_at(qq) == pytest.approx(2 * (qq / 3) ** 1.5, rel=1e-11)


def test_fold_line_ending_tangentially_on_a_branch_point_line():
    """F = x (p - q x + x^2): folds at p = q^2/4 (x = q/2), trivial branch x = 0 with its branch
    point at p = 0.  The fold line touches the branch-point line at q = 0, where (x, p) = (0, 0)
    also solves the fold system: the line is followed exactly down to where phi . F_p falls below
    fold_tol and ends there with status "fold_degenerate"; without the test it runs onto q = 0."""
    prob = Problem(residual=lambda x, p, q: np.array([x[0] * (p - q * x[0] + x[0] ** 2)]),
                   jacobian=lambda x, p, q: np.array([[p - 2 * q * x[0] + 3 * x[0] ** 2]]),
                   dFdp=lambda x, p, q: np.array([x[0]]), x0=[0.8], p0=0.16, params={"q": 1.0})
    fold = trace(prob, -1.0, 1.0, ds=0.05).points("fold")[0]
    assert fold.p == pytest.approx(0.25, abs=1e-12)
    line = continue_point(prob, fold, "q", 0.0, 2.0, ds=0.05)
    assert line.status == ("fold_degenerate", "p_max")
    assert 0.0 < line.q.min() < 1e-3
    np.testing.assert_allclose(line.p, line.q ** 2 / 4, rtol=1e-9, atol=1e-10)  # tol 1e-10 near q = 0
    assert line.p_at(0.01) == pytest.approx(0.01 ** 2 / 4, rel=1e-9)
    with pytest.raises(ValueError, match="fold_tol"):
        continue_point(prob, fold, "q", 0.0, 2.0, ds=0.05, fold_tol=-1.0)
    assert continue_point(prob, fold, "q", 0.0, 2.0, ds=0.05, fold_tol=0.0).q.min() == 0.0
