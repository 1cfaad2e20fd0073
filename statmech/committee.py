r"""Tree committee machines (TCM): storage capacity of sign and ReLU networks, RS and 1RSB.

Model
-----
N inputs split into K disjoint receptive fields of N/K inputs; branch l has spherical
weights w_l (|w_l|^2 = N/K) and pre-activation lambda_l = w_l . xi_l / sqrt(N/K).
The output is sign(sum_l c_l g(lambda_l)):

* ``activation="sign"``: g = sign, c_l = 1, K odd (majority vote; thesis Eq. 3.2);
* ``activation="relu"``: g(x) = max(0, x), c_l = +1 for l <= K/2 and -1 for l > K/2,
  K even (the balanced second layer of Baldassi, Malatesta, Zecchina 2019).  An output of
  exactly 0 (all active units cancel, e.g. every unit inactive) counts as an error.

Storage of P = alpha N random patterns with random labels (alpha = P/N, N -> inf, K fixed).

Replica-symmetric theory (derived in docs/committee.md)
-------------------------------------------------------
Site-symmetric overlap q between two solutions in every branch; with x = sqrt(q/(1-q))
and t = (t_1..t_K) iid N(0, 1), the RS free entropy per weight is

    s(q) = 1/2 ln(1-q) + q/(2(1-q)) + alpha E_t ln Z(x t),                         (RS.1)
    Z(u) = P(majority of K independent units is +1),  P(unit l = +1) = H(-u_l),

(the Poisson-binomial upper tail; thesis Eq. 3.3 in replica form).  The saddle point
ds/dq = 0 is  q = alpha sqrt((1-q)/q) (-E_t[sum_l t_l d ln Z/du_l])              (RS.2)
and the replicon (AT) eigenvalue of the branch-symmetric (uniform) replicon mode is

    lambda_AT = 1 - alpha E_t || d^2 ln Z / du du ||_F^2      (stable iff > 0)    (RS.3)

(K = 1 reduces to Gardner--Derrida: 1 - alpha (1-q)^2 E (d^2_h ln H)^2).  As q -> 1,
ln Z ~ -x^2 C(t)/2 with C(t) the minimal squared displacement of the hidden fields that
makes the output correct, so  1/alpha_c^RS = E_t C(t).                             (RS.4)
For sign units C(t) = sum of t_l^2 over the (K+1)/2 - n_+ negative units of smallest
|t_l|; counting configurations gives the thesis's Eq. 3.5 (confirmed, no correction):

    1/alpha_c = K int_0^inf Dt t^2 I_{H(t)}((K-1)/2, (K+1)/2)                   (3.5)

(I = regularized incomplete beta = the binomial sum of Eq. 3.5).  For K -> inf
alpha_c^RS = sqrt(72/pi) sqrt(K) (1 + O(K^-1/2)),  sqrt(72/pi) = 4.7873...

One-step RSB at capacity (q_1 -> 1, m = y (1 - q_1), y fixed)
-------------------------------------------------------------
    2 (1-q_1) s_1RSB -> F(q0, y) = ln(1 + y(1-q0))/y + q0/(1 + y(1-q0))
                                   + (2 alpha / y) E_{t0} ln E_{t1} exp(-y C(h)/2),  (1RSB.1)
    h = sqrt(q0) t0 + sqrt(1-q0) t1;   alpha_c^1RSB = stationary value of -S/E over (q0, y)
(y -> 0 recovers Eq. RS.4).  The inner K-dimensional average is reduced to a 1-d integral
over the largest flipped |lambda| (order statistics, see docs/committee.md).

ReLU, K -> inf
--------------
CLT over branches gives an effective perceptron with output overlap
Q(q) = (k(q) - 1/(2 pi))/(1/2 - 1/(2 pi)),  k(q) = (sqrt(1-q^2) + (pi - arccos q) q)/(2 pi),
so alpha_c^RS(K = inf) = 2 Q'(1) = 2 pi/(pi - 1) = 2.93388... (finite, Baldassi et al. 2019).

Numerics
--------
Closed forms (entropic terms and their derivatives, the ReLU kernel Q(q), the effective-
perceptron 1RSB integrand) are sympy kernels in ``_eqs``; the K-unit combinatorics (log-space
Poisson binomial, leave-one/two-out derivatives, flip costs, the order-statistics reduction of
the 1RSB inner average) are numba kernels (cache=True, compiled on first use).  K-dimensional
Gaussian averages use permutation symmetry: sums over multisets of the nodes of a 1-d rule.

Public API
----------
``tcm_storage(alpha, K, activation="sign", ansatz="rs")`` -> SaddlePoint (q, q_hat, entropy,
replicon, rs_stable), any odd K (multiset rules for K <= 7, randomized QMC for K >= 9);
``tcm_capacity(K, activation, ansatz)`` -> float; ``tcm_at_line(K)`` -> alpha_AT,
``tcm_at_line_point(K)`` (with error estimate); ``tcm_capacity_1rsb_point(K)`` -> SaddlePoint
(q0, y) at the 1RSB capacity, any odd K (RQMC for K >= 7, ``tcm_capacity_1rsb_rqmc``);
``rs_large_K_coefficient()``; ``monasson_zecchina(K)``; ``one_rsb_large_K_coefficient()`` (8/pi)
and ``tcm_1rsb_large_K(K or ln_K)`` (the K -> inf continuum limit of Eq. 1RSB.1, Eq. 1RSB.L);
``relu_kernel_Q(q)``; ``relu_rs_capacity_error(K)``; ``sign_flip_cost(t)``, ``relu_flip_cost(t)``;
ReLU: ``tcm_storage(alpha, 2, "relu")`` (K = 2 RS at finite alpha), ``relu_at_line(2)``,
``relu_capacity_1rsb_point(2)`` (1RSB = RS = 4/3, convex version space),
``relu_capacity_1rsb_rqmc(K)`` and ``relu_1rsb_alpha_rqmc(q0, y, K)`` (K = 4, 6).
"""
from __future__ import annotations

import math
from functools import lru_cache

import numba
import numpy as np
import sympy as sp
from scipy import special

from . import gaussian as gs
from .errors import ConvergenceError, check_choice, check_int, check_range
from .gaussian import G_nb, H_nb, log_H_nb
from .gaussian import _piecewise_fill as gs_fill  # numba node filler of the core
from .saddle import SaddlePoint, newton, root_scalar, vectorize_over
from .symbolic import Expectation, LogH, Scalar, kernels

__all__ = ["tcm_storage", "tcm_capacity", "tcm_at_line", "tcm_at_line_point", "tcm_capacity_1rsb_point",
           "tcm_capacity_1rsb_rqmc", "rs_large_K_coefficient", "monasson_zecchina",
           "one_rsb_large_K_coefficient", "tcm_1rsb_large_K", "relu_kernel_Q", "relu_rs_capacity_error",
           "sign_flip_cost", "relu_flip_cost", "relu_capacity_1rsb_point", "relu_at_line",
           "relu_1rsb_alpha_rqmc", "relu_capacity_1rsb_rqmc"]

ACTIVATIONS = ("sign", "relu")
ANSATZE = ("rs", "1rsb")


# =========================================================================== sympy equations
@kernels
def _eqs():
    """All closed-form equations of the TCM, written once (derivatives by sympy.diff)."""
    q, q0, y, a, b, mu, yp = sp.symbols("q q0 y a b mu yp", real=True)
    # RS entropic term of a spherical branch (per weight) and its q-derivative
    gs_rs = sp.log(1 - q) / 2 + q / (2 * (1 - q))
    # RS conjugate q_hat = 2 dG_S/dq (the field conjugate to q)
    # 1RSB entropic term at capacity: coefficient of 1/(2 eps), eps = 1 - q1 -> 0, m = y eps
    s1 = sp.log(1 + y * (1 - q0)) / y + q0 / (1 + y * (1 - q0))
    # ReLU kernel k(rho) = E[relu(u) relu(v)], corr(u, v) = rho; normalized output overlap Q
    kr = (sp.sqrt(1 - q ** 2) + (sp.pi - sp.acos(q)) * q) / (2 * sp.pi)
    Qr = (kr - 1 / (2 * sp.pi)) / (sp.Rational(1, 2) - 1 / (2 * sp.pi))
    # effective-perceptron inner average E_{t1} exp(-yp h^2 Theta(-h)/2), h ~ N(mu, b^2):
    #   = H(-mu/b) + exp(-yp mu^2/(2(1+yp b^2)))/sqrt(1+yp b^2) H(mu/(b sqrt(1+yp b^2)))
    # returned as the two log terms (combined with logaddexp)
    la = LogH(-mu / b)
    lb = -yp * mu ** 2 / (2 * (1 + yp * b ** 2)) - sp.log(1 + yp * b ** 2) / 2 \
        + LogH(mu / (b * sp.sqrt(1 + yp * b ** 2)))
    z = sp.Symbol("z", real=True)
    mu_z = a * z
    la_z = la.subs(mu, mu_z)
    lb_z = lb.subs(mu, mu_z)
    lse = sp.Max(la_z, lb_z) + sp.log(1 + sp.exp(-sp.Abs(la_z - lb_z)))
    return {
        "gs_rs": Scalar((q,), (gs_rs, sp.diff(gs_rs, q), sp.diff(gs_rs, q, 2))),
        "s1rsb": Scalar((q0, y), (s1, sp.diff(s1, q0), sp.diff(s1, y))),
        "relu_Q": Scalar((q,), (Qr, sp.diff(Qr, q))),
        # E_{t0} ln E_{t1} exp(-yp h^2 Theta(-h)/2), h = a t0 + b t1 (ReLU K = inf, 1RSB)
        "eff_1rsb": Expectation(z, (a, b, yp), lse),
    }


# =========================================================================== argument checks
def _check_K(K, activation):
    if activation == "relu":
        if isinstance(K, float) and math.isinf(K):
            return math.inf
        k = check_int("K", K, 2)
        if k % 2:
            raise ValueError(f"K must be an even integer >= 2 for activation='relu' (balanced second layer), got {K!r}")
        return k
    if isinstance(K, float) and math.isinf(K):
        return math.inf
    k = check_int("K", K, 1)
    if k % 2 == 0:
        raise ValueError(f"K must be an odd integer >= 1 for activation='sign' (majority vote of K units), got {K!r}")
    return k


# =========================================================================== RS capacity, sign (Eq. 3.5)
def _inv_alpha_rs_sign(K, level=5):
    """K int_0^inf Dt t^2 P(Bin(K-1, 1-H(t)) <= (K-1)/2)  (thesis Eq. 3.5)."""
    if K == 1:
        return 0.5
    s = 1.0 / math.sqrt(K)
    z, w = gs.piecewise_nodes([0.0, 0.5 * s, s, 2 * s, 4 * s, 8 * s], level)
    m = z > 0
    t = z[m]
    F = special.betainc(0.5 * (K - 1), 0.5 * (K + 1), gs.H(t))
    return K * float(np.sum(w[m] * t * t * F))


@lru_cache(maxsize=256)
def _alpha_rs_sign(K):
    # tanh-sinh levels 4 and 5 agree to ~1e-15 for K = 3 ... 1e6 (levels 4-7 checked)
    v4 = 1.0 / _inv_alpha_rs_sign(K, 4)
    v5 = 1.0 / _inv_alpha_rs_sign(K, 5)
    if abs(v5 - v4) > 1e-12 * v5:
        raise ConvergenceError("Eq. 3.5 quadrature did not converge", residual=abs(v5 - v4),
                               diagnostics={"K": K})
    return v5


def rs_large_K_coefficient():
    """c with alpha_c^RS = c sqrt(K) (1 + O(K^-1/2)) for sign units: c = 12/sqrt(2 pi) = sqrt(72/pi).

    Derivation (docs/committee.md): for K -> inf the surplus of negative units is
    D = sqrt(K) Z, Z ~ N(0, 1); the D/2 flipped units are those with |t| < s*, s* =
    D sqrt(2 pi)/(2K), so C = Z^3/(24 phi(0)^2 sqrt(K)) for Z > 0 and E C = sqrt(2 pi)/(12 sqrt K).
    """
    return 12.0 / math.sqrt(2.0 * math.pi)


def monasson_zecchina(K):
    """Large-K 1RSB capacity law of Monasson & Zecchina (1995): (16/pi) sqrt(ln K)."""
    K = check_range("K", K, 1.0, allow_inf=True)
    v = 16.0 / math.pi * np.sqrt(np.log(K))
    return float(v) if v.ndim == 0 else v


def one_rsb_large_K_coefficient():
    r"""c with alpha_c^1RSB = c sqrt(ln K) (1 + o(1)) for Eq. 1RSB.1 (sign units): c = 8/pi.

    Derived in docs/committee.md ("1RSB at large K"): with v = 1 - q0 -> 0, the vote margin
    given t0 is Gaussian with signal-to-noise ratio r = (2/pi) asin(q0) / (1 - (2/pi) asin(q0))
    ~ pi / (2 sqrt(2 v)), so E ln Y -> -r/4; the entropic term gives S y = ln(y v) + 1/v with
    ln y = (1/2) ln K + O(ln ln K) (flipping the O(sqrt K) excess units costs
    y D^3 / (6 K^2 phi(0)^2)), and minimizing 2 (ln(y v) + 1/v) / r over v (v = 2/ln K) gives
    (8/pi) sqrt(ln K): half of Monasson--Zecchina's 16/pi.  The corrections are
    O(ln ln K / sqrt(ln K)); see :func:`tcm_1rsb_large_K`.
    """
    return 8.0 / math.pi


_GL10 = np.polynomial.legendre.leggauss(10)


def _log_panels(x0, scale, extent, n):
    """GL nodes/weights on [0, extent] (offset x0) with log-spaced panels x = scale (e^tau - 1)."""
    gx, gw = _GL10
    tmax = np.log1p(extent / scale)                            # (nz,)
    edges = np.linspace(0.0, 1.0, n + 1)
    a = edges[:-1, None] * tmax[None, :]                       # (n, nz) panel starts in tau
    h = (1.0 / n) * tmax[None, :]
    tau = a[:, None, :] + 0.5 * h[:, None, :] * (gx[None, :, None] + 1.0)    # (n, 10, nz)
    x = scale * np.expm1(tau)
    w = 0.5 * h[:, None, :] * gw[None, :, None] * scale * np.exp(tau)
    return x.reshape(-1, x.shape[-1]), w.reshape(-1, w.shape[-1])


