"""``statmech scm``: soft committee machines at high temperature (Oostwal, Straat & Biehl 2019).

Examples::

    statmech scm transitions --K 5 --activation erf --json
    statmech scm equilibria --alpha 1e4 --K 5 --json
    statmech scm curve --K 5 --alpha-max 100 --n 101 --json
    statmech scm large-alpha --K 5 --json

Every ``--json`` record of transitions, equilibria, large-alpha, free-energy, curve and mc follows the one
schema of :func:`statmech.cli.emit_results` (``command``, the result's fields and ``converged``, ``ansatz``,
``error`` ...; several results under ``results``).
"""
from __future__ import annotations

from ..cli import emit, emit_results, float_or_inf

_ACT = ("erf", "relu", "linear")


def _act(p):
    p.add_argument("--activation", choices=_ACT, default="erf", metavar="ACTIVATION",
                   help=f"hidden-unit activation g: {', '.join(_ACT)} (default erf)")


def _json(p):
    p.add_argument("--json", action="store_true", help="print one JSON record (the schema of every subcommand)")


def register(sub):
    p = sub.add_parser("scm", help="soft committee machines: transitions, equilibria, learning curves, Monte Carlo")
    s = p.add_subparsers(dest="what", metavar="COMMAND")
    s.required = True
    t = s.add_parser("transitions", help="alpha_s, alpha_c, alpha_d and the order of the specialization transition")
    t.add_argument("--K", type=float_or_inf, nargs="+", required=True, metavar="K",
                   help="hidden units (real > 1 up to 1e12, or inf); several values give one record each")
    _act(t)
    t.add_argument("--method", choices=("auto", "continuation", "direct"), default="auto", metavar="METHOD",
                   help="auto (default: direct solver, Landau reduction where weakly first order), direct or "
                        "continuation (the continuation engine)")
    _json(t)
    t.set_defaults(func=_transitions)
    e = s.add_parser("equilibria", help="all local minima of beta f at (alpha, K) with their stability")
    e.add_argument("--alpha", type=float, required=True, metavar="ALPHA", help="load alpha = beta P / (K N), 0 to 1e100")
    e.add_argument("--K", type=float_or_inf, required=True, metavar="K", help="hidden units (2 to 1e15, or inf)")
    _act(e)
    _json(e)
    e.set_defaults(func=_equilibria)
    la = s.add_parser("large-alpha", help="large-alpha asymptotics of the specialized minimum")
    la.add_argument("--K", type=float_or_inf, required=True, metavar="K", help="hidden units (real > 1, or inf)")
    _act(la)
    _json(la)
    la.set_defaults(func=_large_alpha)
    f = s.add_parser("free-energy", help="site-symmetric beta f, eps_g and s at (alpha, K, R, S, C)")
    f.add_argument("--alpha", type=float, required=True, metavar="ALPHA", help="load alpha = beta P / (K N)")
    f.add_argument("--R", type=float, required=True, metavar="R", help="student-teacher overlap R_ii, in (-1, 1)")
    f.add_argument("--S", type=float, required=True, metavar="S",
                   help="student-teacher overlap R_ij (i != j), in (-1, 1); at K = inf the scaled sigma = K S")
    f.add_argument("--C", type=float, required=True, metavar="C",
                   help="student-student overlap Q_ij (i != j), in (-1, 1); at K = inf the scaled gamma = K C")
    f.add_argument("--K", type=float_or_inf, required=True, metavar="K", help="hidden units (real > 1, or inf)")
    _act(f)
    _json(f)
    f.set_defaults(func=_free_energy)
    c = s.add_parser("curve", help="learning curve: every branch over an alpha grid")
    c.add_argument("--K", type=float_or_inf, required=True, metavar="K", help="hidden units (2 to 1e15, or inf)")
    _act(c)
    c.add_argument("--alpha-max", type=float, default=100.0, metavar="ALPHA",
                   help="largest alpha of the grid (default 100)")
    c.add_argument("--n", type=int, default=101, metavar="N", help="number of alpha values from 0 to --alpha-max")
    _json(c)
    c.set_defaults(func=_curve)
    m = s.add_parser("mc", help="Monte Carlo of the high-temperature Gibbs measure (integer K)")
    m.add_argument("--alpha", type=float, required=True, metavar="ALPHA", help="load alpha = beta P / (K N)")
    m.add_argument("--K", type=int, default=2, metavar="K", help="hidden units (integer >= 1, default 2)")
    m.add_argument("--N", type=int, default=200, metavar="N", help="input dimension (default 200)")
    _act(m)
    m.add_argument("--chains", type=int, default=16, metavar="CHAINS", help="independent chains (default 16)")
    m.add_argument("--sweeps", type=int, default=300, metavar="SWEEPS", help="sweeps per chain (default 300)")
    m.add_argument("--seed", type=int, default=0, metavar="SEED", help="random seed (default 0)")
    _json(m)
    m.set_defaults(func=_mc)
    o = s.add_parser("online", help="online SGD: integrate the order-parameter ODEs (Saad & Solla), with the plateau")
    _online_common(o)
    o.add_argument("--t-max", type=float, required=True, metavar="ALPHA_MAX", help="last alpha = steps/N")
    o.add_argument("--n", type=int, default=31, metavar="N_ALPHA",
                   help="output alphas: 0 and N_ALPHA log-spaced values up to ALPHA_MAX (default 31)")
    o.add_argument("--q0", type=float, default=0.2, metavar="Q0", help="initial Q_ii (Q_ik = 0; default 0.2)")
    o.add_argument("--r0", type=float, default=1e-3, metavar="R0",
                   help="scale of the random initial R_in = R0 z_in, z ~ N(0, 1) (default 1e-3)")
    o.add_argument("--seed", type=int, default=0, metavar="SEED", help="seed of the initial R (default 0)")
    o.add_argument("--rtol", type=float, default=1e-10, metavar="RTOL",
                   help="relative tolerance of the DOP853 integrator (default 1e-10)")
    o.set_defaults(func=_online)
    op = s.add_parser("online-plateau", help="online SGD: the symmetric plateau fixed point, its stability and escape rate")
    _online_common(op)
    op.set_defaults(func=_online_plateau)
    oa = s.add_parser("online-asymptotics", help="online SGD: lr_max, lr_opt and the optimal decay rate at the perfect solution")
    oa.add_argument("--K", type=int, required=True, metavar="K", help="student hidden units")
    oa.add_argument("--M", type=int, required=True, metavar="M", help="teacher hidden units")
    oa.add_argument("--activation", choices=_ACT, default="erf", metavar="ACTIVATION",
                    help="hidden-unit activation g: " + ", ".join(_ACT) + " (default erf)")
    oa.add_argument("--convention", choices=("saad-solla", "normalized"), default="saad-solla",
                    metavar="CONVENTION", help="output scale: saad-solla (sum of g) or normalized (K^-1/2 sum of g)")
    oa.add_argument("--lr", type=float, default=None, metavar="LR", help="also print the eigenvalues at this learning rate")
    oa.add_argument("--json", action="store_true", help="print one JSON object (the result record)")
    oa.set_defaults(func=_online_asymptotics)


