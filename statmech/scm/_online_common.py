"""Shared pieces of the online-learning solvers: argument checks, conventions, activations, states."""
from __future__ import annotations

import math
import numbers

import numpy as np

from ..errors import check_choice, check_int, check_range
from ..result import check_real
from ._online_integrals import ERF, GENERIC, LINEAR, RELU
from ._online_odes import n_state, plan_full, plan_size_full, plan_sym, SYM_PLAN

#: the two output conventions
CONVENTIONS = ("saad-solla", "normalized")
_CODES = {"erf": ERF, "relu": RELU, "linear": LINEAR}


def weights(convention, K, M):
    """(a, b): output weights of student and teacher units (sigma = a sum g(x_i), tau = b sum g(y_n))."""
    if convention == "saad-solla":
        return 1.0, 1.0
    return 1.0 / math.sqrt(K), 1.0 / math.sqrt(M)


class Act:
    """A resolved activation: ``code`` of the numba kernels (0 erf, 1 ReLU, 2 linear, 3 any g),
    ``name``, and for code 3 the generic evaluator ``generic``."""

    def __init__(self, code, name, generic=None):
        self.code = code
        self.name = name
        self.generic = generic


def resolve_activation(activation, function):
    """'erf', 'relu', 'linear', an :class:`statmech.scm.Activation`, or a callable g(x)
    (``g.derivative`` used when present; ``statmech.activations.ESP(inf)`` is ReLU)."""
    from ._activation import Activation
    from ._online_generic import Activation as Generic
    if isinstance(activation, str):
        check_choice("activation", activation, tuple(_CODES))
        return Act(_CODES[activation], activation)
    if isinstance(activation, Activation):
        if activation.code < 3:
            return Act(activation.code, activation.name)
        activation = activation.func
    if not callable(activation):
        raise ValueError(f"{function}: activation must be one of 'erf', 'relu', 'linear' or a callable g(x), "
                         f"got {activation!r}")
    beta = getattr(activation, "beta", None)
    if isinstance(beta, numbers.Real) and math.isinf(beta) and hasattr(activation, "pair_moment"):
        return Act(RELU, "relu")
    name = getattr(activation, "name", None) or getattr(activation, "__name__", type(activation).__name__)
    return Act(GENERIC, str(name), Generic(activation, str(name)))


def check_sizes(K, M, function):
    check_real("K", K, function=function)
    check_real("M", M, function=function)
    K = check_int("K", K, 1)
    M = check_int("M", M, 1)
    return K, M


def check_lr(lr, function, name="lr"):
    check_real(name, lr, function=function)
    return float(check_range(name, lr, 0.0, lo_open=True))


def check_noise(noise, function):
    check_real("noise", noise, function=function)
    return float(check_range("noise", noise, 0.0))


def check_convention(convention, function):
    if not isinstance(convention, str) or convention not in CONVENTIONS:
        raise ValueError(f"{function}: convention must be one of {', '.join(map(repr, CONVENTIONS))}, "
                         f"got {convention!r}")
    return convention


