r"""The stochastic perceptron (thesis Sec. 2.4) for binary weights.

The thesis: E. Tartaglione, "From Statistical Physics to Algorithms in Deep Neural Systems", PhD thesis,
Politecnico di Torino, 2019; the model is that of Baldassi, Gerace, Kappen, Lucibello, Saglietti,
Tartaglione and Zecchina, Phys. Rev. Lett. 120, 268103 (2018).

Gradient descent on the magnetizations ``m`` of a factorized distribution over binary
weights, loss Eq. 2.57 with the gamma-scaled variance of Eq. 2.59 and gamma annealing,
clipped updates Eq. 2.51, binarization ``sign(m)``, monitoring of q* (Eq. 2.52).  The
per-pattern loss and its derivatives are written once in sympy (:data:`_SP`), and the numba
loop calls the generated kernel.  Derivations and corrections: ``docs/algorithms.md``.
"""
from __future__ import annotations

import math

import numba
import numpy as np
import sympy as sp

from .. import symbolic as S
from ..errors import check_int, check_range
from ._learning import AlgorithmResult, _check_data, _init_rng_and_loop_seed

__all__ = ["stochastic_perceptron", "stochastic_perceptron_loss"]


# --------------------------------------------------------------------------- equations
@S.kernels
def _SP():
    r"""Per-pattern loss of the stochastic perceptron, thesis Eqs. 2.49/2.57/2.59.

    With w_i ~ Q_m independent (Eq. 2.46), E[w_i] = m_i, Var[w_i] = 1 - m_i^2, so by the
    central limit theorem the field sum_i w_i xi_i is Gaussian with mean
    a = sum_i m_i xi_i and variance V = sum_i (1 - m_i^2) xi_i^2.  The probability that
    the sampled weights classify pattern mu correctly is H(-sigma a / sqrt(V)); with the
    variance scaled by gamma (Eq. 2.59) the loss of one pattern is
        ell(u, V, gamma) = -log H(-u / sqrt(gamma V)),   u = sigma^mu a^mu.
    (The thesis's Eq. 2.49 writes w_i in the numerator: it must be the mean m_i.)
    """
    u = sp.symbols("u", real=True)
    V, g = sp.symbols("V gamma", positive=True)
    ell = -S.LogH(-u / sp.sqrt(g * V))
    return {"sp_ell": S.Scalar((u, V, g), (ell, sp.diff(ell, u), sp.diff(ell, V)))}


# --------------------------------------------------------------------------- helpers
def _compact(X):
    """+-1 patterns as int8 (8x less memory traffic in the numba loops), else float64."""
    if X.dtype == np.int8 or np.all(np.abs(X) == 1.0):
        return np.ascontiguousarray(X, dtype=np.int8)
    return X



# --------------------------------------------------------------------------- stochastic perceptron
@numba.njit(cache=True)
def _binarized_errors(X, y, m):
    P, N = X.shape
    w = np.empty(N, dtype=X.dtype)
    for i in range(N):
        w[i] = 1 if m[i] >= 0.0 else -1
    err = 0
    for mu in range(P):
        h = 0
        for i in range(N):
            h += np.int64(X[mu, i]) * np.int64(w[i])
        if y[mu] * h <= 0:
            err += 1
    return err


_FM = {"reassoc", "contract"}  # allow vectorized reductions; keeps inf/NaN semantics


