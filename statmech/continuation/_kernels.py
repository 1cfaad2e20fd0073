"""Numba kernels of the engine: the small dense linear algebra of the (n+1)x(n+1) bordered
systems of the corrector and the tangent (row- and column-equilibrated Gaussian elimination with
partial pivoting), their log-determinant (the branch-point test function), the componentwise
backward error, weighted inner products, the stability margin of gradient systems, the cubic
Hermite interpolation along a branch and the deflation factor.  The systems have n + 1 <= ~10
unknowns: numpy's per-call overhead (argument checks, dispatch, a LAPACK call, temporaries) is
~10x the arithmetic there.

Every function takes float64 arrays.  A vanishing pivot (singular to working precision) is
reported (``ok`` False) rather than hidden: the callers fall back to least squares."""
import math

import numba
import numpy as np

from .._linalg_nb import lu_solve as _lu_solve
from .._linalg_nb import pivot as _pivot
from .._linalg_nb import swap_rows as _swap_rows


@numba.njit(cache=True)
def _bordered(J, Fp, row):
    """The bordered matrix [[F_x, F_p], [row]].  (Element loops: an array-to-slice assignment
    compiles numba's shape-mismatch message formatting, seconds of a cold start.)"""
    n = J.shape[0]
    M = np.empty((n + 1, n + 1))
    for i in range(n):
        for j in range(n):
            M[i, j] = J[i, j]
        M[i, n] = Fp[i]
    for j in range(n + 1):
        M[n, j] = row[j]
    return M


@numba.njit(cache=True)
def solve_equilibrated(M, b):
    """Solve M u = b after row, then column equilibration (each scaled to unit max-norm): the
    bordered systems mix rows of very different size (F_x entries ~1e8 next to the arclength
    row) and partial pivoting is not scale invariant.  Returns (u, ok); u is NaN when M or b is
    not finite, ok is False when a pivot vanishes."""
    n = M.shape[0]
    M2 = np.empty((n, n))
    r = np.empty(n)
    c = np.empty(n)
    rhs = np.empty(n)
    for i in range(n):
        m = 0.0
        for j in range(n):
            v = abs(M[i, j])
            if not v <= 1.7976931348623157e308:  # NaN or inf
                return np.full(n, np.nan), True
            m = max(m, v)
        r[i] = m if m > 0.0 else 1.0
        if not abs(b[i]) <= 1.7976931348623157e308:
            return np.full(n, np.nan), True
        rhs[i] = b[i] / r[i]
        for j in range(n):
            M2[i, j] = M[i, j] / r[i]
    for j in range(n):
        m = 0.0
        for i in range(n):
            m = max(m, abs(M2[i, j]))
        c[j] = m if m > 0.0 else 1.0
        for i in range(n):
            M2[i, j] /= c[j]
    ok = _lu_solve(M2, rhs)
    for j in range(n):
        rhs[j] /= c[j]
    return rhs, ok


@numba.njit(cache=True)
def newton_step(J, Fp, row, F, g):
    """The corrector step: solve [F_x, F_p; row] dy = -(F, g).  Returns (dy, ok)."""
    n = J.shape[0]
    b = np.empty(n + 1)
    for i in range(n):
        b[i] = -F[i]
    b[n] = -g
    return solve_equilibrated(_bordered(J, Fp, row), b)


@numba.njit(cache=True)
def tangent(J, Fp, row, w):
    """Unit (weighted) tangent t with [F_x, F_p] t = 0 and row.t = 1.  Returns (t, ok); ok is False
    when the bordered system is singular (zero pivot) or t is not finite / zero."""
    n = J.shape[0]
    b = np.zeros(n + 1)
    b[n] = 1.0
    t, ok = solve_equilibrated(_bordered(J, Fp, row), b)
    nt = math.sqrt(wdot(w, t, t))
    if not ok or not (0.0 < nt <= 1.7976931348623157e308):
        return t, False
    return t / nt, True


@numba.njit(cache=True)
def bordered_slogdet(J, Fp, row):
    """(sign, log|det|) of [F_x, F_p; row] (LU with partial pivoting; (0, -inf) when singular)."""
    M = _bordered(J, Fp, row)
    n = M.shape[0]
    sign = 1.0
    logdet = 0.0
    for k in range(n):
        piv, big = _pivot(M, k)
        if big == 0.0:
            return 0.0, -np.inf
        if not big <= 1.7976931348623157e308:
            return np.nan, np.nan
        if piv != k:
            sign = -sign
            _swap_rows(M, k, piv)
        d = M[k, k]
        if d < 0:
            sign = -sign
        logdet += math.log(abs(d))
        for i in range(k + 1, n):
            m = M[i, k] / d
            if m != 0.0:
                for j in range(k + 1, n):
                    M[i, j] -= m * M[k, j]
    return sign, logdet


