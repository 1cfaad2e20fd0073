"""Perceptron theory against finite-N simulation (simulation data from ``figures/data``, see DATASETS).

* ``perceptron_lp_capacity.png`` -- spherical storage: fraction of storable instances vs
  alpha (LP / least-distance programming) for several N at kappa = 0 (with Cover's exact
  finite-N curve) and kappa = 0.5, and the 50 % point vs 1/N extrapolated to alpha_c(kappa).
* ``perceptron_enumeration_entropy.png`` -- Ising perceptron by exhaustive enumeration:
  quenched log-count per weight vs alpha against the RS entropy, and the finite-N capacity
  vs 1/N against the Krauth-Mezard value.
* ``perceptron_sampling_teacher_student.png`` -- Gibbs learning: spherical R(alpha) by
  hit-and-run version-space sampling; Ising eps_g(alpha) by enumeration, with the
  first-order transition and the spinodal marked.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from . import legend_outside, save
from ._data import DataSpec, call, load

_LP = "statmech.simulate.lp:spherical_storage_lp"
_EN = "statmech.simulate.enumeration:binary_storage_enumeration"
_TS = "statmech.simulate.enumeration:binary_teacher_student_enumeration"
_VS = "statmech.simulate.version_space:spherical_teacher_student_sampling"
LP_SETUPS = {0.0: {25: 200, 50: 120, 100: 60}, 0.5: {50: 150, 100: 80, 200: 40}}
DATASETS = (
    DataSpec("perceptron_lp", "perceptron_simulation",
             "spherical storage: instance capacities P_c by LP / least-distance programming",
             tuple(call(_LP, N=N, n_instances=n, kappa=k, seed=2024, progress=False)
                   for k, sizes in LP_SETUPS.items() for N, n in sizes.items())),
    DataSpec("perceptron_enumeration", "perceptron_simulation",
             "Ising perceptron storage by exhaustive enumeration (Gaussian patterns N = 13, 17, 21; "
             "+-1 patterns N = 11 ... 23)",
             tuple(call(_EN, N=N, n_instances=80 if N < 21 else 40, alpha_max=0.8, seed=2024, dist="gaussian",
                        progress=False) for N in (13, 17, 21))
             + tuple(call(_EN, N=N, n_instances=300, alpha_max=2.5, seed=9, progress=False)
                     for N in (11, 13, 15, 17, 19, 21, 23)), small=(3,)),
    DataSpec("perceptron_teacher_student", "perceptron_simulation",
             "Gibbs learning: spherical version-space sampling (hit-and-run, N = 100) and Ising "
             "teacher-student enumeration (N = 15, 21)",
             (call(_VS, N=100, alpha=[0.5, 1.0, 2.0, 4.0], n_instances=4, n_sweeps=1500, seed=2024, progress=False),)
             + tuple(call(_TS, N=N, n_instances=60 if N < 21 else 30, alpha_max=2.0, seed=2024, dist="gaussian",
                          progress=False) for N in (15, 21)), small=(1,)),
)


def _lp_figure(out, th):
    import matplotlib.pyplot as plt
    from ..simulate import lp
    data = load("perceptron_lp")
    fig, axes = plt.subplots(1, 3, figsize=(14, 4.2))
    setups = LP_SETUPS
    colors = plt.cm.viridis(np.linspace(0.1, 0.8, 3))
    for ax, (kappa, sizes) in zip(axes[:2], setups.items()):
        samples = []
        for c, (N, n) in zip(colors, sizes.items()):
            s = data.pick(N=N, kappa=kappa)
            samples.append(s)
            a = np.arange(int(0.5 * N), int(3.0 * N) + 1) / N
            f, lo, hi = s.fraction(a)
            ax.plot(a, f, "-", color=c, lw=1.2, label=f"N = {N} ({n} inst.)")
            ax.fill_between(a, lo, hi, color=c, alpha=0.2, lw=0)
            if kappa == 0.0:
                ax.plot(a, lp.cover_probability(np.rint(a * N).astype(int), N), ":", color=c, lw=1.0)
        ac = float(th.gardner_capacity(kappa))
        ax.axvline(ac, color="k", ls="--", lw=0.8, label=rf"$\alpha_c({kappa:g}) = {ac:.4f}$")
        ax.set_xlim(0.5 if kappa else 1.0, 3.0 if kappa == 0 else 1.6)
        ax.set_xlabel(r"$\alpha = P/N$")
        ax.set_ylabel("fraction storable")
        ax.set_title(rf"spherical storage, $\kappa = {kappa:g}$" + (" (dotted: Cover)" if kappa == 0 else ""))
        ax.legend(fontsize=7)
        ex = lp.capacity_extrapolation(samples)
        Ns = np.array([s.N for s in samples], float)
        a50 = np.array([s.alpha_50() for s in samples])
        ref = ac if ac else 1.0
        ax3 = axes[2]
        m = "o" if kappa == 0 else "s"
        eb = ax3.errorbar(1 / Ns, a50[:, 0] / ref, a50[:, 1] / ref, fmt=m, ms=4, capsize=2,
                          label=rf"$\kappa={kappa:g}$: $\alpha_\infty = {ex.y_inf:.3f} \pm {ex.y_inf_err:.3f}$")
        xx = np.linspace(0, 1 / Ns.min() * 1.05, 50)
        ax3.plot(xx, (ex.y_inf + ex.coef[0] * xx) / ref, "-", lw=0.8, color=eb[0].get_color())
    axes[2].axhline(1.0, color="k", lw=0.6)
    axes[2].axhspan(0.98, 1.02, color="0.9", zorder=0, label=r"$\pm 2\,\%$")
    axes[2].set_xlabel("1/N")
    axes[2].set_ylabel(r"$\alpha_{50}(N)\,/\,\alpha_c(\kappa)$")
    axes[2].set_title(r"50 % point vs 1/N, extrapolated (line)")
    axes[2].legend(fontsize=7)
    return save(fig, out / "perceptron_lp_capacity.png")


def _two_panels(name):
    """The stored data set ``name`` and a figure with two panels side by side."""
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.8), layout="constrained")
    return load(name), fig, axes


def _enumeration_figure(out, th):
    from ..simulate.finite_size import extrapolate
    data, fig, axes = _two_panels("perceptron_enumeration")
    ax = axes[0]
    a = np.linspace(0.02, 0.95, 60)
    ax.plot(a, th.binary_storage(a).thermo["entropy"], "k-", lw=1.2, label="RS entropy")
    ax.axvline(th.binary_capacity(0.0), color="k", ls="--", lw=0.8, label=r"$\alpha_c = 0.8331$ (KM)")
    ax.plot([0, 1], [np.log(2), 0], "k:", lw=0.8, label=r"annealed $(1-\alpha)\ln 2$")
    for N, mk in [(13, "o"), (17, "s"), (21, "^")]:
        s = data.pick(N=N, dist="gaussian")
        alpha, sv, se, sat = s.entropy()
        k = (sat > 0.9) & (alpha > 0)
        ax.errorbar(alpha[k], sv[k], se[k], fmt=mk, ms=3.5, capsize=1.5, label=f"enumeration N = {N}")
    ax.set_xlabel(r"$\alpha$")
    ax.set_ylabel(r"$\langle \ln \mathcal{N}_{sol}\rangle / N$")
    ax.set_title(r"Ising perceptron, $\kappa = 0$ (Gaussian patterns)")
    ax.set_ylim(0, 0.72)
    ax.legend(fontsize=7)
    ax = axes[1]
    caps = {}
    for N in (11, 13, 15, 17, 19, 21, 23):   # +-1 patterns (Krauth-Opper setting, popcount path)
        s = data.pick(N=N, seed=9)
        caps[N] = s.mean_capacity()
    Ns = np.array(sorted(caps), float)
    v = np.array([caps[int(n)][0] for n in Ns])
    e = np.array([caps[int(n)][1] for n in Ns])
    big = Ns >= 15
    ex = extrapolate(Ns[big], v[big], e[big])
    ax.errorbar(1 / Ns, v, e, fmt="o", ms=4, capsize=2, label=r"$\langle P_c\rangle/N$ (enumeration, $\pm1$ patterns)")
    xx = np.linspace(0, 1 / 15 * 1.05, 50)
    ax.plot(xx, ex.y_inf + ex.coef[0] * xx, "-", lw=0.8,
            label=rf"fit $a + b/N$ ($N \geq 15$): $a = {ex.y_inf:.3f} \pm {ex.y_inf_err:.3f}$")
    w = 1 / e[Ns >= 17] ** 2
    plateau = np.sum(w * v[Ns >= 17]) / w.sum()
    ax.axhspan(plateau - w.sum() ** -0.5, plateau + w.sum() ** -0.5, xmin=0.0, xmax=1.0, color="C2", alpha=0.25,
               label=rf"weighted mean $N \geq 17$: ${plateau:.3f} \pm {w.sum() ** -0.5:.3f}$")
    ax.plot([0], [0.8330786], "k*", ms=9, label="Krauth-Mezard 0.8331")
    ax.annotate(r"RS $q\to1$ (Gardner-Derrida): $4/\pi = 1.273$", (0.02, 0.95), xycoords="axes fraction",
                fontsize=7, va="top")
    ax.set_xlabel("1/N")
    ax.set_ylabel("finite-N capacity")
    ax.set_title("Ising perceptron capacity vs size")
    legend_outside(ax, "below")
    return save(fig, out / "perceptron_enumeration_entropy.png")


def _teacher_student_figure(out, th):
    from ..simulate import enumeration as en
    data, fig, axes = _two_panels("perceptron_teacher_student")
    ax = axes[0]
    a = np.linspace(0.05, 6, 80)
    ax.plot(a, th.spherical_teacher_student(a).order_params["R"], "k-", lw=1.2, label="RS theory R")
    s = data.pick(N=100)
    ax.errorbar(s.alpha, s.R, s.R_err, fmt="o", ms=4, capsize=2, label="hit-and-run R, N = 100")
    ax.errorbar(s.alpha + 0.06, s.q, s.q_err, fmt="s", ms=3, capsize=2, mfc="none",
                label="student-student q (= R, Nishimori)")
    ax.set_xlabel(r"$\alpha$")
    ax.set_ylabel("overlap")
    ax.set_title("spherical teacher-student, Gibbs learning")
    ax.legend(fontsize=7)
    ax = axes[1]
    tr = th.binary_teacher_student_transition()
    a = np.linspace(0.05, 0.9999 * float(tr.alpha_spinodal), 80)
    poor = th.binary_teacher_student(a, branch="poor")
    ax.plot(a, poor.thermo["generalization_error"], "k-", lw=1.2, label="RS poor-generalization branch")
    ax.axvline(tr.alpha_c, color="r", ls="--", lw=0.8, label=rf"$\alpha_c = {tr.alpha_c:.4f}$")
    ax.axvline(tr.alpha_spinodal, color="b", ls=":", lw=0.8, label=rf"spinodal ${tr.alpha_spinodal:.4f}$")
    ax.plot([tr.alpha_c, 2.0], [0, 0], "k-", lw=1.2)
    for N, mk, c in [(15, "s", "C0"), (21, "o", "C1")]:
        e = data.pick(N=N)
        alpha, R, R_err, eps, eps_err, pp = e.gibbs()
        ax.errorbar(alpha[1:], eps[1:], eps_err[1:], fmt=mk, ms=3, capsize=1.5, color=c,
                    label=f"enumeration N = {N} (quenched)")
        _, _, eps_ann = e.gibbs_annealed()
        ax.plot(alpha[1:], eps_ann[1:], mk, ms=3.5, mfc="none", color=c, label=f"N = {N} ratio of averages")
        aa = np.linspace(0.05, 2.0, 100)
        ax.plot(aa, en.binary_teacher_student_annealed(N, aa)[1], "--", lw=0.8, color=c,
                label=f"N = {N} exact annealed")
    ax.set_xlabel(r"$\alpha$")
    ax.set_ylabel(r"$\varepsilon_g$ (Gibbs)")
    ax.set_title("Ising teacher-student, small N")
    ax.set_ylim(-0.02, 0.82)
    legend_outside(ax, "below", fontsize=6.5)
    return save(fig, out / "perceptron_sampling_teacher_student.png")


def make(out_dir):
    """Regenerate the perceptron theory-vs-simulation figures into ``out_dir``."""
    import matplotlib
    matplotlib.use("Agg")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    from .. import perceptron as th
    return [_lp_figure(out, th), _enumeration_figure(out, th), _teacher_student_figure(out, th)]