def _log_inner_continuum(m, s, yh, n_panels):
    r"""ln E_g exp(-yh (m + s g)_+^3), g ~ N(0, 1), in log space (Eq. 1RSB.L inner average).

    = ln[Phi(-m/s) + int_0^inf N(u; m, s^2) e^{-yh u^3} du]; the integrand is log-concave with
    its maximum at u* (closed form), integrated on log-spaced Gauss--Legendre panels to the left
    (down to max(0, u* - 40 s)) and right (up to u* + 40 sigma) of u*; no cut-off matters at
    double precision (the log-integrand has dropped by > 800 there).
    """
    m = np.asarray(m, dtype=float)
    disc = np.sqrt(1.0 + 12.0 * yh * s * s * np.maximum(m, 0.0))
    ustar = np.where(m > 0.0, 2.0 * np.maximum(m, 0.0) / (1.0 + disc), 0.0)
    sig = 1.0 / np.sqrt(1.0 / (s * s) + 6.0 * yh * ustar)
    h0 = np.minimum(sig, yh ** (-1.0 / 3.0)) / 4.0

    def logf(u):
        return -0.5 * ((u - m) / s) ** 2 - yh * u ** 3 - math.log(s * math.sqrt(2.0 * math.pi))

    xr, wr = _log_panels(ustar, h0, 40.0 * sig, n_panels)
    parts = [logf(ustar + xr) + np.log(wr)]
    left = np.minimum(ustar, 40.0 * s)
    has_left = left > 0.0
    if np.any(has_left):
        xl, wl = _log_panels(ustar, h0, np.where(has_left, left, 1.0), n_panels)
        ll = logf(np.maximum(ustar - xl, 0.0)) + np.log(wl)
        parts.append(np.where(has_left[None, :], ll, -np.inf))
    body = special.logsumexp(np.concatenate(parts, axis=0), axis=0)
    return np.logaddexp(special.log_ndtr(-m / s), body)


def _continuum_G(q0, yh, level, n_panels):
    """G = -E_zeta ln E_g exp(-yh (-(sqrt(a) zeta + sqrt(b) g))_+^3), a = (2/pi) asin q0, b = 1 - a."""
    a = 2.0 / math.pi * math.asin(q0)
    b = 1.0 - a
    w0 = math.sqrt(b / a)                                        # width of the zeta ~ 0 layer
    z, w = gs.piecewise_nodes([-4.0 * w0, -w0, 0.0, w0], level)
    keep = w > 0.0
    z, w = z[keep], w[keep]
    return -float(np.dot(w, _log_inner_continuum(-math.sqrt(a) * z, math.sqrt(b), yh, n_panels)))


_PHI0SQ48 = 48.0 / (2.0 * math.pi)                               # 48 phi(0)^2


def _continuum_alpha(lnK, q0, yh, level, n_panels):
    v = 1.0 - q0
    lny = math.log(_PHI0SQ48 * yh) + 0.5 * lnK                   # y = 48 phi(0)^2 sqrt(K) yh
    # S y = ln(1 + y v) + q0 y / (1 + y v), written for any size of y v
    lyv = lny + math.log(v)
    Sy = (lyv + math.log1p(math.exp(-lyv)) if lyv > 0 else math.log1p(math.exp(lyv))) \
        + q0 / (v + math.exp(-lny))
    return Sy / (2.0 * _continuum_G(q0, yh, level, n_panels))


def tcm_1rsb_large_K(K=None, *, ln_K=None, level=4, n_panels=16):
    r"""Large-K continuum limit of the sign 1RSB capacity (Eq. 1RSB.L), a SaddlePoint.

    For K -> inf the number of excess negative units is O(sqrt K) and flipping D units of
    smallest |lambda| costs D^3/(3 K^2 phi(0)^2); with y = 48 phi(0)^2 sqrt(K) yh and
    a = (2/pi) asin(q0), Eq. 1RSB.1 becomes

        alpha(q0, yh) = [ln(1 + y(1-q0)) + q0 y/(1 + y(1-q0))] / (2 G(q0, yh)),
        G = -E_zeta ln E_g exp(-yh (-(sqrt(a) zeta + sqrt(1-a) g))_+^3),          (1RSB.L)

    minimized over (q0, yh).  Valid only asymptotically (it ignores the discreteness of small
    numbers of flips, so it overestimates the finite-K values: 6.04 vs 4.82 at K = 25); its
    purpose is the K -> inf behaviour: alpha / sqrt(ln K) -> 8/pi
    (:func:`one_rsb_large_K_coefficient`), approached from below and only logarithmically
    slowly.  Pass ``K`` (odd integer or float >= 3) or ``ln_K`` (for astronomically large K).
    Accuracy: quadrature change to (level + 1, 2 n_panels) in ``extra["quadrature_error"]``.
    """
    if (K is None) == (ln_K is None):
        raise ValueError("give exactly one of K or ln_K")
    if ln_K is None:
        K = check_range("K", K, 3.0)
        ln_K = math.log(K)
    else:
        ln_K = check_range("ln_K", ln_K, math.log(3.0))
    # start: the asymptotic solution v = 2/ln K, yh from the slope balance (loose, Newton refines)
    start = np.array([math.log((1.0 - 2.0 / max(ln_K, 4.0)) * max(ln_K, 4.0) / 2.0), math.log(max(ln_K, 4.0) ** 2)])

    def f(p):
        q0 = 1.0 / (1.0 + math.exp(-p[0]))
        return _continuum_alpha(ln_K, q0, math.exp(p[1]), level, n_panels)

    from scipy.optimize import minimize
    r = minimize(f, start, method="Nelder-Mead", options={"xatol": 1e-7, "fatol": 1e-12, "maxiter": 4000})
    info, Hm = _stationary_2d(f, r.x, h=1e-3, tol=1e-9 * max(1.0, r.fun))
    p = info.x
    q0 = 1.0 / (1.0 + math.exp(-p[0]))
    yh = math.exp(p[1])
    ac = f(p)
    fine = _continuum_alpha(ln_K, q0, yh, level + 1, 2 * n_panels)
    ev = np.linalg.eigvalsh(Hm)
    if not (np.all(ev > 0) and abs(fine - ac) < 1e-6 * ac):
        raise ConvergenceError("tcm_1rsb_large_K: no converged interior minimum",
                               residual=abs(fine - ac), diagnostics={"ln_K": ln_K, "q0": q0, "yh": yh,
                                                                     "hessian_eigenvalues": ev})
    return SaddlePoint("committee.tcm_1rsb_large_K", {"ln_K": ln_K},
                       {"q0": q0, "y_hat": yh, "y": _PHI0SQ48 * yh * math.exp(0.5 * ln_K) if ln_K < 1400 else math.inf},
                       {"alpha_c": ac, "ratio": ac / math.sqrt(ln_K)}, converged=True,
                       residual=info.residual, iterations=info.iterations + r.nit, hessian_eigenvalues=ev,
                       extra={"quadrature_error": abs(fine - ac), "coefficient": one_rsb_large_K_coefficient()})


# =========================================================================== flip costs (q -> 1)
@numba.njit(cache=True)
def _sign_cost(t):
    """Minimal sum of squared displacements making majority(sign(t)) = +1 (the q -> 1 cost)."""
    K = t.shape[0]
    m = (K + 1) // 2
    npos = 0
    for i in range(K):
        if t[i] > 0:
            npos += 1
    need = m - npos
    if need <= 0:
        return 0.0
    neg = np.empty(K - npos)
    j = 0
    for i in range(K):
        if t[i] <= 0:
            neg[j] = t[i] * t[i]
            j += 1
    neg.sort()
    c = 0.0
    for i in range(need):
        c += neg[i]
    return c


@numba.njit(cache=True)
def _relu_proj(t, half, out):
    """Nearest point ``out`` of the closed correct region to t; returns the squared distance (the ReLU flip cost).

    Water filling, see :func:`_relu_cost`.  + units: active t + nu, the k
    switched-on ones max(nu - s_i, 0) (s_i = -t_i), others unchanged; active - units
    max(t - nu, 0).
    """
    K = t.shape[0]
    for i in range(K):
        out[i] = t[i]
    A = 0.0
    nap = 0
    ni = 0
    sin = np.empty(half)
    for i in range(half):
        if t[i] > 0:
            A += t[i]
            nap += 1
        else:
            sin[ni] = -t[i]
            ni += 1
    B = 0.0
    tm = np.empty(K - half)
    nm = 0
    for i in range(half, K):
        if t[i] > 0:
            B += t[i]
            tm[nm] = t[i]
            nm += 1
    if A > B:
        return 0.0
    D = B - A
    s = np.sort(sin[:ni])
    tms = tm[:nm]
    best = np.inf
    bk = 0
    bnu = 0.0
    kmin = 0 if nap > 0 else 1
    for k in range(kmin, ni + 1):
        lo = 0.0
        hi = D + 1.0
        for i in range(k):
            hi += s[i]
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            gsum = nap * mid
            for i in range(k):
                if mid > s[i]:
                    gsum += mid - s[i]
            for i in range(nm):
                gsum += mid if mid < tms[i] else tms[i]
            if gsum >= D:
                hi = mid
            else:
                lo = mid
            if hi - lo <= 1e-16 * (1.0 + hi):
                break
        nu = hi
        c = nap * nu * nu
        for i in range(k):
            v = nu if nu > s[i] else s[i]
            c += v * v
        for i in range(nm):
            v = nu if nu < tms[i] else tms[i]
            c += v * v
        if c < best:
            best = c
            bk = k
            bnu = nu
    thr = s[bk - 1] if bk > 0 else -1.0
    for i in range(half):
        if t[i] > 0:
            out[i] = t[i] + bnu
        elif bk > 0 and -t[i] <= thr:
            out[i] = bnu + t[i] if bnu + t[i] > 0.0 else 0.0
    for i in range(half, K):
        if t[i] > 0:
            out[i] = t[i] - bnu if t[i] - bnu > 0.0 else 0.0
    return best


@numba.njit(cache=True)
def _relu_cost(t, half):
    """Minimal sum of squared displacements making sum_{l<half} relu - sum_{l>=half} relu > 0.

    Units 0..half-1 have c = +1, the others c = -1.  Exact: for each number k of inactive
    positive units that are switched on (those with the smallest |t|), the remaining problem
    is convex and solved by water filling (shift nu on active +, max(nu, s_i) on switched-on,
    min(nu, t_l) on active - units); the minimum over k is the global minimum.  The water
    filling (and the minimizer) is in :func:`_relu_proj`.
    """
    return _relu_proj(t, half, np.empty(t.shape[0]))


def sign_flip_cost(t):
    """C(t) for majority vote (RS.4): sum of t_l^2 of the (K+1)/2 - n_+ smallest-|t| negatives."""
    t = np.ascontiguousarray(np.asarray(t, dtype=float))
    return float(_sign_cost(t))


