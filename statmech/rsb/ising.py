r"""Ising (+-1) prior for the RSB core: the entropic term at finite conjugates, its frozen
limit, and the hard-constraint channel of frozen (isolated-point) states.

Derivations in ``docs/rsb.md`` section 10 ("Binary perceptron").  Overlaps ``q_0 <= ... <= q_k``, conjugates
``q_hat_0 <= ... <= q_hat_k``, Parisi parameters ``m_1 <= ... <= m_k`` (``m_0 = 0``,
``m_{k+1} = 1``).  The entropic term of Ising weights is::

    G_S = 1/2 sum_{i=0}^{k} (m_{i+1} - m_i) q_hat_i q_i - q_hat_k / 2 + I(q_hat, m)      (I1)
    I   = nested average (K1) of f(q_hat_k, h) = log 2cosh(h), with variances q_hat_i - q_hat_{i-1}

(``G_S`` at k = 0 is ``-q_hat (1 - q)/2 + E log 2cosh(sqrt(q_hat) z)``, (B1) of
``docs/perceptron.md``).  It is evaluated by :func:`statmech.rsb.kstep_average` in
*compact coordinates*: with ``p = 1/(1 + q_hat_k)`` the fields ``g = sqrt(p) h`` have
variances ``c_i - c_{i-1}``, ``c_i = p q_hat_i`` in ``[0, 1)``, and the terminal is
``log 2cosh(g / sqrt(p))`` with ``p = 1 - c_k`` -- an ordinary non-frozen channel of the
core (:class:`IsingTerminal`).  The gradient in ``q_hat`` follows by the chain rule.

**Frozen limit** ``q_k = 1``, ``q_hat_k -> inf`` (states are single configurations).  The
innermost step becomes ``(1/m_k) log E_z (2cosh(h + sqrt(D) z))^{m_k} = m_k D/2 +
(1/m_k) log 2cosh(m_k h) + O(exp(-m_k^2 D/2))`` (``D = q_hat_k - q_hat_{k-1}``) and the
divergent terms cancel::

    G_S^fr = 1/2 sum_{i=0}^{k-1} (m_{i+1} - m_i) q_hat_i q_i - m_k q_hat_{k-1}/2 + I^fr      (I2)
    I^fr   = nested average of the frozen level F(h) = (1/m_k) log 2cosh(m_k h)

(:class:`IsingFrozen`, in compact coordinates ``p = 1/(1 + q_hat_{k-1})``).  The energetic
term of the perceptron family in the same limit at *finite* ``m_k`` is the frozen hard
constraint ``F(h) = (1/m_k) log H((kappa - h)/sqrt(1 - q_{k-1}))`` (:class:`HardFrozen`;
the spherical prior needs ``m = y (1 - q)`` instead, :class:`statmech.rsb.HingeFrozen`).

Also here: :func:`ising_lattice` (the core's lattice, with the strides refined where a
large tilt re-sharpens ``log 2cosh``) and :func:`solve_stationary` (Newton on the stationarity
equations of a functional with conjugate order parameters, which is a saddle -- max in
``q_hat``, min in ``q`` -- and therefore not a job for :func:`statmech.rsb.minimize`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import ConvergenceError
from ..gaussian import inv_mills, log_H
from ..saddle import newton
from . import _lattice, kstep

__all__ = ["IsingTerminal", "IsingFrozen", "HardFrozen", "IsingEntropic", "ising_entropic",
           "ising_lattice", "solve_stationary", "Stationary"]


# --------------------------------------------------------------------------- channels
@dataclass(frozen=True)
class IsingTerminal(kstep.Channel):
    """``log 2cosh(g / sqrt(p))`` at ``p = 1 - c_k`` (compact coordinates, (I1))."""

    @property
    def curvature_scale(self):
        return 0.0  # 1/f'' = p cosh^2 >= p: set from p by make_lattice

    def tabulate(self, h0, d, n, p, y):
        x = (h0 + d * np.arange(n)) / math.sqrt(p)
        return np.logaddexp(x, -x), -0.5 * x * np.tanh(x) / p, np.zeros(n)


@dataclass(frozen=True)
class IsingFrozen(kstep.Channel):
    """Frozen Ising level ``F = (1/y) log 2cosh(y g / sqrt(s2))``, ``s2 = 1 - c_{k-1}`` ((I2))."""
    frozen = True

    def tabulate(self, h0, d, n, s2, y):
        if not y > 0.0:
            raise ValueError(f"m must be > 0 for a frozen Ising level, got {y!r}")
        x = (h0 + d * np.arange(n)) / math.sqrt(s2)
        t = np.tanh(y * x)
        F = np.logaddexp(y * x, -y * x) / y
        return F, -0.5 * x * t / s2, (x * t - F) / y


@dataclass(frozen=True)
class HardFrozen(kstep.Channel):
    """Perceptron constraint ``theta(h - kappa)`` frozen at finite ``m``:
    ``F = (1/y) log H((kappa - h)/sqrt(s2))``, ``s2 = 1 - q_{k-1}``, ``y = m_k``.

    For k = 1 (the lattice heuristics of deeper levels assume a bounded curvature)."""
    kappa: float
    frozen = True

    @property
    def center(self):
        return self.kappa

    def tabulate(self, h0, d, n, s2, y):
        if not y > 0.0:
            raise ValueError(f"m must be > 0 for a frozen hard constraint, got {y!r}")
        a = (self.kappa - (h0 + d * np.arange(n))) / math.sqrt(s2)
        F = log_H(a) / y
        return F, inv_mills(a) * a / (2.0 * s2 * y), -F / y


# --------------------------------------------------------------------------- lattice
def _compact(q_hat, frozen):
    """Compact coordinates: (c, p) with p = 1/(1 + Q), Q = q_hat_k (q_hat_{k-1} if frozen)."""
    qh = np.asarray(q_hat, dtype=float)
    k = qh.size - 1
    Q = qh[k - 1] if frozen else qh[k]
    p = 1.0 / (1.0 + Q)
    c = p * qh
    if frozen:
        c[k] = 1.0
    return c, p


def ising_lattice(q_hat, m, *, frozen=False, res=1.0):
    """Lattice of :func:`ising_entropic` at ``(q_hat, m)``: :func:`statmech.rsb.make_lattice`
    in compact coordinates, with level strides refined to a third of the width of
    ``f(q_hat_i, .)``.

    The core takes that width to be ``sqrt(1 - q_i)`` (smoothing by the remaining
    variance).  A tilted step of ``log 2cosh`` re-sharpens it: for ``m D >> 1`` the level
    is ``m D/2 + (1/m) log 2cosh(m h)``, of width ``1/m`` in ``h``.  Here the width of level
    i (in ``h``) is ``min(sqrt(1 + q_hat_k - q_hat_i), max(w_{i+1}, 1/m_{i+1}))``, ``w_k = 1``
    (``1/m_k`` for the frozen level).
    """
    m = np.asarray(m, dtype=float)
    c, p = _compact(q_hat, frozen)
    qh = np.asarray(q_hat, dtype=float)
    k = qh.size - 1
    ch = IsingFrozen() if frozen else IsingTerminal()
    # a frozen level with m_k > 1 is narrower than the core's top spacing: refine it all
    lat = kstep.make_lattice(c, m, ch, res=res * (max(1.0, m[k - 1]) if frozen else 1.0))
    nl = k if frozen else k + 1
    w = np.empty(nl)
    top = qh[k - 1] if frozen else qh[k]
    w[nl - 1] = min(1.0, 1.0 / m[k - 1]) if frozen else 1.0
    for i in range(nl - 2, -1, -1):
        w[i] = min(math.sqrt(1.0 + top - qh[i]), max(w[i + 1], 1.0 / m[i]))
    strides = lat.strides.copy()
    for i in range(nl):
        need = w[i] * math.sqrt(p) / (kstep.RES_WIDTH * res)  # in g = sqrt(p) h
        s = 1 << max(0, int(math.floor(math.log2(need / lat.delta) + 1e-12)))
        strides[i] = min(strides[i], s)
        if i > 0:
            strides[i] = min(strides[i], strides[i - 1])
    # extent: the tilted peaks of e^{m log 2cosh} sit m s2 / sqrt(p) away (in g) and must lie
    # on the lattice -- continuing the linear far field by the core's quadratic over thousands
    # of points would amplify rounding (1e-7 at q_hat = 1000)
    s2 = np.diff(np.concatenate([[0.0], c]))[:nl]
    hmax = _lattice.GAUSS_L * float(np.sum(np.sqrt(s2))) + float(np.sum(m[:nl - 1] * s2[1:])) / math.sqrt(p)
    J = max(lat.J, int(math.ceil(hmax / lat.delta / strides[0])) * int(strides[0]))
    return kstep.Lattice(lat.delta, J, strides)


# --------------------------------------------------------------------------- entropic term
@dataclass(frozen=True)
class IsingEntropic:
    """Value of (I1) / (I2) and its gradient in ``q``, ``q_hat`` and ``m``."""
    value: float
    dq: np.ndarray
    dq_hat: np.ndarray
    dm: np.ndarray
    lattice: kstep.Lattice


def _check(q, q_hat, m, frozen):
    k = m.size
    if q.size != k + 1 or q_hat.size != k + 1:
        raise ValueError(f"q and q_hat must have len(m) + 1 = {k + 1} entries, got {q.size} and {q_hat.size}")
    if np.any(np.diff(q) < 0) or q[0] < 0 or q[-1] > 1:
        raise ValueError(f"q must be non-decreasing in [0, 1], got {q}")
    top = q_hat[:-1] if frozen else q_hat
    if np.any(np.diff(top) < 0) or top[0] < 0 or not np.all(np.isfinite(top)):
        raise ValueError(f"q_hat must be finite and non-decreasing from >= 0, got {q_hat}")
    if np.any(m <= 0) or np.any(np.diff(m) < 0):
        raise ValueError(f"m must be positive and non-decreasing, got {m}")
    if frozen and (k < 1 or q[k] != 1.0):
        raise ValueError("the frozen Ising term needs k >= 1 and q_k = 1 (q_hat_k = inf is implied)")


def ising_entropic(q, q_hat, m, *, frozen=False, lattice=None, res=1.0, grad=True):
    r"""Entropic term of Ising weights, (I1), or its frozen limit (I2), with gradients.

    Parameters
    ----------
    q, q_hat : arrays of length k + 1 (non-decreasing; with ``frozen``, ``q_k = 1`` and
        ``q_hat_k`` is ignored -- it is infinite)
    m : array of length k (positive, non-decreasing)
    lattice : fixed lattice (from :func:`ising_lattice`) for consistent finite differences

    Returns
    -------
    :class:`IsingEntropic` (``dq_hat[k] = 0`` when frozen).
    """
    q = np.asarray(q, dtype=float)
    qh = np.asarray(q_hat, dtype=float)
    m = np.atleast_1d(np.asarray(m, dtype=float))
    _check(q, qh, m, frozen)
    k = m.size
    c, p = _compact(qh, frozen)
    lat = lattice if lattice is not None else ising_lattice(qh, m, frozen=frozen, res=res)
    r = kstep.kstep_average(c, m, IsingFrozen() if frozen else IsingTerminal(), lattice=lat, grad=grad)
    mm = np.concatenate([[0.0], m, [1.0]])
    top = k - 1 if frozen else k          # the q_hat that sets p
    n = top + 1                           # the finite q_hat
    dmm = 0.5 * (mm[1:n + 1] - mm[:n])    # 1/2 (m_{i+1} - m_i)
    val = float(np.sum(dmm * qh[:n] * q[:n])) + r.value
    val -= 0.5 * m[k - 1] * qh[k - 1] if frozen else 0.5 * qh[k]
    dq = np.zeros(k + 1)
    dqh = np.zeros(k + 1)
    dm = np.zeros(k)
    if grad:
        dq[:n] = dmm * qh[:n]
        dqh[:n] = dmm * q[:n]
        # c_i = p q_hat_i (i <= top), p = 1/(1 + q_hat_top): dI/dq_hat_j = p dV/dc_j - p^2 sum_i dV/dc_i q_hat_i [j = top]
        dV = r.dq[:n]
        dqh[:n] += p * dV
        dqh[top] -= p * p * float(dV @ qh[:n])
        # d/dm_j of the linear terms: 1/2 (q_hat_{j-1} q_{j-1} - q_hat_j q_j); frozen m_k: 1/2 q_hat_{k-1} (q_{k-1} - 1)
        dm += r.dm
        dm[:n - 1] += 0.5 * (qh[:n - 1] * q[:n - 1] - qh[1:n] * q[1:n])
        if frozen:
            dm[k - 1] += 0.5 * qh[k - 1] * (q[k - 1] - 1.0)
            dqh[k - 1] -= 0.5 * m[k - 1]
        else:
            dqh[k] -= 0.5
    return IsingEntropic(val, dq, dqh, dm, lat)


# --------------------------------------------------------------------------- saddle solver
@dataclass(frozen=True)
class Stationary:
    """Outcome of :func:`solve_stationary`: root ``u``, residual (max-norm of the equations),
    Newton iterations, the Jacobian at the root (finite differences of the equations on
    the final lattices) and those lattices."""
    u: np.ndarray
    residual: float
    iterations: int
    jacobian: np.ndarray
    lattices: object


def _fd_jacobian(F, u, h):
    J = np.empty((u.size, u.size))
    for j in range(u.size):
        e = np.zeros_like(u)
        e[j] = h
        J[:, j] = (F(u + e) - F(u - e)) / (2.0 * h)
    return J


def solve_stationary(equations, u0, lattices_at, *, tol=1e-11, h=1e-6, rounds=6, maxiter=60,
                     what="RSB equations"):
    """Solve ``equations(u, lattices) = 0`` by Newton on fixed lattices, re-made at the root.

    ``lattices_at(u)`` returns the lattices (any object comparable by :func:`same_lattices`)
    at which ``equations`` is evaluated; they are held fixed during a Newton solve (the
    Jacobian is the central difference of the analytic equations, consistent only on a
    fixed lattice), then re-made at the root and the solve repeated until they no longer
    change.  Raises :class:`~statmech.ConvergenceError` with the last iterate otherwise.
    """
    u = np.asarray(u0, dtype=float).copy()
    lats = lattices_at(u)
    its = 0
    for _ in range(rounds):
        F = (lambda v, L=lats: np.asarray(equations(v, L), dtype=float))

        def safe(v, F=F):
            try:
                return F(v)
            except ValueError:  # left the domain: an infinite residual makes Newton backtrack
                return np.full(u.size, math.inf)
        info = newton(safe, u, lambda v: _fd_jacobian(F, v, h), tol=tol, maxiter=maxiter, raise_on_fail=False)
        its += info.iterations
        if not info.converged:
            raise ConvergenceError(f"{what}: Newton did not converge", x=info.x, residual=info.residual,
                                   iterations=its)
        u = info.x
        new = lattices_at(u)
        if same_lattices(new, lats):
            return Stationary(u, info.residual, its, _fd_jacobian(F, u, h), lats)
        lats = new
    raise ConvergenceError(f"{what}: the lattices did not settle", x=u, iterations=its)


def same_lattices(a, b):
    """True if two lattices (or tuples of lattices) are identical."""
    if isinstance(a, tuple):
        return len(a) == len(b) and all(same_lattices(x, y) for x, y in zip(a, b))
    return a.delta == b.delta and a.J == b.J and np.array_equal(a.strides, b.strides)
