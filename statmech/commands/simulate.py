"""``statmech simulate``: run a learning algorithm on a fresh random instance.

Examples::

    statmech simulate stochastic-perceptron --N 1001 --alpha 0.55 --seed 1 --json
    statmech simulate metropolis --N 201 --alpha 0.3 --sweeps 2000
    statmech simulate perceptron-rule --N 501 --alpha 1.5 --teacher
    statmech simulate success-rate --N 1001 --alpha 0.5 0.6 0.7 --runs 10
    statmech simulate tcm-train --N 99 --K 3 --alpha 0.8 --method easgd --workers 4

The instance is ``random_binary_instance(N, alpha, seed=seed, teacher=...)`` (TCM:
``tcm_instance``); the algorithm gets the same seed.  Exit code 0 whether or not the
instance was solved (``solved`` and ``converged`` are in the output).  Every ``--json`` record
follows the one schema of :func:`statmech.cli.emit_results`: the algorithm's result without
its weight vector and per-epoch history (their last values are ``final_<name>``), with the
instance (``N``, ``alpha``, ``P``, ``teacher``) and the wall time ``seconds``.
"""
from __future__ import annotations

import numbers
import time

from ..cli import emit_results, float_or_inf

# fields of a training result that are per weight or per epoch: summarised, not printed
_BULKY = ("weights", "history", "extra")


def _common(p, *, alpha_nargs=None, N=1001):
    p.add_argument("--N", type=int, default=N, metavar="N", help=f"number of weights (odd; default {N})")
    p.add_argument("--alpha", type=float_or_inf, default=0.5, nargs=alpha_nargs, metavar="ALPHA",
                   help="load P/N" + (", one or more values" if alpha_nargs else "") + " (default 0.5)")
    p.add_argument("--seed", type=int, default=0, metavar="SEED", help="seed of the instance and of the algorithm "
                                                                      "(default 0)")
    p.add_argument("--teacher", action="store_true", help="labels from a random teacher (solvable instance)")
    p.add_argument("--json", action="store_true", help="print one JSON record")


def _epochs(p, default=1000):
    p.add_argument("--max-epochs", type=int, default=default, metavar="EPOCHS",
                   help=f"epoch budget: stop unsolved after this many passes over the patterns (default {default})")


def _gamma(p):
    p.add_argument("--gamma0", type=float, default=1.0, metavar="GAMMA",
                   help="initial variance scale gamma of the stochastic perceptron loss (thesis Eq. 2.59; default 1)")
    p.add_argument("--gamma-end", type=float, default=None, metavar="GAMMA",
                   help="final gamma of the annealing (default: gamma0, no annealing)")
    p.add_argument("--gamma-rate", type=float, default=0.99, metavar="RATE",
                   help="per-epoch relaxation factor of gamma towards gamma-end (default 0.99)")


def register(sub):
    p = sub.add_parser("simulate", help="run learning algorithms (stochastic perceptron, Metropolis, TCM) "
                                        "on random instances")
    ss = p.add_subparsers(dest="simulate_command", metavar="COMMAND")
    ss.required = True

    q = ss.add_parser("stochastic-perceptron", help="stochastic perceptron (Tartaglione 2019, thesis Sec. 2.4)")
    _common(q)
    q.add_argument("--eta", type=float, default=None, metavar="ETA", help="learning rate (default 0.1 sqrt(N))")
    q.add_argument("--batch", type=int, default=None, metavar="BATCH",
                   help="minibatch size (default min(64, max(1, P//10)))")
    _epochs(q)
    _gamma(q)
    q.set_defaults(func=_run_sp)

    q = ss.add_parser("metropolis", help="Metropolis simulated annealing for binary weights")
    _common(q)
    q.add_argument("--beta0", type=float, default=0.5, metavar="BETA",
                   help="initial inverse temperature of the annealing (default 0.5)")
    q.add_argument("--beta1", type=float, default=20.0, metavar="BETA",
                   help="final inverse temperature, reached geometrically (default 20)")
    q.add_argument("--sweeps", type=int, default=1000, metavar="SWEEPS",
                   help="Monte-Carlo sweeps (N attempted flips each; default 1000)")
    q.set_defaults(func=_run_simple, fn="metropolis_annealing")

    q = ss.add_parser("perceptron-rule", help="the perceptron rule (Rosenblatt), online, until no error")
    _common(q)
    _epochs(q)
    q.set_defaults(func=_run_simple, fn="perceptron_rule")

    q = ss.add_parser("delta-rule", help="the Delta (Widrow-Hoff) rule, online gradient descent on the squared error")
    _common(q)
    _epochs(q)
    q.add_argument("--activation", choices=("tanh", "linear"), default="tanh", metavar="ACTIVATION",
                   help="output unit phi: tanh (default) or linear (ADALINE)")
    q.set_defaults(func=_run_simple, fn="delta_rule")

    q = ss.add_parser("clipped-hebb", help="the clipped Hebb rule w_i = sign(sum_mu sigma^mu xi_i^mu), one shot")
    _common(q)
    q.set_defaults(func=_run_simple, fn="clipped_hebb")

    q = ss.add_parser("success-rate", help="fraction of instances solved by the stochastic perceptron vs alpha, "
                                           "and the algorithmic capacity")
    _common(q, alpha_nargs="+")
    q.add_argument("--runs", type=int, default=10, metavar="RUNS", help="instances per alpha (default 10)")
    _epochs(q)
    _gamma(q)
    q.set_defaults(func=_run_rate)

    q = ss.add_parser("tcm-train", help="train a tree committee machine (GD, SGD or EASGD) until no training error")
    _common(q, N=99)
    q.add_argument("--K", type=int, default=3, metavar="K", help="hidden units (odd, dividing N; default 3)")
    q.add_argument("--method", choices=("gd", "sgd", "easgd"), default="gd", metavar="METHOD",
                   help="gd (full batch, default), sgd (minibatch) or easgd (elastic-averaging SGD)")
    q.add_argument("--epochs", type=int, default=500, metavar="EPOCHS", help="epoch budget (default 500)")
    q.add_argument("--workers", type=int, default=2, metavar="REPLICAS",
                   help="easgd: the number of coupled replicas (default 2)")
    q.add_argument("--coupling", type=float, default=0.2, metavar="COUPLING",
                   help="easgd: elastic coupling of each replica to their centre, in [0, 1] (default 0.2)")
    q.set_defaults(func=_run_tcm)


