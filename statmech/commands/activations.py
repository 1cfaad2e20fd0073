"""``statmech activations``: the channel model (gate, ESP/Swish, back-prop factor), ESP pair
moments, and the SCM specialization transitions with ESP units."""
from __future__ import annotations

from ..cli import emit, float_or_inf


def register(sub):
    p = sub.add_parser("activations", help="mean-field activations: ESP/Swish, gate, pair moments, SCM transitions")
    s = p.add_subparsers(dest="what", metavar="WHAT")
    s.required = True
    e = s.add_parser("eval", help="gate <s>, ESP <j>, back-prop factor g and log Z at h, beta")
    e.add_argument("--h", type=float, nargs="+", required=True, help="pre-activation(s) h")
    e.add_argument("--beta", type=float_or_inf, default=1.0, help="noise parameter beta in [0, inf] (default 1)")
    e.add_argument("--json", action="store_true")
    e.set_defaults(func=_eval)
    m = s.add_parser("pair", help="E[g(u) g(v)] of ESP(beta) at correlations rho (unit variances)")
    m.add_argument("--rho", type=float, nargs="+", required=True)
    m.add_argument("--beta", type=float_or_inf, default=1.0)
    m.add_argument("--order", type=int, default=0, help="derivative order in rho (0, 1, 2)")
    m.add_argument("--json", action="store_true")
    m.set_defaults(func=_pair)
    t = s.add_parser("transitions", help="SCM specialization transitions with ESP(beta) units")
    t.add_argument("--K", type=int, default=2)
    t.add_argument("--beta", type=float_or_inf, nargs="+", required=True)
    t.add_argument("--json", action="store_true")
    t.set_defaults(func=_transitions)


def _eval(args):
    from .. import activations as A
    h, b = args.h, args.beta
    data = {"h": h, "beta": b, "gate": A.gate_expectation(h, b), "esp": A.esp(h, b),
            "esp_derivative": A.esp_derivative(h, b), "log_partition": A.log_partition(h, b)}
    return emit(args, data)


def _pair(args):
    from .. import activations as A
    v = A.ESP(args.beta).pair_moment(args.rho, order=args.order)
    return emit(args, {"beta": args.beta, "rho": args.rho, "order": args.order, "pair_moment": v})


def _transitions(args):
    from .. import activations as A
    r = A.scm_transitions(args.K, args.beta)
    data = {"K": args.K, "beta": r.beta, "alpha_s": r.alpha_s, "alpha_c": r.alpha_c, "alpha_d": r.alpha_d,
            "order": r.order}
    return emit(args, data)
