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
from ..saddle import SaddlePoint, vectorize_over
from ._common import _TINY_ALPHA, _alpha, _check_residual, _expit, _logit, _open_unit, _solve_y, _x
from ._quadrature import _ts_out

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


def _sts_one(alpha, guess=None):
    params = {"alpha": alpha}
    if alpha == 0.0:
        return SaddlePoint("perceptron.spherical_teacher_student", params, {"R": 0.0, "q": 0.0},
                           {"entropy": 0.0, "generalization_error": 0.5}, True, 0.0, 0,
                           np.array([-0.5]), 1.0, True)
    if alpha < _TINY_ALPHA:
        # first order in alpha is exact in double precision: R = 2 alpha/pi (T2 at R -> 0),
        # entropy = 2 alpha E[H(0) log H(0)] = -alpha log 2 (T1), eps = 1/2 - R/pi
        R = 2.0 * alpha / math.pi
        return SaddlePoint("perceptron.spherical_teacher_student", params, {"R": R, "q": R},
                           {"entropy": -alpha * math.log(2.0), "generalization_error": 0.5 - R / math.pi},
                           True, 0.0, 0, np.array([-0.5]), 1.0, True,
                           {"one_minus_R": 1.0, "note": "first-order small-alpha expansion"})

    la = math.log(alpha)

    def fd(y):  # log alpha(R) - log alpha, alpha(R) = R / E[2 G IM], R = expit(y)
        R, p = _expit(y), _expit(-y)
        e = _ts_out(R, p)
        return math.log(R) - math.log(e[1]) - la, p - e[2] / e[1] * R * p

    if guess is not None and 0 < guess.R < 1:
        y0 = _logit(guess.R)
    else:  # R ~ 2 alpha/pi at small alpha, 1 - R ~ (pi c/alpha)^2/2 at large alpha
        y0 = _logit(2 * alpha / math.pi) if alpha < 0.5 else 2 * math.log(alpha) - math.log(0.5 * (math.pi * 0.6246582) ** 2) if alpha > 20 else _logit(min(0.95, 2 * alpha / math.pi / (1 + 2 * alpha / math.pi)))
    y, it = _solve_y(fd, y0)
    R = _expit(y)
    one_r = _expit(-y)
    e = _ts_out(R, one_r)
    ent = 0.5 * math.log(one_r) + 0.5 * R + alpha * e[0]
    hess = 0.5 * (alpha * e[1] - 1.0) / one_r ** 2 + 0.5 * alpha * e[2] / one_r
    res = abs(R - alpha * e[1])  # (T2); R ~ 1 sets the scale
    rep = 1.0 - alpha * e[3]
    eg = math.acos(R) / math.pi if R < 0.5 else math.asin(math.sqrt(one_r * (1 + R))) / math.pi
    return SaddlePoint("perceptron.spherical_teacher_student", params, {"R": R, "q": R},
                       {"entropy": ent, "generalization_error": eg}, _check_residual(res, it, locals()), res, it,
                       np.array([hess]), rep, bool(rep > 0),
                       {"one_minus_R": one_r})


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
    a = _alpha(alpha)
    return vectorize_over(_sts_one, a, model="perceptron.spherical_teacher_student")


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

