"""Two well-conditioned charts of the site-symmetric beta f and a numba minimiser on them.

Compiled together with the generated kernels and :mod:`statmech.scm._solver`
(``@kernels(include=...)``); call through the kernel namespace (``_kern.chart_solve``).  Compiled with
``error_model="numpy"``: a division by zero gives inf or nan, which the domain and finiteness checks
reject, never a ZeroDivisionError.

Chart 0, y = (delta, t, v): delta = R - S, t = ln a1, v = (K-1) C, u = R + (K-1) S =
sqrt(1 + v - e^t) > 0 (the ``fes`` kernel; docs/scm.md, "Any K").  Every state with u > 0 except
those with a2 = 1 - C - delta^2 -> 0 (the specialized states at large alpha).

Chart 1, y = (t1, t2, S): t1 = ln a1, t2 = ln a2, R = sqrt(1 - D) > 0 with
D = (K-1) S^2 + ((K-1) a2 + a1) / K (the ``fet`` kernel; docs/scm.md, "Large alpha").  Every state
with R > 0; the specialized states at any alpha, to alpha = 1e300.

Chart 2, y = (t1, t2, v): u = sqrt(1 + v - a1) > 0, delta = -sqrt(1 - C - a2) < 0 (the ``fea``
kernel): the anti-specialized states where a2 -> 0 (ReLU-like g, R -> -1, S -> 2 / (K-1) at large K).

Chart 3, y = (delta, u, v): the collective overlaps, linear in (R, S, C) (the ``fe`` kernel through
``fgh``).  The states near u = 0 (small alpha) and with u < 0.

The stability eigenvalues are those of the Hessian H of beta f relative to the entropy metric
G = -Hess(s) (the generalized problem H x = lambda G x): G is positive definite (s = ln det / 2 of
an overlap matrix affine in R, S, C), and at a stationary point the pencil (H, G) transforms by
congruence, so lambda does not depend on the chart; lambda = 1 + alpha K eig(Hess eps_g, G),
dimensionless, O(1) at every alpha and K, > 0 at a minimum.
"""
import math
import typing

import numba
import numpy as np

#: number of columns of a :func:`chart_solve` row
ROW = 20

if typing.TYPE_CHECKING:  # generated kernels and statmech.scm._solver: globals of the compiled module
    from statmech.scm._equations import fea, fet  # noqa: F401
    from statmech.scm._solver import (eigen_gaps, fes_at, fgh, moments, moments_bottom, moments_top,  # noqa: F401
                                      q_top_e, scaled_point, solve_small, taylor_moments)


@numba.njit(cache=True, error_model="numpy")
def top_point(K, sg, t1, t2, S):
    """(R, C, 1 - R, inside) at y = (t1, t2, S) of chart 1 (sg = 1, R > 0) or 2 (sg = -1, R < 0)."""
    a1 = math.exp(t1)
    a2 = math.exp(t2)
    n = K - 1.0
    D = n * S * S + (n * a2 + a1) / K
    if not (D < 1.0 and abs(S) < 1.0):
        return 0.0, 0.0, 1.0, False
    r = math.sqrt(1.0 - D)
    R = sg * r
    e = D / (1.0 + r) if sg > 0.0 else 1.0 + r
    C = 2.0 * S + (K - 2.0) * S * S + (a1 - a2) / K - 2.0 * e * S
    return R, C, e, bool(r > 0.0 and abs(C) < 1.0)


@numba.njit(cache=True, error_model="numpy")
def anti_point(K, t1, t2, v):
    """(R, S, C, 1 + R, inside) at y = (t1, t2, v) of chart 2 (u > 0, delta < 0)."""
    a1 = math.exp(t1)
    a2 = math.exp(t2)
    n = K - 1.0
    C = v / n
    ad2 = 1.0 - C - a2
    u2 = 1.0 + v - a1
    if not (ad2 > 0.0 and u2 > 0.0 and abs(C) < 1.0):
        return 0.0, 0.0, 0.0, 1.0, False
    ad = math.sqrt(ad2)
    u = math.sqrt(u2)
    opr = (n * (C + a2) / (1.0 + ad) + 1.0 + u) / K          # 1 + R, without cancellation
    R = opr - 1.0
    S = (u + ad) / K
    return R, S, C, opr, bool(abs(R) < 1.0 and abs(S) < 1.0)


@numba.njit(cache=True, error_model="numpy")
def to_chart(chart, K, R, S, C, a1, a2, y):
    """y <- the coordinates of (R, S, C) (with its eigenvalues a1, a2) in ``chart``."""
    if chart == 0:
        y[0] = R - S
        y[1] = math.log(a1)
        y[2] = (K - 1.0) * C
    elif chart == 3:
        y[0] = R - S
        y[1] = R + (K - 1.0) * S
        y[2] = (K - 1.0) * C
    elif chart == 2:
        y[0] = math.log(a1)
        y[1] = math.log(a2)
        y[2] = (K - 1.0) * C
    else:
        y[0] = math.log(a1)
        y[1] = math.log(a2)
        y[2] = S


