r"""Balanced ReLU tree committee machine with K = 2 hidden units, in closed form (Eqs. R2.1--R2.6).

For K = 2 the correct region is a convex cone and every average reduces to bivariate-normal
orthant probabilities (``_log_bvn``, log space, no cut-off):

* RS saddle point at finite alpha (the ReLU branch of :func:`statmech.committee.tcm_storage`,
  ``_relu_storage``) and its AT line :func:`relu_at_line` (= 4/3: stable up to capacity);
* 1RSB at capacity: :func:`relu_capacity_1rsb_point` (alpha(q0, y) > 4/3 everywhere, so
  alpha_c^1RSB = alpha_c^RS = 4/3), with the exact inner average ``_relu2_log_Y``.

The RS capacity 4/3 itself is in :mod:`.relu_rs`; ReLU 1RSB for K = 4, 6 in :mod:`.relu_1rsb`.
"""
from __future__ import annotations

import math
from functools import lru_cache

import numba
import numpy as np
import sympy as sp

from .. import gaussian as gs
from ..errors import ConvergenceError, check_int, check_range
from ..gaussian import inv_mills_nb, log_H_nb
from ..result import check_real
from ..saddle import SaddlePoint, root_scalar, vectorize_over
from ..symbolic import LogH, Scalar, kernels
from ._common import _check_K
from ._kernels import _eqs
from .relu_rs import _alpha_rs_relu

__all__ = ["relu_at_line", "relu_capacity_1rsb_point"]


# --------------------------------------------------------------------------- geometry of the flip cost, K = 2
# Correct region of the K = 2 balanced ReLU machine: R = {lambda_1 > 0, lambda_1 > lambda_2}, a convex
# cone of opening 3 pi/4.  C(lambda) = dist(lambda, R)^2; the plane splits into R (C = 0), the normal
# strip of the ray {lambda_1 = 0, lambda_2 < 0} (A: lambda_1 < 0, lambda_2 < 0, C = lambda_1^2), the
# normal strip of the ray lambda_1 = lambda_2 > 0 (B: lambda_2 > lambda_1, lambda_1 + lambda_2 > 0,
# C = (lambda_2 - lambda_1)^2/2) and the polar wedge (P: lambda_2 > 0, lambda_1 + lambda_2 < 0, C = |lambda|^2).
# Kink rays of C (angles of t): -pi/2, pi/4, 3pi/4, pi.


_RELU2_BREAKS = (-0.5 * math.pi, 0.25 * math.pi, 0.75 * math.pi, math.pi, 1.5 * math.pi)
_RHO2 = 1.0 / math.sqrt(2.0)


@kernels
def _relu2_eqs():
    """K = 2 ReLU closed forms (docs/committee.md, "ReLU hidden units", Eqs. R2.1-R2.3), written once."""
    h1, h2, v, y = sp.symbols("h1 h2 v y", real=True)
    a1 = 1 + y * v
    # log of int_{-inf}^0 N(lam; h, v) e^{-y lam^2/2} dlam = e^{-y h^2/(2 a1)}/sqrt(a1) H(h/sqrt(v a1))
    lhalf = lambda h: -y * h ** 2 / (2 * a1) - sp.log(a1) / 2 + LogH(h / sp.sqrt(v * a1))
    # region A: lambda_1 < 0 (cost lambda_1^2), lambda_2 < 0 (free)
    lA = lhalf(h1) + LogH(h2 / sp.sqrt(v))
    # region B: u = (lambda_2 - lambda_1)/sqrt 2 > 0 (cost u^2), w = (lambda_1 + lambda_2)/sqrt 2 > 0 (free)
    mu_u = (h2 - h1) / sp.sqrt(2)
    mu_w = (h1 + h2) / sp.sqrt(2)
    lB = lhalf(-mu_u) + LogH(-mu_w / sp.sqrt(v))
    # region P: N(lam; h, v I) e^{-y |lam|^2/2} = e^{-y|h|^2/(2 a1)}/a1 N(lam; h/a1, v/a1 I)
    lPpref = -y * (h1 ** 2 + h2 ** 2) / (2 * a1) - sp.log(a1)
    s = sp.sqrt(v / a1)
    # P(lam_2 > 0, lam_1 + lam_2 < 0) = P(X < a, Y < b), X = -(lam_2 - m_2)/s,
    # Y = (lam_1 + lam_2 - m_1 - m_2)/(sqrt 2 s), corr(X, Y) = -1/sqrt 2
    aP = h2 / (a1 * s)
    bP = -(h1 + h2) / (sp.sqrt(2) * a1 * s)
    # region R: P(lam_1 > 0, lam_1 > lam_2) = P(X < a, Y < b), corr 1/sqrt 2
    aR = h1 / sp.sqrt(v)
    bR = (h1 - h2) / sp.sqrt(2 * v)
    args = (h1, h2, v, y)
    return {"lA": Scalar(args, lA), "lB": Scalar(args, lB), "lPpref": Scalar(args, lPpref),
            "aP": Scalar(args, aP), "bP": Scalar(args, bP), "aR": Scalar(args, aR), "bR": Scalar(args, bR)}


