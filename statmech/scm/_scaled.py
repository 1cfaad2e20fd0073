"""The site-symmetric beta f in the scaled variables of docs/scm.md ("Any K"), usable at every
finite K: y = (delta, t, v) with delta = R - S, v = (K-1) C, t = log(1 + v - u^2) and
u = R + (K-1) S.  The R = S branch, its exact stability condition towards R != S, alpha_d,
and the two parts of beta f = alpha K (m(1) - m(0) - m'(0)) + alpha E - s."""
from __future__ import annotations

import math

import numpy as np

from ..errors import ConvergenceError
from ..saddle import root_scalar
from ._equations import _kern

_EPS = np.finfo(float).eps


def _search_max(info, K):
    """Largest alpha searched for the instability of R = S (covers alpha_d ~ 4 pi K for odd g
    and ~ 1/m''(0) otherwise)."""
    d2 = float(_kern.moments(info.code, 0.0, info.cc)[2])
    return max(40.0 * math.pi * K + 400.0, 40.0 / d2 if d2 > 1e-300 else 0.0)


def _unspec(info, K, alpha):
    """The R = S stationary point at alpha, y = (0, t, v)."""
    v, t, u, ok = _kern.unspec_state(info.code, info.cc, float(alpha), float(K))
    if not ok:
        raise ConvergenceError("R = S branch: no stationary point", diagnostics={"alpha": alpha, "K": K})
    return np.array([0.0, t, v])


def _instability(info, K, alpha):
    """alpha m''(R) (1 - C) - 1 on the R = S branch: > 0 where R = S is unstable towards R != S."""
    y = _unspec(info, K, alpha)
    R, S, C, u, inside = _kern.scaled_point(float(K), *y)
    return alpha * _kern.moments(info.code, R, info.cc)[2] * (1.0 - C) - 1.0


def _parts(info, K, y):
    """(alpha-coefficient E, entropy s) of beta f = alpha K (m(1) - m(0) - m'(0)) + alpha E - s."""
    o = _kern.fes_at(info.code, info.cc, info.m0, info.dm0, float(K), *map(float, y))
    return o[0], o[1]


def _overlaps(K, y):
    R, S, C, u, inside = _kern.scaled_point(float(K), *map(float, y))
    return {"R": R, "S": S, "C": C}


def _alpha_d(info, K):
    """alpha_d: first root of the R = S instability (bracketed on a geometric grid, then Brent)."""
    grid = np.geomspace(0.05, _search_max(info, K), 120)
    prev = None
    for a in grid:
        h = _instability(info, K, a)
        if prev is not None and prev[1] < 0.0 <= h:
            return float(root_scalar(lambda x: _instability(info, K, x), (prev[0], a),
                                     xtol=1e-15 * a, rtol=4 * _EPS).x[0])
        prev = (a, h)
    raise ConvergenceError("R = S does not lose stability for alpha <= %.4g" % grid[-1],
                           diagnostics={"K": K})


def _polish_alpha_d(info, K, alpha, rel):
    """The root of the R = S instability within alpha (1 +- rel) (ConvergenceError if none):
    refines an alpha_d located by the continuation engine, whose branch-point location is
    limited by the conditioning of its Hessian at large K."""
    return float(root_scalar(lambda x: _instability(info, K, x), (alpha * (1 - rel), alpha * (1 + rel)),
                             xtol=1e-15 * alpha, rtol=4 * _EPS).x[0])
