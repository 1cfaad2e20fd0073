r"""Tree committee at K = inf beyond replica symmetry: the SAT/UNSAT point in RS, 1RSB, k-step
and full RSB, for ReLU (balanced second layer), erf, quadratic and sign hidden units.

Derivation in ``docs/committee.md`` ("K = infinity: full RSB").  By the central limit theorem over
the K -> inf branches the output field is Gaussian with covariance ``Q(q_ab)`` between
replicas (:func:`tcm_output_kernel`), so the storage problem is a perceptron with that
kernel; at the jamming point (``q_max = 1 - eps``, ``m_i = y_i eps``) the cost of moving the
output field ``Y`` to the correct side is ``c(Y)/s`` in units of ``1/eps``:

* smooth activations (ReLU, erf, quadratic): ``c(Y) = Y_-^2/2`` (the perceptron's soft hinge) and
  ``s = Q'(1) = E[g'^2]/Var g`` (the hidden fields move by ``dY/sqrt(Q'(1))``);
* sign: ``Q'(1) = inf``; at large but finite K the cost of the ``sqrt(K) Y_-/2`` cheapest flips
  is ``Y_-^3/(24 phi(0)^2 sqrt K)``: ``c(Y) = Y_-^3`` and ``s = 48 phi(0)^2 sqrt K = (24/pi) sqrt K``,
  a K-dependent theory (``K = inf`` itself has infinite capacity in every ansatz).

The SAT/UNSAT density is ``alpha_J = min R``, ``R(q, yhat) = s S~(q, s yhat)/(-Phi~(Q(q), yhat))``
(:class:`statmech.rsb.KernelJammingProblem`; ``yhat = y/s`` are the Parisi parameters of the
energetic term).  RS (``y -> 0``) gives ``alpha = s/(2 E c)``: ``2 Q'(1)`` (ReLU
``2 pi/(pi - 1)``, erf ``4 sqrt 3/pi``, quadratic 4) and ``sqrt(72/pi) sqrt K`` for sign.

Public: :func:`tcm_output_kernel`, :func:`tcm_capacity_inf_point` (ReLU, erf, quadratic; rs, 1rsb,
2rsb, 3rsb, ..., frsb), :func:`sign_capacity_large_K_point` and :func:`sign_capacity_large_K` (sign at
large K), :func:`tcm_kstep_inf` (k-step with free breakpoints, the k -> inf study; ``check=True``
re-evaluates the minimum by the independent quadrature of :mod:`statmech.rsb.nested_quadrature`).
"""
from __future__ import annotations

import math
from dataclasses import replace
from functools import lru_cache

import numpy as np

from ..errors import ConvergenceError, check_choice, check_int, check_range
from ..result import check_ansatz, check_real
from ..rsb import HingeFrozen, KernelJammingProblem, PowerHingeFrozen, solve_frsb, solve_kstep
from ..rsb.nested_quadrature import jamming_ratio_quadrature
from ..saddle import SaddlePoint
from ._kernels import _eqs

__all__ = ["tcm_output_kernel", "tcm_capacity_inf_point", "sign_capacity_large_K_point", "sign_capacity_large_K",
           "tcm_kstep_inf", "INF_ACTIVATIONS", "FRSB_KS"]

INF_ACTIVATIONS = ("relu", "erf", "quadratic", "sign")
SMOOTH_ACTIVATIONS = ("relu", "erf", "quadratic")     # finite Q'(1): a finite capacity at K = inf
INF_ANSATZE = ("rs", "1rsb", "krsb", "frsb")            # "krsb": "2rsb", "3rsb", ... (k-step, k <= K_STEP_MAX)
K_STEP_MAX = 6             # more steps: use "frsb" (the 6-step drop is 3e-5 relative; ReLU 6RSB is 9e-5 above full RSB)
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


