r"""Sign tree committee machine, one-step RSB at capacity (q_1 -> 1, Eq. 1RSB.1).

alpha_c^1RSB is the stationary value of alpha(q0, y) = -S(q0, y) / ((2/y) E_{t0} ln Y) over
(q0, y), with S the entropic term (``_eqs.s1rsb``) and Y(h) = E_{lambda ~ N(h, (1-q0) I)}
exp(-y C(lambda)/2) the inner average, reduced exactly to a 1-d integral over the largest
flipped ``|lambda|`` (order statistics, docs/committee.md).

* K <= 5: :func:`tcm_capacity_1rsb_point` -- outer average on the multisets of a
  Gauss--Hermite rule (``_energ_1rsb``, ``_alpha_of``), inner tanh--sinh (``_inner_Y``);
* K >= 7: :func:`tcm_capacity_1rsb_rqmc` -- outer average on scrambled Sobol sets, inner on a
  common Gauss--Legendre s-grid in O(K^2) per node (``_inner_Y_grid``);
  :func:`tcm_capacity_1rsb_point` routes there (25 scramblings, cached per K).

The K -> inf continuum limit of the same equation is in :mod:`.large_k`.
"""
from __future__ import annotations

import math
from functools import lru_cache

import numba
import numpy as np

from .. import gaussian as gs
from ..errors import ConvergenceError, check_int
from ..gaussian import G_nb, H_nb
from ..gaussian import left_tail_fill  # numba node filler of the core
from ..saddle import SaddlePoint, SolveInfo
from ._common import K_MAX_RQMC, _bar, _check_K, _check_K_max, _disk_cached, _sobol_normal_points, _stationary_2d
from ._kernels import _LOGFACT, _eqs, _multiset_point, _multiset_start

__all__ = ["tcm_capacity_1rsb_point", "tcm_capacity_1rsb_rqmc"]


# --------------------------------------------------------------------------- K <= 5: multiset outer rule
@numba.njit(cache=True)
def _ival(lo, hi, mu, sig):
    """P(lo < X < hi), X ~ N(mu, sig^2), computed on the side that avoids cancellation."""
    a = (lo - mu) / sig
    b = (hi - mu) / sig
    if a > 0:
        return H_nb(a) - H_nb(b)
    if b < 0:
        return H_nb(-b) - H_nb(-a)
    return 1.0 - H_nb(b) - H_nb(-a)


@numba.njit(cache=True)
def _esym(c, b, skip, k, buf):
    """sum over subsets S (``|S| = k``) of the units != skip of prod_S c prod_rest b."""
    K = c.shape[0]
    for n in range(K + 1):
        buf[n] = 0.0
    buf[0] = 1.0
    cnt = 0
    for l in range(K):
        if l == skip:
            continue
        cnt += 1
        for n in range(cnt, 0, -1):
            buf[n] = buf[n] * b[l] + buf[n - 1] * c[l]
        buf[0] = buf[0] * b[l]
    return buf[k]


@numba.njit(cache=True)
def _unit_tables(hs, v, y, mu, xs, xcs, tw):
    """Per-unit pieces of Y_mu(h) (:func:`_inner_Y_mu`; mu = 0: :func:`_inner_Y`) for the unit
    fields ``hs[a]``: they depend on one or two units only, so the outer multiset sum looks them
    up instead of recomputing them.  Each flipped unit carries the weight e^mu.

    pp[a] = P(lambda_a > 0); E[a, i] = e^mu w_i e^{-y s^2/2} at node i of the s-integral of unit a
    as the largest flipped one (lambda_a = -s; 0 where the node carries no weight);
    C[a, i, b] = c_b(s), B[a, i, b] = b_b(s) at that s.
    """
    n = hs.shape[0]
    nn = xs.shape[0]
    sv = math.sqrt(v)
    pp = np.empty(n)
    for a in range(n):
        pp[a] = H_nb(-hs[a] / sv)
    a1 = 1.0 + y * v
    emu = math.exp(mu)
    sig = math.sqrt(v / a1)
    pref = np.empty(n)
    muj = np.empty(n)
    for a in range(n):
        pref[a] = emu * math.exp(-y * hs[a] * hs[a] / (2.0 * a1)) / math.sqrt(a1)
        muj[a] = hs[a] / a1
    zbuf = np.empty(nn)
    wbuf = np.empty(nn)
    E = np.zeros((n, nn))
    C = np.zeros((n, nn, n))
    B = np.zeros((n, nn, n))
    for a in range(n):
        left_tail_fill(-hs[a] / sv, xs, xcs, tw, zbuf, wbuf)
        for i in range(nn):
            wi = wbuf[i]
            if wi == 0.0:
                continue
            lam = hs[a] + sv * zbuf[i]
            if lam >= 0.0:
                continue
            s = -lam
            E[a, i] = emu * wi * math.exp(-0.5 * y * s * s)
            for b in range(n):
                C[a, i, b] = pp[b] + pref[b] * _ival(-s, 0.0, muj[b], sig)
                B[a, i, b] = H_nb((s + hs[b]) / sv)
    return pp, E, C, B


