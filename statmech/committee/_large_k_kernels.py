"""Numba kernel of the sign 1RSB continuum limit (Eq. 1RSB.L, :mod:`.large_k`).

``_log_inner_continuum_nb`` is ln E_g exp(-yh (m + s g)_+^3), g ~ N(0, 1), per entry of ``m``:
log-spaced Gauss--Legendre panels on both sides of the integrand's maximum and a max-shifted
log-sum-exp, in one pass per entry (no (panels x nodes) temporaries; see
``large_k._log_inner_continuum`` for the method).
"""
from __future__ import annotations

import math

import numba
import numpy as np

from ..gaussian import log_H_nb



@numba.njit(cache=True)
def _panel_terms(m, s, yh, ustar, h0, extent, sign, n, gx, lgw, buf, k0):
    """Write ln(w f(ustar + sign x)) into buf[k0:] at the GL panel nodes x in [0, extent]
    (x = h0 (e^tau - 1), ``lgw`` the log GL weights), f the Gaussian-times-e^{-yh u^3}
    integrand (u clipped at 0); returns the new k0."""
    tmax = math.log1p(extent / h0)
    h = (1.0 / n) * tmax
    # ln w = ln(h h0 / 2) + ln gw_i + tau: no exp/log pair per node
    lw0 = math.log(0.5 * h * h0) - math.log(s * math.sqrt(2.0 * math.pi))
    for p in range(n):
        a = (p * (1.0 / n)) * tmax
        for i in range(gx.shape[0]):
            tau = a + 0.5 * h * (gx[i] + 1.0)
            x = h0 * math.expm1(tau)
            u = ustar + sign * x
            if u < 0.0:
                u = 0.0
            buf[k0] = -0.5 * ((u - m) / s) ** 2 - yh * u ** 3 + (lw0 + lgw[i] + tau)
            k0 += 1
    return k0


@numba.njit(cache=True)
def _log_inner_continuum_nb(m, s, yh, n_panels, gx, gw):
    """ln[Phi(-m/s) + int_0^inf N(u; m, s^2) e^{-yh u^3} du] for each entry of m (log space)."""
    out = np.empty(m.shape[0])
    buf = np.empty(2 * n_panels * gx.shape[0])
    lgw = np.log(gw)
    for k in range(m.shape[0]):
        mk = m[k]
        mp = mk if mk > 0.0 else 0.0
        disc = math.sqrt(1.0 + 12.0 * yh * s * s * mp)
        ustar = 2.0 * mp / (1.0 + disc) if mk > 0.0 else 0.0
        sig = 1.0 / math.sqrt(1.0 / (s * s) + 6.0 * yh * ustar)
        h0 = min(sig, yh ** (-1.0 / 3.0)) / 4.0
        nb = _panel_terms(mk, s, yh, ustar, h0, 40.0 * sig, 1.0, n_panels, gx, lgw, buf, 0)
        left = min(ustar, 40.0 * s)
        if left > 0.0:
            nb = _panel_terms(mk, s, yh, ustar, h0, left, -1.0, n_panels, gx, lgw, buf, nb)
        mx = -np.inf
        for i in range(nb):
            if buf[i] > mx:
                mx = buf[i]
        acc = 0.0
        for i in range(nb):
            acc += math.exp(buf[i] - mx)
        body = mx + math.log(acc)
        tail = log_H_nb(mk / s)
        hi, lo = (body, tail) if body > tail else (tail, body)
        out[k] = hi + math.log1p(math.exp(lo - hi))
    return out
