r"""Soft committee machines (SCM) learning from an SCM teacher at high temperature.

Model (Oostwal, Straat & Biehl 2019, the seed ``003``; Biehl, Schloesser & Ahr 1998):
student output :math:`\sigma = K^{-1/2}\sum_{i=1}^K g(x_i)`, teacher
:math:`\tau = M^{-1/2}\sum_{m=1}^M g(x^*_m)`, local fields :math:`x_i = w_i\cdot\xi/\sqrt N`,
student norms :math:`Q_{ii}=1`, orthonormal teacher :math:`T = I`.  Training at high
temperature (:math:`\beta\to 0`, :math:`\alpha = \beta P/(KN)` fixed) gives

.. math::  \beta f = \alpha K\,\epsilon_g - s,\qquad s = \tfrac12\ln\det\mathcal C

(seed Eqs. 16-20).  With :math:`m(\rho) = E[g(u)g(v)]` for unit-variance u, v of
correlation :math:`\rho` and site-symmetric overlaps :math:`R_{ii}=R`, :math:`R_{i\neq j}=S`,
:math:`Q_{i\neq j}=C`:

.. math::  \epsilon_g = m(1) - m(R) + \tfrac{K-1}{2}\,[m(C) + m(0) - 2m(S)]

(derived from seed Eq. 25 with the correct :math:`1/\sqrt{KM}` cross term; for erf this
is seed Eq. 11 *without* its spurious overall 1/K, for ReLU it is seed Eq. 12) and

.. math::  s = \tfrac12\ln[1+(K-1)C-(R+(K-1)S)^2] + \tfrac{K-1}2\ln[1-C-(R-S)^2]

(seed Eq. 19, checked against ``ln det``).  Pair moments: erf
:math:`m=\tfrac2\pi\arcsin(\rho/2)`, ReLU :math:`m=\rho/4+(\sqrt{1-\rho^2}+\rho\arcsin\rho)/(2\pi)`
(seed Eq. 27), linear :math:`m=\rho`; any other activation g(x) through a Chebyshev
interpolant of :math:`m(\rho)` in :math:`\theta=\arcsin\rho` computed by 2-D piecewise tanh-sinh quadrature (or
from ``g.pair_moment``/``g.mean`` when the object provides them).

K -> infinity (``K=math.inf``): with :math:`S=\sigma/K`, :math:`C=\gamma/K` the free energy per
hidden unit is :math:`\beta f/K \to \alpha[m(1)-m(R)+\tfrac12 m'(0)(\gamma-2\sigma)] - \tfrac12\ln(1-R^2)`
on the domain :math:`(R+\sigma)^2\le 1+\gamma`; its minimum over the collective overlaps
lies on the boundary :math:`\sigma = 1-R`, :math:`\gamma=0` (``R+(K-1)S -> 1``,
``1+(K-1)C -> 1``), leaving the one-dimensional
:math:`\varphi(R) = \alpha[m(1)-m(R)-m'(0)(1-R)] - \tfrac12\ln(1-R^2)`.  This gives
erf :math:`\alpha_s=60.9926\ldots`, :math:`\alpha_c=69.0875\ldots` and ReLU :math:`\alpha_c=2\pi`.

Public API
----------
``generalization_error(R, Q, T, activation)``, ``entropy(R, Q, T)``,
``free_energy(alpha, K, R, S, C, activation, derivatives=False)``,
``full_hessian(alpha, K, R, S, C, activation)`` (the K^2 + K(K-1)/2 individual overlaps),
``equilibria(alpha, K, activation)``, ``learning_curve(K, activation, alphas)``,
``transitions(K or [K...], activation, method="auto")`` (through the continuation engine
:mod:`statmech.continuation`, lines continued in K for sequences; ``method="direct"`` uses
the saddle core only), ``continuation_problem(K, activation)``,
``infinite_K_branch(R, activation)``, ``pair_moment(rho, activation)``,
``alpha_of_R_single_unit(R, activation)`` and ``single_unit(alpha, activation)``
(K = 1, seed Eqs. 29-33).  Simulation: :func:`statmech.simulate.gibbs_scm`.
See ``docs/scm.md`` for the derivations, corrections and validation numbers.
"""
from __future__ import annotations

import math
import numbers
import weakref
from dataclasses import dataclass

import numpy as np

from .errors import ConvergenceError, check_choice, check_range
from .saddle import SaddlePoint, root_scalar
from .symbolic import Code, Scalar, kernels

__all__ = ["ACTIVATIONS", "Activation", "activation_info", "pair_moment", "generalization_error", "continuation_problem",
           "entropy", "free_energy", "full_hessian", "equilibria", "learning_curve", "Branch",
           "LearningCurve", "transitions", "Transitions", "alpha_of_R_single_unit", "single_unit",
           "infinite_K_branch"]

ACTIVATIONS = ("erf", "relu", "linear")
_CODES = {"erf": 0, "relu": 1, "linear": 2}
_CHEB_DEG = 96


# ============================================================================ equations (sympy)
_SOLVER_SRC = r'''
@numba.njit(cache=True)
def _cheb(c, x):
    b1 = 0.0
    b2 = 0.0
    for k in range(c.shape[0] - 1, 0, -1):
        b0 = 2.0 * x * b1 - b2 + c[k]
        b2 = b1
        b1 = b0
    return x * b1 - b2 + c[0]


@numba.njit(cache=True)
def moments(code, rho, cc):
    """(m, m', m'') of the pair moment at correlation rho (|rho| < 1)."""
    if code == 0:
        return pm_erf(rho)
    elif code == 1:
        return pm_relu(rho)
    elif code == 2:
        return pm_linear(rho)
    # Chebyshev series in x = asin(rho) / (pi/2): the sqrt(1 - rho^2) singularities of kinked
    # activations at rho = +-1 become analytic in theta = asin(rho)
    c = math.sqrt(1.0 - rho * rho)
    x = math.asin(rho) / (0.5 * math.pi)
    m = _cheb(cc[0], x)
    mt = _cheb(cc[1], x) / (0.5 * math.pi)
    mtt = _cheb(cc[2], x) / (0.25 * math.pi * math.pi)
    return m, mt / c, (mtt + mt * rho / c) / (c * c)


@numba.njit(cache=True)
def in_domain(K, R, S, C):
    if not (abs(R) < 1.0 and abs(S) < 1.0 and abs(C) < 1.0):
        return False
    a1 = 1.0 + (K - 1.0) * C - (R + (K - 1.0) * S) ** 2
    a2 = 1.0 - C - (R - S) ** 2
    return a1 > 0.0 and a2 > 0.0


@numba.njit(cache=True)
def fgh(code, cc, m0, m1, alpha, K, R, S, C):
    mR, dR, d2R = moments(code, R, cc)
    mS, dS, d2S = moments(code, S, cc)
    mC, dC, d2C = moments(code, C, cc)
    return fe(alpha, K, R, S, C, m0, m1, mR, dR, d2R, mS, dS, d2S, mC, dC, d2C)


@numba.njit(cache=True)
def _grad_hess(code, cc, m0, m1, alpha, K, x, unspec):
    o = fgh(code, cc, m0, m1, alpha, K, x[0], x[0] if unspec else x[1], x[2])
    g = np.empty(3)
    Hm = np.empty((3, 3))
    g[0] = o[1]; g[1] = o[2]; g[2] = o[3]
    Hm[0, 0] = o[4]; Hm[0, 1] = o[5]; Hm[0, 2] = o[6]
    Hm[1, 1] = o[7]; Hm[1, 2] = o[8]; Hm[2, 2] = o[9]
    Hm[1, 0] = Hm[0, 1]; Hm[2, 0] = Hm[0, 2]; Hm[2, 1] = Hm[1, 2]
    return o, g, Hm


@numba.njit(cache=True)
def _reduced(g, Hm, unspec):
    """Gradient/Hessian in the free coordinates: (R, S, C) or, on R = S, (R, C)."""
    if unspec:
        gr = np.array([g[0] + g[1], g[2]])
        Hr = np.array([[Hm[0, 0] + 2.0 * Hm[0, 1] + Hm[1, 1], Hm[0, 2] + Hm[1, 2]],
                       [Hm[0, 2] + Hm[1, 2], Hm[2, 2]]])
        return gr, Hr
    return g.copy(), Hm.copy()


@numba.njit(cache=True)
def newton(code, cc, m0, m1, alpha, K, x0, unspec, tol, maxit):
    """Newton on grad(beta f) = 0 with backtracking inside the domain.

    Returns (x, converged, iterations, residual).  unspec: restrict to R = S.
    """
    x = x0.copy()
    if unspec:
        x[1] = x[0]
    if not in_domain(K, x[0], x[1], x[2]):
        return x, False, 0, np.inf
    scale = 1.0 + abs(alpha) * K
    o, g, Hm = _grad_hess(code, cc, m0, m1, alpha, K, x, unspec)
    gr, Hr = _reduced(g, Hm, unspec)
    gn = np.max(np.abs(gr))
    for it in range(maxit):
        if not np.isfinite(gn):
            return x, False, it, gn
        try:
            dx = np.linalg.solve(Hr, -gr)
        except Exception:
            return x, False, it, gn
        if unspec:
            d = np.array([dx[0], dx[0], dx[1]])
        else:
            d = dx
        if np.max(np.abs(d)) <= 1e-13 * (1.0 + np.max(np.abs(x))) and gn <= 1e-6 * scale:
            # the Newton correction is at rounding level: x is exact to working precision
            return x + d, True, it + 1, gn
        lam = 1.0
        ok = False
        for bt in range(60):
            xn = x + lam * d
            if in_domain(K, xn[0], xn[1], xn[2]):
                o2, g2, H2 = _grad_hess(code, cc, m0, m1, alpha, K, xn, unspec)
                gr2, Hr2 = _reduced(g2, H2, unspec)
                gn2 = np.max(np.abs(gr2))
                if np.isfinite(gn2) and (gn2 <= (1.0 - 1e-4 * lam) * gn or gn2 <= tol * scale):
                    ok = True
                    break
            lam *= 0.5
        if not ok:
            return x, gn <= tol * scale, it, gn
        step = np.max(np.abs(xn - x))
        x = xn
        gr = gr2
        Hr = Hr2
        gn = gn2
        if gn <= tol * scale and step <= 1e-9:
            return x, True, it + 1, gn
    return x, gn <= tol * scale, maxit, gn


@numba.njit(cache=True)
def record(code, cc, m0, m1, alpha, K, x, row):
    """Fill row = [R, S, C, f, eps, s, ev0, ev1, ev2] at x (site-symmetric Hessian eigenvalues)."""
    o, g, Hm = _grad_hess(code, cc, m0, m1, alpha, K, x, False)
    ev = np.linalg.eigvalsh(Hm)
    row[0] = x[0]; row[1] = x[1]; row[2] = x[2]
    row[3] = o[0]; row[4] = o[10]; row[5] = o[11]
    row[6] = ev[0]; row[7] = ev[1]; row[8] = ev[2]


@numba.njit(cache=True)
def trace(code, cc, m0, m1, K, alphas, x0, unspec, tol, maxit, out):
    """Warm-started (secant predictor) Newton along alphas; out[:, :12] rows
    [R, S, C, f, eps, s, ev0, ev1, ev2, converged, iterations, residual].
    Stops (NaN rows) after the first failure.  Returns the number of converged points."""
    n = alphas.shape[0]
    x = x0.copy()
    xprev = x0.copy()
    have_prev = False
    nok = 0
    for i in range(n):
        if i > 0 and nok < i:
            for j in range(out.shape[1]):
                out[i, j] = np.nan
            out[i, 9] = 0.0
            continue
        xs = x.copy()
        if have_prev and i >= 2:
            da = alphas[i - 1] - alphas[i - 2]
            if da != 0.0:
                xp = x + (x - xprev) * (alphas[i] - alphas[i - 1]) / da
                if in_domain(K, xp[0], xp[1], xp[2]):
                    xs = xp
        xn, conv, its, res = newton(code, cc, m0, m1, alphas[i], K, xs, unspec, tol, maxit)
        if not conv and (xs[0] != x[0] or xs[1] != x[1] or xs[2] != x[2]):
            xn, conv, its, res = newton(code, cc, m0, m1, alphas[i], K, x, unspec, tol, maxit)
        if not conv:
            for j in range(out.shape[1]):
                out[i, j] = np.nan
            out[i, 9] = 0.0
            continue
        record(code, cc, m0, m1, alphas[i], K, xn, out[i])
        out[i, 9] = 1.0
        out[i, 10] = its
        out[i, 11] = res
        xprev = x
        x = xn
        have_prev = True
        nok += 1
    return nok


@numba.njit(cache=True)
def multistart(code, cc, m0, m1, alpha, K, starts, tol, maxit, out):
    """Newton from every start (rows of starts); out rows as in trace."""
    for i in range(starts.shape[0]):
        xn, conv, its, res = newton(code, cc, m0, m1, alpha, K, starts[i], False, tol, maxit)
        if conv:
            record(code, cc, m0, m1, alpha, K, xn, out[i])
            out[i, 9] = 1.0
            out[i, 10] = its
            out[i, 11] = res
        else:
            for j in range(out.shape[1]):
                out[i, j] = np.nan
            out[i, 9] = 0.0
'''


