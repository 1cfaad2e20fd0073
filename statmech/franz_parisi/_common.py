"""Pieces of the FP package used by more than one theory.

Around a typical reference (:mod:`.binary`, :mod:`.spherical`):

* the energetic term ``G_E(q0, t, p, q1)`` of both weight types (:func:`_fp_energetic`) and
  the RS domain of its order parameters ``(q1, t)`` (``_q1t_*``);
* :class:`_Problem`, one FP saddle-point problem family parametrized by the overlap
  ``p = 1 - 2d``, and its continuation in ``p`` from the (degenerate) typical point
  (:func:`_march`, :func:`_continue`, :func:`_extrapolate`);
* the assembly of the result objects (:func:`_assemble`, :func:`_solve_family`).

Everywhere (also :mod:`.stochastic`, :mod:`.stochastic_fp`): :func:`_follow`, the
branch-following loop (predictor, Newton corrector, step halving) of every continuation in
the package, and the interior check :func:`_require_interior`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from ..errors import ConvergenceError
from ..gaussian import gauss_hermite, log_H
from ..saddle import SaddlePoint, newton, stack
from ._equations import _FP
from ._quadrature import _LEVEL, _N_OUTER, _inner_rule
from .reference import _reference


# =============================================================================== energetic term
def _fp_energetic(q0, t, p, q1, kappa, level=_LEVEL, n_outer=_N_OUTER, n_gh=96):
    """E_z E_e of the FP energetic integrand and its derivatives (see _equations._FP: fp_E).

    Inner rule: Gauss-Hermite (``n_gh`` nodes) when both layers of the integrand (the H(a)
    step of width sx*sv/|p-t| and the log H(b) layer of width sqrt(1-q1)/sv, in units of e)
    are wider than 0.4; otherwise piecewise tanh-sinh with breakpoints at both layers.
    """
    zs, ws = gauss_hermite(n_outer)
    v = q1 - t * t / q0
    sv = math.sqrt(v)
    sx = math.sqrt(1.0 - q0 - (p - t) ** 2 / v)
    sq0 = math.sqrt(q0)
    wa = sx * sv / abs(p - t) if p != t else math.inf
    wb = math.sqrt(1.0 - q1) / sv
    smooth = min(wa, wb) >= 0.4
    eg, wg = gauss_hermite(n_gh)
    la0 = log_H((kappa - sq0 * zs) / math.sqrt(1.0 - q0))
    return np.array(_FP.fp_sum_E(zs, ws, la0, q0, t, p, q1, kappa, smooth, eg, wg, *_inner_rule(level)))


@dataclass(frozen=True)
class _Quad:
    """Quadrature resolution: outer Gauss-Hermite orders and inner tanh-sinh level."""
    n_S: int = 96
    n_E: int = 32
    level: int = 5

    def finer(self):
        return _Quad(self.n_S + 32, self.n_E + 16, self.level + 1)


_Q = _Quad()


# ---------------------------------------------------------- RS domain of (q1, t): 0 < q1 < 1,
# s_v^2 = q1 - t^2/q0 > 0, s_x^2 = 1 - q0 - (p - t)^2/s_v^2 > 0.  Every test is on a *relative*
# margin > _EDGE, far above the rounding of the differences (a few ulp): a point accepted here is
# strictly inside the domain in any build (with or without FMA), so the kernels, which recompute
# s_v and s_x, never take the square root of a negative number or divide by zero.
_EDGE = 1e-12


def _q1t_domain(q1, t, p, q0):
    if not (_EDGE < q1 and 1.0 - q1 > _EDGE):
        return False
    v = q1 - t * t / q0
    return v > _EDGE * q1 and 1.0 - q0 - (p - t) ** 2 / v > _EDGE * (1.0 - q0)


def _q1t_margins(q1, t, p, q0):
    """Relative distances of ``(q1, t)`` from the boundary of the RS domain (all must be > 0)."""
    v = q1 - t * t / q0
    return {"1-q1": 1.0 - q1,
            "q1-t^2/q0": v / q1,
            "sigma_x^2/(1-q0)": (1.0 - q0 - (p - t) ** 2 / v) / (1.0 - q0) if v > 0 else -1.0}


def _q1t_to_y(q1, t, p, q0):
    """Coordinates ``(log s_v^2, artanh rho)``, ``rho = (p - t)/sqrt((1 - q0) s_v^2)``, in which
    the RS domain of ``(q1, t)`` is automatic (NaN outside it)."""
    v = q1 - t * t / q0
    if not v > 0:
        return [np.nan, np.nan]
    rho = (p - t) / math.sqrt((1 - q0) * v)
    return [math.log(v), np.arctanh(rho) if abs(rho) < 1 else np.nan]


def _q1t_from_y(y0, y1, p, q0):
    """Inverse of :func:`_q1t_to_y`: ``(q1, t)``."""
    v, rho = math.exp(y0), math.tanh(y1)
    t = p - rho * math.sqrt((1 - q0) * v)
    return [v + t * t / q0, t]


# =============================================================================== continuation in p
class _Problem:
    """One FP saddle-point problem family, parametrized by the overlap p = 1 - 2d.

    Subclasses set ``kind`` (model name), ``names`` (order parameters), ``ref_kind`` (the
    reference system, see :func:`.reference._reference`) and the static method
    ``evaluate(x, p, ref, alpha, kappa, quad) -> (F, J, aux...)`` (gradient and Hessian of the
    RS functional), and define ``in_domain``, ``margins``, ``typical``, ``first_guess``,
    ``to_y``/``from_y``, ``ref_params`` and ``thermo``.
    """

    kind = ""
    names = ()
    ref_kind = ""
    evaluate = None

    def __init__(self, alpha, kappa, quad=_Q):
        self.alpha, self.kappa, self.quad = alpha, kappa, quad
        self.ref = _reference(self.ref_kind, alpha, kappa)
        self._cache = {}

    def point(self, **kw):
        """The point of the computation (for the diagnostics of every ConvergenceError)."""
        return {"alpha": self.alpha, "kappa": self.kappa, **kw}

    def eval(self, x, p):  # -> F, J, aux
        key = (tuple(np.asarray(x, float)), p)
        if key not in self._cache:
            # the domain is tested before any kernel runs (they divide by s_v, s_x, ...): outside
            # it the outcome is this error, in every build
            if not self.in_domain(x, p):
                raise ConvergenceError(f"{self.kind}: point outside the RS domain", x=x,
                                       diagnostics=self.point(p=p, d=(1 - p) / 2))
            if len(self._cache) > 64:
                self._cache.clear()
            self._cache[key] = self.evaluate(np.asarray(x, float), p, self.ref, self.alpha, self.kappa, self.quad)
        return self._cache[key]

    def check_reachable(self, hist, p_goal):
        """Raise ValueError if ``p_goal`` lies beyond a point where the branch in ``hist`` ends
        (none by default; see :meth:`.binary._BinaryProblem.check_reachable`)."""

    def failure_note(self, hist):
        """Text appended to the error of a failed continuation (why it may have failed)."""
        return ""

    def tangent(self, x, p):
        """``dx/dp`` along the solution branch at a solution ``x``: ``-J^{-1} dF/dp``."""
        return np.linalg.solve(self.eval(x, p)[1], -self.dF_dp(x, p))

    def solve(self, x0, p):
        if not self.in_domain(x0, p):
            raise ConvergenceError(f"{self.kind}: initial guess outside the RS domain", x=x0,
                                   diagnostics=self.point(p=p, d=(1 - p) / 2))
        # a Newton direction that must be shrunk by more than 2^8 means a poor predictor: fail
        # (the continuation halves its step) instead of crawling (each failure cost up to
        # 15 x 40 evaluations: binary_perceptron(0.6, d down to 1e-3) 2697 -> 987 evaluations)
        try:
            return newton(lambda x: self.eval(x, p)[0], x0, lambda x: self.eval(x, p)[1],
                          tol=5e-10, xtol=1e-9, maxiter=15, max_backtrack=8,
                          in_domain=lambda x: self.in_domain(x, p))
        except ConvergenceError as e:
            raise ConvergenceError(f"{self.kind}: Newton did not converge", x=e.x, residual=e.residual,
                                   iterations=e.iterations, diagnostics=self.point(p=p, d=(1 - p) / 2)) from None


def _follow(hist, goal, solve, predict, step, attempts, fail, tol=0.0):
    """Follow a solution branch from ``hist[-1] = (s, x)`` to the parameter value ``goal``.

    Each step tries ``s_new = s + step(s, goal, hist)`` (never beyond ``goal``): the corrector
    ``solve(predict(hist, s_new), s_new)`` either returns a SolveInfo or raises
    ConvergenceError, and then the step is halved, at most ``attempts`` times (or until it no
    longer changes ``s``) before ``fail(s, x)`` (a ConvergenceError) is raised.  Every solution is appended to ``hist``.
    Returns the ``(s, SolveInfo)`` of the steps taken (none when ``|goal - s| <= tol``).
    """
    steps = []
    s = hist[-1][0]
    while abs(goal - s) > tol:
        ds = step(s, goal, hist)
        for _attempt in range(attempts):
            s_new = s + ds if abs(ds) < abs(goal - s) else goal
            if s_new == s:  # the step is below the resolution of s: no progress is possible
                raise fail(s, hist[-1][1])  # (before, the same point was re-solved forever)
            try:
                info = solve(predict(hist, s_new), s_new)
                break
            except ConvergenceError:
                ds *= 0.5
        else:
            raise fail(s, hist[-1][1])
        s = s_new
        hist.append((s, info.x))
        steps.append((s, info))
    return steps


def _capped(max_step):
    """Step rule for :func:`_follow`: straight to the goal, at most ``max_step`` at a time."""
    def step(s, goal, hist):
        ds = goal - s
        return math.copysign(max_step, ds) if abs(ds) > max_step else ds
    return step


def _secant(hist, s_new):
    """Secant predictor through the last two solutions of ``hist``."""
    (sa, xa), (sb, xb) = hist[-2], hist[-1]
    return xb + (xb - xa) * (s_new - sb) / (sb - sa)


def _continue(problem, hist, targets, max_step=0.2):
    """Continuation from the solutions in ``hist`` (list of (p, x), the last one current) to
    every p in ``targets`` (all on the same side, sorted in the direction of travel): secant
    extrapolation of the last two solutions (:func:`_extrapolate`), Newton, step halving on
    failure; a step is at most ``max_step``, 0.6 of the room left to ``p = +-1`` and 4 times
    the previous step."""
    def step(p, pt, hist):
        problem.check_reachable(hist, pt)   # fail fast below a freezing distance
        side = 1.0 if pt > p else -1.0
        room = (1.0 - p) if side > 0 else (p + 1.0)
        return side * min(abs(pt - p), max_step, 0.6 * room, 4.0 * abs(hist[-1][0] - hist[-2][0]))

    def fail(p, x):
        msg = problem.failure_note(hist)
        return ConvergenceError(f"{problem.kind}: continuation in d failed{msg}", x=x,
                                diagnostics=problem.point(p=p, d=(1 - p) / 2))

    out = {}
    for pt in targets:
        if abs(hist[-1][0] - pt) <= 1e-15:
            out[pt] = problem.solve(hist[-1][1], pt)
        else:
            out[pt] = _follow(hist, pt, problem.solve, lambda h, p: _extrapolate(problem, h, p), step, 14, fail,
                              tol=1e-15)[-1][1]
    return out


def _extrapolate(problem, hist, p_new):
    """Predictor: the quadratic through the last solution with its exact tangent and the
    solution before -- in ``x`` (best next to the typical point, where the coordinates ``y``
    are singular: ``s_v^2 -> 0``), else in the coordinates ``y = problem.to_y(x, p)`` where the
    RS domain is automatic (best where ``q1_hat, p_hat`` diverge, ``d -> 0``), else the tangent
    line in ``y``, else the secant of the last two in ``y``; falls back to the last solution."""
    (pa, xa), (pb, xb) = hist[-2], hist[-1]
    dp = p_new - pb
    if pb != pa and dp != 0.0:
        try:
            with np.errstate(all="ignore"):
                tx = problem.tangent(xb, pb)
                cands = [xb + tx * dp + (xa - xb - tx * (pa - pb)) * (dp / (pa - pb)) ** 2]
                yb, ya = problem.to_y(xb, pb), problem.to_y(xa, pa)
                h = 1e-4 * dp
                ty = (problem.to_y(xb + h * tx, pb + h) - yb) / h
                lin = yb + ty * dp
                for y in (lin + (ya - yb - ty * (pa - pb)) * (dp / (pa - pb)) ** 2, lin):
                    cands.append(problem.from_y(y, p_new) if np.all(np.isfinite(y)) else None)
            for g in cands:
                if g is not None and np.all(np.isfinite(g)) and problem.in_domain(g, p_new):
                    return g
        except (ValueError, FloatingPointError, ZeroDivisionError, np.linalg.LinAlgError, OverflowError):
            pass
    if pb != pa:
        try:
            ya, yb = problem.to_y(xa, pa), problem.to_y(xb, pb)
            if np.all(np.isfinite(ya)) and np.all(np.isfinite(yb)):
                for lam in (1.0, 0.5, 0.0):
                    g = problem.from_y(yb + lam * (yb - ya) * (p_new - pb) / (pb - pa), p_new)
                    if problem.in_domain(g, p_new):
                        return g
        except (ValueError, FloatingPointError, ZeroDivisionError):
            pass
    y = problem.to_y(xb, pb)
    if np.all(np.isfinite(y)):
        g = problem.from_y(y, p_new)
        if problem.in_domain(g, p_new):
            return g
    return xb


def _march(problem, p_targets, p_typ, x_typ, first_guess, max_step=0.2):
    """Solve at every p in p_targets by continuation from the typical overlap p_typ.

    Starts at p_typ +- dp0 from ``first_guess(dp0)`` (the typical point itself is degenerate),
    then :func:`_continue` in both directions.  Returns {p: SolveInfo}.
    """
    out = {}
    for side in (+1.0, -1.0):
        tg = sorted([p for p in p_targets if side * (p - p_typ) > 0], key=lambda p: side * (p - p_typ))
        if not tg:
            continue
        dp0 = side * min(0.03, 0.5 * p_typ, abs(tg[0] - p_typ))
        p0 = p_typ + dp0
        info = problem.solve(first_guess(dp0), p0)
        if abs(p0 - tg[0]) < 1e-15:
            out[tg[0]] = info
            tg = tg[1:]
        out.update(_continue(problem, [(p_typ, np.asarray(x_typ, float)), (p0, info.x)], tg, max_step))
    return out


# =============================================================================== results
def _require_interior(kind, margins, x, d, residual=None, point=None):
    """Raise ConvergenceError unless every margin from the RS-domain boundary exceeds 1e-9."""
    bad = {k: v for k, v in margins.items() if not v > 1e-9}
    if bad:
        raise ConvergenceError(f"{kind}: solution on the boundary of the RS domain", x=x,
                               residual=residual, diagnostics={**(point or {}), "d": d, **bad})


def _reference_flags(ref):
    """The RS reference's stability, carried by every FP result (``extra``)."""
    return {"reference_replicon": ref.replicon, "reference_rs_stable": bool(ref.replicon > 0)}