def _online_common(p):
    p.add_argument("--K", type=int, required=True, metavar="K", help="student hidden units")
    p.add_argument("--M", type=int, required=True, metavar="M", help="teacher hidden units")
    p.add_argument("--activation", choices=_ACT, default="erf", metavar="ACTIVATION",
                    help="hidden-unit activation g: " + ", ".join(_ACT) + " (default erf)")
    p.add_argument("--lr", type=float, required=True, metavar="LR", help="learning rate (SGD step lr/N)")
    p.add_argument("--convention", choices=("saad-solla", "normalized"), default="saad-solla",
                   metavar="CONVENTION", help="output scale: saad-solla (sum of g) or normalized (K^-1/2 sum of g)")
    p.add_argument("--noise", type=float, default=0.0, metavar="SIGMA", help="std of the teacher's output noise")
    p.add_argument("--json", action="store_true", help="print one JSON object (the result record)")


def _transitions(args):
    from .. import scm
    rs = [scm.transitions(K, args.activation, method=args.method) for K in args.K]
    text = "\n".join(f"K={r.K:g}  alpha_s={r.alpha_s!r}  alpha_c={r.alpha_c!r}  alpha_d={r.alpha_d!r}  "
                     f"order={r.order}  ({r.details.get('solver')})" for r in rs)
    # the details without the entries that do not exist (no anti-specialized fold: None)
    # K and alpha_d as floats (to_dict has already made inf None): emit writes inf as null with its reason
    extra = [{"K": r.K, "alpha_d": r.alpha_d, "solver": r.details.get("solver"),
              "details": {k: v for k, v in r.details.items() if v is not None}} for r in rs]
    reasons = {"alpha_d": "the unspecialized minimum never loses stability (alpha_d = inf)"}
    if len(rs) == 1:  # one K: one flat record {"K", "alpha_s", "alpha_c", "alpha_d", "order", ...}
        return emit_results(args, rs[0], text, extra=extra[0], null_reasons=reasons)
    return emit_results(args, rs, text, extra=extra, null_reasons=reasons)


