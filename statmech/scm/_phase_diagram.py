"""Transition lines of the SCM in the (K, alpha) plane (K continuous) by the engine's
two-parameter continuation, and transitions on a grid of K by a checkpointed sweep
(used by ``statmech phase-diagram scm`` and the phase-diagram figures)."""
from __future__ import annotations

import math

from ..continuation import continue_point, curve_intersections
from ..errors import ConvergenceError
from ..sweep import grid, sweep
from ._engine import scm_problem, scm_transitions
from ._transitions import transitions


def scm_lines(activation="erf", K_min=2.0, K_max=50.0, K0=None, ds=0.02):
    """Lines alpha_s(K), alpha_c(K), alpha_d(K) (K continuous) by two-parameter continuation.

    Starts from :func:`scm_transitions` at ``K0`` (default 5 for erf, 3 for ReLU) and
    continues the fold, the coexistence point and the branch point in K over
    [K_min, K_max].  Returns a dict with ``"lines"`` (label -> :class:`statmech.continuation.Curve`),
    the points where lines meet (``"meet"``: list of (label_a, label_b, K, alpha)), ``"K0"``,
    ``"transitions_K0"`` and ``"integer_K"``: one row ``{"K": k, label: alpha, ...}`` per integer
    k in [K_min, K_max], the line re-solved exactly at k (``Curve.p_at``); a value is None where
    k lies outside the traced part of that line (or the re-solve there fails).
    """
    K0 = (5.0 if activation == "erf" else 3.0) if K0 is None else float(K0)
    K0 = min(max(K0, K_min), K_max)
    t0 = transitions(K0, activation, method="continuation")
    eng = t0.details.get("_engine")
    if eng is not None and eng["stability_change"] is not None:
        # first order at K0: the engine problem of statmech.scm (collective coordinates
        # (R, (K-1) S, (K-1) C), which stay O(1) as K grows) and the points it located
        prob = eng["problem"]
        pts = {"fold": eng["fold"], "coexistence": eng["coexistence"], "bp": eng["stability_change"]}
        tr = {"alpha_s": t0.alpha_s, "alpha_c": t0.alpha_c, "alpha_d": t0.alpha_d,
              "order": "first" if t0.order == 1 else "second"}
    else:
        tr = scm_transitions(K0, activation)
        prob = scm_problem(K0, activation)
        pts = tr["points"]
    lines = {}
    if pts["bp"] is not None:
        lines["alpha_d"] = continue_point(prob, pts["bp"], "K", K_min, K_max, ds=ds, max_steps=5000)
    if pts["coexistence"] is not None:
        lines["alpha_c"] = continue_point(prob, pts["coexistence"], "K", K_min, K_max, ds=ds, max_steps=5000)
    if pts["fold"] is not None:
        lines["alpha_s"] = continue_point(prob, pts["fold"], "K", K_min, K_max, ds=ds, max_steps=5000)
    meet = []
    labels = list(lines)
    for i, a in enumerate(labels):
        for b in labels[i + 1:]:
            for q, p in curve_intersections(lines[a], lines[b]):
                meet.append((a, b, q, p))
            # lines ending on each other (a line stops where its extended system degenerates)
            for end in (0, -1):
                qa, pa = lines[a].q[end], lines[a].p[end]
                qb, pb = lines[b].q[end], lines[b].p[end]
                if abs(qa - qb) <= 1e-6 * (1 + abs(qa)) and abs(pa - pb) <= 1e-6 * (1 + abs(pa)):
                    meet.append((a, b, float(qa), float(pa)))
    table = []
    for k in range(int(math.ceil(K_min)), int(math.floor(K_max)) + 1):
        row = {"K": k}
        for lab, c in lines.items():
            try:
                row[lab] = c.p_at(float(k))
            except (ConvergenceError, ValueError):  # outside the traced part of the line
                row[lab] = None
        table.append(row)
    return {"lines": lines, "meet": meet, "K0": K0, "integer_K": table,
            "transitions_K0": {k: tr[k] for k in ("alpha_s", "alpha_c", "alpha_d", "order")}}


def scm_point(point):
    """alpha_s, alpha_c, alpha_d at one grid point ``{"K": K, "activation": act}`` (picklable,
    for :func:`statmech.sweep.sweep`)."""
    tr = scm_transitions(float(point["K"]), point.get("activation", "erf"))
    return {k: tr[k] for k in ("alpha_s", "alpha_c", "alpha_d", "order")}


def scm_grid(activation, Ks, out, executor=None, workers=None, progress=True):
    """:func:`scm_transitions` on a grid of K by :func:`statmech.sweep.sweep` (process pool by
    default, checkpointed next to ``out``, resumable, atomic JSON)."""
    pts = grid(K=[float(k) for k in Ks], activation=[activation])
    return sweep(scm_point, pts, out, executor=executor, workers=workers, progress=progress,
                 desc=f"SCM {activation} transitions")
