r"""Solving Parisi functionals: k-step with free breakpoints, and the full-RSB continuum.

A *problem* (:class:`Problem`) is a functional ``V(q, m)`` of the breakpoints
``q_0 <= ... <= q_k`` and Parisi parameters ``m_1 .. m_k`` with its exact gradient,
built from the core pieces of :mod:`statmech.rsb.kstep` (a channel and an entropic
term).  Every problem of the package is a *minimization* (docs/rsb.md section 3).

* :func:`solve_kstep` -- k-step RSB with free breakpoints: minimizes over all ``q``
  (ordered by a stick-breaking map ``q_i = q_{i-1} + (top - q_{i-1}) expit(u_i)``) and
  ``m`` (``log m`` for frozen channels; ``logit m``, i.e. ``0 < m < 1``, below a non-frozen
  terminal, where the functional is unbounded below for m > 1: :class:`_MMap`).
* :func:`solve_frsb` -- full RSB: ``x(q)`` piecewise constant on a fixed graded grid
  ``q_i = q_lo + (q_hi - q_lo) t_i``, ``t_i = 1 - (1 - i/K)^2`` (dense where x(q) varies
  fastest, near the top), minimized over ``log x_i`` (``logit x_i`` for a non-frozen
  channel) and the free ends for
  ``K = K_1, 2 K_1, 4 K_1 ...``, each warm-started from the previous one; the value is
  extrapolated to ``K -> inf`` from the last three (Richardson with the fitted order,
  see :class:`ParisiSolution`).  Every Gaussian step is exact on its interval (the
  Parisi PDE ``d_q f = -(f'' + x f'^2)/2`` is solved exactly for piecewise-constant x),
  so the only discretization errors are the piecewise-constant x (order ``K^-p``, p
  measured: 3 for SK, 2 for the perceptron at jamming) and the field lattice (spectral,
  checked by re-evaluating on a lattice twice as fine).
"""
from __future__ import annotations

from abc import ABC, abstractmethod

import math
from dataclasses import dataclass, field, replace

import numpy as np

from ..errors import ConvergenceError
from ..result import Result
from . import kstep

__all__ = ["Problem", "KStepSolution", "ParisiSolution", "solve_kstep", "solve_frsb", "graded_grid",
           "richardson"]


class Problem(ABC):
    """A Parisi functional to minimize (abstract: a problem defines :meth:`evaluate`).

    Subclasses set ``channel`` (a :class:`~statmech.rsb.kstep.Channel`), ``q0_fixed``
    (``None`` when ``q_0`` is free) and implement :meth:`evaluate`.
    ``top_fixed``: ``q_k`` is 1 for frozen channels, free otherwise.
    ``x_growth`` (frozen channels): the minimizing x of the graded grid grows at fixed q
    like ``eps_K^-x_growth``, ``eps_K = 1 - q_{K-1}`` the width of the top cell (the
    jamming scaling, docs/rsb.md section 6); used only to warm-start a finer K.
    """
    channel: kstep.Channel
    q0_fixed = None
    x_growth = 0.0
    name = "problem"

    @abstractmethod
    def evaluate(self, q, m, lattice, grad=True):
        """Return ``(V, dV/dq, dV/dm)``."""

    def lattice(self, q, m, res=1.0):
        return kstep.make_lattice(q, m, self.channel, res=res)


def _expit(u):
    return 1.0 / (1.0 + np.exp(-u))


def _logit(p):
    return np.log(p) - np.log1p(-p)


class _MMap:
    """Unconstrained parameters of the Parisi parameters m (x on a grid).

    Below a non-frozen terminal channel (q_k < 1, x = 1 on (q_k, 1]) the physical domain is
    0 < m <= 1: ``m = expit(u)``.  There the functional is unbounded below for m > 1 (as
    m -> inf every level's (1/m) log E e^{m f} stays bounded while the entropic term keeps
    ``log(1 - q_k)/2 -> -inf``), so an unbounded map lets the minimizer run off
    (docs/rsb.md section 5).  For a frozen channel m = y is the scaled parameter
    ``x/eps`` (or ``x/T``), unbounded: ``m = exp(u)``.
    """
    bounded = False

    def m_of(self, v):
        return _expit(v) if self.bounded else np.exp(v)

    def u_of(self, m):
        m = np.asarray(m, dtype=float)
        return _logit(m) if self.bounded else np.log(m)

    def dm_du(self, m):
        return m * (1.0 - m) if self.bounded else m


