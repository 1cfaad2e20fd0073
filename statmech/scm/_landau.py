"""Weakly first-order transitions by the Landau reduction at the bifurcation of R = S.

Where the specialized branch leaves R = S (alpha_d) the direction delta = R - S decouples exactly
from the collective variables f = (t, v) of docs/scm.md ("Any K"), so the free energy reduced
to delta (f relaxed) is, at alpha near alpha_d,

    Phi(delta) = Phi_2(alpha) delta^2 / 2 + Phi_3 delta^3 / 6 + Phi_4 delta^4 / 24 + O(delta^5),
    Phi_2 = (K-1) [1/(1 - C) - alpha m''(R)],   Phi_3 = -alpha m'''(R) ((K-1)^3 - (K-1)) / K^2,
    Phi_4 = F_4 - 3 F_ddf^T H_ff^-1 F_ddf,      F_4 = -alpha m''''(R) ((K-1)^4 + K - 1) / K^3
                                                       + 6 (K-1) / (1 - C)^2,

at the R = S point (R = S = u/K), with F_ddf the derivatives of Phi_2 in f and H_ff the Hessian
of beta f in f.  For Phi_3 < 0 < Phi_4 the transition is first order towards R > S, and Landau
theory gives the spinodal and the coexistence at Phi_2 = (3/8) Phi_3^2 / Phi_4 and
Phi_2 = Phi_3^2 / (3 Phi_4), i.e. alpha_d - alpha_s and alpha_d - alpha_c.  The relative error
of these gaps is O(delta_s^2) (delta_s ~ 1/K at large K, ~ K - 2 near K = 2): measured
0.13 / K^2 for ReLU, and below 3e-5 for K - 2 <= 0.04.  The reduction is used where the gaps
are below 1e-5 alpha_d, i.e. exactly where the latent heat is too small for the solvers that
compare free energies in double precision.  m''' and m'''' by central differences of m''; a
|m'''(0)| below 1e-8 (the accuracy of the interpolated m of a generic g, where symmetry makes it
0, e.g. ESP) is set to 0 -- at K ~ 1e6 its rounding would otherwise decide the sign of Phi_3.
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import ConvergenceError
from ._common import Transitions
from ._equations import _kern
from ._scaled import _alpha_d, _instability, _overlaps, _unspec

WEAK_GAP = 1e-5  # (alpha_d - alpha_c) / alpha_d below which the Landau reduction is used


_D3_ZERO = 1e-8  # |m'''(0)| below this is rounding of an interpolated pair moment (ESP: 1e-10)


def _m34(info, x):
    """m''' and m'''' at x by fourth-order central differences of m'' (steps far above its rounding)."""
    h = min(1e-2, (1.0 - abs(x)) / 10)
    f = [_kern.moments(info.code, x + k * h, info.cc)[2] for k in (-2, -1, 0, 1, 2)]
    return (f[0] - 8 * f[1] + 8 * f[3] - f[4]) / (12 * h), (-f[0] + 16 * f[1] - 30 * f[2] + 16 * f[3] - f[4]) / (12 * h * h)


def _landau(info, K):
    """(alpha_s, alpha_c, alpha_d, data) of the Landau reduction at finite K (module docstring)."""
    K = float(K)
    a = _alpha_d(info, K)
    y = _unspec(info, K, a)
    R, S, C, u, inside = _kern.scaled_point(K, *y)
    n = K - 1.0

    m3, m4 = _m34(info, R)
    m30 = _m34(info, 0.0)[0]
    if abs(m30) < _D3_ZERO:  # m'''(0) = 0 to the accuracy of an interpolated m: keep it exactly 0
        m3 -= m30
    phi3 = -a * m3 * (n ** 3 - n) / K ** 2
    w = math.exp(y[1])
    ut, uv = -w / (2 * u), 1 / (2 * u)
    fddf = np.array([-a * n * m3 * ut / K, 1 / (1 - C) ** 2 - a * n * m3 * uv / K])
    o = _kern.fes_at(info.code, info.cc, info.m0, info.dm0, K, *y)
    hff = np.array([[a * o[11] - o[17], a * o[12] - o[18]], [a * o[12] - o[18], a * o[13] - o[19]]])
    phi4 = -a * m4 * (n ** 4 + n) / K ** 3 + 6 * n / (1 - C) ** 2 - 3 * fddf @ np.linalg.solve(hff, fddf)
    da = 1e-6 * a
    dphi2 = -n * (_instability(info, K, a + da) - _instability(info, K, a - da)) / (2 * da) / (1 - C)
    data = {"alpha_d": a, "Phi_3": float(phi3), "Phi_4": float(phi4), "dPhi_2/dalpha": float(dphi2), "R_d": R, "C_d": C}
    if not (phi3 < 0.0 < phi4 and dphi2 < 0.0):
        return None, None, a, data
    data["delta_s"] = float(-1.5 * phi3 / phi4)  # R - S at the spinodal and at coexistence
    data["delta_c"] = float(-2.0 * phi3 / phi4)
    gap_s = 0.375 * phi3 ** 2 / phi4 / -dphi2
    gap_c = phi3 ** 2 / (3 * phi4) / -dphi2
    return float(a - gap_s), float(a - gap_c), a, data


def _weak(info, K):
    """The Landau result if the transition is weakly first order (gap below WEAK_GAP alpha_d and
    small amplitude delta_s), else None."""
    try:
        alpha_s, alpha_c, alpha_d, data = _landau(info, K)
    except (ConvergenceError, np.linalg.LinAlgError):
        return None
    if alpha_s is None or alpha_d - alpha_c > WEAK_GAP * alpha_d or data["delta_s"] > 1e-2:
        return None
    details = {"solver": "Landau reduction (weakly first order)", "landau": data,
               "unspecialized_at_alpha_d": _overlaps(K, _unspec(info, K, alpha_d))}
    return Transitions(float(K), info.name, alpha_s, alpha_c, alpha_d, 1, details)
