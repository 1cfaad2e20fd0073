r"""Any odd K: the finite-alpha 1RSB energetic term near capacity in order statistics (numba).

The inner average of Eq. F.2, W(h0) = E_z Z(h0 + b z)^m (b = sqrt(q1 - q0), se = sqrt(1 - q1),
p_l = H(-h_l/se), Z = P(at least M = (K+1)/2 of the K units are +)), is split with the
dominant term

    D(h) = prod over the M largest fields of p_l = P(the M units with the largest fields are +)

(Z >= D; Z = D unless a unit outside the top M competes with one inside: near a tie of the M-th
and (M+1)-th largest fields, width ~ (1-q1)/|h|, or several fields in the zero layer of width
se):

    W = E[D^m] + E[Z^m - D^m].                                                      (F.9)

* E[D^m] is a product over the ranks of the fields, so it reduces exactly to a 1-d integral
  over the M-th largest field s (unit l there, M - 1 units above with weight p^m, K - M below):

      E[D^m] = sum_l int ds phi_l(s) g(s) e_{M-1}({A_j(s)}, {B_j(s)})_{j != l},          (F.10)
      g = H(-s/se)^m,  A_j(s) = int_s^inf phi_j g,  B_j(s) = P(h_j < s),

  e_{M-1} the sum over the subsets of M - 1 units "above" (prefix/suffix recursions, O(K M)).
  This is the finite-(1 - q1) form of the frozen 1-d reduction of Eq. 1RSB.1 (g -> e^{-y s^2/2}).
  The s-grid is shared by every outer point (Gauss--Legendre panels: width se in the zero layer
  ``|s| < 8 se``, half the tilted width b/sqrt(1 + y b^2) below it, b/2 above it; A_j by the
  spectral integration matrix of each panel), so phi, A, B are tabulated once per outer node value.
* E[Z^m - D^m] >= 0 is a small share of W (it vanishes as 1 - q1 -> 0): importance-sampled
  randomized QMC with common random numbers (a scrambled Sobol set, Cranley--Patterson rotated
  per outer point; defensive proposal per unit, half N(a_l, b^2), half the Gaussian of the tilted
  unit N(a_l/(1 + y b^2), b^2/(1 + y b^2)), so every weight is bounded).  A sample contributes
  only where the pair ratio r = p_(M+1) q_(M) / p_(M) is not negligible: (Z - D)/D <=
  2^(K-M) ((1 + r)^M - 1), so samples with m times that bound below 1e-13 are skipped (they add
  less than 1e-13 of W).  The samples are allocated to the outer points in proportion to their
  weights (a power of 2 between ``n_min`` and the size of the set), so the standard error is that
  of ``n_total`` samples of the outer measure.

The estimator is a smooth function of (q0, q1, m) at fixed point sets, so its derivatives are
taken by central differences (:mod:`.sign_1rsb_finite`).
"""
from __future__ import annotations

import math

import numba
import numpy as np

from ..gaussian import H_nb, log_H_nb, ndtri_nb
from ._kernels import _multiset_point, _multiset_start
from .sign_rs import _logaddexp

_LOG_SQRT2PI = 0.9189385332046727
_LAYER = 8.0          # H(8) = 6.2e-16: beyond 8 se a unit is + (or -) to double precision
_TAIL_SD = 16.0       # the grid ends 16 tilted sd below the lowest tilted mean, 14 sd above the highest mean
_SKIP = 1e-13         # a sample whose bound m (Z/D - 1) is below this adds < 1e-13 W: skipped


# --------------------------------------------------------------------------- the s-grid (numpy)
def _spectral_matrix(n):
    """S[t, k] = int_{x_t}^{1} L_k(x) dx for the Gauss--Legendre nodes x of order n (L_k the Lagrange
    basis): integrals from each node to the panel end of the degree n-1 interpolant."""
    x, w = np.polynomial.legendre.leggauss(n)
    V = np.polynomial.legendre.legvander(x, n - 1)          # V[i, j] = P_j(x_i)
    C = np.linalg.inv(V)                                    # L_k = sum_j C[j, k] P_j
    I = np.empty((n, n))                                    # I[t, j] = int_{x_t}^1 P_j
    P = np.polynomial.legendre.legvander(x, n)
    I[:, 0] = 1.0 - x
    for j in range(1, n):
        I[:, j] = -(P[:, j + 1] - P[:, j - 1]) / (2 * j + 1)
    return x, w, np.ascontiguousarray(I @ C)


