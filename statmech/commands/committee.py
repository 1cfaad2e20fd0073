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
    p = sub.add_parser("committee", help="tree committee machines: storage capacity (RS, 1RSB; sign, ReLU)")
    s = p.add_subparsers(dest="committee_cmd", metavar="WHAT")
    s.required = True
    c = s.add_parser("capacity", help="storage capacity alpha_c(K)")
    c.add_argument("--K", type=_K, required=True, help="number of hidden units (odd for sign, even for relu, or inf)")
    c.add_argument("--activation", default="sign", help="sign | relu | erf (erf: K = inf only; default sign)")
    c.add_argument("--ansatz", default="rs", help="rs | 1rsb | frsb (frsb: K = inf only; default rs)")
    c.add_argument("--json", action="store_true", help="JSON output")
    c.set_defaults(func=_capacity)
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
    elif act == "relu" and ans == "1rsb" and K in (4, 6):
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


def _storage(args):
    from ..committee import tcm_storage
    r = tcm_storage(args.alpha, args.K, args.activation)
    data = {"alpha": args.alpha, "K": args.K, "activation": args.activation, "q": r.q, "q_hat": r.q_hat,
            "entropy": r.entropy, "replicon": r.replicon, "residual": r.residual,
            "quadrature_error": r.extra["quadrature_error"]}
    return emit_result(args, data, r)
