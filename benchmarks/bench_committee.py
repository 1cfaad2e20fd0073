"""Tree committee machine benchmarks: statmech vs the straightforward scipy implementation."""
from __future__ import annotations

import math

import numpy as np
from scipy import integrate, special

from common import best_time


def _eq35_scipy(K):
    m = (K - 1) // 2
    H = lambda t: 0.5 * special.erfc(t / math.sqrt(2))
    f = lambda t: math.exp(-t * t / 2) / math.sqrt(2 * math.pi) * t * t * sum(
        special.comb(K - 1, j) * H(t) ** (K - 1 - j) * (1 - H(t)) ** j for j in range(m + 1))
    v, _ = integrate.quad(f, 0, np.inf, epsabs=1e-14, epsrel=1e-13, limit=200)
    return 1.0 / (K * v)


def _elnZ_scipy(q):
    """E_t ln Z for K = 3 by scipy tplquad (the K-dimensional tensor integral)."""
    x = math.sqrt(q / (1 - q))
    H = lambda u: 0.5 * special.erfc(u / math.sqrt(2))
    g = lambda t: math.exp(-t * t / 2) / math.sqrt(2 * math.pi)

    def f(t3, t2, t1):
        p1, p2, p3 = H(-x * t1), H(-x * t2), H(-x * t3)
        Z = p1 * p2 + p1 * p3 + p2 * p3 - 2 * p1 * p2 * p3
        return g(t1) * g(t2) * g(t3) * math.log(Z)
    v, _ = integrate.tplquad(f, -8, 8, -8, 8, -8, 8, epsabs=1e-9, epsrel=1e-9)
    return v


def run():
    from statmech import committee as cm
    from statmech.committee import sign_rs
    rows = []
    for K in (3, 101):
        def sm():
            sign_rs._alpha_rs_sign.cache_clear()
            return cm.tcm_capacity(K)
        a = sm()
        b = _eq35_scipy(K)
        ts = best_time(sm, repeat=3)
        tb = best_time(lambda: _eq35_scipy(K), repeat=3)
        rows.append(dict(name=f"sign RS capacity Eq. 3.5, K={K}", statmech_s=ts, baseline_s=tb, ratio=tb / ts,
                         rel_diff=abs(a - b) / abs(a), notes="statmech: tanh-sinh + betainc, 2 levels (error check)"))
    q = 0.5
    a = sign_rs._rs_averages(3, q, 3, want_hess=False)[0]
    ts = best_time(lambda: sign_rs._rs_averages(3, q, 3, want_hess=False), repeat=3)
    import time
    t0 = time.perf_counter()
    b = _elnZ_scipy(q)
    tb = time.perf_counter() - t0
    rows.append(dict(name="E_t ln Z, K=3 majority, q=0.5", statmech_s=ts, baseline_s=tb, ratio=tb / ts,
                     rel_diff=abs(a - b) / abs(a),
                     notes="statmech: multiset (permutation-symmetric) rule + log-space Poisson binomial; scipy: tplquad on [-8,8]^3"))
    # K = inf k-step jamming functional R at the ReLU 2RSB / 3RSB minima: the numba lattice recursion
    # against the straightforward dense quadrature (numpy Gauss-Legendre Nystrom, statmech.rsb.nested_quadrature),
    # both converged to ~1e-15
    from statmech.committee import large_k_rsb as L
    from statmech.rsb.nested_quadrature import jamming_ratio_quadrature
    prob = L._problem("relu", 0.0)
    kern = lambda v: float(L._relu_Q(np.asarray(v))[0])   # noqa: E731
    for k in (2, 3):
        r = cm.tcm_kstep_inf("relu", k)
        x, y = np.asarray(r.q), np.asarray(r.yhat)
        lat = prob.lattice(x, y)
        a = prob.evaluate(x, y, lat, grad=False)[0]
        b = jamming_ratio_quadrature(x, y, kern, prob.scale)
        ts = best_time(lambda: prob.evaluate(x, y, lat, grad=False), repeat=3)
        tb = best_time(lambda: jamming_ratio_quadrature(x, y, kern, prob.scale), repeat=3)
        rows.append(dict(name=f"K=inf ReLU {k}RSB jamming functional R (value)", statmech_s=ts, baseline_s=tb,
                         ratio=tb / ts, rel_diff=abs(a - b) / abs(a),
                         notes="statmech: nested lattices (numba, tilted windows); baseline: dense Gauss-Legendre "
                               "Nystrom in numpy (rsb.nested_quadrature)"))
    return rows
