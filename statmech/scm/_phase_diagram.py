"""Transition lines of the SCM in the (K, alpha) plane (K continuous) by the engine's
two-parameter continuation, and transitions on a grid of K by a checkpointed sweep
(used by ``statmech phase-diagram scm`` and the phase-diagram figures)."""
from __future__ import annotations

import math

import numpy as np

from ..continuation import continue_point, curve_intersections
from ..errors import ConvergenceError
from ..sweep import grid, sweep
from ._activation import activation_info
from ._common import at_point
from ._engine import scm_problem, scm_transitions
from ._landau import _landau
from ._transitions import transitions


def scm_lines(activation="erf", K_min=2.0, K_max=50.0, K0=None, ds=0.02):
    """Lines alpha_s(K), alpha_c(K), alpha_d(K) (K continuous) by two-parameter continuation.

    Domain: 1 < K_min < K_max (finite), activation "erf" or "relu" (or any with a first-order
    transition at K0); the continued part reaches K ~ 100, :func:`transitions` fills the rest.

    Starts from :func:`scm_transitions` at ``K0`` (default 5 for erf, 3 for ReLU) and
    continues the fold, the coexistence point and the branch point in K over
    [K_min, K_max].  Returns a dict with

    * ``"lines"``: label -> :class:`statmech.continuation.Curve` (the traced part of each line);
    * ``"filled"``: label -> ``{"K", "alpha", "solver", "reason"}``, the part of [K_min, K_max] a
      line's continuation does not reach, computed by :func:`transitions` (method "auto": the
      direct solver, or the Landau reduction where the transition is weakly first order).  Near
      K = 2 the fold and the coexistence point approach the branch point of R = S (their gaps to
      alpha_d vanish like (K - 2)^2), and the fold line stops where it can no longer be told from
      the branch point (``reason`` "fold_degenerate", K - 2 ~ 5e-3);
    * ``"meet"``: the points where lines meet, (label_a, label_b, K, alpha), and ``"meet_details"``
      (one dict per entry, with its ``"provenance"``).  At K = 2 the cubic Landau coefficient
      Phi_3 ~ (K-1)^3 - (K-1) = K (K-1) (K-2) vanishes (:mod:`statmech.scm._landau`), so alpha_s
      and alpha_c touch alpha_d there (tangentially): that point is reported as (K = 2,
      alpha_d(2)) from the exact R = S stability condition, not as a crossing of the traced
      lines (which, tangent, would be decided by rounding).  Other meetings are crossings of the
      traced lines refined on the re-solved lines, or traced lines ending on each other;
    * ``"K0"``, ``"transitions_K0"`` and ``"integer_K"``: one row ``{"K": k, label: alpha, ...}``
      per integer k in [K_min, K_max], the line re-solved exactly at k (``Curve.p_at``) or, in a
      filled part, :func:`transitions` at k (then ``row["filled"]`` lists those labels); a value
      is None where neither gives a number (the error is in ``row["errors"]``).
    """
    K0 = (5.0 if activation == "erf" else 3.0) if K0 is None else float(K0)
    K0 = min(max(K0, K_min), K_max)
    with at_point("scm_lines", activation=getattr(activation, "name", activation), K_min=K_min, K_max=K_max):
        return _scm_lines(activation, K_min, K_max, K0, ds)


def _scm_lines(activation, K_min, K_max, K0, ds):
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
    for lab, key in (("alpha_d", "bp"), ("alpha_c", "coexistence"), ("alpha_s", "fold")):
        if pts[key] is not None:
            lines[lab] = continue_point(prob, pts[key], "K", K_min, K_max, ds=ds, max_steps=5000)
    filled = {lab: f for lab, c in lines.items() if (f := _fill(activation, lab, c, K_min, K_max)) is not None}
    meet, meet_details = _meetings(activation, lines, K_min, K_max)
    table = []
    for k in range(int(math.ceil(K_min)), int(math.floor(K_max)) + 1):
        row = {"K": k}
        for lab, c in lines.items():
            row[lab] = None
            try:
                if c.q.min() <= k <= c.q.max():
                    row[lab] = c.p_at(float(k))
                else:
                    row[lab] = getattr(transitions(float(k), activation), lab)
                    row.setdefault("filled", []).append(lab)
            except (ConvergenceError, ValueError) as exc:
                row.setdefault("errors", {})[lab] = repr(exc)
        table.append(row)
    return {"lines": lines, "filled": filled, "meet": meet, "meet_details": meet_details, "K0": K0,
            "integer_K": table, "transitions_K0": {k: tr[k] for k in ("alpha_s", "alpha_c", "alpha_d", "order")}}