# --------------------------------------------------------------------------- k-step (free q)
class _FreeMap(_MMap):
    """Unconstrained u -> ordered q (stick breaking), u -> m (:class:`_MMap`)."""

    def __init__(self, prob, k):
        self.prob, self.k = prob, k
        self.frozen = prob.channel.frozen
        self.bounded = not self.frozen
        self.q0_free = prob.q0_fixed is None
        # free q indices: q_0 (if free), q_1..q_{k-1}, q_k (if not frozen)
        self.iq = ([0] if self.q0_free else []) + list(range(1, k)) + ([] if self.frozen else [k])

    def qm(self, u):
        k = self.k
        nq = len(self.iq)
        q = np.empty(k + 1)
        dq = np.zeros((k + 1, nq))  # dq_i / du_j
        prev, dprev = (0.0, np.zeros(nq)) if self.q0_free else (self.prob.q0_fixed, np.zeros(nq))
        j = 0
        for i in range(k + 1):
            if j < nq and self.iq[j] == i:
                s = _expit(u[j])
                q[i] = prev + (1.0 - prev) * s
                dq[i] = dprev * (1.0 - s)
                dq[i, j] += (1.0 - prev) * s * (1.0 - s)
                j += 1
            elif i == k and self.frozen:
                q[i], dq[i] = 1.0, 0.0
            else:
                q[i], dq[i] = prev, dprev
            prev, dprev = q[i], dq[i]
        return q, self.m_of(u[nq:]), dq

    def u0(self, q, m):
        u = []
        prev = 0.0 if self.q0_free else self.prob.q0_fixed
        for i in self.iq:
            u.append(float(_logit((q[i] - prev) / (1.0 - prev))))
            prev = q[i]
        return np.array(u + list(self.u_of(m)))


@dataclass(frozen=True, repr=False)
class KStepSolution(Result):
    """Minimum of a problem over k-step parameters (the :class:`statmech.Result` protocol).

    ``value`` (the headline) at breakpoints ``q`` and Parisi parameters ``m``; ``residual``
    ``max|grad|``; ``hessian_eigenvalues`` of the minimized functional (``stability``: all > 0 at a
    minimum, positive = stable); ``lattice_error`` (the value's change on a twice finer lattice,
    also ``error``); ``ansatz`` ``"{k}rsb"``; ``rs_stable`` the ansatz's own stability (a minimum).
    """
    headline = "value"
    k: int
    q: np.ndarray
    m: np.ndarray
    value: float
    residual: float
    iterations: int
    hessian_eigenvalues: np.ndarray
    lattice_error: float

    @property
    def converged(self):
        return True

    @property
    def ansatz(self):
        return f"{self.k}rsb"

    @property
    def error(self):
        return self.lattice_error

    @property
    def stability(self):
        return self.hessian_eigenvalues

    @property
    def rs_stable(self):
        return None if self.hessian_eigenvalues is None else bool(np.all(np.asarray(self.hessian_eigenvalues) > 0))


def _resolves(lat, need):
    """True if lattice ``lat`` is at most twice as coarse as ``need`` on every level."""
    return bool(np.all(lat.delta * lat.strides <= 2.0 * need.delta * need.strides))


def _wrap(prob, fmap, lat):
    def fun(u):
        q, m, _ = fmap.qm(u)
        if not _resolves(lat, prob.lattice(q, m)):
            return math.inf  # the fixed lattice does not resolve this point: reject the step
        return prob.evaluate(q, m, lat, grad=False)[0]

    def grad(u):
        q, m, J = fmap.qm(u)
        _, gq, gm = prob.evaluate(q, m, lat)
        return np.concatenate([J.T @ gq, gm * fmap.dm_du(m)])
    return fun, grad


def _same(a, b):
    return a.same(b)


def _minimize_relattice(prob, fmap, u, lat, tol, what, rounds=8, report_hessian=True):
    """Minimize on a fixed lattice; re-make the lattice at the result (or at the last iterate
    of a failed round, whose steps the resolution guard may have blocked) and repeat until
    the lattice no longer changes.  Returns ``(info, u, lattice)``; ``info.iterations`` counts the
    Newton iterations of every round (the last round usually starts at the minimum)."""
    last = None
    H0 = None
    its = evals = 0
    for _ in range(rounds):
        fun, grad = _wrap(prob, fmap, lat)
        try:
            info = kstep.minimize(fun, grad, u, tol=tol, H0=H0, what=what, report_hessian=report_hessian)
        except ConvergenceError as exc:
            last = exc
            its += exc.iterations or 0
            if exc.x is None:
                raise
            qq, mm, _ = fmap.qm(exc.x)
            new = prob.lattice(qq, mm)
            if _same(new, lat):
                raise
            u, lat = exc.x, new
            continue
        u, H0 = info.x, info.hessian
        its, evals = its + info.iterations, evals + info.evaluations
        qq, mm, _ = fmap.qm(u)
        new = prob.lattice(qq, mm)
        if _same(new, lat):
            return replace(info, iterations=its, evaluations=evals), u, lat
        lat = new
    raise last if last is not None else ConvergenceError(f"{what}: the lattice did not settle", x=u)


