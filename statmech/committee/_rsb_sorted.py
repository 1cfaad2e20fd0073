r"""K = 3: the inner 1RSB average W(h0) = E_z Z(h0 + b z)^m in sorted order (numba).

Near capacity (1 - q1 -> 0) the integrand Z^m has layers of width se = sqrt(1-q1) where a
unit's field crosses zero and rounded kinks of width (1-q1)/|h| where two negative fields
are equal (the choice of the unit to flip changes).  The tensor rule of :mod:`._rsb_avg`
resolves neither at small 1 - q1.  Here (docs/committee.md, Eq. F.5):

* the fields are integrated in sorted order h1 < h2 < h3 (six sectors; sector (i, j, k)
  has unit i smallest), so every kink lies on a sector boundary;
* with p_l = H(-h_l/se), q_l = 1 - p_l the exact identity
  Z = p2 p3 + p1 (p2 q3 + q2 p3) splits Z^m = (p2 p3)^m + [Z^m - (p2 p3)^m]:
  the first part is separable (the smallest field integrated in closed form, Phi_i(h2);
  the largest by suffix sums of a fixed rule); the remainder is nonzero only where p1/p2 is
  not negligible, i.e. h1 within ~40 (1-q1)/|h2| of h2 (or both in the zero layer), and is
  integrated in (h2, d = h2 - h1, h3) on a rule adapted to that width: beyond the range D
  with p(h2 - D)/p(h2) < e^-40 the remainder is below 2 m e^-40 of Z2^m (r = p1 (q3/p3 +
  q2/p2) <= 2 p1/p2 and (1 + r)^m - 1 <= m r for m <= 1);
* for h3 > 8 se unit 3 is correct up to H(8) = 6e-16 relative, so that part of the
  remainder is a Gaussian probability (suffix sum of the weights) times a constant.

Every 1-d rule is Gauss--Legendre on finite pieces (breaks at the zero layer, the tilt scale
tau = sqrt((1-q1)/m), the units' means, no piece wider than b) on a window covering every
unit's mean and tilted mean +- 4b, and the core's probability-scale tanh--sinh on the
Gaussian tails beyond (no cut-off).  The output has the layout of
:func:`._rsb_avg._inner_tensor` (ln W and the tilted moments of ln Z and its gradient).
"""
from __future__ import annotations

import math

import numba
import numpy as np

from ..gaussian import piecewise_fill as gs_fill
from ..gaussian import log_H_nb
from .sign_rs import _logaddexp

_LOG_SQRT2PI = 0.9189385332046727
_LAYER = 8.0          # H(8) = 6.2e-16: beyond 8 se a unit is correct (or wrong) to double precision
_NMOM = 7             # mass, ln Z, |g|^2, h.g, g_0, g_1, g_2


@numba.njit(cache=True)
def _unit(h, se, lse):
    """ln p, ln q, ln(dp/dh) = ln G(h/se) - ln se at field h (one log H: the smaller of p, q
    is H(|u|), the other its complement by log1p)."""
    u = h / se
    if u >= 0.0:
        lq = log_H_nb(u)
        lp = math.log1p(-math.exp(lq))
    else:
        lp = log_H_nb(-u)
        lq = math.log1p(-math.exp(lp))
    return lp, lq, -0.5 * u * u - _LOG_SQRT2PI - lse


@numba.njit(cache=True)
def _pieces(lo, hi, brk, b):
    """Sorted piece boundaries of [lo, hi]: the breaks inside, then pieces wider than b split."""
    pts = np.empty(brk.shape[0] + 2)
    n = 0
    pts[n] = lo
    n += 1
    for c in brk:
        if lo < c < hi:
            pts[n] = c
            n += 1
    pts[n] = hi
    n += 1
    pts = np.sort(pts[:n])
    cnt = 1
    for p in range(n - 1):
        if pts[p + 1] - pts[p] > 1e-14:
            cnt += int(math.ceil((pts[p + 1] - pts[p]) / b))
    out = np.empty(cnt)
    k = 0
    out[k] = pts[0]
    k += 1
    for p in range(n - 1):
        if pts[p + 1] - pts[p] > 1e-14:
            ns = int(math.ceil((pts[p + 1] - pts[p]) / b))
            for s in range(1, ns):
                out[k] = pts[p] + (pts[p + 1] - pts[p]) * s / ns
                k += 1
            out[k] = pts[p + 1]
            k += 1
    return out


