"""Perceptron saddle points: statmech vs the straightforward scipy implementation.

Baseline = what a user would write from the equations: scipy.integrate.quad over the
real line (tolerances tightened to reach ~1e-12, i.e. the accuracy statmech reports),
scipy.optimize.fsolve for the saddle point, brentq for capacities/transitions, with
scipy.special for H, log H and the inverse Mills ratio.

The notes of the single solves compare each solve with the cost of its quadrature passes
(the limit of a solve that evaluates the channel averages that often): the pass counts
are the numba solve's own counters, the pass times are one evaluation of the channel
averages at the solution (a step pass: what a Newton step needs; a full pass: every
average of the result), called from Python.  The note of the 10^4-point row compares it
with one full pass per point (its limit: every point's result needs its full averages).
"""
from __future__ import annotations

import math
import sys
import time
from pathlib import Path

import numpy as np
from scipy import integrate, optimize, special

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import best_time  # noqa: E402

from statmech import perceptron as P  # noqa: E402
from statmech.perceptron import _common, binary_teacher_student_rs, spherical_teacher_student_rs  # noqa: E402
from statmech.perceptron._branches_nb import BS_COLS, BTS_COLS, SS_COLS, STS_COLS, TAIL_COLS  # noqa: E402
from statmech.perceptron._equations import _K  # noqa: E402
from statmech.perceptron._quadrature import _table  # noqa: E402

INF = np.inf
QUAD = dict(epsabs=1e-14, epsrel=1e-13, limit=400)
S2 = math.sqrt(2.0)


def G(x):
    return math.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)


def logH(x):
    return float(special.log_ndtr(-x))


def IM(x):
    return math.sqrt(2 / math.pi) / float(special.erfcx(x / S2))


def Hf(x):
    return 0.5 * float(special.erfc(x / S2))


def E(f):
    return integrate.quad(lambda t: G(t) * f(t), -INF, INF, **QUAD)[0]


# ---------------------------------------------------------------- baselines
def base_spherical_storage(alpha, k=0.0, q0=0.5):
    def u(q, t):
        return (k - math.sqrt(q) * t) / math.sqrt(1 - q)

    def F(x):
        q = x[0]
        if not 0 < q < 1:
            return [1e3 * (abs(q) + 1)]
        return [q / (1 - q) - alpha * E(lambda t: IM(u(q, t)) ** 2)]
    q = optimize.fsolve(F, [q0], xtol=1e-13)[0]
    ent = 0.5 * math.log(1 - q) + 0.5 * q / (1 - q) + alpha * E(lambda t: logH(u(q, t)))
    return q, ent


def base_spherical_storage_logit(alpha, k=0.0, q0=0.5):
    """q of spherical storage by fsolve in y = logit q on y = log(alpha E IM^2) (the form
    that stays accurate as q -> 1: fsolve in q returns q ~ 1e-8 at alpha = 1.99)."""
    def F(x):
        q = 1.0 / (1.0 + math.exp(-x[0]))
        s = math.sqrt(q)
        c = math.sqrt(1.0 + math.exp(x[0]))   # 1/sqrt(1-q)
        return [x[0] - math.log(alpha * E(lambda t: IM((k - s * t) * c) ** 2))]
    y = optimize.fsolve(F, [math.log(q0) - math.log1p(-q0)], xtol=1e-13)[0]
    return 1.0 / (1.0 + math.exp(-y))


def base_spherical_ts(alpha):
    def F(x):
        R = x[0]
        if not 0 < R < 1:
            return [1e3 * (abs(R) + 1)]
        return [R / math.sqrt(1 - R) - alpha / math.pi * E(lambda t: math.sqrt(2 * math.pi) * IM(math.sqrt(R) * t))]
    return optimize.fsolve(F, [0.5], xtol=1e-13)[0]


def _bin_in(qh):
    s = math.sqrt(qh)
    return E(lambda z: math.tanh(s * z) ** 2)


