r"""The full right-hand side of the erf online-learning ODEs, fused and vectorized (numba).

The lr^2 term of dQ_ik/dalpha needs, for every student pair i <= k, the sum over all field pairs

    sum_{p,q} w_p w_q I4(i, k, p, q) = (2/pi)^2 Lambda4^(-1/2) sum_{p,q} w_p w_q asin(rho'_pq),

rho'_pq = C'_pq / sqrt((1 + C'_pp)(1 + C'_qq)) with C' = C - C_.S (I + C_SS)^-1 C_S. the
covariance reweighted by the Gaussian factors g'(x_i) g'(x_k), S = (i, k) (see
:mod:`statmech.scm._online_integrals`).  That is K(K+1)/2 (K+M)(K+M+1)/2 arcsines per right-hand
side, O(K^4): for a state without permutation symmetry no exact reduction is known (the arcsine of
the rank-2 corrected covariance couples all four indices).  They are evaluated here with

* the symmetric sums halved twice (i <= k, p <= q);
* C'_pq = C_pq - C_pi alpha_q - C_pk beta_q from one O(K + M) preparation per pair;
* the inner loop over q written without reductions (acc_q += w_p asin(rho'_pq)), so that LLVM
  vectorizes it (no fast-math: the rounding is that of the scalar loop, and no result depends on
  the vector width);
* the arcsine of fdlibm (Sun Microsystems 1993, ``e_asin.c``: a rational approximation of
  degree (5, 4) on [0, 1/4] with the reduction asin x = pi/2 - 2 asin sqrt((1 - x)/2) for
  |x| > 1/2), written branch-free: within 2.5 ulp of the exact value (2.03 ulp the largest seen
  over 2e4 random arguments and the branch points; the tests check it against mpmath), several
  times the throughput of the scalar libm call.

The I3 sums (O(K (K + M)^2)) are one matrix-vector product per student, also written as vectorizable
element loops.  ``error_model="numpy"``: a division by zero gives inf/nan (caught by the integrator as
a non-finite state) instead of raising, which also keeps the loops vectorizable.
"""
from __future__ import annotations

import math

import numba
import numpy as np

_2_PI = 2.0 / math.pi

# fdlibm e_asin.c: asin(x) = x + x R(x^2) on [0, 1/2], R(z) = z P(z) / Q(z)
_PS0 = 1.66666666666666657415e-01
_PS1 = -3.25565818622400915405e-01
_PS2 = 2.01212532134862925881e-01
_PS3 = -4.00555345006794114027e-02
_PS4 = 7.91534994289814532176e-04
_PS5 = 3.47933107596021167570e-05
_QS1 = -2.40339491173441421878e+00
_QS2 = 2.02094576023350569471e+00
_QS3 = -6.88283971605453293030e-01
_QS4 = 7.70381505559019352791e-02
_PIO2_HI = 1.57079632679489655800e+00
_PIO2_LO = 6.12323399573676603587e-17


@numba.njit(cache=True, inline="always", error_model="numpy")
def asin_fast(x):
    """asin(x) for x in [-1, 1] (< 2.5 ulp), branch-free so that loops over it vectorize."""
    a = abs(x)
    big = a > 0.5
    z = (1.0 - a) * 0.5 if big else a * a
    s = math.sqrt(z) if big else a
    p = z * (_PS0 + z * (_PS1 + z * (_PS2 + z * (_PS3 + z * (_PS4 + z * _PS5)))))
    q = 1.0 + z * (_QS1 + z * (_QS2 + z * (_QS3 + z * _QS4)))
    r = s + s * (p / q)
    v = _PIO2_HI - (2.0 * r - _PIO2_LO) if big else r
    return v if x >= 0.0 else -v


@numba.njit(cache=True, error_model="numpy")
def asin_array(x, out):
    """out[j] = asin_fast(x[j]) (for the tests)."""
    for j in range(x.size):
        out[j] = asin_fast(x[j])


@numba.njit(cache=True, error_model="numpy")
def _asin_inplace(x):
    """x[j] = asin(x[j]) (arguments in [0, 1))."""
    for j in range(x.size):
        x[j] = asin_fast(min(1.0, max(-1.0, x[j])))


#: student pairs per tile of the I4 sums (the tile's arrays, 5 (K + M) x 64 doubles, stay in cache)
_TILE = 64


@numba.njit(cache=True, error_model="numpy")
def _tile(al, be, dq, ci, ck, dm, acc, cmq, wmq):
    """acc[j] += wmq asin(rho'_mq) for the pairs j of a tile (rows of the tile arrays: element
    loops from index 0, which LLVM vectorizes)."""
    for j in range(acc.size):
        x = (cmq - ci[j] * al[j] - ck[j] * be[j]) * (dm[j] * dq[j])
        acc[j] += wmq * asin_fast(min(1.0, max(-1.0, x)))