@numba.njit(cache=True)
def _gl_gauss(u, v, a, b, gx, gw, hs, ws, n0):
    """Gauss--Legendre nodes on [u, v] with the N(a, b^2) density in the weights, from index n0."""
    s = b * math.sqrt(2.0 * math.pi)
    for i in range(gx.shape[0]):
        h = 0.5 * (u + v) + 0.5 * (v - u) * gx[i]
        z = (h - a) / b
        hs[n0 + i] = h
        ws[n0 + i] = 0.5 * (v - u) * gw[i] * math.exp(-0.5 * z * z) / s
    return n0 + gx.shape[0]


@numba.njit(cache=True)
def _unit_grid(a, b, bnd, gx, gw, xs, xcs, tw):
    """Rule of one unit over R: left tail (-inf, bnd[0]] and right tail [bnd[-1], inf) on the
    probability scale (tanh--sinh), GL on the pieces of bnd.  Returns (h, w, start) with the
    nodes of piece p (p = 0: left tail, 1..P: finite pieces, P + 1: right tail) in
    start[p] .. start[p + 1]."""
    nts = xs.shape[0]
    P = bnd.shape[0] - 1
    ng = gx.shape[0]
    ntot = 2 * nts + P * ng
    hs = np.empty(ntot)
    ws = np.empty(ntot)
    start = np.empty(P + 3, dtype=np.int64)
    zb = np.empty(2 * nts)
    wb = np.empty(2 * nts)
    n = 0
    start[0] = 0
    one = np.array([(bnd[0] - a) / b])
    gs_fill(one, xs, xcs, tw, zb, wb)
    for i in range(nts):
        if wb[i] > 0.0:
            hs[n] = a + b * zb[i]
            ws[n] = wb[i]
            n += 1
    for p in range(P):
        start[p + 1] = n
        n = _gl_gauss(bnd[p], bnd[p + 1], a, b, gx, gw, hs, ws, n)
    start[P + 1] = n
    one[0] = (bnd[P] - a) / b
    gs_fill(one, xs, xcs, tw, zb, wb)
    for i in range(nts, 2 * nts):
        if wb[i] > 0.0:
            hs[n] = a + b * zb[i]
            ws[n] = wb[i]
            n += 1
    start[P + 2] = n
    return hs[:n], ws[:n], start


@numba.njit(cache=True)
def _find_piece(bnd, h):
    """Piece index of h: 0 below bnd[0], P + 1 above bnd[-1], else 1 + (index of the interval)."""
    P = bnd.shape[0] - 1
    if h < bnd[0]:
        return 0
    if h >= bnd[P]:
        return P + 1
    lo = 0
    hi = P
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if bnd[mid] <= h:
            lo = mid
        else:
            hi = mid
    return lo + 1


@numba.njit(cache=True)
def _acc(acc, le, vals):
    """Streaming log-sum-exp accumulation: acc[0] = shift, acc[1:] += e^(le - shift) * vals."""
    if le == -np.inf:
        return
    if le > acc[0]:
        sc = math.exp(acc[0] - le) if acc[0] > -np.inf else 0.0
        for r in range(1, acc.shape[0]):
            acc[r] *= sc
        acc[0] = le
    e = math.exp(le - acc[0])
    for r in range(vals.shape[0]):
        acc[1 + r] += e * vals[r]


