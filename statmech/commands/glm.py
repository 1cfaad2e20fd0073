"""``statmech glm``: the perceptron family from a specification (ERM, Bayes-optimal, thresholds).

Examples::

    statmech glm erm --loss logistic --lam 0.1 --alpha 2 --noise 0.1 --json
    statmech glm erm --loss hinge --lam 1e-3 --alpha 1:10:10 --json
    statmech glm bayes --prior ising --alpha 1.0 --json
    statmech glm thresholds --prior ising --json
"""
from __future__ import annotations

import numpy as np

from ..cli import emit, emit_result, float_or_inf

LOSSES = ("square", "logistic", "hinge", "squared_hinge", "exponential", "margin_counting")


def _alphas(text):
    """``A`` or ``start:stop:count`` (linear grid)."""
    parts = str(text).split(":")
    if len(parts) == 1:
        return float_or_inf(parts[0])
    if len(parts) != 3:
        raise ValueError(f"alpha must be a number or start:stop:count, got {text!r}")
    return np.linspace(float(parts[0]), float(parts[1]), int(parts[2]))


def register(sub):
    p = sub.add_parser("glm", help="generalized linear models from a specification: ERM, Bayes-optimal, thresholds")
    ps = p.add_subparsers(dest="glm_command", metavar="SUBCOMMAND")
    ps.required = True

    e = ps.add_parser("erm", help="RS saddle point of empirical risk minimisation with a ridge penalty")
    e.add_argument("--loss", choices=LOSSES, required=True)
    e.add_argument("--lam", type=float_or_inf, default=1.0, help="ridge coefficient (default 1)")
    e.add_argument("--alpha", required=True, help="load P/N, or start:stop:count")
    e.add_argument("--noise", type=float_or_inf, default=0.0, help="label-flip probability of the sign teacher")
    e.add_argument("--kappa", type=float_or_inf, default=None, help="margin of the margin-counting loss")
    e.add_argument("--prior", choices=("gaussian", "ising"), default="gaussian", help="teacher prior")
    e.add_argument("--json", action="store_true")
    e.set_defaults(func=run_erm)

    b = ps.add_parser("bayes", help="Bayes-optimal inference (Nishimori RS) of a sign teacher")
    b.add_argument("--prior", choices=("gaussian", "ising", "spherical"), required=True)
    b.add_argument("--alpha", required=True, help="load P/N, or start:stop:count")
    b.add_argument("--noise", type=float_or_inf, default=0.0, help="label-flip probability")
    b.add_argument("--branch", choices=("equilibrium", "poor", "good", "unstable", "perfect"), default="equilibrium")
    b.add_argument("--json", action="store_true")
    b.set_defaults(func=run_bayes)

    t = ps.add_parser("thresholds", help="Bayes-optimal information-theoretic and algorithmic thresholds")
    t.add_argument("--prior", choices=("ising",), required=True,
                   help="the teacher's prior (a Gaussian prior has no transition)")
    t.add_argument("--noise", type=float_or_inf, default=0.0, help="label-flip probability")
    t.add_argument("--json", action="store_true")
    t.set_defaults(func=run_thresholds)


def run_erm(args):
    from .. import glm
    m = glm.Model(prior=args.prior, channel=glm.sign(args.noise), loss=args.loss, penalty=glm.ridge(args.lam),
                  kappa=args.kappa)
    r = glm.erm(m, _alphas(args.alpha))
    d = {k: getattr(r, k) for k in ("alpha", "m", "q", "V", "m_hat", "q_hat", "V_hat", "generalization_error",
                                    "test_error", "training_error", "training_loss", "free_energy", "replicon",
                                    "converged", "residual", "iterations")}
    text = None if np.ndim(r.alpha) else (f"generalization_error = {r.generalization_error:.15g}  (m = {r.m:.12g}, "
                                          f"q = {r.q:.12g}, V = {r.V:.12g})")
    return emit_result(args, d, r, text)


def run_bayes(args):
    from .. import glm
    r = glm.bayes_optimal(args.prior, glm.sign(args.noise), _alphas(args.alpha), branch=args.branch)
    d = {k: getattr(r, k) for k in ("alpha", "q", "q_hat", "free_entropy", "generalization_error", "gibbs_error",
                                    "mse", "branch", "replicon", "converged", "residual", "iterations")}
    text = None if np.ndim(r.alpha) else f"q = {r.q:.15g}, generalization_error = {r.generalization_error:.15g}"
    return emit_result(args, d, r, text)


def run_thresholds(args):
    from .. import glm
    r = glm.thresholds(prior=args.prior, channel=glm.sign(args.noise))
    d = {"alpha_it": r.alpha_it, "alpha_alg": r.alpha_alg}
    return emit(args, d, f"alpha_it = {r.alpha_it:.13f}, alpha_alg = {r.alpha_alg:.13f}")
