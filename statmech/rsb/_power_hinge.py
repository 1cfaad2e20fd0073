r"""numba: the frozen power-hinge level of the Parisi recursion (no closed form for p != 2).

On the lattice ``h = h0 + j d`` (j = 0 .. n-1), with ``a = kappa - h``, ``s2 = sigma^2`` and
``u = a - sigma z ~ N(a, s2)``::

    F(h) = (1/y) log E_z exp(-y (u)_+^p) = (1/y) log[ H(a/sigma) + J ],
    J    = int_0^inf N(u; a, s2) exp(-y u^p) du                                 (y > 0)
    F(h) = -E_z (u)_+^p = -int_0^inf N(u; a, s2) u^p du                         (y = 0)

and the derivatives dF/ds2 and dF/dy.  ``H(a/sigma) = P(u < 0)`` is the part where the
constraint is satisfied.  The integrals are done in log space around the maximum ``u*`` of
the log-integrand ``l(u)``, which is concave on ``u > 0`` for p >= 2 (``l = -(u-a)^2/(2 s2)
- y u^p``, or ``+ p log u`` for y = 0), with ``l'' <= -1/s2`` everywhere:

* ``u*``: the root of ``l' = 0`` on (0, a) by Newton iterations that converge monotonically
  from the right (``a - u - s2 p y u^(p-1)`` is concave and decreasing), or the end point
  ``u* = 0`` when ``l'(0) = a/s2 <= 0``; for y = 0, ``u* = (a + sqrt(a^2 + 4 p s2))/2``;
* each side of ``u*`` (``[0, u*]`` and ``[u*, inf)``) is integrated in the distance ``r`` from
  ``u*`` with Gauss--Legendre panels on ``r = c (e^tau - 1)``, ``c`` a quarter of the local
  width ``1/sqrt(-l''(u*))`` (or of ``1/|l'(u*)|`` at the end point), out to the distance
  where the concavity bound ``l(u* + r) - l(u*) <= l'(u*) r - r^2/(2 s2)`` has dropped by
  ``TAIL = 45`` (e^-45 = 3e-20 of the peak: below rounding, not a cut-off of anything that
  counts);
* the derivatives use the same nodes: ``d log J/d s2 = E_J[(u-a)^2/(2 s2^2)] - 1/(2 s2)``,
  ``d log J/dy = -E_J[u^p]``, ``d log H(a/sigma)/d s2 = (G/H)(a/sigma) a/(2 sigma^3)``; the
  two parts are combined by log-sum-exp and softmax weights.

The rule is smooth in the parameters (nodes move continuously with ``u*``), so finite
differences of the returned gradient are meaningful.  Accuracy: ~1e-15 relative against
mpmath for p = 2, 3 (``tests/test_committee_inf_rsb.py``); p = 2 equals the closed-form
soft hinge of :mod:`statmech.rsb.channels` (with y -> y/2, F -> 2F) to rounding.
"""
import math

import numba
import numpy as np

from statmech.gaussian import inv_mills_nb, log_H_nb

TAIL = 45.0           # log-integrand drop at which each side is ended (e^-45 = 3e-20)
PANEL = 0.5           # panel width in tau = log(1 + r/c)
_LOG_SQRT2PI = 0.5 * math.log(2.0 * math.pi)


@numba.njit(cache=True, fastmath=False)
def _peak(a, s2, y, p):
    """Maximum u* >= 0 of the log-integrand and the slope l'(u*) (0 unless u* = 0)."""
    if y == 0.0:  # root of u^2 - a u - p s2, written without cancellation
        r = math.sqrt(a * a + 4.0 * p * s2)
        return (0.5 * (a + r) if a >= 0.0 else 2.0 * p * s2 / (r - a)), 0.0
    if a <= 0.0:
        return 0.0, a / s2
    # g(u) = a - u - s2 p y u^(p-1): concave, decreasing; start right of the root
    u = min(a, (a / (s2 * p * y)) ** (1.0 / (p - 1.0)))
    for _ in range(200):
        g = a - u - s2 * p * y * u ** (p - 1.0)
        dg = -1.0 - s2 * p * (p - 1.0) * y * u ** (p - 2.0)
        du = g / dg
        u -= du
        if abs(du) <= 1e-15 * u:
            break
    return u, 0.0


@numba.njit(cache=True, fastmath=False)
def _pow(u, p):
    """u^p, with the integer powers of the package's channels multiplied out."""
    if p == 3.0:
        return u * u * u
    if p == 2.0:
        return u * u
    return u ** p