@numba.njit(cache=True)
def _relu_ell(s, B, rho, sig):
    """l(s) = log phi(s) + log H((B - rho s)/sig) and l'(s), l''(s) (log-concave integrand)."""
    w = (B - rho * s) / sig
    lh = log_H_nb(w)
    M = inv_mills_nb(w)
    r = rho / sig
    return (-0.5 * s * s - 0.9189385332046727 + lh, -s + r * M, -1.0 - r * r * M * (M - w))


@numba.njit(cache=True)
def _log_bvn(a, b, rho, xs, xcs, tw):
    """log P(X < a, Y < b) for a standard bivariate normal with correlation rho, |rho| < 1.

    = log int_A^inf phi(s) H((B - rho s)/sig) ds with A = -a, B = -b, sig = sqrt(1 - rho^2).
    The integrand e^{l(s)} is log-concave with -l'' in [1, 1/sig^2]; s* = argmax over s >= A
    (safeguarded Newton), then  P = e^{l(s*)} (L + R),
      R = int_0^inf e^{l(s*+r)-l*} dr,   r = -ln(u)/beta, beta = max(1, -l'(s*)),
      L = int_0^{s*-A} e^{l(s*-r)-l*} dr, r = -ln(u), u in (e^{-(s*-A)}, 1),
    each a tanh--sinh rule in u (the core's rule on (0, 1)): the mapped integrands are smooth and
    bounded, no cut-off, and nothing underflows however deep in the tail (a, b -> -inf).
    """
    A = -a
    B = -b
    sig = math.sqrt(1.0 - rho * rho)
    l0, d0, _ = _relu_ell(A, B, rho, sig)
    if d0 <= 0.0:
        s = A
        ls, ds = l0, d0
    else:
        lo = A
        hi = A + d0   # l'' <= -1: l'(A + d0) <= 0
        s = A + 0.5 * d0
        for _ in range(100):
            ls, ds, dds = _relu_ell(s, B, rho, sig)
            if ds > 0.0:
                lo = s
            else:
                hi = s
            sn = s - ds / dds
            if not (lo < sn < hi):
                sn = 0.5 * (lo + hi)
            if abs(sn - s) <= 1e-15 * (1.0 + abs(s)) or hi - lo <= 1e-15 * (1.0 + abs(s)):
                s = sn
                break
            s = sn
        ls, ds, _ = _relu_ell(s, B, rho, sig)
        if ds > 0.0:
            ds = 0.0
    beta = -ds if -ds > 1.0 else 1.0
    R = 0.0
    for i in range(xs.shape[0]):
        wi = tw[i]
        x = xs[i]
        r = (-math.log(x) if x < 0.5 else -math.log1p(-xcs[i])) / beta
        lr, _, _ = _relu_ell(s + r, B, rho, sig)
        R += wi * math.exp(lr - ls + beta * r)
    R /= beta
    L = 0.0
    D = s - A
    if D > 0.0:
        em = math.expm1(-D)    # -(1 - e^{-D})
        eD = math.exp(-D)
        for i in range(xs.shape[0]):
            # u = e^{-D} + (1 - e^{-D}) x, r = -ln u (near u = 1 from 1 - u = (1 - e^{-D}) xc)
            r = -math.log(eD - em * xs[i]) if xs[i] < 0.5 else -math.log1p(em * xcs[i])
            lr, _, _ = _relu_ell(s - r, B, rho, sig)
            L += tw[i] * math.exp(lr - ls + r)
        L *= -em
    return ls + math.log(L + R)