def check_matrix(name, value, shape, function):
    check_real(name, value, function=function)
    try:
        arr = np.array(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{function}: {name} must be a real {shape[0]}x{shape[1]} matrix, got {value!r}") from None
    if arr.ndim == 0 and shape == (1, 1):
        arr = arr.reshape(1, 1)
    if arr.shape != shape:
        raise ValueError(f"{function}: {name} must have shape {shape} (K = students, M = teachers), got {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{function}: {name} must be finite, got {value!r}")
    return arr


def _is_posdef(A):
    try:
        np.linalg.cholesky(A)
    except np.linalg.LinAlgError:
        return False
    return True


def check_teacher(T, M, function):
    if T is None:
        return np.eye(M)
    T = check_matrix("T", T, (M, M), function)
    if not np.allclose(T, T.T, rtol=0.0, atol=1e-14 * max(1.0, np.abs(T).max())):
        raise ValueError(f"{function}: T must be symmetric, got {T!r}")
    T = 0.5 * (T + T.T)
    if not _is_posdef(T):
        raise ValueError(f"{function}: T must be positive definite (teacher overlaps B_n.B_m/N), got {T!r}")
    return T


def check_state(Q0, R0, T, K, M, function):
    """Validated (Q0, R0): shapes, Q0 symmetric positive definite, [[Q0, R0], [R0^T, T]] a Gram matrix."""
    Q0 = check_matrix("Q0", Q0, (K, K), function)
    R0 = check_matrix("R0", R0, (K, M), function)
    if not np.allclose(Q0, Q0.T, rtol=0.0, atol=1e-14 * max(1.0, np.abs(Q0).max())):
        raise ValueError(f"{function}: Q0 must be symmetric, got {Q0!r}")
    Q0 = 0.5 * (Q0 + Q0.T)
    if not _is_posdef(Q0):
        raise ValueError(f"{function}: Q0 must be positive definite (student overlaps w_i.w_k/N of "
                         f"linearly independent students), got {Q0!r}")
    C = np.block([[Q0, R0], [R0.T, T]])
    lam = np.linalg.eigvalsh(C)
    if lam[0] < -1e-12 * max(1.0, lam[-1]):
        raise ValueError(f"{function}: R0 must be compatible with Q0 and T: [[Q0, R0], [R0^T, T]] is a Gram "
                         f"matrix and cannot have the negative eigenvalue {lam[0]:.3g}")
    return Q0, R0


# ------------------------------------------------------------------ state vectors
def pack(Q, R):
    K = Q.shape[0]
    return np.concatenate([Q[np.triu_indices(K)], R.ravel()])


def unpack(y, K, M):
    nq = K * (K + 1) // 2
    Q = np.zeros((K, K))
    Q[np.triu_indices(K)] = y[:nq]
    Q = Q + np.triu(Q, 1).T
    return Q, y[nq:].reshape(K, M).copy()


def expand(mode, x, K, M):
    """(Q, R) matrices of a symmetric state: mode 1 (Q, C, R), mode 2 (Q, C, R, S)."""
    Q = np.full((K, K), x[1])
    np.fill_diagonal(Q, x[0])
    R = np.full((K, M), x[2] if mode == 1 else x[3])
    if mode == 2:
        np.fill_diagonal(R, x[2])
    return Q, R


def _equal(v, tol):
    return v.size == 0 or float(np.ptp(v)) <= tol


def symmetric_mode(Q, R, T):
    """1 if (Q, R, T) is invariant under separate permutations of students and teachers,
    2 if K = M and it is invariant under simultaneous permutations (R = R I + S (J - I)),
    else 0; with the reduced state."""
    K, M = R.shape
    tol = 1e-14 * max(1.0, float(np.abs(Q).max()), float(np.abs(R).max()), float(np.abs(T).max()))
    off = ~np.eye(K, dtype=bool)
    offT = ~np.eye(M, dtype=bool)
    if not (_equal(np.diag(Q), tol) and _equal(Q[off], tol) and _equal(np.diag(T), tol) and _equal(T[offT], tol)):
        return 0, None
    q = float(Q[0, 0])
    c = float(Q[off].mean()) if K > 1 else 0.0
    if _equal(R.ravel(), tol):
        return 1, np.array([q, c, float(R.mean())])
    if K == M and _equal(np.diag(R), tol) and _equal(R[off], tol):
        return 2, np.array([q, c, float(R[0, 0]), float(R[off].mean())])
    return 0, None


def teacher_parts(T):
    M = T.shape[0]
    return float(T[0, 0]), float(T[0, 1]) if M > 1 else 0.0


def generic_rhs(mode, act, y, K, M, T, a, b, lr, noise2, estimate=False, order_scale=1.0):
    """(dy/dalpha, eps_g, error estimate) for any g (numpy quadrature of the plan)."""
    from ._online_generic import eval_plan_generic
    if mode == 0:
        n = plan_size_full(K, M)
    else:
        n = SYM_PLAN
    pk = np.empty(n, np.int64)
    pc = np.empty((n, 4, 4))
    pi = np.empty((n, 4), np.int64)
    pt = np.empty(n, np.int64)
    pf = np.empty(n)
    if mode == 0:
        m = plan_full(np.ascontiguousarray(y, dtype=float), K, M, T, a, b, lr, noise2, pk, pc, pi, pt, pf)
    else:
        Td, To = teacher_parts(T)
        m = plan_sym(mode, np.ascontiguousarray(y, dtype=float), K, M, Td, To, a, b, lr, noise2, pk, pc, pi, pt, pf)
    out = np.zeros(n_state(mode, K, M))
    eps, err = eval_plan_generic(act.generic, m, pk, pc, pi, pt, pf, out, estimate, order_scale)
    return out, eps, err
