"""Gradient descent for the negative-margin spherical perceptron (statmech.simulate.negative_margin).

Checks: the cost gradient against finite differences; SAT certificates against exact rational
arithmetic; GD against the exact LP/LDP decision at kappa >= 0 (same instances); float32 vs
float64 pattern storage; reproducibility; the small regeneration of the data file; and the
stored data set (thresholds below the RS capacity, LP values recovered at kappa >= 0).
"""
import math
from fractions import Fraction

import numpy as np
import pytest

from statmech.perceptron import gardner_capacity
from statmech.simulate import lp
from statmech.simulate import negative_margin as nm
from statmech.simulate.finite_size import instance_rng


def _instance(N, alpha, i, seed=7, dtype=np.float32):
    P = int(round(alpha * N))
    rng = instance_rng(seed, N, P, i)
    X = nm._patterns(rng, P, N, dtype=dtype)
    return X, rng.standard_normal(N)


def test_cost_and_gradient_match_direct_formula_and_finite_differences(rng):
    N, P, kappa = 30, 70, -0.3
    X = rng.standard_normal((P, N))
    w = rng.standard_normal(N) * 1.3          # off the sphere: the formula holds for any w
    E, g = nm.hinge_cost(w, X, kappa)
    h = X @ w / math.sqrt(N)
    r = np.maximum(0.0, kappa - h)
    assert E == pytest.approx(0.5 * np.sum(r ** 2), rel=1e-13)
    assert np.allclose(g, -(X.T @ r) / math.sqrt(N), rtol=1e-12, atol=1e-13)
    eps = 1e-6
    fd = np.array([(nm.hinge_cost(w + eps * e, X, kappa)[0] - nm.hinge_cost(w - eps * e, X, kappa)[0]) / (2 * eps)
                   for e in np.eye(N)])
    assert np.max(np.abs(fd - g)) < 1e-7 * max(1.0, np.max(np.abs(g)))


def _exact_sat(w, X, kappa):
    """Every xi.w/|w| >= kappa (kappa < 0), in exact rational arithmetic."""
    wq = [Fraction(float(x)) for x in w]
    n2 = sum(x * x for x in wq)
    k2 = Fraction(float(kappa)) ** 2
    for row in X:
        s = sum(Fraction(float(a)) * b for a, b in zip(row, wq))
        if s < 0 and s * s > k2 * n2:
            return False
    return True


@pytest.mark.parametrize("method", ["nesterov", "gd"])
def test_sat_certificate_is_exact(method):
    X, w0 = _instance(50, 3.0, 0)
    r = nm.gd_minimize(X, -0.5, w0=w0, method=method)
    assert r.sat and r.status == "sat" and r.n_violated == 0
    assert r.margin >= -0.5 and np.isclose(r.w @ r.w, 50.0, rtol=1e-12)
    assert _exact_sat(r.w, X, -0.5)
    # the certificate rejects a w with a field just below kappa
    h = X.astype(float) @ r.w / math.sqrt(50)
    mu = int(np.argmin(h))
    ok, margin = nm.verify_solution(r.w, X, h[mu] + 1e-9)
    assert not ok and margin < h[mu] + 1e-9


@pytest.mark.parametrize("kappa", [0.5, 0.0])
def test_gd_agrees_with_lp_at_nonnegative_kappa(kappa):
    """kappa >= 0 is convex: GD must find a solution whenever the LP/LDP says one exists,
    except when the maximal margin is within the slack delta = 1e-3 of kappa.  A GD solution
    is always an LP solution (certified)."""
    N = 60
    alphas = [0.7, 0.85, 0.95, 1.05] if kappa > 0 else [1.6, 1.9, 2.1, 2.4]
    n_agree = n_total = 0
    for a in alphas:
        for i in range(6):
            X, w0 = _instance(N, a, i)
            P = X.shape[0]
            kmax = lp.max_stability(X, np.ones(P))
            lp_sat = kmax.separable if kappa == 0 else kmax.kappa_max >= kappa
            r = nm.gd_minimize(X, kappa, w0=w0)
            assert not (r.sat and not lp_sat)
            if lp_sat and not r.sat:                 # only within the slack
                assert kmax.kappa_max < kappa + 1e-3
            n_agree += lp_sat == r.sat
            n_total += 1
            if not r.sat:                            # UNSAT: the stall is at the convex minimum
                assert r.status == "stalled" and r.cost > 0
    assert n_agree == n_total


def test_float32_storage_gives_the_same_decisions():
    same = 0
    for a in (3.6, 4.0, 4.4, 4.8):
        for i in range(5):
            X64, w0 = _instance(60, a, i, dtype=np.float64)
            r32 = nm.gd_minimize(X64.astype(np.float32), -0.5, w0=w0)
            r64 = nm.gd_minimize(X64, -0.5, w0=w0)
            same += r32.sat == r64.sat
            assert abs(r32.iterations - r64.iterations) <= max(5, 0.2 * r64.iterations) or r32.sat != r64.sat
    assert same == 20


def test_reproducible_from_seed():
    pt = {"kappa": -1.0, "N": 40, "alpha": 9.0, "i": 3, "seed": 11}
    a, b = nm.gd_instance(pt), nm.gd_instance(dict(pt))
    a.pop("seconds"), b.pop("seconds")
    assert a == b
    X, _ = _instance(40, 6.0, 1)
    r1, r2 = nm.gd_minimize(X, -1.0, seed=5), nm.gd_minimize(X, -1.0, seed=5)
    assert np.array_equal(r1.w, r2.w) and r1.iterations == r2.iterations
    assert not np.array_equal(r1.w, nm.gd_minimize(X, -1.0, seed=6).w)