def _equilibria(args):
    import sys
    from .. import scm
    eq = scm.equilibria(args.alpha, args.K, args.activation)
    if not eq:  # equilibria raises rather than return (), but an empty answer is never printed as one
        print(f"statmech: scm equilibria: no minimum found at alpha={args.alpha}, K={args.K}", file=sys.stderr)
        return 1
    extra = [{"K": args.K, "branch": p.branch, "one_minus_R": p.one_minus_R, "site_symmetric_stable": p.site_symmetric_stable,
              "full_space_stable": p.full_space_stable, "hessian_eigenvalues": p.hessian_eigenvalues} for p in eq]
    text = "\n".join(f"{p.branch:>17}: R={p.R:.10g} S={p.S:.10g} C={p.C:.10g} beta_f={p.free_energy:.12g} "
                     f"eps_g={p.generalization_error:.10g} full-space stable={p.full_space_stable}" for p in eq)
    return emit_results(args, list(eq), text, extra=extra)


def _large_alpha(args):
    from .. import scm
    r = scm.large_alpha(args.K, args.activation)
    text = (f"beta f = {'(1/2)' if args.K == float('inf') else f'({args.K:g}/2)'} ln alpha + {r.free_energy_constant!r}"
            f" + {r.correction!r} alpha^-{r.correction_power:g} + ...\n"
            f"1 - R = {r.one_minus_R!r} / alpha, S = {r.S!r} / alpha, C = {r.C!r} / alpha, "
            f"eps_g = {r.generalization_error!r} / alpha")
    return emit_results(args, r, text, extra={"K": args.K})


def _free_energy(args):
    from .. import scm
    fe = scm.free_energy(args.alpha, args.K, args.R, args.S, args.C, args.activation, derivatives=True)
    text = (f"beta f = {fe.value!r}  (eps_g = {fe.generalization_error!r}, s = {fe.entropy!r})\n"
            f"gradient (R, S, C) = {fe.gradient.tolist()}")
    return emit_results(args, fe, text, extra={"alpha": args.alpha, "K": args.K, "R": args.R, "S": args.S, "C": args.C,
                                                 "activation": args.activation})


def _curve(args):
    import numpy as np
    from .. import scm
    from ..errors import check_int
    n = check_int("n", args.n, 2)
    lc = scm.learning_curve(args.K, args.activation, np.linspace(0.0, args.alpha_max, n))
    # masked entries (a branch that does not exist at an alpha) go out as JSON null
    extra = {"K": args.K, "branches": {k: {"exists": b.exists, "stable": b.stable, "R": b.R, "S": b.S, "C": b.C,
                              "generalization_error": b.generalization_error, "free_energy": b.free_energy}
                          for k, b in lc.branches.items()},
             "equilibrium": lc.equilibrium}
    lines = ["alpha  branch  R  S  C  eps_g"]
    eq = {k: np.ma.filled(v, np.nan) if k != "branch" else v for k, v in lc.equilibrium.items()}
    for i, a in enumerate(lc.alpha):
        lines.append(f"{a:.6g}  {eq['branch'][i]}  {eq['R'][i]:.8g}  {eq['S'][i]:.8g}  "
                     f"{eq['C'][i]:.8g}  {eq['generalization_error'][i]:.8g}")
    return emit_results(args, lc, "\n".join(lines), extra=extra)


