r"""Learning algorithms for the perceptron (thesis ch. 2) as simulation backends.

Binary perceptron with weights :math:`w_i = \pm 1`, patterns :math:`\xi^\mu` (rows of
``patterns``, shape (P, N)), labels :math:`\sigma^\mu = \pm 1`; a configuration solves
the training set when every stability :math:`\sigma^\mu \sum_i w_i \xi_i^\mu` is > 0
(use N odd with +-1 patterns so that a field is never zero).

Algorithms (all reproducible from ``seed``; all return :class:`AlgorithmResult`):

* :func:`stochastic_perceptron` -- the stochastic perceptron of thesis Sec. 2.4:
  gradient descent on the magnetizations ``m`` of a factorized distribution over binary
  weights, loss Eq. 2.57 with the gamma-scaled variance of Eq. 2.59 and gamma annealing,
  clipped updates Eq. 2.51, binarization ``sign(m)``, monitoring of q* (Eq. 2.52).
* :func:`perceptron_rule` -- Rosenblatt's rule (Eq. 2.31, corrected), continuous weights.
* :func:`delta_rule` -- online gradient descent on the squared error (Eqs. 2.33-2.34,
  corrected), continuous weights.
* :func:`clipped_hebb` -- ``w = sign(sum_mu sigma^mu xi^mu)`` (Sec. 2.3.3), binary weights.
* :func:`metropolis_annealing` -- Metropolis single-flip Monte Carlo on binary weights with
  simulated annealing in beta, energy = number of misclassified patterns (Sec. 2.3.3).

Helpers: :func:`random_binary_instance` (random +-1 patterns and labels, optionally from a
binary teacher), :func:`stochastic_perceptron_loss` (loss and exact gradient, Eq. 2.59),
:func:`training_errors`.

The per-pattern loss of the stochastic perceptron and its derivatives are written once
in sympy (:data:`_SP`), and the numba loop calls the generated kernel.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numba
import numpy as np
import sympy as sp

from .. import symbolic as S
from ..errors import check_choice, check_int, check_range

__all__ = ["AlgorithmResult", "random_binary_instance", "training_errors",
           "stochastic_perceptron", "stochastic_perceptron_loss", "perceptron_rule",
           "delta_rule", "clipped_hebb", "metropolis_annealing", "CapacityEstimate",
           "algorithmic_capacity", "success_rate"]


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
    (The seed's Eq. 2.49 writes w_i in the numerator: it must be the mean m_i.)
    """
    u = sp.symbols("u", real=True)
    V, g = sp.symbols("V gamma", positive=True)
    ell = -S.LogH(-u / sp.sqrt(g * V))
    return {"sp_ell": S.Scalar((u, V, g), (ell, sp.diff(ell, u), sp.diff(ell, V)))}


# --------------------------------------------------------------------------- results
@dataclass(frozen=True)
class AlgorithmResult:
    """Outcome of a learning algorithm.

    Attributes
    ----------
    algorithm : name of the algorithm
    weights : final weights (+-1 int8 for binary algorithms, float for continuous ones)
    solved : True when ``weights`` classify every training pattern correctly (stability > kappa)
    errors : number of misclassified training patterns of ``weights``
    epochs : number of passes over the training set (sweeps for Metropolis)
    history : dict of 1-d arrays, one entry per epoch (e.g. ``q_star``, ``errors``, ``loss``, ``gamma``)
    params : the hyper-parameters used (including the seed)
    extra : anything else (e.g. the final magnetizations ``m``)
    """
    algorithm: str
    weights: np.ndarray
    solved: bool
    errors: int
    epochs: int
    history: dict = field(default_factory=dict)
    params: dict = field(default_factory=dict)
    extra: dict = field(default_factory=dict)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        for d in ("extra", "params"):
            dd = object.__getattribute__(self, d)
            if name in dd:
                return dd[name]
        raise AttributeError(f"AlgorithmResult has no {name!r}")

    def summary(self):
        """A JSON-friendly dict without the weight vector."""
        out = {"algorithm": self.algorithm, "solved": bool(self.solved), "errors": int(self.errors),
               "epochs": int(self.epochs)}
        out.update({k: v for k, v in self.params.items()})
        for k, v in self.history.items():
            if len(v):
                out[f"final_{k}"] = v[-1].item() if hasattr(v[-1], "item") else v[-1]
        return out