@numba.njit(cache=True, error_model="numpy")
def rounding_bound(code, cc, m0, m1, d1, alpha, K, e, S, C, s):
    """A bound on the rounding error of beta f: 8 eps times the sum of the moduli of its terms,
    alpha K (``|m(1) - m(R)|`` + (K-1)/2 (m'(0) (``|C|`` + 2 ``|S|``) + ``|q(C)|`` + 2 ``|q(S)|``)) + ``|s|``
    (e = 1 - R)."""
    mR = moments(code, 1.0 - e, cc)[0] if e >= 0.1 else 0.0
    q1 = abs(q_top_e(code, cc, m1, e, mR))
    qs = abs(taylor_moments(code, S, cc, m0, d1)[0])
    qc = abs(taylor_moments(code, C, cc, m0, d1)[0])
    tot = alpha * K * (q1 + 0.5 * (K - 1.0) * (abs(d1) * (abs(C) + 2.0 * abs(S)) + qc + 2.0 * qs)) + abs(s)
    return 8.0 * 2.220446049250313e-16 * tot + 1e-300


@numba.njit(cache=True, error_model="numpy")
def chart_eval(chart, code, cc, m0, m1, d1, alpha, K, y, g, H, pt):
    """beta f at y in ``chart``; fills the gradient g (3), Hessian H (3x3) and pt = (R, S, C,
    eps_g, s, rounding bound).  Returns (inside, beta f).  m0, m1: consistent values (``ref_moments``).
    An exception of the kernels (a division by zero where a point rounds onto the boundary of the domain)
    counts as outside."""
    try:
        return _chart_eval(chart, code, cc, m0, m1, d1, alpha, K, y, g, H, pt)
    except Exception:  # noqa: BLE001 -- numba: any error of the (python error model) kernels
        return False, math.inf


@numba.njit(cache=True, error_model="numpy")
def _chart_eval(chart, code, cc, m0, m1, d1, alpha, K, y, g, H, pt):
    """:func:`chart_eval` without the guard."""
    if chart == 3:
        n = K - 1.0
        R = (y[1] + n * y[0]) / K
        S = (y[1] - y[0]) / K
        C = y[2] / n
        ga1, ga2 = eigen_gaps(K, R, S, C)
        if not (ga1 > 0.0 and ga2 > 0.0 and abs(R) < 1.0 and abs(S) < 1.0 and abs(C) < 1.0):
            return False, math.inf     # (the domain as fgh computes it: a1, a2 from eigen_gaps)
        o = fgh(code, cc, m0, m1, alpha, K, R, S, C)
        # (R, S, C) = J (delta, u, v), J = [[n/K, 1/K, 0], [-1/K, 1/K, 0], [0, 0, 1/n]]
        f = o[0]
        g[0] = (n * o[1] - o[2]) / K
        g[1] = (o[1] + o[2]) / K
        g[2] = o[3] / n
        hRR, hRS, hRC, hSS, hSC, hCC = o[4], o[5], o[6], o[7], o[8], o[9]
        H[0, 0] = (n * n * hRR - 2.0 * n * hRS + hSS) / (K * K)
        H[0, 1] = (n * hRR + (n - 1.0) * hRS - hSS) / (K * K)
        H[1, 1] = (hRR + 2.0 * hRS + hSS) / (K * K)
        H[0, 2] = (n * hRC - hSC) / (K * n)
        H[1, 2] = (hRC + hSC) / (K * n)
        H[2, 2] = hCC / (n * n)
        eps = o[10]
        s = o[11]
        e = 1.0 - R
    elif chart == 0:
        R, S, C, u, inside = scaled_point(K, y[0], y[1], y[2])
        if not (inside and u > 0.0):
            return False, math.inf
        o = fes_at(code, cc, m0, d1, K, y[0], y[1], y[2])
        f = alpha * K * (m1 - m0 - d1) + alpha * o[0] - o[1]
        g[0] = alpha * o[2] - o[5]
        g[1] = alpha * o[3] - o[6]
        g[2] = alpha * o[4] - o[7]
        H[0, 0] = alpha * o[8] - o[14]
        H[0, 1] = alpha * o[9] - o[15]
        H[0, 2] = alpha * o[10] - o[16]
        H[1, 1] = alpha * o[11] - o[17]
        H[1, 2] = alpha * o[12] - o[18]
        H[2, 2] = alpha * o[13] - o[19]
        eps = (m1 - m0 - d1) + o[0] / K
        s = o[1]
        e = 1.0 - R
    else:
        if chart == 1:
            S = y[2]
            R, C, e, inside = top_point(K, 1.0, y[0], y[1], S)
            opr = 1.0 + R
        else:
            R, S, C, opr, inside = anti_point(K, y[0], y[1], y[2])
            e = 1.0 - R
        if not inside:
            return False, math.inf
        if chart == 2 and opr < 0.1:     # R near -1: m and its derivatives from the exact 1 + R
            mR, dR, d2R = moments_bottom(code, opr, cc)
            q1R = m1 - mR
        else:
            mR, dR, d2R = moments_top(code, e, cc)
            q1R = q_top_e(code, cc, m1, e, mR)
        a = taylor_moments(code, S, cc, m0, d1)
        b = taylor_moments(code, C, cc, m0, d1)
        if chart == 1:
            o = fet(alpha, K, 1.0, y[0], y[1], S, d1, q1R, -dR, -d2R, a[0], a[1], a[2], b[0], b[1], b[2])
        else:
            o = fea(alpha, K, y[0], y[1], y[2], d1, q1R, -dR, -d2R, a[0], a[1], a[2], b[0], b[1], b[2])
        f = o[0]
        g[0] = o[1]
        g[1] = o[2]
        g[2] = o[3]
        H[0, 0] = o[4]
        H[0, 1] = o[5]
        H[0, 2] = o[6]
        H[1, 1] = o[7]
        H[1, 2] = o[8]
        H[2, 2] = o[9]
        eps = o[10]
        s = o[11]
    H[1, 0] = H[0, 1]
    H[2, 0] = H[0, 2]
    H[2, 1] = H[1, 2]
    pt[0] = R
    pt[1] = S
    pt[2] = C
    pt[3] = eps
    pt[4] = s
    pt[5] = rounding_bound(code, cc, m0, m1, d1, alpha, K, e, S, C, s)
    ok = math.isfinite(f)
    for i in range(3):
        ok = ok and math.isfinite(g[i])
        for j in range(3):
            ok = ok and math.isfinite(H[i, j])
    return ok, f


