"""Public entry points of the tree committee machine that dispatch over activation and ansatz.

:func:`tcm_capacity` (sign / relu x rs / 1rsb x finite K / K = inf) and :func:`tcm_storage`
(RS saddle point at finite alpha: sign, any odd K, :mod:`.sign_rs`; relu, K = 2,
:mod:`.relu_k2`).  The theories themselves live one per file (see the package docstring).
"""
from __future__ import annotations

import math

from ..errors import check_choice
from ..result import Estimate, check_real
from ..saddle import SaddlePoint
from ._common import ACTIVATIONS, ANSATZE, K_MAX_RELU_RS, K_MAX_RQMC, K_MAX_RS_FORMULA, _check_K, _check_K_max
from .large_k import _relu_inf_1rsb_point
from .large_k_rsb import _check_inf_ansatz, tcm_capacity_inf_point
from .relu_1rsb import RQMC_1RSB_KS, relu_capacity_1rsb_rqmc
from .relu_k2 import _RELU2_LEVELS, _relu2_storage_one, _relu_storage, relu_capacity_1rsb_point
from .relu_rs import _alpha_rs_relu
from .sign_1rsb import tcm_capacity_1rsb_point
from .sign_rs import _alpha_rs_sign, _at_alpha_replicon, _rs_level_arg, _sign_storage

__all__ = ["tcm_capacity", "tcm_capacity_point", "tcm_storage"]

# the RS replicon near capacity is probed on the RS branch at this q (sign units) / alpha (ReLU, K = 2)
_PROBE_Q = 0.95
_PROBE_ALPHA_RELU2 = 1.32


