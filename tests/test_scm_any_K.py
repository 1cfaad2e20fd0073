"""Soft committee machine transitions at every K: scaled variables, the Landau
reduction, the large-K expansion, and the contract (numbers or an exception, never None)."""
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from statmech import ConvergenceError, scm
from statmech.activations import ESP
from statmech.scm._activation import activation_info
from statmech.scm._infinite_k import _large_k_expansion
from statmech.scm._landau import _landau

_ESP = {b: ESP(b) for b in (0.5, 1.0, 3.0, 50.0)}  # one object each: the interpolated m is cached per object
_KEYS = ("alpha_s", "alpha_c", "alpha_d")


def _rel(a, b):
    return max(abs(getattr(a, k) - getattr(b, k)) / abs(getattr(b, k)) for k in _KEYS)


def _check(t, K):
    assert t.order in (1, 2) and t.K == K
    assert math.isfinite(t.alpha_s) and math.isfinite(t.alpha_c)
    assert math.isfinite(t.alpha_d) or math.isinf(K)
    assert t.alpha_s <= t.alpha_c <= t.alpha_d
    if t.order == 2:
        assert t.alpha_s == t.alpha_c == t.alpha_d


# --------------------------------------------------------------- large K (26 to 1e6)
@pytest.mark.parametrize("act", ["erf", "relu"])
def test_large_K_transitions_are_finite_ordered_and_approach_K_infinity(act):
    Ks = (26, 200, 1000, 1e4, 1e6)
    inf = scm.transitions(math.inf, act)
    prev = None
    for K, t in zip(Ks, scm.transitions(list(Ks), act)):
        _check(t, K)
        assert t.order == 1 and t.alpha_s < t.alpha_c < t.alpha_d
        if prev is not None:  # monotone approach to K = inf
            for key in ("alpha_s", "alpha_c"):
                assert abs(getattr(t, key) - getattr(inf, key)) < abs(getattr(prev, key) - getattr(inf, key))
            if act == "relu":
                assert 0 < t.alpha_d - 2 * math.pi < prev.alpha_d - 2 * math.pi
        prev = t
    assert abs(prev.alpha_s / inf.alpha_s - 1) < 2e-6 and abs(prev.alpha_c / inf.alpha_c - 1) < 3e-6
    if act == "erf":
        assert prev.alpha_d == pytest.approx(4 * math.pi * 1e6, rel=1e-12)


def test_direct_agrees_with_engine_where_both_answer():
    """The issue's K = 26 (the old direct solver returned None there) and K up to the engine's reach."""
    for act, K in (("erf", 26), ("erf", 100), ("erf", 150), ("relu", 26), ("relu", 60), (_ESP[3.0], 30)):
        e = scm.transitions(K, act, method="continuation")
        d = scm.transitions(K, act, method="direct")
        assert e.order == d.order == 1 and _rel(e, d) < 1e-8, (act, K)
    d = scm.transitions(26, "erf", method="direct")
    assert d.alpha_s == pytest.approx(57.7050865408, abs=1e-10) and d.alpha_c == pytest.approx(63.9282458611, abs=1e-10)
    for K in (1e4, 1e6):  # beyond the engine's reach it raises (it used to return four None)
        with pytest.raises(ConvergenceError):
            scm.transitions(K, "erf", method="continuation")


def test_landau_reduction_matches_the_direct_solver():
    """Where the transition is weakly first order "auto" answers by the Landau reduction; where the
    direct solver still resolves the latent heat they agree, the gaps to ~0.13 / K^2 (ReLU)."""
    info = activation_info("relu")
    for K in (100.0, 200.0, 500.0):
        a_s, a_c, a_d, data = _landau(info, K)
        d = scm.transitions(K, "relu", method="direct")
        assert a_d == d.alpha_d
        for a, key in ((a_s, "alpha_s"), (a_c, "alpha_c")):
            gap = d.alpha_d - getattr(d, key)
            assert abs((a_d - a) / gap - 1) < 0.2 / K ** 2 + 2e-15 * a_d / gap, (K, key)
    for act, K in (("relu", 2.04), ("relu", 80), ("relu", 1000), (_ESP[1.0], 200), ("erf", 2.009)):
        a = scm.transitions(K, act)
        assert a.details["solver"].startswith("Landau")
        assert _rel(a, scm.transitions(K, act, method="direct")) < 5e-10, (act, K)