@numba.njit(cache=True)
def _Y_from_tables(rows, pp, E, C, B):
    """Y(h) of :func:`_inner_Y` for units h_j = hs[rows[j]], from :func:`_unit_tables` of hs."""
    K = rows.shape[0]
    m = (K + 1) // 2
    buf = np.empty(K + 1)
    pr = np.empty(K)
    qq = np.empty(K)
    for j in range(K):
        pr[j] = pp[rows[j]]
        qq[j] = 1.0 - pr[j]
    # P(n_+ >= m)
    Y = 0.0
    for k in range(m, K + 1):
        Y += _esym(pr, qq, -1, k, buf)
    c = np.empty(K)
    b = np.empty(K)
    for l in range(K):
        a = rows[l]
        acc = 0.0
        for i in range(E.shape[1]):
            e = E[a, i]
            if e == 0.0:
                continue
            for j in range(K):
                if j == l:
                    continue
                c[j] = C[a, i, rows[j]]
                b[j] = B[a, i, rows[j]]
            acc += e * _esym(c, b, l, m - 1, buf)
        Y += acc
    return Y


@numba.njit(cache=True)
def _inner_Y(h, v, y, xs, xcs, tw):
    """Y(h) = E_{lambda ~ N(h, v I)} exp(-y C(lambda)/2) for majority vote (sign units).

    Y = P(n_+ >= m) + sum_l int_0^inf ds f_l(s) e^{-y s^2/2} e_{m-1}(c(s), b(s)) where unit l is
    the largest flipped negative at lambda_l = -s, c_j(s) = P(lambda_j > 0) + A_j(s),
    A_j(s) = int_{-s}^0 N(lambda; h_j, v) e^{-y lambda^2/2}, b_j(s) = P(lambda_j < -s).
    The s-integral is taken in z = (lambda_l - h_l)/sqrt(v) with the Gaussian measure on
    (-inf, -h_l/sqrt(v)) (tanh--sinh on the probability scale, no cut-off).
    """
    pp, E, C, B = _unit_tables(h, v, y, 0.0, xs, xcs, tw)
    return _Y_from_tables(np.arange(h.shape[0]), pp, E, C, B)


@numba.njit(cache=True)
def _inner_Y_mu(h, v, y, mu, xs, xcs, tw):
    """Y_mu(h) = E_{lambda ~ N(h, v I)} exp(-y C(lambda)/2 + mu n_f(lambda)), n_f the number of
    flipped units (mu = 0: :func:`_inner_Y`; d ln Y_mu/d mu at 0 is the tilted mean of n_f,
    the coefficient of the leading finite-(1 - q1) correction, docs/committee.md)."""
    pp, E, C, B = _unit_tables(h, v, y, mu, xs, xcs, tw)
    return _Y_from_tables(np.arange(h.shape[0]), pp, E, C, B)


@numba.njit(cache=True)
def _outer_lnY_mu(z, w, K, q0, y, mu, xs, xcs, tw, logfact):
    """E_{t0} ln Y_mu(sqrt(q0) t0) on the multisets of the rule (z, w) (mu = 0: E_{t0} ln Y of
    Eq. 1RSB.1); unit fields sqrt(q0) z take only n values, so the per-unit pieces of Y_mu are
    tabulated once (:func:`_unit_tables`)."""
    idx = _multiset_start(K)
    a = np.empty(K)
    pp, E, C, B = _unit_tables(math.sqrt(q0) * z, 1.0 - q0, y, mu, xs, xcs, tw)
    acc = 0.0
    while True:
        wt = _multiset_point(idx, z, w, 1.0, logfact, a)
        if wt == 0.0:
            return acc
        acc += wt * math.log(_Y_from_tables(idx, pp, E, C, B))


