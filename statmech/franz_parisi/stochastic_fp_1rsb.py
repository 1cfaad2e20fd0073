r"""Franz--Parisi entropy of Ising solutions around ``sign(m)`` on a 1RSB stochastic reference.

The reference (:mod:`.stochastic_1rsb`) has states: two magnetization replicas overlap ``q1`` in
the same state, ``q0`` in different ones, and the Parisi parameter ``mu``.  A constrained Ising
replica ``W`` of reference ``a`` then has *four* overlaps with the reference system: ``R`` with
its own ``m^a``, ``t1`` with another replica of the same state, ``t0`` with one of another state,
and the fixed ``p = W.sign(m^a)/N``; ``Q`` with another constrained replica of the same
reference.  Nine order parameters ``x = (Q, t0, t1, R, Q_hat, t_hat0, t_hat1, R_hat, p_hat)``;
stationary point of (derived in docs/franz_parisi.md, "FP on a 1RSB reference")::

    S_FP = Q_hat (Q - 1)/2 - R_hat R + (1 - mu) t_hat1 t1 + mu t_hat0 t0 - p_hat p + G_S + alpha G_E
    G_S  = E_z0 << E_y log 2cosh(d0 z0 + d1 z1 + (R_hat - t_hat1) m + p_hat sign m + sigma y) >>
    G_E  = E_z0 << E_e log H(-(c0 z0 + c1 z1 + c2 x + s_v e)/sqrt(1 - Q)) >>

with ``d0 = t_hat0/sqrt(q_hat0)``, ``d1 = (t_hat1 - t_hat0)/sqrt(q_hat1 - q_hat0)``,
``sigma^2 = Q_hat - d0^2 - d1^2``, ``c0 = t0/sqrt(q0)``, ``c1 = (t1 - t0)/sqrt(q1 - q0)``,
``c2 = (R - t1)/sqrt(q* - q1)``, ``s_v^2 = Q - c0^2 - c1^2 - c2^2``, and ``<<.>>`` the reference's
tilted measures of ``(z1, m)`` and ``(z1, x)`` given ``z0`` (the tables of
:class:`.stochastic_1rsb._Tables`).  At ``mu = 1`` the ``z1`` integrals can be done exactly and
``S_FP`` becomes the RS functional of :mod:`.stochastic_fp` in ``(Q, t0, R, ...)`` with the RS
reference ``(q0, q_hat0, A - q_hat1 + q_hat0)``: ``t1, t_hat1`` drop out (tested).  So the 1RSB
reference changes the FP entropy only where it condenses (``mu < 1``).

Numerics: the reference nodes are fixed tables (weights of the tilted measures times the inner
rules of m or x); the innermost Gaussian ``y`` (``e``) enters only through ``D_k(u) = E F^(k)(u +
v y)``, tabulated once per evaluation (:mod:`._sums1`); value, gradient and Hessian follow from the
coefficient maps (sympy, ``_equations._STFP1``) by the chain rule.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import ConvergenceError
from ..gaussian import tanh_sinh_rule
from ..saddle import newton
from ._equations import _STFP1
from ._quadrature import _inner_rule
from .stochastic_1rsb import _Quad1, _Tables, x_rule

_W_DROP = 1e-19   # nodes of smaller total weight are dropped (the integrands are O(1e2) at most)
_DU = 0.02        # spacing of the D_k tables in u (quintic Hermite: error ~ _DU^6 |F^(6+k)| / 46080)
_INNER = 5        # tanh-sinh level of the inner (y, e) rules of the tables


def _sym(flat, n):
    M = np.empty((n, n))
    k = 0
    for i in range(n):
        for j in range(i, n):
            M[i, j] = M[j, i] = flat[k]
            k += 1
    return M


@dataclass(frozen=True)
class FP1Quad:
    """Rules of the FP tables: the reference's (z0, z1) levels and the inner m / x levels."""
    ref: _Quad1 = _Quad1(3, 3, 3)
    m: int = 4     # (level 3: errors 3e-9 in S_FP; level 4: 1e-10, against brute-force quadrature)
    x: int = 4


