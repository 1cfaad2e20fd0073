r"""Spherical perceptron with negative margin (``kappa < 0``): gradient-descent storability.

Problem: ``N`` weights with ``|w|^2 = N``, ``P = alpha N`` patterns ``xi_mu`` (iid N(0, 1)
entries, or +-1), all labels +1 (w.l.o.g. for symmetric patterns).  Pattern ``mu`` is
satisfied when ``h_mu = w . xi_mu / sqrt(N) >= kappa``.  For ``kappa < 0`` the set of
solutions on the sphere is non-convex and linear programming (:mod:`statmech.simulate.lp`)
no longer decides storability.  A solution found by any algorithm proves storability,
so the success probability of an algorithm gives a **lower bound** on the capacity.

What is minimized
-----------------
The squared hinge ``E(w) = 1/2 sum_mu max(0, kappa' - h_mu)^2`` on the sphere, with
``kappa' = kappa + delta`` (``delta = 1e-3`` by default): the squared hinge approaches the
boundary of its zero set only asymptotically (the gradient vanishes with the residuals),
so it is minimized at a margin slightly above the one that is checked.  Shifting the
margin by ``delta`` moves the threshold by ``(d alpha_c/d kappa) delta``, below 1e-3 in
``alpha`` for ``kappa >= -1`` (the check itself is at ``kappa``).

Algorithm (``method``; kernel :func:`statmech.simulate._gd_kernels.descend`): Riemannian
gradient descent on the sphere, from a uniformly random ``w0``.  Each iteration takes the
tangent gradient ``g_t = g - (g.w/N) w``, forms ``v <- beta_k v - eta g_t`` and the trial
point ``w' = sqrt(N)(w + v)/|w + v|`` (one pass over the patterns).

* ``"gd"``: ``beta_k = 0``; the step is accepted if ``E(w') <= E(w)`` (then
  ``eta *= 1.05``), rejected otherwise (``eta /= 2``): monotone GD with a self-tuned step.
* ``"nesterov"`` (default): the same with Nesterov momentum ``beta_k = k/(k+3)``, ``k`` the
  number of accepted steps since the last restart; a step that increases ``E`` is rejected
  and restarts the momentum (O'Donoghue & Candes 2015, function-value restart).
  ``E`` is non-increasing in both.  Initial step ``eta0 = 1/(1 + sqrt(alpha))^2`` (the
  inverse of the largest eigenvalue of ``X^T X / N`` for ``P = alpha N`` Gaussian rows).

Stopping rule
-------------
* **SAT**: every ``h_mu >= kappa`` on the current iterate, then re-verified on the returned
  weights in float64 with a rigorous rounding bound (:func:`verify_solution`).
* **UNSAT for GD** (``"stalled"``): after ``min_iter`` iterations, the cost did not decrease by
  a fraction ``rel_tol`` (1e-3) between iteration ``t/2`` and ``t``.  Justification: in the
  SAT phase ``E`` goes to 0 (exponentially, or as a power law ``t^-a`` near the threshold,
  whose relative decrease between ``t/2`` and ``t`` is the constant ``1 - 2^-a``), so the
  log-time criterion never stops a run that is reaching zero, for any ``a > 0.0015``; in the
  UNSAT phase ``E -> E_inf > 0`` and the relative decrease over a doubling of time goes to 0.
* ``"max_iter"``: the iteration budget ran out (counted as not found, reported separately).

Float32 storage: patterns are stored as float32 (half the memory traffic of the
memory-bound kernel); the instance *is* the float32-rounded pattern matrix, and fields,
cost, gradient and weights are float64.  The decision does not depend on it (test:
float32 and float64 storage of the same draws give the same outcomes).

Finite-size analysis: at every ``(kappa, N, alpha)`` independent instances (instance ``i``:
:func:`~statmech.simulate.finite_size.instance_rng` ``(seed, N, P, i)``, the same patterns for
every ``kappa``); the SAT fraction is fitted by the probit maximum likelihood of
:func:`~statmech.simulate.finite_size.transition_point` (``alpha_50(N)`` and its standard
error) and extrapolated as ``alpha_50(N) = alpha_GD + b/N`` (weighted least squares,
:func:`~statmech.simulate.finite_size.extrapolate`).  The data set is produced by
:func:`negative_margin_data` through :func:`statmech.sweep.sweep` (executors, progress bar,
checkpoint/resume, atomic output) and stored in ``figures/data/negative_margin_gd.json``.
"""
from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import check_choice, check_int, check_range
from . import _gd_kernels as _K
from ._result import Simulation
from .enumeration import random_patterns
from .finite_size import extrapolate, instance_rng, transition_point

