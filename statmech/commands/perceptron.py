"""``statmech perceptron``: capacities, storage and teacher-student saddle points.

Examples::

    statmech perceptron capacity --kappa 0.5 --json
    statmech perceptron capacity --kappa -1 --ansatz frsb --json
    statmech perceptron capacity --weights binary --method gardner_derrida
    statmech perceptron storage --alpha 1.2 --kappa 0.0 --weights spherical --json
    statmech perceptron teacher-student --alpha 1.0 --weights binary --branch poor --json
    statmech perceptron transition --json
"""
from __future__ import annotations

from ..cli import emit, emit_result, float_or_inf


def register(sub):
    p = sub.add_parser("perceptron", help="perceptron theory: capacities, storage, teacher-student (RS)")
    ps = p.add_subparsers(dest="perceptron_command", metavar="SUBCOMMAND")
    ps.required = True

    c = ps.add_parser("capacity", help="storage capacity alpha_c(kappa)")
    c.add_argument("--kappa", type=float_or_inf, default=0.0, help="stability kappa (default 0)")
    c.add_argument("--weights", choices=("spherical", "binary"), default="spherical")
    c.add_argument("--method", choices=("zero_entropy", "gardner_derrida"), default="zero_entropy",
                   help="binary weights only: zero RS entropy (default, exact) or RS q -> 1")
    c.add_argument("--ansatz", choices=("rs", "1rsb", "frsb"), default="rs",
                   help="spherical weights: replica ansatz of the SAT/UNSAT line (default rs)")
    c.add_argument("--json", action="store_true", help="print JSON")
    c.set_defaults(func=run_capacity)

    s = ps.add_parser("storage", help="RS saddle point of the storage problem at (alpha, kappa)")
    s.add_argument("--alpha", type=float_or_inf, required=True)
    s.add_argument("--kappa", type=float_or_inf, default=0.0)
    s.add_argument("--weights", choices=("spherical", "binary"), default="spherical")
    s.add_argument("--json", action="store_true")
    s.set_defaults(func=run_storage)

    t = ps.add_parser("teacher-student", help="Gibbs learning of a teacher of the same kind")
    t.add_argument("--alpha", type=float_or_inf, required=True)
    t.add_argument("--weights", choices=("spherical", "binary"), default="spherical")
    t.add_argument("--branch", choices=("equilibrium", "poor", "perfect", "unstable"), default="equilibrium",
                   help="binary weights only (default: equilibrium)")
    t.add_argument("--json", action="store_true")
    t.set_defaults(func=run_teacher_student)

    r = ps.add_parser("transition", help="binary teacher-student: first-order transition and spinodal")
    r.add_argument("--json", action="store_true")
    r.set_defaults(func=run_transition)


def _summary(res):
    d = {**res.params, **res.order_params, **res.thermo,
         "converged": res.converged, "residual": res.residual, "iterations": res.iterations,
         "replicon": res.replicon, "hessian_eigenvalues": res.hessian_eigenvalues}
    if "branch" in res.extra:
        d["branch"] = res.extra["branch"]
    return d


def run_capacity(args):
    from .. import perceptron as P
    if args.weights == "spherical":
        if args.method != "zero_entropy":
            raise ValueError("method applies to --weights binary only")
        r = P.gardner_capacity_point(args.kappa, args.ansatz)
        a = float(r.alpha_c)
        d = {"alpha": a, "alpha_c": a, "converged": r.converged, "residual": r.residual, "replicon": r.replicon,
             **r.order_params, **{k: r.extra[k] for k in ("error", "alpha_K") if k in r.extra}}
        return emit_result(args, d, r, text=f"alpha_c = {a:.15g} ({r.ansatz})")
    if args.ansatz != "rs":
        raise ValueError("ansatz applies to --weights spherical only (binary: rs)")
    r = P.binary_capacity_point(args.kappa, method=args.method)
    a = float(r.alpha_c)
    return emit_result(args, {"alpha_c": a, "replicon": r.replicon}, r, text=f"alpha_c = {a:.15g}")


def run_storage(args):
    from .. import perceptron as P
    fn = P.spherical_storage if args.weights == "spherical" else P.binary_storage
    res = fn(args.alpha, args.kappa)
    return emit_result(args, _summary(res), res)


def run_teacher_student(args):
    from .. import perceptron as P
    if args.weights == "spherical":
        res = P.spherical_teacher_student(args.alpha)
    else:
        res = P.binary_teacher_student(args.alpha, branch=args.branch)
    return emit_result(args, _summary(res), res)


def run_transition(args):
    from .. import perceptron as P
    tr = P.binary_teacher_student_transition()
    return emit(args, tr.to_dict())
