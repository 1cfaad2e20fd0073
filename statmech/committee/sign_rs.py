r"""Sign tree committee machine, replica-symmetric theory (Eqs. RS.1--RS.4 and thesis Eq. 3.5).

* capacity: ``_alpha_rs_sign(K)`` -- thesis Eq. 3.5, 1/alpha_c = K int_0^inf Dt t^2
  I_{H(t)}((K-1)/2, (K+1)/2), integrated in the swapped order (a Beta density against
  P(chi2_3 <= tau^2), no incomplete beta function) on a tanh--sinh rule (two levels as the
  error check);
* RS saddle point at finite alpha (the sign branch of :func:`statmech.committee.tcm_storage`,
  ``_sign_storage``): root of Eq. RS.2 in q, entropy (RS.1), replicon (RS.3) and a quadrature
  error estimate;
* AT line: :func:`tcm_at_line`, :func:`tcm_at_line_point` (where the replicon RS.3 vanishes).

The K-dimensional averages E_t[ln Z, sum t dlnZ/du, ||d2 lnZ||_F^2] at u = x t, x =
sqrt(q/(1-q)), use the log-space Poisson binomial of the K units (numba, ``_rs_point``,
O(K^2) ``_rs_point_fast``) on one of three rules (``_rs_averages``): multisets of a 1-d
tanh--sinh or Gauss--Hermite rule (:mod:`._kernels`), or an antithetic scrambled Sobol set.
"""
from __future__ import annotations

import math
from functools import lru_cache

import numba
import numpy as np
from scipy import special

from .. import gaussian as gs
from ..errors import ConvergenceError, check_choice, check_int, check_range
from ..gaussian import log_H_nb
from ..saddle import SaddlePoint, root_scalar, vectorize_over
from ..result import check_real
from ._common import K_MAX_RQMC, _bar, _check_K, _check_K_max, _disk_cached, _sobol_normal_points
from ._kernels import _LOGFACT, _eqs, _multiset_weight, _multisets_next

__all__ = ["tcm_at_line", "tcm_at_line_point"]


# --------------------------------------------------------------------------- capacity (Eq. 3.5)
_LN_GAMMA_HALF = 0.5 * math.log(math.pi)


def _log_gamma_ratio_half(a):
    """ln Gamma(a + 1/2) - ln Gamma(a), accurate to rounding for every a >= 1.

    For a >= 20 by its asymptotic series, 1/2 ln a + sum_n (-1)^n (2^(1-n) - 2) B_n / (n (n-1) a^(n-1))
    (Bernoulli numbers B_n, n = 2 ... 10; the first omitted term is below 1e-16 relative at a = 20),
    so that no two log-gammas of size a ln a cancel (``betaln(0.5, 5e5)`` of scipy is off by 2e-10)."""
    if a < 20.0:
        return math.lgamma(a + 0.5) - math.lgamma(a)
    ia = 1.0 / a
    i2 = ia * ia
    return 0.5 * math.log(a) + ia * (-1.0 / 8.0 + i2 * (1.0 / 192.0 + i2 * (-1.0 / 640.0 + i2 * (
        17.0 / 14336.0 - i2 * 31.0 / 18432.0))))


