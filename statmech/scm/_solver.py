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
    from statmech.scm._equations import fe, fes, finf, finf_red, pm_erf, pm_linear, pm_relu  # noqa: F401

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
def _cheb_end(c, phi, side):
    """sum_k c_k (T_k(x) - T_k(side)) at x = side cos(phi), side = +-1, as -2 sum_k c_k side^k sin^2(k phi/2):
    the difference of the series from its end value without cancellation (relative error ~ eps times the
    condition of the sum, instead of eps sum ``|c_k|`` over a value ~ phi^2)."""
    acc = 0.0
    sg = 1.0
    for k in range(c.shape[0]):
        t = math.sin(0.5 * k * phi)
        acc += sg * c[k] * t * t
        sg *= side
    return -2.0 * acc


@numba.njit(cache=True)
def _cheb_top_drop(c, phi, slope, side=1.0):
    """sum_k c_k (1 - T_k(x)) at x = cos(phi) (the fall of the series from x = 1), arranged so that the
    O(phi^2) part -- proportional to the end slope sum_k k^2 c_k, which vanishes for the end-constrained
    interpolant -- is separated exactly: 1 - T_k = 2 sin^2(k phi/2) = 2 s^2 U_(k-1)(c)^2 with s = sin(phi/2),
    c = cos(phi/2), U_(k-1)(c) = k - V_(k-1), and V_k = (k+1) - U_k(c) >= 0 from the recurrence
    V_k = 2 V_(k-1) - V_(k-2) + 2 d (k - V_(k-1)), d = 1 - c = 2 sin^2(phi/4) (no cancellation), so
    sum = 2 s^2 [sum k^2 c_k - 2 sum k c_k V_(k-1) + sum c_k V_(k-1)^2].  ``slope`` = sum k^2 c_k, summed
    exactly once (``_activation``; in floating point its rounding would dominate as phi -> 0).  ``side`` = -1:
    the same for the bottom end, sum_k c_k ((-1)^k - T_k(-cos phi)) (slope = sum k^2 (-1)^k c_k)."""
    s = math.sin(0.5 * phi)
    d = 2.0 * math.sin(0.25 * phi) ** 2
    a0 = slope
    a1 = 0.0
    a2 = 0.0
    vm2 = 0.0   # V_(k-2)
    vm1 = 0.0   # V_(k-1); V_0 = V_(-1) = 0
    sg = side
    for k in range(1, c.shape[0]):
        # here vm1 = V_(k-1); at the bottom end (side = -1) the series in -x: c_k (-1)^k
        ck = sg * c[k]
        sg *= side
        a1 += k * ck * vm1
        a2 += ck * vm1 * vm1
        v = 2.0 * vm1 - vm2 + 2.0 * d * (k - vm1)      # V_k
        vm2 = vm1
        vm1 = v
    return 2.0 * s * s * (a0 - 2.0 * a1 + a2)


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


_END_ZONE = 0.05   # = statmech.scm._activation.END_ZONE


@numba.njit(cache=True)
def _fade(t):
    """(W, W', W'') of the end-zone fade W(t) = t - 3t^2 + 3t^3 - t^4 on [0, 1), zero beyond
    (``statmech.scm._activation._end_slopes``)."""
    if t >= 1.0:
        return 0.0, 0.0, 0.0
    return t - 3.0 * t * t + 3.0 * t ** 3 - t ** 4, (1.0 - t) ** 2 * (1.0 - 4.0 * t), -6.0 + 18.0 * t - 12.0 * t * t


@numba.njit(cache=True)
def _end_slope_theta(cc, p, phi, side):
    """dm/dtheta of the faded interpolant at theta = side (pi/2 - p): the series' fall from its end slope
    (:func:`_cheb_end`, no cancellation) plus the end slope v times (1 - W'(p / zone)), which vanishes at the
    end for a continuous g (v = 0 stored for a discontinuous one: its own end slope is kept)."""
    fall = _cheb_end(cc[1], phi, side) / (0.5 * math.pi)
    if cc[3, 6] != 1.0:
        return _cheb(cc[1], side) / (0.5 * math.pi) + fall
    v = cc[3, 9] if side > 0.0 else cc[3, 10]
    t = p / _END_ZONE
    one_minus_w = 1.0 if t >= 1.0 else t * (6.0 - 9.0 * t + 4.0 * t * t)    # 1 - W'(t), no cancellation
    return fall + v * one_minus_w


