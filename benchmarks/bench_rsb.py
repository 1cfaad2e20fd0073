"""RSB core: statmech (numba lattice recursion + adjoint) vs a straightforward numpy/scipy Parisi PDE.

Baseline = what a user would write for the same Parisi PDE with piecewise-constant x(q)
(Gaussian-convolution steps): one uniform field grid at the finest spacing statmech uses,
each step a log-sum-exp over a sliding window (numpy ``sliding_window_view`` +
``scipy.special.logsumexp``), edge values continued by ``np.pad(mode="edge")``, the
frozen soft-hinge level in closed form with ``scipy.special.log_ndtr``; gradients by
central finite differences; minimization by ``scipy.optimize.minimize`` (BFGS).  Same
discretization of x(q), so the values agree to the lattice accuracy (column rel_diff).

Rows: one evaluation of the jammed functional at K = 16 (value; value + gradient), one
full-RSB jamming solve at kappa = -1 (grids K = 4, 8, 16, extrapolated), the baseline's
K = 8 solve (``BENCH_RSB_KMIN``) against statmech's, and the alpha_J(kappa) line at 20 kappa values on a
2-process pool (set ``BENCH_RSB_LINE=0`` to skip it: it takes minutes).
"""
from __future__ import annotations

import math
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
from scipy import optimize
from scipy.special import log_ndtr, logsumexp

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import best_time  # noqa: E402

from statmech.perceptron import spherical_rsb as PR  # noqa: E402
from statmech.rsb import kstep, parisi  # noqa: E402

KAPPA = -1.0
KMIN = int(os.environ.get("BENCH_RSB_KMIN", "8"))   # K of the minimization compared with the baseline


# ---------------------------------------------------------------- baseline (numpy/scipy)
def np_hinge_frozen(h, s2, y, kappa):
    a = kappa - h
    s = math.sqrt(s2)
    u = 1 + y * s2
    A = log_ndtr(-a / s)
    B = -0.5 * math.log(u) - y * a * a / (2 * u) + log_ndtr(a / (s * math.sqrt(u)))
    return np.logaddexp(A, B) / y


def np_jammed_R(q, y, kappa, d, R=None):
    """R = S~/(-Phi~) on one uniform grid of spacing d (the straightforward Parisi-PDE solve)."""
    R = R if R is not None else 10.0 + abs(kappa)
    n = int(math.ceil(R / d))
    h = d * np.arange(-n, n + 1)
    f = np_hinge_frozen(h, 1.0 - q[-2], y[-1], kappa)
    for i in range(len(q) - 2, 0, -1):
        s2, m = q[i] - q[i - 1], y[i - 1]
        T = int(math.ceil(10 * math.sqrt(s2) / d))
        t = d * np.arange(-T, T + 1)
        lw = -0.5 * t * t / s2
        lw -= logsumexp(lw)
        fp = np.pad(f, T, mode="edge")
        f = logsumexp(lw + m * sliding_window_view(fp, 2 * T + 1), axis=1) / m
    T = int(math.ceil(10 * math.sqrt(q[0]) / d))
    t = d * np.arange(-T, T + 1)
    w = np.exp(-0.5 * t * t / q[0])
    w /= w.sum()
    E = float(w @ f[n - T:n + T + 1])
    S = kstep.spherical_entropic(q, y, jammed=True)[0]
    return -S / E


def np_solve(K, d, x0):
    t = parisi.graded_grid(K)

    def fun(u):
        q0 = 1 / (1 + math.exp(-u[0]))
        return np_jammed_R(q0 + (1 - q0) * t, np.exp(u[1:]), KAPPA, d)

    def grad(u):  # central differences
        g = np.empty_like(u)
        for j in range(u.size):
            e = np.zeros_like(u)
            e[j] = 1e-6
            g[j] = (fun(u + e) - fun(u - e)) / 2e-6
        return g
    return optimize.minimize(fun, x0, jac=grad, method="BFGS", options={"gtol": 1e-9})


# ---------------------------------------------------------------- rows
def _jam_line(kappas):
    with ProcessPoolExecutor(2) as ex:
        return PR.gardner_capacity_rsb(np.array(kappas), "frsb", executor=ex)


