r"""Balanced ReLU committee from finite K to K = inf: the leading 1/sqrt(K) correction and the fit.

:func:`relu_large_K_correction` -- the coefficient ``a`` of ``alpha_c(K) = alpha_c(inf) - a/sqrt(K)
+ O(1/K)`` for RS and k-step RSB (docs/committee.md, Eqs. RK.1--RK.3: the cubic term the units
near zero add to the flip cost, to first order at the K = inf minimum);
:func:`relu_large_K_fit` -- weighted least-squares extrapolation of finite-K capacities to
K = inf with that law (``a`` fixed or free).
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from ..errors import check_range
from ..rsb.nested_quadrature import jammed_spherical_entropic, nested_jamming_average
from ..saddle import SaddlePoint
from .large_k_rsb import _PHI0, _SLOPE, K_STEP_MAX, _check_inf_ansatz, _kstep_point, _rs_replicon

__all__ = ["relu_large_K_correction", "relu_large_K_fit"]


def relu_large_K_correction(ansatz="1rsb"):
    r"""Leading finite-K correction of the balanced ReLU capacity: ``alpha_c(K) = alpha_c(inf) - a/sqrt(K) + O(1/K)``.

    Derivation (docs/committee.md, "ReLU: from finite K to K = inf", Eqs. RK.1--RK.3): at large K the
    flip cost of the balanced ReLU layer, as a function of the normalized output field Y of the
    point it starts from, is ``C = Y_-^2/s + (phi(0) sigma^3/(3 sqrt K)) Y_-^3 + O(1/K)``
    (``s = Q'(1) = pi/(pi - 1)``, ``sigma^2 = Var relu = 1/2 - 1/(2 pi)``): the units within the
    water-filling shift of zero (~sqrt K of them) can only be switched off (negative units) or
    switched on at a cost (positive units), which adds a cubic term.  The other finite-K effects
    (fluctuations of the number of active units, non-Gaussian output) enter at O(1/K).  To first
    order the minimum of R moves by its partial derivative, so
    ``a = R <Y_-^3> / (-Phi) * phi(0) sigma/12`` with ``<Y_-^3>`` the cubic moment of the output
    field under the nested tilted measure of the K = inf minimizer
    (:func:`statmech.rsb.nested_quadrature.nested_jamming_average` with ``cubic=True``).  RS
    (``yhat -> 0``): ``a = 2 phi(0)^2/(3 sigma) = 0.181740`` in closed form.

    Parameters
    ----------
    ansatz : ``"rs"``, ``"1rsb"``, ..., ``"6rsb"`` (ValueError naming ansatz otherwise; full RSB is
        not offered: its grids do not carry the measure of the continuum)

    Returns
    -------
    SaddlePoint (model ``committee.relu_large_K_correction``): ``thermo["a"]`` (headline),
    ``thermo["alpha_c"]`` (the K = inf value it corrects; ``stability``, ``rs_stable`` and
    ``hessian_eigenvalues`` are those of that K = inf point: the RS replicon, or the k-step
    Hessian), ``extra["cubic_moment"]``
    (``<Y_-^3>``), ``extra["Phi"]`` (the nested average), ``extra["eps_per_inverse_sqrt_K"]``
    (``phi(0) sigma/12``: the coefficient of the cubic term of the terminal in units of
    ``1/sqrt K``).  ``error`` is the node-doubling change of the quadrature (exact for RS).
    """
    a = _check_inf_ansatz(ansatz, "relu_large_K_correction")
    if a == "frsb":
        raise ValueError("ansatz must be 'rs', '1rsb', ..., "
                         f"'{K_STEP_MAX}rsb' for relu_large_K_correction (not 'frsb'), got {ansatz!r}")
    return _relu_large_K_correction(a)


@lru_cache(maxsize=16)
def _relu_large_K_correction(ansatz):
    phi0 = _PHI0
    sig = math.sqrt(0.5 - 0.5 / math.pi)
    s = _SLOPE["relu"]
    eps1 = phi0 * sig / 12.0
    model, params = "committee.relu_large_K_correction", {"activation": "relu", "ansatz": ansatz}
    if ansatz == "rs":
        coef = 2.0 * phi0 * phi0 / (3.0 * sig)
        rep = _rs_replicon("relu")          # the RS jamming point it corrects is unstable (replicon 1 - Q'(1))
        return SaddlePoint(model, params, {}, {"a": coef, "alpha_c": 2.0 * s}, True, 0.0, 0, None, rep, bool(rep >= 0),
                           {"cubic_moment": 2.0 * phi0, "Phi": -0.25, "eps_per_inverse_sqrt_K": eps1}, "rs",
                           headline="a", stability=np.array([rep]))
    pt = _kstep_point("relu", 0.0, int(ansatz[:-3]), False)
    q, yh = np.asarray(pt.q, dtype=float), np.asarray(pt.yhat, dtype=float)
    Q = np.asarray(pt.Q, dtype=float).copy()
    Q[-1] = 1.0
    vals = []
    for ppw in (1.0, 2.0):
        phi, dphi = nested_jamming_average(Q, yh, panels_per_width=ppw, cubic=True)
        R = -s * jammed_spherical_entropic(q, s * yh) / phi
        vals.append((R * dphi / phi * eps1, phi, dphi))
    coef, phi, dphi = vals[0]
    return SaddlePoint(model, params, {"q": q, "yhat": yh}, {"a": coef, "alpha_c": pt.alpha_c}, True, pt.residual,
                       pt.iterations, pt.hessian_eigenvalues, None, pt.rs_stable,
                       {"cubic_moment": -dphi, "Phi": phi, "eps_per_inverse_sqrt_K": eps1}, ansatz,
                       error=abs(vals[1][0] - coef), headline="a", stability=pt.stability)


def relu_large_K_fit(Ks, alpha, stderr, ansatz="rs", *, fix_a=True, fix_inf=False, fix_b=False):
    r"""Extrapolate finite-K ReLU capacities to K = inf with the law of :func:`relu_large_K_correction`.

    Weighted least squares (weights ``1/stderr^2``) of ``alpha_K = alpha_inf - a/sqrt(K) + b/K``, the
    large-K expansion.  ``a`` is fixed to the derived coefficient when ``fix_a``, else fitted;
    ``alpha_inf`` is fitted unless ``fix_inf`` (then fixed to the K = inf value of the ansatz: a
    test of ``a``); ``b`` is fitted unless ``fix_b`` (then 0: for two or three K only).  Valid only where the small-K effects are negligible: they fall by a factor
    4--6 per step of 2 in K and still dominate at K <= 8 (docs/committee.md: the RS fit over
    K = 8, 10, 12 is 0.050 too high, over K >= 12 it agrees with 2 pi/(pi - 1) within its error).

    Parameters
    ----------
    Ks : increasing even integers >= 2 (more entries than fitted parameters)
    alpha, stderr : capacities and their standard errors (> 0)
    ansatz : ``"rs"``, ``"1rsb"``, ..., ``"6rsb"`` (selects ``a`` and the K = inf value compared with)
    fix_a, fix_inf, fix_b : see above

    Returns
    -------
    SaddlePoint (model ``committee.relu_large_K_fit``): ``thermo["alpha_inf"]`` (headline, with
    ``error`` = its 1-sigma error, scaled by sqrt(chi2/dof) when that exceeds 1; 0 when fixed),
    ``thermo["alpha_c_inf_theory"]``, ``order_params`` ``a`` and ``b``; ``extra``: their errors,
    ``chi2``, ``dof``, ``pull`` ((alpha_inf - theory)/error), ``residuals`` (data - fit).
    ``residual`` is the largest gradient component of chi2/2 (0 up to rounding).  ValueError naming
    the argument outside the domain.
    """
    a_ = _check_inf_ansatz(ansatz, "relu_large_K_fit")
    K = np.asarray(check_range("Ks", Ks, 2.0), dtype=float).ravel()
    y = np.asarray(check_range("alpha", alpha, 0.0, lo_open=True), dtype=float).ravel()
    e = np.asarray(check_range("stderr", stderr, 0.0, lo_open=True), dtype=float).ravel()
    if not (K.size == y.size == e.size):
        raise ValueError(f"Ks, alpha and stderr must have the same length, got {K.size}, {y.size}, {e.size}")
    if np.any(K != np.round(K)) or np.any(K % 2) or np.any(np.diff(K) <= 0):
        raise ValueError(f"Ks must be increasing even integers >= 2, got {Ks!r}")
    corr = relu_large_K_correction(a_)
    a0, theory = float(corr.a), float(corr.alpha_c)
    w = 1.0 / e
    cols, names = ([], []) if fix_b else ([1.0 / K], ["b"])
    rhs = y.copy()
    if fix_a:
        rhs += a0 / np.sqrt(K)
    else:
        cols.append(-1.0 / np.sqrt(K))
        names.append("a")
    if fix_inf:
        rhs -= theory
    else:
        cols.insert(0, np.ones_like(K))
        names.insert(0, "alpha_inf")
    if not cols:
        raise ValueError("fix_a, fix_inf and fix_b leave nothing to fit: free at least one of a, alpha_inf, b")
    X = np.column_stack(cols)
    if K.size <= X.shape[1]:
        raise ValueError(f"Ks must have more than {X.shape[1]} entries for this fit, got {K.size}")
    A = X * w[:, None]
    p, *_ = np.linalg.lstsq(A, rhs * w, rcond=None)
    cov = np.linalg.pinv(A.T @ A)
    res = (rhs - X @ p) * w
    chi2 = float(res @ res)
    dof = int(K.size - len(names))
    scale = max(1.0, math.sqrt(chi2 / dof))
    vals = dict(zip(names, (float(v) for v in p)))
    errs = {f"{n}_error": float(math.sqrt(max(cov[i, i], 0.0)) * scale) for i, n in enumerate(names)}
    ainf = vals.pop("alpha_inf", theory)
    err = errs.pop("alpha_inf_error", 0.0)
    return SaddlePoint("committee.relu_large_K_fit",
                       {"ansatz": a_, "fix_a": bool(fix_a), "fix_inf": bool(fix_inf), "fix_b": bool(fix_b), "Ks": K},
                       {"a": a0, "b": 0.0, **vals}, {"alpha_inf": ainf, "alpha_c_inf_theory": theory}, True,
                       float(np.max(np.abs(A.T @ res))), 0, None, None, None,
                       {**errs, "chi2": chi2, "dof": dof, "pull": (ainf - theory) / err if err > 0 else 0.0,
                        "residuals": res / w}, a_, error=err, headline="alpha_inf", stability=np.zeros(0))
