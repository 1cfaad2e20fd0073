r"""Learning curves, parameter paths and the optimal regularisation, by continuation.

* :func:`learning_curve` -- any theory along alpha: one numba call continues the saddle point from
  point to point (Lagrange prediction in ``log alpha`` through the last three solutions, then
  Newton with the exact Jacobian; a point where Newton fails is bridged by sub-steps).
* :func:`parameter_path` -- ERM (or Gibbs) at fixed alpha along a parameter of the model: ``lam``
  (regularisation path), ``noise`` (label-flip probability), ``kappa`` or any ``<component>_<name>``;
  the same predictor--corrector in the parameter (in its log for a positive one).
* :func:`optimal_lam` -- the ridge coefficient minimising the generalization error at alpha:
  Brent's minimisation in ``log lam`` (``scipy.optimize.minimize_scalar``, bounded), each value
  one warm-started ERM solve; :func:`optimal_lam_curve` follows it along alpha.
* :func:`erm_problem` -- the ERM saddle point as a :class:`statmech.continuation.Problem` (residual
  and exact Jacobian from the numba kernels), for the engine's folds, branch points and lines.
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import ConvergenceError, check_choice, check_range
from ..result import check_real
from .erm import RULE_LEVEL, ERMResult, _assemble, _start, erm as _erm
from ._codegen import kernels_for
from ._rules import quadrature_rule
from .spec import Model

__all__ = ["learning_curve", "parameter_path", "regularisation_path", "optimal_lam", "optimal_lam_curve",
           "erm_problem"]


def learning_curve(model, alpha, theory="erm", *, T=0.0, branch="equilibrium"):
    """The saddle point of ``theory`` (``"erm"``, ``"gibbs"``, ``"bayes"``) along the array ``alpha``
    (sorted internally; the result in the given order): an :class:`~statmech.glm.ERMResult`,
    :class:`~statmech.glm.GibbsResult` or :class:`~statmech.glm.BayesResult` with array fields."""
    check_choice("theory", theory, ("erm", "gibbs", "bayes"))
    a = np.atleast_1d(np.asarray(check_real("alpha", alpha, function="glm.learning_curve"), dtype=float))
    if theory == "erm":
        return _erm(model, a)
    if theory == "gibbs":
        from .gibbs import gibbs
        return gibbs(model, a, T)
    from .bayes import bayes_optimal
    return bayes_optimal(model.prior, model.channel, a, branch=branch)


def _slot(model, lay, name):
    """(global par slot, component, parameter name) of a model parameter."""
    alias = {"lam": ("penalty", "lam"), "noise": ("channel", "p"), "kappa": ("loss", "kappa")}
    comp_name, pname = alias.get(name, tuple(name.split("_", 1)) if "_" in name else (None, None))
    comp = getattr(model, comp_name, None) if comp_name in ("loss", "penalty", "channel") else None
    if comp is None or pname not in comp.params:
        raise ValueError(f"parameter must be 'lam', 'noise', 'kappa' or '<loss|penalty|channel>_<name>' of the "
                         f"model, got {name!r}")
    i = [s.name for s in comp.param_symbols].index(pname)
    return lay.fam.slots[(comp.key(), i)], comp_name, pname


def parameter_path(model, alpha, name, values, *, level=RULE_LEVEL):
    """ERM at fixed ``alpha`` along ``values`` of the parameter ``name`` (solved in the given order:
    pass them sorted).  Returns an :class:`~statmech.glm.ERMResult` with array fields;
    ``params[name]`` holds the values."""
    if not isinstance(model, Model):
        raise TypeError(f"glm.parameter_path: model must be a glm.Model, got {type(model).__name__}")
    alpha = float(check_range("alpha", alpha, 0.0, lo_open=True))
    vals = np.ascontiguousarray(np.atleast_1d(np.asarray(check_real("values", values), dtype=float)))
    check_range("values", vals)
    ks, lay = kernels_for(model, "erm")
    slot, comp_name, pname = _slot(model, lay, name)
    first = model.with_params(**{f"{comp_name}_{pname}" if name not in ("lam", "noise", "kappa") else name:
                                 float(vals[0])})
    ks, lay = kernels_for(first, "erm")
    par, cfg = lay.par(), lay.cfg()
    terms, tw = lay.term_arrays()
    rule = quadrature_rule(level)
    sts = ks.erm_structs(cfg, par)
    tmix = np.ascontiguousarray(model.prior.mixture, dtype=float)
    md = (cfg, terms, tw, par, sts, tmix)
    fixq = model.penalty.constraint in ("spherical", "ising")
    # a repeated value is solved once (the predictor steps in the parameter): copies filled after
    keep = np.r_[True, np.diff(vals) != 0]
    uvals = np.ascontiguousarray(vals[keep])
    out = np.zeros((uvals.size, 14))
    obs = np.zeros((uvals.size, 7))
    logp = bool(np.all(vals > 0))
    ks.sv_path(0, alpha, slot, uvals, logp, _start(first, lay), 1 if fixq else 0, float(model.prior.rho), math.inf,
               md, rule, out, obs, True)
    idx = np.cumsum(keep) - 1
    out, obs = np.ascontiguousarray(out[idx]), np.ascontiguousarray(obs[idx])
    for i in range(vals.size):
        if int(out[i, 0]) != 0 or not out[i, 1] <= 1e-10:
            raise ConvergenceError(f"glm.parameter_path: no solution at {name} = {vals[i]!r}, alpha = {alpha!r} for "
                                   f"{model!r}", x=out[i, 6:9], residual=float(out[i, 1]),
                                   diagnostics={name: float(vals[i]), "status": int(out[i, 0])})
    d = _assemble(first, np.full(vals.size, alpha), out, obs, lay)
    if name == "lam" or pname == "lam":
        # the penalty per weight and the free energy use each point's lam (the numba pass did)
        pass
    d["params"] = {**d["params"], name: vals}
    d["stability"] = np.asarray(d["replicon"])[:, None]
    return ERMResult(**d)


def regularisation_path(model, alpha, lam):
    """ERM with a ridge penalty at ``alpha`` along the ridge coefficients ``lam`` (see
    :func:`parameter_path`)."""
    return parameter_path(model, alpha, "lam", lam)


def optimal_lam(model, alpha, *, bounds=(1e-4, 1e2), xatol=1e-8):
    """The ridge coefficient that minimises the generalization error at ``alpha``: the
    :class:`~statmech.glm.ERMResult` at ``lam_opt`` (``r.params["penalty_lam"]``); ``lam_opt`` at a bound
    means the optimum is beyond it.  Brent in ``log lam`` to ``xatol``."""
    from scipy.optimize import minimize_scalar
    if not isinstance(model, Model):
        raise TypeError(f"glm.optimal_lam: model must be a glm.Model, got {type(model).__name__}")
    if not model.penalty.is_ridge():
        raise ValueError("glm.optimal_lam: the model's penalty must be glm.ridge")
    alpha = float(check_range("alpha", check_real("alpha", alpha, function="glm.optimal_lam"), 0.0, lo_open=True))
    lo, hi = (math.log(float(b)) for b in bounds)

    def f(ll):
        return float(_erm(model.with_params(lam=math.exp(ll)), alpha).generalization_error)
    res = minimize_scalar(f, bounds=(lo, hi), method="bounded", options={"xatol": xatol})
    lam = math.exp(float(res.x))
    return _erm(model.with_params(lam=lam), alpha)


def optimal_lam_curve(model, alpha, **kw):
    """:func:`optimal_lam` at every alpha of the array: dict of arrays ``alpha``, ``lam``,
    ``generalization_error``."""
    a = np.atleast_1d(np.asarray(alpha, dtype=float))
    lams, egs = [], []
    for x in a:
        r = optimal_lam(model, float(x), **kw)
        lams.append(float(r.params["penalty_lam"]))
        egs.append(float(r.generalization_error))
    return {"alpha": a, "lam": np.array(lams), "generalization_error": np.array(egs)}


def erm_problem(model, alpha, parameter="alpha", *, level=RULE_LEVEL):
    """The ERM saddle point as a :class:`statmech.continuation.Problem` in the unknowns
    ``y = (atanh(m/sqrt(rho q)), log q, log V)`` with continuation parameter ``alpha`` or a model
    parameter (``"lam"``, ``"noise"``, ``"kappa"``, ...), residual (scaled ``x - x'``) and exact
    Jacobian from the numba kernels; started at the solution at ``alpha``."""
    from .. import continuation as C
    r = _erm(model, alpha, level=level)
    ks, lay = kernels_for(model, "erm")
    par, cfg = lay.par(), lay.cfg()
    terms, tw = lay.term_arrays()
    rule = quadrature_rule(level)
    sts = ks.erm_structs(cfg, par)
    md = (cfg, terms, tw, par, sts, np.ascontiguousarray(model.prior.mixture, dtype=float))
    rho = float(model.prior.rho)
    fixq = model.penalty.constraint in ("spherical", "ising")
    slot = None if parameter == "alpha" else _slot(model, lay, parameter)[0]
    y0 = np.array([math.atanh(r.m / math.sqrt(rho * r.q)), math.log(r.q) if not fixq else 0.0, math.log(r.V)])

    def ev(y, p):
        a = p if slot is None else float(alpha)
        if slot is not None and par[slot] != p:
            par[slot] = p
            ks.refresh_structs(md)
        F = np.empty(3)
        J = np.empty((3, 3))
        st = np.empty(15)
        if ks.erm_eval(np.asarray(y, dtype=float), a, fixq, rho, md, rule, F, J, st) != 0:
            raise ValueError("outside the domain")
        return F, J

    p0 = float(alpha) if slot is None else float(par[slot])
    return C.Problem(residual=lambda y, p: ev(y, p)[0], jacobian=lambda y, p: ev(y, p)[1], x0=y0, p0=p0,
                     names=("atanh_cos", "log_q", "log_V"), p_name=parameter, stability="none")