# (outer Gauss-Hermite order for the Newton search, inner tanh-sinh level, outer order of the
# final evaluation at the stationary point, outer order of the check rule for the error estimate).  The outer average converges only
# algebraically in the Gauss-Hermite order (K = 3 at the saddle point: n = 10, 14, 20, 30, 40,
# 50, 60 give 3.145440, 3.145728, 3.145825, 3.1458398, 3.1458415, 3.1458418, 3.1458419), so for
# K = 3 the Newton search runs at n = 16 and alpha_c is then evaluated at n = 40 (alpha is
# stationary there, so the residual position error enters only at second order, ~1e-7).
# K = 5 at its saddle point: n = 8, 12, 16 give 3.621054, 3.619331, 3.619289 (inner level 3 vs 5:
# 2e-8), so the search runs at n = 8 and the final value uses n = 16 (check rule n = 12).
_1RSB_ORDER = {3: (16, 5, 40, 30), 5: (8, 3, 16, 12)}
_1RSB_START = np.array([0.575, 3.057])     # (logit q0, log y) near the K = 3 solution


def _energ_1rsb(K, q0, y, n_outer, inner_level):
    z, w = gs.gauss_hermite(n_outer)
    xs, xcs, tw = gs.tanh_sinh_rule(inner_level)
    return _outer_lnY_mu(np.ascontiguousarray(z), np.ascontiguousarray(w), K, q0, y, 0.0, xs, xcs, tw, _LOGFACT)


def _alpha_of(K, q0, y, n_outer, inner_level):
    """alpha on the F = 0 surface of Eq. 1RSB.1: -S(q0, y) / ((2/y) E ln Y)."""
    S = _eqs.s1rsb(q0, y)[0]
    E = 2.0 / y * _energ_1rsb(K, q0, y, n_outer, inner_level)
    if not (math.isfinite(E) and E < 0.0):
        # the inner average underflows for extreme (q0 -> 1, y >> 1) far from the saddle point;
        # there alpha -> alpha_RS (y (1 - q0) fixed), so report "not a candidate" rather than 0
        return math.inf
    return -S / E


def _search_1rsb(k, n, lev, n_final, n_check, progress):
    """Stationary point of alpha(q0, y) on the (n, lev) multiset rule (JSON-ready dict)."""
    with _bar(f"TCM K={k} 1RSB (multiset n={n}): alpha(q0, y) evaluations", None, progress) as bar:
        def f(p):
            bar.update(1)
            return _alpha_of(k, 1.0 / (1.0 + math.exp(-p[0])), math.exp(p[1]), n, lev)
        try:
            info, Hm = _stationary_2d(f, _1RSB_START.copy() if k == 3 else _1rsb_start(k))
        except ConvergenceError as exc:
            raise ConvergenceError(f"tcm_capacity_1rsb_point: no stationary point of alpha(q0, y) found at K={k} "
                                   f"(outer Gauss-Hermite n={n}, inner level {lev}; {exc})", x=exc.x,
                                   residual=exc.residual, iterations=exc.iterations, diagnostics={"K": k}) from None
        q0, y = 1.0 / (1.0 + math.exp(-info.x[0])), math.exp(info.x[1])
        if n_final is None:
            ac = f(info.x)
            fine = _alpha_of(k, q0, y, n + 4, lev + 1)
        else:
            # final value with a fine outer rule; error estimate = change from the check rule
            ac = _alpha_of(k, q0, y, n_final, lev)
            fine = _alpha_of(k, q0, y, n_check, lev)
    return {"x": [float(v) for v in info.x], "residual": float(info.residual), "iterations": int(info.iterations),
            "converged": bool(info.converged), "alpha_c": float(ac), "alpha_check": float(fine),
            "eig": [float(v) for v in np.linalg.eigvalsh(Hm)]}


@lru_cache(maxsize=16)
def _capacity_1rsb_cached(k, n, lev, n_final=None, n_check=None, progress=False):
    """(SolveInfo, alpha_c, alpha of the check rule, Hessian eigenvalues) of the multiset search,
    cached in memory and on disk (keyed by the rules, the package version and its source)."""
    key = {"K": k, "n": n, "level": lev, "n_final": n_final, "n_check": n_check}
    d = _disk_cached("sign_1rsb_multiset", key, lambda: _search_1rsb(k, n, lev, n_final, n_check, progress))
    info = SolveInfo(np.array(d["x"]), d["residual"], d["iterations"], d["converged"])
    return info, d["alpha_c"], d["alpha_check"], np.array(d["eig"])


