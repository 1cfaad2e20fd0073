r"""The specification of a generalized linear model: prior, channel, loss, penalty.

A model is a **teacher** -- a prior on its weights ``w*`` and a channel ``P(y | z)`` that turns
its field ``z = w*.x/sqrt N`` into a label -- and a **student**, which learns the labels by
empirical risk minimisation (a ``loss`` and a ``penalty``), by Gibbs learning at a temperature
(the same pair as an energy) or by Bayes-optimal inference (the teacher's own prior and channel).
Every component is a sympy expression with named run-time parameters; the built-in ones below
are written the same way, so a user's component is a first-class citizen::

    import sympy as sp
    from statmech import glm
    smooth_hinge = glm.Loss(sp.log(1 + sp.exp(glm.s * (1 - glm.y * glm.h))) / glm.s, s=4.0)

Symbols: ``glm.y`` (label), ``glm.h`` (the student's field ``w.x/sqrt N``), ``glm.z`` (the
teacher's field), ``glm.w`` (one weight), ``glm.u`` (a margin, for :func:`margin_loss`).  Any
other free symbol of an expression is a parameter whose value is given as a keyword
(``Loss(expr, s=4.0)``); parameters are passed to the compiled kernels at run time, so changing
one (or continuing in it) does not recompile.

Conventions (``docs/glm.md``): inputs ``x ~ N(0, I_N)``; teacher ``||w*||^2 = N``; labels
``y = sign(z)`` flipped with probability ``p`` (:func:`sign`), or the other channels below;
``alpha = P/N``; ERM minimises ``sum_mu loss(y_mu, h_mu) + sum_i penalty(w_i)``, the ridge
penalty being ``(lam/2) w^2``.
"""
from __future__ import annotations

import functools
import hashlib
import math
import numbers

import numpy as np
import sympy as sp

from ..errors import check_range
from ._fun1d import Fun1D

__all__ = ["y", "h", "z", "w", "u", "Loss", "Penalty", "Prior", "Channel", "Model",
           "square", "logistic", "hinge", "squared_hinge", "exponential", "margin_counting", "margin_loss",
           "ridge", "l1", "elastic_net", "spherical", "ising", "gaussian", "gauss_bernoulli",
           "random_labels", "sign", "probit", "linear", "LOSSES", "as_loss", "as_penalty", "as_prior",
           "as_channel"]

y, h, z, w, u = sp.symbols("y h z w u", real=True)


def _cached(fn):
    """Built-in constructors return one shared (immutable) object per argument values: building a
    component parses and checks sympy expressions (milliseconds), a solve should not pay it."""
    cache = functools.lru_cache(maxsize=256)(fn)

    @functools.wraps(fn)
    def wrapper(*args, **kw):
        try:
            return cache(*args, **kw)
        except TypeError:           # unhashable arguments (arrays): no caching
            return fn(*args, **kw)
    return wrapper
_RESERVED = {"y", "h", "z", "w", "u"}


def _check_params(kind, expr, variables, params):
    """The run-time parameters of ``expr``: its free symbols other than ``variables``, each
    with a real value in ``params`` (ValueError otherwise); returns (symbols, values)."""
    expr = sp.sympify(expr)
    free = sorted((s for s in expr.free_symbols if s not in variables), key=lambda s: s.name)
    names = {s.name for s in free}
    extra = set(params) - names
    if extra:
        raise ValueError(f"{kind} {expr}: parameters {sorted(extra)} do not appear in the expression")
    missing = [s.name for s in free if s.name not in params]
    if missing:
        raise ValueError(f"{kind} {expr}: give a value for the parameter(s) {missing} "
                         f"(e.g. {kind.capitalize()}(expr, {missing[0]}=1.0))")
    syms, vals = [], {}
    for s in free:
        v = params[s.name]
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (numbers.Real, np.floating, np.integer)):
            raise TypeError(f"{kind} parameter {s.name} must be a real number, got {v!r}")
        if not math.isfinite(float(v)):
            raise ValueError(f"{kind} parameter {s.name} must be finite, got {v!r}")
        # a plain real symbol for the kernels (assumptions on the user's symbol are dropped)
        syms.append(s)
        vals[s] = float(v)
    return tuple(syms), vals


