r"""Numba kernels of the finite-alpha RSB averages of the sign tree committee (K-dimensional).

The 1RSB energetic term (docs/committee.md, Eq. F.2) is

    G_E = E_{t0} (1/m) ln W(h0),   W(h0) = E_z Z(h0 + b z)^m,   h0 = sqrt(q0) t0,  b = sqrt(q1 - q0),

with t0, z in R^K and Z(h) the probability that the majority of K units is correct when
unit l is + with probability p_l = H(-h_l/se), se = sqrt(1 - q1) (a Poisson-binomial tail).
The Gaussian measure factorizes over units but Z^m does not, so the inner average is a
tensor rule over K 1-d rules; the outer one runs over the multisets of a 1-d rule
(permutation symmetry) or over a point set.

* :func:`_unit_rule` -- the 1-d rule of one unit: piecewise tanh--sinh with a break where
  the unit's field crosses zero (z* = -a/b; the layer of width se/b sits there), or a plain
  Gauss--Hermite rule; returns the log unit probabilities on its nodes;
* :func:`_inner_tensor` -- ln W, <ln Z>, <d lnZ/dh_l> and <|d lnZ/dh|^2> under the tilted
  measure Z^m/W (any K: prefix Poisson binomials in log space, the last unit enters
  linearly, Z = A + B p_K);
* :func:`_outer_multiset`, :func:`_outer_points` -- G_E and its gradient in (q0, q1, m)
  (Eq. F.4): dG/dq1 = ((m-1)/2) E<|grad lnZ|^2>, dG/dm = E[-ln W/m^2 + <ln Z>/m] (heat
  equation of Z and of the inner Gaussian), dG/dq0 by the chain rule at fixed outer nodes.

Every sum over the inner nodes is a streaming log-sum-exp (no underflow for deep outer
fields, no cut-off of the exponent).
"""
from __future__ import annotations

import math

import numba
import numpy as np

from ..gaussian import piecewise_fill as gs_fill  # numba node filler of the core
from ..gaussian import log_H_nb
from ._kernels import _multiset_point, _multiset_start, _tensor_node
from ._rsb_sorted import _inner_sorted3
from .sign_rs import _logaddexp, _rs_point_fast

_LOG_SQRT2PI = 0.9189385332046727
_W_MIN = 1e-18


@numba.njit(cache=True)
def _unit_rule(a, b, se, gz, gw, xs, xcs, tw, zbuf, wbuf, lp, lq, lg, lw, hh, row):
    """1-d rule of unit ``row`` (field h = a + b z): fills lp, lq (ln P(+), ln P(-)), lg (ln of
    dP(+)/dh = ln G(h/se) - ln se), lw (ln weight) and hh (h) on its nodes; returns the node count.

    ``gz`` non-empty: Gauss--Hermite nodes gz, weights gw (smooth integrand, small b);
    otherwise the piecewise tanh--sinh rule (xs, xcs, tw) with a break at z* = -a/b.
    """
    n = 0
    if gz.shape[0] > 0:
        for i in range(gz.shape[0]):
            zbuf[i] = gz[i]
            wbuf[i] = gw[i]
        ntot = gz.shape[0]
    else:
        brk = np.empty(1)
        brk[0] = -a / b
        gs_fill(brk, xs, xcs, tw, zbuf, wbuf)
        ntot = 2 * xs.shape[0]
    lse = math.log(se)
    for i in range(ntot):
        if wbuf[i] <= _W_MIN:    # tanh-sinh end nodes: weight below 1e-18 of the unit mass
            continue
        u = (a + b * zbuf[i]) / se
        lp[row, n] = log_H_nb(-u)
        lq[row, n] = log_H_nb(u)
        lg[row, n] = -0.5 * u * u - _LOG_SQRT2PI - lse
        lw[row, n] = math.log(wbuf[i])
        hh[row, n] = a + b * zbuf[i]
        n += 1
    return n


@numba.njit(cache=True)
def _pb_prefix(lp, lq, idx, skip, upto, out):
    """Log Poisson-binomial pmf of units 0..upto-1 except ``skip`` at node indices idx."""
    for n in range(out.shape[0]):
        out[n] = -np.inf
    out[0] = 0.0
    cnt = 0
    for l in range(upto):
        if l == skip:
            continue
        cnt += 1
        for n in range(cnt, 0, -1):
            out[n] = _logaddexp(out[n] + lq[l, idx[l]], out[n - 1] + lp[l, idx[l]])
        out[0] = out[0] + lq[l, idx[l]]


