r"""Spherical perceptron, storage, replica symmetric: Gardner capacity, saddle point, AT line.

Equations (S1)-(S4) of ``docs/perceptron.md`` (Gardner 1988; Gardner & Derrida 1988;
thesis Eqs. 2.29 (corrected prefactor) and 2.30)::

    phi = 1/2 log(1-q) + q/(2(1-q)) + alpha E_t log H(u),   u = (kappa - sqrt(q) t)/sqrt(1-q)   (S1)
    q/(1-q) = alpha E_t IM(u)^2                                                             (S2)
    1/alpha_c(kappa) = int_{-inf}^kappa Dt (kappa - t)^2                                   (S3)
    replicon = 1 - alpha E_t[(IM(u)(IM(u)-u))^2]                                           (S4)
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import check_range
from ..saddle import SaddlePoint
from ._common import (_TINY_ALPHA, _alpha, _at_one, _at_point, _columns, _kappa, _open_unit, _run, _scalar_or_array,
                      _storage_dispatch, _x)
from ._equations import _K
from ._branches_nb import SS_COLS
from ._multistable import KAPPA_CHECK, global_rows
from ._quadrature import _st_out

__all__ = ["gardner_capacity", "spherical_storage", "spherical_storage_at_line",
           "spherical_storage_free_entropy", "spherical_storage_gradient", "spherical_storage_hessian",
           "spherical_storage_residual"]


# =========================================================================== Gardner capacity
def _gardner_inv(kappa):
    """1/alpha_c(kappa) = int_{-inf}^kappa Dt (kappa-t)^2, accurate for every kappa.

    For kappa >= -3 the closed form (1+k^2) H(-k) + k G(k) (cancellation <= 40x);
    for kappa < -3 it is G(x) F_2(x), x = -kappa, with F_n(x) = int_0^inf s^n e^{-x s - s^2/2} ds
    from Miller's backward recurrence F_{n-1} = (F_{n+1} + x F_n)/n normalized by
    F_0 = H(x)/G(x) (no cancellation).
    """
    k = np.asarray(kappa, dtype=float)
    out = np.asarray(_K.gardner_inv_v(np.maximum(k, -3.0)), dtype=float).copy()
    neg = k < -3.0
    if np.any(neg):
        x = -k[neg] if k.ndim else -k
        from scipy import special
        a = np.zeros_like(x)
        b = np.full_like(x, 1e-200)
        f2 = None
        for n in range(80, 0, -1):
            a, b = b, (a + x * b) / n
            if n == 3:
                f2 = b.copy()
        mills = math.sqrt(math.pi / 2) * special.erfcx(x / math.sqrt(2))
        with np.errstate(under="ignore"):
            val = (f2 / b) * mills * (np.exp(-0.5 * x * x) / math.sqrt(2 * math.pi))
        if k.ndim:
            out[neg] = val
        else:
            out = np.asarray(val)
    return out


def gardner_capacity(kappa=0.0):
    r"""Storage capacity of the spherical perceptron, ``alpha_c(kappa)`` (vectorized).

    ``1/alpha_c = int_{-inf}^kappa Dt (kappa - t)^2 = (1+kappa^2) H(-kappa) + kappa G(kappa)``
    (thesis Eq. 2.30, Gardner 1988).  ``alpha_c(0) = 2``, ``alpha_c(1) = 0.519572229605...``.
    For ``kappa < 0`` this is the RS value, which is AT-unstable at capacity (see
    :func:`spherical_storage`).  Returns ``inf`` where alpha_c exceeds the float range
    (kappa < -37.4, where alpha_c > 1.8e308: the float overflow, not an error).  Any finite kappa;
    relative accuracy ~1e-15 (tested against mpmath).
    """
    k = check_range("kappa", kappa)
    with np.errstate(divide="ignore", over="ignore"):
        out = 1.0 / _gardner_inv(k)
    return _scalar_or_array(k, out)


# =========================================================================== spherical storage
def spherical_storage_free_entropy(x, alpha, kappa=0.0):
    """RS free entropy (S1) of the spherical storage problem at ``x = [q]`` (float)."""
    q = _open_unit("q", _x(x, 1, ["q"])[0])
    a = float(_alpha(alpha))
    k = float(_kappa(kappa))
    e = _st_out(q, k)
    return 0.5 * math.log1p(-q) + 0.5 * q / (1 - q) + a * e[0]


def spherical_storage_gradient(x, alpha, kappa=0.0):
    """Gradient (S2) of (S1) in ``x = [q]`` (array of length 1); zero at the saddle point."""
    q = _open_unit("q", _x(x, 1, ["q"])[0])
    a = float(_alpha(alpha))
    e = _st_out(q, float(_kappa(kappa)))
    return np.array([0.5 * q / (1 - q) ** 2 - 0.5 * a * e[1] / (1 - q)])


def spherical_storage_hessian(x, alpha, kappa=0.0):
    """Hessian (1x1) of (S1) in ``x = [q]`` (d/dq of S2, integrand derivative by sympy)."""
    q = _open_unit("q", _x(x, 1, ["q"])[0])
    a = float(_alpha(alpha))
    e = _st_out(q, float(_kappa(kappa)))
    return np.array([[0.5 * (1 + q) / (1 - q) ** 3 - 0.5 * a * (e[1] / (1 - q) ** 2 + e[2] / (1 - q))]])


_MODEL = "perceptron.spherical_storage"


def _inv_capacity(kappa):
    """1/alpha_c(kappa) for a float kappa (the numba scalar of (S3) where it is accurate)."""
    return _K.gardner_inv(kappa) if kappa >= -3.0 else float(_gardner_inv(kappa))


def _capacity_error(alpha, kappa, ginv):
    ac = 1.0 / ginv if ginv > 0 else math.inf
    return ValueError(f"alpha must be in [0, gardner_capacity(kappa)) = [0, {ac:.12g}) for kappa={kappa:g}, got {alpha!r}")


def _ss_run(pts, q0=-1.0):
    return _run(_K.ss_solve, SS_COLS, {"alpha": pts[:, 0], "kappa": pts[:, 1]}, pts, q0, order=("q",))


def _ss_phi(q, s, alpha, kappa):
    """(S1) at a stationary point (for the choice among several, :mod:`._multistable`)."""
    return spherical_storage_free_entropy([q], alpha, kappa)


def _ss_one(alpha, kappa, guess=None):
    """Scalar solve at (alpha, kappa), started from ``guess`` (a SaddlePoint) if given."""
    ginv = _inv_capacity(kappa)
    ac = 1.0 / ginv if ginv > 0 else math.inf
    if not alpha < ac:
        raise _capacity_error(alpha, kappa, ginv)
    pts = np.array([[alpha, kappa, ac]])
    rows = _ss_run(pts, guess.q if guess is not None else -1.0)
    others = global_rows("spherical", rows, pts, SS_COLS, _ss_run, _ss_phi) if kappa < KAPPA_CHECK else {}
    r = dict(zip(SS_COLS, rows[0].tolist()))
    params = {"alpha": alpha, "kappa": kappa}
    if alpha == 0.0:
        return SaddlePoint(_MODEL, params, {"q": 0.0}, {"entropy": 0.0}, True, 0.0, 0, np.array([0.5]), 1.0, True)
    extra = {"gradient": r["gradient"]}
    if others:
        extra["other_minimum"] = {"q": others[0][0], "entropy": others[0][1]}
    if alpha < _TINY_ALPHA:
        extra["note"] = "first-order small-alpha expansion"
    return SaddlePoint(_MODEL, params, {"q": r["q"]}, {"entropy": r["entropy"]}, True, r["residual"],
                       int(r["iterations"]), np.array([r["hessian"]]), r["replicon"], r["replicon"] > 0, extra)


def _ss_many(alpha, kappa):
    """One numba call over the broadcast arrays (C order), each point started from the last."""
    a, k = (np.ascontiguousarray(x, dtype=float) for x in np.broadcast_arrays(alpha, kappa))
    shape = a.shape
    ginv = _gardner_inv(k)
    with np.errstate(divide="ignore"):
        ac = np.where(ginv > 0, 1.0 / ginv, math.inf)
    bad = np.flatnonzero(~(a < ac))
    if bad.size:  # the first bad point in order raises, as point-by-point solves would
        i = np.unravel_index(bad[0], shape)
        raise _capacity_error(float(a[i]), float(k[i]), float(ginv[i]))
    pts = np.stack([a.ravel(), k.ravel(), ac.ravel()], axis=1)
    rows = _ss_run(pts)
    others = global_rows("spherical", rows, pts, SS_COLS, _ss_run, _ss_phi)
    c = _columns(SS_COLS, rows, shape)
    extra = {"other_minimum": {np.unravel_index(i, shape): v for i, v in others.items()}} if others else {}
    return SaddlePoint(_MODEL, {"alpha": a, "kappa": k}, {"q": c["q"]}, {"entropy": c["entropy"]},
                       np.ones(shape, dtype=bool), c["residual"], c["iterations"].astype(np.int64),
                       c["hessian"][..., None], c["replicon"], c["replicon"] > 0, extra)


def spherical_storage(alpha, kappa=0.0):
    r"""RS solution of the spherical storage problem (Gardner 1988).

    Solves ``q/(1-q) = alpha E_t IM(u)^2`` (thesis Eq. 2.29 corrected: prefactor
    ``alpha/(2 pi)``, not ``alpha/pi``, in the thesis's ``e^{-u^2}/H^2`` form) and returns
    the typical entropy (S1) = log of the fraction of the sphere that stores all patterns.

    Parameters
    ----------
    alpha : float or array, ``0 <= alpha < gardner_capacity(kappa)``
    kappa : float or array (broadcast with alpha), any finite stability

    Returns
    -------
    SaddlePoint with ``q``, ``entropy``, ``replicon`` (``1 - alpha E[(IM(IM-u))^2]``),
    ``rs_stable`` (False beyond the AT line, which exists for kappa < 0) and
    ``hessian_eigenvalues`` (d^2 phi/dq^2).  Accuracy ~1e-12 relative in q and entropy
    away from alpha_c (the entropy loses digits like 1/(1-q) as alpha -> alpha_c).
    """
    r, ak = _storage_dispatch(alpha, kappa, _ss_one)
    return r if ak is None else _ss_many(*ak)


# =========================================================================== AT line
def spherical_storage_at_line(kappa):
    r"""de Almeida-Thouless line of spherical storage: the alpha where the replicon (S4)
    ``1 - alpha E_t[(IM(u)(IM(u)-u))^2]`` of :func:`spherical_storage` vanishes.

    For kappa < 0 it lies below the Gardner capacity (RS unstable between alpha_AT and
    alpha_c); for kappa >= 0 the RS solution is stable up to capacity and
    ``gardner_capacity(kappa)`` is returned.  Vectorized over kappa (float or array).
    E.g. kappa = -0.5: 3.95070131...  Brent on the replicon (~1e-12).  Below the cusp
    (kappa < -2.86) the RS minimum jumps at a first-order point from a stable small-q minimum to
    an unstable large-q one; where that comes first, the AT line is the jump (RS loses stability
    discontinuously there; :func:`spherical_storage_at_line_point` says which).
    Domain ``kappa >= -5`` (the storage quadrature, :data:`KAPPA_MIN`).
    """
    k = _kappa(kappa)
    f = lambda kk: _at_one(lambda a, k_, g: _ss_one(a, k_, g), kk, 1.0 / float(_gardner_inv(kk)))
    return float(f(float(k))) if k.ndim == 0 else np.vectorize(f, otypes=[float])(k)


def spherical_storage_at_line_point(kappa):
    """:func:`spherical_storage_at_line` at one kappa as a result: ``alpha_AT``, ``q`` there, the
    replicon, ``extra["kind"]`` (``"replicon zero"``, ``"first-order jump"`` or ``"capacity"``)
    and the error of the root."""
    k = float(_kappa(kappa))
    return _at_point("perceptron.spherical_at_line", lambda a, k_, g: _ss_one(a, k_, g), k,
                     1.0 / float(_gardner_inv(k)))


# the saddle-point equations are grad phi = 0 (alias, for continuation)
spherical_storage_residual = spherical_storage_gradient

