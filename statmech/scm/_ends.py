"""The inputs of the site-symmetric beta f without cancellation, at the ends rho -> +-1 and where the
overlap matrix is nearly singular: m(1) - m(R) from the exact 1 - R, m, m', m'' at R = +-1 -+ e from e
(closed forms, or the faded Chebyshev interpolant of a generic g and its exact fall from the end values),
the two eigenvalues of Q - R R^T and their logarithms, the K = inf kernels' inputs.

Compiled together with the generated kernels, :mod:`statmech.scm._solver` and :mod:`statmech.scm._charts`
(``@kernels(include=...)``); call through the kernel namespace (``_kern.q_top_e(...)``).
"""
import math
import typing

import numba

if typing.TYPE_CHECKING:  # generated kernels and statmech.scm._solver: globals of the compiled module
    from statmech.scm._equations import finf, finf_red  # noqa: F401
    from statmech.scm._solver import _GLW, _GLX, _cheb, moments  # noqa: F401

_END_ZONE = 0.05   # = statmech.scm._activation.END_ZONE


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
def r_moments(code, cc, m1, R):
    """(m(1) - m(R), m'(R), m''(R)) at the float R without cancellation: within 0.1 of +-1 from the exact
    1 -+ R (:func:`moments_top`, :func:`moments_bottom`, :func:`q_top_e`), :func:`moments` elsewhere."""
    if R > 0.9:
        e = 1.0 - R
        mR, dR, d2R = moments_top(code, e, cc)
        return q_top_e(code, cc, m1, e, mR), dR, d2R
    if R < -0.9:
        mR, dR, d2R = moments_bottom(code, 1.0 + R, cc)
        return m1 - mR, dR, d2R
    mR, dR, d2R = moments(code, R, cc)
    return m1 - mR, dR, d2R


@numba.njit(cache=True)
def finf_at(code, cc, m0, m1, d1, alpha, R, sig, gam):
    """The ``finf`` kernel (K = inf, per hidden unit) at (R, sigma, gamma), inputs without cancellation."""
    m0, m1 = ref_moments(code, cc, m0, m1)
    q1R, dR, d2R = r_moments(code, cc, m1, R)
    return finf(alpha, R, sig, gam, d1, (1.0 - R) * (1.0 + R), q1R, dR, d2R)


@numba.njit(cache=True)
def finf_red_at(code, cc, m0, m1, d1, alpha, R):
    """The ``finf_red`` kernel (K = inf on sigma = 1 - R, gamma = 0): (phi, phi', phi'', eps, s)."""
    m0, m1 = ref_moments(code, cc, m0, m1)
    q1R, dR, d2R = r_moments(code, cc, m1, R)
    return finf_red(alpha, R, d1, (1.0 - R) * (1.0 + R), q1R, dR, d2R)