def _quadratic_Q(q):
    # g = x^2 with its mean removed (balanced second layer or a threshold): Cov(u^2, v^2)/Var(u^2) = 2 q^2/2
    q = np.asarray(q, dtype=float)
    return q * q, 2.0 * q


def _sign_Q(q):
    q = np.asarray(q, dtype=float)
    with np.errstate(divide="ignore"):
        return 2.0 / math.pi * np.arcsin(q), 2.0 / math.pi / np.sqrt(1.0 - q * q)


def _sign_Q_inverse(Q):
    Q = np.asarray(Q, dtype=float)
    return np.sin(0.5 * math.pi * Q), 0.5 * math.pi * np.cos(0.5 * math.pi * Q)


_KERNELS = {"relu": _relu_Q, "erf": _erf_Q, "quadratic": _quadratic_Q, "sign": _sign_Q}
_SLOPE = {"relu": math.pi / (math.pi - 1.0), "erf": 2.0 * math.sqrt(3.0) / math.pi, "quadratic": 2.0,
          "sign": math.inf}


def tcm_output_kernel(q, activation="relu"):
    r"""Normalized output overlap ``Q(q)`` of a K -> inf tree committee and ``Q'(q)``.

    ``Q(q) = (E[g(u) g(v)] - (E g)^2)/(E[g^2] - (E g)^2)`` for standard Gaussians u, v with
    correlation q (the covariance of the output field between two replicas, by the CLT):

    * ``"relu"`` (balanced second layer): ``(sqrt(1-q^2) + (pi - arccos q) q - 1)/(pi - 1)``,
      ``Q'(1) = pi/(pi - 1)`` (same as :func:`relu_kernel_Q`);
    * ``"erf"``, g(x) = erf(x/sqrt 2): ``(6/pi) arcsin(q/2)``, ``Q'(1) = 2 sqrt(3)/pi``;
    * ``"quadratic"``, g(x) = x^2 (mean removed by the second layer): ``q^2``, ``Q'(1) = 2``;
    * ``"sign"``: ``(2/pi) arcsin q``, ``Q'(1) = inf``.

    Domain: q in [-1, 1] (scalar or array; ValueError naming q outside, TypeError for
    non-numbers), activation one of ``INF_ACTIVATIONS`` (ValueError otherwise).
    Returns ``(Q, dQ/dq)`` (arrays shaped like q, floats for scalar q).
    """
    check_choice("activation", activation, INF_ACTIVATIONS)
    qa = check_range("q", check_real("q", q, function="tcm_output_kernel"), -1.0, 1.0)
    Q, dQ = _KERNELS[activation](qa)
    if np.ndim(Q) == 0:
        return float(Q), float(dQ)
    return Q, dQ


# --------------------------------------------------------------------------- problems
def _scale(activation, ln_K):
    return (24.0 / math.pi) * math.exp(0.5 * ln_K) if activation == "sign" else _SLOPE[activation]


class _FinerProblem(KernelJammingProblem):
    """The kernel jamming problem on lattices ``res`` times finer (every spacing divided by res)."""

    def __init__(self, channel, kernel, scale, name, *, inverse=None, res=1.0):
        super().__init__(channel, kernel, scale, name, inverse=inverse)
        self.res = float(res)

    def lattice(self, x, m, res=1.0):
        return super().lattice(x, m, res=res * self.res)


@lru_cache(maxsize=64)
def _problem(activation, ln_K, res=1.0):
    s = _scale(activation, ln_K)
    channel = PowerHingeFrozen(0.0, 3.0) if activation == "sign" else HingeFrozen(0.0)
    name = f"TCM K=inf {activation}" + (f" (ln K={ln_K:g})" if activation == "sign" else "")
    # sign: breakpoints in the output overlap Q (1 - q ~ (1 - Q)^2 near 1: the grids must be graded in Q)
    inverse = _sign_Q_inverse if activation == "sign" else None
    if res == 1.0:
        return KernelJammingProblem(channel, _KERNELS[activation], s, name, inverse=inverse)
    return _FinerProblem(channel, _KERNELS[activation], s, name, inverse=inverse, res=res)


