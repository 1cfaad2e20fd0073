r"""Sign tree committee machine, two-step RSB at capacity (q2 -> 1, Eq. 2RSB.1), K = 3.

With overlaps q0 < q1 < q2 and Parisi parameters m1 <= m2, let eps = 1 - q2 -> 0.  Every
level must scale (m_i = y_i eps; with m1 fixed the energetic 1/eps term vanishes and no
capacity exists, docs/committee.md), and the coefficient of 1/(2 eps) of the 2RSB free
entropy is F2 = S2 + alpha E2 with

    S2 = (1/y2) ln L2 + (1/y1) ln(L1/L2) + q0/L1,   L2 = 1 + y2 (1-q1),  L1 = L2 + y1 (q1-q0)
    E2 = (2/y1) E_{t0} ln E_{t1} Y2(h1)^{y1/y2},   h1 = sqrt(q0) t0 + sqrt(q1-q0) t1,        (2RSB.1)
    Y2(h) = E_{lambda ~ N(h, (1-q1) I)} exp(-y2 C(lambda)/2)

(Y2 is the 1RSB inner average of :mod:`.sign_1rsb` with v = 1 - q1, y = y2).  S2 is twice
the jammed k = 2 spherical entropic term of the RSB core (``statmech.rsb.spherical_entropic``
with ``jammed=True``).  alpha_c^2RSB = min over (q0, q1, y1 <= y2) of R = -S2/E2.  Limits:
q1 = q0 or y1 = y2 give the 1RSB function alpha(q0, y2) of Eq. 1RSB.1; q1 -> 1 gives
alpha(q0, y1).

The outer average uses the multisets of a Gauss--Hermite rule; the middle one (t1, not
permutation symmetric at fixed t0) a tensor Gauss--Hermite rule with the inner 1-d reduction of
Eq. 1RSB.1 tabulated per unit and middle node (``_energ_2rsb_tab``), or the order-statistics
middle average of :mod:`._rsb2_order`.
"""
from __future__ import annotations

import math
from functools import lru_cache

import numba
import numpy as np

from dataclasses import dataclass
from typing import ClassVar

from .. import gaussian as gs
from ..errors import ConvergenceError, check_choice, check_int
from ..result import Result, check_real
from ..rsb import spherical_entropic
from ._common import _bar
from ._kernels import _LOGFACT, _multiset_point, _multiset_start
from ..gaussian import G_nb, H_nb
from ._rsb2_order import _outer_2rsb, _pair_nodes2, log_g
from .sign_1rsb import _ival

__all__ = ["TCM2RSBResult", "tcm_2rsb_alpha", "entropic_2rsb", "tcm_2rsb_search"]


def entropic_2rsb(q0, q1, y1, y2):
    """S2 of Eq. 2RSB.1: twice the jammed k = 2 spherical entropic term of the RSB core."""
    return 2.0 * spherical_entropic([q0, q1, 1.0], [y1, y2], jammed=True)[0]


_S_SD = 14.0       # the s-grid of _energ_2rsb_tab ends 14 tilted sd beyond the largest tilted mean
_S_WIDTH = 1.0     # panel width in tilted sd (Gauss--Legendre order 8: width 0.5 changes R by < 1e-13)