# --------------------------------------------------------------------------- helpers
def _compact(X):
    """+-1 patterns as int8 (8x less memory traffic in the numba loops), else float64."""
    if X.dtype == np.int8 or np.all(np.abs(X) == 1.0):
        return np.ascontiguousarray(X, dtype=np.int8)
    return X


def _check_data(patterns, labels):
    X = np.asarray(patterns)
    if X.ndim != 2 or X.shape[0] < 1 or X.shape[1] < 1:
        raise ValueError(f"patterns must be a 2-d array of shape (P, N) with P, N >= 1, got shape {X.shape}")
    X = np.ascontiguousarray(X, dtype=np.float64)
    if not np.all(np.isfinite(X)):
        raise ValueError("patterns must be finite (no NaN or inf)")
    y = np.asarray(labels, dtype=np.float64).ravel()
    if y.shape[0] != X.shape[0]:
        raise ValueError(f"labels must have length P = {X.shape[0]}, got {y.shape[0]}")
    if not np.all(np.abs(y) == 1.0):
        raise ValueError("labels must be +1 or -1")
    return X, np.ascontiguousarray(y)


def random_binary_instance(N, alpha, *, seed=None, teacher=False):
    """Random +-1 patterns (P = round(alpha N), N) and +-1 labels.

    With ``teacher=True`` the labels are ``sign(T . xi)`` for a random binary teacher T
    (returned as the third item, else None), so the instance is solvable (T solves it).
    N must be odd so that no field is zero.
    """
    N = check_int("N", N, 1)
    if N % 2 == 0:
        raise ValueError(f"N must be an odd integer >= 1 (no zero fields), got {N}")
    alpha = float(check_range("alpha", alpha, 0.0, lo_open=True))
    P = max(1, int(round(alpha * N)))
    rng = np.random.default_rng(seed)
    X = rng.choice(np.array([-1, 1], dtype=np.int8), size=(P, N))
    if teacher:
        T = rng.choice(np.array([-1, 1], dtype=np.int8), size=N)
        y = np.sign(X.astype(np.int64) @ T.astype(np.int64)).astype(np.int8)
        return X, y, T
    y = rng.choice(np.array([-1, 1], dtype=np.int8), size=P)
    return X, y, None


def training_errors(weights, patterns, labels, kappa=0.0):
    """Number of patterns whose stability sigma (w . xi) / sqrt(N) is <= kappa."""
    X, y = _check_data(patterns, labels)
    w = np.asarray(weights, dtype=np.float64).ravel()
    if w.shape[0] != X.shape[1]:
        raise ValueError(f"weights must have length N = {X.shape[1]}, got {w.shape[0]}")
    stab = y * (X @ w) / math.sqrt(X.shape[1])
    return int(np.count_nonzero(stab <= kappa))


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
    2.49, 2.57, 2.59; the seed's Eq. 2.49 shows w_i instead of the mean m_i in the numerator,
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
    ``extra['status']`` ("solved", "max_epochs" or "frozen" when all |m_i| reached 1).
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
    ss = np.random.SeedSequence(seed)
    s_init, s_loop = ss.spawn(2)
    if m0 is None:
        m = np.random.default_rng(s_init).uniform(-init_scale, init_scale, N)
    else:
        m = check_range("m0", m0, -1.0, 1.0).astype(np.float64).ravel().copy()
        if m.shape[0] != N:
            raise ValueError(f"m0 must have length N = {N}, got {m.shape[0]}")
    loop_seed = int(np.random.default_rng(s_loop).integers(0, 2**31 - 1))
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