def _instance(args):
    from ..simulate.algorithms import random_binary_instance
    return random_binary_instance(args.N, args.alpha, seed=args.seed, teacher=args.teacher)


def _finals(r):
    """The last value of each per-epoch history, and the scalar extras of a training result."""
    out = {f"final_{k}": v[-1] for k, v in r.history.items() if len(v)}
    out.update({k: v for k, v in getattr(r, "extra", {}).items() if isinstance(v, (str, numbers.Number)) and not isinstance(v, complex)})
    return out


def _text(r):
    return f"{r.algorithm if hasattr(r, 'algorithm') else r.method}: solved = {bool(r.solved)}, " \
           f"errors = {int(r.errors)}, epochs = {int(r.epochs)}"


def _emit_training(args, r, P, seconds, **more):
    extra = {"N": args.N, "alpha": args.alpha, "P": P, "teacher": args.teacher, **more, **_finals(r),
             "seconds": seconds}
    return emit_results(args, r, text=_text(r), omit=_BULKY, extra=extra)


def _run_sp(args):
    from ..simulate.algorithms import stochastic_perceptron
    X, y, _ = _instance(args)
    t0 = time.perf_counter()
    r = stochastic_perceptron(X, y, seed=args.seed, eta=args.eta, batch=args.batch, max_epochs=args.max_epochs,
                              gamma0=args.gamma0, gamma_end=args.gamma_end, gamma_rate=args.gamma_rate)
    return _emit_training(args, r, len(y), time.perf_counter() - t0)


def _run_simple(args):
    from ..simulate import algorithms as A
    X, y, _ = _instance(args)
    kw = {}
    if args.fn == "metropolis_annealing":
        kw = {"beta0": args.beta0, "beta1": args.beta1, "sweeps": args.sweeps}
    elif args.fn != "clipped_hebb":
        kw = {"max_epochs": args.max_epochs}
    if args.fn == "delta_rule":
        kw["activation"] = args.activation
    t0 = time.perf_counter()
    r = getattr(A, args.fn)(X, y, seed=args.seed, **kw)
    return _emit_training(args, r, len(y), time.perf_counter() - t0)


def _run_rate(args):
    from ..simulate.algorithms import algorithmic_capacity, success_rate
    from ..result import flat
    res = success_rate(args.alpha, args.N, args.runs, seed=args.seed, teacher=args.teacher,
                       progress=not args.json, max_epochs=args.max_epochs, gamma0=args.gamma0,
                       gamma_end=args.gamma_end, gamma_rate=args.gamma_rate)
    try:
        cap = algorithmic_capacity(res["alpha"], res["successes"], res["trials"])
    except ValueError:      # no success or no failure: alpha_c is not identifiable from these counts
        cap = None
    lines = [f"alpha = {float(a):g}: {int(k)}/{int(n)} solved" for a, k, n in
             zip(res["alpha"], res["successes"], res["trials"])]
    lines.append("algorithmic capacity: " + (f"alpha_c = {cap.alpha_c:.4g} ± {cap.error:.2g}" if cap is not None
                                               else "not identifiable (every run succeeded, or every run failed)"))
    return emit_results(args, res, text="\n".join(lines),
                        extra={"N": args.N, "algorithmic_capacity": None if cap is None else flat(cap)},
                        null_reasons={"algorithmic_capacity": "alpha_c is not identifiable: every run succeeded "
                                                              "or every run failed",
                                      "width_stderr": "the Fisher information of the width degenerates (a "
                                                      "step-like transition); error is the profile-likelihood "
                                                      "half-width"})


def _run_tcm(args):
    from ..simulate.tcm_paths import tcm_instance, tcm_train
    d = tcm_instance(args.N, args.K, args.alpha, seed=args.seed, teacher=args.teacher)
    t0 = time.perf_counter()
    r = tcm_train(d["patterns"], d["labels"], args.K, method=args.method, seed=args.seed, epochs=args.epochs,
                  workers=args.workers, coupling=args.coupling)
    return _emit_training(args, r, len(d["labels"]), time.perf_counter() - t0, K=args.K)
