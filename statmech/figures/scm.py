"""Soft committee machine figures (Oostwal, Straat & Biehl 2019, Figs. 2-5, and the transitions vs K)."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np


def _branches(ax, lc, key, colors=None, labels=True):
    colors = colors or {"unspecialized": "k", "specialized": "C0", "anti-specialized": "C3"}
    for name, br in lc.branches.items():
        y = getattr(br, key)
        st = np.where(br.exists & br.stable, y, np.nan)
        un = np.where(br.exists & ~br.stable, y, np.nan)
        ax.plot(lc.alpha, st, "-", color=colors[name], label=f"{name}" if labels else None)
        ax.plot(lc.alpha, un, ":", color=colors[name], lw=1)


def _rs(ax, lc, title):
    colors = {"unspecialized": "k", "specialized": "C0", "anti-specialized": "C3"}
    for name, br in lc.branches.items():
        for key, ls in (("R", "-"), ("S", "--")):
            y = getattr(br, key)
            ax.plot(lc.alpha, np.where(br.exists & br.stable, y, np.nan), ls, color=colors[name],
                    label=f"{key} {name}")
            ax.plot(lc.alpha, np.where(br.exists & ~br.stable, y, np.nan), ls, color=colors[name], lw=0.6, alpha=0.5)
    ax.set_xlabel(r"$\alpha$")
    ax.set_ylabel("R (solid), S (dashed)")
    ax.set_title(title, fontsize=9)


def _marks(ax, tr):
    for a, ls, lab in ((tr.alpha_s, ":", r"$\alpha_s$"), (tr.alpha_c, "--", r"$\alpha_c$"), (tr.alpha_d, "-.", r"$\alpha_d$")):
        if a is not None:
            ax.axvline(a, color="0.5", ls=ls, lw=0.8, label=f"{lab} = {a:.4f}")


def _fig_pair(act, Ks, amax, fname, out_dir, title):
    import matplotlib.pyplot as plt
    from .. import scm
    from . import legend_outside, save
    fig, axes = plt.subplots(len(Ks), 2, figsize=(13, 3.8 * len(Ks)), layout="constrained")
    for row, K in zip(axes, Ks):
        alphas = np.linspace(0.0, amax, 801)
        lc = scm.learning_curve(K, act, alphas)
        tr = scm.transitions(K, act)
        _rs(row[0], lc, f"{title}, K = {K}: order parameters (thin: unstable)")
        _marks(row[0], tr)
        legend_outside(row[0], "right", fontsize=6)
        _branches(row[1], lc, "generalization_error")
        _marks(row[1], tr)
        row[1].set_xlabel(r"$\alpha$")
        row[1].set_ylabel(r"$\epsilon_g$")
        row[1].set_yscale("log")
        legend_outside(row[1], "right", fontsize=6)
        row[1].set_title(f"{title}, K = {K}: learning curves (order {tr.order})", fontsize=9)
    return save(fig, Path(out_dir) / fname)


def make(out_dir):
    import matplotlib.pyplot as plt
    from .. import scm
    from . import legend_outside, save
    out_dir = Path(out_dir)
    paths = [_fig_pair("erf", (2, 5), 100.0, "scm_erf_learning_curves.png", out_dir, "erf (Oostwal et al. 2019, Fig. 2)"),
             _fig_pair("relu", (2, 10), 15.0, "scm_relu_learning_curves.png", out_dir, "ReLU (Oostwal et al. 2019, Fig. 3)")]

    # Fig. 4: ReLU K -> infinity
    fig, ax = plt.subplots(1, 2, figsize=(10, 3.6))
    Rg = np.concatenate([-np.geomspace(0.999, 1e-3, 300), np.geomspace(1e-3, 0.999, 300)])
    b = scm.advanced.infinite_K_branch(Rg, "relu")
    for sgn, c, lab in ((1, "C0", "R > 0"), (-1, "C3", "R < 0")):
        m = np.sign(b["R"]) == sgn
        ax[0].plot(b["alpha"][m], b["R"][m], color=c, label=lab)
        ax[1].plot(b["alpha"][m], b["generalization_error"][m], color=c, ls="-" if sgn > 0 else "--", label=lab)
    ax[0].plot([0, 2 * math.pi], [0, 0], "k", label="R = 0 (plateau)")
    ax[1].plot([0, 2 * math.pi], [0.25 - 0.5 / math.pi] * 2, "k", label=r"$1/4 - 1/(2\pi)$")
    for a in ax:
        a.axvline(2 * math.pi, color="0.5", ls="--", lw=0.8)
        a.set_xlim(0, 40)
        a.set_xlabel(r"$\alpha$")
        a.legend(fontsize=8)
    ax[0].set_ylabel("R")
    ax[1].set_ylabel(r"$\epsilon_g$")
    ax[0].set_title(r"ReLU, $K\to\infty$ (Oostwal et al. 2019, Fig. 4): $\alpha_c = 2\pi$", fontsize=9)
    ax[1].set_title("both specialized minima generalize identically", fontsize=9)
    fig.tight_layout()
    paths.append(save(fig, out_dir / "scm_relu_K_infinity.png"))

    # Fig. 5: C(alpha)
    fig, ax = plt.subplots(1, 2, figsize=(13, 3.8), layout="constrained")
    for a, act, K, amax in ((ax[0], "erf", 5, 80.0), (ax[1], "relu", 10, 12.0)):
        lc = scm.learning_curve(K, act, np.linspace(0.0, amax, 801))
        _branches(a, lc, "C")
        _marks(a, scm.transitions(K, act))
        a.axhline(0, color="0.8", lw=0.6)
        a.set_xlabel(r"$\alpha$")
        a.set_ylabel("C")
        a.set_title(f"{act}, K = {K}: student-student overlap C\n(Oostwal et al. 2019, Fig. 5)", fontsize=9)
        legend_outside(a, "right", fontsize=6)
    ax[0].set_ylim(-0.004, 0.002)
    paths.append(save(fig, out_dir / "scm_C_overlap.png"))

    # alpha_s, alpha_c, alpha_d vs K from K = 2 to 1e6 (log axis) and the K = inf limits
    paths.append(_transitions_vs_K(out_dir))
    return paths


def _transitions_vs_K(out_dir):
    """alpha_s, alpha_c, alpha_d against K = 2 ... 1e6 with the K = inf values and the derived
    large-K laws (docs/scm.md, "Any K" and "Large K")."""
    import matplotlib.pyplot as plt
    from .. import scm
    from . import save
    Ks = [2.0, 2.5, 3.0, 4.0, 6.0, 10.0, 20.0, 40.0, 100.0] + [float(k) for k in np.geomspace(200.0, 1e6, 14)]
    Kf = np.array(Ks)
    keys = (("alpha_s", "o", r"$\alpha_s$"), ("alpha_c", "s", r"$\alpha_c$"), ("alpha_d", "^", r"$\alpha_d$"))
    fig, ax = plt.subplots(1, 3, figsize=(15, 4.2))
    for a, act in ((ax[0], "erf"), (ax[1], "relu")):
        trs = scm.transitions(Ks, act)  # direct solver; Landau reduction where weakly first order
        tinf = scm.transitions(math.inf, act)
        for (key, mk, lab), col in zip(keys, ("C0", "C3", "C2")):
            y = np.array([getattr(t, key) for t in trs])
            a.plot(Kf, y, mk + "-", ms=3, color=col, label=lab)
            if act == "relu":
                ax[2].plot(Kf, (y - 2 * np.pi) * Kf ** 2, mk + "-", ms=3, color=col, label=lab)
            v = getattr(tinf, key)
            if math.isfinite(v) and (act == "erf" or key == "alpha_c"):
                a.axhline(v, color=col, ls="--", lw=0.8,
                          label=f"K = inf: {key} = {v:.4f}" if act == "erf" else r"K = inf: $2\pi$ (all three)")
        a.set_xscale("log")
        a.set_xlabel("K")
        a.set_ylabel(r"$\alpha$")
    ax[0].plot(Kf, 4 * np.pi * Kf - np.pi / Kf, "k:", lw=0.8, label=r"$4\pi K - \pi/K$")
    ax[0].set_yscale("log")
    ax[0].set_title(r"erf: first order, $\alpha_s, \alpha_c \to$ K = inf like 1/K; $\alpha_d \sim 4\pi K$", fontsize=9)
    ax[1].set_title(r"ReLU: weakly first order, all three $\to 2\pi$", fontsize=9)
    # the derived large-K limits of K^2 (alpha_x - 2 pi), in the colour of their line (legend, not labels on the lines)
    for c, lab, col in ((4 - np.pi - 3 * np.pi / 20, r"$4 - \pi - 3\pi/20$", "C0"),
                        (4 - np.pi - 2 * np.pi / 15, r"$4 - \pi - 2\pi/15$", "C3"), (4 - np.pi, r"$4 - \pi$", "C2")):
        ax[2].axhline(c, color=col, ls=":", lw=0.9, label=f"large K: {lab}")
    ax[2].set_xscale("log")
    ax[2].set_xlabel("K")
    ax[2].set_ylabel(r"$K^2(\alpha - 2\pi)$")
    ax[2].set_title(r"ReLU: $K^2(\alpha_x - 2\pi)$ and the derived large-K limits", fontsize=9)
    ax[0].legend(fontsize=7, loc="upper left")
    ax[1].legend(fontsize=7, loc="lower right")
    ax[2].legend(fontsize=6.5, loc="lower right", ncols=2)
    fig.tight_layout()
    return save(fig, Path(out_dir) / "scm_transitions_vs_K.png")