__all__ = ["GDResult", "hinge_cost", "verify_solution", "gd_minimize",
           "gd_instance", "GD_SETTINGS", "PLAN", "SMALL_PLAN", "DATA_FILE", "negative_margin_data",
           "load_negative_margin_data", "lp_agreement", "GDThreshold", "gd_thresholds", "gd_extrapolation"]

GD_SETTINGS = {"method": "nesterov", "delta": 1e-3, "max_iter": 20000, "min_iter": 100,
               "rel_tol": 1e-3}
"""Default algorithm settings of :func:`gd_minimize` (recorded in the data file)."""

DATA_FILE = Path(__file__).resolve().parents[2] / "figures" / "data" / "negative_margin_gd.json"


def _patterns_array(patterns):
    X = np.asarray(patterns)
    if X.ndim != 2 or X.shape[0] < 1 or X.shape[1] < 2:
        raise ValueError(f"patterns must be a 2-d array (P, N) with P >= 1, N >= 2, got shape {X.shape}")
    if X.dtype not in (np.float32, np.float64):
        X = X.astype(np.float64)
    X = np.ascontiguousarray(X)
    if not np.all(np.isfinite(X)):
        raise ValueError("patterns must be finite")
    return X


def _weights(w, N):
    w = np.array(w, dtype=np.float64).reshape(-1)
    if w.shape != (N,) or not np.all(np.isfinite(w)) or not np.any(w):
        raise ValueError(f"w must be a finite non-zero vector of length N = {N}")
    return w * (math.sqrt(N) / np.linalg.norm(w))


def hinge_cost(w, patterns, kappa):
    """Squared-hinge cost ``E = 1/2 sum_mu max(0, kappa - h_mu)^2`` and its Euclidean gradient.

    ``h_mu = w . xi_mu / sqrt(N)`` with ``w`` as given (not normalized).  Returns
    ``(E, grad)``; ``grad = -(1/sqrt(N)) sum_mu max(0, kappa - h_mu) xi_mu``.
    """
    X = _patterns_array(patterns)
    w = np.array(w, dtype=np.float64).reshape(-1)
    if w.shape != (X.shape[1],):
        raise ValueError(f"w must have length N = {X.shape[1]}, got shape {w.shape}")
    kappa = float(check_range("kappa", kappa))
    g = np.empty(X.shape[1])
    E, _ = _K.cost_grad(X, w, kappa, kappa, g)
    return float(E), g


def verify_solution(w, patterns, kappa):
    """Exact check that ``w`` (rescaled to ``|w|^2 = N``) has every ``h_mu >= kappa``.

    Fields are computed in float64 from the stored patterns; the rounding error of each is
    bounded by ``gamma sum_i |xi_mu,i w_i| / sqrt(N)`` (dot product, any summation order,
    Higham Thm 3.5) plus ``gamma |h_mu|`` (the normalization of ``w`` and the division), with
    ``gamma = (N+4) u/(1 - (N+4) u)``, ``u = 2^-53``.  Returns
    ``(ok, margin)`` with ``margin`` a certified lower bound on ``min_mu h_mu``.
    """
    X = _patterns_array(patterns)
    P, N = X.shape
    w = _weights(w, N)
    u = 2.0 ** -53
    gam = (N + 4) * u / (1.0 - (N + 4) * u)
    aw = np.abs(w)
    margin = math.inf
    for lo in range(0, P, 4096):  # float64 copies of 4096 rows at a time
        X64 = X[lo:lo + 4096].astype(np.float64)
        h = X64 @ w / math.sqrt(N)
        err = gam * ((np.abs(X64) @ aw) / math.sqrt(N) + np.abs(h))
        margin = min(margin, float(np.min(h - err)))
    return bool(margin >= float(kappa)), margin


