"""Generalized linear models from a specification (``statmech.glm``; theory live, simulation points
from ``figures/data/glm_learning_curves.json``).

* ``glm_learning_curves.png`` -- eps_g(alpha) of square, logistic and hinge ERM (sign teacher,
  noiseless and with 10 % label noise) at three ridge coefficients, the Bayes-optimal bound, and
  finite-N ERM simulations (extrapolated in 1/N) at lam = 0.1.
* ``glm_double_descent.png`` -- ridge regression on sign labels: eps_g(alpha) for small lam and the
  double-descent peak traced in lam by the continuation engine until it disappears (a fold).
* ``glm_ising_transition.png`` -- Bayes-optimal inference of an Ising teacher: the free entropies of
  the three fixed points (poor, unstable, perfect) and the first-order and spinodal thresholds.
* ``glm_regularisation_path.png`` -- logistic ERM with 10 % label noise: eps_g along the
  regularisation path at several alpha, the optimal lam marked, and lam_opt(alpha).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from . import legend_outside, save
from ._data import DataSpec, call, load

_SIM = "statmech.simulate.glm:glm_simulation_point"
SIM_ALPHAS = (0.5, 1.0, 2.0, 4.0, 8.0)
SIM_LAM = 0.1
DATASETS = (
    DataSpec("glm_learning_curves", "glm",
             "ERM at finite N (exact minimisers, N = 100, 200, 400, 20 instances each, extrapolated in 1/N) for "
             "square, logistic and hinge losses with ridge lam = 0.1, sign teacher with label noise 0 and 0.1",
             tuple(call(_SIM, loss=loss, lam=SIM_LAM, noise=p, alpha=a, Ns=[100, 200, 400], instances=20, seed=7)
                   for loss in ("square", "logistic", "hinge") for p in (0.0, 0.1) for a in SIM_ALPHAS),
             small=(0,)),
)
PARTS = ("_learning_curves", "_double_descent", "_ising", "_path")


def _plt():
    import matplotlib.pyplot as plt
    return plt


def _learning_curves(out):
    from .. import glm
    plt = _plt()
    alphas = np.geomspace(0.2, 10.0, 120)
    try:
        sim = load("glm_learning_curves")
    except FileNotFoundError:
        sim = None
    fig, axes = plt.subplots(2, 3, figsize=(12.5, 7.2), sharex=True, sharey="row")
    for row, p in enumerate((0.0, 0.1)):
        bo = glm.bayes_optimal("gaussian", glm.sign(p), alphas)
        for col, loss in enumerate(("square", "logistic", "hinge")):
            ax = axes[row, col]
            for lam, c in zip((1e-3, 0.1, 1.0), ("C0", "C1", "C2")):
                r = glm.learning_curve(glm.Model(loss=loss, penalty=glm.ridge(lam), noise=p), alphas)
                ax.plot(alphas, r.generalization_error, color=c, label=f"ERM, lam = {lam:g}")
            ax.plot(alphas, bo.generalization_error, "k--", lw=1.2, label="Bayes-optimal")
            if sim is not None:
                pts = [sim.pick(loss=loss, noise=p, alpha=a) for a in SIM_ALPHAS]
                ax.errorbar(SIM_ALPHAS, [s.extrapolated["generalization_error"] for s in pts],
                            yerr=[s.extrapolated_error["generalization_error"] for s in pts], fmt="o", color="C1",
                            ms=4, capsize=2, label="simulation, lam = 0.1 (N -> inf)")
            ax.set_xscale("log")
            ax.set_title(f"{loss}, label noise {p:g}")
            if row == 1:
                ax.set_xlabel(r"$\alpha = P/N$")
            if col == 0:
                ax.set_ylabel(r"$\varepsilon_g$ (noiseless test labels)")
            ax.grid(alpha=0.3)
    axes[0, 0].legend(fontsize=8)
    fig.suptitle("Learning curves of ERM on a sign teacher, with the Bayes-optimal bound (RS)")
    fig.tight_layout()
    return [save(fig, Path(out) / "glm_learning_curves.png")]


def _double_descent(out):
    from .. import glm
    plt = _plt()
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4.2))
    alphas = np.concatenate([np.linspace(0.05, 0.95, 80), np.linspace(0.95, 1.05, 81), np.linspace(1.05, 4, 80)])
    for lam in (1e-4, 1e-3, 1e-2, 1e-1):
        r = glm.erm(glm.Model(loss="square", penalty=glm.ridge(lam)), alphas)
        a1.plot(alphas, r.generalization_error, label=f"lam = {lam:g}")
    line = glm.advanced.ridge_peak_line(0.0, 1e-5, 1.0)
    a1.plot(line["alpha"], line["eps_g"], "k:", lw=1.5, label="the peak (continuation in lam)")
    a1.set_xlabel(r"$\alpha$")
    a1.set_ylabel(r"$\varepsilon_g$")
    a1.set_title("ridge regression on sign labels: double descent")
    a1.legend(fontsize=8)
    a2.semilogx(line["lam"], line["alpha"], "C3")
    a2.axvline(line["lam_fold"], color="k", ls="--", lw=1)
    a2.set_xlabel(r"$\lambda$")
    a2.set_ylabel(r"$\alpha$ of the peak")
    a2.set_title(f"the peak ends at lam = {line['lam_fold']:.4g} (fold)")
    for ax in (a1, a2):
        ax.grid(alpha=0.3)
    fig.tight_layout()
    return [save(fig, Path(out) / "glm_double_descent.png")]


def _ising(out):
    from .. import glm
    plt = _plt()
    br = glm.advanced.bayes_branches("ising", "sign")
    tr = glm.bayes_transition("ising", "sign")
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 5.0), layout="constrained")
    st = br["stable"]
    cut = np.argmin(st) if not st.all() else st.size       # the poor branch ends at the first fold
    a1.plot(br["alpha"][:cut], br["free_entropy"][:cut], "C0", label="poor (stable)")
    a1.plot(br["alpha"][cut:], br["free_entropy"][cut:], "C3--", label="unstable")
    a = np.linspace(0.0, 2.0, 5)
    a1.plot(a, np.full_like(a, -np.log(2.0)), "C2", label="perfect (q = 1)")
    for x, nm, ls in ((tr.alpha_it, r"$\alpha_{IT}$", ":"), (tr.alpha_alg, r"$\alpha_{alg}$", "-.")):
        a1.axvline(x, color="k", ls=ls, lw=1, label=f"{nm} = {x:.6f}")
    a1.set_xlim(0, 2)
    a1.set_ylim(-0.72, 0.0)
    a1.set_xlabel(r"$\alpha$")
    a1.set_ylabel("free entropy f")
    a1.set_title("Ising teacher, Bayes-optimal: the three fixed points")
    legend_outside(a1, "below")
    al = np.linspace(0.02, 2.0, 200)
    eq = glm.bayes_optimal("ising", "sign", al)
    a2.plot(al, eq.generalization_error, "C0", label="equilibrium (Bayes-optimal)")
    poor = glm.bayes_optimal("ising", "sign", al[al < tr.alpha_alg], branch="poor")
    a2.plot(al[al < tr.alpha_alg], poor.generalization_error, "C0:", label="poor branch (AMP)")
    gs = glm.bayes_optimal("gaussian", "sign", al)
    a2.plot(al, gs.generalization_error, "C1", label="Gaussian prior")
    a2.set_xlabel(r"$\alpha$")
    a2.set_ylabel(r"$\varepsilon_g$")
    legend_outside(a2, "below")
    for ax in (a1, a2):
        ax.grid(alpha=0.3)
    return [save(fig, Path(out) / "glm_ising_transition.png")]


def _path(out):
    from .. import glm
    plt = _plt()
    m = glm.Model(loss="logistic", penalty=glm.ridge(1.0), noise=0.1)
    lams = np.geomspace(30.0, 1e-3, 90)
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4.2))
    for a, c in zip((1.0, 2.0, 5.0), ("C0", "C1", "C2")):
        r = glm.regularisation_path(m, a, lams)
        a1.semilogx(lams, r.generalization_error, color=c, label=fr"$\alpha$ = {a:g}")
        best = glm.optimal_lam(m, a)
        a1.plot([best.params["penalty_lam"]], [best.generalization_error], "o", color=c)
    a1.set_xlabel(r"$\lambda$")
    a1.set_ylabel(r"$\varepsilon_g$")
    a1.set_title("logistic ERM, 10% label noise: regularisation paths")
    a1.legend(fontsize=8)
    oc = glm.advanced.optimal_lam_curve(m, np.geomspace(0.5, 10, 12))
    a2.loglog(oc["alpha"], oc["lam"], "o-")
    a2.set_xlabel(r"$\alpha$")
    a2.set_ylabel(r"optimal $\lambda$")
    for ax in (a1, a2):
        ax.grid(alpha=0.3, which="both")
    fig.tight_layout()
    return [save(fig, Path(out) / "glm_regularisation_path.png")]


def make(out_dir):
    return [p for part in PARTS for p in globals()[part](out_dir)]
