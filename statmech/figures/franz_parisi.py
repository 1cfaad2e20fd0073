"""Franz--Parisi figures (public API of :mod:`statmech.franz_parisi` and
:mod:`statmech.simulate.fp_enumeration` only).

* ``franz_parisi_fig27.png`` -- thesis Fig. 2.7 at alpha = 0.55: S_FP(d) around typical solutions
  of the Ising and spherical perceptrons (with their alpha = 0 curves), and the ratio
  S_FP(d)/S_FP^{alpha=0}(d) that puts both on one scale (-> 1 for a dense neighbourhood), with the
  stochastic-perceptron curves of Fig. 2.7 (Ising solutions around sign(m), beta = 20,
  q* = 0.7, 0.8 and 0.9 -- the last on the 1RSB reference, read from figures/data/fp_stochastic.json).
* ``franz_parisi_crossing.png`` -- the zero crossing d0(alpha) of the Ising S_FP (typical
  solutions isolated below it) and the typical distance d_typ(alpha).
* ``franz_parisi_enumeration.png`` -- exhaustive enumeration (N = 13, 17, 21) vs theory for the
  entropy deficit at alpha ~ 0.5.
* ``franz_parisi_stochastic_energy.png`` -- thesis Eq. 2.54: training error of sign(m) vs q* for
  the stochastic perceptron at equilibrium (alpha = 0.55, beta = 20), the theory curve of
  Figs. 2.6/2.9 (RS; read from figures/data/fp_stochastic.json).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from . import legend_outside, save
from ._data import DataSpec, call, load

#: distances of the stochastic-perceptron curves of Fig. 2.7
D_ST = (0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5)
#: q* of the stochastic energy curve (Eq. 2.54)
Q_EN = (0.3, 0.4, 0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95)

DATASETS = (
    DataSpec("fp_stochastic", "franz_parisi",
             "Fig. 2.7 at alpha = 0.55, beta = 20: S_FP around sign(m) of the stochastic perceptron at q* = 0.7, 0.8 "
             "(RS reference: no 1RSB solution below q* = 0.856) and q* = 0.9 (1RSB reference, dynamical: mu = 1), "
             "and the 1RSB reference at q* = 0.9",
             (call("statmech.franz_parisi:stochastic_perceptron", alpha=0.55, d=list(D_ST), q_star=0.7, beta=20.0),
              call("statmech.franz_parisi:stochastic_perceptron", alpha=0.55, d=list(D_ST), q_star=0.8, beta=20.0),
              call("statmech.franz_parisi:stochastic_perceptron", alpha=0.55, d=list(D_ST), q_star=0.9, beta=20.0,
                   ansatz="1rsb"),
              call("statmech.franz_parisi:stochastic_reference", alpha=0.55, q_star=0.9, beta=20.0, ansatz="1rsb"),
              call("statmech.franz_parisi:stochastic_energy", alpha=0.55, q_star=list(Q_EN), beta=20.0))),
    DataSpec("fp_enumeration", "franz_parisi",
             "Ising perceptron at alpha ~ 0.5, Gaussian patterns: exhaustive enumeration of the FP "
             "entropy deficit around reference solutions",
             tuple(call("statmech.simulate.fp_enumeration:fp_enumeration", N=N, alpha=0.5, n_instances=30,
                        n_refs=10, seed=N) for N in (13, 17, 21))),
)


def _fig27(out):
    import matplotlib.pyplot as plt
    from .. import franz_parisi as fp
    alpha = 0.55
    d = np.concatenate([np.geomspace(1e-3, 0.02, 7), np.linspace(0.04, 0.5, 12)])
    rb = fp.binary_perceptron(alpha, d)
    rs = fp.spherical_perceptron(alpha, d)
    d0 = fp.binary_zero_crossing(alpha).d_zero
    free_b = fp.binary_entropy_free(d)
    free_s = 0.5 * np.log(4 * d * (1 - d))
    d_st = np.array(D_ST)
    data = load("fp_stochastic")
    sto = {0.7: data.results[0], 0.8: data.results[1], 0.9: data.results[2]}
    ref9 = data.results[3]
    free_st = fp.binary_entropy_free(d_st)
    colors = ("C2", "C1", "C4")
    fig, axs = plt.subplots(1, 4, figsize=(18, 6.2), layout="constrained",
                            gridspec_kw={"width_ratios": (1.15, 0.85, 1.0, 1.0)})
    ax = axs[0]
    ax.plot(d, rb.entropy, "C3o-", ms=3, label="Ising, typical reference (RS)")
    ax.plot(d, free_b, "C3:", label="Ising, α = 0: H₂(d)")
    ax.axhline(0, color="k", lw=0.6)
    ax.axvline(d0, color="C3", lw=0.6, ls="--", label=f"d₀ = {d0:.6f}: typical S_FP < 0 below")
    for qs, c in zip(sto, colors):
        kind = "1RSB reference (μ = 1)" if qs == 0.9 else "RS reference"
        ax.plot(d_st, sto[qs].entropy, c + "s-", ms=3, label=f"around sign(m), stochastic q* = {qs}, {kind}")
    ax.plot([rb.d_typical[0]], [rb.entropy_equilibrium[0]], "k*", ms=8, label="(d_typ, S_eq)")
    ax.set_xlabel("Hamming distance d")
    ax.set_ylabel("S_FP(d)  [log count / N]")
    ax.set_title(f"Ising perceptron, α = {alpha}")
    legend_outside(ax, "below", ncols=1)
    ax = axs[1]
    m = d <= 0.03
    ax.plot(d[m], rb.entropy[m], "C3o-", ms=3, label="typical reference: S_FP < 0 (isolated)")
    for qs, c in zip(sto, colors):
        ms_ = d_st <= 0.03
        ax.plot(d_st[ms_], sto[qs].entropy[ms_], c + "s-", ms=3, label=f"sign(m), q* = {qs}: S_FP > 0 (dense)")
    ax.axhline(0, color="k", lw=0.5)
    ax.set_xscale("log")
    ax.set_xlabel("d")
    ax.set_title("Ising perceptron, small d")
    legend_outside(ax, "below", ncols=1)
    ax = axs[2]
    ax.plot(d, rs.entropy, "C0o-", ms=3, label="spherical, typical reference (RS)")
    ax.plot(d, free_s, "C0:", label="spherical, α = 0: ½ log 4d(1-d)")
    ax.plot([rs.d_typical[0]], [rs.entropy_equilibrium[0]], "k*", ms=8, label="(d_typ, S_eq)")
    ax.set_xlabel("d = (1 - overlap)/2")
    ax.set_ylabel("S_FP(d)  [log fraction of the sphere / N]")
    ax.set_title(f"spherical perceptron, α = {alpha}")
    legend_outside(ax, "below", ncols=1)
    ax = axs[3]
    k = d < 0.3  # the alpha = 0 spherical entropy vanishes at d = 1/2 (ratio meaningless there)
    ax.plot(d[k], rb.entropy[k] / free_b[k], "C3o-", ms=3, label="Ising: S_FP / H₂(d)")
    ax.plot(d[k], rs.entropy[k] / free_s[k], "C0o-", ms=3, label="spherical: S_FP / ½ log 4d(1-d)")
    kk = d_st < 0.3
    for qs, c in zip(sto, colors):
        ax.plot(d_st[kk], sto[qs].entropy[kk] / free_st[kk], c + "s-", ms=3, label=f"stochastic q* = {qs}: S_FP / H₂(d)")
    ax.axhline(0, color="k", lw=0.6)
    ax.axhline(1, color="0.5", lw=0.6, ls=":")
    ax.set_xscale("log")
    ax.set_xlabel("d")
    ax.set_ylabel("S_FP(d) / S_FP(d; α = 0)")
    ax.set_title("ratio → 1: dense (spherical); < 0: isolated (Ising)", fontsize=10)
    legend_outside(ax, "below", ncols=1)
    fig.suptitle(f"Stochastic perceptron (α = 0.55, β = 20): q* = 0.7, 0.8 on the RS reference (AT-stable, no 1RSB "
                 f"solution below q* ≈ 0.856); q* = 0.9 on the 1RSB reference, dynamical phase (μ = 1, "
                 f"q₁ = {ref9.q1:.4f}, Σ = {ref9.complexity:.2e}), where the FP entropy equals the RS one",
                 fontsize=9, color="0.3")
    return save(fig, Path(out) / "franz_parisi_fig27.png")


def _crossing(out):
    import matplotlib.pyplot as plt
    from .. import franz_parisi as fp
    alphas = np.array([0.3, 0.4, 0.5, 0.6, 0.7, 0.8])
    r = fp.binary_zero_crossing(alphas)
    fig, ax = plt.subplots(figsize=(5.4, 4.0))
    ax.semilogy(alphas, r.d_zero, "C3o-", label="zero crossing d₀ of S_FP (RS)")
    ax.semilogy(alphas, r.d_typical, "k--", label="typical distance (1 - q₀)/2")
    ax.fill_between(alphas, 1e-4, r.d_zero, color="C3", alpha=0.12, label="S_FP < 0: no solutions")
    for a, v in zip(alphas, r.d_zero):
        ax.annotate(f"{v:.5f}", (a, v), textcoords="offset points", xytext=(4, -10), fontsize=7)
    ax.set_xlabel("α")
    ax.set_ylabel("d")
    ax.set_xlim(0.25, 0.9)
    ax.set_ylim(1e-4, 1)
    ax.set_title("Ising perceptron: typical solutions are isolated")
    ax.legend(fontsize=8)
    return save(fig, Path(out) / "franz_parisi_crossing.png")


def _enumeration(out):
    import matplotlib.pyplot as plt
    from .. import franz_parisi as fp
    data = load("fp_enumeration")
    fig, ax = plt.subplots(figsize=(5.6, 4.2))
    for i, N in enumerate((13, 17, 21)):
        r = data.pick(N=N)
        k = np.arange(1, N // 2 + 1)
        ok = r.fraction_nonzero[k] > 0.95
        ax.errorbar(k[ok] / N, r.deficit[k][ok], yerr=r.deficit_err[k][ok], fmt="o", ms=3, color=f"C{i}",
                    label=f"enumeration N = {N} (α = {r.P}/{N})")
        dd = np.linspace(0.04, 0.5, 10)
        th = fp.binary_perceptron(r.P / N, dd)
        ax.plot(dd, th.entropy - fp.binary_entropy_free(dd), "-", color=f"C{i}", lw=1)
    ax.set_xlabel("Hamming distance d = k/N")
    ax.set_ylabel("entropy deficit S_FP(d) - H₂(d)")
    ax.text(0.03, 0.04, "enumeration: (1/N)<log N_k> - (1/N) log C(N,k)", transform=ax.transAxes, fontsize=7)
    ax.set_title("Ising perceptron, Gaussian patterns: theory (lines) vs enumeration", fontsize=9)
    ax.legend(fontsize=7)
    return save(fig, Path(out) / "franz_parisi_enumeration.png")


def _stochastic_energy(out):
    import matplotlib.pyplot as plt
    from .. import franz_parisi as fp
    q = np.array(Q_EN)
    r = load("fp_stochastic").results[4]
    fig, ax = plt.subplots(figsize=(5.2, 3.8))
    ax.plot(q, r.energy, "C2o-", label="RS equilibrium theory (Eq. 2.54), β = 20")
    ax.axvspan(0.856, 0.9, color="C4", alpha=0.08, label="1RSB states found (q* = 0.86-0.9; none at 0.95)")
    ax.axvspan(0.870, 0.898, color="C3", alpha=0.15, label="condensed (Σ(μ=1) < 0)")
    ax.set_xlabel("q*")
    ax.set_ylabel("training error of sign(m)")
    ax.set_title("stochastic perceptron, α = 0.55")
    ax.legend(fontsize=8)
    return save(fig, Path(out) / "franz_parisi_stochastic_energy.png")


def make(out_dir):
    """Regenerate the Franz--Parisi figures into ``out_dir``; returns the paths."""
    return [_fig27(out_dir), _crossing(out_dir), _enumeration(out_dir), _stochastic_energy(out_dir)]