def _patterns(rng, P, N, dist="gaussian", dtype=np.float32):
    """The instance's patterns: :func:`statmech.simulate.enumeration.random_patterns`, Gaussian
    and stored as float32 by default."""
    return random_patterns(rng, P, N, dist, dtype)


@dataclass(frozen=True, repr=False)
class GDResult(Simulation):
    """Outcome of :func:`gd_minimize`.

    ``sat``: the returned ``w`` (``|w|^2 = N``) has every ``h_mu >= kappa``, certified by
    :func:`verify_solution` (``margin`` is the certified ``min_mu h_mu``).  ``status``:
    ``"sat"``, ``"stalled"`` (UNSAT for GD) or ``"max_iter"``.  ``cost``: squared hinge at
    margin ``kappa + delta`` of ``w`` (the headline); ``n_violated``: number of ``h_mu < kappa``.
    ``history``: cost after each iteration.  ``residual``: max-norm of the tangent (Riemannian)
    gradient of that cost at ``w``.

    Protocol: ``converged`` = the stopping rule fired (``status`` ``"sat"`` or ``"stalled"``;
    False for ``"max_iter"``: a per-run outcome, not an exception); ``iterations`` as above;
    ``error`` 0.0 (the cost is evaluated exactly); ``ansatz`` ``"-"``.
    """
    sat: bool
    status: str
    cost: float
    margin: float
    n_violated: int
    iterations: int
    evaluations: int
    w: np.ndarray
    params: dict
    history: np.ndarray = field(repr=False)
    residual: float = 0.0

    headline = "cost"
    error = 0.0

    @property
    def converged(self):
        """The stopping rule fired (SAT or stalled) before the iteration budget ran out."""
        return self.status != "max_iter"


def gd_minimize(patterns, kappa, *, w0=None, seed=0, method="nesterov", delta=1e-3,
                max_iter=20000, min_iter=100, rel_tol=1e-3, eta0=None) -> GDResult:
    """Minimize the squared-hinge cost on the sphere by (accelerated) gradient descent.

    See the module docstring for the algorithm and the stopping rule.  ``w0``: initial
    weights (default: uniform on the sphere from ``numpy.random.default_rng(seed)``).
    ``patterns`` of shape (P, N), float32 or float64 (kept as given), labels all +1.
    """
    X = _patterns_array(patterns)
    P, N = X.shape
    kappa = float(check_range("kappa", kappa))
    check_choice("method", method, ("gd", "nesterov"))
    delta = float(check_range("delta", delta, 0.0, lo_open=True))
    max_iter = check_int("max_iter", max_iter, lo=1)
    min_iter = check_int("min_iter", min_iter, lo=1)
    rel_tol = float(check_range("rel_tol", rel_tol, 0.0, 1.0))
    if w0 is None:
        w0 = np.random.default_rng(check_int("seed", seed, lo=0)).standard_normal(N)
    w = _weights(w0, N)
    eta = 1.0 / (1.0 + math.sqrt(P / N)) ** 2 if eta0 is None else float(check_range("eta0", eta0, 0.0, lo_open=True))
    hist = np.empty(max_iter + 1)
    status, E, nv, it, nev, eta_end = _K.descend(X, w, kappa + delta, kappa, eta, method == "nesterov",
                                                 max_iter, min_iter, rel_tol, hist)
    ok, margin = verify_solution(w, X, kappa)
    if status == _K.SAT and not ok:  # the kernel's check and the certified one disagree at rounding level
        status = _K.STALLED
    params = {"kappa": kappa, "method": method, "delta": delta, "max_iter": max_iter,
              "min_iter": min_iter, "rel_tol": rel_tol, "eta0": eta, "eta_end": float(eta_end),
              "dtype": str(X.dtype)}
    g = np.empty(N)
    _K.cost_grad(X, w, kappa + delta, kappa, g)
    g_tan = g - (float(g @ w) / N) * w
    return GDResult(bool(ok), _K.STATUS_NAMES[status], float(E), margin, int(nv), int(it), int(nev),
                    w, params, hist[: it + 1].copy(), float(np.max(np.abs(g_tan))))


