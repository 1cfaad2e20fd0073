"""``statmech committee``: tree committee machine capacities, RS saddle points and the K = inf ladder.

Examples::

    statmech committee capacity --K 3 --json
    statmech committee capacity --K 7 --ansatz 1rsb --json
    statmech committee capacity --K inf --activation relu --ansatz frsb --json
    statmech committee storage --alpha 1 --K 3 --json
    statmech committee ladder --activation relu --kmax 2 --json

Every ``--json`` record follows the one schema of :func:`statmech.cli.emit_results`.
"""
from __future__ import annotations

import math

from ..cli import emit_results, float_or_inf

_ACTIVATIONS = ("sign", "relu", "erf", "quadratic")
_ANSATZE = ("rs", "1rsb", "2rsb", "3rsb", "4rsb", "5rsb", "6rsb", "frsb")


def _K(s):
    import argparse
    v = float_or_inf(s)
    if math.isinf(v):
        if v < 0:
            raise argparse.ArgumentTypeError(f"K must be a positive integer or 'inf', got {s!r}")
        return math.inf
    if v != int(v):
        raise argparse.ArgumentTypeError(f"K must be an integer or 'inf', got {s!r}")
    return int(v)


def register(sub):
    p = sub.add_parser("committee", help="tree committee machines: storage capacity (RS, 1RSB, k-step, full RSB)")
    s = p.add_subparsers(dest="committee_cmd", metavar="COMMAND")
    s.required = True
    c = s.add_parser("capacity", help="storage capacity alpha_c(K) (SAT/UNSAT point)")
    c.add_argument("--K", type=_K, required=True, metavar="K",
                   help="number of hidden units: odd for sign, even for relu, or inf")
    c.add_argument("--activation", choices=_ACTIVATIONS, default="sign", metavar="ACTIVATION",
                   help="hidden units: sign, relu, erf, quadratic (erf, quadratic: K = inf only; default sign)")
    c.add_argument("--ansatz", choices=_ANSATZE, default="rs", metavar="ANSATZ",
                   help="replica ansatz: rs, 1rsb, 2rsb .. 6rsb, frsb (beyond 1rsb: K = inf only; default rs)")
    c.add_argument("--json", action="store_true", help="print one JSON record")
    c.set_defaults(func=_capacity)
    lad = s.add_parser("ladder", help="K = inf: RS, 1RSB .. k-step and full RSB capacities with their relative drops")
    lad.add_argument("--activation", nargs="+", choices=_ACTIVATIONS[1:], default=["relu", "erf", "quadratic"],
                     metavar="ACTIVATION", help="relu, erf, quadratic (one or more; default all three)")
    lad.add_argument("--kmax", type=int, choices=range(1, 7), default=3, metavar="KMAX",
                     help="largest number of RSB steps, 1 .. 6 (default 3)")
    lad.add_argument("--Ks", type=int, nargs="+", default=[4, 8, 16], metavar="KS",
                     help="full-RSB grid sizes, each twice the previous (default 4 8 16)")
    lad.add_argument("--check", action="store_true",
                     help="also evaluate every k-step minimum by the independent Gauss-Legendre quadrature")
    lad.add_argument("--json", action="store_true", help="print one JSON record")
    lad.set_defaults(func=_ladder)
    st = s.add_parser("storage", help="RS saddle point (q, entropy, replicon) at alpha (sign: odd K <= 201; relu: K = 2)")
    st.add_argument("--alpha", type=float_or_inf, required=True, metavar="ALPHA",
                    help="load P/N, below the RS capacity alpha_c^RS(K)")
    st.add_argument("--K", type=_K, required=True, metavar="K", help="number of hidden units (odd for sign, 2 for relu)")
    st.add_argument("--activation", choices=("sign", "relu"), default="sign", metavar="ACTIVATION",
                    help="hidden units: sign (default) or relu (K = 2)")
    st.add_argument("--json", action="store_true", help="print one JSON record")
    st.set_defaults(func=_storage)


def _capacity(args):
    from .. import committee as cm
    K, act, ans = args.K, args.activation, args.ansatz
    if act == "sign" and K == math.inf:
        # the K = inf capacity of sign units is infinite in every ansatz: a documented value, not a result
        a = cm.tcm_capacity(K, act, ans)
        from ..cli import emit
        return emit(args, {"command": getattr(args, "command_name", None), "K": K, "activation": act,
                           "ansatz": ans, "alpha_c": a, "converged": True, "error": 0.0},
                    f"alpha_c(K=inf, sign, {ans}) = inf (sign_capacity_large_K gives the growth with K)",
                    null_reasons={"alpha_c": "the capacity of sign units diverges as K -> inf "
                                              "(statmech.committee.sign_capacity_large_K gives its growth)"})
    r = cm.tcm_capacity_point(K, act, ans)
    err = float(r.error or 0.0)
    if act == "relu" and ans == "rs" and K != math.inf and not err:
        err = cm.advanced.relu_rs_capacity_error(K)
    a = r.alpha_c
    text = f"alpha_c(K={K}, {act}, {ans}) = {a:.12g}" + (f" +- {err:.2g}" if err else "")
    extra = {"K": K, "activation": act}      # K = inf goes out as null with its reason (flat() gives None)
    if err and not r.error:
        extra["error"] = err
    return emit_results(args, r, text, extra=extra)


def _ladder(args):
    from .. import committee as cm
    rows, lines, results = [], [], []
    for act in args.activation:
        steps = [cm.tcm_capacity_point(math.inf, act, "rs")]
        steps += [cm.advanced.tcm_kstep_inf(act, k, check=args.check) for k in range(1, args.kmax + 1)]
        steps.append(cm.advanced.tcm_capacity_inf_point(act, "frsb", Ks=tuple(args.Ks)))
        prev = None
        for r in steps:
            row = {"K": math.inf, "activation": act}
            if prev is not None:
                row["relative_drop"] = (prev - float(r.alpha_c)) / prev
            if "reference_value" in r.extra:
                row["reference_value"] = float(r.extra["reference_value"])
            if r.ansatz == "frsb":
                row["alpha_K"] = [float(v) for v in r.alpha_K]
            rows.append(row)
            results.append(r)
            drop = "" if prev is None else f"   drop {100 * row['relative_drop']:.4f} %"
            ref = f"   reference {row['reference_value']:.13f}" if "reference_value" in row else ""
            lines.append(f"{act:9s} {r.ansatz:5s} alpha_c = {float(r.alpha_c):.13f} +- {float(r.error):.1g}{drop}{ref}")
            prev = float(r.alpha_c)
    return emit_results(args, results, "\n".join(lines), extra=rows, null_reasons={"K": "K = inf: the wide network"})


def _storage(args):
    from ..committee import tcm_storage
    r = tcm_storage(args.alpha, args.K, args.activation)
    return emit_results(args, r)