@numba.njit(cache=True)
def _inner_tensor(lp, lq, lg, lw, hh, nn, m, res):
    """Tensor-rule average over the K unit rules of Z^m (tilted measure).

    res <- [ln W, <ln Z>, <|grad lnZ|^2>, <h . grad lnZ>, <d lnZ/dh_0>, ..., <d lnZ/dh_{K-1}>]
    (h-derivatives; the tilted measure is w Z^m / W).
    """
    K = nn.shape[0]
    M = (K + 1) // 2
    last = K - 1
    idx = np.zeros(K, dtype=np.int64)
    pre = np.empty(K + 1)
    loo = np.empty((K, K + 1))     # leave-one-out pmf of the first K-1 units
    lP = np.empty(K)               # ln P_{-l}(M-1) over all K units
    shift = -np.inf
    S = 0.0
    SL = 0.0
    SG = 0.0
    SH = 0.0
    Sg = np.zeros(K)
    g = np.empty(K)
    nouter = 1
    for l in range(last):
        nouter *= nn[l]
    for flat in range(nouter):
        r = flat
        lwp = 0.0
        for l in range(last - 1, -1, -1):
            idx[l] = r % nn[l]
            r //= nn[l]
            lwp += lw[l, idx[l]]
        _pb_prefix(lp, lq, idx, -1, last, pre)
        lA = -np.inf
        for n in range(M, K):
            lA = _logaddexp(lA, pre[n])
        lB = pre[M - 1]
        for l in range(last):
            _pb_prefix(lp, lq, idx, l, last, loo[l])
        for k in range(nn[last]):
            lpk = lp[last, k]
            lqk = lq[last, k]
            lZ = _logaddexp(lA, lB + lpk)
            e = lwp + lw[last, k] + m * lZ
            if e > shift:
                sc = math.exp(shift - e)
                S *= sc
                SL *= sc
                SG *= sc
                SH *= sc
                for l in range(K):
                    Sg[l] *= sc
                shift = e
            wt = math.exp(e - shift)
            # P_{-l}(M-1) = P'_{-l}(M-1) q_K + P'_{-l}(M-2) p_K  (P': first K-1 units)
            gg = 0.0
            hg = 0.0
            for l in range(last):
                a2 = loo[l, M - 2] + lpk if M >= 2 else -np.inf
                lP[l] = _logaddexp(loo[l, M - 1] + lqk, a2)
                g[l] = math.exp(lg[l, idx[l]] + lP[l] - lZ)
            g[last] = math.exp(lg[last, k] + lB - lZ)
            for l in range(K):
                gg += g[l] * g[l]
                Sg[l] += wt * g[l]
            for l in range(last):
                hg += hh[l, idx[l]] * g[l]
            hg += hh[last, k] * g[last]
            S += wt
            SL += wt * lZ
            SG += wt * gg
            SH += wt * hg
    res[0] = shift + math.log(S)
    res[1] = SL / S
    res[2] = SG / S
    res[3] = SH / S
    for l in range(K):
        res[4 + l] = Sg[l] / S


@numba.njit(cache=True)
def _outer_point(a, q0, b, se, m, rule, bufs, out, wt):
    """Add wt * (G, dG/dq0, dG/dq1, dG/dm, dG/dq0 [IBP]) of one outer node (fields
    a = sqrt(q0) t0) to out[0:5].

    out[1] is the chain rule at fixed outer nodes plus the inner heat-equation identity
    (Eq. F.4): sum_l <g_l> a_l/(2 q0) + <h.g>/(2 se^2) + (1-m)/2 <|g|^2>, the derivative of
    the outer discretization itself; out[4] is the Gaussian-integration-by-parts form
    -(m/2)|<g>|^2, equal to it for an exact outer average (their difference measures the outer
    quadrature error; with the IBP form the RS point q0 = q1 solves the discretized 1RSB
    equations exactly for every m, see docs).
    """
    K = a.shape[0]
    lp, lq, lg, lw, hh, zbuf, wbuf, nn, res = bufs
    sorted_, gz, gw, xs, xcs, tw, gx, gxw, gxr, gwr = rule
    if sorted_:
        _inner_sorted3(a, b, se, m, gx, gxw, gxr, gwr, xs, xcs, tw, res)
    else:
        for l in range(K):
            nn[l] = _unit_rule(a[l], b, se, gz, gw, xs, xcs, tw, zbuf, wbuf, lp, lq, lg, lw, hh, l)
        _inner_tensor(lp, lq, lg, lw, hh, nn, m, res)
    lnW = res[0]
    ga = 0.0
    for l in range(K):
        ga += res[4 + l] * a[l]
    out[0] += wt * lnW / m
    out[1] += wt * (0.5 * ga / q0 + 0.5 * res[3] / (se * se) + 0.5 * (1.0 - m) * res[2])
    out[2] += wt * 0.5 * (m - 1.0) * res[2]
    out[3] += wt * (-lnW / (m * m) + res[1] / m)
    g2 = 0.0
    for l in range(K):
        g2 += res[4 + l] * res[4 + l]
    out[4] += wt * (-0.5 * m * g2)


