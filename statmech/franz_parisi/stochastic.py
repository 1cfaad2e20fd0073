r"""The stochastic perceptron at equilibrium (thesis Eqs. 2.49, 2.53, 2.54, corrected), RS.

Magnetizations ``m in [-1, 1]^N`` with ``|m|^2 = q_star N`` and Gibbs weight ``exp(beta L(m))``,
``L = sum_mu log H(-Delta_mu/sqrt(1 - q_star))``: the RS saddle point
(:func:`stochastic_reference`, continued in ``q_star`` from ``q_star = 0.3`` and cached) and the
training error of the binarized configuration ``sign(m)`` (:func:`stochastic_energy`).  It is
the reference measure of the FP entropy around ``sign(m)`` (:mod:`.stochastic_fp`).
Derivation, corrections to the thesis and values: ``docs/franz_parisi.md``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy import optimize

from ..errors import ConvergenceError, check_range
from ..result import check_ansatz, check_real
from ..gaussian import tanh_sinh_rule, log_H, piecewise_nodes
from ..saddle import SaddlePoint, jacobian_fd, newton, vectorize_over
from ._common import _follow, _secant
from ._equations import _STO
from ._quadrature import _LEVEL, _breaks, _inner_rule, _nodes

_Z_LEVEL = 5  # tanh-sinh level of the outer rules (the checks of docs/franz_parisi.md)


def _zrule(width, level=_Z_LEVEL):
    """Outer rule in the shared field z: piecewise tanh--sinh with breakpoints at the sharp layer
    around z = 0 (``0, +-width, +-3 width``) and at ``+-1.5, +-4`` (probability-scale tails).

    Both reference terms have a layer at z = 0 that narrows as q* grows: the site measure flips
    from m ~ -1 to m ~ +1 within ``~1/sqrt(q_hat)`` (0.055 at q* = 0.8) and the pattern weight
    ``H(u)^beta`` switches on within ``sqrt((1 - q*)/beta + q* - q_m)/sqrt(q_m)`` (0.07 at
    q* = 0.9).  A 64-node Gauss--Hermite rule (used before) does not resolve them: at
    q* = 0.7 the old solution violated ``E<m>^2 = q_m`` by 5.5e-3, at q* = 0.8 by 2.7e-2, and its
    free entropy was wrong accordingly (docs/franz_parisi.md)."""
    w = min(float(width), 0.5)
    br = sorted({0.0, w, -w, 3 * w, -3 * w, 1.5, -1.5, 4.0, -4.0})
    return piecewise_nodes(np.array(br), level)


@lru_cache(maxsize=4)
def _m_nodes(level=5):  # (tanh-sinh on each half: exact to rounding, as rsb.box_site)
    x, xc, w = tanh_sinh_rule(level)
    mn = -x
    mn.setflags(write=False)  # like x and w: one compiled signature of the site-measure kernel
    return np.ascontiguousarray(x), mn, np.ascontiguousarray(w)


def _site_zrule(qh, level=_Z_LEVEL):
    return _zrule(1.0 / math.sqrt(qh), level)


def _site_moments(A, qh, level=_Z_LEVEL, rule=None):
    """Nodes, weights and per node z: log zeta, <m>, <m^2>, <sign m>, <|m|> of
    exp(-A m^2/2 + sqrt(qh) z m) on [-1, 1] (outer rule :func:`_site_zrule`, or ``rule``)."""
    zs, ws = _site_zrule(qh, level) if rule is None else rule
    mp, mn, wm = _m_nodes()
    out = np.empty((zs.size, 5))
    _STO.sto_site_moments(zs, math.sqrt(qh), float(A), mp, mn, wm, out)
    return zs, ws, out


def _pattern_zrule(qm, qs, beta, level=_Z_LEVEL):
    return _zrule(math.sqrt((1 - qs) / beta + qs - qm) / math.sqrt(qm), level)


def _x_nodes(z, qm, qs, level=_LEVEL):
    s = math.sqrt(qs - qm)
    return _nodes(_breaks(-math.sqrt(qm) * z / s), level)


def _x_shift(xs, wx, z, qm, qs, beta):
    u = -(math.sqrt(qm) * z + math.sqrt(qs - qm) * xs) / math.sqrt(1 - qs)
    lw = beta * log_H(u)
    return float(np.max(lw[wx > 0]))


def _sto_pattern_term(qm, qs, beta, level=_Z_LEVEL, rule=None):
    """E_z log E_x H(u)^beta and its q_m derivative (outer rule :func:`_pattern_zrule`, or ``rule``)."""
    zs, ws = _pattern_zrule(qm, qs, beta, level) if rule is None else rule
    return _STO.sto_sum_x(zs, ws, qm, qs, beta, *_inner_rule(_LEVEL))


@dataclass(frozen=True)
class _StoRef:
    alpha: float
    q_star: float
    beta: float
    q_m: float
    q_hat: float
    A: float
    t_s: float
    M1: float
    free_entropy: float
    residual: float
    iterations: int

    def order_params(self):
        return {"q_m": self.q_m, "q_hat": self.q_hat, "A": self.A, "t_s": self.t_s, "M1": self.M1}


def _solve_A(qh, qs):
    """A such that E_z <m^2> = q_star (monotone decreasing in A)."""
    def f(A):
        _, ws, mom = _site_moments(A, qh)
        return float(ws @ mom[:, 2]) - qs
    lo, hi = -1.0, 1.0
    while f(lo) < 0:
        lo *= 2.0
        if lo < -1e6:
            raise ConvergenceError("stochastic reference: cannot reach q_star (A -> -inf)", diagnostics={"q_star": qs})
    while f(hi) > 0:
        hi *= 2.0
        if hi > 1e6:
            raise ConvergenceError("stochastic reference: cannot reach q_star (A -> +inf)", diagnostics={"q_star": qs})
    return optimize.brentq(f, lo, hi, xtol=1e-14, rtol=1e-14)


_STO_CACHE: dict = {}
_STO_START = 0.3  # q_star where the branch is started (unique solution there), then continued


def _sto_residual(x, qs, alpha, beta):
    qm, qh, A = x
    if not (0.0 < qm < qs and qh > 0.0):
        return np.full(3, 1e6)
    _, ws, mom = _site_moments(A, qh)
    _, dG = _sto_pattern_term(qm, qs, beta)
    return np.array([ws @ mom[:, 2] - qs, ws @ mom[:, 1] ** 2 - qm, qh + 2 * alpha * dG])


def _sto_start(alpha, qs, beta, rtol):
    """Damped iteration on (q_m, q_hat) with A solved exactly (robust start at small q_star),
    until a step changes them by less than ``rtol`` (relative)."""
    qm, qh = 0.8 * qs, 1.0
    A = _solve_A(qh, qs)
    for _ in range(300):
        _, ws, mom = _site_moments(A, qh)
        qm_new = min(float(ws @ mom[:, 1] ** 2), qs * (1 - 1e-9))
        _, dG = _sto_pattern_term(qm, qs, beta)
        qh_new = max(-2 * alpha * dG, 1e-12)
        if abs(qm_new - qm) < rtol * qs and abs(qh_new - qh) < rtol * (1 + qh):
            qm, qh = qm_new, qh_new
            break
        qm, qh = 0.5 * qm + 0.5 * qm_new, 0.5 * qh + 0.5 * qh_new
        A = _solve_A(qh, qs)
    return np.array([qm, qh, _solve_A(qh, qs)])


def _sto_jacobian(x, qs, alpha, beta):
    """Central-difference Jacobian of :func:`_sto_residual` (the steps of
    :func:`statmech.saddle.jacobian_fd`) one block at a time: rows 0, 1 depend on ``(q_hat, A)``
    only (site moments, cheap), row 2 on ``q_m`` through the pattern term and linearly on
    ``q_hat`` -- two pattern terms and four site moments instead of six full residuals."""
    qm, qh, A = map(float, x)
    hm, hq, hA = (1e-6 * max(1.0, abs(v)) for v in (qm, qh, A))
    if not (0.0 < qm - hm and qm + hm < qs and qh - hq > 0.0):
        return jacobian_fd(lambda v: _sto_residual(v, qs, alpha, beta), x)
    # (the outer rules of the point itself on both sides of every difference)
    rs, rp = _site_zrule(qh), _pattern_zrule(qm, qs, beta)
    ws = rs[1]
    J = np.zeros((3, 3))
    J[1, 0] = -1.0
    J[2, 0] = 2 * alpha * (_sto_pattern_term(qm + hm, qs, beta, rule=rp)[1]
                           - _sto_pattern_term(qm - hm, qs, beta, rule=rp)[1]) / (2 * hm)
    J[2, 1] = 1.0
    for j, (dq, dA) in ((1, (hq, 0.0)), (2, (0.0, hA))):
        mp, mm = _site_moments(A + dA, qh + dq, rule=rs)[2], _site_moments(A - dA, qh - dq, rule=rs)[2]
        J[0, j] = (ws @ mp[:, 2] - ws @ mm[:, 2]) / (2 * (dq + dA))
        J[1, j] = (ws @ mp[:, 1] ** 2 - ws @ mm[:, 1] ** 2) / (2 * (dq + dA))
    return J


def _sto_newton(x0, qs, alpha, beta):
    return newton(lambda v: _sto_residual(v, qs, alpha, beta), x0, lambda v: _sto_jacobian(v, qs, alpha, beta),
                  tol=1e-10, xtol=1e-9, maxiter=30, in_domain=lambda v: 0 < v[0] < qs and v[1] > 0)


def _sto_step(s, goal, hist):
    """Step rule of the continuation in q_star: at most 0.05, and small enough that log q_hat
    changes by about 0.15 at the slope of the last two solutions (q_hat grows steeply towards
    q_star ~ 0.8: fixed steps there land on other branches or fail, each failure costing a
    full Newton run)."""
    def slope(i):  # |d log q_hat / d q_star| between hist[i - 1] and hist[i]
        (sa, xa), (sb, xb) = hist[i - 1], hist[i]
        return abs(math.log(xb[1] / xa[1]) / (sb - sa))

    ds = 0.05
    if len(hist) >= 2:
        k = slope(-1)
        if len(hist) >= 3 and slope(-2) > 0.0:  # a growing slope keeps growing
            k *= min(max(k / slope(-2), 1.0), 4.0)
        if k > 0.0:
            ds = min(ds, 0.15 / k)
    return math.copysign(min(ds, abs(goal - s)), goal - s)


def _sto_solution(alpha, qs, beta):
    """Branch of the RS stochastic reference continued in q_star from _STO_START (secant
    predictor, Newton corrector, step halving); every solution is cached."""
    key = (alpha, beta)
    branch = _STO_CACHE.setdefault(key, {})
    if qs in branch:
        return branch[qs]
    if not branch:
        q0 = min(_STO_START, qs)
        try:  # Newton from a rough start (the damped iteration converges linearly) ...
            info = _sto_newton(_sto_start(alpha, q0, beta, 1e-2), q0, alpha, beta)
        except ConvergenceError:  # ... else from a close one
            info = _sto_newton(_sto_start(alpha, q0, beta, 1e-7), q0, alpha, beta)
        branch[q0] = info
        if q0 == qs:
            return info
    known = sorted(branch)
    # continue from the nearest known solution on the side of qs
    below = [k for k in known if k < qs]
    above = [k for k in known if k > qs]
    seq = below[-3:] if below else above[:3][::-1]
    hist = [(k, branch[k].x) for k in seq]

    def predict(hist, q_new):
        if len(hist) >= 2 and hist[-1][0] != hist[-2][0]:
            guess = _secant(hist, q_new)
        else:
            guess = hist[-1][1]
        if not (0 < guess[0] < q_new and guess[1] > 0):
            guess = hist[-1][1].copy()
            guess[0] = min(guess[0], 0.99 * q_new)
        return guess

    def solve(guess, q_new):
        info = _sto_newton(guess, q_new, alpha, beta)
        qh_prev = hist[-1][1][1]
        # branch guard: a jump of q_hat by more than 50% within one small step means
        # Newton landed on another branch (the continued branch folds)
        if abs(info.x[1] - qh_prev) > 0.5 * qh_prev:
            raise ConvergenceError("branch jump")
        branch[q_new] = info  # every accepted step is cached, also when a later one fails
        return info

    def fail(q, x):
        return ConvergenceError("stochastic reference: the RS branch continued from small q_star "
                                "could not be followed (fold or jump to another branch)",
                                x=x, diagnostics={"q_star": q, "alpha": alpha, "beta": beta})

    _follow(hist, qs, solve, predict, _sto_step, 12, fail)
    return branch[qs]


def _stochastic_reference(alpha, qs, beta):
    """The RS stochastic reference at ``q_star = qs`` with its free entropy and the overlaps
    ``t_s = E_z[<sign m><m>]``, ``M1 = E_z<|m|>`` (no physicality check: see _require_physical)."""
    try:
        info = _sto_solution(alpha, qs, beta)
    except ConvergenceError as e:
        msg = str(e).split(" (")[0]
        raise ConvergenceError(f"franz_parisi.stochastic_reference: {msg}", x=e.x, residual=e.residual,
                               iterations=e.iterations,
                               diagnostics={"alpha": alpha, "q_star": qs, "beta": beta}) from None
    qm, qh, A = map(float, info.x)
    _, ws, mom = _site_moments(A, qh)
    G, _ = _sto_pattern_term(qm, qs, beta)
    phi = (A - qh) * qs / 2 + qh * qm / 2 + float(ws @ mom[:, 0]) + alpha * G
    t_s = float(ws @ (mom[:, 3] * mom[:, 1]))
    M1 = float(ws @ mom[:, 4])
    return _StoRef(alpha, qs, beta, qm, qh, A, t_s, M1, phi, info.residual, info.iterations)


def _require_physical(r, who):
    """``r`` if its free entropy is at most log 2 (the log-volume of the box [-1, 1]), else
    ConvergenceError: beyond, the continued RS branch is unphysical and RS fails."""
    if r.free_entropy > math.log(2.0):
        raise ConvergenceError(f"{who}: the RS stochastic reference is unphysical at this q_star (free entropy "
                               "exceeds log 2, the log-volume of the box [-1, 1]); RS fails",
                               diagnostics={"q_star": r.q_star, "free_entropy": r.free_entropy})
    return r


def _sto_energy_value(r):
    zs, ws = _pattern_zrule(r.q_m, r.q_star, r.beta)
    E = 0.0
    for z, w in zip(zs, ws):
        xs, wx = _x_nodes(z, r.q_m, r.q_star)
        c = _x_shift(xs, wx, z, r.q_m, r.q_star, r.beta)
        S0, S1 = _STO.sto_err(xs, wx, z, r.q_m, r.q_star, r.beta, c, r.t_s, r.M1)
        E += w * S1 / S0
    return float(E)


def _check_sto(alpha, q_star, beta):
    for name, v in (("alpha", alpha), ("q_star", q_star), ("beta", beta)):
        check_real(name, v)
    alpha = float(check_range("alpha", alpha, 0.0, 5.0, lo_open=True))
    beta = float(check_range("beta", beta, 0.0, 1e3, lo_open=True))
    qs = check_range("q_star", q_star, 0.0, 1.0, lo_open=True, hi_open=True)
    return alpha, qs, beta


def _sto_replicon(r):
    """RS replicon (AT) eigenvalue ``1 - alpha E_z[Var(m)^2] E_z[(d^2 log Z_x/dD^2)^2]`` of the
    stochastic reference at its RS point ``r`` (``D = sqrt(q_m) z``; docs/franz_parisi.md)."""
    from .stochastic_1rsb import pattern_moments
    _, ws, mom = _site_moments(r.A, r.q_hat)
    g_s = float(ws @ (mom[:, 2] - mom[:, 1] ** 2) ** 2)
    zs, wz = _pattern_zrule(r.q_m, r.q_star, r.beta)
    f2 = pattern_moments(math.sqrt(r.q_m) * zs, r.q_star, r.q_m, r.beta, 4)[2]
    return 1.0 - r.alpha * g_s * float(wz @ f2 ** 2)


def stochastic_reference(alpha, q_star, beta=20.0, ansatz="rs"):
    r"""Equilibrium theory of the stochastic perceptron, thesis Eq. 2.53 (corrected): RS or 1RSB.

    Magnetizations ``m in [-1, 1]^N`` with ``sum m_i^2 = q_star N``, Gibbs weight
    ``exp(beta L(m))`` with the log-likelihood of thesis Eq. 2.49 *corrected*: the numerator is
    ``sigma sum_i m_i xi_i`` (the mean pre-activation, not ``w_i``), so
    ``L = sum_mu log H(-Delta_mu / sqrt(1 - q_star))``, ``Delta_mu = sigma_mu m.xi_mu/sqrt(N)``.

    ``ansatz="rs"``: order parameters ``q_m`` (overlap of two magnetization replicas), ``q_hat`` and
    ``A = lambda + q_hat`` (``lambda`` enforces the spherical constraint), solving
    ``E_z<m^2> = q_star``, ``E_z<m>^2 = q_m``, ``q_hat = -2 alpha d/dq_m E_z log E_x H(u)^beta``
    where ``<.>`` is the site measure ``exp(-A m^2/2 + sqrt(q_hat) z m)`` on [-1, 1].  ``thermo``
    holds the free entropy (per weight, Lebesgue measure on the box) and the auxiliary overlaps
    ``t_s = E_z[<sign m><m>]`` and ``M1 = E_z<|m|>`` used by :func:`stochastic_energy`;
    ``replicon`` is the AT eigenvalue ``1 - alpha E[Var(m)^2] E[(d^2 log Z_x)^2]`` and
    ``rs_stable`` its sign.

    ``ansatz="1rsb"``: the one-step description of the equilibrium measure
    (:mod:`statmech.franz_parisi.stochastic_1rsb`, on the RSB core): overlaps ``q0 < q1`` (different
    / same state), conjugates, ``A`` and the Parisi parameter ``mu``; ``thermo['complexity']`` is the
    complexity ``Sigma`` of the states and ``extra['phase']`` says which description holds:
    ``"rs"`` (no 1RSB solution: ``q1 = q0``), ``"dynamical"`` (``mu = 1``, ``Sigma > 0``: the free
    entropy is the RS one, the measure is split into states) or ``"static"`` (``Sigma(mu = 1) < 0``:
    condensation, ``mu < 1`` and a lower free entropy).  ``rs_stable`` is None (the stability of
    the 1RSB point itself is not computed).  A 1RSB solve takes about a minute.

    Domain: ``alpha`` in (0, 5], ``q_star`` in (0, 1), ``beta`` in (0, 1000]; ``q_star`` may be an
    array.  Raises ConvergenceError (naming alpha, q_star, beta) where the RS branch continued from
    ``q_star = 0.3`` cannot be followed, or is unphysical (free entropy above log 2).
    """
    alpha, qs, beta = _check_sto(alpha, q_star, beta)
    a, _ = check_ansatz(ansatz, ("rs", "1rsb"), function="stochastic_reference")
    params = lambda q: {"alpha": alpha, "q_star": float(q), "beta": beta}

    def one(q, guess=None):
        r = _require_physical(_stochastic_reference(alpha, float(q), beta), "stochastic_reference")
        if a == "rs":
            rep = _sto_replicon(r)
            return SaddlePoint("franz_parisi.stochastic_reference", params(q), r.order_params(),
                               {"free_entropy": r.free_entropy}, True, r.residual, r.iterations, None, rep,
                               bool(rep > 0), headline="free_entropy")
        from .stochastic_1rsb import _solve_ref1
        r1 = _solve_ref1(alpha, float(q), beta)
        return SaddlePoint("franz_parisi.stochastic_reference", params(q), r1.order_params(),
                           {"free_entropy": r1.free_entropy, "complexity": r1.complexity}, True, r1.residual,
                           r1.iterations, None, None, None, {"phase": r1.phase}, ansatz="1rsb",
                           headline="free_entropy")

    return vectorize_over(one, qs, model="franz_parisi.stochastic_reference")


def stochastic_energy(alpha, q_star, beta=20.0):
    r"""Average training error of the binarized configuration ``sign(m)`` at equilibrium,
    thesis Eq. 2.54 (the quantity of Figs. 2.6 and 2.9), as a function of ``q_star``.

    ``E = E_z [ E_x[H(u)^beta H(((t_s/sqrt(q_m)) z + rho_b x)/sigma_b)] / E_x[H(u)^beta] ]`` with
    ``u = -(sqrt(q_m) z + sqrt(q_star - q_m) x)/sqrt(1 - q_star)``, ``rho_b = (M1 - t_s)/(q_star - q_m)``,
    ``sigma_b^2 = 1 - t_s^2/q_m - rho_b^2 (q_star - q_m)``: the binarized field
    ``sign(m).xi/sqrt(N)`` of a replica is Gaussian, correlated with its own pattern field
    through ``M1 = <|m|>`` and with the other replicas' through ``t_s``; the error is the
    probability that it is negative (labels absorbed in the patterns).
    Returns a SaddlePoint with ``energy`` (fraction of misclassified training patterns).
    ``q_star`` may be an array (sorted values are fastest: the RS branch is continued in q_star).
    Raises ConvergenceError where the continued RS branch becomes unphysical (free entropy above
    log 2; at alpha = 0.55, beta = 20 this happens between q_star = 0.80 and 0.85).
    """
    alpha, qs, beta = _check_sto(alpha, q_star, beta)

    def one(q, guess=None):
        r = _stochastic_reference(alpha, float(q), beta)
        sig2 = 1 - r.t_s ** 2 / r.q_m - ((r.M1 - r.t_s) / (r.q_star - r.q_m)) ** 2 * (r.q_star - r.q_m)
        if not sig2 > 0:
            raise ConvergenceError("stochastic_energy: binarized-field variance not positive",
                                   diagnostics={"q_star": float(q), "sigma_b^2": sig2})
        _require_physical(r, "stochastic_energy")
        E = _sto_energy_value(r)
        return SaddlePoint("franz_parisi.stochastic_energy", {"alpha": alpha, "q_star": float(q), "beta": beta},
                           r.order_params(), {"energy": E, "free_entropy": r.free_entropy}, True, r.residual,
                           r.iterations, extra={"sigma_b^2": sig2}, headline="energy")

    return vectorize_over(one, qs, model="franz_parisi.stochastic_energy")
