"""Perceptron theory figures (public API of :mod:`statmech.perceptron` only).

* ``perceptron_capacity.png`` -- alpha_c(kappa): spherical (Gardner; RS-unstable part for
  kappa < 0 dashed, with its AT line), binary zero-entropy (Krauth-Mezard), binary RS q -> 1
  (Gardner-Derrida) and the AT line of the binary RS solution.
* ``perceptron_entropy.png`` -- typical entropy vs alpha for spherical and binary storage.
* ``perceptron_teacher_student.png`` -- R(alpha) and eps(alpha) for Gibbs learning with
  spherical and Ising weights, and the Ising entropy whose zero is the first-order
  transition; the transition and the spinodal marked.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from . import legend_outside, save


def _capacity(out):
    import matplotlib.pyplot as plt
    from .. import perceptron as P
    k = np.linspace(-1.0, 2.0, 61)
    ac = P.gardner_capacity(k)
    kb = np.linspace(0.0, 2.0, 21)
    fig, ax = plt.subplots(figsize=(5.6, 4.0))
    neg = k <= 0
    ax.plot(k[~neg], ac[~neg], "C0-", label="spherical (Gardner)")
    ax.plot(k[neg], ac[neg], "C0--", label="spherical, RS unstable (κ<0)")
    kat = np.linspace(-1.0, 0.0, 9)
    ax.plot(kat, P.spherical_storage_at_line(kat), "C2-.", label="spherical, AT line (RS unstable above)")
    ax.plot(kb, P.binary_capacity(kb), "C3-", label="binary, zero entropy (Krauth–Mézard)")
    kba = np.linspace(0.0, 2.0, 9)
    ax.plot(kba, P.binary_storage_at_line(kba), "C1-.", label="binary, AT line of the RS solution")
    ax.plot(kb, P.binary_capacity(kb, method="gardner_derrida"), "C3:", label="binary, RS q→1 (Gardner–Derrida)")
    ax.plot([0], [P.binary_capacity(0.0)], "C3o", ms=4)
    ax.annotate(f"α_KM = {P.binary_capacity(0.0):.10f}", (0, P.binary_capacity(0.0)), textcoords="offset points",
                xytext=(-6, -4), ha="right", va="top", fontsize=8, color="C3")
    ax.set_yscale("log")
    ax.set_xlabel("stability κ")
    ax.set_ylabel("capacity α_c")
    ax.set_title("Perceptron storage capacity")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3, which="both")
    return save(fig, out / "perceptron_capacity.png")


def _entropy(out):
    import matplotlib.pyplot as plt
    from .. import perceptron as P
    fig, ax = plt.subplots(1, 2, figsize=(10, 4.6), layout="constrained")
    for kappa, c in ((0.0, "C0"), (0.5, "C1")):
        ac = P.gardner_capacity(kappa)
        a = np.linspace(0.0, ac * 0.995, 40)
        r = P.spherical_storage(a, kappa)
        ax[0].plot(a, r.entropy, c + "-", label=f"κ={kappa:g}")
    kappa = -0.5
    ac = P.gardner_capacity(kappa)
    a = np.linspace(0.0, ac * 0.995, 50)
    r = P.spherical_storage(a, kappa)
    st = np.asarray(r.rs_stable, dtype=bool)
    ax[0].plot(a[st], r.entropy[st], "C2-", label="κ=-0.5")
    ax[0].plot(a[~st], r.entropy[~st], "C2--", label="κ=-0.5, beyond AT line")
    ax[0].set_xlabel("α")
    ax[0].set_ylabel("entropy (log fraction of the sphere)")
    ax[0].set_title("Spherical storage (RS)")
    legend_outside(ax[0], "below")
    ax[0].grid(alpha=0.3)
    for kappa, c in ((0.0, "C0"), (0.5, "C1")):
        agd = P.binary_capacity(kappa, method="gardner_derrida")
        akm = P.binary_capacity(kappa)
        a = np.sort(np.append(np.linspace(0.0, agd * 0.995, 40), akm))
        r = P.binary_storage(a, kappa)
        pos = a <= akm
        ax[1].plot(a[pos], r.entropy[pos], c + "-", label=f"κ={kappa:g}")
        ax[1].plot(a[~pos], r.entropy[~pos], c + ":", label=f"κ={kappa:g}, negative (unphysical)")
        ax[1].axvline(akm, color=c, lw=0.8, alpha=0.6)
    ax[1].axhline(0, color="k", lw=0.6)
    ax[1].set_ylim(-0.3, 0.75)
    ax[1].set_xlabel("α")
    ax[1].set_ylabel("entropy (1/N) log #solutions")
    ax[1].set_title("Binary storage (RS); α_c where entropy = 0")
    legend_outside(ax[1], "below")
    ax[1].grid(alpha=0.3)
    return save(fig, out / "perceptron_entropy.png")


def _teacher_student(out):
    import matplotlib.pyplot as plt
    from .. import perceptron as P
    tr = P.binary_teacher_student_transition()
    a_s = np.linspace(0.0, 6.0, 61)
    rs = P.spherical_teacher_student(a_s)
    a_p = np.linspace(0.0, tr.alpha_spinodal, 40)
    rp = P.binary_teacher_student(a_p, branch="poor")
    a_u = np.linspace(tr.alpha_spinodal, 0.3, 30)
    ru = P.binary_teacher_student(a_u, branch="unstable")
    fig, ax = plt.subplots(1, 3, figsize=(15, 5.0), layout="constrained")
    ax[0].plot(a_s, rs.R, "C0-", label="spherical")
    eq = a_p <= tr.alpha_c
    ax[0].plot(a_p[eq], rp.R[eq], "C3-", label="binary, poor generalization")
    ax[0].plot(a_p[~eq], rp.R[~eq], "C3--", label="binary, metastable")
    ax[0].plot(a_u, ru.R, "C3:", label="binary, unstable branch")
    ax[0].plot([tr.alpha_c, 6.0], [1, 1], "C3-", lw=2, label="binary, R = 1 (equilibrium)")
    ax[1].plot(a_s, rs.generalization_error, "C0-", label="spherical")
    a_big = np.linspace(2.5, 6.0, 20)
    ax[1].plot(a_big, P.spherical_teacher_student_asymptotic(a_big)["generalization_error"], "C0:",
               label=f"spherical, asymptotic {P.SPHERICAL_TS_ASYMPTOTIC_CONSTANT:.6f}/α")
    ax[1].plot(a_p[eq], rp.generalization_error[eq], "C3-", label="binary, poor generalization")
    ax[1].plot(a_p[~eq], rp.generalization_error[~eq], "C3--", label="binary, metastable")
    ax[1].plot([tr.alpha_c, 6.0], [0, 0], "C3-", lw=2, label="binary, ε = 0")
    ax[2].plot(a_p[eq], rp.entropy[eq], "C3-", label="binary, poor generalization")
    ax[2].plot(a_p[~eq], rp.entropy[~eq], "C3--", label="binary, metastable (s < 0)")
    ax[2].plot(a_u, ru.entropy, "C3:", label="binary, unstable branch")
    ax[2].plot([0, 6.0], [0, 0], "C3-", lw=2, alpha=0.4, label="binary, R = 1 state (s = 0)")
    ax[2].set_ylabel("entropy (1/N) log #students in the version space")
    ax[2].set_xlim(0, 2.0)
    ax[2].set_ylim(-0.15, 0.72)
    legend_outside(ax[2], "below")
    for a_ in ax:
        a_.axvline(tr.alpha_c, color="k", lw=0.8)
        a_.axvline(tr.alpha_spinodal, color="k", lw=0.8, ls="--")
        a_.set_xlabel("α")
        a_.grid(alpha=0.3)
    ax[0].text(tr.alpha_c - 0.05, 0.9, f"α_c={tr.alpha_c:.6f}", fontsize=8, ha="right")
    ax[0].text(tr.alpha_spinodal + 0.05, 0.55, f"α_sp={tr.alpha_spinodal:.6f}", fontsize=8, ha="left")
    ax[0].set_ylabel("teacher–student overlap R")
    ax[1].set_ylabel("generalization error ε = arccos(R)/π")
    ax[1].set_ylim(0, 0.52)
    ax[0].legend(fontsize=7, loc="lower right")
    ax[1].legend(fontsize=7)
    fig.suptitle("Gibbs learning (version space), RS")
    return save(fig, out / "perceptron_teacher_student.png")


def make(out_dir) -> list[Path]:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    return [_capacity(out), _entropy(out), _teacher_student(out)]