def test_unsat_stalls_with_positive_cost():
    X, w0 = _instance(50, 12.0, 0)          # far above the RS capacity 4.77 at kappa = -0.5
    r = nm.gd_minimize(X, -0.5, w0=w0)
    assert not r.sat and r.status == "stalled" and r.cost / 50 > 0.05
    h = r.history
    assert np.all(np.diff(h) <= 0)          # monotone
    t = r.iterations
    assert h[t] > (1 - 1e-3) * h[t // 2]    # the stopping rule that fired


def test_bad_input():
    X = np.ones((3, 4))
    with pytest.raises(ValueError, match="method"):
        nm.gd_minimize(X, -0.5, method="adam")
    with pytest.raises(ValueError, match="patterns"):
        nm.gd_minimize(np.ones(4), -0.5)
    with pytest.raises(ValueError, match="kappa"):
        nm.gd_minimize(X, float("nan"))
    with pytest.raises(ValueError, match="delta"):
        nm.gd_minimize(X, -0.5, delta=0.0)
    with pytest.raises(ValueError, match="w must"):
        nm.verify_solution(np.zeros(4), X, 0.0)


def test_small_regeneration(tmp_path):
    path = tmp_path / "gd.json"
    d = nm.negative_margin_data(path, small=True, progress=False)
    assert path.exists() and not (tmp_path / "gd.json.cells").exists()
    assert d == nm.load_negative_margin_data(path)
    assert d["seed"] == 2025 and d["settings"] == nm.GD_SETTINGS and d["N"] == [40, 80]
    assert "negative_margin_data(small=True" in d["command"]
    import statmech
    assert d["version"] == statmech.__version__
    # the stored outcomes are those of the instances recomputed directly
    c = d["cells"][3]
    for i, o in enumerate(c["instances"]):
        r = nm.gd_instance({"kappa": c["kappa"], "N": c["N"], "alpha": c["alpha"], "i": i, "seed": 2025})
        assert (r["sat"], r["status"], r["iterations"]) == (o["sat"], o["status"], o["iterations"])
    assert sum(c["n"] for c in d["cells"]) == 48
    with pytest.raises(ValueError, match="kappa"):
        nm.lp_agreement(d, -0.5, 40)
    # a second call reuses nothing stale and gives the same file content (timings aside)
    strip = [[(o["sat"], o["iterations"]) for o in c["instances"]] for c in d["cells"]]
    d2 = nm.negative_margin_data(path, small=True, progress=False)
    assert strip == [[(o["sat"], o["iterations"]) for o in c["instances"]] for c in d2["cells"]]


# ----------------------------------------------------------------------------- stored data
def _stored():
    if not nm.DATA_FILE.exists():
        pytest.skip("figures/data/negative_margin_gd.json not present")
    return nm.load_negative_margin_data()


def test_stored_data_records_its_provenance():
    d = _stored()
    for key in ("seed", "version", "settings", "kappa", "N", "plan", "command", "cells"):
        assert key in d
    assert "negative_margin_data(" in d["command"]
    for c in d["cells"]:
        assert c["n"] == len(c["instances"]) and c["n_sat"] == sum(o["sat"] for o in c["instances"])
        for o in c["instances"]:
            assert (o["status"] == "sat") == o["sat"]


def test_stored_thresholds_below_rs_and_at_lp_for_nonnegative_kappa():
    thr = nm.gd_thresholds(_stored())
    assert sum(t.converged for t in thr) >= len(thr) - 1   # kappa = -1.5, N = 500: grid too short
    for t in (t for t in thr if t.converged):
        if t.kappa < 0:   # GD success implies SAT, and RS >= alpha_J: never significantly above RS
            assert t.alpha_50 - 3 * t.alpha_50_err < gardner_capacity(t.kappa)
        else:             # convex: GD = LP, whose finite-N 50 % point is within a few % of Gardner
            assert abs(t.alpha_50 / gardner_capacity(t.kappa) - 1) < 0.04 + 3 * t.alpha_50_err


def test_lp_agreement_on_small_data(tmp_path):
    d = nm.negative_margin_data(tmp_path / "g.json", plan=((0.5, 40, (0.8, 0.95, 1.1), 5),), progress=False)
    rows, worst = nm.lp_agreement(d, 0.5, 40)
    assert [r[1] for r in rows] == [5, 5, 5]
    assert all(r[5] == 0 for r in rows)                       # GD never beats the exact LP
    assert sum(r[4] for r in rows) == 0 or worst < 1e-3       # misses only within the slack


@pytest.mark.slow
def test_stored_extrapolation():
    """alpha_50(N) = alpha_GD + b/N: the LP capacities at kappa >= 0; at kappa < 0 never
    significantly above the RS value (an upper estimate of alpha_J: GD above it would falsify
    the theory), and far below it at kappa <= -1."""
    ext = nm.gd_extrapolation(_stored())
    for kappa, e in ext.items():
        ac = float(gardner_capacity(kappa))
        if kappa >= 0:
            assert abs(e.y_inf - ac) < 3 * e.y_inf_err + 0.01 * ac
        else:
            assert e.y_inf - 3 * e.y_inf_err < ac
            if kappa <= -1:
                assert e.y_inf + 3 * e.y_inf_err < 0.9 * ac


@pytest.mark.slow
def test_stored_cell_regenerates_from_its_recorded_settings():
    d = _stored()
    c = min(d["cells"], key=lambda c: c["alpha"] * c["N"] ** 2)
    for i, o in enumerate(c["instances"]):
        r = nm.gd_instance({"kappa": c["kappa"], "N": c["N"], "alpha": c["alpha"], "i": i,
                            "seed": d["seed"], "dist": d["dist"], **d["settings"]})
        assert (r["sat"], r["status"], r["iterations"]) == (o["sat"], o["status"], o["iterations"])