def _inv_alpha_rs_sign(K, level=5):
    """1/alpha_c^RS of thesis Eq. 3.5, K int_0^inf Dt t^2 I_{H(t)}((K-1)/2, (K+1)/2), in the swapped order.

    With I_x(a, b) = int_0^x f_{a,b}(u) du (f the Beta(a, b) density) and u = H(tau):

        1/alpha_c = K int_0^inf Dtau f_{a,b}(H(tau)) J(tau),   J(tau) = int_0^tau Dt t^2 = P(chi2_3 <= tau^2)/2,

    a = (K-1)/2, b = (K+1)/2.  No incomplete beta function is needed: ``scipy.special.betainc``
    before scipy 1.12 (cephes) is wrong by ~1e-9 relative at a, b ~ 5e5 (K = 10^6 + 1), which
    made the two quadrature levels disagree.  ln f is written without cancellation:
    with e = erf(tau/sqrt 2), H = (1 - e)/2, ln f = (a-1) ln(1 - e^2) + ln(1 + e) + ln 2
    - ln B(1/2, a) (duplication formula B(a, a+1) = 2^(1-2a) B(1/2, a)/2), every term O(1)
    for tau ~ K^(-1/2), and ln B(1/2, a) from :func:`_log_gamma_ratio_half`.  The tanh--sinh
    pieces break at 0, s/2, s, 2s, ..., 32s (s = K^(-1/2), the width of the Beta density in tau).
    """
    if K == 1:
        return 0.5
    a = 0.5 * (K - 1)
    s = 1.0 / math.sqrt(K)
    z, w = gs.piecewise_nodes([0.0, 0.5 * s, s, 2 * s, 4 * s, 8 * s, 16 * s, 32 * s], level)
    m = z > 0
    t, w = z[m], w[m]
    e = special.erf(t / math.sqrt(2.0))
    small = e < 0.5
    l_minus = np.where(small, 0.0, math.log(2.0) + gs.log_H(t))        # ln(1 - e) where e >= 1/2
    l_plus = np.log1p(e)
    l_prod = np.where(small, np.log1p(-np.where(small, e, 0.0) ** 2), l_minus + l_plus)   # ln(1 - e^2)
    log_f = (a - 1.0) * l_prod + l_plus + math.log(2.0) - (_LN_GAMMA_HALF - _log_gamma_ratio_half(a))
    J = 0.5 * special.gammainc(1.5, 0.5 * t * t)
    return K * float(np.sum(w * np.exp(log_f) * J))


@lru_cache(maxsize=256)
def _alpha_rs_sign(K):
    # tanh-sinh levels 4 and 5 agree to rounding for K = 3 ... 1e10 + 1, with any scipy >= 1.11
    v4 = 1.0 / _inv_alpha_rs_sign(K, 4)
    v5 = 1.0 / _inv_alpha_rs_sign(K, 5)
    if abs(v5 - v4) > 1e-12 * v5:
        raise ConvergenceError(f"tcm_capacity: the Eq. 3.5 quadrature (sign RS capacity) did not converge at K={K}",
                               residual=abs(v5 - v4), diagnostics={"K": K})
    return v5


# --------------------------------------------------------------------------- K-unit kernels (numba)
@numba.njit(cache=True)
def _logaddexp(a, b):
    if a == -np.inf:
        return b
    if b == -np.inf:
        return a
    if a > b:
        return a + math.log1p(math.exp(b - a))
    return b + math.log1p(math.exp(a - b))


@numba.njit(cache=True)
def _pb_log(lp, lq, skip1, skip2, out):
    """Log Poisson-binomial pmf of the units except skip1/skip2 (-1: none) into out[0..K]."""
    K = lp.shape[0]
    for n in range(K + 1):
        out[n] = -np.inf
    out[0] = 0.0
    cnt = 0
    for l in range(K):
        if l == skip1 or l == skip2:
            continue
        cnt += 1
        for n in range(cnt, 0, -1):
            out[n] = _logaddexp(out[n] + lq[l], out[n - 1] + lp[l])
        out[0] = out[0] + lq[l]


@numba.njit(cache=True)
def _rs_unit_logs(t, x):
    """Per unit at u = x t: u, ln P(+) = ln H(-u), ln P(-) = ln H(u), ln G(u) (Gaussian density)."""
    K = t.shape[0]
    lp = np.empty(K)
    lq = np.empty(K)
    lg = np.empty(K)
    u = np.empty(K)
    for l in range(K):
        u[l] = x * t[l]
        lp[l] = log_H_nb(-u[l])
        lq[l] = log_H_nb(u[l])
        lg[l] = -0.5 * u[l] * u[l] - 0.9189385332046727
    return u, lp, lq, lg


@numba.njit(cache=True)
def _rs_first_terms(t, u, g, want_hess):
    """sum_l t_l d lnZ/du_l and the diagonal part of ||d2 lnZ/du du||_F^2 from g_l = d lnZ/du_l."""
    dx = 0.0
    fro = 0.0
    for l in range(t.shape[0]):
        dx += t[l] * g[l]
        if want_hess:
            d2 = -u[l] * g[l] - g[l] * g[l]
            fro += d2 * d2
    return dx, fro


