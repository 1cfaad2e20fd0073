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
from ..saddle import SaddlePoint
from ._common import (_TINY_ALPHA, _alpha, _at_one, _at_point, _columns, _kappa, _open_unit, _run, _scalar_or_array,
                      _storage_dispatch, _x)
from ._equations import _K
from ._branches_nb import BS_COLS, TAIL_COLS
from ._multistable import KAPPA_CHECK, global_rows
from ._quadrature import _is_in, _st_out
from .spherical_storage_rs import _gardner_inv, _inv_capacity

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


_MODEL = "perceptron.binary_storage"


def _gd_error(alpha, kappa, agd):
    return ValueError(f"alpha must be in [0, binary_capacity(kappa, 'gardner_derrida')) = [0, {agd:.12g}) "
                      f"for kappa={kappa:g}, got {alpha!r}")


def _bs_run(pts, qh0=-1.0):
    """One numba call over the points (rows alpha, kappa), the first started from qh0 if > 0,
    each next one from the last."""
    return _run(_K.bs_solve, BS_COLS, {"alpha": pts[:, 0], "kappa": pts[:, 1]}, pts, qh0, order=("q", "q_hat"))


def _bs_phi(q, s, alpha, kappa):
    """(B1) at a stationary point (for the choice among several, :mod:`._multistable`)."""
    return binary_storage_free_entropy([q, math.exp(s)], alpha, kappa)


def _bs_one(alpha, kappa, guess=None):
    """Scalar solve at (alpha, kappa), started from ``guess`` (a SaddlePoint) if given."""
    ginv = _inv_capacity(kappa)
    agd = 2.0 / math.pi / ginv if ginv > 0 else math.inf
    if not alpha < agd:
        raise _gd_error(alpha, kappa, agd)
    pts = np.array([[alpha, kappa]])
    rows = _bs_run(pts, guess.q_hat if guess is not None else -1.0)
    others = global_rows("binary", rows, pts, BS_COLS, _bs_run, _bs_phi) if kappa < KAPPA_CHECK else {}
    r = dict(zip(BS_COLS, rows[0].tolist()))
    extra = {"one_minus_q": r["one_q"]}
    if others:
        extra["other_minimum"] = {"q": others[0][0], "entropy": others[0][1]}
    if 0.0 < alpha < _TINY_ALPHA:
        extra["note"] = "first-order small-alpha expansion"
    return SaddlePoint(_MODEL, {"alpha": alpha, "kappa": kappa}, {"q": r["q"], "q_hat": r["q_hat"]},
                       {"entropy": r["entropy"]}, True, r["residual"], int(r["iterations"]),
                       np.array([r["eig0"], r["eig1"]]), r["replicon"], r["replicon"] > 0, extra)


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
    r, ak = _storage_dispatch(alpha, kappa, _bs_one)
    if ak is None:
        return r
    a, k = (np.ascontiguousarray(x, dtype=float) for x in np.broadcast_arrays(*ak))
    shape = a.shape
    ginv = _gardner_inv(k)
    with np.errstate(divide="ignore"):
        agd = np.where(ginv > 0, 2.0 / math.pi / ginv, math.inf)
    bad = np.flatnonzero(~(a < agd))
    if bad.size:  # the first bad point in order raises, as point-by-point solves would
        i = np.unravel_index(bad[0], shape)
        raise _gd_error(float(a[i]), float(k[i]), float(agd[i]))
    pts = np.stack([a.ravel(), k.ravel()], axis=1)
    rows = _bs_run(pts)
    others = global_rows("binary", rows, pts, BS_COLS, _bs_run, _bs_phi)
    c = _columns(BS_COLS, rows, shape)
    extra = {"other_minimum": {np.unravel_index(i, shape): v for i, v in others.items()}} if others else {}
    return SaddlePoint(_MODEL, {"alpha": a, "kappa": k}, {"q": c["q"], "q_hat": c["q_hat"]},
                       {"entropy": c["entropy"]}, np.ones(shape, dtype=bool), c["residual"],
                       c["iterations"].astype(np.int64), np.stack([c["eig0"], c["eig1"]], axis=-1),
                       c["replicon"], c["replicon"] > 0, extra)


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
    k = _kappa(kappa, -math.inf) if method == "gardner_derrida" else _kappa(kappa)
    if method == "gardner_derrida":
        with np.errstate(divide="ignore", over="ignore"):
            out = 2.0 / math.pi / _gardner_inv(k)
        return _scalar_or_array(k, out)
    kk = np.ascontiguousarray(k, dtype=float).ravel()
    out = _run(_K.bs_capacity, ("alpha",) + TAIL_COLS, {"kappa": kk}, kk.reshape(-1, 1), residual=False)
    return float(out[0, 0]) if k.ndim == 0 else out[:, 0].reshape(k.shape)


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


def binary_storage_at_line_point(kappa=0.0):
    """:func:`binary_storage_at_line` at one kappa as a result (``alpha_AT``, ``q``, replicon,
    ``extra["kind"]``, the error of the root)."""
    k = float(_kappa(kappa))
    return _at_point("perceptron.binary_at_line", lambda a, k_, g: _bs_one(a, k_, g), k,
                     2.0 / math.pi / float(_gardner_inv(k)))


# the saddle-point equations are grad phi = 0 (alias, for continuation)
binary_storage_residual = binary_storage_gradient