def _assemble(problem, d, p, info_or_none, x, ref_entropy, d_typ):
    """One scalar SaddlePoint from a converged FP solution (checks that it is interior).
    ``rs_stable``: the constrained replicas' replicon is positive *and* the RS reference is stable."""
    params = {"alpha": problem.alpha, "kappa": problem.kappa, "d": d}
    ref_ok = problem.ref.replicon > 0
    if info_or_none is None:  # exactly at the typical distance: the degenerate solution
        order = dict(zip(problem.names, map(float, x)))
        order.update(problem.ref_params())
        thermo = {"entropy": ref_entropy, "entropy_equilibrium": ref_entropy, "d_typical": d_typ,
                  "dS_dd": 0.0}
        return SaddlePoint(problem.kind, params, order, thermo, True, 0.0, 0, None,
                           problem.ref.replicon, bool(ref_ok),
                           {"margins": {}, "note": "d equals the typical distance: S_FP = S_eq exactly",
                            **_reference_flags(problem.ref)}, headline="entropy")
    # the margins first: a point on the boundary never reaches the kernels (which divide by them)
    margins = problem.margins(x, p)
    _require_interior(problem.kind, margins, x, d, info_or_none.residual, problem.point())
    ent, dS_dp, rep, J, diag = problem.thermo(x, p)
    for k, v in diag.items():
        if abs(v - 1.0) > 1e-8:
            raise ConvergenceError(f"{problem.kind}: quadrature normalization check failed ({k})",
                                   x=x, diagnostics=problem.point(d=d, **{k: v}))
    order = dict(zip(problem.names, map(float, x)))
    order.update(problem.ref_params())
    thermo = {"entropy": float(ent), "entropy_equilibrium": ref_entropy, "d_typical": d_typ,
              "dS_dd": float(-2.0 * dS_dp)}
    if not np.isfinite(ent):
        raise ConvergenceError(f"{problem.kind}: non-finite entropy", x=x, diagnostics=problem.point(d=d))
    eig = np.linalg.eigvalsh(0.5 * (J + J.T))
    return SaddlePoint(problem.kind, params, order, thermo, bool(info_or_none.converged),
                       float(info_or_none.residual), int(info_or_none.iterations), eig, float(rep),
                       bool(rep > 0 and ref_ok), {"margins": margins, **_reference_flags(problem.ref)},
                       headline="entropy")