def tcm_capacity_1rsb_point(K, *, n_outer=None, inner_level=None, progress=True):
    """1RSB capacity of the sign TCM at its saddle point (q0, y) (Eq. 1RSB.1).

    alpha_c^1RSB is the stationary value of alpha(q0, y) = -S/E over q0 in (0, 1), y > 0
    (the saddle point of the 1RSB free entropy at which its 1/(1-q1) coefficient vanishes);
    for K = 3, 5 it is a minimum in both directions.  K = 1 (the perceptron, convex
    version space): the minimum sits on the RS boundary (y -> 0), alpha_c^1RSB = 2.

    Domain: odd K with 1 <= K <= 201 (``K_MAX_RQMC``; ValueError beyond, naming K and the limit:
    for larger K see :func:`sign_capacity_large_K` and :func:`tcm_1rsb_large_K`).
    K in [1, 5]: the outer K-dimensional Gaussian average uses the multisets of an
    ``n_outer``-point Gauss--Hermite rule (permutation symmetry), the inner one an exact
    reduction to a 1-d integral (order statistics of the flipped units).

    K = 3: the Newton search uses the n = 16 multiset rule, alpha_c is then evaluated with
    n = 40 at the stationary point: alpha_c^1RSB(3) = 3.145842 (+- 2e-6; confirmed by an
    independent implementation, see docs/committee.md). The thesis's "approx 3.0"
    (Barkai--Hansel--Sompolinsky 1992) is 5 % lower; no stationary point of this ansatz lies
    there.  K = 5: alpha_c^1RSB = 3.6193 (+- 1e-4).

    Returns a SaddlePoint with params K, order_params q0, y, thermo alpha_c (the headline),
    hessian_eigenvalues of alpha(logit q0, log y) (= ``stability``: positive at the minimum),
    ``error`` = extra["quadrature_error"] (K = 3: change of alpha_c between the n = 30 and n = 40
    outer rules at the same point, an upper estimate; K = 5: between n = 12 and n = 16; with
    explicit ``n_outer``/``inner_level``: change with n + 4 and inner level + 1).

    K >= 7: :func:`tcm_capacity_1rsb_rqmc` with 25 scramblings of 1024 points (search on the
    first), extra["stderr"] = standard error over the sets (relative ~5e-4 ... 1e-3 for
    K = 7 ... 99), ``error`` = extra["quadrature_error"] = 2 stderr.  Cost on a shared core: ~10-30 s
    (K = 7), ~1 min (K = 25), ~2 min (K = 49), ~10-20 min (K = 99 ... 201, see docs/committee.md),
    with a progress bar (``progress=False`` hides it).  Every result is cached in memory and on
    disk (``STATMECH_CACHE_DIR``, keyed by K and the rules, the package version and the source of
    the package), so a second process answers in well under a second.
    """
    k = _check_K(K, "sign", "tcm_capacity_1rsb_point")
    if k == math.inf:
        raise ValueError(f"tcm_capacity_1rsb_point: K must be a finite odd integer (K = inf: the capacity is "
                         f"infinite, see sign_capacity_large_K), got {K!r}")
    _check_K_max(k, K_MAX_RQMC, "tcm_capacity_1rsb_point", "the finite-K 1RSB capacity (RQMC)",
                 "for larger K use sign_capacity_large_K(K, '1rsb') or tcm_1rsb_large_K(K)")
    if k >= 7:
        if n_outer is not None or inner_level is not None:
            raise ValueError(f"tcm_capacity_1rsb_point: n_outer/inner_level apply to K <= 5 only (K >= 7 uses RQMC), "
                             f"got K={K!r}")
        return _capacity_1rsb_rqmc_cached(k, bool(progress))
    if k == 1:
        return SaddlePoint("committee.tcm_capacity_1rsb", {"K": 1, "activation": "sign"},
                           {"q0": 1.0, "y": 0.0}, {"alpha_c": 2.0}, ansatz="1rsb", extra={"ansatz": "1rsb",
                           "note": "perceptron: 1RSB reduces to RS (minimum on the y -> 0 boundary)",
                           "quadrature_error": 0.0}, headline="alpha_c")
    n0, l0, nf, nc = _1RSB_ORDER[k]
    n = n0 if n_outer is None else check_int("n_outer", n_outer, 4)
    lev = l0 if inner_level is None else check_int("inner_level", inner_level, 1)
    if n_outer is not None or inner_level is not None:
        nf = nc = None
    info, ac, fine, eig = _capacity_1rsb_cached(k, n, lev, nf, nc, bool(progress))
    q0 = 1.0 / (1.0 + math.exp(-info.x[0]))
    y = math.exp(info.x[1])
    err = abs(fine - ac)
    return SaddlePoint("committee.tcm_capacity_1rsb", {"K": k, "activation": "sign"},
                       {"q0": q0, "y": y}, {"alpha_c": ac}, converged=True, residual=info.residual,
                       iterations=info.iterations, hessian_eigenvalues=eig, rs_stable=bool(np.all(eig > 0)),
                       ansatz="1rsb", extra={"ansatz": "1rsb", "quadrature_error": err, "alpha_c_fine": fine},
                       error=err, stability=eig, headline="alpha_c")