LATTICE_RTOL = 1e-11     # k-step solves are repeated on finer lattices until the lattice change is below this


def _solve_refined(activation, ln_K, x, y):
    """solve_kstep on the default lattices, then on lattices 2x, 4x finer (from the previous minimum)
    while the value changes by more than LATTICE_RTOL on a lattice twice as fine (e.g. quadratic
    1RSB: Q0 = 0.08, the outermost Gaussian step is only a few spacings wide: change 4e-8 at res 1)."""
    res = 1.0
    sol = solve_kstep(_problem(activation, ln_K, res), x, y)
    while sol.lattice_error > LATTICE_RTOL * abs(sol.value) and res < 4.0:
        res *= 2.0
        sol = solve_kstep(_problem(activation, ln_K, res), sol.q, sol.m)
    return sol


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
    for q0 in (0.2, 0.3, 0.4, 0.6, 0.75, 0.85, 0.92):
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
    return _solve_refined(activation, ln_K, [q0, 1.0], [y])


def _kstep_starts(prob, prev):
    """Starts for k steps from the (k-1)-step minimum ``prev``: a breakpoint inserted in every gap
    of ``(0, x_0, ..., x_{k-2}, 1)`` at three positions, the Parisi parameter of the split interval
    scaled by three (lower, upper) pairs; sorted by R (the best ones are solved)."""
    x, y = np.asarray(prev.q, dtype=float), np.asarray(prev.m, dtype=float)
    k1 = y.size                                   # steps of prev; intervals: (x_{i-1}, x_i) with yhat_i
    cands = []
    for j in range(k1 + 1):                       # insert between x_{j-1} (0 for j = 0) and x_j
        lo = 0.0 if j == 0 else x[j - 1]
        hi = x[j]
        yj = y[j - 1] if j >= 1 else y[0]         # below x_0 the new outer level takes yhat_1 scaled down
        for f in (0.3, 0.6, 0.9):
            xn = lo + f * (hi - lo)
            for r1, r2 in ((1.0, 3.0), (0.5, 1.5), (1.0 / 3.0, 1.0)):
                xs = np.concatenate([x[:j], [xn], x[j:]])
                if j == 0:
                    ys = np.concatenate([[r1 * y[0]], y])
                else:
                    ys = np.concatenate([y[:j - 1], [r1 * yj, r2 * yj], y[j:]])
                try:
                    v = prob.evaluate(xs, ys, prob.lattice(xs, ys), grad=False)[0]
                except ValueError:
                    continue
                if math.isfinite(v):
                    cands.append((v, xs, ys))
    cands.sort(key=lambda c: c[0])
    return cands


_START_VALUES = {}    # (activation, ln_K, k) -> the minima reached from the three starts of _kstep


@lru_cache(maxsize=64)
def _kstep(activation, ln_K, k):
    """k-step minimum of R with free breakpoints (KStepSolution), k >= 1, each k from k - 1.

    Newton from the three best starts of :func:`_kstep_starts`; the lowest converged minimum is
    kept.  The (k-1)-step minimum is a boundary of the k-step family (two breakpoints merged), so
    the result must lie at or below it; a solution that does not is rejected (ConvergenceError)."""
    if k == 1:
        return _one_rsb(activation, ln_K)
    prob = _problem(activation, ln_K)
    prev = _kstep(activation, ln_K, k - 1)
    best, last, values = None, None, []
    for _, xs, ys in _kstep_starts(prob, prev)[:3]:
        try:
            sol = _solve_refined(activation, ln_K, xs, ys)
        except ConvergenceError as exc:
            last = exc
            continue
        values.append(sol.value)
        if best is None or sol.value < best.value:
            best = sol
    _START_VALUES[(activation, ln_K, k)] = tuple(values)
    if best is None or not best.value <= prev.value * (1.0 + 1e-12):
        raise ConvergenceError(f"tcm_kstep_inf: no {k}-step minimum found for activation={activation!r}"
                               + (f", ln_K={ln_K:g}" if activation == "sign" else ""),
                               diagnostics={"k": k, "alpha_previous": prev.value,
                                            "best": None if best is None else best.value,
                                            "last_error": repr(last)})
    return best