@numba.njit(cache=True, fastmath=False)
def _logf(u, a, s2, y, p):
    """log-integrand without the Gaussian normalization."""
    if y == 0.0:
        return -0.5 * (u - a) ** 2 / s2 + p * math.log(u)
    return -0.5 * (u - a) ** 2 / s2 - y * _pow(u, p)


@numba.njit(cache=True, fastmath=False)
def _side(sign, ustar, extent, c, a, s2, y, p, gx, gw, lpk, acc):
    """Add sum of w e^(l - lpk) (and its moments) over u = ustar + sign r, r in [0, extent]
    (log-spaced Gauss--Legendre panels r = c (e^tau - 1)) to acc = [S0, S_(u-a)^2, S_u^p]."""
    tmax = math.log1p(extent / c)
    npan = max(1, int(math.ceil(tmax / PANEL)))
    ht = tmax / npan
    for k in range(npan):
        t0 = k * ht
        for i in range(gx.shape[0]):
            tau = t0 + 0.5 * ht * (gx[i] + 1.0)
            et = math.exp(tau)
            r = c * (et - 1.0)
            u = ustar + sign * r
            if u <= 0.0:
                continue
            w = 0.5 * ht * gw[i] * c * et * math.exp(_logf(u, a, s2, y, p) - lpk)
            acc[0] += w
            acc[1] += w * (u - a) ** 2
            acc[2] += w * _pow(u, p)


@numba.njit(cache=True, fastmath=False)
def _log_j(a, s2, y, p, gx, gw):
    """log J (y > 0) or log E[u_+^p] (y = 0) and the two moment ratios E_J[(u-a)^2], E_J[u^p]."""
    ustar, slope = _peak(a, s2, y, p)
    lpk = _logf(ustar, a, s2, y, p) if ustar > 0.0 else -0.5 * a * a / s2
    curv = 1.0 / s2
    if y == 0.0:
        curv += p / (ustar * ustar)
    elif ustar > 0.0:
        curv += p * (p - 1.0) * y * ustar ** (p - 2.0)
    width = 1.0 / math.sqrt(curv)
    beta = -slope  # >= 0
    if beta > 0.0:
        width = min(width, 1.0 / beta)
    c = 0.25 * width
    acc = np.zeros(3)
    # right side: l(u* + r) - l(u*) <= -beta r - r^2/(2 s2)
    ext = s2 * (-beta + math.sqrt(beta * beta + 2.0 * TAIL / s2))
    _side(1.0, ustar, ext, c, a, s2, y, p, gx, gw, lpk, acc)
    if ustar > 0.0:
        _side(-1.0, ustar, min(ustar, math.sqrt(2.0 * TAIL * s2)), c, a, s2, y, p, gx, gw, lpk, acc)
    logj = lpk + math.log(acc[0]) - _LOG_SQRT2PI - 0.5 * math.log(s2)
    return logj, acc[1] / acc[0], acc[2] / acc[0]


@numba.njit(cache=True, fastmath=False)
def power_hinge_frozen_grid(h0, d, n, s2, y, kappa, p, gx, gw):
    """F(h) = (1/y) log E_z exp(-y (kappa - h - sqrt(s2) z)_+^p), dF/ds2, dF/dy on the lattice
    (y = 0: F = -E_z (kappa - h - sqrt(s2) z)_+^p, dF/dy = 0); see the module docstring."""
    F = np.empty(n)
    Fs = np.empty(n)
    Fy = np.empty(n)
    sig = math.sqrt(s2)
    for j in range(n):
        a = kappa - (h0 + j * d)
        logj, m2, mp = _log_j(a, s2, y, p, gx, gw)
        dlj = 0.5 * m2 / (s2 * s2) - 0.5 / s2
        if y == 0.0:
            ej = math.exp(logj)
            F[j] = -ej
            Fs[j] = -ej * dlj
            Fy[j] = 0.0
            continue
        lh = log_H_nb(a / sig)
        dlh = inv_mills_nb(a / sig) * a / (2.0 * s2 * sig)
        if lh >= logj:
            e = math.exp(logj - lh)
            L = lh + math.log1p(e)
            pj = e / (1.0 + e)
        else:
            e = math.exp(lh - logj)
            L = logj + math.log1p(e)
            pj = 1.0 / (1.0 + e)
        F[j] = L / y
        Fs[j] = ((1.0 - pj) * dlh + pj * dlj) / y
        Fy[j] = -pj * mp / y - F[j] / y
    return F, Fs, Fy
