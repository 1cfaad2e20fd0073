"""``statmech franz-parisi``: Franz--Parisi entropies around typical perceptron solutions.

Examples::

    statmech franz-parisi entropy --weights binary --alpha 0.5 --d 0.005 0.01 0.1 --json
    statmech franz-parisi entropy --weights spherical --alpha 0.55 --d 0.01 0.1
    statmech franz-parisi crossing --alpha 0.5 0.6 --json
    statmech franz-parisi stochastic-energy --alpha 0.55 --q-star 0.5 0.6 --beta 20 --json
    statmech franz-parisi stochastic --alpha 0.55 --q-star 0.7 --beta 20 --d 0.01 0.1
    statmech franz-parisi stochastic-reference --alpha 0.55 --q-star 0.7 0.9 --ansatz 1rsb

Every ``--json`` record follows the one schema of :func:`statmech.cli.emit_results`.
"""
from __future__ import annotations

import numpy as np

from ..cli import emit_results, float_or_inf


def register(sub):
    p = sub.add_parser("franz-parisi", help="Franz-Parisi entropy S_FP(d) around typical solutions (RS)")
    ps = p.add_subparsers(dest="fp_command", metavar="COMMAND")
    ps.required = True
    json_help = "print one JSON record (the schema of statmech.cli.emit_results)"

    e = ps.add_parser("entropy", help="S_FP(d) for Ising or spherical weights")
    e.add_argument("--weights", choices=("binary", "spherical"), default="binary", metavar="WEIGHTS",
                   help="binary (W_i = +-1, default) or spherical (W.W = N) weights")
    e.add_argument("--alpha", type=float_or_inf, required=True, metavar="ALPHA",
                   help="load P/N, below the capacity (0.833 binary at kappa = 0, 2 spherical)")
    e.add_argument("--d", type=float_or_inf, nargs="+", required=True, metavar="D",
                   help="distances from the reference, in (0, 0.5]")
    e.add_argument("--kappa", type=float_or_inf, default=0.0, metavar="KAPPA", help="stability kappa (default 0)")
    e.add_argument("--json", action="store_true", help=json_help)
    e.set_defaults(func=run_entropy)

    c = ps.add_parser("crossing", help="Ising weights: smallest d where S_FP(d) becomes positive")
    c.add_argument("--alpha", type=float_or_inf, nargs="+", required=True, metavar="ALPHA",
                   help="loads P/N in (0, 0.833)")
    c.add_argument("--kappa", type=float_or_inf, default=0.0, metavar="KAPPA", help="stability kappa (default 0)")
    c.add_argument("--json", action="store_true", help=json_help)
    c.set_defaults(func=run_crossing)

    def stochastic_common(q, nargs="+"):
        q.add_argument("--alpha", type=float_or_inf, required=True, metavar="ALPHA", help="load P/N")
        q.add_argument("--q-star", type=float_or_inf, nargs=nargs, required=True, dest="q_star", metavar="Q_STAR",
                       help="norm of the magnetizations, |m|^2 = q* N, in (0, 1)")
        q.add_argument("--beta", type=float_or_inf, default=20.0, metavar="BETA",
                       help="inverse temperature of the stochastic perceptron (default 20)")

    s = ps.add_parser("stochastic-energy",
                      help="stochastic perceptron: training error of sign(m) vs q* (thesis Eq. 2.54)")
    stochastic_common(s)
    s.add_argument("--json", action="store_true", help=json_help)
    s.set_defaults(func=run_stochastic_energy)

    r = ps.add_parser("stochastic-reference",
                      help="stochastic perceptron at equilibrium (thesis Eq. 2.53): RS or 1RSB order parameters")
    stochastic_common(r)
    r.add_argument("--ansatz", choices=("rs", "1rsb"), default="rs", metavar="ANSATZ",
                   help="rs (default) or 1rsb (about a minute of CPU per q*)")
    r.add_argument("--json", action="store_true", help=json_help)
    r.set_defaults(func=run_stochastic_reference)

    f = ps.add_parser("stochastic",
                      help="stochastic perceptron: S_FP(d) of Ising solutions around sign(m) (thesis Fig. 2.7)")
    stochastic_common(f, nargs=None)
    f.add_argument("--d", type=float_or_inf, nargs="+", required=True, metavar="D",
                   help="Hamming distances from sign(m), in [0.005, 0.5]")
    f.add_argument("--ansatz", choices=("rs", "1rsb"), default="rs", metavar="ANSATZ",
                   help="ansatz of the reference: rs (default) or 1rsb")
    f.add_argument("--json", action="store_true", help=json_help)
    f.set_defaults(func=run_stochastic)


