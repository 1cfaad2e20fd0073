r"""Perceptron: Gardner analysis of storage and teacher--student learning (replica symmetric).

Spherical weights (``W.W = N``) and Ising weights (``W_i = +-1``); random +-1 labels
(storage, stability ``kappa``) or labels from a teacher of the same kind
(Gibbs learning in the version space).  Every formula below was re-derived (see
``docs/perceptron.md``); the corrections to the thesis (Tartaglione 2019, chapter 2,
``/work/shared/seeds/004``) are stated where they apply.

Notation
--------
``Dt`` is the standard Gaussian measure, ``H(x) = int_x^inf Dt``, ``G`` the
Gaussian density, ``IM(x) = G(x)/H(x)`` the inverse Mills ratio, and for storage
``u(t) = (kappa - sqrt(q) t)/sqrt(1-q)``; for teacher--student ``a = sqrt(R/(1-R))``.

RS free entropies (typical ``(1/N) <log Z>``; the value at the saddle is the entropy)
--------------------------------------------------------------------------------------
spherical storage, ``x = [q]`` (log of the *fraction* of the sphere; 0 at alpha = 0)::

    phi = 1/2 log(1-q) + q/(2(1-q)) + alpha E_t log H(u)                       (S1)
    d phi/dq = q/(2(1-q)^2) - alpha E_t[IM(u)^2]/(2(1-q))  =>  q/(1-q) = alpha E_t IM(u)^2   (S2)

(S2) is thesis Eq. 2.29 *corrected*: the thesis prints the prefactor ``alpha/pi``;
the correct one is ``alpha/(2 pi)`` (``IM^2 = e^{-u^2}/(2 pi H^2)``), as required by the
``q -> 1`` limit ``1/alpha_c = int_{-inf}^kappa Dt (kappa-t)^2`` (Eq. 2.30, correct).

spherical teacher--student (Gibbs learning, Nishimori line ``q = R``), ``x = [R]``::

    phi = 1/2 log(1-R) + R/2 + 2 alpha E_t[H(-a t) log H(-a t)]                 (T1)
    d phi/dR = (alpha E_t[2 G(a t) IM(-a t)] - R)/(2(1-R))  =>  R = alpha E_t[2 G(a t) IM(-a t)]   (T2)

(T2) is equivalent to thesis Eq. 2.25 (``R/sqrt(1-R) = (alpha/pi) int Dt e^{-R t^2/2}/H(sqrt(R) t)``,
correct as printed) after the substitution ``t -> t sqrt(1-R)``.

binary (Ising) storage, ``x = [q, q_hat]`` (log of the *number* of solutions; log 2 at alpha = 0)::

    phi = -q_hat (1-q)/2 + E_z log 2cosh(sqrt(q_hat) z) + alpha E_t log H(u)         (B1)
    q = E_z tanh^2(sqrt(q_hat) z),   q_hat = alpha E_t[IM(u)^2]/(1-q)               (B2)

thesis Eqs. 2.38-2.40 (correct as printed; Gardner & Derrida 1988).

binary teacher--student (Györgyi 1990), Nishimori line ``q = R``, ``q_hat = R_hat``, ``x = [R, R_hat]``::

    phi = -R_hat (1+R)/2 + E_z log 2cosh(sqrt(R_hat) z + R_hat) + 2 alpha E_t[H(-a t) log H(-a t)]   (G1)
    R = E tanh(b) = E tanh^2(b),   R_hat = alpha E_t[2 G(a t) IM(-a t)]/(1-R),   b = sqrt(R_hat) z + R_hat   (G2)

(stationarity of (G1) in R_hat gives ``R = 2 E tanh - E tanh^2``, equal to both by the
Nishimori identity ``E tanh(b) = E tanh^2(b)``; R is computed as ``E tanh^2`` for small R
and ``1 - E sech^2`` near 1, positive integrands without cancellation.)

(the thesis has no equation for this case).  The perfect-generalization state ``R = 1``
(``R_hat = inf``) has entropy 0; the first-order transition ``alpha_c`` is where the
poor-generalization branch's entropy crosses 0, the spinodal ``alpha_spinodal`` is the
fold where that branch ends.

Stability
---------
``hessian_eigenvalues`` are those of the Hessian of ``phi`` in ``x`` at the saddle.
``replicon`` is the (dimensionless) AT eigenvalue; RS is locally stable when it is > 0::

    replicon = 1 - alpha E_out[(d^2_h log Z_out)^2] E_in[(d^2_b log Z_in)^2]

which is ``1 - alpha E_t[(IM(u)(IM(u)-u))^2]`` for spherical storage (Gardner & Derrida 1988;
< 0 for kappa < 0 near capacity) and ``1 - alpha E_t[(IM(u)(IM(u)-u))^2] E_z[sech^4]/(1-q)^2``
for Ising weights.  For teacher--student ``E_out`` averages over the teacher's label.

How the saddle points are solved
--------------------------------
Every model's saddle-point equations are eliminated to one explicit map
``alpha = A(p)`` along the solution branch (``p = q`` or ``R`` for spherical weights,
``p = q_hat`` for Ising weights), and ``A(p) = alpha`` is solved in ``y = logit p`` or
``log p`` by Newton (``statmech.saddle.newton``, derivative from the sympy kernels, domain
bound on the binary teacher--student poor branch), falling back to bracket expansion +
Brent (``statmech.saddle.root_scalar``); ``residual`` is the (scaled) max-norm of the
gradient of ``phi`` at the result; a residual >= 1e-10 raises ``ConvergenceError`` (so a
returned result always has ``converged = True``).

Quadrature: Gaussian expectations over ``t`` use Gauss--Hermite (48-96 nodes, by q) while the
integrand is smooth (``q <= 0.6``) and otherwise a tanh--sinh rule split at the sharp
layer ``t = kappa/sqrt(q)`` (``statmech.gaussian.piecewise_nodes``), shifted so that the
rule's nodes are cached: ``E_t f(t) = E_s[f(s + c) e^{-c s - c^2/2}]``.  Tested against
mpmath to <= 1e-13 relative for 0 <= q <= 1 - 1e-10 (``tests/test_perceptron.py``).

Free-entropy functionals for the continuation engine
----------------------------------------------------
``<model>_free_entropy(x, alpha[, kappa])``, ``<model>_gradient(...)`` (alias
``<model>_residual``: the saddle-point equations) and ``<model>_hessian(...)`` for
``model`` in ``spherical_storage``,
``spherical_teacher_student``, ``binary_storage``, ``binary_teacher_student``.
All are affine in ``alpha`` (``phi = phi_entropic(x) + alpha phi_energetic(x)``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np
import sympy as sp

from .errors import ConvergenceError, check_choice, check_range
from .gaussian import gauss_hermite, piecewise_nodes
from .saddle import SaddlePoint, newton, root_scalar, stack
from .symbolic import Expectation, Gauss, H, InvMills, LogH, Log2Cosh, Scalar, kernels

__all__ = [
    "gardner_capacity", "spherical_storage", "spherical_teacher_student",
    "spherical_teacher_student_asymptotic", "SPHERICAL_TS_ASYMPTOTIC_CONSTANT",
    "binary_storage", "binary_capacity", "binary_teacher_student",
    "spherical_storage_at_line", "binary_storage_at_line",
    "binary_teacher_student_transition", "BinaryTeacherStudentTransition",
    "spherical_storage_free_entropy", "spherical_storage_gradient", "spherical_storage_hessian",
    "spherical_teacher_student_free_entropy", "spherical_teacher_student_gradient",
    "spherical_teacher_student_hessian",
    "binary_storage_free_entropy", "binary_storage_gradient", "binary_storage_hessian",
    "binary_teacher_student_free_entropy", "binary_teacher_student_gradient",
    "binary_teacher_student_hessian",
    "spherical_storage_residual", "spherical_teacher_student_residual", "binary_storage_residual",
    "binary_teacher_student_residual",
]


# =========================================================================== equations
@kernels
def _K():
    """Perceptron integrands (sympy).  ``s`` is the quadrature variable, ``c`` a shift:
    ``t = s + c`` and the weight ``e^{-c s - c^2/2}`` makes ``E_s[f(s+c) w] = E_t[f(t)]``."""
    s, q, p, k, c, qh = sp.symbols("s q p kappa c q_hat", real=True)
    # p stands for 1 - q, passed separately so that 1 - q keeps full relative precision
    # near q = 1; total derivatives in q are d/dq = diff(., q) - diff(., p)
    t = s + c
    w = sp.exp(-c * s - c ** 2 / 2)

    def dq(e, n=1):
        for _ in range(n):
            e = sp.diff(e, q) - sp.diff(e, p)
        return e

    # storage output channel, u = (kappa - sqrt(q) t)/sqrt(1-q)
    u = (k - sp.sqrt(q) * t) / sp.sqrt(p)
    im2 = InvMills(u) ** 2
    # log H(u) = -u^2/2 - log(2 pi)/2 - log IM(u) for u > 0 reuses IM(u) (one continued
    # fraction per node instead of two in the Gaussian core for u >= 5); exact identity
    log_h = sp.Piecewise((-u ** 2 / 2 - sp.log(2 * sp.pi) / 2 - sp.log(InvMills(u)), u > 0), (LogH(u), True))
    st_out = (log_h,                                     # E log H(u)           (S1, B1)
              im2,                                       # E IM(u)^2            (S2, B2)
              dq(im2),                                   # d/dq E IM^2          (Jacobian)
              (InvMills(u) * (InvMills(u) - u)) ** 2,    # replicon
              dq(LogH(u)))                       # raw d/dq E log H (test of S2)
    # teacher-student output channel, a = sqrt(R/(1-R)); q stands for R
    a = sp.sqrt(q / p)
    hl = 2 * H(-a * t) * LogH(-a * t)
    gi = 2 * Gauss(a * t) * InvMills(-a * t)
    ts_out = (hl,                                        # (T1, G1)
              gi,                                        # (T2, G2)
              dq(gi),
              2 * H(-a * t) * (InvMills(-a * t) * (InvMills(-a * t) + a * t)) ** 2,   # replicon
              dq(hl))                                    # raw d/dR (test of T2)
    # Ising entropic channel (storage), b = sqrt(q_hat) z, z = t
    b = sp.sqrt(qh) * t
    sech2 = 4 * sp.exp(-2 * Log2Cosh(b))                 # 1 - tanh^2 without cancellation
    is_in = (Log2Cosh(b), sech2, sp.diff(sech2, qh), sech2 ** 2,
             sp.diff(Log2Cosh(b), qh), sp.diff(Log2Cosh(b), qh, 2), sp.tanh(b) ** 2)
    # Ising entropic channel (teacher-student), b = sqrt(q_hat) z + q_hat
    b2 = sp.sqrt(qh) * t + qh
    omt = 2 * sp.exp(-b2 - Log2Cosh(b2))                 # 1 - tanh(b) without cancellation
    sech2b = 4 * sp.exp(-2 * Log2Cosh(b2))
    ts_in = (Log2Cosh(b2), omt, sech2b,                 # E log2cosh, E(1 - tanh), E sech^2
             sp.diff(omt, qh), sp.diff(sech2b, qh), sech2b ** 2,
             sp.diff(Log2Cosh(b2), qh), sp.diff(Log2Cosh(b2), qh, 2), sp.tanh(b2) ** 2)
    return {
        "st_out": Expectation(s, (q, p, k, c), tuple(w * e for e in st_out)),
        "ts_out": Expectation(s, (q, p, c), tuple(w * e for e in ts_out)),
        "is_in": Expectation(s, (qh, c), tuple(w * e for e in is_in)),
        "ts_in": Expectation(s, (qh, c), tuple(w * e for e in ts_in)),
        # 1/alpha_c(kappa) = int_{-inf}^kappa Dt (kappa - t)^2  (thesis Eq. 2.30)
        "gardner_inv": Scalar((k,), (1 + k ** 2) * H(-k) + k * Gauss(k)),
    }


# =========================================================================== quadrature rules
_GH_N = 128          # Gauss-Hermite order in the smooth regime
_PW_LEVEL = 4        # tanh-sinh level of the (shifted) piecewise rule
_Q_SMOOTH = 0.6      # q <= _Q_SMOOTH: integrand smooth on the unit scale -> Gauss-Hermite
_C_SHIFT_MAX = 6.0   # largest shift for which the cached shifted rule is used
_QH_SMOOTH = 0.5     # Ising channels: q_hat <= this -> Gauss-Hermite


@lru_cache(maxsize=4)
def _pw0(level=_PW_LEVEL):
    return piecewise_nodes([0.0], level)


# Gauss-Hermite orders by smoothness (q, R or q_hat): each reaches <= 2e-15 relative vs mpmath
_GH_T = ((0.4, 48), (0.5, 64), (0.6, 96))      # storage / teacher-student output channels, by q
_GH_Z = ((0.3, 64), (0.5, 96))                 # Ising channels, by q_hat


def _gh_n(x, table):
    for bound, n in table:
        if x <= bound:
            return n
    return _GH_N


def _rule(break_at, smooth, n=_GH_N):
    """(nodes, weights, shift) for E_t f(t) with f sharp at t = break_at."""
    if smooth:
        z, w = gauss_hermite(n)
        return z, w, 0.0
    if abs(break_at) <= _C_SHIFT_MAX:
        z, w = _pw0()
        return z, w, float(break_at)
    z, w = piecewise_nodes([break_at], _PW_LEVEL + 1)
    return z, w, 0.0


def _st_out(q, kappa, p=None):
    """E_t of (log H, IM^2, d/dq IM^2, replicon term, raw d/dq log H) at u(t); p = 1 - q."""
    p = 1.0 - q if p is None else p
    z, w, c = _rule(kappa / math.sqrt(q) if q > 0 else 0.0, q <= _Q_SMOOTH, _gh_n(q, _GH_T))
    return _K.st_out(z, w, q, p, kappa, c)


def _ts_out(R, p=None):
    # the whole integrand lives in the layer |t| <~ sqrt(1-R): refine the tanh-sinh level with R
    if R <= _Q_SMOOTH:
        z, w = gauss_hermite(_gh_n(R, _GH_T))
    else:
        z, w = _pw0(_PW_LEVEL if R <= 0.99 else _PW_LEVEL + 1 if R <= 0.9999 else _PW_LEVEL + 2)
    return _K.ts_out(z, w, R, 1.0 - R if p is None else p, 0.0)


def _is_in(qh):
    # layer of width 1/sqrt(q_hat) at z = 0: refine the level with q_hat (<= 3e-13 vs mpmath to 1e10)
    if qh <= _QH_SMOOTH:
        z, w = gauss_hermite(_gh_n(qh, _GH_Z))
    else:
        z, w = _pw0(_PW_LEVEL if qh <= 1e3 else _PW_LEVEL + 1 if qh <= 1e8 else _PW_LEVEL + 2)
    return _K.is_in(z, w, qh, 0.0)


def _ts_in(qh):
    # layer at z = -sqrt(q_hat): cached shifted rule up to q_hat = 16, then breaks at the layer
    # and one unit above it, level 6 (<= 2e-15 vs mpmath to q_hat = 100, ~2e-7 at 300)
    if qh <= _QH_SMOOTH or qh <= 16.0:
        z, w, c = _rule(-math.sqrt(qh), qh <= _QH_SMOOTH, _gh_n(qh, _GH_Z))
        return _K.ts_in(z, w, qh, c)
    c = -math.sqrt(qh)
    z, w = piecewise_nodes([c, c + 1.0], _PW_LEVEL + 2)
    return _K.ts_in(z, w, qh, 0.0)


# =========================================================================== validation helpers
def _alpha(alpha, hi=math.inf, name="alpha"):
    return check_range(name, alpha, 0.0, hi)


def _kappa(kappa):
    return check_range("kappa", kappa)


def _scalar_or_array(arr, out):
    return float(out) if np.ndim(arr) == 0 else out


def _x(x, n, names):
    x = np.atleast_1d(np.asarray(x, dtype=float))
    if x.shape != (n,):
        raise ValueError(f"x must be a vector [{', '.join(names)}] of length {n}, got shape {x.shape}")
    return x


def _open_unit(name, v):
    check_range(name, v, 0.0, 1.0, lo_open=True, hi_open=True)
    return float(v)


# =========================================================================== Gardner capacity
def _gardner_inv(kappa):
    """1/alpha_c(kappa) = int_{-inf}^kappa Dt (kappa-t)^2, accurate for every kappa.

    For kappa >= -3 the closed form (1+k^2) H(-k) + k G(k) (cancellation <= 40x);
    for kappa < -3 it is G(x) F_2(x), x = -kappa, with F_n(x) = int_0^inf s^n e^{-x s - s^2/2} ds
    from Miller's backward recurrence F_{n-1} = (F_{n+1} + x F_n)/n normalized by
    F_0 = H(x)/G(x) (no cancellation).
    """
    k = np.asarray(kappa, dtype=float)
    out = np.asarray(_K.gardner_inv_v(np.maximum(k, -3.0)), dtype=float).copy()
    neg = k < -3.0
    if np.any(neg):
        x = -k[neg] if k.ndim else -k
        from scipy import special
        a = np.zeros_like(x)
        b = np.full_like(x, 1e-200)
        f2 = None
        for n in range(80, 0, -1):
            a, b = b, (a + x * b) / n
            if n == 3:
                f2 = b.copy()
        mills = math.sqrt(math.pi / 2) * special.erfcx(x / math.sqrt(2))
        with np.errstate(under="ignore"):
            val = (f2 / b) * mills * (np.exp(-0.5 * x * x) / math.sqrt(2 * math.pi))
        if k.ndim:
            out[neg] = val
        else:
            out = np.asarray(val)
    return out


def gardner_capacity(kappa=0.0):
    r"""Storage capacity of the spherical perceptron, ``alpha_c(kappa)`` (vectorized).

    ``1/alpha_c = int_{-inf}^kappa Dt (kappa - t)^2 = (1+kappa^2) H(-kappa) + kappa G(kappa)``
    (thesis Eq. 2.30, Gardner 1988).  ``alpha_c(0) = 2``, ``alpha_c(1) = 0.519572229605...``.
    For ``kappa < 0`` this is the RS value, which is AT-unstable at capacity (see
    :func:`spherical_storage`).  Returns ``inf`` where alpha_c exceeds the float range
    (kappa < -38.4).  Relative accuracy ~1e-15 (tested against mpmath).
    """
    k = _kappa(kappa)
    with np.errstate(divide="ignore", over="ignore"):
        out = 1.0 / _gardner_inv(k)
    return _scalar_or_array(k, out)


def _bracket_solve(f, y0, step=1.0, lo=-math.inf, hi=math.inf, maxexp=60):
    """Root of increasing f(y) by bracket expansion from y0 then Brent (saddle.root_scalar)."""
    f0 = f(y0)
    if f0 == 0.0:
        return y0, 0
    a = b = y0
    fa = fb = f0
    n = 0
    if f0 < 0:
        while fb < 0:
            a, fa = b, fb
            b = min(b + step, hi) if b + step < hi else 0.5 * (b + hi)
            fb = f(b)
            step *= 2.0
            n += 1
            if n > maxexp:
                raise ConvergenceError("could not bracket the saddle point", x=[a, b], diagnostics={"f(b)": fb})
    else:
        while fa > 0:
            b, fb = a, fa
            a = max(a - step, lo) if a - step > lo else 0.5 * (a + lo)
            fa = f(a)
            step *= 2.0
            n += 1
            if n > maxexp:
                raise ConvergenceError("could not bracket the saddle point", x=[a, b], diagnostics={"f(a)": fa})
    info = root_scalar(f, (a, b), xtol=1e-15)
    return float(info.x[0]), info.iterations + n


def _solve_y(fd, y0, hi=math.inf, fallback=None):
    """Root of ``f(y)`` with ``fd(y) -> (f, f')`` (f' from the sympy kernels):
    Newton with backtracking (``statmech.saddle.newton``) from ``y0``, staying below ``hi``;
    on failure the bracketed Brent solve ``fallback()`` (default: bracket expansion from
    y0 + ``statmech.saddle.root_scalar``).  Returns ``(y, iterations)``."""
    memo = {}

    def ev(y):
        key = float(y[0])
        if key not in memo:
            memo.clear()
            memo[key] = fd(key)
        return memo[key]

    try:
        info = newton(lambda y: np.array([ev(y)[0]]), [y0], lambda y: np.array([[ev(y)[1]]]),
                      tol=1e-14, xtol=1e-14, maxiter=40,
                      in_domain=None if hi == math.inf else (lambda y: y[0] < hi))
        return float(info.x[0]), info.iterations
    except (ConvergenceError, ValueError, ZeroDivisionError, OverflowError):
        if fallback is not None:
            return fallback()
        return _bracket_solve(lambda y: fd(y)[0], y0)


_RES_TOL = 1e-10


def _check_residual(res, it, scope):
    """True if the saddle-point residual is below 1e-10, else raise ConvergenceError."""
    if res < _RES_TOL and math.isfinite(res):
        return True
    raise ConvergenceError("perceptron saddle point: residual of the saddle-point equations too large",
                           residual=float(res), iterations=it,
                           diagnostics={k: float(v) for k, v in scope.items()
                                        if k in ("alpha", "kappa", "q", "qh", "R", "rh")
                                        and isinstance(v, (int, float))})


def _logit(q):
    return math.log(q) - math.log1p(-q)


def _expit(y):
    return 1.0 / (1.0 + math.exp(-y)) if y >= 0 else math.exp(y) / (1.0 + math.exp(y))


# =========================================================================== spherical storage
def spherical_storage_free_entropy(x, alpha, kappa=0.0):
    """RS free entropy (S1) of the spherical storage problem at ``x = [q]`` (float)."""
    q = _open_unit("q", _x(x, 1, ["q"])[0])
    a = float(_alpha(alpha))
    k = float(_kappa(kappa))
    e = _st_out(q, k)
    return 0.5 * math.log1p(-q) + 0.5 * q / (1 - q) + a * e[0]


def spherical_storage_gradient(x, alpha, kappa=0.0):
    """Gradient (S2) of (S1) in ``x = [q]`` (array of length 1); zero at the saddle point."""
    q = _open_unit("q", _x(x, 1, ["q"])[0])
    a = float(_alpha(alpha))
    e = _st_out(q, float(_kappa(kappa)))
    return np.array([0.5 * q / (1 - q) ** 2 - 0.5 * a * e[1] / (1 - q)])


def spherical_storage_hessian(x, alpha, kappa=0.0):
    """Hessian (1x1) of (S1) in ``x = [q]`` (d/dq of S2, integrand derivative by sympy)."""
    q = _open_unit("q", _x(x, 1, ["q"])[0])
    a = float(_alpha(alpha))
    e = _st_out(q, float(_kappa(kappa)))
    return np.array([[0.5 * (1 + q) / (1 - q) ** 3 - 0.5 * a * (e[1] / (1 - q) ** 2 + e[2] / (1 - q))]])


def _ss_one(alpha, kappa, guess=None):
    ac = 1.0 / float(_gardner_inv(kappa))
    if not alpha < ac:
        raise ValueError(f"alpha must be in [0, gardner_capacity(kappa)) = [0, {ac:.12g}) for kappa={kappa:g}, got {alpha!r}")
    params = {"alpha": alpha, "kappa": kappa}
    if alpha == 0.0:
        return SaddlePoint("perceptron.spherical_storage", params, {"q": 0.0},
                           {"entropy": 0.0}, True, 0.0, 0, np.array([0.5]), 1.0, True)

    la = math.log(alpha)

    def fd(y):  # log alpha(q) - log alpha, alpha(q) = q/((1-q) E IM^2), increasing in q = expit(y)
        q, p = _expit(y), _expit(-y)
        e = _st_out(q, kappa, p)
        return (y - math.log(e[1])) - la, 1.0 - e[2] / e[1] * q * p

    if guess is not None and 0 < guess.q < 1:
        y0 = _logit(guess.q)
    else:  # q/(1-q) ~ alpha IM(kappa)^2 at small alpha; q -> 1 like 1/(alpha_c - alpha) near capacity
        y0 = min(la + 2 * math.log(float(_inv_mills_scalar(kappa))), -math.log1p(-alpha / ac))
    y, it = _solve_y(fd, y0)
    q = _expit(y)
    one_q = _expit(-y)
    e = _st_out(q, kappa, one_q)
    ent = 0.5 * math.log(one_q) + 0.5 * q / one_q + alpha * e[0]
    grad = 0.5 * q / one_q ** 2 - 0.5 * alpha * e[1] / one_q
    hess = 0.5 * (1 + q) / one_q ** 3 - 0.5 * alpha * (e[1] / one_q ** 2 + e[2] / one_q)
    rep = 1.0 - alpha * e[3]
    # residual in the natural units of S2: q/(1-q) - alpha E IM^2
    res = abs(q / one_q - alpha * e[1]) / max(1.0, q / one_q)
    return SaddlePoint("perceptron.spherical_storage", params, {"q": q},
                       {"entropy": ent}, _check_residual(res, it, locals()), res, it,
                       np.array([hess]), rep, bool(rep > 0), {"gradient": grad})


def spherical_storage(alpha, kappa=0.0):
    r"""RS solution of the spherical storage problem (Gardner 1988).

    Solves ``q/(1-q) = alpha E_t IM(u)^2`` (thesis Eq. 2.29 corrected: prefactor
    ``alpha/(2 pi)``, not ``alpha/pi``, in the thesis's ``e^{-u^2}/H^2`` form) and returns
    the typical entropy (S1) = log of the fraction of the sphere that stores all patterns.

    Parameters
    ----------
    alpha : float or array, ``0 <= alpha < gardner_capacity(kappa)``
    kappa : float or array (broadcast with alpha), any finite stability

    Returns
    -------
    SaddlePoint with ``q``, ``entropy``, ``replicon`` (``1 - alpha E[(IM(IM-u))^2]``),
    ``rs_stable`` (False beyond the AT line, which exists for kappa < 0) and
    ``hessian_eigenvalues`` (d^2 phi/dq^2).  Accuracy ~1e-12 relative in q and entropy
    away from alpha_c (the entropy loses digits like 1/(1-q) as alpha -> alpha_c).
    """
    a = _alpha(alpha)
    k = _kappa(kappa)
    return _vectorize(_ss_one, a, k, model="perceptron.spherical_storage")


def _vectorize(fn, *arrays, model):
    b = np.broadcast_arrays(*[np.asarray(x, dtype=float) for x in arrays])
    shape = b[0].shape
    if shape == ():
        return fn(*[float(x) for x in b], guess=None)
    out = []
    prev = None
    for idx in np.ndindex(shape):
        r = fn(*[float(x[idx]) for x in b], guess=prev)
        out.append(r)
        prev = r
    return stack(out, shape, model=model)


# =========================================================================== spherical teacher-student
def spherical_teacher_student_free_entropy(x, alpha):
    """RS free entropy (T1) of Gibbs learning (spherical teacher and student) at ``x = [R]``."""
    R = _open_unit("R", _x(x, 1, ["R"])[0])
    a = float(_alpha(alpha))
    e = _ts_out(R)
    return 0.5 * math.log1p(-R) + 0.5 * R + a * e[0]


def spherical_teacher_student_gradient(x, alpha):
    """Gradient (T2) of (T1) in ``x = [R]``."""
    R = _open_unit("R", _x(x, 1, ["R"])[0])
    a = float(_alpha(alpha))
    e = _ts_out(R)
    return np.array([0.5 * (a * e[1] - R) / (1 - R)])


def spherical_teacher_student_hessian(x, alpha):
    """Hessian (1x1) of (T1) in ``x = [R]``."""
    R = _open_unit("R", _x(x, 1, ["R"])[0])
    a = float(_alpha(alpha))
    e = _ts_out(R)
    return np.array([[0.5 * (a * e[1] - 1.0) / (1 - R) ** 2 + 0.5 * a * e[2] / (1 - R)]])


def _sts_one(alpha, guess=None):
    params = {"alpha": alpha}
    if alpha == 0.0:
        return SaddlePoint("perceptron.spherical_teacher_student", params, {"R": 0.0, "q": 0.0},
                           {"entropy": 0.0, "generalization_error": 0.5}, True, 0.0, 0,
                           np.array([-0.5]), 1.0, True)
    if alpha < _TINY_ALPHA:
        # first order in alpha is exact in double precision: R = 2 alpha/pi (T2 at R -> 0),
        # entropy = 2 alpha E[H(0) log H(0)] = -alpha log 2 (T1), eps = 1/2 - R/pi
        R = 2.0 * alpha / math.pi
        return SaddlePoint("perceptron.spherical_teacher_student", params, {"R": R, "q": R},
                           {"entropy": -alpha * math.log(2.0), "generalization_error": 0.5 - R / math.pi},
                           True, 0.0, 0, np.array([-0.5]), 1.0, True,
                           {"one_minus_R": 1.0, "note": "first-order small-alpha expansion"})

    la = math.log(alpha)

    def fd(y):  # log alpha(R) - log alpha, alpha(R) = R / E[2 G IM], R = expit(y)
        R, p = _expit(y), _expit(-y)
        e = _ts_out(R, p)
        return math.log(R) - math.log(e[1]) - la, p - e[2] / e[1] * R * p

    if guess is not None and 0 < guess.R < 1:
        y0 = _logit(guess.R)
    else:  # R ~ 2 alpha/pi at small alpha, 1 - R ~ (pi c/alpha)^2/2 at large alpha
        y0 = _logit(2 * alpha / math.pi) if alpha < 0.5 else 2 * math.log(alpha) - math.log(0.5 * (math.pi * 0.6246582) ** 2) if alpha > 20 else _logit(min(0.95, 2 * alpha / math.pi / (1 + 2 * alpha / math.pi)))
    y, it = _solve_y(fd, y0)
    R = _expit(y)
    one_r = _expit(-y)
    e = _ts_out(R, one_r)
    ent = 0.5 * math.log(one_r) + 0.5 * R + alpha * e[0]
    hess = 0.5 * (alpha * e[1] - 1.0) / one_r ** 2 + 0.5 * alpha * e[2] / one_r
    res = abs(R - alpha * e[1])  # (T2); R ~ 1 sets the scale
    rep = 1.0 - alpha * e[3]
    eg = math.acos(R) / math.pi if R < 0.5 else math.asin(math.sqrt(one_r * (1 + R))) / math.pi
    return SaddlePoint("perceptron.spherical_teacher_student", params, {"R": R, "q": R},
                       {"entropy": ent, "generalization_error": eg}, _check_residual(res, it, locals()), res, it,
                       np.array([hess]), rep, bool(rep > 0),
                       {"one_minus_R": one_r})


def spherical_teacher_student(alpha):
    r"""Gibbs learning of a spherical teacher by a spherical student (version space, RS).

    Solves ``R = alpha E_t[2 G(a t) IM(-a t)]``, ``a = sqrt(R/(1-R))``, equivalent to
    thesis Eq. 2.25 (``R/sqrt(1-R) = (alpha/pi) int Dt e^{-R t^2/2}/H(sqrt(R) t)``), on the
    Nishimori line ``q = R``.  Returns ``R``, ``generalization_error = arccos(R)/pi``
    (computed as ``arcsin(sqrt((1-R)(1+R)))/pi`` near R = 1, with 1-R kept exactly),
    ``entropy`` (T1, log fraction of the sphere in the version space).
    Published checks: ``R(1) = 0.486263637016``, ``eps(5) = 0.118006033298``.
    ``alpha`` >= 0, float or array.  Relative accuracy ~1e-12.
    """
    a = _alpha(alpha)
    return _vectorize(_sts_one, a, model="perceptron.spherical_teacher_student")


@lru_cache(maxsize=1)
def _ts_asym_constant():
    """c = 1/(sqrt(pi) J), J = int ds G(s)^2/H(-s) = E_s[IM(-s)] (smooth: Gauss-Hermite)."""
    from .gaussian import inv_mills
    z, w = gauss_hermite(200)
    J = float(np.sum(w * inv_mills(-z)))
    return 1.0 / (math.sqrt(math.pi) * J)


def spherical_teacher_student_asymptotic(alpha):
    r"""Large-alpha form of :func:`spherical_teacher_student`: ``eps ~ c/alpha``.

    From (T2) with ``1-R -> 0`` (substitute ``s = a t``): ``R ~ 2 alpha G(0) J / a`` with
    ``J = int ds G(s)^2/H(-s) = E_s[IM(-s)]``, so ``sqrt(1-R) ~ sqrt(pi/2)/(alpha J)`` and
    ``eps = arccos(R)/pi ~ sqrt(2(1-R))/pi = c/alpha`` with ``c = 1/(sqrt(pi) J) = 0.62465819...``
    (Engel & Van den Broeck Eq. 2.43).  Returns a dict with ``generalization_error``
    (``c/alpha``), ``one_minus_R`` (``(pi c/alpha)^2/2``) and ``c``.  alpha > 0.
    """
    a = check_range("alpha", alpha, 0.0, lo_open=True)
    c = _ts_asym_constant()
    eps = c / a
    out = {"generalization_error": eps, "one_minus_R": 0.5 * (math.pi * eps) ** 2, "c": c}
    return {k: (float(v) if np.ndim(v) == 0 else v) for k, v in out.items()}


def __getattr__(name):
    if name == "SPHERICAL_TS_ASYMPTOTIC_CONSTANT":
        return _ts_asym_constant()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# =========================================================================== binary storage
def binary_storage_free_entropy(x, alpha, kappa=0.0):
    """RS free entropy (B1) of the Ising perceptron at ``x = [q, q_hat]`` (thesis Eq. 2.38)."""
    q, qh = _x(x, 2, ["q", "q_hat"])
    q = _open_unit("q", q)
    qh = float(check_range("q_hat", qh, 0.0))
    a = float(_alpha(alpha))
    e = _st_out(q, float(_kappa(kappa)))
    return -0.5 * qh * (1 - q) + float(_is_in(qh)[0]) + a * e[0]


def binary_storage_gradient(x, alpha, kappa=0.0):
    """Gradient of (B1) in ``[q, q_hat]``: ``[q_hat/2 - alpha E IM^2/(2(1-q)), (E sech^2 - (1-q))/2]``
    (the q_hat component after Gaussian integration by parts, exact)."""
    q, qh = _x(x, 2, ["q", "q_hat"])
    q = _open_unit("q", q)
    qh = float(check_range("q_hat", qh, 0.0))
    a = float(_alpha(alpha))
    e = _st_out(q, float(_kappa(kappa)))
    ei = _is_in(qh)
    return np.array([0.5 * qh - 0.5 * a * e[1] / (1 - q), 0.5 * (ei[1] - (1 - q))])


def _bin_hess(alpha, q, p, e, ei):
    hqq = -0.5 * alpha * (e[1] / p ** 2 + e[2] / p)
    return np.array([[hqq, 0.5], [0.5, 0.5 * ei[2]]])


def binary_storage_hessian(x, alpha, kappa=0.0):
    """Hessian (2x2) of (B1) in ``[q, q_hat]``."""
    q, qh = _x(x, 2, ["q", "q_hat"])
    q = _open_unit("q", q)
    qh = float(check_range("q_hat", qh, 0.0))
    a = float(_alpha(alpha))
    return _bin_hess(a, q, 1 - q, _st_out(q, float(_kappa(kappa))), _is_in(qh))


def _bin_branch(y, kappa):
    """Point of the binary-storage RS branch at q_hat = e^y: (alpha, q, p, phi/alpha parts...)."""
    qh = math.exp(y)
    ei = _is_in(qh)
    q, p = float(ei[6]), float(ei[1])
    e = _st_out(q, kappa, p)
    alpha = qh * p / e[1]
    return alpha, qh, q, p, e, ei


def _bin_dlogalpha(qh, p, e, ei):
    """d log alpha/d log q_hat along the binary-storage branch (dp/dq_hat = ei[2] = -dq/dq_hat)."""
    return 1.0 + qh * ei[2] * (1.0 / p + e[2] / e[1])


_TINY_ALPHA = 1e-100   # below this the O(alpha^2) corrections are below double precision


def _log_H_scalar(x):
    from .gaussian import log_H
    return log_H(x)


def _inv_mills_scalar(x):
    from .gaussian import inv_mills
    return inv_mills(x)


def _bin_result(y, kappa, it):
    alpha, qh, q, p, e, ei = _bin_branch(y, kappa)
    ent = -0.5 * qh * p + ei[0] + alpha * e[0]
    grad = np.array([0.5 * qh - 0.5 * alpha * e[1] / p, 0.5 * (ei[1] - p)])
    hm = _bin_hess(alpha, q, p, e, ei)
    rep = 1.0 - alpha * e[3] * ei[3] / p ** 2
    res = float(np.max(np.abs(grad)) / max(1.0, qh))
    return alpha, ent, SaddlePoint("perceptron.binary_storage", {"alpha": alpha, "kappa": kappa},
                                   {"q": q, "q_hat": qh}, {"entropy": ent}, _check_residual(res, it, locals()), res, it,
                                   np.linalg.eigvalsh(hm), rep, bool(rep > 0), {"one_minus_q": p})


def _bs_one(alpha, kappa, guess=None):
    agd = 2.0 / math.pi / float(_gardner_inv(kappa))
    if not alpha < agd:
        raise ValueError(f"alpha must be in [0, binary_capacity(kappa, 'gardner_derrida')) = [0, {agd:.12g}) "
                         f"for kappa={kappa:g}, got {alpha!r}")
    if alpha == 0.0:
        return SaddlePoint("perceptron.binary_storage", {"alpha": 0.0, "kappa": kappa},
                           {"q": 0.0, "q_hat": 0.0}, {"entropy": math.log(2.0)}, True, 0.0, 0,
                           np.linalg.eigvalsh([[0.0, 0.5], [0.5, -0.5]]), 1.0, True, {"one_minus_q": 1.0})
    if alpha < _TINY_ALPHA:
        # first order in alpha is exact in double precision: q = q_hat = alpha IM(kappa)^2
        qh = alpha * float(_inv_mills_scalar(kappa)) ** 2
        ent = math.log(2.0) + alpha * float(_log_H_scalar(kappa))
        return SaddlePoint("perceptron.binary_storage", {"alpha": alpha, "kappa": kappa},
                           {"q": qh, "q_hat": qh}, {"entropy": ent}, True, 0.0, 0,
                           np.linalg.eigvalsh([[0.0, 0.5], [0.5, -0.5]]), 1.0, True,
                           {"one_minus_q": 1.0, "note": "first-order small-alpha expansion"})
    la = math.log(alpha)

    def fd(y):
        a_, qh, q, p, e, ei = _bin_branch(y, kappa)
        return math.log(a_) - la, _bin_dlogalpha(qh, p, e, ei)

    y0 = math.log(guess.q_hat) if guess is not None and guess.q_hat > 0 else la + 2 * math.log(float(_inv_mills_scalar(kappa)))
    y, it = _solve_y(fd, y0)
    sp_ = _bin_result(y, kappa, it)[2]
    return SaddlePoint(sp_.model, {"alpha": alpha, "kappa": kappa}, sp_.order_params, sp_.thermo,
                       sp_.converged, sp_.residual, sp_.iterations, sp_.hessian_eigenvalues,
                       sp_.replicon, sp_.rs_stable, sp_.extra)


def binary_storage(alpha, kappa=0.0):
    r"""RS solution of the Ising-perceptron storage problem (Gardner & Derrida 1988).

    Thesis Eqs. 2.38-2.40: ``q = E_z tanh^2(sqrt(q_hat) z)``,
    ``q_hat = alpha E_t IM(u)^2/(1-q)`` (equivalently ``alpha/(2 pi (1-q)) E e^{-u^2}/H^2``),
    entropy (B1) = (1/N) log(number of solutions), ``log 2`` at alpha = 0.

    Parameters
    ----------
    alpha : float or array, ``0 <= alpha < (2/pi) gardner_capacity(kappa)`` (where the RS q -> 1;
        the RS entropy is negative -- unphysical -- beyond ``binary_capacity(kappa)``)
    kappa : float or array

    Returns
    -------
    SaddlePoint with ``q``, ``q_hat``, ``entropy``, Hessian eigenvalues of (B1) in (q, q_hat),
    ``replicon`` = ``1 - alpha E[(IM(IM-u))^2] E[sech^4]/(1-q)^2`` and ``rs_stable``.
    Relative accuracy ~1e-12.
    """
    a = _alpha(alpha)
    k = _kappa(kappa)
    return _vectorize(_bs_one, a, k, model="perceptron.binary_storage")


def _bin_zero_entropy(kappa):
    def fd(y):  # entropy along the branch; d/dy = alpha E log H * dlog(alpha)/dy (envelope theorem)
        alpha, qh, q, p, e, ei = _bin_branch(y, kappa)
        return (-0.5 * qh * p + ei[0] + alpha * e[0], alpha * e[0] * _bin_dlogalpha(qh, p, e, ei))

    y, _ = _solve_y(fd, 0.5, fallback=lambda: _bracket_solve(lambda y: -fd(y)[0], 0.0))
    return _bin_branch(y, kappa)[0]


def binary_capacity(kappa=0.0, method="zero_entropy"):
    r"""Storage capacity of the Ising perceptron.

    ``method="zero_entropy"`` (default): the alpha where the RS entropy (B1) vanishes
    (Krauth & Mézard 1989; exact, = the 1RSB result), 0.8330785997... at kappa = 0.
    ``method="gardner_derrida"``: where the RS overlap q -> 1 (Gardner & Derrida 1988; wrong,
    violates the information bound at kappa = 0): from (B2) with ``1-q ~ sqrt(2/(pi q_hat))``
    and ``q_hat (1-q)^2 -> alpha/alpha_c^sph``, ``alpha = (2/pi) gardner_capacity(kappa)``, i.e. 4/pi at 0.

    Returns a float for scalar kappa, an array otherwise.  ``zero_entropy`` is solved as one
    bracketed root in ``log q_hat`` along the explicit RS branch ``alpha(q_hat)``; relative
    accuracy ~1e-12.
    """
    check_choice("method", method, ("zero_entropy", "gardner_derrida"))
    k = _kappa(kappa)
    if method == "gardner_derrida":
        with np.errstate(divide="ignore", over="ignore"):
            out = 2.0 / math.pi / _gardner_inv(k)
        return _scalar_or_array(k, out)
    if k.ndim == 0:
        return float(_bin_zero_entropy(float(k)))
    return np.vectorize(_bin_zero_entropy, otypes=[float])(k)


# =========================================================================== binary teacher-student
def binary_teacher_student_free_entropy(x, alpha):
    """RS free entropy (G1) of Gibbs learning with Ising teacher and student at ``x = [R, R_hat]``
    (Nishimori line q = R, q_hat = R_hat; Györgyi 1990)."""
    R, rh = _x(x, 2, ["R", "R_hat"])
    R = _open_unit("R", R)
    rh = float(check_range("R_hat", rh, 0.0))
    a = float(_alpha(alpha))
    return -0.5 * rh * (1 + R) + float(_ts_in(rh)[0]) + a * _ts_out(R)[0]


def binary_teacher_student_gradient(x, alpha):
    """Gradient of (G1) in ``[R, R_hat]``:
    ``[-R_hat/2 + alpha E[2 G IM]/(2(1-R)), ((1-R) + E sech^2(b) - 2 E(1 - tanh b))/2]``."""
    R, rh = _x(x, 2, ["R", "R_hat"])
    R = _open_unit("R", R)
    rh = float(check_range("R_hat", rh, 0.0))
    a = float(_alpha(alpha))
    e = _ts_out(R)
    ei = _ts_in(rh)
    return np.array([-0.5 * rh + 0.5 * a * e[1] / (1 - R), 0.5 * ((1 - R) + ei[2] - 2 * ei[1])])


def _bts_hess(alpha, p, e, ei):
    hqq = 0.5 * alpha * (e[1] / p ** 2 + e[2] / p)
    return np.array([[hqq, -0.5], [-0.5, 0.5 * (ei[4] - 2 * ei[3])]])


def binary_teacher_student_hessian(x, alpha):
    """Hessian (2x2) of (G1) in ``[R, R_hat]``."""
    R, rh = _x(x, 2, ["R", "R_hat"])
    R = _open_unit("R", R)
    rh = float(check_range("R_hat", rh, 0.0))
    return _bts_hess(float(_alpha(alpha)), 1 - R, _ts_out(R), _ts_in(rh))


def _bts_branch(y):
    """Point of the Nishimori RS branch at R_hat = e^y: alpha = R_hat (1-R)/E[2 G IM]."""
    rh = math.exp(y)
    ei = _ts_in(rh)
    # Nishimori: R = E tanh = E tanh^2 and 1 - R = E(1 - tanh) = E sech^2.  The positive
    # integrands tanh^2 (small R) and sech^2 (R near 1) have no cancellation.
    p = float(ei[2])
    R = float(ei[8]) if ei[8] < 0.5 else 1.0 - p
    e = _ts_out(R, p)
    return rh * p / e[1], rh, R, p, e, ei


def _bts_dlogalpha(y):
    """d log alpha / d log R_hat along the branch (zero at the spinodal)."""
    alpha, rh, R, p, e, ei = _bts_branch(y)
    D = ei[4]  # d(1-R)/dR_hat = d E sech^2/dR_hat
    return 1.0 + rh * D / p + rh * e[2] * D / e[1]


def _bts_fd(la):
    def fd(y):
        alpha, rh, R, p, e, ei = _bts_branch(y)
        D = ei[4]
        return math.log(alpha) - la, 1.0 + rh * D / p + rh * e[2] * D / e[1]
    return fd


def _bts_entropy(y):
    alpha, rh, R, p, e, ei = _bts_branch(y)
    return -0.5 * rh * (1 + R) + ei[0] + alpha * e[0]


@dataclass(frozen=True)
class BinaryTeacherStudentTransition:
    """First-order transition and spinodal of Ising Gibbs learning (Györgyi 1990).

    alpha_c : poor-generalization entropy crosses 0 (= entropy of the R = 1 state)
    alpha_spinodal : fold where the poor-generalization branch ends
    R_c, R_spinodal : teacher-student overlap of the poor branch there
    R_hat_c, R_hat_spinodal : conjugate order parameters
    """
    alpha_c: float
    alpha_spinodal: float
    R_c: float
    R_spinodal: float
    R_hat_c: float
    R_hat_spinodal: float

    def to_dict(self):
        return dict(self.__dict__)


@lru_cache(maxsize=1)
def _bts_transition():
    # spinodal: scan log R_hat upwards until d log alpha/d log R_hat < 0, then Brent
    y = -2.0
    g_prev = _bts_dlogalpha(y)
    while g_prev > 0:
        y_new = y + 0.25
        g = _bts_dlogalpha(y_new)
        if g <= 0:
            break
        y, g_prev = y_new, g
        if y > 6:
            raise ConvergenceError("binary teacher-student spinodal not found", x=[y])
    ysp = float(root_scalar(_bts_dlogalpha, (y, y + 0.25)).x[0])
    asp, rhsp, Rsp = _bts_branch(ysp)[:3]
    # transition: entropy of the poor branch = 0 (entropy decreases along the branch)
    if _bts_entropy(ysp) >= 0:
        raise ConvergenceError("poor-generalization entropy positive at the spinodal", x=[ysp])
    yc = float(root_scalar(_bts_entropy, (-8.0, ysp)).x[0])
    ac, rhc, Rc = _bts_branch(yc)[:3]
    return BinaryTeacherStudentTransition(float(ac), float(asp), float(Rc), float(Rsp), float(rhc), float(rhsp)), ysp, yc


def binary_teacher_student_transition():
    r"""``alpha_c`` and ``alpha_spinodal`` of Gibbs learning with Ising teacher and student.

    Along the RS (Nishimori) branch parametrized by ``R_hat`` (G2 gives ``R(R_hat)`` and
    ``alpha(R_hat) = R_hat (1-R)/E_t[2 G(a t) IM(-a t)]`` explicitly), the spinodal is the
    maximum of ``alpha(R_hat)`` (root of ``d log alpha/d log R_hat``, derivatives from sympy)
    and the first-order transition is where the entropy (G1) of the poor-generalization
    branch reaches 0, the entropy of the perfect-generalization state R = 1
    (Györgyi 1990: alpha_c ~ 1.245, alpha_spinodal ~ 1.49).  Both roots by Brent to ~1e-15
    in log R_hat; the values are accurate to ~1e-12.  Returns
    :class:`BinaryTeacherStudentTransition` (cached after the first call).
    """
    return _bts_transition()[0]


def _bts_result(y, alpha, branch, it):
    a_, rh, R, p, e, ei = _bts_branch(y)
    alpha = a_ if alpha is None else alpha
    ent = -0.5 * rh * (1 + R) + ei[0] + alpha * e[0]
    grad = np.array([-0.5 * rh + 0.5 * alpha * e[1] / p, 0.5 * (p + ei[2] - 2 * ei[1])])
    res = float(np.max(np.abs(grad)) / max(1.0, rh))
    hm = _bts_hess(alpha, p, e, ei)
    rep = 1.0 - alpha * e[3] * ei[5] / p ** 2
    eg = math.acos(R) / math.pi if R < 0.5 else math.asin(math.sqrt(p * (1 + R))) / math.pi
    return SaddlePoint("perceptron.binary_teacher_student", {"alpha": alpha},
                       {"R": R, "R_hat": rh, "q": R, "q_hat": rh},
                       {"entropy": ent, "generalization_error": eg}, _check_residual(res, it, locals()), res, it,
                       np.linalg.eigvalsh(hm), rep, bool(rep > 0), {"branch": branch, "one_minus_R": p})


_BTS_BRANCHES = ("equilibrium", "poor", "perfect", "unstable")


def _bts_one(alpha, branch, guess=None):
    tr, ysp, yc = _bts_transition()
    if branch == "equilibrium":
        branch = "poor" if alpha < tr.alpha_c else "perfect"
    if branch == "perfect":
        return SaddlePoint("perceptron.binary_teacher_student", {"alpha": alpha},
                           {"R": 1.0, "R_hat": math.inf, "q": 1.0, "q_hat": math.inf},
                           {"entropy": 0.0, "generalization_error": 0.0}, True, 0.0, 0,
                           None, None, True, {"branch": "perfect", "one_minus_R": 0.0})
    if alpha > tr.alpha_spinodal:
        raise ValueError(f"alpha must be <= alpha_spinodal = {tr.alpha_spinodal:.12g} on the {branch!r} "
                         f"branch (it does not exist beyond), got {alpha!r}")
    if alpha == 0.0:
        if branch == "poor":
            return SaddlePoint("perceptron.binary_teacher_student", {"alpha": 0.0},
                               {"R": 0.0, "R_hat": 0.0, "q": 0.0, "q_hat": 0.0},
                               {"entropy": math.log(2.0), "generalization_error": 0.5}, True, 0.0, 0,
                               np.linalg.eigvalsh([[0.0, -0.5], [-0.5, 0.5]]), 1.0, True,
                               {"branch": "poor", "one_minus_R": 1.0})
        raise ValueError("alpha must be > 0 on the 'unstable' branch, got 0.0")
    if alpha < _TINY_ALPHA and branch == "poor":
        # first order in alpha is exact in double precision: R = R_hat = 2 alpha/pi
        rh = 2.0 * alpha / math.pi
        return SaddlePoint("perceptron.binary_teacher_student", {"alpha": alpha},
                           {"R": rh, "R_hat": rh, "q": rh, "q_hat": rh},
                           {"entropy": math.log(2.0) * (1.0 - alpha), "generalization_error": math.acos(rh) / math.pi},
                           True, 0.0, 0, np.linalg.eigvalsh([[0.0, -0.5], [-0.5, 0.5]]), 1.0, True,
                           {"branch": "poor", "one_minus_R": 1.0, "note": "first-order small-alpha expansion"})
    la = math.log(alpha)
    if alpha == tr.alpha_spinodal:
        y = ysp
        it = 0
    elif branch == "poor":
        def bracket_poor():
            # bracket downward from the spinodal: alpha(R_hat) is increasing on (0, R_hat_sp)
            lo = ysp - 1.0
            while math.log(_bts_branch(lo)[0]) - la > 0:
                lo -= 2.0
                if lo < -750:
                    raise ConvergenceError("could not bracket the poor branch", x=[lo])
            info = root_scalar(lambda y: math.log(_bts_branch(y)[0]) - la, (lo, ysp), xtol=1e-15)
            return float(info.x[0]), info.iterations

        y0 = math.log(guess.R_hat) if guess is not None and 0 < guess.R_hat < math.exp(ysp) else min(la, ysp - 0.7)
        y, it = _solve_y(_bts_fd(la), y0, hi=ysp, fallback=bracket_poor)
    else:  # unstable: alpha(R_hat) decreasing on (R_hat_sp, inf)
        def bracket_unstable():
            hi = ysp + 0.5
            while math.log(_bts_branch(hi)[0]) - la > 0:
                hi += 0.5
                if hi > math.log(700.0):
                    raise ConvergenceError("unstable branch beyond the resolvable R_hat range", x=[hi])
            info = root_scalar(lambda y: math.log(_bts_branch(y)[0]) - la, (ysp, hi), xtol=1e-15)
            return float(info.x[0]), info.iterations

        y, it = bracket_unstable()
    return _bts_result(y, alpha, branch, it)


def binary_teacher_student(alpha, branch="equilibrium"):
    r"""Gibbs learning of an Ising teacher by an Ising student (RS, Nishimori line; Györgyi 1990).

    Equations (G1)-(G2) of the module docstring: ``R = E_z tanh(sqrt(R_hat) z + R_hat)``,
    ``R_hat = alpha E_t[2 G(a t) IM(-a t)]/(1-R)``, ``a = sqrt(R/(1-R))``.

    Parameters
    ----------
    alpha : float or array, >= 0
    branch : ``"equilibrium"`` (default): the poor-generalization branch for
        ``alpha < alpha_c`` and the perfect state ``R = 1`` (entropy 0, eps = 0) beyond;
        ``"poor"``: the poor-generalization branch (metastable for alpha_c < alpha <=
        alpha_spinodal; ValueError beyond); ``"perfect"``: ``R = 1``;
        ``"unstable"``: the intermediate (entropy-maximum-violating) branch connecting the
        spinodal to R = 1 (``0 < alpha <= alpha_spinodal``).

    Returns
    -------
    SaddlePoint with ``R`` (= q), ``R_hat`` (= q_hat), ``entropy``, ``generalization_error``
    = arccos(R)/pi, Hessian eigenvalues of (G1) in (R, R_hat), the replicon, and
    ``extra["branch"]``.  The R = 1 state has ``hessian_eigenvalues = replicon = None`` (not
    defined: an isolated configuration) and ``rs_stable = True`` (a single configuration is
    trivially replica symmetric).  Relative accuracy ~1e-12 (R_hat <= 16; ~1e-9 beyond).
    """
    a = _alpha(alpha)
    check_choice("branch", branch, _BTS_BRANCHES)
    if a.ndim == 0:
        return _bts_one(float(a), branch)
    res = [_bts_one(float(x), branch) for x in a.ravel()]
    if any(r.hessian_eigenvalues is None for r in res):
        # the R = 1 state has no Hessian/replicon: stack the rest, keep None there (not NaN)
        fill = [replace(r, hessian_eigenvalues=np.zeros(2), replicon=0.0) if r.hessian_eigenvalues is None else r
                for r in res]
        out = stack(fill, a.shape, model="perceptron.binary_teacher_student")
        rep = np.empty(len(res), dtype=object)
        rep[:] = [r.replicon for r in res]
        hes = np.empty(len(res), dtype=object)
        hes[:] = [r.hessian_eigenvalues for r in res]
        out = replace(out, replicon=rep.reshape(a.shape), hessian_eigenvalues=hes.reshape(a.shape))
        return replace(out, extra={"branch": np.array([r.extra["branch"] for r in res]).reshape(a.shape)})
    out = stack(res, a.shape, model="perceptron.binary_teacher_student")
    return replace(out, extra={"branch": np.array([r.extra["branch"] for r in res]).reshape(a.shape)})


# =========================================================================== AT lines
def _at_one(solve, kappa, a_max):
    """alpha where the replicon of ``solve(alpha, kappa)`` changes sign in (0, a_max), else a_max."""
    last = [None]

    def rep(a):
        r = solve(a, kappa, last[0])
        last[0] = r
        return float(r.replicon)

    hi = a_max * (1 - 1e-9)
    if rep(hi) > 0:
        return a_max
    lo = 1e-3 * a_max
    if rep(lo) <= 0:
        raise ConvergenceError("replicon negative already at small alpha", x=[lo], diagnostics={"kappa": kappa})
    return float(root_scalar(rep, (lo, hi), xtol=1e-13).x[0])


def spherical_storage_at_line(kappa):
    r"""de Almeida-Thouless line of spherical storage: the alpha where the replicon (S4)
    ``1 - alpha E_t[(IM(u)(IM(u)-u))^2]`` of :func:`spherical_storage` vanishes.

    For kappa < 0 it lies below the Gardner capacity (RS unstable between alpha_AT and
    alpha_c); for kappa >= 0 the RS solution is stable up to capacity and
    ``gardner_capacity(kappa)`` is returned.  Vectorized over kappa (float or array).
    E.g. kappa = -0.5: 3.95070131...  Brent on the replicon (~1e-12).
    """
    k = _kappa(kappa)
    f = lambda kk: _at_one(lambda a, k_, g: _ss_one(a, k_, g), kk, 1.0 / float(_gardner_inv(kk)))
    return float(f(float(k))) if k.ndim == 0 else np.vectorize(f, otypes=[float])(k)


def binary_storage_at_line(kappa=0.0):
    r"""de Almeida-Thouless line of Ising storage: where the replicon (B3) of
    :func:`binary_storage` vanishes (1.01465... at kappa = 0, Gardner & Derrida 1988:
    ~1.015), or the Gardner-Derrida alpha when RS stays stable up to q -> 1.
    Vectorized over kappa."""
    k = _kappa(kappa)
    f = lambda kk: _at_one(lambda a, k_, g: _bs_one(a, k_, g), kk, 2.0 / math.pi / float(_gardner_inv(kk)))
    return float(f(float(k))) if k.ndim == 0 else np.vectorize(f, otypes=[float])(k)


# saddle-point residuals: the saddle-point equations are grad phi = 0 (aliases, for continuation)
spherical_storage_residual = spherical_storage_gradient
spherical_teacher_student_residual = spherical_teacher_student_gradient
binary_storage_residual = binary_storage_gradient
binary_teacher_student_residual = binary_teacher_student_gradient