class _FP1Tables:
    """Flat node lists of the two FP terms: weights ``W`` and coordinates ``C`` ((z0, z1, m,
    sign m) entropic, (z0, z1, x) energetic).  ``rs``: the reference has no states (q1 = q0); the
    ``z1`` coordinate is then 0 and the RS coefficient maps are used."""

    def __init__(self, q_star, beta, q0, q1, qh0, qh1, A, mu, quad=FP1Quad()):
        self.q_star, self.beta, self.mu = q_star, beta, mu
        self.q0, self.q1, self.qh0, self.qh1, self.A = q0, q1, qh0, qh1, A
        self.rs = not (q1 > q0 and qh1 > qh0)
        if self.rs:
            # a one-node z1 rule: the tables of a reference without states
            T = _Tables.__new__(_Tables)
            from .stochastic_1rsb import _pieces
            from ..gaussian import piecewise_nodes
            from ..rsb import box_site
            T.zS0, T.wS0 = piecewise_nodes(_pieces(0.0, 1.0 / math.sqrt(qh0), 0.0), quad.ref.z0)
            T.zS1 = np.zeros((T.zS0.size, 1))
            T.PS1 = np.ones((T.zS0.size, 1))
            T.hS = math.sqrt(qh0) * T.zS0[:, None]
            T.logzeta = box_site(T.hS, A)[0]
            T.zE0, T.wE0 = piecewise_nodes(_pieces(0.0, math.sqrt((1 - q_star) / beta + q_star - q0)
                                                   / math.sqrt(q0), 0.0), quad.ref.z0)
            T.zE1 = np.zeros((T.zE0.size, 1))
            T.PE1 = np.ones((T.zE0.size, 1))
            T.DE = math.sqrt(q0) * T.zE0[:, None]
            self.ref_tables = T
        else:
            self.ref_tables = T = _Tables(q_star, beta, q0, q1, qh0, qh1, A, mu, quad.ref)
        # ---- entropic nodes: (z0, z1) rows times the site measure of m (tanh-sinh on each half)
        xm, _, wm = tanh_sinh_rule(quad.m)
        m = np.concatenate((-xm[::-1], xm))
        wmm = np.concatenate((wm[::-1], wm))
        W0 = T.wS0[:, None] * T.PS1
        rows = np.nonzero(W0.ravel() > _W_DROP)[0]
        h = T.hS.ravel()[rows]
        lw = -0.5 * A * m[None, :] ** 2 + h[:, None] * m[None, :]
        lw -= lw.max(axis=1, keepdims=True)
        P = wmm[None, :] * np.exp(lw)
        P /= P.sum(axis=1, keepdims=True)
        Wn = W0.ravel()[rows][:, None] * P
        keep = Wn > _W_DROP
        z0 = np.broadcast_to(T.zS0[:, None], T.PS1.shape).ravel()[rows]
        z1 = T.zS1.ravel()[rows]
        self.WS = np.ascontiguousarray(Wn[keep])
        self.CS = np.ascontiguousarray(np.stack([np.broadcast_to(z0[:, None], P.shape)[keep],
                                                 np.broadcast_to(z1[:, None], P.shape)[keep],
                                                 np.broadcast_to(m[None, :], P.shape)[keep],
                                                 np.sign(np.broadcast_to(m[None, :], P.shape)[keep])], axis=1))
        # ---- energetic nodes: (z0, z1) rows times the pattern measure of x (mode-centred rule)
        W0 = T.wE0[:, None] * T.PE1
        rows = np.nonzero(W0.ravel() > _W_DROP)[0]
        D = T.DE.ravel()[rows]
        xs, lw = x_rule(D, q_star, q1, beta, quad.x)
        lw = lw - lw.max(axis=1, keepdims=True)
        P = np.exp(lw)
        P /= P.sum(axis=1, keepdims=True)
        Wn = W0.ravel()[rows][:, None] * P
        keep = Wn > _W_DROP
        z0 = np.broadcast_to(T.zE0[:, None], T.PE1.shape).ravel()[rows]
        z1 = T.zE1.ravel()[rows]
        self.WE = np.ascontiguousarray(Wn[keep])
        self.CE = np.ascontiguousarray(np.stack([np.broadcast_to(z0[:, None], P.shape)[keep],
                                                 np.broadcast_to(z1[:, None], P.shape)[keep], xs[keep]], axis=1))
        self.inner = _inner_rule(_INNER)

    # ---- one term: value, gradient and Hessian in the coefficients, then in the order parameters
    def _term(self, W, C, coef, v, entropic):
        lo, hi = _STFP1.u_range(C, coef)
        u0 = lo - 2 * _DU
        n = int(math.ceil((hi - lo) / _DU)) + 5
        T = (_STFP1.dtable_S if entropic else _STFP1.dtable_E)(u0, _DU, n, v, *self.inner)
        S0, S1, S2, S22, S3, S4 = _STFP1.fp1_sums(W, C, coef, T, u0, _DU)
        d = C.shape[1]
        g = np.concatenate((S1, [v * S2]))
        H = np.empty((d + 1, d + 1))
        H[:d, :d] = S22
        H[:d, d] = H[d, :d] = v * S3
        H[d, d] = S2 + v * v * S4
        return S0, g, H

    def _chain(self, flat, ncoef, nth, val, g, H):
        """Value, gradient and Hessian in theta from those in the coefficients."""
        per = 1 + nth + nth * (nth + 1) // 2
        c = np.array([flat[k * per] for k in range(ncoef)])
        J = np.array([flat[k * per + 1:k * per + 1 + nth] for k in range(ncoef)])
        Hc = [_sym(flat[k * per + 1 + nth:(k + 1) * per], nth) for k in range(ncoef)]
        gt = J.T @ g
        Ht = J.T @ H @ J + sum(g[k] * Hc[k] for k in range(ncoef))
        return c, val, gt, Ht

    def coefficients_S(self, th):
        if self.rs:
            Qh, tt, Rh, ph = th
            return np.array(_STFP1.coefS0(self.qh0, Qh, tt, Rh, ph)), 4
        Qh, t0, t1, Rh, ph = th
        return np.array(_STFP1.coefS1(self.qh0, self.qh1 - self.qh0, Qh, t0, t1, Rh, ph)), 5

    def coefficients_E(self, th):
        if self.rs:
            Q, tt, R = th
            return np.array(_STFP1.coefE0(self.q0, self.q_star - self.q0, Q, tt, R)), 3
        Q, t0, t1, R = th
        return np.array(_STFP1.coefE1(self.q0, self.q1 - self.q0, self.q_star - self.q1, Q, t0, t1, R)), 4

    def G_S(self, th):
        flat, nth = self.coefficients_S(th)
        per = 1 + nth + nth * (nth + 1) // 2
        c = np.array([flat[k * per] for k in range(5)])
        if not c[4] > 0:
            raise ConvergenceError("FP on a 1RSB reference: sigma^2 <= 0", x=th)
        val, g, H = self._term(self.WS, self.CS, np.ascontiguousarray(c[:4]), c[4], True)
        return self._chain(flat, 5, nth, val, g, H)[1:]

    def G_E(self, th):
        flat, nth = self.coefficients_E(th)
        per = 1 + nth + nth * (nth + 1) // 2
        c = np.array([flat[k * per] for k in range(4)])
        if not c[3] < 0:
            raise ConvergenceError("FP on a 1RSB reference: s_v^2 <= 0", x=th)
        val, g, H = self._term(self.WE, self.CE, np.ascontiguousarray(c[:3]), c[3], False)
        return self._chain(flat, 4, nth, val, g, H)[1:]