def test_weakly_first_order_relu_just_above_K2_is_resolved():
    """ReLU 2 < K <~ 2.03: the latent heat is below double precision for the direct solver, which
    raises; the Landau reduction (exact as K -> 2) gives the points, continuous with the direct
    solver beyond."""
    with pytest.raises(ConvergenceError, match="latent heat"):
        scm.transitions(2.01, "relu", method="direct")
    Ks = np.linspace(2.0, 2.1, 11)
    trs = scm.transitions(Ks, "relu")
    assert trs[0].order == 2 and all(t.order == 1 for t in trs[1:])
    gaps = np.array([t.alpha_d - t.alpha_s for t in trs[1:]])
    assert np.all(np.diff(gaps) > 0)  # the hysteresis grows from zero at K = 2
    assert gaps[0] == pytest.approx(4.497546e-06, rel=1e-4)
    for t in trs:
        _check(t, t.K)


def test_transitions_are_continuous_across_the_solver_switches():
    for act, Ks in (("relu", np.linspace(74.0, 86.0, 13)), ("relu", np.linspace(2.03, 2.07, 9)),
                    ("erf", np.linspace(2.005, 2.015, 11))):
        trs = scm.transitions(Ks, act)
        assert len({t.details["solver"] for t in trs}) == 2  # both sides of the switch
        for key in _KEYS:
            y = np.array([getattr(t, key) for t in trs])
            d2 = np.abs(np.diff(y, 2))
            assert np.max(d2) < 1e-8 * y[0] + 0.05 * np.max(np.abs(np.diff(y))), (act, key)


# --------------------------------------------------------------- the large-K expansion
def test_large_K_expansion_erf_rates():
    """alpha_x(K) = alpha_x(inf) + a_x / K (a_x derived from chi, docs/scm.md "Large K") and
    alpha_d = 4 pi K - pi / K, against the finite-K solver up to K = 1e5."""
    e = _large_k_expansion(activation_info("erf"))
    assert e["alpha_d_K"] == pytest.approx(4 * math.pi, rel=1e-8)
    assert e["alpha_d_1/K"] == pytest.approx(-math.pi, rel=1e-3)  # m^(5)(0) by finite differences
    assert e["a_s"] == pytest.approx(-85.909019219, rel=1e-9) and e["a_c"] == pytest.approx(-139.424455291, rel=1e-9)
    for K in (1e3, 1e4, 1e5):
        t = scm.transitions(K, "erf")
        assert abs(K * (t.alpha_s - e["alpha_s"]) - e["a_s"]) < 20 / K
        assert abs(K * (t.alpha_c - e["alpha_c"]) - e["a_c"]) < 200 / K
        assert abs(K * (t.alpha_d - 4 * math.pi * K) + math.pi) < 1e-5 + 4e-15 * K * K


def test_large_K_expansion_relu_laws():
    """Continuous at K = inf: alpha_d = 2 pi + (4 - pi) / K^2, alpha_d - alpha_s = (3 pi / 20) / K^2,
    alpha_d - alpha_c = (2 pi / 15) / K^2 (Landau theory of the K = inf critical point)."""
    e = _large_k_expansion(activation_info("relu"))
    assert e["alpha_d_1/K^2"] == pytest.approx(4 - math.pi, rel=1e-6)
    assert e["gap_s_1/K^2"] == pytest.approx(3 * math.pi / 20, rel=1e-6)
    assert e["gap_c_1/K^2"] == pytest.approx(2 * math.pi / 15, rel=1e-6)
    ulp = 4e-15 * 2 * math.pi
    for K in (1e3, 1e4, 1e5):
        t = scm.transitions(K, "relu")
        assert abs(K * K * (t.alpha_d - 2 * math.pi) - (4 - math.pi)) < 5 / K + ulp * K * K
        assert abs(K * K * (t.alpha_d - t.alpha_s) / (3 * math.pi / 20) - 1) < 6 / K + 3 * ulp * K * K
        assert abs(K * K * (t.alpha_d - t.alpha_c) / (2 * math.pi / 15) - 1) < 6 / K + 3 * ulp * K * K


