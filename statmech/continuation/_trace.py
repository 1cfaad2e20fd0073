"""``trace``: one branch by pseudo-arclength continuation -- argument checks and the default
weighted norm, the start point, the step loop (predictor, corrector, step control, branch-jump
guard, landing on the p bounds, closed loops) and the assembly of both halves into a Branch."""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from ..errors import ConvergenceError, check_choice, check_range
from ..saddle import newton
from . import _kernels
from ._corrector import _EPS, _fixed_p_retry, _null_tangent, _scaled_ok, _tangent, _wdot, _wnorm
from ._problem import _Eval, _fixed_p
from ._problem import Problem
from ._results import KINDS, Branch
from ._special_points import _Locator


@dataclass
class _Pt:
    """An accepted point of a trace: y = (x, p), tangent, stability margin, sign and log |.| of the
    bordered determinant, event values, free energy."""
    y: np.ndarray
    t: np.ndarray
    margin: float
    det: float
    ev: np.ndarray
    f: float | None
    logdet: float = 0.0


def _point_data(prob, y, t_prev_border, w, e=None):
    """Tangent and test-function values at an accepted point (``e``: the evaluation there, if at hand)."""
    if e is None:
        e = _Eval.at(prob, y)
    t = _tangent(e, t_prev_border, w)
    if t is None:
        return None
    sgn, logdet = _kernels.bordered_slogdet(e.J, e.Fp, w * t)
    margin = prob.margin(y[:-1], y[-1], e.J)
    evs = np.array([float(g(y[:-1], y[-1], **prob.params)) for g in prob.events.values()])
    return _Pt(y, t, margin, float(sgn), evs, e.f, float(logdet))


class _Tracer(_Locator):
    """Pseudo-arclength continuation of one branch in one direction (see :func:`trace`)."""

    def __init__(self, prob, p_min, p_max, ds, ds_min, ds_max, max_steps, s_max, max_angle, detect, accept=None):
        super().__init__(prob, detect)
        self.accept = accept
        self.p_min, self.p_max = p_min, p_max
        self.ds, self.ds_min, self.ds_max = ds, ds_min, ds_max
        self.max_steps = max_steps
        self.s_max = s_max
        self.cos_max = math.cos(max_angle)

    def run(self, y0, t0, start_pt=None):
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
            # predictor along the tangent, corrector on the hyperplane orthogonal to it; a correction
            # larger than h/2 is rejected (a jump to another branch)
            a = pts[-1]
            refused = None
            y_pred = a.y + h * a.t
            r = self.corr(y_pred, a.t, prob.tol)
            b = None
            if r is not None:
                y_new = r[0]
                if _wnorm(w, y_new - y_pred) <= 0.5 * h:
                    b = _point_data(prob, y_new, w * a.t, w, r[3])
                    if b is not None:
                        # branch-jump guard: the new tangent and the secant must stay within
                        # max_angle of the old tangent
                        sec = b.y - a.y
                        cs = _wdot(w, sec, a.t) / max(_wnorm(w, sec), 1e-300)
                        if _wdot(w, b.t, a.t) < self.cos_max or cs < self.cos_max:
                            b = None
                        elif self.accept is not None:
                            refused = self.accept(b.y)
                            if refused:
                                b = None
            # ----- p bounds: land exactly on the bound
            sig = None
            if b is not None and (b.y[-1] > self.p_max or b.y[-1] < self.p_min):
                bound = self.p_max if b.y[-1] > self.p_max else self.p_min
                try:
                    sig, yb = self._land(a, b, h, bound)
                except ConvergenceError:
                    b = None  # the corrector failed inside the step: a shorter step, as for a rejection
                else:
                    if yb is not None and self.accept is not None:
                        refused = self.accept(yb)
                        if refused:
                            b = None
            if b is None:
                rejected += 1
                h *= 0.5
                if h < self.ds_min:
                    status = refused or "ds_min"
                    break
                continue
            its = r[2]
            stop = None
            if sig is not None:
                if sig == 0.0:
                    status = "p_max" if bound == self.p_max else "p_min"
                    break
                yb[-1] = bound
                Fb, Jb = _fixed_p(prob, bound)
                rr = newton(Fb, yb[:-1], Jb, tol=self.loc_tol, raise_on_fail=False)
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
                yq = np.append(q.x, q.p)
                if any(_wnorm(w, o.y - yq) <= 1e-9 * (1 + _wnorm(w, yq)) for o in pts[-len(new) - 1:]):
                    continue
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


    def _land(self, a, b, h, bound):
        """Arclength sigma in [0, h] of the step a -> b at which p = bound, and the corrected point
        there (None when a is on the bound).  ConvergenceError if the corrector fails inside."""
        from scipy.optimize import brentq
        cache = {0.0: a.y, float(h): b.y}
        if a.y[-1] == bound:
            return 0.0, None
        sig = brentq(lambda sg: self._y_at(a, sg, cache)[-1] - bound, 0.0, h,
                     xtol=1e-15 * max(1.0, h), rtol=4 * _EPS)
        return sig, (self._y_at(a, sig, cache).copy() if sig != 0.0 else None)

def _start_point(prob, x0, p0):
    """The corrected starting point (x, p0) at fixed p0 (ConvergenceError if Newton fails)."""
    r = _fixed_p_retry(prob, p0, x0, (prob.tol * 1e-2, prob.tol), maxiter=60,
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
    ordered = list(reversed(back_pts)) + list(pts)
    ys = np.array([q.y for q in ordered])
    seg = [_wnorm(w, ys[i + 1] - ys[i]) for i in range(len(ordered) - 1)]
    s = np.concatenate([[0.0], np.cumsum(seg)])
    back_len = s[len(back_pts)]  # 0 without a backward half
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


def _trace_kw(prob, p_min, p_max, ds, ds_min, ds_max, max_steps, s_max, max_angle, detect, accept=None):
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
    if accept is not None and not callable(accept):
        raise ValueError(f"accept must be None or a callable y -> reason (str) or None, got {accept!r}")
    return _Tracer(prob, p_min, p_max, ds, ds_min, ds_max, max_steps, s_max, max_angle, detect, accept)


def trace(problem, p_min=-math.inf, p_max=math.inf, ds=0.01, *, direction=None, ds_min=None, ds_max=None,
          max_steps=2000, s_max=math.inf, max_angle=0.25, detect=KINDS, tangent=None, accept=None):
    """Trace the solution branch through ``(problem.x0, problem.p0)`` by pseudo-arclength continuation.

    See the :mod:`statmech.continuation` docstring for the algorithm and the returned :class:`Branch`.
    """
    if not isinstance(problem, Problem):
        raise ValueError(f"problem must be a statmech.continuation.Problem, got {type(problem).__name__}")
    tr = _trace_kw(problem, p_min, p_max, ds, ds_min, ds_max, max_steps, s_max, max_angle, detect, accept)
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
        t0 = _null_tangent(_Eval.at(problem, y0).A, w, 1.0)
        if direction == -1:
            t0 = -t0
    return _trace_both(problem, tr, y0, t0, both=(direction is None and tangent is None))


def _trace_both(prob, tr, y0, t0, both, start_pt=None):
    p0 = y0[-1]
    halves, statuses = [], []
    steps = rejected = 0
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
        pts, sps, status, st, rj = tr.run(y0, d * t0, sp0)
        halves.append((pts, sps))
        statuses.append(status)
        steps += st
        rejected += rj
    return replace(_assemble(prob, halves, statuses, steps, rejected), unlocated=tuple(tr.unlocated))