@numba.njit(cache=True, error_model="numpy")
def chart_metric(chart, K, y, R, S, C):
    """The entropy metric G = -Hess(s) pulled back to the chart (see the module docstring):
    G = sum_k c_k [grad a_k grad a_k^T / a_k^2 + 2 grad w_k grad w_k^T / a_k], c = (1/2, (K-1)/2),
    w_1 = u = R + (K-1) S, w_2 = delta = R - S (the Hessians of a1, a2 are -2 grad w grad w^T)."""
    n = K - 1.0
    ga1 = np.zeros(3)   # grad a1 / a1
    ga2 = np.zeros(3)   # grad a2 / a2
    gu = np.zeros(3)
    gd = np.zeros(3)
    a1, a2 = eigen_gaps(K, R, S, C)
    if chart == 0:
        a1 = math.exp(y[1])
        u = math.sqrt(1.0 + y[2] - a1)
        ga1[1] = 1.0
        ga2[0] = -2.0 * y[0] / a2
        ga2[2] = -1.0 / (n * a2)
        gu[1] = -a1 / (2.0 * u)
        gu[2] = 1.0 / (2.0 * u)
        gd[0] = 1.0
    elif chart == 2:
        a1 = math.exp(y[0])
        a2 = math.exp(y[1])
        u = math.sqrt(1.0 + y[2] - a1)
        ad = math.sqrt(1.0 - y[2] / n - a2)
        ga1[0] = 1.0
        ga2[1] = 1.0
        gu[0] = -a1 / (2.0 * u)
        gu[2] = 1.0 / (2.0 * u)
        gd[1] = a2 / (2.0 * ad)
        gd[2] = 1.0 / (2.0 * n * ad)
    elif chart == 3:
        ga1[1] = -2.0 * y[1] / a1
        ga1[2] = 1.0 / a1
        ga2[0] = -2.0 * y[0] / a2
        ga2[2] = -1.0 / (n * a2)
        gu[1] = 1.0
        gd[0] = 1.0
    else:
        a1 = math.exp(y[0])
        a2 = math.exp(y[1])
        ga1[0] = 1.0
        ga2[1] = 1.0
        gR0 = -a1 / (2.0 * K * R)
        gR1 = -n * a2 / (2.0 * K * R)
        gR2 = -n * S / R
        gu[0] = gR0
        gu[1] = gR1
        gu[2] = gR2 + n
        gd[0] = gR0
        gd[1] = gR1
        gd[2] = gR2 - 1.0
    G = np.empty((3, 3))
    for i in range(3):
        for j in range(i, 3):
            G[i, j] = 0.5 * (ga1[i] * ga1[j] + 2.0 * gu[i] * gu[j] / a1) \
                + 0.5 * n * (ga2[i] * ga2[j] + 2.0 * gd[i] * gd[j] / a2)
            G[j, i] = G[i, j]
    return G