def fp1_functional(x, p, tabs, alpha):
    """``(S_FP, gradient, Hessian)`` at ``x`` (9 order parameters; 7 = the RS ones when the
    reference has no states) and overlap ``p`` (see the module docstring)."""
    x = np.asarray(x, dtype=float)
    mu = tabs.mu
    if tabs.rs:
        Q, t, R, Qh, th, Rh, ph = x
        GS, gS, HS = tabs.G_S((Qh, th, Rh, ph))
        GE, gE, HE = tabs.G_E((Q, t, R))
        S = 0.5 * Qh * (Q - 1) - Rh * R + th * t - ph * p + GS + alpha * GE
        g = np.concatenate((alpha * gE + np.array([0.5 * Qh, th, -Rh]),
                            gS + np.array([0.5 * (Q - 1), t, -R, -p])))
        H = np.zeros((7, 7))
        H[:3, :3] = alpha * HE
        H[3:, 3:] = HS
        for i, v in ((0, 0.5), (1, 1.0), (2, -1.0)):
            H[i, 3 + i] = H[3 + i, i] = v
        return S, g, H
    Q, t0, t1, R, Qh, th0, th1, Rh, ph = x
    GS, gS, HS = tabs.G_S((Qh, th0, th1, Rh, ph))
    GE, gE, HE = tabs.G_E((Q, t0, t1, R))
    S = 0.5 * Qh * (Q - 1) - Rh * R + (1 - mu) * th1 * t1 + mu * th0 * t0 - ph * p + GS + alpha * GE
    g = np.concatenate((alpha * gE + np.array([0.5 * Qh, mu * th0, (1 - mu) * th1, -Rh]),
                        gS + np.array([0.5 * (Q - 1), mu * t0, (1 - mu) * t1, -R, -p])))
    H = np.zeros((9, 9))
    H[:4, :4] = alpha * HE
    H[4:, 4:] = HS
    for i, v in ((0, 0.5), (1, mu), (2, 1 - mu), (3, -1.0)):
        H[i, 4 + i] = H[4 + i, i] = v
    return S, g, H