class _Component:
    """Common part: a sympy expression with named run-time parameters."""
    kind = "component"
    variables = ()

    def __init__(self, expr, name=None, **params):
        self.expr = sp.sympify(expr)
        self.param_symbols, values = _check_params(self.kind, self.expr, set(self.variables), params)
        self.values = values
        self.name = name or str(self.expr)

    @property
    def params(self):
        """dict parameter name -> value."""
        return {s.name: self.values[s] for s in self.param_symbols}

    def with_params(self, **params):
        """A copy with some parameter values changed (same compiled kernels)."""
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        vals = dict(self.values)
        for k, v in params.items():
            sym = next((s for s in self.param_symbols if s.name == k), None)
            if sym is None:
                raise ValueError(f"{self.kind} {self.name} has no parameter {k!r} "
                                 f"(parameters: {[s.name for s in self.param_symbols]})")
            vals[sym] = float(check_range(k, v))
        new.values = vals
        new._post_params()
        return new

    def _post_params(self):
        pass

    def key(self):
        """Canonical text of the expression (parameters renamed by position): the compile key
        (computed once per expression; parameter values do not enter it)."""
        k = self.__dict__.get("_key")
        if k is None or k[0] != self.tag():
            sub = {s: sp.Symbol(f"_p{i}", real=True) for i, s in enumerate(self.param_symbols)}
            k = (self.tag(), f"{type(self).__name__}:{self.tag()}:{sp.srepr(self.expr.xreplace(sub))}")
            self.__dict__["_key"] = k
        return k[1]

    def tag(self):
        return ""

    def __repr__(self):
        ps = ", ".join(f"{k}={v:g}" for k, v in self.params.items())
        return f"{type(self).__name__}({self.name}{', ' + ps if ps else ''})"


# =========================================================================== losses
class Loss(_Component):
    """A loss ``loss(y, h)`` (sympy, in ``glm.y`` and ``glm.h``) with run-time parameters.

    For binary labels a loss with ``loss(-1, -h) = loss(1, h)`` is a *margin* loss, a function
    of ``u = y h`` (one proximal operator for both labels); for real labels a loss that depends
    on ``y - h`` only is a *residual* loss.  Others get one proximal operator per label.
    """
    kind = "loss"
    variables = (y, h)

    def margin_function(self):
        """``f(u)`` with ``loss(y, h) = f(y h)`` for y = +-1, or None."""
        lp = self.expr.subs({y: 1, h: u})
        lm = self.expr.subs({y: -1, h: -u})
        return lp if sp.simplify(lp - lm) == 0 else None

    def residual_function(self):
        """``f(r)`` with ``loss(y, h) = f(y - h)``, or None."""
        r = sp.Symbol("r", real=True)
        e = sp.simplify(self.expr.subs(h, y - r))
        return e.subs(r, u) if not e.has(y) else None


@_cached
def square():
    """Square loss ``(y - h)^2/2`` (``(1 - u)^2/2`` for labels +-1)."""
    return Loss((y - h) ** 2 / 2, name="square")


@_cached
def logistic():
    """Logistic loss ``log(1 + exp(-y h))``."""
    return Loss(sp.log(1 + sp.exp(-y * h)), name="logistic")


@_cached
def hinge():
    """Hinge loss ``max(0, 1 - y h)``."""
    return Loss(sp.Max(0, 1 - y * h), name="hinge")


@_cached
def squared_hinge():
    """Squared hinge ``max(0, 1 - y h)^2/2``."""
    return Loss(sp.Max(0, 1 - y * h) ** 2 / 2, name="squared_hinge")


@_cached
def exponential():
    """Exponential loss ``exp(-y h)``."""
    return Loss(sp.exp(-y * h), name="exponential")