@numba.njit(cache=True, error_model="numpy")
def sym3_eigh(A):
    """(eigenvalues ascending, eigenvectors as columns) of a symmetric 3x3 matrix by cyclic Jacobi
    rotations to 1e-15 of its norm (at most 30 sweeps): a few lines instead of the LAPACK binding, whose
    compilation would dominate the first run of this module."""
    a = np.empty((3, 3))
    V = np.zeros((3, 3))
    for i in range(3):
        V[i, i] = 1.0
        for j in range(3):
            a[i, j] = A[i, j]
    nrm = 0.0
    for i in range(3):
        for j in range(3):
            nrm += a[i, j] * a[i, j]
    nrm = math.sqrt(nrm)
    for sweep in range(30):
        off = abs(a[0, 1]) + abs(a[0, 2]) + abs(a[1, 2])
        if not off > 1e-15 * nrm:
            break
        for p in range(2):
            for q in range(p + 1, 3):
                if a[p, q] == 0.0:
                    continue
                theta = (a[q, q] - a[p, p]) / (2.0 * a[p, q])
                t = (1.0 if theta >= 0.0 else -1.0) / (abs(theta) + math.sqrt(theta * theta + 1.0))
                c = 1.0 / math.sqrt(t * t + 1.0)
                s = t * c
                for k in range(3):       # columns p, q
                    akp = a[k, p]
                    akq = a[k, q]
                    a[k, p] = c * akp - s * akq
                    a[k, q] = s * akp + c * akq
                for k in range(3):       # rows p, q
                    apk = a[p, k]
                    aqk = a[q, k]
                    a[p, k] = c * apk - s * aqk
                    a[q, k] = s * apk + c * aqk
                for k in range(3):
                    vkp = V[k, p]
                    vkq = V[k, q]
                    V[k, p] = c * vkp - s * vkq
                    V[k, q] = s * vkp + c * vkq
    # sort the three eigenpairs (by hand: no argsort)
    o0, o1, o2 = 0, 1, 2
    if a[o1, o1] < a[o0, o0]:
        o0, o1 = o1, o0
    if a[o2, o2] < a[o1, o1]:
        o1, o2 = o2, o1
    if a[o1, o1] < a[o0, o0]:
        o0, o1 = o1, o0
    ws = np.empty(3)
    Vs = np.empty((3, 3))
    for j in range(3):
        o = o0 if j == 0 else (o1 if j == 1 else o2)
        ws[j] = a[o, o]
        for i in range(3):
            Vs[i, j] = V[i, o]
    return ws, Vs


@numba.njit(cache=True, error_model="numpy")
def pencil_eigenvalues(H, G):
    """Eigenvalues (ascending) of H x = lambda G x for symmetric H and positive definite G: both
    scaled by diag(G)^(-1/2), Cholesky G = L L^T (3x3), eigenvalues of L^-1 H L^-T (one triangle,
    mirrored).  NaN if G is not numerically positive definite."""
    out = np.empty(3)
    for i in range(3):
        out[i] = np.nan
    d = np.empty(3)
    for i in range(3):
        if not G[i, i] > 0.0:
            return out
        d[i] = 1.0 / math.sqrt(G[i, i])
    Gs = np.empty((3, 3))
    Hs = np.empty((3, 3))
    for i in range(3):
        for j in range(3):
            Gs[i, j] = G[i, j] * d[i] * d[j]
            Hs[i, j] = H[i, j] * d[i] * d[j]
    L = np.zeros((3, 3))
    for j in range(3):
        s = Gs[j, j]
        for k in range(j):
            s -= L[j, k] * L[j, k]
        if not s > 0.0:
            return out
        L[j, j] = math.sqrt(s)
        for i in range(j + 1, 3):
            s = Gs[i, j]
            for k in range(j):
                s -= L[i, k] * L[j, k]
            L[i, j] = s / L[j, j]
    Z = np.empty((3, 3))   # Z = L^-1 Hs
    for c in range(3):
        for i in range(3):
            s = Hs[i, c]
            for k in range(i):
                s -= L[i, k] * Z[k, c]
            Z[i, c] = s / L[i, i]
    A = np.empty((3, 3))   # A = L^-1 Z^T = L^-1 Hs L^-T
    for c in range(3):
        for i in range(3):
            s = Z[c, i]
            for k in range(i):
                s -= L[i, k] * A[k, c]
            A[i, c] = s / L[i, i]
    for i in range(3):
        for j in range(i + 1, 3):
            A[j, i] = A[i, j]
        for j in range(3):
            if not math.isfinite(A[i, j]):
                return out
    return sym3_eigh(A)[0]