# --------------------------------------------------------------------------- classic rules
def _init_rng_and_loop_seed(seed):
    ss = np.random.SeedSequence(seed)
    s_init, s_loop = ss.spawn(2)
    return np.random.default_rng(s_init), int(np.random.default_rng(s_loop).integers(0, 2**31 - 1))


@numba.njit(cache=True)
def _perceptron_kernel(X, y, w, eta, kappa, max_epochs, seed, h_err, h_upd):
    np.random.seed(seed)
    P, N = X.shape
    sq = math.sqrt(N)
    order = np.arange(P)
    for ep in range(max_epochs):
        np.random.shuffle(order)
        upd = 0
        for k in range(P):
            mu = order[k]
            h = 0.0
            for i in range(N):
                h += w[i] * X[mu, i]
            if y[mu] * h / sq <= kappa:
                c = eta * y[mu] / sq
                for i in range(N):
                    w[i] += c * X[mu, i]
                upd += 1
        err = 0
        for mu in range(P):
            h = 0.0
            for i in range(N):
                h += w[i] * X[mu, i]
            if y[mu] * h / sq <= kappa:
                err += 1
        h_err[ep] = err
        h_upd[ep] = upd
        if err == 0:
            return ep + 1, 0
    return max_epochs, err


def perceptron_rule(patterns, labels, *, seed=None, eta=1.0, kappa=0.0, max_epochs=1000, w0=None,
                    init_scale=0.0):
    r"""Rosenblatt's perceptron rule for continuous weights (thesis Eq. 2.31, corrected).

    Patterns are presented online in a random order each epoch; a pattern whose stability
    ``sigma^mu (w . xi^mu)/sqrt(N)`` is <= ``kappa`` triggers
    ``w <- w + (eta/sqrt(N)) sigma^mu xi^mu``.  (The seed's Eq. 2.31 multiplies by the
    network output y^mu; on a misclassified pattern y^mu = -sigma^mu, which would push the
    weights the wrong way: the update must use the desired label sigma^mu.)  It minimizes
    the perceptron cost Eq. 2.32 and converges in a finite number of updates whenever the
    data are linearly separable with margin > kappa (Novikoff).  Stops after the first epoch
    with zero errors.

    The initial weights are ``w0`` or Gaussian with standard deviation ``init_scale``
    (default 0: start from w = 0).  Returns :class:`AlgorithmResult` (``history``:
    ``errors`` after each epoch and ``updates`` during it).
    """
    X, y = _check_data(patterns, labels)
    P, N = X.shape
    eta = float(check_range("eta", eta, 0.0, lo_open=True))
    kappa = float(check_range("kappa", kappa, 0.0))
    max_epochs = check_int("max_epochs", max_epochs, 1)
    init_scale = float(check_range("init_scale", init_scale, 0.0))
    rng, loop_seed = _init_rng_and_loop_seed(seed)
    if w0 is None:
        w = rng.normal(0.0, init_scale, N) if init_scale > 0 else np.zeros(N)
    else:
        w = _check_vec("w0", w0, N)
    h_err = np.full(max_epochs, -1, dtype=np.int64)
    h_upd = np.full(max_epochs, -1, dtype=np.int64)
    epochs, err = _perceptron_kernel(X, y, w, eta, kappa, max_epochs, loop_seed, h_err, h_upd)
    return AlgorithmResult("perceptron_rule", w, bool(err == 0), int(err), int(epochs),
                           {"errors": h_err[:epochs], "updates": h_upd[:epochs]},
                           {"seed": seed, "eta": eta, "kappa": kappa, "max_epochs": max_epochs,
                            "init_scale": init_scale})


def _check_vec(name, v, N):
    """A finite float vector of length N (ValueError naming ``name`` otherwise)."""
    v = np.array(v, dtype=np.float64).ravel()
    if v.shape[0] != N:
        raise ValueError(f"{name} must have length N = {N}, got {v.shape[0]}")
    if not np.all(np.isfinite(v)):
        raise ValueError(f"{name} must be finite (no NaN or inf)")
    return v


