r"""K = 3: the middle average of the frozen 2RSB functional (Eq. 2RSB.1) in order statistics (numba).

The middle level averages F(h) = Y2(h)^r, r = y1/y2, over h = a + sigma z (sigma^2 = q1 - q0,
z in R^3), where Y2(h) = E_xi[w(lambda_(1)) w(lambda_(2))] is the frozen inner average with
variance v = 1 - q1: lambda = h + sqrt(v) xi, w(lambda) = exp(-y2 lambda_-^2/2), and the product runs
over the two largest lambda (the flipped units are the two largest; Eq. 1RSB.1).  As q1 -> 1, F has
features of width sqrt(v) where a field crosses zero and where the second and third largest fields
tie; a tensor rule resolves neither (Gauss--Hermite needs n = 48 ... 64 per dimension at
q1 = 0.94 ... 0.98).  With g(h) = E_xi w(h + sqrt(v) xi) (closed form, the K = 1 inner average):

* D2(h) = g(h_(1)) g(h_(2)) (the two largest h) is a rank product, Y2 >= D2, and E[D2^r] reduces
  exactly to a 1-d integral over the second largest field (the D-part of :mod:`._rsb_order` with
  the tilt g^r);                                                                        (M.1)
* when the largest unit k lies far above the other two, it is never the smallest lambda and
  Y2 = g(h_k) mu(s, s'), mu(s, s') = E[max(w(lambda_j), w(lambda_i))] for the second (at s) and third
  (at s') largest; the pair term E[D2^r ((mu/g(s))^r - 1)] is a 2-d integral over (s, d = s - s')
  with the third unit above s (the pair term of :mod:`._rsb_order` with kappa = (mu/g)^r - 1);  (M.2)
* the rest, E[F - g(h_k)^r mu^r], is nonzero only where all three fields lie within ~12 sqrt(v)
  (unit k can be the smallest lambda: probability H((h_k - s')/sqrt(2 v))), and is estimated by
  importance-sampled randomized QMC with common random numbers.                         (M.3)

mu(s, s') = 1 - H(s/sqrt v) H(s'/sqrt v) + I(s, s') + I(s', s),
I(h1, h2) = int_{-inf}^0 e^{-y2 x^2/2} phi_v(x - h1) Phi((x - h2)/sqrt v) dx
          = e^{-y2 h1^2/(2 a1)}/sqrt(a1) E[Phi((X - h2)/sqrt v); X < 0],  X ~ N(h1/a1, v/a1),  a1 = 1 + y2 v,
the last expectation on the core's probability-scale tanh--sinh rule of the left tail.
"""
from __future__ import annotations

import math

import numba
import numpy as np

from ..gaussian import H_nb, left_tail_fill, log_H_nb, ndtri_nb
from ._kernels import _multiset_point, _multiset_start
from ._rsb_order import _extend
from .sign_1rsb import _inner_Y_grid
from .sign_rs import _logaddexp

_LOG_SQRT2PI = 0.9189385332046727
_PAIR_TINY = 1e-17
_SKIP = 1e-16        # a residual sample whose unit k is the smallest lambda with probability below this is skipped


@numba.njit(cache=True)
def log_g(h, v, y2):
    """ln g(h), g(h) = E exp(-y2 (h + sqrt(v) xi)_-^2/2) = H(-h/sqrt v) + e^{-y2 h^2/(2 a1)}/sqrt(a1) H(h/sqrt(v a1))."""
    a1 = 1.0 + y2 * v
    sv = math.sqrt(v)
    return _logaddexp(log_H_nb(-h / sv), -y2 * h * h / (2.0 * a1) - 0.5 * math.log(a1) + log_H_nb(h / (sv * math.sqrt(a1))))


@numba.njit(cache=True)
def _half_int(h1, h2, v, y2, xs, xcs, tw, zb, wb):
    """I(h1, h2) of the module docstring."""
    a1 = 1.0 + y2 * v
    mx = h1 / a1
    tx = math.sqrt(v / a1)
    sv = math.sqrt(v)
    left_tail_fill(-mx / tx, xs, xcs, tw, zb, wb)
    acc = 0.0
    for i in range(xs.shape[0]):
        if wb[i] == 0.0:
            continue
        x = mx + tx * zb[i]
        acc += wb[i] * H_nb(-(x - h2) / sv)
    return math.exp(-y2 * h1 * h1 / (2.0 * a1)) / math.sqrt(a1) * acc