@numba.njit(cache=True)
def _rs_point(t, x, want_hess):
    """ln Z, sum_l t_l d lnZ/du_l, ||d2 lnZ/du du||_F^2 at u = x t (majority of K)."""
    K = t.shape[0]
    m = (K + 1) // 2
    u, lp, lq, lg = _rs_unit_logs(t, x)
    pb = np.empty(K + 1)
    _pb_log(lp, lq, -1, -1, pb)
    lZ = -np.inf
    for n in range(m, K + 1):
        lZ = _logaddexp(lZ, pb[n])
    g = np.empty(K)
    for l in range(K):
        _pb_log(lp, lq, l, -1, pb)
        g[l] = math.exp(lg[l] + pb[m - 1] - lZ)
    dx, fro = _rs_first_terms(t, u, g, want_hess)
    if want_hess:
        for l in range(K):
            for k in range(l + 1, K):
                _pb_log(lp, lq, l, k, pb)
                a = pb[m - 2] if m >= 2 else -np.inf
                b = pb[m - 1]
                base = lg[l] + lg[k] - lZ
                v = math.exp(base + a) - math.exp(base + b) - g[l] * g[k]
                fro += 2.0 * v * v
    return lZ, dx, fro


@numba.njit(cache=True)
def _lconv_at(A, na, B, nb, n):
    """log sum_j exp(A[j] + B[n-j]), 0 <= j <= na, 0 <= n-j <= nb (log-space convolution at n)."""
    lo = n - nb if n - nb > 0 else 0
    hi = na if na < n else n
    r = -np.inf
    for j in range(lo, hi + 1):
        r = _logaddexp(r, A[j] + B[n - j])
    return r


@numba.njit(cache=True)
def _rs_point_fast(t, x, want_hess):
    """Same as :func:`_rs_point` in O(K^2) (O(K^3) with the replicon term) instead of O(K^3)
    (O(K^4)): leave-one-out and leave-two-out Poisson-binomial values from log-space prefix
    and suffix distributions (pre[l]: units < l, suf[l]: units >= l) and, for the pairs, a
    running prefix that skips unit l.  Used for K >= 7; equal to _rs_point to rounding (tested).
    """
    K = t.shape[0]
    m = (K + 1) // 2
    u, lp, lq, lg = _rs_unit_logs(t, x)
    pre = np.full((K + 1, K + 1), -np.inf)
    suf = np.full((K + 2, K + 1), -np.inf)
    pre[0, 0] = 0.0
    for l in range(K):
        for n in range(l + 2):
            a = pre[l, n] + lq[l] if n <= l else -np.inf
            b = pre[l, n - 1] + lp[l] if n >= 1 else -np.inf
            pre[l + 1, n] = _logaddexp(a, b)
    suf[K, 0] = 0.0
    for l in range(K - 1, -1, -1):
        c = K - 1 - l          # units in suf[l + 1]
        for n in range(c + 2):
            a = suf[l + 1, n] + lq[l] if n <= c else -np.inf
            b = suf[l + 1, n - 1] + lp[l] if n >= 1 else -np.inf
            suf[l, n] = _logaddexp(a, b)
    lZ = -np.inf
    for n in range(m, K + 1):
        lZ = _logaddexp(lZ, pre[K, n])
    g = np.empty(K)
    for l in range(K):
        g[l] = math.exp(lg[l] + _lconv_at(pre[l], l, suf[l + 1], K - 1 - l, m - 1) - lZ)
    dx, fro = _rs_first_terms(t, u, g, want_hess)
    if want_hess:
        A = np.empty(K + 1)
        for l in range(K - 1):
            for n in range(K + 1):
                A[n] = pre[l, n]
            na = l                 # A: units < k except l, starting with k = l + 1
            for k in range(l + 1, K):
                nb = K - 1 - k     # units in suf[k + 1]
                a2 = _lconv_at(A, na, suf[k + 1], nb, m - 2) if m >= 2 else -np.inf
                b2 = _lconv_at(A, na, suf[k + 1], nb, m - 1)
                base = lg[l] + lg[k] - lZ
                v = math.exp(base + a2) - math.exp(base + b2) - g[l] * g[k]
                fro += 2.0 * v * v
                # add unit k to A
                for n in range(na + 1, 0, -1):
                    A[n] = _logaddexp(A[n] + lq[k] if n <= na else -np.inf, A[n - 1] + lp[k])
                A[0] = A[0] + lq[k]
                na += 1
    return lZ, dx, fro