def _params(activation, ln_K):
    p = {"K": math.inf, "activation": activation}
    if activation == "sign":
        p.update({"K": math.exp(ln_K) if ln_K < 700 else math.inf, "ln_K": ln_K})
    return p


def _scaled(activation, ln_K, ansatz, alpha):
    """alpha / sqrt(K) (sign RS) or alpha / sqrt(ln K) (sign 1RSB, k-step, full RSB), else alpha."""
    if activation != "sign":
        return alpha
    return alpha / math.exp(0.5 * ln_K) if ansatz == "rs" else alpha / math.sqrt(ln_K)


def _reference_kernel(activation):
    kern = _KERNELS[activation]
    return lambda q: float(kern(np.asarray(q, dtype=float))[0])


@lru_cache(maxsize=64)
def _kstep_point(activation, ln_K, k, check):
    """The k-step minimum as a SaddlePoint (model ``committee.tcm_kstep_inf``)."""
    sol = _kstep(activation, ln_K, k)
    prob = _problem(activation, ln_K)
    s = _scale(activation, ln_K)
    q, Q = prob.overlaps(sol.q)
    prev = _alpha_rs(activation, ln_K) if k == 1 else _kstep(activation, ln_K, k - 1).value
    ev = np.asarray(sol.hessian_eigenvalues, dtype=float)
    gaps = np.diff(np.asarray(sol.q, dtype=float))
    extra = {"k": k, "lattice_error": sol.lattice_error, "alpha_previous": prev,
             "relative_drop": (prev - sol.value) / prev, "alpha_rs": _alpha_rs(activation, ln_K), "scale": s,
             "min_breakpoint_gap": float(gaps.min()),
             "start_values": _START_VALUES.get((activation, ln_K, k), (sol.value,))}
    err = float(sol.lattice_error)
    if check:
        ref, ref_err = jamming_ratio_quadrature(q, sol.m, _reference_kernel(activation), s, error=True)
        extra.update({"reference_value": ref, "reference_quadrature_error": ref_err})
        err = max(err, abs(ref - sol.value), ref_err)
    return SaddlePoint("committee.tcm_kstep_inf", _params(activation, ln_K),
                       {"q": q, "Q": Q, "yhat": np.asarray(sol.m, dtype=float), "y": s * np.asarray(sol.m, dtype=float)},
                       {"alpha_c": sol.value, "scaled_alpha_c": _scaled(activation, ln_K, f"{k}rsb", sol.value)},
                       True, sol.residual, sol.iterations, ev, None, bool(np.all(ev > 0)), extra, f"{k}rsb",
                       error=err, stability=ev, headline="alpha_c")


