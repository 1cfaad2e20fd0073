"""``statmech scm``: soft committee machines at high temperature (Oostwal, Straat & Biehl 2019)."""
from __future__ import annotations

from ..cli import emit, float_or_inf

_ACT = ("erf", "relu", "linear")


def register(sub):
    p = sub.add_parser("scm", help="soft committee machines: transitions, equilibria, learning curves, Monte Carlo")
    s = p.add_subparsers(dest="what", metavar="WHAT")
    s.required = True
    t = s.add_parser("transitions", help="alpha_s, alpha_c, alpha_d and the order of the specialization transition")
    t.add_argument("--K", type=float_or_inf, nargs="+", required=True, help="hidden units (real > 1, or inf)")
    t.add_argument("--activation", choices=_ACT, default="erf")
    t.add_argument("--method", choices=("auto", "continuation", "direct"), default="auto")
    t.add_argument("--json", action="store_true")
    t.set_defaults(func=_transitions)
    e = s.add_parser("equilibria", help="all local minima of beta f at (alpha, K) with their stability")
    e.add_argument("--alpha", type=float, required=True)
    e.add_argument("--K", type=float_or_inf, required=True)
    e.add_argument("--activation", choices=_ACT, default="erf")
    e.add_argument("--json", action="store_true")
    e.set_defaults(func=_equilibria)
    f = s.add_parser("free-energy", help="site-symmetric beta f, eps_g and s at (alpha, K, R, S, C)")
    for name in ("alpha", "R", "S", "C"):
        f.add_argument(f"--{name}", type=float, required=True)
    f.add_argument("--K", type=float_or_inf, required=True)
    f.add_argument("--activation", choices=_ACT, default="erf")
    f.add_argument("--json", action="store_true")
    f.set_defaults(func=_free_energy)
    c = s.add_parser("curve", help="learning curve: every branch over an alpha grid")
    c.add_argument("--K", type=float, required=True)
    c.add_argument("--activation", choices=_ACT, default="erf")
    c.add_argument("--alpha-max", type=float, default=100.0)
    c.add_argument("--n", type=int, default=101, help="number of alpha values from 0 to --alpha-max")
    c.add_argument("--json", action="store_true")
    c.set_defaults(func=_curve)
    m = s.add_parser("mc", help="Monte Carlo of the high-temperature Gibbs measure (integer K)")
    m.add_argument("--alpha", type=float, required=True)
    m.add_argument("--K", type=int, default=2)
    m.add_argument("--N", type=int, default=200)
    m.add_argument("--activation", choices=_ACT, default="erf")
    m.add_argument("--chains", type=int, default=16)
    m.add_argument("--sweeps", type=int, default=300)
    m.add_argument("--seed", type=int, default=0)
    m.add_argument("--json", action="store_true")
    m.set_defaults(func=_mc)


def _transitions(args):
    from .. import scm
    rows = []
    for K in args.K:
        tr = scm.transitions(K, args.activation, method=args.method)
        rows.append({"K": K, "alpha_s": tr.alpha_s, "alpha_c": tr.alpha_c, "alpha_d": tr.alpha_d,
                     "order": tr.order, "solver": tr.details.get("solver")})
    text = "\n".join(f"K={r['K']:g}  alpha_s={r['alpha_s']}  alpha_c={r['alpha_c']}  alpha_d={r['alpha_d']}  "
                     f"order={r['order']}  ({r['solver']})" for r in rows)
    reasons = {"alpha_d": "the unspecialized minimum never loses stability (alpha_d = inf)"}
    if len(rows) == 1:  # one K: a flat record {"K", "alpha_s", "alpha_c", "alpha_d", "order", ...}
        return emit(args, {"activation": args.activation, **rows[0]}, text, null_reasons=reasons)
    return emit(args, {"activation": args.activation, "transitions": rows}, text, null_reasons=reasons)


def _equilibria(args):
    from .. import scm
    eq = scm.equilibria(args.alpha, args.K, args.activation)
    rows = [{"branch": p.branch, "R": p.R, "S": p.S, "C": p.C, "free_energy": p.free_energy,
             "generalization_error": p.generalization_error, "site_symmetric_stable": p.site_symmetric_stable,
             "full_space_stable": p.full_space_stable,
             "hessian_eigenvalues": p.hessian_eigenvalues} for p in eq]
    text = "\n".join(f"{r['branch']:>17}: R={r['R']:.10g} S={r['S']:.10g} C={r['C']:.10g} beta_f={r['free_energy']:.12g} "
                     f"eps_g={r['generalization_error']:.10g} full-space stable={r['full_space_stable']}" for r in rows)
    return emit(args, {"alpha": args.alpha, "K": args.K, "activation": args.activation, "minima": rows}, text)


def _free_energy(args):
    from .. import scm
    fe = scm.free_energy(args.alpha, args.K, args.R, args.S, args.C, args.activation, derivatives=True)
    return emit(args, {"free_energy": fe.value, "generalization_error": fe.generalization_error,
                       "entropy": fe.entropy, "gradient": fe.gradient, "hessian": fe.hessian})


def _curve(args):
    import numpy as np
    from .. import scm
    from ..errors import check_int
    n = check_int("n", args.n, 2)
    lc = scm.learning_curve(args.K, args.activation, np.linspace(0.0, args.alpha_max, n))
    data = {"K": args.K, "activation": args.activation, "alpha": lc.alpha,
            "branches": {k: {"exists": b.exists, "stable": b.stable, "R": b.R, "S": b.S, "C": b.C,
                             "generalization_error": b.generalization_error, "free_energy": b.free_energy}
                         for k, b in lc.branches.items()},
            "equilibrium": lc.equilibrium}
    lines = ["alpha  branch  R  S  C  eps_g"]
    eq = {k: np.ma.filled(v, np.nan) if k != "branch" else v for k, v in lc.equilibrium.items()}
    for i, a in enumerate(lc.alpha):
        lines.append(f"{a:.6g}  {eq['branch'][i]}  {eq['R'][i]:.8g}  {eq['S'][i]:.8g}  "
                     f"{eq['C'][i]:.8g}  {eq['generalization_error'][i]:.8g}")
    return emit(args, data, "\n".join(lines))


def _mc(args):
    from ..simulate.scm_mc import gibbs_scm
    r = gibbs_scm(args.alpha, args.K, args.activation, N=args.N, n_chains=args.chains, n_sweeps=args.sweeps,
                  seed=args.seed, progress=not args.json)
    return emit(args, {"alpha": args.alpha, "K": args.K, "N": args.N, "R": r.R, "R_err": r.R_err, "S": r.S,
                       "S_err": r.S_err, "C": r.C, "C_err": r.C_err, "generalization_error": r.generalization_error,
                       "generalization_error_err": r.generalization_error_err, "acceptance": r.acceptance})
