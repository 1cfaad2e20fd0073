"""Branch switching at a branch point (algebraic bifurcation equation for the second tangent)."""
from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from ..errors import ConvergenceError
from ._corrector import _null_tangent, _wdot, _wnorm
from ._problem import _Eval
from ._results import KINDS, SpecialPoint
from ._trace import _Pt, _trace_both, _trace_kw


def _other_direction(prob, point):
    """The branch point as y = (x, p) and the (weighted unit) direction d of the other branch
    through it, from the known tangent (``point.tangent``, else the null vector of [F_x, F_p])."""
    w = prob.w
    y = np.append(point.x, point.p)
    e = _Eval.at(prob, y)
    t1 = point.tangent if point.tangent is not None else _null_tangent(e.A, w)
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
    return y, d


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
    y, d = _other_direction(problem, point)
    if d[-1] < 0:
        d = -d
    evs = np.array([float(g(y[:-1], y[-1], **problem.params)) for g in problem.events.values()])
    # the start point is the branch point itself: det = 0 and the margin is 0 there
    start = _Pt(y, d, 0.0, 0.0, evs, problem.f(y[:-1], y[-1]))
    br = _trace_both(problem, tr, y, d, both=True, start_pt=start)
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

