"""K -> infinity: beta f / K reduced to phi(R) on the optimal manifold sigma = K S = 1 - R,
gamma = K C = 0 (derivation in the package docstring and docs/scm.md)."""
from __future__ import annotations

import math

import numpy as np
from scipy.optimize import minimize_scalar

from ..errors import ConvergenceError, check_range
from ..result import check_real
from ..saddle import SaddlePoint, root_scalar
from ._activation import activation_info
from ._common import Transitions, _check_specializes
from ._equations import _kern


def _phi_roots(info, alpha):
    """Stationary points of phi(R) = beta f / K (K = inf) as (side, e) with R = side (1 - e), and R = 0
    (always stationary: phi'(0) = 0).  phi'(R) is scanned on each side on 400 points uniform in log e from
    e = 1e-3 / (1 + alpha) (beyond the specialized root, e ~ 1 / (2 alpha B)) to 1, each sign change refined
    to rounding (``_kern.phi_roots``, numba)."""
    from ._minima import ref_moments
    m0, m1 = ref_moments(info)
    args = (info.code, info.cc, m0, m1, float(info.dm0), float(alpha))
    out = np.empty((64, 2))
    k = _kern.phi_roots(*args, 400, out)
    return [(1.0, 1.0)] + [(float(out[i, 0]), float(out[i, 1])) for i in range(k)], args


def _equilibria_inf(info, alpha, include_saddles=False):
    """K = inf: minima (and with ``include_saddles`` maxima) of phi(R) = beta f / K on sigma = 1 - R, gamma = 0."""
    roots, args = _phi_roots(info, alpha)
    res = []
    for side, e in roots:
        v, d1, d2, eps, s, R = _kern.phi_at(*args, e, side)
        w = e * (2.0 - e)
        lam = d2 / ((1.0 + R * R) / (w * w))          # relative to the entropy's curvature -s''(R)
        if not (lam > 0 or include_saddles):
            continue
        omr = e if side > 0 else 2.0 - e
        branch = "unspecialized" if e == 1.0 else ("specialized" if side > 0 else "anti-specialized")
        res.append(SaddlePoint("scm.equilibrium", {"alpha": alpha, "K": math.inf},
                               {"R": float(R), "S": float(omr), "C": 0.0},
                               {"free_energy": float(v), "generalization_error": float(eps), "entropy": float(s)},
                               converged=True, residual=abs(float(d1)) * w, iterations=0,
                               hessian_eigenvalues=np.array([lam]), rs_stable=bool(lam > 0),
                               extra={"branch": branch, "site_symmetric_stable": bool(lam > 0),
                                      "full_space_eigenvalues": None, "full_space_stable": None,
                                      "full_space_blocks": None, "activation": info.name, "one_minus_R": float(omr),
                                      "note": "K = inf: beta f / K; S, C are sigma = K S = 1 - R, gamma = K C = 0"},
                               error=8 * 2.3e-16 * (alpha * (abs(eps) + 2.0 * abs(info.dm0) * omr) + abs(s)),
                               stability=np.array([lam]), headline="free_energy"))
    return sorted(res, key=lambda p: p.free_energy)