@numba.njit(cache=True)
def _rs_average(z, w, K, x, want_hess, logfact, fast=False):
    n = z.shape[0]
    idx = np.zeros(K, dtype=np.int64)
    t = np.empty(K)
    s0 = 0.0
    s1 = 0.0
    s2 = 0.0
    while True:
        wt = _multiset_weight(idx, w, logfact)
        if wt > 0.0:
            for j in range(K):
                t[j] = z[idx[j]]
            if fast:
                a, b, c = _rs_point_fast(t, x, want_hess)
            else:
                a, b, c = _rs_point(t, x, want_hess)
            s0 += wt * a
            s1 += wt * b
            s2 += wt * c
        if not _multisets_next(idx, n):
            break
    return s0, s1, s2


# --------------------------------------------------------------------------- quadrature rules
# default quadrature of the RS averages per K: tanh-sinh level (int, multiset rule) for K <= 5;
# ("gh", n): multiset of an n-point Gauss-Hermite rule (K = 7); ("rqmc", log2 points, seed):
# scrambled Sobol set (K >= 9).  See tcm_storage and docs/committee.md for the measurements.
_RS_LEVEL = {1: 4, 3: 3, 5: 1}
_RS_GH_K7 = 16
_RS_RQMC_LOG2 = 16
_RQMC_SETS = 5           # search set + 4 independent scramblings for the error bar


def _rs_default_level(K):
    if K in _RS_LEVEL:
        return _RS_LEVEL[K]
    if K == 7:
        return ("gh", _RS_GH_K7)
    return ("rqmc", _RS_RQMC_LOG2, 0)


def _rs_nodes(level):
    """1-d rule for the RS averages: tanh-sinh level (int >= 0) with a break at t = 0, or
    ("gh", n) for an n-point Gauss-Hermite rule (used as an independent check rule)."""
    if isinstance(level, tuple):
        z, w = gs.gauss_hermite(level[1])
        return np.ascontiguousarray(z), np.ascontiguousarray(w)
    z, w = gs.piecewise_nodes([0.0], level)
    keep = w > 0
    return np.ascontiguousarray(z[keep]), np.ascontiguousarray(w[keep])


@lru_cache(maxsize=_RQMC_SETS)   # one storage call uses 5 sets (2^16 x K floats each: 11 MB at K = 21)
def _sobol_normal(K, log2_points, seed):
    """Antithetic scrambled Sobol set: 2^(log2_points-1) points t mapped to N(0, I_K), then -t
    (read-only, cached).  The symmetrization makes every odd moment of the set vanish exactly;
    without it the term sqrt((1-q)/q) E[sum t dlnZ/du] of Eq. RS.2 is dominated by the sample
    mean of sum t as q -> 0 and the root is lost."""
    T = _sobol_normal_points(K, log2_points - 1, seed)
    T = np.ascontiguousarray(np.concatenate([T, -T]))
    T.setflags(write=False)
    return T


@numba.njit(cache=True)
def _rs_average_pts(T, x, want_hess):
    """Equal-weight average of (ln Z, sum t dlnZ/du, ||d2 lnZ||_F^2) over the rows of T."""
    n = T.shape[0]
    s0 = 0.0
    s1 = 0.0
    s2 = 0.0
    for r in range(n):
        a, b, c = _rs_point_fast(T[r], x, want_hess)
        s0 += a
        s1 += b
        s2 += c
    return s0 / n, s1 / n, s2 / n


def _rqmc_hess_points(K, log2_points):
    """Number of points used for the O(K^3) replicon term: the first 2^j points of the set
    (a balanced Sobol prefix), 2^j <= 2e9/K^3, at least 2^10."""
    j = int(math.floor(math.log2(max(2e9 / K ** 3, 1024.0))))
    return 2 ** min(log2_points, max(10, j))


