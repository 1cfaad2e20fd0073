r"""Binary (Ising) perceptron, storage, replica symmetric: saddle point, Krauth--Mézard and
Gardner--Derrida capacities, AT line.

Equations (B1)-(B3) of ``docs/perceptron.md`` (thesis Eqs. 2.38-2.40; Gardner & Derrida 1988;
Krauth & Mézard 1989)::

    phi = -q_hat (1-q)/2 + E_z log 2cosh(sqrt(q_hat) z) + alpha E_t log H(u)       (B1)
    q = E_z tanh^2(sqrt(q_hat) z),   q_hat = alpha E_t IM(u)^2/(1-q)               (B2)
    replicon = 1 - alpha E_t[(IM(u)(IM(u)-u))^2] E_z[sech^4(sqrt(q_hat) z)]/(1-q)^2   (B3)
"""
from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from ..errors import check_choice, check_range
from ..gaussian import inv_mills, log_H
from ..saddle import SaddlePoint, vectorize_over
from ._common import (_TINY_ALPHA, _alpha, _at_one, _bracket_solve, _check_residual, _kappa, _open_unit,
                      _scalar_or_array, _solve_y, _x)
from ._quadrature import _is_in, _st_out
from .spherical_storage_rs import _gardner_inv

__all__ = ["binary_storage", "binary_capacity", "binary_capacity_point", "binary_storage_at_line",
           "binary_storage_free_entropy", "binary_storage_gradient", "binary_storage_hessian",
           "binary_storage_residual"]


# =========================================================================== free entropy (B1)
def binary_storage_free_entropy(x, alpha, kappa=0.0):
    """RS free entropy (B1) of the Ising perceptron at ``x = [q, q_hat]`` (thesis Eq. 2.38)."""
    q, qh = _x(x, 2, ["q", "q_hat"])
    q = _open_unit("q", q)
    qh = float(check_range("q_hat", qh, 0.0))
    a = float(_alpha(alpha))
    e = _st_out(q, float(_kappa(kappa)))
    return -0.5 * qh * (1 - q) + float(_is_in(qh)[0]) + a * e[0]


def binary_storage_gradient(x, alpha, kappa=0.0):
    """Gradient of (B1) in ``[q, q_hat]``: ``[q_hat/2 - alpha E IM^2/(2(1-q)), (E sech^2 - (1-q))/2]``
    (the q_hat component after Gaussian integration by parts, exact)."""
    q, qh = _x(x, 2, ["q", "q_hat"])
    q = _open_unit("q", q)
    qh = float(check_range("q_hat", qh, 0.0))
    a = float(_alpha(alpha))
    e = _st_out(q, float(_kappa(kappa)))
    ei = _is_in(qh)
    return np.array([0.5 * qh - 0.5 * a * e[1] / (1 - q), 0.5 * (ei[1] - (1 - q))])


def _bin_hess(alpha, q, p, e, ei):
    hqq = -0.5 * alpha * (e[1] / p ** 2 + e[2] / p)
    return np.array([[hqq, 0.5], [0.5, 0.5 * ei[2]]])


def binary_storage_hessian(x, alpha, kappa=0.0):
    """Hessian (2x2) of (B1) in ``[q, q_hat]``."""
    q, qh = _x(x, 2, ["q", "q_hat"])
    q = _open_unit("q", q)
    qh = float(check_range("q_hat", qh, 0.0))
    a = float(_alpha(alpha))
    return _bin_hess(a, q, 1 - q, _st_out(q, float(_kappa(kappa))), _is_in(qh))


def _bin_branch(y, kappa):
    """Point of the binary-storage RS branch at q_hat = e^y: (alpha, q, p, phi/alpha parts...)."""
    qh = math.exp(y)
    ei = _is_in(qh)
    q, p = float(ei[6]), float(ei[1])
    e = _st_out(q, kappa, p)
    alpha = qh * p / e[1]
    return alpha, qh, q, p, e, ei


def _bin_dlogalpha(qh, p, e, ei):
    """d log alpha/d log q_hat along the binary-storage branch (dp/dq_hat = ei[2] = -dq/dq_hat)."""
    return 1.0 + qh * ei[2] * (1.0 / p + e[2] / e[1])


