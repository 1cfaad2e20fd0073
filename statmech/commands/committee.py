"""``statmech committee``: tree committee machine capacities and RS saddle points."""
from __future__ import annotations

import math

from ..cli import emit, emit_result, float_or_inf


def _K(s):
    v = float_or_inf(s)
    if math.isinf(v):
        return math.inf
    if v != int(v):
        import argparse
        raise argparse.ArgumentTypeError(f"K must be an integer or 'inf', got {s!r}")
    return int(v)


def register(sub):
    p = sub.add_parser("committee", help="tree committee machines: storage capacity (RS, 1RSB, k-step, full RSB)")
    s = p.add_subparsers(dest="committee_cmd", metavar="WHAT")
    s.required = True
    c = s.add_parser("capacity", help="storage capacity alpha_c(K)")
    c.add_argument("--K", type=_K, required=True, help="number of hidden units (odd for sign, even for relu, or inf)")
    c.add_argument("--activation", default="sign",
                   help="sign | relu | erf | quadratic (erf, quadratic: K = inf only; default sign)")
    c.add_argument("--ansatz", default="rs",
                   help="rs | 1rsb | 2rsb .. 6rsb | frsb (beyond 1rsb: K = inf only; default rs)")
    c.add_argument("--json", action="store_true", help="JSON output")
    c.set_defaults(func=_capacity)
    lad = s.add_parser("ladder", help="K = inf: RS, 1RSB .. k-step and full RSB capacities with their relative drops")
    lad.add_argument("--activation", nargs="+", default=["relu", "erf", "quadratic"],
                     help="relu | erf | quadratic (one or more; default all three)")
    lad.add_argument("--kmax", type=int, default=3, help="largest number of RSB steps (1 .. 6; default 3)")
    lad.add_argument("--Ks", type=int, nargs="+", default=[4, 8, 16],
                     help="full-RSB grid sizes, each twice the previous (default 4 8 16)")
    lad.add_argument("--check", action="store_true",
                     help="also evaluate every k-step minimum by the independent Gauss-Legendre quadrature")
    lad.add_argument("--json", action="store_true", help="JSON output")
    lad.set_defaults(func=_ladder)
    st = s.add_parser("storage", help="RS saddle point (q, entropy, replicon) at alpha (sign: any odd K; relu: K = 2)")
    st.add_argument("--alpha", type=float_or_inf, required=True)
    st.add_argument("--K", type=_K, required=True)
    st.add_argument("--activation", default="sign", help="sign | relu (default sign)")
    st.add_argument("--json", action="store_true")
    st.set_defaults(func=_storage)


def _capacity(args):
    from .. import committee as cm
    K, act, ans = args.K, args.activation, args.ansatz
    err, r = None, None
    finite = not (isinstance(K, float) and math.isinf(K))
    if act == "sign" and ans == "1rsb" and finite:
        r = cm.tcm_capacity_1rsb_point(K)          # one solve; the error estimate comes with it
        err = r.extra.get("stderr", r.extra.get("quadrature_error"))
    elif act == "relu" and ans == "1rsb" and K in (4, 6, 8, 10, 12):
        r = cm.relu_capacity_1rsb_rqmc(K, progress=False)
        err = r.extra["stderr"]
    elif ans == "rs" and finite:
        r = cm.tcm_capacity_point(K, act, ans)     # with the replicon near capacity and rs_stable
        if act == "relu":
            err = cm.relu_rs_capacity_error(K)
    a = float(r.alpha_c) if r is not None else cm.tcm_capacity(K, act, ans)
    data = {"K": K, "activation": act, "ansatz": ans, "alpha_c": a}
    if err is not None:
        data["standard_error"] = float(err)
    text = f"alpha_c(K={K}, {act}, {ans}) = {a:.12g}" + (f" +- {float(err):.2g}" if err else "")
    if r is None:
        return emit(args, data, text)
    return emit_result(args, {**data, "replicon": r.replicon}, r, text)


def _ladder(args):
    import math

    from .. import committee as cm
    rows, lines = [], []
    for act in args.activation:
        steps = [cm.tcm_capacity_point(math.inf, act, "rs")]
        steps += [cm.tcm_kstep_inf(act, k, check=args.check) for k in range(1, args.kmax + 1)]
        steps.append(cm.tcm_capacity_inf_point(act, "frsb", Ks=tuple(args.Ks)))
        prev = None
        for r in steps:
            row = {"activation": act, "ansatz": r.ansatz, "alpha_c": float(r.alpha_c), "error": float(r.error)}
            if prev is not None:
                row["relative_drop"] = (prev - float(r.alpha_c)) / prev
            if "reference_value" in r.extra:
                row["reference_value"] = float(r.extra["reference_value"])
            if r.ansatz == "frsb":
                row["alpha_K"] = [float(v) for v in r.alpha_K]
            rows.append(row)
            drop = "" if prev is None else f"   drop {100 * row['relative_drop']:.4f} %"
            ref = f"   reference {row['reference_value']:.13f}" if "reference_value" in row else ""
            lines.append(f"{act:9s} {r.ansatz:5s} alpha_c = {float(r.alpha_c):.13f} +- {float(r.error):.1g}{drop}{ref}")
            prev = float(r.alpha_c)
    return emit(args, {"rows": rows}, "\n".join(lines))


def _storage(args):
    from ..committee import tcm_storage
    r = tcm_storage(args.alpha, args.K, args.activation)
    data = {"alpha": args.alpha, "K": args.K, "activation": args.activation, "q": r.q, "q_hat": r.q_hat,
            "entropy": r.entropy, "replicon": r.replicon, "residual": r.residual,
            "quadrature_error": r.extra["quadrature_error"]}
    return emit_result(args, data, r)
