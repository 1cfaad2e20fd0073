"""statmech.glm: specification-built RS solvers against the scipy way and the hand-written perceptron.

Baseline (the way the peer codes solve these equations): damped fixed-point iteration (damping 0.5)
of the RS equations, every Gaussian average by ``scipy.integrate.quad`` split at 0 (epsabs 1e-12,
epsrel 1e-12), every proximal operator by ``scipy.optimize.minimize_scalar`` (Brent, xtol 1e-12),
stopped when the relative change of (m, q, V) is below 1e-10.  statmech: Newton with the exact
Jacobian on tanh--sinh rules, one numba call per curve.

The rows "spec vs hand-written" time a model written as a specification and give, in the notes, the
package's hand-written perceptron solver of the same model and the factor spec / hand-written.
"""
from __future__ import annotations

import math
import sys
import time
from pathlib import Path

import numpy as np
from scipy import integrate, optimize, special

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import best_time  # noqa: E402

from statmech import glm  # noqa: E402
from statmech import perceptron as P  # noqa: E402

QUAD = dict(epsabs=1e-12, epsrel=1e-12, limit=200)


def _G(x):
    return math.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)


def _H(x):
    return 0.5 * special.erfc(x / math.sqrt(2))


def _E(f):
    return sum(integrate.quad(lambda t: _G(t) * f(t), a, b, **QUAD)[0] for a, b in ((-np.inf, 0.0), (0.0, np.inf)))


def base_erm(loss, alpha, lam, p, tol=1e-10, damping=0.5, x0=(0.1, 0.1, 1.0)):
    """The scipy implementation of the ERM equations (sign teacher with flip p, ridge)."""
    if loss == "logistic":
        ell = lambda u: np.logaddexp(0.0, -u)                           # noqa: E731
        d2 = lambda u: float(special.expit(u) * special.expit(-u))      # noqa: E731
    else:  # hinge: prox minimised numerically as well (the baseline does not use the closed form)
        ell = lambda u: max(0.0, 1.0 - u)                               # noqa: E731
        d2 = lambda u: 0.0                                              # noqa: E731

    def prox(a, V):
        r = optimize.minimize_scalar(lambda u: ell(u) + (u - a) ** 2 / (2 * V), bracket=(a - 1.0, a + V + 1.0),
                                     tol=1e-12)
        return r.x

    m, q, V = x0
    for it in range(10000):
        kap = m / math.sqrt(q)
        D = 1 - m * m / q

        def parts(xi):
            a = math.sqrt(q) * xi
            u = prox(a, V)
            g = (u - a) / V
            if loss == "hinge":
                gp = -1.0 / V if 1 - V < a < 1 else 0.0
            else:
                gp = (1.0 / (1 + V * d2(u)) - 1.0) / V
            Z = p + (1 - 2 * p) * _H(-kap * xi / math.sqrt(D))
            dZ = (1 - 2 * p) * _G(kap * xi / math.sqrt(D)) / math.sqrt(D)
            return Z, dZ, g, gp
        mh = 2 * alpha * _E(lambda t: (lambda z: z[1] * z[2])(parts(t)))
        qh = 2 * alpha * _E(lambda t: (lambda z: z[0] * z[2] ** 2)(parts(t)))
        Vh = -2 * alpha * _E(lambda t: (lambda z: z[0] * z[3])(parts(t)))
        Vn = 1.0 / (lam + Vh)
        mn = mh * Vn
        qn = (mh * mh + qh) * Vn * Vn
        ch = max(abs(mn - m) / abs(mn), abs(qn - q) / qn, abs(Vn - V) / Vn)
        m, q, V = (1 - damping) * m + damping * mn, (1 - damping) * q + damping * qn, \
            (1 - damping) * V + damping * Vn
        if ch < tol:
            return m, q, V, it + 1
    return m, q, V, it + 1


