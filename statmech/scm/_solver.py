"""Numba Newton, tracing and multistart for the site-symmetric SCM free energy.

Compiled together with the sympy-generated kernels of :mod:`statmech.scm._equations`
(``@kernels(include=("statmech.scm._solver",))``): the text of this file is appended to the
generated module, where ``pm_erf``, ``pm_relu``, ``pm_linear`` (pair moments and their
derivatives) and ``fe`` (beta f, gradient, Hessian, eps_g, s) are module globals, so the
whole call graph is one numba module, cached as one.  Call these functions through the
kernel namespace (``_kern.trace(...)``), not from this module.
"""
import math
import typing

import numba
import numpy as np

from statmech._linalg_nb import lu_solve
from statmech._nb import rt_bool

if typing.TYPE_CHECKING:  # generated kernels (statmech.scm._equations), globals of the compiled module
    from statmech.scm._ends import eigen_gaps, log_gaps, r_moments, ref_moments  # noqa: F401
    from statmech.scm._equations import fe, fes, pm_erf, pm_linear, pm_relu  # noqa: F401

@numba.njit(cache=True)
def solve_small(A, b):
    """``(x, ok)`` with ``A x = b`` by Gaussian elimination with partial pivoting (the 2x2 and
    3x3 Newton systems of this module); ``ok`` is False for a singular or non-finite system.
    Used instead of ``np.linalg.solve``, whose LAPACK binding and error formatting were most
    of the compile time of this module (a fresh ``statmech figures`` compiles it)."""
    M = A.copy()
    x = b.copy()
    if not (np.all(np.isfinite(M)) and np.all(np.isfinite(x))):
        return x, False
    return x, lu_solve(M, x)


@numba.njit(cache=True)
def _cheb(c, x):
    b1 = 0.0
    b2 = 0.0
    for k in range(c.shape[0] - 1, 0, -1):
        b0 = 2.0 * x * b1 - b2 + c[k]
        b2 = b1
        b1 = b0
    return x * b1 - b2 + c[0]


@numba.njit(cache=True)
def moments(code, rho, cc):
    """(m, m', m'') of the pair moment at correlation rho (|rho| < 1)."""
    if code == 0:
        return pm_erf(rho)
    elif code == 1:
        return pm_relu(rho)
    elif code == 2:
        return pm_linear(rho)
    # Chebyshev series in x = asin(rho) / (pi/2): the sqrt(1 - rho^2) singularities of kinked
    # activations at rho = +-1 become analytic in theta = asin(rho)
    if abs(rho) > 0.5:
        return cheb_end_moments(cc, 1.0 - abs(rho), 1.0 if rho > 0.0 else -1.0)
    c = math.sqrt(1.0 - rho * rho)
    x = math.asin(rho) / (0.5 * math.pi)
    m = _cheb(cc[0], x)
    mt = _cheb(cc[1], x) / (0.5 * math.pi)
    mtt = _cheb(cc[2], x) / (0.25 * math.pi * math.pi)
    return m, mt / c, (mtt + mt * rho / c) / (c * c)


@numba.njit(cache=True)
def in_domain(K, R, S, C):
    if not (abs(R) < 1.0 and abs(S) < 1.0 and abs(C) < 1.0):
        return False
    a1 = 1.0 + (K - 1.0) * C - (R + (K - 1.0) * S) ** 2
    a2 = 1.0 - C - (R - S) ** 2
    return a1 > 0.0 and a2 > 0.0


@numba.njit(cache=True)
def in_domain_scaled(K, c, y):
    """:func:`in_domain` at (R, S, C) = (y[0], c y[1], c y[2])."""
    return in_domain(K, y[0], y[1] * c, y[2] * c)


@numba.njit(cache=True)
def fgh(code, cc, m0, m1, alpha, K, R, S, C):
    """The ``fe`` kernel at (R, S, C): (beta f, gradient (3), Hessian upper triangle (6), eps_g, s)
    with its inputs computed without cancellation (r_moments, taylor_moments, eigen_gaps, log_gaps)."""
    m0, m1 = ref_moments(code, cc, m0, m1)
    d1 = moments(code, 0.0, cc)[1]
    q1R, dR, d2R = r_moments(code, cc, m1, R)
    qS = taylor_moments(code, S, cc, m0, d1)
    qC = taylor_moments(code, C, cc, m0, d1)
    a1, a2 = eigen_gaps(K, R, S, C)
    la1, la2 = log_gaps(K, R, S, C, a1, a2)
    return fe(alpha, K, R, S, C, d1, a1, a2, la1, la2, q1R, dR, d2R, qS[0], qS[1], qS[2], qC[0], qC[1], qC[2])


