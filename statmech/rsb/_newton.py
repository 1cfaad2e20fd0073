r"""Newton's method for the Parisi functionals of :mod:`statmech.rsb` (all minimized).

The gradient of every functional is exact (the adjoint of the lattice recursion); the
Hessian is the finite difference of that gradient (:func:`fd_hessian`), computed at the
start (or taken from the caller, e.g. the previous lattice round), BFGS-updated along the
path and recomputed after a badly backtracked step and every ``REFRESH`` iterations.  At
the minimizer a fresh finite-difference Hessian is computed once, for the report (its eigenvalues certify a
minimum).  Costs are counted in gradient evaluations (:attr:`MinimizeInfo.evaluations`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..errors import ConvergenceError
from ..result import Result

__all__ = ["MinimizeInfo", "fd_hessian", "minimize"]

REFRESH = 12   # BFGS updates before the finite-difference Hessian is recomputed


@dataclass(frozen=True, repr=False)
class MinimizeInfo(Result):
    """Outcome of :func:`minimize` (the :class:`statmech.Result` protocol): minimizer, value (the
    headline), gradient max-norm, iterations, Hessian eigenvalues (finite-difference Hessian at
    the minimizer, or the BFGS one when ``report_hessian`` is False; ``stability``, positive at a
    minimum), the last Hessian, and the number of gradient evaluations.  ``ansatz`` is ``"-"``
    (a plain minimization), ``error`` 0 (the value of the discrete functional, to rounding)."""
    headline = "value"
    x: np.ndarray
    value: float
    residual: float
    iterations: int
    hessian_eigenvalues: np.ndarray
    hessian: np.ndarray = field(default=None, repr=False)
    evaluations: int = 0
    converged = True
    ansatz = "-"
    error = 0.0

    @property
    def stability(self):
        return self.hessian_eigenvalues

    @property
    def rs_stable(self):
        return None


def fd_hessian(grad, x, h=1e-6, g0=None):
    """Symmetrized finite-difference Jacobian of the analytic gradient ``grad`` at ``x``.

    Central differences (relative error ~h^2 + 1e-16/h, ``grad`` being exact for the
    discrete functional, 2n gradients), or forward differences from ``g0 = grad(x)`` when
    given (n gradients, error ~h: Newton then converges superlinearly rather than
    quadratically, and the eigenvalues are good to ~1e-6 relative).
    """
    x = np.asarray(x, dtype=float)
    J = np.empty((x.size, x.size))
    for j in range(x.size):
        e = np.zeros_like(x)
        e[j] = h
        if g0 is None:
            J[:, j] = (grad(x + e) - grad(x - e)) / (2 * h)
        else:
            J[:, j] = (grad(x + e) - g0) / h
    return 0.5 * (J + J.T)


def _newton_step(Hm, g, max_step):
    """Modified Newton step: eigenvalues by modulus, floored at 1e-9 of the largest; no
    component beyond ``max_step``.  Returns the step and the spectrum."""
    ev, V = np.linalg.eigh(Hm)
    floor = 1e-9 * max(1.0, float(np.max(np.abs(ev))))
    dx = -V @ ((V.T @ g) / np.maximum(np.abs(ev), floor))
    big = float(np.max(np.abs(dx)))
    if big > max_step:  # trust region in the (log/logit) parameters
        dx *= max_step / big
    return dx, ev


def minimize(fun, grad, x0, *, tol=1e-11, maxiter=80, h=1e-6, max_step=1.0, H0=None,
             report_hessian=True, what="RSB functional"):
    """Minimize ``fun`` by a modified Newton method with exact gradients.

    Every Parisi functional of the package is *minimized* over its order parameters at the
    saddle point (SK: Parisi's formula; perceptron at finite alpha: the free entropy; the
    jamming line: ``alpha_J = min R``, docs/rsb.md).  The Hessian is ``H0`` (a Hessian at
    ``x0``, e.g. from a previous lattice round at the same point) or the forward difference of the analytic gradient at ``x0``,
    then BFGS-updated from the gradients along the path; it is computed afresh when a
    step had to be backtracked below 1/4 and every ``REFRESH`` iterations.  Negative or
    tiny eigenvalues (away from the minimum, or along the nearly flat directions of a fine
    discretization) are replaced by their modulus floored at 1e-9 of the largest; the step is backtracked until ``fun``
    decreases (Armijo), or, once the predicted decrease is below the rounding of ``fun``,
    until ``max|grad|`` decreases; no parameter moves by more than ``max_step`` per
    iteration (the parameters are logs and logits).  Converged when ``max|grad| <= tol``;
    the reported Hessian eigenvalues are then those of a fresh finite-difference Hessian at
    the minimizer (of the BFGS one if ``report_hessian`` is False).  Otherwise
    :class:`~statmech.ConvergenceError` with the last iterate, gradient and Hessian spectrum.
    """
    calls = [0]

    def grad_(z):
        calls[0] += 1
        return grad(z)

    x = np.asarray(x0, dtype=float).copy()
    f = fun(x)
    g = grad_(x)
    # fresh: Hm is a finite-difference Hessian at the current x (H0 is taken to be one at x0)
    fresh = True
    Hm = H0.copy() if H0 is not None and H0.shape == (x.size, x.size) else fd_hessian(grad_, x, h, g0=g)
    ev = np.linalg.eigvalsh(Hm)
    it = since = 0
    central = False   # Hm is a central-difference Hessian at x (the last resort of a failed line search)
    while True:
        res = float(np.max(np.abs(g)))
        if not math.isfinite(f) or not math.isfinite(res):
            break
        if res <= tol:
            Hf = Hm if fresh or not report_hessian else fd_hessian(grad_, x, h, g0=g)
            return MinimizeInfo(x, f, res, it, np.linalg.eigvalsh(Hf), Hf, calls[0])
        if it >= maxiter:
            break
        it += 1
        dx, ev = _newton_step(Hm, g, max_step)
        slope = float(g @ dx)
        # below rounding of f the decrease is invisible: then accept the step that lowers |grad|
        flat = abs(slope) < 1e-11 * max(1.0, abs(f))
        t = 1.0
        gn = None
        for _ in range(40):
            xn = x + t * dx
            try:
                fn = fun(xn)
                gn = grad_(xn) if flat else None
            except ValueError:  # left the domain (ordering of q, positivity)
                fn = math.inf
            if math.isfinite(fn):
                if flat and float(np.max(np.abs(gn))) < res:
                    break
                if not flat and fn <= f + 1e-4 * t * slope:
                    break
            t *= 0.5
        else:
            if central:
                break
            # no acceptable step: in nearly flat directions (eigenvalues ~1e-9, e.g. x(q) close
            # to the AT line) the forward-difference/BFGS Hessian is too inaccurate; retry once
            # from here with a central-difference one (error ~h^2)
            Hm, fresh, central, since = fd_hessian(grad_, x, h), True, True, 0
            continue
        central = False
        gn = gn if flat else grad_(xn)
        sv, yv = xn - x, gn - g
        x, f, g = xn, fn, gn
        fresh = False
        since += 1
        if float(np.max(np.abs(g))) <= tol:
            continue  # converged: no refresh (the report Hessian, if wanted, comes next)
        if t < 0.25 or since >= REFRESH:
            Hm, fresh, since = fd_hessian(grad_, x, h, g0=g), True, 0
            continue
        sy = float(sv @ yv)
        Hs = Hm @ sv
        sHs = float(sv @ Hs)
        if sy > 1e-14 * float(np.linalg.norm(sv) * np.linalg.norm(yv)) and sHs > 0:
            Hm = Hm + np.outer(yv, yv) / sy - np.outer(Hs, Hs) / sHs
    res = float(np.max(np.abs(g))) if np.all(np.isfinite(g)) else math.inf
    raise ConvergenceError(f"{what}: Newton minimization did not converge", x=x, residual=res,
                           iterations=it, diagnostics={"value": f, "gradient_evaluations": calls[0],
                                                       "min_hessian_eigenvalue":
                                                       float(np.nanmin(ev)) if ev.size else math.nan})