def test_R_equal_S_stability_condition_is_the_hessian_eigenvalue():
    """alpha_d from alpha m''(R) (1 - C) = 1 is where the smallest Hessian eigenvalue in (R, S, C)
    of the R = S minimum changes sign."""
    for act, K in (("erf", 5), ("relu", 4), (_ESP[3.0], 3)):
        ad = scm.transitions(K, act, method="direct").alpha_d
        ev = []
        for a in (ad * (1 - 1e-6), ad * (1 + 1e-6)):
            eq = scm.equilibria(a, K, act, include_saddles=True, full_space=False)
            ev.append([p for p in eq if p.branch == "unspecialized"][0].hessian_eigenvalues[0])
        assert ev[0] > 0 > ev[1], (act, K, ev)


# --------------------------------------------------------------- the contract
_ACTS = {"erf": "erf", "relu": "relu", **{f"esp{b:g}": a for b, a in _ESP.items()}}


@settings(max_examples=30, deadline=None)
@given(act=st.sampled_from(sorted(_ACTS)),
       K=st.floats(math.log(1.01), math.log(1e6)).map(math.exp) | st.just(math.inf)
       | st.floats(-7.0, -1.0).map(lambda x: 2.0 + 10 ** x))
def test_transitions_give_ordered_numbers_at_every_K(act, K):
    _check(scm.transitions(K, _ACTS[act]), K)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(act=st.sampled_from(sorted(_ACTS)), K=st.floats(math.log(1.01), math.log(1e6)).map(math.exp),
       method=st.sampled_from(["auto", "direct"]))
def test_transitions_contract_many_K(act, K, method):
    """"auto" answers everywhere; "direct" answers or raises ConvergenceError (latent heat or
    order below double precision), and then agrees with "auto" (to 2e-9: the direct solver's alpha_c
    from a free-energy difference of nearly equal states, with an interpolated m, where "auto"
    uses the Landau reduction)."""
    t = scm.transitions(K, _ACTS[act])
    _check(t, K)
    if method == "direct":
        try:
            d = scm.transitions(K, _ACTS[act], method="direct")
        except ConvergenceError as exc:
            assert "double precision" in str(exc)
            return
        _check(d, K)
        assert d.order == t.order and _rel(d, t) < 2e-9


