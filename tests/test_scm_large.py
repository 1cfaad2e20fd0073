"""SCM at large alpha and large K: the asymptotic law against the numerical branch, the S_K blocks of the
full-space Hessian against the dense matrix, the result protocol, the domains and the CLI's answers."""
import json
import math
import subprocess
import sys
import tracemalloc

import mpmath as mp
import numpy as np
import pytest

from statmech import ConvergenceError, activations, scm
from statmech.result import REPR_LIMIT
from statmech.scm._activation import activation_info
from statmech.scm._full_space import _block_matrices, _full_blocks, _second_moments


# ------------------------------------------------------------------------------ the large-alpha law
def _mp_free_energy(alpha, K, R, S, C, act):
    """beta f in 50-digit mpmath from (R, S, C) given as mpf (Oostwal et al. 2019, Eq. 20, eps_g corrected)."""
    if act == "erf":
        m = lambda r: 2 / mp.pi * mp.asin(r / 2)
    else:
        m = lambda r: r / 4 + (mp.sqrt(1 - r * r) + r * mp.asin(r)) / (2 * mp.pi)
    eps = m(1) - m(R) + (K - 1) / 2 * (m(C) + m(0) - 2 * m(S))
    s = mp.log(1 + (K - 1) * C - (R + (K - 1) * S) ** 2) / 2 + (K - 1) / 2 * mp.log(1 - C - (R - S) ** 2)
    return alpha * K * eps - s


@pytest.mark.parametrize("act,K", [("erf", 2), ("erf", 5), ("erf", 1000), ("relu", 5), ("relu", 100)])
def test_large_alpha_law_matches_the_numerical_branch(act, K):
    """beta f - (K/2) ln alpha -> f_inf with the first correction correction * alpha^-p (p = 1 smooth g,
    1/2 a kink): alpha^p (beta f - leading) -> correction; 1 - R, S -> coefficients / alpha; eps_g -> 1/(2 alpha)."""
    la = scm.large_alpha(K, act)
    assert la.correction_power == (1.0 if act == "erf" else 0.5)
    prev = None
    for a in (1e5, 1e6, 1e7, 1e8):
        p = scm.equilibria(a, K, act, full_space=False)[0]
        assert p.branch == "specialized"
        lead = K / 2 * math.log(a) + la.free_energy_constant
        c = (p.free_energy - lead) * a ** la.correction_power
        # the next order is O(alpha^-1/2) relative to the correction (O(1/alpha) for smooth g), so the
        # correction coefficient converges like that; beta f itself carries 1e-13 relative rounding
        rel = abs(c / la.correction - 1)
        rounding = 2e-13 * abs(p.free_energy) * a ** la.correction_power / abs(la.correction)
        assert rel < (40 / math.sqrt(a) if act == "relu" else 200 / a) + rounding
        if prev is not None and act == "erf":
            assert rel < prev + 1e-6
        prev = rel
        omr, S, C = la.overlaps(a)
        assert p.one_minus_R == pytest.approx(omr, rel=60 / math.sqrt(a))
        assert p.S == pytest.approx(S, rel=60 / math.sqrt(a))
        assert p.generalization_error * a == pytest.approx(0.5, rel=60 / math.sqrt(a))


def test_large_alpha_point_is_stationary_in_mpmath():
    """The specialized minimum at alpha = 1e8, K = 5 is a stationary point of the 50-digit beta f in
    (R, S, C) (the chart solution, converted with its accurate 1 - R): gradient relative to the terms ~1e-15."""
    mp.mp.dps = 50
    a, K = 1e8, 5
    p = scm.equilibria(a, K, "erf", full_space=False)[0]
    R = 1 - mp.mpf(p.one_minus_R)
    S, C = mp.mpf(p.S), mp.mpf(p.C)
    f0 = _mp_free_energy(a, K, R, S, C, "erf")
    assert float(f0) == pytest.approx(p.free_energy, rel=1e-14)
    h = mp.mpf(10) ** -25
    for d in ((h, 0, 0), (0, h, 0), (0, 0, h)):
        g = (_mp_free_energy(a, K, R + d[0], S + d[1], C + d[2], "erf")
             - _mp_free_energy(a, K, R - d[0], S - d[1], C - d[2], "erf")) / (2 * h)
        # the terms of the gradient are ~ alpha K m'(R) ~ 2e8: stationary to ~1e-7 of that (the overlaps are
        # known to ~1e-16 relative, the curvature is ~1/a2^2 ~ 1e16)
        assert abs(float(g)) < 1e-6 * a * K


