r"""Mean-field activations: the channel (gate) model of a hidden unit, Swish/ESP.

The model (Milletarí, Chotibut & Trevisanutto 2019, Sec. 2.3)
-------------------------------------------------------------
Sources: M. Milletarí, T. Chotibut and P. E. Trevisanutto, "Mean Field Theory of Activation
Functions in Deep Neural Networks", arXiv:1805.08786 (ICML 2019 Workshop on Theoretical
Physics for Deep Learning), whose equation numbers are quoted below; its first, longer
version (arXiv:1805.08786v1, 2018, "Expectation propagation: a probabilistic view of Deep Feed
Forward Networks") names the activation ESP, "Expected Signal Propagation".

A hidden unit receives the pre-activation (coarse-grained field) ``h`` and transmits it
through a binary gate ``s in {0, 1}``.  The maximum-entropy distribution of the gate
given ``h`` at noise level ``1/beta`` is (Eq. 2)

    P(s | h) = exp(beta s h) / Z,        Z(h, beta) = sum_{s=0,1} exp(beta s h) = 1 + e^{beta h}.

Everything below is *derived* from ``log Z`` with :func:`sympy.diff` inside the
``@kernels`` function :data:`_K` (the equations exist once):

===========================  ===================================================  ============================
quantity                     derived as                                           closed form
===========================  ===================================================  ============================
log partition function       log Z                                                softplus(beta h)
gate expectation <s>         (1/beta) d log Z / dh         (Eq. 4)                sigma(beta h)
transmitted signal <j>       d log Z / d beta, j = h s      (Eq. 5)               h sigma(beta h)  (Swish/ESP)
back-propagation factor g    d<j>/dh                        (Sec. 2.4)            sigma(bh)[1 + bh sigma(-bh)]
variance of j                d^2 log Z / d beta^2                                 h^2 sigma(bh) sigma(-bh)
variance of s                beta^-2 d^2 log Z / dh^2                             sigma(bh) sigma(-bh)
===========================  ===================================================  ============================

Limits (tested symbolically and numerically): ``beta -> inf``: ``<j> -> max(h, 0)``
(ReLU, Eq. 6), ``g -> Heaviside(h)``; ``beta -> 0``: ``<j> -> h/2`` (linear),
``g -> 1/2``.  Corrections to the paper: Eq. 3 carries a spurious ``m^{-1}``
in the denominator, and Sec. 2.4 states that Swish is negative only for
``sigma(h)/beta < h < 0`` -- in fact ``h sigma(beta h) < 0`` for every ``h < 0``; the
minimum is at ``beta h = -W(1/e) - 1 = -1.278464542761074`` (``W`` = Lambert W), value
``-0.278464542761074/beta``.

Numerics: the logistic function and softplus are sympy functions (:class:`Sigmoid`,
:class:`Softplus`) with exact derivatives, printed into the numba kernels as the
branch-stable forms ``1/(1+e^{-x})`` (x >= 0) / ``e^x/(1+e^x)`` (x < 0) and
``x + log1p(e^{-x})`` / ``log1p(e^x)``, so every kernel is accurate to a few ulp for
all finite ``beta h`` (no overflow, no cancellation of 1 - sigma).  ``beta = inf`` is
handled exactly by the limit formulas.

Numba-callable scalars (compiled lazily, cached): ``gate_nb, esp_nb, esp_derivative_nb,
log_partition_nb, esp_dbeta_nb, esp_dhh_nb, esp_dhbeta_nb, esp_dbetabeta_nb`` -- each
``f(h, beta) -> float`` for finite ``beta`` (module attributes, e.g.
``statmech.activations.esp_nb``).

Soft committee machines with ESP units
--------------------------------------
:class:`ESP` is an activation object for :mod:`statmech.scm` (a vectorized callable
with ``pair_moment(rho) = E[g(u) g(v)]`` for unit-variance ``u, v`` of correlation
``rho`` and ``mean() = E[g(z)]``).  The pair moment is computed from the exact split
``g(x) = x/2 + e(x)`` with the *even* part ``e(x) = (x/2) tanh(beta x/2)``:
``E[u e(v)] = rho E[v e(v)] = 0``, hence

    E[g(u) g(v)] = rho/4 + E[e(u) e(v)],

and ``E[e(u) e(v)]`` is a two-dimensional integral done in polar coordinates of the
whitened plane (``u = r cos phi``, ``v = r cos(phi - theta)``, ``cos theta = rho``):
the radial measure ``r e^{-r^2/2} dr`` becomes ``dt`` on (0, 1) (``t = 1 - e^{-r^2/2}``)
and the angle is cut at the zero lines of ``u`` and ``v`` (where ``e`` has its layer of
width ``1/beta``); both are tanh--sinh rules (double-exponential convergence, no
cut-off).  Derivatives follow from Price's theorem,
``d^n/d rho^n E[g(u)g(v)] = E[g^(n)(u) g^(n)(v)]``, computed the same way.  For
``beta = inf`` the ReLU closed forms are used.  Accuracy (tested against mpmath
double quadrature and a Gauss--Hermite brute force): ~1e-16 absolute at the default
level 5 (levels 4-7 agree to 1e-16) for 0.05 <= beta <= 1e4 and all rho in [-1, 1];
~6 ms per value.

:func:`scm_transitions` runs :func:`statmech.scm.transitions` with ``ESP(beta)`` over a
grid of beta (the (beta, alpha) phase diagram).  statmech.scm interpolates m(rho) by a
degree-96 Chebyshev series in arcsin(rho); ``ESPTransitions.interp_error`` reports the
interpolation error of m' (see docs/activations.md for the measured accuracy).

Functions
---------
partition_function(h, beta), log_partition(h, beta), gate_expectation(h, beta),
esp(h, beta), esp_derivative(h, beta), esp_variance(h, beta), gate_variance(h, beta),
esp_parameter_derivatives(h, beta), relu_pair_moment(rho), ESP(beta),
scm_transitions(K, betas).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import sympy as sp

from .errors import ConvergenceError, check_finite, check_int, check_range
from .result import Result
from .symbolic import Scalar, kernels

__all__ = ["Sigmoid", "Softplus", "partition_function", "gate_expectation", "esp", "esp_derivative", "log_partition",
           "esp_variance", "gate_variance", "esp_parameter_derivatives", "gate_derivatives", "relu_pair_moment",
           "ESP", "ESPTransitions", "scm_transitions", "SWISH_MIN_X", "SWISH_MIN_VALUE"]

#: beta h at the minimum of h sigma(beta h): -(1 + W(1/e)) (W = Lambert W)
SWISH_MIN_X = -1.2784645427610738
#: minimum value of beta * h sigma(beta h), = -W(1/e)
SWISH_MIN_VALUE = -0.2784645427610738


# --------------------------------------------------------------------------- sympy functions
class Sigmoid(sp.Function):
    """Logistic function sigma(x) = 1/(1 + e^{-x}), with exact derivative sigma(x) sigma(-x).

    Printed into numba kernels in a branch-stable form (relative accuracy ~1 ulp for all
    finite x; no overflow).
    """
    nargs = 1

    def fdiff(self, argindex=1):
        x = self.args[0]
        return Sigmoid(x) * Sigmoid(-x)

    @classmethod
    def eval(cls, x):
        if x.is_zero:
            return sp.S.Half
        if x is sp.oo:
            return sp.S.One
        if x is -sp.oo:
            return sp.S.Zero
        return None

    def _eval_rewrite_as_exp(self, x, **kw):
        return 1 / (1 + sp.exp(-x))

    def _eval_rewrite_as_tanh(self, x, **kw):
        return (1 + sp.tanh(x / 2)) / 2

    def _pythoncode(self, printer, **kw):
        a = printer._print(self.args[0])
        return (f"(1.0/(1.0 + math.exp(-({a}))) if ({a}) >= 0.0 "
                f"else math.exp({a})/(1.0 + math.exp({a})))")


class Softplus(sp.Function):
    """softplus(x) = log(1 + e^x), derivative Sigmoid(x); printed without overflow."""
    nargs = 1

    def fdiff(self, argindex=1):
        return Sigmoid(self.args[0])

    @classmethod
    def eval(cls, x):
        if x.is_zero:
            return sp.log(2)
        return None

    def _eval_rewrite_as_exp(self, x, **kw):
        return sp.log(1 + sp.exp(x))

    def _pythoncode(self, printer, **kw):
        a = printer._print(self.args[0])
        return f"(({a}) + math.log1p(math.exp(-({a}))) if ({a}) > 0.0 else math.log1p(math.exp({a})))"


# --------------------------------------------------------------------------- the equations
@kernels
def _K():
    """The channel model, written once: everything is a derivative of log Z (Milletarí et al. 2019, Eqs. 2-5)."""
    h, beta = sp.symbols("h beta", real=True)
    # partition function of one gate, Z = sum_{s=0,1} exp(beta s h) = 1 + e^{beta h}
    log_Z = Softplus(beta * h)
    gate = sp.diff(log_Z, h) / beta                 # <s> (Eq. 4)
    esp_ = sp.diff(log_Z, beta)                     # <j> = <h s> (Eq. 5)
    g = sp.diff(esp_, h)                            # back-propagation factor (Sec. 2.4)
    # even part of ESP, e(h) = esp - h/2 = (h/2) tanh(beta h/2) (tanh form: no cancellation)
    r, a, b = sp.symbols("r a b", real=True)
    even = h / 2 * sp.tanh(beta * h / 2)
    e1 = sp.diff(even, h)
    e2 = sp.diff(even, h, 2)
    pair = lambda f: (f.subs(h, r * a) * f.subs(h, r * b))  # noqa: E731
    return {
        "log_partition": Scalar((h, beta), log_Z),
        "gate": Scalar((h, beta), sp.simplify(gate)),
        "gate_dh": Scalar((h, beta), sp.diff(gate, h)),
        "gate_dhh": Scalar((h, beta), sp.diff(gate, h, 2)),
        "esp": Scalar((h, beta), esp_),
        "esp_derivative": Scalar((h, beta), g),
        "esp_dhh": Scalar((h, beta), sp.diff(esp_, h, 2)),
        "esp_dbeta": Scalar((h, beta), sp.diff(esp_, beta)),
        "esp_dhbeta": Scalar((h, beta), sp.diff(esp_, h, beta)),
        "esp_dbetabeta": Scalar((h, beta), sp.diff(esp_, beta, 2)),
        "esp_variance": Scalar((h, beta), sp.diff(log_Z, beta, 2)),
        "gate_variance": Scalar((h, beta), sp.diff(log_Z, h, 2) / beta ** 2),
        "even": Scalar((h, beta), even),
        "even_d1": Scalar((h, beta), e1),
        "pair_even": Scalar((r, a, b, beta), pair(even)),
        "pair_even_d1": Scalar((r, a, b, beta), pair(e1)),
        "pair_even_d2": Scalar((r, a, b, beta), pair(e2)),
    }


_NB_NAMES = {"gate_nb": "gate", "esp_nb": "esp", "esp_derivative_nb": "esp_derivative",
             "log_partition_nb": "log_partition", "esp_dbeta_nb": "esp_dbeta",
             "esp_dhh_nb": "esp_dhh", "esp_dhbeta_nb": "esp_dhbeta",
             "esp_dbetabeta_nb": "esp_dbetabeta"}


def __getattr__(name):
    if name in _NB_NAMES:
        return getattr(_K, _NB_NAMES[name])
    raise AttributeError(f"module 'statmech.activations' has no attribute {name!r}")


# --------------------------------------------------------------------------- public scalars
def _args(h, beta):
    check_finite("h", h)
    b = check_range("beta", beta, 0.0, math.inf, allow_inf=True)
    return np.asarray(h, dtype=float), b


def _eval(name, h, beta, inf_value):
    h, b = _args(h, beta)
    if b.ndim == 0 and math.isfinite(float(b)):
        out = getattr(_K, name + "_v")(h, float(b))
        return out[()] if np.ndim(out) == 0 else out
    hb, bb = np.broadcast_arrays(h, b)
    fin = np.isfinite(bb)
    out = np.empty(hb.shape)
    if np.any(fin):
        out[fin] = getattr(_K, name + "_v")(hb[fin], bb[fin])
    if not np.all(fin):
        out[~fin] = inf_value(hb[~fin])
    return out[()] if out.ndim == 0 else out


def _heaviside(x):
    return np.where(x > 0, 1.0, np.where(x < 0, 0.0, 0.5))


def log_partition(h, beta):
    """log Z(h, beta) = log(1 + e^{beta h}) of the gate (Milletarí et al. 2019, Eqs. 2-3, one unit).

    Corrected: their Eq. 3 has a spurious ``m^{-1}``; per unit and example
    ``Z = 1 + exp(beta h)``.  ``beta = inf`` gives ``inf`` for h > 0, ``0`` for h < 0 and
    ``log 2`` at h = 0.  Vectorized; ``beta`` in [0, inf].
    """
    return _eval("log_partition", h, beta,
                 lambda x: np.where(x > 0, np.inf, np.where(x < 0, 0.0, math.log(2.0))))


def partition_function(h, beta):
    """Z(h, beta) = sum_{s=0,1} exp(beta s h) = 1 + e^{beta h} of one gate (Milletarí et al. 2019, Eq. 2).

    ``exp(log_partition)``; overflows to ``inf`` for beta h > 709.78 (use :func:`log_partition`).
    """
    with np.errstate(over="ignore"):
        return np.exp(log_partition(h, beta))


def gate_expectation(h, beta):
    """Expected gate state <s> = beta^{-1} d log Z/dh = sigma(beta h) (Milletarí et al. 2019, Eq. 4).

    ``beta = inf``: Heaviside step (1/2 at h = 0).  Vectorized; ``beta`` in [0, inf].
    """
    return _eval("gate", h, beta, _heaviside)


def esp(h, beta):
    """Expected transmitted signal <j> = d log Z / d beta = h sigma(beta h) (Swish / ESP).

    Milletarí et al. 2019, Eq. 5 (the first version, 2018, calls it "Expected Signal Propagation").  ``beta = inf``: ReLU
    max(h, 0) (Eq. 6); ``beta = 0``: h/2.  Vectorized; ``beta`` in [0, inf].
    """
    return _eval("esp", h, beta, lambda x: np.maximum(x, 0.0))


def esp_derivative(h, beta):
    """Back-propagation factor g(h) = d<j>/dh = sigma(beta h)[1 + beta h sigma(-beta h)].

    Milletarí et al. 2019, Sec. 2.4 (Eq. 7 and text).  ``beta = inf``: Heaviside (1/2 at h = 0),
    ``beta = 0``: 1/2.  Vectorized; ``beta`` in [0, inf].
    """
    return _eval("esp_derivative", h, beta, _heaviside)


def esp_variance(h, beta):
    """Var(j) = d^2 log Z / d beta^2 = h^2 sigma(beta h) sigma(-beta h) (fluctuation of the signal)."""
    return _eval("esp_variance", h, beta, lambda x: np.zeros_like(x))


def gate_variance(h, beta):
    """Var(s) = beta^{-2} d^2 log Z / dh^2 = sigma(beta h) sigma(-beta h)."""
    return _eval("gate_variance", h, beta, lambda x: np.where(x == 0, 0.25, 0.0))


def gate_derivatives(h, beta):
    """The sigmoid gate sigma(beta h) and its first two h-derivatives, for exact Hessians.

    Returns a dict with ``f, f_h, f_hh`` from :func:`sympy.diff` of ``beta^{-1} d log Z/dh``.
    ``beta`` may be any finite real (the expressions are analytic in it).
    """
    check_finite("h", h)
    h = np.asarray(h, dtype=float)
    b = check_finite("beta", beta)
    hb, bb = np.broadcast_arrays(h, b)
    return {"f": _K.gate_v(hb, bb), "f_h": _K.gate_dh_v(hb, bb), "f_hh": _K.gate_dhh_v(hb, bb)}


def esp_parameter_derivatives(h, beta):
    """All first and second partial derivatives of ESP(h; beta) needed for exact Hessians.

    Returns a dict with ``f, f_h, f_b, f_hh, f_hb, f_bb`` (``b`` = beta), each from
    :func:`sympy.diff` of ``d log Z / d beta``.  ``beta`` may be any finite real (the
    trainable betas of a network may cross 0; the expressions are analytic in beta).
    """
    check_finite("h", h)
    h = np.asarray(h, dtype=float)
    b = check_finite("beta", beta)
    names = {"f": "esp", "f_h": "esp_derivative", "f_b": "esp_dbeta", "f_hh": "esp_dhh",
             "f_hb": "esp_dhbeta", "f_bb": "esp_dbetabeta"}
    return {k: getattr(_K, v + "_v")(*np.broadcast_arrays(h, b)) for k, v in names.items()}


# --------------------------------------------------------------------------- pair moments
def relu_pair_moment(rho, order=0):
    """d^n/drho^n of E[relu(u) relu(v)] for unit-variance u, v with correlation rho.

    order 0: rho/4 + (sqrt(1-rho^2) + rho arcsin rho)/(2 pi); order 1: 1/4 + arcsin(rho)/(2 pi);
    order 2: 1/(2 pi sqrt(1-rho^2)) (infinite at ``|rho| = 1``).  Closed forms (Cho & Saul 2009).
    """
    rho = check_range("rho", rho, -1.0, 1.0)
    order = check_int("order", order, 0)
    if order == 0:
        v = rho / 4 + (np.sqrt(1 - rho * rho) + rho * np.arcsin(rho)) / (2 * math.pi)
    elif order == 1:
        v = 0.25 + np.arcsin(rho) / (2 * math.pi)
    elif order == 2:
        with np.errstate(divide="ignore"):
            v = 1.0 / (2 * math.pi * np.sqrt(1 - rho * rho))
    else:
        raise ValueError(f"order must be 0, 1 or 2, got {order}")
    return v[()] if np.ndim(v) == 0 else v


@lru_cache(maxsize=8)
def _radial_rule(level):
    from .gaussian import tanh_sinh_rule
    x, xc, w = tanh_sinh_rule(level)
    # t = 1 - exp(-r^2/2) on (0, 1): r = sqrt(-2 log(1 - t)) computed without cancellation
    r = np.where(x < 0.5, np.sqrt(-2.0 * np.log1p(-np.minimum(x, 0.5))), np.sqrt(-2.0 * np.log(xc)))
    keep = w > 0
    return r[keep], w[keep]


def _polar_pair(kernel, beta, rho, level):
    """E[f(u) f(v)] for f even or odd (kernel(r, a, b, beta) = f(r a) f(r b)), polar coordinates."""
    from .gaussian import tanh_sinh_rule
    r, wr = _radial_rule(level)
    x, xc, w = tanh_sinh_rule(level)
    theta = math.acos(min(1.0, max(-1.0, rho)))
    # integrand is pi-periodic in phi; zero lines of u (phi = pi/2) and of v (phi = theta +- pi/2)
    pb = theta + math.pi / 2 if theta < math.pi / 2 else theta - math.pi / 2
    breaks = sorted({0.0, math.pi / 2, pb, math.pi})
    total = 0.0
    for lo, hi in zip(breaks[:-1], breaks[1:]):
        L = hi - lo
        if L <= 0.0:
            continue
        phi = np.where(x < 0.5, lo + L * x, hi - L * xc)
        a = np.cos(phi)
        b = np.cos(phi - theta)
        F = kernel(r[None, :], a[:, None], b[:, None], beta)
        total += L / math.pi * float(w @ (F @ wr))
    return total


@dataclass(frozen=True)
class ESP:
    """The ESP / Swish activation g(x) = x sigma(beta x) as an activation object.

    Accepted wherever :mod:`statmech.scm` accepts an activation: ``ESP(beta)(x)`` is
    vectorized; :meth:`pair_moment` gives E[g(u) g(v)] (unit-variance, correlation rho),
    :meth:`mean` gives E[g(z)].  ``beta`` in [0, inf]; ``beta = inf`` is ReLU exactly,
    ``beta = 0`` is the linear unit x/2.  ``level`` is the tanh--sinh level of the pair-moment
    quadrature (5: ~1e-16 absolute, see module docstring).
    """
    beta: float = 1.0
    level: int = 5

    def __post_init__(self):
        b = float(check_range("beta", self.beta, 0.0, math.inf, allow_inf=True))
        object.__setattr__(self, "beta", b)
        lv = check_int("level", self.level, 3)
        if lv > 10:
            raise ValueError(f"level must be an integer in [3, 10], got {self.level!r}")
        object.__setattr__(self, "level", lv)

    @property
    def name(self):
        return f"esp(beta={self.beta:g})"

    def __call__(self, x):
        return esp(x, self.beta)

    def derivative(self, x):
        """g'(x) = sigma(beta x)[1 + beta x sigma(-beta x)]."""
        return esp_derivative(x, self.beta)

    def mean(self):
        """E[g(z)], z ~ N(0, 1) (= E[(z/2) tanh(beta z/2)]; 1/sqrt(2 pi) for ReLU, 0 for beta = 0)."""
        return _esp_mean(self.beta, self.level)

    def pair_moment(self, rho, order=0):
        """E[g^(n)(u) g^(n)(v)] = d^n/drho^n E[g(u) g(v)] (Price), unit variances, correlation rho.

        Vectorized over ``rho`` in [-1, 1]; ``order`` in {0, 1, 2}.
        """
        rho_a = check_range("rho", rho, -1.0, 1.0)
        order = check_int("order", order, 0)
        if order > 2:
            raise ValueError(f"order must be 0, 1 or 2, got {order}")
        if math.isinf(self.beta):
            return relu_pair_moment(rho_a, order)
        out = np.array([_esp_pair(self.beta, float(p), order, self.level) for p in rho_a.ravel()])
        out = out.reshape(rho_a.shape)
        return out[()] if out.ndim == 0 else out