@numba.njit(cache=True)
def _relu2_rs_point(u1, u2, xs, xcs, tw):
    """ln Z, grad_u ln Z, Hessian_u ln Z for Z = P(lam_1 > 0, lam_1 > lam_2), lam_l = u_l + z_l (Eq. R2.4).

    Z = Phi_2(a, b; 1/sqrt 2), a = u_1, b = (u_1 - u_2)/sqrt 2;  with w_a = (b - rho a)/sig,
    dZ/da = phi(a) Phi(w_a), d2Z/da db = phi(a) phi(w_a)/sig, d2Z/da2 = -a dZ/da - rho d2Z/da db.
    """
    rho = 0.7071067811865476
    sig = rho
    a = u1
    b = (u1 - u2) * rho
    lZ = _log_bvn(a, b, rho, xs, xcs, tw)
    la = -0.5 * a * a - 0.9189385332046727
    lb = -0.5 * b * b - 0.9189385332046727
    wa = (b - rho * a) / sig
    wb = (a - rho * b) / sig
    ga = math.exp(la + log_H_nb(-wa) - lZ)
    gb = math.exp(lb + log_H_nb(-wb) - lZ)
    p2 = math.exp(la - 0.5 * wa * wa - 0.9189385332046727 - math.log(sig) - lZ)
    haa = -a * ga - rho * p2 - ga * ga
    hbb = -b * gb - rho * p2 - gb * gb
    hab = p2 - ga * gb
    # chain rule, (a, b) = J u with J = [[1, 0], [rho, -rho]]
    g1 = ga + rho * gb
    g2 = -rho * gb
    h11 = haa + 2.0 * rho * hab + rho * rho * hbb
    h12 = -rho * hab - rho * rho * hbb
    h22 = rho * rho * hbb
    return lZ, g1, g2, h11, h12, h22


@lru_cache(maxsize=8)
def _relu2_polar(level):
    """Polar rule for E_t f(t), t ~ N(0, I_2): (cos, sin, r-nodes, weights) flattened.

    r: u = e^{-r^2/2} uniform on (0, 1), tanh--sinh in u (no cut-off); theta: tanh--sinh on each
    piece between the kink rays of C (_RELU2_BREAKS), weight dtheta/(2 pi).
    """
    x, xc, w = gs.tanh_sinh_rule(level)
    m = x < 0.5
    lu = np.empty_like(x)
    lu[m] = np.log(x[m])
    lu[~m] = np.log1p(-xc[~m])
    r = np.sqrt(-2.0 * lu)
    th, wth = [], []
    for lo, hi in zip(_RELU2_BREAKS[:-1], _RELU2_BREAKS[1:]):
        L = hi - lo
        th.append(np.where(x < 0.5, lo + L * x, hi - L * xc))
        wth.append(L * w / (2.0 * math.pi))
    th = np.concatenate(th)
    wth = np.concatenate(wth)
    keep_r = w > 0
    keep_t = wth > 0
    T1 = (r[keep_r][None, :] * np.cos(th[keep_t])[:, None]).ravel()
    T2 = (r[keep_r][None, :] * np.sin(th[keep_t])[:, None]).ravel()
    W = (wth[keep_t][:, None] * w[keep_r][None, :]).ravel()
    return np.ascontiguousarray(T1), np.ascontiguousarray(T2), np.ascontiguousarray(W)


@numba.njit(cache=True)
def _log_bvn_many(a, b, rho, xs, xcs, tw):
    out = np.empty(a.shape[0])
    for i in range(a.shape[0]):
        out[i] = _log_bvn(a[i], b[i], rho, xs, xcs, tw)
    return out


@numba.njit(cache=True)
def _relu2_rs_average(T1, T2, W, x, xs, xcs, tw):
    """E_t over the polar rule of: ln Z, sum_l t_l d lnZ/du_l, and the replicon blocks
    a = E[(d11 lnZ)^2 + (d22 lnZ)^2]/2 (label-symmetrized), b = E[(d12 lnZ)^2] at u = x t."""
    s0 = 0.0
    s1 = 0.0
    a = 0.0
    b = 0.0
    for k in range(T1.shape[0]):
        w = W[k]
        t1 = T1[k]
        t2 = T2[k]
        lZ, g1, g2, h11, h12, h22 = _relu2_rs_point(x * t1, x * t2, xs, xcs, tw)
        s0 += w * lZ
        s1 += w * (t1 * g1 + t2 * g2)
        a += w * 0.5 * (h11 * h11 + h22 * h22)
        b += w * h12 * h12
    return s0, s1, a, b


