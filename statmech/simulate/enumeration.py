r"""Binary (Ising) perceptron by exhaustive enumeration of all 2^N weight vectors.

Weights ``w in {-1, +1}^N`` are encoded as integer bit codes: bit ``i`` of the code is
1 when ``w_i = +1`` and 0 when ``w_i = -1`` (``codes_to_weights`` / ``weights_to_codes``).
The Hamming distance of two codes is ``popcount(a ^ b)``, and the overlap is
``q = w.w'/N = 1 - 2 d/N``.

Constraint (the storage problem with margin ``kappa``, Eqs. 2.1 and 2.26 of Tartaglione 2019,
PhD thesis, Politecnico di Torino, with Ising weights):
pattern ``mu`` is stored by ``w`` when its stability is **strictly** above the margin,

    Delta_mu = sigma_mu (w . xi_mu) / sqrt(N) > kappa .

With ``kappa = 0`` and ``+-1`` patterns use odd ``N``: for even ``N`` a field ``w.xi = 0``
is possible and counts as an error (the sign of 0 is undefined).

Algorithm: the 2^N vectors are visited in Gray-code order, so consecutive vectors differ
by one flipped weight and the P fields ``h_mu = sigma_mu w . xi_mu`` are updated in O(P)
(``h += 2 w_i' xi_i``); they are recomputed from scratch every 2^16 steps so that
real-valued patterns accumulate no drift (with +-1 patterns the float sums are exact
integers).  The kernel records, for every ``w``, the number ``k(w)`` of *leading*
patterns it stores (index of the first violated pattern), and optionally its Hamming
distance ``d(w)`` to a reference vector.  One pass therefore yields the solution counts
of every prefix ``xi_1 .. xi_p`` (p = 0..P) of the pattern sequence,
``N_sol(p) = #{w : k(w) >= p}``, the capacity of the instance (largest ``p`` with
``N_sol(p) > 0``), and, with the teacher as reference, the distribution of the
teacher-student overlap ``R`` in the version space for every ``p``.

Cost: ``2^N * P`` multiply-adds (N = 25, P = 25: about 1 s).  For +-1 patterns a faster
exact path needs no field updates at all: with ``w`` and the label-folded pattern as bit
codes, ``sigma_mu w . xi_mu = N - 2 popcount(code ^ xcode_mu)``, so each pattern is checked
in O(1) and the scan stops at the first violated one (``~2^N`` popcounts per instance,
independent of P; N = 25 in ~0.1 s).  Both paths are tested against brute force and
against each other.  Kernels are numba-compiled on first use and cached on disk.

Public functions
----------------
``solutions_bitmask(patterns, labels, kappa=0.0)`` -- all solutions as sorted int64 codes.
``count_solutions(patterns, labels, kappa=0.0)``.
``prefix_counts(patterns, labels, kappa=0.0, reference=None)`` -- :class:`PrefixCounts`.
``codes_to_weights``, ``weights_to_codes``, ``hamming_distances``, ``pair_distance_histogram``.
``random_patterns(rng, P, N, dist)``.
``binary_storage_enumeration(N, n_instances, ...)`` -- quenched entropy, SAT probability
and capacity over many random instances (:class:`BinaryStorageSample`).
``binary_teacher_student_enumeration(N, n_instances, ...)`` -- Gibbs-learning overlap
``R`` and generalization error of the Ising teacher-student problem
(:class:`BinaryTeacherStudentSample`); ``binary_teacher_student_annealed(N, alpha)`` -- the
exact finite-N annealed (ratio-of-averages) values for comparison.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numba
import numpy as np

from ..errors import check_choice, check_int, check_range
from ._result import Simulation
from .finite_size import instance_rng, map_tasks

__all__ = [
    "MAX_N", "solutions_bitmask", "count_solutions", "prefix_counts", "PrefixCounts",
    "codes_to_weights", "weights_to_codes", "hamming_distances", "pair_distance_histogram",
    "random_patterns", "binary_storage_enumeration", "BinaryStorageSample",
    "binary_teacher_student_enumeration", "BinaryTeacherStudentSample", "binary_teacher_student_annealed",
]

#: largest N enumerated: a hard limit (2^40 steps would take hours); ~25 is practical
MAX_N = 40
_REFRESH = 1 << 16  # recompute the fields from scratch this often


# --------------------------------------------------------------------------- kernels
@numba.njit(cache=True)
def _push(out, n, code):
    """Store ``code`` at ``out[n]``, doubling the buffer when full; returns the buffer."""
    if n == out.size:
        new = np.empty(2 * out.size, dtype=np.int64)
        new[:n] = out[:n]
        out = new
    out[n] = code
    return out


@numba.njit(cache=True)
def _fields_from_code(At, code, h):
    N, P = At.shape
    for mu in range(P):
        h[mu] = 0.0
    for i in range(N):
        if (code >> i) & 1:
            for mu in range(P):
                h[mu] += At[i, mu]
        else:
            for mu in range(P):
                h[mu] -= At[i, mu]


@numba.njit(cache=True)
def _popcount(x):
    x = x - ((x >> 1) & 0x5555555555555555)
    x = (x & 0x3333333333333333) + ((x >> 2) & 0x3333333333333333)
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0F
    return (x * 0x0101010101010101) >> 56


@numba.njit(cache=True)
def _gray_step(k, code, At, h):
    """Advance from Gray code of k-1 to that of k; update fields; return the new code."""
    N, P = At.shape
    b = 0
    kk = k
    while (kk & 1) == 0:
        kk >>= 1
        b += 1
    code ^= (np.int64(1) << b)
    if (code >> b) & 1:
        for mu in range(P):
            h[mu] += 2.0 * At[b, mu]
    else:
        for mu in range(P):
            h[mu] -= 2.0 * At[b, mu]
    if (k & (_REFRESH - 1)) == 0:
        _fields_from_code(At, code, h)
    return code


@numba.njit(cache=True)
def _enum_codes(At, thr):
    """All codes whose P fields exceed thr (P >= 1)."""
    N, P = At.shape
    total = np.int64(1) << N
    h = np.empty(P)
    _fields_from_code(At, np.int64(0), h)
    out = np.empty(1024, dtype=np.int64)
    n = 0
    last = 0
    code = np.int64(0)
    for k in range(total):
        if k > 0:
            code = _gray_step(k, code, At, h)
        if h[last] <= thr:
            continue
        ok = True
        for mu in range(P):
            if h[mu] <= thr:
                ok = False
                last = mu
                break
        if ok:
            out = _push(out, n, code)
            n += 1
    return out[:n]


@numba.njit(cache=True)
def _enum_prefix(At, thr, ref, with_ref):
    """counts[k, d]: number of w whose first violated pattern is k (k = P: none violated)
    and whose Hamming distance to ref is d (d = 0 when not with_ref)."""
    N, P = At.shape
    total = np.int64(1) << N
    h = np.empty(max(P, 1))
    _fields_from_code(At, np.int64(0), h)
    counts = np.zeros((P + 1, N + 1), dtype=np.int64)
    code = np.int64(0)
    for k in range(total):
        if k > 0:
            code = _gray_step(k, code, At, h)
        first = P
        for mu in range(P):
            if h[mu] <= thr:
                first = mu
                break
        d = _popcount(code ^ ref) if with_ref else 0
        counts[first, d] += 1
    return counts


@numba.njit(cache=True)
def _enum_codes_pop(xcodes, N, thr):
    """+-1 patterns: field of pattern mu = N - 2 popcount(code ^ xcodes[mu]) (O(1), no updates)."""
    P = xcodes.shape[0]
    total = np.int64(1) << N
    out = np.empty(1024, dtype=np.int64)
    n = 0
    last = 0
    for code in range(total):
        if N - 2 * _popcount(code ^ xcodes[last]) <= thr:
            continue
        ok = True
        for mu in range(P):
            if N - 2 * _popcount(code ^ xcodes[mu]) <= thr:
                ok = False
                last = mu
                break
        if ok:
            out = _push(out, n, code)
            n += 1
    return out[:n]


@numba.njit(cache=True)
def _enum_prefix_pop(xcodes, N, thr, ref, with_ref):
    """As _enum_prefix for +-1 patterns, fields by popcount (early exit, O(1) per check)."""
    P = xcodes.shape[0]
    total = np.int64(1) << N
    counts = np.zeros((P + 1, N + 1), dtype=np.int64)
    for code in range(total):
        first = P
        for mu in range(P):
            if N - 2 * _popcount(code ^ xcodes[mu]) <= thr:
                first = mu
                break
        d = _popcount(code ^ ref) if with_ref else 0
        counts[first, d] += 1
    return counts


@numba.njit(cache=True)
def _pair_hist(codes, N):
    n = codes.shape[0]
    hist = np.zeros(N + 1, dtype=np.int64)
    for a in range(n):
        ca = codes[a]
        for b in range(a + 1, n):
            hist[_popcount(ca ^ codes[b])] += 1
    return hist


# --------------------------------------------------------------------------- helpers
def _prepare(patterns, labels, kappa):
    xi = np.asarray(patterns, dtype=float)
    if xi.ndim != 2:
        raise ValueError(f"patterns must be a 2-d array (P, N), got shape {xi.shape}")
    P, N = xi.shape
    if not 1 <= N <= MAX_N:
        raise ValueError(f"N (patterns.shape[1]) must be in [1, {MAX_N}], got {N}")
    if not np.all(np.isfinite(xi)):
        raise ValueError("patterns must be finite")
    sig = np.asarray(labels, dtype=float).reshape(-1)
    if sig.shape != (P,):
        raise ValueError(f"labels must have length P = {P}, got shape {np.shape(labels)}")
    if not np.all(np.abs(sig) == 1.0):
        raise ValueError("labels must be +1 or -1")
    kappa = float(check_range("kappa", kappa))
    At = np.ascontiguousarray((sig[:, None] * xi).T)
    return At, kappa * math.sqrt(N), N, P


def _pattern_codes(At):
    """Label-folded +-1 patterns as bit codes (None unless every entry is +-1)."""
    if not np.all(np.abs(At) == 1.0):
        return None
    N = At.shape[0]
    bits = (At > 0).astype(np.int64)                       # (N, P)
    return np.ascontiguousarray(np.sum(bits << np.arange(N, dtype=np.int64)[:, None], axis=0))


def codes_to_weights(codes, N):
    """Bit codes -> array of +-1 weights, shape ``codes.shape + (N,)`` (int8)."""
    N = check_int("N", N, lo=1)
    c = np.asarray(codes, dtype=np.int64)
    bits = (c[..., None] >> np.arange(N, dtype=np.int64)) & 1
    return (2 * bits - 1).astype(np.int8)


def weights_to_codes(w):
    """+-1 weights (last axis = the N weights) -> int64 bit codes (bit i set when w_i = +1)."""
    w = np.asarray(w)
    if w.shape[-1] > 62:
        raise ValueError(f"N must be <= 62 to fit a bit code, got {w.shape[-1]}")
    if not np.all(np.abs(w) == 1):
        raise ValueError("w must contain only +1 and -1")
    bits = (w > 0).astype(np.int64)
    return np.sum(bits << np.arange(w.shape[-1], dtype=np.int64), axis=-1)


def popcount(x):
    """Number of set bits of each non-negative int64 of ``x`` (``np.bitwise_count`` where numpy has
    it, numpy >= 2.0; the SWAR bit count otherwise: the same integers)."""
    x = np.asarray(x, dtype=np.int64)
    if hasattr(np, "bitwise_count"):
        return np.bitwise_count(x).astype(np.int64)
    v = x.astype(np.uint64)
    v = v - ((v >> np.uint64(1)) & np.uint64(0x5555555555555555))
    v = (v & np.uint64(0x3333333333333333)) + ((v >> np.uint64(2)) & np.uint64(0x3333333333333333))
    v = (v + (v >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return ((v * np.uint64(0x0101010101010101)) >> np.uint64(56)).astype(np.int64)


def hamming_distances(codes, reference):
    """Hamming distance of each code to ``reference`` (a code), by popcount."""
    c = np.asarray(codes, dtype=np.int64)
    return popcount(c ^ np.int64(reference))


def pair_distance_histogram(codes, N):
    """``hist[d]`` = number of unordered pairs of distinct codes at Hamming distance ``d``.

    O(n^2) in the number of codes (numba; ~1e9 pairs per few seconds).
    """
    N = check_int("N", N, lo=1)
    c = np.ascontiguousarray(np.asarray(codes, dtype=np.int64).reshape(-1))
    return _pair_hist(c, N)


def solutions_bitmask(patterns, labels, kappa=0.0):
    """All ``w in {+-1}^N`` with ``labels[mu] * w.patterns[mu] / sqrt(N) > kappa`` for all mu.

    Parameters
    ----------
    patterns : (P, N) array (+-1 or real-valued), N <= MAX_N (practical up to ~25).
    labels : (P,) array of +-1.
    kappa : margin (stability threshold), any real number.

    Returns
    -------
    Sorted int64 array of bit codes (bit i set <=> w_i = +1).  With P = 0 every one of
    the 2^N codes is returned.
    """
    At, thr, N, P = _prepare(patterns, labels, kappa)
    if P == 0:
        if N > 26:
            raise ValueError(f"with no patterns all 2^N codes are solutions; N must be <= 26 to list them, got {N}")
        return np.arange(np.int64(1) << N, dtype=np.int64)
    xc = _pattern_codes(At)
    if xc is not None:
        return np.sort(_enum_codes_pop(xc, N, thr))
    return np.sort(_enum_codes(At, thr))


def count_solutions(patterns, labels, kappa=0.0):
    """Number of solutions (see :func:`solutions_bitmask`), without storing them."""
    return int(prefix_counts(patterns, labels, kappa).n_solutions[-1])


@dataclass(frozen=True, repr=False)
class PrefixCounts(Simulation):
    """Solution counts of every prefix of a pattern sequence (one enumeration pass).

    ``n_solutions[p]`` = number of ``w`` storing patterns ``0 .. p-1`` (p = 0..P);
    ``capacity`` = largest ``p`` with ``n_solutions[p] > 0`` (the headline);
    ``overlap_counts[p, d]`` (only with a reference) = number of those solutions at Hamming
    distance ``d`` from the reference, so the overlap is ``1 - 2 d / N``.

    Protocol: exact counts, so ``error`` 0.0, ``residual`` 0.0, ``converged`` True;
    ``iterations`` = ``2^N``, the weight vectors enumerated; ``ansatz`` ``"-"``.
    """
    N: int
    P: int
    kappa: float
    n_solutions: np.ndarray
    capacity: int
    overlap_counts: np.ndarray | None = None

    headline = "capacity"
    converged = True
    residual = 0.0
    error = 0.0

    @property
    def iterations(self):
        """The ``2^N`` weight vectors enumerated."""
        return 1 << int(self.N)


def prefix_counts(patterns, labels, kappa=0.0, reference=None) -> PrefixCounts:
    """Enumerate once and count the solutions of every prefix of the patterns.

    ``reference`` (a bit code, e.g. the teacher's) adds the Hamming-distance distribution
    of the solutions of every prefix.
    """
    At, thr, N, P = _prepare(patterns, labels, kappa)
    with_ref = reference is not None
    ref = np.int64(0)
    if with_ref:
        ref = np.int64(check_int("reference", reference, lo=0))
        if ref >> N:
            raise ValueError(f"reference must be a code in [0, 2^N), got {reference}")
    xc = _pattern_codes(At) if P else None
    if xc is not None:
        counts = _enum_prefix_pop(xc, N, thr, ref, with_ref)
    else:
        counts = _enum_prefix(At, thr, ref, with_ref)
    cum = np.cumsum(counts[::-1], axis=0)[::-1]      # cum[p, d] = sum_{k >= p} counts[k, d]
    n_sol = cum.sum(axis=1)
    cap = int(np.nonzero(n_sol > 0)[0].max())
    return PrefixCounts(N, P, kappa, n_sol, cap, cum if with_ref else None)


def random_patterns(rng, P, N, dist="binary", dtype=float):
    """``(P, N)`` random patterns from ``rng``: ``"binary"`` (+-1) or ``"gaussian"`` (iid N(0, 1)),
    stored as ``dtype`` (the Gaussian draw is float64, then rounded)."""
    check_choice("dist", dist, ("binary", "gaussian"))
    if dist == "binary":
        return (2 * rng.integers(0, 2, size=(P, N)) - 1).astype(dtype)
    return rng.standard_normal((P, N)).astype(dtype, copy=False)


# --------------------------------------------------------------------------- storage sweep
def _storage_task(args):
    seed, N, i, P, kappa, dist = args
    rng = instance_rng(seed, N, i)
    xi = random_patterns(rng, P, N, dist)
    sigma = 2.0 * rng.integers(0, 2, size=P) - 1.0
    res = prefix_counts(xi, sigma, kappa)
    return res.n_solutions, res.capacity


@dataclass(frozen=True, repr=False)
class BinaryStorageSample(Simulation):
    """Enumeration results for random storage instances of one size ``N``.

    ``counts[i, p]`` is the number of solutions of instance ``i`` with its first ``p``
    patterns (``alpha = p / N``); ``capacity[i]`` the largest storable ``p`` (censored at
    ``P_max``: instances that store all ``P_max`` patterns have ``capacity = P_max``).

    Protocol: the headline is ``alpha_c``, the mean instance capacity ``<p_c>/N``
    (:meth:`mean_capacity`), with ``error`` its standard error over the instances; each
    instance is enumerated exactly: ``converged`` True, ``residual`` 0.0; ``iterations`` = the
    number of instances; ``ansatz`` ``"-"``.
    """
    N: int
    kappa: float
    dist: str
    seed: int
    counts: np.ndarray
    capacity: np.ndarray

    headline = "alpha_c"
    converged = True
    residual = 0.0

    @property
    def alpha_c(self):
        """The mean instance capacity ``<p_c>/N`` (a lower bound if :attr:`capacity_censored`)."""
        return self.mean_capacity()[0]

    @property
    def error(self):
        """The standard error of ``alpha_c`` over the instances."""
        return self.mean_capacity()[1]

    @property
    def iterations(self):
        """The number of instances."""
        return int(self.capacity.size)

    @property
    def alpha(self):
        return np.arange(self.counts.shape[1]) / self.N

    @property
    def sat_fraction(self):
        """Fraction of instances with at least one solution, for every alpha."""
        return np.mean(self.counts > 0, axis=0)

    def entropy(self):
        """Quenched log-count per weight ``<ln N_sol>/N`` and its standard error, per alpha.

        Averaged over the satisfiable instances only (``ln 0`` is excluded); where fewer
        than two instances are satisfiable the entry is +inf error / the available value.
        Returns ``(alpha, s, s_err, sat_fraction)``; ``s`` is -inf where no instance is SAT.
        """
        n_inst, n_p = self.counts.shape
        s = np.full(n_p, -np.inf)
        err = np.full(n_p, np.inf)
        for p in range(n_p):
            c = self.counts[:, p]
            c = c[c > 0]
            if c.size:
                v = np.log(c.astype(float)) / self.N
                s[p] = v.mean()
                if c.size > 1:
                    err[p] = v.std(ddof=1) / math.sqrt(c.size)
        return self.alpha, s, err, self.sat_fraction

    def annealed_entropy(self):
        """``ln <N_sol> / N`` per alpha (the annealed average)."""
        with np.errstate(divide="ignore"):
            return np.log(self.counts.mean(axis=0)) / self.N

    @property
    def capacity_censored(self):
        """True if some instance stored all P_max patterns (capacity is then a lower bound)."""
        return bool(np.any(self.capacity >= self.counts.shape[1] - 1))

    def alpha_50(self):
        """50 % point ``(alpha_50, err)`` of the SAT probability: interval-censored normal fit
        of the instance capacities (:func:`statmech.simulate.finite_size.censored_normal_fit`)."""
        from .finite_size import censored_normal_fit
        if self.capacity_censored:
            raise ValueError("capacity is censored (some instance stored all patterns): increase alpha_max")
        mu, err, _, _ = censored_normal_fit(self.capacity)
        return mu / self.N, err / self.N

    def mean_capacity(self):
        """``<p_c>/N`` and its standard error, where ``p_c`` is the instance capacity.

        Krauth & Opper (1989) define the finite-N capacity this way: the first pattern
        that cannot be added is ``p_c + 1``.
        """
        a = self.capacity / self.N
        return float(a.mean()), float(a.std(ddof=1) / math.sqrt(a.size))


def binary_storage_enumeration(N, n_instances, alpha_max=1.2, kappa=0.0, *, seed=0,
                               dist="binary", executor=None, progress=True) -> BinaryStorageSample:
    """Enumerate ``n_instances`` random storage instances of size ``N`` (``P_max = ceil(alpha_max N)``).

    Patterns are +-1 (``dist="binary"``) or Gaussian, labels random +-1; instance ``i`` is
    drawn from :func:`instance_rng` ``(seed, N, i)``, so results are reproducible and
    independent of the executor.  Use odd ``N`` for ``kappa = 0`` with binary patterns.
    """
    N = check_int("N", N, lo=1)
    if N > MAX_N:
        raise ValueError(f"N must be in [1, {MAX_N}], got {N}")
    n_instances = check_int("n_instances", n_instances, lo=2)
    alpha_max = float(check_range("alpha_max", alpha_max, 0, lo_open=True))
    kappa = float(check_range("kappa", kappa))
    seed = check_int("seed", seed, lo=0)
    check_choice("dist", dist, ("binary", "gaussian"))
    P = int(math.ceil(alpha_max * N))
    tasks = [(seed, N, i, P, kappa, dist) for i in range(n_instances)]
    out = map_tasks(_storage_task, tasks, executor, desc=f"enumerate N={N}", progress=progress)
    counts = np.array([o[0] for o in out], dtype=np.int64)
    cap = np.array([o[1] for o in out], dtype=np.int64)
    return BinaryStorageSample(N, kappa, dist, seed, counts, cap)


# --------------------------------------------------------------------------- teacher-student
def _ts_task(args):
    seed, N, i, P, dist = args
    rng = instance_rng(seed, N, i)
    teacher = 2 * rng.integers(0, 2, size=N) - 1
    xi = random_patterns(rng, P, N, dist)
    sigma = np.sign(xi @ teacher)
    if np.any(sigma == 0):
        raise ValueError("teacher field is exactly 0 for some pattern: use odd N with binary patterns")
    ref = int(weights_to_codes(teacher))
    res = prefix_counts(xi, sigma, 0.0, reference=ref)
    return res.overlap_counts


@dataclass(frozen=True, repr=False)
class BinaryTeacherStudentSample(Simulation):
    """Version-space overlap distributions of the Ising teacher-student problem.

    ``overlap_counts[i, p, d]``: number of students consistent with the first ``p``
    examples of instance ``i`` at Hamming distance ``d`` from the teacher (``R = 1 - 2d/N``).

    Protocol: the headline is ``eps_g``, the quenched Gibbs generalization error at every
    ``alpha`` (:meth:`gibbs`), with ``error`` its standard error over the instances; each
    instance is enumerated exactly: ``converged`` True, ``residual`` 0.0; ``iterations`` = the
    number of instances; ``ansatz`` ``"-"``.
    """
    N: int
    dist: str
    seed: int
    overlap_counts: np.ndarray

    headline = "eps_g"
    converged = True
    residual = 0.0

    @property
    def eps_g(self):
        """Quenched Gibbs generalization error per alpha (``gibbs()[3]``)."""
        return self.gibbs()[3]

    @property
    def error(self):
        """The standard error of ``eps_g`` over the instances (``gibbs()[4]``)."""
        return self.gibbs()[4]

    @property
    def iterations(self):
        """The number of instances."""
        return int(self.overlap_counts.shape[0])

    @property
    def alpha(self):
        return np.arange(self.overlap_counts.shape[1]) / self.N

    @property
    def R_values(self):
        return 1.0 - 2.0 * np.arange(self.N + 1) / self.N

    def gibbs(self):
        """Gibbs-learning averages per alpha: ``(alpha, R, R_err, eps_g, eps_g_err, p_perfect)``.

        For each instance the version-space (uniform Gibbs) averages ``<R>`` and
        ``<arccos(R)/pi>`` (the student's generalization error for spherically symmetric
        inputs) and the probability that the student is the teacher; then the mean and
        standard error over instances.
        """
        c = self.overlap_counts.astype(float)
        Z = c.sum(axis=2)                                     # (n_inst, P+1), >= 1 (teacher)
        Rv = self.R_values
        epsv = np.arccos(np.clip(Rv, -1.0, 1.0)) / math.pi
        R_i = (c @ Rv) / Z
        e_i = (c @ epsv) / Z
        pp_i = c[:, :, 0] / Z
        n = c.shape[0]
        se = lambda v: v.std(axis=0, ddof=1) / math.sqrt(n)
        return (self.alpha, R_i.mean(0), se(R_i), e_i.mean(0), se(e_i), pp_i.mean(0))

    def gibbs_annealed(self):
        """Ratio-of-averages (annealed) Gibbs averages per alpha: ``(alpha, R, eps_g)``.

        ``sum_i sum_d c_i[p, d] f(d) / sum_i sum_d c_i[p, d]``; compare with the exact
        finite-N value :func:`binary_teacher_student_annealed` (Gaussian examples).  At small
        N this differs strongly from the quenched :meth:`gibbs` near alpha ~ 1, where the
        version space holds only ~ e^{N s} ~ 10-100 vectors and instances with a small
        version space are dominated by the teacher and its neighbours.
        """
        c = self.overlap_counts.astype(float).sum(axis=0)      # (P+1, N+1)
        Rv = self.R_values
        epsv = np.arccos(np.clip(Rv, -1.0, 1.0)) / math.pi
        Z = c.sum(axis=1)
        return self.alpha, (c @ Rv) / Z, (c @ epsv) / Z

    def entropy(self):
        """Quenched ``<ln |version space|>/N`` and standard error per alpha."""
        v = np.log(self.overlap_counts.sum(axis=2).astype(float)) / self.N
        return self.alpha, v.mean(0), v.std(0, ddof=1) / math.sqrt(v.shape[0])


def binary_teacher_student_annealed(N, alpha):
    """Exact finite-N annealed Gibbs averages of the Ising teacher-student problem.

    With Gaussian examples a student at Hamming distance ``d`` from the teacher (overlap
    ``R_d = 1 - 2d/N``) agrees with it on one example with probability ``1 - arccos(R_d)/pi``,
    so ``E[#students at d after P examples] = binom(N, d) (1 - arccos(R_d)/pi)^P`` (exact).
    Returns ``(R, eps_g)`` = the ratio-of-averages ``sum_d E[n_d] f(d) / sum_d E[n_d]`` at
    ``P = round(alpha N)`` (arrays for array ``alpha``).
    """
    from scipy.special import gammaln
    N = check_int("N", N, lo=1)
    a = np.asarray(check_range("alpha", alpha, 0.0), dtype=float)
    P = np.rint(a * N)[..., None]
    d = np.arange(N + 1)
    Rd = 1.0 - 2.0 * d / N
    th = np.arccos(np.clip(Rd, -1, 1)) / math.pi
    safe = th < 1.0                                    # d = N (the anti-teacher) never agrees
    log_agree = np.log1p(-np.where(safe, th, 0.0))
    energy = np.where(safe, P * log_agree, np.where(P == 0, 0.0, -np.inf))
    logw = gammaln(N + 1) - gammaln(d + 1) - gammaln(N - d + 1) + energy
    w = np.exp(logw - logw.max(axis=-1, keepdims=True))
    Z = w.sum(axis=-1)
    R = (w @ Rd) / Z
    e = (w @ th) / Z
    return (R, e) if a.ndim else (float(R), float(e))


def binary_teacher_student_enumeration(N, n_instances, alpha_max=2.0, *, seed=0, dist="binary",
                                       executor=None, progress=True) -> BinaryTeacherStudentSample:
    """Enumerate the version space of ``n_instances`` Ising teacher-student instances.

    Teacher ``w* in {+-1}^N`` uniform, examples ``xi`` (+-1 or Gaussian), labels
    ``sign(w* . xi)`` (odd ``N`` required for binary examples), ``P_max = ceil(alpha_max N)``.
    """
    N = check_int("N", N, lo=1)
    if N > MAX_N:
        raise ValueError(f"N must be in [1, {MAX_N}], got {N}")
    check_choice("dist", dist, ("binary", "gaussian"))
    if dist == "binary" and N % 2 == 0:
        raise ValueError(f"N must be odd for binary examples (no zero teacher field), got {N}")
    n_instances = check_int("n_instances", n_instances, lo=2)
    alpha_max = float(check_range("alpha_max", alpha_max, 0, lo_open=True))
    seed = check_int("seed", seed, lo=0)
    P = int(math.ceil(alpha_max * N))
    tasks = [(seed, N, i, P, dist) for i in range(n_instances)]
    out = map_tasks(_ts_task, tasks, executor, desc=f"teacher-student N={N}", progress=progress)
    return BinaryTeacherStudentSample(N, dist, seed, np.array(out, dtype=np.int64))
