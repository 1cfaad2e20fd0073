"""Soft committee machines: statmech vs the straightforward scipy implementation.

Baseline = what a user would write from the paper's equations: beta f(R, S, C) in numpy
(eps_g and s by hand), scipy.optimize.minimize (BFGS, numerical gradient) at every alpha for
every branch, warm-started from the previous alpha, and the Hessian eigenvalues by finite
differences (scipy.optimize.approx_fprime of the gradient) for the stability.
"""
from __future__ import annotations

import math
import sys
import time
from pathlib import Path

import numpy as np
from scipy import optimize

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import best_time  # noqa: E402

from statmech import scm  # noqa: E402


def relu_m(r):
    return r / 4 + (math.sqrt(max(0.0, 1 - r * r)) + r * math.asin(r)) / (2 * math.pi)


def erf_m(r):
    return 2 / math.pi * math.asin(r / 2)


def bf(x, alpha, K, m):
    R, S, C = x
    a1 = 1 + (K - 1) * C - (R + (K - 1) * S) ** 2
    a2 = 1 - C - (R - S) ** 2
    if a1 <= 0 or a2 <= 0 or abs(R) >= 1 or abs(S) >= 1 or abs(C) >= 1:
        return 1e10
    eps = m(1.0) - m(R) + (K - 1) / 2 * (m(C) + m(0.0) - 2 * m(S))
    s = 0.5 * math.log(a1) + (K - 1) / 2 * math.log(a2)
    return alpha * K * eps - s


def baseline_curve(K, m, alphas, starts):
    """Per-point minimize for each branch (warm start) + finite-difference Hessian eigenvalues."""
    out = {}
    for name, x0 in starts.items():
        x = np.array(x0, dtype=float)
        rows = []
        for a in (alphas if name == "unspecialized" else alphas[::-1]):
            r = optimize.minimize(bf, x, args=(a, K, m), method="BFGS", options={"gtol": 1e-10})
            x = r.x
            g = lambda y: optimize.approx_fprime(y, bf, 1e-7, a, K, m)
            Hm = np.array([optimize.approx_fprime(x, lambda y, i=i: g(y)[i], 1e-5) for i in range(3)])
            rows.append((a, *x, np.linalg.eigvalsh(0.5 * (Hm + Hm.T))[0]))
        out[name] = np.array(sorted(rows))
    return out