def gd_instance(point):
    """One random instance (sweep task): ``point`` = dict with ``kappa, N, alpha, i, seed`` and
    optionally ``dist`` and the :data:`GD_SETTINGS` keys.  Patterns and ``w0`` come from
    ``instance_rng(seed, N, P, i)`` with ``P = round(alpha N)``.  Returns a JSON-ready dict
    (``sat, status, cost_per_N, n_violated, iterations, evaluations, seconds``)."""
    N, i, seed = int(point["N"]), int(point["i"]), int(point["seed"])
    P = int(round(float(point["alpha"]) * N))
    rng = instance_rng(seed, N, P, i)
    X = _patterns(rng, P, N, point.get("dist", "gaussian"))
    w0 = rng.standard_normal(N)
    settings = {k: point.get(k, v) for k, v in GD_SETTINGS.items()}
    t0 = time.perf_counter()
    r = gd_minimize(X, float(point["kappa"]), w0=w0, **settings)
    return {"sat": r.sat, "status": r.status, "cost_per_N": r.cost / N, "n_violated": r.n_violated,
            "iterations": r.iterations, "evaluations": r.evaluations,
            "seconds": round(time.perf_counter() - t0, 3)}


# --------------------------------------------------------------------------- data set
# Plan of the stored data set: per kappa the centre c and spacing s of a 5-point alpha grid at
# N = 250 (c from pilot runs at N = 250, 4 instances per alpha), the spacing shrinking as
# (250/N)^(1/3) with N, and the instances per alpha at N = 250, 500, 1000.  Sized for about
# 80 minutes of one (shared) core; see docs/negative_margin.md.
_PLAN_SPEC = ((0.5, 0.94, 0.04, (16, 16, 16)), (0.0, 1.96, 0.08, (16, 16, 16)),
              (-0.25, 2.90, 0.12, (16, 16, 16)), (-0.5, 4.55, 0.18, (16, 16, 16)),
              (-1.0, 10.9, 0.45, (16, 12, 4)), (-1.5, 29.0, 1.2, (12, 6)))


def _make_plan(spec, sizes=(250, 500, 1000)):
    plan = []
    for kappa, c, s, counts in spec:
        for N, n in zip(sizes, counts):
            sp = s * (250.0 / N) ** (1.0 / 3.0)
            plan.append((kappa, N, tuple(round(c + j * sp, 4) for j in (-2, -1, 0, 1, 2)), n))
    # cheapest cells first (cost ~ alpha N^2), so that an interrupted run has completed cells
    return tuple(sorted(plan, key=lambda p: p[2][2] * p[1] ** 2))


PLAN = _make_plan(_PLAN_SPEC)
"""Default plan: tuple of ``(kappa, N, alphas, instances per alpha)``."""
SMALL_PLAN = ((-0.5, 40, (3.6, 4.1, 4.6, 5.1), 6), (-0.5, 80, (3.8, 4.2, 4.6, 5.0), 6))
"""Small plan for the regeneration test (a few seconds)."""


def _points(kappa, N, alphas, n, seed, dist):
    return [{"kappa": kappa, "N": N, "alpha": a, "i": i, "seed": seed, "dist": dist}
            for a in alphas for i in range(n)]