def run():
    rows = []
    # one evaluation of the K = 16 functional at the full-RSB solution
    sol = PR.gardner_capacity_point(KAPPA, "frsb")
    q, y = sol.extra["q"], sol.extra["y"]
    prob = PR.JammingProblem(KAPPA)
    lat = prob.lattice(q, y)
    d = lat.delta
    v_sm = prob.evaluate(q, y, lat, grad=False)[0]
    v_np = np_jammed_R(q, y, KAPPA, d)
    t_sm = best_time(lambda: prob.evaluate(q, y, lat, grad=False))
    t_np = best_time(lambda: np_jammed_R(q, y, KAPPA, d), repeat=3, min_time=0.5)
    rows.append(dict(name="Parisi PDE, jammed perceptron K=16 (value)", statmech_s=t_sm, baseline_s=t_np,
                     ratio=t_np / t_sm, rel_diff=abs(v_sm - v_np) / abs(v_np),
                     notes=f"lattice {lat.points} pts (nested strides) vs uniform spacing {d:.2g}"))
    t_smg = best_time(lambda: prob.evaluate(q, y, lat))
    t_npg = t_np * (2 * (q.size - 1) + 1)  # central differences: 2n + 1 solves
    rows.append(dict(name="same, value + gradient (adjoint vs central differences)", statmech_s=t_smg,
                     baseline_s=t_npg, ratio=t_npg / t_smg, rel_diff=None,
                     notes="baseline time = (2n+1) x measured value time"))
    # one full-RSB solve (K = 4, 8, 16 + extrapolation)
    t_one, c_one = [], []
    for _ in range(3):
        t0, c0 = time.perf_counter(), time.process_time()
        r = PR.gardner_capacity_point(KAPPA, "frsb")
        t_one.append(time.perf_counter() - t0)
        c_one.append(time.process_time() - c0)
    alpha_K = ", ".join(f"{v:.8f}" for v in r.extra["alpha_K"])
    rows.append(dict(name="full-RSB jamming point kappa=-1 (K=4,8,16)", statmech_s=min(t_one), baseline_s=None,
                     ratio=None, rel_diff=None,
                     notes=f"cpu {min(c_one):.2f} s (wall/cpu = machine load); alpha_J={r.thermo['alpha_c']:.6f} "
                           f"+- {r.extra['error']:.1e}; alpha_K = {alpha_K}"))
    # a K = KMIN solve, both implementations from the same start
    prob4 = PR.JammingProblem(KAPPA)
    _, s1 = PR._one_rsb_jamming(KAPPA)
    q0, y1 = float(s1.q[0]), float(s1.m[0])
    t4 = parisi.graded_grid(KMIN)
    qq = q0 + (1 - q0) * t4
    x0 = 0.5 * y1 * np.sqrt((1 - q0) / (1 - 0.5 * (qq[1:] + qq[:-1])))
    u0 = np.concatenate([[math.log(q0 / (1 - q0))], np.log(x0)])
    t0 = time.perf_counter()
    s4 = parisi.solve_frsb(prob4, q0, 1.0, lambda qm: 0.5 * y1 * np.sqrt((1 - q0) / (1 - qm)), Ks=(KMIN,))
    t_sm4 = time.perf_counter() - t0
    d4 = prob4.lattice(s4.q, s4.x).delta
    t0 = time.perf_counter()
    b4 = np_solve(KMIN, d4, u0)
    t_np4 = time.perf_counter() - t0
    rows.append(dict(name=f"full-RSB jamming K={KMIN} minimization (Newton/adjoint vs BFGS/FD)", statmech_s=t_sm4,
                     baseline_s=t_np4, ratio=t_np4 / t_sm4, rel_diff=abs(b4.fun - s4.values[-1]) / s4.values[-1],
                     notes=f"{s4.values[-1]:.10f} vs {b4.fun:.10f}"))
    if os.environ.get("BENCH_RSB_LINE", "1") != "0":
        kappas = np.linspace(-2.0, -0.1, 20)
        t0 = time.perf_counter()
        _jam_line(kappas)
        rows.append(dict(name="alpha_J(kappa) full RSB, 20 kappa in [-2, -0.1], 2 processes",
                         statmech_s=time.perf_counter() - t0, baseline_s=None, ratio=None, rel_diff=None,
                         notes="goal: < 60 s"))
    return rows


if __name__ == "__main__":
    for row in run():
        print(row)