@numba.njit(cache=True)
def cheb_end_moments(cc, e, side):
    """(m, m', m'') of the faded Chebyshev interpolant at rho = side (1 - e), side = +-1, with theta =
    side (pi/2 - p), p = arccos(1 - e) = 2 arcsin(sqrt(e/2)) from the exact e: m' = dm/dtheta / sin p and
    m'' = (m_tt sin p -+ m_t cos p) / sin^3 p, a difference that cancels to O(p^2) relative; within
    p < 1e-3 the Taylor form m'' = -+M3 / (2p) + (M4 + M2) / 3 (row 3 of cc: the theta-derivatives at the
    end) instead, for a continuous g (dm/dtheta = 0 at the end; flag cc[3, 6])."""
    p = 2.0 * math.asin(math.sqrt(0.5 * e))
    phi = 2.0 * math.asin(math.sqrt(p / math.pi))      # x = side (1 - p / (pi/2)) = side cos(phi)
    sp_ = math.sin(p)
    W, W1, W2 = _fade(p / _END_ZONE)
    v = cc[3, 9] if side > 0.0 else cc[3, 10]
    m = _cheb(cc[0], side) + _cheb_end(cc[0], phi, side) + side * v * _END_ZONE * W
    mt = _end_slope_theta(cc, p, phi, side)                                         # dm/dtheta
    mtt = (_cheb(cc[2], side) + _cheb_end(cc[2], phi, side)) / (0.25 * math.pi * math.pi) + side * v * W2 / _END_ZONE
    # rho = sin theta, d rho = cos theta d theta, cos theta = sin p, sin theta = side cos p
    m1 = mt / sp_
    if p < 1e-3 and cc[3, 6] == 1.0:
        o = 0 if side > 0.0 else 3
        m2 = -side * cc[3, o + 1] / (2.0 * p) + (cc[3, o + 2] + cc[3, o]) / 3.0
    else:
        m2 = (mtt * sp_ + mt * side * math.cos(p)) / (sp_ * sp_ * sp_)
    return m, m1, m2


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
def ref_moments(code, cc, m0, m1):
    """(m(0), m(1)) consistent with :func:`moments`: for the Chebyshev interpolant (code 3) its own
    values, so that eps_g vanishes exactly at R = 1, S = C = 0 and the Taylor remainders are continuous."""
    if code == 3:
        return _cheb(cc[0], 0.0), _cheb(cc[0], 1.0)
    return m0, m1


@numba.njit(cache=True)
def top_slope(code, p, cc):
    """dm/dtheta at rho = sin(theta), theta = pi/2 - p, evaluated in p (accurate for small p)."""
    if code == 0:
        c = math.cos(p)
        return math.sin(p) / (math.pi * math.sqrt(1.0 - 0.25 * c * c))
    elif code == 1:
        return math.sin(p) * (0.5 - p / (2.0 * math.pi))
    elif code == 2:
        return math.sin(p)
    phi = 2.0 * math.asin(math.sqrt(p / math.pi))      # 1 - p / (pi/2) = cos(phi)
    return _end_slope_theta(cc, p, phi, 1.0)


@numba.njit(cache=True)
def q_top_e(code, cc, m1, e, mR):
    """Q1(R) = m(1) - m(R) at R = 1 - e without cancellation: for e < 0.1 the integral of dm/dtheta
    over [arcsin R, pi/2], an interval of length p = arccos R = 2 arcsin(sqrt(e/2)), by 10-point
    Gauss-Legendre (dm/dtheta is analytic there: error < 1e-20 for erf, ReLU, linear), or for the
    Chebyshev interpolant its exact difference from the end value (:func:`_cheb_end`); m1 - mR
    (mR = m(R)) otherwise."""
    if e >= 0.1:
        return m1 - mR
    if e <= 0.0:
        return 0.0
    p = 2.0 * math.asin(math.sqrt(0.5 * e))
    if code == 3:    # the interpolant's own m(1) - m(x), x = 1 - p / (pi/2) = cos(phi), without cancellation
        drop = _cheb_top_drop(cc[0], 2.0 * math.asin(math.sqrt(p / math.pi)), cc[3, 7])
        return drop - cc[3, 9] * _END_ZONE * _fade(p / _END_ZONE)[0]
    acc = 0.0
    for k in range(_GLX.shape[0]):
        acc += _GLW[k] * top_slope(code, p * _GLX[k], cc)
    return acc * p


@numba.njit(cache=True)
def q_top(code, cc, m1, R, mR):
    """:func:`q_top_e` at the float R (1 - R is exact for R >= 1/2)."""
    return q_top_e(code, cc, m1, 1.0 - R, mR)


@numba.njit(cache=True)
def moments_top(code, e, cc):
    """(m, m', m'') at R = 1 - e, with m' and m'' from the exact e for e < 0.1 (ReLU and the
    Chebyshev interpolant through p = arccos R = 2 arcsin(sqrt(e/2)); erf and linear are smooth at 1).
    m is returned for completeness only (use :func:`q_top_e` for m(1) - m(R))."""
    R = 1.0 - e
    if e >= 0.1 or code == 0 or code == 2:
        return moments(code, R, cc)
    if code == 3:
        return cheb_end_moments(cc, e, 1.0)
    p = 2.0 * math.asin(math.sqrt(0.5 * e))
    sp_ = math.sin(p)
    m = R / 4.0 + (sp_ + R * (0.5 * math.pi - p)) / (2.0 * math.pi)
    return m, 0.5 - p / (2.0 * math.pi), 1.0 / (2.0 * math.pi * sp_)


