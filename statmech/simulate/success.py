r"""Success statistics of the learning algorithms: success rates on fresh random instances
and the algorithmic capacity fitted to them (Tartaglione 2019, PhD thesis, Politecnico di
Torino, Figs. 2.8-2.10)."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import check_choice, check_int, check_range
from ._learning import random_binary_instance
from ._result import DictResult, Simulation
from .classic_rules import metropolis_annealing
from .stochastic import stochastic_perceptron

__all__ = ["CapacityEstimate", "SuccessRate", "algorithmic_capacity", "success_rate"]


@dataclass(frozen=True, repr=False)
class CapacityEstimate(Simulation):
    """Algorithmic capacity from success counts: ``P(solve | alpha) = H((alpha - alpha_c)/width)``.

    ``alpha_c`` (where the success probability is 1/2; the headline); ``ci_low, ci_high``: the
    68% profile likelihood interval (where the profile negative log-likelihood is within 1/2 of
    its minimum); ``stderr``: its half-width (robust also when the transition is so steep that
    the Fisher information degenerates); ``width`` with ``width_stderr`` (inverse Fisher
    information, may be inf), ``converged``, ``neg_log_likelihood``, ``iterations`` (Nelder--Mead
    iterations of the best start).  Protocol: ``error`` = ``stderr``, ``residual`` = 0.0 (a
    derivative-free maximisation), ``ansatz`` ``"-"``.
    """
    alpha_c: float
    stderr: float
    width: float
    width_stderr: float
    converged: bool
    neg_log_likelihood: float
    ci_low: float = math.nan
    ci_high: float = math.nan
    iterations: int = 0

    headline = "alpha_c"
    residual = 0.0

    @property
    def error(self):
        """The half-width of the 68 % profile-likelihood interval of ``alpha_c`` (= ``stderr``)."""
        return self.stderr


class SuccessRate(DictResult):
    """Result of :func:`success_rate`: the dict it has always returned, with the result protocol.

    Keys (also attributes): ``alpha``, ``successes``, ``trials``, ``p`` (the headline: the
    fraction solved at each alpha), ``p_err``, ``epochs`` (list per alpha), ``seconds`` (list per
    alpha).  Protocol: ``error`` = ``p_err`` (binomial standard error, one per alpha),
    ``iterations`` = the epochs (sweeps) of all runs together, ``converged`` True (a failed run
    is an outcome, counted in ``p``), ``residual`` 0.0, ``ansatz`` ``"-"``.
    """
    headline = "p"
    converged = True
    residual = 0.0

    @property
    def error(self):
        return self["p_err"]

    @property
    def iterations(self):
        return int(sum(int(e) for eps in self["epochs"] for e in eps))


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
                            float(lo), float(hi), int(best.nit))


def success_rate(alphas, N, runs, *, seed=0, algorithm="stochastic_perceptron", teacher=False,
                 progress=False, **kw):
    """Fraction of fresh random instances solved at each alpha.

    For each alpha, ``runs`` instances ``random_binary_instance(N, alpha)`` are drawn and
    ``algorithm`` (``"stochastic_perceptron"`` or ``"metropolis_annealing"``) is run with
    the keyword arguments ``kw``.  Instance and algorithm seeds are derived from ``seed``, so
    the result is reproducible.  Returns a dict (a :class:`SuccessRate`, which also follows the
    result protocol) with ``alpha``, ``successes``, ``trials``,
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
    return SuccessRate(alpha=alphas, successes=succ, trials=np.full(alphas.size, runs), p=p,
                       p_err=np.sqrt(np.maximum(p * (1 - p), 0.25 / runs) / runs), epochs=eps, seconds=secs)