@lru_cache(maxsize=4096)
def _esp_pair(beta, rho, order, level):
    if beta == 0.0:
        return (rho / 4, 0.25, 0.0)[order]
    if order == 0:
        return rho / 4 + _polar_pair(_K.pair_even_v, beta, rho, level)
    if order == 1:
        return 0.25 + _polar_pair(_K.pair_even_d1_v, beta, rho, level)
    return _polar_pair(_K.pair_even_d2_v, beta, rho, level)


@lru_cache(maxsize=1024)
def _esp_mean(beta, level):
    if math.isinf(beta):
        return 1.0 / math.sqrt(2 * math.pi)
    if beta == 0.0:
        return 0.0
    from .gaussian import expect_piecewise
    return float(expect_piecewise(lambda z: _K.even_v(z, beta), [0.0], level=level + 1))


# --------------------------------------------------------------------------- SCM with ESP units
@dataclass(frozen=True, repr=False)
class ESPTransitions(Result):
    """Specialization transitions of the K-unit soft committee machine with ESP(beta) units.

    Arrays over ``beta`` (ascending): ``alpha_s`` (specialized state appears), ``alpha_c``
    (thermodynamic transition), ``alpha_d`` (unspecialized state unstable), ``order`` (1 or 2;
    0 where there is no transition).  ``inf`` marks "no transition at finite alpha" (the
    linear limit beta = 0: a linear student cannot specialize).  ``relu`` holds the
    ``beta = inf`` values (statmech.scm with the ReLU closed forms), ``details`` the
    :class:`statmech.scm.Transitions` objects.  ``interp_error``: the largest deviation of
    the derivative ``m'(rho)`` of statmech.scm's interpolant of the pair moment (central
    differences of :func:`statmech.scm.pair_moment`) from the exact ESP value
    (:meth:`ESP.pair_moment` with ``order=1``) on ``|rho| <= 0.95``, an a-posteriori
    accuracy indicator of the transition points.

    ``resolved`` is False where :func:`statmech.scm.transitions` could not resolve the transition
    (it raised :class:`~statmech.ConvergenceError`); there the arrays are masked (``numpy.ma``), their data are ``inf`` / order 0, and
    ``details`` holds the error message.  These are the only non-finite entries.
    """
    K: float
    beta: np.ndarray
    alpha_s: np.ndarray
    alpha_c: np.ndarray
    alpha_d: np.ndarray
    order: np.ndarray
    relu: object
    details: tuple
    interp_error: np.ndarray = None
    resolved: np.ndarray = None

    # the Result protocol (statmech.result): alpha_c the headline; converged where resolved; the
    # transitions are roots of the scm solvers (residual and iterations are theirs, in details);
    # RS theory, its stability against replica symmetry breaking not computed (rs_stable None);
    # error: interp_error times alpha_c, an indicator of the interpolant's effect (not a bound)
    headline = "alpha_c"
    residual = 0.0
    iterations = 0
    ansatz = "rs"
    rs_stable = None
    stability = None

    @property
    def converged(self):
        return np.ones(np.shape(self.beta), dtype=bool) if self.resolved is None else np.asarray(self.resolved)

    @property
    def error(self):
        if self.interp_error is None:
            return 0.0
        a = np.ma.filled(np.ma.masked_invalid(np.ma.asarray(self.alpha_c, dtype=float)), 0.0)
        return np.asarray(self.interp_error, dtype=float) * np.abs(a)