@numba.njit(cache=True)
def _make_bufs(K, nmax):
    return (np.empty((K, nmax)), np.empty((K, nmax)), np.empty((K, nmax)), np.empty((K, nmax)),
            np.empty((K, nmax)), np.empty(nmax), np.empty(nmax), np.zeros(K, dtype=np.int64), np.empty(4 + K))


@numba.njit(cache=True)
def _outer_avg(z0, w0, T, K, q0, q1, m, rule, logfact):
    """(G_E, dG/dq0, dG/dq1, dG/dm, dG/dq0 [IBP]) with the outer average on the rows of T
    (equal weights) if T has rows, else on the multisets of (z0, w0)."""
    nmax = max(rule[1].shape[0], 2 * rule[3].shape[0])
    bufs = _make_bufs(K, nmax)
    b = math.sqrt(q1 - q0)
    se = math.sqrt(1.0 - q1)
    sq = math.sqrt(q0)
    out = np.zeros(5)
    a = np.empty(K)
    n = T.shape[0]
    if n > 0:
        for r in range(n):
            for l in range(K):
                a[l] = sq * T[r, l]
            _outer_point(a, q0, b, se, m, rule, bufs, out, 1.0 / n)
        return out
    idx = _multiset_start(K)
    while True:
        wt = _multiset_point(idx, z0, w0, sq, logfact, a)
        if wt == 0.0:
            return out
        _outer_point(a, q0, b, se, m, rule, bufs, out, wt)


@numba.njit(cache=True)
def _outer_multiset(z0, w0, K, q0, q1, m, rule, logfact):
    """(G_E, dG/dq0, dG/dq1, dG/dm, dG/dq0 [IBP]) with the outer average on the multisets of (z0, w0).

    rule = (sorted, gz, gw, xs, xcs, tw, gx, gxw, gxr, gwr): the inner rule (see
    :func:`_outer_point`; ``sorted`` selects :func:`._rsb_sorted._inner_sorted3`, K = 3)."""
    return _outer_avg(z0, w0, np.empty((0, K)), K, q0, q1, m, rule, logfact)


@numba.njit(cache=True)
def _outer_points(T, q0, q1, m, rule):
    """Same with the outer average over the rows of T (equal weights; RQMC point sets)."""
    return _outer_avg(T[0], T[0], T, T.shape[1], q0, q1, m, rule, np.empty(0))


@numba.njit(cache=True)
def _replicon_multiset(z0, w0, K, q0, q1, m, gz, gw, logfact):
    """E_{t0} <||d^2 ln Z/du du||_F^2> under the tilted inner measure Z^m/W, u = h/sqrt(1-q1)
    (Eq. F.6; tensor Gauss--Hermite inner rule, the K-unit kernel of the RS replicon RS.3)."""
    b = math.sqrt(q1 - q0)
    se = math.sqrt(1.0 - q1)
    sq = math.sqrt(q0)
    idx = _multiset_start(K)
    h = np.empty(K)
    u = np.empty(K)
    a = np.empty(K)
    lgw = np.log(gw)
    ntot = 1
    for _ in range(K):
        ntot *= gz.shape[0]
    acc = 0.0
    while True:
        wt = _multiset_point(idx, z0, w0, sq, logfact, a)
        if wt == 0.0:
            return acc
        shift = -np.inf
        S = 0.0
        SF = 0.0
        for flat in range(ntot):
            lw = _tensor_node(flat, a, b, gz, lgw, h)
            for l in range(K):
                u[l] = h[l] / se
            lZ, _, fro = _rs_point_fast(u, 1.0, True)
            e = lw + m * lZ
            if e > shift:
                sc = math.exp(shift - e)
                S *= sc
                SF *= sc
                shift = e
            x = math.exp(e - shift)
            S += x
            SF += x * fro
        acc += wt * SF / S