@kernels
def _kern():
    """SCM equations, written once.

    pm2_<act>(a, b, c): E[g(x) g(y)] for a centred Gaussian pair with variances a, b and
    covariance c (erf: Saad & Solla 1995 / seed Eq. 26; ReLU: seed Eq. 27).
    pm_<act>(rho): (m, m', m'') at unit variances; pmv_<act>: m only.
    fe: site-symmetric beta f = alpha K eps_g - s (seed Eqs. 19-20, eps_g corrected),
    its gradient and Hessian in (R, S, C), eps_g and s; the pair moments enter as
    arguments so that any activation uses the same expression.
    finf: the K -> infinity free energy per hidden unit in (R, sigma = K S, gamma = K C);
    finf_red: the same on the optimal manifold sigma = 1 - R, gamma = 0.
    """
    import sympy as sp
    a, b, c, rho = sp.symbols("a b c rho", real=True)
    pm2 = {
        "erf": 2 / sp.pi * sp.asin(c / sp.sqrt((1 + a) * (1 + b))),
        "relu": c / 4 + (sp.sqrt(a * b - c ** 2) + c * sp.asin(c / sp.sqrt(a * b))) / (2 * sp.pi),
        "linear": c,
    }
    specs = {}
    for name, e in pm2.items():
        specs[f"pm2_{name}"] = Scalar((a, b, c), e)
        m = sp.simplify(e.xreplace({a: sp.Integer(1), b: sp.Integer(1)}).xreplace({c: rho}))
        specs[f"pm_{name}"] = Scalar((rho,), (m, sp.diff(m, rho), sp.diff(m, rho, 2)))
        specs[f"pmv_{name}"] = Scalar((rho,), m)

    alpha, K, R, S, C = sp.symbols("alpha K R S C", real=True)
    m = sp.Function("m")
    m0, m1 = sp.symbols("m0 m1", real=True)
    eps = m(1) - m(R) + (K - 1) / 2 * (m(C) + m(0) - 2 * m(S))
    s = sp.log(1 + (K - 1) * C - (R + (K - 1) * S) ** 2) / 2 + (K - 1) / 2 * sp.log(1 - C - (R - S) ** 2)
    f = alpha * K * eps - s
    X = (R, S, C)
    names = {}
    for v, tag in ((R, "R"), (S, "S"), (C, "C")):
        names[v] = sp.symbols(f"m{tag} d{tag} d2{tag}", real=True)

    def sub(e):
        rep = {m(0): m0, m(1): m1}
        for v, (mv, dv, d2v) in names.items():
            rep[sp.Derivative(m(v), (v, 2))] = d2v
            rep[sp.Derivative(m(v), v)] = dv
            rep[m(v)] = mv
        e = e.doit()
        for k in sorted(rep, key=lambda t: -sp.count_ops(t)):  # derivatives first
            e = e.subs(k, rep[k])
        return e

    grad = [sp.diff(f, x) for x in X]
    hess = [sp.diff(f, X[i], X[j]) for i in range(3) for j in range(i, 3)]
    margs = tuple(x for v in X for x in names[v])
    specs["fe"] = Scalar((alpha, K, R, S, C, m0, m1) + margs,
                         tuple(sub(e) for e in [f] + grad + hess + [eps, s]))

    # K -> infinity: S = sig/K, C = gam/K; (K-1)(m(C)+m(0)-2m(S)) -> m'(0)(gam - 2 sig)
    sig, gam, dm0 = sp.symbols("sigma gamma dm0", real=True)
    eps_inf = m(1) - m(R) + dm0 * (gam - 2 * sig) / 2
    s_inf = sp.log(1 - R ** 2) / 2
    finf = alpha * eps_inf - s_inf
    Y = (R, sig, gam)
    ginf = [sp.diff(finf, y) for y in Y]
    hinf = [sp.diff(finf, Y[i], Y[j]) for i in range(3) for j in range(i, 3)]
    specs["finf"] = Scalar((alpha, R, sig, gam, m1, dm0) + names[R],
                           tuple(sub(e) for e in [finf] + ginf + hinf + [eps_inf, s_inf]))
    fred = finf.subs({sig: 1 - R, gam: 0})
    specs["finf_red"] = Scalar((alpha, R, m1, dm0) + names[R],
                               tuple(sub(e) for e in (fred, sp.diff(fred, R), sp.diff(fred, R, 2),
                                                       eps_inf.subs({sig: 1 - R, gam: 0}), s_inf)))
    specs["solver"] = Code(_SOLVER_SRC)
    return specs


# ============================================================================ activations
@dataclass(frozen=True)
class Activation:
    """Resolved activation: pair moment m(rho) = E[g(u) g(v)] at unit variances.

    ``code`` 0/1/2 = erf/relu/linear closed forms, 3 = Chebyshev interpolant ``cc``
    (rows: coefficients of m, m', m'') of a generic g.  ``m0 = m(0) = E[g]^2``,
    ``m1 = m(1) = E[g^2]``, ``dm0 = m'(0) = E[g']^2``.
    """
    name: str
    code: int
    cc: np.ndarray
    m0: float
    m1: float
    dm0: float
    func: object = None

    def m(self, rho):
        """m(rho) (vectorized)."""
        rho = np.asarray(rho, dtype=float)
        if self.code < 3:
            return getattr(_kern, f"pmv_{self.name}_v")(rho)
        return np.polynomial.chebyshev.chebval(np.arcsin(np.clip(rho, -1.0, 1.0)) / (0.5 * np.pi), self.cc[0])


_GENERIC_CACHE: dict = {}


def _pair_expect(g, sa, sb, r, level=3):
    """E[g(sa x) g(sb (r x + sqrt(1 - r^2) z))] for independent standard x, z.

    Piecewise tanh--sinh nodes (statmech.gaussian.piecewise_nodes) with the breakpoints where
    the arguments of g vanish (x = 0 and z = -r x / sqrt(1 - r^2)): exact to ~1e-12 for
    smooth g and for g with kinks at 0 (ReLU, leaky ReLU, |x|, ...); no cut-off.
    """
    from .gaussian import piecewise_nodes
    xs, wx = piecewise_nodes([0.0], level)
    keep = wx > 0
    xs, wx = xs[keep], wx[keep]
    gx = np.asarray(g(sa * xs), dtype=float)
    s = math.sqrt(max(0.0, 1.0 - r * r))
    if s == 0.0:
        return float(np.dot(wx, gx * np.asarray(g(sb * r * xs), dtype=float)))
    tot = 0.0
    for x, w, gxx in zip(xs, wx, gx):
        if gxx == 0.0:
            continue
        zs, wz = piecewise_nodes([-r * x / s], level)
        tot += w * gxx * float(np.dot(wz, np.asarray(g(sb * (r * x + s * zs)), dtype=float)))
    return tot


def _generic_pair_moment_grid(g, rhos, level=3):
    """E[g(u) g(v)] at correlations rhos (unit variances), see :func:`_pair_expect`."""
    z = np.linspace(-3, 3, 7)
    gx = np.asarray(g(z), dtype=float)
    if gx.shape != z.shape or not np.all(np.isfinite(gx)):
        raise ValueError("activation must be a vectorized callable g(x) returning finite values of the input's shape")
    return np.array([_pair_expect(g, 1.0, 1.0, float(r), level) for r in rhos])