# next to the typical overlap the parametrization degenerates (s_v^2 -> 0 like |p - p_typ|) and
# Newton loses digits (at |p - p_typ| ~ 1e-5 it stalls at residual 1e-8): inside this distance in p
# the branch is the polynomial through the exact typical point and the solutions at p_typ +- _GAP
# with their derivatives (S: value and slope at all three, a quintic; x: a quartic), an error
# O(_GAP^6 S^(6)) ~ 1e-14 for S (tested against direct solves at |p - p_typ| = 2e-3)
_GAP = 4e-3


def _hermite(nodes, values, slopes):
    """Coefficients (in powers of u) of the polynomial through ``values`` at ``nodes`` with the
    given ``slopes`` (None: no slope condition); ``values``/``slopes`` entries may be arrays."""
    rows, rhs = [], []
    n = sum(1 + (s is not None) for s in slopes)
    for u, v, sl in zip(nodes, values, slopes):
        rows.append([u ** k for k in range(n)])
        rhs.append(np.atleast_1d(np.asarray(v, dtype=float)))
        if sl is not None:
            rows.append([k * u ** (k - 1) if k else 0.0 for k in range(n)])
            rhs.append(np.atleast_1d(np.asarray(sl, dtype=float)))
    return np.linalg.solve(np.array(rows), np.array(rhs))