@numba.njit(cache=True)
def _delta_kernel(X, y, w, eta, linear, max_epochs, tol, stop_solved, seed, h_loss, h_err):
    np.random.seed(seed)
    P, N = X.shape
    sq = math.sqrt(N)
    order = np.arange(P)
    prev = math.inf
    for ep in range(max_epochs):
        np.random.shuffle(order)
        for k in range(P):
            mu = order[k]
            h = 0.0
            for i in range(N):
                h += w[i] * X[mu, i]
            h /= sq
            if linear:
                phi = h
                dphi = 1.0
            else:
                phi = math.tanh(h)
                dphi = 1.0 - phi * phi
            c = eta * (y[mu] - phi) * dphi / sq
            for i in range(N):
                w[i] += c * X[mu, i]
        loss = 0.0
        err = 0
        for mu in range(P):
            h = 0.0
            for i in range(N):
                h += w[i] * X[mu, i]
            h /= sq
            phi = h if linear else math.tanh(h)
            loss += 0.5 * (y[mu] - phi) ** 2
            if y[mu] * h <= 0.0:
                err += 1
        loss /= P
        h_loss[ep] = loss
        h_err[ep] = err
        if (stop_solved and err == 0) or abs(prev - loss) <= tol * max(loss, 1e-300) or loss == 0.0:
            return ep + 1, err
        prev = loss
    return max_epochs, err


def delta_rule(patterns, labels, *, seed=None, eta=0.1, activation="tanh", max_epochs=1000, tol=1e-12,
               stop_when_solved=True, w0=None):
    r"""The Delta (Widrow--Hoff / LMS) rule: online gradient descent on the squared error.

    Loss Eq. 2.33, ``L = (1/2P) sum_mu [sigma^mu - phi(h^mu)]^2`` with ``h^mu = w . xi^mu /
    sqrt(N)``; the online step for pattern mu is ``w <- w - eta dL^mu/dw`` with (Eq. 2.34,
    corrected: the seed drops the minus sign and the 1/sqrt(N) of dh/dw, and writes y^mu for
    the label in Eq. 2.33) ``dL^mu/dw = -[sigma^mu - phi(h^mu)] phi'(h^mu) xi^mu / sqrt(N)``.
    ``activation`` is ``"tanh"`` or ``"linear"`` (ADALINE; from w0 = 0 with P < N it converges
    to the minimum-norm interpolant ``w = sqrt(N) X^T (X X^T)^{-1} sigma``, all fields = sigma).

    Stops at zero training errors (``stop_when_solved``) or when the epoch loss changes by less
    than ``tol`` (relative).  Returns :class:`AlgorithmResult` (``history``: ``loss``, ``errors``).
    """
    X, y = _check_data(patterns, labels)
    P, N = X.shape
    eta = float(check_range("eta", eta, 0.0, lo_open=True))
    check_choice("activation", activation, ("tanh", "linear"))
    max_epochs = check_int("max_epochs", max_epochs, 1)
    tol = float(check_range("tol", tol, 0.0))
    rng, loop_seed = _init_rng_and_loop_seed(seed)
    w = np.zeros(N) if w0 is None else _check_vec("w0", w0, N)
    h_loss = np.full(max_epochs, np.nan)
    h_err = np.full(max_epochs, -1, dtype=np.int64)
    epochs, err = _delta_kernel(X, y, w, eta, activation == "linear", max_epochs, tol, bool(stop_when_solved),
                                loop_seed, h_loss, h_err)
    if not np.all(np.isfinite(w)):
        raise ValueError(f"eta = {eta} is too large: the Delta rule diverged (use a smaller eta)")
    return AlgorithmResult("delta_rule", w, bool(err == 0), int(err), int(epochs),
                           {"loss": h_loss[:epochs], "errors": h_err[:epochs]},
                           {"seed": seed, "eta": eta, "activation": activation, "max_epochs": max_epochs,
                            "tol": tol})


