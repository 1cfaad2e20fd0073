"""Transitions by the direct solver, at any finite K, in the scaled variables of docs/scm.md
("Any K"): y = (delta, t, v) with delta = R - S, v = (K-1) C and t = log(1 + v - u^2),
u = R + (K-1) S.  The default path of :func:`statmech.scm.transitions` (with the Landau
reduction where the transition is weakly first order); the continuation engine is its
independent cross-check.

* alpha_d: on R = S the direction delta decouples exactly, with curvature
  (K-1) [1/(1 - C) - alpha m''(R)]; alpha_d is the first root of alpha m''(R) (1 - C) = 1 along
  the R = S branch (solved for its collective variables by a bracketed 1-D root in v).
* The branches leaving R = S at alpha_d, parametrized by delta: Newton in (t, v, alpha) on the
  stationarity in t and v and on g_delta / ((K-1) delta) = 1/(1 - C - delta^2) - alpha
  (m'(R) - m'(S)) / delta, which is regular at delta = 0.
* alpha_s = minimum of alpha(delta) on delta > 0 (fold; none: continuous transition);
  alpha_c = root of the free-energy difference of the two minima beyond the fold, with the
  resolution of that difference checked (ConvergenceError when the latent heat is below it).
"""
from __future__ import annotations

import math

import numpy as np
from scipy.optimize import minimize_scalar

from ..errors import ConvergenceError
from ..saddle import root_scalar
from ._common import Transitions
from ._equations import _kern
from ._scaled import _EPS, _alpha_d, _overlaps, _parts, _unspec

_FOLD_RTOL = 2e-14  # alpha(delta) is accurate to a few ulp: closer to alpha_d than this is undecided
_DELTA_MIN, _DELTA_0 = 1e-8, 1e-4  # K delta of the first sample, of the first one deciding "continuous"


class _Branch:
    """Stationary points with R - S = delta, warm-started from the nearest known delta."""

    def __init__(self, info, K, delta0, z0):
        self.info, self.K = info, float(K)
        self.known = {float(delta0): np.asarray(z0, dtype=float)}

    def solve(self, delta):
        d0 = min(self.known, key=lambda d: abs(d - delta))
        try:
            z, ok, its = _kern.delta_newton(self.info.code, self.info.cc, self.info.m0, self.info.dm0, self.K,
                                            float(delta), self.known[d0], 60)
        except np.linalg.LinAlgError:
            z, ok, its = self.known[d0], False, 0
        if not ok:
            raise ConvergenceError("direct: branch Newton did not converge", x=z, iterations=its,
                                   diagnostics={"delta": delta, "K": self.K})
        self.known[float(delta)] = z
        return z

    def y(self, delta, z):
        return np.array([delta, z[0], z[1]])


def _family(info, K, alpha_d, sign):
    """The branch leaving R = S at alpha_d towards sign(delta): list of (delta, z = (t, v, alpha))."""
    y0 = _unspec(info, K, alpha_d)
    br = _Branch(info, K, 0.0, (y0[1], y0[2], alpha_d))
    br.solve(0.0)
    # from delta = 1e-8 / K, where alpha(delta) - alpha_d ~ delta^2 reaches rounding: near K = 2
    # the fold sits at delta_s ~ 0.1 (K - 2) and must not be stepped over (order 2 reported)
    deltas = sign * np.concatenate([np.geomspace(_DELTA_MIN / K, _DELTA_0 / K, 5)[:-1],
                                    np.geomspace(_DELTA_0 / K, 0.02, 12 + 4 * int(math.log10(max(K, 1.0)))),
                                    np.linspace(0.02, 0.999, 50)[1:]])
    rows = []
    prev = 0.0
    for d in deltas:
        try:
            rows.append((float(d), _reach(br, prev, float(d))))
        except ConvergenceError:
            break
        prev = float(d)
    return br, rows


def _reach(br, d0, d1, depth=8):
    """Solve at d1 from the known solution at d0, halving the step where Newton fails."""
    try:
        return br.solve(d1)
    except ConvergenceError:
        if depth == 0:
            raise
        _reach(br, d0, 0.5 * (d0 + d1), depth - 1)
        return _reach(br, 0.5 * (d0 + d1), d1, depth - 1)


def _fold(br, rows, alpha_d):
    """(delta_s, alpha_s) of the minimum of alpha(delta), or None when alpha(delta) >= alpha_d and
    visibly rises from it; ConvergenceError when it stays within rounding of alpha_d."""
    al = np.array([z[2] for _, z in rows])
    dl = np.array([d for d, _ in rows])
    j = int(np.argmin(al))
    tol = _FOLD_RTOL * alpha_d
    if al[j] >= alpha_d - tol:
        # no dip down to delta = 1e-8 / K: continuous if alpha(delta) visibly rises at 1e-4 / K
        # (for 0 < K - 2 <~ 1e-6 the fold's dip, ~ (K-2)^2, is below rounding: order 2 reported)
        i0 = int(np.argmax(np.abs(dl) >= _DELTA_0 / br.K * (1 - 1e-9)))
        if al[i0] - alpha_d <= tol:
            raise ConvergenceError("direct: alpha(delta) stays within rounding of alpha_d near delta = 0, "
                                   "the order is undetermined in double precision",
                                   diagnostics={"alpha_d": alpha_d, "delta": dl[i0], "alpha - alpha_d": al[i0] - alpha_d})
        return None
    if j == len(rows) - 1:
        raise ConvergenceError("direct: the branch ended before alpha(delta) turned around",
                               diagnostics={"delta": dl[j], "alpha": al[j]})
    lo = dl[j - 1] if j > 0 else 0.0
    r = minimize_scalar(lambda d: br.solve(d)[2], bounds=(min(lo, dl[j + 1]), max(lo, dl[j + 1])),
                        method="bounded", options={"xatol": 1e-12 * abs(dl[j])})
    return float(r.x), float(min(r.fun, al[j]))


