r"""Tree committee machines at large K: the K -> inf continuum theories.

Sign units:

* RS: alpha_c^RS = sqrt(72/pi) sqrt(K) (1 + O(K^-1/2)), :func:`rs_large_K_coefficient`;
* 1RSB: the continuum limit of Eq. 1RSB.1 (Eq. 1RSB.L), :func:`tcm_1rsb_large_K`, with
  alpha_c^1RSB / sqrt(ln K) -> 8/pi (:func:`one_rsb_large_K_coefficient`);
  :func:`monasson_zecchina` is the (16/pi) sqrt(ln K) law of Monasson & Zecchina (1995).

Balanced ReLU units, K = inf (central limit over branches: an effective perceptron with
output overlap Q(q), :func:`relu_kernel_Q`):

* RS: alpha_c = 2 Q'(1) = 2 pi/(pi - 1) (returned by :func:`statmech.committee.tcm_capacity`);
* 1RSB: Eq. 1RSB.1 for the effective perceptron (``_relu_inf_1rsb_point``).
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from .. import gaussian as gs
from ..errors import ConvergenceError, check_range
from ..result import check_real
from ..saddle import SaddlePoint
from ._common import _stationary_2d
from ._kernels import _eqs
from ._large_k_kernels import _log_inner_continuum_nb

__all__ = ["rs_large_K_coefficient", "monasson_zecchina", "one_rsb_large_K_coefficient", "tcm_1rsb_large_K",
           "relu_kernel_Q"]


# --------------------------------------------------------------------------- sign units
def rs_large_K_coefficient():
    """c with alpha_c^RS = c sqrt(K) (1 + O(K^-1/2)) for sign units: c = 12/sqrt(2 pi) = sqrt(72/pi).

    Derivation (docs/committee.md): for K -> inf the surplus of negative units is
    D = sqrt(K) Z, Z ~ N(0, 1); the D/2 flipped units are those with ``|t| < s*``, ``s* =
    D sqrt(2 pi)/(2K)``, so C = Z^3/(24 phi(0)^2 sqrt(K)) for Z > 0 and E C = sqrt(2 pi)/(12 sqrt K).
    """
    return 12.0 / math.sqrt(2.0 * math.pi)


def monasson_zecchina(K):
    """Large-K 1RSB capacity law of Monasson & Zecchina (1995): (16/pi) sqrt(ln K).

    Domain: K >= 1 (float or array; ``math.inf`` gives inf)."""
    check_real("K", K, function="monasson_zecchina")
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


# --------------------------------------------------------------------------- sign 1RSB: the continuum limit (Eq. 1RSB.L)
_GL10 = np.polynomial.legendre.leggauss(10)


def _log_inner_continuum(m, s, yh, n_panels):
    r"""ln E_g exp(-yh (m + s g)_+^3), g ~ N(0, 1), in log space (Eq. 1RSB.L inner average).

    = ln[Phi(-m/s) + int_0^inf N(u; m, s^2) e^{-yh u^3} du]; the integrand is log-concave with
    its maximum at u* (closed form), integrated on log-spaced Gauss--Legendre panels to the left
    (down to max(0, u* - 40 s)) and right (up to u* + 40 sigma) of u*; no cut-off matters at
    double precision (the log-integrand has dropped by > 800 there).
    """
    m = np.ascontiguousarray(m, dtype=float)
    return _log_inner_continuum_nb(m, float(s), float(yh), int(n_panels), _GL10[0], _GL10[1])


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


def tcm_1rsb_large_K(K=None, *, ln_K=None, level=4, n_panels=16, start=None):
    r"""Large-K continuum limit of the sign 1RSB capacity (Eq. 1RSB.L), a SaddlePoint.

    For K -> inf the number of excess negative units is O(sqrt K) and flipping D units of
    smallest ``|lambda|`` costs D^3/(3 K^2 phi(0)^2); with y = 48 phi(0)^2 sqrt(K) yh and
    a = (2/pi) asin(q0), Eq. 1RSB.1 becomes

        alpha(q0, yh) = [ln(1 + y(1-q0)) + q0 y/(1 + y(1-q0))] / (2 G(q0, yh)),
        G = -E_zeta ln E_g exp(-yh (-(sqrt(a) zeta + sqrt(1-a) g))_+^3),          (1RSB.L)

    minimized over (q0, yh).  Valid only asymptotically (it ignores the discreteness of small
    numbers of flips, so it overestimates the finite-K values: 6.04 vs 4.82 at K = 25); its
    purpose is the K -> inf behaviour: alpha / sqrt(ln K) -> 8/pi
    (:func:`one_rsb_large_K_coefficient`), approached from below and only logarithmically
    slowly.  Pass ``K`` (odd integer or float >= 3) or ``ln_K`` (for astronomically large K).
    Accuracy: quadrature change to (level + 1, 2 n_panels) in ``extra["quadrature_error"]``.
    ``start``: ``(q0, y_hat)`` of a nearby solution (the previous point of a curve in ln K);
    Newton starts there.  Without it, or when Newton fails from it, a Nelder--Mead search
    from the asymptotic solution brings Newton into the basin.  The minimum found is the
    same to < 1e-14 relative either way.
    """
    if (K is None) == (ln_K is None):
        raise ValueError("tcm_1rsb_large_K: give exactly one of K or ln_K")
    check_real("K" if ln_K is None else "ln_K", K if ln_K is None else ln_K, function="tcm_1rsb_large_K")
    if ln_K is None:
        K = check_range("K", K, 3.0)
        ln_K = math.log(K)
    else:
        ln_K = check_range("ln_K", ln_K, math.log(3.0))
    def f(p):
        q0 = 1.0 / (1.0 + math.exp(-p[0]))
        return _continuum_alpha(ln_K, q0, math.exp(p[1]), level, n_panels)

    def newton_from(p0, f0):
        """(info, eigenvalues, q0, yh, alpha_c, finer-quadrature alpha_c, accepted) of Newton from p0."""
        info, Hm = _stationary_2d(f, p0, h=1e-3, tol=1e-9 * max(1.0, f0), name="tcm_1rsb_large_K",
                                  where=f"ln_K={ln_K!r}")
        q0, yh = 1.0 / (1.0 + math.exp(-info.x[0])), math.exp(info.x[1])
        ac = f(info.x)
        fine = _continuum_alpha(ln_K, q0, yh, level + 1, 2 * n_panels)
        ev = np.linalg.eigvalsh(Hm)
        return info, ev, q0, yh, ac, fine, bool(np.all(ev > 0) and abs(fine - ac) < 1e-6 * ac)

    found = None
    nit = 0
    if start is not None:
        q0s, yhs = (float(v) for v in start)
        if not (0.0 < q0s < 1.0 and 0.0 < yhs < math.inf):
            raise ValueError(f"start must be (q0, y_hat) with 0 < q0 < 1 and y_hat > 0, got {start!r}")
        p0 = np.array([math.log(q0s / (1.0 - q0s)), math.log(yhs)])
        try:
            found = newton_from(p0, f(p0))
        except ConvergenceError:
            found = None
        if found is not None and not found[-1]:
            found = None                         # not a converged interior minimum: search instead
    if found is None:
        # the asymptotic solution v = 2/ln K, yh from the slope balance (loose); Nelder-Mead only
        # brings it into the basin, Newton converges (tighter simplex tolerances cost 50% more
        # evaluations and move alpha_c by < 1e-14)
        from scipy.optimize import minimize
        p0 = np.array([math.log((1.0 - 2.0 / max(ln_K, 4.0)) * max(ln_K, 4.0) / 2.0), math.log(max(ln_K, 4.0) ** 2)])
        r = minimize(f, p0, method="Nelder-Mead", options={"xatol": 1e-3, "fatol": 1e-8, "maxiter": 4000})
        nit = r.nit
        found = newton_from(r.x, r.fun)
    info, ev, q0, yh, ac, fine, accepted = found
    if not accepted:
        raise ConvergenceError("tcm_1rsb_large_K: no converged interior minimum",
                               residual=abs(fine - ac), diagnostics={"ln_K": ln_K, "q0": q0, "yh": yh,
                                                                     "hessian_eigenvalues": ev})
    return SaddlePoint("committee.tcm_1rsb_large_K", {"ln_K": ln_K},
                       {"q0": q0, "y_hat": yh, "y": _PHI0SQ48 * yh * math.exp(0.5 * ln_K) if ln_K < 1400 else math.inf},
                       {"alpha_c": ac, "ratio": ac / math.sqrt(ln_K)}, converged=True,
                       residual=info.residual, iterations=info.iterations + nit, hessian_eigenvalues=ev,
                       ansatz="1rsb", extra={"quadrature_error": abs(fine - ac), "coefficient": one_rsb_large_K_coefficient()})


# --------------------------------------------------------------------------- balanced ReLU units, K = inf
def relu_kernel_Q(q):
    """Normalized output overlap Q(q) of a balanced ReLU layer and Q'(q) (sympy kernel relu_Q)."""
    check_real("q", q, function="relu_kernel_Q")
    q = check_range("q", q, -1.0, 1.0)
    Qv, dQ = np.vectorize(_eqs.relu_Q, otypes=[float, float])(q)
    return Qv, dQ


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


@lru_cache(maxsize=1)
def _relu_inf_1rsb_point():
    """alpha_c^1RSB of the K = inf balanced ReLU TCM: interior minimum of alpha(q0, y)."""
    f = _relu_inf_1rsb()
    info, Hm = _stationary_2d(f, np.array([math.log(0.7 / 0.3), math.log(10.0)]), tol=1e-9,
                              name="tcm_capacity", where="K=inf, activation='relu', ansatz='1rsb'")
    q0 = 1.0 / (1.0 + math.exp(-info.x[0]))
    return SaddlePoint("committee.tcm_capacity_1rsb", {"K": math.inf, "activation": "relu"},
                       {"q0": q0, "y": math.exp(info.x[1])}, {"alpha_c": f(info.x)},
                       converged=True, residual=info.residual, iterations=info.iterations,
                       hessian_eigenvalues=np.linalg.eigvalsh(Hm), ansatz="1rsb", extra={"ansatz": "1rsb"})
