"""Generalization error and entropy for general overlaps, and the site-symmetric free energy."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..errors import check_range
from ..result import Result, check_real
from ._activation import _pm2, activation_info
from ._equations import _kern


def _check_overlaps(R, Q, T):
    R = np.atleast_2d(np.asarray(R, dtype=float))
    Q = np.atleast_2d(np.asarray(Q, dtype=float))
    T = np.atleast_2d(np.asarray(T, dtype=float))
    K, M = R.shape
    if Q.shape != (K, K):
        raise ValueError(f"Q must be a {K}x{K} matrix (student-student overlaps), got shape {Q.shape}")
    if T.shape != (M, M):
        raise ValueError(f"T must be a {M}x{M} matrix (teacher-teacher overlaps), got shape {T.shape}")
    for name, A in (("R", R), ("Q", Q), ("T", T)):
        if not np.all(np.isfinite(A)):
            raise ValueError(f"{name} must be finite")
    if not np.allclose(Q, Q.T, rtol=0, atol=1e-14):
        raise ValueError("Q must be symmetric")
    if not np.allclose(T, T.T, rtol=0, atol=1e-14):
        raise ValueError("T must be symmetric")
    return R, Q, T


def generalization_error(R, Q, T, activation="erf"):
    r"""Generalization error of a K-unit student SCM learning an M-unit teacher SCM.

    ``R`` (K x M) student-teacher, ``Q`` (K x K) student-student and ``T`` (M x M)
    teacher-teacher overlaps (any norms; K != M allowed).  Implements Oostwal et al. (2019) Eq. 25 with the
    correct normalization of the outputs :math:`K^{-1/2}\sum g`, :math:`M^{-1/2}\sum g^*`:

    .. math:: \epsilon_g = \tfrac12\Big[\tfrac1K\sum_{ij}\langle g(x_i)g(x_j)\rangle
              - \tfrac{2}{\sqrt{KM}}\sum_{in}\langle g(x_i)g(x^*_n)\rangle
              + \tfrac1M\sum_{nm}\langle g(x^*_n)g(x^*_m)\rangle\Big]

    (for K = M this is Oostwal et al. (2019) Eq. 25).  Pair moments in closed form for "erf"
    (g = erf(x/sqrt2); g = 1 + erf(x/sqrt2) gives the same for K = M, and adds
    (sqrt K - sqrt M)^2/2 otherwise), "relu", "linear" (Oostwal et al. 2019, Eqs. 26-27), by 2-D
    piecewise tanh-sinh quadrature (breakpoints where the arguments of g vanish; ~1e-13 for
    smooth g and kinks at 0) for a callable g.

    Domain: R a K x M, Q a K x K and T an M x M real matrix, finite, Q and T symmetric with non-negative
    diagonals; for the closed forms ``|overlap|`` <= product of the norms (ValueError naming the argument).
    """
    info = activation_info(activation)
    R, Q, T = _check_overlaps(R, Q, T)
    K, M = R.shape
    dq = np.diag(Q)
    dt = np.diag(T)
    if np.any(dq < 0) or np.any(dt < 0):
        raise ValueError("Q and T must have non-negative diagonals (squared norms)")
    if info.code == 1:
        if np.any(Q ** 2 > np.outer(dq, dq) * (1 + 1e-12)) or np.any(R ** 2 > np.outer(dq, dt) * (1 + 1e-12)) \
                or np.any(T ** 2 > np.outer(dt, dt) * (1 + 1e-12)):
            raise ValueError("R, Q, T must satisfy the Cauchy-Schwarz bound |overlap| <= product of norms")
    ss = _pm2(info, dq[:, None], dq[None, :], np.clip(Q, -np.sqrt(np.outer(dq, dq)), np.sqrt(np.outer(dq, dq))))
    st = _pm2(info, dq[:, None], dt[None, :], np.clip(R, -np.sqrt(np.outer(dq, dt)), np.sqrt(np.outer(dq, dt))))
    tt = _pm2(info, dt[:, None], dt[None, :], np.clip(T, -np.sqrt(np.outer(dt, dt)), np.sqrt(np.outer(dt, dt))))
    return float(0.5 * (ss.sum() / K - 2.0 * st.sum() / math.sqrt(K * M) + tt.sum() / M))


def entropy(R, Q, T=None):
    r"""Entropy s = (1/2) ln det C of the (K+M) x (K+M) overlap matrix C = [[T, R^T], [R, Q]].

    Oostwal et al. (2019) Eqs. 18 and 24 (without the additive constant).  ``T`` defaults to the identity
    (orthonormal teacher).  Raises ValueError naming the argument when C is not
    positive definite (overlaps outside the domain).  Domain: R (K x M), Q (K x K), T (M x M) finite real,
    Q and T symmetric and positive definite, [[T, R^T], [R, Q]] positive definite.
    """
    R = np.atleast_2d(np.asarray(R, dtype=float))
    K, M = R.shape
    T = np.eye(M) if T is None else T
    R, Q, T = _check_overlaps(R, Q, T)
    try:
        np.linalg.cholesky(T)
    except np.linalg.LinAlgError:
        raise ValueError("T must be positive definite (teacher overlaps)") from None
    try:
        np.linalg.cholesky(Q)
    except np.linalg.LinAlgError:
        raise ValueError("Q must be positive definite (student overlaps outside the domain)") from None
    Cm = np.block([[T, R.T], [R, Q]])
    sign, logdet = np.linalg.slogdet(Cm)
    if sign <= 0 or not np.isfinite(logdet):
        raise ValueError("R must keep the overlap matrix [[T, R^T], [R, Q]] positive definite "
                         "(student-teacher overlaps outside the domain)")
    return 0.5 * float(logdet)


#: largest alpha of the solvers (beyond, alpha K eps_g and the charts' exponentials leave double precision)
ALPHA_MAX = 1e100
#: largest finite K of the solvers (the collective overlaps u = R + (K-1) S keep their digits up to here)
K_MAX = 1e15


def _check_K(K, allow_inf=True):
    check_real("K", K)
    if np.ndim(K) != 0:
        raise ValueError(f"K must be a real number > 1{' or math.inf' if allow_inf else ''}, got {K!r}")
    K = float(K)
    if math.isnan(K) or K <= 1.0 or (math.isinf(K) and not allow_inf):
        raise ValueError(f"K must be a real number > 1{' or math.inf' if allow_inf else ''}, got {K!r}")
    return K


def _check_alpha(alpha):
    check_real("alpha", alpha)
    return float(check_range("alpha", alpha, 0.0, ALPHA_MAX))


@dataclass(frozen=True, repr=False)
class FreeEnergy(Result):
    """Value, gradient and Hessian of the site-symmetric beta f at one point.

    ``value`` = beta f (finite K) or beta f / K (K = inf, variables R, sigma = K S,
    gamma = K C); ``gradient`` (3,) and ``hessian`` (3, 3) in (R, S, C);
    ``generalization_error`` and ``entropy`` the two terms.

    A closed form evaluated at a given point, not a solve: ``converged`` True, ``residual`` 0.0,
    ``iterations`` 0, ``ansatz`` "rs" (the site-symmetric replica-symmetric high-temperature theory),
    ``rs_stable`` None and ``stability`` None (not a stationary point in general: see
    :func:`statmech.scm.equilibria` for the stability of the minima), ``error`` 0.0 (relative rounding
    ~1e-16 of the sum of the moduli of the terms, see :func:`free_energy`).
    """
    value: float
    gradient: np.ndarray
    hessian: np.ndarray
    generalization_error: float
    entropy: float
    converged: bool = True
    residual: float = 0.0
    iterations: int = 0
    ansatz: str = "rs"
    rs_stable: object = None
    error: float = 0.0
    stability: object = None
    headline: ClassVar[str] = "value"


def _fe_eval(info, alpha, K, R, S, C):
    if math.isinf(K):
        o = _kern.finf_at(info.code, info.cc, info.m0, info.m1, info.dm0, alpha, R, S, C)
    else:
        o = _kern.fgh(info.code, info.cc, info.m0, info.m1, alpha, K, R, S, C)
    g = np.array(o[1:4])
    Hm = np.array([[o[4], o[5], o[6]], [o[5], o[7], o[8]], [o[6], o[8], o[9]]])
    return FreeEnergy(float(o[0]), g, Hm, float(o[10]), float(o[11]))


def free_energy(alpha, K, R, S, C, activation="erf", derivatives=False):
    r"""Site-symmetric high-temperature free energy :math:`\beta f = \alpha K \epsilon_g - s`.

    Oostwal et al. (2019) Eq. 20 with s from Oostwal et al. (2019) Eq. 19 (exactly as written, no additive constant) and
    :math:`\epsilon_g = m(1) - m(R) + \frac{K-1}{2}[m(C)+m(0)-2m(S)]` (Oostwal et al. 2019, Eq. 11 corrected:
    no overall 1/K; Oostwal et al. (2019) Eq. 12 for ReLU).  K is any real > 1, or ``math.inf``: then the
    value is :math:`\lim \beta f/K = \alpha[m(1)-m(R)+\tfrac12 m'(0)(\gamma-2\sigma)]-\tfrac12\ln(1-R^2)`
    with S and C read as the scaled :math:`\sigma = KS`, :math:`\gamma = KC`
    (domain :math:`(R+\sigma)^2 \le 1+\gamma`).

    Domain: 0 <= alpha <= 1e100; K any real > 1 or ``math.inf``; R, S, C in (-1, 1) with the overlap
    matrix positive definite (a1 = 1 + (K-1) C - (R + (K-1) S)^2 > 0 and a2 = 1 - C - (R - S)^2 > 0; at
    K = inf ``(R + sigma)^2 <= 1 + gamma``); any activation of :func:`activation_info`.  ValueError naming
    the argument outside it, TypeError for a string or None.

    Evaluated without cancellation at the given floats (docs/scm.md, "Numerical method"): m(1) - m(R)
    from the exact 1 - R, the Taylor remainders of m at S and C, a1 and a2 from 1 - ``|u|`` and
    1 - ``|R - S|``: relative error ~1e-16 of the sum of the moduli of the terms (checked against 50-digit
    mpmath up to alpha = 1e8, K = 1e7).

    Returns the float value, or with ``derivatives=True`` a :class:`FreeEnergy` with the
    exact gradient and Hessian (sympy.diff of the same expression).
    """
    alpha = _check_alpha(alpha)
    K = _check_K(K)
    for name, v in (("R", R), ("S", S), ("C", C)):
        check_real(name, v)
    R = float(check_range("R", R, -1.0, 1.0, lo_open=True, hi_open=True))
    if math.isinf(K):
        S = float(check_range("S", S))
        C = float(check_range("C", C))
        if (R + S) ** 2 > 1 + C:
            raise ValueError(f"S, C (scaled sigma = K S, gamma = K C at K = inf) must satisfy (R + S)^2 <= 1 + C, "
                             f"got R={R}, S={S}, C={C}")
    else:
        S = float(check_range("S", S, -1.0, 1.0, lo_open=True, hi_open=True))
        C = float(check_range("C", C, -1.0, 1.0, lo_open=True, hi_open=True))
        a1, a2 = _kern.eigen_gaps(K, R, S, C)
        if not a1 > 0:
            raise ValueError(f"S must satisfy (R + (K-1) S)^2 < 1 + (K-1) C (overlap matrix positive definite), "
                             f"got R={R}, S={S}, C={C}, K={K}")
        if not a2 > 0:
            raise ValueError(f"C must satisfy C < 1 - (R - S)^2 (overlap matrix positive definite), got R={R}, S={S}, C={C}")
    info = activation_info(activation)
    if math.isinf(K) and info.dm0 <= 0:
        raise ValueError("activation must have E[g'(z)] != 0 for K = inf (m'(0) > 0 fixes the collective overlaps)")
    fe = _fe_eval(info, alpha, K, R, S, C)
    return fe if derivatives else fe.value