def tcm_capacity(K, activation="sign", ansatz="rs"):
    r"""Storage capacity alpha_c of the tree committee machine (a float).

    Each case is computed in its theory's file: sign rs in ``sign_rs.py``, sign 1rsb in
    ``sign_1rsb.py``, relu rs in ``relu_rs.py``, relu 1rsb in ``relu_k2.py`` (K = 2) and
    ``relu_1rsb.py`` (K = 4 ... 12), K = inf in ``large_k.py`` and ``large_k_rsb.py``.

    Domain (every other K raises ValueError naming K and the limit; a string or None TypeError):

    ==========  =======  ==========================================================================
    activation  ansatz   K
    ==========  =======  ==========================================================================
    sign        rs       odd 1 <= K <= 10^10 (``K_MAX_RS_FORMULA``), and ``math.inf`` (-> inf)
    sign        1rsb     odd 1 <= K <= 201 (``K_MAX_RQMC``), and ``math.inf`` (-> inf)
    relu        rs       even 2 <= K <= 100 (``K_MAX_RELU_RS``), and ``math.inf``
    relu        1rsb     K = 2, 4, 6, 8, 10, 12 and ``math.inf``
    erf, quad.  any      ``math.inf`` only
    any         2rsb..   ``math.inf`` only (2rsb .. 6rsb, frsb: relu, erf, quadratic; sign -> inf)
    ==========  =======  ==========================================================================

    * sign, rs: thesis Eq. 3.5 (derived and confirmed; quadrature accurate to ~1e-13 relative,
      two tanh--sinh levels must agree to 1e-12 or ConvergenceError); alpha_c^RS = sqrt(72/pi)
      sqrt(K) (1 + O(K^-1/2)) for large K, see :func:`rs_large_K_coefficient`.  Fast (< 1 s).
    * sign, 1rsb: Eq. 1RSB.1 (Barkai--Hansel--Sompolinsky 1992 ansatz at q1 -> 1):
      K <= 5 by the multiset rule (K = 3: +-2e-6, ~10 s; K = 5: +-1e-4, minutes), K >= 7
      by randomized QMC (relative standard error ~5e-4 ... 1e-3, reported by
      ``tcm_capacity_1rsb_point(K).extra["stderr"]``; ~10-30 s at K = 7, ~1 min at K = 25,
      ~10 min at K = 99, ~20 min at K = 151-201 on a loaded shared machine; progress bar).
      Every K is cached on disk after its first computation (``STATMECH_CACHE_DIR``, keyed by K,
      the package version and the source), so a second process answers at once.  For K > 201 use
      the large-K theory (:func:`sign_capacity_large_K`, :func:`tcm_1rsb_large_K`: the capacity grows
      like (8/pi) sqrt(ln K); Monasson--Zecchina's internal-representation calculation gives
      (16/pi) sqrt(ln K), :func:`monasson_zecchina`).
    * relu, rs: Eq. RS.4 with the exact ReLU flip cost; K = 2: 4/3 exactly (derived),
      K >= 4 by randomized quasi-Monte Carlo on the unit sphere (homogeneity of C; relative
      standard error ~1e-4 (K = 4) ... 1e-3 (K = 100), reported by :func:`relu_rs_capacity_error`;
      ~5 s at K = 10, ~80 s at K = 100), ``K = math.inf``: 2 pi/(pi - 1) (effective perceptron,
      Q'(1) = pi/(pi-1)).
    * relu, 1rsb: ``K = 2``: 4/3 = RS (alpha(q0, y) of Eq. 1RSB.1 exceeds 4/3 everywhere and tends to it
      on the RS boundary, see :func:`relu_capacity_1rsb_point`); ``K = 4``: 2.316 +- 0.002 by RQMC
      with an importance-sampled inner average (:func:`relu_capacity_1rsb_rqmc`, ~1 min with a
      progress bar, cached on disk; 2.3167 +- 0.0008 from finer point sets); ``K = 6``: 2.578 +- 0.002
      (same method, ~1.5 min; 2.581 +- 0.003 from finer sets); K = 8, 10, 12 by the same method (see
      :func:`relu_capacity_1rsb_rqmc`); ``K = math.inf`` (effective perceptron with kernel Q,
      Eq. 1RSB.1); K >= 14 is not implemented (not validated).
    * ``K = math.inf`` also takes ``activation="erf"`` (g = erf(x/sqrt 2)) and ``"quadratic"``
      (g = x^2, mean removed), and the ansatze ``"2rsb"`` ... ``"6rsb"`` (k steps with free
      breakpoints, :func:`tcm_kstep_inf`) and ``"frsb"`` (the full-RSB SAT/UNSAT point,
      :func:`tcm_capacity_inf_point`, ~20 s, cached); erf rs: 4 sqrt(3)/pi, quadratic rs: 4;
      sign: ``math.inf`` in every ansatz, see :func:`sign_capacity_large_K` for the growth with K.

    Domain: ``activation`` in sign, relu, erf, quadratic; ``ansatz`` in rs, 1rsb, 2rsb .. 6rsb, frsb
    (ValueError naming the argument otherwise, TypeError for a non-string ansatz); ``K`` as in the
    table: finite K with erf, quadratic or an ansatz beyond 1rsb raises ValueError naming K.
    """
    K, activation, ansatz = _check_args(K, activation, ansatz, "tcm_capacity")
    k = K if (isinstance(K, float) and K == math.inf) else _check_K(K, activation, "tcm_capacity")
    if activation == "sign" and (ansatz == "rs" or k == math.inf):
        if ansatz == "rs" and k != math.inf:
            _check_K_max(k, K_MAX_RS_FORMULA, "tcm_capacity", "the sign RS capacity (Eq. 3.5 quadrature)",
                         "alpha_c^RS = sqrt(72/pi) sqrt(K) (1 + O(K^-1/2)), rs_large_K_coefficient()")
            return _alpha_rs_sign(k)
        return math.inf
    if activation == "relu" and ansatz == "rs":
        if k == math.inf:
            return 2.0 * math.pi / (math.pi - 1.0)
        _check_K_max(k, K_MAX_RELU_RS, "tcm_capacity", "the ReLU RS capacity (RQMC)",
                     "K = math.inf gives 2 pi/(pi - 1)")
        a, se = _alpha_rs_relu(k)
        return Estimate(a, se) if se else float(a)
    r = _capacity_point(k, activation, ansatz, "tcm_capacity")
    err = float(r.error) if r.error is not None else 0.0
    return Estimate(r.alpha_c, err) if err else float(r.alpha_c)


def _check_args(K, activation, ansatz, function):
    check_real("K", K, function=function)
    check_choice("activation", activation, ACTIVATIONS + ("erf", "quadratic"))
    ansatz = _check_inf_ansatz(ansatz, function)
    if activation in ("erf", "quadratic") or ansatz not in ANSATZE:
        _check_inf(K, activation, ansatz)
    return K, activation, ansatz


def _capacity_point(k, activation, ansatz, function):
    """The Result of the capacity (activation, ansatz) at K = k (checked), beyond the closed forms."""
    if k == math.inf:
        if activation == "sign":
            raise ValueError(f"{function}: activation='sign' has infinite capacity at K = math.inf in every ansatz; "
                             "use sign_capacity_large_K_point(K) for the large-K theory")
        if activation == "relu" and ansatz == "1rsb" and function == "tcm_capacity":
            return _relu_inf_1rsb_point()     # the effective perceptron (the same value as the lattice route)
        return tcm_capacity_inf_point(activation, ansatz)
    if activation == "sign":          # ansatz 1rsb (rs is handled by the callers)
        _check_K_max(k, K_MAX_RQMC, function, "the finite-K sign 1RSB capacity (RQMC)",
                     "for larger K use sign_capacity_large_K(K, '1rsb') or advanced.tcm_1rsb_large_K(K)")
        return tcm_capacity_1rsb_point(k)
    if k == 2:
        return relu_capacity_1rsb_point(2)
    if k in RQMC_1RSB_KS:
        return relu_capacity_1rsb_rqmc(k)
    raise ValueError(f"{function}: K must be 2, 4, 6, 8, 10, 12 or math.inf for the ReLU 1RSB capacity (K >= 14 not "
                     f"validated; alpha(q0, y) from advanced.relu_1rsb_alpha_rqmc), got {k!r}")