def _transitions_inf(info):
    """K = inf: transitions of phi(R) = beta f / K (see the module docstring)."""
    def red(R, a):
        return _kern.finf_red_at(info.code, info.cc, info.m0, info.m1, info.dm0, a, R)

    def a_of(R):
        d0 = red(R, 0.0)[1]
        d1 = red(R, 1.0)[1]
        return -d0 / (d1 - d0)
    d2m0 = _kern.moments(info.code, 0.0, info.cc)[2]
    alpha_d = 1.0 / d2m0 if d2m0 > 1e-14 else math.inf
    details = {"solver": "direct (K = inf, one-dimensional)", "note": "alpha_d = 1/m''(0); inf when m''(0) = 0 "
               "(odd g: at finite K alpha_d grows like K / m'''(0), 4 pi K for erf)"}
    grid = np.concatenate([np.geomspace(1e-4, 0.05, 20), np.linspace(0.05, 0.999, 200)[1:]])
    al = np.array([a_of(r) for r in grid])
    j = int(np.argmin(al))
    if j == 0 and al[0] >= alpha_d * (1 - 1e-9):
        return Transitions(math.inf, info.name, alpha_d, alpha_d, alpha_d, 2, details)
    lo, hi = grid[max(j - 1, 0)], grid[min(j + 1, grid.size - 1)]
    r = minimize_scalar(a_of, bounds=(lo, hi), method="bounded", options={"xatol": 1e-12})
    Rs, alpha_s = float(r.x), float(r.fun)

    def df(R):
        a = a_of(R)
        return red(R, a)[0] - red(0.0, a)[0]
    cand = grid[grid > Rs]
    alpha_c = None
    prev, fprev = Rs, df(Rs)
    for R in cand:
        fr = df(R)
        if fprev * fr <= 0:
            Rc = root_scalar(df, (prev, R), xtol=1e-15, rtol=1e-15).x[0]
            alpha_c = float(a_of(Rc))
            details["specialized_at_alpha_c"] = {"R": Rc}
            break
        prev, fprev = R, fr
    if alpha_c is None:
        raise ConvergenceError("K = inf: no coexistence of the specialized and unspecialized minima",
                               diagnostics={"alpha_s": alpha_s, "alpha_d": alpha_d})
    details["specialized_at_alpha_s"] = {"R": Rs}
    return Transitions(math.inf, info.name, alpha_s, alpha_c, alpha_d, 1, details)


def infinite_K_branch(R, activation="relu"):
    r"""K = inf: the stationary curve of phi(R) = beta f / K as alpha(R) (parametric in R).

    phi'(R) = 0 with phi from the module docstring gives alpha(R) = s'(R) / E'(R); returns a
    dict with ``alpha``, ``R``, ``generalization_error`` (per unit, eps_inf at sigma = 1 - R,
    gamma = 0), ``free_energy`` (phi) and ``curvature`` (phi'' > 0: a minimum).  R = 0 (the
    unspecialized plateau) is a stationary point for every alpha, so alpha(0) is undetermined:
    ValueError.  Vectorized over R in (-1, 1), R != 0; ValueError for a linear pair moment (no
    specialized branch, see :func:`transitions`); ConvergenceError where ``|R|`` is so small that
    phi'(R) underflows (alpha(R) is then alpha_d to double precision: use :func:`transitions`).
    """
    check_real("R", R)
    R = np.atleast_1d(np.asarray(check_range("R", R, -1.0, 1.0, lo_open=True, hi_open=True), dtype=float))
    if np.any(R == 0.0):
        raise ValueError("R must be != 0 (R = 0 is stationary at every alpha: alpha(R) undetermined), got 0.0")
    info = activation_info(activation)
    if info.dm0 <= 0:
        raise ValueError("activation must have E[g'(z)] != 0 for K = inf")
    _check_specializes(info)
    out = {k: np.empty(R.shape) for k in ("alpha", "generalization_error", "free_energy", "curvature")}
    for i, r in enumerate(R):
        d0 = _kern.finf_red_at(info.code, info.cc, info.m0, info.m1, info.dm0, 0.0, r)[1]
        d1 = _kern.finf_red_at(info.code, info.cc, info.m0, info.m1, info.dm0, 1.0, r)[1]
        if d1 == d0:   # |R| so small that phi'(R) underflows: alpha(R) -> alpha_d not resolved
            raise ConvergenceError(f"infinite_K_branch: alpha(R) not resolved in double precision at R = {r!r}",
                                   x=[r], diagnostics={"dphi_alpha0": d0, "dphi_alpha1": d1})
        a = -d0 / (d1 - d0)
        o = _kern.finf_red_at(info.code, info.cc, info.m0, info.m1, info.dm0, a, r)
        out["alpha"][i], out["free_energy"][i], out["curvature"][i], out["generalization_error"][i] = a, o[0], o[2], o[3]
    out["R"] = R
    return out