def activation_info(activation) -> Activation:
    """Resolve ``activation`` ("erf", "relu", "linear" or a callable g(x)) to an :class:`Activation`.

    A callable may provide ``pair_moment(rho)`` (E[g(u)g(v)] at unit variances and
    correlation rho, vectorized) and ``mean()`` (E[g(z)]); otherwise m(rho) is computed
    by 2-D piecewise tanh-sinh quadrature (breakpoints where the arguments of g vanish) and
    interpolated by a degree-96 Chebyshev series
    in theta = arcsin(rho) (the sqrt(1 - rho^2) end-point singularities of kinked activations such
    as ReLU are analytic in theta, so the interpolation converges spectrally).
    """
    if isinstance(activation, Activation):
        return activation
    if isinstance(activation, str):
        check_choice("activation", activation, ACTIVATIONS)
        code = _CODES[activation]
        pm = getattr(_kern, f"pmv_{activation}")
        d0 = getattr(_kern, f"pm_{activation}")(0.0)[1]
        return Activation(activation, code, np.zeros((3, 1)), float(pm(0.0)), float(pm(1.0)), float(d0))
    if not callable(activation):
        raise ValueError(f"activation must be one of 'erf', 'relu', 'linear' or a callable g(x), got {activation!r}")
    key = id(activation)
    hit = _GENERIC_CACHE.get(key)
    if hit is not None and hit[0]() is activation:
        return hit[1]
    from numpy.polynomial import chebyshev as Ch
    xk = np.cos(np.pi * (np.arange(_CHEB_DEG + 1) + 0.5) / (_CHEB_DEG + 1))
    nodes = np.sin(0.5 * np.pi * xk)          # rho = sin(theta), theta = (pi/2) x
    if hasattr(activation, "pair_moment"):
        vals = np.asarray(activation.pair_moment(nodes), dtype=float)
        m1 = float(np.asarray(activation.pair_moment(np.array([1.0])), dtype=float).ravel()[0])
    else:
        vals = _generic_pair_moment_grid(activation, nodes)
        m1 = float(_generic_pair_moment_grid(activation, [1.0])[0])
    if hasattr(activation, "mean"):
        m0 = float(activation.mean()) ** 2
    else:
        from .gaussian import piecewise_nodes
        z, w = piecewise_nodes([0.0], 6)
        m0 = float(np.dot(w, np.asarray(activation(z), dtype=float))) ** 2
    if not (np.all(np.isfinite(vals)) and math.isfinite(m1) and math.isfinite(m0)):
        raise ValueError("activation's pair moment is not finite (g must have finite second moment)")
    c0 = Ch.chebfit(xk, vals, _CHEB_DEG)
    c1 = Ch.chebder(c0)
    c2 = Ch.chebder(c1)
    n = c0.size
    cc = np.zeros((3, n))
    cc[0] = c0
    cc[1, :c1.size] = c1
    cc[2, :c2.size] = c2
    dm0 = float(Ch.chebval(0.0, c1)) / (0.5 * np.pi)  # dm/drho = dm/dtheta at rho = 0
    name = getattr(activation, "__name__", type(activation).__name__)
    info = Activation(str(name), 3, cc, m0, m1, dm0, activation)
    try:
        ref = weakref.ref(activation)
    except TypeError:
        ref = (lambda a=activation: a)
    _GENERIC_CACHE[key] = (ref, info)
    return info


def pair_moment(rho, activation="erf"):
    """m(rho) = E[g(u) g(v)] for unit-variance Gaussians u, v with correlation rho (|rho| <= 1).

    erf: (2/pi) arcsin(rho/2); ReLU: rho/4 + (sqrt(1-rho^2) + rho arcsin rho)/(2 pi)
    (seed Eq. 27); linear: rho; a callable: the Chebyshev interpolant (see activation_info).
    """
    rho = check_range("rho", rho, -1.0, 1.0)
    return activation_info(activation).m(rho)[()]


# ============================================================================ general overlaps
def _check_overlaps(R, Q, T):
    R = np.atleast_2d(np.asarray(R, dtype=float))
    Q = np.atleast_2d(np.asarray(Q, dtype=float))
    T = np.atleast_2d(np.asarray(T, dtype=float))
    K, M = R.shape
    if Q.shape != (K, K):
        raise ValueError(f"Q must be a {K}x{K} matrix (student-student overlaps), got shape {Q.shape}")
    if T.shape != (M, M):
        raise ValueError(f"T must be a {M}x{M} matrix (teacher-teacher overlaps), got shape {T.shape}")
    for name, A in (("R", R), ("Q", Q), ("T", T)):
        if not np.all(np.isfinite(A)):
            raise ValueError(f"{name} must be finite")
    if not np.allclose(Q, Q.T, rtol=0, atol=1e-14):
        raise ValueError("Q must be symmetric")
    if not np.allclose(T, T.T, rtol=0, atol=1e-14):
        raise ValueError("T must be symmetric")
    return R, Q, T


def _pm2(info, a, b, c):
    if info.code < 3:
        return getattr(_kern, f"pm2_{info.name}_v")(a, b, c)
    # generic g: 2-D piecewise tanh-sinh quadrature with the given covariance
    g = info.func
    a, b, c = np.broadcast_arrays(np.asarray(a, float), np.asarray(b, float), np.asarray(c, float))
    out = np.empty(a.shape)
    for idx in np.ndindex(a.shape):
        sa, sb = math.sqrt(a[idx]), math.sqrt(b[idx])
        r = c[idx] / (sa * sb) if sa > 0 and sb > 0 else 0.0
        out[idx] = _pair_expect(g, sa, sb, min(1.0, max(-1.0, r)), 3)
    return out


def generalization_error(R, Q, T, activation="erf"):
    r"""Generalization error of a K-unit student SCM learning an M-unit teacher SCM.

    ``R`` (K x M) student-teacher, ``Q`` (K x K) student-student and ``T`` (M x M)
    teacher-teacher overlaps (any norms; K != M allowed).  Implements seed Eq. 25 with the
    correct normalization of the outputs :math:`K^{-1/2}\sum g`, :math:`M^{-1/2}\sum g^*`:

    .. math:: \epsilon_g = \tfrac12\Big[\tfrac1K\sum_{ij}\langle g(x_i)g(x_j)\rangle
              - \tfrac{2}{\sqrt{KM}}\sum_{in}\langle g(x_i)g(x^*_n)\rangle
              + \tfrac1M\sum_{nm}\langle g(x^*_n)g(x^*_m)\rangle\Big]

    (for K = M this is seed Eq. 25).  Pair moments in closed form for "erf"
    (g = erf(x/sqrt2); g = 1 + erf(x/sqrt2) gives the same for K = M, and adds
    (sqrt K - sqrt M)^2/2 otherwise), "relu", "linear" (seed Eqs. 26-27), by 2-D
    piecewise tanh-sinh quadrature (breakpoints where the arguments of g vanish; ~1e-13 for
    smooth g and kinks at 0) for a callable g.
    """
    info = activation_info(activation)
    R, Q, T = _check_overlaps(R, Q, T)
    K, M = R.shape
    dq = np.diag(Q)
    dt = np.diag(T)
    if np.any(dq < 0) or np.any(dt < 0):
        raise ValueError("Q and T must have non-negative diagonals (squared norms)")
    if info.code == 1:
        if np.any(Q ** 2 > np.outer(dq, dq) * (1 + 1e-12)) or np.any(R ** 2 > np.outer(dq, dt) * (1 + 1e-12)) \
                or np.any(T ** 2 > np.outer(dt, dt) * (1 + 1e-12)):
            raise ValueError("R, Q, T must satisfy the Cauchy-Schwarz bound |overlap| <= product of norms")
    ss = _pm2(info, dq[:, None], dq[None, :], np.clip(Q, -np.sqrt(np.outer(dq, dq)), np.sqrt(np.outer(dq, dq))))
    st = _pm2(info, dq[:, None], dt[None, :], np.clip(R, -np.sqrt(np.outer(dq, dt)), np.sqrt(np.outer(dq, dt))))
    tt = _pm2(info, dt[:, None], dt[None, :], np.clip(T, -np.sqrt(np.outer(dt, dt)), np.sqrt(np.outer(dt, dt))))
    return float(0.5 * (ss.sum() / K - 2.0 * st.sum() / math.sqrt(K * M) + tt.sum() / M))


def entropy(R, Q, T=None):
    r"""Entropy s = (1/2) ln det C of the (K+M) x (K+M) overlap matrix C = [[T, R^T], [R, Q]].

    Seed Eqs. 18 and 24 (without the additive constant).  ``T`` defaults to the identity
    (orthonormal teacher).  Raises ValueError naming the argument when C is not
    positive definite (overlaps outside the domain).
    """
    R = np.atleast_2d(np.asarray(R, dtype=float))
    K, M = R.shape
    T = np.eye(M) if T is None else T
    R, Q, T = _check_overlaps(R, Q, T)
    try:
        np.linalg.cholesky(T)
    except np.linalg.LinAlgError:
        raise ValueError("T must be positive definite (teacher overlaps)") from None
    try:
        np.linalg.cholesky(Q)
    except np.linalg.LinAlgError:
        raise ValueError("Q must be positive definite (student overlaps outside the domain)") from None
    Cm = np.block([[T, R.T], [R, Q]])
    sign, logdet = np.linalg.slogdet(Cm)
    if sign <= 0 or not np.isfinite(logdet):
        raise ValueError("R must keep the overlap matrix [[T, R^T], [R, Q]] positive definite "
                         "(student-teacher overlaps outside the domain)")
    return 0.5 * float(logdet)


# ============================================================================ site-symmetric free energy
def _check_K(K, allow_inf=True):
    if isinstance(K, bool) or not isinstance(K, (numbers.Real, np.floating, np.integer)):
        raise ValueError(f"K must be a real number > 1 or math.inf, got {K!r}")
    K = float(K)
    if math.isnan(K) or K <= 1.0 or (math.isinf(K) and not allow_inf):
        raise ValueError(f"K must be a real number > 1{' or math.inf' if allow_inf else ''}, got {K!r}")
    return K


def _check_alpha(alpha):
    return float(check_range("alpha", alpha, 0.0))


def _in_domain(K, R, S, C):
    if math.isinf(K):
        return abs(R) < 1 and (R + S) ** 2 <= 1 + C
    return bool(_kern.in_domain(K, R, S, C))


@dataclass(frozen=True)
class FreeEnergy:
    """Value, gradient and Hessian of the site-symmetric beta f at one point.

    ``value`` = beta f (finite K) or beta f / K (K = inf, variables R, sigma = K S,
    gamma = K C); ``gradient`` (3,) and ``hessian`` (3, 3) in (R, S, C);
    ``generalization_error`` and ``entropy`` the two terms.
    """
    value: float
    gradient: np.ndarray
    hessian: np.ndarray
    generalization_error: float
    entropy: float


def _fe_eval(info, alpha, K, R, S, C):
    if math.isinf(K):
        mR = _kern.moments(info.code, R, info.cc)
        o = _kern.finf(alpha, R, S, C, info.m1, info.dm0, *mR)
    else:
        o = _kern.fgh(info.code, info.cc, info.m0, info.m1, alpha, K, R, S, C)
    g = np.array(o[1:4])
    Hm = np.array([[o[4], o[5], o[6]], [o[5], o[7], o[8]], [o[6], o[8], o[9]]])
    return FreeEnergy(float(o[0]), g, Hm, float(o[10]), float(o[11]))