def _check_inf(K, activation, ansatz):
    if isinstance(K, float) and K == math.inf:
        return
    if ansatz not in ANSATZE:
        raise ValueError(f"ansatz must be one of {', '.join(map(repr, ANSATZE))} at finite K "
                         f"({ansatz!r} needs K = math.inf), got {ansatz!r} with K={K!r}")
    raise ValueError(f"K must be math.inf for activation={activation!r} (finite K is implemented for sign "
                     f"and relu only), got {K!r}")


def tcm_capacity_point(K, activation="sign", ansatz="rs"):
    r"""The capacity of :func:`tcm_capacity` as a :class:`statmech.SaddlePoint` (the Result protocol).

    Same arguments, defaults and domain as :func:`tcm_capacity` (sign units, RS); the headline is
    ``alpha_c`` (``thermo["alpha_c"]``), ``error`` its numerical error estimate (quadrature or the
    standard error of a randomized QMC), ``stability`` the eigenvalues of the Hessian of the
    functional minimised (positive = a minimum) where the method computes one.

    * finite K, ``ansatz="rs"`` (sign or relu): the RS value with its replicon computed on the RS
      branch near capacity and ``rs_stable`` (see ``_finite_capacity_point`` below);
    * finite K, ``ansatz="1rsb"``: sign, any odd K <= 201 (:func:`advanced.tcm_capacity_1rsb_point`,
      Eq. 1RSB.1); relu, K = 2 (:func:`advanced.relu_capacity_1rsb_point`) and K = 4 ... 12
      (:func:`advanced.relu_capacity_1rsb_rqmc`);
    * ``K = math.inf``: activation relu, erf or quadratic, any ansatz (:func:`advanced.tcm_capacity_inf_point`,
      :func:`advanced.tcm_kstep_inf`); sign units at K = inf have infinite capacity (ValueError:
      :func:`sign_capacity_large_K_point` gives the large-K theory).

    ``tcm_capacity_point(3)`` is the sign RS capacity of K = 3 (4.0245...) with its replicon.
    """
    K, activation, ansatz = _check_args(K, activation, ansatz, "tcm_capacity_point")
    k = K if (isinstance(K, float) and K == math.inf) else _check_K(K, activation, "tcm_capacity_point")
    if ansatz == "rs" and k != math.inf:
        return _finite_capacity_point(k, activation)
    return _capacity_point(k, activation, ansatz, "tcm_capacity_point")


