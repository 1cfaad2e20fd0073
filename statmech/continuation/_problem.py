"""The continuation problem ``F(x, p) = 0`` and difference derivatives of its functions."""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping

import numpy as np

from ..errors import check_choice, check_finite, check_range
from ..saddle import jacobian_fd
from . import _kernels


def _as(v, shape):
    v = np.asarray(v, dtype=float)
    return v if v.shape == shape else v.reshape(shape)


def _fd_gradient(f, x, p, params):
    g = np.empty(x.size)
    for j in range(x.size):
        h = 6e-6 * max(1.0, abs(x[j]))
        e = np.zeros_like(x)
        e[j] = h
        g[j] = (f(x + e, p, **params) - f(x - e, p, **params)) / (2 * h)
    return g


def _d_dp(fn, x, p, affine):
    """d fn(x, p)/dp: the exact difference when fn is affine in p (fn = A(x) + p B(x)), otherwise
    fourth-order central differences."""
    if affine:
        return fn(x, p + 1.0) - fn(x, p)
    h = 2e-5 * max(1.0, abs(p))
    return (8 * (fn(x, p + h) - fn(x, p - h)) - (fn(x, p + 2 * h) - fn(x, p - 2 * h))) / (12 * h)


def _dJ_dx(pr, x, p, v, transpose=False, scale=1.0):
    """Columns d(F_x v)/dx_j (or d(F_x^T v)/dx_j), divided by ``scale``, by central differences
    of the Jacobian."""
    n = x.size
    M = np.empty((n, n))
    for j in range(n):
        h = 1e-5 * max(1.0, abs(x[j]))
        e = np.zeros(n)
        e[j] = h
        Jp_, Jm_ = pr.J(x + e, p), pr.J(x - e, p)
        M[:, j] = ((Jp_.T @ v - Jm_.T @ v) if transpose else (Jp_ @ v - Jm_ @ v)) / (2 * h * scale)
    return M


def _J_p(pr, x, p):
    """dF_x/dp (exact difference when F is affine in p)."""
    if pr.affine_in_p:
        return pr.J(x, p + 1.0) - pr.J(x, p)
    h = 1e-5 * max(1.0, abs(p))
    return (pr.J(x, p + h) - pr.J(x, p - h)) / (2 * h)


_UNSET = object()


class _Eval:
    """The problem evaluated at one point (x, p): ``F`` at once; ``J``, ``Fp``, ``A`` = [F_x, F_p],
    ``f``, ``f_p`` (df/dp) and ``grad_f`` on first use -- all from one call of the fused evaluator
    when the problem has one (``Problem.evaluate``).  ``y`` is (x, p) when the caller has it."""
    __slots__ = ("prob", "x", "p", "y", "F", "_J", "_Fp", "_f", "_fp", "_A")

    def __init__(self, prob, x, p, y=None):
        self.prob, self.x, self.p, self.y = prob, x, p, y
        self._A = None
        if prob.evaluate is not None:
            self.F, self._J, self._Fp, f, fp = prob._fused(x, p)
            self._f, self._fp = (f, fp) if prob.free_energy is not None else (None, None)
        else:
            self.F = prob.F(x, p)
            self._J = self._Fp = self._f = self._fp = _UNSET

    @classmethod
    def at(cls, prob, y):
        """Evaluation at y = (x, p)."""
        return cls(prob, y[:-1], y[-1], y)

    @property
    def J(self):
        if self._J is _UNSET:
            self._J = self.prob.J(self.x, self.p)
        return self._J

    @property
    def Fp(self):
        if self._Fp is _UNSET:
            self._Fp = self.prob.Fp(self.x, self.p)
        return self._Fp

    @property
    def A(self):
        if self._A is None:
            n = self.F.size
            A = self._A = np.empty((n, n + 1))
            A[:, :n] = self.J
            A[:, n] = self.Fp
        return self._A

    @property
    def f(self):
        if self._f is _UNSET:
            self._f = self.prob.f(self.x, self.p)
        return self._f

    @property
    def f_p(self):
        if self._fp is _UNSET:
            self._fp = self.prob.f_p(self.x, self.p)
        return self._fp

    @property
    def grad_f(self):
        return self.F if self.prob.residual is None else self.prob.grad_f(self.x, self.p)


def _memo_last(make):
    """``get(x) = make(x)``, remembering the last x (by value): a Newton iteration asks for the
    Jacobian at the point whose residual it has just computed, and a line search at the rounding
    floor tries points equal to the current one, so these share one evaluation."""
    last = [None, None]

    def get(x):
        key = x.tobytes()
        if key != last[0]:
            last[0], last[1] = key, make(x)
        return last[1]
    return get