@numba.njit(cache=True)
def _sep_values(h, w, se, lse, m, c, out):
    """e = w p^m e^-c and e (ln p, g, g^2, h g) (g = d ln p/dh) into out[0:5]."""
    lp, lq, lg = _unit(h, se, lse)
    e = math.exp(math.log(w) + m * lp - c)
    g = math.exp(lg - lp)
    out[0] = e
    out[1] = e * lp
    out[2] = e * g
    out[3] = e * g * g
    out[4] = e * h * g


@numba.njit(cache=True)
def _inner_sorted3(a, b, se, m, gx, gw, gxr, gwr, xs, xcs, tw, res):
    """W(h0) and the tilted moments for K = 3 (layout of _inner_tensor): bulk + remainder.

    gx, gw: Gauss--Legendre rule of the bulk pieces; gxr, gwr: of the remainder (whose share
    of W is ~ m (1-q1), so a coarser rule suffices; empty: no remainder, for tests).
    """
    eps = se * se
    lse = math.log(se)
    y = m / eps
    tau = 1.0 / math.sqrt(y)
    hL = _LAYER * se
    # window: every unit's mean and tilted mean (a / (1 + y b^2) for a < 0) +- 4 b
    lo = 0.0
    hi = 0.0
    for l in range(3):
        c = a[l] / (1.0 + y * b * b) if a[l] < 0.0 else a[l]
        lo = min(lo, min(a[l], c))
        hi = max(hi, max(a[l], c))
    lo = min(lo - 4.0 * b, -hL - b)     # the zero layer is always inside the window
    hi = max(hi + 4.0 * b, hL + b)
    brk = np.array([-hL, -2.0 * se, 0.0, 2.0 * se, hL, -tau, -2.5 * tau, a[0], a[1], a[2]])
    bnd = _pieces(lo, hi, brk, b)
    P = bnd.shape[0] - 1
    acc = np.full(1 + _NMOM, 0.0)
    acc[0] = -np.inf
    vals = np.empty(_NMOM)
    tmp = np.empty(5)
    # per unit: global rule, node values (scaled by e^-c_l) and suffix sums over nodes
    grids_h = []
    grids_w = []
    starts = []
    cs = np.empty(3)
    sufs = []
    for l in range(3):
        hs, ws, st = _unit_grid(a[l], b, bnd, gx, gw, xs, xcs, tw)
        n = hs.shape[0]
        c = -np.inf
        for t in range(n):
            c = max(c, math.log(ws[t]) + m * _unit(hs[t], se, lse)[0])
        cs[l] = c
        V = np.zeros((n + 1, 5))
        for t in range(n - 1, -1, -1):
            _sep_values(hs[t], ws[t], se, lse, m, c, tmp)
            for r in range(5):
                V[t, r] = V[t + 1, r] + tmp[r]
        grids_h.append(hs)
        grids_w.append(ws)
        starts.append(st)
        sufs.append(V)
    # coarser rules for the remainder (its share of W is ~ m (1 - q1))
    rem_h = []
    rem_w = []
    rem_st = []
    if gxr.shape[0] > 0:
        for l in range(3):
            hs, ws, st = _unit_grid(a[l], b, bnd, gxr, gwr, xs, xcs, tw)
            rem_h.append(hs)
            rem_w.append(ws)
            rem_st.append(st)
    Jv = np.empty(5)
    perm = np.array([[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]])
    ngl = gx.shape[0]
    hp = np.empty(max(ngl, 8))
    wp = np.empty(max(ngl, 8))
    gx8 = np.array([-0.9602898564975363, -0.7966664774136267, -0.5255324099163290, -0.1834346424956498,
                    0.1834346424956498, 0.5255324099163290, 0.7966664774136267, 0.9602898564975363])
    gw8 = np.array([0.1012285362903763, 0.2223810344533745, 0.3137066458778873, 0.3626837833783620,
                    0.3626837833783620, 0.3137066458778873, 0.2223810344533745, 0.1012285362903763])
    for pi in range(6):
        i, j, k = perm[pi, 0], perm[pi, 1], perm[pi, 2]
        h2s = grids_h[j]
        w2s = grids_w[j]
        stk = starts[k]
        Vk = sufs[k]
        # ---------------- separable bulk: int dh2 Phi_i(h2) phi_j(h2) p2^m int_{h3>h2} phi_k p3^m
        for u in range(h2s.shape[0]):
            h2 = h2s[u]
            p = _find_piece(bnd, h2)
            # J_k(h2) = partial piece [h2, end) + suffix over the pieces above
            for r in range(5):
                Jv[r] = 0.0
            if p == P + 1:            # right tail: short GL span covering e^-12 of the Gaussian
                span = 12.0 * b * b / max(h2 - a[k], b)
                npart = _gl_gauss(h2, h2 + span, a[k], b, gx8, gw8, hp, wp, 0)
                nxt = stk[P + 2]
            elif p == 0:
                npart = _gl_gauss(h2, bnd[0], a[k], b, gx8, gw8, hp, wp, 0)
                nxt = stk[1]
            else:
                npart = _gl_gauss(h2, bnd[p], a[k], b, gx, gw, hp, wp, 0)
                nxt = stk[p + 1]
            for t in range(npart):
                _sep_values(hp[t], wp[t], se, lse, m, cs[k], tmp)
                for r in range(5):
                    Jv[r] += tmp[r]
            for r in range(5):
                Jv[r] += Vk[nxt, r]
            if Jv[0] <= 0.0:
                continue
            lp2, lq2, lg2 = _unit(h2, se, lse)
            g2 = math.exp(lg2 - lp2)
            le = math.log(w2s[u]) + log_H_nb((a[i] - h2) / b) + m * lp2 + cs[k]
            vals[0] = Jv[0]
            vals[1] = Jv[0] * lp2 + Jv[1]
            vals[2] = Jv[0] * g2 * g2 + Jv[3]
            vals[3] = Jv[0] * h2 * g2 + Jv[4]
            vals[4 + i] = 0.0
            vals[4 + j] = Jv[0] * g2
            vals[4 + k] = Jv[2]
            _acc(acc, le, vals)
        if gxr.shape[0] == 0:
            continue
        _remainder(a, b, se, lse, m, i, j, k, bnd, rem_h[j], rem_w[j], rem_h[k], rem_w[k], rem_st[k], hL,
                   gxr, gwr, acc, vals)
    S = acc[1]
    res[0] = acc[0] + math.log(S)
    for r in range(1, _NMOM):
        res[r] = acc[1 + r] / S


