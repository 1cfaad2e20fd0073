"""Tree committee machine (sign units, majority vote): least-action learning at finite N.

Least-action learning (Nilsson 1965; Mitchison & Durbin 1989): patterns are visited in
random order; when the majority output is wrong, the ``(K+1)/2 - n_correct`` wrong hidden
units with the smallest ``|field|`` are corrected with a perceptron step on their own receptive
field (the minimal change of the internal representation).  The algorithm is incomplete: a
failure does not prove that no solution exists, so the fraction of stored instances is a
LOWER bound on the true probability that a random instance is storable; it is compared with
the RS / 1RSB capacities in docs/committee.md.

Public API: :func:`tcm_output`, :func:`train_least_action`, :func:`storage_fraction`
(:class:`StorageFraction`); all are also importable from :mod:`statmech.simulate.tcm`.
Kernels are numba (cache=True) and compile on first use.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numba
import numpy as np

from ..errors import check_int, check_odd_int, check_range
from ._result import Simulation

__all__ = ["tcm_output", "train_least_action", "storage_fraction", "StorageFraction"]


@numba.njit(cache=True)
def _fields(W, x, K, n):
    h = np.empty(K)
    for l in range(K):
        s = 0.0
        for i in range(n):
            s += W[l, i] * x[l * n + i]
        h[l] = s
    return h


@numba.njit(cache=True)
def _train(xi, sigma, K, max_sweeps, seed, margin):
    np.random.seed(seed)
    P, N = xi.shape
    n = N // K
    m = (K + 1) // 2
    W = np.random.standard_normal((K, n))
    norm2 = np.empty((P, K))
    for mu in range(P):
        for l in range(K):
            s = 0.0
            for i in range(n):
                s += xi[mu, l * n + i] ** 2
            norm2[mu, l] = s
    order = np.arange(P)
    wrong = np.empty(K, dtype=np.int64)
    absf = np.empty(K)
    for sweep in range(max_sweeps):
        np.random.shuffle(order)
        errors = 0
        for k in range(P):
            mu = order[k]
            h = _fields(W, xi[mu], K, n)
            s = sigma[mu]
            ncor = 0
            nw = 0
            for l in range(K):
                if s * h[l] > 0:
                    ncor += 1
                else:
                    wrong[nw] = l
                    absf[nw] = abs(h[l])
                    nw += 1
            if ncor >= m:
                continue
            errors += 1
            need = m - ncor
            # the `need` wrong units with the smallest |h|
            idx = np.argsort(absf[:nw])
            for j in range(need):
                l = wrong[idx[j]]
                # scale of the weights of branch l sets the margin of the correction
                wn = 0.0
                for i in range(n):
                    wn += W[l, i] * W[l, i]
                target = margin * math.sqrt(wn * norm2[mu, l])
                step = (target - s * h[l]) / norm2[mu, l]
                for i in range(n):
                    W[l, i] += step * s * xi[mu, l * n + i]
        if errors == 0:
            return W, True, sweep + 1
    return W, False, max_sweeps


@numba.njit(cache=True)
def _outputs(W, xi, K):
    P, N = xi.shape
    n = N // K
    out = np.empty(P)
    for mu in range(P):
        h = _fields(W, xi[mu], K, n)
        v = 0
        for l in range(K):
            v += 1 if h[l] > 0 else -1
        out[mu] = 1.0 if v > 0 else -1.0
    return out


def tcm_output(W, xi):
    """Majority-vote outputs sign(sum_l sign(w_l . xi_l)) for patterns ``xi`` (P x N), W (K x N/K)."""
    W = np.ascontiguousarray(np.asarray(W, dtype=float))
    xi = np.ascontiguousarray(np.atleast_2d(np.asarray(xi, dtype=float)))
    K = W.shape[0]
    if xi.shape[1] != W.size:
        raise ValueError(f"xi must have N = K * (N/K) = {W.size} columns, got {xi.shape[1]}")
    return _outputs(W, xi, K)


def train_least_action(xi, sigma, K, *, max_sweeps=2000, seed=0, margin=0.1):
    """Least-action learning of a sign TCM; returns (W, stored: bool, sweeps).

    xi : (P, N) inputs, N divisible by K; sigma : (P,) labels +-1; K odd.
    ``margin`` is the normalized stability sigma ``w_l.xi_l/(|w_l| |xi_l|)`` (a cosine) to which a
    corrected hidden unit is relaxed; 0.1 worked best in our tests (0.0 cycles, 0.3 overshoots).
    """
    K = check_odd_int("K", K)
    xi = np.ascontiguousarray(np.asarray(xi, dtype=float))
    sigma = np.ascontiguousarray(np.asarray(sigma, dtype=float))
    if xi.ndim != 2 or xi.shape[1] % K:
        raise ValueError(f"xi must be a (P, N) array with N divisible by K={K}, got shape {xi.shape}")
    if sigma.shape != (xi.shape[0],) or not np.all(np.abs(sigma) == 1):
        raise ValueError("sigma must be a length-P array of +-1 labels")
    max_sweeps = check_int("max_sweeps", max_sweeps, 1)
    check_range("margin", margin, 0.0, 1.0)
    W, ok, sweeps = _train(xi, sigma, K, max_sweeps, int(seed), float(margin))
    return W, bool(ok), int(sweeps)


@dataclass(frozen=True, repr=False)
class StorageFraction(Simulation):
    """Fraction of random instances stored by least-action learning at each alpha.

    Protocol: the headline is ``fraction`` with ``error`` = ``stderr`` (binomial, one per
    alpha); ``iterations`` = the instances trained (``n_instances`` per alpha); ``converged``
    True (an instance not stored within ``max_sweeps`` is an outcome, counted in the
    fraction); ``residual`` 0.0; ``ansatz`` ``"-"``.
    """
    alpha: np.ndarray
    fraction: np.ndarray
    stderr: np.ndarray
    K: int
    N: int
    n_instances: int
    max_sweeps: int

    headline = "fraction"
    converged = True
    residual = 0.0

    @property
    def error(self):
        """The binomial standard error of ``fraction``."""
        return self.stderr

    @property
    def iterations(self):
        """The instances trained, over all alphas."""
        return int(self.n_instances) * int(np.size(self.alpha))


def storage_fraction(alpha, K=3, N=45, n_instances=40, *, max_sweeps=2000, restarts=1, seed=0,
                     progress=False):
    """Fraction of random (+-1 inputs, random labels) instances with P = round(alpha N) that
    least-action learning stores, with its binomial standard error.

    An instance counts as stored if any of ``restarts`` runs (different initial weights)
    reaches zero training errors within ``max_sweeps`` sweeps.
    """
    K = check_odd_int("K", K)
    N = check_int("N", N, K)
    if N % K:
        raise ValueError(f"N must be divisible by K={K}, got {N}")
    n_instances = check_int("n_instances", n_instances, 1)
    restarts = check_int("restarts", restarts, 1)
    a = np.atleast_1d(check_range("alpha", alpha, 0.0, lo_open=True))
    rng = np.random.default_rng(seed)
    frac = np.empty(a.size)
    it = range(a.size)
    if progress:
        from tqdm.auto import tqdm
        it = tqdm(it, desc=f"TCM K={K} N={N}")
    for j in it:
        P = max(1, int(round(a[j] * N)))
        ok = 0
        for _ in range(n_instances):
            xi = rng.choice([-1.0, 1.0], size=(P, N))
            sigma = rng.choice([-1.0, 1.0], size=P)
            for r in range(restarts):
                _, st, _ = _train(xi, sigma, K, max_sweeps, int(rng.integers(2 ** 31)), 0.1)
                if st:
                    ok += 1
                    break
        frac[j] = ok / n_instances
    err = np.sqrt(frac * (1 - frac) / n_instances)
    return StorageFraction(a, frac, err, K, N, n_instances, max_sweeps)