def _table(names, cols):
    lines = ["  ".join(f"{n:>14}" for n in names)]
    for row in zip(*cols):
        lines.append("  ".join(f"{v:>14.9g}" if isinstance(v, (float, np.floating)) else f"{v!s:>14}" for v in row))
    return "\n".join(lines)


def run_entropy(args):
    from .. import franz_parisi as fp
    fn = fp.binary_perceptron if args.weights == "binary" else fp.spherical_perceptron
    d = np.array(args.d, dtype=float)
    res = fn(args.alpha, d, args.kappa)
    text = _table(["d", "S_FP", "dS/dd", "q1", "t", "replicon"],
                  [d, res.entropy, res.dS_dd, res.q1, res.t, res.replicon])
    text += f"\nS_eq = {float(np.ravel(res.entropy_equilibrium)[0]):.12g} at d_typical = {float(np.ravel(res.d_typical)[0]):.12g}"
    return emit_results(args, res, text=text)


def run_crossing(args):
    from .. import franz_parisi as fp
    a = np.array(args.alpha, dtype=float)
    res = fp.binary_zero_crossing(a, args.kappa)
    return emit_results(args, res, text=_table(["alpha", "d_zero", "d_typical"],
                                               [a, np.atleast_1d(res.d_zero), np.atleast_1d(res.d_typical)]))


def run_stochastic_energy(args):
    from .. import franz_parisi as fp
    q = np.sort(np.array(args.q_star, dtype=float))
    res = fp.stochastic_energy(args.alpha, q, args.beta)
    return emit_results(args, res, text=_table(["q_star", "energy", "q_m", "q_hat"],
                                               [q, np.atleast_1d(res.energy), np.atleast_1d(res.q_m),
                                                np.atleast_1d(res.q_hat)]))


def run_stochastic_reference(args):
    from .. import franz_parisi as fp
    q = np.sort(np.array(args.q_star, dtype=float))
    if args.ansatz == "rs":
        res = fp.stochastic_reference(args.alpha, q, args.beta)
        cols = ["q_m", "q_hat", "A", "free_entropy", "replicon"]
        vals = [np.atleast_1d(getattr(res, c)) for c in cols]
    else:
        res = [fp.stochastic_reference(args.alpha, float(x), args.beta, ansatz="1rsb") for x in q]
        cols = ["phase", "q0", "q1", "q_hat0", "q_hat1", "A", "mu", "complexity", "free_entropy"]
        vals = [[r.extra["phase"] for r in res]] + [[getattr(r, c) for r in res] for c in cols[1:]]
    return emit_results(args, res, text=_table(["q_star"] + cols, [q] + vals))


def run_stochastic(args):
    from .. import franz_parisi as fp
    d = np.array(args.d, dtype=float)
    res = fp.stochastic_perceptron(args.alpha, d, args.q_star, args.beta, ansatz=args.ansatz)
    q1 = res.Q if args.ansatz == "1rsb" and "Q" in res.order_params else res.q1
    text = _table(["d", "S_FP", "dS/dd", "q1", "R", "p_hat"], [d, res.entropy, res.dS_dd, q1, res.R, res.p_hat])
    text += (f"\nS_eq(Ising) = {float(np.ravel(res.entropy_equilibrium)[0]):.12g} at d_typical = "
             f"{float(np.ravel(res.d_typical)[0]):.12g}")
    return emit_results(args, res, text=text)