def clipped_hebb(patterns, labels, *, seed=None):
    r"""Clipped Hebb rule for binary weights (thesis Sec. 2.3.3): ``w_i = sign(sum_mu sigma^mu xi_i^mu)``.

    Ties (a zero Hebbian field, possible when P is even) are broken at random from ``seed``.
    For a binary teacher T and +-1 patterns, each ``w_i`` agrees with ``T_i`` with probability
    ``Phi(sqrt(2 alpha / pi))`` as N -> infinity, so the teacher overlap is
    ``R = erf(sqrt(alpha/pi))`` (derived in docs/algorithms.md; tested).
    """
    X, y = _check_data(patterns, labels)
    rng = np.random.default_rng(seed)
    h = y @ X
    w = np.sign(h)
    ties = w == 0
    if np.any(ties):
        w[ties] = rng.choice([-1.0, 1.0], size=int(ties.sum()))
    w = w.astype(np.int8)
    err = training_errors(w, X, y)
    return AlgorithmResult("clipped_hebb", w, err == 0, err, 1, {}, {"seed": seed},
                           {"hebb_field": h})


@numba.njit(cache=True)
def _metropolis_kernel(X, y, w, betas, seed, h_E):
    """Single-flip Metropolis at inverse temperatures betas[t] (one sweep = N proposals).

    Energy = number of patterns with stability sigma (w . xi) <= 0.  Stabilities are
    updated incrementally: flipping w_i changes sigma^mu h^mu by -2 w_i sigma^mu xi_i^mu.
    On return ``w`` holds the lowest-energy configuration visited.
    """
    np.random.seed(seed)
    P, N = X.shape
    s = np.empty(P)  # stabilities sigma^mu h^mu
    E = 0
    for mu in range(P):
        h = 0.0
        for i in range(N):
            h += w[i] * X[mu, i]
        s[mu] = y[mu] * h
        if s[mu] <= 0.0:
            E += 1
    best = E
    w_best = w.copy()
    for t in range(betas.size):
        beta = betas[t]
        for _ in range(N):
            if E == 0:
                break
            i = np.random.randint(N)
            dE = 0
            two_w = 2.0 * w[i]
            for mu in range(P):
                snew = s[mu] - two_w * y[mu] * X[mu, i]
                dE += (1 if snew <= 0.0 else 0) - (1 if s[mu] <= 0.0 else 0)
            if dE <= 0 or np.random.random() < math.exp(-beta * dE):
                for mu in range(P):
                    s[mu] -= two_w * y[mu] * X[mu, i]
                w[i] = -w[i]
                E += dE
                if E < best:
                    best = E
                    w_best[:] = w
        h_E[t] = E
        if E == 0:
            return t + 1, 0
    w[:] = w_best
    return betas.size, best


def metropolis_annealing(patterns, labels, *, seed=None, beta0=0.5, beta1=20.0, sweeps=1000, w0=None):
    r"""Metropolis Monte Carlo with simulated annealing for binary weights (thesis Sec. 2.3.3).

    Energy ``E(w) = sum_mu Theta(-sigma^mu w . xi^mu)`` (Eq. 2.43, number of training errors);
    single spin-flip Metropolis moves, one sweep = N proposals, inverse temperature increased
    geometrically from ``beta0`` to ``beta1`` over ``sweeps`` sweeps; stops at E = 0 and
    returns the lowest-energy configuration visited (``history['energy']`` is the energy of
    the current state after each sweep).  The
    baseline binary solver (slow, but exact in the limit of slow annealing: on tiny instances
    it reaches the ground-state energy found by exhaustive enumeration; tested).

    Returns :class:`AlgorithmResult` (weights +-1, ``history['energy']`` after each sweep).
    """
    X, y = _check_data(patterns, labels)
    P, N = X.shape
    beta0 = float(check_range("beta0", beta0, 0.0, lo_open=True))
    beta1 = float(check_range("beta1", beta1, beta0))
    sweeps = check_int("sweeps", sweeps, 1)
    rng, loop_seed = _init_rng_and_loop_seed(seed)
    if w0 is None:
        w = rng.choice([-1.0, 1.0], size=N)
    else:
        w = _check_vec("w0", w0, N)
        if not np.all(np.abs(w) == 1.0):
            raise ValueError("w0 must have entries +1 or -1")
    betas = beta0 * (beta1 / beta0) ** (np.arange(sweeps) / max(1, sweeps - 1))
    h_E = np.full(sweeps, -1, dtype=np.int64)
    done, E = _metropolis_kernel(X, y, w, betas, loop_seed, h_E)
    return AlgorithmResult("metropolis_annealing", w.astype(np.int8), bool(E == 0), int(E), int(done),
                           {"energy": h_E[:done], "beta": betas[:done]},
                           {"seed": seed, "beta0": beta0, "beta1": beta1, "sweeps": sweeps})


