"""``statmech phase-diagram``: transition lines found by the continuation engine.

Every line is computed from a model's *free energy alone* (no model-specific transition
code): the free energy, its gradient and Hessian become a :class:`statmech.continuation.Problem`,
:func:`statmech.continuation.analyze` finds all branches, folds, branch points, stability
changes and coexistence points at one value of the second parameter, and
:func:`statmech.continuation.continue_point` follows each of them in that parameter.

``statmech phase-diagram scm --activation erf --K 2:50 --out FILE``
    soft committee machine (seed 003, ``statmech.scm.free_energy``), lines in the (K, alpha)
    plane with K continuous: alpha_s (fold where the specialized minimum appears),
    alpha_c (coexistence of the two minima, or the branch point when the transition is
    continuous), alpha_d (where the unspecialized minimum loses stability, a branch point).
``statmech phase-diagram perceptron --kappa -1:2 --out FILE``
    perceptrons in the (kappa, alpha) plane: Gardner capacity of the spherical perceptron
    (``statmech.perceptron.gardner_capacity``) and the capacity of the binary perceptron
    (zero of the RS entropy, an event of the engine continued in kappa).

The lines are computed by the library: :func:`statmech.scm.scm_lines` and
:func:`statmech.scm.scm_grid`, :func:`statmech.perceptron.perceptron_lines` (continuation problem
:func:`statmech.perceptron.advanced.binary_storage_problem`); this module parses, calls and prints.
"""
from __future__ import annotations

import math

__all__ = ["register"]


# ============================================================================ CLI
def _range(s, name):
    try:
        parts = [float(v) for v in s.split(":")]
    except ValueError:
        raise ValueError(f"{name} must be MIN:MAX (e.g. 2:50), got {s!r}") from None
    if len(parts) != 2 or not all(math.isfinite(v) for v in parts) or not parts[0] < parts[1]:
        raise ValueError(f"{name} must be MIN:MAX with finite MIN < MAX, got {s!r}")
    return parts


def register(sub):
    p = sub.add_parser("phase-diagram", help="transition lines of a model from its free energy (continuation engine)")
    ms = p.add_subparsers(dest="model", metavar="MODEL")
    ms.required = True
    s = ms.add_parser("scm", help="soft committee machine: alpha_s, alpha_c, alpha_d versus K (continuous)")
    s.add_argument("--activation", default="erf", choices=["erf", "relu"], help="hidden-unit activation")
    s.add_argument("--K", default="2:20", help="K range MIN:MAX (K > 1, continuous; default 2:20)")
    s.add_argument("--K0", type=float, default=None, help="K at which the lines are started (default 5 erf, 3 relu)")
    s.add_argument("--out", default=None, help="write the lines as JSON to this file (atomically)")
    s.add_argument("--sweep", action="store_true",
                   help="also analyze every integer K independently (parallel sweep, checkpointed to OUT.grid.json)")
    s.add_argument("--json", action="store_true", help="print JSON")
    s.set_defaults(func=_run_scm)
    q = ms.add_parser("perceptron", help="perceptron capacities versus the stability kappa")
    q.add_argument("--kappa", default="-1:2", help="kappa range MIN:MAX (default -1:2)")
    q.add_argument("--out", default=None, help="write the lines as JSON to this file (atomically)")
    q.add_argument("--json", action="store_true", help="print JSON")
    q.set_defaults(func=_run_perceptron)


def _curve_dict(c):
    return {"param": c.param, "kind": c.kind, "q": c.q.tolist(), "alpha": c.p.tolist(), "status": list(c.status)}


def _run_scm(args):
    from ..cli import emit
    from ..io import atomic_write_json
    K_min, K_max = _range(args.K, "K")
    if K_min <= 1:
        raise ValueError(f"K must be > 1, got K range {args.K!r}")
    from .. import scm
    res = scm.scm_lines(args.activation, K_min, K_max, K0=args.K0, ds=0.03)
    lines = res["lines"]
    table = res["integer_K"]
    if args.sweep:
        grid_out = (args.out + ".grid.json") if args.out else "scm_grid.json"
        direct = scm.scm_grid(args.activation, [row["K"] for row in table], grid_out)
        for row, d in zip(table, direct):
            row.update({f"{k}_direct": d[k] for k in ("alpha_s", "alpha_c", "alpha_d")})
    data = {"model": "scm", "activation": args.activation, "K_range": [K_min, K_max], "K0": res["K0"],
            "at_K0": res["transitions_K0"], "lines": {k: _curve_dict(c) for k, c in lines.items()},
            "meet": res["meet_details"],
            "filled": {k: {kk: f[kk] for kk in ("K", "alpha", "solver", "reason")} for k, f in res["filled"].items()},
            "integer_K": table}
    if args.out:
        atomic_write_json(args.out, _finite(data))
    text = "\n".join([f"SCM {args.activation}: lines {', '.join(lines)} for K in [{K_min}, {K_max}]"] +
                     [" ".join(f"{k}={v:.10g}" if isinstance(v, float) else f"{k}={v}" for k, v in r.items())
                      for r in table] +
                     [f"lines {a} and {b} meet at K={q:.8g}, alpha={p:.10g} ({d['provenance']})"
                      for (a, b, q, p), d in zip(res["meet"], res["meet_details"])])
    return emit(args, data, text)


def _run_perceptron(args):
    from ..cli import emit
    from ..io import atomic_write_json
    from ..perceptron import perceptron_lines
    k_min, k_max = _range(args.kappa, "kappa")
    res = perceptron_lines(k_min, k_max)
    b = res["binary_capacity"]
    data = {"model": "perceptron", "kappa": res["kappa"].tolist(),
            "spherical_capacity": res["spherical_capacity"].tolist(), "binary_capacity": _curve_dict(b)}
    if args.out:
        atomic_write_json(args.out, _finite(data))
    text = "\n".join(f"kappa={k:+.3f}  spherical alpha_c={a:.10g}  binary alpha_c={b.p_at(k):.10g}"
                     for k, a in zip(res["kappa"][::10], res["spherical_capacity"][::10]))
    return emit(args, data, text)


def _finite(v):
    from ..cli import _jsonable
    return _jsonable(v)
