"""``statmech activations``: the channel model (gate, ESP/Swish, back-prop factor), ESP pair
moments, and the SCM specialization transitions with ESP units.

Examples::

    statmech activations eval --h -1 0 2 --beta 1 --json
    statmech activations pair --rho 0.3 0.9 --beta 2 --order 1 --json
    statmech activations transitions --K 2 --beta 0.5 2 --json

Every ``--json`` record follows the one schema of :func:`statmech.cli.emit_results`.
"""
from __future__ import annotations

from ..cli import emit_results, float_or_inf

_BETA_HELP = "noise parameter beta of the gate in [0, inf]: 0 is the linear unit h/2, inf is ReLU"


def register(sub):
    p = sub.add_parser("activations", help="mean-field activations: ESP/Swish, gate, pair moments, SCM transitions")
    s = p.add_subparsers(dest="activations_command", metavar="COMMAND")
    s.required = True

    e = s.add_parser("eval", help="gate <s>, ESP <j>, back-prop factor g and log Z at h, beta")
    e.add_argument("--h", type=float, nargs="+", required=True, metavar="H", help="pre-activation(s) h")
    e.add_argument("--beta", type=float_or_inf, default=1.0, metavar="BETA", help=_BETA_HELP + " (default 1)")
    e.add_argument("--json", action="store_true", help="print one JSON record")
    e.set_defaults(func=_eval)

    m = s.add_parser("pair", help="E[g(u) g(v)] of ESP(beta) at correlations rho (unit variances), "
                                  "with its quadrature error")
    m.add_argument("--rho", type=float, nargs="+", required=True, metavar="RHO",
                   help="correlation(s) rho of the unit-variance pre-activations u, v, in [-1, 1]")
    m.add_argument("--beta", type=float_or_inf, default=1.0, metavar="BETA", help=_BETA_HELP + " (default 1)")
    m.add_argument("--order", type=int, choices=(0, 1, 2), default=0, metavar="ORDER",
                   help="derivative order in rho, 0, 1 or 2 (Price's theorem: E[g^(n)(u) g^(n)(v)]; default 0)")
    m.add_argument("--json", action="store_true", help="print one JSON record")
    m.set_defaults(func=_pair)

    t = s.add_parser("transitions", help="SCM specialization transitions with ESP(beta) units")
    t.add_argument("--K", type=int, default=2, metavar="K", help="hidden units of student and teacher (default 2)")
    t.add_argument("--beta", type=float_or_inf, nargs="+", required=True, metavar="BETA", help=_BETA_HELP)
    t.add_argument("--json", action="store_true", help="print one JSON record")
    t.set_defaults(func=_transitions)


def _eval(args):
    from .. import activations as A
    r = A.channel_values(args.h, args.beta)
    return emit_results(args, r, null_reasons={
        "log_partition": "log Z = inf for beta = inf and h > 0 (log Z grows as beta h)"})


def _pair(args):
    from .. import activations as A
    r = A.esp_pair_moment_point(args.rho, args.beta, args.order)
    text = "\n".join(f"rho = {float(x)!r}: {float(v)!r}" for x, v in zip(r.rho, r.pair_moment)) + f"\n(error {r.error:.2g})"
    return emit_results(args, r, text=text, null_reasons={
        "pair_moment": "the second rho-derivative of the ReLU pair moment is infinite at |rho| = 1"})


def _transitions(args):
    from .. import activations as A
    r = A.scm_transitions(args.K, args.beta)
    lines = [f"beta = {b:g}: alpha_s = {float(s)!r}, alpha_c = {float(c)!r}, alpha_d = {float(d)!r}, order {int(o)}"
             for b, s, c, d, o in zip(r.beta, r.alpha_s, r.alpha_c, r.alpha_d, r.order)]
    why = "no specialization at finite alpha (the linear unit, beta = 0) or the transition was not resolved"
    # the beta = inf (ReLU) values as numbers; the per-beta solver objects (details) are not printed
    relu = {k: getattr(r.relu, k) for k in ("alpha_s", "alpha_c", "alpha_d", "order")}
    return emit_results(args, r, text="\n".join(lines), omit=("relu", "details"), extra={"relu": relu},
                        null_reasons={"alpha_s": why, "alpha_c": why, "alpha_d": why})