def _bin_result(y, kappa, it):
    alpha, qh, q, p, e, ei = _bin_branch(y, kappa)
    ent = -0.5 * qh * p + ei[0] + alpha * e[0]
    grad = np.array([0.5 * qh - 0.5 * alpha * e[1] / p, 0.5 * (ei[1] - p)])
    hm = _bin_hess(alpha, q, p, e, ei)
    rep = 1.0 - alpha * e[3] * ei[3] / p ** 2
    res = float(np.max(np.abs(grad)) / max(1.0, qh))
    return alpha, ent, SaddlePoint("perceptron.binary_storage", {"alpha": alpha, "kappa": kappa},
                                   {"q": q, "q_hat": qh}, {"entropy": ent}, _check_residual(res, it, locals()), res, it,
                                   np.linalg.eigvalsh(hm), rep, bool(rep > 0), {"one_minus_q": p})


def _bs_one(alpha, kappa, guess=None):
    agd = 2.0 / math.pi / float(_gardner_inv(kappa))
    if not alpha < agd:
        raise ValueError(f"alpha must be in [0, binary_capacity(kappa, 'gardner_derrida')) = [0, {agd:.12g}) "
                         f"for kappa={kappa:g}, got {alpha!r}")
    if alpha == 0.0:
        return SaddlePoint("perceptron.binary_storage", {"alpha": 0.0, "kappa": kappa},
                           {"q": 0.0, "q_hat": 0.0}, {"entropy": math.log(2.0)}, True, 0.0, 0,
                           np.linalg.eigvalsh([[0.0, 0.5], [0.5, -0.5]]), 1.0, True, {"one_minus_q": 1.0})
    if alpha < _TINY_ALPHA:
        # first order in alpha is exact in double precision: q = q_hat = alpha IM(kappa)^2
        qh = alpha * float(inv_mills(kappa)) ** 2
        ent = math.log(2.0) + alpha * float(log_H(kappa))
        return SaddlePoint("perceptron.binary_storage", {"alpha": alpha, "kappa": kappa},
                           {"q": qh, "q_hat": qh}, {"entropy": ent}, True, 0.0, 0,
                           np.linalg.eigvalsh([[0.0, 0.5], [0.5, -0.5]]), 1.0, True,
                           {"one_minus_q": 1.0, "note": "first-order small-alpha expansion"})
    la = math.log(alpha)

    def fd(y):
        a_, qh, q, p, e, ei = _bin_branch(y, kappa)
        return math.log(a_) - la, _bin_dlogalpha(qh, p, e, ei)

    y0 = math.log(guess.q_hat) if guess is not None and guess.q_hat > 0 else la + 2 * math.log(float(inv_mills(kappa)))
    y, it = _solve_y(fd, y0)
    return replace(_bin_result(y, kappa, it)[2], params={"alpha": alpha, "kappa": kappa})


def binary_storage(alpha, kappa=0.0):
    r"""RS solution of the Ising-perceptron storage problem (Gardner & Derrida 1988).

    Thesis Eqs. 2.38-2.40: ``q = E_z tanh^2(sqrt(q_hat) z)``,
    ``q_hat = alpha E_t IM(u)^2/(1-q)`` (equivalently ``alpha/(2 pi (1-q)) E e^{-u^2}/H^2``),
    entropy (B1) = (1/N) log(number of solutions), ``log 2`` at alpha = 0.

    Parameters
    ----------
    alpha : float or array, ``0 <= alpha < (2/pi) gardner_capacity(kappa)`` (where the RS q -> 1;
        the RS entropy is negative -- unphysical -- beyond ``binary_capacity(kappa)``)
    kappa : float or array

    Returns
    -------
    SaddlePoint with ``q``, ``q_hat``, ``entropy``, Hessian eigenvalues of (B1) in (q, q_hat),
    ``replicon`` = ``1 - alpha E[(IM(IM-u))^2] E[sech^4]/(1-q)^2`` and ``rs_stable``.
    Relative accuracy ~1e-12.
    """
    a = _alpha(alpha)
    k = _kappa(kappa)
    return vectorize_over(_bs_one, a, k, model="perceptron.binary_storage")