@numba.njit(cache=True, error_model="numpy")
def copy_state(g, H, pt, g2, H2, pt2):
    """g2, H2, pt2 <- g, H, pt (element loops: no slice assignment, see docs/developing.md)."""
    for i in range(3):
        g2[i] = g[i]
        for j in range(3):
            H2[i, j] = H[i, j]
    for i in range(pt.shape[0]):
        pt2[i] = pt[i]


@numba.njit(cache=True, error_model="numpy")
def chart_gaps(chart, K, y, R, S, C):
    """(ln a1, ln a2, 1 - R) at y, each from the chart where it keeps its digits (the chart's own
    variable, else from (R, S, C) by ``eigen_gaps``, which is accurate where the chart is used)."""
    a1, a2 = eigen_gaps(K, R, S, C)
    omr = 1.0 - R
    if chart == 0:
        return y[1], math.log(a2), omr
    if chart == 1:
        return y[0], y[1], top_point(K, 1.0, y[0], y[1], y[2])[2]
    if chart == 2:
        return y[0], y[1], omr
    return math.log(a1), math.log(a2), omr


@numba.njit(cache=True, error_model="numpy")
def switch_chart(chart, K, y, pt):
    """The chart a solve should continue in from the point pt = (R, S, C, ...) of ``chart``; fills y.

    Chart 0 needs u > 0 away from 0 (t = ln a1 depends on u^2 only) and a2 not small (computed as
    1 - C - delta^2); chart 1 needs R away from 0; chart 2 needs u and ``|delta|`` away from 0;
    chart 3 needs a1 and a2 not small (computed from R, S, C).  Moves, with hysteresis
    (ru = u / sqrt(1 + v)): to 1 when a2 < 0.05 and R > 0.3; to 2 when a2 < 0.05, delta < 0 and
    ru > 0.2; out of 1 when R < 0.1 and out of 2 when a2 > 0.1 or ru < 0.1, to 0 if ru > 0.2 else to 3;
    from 3 to 0 when a1 < 0.05 (1 + v) and ru > 0.2; from 0 to 3 when ru < 0.1."""
    R = pt[0]
    S = pt[1]
    C = pt[2]
    a1, a2 = eigen_gaps(K, R, S, C)
    if not (a1 > 0.0 and a2 > 0.0):
        return chart
    n = K - 1.0
    u = R + n * S
    w1 = 1.0 + n * C
    if not w1 > 0.0:
        return chart
    ru = u / math.sqrt(w1)
    new = chart
    if chart != 1 and a2 < 0.05 and R > 0.3:
        new = 1
    elif chart != 2 and a2 < 0.05 and R < S and ru > 0.2:
        new = 2
    elif (chart == 1 and R < 0.1) or (chart == 2 and (a2 > 0.1 or ru < 0.1)):
        new = 0 if ru > 0.2 else 3
    elif chart == 3 and a1 < 0.05 * w1 and ru > 0.2:
        new = 0
    elif chart == 0 and ru < 0.1:
        new = 3
    if new != chart:
        to_chart(new, K, R, S, C, a1, a2, y)
    return new


