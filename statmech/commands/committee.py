"""``statmech committee``: tree committee machine capacities and RS saddle points."""
from __future__ import annotations

import math

from ..cli import emit, float_or_inf


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
    c.add_argument("--activation", default="sign", help="sign | relu (default sign)")
    c.add_argument("--ansatz", default="rs", help="rs | 1rsb (default rs)")
    c.add_argument("--json", action="store_true", help="JSON output")
    c.set_defaults(func=_capacity)
    st = s.add_parser("storage", help="RS saddle point (q, entropy, replicon) of the sign TCM at alpha")
    st.add_argument("--alpha", type=float_or_inf, required=True)
    st.add_argument("--K", type=_K, required=True)
    st.add_argument("--json", action="store_true")
    st.set_defaults(func=_storage)


def _capacity(args):
    from ..committee import relu_rs_capacity_error, tcm_capacity
    a = tcm_capacity(args.K, args.activation, args.ansatz)
    data = {"K": args.K, "activation": args.activation, "ansatz": args.ansatz, "alpha_c": a}
    if args.activation == "relu" and args.ansatz == "rs":
        data["standard_error"] = relu_rs_capacity_error(args.K)
    return emit(args, data, f"alpha_c(K={args.K}, {args.activation}, {args.ansatz}) = {a:.12g}")


def _storage(args):
    from ..committee import tcm_storage
    r = tcm_storage(args.alpha, args.K)
    data = {"alpha": args.alpha, "K": args.K, "q": r.q, "q_hat": r.q_hat, "entropy": r.entropy,
            "replicon": r.replicon, "rs_stable": r.rs_stable, "residual": r.residual,
            "quadrature_error": r.extra["quadrature_error"]}
    return emit(args, data)