# --------------------------------------------------------------------------- success statistics
@dataclass(frozen=True)
class CapacityEstimate:
    """Algorithmic capacity from success counts: ``P(solve | alpha) = H((alpha - alpha_c)/width)``.

    ``alpha_c`` (where the success probability is 1/2); ``ci_low, ci_high``: the 68% profile
    likelihood interval (where the profile negative log-likelihood is within 1/2 of its
    minimum); ``stderr``: its half-width (robust also when the transition is so steep that
    the Fisher information degenerates); ``width`` with ``width_stderr`` (inverse Fisher
    information, may be inf), ``converged``, ``neg_log_likelihood``.
    """
    alpha_c: float
    stderr: float
    width: float
    width_stderr: float
    converged: bool
    neg_log_likelihood: float
    ci_low: float = math.nan
    ci_high: float = math.nan


def algorithmic_capacity(alphas, successes, trials):
    r"""Maximum-likelihood fit of ``P(solve) = H((alpha - alpha_c)/width)`` to success counts.

    ``successes[k]`` of ``trials[k]`` runs solved their instance at ``alphas[k]``.  The
    binomial negative log-likelihood is written with ``log_H`` (no cut-offs) and minimized
    over (alpha_c, log width); standard errors from the inverse of its Hessian (central
    differences).  Raises ValueError when the data contain no success or no failure (then
    alpha_c is not identifiable) and ConvergenceError when the fit fails.
    """
    from scipy import optimize
    from ..errors import ConvergenceError
    from ..gaussian import log_H
    from ..saddle import hessian_fd

    a = check_range("alphas", alphas, 0.0).ravel()
    k = np.asarray(successes, dtype=float).ravel()
    n = np.asarray(trials, dtype=float).ravel()
    if not (a.shape == k.shape == n.shape) or a.size < 2:
        raise ValueError("alphas, successes and trials must be 1-d arrays of the same length >= 2")
    if np.any(n < 1) or np.any(k < 0) or np.any(k > n) or np.any(k != np.round(k)) or np.any(n != np.round(n)):
        raise ValueError("successes and trials must be integers with 0 <= successes <= trials, trials >= 1")
    if k.sum() == 0 or k.sum() == n.sum():
        raise ValueError("successes must contain at least one success and one failure")

    def nll(x):
        ac, lw = x
        z = (a - ac) / math.exp(lw)
        return -float(np.sum(k * log_H(z) + (n - k) * log_H(-z)))

    p = k / n
    x0 = [float(np.interp(0.5, -p, a)) if np.any(p >= 0.5) and np.any(p <= 0.5) else float(np.mean(a)),
          math.log(max(0.02, 0.5 * (a.max() - a.min()) / max(1, a.size)))]
    best = None
    for lw0 in (x0[1], x0[1] + 1.0, x0[1] - 1.0):
        res = optimize.minimize(nll, [x0[0], lw0], method="Nelder-Mead",
                                options={"xatol": 1e-10, "fatol": 1e-12, "maxiter": 4000})
        if best is None or res.fun < best.fun:
            best = res
    if not best.success:
        raise ConvergenceError("algorithmic_capacity: likelihood maximization failed", x=best.x,
                               iterations=best.nit, diagnostics={"message": best.message})
    ac, lw = best.x
    Hm = hessian_fd(nll, np.array([ac, lw]), h=1e-4)
    try:
        cov = np.linalg.inv(Hm)
    except np.linalg.LinAlgError:
        cov = np.full((2, 2), np.inf)
    w = math.exp(lw)
    se_w = w * math.sqrt(cov[1, 1]) if cov[1, 1] > 0 and np.isfinite(cov[1, 1]) else math.inf
    # profile likelihood in alpha_c (minimized over the width) on a grid spanning the data
    span = a.max() - a.min()
    lw_lo = math.log(1e-4 * span)
    lw_hi = math.log(10.0 * span)
    grid = np.linspace(a.min() - 0.25 * span, a.max() + 0.25 * span, 241)
    prof = np.array([optimize.minimize_scalar(lambda l, g=g: nll([g, l]), bounds=(lw_lo, lw_hi),
                                              method="bounded", options={"xatol": 1e-6}).fun for g in grid])
    inside = grid[prof <= best.fun + 0.5]
    lo = float(min(inside.min(), ac)) if inside.size else float(ac)
    hi = float(max(inside.max(), ac)) if inside.size else float(ac)
    step = grid[1] - grid[0]
    lo, hi = lo - 0.5 * step, hi + 0.5 * step
    return CapacityEstimate(float(ac), float(0.5 * (hi - lo)), float(w), float(se_w), True, float(best.fun),
                            float(lo), float(hi))


