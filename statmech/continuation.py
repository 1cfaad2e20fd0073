r"""Continuation engine: branches, folds, branch points, first-order transitions.

A general pseudo-arclength continuation engine for the saddle-point equations of
every model in statmech.  Given a free energy (or a residual) depending on order
parameters ``x`` (a vector) and a control parameter ``p`` (alpha, kappa, ...), it
traces solution branches through folds, finds and locates (to ~1e-10) folds
(spinodals), branch points (pitchfork, transcritical), stability changes and user
events, switches branches at branch points, finds *all* solutions at fixed ``p``
by deflation, locates first-order transitions by equality of the free energy
between branches, and continues folds, branch points and coexistence points in a
second parameter (phase-transition lines, e.g. alpha_c(K) with K continuous).
No model-specific code: a model only supplies its free energy.

Public API
----------
``Problem(residual=F, x0=..., p0=..., jacobian=None, dFdp=None, free_energy=None, params={}, ...)``
``Problem(free_energy=f, gradient=None, hessian=None, x0=..., p0=..., sense="min", ...)``
    Frozen dataclass describing ``F(x, p) = 0``.  Every callable is called as
    ``fn(x, p, **params)`` with ``x`` a 1-d float array and ``p`` a float.
    Free-energy form: ``F = grad_x f`` (``gradient``; central differences of ``f`` as
    fallback) and Jacobian = Hessian (``hessian``; differences of ``F`` as fallback);
    a solution is stable when the Hessian is positive definite (``sense="min"``) or
    negative definite (``sense="max"``, for a free *entropy*).  Residual form: stable
    when all eigenvalues of the Jacobian have negative real part (``dx/dt = F``),
    unless ``stability`` says otherwise: ``"min" | "max" | "flow" | "none"`` or a callable
    ``margin(x, p, **params) -> float`` (> 0 stable, e.g. a replicon eigenvalue).
    ``dFdp`` defaults to central differences in ``p``.  Optional: ``events`` (dict
    name -> ``g(x, p, **params)``; zeros are located), ``names`` (order-parameter
    names), ``p_name``, ``weights`` (length n+1, the weighted norm on (x, p)),
    ``in_domain(x, p) -> bool``, ``tol`` (absolute residual tolerance, default 1e-10),
    ``rtol`` (default 1e-10: when Newton stagnates above ``tol`` because the terms of F are
    large -- rounding floor ~eps |F_x| |x| -- a point is still accepted if its componentwise
    backward error max_i |F_i| / (|F_x| |x| + |F_p| |p|)_i is <= rtol; 0 disables this),
    ``affine_in_p`` (F linear in p, as for every free energy ``f = f_0(x) + alpha f_1(x)``
    of the models: ``F_p = F(x, p+1) - F(x, p)`` exactly; otherwise 4th-order differences).
    A ``ValueError`` raised by a model function (point outside its domain) is read as NaN
    and makes the step fail, so models can validate their arguments.
    ``Problem.from_sympy(expr, xs, p, params=(), kind="free_energy"|"residual", ...)``
    derives gradient and Hessian (or the Jacobian) with ``sympy.diff``.
    ``problem.with_params(**kw)`` / ``problem.with_start(x0, p0)`` return modified copies.

``trace(problem, p_min=-inf, p_max=inf, ds=0.01, *, direction=None, ds_min=None, ds_max=None,
        max_steps=2000, s_max=inf, max_angle=0.25, detect=KINDS, tangent=None) -> Branch``
    Pseudo-arclength continuation from ``(problem.x0, problem.p0)`` (first corrected
    at fixed ``p0``).  ``direction`` +1 / -1 starts towards increasing / decreasing p,
    ``None`` traces both ways when ``p0`` is inside ``(p_min, p_max)``.  Bordered
    (n+1)x(n+1) solves for corrector and tangent, tangent orientation carried by the
    bordering row, adaptive step ``ds_min <= ds <= ds_max``, steps whose corrector
    fails, whose correction exceeds ``ds/2`` or whose tangent turns by more than
    ``max_angle`` (radians, weighted norm) are rejected (branch-jumping guard), and a
    hard cap of ``max_steps`` accepted (4x that attempted) steps.  The branch ends
    exactly on ``p_min`` / ``p_max`` when it reaches them.

``Branch`` (frozen): arrays ``p`` (m,), ``x`` (m, n), ``stable`` (m,) bool, ``f`` (m,) or
    None, ``s`` (arclength), ``tangent`` (m, n+1), ``margin`` (stability margin);
    ``special_points`` (tuple of SpecialPoint, in arclength order), ``status``
    (why each end stopped), ``complete`` (both ends stopped at a p bound, a closed
    loop or the domain boundary), ``steps``, ``rejected``, ``problem``, ``unlocated``
    (special points bracketed between two steps whose location failed: (kind, p_a, p_b));
    ``branch[name]`` gives one order parameter as an array, ``branch.points(kind)``
    the special points of one kind, ``branch.plot(ax, y=...)``.

``SpecialPoint`` (frozen): ``kind`` in ``KINDS = ("fold", "branch_point",
    "stability_change", "event")``, ``p``, ``x``, ``f``, ``s``, ``stable_before`` /
    ``stable_after`` (along increasing arclength), ``tangent``, ``residual``,
    ``name`` (event name), ``coincides`` (for a stability change: "fold" or
    "branch_point" if it happens there), ``branch`` (index in an Analysis), and
    ``value(name)``.  Folds are zeros of dp/ds, branch points zeros of the bordered
    determinant det[[F_x, F_p], [t^T]], stability changes zeros of the stability
    margin (smallest Hessian eigenvalue), events zeros of ``g``; each zero is
    bracketed between two accepted steps and located by Brent's method along the
    arclength with the corrector at tolerance ``tol/100``.

``switch_branch(problem, point, p_min, p_max, ds=..., **trace_kw) -> Branch``
    The other branch through a branch point (both halves), started along the null
    direction of ``[F_x, F_p]`` orthogonal to the known tangent.

``deflate(problem, p, starts=None, max_solutions=20, power=2.0, shift=1.0) -> list[SaddlePoint]``
    All solutions of ``F(x, p) = 0`` reachable from the starts by deflated Newton
    (Farrell et al. 2015): ``M(x) F(x)`` with ``M = prod_i (|x - x_i|^-power + shift)``,
    each root polished on the undeflated system.

``coexistence(branch_a, branch_b=None) -> list[CoexistencePoint]``
    First-order transitions: the free-energy difference between two branches (or
    between two monotone sheets of one branch when ``branch_b`` is None) is evaluated
    exactly at every point of ``branch_a`` (the partner point is re-solved at the
    same p), sign changes are found along the arclength of ``branch_a``, and each
    is refined by Newton on ``F(x1, p) = F(x2, p) = 0, f(x1, p) = f(x2, p)``.
    ``CoexistencePoint``: ``p``, ``x1``, ``x2``, ``f``, ``stable1``, ``stable2``,
    ``branches`` (indices in an Analysis), ``residual``.

``analyze(problem, p_min, p_max, *, starts=None, scan=3, ds=None, max_branches=20, **trace_kw) -> Analysis``
    Everything at once: deflation from the starts at ``scan`` values of p, trace of
    every new solution, branch switching at every branch point, repeated until no new
    branch appears; then all coexistence points.  ``Analysis`` (frozen):
    ``branches``, ``special_points`` (all, each tagged with ``.branch``),
    ``coexistence``, ``points(kind)``, ``stable_branches()``, ``plot(ax, y=...)``.

``continue_point(problem, point, param, q_min, q_max, ds=..., **trace_kw) -> Curve``
    Two-parameter continuation of a fold (``F = 0, F_x v = 0, v.v = 1``), a branch point
    (``F + b phi = 0, F_x^T phi = 0, F_p.phi = 0, |phi| = 1``, Govaerts' unfolded
    system; ``b`` stays 0 while the branch point persists), a stability change
    (``F = 0, margin = 0``), an event (``F = 0, g = 0``) or a coexistence point
    (``F(x1) = F(x2) = 0, f1 = f2``) in
    the problem parameter ``param`` (a key of ``problem.params``), e.g. alpha_c(K).
    ``Curve`` (frozen): ``kind``, ``param``, ``q``, ``p``, ``x``, ``x2``, ``b``, ``status``,
    ``branch`` (the extended-system branch, whose special points are folds of the
    line in ``q`` etc.); ``curve.p_at(q)`` re-solves exactly at one ``q``.
``curve_intersections(curve_a, curve_b) -> list[(q, p)]`` where two lines meet in the
    ``(q, p)`` plane, refined by Brent on ``p_a(q) - p_b(q)`` with exact re-solves.

Plot helpers: ``plot_branches(branches_or_analysis, ax=None, y=0)``,
``plot_phase_diagram(curves, ax=None)``.

Failures raise :class:`statmech.ConvergenceError` (starting point not converging,
location failing), bad arguments ``ValueError``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping

import numpy as np

from .errors import ConvergenceError, check_choice, check_finite, check_range
from .saddle import SaddlePoint, jacobian_fd, newton

__all__ = ["KINDS", "Problem", "Branch", "SpecialPoint", "CoexistencePoint", "Analysis", "Curve",
           "trace", "switch_branch", "deflate", "coexistence", "analyze", "continue_point",
           "curve_intersections", "plot_branches", "plot_phase_diagram"]

KINDS = ("fold", "branch_point", "stability_change", "event")
_EPS = np.finfo(float).eps


# =========================================================================== problem
def _fd_gradient(f, x, p, params):
    g = np.empty(x.size)
    for j in range(x.size):
        h = 6e-6 * max(1.0, abs(x[j]))
        e = np.zeros_like(x)
        e[j] = h
        g[j] = (f(x + e, p, **params) - f(x - e, p, **params)) / (2 * h)
    return g


@dataclass(frozen=True)
class Problem:
    """A continuation problem ``F(x, p) = 0`` (see the module docstring)."""
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
        if self.affine_in_p:  # F = A(x) + p B(x): exact difference
            return self.F(x, p + 1.0) - self.F(x, p)
        # fourth-order central differences
        h = 2e-5 * max(1.0, abs(p))
        return (8 * (self.F(x, p + h) - self.F(x, p - h)) - (self.F(x, p + 2 * h) - self.F(x, p - 2 * h))) / (12 * h)

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
        if self.affine_in_p:
            return self.f(x, p + 1.0) - self.f(x, p)
        h = 2e-5 * max(1.0, abs(p))
        return (8 * (self.f(x, p + h) - self.f(x, p - h)) - (self.f(x, p + 2 * h) - self.f(x, p - 2 * h))) / (12 * h)

    def margin(self, x, p, J=None):
        """Stability margin: > 0 stable, < 0 unstable (inf when not assessed)."""
        mode = self.stability_mode
        if callable(mode):
            try:
                return float(mode(x, p, **self.params))
            except ValueError:
                return math.nan
        if mode == "none":
            return math.inf
        J = self.J(x, p) if J is None else J
        if not np.all(np.isfinite(J)):
            return math.nan
        if mode == "min":
            return float(np.linalg.eigvalsh(0.5 * (J + J.T))[0])
        if mode == "max":
            return float(-np.linalg.eigvalsh(0.5 * (J + J.T))[-1])
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


# =========================================================================== results
@dataclass(frozen=True)
class SpecialPoint:
    """A located special point on a branch (see the module docstring)."""
    kind: str
    p: float
    x: np.ndarray
    f: float | None = None
    s: float = 0.0
    stable_before: bool | None = None
    stable_after: bool | None = None
    tangent: np.ndarray | None = None
    residual: float = 0.0
    name: str | None = None
    coincides: str | None = None
    branch: int | None = None
    names: tuple | None = field(default=None, repr=False)

    def value(self, name):
        """One order parameter by name (or index)."""
        if isinstance(name, str):
            if self.names is None or name not in self.names:
                raise ValueError(f"name must be one of {self.names}, got {name!r}")
            name = self.names.index(name)
        return float(self.x[name])


@dataclass(frozen=True)
class Branch:
    """A traced solution branch (see the module docstring)."""
    p: np.ndarray
    x: np.ndarray
    stable: np.ndarray
    f: np.ndarray | None
    s: np.ndarray
    tangent: np.ndarray
    margin: np.ndarray
    special_points: tuple
    status: tuple
    complete: bool
    steps: int
    rejected: int
    problem: Problem = field(repr=False, default=None)
    unlocated: tuple = ()

    def __len__(self):
        return self.p.size

    def __getitem__(self, name):
        names = self.problem.names if self.problem is not None else None
        if isinstance(name, str):
            if name == (self.problem.p_name if self.problem else "p"):
                return self.p
            if names is None or name not in names:
                raise KeyError(f"{name!r} is not an order parameter name ({names})")
            name = names.index(name)
        return self.x[:, name]

    def points(self, kind=None):
        """Special points (of one kind)."""
        return [sp for sp in self.special_points if kind is None or sp.kind == kind]

    def plot(self, ax=None, y=0, **kw):
        """Plot component ``y`` (index, name, or callable(branch) -> array) against p; dashed where unstable."""
        return plot_branches([self], ax=ax, y=y, **kw)


@dataclass(frozen=True)
class CoexistencePoint:
    """A first-order transition point: two solutions with equal free energy at the same p."""
    p: float
    x1: np.ndarray
    x2: np.ndarray
    f: float
    stable1: bool
    stable2: bool
    residual: float
    branches: tuple = (None, None)
    kind: str = "coexistence"


@dataclass(frozen=True)
class Analysis:
    """All branches, special points and coexistence points of a problem over a p range."""
    branches: tuple
    special_points: tuple
    coexistence: tuple
    p_min: float
    p_max: float

    def points(self, kind=None, branch=None):
        return [sp for sp in self.special_points
                if (kind is None or sp.kind == kind) and (branch is None or sp.branch == branch)]

    def stable_branches(self):
        return [i for i, b in enumerate(self.branches) if np.any(b.stable)]

    def plot(self, ax=None, y=0, **kw):
        return plot_branches(self, ax=ax, y=y, **kw)


# =========================================================================== numerics
def _wdot(w, a, b):
    return float(np.sum(w * a * b))


def _wnorm(w, a):
    return math.sqrt(_wdot(w, a, a))


class _Eval:
    """Cached evaluation of F, J, F_p at one point y = (x, p)."""
    __slots__ = ("y", "F", "J", "Fp", "A")

    def __init__(self, prob, y, F=None):
        x, p = y[:-1], y[-1]
        self.y = y
        self.F = prob.F(x, p) if F is None else F
        self.J = prob.J(x, p)
        self.Fp = prob.Fp(x, p)
        self.A = np.column_stack([self.J, self.Fp])


def _solve(M, rhs):
    """Solve M u = rhs after row and column equilibration (rows, then columns scaled to unit
    max-norm): the bordered systems mix rows of very different size (F_x entries ~1e8 next to
    the arclength row) and partial pivoting is not scale invariant."""
    with np.errstate(all="ignore"):
        r = np.max(np.abs(M), axis=1)
        r = np.where((r > 0) & np.isfinite(r), r, 1.0)
        M1 = M / r[:, None]
        c = np.max(np.abs(M1), axis=0)
        c = np.where((c > 0) & np.isfinite(c), c, 1.0)
        M2 = M1 / c[None, :]
        b = np.asarray(rhs, dtype=float) / r
    try:
        out = np.linalg.solve(M2, b)
    except np.linalg.LinAlgError:
        out = np.linalg.lstsq(M2, b, rcond=None)[0]
    return out / c


def _backward_error(F, A, y):
    """Componentwise backward error of a residual: max_i |F_i| / (|A| |y|)_i with A = [F_x, F_p]
    (n x (n+1)) and y = (x, p) -- the relative size of the residual against the size of the
    terms of each equation, i.e. the relative perturbation of the data that makes y exact.
    Rounding (of y, and inside the model's own evaluation) puts a floor of a few eps / (relative
    cancellation) under it, however ill-conditioned F_x is."""
    with np.errstate(all="ignore"):
        sc = np.abs(A) @ np.abs(y)
        if F.size == 0:
            return 0.0
        v = np.abs(F) / np.where(sc > 0, sc, np.inf)
    v = np.where(np.abs(F) == 0, 0.0, v)
    return float(np.max(v)) if np.all(np.isfinite(v)) else math.inf


def _tangent(A, border, w):
    n = A.shape[0]
    M = np.vstack([A, border])
    rhs = np.zeros(n + 1)
    rhs[-1] = 1.0
    t = _solve(M, rhs)
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
    def __init__(self, prob, maxit=12):
        self.prob = prob
        self.maxit = maxit
        self.w = prob.w

    def __call__(self, y_pred, t, tol, y_start=None):
        """Newton on F(y) = 0, <t, y - y_pred>_W = 0.  Returns (y, residual, its) or None."""
        prob, w = self.prob, self.w
        y = (y_pred if y_start is None else y_start).copy()
        border = w * t
        prev_res = math.inf
        for it in range(self.maxit + 1):
            x, p = y[:-1], y[-1]
            if not prob.ok(x, p):
                return None
            F = prob.F(x, p)
            if not np.all(np.isfinite(F)):
                return None
            res = float(np.max(np.abs(F))) if F.size else 0.0
            g = float(border @ (y - y_pred))
            if res <= tol and abs(g) <= 64 * _EPS * (1 + _wnorm(w, y_pred)) and (it > 0 or y_start is None):
                return y, res, it
            if it == self.maxit:
                return None
            J = prob.J(x, p)
            Fp = prob.Fp(x, p)
            A = np.column_stack([J, Fp])
            # noise floor: an absolute tol may be unreachable when the terms of F are large
            # (ill-conditioned F_x at large K).  Once Newton stagnates (the residual no longer
            # drops 4x per step: rounding noise, not truncation, dominates) the point is accepted
            # if the componentwise backward error max_i |F_i| / (|F_x| |x| + |F_p| |p|)_i <= rtol
            if it >= 2 and res > 0.25 * prev_res and abs(g) <= 64 * _EPS * (1 + _wnorm(w, y_pred)) and \
                    _backward_error(F, A, y) <= prob.rtol:
                return y, res, it
            prev_res = res
            M = np.vstack([A, border])
            dy = _solve(M, -np.append(F, g))
            if not np.all(np.isfinite(dy)):
                return None
            y = y + dy
            # stagnation at the rounding floor of F (large terms cancelling): a Newton step
            # at the level of the rounding of y with a residual within 1000 tol is converged
            if it >= 2 and np.max(np.abs(dy)) <= 1e-14 * (1 + np.max(np.abs(y))) and res <= 1e3 * tol:
                return y, res, it + 1
        return None


@dataclass
class _Pt:
    y: np.ndarray
    t: np.ndarray
    margin: float
    det: float
    ev: np.ndarray
    f: float | None
    logdet: float = 0.0


def _point_data(prob, y, t_prev_border, w, ev=None):
    """Tangent and test-function values at an accepted point."""
    e = _Eval(prob, y)
    t = _tangent(e.A, t_prev_border, w)
    if t is None:
        return None
    sgn, logdet = np.linalg.slogdet(np.vstack([e.A, w * t]))
    margin = prob.margin(y[:-1], y[-1], e.J)
    evs = np.array([float(g(y[:-1], y[-1], **prob.params)) for g in prob.events.values()])
    return _Pt(y, t, margin, float(sgn), evs, prob.f(y[:-1], y[-1]), float(logdet))


def _sgn(v):
    return 1 if v > 0 else (-1 if v < 0 else 0)


class _Tracer:
    def __init__(self, prob, p_min, p_max, ds, ds_min, ds_max, max_steps, s_max, max_angle, detect):
        self.prob = prob
        self.w = prob.w
        self.p_min, self.p_max = p_min, p_max
        self.ds, self.ds_min, self.ds_max = ds, ds_min, ds_max
        self.max_steps = max_steps
        self.s_max = s_max
        self.cos_max = math.cos(max_angle)
        self.detect = set(detect)
        self.corr = _Corrector(prob)
        self.loc_tol = max(prob.tol * 1e-2, 1e-14)
        self.unlocated = []

    # --------------------------------------------------------------- location
    def _y_at(self, a, sigma, cache, interp=False):
        """Corrected point at projected arclength sigma from accepted point a (along a.t)."""
        key = float(sigma)
        if key in cache:
            return cache[key]
        y_pred = a.y + sigma * a.t
        start = None
        if cache:
            nearest = min(cache, key=lambda k: abs(k - key))
            start = cache[nearest] + (sigma - nearest) * a.t
        r = self.corr(y_pred, a.t, self.loc_tol, y_start=start)
        if r is None:
            r = self.corr(y_pred, a.t, self.prob.tol, y_start=None)
        if r is None and interp:
            # next to a branch point the bordered corrector is singular: interpolate between
            # the nearest corrected points on either side (the point is polished afterwards)
            lo = max((k for k in cache if k < key), default=None)
            hi = min((k for k in cache if k > key), default=None)
            if lo is not None and hi is not None:
                lam = (key - lo) / (hi - lo)
                return (1 - lam) * cache[lo] + lam * cache[hi]
        if r is None:
            raise ConvergenceError("continuation: corrector failed while locating a special point",
                                   x=y_pred, diagnostics={"sigma": sigma})
        cache[key] = r[0]
        return r[0]

    def _tau(self, kind, idx, a, y):
        prob, w = self.prob, self.w
        x, p = y[:-1], y[-1]
        if kind == "event":
            return float(list(prob.events.values())[idx](x, p, **prob.params))
        if kind == "stability_change":
            return prob.margin(x, p)
        e = _Eval(prob, y)
        if kind == "branch_point":
            sg, ld = np.linalg.slogdet(np.vstack([e.A, w * a.t]))
            return float(sg * math.exp(min(ld - a.logdet, 700.0)))
        t = _tangent(e.A, w * a.t, w)
        return float(t[-1]) if t is not None else 0.0

    def _locate(self, kind, idx, a, b, h):
        from scipy.optimize import brentq
        cache = {0.0: a.y, float(h): b.y}
        bp = kind == "branch_point"
        phi = lambda sg: self._tau(kind, idx, a, self._y_at(a, sg, cache, interp=bp))
        f0, f1 = phi(0.0), phi(h)
        if f0 == 0.0:
            sig = 0.0
        elif f1 == 0.0:
            sig = float(h)
        elif f0 * f1 > 0:
            # the test function did not change sign on the corrected segment: take the
            # end with the smaller value (should not happen; recorded as residual)
            sig = 0.0 if abs(f0) < abs(f1) else float(h)
        else:
            sig = brentq(phi, 0.0, h, xtol=1e-14, rtol=4 * _EPS, maxiter=200)
        y = self._y_at(a, sig, cache, interp=bp)
        if bp:
            y = _polish_branch_point(self.prob, y, self.loc_tol, max_move=max(h, _wnorm(self.w, b.y - a.y)))
        e = _Eval(self.prob, y)
        if kind == "branch_point":
            # the tangent is continuous through a branch point but the bordered system is
            # singular there: project the interpolated tangent on the null space of [F_x, F_p]
            lam = sig / h if h else 0.0
            ti = (1 - lam) * a.t + lam * b.t
            _, _, vt = np.linalg.svd(e.A)
            basis = vt[-2:]
            t = basis.T @ (basis @ ti)
            t = t / _wnorm(self.w, t)
        else:
            t = _tangent(e.A, self.w * a.t, self.w)
        if t is None:
            t = a.t
        res = float(np.max(np.abs(e.F))) if e.F.size else 0.0
        return y, t, sig, res

    # --------------------------------------------------------------- one direction
    def run(self, y0, t0, start_pt=None, free_first=False):
        prob, w = self.prob, self.w
        if start_pt is None:
            start_pt = _point_data(prob, y0, w * t0, w)
            if start_pt is None:
                raise ConvergenceError("continuation: singular bordered system at the start", x=y0)
        pts = [start_pt]
        sps = []
        h = self.ds
        steps = rejected = 0
        s_total = 0.0
        status = "max_steps"
        while True:
            if steps >= self.max_steps or steps + rejected >= 4 * self.max_steps:
                status = "max_steps"
                break
            if s_total >= self.s_max:
                status = "s_max"
                break
            a = pts[-1]
            y_pred = a.y + h * a.t
            r = self.corr(y_pred, a.t, prob.tol)
            b = None
            if r is not None:
                y_new = r[0]
                # the first step off a branch point follows the null direction, not the
                # tangent of the new branch: no size / angle guard for it
                guard = not (free_first and steps == 0)
                if not guard or _wnorm(w, y_new - y_pred) <= 0.5 * h:
                    b = _point_data(prob, y_new, w * a.t, w)
                    if guard and b is not None:
                        # branch-jump guard: the new tangent and the secant must stay within
                        # max_angle of the old tangent
                        sec = b.y - a.y
                        cs = _wdot(w, sec, a.t) / max(_wnorm(w, sec), 1e-300)
                        if _wdot(w, b.t, a.t) < self.cos_max or cs < self.cos_max:
                            b = None
            if b is None:
                rejected += 1
                h *= 0.5
                if h < self.ds_min:
                    status = "ds_min"
                    break
                continue
            its = r[2]
            # ----- p bounds: land exactly on the bound
            stop = None
            pb = b.y[-1]
            if pb > self.p_max or pb < self.p_min:
                bound = self.p_max if pb > self.p_max else self.p_min
                from scipy.optimize import brentq
                cache = {0.0: a.y, float(h): b.y}
                try:
                    if a.y[-1] == bound:
                        sig = 0.0
                    else:
                        sig = brentq(lambda sg: self._y_at(a, sg, cache)[-1] - bound, 0.0, h,
                                     xtol=1e-15 * max(1.0, h), rtol=4 * _EPS)
                    yb = self._y_at(a, sig, cache).copy() if sig != 0.0 else None
                except ConvergenceError:
                    # the corrector failed inside the step: a shorter step, as for a rejection
                    rejected += 1
                    h *= 0.5
                    if h < self.ds_min:
                        status = "ds_min"
                        break
                    continue
                if sig == 0.0:
                    status = "p_max" if bound == self.p_max else "p_min"
                    break
                yb[-1] = bound
                rr = newton(lambda xx: prob.F(xx, bound), yb[:-1], lambda xx: prob.J(xx, bound),
                            tol=self.loc_tol, raise_on_fail=False)
                if rr.converged or _scaled_ok(prob, rr.x, bound):
                    yb[:-1] = rr.x
                b = _point_data(prob, yb, w * a.t, w)
                h = sig
                stop = "p_max" if bound == self.p_max else "p_min"
            steps += 1
            new = self._detect(a, b, h, s_total)
            sps.extend(new)
            # the located points are exact solutions: insert them into the branch arrays
            for q in new:
                if q.coincides is not None or q.kind == "branch_point":
                    continue
                yq0 = np.append(q.x, q.p)
                if any(_wnorm(w, o.y - yq0) <= 1e-9 * (1 + _wnorm(w, yq0)) for o in pts[-len(new) - 1:]):
                    continue
                yq = np.append(q.x, q.p)
                pts.append(_Pt(yq, q.tangent, prob.margin(q.x, q.p), a.det, a.ev, q.f, a.logdet))
            s_total += _wnorm(w, b.y - a.y)
            pts.append(b)
            if stop:
                status = stop
                break
            # closed loop: came back to the start
            if steps > 3 and _wnorm(w, b.y - pts[0].y) < 0.5 * h and _wdot(w, b.t, pts[0].t) > 0.9:
                status = "closed_loop"
                break
            if its <= 4:
                h = min(h * 1.6, self.ds_max)
            elif its <= 5:
                h = min(h * 1.25, self.ds_max)
            elif its >= 8:
                h = max(h * 0.6, self.ds_min)
        return pts, sps, status, steps, rejected

    def _detect(self, a, b, h, s0):
        prob, w = self.prob, self.w
        found = []
        if "fold" in self.detect and _sgn(a.t[-1]) * _sgn(b.t[-1]) < 0:
            found.append(("fold", -1))
        if "branch_point" in self.detect and _sgn(a.det) * _sgn(b.det) < 0:
            found.append(("branch_point", -1))
        stab = prob.stability_mode != "none"
        if "stability_change" in self.detect and stab and _sgn(a.margin) * _sgn(b.margin) < 0:
            found.append(("stability_change", -1))
        if "event" in self.detect:
            for i in range(a.ev.size):
                if _sgn(a.ev[i]) * _sgn(b.ev[i]) < 0 or (b.ev[i] == 0 and a.ev[i] != 0):
                    found.append(("event", i))
        out = []
        names = list(prob.events)
        for kind, idx in found:
            try:
                y, t, sig, res = self._locate(kind, idx, a, b, h)
            except ConvergenceError:
                # bracketed but not located (corrector failure inside the step): report the
                # bracket, never a wrong point
                self.unlocated.append((kind, float(a.y[-1]), float(b.y[-1])))
                continue
            out.append(SpecialPoint(
                kind=kind, p=float(y[-1]), x=y[:-1].copy(), f=prob.f(y[:-1], y[-1]),
                s=s0 + _wnorm(w, y - a.y), stable_before=bool(a.margin > 0), stable_after=bool(b.margin > 0),
                tangent=t, residual=res, name=names[idx] if kind == "event" else None, names=prob.names))
        # a stability change located in the same step as a branch point happens at the branch
        # point (gradient systems: the Hessian is singular there); near a branch point the
        # bordered corrector is ill-conditioned, so take the (polished) branch point itself
        bps = [q for q in out if q.kind == "branch_point"]
        if bps and prob.stability_mode in ("min", "max"):
            out = [replace(q, p=bps[0].p, x=bps[0].x.copy(), s=bps[0].s, f=bps[0].f, residual=bps[0].residual,
                           coincides="branch_point") if q.kind == "stability_change" else q for q in out]
        # stability changes at folds / branch points
        for i, sp_ in enumerate(out):
            if sp_.kind != "stability_change":
                continue
            for other in out:
                if other.kind in ("fold", "branch_point") and \
                        _wnorm(w, np.append(other.x - sp_.x, other.p - sp_.p)) <= 1e-6 * (1 + _wnorm(w, np.append(sp_.x, sp_.p))):
                    out[i] = replace(sp_, coincides=other.kind)
                    break
        return sorted(out, key=lambda q: q.s)


def _bp_system(prob, n, sJ=1.0, sP=1.0):
    """Govaerts' regular system for a branch point: F + b phi = 0, F_x^T phi = 0, F_p.phi = 0,
    |phi| = 1 (the F_x^T phi rows scaled by the size sJ of F_x, the F_p.phi row by that of F_p)."""
    def G(z):
        x, ph, p, b = z[:n], z[n:2 * n], z[2 * n], z[2 * n + 1]
        return np.concatenate([prob.F(x, p) + b * ph, prob.J(x, p).T @ ph / sJ,
                               [prob.Fp(x, p) @ ph / sP, ph @ ph - 1.0]])
    return G


def _polish_branch_point(prob, y, tol, max_move=math.inf):
    """Newton on Govaerts' regular branch-point system from a located estimate.

    Unknowns (x, phi, p, b): F + b phi = 0, F_x^T phi = 0, F_p.phi = 0, |phi|^2 = 1.  The Jacobian
    uses F_x and F_p exactly and differences of F_x for the third derivatives.  Returns the
    polished (x, p), or y unchanged when Newton fails, b is not ~0 (no branch point), or the
    point moved by more than max_move.
    """
    n = prob.n
    x, p = y[:-1].copy(), float(y[-1])
    J = prob.J(x, p)
    if not np.all(np.isfinite(J)):
        return y
    _, _, vt = np.linalg.svd(J.T)
    ph = vt[-1].copy()
    b = 0.0
    sJ = max(1.0, float(np.max(np.abs(J))))
    sP = max(1.0, float(np.max(np.abs(prob.Fp(x, p)))))

    def Jp(xx, pp):
        if prob.affine_in_p:
            return prob.J(xx, pp + 1.0) - prob.J(xx, pp)
        h = 1e-5 * max(1.0, abs(pp))
        return (prob.J(xx, pp + h) - prob.J(xx, pp - h)) / (2 * h)

    def system(xx, phv, pp, bb):
        F, Jx, Fp = prob.F(xx, pp), prob.J(xx, pp), prob.Fp(xx, pp)
        G = np.concatenate([F + bb * phv, Jx.T @ phv / sJ, [Fp @ phv / sP, phv @ phv - 1.0]])
        return G, Jx, Fp

    best = None
    for it in range(25):
        G, Jx, Fp = system(x, ph, p, b)
        if not np.all(np.isfinite(G)):
            break
        res = float(np.max(np.abs(G)))
        if best is None or res < best[0]:
            best = (res, x.copy(), p, b)
        if res <= tol:
            break
        M = np.zeros((2 * n + 2, 2 * n + 2))
        M[:n, :n] = Jx
        M[:n, n:2 * n] = b * np.eye(n)
        M[:n, 2 * n] = Fp
        M[:n, 2 * n + 1] = ph
        for j in range(n):  # third derivatives: differences of F_x in x
            h = 1e-5 * max(1.0, abs(x[j]))
            e = np.zeros(n)
            e[j] = h
            M[n:2 * n, j] = (prob.J(x + e, p).T @ ph - prob.J(x - e, p).T @ ph) / (2 * h * sJ)
        Jpp = Jp(x, p)
        M[n:2 * n, n:2 * n] = Jx.T / sJ
        M[n:2 * n, 2 * n] = Jpp.T @ ph / sJ
        M[2 * n, :n] = (Jpp.T @ ph) / sP  # d(F_p.phi)/dx = (dF_x/dp)^T phi
        M[2 * n, n:2 * n] = Fp / sP
        M[2 * n + 1, n:2 * n] = 2 * ph
        try:
            dz = np.linalg.solve(M, -G)
        except np.linalg.LinAlgError:
            break
        if not np.all(np.isfinite(dz)):
            break
        x = x + dz[:n]
        ph = ph + dz[n:2 * n]
        p = p + dz[2 * n]
        b = b + dz[2 * n + 1]
        if np.max(np.abs(dz)) <= 1e-14 * (1 + max(np.max(np.abs(x)), abs(p))):
            G, _, _ = system(x, ph, p, b)
            res = float(np.max(np.abs(G)))
            if res < best[0]:
                best = (res, x.copy(), p, b)
            break
    if best is None or best[0] > 10 * prob.tol or abs(best[3]) > 1e-8:
        return y
    y_new = np.append(best[1], best[2])
    if _wnorm(prob.w, y_new - y) > max_move:
        return y
    return y_new


def _start_point(prob, x0, p0):
    r = newton(lambda xx: prob.F(xx, p0), x0, lambda xx: prob.J(xx, p0), tol=prob.tol * 1e-2,
               maxiter=60, raise_on_fail=False,
               in_domain=None if prob.in_domain is None else (lambda xx: prob.ok(xx, p0)))
    if not r.converged:
        r = newton(lambda xx: prob.F(xx, p0), x0, lambda xx: prob.J(xx, p0), tol=prob.tol, maxiter=60,
                   raise_on_fail=False,
                   in_domain=None if prob.in_domain is None else (lambda xx: prob.ok(xx, p0)))
    if not r.converged and not _scaled_ok(prob, r.x, p0):
        raise ConvergenceError("continuation: the starting point does not converge at fixed p0",
                               x=r.x, residual=r.residual, iterations=r.iterations, diagnostics={"p0": p0})
    return np.append(r.x, p0)


def _assemble(prob, halves, statuses, steps, rejected):
    """Merge a backward half (reversed) and a forward half into one Branch."""
    w = prob.w
    if len(halves) == 1:
        pts, sps = halves[0]
        back_pts, back_sps = [], []
    else:
        (back_pts, back_sps), (pts, sps) = halves
        back_pts = back_pts[1:]
    back_len = 0.0
    ordered = list(reversed(back_pts)) + list(pts)
    ys = np.array([q.y for q in ordered])
    if len(halves) == 2:
        seg = [_wnorm(w, ys[i + 1] - ys[i]) for i in range(len(ordered) - 1)]
        s = np.concatenate([[0.0], np.cumsum(seg)])
        back_len = s[len(back_pts)]
    else:
        seg = [_wnorm(w, ys[i + 1] - ys[i]) for i in range(len(ordered) - 1)]
        s = np.concatenate([[0.0], np.cumsum(seg)])
    tang = np.array([q.t for q in ordered])
    nb = len(back_pts)
    if nb:
        tang[:nb] = -tang[:nb]
    sp_all = []
    for sp_ in back_sps:
        sp_all.append(replace(sp_, s=back_len - sp_.s, stable_before=sp_.stable_after, stable_after=sp_.stable_before,
                              tangent=None if sp_.tangent is None else -sp_.tangent))
    for sp_ in sps:
        sp_all.append(replace(sp_, s=back_len + sp_.s))
    sp_all.sort(key=lambda q: q.s)
    margin = np.array([q.margin for q in ordered])
    f = None if prob.free_energy is None else np.array([q.f for q in ordered], dtype=float)
    complete = all(st in ("p_max", "p_min", "closed_loop", "domain") for st in statuses)
    return Branch(p=ys[:, -1].copy(), x=ys[:, :-1].copy(), stable=margin > 0, f=f, s=s, tangent=tang,
                  margin=margin, special_points=tuple(sp_all), status=tuple(statuses), complete=complete,
                  steps=steps, rejected=rejected, problem=prob)


def _weighted(prob, p_min, p_max):
    """Default weighted norm: x components weight 1, p measured in units of the traced range."""
    if prob.weights is not None:
        return prob
    L = p_max - p_min
    wp = 1.0 / L ** 2 if math.isfinite(L) and L > 0 else 1.0
    return replace(prob, weights=np.append(np.ones(prob.n), wp))


def _trace_kw(prob, p_min, p_max, ds, ds_min, ds_max, max_steps, s_max, max_angle, detect):
    p_min = float(check_range("p_min", p_min, allow_inf=True))
    p_max = float(check_range("p_max", p_max, allow_inf=True))
    if not p_min < p_max:
        raise ValueError(f"p_min must be < p_max, got p_min={p_min!r}, p_max={p_max!r}")
    prob = _weighted(prob, p_min, p_max)
    ds = float(check_range("ds", ds, 0.0, lo_open=True))
    ds_min = ds * 1e-6 if ds_min is None else float(check_range("ds_min", ds_min, 0.0, ds, lo_open=True))
    if ds_max is None:
        ds_max = 10 * ds
    ds_max = float(check_range("ds_max", ds_max, ds))
    max_steps = int(check_range("max_steps", max_steps, 1, 10 ** 7))
    s_max = float(check_range("s_max", s_max, 0.0, lo_open=True, allow_inf=True))
    max_angle = float(check_range("max_angle", max_angle, 0.0, math.pi / 2, lo_open=True))
    for k in detect:
        check_choice("detect", k, KINDS)
    return _Tracer(prob, p_min, p_max, ds, ds_min, ds_max, max_steps, s_max, max_angle, detect)


def trace(problem, p_min=-math.inf, p_max=math.inf, ds=0.01, *, direction=None, ds_min=None, ds_max=None,
          max_steps=2000, s_max=math.inf, max_angle=0.25, detect=KINDS, tangent=None):
    """Trace the solution branch through ``(problem.x0, problem.p0)`` by pseudo-arclength continuation.

    See the module docstring for the algorithm and the returned :class:`Branch`.
    """
    if not isinstance(problem, Problem):
        raise ValueError(f"problem must be a statmech.continuation.Problem, got {type(problem).__name__}")
    tr = _trace_kw(problem, p_min, p_max, ds, ds_min, ds_max, max_steps, s_max, max_angle, detect)
    problem = tr.prob
    if not tr.p_min <= problem.p0 <= tr.p_max:
        raise ValueError(f"p0 must be in [p_min, p_max] = [{tr.p_min}, {tr.p_max}], got {problem.p0}")
    if direction is not None and direction not in (1, -1):
        raise ValueError(f"direction must be +1, -1 or None, got {direction!r}")
    y0 = _start_point(problem, problem.x0, problem.p0)
    w = problem.w
    if tangent is not None:
        t0 = np.asarray(tangent, dtype=float)
        if t0.shape != (problem.n + 1,):
            raise ValueError(f"tangent must have length n+1 = {problem.n + 1}")
        t0 = t0 / _wnorm(w, t0)
    else:
        e = _Eval(problem, y0)
        t0 = _null_tangent(e.A, w, 1.0)
        if direction == -1:
            t0 = -t0
    return _trace_both(problem, tr, y0, t0, both=(direction is None and tangent is None))


def _trace_both(prob, tr, y0, t0, both, start_pt=None, free_first=False):
    p0 = y0[-1]
    halves, statuses = [], []
    steps = rejected = 0
    dirs = []
    if both and tr.p_min < p0 < tr.p_max:
        dirs = [-1, 1]
    elif both and p0 >= tr.p_max:
        dirs = [-1 if t0[-1] > 0 else 1]
    elif both and p0 <= tr.p_min:
        dirs = [1 if t0[-1] > 0 else -1]
    else:
        dirs = [1]
    for d in dirs:
        sp0 = None if start_pt is None else replace(start_pt, t=d * start_pt.t)
        pts, sps, status, st, rj = tr.run(y0, d * t0, sp0, free_first)
        halves.append((pts, sps))
        statuses.append(status)
        steps += st
        rejected += rj
    if len(dirs) == 2:
        statuses = statuses  # (backward end, forward end)
    return replace(_assemble(prob, halves, statuses, steps, rejected), unlocated=tuple(tr.unlocated))


# =========================================================================== branch switching
def _other_direction(prob, y, t1):
    w = prob.w
    e = _Eval(prob, y)
    _, sv, vt = np.linalg.svd(e.A)
    basis = vt[-2:]  # two smallest right singular vectors (A is n x (n+1))
    best = None
    for v in basis:
        d = v - _wdot(w, v, t1) * t1
        nd = _wnorm(w, d)
        if best is None or nd > best[1]:
            best = (d, nd)
    d = best[0] / best[1]
    # algebraic bifurcation equation: the tangents a t1 + b d of the two branches are the
    # roots of phi . D2F[v, v] = 0 (phi the left null vector of [F_x, F_p]); t1 is one root,
    # the other has a / b = -c22 / (2 c12).  Second derivatives by central differences.
    u, _, _ = np.linalg.svd(e.A)
    phi = u[:, -1]
    x, p = y[:-1], y[-1]
    scale = 1 + float(np.max(np.abs(y)))

    def d2(v):
        eps = 1e-4 * scale / max(float(np.max(np.abs(v))), 1e-300)
        fp = prob.F(x + eps * v[:-1], p + eps * v[-1])
        fm = prob.F(x - eps * v[:-1], p - eps * v[-1])
        return float(phi @ (fp - 2 * e.F + fm)) / eps ** 2

    c22 = d2(d)
    c12 = (d2(t1 + d) - d2(t1 - d)) / 4
    if abs(c12) > 1e-8 * (abs(c22) + abs(d2(t1)) + 1e-300) and math.isfinite(c12):
        t2 = (-c22 / (2 * c12)) * t1 + d
        d = t2 / _wnorm(w, t2)
    return d


def switch_branch(problem, point, p_min=-math.inf, p_max=math.inf, ds=0.01, **trace_kw):
    """Trace the other branch through a branch point (both halves).

    ``point`` is a :class:`SpecialPoint` of kind ``"branch_point"`` (with its tangent
    along the known branch).  The second direction is the null vector of
    ``[F_x, F_p]`` orthogonal (weighted) to the known tangent; the first corrector
    step is taken on the hyperplane orthogonal to it, which cannot fall back on the
    known branch for small ``ds``.
    """
    if not isinstance(point, SpecialPoint) or point.kind != "branch_point":
        raise ValueError("point must be a SpecialPoint of kind 'branch_point'")
    tr = _trace_kw(problem, p_min, p_max, ds, trace_kw.pop("ds_min", None), trace_kw.pop("ds_max", None),
                   trace_kw.pop("max_steps", 2000), trace_kw.pop("s_max", math.inf),
                   trace_kw.pop("max_angle", 0.25), trace_kw.pop("detect", KINDS))
    if trace_kw:
        raise ValueError(f"unknown keyword arguments: {sorted(trace_kw)}")
    problem = tr.prob
    w = problem.w
    y = np.append(point.x, point.p)
    t1 = point.tangent if point.tangent is not None else _null_tangent(_Eval(problem, y).A, w)
    d = _other_direction(problem, y, t1)
    if d[-1] < 0:
        d = -d
    evs = np.array([float(g(y[:-1], y[-1], **problem.params)) for g in problem.events.values()])
    # the start point is the branch point itself: det = 0 and the margin is 0 there
    start = _Pt(y, d, 0.0, 0.0, evs, problem.f(y[:-1], y[-1]))
    br = _trace_both(problem, tr, y, d, both=True, start_pt=start, free_first=False)
    if br.p.size < 3:
        raise ConvergenceError("switch_branch: could not leave the branch point along the second direction",
                               x=y, diagnostics={"status": str(br.status)})
    # record the branch point itself on the new branch
    idx = int(np.argmin(np.abs(br.s - _closest_s(br, y))))
    bp = replace(point, s=float(br.s[idx]), tangent=br.tangent[idx], branch=None)
    sps = tuple(sorted(br.special_points + (bp,), key=lambda q: q.s))
    return replace(br, special_points=sps)


def _closest_s(br, y):
    d = np.hypot.reduce(np.column_stack([br.x - y[:-1], br.p - y[-1]]), axis=1)
    return br.s[int(np.argmin(d))]


# =========================================================================== deflation
def deflate(problem, p, starts=None, max_solutions=20, power=2.0, shift=1.0, maxiter=40):
    """All solutions of ``F(x, p) = 0`` found by deflated Newton from the starts.

    Returns a list of :class:`SaddlePoint` (``order_params`` by name, ``thermo`` with
    the free energy, ``hessian_eigenvalues`` of the Jacobian's symmetric part, and
    ``rs_stable`` = the problem's stability criterion), sorted by the first component.
    """
    p = float(check_finite("p", p))
    max_solutions = int(check_range("max_solutions", max_solutions, 1, 10 ** 4))
    check_range("power", power, 0.0, lo_open=True)
    check_range("shift", shift, 0.0)
    starts = [problem.x0] if starts is None else [np.atleast_1d(np.asarray(s, dtype=float)) for s in starts]
    found = []
    tol = problem.tol
    dom = None if problem.in_domain is None else (lambda xx: problem.ok(xx, p))
    for x_start in starts:
        if dom is not None and not dom(x_start):
            continue
        for _ in range(max_solutions):
            roots = list(found)

            def M_and_grad(x):
                m, g = 1.0, np.zeros_like(x)
                for r in roots:
                    dx = x - r
                    d2 = float(dx @ dx)
                    if d2 == 0.0:
                        return math.inf, g
                    mi = d2 ** (-power / 2) + shift
                    gi = -power * d2 ** (-power / 2 - 1) * dx
                    m *= mi
                    g = g + gi / mi
                return m, m * g

            def G(x):
                m, _ = M_and_grad(x)
                if not math.isfinite(m):
                    return np.full(x.size, math.inf)
                return m * problem.F(x, p)

            def JG(x):
                m, gm = M_and_grad(x)
                F = problem.F(x, p)
                return m * problem.J(x, p) + np.outer(F, gm)

            try:
                r = newton(G, x_start, JG, tol=tol, maxiter=maxiter, raise_on_fail=False, in_domain=dom)
            except ConvergenceError:
                break
            if not r.converged:
                break
            # polish on the undeflated system
            r2 = newton(lambda xx: problem.F(xx, p), r.x, lambda xx: problem.J(xx, p), tol=tol * 1e-2,
                        maxiter=30, raise_on_fail=False, in_domain=dom)
            if not r2.converged:
                r2 = newton(lambda xx: problem.F(xx, p), r.x, lambda xx: problem.J(xx, p), tol=tol,
                            maxiter=30, raise_on_fail=False, in_domain=dom)
                if not r2.converged:
                    break
            if any(np.max(np.abs(r2.x - q)) <= 1e-8 * (1 + np.max(np.abs(q))) for q in found):
                break
            found.append(r2.x)
            if len(found) >= max_solutions:
                break
        if len(found) >= max_solutions:
            break
    found.sort(key=lambda v: tuple(v))
    names = problem.names or tuple(f"x{i}" for i in range(problem.n))
    out = []
    for x in found:
        J = problem.J(x, p)
        ev = np.linalg.eigvalsh(0.5 * (J + J.T))
        mg = problem.margin(x, p, J)
        res = float(np.max(np.abs(problem.F(x, p))))
        thermo = {} if problem.free_energy is None else {"free_energy": problem.f(x, p)}
        out.append(SaddlePoint("continuation.deflate", {problem.p_name: p}, dict(zip(names, map(float, x))),
                               thermo, True, res, 0, ev, None, None if mg == math.inf else bool(mg > 0),
                               {"x": x}))
    return out


# =========================================================================== coexistence
def _sheets(br):
    """Index ranges [i0, i1] on which p is monotone along the branch (split at folds)."""
    dp = np.diff(br.p)
    out = []
    i0 = 0
    for i in range(1, dp.size):
        if (dp[i] > 0) != (dp[i - 1] > 0) and dp[i] != 0 and dp[i - 1] != 0:
            out.append((i0, i))
            i0 = i
    out.append((i0, br.p.size - 1))
    return [(a, b) for a, b in out if b > a]


def _on_sheet(prob, br, sheet, p):
    """Exact point of sheet (i0, i1) of br at parameter p (None if outside or failing)."""
    i0, i1 = sheet
    ps = br.p[i0:i1 + 1]
    lo, hi = min(ps[0], ps[-1]), max(ps[0], ps[-1])
    if not lo <= p <= hi:
        return None
    inc = ps[-1] >= ps[0]
    k = int(np.searchsorted(ps if inc else -ps, p if inc else -p))
    k = min(max(k, 1), ps.size - 1)
    pa, pb = ps[k - 1], ps[k]
    lam = 0.0 if pb == pa else (p - pa) / (pb - pa)
    xg = (1 - lam) * br.x[i0 + k - 1] + lam * br.x[i0 + k]
    seg = float(np.max(np.abs(br.x[i0 + k] - br.x[i0 + k - 1]))) + 1e-12
    r = newton(lambda xx: prob.F(xx, p), xg, lambda xx: prob.J(xx, p), tol=prob.tol, maxiter=30,
               raise_on_fail=False)
    # accept a Newton stalled at the rounding floor of F (within 1000 tol, or a componentwise
    # backward error below rtol)
    if not (r.converged or r.residual <= 1e3 * prob.tol or _scaled_ok(prob, r.x, p)) or \
            np.max(np.abs(r.x - xg)) > 2 * seg:
        return None
    return r.x


def _scaled_ok(prob, x, p):
    """Does (x, p) pass the scaled residual test (backward error <= prob.rtol)?"""
    if not np.all(np.isfinite(x)):
        return False
    F = prob.F(x, p)
    if not np.all(np.isfinite(F)):
        return False
    return _backward_error(F, np.column_stack([prob.J(x, p), prob.Fp(x, p)]), np.append(x, p)) <= prob.rtol


def _sheet_point(prob, br, sheet, p):
    i0, i1 = sheet
    hit = np.nonzero(br.p[i0:i1 + 1] == p)[0]
    if hit.size:
        return br.x[i0 + hit[0]]
    return _on_sheet(prob, br, sheet, p)


def _coexistence_residual(prob, z, scale):
    """Coexistence system at z = (x1, x2, p): F(x1) = F(x2) = 0, (f(x1) - f(x2))/scale = 0."""
    n = prob.n
    a, b, pp = z[:n], z[n:2 * n], z[-1]
    return np.concatenate([prob.F(a, pp), prob.F(b, pp), [(prob.f(a, pp) - prob.f(b, pp)) / scale]])


def _coexistence_jacobian(prob, z, scale):
    """Jacobian of :func:`_coexistence_residual` (bordered by the p column and the f-difference row)."""
    n = prob.n
    a, b, pp = z[:n], z[n:2 * n], z[-1]
    M = np.zeros((2 * n + 1, 2 * n + 1))
    M[:n, :n] = prob.J(a, pp)
    M[:n, -1] = prob.Fp(a, pp)
    M[n:2 * n, n:2 * n] = prob.J(b, pp)
    M[n:2 * n, -1] = prob.Fp(b, pp)
    M[-1, :n] = prob.grad_f(a, pp) / scale
    M[-1, n:2 * n] = -prob.grad_f(b, pp) / scale
    M[-1, -1] = (prob.f_p(a, pp) - prob.f_p(b, pp)) / scale
    return M


def _refine_coexistence(prob, x1, x2, p):
    scale = max(1.0, abs(prob.f(x1, p)))

    def G(z):
        return _coexistence_residual(prob, z, scale)

    def JG(z):
        return _coexistence_jacobian(prob, z, scale)

    z0 = np.concatenate([x1, x2, [p]])
    r = newton(G, z0, JG, tol=max(prob.tol * 1e-2, 1e-14), maxiter=40, raise_on_fail=False)
    if not r.converged:
        r = newton(G, z0, JG, tol=prob.tol, maxiter=40, raise_on_fail=False)
    return r, JG


def _coexistence_from(prob, d0, d1, idx, out):
    """Refine a bracketed sign change of f1 - f2 (samples (df, x1, x2, p)) into a CoexistencePoint,
    or None (Newton failing, a degenerate solution, or a duplicate of one in ``out``)."""
    n = prob.n
    lam = d0[0] / (d0[0] - d1[0]) if d0[0] != d1[0] else 0.0
    x1 = (1 - lam) * d0[1] + lam * d1[1]
    x2 = (1 - lam) * d0[2] + lam * d1[2]
    p = (1 - lam) * d0[3] + lam * d1[3]
    r, JG = _refine_coexistence(prob, x1, x2, p)
    if not r.converged:
        return None
    z = r.x
    x1r, x2r, pr = z[:n], z[n:2 * n], float(z[-1])
    # a degenerate solution (two sheets meeting at a branch point or fold, where
    # f1 - f2 vanishes to high order and Newton stops within tolerance of it):
    # no jump in x, or no jump in df/dp (no latent heat)
    if np.max(np.abs(x1r - x2r)) <= 1e-5 * (1 + np.max(np.abs(x1r))):
        return None
    fp1, fp2 = prob.f_p(x1r, pr), prob.f_p(x2r, pr)
    if abs(fp1 - fp2) <= 1e-10 * (1 + abs(fp1)):
        return None
    # |f1 - f2| / latent heat estimates the error in p: with a tiny latent heat a residual
    # within tol can still leave p off by much more than tol (rounding floor of f excepted)
    f1 = prob.f(x1r, pr)
    if abs(f1 - prob.f(x2r, pr)) > max(1e-9 * abs(fp1 - fp2) * max(1.0, abs(pr)), 64 * _EPS * max(1.0, abs(f1))):
        return None
    if any(abs(c.p - pr) <= 1e-9 * (1 + abs(pr)) and
           np.max(np.abs(c.x1 - x1r)) + np.max(np.abs(c.x2 - x2r)) <= 1e-7 for c in out):
        return None
    return CoexistencePoint(p=pr, x1=x1r, x2=x2r, f=prob.f(x1r, pr), stable1=bool(prob.margin(x1r, pr) > 0),
                            stable2=bool(prob.margin(x2r, pr) > 0), residual=float(r.residual), branches=idx)


def coexistence(branch_a, branch_b=None, *, _idx=(None, None)):
    """First-order transition points between two branches (or within one branch).

    See the module docstring.  Requires a problem with a free energy.
    """
    prob = branch_a.problem
    if prob is None or prob.free_energy is None:
        raise ValueError("branch_a must come from a Problem with a free_energy")
    same = branch_b is None
    branch_b = branch_a if same else branch_b
    out = []
    sheets_a = _sheets(branch_a)
    sheets_b = _sheets(branch_b)
    for ia, sa in enumerate(sheets_a):
        for ib, sb in enumerate(sheets_b):
            if same and ib <= ia:
                continue
            pa_, pb_ = branch_a.p[sa[0]:sa[1] + 1], branch_b.p[sb[0]:sb[1] + 1]
            lo, hi = max(pa_.min(), pb_.min()), min(pa_.max(), pb_.max())
            if not lo < hi:
                continue
            # sample both sheets at every node of either inside the overlap; each sheet is
            # monotone in p, so p parametrizes its arclength
            grid = np.unique(np.concatenate([pa_[(pa_ >= lo) & (pa_ <= hi)], pb_[(pb_ >= lo) & (pb_ <= hi)],
                                             [lo, hi]]))
            samples = []
            for pv in grid:
                xa = _sheet_point(prob, branch_a, sa, pv)
                xb = _sheet_point(prob, branch_b, sb, pv)
                if xa is None or xb is None or \
                        np.max(np.abs(xb - xa)) <= 1e-7 * (1 + np.max(np.abs(xb))):
                    samples.append(None)  # a sheet missing, or both sheets meet here
                    continue
                samples.append((prob.f(xa, pv) - prob.f(xb, pv), xa, xb, pv))
            for j in range(len(samples) - 1):
                d0, d1 = samples[j], samples[j + 1]
                if d0 is None or d1 is None or d0[0] * d1[0] > 0:
                    continue
                # Newton from the linear interpolation of f1 - f2 between the two nodes; if that
                # fails or degenerates (a tiny latent heat: the interpolation may land next to a
                # fold, where the coexistence system is nearly singular), shrink the bracket by
                # bisection along the two sheets (both re-solved exactly at each p) and retry
                c = _coexistence_from(prob, d0, d1, _idx, out)
                if c is None:
                    for _ in range(40):
                        if abs(d1[3] - d0[3]) <= 1e-8 * (1 + abs(d0[3])):
                            break
                        pm = 0.5 * (d0[3] + d1[3])
                        xa = _sheet_point(prob, branch_a, sa, pm)
                        xb = _sheet_point(prob, branch_b, sb, pm)
                        if xa is None or xb is None or np.max(np.abs(xb - xa)) <= 1e-7 * (1 + np.max(np.abs(xb))):
                            break
                        dm = (prob.f(xa, pm) - prob.f(xb, pm), xa, xb, pm)
                        if not math.isfinite(dm[0]):
                            break
                        if dm[0] == 0.0 or ((dm[0] > 0) == (d0[0] > 0) and d0[0] != 0.0):
                            d0 = dm
                        else:
                            d1 = dm
                    c = _coexistence_from(prob, d0, d1, _idx, out)
                if c is not None:
                    out.append(c)
    out.sort(key=lambda c: c.p)
    return out


# =========================================================================== analyze
def _on_branch(prob, br, x, p, tol=1e-7):
    """Is (x, p) a point of branch br? (exact check at fixed p on each sheet)"""
    scale = 1 + float(np.max(np.abs(x)))
    for sh in _sheets(br) if br.p.size > 1 else []:
        xb = _on_sheet(prob, br, sh, p)
        if xb is not None and np.max(np.abs(xb - x)) <= tol * scale:
            return True
    d = np.max(np.abs(np.column_stack([br.x - x, br.p - p])), axis=1)
    return bool(np.min(d) <= tol * scale)


def analyze(problem, p_min, p_max, *, starts=None, scan=3, ds=None, max_branches=20, deflation=True,
            **trace_kw):
    """All branches, special points and coexistence points of ``problem`` for p in [p_min, p_max].

    Seeds: deflation (see :func:`deflate`) from ``starts`` (default ``[problem.x0]``) at
    ``problem.p0`` and at ``scan`` equally spaced values of p.  Every seed not on a
    known branch is traced (both directions); every branch point found spawns the
    other branch (:func:`switch_branch`) unless it is already known.  Finally
    :func:`coexistence` is run on every pair of branches (and every branch with
    itself).  ``ds`` defaults to (p_max - p_min) / 200.
    """
    p_min = float(check_range("p_min", p_min))
    p_max = float(check_range("p_max", p_max))
    if not p_min < p_max:
        raise ValueError(f"p_min must be < p_max, got {p_min}, {p_max}")
    if not p_min <= problem.p0 <= p_max:
        raise ValueError(f"problem.p0 must be in [p_min, p_max] = [{p_min}, {p_max}], got {problem.p0}")
    scan = int(check_range("scan", scan, 0, 1000))
    ds = 0.005 if ds is None else ds
    problem = _weighted(problem, p_min, p_max)
    starts = [problem.x0] if starts is None else [np.atleast_1d(np.asarray(s, dtype=float)) for s in starts]
    seeds = []
    ps = [problem.p0] + [v for v in (np.linspace(p_min, p_max, scan) if scan else []) if v != problem.p0]
    for pv in ps:
        if deflation:
            try:
                sols = deflate(problem, pv, starts=starts)
            except ConvergenceError:
                sols = []
            seeds.extend((s.extra["x"], pv) for s in sols)
        else:
            try:
                seeds.append((_start_point(problem, starts[0], pv)[:-1], pv))
            except ConvergenceError:
                pass
    branches = []
    pending_bp = []

    def add(br):
        branches.append(br)
        for sp_ in br.special_points:
            if sp_.kind == "branch_point":
                pending_bp.append((len(branches) - 1, sp_))

    while (seeds or pending_bp) and len(branches) < max_branches:
        if seeds:
            x, pv = seeds.pop(0)
            if any(_on_branch(problem, b, x, pv) for b in branches):
                continue
            try:
                br = trace(problem.with_start(x, pv), p_min, p_max, ds, **trace_kw)
            except ConvergenceError:
                continue
            add(br)
            continue
        bi, bp = pending_bp.pop(0)
        # is the other branch through bp already known?  probe one step along it
        w = problem.w
        y = np.append(bp.x, bp.p)
        t1 = bp.tangent if bp.tangent is not None else _null_tangent(_Eval(problem, y).A, w)
        d = _other_direction(problem, y, t1)
        h = ds * 0.5
        probe = _Corrector(problem)(y + h * d, d, problem.tol)
        if probe is not None and any(_on_branch(problem, b, probe[0][:-1], probe[0][-1])
                                     for j, b in enumerate(branches) if j != bi):
            continue
        try:
            br = switch_branch(problem, bp, p_min, p_max, ds, **trace_kw)
        except ConvergenceError:
            continue
        # the switched branch may coincide with a known one (probe failed)
        probes = [k for k in (br.p.size // 4, (3 * br.p.size) // 4, 0, br.p.size - 1)
                  if np.max(np.abs(np.append(br.x[k] - bp.x, br.p[k] - bp.p))) > 1e-6]
        if probes and all(any(_on_branch(problem, b, br.x[k], br.p[k]) for b in branches) for k in probes):
            continue
        add(br)
    # a fold found next to a branch point is the tip of a pitchfork (dp/ds = 0 there on the
    # bifurcating branch): mark it and give it the (better conditioned) branch point's location
    all_bps = [q for b in branches for q in b.special_points if q.kind == "branch_point"]
    w = problem.w

    def snap(q):
        if q.kind != "fold":
            return q
        yq = np.append(q.x, q.p)
        for bp_ in all_bps:
            ybp = np.append(bp_.x, bp_.p)
            if _wnorm(w, yq - ybp) <= 1e-4 * (1 + _wnorm(w, ybp)):
                return replace(q, p=bp_.p, x=bp_.x.copy(), f=bp_.f, coincides="branch_point")
        return q
    branches = [replace(b, special_points=tuple(snap(q) for q in b.special_points)) for b in branches]
    sps, coex = [], []
    for i, b in enumerate(branches):
        sps.extend(replace(sp_, branch=i) for sp_ in b.special_points)
    if problem.free_energy is not None:
        for i, bi_ in enumerate(branches):
            coex.extend(coexistence(bi_, _idx=(i, i)))
            for j in range(i + 1, len(branches)):
                coex.extend(coexistence(bi_, branches[j], _idx=(i, j)))
        coex.sort(key=lambda c: c.p)
    branches = tuple(replace(b, special_points=tuple(replace(sp_, branch=i) for sp_ in b.special_points))
                     for i, b in enumerate(branches))
    return Analysis(branches=branches, special_points=tuple(sorted(sps, key=lambda q: (q.p, q.kind))),
                    coexistence=tuple(coex), p_min=p_min, p_max=p_max)


# =========================================================================== two-parameter
@dataclass(frozen=True)
class Curve:
    """A line of special points in the (q, p) plane (see :func:`continue_point`)."""
    kind: str
    param: str
    q: np.ndarray
    p: np.ndarray
    x: np.ndarray
    x2: np.ndarray | None
    b: np.ndarray | None
    status: tuple
    branch: Branch = field(repr=False, default=None)
    problem: Problem = field(repr=False, default=None)

    def p_at(self, q):
        """Exact p of the line at parameter value q (re-solved from the nearest node)."""
        q = float(check_finite("q", q))
        br = self.branch
        if not (min(br.p) <= q <= max(br.p)):
            raise ValueError(f"q must be within the traced range [{min(br.p)}, {max(br.p)}], got {q}")
        for sh in _sheets(br) if br.p.size > 1 else [(0, 0)]:
            z = _on_sheet(br.problem, br, sh, q)
            if z is not None:
                return float(z[self._ip])
        raise ConvergenceError("Curve.p_at: re-solve failed", diagnostics={"q": q})

    @property
    def _ip(self):
        n = self.x.shape[1]
        return {"fold": 2 * n, "branch_point": 2 * n, "stability_change": n, "event": n,
                "coexistence": 2 * n}[self.kind]


def _dJ_dx(pr, x, p, v, transpose=False):
    """Columns d(F_x v)/dx_j (or d(F_x^T v)/dx_j) by central differences of the Jacobian."""
    n = x.size
    M = np.empty((n, n))
    for j in range(n):
        h = 1e-5 * max(1.0, abs(x[j]))
        e = np.zeros(n)
        e[j] = h
        Jp_, Jm_ = pr.J(x + e, p), pr.J(x - e, p)
        M[:, j] = ((Jp_.T @ v - Jm_.T @ v) if transpose else (Jp_ @ v - Jm_ @ v)) / (2 * h)
    return M


def _J_p(pr, x, p):
    """dF_x/dp (exact difference when F is affine in p)."""
    if pr.affine_in_p:
        return pr.J(x, p + 1.0) - pr.J(x, p)
    h = 1e-5 * max(1.0, abs(p))
    return (pr.J(x, p + h) - pr.J(x, p - h)) / (2 * h)


def _ext_problem(problem, point, param):
    """Extended system for two-parameter continuation in ``param``."""
    n = problem.n
    q0 = float(problem.params[param])

    memo = {}

    def P(q):
        pr = memo.get(q)
        if pr is None:
            if len(memo) > 8:
                memo.clear()
            pr = memo[q] = problem.with_params(**{param: q})
        return pr

    if isinstance(point, CoexistencePoint):
        scale = max(1.0, abs(point.f))

        def G(z, q):
            return _coexistence_residual(P(q), z, scale)

        def JG(z, q):
            return _coexistence_jacobian(P(q), z, scale)
        z0 = np.concatenate([point.x1, point.x2, [point.p]])
        return "coexistence", G, JG, z0, q0
    kind = point.kind
    y = np.append(point.x, point.p)
    J = problem.J(point.x, point.p)
    if kind == "stability_change" and point.coincides is not None:
        kind = point.coincides
    if kind == "fold":
        ev, evec = np.linalg.eig(J)
        v = np.real(evec[:, int(np.argmin(np.abs(ev)))])
        v = v / np.linalg.norm(v)
        sJ = max(1.0, float(np.max(np.abs(J))))

        def G(z, q):
            pr = P(q)
            x, vv, p = z[:n], z[n:2 * n], z[-1]
            return np.concatenate([pr.F(x, p), pr.J(x, p) @ vv / sJ, [vv @ vv - 1.0]])

        def JG(z, q):
            pr = P(q)
            x, vv, p = z[:n], z[n:2 * n], z[-1]
            Jx = pr.J(x, p)
            M = np.zeros((2 * n + 1, 2 * n + 1))
            M[:n, :n] = Jx
            M[:n, 2 * n] = pr.Fp(x, p)
            M[n:2 * n, :n] = _dJ_dx(pr, x, p, vv) / sJ
            M[n:2 * n, n:2 * n] = Jx / sJ
            M[n:2 * n, 2 * n] = _J_p(pr, x, p) @ vv / sJ
            M[2 * n, n:2 * n] = 2 * vv
            return M
        return "fold", G, JG, np.concatenate([point.x, v, [point.p]]), q0
    if kind == "branch_point":
        u, s, vt = np.linalg.svd(J.T)
        phi = vt[-1]  # left null vector of J
        phi = phi / np.linalg.norm(phi)
        sJ = max(1.0, float(np.max(np.abs(J))))
        sP = max(1.0, float(np.max(np.abs(problem.Fp(point.x, point.p)))))

        def G(z, q):
            pr = P(q)
            x, ph, p, b = z[:n], z[n:2 * n], z[2 * n], z[2 * n + 1]
            Jx = pr.J(x, p)
            return np.concatenate([pr.F(x, p) + b * ph, Jx.T @ ph / sJ, [pr.Fp(x, p) @ ph / sP, ph @ ph - 1.0]])

        def JG(z, q):
            pr = P(q)
            x, ph, p, b = z[:n], z[n:2 * n], z[2 * n], z[2 * n + 1]
            Jx, Fp, Jpp = pr.J(x, p), pr.Fp(x, p), _J_p(pr, x, p)
            M = np.zeros((2 * n + 2, 2 * n + 2))
            M[:n, :n] = Jx
            M[:n, n:2 * n] = b * np.eye(n)
            M[:n, 2 * n] = Fp
            M[:n, 2 * n + 1] = ph
            M[n:2 * n, :n] = _dJ_dx(pr, x, p, ph, transpose=True) / sJ
            M[n:2 * n, n:2 * n] = Jx.T / sJ
            M[n:2 * n, 2 * n] = Jpp.T @ ph / sJ
            M[2 * n, :n] = Jpp.T @ ph / sP
            M[2 * n, n:2 * n] = Fp / sP
            if not pr.affine_in_p:
                h = 1e-5 * max(1.0, abs(p))
                M[2 * n, 2 * n] = (pr.Fp(x, p + h) - pr.Fp(x, p - h)) @ ph / (2 * h * sP)
            M[2 * n + 1, n:2 * n] = 2 * ph
            return M
        return "branch_point", G, JG, np.concatenate([point.x, phi, [point.p, 0.0]]), q0
    if kind == "stability_change":
        def G(z, q):
            pr = P(q)
            x, p = z[:n], z[-1]
            return np.concatenate([pr.F(x, p), [pr.margin(x, p)]])
        return "stability_change", G, None, y.copy(), q0
    if kind == "event":
        g = problem.events[point.name]

        def G(z, q):
            pr = P(q)
            x, p = z[:n], z[-1]
            try:
                gv = float(g(x, p, **pr.params))
            except ValueError:
                gv = math.nan
            return np.concatenate([pr.F(x, p), [gv]])
        return "event", G, None, y.copy(), q0
    raise ValueError(f"point must be a fold, branch_point, stability_change, event or CoexistencePoint, got {kind!r}")


def continue_point(problem, point, param, q_min, q_max, ds=0.01, **trace_kw):
    """Continue a fold / branch point / stability change / coexistence point in ``param``.

    Returns a :class:`Curve` giving p(q) (and the order parameters) along the line.
    """
    if param not in problem.params:
        raise ValueError(f"param must be one of the problem parameters {sorted(problem.params)}, got {param!r}")
    kind, G, JG, z0, q0 = _ext_problem(problem, point, param)
    # weighted norm of the extended unknowns: the problem's weights for x (and x2) and p,
    # 1 for null vectors and the unfolding parameter
    n = problem.n
    if problem.weights is not None:
        wx, wp = problem.weights[:n], problem.weights[n]
    else:
        wx, wp = np.ones(n), 1.0 / max(1.0, abs(float(z0[-1] if kind != "branch_point" else z0[2 * n]))) ** 2
    if kind == "coexistence":
        wz = np.concatenate([wx, wx, [wp]])
    elif kind == "fold":
        wz = np.concatenate([wx, np.ones(n), [wp]])
    elif kind == "branch_point":
        wz = np.concatenate([wx, np.ones(n), [wp, 1.0]])
    else:
        wz = np.concatenate([wx, [wp]])
    L = q_max - q_min
    wq = 1.0 / L ** 2 if math.isfinite(L) and L > 0 else 1.0
    ext = Problem(residual=G, jacobian=JG, x0=z0, p0=q0, stability="none", tol=problem.tol, rtol=problem.rtol,
                  p_name=param, weights=np.append(wz, wq))
    trace_kw.setdefault("detect", ("fold",))
    br = trace(ext, q_min, q_max, ds, **trace_kw)
    if kind == "coexistence":
        x, x2, p, b = br.x[:, :n], br.x[:, n:2 * n], br.x[:, 2 * n], None
    elif kind == "branch_point":
        x, x2, p, b = br.x[:, :n], None, br.x[:, 2 * n], br.x[:, 2 * n + 1]
    elif kind == "fold":
        x, x2, p, b = br.x[:, :n], None, br.x[:, 2 * n], None
    else:  # stability change, event
        x, x2, p, b = br.x[:, :n], None, br.x[:, n], None
    return Curve(kind=kind, param=param, q=br.p.copy(), p=p.copy(), x=x.copy(),
                 x2=None if x2 is None else x2.copy(), b=None if b is None else b.copy(),
                 status=br.status, branch=br, problem=problem)


def curve_intersections(curve_a, curve_b):
    """Points (q, p) where two lines of a phase diagram cross, refined by Brent on the exact
    difference ``p_a(q) - p_b(q)`` (re-solved at each q); crossings of the polylines that the
    exact lines do not confirm are dropped.  Lines that end on each other (a degenerate
    extended system) are detected by comparing end points (see ``Curve.status``)."""
    from scipy.optimize import brentq
    out = []
    qa, pa, qb, pb = curve_a.q, curve_a.p, curve_b.q, curve_b.p
    for i in range(qa.size - 1):
        for j in range(qb.size - 1):
            # segment intersection in the (q, p) plane
            d1 = np.array([qa[i + 1] - qa[i], pa[i + 1] - pa[i]])
            d2 = np.array([qb[j + 1] - qb[j], pb[j + 1] - pb[j]])
            M = np.column_stack([d1, -d2])
            if abs(np.linalg.det(M)) < 1e-300:
                continue
            st = np.linalg.solve(M, np.array([qb[j] - qa[i], pb[j] - pa[i]]))
            if not (0 <= st[0] <= 1 and 0 <= st[1] <= 1):
                continue
            qg = qa[i] + st[0] * d1[0]
            wid = 2 * max(abs(d1[0]), abs(d2[0]))
            lo = max(qg - wid, qa[max(i - 1, 0)] if qa[i + 1] > qa[i] else qa[min(i + 2, qa.size - 1)],
                     qb[max(j - 1, 0)] if qb[j + 1] > qb[j] else qb[min(j + 2, qb.size - 1)])
            hi = min(qg + wid, qa[min(i + 2, qa.size - 1)] if qa[i + 1] > qa[i] else qa[max(i - 1, 0)],
                     qb[min(j + 2, qb.size - 1)] if qb[j + 1] > qb[j] else qb[max(j - 1, 0)])
            q, p = qg, pa[i] + st[0] * d1[1]
            try:
                g = lambda qq: curve_a.p_at(qq) - curve_b.p_at(qq)
                if not (hi > lo and g(lo) * g(hi) < 0):
                    continue  # segments cross but the exact lines do not (ends of degenerate lines)
                q = brentq(g, lo, hi, xtol=1e-14, rtol=4 * _EPS)
                p = curve_a.p_at(q)
                # a sign change of p_a - p_b across a jump (p_at switching between sheets of a
                # line that folds in q) is not a meeting point
                if abs(p - curve_b.p_at(q)) > 1e-7 * (1 + abs(p)):
                    continue
            except (ConvergenceError, ValueError):
                continue
            if not any(abs(q - o[0]) <= 1e-9 * (1 + abs(q)) for o in out):
                out.append((float(q), float(p)))
    return out


# =========================================================================== plots
def plot_branches(branches, ax=None, y=0, label=None, special=True, **kw):
    """Plot branches (a list or an Analysis): ``y`` against p, solid stable, dashed unstable."""
    import matplotlib.pyplot as plt
    if isinstance(branches, Analysis):
        coex = branches.coexistence
        branches = branches.branches
    else:
        coex = ()
    if ax is None:
        _, ax = plt.subplots()
    markers = {"fold": "o", "branch_point": "s", "stability_change": "^", "event": "x"}
    for i, br in enumerate(branches):
        if callable(y):
            yy = np.asarray(y(br), dtype=float)
        elif isinstance(y, str):
            yy = br[y]
        else:
            yy = br.x[:, y]
        color = kw.get("color", f"C{i % 10}")
        st = br.stable
        for mask, ls in ((st, "-"), (~st, "--")):
            yv = np.where(mask | np.roll(mask, 1) | np.roll(mask, -1), yy, np.nan)
            ax.plot(br.p, yv, ls, color=color, lw=1.5, label=(label or f"branch {i}") if ls == "-" and mask.any() else None)
        if special:
            for sp_ in br.special_points:
                if callable(y):
                    continue
                yv = sp_.x[y] if isinstance(y, int) else sp_.value(y)
                ax.plot(sp_.p, yv, markers[sp_.kind], color="k", ms=5, mfc="none")
    for c in coex:
        ax.axvline(c.p, color="0.5", lw=0.8, ls=":")
    ax.set_xlabel(branches[0].problem.p_name if branches and branches[0].problem else "p")
    return ax


def plot_phase_diagram(curves, ax=None, labels=None, **kw):
    """Plot lines p(q) of :class:`Curve` objects (a list or a dict label -> Curve)."""
    import matplotlib.pyplot as plt
    if ax is None:
        _, ax = plt.subplots()
    items = curves.items() if isinstance(curves, dict) else zip(labels or [c.kind for c in curves], curves)
    for lab, c in items:
        ax.plot(c.q, c.p, label=lab, **kw)
    if curves:
        first = next(iter(curves.values())) if isinstance(curves, dict) else curves[0]
        ax.set_xlabel(first.param)
        ax.set_ylabel(first.problem.p_name if first.problem else "p")
    ax.legend()
    return ax
