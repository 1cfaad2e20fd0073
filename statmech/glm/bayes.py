r"""Bayes-optimal inference: the teacher's own prior and channel, on the Nishimori line.

The replica-symmetric free entropy ``f(q, qh) = psi_in(qh) + alpha Psi_out(q) - q qh/2``
(Barbier, Krzakala, Macris, Miolane, Zdeborová 2019, PNAS 116, 5451, Eq. 12; ``docs/glm.md``
Eqs. B1-B2) is stationary where ``q = q_in(qh)`` and ``qh = alpha g(q)``; so along the solution
branch ``alpha(qh) = qh/g(q_in(qh))`` is explicit (:mod:`statmech.glm._bayes_nb`).  The branch is
tabulated once per (prior, channel, parameters) on ``log qh`` in [-30, 30]; its monotone pieces
are the fixed points: increasing pieces are stable under state evolution (``d alpha/d qh > 0``
is ``slope < 1`` of the map ``q -> q_in(alpha g(q))``), decreasing ones unstable.  Each root is
polished by Newton's method in ``log qh`` inside its piece.  A prior made of point masses also
has the *perfect* state ``q = rho`` (``qh = inf``), with free entropy ``sum_k pi_k log pi_k +
alpha E log P(y | z)`` (0 + 0 for the Ising prior measured in the counting measure).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, ClassVar

import numpy as np
import sympy as sp

from ..errors import ConvergenceError, check_choice, check_range
from ..result import Result, check_real
from ._codegen import kernels_for
from ._rules import quadrature_rule
from .spec import Model, as_channel, as_prior, y as Y, z as Zs

__all__ = ["BayesResult", "BayesTransition", "bayes_optimal", "bayes_branches", "bayes_transition", "BRANCHES"]

BRANCHES = ("equilibrium", "poor", "good", "unstable", "perfect")
#: tanh-sinh level of the piecewise averages: level 5 left the unstable Ising fixed points near q = 1
#: (p = 0.1, alpha = 0.5 and 1: 1 - q ~ 1e-4, a channel layer of width ~0.01) with q_hat off by
#: 2.2e-10 and 2e-11 against 30-digit mpmath; level 6: 1.7e-13 (the table costs 1.6x)
_LEVEL = 6
_YGRID = np.linspace(-30.0, 30.0, 601)


@dataclass(frozen=True, repr=False)
class BayesResult(Result):
    """A fixed point of the Bayes-optimal state evolution (floats, or arrays over ``alpha``).

    Attributes
    ----------
    alpha, q, q_hat : the load, the overlap ``q = E<w>.w*/N`` (= ``||E w||^2/N``), its conjugate
    free_entropy : ``f`` of Eq. B1 (prior as a probability measure; add ``log 2`` for the Ising
        counting measure of Györgyi 1990)
    generalization_error : error of the Bayes-optimal classifier ``sign(<w>.x)`` against the
        noiseless label ``sign(z)``: ``arccos(sqrt(q/rho))/pi``; real labels: ``rho - q``, the
        mean-squared error of the posterior mean prediction of ``z``
    gibbs_error : error of a posterior sample (Gibbs learning), ``arccos(q/rho)/pi``
    mse : ``rho - q``, the weight-estimation error of the posterior mean per weight
    branch : ``"poor"``, ``"good"``, ``"unstable"``, ``"perfect"`` (or an array of them)
    se_slope : slope of the state-evolution map at the fixed point (< 1 stable)
    replicon : ``1 - alpha E_out[(d^2 log Z_out)^2] E_in[Var(w|B)^2]`` (> 0 on the Nishimori line)
    stability : ``[1 - se_slope, replicon]`` (positive = stable)
    """
    headline: ClassVar[str] = "generalization_error"
    alpha: Any
    q: Any
    q_hat: Any
    free_entropy: Any
    generalization_error: Any
    gibbs_error: Any
    mse: Any
    branch: Any
    se_slope: Any
    replicon: Any
    rs_stable: Any
    converged: Any = True
    residual: Any = 0.0
    iterations: Any = 0
    ansatz: str = "rs"
    error: Any = 0.0
    stability: Any = None
    model: str = ""


def _channel_entropy(channel):
    """``E_z sum_y P(y|z) log P(y|z)`` at ``z ~ N(0, rho)`` (the channel part of the perfect
    state's free entropy); exact for the built-in channels, mpmath quadrature otherwise."""
    if channel.labels == "real":
        return -math.inf
    if channel.name == "sign":
        p = float(channel.params["p"])
        return sum(x * math.log(x) for x in (p, 1 - p) if x > 0)
    if channel.labels == "random":
        return -math.log(2.0)
    import mpmath as mp
    f = sp.lambdify(Zs, channel.expr.subs(channel.values).subs(Y, 1), modules="mpmath")
    g = sp.lambdify(Zs, channel.expr.subs(channel.values).subs(Y, -1), modules="mpmath")

    def integrand(t):
        a, b = f(t), g(t)
        return (a * mp.log(a) if a > 0 else 0) + (b * mp.log(b) if b > 0 else 0)
    return float(mp.quad(lambda t: integrand(t) * mp.npdf(t), [-mp.inf, 0, mp.inf]))


class _Setup:
    def __init__(self, prior, channel):
        self.prior = as_prior(prior)
        self.channel = as_channel(channel)
        if self.channel.labels == "random":
            raise ValueError("bayes_optimal: random labels carry no information on the teacher (storage); "
                             "use glm.gibbs for the storage problem")
        self.model = Model(prior=self.prior, channel=self.channel, penalty="spherical")
        self.ks, self.lay = kernels_for(self.model, "bayes")
        self.par = self.lay.par()
        self.tmix = np.ascontiguousarray(self.prior.mixture, dtype=float)
        self.rho = float(self.prior.rho)
        self.real = self.channel.labels == "real"
        self.delta = float(self.channel.params["Delta"]) if self.real else 0.0
        self.chcode = int(self.lay.chcode)
        self.rule = quadrature_rule(_LEVEL)
        self.discrete = bool(np.all(self.tmix[:, 2] == 0.0))
        self.sym = bool(self.channel.symmetric)
        self.name = f"bayes({self.prior!r}, {self.channel!r})"

    def args(self):
        return (self.rho, self.tmix, self.chcode, self.real, self.delta, self.par, self.rule, self.sym)

    def branch(self, yv):
        out = np.empty(7)
        ok = self.ks.bo_branch(float(yv), *self.args(), out)
        return out if ok else None

    @property
    def table(self):
        t = getattr(self, "_table", None)
        if t is None:
            t = np.empty((_YGRID.size, 7))
            self.ks.bo_scan(_YGRID, *self.args(), t)
            # beyond the maximum of alpha(qh), where a branch falls to alpha < 1e-9 (q = rho to
            # rounding), the table is rounding noise: cut it there
            ok = np.isfinite(t[:, 0])
            if ok.any():
                imax = int(np.nanargmax(np.where(ok, t[:, 0], -np.inf)))
                low = np.nonzero(ok & (np.arange(t.shape[0]) > imax) & (t[:, 0] < 1e-9))[0]
                if low.size:
                    t[low[0]:] = np.nan
            self._table = t
        return t

    def pieces(self):
        """Monotone pieces of alpha(y) on the grid: list of (i0, i1, increasing) (cached)."""
        p = self.__dict__.get("_pieces")
        if p is None:
            p = self._pieces = self._make_pieces()
        return p

    def brackets(self):
        """Per piece: (i0, i1, increasing, y_lo, y_hi, alpha_min, alpha_max), the ends extended to
        the folds (cached)."""
        b = self.__dict__.get("_brackets")
        if b is None:
            t = self.table
            b = []
            for (i0, i1, inc) in self.pieces():
                a = t[i0:i1 + 1, 0]
                ylo, yhi = _YGRID[i0], _YGRID[i1]
                amin, amax = float(np.nanmin(a)), float(np.nanmax(a))
                if i1 + 1 < t.shape[0] and np.isfinite(t[i1 + 1, 0]):
                    yhi = self.fold_y(i0, i1)
                    of = self.branch(yhi)
                    amin, amax = min(amin, of[0]), max(amax, of[0])
                if i0 > 0 and np.isfinite(t[i0 - 1, 0]):
                    ylo = self.fold_y(i0 - 1, i0 - 1)
                    of = self.branch(ylo)
                    amin, amax = min(amin, of[0]), max(amax, of[0])
                b.append((i0, i1, inc, ylo, yhi, amin, amax))
            self._brackets = b
        return b

    def _make_pieces(self):
        t = self.table
        ok = np.isfinite(t[:, 0])
        sgn = np.sign(t[:, 1])
        out = []
        i = 0
        n = t.shape[0]
        while i < n:
            if not ok[i]:
                i += 1
                continue
            j = i
            while j + 1 < n and ok[j + 1] and sgn[j + 1] == sgn[i]:
                j += 1
            out.append((i, j, bool(sgn[i] > 0)))
            i = j + 1
        return out

    def fold_y(self, i0, i1):
        """y of the fold between grid points i1 and i1 + 1 (Brent on d log alpha/dy = 0; cached)."""
        from ..saddle import root_scalar
        cache = self.__dict__.setdefault("_folds", {})
        if i1 in cache:
            return cache[i1]
        cache[i1] = self._fold(i1, root_scalar)
        return cache[i1]

    def _fold(self, i1, root_scalar):
        a, b = _YGRID[i1], _YGRID[i1 + 1]

        def f(yv):
            o = self.branch(yv)
            return o[1] if o is not None else math.nan
        return float(root_scalar(f, (a, b)).x[0])

    def perfect_f(self, alpha):
        ent = float(np.sum(self.tmix[:, 0] * np.log(self.tmix[:, 0])))
        return ent + alpha * _channel_entropy(self.channel)


_SETUPS = {}


def _setup(prior, channel):
    """The setup (kernels, branch table) of a (prior, channel) pair, kept per expressions and
    parameter values (at most 64)."""
    p, c = as_prior(prior), as_channel(channel)
    key = (p.key(), c.key(), tuple(sorted(p.params.items())), tuple(sorted(c.params.items())))
    s = _SETUPS.get(key)
    if s is None:
        if len(_SETUPS) >= 64:
            _SETUPS.pop(next(iter(_SETUPS)))
        s = _SETUPS[key] = _Setup(p, c)
    return s


def _roots(s, alpha, which="all"):
    """The fixed points at alpha: list of dicts (piece increasing?, row of bo_branch).
    ``which``: "all", "first_stable" (only the stable piece of least q containing alpha) or
    "unstable" (only decreasing pieces)."""
    t = s.table
    res = []
    la = math.log(alpha) if alpha > 0 else -math.inf
    for (i0, i1, inc, ylo, yhi, amin, amax) in s.brackets():
        if not (amin <= alpha <= amax):
            continue
        if (which == "first_stable" and not inc) or (which == "unstable" and inc):
            continue
        # start: cubic Hermite interpolation of y(log alpha) on the table (slopes dy/dlog alpha = 1/dla)
        a = t[i0:i1 + 1, 0]
        key = np.log(a) if inc else -np.log(a)
        k = int(np.searchsorted(key, la if inc else -la))
        k = min(max(k, 1), a.size - 1)
        j0, j1 = i0 + k - 1, i0 + k
        x0, x1 = math.log(t[j0, 0]), math.log(t[j1, 0])
        y0 = _hermite(la, x0, x1, _YGRID[j0], _YGRID[j1], 1.0 / t[j0, 1], 1.0 / t[j1, 1])
        y0 = min(max(y0, ylo), yhi)
        out = np.empty(10)
        ok = s.ks.bo_solve(float(alpha), y0, ylo, yhi, bool(inc), *s.args(), out)
        if not ok or not out[7] <= 1e-11:
            raise ConvergenceError(f"glm.bayes_optimal: Newton on the branch failed at alpha = {alpha!r}",
                                   x=[out[9]], residual=float(out[7]), iterations=int(out[8]),
                                   diagnostics={"alpha": alpha, "piece": (float(ylo), float(yhi))})
        res.append({"increasing": inc, "row": out.copy()})
        if which == "first_stable":
            break
    return res


def _hermite(x, x0, x1, y0, y1, d0, d1):
    """Cubic Hermite interpolation of y(x) between (x0, y0, y'=d0) and (x1, y1, y'=d1)."""
    h = x1 - x0
    if not (h != 0 and math.isfinite(d0) and math.isfinite(d1)):
        return y0 + (y1 - y0) * ((x - x0) / h if h else 0.0)
    t = (x - x0) / h
    if not 0.0 <= t <= 1.0:
        return y0 + (y1 - y0) * t
    h00, h10, h01, h11 = 2 * t ** 3 - 3 * t ** 2 + 1, t ** 3 - 2 * t ** 2 + t, -2 * t ** 3 + 3 * t ** 2, t ** 3 - t ** 2
    return h00 * y0 + h10 * h * d0 + h01 * y1 + h11 * h * d1


def _result_from_row(s, alpha, row, branch):
    q, qh, f = float(row[2]), float(row[3]), float(row[4])
    rho = s.rho
    if s.real:
        eg = rho - q
        gib = 2 * (rho - q)
    else:
        eg = math.acos(min(1.0, math.sqrt(max(q, 0.0) / rho))) / math.pi
        gib = math.acos(min(1.0, q / rho)) / math.pi
    slope = float(row[5])
    rep = float(row[6])
    return dict(alpha=alpha, q=q, q_hat=qh, free_entropy=f, generalization_error=eg, gibbs_error=gib, mse=rho - q,
                branch=branch, se_slope=slope, replicon=rep, rs_stable=rep > 0,
                residual=float(row[7]), iterations=int(row[8]), stability=np.array([1.0 - slope, rep]))


def _perfect(s, alpha):
    eg = 0.0
    return dict(alpha=alpha, q=s.rho, q_hat=math.inf, free_entropy=s.perfect_f(alpha), generalization_error=eg,
                gibbs_error=0.0, mse=0.0, branch="perfect", se_slope=0.0, replicon=1.0, rs_stable=True,
                residual=0.0, iterations=0, stability=np.array([1.0, 1.0]))


def _one(s, alpha, branch):
    if alpha == 0.0 and branch in ("equilibrium", "poor"):
        # nothing learnt: q = qh = 0, f = psi_in(0) = 0
        return _result_from_row(s, 0.0, np.array([0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0]), "poor")
    roots = _roots(s, alpha, {"poor": "first_stable", "unstable": "unstable"}.get(branch, "all"))
    cands = []
    for r in roots:
        cands.append((r["increasing"], r["row"]))
    stable = [c for c in cands if c[0]]
    unstable = [c for c in cands if not c[0]]
    stable.sort(key=lambda c: c[1][2])
    out = None
    if branch == "perfect":
        if not s.discrete:
            raise ValueError("branch='perfect' exists only for a prior made of point masses")
        return _perfect(s, alpha)
    if branch == "unstable":
        if not unstable:
            raise ValueError(f"branch='unstable': no unstable fixed point at alpha = {alpha!r}")
        return _result_from_row(s, alpha, min(unstable, key=lambda c: c[1][2])[1], "unstable")
    if branch == "poor":
        if not stable:
            raise ValueError(f"branch='poor': no stable fixed point below the perfect state at alpha = {alpha!r}")
        return _result_from_row(s, alpha, stable[0][1], "poor")
    if branch == "good":
        if len(stable) >= 2 or (stable and not s.discrete):
            return _result_from_row(s, alpha, stable[-1][1], "good" if len(stable) >= 2 else "poor")
        if s.discrete:
            return _perfect(s, alpha)
        raise ValueError(f"branch='good': no fixed point at alpha = {alpha!r}")
    # equilibrium: the stable fixed point of largest free entropy
    opts = [_result_from_row(s, alpha, c[1], "poor" if i == 0 else "good") for i, c in enumerate(stable)]
    if s.discrete:
        opts.append(_perfect(s, alpha))
    if not opts:
        raise ConvergenceError(f"glm.bayes_optimal: no stable fixed point found at alpha = {alpha!r}")
    return max(opts, key=lambda d: d["free_entropy"])


def bayes_optimal(prior, channel, alpha, branch="equilibrium"):
    """Bayes-optimal inference of a GLM teacher (RS, Nishimori line).

    Parameters
    ----------
    prior : Prior or name (``"gaussian"``, ``"ising"``, ``"spherical"``, ``"gauss_bernoulli"``)
    channel : Channel or name (``"sign"``, ``"probit"``, ``"linear"``; not random labels)
    alpha : float or array, >= 0
    branch : ``"equilibrium"`` (default: the stable fixed point of largest free entropy),
        ``"poor"`` (the stable fixed point of smallest q), ``"good"`` (of largest q; the perfect
        state for a discrete prior when no other), ``"unstable"``, ``"perfect"`` (``q = rho``,
        priors made of point masses).

    Returns
    -------
    BayesResult (arrays over alpha for array input).  Ising prior and sign channel: the RS
    teacher--student of Györgyi 1990 (``statmech.perceptron.binary_teacher_student``, whose
    entropy is ``free_entropy + log 2``); Gaussian (or spherical) prior: Gibbs learning of the
    spherical perceptron (``perceptron.spherical_teacher_student``: ``R = q``,
    ``entropy = free_entropy``, its ``generalization_error`` is ``gibbs_error`` here).
    """
    check_choice("branch", branch, BRANCHES)
    if isinstance(alpha, (float, int, np.floating, np.integer)) and not isinstance(alpha, (bool, np.bool_)):
        x = float(alpha)
        if not 0.0 <= x < math.inf:
            check_range("alpha", x, 0.0)
        s = _setup(prior, channel)
        return BayesResult(**_one(s, x, branch), model=s.name)
    check_real("alpha", alpha, function="glm.bayes_optimal")
    a = check_range("alpha", alpha, 0.0)
    s = _setup(prior, channel)
    rows = [_one(s, float(x), branch) for x in np.atleast_1d(a).ravel()]
    if a.ndim == 0:
        return BayesResult(**rows[0], model=s.name)
    d = {}
    for k in rows[0]:
        vals = [r[k] for r in rows]
        d[k] = np.array(vals).reshape(a.shape + np.shape(vals[0]))
    return BayesResult(**d, model=s.name)


def bayes_branches(prior, channel):
    """The branch ``alpha(qh)`` on its grid: dict with arrays ``alpha``, ``q``, ``q_hat``,
    ``free_entropy``, ``stable`` (state evolution), for plots of all fixed points."""
    s = _setup(prior, channel)
    t = s.table
    ok = np.isfinite(t[:, 0])
    return {"alpha": t[ok, 0], "q": t[ok, 2], "q_hat": t[ok, 3], "free_entropy": t[ok, 4],
            "stable": t[ok, 1] > 0, "replicon": t[ok, 6]}


@dataclass(frozen=True, repr=False)
class BayesTransition(Result):
    """First-order (information-theoretic) and spinodal (algorithmic) thresholds of Bayes-optimal
    inference.

    Attributes
    ----------
    alpha_it : where the free entropy of the poor (smallest-q stable) fixed point equals that of
        the good one (the perfect state ``q = rho`` for a prior of point masses): above it the
        Bayes-optimal error jumps.  ``None`` when there is no first-order transition.
    alpha_alg : the spinodal, where the poor branch ends (fold of ``alpha(qh)``): approximate
        message passing started from an uninformative point reaches the good branch only above
        it.  ``None`` when the poor branch never ends.
    q_it_poor, q_it_good, q_alg : overlaps at those points (``None`` with them)
    free_entropy_it : the common free entropy at ``alpha_it``
    """
    headline: ClassVar[str] = "alpha_it"
    alpha_it: float | None
    alpha_alg: float | None
    q_it_poor: float | None
    q_it_good: float | None
    q_alg: float | None
    free_entropy_it: float | None
    converged: bool = True
    residual: float = 0.0
    iterations: int = 0
    ansatz: str = "rs"
    rs_stable: Any = True
    error: float = 0.0
    stability: Any = None
    model: str = ""


def bayes_transition(prior, channel):
    """``alpha_it`` and ``alpha_alg`` of Bayes-optimal inference (:class:`BayesTransition`).

    The spinodal is the first fold of the branch ``alpha(qh)`` (Brent on ``d log alpha/d log qh
    = 0`` between the table points that bracket it, to ~1e-15 in ``log qh``); ``alpha_it`` is the
    root, along the poor branch parametrized by ``log qh``, of ``f_poor - f_good`` (Brent; the good
    free entropy is explicit for the perfect state, else solved on the good branch at the same
    alpha).  Ising prior and sign channel: Györgyi 1990, ``statmech.perceptron.
    binary_teacher_student_transition`` (1.2446839898507, 1.4926318182304).
    """
    from ..saddle import root_scalar
    s = _setup(prior, channel)
    t = s.table
    pieces = s.pieces()
    if not pieces or not pieces[0][2]:
        raise ConvergenceError("glm.bayes_transition: the branch does not start with a stable piece")
    i0, i1, _ = pieces[0]
    nan = None      # a threshold that does not exist
    if i1 + 1 >= t.shape[0] or not np.isfinite(t[i1 + 1, 0]):
        return BayesTransition(nan, nan, nan, nan, nan, nan, model=f"bayes({s.prior!r}, {s.channel!r})")
    ysp = s.fold_y(i0, i1)
    osp = s.branch(ysp)
    a_sp, q_sp = float(osp[0]), float(osp[2])

    def good_f(alpha):
        if s.discrete:
            return s.perfect_f(alpha), s.rho
        r = _one(s, alpha, "good")
        return r["free_entropy"], r["q"]

    def diff(yv):
        o = s.branch(yv)
        return o[4] - good_f(o[0])[0]
    if not diff(ysp) > 0:
        # the poor branch is below the good one already at its end: the transition is on the poor
        # piece; otherwise (poor always above) there is no first-order transition before the spinodal
        lo = _YGRID[i0]
        if diff(lo) * diff(ysp) > 0:
            return BayesTransition(nan, a_sp, nan, nan, q_sp, nan, model=f"bayes({s.prior!r}, {s.channel!r})")
        sol = root_scalar(diff, (lo, ysp))
        yc = float(sol.x[0])
        o = s.branch(yc)
        fg, qg = good_f(o[0])
        return BayesTransition(float(o[0]), a_sp, float(o[2]), float(qg), q_sp, float(o[4]), True,
                               float(sol.residual), int(sol.iterations),
                               model=f"bayes({s.prior!r}, {s.channel!r})")
    return BayesTransition(nan, a_sp, nan, nan, q_sp, nan, model=f"bayes({s.prior!r}, {s.channel!r})")
