"""Online learning in soft committee machines: learning curves with SGD, escape times, rates, K > M.

Theory curves (the ODEs, plateaus, asymptotic rates) are computed live; the SGD runs are read from
``figures/data`` (``DATASETS``): online SGD by the exact overlap chain of
:func:`statmech.simulate.online_sgd` (``statmech figures --recompute online_sgd_curves`` etc.).
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from . import save
from ._data import DataSpec, call, load

#: the learning-curve cases: (K = M, activation, lr), saad-solla convention
CURVES = ((2, "erf", 0.5), (3, "erf", 0.5), (2, "relu", 0.2), (3, "relu", 0.1))
#: alpha range of each case
CURVE_ALPHA = {(2, "erf"): 600.0, (3, "erf"): 900.0, (2, "relu"): 500.0, (3, "relu"): 900.0}
CURVE_N = 1000
CURVE_SEEDS = 6
#: the escape-time study (K = M = 2 erf, lr = 0.5)
ESCAPE_NS = (250, 500, 1000, 2000)
ESCAPE_SEEDS = 30
ESCAPE_ALPHA = 600.0
#: K > M with output noise (Goldt et al. 2019)
OVER_M = 2
OVER_KS = (2, 3, 4)
OVER_LRS = (0.1, 0.2, 0.4)
OVER_NOISE = 0.1


def initial_state(K, M, seed=1):
    """The initial overlaps of the learning curves: Q0 = 0.2 I, R0 = 1e-3 Z (Z standard normal)."""
    rng = np.random.default_rng(seed)
    return 0.2 * np.eye(K), 1e-3 * rng.standard_normal((K, M))


def sgd_curve(K, activation, lr, alpha_max, N, n_seeds, seed=1):
    """Online SGD (overlap chain) from :func:`initial_state`: eps_g mean and standard error on a grid."""
    from ..simulate.online import online_sgd
    Q0, R0 = initial_state(K, K, seed)
    al = np.concatenate([[0.0], np.geomspace(1.0, alpha_max, 40)])
    s = online_sgd(K, K, activation, lr, al, N=N, n_seeds=n_seeds, Q0=Q0, R0=R0, seed=seed, executor="serial",
                   progress=False)
    return {"alphas": al, "eps_mean": s.eps_g_mean, "eps_err": s.eps_g_err, "escape": s.escape,
            "escape_level": s.escape_level}


def escape_times(N, n_seeds, alpha_max=ESCAPE_ALPHA, lr=0.5, seed=5):
    """Escape times of K = M = 2 erf online SGD at input dimension N from w_i ~ N(0, 0.2 I_N)."""
    from ..simulate.online import online_sgd
    s = online_sgd(2, 2, "erf", lr, [0.0, alpha_max], N=N, n_seeds=n_seeds, q0=0.2, seed=seed, executor="serial",
                   progress=False)
    return {"escape": s.escape, "escape_level": s.escape_level, "N": N}


def overparam_final(K, M, lrs, noise, alpha_max=5000.0, seed=3):
    """Final eps_g of the ODEs (teacher output noise ``noise``) from small random overlaps, per lr:
    the end of a long integration, with the change over its last half as the convergence check."""
    from .. import scm
    rng = np.random.default_rng(seed)
    Q0 = 0.2 * np.eye(K)
    R0 = 1e-3 * rng.standard_normal((K, M))
    out = []
    for lr in lrs:
        tr = scm.online(K, M, "erf", lr, [alpha_max / 2, alpha_max], Q0=Q0, R0=R0, noise=noise, estimate_error=False)
        out.append((float(tr.eps_g[-1]), float(abs(tr.eps_g[-1] - tr.eps_g[0]))))
    return {"lrs": np.array(lrs, dtype=float), "eps_final": np.array([e for e, _ in out]),
            "change": np.array([c for _, c in out])}


DATASETS = (
    DataSpec("online_sgd_curves", "online",
             f"online SGD (exact overlap chain), N = {CURVE_N}, {CURVE_SEEDS} seeds, K = M = 2, 3, erf and ReLU, "
             "saad-solla convention, from Q0 = 0.2 I, R0 = 1e-3 Z",
             tuple(call("statmech.figures.online:sgd_curve", K=K, activation=act, lr=lr, alpha_max=CURVE_ALPHA[K, act],
                        N=CURVE_N, n_seeds=CURVE_SEEDS, seed=1) for K, act, lr in CURVES),
             small_calls=(call("statmech.figures.online:sgd_curve", K=2, activation="erf", lr=0.5, alpha_max=20.0,
                               N=200, n_seeds=2, seed=1),),
             check="statmech.figures.online:check_small"),
    DataSpec("online_escape", "online",
             f"escape times of K = M = 2 erf online SGD (lr = 0.5) from random weights, N = "
             f"{', '.join(map(str, ESCAPE_NS))}, {ESCAPE_SEEDS} seeds each (exact overlap chain)",
             tuple(call("statmech.figures.online:escape_times", N=N, n_seeds=ESCAPE_SEEDS, seed=5) for N in ESCAPE_NS),
             small_calls=(call("statmech.figures.online:escape_times", N=100, n_seeds=2, alpha_max=60.0, seed=5),),
             check="statmech.figures.online:check_small"),
    DataSpec("online_overparam", "online",
             f"final eps_g of the ODEs with teacher output noise {OVER_NOISE}, erf, M = {OVER_M}, K = "
             f"{', '.join(map(str, OVER_KS))}, lr = {', '.join(map(str, OVER_LRS))}",
             tuple(call("statmech.figures.online:overparam_final", K=K, M=OVER_M, lrs=list(OVER_LRS), noise=OVER_NOISE)
                   for K in OVER_KS),
             small=(0,)),
)


def check_small(stored, new):
    """The --small recomputation is a different (smaller) call: check that it runs and is sane."""
    for r in new.results:
        for k, v in r.items():
            arr = np.asarray(v, dtype=float)
            assert not np.isnan(arr).any(), f"{k} has NaN"


# ------------------------------------------------------------------ figures
def _curves(out):
    import matplotlib.pyplot as plt
    from .. import scm
    data = load("online_sgd_curves")
    fig, axes = plt.subplots(2, 2, figsize=(10, 7.2))
    for ax, (K, act, lr) in zip(axes.ravel(), CURVES):
        Q0, R0 = initial_state(K, K)
        amax = CURVE_ALPHA[K, act]
        al = np.geomspace(0.1, amax, 300)
        tr = scm.online(K, K, act, lr, al, Q0=Q0, R0=R0, estimate_error=False)
        ax.loglog(al, tr.eps_g, "k-", lw=1.2, label="ODE")
        d = data.pick(K=K, activation=act)
        a, m, e = d["alphas"][1:], d["eps_mean"][1:], d["eps_err"][1:]
        ax.errorbar(a, m, yerr=e, fmt="o", ms=3, color="C0", label=f"SGD N = {CURVE_N} ({CURVE_SEEDS} seeds)")
        p = tr.plateau
        if p is not None:
            ax.axhline(p.height, color="C3", ls="--", lw=0.8, label=f"plateau {p.height:.4g}")
            ax.axvline(p.entry, color="C3", ls=":", lw=0.8)
            if p.exit is not None:
                ax.axvline(p.exit, color="C3", ls=":", lw=0.8, label=f"entry/exit {p.entry:.0f}/{p.exit:.0f}")
        ax.set_ylim(max(1e-8, float(tr.eps_g.min()) * 0.5), float(tr.eps_g.max()) * 2)
        ax.set_title(f"{act}, K = M = {K}, lr = {lr} (saad-solla)", fontsize=9)
        ax.set_xlabel(r"$\alpha$")
        ax.set_ylabel(r"$\epsilon_g$")
        ax.legend(fontsize=7)
    fig.tight_layout()
    return [save(fig, Path(out) / "online_curves.png")]


def escape_summary(data, lam):
    """(ln N, mean escape, standard error, std, predicted std) per N from the stored runs."""
    rows = []
    for r in data.results:
        e = np.asarray(r["escape"], dtype=float)
        e = e[np.isfinite(e)]
        rows.append((math.log(r["N"]), e.mean(), e.std(ddof=1) / math.sqrt(e.size), e.std(ddof=1), e.size))
    return np.array(rows)


def _escape(out):
    import matplotlib.pyplot as plt
    from .. import scm
    data = load("online_escape")
    lam = scm.online_plateau(2, 2, "erf", 0.5).escape_rate
    rows = escape_summary(data, lam)
    lnN, mean, err = rows[:, 0], rows[:, 1], rows[:, 2]
    # theory: alpha_esc = c + ln(N)/(2 lambda); c fitted (weighted), the slope is predicted
    w = 1.0 / err ** 2
    c = float(np.sum(w * (mean - lnN / (2 * lam))) / np.sum(w))
    slope_fit = np.polyfit(lnN, mean, 1, w=1.0 / err)[0]
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 3.8))
    a1.errorbar(lnN, mean, yerr=err, fmt="o", label=f"SGD, {ESCAPE_SEEDS} seeds per N")
    x = np.linspace(lnN.min() - 0.2, lnN.max() + 0.2, 50)
    a1.plot(x, c + x / (2 * lam), "k-", label=rf"$c + \ln N/(2\lambda)$, $\lambda$ = {lam:.5f} (slope {1 / (2 * lam):.2f})")
    a1.set_xlabel(r"$\ln N$")
    a1.set_ylabel("escape time (alpha)")
    a1.set_title(f"K = M = 2 erf, lr = 0.5: fitted slope {slope_fit:.1f}", fontsize=9)
    a1.legend(fontsize=7)
    # the spread: alpha_esc - mean = -(ln|z| - E ln|z|)/lambda, z ~ N(0, 1) (one unstable direction)
    pooled = np.concatenate([np.asarray(r["escape"])[np.isfinite(r["escape"])] - m
                             for r, m in zip(data.results, mean)])
    a2.hist(lam * pooled, bins=30, density=True, alpha=0.6, label="SGD (all N, centred)")
    xs = np.linspace(-4, 6, 400)
    e_lnz = -0.5 * (np.euler_gamma + math.log(2.0))        # E ln|z|
    # X = -(ln|z| - E ln|z|): |z| = u = exp(E ln|z| - X), density 2 phi(u) u
    u = np.exp(e_lnz - xs)
    dens = 2.0 * np.exp(-0.5 * u * u) / math.sqrt(2 * math.pi) * u
    a2.plot(xs, dens, "k-", label=r"$-(\ln|z| - E\ln|z|)$, $z\sim N(0,1)$")
    a2.set_xlabel(r"$\lambda\,(\alpha_{esc} - \langle\alpha_{esc}\rangle)$")
    a2.set_ylabel("density")
    a2.set_title(f"spread: std {rows[:, 3].mean() * lam:.2f}/lambda (predicted pi/(2 sqrt 2) = 1.11)", fontsize=9)
    a2.legend(fontsize=7)
    fig.tight_layout()
    return [save(fig, Path(out) / "online_escape.png")]


def _rates(out):
    import matplotlib.pyplot as plt
    from .. import scm
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for (K, act), col in zip(((2, "erf"), (3, "erf"), (2, "relu")), ("C0", "C1", "C2")):
        a = scm.online_asymptotics(K, K, act)
        lrs = np.linspace(1e-3, a.lr_max, 400)
        rs = np.array([a.rates(lr) for lr in lrs])
        ax.plot(lrs, rs.min(axis=1), "-", color=col, label=f"{act} K = {K}: slowest rate")
        ax.plot(lrs, rs[:, 0], ":", color=col, lw=0.8)
        ax.plot(lrs, rs[:, 1], "--", color=col, lw=0.8)
        ax.plot([a.lr_opt], [a.rate_opt], "o", color=col,
                label=f"lr_opt = {a.lr_opt:.4f}, rate {a.rate_opt:.4f} ({a.limited_by})")
        ax.axvline(a.lr_max, color=col, lw=0.6, ls="-.", label=f"lr_max = {a.lr_max:.4f}")
    ax.set_xlabel("lr (saad-solla)")
    ax.set_ylabel("decay rate at the perfect solution")
    ax.set_title("slowest decay rate (solid); s-block (dotted), r-block (dashed)", fontsize=9)
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=6)
    fig.tight_layout()
    return [save(fig, Path(out) / "online_rates.png")]


def _overparam(out):
    import matplotlib.pyplot as plt
    data = load("online_overparam")
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 3.8))
    for K in OVER_KS:
        d = data.pick(K=K)
        a1.loglog(d["lrs"], d["eps_final"], "o-", label=f"K/M = {K / OVER_M:g}")
    a1.set_xlabel("lr (saad-solla)")
    a1.set_ylabel(r"final $\epsilon_g$")
    a1.set_title(f"erf, M = {OVER_M}, output noise {OVER_NOISE}", fontsize=9)
    a1.legend(fontsize=7)
    for j, lr in enumerate(OVER_LRS):
        a2.plot([K / OVER_M for K in OVER_KS], [data.pick(K=K)["eps_final"][j] / (lr * OVER_NOISE ** 2) for K in OVER_KS],
                "o-", label=f"lr = {lr}")
    a2.set_xlabel("K/M")
    a2.set_ylabel(r"final $\epsilon_g$ / (lr $\sigma^2$)")
    a2.set_title("grows with K/M (Goldt et al. 2019)", fontsize=9)
    a2.legend(fontsize=7)
    fig.tight_layout()
    return [save(fig, Path(out) / "online_overparam.png")]


PARTS = ("_curves", "_escape", "_rates", "_overparam")


def make(out_dir):
    return [p for part in PARTS for p in globals()[part](out_dir)]