@numba.njit(cache=True, error_model="numpy")
def i4_pair_sums(C, K, U, w, out):
    """out[pair] = sum_{p,q} w_p w_q asin(rho'_pq) for every student pair i <= k (pairs in the
    order of the upper triangle), with rho' the correlation of the fields reweighted by
    g'(x_i) g'(x_k).  Tiles of pairs; inside a tile the loop over the pairs is innermost."""
    P = K * (K + 1) // 2
    pi = np.empty(P, np.int64)
    pk = np.empty(P, np.int64)
    n = 0
    for i in range(K):
        for k in range(i, K):
            pi[n] = i
            pk[n] = k
            n += 1
    width = min(_TILE, ((P + 7) // 8) * 8)
    work = np.empty((5, U, width))
    AL = work[0]
    BE = work[1]
    DD = work[2]
    CI = work[3]
    CK = work[4]
    xd = np.empty(U)
    for t0 in range(0, P, _TILE):
        nt = min(_TILE, P - t0)
        # pad the tile to a multiple of 8 pairs with harmless columns (x = C_mq clipped), so that
        # the vector loop has no scalar remainder
        npad = ((nt + 7) // 8) * 8
        acc = np.zeros(npad)
        for j in range(nt, npad):
            for m in range(U):
                AL[m, j] = 0.0
                BE[m, j] = 0.0
                DD[m, j] = 1.0
                CI[m, j] = 0.0
                CK[m, j] = 0.0
        for j in range(nt):
            i = pi[t0 + j]
            k = pk[t0 + j]
            l4 = (1.0 + C[i, i]) * (1.0 + C[k, k]) - C[i, k] * C[i, k]
            pp = (1.0 + C[k, k]) / l4
            qq = -C[i, k] / l4
            rr = (1.0 + C[i, i]) / l4
            for m in range(U):
                cmi = C[m, i]
                cmk = C[m, k]
                a1 = pp * cmi + qq * cmk
                b1 = qq * cmi + rr * cmk
                cmm = C[m, m] - cmi * a1 - cmk * b1
                AL[m, j] = a1
                BE[m, j] = b1
                DD[m, j] = 1.0 / math.sqrt(1.0 + cmm)
                CI[m, j] = cmi
                CK[m, j] = cmk
                xd[m] = cmm / (1.0 + cmm)
            # the diagonal terms p = q: asin(C'_pp / (1 + C'_pp)) (an element loop, then the sum)
            _asin_inplace(xd)
            diag = 0.0
            for m in range(U):
                diag += w[m] * w[m] * xd[m]
            acc[j] = 0.5 * diag
        for m in range(U - 1):
            ci = CI[m, :npad]
            ck = CK[m, :npad]
            dm = DD[m, :npad]
            for q in range(m + 1, U):
                _tile(AL[q, :npad], BE[q, :npad], DD[q, :npad], ci, ck, dm, acc, C[m, q], w[m] * w[q])
        for j in range(nt):
            out[t0 + j] = acc[j]


@numba.njit(cache=True, error_model="numpy")
def rhs_full_erf(C, K, M, a, b, lr, noise2, out):
    """d(state)/dalpha of the full erf ODEs at the covariance C (state layout of
    :mod:`statmech.scm._online_odes`: the upper triangle of Q row by row, then R row by row)."""
    U = K + M
    w = np.empty(U)
    for p in range(U):
        w[p] = -a if p < K else b
    nq = K * (K + 1) // 2
    h = np.empty(U)
    v = np.empty(U)
    # E[delta_i u_c] = a sum_p w_p I3(i, c, p) = a (2/pi) [sum_p h_p C_cp - C_ic s_i / (1 + C_ii)],
    # h_p = w_p / sqrt((1 + C_ii)(1 + C_pp) - C_ip^2), s_i = sum_p h_p C_ip
    D = np.empty((K, U))
    for i in range(K):
        ci = 1.0 + C[i, i]
        s = 0.0
        for p in range(U):
            h[p] = w[p] / math.sqrt(ci * (1.0 + C[p, p]) - C[i, p] * C[i, p])
            s += h[p] * C[i, p]
        for c in range(U):
            v[c] = 0.0
        for p in range(U):
            hp = h[p]
            for c in range(U):              # C symmetric: C[p, c] = C[c, p]; an element loop
                v[c] += hp * C[p, c]
        f = s / ci
        for c in range(U):
            D[i, c] = a * _2_PI * (v[c] - C[i, c] * f)
    for i in range(K):
        for m in range(M):
            out[nq + i * M + m] = lr * D[i, K + m]
    sums = np.empty(K * (K + 1) // 2)
    i4_pair_sums(C, K, U, w, sums)
    n = 0
    for i in range(K):
        for k in range(i, K):
            l4 = (1.0 + C[i, i]) * (1.0 + C[k, k]) - C[i, k] * C[i, k]
            tot = sums[n]
            n += 1
            i4sum = 2.0 * _2_PI * _2_PI / math.sqrt(l4) * tot
            noise = noise2 * _2_PI / math.sqrt(l4)
            out[i * K - (i * (i - 1)) // 2 + (k - i)] = lr * (D[i, k] + D[k, i]) + lr * lr * a * a * (i4sum + noise)
