"""Shared pieces of the perceptron solvers: argument checks, the call of the numba solves of
the branch maps ``alpha = A(p)`` with their failure reports, the residual check and the
AT-line root.

The saddle points are solved entirely inside numba: :func:`newton` makes one call of an
entry point of :mod:`statmech.perceptron._branches_nb` (``ss_solve``, ``sts_solve``,
``bs_solve``, ``bts_solve``, ``bs_capacity``, ``bts_transition``), which runs, for every
point of the call, Newton with backtracking on the one-unknown branch map (the algorithm of
:func:`statmech.saddle.newton`, :mod:`statmech.perceptron._newton_nb`), its bracketed Brent
fallback (scipy's ``brentq``, as :func:`statmech.saddle.root_scalar`), the convergence test
and the order parameters, entropy, Hessian and replicon of the result; Python only checks
the arguments, raises the ConvergenceError of a failed point (:func:`_run`) and builds the
SaddlePoint.  A vectorized call solves all its points in that one numba call, each started
from a prediction continued along the grid.  :func:`_bracket_solve` is the same bracket
expansion + Brent in Python, for Python functions (and the reference the numba one is
tested against).

``newton``, ``_NEWTON_MAXITER`` and ``_BRENT_MAXITER`` are looked up at each call (tests
replace them to force a failure); so is ``_RES_TOL``."""
from __future__ import annotations

import math

import numpy as np

from ..errors import ConvergenceError, check_range
from ..saddle import root_scalar
from ._branches_nb import TINY_ALPHA
from ._newton_nb import (BRENT_MAXITER, BRENT_NAN, ENTROPY_POSITIVE, NEWTON_FAILED, NO_SIGN_CHANGE, NO_SPINODAL,
                         NOT_BRACKETED, RAISED)
from ._quadrature import _table

_TINY_ALPHA = TINY_ALPHA   # below this the O(alpha^2) corrections are below double precision


# =========================================================================== validation helpers
def _alpha(alpha, hi=math.inf, name="alpha"):
    return check_range(name, alpha, 0.0, hi)


#: lower end of kappa for the storage problems at finite alpha (and their AT lines and the Ising
#: zero-entropy capacity): the storage-channel quadrature E_t f(u), u = (kappa - sqrt(q) t)/sqrt(1-q),
#: is accurate to ~1e-12 relative over 0 < q < 1 down to kappa = -5 (mpmath, tests/test_perceptron_multistable.py)
#: and loses digits below (2.5e-7 at kappa = -6).  alpha_c(-5) = 5.2e7.
KAPPA_MIN = -5.0


def _kappa(kappa, lo=KAPPA_MIN):
    return check_range("kappa", kappa, lo)


def _plain(*values):
    """The values as floats if all are finite Python (or numpy float64) scalars, else None:
    the fast path of the solvers (anything else goes through the checks above, which
    also raise the errors)."""
    out = []
    for v in values:
        if not (isinstance(v, (float, int)) and not isinstance(v, bool)):
            return None
        v = float(v)
        if not math.isfinite(v):
            return None
        out.append(v)
    return out


def _storage_dispatch(alpha, kappa, one):
    """``(one(alpha, kappa), None)`` for scalar arguments (fast path first), else
    ``(None, (a, k))`` with the checked arrays of alpha and kappa (``_alpha``, ``_kappa``)."""
    ak = _plain(alpha, kappa)
    if ak is not None and ak[0] >= 0.0 and ak[1] >= KAPPA_MIN:
        return one(*ak), None
    a = _alpha(alpha)
    k = _kappa(kappa)
    if a.ndim == 0 and k.ndim == 0:
        return one(float(a), float(k)), None
    return None, (a, k)


def _scalar_or_array(arr, out):
    return float(out) if np.ndim(arr) == 0 else out


def _x(x, n, names):
    x = np.atleast_1d(np.asarray(x, dtype=float))
    if x.shape != (n,):
        raise ValueError(f"x must be a vector [{', '.join(names)}] of length {n}, got shape {x.shape}")
    return x