def base_binary_storage(alpha, k=0.0, x0=(0.4, 1.0)):
    def u(q, t):
        return (k - math.sqrt(q) * t) / math.sqrt(1 - q)

    def F(x):
        q, qh = x
        if not (0 < q < 1 and qh > 0):
            return [1e3 * (abs(q) + 1), 1e3 * (abs(qh) + 1)]
        return [q - _bin_in(qh), qh - alpha / (1 - q) * E(lambda t: IM(u(q, t)) ** 2)]
    q, qh = optimize.fsolve(F, list(x0), xtol=1e-13)
    s = math.sqrt(qh)
    ent = (-0.5 * qh * (1 - q) + E(lambda z: abs(s * z) + math.log1p(math.exp(-2 * abs(s * z))))
           + alpha * E(lambda t: logH(u(q, t))))
    return q, qh, ent


def base_binary_capacity():
    state = {"x": (0.5, 1.5)}

    def ent(alpha):
        q, qh, s = base_binary_storage(alpha, 0.0, state["x"])
        state["x"] = (q, qh)
        return s
    return optimize.brentq(ent, 0.7, 0.95, xtol=1e-13)


def base_binary_ts(alpha, x0=(0.5, 1.0)):
    def F(x):
        R, rh = x
        if not (0 < R < 1 and rh > 0):
            return [1e3 * (abs(R) + 1), 1e3 * (abs(rh) + 1)]
        s = math.sqrt(rh)
        m = E(lambda z: math.tanh(s * z + rh))
        a = math.sqrt(R / (1 - R))
        return [R - m, rh - alpha / (1 - R) * E(lambda t: 2 * G(a * t) * IM(-a * t))]
    R, rh = optimize.fsolve(F, list(x0), xtol=1e-13)
    return R, rh


def base_spherical_storage_grid(grid):
    out, q0 = [], 0.1
    for a in grid:
        q0 = base_spherical_storage(a, 0.0, q0)[0]
        out.append(q0)
    return out


def base_binary_ts_alpha_c():
    """First-order transition: brentq over alpha of the poor-branch entropy (inner fsolve)."""
    state = {"x": (0.6, 1.2)}

    def ent(alpha):
        R, rh = base_binary_ts(alpha, state["x"])
        state["x"] = (R, rh)
        s = math.sqrt(rh)
        a = math.sqrt(R / (1 - R))
        ein = E(lambda z: abs(s * z + rh) + math.log1p(math.exp(-2 * abs(s * z + rh))))
        return -0.5 * rh * (1 + R) + ein + alpha * E(lambda t: 2 * Hf(-a * t) * logH(-a * t))
    return optimize.brentq(ent, 1.15, 1.35, xtol=1e-13)


def _transition_uncached():
    binary_teacher_student_rs._bts_transition.cache_clear()
    return P.binary_teacher_student_transition()


GRID = np.linspace(0.01, 1.99, 10_000)   # alpha up to 0.995 alpha_c(0)


def base_grid_per_point(grid, n_runs=10, per=3):
    """Per-point cost of the scipy baseline warm-started along ``grid`` (as the vectorized
    call is): ``n_runs`` runs of ``per`` consecutive grid points spread over the grid, each
    run started from the scipy solution at the point before it.  Returns (seconds per point,
    {index: q}).  Solved in logit q (:func:`base_spherical_storage_logit`), accurate to the
    end of the grid."""
    ts, qs = [], {}
    for j in np.linspace(1, grid.size - per, n_runs).astype(int):
        q = base_spherical_storage_logit(grid[j - 1], 0.0, 0.5)
        t0 = time.perf_counter()
        for i in range(j, j + per):
            q = qs[i] = base_spherical_storage_logit(grid[i], 0.0, q)
        ts.append((time.perf_counter() - t0) / per)
    return float(np.mean(ts)), qs


# ---------------------------------------------------------------- the limit of a solve
def _passes(entry, cols, pts, *args):
    """(step passes, full passes) of the numba solve at the one point ``pts``."""
    r = dict(zip(cols, _common._run(entry, cols, {"x": pts[:, 0]}, pts, *args, residual=False)[0]))
    return int(r["step_passes"]), int(r["full_passes"])


