"""Online learning (Saad-Solla ODEs): statmech vs a straightforward scipy implementation, and pyscm.

Baseline = what a user would write: the ODE right-hand side in numpy (the closed-form erf integrals,
vectorized over the (p, q) sums, a Python loop over the student pairs) integrated by
scipy.integrate.solve_ivp (DOP853), at the tolerance that gives eps_g to 1e-8 along the trajectory
(checked against a reference at rtol 1e-13).  pyscm (sgoldt/pyscm, Cython Euler integrator, erf) is
timed when it has been built outside the repository (PYSCM_PATH pointing at the built package, e.g.
``git clone``, ``python setup.py build_ext --inplace`` in a temporary directory); otherwise its rows are
skipped.  K = M = 100 to alpha = 1e4 from a site-symmetric start uses the reduced ODEs.
"""
from __future__ import annotations

import math
import os
import sys
import time
from pathlib import Path

import numpy as np
from scipy.integrate import solve_ivp

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import best_time  # noqa: E402

from statmech import scm  # noqa: E402


def _C(y, K, M):
    iu = np.triu_indices(K)
    Q = np.zeros((K, K))
    Q[iu] = y[:len(iu[0])]
    Q = Q + np.triu(Q, 1).T
    R = y[len(iu[0]):].reshape(K, M)
    return np.block([[Q, R], [R.T, np.eye(M)]])


def _baseline_rhs(K, M, lr):
    iu = np.triu_indices(K)
    w = np.concatenate([-np.ones(K), np.ones(M)])

    def f(t, y):
        C = _C(y, K, M)
        d = np.diag(C)
        S = np.empty((K, K + M))                  # S[i, b] = sum_p w_p I3(i, b, p)
        for i in range(K):
            lam3 = (1 + d[i]) * (1 + d) - C[i] ** 2
            I3 = 2 / np.pi * (C * (1 + d[i]) - np.outer(C[i], C[i])) / ((1 + d[i]) * np.sqrt(lam3))[None, :]
            S[i] = I3 @ w
        dQ = np.zeros((K, K))
        for i in range(K):
            for k in range(i, K):
                l4 = (1 + d[i]) * (1 + d[k]) - C[i, k] ** 2
                A = np.linalg.inv(np.eye(2) + C[np.ix_([i, k], [i, k])])
                V = C[:, [i, k]]
                Cp = C - V @ A @ V.T
                dp = np.sqrt(1 + np.diag(Cp))
                i4 = 4 / np.pi ** 2 / np.sqrt(l4) * np.arcsin(np.clip(Cp / np.outer(dp, dp), -1, 1))
                dQ[i, k] = lr * (S[i, k] + S[k, i]) + lr ** 2 * (w @ i4 @ w)
        return np.concatenate([dQ[iu], lr * S[:, K:].ravel()])
    return f


def _eps(y, K, M):
    C = _C(y, K, M)
    d = np.sqrt(1 + np.diag(C))
    w = np.concatenate([-np.ones(K), np.ones(M)])
    return 0.5 * w @ (2 / np.pi * np.arcsin(np.clip(C / np.outer(d, d), -1, 1))) @ w


def _init(K, M, seed=1):
    rng = np.random.default_rng(seed)
    return 0.2 * np.eye(K), 1e-3 * rng.standard_normal((K, M))


def _baseline(K, M, lr, alphas, rtol):
    Q0, R0 = _init(K, M)
    y0 = np.concatenate([Q0[np.triu_indices(K)], R0.ravel()])
    sol = solve_ivp(_baseline_rhs(K, M, lr), (0, alphas[-1]), y0, method="DOP853", t_eval=alphas, rtol=rtol,
                    atol=rtol * 1e-3)
    return sol


def run():
    rows = []
    for K, amax in ((2, 1000.0), (10, 2000.0)):
        M, lr = K, (0.5 if K == 2 else 0.05)
        al = np.geomspace(1, amax, 40)
        Q0, R0 = _init(K, M)
        ref = scm.online(K, M, "erf", lr, al, Q0=Q0, R0=R0, rtol=1e-13, atol=1e-15, estimate_error=False)
        # statmech: the loosest rtol of 1e-9 .. 1e-12 with eps_g within 1e-8 of the reference
        for rt in (1e-9, 1e-10, 1e-11, 1e-12):
            tr = scm.online(K, M, "erf", lr, al, Q0=Q0, R0=R0, rtol=rt, estimate_error=False)
            if np.abs(tr.eps_g - ref.eps_g).max() <= 1e-8:
                break
        t_sm = best_time(lambda: scm.online(K, M, "erf", lr, al, Q0=Q0, R0=R0, rtol=rt, estimate_error=False),
                         repeat=3, min_time=0.05)
        err_sm = float(np.abs(tr.eps_g - ref.eps_g).max())
        # baseline: same criterion
        for brt in (1e-9, 1e-10, 1e-11, 1e-12):
            t0 = time.perf_counter()
            sol = _baseline(K, M, lr, al, brt)
            t_base = time.perf_counter() - t0
            eb = np.array([_eps(y, K, M) for y in sol.y.T])
            if np.abs(eb - ref.eps_g).max() <= 1e-8:
                break
        rows.append(dict(name=f"trajectory erf K=M={K}, alpha to {amax:g}, eps_g to 1e-8", statmech_s=t_sm,
                         baseline_s=t_base, ratio=t_base / t_sm, rel_diff=err_sm,
                         notes=f"statmech rtol {rt:g} ({tr.n_rhs} rhs); baseline solve_ivp DOP853 rtol {brt:g} "
                               f"with numpy integrals; rel_diff: max |eps_g - ref| of statmech"))
    # K = M = 100 site-symmetric to 1e4
    K = 100
    Q0 = 0.1 * np.eye(K)
    R0 = 1e-3 * np.eye(K) + 0.9e-3 * (np.ones((K, K)) - np.eye(K))
    t100 = best_time(lambda: scm.online(K, K, "erf", 0.01, np.geomspace(1, 1e4, 100), Q0=Q0, R0=R0,
                                        estimate_error=False), repeat=3, min_time=0.05)
    rows.append(dict(name="trajectory erf K=M=100 to alpha=1e4 (site-symmetric start, reduced ODEs)", statmech_s=t100,
                     notes="goal: < 10 s"))
    # pyscm
    path = os.environ.get("PYSCM_PATH")
    if path and Path(path).exists():
        sys.path.insert(0, path)
        try:
            from scm.ode import scm_ode_erf            # noqa: F401  (pyscm's own package)
        except ImportError:
            path = None
    else:
        path = None
    if path:
        for K, amax in ((2, 100.0), (10, 20.0)):
            Q0, R0 = _init(K, K)
            lr = 0.5 if K == 2 else 0.05
            t0 = time.perf_counter()
            scm_ode_erf.propagate(amax, 0.01, 2 * K, 0.0, Q0.copy(), R0.copy(), np.eye(K), lr, 0.0, 0.0, 0)
            t_py = time.perf_counter() - t0
            t_sm = best_time(lambda: scm.online(K, K, "erf", lr, [amax], Q0=Q0, R0=R0, estimate_error=False), repeat=3)
            rows.append(dict(name=f"pyscm Euler dt=0.01 vs statmech, erf K=M={K} to alpha={amax:g}", statmech_s=t_sm,
                             baseline_s=t_py, ratio=t_py / t_sm, notes="pyscm: first-order Euler at its default step"))
    return rows

