"""Pseudo-arclength numerics: weighted norms, equilibrated bordered solves, the componentwise
backward error (acceptance of points at the rounding floor of F), tangents (the predictor
direction), the Newton corrector on F(y) = 0, <t, y - y_pred>_W = 0, and the Newton polish at
fixed p used by the start point, deflation and coexistence.  The small dense algebra runs in
numba (:mod:`._kernels`)."""
from __future__ import annotations

import math

import numpy as np

from ..saddle import newton
from . import _kernels
from ._problem import _Eval, _fixed_p

_EPS = np.finfo(float).eps


def _wdot(w, a, b):
    return _kernels.wdot(w, a, b)


def _wnorm(w, a):
    return math.sqrt(_kernels.wdot(w, a, a))


def _lstsq_equilibrated(M, rhs):
    """Least-squares solution of the row- and column-equilibrated system (the fallback when
    :func:`_kernels.solve_equilibrated` meets a vanishing pivot)."""
    with np.errstate(all="ignore"):
        r = np.max(np.abs(M), axis=1)
        r = np.where((r > 0) & np.isfinite(r), r, 1.0)
        M1 = M / r[:, None]
        c = np.max(np.abs(M1), axis=0)
        c = np.where((c > 0) & np.isfinite(c), c, 1.0)
        return np.linalg.lstsq(M1 / c[None, :], rhs / r, rcond=None)[0] / c


def _backward_error(F, J, Fp, y):
    """Componentwise backward error of a residual: max_i |F_i| / (|A| |y|)_i with A = [F_x, F_p]
    (n x (n+1)) and y = (x, p) -- the relative size of the residual against the size of the
    terms of each equation, i.e. the relative perturbation of the data that makes y exact.
    Rounding (of y, and inside the model's own evaluation) puts a floor of a few eps / (relative
    cancellation) under it, however ill-conditioned F_x is."""
    return _kernels.backward_error(F, J, Fp, y)


def _scaled_ok(prob, x, p):
    """Does (x, p) pass the scaled residual test (backward error <= prob.rtol)?"""
    if not np.all(np.isfinite(x)):
        return False
    e = _Eval(prob, x, p)
    if not np.all(np.isfinite(e.F)):
        return False
    return _backward_error(e.F, e.J, e.Fp, np.append(x, p)) <= prob.rtol


def _tangent(e, border, w):
    """Unit (weighted) tangent t with [F_x, F_p] t = 0 and border.t = 1 at the evaluation e (None if
    the bordered system is singular)."""
    t, ok = _kernels.tangent(e.J, e.Fp, border, w)
    if ok:
        return t
    rhs = np.zeros(e.F.size + 1)
    rhs[-1] = 1.0
    t = _lstsq_equilibrated(np.vstack([e.A, border]), rhs)
    nt = _wnorm(w, t)
    if not np.isfinite(nt) or nt == 0:
        return None
    return t / nt


def _null_tangent(A, w, sign_p=1.0):
    """Tangent from the SVD null vector of A (n x (n+1)), oriented with dp > 0 (or by sign)."""
    _, _, vt = np.linalg.svd(A)
    t = vt[-1] / np.sqrt(w)
    t = t / _wnorm(w, t)
    if t[-1] * sign_p < 0 or (t[-1] == 0 and sign_p < 0):
        t = -t
    return t


class _Corrector:
    """Pseudo-arclength Newton corrector (at most ``maxit`` iterations) of one problem."""

    def __init__(self, prob, maxit=12):
        self.prob = prob
        self.maxit = maxit
        self.w = prob.w

    def __call__(self, y_pred, t, tol, y_start=None):
        """Newton on F(y) = 0, <t, y - y_pred>_W = 0.  Returns (y, residual, its, evaluation at y
        or None) or None."""
        prob, w = self.prob, self.w
        y = (y_pred if y_start is None else y_start).copy()
        border = w * t
        gtol = 64 * _EPS * (1 + _wnorm(w, y_pred))
        prev_res = math.inf
        for it in range(self.maxit + 1):
            x, p = y[:-1], y[-1]
            if not prob.ok(x, p):
                return None
            e = _Eval(prob, x, p, y)
            res, g = _kernels.residual_and_gap(e.F, y, y_pred, border)
            if res == math.inf:
                return None
            if res <= tol and abs(g) <= gtol and (it > 0 or y_start is None):
                return y, res, it, e
            if it == self.maxit:
                return None
            # noise floor: an absolute tol may be unreachable when the terms of F are large
            # (ill-conditioned F_x at large K).  Once Newton stagnates (the residual no longer
            # drops 4x per step: rounding noise, not truncation, dominates) the point is accepted
            # if the componentwise backward error max_i |F_i| / (|F_x| |x| + |F_p| |p|)_i <= rtol
            if it >= 2 and res > 0.25 * prev_res and abs(g) <= gtol and _backward_error(e.F, e.J, e.Fp, y) <= prob.rtol:
                return y, res, it, e
            prev_res = res
            y_new, status, tiny = _kernels.corrector_update(e.J, e.Fp, border, e.F, g, y)
            if status == 2:
                dy = _lstsq_equilibrated(np.vstack([e.A, border]), -np.append(e.F, g))
                status = 0 if np.all(np.isfinite(dy)) else 1
                y_new = y + dy
                tiny = np.max(np.abs(dy)) <= 1e-14 * (1 + np.max(np.abs(y_new)))
            if status == 1:
                return None
            y = y_new
            # stagnation at the rounding floor of F (large terms cancelling): a Newton step
            # at the level of the rounding of y with a residual within 1000 tol is converged
            if it >= 2 and tiny and res <= 1e3 * tol:
                return y, res, it + 1, None
        return None


def _newton_retry(F, x0, jac, tols, **kw):
    """Newton (:func:`statmech.saddle.newton`, not raising) from x0 to the tolerances ``tols`` in
    turn -- a polish below the problem's tol first -- until one converges; the last result."""
    for tol in tols:
        r = newton(F, x0, jac, tol=tol, raise_on_fail=False, **kw)
        if r.converged:
            break
    return r


def _fixed_p_retry(prob, p, x0, tols, **kw):
    """:func:`_newton_retry` on F(., p) = 0 (one model evaluation per Newton point)."""
    F, J = _fixed_p(prob, p)
    return _newton_retry(F, x0, J, tols, **kw)