def tcm_storage(alpha, K, activation="sign", ansatz="rs", *, level=None, tol=1e-3, method=None, progress=True):
    r"""RS saddle point of the storage problem of a sign tree committee machine.

    Implements Eqs. RS.1--RS.3 of :mod:`statmech.committee` (thesis Eq. 3.3 in RS form; the replicon
    RS.3 is our derivation, reducing to Gardner--Derrida for K = 1).

    Domain: sign units, odd K with 1 <= K <= 201 (``K_MAX_RQMC``) and 0 <= alpha < alpha_c^RS(K)
    (thesis Eq. 3.5); ReLU units, K = 2 and 0 <= alpha < 4/3.  Outside: ValueError naming the
    argument and the limit (a string or None: TypeError).

    Parameters
    ----------
    alpha : float or array, 0 <= alpha < alpha_c^RS(K)
    K : odd integer 1 <= K <= 201 for sign units; K = 2 for relu
    activation : "sign", or "relu" (K = 2 only; Z = bivariate-normal orthant probability, see
        ``relu_k2._relu2_storage_one`` and docs/committee.md, Eqs. R2.4-R2.6)
    ansatz : "rs"
    method : rule for the K-dimensional Gaussian averages (default by K):

        * ``"multiset"`` (default K <= 3; K = 5 fallback): multisets of a 1-d tanh--sinh rule
          with a break at t = 0 (permutation symmetry, n^K/K! points); ``level`` = tanh--sinh
          level (default 4, 3, 1 for K = 1, 3, 5); error estimate = change to level - 1 (K = 5,
          level 1: to a 36-point Gauss--Hermite multiset).
        * ``"gh"`` (default K = 5, 7): multisets of an n-point Gauss--Hermite rule, n = ``level``
          (default 20 for K = 5: 4e-8 in q at alpha = 1; 16 for K = 7: 170544 points, ~1 s per
          average); error estimate = change to n - 4.  With the default (method and level
          None) K = 5 falls back to the tanh--sinh multiset when that estimate exceeds ``tol``.  K = 7, q = 0.35: error 1e-8 (ln Z), 1e-7 (derivative term); q = 0.6: 2e-5.
          The replicon term converges more slowly (K = 7, q = 0.61: 4e-3 at n = 16;
          ``extra["replicon_error"]``).  With the default (method and level None) K = 7
          falls back to RQMC when the GH error estimate exceeds ``tol`` (alpha >~ 2.5).
        * ``"rqmc"`` (default K >= 9): a scrambled Sobol set of 2^level points (default 2^16),
          fixed during the root search so the residual is deterministic; q is then corrected
          by the mean residual over 4 further scramblings, entropy and replicon are averaged
          over the 5 sets, and the error estimate is 2 standard errors of that mean
          (``extra["stderr_q"]``, ``"stderr_entropy"``, ``"stderr_replicon"``).  The replicon
          term costs O(K^3) per point (the rest O(K^2), ``_rs_point_fast``) and uses the first
          2^j <= 2e9/K^3 points of each set (all 2^16 up to K = 29).
          Cost (CPU time per alpha): ~5 s (K = 9), ~45 s (K = 21); wall time on the loaded
          shared machine 4-6x more.

    level : see ``method``
    tol : a ConvergenceError is raised when the quadrature error estimate (of q and of the
        entropy) exceeds ``tol`` -- near alpha_c (q -> 1) the K-dimensional integrand develops
        layers of width sqrt(1-q) and needs a finer rule
    progress : show a progress bar of the K-dimensional averages for K >= 7 (each takes seconds)

    Returns
    -------
    SaddlePoint with order_params q (overlap of two solutions in the same branch), q_hat
    (= q/(1-q)^2), thermo entropy (log Gardner volume per weight), replicon (Eq. RS.3),
    rs_stable, hessian_eigenvalues = [d^2 s/dq^2] (> 0: the RS saddle point is a minimum of
    s(q), n -> 0 inversion), and extra["quadrature_error"] (estimate of the error of q and
    of the entropy, see ``method``).
    """
    if activation == "relu":   # ReLU branch (K = 2), see relu_k2._relu_storage
        check_choice("ansatz", ansatz, ("rs",))
        return _relu_storage(alpha, K, level, tol)
    check_choice("activation", activation, ("sign",))
    check_choice("ansatz", ansatz, ("rs",))
    return _sign_storage(alpha, K, level, tol, method, progress)


def _finite_capacity_point(K, activation):
    r"""Finite-K RS capacity of the tree committee machine as a SaddlePoint, with its validity flag.

    ``thermo["alpha_c"]`` is :func:`tcm_capacity` (same arguments).  The RS value is checked, not
    assumed: ``replicon`` is the replicon (Eq. RS.3) of the RS solution computed on the RS branch
    close to capacity -- at ``q = 0.95`` for sign units (``extra["probe_q"]``,
    ``extra["probe_alpha"]`` = the alpha of that point; e.g. K = 3: alpha = 3.5496, replicon =
    -20.6; K = 1: alpha = 1.836, replicon 0.205), at ``alpha = 1.32`` for ReLU K = 2 -- and
    ``rs_stable = replicon > 0``.  The replicon decreases along the branch towards capacity (for
    K >= 3 it tends to -inf as q -> 1; for K = 1 and ReLU K = 2 to 0, marginal), so a negative
    probe means RS is unstable at capacity and the RS alpha_c is only an upper bound.  Cost:
    ~2 s (K = 3), ~4 s (K = 5) at the default quadrature of :func:`tcm_storage`.
    Where no replicon is implemented (ReLU K >= 4) ``replicon`` and ``rs_stable`` are None (unknown).
    """
    k = _check_K(K, activation)
    params = {"K": k, "activation": activation}
    if activation == "sign":
        alpha_probe, rep = _at_alpha_replicon(k, _PROBE_Q, _rs_level_arg(k, None, None))
        extra = {"probe_q": _PROBE_Q, "probe_alpha": float(alpha_probe)}
        ac = _alpha_rs_sign(k)
    elif k == 2:
        rep = _relu2_storage_one(_PROBE_ALPHA_RELU2, _RELU2_LEVELS, math.inf).replicon
        extra = {"probe_alpha": _PROBE_ALPHA_RELU2}
        ac = 4.0 / 3.0
    else:
        ac = tcm_capacity(k, "relu", "rs")
        return SaddlePoint("committee.tcm_capacity", {**params, "ansatz": "rs"}, {}, {"alpha_c": ac},
                           extra={"note": "no replicon implemented for this K: RS stability unknown"})
    return SaddlePoint("committee.tcm_capacity", {**params, "ansatz": "rs"}, {}, {"alpha_c": ac},
                       replicon=float(rep), rs_stable=bool(rep > 0), extra=extra)