def success_rate(alphas, N, runs, *, seed=0, algorithm="stochastic_perceptron", teacher=False,
                 progress=False, **kw):
    """Fraction of fresh random instances solved at each alpha.

    For each alpha, ``runs`` instances ``random_binary_instance(N, alpha)`` are drawn and
    ``algorithm`` (``"stochastic_perceptron"`` or ``"metropolis_annealing"``) is run with
    the keyword arguments ``kw``.  Instance and algorithm seeds are derived from ``seed``, so
    the result is reproducible.  Returns a dict with ``alpha``, ``successes``, ``trials``,
    ``p`` (fraction), ``p_err`` (binomial standard error sqrt(p(1-p)/runs) with p(1-p) floored at
    1/(4 runs), so that 0/runs and runs/runs get a non-zero bar), ``epochs`` (list per alpha) and
    ``seconds`` (list per alpha).
    """
    import time
    check_choice("algorithm", algorithm, ("stochastic_perceptron", "metropolis_annealing"))
    fn = stochastic_perceptron if algorithm == "stochastic_perceptron" else metropolis_annealing
    alphas = np.atleast_1d(check_range("alphas", alphas, 0.0, lo_open=True)).ravel()
    runs = check_int("runs", runs, 1)
    ss = np.random.SeedSequence(seed)
    seeds = ss.generate_state(2 * runs * alphas.size).reshape(alphas.size, runs, 2)
    it = range(alphas.size)
    bar = None
    if progress:
        from tqdm.auto import tqdm
        bar = tqdm(total=alphas.size * runs, desc=f"{algorithm} N={N}")
    succ, eps, secs = [], [], []
    for j in it:
        k, e, t = 0, [], []
        for r in range(runs):
            X, y, _ = random_binary_instance(N, float(alphas[j]), seed=int(seeds[j, r, 0]), teacher=teacher)
            t0 = time.perf_counter()
            res = fn(X, y, seed=int(seeds[j, r, 1]), **kw)
            t.append(time.perf_counter() - t0)
            k += int(res.solved)
            e.append(res.epochs)
            if bar is not None:
                bar.update(1)
        succ.append(k)
        eps.append(e)
        secs.append(t)
    if bar is not None:
        bar.close()
    succ = np.array(succ)
    p = succ / runs
    return {"alpha": alphas, "successes": succ, "trials": np.full(alphas.size, runs), "p": p,
            "p_err": np.sqrt(np.maximum(p * (1 - p), 0.25 / runs) / runs), "epochs": eps, "seconds": secs}
