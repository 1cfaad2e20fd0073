r"""Tree committee at K = inf beyond replica symmetry: the SAT/UNSAT point in RS, 1RSB, k-step
and full RSB, for ReLU (balanced second layer), erf and sign hidden units.

Derivation in ``docs/committee.md`` ("K = infinity: full RSB").  By the central limit theorem over
the K -> inf branches the output field is Gaussian with covariance ``Q(q_ab)`` between
replicas (:func:`tcm_output_kernel`), so the storage problem is a perceptron with that
kernel; at the jamming point (``q_max = 1 - eps``, ``m_i = y_i eps``) the cost of moving the
output field ``Y`` to the correct side is ``c(Y)/s`` in units of ``1/eps``:

* smooth activations (ReLU, erf): ``c(Y) = Y_-^2/2`` (the perceptron's soft hinge) and
  ``s = Q'(1) = E[g'^2]/Var g`` (the hidden fields move by ``dY/sqrt(Q'(1))``);
* sign: ``Q'(1) = inf``; at large but finite K the cost of the ``sqrt(K) Y_-/2`` cheapest flips
  is ``Y_-^3/(24 phi(0)^2 sqrt K)``: ``c(Y) = Y_-^3`` and ``s = 48 phi(0)^2 sqrt K = (24/pi) sqrt K``,
  a K-dependent theory (``K = inf`` itself has infinite capacity in every ansatz).

The SAT/UNSAT density is ``alpha_J = min R``, ``R(q, yhat) = s S~(q, s yhat)/(-Phi~(Q(q), yhat))``
(:class:`statmech.rsb.KernelJammingProblem`; ``yhat = y/s`` are the Parisi parameters of the
energetic term).  RS (``y -> 0``) gives ``alpha = s/(2 E c)``: ``2 Q'(1)`` (ReLU
``2 pi/(pi - 1)``, erf ``4 sqrt 3/pi``) and ``sqrt(72/pi) sqrt K`` for sign.

Public: :func:`tcm_output_kernel`, :func:`tcm_capacity_inf_point` (ReLU, erf),
:func:`sign_capacity_large_K_point` and :func:`sign_capacity_large_K` (sign at large K),
:func:`tcm_kstep_inf` (k-step with free breakpoints, the k -> inf study).
"""
from __future__ import annotations

import math
from dataclasses import replace
from functools import lru_cache

import numpy as np

from ..errors import check_choice, check_int, check_range
from ..rsb import HingeFrozen, KernelJammingProblem, PowerHingeFrozen, solve_frsb, solve_kstep
from ..saddle import SaddlePoint
from ._kernels import _eqs

__all__ = ["tcm_output_kernel", "tcm_capacity_inf_point", "sign_capacity_large_K_point", "sign_capacity_large_K",
           "tcm_kstep_inf", "INF_ACTIVATIONS", "FRSB_KS"]

INF_ACTIVATIONS = ("relu", "erf", "sign")
INF_ANSATZE = ("rs", "1rsb", "frsb")
FRSB_KS = (4, 8, 16)       # graded grids of the full-RSB solves (error ~K^-1.6, extrapolated)
LN_K_MAX = 1000.0          # s = (24/pi) sqrt(K) overflows double precision beyond ln K ~ 1400
_PHI0 = 1.0 / math.sqrt(2.0 * math.pi)


# --------------------------------------------------------------------------- kernels
def _relu_Q(q):
    Q, dQ = np.vectorize(_eqs.relu_Q, otypes=[float, float])(q)
    return np.asarray(Q, dtype=float), np.asarray(dQ, dtype=float)


def _erf_Q(q):
    # g = erf(x/sqrt 2) (the package's convention, as for the soft committee): E g g' = (2/pi) asin(q/2)
    q = np.asarray(q, dtype=float)
    return 6.0 / math.pi * np.arcsin(0.5 * q), 6.0 / math.pi / np.sqrt(4.0 - q * q)


def _sign_Q(q):
    q = np.asarray(q, dtype=float)
    with np.errstate(divide="ignore"):
        return 2.0 / math.pi * np.arcsin(q), 2.0 / math.pi / np.sqrt(1.0 - q * q)


def _sign_Q_inverse(Q):
    Q = np.asarray(Q, dtype=float)
    return np.sin(0.5 * math.pi * Q), 0.5 * math.pi * np.cos(0.5 * math.pi * Q)