@_cached
def margin_counting(kappa=0.0):
    """The margin-counting cost ``theta(kappa - y h)`` (1 for a pattern with stability below kappa)."""
    k = sp.Symbol("kappa", real=True)
    return Loss(sp.Heaviside(k - y * h), name="margin_counting", kappa=kappa)


def margin_loss(expr, name=None, **params):
    """A margin loss given as a function of ``glm.u`` (``u = y h``)."""
    return Loss(sp.sympify(expr).subs(u, y * h), name=name or str(expr), **params)


LOSSES = {"square": square, "logistic": logistic, "hinge": hinge, "squared_hinge": squared_hinge,
          "exponential": exponential, "margin_counting": margin_counting}


def as_loss(loss, **params):
    """A :class:`Loss` from a Loss, a built-in name or a sympy expression in (y, h)."""
    if isinstance(loss, Loss):
        return loss.with_params(**params) if params else loss
    if isinstance(loss, str):
        if loss not in LOSSES:
            raise ValueError(f"loss must be one of {', '.join(map(repr, LOSSES))} or a glm.Loss, got {loss!r}")
        return LOSSES[loss](**params)
    if isinstance(loss, sp.Basic):
        return Loss(loss, **params)
    raise TypeError(f"loss must be a glm.Loss, a name or a sympy expression, got {type(loss).__name__}")


# =========================================================================== penalties (ERM / Gibbs energy on w)
class Penalty(_Component):
    """A separable penalty ``r(w)`` per weight (sympy in ``glm.w``), or a constraint.

    ``Penalty.constraint`` is ``None`` for an ordinary penalty, ``"spherical"`` for
    ``||w||^2 = N`` and ``"ising"`` for ``w_i = +-1`` (then ``expr`` is 0)."""
    kind = "penalty"
    variables = (w,)
    constraint = None

    def tag(self):
        return self.constraint or ""

    def is_ridge(self):
        """True for ``lam w^2/2`` (closed forms); the coefficient is ``self.values`` of ``lam``."""
        return self.constraint is None and self.name == "ridge"


@_cached
def ridge(lam=1.0):
    """Ridge penalty ``(lam/2) w^2`` (``lam > 0``; ``lam -> 0+`` is handled as a limit by thresholds)."""
    lam = float(check_range("lam", lam, 0.0))
    return Penalty(sp.Symbol("lam", real=True) * w ** 2 / 2, name="ridge", lam=lam)


@_cached
def l1(lam=1.0):
    """Lasso penalty ``lam |w|``."""
    return Penalty(sp.Symbol("lam1", real=True) * sp.Abs(w), name="l1", lam1=float(check_range("lam", lam, 0.0)))


@_cached
def elastic_net(lam1=1.0, lam2=1.0):
    """Elastic net ``lam1 |w| + (lam2/2) w^2``."""
    a, b = sp.symbols("lam1 lam2", real=True)
    return Penalty(a * sp.Abs(w) + b * w ** 2 / 2, name="elastic_net", lam1=float(check_range("lam1", lam1, 0.0)),
                   lam2=float(check_range("lam2", lam2, 0.0)))


@_cached
def spherical():
    """The spherical constraint ``||w||^2 = N`` (as a student prior: uniform on the sphere)."""
    p = Penalty(sp.Integer(0), name="spherical")
    p.constraint = "spherical"
    return p


@_cached
def _ising_penalty():
    p = Penalty(sp.Integer(0), name="ising")
    p.constraint = "ising"
    return p


def as_penalty(penalty):
    """A :class:`Penalty` from a Penalty, ``"spherical"``, ``"ising"``, ``("ridge", lam)`` or a sympy expression."""
    if isinstance(penalty, Penalty):
        return penalty
    if isinstance(penalty, Prior):
        if penalty.name == "spherical":
            return spherical()
        if penalty.name == "ising":
            return _ising_penalty()
        raise ValueError(f"penalty: the prior {penalty} is not a penalty; use glm.ridge(lam) for a Gaussian")
    if isinstance(penalty, str):
        if penalty == "spherical":
            return spherical()
        if penalty == "ising":
            return _ising_penalty()
        if penalty == "ridge":
            return ridge()
        if penalty == "l1":
            return l1()
        raise ValueError(f"penalty must be 'spherical', 'ising', 'ridge', 'l1', a glm.Penalty or a sympy "
                         f"expression in glm.w, got {penalty!r}")
    if isinstance(penalty, sp.Basic):
        return Penalty(penalty)
    raise TypeError(f"penalty must be a glm.Penalty, a name or a sympy expression, got {type(penalty).__name__}")