_GL_N = 10
_GX, _GW, _SINT = _spectral_matrix(_GL_N)


def s_grid(avals, b, se, m):
    """Panel boundaries of the common s-grid for outer field values ``avals`` (see the module docstring)."""
    eps = se * se
    y = m / eps
    den = 1.0 + y * b * b
    sig = b / math.sqrt(den)
    mu = np.asarray(avals, dtype=float) / den
    lo = min(float(np.min(mu)) - _TAIL_SD * sig, -_LAYER * se - sig)
    hi = max(float(np.max(avals)) + 14.0 * b, _LAYER * se + b)
    zl = min(se, 0.5 * sig, 0.5 * b)
    edges = []

    def seg(a, c, width):
        n = max(1, int(math.ceil((c - a) / width)))
        edges.extend(a + (c - a) * np.arange(n) / n)

    seg(lo, -_LAYER * se, 0.5 * min(sig, b))
    seg(-_LAYER * se, _LAYER * se, zl)
    seg(_LAYER * se, hi, 0.5 * b)
    edges.append(hi)
    return np.asarray(edges)


# --------------------------------------------------------------------------- tables per outer node value
@numba.njit(cache=True)
def _grid_nodes(edges, gx, gw):
    """Gauss--Legendre nodes and weights on the panels ``edges``."""
    P = edges.shape[0] - 1
    n = gx.shape[0]
    s = np.empty(P * n)
    w = np.empty(P * n)
    for p in range(P):
        half = 0.5 * (edges[p + 1] - edges[p])
        mid = 0.5 * (edges[p + 1] + edges[p])
        for i in range(n):
            s[p * n + i] = mid + half * gx[i]
            w[p * n + i] = half * gw[i]
    return s, w


@numba.njit(cache=True)
def _tables_lg(avals, b, s, lg, edges, gw, sint):
    """Per outer value k on the grid nodes s: F = phi_k e^lg (the tilted density of a top unit),
    A = int_s^inf F (spectral integration per panel, the upper tail beyond the grid as
    H((hi - a)/b): the tilt is 1 there), B = P(h < s)."""
    P = edges.shape[0] - 1
    n = gw.shape[0]
    nn = P * n
    nk = avals.shape[0]
    F = np.empty((nk, nn))
    A = np.empty((nk, nn))
    B = np.empty((nk, nn))
    cb = 1.0 / (b * math.sqrt(2.0 * math.pi))
    hi = edges[P]
    for k in range(nk):
        a = avals[k]
        for t in range(nn):
            z = (s[t] - a) / b
            F[k, t] = cb * math.exp(-0.5 * z * z + lg[t])
            B[k, t] = H_nb(-z)
        acc = H_nb((hi - a) / b)
        for p in range(P - 1, -1, -1):
            half = 0.5 * (edges[p + 1] - edges[p])
            tot = 0.0
            for i in range(n):
                tot += gw[i] * F[k, p * n + i]
            for i in range(n):
                part = 0.0
                for j in range(n):
                    part += sint[i, j] * F[k, p * n + j]
                A[k, p * n + i] = acc + half * part
            acc += half * tot
    return F, A, B


@numba.njit(cache=True)
def _tables(avals, b, se, m, edges, gx, gw, sint):
    """Nodes s, weights w, and per outer value k: F = phi_k g (tilted density), A = int_s^inf F,
    B = P(h < s), with the finite-(1 - q1) tilt g = H(-s/se)^m (g = 1 beyond the grid to 1e-16 m)."""
    s, w = _grid_nodes(edges, gx, gw)
    lg = np.empty(s.shape[0])
    for t in range(s.shape[0]):
        lg[t] = m * log_H_nb(-s[t] / se)
    F, A, B = _tables_lg(avals, b, s, lg, edges, gw, sint)
    return s, w, F, A, B


@numba.njit(cache=True)
def _wd_point(idx, w, F, A, B, pre, suf):
    """E[D^m] (Eq. F.10) for the outer point whose units have the node values idx (tables of _tables)."""
    K = idx.shape[0]
    M = (K + 1) // 2
    nn = w.shape[0]
    tot = 0.0
    for t in range(nn):
        for k in range(M):
            pre[0, k] = 0.0
            suf[K, k] = 0.0
        pre[0, 0] = 1.0
        suf[K, 0] = 1.0
        for l in range(K):
            a = A[idx[l], t]
            bb = B[idx[l], t]
            for k in range(M - 1, 0, -1):
                pre[l + 1, k] = pre[l, k] * bb + pre[l, k - 1] * a
            pre[l + 1, 0] = pre[l, 0] * bb
        for l in range(K - 1, -1, -1):
            a = A[idx[l], t]
            bb = B[idx[l], t]
            for k in range(M - 1, 0, -1):
                suf[l, k] = suf[l + 1, k] * bb + suf[l + 1, k - 1] * a
            suf[l, 0] = suf[l + 1, 0] * bb
        acc = 0.0
        for l in range(K):
            e = 0.0
            for k in range(M):
                e += pre[l, k] * suf[l + 1, M - 1 - k]
            acc += F[idx[l], t] * e
        tot += w[t] * acc
    return tot