@numba.njit(cache=True, fastmath=_FM)
def _sp_kernel(ell, X, y, m, eta, batch, max_epochs, gamma0, gamma_rate, gamma_end, seed,
               h_q, h_err, h_loss, h_gamma):
    """Minibatch gradient descent with clipping (Eq. 2.51) on the loss Eq. 2.59.

    The recorded loss of an epoch is the mean of the per-pattern losses evaluated when each
    pattern was visited (the running epoch loss).  For +-1 patterns V = N - sum_i m_i^2 is
    shared by all patterns.  Returns (epochs run, final binarized errors, status) with
    status 0 = solved, 1 = epoch budget exhausted, 2 = variance vanished (all |m_i| = 1).
    """
    np.random.seed(seed)
    P, N = X.shape
    binary = True
    for mu in range(P):
        for i in range(N):
            if X[mu, i] * X[mu, i] != 1:
                binary = False
    order = np.arange(P)
    grad = np.zeros(N)
    err = _binarized_errors(X, y, m)
    for ep in range(max_epochs):
        if err == 0:
            return ep, 0, 0
        gamma = gamma_end + (gamma0 - gamma_end) * gamma_rate ** ep
        np.random.shuffle(order)
        ltot = 0.0
        for b0 in range(0, P, batch):
            b1 = min(P, b0 + batch)
            inv_nb = 1.0 / (b1 - b0)
            for i in range(N):
                grad[i] = 0.0
            Vb = 0.0
            if binary:
                for i in range(N):
                    Vb += 1.0 - m[i] * m[i]
            cvsum = 0.0
            for k in range(b0, b1):
                mu = order[k]
                a = 0.0
                if binary:
                    V = Vb
                    for i in range(N):
                        a += m[i] * X[mu, i]
                else:
                    V = 0.0
                    for i in range(N):
                        x = X[mu, i]
                        a += m[i] * x
                        V += (1.0 - m[i] * m[i]) * x * x
                if V <= 0.0:
                    h_q[ep] = 1.0
                    e = _binarized_errors(X, y, m)
                    h_err[ep] = e
                    h_loss[ep] = math.inf
                    h_gamma[ep] = gamma
                    return ep + 1, e, 0 if e == 0 else 2
                l, du, dV = ell(y[mu] * a, V, gamma)
                ltot += l
                ca = du * y[mu] * inv_nb
                cv = -2.0 * dV * inv_nb
                if binary:
                    cvsum += cv
                    for i in range(N):
                        grad[i] += ca * X[mu, i]
                else:
                    for i in range(N):
                        x = X[mu, i]
                        grad[i] += ca * x + cv * m[i] * x * x
            for i in range(N):
                v = m[i] - eta * (grad[i] + cvsum * m[i])
                if v > 1.0:
                    v = 1.0
                elif v < -1.0:
                    v = -1.0
                m[i] = v
        q = 0.0
        for i in range(N):
            q += m[i] * m[i]
        err = _binarized_errors(X, y, m)
        h_q[ep] = q / N
        h_err[ep] = err
        h_loss[ep] = ltot / P
        h_gamma[ep] = gamma
    return max_epochs, err, 0 if err == 0 else 1


def stochastic_perceptron_loss(m, patterns, labels, gamma=1.0):
    r"""Loss Eq. 2.59 (mean over the given patterns) and its exact gradient in ``m``.

    ``L(m) = -(1/P) sum_mu log H(-sigma^mu a^mu / sqrt(gamma V^mu))`` with
    ``a^mu = sum_i m_i xi_i^mu`` and ``V^mu = sum_i (1 - m_i^2) (xi_i^mu)^2`` (thesis Eqs.
    2.49, 2.57, 2.59; the thesis's Eq. 2.49 shows w_i instead of the mean m_i in the numerator,
    and Eq. 2.57 misses the brackets of sum_i (1 - m_i^2)).  Returns ``(L, dL/dm)``.
    """
    X, y = _check_data(patterns, labels)
    m = check_range("m", m, -1.0, 1.0).astype(np.float64).ravel()
    if m.shape[0] != X.shape[1]:
        raise ValueError(f"m must have length N = {X.shape[1]}, got {m.shape[0]}")
    gamma = float(check_range("gamma", gamma, 0.0, lo_open=True))
    a = X @ m
    V = (X * X) @ (1.0 - m * m)
    if np.any(V <= 0.0):
        raise ValueError("m must have some |m_i| < 1 on the support of every pattern (the variance V vanishes)")
    ell = _SP.sp_ell
    out = np.array([ell(float(yy * aa), float(vv), gamma) for yy, aa, vv in zip(y, a, V)])
    P = X.shape[0]
    grad = (X.T @ (out[:, 1] * y) - 2.0 * m * ((X * X).T @ out[:, 2])) / P
    return float(out[:, 0].mean()), grad


