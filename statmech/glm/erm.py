r"""Empirical risk minimisation: the replica-symmetric saddle point of any convex (or step) loss.

``w_hat = argmin_w sum_mu loss(y_mu, w.x_mu/sqrt N) + sum_i r(w_i)`` for ``P = alpha N`` samples of
the model's teacher, at ``N -> inf``.  The zero-temperature RS free entropy (``docs/glm.md``,
Eqs. E1-E3; Gerace et al. 2020, Aubin et al. 2020 Eq. 12, Loureiro et al. 2021) is::

    psi = -m mh + (q Vh - qh V)/2 + Phi_w(mh, qh, Vh) + alpha Phi_out(m, q, V)
    Phi_out = E[ -M_V loss(y, .)(omega) ],   M_V f(a) = min_t f(t) + (t - a)^2/(2V)
    Phi_w   = E max_w [ (mh w* + sqrt(qh) xi) w - Vh w^2/2 - r(w) ]

``m = w_hat.w*/N``, ``q = ||w_hat||^2/N``, ``V`` the response (``1/(lam + Vh)`` for ridge) and
their conjugates; ``-psi`` is the minimal training objective per weight.  The saddle point is
solved by Newton's method with the exact Jacobian (:mod:`statmech.glm._erm_nb`), in one numba
call per curve of alpha values.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from ..errors import ConvergenceError, check_range
from ._rules import quadrature_rule
from ._table import table_start
from ..result import Result, check_real
from ._codegen import prepared
from .spec import Model

__all__ = ["ERMResult", "erm", "ridge_closed_form", "RULE_LEVEL"]

#: tanh-sinh level of the finite pieces of the averages (step 2^-6; 513 nodes per piece)
RULE_LEVEL = 6
_STATUS = {1: "Newton did not converge", 2: "the iterate left the domain (lam + Vh <= 0, V <= 0 ...)",
           3: "a proximal operator did not converge", 4: "the continuation in alpha from small alpha failed"}


@dataclass(frozen=True, repr=False)
class ERMResult(Result):
    """RS saddle point of ERM (fields are floats, or arrays over ``alpha``).

    Attributes
    ----------
    alpha : float or ndarray
    m, q, V, m_hat, q_hat, V_hat : order parameters and conjugates (Eqs. E2-E3)
    generalization_error : ``arccos(m/sqrt(rho q))/pi``, the error against the noiseless test
        label ``sign(z)``; for real labels (linear teacher) the noiseless test mean-squared error
        ``E (z - h)^2 = rho - 2m + q``.
    test_error : against a noisy test label drawn from the channel (``P(y != sign h)``); real
        labels: ``E (y - h)^2``.
    training_error : fraction of the training labels (noisy) misclassified by ``w_hat``; real
        labels: mean squared training residual.
    training_loss : mean loss per sample at ``w_hat`` (without the penalty).
    penalty : mean penalty per weight ``E r(w_hat_i)`` (0 with a constraint).
    free_energy : minimal training objective per weight, ``-psi = alpha training_loss + penalty``.
    replicon : ``1 - alpha E[(1 - dP/da)^2/V^2] E[(d w_hat/d b)^2]`` (de Almeida--Thouless at zero
        temperature); ``-inf`` where a prox or the student's prior is discontinuous (step losses,
        Ising weights): RS is then unstable.
    rs_stable : replicon > 0.
    stability : ``[replicon]`` (positive = stable).
    converged, residual, iterations : Newton report (relative max-norm of ``x - x'``).
    model : str; params : dict of the component parameters.
    """
    headline: ClassVar[str] = "generalization_error"
    alpha: Any
    m: Any
    q: Any
    V: Any
    m_hat: Any
    q_hat: Any
    V_hat: Any
    generalization_error: Any
    test_error: Any
    training_error: Any
    training_loss: Any
    penalty: Any
    free_energy: Any
    replicon: Any
    rs_stable: Any
    converged: Any = True
    residual: Any = 0.0
    iterations: Any = 0
    ansatz: str = "rs"
    error: Any = 0.0
    stability: Any = None
    model: str = ""
    params: dict = field(default_factory=dict)


def _rho(model):
    return float(model.prior.rho)


def _start(model, layout):
    """y0 = (c, log q, log V) at alpha 1e-3 times the target."""
    V0 = 1.0
    if layout.pen_kind == 0:
        V0 = 1.0 / max(float(model.penalty.params["lam"]), 1e-12)
    return np.array([0.0, math.log(1e-4), math.log(V0)])


def _fixq_start(ks, model, alpha, rho, md, rule):
    """Start of a constrained (spherical, Ising) student: the least scaled residual over a grid."""
    cs = (0.0,) if model.channel.labels == "random" else (0.2, 0.6, 1.2, 2.0)
    best, yb = np.inf, None
    F = np.empty(3)
    J = np.empty((3, 3))
    st = np.empty(15)
    for c in cs:
        for lv in np.linspace(-6.0, 8.0, 57):
            y = np.array([c, 0.0, lv])
            if ks.erm_eval(y, float(alpha), True, rho, md, rule, F, J, st) == 0:
                n = float(np.max(np.abs(F)))
                if n < best:
                    best, yb = n, y
    if yb is None:
        raise ConvergenceError(f"glm.erm: no start found for the constrained student at alpha = {alpha!r}",
                               diagnostics={"alpha": float(alpha)})
    return yb


def _solve(model, alphas, level=RULE_LEVEL):
    """Raw solutions along the increasing array ``alphas``: (rows, observables, layout)."""
    prep = prepared(model, "erm", level)
    ks, lay, md, rule, rho = prep.ks, prep.lay, prep.md, prep.rule, prep.rho
    fixq = model.penalty.constraint in ("spherical", "ising")
    out = np.zeros((alphas.size, 14))
    obs = np.zeros((alphas.size, 7))
    if fixq:
        # a constrained student has no small-alpha limit to start from (below the SAT/UNSAT point of
        # a margin loss V is infinite): the start is the best residual on a grid in (c, log V)
        y0, cold = _fixq_start(ks, model, alphas[0], rho, md, rule), False
    else:
        y0, cold = _start(model, lay), True
        if alphas.size == 1:
            yt = table_start(prep.key, ks, 0, y0, 0, rho, math.inf, md, rule, float(alphas[0]))
            if yt is not None:
                ks.sv_curve(0, alphas, yt, 0, rho, math.inf, md, rule, out, obs, False)
                if out[0, 0] == 0 and out[0, 1] <= 1e-10:
                    return out, obs, lay
    ks.sv_curve(0, alphas, y0, 1 if fixq else 0, rho, math.inf, md, rule, out, obs, cold)
    if cold and out[0, 0] != 0:
        # a penalty without a smooth small-alpha limit (l1: w_hat = 0 there) can defeat the path from
        # 1e-3 alpha: start closer, from a few plain fixed-point steps at a fraction of alpha
        for frac in (0.05, 0.3):
            st = np.empty(15)
            info = np.empty(3)
            y = _start(model, lay)
            ks.sv_cold(0, float(alphas[0]), 0, y, rho, math.inf, md, rule, st, info, frac)
            if info[0] == 0:
                ks.sv_curve(0, alphas, y, 0, rho, math.inf, md, rule, out, obs, False)
                if out[0, 0] == 0:
                    break
    for i in range(alphas.size):
        status = int(out[i, 0])
        if status != 0 or not out[i, 1] <= 1e-10:
            raise ConvergenceError(
                f"glm.erm: {_STATUS.get(status, 'residual above 1e-10')} at alpha = {alphas[i]!r} for {model!r}",
                x=out[i, 6:9], residual=float(out[i, 1]), iterations=int(out[i, 2]),
                diagnostics={"alpha": float(alphas[i]), "status": status})
    return out, obs, lay


def _assemble(model, alphas, out, obs, lay):
    rho = _rho(model)
    a = alphas
    m, q, V, mh, qh, Vh, phi_out, phi_w = (out[:, 6 + j] for j in range(8))
    psi = -m * mh + 0.5 * (q * Vh - qh * V) + phi_w + a * phi_out
    tl, te, rep_ch, test, p2, pen, rep_in = (obs[:, j] for j in range(7))
    with np.errstate(invalid="ignore"):
        rep = 1.0 - a * rep_ch * rep_in
    rep = np.where(np.isinf(rep_ch) | np.isinf(rep_in), -np.inf, rep)
    real = model.channel.labels == "real"
    if real:
        delta = float(model.channel.params["Delta"])
        eg = rho - 2 * m + q
        test = rho + delta - 2 * m + q
        te = p2
    else:
        eg = np.arccos(np.clip(m / np.sqrt(rho * q), -1.0, 1.0)) / math.pi
    params = {**{f"loss_{k}": v for k, v in model.loss.params.items()},
              **{f"penalty_{k}": v for k, v in model.penalty.params.items()},
              **{f"channel_{k}": v for k, v in model.channel.params.items()}}
    return dict(alpha=a, m=m, q=q, V=V, m_hat=mh, q_hat=qh, V_hat=Vh, generalization_error=eg, test_error=test,
                training_error=te, training_loss=tl, penalty=pen, free_energy=-psi, replicon=rep,
                rs_stable=rep > 0, converged=np.ones(a.size, dtype=bool), residual=out[:, 1],
                iterations=out[:, 2].astype(int), model=repr(model), params=params)


def _params(model):
    return {**{f"loss_{k}": v for k, v in model.loss.params.items()},
            **{f"penalty_{k}": v for k, v in model.penalty.params.items()},
            **{f"channel_{k}": v for k, v in model.channel.params.items()}}


def _scalar(model, a, row, ob):
    """The fields of one point as Python floats (the arithmetic of :func:`_assemble`)."""
    rho = float(model.prior.rho)
    m, q, V, mh, qh, Vh, phi_out, phi_w = (float(row[6 + j]) for j in range(8))
    psi = -m * mh + 0.5 * (q * Vh - qh * V) + phi_w + a * phi_out
    tl, te, rep_ch, test, p2, pen, rep_in = (float(x) for x in ob)
    rep = -math.inf if math.isinf(rep_ch) or math.isinf(rep_in) else 1.0 - a * rep_ch * rep_in
    if model.channel.labels == "real":
        delta = float(model.channel.params["Delta"])
        eg, test, te = rho - 2 * m + q, rho + delta - 2 * m + q, p2
    else:
        eg = math.acos(max(-1.0, min(1.0, m / math.sqrt(rho * q)))) / math.pi
    return dict(alpha=a, m=m, q=q, V=V, m_hat=mh, q_hat=qh, V_hat=Vh, generalization_error=eg, test_error=test,
                training_error=te, training_loss=tl, penalty=pen, free_energy=-psi, replicon=rep, rs_stable=rep > 0,
                converged=True, residual=float(row[1]), iterations=int(row[2]), model=repr(model),
                params=_params(model), stability=np.array([rep]))


def _scalarize(d):
    out = {}
    for k, v in d.items():
        if isinstance(v, np.ndarray) and v.ndim == 1 and v.size == 1:
            v = v[0]
            v = bool(v) if isinstance(v, np.bool_) else (int(v) if isinstance(v, np.integer) else float(v))
        out[k] = v
    out["stability"] = np.array([out["replicon"]]) if np.ndim(out["replicon"]) == 0 else \
        np.asarray(out["replicon"])[:, None]
    return out


def erm(model, alpha, *, level=RULE_LEVEL):
    """RS saddle point of ERM for ``model`` at ``alpha`` (float, or array: one Newton continuation
    along the sorted values, returned in the given order).

    Parameters
    ----------
    model : :class:`statmech.glm.Model` with a ``loss`` (convex, or a step function such as the
        margin-counting cost) and a ``penalty``.
    alpha : float or array, > 0
    level : tanh--sinh level of the averages (default 6: relative accuracy ~1e-14 on smooth pieces)

    Returns
    -------
    ERMResult

    Raises
    ------
    ConvergenceError naming the point when Newton (or the continuation from small alpha that
    starts it) fails; ValueError for a model ERM cannot handle (non-convex loss or penalty, a
    loss that does not fit the labels).
    """
    if not isinstance(model, Model):
        raise TypeError(f"glm.erm: model must be a glm.Model, got {type(model).__name__}")
    if isinstance(alpha, (float, int, np.floating, np.integer)) and not isinstance(alpha, (bool, np.bool_)):
        a = float(alpha)
        if not 0.0 < a < math.inf:
            check_range("alpha", a, 0.0, lo_open=True)
        out, obs, lay = _solve(model, np.array([a]), level)
        return ERMResult(**_scalar(model, a, out[0], obs[0]))
    check_real("alpha", alpha, function="glm.erm")
    a = check_range("alpha", alpha, 0.0, lo_open=True)
    flat = np.atleast_1d(a).ravel()
    uniq, inv = np.unique(flat, return_inverse=True)       # sorted, each value solved once
    out, obs, lay = _solve(model, np.ascontiguousarray(uniq), level)
    d = _assemble(model, uniq, out, obs, lay)
    d = {k: (v[inv].reshape(a.shape) if isinstance(v, np.ndarray) and v.shape == (uniq.size,) else v)
         for k, v in d.items()}
    if a.ndim == 0:
        d = _scalarize({k: (np.atleast_1d(v) if isinstance(v, np.ndarray) else v) for k, v in d.items()})
    else:
        d["stability"] = np.asarray(d["replicon"])[..., None]
    return ERMResult(**d)


def ridge_closed_form(alpha, lam, noise=0.0, *, rho=1.0, channel="sign"):
    """Closed form of ridge regression on the labels (square loss + ridge penalty), the check of
    the generic solver (``docs/glm.md``, "Ridge in closed form").

    ``V = [1 - lam - alpha + sqrt((lam + alpha - 1)^2 + 4 lam)]/(2 lam)``, ``k = V/(1 + V)``;
    sign channel with flip ``noise``: ``c = (1 - 2 noise) sqrt(2/(pi rho))``,
    ``m = rho alpha c k``, ``q = alpha k^2 (rho alpha c^2 + 1 - 2 c m)/(1 - alpha k^2)``;
    ``channel="linear"`` (``y = z + sqrt(noise) eps``): ``m = rho alpha k``,
    ``q = alpha k^2 (rho alpha + rho + noise - 2 m)/(1 - alpha k^2)``.
    Returns dict (m, q, V, m_hat, q_hat, V_hat).
    """
    alpha = float(alpha)
    lam = float(lam)
    b = lam + alpha - 1.0
    V = 2.0 / (b + math.sqrt(b * b + 4.0 * lam)) if b > 0 else (-b + math.sqrt(b * b + 4.0 * lam)) / (2.0 * lam)
    k = V / (1.0 + V)
    if channel == "sign":
        c = (1.0 - 2.0 * noise) * math.sqrt(2.0 / (math.pi * rho))
        m = rho * alpha * c * k
        q = alpha * k * k * (rho * alpha * c * c + 1.0 - 2.0 * c * m) / (1.0 - alpha * k * k)
        mh = alpha * c / (1.0 + V)
        qh = alpha * (1.0 - 2.0 * c * m + q) / (1.0 + V) ** 2
    elif channel == "linear":
        m = rho * alpha * k
        q = alpha * k * k * (rho * alpha + rho + noise - 2.0 * m) / (1.0 - alpha * k * k)
        mh = alpha / (1.0 + V)
        qh = alpha * (rho + noise - 2.0 * m + q) / (1.0 + V) ** 2
    else:
        raise ValueError(f"channel must be 'sign' or 'linear', got {channel!r}")
    return {"m": m, "q": q, "V": V, "m_hat": mh, "q_hat": qh, "V_hat": alpha / (1.0 + V)}