# =========================================================================== priors (teacher, Bayes)
class Prior(_Component):
    """A separable prior distribution of one weight (sympy density in ``glm.w``).

    Sums of ``DiracDelta(w - c)`` terms and Gaussian densities are recognised as mixtures
    (:attr:`mixture`: rows (weight, mean, variance)); the Bayes-optimal and ERM averages over such
    a prior are one-dimensional integrals.  ``spherical()`` (uniform on ``||w||^2 = N``) behaves as
    the unit Gaussian for every rotation-invariant computation.  A density that is not
    normalisable, negative or not a mixture of these forms raises ``ValueError``.
    """
    kind = "prior"
    variables = (w,)

    def __init__(self, expr, name=None, **params):
        super().__init__(expr, name=name, **params)
        self._post_params()

    def _post_params(self):
        self.mixture = _mixture(self.expr, self.values, self.name)
        wts, mu, var = self.mixture.T
        self.rho = float(np.sum(wts * (mu ** 2 + var)))
        if not self.rho > 0:
            raise ValueError(f"prior {self.name}: the second moment E w^2 must be > 0, got {self.rho}")


def _gaussian_term(term, values):
    """(weight, mean, var) if ``term`` is c exp(-(w - mu)^2/(2 var)) (numbers), else None."""
    term = sp.powsimp(sp.expand(term.subs(values)))
    c, rest = term.as_independent(w, as_Add=False)
    if not isinstance(rest, sp.exp):
        return None
    arg = sp.expand(rest.args[0])
    poly = sp.Poly(arg, w) if arg.is_polynomial(w) else None
    if poly is None or poly.degree() != 2:
        return None
    a2, a1, a0 = (float(poly.coeff_monomial(w ** k)) for k in (2, 1, 0))
    if not a2 < 0:
        return None
    var = -1.0 / (2.0 * a2)
    mu = a1 * var
    weight = float(c) * math.exp(a0 + mu * mu / (2 * var)) * math.sqrt(2 * math.pi * var)
    return weight, mu, var


def _mixture(expr, values, name):
    e = sp.expand(sp.sympify(expr).subs(values))
    rows = []
    for term in sp.Add.make_args(e):
        deltas = [f for f in sp.Mul.make_args(term) if isinstance(f, sp.DiracDelta)]
        if deltas:
            if len(deltas) != 1:
                raise ValueError(f"prior {name}: a product of delta functions is not a density")
            d = deltas[0]
            coeff = sp.simplify(term / d)
            if coeff.has(w):
                coeff = coeff.subs(w, sp.solve(d.args[0], w)[0])
            sol = sp.solve(d.args[0], w)
            if len(sol) != 1:
                raise ValueError(f"prior {name}: delta {d} is not a single point mass")
            rows.append((float(coeff) / abs(float(sp.diff(d.args[0], w))), float(sol[0]), 0.0))
            continue
        g = _gaussian_term(term, values)
        if g is None:
            if term.has(w):
                # check normalisability before saying it is unsupported
                try:
                    tot = sp.integrate(term, (w, -sp.oo, sp.oo))
                except Exception:  # noqa: BLE001 -- sympy may fail: then only "unsupported" is said
                    tot = None
                if tot is not None and not tot.has(sp.Integral) and (tot.has(sp.oo, -sp.oo, sp.zoo, sp.nan)
                                                                    or not tot.is_finite):
                    raise ValueError(f"prior {name} is not normalisable: the integral of {term} over w is {tot}")
                raise ValueError(f"prior {name}: the term {term} is neither a point mass DiracDelta(w - c) nor a "
                                 "Gaussian density; only such mixtures are supported as priors")
            raise ValueError(f"prior {name} is not normalisable: the constant term {term} integrates to infinity")
        rows.append(g)
    arr = np.array(rows, dtype=float)
    if arr.size == 0:
        raise ValueError(f"prior {name}: empty density")
    if np.any(arr[:, 0] < 0):
        raise ValueError(f"prior {name} is not a probability: negative mixture weight {arr[:, 0].min():g}")
    tot = arr[:, 0].sum()
    if not abs(tot - 1.0) <= 1e-10:
        raise ValueError(f"prior {name} is not normalised: its total mass is {tot:.12g} (must be 1)")
    return arr