def run():
    rows = []
    # ---- learning curve K = 10 ReLU, 1000 alphas, all branches with stability
    alphas = np.linspace(0.0, 30.0, 1000)
    lc = scm.learning_curve(10, "relu", alphas)
    t_sm = best_time(lambda: scm.learning_curve(10, "relu", alphas), repeat=5)
    sub = alphas[::10]  # baseline on 100 alphas, timing scaled x10
    P, N = lc.branches["specialized"], lc.branches["anti-specialized"]
    starts = {"unspecialized": [0.0, 0.0, 0.0], "specialized": [P.R[-1], P.S[-1], P.C[-1]],
              "anti-specialized": [N.R[-1], N.S[-1], N.C[-1]]}
    t0 = time.perf_counter()
    base = baseline_curve(10, relu_m, sub, starts)
    t_base = 10 * (time.perf_counter() - t0)
    i = np.searchsorted(sub, 20.0)
    j = np.searchsorted(alphas, sub[i])
    rel = abs(base["specialized"][i, 1] - P.R[j]) / abs(P.R[j])
    rows.append(dict(name="learning_curve K=10 ReLU, 1000 alpha, 3 branches + Hessians", statmech_s=t_sm,
                     baseline_s=t_base, ratio=t_base / t_sm, rel_diff=rel,
                     notes="baseline: BFGS per point per branch (warm start) + FD Hessian; timed on 100 alphas x10; "
                           "rel_diff of R (specialized, alpha=20) is the BFGS tolerance"))
    # ---- transitions K = 2..50: continuation engine (two-parameter lines in K), direct solver
    for act in ("erf", "relu"):
        scm.transitions([3, 4], act, method="continuation")
        t0 = time.perf_counter()
        sw = scm.transitions(list(range(2, 51)), act, method="continuation")
        t_sw = time.perf_counter() - t0
        dr = scm.transitions(list(range(2, 51)), act, method="direct")
        rel = max(abs(getattr(a, k) - getattr(b, k)) / getattr(b, k) for a, b in zip(sw, dr)
                  for k in ("alpha_s", "alpha_c", "alpha_d"))
        rows.append(dict(name=f"transitions K=2..50 {act} (continuation engine, lines in K)", statmech_s=t_sw,
                         baseline_s=None, ratio=None, rel_diff=rel,
                         notes="rel_diff: max over K and alpha_s/c/d vs the direct solver"))
    for act in ("erf", "relu"):
        t0 = time.perf_counter()
        for K in range(2, 51):
            scm.transitions(K, act, method="direct")
        t_dir = time.perf_counter() - t0
        rows.append(dict(name=f"transitions K=2..50 {act} (direct)", statmech_s=t_dir, baseline_s=None, ratio=None,
                         rel_diff=None, notes="49 values of K, alpha_s/alpha_c/alpha_d/order each"))
    t0 = time.perf_counter()
    cont = [scm.transitions(K, "erf", method="continuation") for K in (3, 5)]
    t_cont = (time.perf_counter() - t0) / 2
    dire = [scm.transitions(K, "erf", method="direct") for K in (3, 5)]
    rel = max(abs(c.alpha_c - d.alpha_c) / d.alpha_c for c, d in zip(cont, dire))
    rows.append(dict(name="transitions(K) erf via continuation engine (per K)", statmech_s=t_cont, baseline_s=None,
                     ratio=None, rel_diff=rel, notes="rel_diff: alpha_c continuation vs direct, K = 3, 5"))
    # ---- alpha_c(K=2, erf): brentq on the FD Hessian of the minimize()'d unspecialized state
    def lam(a):
        r = optimize.minimize(lambda y: bf([y[0], y[0], y[1]], a, 2, erf_m), [0.4, 0.0], method="BFGS",
                              options={"gtol": 1e-11})
        x = np.array([r.x[0], r.x[0], r.x[1]])
        g = lambda y: optimize.approx_fprime(y, bf, 1e-7, a, 2, erf_m)
        Hm = np.array([optimize.approx_fprime(x, lambda y, i=i: g(y)[i], 1e-5) for i in range(3)])
        return np.linalg.eigvalsh(0.5 * (Hm + Hm.T))[0]
    t0 = time.perf_counter()
    ab = optimize.brentq(lam, 15.0, 30.0, xtol=1e-10)
    t_b = time.perf_counter() - t0
    t_s = best_time(lambda: scm.transitions(2, "erf", method="direct"), repeat=3)
    exact = scm.transitions(2, "erf", method="direct").alpha_c
    rows.append(dict(name="alpha_c(K=2, erf) = 23.675957245", statmech_s=t_s, baseline_s=t_b, ratio=t_b / t_s,
                     rel_diff=abs(ab - exact) / exact, notes="baseline: brentq on FD-Hessian eigenvalue of BFGS minimum"))
    # ---- the global minimum at large alpha: equilibria vs a random-restart minimize of the numpy beta f
    def baseline_global(a, K, m, restarts=20, seed=0):
        rng = np.random.default_rng(seed)
        best = math.inf
        for _ in range(restarts):
            while True:
                x0 = rng.uniform(-1, 1, 3)
                if bf(x0, a, K, m) < 1e10:
                    break
            r = optimize.minimize(bf, x0, args=(a, K, m), method="Nelder-Mead",
                                  options={"xatol": 1e-12, "fatol": 1e-14, "maxfev": 8000})
            r = optimize.minimize(bf, r.x, args=(a, K, m), method="BFGS", options={"gtol": 1e-10})
            best = min(best, r.fun)
        return best
    for a in (1e4, 1e8):
        scm.equilibria(a, 5, "erf", full_space=False)
        t_sm = best_time(lambda: scm.equilibria(a, 5, "erf", full_space=False), repeat=3)
        f_sm = scm.equilibria(a, 5, "erf", full_space=False)[0].free_energy
        t0 = time.perf_counter()
        f_b = baseline_global(a, 5, erf_m)
        t_b = time.perf_counter() - t0
        rows.append(dict(name=f"global minimum, erf K=5, alpha={a:g} (equilibria)", statmech_s=t_sm, baseline_s=t_b,
                         ratio=t_b / t_sm, rel_diff=(f_b - f_sm) / abs(f_sm),
                         notes="baseline: 20 random restarts of Nelder-Mead + BFGS on the numpy beta f; rel_diff = "
                               "(baseline - statmech) / statmech beta f, > 0: the baseline stops above the minimum"))
    # ---- full-space stability: S_K blocks vs the dense Hessian's eigenvalues
    from statmech.scm._activation import activation_info
    from statmech.scm._full_space import _full_blocks
    info = activation_info("erf")
    p = scm.equilibria(50.0, 20, "erf")[0]
    t_bl = best_time(lambda: _full_blocks(info, 50.0, 20, p.R, p.S, p.C), repeat=5)
    t0 = time.perf_counter()
    g, Hm = scm.advanced.full_hessian(50.0, 20, p.R, p.S, p.C, "erf")
    ev = np.linalg.eigvalsh(Hm)
    t_d = time.perf_counter() - t0
    bl = _full_blocks(info, 50.0, 20, p.R, p.S, p.C)
    evb = np.sort(np.concatenate([np.repeat(v, m) for v, m in bl.values()]))
    rows.append(dict(name="full-space Hessian eigenvalues K=20 (S_K blocks)", statmech_s=t_bl, baseline_s=t_d,
                     ratio=t_d / t_bl, rel_diff=float(np.max(np.abs(evb - np.sort(ev))) / np.max(np.abs(ev))),
                     notes="baseline: dense 590 x 590 Hessian + eigvalsh; at K = 1e4 the dense matrix would have "
                           "1.5e8 rows, the blocks take the same time (mpmath beyond K = 20)"))
    t_big = best_time(lambda: scm.equilibria(10.0, 10 ** 4, "erf"), repeat=3)
    rows.append(dict(name="equilibria(10, K=1e4) with full-space stability", statmech_s=t_big, baseline_s=None,
                     ratio=None, rel_diff=None, notes="the case that needed 23 GB with dense blocks"))
    return rows


if __name__ == "__main__":
    for r in run():
        print(r)
