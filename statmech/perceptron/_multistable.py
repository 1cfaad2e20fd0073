r"""Several RS stationary points at one (alpha, kappa): the storage problems at strongly negative kappa.

Both storage problems have an explicit branch map: along the curve of stationary points,
alpha is a function of one parameter ``s``,

* spherical (S2): ``s = logit q``, ``alpha*(s) = q / ((1 - q) E_t IM(u)^2)``;
* Ising (B2): ``s = log q_hat``, ``q(s) = E_z tanh^2(sqrt(q_hat) z)``,
  ``alpha*(s) = q_hat (1 - q) / E_t IM(u)^2``.

For ``kappa >= 0`` and moderately negative kappa ``alpha*(s)`` increases monotonically and the
stationary point is unique.  Below a cusp (spherical: ``kappa ~ -2.86``; Ising: ``kappa ~ -2.65``,
beyond its zero-entropy capacity) ``alpha*(s)`` folds: between the fold values there are three
stationary points -- a small-q minimum, a maximum and a large-q minimum of the RS free entropy
``phi`` (the conjugate variable eliminated).  The replica limit ``n -> 0`` minimizes ``phi`` over
the overlap, so the RS answer is the stationary point with the **lowest** ``phi`` (the rule under
which the RSB free entropies lie below the RS one, docs/rsb.md); the two minima exchange at a
first-order point ``alpha_1(kappa)`` inside the window.

This module finds the folds of a branch map (a scan of ``alpha*(s)`` on a fine grid, each
extremum refined by bounded Brent) and, at a given alpha inside a window, every stationary
point (a bracketed root on each monotone piece), so that the solvers can return the global
minimum and report the other one.  Folds are cached per kappa.
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from scipy import optimize

from ._quadrature import _is_in, _st_out

__all__ = ["KAPPA_CHECK", "spherical_folds", "binary_folds", "stationary_points"]

#: the fold scan runs for kappa below this value.  Above it ``alpha*(s)`` is monotone (tested on
#: a fine grid in tests/test_perceptron_multistable.py; the cusps lie near -2.86 (spherical) and -2.65 (Ising)).
KAPPA_CHECK = -2.0

_GRID = 801
# ends of the root brackets in s: q = expit(-700) ~ 1e-304 .. 1 - 5e-15; q_hat = e^-300 .. e^60
_LO = {"spherical": -700.0, "binary": -300.0}
_HI = {"spherical": 33.0, "binary": 60.0}


def _sph_alpha(y, kappa):
    q = 1.0 / (1.0 + math.exp(-y))
    e1 = float(_st_out(q, kappa)[1])
    return q / ((1.0 - q) * e1)


def _sph_q(y):
    return 1.0 / (1.0 + math.exp(-y))


def _bin_q(s):
    return float(_is_in(math.exp(s))[4])   # E tanh^2 = 1 - E sech^2, accurate at small q_hat


def _bin_alpha(s, kappa):
    qh = math.exp(s)
    q = _bin_q(s)
    return qh * (1.0 - q) / float(_st_out(q, kappa)[1])


def _folds(alpha_of, lo, hi, kappa):
    """Local extrema of ``alpha_of(s, kappa)`` on ``[lo, hi]``: a tuple of ``(s, alpha)``,
    alternating maximum, minimum (in increasing s).  Changes of ``alpha`` below 1e-9 relative
    (round-off, near q -> 1) are not folds."""
    s = np.linspace(lo, hi, _GRID)
    a = np.array([alpha_of(x, kappa) for x in s])
    ok = np.isfinite(a)
    s, a = s[ok], a[ok]
    d = np.diff(a)
    d[np.abs(d) <= 1e-9 * np.abs(a[1:])] = 0.0
    out = []
    for i in range(1, d.size):
        if (d[i - 1] > 0 and d[i] < 0) or (d[i - 1] < 0 and d[i] > 0):
            sign = -1.0 if d[i - 1] > 0 else 1.0   # maximum: minimize -alpha
            r = optimize.minimize_scalar(lambda x: sign * alpha_of(x, kappa), bounds=(s[i - 1], s[i + 1]),
                                         method="bounded", options={"xatol": 1e-10})
            out.append((float(r.x), float(alpha_of(r.x, kappa))))
    return tuple(out)


@lru_cache(maxsize=4096)
def spherical_folds(kappa):
    """Folds ``((s_max, alpha_max), (s_min, alpha_min))`` of the spherical branch map, or ``()``."""
    if kappa >= KAPPA_CHECK:
        return ()
    return _folds(_sph_alpha, -40.0, 25.0, float(kappa))


@lru_cache(maxsize=4096)
def binary_folds(kappa):
    """Folds of the Ising branch map (in ``s = log q_hat``), or ``()``."""
    if kappa >= KAPPA_CHECK:
        return ()
    return _folds(_bin_alpha, -30.0, 25.0, float(kappa))


def stationary_points(model, alpha, kappa):
    """Every RS stationary point at ``(alpha, kappa)`` when alpha lies in a fold window.

    ``model`` is ``"spherical"`` or ``"binary"``.  Returns a list of ``(s, q)`` for the minima of
    phi (the outer roots; the maximum between them is skipped), or ``[]`` when the stationary
    point is unique (the solver's answer is then the only one).  A large-q root too close to
    q = 1 to bracket in double precision (``alpha*`` is flat there to round-off) is returned as
    ``(math.inf, 1.0)``: its phi tends to -inf, below every finite minimum.
    """
    folds = spherical_folds(kappa) if model == "spherical" else binary_folds(kappa)
    if len(folds) < 2:
        return []
    (s_max, a_max), (s_min, a_min) = folds[0], folds[1]
    if not a_min < alpha < a_max:
        return []
    alpha_of = _sph_alpha if model == "spherical" else _bin_alpha
    q_of = _sph_q if model == "spherical" else _bin_q
    lo_end, hi_end = _LO[model], _HI[model]
    out = []
    for lo, hi in ((lo_end, s_max), (s_min, hi_end)):
        f = lambda x: alpha_of(x, kappa) - alpha  # noqa: E731
        flo, fhi = f(lo), f(hi)
        if hi == hi_end and math.isfinite(fhi) and fhi < 0:
            out.append((math.inf, 1.0))
            continue
        if not (math.isfinite(flo) and math.isfinite(fhi)) or flo * fhi > 0:
            continue
        s = optimize.brentq(f, lo, hi, xtol=1e-14, rtol=1e-15, maxiter=200)
        out.append((s, q_of(s)))
    return out


def global_rows(model, out, pts, cols, run, phi):
    """Make every row of a storage solve the global minimum of phi.

    ``out`` (rows of ``cols``, one per point of ``pts`` = rows ``(alpha, kappa, ...)``) comes from
    the numba solve, which follows one branch.  For each point inside a fold window the
    stationary points are found (:func:`stationary_points`), ``phi(q, s, alpha, kappa)`` picks the
    lowest, and if the solve sat on the other one, ``run(pts_row, start)`` re-solves the point from
    the global minimum (``start``: q for the spherical model, q_hat for the Ising one).
    Returns ``{row: (alpha_other_q, entropy_other)}`` for the points that had two minima.
    """
    iq, ie = cols.index("q"), cols.index("entropy")
    others = {}
    for i in np.flatnonzero(pts[:, 1] < KAPPA_CHECK):
        a, k = float(pts[i, 0]), float(pts[i, 1])
        cands = stationary_points(model, a, k)
        if len(cands) < 2:
            continue
        vals = [-math.inf if math.isinf(s) else phi(q, s, a, k) for s, q in cands]
        best = int(np.argmin(vals))
        s_b, q_b = cands[best]
        s_o, q_o = cands[1 - best]
        if math.isinf(s_b):   # the root at q -> 1, beyond the end of the bracket: start there
            start = _sph_q(_HI["spherical"]) if model == "spherical" else math.exp(_HI["binary"])
            row = out[i] if out[i, iq] > cands[0][1] + 0.5 * (1 - cands[0][1]) else run(pts[i:i + 1], start)[0]
            if not row[iq] > cands[1 - best][1]:
                from ..errors import ConvergenceError
                raise ConvergenceError(f"perceptron.{model}_storage: the large-q minimum near q = 1 was not reached",
                                       diagnostics={"alpha": a, "kappa": k})
            out[i] = row
        elif abs(out[i, iq] - q_b) > 1e-6 * max(q_b, 1e-300) + 1e-12:
            start = q_b if model == "spherical" else math.exp(s_b)
            row = run(pts[i:i + 1], start)[0]
            if abs(row[iq] - q_b) > 1e-6 * max(q_b, 1e-300) + 1e-12:
                from ..errors import ConvergenceError
                raise ConvergenceError(f"perceptron.{model}_storage: the re-solve from the global minimum "
                                       f"q={q_b:.12g} converged elsewhere (q={row[iq]:.12g})",
                                       diagnostics={"alpha": a, "kappa": k})
            out[i] = row
        others[int(i)] = (float(q_o), float(vals[1 - best]))
    return others