@numba.njit(cache=True)
def _energ_2rsb_tab(z0, w0, zm, lwm, q0, q1, y1, y2, gx, gw, logfact):
    """E_{t0} ln E_{t1} Y2^{y1/y2} for K = 3 (Eq. 2RSB.1) with the inner average tabulated per unit.

    Y2(h) = P(n_+ >= 2) + sum_l int_0^inf ds f_l(s) e^{-y2 s^2/2} [c_j(s) b_k(s) + b_j(s) c_k(s)]
    (the 1-d reduction of Eq. 1RSB.1 at K = 3, variance v = 1 - q1; {j, k} the other two units):
    at one outer point every unit's middle field a_l + sqrt(q1 - q0) z_i takes n_middle values,
    so f, c, b are tabulated on a common s-grid per (unit, middle node) and every node of the
    n_middle^3 tensor rule costs three dot products over the s-grid.  Every term of the integrand is
    bounded by f_l(s) e^{-y2 s^2/2}, a Gaussian in s of mean -h_l/(1 + y2 v) and sd
    sig = sqrt(v/(1 + y2 v)): the s-grid has Gauss--Legendre panels (order len(gx)) of width ``_S_WIDTH``
    sig up to 14 sig beyond the largest of those means (e^-98 of each term's peak is neglected).
    The middle sum is a streaming log-sum-exp (a node whose Y2 underflows contributes nothing)."""
    K = 3
    v = 1.0 - q1
    sv = math.sqrt(v)
    sd = math.sqrt(q1 - q0)
    sq = math.sqrt(q0)
    r = y1 / y2
    a1 = 1.0 + y2 * v
    sig = math.sqrt(v / a1)
    nm = zm.shape[0]
    ng = gx.shape[0]
    idx = _multiset_start(K)
    a = np.empty(K)
    h = np.empty((K, nm))
    acc = 0.0
    while True:
        wt = _multiset_point(idx, z0, w0, sq, logfact, a)
        if wt == 0.0:
            return acc
        hmin = 0.0
        for l in range(K):
            for i in range(nm):
                h[l, i] = a[l] + sd * zm[i]
                if h[l, i] < hmin:
                    hmin = h[l, i]
        # every term f_l e^{-y2 s^2/2} (...) <= a Gaussian in s of mean -h_l/(1 + y2 v) and sd sig:
        # 14 sd beyond the largest mean it is below e^-98 of its peak
        smax = -hmin / a1 + _S_SD * sig
        width = _S_WIDTH * sig
        npan = int(math.ceil(smax / width))
        width = smax / npan
        S = npan * ng
        sn = np.empty(S)
        E = np.empty(S)
        for p in range(npan):
            for g in range(ng):
                x = (p + 0.5) * width + 0.5 * width * gx[g]
                sn[p * ng + g] = x
                E[p * ng + g] = 0.5 * width * gw[g] * math.exp(-0.5 * y2 * x * x)
        f = np.empty((K, nm, S))
        c = np.empty((K, nm, S))
        bb = np.empty((K, nm, S))
        pp = np.empty((K, nm))
        for l in range(K):
            for i in range(nm):
                hh = h[l, i]
                pl = H_nb(-hh / sv)
                pp[l, i] = pl
                pref = math.exp(-y2 * hh * hh / (2.0 * a1)) / math.sqrt(a1)
                mu = hh / a1
                for t in range(S):
                    x = sn[t]
                    f[l, i, t] = G_nb((x + hh) / sv) / sv
                    c[l, i, t] = pl + pref * _ival(-x, 0.0, mu, sig)
                    bb[l, i, t] = H_nb((x + hh) / sv)
        xb = np.empty(S)
        xc = np.empty(S)
        xf = np.empty(S)
        shift = -np.inf
        tot = 0.0
        for i1 in range(nm):
            for i2 in range(nm):
                for t in range(S):
                    et = E[t]
                    # f1 c2 b3 + f2 c1 b3 | f1 b2 c3 + f2 b1 c3 | c1 b2 f3 + b1 c2 f3
                    xb[t] = et * (f[0, i1, t] * c[1, i2, t] + c[0, i1, t] * f[1, i2, t])
                    xc[t] = et * (f[0, i1, t] * bb[1, i2, t] + bb[0, i1, t] * f[1, i2, t])
                    xf[t] = et * (c[0, i1, t] * bb[1, i2, t] + bb[0, i1, t] * c[1, i2, t])
                p1 = pp[0, i1]
                p2 = pp[1, i2]
                for i3 in range(nm):
                    p3 = pp[2, i3]
                    Y = p1 * p2 + p1 * p3 + p2 * p3 - 2.0 * p1 * p2 * p3
                    for t in range(S):
                        Y += xb[t] * bb[2, i3, t] + xc[t] * c[2, i3, t] + xf[t] * f[2, i3, t]
                    if Y <= 0.0:
                        continue
                    e = lwm[i1] + lwm[i2] + lwm[i3] + r * math.log(Y)
                    if e > shift:
                        tot = tot * math.exp(shift - e) + 1.0
                        shift = e
                    else:
                        tot += math.exp(e - shift)
        acc += wt * (shift + math.log(tot))


_MU_LEVEL = 3          # tanh-sinh level of the integrals I of mu(s, s') (level 4 changes R by < 1e-12)


@numba.njit(cache=True)
def _lg_nodes(s, v, y2, r):
    out = np.empty(s.shape[0])
    for t in range(s.shape[0]):
        out[t] = r * log_g(s[t], v, y2)
    return out


@lru_cache(maxsize=4)
def _order2_sets(log2_total, seed, npts):
    from scipy.stats import qmc
    U = qmc.Sobol(d=6, scramble=True, seed=seed).random_base2(min(log2_total, 14))
    shifts = np.random.default_rng([seed, 104729]).random((npts, 6))
    U.setflags(write=False)
    shifts.setflags(write=False)
    return np.ascontiguousarray(U), np.ascontiguousarray(shifts)