def free_energy(alpha, K, R, S, C, activation="erf", derivatives=False):
    r"""Site-symmetric high-temperature free energy :math:`\beta f = \alpha K \epsilon_g - s`.

    Seed Eq. 20 with s from seed Eq. 19 (exactly as written, no additive constant) and
    :math:`\epsilon_g = m(1) - m(R) + \frac{K-1}{2}[m(C)+m(0)-2m(S)]` (seed Eq. 11 corrected:
    no overall 1/K; seed Eq. 12 for ReLU).  K is any real > 1, or ``math.inf``: then the
    value is :math:`\lim \beta f/K = \alpha[m(1)-m(R)+\tfrac12 m'(0)(\gamma-2\sigma)]-\tfrac12\ln(1-R^2)`
    with S and C read as the scaled :math:`\sigma = KS`, :math:`\gamma = KC`
    (domain :math:`(R+\sigma)^2 \le 1+\gamma`).

    Returns the float value, or with ``derivatives=True`` a :class:`FreeEnergy` with the
    exact gradient and Hessian (sympy.diff of the same expression).
    """
    alpha = _check_alpha(alpha)
    K = _check_K(K)
    R = float(check_range("R", R, -1.0, 1.0, lo_open=True, hi_open=True))
    if math.isinf(K):
        S = float(check_range("S", S))
        C = float(check_range("C", C))
        if (R + S) ** 2 > 1 + C:
            raise ValueError(f"S, C (scaled sigma = K S, gamma = K C at K = inf) must satisfy (R + S)^2 <= 1 + C, "
                             f"got R={R}, S={S}, C={C}")
    else:
        S = float(check_range("S", S, -1.0, 1.0, lo_open=True, hi_open=True))
        C = float(check_range("C", C, -1.0, 1.0, lo_open=True, hi_open=True))
        if 1 + (K - 1) * C - (R + (K - 1) * S) ** 2 <= 0:
            raise ValueError(f"S must satisfy (R + (K-1) S)^2 < 1 + (K-1) C (overlap matrix positive definite), "
                             f"got R={R}, S={S}, C={C}, K={K}")
        if 1 - C - (R - S) ** 2 <= 0:
            raise ValueError(f"C must satisfy C < 1 - (R - S)^2 (overlap matrix positive definite), got R={R}, S={S}, C={C}")
    info = activation_info(activation)
    if math.isinf(K) and info.dm0 <= 0:
        raise ValueError("activation must have E[g'(z)] != 0 for K = inf (m'(0) > 0 fixes the collective overlaps)")
    fe = _fe_eval(info, alpha, K, R, S, C)
    return fe if derivatives else fe.value


# ============================================================================ full space of individual overlaps
def _full_matrices(K, R, S, C):
    k = int(K)
    Rm = np.full((k, k), S) + (R - S) * np.eye(k)
    Qm = np.full((k, k), C) + (1 - C) * np.eye(k)
    return Rm, Qm


def _full_moments(info, X):
    if info.code < 3:
        out = np.array([getattr(_kern, f"pm_{info.name}")(float(x)) for x in X.ravel()])
    else:
        out = np.array([_kern.moments(3, float(x), info.cc) for x in X.ravel()])
    return [out[:, i].reshape(X.shape) for i in range(3)]


def _full_gradient(info, alpha, Rm, Qm):
    """Gradient of beta f in the individual overlaps: (dR (K x K), dQ (K x K, off-diagonal used))."""
    A = Qm - Rm @ Rm.T
    B = np.linalg.inv(A)
    _, dmR, _ = _full_moments(info, Rm)
    _, dmQ, _ = _full_moments(info, Qm - np.eye(Qm.shape[0]))
    gR = -alpha * dmR + B @ Rm
    gQ = alpha * dmQ - B
    np.fill_diagonal(gQ, 0.0)
    return gR, gQ


def _full_bilinear(info, alpha, Rm, Qm, d2R, d2Q, dirs1, dirs2):
    """Matrix of second derivatives u^T H v for lists of directions (dR, dQ).

    beta f = -alpha sum_in m(R_in) + alpha sum_{i<j} m(Q_ij) - (1/2) ln det(Q - R R^T) + const
    (T = I, K = M); d2(-s)[u, v] = (1/2)[tr(B dA_u B dA_v) - tr(B d2A_uv)], B = A^{-1},
    dA = dQ - dR R^T - R dR^T, d2A_uv = -(dR_u dR_v^T + dR_v dR_u^T).
    """
    A = Qm - Rm @ Rm.T
    B = np.linalg.inv(A)
    out = np.empty((len(dirs1), len(dirs2)))
    dA1 = [dQ - dR @ Rm.T - Rm @ dR.T for dR, dQ in dirs1]
    dA2 = [dQ - dR @ Rm.T - Rm @ dR.T for dR, dQ in dirs2]
    BdA1 = [B @ a for a in dA1]
    BdA2 = [B @ a for a in dA2]
    for i, (u, bu) in enumerate(zip(dirs1, BdA1)):
        for j, (v, bv) in enumerate(zip(dirs2, BdA2)):
            d2A = -(u[0] @ v[0].T + v[0] @ u[0].T)
            ent = 0.5 * (np.sum(bu * bv.T) - np.sum(B * d2A.T))
            en = -alpha * np.sum(d2R * u[0] * v[0]) + 0.5 * alpha * np.sum(d2Q * u[1] * v[1])
            out[i, j] = ent + en
    return out


def _full_basis(K):
    """Coordinate basis of the K^2 + K(K-1)/2 individual overlaps as (dR, dQ) pairs."""
    dirs = []
    for i in range(K):
        for n in range(K):
            dR = np.zeros((K, K))
            dR[i, n] = 1.0
            dirs.append((dR, np.zeros((K, K))))
    for i in range(K):
        for j in range(i + 1, K):
            dQ = np.zeros((K, K))
            dQ[i, j] = dQ[j, i] = 1.0
            dirs.append((np.zeros((K, K)), dQ))
    return dirs


def full_hessian(alpha, K, R, S, C, activation="erf"):
    """Gradient and Hessian of beta f in the full space of the K^2 + K(K-1)/2 individual overlaps
    {R_in, Q_ij (i<j)} at the site-symmetric point (R, S, C) (integer K = M, T = I, Q_ii = 1).

    beta f = alpha K eps_g({R_in, Q_ij}) - (1/2) ln det(Q - R R^T) (seed Eqs. 18, 20, 25);
    derivatives by matrix calculus (d ln det A = tr(A^-1 dA)).  Returns (gradient, Hessian)
    as a vector and a matrix in the coordinate order R_11, R_12, ..., R_KK, Q_12, ..., Q_(K-1)K.
    Costs O(K^6): meant for small K and tests; stability uses :func:`_full_blocks`.
    """
    alpha = _check_alpha(alpha)
    K = _check_K(K, allow_inf=False)
    if K != int(K):
        raise ValueError(f"K must be an integer for the full space of individual overlaps, got {K!r}")
    info = activation_info(activation)
    k = int(K)
    Rm, Qm = _full_matrices(k, R, S, C)
    gR, gQ = _full_gradient(info, alpha, Rm, Qm)
    iu = np.triu_indices(k, 1)
    grad = np.concatenate([gR.ravel(), gQ[iu]])
    _, _, d2R = _full_moments(info, Rm)
    _, _, d2Q = _full_moments(info, Qm - np.eye(k))  # the diagonal Q_ii = 1 is not a variable
    basis = _full_basis(k)
    Hm = _full_bilinear(info, alpha, Rm, Qm, d2R, d2Q, basis, basis)
    return grad, Hm


