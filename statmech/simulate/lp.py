r"""Spherical perceptron storage at finite N: linear programming and least-distance programming.

Problem (Eqs. 2.1 and 2.26 of Tartaglione 2019, PhD thesis, Politecnico di Torino, with
spherical weights; Gardner 1988): given ``P = alpha N`` patterns
``xi_mu in R^N`` and labels ``sigma_mu = +-1``, is there a ``w`` with ``|w|^2 = N`` and

    Delta_mu = sigma_mu w . xi_mu / sqrt(N) >= kappa   for all mu ?

How the margin interacts with the normalization
-----------------------------------------------
Write ``a_mu = sigma_mu xi_mu`` and ``u = w/|w|`` (so ``Delta_mu = a_mu . u``).

* ``kappa = 0``: the constraints are scale invariant and the normalization is irrelevant;
  storability is strict linear separability ``exists w: a_mu . w > 0``, a pure **linear
  program**: maximize ``t`` subject to ``a_mu . w >= t``, ``-1 <= w_i <= 1``, ``t <= 1``
  (HiGHS via :func:`scipy.optimize.linprog`); separable iff ``t* > 0``, and then the LP's
  ``w`` is a certificate.
* ``kappa > 0``: an LP ``a_mu . w >= kappa sqrt(N)`` *without* the norm is feasible as soon
  as the patterns are separable (scale ``w`` up), so it would return ``alpha_c = 2`` for
  every ``kappa``; replacing ``|w|^2 = N`` by a box or an L1 bound solves a *different*
  problem (another capacity).  The correct statement: the largest achievable margin is
  ``kappa_max = max_{|u|=1} min_mu a_mu . u = 1/|w*|`` with ``w*`` the minimum-norm solution of
  ``a_mu . w >= 1`` (scale any unit ``u`` with margin ``kappa_max`` by ``1/kappa_max``), and the
  instance is storable iff ``kappa_max >= kappa``.  ``w*`` is a least-distance program (LDP),
  solved exactly by the Lawson--Hanson reduction to non-negative least squares
  (``scipy.optimize.nnls``): with ``E = [a_1 .. a_P ; 1 .. 1]`` ((N+1) x P) and ``f = e_{N+1}``,
  the NNLS solution ``lambda`` gives ``r = E lambda - f`` and ``w* = -r[:N]/r[N]``
  (Lawson & Hanson 1974, ch. 23).  Both sides are **certified**: the achieved margin
  ``kappa_lower = min_mu a_mu . w*/|w*|`` is attained by an explicit vector, and weak duality
  gives ``kappa_max <= kappa_upper = |sum_mu lambda_mu a_mu| / sum_mu lambda_mu`` for any
  ``lambda >= 0`` (the distance from the origin to the convex hull of the ``a_mu``).  The
  returned ``kappa_max`` has ``kappa_upper - kappa_lower ~ 1e-14``.
* ``kappa < 0`` is not supported: the feasible set on the sphere is then non-convex.

Finite-N capacity of an instance: storability is monotone in the number of patterns, so
``P_c`` (the largest storable prefix ``xi_1 .. xi_P``) is found by bisection with the fast
LDP test; the final bracket is certified (``P_c`` by an explicit ``w``, ``P_c + 1`` by the
dual bound for ``kappa > 0`` and by the LP for ``kappa = 0``).  The fraction of storable
instances at ``alpha`` is ``P(P_c >= alpha N)``; its 50 % point is fitted by interval-censored
maximum likelihood (:func:`statmech.simulate.finite_size.censored_normal_fit`) and
extrapolated in ``1/N`` (:func:`capacity_extrapolation`).  Check: for ``kappa = 0``, Cover's
theorem gives exactly ``P(P_c >= P) = 2^{1-P} sum_{k<N} binom(P-1, k)`` (:func:`cover_probability`)
and ``E[P_c] = 2N``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import ConvergenceError, check_choice, check_int, check_range
from ._result import Simulation
from .finite_size import censored_normal_fit, extrapolate, instance_rng, map_tasks

__all__ = [
    "StabilityResult", "max_stability", "lp_separable", "is_storable", "instance_capacity",
    "cover_probability", "spherical_storage_lp", "SphericalStorageSample", "capacity_extrapolation",
]


def _stabilities_matrix(patterns, labels):
    xi = np.asarray(patterns, dtype=float)
    if xi.ndim != 2 or xi.shape[1] < 1:
        raise ValueError(f"patterns must be a 2-d array (P, N) with N >= 1, got shape {xi.shape}")
    if not np.all(np.isfinite(xi)):
        raise ValueError("patterns must be finite")
    sig = np.asarray(labels, dtype=float).reshape(-1)
    if sig.shape != (xi.shape[0],):
        raise ValueError(f"labels must have length P = {xi.shape[0]}, got shape {np.shape(labels)}")
    if not np.all(np.abs(sig) == 1.0):
        raise ValueError("labels must be +1 or -1")
    return sig[:, None] * xi


@dataclass(frozen=True, repr=False)
class StabilityResult(Simulation):
    """Maximal margin of an instance: ``kappa_max`` in ``[kappa_lower, kappa_upper]``.

    ``separable`` is False when no ``w`` has all stabilities > 0 (then ``kappa_max <= 0``
    and ``kappa_lower = kappa_upper = kappa_max = 0.0`` is only an upper bound;
    the sign is certified by the LP).  ``w`` (``|w|^2 = N``) attains ``kappa_lower``.

    Protocol: the headline is ``kappa_max``; ``residual`` the certified duality gap
    ``kappa_upper - kappa_lower``; ``error`` the same gap for a separable instance (the exact
    margin lies in the certified interval) and ``inf`` for a non-separable one (0.0 is then a
    bound, not an estimate); ``converged`` True (a failed solve raises ConvergenceError);
    ``iterations`` 0 (scipy's NNLS and HiGHS do not report theirs); ``ansatz`` ``"-"``.
    """
    kappa_max: float
    kappa_lower: float
    kappa_upper: float
    separable: bool
    w: np.ndarray | None

    headline = "kappa_max"
    converged = True
    iterations = 0

    @property
    def residual(self):
        """The certified duality gap ``kappa_upper - kappa_lower``."""
        return float(self.kappa_upper - self.kappa_lower)

    @property
    def error(self):
        """Width of the certified interval around ``kappa_max`` (inf when not separable)."""
        return float(self.kappa_upper - self.kappa_lower) if self.separable else math.inf


def _ldp(A):
    """Minimum-norm w with A w >= 1 via Lawson-Hanson NNLS; returns (w or None, lam)."""
    from scipy.optimize import nnls
    P, N = A.shape
    E = np.vstack([A.T, np.ones((1, P))])
    f = np.zeros(N + 1)
    f[-1] = 1.0
    try:
        lam, _ = nnls(E, f, maxiter=max(50 * P, 1000))
    except RuntimeError as exc:  # iteration limit
        raise ConvergenceError(f"NNLS (least-distance program) failed: {exc}",
                               diagnostics={"P": P, "N": N}) from None
    r = E @ lam - f
    if not r[-1] < 0 or not np.all(np.isfinite(r)):
        return None, lam
    return -r[:-1] / r[-1], lam


def _margin_bounds(A, w, lam):
    lo = -math.inf
    if w is not None:
        nw = float(np.linalg.norm(w))
        if nw > 0:
            lo = float(np.min(A @ w)) / nw
    s = float(lam.sum())
    hi = float(np.linalg.norm(A.T @ lam)) / s if s > 0 else math.inf
    return lo, hi


def max_stability(patterns, labels) -> StabilityResult:
    """Largest margin ``kappa_max = max_{|w|^2=N} min_mu sigma_mu w.xi_mu/sqrt(N)`` (exact, certified).

    Least-distance program by NNLS (module docstring); the sign for non-separable
    instances is certified by the LP (:func:`lp_separable`).
    """
    A = _stabilities_matrix(patterns, labels)
    P, N = A.shape
    if P == 0:
        raise ValueError("patterns must contain at least one pattern (P >= 1)")
    w, lam = _ldp(A)
    lo, hi = _margin_bounds(A, w, lam)
    if lo > 0:
        if hi < lo - 1e-9 * max(1.0, lo):
            raise ConvergenceError("LDP margin bounds are inconsistent", diagnostics={"lower": lo, "upper": hi})
        hi = max(hi, lo)
        wn = w * (math.sqrt(N) / np.linalg.norm(w))
        return StabilityResult(0.5 * (lo + hi), lo, hi, True, wn)
    sep, w_lp = lp_separable(patterns, labels, method="lp")
    if sep:  # NNLS missed a (nearly degenerate) separable instance: report the LP margin
        wn = w_lp * (math.sqrt(N) / np.linalg.norm(w_lp))
        lo = float(np.min(A @ wn)) / math.sqrt(N)
        return StabilityResult(lo, lo, max(lo, hi), True, wn)
    return StabilityResult(0.0, 0.0, 0.0, False, None)


def _farkas(A, lam):
    """Exact non-separability certificate from the NNLS support: lambda >= 0 with
    sum lambda = 1 and A^T lambda = 0 on the support (square system), or None."""
    S = np.nonzero(lam > 0)[0]
    P, N = A.shape
    if S.size != N + 1:
        return None
    M = np.vstack([A[S].T, np.ones((1, S.size))])
    rhs = np.zeros(N + 1)
    rhs[-1] = 1.0
    try:
        x = np.linalg.solve(M, rhs)
    except np.linalg.LinAlgError:
        return None
    if not np.all(x > 0):
        return None
    scale = np.abs(A[S]).max() * math.sqrt(N)
    if np.linalg.norm(A[S].T @ x) > 1e-8 * scale:
        return None
    out = np.zeros(P)
    out[S] = x
    return out


def lp_separable(patterns, labels, method="auto"):
    """Strict linear separability (the ``kappa = 0`` storage problem): ``(separable, w)``.

    ``method="lp"``: the linear program maximize ``t`` s.t. ``sigma_mu xi_mu . w >= t``,
    ``|w_i| <= 1``, ``t <= 1`` (HiGHS); separable iff ``t* > 0`` and the returned ``w`` has all
    stabilities > 0 (an explicit certificate).  ``method="auto"`` (faster, same answer): the
    least-distance program first; separable when its ``w`` certifies it; not separable when
    the NNLS support yields a Farkas certificate (``lambda > 0``, ``sum lambda = 1``,
    ``sum lambda_mu sigma_mu xi_mu = 0``, solved exactly on the N + 1 support points);
    otherwise the LP decides.  Raises ConvergenceError if HiGHS fails.
    """
    from scipy.optimize import linprog
    check_choice("method", method, ("auto", "lp"))
    A = _stabilities_matrix(patterns, labels)
    P, N = A.shape
    if P == 0:
        return True, np.ones(N)
    if method == "auto":
        w, lam = _ldp(A)
        if w is not None and np.all(A @ w > 0):
            return True, w
        if _farkas(A, lam) is not None:
            return False, None
    scale = np.linalg.norm(A, axis=1, keepdims=True)
    scale[scale == 0] = 1.0
    As = A / scale
    c = np.zeros(N + 1)
    c[-1] = -1.0
    A_ub = np.hstack([-As, np.ones((P, 1))])
    res = None
    for meth in ("highs-ipm", "highs-ds"):
        res = linprog(c, A_ub=A_ub, b_ub=np.zeros(P), bounds=[(-1.0, 1.0)] * N + [(None, 1.0)],
                      method=meth)
        if res.status == 0:
            break
    if res.status != 0:
        raise ConvergenceError(f"HiGHS LP failed: {res.message}", diagnostics={"status": res.status})
    w = res.x[:N]
    t = -res.fun
    if t > 1e-9 and np.all(A @ w > 0):
        return True, w
    return False, None


def is_storable(patterns, labels, kappa=0.0) -> bool:
    """Whether some ``|w|^2 = N`` has all stabilities >= ``kappa`` (``kappa >= 0``).

    ``kappa = 0``: LP.  ``kappa > 0``: certified LDP margin (module docstring).
    """
    kappa = float(check_range("kappa", kappa, 0.0))
    if kappa == 0.0:
        return lp_separable(patterns, labels)[0]
    return _decide(_stabilities_matrix(patterns, labels), kappa, certify=True)


def _decide(A, kappa, certify):
    """Is the instance with rows A storable at margin kappa (fast LDP test)?"""
    if A.shape[0] == 0:
        return True
    w, lam = _ldp(A)
    lo, hi = _margin_bounds(A, w, lam)
    if kappa == 0.0:
        if lo > 0:
            return True
        return lp_separable(A, np.ones(A.shape[0]))[0] if certify else False
    if lo >= kappa:
        return True
    if hi < kappa:
        return False
    # kappa inside the (1e-14 wide) certified interval: decide by the midpoint
    return 0.5 * (lo + hi) >= kappa


def instance_capacity(patterns, labels, kappa=0.0, method="auto"):
    """Largest ``p`` such that the first ``p`` patterns are storable at margin ``kappa``.

    Bisection with the LDP test, final bracket certified (``p`` by an explicit ``w``,
    ``p + 1`` by weak duality for ``kappa > 0`` or by :func:`lp_separable` (``method``) for
    ``kappa = 0``).  Returns ``P`` when every pattern is storable (censored).
    """
    kappa = float(check_range("kappa", kappa, 0.0))
    check_choice("method", method, ("auto", "lp"))
    A = _stabilities_matrix(patterns, labels)
    P = A.shape[0]
    lo, hi = 0, P + 1        # storable(lo) is True; storable(hi) False (virtual for P + 1)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if _decide(A[:mid], kappa, certify=False):
            lo = mid
        else:
            hi = mid
    # certify the upper side for kappa = 0 with the LP (the LDP cannot certify "not separable")
    while kappa == 0.0 and hi <= P and lp_separable(A[:hi], np.ones(hi), method=method)[0]:
        lo, hi = hi, hi + 1
    return lo


def cover_probability(P, N):
    """Cover (1965): probability that ``P`` random points in general position with random
    labels are linearly separable through the origin in ``R^N``:
    ``2^{1-P} sum_{k=0}^{N-1} binom(P-1, k)`` (1 for ``P <= N``)."""
    from scipy.stats import binom
    P = np.asarray(P)
    N = check_int("N", N, lo=1)
    return np.where(P <= N, 1.0, binom.cdf(N - 1, np.maximum(P - 1, 0), 0.5))


# --------------------------------------------------------------------------- sweeps
def _capacity_task(args):
    seed, N, i, P_max, kappa, dist, method = args
    rng = instance_rng(seed, N, i)
    if dist == "gaussian":
        xi = rng.standard_normal((P_max, N))
    else:
        xi = 2.0 * rng.integers(0, 2, size=(P_max, N)) - 1.0
    sigma = 2.0 * rng.integers(0, 2, size=P_max) - 1.0
    return instance_capacity(xi, sigma, kappa, method)


@dataclass(frozen=True, repr=False)
class SphericalStorageSample(Simulation):
    """Instance capacities ``P_c`` of random spherical-storage instances of size ``N``.

    The fraction of storable instances at ``alpha`` is ``P(P_c >= alpha N)``
    (:meth:`fraction`); ``P_max`` censors the search (``n_censored`` instances reached it).

    Protocol: the headline is ``alpha_c``, the mean instance capacity ``<P_c>/N``, with
    ``error`` its standard error over the instances (:meth:`mean_capacity`); every instance
    capacity is an exact, certified LP/LDP decision: ``converged`` True, ``residual`` 0.0;
    ``iterations`` = the number of instances; ``ansatz`` ``"-"``.
    """
    N: int
    kappa: float
    dist: str
    seed: int
    P_max: int
    capacity: np.ndarray

    headline = "alpha_c"
    converged = True
    residual = 0.0

    @property
    def n_censored(self):
        return int(np.sum(self.capacity >= self.P_max))

    @property
    def alpha_c(self):
        """The mean instance capacity ``<P_c>/N`` (a lower bound if ``n_censored > 0``)."""
        return self.mean_capacity()[0]

    @property
    def error(self):
        """The standard error of ``alpha_c`` over the instances."""
        return self.mean_capacity()[1]

    @property
    def iterations(self):
        """The number of instances."""
        return int(self.capacity.size)

    def fraction(self, alpha):
        """Fraction of instances storable at ``alpha`` (``P = round(alpha N)``) and its
        1-sigma Wilson interval: ``(frac, lo, hi)``."""
        from .finite_size import binomial_interval
        a = np.asarray(check_range("alpha", alpha, 0.0), dtype=float)
        P = np.rint(a * self.N)
        k = np.sum(self.capacity[:, None] >= P.reshape(-1)[None, :], axis=0).reshape(a.shape)
        n = self.capacity.size
        lo, hi = binomial_interval(k, n)
        return k / n, lo, hi

    def alpha_50(self):
        """50 % point ``(alpha_50, err)`` from the interval-censored normal fit of ``P_c``."""
        mu, err, _, _ = censored_normal_fit(self.capacity)
        return mu / self.N, err / self.N

    def mean_capacity(self):
        """``E[P_c]/N`` and its standard error (Cover: exactly 2 for ``kappa = 0``)."""
        a = self.capacity / self.N
        return float(a.mean()), float(a.std(ddof=1) / math.sqrt(a.size))


def spherical_storage_lp(N, n_instances, kappa=0.0, *, seed=0, dist="gaussian", P_max=None,
                         method="auto", executor=None, progress=True) -> SphericalStorageSample:
    """Instance capacities of ``n_instances`` random instances of size ``N`` at margin ``kappa``.

    Patterns Gaussian (default) or +-1, labels random; instance ``i`` uses
    :func:`~statmech.simulate.finite_size.instance_rng` ``(seed, N, i)`` (reproducible,
    executor independent).  ``P_max`` (default ``3N + 20``, far above ``alpha_c(kappa >= 0) N``)
    bounds the search.  ``method`` is passed to :func:`lp_separable` for the ``kappa = 0``
    certificates (``"lp"``: HiGHS for every one).  ``executor``: any concurrent.futures
    Executor (None: serial).
    """
    N = check_int("N", N, lo=2)
    n_instances = check_int("n_instances", n_instances, lo=2)
    kappa = float(check_range("kappa", kappa, 0.0))
    seed = check_int("seed", seed, lo=0)
    check_choice("dist", dist, ("gaussian", "binary"))
    P_max = 3 * N + 20 if P_max is None else check_int("P_max", P_max, lo=1)
    check_choice("method", method, ("auto", "lp"))
    tasks = [(seed, N, i, P_max, kappa, dist, method) for i in range(n_instances)]
    caps = map_tasks(_capacity_task, tasks, executor, desc=f"LP N={N}", progress=progress)
    return SphericalStorageSample(N, kappa, dist, seed, P_max, np.array(caps, dtype=np.int64))


def capacity_extrapolation(samples, exponents=(1.0,), estimator="alpha_50"):
    """Extrapolate the finite-N 50 % point (or ``"mean"`` capacity) of several sizes to N -> inf.

    ``samples``: :class:`SphericalStorageSample` for several ``N`` (same kappa).  Fits
    ``a(N) = alpha_inf + sum_k c_k N^-e_k`` by weighted least squares
    (:func:`statmech.simulate.finite_size.extrapolate`).
    """
    check_choice("estimator", estimator, ("alpha_50", "mean"))
    samples = list(samples)
    if len({s.kappa for s in samples}) != 1:
        raise ValueError("samples must all have the same kappa")
    vals = [s.alpha_50() if estimator == "alpha_50" else s.mean_capacity() for s in samples]
    Ns = np.array([s.N for s in samples], dtype=float)
    return extrapolate(Ns, [v[0] for v in vals], [v[1] for v in vals], exponents)
