"""Specialization transitions alpha_s, alpha_c, alpha_d at fixed K or along a sequence of K:
the public entry point, dispatching to the direct solver in scaled variables (:mod:`._direct`),
the Landau reduction for weakly first-order transitions (:mod:`._landau`), the continuation
engine (:mod:`._engine`, with lines continued in K for a sequence) and K = inf
(:mod:`._infinite_k`)."""
from __future__ import annotations

import math

import numpy as np

from ..continuation import continue_point
from ..errors import ConvergenceError, check_choice
from ._activation import activation_info
from ._common import Transitions, _check_specializes, at_point
from ._direct import _transitions_direct
from ._engine import _transitions_continuation
from ._free_energy import _check_K
from ._infinite_k import _transitions_inf
from ._landau import _weak
from ._scaled import _polish_alpha_d

#: largest finite K of :func:`transitions`
K_MAX_TRANSITIONS = 1e12


def transitions(K, activation="erf", *, method="auto"):
    r"""Specialization transitions alpha_s, alpha_c, alpha_d and the order at fixed K.

    From the site-symmetric free energy alone (Oostwal et al. 2019, Eq. 20, eps_g corrected): alpha_d is where
    the unspecialized minimum R = S loses stability; the branch that leaves it there towards
    R > S has a fold at alpha_s < alpha_d (first order: alpha_c from equal free energies, order 1)
    or none (continuous: alpha_s = alpha_c = alpha_d, order 2).  K is any real > 1 or
    ``math.inf`` (then beta f / K reduces to phi(R), see the package docstring).  Every field is a
    number: alpha_s <= alpha_c <= alpha_d, finite for finite K; at K = inf, alpha_d = inf when
    m''(0) = 0 (odd g such as erf, where alpha_d grows like 4 pi K), and ``order`` is 1 or 2.

    ``method``:

    * "direct": the solver in the scaled variables of docs/scm.md ("Any K"): exact stability
      condition of R = S, the branch leaving it followed in delta = R - S (about 0.03 s per K);
    * "continuation": the generic engine :mod:`statmech.continuation` on the free energy, its
      gradient and Hessian in (R, (K-1) S, (K-1) C), the independent cross-check (0.2-1.5 s per
      K; reaches K ~ 100, erf ~ 150); for a sequence of K the fold, coexistence and stability-change
      lines are continued in K (two-parameter continuation) from one analysis at the smallest K > 2;
    * "auto" (default): the Landau reduction at the bifurcation (:mod:`statmech.scm._landau`) if
      the transition is weakly first order, (alpha_d - alpha_c) < 1e-5 alpha_d -- ReLU and ESP
      for K >~ 80, any g for K -> 2+, where free-energy differences fall below double precision
      -- else "direct".  No silent fallback: ``details["solver"]`` names the solver that answered,
      and its failure is raised.

    Raises ValueError for K <= 1, an unknown activation or method, K = inf with m'(0) = 0, or a
    linear pair moment m(rho) (``"linear"``: beta f is then strictly convex in the overlaps, so R = S is
    the only minimum at every alpha and there is no transition).
    Raises ConvergenceError when the chosen solver fails: "direct" where the latent heat is below
    double precision (alpha_c undetermined to 1e-9 alpha_c: ReLU 2 < K <~ 2.03 and K >~ 1e3, erf
    2 < K <~ 2.01; "auto" uses the Landau reduction there; for 0 < K - 2 <~ 1e-6, where the gaps
    are below 1e-13 alpha_d, it reports order 2), where alpha(delta) stays within
    rounding of alpha_d (order undetermined), or where R = S does not lose stability for
    alpha <= max(40 pi K + 400, 40 / m''(0)); "continuation" where the engine finds no
    instability of R = S, no specialized branch or no coexistence (e.g. ReLU K >~ 100, erf
    K >~ 150, some K < 2).  For erf, ReLU and ESP(beta), beta in [0.3, 50], "auto" answered at
    every K tried in [1.01, 1e6] and inf (hypothesis test).
    ``K`` may be a sequence: then a list of :class:`Transitions`.  Domain: K real > 1 up to 1e12, or
    ``math.inf`` (ValueError beyond: there alpha_d - alpha_c of ReLU-like g falls below the rounding of
    alpha); every activation with a nonlinear pair moment.
    Accuracy: about 1e-12 relative for "direct" (against 40-110 digit mpmath solutions of the fold,
    coexistence and det H = 0 in (R, S, C) up to K = 1e6); the engine agrees to 2e-9 (erf 3e-12); the Landau
    reduction's gaps carry a relative error ~ 0.13 / K^2 (ReLU).
    """
    info = activation_info(activation)
    check_choice("method", method, ("auto", "continuation", "direct"))
    _check_specializes(info)
    if np.ndim(K) > 0:
        Ks = [_check_K_transitions(k) for k in np.asarray(K, dtype=float).ravel()]
        if method == "continuation":
            with at_point("transitions", K=f"{len(Ks)} values", activation=info.name, method=method):
                return _transitions_sweep(info, Ks)
        out = []
        for k in Ks:
            with at_point("transitions", K=k, activation=info.name, method=method):
                out.append(_transitions_one(info, k, method))
        return out
    K = _check_K_transitions(K)
    with at_point("transitions", K=K, activation=info.name, method=method):
        return _transitions_one(info, K, method)