def _fixed_p(prob, p):
    """F(x) and J(x) at fixed p for :func:`statmech.saddle.newton`, sharing one evaluation per x."""
    ev = _memo_last(lambda x: _Eval(prob, x, p))
    return (lambda x: ev(x).F), (lambda x: ev(x).J)


@dataclass(frozen=True)
class Problem:
    """A continuation problem ``F(x, p) = 0`` (see the :mod:`statmech.continuation` docstring)."""
    residual: Callable | None = None
    x0: Any = None
    p0: Any = None
    jacobian: Callable | None = None
    dFdp: Callable | None = None
    free_energy: Callable | None = None
    gradient: Callable | None = None
    hessian: Callable | None = None
    params: Mapping = field(default_factory=dict)
    sense: str = "min"
    stability: Any = None
    events: Mapping = field(default_factory=dict)
    names: tuple | None = None
    p_name: str = "p"
    weights: Any = None
    in_domain: Callable | None = None
    tol: float = 1e-10
    affine_in_p: bool = False
    rtol: float = 1e-10
    evaluate: Callable | None = None

    def __post_init__(self):
        if self.residual is None and self.free_energy is None and self.gradient is None:
            raise ValueError("Problem needs residual=F(x, p) or free_energy=f(x, p) (or gradient=)")
        if self.x0 is None:
            raise ValueError("x0 must be given (a starting point, 1-d array)")
        x0 = np.atleast_1d(check_finite("x0", self.x0)).astype(float).ravel()
        object.__setattr__(self, "x0", x0)
        if self.p0 is None:
            raise ValueError("p0 must be given (the starting value of the continuation parameter)")
        object.__setattr__(self, "p0", float(check_finite("p0", self.p0)))
        check_choice("sense", self.sense, ("min", "max"))
        if self.evaluate is not None and not callable(self.evaluate):
            raise ValueError(f"evaluate must be callable (x, p, **params) -> (F, J, F_p, f, f_p), got {self.evaluate!r}")
        if self.stability is not None and not callable(self.stability):
            check_choice("stability", self.stability, ("min", "max", "flow", "none"))
        check_range("tol", self.tol, 0.0, 1.0, lo_open=True)
        check_range("rtol", self.rtol, 0.0, 1e-3)
        if self.weights is not None:
            w = np.asarray(self.weights, dtype=float).ravel()
            if w.size != x0.size + 1 or np.any(~np.isfinite(w)) or np.any(w <= 0):
                raise ValueError(f"weights must be {x0.size + 1} positive finite numbers (x then p), got {self.weights!r}")
            object.__setattr__(self, "weights", w)
        if self.names is not None:
            names = tuple(self.names)
            if len(names) != x0.size:
                raise ValueError(f"names must have {x0.size} entries (one per component of x0), got {len(names)}")
            object.__setattr__(self, "names", names)
        object.__setattr__(self, "params", dict(self.params))
        ev = self.events
        if callable(ev):
            ev = {"event": ev}
        elif not isinstance(ev, Mapping):
            ev = {f"event{i}": g for i, g in enumerate(ev)}
        object.__setattr__(self, "events", dict(ev))

    # ------------------------------------------------------------- evaluation
    @property
    def n(self):
        return self.x0.size

    @property
    def w(self):
        return self.weights if self.weights is not None else np.ones(self.n + 1)

    @property
    def stability_mode(self):
        if self.stability is not None:
            return self.stability
        return "flow" if self.residual is not None else self.sense

    # A ValueError raised by a model function (argument outside its domain) makes the
    # value NaN: the Newton iterations then backtrack / reject the step.
    def _call(self, fn, x, p, shape):
        try:
            return np.asarray(fn(x, p, **self.params), dtype=float).reshape(shape)
        except ValueError:
            return np.full(shape, np.nan)

    def _fused(self, x, p):
        """(F, J, F_p, f, f_p) from the fused evaluator (NaN outside the domain)."""
        n = x.size
        try:
            F, J, Fp, f, fp = self.evaluate(x, p, **self.params)
        except ValueError:
            nan = np.full(n, np.nan)
            return nan, np.full((n, n), np.nan), nan, math.nan, math.nan
        if not (type(F) is type(J) is type(Fp) is np.ndarray and F.dtype == J.dtype == Fp.dtype == np.float64
                and F.shape == Fp.shape == (n,) and J.shape == (n, n)):
            F, J, Fp = _as(F, (n,)), _as(J, (n, n)), _as(Fp, (n,))
        return F, J, Fp, float(f), float(fp)

    def F(self, x, p):
        n = x.size
        if self.residual is not None:
            return self._call(self.residual, x, p, (n,))
        if self.gradient is not None:
            return self._call(self.gradient, x, p, (n,))
        return _fd_gradient(lambda xx, pp, **kw: self.f(xx, pp), x, p, {})

    def J(self, x, p):
        fn = self.jacobian if self.residual is not None else self.hessian
        if fn is not None:
            return self._call(fn, x, p, (x.size, x.size))
        return jacobian_fd(lambda z: self.F(z, p), x)

    def Fp(self, x, p):
        if self.dFdp is not None:
            return self._call(self.dFdp, x, p, (x.size,))
        return _d_dp(self.F, x, p, self.affine_in_p)

    def f(self, x, p):
        """Free energy at (x, p), or None when the problem has none (NaN outside the domain)."""
        if self.free_energy is None:
            return None
        try:
            return float(self.free_energy(x, p, **self.params))
        except ValueError:
            return math.nan

    def grad_f(self, x, p):
        if self.residual is None:
            return self.F(x, p)
        return _fd_gradient(self.free_energy, x, p, self.params)

    def f_p(self, x, p):
        return _d_dp(self.f, x, p, self.affine_in_p)

    def margin(self, x, p, J=None):
        """Stability margin: > 0 stable, < 0 unstable; inf when not assessed (``stability="none"``),
        NaN where it cannot be evaluated (the stability callable raised ValueError, or the
        Jacobian is not finite), which :attr:`Branch.stable` reports as not stable."""
        mode = self.stability_mode
        if callable(mode):
            try:
                return float(mode(x, p, **self.params))
            except ValueError:
                return math.nan
        if mode == "none":
            return math.inf
        J = self.J(x, p) if J is None else J
        if mode == "min":
            return float(_kernels.sym_eig_extreme(J, False))
        if mode == "max":
            return float(-_kernels.sym_eig_extreme(J, True))
        if not np.all(np.isfinite(J)):
            return math.nan
        return float(-np.max(np.linalg.eigvals(J).real))

    def ok(self, x, p):
        return self.in_domain is None or bool(self.in_domain(x, p))

    # ------------------------------------------------------------- copies
    def with_params(self, **kw):
        """Copy with some entries of ``params`` changed."""
        return replace(self, params={**self.params, **kw})

    def with_start(self, x0, p0):
        """Copy with another starting point."""
        return replace(self, x0=np.asarray(x0, dtype=float), p0=float(p0))

    @classmethod
    def from_sympy(cls, expr, xs, p, params=(), *, kind="free_energy", x0, p0, param_values=None, **kw):
        """Build a Problem from a sympy expression; derivatives by ``sympy.diff``.

        ``kind="free_energy"``: ``expr`` is f(x; p), gradient and Hessian derived.
        ``kind="residual"``: ``expr`` is a list of residuals, Jacobian derived.
        ``params`` are extra sympy symbols whose values come from ``param_values``.
        """
        import sympy as sp
        check_choice("kind", kind, ("free_energy", "residual"))
        xs = list(xs)
        params = list(params)
        pnames = [str(s) for s in params]
        args = [xs, p] + params
        mods = ["numpy", "scipy"]

        def wrap(lam, shape):
            def fn(x, pv, **kwp):
                out = np.asarray(lam(np.asarray(x, dtype=float).ravel(), pv, *[kwp[k] for k in pnames]),
                                 dtype=float)
                return out.reshape(shape) if shape is not None else float(out)
            return fn

        n = len(xs)
        if kind == "free_energy":
            grad = [sp.diff(expr, v) for v in xs]
            hess = [[sp.diff(gi, v) for v in xs] for gi in grad]
            fl = wrap(sp.lambdify(args, expr, mods), None)
            gl = wrap(sp.lambdify(args, sp.Matrix(grad), mods), (n,))
            hl = wrap(sp.lambdify(args, sp.Matrix(hess), mods), (n, n))
            dl = wrap(sp.lambdify(args, sp.Matrix([sp.diff(gi, p) for gi in grad]), mods), (n,))
            kw.setdefault("names", tuple(str(v) for v in xs))
            kw.setdefault("p_name", str(p))
            return cls(free_energy=fl, gradient=gl, hessian=hl, dFdp=dl, x0=x0, p0=p0,
                       params=dict(param_values or {}), **kw)
        res = list(expr) if isinstance(expr, (list, tuple, sp.Matrix)) else [expr]
        Fl = wrap(sp.lambdify(args, sp.Matrix(res), mods), (n,))
        Jl = wrap(sp.lambdify(args, sp.Matrix([[sp.diff(r, v) for v in xs] for r in res]), mods), (n, n))
        dl = wrap(sp.lambdify(args, sp.Matrix([sp.diff(r, p) for r in res]), mods), (n,))
        kw.setdefault("names", tuple(str(v) for v in xs))
        kw.setdefault("p_name", str(p))
        return cls(residual=Fl, jacobian=Jl, dFdp=dl, x0=x0, p0=p0, params=dict(param_values or {}), **kw)