@numba.njit(cache=True)
def moments_bottom(code, e, cc):
    """(m, m', m'') at R = -1 + e, e < 0.1, from the exact e: erf by oddness from the top end (m = -(m(1) -
    Q1(e))), ReLU from m = rho/4 + (even part) (m = m(1) - Q1(e) - (1 - e)/2, m' = p/(2 pi), m'' =
    1/(2 pi sin p)), the Chebyshev interpolant from its bottom value and its exact fall there; e >= 0.1:
    :func:`moments`."""
    R = -1.0 + e
    if e >= 0.1 or code == 2:
        return moments(code, R, cc)
    p = 2.0 * math.asin(math.sqrt(0.5 * e))
    if code == 0:
        m1 = 2.0 / math.pi * math.asin(0.5)
        mt, d1, d2 = moments_top(0, e, cc)
        return -(m1 - q_top_e(0, cc, m1, e, 0.0)), d1, -d2
    if code == 1:
        sp_ = math.sin(p)
        return 0.5 - q_top_e(1, cc, 0.5, e, 0.0) - 0.5 * (1.0 - e), p / (2.0 * math.pi), 1.0 / (2.0 * math.pi * sp_)
    m, d1, d2 = cheb_end_moments(cc, e, -1.0)
    phi = 2.0 * math.asin(math.sqrt(p / math.pi))
    m = (_cheb(cc[0], -1.0) - _cheb_top_drop(cc[0], phi, cc[3, 8], -1.0)
         - cc[3, 10] * _END_ZONE * _fade(p / _END_ZONE)[0])
    return m, d1, d2


@numba.njit(cache=True)
def eigen_gaps(K, R, S, C):
    """(a1, a2): the eigenvalues a1 = 1 + (K-1) C - u^2 (u = R + (K-1) S) and a2 = 1 - C - (R - S)^2
    of the site-symmetric Q - R R^T, from 1 - |u| and 1 - |R - S| built on the exact 1 -+ R, so that
    they keep their digits where they are small (R -> 1 at large alpha, u -> 1 at large K)."""
    n = K - 1.0
    u = R + n * S
    if u >= 0.0:
        omu = (1.0 - R) - n * S
    else:
        omu = (1.0 + R) + n * S
    d = R - S
    if d >= 0.0:
        omd = (1.0 - R) + S
    else:
        omd = (1.0 + R) - S
    return omu * (2.0 - omu) + n * C, omd * (2.0 - omd) - C


@numba.njit(cache=True)
def fgh(code, cc, m0, m1, alpha, K, R, S, C):
    """The ``fe`` kernel at (R, S, C): (beta f, gradient (3), Hessian upper triangle (6), eps_g, s)
    with its inputs computed without cancellation (q_top, taylor_moments, eigen_gaps)."""
    m0, m1 = ref_moments(code, cc, m0, m1)
    d1 = moments(code, 0.0, cc)[1]
    mR, dR, d2R = moments(code, R, cc)
    q1R = q_top(code, cc, m1, R, mR)
    qS = taylor_moments(code, S, cc, m0, d1)
    qC = taylor_moments(code, C, cc, m0, d1)
    a1, a2 = eigen_gaps(K, R, S, C)
    la1, la2 = log_gaps(K, R, S, C, a1, a2)
    return fe(alpha, K, R, S, C, d1, a1, a2, la1, la2, q1R, dR, d2R, qS[0], qS[1], qS[2], qC[0], qC[1], qC[2])


@numba.njit(cache=True)
def log_gaps(K, R, S, C, a1, a2):
    """(ln a1, ln a2): log1p of a - 1 = (K-1) C - u^2, -C - (R - S)^2 (no cancellation) where a is near 1,
    log(a) elsewhere (a from :func:`eigen_gaps`)."""
    n = K - 1.0
    if abs(a1 - 1.0) < 0.5:
        u = R + n * S
        la1 = math.log1p(n * C - u * u)
    else:
        la1 = math.log(a1)
    if abs(a2 - 1.0) < 0.5:
        d = R - S
        la2 = math.log1p(-C - d * d)
    else:
        la2 = math.log(a2)
    return la1, la2


@numba.njit(cache=True)
def finf_at(code, cc, m0, m1, d1, alpha, R, sig, gam):
    """The ``finf`` kernel (K = inf, per hidden unit) at (R, sigma, gamma), inputs without cancellation."""
    m0, m1 = ref_moments(code, cc, m0, m1)
    mR, dR, d2R = moments(code, R, cc)
    return finf(alpha, R, sig, gam, d1, (1.0 - R) * (1.0 + R), q_top(code, cc, m1, R, mR), dR, d2R)


@numba.njit(cache=True)
def finf_red_at(code, cc, m0, m1, d1, alpha, R):
    """The ``finf_red`` kernel (K = inf on sigma = 1 - R, gamma = 0): (phi, phi', phi'', eps, s)."""
    m0, m1 = ref_moments(code, cc, m0, m1)
    mR, dR, d2R = moments(code, R, cc)
    return finf_red(alpha, R, d1, (1.0 - R) * (1.0 + R), q_top(code, cc, m1, R, mR), dR, d2R)


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