def scm_transitions(K, betas, progress=False):
    """Specialization transitions vs beta of the SCM with ESP units (student and teacher).

    Implements the outlook (Sec. IV) of Oostwal, Straat & Biehl, Physica A 564, 125517 (2021),
    arXiv:1910.07476: ``beta f = alpha K eps_g - s``
    with ``eps_g`` from the ESP pair moments (:meth:`ESP.pair_moment`) through the
    any-activation path of :func:`statmech.scm.transitions`.  ``beta = inf`` uses
    ``activation="relu"`` (closed forms; ReLU K=2 alpha_c = 6.0940738933...), ``beta = 0``
    is the linear unit x/2, for which no specialization occurs (all ``inf``).
    """
    from . import scm
    b = np.atleast_1d(check_range("betas", betas, 0.0, math.inf, allow_inf=True)).astype(float)
    b = np.sort(b)
    relu = scm.transitions(K, activation="relu")
    rows, det, ierr = [], [], []
    rho_test = np.linspace(-0.95, 0.95, 9)
    it = b
    if progress:
        from tqdm.auto import tqdm
        it = tqdm(b, desc=f"SCM K={K} ESP transitions")
    for beta in it:
        if beta == 0.0:
            rows.append((math.inf, math.inf, math.inf, 0))
            det.append(None)
            ierr.append(0.0)
            continue
        if math.isinf(beta):
            t = relu
            ierr.append(0.0)
        else:
            act = ESP(float(beta))
            try:
                t = scm.transitions(K, activation=act)
            except ConvergenceError as exc:
                rows.append((math.inf, math.inf, math.inf, 0))
                det.append(f"unresolved: {exc}")
                ierr.append(0.0)
                continue
            d = 1e-5   # m' of scm's interpolant by central differences (FD error ~1e-11)
            interp = (scm.pair_moment(rho_test + d, act) - scm.pair_moment(rho_test - d, act)) / (2 * d)
            ierr.append(float(np.max(np.abs(interp - act.pair_moment(rho_test, order=1)))))
        rows.append((float(t.alpha_s), float(t.alpha_c), float(t.alpha_d), int(t.order)))
        det.append(t)
    r = np.array(rows, dtype=float)
    ok = np.array([not isinstance(d, str) for d in det])
    m = lambda v: np.ma.masked_array(v, mask=~ok)  # noqa: E731
    return ESPTransitions(K, b, m(r[:, 0]), m(r[:, 1]), m(r[:, 2]), m(r[:, 3].astype(int)), relu, tuple(det),
                          np.array(ierr), ok)
