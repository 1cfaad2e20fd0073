"""Saddle-point core: one result type and the solvers every model uses.

* :class:`SaddlePoint` -- frozen result of every solver: control parameters, order
  parameters, thermodynamic quantities, convergence report and stability.
  Attribute access falls through to the dicts, so ``res.q``, ``res.entropy``,
  ``res.alpha`` all work.  For vectorized calls every entry is an array of the
  broadcast parameter shape (see :func:`stack`).
* :func:`newton` -- Newton's method with backtracking line search on ||F||, an
  analytic Jacobian when given (finite differences as fallback), a residual
  tolerance *and* a step tolerance, and an optional domain predicate.
* :func:`fixed_point` -- damped fixed-point iteration x <- (1-d) x + d G(x).
* :func:`root_scalar` -- bracketed 1-d root (Brent) raising ConvergenceError.
* :func:`hessian_fd`, :func:`jacobian_fd` -- central finite differences (fallback
  and for tests of analytic derivatives).

Every failure raises :class:`statmech.ConvergenceError` carrying the last iterate,
the residual and the iteration count.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
from scipy import optimize

from .errors import ConvergenceError
from .result import Result

__all__ = ["SaddlePoint", "SolveInfo", "register_stability", "signed_eigenvalues", "newton", "fixed_point", "root_scalar", "jacobian_fd",
           "hessian_fd", "stack", "vectorize_over"]


_STABILITY = {}


def register_stability(model, fn):
    """Register ``fn(result) -> array or None``, the stability eigenvalues (positive = stable) of
    the results of ``model`` (the ``SaddlePoint.model`` string)."""
    _STABILITY[model] = fn


def signed_eigenvalues(sign):
    """A stability function: ``sign * hessian_eigenvalues`` (ascending), for a functional whose
    physical extremum is a minimum (``sign = +1``) or a maximum (``-1``) in every direction."""
    def fn(r):
        h = r.hessian_eigenvalues
        if h is None:
            return None
        return np.sort(sign * np.asarray(h, dtype=float), axis=-1)
    return fn


class _Stability:
    """The ``stability`` field of :class:`SaddlePoint`: the value given to the constructor, or --
    computed on first access -- the one its model registered (:func:`register_stability`), or None.
    (A descriptor-typed dataclass field: its default is ``None``.)"""

    def __get__(self, obj, objtype=None):
        if obj is None:
            return None
        d = obj.__dict__
        if "_stability" not in d:
            fn = _STABILITY.get(d.get("model"))
            value = None
            if fn is not None:
                try:
                    value = fn(obj)
                except (ValueError, ArithmeticError):   # e.g. a boundary point (R = 1) without a Hessian
                    value = None
            d["_stability"] = value
        return d["_stability"]

    def __set__(self, obj, value):
        if value is not None:
            obj.__dict__["_stability"] = value


@dataclass(frozen=True)
class SolveInfo:
    """Raw outcome of a numerical solve."""
    x: np.ndarray
    residual: float
    iterations: int
    converged: bool


@dataclass(frozen=True, repr=False)
class SaddlePoint(Result):
    """Result of a saddle-point (or extremum) computation (the :class:`statmech.Result` protocol).

    Attributes
    ----------
    model : str
        E.g. ``"perceptron.spherical_storage"``.
    params : dict
        Control parameters (``alpha``, ``kappa``, ``K`` ...).
    order_params : dict
        Order parameters (``q``, ``q_hat``, ``R``, ``S``, ``C`` ...).
    thermo : dict
        Thermodynamic quantities (``entropy``, ``free_energy``, ``generalization_error`` ...).
    converged : bool (or bool array)
    residual : float (or array)
        Final residual norm (max-norm of the saddle-point equations).
    iterations : int (or array)
        Iterations used.
    hessian_eigenvalues : array or None
        Eigenvalues of the Hessian of the (RS) functional at the solution in the
        order-parameter space, ascending, or None.
    replicon : float (or array) or None
        The replicon (AT) eigenvalue where defined, or None.
    rs_stable : bool (or bool array) or None
        True/False where the stability of the RS solution is known, else None.
    extra : dict
        Anything else (branch name, notes, auxiliary data).
    ansatz : str
        The replica ansatz the numbers belong to: ``"rs"`` (replica symmetric),
        ``"1rsb"``, ``"2rsb"``, ... (k-step breaking) or ``"frsb"`` (full, Parisi).
    error : float (or array)
        Numerical error estimate of the headline value; 0.0 when exact to rounding.
    stability : array or None (a property)
        Stability eigenvalues at the solution with one convention, **positive = stable**:
        the Hessian of the functional in the order parameters with the sign that makes the
        physical extremum positive, after the conjugate variables are eliminated (the Schur
        complement) where the functional is a saddle in (order parameter, conjugate).  Each
        model registers how (:func:`register_stability`); None where not computed.
        ``hessian_eigenvalues`` keep the raw Hessian's spectrum.
    headline : str or None
        Name of the headline value (``"q"``, ``"alpha_c"``, ...), printed first by ``repr``.
    """
    model: str
    params: dict
    order_params: dict
    thermo: dict
    converged: Any = True
    residual: Any = 0.0
    iterations: Any = 0
    hessian_eigenvalues: Any = None
    replicon: Any = None
    rs_stable: Any = None
    extra: dict = field(default_factory=dict)
    ansatz: str = "rs"
    error: Any = 0.0
    headline: Any = field(default=None, repr=False)
    stability: Any = _Stability()

    def _summary_items(self):
        from .result import format_value, short
        out = [("model", repr(self.model))]
        for d in (self.params, self.order_params, self.thermo):
            for k, v in d.items():
                out.append((k, format_value(v, self.error) if k == self.headline else short(v, 1)))
        for k in ("converged", "residual", "iterations", "ansatz", "rs_stable", "error", "stability",
                  "replicon"):
            out.append((k, short(getattr(self, k), 1)))
        if self.extra:
            out.append(("extra", "{" + ", ".join(map(repr, self.extra)) + "}"))
        return out

    def __getattr__(self, name):
        # only called when normal lookup fails
        if name.startswith("__"):
            raise AttributeError(name)
        for d in ("order_params", "thermo", "params", "extra"):
            dd = object.__getattribute__(self, d)
            if name in dd:
                return dd[name]
        raise AttributeError(f"{type(self).__name__} of {object.__getattribute__(self, 'model')} has no {name!r}")



def jacobian_fd(F, x, h=None):
    """Central finite-difference Jacobian of F at x."""
    x = np.asarray(x, dtype=float)
    cols = []
    for j in range(x.size):
        hj = h if h is not None else 1e-6 * max(1.0, abs(x[j]))
        e = np.zeros_like(x)
        e[j] = hj
        cols.append((np.atleast_1d(F(x + e)) - np.atleast_1d(F(x - e))) / (2 * hj))
    if not cols:
        return np.empty((np.atleast_1d(F(x)).size, 0))
    return np.stack(cols, axis=1)


def hessian_fd(f, x, h=None):
    """Central finite-difference Hessian of a scalar function f at x."""
    x = np.asarray(x, dtype=float)
    n = x.size
    Hm = np.empty((n, n))
    hs = [h if h is not None else 1e-4 * max(1.0, abs(xi)) for xi in x]
    for i in range(n):
        for j in range(i, n):
            ei = np.zeros(n)
            ej = np.zeros(n)
            ei[i] = hs[i]
            ej[j] = hs[j]
            v = (f(x + ei + ej) - f(x + ei - ej) - f(x - ei + ej) + f(x - ei - ej)) / (4 * hs[i] * hs[j])
            Hm[i, j] = Hm[j, i] = v
    return Hm


def _maxabs(v):
    """max|v_i| for a small 1-d array, inf if any entry is not finite (cheap for n <= 8)."""
    vals = v.tolist()
    m = 0.0
    for a in vals:
        a = abs(a)
        if not a <= 1.7976931348623157e308:  # NaN or inf
            return math.inf
        if a > m:
            m = a
    return m


def _solve_small(J, f):
    """Solve J dx = -f; closed forms for n <= 2 (the common saddle-point sizes), LAPACK otherwise."""
    n = f.shape[0]
    if n == 1:
        d = J[0, 0]
        return np.array([-f[0] / d]) if d != 0.0 else np.array([np.nan])
    if n == 2:
        a, b, c, d = J[0, 0], J[0, 1], J[1, 0], J[1, 1]
        det = a * d - b * c
        scale = abs(a * d) + abs(b * c)
        if det != 0.0 and abs(det) > 1e-14 * scale:
            return np.array([-(d * f[0] - b * f[1]) / det, -(a * f[1] - c * f[0]) / det])
    try:
        return np.linalg.solve(J, -f)
    except np.linalg.LinAlgError:
        return np.linalg.lstsq(J, -f, rcond=None)[0]


def newton(F, x0, jac=None, *, tol=1e-12, xtol=1e-14, maxiter=100, in_domain=None,
           max_backtrack=40, raise_on_fail=True):
    """Solve F(x) = 0 by Newton's method with backtracking.

    Parameters
    ----------
    F : callable x -> residual vector (same length as x)
    x0 : starting point (warm start)
    jac : callable x -> Jacobian matrix; finite differences if None
    tol : convergence when max|F| <= tol ...
    xtol : ... and the last step satisfied max|dx| <= xtol * (1 + max|x|), or max|F| <= tol/100
    in_domain : optional predicate; steps leaving the domain are halved
    raise_on_fail : raise ConvergenceError (default) or return SolveInfo(converged=False)

    Returns
    -------
    SolveInfo

    Small systems (n <= 2) are solved in closed form and norms are taken on Python
    floats, so the per-iteration overhead is a few microseconds beyond F and jac.
    """
    x = np.atleast_1d(np.asarray(x0, dtype=float)).copy()
    if in_domain is not None and not in_domain(x):
        raise ConvergenceError("newton: starting point outside the domain", x=x, iterations=0)
    f = np.atleast_1d(np.asarray(F(x), dtype=float))
    norm = _maxabs(f) if f.size else 0.0
    step_ok = False
    it = 0
    for it in range(1, maxiter + 1):
        if not math.isfinite(norm):
            break
        if norm <= tol and (step_ok or norm <= tol * 1e-2):
            return SolveInfo(x, norm, it - 1, True)
        J = np.atleast_2d(np.asarray(jac(x), dtype=float)) if jac is not None else jacobian_fd(F, x)
        dx = _solve_small(J, f)
        if not math.isfinite(_maxabs(dx)):
            break
        lam = 1.0
        accepted = False
        for _ in range(max_backtrack):
            xn = x + lam * dx
            if in_domain is None or in_domain(xn):
                fn = np.atleast_1d(np.asarray(F(xn), dtype=float))
                nn = _maxabs(fn)
                if nn <= (1 - 1e-4 * lam) * norm or nn <= tol:
                    accepted = True
                    break
            lam *= 0.5
        if not accepted:
            # accept a tiny non-increasing step only if we are already at tolerance
            if norm <= tol:
                return SolveInfo(x, norm, it, True)
            break
        step_ok = _maxabs(xn - x) <= xtol * (1.0 + _maxabs(xn))
        x, f, norm = xn, fn, nn
        if norm <= tol and step_ok:
            return SolveInfo(x, norm, it, True)
    if norm <= tol:
        return SolveInfo(x, norm, it, True)
    if raise_on_fail:
        raise ConvergenceError("newton did not converge", x=x, residual=norm, iterations=it,
                               diagnostics={"tol": tol})
    return SolveInfo(x, norm, it, False)


def fixed_point(G, x0, *, damping=0.5, tol=1e-12, xtol=1e-14, maxiter=10000, in_domain=None,
                residual=None, raise_on_fail=True):
    """Damped fixed-point iteration x <- (1 - damping) x + damping G(x).

    Converged when max|G(x) - x| <= tol (or max|residual(x)| when ``residual`` is
    given) and the last step is below ``xtol``.
    """
    x = np.atleast_1d(np.asarray(x0, dtype=float)).copy()
    norm = math.inf
    for it in range(1, maxiter + 1):
        gx = np.atleast_1d(np.asarray(G(x), dtype=float))
        if not np.all(np.isfinite(gx)):
            break
        d = gx - x
        xn = x + damping * d
        if in_domain is not None and not in_domain(xn):
            raise ConvergenceError("fixed_point left the domain", x=xn, residual=norm, iterations=it)
        norm = float(np.max(np.abs(residual(xn)))) if residual is not None else float(np.max(np.abs(d)))
        step = float(np.max(np.abs(xn - x)))
        x = xn
        if norm <= tol and step <= max(xtol * (1 + float(np.max(np.abs(x)))), tol):
            return SolveInfo(x, norm, it, True)
    if raise_on_fail:
        raise ConvergenceError("fixed_point did not converge", x=x, residual=norm, iterations=maxiter,
                               diagnostics={"damping": damping, "tol": tol})
    return SolveInfo(x, norm, maxiter, False)


def root_scalar(f, bracket, *, xtol=1e-15, rtol=4 * np.finfo(float).eps, maxiter=200):
    """Root of a scalar function in ``bracket`` (Brent); ConvergenceError if not bracketed.

    Returns SolveInfo with x a 1-element array and residual ``|f(root)|``.
    """
    a, b = map(float, bracket)
    fa, fb = f(a), f(b)
    if not (np.isfinite(fa) and np.isfinite(fb)) or fa * fb > 0:
        raise ConvergenceError("root_scalar: root not bracketed", x=[a, b], residual=float(min(abs(fa), abs(fb))) if np.isfinite(fa) and np.isfinite(fb) else None,
                               diagnostics={"f(a)": float(fa), "f(b)": float(fb)})
    try:
        r, res = optimize.brentq(f, a, b, xtol=xtol, rtol=rtol, maxiter=maxiter, full_output=True)
    except (RuntimeError, ValueError) as exc:
        raise ConvergenceError(f"root_scalar failed: {exc}", x=[a, b]) from None
    if not res.converged:
        raise ConvergenceError("root_scalar did not converge", x=[r], iterations=res.iterations)
    return SolveInfo(np.array([r]), float(abs(f(r))), res.iterations, True)


def stack(results, shape, model=None):
    """Combine scalar :class:`SaddlePoint` results (flat list) into one with array entries."""
    results = list(results)
    if not results:
        raise ValueError("results must be non-empty")
    first = results[0]

    def arr(vals):
        try:
            a = np.array(vals)
        except ValueError:
            a = np.empty(len(vals), dtype=object)
            a[:] = vals
        if a.dtype == object:
            return a.reshape(shape + a.shape[1:]) if a.ndim == 1 else a
        return a.reshape(tuple(shape) + a.shape[1:])

    def dict_stack(name):
        keys = getattr(first, name).keys()
        return {k: arr([getattr(r, name)[k] for r in results]) for k in keys}

    def opt(name):
        vals = [getattr(r, name) for r in results]
        if all(v is None for v in vals):
            return None
        return arr([np.nan if v is None else v for v in vals]) if name != "hessian_eigenvalues" else \
            np.array([np.full_like(np.atleast_1d(first.hessian_eigenvalues), np.nan, dtype=float) if v is None else v for v in vals]).reshape(tuple(shape) + (-1,))

    return SaddlePoint(
        model=model or first.model,
        params=dict_stack("params"),
        order_params=dict_stack("order_params"),
        thermo=dict_stack("thermo"),
        converged=arr([r.converged for r in results]),
        residual=arr([r.residual for r in results]),
        iterations=arr([r.iterations for r in results]),
        hessian_eigenvalues=opt("hessian_eigenvalues"),
        replicon=opt("replicon"),
        rs_stable=None if all(r.rs_stable is None for r in results) else arr([r.rs_stable for r in results]),
        extra={},
        ansatz=first.ansatz,
        error=arr([r.error for r in results]),
        headline=first.headline,
    )


def vectorize_over(solve_one: Callable, *arrays, model=None, warm_start=True):
    """Run ``solve_one(*scalars, guess=previous_result_or_None)`` over broadcast arrays.

    Returns a scalar :class:`SaddlePoint` for scalar inputs, else a stacked one.
    Points are visited in order so that each solve is warm-started from the previous
    one (pass sorted grids for best results).
    """
    b = np.broadcast_arrays(*[np.asarray(a, dtype=float) for a in arrays])
    shape = b[0].shape
    if shape == ():
        return solve_one(*[float(x) for x in b], guess=None)
    out = []
    prev = None
    for idx in np.ndindex(shape):
        r = solve_one(*[float(x[idx]) for x in b], guess=prev if warm_start else None)
        out.append(r)
        prev = r
    return stack(out, shape, model=model)