_1RSB_RQMC_REPS = 24


@lru_cache(maxsize=64)
def _capacity_1rsb_rqmc_cached(k, progress=False):
    r = tcm_capacity_1rsb_rqmc(k, reps=_1RSB_RQMC_REPS, progress=progress)
    return SaddlePoint(r.model, r.params, r.order_params, r.thermo, converged=r.converged,
                       residual=r.residual, iterations=r.iterations,
                       hessian_eigenvalues=r.hessian_eigenvalues, rs_stable=r.rs_stable, ansatz=r.ansatz,
                       extra={**r.extra, "quadrature_error": 2.0 * r.extra["stderr"]},
                       error=2.0 * r.extra["stderr"], stability=r.stability, headline="alpha_c")


# --------------------------------------------------------------------------- 1RSB, larger K (Monte Carlo outer)
_GL8 = np.polynomial.legendre.leggauss(8)


@numba.njit(cache=True)
def _inner_Y_grid(h, v, y, gx, gw):
    """Same quantity as :func:`_inner_Y`, O(K^2) per node: common s-grid for all units.

    s in [0, s_max], s_max = max(0, max_l -h_l) + 9 sqrt(v), Gauss-Legendre panels (8 points)
    of width min(sqrt(v), 1/sqrt(y))/2: the factor e^{-y s^2/2} has width 1/sqrt(y), which for
    large K (y ~ 20 (K/3)^1.5) is much narrower than sqrt(v) (panels of width sqrt(v)/2 alone
    were off by 1e-5 at K = 25, 3e-3 at K = 49, 4e-2 at K = 99).  Beyond s_max every
    f_l(s) <= G(9)/sqrt(v), so that neglected part is below K H(9) ~ 1e-19 K.  The panels stop
    early once the rigorous tail bound int_s^inf e^{-y s'^2/2} sum_l f_l e_{m-1} ds' <=
    K/sqrt(v y) H(s sqrt(y)) (f_l <= 1/sqrt(2 pi v), e_{m-1} <= prod (c_j + b_j) <= 1) is below
    1e-17 Y.  Panel width halved changes Y by < 1e-14 (K = 3 ... 99, y up to 3500).
    Leave-one-out sums from prefix/suffix recursions.
    """
    K = h.shape[0]
    m = (K + 1) // 2
    sv = math.sqrt(v)
    pp = np.empty(K)
    qq = np.empty(K)
    for j in range(K):
        pp[j] = H_nb(-h[j] / sv)
        qq[j] = 1.0 - pp[j]
    buf = np.empty(K + 1)
    Y = 0.0
    for k in range(m, K + 1):
        Y += _esym(pp, qq, -1, k, buf)
    a1 = 1.0 + y * v
    sig = math.sqrt(v / a1)
    pref = np.empty(K)
    muj = np.empty(K)
    smax = 0.0
    for j in range(K):
        pref[j] = math.exp(-y * h[j] * h[j] / (2.0 * a1)) / math.sqrt(a1)
        muj[j] = h[j] / a1
        if -h[j] > smax:
            smax = -h[j]
    smax += 9.0 * sv
    sy = math.sqrt(y)
    width = 0.5 * min(sv, 1.0 / sy)
    npan = int(math.ceil(smax / width))
    width = smax / npan
    c = np.empty(K)
    b = np.empty(K)
    pre = np.zeros((K + 1, m))
    suf = np.zeros((K + 2, m))
    tail = K / math.sqrt(v * y)
    for p in range(npan):
        a = p * width
        if tail * H_nb(a * sy) < 1e-17 * Y:
            break
        for i in range(gx.shape[0]):
            s = a + 0.5 * width * (gx[i] + 1.0)
            wi = 0.5 * width * gw[i]
            for j in range(K):
                c[j] = pp[j] + pref[j] * _ival(-s, 0.0, muj[j], sig)
                b[j] = H_nb((s + h[j]) / sv)
            # pre[l][k]: subsets of units < l with k counted (k < m); suf[l][k]: units >= l
            for k in range(m):
                pre[0, k] = 0.0
                suf[K, k] = 0.0
            pre[0, 0] = 1.0
            suf[K, 0] = 1.0
            for l in range(K):
                for k in range(m):
                    v1 = pre[l, k] * b[l]
                    if k > 0:
                        v1 += pre[l, k - 1] * c[l]
                    pre[l + 1, k] = v1
            for l in range(K - 1, -1, -1):
                for k in range(m):
                    v1 = suf[l + 1, k] * b[l]
                    if k > 0:
                        v1 += suf[l + 1, k - 1] * c[l]
                    suf[l, k] = v1
            tot = 0.0
            for l in range(K):
                fl = G_nb((s + h[l]) / sv) / sv
                if fl == 0.0:
                    continue
                e = 0.0
                for k in range(m):
                    e += pre[l, k] * suf[l + 1, m - 1 - k]
                tot += fl * e
            Y += wi * math.exp(-0.5 * y * s * s) * tot
    return Y