def _run_cell(pts, raw, executor, workers, progress):
    """Results of one (kappa, N) cell by :func:`statmech.sweep.sweep` (checkpointed, resumable;
    a finished raw file with the same points is reused)."""
    from ..sweep import sweep
    p = pts[0]
    return sweep(gd_instance, pts, raw, executor=executor, workers=workers, progress=progress,
                 checkpoint_every=30.0, desc=f"GD kappa={p['kappa']} N={p['N']}")


def negative_margin_data(path=None, *, small=False, plan=None, seed=2025, dist="gaussian",
                         executor="serial", workers=None, progress=True):
    """Run the gradient-descent storability experiment and write the data file (atomically).

    ``plan``: tuple of ``(kappa, N, alphas, n_instances)`` (default :data:`PLAN`;
    ``small=True``: :data:`SMALL_PLAN`).  Each ``(kappa, N)`` cell is one
    :func:`statmech.sweep.sweep` over its instances (``executor``/``workers`` as there),
    checkpointed in ``<path>.cells/``; a restarted run resumes the interrupted cell and reuses
    the finished ones.  The data file records the seed, sizes, instance counts, kappa values,
    algorithm settings, package version and the call that regenerates it; the cell directory
    is removed once it is written.  Returns the data dict.
    """
    import shutil
    from .. import __version__
    from ..io import atomic_write_text
    if plan is None:
        plan = SMALL_PLAN if small else PLAN
    plan = tuple((float(k), check_int("N", N, lo=2), tuple(float(a) for a in al), check_int("n", n, lo=1))
                 for k, N, al, n in plan)
    if not plan:
        raise ValueError("plan must contain at least one (kappa, N, alphas, n_instances) entry")
    seed = check_int("seed", seed, lo=0)
    check_choice("dist", dist, ("gaussian", "binary"))
    path = Path(DATA_FILE if path is None else path)
    cell_dir = path.with_name(path.name + ".cells")
    cell_dir.mkdir(parents=True, exist_ok=True)
    cells = []
    for kappa, N, alphas, n in plan:
        pts = _points(kappa, N, alphas, n, seed, dist)
        res = _run_cell(pts, cell_dir / f"kappa{kappa:+.3f}_N{N}.json", executor, workers, progress)
        for a in alphas:
            out = [r for p, r in zip(pts, res) if p["alpha"] == a]
            cells.append({"kappa": kappa, "N": N, "alpha": a, "P": int(round(a * N)), "n": len(out),
                          "n_sat": sum(o["sat"] for o in out), "instances": out})
    default = plan == (SMALL_PLAN if small else PLAN)
    call = (f"negative_margin_data(small={small}, seed={seed}, dist={dist!r})" if default
            else "negative_margin_data(plan=PLAN_RECORDED_HERE, seed=..., dist=...)")
    data = {"description": "Gradient descent on the squared hinge, spherical perceptron, labels +1; "
                           "per-instance outcomes at each (kappa, N, alpha)",
            "version": __version__, "seed": seed, "dist": dist, "settings": dict(GD_SETTINGS),
            "kappa": sorted({p[0] for p in plan}), "N": sorted({p[1] for p in plan}),
            "plan": [[p[0], p[1], list(p[2]), p[3]] for p in plan],
            "command": "python -c \"from statmech.simulate.negative_margin import negative_margin_data; "
                       + call + "\"",
            "cells": cells}
    atomic_write_text(path, json.dumps(data, indent=1, sort_keys=True) + "\n")
    shutil.rmtree(cell_dir, ignore_errors=True)
    return data