def _energ_2rsb_order(q0, q1, y1, y2, n_outer, log2_total=16, seed=0, mu_level=_MU_LEVEL):
    """(E_{t0} ln E_{t1} Y2^{y1/y2}, its RQMC standard error, the RQMC share) by the order-statistics
    middle average of :mod:`._rsb2_order` (Eqs. M.1-M.3)."""
    from ._rsb_order import _D_GL, _GW, _GX, _SINT, _grid_nodes, _pair_tables, _tables_lg, s_grid
    z0, w0 = gs.gauss_hermite(n_outer)
    z0 = np.ascontiguousarray(z0)
    w0 = np.ascontiguousarray(w0)
    sd = math.sqrt(q1 - q0)
    v = 1.0 - q1
    r = y1 / y2
    avals = np.ascontiguousarray(math.sqrt(q0) * z0)
    ye = r * y2 / (1.0 + y2 * v)
    edges = s_grid(avals, sd, math.sqrt(v), ye * v)
    s, w = _grid_nodes(edges, _GX, _GW)
    lg = _lg_nodes(s, v, y2, r)
    F, A, B = _tables_lg(avals, sd, s, lg, edges, _GW, _SINT)
    xs, xcs, tw = gs.tanh_sinh_rule(mu_level)
    dx, dw = np.polynomial.legendre.leggauss(_D_GL)
    pt, ps, pw = _pair_nodes2(s, w, lg, v, y2, r, np.ascontiguousarray(dx), np.ascontiguousarray(dw), xs, xcs, tw)
    PHI, BP = _pair_tables(avals, sd, ps)
    U, shifts = _order2_sets(log2_total, seed, math.comb(n_outer + 2, 3))
    gx8, gw8 = np.polynomial.legendre.leggauss(8)
    out = np.zeros(5)
    _outer_2rsb(z0, w0, q0, sd, v, y2, r, w, F, A, B, pt, pw, PHI, BP, U, shifts, float(2 ** log2_total), 16,
                np.ascontiguousarray(gx8), np.ascontiguousarray(gw8), xs, xcs, tw, _LOGFACT, out)
    return out[0], math.sqrt(out[1]), out[2]


def _check_point(q0, q1, y1, y2, function):
    for name, val in (("q0", q0), ("q1", q1), ("y1", y1), ("y2", y2)):
        check_real(name, val, function=function)
    q0, q1, y1, y2 = (float(v) for v in (q0, q1, y1, y2))
    if not (0.0 < q0 < q1 < 1.0):
        raise ValueError(f"{function}: q0, q1 must satisfy 0 < q0 < q1 < 1, got q0={q0!r}, q1={q1!r}")
    if not (0.0 < y1 <= y2 < math.inf):
        raise ValueError(f"{function}: y1, y2 must satisfy 0 < y1 <= y2 < inf, got y1={y1!r}, y2={y2!r}")
    return q0, q1, y1, y2


def _energ(q0, q1, y1, y2, n_outer, n_middle, method):
    if method == "order":
        return _energ_2rsb_order(q0, q1, y1, y2, n_outer)[0]
    z0, w0 = gs.gauss_hermite(n_outer)
    zm, wm = gs.gauss_hermite(n_middle)
    gx, gw = _GL8
    return _energ_2rsb_tab(np.ascontiguousarray(z0), np.ascontiguousarray(w0), np.ascontiguousarray(zm),
                           np.log(wm), q0, q1, y1, y2, gx, gw, _LOGFACT)


_GL8 = tuple(np.ascontiguousarray(a) for a in np.polynomial.legendre.leggauss(8))


