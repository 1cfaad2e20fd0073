r"""Thresholds of a specification: SAT/UNSAT, interpolation and separability, maximal margin,
the double-descent peak, and the Bayes-optimal transitions.

**The zero set of a loss.**  Where the loss attains its infimum: a half-line ``[kappa, inf)``
(hinge: 1, squared hinge: 1, margin-counting: kappa), a point (square: ``u = 1``) or "at
infinity" (logistic, exponential: the infimum is approached as ``u -> inf``).  Every threshold
below depends on the loss only through it (``zero_set``).

**SAT/UNSAT of a spherical student** (``||w||^2 = N``): the volume of zero-loss weights vanishes
as ``q -> 1``.  With ``epsilon = 1 - q``, the RS free entropy of the zero-loss volume is
``[(1 - R^2) - alpha E_R d(y omega)^2]/(2 epsilon) + O(log epsilon)``, ``d`` the distance to the
zero set, ``omega`` the student's field with teacher overlap ``R``; so (``docs/glm.md`` Eq. T1)::

    alpha_J = max_R (1 - R^2)/E_R[d(y omega)^2]          (random labels: 1/E_t d(t)^2)

Gardner's ``alpha_c(kappa) = 1/E_t (kappa - t)_+^2`` for the margin-counting cost; the RSB
corrections of the storage problem are in :mod:`statmech.glm.replica_breaking`.  An Ising student
(storage): ``q -> 1`` gives Gardner--Derrida's ``alpha_GD = (2/pi)/E_t d(t)^2`` (the jammed entropic
coefficient is ``1/pi`` instead of ``1/2``), and the zero of the RS entropy the Krauth--Mézard
``alpha_KM`` (:func:`statmech.glm.gibbs`).

**Interpolation / separability of ERM with a ridge penalty as lam -> 0+** (the norm is free):
a half-line zero set or one at infinity becomes ``{u > 0}`` after rescaling, so training error 0 is
possible iff the labels are linearly separable, ``alpha < alpha_sep = max_R (1 - R^2)/E_R[(-y omega)_+^2]``
(Gardner's volume with the teacher; the sign-channel case of Candès & Sur 2020, Ann. Stat. 48, 27);
``alpha_sep = inf`` for a noiseless teacher, 2 (Cover) for random labels.  A point zero set
(square loss, ``u = 1``) makes the training set a linear system: ``alpha_interp = 1``, the
double-descent peak of ridge as ``lam -> 0``.

**Maximal margin**: below ``alpha_sep`` the hinge ERM solution converges (at finite small lam) to the
maximal-stability perceptron: ``kappa_max(alpha)`` solves ``alpha_J(kappa) = alpha`` and its
direction has teacher overlap ``R*`` (generalization error ``arccos(R*)/pi``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import sympy as sp

from ..errors import check_range
from ..gaussian import G, H, expect_piecewise
from ..result import Result
from ..saddle import root_scalar
from ._fun1d import Fun1D
from .spec import Model, Prior, as_channel, as_loss, u as U

__all__ = ["zero_set", "sat_unsat", "separability", "max_margin", "ridge_peak", "ridge_peak_line",
           "separability_line", "Thresholds", "thresholds", "jamming_ratio"]


# =========================================================================== zero sets
def zero_set(loss):
    """``(kind, a, b)`` of the zero set of a margin loss: ``("interval", a, b)`` (a, b may be inf;
    ``("interval", kappa, inf)`` is the half-line), ``("point", c, c)`` or ``("infinity", inf, inf)``.
    The infimum of the loss must be 0 (ValueError otherwise)."""
    loss = as_loss(loss)
    f = loss.margin_function()
    if f is None:
        raise ValueError(f"zero_set: {loss.name} is not a margin loss (a function of y h)")
    fun = Fun1D(f, U, tuple(loss.param_symbols), loss.values, "loss")
    num = lambda e, x: float(sp.N(e.subs(loss.values).subs(U, x)))  # noqa: E731
    # constant pieces at value 0
    ivs = fun.intervals()
    zero = [(lo, hi) for lo, hi, i in ivs if fun.constant[i] and abs(num(fun.pieces[i], 0.0)) == 0.0]
    if zero:
        lo = min(a for a, _ in zero)
        hi = max(b for _, b in zero)
        return ("interval", lo, hi)
    # a point where the loss vanishes (a minimum of a smooth piece)
    for lo, hi, i in ivs:
        sols = sp.solve(sp.Eq(fun.d1[i].subs(loss.values), 0), U)
        for s in sols:
            try:
                c = float(s)
            except TypeError:
                continue
            if lo <= c <= hi and abs(num(fun.pieces[i], c)) <= 1e-14:
                return ("point", c, c)
    lim = sp.limit(f.subs(loss.values), U, sp.oo)
    if lim == 0:
        return ("infinity", math.inf, math.inf)
    raise ValueError(f"zero_set: the loss {loss.expr} does not vanish anywhere (its infimum must be 0)")


def _dist2(kind, a, b):
    """The squared distance to the zero set, as a vectorized function of the margin, with its kinks."""
    if kind == "point":
        return (lambda t: (t - a) ** 2), [a]
    brk = [x for x in (a, b) if math.isfinite(x)]
    return (lambda t: np.where(t < a, (a - t) ** 2, np.where(t > b, (t - b) ** 2, 0.0))), brk


def _zstar_fn(channel):
    """Z(y, mu, v) and its partials (mu, v) as numpy functions of (y, mu, v)."""
    mu, v = sp.Symbol("mu", real=True), sp.Symbol("v", positive=True)
    y = sp.Symbol("y", real=True)
    e = sp.sympify(channel.zstar).subs(channel.values)
    mods = [{"H": H, "Gauss": G}, "scipy", "numpy"]
    f = [sp.lambdify((y, mu, v), ex, modules=mods) for ex in (e, sp.diff(e, mu), sp.diff(e, v))]
    return lambda yy, mm, vv: tuple(np.asarray(g(yy, mm, vv), dtype=float) * np.ones_like(mm) for g in f)


def jamming_ratio(channel, zero, R):
    """``((1 - R^2)/E_R d^2, d/dR of it)`` for a spherical student with teacher overlap R (Eq. T1)."""
    kind, a, b = zero
    d2, brk = _dist2(kind, a, b)
    zf = _zstar_fn(channel)
    v = 1.0 - R * R

    def integrand(xi):
        tot = np.zeros((2,) + np.shape(xi))
        for y in (1.0, -1.0):
            Z, Zm, Zv = zf(y, R * xi, v)
            d = d2(y * xi)
            tot[0] += Z * d
            tot[1] += (Zm * xi - 2.0 * R * Zv) * d
        return np.moveaxis(tot, 0, -1)
    breaks = sorted({0.0, *brk, *[-x for x in brk]})
    E, dE = expect_piecewise(integrand, breaks)
    return v / E, (-2.0 * R * E - v * dE) / (E * E)


def sat_unsat(model, kappa=None):
    """RS SAT/UNSAT point of a spherical student for the zero set of ``model.loss`` (Eq. T1):
    ``(alpha_J, R*)`` (``R* = 0`` for random labels)."""
    ch = model.channel
    zero = zero_set(model.loss) if kappa is None else ("interval", float(kappa), math.inf)
    if zero[0] == "infinity":
        raise ValueError("sat_unsat: the loss never vanishes at a finite margin (logistic, exponential): "
                         "no zero-loss volume on the sphere")
    if ch.labels == "random":
        d2, brk = _dist2(*zero)
        E = float(expect_piecewise(d2, sorted(set(brk)) or [0.0]))
        return 1.0 / E, 0.0
    return _max_ratio(ch, zero)


def _max_ratio(ch, zero):
    """max over R in [0, 1) of the jamming ratio: Brent on its derivative; inf when it grows to R -> 1."""
    def dr(R):
        return jamming_ratio(ch, zero, R)[1]
    lo, hi = 0.0, 0.5
    g0 = dr(lo + 1e-12)
    if g0 <= 0:
        return jamming_ratio(ch, zero, 0.0)[0], 0.0
    # expand towards 1 until the derivative changes sign (or the ratio diverges: E_R d^2 -> 0)
    while True:
        with np.errstate(all="ignore"):
            g = dr(hi)
        if not np.isfinite(g) or 1.0 - hi < 1e-10:
            return math.inf, 1.0
        if g <= 0:
            break
        lo = hi
        hi = 1.0 - 0.5 * (1.0 - hi)
    Rs = float(root_scalar(dr, (lo, hi)).x[0])
    return jamming_ratio(ch, zero, Rs)[0], Rs


def separability(channel):
    """Separability threshold of the labels of ``channel`` by a hyperplane through the origin
    (``alpha_sep``, the teacher overlap of the separating direction at the threshold)."""
    ch = as_channel(channel)
    if ch.labels == "random":
        return 2.0, 0.0
    return _max_ratio(ch, ("interval", 0.0, math.inf))


def max_margin(channel, alpha):
    """Maximal-stability perceptron for the labels of ``channel`` at load ``alpha``: ``(kappa_max,
    R, generalization_error)``, ``kappa_max < 0`` above the separability threshold (RS, which is
    then unstable).  Hinge ERM with a ridge penalty converges to it as lam -> 0+."""
    ch = as_channel(channel)
    alpha = float(check_range("alpha", alpha, 0.0, lo_open=True))

    def f(kappa):
        return _max_ratio(ch, ("interval", kappa, math.inf))[0] - alpha
    lo, hi = -1.0, 1.0
    while f(hi) > 0:
        hi *= 2.0
    if not math.isfinite(f(0.0)):
        lo = 0.0        # separable labels (a noiseless teacher): kappa_max > 0
        while not math.isfinite(f(0.5 * hi if lo == 0.0 else lo)):
            hi *= 0.5
        lo = 0.5 * hi
        while f(lo) < 0:
            lo *= 0.5
    else:
        while f(lo) < 0:
            lo *= 2.0
    k = float(root_scalar(f, (lo, hi)).x[0])
    _, R = _max_ratio(ch, ("interval", k, math.inf))
    return k, R, math.acos(min(1.0, R)) / math.pi


# =========================================================================== ridge: double descent
def _ridge_eg_sympy():
    a, lam, c, rho = sp.symbols("alpha lam c rho", positive=True)
    b = lam + a - 1
    V = 2 / (b + sp.sqrt(b * b + 4 * lam))        # the positive root, without cancellation
    k = V / (1 + V)
    m = rho * a * c * k
    # sqrt(q) written with k > 0 outside the root (no |.| for sympy to differentiate)
    sq = k * sp.sqrt(a * (rho * a * c * c + 1 - 2 * c * m) / (1 - a * k * k))
    return sp.acos(m / (sp.sqrt(rho) * sq)) / sp.pi, (a, lam, c, rho)


def ridge_peak(lam, noise=0.0):
    """The local maximum of ``eps_g(alpha)`` of ridge regression on sign labels (square loss, ridge
    ``lam``): ``(alpha_peak, eps_g)``, ``(nan, nan)`` once the peak has disappeared (documented);
    -> ``(1, 1/2)`` as ``lam -> 0``."""
    line = ridge_peak_line(noise, lam_max=lam * 1.0000001, lam_min=min(lam, 1e-6))
    if not line["lam"].size or line["lam"].max() < lam * (1 - 1e-9):
        return math.nan, math.nan
    i = np.argmin(np.abs(np.log(line["lam"]) - math.log(lam)))
    return float(line["alpha"][i]), float(line["eps_g"][i])


def ridge_peak_line(noise=0.0, lam_min=1e-6, lam_max=1.0):
    """The double-descent peak of ridge traced in ``lam`` by the continuation engine: the stationary
    point ``d eps_g/d alpha = 0`` (a maximum) continued in ``log lam`` from ``lam_min`` until it
    meets the minimum (a fold: the peak disappears) or ``lam_max``.  Returns dict of arrays
    ``lam``, ``alpha``, ``eps_g`` and ``lam_fold`` (nan if not reached)."""
    from .. import continuation as C
    eg, (a, lam, c, rho) = _ridge_eg_sympy()
    ll = sp.Symbol("loglam", real=True)
    cval = (1 - 2 * float(noise)) * math.sqrt(2 / math.pi)
    expr = eg.subs({lam: sp.exp(ll), c: cval, rho: 1})
    # the start: the maximum near alpha = 1 at lam_min (width ~ sqrt(lam)): the sign change + -> -
    # of d eps_g/d alpha on a grid around 1, refined by Brent
    f = sp.lambdify((a, ll), sp.diff(expr, a), "mpmath")
    l0 = math.log(lam_min)
    grid = 1.0 + np.linspace(-0.5, 0.5, 2001) * max(50.0 * math.sqrt(lam_min), 1e-3)
    vals = np.array([float(f(x, l0)) for x in grid])
    k = np.nonzero((vals[:-1] > 0) & (vals[1:] <= 0))[0]
    if not k.size:
        raise ValueError(f"ridge_peak_line: no peak of eps_g(alpha) near alpha = 1 at lam = {lam_min:g}")
    a0 = float(root_scalar(lambda x: float(f(x, l0)), (grid[k[0]], grid[k[0] + 1])).x[0])
    prob = C.Problem.from_sympy(-expr, [a], ll, kind="free_energy", x0=[a0], p0=l0)
    with np.errstate(invalid="ignore", divide="ignore"):    # trial points beyond the fold are rejected
        br = C.trace(prob, p_min=l0, p_max=math.log(lam_max), ds=0.05, direction=1)
    folds = br.points("fold")
    lam_fold = math.exp(folds[0].p) if folds else math.nan
    # the peak side: before the fold
    sarr = np.asarray(br.s)
    keep = sarr <= (folds[0].s if folds else np.inf)
    al = np.asarray(br.x)[keep, 0]
    lamv = np.exp(np.asarray(br.p)[keep])
    efn = sp.lambdify((a, ll), expr, "numpy")
    return {"lam": lamv, "alpha": al, "eps_g": np.array([float(efn(x, math.log(y))) for x, y in zip(al, lamv)]),
            "lam_fold": lam_fold}


def separability_line(p_min=0.01, p_max=0.49):
    """``alpha_sep(p)`` of the sign channel with flip probability p, traced by the continuation
    engine (the stationary point of the jamming ratio in ``R`` continued in p); dict of arrays
    ``noise``, ``R``, ``alpha_sep``."""
    from .. import continuation as C
    from .spec import sign

    def F(x, p):
        return np.array([jamming_ratio(sign(p), ("interval", 0.0, math.inf), float(np.tanh(x[0])))[1]])
    p0 = 0.5 * (p_min + p_max)
    _, R0 = separability(sign(p0))
    prob = C.Problem(residual=F, x0=[math.atanh(R0)], p0=p0, names=("atanh_R",), p_name="noise",
                     stability="none", tol=1e-11)
    br = C.trace(prob, p_min=p_min, p_max=p_max, ds=0.02)
    order = np.argsort(br.p)
    ps = np.asarray(br.p)[order]
    Rs = np.tanh(np.asarray(br.x)[order, 0])
    al = np.array([jamming_ratio(sign(p), ("interval", 0.0, math.inf), R)[0] for p, R in zip(ps, Rs)])
    return {"noise": ps, "R": Rs, "alpha_sep": al}


# =========================================================================== one entry point
@dataclass(frozen=True, repr=False)
class Thresholds(Result):
    """Thresholds of a specification (``None`` where one does not apply to the model).

    Attributes
    ----------
    alpha_it, alpha_alg : Bayes-optimal first-order and spinodal thresholds (prior + channel)
    alpha_sat_unsat : RS SAT/UNSAT point of a spherical student (Eq. T1); Ising student:
        Krauth--Mézard (zero RS entropy)
    alpha_gardner_derrida : Ising student: RS ``q -> 1`` point
    alpha_interpolation : ERM with ridge as lam -> 0+: separability (half-line or infinite zero set)
        or 1 (square loss)
    zero_set : (kind, a, b) of the loss
    """
    headline: ClassVar[str] = "alpha_it"
    alpha_it: float | None = None
    alpha_alg: float | None = None
    alpha_sat_unsat: float | None = None
    alpha_gardner_derrida: float | None = None
    alpha_interpolation: float | None = None
    zero_set: Any = None
    converged: bool = True
    residual: float = 0.0
    iterations: int = 0
    ansatz: str = "rs"
    rs_stable: Any = None
    error: float = 0.0
    stability: Any = None
    model: str = ""


def thresholds(model=None, *, prior=None, channel=None):
    """The thresholds that apply to a model (:class:`Thresholds`).

    ``thresholds(prior="ising", channel="sign")``: Bayes-optimal ``alpha_it`` and ``alpha_alg``.
    ``thresholds(Model(..., loss=..., penalty="spherical"))``: SAT/UNSAT of the zero set;
    ``penalty="ising"`` (random labels): Krauth--Mézard and Gardner--Derrida; a ridge penalty:
    the interpolation (separability) threshold as lam -> 0+.
    """
    from .bayes import bayes_transition
    if model is None:
        if prior is None or channel is None:
            raise ValueError("thresholds: give a Model, or prior= and channel=")
        tr = bayes_transition(prior, channel)
        return Thresholds(alpha_it=tr.alpha_it, alpha_alg=tr.alpha_alg, rs_stable=True,
                          model=f"bayes({prior!r}, {channel!r})")
    if not isinstance(model, Model):
        raise TypeError(f"thresholds: model must be a glm.Model, got {type(model).__name__}")
    if model.loss is None:
        tr = bayes_transition(model.prior, model.channel)
        return Thresholds(alpha_it=tr.alpha_it, alpha_alg=tr.alpha_alg, rs_stable=True, model=repr(model))
    zero = zero_set(model.loss)
    pen = model.penalty
    if pen.constraint == "spherical":
        a, _ = sat_unsat(model)
        rep = None
        if model.channel.labels == "random" and zero[0] == "interval" and not math.isfinite(zero[2]):
            rep = 1.0 - a * float(H(-zero[1]))       # the jamming replicon (Franz-Parisi): < 0 for kappa < 0
        return Thresholds(alpha_sat_unsat=a, zero_set=zero, rs_stable=None if rep is None else rep >= 0,
                          stability=None if rep is None else np.array([rep]), model=repr(model))
    if pen.constraint == "ising":
        if model.channel.labels != "random":
            raise ValueError("thresholds: an Ising student is supported for random labels (storage) only")
        d2, brk = _dist2(*zero)
        E = float(expect_piecewise(d2, sorted(set(brk)) or [0.0]))
        a_gd = (2.0 / math.pi) / E
        a_km = _zero_entropy(model, a_gd)
        return Thresholds(alpha_sat_unsat=a_km, alpha_gardner_derrida=a_gd, zero_set=zero, model=repr(model))
    if zero[0] == "point":
        a_int = 1.0 if zero[1] != 0 else math.inf
    elif zero[0] == "interval" and zero[1] <= 0.0:
        a_int = math.inf       # w = 0 already has zero loss
    else:
        a_int = separability(model.channel)[0]
    return Thresholds(alpha_interpolation=a_int, zero_set=zero, model=repr(model))


def _zero_entropy(model, a_gd):
    """Krauth--Mézard: the zero of the RS entropy of the Ising version space (Gibbs, T = 0), by Brent
    in alpha (the entropy decreases with alpha: d phi/d alpha = Psi_out < 0)."""
    from .gibbs import gibbs

    def f(a):
        return float(gibbs(model, a).free_entropy)
    return float(root_scalar(f, (0.5 * a_gd * 0.5, a_gd * 0.999)).x[0])