@numba.njit(cache=True, error_model="numpy")
def chart_solve(chart, code, cc, m0, m1, d1, alpha, K, y0, minimize, maxit, row):
    """From y0 in ``chart``: ``minimize`` -- Newton with the Hessian's eigenvalues replaced by their
    moduli (floored at 1e-10 of the largest) and an Armijo line search on beta f, so that every start
    descends to a local minimum; else Newton on the gradient (any stationary point), line search on the
    Jacobi-scaled gradient norm.  Inside the chart's domain; the solve moves to the chart that suits the
    point (:func:`switch_chart`).  Fills row (:data:`ROW` columns) = [y (3), R, S, C, beta f, eps_g, s,
    lambda (3: pencil eigenvalues, see the module docstring), converged, iterations, scaled Newton step,
    chart, rounding bound of beta f, ln a1, ln a2, 1 - R]."""
    y = np.empty(3)
    yn = np.empty(3)
    for i in range(3):
        y[i] = y0[i]
    g = np.empty(3)
    H = np.empty((3, 3))
    pt = np.empty(6)
    gn = np.empty(3)
    Hn = np.empty((3, 3))
    ptn = np.empty(6)
    for j in range(row.shape[0]):
        row[j] = np.nan
    row[12] = 0.0
    ok, f = chart_eval(chart, code, cc, m0, m1, d1, alpha, K, y, g, H, pt)
    if not ok:
        return
    conv = False
    its = 0
    step = math.inf
    last = math.inf
    switches = 0
    D = np.empty(3)
    ps = np.empty(3)
    p = np.empty(3)
    Hs = np.empty((3, 3))
    gs = np.empty(3)
    for it in range(maxit):
        its = it + 1
        if switches < 4:
            new = switch_chart(chart, K, y, pt)
            if new != chart:
                okc, fc = chart_eval(new, code, cc, m0, m1, d1, alpha, K, y, g, H, pt)
                if not okc:
                    return
                chart = new
                f = fc
                switches += 1
        for i in range(3):
            h = abs(H[i, i])
            D[i] = 1.0 / math.sqrt(h) if h > 0.0 else 1.0
            gs[i] = g[i] * D[i]
        for i in range(3):
            for j in range(3):
                Hs[i, j] = H[i, j] * D[i] * D[j]
        w, V = sym3_eigh(Hs)
        wmax = max(abs(w[0]), abs(w[2]))
        posdef = w[0] > 0.0
        if not wmax > 0.0:
            # no curvature (e.g. alpha = 0 in charts 1, 2, where beta f = -s is linear): steepest descent
            for i in range(3):
                ps[i] = -gs[i]
        elif minimize or posdef:
            floor = 1e-10 * wmax
            for i in range(3):
                ps[i] = 0.0
            for k in range(3):
                c = 0.0
                for i in range(3):
                    c += V[i, k] * gs[i]
                c /= max(abs(w[k]), floor)
                for i in range(3):
                    ps[i] -= c * V[i, k]
        else:
            sol, okl = solve_small(Hs, -gs)
            if not okl:
                return
            for i in range(3):
                ps[i] = sol[i]
        step = 0.0
        for i in range(3):
            p[i] = ps[i] * D[i]
            step = max(step, abs(ps[i]))
        floor_reached = step <= 1e-11 or (step <= 1e-4 and step >= 0.25 * last)
        last = step
        if floor_reached and (posdef or not minimize):
            # the Newton step is at rounding level, or stopped shrinking (quadratic convergence ended at
            # the noise floor of the gradient, ~ eps sqrt(alpha K) and more where beta f is a small
            # difference of terms ~ alpha K): take it and stop
            for i in range(3):
                yn[i] = y[i] + p[i]
            okn, fn = chart_eval(chart, code, cc, m0, m1, d1, alpha, K, yn, gn, Hn, ptn)
            if okn:
                for i in range(3):
                    y[i] = yn[i]
                f = fn
                copy_state(gn, Hn, ptn, g, H, pt)
            conv = True
            break
        if minimize and not posdef and step <= 1e-6:
            # at a saddle (e.g. R = S beyond its instability, where the gradient along the unstable
            # direction vanishes by symmetry): leave it along the eigenvector of negative curvature
            for i in range(3):
                p[i] = 0.1 * V[i, 0] * D[i]
                yn[i] = y[i] + p[i]
            okp, fp = chart_eval(chart, code, cc, m0, m1, d1, alpha, K, yn, gn, Hn, ptn)
            for i in range(3):
                yn[i] = y[i] - p[i]
            okm, fm = chart_eval(chart, code, cc, m0, m1, d1, alpha, K, yn, gn, Hn, ptn)
            if not (okp or okm):
                break
            if not okp or (okm and fm < fp):
                for i in range(3):
                    p[i] = -p[i]
            for i in range(3):
                yn[i] = y[i] + p[i]
            okn, fn = chart_eval(chart, code, cc, m0, m1, d1, alpha, K, yn, gn, Hn, ptn)
            for i in range(3):
                y[i] = yn[i]
            f = fn
            copy_state(gn, Hn, ptn, g, H, pt)
            continue
        dec = 0.0
        for i in range(3):
            dec -= gs[i] * ps[i]
        gs_norm = math.sqrt(gs[0] * gs[0] + gs[1] * gs[1] + gs[2] * gs[2])
        noise = pt[5]   # rounding of beta f
        lam = 1.0
        accepted = False
        for bt in range(50):
            for i in range(3):
                yn[i] = y[i] + lam * p[i]
            okn, fn = chart_eval(chart, code, cc, m0, m1, d1, alpha, K, yn, gn, Hn, ptn)
            if okn:
                gsn_norm = 0.0
                for i in range(3):
                    gsn_norm += (gn[i] * D[i]) ** 2
                gsn_norm = math.sqrt(gsn_norm)
                if minimize:
                    if fn <= f - 1e-4 * lam * dec:
                        accepted = True
                    elif dec <= 100.0 * noise and fn <= f + noise and gsn_norm < gs_norm:
                        accepted = True    # the decrease is below the rounding of beta f: judge by the gradient
                elif gsn_norm <= (1.0 - 1e-4 * lam) * gs_norm:
                    accepted = True
            if accepted:
                break
            lam *= 0.5
        if not accepted:
            # no progress: converged if the step is within the rounding floor of the gradient
            conv = step <= 1e-6 and (posdef or not minimize)
            break
        for i in range(3):
            y[i] = yn[i]
        f = fn
        copy_state(gn, Hn, ptn, g, H, pt)
    row[0] = y[0]
    row[1] = y[1]
    row[2] = y[2]
    row[3] = pt[0]
    row[4] = pt[1]
    row[5] = pt[2]
    row[6] = f
    row[7] = pt[3]
    row[8] = pt[4]
    G = chart_metric(chart, K, y, pt[0], pt[1], pt[2])
    ev = pencil_eigenvalues(H, G)
    row[9] = ev[0]
    row[10] = ev[1]
    row[11] = ev[2]
    row[12] = 1.0 if conv else 0.0
    row[13] = its
    row[14] = step
    row[15] = chart
    row[16] = pt[5]
    t1, t2, omr = chart_gaps(chart, K, y, pt[0], pt[1], pt[2])
    row[17] = t1
    row[18] = t2
    row[19] = omr