@numba.njit(cache=True)
def backward_error(F, J, Fp, y):
    """Componentwise backward error max_i |F_i| / (|[F_x, F_p]| |y|)_i (0 where F_i = 0, inf if
    not finite)."""
    n = F.shape[0]
    out = 0.0
    for i in range(n):
        fi = abs(F[i])
        if fi == 0.0:
            continue
        sc = abs(Fp[i]) * abs(y[n])
        for j in range(n):
            sc += abs(J[i, j]) * abs(y[j])
        v = fi / sc if sc > 0.0 else 0.0
        if not v <= 1.7976931348623157e308:
            return np.inf
        out = max(out, v)
    return out


@numba.njit(cache=True)
def wdot(w, a, b):
    """Weighted inner product sum_i w_i a_i b_i."""
    s = 0.0
    for i in range(a.shape[0]):
        s += w[i] * a[i] * b[i]
    return s


@numba.njit(cache=True)
def residual_and_gap(F, y, y_pred, row):
    """(max|F|, row.(y - y_pred)) of the corrector; max|F| is inf when F is not finite."""
    res = 0.0
    for i in range(F.shape[0]):
        v = abs(F[i])
        if not v <= 1.7976931348623157e308:
            return np.inf, 0.0
        res = max(res, v)
    g = 0.0
    for i in range(y.shape[0]):
        g += row[i] * (y[i] - y_pred[i])
    return res, g


@numba.njit(cache=True)
def sym_eig_extreme(J, largest):
    """Smallest (or largest) eigenvalue of the symmetric part of J; NaN if J is not finite."""
    n = J.shape[0]
    S = np.empty((n, n))
    for i in range(n):
        for j in range(n):
            v = J[i, j]
            if not abs(v) <= 1.7976931348623157e308:
                return np.nan
            S[i, j] = 0.5 * (v + J[j, i])
    ev = np.linalg.eigvalsh(S)
    return ev[-1] if largest else ev[0]


@numba.njit(cache=True)
def corrector_update(J, Fp, row, F, g, y):
    """One corrector step from y: solve [F_x, F_p; row] dy = -(F, g) and return (y + dy, status,
    tiny): status 0 ok, 1 dy not finite, 2 a vanishing pivot (the caller solves by least
    squares); tiny: max|dy| <= 1e-14 (1 + max|y + dy|) (the rounding level)."""
    dy, ok = newton_step(J, Fp, row, F, g)
    if not ok:
        return y, 2, False
    yn = y + dy
    big = 0.0
    step = 0.0
    for i in range(y.shape[0]):
        if not abs(dy[i]) <= 1.7976931348623157e308:
            return y, 1, False
        step = max(step, abs(dy[i]))
        big = max(big, abs(yn[i]))
    return yn, 0, step <= 1e-14 * (1.0 + big)


@numba.njit(cache=True)
def hermite_at_p(x0, p0, x1, p1, t0, t1, h, p):
    """x at parameter p between two nodes (x0, p0), (x1, p1) of a branch with tangents t0, t1
    (dy/ds, y = (x, p)) and arclength step h: the cubic Hermite interpolant
    y(u) = y0 + m0 u + c2 u^2 + c3 u^3 (u in [0, 1]) at the u where its p-component equals p
    (Newton on the cubic from the chord's estimate).  Returns (x, ok); ok is False when p is not
    monotone along the cubic there (the caller takes the chord)."""
    n = x0.shape[0]
    u = 0.0 if p1 == p0 else (p - p0) / (p1 - p0)
    m0p, m1p = h * t0[n], h * t1[n]
    c2p = 3.0 * (p1 - p0) - 2.0 * m0p - m1p
    c3p = 2.0 * (p0 - p1) + m0p + m1p
    for _ in range(8):
        pu = p0 + u * (m0p + u * (c2p + u * c3p)) - p
        dpu = m0p + u * (2.0 * c2p + 3.0 * u * c3p)
        if not dpu * (p1 - p0) > 0.0:
            return x0.copy(), False
        du = pu / dpu
        u -= du
        if not 0.0 <= u <= 1.0:
            return x0.copy(), False
        if abs(du) <= 1e-15:
            break
    x = np.empty(n)
    for i in range(n):
        m0, m1 = h * t0[i], h * t1[i]
        c2 = 3.0 * (x1[i] - x0[i]) - 2.0 * m0 - m1
        c3 = 2.0 * (x0[i] - x1[i]) + m0 + m1
        x[i] = x0[i] + u * (m0 + u * (c2 + u * c3))
    return x, True


@numba.njit(cache=True)
def deflation_factor(x, roots, power, shift):
    """M(x) = prod_i (|x - r_i|^-power + shift) over the rows r_i of ``roots`` and its gradient
    (inf and a zero gradient at a root)."""
    n = x.shape[0]
    m = 1.0
    g = np.zeros(n)
    for k in range(roots.shape[0]):
        d2 = 0.0
        for j in range(n):
            d = x[j] - roots[k, j]
            d2 += d * d
        if d2 == 0.0:
            return np.inf, np.zeros(n)
        mi = d2 ** (-power / 2) + shift
        c = -power * d2 ** (-power / 2 - 1) / mi
        m *= mi
        for j in range(n):
            g[j] += c * (x[j] - roots[k, j])
    for j in range(n):
        g[j] *= m
    return m, g