def _poly(c, u, der=False):
    k = np.arange(c.shape[0])
    if der:
        return (k[1:, None] * c[1:] * u ** (k[1:, None] - 1)).sum(axis=0)
    return (c * u ** k[:, None]).sum(axis=0)


def _gap_point(problem, d, p, p_typ, ends, ref_entropy, d_typ):
    """The SaddlePoint at ``0 < |p - p_typ| < _GAP`` from the branch polynomial (see ``_GAP``);
    ``ends`` maps -1/+1 to the SolveInfo at ``p_typ -+ _GAP``."""
    u = (p - p_typ) / _GAP
    vals = {}
    for side, info in ends.items():
        ent, dS_dp, rep = problem.thermo(info.x, p_typ + side * _GAP)[:3]
        vals[side] = (info, ent, dS_dp * _GAP, rep, problem.tangent(info.x, p_typ + side * _GAP) * _GAP)
    sides = sorted(vals)
    nodes = [0.0] + [float(s) for s in sides]
    cS = _hermite(nodes, [ref_entropy] + [vals[s][1] for s in sides], [0.0] + [vals[s][2] for s in sides])
    cx = _hermite(nodes, [problem.typical()] + [vals[s][0].x for s in sides], [None] + [vals[s][4] for s in sides])
    cr = _hermite(nodes, [problem.ref.replicon] + [vals[s][3] for s in sides], [None] * (1 + len(sides)))
    ent = float(_poly(cS, u)[0])
    dS_dp = float(_poly(cS, u, der=True)[0]) / _GAP
    x = _poly(cx, u)
    rep = float(_poly(cr, u)[0])
    order = dict(zip(problem.names, map(float, x)))
    order.update(problem.ref_params())
    thermo = {"entropy": ent, "entropy_equilibrium": ref_entropy, "d_typical": d_typ, "dS_dd": -2.0 * dS_dp}
    res = max(float(vals[s][0].residual) for s in sides)
    ref_ok = problem.ref.replicon > 0
    return SaddlePoint(problem.kind, {"alpha": problem.alpha, "kappa": problem.kappa, "d": d}, order, thermo,
                       True, res, 0, None, rep, bool(rep > 0 and ref_ok),
                       {"margins": {}, "note": f"|p - p_typ| < {_GAP:g}: interpolated between the typical point "
                        "and the solutions at p_typ +- gap (see docs)", **_reference_flags(problem.ref)},
                       headline="entropy")