@numba.njit(cache=True, error_model="numpy")
def chart_multistart(chart, code, cc, m0, m1, d1, alpha, K, starts, minimize, maxit, out):
    """:func:`chart_solve` from every row of ``starts``; rows of ``out`` as there."""
    for i in range(starts.shape[0]):
        chart_solve(chart, code, cc, m0, m1, d1, alpha, K, starts[i], minimize, maxit, out[i])


@numba.njit(cache=True, error_model="numpy")
def phi_at(code, cc, m0, m1, d1, alpha, e, side):
    """:func:`_phi_at`, NaN on an exception of the kernels."""
    try:
        return _phi_at(code, cc, m0, m1, d1, alpha, e, side)
    except Exception:  # noqa: BLE001
        return math.nan, math.nan, math.nan, math.nan, math.nan, math.nan


@numba.njit(cache=True, error_model="numpy")
def _phi_at(code, cc, m0, m1, d1, alpha, e, side):
    """K = inf: phi(R) = beta f / K on sigma = 1 - R, gamma = 0 at R = side (1 - e) (side = +-1, 0 < e <= 1),
    without cancellation: (phi, phi'(R), phi''(R), eps_g, s, R) with phi = alpha (Q1(R) - m'(0)(1 - R)) - s,
    s = ln(1 - R^2) / 2, 1 - R^2 = e (2 - e)."""
    if side > 0.0:
        R = 1.0 - e
        mR, dR, d2R = moments_top(code, e, cc)
        q1 = q_top_e(code, cc, m1, e, mR)
        omr = e
    else:
        R = -1.0 + e
        mR, dR, d2R = moments_bottom(code, e, cc)
        q1 = m1 - mR
        omr = 2.0 - e
    w = e * (2.0 - e)
    eps = q1 - d1 * omr
    s = 0.5 * math.log(w)
    return alpha * eps - s, alpha * (d1 - dR) + R / w, -alpha * d2R + (1.0 + R * R) / (w * w), eps, s, R


@numba.njit(cache=True, error_model="numpy")
def phi_scan(code, cc, m0, m1, d1, alpha, es, side, out):
    """out[i] = phi'(R) at the e = es[i] of :func:`phi_at`."""
    for i in range(es.shape[0]):
        out[i] = phi_at(code, cc, m0, m1, d1, alpha, es[i], side)[1]


@numba.njit(cache=True, error_model="numpy")
def _key_jump(a, b, dlog):
    """True if the stationary point moved too far between two accepted continuation steps (a jump to
    another branch): delta by more than 0.25 or ln a1, ln a2 by more than 1 + 1.5 ``|d ln alpha|``."""
    lim = 1.0 + 1.5 * dlog
    return (abs((a[3] - a[4]) - (b[3] - b[4])) > 0.25 or abs(a[17] - b[17]) > lim or abs(a[18] - b[18]) > lim)


