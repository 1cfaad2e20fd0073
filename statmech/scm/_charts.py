"""Four well-conditioned charts of the site-symmetric beta f: the state, beta f with its gradient and
Hessian, the entropy metric and the stability eigenvalues in each, and the moves between them (the
minimiser is :mod:`statmech.scm._chart_solve`).

Compiled together with the generated kernels and :mod:`statmech.scm._solver`
(``@kernels(include=...)``); call through the kernel namespace (``_kern.chart_eval``).  Compiled with
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

#: number of columns of a ``_chart_solve.chart_solve`` row
ROW = 20

if typing.TYPE_CHECKING:  # generated kernels and the included modules: globals of the compiled module
    from statmech.scm._ends import eigen_gaps, moments_bottom, moments_top, q_top_e  # noqa: F401
    from statmech.scm._equations import fea, fet  # noqa: F401
    from statmech.scm._solver import fes_at, fgh, moments, scaled_point, taylor_moments  # noqa: F401


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