def _open_unit(name, v):
    check_range(name, v, 0.0, 1.0, lo_open=True, hi_open=True)
    return float(v)


# =========================================================================== numba solves
_NEWTON_MAXITER = 40   # Newton iterations of a branch solve (statmech.saddle.newton's loop, in numba)
_BRENT_MAXITER = 200   # Brent iterations of the bracketed fallback

_FAILURES = {
    NEWTON_FAILED: "newton did not converge",
    RAISED: "the branch map left its domain (log of a non-positive number or overflow)",
    NOT_BRACKETED: "could not bracket the saddle point",
    NO_SIGN_CHANGE: "root_scalar: root not bracketed",
    BRENT_NAN: "root_scalar failed: the function value is NaN",
    BRENT_MAXITER: "root_scalar failed: Brent did not converge",
    NO_SPINODAL: "binary teacher-student spinodal not found",
    ENTROPY_POSITIVE: "poor-generalization entropy positive at the spinodal",
}


def _failure(status, y, residual, iterations, diagnostics):
    """The ConvergenceError of a numba solve that returned ``status`` (last iterate ``y`` of
    the root variable, ``|f|`` there, iterations) at the point ``diagnostics``."""
    return ConvergenceError(f"perceptron saddle point: {_FAILURES[status]}", x=[y],
                            residual=float(residual), iterations=int(iterations),
                            diagnostics={k: float(v) for k, v in diagnostics.items()})


def _first_unconverged(res):
    """Index of the first residual that is not below the tolerance (NaN included), or None."""
    if res.size == 1:
        return None if res[0] < _RES_TOL else 0
    bad = np.flatnonzero(~(res < _RES_TOL))
    return int(bad[0]) if bad.size else None


def newton(entry, pts, *args, out):
    """One numba call of the solve ``entry`` over the rows of ``pts`` (Newton, then the
    bracketed fallback, for every point; module docstring), filling ``out``.  Returns
    ``(i, status, y, |f|, iterations)`` of the first point that failed (``i = -1``: none)."""
    return entry(pts, *args, *_table(), _NEWTON_MAXITER, _BRENT_MAXITER, out)


def _run(entry, cols, params, pts, *args, order=(), residual=True):
    """Call the numba entry point ``entry(pts, *args, tab, off, nmax, bmax, out)`` over the
    rows of ``pts`` (the points, whose parameters ``params`` are named for the
    diagnostics); returns ``out``, one row of the columns ``cols`` per point.

    Raises ConvergenceError for the first point (in order) that failed: its solve (status
    code from numba) or, if ``residual``, the residual check (column "residual").  The
    diagnostics name the point's parameters and, once solved, the order parameters
    ``order`` (names of columns).
    """
    out = np.empty((pts.shape[0], len(cols)))
    i, status, y, r, it = newton(entry, pts, *args, out=out)
    done = pts.shape[0] if i < 0 else i
    j = _first_unconverged(out[:done, -1]) if residual else None
    if j is not None:
        diagnostics = {k: v[j] for k, v in params.items()} | {k: out[j, cols.index(k)] for k in order}
        _check_residual(out[j, -1], out[j, -2], diagnostics)
    if i >= 0:
        raise _failure(status, y, r, it, {k: v[i] for k, v in params.items()})
    return out


def _columns(cols, out, shape):
    """The columns of ``out`` by name, each an array of ``shape``."""
    return dict(zip(cols, out.T.reshape((len(cols),) + shape)))


def _transition(entry):
    """``entry(tab, off, nmax, bmax)``: a numba solve without points (a transition)."""
    return entry(*_table(), _NEWTON_MAXITER, _BRENT_MAXITER)