# default (outer polar tanh-sinh level, inner level of the 1-d log Phi_2 integral) for K = 2 ReLU;
# measured: outer level 3 vs 5 changes E ln Z by 3e-11 at q = 0.95, inner level 3 is exact to ~5e-14
_RELU2_LEVELS = (3, 3)


def _relu2_rs_averages(q, levels):
    lo, li = levels
    T1, T2, W = _relu2_polar(lo)
    xs, xcs, tw = gs.tanh_sinh_rule(li)
    return _relu2_rs_average(T1, T2, W, math.sqrt(q / (1.0 - q)), xs, xcs, tw)


def _relu2_residual(alpha, q, levels):
    """(1-q)^2 * 2 ds/dq of Eq. RS.1 with the K = 2 ReLU Z (same form as RS.2)."""
    s1 = _relu2_rs_averages(q, levels)[1]
    return q + alpha * math.sqrt((1.0 - q) / q) * s1


def _relu2_storage_one(alpha, levels, tol):
    params = {"alpha": alpha, "K": 2, "activation": "relu"}
    if alpha == 0.0:
        return SaddlePoint("committee.tcm_storage", params, {"q": 0.0, "q_hat": 0.0}, {"entropy": 0.0},
                           True, 0.0, 0, np.array([0.5]), 1.0, True, {"ansatz": "rs"})
    if alpha >= 4.0 / 3.0:
        raise ValueError(f"alpha must be < alpha_c^RS(K=2, relu) = 4/3 for a finite-volume RS solution, got {alpha!r}")
    f = lambda q: _relu2_residual(alpha, q, levels)
    try:
        info = root_scalar(f, (1e-12, 1.0 - 1e-9), xtol=1e-14)
    except ConvergenceError as exc:
        raise ConvergenceError(f"tcm_storage(relu): RS saddle point not bracketed at alpha={alpha}",
                               diagnostics={"alpha": alpha, "K": 2}) from exc
    q = float(info.x[0])
    l0, d, A11, A12 = _relu2_rs_averages(q, levels)
    gsv, dgs, _ = _eqs.gs_rs(q)
    entropy = gsv + alpha * l0
    # accuracy: the same averages on the next-coarser outer rule (an upper estimate)
    lc, dc, A11c, A12c = _relu2_rs_averages(q, (levels[0] - 1, levels[1]))
    rc = q + alpha * math.sqrt((1.0 - q) / q) * dc
    hq = 1e-5 * min(q, 1.0 - q)
    dsp = lambda qq: _relu2_residual(alpha, qq, levels) / (2.0 * (1.0 - qq) ** 2)
    hess = (dsp(q + hq) - dsp(q - hq)) / (2.0 * hq)
    quad_err = max(abs(rc / (2.0 * (1.0 - q) ** 2 * hess)), alpha * abs(lc - l0))
    # replicon (Eq. RS.3): 1 - alpha K lambda_max(A), A = [[a, b], [b, a]], b >= 0 -> 1 - 2 alpha (a + b)
    replicon = 1.0 - 2.0 * alpha * (A11 + A12)
    if quad_err > tol:
        raise ConvergenceError(f"tcm_storage(relu): quadrature error estimate {quad_err:.2e} exceeds tol={tol:g} "
                               f"at alpha={alpha} (q={q:.6f}); raise `level`", x=[q],
                               diagnostics={"alpha": alpha, "K": 2, "quadrature_error": quad_err})
    if not (math.isfinite(entropy) and math.isfinite(replicon)):
        raise ConvergenceError(f"tcm_storage(relu): a non-finite value at alpha={alpha}, K=2", x=[q],
                               diagnostics={"alpha": alpha})
    return SaddlePoint("committee.tcm_storage", params, {"q": q, "q_hat": 2.0 * dgs}, {"entropy": entropy},
                       converged=True, residual=abs(f(q)), iterations=info.iterations,
                       hessian_eigenvalues=np.array([hess]), replicon=replicon, rs_stable=bool(replicon > 0),
                       extra={"ansatz": "rs", "quadrature_error": quad_err, "quadrature_levels": levels,
                              "replicon_coarse": 1.0 - 2.0 * alpha * (A11c + A12c),
                              "replicon_blocks": (A11, A12)})