def run():
    rows = []

    def rel(a, b):
        return abs(a - b) / max(abs(b), 1e-300)

    # ---- single ERM points against the scipy baseline (one baseline run each: seconds to minutes)
    for loss, a, lam, p in (("logistic", 2.0, 0.1, 0.1), ("hinge", 2.0, 0.1, 0.0)):
        model = glm.Model(loss=loss, penalty=glm.ridge(lam), noise=p)
        r = glm.erm(model, a)
        ts = best_time(lambda: glm.erm(model, a), repeat=5)
        t0 = time.perf_counter()
        bm, bq, bV, its = base_erm(loss, a, lam, p)
        tb = time.perf_counter() - t0
        rows.append({"name": f"{loss} ERM RS point (alpha={a}, lam={lam}, p={p}): m, q, V",
                     "statmech_s": ts, "baseline_s": tb, "ratio": tb / ts,
                     "rel_diff": max(rel(bm, r.m), rel(bq, r.q), rel(bV, r.V)),
                     "notes": f"statmech: cold solve from small alpha ({r.iterations} Newton steps); "
                              f"baseline: {its} damped iterations of quad + minimize_scalar"})
    # ---- learning curves
    model = glm.Model(loss="logistic", penalty=glm.ridge(0.1), noise=0.1)
    al = np.linspace(0.5, 5.0, 1000)
    t0 = time.process_time()
    c = glm.learning_curve(model, al)
    tc = time.process_time() - t0
    ts = best_time(lambda: glm.learning_curve(model, al), repeat=3, min_time=0.0)
    t0 = time.perf_counter()
    bm, bq, bV, its = base_erm("logistic", 2.0, 0.1, 0.1)
    tb1 = time.perf_counter() - t0
    rows.append({"name": "logistic ERM learning curve, 1000 alphas in [0.5, 5] (lam=0.1, p=0.1)",
                 "statmech_s": ts, "baseline_s": 1000 * tb1, "ratio": 1000 * tb1 / ts,
                 "rel_diff": rel(bq, float(glm.erm(model, 2.0).q)),
                 "notes": f"{int(np.sum(c.iterations))} Newton steps in all; CPU {tc:.2f} s on the first call; "
                          "baseline: 1000 x one cold damped-iteration point (timed at alpha = 2)"})
    # ---- spec vs hand-written perceptron solvers (same model)
    pairs = [
        ("Bayes-optimal Gaussian prior, sign channel (alpha=1) vs spherical_teacher_student",
         lambda: glm.bayes_optimal("gaussian", "sign", 1.0), lambda: P.spherical_teacher_student(1.0),
         lambda: glm.bayes_optimal("gaussian", "sign", 1.0).q, lambda: P.spherical_teacher_student(1.0).R),
        ("Bayes-optimal Ising prior, poor branch (alpha=1) vs binary_teacher_student",
         lambda: glm.bayes_optimal("ising", "sign", 1.0, branch="poor"),
         lambda: P.binary_teacher_student(1.0, "poor"),
         lambda: glm.bayes_optimal("ising", "sign", 1.0, branch="poor").q,
         lambda: P.binary_teacher_student(1.0, "poor").R),
    ]
    sto = glm.Model(channel="random", loss=glm.margin_counting(0.0), penalty="spherical")
    pairs.append(("Gibbs T=0 spherical storage spec (alpha=1) vs spherical_storage",
                  lambda: glm.gibbs(sto, 1.0), lambda: P.spherical_storage(1.0),
                  lambda: glm.gibbs(sto, 1.0).q, lambda: P.spherical_storage(1.0).q))
    bst = glm.Model(channel="random", loss=glm.margin_counting(0.0), penalty="ising")
    pairs.append(("Gibbs T=0 Ising storage spec (alpha=0.6) vs binary_storage",
                  lambda: glm.gibbs(bst, 0.6), lambda: P.binary_storage(0.6),
                  lambda: glm.gibbs(bst, 0.6).q, lambda: P.binary_storage(0.6).q))
    for name, fs, fh, vs, vh in pairs:
        ts = best_time(fs, repeat=5)
        th = best_time(fh, repeat=5)
        rows.append({"name": name, "statmech_s": ts, "baseline_s": None, "ratio": None, "rel_diff": rel(vs(), vh()),
                     "notes": f"the hand-written perceptron solver of the same model: {th * 1e3:.3g} ms; "
                              f"spec / hand-written = {ts / th:.1f} (goal <= 2); rel. difference of the results"})
    return rows


if __name__ == "__main__":
    for r in run():
        print(r)
