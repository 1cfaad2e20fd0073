r"""Finite-N simulations of a GLM specification: exact ERM and GAMP (``docs/glm.md``, "Simulations").

An instance (:func:`glm_instance`): teacher ``w*`` from the model's prior (a Gaussian prior
rescaled to ``||w*||^2 = rho N`` exactly), inputs ``X`` with iid N(0, 1) entries, ``P = alpha N``
labels drawn from the channel.  Two routes to the estimator:

* **ERM** (:func:`erm_fit`): the exact minimiser of ``sum_mu loss(y_mu, h_mu) + (lam/2)|w|^2``.
  Square loss: the normal equations.  Hinge: its dual, a box-constrained quadratic programme, by
  L-BFGS-B with the exact gradient, polished by dual coordinate descent
  (:func:`statmech.simulate._glm_nb.hinge_dual_cd`) to a relative duality gap of 1e-9.  Any other loss with a
  continuous derivative (logistic, squared hinge, exponential, a smooth sympy loss): L-BFGS with
  the exact gradient of the compiled loss (:class:`statmech.glm.Denoisers`), to a projected
  gradient of 1e-10 relative.
* **GAMP** (:func:`gamp`; Rangan 2011, ISIT, with the scalar variances of the Gaussian ensemble):
  the output function of ERM is ``(prox_{V loss(y, .)}(omega) - omega)/V`` and the ridge input
  ``B/(A + lam)`` -- a fixed point satisfies ``lam w + F^T loss'(F w) = 0``, so it *is* the ERM
  minimiser; with the teacher's channel and prior it is Bayes-optimal AMP, whose fixed point is
  the state-evolution fixed point of :func:`statmech.glm.bayes_optimal` reached from an
  uninformative start (the algorithmic branch).  Damped updates; converged when the relative
  change of ``w_hat`` is below ``tol``.

:func:`glm_simulation` runs many instances at several N (any ``concurrent.futures`` executor or
dask client, progress bar) and extrapolates every observable in ``1/N`` by weighted least squares
(:func:`statmech.simulate.finite_size.extrapolate`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import sympy as sp

from ..errors import check_choice, check_int, check_range
from ..glm import Denoisers, Model
from ..result import Result
from ._glm_nb import hinge_dual_cd
from .finite_size import extrapolate, instance_rng, map_tasks

__all__ = ["glm_instance", "erm_fit", "gamp", "observables", "glm_simulation", "glm_simulation_point", "GLMSimulation"]

OBSERVABLES = ("m", "q", "generalization_error", "training_error", "training_loss")
#: relative duality gap of the hinge solves (the objective to 1e-9; the minimiser to ~1e-4 relative or
#: better -- GAMP, which converges to the exact minimiser, agrees to 1e-7 -- far below the statistical
#: errors of the simulations, >= 1e-3)
HINGE_GAP = 1e-9


def glm_instance(model, N, alpha, rng):
    """``(X, y, w_star)`` of one instance (``P = round(alpha N)`` samples)."""
    N = check_int("N", N, 2)
    P = max(1, int(round(float(alpha) * N)))
    mix = model.prior.mixture
    comp = rng.choice(mix.shape[0], size=N, p=mix[:, 0] / mix[:, 0].sum())
    ws = mix[comp, 1] + np.sqrt(mix[comp, 2]) * rng.standard_normal(N)
    if model.prior.name in ("gaussian", "spherical"):
        ws *= math.sqrt(model.prior.rho * N) / np.linalg.norm(ws)
    X = rng.standard_normal((P, N))
    z = X @ ws / math.sqrt(N)
    ch = model.channel
    if ch.labels == "real":
        y = z + math.sqrt(float(ch.params["Delta"])) * rng.standard_normal(P)
    elif ch.labels == "random":
        y = rng.choice([-1.0, 1.0], size=P)
    elif ch.name == "sign":
        y = np.where(z >= 0, 1.0, -1.0)
        y = np.where(rng.random(P) < float(ch.params["p"]), -y, y)
    else:
        from ..glm import z as Zs, y as Ys
        p1 = sp.lambdify(Zs, ch.expr.subs(ch.values).subs(Ys, 1), modules=["scipy", "numpy"])
        y = np.where(rng.random(P) < np.asarray(p1(z), dtype=float) * np.ones(P), 1.0, -1.0)
    return X, y, ws


def _lam(model):
    if not model.penalty.is_ridge():
        raise ValueError("the finite-N ERM and GAMP simulations need a ridge penalty (glm.ridge(lam))")
    return float(model.penalty.params["lam"])


def erm_fit(model, X, y, w0=None, *, tol=1e-10):
    """Exact ERM minimiser for ``model`` (ridge penalty) on the instance ``X, y``; returns ``w``."""
    lam = _lam(model)
    P, N = X.shape
    sn = math.sqrt(N)
    name = model.loss.name
    if name == "square" or (model.loss.key() == _square_key()):
        M = X.T @ X / N + lam * np.eye(N)
        return np.linalg.solve(M, X.T @ y / sn)
    if name == "hinge":
        return _hinge_fit(X, y, lam)
    from scipy.optimize import minimize
    den = Denoisers(model)

    def f(w):
        h = X @ w / sn
        val, g = den.loss(y, h)
        return float(val.sum() + 0.5 * lam * w @ w), X.T @ g / sn + lam * w
    w0 = np.zeros(N) if w0 is None else w0
    res = minimize(f, w0, jac=True, method="L-BFGS-B",
                   options={"maxiter": 100000, "maxcor": 30, "gtol": tol * max(1.0, P / N), "ftol": 0.0})
    return res.x


def _hinge_fit(X, y, lam):
    """Hinge + ridge: the dual box-constrained QP ``min_a |A^T a|^2/(2 lam) - sum a``, ``0 <= a <= 1``
    (``A`` = rows ``y x/sqrt N``) by L-BFGS-B with the exact gradient, ``w = A^T a/lam``, then dual
    coordinate descent epochs from there until the relative duality gap is below ``HINGE_GAP``."""
    from scipy.optimize import minimize
    P, N = X.shape
    A = np.ascontiguousarray((y[:, None] * X) / math.sqrt(N))

    def f(a):
        v = A.T @ a
        return float(v @ v / (2 * lam) - a.sum()), A @ v / lam - 1.0
    res = minimize(f, np.zeros(P), jac=True, method="L-BFGS-B", bounds=[(0.0, 1.0)] * P,
                   options={"maxiter": 100000, "maxcor": 50, "ftol": 0.0, "gtol": 1e-12})
    a = np.ascontiguousarray(np.clip(res.x, 0.0, 1.0))
    w = A.T @ a / lam
    gap, ep = hinge_dual_cd(A, lam, 1.0, a, w, HINGE_GAP, 20000)
    primal = float(np.maximum(0.0, 1.0 - A @ w).sum() + 0.5 * lam * w @ w)
    if not gap <= 2 * HINGE_GAP * max(primal, 1e-300):
        raise ArithmeticError(f"hinge ERM: relative duality gap {gap / primal:.3e} after L-BFGS-B and {ep} "
                              "coordinate-descent epochs")
    return w


def _square_key():
    from ..glm import square
    return square().key()


def gamp(model, X, y, theory="erm", *, damping=0.5, tol=1e-10, max_iter=2000):
    """GAMP with the model's denoisers: ``theory="erm"`` (fixed point = ERM minimiser, ridge
    penalty) or ``"bayes"`` (the teacher's prior and channel).  Returns ``(w_hat, iterations,
    converged)``."""
    check_choice("theory", theory, ("erm", "bayes"))
    P, N = X.shape
    F = X / math.sqrt(N)
    alpha = P / N
    den = Denoisers(model if theory == "erm" else Model(prior=model.prior, channel=model.channel,
                                                         penalty="spherical"))
    rho = float(model.prior.rho)
    if theory == "erm":
        lam = _lam(model)
        w = np.zeros(N)
        v = np.full(N, 1.0 / lam)
    else:
        w = np.zeros(N)
        v = np.full(N, rho)
    g = np.zeros(P)
    it = 0
    for it in range(1, max_iter + 1):
        V = float(np.mean(v))
        om = F @ w - V * g
        if theory == "erm":
            g_new, dg = den.erm_output(y, om, V)
        else:
            g_new, dg = den.bayes_output(y, om, V)
        g = (1 - damping) * g + damping * g_new if it > 1 else g_new
        A = -alpha * float(np.mean(dg))
        B = F.T @ g + A * w
        if theory == "erm":
            w_new, v_new = B / (A + lam), np.full(N, 1.0 / (A + lam))
        else:
            w_new, v_new = den.prior_input(B, A)
        change = float(np.linalg.norm(w_new - w) / max(np.linalg.norm(w_new), 1e-300))
        w = (1 - damping) * w + damping * w_new
        v = (1 - damping) * v + damping * v_new
        if change < tol:
            return w_new, it, True
    return w, it, False


def observables(model, X, y, ws, w):
    """m, q, generalization_error (``arccos(m/sqrt(rho q))/pi``; real labels: ``rho - 2m + q``),
    training_error (fraction of training labels misclassified; real labels: mean squared residual)
    and training_loss (mean loss per sample) of the estimate ``w``."""
    N = X.shape[1]
    rho = float(ws @ ws / N)
    m = float(w @ ws / N)
    q = float(w @ w / N)
    h = X @ w / math.sqrt(N)
    if model.channel.labels == "real":
        eg = rho - 2 * m + q
        te = float(np.mean((y - h) ** 2))
    else:
        eg = math.acos(max(-1.0, min(1.0, m / math.sqrt(rho * q)))) / math.pi if q > 0 else 0.5
        te = float(np.mean(y * h <= 0))
    tl = float(np.mean(Denoisers(model).loss(y, h)[0])) if model.loss is not None else float("nan")
    return {"m": m, "q": q, "generalization_error": eg, "training_error": te, "training_loss": tl}


def _task(args):
    model, N, alpha, seed, i, route = args
    rng = instance_rng(seed, N, i)
    X, y, ws = glm_instance(model, N, alpha, rng)
    if route == "erm":
        w = erm_fit(model, X, y)
        extra = {}
    else:
        w, its, conv = gamp(model, X, y, "erm" if route == "gamp" else "bayes")
        extra = {"iterations": its, "converged": conv}
        if route == "gamp":
            w_erm = erm_fit(model, X, y)
            extra["gamp_vs_erm"] = float(np.linalg.norm(w - w_erm) / max(np.linalg.norm(w_erm), 1e-300))
    out = observables(model if route != "bamp" or model.loss is not None else model, X, y, ws, w)
    out.update(extra)
    return out


@dataclass(frozen=True, repr=False)
class GLMSimulation(Result):
    """Simulation averages per N and their ``1/N`` extrapolation.

    Attributes
    ----------
    alpha, Ns, instances, route : the runs (``route``: ``"erm"``, ``"gamp"`` or ``"bamp"``)
    mean, sem : dict observable -> array over Ns (mean and standard error over instances)
    extrapolated, extrapolated_error : dict observable -> ``N -> inf`` value and its standard error
        (weighted least squares ``y(N) = y_inf + b/N``; with one N, the mean and its SEM)
    generalization_error : the extrapolated generalization error (headline), ``error`` its SEM
    """
    headline: ClassVar[str] = "generalization_error"
    alpha: float
    Ns: Any
    instances: int
    route: str
    mean: dict
    sem: dict
    extrapolated: dict
    extrapolated_error: dict
    generalization_error: float
    error: float
    converged: bool = True
    residual: float = 0.0
    iterations: int = 0
    ansatz: str = "-"
    rs_stable: Any = None
    stability: Any = None
    raw: dict = field(default_factory=dict, repr=False)


def glm_simulation(model, alpha, Ns=(100, 200, 400), instances=20, *, route="erm", seed=0, executor=None,
                   progress=True):
    """``instances`` independent instances at every N of ``Ns`` (seeded by
    :func:`~statmech.simulate.finite_size.instance_rng` ``(seed, N, i)``), solved by ``route``
    (``"erm"``: exact ERM; ``"gamp"``: GAMP with the ERM denoisers, which also reports its distance
    to the exact minimiser; ``"bamp"``: Bayes-optimal GAMP), averaged and extrapolated in 1/N.
    ``executor``: any ``concurrent.futures`` executor or dask client (None: in this process)."""
    check_choice("route", route, ("erm", "gamp", "bamp"))
    alpha = float(check_range("alpha", alpha, 0.0, lo_open=True))
    Ns = tuple(check_int("N", n, 2) for n in Ns)
    instances = check_int("instances", instances, 2)
    tasks = [(model, N, alpha, int(seed), i, route) for N in Ns for i in range(instances)]
    res = map_tasks(_task, tasks, executor, desc=f"glm {route} alpha={alpha:g}", progress=progress)
    keys = [k for k in res[0] if isinstance(res[0][k], float) and k in OBSERVABLES + ("gamp_vs_erm",)]
    mean, sem, ext, exterr, raw = {}, {}, {}, {}, {}
    for k in keys:
        arr = np.array([[r[k] for r in res[j * instances:(j + 1) * instances]] for j in range(len(Ns))])
        raw[k] = arr
        mean[k] = arr.mean(axis=1)
        sem[k] = arr.std(axis=1, ddof=1) / math.sqrt(instances)
        if len(Ns) >= 2 and np.all(sem[k] > 0):
            e = extrapolate(np.array(Ns, dtype=float), mean[k], sem[k])
            ext[k], exterr[k] = float(e.y_inf), float(e.y_inf_err)
        else:
            ext[k], exterr[k] = float(mean[k][-1]), float(sem[k][-1])
    its = int(sum(r.get("iterations", 0) for r in res))
    conv = all(r.get("converged", True) for r in res)
    return GLMSimulation(alpha, np.array(Ns), instances, route, mean, sem, ext, exterr,
                         ext["generalization_error"], exterr["generalization_error"], conv, 0.0, its, raw=raw)


def glm_simulation_point(loss, lam, noise, alpha, Ns=(100, 200, 400), instances=20, seed=0, route="erm",
                         prior="gaussian"):
    """:func:`glm_simulation` for a built-in model given by plain values (a ``loss`` name, the ridge
    ``lam``, the sign channel's ``noise``, the teacher ``prior``): the call stored in the figure data
    files (``statmech figures --recompute glm_learning_curves``).  The per-instance values (``raw``)
    are dropped."""
    from ..glm import ridge, sign
    model = Model(prior=prior, channel=sign(noise), loss=loss, penalty=ridge(lam))
    r = glm_simulation(model, alpha, Ns=tuple(Ns), instances=instances, route=route, seed=seed, progress=False)
    return GLMSimulation(r.alpha, r.Ns, r.instances, r.route, r.mean, r.sem, r.extrapolated, r.extrapolated_error,
                         r.generalization_error, r.error, r.converged, r.residual, r.iterations)