def tcm_2rsb_alpha(q0, q1, y1, y2, *, K=3, n_outer=6, n_middle=48, method="gh"):
    """R = -S2/E2 of Eq. 2RSB.1 at (q0, q1, y1, y2) (the 2RSB capacity is its minimum).

    Domain: K = 3, 0 < q0 < q1 < 1, 0 < y1 <= y2 (ValueError otherwise, naming the argument).
    Outer: multisets of an ``n_outer``-point Gauss--Hermite rule.  Middle (``method``): "gh" a tensor
    ``n_middle``-point Gauss--Hermite rule, the inner 1-d reduction tabulated per unit and middle
    node (``_energ_2rsb_tab``); "order" the order-statistics middle average of :mod:`._rsb2_order`
    (Eqs. M.1-M.3; exact dominant and pair terms, RQMC for the triple term: it gets better as
    q1 -> 1, where the tensor rule fails, docs/committee.md).  Accuracy of "gh" in n_middle
    (docs/committee.md): at q1 = 0.89 the change 48 -> 64 is 3e-7, at q1 = 0.94 2e-6, at q1 = 0.976
    1.3e-5; an under-resolved middle rule errs low.  Cost: ~3 s (n_middle = 32) to ~25 s (64) per
    call on a loaded core.  Returns inf where E2 is not a finite negative number (not a candidate).
    """
    if K != 3:
        raise ValueError(f"tcm_2rsb_alpha: K must be 3 (validated case), got {K!r}")
    q0, q1, y1, y2 = _check_point(q0, q1, y1, y2, "tcm_2rsb_alpha")
    n_outer = check_int("n_outer", n_outer, 2)
    n_middle = check_int("n_middle", n_middle, 2)
    check_choice("method", method, ("gh", "order"))
    E = 2.0 / y1 * _energ(q0, q1, y1, y2, n_outer, n_middle, method)
    if not (math.isfinite(E) and E < 0.0):
        return math.inf
    return -entropic_2rsb(q0, q1, y1, y2) / E


# (q0, q1, y1, y2): the minimum of R on the (n_outer, n_middle) = (6, 48) rules, reached from point C
# of docs/committee.md, (0.587, 0.893, 19.45, 33.74), by the Newton search below; the default start
_2RSB_START = (0.621994178344118, 0.9769869443274468, 31.38260591527759, 81.85153547558743)


def _unmap(p):
    """(q0, q1, y1, y2) from p = (logit q0, logit((q1-q0)/(1-q0)), logit(y1/y2), log y2)."""
    s = lambda x: 1.0 / (1.0 + math.exp(-x))
    q0 = s(p[0])
    q1 = q0 + (1.0 - q0) * s(p[1])
    y2 = math.exp(p[3])
    return q0, q1, y2 * s(p[2]), y2


def _tomap(q0, q1, y1, y2):
    lg = lambda x: math.log(x / (1.0 - x))
    return np.array([lg(q0), lg((q1 - q0) / (1.0 - q0)), lg(y1 / y2), math.log(y2)])


@dataclass(frozen=True, repr=False)
class TCM2RSBResult(Result):
    """The minimum of R(q0, q1, y1, y2) of Eq. 2RSB.1 found by :func:`tcm_2rsb_search` (a Result).

    alpha (headline): R there, on the search rules; q0 < q1 < 1, y1 <= y2: the point;
    alpha_1rsb, q0_1rsb, y_1rsb: the frozen 1RSB saddle point on the same outer rule
    (shift = alpha - alpha_1rsb, the 2RSB shift on that rule); error: the largest change of R at the
    point under the finer check rules (``checks``: rule -> R); residual: max ``|grad R|`` in the mapped
    coordinates p = (logit q0, logit((q1-q0)/(1-q0)), logit(y1/y2), log y2); hessian: the Hessian of R
    in p (central second differences, symmetric by construction); stability: its eigenvalues
    (positive: a minimum); rs_stable: all positive (the 2RSB point is a stable minimum of its own
    functional); iterations: Newton iterations; evaluations: of R; rule: the search rules.
    """
    headline: ClassVar[str] = "alpha"
    alpha: float
    q0: float
    q1: float
    y1: float
    y2: float
    alpha_1rsb: float
    q0_1rsb: float
    y_1rsb: float
    shift: float
    error: float
    converged: bool
    residual: float
    iterations: int
    evaluations: int
    hessian: np.ndarray
    stability: np.ndarray
    rs_stable: bool
    checks: dict
    rule: str
    ansatz: str = "2rsb"


def _hessian_central(f, p, h):
    """Central second differences of f at p, one triangle computed and mirrored."""
    n = p.size
    Hm = np.empty((n, n))
    f0 = f(p)
    for i in range(n):
        ei = np.zeros(n)
        ei[i] = h
        Hm[i, i] = (f(p + ei) - 2.0 * f0 + f(p - ei)) / (h * h)
        for j in range(i + 1, n):
            ej = np.zeros(n)
            ej[j] = h
            Hm[i, j] = Hm[j, i] = (f(p + ei + ej) - f(p + ei - ej) - f(p - ei + ej) + f(p - ei - ej)) / (4.0 * h * h)
    return Hm