@_cached
def gaussian(var=1.0):
    """Gaussian prior ``N(0, var)`` (the default teacher: ``||w*||^2 = N`` for var = 1)."""
    v = sp.Symbol("var", positive=True)
    return Prior(sp.exp(-w ** 2 / (2 * v)) / sp.sqrt(2 * sp.pi * v), name="gaussian",
                 var=float(check_range("var", var, 0.0, lo_open=True)))


@_cached
def ising():
    """Ising prior: ``w = +-1`` with probability 1/2 each."""
    return Prior(sp.DiracDelta(w - 1) / 2 + sp.DiracDelta(w + 1) / 2, name="ising")


@_cached
def _spherical_prior():
    p = gaussian(1.0)
    p.name = "spherical"
    return p


@_cached
def gauss_bernoulli(rho=0.5):
    """Sparse prior: 0 with probability ``1 - rho``, else ``N(0, 1/rho)`` (so ``E w^2 = 1``)."""
    r = sp.Symbol("rho", positive=True)
    rho = float(check_range("rho", rho, 0.0, 1.0, lo_open=True))
    return Prior((1 - r) * sp.DiracDelta(w) + r * sp.exp(-r * w ** 2 / 2) * sp.sqrt(r / (2 * sp.pi)),
                 name="gauss_bernoulli", rho=rho)


_PRIORS = {"gaussian": gaussian, "ising": ising, "spherical": _spherical_prior, "gauss_bernoulli": gauss_bernoulli}


def as_prior(prior):
    """A :class:`Prior` from a Prior, a name (``"gaussian"``, ``"ising"``, ``"spherical"``,
    ``"gauss_bernoulli"``) or a sympy density in ``glm.w``."""
    if isinstance(prior, Prior):
        return prior
    if isinstance(prior, str):
        if prior not in _PRIORS:
            raise ValueError(f"prior must be one of {', '.join(map(repr, _PRIORS))} or a glm.Prior, got {prior!r}")
        return _PRIORS[prior]()
    if isinstance(prior, sp.Basic):
        return Prior(prior)
    raise TypeError(f"prior must be a glm.Prior, a name or a sympy density, got {type(prior).__name__}")


