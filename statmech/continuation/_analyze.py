"""``analyze``: every branch, special point and coexistence point of a problem over a p range."""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..errors import ConvergenceError, check_range
from ._coexistence import _sheet_sample, _sheets, coexistence
from ._corrector import _Corrector, _wnorm
from ._deflation import deflate
from ._results import Analysis
from ._switching import _other_direction, switch_branch
from ._trace import _start_point, _weighted, trace


def _on_branch(prob, br, x, p, tol=1e-7):
    """Is (x, p) a point of branch br? (exact check at fixed p on each sheet)"""
    scale = 1 + float(np.max(np.abs(x)))
    corr = _Corrector(prob, maxit=30)
    for sh in _sheets(br) if br.p.size > 1 else []:
        xb = _sheet_sample(prob, br, sh, p, corr)
        if xb is not None and np.max(np.abs(xb[0] - x)) <= tol * scale:
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
    itself).  ``ds`` defaults to 0.005.
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
        y, d = _other_direction(problem, bp)
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