def solve_kstep(prob, q, m, *, tol=1e-10):
    """Minimize ``prob`` over k-step parameters from the guess ``(q, m)`` (k = len(m)).

    The lattice is fixed at the guess, then re-made at the solution and the solve
    repeated until it no longer changes; ``lattice_error`` is the change of the value on
    a lattice twice as fine.
    """
    q = np.asarray(q, dtype=float)
    m = np.asarray(m, dtype=float)
    k = m.size
    fmap = _FreeMap(prob, k)
    u = fmap.u0(q, m)
    lat = prob.lattice(q, m)
    info, u, lat = _minimize_relattice(prob, fmap, u, lat, tol, f"{prob.name} {k}RSB")
    qs, ms, _ = fmap.qm(u)
    fine = prob.evaluate(qs, ms, prob.lattice(qs, ms, res=2.0), grad=False)[0]
    return KStepSolution(k, qs, ms, float(info.value), info.residual, info.iterations,
                         info.hessian_eigenvalues, float(abs(fine - info.value)))


# --------------------------------------------------------------------------- full RSB (grid)
def graded_grid(K, power=2.0):
    """Relative breakpoints ``t_i = 1 - (1 - i/K)^power``, i = 0..K."""
    return 1.0 - (1.0 - np.arange(K + 1) / K) ** power


def richardson(Ks, values):
    """Extrapolate ``v(K) = v_inf + c K^-p`` from the last three values (K doubling).

    Returns ``(v_inf, p, error)``: ``p`` fitted from the ratio of successive differences;
    ``error`` is the size of the extrapolation correction itself (the distance from the
    finest value), a deliberately conservative estimate.  With two values only p = 2 is
    assumed and the error is the correction.
    """
    v = np.asarray(values, dtype=float)
    if v.size < 2:
        return float(v[-1]), math.nan, math.inf
    d2 = v[-1] - v[-2]
    if v.size >= 3 and (v[-2] - v[-3]) != 0 and d2 != 0 and (v[-2] - v[-3]) / d2 > 1.0:
        p = math.log2((v[-2] - v[-3]) / d2)
    else:
        p = 2.0
    corr = d2 / (2.0 ** p - 1.0)
    return float(v[-1] + corr), float(p), float(abs(corr))


@dataclass(frozen=True, repr=False)
class ParisiSolution(Result):
    """Full-RSB solution with its convergence report.

    ``q`` (K+1 breakpoints) and ``x`` (K values, x on (q_{i-1}, q_i)) of the finest
    discretization; ``value`` the continuum (K -> inf) extrapolation, ``error`` its error
    estimate (extrapolation correction + lattice error), ``p`` the fitted order; ``Ks``,
    ``values`` the whole sequence; ``residual`` ``max|grad|`` at the finest K; ``lattice_points``
    and ``lattice_error`` (value change on a twice finer lattice); ``iterations`` Newton
    iterations summed; ``hessian_eigenvalues`` at the finest K (all > 0: a minimum).
    """
    q: np.ndarray
    x: np.ndarray
    value: float
    error: float
    p: float
    Ks: tuple
    values: tuple
    residual: float
    lattice_points: int
    lattice_error: float
    iterations: int
    hessian_eigenvalues: np.ndarray
    extra: dict = field(default_factory=dict)
    headline = "value"
    converged = True
    ansatz = "frsb"

    @property
    def stability(self):
        return self.hessian_eigenvalues

    @property
    def rs_stable(self):
        return None if self.hessian_eigenvalues is None else bool(np.all(np.asarray(self.hessian_eigenvalues) > 0))