def test_large_alpha_generic_activation():
    """ESP(3) (smooth, through the Chebyshev interpolant): correction ~ 1/alpha, its coefficient to the
    interpolant's fidelity at rho = 1."""
    esp = activations.ESP(3.0)
    la = scm.large_alpha(5, esp)
    assert la.correction_power == 1.0
    for a, rel in ((1e4, 0.06), (1e6, 0.06)):
        p = scm.equilibria(a, 5, esp, full_space=False)[0]
        lead = 2.5 * math.log(a) + la.free_energy_constant
        # the correction's M4 is a fourth derivative of the Chebyshev interpolant at its end: it moves by
        # 2.3 % between dependency legs (-1.7758 newest, -1.8174 oldest); the next order adds O(1/alpha)
        assert (p.free_energy - lead) * a == pytest.approx(la.correction, rel=rel)
    with pytest.raises(ValueError, match="continuous"):
        scm.large_alpha(5, np.sign)
    with pytest.raises(ValueError, match="nonlinear"):
        scm.large_alpha(5, "linear")


# ------------------------------------------------------------------------------ item 3 and 4
@pytest.mark.parametrize("alpha,K", [(1e4, 5), (1e6, 5), (1e8, 5), (10, 1e6), (10, 10 ** 7), (1e4, 10 ** 7)])
def test_items_3_and_4_answer(alpha, K):
    eq = scm.equilibria(alpha, K, "erf")
    assert eq and eq[0].site_symmetric_stable
    if alpha >= 1e4:
        assert eq[0].branch == "specialized" and eq[0].R > 0.99
    if alpha == 1e4 and K == 5:
        assert eq[0].R == pytest.approx(0.99918, abs=1e-5) and eq[0].free_energy == pytest.approx(19.750, abs=1e-3)
    if alpha == 10:
        assert [p.branch for p in eq] == ["unspecialized"]
    assert eq[0].full_space_stable


def test_learning_curve_keeps_the_specialized_branch_to_large_alpha():
    lc = scm.learning_curve(5, "erf", alphas=np.linspace(0, 1e4, 101))
    tr = scm.transitions(5, "erf")
    P = lc.branches["specialized"]
    assert P.exists[lc.alpha >= tr.alpha_s].all()
    np.testing.assert_array_equal(lc.equilibrium["branch"] == "specialized", lc.alpha > tr.alpha_c)