def tcm_2rsb_search(K=3, *, n_outer=8, n_middle=48, x0=None, tol=2e-6, h=1e-3, h_hessian=2e-2, checks=True,
                    progress=True):
    """Minimum of R(q0, q1, y1 <= y2) of Eq. 2RSB.1: the 2RSB capacity of the sign TCM at K = 3.

    As for Eq. 1RSB.1, whose capacity is the minimum of alpha(q0, y), alpha_c^2RSB is the minimum of R
    over the larger 2RSB family, so R_min <= alpha_1RSB on a common outer rule.  Newton
    (:func:`statmech.rsb.minimize`: Hessian by differences of the gradient, BFGS updates, Armijo
    backtracking) in the mapped coordinates p = (logit q0, logit((q1-q0)/(1-q0)), logit(y1/y2), log y2)
    on central-difference gradients of R (step ``h``), from ``x0`` = (q0, q1, y1, y2) (default: the
    minimum on the (6, 48) rules, which this search reaches from point C of docs/committee.md); then the
    Hessian of R by central second differences (step ``h_hessian``) and, with ``checks``, R at the
    point on finer rules (n_middle + 16, n_outer + 2) for the error.

    Domain: K = 3; the search rules n_outer >= 4, n_middle >= 24 (the middle rule must resolve the
    layers of width sqrt(1 - q1): an under-resolved rule errs low and drags the search towards
    q1 -> 1, docs/committee.md).  Cost: ~60-100 evaluations of R, ~10 s (rules (6, 48)) to ~30 s
    ((8, 48)) each on a loaded core; a progress bar counts them.  Returns a :class:`TCM2RSBResult`; raises
    ConvergenceError naming the point if the minimization does not converge.
    """
    from ..rsb import minimize

    from .sign_1rsb import _alpha_of, _capacity_1rsb_cached
    if K != 3:
        raise ValueError(f"tcm_2rsb_search: K must be 3, got {K!r}")
    n_outer = check_int("n_outer", n_outer, 4)
    n_middle = check_int("n_middle", n_middle, 24)
    x0 = _2RSB_START if x0 is None else x0
    check_real("x0", x0, function="tcm_2rsb_search")
    if len(x0) != 4:
        raise ValueError(f"tcm_2rsb_search: x0 must be (q0, q1, y1, y2), got {x0!r}")
    p0 = _tomap(*_check_point(*x0, "tcm_2rsb_search"))
    info1, _, _, _ = _capacity_1rsb_cached(3, n_outer, 5)
    q0s, ys = 1.0 / (1.0 + math.exp(-info1.x[0])), math.exp(info1.x[1])
    a1 = _alpha_of(3, q0s, ys, n_outer, 5)
    with _bar("TCM K=3 2RSB: evaluations of R", None, progress) as bar:
        def R(p, no=n_outer, nm=n_middle):
            bar.update(1)
            return tcm_2rsb_alpha(*_unmap(p), n_outer=no, n_middle=nm)

        def grad(p):
            g = np.empty(4)
            for i in range(4):
                e = np.zeros(4)
                e[i] = h
                g[i] = (R(p + e) - R(p - e)) / (2.0 * h)
            return g
        try:
            info = minimize(R, grad, p0, tol=tol, h=h_hessian, max_step=0.3, report_hessian=False,
                            what="tcm_2rsb_search")
        except ConvergenceError as exc:
            raise ConvergenceError(f"tcm_2rsb_search: the minimization of R did not converge from x0={tuple(x0)!r} "
                                   f"({exc})", x=exc.x, residual=exc.residual, iterations=exc.iterations) from None
        Hm = _hessian_central(R, info.x, h_hessian)
        chk = {}
        if checks:
            chk[f"n_outer={n_outer}, n_middle={n_middle + 16}"] = R(info.x, n_outer, n_middle + 16)
            chk[f"n_outer={n_outer + 2}, n_middle={n_middle}"] = R(info.x, n_outer + 2, n_middle)
        evals = bar.n
    ev = np.linalg.eigvalsh(Hm)
    q0, q1, y1, y2 = _unmap(info.x)
    err = max((abs(v - info.value) for v in chk.values()), default=0.0)
    return TCM2RSBResult(alpha=float(info.value), q0=q0, q1=q1, y1=y1, y2=y2, alpha_1rsb=float(a1), q0_1rsb=q0s,
                         y_1rsb=ys, shift=float(info.value - a1), error=float(err), converged=True,
                         residual=float(info.residual), iterations=int(info.iterations), evaluations=int(evals),
                         hessian=Hm, stability=ev, rs_stable=bool(np.all(ev > 0)), checks=chk,
                         rule=f"outer Gauss-Hermite multisets n={n_outer}, middle tensor Gauss-Hermite n={n_middle}")
