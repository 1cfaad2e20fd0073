"""``statmech simulate``: run a learning algorithm on a fresh random instance.

Examples::

    statmech simulate stochastic-perceptron --N 1001 --alpha 0.55 --seed 1 --json
    statmech simulate metropolis --N 201 --alpha 0.3 --sweeps 2000
    statmech simulate perceptron-rule --N 501 --alpha 1.5 --teacher
    statmech simulate success-rate --N 1001 --alpha 0.5 0.6 0.7 --runs 10
    statmech simulate tcm-train --N 99 --K 3 --alpha 0.8 --method easgd --workers 4

The instance is ``random_binary_instance(N, alpha, seed=seed, teacher=...)`` (TCM:
``tcm_instance``); the algorithm gets the same seed.  Exit code 0 whether or not the
instance was solved (``solved`` is in the output).
"""
from __future__ import annotations

import time

from ..cli import emit, float_or_inf


def _common(p, alpha_nargs=None):
    p.add_argument("--N", type=int, default=1001, help="number of weights (odd; default 1001)")
    p.add_argument("--alpha", type=float_or_inf, default=0.5, nargs=alpha_nargs,
                   help="load P/N (default 0.5)")
    p.add_argument("--seed", type=int, default=0, help="seed of the instance and of the algorithm")
    p.add_argument("--teacher", action="store_true", help="labels from a random teacher (solvable instance)")
    p.add_argument("--json", action="store_true", help="JSON output")


def register(sub):
    p = sub.add_parser("simulate", help="run learning algorithms (stochastic perceptron, Metropolis, TCM) "
                                        "on random instances")
    ss = p.add_subparsers(dest="algorithm", metavar="ALGORITHM")
    ss.required = True

    q = ss.add_parser("stochastic-perceptron", help="stochastic perceptron (thesis Sec. 2.4)")
    _common(q)
    q.add_argument("--eta", type=float, default=None, help="learning rate (default 0.1 sqrt(N))")
    q.add_argument("--batch", type=int, default=None, help="minibatch size (default min(64, max(1, P//10)))")
    q.add_argument("--max-epochs", type=int, default=1000)
    q.add_argument("--gamma0", type=float, default=1.0, help="initial variance scale gamma (Eq. 2.59)")
    q.add_argument("--gamma-end", type=float, default=None, help="final gamma (default: gamma0, no annealing)")
    q.add_argument("--gamma-rate", type=float, default=0.99, help="per-epoch relaxation factor of gamma")
    q.set_defaults(func=_run_sp)

    q = ss.add_parser("metropolis", help="Metropolis simulated annealing for binary weights")
    _common(q)
    q.add_argument("--beta0", type=float, default=0.5)
    q.add_argument("--beta1", type=float, default=20.0)
    q.add_argument("--sweeps", type=int, default=1000)
    q.set_defaults(func=_run_simple, fn="metropolis_annealing")

    for name, fn in (("perceptron-rule", "perceptron_rule"), ("delta-rule", "delta_rule"),
                     ("clipped-hebb", "clipped_hebb")):
        q = ss.add_parser(name, help=fn.replace("_", " "))
        _common(q)
        if fn != "clipped_hebb":
            q.add_argument("--max-epochs", type=int, default=1000)
        q.set_defaults(func=_run_simple, fn=fn)

    q = ss.add_parser("success-rate", help="fraction of instances solved by the stochastic perceptron vs alpha, "
                                           "and the algorithmic capacity")
    _common(q, alpha_nargs="+")
    q.add_argument("--runs", type=int, default=10)
    q.add_argument("--max-epochs", type=int, default=1000)
    q.add_argument("--gamma0", type=float, default=1.0)
    q.add_argument("--gamma-end", type=float, default=None)
    q.add_argument("--gamma-rate", type=float, default=0.99)
    q.set_defaults(func=_run_rate)

    q = ss.add_parser("tcm-train", help="train a tree committee machine (GD, SGD or EASGD)")
    _common(q)
    q.add_argument("--K", type=int, default=3, help="hidden units (odd)")
    q.add_argument("--method", default="gd", help="gd, sgd or easgd")
    q.add_argument("--epochs", type=int, default=500)
    q.add_argument("--workers", type=int, default=2)
    q.add_argument("--coupling", type=float, default=0.2)
    q.set_defaults(func=_run_tcm, N=99)


def _instance(args):
    from ..simulate.algorithms import random_binary_instance
    return random_binary_instance(args.N, args.alpha, seed=args.seed, teacher=args.teacher)


def _run_sp(args):
    from ..simulate.algorithms import stochastic_perceptron
    X, y, _ = _instance(args)
    t0 = time.perf_counter()
    r = stochastic_perceptron(X, y, seed=args.seed, eta=args.eta, batch=args.batch, max_epochs=args.max_epochs,
                              gamma0=args.gamma0, gamma_end=args.gamma_end, gamma_rate=args.gamma_rate)
    out = {"N": args.N, "alpha": args.alpha, "P": len(y), "teacher": args.teacher, **r.summary(),
           "q_star": r.extra["q_star"], "status": r.extra["status"], "seconds": time.perf_counter() - t0}
    return emit(args, out)


def _run_simple(args):
    from ..simulate import algorithms as A
    X, y, _ = _instance(args)
    kw = {}
    if args.fn == "metropolis_annealing":
        kw = {"beta0": args.beta0, "beta1": args.beta1, "sweeps": args.sweeps}
    elif args.fn != "clipped_hebb":
        kw = {"max_epochs": args.max_epochs}
    t0 = time.perf_counter()
    r = getattr(A, args.fn)(X, y, seed=args.seed, **kw)
    out = {"N": args.N, "alpha": args.alpha, "P": len(y), "teacher": args.teacher, **r.summary(),
           "seconds": time.perf_counter() - t0}
    return emit(args, out)


def _run_rate(args):
    from ..simulate.algorithms import algorithmic_capacity, success_rate
    res = success_rate(args.alpha, args.N, args.runs, seed=args.seed, teacher=args.teacher,
                       progress=not args.json, max_epochs=args.max_epochs, gamma0=args.gamma0,
                       gamma_end=args.gamma_end, gamma_rate=args.gamma_rate)
    out = {"N": args.N, "alpha": res["alpha"], "successes": res["successes"], "trials": res["trials"],
           "p": res["p"], "p_err": res["p_err"]}
    try:
        cap = algorithmic_capacity(res["alpha"], res["successes"], res["trials"])
        out.update(alpha_c=cap.alpha_c, alpha_c_stderr=cap.stderr)
    except ValueError:
        out.update(alpha_c=None, alpha_c_stderr=None)
    return emit(args, out)


def _run_tcm(args):
    from ..simulate.tcm_paths import tcm_instance, tcm_train
    d = tcm_instance(args.N, args.K, args.alpha, seed=args.seed, teacher=args.teacher)
    t0 = time.perf_counter()
    r = tcm_train(d["patterns"], d["labels"], args.K, method=args.method, seed=args.seed, epochs=args.epochs,
                  workers=args.workers, coupling=args.coupling)
    out = {"N": args.N, "K": args.K, "alpha": args.alpha, "method": r.method, "solved": bool(r.solved),
           "errors": r.errors, "epochs": r.epochs, "seconds": time.perf_counter() - t0}
    return emit(args, out)
