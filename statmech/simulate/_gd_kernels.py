"""Numba kernels of :mod:`statmech.simulate.negative_margin` (squared-hinge descent on the sphere).

Patterns are stored as float32 or float64 rows ``X[mu]`` (C order, one row per pattern);
all arithmetic (fields, cost, gradient, weights) is float64.  One cost/gradient evaluation
is a single streaming pass over ``X``: the field of a row is computed and, if the row is
violated, its contribution to the gradient is added while the row is still in cache.
"""
from __future__ import annotations

import math

import numba
import numpy as np

_FM = {"reassoc", "contract"}   # vectorized reductions; no assumption about inf/nan

SAT, STALLED, MAX_ITER = 0, 1, 2
STATUS_NAMES = ("sat", "stalled", "max_iter")


@numba.njit(cache=True, fastmath=_FM)
def cost_grad(X, w, kappa, kappa_check, g):
    """``E = 1/2 sum_mu max(0, kappa - h_mu)^2`` with ``h_mu = X[mu].w/sqrt(N)``.

    Writes the Euclidean gradient ``dE/dw`` into ``g``; returns ``(E, n_below)`` with
    ``n_below`` the number of fields ``h_mu < kappa_check``.
    """
    P, N = X.shape
    isn = 1.0 / math.sqrt(N)
    for i in range(N):
        g[i] = 0.0
    E = 0.0
    nv = 0
    for mu in range(P):
        s = 0.0
        for i in range(N):
            s += X[mu, i] * w[i]
        h = s * isn
        if h < kappa_check:
            nv += 1
        if h < kappa:
            r = kappa - h
            E += 0.5 * r * r
            c = r * isn
            for i in range(N):
                g[i] -= c * X[mu, i]
    return E, nv


@numba.njit(cache=True, fastmath=_FM)
def _tangent(g, w, out):
    """Projection of ``g`` on the tangent space of the sphere ``|w|^2 = N`` at ``w``."""
    N = w.size
    d = 0.0
    for i in range(N):
        d += g[i] * w[i]
    d /= N
    for i in range(N):
        out[i] = g[i] - d * w[i]


@numba.njit(cache=True, fastmath=_FM)
def _retract(x, out):
    """``out = sqrt(N) x/|x|`` (back onto the sphere)."""
    N = x.size
    s = 0.0
    for i in range(N):
        s += x[i] * x[i]
    f = math.sqrt(N / s)
    for i in range(N):
        out[i] = x[i] * f


@numba.njit(cache=True)
def descend(X, w, kappa, kappa_check, eta, momentum, max_iter, min_iter, rel_tol, hist):
    """Minimize the squared-hinge cost at margin ``kappa`` on the sphere from ``w`` (in place).

    ``kappa_check <= kappa``: success is ``h_mu >= kappa_check`` for every pattern.  (The
    squared hinge only approaches the boundary of its zero set asymptotically, so the cost
    is minimized at a margin slightly above the one that is checked.)

    One iteration = one trial step and one cost/gradient evaluation:

    * ``v <- beta_k v - eta * grad_t(w)``  (``grad_t``: tangent gradient; ``beta_k = 0``
      for plain gradient descent, ``beta_k = k/(k+3)`` with ``k`` the number of accepted
      steps since the last restart for the accelerated variant);
    * trial ``w' = sqrt(N) (w + v)/|w + v|``;
    * accepted if ``E(w') <= E(w)`` (then ``eta *= 1.05`` for a pure gradient step);
      otherwise rejected: ``v = 0`` (momentum restart) and, if the step was already a
      pure gradient step, ``eta /= 2``.  Hence ``E`` is non-increasing.

    Stopping (``hist[t]`` = cost after ``t`` iterations):

    * ``SAT``: every field ``h_mu >= kappa_check``;
    * ``STALLED``: ``t >= min_iter`` and ``E(t) > (1 - rel_tol) E(t//2)``: the cost did not
      decrease by a fraction ``rel_tol`` over the last half of the run (log-time criterion);
    * ``MAX_ITER``: ``t = max_iter``.

    Returns ``(status, E, n_below, iterations, evaluations, eta)``.
    """
    P, N = X.shape
    g = np.empty(N)
    g_new = np.empty(N)
    gt = np.empty(N)
    v = np.zeros(N)
    trial = np.empty(N)
    w_new = np.empty(N)
    E, nv = cost_grad(X, w, kappa, kappa_check, g)
    n_eval = 1
    hist[0] = E
    k = 0
    t = 0
    status = MAX_ITER
    while True:
        if nv == 0:
            status = SAT
            break
        if t >= max_iter:
            status = MAX_ITER
            break
        if t >= min_iter and E > (1.0 - rel_tol) * hist[t // 2]:
            status = STALLED
            break
        beta = k / (k + 3.0) if momentum else 0.0
        pure = beta == 0.0
        _tangent(g, w, gt)
        for i in range(N):
            v[i] = beta * v[i] - eta * gt[i]
            trial[i] = w[i] + v[i]
        _retract(trial, w_new)
        E_new, nv_new = cost_grad(X, w_new, kappa, kappa_check, g_new)
        n_eval += 1
        if E_new <= E:
            # transport v to the tangent space at the new point
            _tangent(v, w_new, v)
            for i in range(N):
                w[i] = w_new[i]
                g[i] = g_new[i]
            E = E_new
            nv = nv_new
            k += 1
            if pure:
                eta *= 1.05
        else:
            for i in range(N):
                v[i] = 0.0
            if pure:
                eta *= 0.5
            k = 0
        t += 1
        hist[t] = E
    return status, E, nv, t, n_eval, eta
