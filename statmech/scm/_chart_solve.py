"""The numba minimiser and continuation on the charts of :mod:`statmech.scm._charts`, and the K = inf
stationary points of phi(R) in e = 1 -+ R.

Compiled together with the generated kernels (``@kernels(include=...)``); call through the kernel namespace
(``_kern.chart_solve``).  ``error_model="numpy"``: a division by zero gives inf or nan, which the domain and
finiteness checks reject.
"""
import math
import typing

import numba
import numpy as np

if typing.TYPE_CHECKING:  # globals of the compiled module
    from statmech.scm._charts import (chart_eval, chart_gaps, chart_metric, pencil_eigenvalues,  # noqa: F401
                                      switch_chart, sym3_eigh)
    from statmech.scm._ends import moments_bottom, moments_top, q_top_e  # noqa: F401
    from statmech.scm._solver import moments, solve_small  # noqa: F401


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
