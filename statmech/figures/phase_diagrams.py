"""Phase diagrams and bifurcation pictures drawn by the continuation engine.

* ``continuation_textbook.png`` -- the four textbook cases (two folds, pitchfork,
  transcritical with a first-order transition, 1-D Bratu fold), all branches from
  :func:`statmech.continuation.analyze`.
* ``scm_erf_K5_branches.png`` -- every branch of the erf soft committee machine at K = 5
  (R - S against alpha, stable solid, unstable dashed) with alpha_s, alpha_c, alpha_d.
* ``scm_erf_phase_diagram.png``, ``scm_relu_phase_diagram.png`` -- alpha_s(K), alpha_c(K),
  alpha_d(K) with K continuous (two-parameter continuation), and the published values.
* ``perceptron_kappa_phase_diagram.png`` -- spherical (Gardner) and binary capacities
  against the stability kappa.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from . import legend_outside, save

__all__ = ["make"]

_STYLE = {"alpha_s": ("C0", "--", r"$\alpha_s$ (specialized minimum appears)"),
          "alpha_c": ("C3", "-", r"$\alpha_c$ (transition)"),
          "alpha_d": ("C2", "-.", r"$\alpha_d$ (unspecialized minimum unstable)")}


def _textbook(out):
    import matplotlib.pyplot as plt
    import sympy as sp
    from ..continuation import Problem, analyze, trace
    x, p = sp.symbols("x p")
    fig, axes = plt.subplots(2, 2, figsize=(9, 7))
    cases = [("two folds: $f = x^4/4 - x^2/2 - p x$", x ** 4 / 4 - x ** 2 / 2 - p * x, [[-1.5], [0.0], [1.5]]),
             ("pitchfork: $f = -p x^2/2 + x^4/4$", -p * x ** 2 / 2 + x ** 4 / 4, [[0.0]]),
             ("transcritical, first order: $f = -p x^2/2 - x^3/3 + x^4/4$",
              -p * x ** 2 / 2 - x ** 3 / 3 + x ** 4 / 4, [[0.0]])]
    for ax, (title, f, starts) in zip(axes.flat, cases):
        prob = Problem.from_sympy(f, [x], p, x0=starts[0], p0=-1.0)
        an = analyze(prob, -1.0, 1.0, starts=starts, ds=0.01)
        an.plot(ax=ax, y=0)
        for c in an.coexistence:
            ax.plot([c.p, c.p], [c.x1[0], c.x2[0]], "o-", color="0.4", ms=4, lw=0.8)
        ax.set_title(title, fontsize=9)
        ax.set_ylabel("x")
    # Bratu: max u against lambda
    ax = axes.flat[3]
    N = 63
    h = 1.0 / (N + 1)
    off = np.ones(N - 1) / h ** 2

    def F(u, lam):
        up = np.concatenate([[0.0], u, [0.0]])
        return (up[:-2] - 2 * up[1:-1] + up[2:]) / h ** 2 + lam * np.exp(u)

    prob = Problem(residual=F, jacobian=lambda u, lam: np.diag(-2 / h ** 2 + lam * np.exp(u)) + np.diag(off, 1)
                   + np.diag(off, -1), dFdp=lambda u, lam: np.exp(u), x0=np.zeros(N), p0=0.0,
                   weights=np.r_[np.ones(N) / N, 1.0])
    br = trace(prob, 0.0, 4.0, ds=0.1, direction=1, s_max=12.0)
    ax.plot(br.p, br.x.max(axis=1), "-", color="C0")
    for sp_ in br.points("fold"):
        ax.plot(sp_.p, sp_.x.max(), "o", mfc="none", color="k")
    folds = ", ".join(f"{sp_.p:.6f}" for sp_ in br.points("fold"))
    ax.set_xlabel(r"$\lambda$")
    ax.set_ylabel(r"max $u$")
    ax.set_title("1-D Bratu $u'' + \\lambda e^u = 0$: fold (o) at $\\lambda$ = " + folds + f" (N={N})\n"
                 r"($\lambda^* = 3.513830719$ as $N\to\infty$)", fontsize=9)
    fig.suptitle("continuation engine: textbook bifurcations (solid stable, dashed unstable; o fold, s branch point)",
                 fontsize=10)
    fig.tight_layout()
    return save(fig, out / "continuation_textbook.png")


def _scm_branches(out):
    import matplotlib.pyplot as plt
    from ..scm.advanced import scm_transitions
    tr = scm_transitions(5.0, "erf")
    an = tr["analysis"]
    fig, ax = plt.subplots(figsize=(7, 5.2), layout="constrained")
    an.plot(ax=ax, y=lambda b: b.x[:, 0] - b.x[:, 1], special=False)
    for key, (col, ls, lab) in _STYLE.items():
        ax.axvline(tr[key], color=col, ls=ls, lw=1, label=f"{lab} = {tr[key]:.8f}")
    ax.set_xlabel(r"$\alpha$")
    ax.set_ylabel(r"$R - S$")
    ax.set_title("erf soft committee machine, K = 5: all branches of $\\beta f$ (solid stable, dashed unstable)",
                 fontsize=9)
    legend_outside(ax, "below")
    return save(fig, out / "scm_erf_K5_branches.png")


def _scm_diagram(out, activation, K_max):
    import matplotlib.pyplot as plt
    from ..scm import scm_lines
    res = scm_lines(activation, 2.0, K_max, ds=0.03)
    fig, ax = plt.subplots(figsize=(8.5, 4.5), layout="constrained")
    for lab, c in res["lines"].items():
        col, ls, text = _STYLE[lab]
        ax.plot(c.q, c.p, ls, color=col, label=text)
        ks = [row["K"] for row in res["integer_K"] if c.q.min() <= row["K"] <= c.q.max()]
        vals = [np.nan if row[lab] is None else row[lab] for row in res["integer_K"] if row["K"] in ks]
        ax.plot(ks, vals, "o", color=col, ms=3)
        fill = res["filled"].get(lab)
        if fill is not None:  # where the continuation cannot resolve the line: transitions()
            ax.plot(fill["K"], fill["alpha"], ":", color=col)
    for a, b, q, p in res["meet"]:
        ax.plot(q, p, "*", color="k", ms=9)
    if activation == "erf":
        ax.plot([2], [23.675957245], "kx", ms=8, label=r"published $\alpha_c(2) \approx 23.7$")
        ax.plot([5], [44.3378030], "k+", ms=9, label=r"$\alpha_s(5) = 44.3378030$")
    else:
        ax.plot([2], [6.0940738933], "kx", ms=8, label=r"published $\alpha_c(2) \approx 6.1$")
        ax.axhline(2 * np.pi, color="0.5", lw=0.8, ls=":", label=r"$\alpha_c(K\to\infty) = 2\pi$")
    ax.set_xlabel("K (continuous)")
    ax.set_ylabel(r"$\alpha$")
    if activation == "erf":   # alpha_d grows like 4 pi K while alpha_s, alpha_c stay near 60: log axes
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("K (continuous, log scale)")
        from matplotlib.ticker import NullFormatter
        for axis, ticks in ((ax.xaxis, [2, 3, 5, 10, 20, 50]), (ax.yaxis, [20, 30, 50, 100, 200, 300, 600])):
            axis.set_ticks(ticks, labels=[str(t) for t in ticks])
            axis.set_minor_formatter(NullFormatter())
    ax.set_title(f"{activation} soft committee machine: transition lines from the free energy\n"
                 "(two-parameter continuation; dotted: direct/Landau solver; * lines meet)", fontsize=9)
    legend_outside(ax, "right")
    return save(fig, out / f"scm_{activation}_phase_diagram.png")


def _perceptron(out):
    import matplotlib.pyplot as plt
    from ..perceptron import perceptron_lines
    res = perceptron_lines(-1.0, 2.0, n=61)
    fig, ax = plt.subplots(figsize=(6.5, 4.5))
    ax.semilogy(res["kappa"], res["spherical_capacity"], "-", color="C0",
                label=r"spherical: Gardner capacity $\alpha_c(\kappa)$")
    b = res["binary_capacity"]
    ax.semilogy(b.q, b.p, "--", color="C3", label=r"binary: zero RS entropy $\alpha_c(\kappa)$ (engine line)")
    ax.plot([0], [0.8330785997], "k+", ms=9, label=r"binary $\alpha_c(0) = 0.8331$")
    ax.plot([0], [2.0], "kx", ms=7, label=r"spherical $\alpha_c(0) = 2$")
    ax.set_xlabel(r"stability $\kappa$")
    ax.set_ylabel(r"$\alpha$")
    ax.set_title("perceptron storage: capacity lines in the $(\\kappa, \\alpha)$ plane", fontsize=9)
    ax.legend(fontsize=7)
    return save(fig, out / "perceptron_kappa_phase_diagram.png")


def make(out_dir):
    """Regenerate the continuation figures into ``out_dir``; returns the paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    return [_textbook(out), _scm_branches(out), _scm_diagram(out, "erf", 50.0), _scm_diagram(out, "relu", 50.0),
            _perceptron(out)]