@numba.njit(cache=True)
def continuation_point(code, cc, m0, m1, alpha, K, c, y):
    """The fused evaluator of the continuation problem (``statmech.scm._engine``) at
    y = (R, S / c, C / c): (gradient, Hessian, d gradient / d alpha, beta f, d beta f / d alpha)
    in y, the alpha derivatives as the differences between alpha + 1 and alpha (beta f is affine
    in alpha) -- the numbers of the separate gradient / Hessian / free-energy callables."""
    o = fgh(code, cc, m0, m1, alpha, K, y[0], y[1] * c, y[2] * c)
    o1 = fgh(code, cc, m0, m1, alpha + 1.0, K, y[0], y[1] * c, y[2] * c)
    g = np.empty(3)
    gp = np.empty(3)
    Hm = np.empty((3, 3))
    g[0] = o[1]; g[1] = o[2] * c; g[2] = o[3] * c
    gp[0] = o1[1] - g[0]; gp[1] = o1[2] * c - g[1]; gp[2] = o1[3] * c - g[2]
    c2 = c * c
    Hm[0, 0] = o[4]; Hm[0, 1] = o[5] * c; Hm[0, 2] = o[6] * c
    Hm[1, 1] = o[7] * c2; Hm[1, 2] = o[8] * c2; Hm[2, 2] = o[9] * c2
    Hm[1, 0] = Hm[0, 1]; Hm[2, 0] = Hm[0, 2]; Hm[2, 1] = Hm[1, 2]
    return g, Hm, gp, o[0], o1[0] - o[0]


@numba.njit(cache=True)
def _grad_hess(code, cc, m0, m1, alpha, K, x, unspec):
    o = fgh(code, cc, m0, m1, alpha, K, x[0], x[0] if unspec else x[1], x[2])
    g = np.empty(3)
    Hm = np.empty((3, 3))
    g[0] = o[1]; g[1] = o[2]; g[2] = o[3]
    Hm[0, 0] = o[4]; Hm[0, 1] = o[5]; Hm[0, 2] = o[6]
    Hm[1, 1] = o[7]; Hm[1, 2] = o[8]; Hm[2, 2] = o[9]
    Hm[1, 0] = Hm[0, 1]; Hm[2, 0] = Hm[0, 2]; Hm[2, 1] = Hm[1, 2]
    return o, g, Hm


@numba.njit(cache=True)
def _reduced(g, Hm, unspec):
    """Gradient/Hessian in the free coordinates: (R, S, C) or, on R = S, (R, C)."""
    if unspec:
        gr = np.array([g[0] + g[1], g[2]])
        Hr = np.array([[Hm[0, 0] + 2.0 * Hm[0, 1] + Hm[1, 1], Hm[0, 2] + Hm[1, 2]],
                       [Hm[0, 2] + Hm[1, 2], Hm[2, 2]]])
        return gr, Hr
    return g.copy(), Hm.copy()


@numba.njit(cache=True)
def newton(code, cc, m0, m1, alpha, K, x0, unspec, tol, maxit):
    """Newton on grad(beta f) = 0 with backtracking inside the domain.

    Returns (x, converged, iterations, residual).  unspec: restrict to R = S.
    """
    x = x0.copy()
    if unspec:
        x[1] = x[0]
    if not in_domain(K, x[0], x[1], x[2]):
        return x, False, 0, np.inf
    scale = 1.0 + abs(alpha) * K
    o, g, Hm = _grad_hess(code, cc, m0, m1, alpha, K, x, unspec)
    gr, Hr = _reduced(g, Hm, unspec)
    gn = np.max(np.abs(gr))
    for it in range(maxit):
        if not np.isfinite(gn):
            return x, False, it, gn
        dx, ok = solve_small(Hr, -gr)
        if not ok:
            return x, False, it, gn
        if unspec:
            d = np.array([dx[0], dx[0], dx[1]])
        else:
            d = dx
        if np.max(np.abs(d)) <= 1e-13 * (1.0 + np.max(np.abs(x))) and gn <= 1e-6 * scale:
            # the Newton correction is at rounding level: x is exact to working precision
            return x + d, True, it + 1, gn
        lam = 1.0
        ok = False
        for bt in range(60):
            xn = x + lam * d
            if in_domain(K, xn[0], xn[1], xn[2]):
                o2, g2, H2 = _grad_hess(code, cc, m0, m1, alpha, K, xn, unspec)
                gr2, Hr2 = _reduced(g2, H2, unspec)
                gn2 = np.max(np.abs(gr2))
                if np.isfinite(gn2) and (gn2 <= (1.0 - 1e-4 * lam) * gn or gn2 <= tol * scale):
                    ok = True
                    break
            lam *= 0.5
        if not ok:
            return x, gn <= tol * scale, it, gn
        step = np.max(np.abs(xn - x))
        x = xn
        gr = gr2
        Hr = Hr2
        gn = gn2
        if gn <= tol * scale and step <= 1e-9:
            return x, True, it + 1, gn
    return x, gn <= tol * scale, maxit, gn