def relu_flip_cost(t):
    """C(t) for the balanced ReLU TCM (RS.4); first half of ``t`` has c = +1."""
    t = np.ascontiguousarray(np.asarray(t, dtype=float))
    if t.size % 2:
        raise ValueError(f"t must have an even length K (balanced ReLU machine), got {t.size}")
    return float(_relu_cost(t, t.size // 2))


# =========================================================================== symmetric quadrature
@numba.njit(cache=True)
def _multisets_next(idx, n):
    """Advance a non-decreasing index tuple; returns False when exhausted."""
    K = idx.shape[0]
    i = K - 1
    while i >= 0 and idx[i] == n - 1:
        i -= 1
    if i < 0:
        return False
    v = idx[i] + 1
    for j in range(i, K):
        idx[j] = v
    return True


@numba.njit(cache=True)
def _multiset_weight(idx, w, logfact):
    K = idx.shape[0]
    lw = logfact[K]
    run = 1
    for j in range(K):
        lw += math.log(w[idx[j]])
        if j > 0 and idx[j] == idx[j - 1]:
            run += 1
        else:
            if j > 0:
                lw -= logfact[run]
            run = 1
    lw -= logfact[run]
    return math.exp(lw)


# =========================================================================== RS at finite alpha, sign
@numba.njit(cache=True)
def _logaddexp(a, b):
    if a == -np.inf:
        return b
    if b == -np.inf:
        return a
    if a > b:
        return a + math.log1p(math.exp(b - a))
    return b + math.log1p(math.exp(a - b))


@numba.njit(cache=True)
def _pb_log(lp, lq, skip1, skip2, out):
    """Log Poisson-binomial pmf of the units except skip1/skip2 (-1: none) into out[0..K]."""
    K = lp.shape[0]
    for n in range(K + 1):
        out[n] = -np.inf
    out[0] = 0.0
    cnt = 0
    for l in range(K):
        if l == skip1 or l == skip2:
            continue
        cnt += 1
        for n in range(cnt, 0, -1):
            out[n] = _logaddexp(out[n] + lq[l], out[n - 1] + lp[l])
        out[0] = out[0] + lq[l]


@numba.njit(cache=True)
def _rs_unit_logs(t, x):
    """Per unit at u = x t: u, ln P(+) = ln H(-u), ln P(-) = ln H(u), ln G(u) (Gaussian density)."""
    K = t.shape[0]
    lp = np.empty(K)
    lq = np.empty(K)
    lg = np.empty(K)
    u = np.empty(K)
    for l in range(K):
        u[l] = x * t[l]
        lp[l] = log_H_nb(-u[l])
        lq[l] = log_H_nb(u[l])
        lg[l] = -0.5 * u[l] * u[l] - 0.9189385332046727
    return u, lp, lq, lg


@numba.njit(cache=True)
def _rs_first_terms(t, u, g, want_hess):
    """sum_l t_l d lnZ/du_l and the diagonal part of ||d2 lnZ/du du||_F^2 from g_l = d lnZ/du_l."""
    dx = 0.0
    fro = 0.0
    for l in range(t.shape[0]):
        dx += t[l] * g[l]
        if want_hess:
            d2 = -u[l] * g[l] - g[l] * g[l]
            fro += d2 * d2
    return dx, fro


@numba.njit(cache=True)
def _rs_point(t, x, want_hess):
    """ln Z, sum_l t_l d lnZ/du_l, ||d2 lnZ/du du||_F^2 at u = x t (majority of K)."""
    K = t.shape[0]
    m = (K + 1) // 2
    u, lp, lq, lg = _rs_unit_logs(t, x)
    pb = np.empty(K + 1)
    _pb_log(lp, lq, -1, -1, pb)
    lZ = -np.inf
    for n in range(m, K + 1):
        lZ = _logaddexp(lZ, pb[n])
    g = np.empty(K)
    for l in range(K):
        _pb_log(lp, lq, l, -1, pb)
        g[l] = math.exp(lg[l] + pb[m - 1] - lZ)
    dx, fro = _rs_first_terms(t, u, g, want_hess)
    if want_hess:
        for l in range(K):
            for k in range(l + 1, K):
                _pb_log(lp, lq, l, k, pb)
                a = pb[m - 2] if m >= 2 else -np.inf
                b = pb[m - 1]
                base = lg[l] + lg[k] - lZ
                v = math.exp(base + a) - math.exp(base + b) - g[l] * g[k]
                fro += 2.0 * v * v
    return lZ, dx, fro


@numba.njit(cache=True)
def _lconv_at(A, na, B, nb, n):
    """log sum_j exp(A[j] + B[n-j]), 0 <= j <= na, 0 <= n-j <= nb (log-space convolution at n)."""
    lo = n - nb if n - nb > 0 else 0
    hi = na if na < n else n
    r = -np.inf
    for j in range(lo, hi + 1):
        r = _logaddexp(r, A[j] + B[n - j])
    return r


@numba.njit(cache=True)
def _rs_point_fast(t, x, want_hess):
    """Same as :func:`_rs_point` in O(K^2) (O(K^3) with the replicon term) instead of O(K^3)
    (O(K^4)): leave-one-out and leave-two-out Poisson-binomial values from log-space prefix
    and suffix distributions (pre[l]: units < l, suf[l]: units >= l) and, for the pairs, a
    running prefix that skips unit l.  Used for K >= 7; equal to _rs_point to rounding (tested).
    """
    K = t.shape[0]
    m = (K + 1) // 2
    u, lp, lq, lg = _rs_unit_logs(t, x)
    pre = np.full((K + 1, K + 1), -np.inf)
    suf = np.full((K + 2, K + 1), -np.inf)
    pre[0, 0] = 0.0
    for l in range(K):
        for n in range(l + 2):
            a = pre[l, n] + lq[l] if n <= l else -np.inf
            b = pre[l, n - 1] + lp[l] if n >= 1 else -np.inf
            pre[l + 1, n] = _logaddexp(a, b)
    suf[K, 0] = 0.0
    for l in range(K - 1, -1, -1):
        c = K - 1 - l          # units in suf[l + 1]
        for n in range(c + 2):
            a = suf[l + 1, n] + lq[l] if n <= c else -np.inf
            b = suf[l + 1, n - 1] + lp[l] if n >= 1 else -np.inf
            suf[l, n] = _logaddexp(a, b)
    lZ = -np.inf
    for n in range(m, K + 1):
        lZ = _logaddexp(lZ, pre[K, n])
    g = np.empty(K)
    for l in range(K):
        g[l] = math.exp(lg[l] + _lconv_at(pre[l], l, suf[l + 1], K - 1 - l, m - 1) - lZ)
    dx, fro = _rs_first_terms(t, u, g, want_hess)
    if want_hess:
        A = np.empty(K + 1)
        for l in range(K - 1):
            for n in range(K + 1):
                A[n] = pre[l, n]
            na = l                 # A: units < k except l, starting with k = l + 1
            for k in range(l + 1, K):
                nb = K - 1 - k     # units in suf[k + 1]
                a2 = _lconv_at(A, na, suf[k + 1], nb, m - 2) if m >= 2 else -np.inf
                b2 = _lconv_at(A, na, suf[k + 1], nb, m - 1)
                base = lg[l] + lg[k] - lZ
                v = math.exp(base + a2) - math.exp(base + b2) - g[l] * g[k]
                fro += 2.0 * v * v
                # add unit k to A
                for n in range(na + 1, 0, -1):
                    A[n] = _logaddexp(A[n] + lq[k] if n <= na else -np.inf, A[n - 1] + lp[k])
                A[0] = A[0] + lq[k]
                na += 1
    return lZ, dx, fro


@numba.njit(cache=True)
def _rs_average(z, w, K, x, want_hess, logfact, fast=False):
    n = z.shape[0]
    idx = np.zeros(K, dtype=np.int64)
    t = np.empty(K)
    s0 = 0.0
    s1 = 0.0
    s2 = 0.0
    while True:
        wt = _multiset_weight(idx, w, logfact)
        if wt > 0.0:
            for j in range(K):
                t[j] = z[idx[j]]
            if fast:
                a, b, c = _rs_point_fast(t, x, want_hess)
            else:
                a, b, c = _rs_point(t, x, want_hess)
            s0 += wt * a
            s1 += wt * b
            s2 += wt * c
        if not _multisets_next(idx, n):
            break
    return s0, s1, s2


_LOGFACT = np.array([math.lgamma(i + 1.0) for i in range(64)])

# default quadrature of the RS averages per K: tanh-sinh level (int, multiset rule) for K <= 5;
# ("gh", n): multiset of an n-point Gauss-Hermite rule (K = 7); ("rqmc", log2 points, seed):
# scrambled Sobol set (K >= 9).  See tcm_storage and docs/committee.md for the measurements.
_RS_LEVEL = {1: 4, 3: 3, 5: 1}
_RS_GH_K7 = 16
_RS_RQMC_LOG2 = 16
_RQMC_SETS = 5           # search set + 4 independent scramblings for the error bar


def _rs_default_level(K):
    if K in _RS_LEVEL:
        return _RS_LEVEL[K]
    if K == 7:
        return ("gh", _RS_GH_K7)
    return ("rqmc", _RS_RQMC_LOG2, 0)


def _rs_nodes(level):
    """1-d rule for the RS averages: tanh-sinh level (int >= 0) with a break at t = 0, or
    ("gh", n) for an n-point Gauss-Hermite rule (used as an independent check rule)."""
    if isinstance(level, tuple):
        z, w = gs.gauss_hermite(level[1])
        return np.ascontiguousarray(z), np.ascontiguousarray(w)
    z, w = gs.piecewise_nodes([0.0], level)
    keep = w > 0
    return np.ascontiguousarray(z[keep]), np.ascontiguousarray(w[keep])


@lru_cache(maxsize=_RQMC_SETS)   # one storage call uses 5 sets (2^16 x K floats each: 11 MB at K = 21)
def _sobol_normal(K, log2_points, seed):
    """Antithetic scrambled Sobol set: 2^(log2_points-1) points t mapped to N(0, I_K), then -t
    (read-only, cached).  The symmetrization makes every odd moment of the set vanish exactly;
    without it the term sqrt((1-q)/q) E[sum t dlnZ/du] of Eq. RS.2 is dominated by the sample
    mean of sum t as q -> 0 and the root is lost."""
    from scipy.stats import qmc
    T = special.ndtri(qmc.Sobol(d=K, scramble=True, seed=seed).random_base2(log2_points - 1))
    T = np.ascontiguousarray(np.concatenate([T, -T]))
    T.setflags(write=False)
    return T


@numba.njit(cache=True)
def _rs_average_pts(T, x, want_hess):
    """Equal-weight average of (ln Z, sum t dlnZ/du, ||d2 lnZ||_F^2) over the rows of T."""
    n = T.shape[0]
    s0 = 0.0
    s1 = 0.0
    s2 = 0.0
    for r in range(n):
        a, b, c = _rs_point_fast(T[r], x, want_hess)
        s0 += a
        s1 += b
        s2 += c
    return s0 / n, s1 / n, s2 / n


def _rqmc_hess_points(K, log2_points):
    """Number of points used for the O(K^3) replicon term: the first 2^j points of the set
    (a balanced Sobol prefix), 2^j <= 2e9/K^3, at least 2^10."""
    j = int(math.floor(math.log2(max(2e9 / K ** 3, 1024.0))))
    return 2 ** min(log2_points, max(10, j))


def _rs_averages(K, q, level, want_hess=True):
    x = math.sqrt(q / (1.0 - q))
    if isinstance(level, tuple) and level[0] == "rqmc":
        T = _sobol_normal(K, level[1], level[2])
        a, b, _ = _rs_average_pts(T, x, False)
        c = 0.0
        if want_hess:
            nh = _rqmc_hess_points(K, level[1]) // 2      # antithetic halves of the prefix
            c = _rs_average_pts(np.ascontiguousarray(np.concatenate([T[:nh], T[T.shape[0] // 2:T.shape[0] // 2 + nh]])),
                                x, True)[2]
        return a, b, c
    z, w = _rs_nodes(level)
    return _rs_average(z, w, K, x, want_hess, _LOGFACT, K >= 7)


def _rs_residual(alpha, K, q, level):
    """(1-q)^2 * 2 ds/dq (RS.2): q + alpha sqrt((1-q)/q) E[sum t dlnZ/du]."""
    _, d, _ = _rs_averages(K, q, level, want_hess=False)
    return q + alpha * math.sqrt((1.0 - q) / q) * d


def _check_rules(K, level):
    """Independent rules for the error estimate of ``level``.

    tanh-sinh multiset: the next-coarser level (an upper estimate), or for K = 5 at level 1 a
    36-point Gauss-Hermite multiset; ("gh", n): ("gh", n - 4); RQMC: 4 further scramblings.
    """
    if isinstance(level, tuple):
        if level[0] == "gh":
            return [("gh", level[1] - 4)]
        return [("rqmc", level[1], level[2] + 1 + r) for r in range(_RQMC_SETS - 1)]
    return [("gh", 36)] if (K >= 5 and level <= 1) else [level - 1]


def _storage_one(alpha, K, level, guess=None, tol=math.inf):
    if alpha == 0.0:
        return SaddlePoint("committee.tcm_storage", {"alpha": 0.0, "K": K, "activation": "sign"},
                           {"q": 0.0, "q_hat": 0.0}, {"entropy": 0.0}, True, 0.0, 0,
                           np.array([-0.5]), 1.0, True, {"ansatz": "rs"})
    ac = _alpha_rs_sign(K)
    if alpha >= ac:
        raise ValueError(f"alpha must be < alpha_c^RS(K={K}) = {ac:.12g} for a finite-volume RS solution, got {alpha!r}")
    f = lambda q: _rs_residual(alpha, K, q, level)
    lo, hi = 1e-12, 1.0 - 1e-9
    try:
        info = root_scalar(f, (lo, hi), xtol=1e-14)
    except ConvergenceError as exc:
        raise ConvergenceError(f"tcm_storage: RS saddle point not bracketed at alpha={alpha}, K={K}",
                               diagnostics={"alpha": alpha, "K": K}) from exc
    q = float(info.x[0])
    l0, d, fro = _rs_averages(K, q, level)
    gsv, dgs, d2gs = _eqs.gs_rs(q)
    # Hessian of s(q) (1-d): derivative of ds/dq = r(q)/(2(1-q)^2) by central differences
    h = 1e-5 * min(q, 1 - q)
    dsp = lambda qq: _rs_residual(alpha, K, qq, level) / (2.0 * (1.0 - qq) ** 2)
    hess = (dsp(q + h) - dsp(q - h)) / (2 * h)
    slope = 2.0 * (1.0 - q) ** 2 * hess             # r'(q) at the root
    extra = {"ansatz": "rs", "quadrature_level": level}
    checks = []
    for lev_c in _check_rules(K, level):
        lc, dc, froc = _rs_averages(K, q, lev_c)
        rc = q + alpha * math.sqrt((1.0 - q) / q) * dc
        checks.append((rc / slope, gsv + alpha * lc, 1.0 - alpha * froc))
    entropy = gsv + alpha * l0
    replicon = 1.0 - alpha * fro
    if isinstance(level, tuple) and level[0] == "rqmc":
        # RQMC: q from the search set, corrected by the mean residual of all sets (Newton step);
        # entropy and replicon averaged over the sets (entropy is stationary in q); the error
        # is 2 standard errors of the mean over the independent scramblings
        dq = np.array([0.0] + [c[0] for c in checks])
        ent = np.array([entropy] + [c[1] for c in checks])
        rep = np.array([replicon] + [c[2] for c in checks])
        n = len(dq)
        q = q - float(dq.mean())
        entropy, replicon = float(ent.mean()), float(rep.mean())
        se_q, se_s, se_r = (float(a.std(ddof=1) / math.sqrt(n)) for a in (dq, ent, rep))
        quad_err = 2.0 * max(se_q, se_s)
        extra.update(stderr_q=se_q, stderr_entropy=se_s, stderr_replicon=se_r, replicon_error=2.0 * se_r,
                     points=len(_sobol_normal(K, level[1], level[2])),
                     replicon_points=_rqmc_hess_points(K, level[1]), sets=n)
        gsv, dgs, d2gs = _eqs.gs_rs(q)
    else:
        dqc, entc, repc = checks[0]
        # q error from the residual change dq = dr / r'(q); entropy change at the same q
        quad_err = max(abs(dqc), abs(entc - entropy))
        extra["replicon_coarse"] = repc
        extra["replicon_error"] = abs(repc - replicon)
    extra["quadrature_error"] = quad_err
    resid = abs(info.residual) if np.isfinite(info.residual) else abs(f(float(info.x[0])))
    if quad_err > tol:
        raise ConvergenceError(f"tcm_storage: quadrature error estimate {quad_err:.2e} exceeds tol={tol:g} "
                               f"at alpha={alpha}, K={K} (q={q:.6f}); raise `level`", x=[q],
                               diagnostics={"alpha": alpha, "K": K, "level": level, "quadrature_error": quad_err})
    if not (np.isfinite(entropy) and np.isfinite(replicon)):
        raise ConvergenceError("tcm_storage produced a non-finite value", x=[q], diagnostics={"alpha": alpha, "K": K})
    return SaddlePoint(
        "committee.tcm_storage", {"alpha": alpha, "K": K, "activation": "sign"},
        {"q": q, "q_hat": 2.0 * dgs},
        {"entropy": entropy},
        converged=True, residual=resid, iterations=info.iterations,
        hessian_eigenvalues=np.array([hess]), replicon=replicon, rs_stable=bool(replicon > 0),
        extra=extra,
    )


def _rs_level_arg(k, method, level):
    """Map (method, level) of the public API to the internal rule spec."""
    if method is None:
        if level is None:
            return _rs_default_level(k)
        method = "multiset" if k <= 5 else ("gh" if k == 7 else "rqmc")
    check_choice("method", method, ("multiset", "gh", "rqmc"))
    if method == "multiset":
        if level is None:
            if k not in _RS_LEVEL:
                raise ValueError(f"level must be given for method='multiset' at K={k} (tanh-sinh multiset "
                                 f"rule, ~(34 * 2^level)^K/K! points)")
            return _RS_LEVEL[k]
        return check_int("level", level, 1)
    if method == "gh":
        return ("gh", _RS_GH_K7 if level is None else check_int("level", level, 6))
    return ("rqmc", _RS_RQMC_LOG2 if level is None else check_int("level", level, 8), 0)


def tcm_storage(alpha, K, activation="sign", ansatz="rs", *, level=None, tol=1e-3, method=None):
    r"""RS saddle point of the storage problem of a sign tree committee machine.

    Implements Eqs. RS.1--RS.3 of this module (thesis Eq. 3.3 in RS form; the replicon
    RS.3 is our derivation, reducing to Gardner--Derrida for K = 1).

    Parameters
    ----------
    alpha : float or array, 0 <= alpha < alpha_c^RS(K)
    K : odd integer >= 1 for sign units; K = 2 for relu
    activation : "sign", or "relu" (K = 2 only; Z = bivariate-normal orthant probability, see
        ``_relu2_storage_one`` and docs/committee.md, Eqs. R2.4-R2.6)
    ansatz : "rs"
    method : rule for the K-dimensional Gaussian averages (default by K):

        * ``"multiset"`` (default K <= 3; K = 5 fallback): multisets of a 1-d tanh--sinh rule
          with a break at t = 0 (permutation symmetry, n^K/K! points); ``level`` = tanh--sinh
          level (default 4, 3, 1 for K = 1, 3, 5); error estimate = change to level - 1 (K = 5,
          level 1: to a 36-point Gauss--Hermite multiset).
        * ``"gh"`` (default K = 5, 7): multisets of an n-point Gauss--Hermite rule, n = ``level``
          (default 20 for K = 5: 4e-8 in q at alpha = 1; 16 for K = 7: 170544 points, ~1 s per
          average); error estimate = change to n - 4.  With the default (method and level
          None) K = 5 falls back to the tanh--sinh multiset when that estimate exceeds ``tol``.  K = 7, q = 0.35: error 1e-8 (ln Z), 1e-7 (derivative term); q = 0.6: 2e-5.
          The replicon term converges more slowly (K = 7, q = 0.61: 4e-3 at n = 16;
          ``extra["replicon_error"]``).  With the default (method and level None) K = 7
          falls back to RQMC when the GH error estimate exceeds ``tol`` (alpha >~ 2.5).
        * ``"rqmc"`` (default K >= 9): a scrambled Sobol set of 2^level points (default 2^16),
          fixed during the root search so the residual is deterministic; q is then corrected
          by the mean residual over 4 further scramblings, entropy and replicon are averaged
          over the 5 sets, and the error estimate is 2 standard errors of that mean
          (``extra["stderr_q"]``, ``"stderr_entropy"``, ``"stderr_replicon"``).  The replicon
          term costs O(K^3) per point (the rest O(K^2), ``_rs_point_fast``) and uses the first
          2^j <= 2e9/K^3 points of each set (all 2^16 up to K = 29).
          Cost (CPU time per alpha): ~5 s (K = 9), ~45 s (K = 21); wall time on the loaded
          shared machine 4-6x more.

    level : see ``method``
    tol : a ConvergenceError is raised when the quadrature error estimate (of q and of the
        entropy) exceeds ``tol`` -- near alpha_c (q -> 1) the K-dimensional integrand develops
        layers of width sqrt(1-q) and needs a finer rule

    Returns
    -------
    SaddlePoint with order_params q (overlap of two solutions in the same branch), q_hat
    (= q/(1-q)^2), thermo entropy (log Gardner volume per weight), replicon (Eq. RS.3),
    rs_stable, hessian_eigenvalues = [d^2 s/dq^2] (> 0: the RS saddle point is a minimum of
    s(q), n -> 0 inversion), and extra["quadrature_error"] (estimate of the error of q and
    of the entropy, see ``method``).
    """
    if activation == "relu":   # ReLU branch (K = 2), see _relu_storage
        check_choice("ansatz", ansatz, ("rs",))
        return _relu_storage(alpha, K, level, tol)
    check_choice("activation", activation, ("sign",))
    check_choice("ansatz", ansatz, ("rs",))
    k = _check_K(K, "sign")
    if k == math.inf:
        raise ValueError(f"K must be a finite odd integer >= 1 for tcm_storage, got {K!r}")
    a = check_range("alpha", alpha, 0.0)
    lev = _rs_level_arg(k, method, level)
    tol = float(check_range("tol", tol, 0.0, lo_open=True, allow_inf=True))
    if k in _RS_AUTO and method is None and level is None:
        return vectorize_over(lambda al, guess=None: _storage_auto(al, k, tol), a, model="committee.tcm_storage")
    return vectorize_over(lambda al, guess=None: _storage_one(al, k, lev, guess, tol), a,
                          model="committee.tcm_storage")


# K = 5, 7 defaults: a Gauss-Hermite multiset first (K = 5: n = 20, 4e-8 in q at alpha = 1 in ~2 s,
# vs 5e-5 in minutes for tanh-sinh level 1; K = 7: n = 16), then the fallback rule when the GH error
# estimate exceeds tol (near capacity, where the integrand develops sharp layers).
_RS_AUTO = {5: (("gh", 20), 1), 7: (("gh", _RS_GH_K7), ("rqmc", _RS_RQMC_LOG2, 0))}


def _storage_auto(alpha, k, tol):
    """Default rule for K = 5, 7: Gauss-Hermite multiset, the fallback rule if its error estimate exceeds tol."""
    first, fallback = _RS_AUTO[k]
    try:
        return _storage_one(alpha, k, first, None, tol)
    except ConvergenceError as exc:
        if "quadrature error" not in str(exc):
            raise
    return _storage_one(alpha, k, fallback, None, tol)


def tcm_at_line(K, *, level=None, method=None):
    """alpha_AT(K): where the replicon (Eq. RS.3) of the RS solution of the sign TCM vanishes.

    For K = 1 there is no instability below alpha_c = 2 (returns 2.0, marginal at capacity).
    For K >= 3 the RS solution is unstable for alpha_AT < alpha < alpha_c^RS.  Solved along
    the RS line parametrized by q: Eq. RS.2 gives alpha(q) = q sqrt(q/(1-q)) / (-E[sum t
    dlnZ/du]) explicitly, and the root of lambda_AT(q) = 1 - alpha(q) E||d2 lnZ||_F^2 is
    found by Brent.  ``method``/``level`` as in :func:`tcm_storage`; the default is the
    tanh--sinh multiset for K <= 5 and RQMC (2^16 antithetic points) for K >= 7, because the
    replicon term converges slowly in the Gauss--Hermite order.  With RQMC the root is taken
    for the search set and averaged with the linearized roots of 4 further scramblings
    (:func:`tcm_at_line_point` returns the error estimate, 2 standard errors).
    alpha_AT = 1.7294 (K = 3), 2.0729 (K = 5), 2.3200, 2.4719, 2.5681, 2.6832, 2.7705
    (K = 7, 9, 11, 15, 21; +- ~1e-3); alpha_AT/alpha_c^RS = 0.430, 0.359, 0.317, 0.284, 0.257,
    0.218, 0.180.  Cost: seconds (K = 3, level 2), ~2 min (K = 5, 7 wall), ~40 s (K = 11) to
    ~3 min (K = 21) CPU.
    """
    return float(tcm_at_line_point(K, level=level, method=method).alpha)


def tcm_at_line_point(K, *, level=None, method=None):
    """SaddlePoint at the AT line: params alpha (= alpha_AT), K; order_params q; extra
    quadrature_error (error estimate of alpha_AT) and alpha_over_alpha_c = alpha_AT/alpha_c^RS."""
    k = _check_K(K, "sign")
    if k == math.inf:
        raise ValueError(f"K must be a finite odd integer >= 1 for tcm_at_line, got {K!r}")
    if k == 1:
        return SaddlePoint("committee.tcm_at_line", {"alpha": 2.0, "K": 1, "activation": "sign"},
                           {"q": 1.0}, {}, extra={"quadrature_error": 0.0, "alpha_over_alpha_c": 1.0,
                                                  "note": "perceptron: marginal at capacity"})
    if k >= 7 and method is None and level is None:
        # the replicon term converges slowly in the Gauss-Hermite order (K = 7, q = 0.61:
        # ||d2 lnZ||^2 = 0.43234, 0.43106, 0.43056 for n = 16, 20, 24; RQMC 2^18: 0.43058)
        return _at_line_cached(k, ("rqmc", _RS_RQMC_LOG2, 0))
    return _at_line_cached(k, _rs_level_arg(k, method, level))


def _at_alpha_replicon(k, q, lev):
    _, d, fro = _rs_averages(k, q, lev)
    al = -q / (math.sqrt((1.0 - q) / q) * d)
    return al, 1.0 - al * fro


@lru_cache(maxsize=32)
def _at_line_cached(k, lev):
    ac = _alpha_rs_sign(k)
    g = lambda q: _at_alpha_replicon(k, q, lev)[1]
    grid = np.linspace(0.1, 0.9, 9)
    vals = [g(q) for q in grid]
    i = next((j for j in range(len(grid) - 1) if vals[j] > 0 >= vals[j + 1]), None)
    if i is None:
        raise ConvergenceError("tcm_at_line: replicon sign change not bracketed for q in [0.1, 0.9]",
                               diagnostics={"K": k, "replicon": vals})
    info = root_scalar(g, (grid[i], grid[i + 1]), xtol=1e-10)
    q = float(info.x[0])
    al = _at_alpha_replicon(k, q, lev)[0]
    hq = 1e-5
    dg = (g(q + hq) - g(q - hq)) / (2 * hq)            # d lambda_AT / dq along the RS line
    da = (_at_alpha_replicon(k, q + hq, lev)[0] - _at_alpha_replicon(k, q - hq, lev)[0]) / (2 * hq)
    ests = []
    for lev_c in _check_rules(k, lev):
        al_c, rep_c = _at_alpha_replicon(k, q, lev_c)
        # root of the check rule, linearized: q_c = q - rep_c/dg; alpha_c = al_c + da (q_c - q)
        ests.append(al_c - da * rep_c / dg)
    if isinstance(lev, tuple) and lev[0] == "rqmc":
        a_all = np.array([al] + ests)
        al_final = float(a_all.mean())
        err = 2.0 * float(a_all.std(ddof=1) / math.sqrt(len(a_all)))
    else:
        al_final = al
        err = abs(ests[0] - al)
    if not (0.0 < al_final < ac):
        raise ConvergenceError("tcm_at_line: alpha_AT outside (0, alpha_c^RS)", x=[q],
                               diagnostics={"K": k, "alpha_AT": al_final, "alpha_c": ac})
    return SaddlePoint("committee.tcm_at_line", {"alpha": al_final, "K": k, "activation": "sign"},
                       {"q": q}, {}, converged=True, residual=abs(info.residual), iterations=info.iterations,
                       replicon=0.0, extra={"quadrature_error": err, "alpha_over_alpha_c": al_final / ac,
                                            "quadrature_level": lev, "alpha_search_rule": al})


# =========================================================================== 1RSB, sign
@numba.njit(cache=True)
def _ival(lo, hi, mu, sig):
    """P(lo < X < hi), X ~ N(mu, sig^2), computed on the side that avoids cancellation."""
    a = (lo - mu) / sig
    b = (hi - mu) / sig
    if a > 0:
        return H_nb(a) - H_nb(b)
    if b < 0:
        return H_nb(-b) - H_nb(-a)
    return 1.0 - H_nb(b) - H_nb(-a)


@numba.njit(cache=True)
def _esym(c, b, skip, k, buf):
    """sum over subsets S (|S| = k) of the units != skip of prod_S c prod_rest b."""
    K = c.shape[0]
    for n in range(K + 1):
        buf[n] = 0.0
    buf[0] = 1.0
    cnt = 0
    for l in range(K):
        if l == skip:
            continue
        cnt += 1
        for n in range(cnt, 0, -1):
            buf[n] = buf[n] * b[l] + buf[n - 1] * c[l]
        buf[0] = buf[0] * b[l]
    return buf[k]


@numba.njit(cache=True)
def _inner_Y(h, v, y, xs, xcs, tw, zbuf, wbuf, brk):
    """Y(h) = E_{lambda ~ N(h, v I)} exp(-y C(lambda)/2) for majority vote (sign units).

    Y = P(n_+ >= m) + sum_l int_0^inf ds f_l(s) e^{-y s^2/2} e_{m-1}(c(s), b(s)) where unit l is
    the largest flipped negative at lambda_l = -s, c_j(s) = P(lambda_j > 0) + A_j(s),
    A_j(s) = int_{-s}^0 N(lambda; h_j, v) e^{-y lambda^2/2}, b_j(s) = P(lambda_j < -s).
    The s-integral is taken in z = (lambda_l - h_l)/sqrt(v) with the Gaussian measure on
    (-inf, -h_l/sqrt(v)) (tanh--sinh on the probability scale, no cut-off).
    """
    K = h.shape[0]
    m = (K + 1) // 2
    sv = math.sqrt(v)
    pp = np.empty(K)
    for j in range(K):
        pp[j] = H_nb(-h[j] / sv)
    # P(n_+ >= m)
    buf = np.empty(K + 1)
    qq = np.empty(K)
    for j in range(K):
        qq[j] = 1.0 - pp[j]
    tot = 0.0
    for k in range(m, K + 1):
        tot += _esym(pp, qq, -1, k, buf)
    Y = tot
    a1 = 1.0 + y * v
    sig = math.sqrt(v / a1)
    pref = np.empty(K)
    muj = np.empty(K)
    for j in range(K):
        pref[j] = math.exp(-y * h[j] * h[j] / (2.0 * a1)) / math.sqrt(a1)
        muj[j] = h[j] / a1
    c = np.empty(K)
    b = np.empty(K)
    for l in range(K):
        brk[0] = -h[l] / sv
        gs_fill(brk, xs, xcs, tw, zbuf, wbuf)
        nl = xs.shape[0]  # left tail nodes come first
        acc = 0.0
        for i in range(nl):
            wi = wbuf[i]
            if wi == 0.0:
                continue
            lam = h[l] + sv * zbuf[i]
            if lam >= 0.0:
                continue
            s = -lam
            for j in range(K):
                if j == l:
                    continue
                c[j] = pp[j] + pref[j] * _ival(-s, 0.0, muj[j], sig)
                b[j] = H_nb((s + h[j]) / sv)
            acc += wi * math.exp(-0.5 * y * s * s) * _esym(c, b, l, m - 1, buf)
        Y += acc
    return Y


@numba.njit(cache=True)
def _outer_1rsb(z, w, K, q0, y, xs, xcs, tw, logfact):
    n = z.shape[0]
    idx = np.zeros(K, dtype=np.int64)
    h = np.empty(K)
    nn = xs.shape[0]
    zbuf = np.empty(2 * nn)
    wbuf = np.empty(2 * nn)
    brk = np.empty(1)
    v = 1.0 - q0
    sq = math.sqrt(q0)
    acc = 0.0
    while True:
        wt = _multiset_weight(idx, w, logfact)
        if wt > 0.0:
            for j in range(K):
                h[j] = sq * z[idx[j]]
            Y = _inner_Y(h, v, y, xs, xcs, tw, zbuf, wbuf, brk)
            acc += wt * math.log(Y)
        if not _multisets_next(idx, n):
            break
    return acc


# (outer Gauss-Hermite order for the Newton search, inner tanh-sinh level, outer order of the
# final evaluation at the stationary point, outer order of the check rule for the error estimate).  The outer average converges only
# algebraically in the Gauss-Hermite order (K = 3 at the saddle point: n = 10, 14, 20, 30, 40,
# 50, 60 give 3.145440, 3.145728, 3.145825, 3.1458398, 3.1458415, 3.1458418, 3.1458419), so for
# K = 3 the Newton search runs at n = 16 and alpha_c is then evaluated at n = 40 (alpha is
# stationary there, so the residual position error enters only at second order, ~1e-7).
# K = 5 at its saddle point: n = 8, 12, 16 give 3.621054, 3.619331, 3.619289 (inner level 3 vs 5:
# 2e-8), so the search runs at n = 8 and the final value uses n = 16 (check rule n = 12).
_1RSB_ORDER = {3: (16, 5, 40, 30), 5: (8, 3, 16, 12)}
_1RSB_START = np.array([0.575, 3.057])     # (logit q0, log y) near the K = 3 solution


def _energ_1rsb(K, q0, y, n_outer, inner_level):
    z, w = gs.gauss_hermite(n_outer)
    xs, xcs, tw = gs._ts_rule(inner_level)
    return _outer_1rsb(np.ascontiguousarray(z), np.ascontiguousarray(w), K, q0, y,
                       xs, xcs, tw, _LOGFACT)


def _alpha_of(K, q0, y, n_outer, inner_level):
    """alpha on the F = 0 surface of Eq. 1RSB.1: -S(q0, y) / ((2/y) E ln Y)."""
    S = _eqs.s1rsb(q0, y)[0]
    E = 2.0 / y * _energ_1rsb(K, q0, y, n_outer, inner_level)
    if not (math.isfinite(E) and E < 0.0):
        # the inner average underflows for extreme (q0 -> 1, y >> 1) far from the saddle point;
        # there alpha -> alpha_RS (y (1 - q0) fixed), so report "not a candidate" rather than 0
        return math.inf
    return -S / E


def _stationary_2d(f, x0, h=1e-3, tol=1e-7):
    """Stationary point of a smooth f(p), p in R^2, by Newton on central-difference gradients."""
    def grad(p):
        g = np.empty(2)
        for i in range(2):
            e = np.zeros(2)
            e[i] = h
            g[i] = (f(p + e) - f(p - e)) / (2 * h)
        return g

    def hess(p):
        Hm = np.empty((2, 2))
        f0 = f(p)
        for i in range(2):
            for j in range(2):
                ei = np.zeros(2)
                ej = np.zeros(2)
                ei[i] = h
                ej[j] = h
                if i == j:
                    Hm[i, i] = (f(p + ei) - 2 * f0 + f(p - ei)) / (h * h)
                else:
                    Hm[i, j] = (f(p + ei + ej) - f(p + ei - ej) - f(p - ei + ej) + f(p - ei - ej)) / (4 * h * h)
        return Hm
    info = newton(grad, x0, hess, tol=tol, xtol=1e-8, maxiter=30)
    return info, hess(info.x)


@lru_cache(maxsize=16)
def _capacity_1rsb_cached(k, n, lev, n_final=None, n_check=None):
    f = lambda p: _alpha_of(k, 1.0 / (1.0 + math.exp(-p[0])), math.exp(p[1]), n, lev)
    info, Hm = _stationary_2d(f, _1RSB_START.copy())
    q0, y = 1.0 / (1.0 + math.exp(-info.x[0])), math.exp(info.x[1])
    if n_final is None:
        ac = f(info.x)
        fine = _alpha_of(k, q0, y, n + 4, lev + 1)
    else:
        # final value with a fine outer rule; error estimate = change from the check rule
        ac = _alpha_of(k, q0, y, n_final, lev)
        fine = _alpha_of(k, q0, y, n_check, lev)
    return info, ac, fine, np.linalg.eigvalsh(Hm)


def tcm_capacity_1rsb_point(K, *, n_outer=None, inner_level=None):
    """1RSB capacity of the sign TCM at its saddle point (q0, y) (Eq. 1RSB.1).

    alpha_c^1RSB is the stationary value of alpha(q0, y) = -S/E over q0 in (0, 1), y > 0
    (the saddle point of the 1RSB free entropy at which its 1/(1-q1) coefficient vanishes);
    for K = 3, 5 it is a minimum in both directions.  K = 1 (the perceptron, convex
    version space): the minimum sits on the RS boundary (y -> 0), alpha_c^1RSB = 2.
    K odd in [1, 5]: the outer K-dimensional Gaussian average uses the multisets of an
    ``n_outer``-point Gauss--Hermite rule (permutation symmetry), the inner one an exact
    reduction to a 1-d integral (order statistics of the flipped units).

    K = 3: the Newton search uses the n = 16 multiset rule, alpha_c is then evaluated with
    n = 40 at the stationary point: alpha_c^1RSB(3) = 3.145842 (+- 2e-6; confirmed by an
    independent implementation, see docs/committee.md). The thesis's "approx 3.0"
    (Barkai--Hansel--Sompolinsky 1992) is 5 % lower; no stationary point of this ansatz lies
    there.

    Returns a SaddlePoint with params K, order_params q0, y, thermo alpha_c,
    hessian_eigenvalues of alpha(logit q0, log y), extra["quadrature_error"] (K = 3: change
    of alpha_c between the n = 30 and n = 40 outer rules at the same point, an upper
    estimate; K = 5: between n = 12 and n = 16; with explicit ``n_outer``/``inner_level``: change
    with n + 4 and inner level + 1).  K = 5: alpha_c^1RSB = 3.6193 (+- 1e-4).

    K >= 7: :func:`tcm_capacity_1rsb_rqmc` with 25 scramblings of 1024 points (search on the
    first), extra["stderr"] = standard error over the sets (relative ~5e-4 ... 1e-3 for
    K = 7 ... 99), extra["quadrature_error"] = 2 stderr.  Cost on a shared core: ~20 s (K = 7),
    ~1 min (K = 25), ~2 min (K = 49), several minutes (K = 99, see docs/committee.md); the
    result is cached per K for the session.
    """
    k = _check_K(K, "sign")
    if k == math.inf:
        raise ValueError(f"K must be a finite odd integer for the finite-K 1RSB capacity, got {K!r}")
    if k >= 7:
        if n_outer is not None or inner_level is not None:
            raise ValueError(f"n_outer/inner_level apply to K <= 5 only (K >= 7 uses RQMC), got K={K!r}")
        return _capacity_1rsb_rqmc_cached(k)
    if k == 1:
        return SaddlePoint("committee.tcm_capacity_1rsb", {"K": 1, "activation": "sign"},
                           {"q0": 1.0, "y": 0.0}, {"alpha_c": 2.0}, extra={"ansatz": "1rsb",
                           "note": "perceptron: 1RSB reduces to RS (minimum on the y -> 0 boundary)",
                           "quadrature_error": 0.0})
    n0, l0, nf, nc = _1RSB_ORDER[k]
    n = n0 if n_outer is None else check_int("n_outer", n_outer, 4)
    lev = l0 if inner_level is None else check_int("inner_level", inner_level, 1)
    if n_outer is not None or inner_level is not None:
        nf = nc = None
    info, ac, fine, eig = _capacity_1rsb_cached(k, n, lev, nf, nc)
    q0 = 1.0 / (1.0 + math.exp(-info.x[0]))
    y = math.exp(info.x[1])
    return SaddlePoint("committee.tcm_capacity_1rsb", {"K": k, "activation": "sign"},
                       {"q0": q0, "y": y}, {"alpha_c": ac}, converged=True, residual=info.residual,
                       iterations=info.iterations, hessian_eigenvalues=eig,
                       extra={"ansatz": "1rsb", "quadrature_error": abs(fine - ac), "alpha_c_fine": fine})


@lru_cache(maxsize=64)
def _capacity_1rsb_rqmc_cached(k):
    r = tcm_capacity_1rsb_rqmc(k, reps=24)
    return SaddlePoint(r.model, r.params, r.order_params, r.thermo, converged=r.converged,
                       residual=r.residual, iterations=r.iterations,
                       hessian_eigenvalues=r.hessian_eigenvalues,
                       extra={**r.extra, "quadrature_error": 2.0 * r.extra["stderr"]})


# --------------------------------------------------------------------------- 1RSB, larger K (Monte Carlo outer)
_GL8 = np.polynomial.legendre.leggauss(8)


@numba.njit(cache=True)
def _inner_Y_grid(h, v, y, gx, gw):
    """Same quantity as :func:`_inner_Y`, O(K^2) per node: common s-grid for all units.

    s in [0, s_max], s_max = max(0, max_l -h_l) + 9 sqrt(v), Gauss-Legendre panels (8 points)
    of width min(sqrt(v), 1/sqrt(y))/2: the factor e^{-y s^2/2} has width 1/sqrt(y), which for
    large K (y ~ 20 (K/3)^1.5) is much narrower than sqrt(v) (panels of width sqrt(v)/2 alone
    were off by 1e-5 at K = 25, 3e-3 at K = 49, 4e-2 at K = 99).  Beyond s_max every
    f_l(s) <= G(9)/sqrt(v), so that neglected part is below K H(9) ~ 1e-19 K.  The panels stop
    early once the rigorous tail bound int_s^inf e^{-y s'^2/2} sum_l f_l e_{m-1} ds' <=
    K/sqrt(v y) H(s sqrt(y)) (f_l <= 1/sqrt(2 pi v), e_{m-1} <= prod (c_j + b_j) <= 1) is below
    1e-17 Y.  Panel width halved changes Y by < 1e-14 (K = 3 ... 99, y up to 3500).
    Leave-one-out sums from prefix/suffix recursions.
    """
    K = h.shape[0]
    m = (K + 1) // 2
    sv = math.sqrt(v)
    pp = np.empty(K)
    qq = np.empty(K)
    for j in range(K):
        pp[j] = H_nb(-h[j] / sv)
        qq[j] = 1.0 - pp[j]
    buf = np.empty(K + 1)
    Y = 0.0
    for k in range(m, K + 1):
        Y += _esym(pp, qq, -1, k, buf)
    a1 = 1.0 + y * v
    sig = math.sqrt(v / a1)
    pref = np.empty(K)
    muj = np.empty(K)
    smax = 0.0
    for j in range(K):
        pref[j] = math.exp(-y * h[j] * h[j] / (2.0 * a1)) / math.sqrt(a1)
        muj[j] = h[j] / a1
        if -h[j] > smax:
            smax = -h[j]
    smax += 9.0 * sv
    sy = math.sqrt(y)
    width = 0.5 * min(sv, 1.0 / sy)
    npan = int(math.ceil(smax / width))
    width = smax / npan
    c = np.empty(K)
    b = np.empty(K)
    pre = np.zeros((K + 1, m))
    suf = np.zeros((K + 2, m))
    tail = K / math.sqrt(v * y)
    for p in range(npan):
        a = p * width
        if tail * H_nb(a * sy) < 1e-17 * Y:
            break
        for i in range(gx.shape[0]):
            s = a + 0.5 * width * (gx[i] + 1.0)
            wi = 0.5 * width * gw[i]
            for j in range(K):
                c[j] = pp[j] + pref[j] * _ival(-s, 0.0, muj[j], sig)
                b[j] = H_nb((s + h[j]) / sv)
            # pre[l][k]: subsets of units < l with k counted (k < m); suf[l][k]: units >= l
            for k in range(m):
                pre[0, k] = 0.0
                suf[K, k] = 0.0
            pre[0, 0] = 1.0
            suf[K, 0] = 1.0
            for l in range(K):
                for k in range(m):
                    v1 = pre[l, k] * b[l]
                    if k > 0:
                        v1 += pre[l, k - 1] * c[l]
                    pre[l + 1, k] = v1
            for l in range(K - 1, -1, -1):
                for k in range(m):
                    v1 = suf[l + 1, k] * b[l]
                    if k > 0:
                        v1 += suf[l + 1, k - 1] * c[l]
                    suf[l, k] = v1
            tot = 0.0
            for l in range(K):
                fl = G_nb((s + h[l]) / sv) / sv
                if fl == 0.0:
                    continue
                e = 0.0
                for k in range(m):
                    e += pre[l, k] * suf[l + 1, m - 1 - k]
                tot += fl * e
            Y += wi * math.exp(-0.5 * y * s * s) * tot
    return Y


@numba.njit(cache=True)
def _outer_1rsb_mc(T, q0, y, gx, gw):
    n, K = T.shape
    sq = math.sqrt(q0)
    v = 1.0 - q0
    h = np.empty(K)
    acc = np.empty(n)
    for r in range(n):
        for j in range(K):
            h[j] = sq * T[r, j]
        acc[r] = math.log(_inner_Y_grid(h, v, y, gx, gw))
    return acc


def _1rsb_start(K):
    """(logit q0, log y) starting point: q0 ~ 1 - 0.95/ln K (>= 0.6), y ~ 20 (K/3)^1.5 (fit to K = 3 ... 25)."""
    q0 = max(0.6, 1.0 - 0.95 / math.log(K)) if K > 3 else 0.64
    y = 21.2 * (K / 3.0) ** 1.5
    return np.array([math.log(q0 / (1.0 - q0)), math.log(y)])


def tcm_capacity_1rsb_rqmc(K, *, log2_points=10, seed=0, x0=None, reps=8):
    """1RSB capacity (Eq. 1RSB.1) for larger odd K with a randomized quasi-Monte Carlo outer average.

    The K-dimensional outer average E_{t0} ln Y uses one scrambled Sobol set of 2^log2_points
    points (fixed during the search, so alpha(q0, y) is smooth and its stationary point is
    found by Newton on finite-difference derivatives); the inner average is exact (1-d
    integral on a Gauss--Legendre grid, O(K^2) per node, see ``_inner_Y_grid``).  The
    scrambled Sobol set reduces the variance of the mean of ln Y ~80x against plain Monte Carlo
    (K = 9 ... 49; a regression control variate on moments of sum t, n_+ - n_-, |t|^2 was tried
    and gave no further gain on top of RQMC).  The error bar ``extra["stderr"]`` is the standard error of the mean
    over the search set and ``reps`` further independent scramblings at the stationary point
    (alpha is stationary there, so the position error of the search enters at second order).

    Cost (wall time of the search + 9 sets, log2_points = 10, on the 2 shared cores under
    load): 9 s (K = 3), 33 s (K = 9), 54 s (K = 25), 64-96 s (K = 35, 49), 5 min (K = 75),
    8 min (K = 99), 20 min (K = 151); each further set costs ~1/60 of that (table in
    docs/committee.md, values in figures/committee_1rsb_largeK.json).  Checked against the multiset rule at
    K = 3, 5.  Returns a SaddlePoint (q0, y, alpha_c; extra: stderr, alpha_c of each set).
    """
    from scipy.stats import qmc
    k = _check_K(K, "sign")
    if k == math.inf or k < 3:
        raise ValueError(f"K must be a finite odd integer >= 3 for tcm_capacity_1rsb_rqmc, got {K!r}")
    m = check_int("log2_points", log2_points, 6)
    nrep = check_int("reps", reps, 2)
    gx, gw = _GL8

    def pts(sd):
        return np.ascontiguousarray(special.ndtri(qmc.Sobol(d=k, scramble=True, seed=sd).random_base2(m)))

    def alpha_at(p, T):
        q0 = 1.0 / (1.0 + math.exp(-p[0]))
        y = math.exp(p[1])
        S = _eqs.s1rsb(q0, y)[0]
        L = _outer_1rsb_mc(T, q0, y, gx, gw)
        if not np.all(np.isfinite(L)):
            return math.inf    # inner average underflow far from the saddle point: not a candidate
        E = 2.0 / y * float(np.mean(L))
        return -S / E if E < 0.0 else math.inf

    T = pts(seed)
    start = _1rsb_start(k) if x0 is None else np.asarray(x0, dtype=float)
    info, Hm = _stationary_2d(lambda p: alpha_at(p, T), start, h=2e-3, tol=1e-6)
    ac = alpha_at(info.x, T)
    vals = [ac] + [alpha_at(info.x, pts(seed + 1 + r)) for r in range(nrep)]
    if not np.all(np.isfinite(vals)):
        raise ConvergenceError("tcm_capacity_1rsb_rqmc: non-finite alpha at the stationary point",
                               x=info.x, diagnostics={"K": k, "alpha_sets": vals})
    se = float(np.std(vals, ddof=1) / math.sqrt(len(vals)))
    eig = np.linalg.eigvalsh(Hm)
    return SaddlePoint("committee.tcm_capacity_1rsb", {"K": k, "activation": "sign"},
                       {"q0": 1.0 / (1.0 + math.exp(-info.x[0])), "y": math.exp(info.x[1])},
                       {"alpha_c": float(np.mean(vals))}, converged=True, residual=info.residual,
                       iterations=info.iterations, hessian_eigenvalues=eig,
                       extra={"ansatz": "1rsb", "stderr": se, "alpha_c_search_set": ac,
                              "alpha_c_sets": [float(v) for v in vals], "points": 2 ** m,
                              "note": f"RQMC outer average; stderr over {len(vals)} scramblings"})


# =========================================================================== ReLU
def relu_kernel_Q(q):
    """Normalized output overlap Q(q) of a balanced ReLU layer and Q'(q) (sympy kernel relu_Q)."""
    q = check_range("q", q, -1.0, 1.0)
    Qv, dQ = np.vectorize(_eqs.relu_Q, otypes=[float, float])(q)
    return Qv, dQ


@numba.njit(cache=True)
def _relu_mean_cost_dir(T, K):
    """mean over rows of K C(t/|t|) (homogeneity: E C(t) = E|t|^2 E C(t/|t|) = K E C(u))."""
    half = K // 2
    acc = 0.0
    u = np.empty(K)
    for r in range(T.shape[0]):
        n2 = 0.0
        for j in range(K):
            n2 += T[r, j] * T[r, j]
        inv = 1.0 / math.sqrt(n2)
        for j in range(K):
            u[j] = T[r, j] * inv
        acc += K * _relu_cost(u, half)
    return acc / T.shape[0]


def _relu_rs_rqmc(K, log2_points=16, reps=8, seed=2024):
    """E_t C(t) for the balanced ReLU TCM by randomized (scrambled Sobol) quasi-Monte Carlo.

    Returns (mean, standard error over ``reps`` independent scramblings).
    """
    from scipy.stats import qmc
    vals = []
    for r in range(reps):
        U = qmc.Sobol(d=K, scramble=True, seed=seed + r).random_base2(log2_points)
        T = special.ndtri(U)
        vals.append(_relu_mean_cost_dir(np.ascontiguousarray(T), K))
    vals = np.array(vals)
    return float(vals.mean()), float(vals.std(ddof=1) / math.sqrt(reps))


@lru_cache(maxsize=32)
def _alpha_rs_relu(K):
    """(alpha_c^RS, standard error) for the balanced ReLU TCM (Eq. RS.4).

    K = 2: E C = 3/4 exactly (derived in docs/committee.md), alpha_c = 4/3.
    K >= 4: randomized QMC (2^16 scrambled Sobol points x 8 scramblings) of K E C(u).
    """
    if K == 2:
        return 4.0 / 3.0, 0.0
    m, se = _relu_rs_rqmc(K)
    return 1.0 / m, se / (m * m)


def relu_rs_capacity_error(K):
    """Standard error of ``tcm_capacity(K, "relu", "rs")`` (0 for K = 2 and K = inf: exact)."""
    check_choice("activation", "relu", ACTIVATIONS)
    k = _check_K(K, "relu")
    return 0.0 if k == math.inf else float(_alpha_rs_relu(k)[1])


def _relu_inf_1rsb():
    """K = inf ReLU 1RSB capacity via the effective perceptron with kernel Q(q)."""
    z, w = gs.gauss_hermite(96)
    dQ1 = float(_eqs.relu_Q(1.0)[1])  # = pi/(pi - 1): sympy cancels the -q/sqrt(1-q^2) terms exactly

    def alpha_of(p):
        q0 = 1.0 / (1.0 + math.exp(-p[0]))
        y = math.exp(p[1])
        Q0 = _eqs.relu_Q(q0)[0]
        S = _eqs.s1rsb(q0, y)[0]
        E = 2.0 / y * _eqs.eff_1rsb(z, w, math.sqrt(Q0), math.sqrt(1.0 - Q0), y / dQ1)
        return -S / E
    return alpha_of


def tcm_capacity(K, activation="sign", ansatz="rs"):
    r"""Storage capacity alpha_c of the tree committee machine (a float).

    * sign, rs: thesis Eq. 3.5 (derived and confirmed; quadrature accurate to ~1e-13 relative),
      K odd >= 1; ``K = math.inf`` returns ``math.inf`` (alpha_c^RS = sqrt(72/pi) sqrt(K)
      (1 + O(K^-1/2)), see :func:`rs_large_K_coefficient`).
    * sign, 1rsb: Eq. 1RSB.1 (Barkai--Hansel--Sompolinsky 1992 ansatz at q1 -> 1), any odd K:
      K <= 5 by the multiset rule (K = 3: +-2e-6, K = 5: +-1e-4; K = 5 takes minutes), K >= 7
      by randomized QMC (relative standard error ~5e-4 ... 1e-3, reported by
      ``tcm_capacity_1rsb_point(K).extra["stderr"]``; ~30 s at K = 7, ~1 min at K = 25,
      ~10 min at K = 99, ~25 min at K = 151 on a loaded shared machine, cached per K);
      ``K = math.inf`` returns ``math.inf`` (the capacity grows like (8/pi) sqrt(ln K), derived, see
      :func:`one_rsb_large_K_coefficient` and :func:`tcm_1rsb_large_K`; Monasson--Zecchina's
      internal-representation calculation gives (16/pi) sqrt(ln K)).
    * relu, rs: Eq. RS.4 with the exact ReLU flip cost; K even; K = 2: 4/3 exactly (derived),
      K >= 4 by randomized quasi-Monte Carlo on the unit sphere (homogeneity of C; relative
      standard error ~1e-4, reported by :func:`relu_rs_capacity_error`), ``K = math.inf``:
      2 pi/(pi - 1) (effective perceptron, Q'(1) = pi/(pi-1)).
    * relu, 1rsb: ``K = 2``: 4/3 = RS (alpha(q0, y) of Eq. 1RSB.1 exceeds 4/3 everywhere and tends to it
      on the RS boundary, see :func:`relu_capacity_1rsb_point`); ``K = 4``: 2.316 +- 0.002 by RQMC
      with an importance-sampled inner average (:func:`relu_capacity_1rsb_rqmc`, ~1 min; 2.3167 +- 0.0008
      from finer point sets); ``K = 6``: 2.578 +- 0.002 (same method, ~1.5 min; 2.581 +- 0.003 from finer sets);
      ``K = math.inf`` (effective perceptron with kernel Q, Eq. 1RSB.1); K >= 8 not implemented.
    """
    check_choice("activation", activation, ACTIVATIONS)
    check_choice("ansatz", ansatz, ANSATZE)
    k = _check_K(K, activation)
    if activation == "sign":
        if ansatz == "rs":
            return math.inf if k == math.inf else _alpha_rs_sign(k)
        if k == math.inf:
            return math.inf
        return float(tcm_capacity_1rsb_point(k).alpha_c)
    # relu
    if ansatz == "rs":
        if k == math.inf:
            return 2.0 * math.pi / (math.pi - 1.0)
        return float(_alpha_rs_relu(k)[0])
    if k == 2:
        return float(relu_capacity_1rsb_point(2).alpha_c)
    if k in (4, 6):
        return float(relu_capacity_1rsb_rqmc(k).alpha_c)
    if k != math.inf:
        raise ValueError(f"K must be 2, 4, 6 or math.inf for the ReLU 1RSB capacity (K >= 8 not validated; "
                         f"alpha(q0, y) from relu_1rsb_alpha_rqmc), got {K!r}")
    return float(_relu_inf_1rsb_point().alpha_c)


@lru_cache(maxsize=1)
def _relu_inf_1rsb_point():
    """alpha_c^1RSB of the K = inf balanced ReLU TCM: interior minimum of alpha(q0, y)."""
    f = _relu_inf_1rsb()
    info, Hm = _stationary_2d(f, np.array([math.log(0.7 / 0.3), math.log(10.0)]), tol=1e-9)
    q0 = 1.0 / (1.0 + math.exp(-info.x[0]))
    return SaddlePoint("committee.tcm_capacity_1rsb", {"K": math.inf, "activation": "relu"},
                       {"q0": q0, "y": math.exp(info.x[1])}, {"alpha_c": f(info.x)},
                       converged=True, residual=info.residual, iterations=info.iterations,
                       hessian_eigenvalues=np.linalg.eigvalsh(Hm), extra={"ansatz": "1rsb"})


# =========================================================================== ReLU, K = 2: finite-K 1RSB and finite-alpha RS
# Correct region of the K = 2 balanced ReLU machine: R = {lambda_1 > 0, lambda_1 > lambda_2}, a convex
# cone of opening 3 pi/4.  C(lambda) = dist(lambda, R)^2; the plane splits into R (C = 0), the normal
# strip of the ray {lambda_1 = 0, lambda_2 < 0} (A: lambda_1 < 0, lambda_2 < 0, C = lambda_1^2), the
# normal strip of the ray lambda_1 = lambda_2 > 0 (B: lambda_2 > lambda_1, lambda_1 + lambda_2 > 0,
# C = (lambda_2 - lambda_1)^2/2) and the polar wedge (P: lambda_2 > 0, lambda_1 + lambda_2 < 0, C = |lambda|^2).
# Kink rays of C (angles of t): -pi/2, pi/4, 3pi/4, pi.
from .gaussian import inv_mills_nb, ndtri_nb  # noqa: E402  (ReLU block only)
_RELU2_BREAKS = (-0.5 * math.pi, 0.25 * math.pi, 0.75 * math.pi, math.pi, 1.5 * math.pi)
_RHO2 = 1.0 / math.sqrt(2.0)


@kernels
def _relu2_eqs():
    """K = 2 ReLU closed forms (docs/committee.md, "ReLU hidden units", Eqs. R2.1-R2.3), written once."""
    h1, h2, v, y = sp.symbols("h1 h2 v y", real=True)
    a1 = 1 + y * v
    # log of int_{-inf}^0 N(lam; h, v) e^{-y lam^2/2} dlam = e^{-y h^2/(2 a1)}/sqrt(a1) H(h/sqrt(v a1))
    lhalf = lambda h: -y * h ** 2 / (2 * a1) - sp.log(a1) / 2 + LogH(h / sp.sqrt(v * a1))
    # region A: lambda_1 < 0 (cost lambda_1^2), lambda_2 < 0 (free)
    lA = lhalf(h1) + LogH(h2 / sp.sqrt(v))
    # region B: u = (lambda_2 - lambda_1)/sqrt 2 > 0 (cost u^2), w = (lambda_1 + lambda_2)/sqrt 2 > 0 (free)
    mu_u = (h2 - h1) / sp.sqrt(2)
    mu_w = (h1 + h2) / sp.sqrt(2)
    lB = lhalf(-mu_u) + LogH(-mu_w / sp.sqrt(v))
    # region P: N(lam; h, v I) e^{-y |lam|^2/2} = e^{-y|h|^2/(2 a1)}/a1 N(lam; h/a1, v/a1 I)
    lPpref = -y * (h1 ** 2 + h2 ** 2) / (2 * a1) - sp.log(a1)
    s = sp.sqrt(v / a1)
    # P(lam_2 > 0, lam_1 + lam_2 < 0) = P(X < a, Y < b), X = -(lam_2 - m_2)/s,
    # Y = (lam_1 + lam_2 - m_1 - m_2)/(sqrt 2 s), corr(X, Y) = -1/sqrt 2
    aP = h2 / (a1 * s)
    bP = -(h1 + h2) / (sp.sqrt(2) * a1 * s)
    # region R: P(lam_1 > 0, lam_1 > lam_2) = P(X < a, Y < b), corr 1/sqrt 2
    aR = h1 / sp.sqrt(v)
    bR = (h1 - h2) / sp.sqrt(2 * v)
    args = (h1, h2, v, y)
    return {"lA": Scalar(args, lA), "lB": Scalar(args, lB), "lPpref": Scalar(args, lPpref),
            "aP": Scalar(args, aP), "bP": Scalar(args, bP), "aR": Scalar(args, aR), "bR": Scalar(args, bR)}


@numba.njit(cache=True)
def _relu_ell(s, B, rho, sig):
    """l(s) = log phi(s) + log H((B - rho s)/sig) and l'(s), l''(s) (log-concave integrand)."""
    w = (B - rho * s) / sig
    lh = log_H_nb(w)
    M = inv_mills_nb(w)
    r = rho / sig
    return (-0.5 * s * s - 0.9189385332046727 + lh, -s + r * M, -1.0 - r * r * M * (M - w))


@numba.njit(cache=True)
def _log_bvn(a, b, rho, xs, xcs, tw):
    """log P(X < a, Y < b) for a standard bivariate normal with correlation rho, |rho| < 1.

    = log int_A^inf phi(s) H((B - rho s)/sig) ds with A = -a, B = -b, sig = sqrt(1 - rho^2).
    The integrand e^{l(s)} is log-concave with -l'' in [1, 1/sig^2]; s* = argmax over s >= A
    (safeguarded Newton), then  P = e^{l(s*)} (L + R),
      R = int_0^inf e^{l(s*+r)-l*} dr,   r = -ln(u)/beta, beta = max(1, -l'(s*)),
      L = int_0^{s*-A} e^{l(s*-r)-l*} dr, r = -ln(u), u in (e^{-(s*-A)}, 1),
    each a tanh--sinh rule in u (the core's rule on (0, 1)): the mapped integrands are smooth and
    bounded, no cut-off, and nothing underflows however deep in the tail (a, b -> -inf).
    """
    A = -a
    B = -b
    sig = math.sqrt(1.0 - rho * rho)
    l0, d0, _ = _relu_ell(A, B, rho, sig)
    if d0 <= 0.0:
        s = A
        ls, ds = l0, d0
    else:
        lo = A
        hi = A + d0   # l'' <= -1: l'(A + d0) <= 0
        s = A + 0.5 * d0
        for _ in range(100):
            ls, ds, dds = _relu_ell(s, B, rho, sig)
            if ds > 0.0:
                lo = s
            else:
                hi = s
            sn = s - ds / dds
            if not (lo < sn < hi):
                sn = 0.5 * (lo + hi)
            if abs(sn - s) <= 1e-15 * (1.0 + abs(s)) or hi - lo <= 1e-15 * (1.0 + abs(s)):
                s = sn
                break
            s = sn
        ls, ds, _ = _relu_ell(s, B, rho, sig)
        if ds > 0.0:
            ds = 0.0
    beta = -ds if -ds > 1.0 else 1.0
    R = 0.0
    for i in range(xs.shape[0]):
        wi = tw[i]
        x = xs[i]
        r = (-math.log(x) if x < 0.5 else -math.log1p(-xcs[i])) / beta
        lr, _, _ = _relu_ell(s + r, B, rho, sig)
        R += wi * math.exp(lr - ls + beta * r)
    R /= beta
    L = 0.0
    D = s - A
    if D > 0.0:
        em = math.expm1(-D)    # -(1 - e^{-D})
        eD = math.exp(-D)
        for i in range(xs.shape[0]):
            # u = e^{-D} + (1 - e^{-D}) x, r = -ln u (near u = 1 from 1 - u = (1 - e^{-D}) xc)
            r = -math.log(eD - em * xs[i]) if xs[i] < 0.5 else -math.log1p(em * xcs[i])
            lr, _, _ = _relu_ell(s - r, B, rho, sig)
            L += tw[i] * math.exp(lr - ls + r)
        L *= -em
    return ls + math.log(L + R)


@numba.njit(cache=True)
def _relu2_rs_point(u1, u2, xs, xcs, tw):
    """ln Z, grad_u ln Z, Hessian_u ln Z for Z = P(lam_1 > 0, lam_1 > lam_2), lam_l = u_l + z_l (Eq. R2.4).

    Z = Phi_2(a, b; 1/sqrt 2), a = u_1, b = (u_1 - u_2)/sqrt 2;  with w_a = (b - rho a)/sig,
    dZ/da = phi(a) Phi(w_a), d2Z/da db = phi(a) phi(w_a)/sig, d2Z/da2 = -a dZ/da - rho d2Z/da db.
    """
    rho = 0.7071067811865476
    sig = rho
    a = u1
    b = (u1 - u2) * rho
    lZ = _log_bvn(a, b, rho, xs, xcs, tw)
    la = -0.5 * a * a - 0.9189385332046727
    lb = -0.5 * b * b - 0.9189385332046727
    wa = (b - rho * a) / sig
    wb = (a - rho * b) / sig
    ga = math.exp(la + log_H_nb(-wa) - lZ)
    gb = math.exp(lb + log_H_nb(-wb) - lZ)
    p2 = math.exp(la - 0.5 * wa * wa - 0.9189385332046727 - math.log(sig) - lZ)
    haa = -a * ga - rho * p2 - ga * ga
    hbb = -b * gb - rho * p2 - gb * gb
    hab = p2 - ga * gb
    # chain rule, (a, b) = J u with J = [[1, 0], [rho, -rho]]
    g1 = ga + rho * gb
    g2 = -rho * gb
    h11 = haa + 2.0 * rho * hab + rho * rho * hbb
    h12 = -rho * hab - rho * rho * hbb
    h22 = rho * rho * hbb
    return lZ, g1, g2, h11, h12, h22


@lru_cache(maxsize=8)
def _relu2_polar(level):
    """Polar rule for E_t f(t), t ~ N(0, I_2): (cos, sin, r-nodes, weights) flattened.

    r: u = e^{-r^2/2} uniform on (0, 1), tanh--sinh in u (no cut-off); theta: tanh--sinh on each
    piece between the kink rays of C (_RELU2_BREAKS), weight dtheta/(2 pi).
    """
    x, xc, w = gs._ts_rule(level)
    m = x < 0.5
    lu = np.empty_like(x)
    lu[m] = np.log(x[m])
    lu[~m] = np.log1p(-xc[~m])
    r = np.sqrt(-2.0 * lu)
    th, wth = [], []
    for lo, hi in zip(_RELU2_BREAKS[:-1], _RELU2_BREAKS[1:]):
        L = hi - lo
        th.append(np.where(x < 0.5, lo + L * x, hi - L * xc))
        wth.append(L * w / (2.0 * math.pi))
    th = np.concatenate(th)
    wth = np.concatenate(wth)
    keep_r = w > 0
    keep_t = wth > 0
    T1 = (r[keep_r][None, :] * np.cos(th[keep_t])[:, None]).ravel()
    T2 = (r[keep_r][None, :] * np.sin(th[keep_t])[:, None]).ravel()
    W = (wth[keep_t][:, None] * w[keep_r][None, :]).ravel()
    return np.ascontiguousarray(T1), np.ascontiguousarray(T2), np.ascontiguousarray(W)


@numba.njit(cache=True)
def _log_bvn_many(a, b, rho, xs, xcs, tw):
    out = np.empty(a.shape[0])
    for i in range(a.shape[0]):
        out[i] = _log_bvn(a[i], b[i], rho, xs, xcs, tw)
    return out


@numba.njit(cache=True)
def _relu2_rs_average(T1, T2, W, x, xs, xcs, tw):
    """E_t over the polar rule of: ln Z, sum_l t_l d lnZ/du_l, and the replicon blocks
    a = E[(d11 lnZ)^2 + (d22 lnZ)^2]/2 (label-symmetrized), b = E[(d12 lnZ)^2] at u = x t."""
    s0 = 0.0
    s1 = 0.0
    a = 0.0
    b = 0.0
    for k in range(T1.shape[0]):
        w = W[k]
        t1 = T1[k]
        t2 = T2[k]
        lZ, g1, g2, h11, h12, h22 = _relu2_rs_point(x * t1, x * t2, xs, xcs, tw)
        s0 += w * lZ
        s1 += w * (t1 * g1 + t2 * g2)
        a += w * 0.5 * (h11 * h11 + h22 * h22)
        b += w * h12 * h12
    return s0, s1, a, b


# default (outer polar tanh-sinh level, inner level of the 1-d log Phi_2 integral) for K = 2 ReLU;
# measured: outer level 3 vs 5 changes E ln Z by 3e-11 at q = 0.95, inner level 3 is exact to ~5e-14
_RELU2_LEVELS = (3, 3)


def _relu2_rs_averages(q, levels):
    lo, li = levels
    T1, T2, W = _relu2_polar(lo)
    xs, xcs, tw = gs._ts_rule(li)
    return _relu2_rs_average(T1, T2, W, math.sqrt(q / (1.0 - q)), xs, xcs, tw)


def _relu2_residual(alpha, q, levels):
    """(1-q)^2 * 2 ds/dq of Eq. RS.1 with the K = 2 ReLU Z (same form as RS.2)."""
    s1 = _relu2_rs_averages(q, levels)[1]
    return q + alpha * math.sqrt((1.0 - q) / q) * s1


def _relu2_storage_one(alpha, levels, tol):
    params = {"alpha": alpha, "K": 2, "activation": "relu"}
    if alpha == 0.0:
        return SaddlePoint("committee.tcm_storage", params, {"q": 0.0, "q_hat": 0.0}, {"entropy": 0.0},
                           True, 0.0, 0, np.array([0.5]), 1.0, True, {"ansatz": "rs"})
    if alpha >= 4.0 / 3.0:
        raise ValueError(f"alpha must be < alpha_c^RS(K=2, relu) = 4/3 for a finite-volume RS solution, got {alpha!r}")
    f = lambda q: _relu2_residual(alpha, q, levels)
    try:
        info = root_scalar(f, (1e-12, 1.0 - 1e-9), xtol=1e-14)
    except ConvergenceError as exc:
        raise ConvergenceError(f"tcm_storage(relu): RS saddle point not bracketed at alpha={alpha}",
                               diagnostics={"alpha": alpha, "K": 2}) from exc
    q = float(info.x[0])
    l0, d, A11, A12 = _relu2_rs_averages(q, levels)
    gsv, dgs, _ = _eqs.gs_rs(q)
    entropy = gsv + alpha * l0
    # accuracy: the same averages on the next-coarser outer rule (an upper estimate)
    lc, dc, A11c, A12c = _relu2_rs_averages(q, (levels[0] - 1, levels[1]))
    rc = q + alpha * math.sqrt((1.0 - q) / q) * dc
    hq = 1e-5 * min(q, 1.0 - q)
    dsp = lambda qq: _relu2_residual(alpha, qq, levels) / (2.0 * (1.0 - qq) ** 2)
    hess = (dsp(q + hq) - dsp(q - hq)) / (2.0 * hq)
    quad_err = max(abs(rc / (2.0 * (1.0 - q) ** 2 * hess)), alpha * abs(lc - l0))
    # replicon (Eq. RS.3): 1 - alpha K lambda_max(A), A = [[a, b], [b, a]], b >= 0 -> 1 - 2 alpha (a + b)
    replicon = 1.0 - 2.0 * alpha * (A11 + A12)
    if quad_err > tol:
        raise ConvergenceError(f"tcm_storage(relu): quadrature error estimate {quad_err:.2e} exceeds tol={tol:g} "
                               f"at alpha={alpha} (q={q:.6f}); raise `level`", x=[q],
                               diagnostics={"alpha": alpha, "K": 2, "quadrature_error": quad_err})
    if not (math.isfinite(entropy) and math.isfinite(replicon)):
        raise ConvergenceError("tcm_storage(relu) produced a non-finite value", x=[q], diagnostics={"alpha": alpha})
    return SaddlePoint("committee.tcm_storage", params, {"q": q, "q_hat": 2.0 * dgs}, {"entropy": entropy},
                       converged=True, residual=abs(f(q)), iterations=info.iterations,
                       hessian_eigenvalues=np.array([hess]), replicon=replicon, rs_stable=bool(replicon > 0),
                       extra={"ansatz": "rs", "quadrature_error": quad_err, "quadrature_levels": levels,
                              "replicon_coarse": 1.0 - 2.0 * alpha * (A11c + A12c),
                              "replicon_blocks": (A11, A12)})


def _relu_storage(alpha, K, level, tol):
    """ReLU branch of :func:`tcm_storage` (K = 2 only)."""
    k = _check_K(K, "relu")
    if k != 2:
        raise ValueError(f"K must be 2 for tcm_storage with activation='relu' (finite-alpha RS for K >= 4 "
                         f"is not implemented), got {K!r}")
    a = check_range("alpha", alpha, 0.0)
    lo = _RELU2_LEVELS[0] if level is None else check_int("level", level, 2)
    tol = float(check_range("tol", tol, 0.0, lo_open=True, allow_inf=True))
    return vectorize_over(lambda al, guess=None: _relu2_storage_one(al, (lo, _RELU2_LEVELS[1]), tol), a,
                          model="committee.tcm_storage")


def relu_at_line(K=2, *, level=None):
    """alpha_AT of the K = 2 ReLU TCM: where the replicon (Eq. RS.3) of the RS solution vanishes.

    The replicon is evaluated at alpha = 0.05 and 1.32; it is positive at both (and on every
    alpha tested in between), and its q -> 1 limit is 1 - alpha E||Hess_u C/2||_F^2 = 1 - 3 alpha/4,
    which vanishes exactly at alpha_c = 4/3 (derived in docs/committee.md).  So the RS solution
    is stable up to capacity and 4/3 is returned (marginal at capacity, as for the perceptron).
    A sign change, if one were found, would be located by Brent.
    """
    k = _check_K(K, "relu")
    if k != 2:
        raise ValueError(f"K must be 2 for relu_at_line, got {K!r}")
    lo = _RELU2_LEVELS[0] if level is None else check_int("level", level, 2)
    return _relu2_at_line_cached(lo)


@lru_cache(maxsize=4)
def _relu2_at_line_cached(lo):
    lev = (lo, _RELU2_LEVELS[1])
    f = lambda a: _relu2_storage_one(a, lev, math.inf).replicon
    a_lo, a_hi = 0.05, 1.32
    flo, fhi = f(a_lo), f(a_hi)
    if flo > 0 and fhi > 0:
        # no instability below alpha_c: the replicon tends to 1 - alpha_c E||Hess C/2||_F^2
        # = 1 - (4/3)(3/4) = 0 as q -> 1 (marginal at capacity, like the perceptron)
        return 4.0 / 3.0
    if not (flo > 0 > fhi):
        raise ConvergenceError("relu_at_line: replicon sign change not bracketed in [0.05, 1.32]",
                               diagnostics={"K": 2, "replicon_lo": flo, "replicon_hi": fhi})
    return float(root_scalar(f, (a_lo, a_hi), xtol=1e-8, rtol=1e-10).x[0])


# --------------------------------------------------------------------------- K = 2 ReLU, 1RSB at capacity
def _relu2_log_Y(h1, h2, v, y, inner_level=None):
    """ln Y(h), Y(h) = E_{lambda ~ N(h, v I)} exp(-y C(lambda)/2) for the K = 2 ReLU machine (Eq. R2.2).

    Exact: Y = P_R + I_A + I_B + I_P over the four regions of C (see ``_relu2_eqs``); I_A, I_B
    factorize into closed forms, P_R and I_P are bivariate-normal orthant probabilities with
    correlations +1/sqrt 2 and -1/sqrt 2 (``_log_bvn``).  Vectorized over h1, h2 (arrays).
    """
    xs, xcs, tw = gs._ts_rule(_RELU2_LEVELS[1] if inner_level is None else inner_level)
    h1 = np.ascontiguousarray(np.atleast_1d(np.asarray(h1, dtype=float)))
    h2 = np.ascontiguousarray(np.atleast_1d(np.asarray(h2, dtype=float)))
    e = _relu2_eqs
    lA = e.lA_v(h1, h2, v, y)
    lB = e.lB_v(h1, h2, v, y)
    lR = _log_bvn_many(e.aR_v(h1, h2, v, y), e.bR_v(h1, h2, v, y), _RHO2, xs, xcs, tw)
    lP = e.lPpref_v(h1, h2, v, y) + _log_bvn_many(e.aP_v(h1, h2, v, y), e.bP_v(h1, h2, v, y), -_RHO2,
                                                    xs, xcs, tw)
    return np.logaddexp(np.logaddexp(lR, lA), np.logaddexp(lB, lP))


def _relu2_alpha_of(q0, y, outer_level, inner_level=None):
    """alpha(q0, y) = -S/E of Eq. 1RSB.1 for K = 2 ReLU; E = (2/y) E_{t0} ln Y(sqrt(q0) t0), polar outer rule."""
    T1, T2, W = _relu2_polar(outer_level)
    sq = math.sqrt(q0)
    E = 2.0 / y * float(np.dot(W, _relu2_log_Y(sq * T1, sq * T2, 1.0 - q0, y, inner_level)))
    S = _eqs.s1rsb(q0, y)[0]
    if not (math.isfinite(E) and E < 0.0):
        return math.inf
    return -S / E


# (q0, y) grid on which alpha(q0, y) > alpha_c^RS is verified for K = 2 (outer polar level 2)
_RELU2_1RSB_GRID = ((0.05, 0.2, 0.4, 0.6, 0.8, 0.9, 0.95), (0.5, 2.0, 8.0, 30.0, 150.0, 1000.0))


@lru_cache(maxsize=2)
def _relu2_1rsb_scan(outer_level):
    q0s, ys = _RELU2_1RSB_GRID
    return np.array([[_relu2_alpha_of(q0, y, outer_level) for y in ys] for q0 in q0s])


def relu_capacity_1rsb_point(K=2, *, outer_level=2):
    """1RSB capacity of the balanced ReLU TCM at finite K (Eq. 1RSB.1 with the ReLU flip cost); K = 2.

    alpha(q0, y) = -S/E with E = (2/y) E_{t0} ln Y(sqrt(q0) t0) and the inner average Y in
    closed form (Eq. R2.2: four regions of C, two bivariate-normal orthant probabilities);
    the outer 2-d average uses the polar tanh--sinh rule with breaks on the kink rays of C.
    Result (docs/committee.md): alpha(q0, y) > 4/3 at every q0 in (0, 1), y > 0, and
    alpha -> 1/E C = 4/3 both for y -> 0 and for q0 -> 1 at fixed y (1 - q0); there is no
    interior stationary point, the infimum is the RS boundary: alpha_c^1RSB(K = 2) = alpha_c^RS
    = 4/3.  This agrees with the replicon of the RS solution, positive up to alpha_c (the
    K = 2 solution space is an intersection of half-spaces per pattern, a convex cone).

    The scan behind this is recomputed here: ``extra["grid_alpha"]`` on the (q0, y) grid
    ``extra["grid"]``; a ConvergenceError is raised if any grid value falls below 4/3 (then an
    interior minimum would exist and the boundary value would be wrong).  Returns a SaddlePoint
    with q0 = 1, y = 0 (the RS boundary, as for the sign perceptron K = 1) and alpha_c.
    """
    k = _check_K(K, "relu")
    if k != 2:
        raise ValueError(f"K must be 2 for relu_capacity_1rsb_point (K >= 4 not implemented), got {K!r}")
    lev = check_int("outer_level", outer_level, 2)
    grid = _relu2_1rsb_scan(lev)
    a_rs = _alpha_rs_relu(2)[0]
    excess = float(grid.min() - a_rs)
    if not excess > 0.0:
        raise ConvergenceError("relu_capacity_1rsb_point: alpha(q0, y) below the RS value on the scan grid; "
                               "an interior 1RSB minimum exists", residual=excess, diagnostics={"K": 2})
    # the RS boundary value, approached as y -> 0 (checked: alpha(q0, 1e-4) - 4/3 = O(1e-5))
    return SaddlePoint("committee.tcm_capacity_1rsb", {"K": 2, "activation": "relu"},
                       {"q0": 1.0, "y": 0.0}, {"alpha_c": a_rs}, converged=True, residual=0.0, iterations=0,
                       extra={"ansatz": "1rsb", "grid": _RELU2_1RSB_GRID, "grid_alpha": grid,
                              "grid_min_excess": excess,
                              "note": "minimum on the RS boundary (y -> 0 or q0 -> 1): 1RSB = RS for K = 2"})


# --------------------------------------------------------------------------- ReLU 1RSB, K >= 4 (RQMC)


@numba.njit(cache=True)
def _relu_outer_1rsb_is(T, Zin, shifts, q0, y):
    """Per outer point t0 (rows of T): ln Y(sqrt(q0) t0) by importance-sampled QMC, and C(sqrt(q0) t0).

    Inner set: a scrambled Sobol net (uniforms in ``Zin``), rotated per outer point by
    ``shifts[r]`` (Cranley--Patterson) and mapped by ndtri.  Defensive two-component importance
    sampler for Y (plain sampling of N(h, vI) fails for large y: exp(-y C/2) is then carried by
    rare near-feasible points).

    Proposal m = (N(h, vI) + N(mu*, vI))/2, mu* = (h + y v P(h))/(1 + y v), P(h) the nearest
    correct point (``_relu_proj``): mu* is the mode of N(lambda; h, v) e^{-y C/2} when C is
    locally the squared distance to a face.  The first half of the (Sobol) net feeds the first
    component, the second half the second (each half is itself a net; deterministic allocation,
    balance heuristic; the jackknife halves are quarters {0, 2} and {1, 3}):
    Y = mean_i e^{-y C(lambda_i)/2} / ((1 + r(lambda_i))/2),  r = N(lambda; mu*, v)/N(lambda; h, v).
    The weights are bounded by 2, so the estimator is never worse than twice plain sampling.
    Returns (jackknife-corrected ln Y, ln Y, C(h)) per outer point.
    """
    n, K = T.shape
    ni = Zin.shape[0]
    half = ni // 2
    quarter = ni // 4
    sq = math.sqrt(q0)
    v = 1.0 - q0
    sv = math.sqrt(v)
    lam = np.empty(K)
    h = np.empty(K)
    P = np.empty(K)
    mu = np.empty(K)
    d = np.empty(K)
    out = np.empty(n)
    out0 = np.empty(n)
    ch = np.empty(n)
    a1 = 1.0 + y * v
    for r in range(n):
        for j in range(K):
            h[j] = sq * T[r, j]
        ch[r] = _relu_proj(h, K // 2, P)
        dd = 0.0
        for j in range(K):
            mu[j] = (h[j] + y * v * P[j]) / a1
            d[j] = mu[j] - h[j]
            dd += d[j] * d[j]
        ya = 0.0
        yb = 0.0
        for i in range(ni):
            for j in range(K):
                u = Zin[i, j] + shifts[r, j]
                if u >= 1.0:
                    u -= 1.0
                if u <= 0.0:
                    u = 0.5 / 4294967296.0
                z = ndtri_nb(u)
                lam[j] = (h[j] if i < half else mu[j]) + sv * z
            e = 0.0
            for j in range(K):
                e += (lam[j] - h[j]) * d[j]
            lr = (e - 0.5 * dd) / v
            if lr > 0.0:
                wgt = 2.0 * math.exp(-lr) / (1.0 + math.exp(-lr))
            else:
                wgt = 2.0 / (1.0 + math.exp(lr))
            c = math.exp(-0.5 * y * _relu_cost(lam, K // 2)) * wgt
            if (i // quarter) % 2 == 0:
                ya += c
            else:
                yb += c
        lf = math.log((ya + yb) / ni)
        la = math.log(ya / half) if ya > 0.0 else lf
        lb = math.log(yb / half) if yb > 0.0 else lf
        out[r] = 2.0 * lf - 0.5 * (la + lb)
        out0[r] = lf
    return out, out0, ch


def _cv_mean(f, c, c_mean):
    """Control-variate mean of f with control c of known mean c_mean (least-squares coefficient)."""
    cc = c - c.mean()
    b = float(np.dot(cc, f - f.mean()) / np.dot(cc, cc))
    return float(np.mean(f - b * (c - c_mean)))


def relu_1rsb_alpha_rqmc(q0, y, K=4, *, log2_outer=10, log2_inner=10, seed=0, reps=2):
    """alpha(q0, y) of Eq. 1RSB.1 for the balanced ReLU TCM at finite even K >= 4.

    alpha(q0, y) = -S/E, E = (2/y) E_{t0} ln Y(sqrt(q0) t0), Y(h) = E_{lambda ~ N(h, (1-q0) I)}
    exp(-y C(lambda)/2) with the exact ReLU flip cost C (water filling, ``_relu_cost``).
    Outer average: a scrambled Sobol set of 2^log2_outer points with C(sqrt(q0) t0) as a control
    variate (its mean q0/alpha_c^RS(K) is known from the RS RQMC).  Inner: a scrambled Sobol net
    of 2^log2_inner points, Cranley--Patterson rotated per outer point, feeding a defensive
    two-component importance sampler (N(h, vI) and N(mu*, vI), mu* the tilted mode from the
    nearest correct point; ``_relu_outer_1rsb_is``), with a jackknife correction of the Jensen
    bias of ln Y.  Checked at K = 2 against the exact ln Y: per-point error 1e-3, bias 1e-5 at
    2^10 inner points, also at y = 40 (plain sampling: 0.5 at y = 40).  The 1RSB capacity is
    the minimum of alpha(q0, y) (:func:`relu_capacity_1rsb_rqmc`), so every value is an upper
    bound on alpha_c^1RSB (up to its error).

    Returns (alpha, stderr, inner_change): mean over ``reps`` independent randomizations, its
    standard error, and the change of alpha when the inner net is halved.
    """
    from scipy.stats import qmc
    k = _check_K(K, "relu")
    if k == math.inf or k < 4:
        raise ValueError(f"K must be a finite even integer >= 4 for relu_1rsb_alpha_rqmc, got {K!r}")
    q0 = float(check_range("q0", q0, 0.0, 1.0, lo_open=True, hi_open=True))
    y = float(check_range("y", y, 0.0, lo_open=True))
    mo = check_int("log2_outer", log2_outer, 4)
    mi = check_int("log2_inner", log2_inner, 4)
    reps = check_int("reps", reps, 2)
    a_rs = _alpha_rs_relu(k)[0]
    S = _eqs.s1rsb(q0, y)[0]
    vals, halves = [], []
    for r in range(reps):
        sd = seed + r
        T = np.ascontiguousarray(special.ndtri(qmc.Sobol(d=k, scramble=True, seed=sd).random_base2(mo)))
        U = np.ascontiguousarray(qmc.Sobol(d=k, scramble=True, seed=sd + 7919).random_base2(mi))
        sh = np.ascontiguousarray(np.random.default_rng(sd + 104729).random((2 ** mo, k)))
        lc, _, ch = _relu_outer_1rsb_is(T, U, sh, q0, y)
        E = 2.0 / y * _cv_mean(lc, ch, q0 / a_rs)
        lh, _, _ = _relu_outer_1rsb_is(T, np.ascontiguousarray(U[: U.shape[0] // 2]), sh, q0, y)
        Eh = 2.0 / y * _cv_mean(lh, ch, q0 / a_rs)
        if not (E < 0.0 and Eh < 0.0):
            raise ConvergenceError("relu_1rsb_alpha_rqmc: the energetic term is not negative (too few points "
                                   "for this tiny y?)", diagnostics={"q0": q0, "y": y, "E": E})
        vals.append(-S / E)
        halves.append(-S / Eh)
    vals = np.array(vals)
    return (float(vals.mean()), float(vals.std(ddof=1) / math.sqrt(reps)),
            float(vals.mean() - np.mean(halves)))


def _relu_1rsb_sets(k, mo, mi, sd):
    from scipy.stats import qmc
    T = np.ascontiguousarray(special.ndtri(qmc.Sobol(d=k, scramble=True, seed=sd).random_base2(mo)))
    U = np.ascontiguousarray(qmc.Sobol(d=k, scramble=True, seed=sd + 7919).random_base2(mi))
    sh = np.ascontiguousarray(np.random.default_rng(sd + 104729).random((2 ** mo, k)))
    return T, U, sh


@lru_cache(maxsize=8)
def _relu_capacity_1rsb_rqmc_cached(k, mo, mi, seed, reps, progress=True):
    from tqdm.auto import tqdm
    a_rs = _alpha_rs_relu(k)[0]
    bar = tqdm(desc=f"ReLU K={k} 1RSB: alpha(q0, y) evaluations", disable=not progress, leave=False)

    def alpha_at(p, st):
        q0 = 1.0 / (1.0 + math.exp(-p[0]))
        y = math.exp(p[1])
        lc, _, ch = _relu_outer_1rsb_is(*st, q0, y)
        E = 2.0 / y * _cv_mean(lc, ch, q0 / a_rs)
        bar.update(1)
        return -_eqs.s1rsb(q0, y)[0] / E if E < 0.0 else math.inf

    st = _relu_1rsb_sets(k, mo, mi, seed)
    f = lambda pp: alpha_at(pp, st)
    p = np.array([math.log(0.75 / 0.25), math.log(12.0)])
    d = 0.4
    its = 0
    for _ in range(10):
        its += 1
        off = [(i, j) for i in (-1, 0, 1) for j in (-1, 0, 1)]
        P = np.array([p + d * np.array(o) for o in off])
        F = np.array([f(pp) for pp in P])
        X = np.column_stack([np.ones(9), P[:, 0] - p[0], P[:, 1] - p[1], (P[:, 0] - p[0]) ** 2,
                             (P[:, 0] - p[0]) * (P[:, 1] - p[1]), (P[:, 1] - p[1]) ** 2])
        c = np.linalg.lstsq(X, F, rcond=None)[0]
        Hm = np.array([[2 * c[3], c[4]], [c[4], 2 * c[5]]])
        ok = bool(np.all(np.linalg.eigvalsh(Hm) > 0))
        step = -np.linalg.solve(Hm, c[1:3]) if ok else None
        if not ok or np.max(np.abs(step)) > 1.5 * d:
            p = P[int(np.argmin(F))]      # recentre on the best grid point
            continue
        p = p + step
        if d < 0.15:
            break
        d *= 0.5
    else:
        raise ConvergenceError("relu_capacity_1rsb_rqmc: no interior minimum of alpha(q0, y) found",
                               x=p, diagnostics={"K": k})
    resid = float(np.max(np.abs(c[1:3] + Hm @ (p - P[4]))))
    vals = np.array([alpha_at(p, _relu_1rsb_sets(k, mo, mi, seed + r)) for r in range(reps)])
    half = np.array([alpha_at(p, (lambda s3: (s3[0], np.ascontiguousarray(s3[1][: s3[1].shape[0] // 2]), s3[2]))(
        _relu_1rsb_sets(k, mo, mi, seed + r))) for r in range(reps)])
    bar.close()
    if not (np.all(np.isfinite(vals)) and np.all(np.isfinite(half))):
        raise ConvergenceError("relu_capacity_1rsb_rqmc: non-finite alpha at the minimum", x=p, diagnostics={"K": k})
    return p, resid, its, Hm, vals, half


def relu_capacity_1rsb_rqmc(K=4, *, log2_outer=10, log2_inner=10, seed=0, reps=4, progress=True):
    """1RSB capacity of the balanced ReLU TCM at K = 4 (Eq. 1RSB.1), by RQMC with importance sampling.

    alpha_c^1RSB = min over (q0, y) of alpha(q0, y) = -S/E (see :func:`relu_1rsb_alpha_rqmc` for
    the estimator: control-variate RQMC outer average, importance-sampled rotated-QMC inner
    average with jackknife).  The minimum is located at fixed point sets by quadratic fits on
    3 x 3 grids in (logit q0, log y) (recentred until the fitted minimum is inside, then refined);
    alpha is stationary there, so the position error enters at second order.  alpha_c is the
    mean over ``reps`` independent randomizations at the minimum; ``extra["stderr"]`` their
    standard error, ``extra["inner_change"]`` the change when the inner net is halved.
    K = 4: alpha_c^1RSB = 2.3167 +- 0.0008 at q0 = 0.754, y = 11.8 (docs/committee.md), 6.4 % below
    alpha_c^RS(4) = 2.47463.  K = 6: 2.578 +- 0.002 with the default sets at q0 = 0.723, y = 11.5
    (inner change 1.7e-3), 2.581 +- 0.003 from finer sets, 7.8 % below alpha_c^RS(6) = 2.7981.
    Takes ~1 min.  Returns a SaddlePoint (q0, y, alpha_c; hessian_eigenvalues of the fitted
    quadratic in (logit q0, log y)).
    """
    k = _check_K(K, "relu")
    if k not in (4, 6):
        raise ValueError(f"K must be 4 or 6 for relu_capacity_1rsb_rqmc (the finite K >= 4 validated), got {K!r}")
    mo = check_int("log2_outer", log2_outer, 6)
    mi = check_int("log2_inner", log2_inner, 6)
    reps = check_int("reps", reps, 2)
    p, resid, its, Hm, vals, half = _relu_capacity_1rsb_rqmc_cached(k, mo, mi, int(seed), reps, bool(progress))
    return SaddlePoint("committee.tcm_capacity_1rsb", {"K": k, "activation": "relu"},
                       {"q0": 1.0 / (1.0 + math.exp(-p[0])), "y": math.exp(p[1])},
                       {"alpha_c": float(vals.mean())}, converged=True, residual=resid, iterations=its,
                       hessian_eigenvalues=np.linalg.eigvalsh(Hm),
                       extra={"ansatz": "1rsb", "stderr": float(vals.std(ddof=1) / math.sqrt(reps)),
                              "inner_change": float(vals.mean() - half.mean()), "alpha_reps": vals,
                              "points": (2 ** mo, 2 ** mi),
                              "note": "RQMC outer (control variate) x importance-sampled QMC inner"})