@lru_cache(maxsize=64)
def _point(activation, ansatz, ln_K, Ks):
    s = _scale(activation, ln_K)
    model = "committee.tcm_capacity_inf"
    params = _params(activation, ln_K)
    a_rs = _alpha_rs(activation, ln_K)
    if ansatz == "rs":
        rep = _rs_replicon(activation)
        return SaddlePoint(model, params, {"q": 1.0}, {"alpha_c": a_rs, "scaled_alpha_c": _scaled(activation, ln_K, "rs", a_rs)},
                           True, 0.0, 0, None, rep, bool(rep >= 0), {"scale": s}, "rs", headline="alpha_c",
                           stability=np.array([rep]))
    s1 = _one_rsb(activation, ln_K)
    prob = _problem(activation, ln_K)
    x0, y1 = float(s1.q[0]), float(s1.m[0])        # x: the problem's breakpoint variable (q, or Q for sign)
    (q0, _), (Q0, _) = prob.overlaps(s1.q)
    if ansatz == "1rsb":
        ev = np.asarray(s1.hessian_eigenvalues, dtype=float)
        return SaddlePoint(model, params, {"q0": float(q0), "q1": 1.0, "y": s * y1, "yhat": y1},
                           {"alpha_c": s1.value, "scaled_alpha_c": _scaled(activation, ln_K, "1rsb", s1.value)},
                           True, s1.residual, s1.iterations, ev, None, bool(np.all(ev > 0)),
                           {"lattice_error": s1.lattice_error, "alpha_rs": a_rs, "scale": s, "Q0": float(Q0)}, "1rsb",
                           error=float(s1.lattice_error), stability=ev, headline="alpha_c")
    if ansatz != "frsb":
        return _kstep_point(activation, ln_K, int(ansatz[:-3]), False)
    sol = solve_frsb(prob, x0, 1.0, lambda xm: 0.5 * y1 * np.sqrt((1.0 - x0) / (1.0 - xm)), Ks=Ks)
    q, Q = prob.overlaps(sol.q)
    ev = np.asarray(sol.hessian_eigenvalues, dtype=float)
    return SaddlePoint(model, params, {"q_min": float(q[0]), "q_max": 1.0},
                       {"alpha_c": sol.value, "scaled_alpha_c": _scaled(activation, ln_K, "frsb", sol.value)},
                       True, sol.residual, sol.iterations, ev, None, bool(np.all(ev > 0)),
                       {"q": q, "Q": Q, "y": s * sol.x, "yhat": sol.x, "error": sol.error, "order": sol.p,
                        "Ks": sol.Ks, "alpha_K": sol.values, "lattice_error": sol.lattice_error,
                        "lattice_points": sol.lattice_points, "alpha_1rsb": s1.value, "alpha_rs": a_rs, "scale": s},
                       "frsb", error=float(sol.error), stability=ev, headline="alpha_c")


def _check_Ks(Ks):
    if isinstance(Ks, (str, bytes)) or not hasattr(Ks, "__iter__"):
        raise ValueError(f"Ks must be a sequence of at least two grid sizes, each twice the previous one, got {Ks!r}")
    Ks = tuple(check_int("Ks", K, 1) for K in Ks)
    if len(Ks) < 2 or any(b != 2 * a for a, b in zip(Ks, Ks[1:])):
        raise ValueError(f"Ks must be at least two grid sizes, each twice the previous one, got {Ks!r}")
    return Ks


def _check_inf_ansatz(ansatz, function):
    """Normalise ``ansatz`` (rs, 1rsb, 2rsb .. K_STEP_MAX rsb, frsb); ValueError/TypeError naming it."""
    allowed = f"'rs', '1rsb', '2rsb', ..., '{K_STEP_MAX}rsb' or 'frsb'"
    if not isinstance(ansatz, str):
        raise TypeError(f"{function}: ansatz must be a string, one of {allowed}; got {ansatz!r}")
    try:
        a, steps = check_ansatz(ansatz, INF_ANSATZE, function=function)
    except ValueError:
        raise ValueError(f"{function}: ansatz must be one of {allowed}, got {ansatz!r}") from None
    if a not in ("rs", "1rsb", "frsb") and steps > K_STEP_MAX:
        raise ValueError(f"{function}: ansatz must be one of {allowed}, got {ansatz!r}")
    return a


def _ln_K(K, ln_K):
    if (K is None) == (ln_K is None):
        raise ValueError("give exactly one of K or ln_K")
    if ln_K is None:
        return math.log(float(check_range("K", K, 3.0)))
    return float(check_range("ln_K", ln_K, math.log(3.0), LN_K_MAX))


