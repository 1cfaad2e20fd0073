r"""Stability beyond site symmetry: the Hessian in the K^2 + K(K-1)/2 individual overlaps.

beta f = alpha sum_{i<j} m(Q_ij) - alpha sum_in m(R_in) - (1/2) ln det A + const, A = Q - R R^T
(T = I, K = M; Oostwal et al. (2019) Eqs. 18, 20, 25).  At a site-symmetric point (R = delta I + S J,
Q = (1 - C) I + C J,
J the all-ones matrix) A = a2 I + (a1 - a2) J / K, B = A^-1 = I / a2 + (1/a1 - 1/a2) J / K, and the Hessian
commutes with the simultaneous permutations of student and teacher units.  Under S_K the R_in carry
M x M = 2 [K] + 3 [K-1,1] + [K-2,2] + [K-2,1,1] (M the permutation module) and the Q_ij (unordered pairs)
[K] + [K-1,1] + [K-2,2], so the Hessian is block diagonal with a 3x3 (trivial, multiplicity 1), 4x4
(standard, K - 1), 2x2 ([K-2,2], K(K-3)/2) and 1x1 ([K-2,1,1], (K-1)(K-2)/2) block (docs/scm.md, "Full
space").  Each block is the Hessian on one copy-row of its isotypic component (one representative
direction per copy), relative to the Gram matrix of those directions.

The representatives involve at most four units, so every matrix in their second derivatives commutes with
the permutations of the other K - 4 units: it is stored as its 4x4 block, the constant row and column
values between the four and the rest, and the diagonal and off-diagonal value on the rest
(:class:`_Centralizer`).  Products, traces and sums of entries follow in closed form with K a parameter:
memory and time are independent of K.  The dense Hessian (:func:`full_hessian`) checks them (test, K <= 20).
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import check_range
from ._activation import activation_info
from ._equations import _kern
from ._free_energy import _check_alpha, _check_K

#: largest K of the dense :func:`full_hessian` (its matrix has ((3K^2 - K)/2)^2 entries)
FULL_HESSIAN_MAX_K = 40


def _site(K, R, S, C):
    """(a1, a2) without cancellation (``_kern.eigen_gaps``), ValueError outside the domain."""
    a1, a2 = _kern.eigen_gaps(float(K), float(R), float(S), float(C))
    if not (a1 > 0.0 and a2 > 0.0):
        raise ValueError(f"R, S, C must keep the overlap matrix positive definite, got R={R}, S={S}, C={C}, K={K}")
    return a1, a2


def _second_moments(info, R, S, C, one_minus_R=None):
    """(m''(R), m''(S), m''(C)); m''(R) from 1 - R (exact where R rounds to 1) when given."""
    e = 1.0 - float(R) if one_minus_R is None else float(one_minus_R)
    d2R = float(_kern.moments_top(info.code, e, info.cc)[2])
    return (d2R,) + tuple(float(_kern.moments(info.code, float(x), info.cc)[2]) for x in (S, C))


# --------------------------------------------------------------------------- dense (small K)
def full_hessian(alpha, K, R, S, C, activation="erf"):
    """Gradient and Hessian of beta f in the full space of the K^2 + K(K-1)/2 individual overlaps
    {R_in, Q_ij (i<j)} at the site-symmetric point (R, S, C) (integer 2 <= K <= 40, K = M, T = I, Q_ii = 1).

    beta f = alpha K eps_g({R_in, Q_ij}) - (1/2) ln det(Q - R R^T) (Oostwal et al. 2019, Eqs. 18, 20, 25);
    derivatives by
    matrix calculus (d ln det A = tr(A^-1 dA)), assembled from the matrices B = A^-1, B R and R^T B R.
    Returns (gradient, Hessian) as a vector and a symmetric matrix (one triangle computed, mirrored) in the
    coordinate order R_11, R_12, ..., R_KK, Q_12, ..., Q_(K-1)K.  O(K^4) memory: for stability at any K
    use :func:`equilibria` (its ``full_space_blocks`` come from the S_K blocks, memory independent of K).
    Raises ValueError for K outside [2, 40] or not an integer, and for (R, S, C) outside the domain.
    """
    alpha = _check_alpha(alpha)
    K = _check_K(K, allow_inf=False)
    if K != int(K) or not 2 <= K <= FULL_HESSIAN_MAX_K:
        raise ValueError(f"K must be an integer in [2, {FULL_HESSIAN_MAX_K}] for the dense full-space Hessian "
                         f"(for any K: equilibria(...).full_space_blocks), got {K!r}")
    R = float(check_range("R", R, -1.0, 1.0, lo_open=True, hi_open=True))
    S = float(check_range("S", S, -1.0, 1.0, lo_open=True, hi_open=True))
    C = float(check_range("C", C, -1.0, 1.0, lo_open=True, hi_open=True))
    a1, a2 = _site(K, R, S, C)
    info = activation_info(activation)
    k = int(K)
    eye = np.eye(k)
    Rm = S * np.ones((k, k)) + (R - S) * eye
    B = eye / a2 + (1.0 / a1 - 1.0 / a2) / k * np.ones((k, k))
    BR = B @ Rm
    RBR = Rm.T @ BR
    dmR, dmS, dmC = (float(_kern.moments(info.code, x, info.cc)[1]) for x in (R, S, C))
    d2R, d2S, d2C = _second_moments(info, R, S, C)
    # gradient: d(-s)/dR_in = (B R)_in, d(-s)/dQ_ij = -B_ij; energy -alpha m'(R_in), +alpha m'(Q_ij)
    gR = -alpha * np.where(eye > 0, dmR, dmS) + BR
    iu = np.triu_indices(k, 1)
    gQ = alpha * dmC - B[iu]
    grad = np.concatenate([gR.ravel(), gQ])
    # Hessian of -s: (1/2) tr(B dA_u B dA_v) + tr(B dR_u dR_v^T), dA = dQ - dR R^T - R dR^T.
    # R_in: dA = -(e_i r_n^T + r_n e_i^T), r_n = R e_n; Q_ij: dA = e_i e_j^T + e_j e_i^T.  For
    # P = p q^T + q p^T, Q = r s^T + s r^T: tr(B P B Q) = (s.Bp)(q.Br) + (r.Bp)(q.Bs) + (s.Bq)(p.Br) + (r.Bq)(p.Bs).
    nR = k * k
    ii, nn = np.divmod(np.arange(nR), k)           # R coordinate (i, n)
    qi, qj = iu                                      # Q coordinate (i, j)
    HRR = 0.5 * 2.0 * (B[ii[:, None], ii[None, :]] * RBR[nn[:, None], nn[None, :]]
                       + BR[ii[:, None], nn[None, :]] * BR[ii[None, :], nn[:, None]])
    HRR += B[ii[:, None], ii[None, :]] * (nn[:, None] == nn[None, :])
    # R_in with Q_ab: dA_u = -(e_i r_n^T + r_n e_i^T), dA_v = e_a e_b^T + e_b e_a^T
    HRQ = -0.5 * 2.0 * (B[qj[None, :], ii[:, None]] * BR[qi[None, :], nn[:, None]]
                        + B[qi[None, :], ii[:, None]] * BR[qj[None, :], nn[:, None]])
    HQQ = 0.5 * 2.0 * (B[qj[:, None], qi[None, :]] * B[qi[:, None], qj[None, :]]
                       + B[qi[:, None], qi[None, :]] * B[qj[:, None], qj[None, :]])
    HRR -= alpha * np.diag(np.where(ii == nn, d2R, d2S))
    HQQ += alpha * d2C * np.eye(qi.size)
    n = nR + qi.size
    Hm = np.empty((n, n))
    Hm[:nR, :nR] = np.triu(HRR) + np.triu(HRR, 1).T
    Hm[:nR, nR:] = HRQ
    Hm[nR:, :nR] = HRQ.T
    Hm[nR:, nR:] = np.triu(HQQ) + np.triu(HQQ, 1).T
    return grad, Hm


# --------------------------------------------------------------------------- any K
class _Centralizer:
    """A K x K matrix that commutes with the permutations of units s, ..., K-1 ("bulk", nb = K - s
    of them): its s x s block ``ss`` on the special units, the values ``sb[i]`` (row i, any bulk
    column) and ``bs[j]`` (any bulk row, column j), and ``d``, ``o``: diagonal and off-diagonal
    values on the bulk.  Closed under +, scalar *, @ and transpose; nb may be any real >= 0."""
    __slots__ = ("ss", "sb", "bs", "d", "o", "nb")

    def __init__(self, ss, sb, bs, d, o, nb):
        self.ss, self.sb, self.bs, self.d, self.o, self.nb = ss, sb, bs, d, o, nb

    @classmethod
    def eye(cls, s, nb):
        return cls(np.eye(s), np.zeros(s), np.zeros(s), 1.0, 0.0, nb)

    @classmethod
    def ones(cls, s, nb):
        return cls(np.ones((s, s)), np.ones(s), np.ones(s), 1.0, 1.0, nb)

    @classmethod
    def special(cls, ss, nb):
        ss = np.asarray(ss, dtype=float)
        s = ss.shape[0]
        return cls(ss, np.zeros(s), np.zeros(s), 0.0, 0.0, nb)

    def __add__(self, y):
        return _Centralizer(self.ss + y.ss, self.sb + y.sb, self.bs + y.bs, self.d + y.d, self.o + y.o, self.nb)

    def __sub__(self, y):
        return self + (-1.0) * y

    def __rmul__(self, c):
        return _Centralizer(c * self.ss, c * self.sb, c * self.bs, c * self.d, c * self.o, self.nb)

    @property
    def T(self):
        return _Centralizer(self.ss.T, self.bs, self.sb, self.d, self.o, self.nb)

    def rowsum_bulk(self):
        """Sum of a bulk row over the bulk columns: d + (nb - 1) o."""
        return self.d + (self.nb - 1.0) * self.o

    def __matmul__(self, y):
        nb = self.nb
        ss = self.ss @ y.ss + nb * np.outer(self.sb, y.bs)
        sb = self.ss @ y.sb + self.sb * y.rowsum_bulk()
        bs = self.bs @ y.ss + self.rowsum_bulk() * y.bs
        c = np.dot(self.bs, y.sb)
        d = c + self.d * y.d + (nb - 1.0) * self.o * y.o
        o = c + self.d * y.o + self.o * y.d + (nb - 2.0) * self.o * y.o
        return _Centralizer(ss, sb, bs, d, o, nb)

    def trace(self):
        return np.trace(self.ss) + self.nb * self.d

    def inner(self, y, w_diag=1.0, w_off=1.0):
        """sum_ab w_ab X_ab Y_ab with weight w_diag on the diagonal and w_off off it."""
        nb = self.nb
        dg = np.diag(self.ss) * np.diag(y.ss)
        off = self.ss * y.ss
        off_sum = (off.sum() - dg.sum()) + nb * (np.dot(self.sb, y.sb) + np.dot(self.bs, y.bs)) \
            + nb * (nb - 1.0) * self.o * y.o
        return w_diag * (dg.sum() + nb * self.d * y.d) + w_off * off_sum


def _representatives(k, s, nb):
    """{block: (list of (dR, dQ) directions, one per copy, multiplicity)} for integer K = k (s = min(k, 4)
    special units); blocks that do not exist at this K are left out."""
    Z = _Centralizer.special(np.zeros((s, s)), nb)
    eye = _Centralizer.eye(s, nb)
    ones = _Centralizer.ones(s, nb)
    off = ones - eye
    comps = {"trivial": ([(eye, Z), (off, Z), (Z, off)], 1)}
    x = np.zeros(s)
    x[0], x[1] = 1.0, -1.0
    xdiag = _Centralizer.special(np.diag(x), nb)
    x1 = _Centralizer(np.outer(x, np.ones(s)), x.copy(), np.zeros(s), 0.0, 0.0, nb)   # x 1^T
    xq = _Centralizer((x[:, None] + x[None, :]) * (1.0 - np.eye(s)), x.copy(), x.copy(), 0.0, 0.0, nb)
    comps["standard"] = ([(xdiag, Z), (x1, Z), (x1.T, Z), (Z, xq)], k - 1)
    if k >= 3:
        z = np.zeros((s, s))
        for a, b in ((0, 1), (1, 2), (2, 0)):
            z[a, b] += 1.0
            z[b, a] -= 1.0
        comps["[K-2,1,1]"] = ([(_Centralizer.special(z, nb), Z)], (k - 1) * (k - 2) // 2)
    if k >= 4:
        y = np.zeros((s, s))
        for a, b, sgn in ((0, 1, 1), (2, 3, 1), (0, 2, -1), (1, 3, -1)):
            y[a, b] = y[b, a] = sgn
        yc = _Centralizer.special(y, nb)
        comps["[K-2,2]"] = ([(yc, Z), (Z, yc)], k * (k - 3) // 2)
    return comps


def _block_matrices(alpha, k, R, S, C, a1, a2, d2, s=None):
    """{block: (Hessian on the representatives, their Gram matrix, multiplicity)} (see the module
    docstring); ``d2`` = (m''(R), m''(S), m''(C))."""
    s = min(k, 4) if s is None else s
    nb = float(k - s)
    d2R, d2S, d2C = d2
    eye = _Centralizer.eye(s, nb)
    ones = _Centralizer.ones(s, nb)
    Rm = S * ones + (R - S) * eye
    B = (1.0 / a2) * eye + ((1.0 / a1 - 1.0 / a2) / k) * ones

    def dA(u):
        dR, dQ = u
        return dQ - dR @ Rm.T - Rm @ dR.T

    out = {}
    for name, (vecs, mult) in _representatives(k, s, nb).items():
        n = len(vecs)
        BdA = [B @ dA(u) for u in vecs]
        Hb = [[None] * n for _ in range(n)]
        G = [[None] * n for _ in range(n)]
        for i in range(n):
            for j in range(i, n):   # one triangle, mirrored: symmetric by construction
                u, v = vecs[i], vecs[j]
                ent = 0.5 * (BdA[i] @ BdA[j]).trace() + (B @ u[0] @ v[0].T).trace()
                en = -alpha * u[0].inner(v[0], d2R, d2S) + 0.5 * alpha * u[1].inner(v[1], 0.0, d2C)
                Hb[i][j] = Hb[j][i] = ent + en
                G[i][j] = G[j][i] = u[0].inner(v[0]) + 0.5 * u[1].inner(v[1])
        out[name] = (np.array(Hb), np.array(G), mult)
    return out


def _full_blocks(info, alpha, K, R, S, C, a1=None, a2=None, one_minus_R=None):
    """Distinct Hessian eigenvalues in the full overlap space, by S_K symmetry blocks, at any integer K:
    dict name -> (eigenvalues ascending, multiplicity); the generalized problems H x = lambda G x on
    the representatives (G their Gram matrix; dependent representatives, as at K = 2, removed).

    ``a1``, ``a2``: the eigenvalues of Q - R R^T at the point (default: from R, S, C; pass the values of
    the chart the point was solved in where R, S, C as floats no longer determine them), likewise
    ``one_minus_R``.  For K <= 20 the
    block matrices are formed in double precision when a1, a2 >= 1e-4 (1.4e-15 of the largest eigenvalue against the
    dense Hessian, test); beyond (large K or alpha), their entries are sums of terms up to ~K^2 / (a1 a2)
    that cancel, so they are formed in mpmath with 25 + 2 log10 K + log10(1 / (a1 a2)) digits and the small
    generalized eigen-problems
    solved in the same precision (their eigenvalues span up to ~1 / (a1 a2)^2; a few hundredths of a second)."""
    import mpmath as mp
    k = int(K)
    if a1 is None or a2 is None:
        a1, a2 = _site(K, R, S, C)
    d2 = _second_moments(info, R, S, C, one_minus_R)
    if k <= 20 and min(a1, a2) >= 1e-4:
        blocks = _block_matrices(float(alpha), k, float(R), float(S), float(C), float(a1), float(a2), d2)
    else:
        dps = int(25 + 2 * math.log10(k) + max(0.0, -math.log10(a1 * a2)))
        with mp.workdps(dps):
            f = mp.mpf
            Rm = f(R) if one_minus_R is None else 1 - f(one_minus_R)    # 1 - R keeps the digits R has lost
            blocks = _block_matrices(f(alpha), k, Rm, f(S), f(C), f(a1), f(a2), tuple(f(x) for x in d2))
    out = {}
    for name, (Hb, G, mult) in blocks.items():
        if k <= 20 and min(a1, a2) >= 1e-4:
            Hb = np.array(Hb, dtype=float)
            G = np.array(G, dtype=float)
            w, U = np.linalg.eigh(G)
            keep = w > 1e-10 * w.max()
            W = U[:, keep] / np.sqrt(w[keep])
            Mb = W.T @ Hb @ W
            Mb = np.triu(Mb) + np.triu(Mb, 1).T
            out[name] = (np.linalg.eigvalsh(Mb), mult)
        else:   # the blocks' eigenvalues span up to ~1/(a1 a2)^2: solved in the same precision
            with mp.workdps(dps):
                n = Hb.shape[0]
                Gm = mp.matrix([[G[i, j] for j in range(n)] for i in range(n)])
                Hm = mp.matrix([[Hb[i, j] for j in range(n)] for i in range(n)])
                w, U = mp.eigsy(Gm)
                wmax = max(w)
                cols = [i for i in range(n) if w[i] > mp.mpf(10) ** -10 * wmax]
                W = mp.matrix(n, len(cols))
                for c, i in enumerate(cols):
                    for r in range(n):
                        W[r, c] = U[r, i] / mp.sqrt(w[i])
                ev = mp.eigsy(W.T * Hm * W, eigvals_only=True)
                out[name] = (np.sort(np.array([float(x) for x in ev])), mult)
    return out
