r"""The stochastic perceptron at equilibrium in one-step RSB (the reference of Fig. 2.7 at large q*).

Magnetizations ``m in [-1, 1]^N``, ``|m|^2 = q* N``, Gibbs weight ``exp(beta L(m))`` (thesis
Eq. 2.53 as corrected in :mod:`.stochastic`).  1RSB order parameters: the overlaps ``q0 < q1``
of two magnetization replicas in different / the same state, conjugates ``q_hat0 < q_hat1``,
``A = lambda + q_hat1`` and the Parisi parameter ``mu``.  Free entropy (docs/franz_parisi.md,
"1RSB reference"; ``G_B`` is the core's box entropic term, :func:`statmech.rsb.box_entropic`)::

    phi = (A - q_hat1) q*/2 + G_B((q0, q1), (q_hat0, q_hat1), mu, A)
          + alpha E_z0 (1/mu) log E_z1 Z_x(sqrt(q0) z0 + sqrt(q1 - q0) z1)^mu,
    Z_x(D) = E_x H(-(D + sqrt(q* - q1) x)/sqrt(1 - q*))^beta

-- the pattern term is the core's nested average with the terminal ``beta log H`` at ``q_k = q*``
and Parisi parameters ``(mu, 1)`` (:class:`statmech.rsb.LogHTerminal` with ``beta``).  Its
stationary point is found with explicit *tilted tables* (:class:`_Tables`): nodes in
``(z0, z1)`` with the weights of the Parisi measure ``E_z0 [E_z1 (.) zeta^mu / E_z1 zeta^mu]`` (site)
and ``Z_x^mu`` (patterns), and per node the inner measure of ``m`` (``exp(-A m^2/2 + h m)``) or
of ``x`` (``H(u)^beta Dx``).  The equations are then the standard 1RSB fixed point, valid also
at ``mu = 1``::

    q* = E<<m^2>>,  q1 = E<<m>^2>,  q0 = E[<<m>>^2],  q_hat1 = alpha E<g^2>,  q_hat0 = alpha E[<g>^2]

(``<.>`` the inner measure, ``<<.>>`` the z1 tilt, ``g = d log Z_x/dD``).  The core functional
gives the free entropy, the complexity ``Sigma = -mu^2 d phi/d mu`` of the states and an
independent check of the stationary point (its gradient vanishes there, tested).

Which ``mu``: the equilibrium measure is described by ``mu = 1`` while the complexity of its
states is positive (the dynamical, clustered phase: the free entropy is the RS one, the states
are not); by the ``mu* < 1`` of ``d phi/d mu = 0`` once ``Sigma(mu = 1) < 0`` (condensation).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import ConvergenceError
from ..gaussian import inv_mills, log_H, piecewise_nodes, tanh_sinh_rule
from ..rsb import LogHTerminal, box_entropic, box_site, kstep_average
from ..saddle import newton
from ._quadrature import _nodes1

__all__ = []


# =============================================================================== the core functional
def ref1_functional(v, q_star, alpha, beta, res=1.0):
    """``(phi, gradient in (q0, q1, q_hat0, q_hat1, A, mu))`` of the 1RSB free entropy (core)."""
    q0, q1, qh0, qh1, A, mu = map(float, v)
    S = box_entropic([q0, q1], [qh0, qh1], [mu], A, res=res)
    E = kstep_average([q0, q1, q_star], [mu, 1.0], LogHTerminal(0.0, beta), res=res)
    phi = (A - qh1) * q_star / 2 + S.value + alpha * E.value
    g = np.array([S.dq[0] + alpha * E.dq[0], S.dq[1] + alpha * E.dq[1], S.dq_hat[0], S.dq_hat[1] - q_star / 2,
                  S.dA + q_star / 2, S.dm[0] + alpha * E.dm[0]])
    return phi, g


def rs_functional(v, q_star, alpha, beta, res=1.0):
    """``(phi, gradient in (q_m, q_hat, A))`` of the RS free entropy on the core (k = 0)."""
    qm, qh, A = map(float, v)
    S = box_entropic([qm], [qh], [], A, res=res)
    E = kstep_average([qm, q_star], [1.0], LogHTerminal(0.0, beta), res=res)
    phi = (A - qh) * q_star / 2 + S.value + alpha * E.value
    return phi, np.array([S.dq[0] + alpha * E.dq[0], S.dq_hat[0] - q_star / 2, S.dA + q_star / 2])


# =============================================================================== tilted tables
_DGRID = 0.004  # spacing of the pattern-level grid at the layer width sqrt((1 - q*)/beta) = 0.07


_DROP = 60.0  # the x-rules end where the log-integrand is 60 below its maximum (e^-60: below rounding)


def x_rule(D, q_star, q1, beta, level):
    """Nodes ``x`` and log-weights of the measure ``H(u)^beta Dx``, ``u = -(D + s_x x)/s_1``
    (``s_x = sqrt(q* - q1)``, ``s_1 = sqrt(1 - q*)``), one row per entry of ``D``.

    The log-density ``psi(x) = -x^2/2 + beta log H(u)`` is concave: its mode ``x*`` (Newton) can
    sit far out in the Gaussian tail (``x* ~ -D/s_x`` when the layer of ``H^beta`` is narrow),
    where a rule built for ``Dx`` has no nodes.  Tanh--sinh (``level``) on ``[x_lo, x*]`` and
    ``[x*, x_hi]``, the ends where ``psi`` has dropped by ``_DROP`` (found by Newton on the
    concave ``psi``): the omitted mass is below ``e^-60`` of the total.  Returns ``(x, log w)``
    with ``log w`` including ``psi`` (arrays ``(len(D), K)``)."""
    sx, s1 = math.sqrt(q_star - q1), math.sqrt(1.0 - q_star)
    D = np.asarray(D, dtype=float)
    c = sx / s1

    def psi(x):
        u = -(D[:, None] + sx * x) / s1 if x.ndim == 2 else -(D + sx * x) / s1
        return -0.5 * x * x + beta * log_H(u), u

    def d12(x, u):
        im = inv_mills(u)
        return -x + beta * c * im, -1.0 - beta * c * c * im * (im - u)

    x = np.zeros(D.size)
    for _ in range(100):  # Newton on psi' (concave psi: psi'' <= -1), from x = 0
        u = -(D + sx * x) / s1
        g, h = d12(x, u)
        step = -g / h
        x = x + step
        if np.max(np.abs(step)) < 1e-13 * (1 + np.max(np.abs(x))):
            break
    xm = x
    pm = psi(xm)[0]
    ends = []
    for side in (-1.0, 1.0):
        # Newton for psi(x) = pm - _DROP from the Gaussian estimate (psi is concave: converges)
        u = -(D + sx * xm) / s1
        h2 = d12(xm, u)[1]
        x = xm + side * math.sqrt(2 * _DROP) / np.sqrt(-h2)
        for _ in range(100):
            p_, u = psi(x)
            g = d12(x, u)[0]
            step = -(p_ - (pm - _DROP)) / g
            x = x + step
            if np.max(np.abs(step)) < 1e-10 * (1 + np.max(np.abs(x))):
                break
        ends.append(x)
    t, tc, w = tanh_sinh_rule(level)
    lo, hi = ends
    L1, L2 = (xm - lo)[:, None], (hi - xm)[:, None]
    x1 = np.where(t < 0.5, lo[:, None] + L1 * t, xm[:, None] - L1 * tc)
    x2 = np.where(t < 0.5, xm[:, None] + L2 * t, hi[:, None] - L2 * tc)
    xs = np.concatenate((x1, x2), axis=1)
    lw = np.concatenate((np.log(L1 * w), np.log(L2 * w)), axis=1) - 0.5 * math.log(2 * math.pi) + psi(xs)[0]
    return xs, lw


def pattern_moments(D, q_star, q1, beta, level):
    """``(log Z_x, d/dD, d^2/dD^2)`` of ``Z_x(D) = E_x H(-(D + sqrt(q* - q1) x)/sqrt(1 - q*))^beta``
    at every ``D`` (the rule of :func:`x_rule`)."""
    sx, s1 = math.sqrt(q_star - q1), math.sqrt(1.0 - q_star)
    out = np.empty((3, D.size))
    for a in range(0, D.size, 2048):
        d = D[a:a + 2048]
        xs, lw = x_rule(d, q_star, q1, beta, level)
        u = -(d[:, None] + sx * xs) / s1
        c = np.max(lw, axis=1, keepdims=True)
        e = np.exp(lw - c)
        Z = e.sum(axis=1)
        im = inv_mills(u)
        G = beta * im / s1
        GD = -beta * im * (im - u) / s1 ** 2
        g1 = (e * G).sum(axis=1) / Z
        out[0, a:a + 2048] = c[:, 0] + np.log(Z)
        out[1, a:a + 2048] = g1
        out[2, a:a + 2048] = (e * (G * G + GD)).sum(axis=1) / Z - g1 ** 2
    return out


def _hermite5(grid, h, F, x):
    """Value and derivative at ``x`` of the piecewise quintic Hermite interpolant of
    ``(f, f', f'') = F`` on the uniform ``grid`` of spacing ``h``."""
    j = np.clip(((x - grid[0]) / h).astype(np.int64), 0, grid.size - 2)
    t = (x - grid[j]) / h
    f0, f1 = F[0, j], F[0, j + 1]
    d0, d1 = F[1, j] * h, F[1, j + 1] * h
    s0, s1 = F[2, j] * h * h, F[2, j + 1] * h * h
    t2, t3 = t * t, t * t * t
    h00 = 1 - 10 * t3 + 15 * t3 * t - 6 * t3 * t2
    h10 = t - 6 * t3 + 8 * t3 * t - 3 * t3 * t2
    h20 = 0.5 * (t2 - 3 * t3 + 3 * t3 * t - t3 * t2)
    h01 = 10 * t3 - 15 * t3 * t + 6 * t3 * t2
    h11 = -4 * t3 + 7 * t3 * t - 3 * t3 * t2
    h21 = 0.5 * (t3 - 2 * t3 * t + t3 * t2)
    val = h00 * f0 + h10 * d0 + h20 * s0 + h01 * f1 + h11 * d1 + h21 * s1
    dh00 = -30 * t2 + 60 * t3 - 30 * t3 * t
    dh10 = 1 - 18 * t2 + 32 * t3 - 15 * t3 * t
    dh20 = 0.5 * (2 * t - 9 * t2 + 12 * t3 - 5 * t3 * t)
    dh01 = 30 * t2 - 60 * t3 + 30 * t3 * t
    dh11 = -12 * t2 + 28 * t3 - 15 * t3 * t
    dh21 = 0.5 * (3 * t2 - 8 * t3 + 5 * t3 * t)
    der = (dh00 * f0 + dh10 * d0 + dh20 * s0 + dh01 * f1 + dh11 * d1 + dh21 * s1) / h
    return val, der
@dataclass(frozen=True)
class _Quad1:
    """Levels of the piecewise tanh--sinh rules of the tables (z0, z1, inner m / x)."""
    z0: int = 3
    z1: int = 3
    inner: int = 3

    def finer(self):
        return _Quad1(self.z0 + 1, self.z1 + 1, self.inner + 1)


def _pieces(center, width, shift):
    """Breakpoints of a rule for a Gaussian variable whose integrand has a layer of ``width`` at
    ``center`` and, tilted, bumps of unit width at ``center +- shift``: the layer's edges
    ``center +- 3 width`` and ``center``, and ``center +- (shift + 4)`` so that the bumps lie on
    finite pieces (the probability-scale tails of :func:`statmech.gaussian.piecewise_nodes`
    start beyond them)."""
    w = 3.0 * min(width, 0.5)
    out = max(shift, 0.0) + 4.0
    b = np.array(sorted({center - out, center - w, center, center + w, center + out}))
    keep = np.concatenate(([True], np.diff(b) > 1e-9))
    return b[keep]


def _pad(rows):
    """Stack ragged (nodes, weights) rows into zero-weight padded arrays."""
    k = max(len(r[0]) for r in rows)
    Z = np.zeros((len(rows), k))
    W = np.zeros((len(rows), k))
    for i, (z, w) in enumerate(rows):
        Z[i, :len(z)] = z
        Z[i, len(z):] = z[-1]
        W[i, :len(w)] = w
    return Z, W


def _logsumexp_rows(L, W):
    c = np.max(np.where(W > 0, L, -np.inf), axis=1, keepdims=True)
    return c[:, 0] + np.log(np.sum(W * np.exp(L - c), axis=1))


class _Tables:
    """The 1RSB reference as explicit quadrature tables (docs/franz_parisi.md, "1RSB reference").

    Site: ``z0`` rows (weights ``wz0``), per ``z0`` a ``z1`` rule tilted by ``zeta(A, h)^mu``
    (``PS1[i, j]``, normalized per row), the field ``hS[i, j] = sqrt(q_hat0) z0 + sqrt(q_hat1 -
    q_hat0) z1`` and the site moments there.  Patterns: the same with ``Z_x(D)^mu``,
    ``D = sqrt(q0) z0 + sqrt(q1 - q0) z1``, ``log Z_x`` and ``g = d log Z_x/dD`` per node.
    """

    def __init__(self, q_star, beta, q0, q1, qh0, qh1, A, mu, quad=_Quad1()):
        self.q_star, self.beta, self.mu, self.quad = q_star, beta, mu, quad
        self.q0, self.q1, self.qh0, self.qh1, self.A = q0, q1, qh0, qh1, A
        # ---- site side
        dqh = qh1 - qh0
        self.zS0, self.wS0 = piecewise_nodes(_pieces(0.0, 1.0 / math.sqrt(qh0), 0.0), quad.z0)
        rows = []
        s = math.sqrt(dqh)
        for z0 in self.zS0:
            rows.append(piecewise_nodes(_pieces(-math.sqrt(qh0) * z0 / s, 1.0 / s, mu * s), quad.z1))
        self.zS1, w1 = _pad(rows)
        self.hS = math.sqrt(qh0) * self.zS0[:, None] + s * self.zS1
        lz, mS, m2S = box_site(self.hS, A)
        self.logzeta, self.mS, self.m2S = lz, mS, m2S
        lt = _logsumexp_rows(mu * lz, w1)
        self.PS1 = w1 * np.exp(mu * lz - lt[:, None])
        self.log_site_level = lt / mu            # (1/mu) log E_z1 zeta^mu per z0
        # ---- pattern side
        sq = math.sqrt(q1 - q0)
        sx = math.sqrt(q_star - q1)
        s1 = math.sqrt(1.0 - q_star)
        self.zE0, self.wE0 = piecewise_nodes(_pieces(0.0, math.sqrt((1 - q_star) / beta + q_star - q0)
                                                     / math.sqrt(q0), 0.0), quad.z0)
        rows = []
        width = math.sqrt((1 - q_star) / beta + q_star - q1) / sq
        for z0 in self.zE0:
            rows.append(piecewise_nodes(_pieces(-math.sqrt(q0) * z0 / sq, width, 0.0), quad.z1))
        self.zE1, w1 = _pad(rows)
        D = math.sqrt(q0) * self.zE0[:, None] + sq * self.zE1
        self.DE = D
        lZ, g = self._pattern_level(D.ravel(), sx, s1)
        lZ, g = lZ.reshape(D.shape), g.reshape(D.shape)
        self.logZx, self.gE = lZ, g
        lt = _logsumexp_rows(mu * lZ, w1)
        self.PE1 = w1 * np.exp(mu * lZ - lt[:, None])
        self.log_pattern_level = lt / mu

    def _pattern_level(self, D, sx, s1):
        """``log Z_x(D)`` and ``d log Z_x/dD`` at the nodes ``D``: tabulated with the second
        derivative on a uniform grid (spacing ``_DGRID``) and interpolated by the quintic Hermite
        polynomial of each cell (error ``~h^6 f^(6)/46080``, below 1e-11 for the layer width
        ``sqrt((1 - q*)/beta)``; tested against the direct sums)."""
        h = _DGRID * min(1.0, math.sqrt((1 - self.q_star) / self.beta) / 0.07)
        lo, hi = float(D.min()) - 2 * h, float(D.max()) + 2 * h
        grid = lo + h * np.arange(int(math.ceil((hi - lo) / h)) + 1)
        F = pattern_moments(grid, self.q_star, self.q1, self.beta, self.quad.inner + 1)
        return _hermite5(grid, h, F, D)

    # ---- the 1RSB fixed point
    def equations(self, alpha):
        """Residuals ``(E<<m>>^2 - q0, E<<m>^2> - q1, E<<m^2>> - q*, alpha E<g>^2 - q_hat0,
        alpha E<g^2> - q_hat1)``."""
        mt = np.sum(self.PS1 * self.mS, axis=1)
        r_q0 = self.wS0 @ mt ** 2 - self.q0
        r_q1 = self.wS0 @ np.sum(self.PS1 * self.mS ** 2, axis=1) - self.q1
        r_qs = self.wS0 @ np.sum(self.PS1 * self.m2S, axis=1) - self.q_star
        gt = np.sum(self.PE1 * self.gE, axis=1)
        r_h0 = alpha * (self.wE0 @ gt ** 2) - self.qh0
        r_h1 = alpha * (self.wE0 @ np.sum(self.PE1 * self.gE ** 2, axis=1)) - self.qh1
        return np.array([r_q0, r_q1, r_qs, r_h0, r_h1])

    def free_entropy(self, alpha):
        """``phi`` from the tables (independent of the core's lattice; tested against it)."""
        lin = 0.5 * (self.mu * self.qh0 * self.q0 + (1 - self.mu) * self.qh1 * self.q1)
        return ((self.A - self.qh1) * self.q_star / 2 + lin + self.wS0 @ self.log_site_level
                + alpha * (self.wE0 @ self.log_pattern_level))


# =============================================================================== the reference solver
@dataclass(frozen=True)
class _Ref1:
    """A 1RSB (or, collapsed, RS) stationary point of the stochastic reference."""
    alpha: float
    q_star: float
    beta: float
    q0: float
    q1: float
    q_hat0: float
    q_hat1: float
    A: float
    mu: float
    free_entropy: float
    complexity: float
    residual: float
    iterations: int
    phase: str          # "rs" (no 1RSB solution), "dynamical" (mu = 1, Sigma > 0), "static" (mu < 1)

    @property
    def rs_like(self):
        return self.phase == "rs"

    def order_params(self):
        return {"q0": self.q0, "q1": self.q1, "q_hat0": self.q_hat0, "q_hat1": self.q_hat1, "A": self.A,
                "mu": self.mu}


def _newton_fd(F, v, in_domain, tol, maxiter=25, what="", point=None):
    """Newton with a forward-difference Jacobian (relative step 1e-6) and backtracking; the
    equations are accurate to ~1e-10 (tables), so the Jacobian is good to ~1e-4 relative."""
    v = np.asarray(v, dtype=float).copy()
    f = F(v)
    it = 0
    for it in range(1, maxiter + 1):
        if np.max(np.abs(f)) <= tol:
            return v, float(np.max(np.abs(f))), it - 1
        J = np.empty((v.size, v.size))
        for j in range(v.size):
            h = 1e-6 * max(1.0, abs(v[j]))
            e = np.zeros(v.size)
            e[j] = h
            J[:, j] = (F(v + e) - f) / h
        try:
            dx = -np.linalg.solve(J, f)
        except np.linalg.LinAlgError:
            break
        lam = 1.0
        while lam > 1e-4:
            vn = v + lam * dx
            if in_domain(vn):
                fn = F(vn)
                if np.max(np.abs(fn)) < (1 - 1e-4 * lam) * np.max(np.abs(f)):
                    break
            lam *= 0.5
        else:
            break
        v, f = vn, fn
    if np.max(np.abs(f)) <= tol:
        return v, float(np.max(np.abs(f))), it
    raise ConvergenceError(f"{what}: Newton did not converge", x=v, residual=float(np.max(np.abs(f))), iterations=it,
                           diagnostics=point or {})


_REF1_CACHE: dict = {}


def _solve_ref1(alpha, q_star, beta, quad=_Quad1()):
    """The equilibrium 1RSB description of the stochastic reference (see the module docstring).

    1. the RS point (``q0 = q_m``, ``q_hat0 = q_hat``, ``lambda = A - q_hat``, :mod:`.stochastic`);
    2. at ``mu = 1`` the outer equations are the RS ones and ``A = lambda + q_hat1`` (the z1 step
       with ``mu = 1`` integrates out exactly: docs), so only ``(q1, q_hat1)`` are unknown: damped
       fixed-point steps from ``q1`` close to ``q*``, then Newton; a solution that collapses to
       ``q1 = q0`` means there is no 1RSB solution ("rs");
    3. the complexity ``Sigma(1) = -d phi/d mu`` (core, exact adjoint); ``Sigma(1) >= 0``: the
       dynamical phase, ``mu = 1`` ("dynamical"); else the static ``mu* < 1`` (Newton on the five
       table equations and ``d phi/d mu = 0``, "static").
    """
    from .stochastic import _stochastic_reference
    key = (alpha, q_star, beta, quad)
    if key in _REF1_CACHE:
        return _REF1_CACHE[key]
    who = "stochastic_reference(ansatz='1rsb')"
    point = {"alpha": alpha, "q_star": q_star, "beta": beta}
    r = _stochastic_reference(alpha, q_star, beta)
    q0, qh0, lam = r.q_m, r.q_hat, r.A - r.q_hat

    def tables(q1, qh1, A=None, mu=1.0, q0_=q0, qh0_=qh0):
        return _Tables(q_star, beta, q0_, q1, qh0_, qh1, lam + qh1 if A is None else A, mu, quad)

    def eq2(v):
        e = tables(*v).equations(alpha)
        return np.array([e[1], e[4]])

    def iterate(q1, qh1, n, stop):
        """Damped fixed-point steps; returns (q1, q_hat1, collapsed)."""
        for _ in range(n):
            e = tables(q1, qh1).equations(alpha)
            q1n, qh1n = q1 + e[1], qh1 + e[4]
            q1, qh1 = 0.5 * (q1 + min(q1n, 0.5 * (q1 + q_star))), 0.5 * (qh1 + max(qh1n, qh0 * (1 + 1e-9)))
            if q1 - q0 < 1e-4 * (q_star - q0):
                return q1, qh1, True
            if stop and max(abs(e[1]), abs(e[4]) / qh1) < 1e-3:
                break
        return q1, qh1, False

    # fixed-point steps from a broken start (the dynamical solution, if any, has q1 close to q*)
    q1, qh1, collapsed = iterate(q0 + 0.95 * (q_star - q0), 2.0 * qh0, 40, True)
    if not collapsed:
        try:
            (q1, qh1), res, its = _newton_fd(eq2, [q1, qh1], lambda v: q0 < v[0] < q_star and v[1] > qh0, 1e-11,
                                             what=who, point=point)
            collapsed = q1 - q0 < 1e-6
        except ConvergenceError as e:
            # Newton may only fail towards the collapse q1 -> q0 (then there is no 1RSB solution); a
            # failure with the breaking still large is an error, not a verdict
            # near the fold the fixed-point drifts slowly to q1 = q0: follow it further
            q1, qh1, collapsed = iterate(q1, qh1, 300, False)
            if not collapsed:
                raise
    if collapsed:
        out = _Ref1(alpha, q_star, beta, q0, q0, qh0, qh0, r.A, 1.0, r.free_entropy, 0.0, r.residual, r.iterations, "rs")
        _REF1_CACHE[key] = out
        return out
    A = lam + qh1
    v6 = [q0, q1, qh0, qh1, A, 1.0]
    phi, g = ref1_functional(v6, q_star, alpha, beta)
    sigma = -g[5]
    phase, mu = "dynamical", 1.0
    if sigma < 0.0:  # condensation: mu* < 1
        phase = "static"

        def eq6(v):
            T = _Tables(q_star, beta, *v, quad=quad)
            return np.concatenate((T.equations(alpha), [ref1_functional(v, q_star, alpha, beta)[1][5]]))

        v, res, its2 = _newton_fd(eq6, [q0, q1, qh0, qh1, A, 0.99],
                                  lambda v: 0 < v[0] < v[1] < q_star and 0 < v[2] < v[3] and 0 < v[5] <= 1.0,
                                  1e-10, what=who, point=point)
        q0, q1, qh0, qh1, A, mu = map(float, v)
        its += its2
        phi, g = ref1_functional(v, q_star, alpha, beta)
        sigma = -mu * mu * g[5]
    out = _Ref1(alpha, q_star, beta, q0, q1, qh0, qh1, A, mu, float(phi), float(sigma), float(res), int(its), phase)
    _REF1_CACHE[key] = out
    return out
