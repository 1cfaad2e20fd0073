r"""Classic learning rules of the perceptron (thesis Secs. 2.2.3, 2.3.3) and the Metropolis baseline.

The thesis: E. Tartaglione, "From Statistical Physics to Algorithms in Deep Neural Systems", PhD thesis,
Politecnico di Torino, 2019.

* :func:`perceptron_rule` -- Rosenblatt's rule (Eq. 2.31, corrected), continuous weights.
* :func:`delta_rule` -- online gradient descent on the squared error (Eqs. 2.33-2.34,
  corrected), continuous weights.
* :func:`clipped_hebb` -- ``w = sign(sum_mu sigma^mu xi^mu)`` (Sec. 2.3.3), binary weights.
* :func:`metropolis_annealing` -- Metropolis single-flip Monte Carlo on binary weights with
  simulated annealing in beta, energy = number of misclassified patterns (Sec. 2.3.3).
"""
from __future__ import annotations

import math

import numba
import numpy as np

from ..errors import check_choice, check_int, check_range
from ._learning import AlgorithmResult, _check_data, _init_rng_and_loop_seed, training_errors

__all__ = ["perceptron_rule", "delta_rule", "clipped_hebb", "metropolis_annealing"]


def _check_vec(name, v, N):
    """A finite float vector of length N (ValueError naming ``name`` otherwise)."""
    v = np.array(v, dtype=np.float64).ravel()
    if v.shape[0] != N:
        raise ValueError(f"{name} must have length N = {N}, got {v.shape[0]}")
    if not np.all(np.isfinite(v)):
        raise ValueError(f"{name} must be finite (no NaN or inf)")
    return v


# --------------------------------------------------------------------------- perceptron rule
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
    ``w <- w + (eta/sqrt(N)) sigma^mu xi^mu``.  (The thesis's Eq. 2.31 multiplies by the
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


# --------------------------------------------------------------------------- Delta rule
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
            return ep + 1, err, True
        prev = loss
    return max_epochs, err, False


def delta_rule(patterns, labels, *, seed=None, eta=0.1, activation="tanh", max_epochs=1000, tol=1e-12,
               stop_when_solved=True, w0=None):
    r"""The Delta (Widrow--Hoff / LMS) rule: online gradient descent on the squared error.

    Loss Eq. 2.33, ``L = (1/2P) sum_mu [sigma^mu - phi(h^mu)]^2`` with ``h^mu = w . xi^mu /
    sqrt(N)``; the online step for pattern mu is ``w <- w - eta dL^mu/dw`` with (Eq. 2.34,
    corrected: the thesis drops the minus sign and the 1/sqrt(N) of dh/dw, and writes y^mu for
    the label in Eq. 2.33) ``dL^mu/dw = -[sigma^mu - phi(h^mu)] phi'(h^mu) xi^mu / sqrt(N)``.
    ``activation`` is ``"tanh"`` or ``"linear"`` (ADALINE; from w0 = 0 with P < N it converges
    to the minimum-norm interpolant ``w = sqrt(N) X^T (X X^T)^{-1} sigma``, all fields = sigma).

    Stops at zero training errors (``stop_when_solved``) or when the epoch loss changes by less
    than ``tol`` (relative).  Returns :class:`AlgorithmResult` (``history``: ``loss``, ``errors``;
    ``converged``: one of these criteria was met within ``max_epochs``; ``residual``: the
    max-norm of the gradient of the loss Eq. 2.33 at the returned ``w``).
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
    epochs, err, stopped = _delta_kernel(X, y, w, eta, activation == "linear", max_epochs, tol,
                                         bool(stop_when_solved), loop_seed, h_loss, h_err)
    if not np.all(np.isfinite(w)):
        raise ValueError(f"eta = {eta} is too large: the Delta rule diverged (use a smaller eta)")
    # gradient of L = (1/2P) sum_mu (sigma^mu - phi(h^mu))^2 at the returned w
    h = X @ w / math.sqrt(N)
    phi, dphi = (h, np.ones_like(h)) if activation == "linear" else (np.tanh(h), 1.0 - np.tanh(h) ** 2)
    grad = -((y - phi) * dphi) @ X / (P * math.sqrt(N))
    return AlgorithmResult("delta_rule", w, bool(err == 0), int(err), int(epochs),
                           {"loss": h_loss[:epochs], "errors": h_err[:epochs]},
                           {"seed": seed, "eta": eta, "activation": activation, "max_epochs": max_epochs,
                            "tol": tol}, converged=bool(stopped), residual=float(np.max(np.abs(grad))))


# --------------------------------------------------------------------------- clipped Hebb
def clipped_hebb(patterns, labels, *, seed=None):
    r"""Clipped Hebb rule for binary weights (thesis Sec. 2.3.3): ``w_i = sign(sum_mu sigma^mu xi_i^mu)``.

    Ties (a zero Hebbian field, possible when P is even) are broken at random from ``seed``.
    For a binary teacher T and +-1 patterns, each ``w_i`` agrees with ``T_i`` with probability
    ``Phi(sqrt(2 alpha / pi))`` as N -> infinity, so the teacher overlap is
    ``R = erf(sqrt(alpha/pi))`` (derived in docs/algorithms.md; tested).  A one-shot rule: the
    :class:`AlgorithmResult` has ``epochs = 1`` and ``converged = True`` whether or not it solves.
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
                           {"hebb_field": h}, converged=True)


# --------------------------------------------------------------------------- Metropolis annealing
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