_KERNELS = {"relu": _relu_Q, "erf": _erf_Q, "sign": _sign_Q}
_SLOPE = {"relu": math.pi / (math.pi - 1.0), "erf": 2.0 * math.sqrt(3.0) / math.pi, "sign": math.inf}


def tcm_output_kernel(q, activation="relu"):
    r"""Normalized output overlap ``Q(q)`` of a K -> inf tree committee and ``Q'(q)``.

    ``Q(q) = (E[g(u) g(v)] - (E g)^2)/(E[g^2] - (E g)^2)`` for standard Gaussians u, v with
    correlation q (the covariance of the output field between two replicas, by the CLT):

    * ``"relu"`` (balanced second layer): ``(sqrt(1-q^2) + (pi - arccos q) q - 1)/(pi - 1)``,
      ``Q'(1) = pi/(pi - 1)`` (same as :func:`relu_kernel_Q`);
    * ``"erf"``, g(x) = erf(x/sqrt 2): ``(6/pi) arcsin(q/2)``, ``Q'(1) = 2 sqrt(3)/pi``;
    * ``"sign"``: ``(2/pi) arcsin q``, ``Q'(1) = inf``.

    Returns ``(Q, dQ/dq)`` (arrays shaped like q, floats for scalar q); q in [-1, 1].
    """
    check_choice("activation", activation, INF_ACTIVATIONS)
    qa = check_range("q", q, -1.0, 1.0)
    Q, dQ = _KERNELS[activation](qa)
    if np.ndim(Q) == 0:
        return float(Q), float(dQ)
    return Q, dQ


# --------------------------------------------------------------------------- problems
def _scale(activation, ln_K):
    return (24.0 / math.pi) * math.exp(0.5 * ln_K) if activation == "sign" else _SLOPE[activation]


@lru_cache(maxsize=64)
def _problem(activation, ln_K):
    s = _scale(activation, ln_K)
    channel = PowerHingeFrozen(0.0, 3.0) if activation == "sign" else HingeFrozen(0.0)
    name = f"TCM K=inf {activation}" + (f" (ln K={ln_K:g})" if activation == "sign" else "")
    # sign: breakpoints in the output overlap Q (1 - q ~ (1 - Q)^2 near 1: the grids must be graded in Q)
    inverse = _sign_Q_inverse if activation == "sign" else None
    return KernelJammingProblem(channel, _KERNELS[activation], s, name, inverse=inverse)


def _alpha_rs(activation, ln_K):
    """s/(2 E c(Y)), Y ~ N(0, 1): E Y_-^2/2 = 1/4, E Y_-^3 = 2 phi(0)."""
    if activation == "sign":
        return _scale("sign", ln_K) / (4.0 * _PHI0)      # = sqrt(72/pi) sqrt(K)
    return 2.0 * _SLOPE[activation]


def _rs_replicon(activation):
    # 1 - alpha Q'(q)^2 (1-q)^2 E[(d_h^2 log H)^2] -> 1 - alpha/2 at q -> 1 (docs): 1 - Q'(1) at alpha = 2 Q'(1);
    # for sign it diverges to -inf (Q'(q)^2 (1-q)^2 / (1-Q)^2 -> inf)
    return 1.0 - _SLOPE[activation] if activation != "sign" else -math.inf


def _start_1rsb(prob):
    """Start for (q0, yhat): the best point of a coarse scan of R (Newton then converges)."""
    best = (math.inf, 0.7, 1.0)
    for q0 in (0.4, 0.6, 0.75, 0.85, 0.92):
        for ly in np.linspace(-1.0, 3.5, 10):
            q, y = np.array([q0, 1.0]), np.array([10.0 ** ly])
            try:
                v = prob.evaluate(q, y, prob.lattice(q, y), grad=False)[0]
            except ValueError:
                continue
            if v < best[0]:
                best = (v, q0, 10.0 ** ly)
    return best[1], best[2]


@lru_cache(maxsize=64)
def _one_rsb(activation, ln_K):
    prob = _problem(activation, ln_K)
    q0, y = _start_1rsb(prob)
    return solve_kstep(prob, [q0, 1.0], [y])