@numba.njit(cache=True)
def record(code, cc, m0, m1, alpha, K, x, row):
    """Fill row = [R, S, C, f, eps, s, ev0, ev1, ev2] at x (site-symmetric Hessian eigenvalues)."""
    o, g, Hm = _grad_hess(code, cc, m0, m1, alpha, K, x, rt_bool(False))
    ev = np.linalg.eigvalsh(Hm)
    row[0] = x[0]; row[1] = x[1]; row[2] = x[2]
    row[3] = o[0]; row[4] = o[10]; row[5] = o[11]
    row[6] = ev[0]; row[7] = ev[1]; row[8] = ev[2]


@numba.njit(cache=True)
def trace(code, cc, m0, m1, K, alphas, x0, unspec, tol, maxit, out):
    """Warm-started (secant predictor) Newton along alphas; out[:, :12] rows
    [R, S, C, f, eps, s, ev0, ev1, ev2, converged, iterations, residual].
    Stops (NaN rows) after the first failure.  Returns the number of converged points."""
    n = alphas.shape[0]
    x = x0.copy()
    xprev = x0.copy()
    have_prev = False
    nok = 0
    for i in range(n):
        if i > 0 and nok < i:
            for j in range(out.shape[1]):
                out[i, j] = np.nan
            out[i, 9] = 0.0
            continue
        xs = x.copy()
        if have_prev and i >= 2:
            da = alphas[i - 1] - alphas[i - 2]
            if da != 0.0:
                xp = x + (x - xprev) * (alphas[i] - alphas[i - 1]) / da
                if in_domain(K, xp[0], xp[1], xp[2]):
                    xs = xp
        xn, conv, its, res = newton(code, cc, m0, m1, alphas[i], K, xs, unspec, tol, maxit)
        if not conv and (xs[0] != x[0] or xs[1] != x[1] or xs[2] != x[2]):
            xn, conv, its, res = newton(code, cc, m0, m1, alphas[i], K, x, unspec, tol, maxit)
        if not conv:
            for j in range(out.shape[1]):
                out[i, j] = np.nan
            out[i, 9] = 0.0
            continue
        record(code, cc, m0, m1, alphas[i], K, xn, out[i])
        out[i, 9] = 1.0
        out[i, 10] = its
        out[i, 11] = res
        xprev = x
        x = xn
        have_prev = True
        nok += 1
    return nok


@numba.njit(cache=True)
def multistart(code, cc, m0, m1, alpha, K, starts, tol, maxit, out):
    """Newton from every start (rows of starts); out rows as in trace."""
    for i in range(starts.shape[0]):
        xn, conv, its, res = newton(code, cc, m0, m1, alpha, K, starts[i], rt_bool(False), tol, maxit)
        if conv:
            record(code, cc, m0, m1, alpha, K, xn, out[i])
            out[i, 9] = 1.0
            out[i, 10] = its
            out[i, 11] = res
        else:
            for j in range(out.shape[1]):
                out[i, j] = np.nan
            out[i, 9] = 0.0


# ------------------------------------------------------------------ scaled variables (any K)
# 10-point Gauss-Legendre rule on [0, 1]: Taylor remainders and divided differences of m
_GLX = np.array([0.013046735741414128, 0.06746831665550773, 0.16029521585048778, 0.2833023029353764,
                 0.4255628305091844, 0.5744371694908156, 0.7166976970646236, 0.8397047841495122,
                 0.9325316833444923, 0.9869532642585859])
_GLW = np.array([0.03333567215434407, 0.0747256745752902, 0.109543181257991, 0.13463335965499826,
                 0.1477621123573764, 0.1477621123573764, 0.13463335965499826, 0.109543181257991,
                 0.0747256745752902, 0.03333567215434407])