# --------------------------------------------------------------------------- the remainder E[Z^m - D^m]
@numba.njit(cache=True)
def _log_tail(lp, lq, M, buf):
    """ln P(at least M of the units are +) from the log probabilities (log-space Poisson binomial)."""
    K = lp.shape[0]
    for n in range(K + 1):
        buf[n] = -np.inf
    buf[0] = 0.0
    for l in range(K):
        for n in range(l + 1, 0, -1):
            buf[n] = _logaddexp(buf[n] + lq[l], buf[n - 1] + lp[l])
        buf[0] = buf[0] + lq[l]
    r = -np.inf
    for n in range(M, K + 1):
        r = _logaddexp(r, buf[n])
    return r


@numba.njit(cache=True)
def _remainder_point(a, b, se, m, U, N, shift):
    """Importance-sampled RQMC estimate of E[Z^m - D^m] at the outer point with unit means a.

    U: uniforms, of which the first N rows are used (a power of 2: a balanced Sobol prefix; the
    first K columns place the units, the last K choose the proposal component), shift: (2K,)
    Cranley--Patterson rotation.  Returns (sum, sum of squares) / N of the per-sample estimates
    (for the standard error)."""
    K = a.shape[0]
    M = (K + 1) // 2
    eps = se * se
    y = m / eps
    den = 1.0 + y * b * b
    sig = b / math.sqrt(den)
    h = np.empty(K)
    order = np.empty(K, dtype=np.int64)
    lp = np.empty(K)
    lq = np.empty(K)
    buf = np.empty(K + 1)
    bound_fac = 2.0 ** (K - M)
    s1 = 0.0
    s2 = 0.0
    lnorm_b = -math.log(b) - _LOG_SQRT2PI
    lnorm_s = -math.log(sig) - _LOG_SQRT2PI
    for i in range(N):
        for l in range(K):
            u = U[i, l] + shift[l]
            if u >= 1.0:
                u -= 1.0
            if u <= 0.0:
                u = 0.5 / 4294967296.0
            c = U[i, K + l] + shift[K + l]
            if c >= 1.0:
                c -= 1.0
            z = ndtri_nb(u)
            if c < 0.5:
                h[l] = a[l] + b * z
            else:
                h[l] = a[l] / den + sig * z
            order[l] = l
        # insertion sort of the units by field, descending
        for l in range(1, K):
            j = l
            while j > 0 and h[order[j - 1]] < h[order[j]]:
                tmp = order[j - 1]
                order[j - 1] = order[j]
                order[j] = tmp
                j -= 1
        jM = order[M - 1]
        iM = order[M]
        lpj = log_H_nb(-h[jM] / se)
        lqj = log_H_nb(h[jM] / se)
        lpi = log_H_nb(-h[iM] / se)
        r = math.exp(lpi + lqj - lpj)
        if m * bound_fac * ((1.0 + r) ** M - 1.0) < _SKIP:
            continue
        lD = 0.0
        for l in range(K):
            lp[l] = log_H_nb(-h[l] / se)
            lq[l] = log_H_nb(h[l] / se)
        for k in range(M):
            lD += lp[order[k]]
        lZ = _log_tail(lp, lq, M, buf)
        if lZ < lD:
            lZ = lD        # Z >= D exactly; guards the last-bit rounding of the two sums
        lw = 0.0
        for l in range(K):
            z1 = (h[l] - a[l]) / b
            z2 = (h[l] - a[l] / den) / sig
            l1 = lnorm_b - 0.5 * z1 * z1
            l2 = lnorm_s - 0.5 * z2 * z2
            lw += l1 - (_logaddexp(l1, l2) - math.log(2.0))
        # Z^m - D^m - c = D^m [(Z/D)^m - (1 + r)^m] >= 0, c = D^m [(1 + r)^m - 1] the pair control
        # (its expectation is exact, Eq. F.11); Z >= D (1 + r) exactly
        l1r = math.log1p(r)
        ex = lZ - lD - l1r
        if ex < 0.0:
            ex = 0.0
        v = math.exp(lw + m * lD + m * l1r) * math.expm1(m * ex)
        s1 += v
        s2 += v * v
    return s1 / N, s2 / N


