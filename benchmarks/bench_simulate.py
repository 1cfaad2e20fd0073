"""Perceptron simulation backends against the straightforward numpy/scipy implementations.

* Ising enumeration (numba Gray code, O(P) per vector) vs numpy brute force (all 2^N
  vectors times the P patterns, in blocks), N = 20, P = 12.
* Maximal margin of a spherical-storage instance: least-distance program by NNLS vs
  scipy.optimize.minimize (SLSQP) on ``max t s.t. A w >= t, |w|^2 = N``, N = 60, P = 45.
* Coordinate hit-and-run sweep (numba) vs a plain numpy loop doing the same moves, N = 60, P = 120.
"""
from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import best_time  # noqa: E402


def _bench_enumeration(dist="binary"):
    from statmech.simulate import enumeration as en
    rng = np.random.default_rng(0)
    N, P = 20, 12
    xi = 2.0 * rng.integers(0, 2, size=(P, N)) - 1.0 if dist == "binary" else rng.standard_normal((P, N))
    sig = 2.0 * rng.integers(0, 2, size=P) - 1.0

    def numpy_brute():
        out = []
        A = sig[:, None] * xi
        for start in range(0, 2 ** N, 1 << 16):
            codes = np.arange(start, start + (1 << 16))
            W = 2.0 * ((codes[:, None] >> np.arange(N)) & 1) - 1.0
            ok = np.all(W @ A.T > 0, axis=1)
            out.append(codes[ok])
        return np.concatenate(out)

    a = en.solutions_bitmask(xi, sig)
    b = numpy_brute()
    t1 = best_time(lambda: en.solutions_bitmask(xi, sig), repeat=3)
    t0 = best_time(numpy_brute, repeat=3)
    path = "popcount path" if dist == "binary" else "Gray-code incremental fields"
    return {"name": f"Ising solutions_bitmask N={N} P={P}, {dist} patterns", "statmech_s": t1, "baseline_s": t0,
            "ratio": t0 / t1, "rel_diff": 0.0 if np.array_equal(a, b) else 1.0,
            "notes": f"{path}; numpy brute force in 65536-vector blocks"}


def _bench_margin():
    from scipy.optimize import minimize
    from statmech.simulate import lp
    rng = np.random.default_rng(1)
    N, P = 60, 45
    xi = rng.standard_normal((P, N))
    sig = rng.choice([-1.0, 1.0], size=P)
    A = sig[:, None] * xi / math.sqrt(N)

    def slsqp():
        cons = [{"type": "ineq", "fun": lambda v: A @ v[:N] - v[N], "jac": lambda v: np.hstack([A, -np.ones((P, 1))])},
                {"type": "eq", "fun": lambda v: v[:N] @ v[:N] - N, "jac": lambda v: np.r_[2 * v[:N], 0.0][None, :]}]
        w0 = A.sum(axis=0)
        w0 *= math.sqrt(N) / np.linalg.norm(w0)
        res = minimize(lambda v: -v[N], np.r_[w0, (A @ w0).min()], jac=lambda v: np.r_[np.zeros(N), -1.0],
                       constraints=cons, method="SLSQP", options={"ftol": 1e-13, "maxiter": 1000})
        return res.x[N]

    k1 = lp.max_stability(xi, sig).kappa_max
    k0 = slsqp()
    t1 = best_time(lambda: lp.max_stability(xi, sig), repeat=3)
    t0 = best_time(slsqp, repeat=3)
    return {"name": f"max margin kappa_max N={N} P={P}", "statmech_s": t1, "baseline_s": t0,
            "ratio": t0 / t1, "rel_diff": float(abs(k1 - k0) / abs(k1)),
            "notes": "LDP by NNLS (certified) vs SLSQP on the spherical problem"}


def _bench_hit_and_run():
    from statmech.simulate import version_space as vs
    rng = np.random.default_rng(2)
    N, P, sweeps = 60, 120, 20
    wT = rng.standard_normal(N)
    xi = rng.standard_normal((P, N))
    A = np.sign(xi @ wT)[:, None] * xi
    x0 = 0.5 * wT / np.linalg.norm(wT)

    def numpy_loop():
        r = np.random.default_rng(3)
        x = x0.copy()
        s = A @ x
        for _ in range(sweeps * N):
            i = r.integers(N)
            a = A[:, i]
            disc = x[i] ** 2 - x @ x + 1.0
            lo, hi = -x[i] - math.sqrt(disc), -x[i] + math.sqrt(disc)
            with np.errstate(divide="ignore"):
                b = -s / a
            lo = max(lo, b[a > 0].max(initial=-np.inf))
            hi = min(hi, b[a < 0].min(initial=np.inf))
            t = lo + (hi - lo) * r.random()
            x[i] += t
            s += t * a
        return x

    t1 = best_time(lambda: vs.hit_and_run(A, x0, sweeps, seed=1), repeat=3)
    t0 = best_time(numpy_loop, repeat=3)
    return {"name": f"hit-and-run {sweeps} sweeps N={N} P={P}", "statmech_s": t1, "baseline_s": t0,
            "ratio": t0 / t1, "rel_diff": None, "notes": "same moves in a plain numpy loop (different random stream)"}


def run():
    return [_bench_enumeration("binary"), _bench_enumeration("gaussian"), _bench_margin(), _bench_hit_and_run()]


if __name__ == "__main__":
    for row in run():
        print(row)