@numba.njit(cache=True)
def taylor_moments(code, x, cc, m0, d1):
    """(q, q', q'') = (m(x) - m(0) - m'(0) x, m'(x) - m'(0), m''(x)) without cancellation: for
    |x| < 0.1 from m'' alone, q = x^2 int_0^1 (1 - s) m''(s x) ds and q' = x int_0^1 m''(s x) ds
    (Gauss-Legendre; m'' is analytic on |rho| < 1, so the rule is exact to rounding there)."""
    m, m1, m2 = moments(code, x, cc)
    if abs(x) >= 0.1:
        return m - m0 - d1 * x, m1 - d1, m2
    a = 0.0
    b = 0.0
    for k in range(_GLX.shape[0]):
        c = moments(code, _GLX[k] * x, cc)[2]
        a += _GLW[k] * (1.0 - _GLX[k]) * c
        b += _GLW[k] * c
    return a * x * x, b * x, m2


@numba.njit(cache=True)
def slope1(code, R, S, cc):
    """(m'(R) - m'(S)) / (R - S), = m''(R) at R = S; for close arguments (|R - S| below half the
    distance to the end points +-1, where m'' may be singular) the integral of m'' over [S, R] by
    Gauss-Legendre (error < 1e-19 there), without cancellation."""
    d = R - S
    if abs(d) >= 0.5 * (1.0 - max(abs(R), abs(S))):
        return (moments(code, R, cc)[1] - moments(code, S, cc)[1]) / d
    a = 0.0
    for k in range(_GLX.shape[0]):
        a += _GLW[k] * moments(code, S + _GLX[k] * d, cc)[2]
    return a


@numba.njit(cache=True)
def scaled_point(K, dl, t, v):
    """(R, S, C, u, inside) at the scaled variables delta = R - S, t = log of the smallest
    eigenvalue 1 + (K-1) C - u^2 of the overlap matrix, v = (K-1) C (u = R + (K-1) S > 0)."""
    n = K - 1.0
    u2 = 1.0 + v - math.exp(t)
    if not u2 > 0.0:
        return 0.0, 0.0, 0.0, 0.0, False
    u = math.sqrt(u2)
    R = (u + n * dl) / K
    S = (u - dl) / K
    C = v / n
    inside = abs(R) < 1.0 and abs(S) < 1.0 and abs(C) < 1.0 and 1.0 - C - dl * dl > 0.0
    return R, S, C, u, inside


@numba.njit(cache=True)
def fes_at(code, cc, m0, d1, K, dl, t, v):
    """The ``fes`` kernel (E, s, their gradients and Hessians in (delta, t, v)) at a point."""
    R, S, C, u, inside = scaled_point(K, dl, t, v)
    a = taylor_moments(code, R, cc, m0, d1)
    b = taylor_moments(code, S, cc, m0, d1)
    c = taylor_moments(code, C, cc, m0, d1)
    return fes(K, dl, t, v, d1, a[0], a[1], a[2], b[0], b[1], b[2], c[0], c[1], c[2])


@numba.njit(cache=True)
def unspec_residual(code, cc, alpha, K, v):
    """On R = S at (alpha, K): F(v) = w alpha K m'(u/K) - u, with the stationarity in C solved for
    w = 1 / (alpha K m'(C) + 1/(1 - C)) and u = sqrt(1 + v - w) (docs/scm.md, "Any K").
    Returns (F, w, u); F = +inf where u is not real."""
    n = K - 1.0
    C = v / n
    w = 1.0 / (alpha * K * moments(code, C, cc)[1] + 1.0 / (1.0 - C))
    u2 = 1.0 + v - w
    if not (u2 > 0.0 and w > 0.0):
        return math.inf, w, 0.0
    u = math.sqrt(u2)
    return w * alpha * K * moments(code, u / K, cc)[1] - u, w, u