def test_cli_transitions_at_large_K_and_exit_1_on_non_results(capsys, monkeypatch):
    import json
    from statmech.cli import main
    assert main(["scm", "transitions", "--K", "1e6", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert all(isinstance(d[k], float) and math.isfinite(d[k]) for k in _KEYS) and d["order"] == 1
    t = scm.transitions(5, "erf")
    monkeypatch.setattr(scm, "transitions", lambda *a, **k: scm.Transitions(5.0, "erf", t.alpha_s, math.nan,
                                                                            t.alpha_d, 1, {}))
    assert main(["scm", "transitions", "--K", "5", "--json"]) == 1
    cap = capsys.readouterr()
    assert cap.out == "" and len(cap.err.strip().splitlines()) == 1 and "no result" in cap.err


# --------------------------------------------------------------- brute force
def _brute(act, K, x_s, x_c, u_c, u_d, alphas, dps):
    """alpha_d, alpha_s, alpha_c of Eq. 20 of Oostwal, Straat & Biehl (arXiv:1910.07476; eps_g
    corrected) in (R, S, C), solved in mpmath: det H = 0 on R = S, the fold {grad = 0, det H = 0},
    the coexistence of two stationary points with equal beta f; derivatives by sympy, starts from
    the double-precision points."""
    import mpmath as mp
    import sympy as sy
    R, S, C, a, Ks = sy.symbols("R S C alpha K")
    m = {"erf": lambda r: 2 / sy.pi * sy.asin(r / 2),
         "relu": lambda r: r / 4 + (sy.sqrt(1 - r ** 2) + r * sy.asin(r)) / (2 * sy.pi)}[act]
    f = a * Ks * (m(1) - m(R) + (Ks - 1) / 2 * (m(C) + m(0) - 2 * m(S))) - (
        sy.log(1 + (Ks - 1) * C - (R + (Ks - 1) * S) ** 2) / 2 + (Ks - 1) / 2 * sy.log(1 - C - (R - S) ** 2))
    X = [R, S, C]
    g = [sy.diff(f, v) for v in X]
    fl, gl = (sy.lambdify([R, S, C, a, Ks], e, "mpmath") for e in (f, g))
    Hl = sy.lambdify([R, S, C, a, Ks], sy.Matrix([[sy.diff(gi, v) for v in X] for gi in g]), "mpmath")
    with mp.workdps(dps):
        Km = mp.mpf(K)

        def det(x, al):  # det H with the diagonal scaled out
            M = mp.matrix(Hl(*x, al, Km))
            d = [mp.sqrt(abs(M[i, i])) for i in range(3)]
            return mp.det(mp.matrix([[M[i, j] / (d[i] * d[j]) for j in range(3)] for i in range(3)]))

        def solve(eqs, x0):
            return mp.findroot(eqs, [mp.mpf(v) for v in x0], tol=mp.mpf(10) ** (-dps // 2), verify=False, maxsteps=50)
        ad = solve(lambda r, c, al: [sum(gl(r, r, c, al, Km)[:2]), gl(r, r, c, al, Km)[2], det((r, r, c), al)],
                   [u_d["R"], u_d["C"], alphas[2]])[2]
        fs = solve(lambda r, s, c, al: list(gl(r, s, c, al, Km)) + [det((r, s, c), al)],
                   [x_s["R"], x_s["S"], x_s["C"], alphas[0]])[3]
        cx = solve(lambda r1, s1, c1, r2, c2, al: list(gl(r1, s1, c1, al, Km))
                   + [sum(gl(r2, r2, c2, al, Km)[:2]), gl(r2, r2, c2, al, Km)[2]]
                   + [fl(r1, s1, c1, al, Km) - fl(r2, r2, c2, al, Km)],
                   [x_c["R"], x_c["S"], x_c["C"], u_c["R"], u_c["C"], alphas[1]])
        # not the trivial solution (both states on R = S): R - S of the specialized state as started
        assert abs(cx[0] - cx[1]) > 0.5 * abs(x_c["R"] - x_c["S"])
        return float(fs), float(cx[5]), float(ad)


@pytest.mark.slow
@pytest.mark.parametrize("act,K,rel", [("erf", 1e6, 1e-12), ("erf", 1e4, 1e-12), ("relu", 1e5, 1e-12),
                                       ("relu", 2.02, 1e-10)])
def test_transitions_against_brute_force_mpmath(act, K, rel):
    """The scaled direct solver (erf) and the Landau reduction (ReLU, weakly first order at large K
    and near K = 2) against 60-100 digit solutions of the original equations in (R, S, C)."""
    t = scm.transitions(K, act)
    try:  # starting points for the mpmath Newton: the direct solver's states ...
        src = scm.transitions(K, act, method="direct")
    except ConvergenceError:
        src = t
    if "landau" in src.details:  # ... or the Landau amplitudes on top of the R = S point
        L, ud = src.details["landau"], src.details["unspecialized_at_alpha_d"]
        u = ud["R"] * K

        def at(d):
            return {"R": (u + (K - 1) * d) / K, "S": (u - d) / K, "C": ud["C"]}
        x_s, x_c, u_c = at(L["delta_s"]), at(L["delta_c"]), ud
    else:
        x_s, x_c, u_c = (src.details[k] for k in ("specialized_at_alpha_s", "specialized_at_alpha_c",
                                                   "unspecialized_at_alpha_c"))
    ref = _brute(act, K, x_s, x_c, u_c, t.details["unspecialized_at_alpha_d"], (t.alpha_s, t.alpha_c, t.alpha_d),
                 int(40 + 12 * math.log10(K)))
    for key, r in zip(_KEYS, ref):
        assert getattr(t, key) == pytest.approx(r, rel=rel), key


# ------------------------------------------------------------------ lines in continuous K near K = 2
@pytest.fixture(scope="module", params=["relu", "erf"])
def lines_2_50(request):
    """scm_lines over [2, 50], the range of the published phase diagrams."""
    return request.param, scm.scm_lines(request.param, 2.0, 50.0)


def test_scm_lines_alpha_s_follows_the_fold_not_alpha_d(lines_2_50):
    """Every node of the traced alpha_s line in [2.01, 3], and the line re-solved at several K, is
    the fold of transitions(K) (direct / Landau) to 1e-9, not alpha_d (1e-6 .. 1e-3 above it); the
    line stops where the fold cannot be told from the branch point and that part is filled by
    transitions().  (Before the fold test the traced alpha_s followed alpha_d for K ~ 2.05-2.4.)"""
    act, res = lines_2_50
    line = res["lines"]["alpha_s"]
    nodes = [(q, p) for q, p in zip(line.q, line.p) if 2.01 <= q <= 3.0]
    assert len(nodes) >= 3
    for K, a in nodes + [(K, line.p_at(K)) for K in (2.02, 2.05, 2.1, 2.2, 2.5, 3.0)]:
        t = scm.transitions(K, act)
        assert abs(a - t.alpha_s) < 1e-9 * t.alpha_s, (K, a, t.alpha_s, t.details["solver"])
        assert t.alpha_d - a > 0.99 * (t.alpha_d - t.alpha_s) > 0
    assert "fold_degenerate" in line.status and 2.0 < line.q.min() < 2.02
    fill = res["filled"]["alpha_s"]
    assert fill["reason"] == ["fold_degenerate"] and fill["K"][0] == 2.0 and max(fill["K"]) < line.q.min()
    for K, a in zip(fill["K"][1:], fill["alpha"][1:]):
        assert a == scm.transitions(K, act).alpha_s


def test_scm_lines_meet_at_K2_from_landau(lines_2_50):
    """alpha_s and alpha_c touch alpha_d at K = 2 (Phi_3 = 0): meet is exactly (2, alpha_d(2)),
    with its provenance, and nothing else in [2, 50] (the old rounding-decided crossing was at
    K = 2.08-2.15 for ReLU)."""
    act, res = lines_2_50
    a2 = scm.transitions(2.0, act)
    assert a2.order == 2 and a2.alpha_c == a2.alpha_d
    assert sorted(res["meet"]) == [("alpha_d", "alpha_c", 2.0, a2.alpha_d), ("alpha_d", "alpha_s", 2.0, a2.alpha_d)]
    assert all("Landau" in d["provenance"] for d in res["meet_details"])
    published = {"erf": 23.675957245, "relu": 6.0940738933}[act]
    assert a2.alpha_d == pytest.approx(published, abs=1e-9)
    # the traced alpha_d line passes through it
    assert res["lines"]["alpha_d"].p_at(2.0) == pytest.approx(a2.alpha_d, rel=1e-12)


@pytest.mark.parametrize("act", ["relu", "erf"])
def test_alpha_s_and_alpha_c_are_tangent_to_alpha_d_at_K2(act):
    """Landau: Phi_3 ~ (K-1)^3 - (K-1) = K (K-1) (K-2), so Phi_3 / (K-2) and the gaps
    (alpha_d - alpha_s, alpha_d - alpha_c ~ Phi_3^2 / Phi_4) over (K-2)^2 tend to finite nonzero
    limits (the lines are tangent at K = 2); the direct solver's gap agrees (K = 2.01 erf, 2.1 ReLU)."""
    info = activation_info(act)
    rows = []
    for j in (2, 3, 4):
        e = 10.0 ** -j
        s, c, d, data = _landau(info, 2.0 + e)
        rows.append(((d - s) / e ** 2, (d - c) / e ** 2, data["Phi_3"] / e))
    for col in range(3):
        assert rows[2][col] == pytest.approx(rows[1][col], rel=3e-3) and rows[2][col] != 0
    t = scm.transitions(2.01, act, method="direct") if act == "erf" else scm.transitions(2.1, act, method="direct")
    s, c, d, _ = _landau(info, t.K)
    assert (t.alpha_d - t.alpha_s) == pytest.approx(d - s, rel=2e-3)


@pytest.mark.parametrize("act,K", [("relu", 2.0 + 1e-4), ("relu", 2.0 + 1e-5), ("erf", 2.0 + 1e-5)])
def test_direct_does_not_step_over_the_fold_just_above_K2(act, K):
    """The fold sits at delta_s ~ 0.1 (K - 2) (ReLU 9e-6 at K - 2 = 1e-4): the direct solver's first
    sample used to be delta = 1e-4 / K, beyond it, and it reported a continuous transition.  Now it
    sees the dip and says the latent heat is below double precision; "auto" answers by Landau."""
    with pytest.raises(ConvergenceError, match="latent heat"):
        scm.transitions(K, act, method="direct")
    t = scm.transitions(K, act)
    assert t.order == 1 and t.alpha_s < t.alpha_c < t.alpha_d and "Landau" in t.details["solver"]
    assert scm.transitions(2.0, act, method="direct").order == 2
