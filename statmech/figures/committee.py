"""Tree committee machine figures: capacity vs K (RS, 1RSB, ReLU) and the simulation check."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from . import save


def make(out_dir) -> list[Path]:
    import matplotlib.pyplot as plt

    from .. import committee as cm
    from ..simulate import tcm as sim

    out = Path(out_dir)
    paths = []

    # ---- alpha_c vs K
    fig, ax = plt.subplots(1, 2, figsize=(11, 4.2))
    Ks = np.arange(1, 26, 2)
    rs = np.array([cm.tcm_capacity(int(k)) for k in Ks])
    c = cm.rs_large_K_coefficient()
    ax[0].plot(Ks, rs, "o-", ms=3, label="sign, RS (Eq. 3.5)")
    ax[0].plot(Ks, c * np.sqrt(Ks), "--", lw=1, label=r"$\sqrt{72/\pi}\,\sqrt{K}$")
    k1 = [1, 3]
    a1 = [cm.tcm_capacity(k, "sign", "1rsb") for k in k1]
    ax[0].plot(k1, a1, "s", color="C3", label="sign, 1RSB")
    kq = [5, 9, 15]
    rq = [cm.tcm_capacity_1rsb_rqmc(k, log2_points=8) for k in kq]
    ax[0].errorbar(kq, [r.alpha_c for r in rq], [r.extra["stderr"] for r in rq], fmt="D", ms=4, color="C3",
                   mfc="none", label="sign, 1RSB (RQMC outer average)")
    Kmz = np.linspace(3, 25, 100)
    ax[0].plot(Kmz, cm.monasson_zecchina(Kmz), ":", color="C3", label=r"$(16/\pi)\sqrt{\ln K}$ (MZ, large K)")
    Kr = [2, 4, 6, 8]
    ar = [cm.tcm_capacity(k, "relu") for k in Kr]
    ax[0].plot(Kr, ar, "^-", color="C2", label="ReLU, RS")
    ax[0].axhline(cm.tcm_capacity(math.inf, "relu"), color="C2", lw=1, ls="--", label=r"ReLU RS, $K\to\infty$: $2\pi/(\pi-1)$")
    ax[0].axhline(cm.tcm_capacity(math.inf, "relu", "1rsb"), color="C2", lw=1, ls=":", label=r"ReLU 1RSB, $K\to\infty$")
    ax[0].set_xlabel("K (hidden units)")
    ax[0].set_ylabel(r"$\alpha_c$")
    ax[0].set_title("Tree committee machine: storage capacity")
    ax[0].legend(fontsize=7)
    Kb = np.unique(np.round(np.logspace(0, 6, 25)).astype(int) | 1)
    rb = np.array([cm.tcm_capacity(int(k)) for k in Kb])
    ax[1].semilogx(Kb, rb / np.sqrt(Kb), "o-", ms=3, label=r"RS $\alpha_c/\sqrt{K}$")
    ax[1].axhline(c, color="k", ls="--", lw=1, label=r"$\sqrt{72/\pi}=4.787$")
    ax[1].set_xlabel("K")
    ax[1].set_ylabel(r"$\alpha_c^{RS}/\sqrt{K}$")
    ax[1].set_title("large-K law of the RS capacity (sign units)")
    ax[1].legend(fontsize=8)
    paths.append(save(fig, out / "committee_capacity_vs_K.png"))

    # ---- simulation: fraction stored by least-action learning, K = 3
    fig, ax = plt.subplots(figsize=(6, 4.2))
    alphas = np.array([0.5, 1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0])
    for N, ni in ((45, 16), (90, 12)):
        r = sim.storage_fraction(alphas, K=3, N=N, n_instances=ni, max_sweeps=1000, seed=N, progress=True)
        ax.errorbar(alphas, r.fraction, r.stderr, marker="o", capsize=2, label=f"least action, N={N}")
    ax.axvline(cm.tcm_capacity(3), color="C3", ls="--", label=r"$\alpha_c^{RS}=4.025$")
    ax.axvline(cm.tcm_capacity(3, "sign", "1rsb"), color="C3", ls=":", label=r"$\alpha_c^{1RSB}\approx3.146$")
    ax.set_xlabel(r"$\alpha = P/N$")
    ax.set_ylabel("fraction of instances stored")
    ax.set_title("K = 3 tree committee machine (sign)")
    ax.legend(fontsize=8)
    paths.append(save(fig, out / "committee_simulation_K3.png"))
    return paths