@numba.njit(cache=True)
def _outer_1rsb_mc(T, q0, y, gx, gw):
    n, K = T.shape
    sq = math.sqrt(q0)
    v = 1.0 - q0
    h = np.empty(K)
    acc = np.empty(n)
    for r in range(n):
        for j in range(K):
            h[j] = sq * T[r, j]
        acc[r] = math.log(_inner_Y_grid(h, v, y, gx, gw))
    return acc


def _1rsb_start(K):
    """(logit q0, log y) starting point: q0 ~ 1 - 0.95/ln K (>= 0.6), y ~ 20 (K/3)^1.5 (fit to K = 3 ... 25)."""
    q0 = max(0.6, 1.0 - 0.95 / math.log(K)) if K > 3 else 0.64
    y = 21.2 * (K / 3.0) ** 1.5
    return np.array([math.log(q0 / (1.0 - q0)), math.log(y)])


def tcm_capacity_1rsb_rqmc(K, *, log2_points=10, seed=0, x0=None, reps=8, progress=True):
    """1RSB capacity (Eq. 1RSB.1) for larger odd K with a randomized quasi-Monte Carlo outer average.

    Domain: odd K with 3 <= K <= 201 (``K_MAX_RQMC``; ValueError beyond, naming K and the limit).
    The K-dimensional outer average E_{t0} ln Y uses one scrambled Sobol set of 2^log2_points
    points (fixed during the search, so alpha(q0, y) is smooth and its stationary point is
    found by Newton on finite-difference derivatives); the inner average is exact (1-d
    integral on a Gauss--Legendre grid, O(K^2) per node, see ``_inner_Y_grid``).  The
    scrambled Sobol set reduces the variance of the mean of ln Y ~80x against plain Monte Carlo
    (K = 9 ... 49; a regression control variate on moments of sum t, ``n_+ - n_-``, ``|t|^2`` was tried
    and gave no further gain on top of RQMC).  The error bar ``extra["stderr"]`` is the standard error of the mean
    over the search set and ``reps`` further independent scramblings at the stationary point
    (alpha is stationary there, so the position error of the search enters at second order).

    Cost (wall time of the search + 9 sets, log2_points = 10, on the 2 shared cores under
    load): 9 s (K = 3), 33 s (K = 9), 54 s (K = 25), 64-96 s (K = 35, 49), 5 min (K = 75),
    8 min (K = 99), 20 min (K = 151); each further set costs ~1/60 of that (table in
    docs/committee.md, values in figures/data/committee_1rsb_largeK.json); a progress bar counts
    the evaluations of alpha(q0, y) (``progress=False`` hides it).  Checked against the multiset rule at
    K = 3, 5.  Returns a SaddlePoint (q0, y, alpha_c; extra: stderr, alpha_c of each set;
    ``error`` = stderr; ``stability`` = Hessian eigenvalues of alpha(logit q0, log y)).
    Raises ConvergenceError naming K if the search finds no stationary point.
    """
    k = _check_K(K, "sign", "tcm_capacity_1rsb_rqmc")
    if k == math.inf or k < 3:
        raise ValueError(f"tcm_capacity_1rsb_rqmc: K must be a finite odd integer >= 3, got {K!r}")
    _check_K_max(k, K_MAX_RQMC, "tcm_capacity_1rsb_rqmc", "the finite-K 1RSB capacity (RQMC)",
                 "for larger K use sign_capacity_large_K(K, '1rsb') or tcm_1rsb_large_K(K)")
    m = check_int("log2_points", log2_points, 6)
    nrep = check_int("reps", reps, 2)
    seed = check_int("seed", seed, 0)
    key = {"K": k, "log2_points": m, "seed": seed, "reps": nrep,
           "x0": None if x0 is None else [float(v) for v in np.asarray(x0, dtype=float).ravel()]}
    d = _disk_cached("sign_1rsb_rqmc", key, lambda: _rqmc_search(k, m, seed, x0, nrep, bool(progress)))
    eig = np.array(d["eig"])
    vals = d["alpha_sets"]
    return SaddlePoint("committee.tcm_capacity_1rsb", {"K": k, "activation": "sign"},
                       {"q0": 1.0 / (1.0 + math.exp(-d["x"][0])), "y": math.exp(d["x"][1])},
                       {"alpha_c": float(np.mean(vals))}, converged=True, residual=d["residual"],
                       iterations=d["iterations"], hessian_eigenvalues=eig, rs_stable=bool(np.all(eig > 0)),
                       ansatz="1rsb", extra={"ansatz": "1rsb", "stderr": d["stderr"], "alpha_c_search_set": vals[0],
                              "alpha_c_sets": list(vals), "points": 2 ** m,
                              "note": f"RQMC outer average; stderr over {len(vals)} scramblings"},
                       error=d["stderr"], stability=eig, headline="alpha_c")