@numba.njit(cache=True)
def mu_pair(s, sp, v, y2, xs, xcs, tw, zb, wb):
    """mu(s, s') = E[max(w(lambda_j), w(lambda_i))], lambda_j ~ N(s, v), lambda_i ~ N(s', v)."""
    sv = math.sqrt(v)
    return (1.0 - H_nb(s / sv) * H_nb(sp / sv) + _half_int(s, sp, v, y2, xs, xcs, tw, zb, wb)
            + _half_int(sp, s, v, y2, xs, xcs, tw, zb, wb))


@numba.njit(cache=True)
def _pair_nodes2(s, w, lgr, v, y2, r, dx, dw, xs, xcs, tw, first=16.0):
    """Pair nodes (t, s' = s_t - d, weight w_t wd kappa) of Eq. M.2, kappa = (mu(s, s')/g(s))^r - 1.

    For each grid node s (skipped where 1 - g(s) < 1e-16: then mu = g(s) to rounding) the band
    d < D(s) doubles from sqrt(v) until kappa < 1e-17; geometric panels from L/16, L = min(D, sqrt v,
    1/(y2 |s|)) the decay length of kappa, Gauss--Legendre of order len(dx) on each."""
    nn = s.shape[0]
    nd = dx.shape[0]
    cap = nn * 40 * nd
    pt = np.empty(cap, dtype=np.int64)
    ps = np.empty(cap)
    pw = np.empty(cap)
    edges = np.empty(64)
    zb = np.empty(xs.shape[0])
    wb = np.empty(xs.shape[0])
    sv = math.sqrt(v)
    npair = 0
    for t in range(nn):
        lg = log_g(s[t], v, y2)
        if lg > -1e-16:
            continue
        g = math.exp(lg)
        D = sv
        while D < 1e3 and math.expm1(r * math.log(mu_pair(s[t], s[t] - D, v, y2, xs, xcs, tw, zb, wb) / g)) > _PAIR_TINY:
            D *= 2.0
        L = sv
        if abs(s[t]) * y2 * L > 1.0:
            L = 1.0 / (y2 * abs(s[t]))
        if L > D:
            L = D
        ne = 0
        edges[ne] = 0.0
        ne += 1
        x = L / first
        while x < D and ne < 62:
            edges[ne] = x
            ne += 1
            x *= 2.0
        edges[ne] = D
        ne += 1
        if npair + (ne - 1) * nd > cap:
            break
        for p in range(ne - 1):
            half = 0.5 * (edges[p + 1] - edges[p])
            mid = 0.5 * (edges[p + 1] + edges[p])
            for i in range(nd):
                d = mid + half * dx[i]
                sp = s[t] - d
                kap = math.expm1(r * math.log(mu_pair(s[t], sp, v, y2, xs, xcs, tw, zb, wb) / g))
                pt[npair] = t
                ps[npair] = sp
                pw[npair] = w[t] * half * dw[i] * kap
                npair += 1
    return pt[:npair], ps[:npair], pw[:npair]