# --------------------------------------------------------------------------- the outer average
@numba.njit(cache=True)
def _extend(SD, SP, l, v, F, A, B, pt, PHI, BP):
    """Layer l + 1 of the flag recursions of E[D^m] (Eq. F.10) and of the pair term (Eq. F.11) from
    layer l, adding unit l with node value v.

    E[D^m] = sum_t w_t [x^(M-1) y] prod_l (B_l + x A_l + y F_l)  (SD[l, t, k, f], f = has j);
    E[c] = sum_q w_q kappa_q [x^(M-1) y1 y2] prod_l (B'_l + x A_l + y1 F_l + y2 PHI_l)  (SP[l, q, k, f])."""
    M = SD.shape[2]
    nn = SD.shape[1]
    for t in range(nn):
        a = A[v, t]
        bb = B[v, t]
        fj = F[v, t]
        for k in range(M):
            s1 = SD[l, t, k, 1] * bb + SD[l, t, k, 0] * fj
            s0 = SD[l, t, k, 0] * bb
            if k > 0:
                s1 += SD[l, t, k - 1, 1] * a
                s0 += SD[l, t, k - 1, 0] * a
            SD[l + 1, t, k, 1] = s1
            SD[l + 1, t, k, 0] = s0
    for q in range(pt.shape[0]):
        t = pt[q]
        a = A[v, t]
        fj = F[v, t]
        bp = BP[v, q]
        ph = PHI[v, q]
        for k in range(M):
            s11 = SP[l, q, k, 3] * bp + SP[l, q, k, 2] * fj + SP[l, q, k, 1] * ph
            s10 = SP[l, q, k, 2] * bp + SP[l, q, k, 0] * ph
            s01 = SP[l, q, k, 1] * bp + SP[l, q, k, 0] * fj
            s00 = SP[l, q, k, 0] * bp
            if k > 0:
                s11 += SP[l, q, k - 1, 3] * a
                s10 += SP[l, q, k - 1, 2] * a
                s01 += SP[l, q, k - 1, 1] * a
                s00 += SP[l, q, k - 1, 0] * a
            SP[l + 1, q, k, 3] = s11
            SP[l + 1, q, k, 2] = s10
            SP[l + 1, q, k, 1] = s01
            SP[l + 1, q, k, 0] = s00


@numba.njit(cache=True)
def _outer_order(z0, w0, K, q0, b, se, m, w, F, A, B, pt, pw, PHI, BP, U, shifts, n_total, n_min, logfact, out):
    """G_E = E_{t0} (1/m) ln W over the multisets of the outer rule (z0, w0) (Eqs. F.2, F.9-F.11).

    W = E[D^m] + E[c] + E[Z^m - D^m - c]: the first two exact (flag recursions over the units, kept
    per unit layer so that the next multiset, which differs in its last units, recomputes only
    those), the last by RQMC.  The outer point of weight wt gets N = 2^round(log2(n_total wt))
    samples, clipped to [n_min, len(U)].  out <- [G_E, variance of the RQMC part of G_E (the squared
    standard error, samples treated as independent), sum of wt R/W (the RQMC part's share of W),
    points, samples]."""
    M = (K + 1) // 2
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
        WD = 0.0
        for t in range(nn):
            WD += w[t] * SD[K, t, M - 1, 1]
        for q in range(npair):
            WD += pw[q] * SP[K, q, M - 1, 3]
        N = n_min
        x = n_total * wt
        if x > n_min:
            N = 1 << int(round(math.log(x) / math.log(2.0)))
        if N > nmax:
            N = nmax
        if N < n_min:
            N = n_min
        R = 0.0
        R2 = 0.0
        if N > 0:
            R, R2 = _remainder_point(a, b, se, m, U, N, shifts[cnt])
        W = WD + R
        if not (W > 0.0) or not math.isfinite(W):
            out[0] = np.nan
            return
        G += wt * math.log(W) / m
        if N > 0:
            var += (wt / (m * W)) ** 2 * max(R2 - R * R, 0.0) / N
        share += wt * R / W
        cnt += 1
        nsamp += N
    out[0] = G
    out[1] = var
    out[2] = share
    out[3] = cnt
    out[4] = nsamp


