r"""Gibbs learning at temperature T: spherical or Ising students with a step cost (RS).

The student samples ``P(w) ~ P_0(w) exp(-sum_mu loss(y_mu, h_mu)/T)`` with ``P_0`` uniform on the
sphere ``||w||^2 = N`` (``penalty="spherical"``) or on ``{-1, +1}^N`` (``penalty="ising"``); the
cost is a step function of the margin, typically the margin-counting cost
``theta(kappa - y h)``.  At ``T = 0`` this is the version space: the Gardner volume of the
storage problem (random labels) or Gibbs learning of a teacher.  The replica-symmetric free
entropy (``docs/glm.md`` Eqs. G1-G2, :mod:`statmech.glm._gibbs_nb`) is solved by Newton's method on
its gradient (spherical) or on the composite map ``(m, q) -> hats -> (m', q')`` (Ising), with
exact Jacobians, continued in alpha from small alpha.

The package's hand-written perceptron theories are special cases, and the tests check them to
1e-10: ``perceptron.spherical_storage`` (spherical, random labels, margin counting, T = 0),
``perceptron.spherical_teacher_student`` (spherical, sign teacher, kappa = 0, T = 0),
``perceptron.binary_storage`` (Ising, random labels; Gardner--Derrida 1988; its zero entropy is the
Krauth--Mézard capacity, :func:`statmech.glm.thresholds`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from ..errors import ConvergenceError, check_range
from ..result import Result, check_real
from ._codegen import prepared
from ._rules import quadrature_rule
from ._table import table_start
from .spec import Model

__all__ = ["GibbsResult", "gibbs"]

_LEVEL = 6
_STATUS = {1: "Newton did not converge", 2: "the iterate left the domain", 3: "an average failed (log Z = -inf)",
           4: "the continuation in alpha from small alpha failed"}


@dataclass(frozen=True, repr=False)
class GibbsResult(Result):
    """RS saddle point of Gibbs learning (floats, or arrays over alpha).

    Attributes
    ----------
    alpha, T : load and temperature
    m, q : teacher overlap ``w.w*/N`` and overlap of two students ``w_a.w_b/N`` (``||w||^2 = N``)
    m_hat, q_hat : conjugates (spherical: the values implied by the closed-form entropic term,
        ``m/(1 - q)`` and ``(q - m^2)/(1 - q)^2``)
    free_entropy : ``phi = (1/N) E log Z`` (Eq. G1; spherical: log of a fraction of the sphere;
        Ising: log of a number of configurations, ``log 2`` at alpha = 0)
    entropy : ``phi + alpha <loss>/T`` (``= phi`` at T = 0)
    training_error : mean cost per sample ``<loss>`` (for the margin-counting cost, the fraction of
        patterns with stability below kappa); 0 at T = 0
    generalization_error : ``arccos(m/sqrt(rho q))/pi`` (1/2 for random labels)
    replicon : ``1 - alpha E_out[(d^2_a log Z_loss)^2] E_in[(d^2_B log Z_in)^2]``;
        ``rs_stable`` its sign; ``stability`` = ``[replicon]``
    """
    headline: ClassVar[str] = "free_entropy"
    alpha: Any
    T: Any
    m: Any
    q: Any
    m_hat: Any
    q_hat: Any
    free_entropy: Any
    entropy: Any
    training_error: Any
    generalization_error: Any
    replicon: Any
    rs_stable: Any
    converged: Any = True
    residual: Any = 0.0
    iterations: Any = 0
    ansatz: str = "rs"
    error: Any = 0.0
    stability: Any = None
    model: str = ""


def _solve(model, alphas, T, level=_LEVEL):
    prep = prepared(model, "gibbs", level)
    ks, lay, md, rule, rho = prep.ks, prep.lay, prep.md, prep.rule, prep.rho
    beta = math.inf if T == 0 else 1.0 / T
    kind = 0 if model.penalty.constraint == "spherical" else 1
    c0 = 0.0 if model.channel.labels == "random" else 0.3
    q0 = min(0.5, 1e-3 * float(alphas[0]))
    y0 = np.array([c0, math.log(q0 / (1 - q0)), 0.0])
    out = np.zeros((alphas.size, 14))
    obs = np.zeros((alphas.size, 7))
    done = False
    if alphas.size == 1:
        yt = table_start(prep.key + (beta,), ks, 1, y0, kind, rho, beta, md, rule, float(alphas[0]))
        if yt is not None:
            ks.sv_curve(1, alphas, yt, kind, rho, beta, md, rule, out, obs, False)
            done = out[0, 0] == 0 and out[0, 1] <= 1e-10
    if not done:
        ks.sv_curve(1, alphas, y0, kind, rho, beta, md, rule, out, obs, True)
    for i in range(alphas.size):
        status = int(out[i, 0])
        if status != 0 or not out[i, 1] <= 1e-10:
            raise ConvergenceError(
                f"glm.gibbs: {_STATUS.get(status, 'residual above 1e-10')} at alpha = {alphas[i]!r}, T = {T!r} "
                f"for {model!r}", x=out[i, 6:8], residual=float(out[i, 1]), iterations=int(out[i, 2]),
                diagnostics={"alpha": float(alphas[i]), "status": status})
    return out, obs, rho, beta


def gibbs(model, alpha, T=0.0, *, level=_LEVEL):
    """Gibbs learning of ``model`` at load ``alpha`` and temperature ``T`` (RS).

    Parameters
    ----------
    model : :class:`statmech.glm.Model` with ``penalty="spherical"`` or ``"ising"`` (the student's
        prior) and a step cost as ``loss`` (e.g. ``"margin_counting"`` with ``kappa=``); any channel
        (``"random"`` for storage).
    alpha : float or array, > 0 (arrays: one continuation along the sorted values)
    T : float >= 0 (0: the version space)

    Returns
    -------
    GibbsResult
    """
    if not isinstance(model, Model):
        raise TypeError(f"glm.gibbs: model must be a glm.Model, got {type(model).__name__}")
    check_real("T", T, function="glm.gibbs")
    T = float(check_range("T", T, 0.0))
    if isinstance(alpha, (float, int, np.floating, np.integer)) and not isinstance(alpha, (bool, np.bool_)):
        a = float(alpha)
        if not 0.0 < a < math.inf:
            check_range("alpha", a, 0.0, lo_open=True)
        out, obs, rho, beta = _solve(model, np.array([a]), T, level)
        row, ob = out[0], obs[0]
        m, q, p1, mh, qh = (float(row[6 + j]) for j in range(5))
        phi = float(row[13]) + a * float(row[12])
        el = float(ob[0])
        rep = 1.0 - a * float(ob[2]) * float(ob[6])
        return GibbsResult(alpha=a, T=T, m=m, q=q, m_hat=mh, q_hat=qh, free_entropy=phi,
                           entropy=phi + (a * el / T if T > 0 else 0.0), training_error=el,
                           generalization_error=math.acos(max(-1.0, min(1.0, m / math.sqrt(rho * q)))) / math.pi,
                           replicon=rep, rs_stable=rep > 0, converged=True, residual=float(row[1]),
                           iterations=int(row[2]), stability=np.array([rep]), model=repr(model))
    check_real("alpha", alpha, function="glm.gibbs")
    a = check_range("alpha", alpha, 0.0, lo_open=True)
    flat = np.atleast_1d(a).ravel()
    al, inv = np.unique(flat, return_inverse=True)         # sorted, each value solved once
    out, obs, rho, beta = _solve(model, np.ascontiguousarray(al), T, level)
    m, q, p1, mh, qh = (out[:, 6 + j] for j in range(5))
    psi, phin = out[:, 12], out[:, 13]
    phi = phin + al * psi
    el = obs[:, 0]
    ent = phi + (al * el / T if T > 0 else 0.0)
    eg = np.arccos(np.clip(m / np.sqrt(rho * q), -1.0, 1.0)) / math.pi
    rep = 1.0 - al * obs[:, 2] * obs[:, 6]
    d = dict(alpha=al, T=np.full(al.size, T), m=m, q=q, m_hat=mh, q_hat=qh, free_entropy=phi, entropy=ent,
             training_error=el, generalization_error=eg, replicon=rep, rs_stable=rep > 0,
             converged=np.ones(al.size, dtype=bool), residual=out[:, 1], iterations=out[:, 2].astype(int))
    d = {k: v[inv].reshape(a.shape) for k, v in d.items()}
    if a.ndim == 0:
        d = {k: (v.item() if isinstance(v, np.ndarray) else v) for k, v in d.items()}
        d["stability"] = np.array([d["replicon"]])
    else:
        d["stability"] = np.asarray(d["replicon"])[..., None]
    return GibbsResult(**d, model=repr(model))