@numba.njit(cache=True)
def _d_rule(D, b, gx, gw):
    """Gauss--Legendre on (0, D) with geometric panels towards d = 0 (D/16, D/8, D/4, D/2)
    and no panel wider than b (the Gaussian of the smallest field)."""
    cnt = 0
    lo = 0.0
    for p in range(5):
        hi = D * 2.0 ** (p - 4)
        cnt += int(math.ceil((hi - lo) / b))
        lo = hi
    ds = np.empty(cnt * gx.shape[0])
    dw = np.empty(cnt * gx.shape[0])
    n = 0
    lo = 0.0
    for p in range(5):
        hi = D * 2.0 ** (p - 4)
        nsub = int(math.ceil((hi - lo) / b))
        w = (hi - lo) / nsub
        for sb in range(nsub):
            c0 = lo + (sb + 0.5) * w
            for t in range(gx.shape[0]):
                ds[n] = c0 + 0.5 * w * gx[t]
                dw[n] = 0.5 * w * gw[t]
                n += 1
        lo = hi
    return ds, dw


@numba.njit(cache=True)
def _remainder(a, b, se, lse, m, i, j, k, bnd, h2s, w2s, h3g, w3g, stk, hL, gxr, gwr, acc, vals):
    """Sector (i, j, k): add Z^m F - (p2 p3)^m F2 for every moment F (h1 = h2 - d < h2 < h3)."""
    P = bnd.shape[0] - 1
    nr = gxr.shape[0]
    n3max = h3g.shape[0] + nr + 1
    u3 = np.empty((4, n3max))
    h3v = np.empty(n3max)
    pL = _find_piece(bnd, hL)        # hL is a boundary: the pieces >= pL lie above 8 se
    wtop = 0.0
    for t in range(stk[pL], h3g.shape[0]):
        wtop += w3g[t]
    for u in range(h2s.shape[0]):
        h2 = h2s[u]
        if h2 >= hL:
            continue
        lp2, lq2, lg2 = _unit(h2, se, lse)
        s2 = math.exp(lg2 - lp2)
        # h3 nodes in (h2, 8 se): partial piece, then the whole pieces up to 8 se; above: p3 = 1
        p = _find_piece(bnd, h2)
        n3 = 0
        if p == 0:
            endp = bnd[0]
            nxt = 1
        else:
            endp = bnd[p]
            nxt = p + 1
        hs_tmp = np.empty(nr)
        ws_tmp = np.empty(nr)
        _gl_gauss(h2, endp, a[k], b, gxr, gwr, hs_tmp, ws_tmp, 0)
        for t in range(nr):
            h3v[n3] = hs_tmp[t]
            u3[3, n3] = math.log(ws_tmp[t])
            n3 += 1
        for t in range(stk[nxt], stk[pL]):
            h3v[n3] = h3g[t]
            u3[3, n3] = math.log(w3g[t])
            n3 += 1
        for t in range(n3):
            u3[0, t], u3[1, t], u3[2, t] = _unit(h3v[t], se, lse)
        # constant part above 8 se (p3 = 1, q3 = 0, g3 = 0)
        # (for h2 in a piece above ... not reached: h2 < hL)
        h3v[n3] = hL
        u3[0, n3] = 0.0
        u3[1, n3] = -np.inf
        u3[2, n3] = -np.inf
        u3[3, n3] = math.log(wtop) if wtop > 0.0 else -np.inf
        n3 += 1
        # d range: p1/p2 < e^-40 beyond D (ln p is increasing and concave)
        D = se
        while _unit(h2 - D, se, lse)[0] - lp2 > -40.0:
            D *= 2.0
        ds, dw = _d_rule(D, b, gxr, gwr)
        for t in range(ds.shape[0]):
            h1 = h2 - ds[t]
            z1 = (h1 - a[i]) / b
            lw1 = math.log(w2s[u] * dw[t]) - 0.5 * z1 * z1 - _LOG_SQRT2PI - math.log(b)
            lp1, lq1, lg1 = _unit(h1, se, lse)
            lA = lp1 + lp2
            lB = _logaddexp(lp1 + lq2, lq1 + lp2)
            for v in range(n3):
                lp3 = u3[0, v]
                lq3 = u3[1, v]
                lg3 = u3[2, v]
                h3 = h3v[v]
                lZ = _logaddexp(lA, lB + lp3)
                g1 = math.exp(lg1 + _logaddexp(lp2 + lq3, lq2 + lp3) - lZ)
                g2 = math.exp(lg2 + _logaddexp(lp1 + lq3, lq1 + lp3) - lZ)
                g3 = math.exp(lg3 + lB - lZ)
                lZ2 = lp2 + lp3
                s3 = math.exp(lg3 - lp3)
                ex = math.expm1(m * (lZ - lZ2))     # Z^m / Z2^m - 1
                f = ex + 1.0
                vals[0] = ex
                vals[1] = f * lZ - lZ2
                vals[2] = f * (g1 * g1 + g2 * g2 + g3 * g3) - (s2 * s2 + s3 * s3)
                vals[3] = f * (h1 * g1 + h2 * g2 + h3 * g3) - (h2 * s2 + h3 * s3)
                vals[4 + i] = f * g1
                vals[4 + j] = f * g2 - s2
                vals[4 + k] = f * g3 - s3
                _acc(acc, lw1 + u3[3, v] + m * lZ2, vals)