def lp_agreement(data, kappa, N):
    """Compare the stored GD outcomes at ``kappa >= 0`` and size ``N`` with the exact LP/LDP
    decision (:func:`statmech.simulate.lp.max_stability`) on the same regenerated instances.

    Returns a list of ``(alpha, n, both_sat, both_unsat, lp_only, gd_only)`` per alpha;
    ``gd_only`` must be 0 (a GD solution is certified), ``lp_only`` counts the instances
    GD missed.  Also the largest LP margin of a missed instance, ``kappa_max - kappa``.
    """
    from .lp import max_stability
    kappa = float(check_range("kappa", kappa, 0.0))
    rows, worst = [], 0.0
    for c in data["cells"]:
        if c["kappa"] != kappa or c["N"] != N:
            continue
        counts = [0, 0, 0, 0]
        for i, o in enumerate(c["instances"]):
            rng = instance_rng(data["seed"], N, c["P"], i)
            X = _patterns(rng, c["P"], N, data.get("dist", "gaussian"))
            st = max_stability(X, np.ones(c["P"]))
            lp_sat = st.separable if kappa == 0.0 else st.kappa_max >= kappa
            counts[(0 if o["sat"] else 1) if lp_sat == o["sat"] else (2 if lp_sat else 3)] += 1
            if lp_sat and not o["sat"]:
                worst = max(worst, st.kappa_max - kappa)
        rows.append((c["alpha"], c["n"], *counts))
    return rows, worst


def load_negative_margin_data(path=None):
    """Read the data file written by :func:`negative_margin_data` (default: the stored one)."""
    return json.loads(Path(DATA_FILE if path is None else path).read_text())


@dataclass(frozen=True, repr=False)
class GDThreshold(Simulation):
    """50 % point of the GD success probability at one ``(kappa, N)`` (probit MLE).

    ``converged`` is False when the fit failed or the alpha grid does not bracket the 50 %
    point (the success fraction never falls below, or never rises above, 1/2); then
    ``alpha_50`` and ``width`` are NaN and ``alpha_50_err`` is inf, and the cell is left out
    of :func:`gd_extrapolation`.

    Protocol: the headline is ``alpha_50`` with ``error`` = ``alpha_50_err``; ``iterations``
    the Nelder--Mead iterations of the fit (0 when not fitted); ``residual`` 0.0;
    ``ansatz`` ``"-"``.
    """
    kappa: float
    N: int
    alpha_50: float
    alpha_50_err: float
    width: float
    n_instances: int
    seconds_per_instance: float
    converged: bool
    iterations: int = 0

    headline = "alpha_50"
    residual = 0.0

    @property
    def error(self):
        """The standard error of ``alpha_50``."""
        return self.alpha_50_err


def gd_thresholds(data=None):
    """Per ``(kappa, N)`` 50 % points of the stored data (list of :class:`GDThreshold`)."""
    data = load_negative_margin_data() if data is None else data
    groups = {}
    for c in data["cells"]:
        groups.setdefault((c["kappa"], c["N"]), []).append(c)
    out = []
    for (kappa, N), cells in sorted(groups.items()):
        cells.sort(key=lambda c: c["alpha"])
        x = np.array([c["alpha"] for c in cells])
        k = np.array([c["n_sat"] for c in cells])
        n = np.array([c["n"] for c in cells])
        secs = float(np.mean([o["seconds"] for c in cells for o in c["instances"]]))
        if np.any(k > n / 2) and np.any(k < n / 2):
            fit = transition_point(x, k, n)
            out.append(GDThreshold(kappa, N, fit.x50, fit.x50_err, fit.width, int(n.sum()), secs,
                                   fit.converged, fit.iterations))
        else:
            out.append(GDThreshold(kappa, N, math.nan, math.inf, math.nan, int(n.sum()), secs, False))
    return out


def gd_extrapolation(data=None, exponents=(1.0,)):
    """``{kappa: Extrapolation}``: ``alpha_50(N) = alpha_GD + sum_k b_k N^-e_k`` per kappa
    (weighted least squares; needs ``len(exponents) + 1`` sizes)."""
    by = {}
    for t in gd_thresholds(data):
        by.setdefault(t.kappa, []).append(t)
    out = {}
    for kappa, ts in by.items():
        ts = [t for t in ts if t.converged and math.isfinite(t.alpha_50_err)]
        if len(ts) > len(exponents):
            out[kappa] = extrapolate([t.N for t in ts], [t.alpha_50 for t in ts],
                                     [t.alpha_50_err for t in ts], exponents)
    return out
