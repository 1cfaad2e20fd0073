"""Figures for the channel model (ESP/Swish), the SCM with ESP units and the Hessian study.

* ``activations_functions.png`` -- ESP h sigma(beta h), gate sigma(beta h) and back-prop factor
  g(h) for several beta, with the ReLU (beta -> inf) and linear h/2 (beta -> 0) limits.
* ``activations_scm_phase_diagram.png`` -- (beta, alpha) phase diagram of the soft committee
  machine with ESP units, K = 2 and K = 5 (statmech.scm.transitions with ESP(beta)).
* ``activations_hessian_loss.png``, ``activations_hessian_alpha.png``,
  ``activations_hessian_gamma.png``, ``activations_zero_residuals.png``,
  ``activations_eigenvalue_histograms.png`` -- Fig. 1 (a-d) of Milletarí, Chotibut &
  Trevisanutto, arXiv:1805.08786, and the eigenvalue histograms of App. B of its first version
  (v1, 2018), from statmech.simulate.small_networks.
* ``activations_digits.png`` -- the 8x8 digits task (25 hidden units, 1910 parameters), only
  when scikit-learn is installed (optional extra ``digits``) *and* ``STATMECH_FIGURES_DIGITS=1``:
  each exact 1910 x 1910 Hessian costs ~P^2 m = 6.5 GFlop plus the eigendecomposition, several
  minutes in total on a busy 2-core machine, too slow for the default figure run.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from . import save
from ._data import DataSpec, call, load

HIDDENS = ((10,), (8, 2))
TASKS = ("linear", "nonlinear")
_ACTIVATIONS = ("relu", "esp", "esp_trainable", "sigmoid")


def hessian_run(task, hidden, activation, epochs=2000, n_checkpoints=16):
    """One run of :func:`statmech.simulate.small_networks.hessian_study` (task by name, beta 1,
    lr 0.01, seed 0): full-batch Adam with the exact Hessian at ``n_checkpoints`` epochs."""
    from ..simulate import small_networks as sn
    t = {"linear": sn.linear_task, "nonlinear": sn.nonlinear_task}[task]()
    return sn.train_network(t, tuple(hidden), activation, 1.0, epochs, 0.01, 0, n_checkpoints, 1e-5)


DATASETS = (
    DataSpec("activations_hessian", "activations",
             "small networks (Milletari et al. 2019, Fig. 1): training loss and exact Hessian spectra over full-batch Adam "
             "training, two tasks x two architectures x four activations",
             tuple(call(f"{__name__}:hessian_run", task=t, hidden=list(h), activation=a)
                   for t in TASKS for h in HIDDENS for a in _ACTIVATIONS), small=(0,)),
)

COLORS = {"relu": "C3", "esp": "C0", "esp_trainable": "C2", "sigmoid": "C1"}
LABELS = {"relu": "ReLU", "esp": r"ESP ($\beta=1$)", "esp_trainable": r"ESP ($\beta$ trainable)", "sigmoid": "sigmoid"}


def _functions(out):
    import matplotlib.pyplot as plt
    from .. import activations as A
    h = np.linspace(-4, 4, 801)
    betas = [0.25, 1.0, 2.0, 5.0, math.inf]
    fig, ax = plt.subplots(1, 3, figsize=(13, 3.8))
    for b in betas:
        lab = r"$\beta=\infty$ (ReLU)" if math.isinf(b) else rf"$\beta={b:g}$"
        ax[0].plot(h, A.esp(h, b), label=lab)
        ax[1].plot(h, A.gate_expectation(h, b), label=lab)
        ax[2].plot(h, A.esp_derivative(h, b), label=lab)
    ax[0].plot(h, h / 2, "k:", label=r"$\beta\to0$: $h/2$")
    ax[0].set_title(r"ESP $\langle j\rangle = h\,\sigma(\beta h) = \partial_\beta\log Z$")
    ax[1].set_title(r"gate $\langle s\rangle = \sigma(\beta h)$")
    ax[2].set_title(r"back-prop factor $g=\sigma(\beta h)[1+\beta h\,\sigma(-\beta h)]$")
    for a in ax:
        a.set_xlabel("h")
        a.grid(alpha=0.3)
    ax[0].legend(fontsize=8)
    return [save(fig, out / "activations_functions.png")]


def _phase_diagram(out):
    import matplotlib.pyplot as plt
    from .. import activations as A
    betas = np.array([0.15, 0.2, 0.3, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 5.0, 8.0, 15.0, 30.0])
    fig, axes = plt.subplots(1, 3, figsize=(17, 4.6))
    for ax, K in zip(axes, (2, 5)):
        r = A.scm_transitions(K, betas)
        ax.plot(r.beta, r.alpha_c, "o-", color="C0", label=r"$\alpha_c$ (transition)")
        if np.any(r.order == 1):
            ax.plot(r.beta, r.alpha_s, "v--", color="C2", ms=4, label=r"$\alpha_s$ (specialized state appears)")
            ax.plot(r.beta, r.alpha_d, "^--", color="C3", ms=4, label=r"$\alpha_d$ ($R=S$ state unstable)")
        ax.axhline(r.relu.alpha_c, color="k", ls=":", label=rf"ReLU ($\beta=\infty$): $\alpha_c={r.relu.alpha_c:.4f}$")
        bb = np.geomspace(betas[0], 0.6, 50)
        ax.plot(bb, 4 / bb ** 2, color="0.5", lw=0.8, ls="--", label=r"$4/\beta^2$ (linear limit $\beta\to0$: no transition)")
        ax.fill_between(r.beta, r.alpha_c, 1e4, color="C0", alpha=0.07)
        ax.text(0.45, 0.6, "specialized (R > S)", transform=ax.transAxes)
        ax.text(0.04, 0.3, "unspecialized\n(R = S)", transform=ax.transAxes)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_ylim(3, 300)
        ax.set_xlabel(r"$\beta$ (ESP noise parameter)")
        ax.set_ylabel(r"$\alpha = \beta_{\rm T} P/(KN)$")
        orders = {1: "first order", 2: "continuous"}
        kinds = sorted({orders.get(int(o), "") for o in r.order.compressed() if o})
        ax.set_title(f"SCM with ESP units, K = {K} ({' / '.join(kinds)})")
        ax.legend(fontsize=7, loc="upper right")
        ax.grid(alpha=0.3, which="both")
        if not np.all(r.resolved):
            for bu in r.beta[~r.resolved]:
                ax.axvline(bu, color="0.6", lw=0.6, ls=":")
            ax.plot([], [], color="0.6", lw=0.6, ls=":", label="not resolved (near-tricritical)")
            ax.legend(fontsize=7, loc="upper right")
        if K == 5:
            w = (r.alpha_d - r.alpha_s) / r.alpha_c
            axes[2].plot(r.beta, np.ma.where(r.order == 1, w, 0.0), "o-", color="C3", label="K = 5")
        else:
            axes[2].plot(r.beta, np.zeros_like(r.beta), "o-", color="C0", label="K = 2 (continuous)")
    axes[2].set_xscale("log")
    axes[2].set_xlabel(r"$\beta$")
    axes[2].set_ylabel(r"$(\alpha_d-\alpha_s)/\alpha_c$")
    axes[2].set_title("width of the coexistence (first-order) region", fontsize=10)
    axes[2].legend(fontsize=8)
    axes[2].grid(alpha=0.3, which="both")
    fig.tight_layout()
    return [save(fig, out / "activations_scm_phase_diagram.png")]


def _hessian_runs():
    """The stored training runs of ``activations_hessian``, keyed by (task, hidden, activation)."""
    data = load("activations_hessian")
    return {(p["kwargs"]["task"], tuple(p["kwargs"]["hidden"]), p["kwargs"]["activation"]): r
            for p, r in zip(data.points, data.results)}


def _hessian(out):
    """Fig. 1 (a)-(d): loss, Hessian indices and zero residuals along training (stored runs)."""
    import matplotlib.pyplot as plt
    from ..simulate import small_networks as sn
    tasks = [sn.linear_task(), sn.nonlinear_task()]
    hiddens = HIDDENS
    runs = _hessian_runs()
    paths = []

    def grid(title):
        fig, ax = plt.subplots(2, 2, figsize=(11, 7.5), squeeze=False)
        fig.suptitle(title)
        return fig, ax

    specs = [
        ("activations_hessian_loss.png", "Fig. 1(a): training loss (full-batch Adam, lr 0.01)",
         lambda r: (np.arange(r.loss.size), r.loss), "epoch", "cross-entropy loss", "log"),
        ("activations_hessian_alpha.png", r"Fig. 1(b): index $\alpha$ (fraction of negative Hessian eigenvalues) vs loss",
         lambda r: (r.loss[r.checkpoints], r.alpha_index), "loss", r"$\alpha$", None),
        ("activations_zero_residuals.png", r"Fig. 1(c): fraction of zero residuals $|\hat y-y|\leq 0.05$",
         lambda r: (np.maximum(r.checkpoints, 1), r.zero_residuals), "epoch", "fraction", None),
        ("activations_hessian_gamma.png", r"Fig. 1(d): index $\gamma$ (fraction of $|\lambda|\leq10^{-5}\max|\lambda|$)",
         lambda r: (np.maximum(r.checkpoints, 1), r.gamma_index), "epoch", r"$\gamma$", None),
    ]
    for fname, title, xy, xl, yl, yscale in specs:
        fig, ax = grid(title)
        for i, hid in enumerate(hiddens):
            for j, t in enumerate(tasks):
                a = ax[i, j]
                for act in sn.ACTIVATIONS:
                    x, y = xy(runs[(t.name, hid, act)])
                    a.plot(x, y, "-" if fname.endswith("loss.png") else "o-", ms=3, color=COLORS[act], label=LABELS[act])
                a.set_title(f"{t.name} task ({t.m} points), hidden {'-'.join(map(str, hid))}", fontsize=9)
                a.set_xlabel(xl)
                a.set_ylabel(yl)
                if xl == "epoch":
                    a.set_xscale("log")
                if xl == "loss":
                    from matplotlib.ticker import NullFormatter
                    a.set_xscale("log")
                    a.xaxis.set_minor_formatter(NullFormatter())
                    a.invert_xaxis()
                if yscale:
                    a.set_yscale(yscale)
                a.grid(alpha=0.3)
        ax[0, 0].legend(fontsize=8)
        fig.tight_layout()
        paths.append(save(fig, out / fname))
    return paths


def _hessian_spectra(out):
    """Hessian eigenvalue histograms: non-linear task, one hidden layer of 10, four stages of
    training (stored runs)."""
    import matplotlib.pyplot as plt
    from ..simulate import small_networks as sn
    runs = _hessian_runs()
    fig, ax = plt.subplots(len(sn.ACTIVATIONS), 4, figsize=(13, 9), squeeze=False)
    fig.suptitle("Hessian eigenvalue histograms, non-linear task, 10 hidden units (zoom near 0)")
    for i, act in enumerate(sn.ACTIVATIONS):
        r = runs[("nonlinear", (10,), act)]
        sel = np.unique(np.linspace(1, len(r.checkpoints) - 1, 4).round().astype(int))
        for k, c in enumerate(sel):
            lam = r.eigenvalues[c]
            scale = np.quantile(np.abs(lam), 0.8)
            win = lam[np.abs(lam) <= 3 * scale] if scale > 0 else lam
            a = ax[i, k]
            a.hist(win, bins=30, color=COLORS[act])
            a.axvline(0, color="k", lw=0.6)
            a.set_title(f"{LABELS[act]}, epoch {r.checkpoints[c]}: {100 * win.size / lam.size:.0f}% shown, "
                        rf"$\alpha$={r.alpha_index[c]:.2f}", fontsize=7)
            a.tick_params(labelsize=7)
    fig.tight_layout()
    return [save(fig, out / "activations_eigenvalue_histograms.png")]


def _digits(out):
    import os
    import matplotlib.pyplot as plt
    from ..simulate import small_networks as sn
    if os.environ.get("STATMECH_FIGURES_DIGITS", "0") != "1":
        return []
    try:
        task = sn.digits_task()
    except ImportError:
        return []
    acts = ("relu", "esp", "sigmoid")
    runs = {a: sn.train_network(task, (25,), a, epochs=300, checkpoints=(0, 30, 300)) for a in acts}
    fig, ax = plt.subplots(1, 4, figsize=(15, 3.6))
    for a in acts:
        r = runs[a]
        ax[0].plot(np.arange(r.loss.size), r.loss, color=COLORS[a], label=LABELS[a])
        ax[1].plot(np.maximum(r.checkpoints, 1), r.alpha_index, "o-", color=COLORS[a])
        ax[2].plot(np.maximum(r.checkpoints, 1), r.gamma_index, "o-", color=COLORS[a])
        lam = r.eigenvalues[-1]
        scale = np.quantile(np.abs(lam), 0.8)
        ax[3].hist(lam[np.abs(lam) <= 3 * scale], bins=40, histtype="step", color=COLORS[a])
    ax[0].set_yscale("log")
    ax[0].legend(fontsize=8)
    for a, t in zip(ax, ("loss", r"$\alpha$ index", r"$\gamma$ index", "eigenvalues at the end (zoom)")):
        a.set_title(f"8x8 digits, 25 hidden units: {t}", fontsize=9)
        a.grid(alpha=0.3)
    for a in ax[:3]:
        a.set_xlabel("epoch")
    ax[1].set_xscale("log")
    ax[2].set_xscale("log")
    fig.tight_layout()
    return [save(fig, out / "activations_digits.png")]


#: the parts of this group, each ``fn(out) -> list[Path]`` (``statmech.figures`` may run them in
#: different processes: ``_hessian`` and ``_hessian_spectra`` only plot stored data, the others
#: use the SCM kernels)
PARTS = ("_functions", "_phase_diagram", "_hessian", "_hessian_spectra", "_digits")


def make(out_dir):
    """Regenerate the activation figures into ``out_dir``; returns the paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    return [p for part in PARTS for p in globals()[part](out)]