def _solve_family(problem, d):
    """SaddlePoints at every distance in ``d`` (scalar or array), by continuation from the
    typical distance of the problem's reference (the gap ``|p - p_typ| < _GAP`` by
    :func:`_gap_point`)."""
    ref_entropy, q_typ = problem.ref.entropy, problem.ref.q0
    d_arr = np.asarray(d, dtype=float)
    flat = d_arr.ravel()
    p_all = 1.0 - 2.0 * flat
    d_typ = (1.0 - q_typ) / 2.0
    near = np.abs(p_all - q_typ) < 1e-12
    gap = ~near & (np.abs(p_all - q_typ) < _GAP)
    sides = {float(np.sign(pp - q_typ)) for pp in p_all[gap]}
    targets = {p for p, n, g in zip(p_all, near, gap) if not (n or g)} | {q_typ + s * _GAP for s in sides}
    sols = _march(problem, sorted(targets), q_typ, problem.typical(), problem.first_guess)
    ends = {}
    if sides:  # both ends, when the other side's solution is in the RS domain (a quintic, else a cubic)
        for s in (-1.0, 1.0):
            pe = q_typ + s * _GAP
            if pe not in sols and -1.0 < pe < 1.0:
                try:
                    sols.update(_march(problem, [pe], q_typ, problem.typical(), problem.first_guess))
                except ConvergenceError:
                    continue
            if pe in sols:
                ends[s] = sols[pe]
    res = []
    for dd, pp, n, g in zip(flat, p_all, near, gap):
        if n:
            res.append(_assemble(problem, float(dd), float(pp), None, problem.typical(), ref_entropy, d_typ))
        elif g:
            res.append(_gap_point(problem, float(dd), float(pp), q_typ, ends, ref_entropy, d_typ))
        else:
            info = sols[pp]
            res.append(_assemble(problem, float(dd), float(pp), info, info.x, ref_entropy, d_typ))
    if d_arr.ndim == 0:
        return res[0]
    eigs = [r.hessian_eigenvalues for r in res]
    mixed = any(e is None for e in eigs) and not all(e is None for e in eigs)
    if mixed:
        # the exact typical point has no Hessian (degenerate parametrization): never fill with
        # NaN; the per-point eigenvalues (None there) go to extra
        n = next(len(e) for e in eigs if e is not None)
        res = [replace(r, hessian_eigenvalues=np.zeros(n)) if r.hessian_eigenvalues is None else r for r in res]
    out = stack(res, d_arr.shape, model=problem.kind)
    extra = _reference_flags(problem.ref)
    if mixed:
        out = replace(out, hessian_eigenvalues=None)
        extra["hessian_eigenvalues"] = eigs
    return replace(out, extra=extra)