@numba.njit(cache=True, error_model="numpy")
def chart_trace(chart, code, cc, m0, m1, d1, K, alphas, y0, out):
    """Natural-parameter continuation of a stationary point along ``alphas`` (in tracing order, either
    direction), starting from the solution near y0 (chart ``chart``) at alphas[0]: Newton on the gradient
    (:func:`chart_solve`) with a secant predictor in ln alpha (alpha where an end point is 0); a step that
    fails, jumps to another branch (:func:`_key_jump`), changes the sign of R - S or reaches R = S is
    halved, down to 1/4096 of the grid interval -- then the branch has ended (fold, or merged into R = S).
    Rows of ``out`` as in :func:`chart_solve` (NaN where the branch does not exist).  Returns the number
    of grid points reached."""
    n = alphas.shape[0]
    for i in range(n):
        for j in range(out.shape[1]):
            out[i, j] = np.nan
        out[i, 12] = 0.0
    row = np.empty(out.shape[1])
    chart_solve(chart, code, cc, m0, m1, d1, alphas[0], K, y0, False, 60, row)
    if row[12] != 1.0:
        return 0
    d0 = row[3] - row[4]
    sgn = 1.0 if d0 > 0.0 else -1.0
    tiny = 1e-7
    for j in range(row.shape[0]):
        out[0, j] = row[j]
    cur = np.empty(row.shape[0])
    prev = np.empty(row.shape[0])
    for j in range(row.shape[0]):
        cur[j] = row[j]
        prev[j] = row[j]
    a_cur = alphas[0]
    a_prev = alphas[0]
    have_prev = False
    yp = np.empty(3)
    for i in range(1, n):
        a_t = alphas[i]
        frac = 1.0
        while a_cur != a_t:
            geo = a_cur > 0.0 and a_t > 0.0
            if geo:
                a_try = math.exp(math.log(a_cur) + frac * (math.log(a_t) - math.log(a_cur)))
            else:
                a_try = a_cur + frac * (a_t - a_cur)
            if frac == 1.0:
                a_try = a_t
            ch = int(cur[15])
            for k in range(3):
                yp[k] = cur[k]
            if have_prev and int(prev[15]) == ch and a_prev != a_cur:
                if geo and a_prev > 0.0:
                    r = (math.log(a_try) - math.log(a_cur)) / (math.log(a_cur) - math.log(a_prev))
                else:
                    r = (a_try - a_cur) / (a_cur - a_prev)
                for k in range(3):
                    yp[k] = cur[k] + r * (cur[k] - prev[k])
            chart_solve(ch, code, cc, m0, m1, d1, a_try, K, yp, False, 40, row)
            dlog = abs(math.log(a_try) - math.log(a_cur)) if geo else abs(a_try - a_cur) / max(a_cur, 1.0)
            ok = row[12] == 1.0
            if ok:
                d = row[3] - row[4]
                ok = sgn * d > tiny * (1.0 + abs(row[3])) and not _key_jump(cur, row, dlog)
            if not ok and have_prev:
                for k in range(3):
                    yp[k] = cur[k]
                chart_solve(ch, code, cc, m0, m1, d1, a_try, K, yp, False, 40, row)
                ok = row[12] == 1.0
                if ok:
                    d = row[3] - row[4]
                    ok = sgn * d > tiny * (1.0 + abs(row[3])) and not _key_jump(cur, row, dlog)
            if ok:
                for j in range(row.shape[0]):
                    prev[j] = cur[j]
                    cur[j] = row[j]
                a_prev = a_cur
                a_cur = a_try
                have_prev = True
                frac = min(1.0, 2.0 * frac)
            else:
                frac *= 0.5
                if frac < 1.0 / 4096.0:
                    return i
        for j in range(row.shape[0]):
            out[i, j] = cur[j]
    return n


@numba.njit(cache=True, error_model="numpy")
def phi_roots(code, cc, m0, m1, d1, alpha, n, out):
    """K = inf: the stationary points R != 0 of phi (:func:`phi_at`): phi'(R) scanned on each side on n
    points uniform in ln e from e = 1e-3 / (1 + alpha) to 1, each sign change refined by the Illinois
    method in ln e to rounding.  Rows of out: (side, e); returns their number."""
    lo = math.log(1e-3 / (1.0 + alpha))
    k = 0
    for sidx in range(2):
        side = 1.0 if sidx == 0 else -1.0
        t0 = lo
        f0 = phi_at(code, cc, m0, m1, d1, alpha, math.exp(t0), side)[1]
        for i in range(1, n):
            t1 = lo + (0.0 - lo) * i / (n - 1.0)
            if i == n - 1:
                t1 = 0.0
            f1 = phi_at(code, cc, m0, m1, d1, alpha, math.exp(t1), side)[1]
            if i == n - 1 and f1 == 0.0:
                break                       # R = 0 itself
            if f0 == 0.0 or (f0 < 0.0) != (f1 < 0.0):
                a, fa, b, fb = t0, f0, t1, f1
                last = 0
                for it in range(200):
                    if fa == 0.0:
                        b, fb = a, fa
                        break
                    c = (a * fb - b * fa) / (fb - fa) if fb != fa else 0.5 * (a + b)
                    if not (min(a, b) < c < max(a, b)):
                        c = 0.5 * (a + b)
                    fc = phi_at(code, cc, m0, m1, d1, alpha, math.exp(c), side)[1]
                    if fc == 0.0 or abs(b - a) <= 1e-15 * (1.0 + abs(c)):
                        b, fb = c, fc
                        break
                    if (fc < 0.0) == (fb < 0.0):
                        b, fb = c, fc
                        if last == 1:
                            fa *= 0.5
                        last = 1
                    else:
                        a, fa = c, fc
                        if last == -1:
                            fb *= 0.5
                        last = -1
                if k < out.shape[0]:
                    out[k, 0] = side
                    out[k, 1] = math.exp(b)
                    k += 1
            t0, f0 = t1, f1
    return k