def _params(activation, ln_K):
    p = {"K": math.inf, "activation": activation}
    if activation == "sign":
        p.update({"K": math.exp(ln_K) if ln_K < 700 else math.inf, "ln_K": ln_K})
    return p


def _scaled(activation, ln_K, ansatz, alpha):
    """alpha / sqrt(K) (sign RS) or alpha / sqrt(ln K) (sign 1RSB, full RSB), else alpha."""
    if activation != "sign":
        return alpha
    return alpha / math.exp(0.5 * ln_K) if ansatz == "rs" else alpha / math.sqrt(ln_K)


@lru_cache(maxsize=64)
def _point(activation, ansatz, ln_K, Ks):
    s = _scale(activation, ln_K)
    model = "committee.tcm_capacity_inf"
    params = _params(activation, ln_K)
    a_rs = _alpha_rs(activation, ln_K)
    if ansatz == "rs":
        rep = _rs_replicon(activation)
        return SaddlePoint(model, params, {"q": 1.0}, {"alpha_c": a_rs, "scaled_alpha_c": _scaled(activation, ln_K, "rs", a_rs)},
                           True, 0.0, 0, None, rep, bool(rep >= 0), {"scale": s}, "rs")
    s1 = _one_rsb(activation, ln_K)
    prob = _problem(activation, ln_K)
    x0, y1 = float(s1.q[0]), float(s1.m[0])        # x: the problem's breakpoint variable (q, or Q for sign)
    (q0, _), (Q0, _) = prob.overlaps(s1.q)
    if ansatz == "1rsb":
        return SaddlePoint(model, params, {"q0": float(q0), "q1": 1.0, "y": s * y1, "yhat": y1},
                           {"alpha_c": s1.value, "scaled_alpha_c": _scaled(activation, ln_K, "1rsb", s1.value)},
                           True, s1.residual, s1.iterations, s1.hessian_eigenvalues, None, False,
                           {"lattice_error": s1.lattice_error, "alpha_rs": a_rs, "scale": s, "Q0": float(Q0)}, "1rsb")
    sol = solve_frsb(prob, x0, 1.0, lambda xm: 0.5 * y1 * np.sqrt((1.0 - x0) / (1.0 - xm)), Ks=Ks)
    q, Q = prob.overlaps(sol.q)
    return SaddlePoint(model, params, {"q_min": float(q[0]), "q_max": 1.0},
                       {"alpha_c": sol.value, "scaled_alpha_c": _scaled(activation, ln_K, "frsb", sol.value)},
                       True, sol.residual, sol.iterations, sol.hessian_eigenvalues, None, False,
                       {"q": q, "Q": Q, "y": s * sol.x, "yhat": sol.x, "error": sol.error, "order": sol.p,
                        "Ks": sol.Ks, "alpha_K": sol.values, "lattice_error": sol.lattice_error,
                        "lattice_points": sol.lattice_points, "alpha_1rsb": s1.value, "alpha_rs": a_rs, "scale": s},
                       "frsb")


def _check_Ks(Ks):
    Ks = tuple(check_int("Ks", K, 1) for K in Ks)
    if len(Ks) < 2 or any(b != 2 * a for a, b in zip(Ks, Ks[1:])):
        raise ValueError(f"Ks must be at least two grid sizes, each twice the previous one, got {Ks!r}")
    return Ks


def _ln_K(K, ln_K):
    if (K is None) == (ln_K is None):
        raise ValueError("give exactly one of K or ln_K")
    if ln_K is None:
        return math.log(float(check_range("K", K, 3.0)))
    return float(check_range("ln_K", ln_K, math.log(3.0), LN_K_MAX))