def _rqmc_search(k, m, seed, x0, nrep, progress):
    """The search of :func:`tcm_capacity_1rsb_rqmc` (JSON-ready dict)."""
    gx, gw = _GL8

    def alpha_at(p, T):
        q0 = 1.0 / (1.0 + math.exp(-p[0]))
        y = math.exp(p[1])
        S = _eqs.s1rsb(q0, y)[0]
        L = _outer_1rsb_mc(T, q0, y, gx, gw)
        bar.update(1)
        if not np.all(np.isfinite(L)):
            return math.inf    # inner average underflow far from the saddle point: not a candidate
        E = 2.0 / y * float(np.mean(L))
        return -S / E if E < 0.0 else math.inf

    with _bar(f"TCM K={k} 1RSB (RQMC): alpha(q0, y) evaluations", None, progress) as bar:
        T = _sobol_normal_points(k, m, seed)
        start = _1rsb_start(k) if x0 is None else np.asarray(x0, dtype=float)
        try:
            info, Hm = _stationary_2d(lambda p: alpha_at(p, T), start, h=2e-3, tol=1e-6)
        except ConvergenceError as exc:
            raise ConvergenceError(f"tcm_capacity_1rsb_rqmc: no stationary point of alpha(q0, y) found at K={k} "
                                   f"({exc})", x=exc.x, residual=exc.residual, iterations=exc.iterations,
                                   diagnostics={"K": k}) from None
        ac = alpha_at(info.x, T)
        bar.total = bar.n + nrep
        bar.refresh()
        vals = [ac] + [alpha_at(info.x, _sobol_normal_points(k, m, seed + 1 + r)) for r in range(nrep)]
    if not np.all(np.isfinite(vals)):
        raise ConvergenceError(f"tcm_capacity_1rsb_rqmc: non-finite alpha at the stationary point, K={k}",
                               x=info.x, diagnostics={"K": k})
    se = float(np.std(vals, ddof=1) / math.sqrt(len(vals)))
    return {"x": [float(v) for v in info.x], "residual": float(info.residual), "iterations": int(info.iterations),
            "eig": [float(v) for v in np.linalg.eigvalsh(Hm)], "alpha_sets": [float(v) for v in vals], "stderr": se}
