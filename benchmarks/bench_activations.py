"""Mean-field activations and small-network Hessians: statmech vs the straightforward scipy code.

Baselines = what a user would write:
* ESP pair moment E[g(u) g(v)]: ``scipy.integrate.dblquad`` of g(x) g(rho x + s y) phi(x) phi(y)
  over the plane (split at the kinks x = 0, y = -rho x/s), tolerance 1e-11.
* ESP(beta) evaluated on 10^6 points: ``h * scipy.special.expit(beta * h)`` (numpy).
* Exact Hessian of a 10-hidden-unit ESP network on the 863-point task: forward differences of the
  exact gradient with ``scipy.optimize.approx_fprime`` (step 1e-7, P + 1 gradient evaluations), the
  only option without autograd; ``rel_diff`` = max |H_exact - H_fd| / max |H_exact| (the FD error).
  The exact Hessian is assembled layer by layer, one GEMM over the examples per block of
  parameters (statmech.simulate._net_hessian); the R-operator it replaced cost as much as the
  finite differences (docs/activations.md, Benchmarks).
"""
from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
from scipy import integrate, optimize, special

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import best_time  # noqa: E402

from statmech import activations as A  # noqa: E402
from statmech.simulate import small_networks as sn  # noqa: E402


def _dblquad_pair(beta, rho):
    s = math.sqrt(1 - rho * rho)
    g = lambda x: x * special.expit(beta * x)  # noqa: E731
    phi = lambda x: math.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)  # noqa: E731
    f = lambda y, x: g(x) * g(rho * x + s * y) * phi(x) * phi(y)  # noqa: E731
    tot = 0.0
    for lo, hi in ((-math.inf, 0.0), (0.0, math.inf)):
        for side in (0, 1):
            ylo = (lambda x: -math.inf) if side == 0 else (lambda x: -rho * x / s)
            yhi = (lambda x: -rho * x / s) if side == 0 else (lambda x: math.inf)
            tot += integrate.dblquad(f, lo, hi, ylo, yhi, epsabs=1e-11, epsrel=1e-11)[0]
    return tot


def run():
    rows = []
    # 1. pair moment
    beta, rho = 3.0, 0.6
    A._esp_pair.cache_clear()

    def ours():
        A._esp_pair.cache_clear()
        return A.ESP(beta).pair_moment(rho)
    v = ours()
    t_s = best_time(ours, repeat=3)
    t_b = best_time(lambda: _dblquad_pair(beta, rho), repeat=1, min_time=0.0)
    vb = _dblquad_pair(beta, rho)
    rows.append(dict(name="ESP pair moment E[g(u)g(v)], beta=3, rho=0.6", statmech_s=t_s, baseline_s=t_b,
                     ratio=t_b / t_s, rel_diff=abs(v - vb) / abs(v), notes="polar tanh-sinh vs dblquad 1e-11"))
    # 2. vectorized ESP
    h = np.random.default_rng(0).standard_normal(1_000_000) * 5
    t_s = best_time(lambda: A.esp(h, 1.7), repeat=3)
    t_b = best_time(lambda: h * special.expit(1.7 * h), repeat=3)
    rd = float(np.max(np.abs(A.esp(h, 1.7) - h * special.expit(1.7 * h)) / np.maximum(np.abs(h), 1e-300)))
    rows.append(dict(name="ESP h*sigma(beta h) on 1e6 points", statmech_s=t_s, baseline_s=t_b, ratio=t_b / t_s,
                     rel_diff=rd, notes="numba ufunc (with validation) vs numpy+expit"))
    # 3. exact Hessian vs finite differences of the gradient
    task = sn.nonlinear_task()
    net = sn.Network((2, 10, 1), "esp", 1.0)
    th = net.init(0)
    Hm = net.hessian(th, task)
    t_s = best_time(lambda: net.hessian(th, task), repeat=3)

    def fd():
        return optimize.approx_fprime(th, lambda x: net.loss_and_grad(x, task)[1], 1e-7)
    t_b = best_time(fd, repeat=1, min_time=0.0)
    Hfd = fd()
    rows.append(dict(name="Hessian of a 10-unit ESP net, 863 examples (41 params)", statmech_s=t_s, baseline_s=t_b,
                     ratio=t_b / t_s, rel_diff=float(np.max(np.abs(Hm - Hfd)) / np.max(np.abs(Hm))),
                     notes="layer-block GEMMs (exact) vs approx_fprime of the gradient (step 1e-7)"))
    return rows


if __name__ == "__main__":
    for r in run():
        print(r)