# --------------------------------------------------------------------------- public
def tcm_capacity_inf_point(activation="relu", ansatz="frsb", *, Ks=FRSB_KS):
    r"""SAT/UNSAT point of the K = inf tree committee (ReLU, erf or quadratic hidden units) as a SaddlePoint.

    Parameters
    ----------
    activation : ``"relu"`` (balanced second layer), ``"erf"`` (g = erf(x/sqrt 2)) or
        ``"quadratic"`` (g = x^2, mean removed); for sign units the K = inf capacity is infinite:
        see :func:`sign_capacity_large_K_point`.  Anything else: ValueError naming activation.
    ansatz : ``"rs"`` (``2 Q'(1)``, exact), ``"1rsb"`` (``q0``, ``y = m/(1 - q1)``), ``"2rsb"`` ...
        ``"6rsb"`` (k steps with free breakpoints, :func:`tcm_kstep_inf`) or ``"frsb"``
        (``y(q)`` piecewise constant on graded grids ``Ks``, extrapolated ``K -> inf``).
        Anything else: ValueError naming ansatz (TypeError for a non-string).
    Ks : full RSB only: at least two grid sizes (integers >= 1), each twice the previous one
        (ValueError naming Ks otherwise)

    Returns
    -------
    SaddlePoint (model ``committee.tcm_capacity_inf``; k-step: ``committee.tcm_kstep_inf``):
    ``thermo["alpha_c"]`` (the headline, with ``error``); RS: ``replicon`` ``1 - Q'(1)``
    (< 0: RS unstable at jamming), ``rs_stable``; 1RSB: ``q0``, ``y`` and the energetic
    ``yhat = y/Q'(1)``, ``hessian_eigenvalues`` (= ``stability``) of R at its minimum (all > 0:
    ``rs_stable`` is True, the stationary point is a minimum of its own functional),
    ``extra["lattice_error"]``; k-step: see :func:`tcm_kstep_inf`; full RSB: ``extra`` holds
    ``q``, ``y`` (x(q) = y(q)(1 - q_max)), the sequence ``alpha_K`` over ``Ks``, the fitted
    ``order`` and the ``error`` estimate (Richardson correction + lattice error).  Cached per
    arguments (full RSB: ~20 s).
    """
    check_choice("activation", activation, SMOOTH_ACTIVATIONS)
    a = _check_inf_ansatz(ansatz, "tcm_capacity_inf_point")
    return _point(activation, a, 0.0, _check_Ks(Ks))


def sign_capacity_large_K_point(K=None, *, ln_K=None, ansatz="frsb", Ks=FRSB_KS):
    r"""Large-K SAT/UNSAT point of the sign tree committee (continuum theory) as a SaddlePoint.

    The K -> inf limit at fixed alpha is trivial (``Q'(1) = inf``: infinite capacity in every
    ansatz).  At large K the capacity grows, and the theory of docs/committee.md ("K = inf:
    full RSB", sign) keeps the leading large-K structure: outer levels Gaussian with kernel
    ``(2/pi) arcsin q``, frozen cost ``Y_-^3`` with scale ``s = (24/pi) sqrt K``.  It gives
    ``alpha_c^RS = sqrt(72/pi) sqrt K`` exactly and the 1RSB of :func:`tcm_1rsb_large_K`
    (Eq. 1RSB.L, ``alpha/sqrt(ln K) -> 8/pi``); full RSB lies below.  ``thermo["scaled_alpha_c"]``
    is ``alpha_c/sqrt K`` (RS) or ``alpha_c/sqrt(ln K)`` (1RSB, k-step, full RSB).

    Domain: give ``K`` (real, >= 3) or ``ln_K`` (in [ln 3, 1000]), not both (ValueError naming the
    argument otherwise); ``ansatz`` and ``Ks`` as in :func:`tcm_capacity_inf_point`.  Asymptotic in
    K: it overestimates finite-K values (as Eq. 1RSB.L does: 6.04 vs 4.84 at K = 25).  Fields as
    in :func:`tcm_capacity_inf_point`.
    """
    a = _check_inf_ansatz(ansatz, "sign_capacity_large_K_point")
    return _point("sign", a, _ln_K(K, ln_K), _check_Ks(Ks))