# =========================================================================== channels
class Channel(_Component):
    """A teacher channel ``P(y | z)`` (sympy in ``glm.y``, ``glm.z``) for labels ``y = +-1``.

    The solvers use its Gaussian smoothing ``Z(y, mu, v) = E_t P(y | mu + sqrt(v) t)``
    (:attr:`zstar`, a sympy expression in ``y``, ``mu``, ``v``: closed forms for the built-in
    channels; a custom channel passes its own as ``zstar=`` -- without it the solvers raise
    ValueError, the numerical smoothing is not implemented).  ``labels`` is ``"binary"``,
    ``"random"`` (storage: labels independent of the teacher) or ``"real"`` (:func:`linear`).
    A channel that is not a probability (``P(1|z) + P(-1|z) != 1`` or negative) raises ValueError.
    """
    kind = "channel"
    variables = (y, z)
    labels = "binary"

    def __init__(self, expr, name=None, zstar=None, symmetric=None, **params):
        super().__init__(expr, name=name, **params)
        self.zstar = zstar
        if self.labels == "binary":
            self._check_probability()
        self.symmetric = symmetric if symmetric is not None else self._symmetric()

    def tag(self):
        return self.labels

    def _symmetric(self):
        if self.labels != "binary":
            return True
        return sp.simplify(self.expr.subs({y: -1, z: -z}) - self.expr.subs({y: 1})) == 0

    def _check_probability(self):
        e = self.expr.subs(self.values)
        pp, pm = e.subs(y, 1), e.subs(y, -1)
        zs = np.concatenate([np.linspace(-10, 10, 401), [-1e3, 1e3]])
        mods = [{"Heaviside": lambda x, h0=0.5: np.heaviside(x, h0)}, "scipy", "numpy"]
        fp = sp.lambdify(z, pp, modules=mods)
        fm = sp.lambdify(z, pm, modules=mods)
        with np.errstate(all="ignore"):
            a = np.asarray(fp(zs), dtype=float) * np.ones_like(zs)
            b = np.asarray(fm(zs), dtype=float) * np.ones_like(zs)
        tot = a + b
        bad = ~np.isfinite(tot) | (np.abs(tot - 1) > 1e-10)
        if np.any(bad):
            z0 = float(zs[np.argmax(bad)])
            raise ValueError(f"channel {self.name} is not a probability: P(y=1|z) + P(y=-1|z) = "
                             f"{float(tot[np.argmax(bad)]):.6g} at z = {z0:g} (must be 1 for every z)")
        if np.any(a < -1e-14) or np.any(b < -1e-14):
            z0 = float(zs[np.argmax((a < -1e-14) | (b < -1e-14))])
            raise ValueError(f"channel {self.name} is not a probability: P(y|z) < 0 at z = {z0:g}")


def _sym(name):
    return sp.Symbol(name, real=True)


@_cached
def random_labels():
    """Storage: labels +-1 independent of the teacher (``P(y | z) = 1/2``)."""
    c = Channel(sp.Rational(1, 2), name="random", zstar=sp.Rational(1, 2), symmetric=True)
    c.labels = "random"
    return c


@_cached
def sign(noise=0.0):
    """``y = sign(z)``, flipped with probability ``noise`` (``0 <= noise <= 1/2``)."""
    p = _sym("p")
    noise = float(check_range("noise", noise, 0.0, 0.5))
    mu, v = _sym("mu"), sp.Symbol("v", positive=True)
    from ..symbolic import H
    zs = p + (1 - 2 * p) * H(-y * mu / sp.sqrt(v))
    return Channel((1 - p) * sp.Heaviside(y * z) + p * sp.Heaviside(-y * z), name="sign", zstar=zs,
                   symmetric=True, p=noise)


@_cached
def probit(sigma=1.0):
    """``P(y | z) = H(-y z/sigma)`` (Gaussian noise of std ``sigma`` before the sign)."""
    s = sp.Symbol("sigma", positive=True)
    sigma = float(check_range("sigma", sigma, 0.0, lo_open=True))
    mu, v = _sym("mu"), sp.Symbol("v", positive=True)
    from ..symbolic import H
    return Channel(sp.erfc(-y * z / (s * sp.sqrt(2))) / 2, name="probit", zstar=H(-y * mu / sp.sqrt(v + s ** 2)), symmetric=True, sigma=sigma)


class _Linear(Channel):
    labels = "real"

    def __init__(self, noise):
        d = sp.Symbol("Delta", positive=True)
        _Component.__init__(self, sp.exp(-(y - z) ** 2 / (2 * d)) / sp.sqrt(2 * sp.pi * d), name="linear",
                            Delta=noise)
        self.zstar = None
        self.symmetric = True

    def _post_params(self):
        if not self.values[self.param_symbols[0]] > 0:
            raise ValueError("linear channel: noise must be > 0")


@_cached
def linear(noise=0.1):
    """Regression teacher ``y = z + sqrt(noise) eps`` (``eps ~ N(0, 1)``, ``noise > 0``)."""
    return _Linear(float(check_range("noise", noise, 0.0, lo_open=True)))


