"""``statmech perceptron``: capacities, storage and teacher-student saddle points.

Examples::

    statmech perceptron capacity --kappa 0.5 --json
    statmech perceptron capacity --kappa -1 --ansatz frsb --json
    statmech perceptron capacity --weights binary --method gardner_derrida
    statmech perceptron storage --alpha 1.2 --kappa 0.0 --weights spherical --json
    statmech perceptron teacher-student --alpha 1.0 --weights binary --branch poor --json
    statmech perceptron at-line --kappa -0.5 --json
    statmech perceptron transition --json

Every ``--json`` record follows the one schema of :func:`statmech.cli.emit_results`.
"""
from __future__ import annotations

from ..cli import emit_results, float_or_inf

_WEIGHTS = ("spherical", "binary")


def _common(p, *, ansatz=("rs",)):
    p.add_argument("--weights", choices=_WEIGHTS, default="spherical", metavar="WEIGHTS",
                   help="spherical (W.W = N) or binary (W_i = +-1) weights (default spherical)")
    if len(ansatz) > 1:
        p.add_argument("--ansatz", choices=ansatz, default="rs", metavar="ANSATZ",
                       help=f"replica ansatz: {', '.join(ansatz)} (default rs)")
    p.add_argument("--json", action="store_true", help="print one JSON record")


def register(sub):
    p = sub.add_parser("perceptron", help="perceptron theory: capacities, storage, teacher-student, AT lines")
    ps = p.add_subparsers(dest="perceptron_command", metavar="COMMAND")
    ps.required = True

    c = ps.add_parser("capacity", help="storage capacity alpha_c(kappa) (SAT/UNSAT point)")
    c.add_argument("--kappa", type=float_or_inf, default=0.0, metavar="KAPPA", help="stability kappa (default 0)")
    c.add_argument("--method", choices=("zero_entropy", "gardner_derrida"), default="zero_entropy", metavar="METHOD",
                   help="binary weights: zero RS entropy (default, exact) or RS q -> 1 (gardner_derrida)")
    _common(c, ansatz=("rs", "1rsb", "frsb"))
    c.set_defaults(func=run_capacity)

    s = ps.add_parser("storage", help="typical solution space at (alpha, kappa): q, entropy, stability")
    s.add_argument("--alpha", type=float_or_inf, required=True, metavar="ALPHA", help="load P/N")
    s.add_argument("--kappa", type=float_or_inf, default=0.0, metavar="KAPPA", help="stability kappa (default 0)")
    _common(s, ansatz=("rs", "1rsb", "frsb"))
    s.set_defaults(func=run_storage)

    t = ps.add_parser("teacher-student", help="Gibbs learning of a teacher of the same kind: R, eps_g, entropy")
    t.add_argument("--alpha", type=float_or_inf, required=True, metavar="ALPHA", help="load P/N")
    t.add_argument("--branch", choices=("equilibrium", "poor", "perfect", "unstable"), default="equilibrium",
                   metavar="BRANCH", help="binary weights: equilibrium (default), poor, perfect or unstable")
    _common(t)
    t.set_defaults(func=run_teacher_student)

    a = ps.add_parser("at-line", help="de Almeida-Thouless line alpha_AT(kappa) of the RS storage solution")
    a.add_argument("--kappa", type=float_or_inf, default=0.0, metavar="KAPPA", help="stability kappa (default 0)")
    _common(a)
    a.set_defaults(func=run_at_line)

    r = ps.add_parser("transition", help="binary teacher-student: first-order transition and spinodal")
    r.add_argument("--json", action="store_true", help="print one JSON record")
    r.set_defaults(func=run_transition)


def run_capacity(args):
    from .. import perceptron as P
    if args.weights == "spherical":
        if args.method != "zero_entropy":
            raise ValueError("method applies to --weights binary only")
        r = P.gardner_capacity_point(args.kappa, args.ansatz)
    else:
        if args.ansatz == "frsb":
            raise ValueError("ansatz for --weights binary must be 'rs' or '1rsb' (1RSB: Krauth-Mezard), got 'frsb'")
        if args.ansatz == "1rsb":
            from ..perceptron.advanced import binary_capacity_1rsb
            r = binary_capacity_1rsb(args.kappa)
        else:
            r = P.binary_capacity_point(args.kappa, method=args.method)
    return emit_results(args, r, text=f"alpha_c = {r.thermo['alpha_c']!r} ({r.ansatz})")


def run_storage(args):
    from .. import perceptron as P
    fn = P.spherical_storage if args.weights == "spherical" else P.binary_storage
    return emit_results(args, fn(args.alpha, args.kappa, ansatz=args.ansatz))


def run_teacher_student(args):
    from .. import perceptron as P
    if args.weights == "spherical":
        if args.branch != "equilibrium":
            raise ValueError("branch applies to --weights binary only (spherical: one branch)")
        return emit_results(args, P.spherical_teacher_student(args.alpha))
    return emit_results(args, P.binary_teacher_student(args.alpha, branch=args.branch))


def run_at_line(args):
    from .. import perceptron as P
    fn = P.spherical_storage_at_line_point if args.weights == "spherical" else P.binary_storage_at_line_point
    r = fn(args.kappa)
    return emit_results(args, r, text=f"alpha_AT = {r.thermo['alpha_AT']!r} ({r.extra['kind']})")


def run_transition(args):
    from .. import perceptron as P
    return emit_results(args, P.binary_teacher_student_transition())
