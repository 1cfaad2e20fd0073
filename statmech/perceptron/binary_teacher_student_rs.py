r"""Binary (Ising) perceptron, teacher--student (Gibbs learning), replica symmetric on the
Nishimori line: the first-order transition to perfect generalization (Györgyi 1990).

Equations (G1)-(G2) of ``docs/perceptron.md``, ``b = sqrt(R_hat) z + R_hat``::

    phi = -R_hat (1+R)/2 + E_z log 2cosh(b) + 2 alpha E_t[H(-a t) log H(-a t)]       (G1)
    R = E_z tanh(b) = E_z tanh^2(b),   R_hat = alpha E_t[2 G(a t) IM(-a t)]/(1-R)     (G2)
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np

from ..errors import check_choice, check_range
from ..result import Result
from ..saddle import SaddlePoint, stack
from ._common import _TINY_ALPHA, _alpha, _failure, _open_unit, _plain, _run, _transition, _x
from ._equations import _K
from ._branches_nb import BTS, BTS_COLS
from ._newton_nb import OK
from ._quadrature import _table, _ts_in, _ts_out

__all__ = ["binary_teacher_student", "binary_teacher_student_transition", "BinaryTeacherStudentTransition",
           "binary_teacher_student_free_entropy", "binary_teacher_student_gradient",
           "binary_teacher_student_hessian", "binary_teacher_student_residual"]


# =========================================================================== free entropy (G1)
def binary_teacher_student_free_entropy(x, alpha):
    """RS free entropy (G1) of Gibbs learning with Ising teacher and student at ``x = [R, R_hat]``
    (Nishimori line q = R, q_hat = R_hat; Györgyi 1990)."""
    R, rh = _x(x, 2, ["R", "R_hat"])
    R = _open_unit("R", R)
    rh = float(check_range("R_hat", rh, 0.0))
    a = float(_alpha(alpha))
    return -0.5 * rh * (1 + R) + float(_ts_in(rh)[0]) + a * _ts_out(R)[0]


def binary_teacher_student_gradient(x, alpha):
    """Gradient of (G1) in ``[R, R_hat]``:
    ``[-R_hat/2 + alpha E[2 G IM]/(2(1-R)), ((1-R) + E sech^2(b) - 2 E(1 - tanh b))/2]``."""
    R, rh = _x(x, 2, ["R", "R_hat"])
    R = _open_unit("R", R)
    rh = float(check_range("R_hat", rh, 0.0))
    a = float(_alpha(alpha))
    e = _ts_out(R)
    ei = _ts_in(rh)
    return np.array([-0.5 * rh + 0.5 * a * e[1] / (1 - R), 0.5 * ((1 - R) + ei[2] - 2 * ei[1])])


def _bts_hess(alpha, p, e, ei):
    hqq = 0.5 * alpha * (e[1] / p ** 2 + e[2] / p)
    return np.array([[hqq, -0.5], [-0.5, 0.5 * (ei[4] - 2 * ei[3])]])


def binary_teacher_student_hessian(x, alpha):
    """Hessian (2x2) of (G1) in ``[R, R_hat]``."""
    R, rh = _x(x, 2, ["R", "R_hat"])
    R = _open_unit("R", R)
    rh = float(check_range("R_hat", rh, 0.0))
    return _bts_hess(float(_alpha(alpha)), 1 - R, _ts_out(R), _ts_in(rh))


@dataclass(frozen=True, repr=False)
class BinaryTeacherStudentTransition(Result):
    """First-order transition and spinodal of Ising Gibbs learning (Györgyi 1990).

    alpha_c : poor-generalization entropy crosses 0 (= entropy of the R = 1 state); the headline
    alpha_spinodal : fold where the poor-generalization branch ends
    R_c, R_spinodal : teacher-student overlap of the poor branch there
    R_hat_c, R_hat_spinodal : conjugate order parameters

    Protocol: ``converged`` True (a failed root raises), ``error`` 1e-12 relative (the accuracy of
    the roots and of the channel quadrature), ``ansatz`` "rs", ``rs_stable`` True (the replicon of
    the poor branch is positive at both points), ``stability`` None (two points, not one saddle).
    """
    headline = "alpha_c"
    alpha_c: float
    alpha_spinodal: float
    R_c: float
    R_spinodal: float
    R_hat_c: float
    R_hat_spinodal: float
    converged = True
    residual = 0.0
    iterations = 0
    ansatz = "rs"
    rs_stable = True
    stability = None

    @property
    def error(self):
        return 1e-12 * self.alpha_c


@lru_cache(maxsize=1)
def _bts_transition():
    """(BinaryTeacherStudentTransition, y_sp, y_c) with y = log R_hat (one numba call)."""
    status, y, r, v = _transition(_K.bts_transition)
    if status != OK:
        raise _failure(status, y, r, 0, {})
    ysp, asp, rhsp, Rsp, yc, ac, rhc, Rc = v
    return BinaryTeacherStudentTransition(ac, asp, Rc, Rsp, rhc, rhsp), ysp, yc


@lru_cache(maxsize=1)
def _bts_poor_table():
    """(ys, table): the poor branch tabulated on 512 points of y = log R_hat in [-8, y_sp)
    (the start of every poor-branch solve: Newton from it needs one or two steps)."""
    ys = np.linspace(-8.0, _bts_transition()[1], 513)[:-1]
    tbl = np.empty((ys.size, 2))
    _K.branch_table(BTS, ys, *_table(), tbl)
    return ys, tbl


def binary_teacher_student_transition():
    r"""``alpha_c`` and ``alpha_spinodal`` of Gibbs learning with Ising teacher and student.

    Along the RS (Nishimori) branch parametrized by ``R_hat`` (G2 gives ``R(R_hat)`` and
    ``alpha(R_hat) = R_hat (1-R)/E_t[2 G(a t) IM(-a t)]`` explicitly), the spinodal is the
    maximum of ``alpha(R_hat)`` (root of ``d log alpha/d log R_hat``, derivatives from sympy)
    and the first-order transition is where the entropy (G1) of the poor-generalization
    branch reaches 0, the entropy of the perfect-generalization state R = 1
    (Györgyi 1990: alpha_c ~ 1.245, alpha_spinodal ~ 1.49).  Both roots by Brent to ~1e-15
    in log R_hat; the values are accurate to ~1e-12.  Returns
    :class:`BinaryTeacherStudentTransition` (cached after the first call).
    """
    return _bts_transition()[0]


_MODEL = "perceptron.binary_teacher_student"
_BTS_BRANCHES = ("equilibrium", "poor", "perfect", "unstable")


def _bts_special(alpha, branch, tr):
    """The result at alpha on ``branch`` where no solve is needed (R = 1, alpha = 0, tiny
    alpha on the poor branch), else None; ValueError where the branch does not exist
    (``tr``: the transition)."""
    if branch == "perfect":
        return SaddlePoint(_MODEL, {"alpha": alpha}, {"R": 1.0, "R_hat": math.inf, "q": 1.0, "q_hat": math.inf},
                           {"entropy": 0.0, "generalization_error": 0.0}, True, 0.0, 0,
                           None, None, True, {"branch": "perfect", "one_minus_R": 0.0})
    if alpha > tr.alpha_spinodal:
        raise ValueError(f"alpha must be <= alpha_spinodal = {tr.alpha_spinodal:.12g} on the {branch!r} "
                         f"branch (it does not exist beyond), got {alpha!r}")
    if alpha == 0.0:
        if branch == "poor":
            return SaddlePoint(_MODEL, {"alpha": 0.0}, {"R": 0.0, "R_hat": 0.0, "q": 0.0, "q_hat": 0.0},
                               {"entropy": math.log(2.0), "generalization_error": 0.5}, True, 0.0, 0,
                               np.linalg.eigvalsh([[0.0, -0.5], [-0.5, 0.5]]), 1.0, True,
                               {"branch": "poor", "one_minus_R": 1.0})
        raise ValueError("alpha must be > 0 on the 'unstable' branch, got 0.0")
    if alpha < _TINY_ALPHA and branch == "poor":
        # first order in alpha is exact in double precision: R = R_hat = 2 alpha/pi
        rh = 2.0 * alpha / math.pi
        return SaddlePoint(_MODEL, {"alpha": alpha}, {"R": rh, "R_hat": rh, "q": rh, "q_hat": rh},
                           {"entropy": math.log(2.0) * (1.0 - alpha), "generalization_error": math.acos(rh) / math.pi},
                           True, 0.0, 0, np.linalg.eigvalsh([[0.0, -0.5], [-0.5, 0.5]]), 1.0, True,
                           {"branch": "poor", "one_minus_R": 1.0, "note": "first-order small-alpha expansion"})
    return None


def _bts_row(alpha, branch, row):
    r = dict(zip(BTS_COLS, row.tolist()))
    R, rh = r["R"], r["R_hat"]
    return SaddlePoint(_MODEL, {"alpha": alpha}, {"R": R, "R_hat": rh, "q": R, "q_hat": rh},
                       {"entropy": r["entropy"], "generalization_error": r["generalization_error"]},
                       True, r["residual"], int(r["iterations"]), np.array([r["eig0"], r["eig1"]]),
                       r["replicon"], r["replicon"] > 0, {"branch": branch, "one_minus_R": r["one_r"]})


def _bts_solve(alpha, branch):
    """Results at the points alpha (list of floats) on ``branch`` ("equilibrium" resolved
    here): the special points in Python, all others in one numba call."""
    tr, ysp, _ = _bts_transition()
    branches = ["poor" if a < tr.alpha_c else "perfect" for a in alpha] if branch == "equilibrium" \
        else [branch] * len(alpha)
    res = [_bts_special(a, b, tr) for a, b in zip(alpha, branches)]
    todo = [i for i, r in enumerate(res) if r is None]
    if todo:
        pts = np.array([[alpha[i], branches[i] == "unstable"] for i in todo], dtype=float)
        out = _run(_K.bts_solve, BTS_COLS, {"alpha": pts[:, 0]}, pts, ysp, tr.alpha_spinodal, *_bts_poor_table(),
                   order=("R", "R_hat"))
        for j, i in enumerate(todo):
            res[i] = _bts_row(alpha[i], branches[i], out[j])
    return res


def binary_teacher_student(alpha, branch="equilibrium"):
    r"""Gibbs learning of an Ising teacher by an Ising student (RS, Nishimori line; Györgyi 1990).

    Equations (G1)-(G2) of the module docstring: ``R = E_z tanh(sqrt(R_hat) z + R_hat)``,
    ``R_hat = alpha E_t[2 G(a t) IM(-a t)]/(1-R)``, ``a = sqrt(R/(1-R))``.

    Parameters
    ----------
    alpha : float or array, >= 0
    branch : ``"equilibrium"`` (default): the poor-generalization branch for
        ``alpha < alpha_c`` and the perfect state ``R = 1`` (entropy 0, eps = 0) beyond;
        ``"poor"``: the poor-generalization branch (metastable for alpha_c < alpha <=
        alpha_spinodal; ValueError beyond); ``"perfect"``: ``R = 1``;
        ``"unstable"``: the intermediate (entropy-maximum-violating) branch connecting the
        spinodal to R = 1 (``0 < alpha <= alpha_spinodal``).

    Returns
    -------
    SaddlePoint with ``R`` (= q), ``R_hat`` (= q_hat), ``entropy``, ``generalization_error``
    = arccos(R)/pi, Hessian eigenvalues of (G1) in (R, R_hat), the replicon, and
    ``extra["branch"]``.  The R = 1 state has ``hessian_eigenvalues = replicon = None`` (not
    defined: an isolated configuration) and ``rs_stable = True`` (a single configuration is
    trivially replica symmetric).  Relative accuracy ~1e-12 (R_hat <= 16; ~1e-9 beyond).
    """
    check_choice("branch", branch, _BTS_BRANCHES)
    a = _plain(alpha)
    if a is not None and a[0] >= 0.0:
        return _bts_solve(a, branch)[0]
    a = _alpha(alpha)
    res = _bts_solve(a.ravel().tolist(), branch)
    if a.ndim == 0:
        return res[0]
    if any(r.hessian_eigenvalues is None for r in res):
        # the R = 1 state has no Hessian/replicon: stack the rest, keep None there (not NaN)
        fill = [replace(r, hessian_eigenvalues=np.zeros(2), replicon=0.0) if r.hessian_eigenvalues is None else r
                for r in res]
        out = stack(fill, a.shape, model="perceptron.binary_teacher_student")
        rep = np.empty(len(res), dtype=object)
        rep[:] = [r.replicon for r in res]
        hes = np.empty(len(res), dtype=object)
        hes[:] = [r.hessian_eigenvalues for r in res]
        out = replace(out, replicon=rep.reshape(a.shape), hessian_eigenvalues=hes.reshape(a.shape))
        return replace(out, extra={"branch": np.array([r.extra["branch"] for r in res]).reshape(a.shape)})
    out = stack(res, a.shape, model="perceptron.binary_teacher_student")
    return replace(out, extra={"branch": np.array([r.extra["branch"] for r in res]).reshape(a.shape)})


# the saddle-point equations are grad phi = 0 (alias, for continuation)
binary_teacher_student_residual = binary_teacher_student_gradient