# =============================================================================== solving
NAMES9 = ("Q", "t0", "t1", "R", "Q_hat", "t_hat0", "t_hat1", "R_hat", "p_hat")


def _in_domain(x, tabs):
    Q = x[0]
    if not 0.0 < Q < 1.0:
        return False
    try:
        if tabs.rs:
            fS, _ = tabs.coefficients_S(x[3:7])
            fE, _ = tabs.coefficients_E(x[0:3])
            return fS[4 * 15] > 0 and fE[3 * 10] < 0
        fS, _ = tabs.coefficients_S(x[4:9])
        fE, _ = tabs.coefficients_E(x[0:4])
        return fS[4 * 21] > 0 and fE[3 * 15] < 0
    except (ValueError, ZeroDivisionError):
        return False


def _newton(tabs, alpha, x0, p, free_p=False, tol=1e-9):
    """Newton on the gradient of S_FP (analytic Hessian); ``free_p``: the unconstrained point
    (the p_hat equation replaced by p_hat = 0)."""
    n = x0.size
    cache = {}

    def both(v):
        key = v.tobytes()
        if key not in cache:
            S, g, H = fp1_functional(v, p, tabs, alpha)
            if free_p:
                g = g.copy()
                H = H.copy()
                g[n - 1] = v[n - 1]
                H[n - 1, :] = 0.0
                H[n - 1, n - 1] = 1.0
            cache.clear()
            cache[key] = (S, g, H)
        return cache[key]

    return newton(lambda v: both(v)[1], x0, lambda v: both(v)[2], tol=tol, xtol=1e-10, maxiter=40,
                  in_domain=lambda v: _in_domain(v, tabs))