@numba.njit(cache=True)
def _residual_point(a, sd, v, y2, r, U, N, shift, gx, gw, xs, xcs, tw):
    """Importance-sampled RQMC estimate of E[F - g(h_k)^r mu^r] (Eq. M.3) at the outer point a.

    Proposal per unit: half N(a_l, sd^2), half the Gaussian of the g^r-tilted unit,
    N(a_l/(1 + ye sd^2), sd^2/(1 + ye sd^2)), ye = r y2/(1 + y2 v) (weights bounded by 2^3).
    Returns (mean, mean of squares) of the per-sample estimates."""
    K = 3
    a1 = 1.0 + y2 * v
    ye = r * y2 / a1
    den = 1.0 + ye * sd * sd
    sig = sd / math.sqrt(den)
    sv = math.sqrt(v)
    h = np.empty(K)
    zb = np.empty(xs.shape[0])
    wb = np.empty(xs.shape[0])
    lnb = -math.log(sd) - _LOG_SQRT2PI
    lns = -math.log(sig) - _LOG_SQRT2PI
    s1 = 0.0
    s2 = 0.0
    for n in range(N):
        for l in range(K):
            u = U[n, l] + shift[l]
            if u >= 1.0:
                u -= 1.0
            if u <= 0.0:
                u = 0.5 / 4294967296.0
            c = U[n, K + l] + shift[K + l]
            if c >= 1.0:
                c -= 1.0
            z = ndtri_nb(u)
            h[l] = a[l] + sd * z if c < 0.5 else a[l] / den + sig * z
        # ranks: k the largest, j the second, i the smallest field
        k = 0
        for l in range(1, K):
            if h[l] > h[k]:
                k = l
        i = 0
        for l in range(1, K):
            if h[l] < h[i]:
                i = l
        j = 3 - k - i
        if H_nb((h[k] - h[i]) / (sv * math.sqrt(2.0))) < _SKIP:
            continue
        Y2 = _inner_Y_grid(h, v, y2, gx, gw)
        lgk = log_g(h[k], v, y2)
        lgj = log_g(h[j], v, y2)
        mu = mu_pair(h[j], h[i], v, y2, xs, xcs, tw, zb, wb)
        lw = 0.0
        for l in range(K):
            z1 = (h[l] - a[l]) / sd
            z2 = (h[l] - a[l] / den) / sig
            l1 = lnb - 0.5 * z1 * z1
            l2 = lns - 0.5 * z2 * z2
            lw += l1 - (_logaddexp(l1, l2) - math.log(2.0))
        # F - (g_k mu)^r = (g_k mu)^r [(Y2/(g_k mu))^r - 1]
        lref = lgk + math.log(mu)
        val = math.exp(lw + r * lref) * math.expm1(r * (math.log(Y2) - lref))
        s1 += val
        s2 += val * val
    return s1 / N, s2 / N


@numba.njit(cache=True)
def _outer_2rsb(z0, w0, q0, sd, v, y2, r, w, F, A, B, pt, pw, PHI, BP, U, shifts, n_total, n_min, gx, gw,
                xs, xcs, tw, logfact, out):
    """E_{t0} ln E_{t1} Y2^r over the multisets of the outer rule (z0, w0), K = 3 (Eqs. M.1-M.3).

    out <- [the average, variance of its RQMC part, sum of wt R/W (the RQMC part's share), points, samples]."""
    K = 3
    M = 2
    nn = w.shape[0]
    npair = pt.shape[0]
    SD = np.zeros((K + 1, nn, M, 2))
    SP = np.zeros((K + 1, npair, M, 4))
    for t in range(nn):
        SD[0, t, 0, 0] = 1.0
    for q in range(npair):
        SP[0, q, 0, 0] = 1.0
    idx = _multiset_start(K)
    prev = np.full(K, -1, dtype=np.int64)
    a = np.empty(K)
    sq = math.sqrt(q0)
    nmax = U.shape[0]
    G = 0.0
    var = 0.0
    share = 0.0
    cnt = 0
    nsamp = 0
    while True:
        wt = _multiset_point(idx, z0, w0, sq, logfact, a)
        if wt == 0.0:
            break
        first = 0
        while first < K and idx[first] == prev[first]:
            first += 1
        for l in range(first, K):
            _extend(SD, SP, l, idx[l], F, A, B, pt, PHI, BP)
            prev[l] = idx[l]
        W = 0.0
        for t in range(nn):
            W += w[t] * SD[K, t, M - 1, 1]
        for q in range(npair):
            W += pw[q] * SP[K, q, M - 1, 3]
        N = n_min
        x = n_total * wt
        if x > n_min:
            N = 1 << int(round(math.log(x) / math.log(2.0)))
        if N > nmax:
            N = nmax
        R = 0.0
        R2 = 0.0
        if N > 0:
            R, R2 = _residual_point(a, sd, v, y2, r, U, N, shifts[cnt], gx, gw, xs, xcs, tw)
        Wt = W + R
        if not (Wt > 0.0) or not math.isfinite(Wt):
            out[0] = np.nan
            return
        G += wt * math.log(Wt)
        if N > 0:
            var += (wt / Wt) ** 2 * max(R2 - R * R, 0.0) / N
        share += wt * R / Wt
        cnt += 1
        nsamp += N
    out[0] = G
    out[1] = var
    out[2] = share
    out[3] = cnt
    out[4] = nsamp