def sign_capacity_large_K(K=None, *, ln_K=None, ansatz="frsb", Ks=FRSB_KS):
    """``alpha_c`` of :func:`sign_capacity_large_K_point` (a float); same domain."""
    return float(sign_capacity_large_K_point(K, ln_K=ln_K, ansatz=ansatz, Ks=Ks).alpha_c)


def tcm_kstep_inf(activation, k, *, K=None, ln_K=None, check=False):
    r"""k-step RSB jamming point of the K = inf committee with free breakpoints, as a SaddlePoint.

    Minimizes ``R(q, yhat)`` (docs/committee.md, Eq. KI.3) over the breakpoints
    ``q_0 < ... < q_{k-1} < q_k = 1`` and the energetic Parisi parameters ``yhat_1 .. yhat_k``.
    Each k starts from the (k-1)-step minimum with one breakpoint inserted (every gap, three
    positions, three splits of the Parisi parameter; Newton from the three lowest starts, the
    lowest minimum kept); since the (k-1)-step minimum is a boundary of the k-step family, the
    result is checked to lie at or below it.

    Parameters
    ----------
    activation : ``"relu"``, ``"erf"``, ``"quadratic"``, or ``"sign"`` with ``K`` (>= 3) or
        ``ln_K`` (in [ln 3, 1000]) for the large-K sign theory; ValueError naming the argument
        otherwise (K and ln_K are refused for the other activations)
    k : integer number of steps, 1 <= k <= 6 (``K_STEP_MAX``; ValueError naming k otherwise)
    check : (relu, erf, quadratic) also evaluate R at the minimum by the independent quadrature
        of :func:`statmech.rsb.nested_quadrature.jamming_ratio_quadrature` (Gauss--Legendre
        panels, closed-form frozen level, no lattice): ``extra["reference_value"]`` and its
        node-doubling change ``extra["reference_quadrature_error"]``; ``error`` then includes the
        difference.  ~0.1 s (k = 2) to ~1 s (k = 3).

    Returns
    -------
    SaddlePoint (model ``committee.tcm_kstep_inf``, ansatz ``"{k}rsb"``): ``alpha_c``
    (headline; ``scaled_alpha_c`` = alpha_c/sqrt(ln K) for sign), order parameters ``q``
    (weight-overlap breakpoints, ending with 1), ``Q`` (output overlaps Q(q)), ``yhat`` (energetic
    Parisi parameters) and ``y = s yhat`` (entropic, m_i = y_i (1 - q_max)); ``hessian_eigenvalues``
    = ``stability`` of R in the solver's variables (all > 0: a minimum; ``rs_stable`` is True
    then), ``residual`` (max gradient), ``error`` (lattice change on a twice finer lattice, and the
    reference difference with ``check``), ``extra``: ``alpha_previous`` ((k-1)-step value, RS for
    k = 1), ``relative_drop``, ``lattice_error``, ``min_breakpoint_gap``, ``start_values`` (the
    minima reached from the three starts: equal to ~1e-12 for relu, erf and quadratic up to
    k = 4, i.e. the minimum found does not depend on the start).  Cached per arguments.
    """
    check_choice("activation", activation, INF_ACTIVATIONS)
    k = check_int("k", check_real("k", k, function="tcm_kstep_inf"), 1)
    if k > K_STEP_MAX:
        raise ValueError(f"k must be an integer in [1, {K_STEP_MAX}], got {k!r}")
    if activation == "sign":
        lk = _ln_K(K, ln_K)
        if check:
            raise ValueError("check=True applies to the soft-hinge activations relu, erf, quadratic, "
                             "not to activation='sign' (power-hinge channel)")
    elif K is not None or ln_K is not None:
        raise ValueError(f"K and ln_K apply to activation='sign' only, got activation={activation!r}")
    else:
        lk = 0.0
    return _kstep_point(activation, lk, k, bool(check))
