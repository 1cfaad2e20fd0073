"""Figures of the learning algorithms (thesis Figs. 2.8, 2.9, 2.10, 3.5, 3.9).

The algorithm runs are read from ``figures/data`` (see ``DATASETS``; modest sizes, a few
minutes to recompute).  ``_success_calls(_config(full=True))`` are the calls at the thesis
sizes (100 instances per point, N = 1001 and N = 10001; hours).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from . import legend_outside, save
from ._data import DataSpec, call, load


def _config(full=False):
    if full:
        return {"alphas": np.round(np.arange(0.50, 0.801, 0.025), 3), "runs": 100, "Ns": (1001, 10001),
                "max_epochs": 2000, "tcm_runs": 50, "tcm_N": 99}
    return {"alphas": np.array([0.55, 0.6, 0.625, 0.65, 0.675, 0.7, 0.725]), "runs": 12, "Ns": (1001,), "max_epochs": 1000,
            "tcm_runs": 6, "tcm_N": 45}


ANNEALED = {"gamma0": 1.0, "gamma_end": 0.5, "gamma_rate": 0.995}
SCHEDULES = (("gamma=1", {}), ("gamma=0.5", {"gamma0": 0.5}), ("annealed", ANNEALED))
_SUCCESS = "statmech.simulate.algorithms:success_rate"


def _success_calls(cfg):
    return tuple(call(_SUCCESS, alphas=[float(a) for a in cfg["alphas"]], N=N, runs=cfg["runs"], seed=2019,
                      max_epochs=cfg["max_epochs"], **kw)
                 for N in cfg["Ns"] for name, kw in SCHEDULES if not (N > 2000 and name != "gamma=1"))


def _schedule(kwargs):
    """The name of the gamma schedule of a success_rate call."""
    keys = {k: v for k, v in kwargs.items() if k.startswith("gamma")}
    return next(name for name, kw in SCHEDULES if kw == keys)


_CFG = _config()
METROPOLIS = {"alphas": [0.1, 0.2, 0.25, 0.3, 0.4], "sweeps": 2000}
DATASETS = (
    DataSpec("algorithms_success", "algorithms",
             "P(solve) vs alpha of the stochastic perceptron (gamma = 1, 0.5, annealed) and of Metropolis "
             "simulated annealing (energy = errors), binary perceptron, N = 1001",
             _success_calls(_CFG) + (call(_SUCCESS, alphas=METROPOLIS["alphas"], N=1001, runs=max(4, _CFG["runs"] // 2),
                                          seed=2020, algorithm="metropolis_annealing",
                                          sweeps=METROPOLIS["sweeps"]),), small=(0,)),
    DataSpec("algorithms_energy", "algorithms",
             "training error of sign(m) vs q* along stochastic-perceptron runs, alpha = 0.55, N = 1001",
             (call("statmech.figures.algorithms:energy_vs_qstar", runs=2),)),
    DataSpec("algorithms_tcm", "algorithms",
             "TCM K = 3: fraction solved by GD, SGD, EASGD (W = 2, 4), N = 45; and the SGD solution pair "
             "of one teacher instance (N = 303) with the errors and exact Hessian along the path",
             (call("statmech.figures.algorithms:tcm_success", tcm_runs=_CFG["tcm_runs"], tcm_N=_CFG["tcm_N"]),
              call("statmech.figures.algorithms:tcm_path_data", N=303, K=3, alpha=0.5, seed=3))),
)


def _plot_rates(ax, res, label, color):
    from ..gaussian import H
    cap = res["capacity"]
    lab = label
    if cap is not None:
        lab += rf"  $\alpha_c^*={cap.alpha_c:.3f}\pm{cap.stderr:.3f}$"
        a = np.linspace(res["alpha"].min(), res["alpha"].max(), 200)
        ax.plot(a, H((a - cap.alpha_c) / cap.width), color=color, lw=1, alpha=0.7)
    ax.errorbar(res["alpha"], res["p"], yerr=res["p_err"], fmt="o", color=color, label=lab, capsize=3)


def fig_success(curves, out_dir, sa=None):
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(5.5, 5.0), layout="constrained")
    colors = ["C0", "C3", "C2"]
    for c, N in zip(colors, sorted({k[0] for k in curves})):
        res = curves[(N, "gamma=1")]
        _plot_rates(ax, res, f"N = {N} ({res['trials'][0]} runs/pt)", c)
    if sa is not None:
        ax.errorbar(sa["alpha"], sa["p"], yerr=sa["p_err"], fmt="s--", color="gray", capsize=3, ms=4,
                    label=f"Metropolis SA baseline, N = 1001, {sa['sweeps']} sweeps ({sa['trials'][0]} runs/pt)")
    ax.axvline(0.833, color="gray", ls=":", lw=1)
    ax.text(0.835, 0.5, r"$\alpha_c=0.833$", rotation=90, color="gray", va="center", fontsize=8)
    ax.set_xlabel(r"$\alpha = P/N$")
    ax.set_ylabel("probability of solving")
    ax.set_title("Stochastic perceptron (thesis Fig. 2.8), $\\gamma=1$")
    legend_outside(ax, "below", fontsize=6.5, ncols=1)
    ax.set_ylim(-0.05, 1.05)
    return save(fig, Path(out_dir) / "stochastic_perceptron_success.png")


def fig_gamma(curves, out_dir):
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(5.5, 4))
    N = min(k[0] for k in curves)
    _plot_rates(ax, curves[(N, "gamma=1")], r"$\gamma=1$", "C0")
    _plot_rates(ax, curves[(N, "gamma=0.5")], r"$\gamma=0.5$", "C2")
    _plot_rates(ax, curves[(N, "annealed")],
                rf"$\gamma: {ANNEALED['gamma0']}\to{ANNEALED['gamma_end']}$ (rate {ANNEALED['gamma_rate']}/epoch)", "C1")
    ax.set_xlabel(r"$\alpha = P/N$")
    ax.set_ylabel("probability of solving")
    ax.set_title(f"Effect of $\\gamma$ annealing, N = {N} (thesis Fig. 2.10)")
    ax.legend(fontsize=7, loc="lower left")
    ax.set_ylim(-0.05, 1.05)
    return save(fig, Path(out_dir) / "stochastic_perceptron_gamma_annealing.png")


def energy_vs_qstar(alpha=0.55, N=1001, runs=3, seed=7):
    """Training error of sign(m) vs q* along stochastic-perceptron runs (fast and slow eta)."""
    from ..simulate.algorithms import random_binary_instance, stochastic_perceptron
    out = {}
    for name, eta_f in (("eta = 0.1 sqrt(N)", 0.1), ("eta = 0.02 sqrt(N)", 0.02)):
        traj = []
        for r in range(runs):
            X, y, _ = random_binary_instance(N, alpha, seed=seed + r)
            res = stochastic_perceptron(X, y, seed=r, eta=eta_f * np.sqrt(N), max_epochs=3000)
            traj.append((np.concatenate([[0.0], res.history["q_star"]]),
                         np.concatenate([[np.nan], res.history["errors"] / len(y)])))
        out[name] = traj
    return out


def _theory_energy(alpha, qs, beta=20.0):
    """Equilibrium energy of sign(m) vs q* from statmech.franz_parisi (thesis Eq. 2.54)."""
    from .. import franz_parisi as fp
    return np.asarray(fp.stochastic_energy(alpha, np.asarray(qs, dtype=float), beta).energy, dtype=float)


def fig_energy(data, out_dir, alpha=0.55):
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(5.5, 4))
    for c, (name, traj) in zip(("C0", "C1"), data.items()):
        for k, (q, e) in enumerate(traj):
            ax.plot(q, e, color=c, lw=1, alpha=0.8, label=f"simulation, {name}" if k == 0 else None)
    qs = np.linspace(0.1, 0.8, 8)
    E = _theory_energy(alpha, qs)
    ax.plot(qs, E, "ks--", ms=4, lw=1.2, label=r"equilibrium theory, franz_parisi.stochastic_energy ($\beta=20$)")
    ax.set_xlabel(r"$q^* = \frac{1}{N}\sum_i m_i^2$")
    ax.set_ylabel(r"training error of sign$(m)$, $\hat E$")
    ax.set_title(rf"Energy of the binarized configuration vs $q^*$, $\alpha={alpha}$ (Fig. 2.9)")
    ax.legend(fontsize=7)
    ax.set_yscale("symlog", linthresh=1e-2)
    return save(fig, Path(out_dir) / "stochastic_perceptron_energy_vs_qstar.png")


def tcm_success(tcm_runs=6, tcm_N=45, alphas=(0.3, 0.5, 0.7, 0.9, 1.1, 1.3), progress=False):
    """Fraction of TCM storage instances (K = 3) solved by GD, SGD and EASGD (2 and 4 workers)."""
    from tqdm.auto import tqdm

    from ..simulate.tcm_paths import tcm_instance, tcm_train
    cfg = {"tcm_runs": tcm_runs, "tcm_N": tcm_N}
    methods = {"GD": {"method": "gd"}, "SGD": {"method": "sgd"},
               "EASGD W=2": {"method": "easgd", "workers": 2}, "EASGD W=4": {"method": "easgd", "workers": 4}}
    out = {m: np.zeros(len(alphas)) for m in methods}
    runs = cfg["tcm_runs"]
    bar = tqdm(total=len(alphas) * runs * len(methods), desc="TCM success", disable=not progress)
    for j, a in enumerate(alphas):
        for r in range(runs):
            d = tcm_instance(cfg["tcm_N"], 3, a, seed=1000 * j + r)
            for m, kw in methods.items():
                res = tcm_train(d["patterns"], d["labels"], 3, seed=r, epochs=300, **kw)
                out[m][j] += res.solved
                bar.update(1)
    bar.close()
    return np.array(alphas), {m: v / runs for m, v in out.items()}, runs


def fig_tcm_success(data, out_dir, N):
    import matplotlib.pyplot as plt
    alphas, rates, runs = data
    fig, ax = plt.subplots(figsize=(5.5, 4))
    for m, p in rates.items():
        ax.errorbar(alphas, p, yerr=np.sqrt(np.maximum(p * (1 - p), 0.25 / runs) / runs), marker="o",
                    capsize=3, label=m)
    ax.set_xlabel(r"$\alpha = P/N$")
    ax.set_ylabel("probability of solving")
    ax.set_title(f"TCM K=3, N={N}: EASGD vs GD and SGD (Fig. 3.5), 300 epochs")
    ax.legend(fontsize=8)
    return save(fig, Path(out_dir) / "tcm_easgd_success.png")


def tcm_path_data(N=303, K=3, alpha=0.5, seed=3):
    """Two SGD solutions of one teacher-generated TCM instance and the paths between them."""
    from ..simulate.tcm_paths import tcm_instance, tcm_path, tcm_train
    d = tcm_instance(N, K, alpha, seed=seed, teacher=True, n_test=2000)
    Wa = tcm_train(d["patterns"], d["labels"], K, method="sgd", seed=1, epochs=2000)
    Wb = tcm_train(d["patterns"], d["labels"], K, method="sgd", seed=2, epochs=2000)
    p = tcm_path(Wa.weights, Wb.weights, d["patterns"], d["labels"], K, test_patterns=d["test_patterns"],
                 test_labels=d["test_labels"], n_hessian=11)
    return p, Wa.solved and Wb.solved


def fig_tcm_path(p, out_dir, N):
    import matplotlib.pyplot as plt
    fig, axs = plt.subplots(1, 2, figsize=(11, 4.8), layout="constrained")
    ax = axs[0]
    ax.plot(p.t_line, p.line_train_errors, "C0-", label="train, straight line v(t)")
    ax.plot(p.t_line, p.line_test_errors, "C0--", label="test, straight line v(t)")
    ax.plot(p.t_path, p.path_train_errors, "C1-", label=r"train, relaxed path $\Gamma(t)$")
    ax.plot(p.t_path, p.path_test_errors, "C1--", label=r"test, relaxed path $\Gamma(t)$")
    ax.set_xlabel(r"t (progress $1-|W_b-W_*|/|W_b-W_a|$ on $\Gamma$)")
    ax.set_ylabel("error fraction")
    ax.set_title(f"TCM K=3, N={N}: errors between two SGD solutions", fontsize=10)
    legend_outside(ax, "below")
    ax = axs[1]
    ev = p.hess_eigenvalues
    lmax = np.abs(ev).max()
    for k in range(1, 6):
        ax.plot(p.hess_t, ev[:, -k], "o-", ms=3, color=f"C{k - 1}", label=f"$\\lambda_{{max-{k - 1}}}$" if k > 1 else r"$\lambda_{max}$")
    ax.plot(p.hess_t, ev[:, 0], "kx-", ms=4, label=r"$\lambda_{min}$")
    ax2 = ax.twinx()
    ax2.plot(p.hess_t, (np.abs(ev) > 1e-2 * lmax).sum(axis=1), "s:", color="gray", ms=3)
    ax2.set_ylabel(r"# eigenvalues with $|\lambda| > 10^{-2}\lambda_{max}$", color="gray", fontsize=8)
    ax.axhline(0, color="k", lw=0.5)
    ax.set_xlabel(r"t along $\Gamma(t)$")
    ax.set_ylabel("Hessian eigenvalue")
    ax.set_title("Exact Hessian along the path (Fig. 3.9)", fontsize=10)
    legend_outside(ax, "below", ncols=3)
    return save(fig, Path(out_dir) / "tcm_path_errors_hessian.png")


def make(out_dir):
    """All figures of this group, from the data sets ``algorithms_*`` of ``figures/data``."""
    from ..simulate.algorithms import algorithmic_capacity
    out_dir = Path(out_dir)
    success = load("algorithms_success")
    curves = {}
    sa = None
    for p, res in zip(success.points, success.results):
        kw = p["kwargs"]
        res = dict(res)
        if kw.get("algorithm") == "metropolis_annealing":
            res["capacity"], res["sweeps"] = None, kw["sweeps"]
            sa = res
            continue
        try:
            res["capacity"] = algorithmic_capacity(res["alpha"], res["successes"], res["trials"])
        except ValueError:  # all solved or none solved in the window: no estimate
            res["capacity"] = None
        curves[(kw["N"], _schedule(kw))] = res
    tcm = load("algorithms_tcm")
    rates = tcm.pick(tcm_N=_CFG["tcm_N"])
    p, _ = tcm.pick(N=303)
    return [fig_success(curves, out_dir, sa), fig_gamma(curves, out_dir),
            fig_energy(load("algorithms_energy").results[0], out_dir),
            fig_tcm_success(rates, out_dir, _CFG["tcm_N"]), fig_tcm_path(p, out_dir, 303)]