# --------------------------------------------------------------------------- public
def tcm_capacity_inf_point(activation="relu", ansatz="frsb", *, Ks=FRSB_KS):
    r"""SAT/UNSAT point of the K = inf tree committee (ReLU or erf hidden units) as a SaddlePoint.

    Parameters
    ----------
    activation : ``"relu"`` (balanced second layer) or ``"erf"`` (g = erf(x/sqrt 2)); for sign
        units the K = inf capacity is infinite: see :func:`sign_capacity_large_K_point`
    ansatz : ``"rs"`` (``2 Q'(1)``, exact), ``"1rsb"`` (``q0``, ``y = m/(1 - q1)``) or ``"frsb"``
        (``y(q)`` piecewise constant on graded grids ``Ks``, extrapolated ``K -> inf``)

    Returns
    -------
    SaddlePoint (model ``committee.tcm_capacity_inf``): ``thermo["alpha_c"]``; RS: ``replicon``
    ``1 - Q'(1)`` (< 0: RS unstable at jamming), ``rs_stable``; 1RSB: ``q0``, ``y`` and the
    energetic ``yhat = y/Q'(1)``, ``hessian_eigenvalues`` of R at its minimum (all > 0),
    ``extra["lattice_error"]``; full RSB: ``extra`` holds ``q``, ``y`` (x(q) = y(q)(1 - q_max)),
    the sequence ``alpha_K`` over ``Ks``, the fitted ``order`` and the ``error`` estimate
    (Richardson correction + lattice error).  Cached per arguments (full RSB: ~20 s).
    """
    check_choice("activation", activation, ("relu", "erf"))
    check_choice("ansatz", ansatz, INF_ANSATZE)
    return _point(activation, ansatz, 0.0, _check_Ks(Ks))


def sign_capacity_large_K_point(K=None, *, ln_K=None, ansatz="frsb", Ks=FRSB_KS):
    r"""Large-K SAT/UNSAT point of the sign tree committee (continuum theory) as a SaddlePoint.

    The K -> inf limit at fixed alpha is trivial (``Q'(1) = inf``: infinite capacity in every
    ansatz).  At large K the capacity grows, and the theory of docs/committee.md ("K = inf:
    full RSB", sign) keeps the leading large-K structure: outer levels Gaussian with kernel
    ``(2/pi) arcsin q``, frozen cost ``Y_-^3`` with scale ``s = (24/pi) sqrt K``.  It gives
    ``alpha_c^RS = sqrt(72/pi) sqrt K`` exactly and the 1RSB of :func:`tcm_1rsb_large_K`
    (Eq. 1RSB.L, ``alpha/sqrt(ln K) -> 8/pi``); full RSB lies below.  ``thermo["scaled_alpha_c"]``
    is ``alpha_c/sqrt K`` (RS) or ``alpha_c/sqrt(ln K)`` (1RSB, full RSB).

    Give ``K`` (>= 3) or ``ln_K`` (<= 1000).  Asymptotic in K: it overestimates finite-K values
    (as Eq. 1RSB.L does: 6.04 vs 4.84 at K = 25).  Fields as in :func:`tcm_capacity_inf_point`.
    """
    check_choice("ansatz", ansatz, INF_ANSATZE)
    return _point("sign", ansatz, _ln_K(K, ln_K), _check_Ks(Ks))


def sign_capacity_large_K(K=None, *, ln_K=None, ansatz="frsb", Ks=FRSB_KS):
    """``alpha_c`` of :func:`sign_capacity_large_K_point` (a float)."""
    return float(sign_capacity_large_K_point(K, ln_K=ln_K, ansatz=ansatz, Ks=Ks).alpha_c)


def tcm_kstep_inf(activation, k, *, K=None, ln_K=None):
    """k-step RSB jamming point of the K = inf committee with free breakpoints (k >= 1).

    Returns the :class:`statmech.rsb.KStepSolution` of ``R`` (``value`` = alpha_J^{kRSB},
    ``q`` the breakpoints (weight overlaps), ``m`` the energetic ``yhat``; ``y = yhat s``).  ``activation`` relu
    or erf, or sign with ``K`` or ``ln_K``.  Each k starts from k - 1 with a breakpoint
    inserted half-way to q = 1.
    """
    check_choice("activation", activation, INF_ACTIVATIONS)
    k = check_int("k", k, 1)
    if activation == "sign":
        lk = _ln_K(K, ln_K)
    elif K is not None or ln_K is not None:
        raise ValueError(f"K and ln_K apply to activation='sign' only, got activation={activation!r}")
    else:
        lk = 0.0
    prob = _problem(activation, lk)
    prev = _one_rsb(activation, lk)
    for _ in range(2, k + 1):
        x = np.concatenate([prev.q[:-1], [0.5 * (prev.q[-2] + 1.0)], [1.0]])
        y = np.concatenate([prev.m, [3.0 * prev.m[-1]]])
        prev = solve_kstep(prob, x, y)
    return replace(prev, q=prob.overlaps(prev.q)[0])