def stochastic_perceptron(patterns, labels, *, seed=None, eta=None, batch=None, max_epochs=1000,
                          gamma0=1.0, gamma_end=None, gamma_rate=0.99, m0=None, init_scale=0.1):
    r"""Train the stochastic perceptron (thesis Sec. 2.4) and binarize: ``w = sign(m)``.

    Implements the loss Eq. 2.57 with the gamma-scaled variance of Eq. 2.59 (see
    :func:`stochastic_perceptron_loss`), minibatch gradient descent with the clipped update
    Eq. 2.51 ``m <- clip(m - eta dL/dm, -1, 1)``, the annealing schedule
    ``gamma_t = gamma_end + (gamma0 - gamma_end) * gamma_rate**t`` (t = epoch; ``gamma0 = 1``
    without ``gamma_end`` is the plain model of Eq. 2.57; gamma -> 0 is the deterministic
    limit Eq. 2.60, gamma -> infinity the fully uncertain one Eq. 2.61),
    and stops as soon as the binarized weights ``sign(m)`` (Eq. 2.58) make no training error.

    Parameters
    ----------
    patterns : (P, N) array (+-1 in the thesis; real patterns are allowed, Eq. 2.49)
    labels : (P,) array of +-1
    seed : int or None -- initial magnetizations and minibatch order; equal seeds give
        identical runs
    eta : learning rate; default ``0.1 sqrt(N)`` (the gradient of Eq. 2.59 scales as 1/sqrt(N))
    batch : minibatch size M_b; default ``min(64, max(1, P // 10))`` (capped: with M_b proportional to P
        the number of updates per epoch would not grow with N and large N would learn slower)
    max_epochs : epoch budget
    gamma0, gamma_end, gamma_rate : gamma annealing (see above), gamma0 > 0, gamma_end > 0
        (default: gamma0, i.e. constant gamma), 0 < gamma_rate <= 1
    m0 : initial magnetizations (overrides the random initialization)
    init_scale : the initial m_i are uniform in [-init_scale, init_scale]

    Returns
    -------
    AlgorithmResult with ``weights`` (+-1 int8), ``solved``, ``errors``, ``epochs``,
    ``history`` = {``q_star`` (Eq. 2.52), ``errors`` (of sign(m)), ``loss`` (Eq. 2.59, running mean over the
    epoch at the epoch's gamma), ``gamma``} per epoch, ``extra['m']`` the magnetizations and
    ``extra['status']`` ("solved", "max_epochs" or "frozen" when all ``|m_i|`` reached 1).
    """
    X, y = _check_data(patterns, labels)
    X = _compact(X)
    P, N = X.shape
    max_epochs = check_int("max_epochs", max_epochs, 1)
    eta = 0.1 * math.sqrt(N) if eta is None else float(check_range("eta", eta, 0.0, lo_open=True))
    batch = min(64, max(1, P // 10)) if batch is None else check_int("batch", batch, 1)
    batch = min(batch, P)
    gamma0 = float(check_range("gamma0", gamma0, 0.0, lo_open=True))
    gamma_end = gamma0 if gamma_end is None else float(check_range("gamma_end", gamma_end, 0.0, lo_open=True))
    gamma_rate = float(check_range("gamma_rate", gamma_rate, 0.0, 1.0, lo_open=True))
    init_scale = float(check_range("init_scale", init_scale, 0.0, 1.0, hi_open=True))
    rng, loop_seed = _init_rng_and_loop_seed(seed)
    if m0 is None:
        m = rng.uniform(-init_scale, init_scale, N)
    else:
        m = check_range("m0", m0, -1.0, 1.0).astype(np.float64).ravel().copy()
        if m.shape[0] != N:
            raise ValueError(f"m0 must have length N = {N}, got {m.shape[0]}")
    h_q = np.full(max_epochs, np.nan)
    h_err = np.full(max_epochs, -1, dtype=np.int64)
    h_loss = np.full(max_epochs, np.nan)
    h_gamma = np.full(max_epochs, np.nan)
    epochs, err, status = _sp_kernel(_SP.sp_ell, X, y, m, eta, batch, max_epochs, gamma0, gamma_rate,
                                     gamma_end, loop_seed, h_q, h_err, h_loss, h_gamma)
    w = np.where(m >= 0.0, 1, -1).astype(np.int8)
    history = {"q_star": h_q[:epochs], "errors": h_err[:epochs], "loss": h_loss[:epochs],
               "gamma": h_gamma[:epochs]}
    params = {"seed": seed, "eta": eta, "batch": batch, "max_epochs": max_epochs, "gamma0": gamma0,
              "gamma_end": gamma_end, "gamma_rate": gamma_rate, "init_scale": init_scale}
    return AlgorithmResult("stochastic_perceptron", w, bool(err == 0), int(err), int(epochs), history,
                           params, {"m": m, "status": ("solved", "max_epochs", "frozen")[status],
                                    "q_star": float(np.mean(m * m))})
