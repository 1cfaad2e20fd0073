r"""k-step RSB: the nested average, the entropic terms and their gradients.

Notation (``docs/rsb.md`` section 1).  Overlaps ``q_0 <= q_1 <= ... <= q_k``, Parisi
parameters ``m_1 <= ... <= m_k`` (``x(q) = m_i`` on ``(q_{i-1}, q_i)``).  The energetic
(channel) term is the nested average::

    f(q_k, h) = innermost level (the channel)
    f(q_{i-1}, h) = (1/m_i) log E_z exp(m_i f(q_i, h + sqrt(q_i - q_{i-1}) z))     i = k .. 1
    Phi = E_z f(q_0, sqrt(q_0) z)                                                 (K1)

i.e. ``E_{z_0} (1/m_1) log E_{z_1} ( ... E_{z_k} e^{m_k f})^{m_1/m_2}`` -- the recursion is
the Parisi PDE ``d_q f = -(f'' + x(q) f'^2)/2`` integrated exactly over each interval
where ``x`` is constant.  A *frozen* channel (``q_k = 1``) does its own last step in
closed form (SAT/UNSAT point of the perceptron family with ``m = y (1 - q)``, SK at T = 0
with ``m = y T``); there ``m_k`` is that step's ``y``.

:func:`kstep_average` returns ``Phi`` and its exact gradient with respect to every
``q_i`` and ``m_i`` (adjoint of the discrete recursion, :mod:`statmech.rsb._lattice`).
:func:`spherical_entropic` and :func:`ising_entropic_t0` are the entropic terms of a
spherical prior and of Ising spins (SK at zero temperature), with gradients.
:func:`minimize` is Newton's method for the minimum of such a functional, the Hessian
being the central finite difference of the analytic gradient.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import ConvergenceError
from . import _lattice, channels

__all__ = ["Channel", "HingeFrozen", "AbsFrozen", "LogHTerminal", "KStepAverage", "Lattice",
           "kstep_average", "make_lattice", "spherical_entropic", "ising_entropic_t0",
           "minimize", "fd_hessian", "MinimizeInfo"]

H_SPAN = 10.0        # half-width of the field lattice beyond |kappa| (unit variance: weight e^-50)
RES_WIDTH = 3.0      # lattice points per smoothness width of a level (res=2 changes values by <2e-14)
RES_SIGMA = 1.0      # lattice points per standard deviation of a step


# --------------------------------------------------------------------------- channels
class Channel:
    """Innermost level of the recursion.

    ``frozen``: the channel performs the last step ``q_{k-1} -> q_k = 1`` itself
    (parameters ``s2 = 1 - q_{k-1}`` and ``y = m_k``); otherwise it is ``f(q_k, h)``
    with parameter ``p = 1 - q_k``.  ``center`` is where its structure sits (kappa),
    ``curvature_scale`` a lower bound on ``1/|f''|`` at ``p = 1`` (in the lattice heuristics).
    """
    frozen = False
    center = 0.0
    curvature_scale = math.inf

    def tabulate(self, h0, d, n, s2_or_p, y):  # pragma: no cover - interface
        """(F, dF/d s2_or_p, dF/dy) on ``h0 + d*arange(n)``."""
        raise NotImplementedError


@dataclass(frozen=True)
class HingeFrozen(Channel):
    """Perceptron family at the SAT/UNSAT point: terminal ``-(kappa - h)_+^2/2``, frozen."""
    kappa: float
    frozen = True
    curvature_scale = 1.0

    @property
    def center(self):
        return self.kappa

    def tabulate(self, h0, d, n, s2, y):
        return channels.hinge_frozen(h0, d, n, s2, y, self.kappa)


@dataclass(frozen=True)
class AbsFrozen(Channel):
    """SK at zero temperature: terminal ``|h|``, frozen."""
    frozen = True

    def tabulate(self, h0, d, n, s2, y):
        return channels.abs_frozen(h0, d, n, s2, y)


@dataclass(frozen=True)
class LogHTerminal(Channel):
    """Perceptron family at finite alpha: ``f(q_k, h) = log H((kappa - h)/sqrt(1 - q_k))``."""
    kappa: float

    @property
    def center(self):
        return self.kappa

    @property
    def curvature_scale(self):
        return 0.0  # 1/|f''| <= p: set from p in make_lattice

    def tabulate(self, h0, d, n, p, y):
        F, Fp = channels.logh_terminal(h0, d, n, p, self.kappa)
        return F, Fp, np.zeros_like(F)


# --------------------------------------------------------------------------- lattice
@dataclass(frozen=True)
class Lattice:
    """Field lattice ``h = j delta``, ``|j| <= J``; level i lives on stride ``strides[i]``."""
    delta: float
    J: int
    strides: np.ndarray

    @property
    def points(self):
        return int(sum(2 * (self.J // s) + 1 for s in self.strides))


def _levels(q, channel):
    q = np.asarray(q, dtype=float)
    k = q.size - 1
    return k, (k if channel.frozen else k + 1)


def make_lattice(q, m, channel, *, res=1.0, span=H_SPAN):
    """Lattice for the recursion at (q, m): spacing of level i a fraction of its scales.

    Level i (the function ``f(q_i, .)``) gets spacing
    ``min(sigma_{i+1... }, sqrt(1 - q_i) / RES_WIDTH, sqrt(lambda_i / m_i) / RES_SIGMA) / res``
    where ``sigma`` is the step it feeds and ``lambda_i`` the curvature scale of the level
    (``1 - q_k + sum_{j > i} m_j (q_j - q_{j-1})`` for the log-concave perceptron channels);
    spacings are rounded to powers of two of the finest, inner levels finer.  ``res``
    refines every spacing (the convergence checks use res = 2).
    """
    q = np.asarray(q, dtype=float)
    m = np.asarray(m, dtype=float)
    k, nl = _levels(q, channel)
    s2 = np.diff(np.concatenate([[0.0], q]))
    if channel.frozen:
        lam = channel.curvature_scale
    else:
        lam = 1.0 - q[k]
    lam_i = np.empty(nl)
    for i in range(nl - 1, -1, -1):
        lam_i[i] = lam
        if i >= 1:
            lam += m[i - 1] * s2[i]
    sp = np.empty(nl)
    for i in range(nl):
        width = math.sqrt(max(1.0 - q[i], 0.0)) if i < k or not channel.frozen else 0.0
        if channel.frozen and i == nl - 1:
            width = math.sqrt(s2[k])  # f(q_{k-1}) is smooth on the scale of the frozen step
        if not channel.frozen and i == k:
            width = math.sqrt(1.0 - q[k])
        cands = [width / RES_WIDTH] if width > 0 else []
        sig = math.sqrt(s2[i]) if s2[i] > 0 else math.inf
        if sig < math.inf:
            cands.append(sig / RES_SIGMA)
        if i >= 1 and m[i - 1] > 0 and math.isfinite(lam_i[i]) and lam_i[i] > 0:
            cands.append(math.sqrt(lam_i[i] / m[i - 1]) / RES_SIGMA)
        sp[i] = min(cands) / res if cands else 0.05 / res
    delta = float(sp.min())
    strides = np.ones(nl, dtype=np.int64)
    for i in range(nl):
        strides[i] = 1 << max(0, int(math.floor(math.log2(sp[i] / delta) + 1e-12)))
        if i > 0:
            strides[i] = min(strides[i], strides[i - 1])
    hmax = span + abs(channel.center)
    J = int(math.ceil(hmax / delta / strides[0])) * int(strides[0])
    return Lattice(delta, J, strides)


# --------------------------------------------------------------------------- the average
@dataclass(frozen=True)
class KStepAverage:
    """Value of (K1) and its gradient: ``dq`` (len k+1) and ``dm`` (len k)."""
    value: float
    dq: np.ndarray
    dm: np.ndarray
    lattice: Lattice


def kstep_average(q, m, channel, *, lattice=None, res=1.0, grad=True):
    """The nested average (K1) for overlaps ``q = (q_0..q_k)`` and ``m = (m_1..m_k)``.

    For a frozen channel ``q_k`` must be 1 and ``m_k`` is the frozen step's ``y``
    (``y = 0`` is the plain-average, replica-symmetric, limit).  Pass ``lattice``
    to evaluate on a fixed lattice (needed for consistent finite differences);
    otherwise :func:`make_lattice` with ``res``.
    """
    q = np.ascontiguousarray(q, dtype=float)
    m = np.ascontiguousarray(m, dtype=float)
    k, nl = _levels(q, channel)
    if m.size != k:
        raise ValueError(f"m must have len(q) - 1 = {k} entries, got {m.size}")
    if np.any(np.diff(q) < 0) or q[0] < 0 or q[-1] > 1:
        raise ValueError(f"q must be non-decreasing in [0, 1], got {q}")
    if channel.frozen and (k < 1 or q[k] != 1.0):
        raise ValueError("a frozen channel needs k >= 1 and q_k = 1")
    lat = lattice if lattice is not None else make_lattice(q, m, channel, res=res)
    s2 = np.diff(np.concatenate([[0.0], q]))
    top = nl - 1
    st = int(lat.strides[top])
    n = 2 * (lat.J // st) + 1
    h0 = -(lat.J // st) * st * lat.delta
    if channel.frozen:
        F, Fa, Fy = channel.tabulate(h0, st * lat.delta, n, s2[k], m[k - 1])
    else:
        F, Fa, Fy = channel.tabulate(h0, st * lat.delta, n, 1.0 - q[k], 0.0)
    s2_lat = np.ascontiguousarray(s2[:nl])
    m_lat = np.concatenate([[0.0], m[:nl - 1]])
    val, g_s2, g_m, P = _lattice.nested_average(np.ascontiguousarray(F), lat.J, lat.delta, lat.strides,
                                                s2_lat, m_lat, _lattice.GAUSS_L, grad)
    dq = np.zeros(k + 1)
    dm = np.zeros(k)
    if grad:
        # s2_i = q_i - q_{i-1}
        for i in range(nl):
            dq[i] += g_s2[i]
            if i >= 1:
                dq[i - 1] -= g_s2[i]
        dm[:nl - 1] = g_m[1:nl]
        ga = float(P @ Fa)
        if channel.frozen:   # s2_k = 1 - q_{k-1}
            dq[k - 1] -= ga
            dm[k - 1] = float(P @ Fy)
        else:                # p = 1 - q_k
            dq[k] -= ga
    return KStepAverage(float(val), dq, dm, lat)


# --------------------------------------------------------------------------- entropic terms
def spherical_entropic(q, m, *, jammed=False):
    r"""Entropic term of a spherical prior and its gradient (``docs/rsb.md`` Eq. (S-k)).

    ``S = 1/2 [log L_{k+1} + sum_i (1/m_i) log(L_i / L_{i+1}) + q_0 / L_1]`` with
    ``L_{k+1} = 1 - q_k``, ``L_i = L_{i+1} + m_i (q_i - q_{i-1})``  (= (1/2n) log det Q).
    ``jammed=True``: the coefficient of ``1/(1 - q_k)`` as ``q_k -> 1`` with
    ``m_i = y_i (1 - q_k)`` (``m`` holds the ``y_i``): ``L_{k+1} = 1`` and no log term.
    Returns ``(S, dS/dq, dS/dm)``.
    """
    q = np.asarray(q, dtype=float)
    m = np.asarray(m, dtype=float)
    k = q.size - 1
    L = np.empty(k + 2)
    L[k + 1] = 1.0 if jammed else 1.0 - q[k]
    dq_ = np.diff(q)
    for i in range(k, 0, -1):
        L[i] = L[i + 1] + m[i - 1] * dq_[i - 1]
    logL = np.log(L[1:])
    S = 0.0 if jammed else logL[k]
    gL = np.zeros(k + 2)
    if not jammed:
        gL[k + 1] += 1.0 / L[k + 1]
    gm = np.zeros(k)
    for i in range(1, k + 1):
        mi = m[i - 1]
        if mi > 0:
            S += (logL[i - 1] - logL[i]) / mi
            gL[i] += 1.0 / (mi * L[i])
            gL[i + 1] -= 1.0 / (mi * L[i + 1])
            gm[i - 1] -= (logL[i - 1] - logL[i]) / mi ** 2
        else:  # m -> 0 limit: (q_i - q_{i-1}) / L_{i+1}
            S += dq_[i - 1] / L[i + 1]
            gL[i + 1] -= dq_[i - 1] / L[i + 1] ** 2
            gm[i - 1] -= 0.5 * dq_[i - 1] ** 2 / L[i + 1] ** 2
    S += q[0] / L[1]
    gL[1] -= q[0] / L[1] ** 2
    gq = np.zeros(k + 1)
    gq[0] += 1.0 / L[1]
    for i in range(1, k + 1):
        if m[i - 1] <= 0:
            gq[i] += 1.0 / L[i + 1]
            gq[i - 1] -= 1.0 / L[i + 1]
    # back-propagate through L: L_i = L_{k+1} + sum_{j >= i} m_j (q_j - q_{j-1})
    acc = 0.0  # sum of gL over L_1 .. L_j
    for j in range(1, k + 1):
        acc += gL[j]
        gm[j - 1] += acc * dq_[j - 1]
        gq[j] += acc * m[j - 1]
        gq[j - 1] -= acc * m[j - 1]
    if not jammed:
        gq[k] -= acc + gL[k + 1]
    return 0.5 * S, 0.5 * gq, 0.5 * gm


def ising_entropic_t0(q, y):
    r"""SK at T = 0: ``-(1/4) sum_i y_i (q_i^2 - q_{i-1}^2)`` (``= -(1/2) int q gamma(q) dq``).

    Returns ``(value, d/dq, d/dy)``.
    """
    q = np.asarray(q, dtype=float)
    y = np.asarray(y, dtype=float)
    dq2 = np.diff(q ** 2)
    val = -0.25 * float(y @ dq2)
    gq = np.zeros(q.size)
    gq[1:] -= 0.5 * y * q[1:]
    gq[:-1] += 0.5 * y * q[:-1]
    return val, gq, -0.25 * dq2


# --------------------------------------------------------------------------- Newton
@dataclass(frozen=True)
class MinimizeInfo:
    """Outcome of :func:`minimize`: minimizer, value, gradient max-norm, Hessian eigenvalues
    (finite-difference Hessian at the minimizer) and the last Hessian used."""
    x: np.ndarray
    value: float
    residual: float
    iterations: int
    hessian_eigenvalues: np.ndarray
    hessian: np.ndarray = None


def fd_hessian(grad, x, h=1e-6, g0=None):
    """Symmetrized finite-difference Jacobian of the analytic gradient ``grad`` at ``x``.

    Central differences (relative error ~h^2 + 1e-16/h, ``grad`` being exact for the
    discrete functional), or forward differences from ``g0 = grad(x)`` when given (half
    the cost, error ~h; Newton then converges superlinearly rather than quadratically).
    """
    x = np.asarray(x, dtype=float)
    J = np.empty((x.size, x.size))
    for j in range(x.size):
        e = np.zeros_like(x)
        e[j] = h
        if g0 is None:
            J[:, j] = (grad(x + e) - grad(x - e)) / (2 * h)
        else:
            J[:, j] = (grad(x + e) - g0) / h
    return 0.5 * (J + J.T)


def minimize(fun, grad, x0, *, tol=1e-11, maxiter=80, h=1e-6, max_step=1.0, H0=None,
             report_hessian=True, what="RSB functional"):
    """Minimize ``fun`` by a Newton method: Hessian from :func:`fd_hessian`, BFGS-updated.

    Every Parisi functional of the package is *minimized* over its order parameters at
    the saddle point (SK: Parisi's formula; perceptron at finite alpha: the free entropy;
    the jamming line: ``alpha_J = min R``, docs/rsb.md).  The Hessian is the central
    difference of the analytic gradient at the start (or ``H0``, e.g. from a previous
    lattice round), then updated by BFGS from the gradients along the path, and computed
    afresh when a step had to be backtracked below 1/4 or every 12 iterations.  Negative
    or tiny eigenvalues (away from the minimum, or along the nearly flat directions of a
    fine discretization) are replaced by their modulus floored at 1e-9 of the largest; the
    step is backtracked until ``fun`` decreases (Armijo), or, once the predicted decrease
    is below the rounding of ``fun``, until ``max|grad|`` decreases; no parameter moves by
    more than ``max_step`` per iteration (the parameters are logs and logits).  Converged
    when ``max|grad| <= tol``; the reported Hessian eigenvalues are then those of a fresh
    finite-difference Hessian (of the BFGS one if ``report_hessian`` is False).  Otherwise :class:`~statmech.ConvergenceError` with the
    last iterate, gradient and Hessian spectrum.
    """
    x = np.asarray(x0, dtype=float).copy()
    f = fun(x)
    g = grad(x)
    Hm = fd_hessian(grad, x, h) if H0 is None or H0.shape != (x.size, x.size) else H0.copy()
    fresh = H0 is None
    ev = np.linalg.eigvalsh(Hm)
    since = 0
    for it in range(1, maxiter + 1):
        res = float(np.max(np.abs(g)))
        if not math.isfinite(f) or not math.isfinite(res):
            break
        if res <= tol:
            Hf = Hm if fresh or not report_hessian else fd_hessian(grad, x, h)
            return MinimizeInfo(x, f, res, it - 1, np.linalg.eigvalsh(Hf), Hf)
        ev, V = np.linalg.eigh(Hm)
        floor = 1e-9 * max(1.0, float(np.max(np.abs(ev))))
        lam = np.maximum(np.abs(ev), floor)
        dx = -V @ ((V.T @ g) / lam)
        big = float(np.max(np.abs(dx)))
        if big > max_step:  # trust region in the (log/logit) parameters
            dx *= max_step / big
        slope = float(g @ dx)
        # below rounding of f the decrease is invisible: then accept the step that lowers |grad|
        flat = abs(slope) < 1e-11 * max(1.0, abs(f))
        t = 1.0
        for _ in range(40):
            xn = x + t * dx
            try:
                fn = fun(xn)
                gn = grad(xn) if flat else None
            except ValueError:  # left the domain (ordering of q, positivity)
                fn = math.inf
            if math.isfinite(fn):
                if flat and float(np.max(np.abs(gn))) < res:
                    break
                if not flat and fn <= f + 1e-4 * t * slope:
                    break
            t *= 0.5
        else:
            break
        gn = gn if flat else grad(xn)
        sv, yv = xn - x, gn - g
        x, f, g = xn, fn, gn
        since += 1
        if t < 0.25 or since >= 12:
            Hm, fresh, since = fd_hessian(grad, x, h), True, 0
        else:
            sy = float(sv @ yv)
            Hs = Hm @ sv
            sHs = float(sv @ Hs)
            if sy > 1e-14 * float(np.linalg.norm(sv) * np.linalg.norm(yv)) and sHs > 0:
                Hm = Hm + np.outer(yv, yv) / sy - np.outer(Hs, Hs) / sHs
                fresh = False
    res = float(np.max(np.abs(g))) if np.all(np.isfinite(g)) else math.inf
    if res <= tol:
        return MinimizeInfo(x, f, res, maxiter, np.linalg.eigvalsh(fd_hessian(grad, x, h)), Hm)
    raise ConvergenceError(f"{what}: Newton minimization did not converge", x=x, residual=res,
                           iterations=maxiter, diagnostics={"value": f, "min_hessian_eigenvalue":
                                                            float(np.nanmin(ev)) if ev.size else math.nan})