def _check_K_transitions(K):
    K = _check_K(K)
    if math.isfinite(K) and K > K_MAX_TRANSITIONS:
        raise ValueError(f"K must be <= {K_MAX_TRANSITIONS:g} or math.inf for transitions, got {K!r} (beyond, "
                         f"alpha_d - alpha_c of ReLU-like g falls below the rounding of alpha)")
    return K


def _transitions_one(info, K, method):
    if math.isinf(K):
        if info.dm0 <= 0:
            raise ValueError("activation must have E[g'(z)] != 0 for K = inf")
        return _transitions_inf(info)
    if method == "continuation":
        return _transitions_continuation(info, K)
    if method == "auto":
        weak = _weak(info, K)
        if weak is not None:
            return weak
    # no silent fallback: a failure is a ConvergenceError with its diagnostics
    return _transitions_direct(info, K)


def _transitions_sweep(info, Ks):
    """Transitions at many K through the engine's two-parameter continuation: one analysis at
    the smallest K > 2, then the fold (alpha_s), the coexistence point (alpha_c) and the stability
    change of R = S (alpha_d) are continued in K and re-solved exactly at every requested K
    (``Curve.p_at``); alpha_d is then polished like in the one-K path (Brent on the exact R = S
    stability condition within 1e-6 of the engine value).  K <= 2 and K = inf are computed one
    by one.  A line that cannot be continued, or a K it does not reach, raises ConvergenceError
    (no fallback)."""
    res = {}
    big = sorted(k for k in set(Ks) if math.isfinite(k) and k > 2.0)
    curves = {}
    if len(big) >= 2:
        t0 = _transitions_continuation(info, big[0])
        eng = t0.details.get("_engine") if t0.order == 1 else None
        if eng is None or eng["stability_change"] is None:
            raise ConvergenceError("transitions: no first-order transition at the smallest K to continue in K",
                                   diagnostics={"K": big[0], "order": t0.order})
        res[big[0]] = t0
        for key, pt in (("alpha_s", eng["fold"]), ("alpha_c", eng["coexistence"]),
                        ("alpha_d", eng["stability_change"])):
            c = continue_point(eng["problem"], pt, "K", big[0], big[-1], ds=0.05)
            if c.q.max() < big[-1] * (1 - 1e-12):
                raise ConvergenceError(f"transitions: the {key} line stopped at K = {c.q.max():.6g} "
                                       f"(status {c.status}) before K = {big[-1]}",
                                       diagnostics={"line": key, "status": c.status, "K_reached": float(c.q.max()),
                                                    "steps": c.branch.steps, "rejected": c.branch.rejected})
            curves[key] = c
    for K in big[1:]:
        vals = {}
        for key in ("alpha_s", "alpha_c", "alpha_d"):
            try:
                vals[key] = curves[key].p_at(K)
            except (ConvergenceError, ValueError) as exc:
                raise ConvergenceError(f"transitions: re-solving the {key} line at K = {K} failed",
                                       diagnostics={"line": key, "K": K, "error": repr(exc)}) from exc
        det = {"solver": "continuation (two-parameter in K)", "alpha_d_engine": vals["alpha_d"]}
        try:
            vals["alpha_d"] = _polish_alpha_d(info, K, vals["alpha_d"], 1e-6)
        except ConvergenceError:
            det["alpha_d_polish"] = "not bracketed within 1e-6: engine value kept"
        res[K] = Transitions(K, info.name, vals["alpha_s"], vals["alpha_c"], vals["alpha_d"], 1, det)
    out = []
    for K in Ks:
        if K not in res:
            res[K] = _transitions_one(info, K, "continuation")
        out.append(res[K])
    return out