def _bracket_solve(f, y0, step=1.0, lo=-math.inf, hi=math.inf, maxexp=60):
    """Root of increasing f(y) by bracket expansion from y0 then Brent (saddle.root_scalar):
    the bracketed fallback of the numba solves (``_newton_nb._expand``) for a Python ``f``.
    Returns ``(y, iterations)``; ConvergenceError if no sign change within ``maxexp`` steps."""
    f0 = f(y0)
    if f0 == 0.0:
        return y0, 0
    a = b = y0
    fa = fb = f0
    n = 0
    if f0 < 0:
        while fb < 0:
            a, fa = b, fb
            b = min(b + step, hi) if b + step < hi else 0.5 * (b + hi)
            fb = f(b)
            step *= 2.0
            n += 1
            if n > maxexp:
                raise ConvergenceError("could not bracket the saddle point", x=[a, b], diagnostics={"f(b)": fb})
    else:
        while fa > 0:
            b, fb = a, fa
            a = max(a - step, lo) if a - step > lo else 0.5 * (a + lo)
            fa = f(a)
            step *= 2.0
            n += 1
            if n > maxexp:
                raise ConvergenceError("could not bracket the saddle point", x=[a, b], diagnostics={"f(a)": fa})
    info = root_scalar(f, (a, b), xtol=1e-15)
    return float(info.x[0]), info.iterations + n


# =========================================================================== residual check, logit
_RES_TOL = 1e-10


def _check_residual(res, it, diagnostics):
    """True if the saddle-point residual is below 1e-10, else raise ConvergenceError."""
    if res < _RES_TOL and math.isfinite(res):
        return True
    raise ConvergenceError("perceptron saddle point: residual of the saddle-point equations too large",
                           residual=float(res), iterations=int(it),
                           diagnostics={k: float(v) for k, v in diagnostics.items()})


def _logit(q):
    return math.log(q) - math.log1p(-q)


def _expit(y):
    return 1.0 / (1.0 + math.exp(-y)) if y >= 0 else math.exp(y) / (1.0 + math.exp(y))


# =========================================================================== AT line root
def _at_point(model, solve, kappa, a_max):
    """:func:`_at_one` as a SaddlePoint (model ``model``): ``alpha_AT``, the kind of the point
    (``"replicon zero"``; ``"first-order jump"`` where the RS minimum jumps from a stable small-q
    to an unstable large-q one, below the cusp of :mod:`._multistable`; ``"capacity"`` where RS
    is stable up to ``a_max``), ``q`` just below, and the error (the Brent tolerance)."""
    from ..saddle import SaddlePoint
    a = _at_one(solve, kappa, a_max)
    if a == a_max:
        return SaddlePoint(model, {"kappa": kappa}, {}, {"alpha_AT": a}, True, 0.0, 0,
                           extra={"kind": "capacity"}, rs_stable=True, headline="alpha_AT")
    lo, at, hi = (solve(a * f, kappa, None) for f in (1 - 1e-9, 1.0, 1 + 1e-9))
    kind = "first-order jump" if abs(hi.q - lo.q) > 1e-3 else "replicon zero"
    # residual: |replicon| at the root, or at a jump the free-entropy difference of the two minima
    res = abs(at.replicon) if kind == "replicon zero" else abs(at.entropy - at.extra["other_minimum"]["entropy"])
    return SaddlePoint(model, {"kappa": kappa}, {"q": lo.q}, {"alpha_AT": a}, True, res, 0,
                       replicon=lo.replicon, rs_stable=True, extra={"kind": kind, "q_above": hi.q},
                       error=1e-13 + 4e-16 * a, headline="alpha_AT")


def _at_one(solve, kappa, a_max):
    """alpha where the replicon of ``solve(alpha, kappa)`` changes sign in (0, a_max), else a_max."""
    last = [None]

    def rep(a):
        r = solve(a, kappa, last[0])
        last[0] = r
        return float(r.replicon)

    hi = a_max * (1 - 1e-9)
    if rep(hi) > 0:
        return a_max
    lo = 1e-3 * a_max
    if rep(lo) <= 0:
        raise ConvergenceError("replicon negative already at small alpha", x=[lo], diagnostics={"kappa": kappa})
    return float(root_scalar(rep, (lo, hi), xtol=1e-13).x[0])