def _fill(activation, lab, curve, K_min, K_max, n=12):
    """The parts of [K_min, K_max] beyond the traced ends of ``curve``, by :func:`transitions`
    (None if the line is traced over the whole range)."""
    Ks, why = [], []
    lo, hi = float(curve.q.min()), float(curve.q.max())
    if lo > K_min + 1e-12 * (1 + abs(K_min)):
        Ks += list(np.linspace(K_min, lo, n)[:-1])
        why.append(curve.status[0] if curve.q[0] == lo else curve.status[-1])
    if hi < K_max - 1e-12 * (1 + abs(K_max)):
        Ks += list(np.linspace(hi, K_max, n)[1:])
        why.append(curve.status[-1] if curve.q[-1] == hi else curve.status[0])
    if not Ks:
        return None
    out = {"K": [], "alpha": [], "solver": [], "reason": why, "failed": {}}
    for K in Ks:
        try:
            t = transitions(float(K), activation)
        except ConvergenceError as exc:
            out["failed"][float(K)] = repr(exc)
            continue
        out["K"].append(float(K))
        out["alpha"].append(float(getattr(t, lab)))
        out["solver"].append(t.details["solver"])
    return out


def _meetings(activation, lines, K_min, K_max):
    """(meet, meet_details) of :func:`scm_lines`: the Landau point K = 2 and the other meetings."""
    meet, details = [], []
    K2 = K_min <= 2.0 <= K_max and "alpha_d" in lines
    if K2:
        landau = _landau(activation_info(activation), 2.0 + 1e-3)
        K2 = landau[0] is not None  # first order just above K = 2: the lines leave alpha_d there
    if K2:
        a2 = transitions(2.0, activation, method="direct").alpha_d
        prov = ("Landau: Phi_3 ~ K (K-1) (K-2) vanishes at K = 2, alpha_d - alpha_s and alpha_d - alpha_c "
                "~ Phi_3^2 / Phi_4 ~ (K-2)^2 (lines tangent); alpha = alpha_d(2) from the R = S "
                "stability condition (transitions(2, method='direct'))")
        for lab in ("alpha_s", "alpha_c"):
            if lab in lines:
                meet.append(("alpha_d", lab, 2.0, float(a2)))
                details.append({"lines": ["alpha_d", lab], "K": 2.0, "alpha": float(a2), "provenance": prov,
                                "Phi_3/(K-2) at K=2.001": landau[3]["Phi_3"] / 1e-3})
    labels = list(lines)
    for i, a in enumerate(labels):
        for b in labels[i + 1:]:
            found = [(q, p, "crossing of the traced lines (Brent on the re-solved lines)")
                     for q, p in curve_intersections(lines[a], lines[b])]
            # lines ending on each other (a line stops where its extended system degenerates)
            for end in (0, -1):
                qa, pa = lines[a].q[end], lines[a].p[end]
                qb, pb = lines[b].q[end], lines[b].p[end]
                if abs(qa - qb) <= 1e-6 * (1 + abs(qa)) and abs(pa - pb) <= 1e-6 * (1 + abs(pa)):
                    found.append((float(qa), float(pa), "traced lines end on each other (to 1e-6)"))
            for q, p, prov in found:
                if K2 and abs(q - 2.0) <= 1e-6:
                    continue  # the Landau point, reported exactly above
                meet.append((a, b, q, p))
                details.append({"lines": [a, b], "K": q, "alpha": p, "provenance": prov})
    return meet, details


def scm_point(point):
    """alpha_s, alpha_c, alpha_d at one grid point ``{"K": K, "activation": act}`` (picklable,
    for :func:`statmech.sweep.sweep`).  Domain: that of :func:`scm_transitions`."""
    tr = scm_transitions(float(point["K"]), point.get("activation", "erf"))
    return {k: tr[k] for k in ("alpha_s", "alpha_c", "alpha_d", "order")}


def scm_grid(activation, Ks, out, executor=None, workers=None, progress=True):
    """:func:`scm_transitions` on a grid of K by :func:`statmech.sweep.sweep` (process pool by
    default, checkpointed next to ``out``, resumable, atomic JSON).  Domain: Ks in that of
    :func:`scm_transitions`."""
    pts = grid(K=[float(k) for k in Ks], activation=[activation])
    return sweep(scm_point, pts, out, executor=executor, workers=workers, progress=progress,
                 desc=f"SCM {activation} transitions")
