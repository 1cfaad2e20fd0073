"""The FP reference systems: typical solutions of the Ising and spherical perceptron
(Gardner RS; Gardner 1988, Gardner & Derrida 1988), solved once per ``(alpha, kappa)`` and
cached.  Every FP solve around a typical reference (:mod:`.binary`, :mod:`.spherical`)
starts from these saddle points."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import ConvergenceError, check_range
from ..result import check_real
from ..gaussian import gauss_hermite, piecewise_nodes
from ..saddle import SaddlePoint, newton
from ._equations import _REF


def _ref_energy(q, kappa, level=6):
    """E_z[log H(u), d/dq, d2/dq2, (phi'')^2] with u = (kappa - sqrt(q) z)/sqrt(1-q)."""
    brk = kappa / math.sqrt(q) if q > 0 else kappa
    zs, ws = piecewise_nodes([brk], level)
    return np.array(_REF.ref_E(zs, ws, q, kappa))


def _ref_entropy_ising(qh, level=5):
    """E_z[log 2cosh(sqrt(qh) z), d/dqh, d2/dqh2, (1 - tanh^2)^2]: tanh--sinh on the two half-lines
    (tanh has poles at z = +-i pi/(2 sqrt(qh)), which slow Gauss--Hermite down: 96 nodes were
    off by 7e-9 in the derivative at qh = 2.58; this rule is exact to rounding there)."""
    zs, ws = piecewise_nodes([0.0], level)
    return np.array(_REF.ref_S(zs, ws, qh))


@dataclass(frozen=True)
class _Ref:
    kind: str
    alpha: float
    kappa: float
    q0: float
    qh0: float
    entropy: float
    replicon: float
    residual: float
    iterations: int
    hessian_eigenvalues: np.ndarray


_REF_CACHE: dict = {}


def _reference(kind, alpha, kappa):
    """The reference saddle point of ``kind`` ("binary" or "spherical"), cached."""
    key = (kind, float(alpha), float(kappa))
    if key in _REF_CACHE:
        return _REF_CACHE[key]
    try:
        if kind == "binary":
            r = _solve_ref_binary(alpha, kappa)
        else:
            r = _solve_ref_spherical(alpha, kappa)
    except ConvergenceError as e:
        raise ConvergenceError(f"franz_parisi.equilibrium_{kind}: the RS reference did not converge", x=e.x,
                               residual=e.residual, iterations=e.iterations,
                               diagnostics={"alpha": float(alpha), "kappa": float(kappa)}) from None
    if len(_REF_CACHE) > 256:
        _REF_CACHE.clear()
    _REF_CACHE[key] = r
    return r


def _solve_ref_binary(alpha, kappa):
    """Gardner RS for Ising weights: stationary point of
    Phi(q, q_hat) = -q_hat (1-q)/2 + E_z log 2cosh(sqrt(q_hat) z) + alpha E_z log H(u)."""
    def both(x):
        q, qh = x
        E = _ref_energy(q, kappa)
        S = _ref_entropy_ising(qh)
        F = np.array([qh / 2 + alpha * E[1], -(1 - q) / 2 + S[1]])
        J = np.array([[alpha * E[2], 0.5], [0.5, S[2]]])
        return F, J, E, S

    # fixed-point warm-up (robust), then Newton
    q, qh = 0.3, 0.5
    for _ in range(60):
        E = _ref_energy(q, kappa)
        qh_new = -2 * alpha * E[1]
        zs, ws = piecewise_nodes([0.0], 5)
        q_new = float(np.sum(ws * np.tanh(math.sqrt(max(qh_new, 1e-300)) * zs) ** 2))
        q, qh = 0.5 * q + 0.5 * min(q_new, 1 - 1e-9), 0.5 * qh + 0.5 * qh_new
    info = newton(lambda x: both(x)[0], [q, qh], lambda x: both(x)[1], tol=1e-12,
                  in_domain=lambda x: 0 < x[0] < 1 and x[1] > 0)
    q, qh = info.x
    F, J, E, S = both(info.x)
    ent = -qh * (1 - q) / 2 + S[0] + alpha * E[0]
    rep = 1.0 - alpha * E[3] * S[3] / (1 - q) ** 2
    return _Ref("binary", alpha, kappa, float(q), float(qh), float(ent), float(rep), info.residual, info.iterations,
                np.linalg.eigvalsh(J))


_KM_CACHE: dict = {}


def _km_capacity(kappa):
    """Krauth--Mezard capacity of the Ising perceptron at ``kappa``: the alpha where the RS entropy
    of the reference (:func:`_solve_ref_binary`) vanishes (Krauth & Mezard 1989; the same number as
    :func:`statmech.perceptron.binary_capacity`, tested).  Newton on ``S(alpha)`` with the exact
    slope ``dS/dalpha = E_z log H(u)`` (envelope theorem), from the bracket's regula falsi point;
    cached per kappa."""
    kappa = float(kappa)
    if kappa in _KM_CACHE:
        return _KM_CACHE[kappa]

    def f(a):  # (S, dS/dalpha); no RS solution (beyond the Gardner-Derrida point) counts as S < 0
        try:
            r = _reference("binary", a, kappa)
        except ConvergenceError:
            return -math.inf, math.nan
        return r.entropy, float(_ref_energy(r.q0, kappa)[0])

    from ..perceptron import gardner_capacity  # Ising solutions lie on the sphere: alpha_KM < alpha_c
    lo, hi = 0.01, min(0.9, float(gardner_capacity(kappa)))
    s_lo, s_hi = f(lo)[0], f(hi)[0]
    while s_hi > 0.0:  # (kappa < 0: larger capacities)
        lo, s_lo, hi = hi, s_hi, 2.0 * hi
        s_hi = f(hi)[0]
    while s_lo < 0.0:  # (large kappa: smaller capacities)
        hi, s_hi, lo = lo, s_lo, 0.5 * lo
        s_lo = f(lo)[0]
    a = lo + (hi - lo) * s_lo / (s_lo - s_hi) if math.isfinite(s_hi) else 0.5 * (lo + hi)
    for _ in range(60):
        s, ds = f(a)
        if s > 0:
            lo = a
        else:
            hi = a
        a_new = a - s / ds if math.isfinite(s) and ds < 0 else math.nan
        if not lo <= a_new <= hi:
            a_new = 0.5 * (lo + hi)
        if abs(a_new - a) <= 1e-13 * a:
            _KM_CACHE[kappa] = a_new
            return a_new
        a = a_new
    raise ConvergenceError("franz_parisi: the Krauth-Mezard capacity (zero of the RS entropy) was not reached",
                           diagnostics={"kappa": kappa, "alpha": a})


def check_binary_alpha(alpha, kappa, function):
    """ValueError unless ``0 < alpha < alpha_KM(kappa)`` (above it the Ising perceptron has no
    solutions: the RS entropy of the reference is negative).  A positive RS entropy at ``alpha``
    proves ``alpha < alpha_KM`` (it decreases with alpha): the capacity itself is computed only
    for the message of a rejection."""
    if alpha > 0.0:
        try:
            if _reference("binary", alpha, kappa).entropy > 0.0:
                return alpha
        except ConvergenceError:
            pass
    a_km = _km_capacity(kappa)
    if not 0.0 < alpha < a_km:
        raise ValueError(f"{function}: alpha must be in (0, alpha_KM(kappa)) = (0, {a_km:.10g}) at kappa = {kappa:g} "
                         f"(Krauth-Mezard capacity: above it the Ising perceptron has no solutions), got {alpha!r}")
    return alpha


def check_spherical_alpha(alpha, kappa, function):
    """ValueError unless ``0 < alpha < alpha_c(kappa)``, Gardner's RS capacity (above it the RS
    reference has no solution: q0 -> 1 at alpha_c)."""
    from ..perceptron import gardner_capacity  # (public name of the perceptron model)
    a_c = float(gardner_capacity(kappa))
    if not 0.0 < alpha < a_c:
        raise ValueError(f"{function}: alpha must be in (0, alpha_c(kappa)) = (0, {a_c:.10g}) at kappa = {kappa:g} "
                         f"(Gardner's RS capacity of the spherical perceptron), got {alpha!r}")
    return alpha


def _solve_ref_spherical(alpha, kappa):
    """Gardner RS for spherical weights: stationary point of
    Phi(q) = log(1-q)/2 + q/(2(1-q)) + alpha E_z log H(u)."""
    def F(x):
        E = _ref_energy(x[0], kappa)
        return np.array([_REF.sph_S(x[0])[1] + alpha * E[1]])

    def J(x):
        E = _ref_energy(x[0], kappa)
        return np.array([[_REF.sph_S(x[0])[2] + alpha * E[2]]])

    # bracket by bisection on the monotone residual, then Newton
    lo, hi = 1e-12, 1 - 1e-12
    if F([lo])[0] > 0:
        raise ConvergenceError("spherical reference: no overlap solution (alpha too small?)",
                               diagnostics={"alpha": alpha, "kappa": kappa})
    x = 0.5
    for _ in range(60):
        x = 0.5 * (lo + hi)
        if F([x])[0] < 0:
            lo = x
        else:
            hi = x
        if hi - lo < 1e-6:
            break
    info = newton(F, [x], J, tol=1e-13, in_domain=lambda v: 0 < v[0] < 1)
    q = float(info.x[0])
    E = _ref_energy(q, kappa)
    ent = float(_REF.sph_S(q)[0] + alpha * E[0])
    rep = 1.0 - alpha * E[3]
    return _Ref("spherical", alpha, kappa, q, float("nan"), ent, float(rep), info.residual, info.iterations,
                np.linalg.eigvalsh(J([q])))


def equilibrium_binary(alpha, kappa=0.0):
    """Typical (equilibrium, RS) solutions of the Ising perceptron: the FP reference.

    Gardner & Derrida (1988) RS, thesis Sec. 2.3 (the entropy of Eq. 2.33 family, corrected
    prefactors): stationary point of
    ``-q_hat (1-q)/2 + E_z log 2cosh(sqrt(q_hat) z) + alpha E_z log H((kappa - sqrt(q) z)/sqrt(1-q))``.

    Domain: ``kappa`` in [0, 3], ``0 < alpha < alpha_KM(kappa)`` (the Krauth--Mezard capacity,
    0.8330786 at kappa = 0, where this entropy vanishes; above it there are no solutions and
    ValueError is raised).  Returns a SaddlePoint with ``q``, ``q_hat``, ``entropy``, ``d_typical``,
    the Hessian eigenvalues of that function in ``(q, q_hat)``, the replicon (AT) eigenvalue and
    ``rs_stable``; ConvergenceError (naming alpha, kappa) if the Newton solve fails.
    """
    check_real("alpha", alpha, function="equilibrium_binary")
    check_real("kappa", kappa, function="equilibrium_binary")
    alpha = float(check_range("alpha", alpha, 0.0, lo_open=True))
    kappa = float(check_range("kappa", kappa, 0.0, 3.0))
    check_binary_alpha(alpha, kappa, "equilibrium_binary")
    r = _reference("binary", alpha, kappa)
    return SaddlePoint("franz_parisi.equilibrium_binary", {"alpha": alpha, "kappa": kappa},
                       {"q": r.q0, "q_hat": r.qh0}, {"entropy": r.entropy, "d_typical": (1 - r.q0) / 2},
                       True, r.residual, r.iterations, r.hessian_eigenvalues, r.replicon, bool(r.replicon > 0),
                       headline="entropy")


def equilibrium_spherical(alpha, kappa=0.0):
    """Typical solutions of the spherical perceptron (Gardner 1988 RS): the FP reference.

    Stationary point of ``log(1-q)/2 + q/(2(1-q)) + alpha E_z log H((kappa - sqrt(q) z)/sqrt(1-q))``
    (entropy = log of the fraction of the sphere).  Returns a SaddlePoint with ``q``, ``entropy``,
    ``d_typical``, the second derivative of that function in ``q`` (``hessian_eigenvalues``), the
    replicon (AT) eigenvalue ``1 - alpha E_z[(d^2/du^2 log H(u))^2]`` and ``rs_stable``.

    Domain: ``kappa`` in [-10, 10], ``0 < alpha < alpha_c(kappa)`` (Gardner's RS capacity,
    :func:`statmech.perceptron.gardner_capacity`; ValueError outside); ConvergenceError (naming
    alpha, kappa) if the solve fails.
    """
    check_real("alpha", alpha, function="equilibrium_spherical")
    check_real("kappa", kappa, function="equilibrium_spherical")
    alpha = float(check_range("alpha", alpha, 0.0, lo_open=True))
    kappa = float(check_range("kappa", kappa, -10.0, 10.0))
    check_spherical_alpha(alpha, kappa, "equilibrium_spherical")
    r = _reference("spherical", alpha, kappa)
    return SaddlePoint("franz_parisi.equilibrium_spherical", {"alpha": alpha, "kappa": kappa},
                       {"q": r.q0}, {"entropy": r.entropy, "d_typical": (1 - r.q0) / 2},
                       True, r.residual, r.iterations, r.hessian_eigenvalues, r.replicon, bool(r.replicon > 0),
                       headline="entropy")
