r"""Spherical perceptron, teacher--student (Gibbs learning), replica symmetric on the Nishimori line.

Equations (T1)-(T3) of ``docs/perceptron.md`` (thesis Eq. 2.25; Engel & Van den Broeck Eq. 2.43)::

    phi = 1/2 log(1-R) + R/2 + 2 alpha E_t[H(-a t) log H(-a t)],   a = sqrt(R/(1-R))   (T1)
    R = alpha E_t[2 G(a t) IM(-a t)]                                                 (T2)
    eps = arccos(R)/pi ~ c/alpha,   c = 1/(sqrt(pi) J) = 0.62465819...                (T3)
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from ..errors import check_range
from ..gaussian import gauss_hermite, inv_mills
from ..saddle import SaddlePoint
from ._common import _TINY_ALPHA, _alpha, _columns, _open_unit, _plain, _run, _x
from ._equations import _K
from ._branches_nb import STS, STS_COLS
from ._quadrature import _table, _ts_out

__all__ = ["spherical_teacher_student", "spherical_teacher_student_asymptotic",
           "spherical_teacher_student_free_entropy", "spherical_teacher_student_gradient",
           "spherical_teacher_student_hessian", "spherical_teacher_student_residual"]


# =========================================================================== free entropy (T1)
def spherical_teacher_student_free_entropy(x, alpha):
    """RS free entropy (T1) of Gibbs learning (spherical teacher and student) at ``x = [R]``."""
    R = _open_unit("R", _x(x, 1, ["R"])[0])
    a = float(_alpha(alpha))
    e = _ts_out(R)
    return 0.5 * math.log1p(-R) + 0.5 * R + a * e[0]


def spherical_teacher_student_gradient(x, alpha):
    """Gradient (T2) of (T1) in ``x = [R]``."""
    R = _open_unit("R", _x(x, 1, ["R"])[0])
    a = float(_alpha(alpha))
    e = _ts_out(R)
    return np.array([0.5 * (a * e[1] - R) / (1 - R)])


def spherical_teacher_student_hessian(x, alpha):
    """Hessian (1x1) of (T1) in ``x = [R]``."""
    R = _open_unit("R", _x(x, 1, ["R"])[0])
    a = float(_alpha(alpha))
    e = _ts_out(R)
    return np.array([[0.5 * (a * e[1] - 1.0) / (1 - R) ** 2 + 0.5 * a * e[2] / (1 - R)]])


_MODEL = "perceptron.spherical_teacher_student"


@lru_cache(maxsize=1)
def _sts_table():
    """(ys, table): the branch tabulated on 512 points of y = logit R in [-12, 25)
    (alpha ~ 1e-5 to 4e5; the start of a solve that is not continued from a grid: Newton
    from it needs one step)."""
    ys = np.linspace(-12.0, 25.0, 513)[:-1]
    tbl = np.empty((ys.size, 2))
    _K.branch_table(STS, ys, *_table(), tbl)
    return ys, tbl


def _sts_run(alpha, R0=-1.0):
    return _run(_K.sts_solve, STS_COLS, {"alpha": alpha}, alpha.reshape(-1, 1), R0, *_sts_table(), order=("R",))


def _sts_one(alpha, guess=None):
    """Scalar solve at alpha, started from ``guess`` (a SaddlePoint) if given."""
    r = dict(zip(STS_COLS, _sts_run(np.array([alpha]), guess.R if guess is not None else -1.0)[0].tolist()))
    params = {"alpha": alpha}
    if alpha == 0.0:
        return SaddlePoint(_MODEL, params, {"R": 0.0, "q": 0.0}, {"entropy": 0.0, "generalization_error": 0.5},
                           True, 0.0, 0, np.array([-0.5]), 1.0, True)
    extra = {"one_minus_R": r["one_r"]}
    if alpha < _TINY_ALPHA:
        extra["note"] = "first-order small-alpha expansion"
    return SaddlePoint(_MODEL, params, {"R": r["R"], "q": r["R"]},
                       {"entropy": r["entropy"], "generalization_error": r["generalization_error"]}, True,
                       r["residual"], int(r["iterations"]), np.array([r["hessian"]]), r["replicon"],
                       r["replicon"] > 0, extra)


def spherical_teacher_student(alpha):
    r"""Gibbs learning of a spherical teacher by a spherical student (version space, RS).

    Solves ``R = alpha E_t[2 G(a t) IM(-a t)]``, ``a = sqrt(R/(1-R))``, equivalent to
    thesis Eq. 2.25 (``R/sqrt(1-R) = (alpha/pi) int Dt e^{-R t^2/2}/H(sqrt(R) t)``), on the
    Nishimori line ``q = R``.  Returns ``R``, ``generalization_error = arccos(R)/pi``
    (computed as ``arcsin(sqrt((1-R)(1+R)))/pi`` near R = 1, with 1-R kept exactly),
    ``entropy`` (T1, log fraction of the sphere in the version space).
    Published checks: ``R(1) = 0.486263637016``, ``eps(5) = 0.118006033298``.
    ``alpha`` >= 0, float or array.  Relative accuracy ~1e-12.
    """
    a = _plain(alpha)
    if a is not None and a[0] >= 0.0:
        return _sts_one(a[0])
    a = _alpha(alpha)
    if a.ndim == 0:
        return _sts_one(float(a))
    shape = a.shape
    c = _columns(STS_COLS, _sts_run(np.ascontiguousarray(a, dtype=float).ravel()), shape)
    return SaddlePoint(_MODEL, {"alpha": a.astype(float)}, {"R": c["R"], "q": c["R"]},
                       {"entropy": c["entropy"], "generalization_error": c["generalization_error"]},
                       np.ones(shape, dtype=bool), c["residual"], c["iterations"].astype(np.int64),
                       c["hessian"][..., None], c["replicon"], c["replicon"] > 0, {})


@lru_cache(maxsize=1)
def _ts_asym_constant():
    """c = 1/(sqrt(pi) J), J = int ds G(s)^2/H(-s) = E_s[IM(-s)] (smooth: Gauss-Hermite)."""
    z, w = gauss_hermite(200)
    J = float(np.sum(w * inv_mills(-z)))
    return 1.0 / (math.sqrt(math.pi) * J)


def spherical_teacher_student_asymptotic(alpha):
    r"""Large-alpha form of :func:`spherical_teacher_student`: ``eps ~ c/alpha``.

    From (T2) with ``1-R -> 0`` (substitute ``s = a t``): ``R ~ 2 alpha G(0) J / a`` with
    ``J = int ds G(s)^2/H(-s) = E_s[IM(-s)]``, so ``sqrt(1-R) ~ sqrt(pi/2)/(alpha J)`` and
    ``eps = arccos(R)/pi ~ sqrt(2(1-R))/pi = c/alpha`` with ``c = 1/(sqrt(pi) J) = 0.62465819...``
    (Engel & Van den Broeck Eq. 2.43).  Returns a dict with ``generalization_error``
    (``c/alpha``), ``one_minus_R`` (``(pi c/alpha)^2/2``) and ``c``.  alpha > 0; the form is
    meant for alpha >> 1 (``one_minus_R`` is inf for alpha < ~1e-154, where it overflows).
    """
    a = check_range("alpha", alpha, 0.0, lo_open=True)
    c = _ts_asym_constant()
    with np.errstate(over="ignore"):
        eps = c / a
        out = {"generalization_error": eps, "one_minus_R": 0.5 * (math.pi * eps) ** 2, "c": c}
    return {k: (float(v) if np.ndim(v) == 0 else v) for k, v in out.items()}


# the saddle-point equations are grad phi = 0 (alias, for continuation)
spherical_teacher_student_residual = spherical_teacher_student_gradient