def _limit_note(solve_s, passes, step, full):
    ns, nf = passes
    ts, tf = best_time(step, repeat=7), best_time(full, repeat=7)
    lim = ns * ts + nf * tf
    return (f"{ns} step passes x {1e6 * ts:.1f} us + {nf} full x {1e6 * tf:.1f} us = limit {1e6 * lim:.0f} us; "
            f"solve/limit {solve_s / lim:.2f}")


def _grid_limit_note(solve_s, q):
    """Passes per point of the 10^4-point solve and its limit: one full pass (every average
    of the result) per point, at the solutions, called from Python."""
    pts = np.stack([GRID, np.zeros_like(GRID), np.full_like(GRID, P.gardner_capacity(0.0))], axis=1)
    out = _common._run(_K.ss_solve, SS_COLS, {"alpha": GRID}, pts, -1.0, residual=False)
    ns, nf = (out[:, SS_COLS.index(c)].mean() for c in ("step_passes", "full_passes"))
    tab, off = _table()
    p = 1.0 - q

    def full():
        for i in range(q.size):
            _K.st_out_at(q[i], p[i], 0.0, tab, off)
    lim = best_time(full, repeat=3)
    return (f"{ns:.2f} step + {nf:.2f} full passes per point; one full pass per point = limit {1e3 * lim:.0f} ms; "
            f"solve/limit {solve_s / lim:.2f}")


def limits():
    """name -> (passes, step pass, full pass) at the benchmark points."""
    tab, off = _table()
    out = {}
    for kappa in (0.0, 0.2):
        r = P.spherical_storage(1.0, kappa)
        q, p = r.q, 1.0 - r.q
        out[f"ss{kappa}"] = (_passes(_K.ss_solve, SS_COLS, np.array([[1.0, kappa, P.gardner_capacity(kappa)]]), -1.0),
                             lambda q=q, p=p, k=kappa: _K.st_step_at(q, p, k, tab, off),
                             lambda q=q, p=p, k=kappa: _K.st_out_at(q, p, k, tab, off))
    R = P.spherical_teacher_student(1.0).R
    out["sts"] = (_passes(_K.sts_solve, STS_COLS, np.array([[1.0]]), -1.0, *spherical_teacher_student_rs._sts_table()),
                  lambda: _K.ts_step_at(R, 1 - R, tab, off), lambda: _K.ts_out_at(R, 1 - R, tab, off))
    r = P.binary_storage(0.6)
    q, qh = r.q, r.q_hat
    out["bs"] = (_passes(_K.bs_solve, BS_COLS, np.array([[0.6, 0.0]]), -1.0),
                 lambda: (_K.is_step_at(qh, tab, off), _K.st_step_at(q, 1 - q, 0.0, tab, off)),
                 lambda: (_K.is_in_at(qh, tab, off), _K.st_out_at(q, 1 - q, 0.0, tab, off)))
    r = P.binary_teacher_student(1.0, "poor")
    R, rh = r.R, r.R_hat
    tr, ysp, _ = binary_teacher_student_rs._bts_transition()
    out["bts"] = (_passes(_K.bts_solve, BTS_COLS, np.array([[1.0, 0.0]]), ysp, tr.alpha_spinodal,
                          *binary_teacher_student_rs._bts_poor_table()),
                  lambda: (_K.ts_in_at(rh, tab, off, False), _K.ts_step_at(R, 1 - R, tab, off)),
                  lambda: (_K.ts_in_at(rh, tab, off), _K.ts_out_at(R, 1 - R, tab, off)))
    r = P.binary_storage(P.binary_capacity(0.0))
    q, qh = r.q, r.q_hat
    out["cap"] = (_passes(_K.bs_capacity, ("alpha",) + TAIL_COLS, np.array([[0.0]])),
                  lambda: (_K.is_step_at(qh, tab, off), _K.st_step_at(q, 1 - q, 0.0, tab, off)),
                  lambda: (_K.is_in_at(qh, tab, off), _K.st_out_at(q, 1 - q, 0.0, tab, off)))
    return out