def test_full_space_at_K_1e4_in_small_memory():
    """Item 4: the full-space stability at K = 1e4 (a dense Hessian would have 1.5e8 rows) from the S_K blocks."""
    tracemalloc.start()
    eq = scm.equilibria(10, 10 ** 4, "erf")
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 50e6
    p = eq[0]
    mult = {k: v[1] for k, v in p.full_space_blocks.items()}
    assert mult == {"trivial": 1, "standard": 9999, "[K-2,1,1]": 9999 * 9998 // 2, "[K-2,2]": 10 ** 4 * 9997 // 2}
    assert sum(len(v[0]) * v[1] for v in p.full_space_blocks.values()) == 10 ** 8 + 10 ** 4 * 9999 // 2


# ------------------------------------------------------------------------------ full space: blocks vs dense
@pytest.mark.parametrize("act", ["erf", "relu"])
def test_full_space_blocks_match_dense_hessian_up_to_K_20(act):
    """Every S_K block eigenvalue, with its multiplicity, against the eigenvalues of the dense Hessian in
    the K^2 + K(K-1)/2 individual overlaps, K = 2..20, at a specialized, an anti-specialized and an R = S point:
    to 1e-10 of the largest eigenvalue."""
    info = activation_info(act)
    for K in range(2, 21):
        for a, R, S, C in ((50.0, 0.72, 0.068, -0.00035), (70.0, -0.33, 0.33, 0.007), (3.0, 0.1, 0.1, -0.01)):
            try:
                g, H = scm.advanced.full_hessian(a, K, R, S, C, act)
            except ValueError:      # outside the domain at this K
                continue
            ev = np.sort(np.linalg.eigvalsh(H))
            bl = _full_blocks(info, a, K, R, S, C)
            evb = np.sort(np.concatenate([np.repeat(v, m) for v, m in bl.values()]))
            assert evb.size == ev.size == K * K + K * (K - 1) // 2
            np.testing.assert_allclose(evb, ev, rtol=0, atol=1e-10 * np.max(np.abs(ev)))


def test_full_space_blocks_at_large_K_in_extended_precision():
    """Beyond K = 20 (or where a1 a2 is small) the blocks are formed in mpmath: against the same formulas at
    60 digits, the float path would lose ~1e-3 of the smallest eigenvalue at K = 1e7, alpha = 1e4."""
    info = activation_info("erf")
    p = scm.equilibria(1e4, 10 ** 7, "erf")[0]
    bl = p.full_space_blocks
    d2 = _second_moments(info, p.R, p.S, p.C, p.one_minus_R)
    with mp.workdps(90):
        f = mp.mpf
        blocks = _block_matrices(f(1e4), 10 ** 7, 1 - f(p.one_minus_R), f(p.S), f(p.C), f(p.a1), f(p.a2),
                                 tuple(f(x) for x in d2))
        for k, (Hb, G, mult) in blocks.items():
            n = Hb.shape[0]
            L = mp.cholesky(mp.matrix([[G[i, j] for j in range(n)] for i in range(n)]))
            Li = L ** -1
            ev = mp.eigsy(Li * mp.matrix([[Hb[i, j] for j in range(n)] for i in range(n)]) * Li.T, eigvals_only=True)
            np.testing.assert_allclose(bl[k][0], sorted(float(x) for x in ev), rtol=1e-12)
            assert bl[k][1] == mult
    assert p.full_space_stable


def test_full_hessian_domain():
    with pytest.raises(ValueError, match="K"):
        scm.advanced.full_hessian(1.0, 41, 0.1, 0.1, 0.0)
    with pytest.raises(ValueError, match="K"):
        scm.advanced.full_hessian(1.0, 2.5, 0.1, 0.1, 0.0)


# ------------------------------------------------------------------------------ result protocol
def test_learning_curve_and_transitions_are_results():
    lc = scm.learning_curve(5, "erf", np.linspace(0, 1e4, 1001))
    assert len(repr(lc)) < REPR_LIMIT
    d = lc.to_dict()
    assert json.loads(json.dumps(d)) == d
    assert d["type"] == "LearningCurve" and d["converged"] is True
    for K in (5, math.inf):
        tr = scm.transitions(K, "erf")
        assert len(repr(tr)) < REPR_LIMIT
        d = tr.to_dict()
        assert json.loads(json.dumps(d)) == d
        assert 0 < tr.error < 1e-9 * tr.alpha_c and tr.headline == "alpha_c"
    la = scm.large_alpha(5, "erf")
    assert json.loads(json.dumps(la.to_dict())) == la.to_dict()


# ------------------------------------------------------------------------------ domains and errors
def test_domains_are_checked_at_the_door():
    with pytest.raises(ValueError, match="K"):
        scm.equilibria(10.0, 1.5)
    with pytest.raises(ValueError, match="K"):
        scm.learning_curve(1.5)
    with pytest.raises(ValueError, match="alpha"):
        scm.equilibria(1e101, 5)
    with pytest.raises(ValueError, match="K"):
        scm.equilibria(1.0, 1e16)
    with pytest.raises(TypeError, match="alpha"):
        scm.equilibria("1", 5)
    with pytest.raises(TypeError, match="K"):
        scm.free_energy(1.0, None, 0.1, 0.1, 0.0)


def test_cli_equilibria_answers_and_never_prints_an_empty_list(monkeypatch, capsys):
    p = subprocess.run([sys.executable, "-m", "statmech", "scm", "equilibria", "--alpha", "1e6", "--K", "5", "--json"],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert d["results"][0]["branch"] == "specialized" and d["results"][0]["R"] > 0.99999
    assert {"converged", "ansatz", "error", "rs_stable", "stability"} <= set(d["results"][0])
    from statmech.cli import main
    monkeypatch.setattr(scm, "equilibria", lambda *a, **k: ())
    assert main(["scm", "equilibria", "--alpha", "1e6", "--K", "5", "--json"]) == 1
    out = capsys.readouterr()
    assert out.out == "" and len(out.err.strip().splitlines()) == 1

    def fail(*a, **k):
        raise ConvergenceError("equilibria: no minimum of beta f found at alpha=1.0, K=5.0")
    monkeypatch.setattr(scm, "equilibria", fail)
    assert main(["scm", "equilibria", "--alpha", "1", "--K", "5"]) == 1
    out = capsys.readouterr()
    assert out.out == "" and len(out.err.strip().splitlines()) == 1