class _GridMap(_MMap):
    def __init__(self, prob, K, power=2.0):
        self.prob, self.K = prob, K
        self.t = graded_grid(K, power)
        self.frozen = prob.channel.frozen
        self.q0_free = prob.q0_fixed is None
        self.nfree = int(self.q0_free) + int(not self.frozen)
        self.bounded = not self.frozen

    def qm(self, u):
        j = 0
        if self.q0_free:
            lo = float(_expit(u[0]))
            dlo = lo * (1 - lo)
            j = 1
        else:
            lo, dlo = self.prob.q0_fixed, 0.0
        if self.frozen:
            hi, dhi_dv, dhi_dlo = 1.0, 0.0, 0.0
        else:
            s = float(_expit(u[j]))
            hi = lo + (1 - lo) * s
            dhi_dv, dhi_dlo = (1 - lo) * s * (1 - s), 1 - s
        q = lo + (hi - lo) * self.t
        J = np.zeros((self.K + 1, self.nfree))
        c = 0
        if self.q0_free:
            J[:, 0] = ((1 - self.t) + self.t * dhi_dlo) * dlo
            c = 1
        if not self.frozen:
            J[:, c] = self.t * dhi_dv
        return q, self.m_of(u[self.nfree:]), J

    def u0(self, lo, hi, x):
        u = []
        if self.q0_free:
            u.append(float(_logit(lo)))
        if not self.frozen:
            u.append(float(_logit((hi - lo) / (1 - lo))))
        return np.array(u + list(self.u_of(x)))


def _interp_x(q_old, x_old, q_new):
    """Piecewise-constant x(q) resampled at the midpoints of a new grid (log x linear in
    -log(1 - q), which resolves the growth of x towards the top of the support)."""
    so = -np.log1p(-0.5 * (q_old[1:] + q_old[:-1]))
    sn = -np.log1p(-0.5 * (q_new[1:] + q_new[:-1]))
    lx = np.log(x_old)
    out = np.interp(sn, so, lx)
    if so.size >= 2:  # beyond the old midpoints: continue the end slopes (the new top cell is finer)
        hi, lo = sn > so[-1], sn < so[0]
        out[hi] = lx[-1] + (sn[hi] - so[-1]) * (lx[-1] - lx[-2]) / (so[-1] - so[-2])
        out[lo] = lx[0] + (sn[lo] - so[0]) * (lx[1] - lx[0]) / (so[1] - so[0])
    return np.exp(out)


def solve_frsb(prob, lo, hi, x_of_q, *, Ks=(8, 16, 32), tol=1e-9, power=2.0):
    """Full RSB of ``prob``: minimize over piecewise-constant x on graded grids, K in ``Ks``.

    ``tol`` is the gradient tolerance of the finest K (100 tol for the coarser ones, whose
    values enter only the extrapolation: the value error is ~ ``|grad|^2 / lambda_min``).
    ``power``: grading of the grids (:func:`graded_grid`).  A finer K starts from the
    previous minimizer (:func:`_interp_x`), scaled by ``prob.x_growth`` for frozen channels.

    ``lo``, ``hi``: starting ends of the support (``hi`` ignored for frozen channels, where
    it is 1); ``x_of_q``: callable giving the starting x at the cell midpoints of the
    first grid.  Raises ConvergenceError (with the sequence so far) if a level fails.
    """
    values, its = [], 0
    q_prev = x_prev = None
    sol = None
    for K in Ks:
        gm = _GridMap(prob, K, power)
        hi_ = 1.0 if gm.frozen else hi
        q = lo + (hi_ - lo) * gm.t
        if x_prev is None:
            x = x_of_q(0.5 * (q[1:] + q[:-1]))
        else:
            x = _interp_x(q_prev, x_prev, q)
            if gm.frozen and prob.x_growth:  # finer top cell: x grows as eps_K^-x_growth
                x *= ((1.0 - q_prev[-2]) / (1.0 - q[-2])) ** prob.x_growth
            if gm.bounded:  # the end-slope continuation of a guess may step past x = 1
                x = np.minimum(x, 0.5 * (1.0 + x_prev.max()))
        u = gm.u0(lo, hi_, x)
        lat = prob.lattice(q, x)
        try:
            info, u, lat = _minimize_relattice(prob, gm, u, lat, tol if K == Ks[-1] else 100 * tol,
                                               f"{prob.name} full RSB (K={K})", report_hessian=K == Ks[-1])
        except ConvergenceError as exc:
            exc.diagnostics.update({"K": K, "values_so_far": str(values)})
            raise
        its += info.iterations
        q_prev, x_prev, _ = gm.qm(u)
        lo = float(q_prev[0])
        hi = float(q_prev[-1])
        values.append(float(info.value))
        sol = info
    fine = prob.evaluate(q_prev, x_prev, prob.lattice(q_prev, x_prev, res=2.0), grad=False)[0]
    lat_err = abs(fine - values[-1])
    v_inf, p, err = richardson(Ks, values)
    return ParisiSolution(q_prev, x_prev, v_inf, err + lat_err, p, tuple(Ks), tuple(values), sol.residual,
                          lat.points, lat_err, its, sol.hessian_eigenvalues)