def rel(a, b):
    return abs(a - b) / abs(b)


def run():
    rows = []
    lim = limits()

    def row(name, fast, slow, value_fast, value_slow, notes="", repeat=5, limit=None):
        ts = best_time(fast, repeat=repeat)
        tb = best_time(slow, repeat=3, min_time=0.0)
        if limit is not None:
            notes = "; ".join(n for n in (notes, _limit_note(ts, *lim[limit])) if n)
        rows.append({"name": name, "statmech_s": ts, "baseline_s": tb, "ratio": tb / ts,
                     "rel_diff": rel(value_fast(), value_slow()), "notes": notes})

    row("spherical_storage(alpha=1, kappa=0): q",
        lambda: P.spherical_storage(1.0), lambda: base_spherical_storage(1.0),
        lambda: P.spherical_storage(1.0).q, lambda: base_spherical_storage(1.0)[0], limit="ss0.0")
    row("spherical_storage(alpha=1, kappa=0.2): entropy",
        lambda: P.spherical_storage(1.0, 0.2), lambda: base_spherical_storage(1.0, 0.2),
        lambda: P.spherical_storage(1.0, 0.2).entropy, lambda: base_spherical_storage(1.0, 0.2)[1], limit="ss0.2")
    row("spherical_teacher_student(alpha=1): R",
        lambda: P.spherical_teacher_student(1.0), lambda: base_spherical_ts(1.0),
        lambda: P.spherical_teacher_student(1.0).R, lambda: base_spherical_ts(1.0), limit="sts")
    row("binary_storage(alpha=0.6): q_hat",
        lambda: P.binary_storage(0.6), lambda: base_binary_storage(0.6),
        lambda: P.binary_storage(0.6).q_hat, lambda: base_binary_storage(0.6)[1], limit="bs")
    row("binary_teacher_student(alpha=1, poor branch): R",
        lambda: P.binary_teacher_student(1.0, "poor"), lambda: base_binary_ts(1.0),
        lambda: P.binary_teacher_student(1.0, "poor").R, lambda: base_binary_ts(1.0)[0], limit="bts")
    row("binary_capacity(kappa=0), zero entropy",
        lambda: P.binary_capacity(0.0), base_binary_capacity,
        lambda: P.binary_capacity(0.0), base_binary_capacity,
        notes="baseline: brentq over alpha of the entropy with inner fsolve", limit="cap")
    row("binary_teacher_student_transition(): alpha_c (and alpha_spinodal), uncached",
        _transition_uncached, base_binary_ts_alpha_c,
        lambda: _transition_uncached().alpha_c, base_binary_ts_alpha_c,
        notes="baseline computes alpha_c only: brentq over alpha with inner fsolve")
    grid = np.linspace(0.1, 1.9, 19)
    row("spherical_storage on a 19-point alpha grid (warm starts)",
        lambda: P.spherical_storage(grid), lambda: base_spherical_storage_grid(grid),
        lambda: P.spherical_storage(grid).q[-1], lambda: base_spherical_storage_grid(grid)[-1], repeat=3,
        notes="baseline warm-started along the grid too")
    ts = best_time(lambda: P.spherical_storage(GRID), repeat=3)
    per_point, qs = base_grid_per_point(GRID)
    q = P.spherical_storage(GRID).q
    grid_note = _grid_limit_note(ts, q)
    rows.append({"name": "spherical_storage on a 10^4-point alpha grid (one numba call)", "statmech_s": ts,
                 "baseline_s": per_point * GRID.size, "ratio": per_point * GRID.size / ts,
                 "rel_diff": max(rel(q[i], v) for i, v in qs.items()),
                 "notes": "alpha = linspace(0.01, 1.99, 10^4), kappa = 0; baseline: scipy fsolve in logit q warm-started "
                          "from the previous grid point, timed on 30 points spread over the grid, times 10^4; " + grid_note})
    return rows


if __name__ == "__main__":
    for r in run():
        print(r)