def _free_energy_gap(info, K, br, delta):
    """(Delta beta f = f(branch at delta) - f(R = S at the same alpha), its rounding error, alpha,
    d Delta / d alpha); the alpha K (m(1) - m(0) - m'(0)) term is common and left out."""
    z = br.solve(delta)
    a = z[2]
    Eb, sb = _parts(info, K, br.y(delta, z))
    yu = _unspec(info, K, a)
    Eu, su = _parts(info, K, yu)
    gap = (a * Eb - sb) - (a * Eu - su)
    # t/2 is exact (t is a variable); the other terms carry rounding ~ eps |term|
    err = 8 * _EPS * (abs(a * Eb) + abs(a * Eu) + abs(sb - z[0] / 2) + abs(su - yu[1] / 2))
    return gap, err, a, Eb - Eu


def _transitions_direct(info, K):
    """alpha_s, alpha_c, alpha_d and the order at finite K (see the module docstring)."""
    K = float(K)
    alpha_d = _alpha_d(info, K)
    ud = _unspec(info, K, alpha_d)
    details = {"solver": "direct", "unspecialized_at_alpha_d": _overlaps(K, ud)}
    br, rows = _family(info, K, alpha_d, 1.0)
    if len(rows) < 3:
        raise ConvergenceError("direct: the specialized branch could not be followed from alpha_d",
                               diagnostics={"K": K, "alpha_d": alpha_d, "points": len(rows)})
    abr, arows = _family(info, K, alpha_d, -1.0)
    try:  # the anti-specialized (R < S) branch: reported in details only
        afold = _fold(abr, arows, alpha_d) if len(arows) >= 3 else None
    except ConvergenceError:
        afold = None
    details["anti_specialized_fold"] = None if afold is None else afold[1]
    fold = _fold(br, rows, alpha_d)
    if fold is None:
        details["specialized_emerges_at"] = alpha_d
        return Transitions(K, info.name, alpha_d, alpha_d, alpha_d, 2, details)
    d_fold, alpha_s = fold
    details["specialized_at_alpha_s"] = _overlaps(K, br.y(d_fold, br.solve(d_fold)))
    # alpha_c: sign change of the free-energy difference along the stable part (delta > fold)
    cand = [d_fold] + [d for d, _ in rows if d > d_fold]
    prev = None
    resolved = 0.0  # largest |free-energy difference| in units of its rounding
    for d in cand:
        gap, err, a, slope = _free_energy_gap(info, K, br, d)
        resolved = max(resolved, abs(gap) / err)
        if prev is not None and prev[1] > 0.0 >= gap:
            try:
                dc = float(root_scalar(lambda x: _free_energy_gap(info, K, br, x)[0], (prev[0], d),
                                       xtol=1e-15, rtol=4 * _EPS).x[0])
            except ConvergenceError as exc:  # the sign change was rounding
                raise ConvergenceError("direct: the latent heat is below double precision (free-energy "
                                       "difference at its rounding)", diagnostics={"K": K}) from exc
            gap_c, err_c, alpha_c, slope_c = _free_energy_gap(info, K, br, dc)
            alpha_c = float(alpha_c)
            # resolution of alpha_c: rounding of the free-energy difference over its alpha-slope
            da = err_c / abs(slope_c) if slope_c != 0 else math.inf
            if not (da <= 1e-9 * alpha_c and da <= 1e-3 * (alpha_c - alpha_s) and alpha_c <= alpha_d):
                raise ConvergenceError("direct: the latent heat is below double precision (alpha_c "
                                       "undetermined to %.2g)" % da,
                                       diagnostics={"K": K, "alpha_s": alpha_s, "alpha_d": alpha_d,
                                                    "alpha_c_resolution": da})
            details["specialized_at_alpha_c"] = _overlaps(K, br.y(dc, br.solve(dc)))
            details["unspecialized_at_alpha_c"] = _overlaps(K, _unspec(info, K, alpha_c))
            details["alpha_c_resolution"] = da
            return Transitions(K, info.name, alpha_s, alpha_c, alpha_d, 1, details)
        prev = (d, gap)
    if resolved < 1e3 or alpha_d - alpha_s < 1e-5 * alpha_d:
        raise ConvergenceError("direct: the latent heat is below double precision (no sign change of the "
                               "free-energy difference of the nearly equal minima)",
                               diagnostics={"K": K, "alpha_s": alpha_s, "alpha_d": alpha_d})
    raise ConvergenceError("direct: no coexistence of the specialized and unspecialized minima",
                           diagnostics={"K": K, "alpha_s": alpha_s, "alpha_d": alpha_d})
