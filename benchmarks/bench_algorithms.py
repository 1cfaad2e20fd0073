"""Benchmarks of the learning algorithms (stochastic perceptron, TCM Hessian).

* Stochastic perceptron, N = 1001, alpha = 0.7, full-batch gradient descent for a fixed
  number of epochs (deterministic, so both implementations follow the same trajectory):
  statmech's numba kernel vs the straightforward numpy/scipy implementation
  (``scipy.special.log_ndtr`` / ``ndtr`` for the loss and its gradient).
* TCM exact Hessian (N = 303, K = 3) vs the finite-difference Hessian of the gradient a
  user would write: forward differences of the analytic gradient (``scipy.optimize.approx_fprime``
  on ``tcm_loss``, step 1e-6, N + 1 gradient evaluations, accurate to ~1e-7 relative).  The exact
  Hessian pins BLAS to one thread itself (statmech._blas): with two OpenBLAS threads on the busy
  machine its six small GEMMs took 25-234 ms instead of 2 ms (docs/algorithms.md, Benchmarks).

Single-threaded BLAS (``OPENBLAS_NUM_THREADS=1``) still steadies the numpy baselines on a shared
machine.
"""
import math
import sys
from pathlib import Path

import numpy as np
from scipy import optimize, special

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import best_time  # noqa: E402


def _numpy_sp(X, y, m, eta, epochs, batch=None, rng=None):
    """Plain numpy/scipy stochastic perceptron (loss Eq. 2.57, clipped updates Eq. 2.51)."""
    m = m.copy()
    P, N = X.shape
    batch = batch or P
    for _ in range(epochs):
        order = rng.permutation(P) if rng is not None else np.arange(P)
        for b0 in range(0, P, batch):
            idx = order[b0:b0 + batch]
            Xb, yb = X[idx], y[idx]
            V = N - m @ m
            x = yb * (Xb @ m) / math.sqrt(V)
            r = np.exp(-0.5 * x * x - 0.5 * math.log(2 * math.pi) - special.log_ndtr(x))  # G(x)/Phi(x)
            du = -r / math.sqrt(V)          # d ell / du
            dV = r * x / (2 * V)            # d ell / dV
            grad = (Xb.T @ (du * yb) - 2.0 * m * dV.sum()) / len(idx)
            m = np.clip(m - eta * grad, -1.0, 1.0)
    return m


def run():
    from statmech.simulate import algorithms as A
    from statmech.simulate import tcm_paths as T

    rows = []
    N, epochs = 1001, 30
    X, y, _ = A.random_binary_instance(N, 0.7, seed=1)
    m0 = np.random.default_rng(0).uniform(-0.1, 0.1, N)
    eta = 0.1 * math.sqrt(N)
    P = len(y)

    def ours():
        return A.stochastic_perceptron(X, y, m0=m0, eta=eta, batch=P, max_epochs=epochs).m

    Xf, yf = X.astype(float), y.astype(float)

    def base():
        return _numpy_sp(Xf, yf, m0, eta, epochs)

    m1, m2 = ours(), base()
    t1, t2 = best_time(ours, repeat=3), best_time(base, repeat=3)
    rows.append({"name": f"stochastic perceptron, N={N}, alpha=0.7, {epochs} full-batch epochs",
                 "statmech_s": t1, "baseline_s": t2, "ratio": t2 / t1,
                 "rel_diff": float(np.max(np.abs(m1 - m2))),
                 "notes": "numba + int8 patterns vs numpy/scipy.special; max |m diff|"})

    b = P // 10

    def ours_mb():
        return A.stochastic_perceptron(X, y, m0=m0, eta=eta, batch=b, max_epochs=epochs, seed=0)

    def base_mb():
        return _numpy_sp(Xf, yf, m0, eta, epochs, batch=b, rng=np.random.default_rng(0))

    L1 = A.stochastic_perceptron_loss(ours_mb().m, X, y)[0]
    L2 = A.stochastic_perceptron_loss(base_mb(), X, y)[0]
    t1, t2 = best_time(ours_mb, repeat=3), best_time(base_mb, repeat=3)
    rows.append({"name": f"stochastic perceptron, N={N}, alpha=0.7, {epochs} epochs, minibatch {b}",
                 "statmech_s": t1, "baseline_s": t2, "ratio": t2 / t1, "rel_diff": abs(L1 - L2) / L2,
                 "notes": "different minibatch orders: rel. diff. of the final loss (statistical)"})

    d = T.tcm_instance(303, 3, 0.5, seed=3)
    W = np.random.default_rng(1).standard_normal((3, 101))

    def hess():
        return T.tcm_hessian(W, d["patterns"], d["labels"], 3)

    def hess_fd():
        f = lambda w: T.tcm_loss(w.reshape(3, 101), d["patterns"], d["labels"], 3)[1].ravel()
        return optimize.approx_fprime(W.ravel(), f, 1e-6)

    H1, H2 = hess(), hess_fd()
    t1, t2 = best_time(hess, repeat=3), best_time(hess_fd, repeat=1)
    rows.append({"name": "TCM exact Hessian, N=303, K=3, P=152", "statmech_s": t1, "baseline_s": t2,
                 "ratio": t2 / t1, "rel_diff": float(np.max(np.abs(H1 - H2)) / np.max(np.abs(H1))),
                 "notes": "block GEMMs (2K-1) vs forward differences of the analytic gradient (approx_fprime, step 1e-6)"})
    return rows


if __name__ == "__main__":
    for r in run():
        print(r)
