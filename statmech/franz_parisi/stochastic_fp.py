r"""Franz--Parisi entropy of Ising solutions around ``sign(m)`` of the stochastic perceptron, RS.

Thesis Eqs. 2.55--2.56 with the reference measure of Eq. 2.53 (:mod:`.stochastic`): the
stochastic curves of thesis Fig. 2.7.  Seven order parameters ``(q1, t, R, q1_hat, t_hat,
R_hat, p_hat)``; stationary point of

``S_FP = t_hat t - R_hat R - p_hat p + q1_hat (q1 - 1)/2 + G_S + alpha G_E``

whose integrands, gradients and Hessians are the sympy kernels ``_equations._STFP``, summed by
the numba loops of :mod:`._sums` over reference-side weights computed once per
``(alpha, q_star, beta)`` (:class:`_StfpRef`).  Newton with the analytic Hessian, continued in
``p = 1 - 2d`` from the unconstrained point, where ``S_FP`` equals the Gardner entropy of the
Ising perceptron (:func:`_stfp_setup`).  Derivation, numerics and values: ``docs/franz_parisi.md``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from ..errors import ConvergenceError, check_range
from ..result import check_ansatz, check_real
from ..gaussian import tanh_sinh_rule, gauss_hermite, log_H, piecewise_nodes
from ..saddle import SaddlePoint, newton, stack
from ._common import _capped, _follow, _require_interior, _secant
from ._equations import _STFP
from ._quadrature import _nodes1
from .reference import check_binary_alpha, equilibrium_binary
from .stochastic import _pattern_zrule, _require_physical, _stochastic_reference

_STFP_NZ = 40        # outer Gauss-Hermite order (reference's shared field z)
_STFP_LEVEL = 4      # tanh-sinh level of the reference-side rules (m on [-1,0],[0,1]; x piecewise)
_STFP_INNER = 4      # tanh-sinh level of the innermost piecewise rules (y, e) when a layer is sharp
_STFP_GH = 48        # Gauss-Hermite order of the innermost rules (y, e) when the integrand is smooth
_D_MIN = 0.005       # smallest distance of the documented domain (the continuation slows down below)


@dataclass(frozen=True)
class _StfpQuad:
    nz: int = _STFP_NZ
    level: int = _STFP_LEVEL
    inner: int = _STFP_INNER
    n_gh: int = _STFP_GH
    zlevel: int = 2

    def finer(self):
        return _StfpQuad(2 * self.nz, self.level + 1, self.inner + 1, 2 * self.n_gh, self.zlevel + 1)


class _StfpRef:
    """The stochastic-perceptron reference (Eq. 2.53, RS) as fixed quadrature weights:
    P_S[z, m] (site measure of the magnetization) and P_E[z, x] (pattern-field measure)."""

    def __init__(self, alpha, q_star, beta, quad=_StfpQuad()):
        r = _stochastic_reference(alpha, q_star, beta)
        self.r, self.quad = r, quad
        self.alpha, self.q_star, self.beta = alpha, q_star, beta
        zs, wz = _stfp_zrule(r.q_hat, quad)
        # entropic: m in [-1, 0) u (0, 1]
        x, xc, w = tanh_sinh_rule(quad.level)
        m = np.concatenate((-x[::-1], x))
        wm = np.concatenate((w[::-1], w))
        lw = -r.A * m[None, :] ** 2 / 2 + math.sqrt(r.q_hat) * zs[:, None] * m[None, :]
        lw = lw - lw.max(axis=1, keepdims=True)
        P = wm[None, :] * np.exp(lw)
        self.norm_m = P.sum(axis=1)
        PS = wz[:, None] * P / self.norm_m[:, None]
        mS = np.broadcast_to(m[None, :], P.shape)
        self.PS, self.mS = _compress(PS, mS)
        self.zS = np.broadcast_to(zs[:, None], self.PS.shape).copy()
        self.sS = np.sign(self.mS)
        # energetic: z piecewise around the layer of the pattern term at z = 0 (the reference's
        # own outer rule, stochastic._pattern_zrule), x piecewise around the layer of H(u)^beta
        zs, wz = _pattern_zrule(r.q_m, q_star, beta, quad.zlevel)
        s = math.sqrt(q_star - r.q_m)
        bx = -math.sqrt(r.q_m) * zs / s
        xs, wx = _nodes1(bx, quad.level)
        u = -(math.sqrt(r.q_m) * zs[:, None] + s * xs) / math.sqrt(1 - q_star)
        lw = beta * log_H(u)
        lw = lw - lw.max(axis=1, keepdims=True)
        P = wx * np.exp(lw)
        self.PE, self.xE = _compress(wz[:, None] * P / P.sum(axis=1, keepdims=True), xs)
        self.zE = np.broadcast_to(zs[:, None], self.xE.shape).copy()


def _stfp_zrule(q_hat, quad):
    """Outer rule of the entropic term.  The site measure switches from m ~ -1 to m ~ +1 around
    z = 0 within a width ~ 1/(2 sqrt(q_hat)) (0.07 at q_hat = 50): a sharp layer that
    Gauss-Hermite does not resolve (errors 1e-3 in the gradient with 40 nodes), so piecewise
    tanh-sinh (level 2: 264 nodes, S changes by < 1e-7 at level 4) with breakpoints at 0,
    +-2/sqrt(q_hat), +-1.5, +-4 is used."""
    w = 2.0 / math.sqrt(q_hat)
    br = np.unique(np.array([-4.0, -1.5, -w, 0.0, w, 1.5, 4.0]))
    return piecewise_nodes(br, quad.zlevel)


def _compress(P, X):
    """Drop the nodes whose weight is below 1e-18 of the row's largest (they change no digit of
    any integral here: the integrands are at most O(1e2)); rows are padded with zero weights."""
    keep = P > 1e-18 * P.max(axis=1, keepdims=True)
    k = int(keep.sum(axis=1).max())
    order = np.argsort(~keep, axis=1, kind="stable")[:, :k]
    P2 = np.take_along_axis(P, order, axis=1)
    X2 = np.take_along_axis(np.asarray(X), order, axis=1)
    P2 = np.where(np.take_along_axis(keep, order, axis=1), P2, 0.0)
    return np.ascontiguousarray(P2), np.ascontiguousarray(X2)


def _inner_nodes(b, smooth, qd, fairly_smooth=False):
    """Innermost rule: Gauss-Hermite (``n_gh`` nodes) when the integrand's layer (at ``b``) is
    wider than ~1 in units of the Gaussian variable, ``2 n_gh`` nodes when wider than ~0.6
    (measured errors <= 5e-9), else piecewise tanh-sinh with a breakpoint at ``b``."""
    if smooth:
        return gauss_hermite(qd.n_gh)
    if fairly_smooth:
        return gauss_hermite(2 * qd.n_gh)
    return _nodes1(b, qd.inner)


_STFP_NAMES = ("q1", "t", "R", "q1_hat", "t_hat", "R_hat", "p_hat")


def _stfp_terms(x, ref):
    """G_S and its (q1_hat, t_hat, R_hat, p_hat) gradient; G_E and its (q1, t, R) gradient."""
    q1, t, R, qh1, th, Rh, ph = map(float, x)
    r, qd = ref.r, ref.quad
    sig = math.sqrt(qh1 - th * th / r.q_hat)
    c = th / math.sqrt(r.q_hat) * ref.zS + (Rh - th) * ref.mS + ph * ref.sS
    ys, wy = _inner_nodes(-c / sig, sig <= 1.0, qd, sig <= 1.5)
    sh = ref.PS.shape + (ys.shape[-1],)
    GS = _STFP.stfp_sum_S(ref.PS, ref.zS, ref.mS, ref.sS, np.broadcast_to(ys, sh), np.broadcast_to(wy, sh),
                          r.q_hat, qh1, th, Rh, ph)
    qm, qs = r.q_m, ref.q_star
    sv = math.sqrt(q1 - t * t / qm - (R - t) ** 2 / (qs - qm))
    c = t / math.sqrt(qm) * ref.zE + (R - t) / math.sqrt(qs - qm) * ref.xE
    es, we = _inner_nodes(-c / sv, sv <= 1.5 * math.sqrt(1 - q1), qd, sv <= 3.0 * math.sqrt(1 - q1))
    sh = ref.PE.shape + (es.shape[-1],)
    GE = _STFP.stfp_sum_E(ref.PE, ref.zE, ref.xE, np.broadcast_to(es, sh), np.broadcast_to(we, sh),
                          qm, qs, q1, t, R)
    return GS, GE


def _stfp_grad(x, p, ref, free_p=False):
    """Gradient of S_FP = t_hat t - R_hat R - p_hat p + q1_hat (q1 - 1)/2 + G_S + alpha G_E
    in (q1, t, R, q1_hat, t_hat, R_hat, p_hat).  With ``free_p`` the p_hat component is
    replaced by p_hat itself (the unconstrained maximum, p_hat = 0)."""
    q1, t, R, qh1, th, Rh, ph = map(float, x)
    GS, GE = _stfp_terms(x, ref)
    a = ref.alpha
    g = np.array([qh1 / 2 + a * GE[1], th + a * GE[2], -Rh + a * GE[3],
                  (q1 - 1) / 2 + GS[1], t + GS[2], -R + GS[3], -p + GS[4]])
    if free_p:
        g[6] = ph
    S = th * t - Rh * R - ph * p + qh1 * (q1 - 1) / 2 + GS[0] + a * GE[0]
    return g, S, GS, GE


def _sym(flat, n):
    M = np.empty((n, n))
    k = 0
    for i in range(n):
        for j in range(i, n):
            M[i, j] = M[j, i] = flat[k]
            k += 1
    return M


def _stfp_hess(GS, GE, alpha, free_p=False):
    """Hessian of S_FP in (q1, t, R, q1_hat, t_hat, R_hat, p_hat) (sympy second derivatives)."""
    J = np.zeros((7, 7))
    J[:3, :3] = alpha * _sym(GE[4:10], 3)
    J[3:, 3:] = _sym(GS[5:15], 4)
    for i, v in ((0, 0.5), (1, 1.0), (2, -1.0)):
        J[i, 3 + i] = J[3 + i, i] = v
    if free_p:
        J[6, :] = 0.0
        J[6, 6] = 1.0
    return J


def _stfp_margins(x, ref):
    q1, t, R, qh1, th, Rh, ph = map(float, x)
    qm, qs = ref.r.q_m, ref.q_star
    return {"q1": q1, "1-q1": 1 - q1,
            "s_v^2/q1": (q1 - t * t / qm - (R - t) ** 2 / (qs - qm)) / q1,
            "sigma^2/q1_hat": (qh1 - th * th / ref.r.q_hat) / qh1 if qh1 > 0 else -1.0}


def _stfp_in_domain(x, ref):
    return all(v > 0 for v in _stfp_margins(x, ref).values())


def _stfp_newton(ref, x0, p, free_p=False, tol=1e-9, terms=None):
    """Newton with the analytic Hessian.  ``terms``, if a dict, receives the
    ``_stfp_grad(x, p, ref, free_p)`` of the solution under ``(p, x.tobytes())``."""
    cache = {}

    def F(v):
        if not _stfp_in_domain(v, ref):
            return np.full(7, 1e6)
        gr = _stfp_grad(v, p, ref, free_p)
        cache[v.tobytes()] = (gr, _stfp_hess(gr[2], gr[3], ref.alpha, free_p))
        return gr[0]

    def jac(v):
        key = v.tobytes()
        if key not in cache:
            F(v)
        return cache[key][1]
    info = newton(F, x0, jac, tol=tol, xtol=1e-10, maxiter=40, in_domain=lambda v: _stfp_in_domain(v, ref))
    if terms is not None and info.x.tobytes() in cache:
        terms[(p, info.x.tobytes())] = cache[info.x.tobytes()][0]
    return info


_STFP_CACHE: dict = {}


def _stfp_setup(alpha, q_star, beta, quad=_StfpQuad()):
    """Reference weights and the unconstrained FP solution (p_hat = 0): there the constrained
    measure is the uniform measure on Ising solutions, so q1 = q0, q1_hat = q_hat0 of the
    Gardner solution, R = t, R_hat = t_hat, and S_FP = S_eq(binary); (t, t_hat) solve
    t = E[<m> tanh h], t_hat = -alpha dG_E/dt, then all 7 equations are polished."""
    key = (alpha, q_star, beta, quad)
    if key in _STFP_CACHE:
        return _STFP_CACHE[key]
    ref = _StfpRef(alpha, q_star, beta, quad)
    _require_physical(ref.r, "stochastic_perceptron")
    eq = equilibrium_binary(alpha)
    q0, qh0 = eq.order_params["q"], eq.order_params["q_hat"]

    def full(v):
        return np.array([q0, v[0], v[0], qh0, v[1], v[1], 0.0])

    cache = {}

    def F2(v):
        xx = full(v)
        if not _stfp_in_domain(xx, ref):
            return np.full(2, 1e6)
        g, S, GS, GE = _stfp_grad(xx, 0.0, ref, True)
        J = _stfp_hess(GS, GE, ref.alpha, True)
        # chain rule through full(): d/dt = d/dt + d/dR, d/dt_hat = d/dt_hat + d/dR_hat
        cache[v.tobytes()] = np.array([[J[1, 1] + J[1, 2], J[1, 4] + J[1, 5]],
                                       [J[4, 1] + J[4, 2], J[4, 4] + J[4, 5]]])
        return np.array([g[1], g[4]])

    def J2(v):
        if v.tobytes() not in cache:
            F2(v)
        return cache[v.tobytes()]

    t0 = 0.5 * math.sqrt(q0 * ref.r.q_m)
    x2 = newton(F2, [t0, 0.3], J2, tol=1e-10, xtol=1e-10, maxiter=60,
                in_domain=lambda v: _stfp_in_domain(full(v), ref)).x
    info = _stfp_newton(ref, full(x2), 0.0, free_p=True, tol=1e-10)
    g, S, GS, GE = _stfp_grad(info.x, 0.0, ref, True)
    out = (ref, info.x.copy(), float(GS[4]), float(S), eq.thermo["entropy"])
    _STFP_CACHE[key] = out
    return out


def _stfp_march(ref, x_typ, p_typ, targets, max_step=0.2, terms=None):
    """Continuation in p from the unconstrained point (tangent predictor, Newton corrector,
    step halving); ``terms`` as in :func:`_stfp_newton`.  Steps of at most ``max_step`` in p
    (0.2: the targets change by < 3e-14 from 0.05, in 40% less time).

    The tangent ``dx/dp = J^{-1} e_p`` at a solution is exact and cheap: ``p`` enters the
    gradient only as ``-p`` in its ``p_hat`` component, and the Hessian ``J`` comes with the
    solution (``terms``).  The predictor is the quadratic through the last solution, its tangent
    and the solution before (the tangent line alone after the first step), else the secant."""
    terms = {} if terms is None else terms
    e_p = np.zeros(len(_STFP_NAMES))
    e_p[6] = 1.0
    tangents = {}

    def tangent(p, x):
        key = (p, x.tobytes())
        if key not in tangents:
            gr = terms.get(key) or _stfp_grad(x, p, ref)
            tangents[key] = np.linalg.solve(_stfp_hess(gr[2], gr[3], ref.alpha), e_p)
        return tangents[key]

    def predict(hist, p_new):
        pb, xb = hist[-1]
        tb = tangent(pb, xb)
        guesses = []
        if len(hist) >= 2:
            pa, xa = hist[-2]
            c = (xa - xb - tb * (pa - pb)) / (pa - pb) ** 2
            guesses.append(xb + tb * (p_new - pb) + c * (p_new - pb) ** 2)
        guesses.append(xb + tb * (p_new - pb))
        if len(hist) >= 2:
            guesses.append(_secant(hist, p_new))
        for g in guesses:
            if np.all(np.isfinite(g)) and _stfp_in_domain(g, ref):
                return g
        return xb

    def fail(p, x):
        return ConvergenceError("stochastic_perceptron: the FP branch could not be continued",
                                x=x, diagnostics={"p": p, "d": (1 - p) / 2})

    sols = {}
    for side in (1.0, -1.0):
        tg = sorted([p for p in targets if (p - p_typ) * side > 0], key=lambda p: abs(p - p_typ))
        hist = [(p_typ, x_typ)]
        for p_goal in tg:
            steps = _follow(hist, p_goal, lambda x0, p: _stfp_newton(ref, x0, p, terms=terms), predict, _capped(max_step), 10,
                            fail)
            if steps:  # (a repeated target needs none)
                sols[p_goal] = steps[-1][1]
    return sols


def stochastic_perceptron(alpha, d, q_star, beta=20.0, ansatz="rs"):
    r"""RS Franz--Parisi entropy of Ising solutions around ``sign(m)``, the binarized
    configuration of the stochastic perceptron at equilibrium (thesis Eqs. 2.55--2.56 with the
    reference measure of Eq. 2.53, corrected as in :func:`stochastic_reference`; the curves
    labelled "stochastic" in thesis Fig. 2.7).  Derived in docs/franz_parisi.md.

    ``S_FP(d) = lim (1/N) E_xi < log #{W in {-1,1}^N solving all patterns,
    W.sign(m) = N(1 - 2d)} >_m`` with ``m`` drawn from the Gibbs measure
    ``exp(beta L(m))`` on ``[-1,1]^N`` with ``|m|^2 = q_star N``.  RS, stationary in
    ``(q1, t, R, q1_hat, t_hat, R_hat, p_hat)`` (``q1``: overlap of two constrained replicas,
    ``R = W.m/N`` own reference, ``t = W.m'/N`` another reference replica):

    ``S_FP = t_hat t - R_hat R - p_hat p + q1_hat (q1 - 1)/2
    + E_z <E_y log 2cosh((t_hat/sqrt(q_hat)) z + (R_hat - t_hat) m + p_hat sign(m)
    + sqrt(q1_hat - t_hat^2/q_hat) y)>_{m|z}
    + alpha E_z <E_e log H(-(t z/sqrt(q_m) + (R - t) x/sqrt(q_star - q_m) + s_v e)/sqrt(1 - q1))>_{x|z}``

    with ``<.>_{m|z}`` the reference site measure ``exp(-A m^2/2 + sqrt(q_hat) z m)`` on
    [-1, 1], ``<.>_{x|z}`` the reference pattern measure ``H(u)^beta Dx``,
    ``s_v^2 = q1 - t^2/q_m - (R - t)^2/(q_star - q_m)``.

    ``ansatz="1rsb"`` draws the reference from the one-step description of the equilibrium measure
    (:func:`stochastic_reference` with ``ansatz="1rsb"``).  Where that measure is RS or in the
    dynamical phase (``mu = 1``) the FP functional on the 1RSB reference *is* the RS one above (the
    ``z1`` integrals can be done exactly and the overlaps with the own state drop out: derived in
    docs/franz_parisi.md, tested to 1e-11), so the numbers are those of ``ansatz="rs"`` and
    ``extra`` carries the reference's ``q1``, ``mu``, complexity and phase.  Where it condenses
    (``mu < 1``; at alpha = 0.55, beta = 20 for 0.870 < q_star < 0.898) the nine-parameter
    functional of :mod:`statmech.franz_parisi.stochastic_fp_1rsb` is solved (minutes per curve).

    Parameters
    ----------
    alpha : load in (0, alpha_KM) (0.8330786: the Ising constrained system must have solutions)
    d : float or array in [0.005, 0.5], Hamming distance from sign(m)
    q_star : in (0, 1); the reference must be physical (free entropy below log 2: true on the whole
        range at alpha = 0.55, beta = 20; ConvergenceError otherwise)
    beta : inverse temperature of the reference, in (0, 1000]
    ansatz : "rs" or "1rsb" (the reference's ansatz; the constrained system is RS)

    Returns
    -------
    SaddlePoint per d (stacked when d is an array): ``entropy`` (counts configurations, so the
    alpha = 0 curve is the binary entropy of d), ``entropy_equilibrium`` (the Ising Gardner
    entropy, which S_FP attains at ``d_typical``), ``d_typical``, ``dS_dd = 2 p_hat``; order
    parameters above and the reference's ``q_m, q_hat, A``; ``hessian_eigenvalues`` of the
    RS functional (its analytic sympy Hessian, :func:`_stfp_hess`), ``extra['margins']``.
    """
    for name, v in (("alpha", alpha), ("d", d), ("q_star", q_star), ("beta", beta)):
        check_real(name, v, function="stochastic_perceptron")
    alpha = float(check_range("alpha", alpha, 0.0, lo_open=True))
    beta = float(check_range("beta", beta, 0.0, 1e3, lo_open=True))
    q_star = float(check_range("q_star", q_star, 0.0, 1.0, lo_open=True, hi_open=True))
    check_range("d", d, _D_MIN, 0.5)
    a, _ = check_ansatz(ansatz, ("rs", "1rsb"), function="stochastic_perceptron")
    check_binary_alpha(alpha, 0.0, "stochastic_perceptron")
    if a == "1rsb":
        from .stochastic_1rsb import _solve_ref1
        r1 = _solve_ref1(alpha, q_star, beta)
        info1 = {"reference_phase": r1.phase, "reference_q1": r1.q1, "reference_mu": r1.mu,
                 "reference_complexity": r1.complexity}
        if r1.phase == "static":
            return _static_result(alpha, d, q_star, beta, r1, info1)
        res = stochastic_perceptron(alpha, d, q_star, beta)
        note = ("the 1RSB reference has no states (q1 = q0): RS" if r1.phase == "rs" else
                "dynamical 1RSB reference (mu = 1): the FP functional reduces exactly to the RS one")
        return replace(res, ansatz="1rsb", extra={**res.extra, **info1, "note": note})
    d_arr = np.asarray(d, dtype=float)
    flat = d_arr.ravel()
    ref, x_typ, p_typ, S_typ, S_eq = _stfp_setup(alpha, q_star, beta)
    d_typ = (1 - p_typ) / 2
    p_all = [float(1 - 2 * dd) for dd in flat]
    terms = {}
    sols = _stfp_march(ref, x_typ, p_typ, [p for p in p_all if p != p_typ], terms=terms)
    params_ref = {"q_m": ref.r.q_m, "q_hat": ref.r.q_hat, "A": ref.r.A}
    res = []
    for dd, pp in zip(flat, p_all):
        if pp == p_typ:
            x, resid, its = x_typ, 0.0, 0
        else:
            info = sols[pp]
            x, resid, its = info.x, info.residual, info.iterations
        margins = _stfp_margins(x, ref)
        _require_interior("franz_parisi.stochastic_perceptron", margins, x, float(dd))
        g, S, GS, GE = terms.get((pp, x.tobytes())) or _stfp_grad(x, pp, ref)
        if not np.isfinite(S):
            raise ConvergenceError("stochastic_perceptron: non-finite entropy", x=x, diagnostics={"d": float(dd)})
        eig = np.linalg.eigvalsh(_stfp_hess(GS, GE, alpha))
        order = dict(zip(_STFP_NAMES, map(float, x)))
        order.update(params_ref)
        res.append(SaddlePoint("franz_parisi.stochastic_perceptron",
                               {"alpha": alpha, "d": float(dd), "q_star": q_star, "beta": beta}, order,
                               {"entropy": float(S), "entropy_equilibrium": float(S_eq), "d_typical": float(d_typ),
                                "dS_dd": float(2 * x[6])},
                               True, float(max(resid, np.max(np.abs(g)))), int(its),
                               eig, None, None, {"margins": margins}, headline="entropy"))
    if d_arr.ndim == 0:
        return res[0]
    return stack(res, d_arr.shape, model="franz_parisi.stochastic_perceptron")


def _static_result(alpha, d, q_star, beta, r1, info1):
    """``stochastic_perceptron(ansatz="1rsb")`` on a condensed reference (mu < 1): the nine-parameter
    functional of :mod:`.stochastic_fp_1rsb`."""
    from .stochastic_fp_1rsb import NAMES9, fp1_functional, static_fp
    d_arr = np.asarray(d, dtype=float)
    flat = d_arr.ravel()
    p_all = [float(1 - 2 * dd) for dd in flat]
    tabs, (x_typ, p_typ, S_typ), sols = static_fp(alpha, p_all, q_star, beta, r1)
    S_eq = equilibrium_binary(alpha).thermo["entropy"]
    res = []
    for dd, pp in zip(flat, p_all):
        if pp == p_typ:
            x, resid, its = x_typ, 0.0, 0
        else:
            info = sols[pp]
            x, resid, its = info.x, info.residual, info.iterations
        S, g, H = fp1_functional(x, pp, tabs, alpha)
        order = dict(zip(NAMES9, map(float, x)))
        order.update(r1.order_params())
        res.append(SaddlePoint("franz_parisi.stochastic_perceptron",
                               {"alpha": alpha, "d": float(dd), "q_star": q_star, "beta": beta}, order,
                               {"entropy": float(S), "entropy_equilibrium": float(S_eq),
                                "d_typical": float((1 - p_typ) / 2), "dS_dd": float(2 * x[-1])},
                               True, float(max(resid, np.max(np.abs(g)))), int(its), np.linalg.eigvalsh(H), None,
                               None, {**info1, "note": "condensed 1RSB reference (mu < 1): nine-parameter FP"},
                               ansatz="1rsb", headline="entropy"))
    if d_arr.ndim == 0:
        return res[0]
    return stack(res, d_arr.shape, model="franz_parisi.stochastic_perceptron")