def _bin_zero_entropy(kappa):
    def fd(y):  # entropy along the branch; d/dy = alpha E log H * dlog(alpha)/dy (envelope theorem)
        alpha, qh, q, p, e, ei = _bin_branch(y, kappa)
        return (-0.5 * qh * p + ei[0] + alpha * e[0], alpha * e[0] * _bin_dlogalpha(qh, p, e, ei))

    y, _ = _solve_y(fd, 0.5, fallback=lambda: _bracket_solve(lambda y: -fd(y)[0], 0.0))
    return _bin_branch(y, kappa)[0]


def binary_capacity(kappa=0.0, method="zero_entropy"):
    r"""Storage capacity of the Ising perceptron.

    ``method="zero_entropy"`` (default): the alpha where the RS entropy (B1) vanishes
    (Krauth & Mézard 1989; exact, = the 1RSB result), 0.8330785997... at kappa = 0.
    ``method="gardner_derrida"``: where the RS overlap q -> 1 (Gardner & Derrida 1988; wrong,
    violates the information bound at kappa = 0): from (B2) with ``1-q ~ sqrt(2/(pi q_hat))``
    and ``q_hat (1-q)^2 -> alpha/alpha_c^sph``, ``alpha = (2/pi) gardner_capacity(kappa)``, i.e. 4/pi at 0.

    Returns a float for scalar kappa, an array otherwise.  ``zero_entropy`` is solved as one
    bracketed root in ``log q_hat`` along the explicit RS branch ``alpha(q_hat)``; relative
    accuracy ~1e-12.
    """
    check_choice("method", method, ("zero_entropy", "gardner_derrida"))
    k = _kappa(kappa)
    if method == "gardner_derrida":
        with np.errstate(divide="ignore", over="ignore"):
            out = 2.0 / math.pi / _gardner_inv(k)
        return _scalar_or_array(k, out)
    if k.ndim == 0:
        return float(_bin_zero_entropy(float(k)))
    return np.vectorize(_bin_zero_entropy, otypes=[float])(k)


def binary_capacity_point(kappa=0.0, method="zero_entropy"):
    r""":func:`binary_capacity` at one kappa as a SaddlePoint, with its RS validity flag.

    ``thermo["alpha_c"]`` = ``binary_capacity(kappa, method)``; ``extra["alpha_AT"]`` =
    :func:`binary_storage_at_line` (the computed root of the replicon (B3)).
    ``method="zero_entropy"``: the RS saddle point at alpha_c (``q``, ``q_hat``, ``entropy`` = 0,
    ``replicon`` (B3) and ``rs_stable = replicon > 0``; kappa = 0: alpha_c = 0.83308, replicon
    0.4556, stable).  ``method="gardner_derrida"``: q -> 1 at alpha_c, where (B3) has no finite
    evaluation point; ``replicon`` is None and ``rs_stable = alpha_c <= alpha_AT`` (kappa = 0:
    4/pi > alpha_AT = 1.01465, so False: the Gardner--Derrida value is an RS artefact).
    """
    check_choice("method", method, ("zero_entropy", "gardner_derrida"))
    k = float(check_range("kappa", kappa))
    ac = float(binary_capacity(k, method))
    a_at = float(binary_storage_at_line(k))
    if method == "zero_entropy":
        r = _bs_one(ac, k)
        return replace(r, model="perceptron.binary_capacity", params={"kappa": k, "method": method},
                       thermo={**r.thermo, "alpha_c": ac}, extra={**r.extra, "alpha_AT": a_at})
    return SaddlePoint("perceptron.binary_capacity", {"kappa": k, "method": method}, {"q": 1.0},
                       {"alpha_c": ac}, rs_stable=bool(ac <= a_at), extra={"alpha_AT": a_at})


# =========================================================================== AT line
def binary_storage_at_line(kappa=0.0):
    r"""de Almeida-Thouless line of Ising storage: where the replicon (B3) of
    :func:`binary_storage` vanishes (1.01465... at kappa = 0, Gardner & Derrida 1988:
    ~1.015), or the Gardner-Derrida alpha when RS stays stable up to q -> 1.
    Vectorized over kappa."""
    k = _kappa(kappa)
    f = lambda kk: _at_one(lambda a, k_, g: _bs_one(a, k_, g), kk, 2.0 / math.pi / float(_gardner_inv(kk)))
    return float(f(float(k))) if k.ndim == 0 else np.vectorize(f, otypes=[float])(k)


# the saddle-point equations are grad phi = 0 (alias, for continuation)
binary_storage_residual = binary_storage_gradient

