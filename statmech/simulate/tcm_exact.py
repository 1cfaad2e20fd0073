"""Tree committee machine (sign units, majority vote): exact storability at finite N.

A complete decision, not a bound: :func:`storable_exact` (mixed-integer LP, HiGHS),
:func:`storage_fraction_exact` (nested random instances, bisection over the load),
:func:`fifty_percent_point`, :func:`extrapolate_inverse_N`; see docs/committee.md,
"Simulation cross-check".  All are also importable from :mod:`statmech.simulate.tcm`.
A cheap least-action run (:mod:`statmech.simulate.tcm_least_action`) is tried first: a
success proves storability.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import check_int, check_odd_int, check_range
from ._result import DictResult, Simulation
from .tcm_least_action import _outputs, _train

__all__ = ["storable_exact", "ExactStorage", "storage_fraction_exact", "ExactStorageFraction",
           "fifty_percent_point", "FiftyPercentPoint", "extrapolate_inverse_N", "InverseNFit"]


# =====================================================================================
# Exact storability (mixed-integer linear programming) -- the simulation cross-check
# =====================================================================================
#
# A sign TCM stores (xi, sigma) iff there are weights w_l (l = 1..K, each acting on its own
# receptive field x_l^mu = xi^mu[l n:(l+1) n]) such that for every pattern at least
# m = (K+1)/2 hidden units are on the correct side: sigma^mu w_l . x_l^mu > 0.
# Homogeneity: the constraints are invariant under w_l -> c w_l (c > 0), so strict
# inequalities can be replaced by  sigma^mu w_l . x_l^mu >= 1  for the "correct" units,
# with no bound on |w_l|.  The MILP bounds |w|_inf <= B (big-M needs bounded variables):
#
#   binary tau_{l mu} = 1  ->  sigma^mu w_l . x_l^mu >= 1   (big-M row, M_{l mu} = 1 + B |x_l^mu|_1,
#                                                           the tightest valid row-wise M)
#   sum_l tau_{l mu} >= m                                   (majority correct)
#   -B <= w_{l i} <= B
#
# This decides exactly the question "is there a solution whose normalized margin
# gamma = min over correct units of sigma w_l.x_l / |w_l|_inf is >= 1/B".  A storable
# instance with Gaussian inputs (points in general position) has a strictly positive
# optimal gamma*, so the answer equals the true storability for every B > 1/gamma*.
# A too small B can only turn storable into "unstorable" (a solution at B is one at B' > B).
# docs/committee.md measures it near the 50 % point: B = 1e2 misses ~1/4 of the storable
# N = 9 instances, B = 1e3, 1e4 (default), 1e5 agree on all 140 instances tested.  Every
# positive answer is verified with `tcm_output` on the returned weights (exact sign arithmetic).


@dataclass(frozen=True, repr=False)
class ExactStorage(Simulation):
    """Result of :func:`storable_exact`.

    Attributes
    ----------
    stored : bool or None
        True (weights returned and verified), False (infeasibility proved by the MILP),
        None (undecided: time limit hit, or the MILP's solution failed verification).
    weights : ndarray or None
        (K, N/K) array storing the patterns, or None.
    time : float
        Wall-clock seconds.
    status : str
        One of "stored (least action)", "stored (milp)", "unstorable (milp)", "time limit",
        "numerical".
    weight_bound : float
        The bound B used.
    min_field : float or None
        Normalized margin of the returned weights, min over patterns of the ((K+1)/2)-th
        largest ``sigma w_l.x_l / |w_l|_inf`` (> 0; the weights are the max-margin weights of
        their internal representation, so this is a lower bound on the instance's optimal
        margin gamma*); None if not stored.
    iterations : int
        Sweeps of the least-action run when it decided, else the branch-and-bound nodes of the
        MILP (0 where HiGHS does not report them).

    Protocol: the headline is ``stored``; ``converged`` = the question was decided (``stored``
    is not None: a time limit or a failed verification is an outcome, not an exception);
    ``error`` 0.0 (an exact decision); ``residual`` 0.0; ``ansatz`` ``"-"``.
    """
    stored: bool | None
    weights: np.ndarray | None
    time: float
    status: str
    weight_bound: float
    min_field: float | None = None
    iterations: int = 0

    headline = "stored"
    residual = 0.0
    error = 0.0

    @property
    def converged(self):
        """The instance was decided (``stored`` is True or False)."""
        return self.stored is not None


def _check_instance(xi, sigma, K):
    K = check_odd_int("K", K)
    xi = np.ascontiguousarray(np.asarray(xi, dtype=float))
    sigma = np.ascontiguousarray(np.asarray(sigma, dtype=float))
    if xi.ndim != 2 or xi.shape[0] < 1 or xi.shape[1] < K or xi.shape[1] % K:
        raise ValueError(f"xi must be a (P, N) array with P >= 1 and N a positive multiple of K={K}, "
                         f"got shape {xi.shape}")
    if not np.all(np.isfinite(xi)):
        raise ValueError("xi must be finite (no NaN or inf)")
    if sigma.shape != (xi.shape[0],) or not np.all(np.abs(sigma) == 1):
        raise ValueError(f"sigma must be a length-P (P={xi.shape[0]}) array of +-1 labels")
    return xi, sigma, K


def _min_correct_field(W, xi, sigma, K):
    """min over patterns of the m-th largest normalized field sigma w_l.x_l / ``|w_l|_inf``."""
    P, N = xi.shape
    n = N // K
    m = (K + 1) // 2
    scale = np.abs(W).max(axis=1)
    if np.any(scale == 0):
        return 0.0
    h = np.einsum("pln,ln->pl", xi.reshape(P, K, n), W / scale[:, None]) * sigma[:, None]
    return float(np.sort(h, axis=1)[:, K - m].min())


def _polish(W, xi, sigma, K):
    """Max-margin weights at the internal representation of a verified solution W.

    For each branch, with the set C_l of patterns where unit l is on the correct side,
    solve  max gamma  s.t.  sigma w_l.x_l >= gamma (mu in C_l), ``|w_l|_inf <= 1``  (an LP).
    Returns (W', gamma) with gamma = min_l gamma_l > 0, a lower bound on the instance's
    optimal normalized margin gamma*; W' (which realizes the same or a larger set of correct
    units) is re-verified, else the input W (rescaled) is returned with its own margin.
    """
    from scipy.optimize import linprog
    P, N = xi.shape
    n = N // K
    X = (xi * sigma[:, None]).reshape(P, K, n)
    W = np.asarray(W, dtype=float)
    correct = np.einsum("pln,ln->pl", X, W) > 0
    Wp = np.empty_like(W)
    gam = np.inf
    for l in range(K):
        A = X[correct[:, l], l, :]
        if A.shape[0] == 0:
            m = np.abs(W[l]).max()            # branch unused by the internal representation
            Wp[l] = W[l] / m if m > 0 else W[l]
            continue
        # variables (w, gamma): minimize -gamma, -A w + gamma <= 0
        res = linprog(np.r_[np.zeros(n), -1.0], A_ub=np.c_[-A, np.ones(A.shape[0])], b_ub=np.zeros(A.shape[0]),
                      bounds=[(-1.0, 1.0)] * n + [(None, None)], method="highs")
        if res.status != 0 or res.x[-1] <= 0:
            Wp = None
            break
        Wp[l] = res.x[:n]
        gam = min(gam, float(res.x[-1]))
    if Wp is not None and np.all(_outputs(np.ascontiguousarray(Wp), xi, K) == sigma):
        return Wp, _min_correct_field(Wp, xi, sigma, K)
    W = W / np.abs(W).max(axis=1, keepdims=True)
    return W, _min_correct_field(W, xi, sigma, K)


def _milp_problem(xi, sigma, K, B):
    from scipy.sparse import coo_matrix
    P, N = xi.shape
    n = N // K
    m = (K + 1) // 2
    X = (xi * sigma[:, None]).reshape(P, K, n)          # y^mu x_l^mu
    M = 1.0 + B * np.abs(X).sum(axis=2)                 # (P, K) tight row-wise big-M
    # rows r = l*P + mu: X[mu,l] . w_l - M tau_{l mu} >= 1 - M
    r = np.arange(K * P)
    l_of_r, mu_of_r = np.divmod(r, P)
    rows_w = np.repeat(r, n)
    cols_w = (l_of_r[:, None] * n + np.arange(n)[None, :]).ravel()
    vals_w = X[mu_of_r, l_of_r, :].ravel()
    Mr = M[mu_of_r, l_of_r]
    rows_t = r
    cols_t = N + r                                        # tau index N + l*P + mu
    # majority rows K*P + mu: sum_l tau_{l mu} >= m
    rows_m = np.repeat(K * P + np.arange(P), K)
    cols_m = N + (np.arange(K)[None, :] * P + np.arange(P)[:, None]).ravel()
    A = coo_matrix((np.concatenate([vals_w, -Mr, np.ones(K * P)]),
                    (np.concatenate([rows_w, rows_t, rows_m]), np.concatenate([cols_w, cols_t, cols_m]))),
                   shape=(K * P + P, N + K * P)).tocsr()
    lb = np.concatenate([1.0 - Mr, np.full(P, float(m))])
    ub = np.full(K * P + P, np.inf)
    return A, lb, ub


def storable_exact(xi, sigma, K=3, *, time_limit=600.0, weight_bound=1e4, try_least_action=True,
                   least_action_sweeps=200, seed=0):
    """Decide exactly whether a sign tree committee machine can store (xi, sigma).

    Tree committee machine: K (odd) disjoint receptive fields of n = N/K inputs, sign hidden
    units, majority vote output (docs/committee.md, "Simulation cross-check").  Method:
    optionally a cheap least-action run (a success is a proof of storability); otherwise the
    mixed-integer linear program above (scipy.optimize.milp / HiGHS) which either returns
    weights (verified with :func:`tcm_output`) or proves infeasibility.

    Exactness: the MILP answers "is there a solution with normalized margin
    min sigma ``w_l.x_l/|w_l|_inf >= 1/weight_bound``"; for inputs in general position
    (continuous distributions) this is the storability question for any weight_bound above
    the instance's 1/gamma* (measured in docs: x10 in B never changed an answer).
    A time-limited run returns ``stored=None`` ("time limit"); it is never reported as unstorable.

    Parameters: xi (P, N) inputs, sigma (P,) labels +-1, K odd, time_limit (s, wall clock,
    HiGHS), weight_bound B > 0, try_least_action, least_action_sweeps, seed (of the learner).
    """
    import time as _time
    from scipy.optimize import Bounds, LinearConstraint, milp

    xi, sigma, K = _check_instance(xi, sigma, K)
    check_range("time_limit", time_limit, 0.0, lo_open=True)
    B = float(check_range("weight_bound", weight_bound, 0.0, lo_open=True, hi_open=True))
    P, N = xi.shape
    n = N // K
    t0 = _time.perf_counter()
    if try_least_action:
        sweeps = check_int("least_action_sweeps", least_action_sweeps, 1)
        W, ok, done = _train(xi, sigma, K, sweeps, int(seed), 0.1)
        if ok and np.all(_outputs(W, xi, K) == sigma):
            W, g = _polish(W, xi, sigma, K)
            return ExactStorage(True, W, _time.perf_counter() - t0, "stored (least action)", B, g, int(done))
    A, lb, ub = _milp_problem(xi, sigma, K, B)
    nv = N + K * P
    integrality = np.concatenate([np.zeros(N), np.ones(K * P)])
    bounds = Bounds(np.concatenate([np.full(N, -B), np.zeros(K * P)]),
                    np.concatenate([np.full(N, B), np.ones(K * P)]))
    remaining = max(1e-3, float(time_limit) - (_time.perf_counter() - t0))
    res = milp(np.zeros(nv), constraints=LinearConstraint(A, lb, ub), integrality=integrality, bounds=bounds,
               options={"time_limit": remaining})
    dt = _time.perf_counter() - t0
    nodes = int(getattr(res, "mip_node_count", None) or 0)
    if res.status == 2:
        return ExactStorage(False, None, dt, "unstorable (milp)", B, None, nodes)
    if res.x is not None and res.status in (0, 1):
        W = np.asarray(res.x[:N], dtype=float).reshape(K, n)
        if np.all(_outputs(np.ascontiguousarray(W), xi, K) == sigma):
            W, g = _polish(W, xi, sigma, K)
            return ExactStorage(True, W, _time.perf_counter() - t0, "stored (milp)", B, g, nodes)
        return ExactStorage(None, None, dt, "numerical", B, None, nodes)
    if res.status == 1:
        return ExactStorage(None, None, dt, "time limit", B, None, nodes)
    return ExactStorage(None, None, dt, "numerical", B, None, nodes)


def _largest_stored_prefix(xi, sigma, K, P_grid, time_limit, weight_bound, seed):
    """Storability of the nested prefixes xi[:P] for every P in the sorted ``P_grid``.

    Storability is monotone (a subset of a storable set is storable), so a bisection over the
    grid decides every prefix with ~log2(len(P_grid)) + 1 exact solves.  A solve that hits the
    time limit leaves its grid point undecided and the bisection continues on the remaining
    points; undecided points come out as None.  Returns (status list, records of each solve).
    """
    G = len(P_grid)
    lo, hi = -1, G            # P_grid[<= lo] stored, P_grid[>= hi] unstorable
    unknown = set()
    solves = []
    while True:
        cand = [i for i in range(lo + 1, hi) if i not in unknown]
        if not cand:
            break
        c = cand[len(cand) // 2]
        P = int(P_grid[c])
        r = storable_exact(xi[:P], sigma[:P], K, time_limit=time_limit, weight_bound=weight_bound,
                           seed=seed + c)
        solves.append({"P": P, "stored": r.stored, "status": r.status, "time": r.time,
                       "min_field": r.min_field})
        if r.stored:
            lo = c
            # the weights may store further prefixes for free
            out = _outputs(np.ascontiguousarray(r.weights), xi, K) == sigma
            for j in range(c + 1, hi):
                if np.all(out[:int(P_grid[j])]):
                    lo = j
                else:
                    break
        elif r.stored is False:
            hi = c
        else:
            unknown.add(c)
    status = [True if i <= lo else (False if i >= hi else None) for i in range(G)]
    return status, solves


def _exact_instance_task(args):
    """One random instance (Gaussian inputs, random labels) of storage_fraction_exact."""
    K, N, P_grid, seed, index, time_limit, weight_bound = args
    rng = np.random.default_rng([seed, index])
    Pmax = int(max(P_grid))
    xi = rng.standard_normal((Pmax, N))
    sigma = rng.choice([-1.0, 1.0], size=Pmax)
    status, solves = _largest_stored_prefix(xi, sigma, K, list(P_grid), time_limit, weight_bound, 1000 * index)
    return {"index": int(index), "status": status, "solves": solves}


@dataclass(frozen=True, repr=False)
class ExactStorageFraction(Simulation):
    """Result of :func:`storage_fraction_exact` (one entry per alpha, sorted by P).

    fraction = stored / decided, stderr = sqrt(f (1 - f) / decided) (binomial), timeouts =
    undecided instances (time limit) at that alpha -- excluded from the fraction, reported here.
    status : (n_instances, n_alpha) array, 1 stored, 0 unstorable, -1 undecided.
    solve_times : seconds of every exact solve; solve_P : their P; solve_stored : 1/0/-1.

    Protocol: the headline is ``fraction`` with ``error`` = ``stderr`` (per alpha);
    ``converged`` = every instance was decided at every alpha (no time limit hit; undecided
    instances are an outcome, reported in ``timeouts``); ``iterations`` = the exact solves;
    ``residual`` 0.0; ``ansatz`` ``"-"``.
    """
    alpha: np.ndarray
    P: np.ndarray
    fraction: np.ndarray
    stderr: np.ndarray
    stored: np.ndarray
    decided: np.ndarray
    timeouts: np.ndarray
    K: int
    N: int
    n_instances: int
    status: np.ndarray
    solve_times: np.ndarray
    solve_P: np.ndarray
    solve_stored: np.ndarray
    weight_bound: float
    time_limit: float
    seed: int

    headline = "fraction"
    residual = 0.0

    @property
    def converged(self):
        """No instance was left undecided (``timeouts`` all 0)."""
        return bool(np.all(np.asarray(self.timeouts) == 0))

    @property
    def error(self):
        """The binomial standard error of ``fraction``."""
        return self.stderr

    @property
    def iterations(self):
        """The exact solves (MILP or least action) of all instances."""
        return int(np.size(self.solve_times))


def storage_fraction_exact(alpha, K=3, N=12, n_instances=40, *, seed=0, executor=None, progress=True,
                           time_limit=600.0, weight_bound=1e4, first_instance=0):
    """Exact fraction of random instances a sign tree committee machine can store, vs alpha.

    Instances: Gaussian inputs xi ~ N(0, 1)^(P x N) (general position, so the MILP of
    :func:`storable_exact` is exact, see its docstring), random labels +-1, P = round(alpha N).
    The instances are NESTED: instance i draws P_max = max P patterns once and the point alpha
    uses its first P patterns, so by monotonicity a bisection decides every alpha of the grid
    with ~log2(len(alpha)) + 1 exact solves per instance (each alpha's count is still binomial;
    different alphas share instances, so their errors are correlated).

    Parameters: alpha (scalar or 1-d, >= 0), K odd, N a positive multiple of K, n_instances,
    seed, executor (None: serial; or any object with ``submit(fn, *args)`` returning futures
    with ``done()``/``result()``: concurrent.futures executors, dask Client), progress (tqdm),
    time_limit per exact solve (s), weight_bound (B of the MILP), first_instance (instance i uses
    the random stream (seed, first_instance + i): consecutive calls extend a data set in chunks).
    Returns :class:`ExactStorageFraction` (fraction with binomial error, timeouts per alpha).
    """
    import concurrent.futures as cf
    import time as _time

    K = check_odd_int("K", K)
    N = check_int("N", N, K)
    if N % K:
        raise ValueError(f"N must be a positive multiple of K={K}, got N={N}")
    n_instances = check_int("n_instances", n_instances, 1)
    a = np.atleast_1d(check_range("alpha", alpha, 0.0)).astype(float)
    if a.ndim != 1:
        raise ValueError(f"alpha must be a scalar or a 1-d array, got shape {a.shape}")
    check_range("time_limit", time_limit, 0.0, lo_open=True)
    check_range("weight_bound", weight_bound, 0.0, lo_open=True, hi_open=True)
    seed = check_int("seed", seed, 0)
    first = check_int("first_instance", first_instance, 0)
    P_all = np.array([max(1, int(round(x * N))) for x in a])
    P_grid = np.unique(P_all)
    if executor is not None and not hasattr(executor, "submit"):
        raise ValueError(f"executor must be None or have a submit(fn, *args) method, got {type(executor).__name__}")
    tasks = [(K, N, tuple(int(p) for p in P_grid), seed, first + i, float(time_limit), float(weight_bound))
             for i in range(n_instances)]
    from tqdm.auto import tqdm
    bar = tqdm(total=n_instances, desc=f"exact TCM K={K} N={N}", disable=not progress, leave=False)
    results = {}
    try:
        if executor is None:
            for t in tasks:
                results[t[4] - first] = _exact_instance_task(t)
                bar.update(1)
        else:
            pending = {executor.submit(_exact_instance_task, t): t[4] - first for t in tasks}
            while pending:
                futs = list(pending)
                if all(isinstance(f, cf.Future) for f in futs):
                    finished, _ = cf.wait(futs, return_when=cf.FIRST_COMPLETED)
                else:
                    finished = [f for f in futs if f.done()]
                    if not finished:
                        _time.sleep(0.01)
                        continue
                for f in finished:
                    results[pending.pop(f)] = f.result()
                    bar.update(1)
    finally:
        bar.close()
    code = {True: 1, False: 0, None: -1}
    st_grid = np.array([[code[s] for s in results[i]["status"]] for i in range(n_instances)], dtype=int)
    col = np.searchsorted(P_grid, P_all)
    status = st_grid[:, col]
    stored = (status == 1).sum(axis=0)
    timeouts = (status == -1).sum(axis=0)
    decided = n_instances - timeouts
    with np.errstate(invalid="ignore", divide="ignore"):
        frac = np.where(decided > 0, stored / np.maximum(decided, 1), 0.0)
    err = np.sqrt(frac * (1 - frac) / np.maximum(decided, 1))
    solves = [s for i in range(n_instances) for s in results[i]["solves"]]
    return ExactStorageFraction(
        alpha=a, P=P_all, fraction=frac, stderr=err, stored=stored, decided=decided, timeouts=timeouts,
        K=K, N=N, n_instances=n_instances, status=status,
        solve_times=np.array([s["time"] for s in solves]), solve_P=np.array([s["P"] for s in solves], dtype=int),
        solve_stored=np.array([code[s["stored"]] for s in solves], dtype=int),
        weight_bound=float(weight_bound), time_limit=float(time_limit), seed=seed)


class FiftyPercentPoint(DictResult):
    """Result of :func:`fifty_percent_point`: the dict it has always returned, with the protocol.

    Keys (also attributes): ``alpha_50`` (the headline), ``stderr`` (bootstrap standard
    deviation), ``ci68`` (central 68 % bootstrap interval), ``n_boot`` (bootstrap samples with
    a crossing).  Protocol: ``error`` = ``stderr``, ``iterations`` = ``n_boot``, ``converged``
    True, ``residual`` 0.0, ``ansatz`` ``"-"``.
    """
    headline = "alpha_50"
    converged = True
    residual = 0.0

    @property
    def error(self):
        return self["stderr"]

    @property
    def iterations(self):
        return int(self["n_boot"])


class InverseNFit(DictResult):
    """Result of :func:`extrapolate_inverse_N`: the dict it has always returned, with the protocol.

    Keys (also attributes): ``limit`` (the N -> infinity value, the headline), ``stderr``,
    ``coef``, ``cov``, ``chi2``, ``dof``, ``power``.  Protocol: ``error`` = ``stderr``; a linear
    least-squares fit in closed form: ``converged`` True, ``residual`` 0.0, ``iterations`` 0;
    ``ansatz`` ``"-"``.
    """
    headline = "limit"
    converged = True
    residual = 0.0
    iterations = 0

    @property
    def error(self):
        return self["stderr"]


def _crossing(P, frac, N):
    """alpha where the (non-increasing) stored fraction crosses 1/2, linear interpolation in P."""
    above = np.nonzero(frac >= 0.5)[0]
    if above.size == 0 or above[-1] == len(P) - 1:
        return math.nan                                   # no crossing inside the grid
    j = above[-1]
    f0, f1 = frac[j], frac[j + 1]
    t = 1.0 if f0 == f1 else (f0 - 0.5) / (f0 - f1)
    return float((P[j] + t * (P[j + 1] - P[j])) / N)


def fifty_percent_point(P, status, N, *, n_boot=2000, seed=0):
    """50 % point alpha_50 of the exactly storable fraction, with a bootstrap error.

    P : sorted integer grid; status : (n_instances, len(P)) with 1 stored, 0 unstorable,
    -1 undecided (excluded); N : inputs.  The fraction f(P) = stored/decided is non-increasing
    for nested instances; alpha_50 = P*/N where the piecewise-linear f(P) crosses 1/2 (for the
    perceptron, K = 1, Cover's theorem gives f(2N) = 1/2 exactly, so the estimator has no
    discretization bias there).  Error: bootstrap over instances (standard deviation and the
    central 68 % interval).  Returns dict(alpha_50, stderr, ci68, n_boot) (a
    :class:`FiftyPercentPoint`, which also follows the result protocol).
    Raises ValueError if the grid does not bracket the crossing.
    """
    P = np.asarray(P, dtype=float)
    S = np.asarray(status, dtype=int)
    if S.ndim != 2 or S.shape[1] != P.size:
        raise ValueError(f"status must have shape (n_instances, {P.size}), got {S.shape}")

    def frac(s):
        dec = (s >= 0).sum(axis=0)
        return np.where(dec > 0, (s == 1).sum(axis=0) / np.maximum(dec, 1), np.nan)

    a50 = _crossing(P, frac(S), N)
    if not math.isfinite(a50):
        raise ValueError("the P grid does not bracket the 50 % point (fraction never crosses 1/2 inside it)")
    rng = np.random.default_rng(seed)
    boots = []
    for _ in range(int(n_boot)):
        b = _crossing(P, frac(S[rng.integers(0, S.shape[0], S.shape[0])]), N)
        if math.isfinite(b):
            boots.append(b)
    boots = np.array(boots)
    return FiftyPercentPoint(alpha_50=a50, stderr=float(boots.std(ddof=1)),
                             ci68=[float(np.quantile(boots, 0.16)), float(np.quantile(boots, 0.84))],
                             n_boot=int(boots.size))


def extrapolate_inverse_N(N, value, stderr, order=1, power=1.0):
    """Weighted least-squares fit value(N) = sum_k c_k x^k, x = N^-power (k = 0..order); returns
    dict (an :class:`InverseNFit`, which also follows the result protocol) with the N -> infinity
    limit c_0, its standard error (from the fit covariance, errors taken as given), all
    coefficients, chi2 and degrees of freedom."""
    N = np.asarray(N, dtype=float)
    y = np.asarray(value, dtype=float)
    s = np.asarray(stderr, dtype=float)
    if N.size < order + 1:
        raise ValueError(f"need at least order + 1 = {order + 1} points, got {N.size}")
    check_range("power", power, 0.0, lo_open=True)
    A = np.vander(N ** -float(power), order + 1, increasing=True)
    Aw, yw = A / s[:, None], y / s
    coef, *_ = np.linalg.lstsq(Aw, yw, rcond=None)
    cov = np.linalg.inv(Aw.T @ Aw)
    chi2 = float(np.sum((Aw @ coef - yw) ** 2))
    dof = int(N.size - order - 1)
    return InverseNFit(limit=float(coef[0]), stderr=float(math.sqrt(cov[0, 0])), coef=coef.tolist(),
                       cov=cov.tolist(), chi2=chi2, dof=dof, power=float(power))