def _relu_storage(alpha, K, level, tol):
    """ReLU branch of :func:`tcm_storage` (K = 2 only)."""
    k = _check_K(K, "relu", "tcm_storage")
    if k != 2:
        raise ValueError(f"tcm_storage: K must be 2 with activation='relu' (finite-alpha RS for K >= 4 "
                         f"is not implemented), got {K!r}")
    check_real("alpha", alpha, function="tcm_storage")
    a = check_range("alpha", alpha, 0.0)
    if np.any(a >= 4.0 / 3.0):
        raise ValueError(f"tcm_storage: alpha must be < alpha_c^RS(K=2, relu) = 4/3 for a finite-volume RS "
                         f"solution, got {float(np.max(a))!r}")
    lo = _RELU2_LEVELS[0] if level is None else check_int("level", level, 2)
    tol = float(check_range("tol", tol, 0.0, lo_open=True, allow_inf=True))
    return vectorize_over(lambda al, guess=None: _relu2_storage_one(al, (lo, _RELU2_LEVELS[1]), tol), a,
                          model="committee.tcm_storage")


def relu_at_line(K=2, *, level=None):
    """alpha_AT of the K = 2 ReLU TCM: where the replicon (Eq. RS.3) of the RS solution vanishes.

    The replicon is evaluated at alpha = 0.05 and 1.32; it is positive at both (and on every
    alpha tested in between), and its q -> 1 limit is 1 - alpha E||Hess_u C/2||_F^2 = 1 - 3 alpha/4,
    which vanishes exactly at alpha_c = 4/3 (derived in docs/committee.md).  So the RS solution
    is stable up to capacity and 4/3 is returned (marginal at capacity, as for the perceptron).
    A sign change, if one were found, would be located by Brent.
    """
    k = _check_K(K, "relu")
    if k != 2:
        raise ValueError(f"K must be 2 for relu_at_line, got {K!r}")
    lo = _RELU2_LEVELS[0] if level is None else check_int("level", level, 2)
    return _relu2_at_line_cached(lo)


@lru_cache(maxsize=4)
def _relu2_at_line_cached(lo):
    lev = (lo, _RELU2_LEVELS[1])
    f = lambda a: _relu2_storage_one(a, lev, math.inf).replicon
    a_lo, a_hi = 0.05, 1.32
    flo, fhi = f(a_lo), f(a_hi)
    if flo > 0 and fhi > 0:
        # no instability below alpha_c: the replicon tends to 1 - alpha_c E||Hess C/2||_F^2
        # = 1 - (4/3)(3/4) = 0 as q -> 1 (marginal at capacity, like the perceptron)
        return 4.0 / 3.0
    if not (flo > 0 > fhi):
        raise ConvergenceError("relu_at_line: replicon sign change not bracketed in [0.05, 1.32]",
                               diagnostics={"K": 2, "replicon_lo": flo, "replicon_hi": fhi})
    try:
        return float(root_scalar(f, (a_lo, a_hi), xtol=1e-8, rtol=1e-10).x[0])
    except ConvergenceError as exc:
        raise ConvergenceError(f"relu_at_line: the replicon root in alpha in [{a_lo}, {a_hi}] not found at K=2 ({exc})",
                               x=exc.x, residual=exc.residual) from None


# --------------------------------------------------------------------------- 1RSB at capacity
def _relu2_log_Y(h1, h2, v, y, inner_level=None):
    """ln Y(h), Y(h) = E_{lambda ~ N(h, v I)} exp(-y C(lambda)/2) for the K = 2 ReLU machine (Eq. R2.2).

    Exact: Y = P_R + I_A + I_B + I_P over the four regions of C (see ``_relu2_eqs``); I_A, I_B
    factorize into closed forms, P_R and I_P are bivariate-normal orthant probabilities with
    correlations +1/sqrt 2 and -1/sqrt 2 (``_log_bvn``).  Vectorized over h1, h2 (arrays).
    """
    xs, xcs, tw = gs.tanh_sinh_rule(_RELU2_LEVELS[1] if inner_level is None else inner_level)
    h1 = np.ascontiguousarray(np.atleast_1d(np.asarray(h1, dtype=float)))
    h2 = np.ascontiguousarray(np.atleast_1d(np.asarray(h2, dtype=float)))
    e = _relu2_eqs
    lA = e.lA_v(h1, h2, v, y)
    lB = e.lB_v(h1, h2, v, y)
    lR = _log_bvn_many(e.aR_v(h1, h2, v, y), e.bR_v(h1, h2, v, y), _RHO2, xs, xcs, tw)
    lP = e.lPpref_v(h1, h2, v, y) + _log_bvn_many(e.aP_v(h1, h2, v, y), e.bP_v(h1, h2, v, y), -_RHO2,
                                                    xs, xcs, tw)
    return np.logaddexp(np.logaddexp(lR, lA), np.logaddexp(lB, lP))