def _large_k_expansion(info):
    """Coefficients of the approach of the finite-K transitions to K = inf (docs/scm.md, "Large K").

    First-order K = inf transition: alpha_x(K) = alpha_x(inf) + a_x / K + O(K^-2) for x = s, c,
    from beta f = K phi(R) + chi(R) + O(1/K) with chi(R) = (1/2) ln(1 - R^2) - R / (1 + R)
    - alpha m''(0) (1 - R)^2 / 2 (the collective overlaps eliminated): a_s = chi'(R_s) /
    (m'(R_s) - m'(0)), a_c = [chi(R_c) - chi(0)] / (m(R_c) - m(0) - m'(0) R_c).  alpha_d: for
    m''(0) = 0 (odd g), alpha_d = K / m'''(0) + [1/(2 m'(0)) - m^(5)(0) / (6 m'''(0)^2)] / K + ...
    (``alpha_d_K``, ``alpha_d_1/K``); for m''(0) > 0 and a continuous K = inf transition
    (m' - m'(0) odd: ReLU, ESP), alpha_d = [1 + (m''/m' - m''''/(2 m'')) / K^2] / m'' (all at 0;
    ``alpha_d_1/K^2`` is the coefficient of 1/K^2) and the weakly first-order gaps
    alpha_d - alpha_s = G_s / K^2, alpha_d - alpha_c = (8/9) G_s / K^2 with
    G_s = (m''''/m'')^2 / (64 b m''), b = 1/4 - m''''/(24 m'') (all at 0; Landau theory).
    Derivatives of m at 0 beyond the second by central differences of m''.
    """
    tinf = _transitions_inf(info)

    def mom(x):
        return _kern.moments(info.code, x, info.cc)
    h = 1e-2
    m2 = [mom(k * h)[2] for k in (-2, -1, 0, 1, 2)]
    d1, d2 = info.dm0, m2[2]
    d3 = (m2[0] - 8 * m2[1] + 8 * m2[3] - m2[4]) / (12 * h)
    d4 = (-m2[0] + 16 * m2[1] - 30 * m2[2] + 16 * m2[3] - m2[4]) / (12 * h * h)
    d5 = (-m2[0] + 2 * m2[1] - 2 * m2[3] + m2[4]) / (2 * h ** 3)
    out = {"alpha_s": tinf.alpha_s, "alpha_c": tinf.alpha_c, "alpha_d": tinf.alpha_d, "order": tinf.order,
           "m_derivatives_at_0": (d1, d2, d3, d4, d5)}
    if tinf.order == 1:
        a = tinf.alpha_s
        Rs = tinf.details["specialized_at_alpha_s"]["R"]
        out["a_s"] = (-Rs / (1 - Rs * Rs) - 1 / (1 + Rs) ** 2 + a * d2 * (1 - Rs)) / (mom(Rs)[1] - d1)
        a = tinf.alpha_c
        Rc = float(tinf.details["specialized_at_alpha_c"]["R"])
        chi = 0.5 * math.log(1 - Rc * Rc) - Rc / (1 + Rc) + a * d2 * Rc * (2 - Rc) / 2
        out["a_c"] = chi / (mom(Rc)[0] - info.m0 - d1 * Rc)
    if math.isinf(tinf.alpha_d) and d3 > 0:
        out["alpha_d_K"] = 1 / d3
        out["alpha_d_1/K"] = 1 / (2 * d1) - d5 / (6 * d3 * d3)
    elif tinf.order == 2:
        b = 0.25 - d4 / (24 * d2)
        out["alpha_d_1/K^2"] = (d2 / d1 - d4 / (2 * d2)) / d2
        out["gap_s_1/K^2"] = (d4 / d2) ** 2 / (64 * b * d2)
        out["gap_c_1/K^2"] = 8 / 9 * out["gap_s_1/K^2"]
    return out