def as_channel(channel):
    """A :class:`Channel` from a Channel, a name (``"sign"``, ``"random"``, ``"probit"``,
    ``"linear"``) or a sympy expression ``P(y | z)``."""
    if isinstance(channel, Channel):
        return channel
    if isinstance(channel, str):
        table = {"sign": sign, "random": random_labels, "storage": random_labels, "probit": probit, "linear": linear}
        if channel not in table:
            raise ValueError(f"channel must be one of {', '.join(map(repr, table))} or a glm.Channel, got {channel!r}")
        return table[channel]()
    if isinstance(channel, sp.Basic):
        return Channel(channel)
    raise TypeError(f"channel must be a glm.Channel, a name or a sympy expression, got {type(channel).__name__}")


# =========================================================================== the model
class Model:
    """A teacher (``prior``, ``channel``) and an estimator (``loss``, ``penalty``).

    Parameters
    ----------
    prior : Prior or name, default ``"gaussian"`` (unit variance: ``||w*||^2 = N``)
        The teacher's prior.
    channel : Channel or name, default ``"sign"``
    loss : Loss, name or sympy expression in (y, h), optional
        The estimator's loss (ERM) or energy (Gibbs learning).
    penalty : Penalty, name or sympy expression in w, default ``ridge(1.0)`` for ERM
        ``"spherical"`` and ``"ising"`` are the constraints ``||w||^2 = N`` and ``w = +-1``.
    **params
        Shorthands: ``lam`` (ridge coefficient), ``noise`` (sign-channel flip probability),
        ``kappa`` (margin-counting threshold).
    """

    def __init__(self, prior="gaussian", channel="sign", loss=None, penalty=None, *, lam=None, noise=None,
                 kappa=None):
        self.prior = as_prior(prior)
        self.channel = as_channel(channel)
        if noise is not None:
            if self.channel.name != "sign":
                raise ValueError("noise= applies to the sign channel; give the channel's own parameter instead")
            self.channel = sign(noise)
        self.loss = None if loss is None else as_loss(loss)
        if kappa is not None:
            if self.loss is None or "kappa" not in self.loss.params:
                raise ValueError("kappa= applies to the margin-counting loss")
            self.loss = self.loss.with_params(kappa=kappa)
        if penalty is None:
            penalty = ridge(1.0 if lam is None else lam)
        elif lam is not None:
            raise ValueError("give either penalty= or lam=, not both")
        self.penalty = as_penalty(penalty)

    def with_params(self, **kw):
        """A copy with parameters changed: ``lam``, ``noise``, ``kappa`` or ``loss_<name>``,
        ``penalty_<name>``, ``channel_<name>``, ``prior_<name>``."""
        new = object.__new__(Model)
        new.__dict__.update(self.__dict__)
        for k, v in kw.items():
            if k == "lam":
                if not new.penalty.is_ridge():
                    raise ValueError("lam applies to the ridge penalty")
                new.penalty = new.penalty.with_params(lam=v)
            elif k == "noise":
                new.channel = new.channel.with_params(p=v)
            elif k == "kappa":
                new.loss = new.loss.with_params(kappa=v)
            else:
                comp, _, name = k.partition("_")
                if comp not in ("loss", "penalty", "channel", "prior") or getattr(new, comp) is None:
                    raise ValueError(f"unknown model parameter {k!r}")
                setattr(new, comp, getattr(new, comp).with_params(**{name: v}))
        return new

    @property
    def lam(self):
        return self.penalty.params.get("lam") if self.penalty.is_ridge() else None

    def key(self, theory):
        """The compile key of the kernels of ``theory`` for this model."""
        parts = [theory, self.prior.key() if theory == "bayes" else "", self.channel.key(),
                 self.loss.key() if self.loss is not None else "", self.penalty.key()]
        return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]

    def __repr__(self):
        return f"Model(prior={self.prior!r}, channel={self.channel!r}, loss={self.loss!r}, penalty={self.penalty!r})"