def _relu2_alpha_of(q0, y, outer_level, inner_level=None):
    """alpha(q0, y) = -S/E of Eq. 1RSB.1 for K = 2 ReLU; E = (2/y) E_{t0} ln Y(sqrt(q0) t0), polar outer rule."""
    T1, T2, W = _relu2_polar(outer_level)
    sq = math.sqrt(q0)
    E = 2.0 / y * float(np.dot(W, _relu2_log_Y(sq * T1, sq * T2, 1.0 - q0, y, inner_level)))
    S = _eqs.s1rsb(q0, y)[0]
    if not (math.isfinite(E) and E < 0.0):
        return math.inf
    return -S / E


# (q0, y) grid on which alpha(q0, y) > alpha_c^RS is verified for K = 2 (outer polar level 2)
_RELU2_1RSB_GRID = ((0.05, 0.2, 0.4, 0.6, 0.8, 0.9, 0.95), (0.5, 2.0, 8.0, 30.0, 150.0, 1000.0))


@lru_cache(maxsize=2)
def _relu2_1rsb_scan(outer_level):
    q0s, ys = _RELU2_1RSB_GRID
    return np.array([[_relu2_alpha_of(q0, y, outer_level) for y in ys] for q0 in q0s])


def relu_capacity_1rsb_point(K=2, *, outer_level=2):
    """1RSB capacity of the balanced ReLU TCM at finite K (Eq. 1RSB.1 with the ReLU flip cost); K = 2.

    alpha(q0, y) = -S/E with E = (2/y) E_{t0} ln Y(sqrt(q0) t0) and the inner average Y in
    closed form (Eq. R2.2: four regions of C, two bivariate-normal orthant probabilities);
    the outer 2-d average uses the polar tanh--sinh rule with breaks on the kink rays of C.
    Result (docs/committee.md): alpha(q0, y) > 4/3 at every q0 in (0, 1), y > 0, and
    alpha -> 1/E C = 4/3 both for y -> 0 and for q0 -> 1 at fixed y (1 - q0); there is no
    interior stationary point, the infimum is the RS boundary: alpha_c^1RSB(K = 2) = alpha_c^RS
    = 4/3.  This agrees with the replicon of the RS solution, positive up to alpha_c (the
    K = 2 solution space is an intersection of half-spaces per pattern, a convex cone).

    The scan behind this is recomputed here: ``extra["grid_alpha"]`` on the (q0, y) grid
    ``extra["grid"]``; a ConvergenceError is raised if any grid value falls below 4/3 (then an
    interior minimum would exist and the boundary value would be wrong).  Returns a SaddlePoint
    with q0 = 1, y = 0 (the RS boundary, as for the sign perceptron K = 1) and alpha_c.
    """
    k = _check_K(K, "relu")
    if k != 2:
        raise ValueError(f"K must be 2 for relu_capacity_1rsb_point (K >= 4 not implemented), got {K!r}")
    lev = check_int("outer_level", outer_level, 2)
    grid = _relu2_1rsb_scan(lev)
    a_rs = _alpha_rs_relu(2)[0]
    excess = float(grid.min() - a_rs)
    if not excess > 0.0:
        raise ConvergenceError("relu_capacity_1rsb_point: alpha(q0, y) below the RS value on the scan grid; "
                               "an interior 1RSB minimum exists", residual=excess, diagnostics={"K": 2})
    # the RS boundary value, approached as y -> 0 (checked: alpha(q0, 1e-4) - 4/3 = O(1e-5))
    return SaddlePoint("committee.tcm_capacity_1rsb", {"K": 2, "activation": "relu"},
                       {"q0": 1.0, "y": 0.0}, {"alpha_c": a_rs}, converged=True, residual=0.0, iterations=0,
                       ansatz="1rsb", extra={"ansatz": "1rsb", "grid": _RELU2_1RSB_GRID, "grid_alpha": grid,
                              "grid_min_excess": excess,
                              "note": "minimum on the RS boundary (y -> 0 or q0 -> 1): 1RSB = RS for K = 2"})
