r"""Sign tree committee machine, one-step RSB at finite alpha (q1 < 1, m free; Eqs. F.1--F.6).

Free entropy per weight of the Gardner volume (K spherical branches of N/K weights,
branch-symmetric 1RSB ansatz (q0, q1, m); derivation in docs/committee.md, "Beyond one step"):

    s(q0, q1, m) = G_S + alpha G_E                                                   (F.1)
    G_S = 1/2 [ln(1-q1) + (1/m) ln(L0/L1) + q0/L0],  L1 = 1-q1, L0 = L1 + m (q1-q0)
    G_E = E_{t0} (1/m) ln E_{t1} Z(h)^m,  h = sqrt(q0) t0 + sqrt(q1-q0) t1        (F.2)

with Z the Poisson-binomial probability that the majority of the K units is correct when
unit l is + with probability H(-h_l/sqrt(1-q1)).  q0 = q1 is the RS functional (RS.1).
The saddle point solves grad s = 0 (Eqs. F.3, gradient F.4 in :mod:`._rsb_avg`).

* :func:`_functional` -- s and its gradient in (q0, q1, m) for a quadrature rule;
* :func:`solve` (Newton, central-difference or given Jacobian) and :func:`_solve_broyden`
  (Broyden updates) -- the saddle point with one of q1, alpha, q1 - q0 fixed;
* :func:`tcm_1rsb_point` (public) -- the point of the branch at fixed q1 (unknowns q0, m,
  alpha: along the branch q1 grows from the AT line to 1 at capacity), a :class:`TCMRSBPoint`;
* :func:`replicon_1rsb` -- the replicon of the lowest level (Eq. F.6; tensor rule, near the
  AT line only).

The entropic term is the k = 1 case of the spherical entropic term of the RSB core
(:func:`statmech.rsb.spherical_entropic`).  The K-dimensional nested average is not the
core's (its lattices are 1-d fields): the K = 3 inner average in sorted order is in
:mod:`._rsb_sorted`, the outer multiset average in :mod:`._rsb_avg`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import ClassVar

import numpy as np

from .. import gaussian as gs
from ..errors import ConvergenceError, check_int
from ..rsb import spherical_entropic
from ..result import Result, check_real
from ..saddle import newton
from ._common import _bar
from ._kernels import _LOGFACT
from ._rsb_avg import _outer_multiset, _outer_points

__all__ = ["Rule", "TCMRSBPoint", "solve", "tcm_1rsb_point", "default_rule"]

_EMPTY = np.empty(0)


# --------------------------------------------------------------------------- quadrature rules
@dataclass(frozen=True)
class Rule:
    """Quadrature of G_E: inner per-unit rule and outer rule.

    inner: ("gh", n) tensor Gauss--Hermite (accurate for small q1 - q0, near the AT line);
    ("ts", level) tensor piecewise tanh--sinh with a break at each unit's zero crossing;
    ("sorted", n, n_rem, level) the sorted-order rule of :mod:`._rsb_sorted` (K = 3, any
    q1 < 1): Gauss--Legendre orders of the bulk and remainder pieces, tanh--sinh level of
    the Gaussian tails; ("order", log2_total, seed) the order-statistics rule of
    :mod:`._rsb_order` (any odd K, near capacity): the dominant term exactly, the remainder
    E[Z^m - D^m] by RQMC with 2^log2_total samples of the outer measure (scrambling ``seed``);
    its gradient is the central difference of the estimator at fixed point sets and grid;
    outer: ("gh", n) multisets of an n-point Gauss--Hermite rule, ("ts", level) multisets of
    the tanh--sinh rule of the RS averages (break at t = 0, :func:`.sign_rs._rs_nodes`), or
    ("rqmc", log2, seed) an antithetic scrambled Sobol set;
    ibp: dG/dq0 in the integration-by-parts form -(m/2) E|<grad ln Z>|^2 (RS is then an exact
    solution of the discretized equations for every m: used near the branch point) instead
    of the exact derivative of the outer discretization (used towards capacity, where it
    matches the frozen computation of :mod:`.sign_1rsb` on the same outer rule).
    """
    inner: tuple = ("sorted", 10, 6, 1)
    outer: tuple = ("gh", 16)
    ibp: bool = False

    def finer(self):
        """The check rule: inner level + 1 (tanh--sinh) or n + 4 (GH), outer n + 4 / next seed."""
        kind = self.inner[0]
        if kind == "order":
            return Rule(("order", self.inner[1] + 2, self.inner[2] + 1), self.outer, self.ibp)
        if kind == "sorted":
            i = ("sorted", self.inner[1] + 2, self.inner[2] + 2, self.inner[3])
        else:
            i = ("ts", self.inner[1] + 1) if kind == "ts" else ("gh", self.inner[1] + 4)
        if self.outer[0] == "rqmc":
            o = ("rqmc", self.outer[1], self.outer[2] + 1)
        else:
            o = (self.outer[0], self.outer[1] + (4 if self.outer[0] == "gh" else 1))
        return Rule(i, o, self.ibp)


def _gl(n):
    x, w = np.polynomial.legendre.leggauss(n)
    return np.ascontiguousarray(x), np.ascontiguousarray(w)


def _inner_arrays(inner, K):
    """The tuple of rule arrays of :func:`._rsb_avg._outer_point`."""
    kind = inner[0]
    if kind == "sorted":
        if K != 3:
            raise ValueError(f"the sorted inner rule is for K = 3 only, got K={K}")
        xs, xcs, tw = gs.tanh_sinh_rule(inner[3])
        return (True, _EMPTY, _EMPTY, xs, xcs, tw) + _gl(inner[1]) + _gl(inner[2])
    if kind == "ts":
        xs, xcs, tw = gs.tanh_sinh_rule(inner[1])
        return (False, _EMPTY, _EMPTY, xs, xcs, tw, _EMPTY, _EMPTY, _EMPTY, _EMPTY)
    z, w = gs.gauss_hermite(inner[1])
    return (False, np.ascontiguousarray(z), np.ascontiguousarray(w), _EMPTY, _EMPTY, _EMPTY,
            _EMPTY, _EMPTY, _EMPTY, _EMPTY)


# --------------------------------------------------------------------------- order-statistics rule (any K)
_ORDER_LOG2_MAX = 14      # at most 2^14 RQMC samples at one outer point
_ORDER_N_MIN = 16         # at least 16 at every outer point


@lru_cache(maxsize=8)
def _order_sets(K, log2_total, seed, npts):
    """The RQMC point set (2K-dim scrambled Sobol, 2^min(log2_total, 14) points) and the
    Cranley--Patterson shifts of the ``npts`` outer points, for the remainder of Eq. F.9."""
    from scipy.stats import qmc
    U = qmc.Sobol(d=2 * K, scramble=True, seed=seed).random_base2(min(log2_total, _ORDER_LOG2_MAX))
    shifts = np.random.default_rng([seed, 7919]).random((npts, 2 * K))
    U.setflags(write=False)
    shifts.setflags(write=False)
    return np.ascontiguousarray(U), np.ascontiguousarray(shifts)


def _order_eval(K, q0, q1, m, rule, edges):
    """[G_E, var, share, points, samples] of :func:`._rsb_order._outer_order` on the grid ``edges``."""
    from ._rsb_order import _D_GL, _GW, _GX, _SINT, _outer_order, _pair_nodes, _pair_tables, _tables
    from .sign_rs import _rs_nodes
    if rule.outer[0] != "gh":
        raise ValueError(f"the order-statistics inner rule needs a Gauss-Hermite multiset outer rule, got {rule.outer!r}")
    z0, w0 = _rs_nodes(rule.outer)
    npts = math.comb(z0.shape[0] + K - 1, K)
    U, shifts = _order_sets(K, rule.inner[1], rule.inner[2], npts)
    b = math.sqrt(q1 - q0)
    se = math.sqrt(1.0 - q1)
    avals = np.ascontiguousarray(math.sqrt(q0) * z0)
    s, w, F, A, B = _tables(avals, b, se, m, edges, _GX, _GW, _SINT)
    dx, dw = _gl(_D_GL)
    pt, ps, pw = _pair_nodes(s, w, se, m, dx, dw)
    PHI, BP = _pair_tables(avals, b, ps)
    out = np.zeros(5)
    _outer_order(z0, w0, K, q0, b, se, m, w, F, A, B, pt, pw, PHI, BP, U, shifts, float(2 ** rule.inner[1]),
                 _ORDER_N_MIN, _LOGFACT, out)
    return out


def _order_grid(K, q0, q1, m, rule):
    from ._rsb_order import s_grid
    from .sign_rs import _rs_nodes
    z0, _ = _rs_nodes(rule.outer)
    return s_grid(math.sqrt(q0) * z0, math.sqrt(q1 - q0), math.sqrt(1.0 - q1), m)


def _energetic_order(K, q0, q1, m, rule):
    """(G_E, dG/dq0, dG/dq1, dG/dm, standard error of G_E) with the order-statistics rule: central
    differences of the estimator at fixed point sets and fixed s-grid (that of the centre), so the
    differences are the derivatives of one smooth function (steps 1e-4 of q0, q1 - q0, 1 - q1 and m)."""
    edges = _order_grid(K, q0, q1, m, rule)
    c = _order_eval(K, q0, q1, m, rule, edges)
    h0 = 1e-4 * min(q0, q1 - q0)
    h1 = 1e-4 * min(1.0 - q1, q1 - q0)
    hm = 1e-4 * m
    g = np.empty(3)
    for i, (dq0, dq1, dm, h) in enumerate(((h0, 0.0, 0.0, h0), (0.0, h1, 0.0, h1), (0.0, 0.0, hm, hm))):
        fp = _order_eval(K, q0 + dq0, q1 + dq1, m + dm, rule, edges)[0]
        fm = _order_eval(K, q0 - dq0, q1 - dq1, m - dm, rule, edges)[0]
        g[i] = (fp - fm) / (2.0 * h)
    if not (np.all(np.isfinite(g)) and math.isfinite(c[0])):
        raise ConvergenceError(f"tcm_1rsb_point: the order-statistics inner average is not finite at "
                               f"(q0, q1, m) = ({q0:.6g}, {q1:.8g}, {m:.6g}), K={K}")
    return np.array([c[0], g[0], g[1], g[2], math.sqrt(c[1])])


def _energetic(K, q0, q1, m, rule, both=False):
    """(G_E, dG_E/dq0, dG_E/dq1, dG_E/dm) of Eq. F.2 (numba, :mod:`._rsb_avg`); dG_E/dq0 in the
    form selected by ``rule.ibp``; ``both``: also the other form (5th entry: IBP, the 2nd: chain).
    The order-statistics rule (any K): central differences of its estimator (the 5th entry is then
    the RQMC standard error of G_E)."""
    if rule.inner[0] == "order":
        out = _energetic_order(K, q0, q1, m, rule)
        return out if both else out[:4]
    arrs = _inner_arrays(rule.inner, K)
    if rule.outer[0] in ("gh", "ts"):
        from .sign_rs import _rs_nodes
        z0, w0 = _rs_nodes(rule.outer[1] if rule.outer[0] == "ts" else rule.outer)
        out = _outer_multiset(z0, w0, K, q0, q1, m, arrs, _LOGFACT)
    else:
        from .sign_rs import _sobol_normal
        T = _sobol_normal(K, rule.outer[1], rule.outer[2])
        out = _outer_points(T, q0, q1, m, arrs)
    if both:
        return out
    if rule.ibp:
        out = out.copy()
        out[1] = out[4]
    return out[:4]


def _entropic(q0, q1, m):
    """(G_S, dG_S/dq0, dG_S/dq1, dG_S/dm) of Eq. F.1: the k = 1 spherical entropic term of the RSB core."""
    S, dq, dm = spherical_entropic([q0, q1], [m])
    return np.array([S, dq[0], dq[1], dm[0]])


def _functional(K, alpha, q0, q1, m, rule):
    """s(q0, q1, m) of Eq. F.1 and its gradient: (s, ds/dq0, ds/dq1, ds/dm), plus G_S and G_E parts."""
    gs_ = _entropic(q0, q1, m)
    ge = np.asarray(_energetic(K, q0, q1, m, rule))
    return gs_ + alpha * ge, gs_, ge


def complexity(K, alpha, q0, q1, m, rule):
    """Sigma = -m^2 ds/dm at (q0, q1, m) (the complexity of the states selected by m; zero at the
    saddle point in m)."""
    return -m * m * _functional(K, alpha, q0, q1, m, rule)[0][3]


# --------------------------------------------------------------------------- saddle point
_PARAMS = ("q0", "q1", "m", "alpha")


def _unpack(fixed, value, u):
    """(q0, q1, m, alpha) from the three unknowns u and the fixed coordinate.

    fixed = "q1" (u = q0, m, alpha), "alpha" (u = q0, q1, m) or "delta" (q1 - q0 = value,
    u = q1, m, alpha; the parametrization near the branch point, where q0 -> q1)."""
    if fixed == "q1":
        return u[0], value, u[1], u[2]
    if fixed == "alpha":
        return u[0], u[1], u[2], value
    return u[0] - value, u[0], u[1], u[2]


def _residual(K, fixed, value, u, rule):
    """Eq. F.3 (grad s = 0), each component divided by the size of its entropic term."""
    q0, q1, m, alpha = _unpack(fixed, value, u)
    tot, gs_, _ = _functional(K, alpha, q0, q1, m, rule)
    return tot[1:] / np.maximum(np.abs(gs_[1:]), 1e-300)


def _in_domain(fixed, value, u):
    q0, q1, m, alpha = _unpack(fixed, value, u)
    return 0.0 < q0 < q1 < 1.0 and m > 0.0 and alpha > 0.0


def fd_jacobian(K, fixed, value, u, rule, *, h=1e-5, f0=None):
    """Forward-difference Jacobian of the scaled residual (step h, relative for m and alpha):
    3 evaluations of the functional (4 without f0), the chord matrix of :func:`solve`."""
    u = np.asarray(u, dtype=float)
    f0 = _residual(K, fixed, value, u, rule) if f0 is None else f0
    Jm = np.empty((3, 3))
    for c in range(3):
        e = np.zeros(3)
        e[c] = h * max(1.0, abs(u[c])) if c > 0 else h
        Jm[:, c] = (_residual(K, fixed, value, u + e, rule) - f0) / e[c]
    return Jm


def _solve_broyden(K, fixed, value, u0, rule, *, tol=1e-9, maxiter=25, bar=None):
    """Newton (:func:`statmech.saddle.newton`, backtracking) with a forward-difference Jacobian at
    u0 and Broyden rank-one updates after every accepted step (one evaluation per iteration).
    Returns (u, SolveInfo, the final Jacobian); raises ConvergenceError (from the core) if ``tol``
    is not reached.  ``bar``: a progress bar updated at every evaluation."""
    last = {}

    def F(u):
        if bar is not None:
            bar.update(1)
        f = _residual(K, fixed, value, u, rule)
        last["u"], last["f"] = np.array(u, dtype=float), f
        return f

    u0 = np.asarray(u0, dtype=float)
    f0 = F(u0)
    state = {"J": fd_jacobian(K, fixed, value, u0, rule, f0=f0), "u": u0, "f": f0}

    def jac(u):
        if not np.array_equal(u, state["u"]):
            f = last["f"] if np.array_equal(last["u"], u) else F(u)
            du = u - state["u"]
            state["J"] = state["J"] + np.outer(f - state["f"] - state["J"] @ du, du) / (du @ du)
            state["u"], state["f"] = np.array(u), f
        return state["J"]

    info = newton(F, u0, jac, tol=tol, xtol=1e-13, maxiter=maxiter,
                  in_domain=lambda u: _in_domain(fixed, value, u))
    return info.x, info, state["J"]


def solve(K, fixed, value, u0, rule, *, jac=None, tol=1e-10, maxiter=30, h=1e-6):
    """1RSB saddle point (Eq. F.3) with one coordinate fixed (see ``_unpack``), from u0.

    Newton on the three scaled stationarity equations, Jacobian by central differences of
    the analytic gradient (step h, relative for m and alpha) or the given ``jac`` (chord
    steps, e.g. a Jacobian from a coarser rule).  Returns (u, SolveInfo, J).
    """
    u0 = np.asarray(u0, dtype=float)
    F = lambda u: _residual(K, fixed, value, u, rule)

    def J(u):
        Jm = np.empty((3, 3))
        for c in range(3):
            e = np.zeros(3)
            e[c] = h * max(1.0, abs(u[c])) if c > 0 else h
            Jm[:, c] = (F(u + e) - F(u - e)) / (2 * e[c])
        return Jm

    Jfix = None if jac is None else np.asarray(jac, dtype=float)
    info = newton(F, u0, (lambda u: Jfix) if Jfix is not None else J, tol=tol, xtol=1e-13, maxiter=maxiter,
                  in_domain=lambda u: _in_domain(fixed, value, u))
    return info.x, info, (J(info.x) if Jfix is None else Jfix)


def replicon_1rsb(K, alpha, q0, q1, m, *, n_outer=("ts", 2), n_inner=10):
    """Replicon of the lowest (innermost) level of the 1RSB solution (Eq. F.6):

        lambda_I = 1 - alpha E_{t0} <||d^2 ln Z/du du||_F^2>,  u = h/sqrt(1-q1),

    the average over t1 tilted by Z^m/W.  q0 = q1 gives the RS replicon RS.3.  Tensor
    Gauss--Hermite inner rule (accurate for small q1 - q0 only, see Rule)."""
    from ._rsb_avg import _replicon_multiset
    from .sign_rs import _rs_nodes
    z0, w0 = _rs_nodes(n_outer[1] if n_outer[0] == "ts" else n_outer)
    gz, gw = gs.gauss_hermite(n_inner)
    f = _replicon_multiset(z0, w0, K, q0, q1, m, np.ascontiguousarray(gz), np.ascontiguousarray(gw), _LOGFACT)
    return 1.0 - alpha * f


# --------------------------------------------------------------------------- public: a point of the branch
@dataclass(frozen=True, repr=False)
class TCMRSBPoint(Result):
    """A finite-alpha 1RSB saddle point of the sign tree committee (Eq. F.3), a :class:`statmech.Result`.

    alpha (the headline), q0 < q1 < 1, m in (0, 1]: the solution; free_entropy: s of Eq. F.1 there;
    converged, residual (max of the scaled stationarity equations), iterations: of the quasi-Newton
    solve; error: the change of alpha under the finer inner rule of :meth:`Rule.finer` on the same
    outer rule (one Newton step of its equations from the solution, with the final Jacobian: the
    inner quadrature and RQMC error of alpha; the outer-rule error is common to the frozen
    computation on the same outer rule, docs/committee.md); ansatz: "1rsb"; rule: the quadrature (repr of :class:`Rule`); rs_stable and
    stability: None (the stability of the 1RSB point is not computed).
    """
    headline: ClassVar[str] = "alpha"
    K: int
    alpha: float
    q0: float
    q1: float
    m: float
    free_entropy: float
    converged: bool
    residual: float
    iterations: int
    ansatz: str
    rule: str
    error: float = 0.0
    rs_stable: bool | None = None
    stability: np.ndarray | None = None


#: largest K of the finite-alpha 1RSB point (validated: K = 3 against the exact sorted-order rule,
#: K = 5, 7 against the frozen capacity on the same outer rule)
K_MAX_FINITE_1RSB = 7
#: the order-statistics rule is built for the approach to capacity: 1 - q1 <= 0.05
EPS_MAX_ORDER = 0.05


def default_rule(K):
    """The default quadrature of :func:`tcm_1rsb_point`: K = 3 the exact sorted-order inner rule
    (6, 4, 1) with outer Gauss--Hermite n = 8; K = 5 the order-statistics rule with 2^17 RQMC
    samples and outer n = 8 (792 multisets); K = 7 the same with outer n = 7 (1716 multisets; the
    n = 6 rule has no stationary point of Eq. 1RSB.1 near the converged one, its alpha(q0, y) keeps
    falling towards larger q0 and y, while n = 7 and 8 have it at (0.62, 75) like the RQMC search)."""
    if K == 3:
        return Rule(inner=("sorted", 6, 4, 1), outer=("gh", 8))
    return Rule(inner=("order", 17, 0), outer=("gh", 8 if K == 5 else 7))


def _check_point_args(K, q1, rule, function):
    check_real("K", K, function=function)
    check_real("q1", q1, function=function)
    k = check_int("K", K, 3) if not (isinstance(K, float) and not math.isfinite(K)) else None
    if k is None or k % 2 == 0 or k > K_MAX_FINITE_1RSB:
        raise ValueError(f"{function}: K must be 3, 5 or 7 (odd K <= {K_MAX_FINITE_1RSB}, the validated finite-alpha "
                         f"1RSB), got {K!r}")
    q1 = float(q1)
    if not 0.0 < q1 < 1.0:
        raise ValueError(f"{function}: q1 must be in (0, 1), got {q1!r}")
    rule = default_rule(k) if rule is None else rule
    if not isinstance(rule, Rule):
        raise TypeError(f"{function}: rule must be a Rule, got {type(rule).__name__}")
    if rule.inner[0] == "sorted" and k != 3:
        raise ValueError(f"{function}: the sorted inner rule is for K = 3 only, got K={k}")
    if rule.inner[0] in ("gh", "ts") and k > 3:
        raise ValueError(f"{function}: the tensor inner rules cost n^K per outer point; use the order rule "
                         f"for K = {k}")
    if rule.inner[0] == "order" and 1.0 - q1 > EPS_MAX_ORDER:
        raise ValueError(f"{function}: 1 - q1 must be <= {EPS_MAX_ORDER} with the order-statistics rule (it is built "
                         f"for the approach to capacity), got q1={q1!r}")
    return k, q1, rule


def tcm_1rsb_point(K, q1, *, guess=None, rule=None, tol=1e-9, maxiter=25, progress=True, check=True):
    """1RSB saddle point of the sign TCM at finite alpha on the branch towards capacity, at fixed q1.

    Along the 1RSB branch q1 grows from the AT line to 1 at capacity, so q1 (not alpha) is
    the parameter: the unknowns are q0, m and alpha (Eq. F.3, grad s = 0).

    Domain: K = 3, 5, 7 (ValueError otherwise, naming K); 0 < q1 < 1, and 1 - q1 <= 0.05 with the
    order-statistics rule (the default for K = 5, 7).  Rules (:func:`default_rule`): K = 3 the
    exact sorted-order inner average of :mod:`._rsb_sorted`; K = 5, 7 the order-statistics average
    of :mod:`._rsb_order` (Eqs. F.9-F.11: dominant term and pair term exact, the remainder by RQMC
    with a pair control variate), checked at K = 3 against the sorted rule (alpha to 3e-6 at
    1 - q1 = 6.25e-4, 3e-5 at 2.5e-3).  The tensor rules of :mod:`._rsb_avg` do not resolve the
    layers of width sqrt(1 - q1) near capacity.

    Default guess: the frozen expansion of Eq. F.8 with the same outer rule, q0 = q0*, m = y* (1 - q1),
    alpha = alpha_c + slope (1 - q1), a poor start (alpha(eps) has large eps^{3/2} terms,
    docs/committee.md): pass a guess interpolated from neighbouring points (:func:`tcm_1rsb_branch`
    does).  Quasi-Newton (:func:`_solve_broyden`): about 4 + iterations evaluations of the gradient of
    Eq. F.1 (K = 3, sorted rule: ~10 s each; K = 5, 7 order rule: 7 evaluations of G_E of ~1-3 s each
    on a loaded core), with a progress bar (``progress=False`` hides it).  ``check``: compute the
    error of alpha with :meth:`Rule.finer` (one more gradient; ``error`` = 0 without it).

    Returns a :class:`TCMRSBPoint`.  Raises ValueError for arguments outside the domain,
    ConvergenceError naming K and q1 (with the last iterate) if the solve does not reach ``tol``.
    """
    k, q1, rule = _check_point_args(K, q1, rule, "tcm_1rsb_point")
    if guess is None:
        if rule.outer[0] != "gh":
            raise ValueError(f"tcm_1rsb_point: guess is required with a non Gauss-Hermite outer rule, got rule={rule!r}")
        from .sign_1rsb_branch import capacity_expansion
        ce = capacity_expansion(k, n_outer=rule.outer[1])
        eps = 1.0 - q1
        guess = (ce["q0"], ce["y"] * eps, ce["alpha_c"] + ce["slope"] * eps)
    check_real("guess", guess, function="tcm_1rsb_point")
    u0 = np.asarray(guess, dtype=float)
    if u0.shape != (3,) or not np.all(np.isfinite(u0)) or not _in_domain("q1", q1, u0):
        raise ValueError(f"tcm_1rsb_point: guess must be (q0, m, alpha) with 0 < q0 < q1, m > 0, alpha > 0, got {guess!r}")
    with _bar(f"TCM K={k} 1RSB at q1={q1:.6g}: gradient evaluations", None, progress) as bar:
        try:
            u, info, J = _solve_broyden(k, "q1", q1, u0, rule, tol=tol, maxiter=maxiter, bar=bar)
        except ConvergenceError as exc:
            raise ConvergenceError(f"tcm_1rsb_point: no 1RSB saddle point found at K={k}, q1={q1!r} ({exc})",
                                   x=exc.x, residual=exc.residual, iterations=exc.iterations,
                                   diagnostics={"K": k, "q1": q1}) from None
        err = 0.0
        if check:
            # one Newton step of the check rule's equations from the solution, with the final Jacobian
            fine = _residual(k, "q1", q1, u, Rule(rule.finer().inner, rule.outer, rule.ibp))
            bar.update(1)
            err = float(abs(np.linalg.solve(J, -fine)[2]))
    s = float(_functional(k, u[2], u[0], q1, u[1], rule)[0][0])
    return TCMRSBPoint(K=k, alpha=float(u[2]), q0=float(u[0]), q1=float(q1), m=float(u[1]), free_entropy=s,
                       converged=bool(info.converged), residual=float(info.residual),
                       iterations=int(info.iterations), ansatz="1rsb", rule=repr(rule), error=err)