def fp1_unconstrained(tabs, alpha, q_ising, qh_ising, t_guess=None):
    """The unconstrained point (p_hat = 0): the constrained measure is the uniform measure on Ising
    solutions, so ``Q, Q_hat`` are the Gardner Ising ones and ``R = t1 = t0 = t``,
    ``R_hat = t_hat1 = t_hat0 = t_hat`` (exchangeable reference replicas); ``(t, t_hat)`` from the
    reduced two-equation Newton, then all equations polished.  Returns the SolveInfo; ``p`` there
    is ``d_typ``'s overlap, ``dS/dp_hat``."""
    n = 7 if tabs.rs else 9

    def full(v):
        t, th = v
        if tabs.rs:
            return np.array([q_ising, t, t, qh_ising, th, th, 0.0])
        return np.array([q_ising, t, t, t, qh_ising, th, th, th, 0.0])

    ti = [1, 2] if tabs.rs else [1, 2, 3]
    hi = [4, 5] if tabs.rs else [5, 6, 7]

    def F2(v):
        x = full(v)
        S, g, H = fp1_functional(x, 0.0, tabs, alpha)
        return np.array([g[ti].sum(), g[hi].sum()]), H

    def J2(v):
        H = F2(v)[1]
        return np.array([[H[np.ix_(ti, ti)].sum(), H[np.ix_(ti, hi)].sum()],
                         [H[np.ix_(hi, ti)].sum(), H[np.ix_(hi, hi)].sum()]])

    t0 = t_guess if t_guess is not None else (0.5 * math.sqrt(q_ising * tabs.q0), 0.3)
    x2 = newton(lambda v: F2(v)[0], t0, J2, tol=1e-10, xtol=1e-10, maxiter=60,
                in_domain=lambda v: _in_domain(full(v), tabs)).x
    info = _newton(tabs, alpha, full(x2), 0.0, free_p=True, tol=1e-10)
    S, g, H = fp1_functional(info.x, 0.0, tabs, alpha)
    return info, float(g[n - 1] + 0.0), float(S)   # g[p_hat] at p = 0 is dG_S/dp_hat = p_typ


def fp1_march(tabs, alpha, x_typ, p_typ, targets, max_step=0.2):
    """Continuation in ``p`` from the unconstrained point (tangent predictor ``dx/dp = H^{-1} e_p``,
    Newton corrector, step halving); returns ``{p: SolveInfo}``."""
    from ._common import _capped, _follow, _secant
    n = x_typ.size
    e_p = np.zeros(n)
    e_p[n - 1] = 1.0

    def predict(hist, p_new):
        pb, xb = hist[-1]
        H = fp1_functional(xb, pb, tabs, alpha)[2]
        tb = np.linalg.solve(H, e_p)
        guesses = []
        if len(hist) >= 2:
            pa, xa = hist[-2]
            c = (xa - xb - tb * (pa - pb)) / (pa - pb) ** 2
            guesses.append(xb + tb * (p_new - pb) + c * (p_new - pb) ** 2)
        guesses.append(xb + tb * (p_new - pb))
        if len(hist) >= 2:
            guesses.append(_secant(hist, p_new))
        for g in guesses:
            if np.all(np.isfinite(g)) and _in_domain(g, tabs):
                return g
        return xb

    def fail(p, x):
        return ConvergenceError("stochastic_perceptron(ansatz='1rsb'): the FP branch could not be continued",
                                x=x, diagnostics={"alpha": alpha, "q_star": tabs.q_star, "beta": tabs.beta,
                                                  "p": p, "d": (1 - p) / 2})

    sols = {}
    for side in (1.0, -1.0):
        tg = sorted([p for p in targets if (p - p_typ) * side > 0], key=lambda p: abs(p - p_typ))
        hist = [(p_typ, x_typ)]
        for p_goal in tg:
            steps = _follow(hist, p_goal, lambda x0, p: _newton(tabs, alpha, x0, p), predict, _capped(max_step), 10,
                            fail)
            if steps:
                sols[p_goal] = steps[-1][1]
    return sols


def static_fp(alpha, p_list, q_star, beta, ref1, quad=FP1Quad()):
    """The FP branch on a condensed (``mu < 1``) reference ``ref1``: the unconstrained point, then
    the continuation to every overlap in ``p_list``.  Returns ``(tabs, (x_typ, p_typ, S_typ),
    {p: SolveInfo})``."""
    from .reference import equilibrium_binary
    eq = equilibrium_binary(alpha)
    tabs = _FP1Tables(q_star, beta, ref1.q0, ref1.q1, ref1.q_hat0, ref1.q_hat1, ref1.A, ref1.mu, quad)
    info, p_typ, S_typ = fp1_unconstrained(tabs, alpha, eq.order_params["q"], eq.order_params["q_hat"])
    sols = fp1_march(tabs, alpha, info.x, p_typ, [p for p in p_list if p != p_typ])
    return tabs, (info.x, p_typ, S_typ), sols