# --------------------------------------------------------------------------- the pair term E[c]: nodes
_D_GL = 6             # Gauss--Legendre order of the d-panels of the pair integral
_PAIR_TINY = 1e-17    # the pair band ends where m p(s - d) q(s)/p(s) < 1e-17


@numba.njit(cache=True)
def _pair_nodes(s, w, se, m, dx, dw, first=16.0):
    """Nodes (t, s' = s_t - d, weight w_t wd kappa) of the pair integral of Eq. F.11.

    kappa(s', s) = (1 + p(s') q(s)/p(s))^m - 1 is the pair factor of the control c; it is
    negligible for s above the zero layer (q(s) < 1e-16) and for d beyond the band D(s) where
    m p(s - d) q(s)/p(s) < 1e-17.  The d-rule: geometric panels (width doubling) from d = L/16 to
    D, L = min(D, p/(dp/ds)) the decay length of p near s, and [0, L/16]; Gauss--Legendre of
    order len(dx) on each panel (L/64 and order 10 change G_E by < 1e-11)."""
    nn = s.shape[0]
    nd = dx.shape[0]
    cap = nn * 40 * nd
    pt = np.empty(cap, dtype=np.int64)
    ps = np.empty(cap)
    pw = np.empty(cap)
    edges = np.empty(64)
    npair = 0
    lm = math.log(m)
    ltiny = math.log(_PAIR_TINY)
    for t in range(nn):
        u = s[t] / se
        lqs = log_H_nb(u)
        if lqs + lm < ltiny:
            continue
        lps = log_H_nb(-u)
        # band: double D until the ratio is negligible
        D = se
        while log_H_nb(-(s[t] - D) / se) - lps + lqs + lm > ltiny:
            D *= 2.0
        # decay length of p at s: p / p' = se H(-u)/G(u)
        L = se * math.exp(lps - (-0.5 * u * u - _LOG_SQRT2PI))
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
                kap = math.expm1(m * math.log1p(math.exp(log_H_nb(-sp / se) + lqs - lps)))
                pt[npair] = t
                ps[npair] = sp
                pw[npair] = w[t] * half * dw[i] * kap
                npair += 1
    return pt[:npair], ps[:npair], pw[:npair]


@numba.njit(cache=True)
def _pair_tables(avals, b, ps):
    """phi_k(s') and B_k(s') = P(h < s') at the pair nodes, per outer node value k."""
    nk = avals.shape[0]
    npair = ps.shape[0]
    PHI = np.empty((nk, npair))
    BP = np.empty((nk, npair))
    cb = 1.0 / (b * math.sqrt(2.0 * math.pi))
    for k in range(nk):
        for q in range(npair):
            z = (ps[q] - avals[k]) / b
            PHI[k, q] = cb * math.exp(-0.5 * z * z)
            BP[k, q] = H_nb(-z)
    return PHI, BP


def point_terms(a, b, se, m, *, log2_samples=14, seed=0):
    """(E[D^m], E[c], RQMC estimate of E[Z^m - D^m - c] and its standard error) at one outer point
    with unit means ``a`` (for tests: the pieces of Eq. F.9 one by one)."""
    from scipy.stats import qmc
    a = np.ascontiguousarray(np.asarray(a, dtype=float))
    K = a.shape[0]
    M = (K + 1) // 2
    edges = s_grid(a, b, se, m)
    s, w, F, A, B = _tables(a, b, se, m, edges, _GX, _GW, _SINT)
    dx, dw = np.polynomial.legendre.leggauss(_D_GL)
    pt, ps, pw = _pair_nodes(s, w, se, m, np.ascontiguousarray(dx), np.ascontiguousarray(dw))
    PHI, BP = _pair_tables(a, b, ps)
    SD = np.zeros((K + 1, w.shape[0], M, 2))
    SP = np.zeros((K + 1, pt.shape[0], M, 4))
    SD[0, :, 0, 0] = 1.0
    SP[0, :, 0, 0] = 1.0
    for l in range(K):
        _extend(SD, SP, l, l, F, A, B, pt, PHI, BP)
    wd = float(np.sum(w * SD[K, :, M - 1, 1]))
    wc = float(np.sum(pw * SP[K, :, M - 1, 3]))
    U = np.ascontiguousarray(qmc.Sobol(d=2 * K, scramble=True, seed=seed).random_base2(log2_samples))
    r, r2 = _remainder_point(a, b, se, m, U, U.shape[0], np.zeros(2 * K))
    return wd, wc, r, math.sqrt(max(r2 - r * r, 0.0) / U.shape[0])