@numba.njit(cache=True)
def unspec_state(code, cc, alpha, K):
    """The R = S stationary point at (alpha, K) in scaled variables: root of F(v) (bracketed,
    Illinois).  Returns (v, t, u, converged); F is decreasing in v, +inf where u is not real."""
    n = K - 1.0
    a = -min(1.0, n) * (1.0 - 1e-15)      # 1 + v > 0 and C > -1
    b = n * (1.0 - 1e-15)                 # C < 1
    fa = math.inf
    fb = unspec_residual(code, cc, alpha, K, b)[0]
    f0 = unspec_residual(code, cc, alpha, K, 0.0)[0]
    if f0 == 0.0:
        a = b = 0.0
    elif f0 > 0.0:
        a, fa = 0.0, f0
    else:
        b, fb = 0.0, f0
    side = 0
    for it in range(400):
        if b - a <= 2e-16 * (abs(a) + abs(b)) or fa == 0.0 or fb == 0.0:
            break
        if math.isfinite(fa) and math.isfinite(fb):
            x = (a * fb - b * fa) / (fb - fa)
            if not (a < x < b):
                x = 0.5 * (a + b)
        else:
            x = 0.5 * (a + b)
        fx = unspec_residual(code, cc, alpha, K, x)[0]
        if fx > 0.0:
            a, fa = x, fx
            if side == 1 and math.isfinite(fb):
                fb *= 0.5
            side = 1
        else:
            b, fb = x, fx
            if side == -1 and math.isfinite(fa):
                fa *= 0.5
            side = -1
    v = b if fb == 0.0 or not math.isfinite(fa) or abs(fb) <= abs(fa) else a
    F, w, u = unspec_residual(code, cc, alpha, K, v)
    ok = math.isfinite(F) and b - a <= 1e-12 * (abs(a) + abs(b)) + 1e-300 or F == 0.0
    return v, math.log(w), u, ok


@numba.njit(cache=True)
def delta_residual(code, cc, m0, d1, K, dl, t, v, alpha):
    """Stationarity on the branch with R - S = delta fixed: (g_t, g_v, g_delta / ((K-1) delta))
    with g_delta / ((K-1) delta) = 1/(1 - C - delta^2) - alpha (m'(R) - m'(S)) / delta, regular at
    delta = 0 (where it is the stability condition of R = S).  Also returns the ``fes`` tuple."""
    o = fes_at(code, cc, m0, d1, K, dl, t, v)
    R, S, C, u, inside = scaled_point(K, dl, t, v)
    r = np.empty(3)
    r[0] = alpha * o[3] - o[6]
    r[1] = alpha * o[4] - o[7]
    r[2] = 1.0 / (1.0 - C - dl * dl) - alpha * slope1(code, R, S, cc)
    return r, o


@numba.njit(cache=True)
def delta_newton(code, cc, m0, d1, K, dl, z0, maxit):
    """Newton in z = (t, v, alpha) for the stationary point with R - S = delta (Hessian of the
    ``fes`` kernel; the last row by central differences).  Returns (z, converged, iterations)."""
    z = z0.copy()
    last = math.inf
    for it in range(maxit):
        if z[2] <= 0.0 or not scaled_point(K, dl, z[0], z[1])[4]:
            return z, False, it
        r, o = delta_residual(code, cc, m0, d1, K, dl, z[0], z[1], z[2])
        a = z[2]
        J = np.empty((3, 3))
        J[0, 0] = a * o[11] - o[17]
        J[0, 1] = a * o[12] - o[18]
        J[0, 2] = o[3]
        J[1, 0] = J[0, 1]
        J[1, 1] = a * o[13] - o[19]
        J[1, 2] = o[4]
        ht = 1e-6 * (1.0 + abs(z[0]))
        hv = 1e-6 * (abs(z[1]) + math.exp(z[0]))
        for j, h in ((0, ht), (1, hv)):
            zp = z.copy()
            zm = z.copy()
            zp[j] += h
            zm[j] -= h
            if not (scaled_point(K, dl, zp[0], zp[1])[4] and scaled_point(K, dl, zm[0], zm[1])[4]):
                return z, False, it
            rp = delta_residual(code, cc, m0, d1, K, dl, zp[0], zp[1], a)[0]
            rm = delta_residual(code, cc, m0, d1, K, dl, zm[0], zm[1], a)[0]
            J[2, j] = (rp[2] - rm[2]) / (2.0 * h)
        R, S, C, u, inside = scaled_point(K, dl, z[0], z[1])
        J[2, 2] = -slope1(code, R, S, cc)
        if not np.all(np.isfinite(J)) or not np.all(np.isfinite(r)):
            return z, False, it
        dz, ok = solve_small(J, -r)
        if not ok:
            return z, False, it
        step = max(abs(dz[0]) / (1.0 + abs(z[0])), abs(dz[1]) / (abs(z[1]) + math.exp(z[0])),
                   abs(dz[2]) / abs(z[2]))
        # converged: the step is at rounding level, or it stopped shrinking at the noise floor
        if step <= 1e-14 or (step <= 1e-10 and step >= 0.25 * last):
            return z + dz, True, it + 1
        last = step
        lam = 1.0
        for bt in range(60):
            zn = z + lam * dz
            if zn[2] > 0.0 and scaled_point(K, dl, zn[0], zn[1])[4]:
                break
            lam *= 0.5
        z = zn
    return z, False, maxit
