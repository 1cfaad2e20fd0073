r"""Finite-size helpers shared by the simulation backends (generic, model independent).

* :func:`instance_rng` -- the random generator of one disorder instance, a pure function
  of ``(seed, *key)`` (``numpy.random.SeedSequence`` with a spawn key), so results do not
  depend on the order in which an executor runs the instances.
* :func:`map_tasks` -- run a picklable top-level function over a list of tasks, serially
  (with a tqdm bar) or on any :class:`concurrent.futures.Executor` (threads, processes,
  dask's ``Client.get_executor()`` ...), results in task order.
* :func:`binomial_interval` -- Wilson score interval of a success fraction.
* :func:`transition_point` -- the 50 % point (and width) of a monotone success
  probability measured on a grid, by maximum likelihood of a probit curve
  ``p(x) = H((x - x_50)/w)`` (``H`` = Gaussian tail), with its standard error from the
  observed information.
* :func:`censored_normal_fit` -- the 50 % point of a threshold measured per instance: each
  instance contributes its integer threshold ``k = floor(X)`` (e.g. the largest number of
  storable patterns), ``X ~ Normal(mu, sigma)`` fitted by interval-censored maximum
  likelihood, so that ``P(success at x) = P(X >= x) = H((x - mu)/sigma)`` and ``mu`` is the
  50 % point; instances are independent, so the standard errors are honest.
* :func:`extrapolate` -- weighted least-squares fit ``y(N) = y_inf + sum_k a_k N^(-e_k)``
  and the standard error of ``y_inf`` (scaled by ``sqrt(chi2/dof)`` when that exceeds 1).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from ..errors import check_int, check_range
from ._result import Simulation

__all__ = ["instance_rng", "map_tasks", "binomial_interval", "TransitionFit", "transition_point",
           "censored_normal_fit", "Extrapolation", "extrapolate"]


def instance_rng(seed, *key):
    """Independent generator for the instance labelled by ``key`` (non-negative ints)."""
    seed = check_int("seed", seed, lo=0)
    key = tuple(check_int("key", k, lo=0) for k in key)
    return np.random.default_rng(np.random.SeedSequence(entropy=seed, spawn_key=key))


def map_tasks(fn: Callable, tasks: Sequence, executor=None, *, desc=None, progress=True):
    """``[fn(t) for t in tasks]``, on ``executor`` when given (any concurrent.futures Executor).

    ``fn`` must be a picklable module-level function for process-based executors.  A
    tqdm progress bar is shown for more than one task unless ``progress=False``.
    """
    tasks = list(tasks)
    show = progress and len(tasks) > 1
    if executor is None:
        if show:
            from tqdm.auto import tqdm
            return [fn(t) for t in tqdm(tasks, desc=desc, leave=False)]
        return [fn(t) for t in tasks]
    futures = [executor.submit(fn, t) for t in tasks]
    if show:
        from concurrent.futures import as_completed
        from tqdm.auto import tqdm
        for _ in tqdm(as_completed(futures), total=len(futures), desc=desc, leave=False):
            pass
    return [f.result() for f in futures]


def binomial_interval(k, n, z=1.0):
    """Wilson score interval ``(lo, hi)`` for ``k`` successes in ``n`` trials (``z`` sigmas)."""
    k = np.asarray(k, dtype=float)
    n = np.asarray(n, dtype=float)
    if np.any(n <= 0):
        raise ValueError("n must be >= 1 for every point")
    if np.any((k < 0) | (k > n)):
        raise ValueError("k must be in [0, n]")
    p = k / n
    den = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / den
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return centre - half, centre + half


@dataclass(frozen=True, repr=False)
class TransitionFit(Simulation):
    """Probit fit ``p(x) = H((x - x50)/width)`` of a decreasing success probability.

    ``x50`` is the headline, ``error`` = ``x50_err`` (inf, with ``converged`` False, when the
    observed information is not positive definite); ``iterations`` the Nelder--Mead iterations
    of the best start; ``residual`` 0.0 (a derivative-free maximisation); ``ansatz`` ``"-"``.
    """
    x50: float
    x50_err: float
    width: float
    width_err: float
    converged: bool
    iterations: int = 0

    headline = "x50"
    residual = 0.0

    @property
    def error(self):
        """The standard error of ``x50``."""
        return self.x50_err


def _probit_nll(params, x, k, n):
    from scipy.special import log_ndtr
    x50, logw = params
    u = (x - x50) / math.exp(logw)
    # p = H(u) = Phi(-u); 1 - p = Phi(u); both in log space
    return -(np.sum(k * log_ndtr(-u)) + np.sum((n - k) * log_ndtr(u)))


def transition_point(x, successes, trials) -> TransitionFit:
    """Maximum-likelihood 50 % point of a decreasing success probability.

    ``successes[i]`` of ``trials[i]`` instances succeed at ``x[i]``.  Fits
    ``p(x) = H((x - x50)/w)`` (binomial likelihood, computed with ``log_ndtr``, no cut-offs)
    and returns ``x50``, ``w`` and standard errors from the inverse observed information
    (finite-difference Hessian of the negative log-likelihood).
    """
    from scipy.optimize import minimize
    from ..saddle import hessian_fd
    x = np.asarray(x, dtype=float)
    k = np.asarray(successes, dtype=float)
    n = np.asarray(trials, dtype=float)
    if not (x.shape == k.shape == n.shape) or x.ndim != 1 or x.size < 2:
        raise ValueError("x, successes and trials must be 1-d arrays of equal length >= 2")
    check_range("trials", n, 1)
    check_range("successes", k, 0)
    if np.any(k > n):
        raise ValueError("successes must be <= trials")
    frac = k / n
    if not (np.any(frac > 0.5) and np.any(frac < 0.5)):
        raise ValueError("the success fraction must cross 1/2 inside the grid of x")
    # start: linear interpolation of the crossing, width from the grid spacing
    i = int(np.argmax(frac < 0.5))
    x0 = x[max(i - 1, 0)] + (x[i] - x[max(i - 1, 0)]) * 0.5
    w0 = max(np.ptp(x) / 10, 1e-3)
    best = None
    for logw in (math.log(w0), math.log(w0 / 5), math.log(w0 * 3)):
        res = minimize(_probit_nll, [x0, logw], args=(x, k, n), method="Nelder-Mead",
                       options={"xatol": 1e-10, "fatol": 1e-12, "maxiter": 4000})
        if best is None or res.fun < best.fun:
            best = res
    x50, logw = best.x
    Hm = hessian_fd(lambda p: _probit_nll(p, x, k, n), np.array([x50, logw]))
    try:
        cov = np.linalg.inv(Hm)
        ok = bool(np.all(np.linalg.eigvalsh(Hm) > 0))
    except np.linalg.LinAlgError:
        cov, ok = np.full((2, 2), np.inf), False
    w = math.exp(logw)
    x_err = math.sqrt(cov[0, 0]) if ok else math.inf
    w_err = w * math.sqrt(cov[1, 1]) if ok else math.inf
    return TransitionFit(float(x50), float(x_err), float(w), float(w_err), bool(best.success and ok), int(best.nit))


def _log_interval_prob(a, b):
    """log(Phi(b) - Phi(a)) for a < b, stable in both tails."""
    from scipy.special import log_ndtr
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    lower = b <= 0
    out = np.empty(np.broadcast(a, b).shape)
    la, lb = log_ndtr(a), log_ndtr(b)
    out[lower] = lb[lower] + np.log1p(-np.exp(la[lower] - lb[lower]))
    ua, ub = log_ndtr(-a), log_ndtr(-b)
    up = ~lower
    out[up] = ua[up] + np.log1p(-np.exp(ub[up] - ua[up]))
    return out


def censored_normal_fit(k):
    """Interval-censored Gaussian MLE of integer thresholds ``k_i = floor(X_i)``.

    Returns ``(mu, mu_err, sigma, sigma_err)``; ``mu`` is the 50 % point of the success
    probability ``P(X >= x)``.  Standard errors from the inverse observed information.
    """
    from scipy.optimize import minimize
    from ..saddle import hessian_fd
    k = np.asarray(k, dtype=float).reshape(-1)
    if k.size < 2 or not np.all(np.isfinite(k)):
        raise ValueError("k must hold at least 2 finite values")
    if np.ptp(k) == 0:
        raise ValueError("k must not be all equal (the width is then not identifiable)")

    def nll(p):
        mu, logs = p
        s = math.exp(logs)
        return -float(np.sum(_log_interval_prob((k - mu) / s, (k + 1 - mu) / s)))

    x0 = [k.mean() + 0.5, math.log(max(k.std(), 0.3))]
    res = minimize(nll, x0, method="Nelder-Mead", options={"xatol": 1e-9, "fatol": 1e-12, "maxiter": 4000})
    mu, logs = res.x
    Hm = hessian_fd(nll, np.array([mu, logs]))
    ok = bool(res.success and np.all(np.linalg.eigvalsh(Hm) > 0))
    if not ok:
        from ..errors import ConvergenceError
        raise ConvergenceError("censored normal fit did not converge", x=res.x, iterations=res.nit)
    cov = np.linalg.inv(Hm)
    s = math.exp(logs)
    return float(mu), float(math.sqrt(cov[0, 0])), float(s), float(s * math.sqrt(cov[1, 1]))


@dataclass(frozen=True, repr=False)
class Extrapolation(Simulation):
    """Result of :func:`extrapolate`: ``y(N) = y_inf + sum_k coef[k] * N**(-exponents[k])``.

    ``y_inf`` is the headline, ``error`` = ``y_inf_err`` (inf when there are no degrees of
    freedom to estimate the scatter and no ``y_err`` was given); a linear least-squares fit in
    closed form: ``converged`` True, ``residual`` 0.0, ``iterations`` 0; ``ansatz`` ``"-"``.
    """
    y_inf: float
    y_inf_err: float
    coef: tuple
    exponents: tuple
    chi2_dof: float

    headline = "y_inf"
    converged = True
    residual = 0.0
    iterations = 0

    @property
    def error(self):
        """The standard error of ``y_inf``."""
        return self.y_inf_err

    def __call__(self, N):
        N = np.asarray(N, dtype=float)
        return self.y_inf + sum(c * N ** (-e) for c, e in zip(self.coef, self.exponents))


def extrapolate(N, y, y_err=None, exponents=(1.0,)) -> Extrapolation:
    """Weighted least-squares extrapolation to ``N -> inf``.

    Fits ``y(N) = y_inf + sum_k a_k N^(-e_k)`` (``exponents`` = the ``e_k``).  The standard
    error of ``y_inf`` comes from the parameter covariance, inflated by ``sqrt(chi2/dof)``
    when the fit is worse than the error bars say (never deflated).
    """
    N = check_range("N", N, 1)
    y = np.asarray(y, dtype=float)
    if N.ndim != 1 or N.shape != y.shape:
        raise ValueError("N and y must be 1-d arrays of equal length")
    exps = tuple(float(e) for e in exponents)
    npar = 1 + len(exps)
    if N.size < npar:
        raise ValueError(f"need at least {npar} sizes to fit {npar} parameters, got {N.size}")
    sig = np.ones_like(y) if y_err is None else check_range("y_err", y_err, 0, lo_open=True)
    X = np.column_stack([np.ones_like(N)] + [N ** (-e) for e in exps])
    Xw = X / sig[:, None]
    yw = y / sig
    coef, *_ = np.linalg.lstsq(Xw, yw, rcond=None)
    cov = np.linalg.inv(Xw.T @ Xw)
    dof = N.size - npar
    chi2 = float(np.sum((Xw @ coef - yw) ** 2))
    chi2_dof = chi2 / dof if dof > 0 else float("nan")
    scale = 1.0
    if y_err is None:
        scale = math.sqrt(chi2_dof) if dof > 0 else math.inf
    elif dof > 0 and chi2_dof > 1:
        scale = math.sqrt(chi2_dof)
    err = math.sqrt(cov[0, 0]) * scale
    return Extrapolation(float(coef[0]), float(err), tuple(float(c) for c in coef[1:]), exps,
                         float(chi2_dof) if dof > 0 else math.inf)