def _mc(args):
    from ..simulate.scm_mc import gibbs_scm
    r = gibbs_scm(args.alpha, args.K, args.activation, N=args.N, n_chains=args.chains, n_sweeps=args.sweeps,
                  seed=args.seed, progress=not args.json)
    return emit_results(args, r)


def _online(args):
    import numpy as np
    from .. import scm
    from ..errors import check_int
    n = check_int("n", args.n, 1)
    K, M = check_int("K", args.K, 1), check_int("M", args.M, 1)
    z = np.random.default_rng(args.seed).standard_normal((K, M))
    alphas = np.concatenate([[0.0], np.geomspace(args.t_max * 1e-3, args.t_max, n)]) if args.t_max > 0 else [0.0]
    tr = scm.online(K, M, args.activation, args.lr, alphas, Q0=args.q0 * np.eye(K), R0=args.r0 * z,
                    convention=args.convention, noise=args.noise, rtol=args.rtol)
    lines = [f"online SGD ODEs, K={K} M={M} {args.activation} lr={args.lr:g} ({args.convention}); "
             f"{tr.method}, {tr.iterations} steps, eps_g error <= {tr.error:.1e}"]
    p = tr.plateau
    extra = {"plateau_passed": p is not None}
    if p is not None:
        extra.update(plateau_height=p.height, plateau_entry=p.entry, plateau_exit=p.exit, plateau_tol=p.tol,
                     escape_rate=p.escape_rate, on_plateau_at_end=p.exit is None)
        lines.append(f"plateau: eps_g = {p.height:.10g}, entered at alpha = {p.entry:.6g}, "
                     + (f"left at alpha = {p.exit:.6g}" if p.exit is not None else "not left by the last alpha")
                     + f" (escape rate {p.escape_rate:.6g}; band {p.tol:g})")
    lines.append("alpha  eps_g")
    lines += [f"{a:.6g}  {e:.10g}" for a, e in zip(tr.alphas, tr.eps_g)]
    return emit_results(args, tr, "\n".join(lines), extra=extra, omit=("plateau",),
                        null_reasons={"plateau_exit": "the trajectory is still on the plateau at the last alpha"})


def _online_plateau(args):
    from .. import scm
    p = scm.online_plateau(args.K, args.M, args.activation, args.lr, convention=args.convention, noise=args.noise)
    lines = []
    for r in ([p] + ([p.identical_students] if p.identical_students is not None else [])):
        lines.append(f"{r.kind}: Q={r.Q:.15g} C={r.C:.15g} R={r.R:.15g} eps_g={r.eps_g:.15g} "
                     f"escape rate={r.escape_rate:.12g} ({r.escape_mode})")
        lines += [f"   eigenvalue {e.real:+.12g}{e.imag:+.3g}j  x{m}  {c}"
                  for e, m, c in zip(r.eigenvalues, r.multiplicities, r.components)]
    extra = {}
    if p.identical_students is not None:
        from ..result import flat
        extra["identical_students"] = {k: v for k, v in flat(p.identical_students).items() if k != "identical_students"}
    return emit_results(args, p, "\n".join(lines), extra=extra, omit=("identical_students",),
                        null_reasons={"escape_rate": "ReLU identical students: the flow is not differentiable "
                                                     "across Q = C"})


def _online_asymptotics(args):
    from .. import scm
    a = scm.online_asymptotics(args.K, args.M, args.activation, convention=args.convention)
    text = (f"lr_max = {a.lr_max:.15g}\nlr_opt = {a.lr_opt:.15g} (slowest rate {a.rate_opt:.15g}, limited by the "
            f"{a.limited_by})\nfor eps_g: lr_opt = {a.lr_opt_eps:.15g}, rate {a.rate_opt_eps:.15g}")
    extra = {}
    if args.lr is not None:
        ev = a.eigenvalues(args.lr)
        extra = {"lr": args.lr, "eigenvalues": ev}
        text += f"\neigenvalues at lr = {args.lr:g}: " + " ".join(f"{e:.10g}" for e in ev)
    return emit_results(args, a, text, extra=extra,
                        null_reasons={"lr_max": "the linearisation is stable at every learning rate"})