def _isotypic_vectors(K):
    """Direction sets spanning one copy-row of each isotypic component of S_K acting on
    (R, Q) by simultaneous permutation of student and teacher units."""
    k = K
    one = np.ones(k)
    I = np.eye(k)
    Z = np.zeros((k, k))
    off = np.ones((k, k)) - I
    comps = {"trivial": ([(I, Z), (off, Z), (Z, off)], 1)}
    x = np.zeros(k)
    x[0], x[1] = 1.0, -1.0
    xq = (x[:, None] + x[None, :]) * off
    comps["standard"] = ([(np.diag(x), Z), (np.outer(x, one), Z), (np.outer(one, x), Z), (Z, xq)], k - 1)
    if k >= 3:
        z = np.zeros((k, k))
        for a, b in ((0, 1), (1, 2), (2, 0)):
            z[a, b] += 1.0
            z[b, a] -= 1.0
        comps["[K-2,1,1]"] = ([(z, Z)], (k - 1) * (k - 2) // 2)
    if k >= 4:
        y = np.zeros((k, k))
        for a, b, sgn in ((0, 1, 1), (2, 3, 1), (0, 2, -1), (1, 3, -1)):
            y[a, b] = y[b, a] = sgn
        comps["[K-2,2]"] = ([(y, Z), (Z, y)], k * (k - 3) // 2)
    return comps


def _full_blocks(info, alpha, K, R, S, C):
    """Distinct Hessian eigenvalues in the full overlap space, by S_K symmetry blocks.

    The Hessian at a site-symmetric point commutes with the simultaneous permutations of
    student and teacher units, so it is block diagonal on the isotypic components
    trivial (3 copies), standard (4), [K-2,1,1] (1), [K-2,2] (2): a 3x3, 4x4, 1x1 and 2x2
    generalized eigenproblem (Gram matrix of the copies; dependent copies removed).
    Returns dict name -> (eigenvalues ascending, multiplicity).
    """
    k = int(K)
    Rm, Qm = _full_matrices(k, R, S, C)
    _, _, d2R = _full_moments(info, Rm)
    _, _, d2Q = _full_moments(info, Qm - np.eye(k))  # the diagonal Q_ii = 1 is not a variable
    out = {}
    for name, (vecs, mult) in _isotypic_vectors(k).items():
        G = np.array([[np.sum(u[0] * v[0]) + 0.5 * np.sum(u[1] * v[1]) for v in vecs] for u in vecs])
        Hb = _full_bilinear(info, alpha, Rm, Qm, d2R, d2Q, vecs, vecs)
        w, U = np.linalg.eigh(G)
        keep = w > 1e-10 * w.max()
        W = U[:, keep] / np.sqrt(w[keep])
        ev = np.linalg.eigvalsh(W.T @ Hb @ W)
        out[name] = (ev, mult)
    return out


# ============================================================================ equilibria
def _classify(R, S, tol=1e-7):
    if abs(R - S) <= tol * (1 + abs(R)):
        return "unspecialized"
    return "specialized" if R > S else "anti-specialized"


def _point(info, alpha, K, row, branch, iterations=0, full=True):
    R, S, C = map(float, row[:3])
    ev = np.asarray(row[6:9], dtype=float)
    ss_stable = bool(ev[0] > 0)
    full_ev = None
    full_stable = None
    blocks = None
    if full and math.isfinite(K) and K == int(K):
        blocks = _full_blocks(info, alpha, K, R, S, C)
        full_ev = np.sort(np.concatenate([b[0] for b in blocks.values()]))
        full_stable = bool(full_ev[0] > 0)
    extra = {"branch": branch, "site_symmetric_stable": ss_stable, "full_space_eigenvalues": full_ev,
             "full_space_stable": full_stable,
             "full_space_blocks": None if blocks is None else {k: (v[0], v[1]) for k, v in blocks.items()},
             "activation": info.name}
    return SaddlePoint("scm.equilibrium", {"alpha": alpha, "K": K},
                       {"R": R, "S": S, "C": C},
                       {"free_energy": float(row[3]), "generalization_error": float(row[4]), "entropy": float(row[5])},
                       converged=True, residual=float(row[11]) if len(row) > 11 else 0.0, iterations=int(iterations),
                       hessian_eigenvalues=ev, replicon=None,
                       rs_stable=full_stable if full_stable is not None else ss_stable, extra=extra)


_TOL = 1e-13
_MAXIT = 100


def _trace(info, K, alphas, x0, unspec):
    alphas = np.ascontiguousarray(alphas, dtype=float)
    out = np.empty((alphas.size, 12))
    _kern.trace(info.code, info.cc, info.m0, info.m1, float(K), alphas, np.asarray(x0, dtype=float),
                bool(unspec), _TOL, _MAXIT, out)
    return out


def _unspecialized_path(info, K, alpha, n=24):
    """Trace the R = S branch from alpha = 0 (R = S = C = 0) to alpha; returns the final row."""
    grid = np.concatenate([[0.0], alpha * (np.arange(1, n + 1) / n) ** 2]) if alpha > 0 else np.array([0.0])
    out = _trace(info, K, grid, np.zeros(3), True)
    if out[-1, 9] != 1.0:
        raise ConvergenceError("unspecialized branch: Newton failed", x=out[:, :3][np.isfinite(out[:, 0])][-1:],
                               diagnostics={"alpha": alpha, "K": K})
    return out[-1]


def _starts(K):
    import itertools
    pts = [s for s in itertools.product(np.linspace(-0.95, 0.95, 13), np.linspace(-0.6, 0.9, 11),
                                        (-0.2, -0.05, 0.0, 0.05, 0.2, 0.5))
           if _kern.in_domain(K, *s)]
    Kf = K if math.isfinite(K) else 1e6
    # collective-overlap starts for large K (S = O(1/K), C = O(1/K^2))
    for R in np.linspace(-0.95, 0.95, 21):
        for u in (0.5, 0.9, 0.99):
            s = (u - R) / (Kf - 1)
            for c in (0.0, 1.0 / Kf ** 2, -1.0 / Kf ** 2):
                if _kern.in_domain(K, R, s, c):
                    pts.append((R, s, c))
    return np.array(pts, dtype=float)


def _stationary_points(info, alpha, K):
    starts = _starts(K)
    out = np.empty((len(starts), 12))
    _kern.multistart(info.code, info.cc, info.m0, info.m1, float(alpha), float(K), starts, _TOL, _MAXIT, out)
    ok = out[out[:, 9] == 1.0]
    uniq = []
    for row in ok[np.argsort(ok[:, 3])]:
        if not any(np.max(np.abs(row[:3] - u[:3])) < 1e-7 for u in uniq):
            uniq.append(row)
    return uniq


def _equilibria_inf(info, alpha):
    """K = inf: minima of phi(R) = beta f / K on sigma = 1 - R, gamma = 0."""
    def phi(R):
        return _kern.finf_red(alpha, R, info.m1, info.dm0, *_kern.moments(info.code, R, info.cc))
    grid = np.concatenate([-1 + np.logspace(-12, 0, 200)[::-1][:-1], [0.0], 1 - np.logspace(-12, 0, 200)[:-1][::-1]])
    grid = np.unique(np.clip(grid, -1 + 1e-13, 1 - 1e-13))
    d = np.array([phi(r)[1] for r in grid])
    roots = [0.0]
    for i in range(len(grid) - 1):
        if d[i] == 0.0 or d[i] * d[i + 1] < 0:
            if abs(grid[i]) < 1e-300 or abs(grid[i + 1]) < 1e-300:
                continue
            r = root_scalar(lambda x: phi(x)[1], (grid[i], grid[i + 1])).x[0]
            roots.append(float(r))
    res = []
    for R in roots:
        v, d1, d2, eps, s = phi(R)
        if d2 > 0 or (d2 == 0 and R == 0.0):
            sp = SaddlePoint("scm.equilibrium", {"alpha": alpha, "K": math.inf},
                             {"R": R, "S": 1.0 - R, "C": 0.0},
                             {"free_energy": float(v), "generalization_error": float(eps), "entropy": float(-s)},
                             converged=True, residual=abs(float(d1)), iterations=0,
                             hessian_eigenvalues=np.array([d2]), rs_stable=bool(d2 > 0),
                             extra={"branch": "unspecialized" if R == 0 else ("specialized" if R > 0 else "anti-specialized"),
                                    "site_symmetric_stable": bool(d2 > 0), "full_space_eigenvalues": None,
                                    "full_space_stable": None, "full_space_blocks": None,
                                    "activation": info.name,
                                    "note": "K = inf: beta f / K; S, C are sigma = K S -> 1 - R, gamma = K C -> 0"})
            res.append(sp)
    return sorted(res, key=lambda p: p.free_energy)


def equilibria(alpha, K, activation="erf", *, include_saddles=False, full_space=True):
    r"""Every local minimum of the site-symmetric beta f (seed Eq. 20) at (alpha, K).

    Unspecialized (R = S, traced from alpha = 0), specialized (R > S) and anti-specialized
    (R < S) stationary points are found by Newton from a grid of starts (plus the traced
    R = S branch), deduplicated, and classified by the Hessian of beta f in (R, S, C)
    (``hessian_eigenvalues``) and, for integer K, in the full space of the K^2 + K(K-1)/2
    individual overlaps (``extra['full_space_eigenvalues']``, by S_K symmetry blocks;
    ``rs_stable`` = full-space stability).  Returns a tuple of :class:`SaddlePoint` sorted by
    free energy (the first is the thermodynamic state).  ``include_saddles`` also returns the
    stationary points that are not minima in the site-symmetric space.

    K = inf: minima of the reduced :math:`\varphi(R)` (see the module docstring); the
    free energy is per hidden unit and S, C report sigma = K S and gamma = K C.
    """
    alpha = _check_alpha(alpha)
    K = _check_K(K)
    info = activation_info(activation)
    if math.isinf(K):
        if info.dm0 <= 0:
            raise ValueError("activation must have E[g'(z)] != 0 for K = inf")
        return tuple(_equilibria_inf(info, alpha))
    rows = _stationary_points(info, alpha, K)
    try:
        u = _unspecialized_path(info, K, alpha)
        if not any(np.max(np.abs(u[:3] - r[:3])) < 1e-7 for r in rows):
            rows.append(u)
    except ConvergenceError:
        pass
    res = []
    for row in rows:
        if row[6] > 0 or include_saddles:
            res.append(_point(info, alpha, K, row, _classify(row[0], row[1]), full=full_space))
    return tuple(sorted(res, key=lambda p: p.free_energy))


# ============================================================================ learning curves
@dataclass(frozen=True)
class Branch:
    """One branch of stationary points over the alpha grid.

    ``exists`` (n,) bool; ``R, S, C, free_energy, generalization_error, entropy`` (n,) masked
    arrays (masked where the branch does not exist);
    ``hessian_eigenvalues`` (n, 3) in (R, S, C); ``stable`` (n,) bool: a local minimum in
    the site-symmetric space.
    """
    name: str
    alpha: np.ndarray
    exists: np.ndarray
    R: np.ndarray
    S: np.ndarray
    C: np.ndarray
    free_energy: np.ndarray
    generalization_error: np.ndarray
    entropy: np.ndarray
    hessian_eigenvalues: np.ndarray
    stable: np.ndarray


@dataclass(frozen=True)
class LearningCurve:
    """All branches of the site-symmetric beta f over an alpha grid.

    ``branches``: dict name -> :class:`Branch` ("unspecialized", "specialized",
    "anti-specialized"); ``equilibrium``: the global minimum among the locally stable
    branches at each alpha (``R, S, C, generalization_error, free_energy`` arrays and
    ``branch`` names).
    """
    K: float
    activation: str
    alpha: np.ndarray
    branches: dict
    equilibrium: dict


def _branch_from(name, alphas, out):
    ok = out[:, 9] == 1.0
    mk = lambda a: np.ma.masked_invalid(a.copy())  # masked (never NaN) where the branch does not exist
    return Branch(name, alphas, ok, mk(out[:, 0]), mk(out[:, 1]), mk(out[:, 2]), mk(out[:, 3]),
                  mk(out[:, 4]), mk(out[:, 5]), mk(out[:, 6:9]), ok & (out[:, 6] > 0))


def _cut_at_merge(out, sign):
    """Invalidate rows after a traced specialized branch reaches or crosses R = S."""
    d = out[:, 0] - out[:, 1]
    ok = out[:, 9] == 1.0
    bad = ok & ((sign * d) <= 1e-7 * (1 + np.abs(out[:, 0])))
    if np.any(bad):
        first = np.argmax(bad)
        out[first:, :] = np.nan
        out[first:, 9] = 0.0
    return out


def _spec_starts_at(info, K, alpha):
    """Minima with R > S and R < S at alpha (lowest free energy of each sign)."""
    rows = _stationary_points(info, alpha, K)
    best = {}
    for r in rows:
        if r[6] <= 0:
            continue
        c = _classify(r[0], r[1])
        if c != "unspecialized" and c not in best:
            best[c] = r
    return best


def learning_curve(K, activation="erf", alphas=None, *, method="newton"):
    """All branches of stationary points of beta f (seed Eq. 20) over a sorted alpha grid.

    ``method="continuation"``: the branches (including the unstable specialized saddle branch
    between a fold and the bifurcation of R = S) are traced by the continuation engine
    (:func:`statmech.continuation.analyze`) through folds; every monotone sheet is then
    re-solved exactly at the grid points (numba Newton warm-started from the engine's points).
    Branch names get a suffix ``-unstable`` (saddle sheets) and ``-2``, ``-3`` for repeats.
    ``method="newton"`` (default, fastest) is described below.

    The unspecialized branch (R = S) is traced upward from alpha = 0 (2-D Newton in (R, C)
    on R = S, warm-started with a secant predictor); the specialized (R > S) and
    anti-specialized (R < S) branches are found at the largest alpha by multi-start Newton
    and traced downward until they end (fold) or merge into R = S.  Every point carries the
    site-symmetric Hessian eigenvalues; ``stable`` marks local minima.  Everything runs in one
    numba loop per branch (about 1e-5 s per point).  For the positions of the transitions
    use :func:`transitions`; for full-space stability at one alpha use :func:`equilibria`.
    """
    K = _check_K(K, allow_inf=False)
    info = activation_info(activation)
    if alphas is None:
        alphas = np.linspace(0.0, 100.0 if info.name == "erf" else 20.0, 201)
    alphas = np.asarray(check_range("alphas", alphas, 0.0), dtype=float).ravel()
    if alphas.size == 0:
        raise ValueError("alphas must be a non-empty array of alpha >= 0")
    if np.any(np.diff(alphas) < 0):
        raise ValueError("alphas must be sorted in increasing order")
    check_choice("method", method, ("newton", "continuation"))
    if method == "continuation":
        return _learning_curve_continuation(info, K, alphas)
    branches = {}
    if alphas[0] > 0:
        x0 = _unspecialized_path(info, K, float(alphas[0]))[:3]
    else:
        x0 = np.zeros(3)
    branches["unspecialized"] = _branch_from("unspecialized", alphas, _trace(info, K, alphas, x0, True))
    top = float(alphas[-1])
    starts = _spec_starts_at(info, K, top) if top > 0 else {}
    rev = alphas[::-1].copy()
    for name, sign in (("specialized", 1.0), ("anti-specialized", -1.0)):
        if name in starts:
            out = _cut_at_merge(_trace(info, K, rev, starts[name][:3], False), sign)[::-1].copy()
        else:
            out = np.full((alphas.size, 12), np.nan)
            out[:, 9] = 0.0
        branches[name] = _branch_from(name, alphas, out)
    # thermodynamic state: lowest free energy among the stable branches
    names = list(branches)
    F = np.stack([np.where(branches[n].stable, np.ma.filled(branches[n].free_energy, np.inf), np.inf) for n in names])
    best = np.argmin(F, axis=0)
    have = np.isfinite(F.min(axis=0))
    eq = {"branch": np.array([names[b] if h else "" for b, h in zip(best, have)])}
    for key in ("R", "S", "C", "generalization_error", "free_energy"):
        vals = np.stack([np.ma.filled(getattr(branches[n], key), np.nan) for n in names])
        eq[key] = np.ma.masked_invalid(np.where(have, vals[best, np.arange(alphas.size)], np.nan))
    return LearningCurve(K, info.name, alphas, branches, eq)


# ============================================================================ transitions (direct)
@dataclass(frozen=True)
class Transitions:
    """Specialization transitions of the site-symmetric SCM at fixed K.

    ``alpha_s``: the specialized (R > S) minimum appears (fold; = alpha_c for a continuous
    transition); ``alpha_c``: equal free energies of the specialized and unspecialized
    minima, or the second-order point; ``alpha_d``: the unspecialized (R = S) minimum loses
    stability (site-symmetric Hessian); ``order``: 1 or 2.  None where a point does not
    exist.  ``details``: branch data at the points (R, S, C, free energies), the
    anti-specialized fold if any, the solver ("continuation" or "direct") and accuracy.
    """
    K: float
    activation: str
    alpha_s: float | None
    alpha_c: float | None
    alpha_d: float | None
    order: int | None
    details: dict


def _grad_parts(info, K, R, S, C, alpha):
    o1 = _kern.fgh(info.code, info.cc, info.m0, info.m1, alpha, K, R, S, C)
    o0 = _kern.fgh(info.code, info.cc, info.m0, info.m1, 0.0, K, R, S, C)
    g = np.array(o1[1:4])
    Hm = np.array([[o1[4], o1[5], o1[6]], [o1[5], o1[7], o1[8]], [o1[6], o1[8], o1[9]]])
    dga = (g - np.array(o0[1:4])) / alpha if alpha != 0 else None
    return o1, g, Hm, dga


def _solve_delta(info, K, delta, y0, tol=1e-12, maxit=60):
    """Stationary point with R - S = delta: Newton in y = (R, C, alpha).

    ``y0`` = (R0, C0, alpha0[, delta0]); with delta0 the start keeps the collective
    overlap R + (K-1) S of the start (stays inside the thin domain at large K)."""
    y = np.array(y0[:3], dtype=float)
    if len(y0) > 3:
        R0, d0 = float(y0[0]), float(y0[3])
        u0 = R0 + (K - 1) * (R0 - d0)
        y[0] = (u0 + (K - 1) * delta) / K
    gn = math.inf
    for it in range(maxit):
        R, C, a = y
        if a <= 0 or not _kern.in_domain(K, R, R - delta, C):
            raise ConvergenceError("delta-branch left the domain", x=y, iterations=it)
        o, g, Hm, dga = _grad_parts(info, K, R, R - delta, C, a)
        gn = np.max(np.abs(g))
        if gn <= tol * (1 + a * K):
            return y, o, Hm
        J = np.column_stack([Hm[:, 0] + Hm[:, 1], Hm[:, 2], dga])
        dy = np.linalg.solve(J, -g)
        if gn <= 1e-6 * (1 + a * K) and np.max(np.abs(dy) / (1 + np.abs(y))) <= 1e-11:
            # rounding floor of the (stiff, O(K^2/A)) gradient terms: the Newton correction
            # itself is below 1e-11 relative, so y is accurate to that level
            return y + dy, o, Hm
        lam = 1.0
        while lam > 1e-6:
            yn = y + lam * dy
            if yn[2] > 0 and _kern.in_domain(K, yn[0], yn[0] - delta, yn[1]):
                break
            lam *= 0.5
        y = yn
    raise ConvergenceError("delta-branch Newton did not converge", x=y, iterations=maxit,
                           residual=float(gn), diagnostics={"delta": delta, "K": K})


class _Near:
    """Solutions of the delta-parametrized branch, warm-started from the nearest known delta."""

    def __init__(self, info, K, rows):
        self.info, self.K = info, K
        self.known = [(r[0], r[1]) for r in rows]

    def solve(self, d):
        d0, y0 = min(self.known, key=lambda t: abs(t[0] - d))
        y, o, Hm = _solve_delta(self.info, self.K, d, np.append(y0, d0))
        self.known.append((d, y))
        return y, o, Hm


class _UCache:
    """Unspecialized solutions with warm starts."""

    def __init__(self, info, K):
        self.info, self.K = info, K
        self.pts = {}

    def row(self, alpha):
        if self.pts:
            a0 = min(self.pts, key=lambda a: abs(a - alpha))
            x0 = self.pts[a0][:3]
            out = _trace(self.info, self.K, np.array([alpha]), x0, True)
            if out[0, 9] != 1.0:
                out = _trace(self.info, self.K, np.array([a0, alpha]), x0, True)[1:]
            r = out[0]
        else:
            r = None
        if r is None or r[9] != 1.0:
            r = _unspecialized_path(self.info, self.K, alpha, n=48)
        self.pts[alpha] = r
        return r


def _transitions_direct(info, K):
    U = _UCache(info, K)
    # --- alpha_d: smallest site-symmetric Hessian eigenvalue of the R = S branch crosses zero
    amax = 40.0 * math.pi * K + 400.0
    grid = np.concatenate([[0.0], np.geomspace(0.05, amax, 600)])
    out = _trace(info, K, grid, np.zeros(3), True)
    ok = out[:, 9] == 1.0
    ev = np.where(ok, out[:, 6], np.nan)
    idx = np.where(ok[:-1] & ok[1:] & (ev[:-1] > 0) & (ev[1:] <= 0))[0]
    alpha_d = None
    if idx.size:
        i = idx[0]
        for a, r in ((grid[i], out[i]), (grid[i + 1], out[i + 1])):
            U.pts[float(a)] = r
        alpha_d = root_scalar(lambda a: U.row(a)[6], (grid[i], grid[i + 1]), xtol=1e-14, rtol=1e-15).x[0]
    details = {"solver": "direct"}
    if alpha_d is None:
        return Transitions(K, info.name, None, None, None, None, details)
    ud = U.row(alpha_d)
    details["unspecialized_at_alpha_d"] = {"R": ud[0], "C": ud[2]}

    # --- the two branches bifurcating at alpha_d, parametrized by delta = R - S
    def family(sign):
        # start at |delta| = 1e-3: at delta = 0 the whole R = S branch solves the equations and the
        # delta-parametrized Jacobian is singular (condition ~ 1/|delta|)
        deltas = sign * np.concatenate([np.geomspace(1e-3, 0.02, 6), np.linspace(0.02, 0.999, 50)[1:]])
        y = np.array([ud[0], ud[2], alpha_d])
        rows = []
        for dl in deltas:
            try:
                y, o, Hm = _solve_delta(info, K, dl, np.append(y, rows[-1][0] if rows else 0.0))
            except (ConvergenceError, np.linalg.LinAlgError):
                break
            rows.append((dl, y.copy(), o, np.linalg.eigvalsh(Hm)[0]))
        return rows

    res = {}
    for name, sign in (("specialized", 1.0), ("anti-specialized", -1.0)):
        rows = family(sign)
        if len(rows) < 3:
            res[name] = None
            continue
        al = np.array([r[1][2] for r in rows])
        dl = np.array([r[0] for r in rows])
        j = int(np.argmin(al))
        info_b = {"delta": dl, "alpha": al, "rows": rows}
        if al[j] >= alpha_d * (1 - 1e-9):
            info_b["fold"] = None
        else:
            lo, hi = dl[max(j - 1, 0)], dl[min(j + 1, len(dl) - 1)]
            near = _Near(info, K, rows)

            def a_of(d):
                return near.solve(d)[0][2]
            from scipy.optimize import minimize_scalar
            r = minimize_scalar(a_of, bounds=(min(lo, hi), max(lo, hi)), method="bounded",
                                options={"xatol": 1e-11 * max(1.0, abs(dl[j]))})
            info_b["fold"] = (float(r.x), float(r.fun))
        res[name] = info_b
    P = res.get("specialized")
    if P is None:
        return Transitions(K, info.name, None, None, alpha_d, None, details)
    details["anti_specialized_fold"] = None if res.get("anti-specialized") is None or \
        res["anti-specialized"]["fold"] is None else res["anti-specialized"]["fold"][1]
    if P["fold"] is None:
        details["specialized_emerges_at"] = alpha_d
        return Transitions(K, info.name, alpha_d, alpha_d, alpha_d, 2, details)
    d_fold, alpha_s = P["fold"]
    # --- alpha_c: f(specialized at delta) = f(unspecialized at alpha(delta)), delta beyond the fold
    near = _Near(info, K, P["rows"])

    def df(d):
        y, o, Hm = near.solve(d)
        return o[0] - U.row(y[2])[3]
    # sign change of f_spec - f_unspec along the stable part (delta beyond the fold), screened
    # with one warm-started numba trace of the R = S branch over the sorted alphas
    yf, of, _ = near.solve(d_fold)
    sel = [(d_fold, yf[2], of[0])] + [(r[0], r[1][2], r[2][0]) for r in P["rows"] if r[0] > d_fold]
    al_sorted = np.array([t[1] for t in sel])
    order_idx = np.argsort(al_sorted)
    u0 = U.row(float(al_sorted[order_idx[0]]))
    uo = _trace(info, K, al_sorted[order_idx], u0[:3], True)
    fu = np.empty(len(sel))
    fu[order_idx] = uo[:, 3]
    diff = np.array([t[2] for t in sel]) - fu
    alpha_c = None
    for i in range(len(sel) - 1):
        if np.isfinite(diff[i]) and np.isfinite(diff[i + 1]) and diff[i] * diff[i + 1] <= 0:
            dc = root_scalar(df, (sel[i][0], sel[i + 1][0]), xtol=1e-15, rtol=1e-15).x[0]
            y, o, Hm = near.solve(dc)
            alpha_c = float(y[2])
            details["specialized_at_alpha_c"] = {"R": y[0], "S": y[0] - dc, "C": y[1]}
            break
    details["specialized_at_alpha_s"] = {"delta": d_fold}
    return Transitions(K, info.name, float(alpha_s), alpha_c, float(alpha_d), 1, details)


def _transitions_inf(info):
    """K = inf: transitions of phi(R) = beta f / K (see the module docstring)."""
    def red(R, a):
        return _kern.finf_red(a, R, info.m1, info.dm0, *_kern.moments(info.code, R, info.cc))

    def a_of(R):
        d0 = red(R, 0.0)[1]
        d1 = red(R, 1.0)[1]
        return -d0 / (d1 - d0)
    d2m0 = _kern.moments(info.code, 0.0, info.cc)[2]
    alpha_d = 1.0 / d2m0 if d2m0 > 1e-14 else None
    details = {"solver": "direct (K = inf, one-dimensional)", "note": "alpha_d = 1/m''(0); None when m''(0) <= 0 "
               "(for erf alpha_d grows like 4 pi K at finite K)"}
    grid = np.concatenate([np.geomspace(1e-4, 0.05, 20), np.linspace(0.05, 0.999, 200)[1:]])
    al = np.array([a_of(r) for r in grid])
    j = int(np.argmin(al))
    if alpha_d is not None and j == 0 and al[0] >= alpha_d * (1 - 1e-9):
        return Transitions(math.inf, info.name, alpha_d, alpha_d, alpha_d, 2, details)
    from scipy.optimize import minimize_scalar
    lo, hi = grid[max(j - 1, 0)], grid[min(j + 1, grid.size - 1)]
    r = minimize_scalar(a_of, bounds=(lo, hi), method="bounded", options={"xatol": 1e-12})
    Rs, alpha_s = float(r.x), float(r.fun)

    def df(R):
        a = a_of(R)
        return red(R, a)[0] - red(0.0, a)[0]
    cand = grid[grid > Rs]
    alpha_c = None
    prev, fprev = Rs, df(Rs)
    for R in cand:
        fr = df(R)
        if fprev * fr <= 0:
            Rc = root_scalar(df, (prev, R), xtol=1e-15, rtol=1e-15).x[0]
            alpha_c = float(a_of(Rc))
            details["specialized_at_alpha_c"] = {"R": Rc}
            break
        prev, fprev = R, fr
    details["specialized_at_alpha_s"] = {"R": Rs}
    return Transitions(math.inf, info.name, alpha_s, alpha_c, alpha_d, 1, details)


# ============================================================================ K = 1 (seed Appendix C)
def alpha_of_R_single_unit(R, activation="erf"):
    r"""K = 1 inverse learning curve alpha(R) from d(beta f)/dR = 0 (seed Eqs. 29-33).

    beta f = alpha [m(1) - m(R)] - (1/2) ln(1 - R^2) gives alpha = R / ((1 - R^2) m'(R)):
    erf :math:`\alpha = \pi R\sqrt{4-R^2}/(2(1-R^2))` (Eq. 32), ReLU
    :math:`\alpha = 4\pi R/((1-R^2)(\pi + 2\arcsin R))` (Eq. 33).  Vectorized over R in [0, 1).
    """
    R = np.asarray(check_range("R", R, 0.0, 1.0, hi_open=True), dtype=float)
    info = activation_info(activation)
    out = np.empty(R.shape)
    for idx in np.ndindex(R.shape):
        r = float(R[idx])
        # K = 1 in the site-symmetric expression: S and C drop out (single source of truth)
        g0 = _kern.fgh(info.code, info.cc, info.m0, info.m1, 0.0, 1.0, r, 0.0, 0.0)[1]
        g1 = _kern.fgh(info.code, info.cc, info.m0, info.m1, 1.0, 1.0, r, 0.0, 0.0)[1]
        out[idx] = -g0 / (g1 - g0) if r != 0 else 0.0
    return out[()] if out.ndim == 0 else out


def single_unit(alpha, activation="erf"):
    """K = 1 learning curve: R(alpha) and eps_g(alpha) = m(1) - m(R) (seed Eqs. 29-31), by inverting
    the monotone alpha(R) of :func:`alpha_of_R_single_unit` (Brent).  Vectorized over alpha."""
    alpha = np.asarray(check_range("alpha", alpha, 0.0), dtype=float)
    info = activation_info(activation)

    def one(a, guess=None):
        if a == 0.0:
            R = 0.0
        else:
            hi = 0.5
            while alpha_of_R_single_unit(hi, info) < a:
                hi = 1.0 - (1.0 - hi) / 4.0
                if hi >= 1.0:
                    raise ConvergenceError("single_unit: alpha too large for double precision", diagnostics={"alpha": a})
            R = root_scalar(lambda r: alpha_of_R_single_unit(r, info) - a, (0.0, hi), xtol=1e-16, rtol=1e-15).x[0]
        o = _kern.fgh(info.code, info.cc, info.m0, info.m1, a, 1.0, R, 0.0, 0.0)
        d2 = o[4]
        return SaddlePoint("scm.single_unit", {"alpha": a, "K": 1.0}, {"R": R},
                           {"free_energy": o[0], "generalization_error": o[10], "entropy": o[11]},
                           converged=True, residual=abs(o[1]), iterations=0, hessian_eigenvalues=np.array([d2]),
                           rs_stable=bool(d2 > 0), extra={"activation": info.name})
    from .saddle import vectorize_over
    return vectorize_over(one, alpha, model="scm.single_unit")


# ============================================================================ transitions (public)
def transitions(K, activation="erf", *, method="auto"):
    r"""Specialization transitions alpha_s, alpha_c, alpha_d and the order at fixed K.

    From the site-symmetric free energy alone (seed Eq. 20, eps_g corrected): the
    unspecialized branch R = S is followed from alpha = 0 and alpha_d located where its
    smallest Hessian eigenvalue vanishes; the branches bifurcating there (R > S and R < S)
    are followed in delta = R - S; a fold of alpha(delta) on the R > S branch is alpha_s
    (first order, then alpha_c from equal free energies), no fold means a continuous
    transition (alpha_s = alpha_c = alpha_d, order 2).  K is any real > 1 or ``math.inf``
    (then beta f / K reduces to phi(R), see the module docstring).

    ``method``: "continuation" (the generic engine :mod:`statmech.continuation`: branches,
    folds, branch points and coexistence found from the free energy, gradient and Hessian
    only), "direct" (the delta-parametrized solver above; about 0.05 s per K), or "auto"
    (= "continuation" for finite K; an engine failure raises ConvergenceError, there is no
    silent fallback -- "direct" is kept as an independent cross-check).
    ``K`` may be a sequence: then a list of :class:`Transitions`; with the engine, the fold,
    coexistence and stability-change lines are continued in K (two-parameter continuation)
    from one analysis at the smallest K > 2, which makes K = 2..50 take about a second.
    Accuracy: about 1e-10 relative (tests compare both methods and mpmath).
    """
    info = activation_info(activation)
    check_choice("method", method, ("auto", "continuation", "direct"))
    if np.ndim(K) > 0:
        Ks = [_check_K(k) for k in np.asarray(K, dtype=float).ravel()]
        if method == "direct":
            return [transitions(k, info, method="direct") for k in Ks]
        return _transitions_sweep(info, Ks)
    K = _check_K(K)
    if math.isinf(K):
        if info.dm0 <= 0:
            raise ValueError("activation must have E[g'(z)] != 0 for K = inf")
        return _transitions_inf(info)
    if method in ("auto", "continuation"):
        # no silent fallback: an engine failure is a ConvergenceError with its diagnostics
        return _transitions_continuation(info, K)
    return _transitions_direct(info, K)


def continuation_problem(K, activation="erf", alpha0=0.0, x0=(0.0, 0.0, 0.0), tol=None):
    """The site-symmetric beta f as a :class:`statmech.continuation.Problem`, p = alpha.

    Order parameters y = (R, (K-1) S, (K-1) C) (``names`` "R", "KS", "KC"): the collective
    scaling keeps the Hessian well conditioned at large K (S, C = O(1/K)); x0 is given in
    (R, S, C).  Free energy, gradient and Hessian are the generated kernels of seed Eq. 20
    (eps_g corrected), transformed linearly; ``params = {"K": K}``.  ``tol`` defaults to
    1e-12 (1 + alpha0 K), the rounding floor of the gradient.
    """
    from . import continuation as ct
    K = _check_K(K, allow_inf=False)
    info = activation_info(activation)
    k = _kern

    def M(K):
        return np.array([1.0, 1.0 / (K - 1.0), 1.0 / (K - 1.0)])

    code, cc, m0, m1, fgh = info.code, info.cc, info.m0, info.m1, k.fgh

    def fg(y, p, K):
        K = float(K)
        c = 1.0 / (K - 1.0)
        return fgh(code, cc, m0, m1, float(p), K, float(y[0]), float(y[1]) * c, float(y[2]) * c), c

    def f(y, p, K):
        return fg(y, p, K)[0][0]

    def g(y, p, K):
        o, c = fg(y, p, K)
        return np.array((o[1], o[2] * c, o[3] * c))

    def h(y, p, K):
        o, c = fg(y, p, K)
        c2 = c * c
        return np.array(((o[4], o[5] * c, o[6] * c), (o[5] * c, o[7] * c2, o[8] * c2), (o[6] * c, o[8] * c2, o[9] * c2)))

    def dom(y, p):
        x = M(K) * np.asarray(y, dtype=float)
        return bool(p >= 0 and k.in_domain(K, x[0], x[1], x[2]))
    tol = 1e-12 * (1.0 + abs(alpha0) * K) if tol is None else tol
    return ct.Problem(free_energy=f, gradient=g, hessian=h, x0=np.asarray(x0, dtype=float) / M(K), p0=float(alpha0),
                      params={"K": K}, in_domain=dom, names=("R", "KS", "KC"), p_name="alpha", tol=max(tol, 1e-11))


def _transitions_continuation(info, K):
    """Transitions found by the generic continuation engine from the free energy alone:
    branches traced from the minima at the top of the range (and from R = S = C = 0),
    branch points / stability changes (alpha_d), folds (alpha_s) and coexistence (alpha_c)."""
    from . import continuation as ct
    # range: beyond the point where the R = S branch becomes unstable (numba scan)
    amax = 40.0 * math.pi * K + 400.0
    grid = np.concatenate([[0.0], np.geomspace(0.05, amax, 300)])
    out = _trace(info, K, grid, np.zeros(3), True)
    ok = out[:, 9] == 1.0
    bad = np.where(ok & (out[:, 6] <= 0))[0]
    if bad.size == 0:
        return Transitions(K, info.name, None, None, None, None, {"solver": "continuation"})
    p_top = float(1.15 * grid[bad[0]] + 1.0)
    top = _spec_starts_at(info, K, p_top)
    u_top = _unspecialized_path(info, K, p_top)
    prob = continuation_problem(K, info, p_top, u_top[:3])
    scale = np.array([1.0, K - 1.0, K - 1.0])
    starts = [u_top[:3] * scale] + [r[:3] * scale for r in top.values()]
    an = ct.analyze(prob, 0.0, p_top, starts=starts, scan=0, ds=0.01)

    def rs(y):
        return float(y[0] - y[1] / (K - 1.0))

    def is_u(x):
        return abs(rs(x)) <= 1e-6 * (1 + abs(x[0]))
    sps = an.special_points
    ad = [sp.p for sp in sps if sp.kind in ("stability_change", "branch_point") and is_u(sp.x)]
    details = {"solver": "continuation", "branches": len(an.branches),
               "special_points": [(sp.kind, float(sp.p), tuple(map(float, sp.x / scale))) for sp in sps]}
    if not ad:
        raise ConvergenceError("continuation: no instability of the R = S branch found", diagnostics={"K": K})
    alpha_d = float(min(ad))
    # polish: the engine's branch-point location is limited by the conditioning at large K;
    # refine alpha_d by Brent on the smallest Hessian eigenvalue of the R = S branch near it
    details["alpha_d_engine"] = alpha_d
    try:
        U = _UCache(info, K)
        lo, hi = alpha_d * (1 - 1e-4), alpha_d * (1 + 1e-4)
        alpha_d = float(root_scalar(lambda a: U.row(a)[6], (lo, hi), xtol=1e-14, rtol=1e-15).x[0])
    except ConvergenceError:
        pass
    folds = [sp for sp in sps if sp.kind == "fold" and rs(sp.x) > 1e-7 * (1 + abs(sp.x[0])) and sp.p < alpha_d]
    afold = [sp for sp in sps if sp.kind == "fold" and rs(sp.x) < -1e-7 * (1 + abs(sp.x[0])) and sp.p < alpha_d]
    details["anti_specialized_fold"] = float(min(sp.p for sp in afold)) if afold else None
    if not folds:
        # does a specialized branch exist at all (R > S beyond alpha_d)?
        spec = any(np.any(b.x[:, 0] - b.x[:, 1] > 1e-6) for b in an.branches)
        if not spec:
            raise ConvergenceError("continuation: no specialized branch found", diagnostics={"K": K})
        return Transitions(K, info.name, alpha_d, alpha_d, alpha_d, 2, details)
    fold = min(folds, key=lambda sp: sp.p)
    alpha_s = float(fold.p)
    cx = [c for c in an.coexistence
          if c.stable1 and c.stable2 and ((is_u(c.x1) and rs(c.x2) > 1e-7) or (is_u(c.x2) and rs(c.x1) > 1e-7))]
    alpha_c = float(min(c.p for c in cx)) if cx else None
    if alpha_c is None:
        raise ConvergenceError("continuation: no coexistence of the specialized and unspecialized minima",
                               diagnostics={"K": K})
    sc = [sp for sp in sps if sp.kind == "stability_change" and is_u(sp.x)]
    details["_engine"] = {"problem": prob, "fold": fold, "coexistence": min(cx, key=lambda c: c.p),
                          "stability_change": min(sc, key=lambda sp: sp.p) if sc else None}
    return Transitions(K, info.name, alpha_s, alpha_c, alpha_d, 1, details)


def _transitions_sweep(info, Ks):
    """Transitions at many K through the engine's two-parameter continuation: one analysis at
    the smallest K > 2, then the fold (alpha_s), the coexistence point (alpha_c) and the stability
    change of R = S (alpha_d) are continued in K and re-solved exactly at every requested K
    (``Curve.p_at``); alpha_d is then polished like in the one-K path (Brent on the smallest
    Hessian eigenvalue of the R = S branch within 1e-6 of the engine value; in (R, S, C) the soft
    eigenvalue carries less rounding noise than in the collective coordinates of the engine
    problem).  K <= 2 (second order) and K = inf are computed one by one.  A line that cannot be
    continued, or a K it does not reach, raises ConvergenceError (no fallback)."""
    from . import continuation as ct
    res = {}
    big = sorted(k for k in set(Ks) if math.isfinite(k) and k > 2.0)
    curves = {}
    if len(big) >= 2:
        t0 = _transitions_continuation(info, big[0])
        eng = t0.details.get("_engine") if t0.order == 1 else None
        if eng is None or eng["stability_change"] is None:
            raise ConvergenceError("transitions: no first-order transition at the smallest K to continue in K",
                                   diagnostics={"K": big[0], "order": t0.order})
        res[big[0]] = t0
        for key, pt in (("alpha_s", eng["fold"]), ("alpha_c", eng["coexistence"]),
                        ("alpha_d", eng["stability_change"])):
            c = ct.continue_point(eng["problem"], pt, "K", big[0], big[-1], ds=0.05)
            if c.q.max() < big[-1] * (1 - 1e-12):
                raise ConvergenceError(f"transitions: the {key} line stopped at K = {c.q.max():.6g} "
                                       f"(status {c.status}) before K = {big[-1]}",
                                       diagnostics={"line": key, "status": c.status, "K_reached": float(c.q.max()),
                                                    "steps": c.branch.steps, "rejected": c.branch.rejected})
            curves[key] = c
    for K in big[1:]:
        vals = {}
        for key in ("alpha_s", "alpha_c", "alpha_d"):
            try:
                vals[key] = curves[key].p_at(K)
            except (ConvergenceError, ValueError) as exc:
                raise ConvergenceError(f"transitions: re-solving the {key} line at K = {K} failed",
                                       diagnostics={"line": key, "K": K, "error": repr(exc)}) from exc
        det = {"solver": "continuation (two-parameter in K)", "alpha_d_engine": vals["alpha_d"]}
        try:
            U = _UCache(info, K)
            ad = vals["alpha_d"]
            vals["alpha_d"] = float(root_scalar(lambda a: U.row(a)[6], (ad * (1 - 1e-6), ad * (1 + 1e-6)),
                                                xtol=1e-14, rtol=1e-15).x[0])
        except ConvergenceError:
            det["alpha_d_polish"] = "not bracketed within 1e-6: engine value kept"
        res[K] = Transitions(K, info.name, vals["alpha_s"], vals["alpha_c"], vals["alpha_d"], 1, det)
    out = []
    for K in Ks:
        if K not in res:
            res[K] = transitions(K, info)
        out.append(res[K])
    return out


def infinite_K_branch(R, activation="relu"):
    r"""K = inf: the stationary curve of phi(R) = beta f / K as alpha(R) (parametric in R).

    phi'(R) = 0 with phi from the module docstring gives alpha(R) = s'(R) / E'(R); returns a
    dict with ``alpha``, ``R``, ``generalization_error`` (per unit, eps_inf at sigma = 1 - R,
    gamma = 0), ``free_energy`` (phi) and ``curvature`` (phi'' > 0: a minimum).  R = 0 (the
    unspecialized plateau) is a stationary point for every alpha.  Vectorized over R in (-1, 1), R != 0.
    """
    R = np.atleast_1d(np.asarray(check_range("R", R, -1.0, 1.0, lo_open=True, hi_open=True), dtype=float))
    info = activation_info(activation)
    if info.dm0 <= 0:
        raise ValueError("activation must have E[g'(z)] != 0 for K = inf")
    out = {k: np.empty(R.shape) for k in ("alpha", "generalization_error", "free_energy", "curvature")}
    for i, r in enumerate(R):
        mr = _kern.moments(info.code, r, info.cc)
        d0 = _kern.finf_red(0.0, r, info.m1, info.dm0, *mr)[1]
        d1 = _kern.finf_red(1.0, r, info.m1, info.dm0, *mr)[1]
        a = -d0 / (d1 - d0) if r != 0 else np.nan
        o = _kern.finf_red(a, r, info.m1, info.dm0, *mr)
        out["alpha"][i], out["free_energy"][i], out["curvature"][i], out["generalization_error"][i] = a, o[0], o[2], o[3]
    out["R"] = R
    return out


def _learning_curve_continuation(info, K, alphas):
    from . import continuation as ct
    top = float(alphas[-1])
    if top <= 0:
        raise ValueError("alphas must contain a value > 0 for method='continuation'")
    u_top = _unspecialized_path(info, K, top)
    spec = _spec_starts_at(info, K, top)
    scale = np.array([1.0, K - 1.0, K - 1.0])
    prob = continuation_problem(K, info, top, u_top[:3])
    an = ct.analyze(prob, 0.0, top, starts=[u_top[:3] * scale] + [r[:3] * scale for r in spec.values()],
                    scan=0, ds=0.01)
    branches = {}
    n = alphas.size
    for b in an.branches:
        X = b.x / scale
        P = b.p
        # monotone sheets in p (cut at folds)
        d = np.sign(np.diff(P))
        rs = X[:, 0] - X[:, 1]
        cls = np.where(np.abs(rs) <= 1e-7 * (1 + np.abs(X[:, 0])), 0, np.sign(rs))
        cuts = sorted(set([0, P.size] + [i + 1 for i in range(1, d.size) if d[i] != d[i - 1] and d[i] != 0]
                          + [i + 1 for i in range(cls.size - 1) if cls[i] != cls[i + 1] and cls[i] * cls[i + 1] != 0]))
        for a0, a1 in zip(cuts[:-1], cuts[1:]):
            lo, hi = max(a0 - 1, 0), a1
            ps, xs = P[lo:hi], X[lo:hi]
            if ps.size < 2:
                continue
            order = np.argsort(ps)
            ps, xs = ps[order], xs[order]
            out = np.full((n, 12), np.nan)
            out[:, 9] = 0.0
            tol_a = 1e-6 * (1 + ps[-1])
            inside = (alphas >= ps[0] - tol_a) & (alphas <= ps[-1] + tol_a)
            for i in np.where(inside)[0]:
                x0 = np.array([np.interp(alphas[i], ps, xs[:, j]) for j in range(3)])
                unspec = abs(x0[0] - x0[1]) <= 1e-7 * (1 + abs(x0[0]))
                row = _trace(info, K, alphas[i:i + 1], x0, unspec)[0]
                if row[9] == 1.0 and np.max(np.abs(row[:3] - x0)) < 1e-2:
                    out[i] = row
            ok = out[:, 9] == 1.0
            if not ok.any():
                continue
            sel = out[ok]
            rsd = np.median(sel[:, 0] - sel[:, 1])
            name = "unspecialized" if abs(rsd) <= 1e-7 else ("specialized" if rsd > 0 else "anti-specialized")
            if np.mean(out[ok, 6] > 0) < 0.5:
                name += "-unstable"
            key, k = name, 2
            while key in branches:
                key = f"{name}-{k}"
                k += 1
            branches[key] = _branch_from(key, alphas, out)
    names = list(branches)
    F = np.stack([np.where(branches[m].stable, np.ma.filled(branches[m].free_energy, np.inf), np.inf) for m in names])
    best = np.argmin(F, axis=0)
    have = np.isfinite(F.min(axis=0))
    eq = {"branch": np.array([names[b] if h else "" for b, h in zip(best, have)])}
    for key in ("R", "S", "C", "generalization_error", "free_energy"):
        vals = np.stack([np.ma.filled(getattr(branches[m], key), np.nan) for m in names])
        eq[key] = np.ma.masked_invalid(np.where(have, vals[best, np.arange(n)], np.nan))
    return LearningCurve(K, info.name, alphas, branches, eq)