def _rs_averages(K, q, level, want_hess=True):
    x = math.sqrt(q / (1.0 - q))
    if isinstance(level, tuple) and level[0] == "rqmc":
        T = _sobol_normal(K, level[1], level[2])
        a, b, _ = _rs_average_pts(T, x, False)
        c = 0.0
        if want_hess:
            nh = _rqmc_hess_points(K, level[1]) // 2      # antithetic halves of the prefix
            c = _rs_average_pts(np.ascontiguousarray(np.concatenate([T[:nh], T[T.shape[0] // 2:T.shape[0] // 2 + nh]])),
                                x, True)[2]
        return a, b, c
    z, w = _rs_nodes(level)
    return _rs_average(z, w, K, x, want_hess, _LOGFACT, K >= 7)


def _rs_residual(alpha, K, q, level):
    """(1-q)^2 * 2 ds/dq (RS.2): q + alpha sqrt((1-q)/q) E[sum t dlnZ/du]."""
    _, d, _ = _rs_averages(K, q, level, want_hess=False)
    return q + alpha * math.sqrt((1.0 - q) / q) * d


def _check_rules(K, level):
    """Independent rules for the error estimate of ``level``.

    tanh-sinh multiset: the next-coarser level (an upper estimate), or for K = 5 at level 1 a
    36-point Gauss-Hermite multiset; ("gh", n): ("gh", n - 4); RQMC: 4 further scramblings.
    """
    if isinstance(level, tuple):
        if level[0] == "gh":
            return [("gh", level[1] - 4)]
        return [("rqmc", level[1], level[2] + 1 + r) for r in range(_RQMC_SETS - 1)]
    return [("gh", 36)] if (K >= 5 and level <= 1) else [level - 1]


# --------------------------------------------------------------------------- RS saddle point (RS.1-RS.3)
def _storage_one(alpha, K, level, guess=None, tol=math.inf, progress=False):
    with _bar(f"TCM K={K} RS storage, alpha={alpha:g}: K-dimensional averages", None, progress and K >= 7) as bar:
        return _storage_one_bar(alpha, K, level, bar, tol)


def _storage_one_bar(alpha, K, level, bar, tol):
    if alpha == 0.0:
        return SaddlePoint("committee.tcm_storage", {"alpha": 0.0, "K": K, "activation": "sign"},
                           {"q": 0.0, "q_hat": 0.0}, {"entropy": 0.0}, True, 0.0, 0,
                           np.array([-0.5]), 1.0, True, {"ansatz": "rs"})
    ac = _alpha_rs_sign(K)
    if alpha >= ac:
        raise ValueError(f"alpha must be < alpha_c^RS(K={K}) = {ac:.12g} for a finite-volume RS solution, got {alpha!r}")
    def f(q):
        bar.update(1)
        return _rs_residual(alpha, K, q, level)
    lo, hi = 1e-12, 1.0 - 1e-9
    try:
        info = root_scalar(f, (lo, hi), xtol=1e-14)
    except ConvergenceError as exc:
        raise ConvergenceError(f"tcm_storage: RS saddle point not bracketed at alpha={alpha}, K={K}",
                               diagnostics={"alpha": alpha, "K": K}) from exc
    q = float(info.x[0])
    l0, d, fro = _rs_averages(K, q, level)
    gsv, dgs, d2gs = _eqs.gs_rs(q)
    # Hessian of s(q) (1-d): derivative of ds/dq = r(q)/(2(1-q)^2) by central differences
    h = 1e-5 * min(q, 1 - q)
    dsp = lambda qq: _rs_residual(alpha, K, qq, level) / (2.0 * (1.0 - qq) ** 2)
    hess = (dsp(q + h) - dsp(q - h)) / (2 * h)
    slope = 2.0 * (1.0 - q) ** 2 * hess             # r'(q) at the root
    extra = {"ansatz": "rs", "quadrature_level": level}
    checks = []
    for lev_c in _check_rules(K, level):
        lc, dc, froc = _rs_averages(K, q, lev_c)
        rc = q + alpha * math.sqrt((1.0 - q) / q) * dc
        checks.append((rc / slope, gsv + alpha * lc, 1.0 - alpha * froc))
    entropy = gsv + alpha * l0
    replicon = 1.0 - alpha * fro
    if isinstance(level, tuple) and level[0] == "rqmc":
        # RQMC: q from the search set, corrected by the mean residual of all sets (Newton step);
        # entropy and replicon averaged over the sets (entropy is stationary in q); the error
        # is 2 standard errors of the mean over the independent scramblings
        dq = np.array([0.0] + [c[0] for c in checks])
        ent = np.array([entropy] + [c[1] for c in checks])
        rep = np.array([replicon] + [c[2] for c in checks])
        n = len(dq)
        q = q - float(dq.mean())
        entropy, replicon = float(ent.mean()), float(rep.mean())
        se_q, se_s, se_r = (float(a.std(ddof=1) / math.sqrt(n)) for a in (dq, ent, rep))
        quad_err = 2.0 * max(se_q, se_s)
        extra.update(stderr_q=se_q, stderr_entropy=se_s, stderr_replicon=se_r, replicon_error=2.0 * se_r,
                     points=len(_sobol_normal(K, level[1], level[2])),
                     replicon_points=_rqmc_hess_points(K, level[1]), sets=n)
        gsv, dgs, d2gs = _eqs.gs_rs(q)
    else:
        dqc, entc, repc = checks[0]
        # q error from the residual change dq = dr / r'(q); entropy change at the same q
        quad_err = max(abs(dqc), abs(entc - entropy))
        extra["replicon_coarse"] = repc
        extra["replicon_error"] = abs(repc - replicon)
    extra["quadrature_error"] = quad_err
    resid = abs(info.residual) if np.isfinite(info.residual) else abs(f(float(info.x[0])))
    if quad_err > tol:
        raise ConvergenceError(f"tcm_storage: quadrature error estimate {quad_err:.2e} exceeds tol={tol:g} "
                               f"at alpha={alpha}, K={K} (q={q:.6f}); raise `level`", x=[q],
                               diagnostics={"alpha": alpha, "K": K, "level": level, "quadrature_error": quad_err})
    if not (np.isfinite(entropy) and np.isfinite(replicon)):
        raise ConvergenceError("tcm_storage produced a non-finite value", x=[q], diagnostics={"alpha": alpha, "K": K})
    return SaddlePoint(
        "committee.tcm_storage", {"alpha": alpha, "K": K, "activation": "sign"},
        {"q": q, "q_hat": 2.0 * dgs},
        {"entropy": entropy},
        converged=True, residual=resid, iterations=info.iterations,
        hessian_eigenvalues=np.array([hess]), replicon=replicon, rs_stable=bool(replicon > 0),
        extra=extra,
    )


def _rs_level_arg(k, method, level):
    """Map (method, level) of the public API to the internal rule spec."""
    if method is None:
        if level is None:
            return _rs_default_level(k)
        method = "multiset" if k <= 5 else ("gh" if k == 7 else "rqmc")
    check_choice("method", method, ("multiset", "gh", "rqmc"))
    if method == "multiset":
        if level is None:
            if k not in _RS_LEVEL:
                raise ValueError(f"level must be given for method='multiset' at K={k} (tanh-sinh multiset "
                                 f"rule, ~(34 * 2^level)^K/K! points)")
            return _RS_LEVEL[k]
        return check_int("level", level, 1)
    if method == "gh":
        return ("gh", _RS_GH_K7 if level is None else check_int("level", level, 6))
    return ("rqmc", _RS_RQMC_LOG2 if level is None else check_int("level", level, 8), 0)


def _sign_storage(alpha, K, level, tol, method, progress=True):
    """Sign branch of :func:`statmech.committee.tcm_storage` (arguments as there, activation and ansatz checked)."""
    k = _check_K(K, "sign", "tcm_storage")
    if k == math.inf:
        raise ValueError(f"tcm_storage: K must be a finite odd integer >= 1 (at K = inf the RS capacity is "
                         f"infinite), got {K!r}")
    _check_K_max(k, K_MAX_RQMC, "tcm_storage", "the finite-K RS saddle point (RQMC for K >= 9, cost ~K^2)")
    check_real("alpha", alpha, function="tcm_storage")
    a = check_range("alpha", alpha, 0.0)
    ac = _alpha_rs_sign(k)
    if np.any(a >= ac):
        raise ValueError(f"tcm_storage: alpha must be < alpha_c^RS(K={k}) = {ac:.12g} for a finite-volume RS "
                         f"solution, got {float(np.max(a))!r}")
    lev = _rs_level_arg(k, method, level)
    tol = float(check_range("tol", tol, 0.0, lo_open=True, allow_inf=True))
    if k in _RS_AUTO and method is None and level is None:
        return vectorize_over(lambda al, guess=None: _storage_auto(al, k, tol, progress), a,
                              model="committee.tcm_storage")
    return vectorize_over(lambda al, guess=None: _storage_one(al, k, lev, guess, tol, progress), a,
                          model="committee.tcm_storage")


# K = 5, 7 defaults: a Gauss-Hermite multiset first (K = 5: n = 20, 4e-8 in q at alpha = 1 in ~2 s,
# vs 5e-5 in minutes for tanh-sinh level 1; K = 7: n = 16), then the fallback rule when the GH error
# estimate exceeds tol (near capacity, where the integrand develops sharp layers).
_RS_AUTO = {5: (("gh", 20), 1), 7: (("gh", _RS_GH_K7), ("rqmc", _RS_RQMC_LOG2, 0))}


def _storage_auto(alpha, k, tol, progress=False):
    """Default rule for K = 5, 7: Gauss-Hermite multiset, the fallback rule if its error estimate exceeds tol."""
    first, fallback = _RS_AUTO[k]
    try:
        return _storage_one(alpha, k, first, None, tol, progress)
    except ConvergenceError as exc:
        if "quadrature error" not in str(exc):
            raise
    return _storage_one(alpha, k, fallback, None, tol, progress)


# --------------------------------------------------------------------------- AT line
def tcm_at_line(K, *, level=None, method=None, progress=True):
    """alpha_AT(K): where the replicon (Eq. RS.3) of the RS solution of the sign TCM vanishes.

    For K = 1 there is no instability below alpha_c = 2 (returns 2.0, marginal at capacity).
    For K >= 3 the RS solution is unstable for alpha_AT < alpha < alpha_c^RS.  Solved along
    the RS line parametrized by q: Eq. RS.2 gives alpha(q) = q sqrt(q/(1-q)) / (-E[sum t
    dlnZ/du]) explicitly, and the root of lambda_AT(q) = 1 - alpha(q) E||d2 lnZ||_F^2 is
    found by Brent.  ``method``/``level`` as in :func:`tcm_storage`; the default is the
    tanh--sinh multiset for K <= 5 and RQMC (2^16 antithetic points) for K >= 7, because the
    replicon term converges slowly in the Gauss--Hermite order.  With RQMC the root is taken
    for the search set and averaged with the linearized roots of 4 further scramblings
    (:func:`tcm_at_line_point` returns the error estimate, 2 standard errors).
    alpha_AT = 1.7294 (K = 3), 2.0729 (K = 5), 2.3200, 2.4719, 2.5681, 2.6832, 2.7705
    (K = 7, 9, 11, 15, 21; +- ~1e-3); alpha_AT/alpha_c^RS = 0.430, 0.359, 0.317, 0.284, 0.257,
    0.218, 0.180.  Cost: seconds (K = 3, level 2), ~2 min (K = 5, 7 wall), ~40 s (K = 11) to
    ~3 min (K = 21) CPU, growing like K^2 ... K^3 (domain: odd K <= 201, ValueError beyond); a
    progress bar for K >= 5, and the result is cached on disk (a second process answers at once).
    """
    return float(tcm_at_line_point(K, level=level, method=method, progress=progress).alpha)


def tcm_at_line_point(K, *, level=None, method=None, progress=True):
    """SaddlePoint at the AT line: params alpha (= alpha_AT), K; order_params q; extra
    quadrature_error (error estimate of alpha_AT, also ``error``) and alpha_over_alpha_c =
    alpha_AT/alpha_c^RS.  Domain: odd K with 1 <= K <= 201 (ValueError beyond, naming K and the
    limit).  A progress bar counts the K-dimensional averages for K >= 5 (``progress=False`` hides
    it); the result is cached in memory and on disk (keyed by K and the rule)."""
    k = _check_K(K, "sign", "tcm_at_line")
    if k == math.inf:
        raise ValueError(f"tcm_at_line: K must be a finite odd integer >= 1, got {K!r}")
    _check_K_max(k, K_MAX_RQMC, "tcm_at_line", "the AT line (RQMC for K >= 7, cost ~K^2 ... K^3)")
    if k == 1:
        return SaddlePoint("committee.tcm_at_line", {"alpha": 2.0, "K": 1, "activation": "sign"},
                           {"q": 1.0}, {}, extra={"quadrature_error": 0.0, "alpha_over_alpha_c": 1.0,
                                                  "note": "perceptron: marginal at capacity"})
    if k >= 7 and method is None and level is None:
        # the replicon term converges slowly in the Gauss-Hermite order (K = 7, q = 0.61:
        # ||d2 lnZ||^2 = 0.43234, 0.43106, 0.43056 for n = 16, 20, 24; RQMC 2^18: 0.43058)
        return _at_line_cached(k, ("rqmc", _RS_RQMC_LOG2, 0), bool(progress))
    return _at_line_cached(k, _rs_level_arg(k, method, level), bool(progress))


def _at_alpha_replicon(k, q, lev):
    _, d, fro = _rs_averages(k, q, lev)
    al = -q / (math.sqrt((1.0 - q) / q) * d)
    return al, 1.0 - al * fro


def _at_line_search(k, lev, progress):
    """The AT-line root along the RS line (JSON-ready dict; see :func:`tcm_at_line`)."""
    ac = _alpha_rs_sign(k)
    checks = _check_rules(k, lev)
    with _bar(f"TCM K={k} AT line: K-dimensional averages", None, progress and k >= 5) as bar:
        def rep(q, lv=lev):
            bar.update(1)
            return _at_alpha_replicon(k, q, lv)
        g = lambda q: rep(q)[1]
        grid = np.linspace(0.1, 0.9, 9)
        vals = [g(q) for q in grid]
        i = next((j for j in range(len(grid) - 1) if vals[j] > 0 >= vals[j + 1]), None)
        if i is None:
            raise ConvergenceError(f"tcm_at_line: replicon sign change not bracketed for q in [0.1, 0.9] at K={k}",
                                   diagnostics={"K": k, "replicon": vals})
        try:
            info = root_scalar(g, (grid[i], grid[i + 1]), xtol=1e-10)
        except ConvergenceError as exc:
            raise ConvergenceError(f"tcm_at_line: the replicon root in q in [{grid[i]:.2f}, {grid[i + 1]:.2f}] not found "
                                   f"at K={k} ({exc})", x=exc.x, residual=exc.residual) from None
        q = float(info.x[0])
        al = rep(q)[0]
        hq = 1e-5
        dg = (g(q + hq) - g(q - hq)) / (2 * hq)            # d lambda_AT / dq along the RS line
        da = (rep(q + hq)[0] - rep(q - hq)[0]) / (2 * hq)
        ests = []
        for lev_c in checks:
            al_c, rep_c = rep(q, lev_c)
            # root of the check rule, linearized: q_c = q - rep_c/dg; alpha_c = al_c + da (q_c - q)
            ests.append(al_c - da * rep_c / dg)
    if isinstance(lev, tuple) and lev[0] == "rqmc":
        a_all = np.array([al] + ests)
        al_final = float(a_all.mean())
        err = 2.0 * float(a_all.std(ddof=1) / math.sqrt(len(a_all)))
    else:
        al_final = al
        err = abs(ests[0] - al)
    if not (0.0 < al_final < ac):
        raise ConvergenceError(f"tcm_at_line: alpha_AT outside (0, alpha_c^RS) at K={k}", x=[q],
                               diagnostics={"K": k, "alpha_AT": al_final, "alpha_c": ac})
    return {"alpha": float(al_final), "q": q, "residual": float(abs(info.residual)), "iterations": int(info.iterations),
            "error": float(err), "alpha_search_rule": float(al), "alpha_c": float(ac)}


@lru_cache(maxsize=32)
def _at_line_cached(k, lev, progress=False):
    key = {"K": k, "level": list(lev) if isinstance(lev, tuple) else lev}
    d = _disk_cached("sign_at_line", key, lambda: _at_line_search(k, lev, progress))
    return SaddlePoint("committee.tcm_at_line", {"alpha": d["alpha"], "K": k, "activation": "sign"},
                       {"q": d["q"]}, {}, converged=True, residual=d["residual"], iterations=d["iterations"],
                       replicon=0.0, extra={"quadrature_error": d["error"], "alpha_over_alpha_c": d["alpha"] / d["alpha_c"],
                                            "quadrature_level": lev, "alpha_search_rule": d["alpha_search_rule"]},
                       error=d["error"], headline="alpha")
