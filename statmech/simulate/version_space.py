r"""Spherical teacher-student perceptron: uniform sampling of the version space by hit-and-run.

Gibbs learning (Tartaglione 2019, PhD thesis, Politecnico di Torino, Sec. 2.2.1;
Engel & Van den Broeck 2001, ch. 2; zero-temperature Gibbs student): the student is drawn
uniformly from the version space ``V = {w : |w|^2 = N, sigma_mu w . xi_mu > 0 for all mu}``
where ``sigma_mu = sign(w_T . xi_mu)`` are the teacher's labels.  The theory
(:func:`statmech.perceptron.spherical_teacher_student`) predicts the typical teacher-student
overlap ``R(alpha)`` and ``eps_g = arccos(R)/pi``.

Sampling.  ``V`` is a polyhedral cone intersected with the sphere.  A point ``x`` uniform in
the convex body ``K = cone ∩ {|x| <= 1}`` has a direction ``x/|x|`` uniform on
``cone ∩ sphere`` (the cone is scale invariant), so we run **coordinate hit-and-run** in
``K``: pick a coordinate ``i`` at random, compute the chord ``{x + t e_i} ∩ K`` exactly
(ball: a quadratic; each constraint ``a_mu . x + t a_mu,i > 0``: a half-line), and move to a
uniform point of the chord.  The stabilities ``a_mu . x`` and ``|x|^2`` are updated in
O(P) per move and recomputed every sweep (N moves).  Hit-and-run leaves the uniform
distribution on ``K`` invariant and is ergodic on convex bodies.

Mixing diagnostics.  Each instance runs ``n_chains`` chains from over-dispersed starts:
chain 0 at the teacher (``R = 1``), the others at extreme points of the version space
(LP vertices maximizing a random linear objective, ``R`` well below the typical value).
After discarding the first half as burn-in we report the Gelman-Rubin potential scale
reduction ``R_hat`` of the overlap trace, its integrated autocorrelation time (Sokal's
window) and effective sample size, and the overlap ``q`` between different chains, which
must equal ``R`` in equilibrium (Nishimori: for Gibbs learning the student-student overlap
equals the teacher-student overlap).

Error bars: the quenched average over instances ``R = mean_i <R>_i`` with standard error
``std_i/sqrt(n_instances)`` (which includes both disorder and thermal noise).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numba
import numpy as np

from ..errors import ConvergenceError, check_int, check_range
from ._result import Simulation
from .finite_size import instance_rng, map_tasks

__all__ = ["hit_and_run", "ChainDiagnostics", "sample_version_space", "VersionSpaceInstance",
           "spherical_teacher_student_sampling", "TeacherStudentSample", "autocorr_time", "gelman_rubin"]


# --------------------------------------------------------------------------- kernel
@numba.njit(cache=True)
def _recompute(At, x, s):
    N, P = At.shape
    for mu in range(P):
        s[mu] = 0.0
    nx2 = 0.0
    for i in range(N):
        xi = x[i]
        nx2 += xi * xi
        for mu in range(P):
            s[mu] += xi * At[i, mu]
    return nx2


@numba.njit(cache=True, fastmath=True)
def _chord(Ninv_i, s, tlo, thi):
    """Intersect [tlo, thi] with {t : s_mu + t a_mu > 0}, given Ninv_i = -1/a (inf-free)."""
    P = s.shape[0]
    for mu in range(P):
        c = s[mu] * Ninv_i[mu]          # = -s/a: a lower bound when < 0, an upper bound when > 0
        lowc = c if c < 0.0 else -1e300
        upc = c if c > 0.0 else 1e300
        tlo = max(tlo, lowc)
        thi = min(thi, upc)
    return tlo, thi


@numba.njit(cache=True)
def _hit_and_run(At, Ninv, x, n_sweeps, thin, seed, refs):
    """Coordinate hit-and-run in {A x > 0, |x| <= 1}.  x is updated in place.

    ``Ninv = -1/At`` (entries with At == 0 set to 0: no constraint).  Records every
    ``thin`` sweeps the normalized overlaps of x with each row of refs (n_ref, N);
    returns (trace (n_rec, n_ref), final |x|^2, min stability seen).
    """
    np.random.seed(seed)
    N, P = At.shape
    s = np.empty(P)
    nx2 = _recompute(At, x, s)
    n_rec = n_sweeps // thin
    n_ref = refs.shape[0]
    trace = np.empty((n_rec, n_ref))
    rec = 0
    min_stab = np.inf
    for sweep in range(n_sweeps):
        for _ in range(N):
            i = np.random.randint(0, N)
            xi = x[i]
            disc = xi * xi - nx2 + 1.0
            if disc < 0.0:
                disc = 0.0
            r = math.sqrt(disc)
            tlo, thi = _chord(Ninv[i], s, -xi - r, -xi + r)
            if thi <= tlo:
                continue
            t = tlo + (thi - tlo) * np.random.random()
            x[i] = xi + t
            nx2 += t * (2.0 * xi + t)
            Ai = At[i]
            for mu in range(P):
                s[mu] += t * Ai[mu]
        nx2 = _recompute(At, x, s)
        for mu in range(P):
            if s[mu] < min_stab:
                min_stab = s[mu]
        if (sweep + 1) % thin == 0 and rec < n_rec:
            nx = math.sqrt(nx2)
            for k in range(n_ref):
                acc = 0.0
                for i in range(N):
                    acc += x[i] * refs[k, i]
                trace[rec, k] = acc / nx
            rec += 1
    return trace, nx2, min_stab


# --------------------------------------------------------------------------- diagnostics
def autocorr_time(x, c=5.0):
    """Integrated autocorrelation time of a 1-d series (Sokal's adaptive window ``M >= c tau``).

    Returns ``tau >= 0.5`` in units of the series' spacing (``tau = 0.5`` for white noise
    by the convention ``tau = 1/2 + sum_{t>=1} rho(t)``).
    """
    x = np.asarray(x, dtype=float)
    n = x.size
    if n < 4:
        raise ValueError(f"x must have at least 4 samples, got {n}")
    y = x - x.mean()
    var = float(np.dot(y, y)) / n
    if var == 0.0:
        return 0.5
    f = np.fft.rfft(y, n=2 * n)
    acf = np.fft.irfft(f * np.conj(f))[:n] / (n * var)
    tau = 0.5
    for m in range(1, n):
        tau += acf[m]
        if m >= c * tau:
            break
    return float(max(tau, 0.5))


def gelman_rubin(chains):
    """Potential scale reduction ``R_hat`` of ``chains`` (n_chains, n_samples)."""
    ch = np.asarray(chains, dtype=float)
    m, n = ch.shape
    if m < 2 or n < 2:
        raise ValueError("chains must have shape (n_chains >= 2, n_samples >= 2)")
    means = ch.mean(axis=1)
    W = ch.var(axis=1, ddof=1).mean()
    B = n * means.var(ddof=1)
    if W == 0.0:
        return 1.0 if B == 0.0 else math.inf
    var_plus = (n - 1) / n * W + B / n
    return float(math.sqrt(var_plus / W))


# --------------------------------------------------------------------------- one instance
def hit_and_run(A, x0, n_sweeps, *, thin=1, seed=0, refs=None):
    """Run coordinate hit-and-run in ``{x : A x > 0, |x| <= 1}`` from ``x0`` (strictly inside).

    Returns ``(trace, x)``: ``trace[k, j]`` = overlap of ``x/|x|`` with ``refs[j]`` (unit
    vectors) after ``(k+1)*thin`` sweeps; ``x`` the final point.  One sweep = N moves.
    """
    A = np.asarray(A, dtype=float)
    P, N = A.shape
    x = np.array(x0, dtype=float)
    if x.shape != (N,):
        raise ValueError(f"x0 must have shape ({N},), got {x.shape}")
    if not (np.dot(x, x) < 1.0 and (P == 0 or np.min(A @ x) > 0)):
        raise ValueError("x0 must lie strictly inside {A x > 0, |x| < 1}")
    n_sweeps = check_int("n_sweeps", n_sweeps, lo=1)
    thin = check_int("thin", thin, lo=1)
    refs = np.zeros((0, N)) if refs is None else np.atleast_2d(np.asarray(refs, dtype=float))
    At = np.ascontiguousarray(A.T)
    with np.errstate(divide="ignore"):
        Ninv = np.where(At != 0.0, -1.0 / np.where(At != 0.0, At, 1.0), 0.0)
    trace, nx2, min_stab = _hit_and_run(At, Ninv, x, n_sweeps, thin, int(seed) % (2 ** 32), np.ascontiguousarray(refs))
    if not (min_stab > 0 and nx2 <= 1.0 + 1e-9):
        raise ConvergenceError("hit-and-run left the version space (round-off)",
                               diagnostics={"min_stability": float(min_stab), "norm2": float(nx2)})
    return trace, x


def _extreme_start(A, rng, teacher_unit):
    """A strictly interior point near an LP vertex maximizing a random objective."""
    from scipy.optimize import linprog
    P, N = A.shape
    c = rng.standard_normal(N)
    if P == 0:                       # no constraint: a random point of the ball
        return 0.5 * c / np.linalg.norm(c)
    scale = np.linalg.norm(A, axis=1, keepdims=True)
    res = linprog(c, A_ub=-A / scale, b_ub=np.zeros(P), bounds=[(-1.0, 1.0)] * N, method="highs")
    v = res.x if res.status == 0 else -c
    v = v / max(np.linalg.norm(v), 1e-300)
    for mix in (1e-3, 1e-2, 1e-1, 0.5):
        x = (1 - mix) * v + mix * teacher_unit
        x = 0.5 * x / np.linalg.norm(x)
        if np.min(A @ x) > 0:
            return x
    return 0.5 * teacher_unit


@dataclass(frozen=True)
class ChainDiagnostics:
    """Mixing report of one instance: Gelman-Rubin ``R_hat`` of the overlap traces,
    integrated autocorrelation time ``tau`` (in sweeps, worst chain), effective sample size
    ``ess`` (all chains), ``mixed = R_hat < 1.2 and ess >= 20``, and the sweeps per chain run."""
    R_hat: float
    tau: float
    ess: float
    mixed: bool
    sweeps: int = 0


@dataclass(frozen=True, repr=False)
class VersionSpaceInstance(Simulation):
    """One instance: Gibbs averages ``R`` (teacher-student) and ``q`` (between chains),
    their thermal standard errors, and the mixing diagnostics.

    Protocol: the headline is ``R`` with ``error`` = ``R_err``; ``converged`` = the chains
    passed the mixing test (``diagnostics.mixed``: a per-run outcome, not an exception);
    ``iterations`` = the sweeps per chain; ``residual`` 0.0; ``ansatz`` ``"-"``.
    """
    N: int
    P: int
    R: float
    R_err: float
    q: float
    q_err: float
    diagnostics: ChainDiagnostics

    headline = "R"
    residual = 0.0

    @property
    def converged(self):
        """The chains mixed (``diagnostics.mixed``)."""
        return bool(self.diagnostics.mixed)

    @property
    def error(self):
        """The standard error of ``R``."""
        return self.R_err

    @property
    def iterations(self):
        """Sweeps per chain."""
        return int(self.diagnostics.sweeps)


def _prep(A):
    At = np.ascontiguousarray(A.T)
    Ninv = np.where(At != 0.0, -1.0 / np.where(At != 0.0, At, 1.0), 0.0)
    return At, Ninv


def _segment(At, Ninv, x, n_sweeps, seed, refs):
    tr, nx2, min_stab = _hit_and_run(At, Ninv, x, n_sweeps, 1, seed % (2 ** 32), refs)
    if not (min_stab > 0 and nx2 <= 1.0 + 1e-9):
        raise ConvergenceError("hit-and-run left the version space (round-off)",
                               diagnostics={"min_stability": float(min_stab), "norm2": float(nx2)})
    return tr[:, 0]


def sample_version_space(patterns, labels, teacher, *, n_sweeps=1000, max_sweeps=None, n_chains=2, seed=0):
    """Gibbs-sample the version space of one instance and measure ``R`` and ``q``.

    ``teacher`` must classify ``patterns`` with ``labels``.  Chain 0 starts at the teacher,
    the others at LP extreme points (over-dispersed).  Each chain runs ``n_sweeps`` sweeps;
    while the mixing test fails (``R_hat >= 1.2`` or ``ESS < 20``) the run is doubled, up to
    ``max_sweeps`` (default ``4 n_sweeps``).  The first half of the run is burn-in.  ``R``
    is the mean teacher overlap of the second half; ``q`` the mean overlap between
    simultaneous snapshots (every ``n_sweeps/40`` sweeps) of different chains.
    """
    xi = np.asarray(patterns, dtype=float)
    sig = np.asarray(labels, dtype=float)
    wT = np.asarray(teacher, dtype=float)
    P, N = xi.shape
    n_chains = check_int("n_chains", n_chains, lo=2)
    n_sweeps = check_int("n_sweeps", n_sweeps, lo=40)
    max_sweeps = 4 * n_sweeps if max_sweeps is None else check_int("max_sweeps", max_sweeps, lo=n_sweeps)
    A = sig[:, None] * xi
    tu = wT / np.linalg.norm(wT)
    if P and not np.all(A @ tu > 0):
        raise ValueError("teacher must classify every pattern with its label (strictly)")
    rng = np.random.default_rng(np.random.SeedSequence(seed))
    xs = [0.5 * tu] + [_extreme_start(A, rng, tu) for _ in range(n_chains - 1)]
    At, Ninv = _prep(A)
    refs = np.ascontiguousarray(tu[None, :])
    seg = max(1, n_sweeps // 40)
    traces = [[] for _ in range(n_chains)]
    snaps = [[] for _ in range(n_chains)]
    done = 0
    target = n_sweeps
    while True:
        while done < target:
            for c in range(n_chains):
                traces[c].append(_segment(At, Ninv, xs[c], seg, int(rng.integers(2 ** 31)), refs))
                snaps[c].append(xs[c] / np.linalg.norm(xs[c]))
            done += seg
        Rtr = np.array([np.concatenate(t) for t in traces])
        half = Rtr.shape[1] // 2
        Rtr = Rtr[:, half:]
        R_hat = gelman_rubin(Rtr)
        tau = max(autocorr_time(t) for t in Rtr)
        ess = Rtr.size / (2.0 * tau)
        mixed = bool(R_hat < 1.2 and ess >= 20)
        if mixed or target >= max_sweeps:
            break
        target = min(2 * target, max_sweeps)
    R = float(Rtr.mean())
    R_err = float(Rtr.std(ddof=1) / math.sqrt(ess))
    ns = len(snaps[0])
    S = np.array(snaps)[:, ns // 2:, :]                  # (chains, snapshots, N)
    qv = np.array([np.einsum("ki,ki->k", S[c], S[d]) for c in range(n_chains) for d in range(c + 1, n_chains)]).ravel()
    n_eff = max(qv.size * min(1.0, seg / (2.0 * tau)), 1.0)
    q = float(qv.mean())
    q_err = float(qv.std(ddof=1) / math.sqrt(n_eff)) if qv.size > 1 else math.inf
    diag = ChainDiagnostics(float(R_hat), float(tau), float(ess), mixed, int(done))
    return VersionSpaceInstance(N, P, R, R_err, q, q_err, diag)


# --------------------------------------------------------------------------- sweeps
def _ts_task(args):
    seed, N, i, P, n_sweeps, max_sweeps, n_chains = args
    rng = instance_rng(seed, N, P, i)
    wT = rng.standard_normal(N)
    xi = rng.standard_normal((P, N))
    sig = np.sign(xi @ wT)
    return sample_version_space(xi, sig, wT, n_sweeps=n_sweeps, max_sweeps=max_sweeps, n_chains=n_chains,
                                seed=int(rng.integers(2 ** 31)))


@dataclass(frozen=True, repr=False)
class TeacherStudentSample(Simulation):
    """Quenched Gibbs-learning results at each ``alpha``: ``R``, ``R_err``, ``q``, ``q_err``,
    ``eps_g`` (= mean over instances of arccos(R_i)/pi) with ``eps_g_err``, the fraction of
    instances whose chains mixed, and the per-instance results.

    Protocol: the headline is ``eps_g`` with ``error`` = ``eps_g_err`` (one per alpha);
    ``converged`` = every instance mixed (``mixed_fraction`` all 1: a per-run outcome unless
    ``require_mixing=True`` turned it into an exception); ``iterations`` = the sweeps per chain,
    summed over the instances; ``residual`` 0.0; ``ansatz`` ``"-"``.
    """
    N: int
    alpha: np.ndarray
    R: np.ndarray
    R_err: np.ndarray
    q: np.ndarray
    q_err: np.ndarray
    eps_g: np.ndarray
    eps_g_err: np.ndarray
    mixed_fraction: np.ndarray
    instances: tuple

    headline = "eps_g"
    residual = 0.0

    @property
    def converged(self):
        """Every instance passed the mixing test."""
        return bool(np.all(np.asarray(self.mixed_fraction) >= 1.0))

    @property
    def error(self):
        """The standard error of ``eps_g`` (per alpha)."""
        return self.eps_g_err

    @property
    def iterations(self):
        """The sweeps per chain, summed over the instances."""
        return int(sum(r.diagnostics.sweeps for group in self.instances for r in group))


def spherical_teacher_student_sampling(N, alpha, n_instances=8, *, n_sweeps=1000, max_sweeps=None, n_chains=2,
                                       seed=0, executor=None, progress=True, require_mixing=False):
    """Gibbs learning of the spherical teacher-student perceptron by version-space sampling.

    For each ``alpha`` (``P = round(alpha N)``) ``n_instances`` instances (Gaussian teacher
    and examples, reproducible from ``seed``), each sampled by :func:`sample_version_space`.
    ``n_sweeps``/``max_sweeps``: see :func:`sample_version_space` (adaptive doubling).
    ``require_mixing=True`` raises ConvergenceError if any instance fails the mixing test.
    """
    N = check_int("N", N, lo=2)
    alpha = np.atleast_1d(check_range("alpha", alpha, 0.0)).astype(float)
    n_instances = check_int("n_instances", n_instances, lo=2)
    seed = check_int("seed", seed, lo=0)
    Ps = [int(round(a * N)) for a in alpha]
    n_sweeps = check_int("n_sweeps", n_sweeps, lo=40)
    tasks = [(seed, N, i, P, n_sweeps, max_sweeps, n_chains) for P in Ps for i in range(n_instances)]
    res = map_tasks(_ts_task, tasks, executor, desc=f"hit-and-run N={N}", progress=progress)
    res = [res[k * n_instances:(k + 1) * n_instances] for k in range(len(Ps))]
    out = {k: [] for k in ("R", "R_err", "q", "q_err", "eps", "eps_err", "mixed")}
    for group in res:
        R = np.array([r.R for r in group])
        q = np.array([r.q for r in group])
        e = np.arccos(np.clip(R, -1, 1)) / math.pi
        n = len(group)
        out["R"].append(R.mean())
        out["R_err"].append(math.sqrt(R.var(ddof=1) / n + np.mean([r.R_err ** 2 for r in group]) / n))
        out["q"].append(q.mean())
        out["q_err"].append(math.sqrt(q.var(ddof=1) / n + np.mean([r.q_err ** 2 for r in group]) / n))
        out["eps"].append(e.mean())
        out["eps_err"].append(e.std(ddof=1) / math.sqrt(n))
        out["mixed"].append(np.mean([r.diagnostics.mixed for r in group]))
    mixed = np.array(out["mixed"])
    if require_mixing and np.any(mixed < 1):
        bad = [float(a) for a, m in zip(alpha, mixed) if m < 1]
        raise ConvergenceError("hit-and-run chains did not mix (increase n_sweeps)",
                               diagnostics={"alpha": str(bad), "n_sweeps": n_sweeps})
    return TeacherStudentSample(N, alpha, np.array(out["R"]), np.array(out["R_err"]), np.array(out["q"]),
                                np.array(out["q_err"]), np.array(out["eps"]), np.array(out["eps_err"]),
                                mixed, tuple(tuple(g) for g in res))
