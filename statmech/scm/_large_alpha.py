r"""Large-alpha asymptotics of the specialized minimum of the site-symmetric beta f.

In the chart y = (t1, t2, S) (docs/scm.md, "Large alpha") put a1 = P / alpha, a2 = Q / alpha,
S = sigma / alpha.  Then, exactly in the entropy and to O(1/alpha) in the energy,

    beta f = (K/2) ln alpha + F0(P, Q) + F1(P, Q, sigma) / alpha + ...,
    F0 = A P / 2 + (K-1) B Q / 2 - (1/2) ln P - (K-1)/2 ln Q,   A = m'(1) + (K-1) m'(0),  B = m'(1) - m'(0),

so P = 1/A, Q = 1/B and beta f -> (K/2)(1 + ln alpha) + (1/2) ln A + (K-1)/2 ln B (eps_g -> 1/(2 alpha),
1 - R -> E0 / (2 alpha) with E0 = ((K-1) Q + P) / K).  F0 does not depend on sigma: the leading order is
degenerate along (S, C) -> (S + t, C + 2t), and F1 fixes sigma = [m'(0) E0 / 2 - m''(0) c] / [m'(1) + (K-2) m'(0)
+ m''(0)], c = (P - Q) / K, C -> (2 sigma + c) / alpha.  The first correction depends on the activation's
pair moment at rho = 1 through M_k = d^k m(sin theta) / d theta^k at theta = pi/2 (M_1 = 0, m'(1) = -M_2):

* M_3 != 0 (a kink in g, e.g. ReLU: M_3 = -1/pi): m(1) - m(1 - e) has an e^(3/2) term and
  beta f = ... + K M_3 E0^(3/2) / (6 sqrt(alpha)) + O(1/alpha);
* M_3 = 0 (smooth g: erf, ESP): beta f = ... + F1* / alpha + O(alpha^-2) with
  F1* = K E0^2 (m'(1) - m''(1)) / 8 + K (K-1) m''(0) c^2 / 4
        - K (K-1) [m'(0) E0 / 2 - m''(0) c]^2 / (2 [m'(1) + (K-2) m'(0) + m''(0)]),
  m''(1) = (M_4 + M_2) / 3.

K = inf (per hidden unit, phi(R) of the package docstring): beta f / K -> (1 + ln alpha + ln B) / 2, correction
M_3 B^(-3/2) / (6 sqrt(alpha)) or (B - m''(1)) / (8 B^2 alpha).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..result import Result
from ._activation import activation_info
from ._equations import _kern
from ._free_energy import _check_K


def theta_derivatives(info):
    """(M2, M3, M4): d^k m(sin theta) / d theta^k at theta = pi/2 (closed forms for erf, ReLU, linear;
    the Chebyshev series of a generic g, with ``|M3|`` below 1e-7 ``|M2|`` set to 0: smooth g gives 0 by
    the symmetry of m(sin theta) about pi/2, the series a few 1e-9)."""
    if info.code == 0:
        M2 = -2.0 / (math.pi * math.sqrt(3.0))
        m2one = 0.25 / (math.pi * 0.75 ** 1.5)        # m''(1) = (rho/4) / (pi (1 - rho^2/4)^(3/2))
        return M2, 0.0, 3.0 * m2one - M2              # M4 = m'(1) + 3 m''(1)
    if info.code == 1:
        return -0.5, -1.0 / math.pi, 0.5                  # m(theta) = sin/4 + (cos + theta sin)/(2 pi)
    if info.code == 2:
        return -1.0, 0.0, 1.0
    return tuple(float(x) for x in info.cc[3, :3])


@dataclass(frozen=True, repr=False)
class LargeAlpha(Result):
    """Large-alpha asymptotics of the specialized minimum (see :func:`large_alpha`).

    Attributes
    ----------
    K : float
    activation : str
    free_energy_constant : float
        f_inf in beta f = (K/2) ln alpha + f_inf + correction alpha^-p + ... (K = inf: beta f / K =
        (1/2) ln alpha + f_inf + ...).
    correction : float
        Coefficient of the first correction (closed form for erf, ReLU and linear; for a generic g its
        M4 is the fourth theta-derivative of the Chebyshev interpolant of the pair moment, good to a
        few percent: -1.7758 and -1.8174 for ESP(3) at K = 5 with the newest and the oldest
        supported numpy/scipy).
    correction_power : float
        p = 0.5 (a kink in g, M_3 != 0) or 1.0 (smooth g).
    one_minus_R, S, C : float
        Coefficients r, s, c of 1 - R = r / alpha, S = s / alpha, C = c / alpha (K = inf: S, C are
        sigma = K S -> 1 - R and gamma = K C -> 0; their coefficients are r and 0).
    a1, a2 : float
        Coefficients of the two eigenvalues of Q - R R^T: a1 = P / alpha, a2 = Q / alpha.
    generalization_error : float
        0.5: eps_g = 1 / (2 alpha) + ...
    """
    K: float
    activation: str
    free_energy_constant: float
    correction: float
    correction_power: float
    one_minus_R: float
    S: float
    C: float
    a1: float
    a2: float
    generalization_error: float = 0.5
    converged: bool = True
    residual: float = 0.0
    iterations: int = 0
    ansatz: str = "rs"
    rs_stable: bool | None = None
    error: float = 0.0
    stability: object = None
    headline: ClassVar[str] = "free_energy_constant"

    def free_energy(self, alpha):
        """beta f (beta f / K at K = inf) to the first correction at alpha (vectorized)."""
        alpha = np.asarray(alpha, dtype=float)
        lead = 0.5 * np.log(alpha) * (1.0 if math.isinf(self.K) else self.K)
        return lead + self.free_energy_constant + self.correction * alpha ** (-self.correction_power)

    def overlaps(self, alpha):
        """(1 - R, S, C) to leading order at alpha (vectorized)."""
        alpha = np.asarray(alpha, dtype=float)
        return self.one_minus_R / alpha, self.S / alpha, self.C / alpha


def _coefficients(info, K):
    d1 = float(info.dm0)
    d2 = float(_kern.moments(info.code, 0.0, info.cc)[2])
    M2, M3, M4 = theta_derivatives(info)
    mp1 = -M2
    B = mp1 - d1
    if math.isinf(K):
        Q = 1.0 / B
        if M3 != 0.0:
            corr, power = M3 * B ** -1.5 / 6.0, 0.5
        else:
            corr, power = (B - (M4 + M2) / 3.0) / (8.0 * B * B), 1.0
        return dict(free_energy_constant=0.5 * (1.0 + math.log(B)), correction=corr, correction_power=power,
                    one_minus_R=Q / 2.0, S=Q / 2.0, C=0.0, a1=0.0, a2=Q)
    A = mp1 + (K - 1.0) * d1
    P, Q = 1.0 / A, 1.0 / B
    E0 = ((K - 1.0) * Q + P) / K
    c = (P - Q) / K
    den = mp1 + (K - 2.0) * d1 + d2
    sig = (d1 * E0 / 2.0 - d2 * c) / den
    if M3 != 0.0:
        corr, power = K * M3 * E0 ** 1.5 / 6.0, 0.5
    else:
        m2one = (M4 + M2) / 3.0
        corr = (K * E0 * E0 * (mp1 - m2one) / 8.0 + K * (K - 1.0) * d2 * c * c / 4.0
                - K * (K - 1.0) * (d1 * E0 / 2.0 - d2 * c) ** 2 / (2.0 * den))
        power = 1.0
    f0 = K / 2.0 + 0.5 * math.log(A) + (K - 1.0) / 2.0 * math.log(B)
    return dict(free_energy_constant=f0, correction=corr, correction_power=power, one_minus_R=E0 / 2.0,
                S=sig, C=2.0 * sig + c, a1=P, a2=Q)


def large_alpha(K, activation="erf"):
    r"""Large-alpha asymptotics of the specialized minimum of the site-symmetric beta f (any K > 1 or inf).

    beta f = (K/2)(1 + ln alpha) + (1/2) ln A + (K-1)/2 ln B + correction, A = m'(1) + (K-1) m'(0),
    B = m'(1) - m'(0); eps_g = 1/(2 alpha) + ...; 1 - R, S, C = O(1/alpha) with the coefficients of
    the module docstring (derivation: docs/scm.md, "Large alpha"); the correction is
    K M_3 E0^(3/2) / (6 sqrt(alpha)) for a kinked g (ReLU) and F1* / alpha for a smooth g (erf).
    Returns a :class:`LargeAlpha` (methods ``free_energy(alpha)``, ``overlaps(alpha)``).  Raises
    ValueError for K <= 1, an unknown activation, or m'(1) <= m'(0) (a linear pair moment: no
    specialization) or m'(0) = 0 at K = inf.
    """
    K = _check_K(K)
    info = activation_info(activation)
    if info.code == 3 and info.cc[3, 6] != 1.0:
        raise ValueError(f"activation must be continuous (m'(1) = E[g'^2] finite) for the large-alpha law, "
                         f"got {info.name!r}")
    M2 = theta_derivatives(info)[0]
    if not -M2 - info.dm0 > 1e-12:
        raise ValueError(f"activation must have m'(1) > m'(0) (a nonlinear pair moment) for a specialized "
                         f"state, got {info.name!r}")
    if math.isinf(K) and info.dm0 <= 0:
        raise ValueError("activation must have E[g'(z)] != 0 for K = inf")
    return LargeAlpha(K, info.name, **_coefficients(info, K))
