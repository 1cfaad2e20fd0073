"""``statmech glm``: the perceptron family from a specification (ERM, Bayes-optimal, thresholds).

Examples::

    statmech glm erm --loss logistic --lam 0.1 --alpha 2 --noise 0.1 --json
    statmech glm erm --loss hinge --lam 1e-3 --alpha 1:10:10 --json
    statmech glm bayes --prior ising --alpha 1.0 --json
    statmech glm thresholds --prior ising --json

Every ``--json`` record follows the one schema of :func:`statmech.cli.emit_results`.
"""
from __future__ import annotations

import numpy as np

from ..cli import emit_results, float_or_inf

LOSSES = ("square", "logistic", "hinge", "squared_hinge", "exponential", "margin_counting")


def _alphas(text):
    """``A`` or ``start:stop:count`` (linear grid)."""
    parts = str(text).split(":")
    if len(parts) == 1:
        return float_or_inf(parts[0])
    if len(parts) != 3:
        raise ValueError(f"alpha must be a number or start:stop:count, got {text!r}")
    return np.linspace(float(parts[0]), float(parts[1]), int(parts[2]))


def _json(p):
    p.add_argument("--json", action="store_true", help="print one JSON record")


def register(sub):
    p = sub.add_parser("glm", help="generalized linear models from a specification: ERM, Bayes-optimal, thresholds")
    ps = p.add_subparsers(dest="glm_command", metavar="COMMAND")
    ps.required = True

    e = ps.add_parser("erm", help="RS saddle point of empirical risk minimisation with a ridge penalty")
    e.add_argument("--loss", choices=LOSSES, required=True, metavar="LOSS",
                   help=f"margin loss of u = y h: {', '.join(LOSSES)}")
    e.add_argument("--lam", type=float_or_inf, default=1.0, metavar="LAM", help="ridge coefficient lam > 0 (default 1)")
    e.add_argument("--alpha", required=True, metavar="ALPHA", help="load P/N, or START:STOP:COUNT (a linear grid)")
    e.add_argument("--noise", type=float_or_inf, default=0.0, metavar="P",
                   help="label-flip probability p of the sign teacher, 0 <= p < 1/2 (default 0)")
    e.add_argument("--kappa", type=float_or_inf, default=None, metavar="KAPPA",
                   help="margin kappa of the margin-counting loss theta(kappa - u)")
    e.add_argument("--prior", choices=("gaussian", "ising"), default="gaussian", metavar="PRIOR",
                   help="teacher prior: gaussian (default) or ising")
    _json(e)
    e.set_defaults(func=run_erm)

    b = ps.add_parser("bayes", help="Bayes-optimal inference (Nishimori RS) of a sign teacher")
    b.add_argument("--prior", choices=("gaussian", "ising", "spherical"), required=True, metavar="PRIOR",
                   help="teacher prior: gaussian, ising or spherical")
    b.add_argument("--alpha", required=True, metavar="ALPHA", help="load P/N, or START:STOP:COUNT (a linear grid)")
    b.add_argument("--noise", type=float_or_inf, default=0.0, metavar="P",
                   help="label-flip probability p, 0 <= p < 1/2 (default 0)")
    b.add_argument("--branch", choices=("equilibrium", "poor", "good", "unstable", "perfect"), default="equilibrium",
                   metavar="BRANCH", help="fixed point: equilibrium (default), poor, good, unstable or perfect")
    _json(b)
    b.set_defaults(func=run_bayes)

    t = ps.add_parser("thresholds", help="Bayes-optimal information-theoretic and algorithmic thresholds")
    t.add_argument("--prior", choices=("ising",), required=True, metavar="PRIOR",
                   help="the teacher's prior: ising (a Gaussian prior has no transition)")
    t.add_argument("--noise", type=float_or_inf, default=0.0, metavar="P",
                   help="label-flip probability p, 0 <= p < 1/2 (default 0)")
    _json(t)
    t.set_defaults(func=run_thresholds)


def run_erm(args):
    from .. import glm
    m = glm.Model(prior=args.prior, channel=glm.sign(args.noise), loss=args.loss, penalty=glm.ridge(args.lam),
                  kappa=args.kappa)
    r = glm.erm(m, _alphas(args.alpha))
    text = None if np.ndim(r.alpha) else (f"generalization_error = {r.generalization_error:.15g}  (m = {r.m:.12g}, "
                                          f"q = {r.q:.12g}, V = {r.V:.12g})")
    return emit_results(args, r, text)


def run_bayes(args):
    from .. import glm
    r = glm.bayes_optimal(args.prior, glm.sign(args.noise), _alphas(args.alpha), branch=args.branch)
    text = None if np.ndim(r.alpha) else f"q = {r.q:.15g}, generalization_error = {r.generalization_error:.15g}"
    reasons = {"q_hat": "the perfect state q = rho has q_hat = +inf"} if np.any(np.isinf(r.q_hat)) else None
    return emit_results(args, r, text, null_reasons=reasons)


def run_thresholds(args):
    from .. import glm
    r = glm.thresholds(prior=args.prior, channel=glm.sign(args.noise))
    return emit_results(args, r, f"alpha_it = {r.alpha_it:.13f}, alpha_alg = {r.alpha_alg:.13f}",
                        null_reasons={k: "does not apply to a Bayes-optimal (prior, channel) pair"
                                      for k in ("alpha_sat_unsat", "alpha_gardner_derrida", "alpha_interpolation",
                                                "zero_set")})
