r"""Tree committee machine (TCM) training and version-space paths (thesis Secs. 3.2-3.3).

The thesis: E. Tartaglione, "From Statistical Physics to Algorithms in Deep Neural Systems", PhD thesis,
Politecnico di Torino, 2019.

Model (thesis Eq. 3.2): K (odd) hidden units, unit j sees its own block xi_j of n = N/K
inputs, hidden field ``h_j = w_j . xi_j / sqrt(n)``, output
``y = sign(sum_j sign(h_j))`` (majority vote).  Training and test *errors* are always
those of this sign network.

Gradient-based training needs a smooth surrogate: hidden ``tanh(h_j)``, output logit
``z = lam * sum_j tanh(h_j)`` and the binary cross-entropy of Sec. 3.3.2 written for
+-1 labels, ``ell = -log sigmoid(sigma z) = log(1 + exp(-sigma z))``.  The loss and its
first two derivatives are written once in sympy (:data:`_TCM`), so the gradient and the
*exact* Hessian (Eq. 3.17 and below; block form derived in docs/algorithms.md) follow
by the chain rule.

Public functions
----------------
* :func:`tcm_instance` -- random +-1 patterns, labels random (storage) or from a teacher TCM.
* :func:`tcm_errors`, :func:`tcm_loss` (loss, gradient), :func:`tcm_hessian` (exact).
* :func:`tcm_train` -- full-batch GD, minibatch SGD, or elastic-averaging SGD (Eqs. 3.12-3.13).
* :func:`tcm_path` -- errors along the straight line v(t) (Eq. 3.14) and along the relaxed
  path Gamma(t) obtained with the elastic force Eq. 3.15, GD steps and the norm constraint
  Eq. 3.16, with the Hessian eigenvalues along Gamma(t) (Fig. 3.9).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import sympy as sp

from .. import symbolic as S
from .._blas import single_thread_blas
from ..errors import check_choice, check_int, check_odd_int, check_range
from ._result import Simulation

__all__ = ["TCMResult", "TCMPath", "tcm_instance", "tcm_errors", "tcm_loss", "tcm_hessian",
           "tcm_train", "tcm_path"]


@S.kernels
def _TCM():
    r"""Surrogate loss of one pattern as a function of t = sigma z: ell(t) = log(1 + e^{-t}).

    Written as -t/2 + log(2 cosh(t/2)) so that it never overflows; derivatives by sympy.
    """
    t = sp.symbols("t", real=True)
    ell = -t / 2 + S.Log2Cosh(t / 2)
    d1 = sp.diff(ell, t)
    return {"tcm_ell": S.Scalar((t,), ell), "tcm_dell": S.Scalar((t,), d1),
            "tcm_ddell": S.Scalar((t,), sp.diff(d1, t))}


# --------------------------------------------------------------------------- data
def _check_K_N(K, N):
    K = check_odd_int("K", K, 1)
    N = check_int("N", N, 1)
    if N % K:
        raise ValueError(f"N must be a multiple of K = {K}, got {N}")
    return K, N


def _check_data(patterns, labels, K):
    X = np.asarray(patterns, dtype=np.float64)
    if X.ndim != 2 or X.shape[0] < 1:
        raise ValueError(f"patterns must be a 2-d array of shape (P, N), got shape {X.shape}")
    if not np.all(np.isfinite(X)):
        raise ValueError("patterns must be finite (no NaN or inf)")
    K, N = _check_K_N(K, X.shape[1])
    y = np.asarray(labels, dtype=np.float64).ravel()
    if y.shape[0] != X.shape[0]:
        raise ValueError(f"labels must have length P = {X.shape[0]}, got {y.shape[0]}")
    if not np.all(np.abs(y) == 1.0):
        raise ValueError("labels must be +1 or -1")
    return X.reshape(X.shape[0], K, N // K), y, K


def _check_W(W, K, n, name="W"):
    W = np.array(W, dtype=np.float64)
    if W.size != K * n:
        raise ValueError(f"{name} must have K*n = {K * n} entries (shape (K, n)), got {W.size}")
    if not np.all(np.isfinite(W)):
        raise ValueError(f"{name} must be finite (no NaN or inf)")
    return W.reshape(K, n)


def tcm_instance(N, K, alpha, *, seed=None, teacher=False, n_test=0):
    """Random +-1 patterns (P = round(alpha N), N) with +-1 labels for a TCM.

    With ``teacher=True`` the labels come from a teacher TCM with Gaussian weights (so the
    training set is solvable) and ``n_test`` extra test patterns are labelled by it.
    Returns a dict with ``patterns``, ``labels``, ``test_patterns``, ``test_labels``
    (empty when n_test = 0) and ``teacher`` ((K, n) array or None).  N odd multiple of K
    with n = N/K odd avoids zero hidden fields.
    """
    K, N = _check_K_N(K, N)
    alpha = float(check_range("alpha", alpha, 0.0, lo_open=True))
    n_test = check_int("n_test", n_test, 0)
    P = max(1, int(round(alpha * N)))
    rng = np.random.default_rng(seed)
    X = rng.choice(np.array([-1.0, 1.0]), size=(P + n_test, N))
    if teacher:
        T = rng.standard_normal((K, N // K))
        y = _predict(X.reshape(-1, K, N // K), T)
    else:
        T = None
        y = rng.choice(np.array([-1.0, 1.0]), size=P + n_test)
    return {"patterns": X[:P], "labels": y[:P], "test_patterns": X[P:], "test_labels": y[P:],
            "teacher": T}


def _fields(X3, W):
    return np.einsum("pkn,kn->pk", X3, W) / math.sqrt(X3.shape[2])


def _predict(X3, W):
    h = _fields(X3, W)
    s = np.where(h > 0, 1.0, -1.0).sum(axis=1)
    return np.where(s > 0, 1.0, -1.0)


def tcm_errors(W, patterns, labels, K):
    """Number of patterns misclassified by the sign TCM (Eq. 3.2) with weights W (K, n)."""
    X3, y, K = _check_data(patterns, labels, K)
    W = _check_W(W, K, X3.shape[2])
    return int(np.count_nonzero(_predict(X3, W) != y))


def _loss_grad(X3, y, W, lam):
    n = X3.shape[2]
    h = _fields(X3, W)
    th = np.tanh(h)
    t = y * lam * th.sum(axis=1)
    L = float(np.mean(_TCM.tcm_ell_v(t)))
    c = y * lam * _TCM.tcm_dell_v(t) / X3.shape[0]          # dL/dz per pattern
    g = np.einsum("p,pk,pkn->kn", c, 1.0 - th * th, X3) / math.sqrt(n)
    return L, g


def tcm_loss(W, patterns, labels, K, lam=1.0):
    r"""Surrogate loss ``L = (1/P) sum_mu log(1 + exp(-sigma^mu z^mu))``, ``z = lam sum_j tanh(h_j)``,
    and its gradient dL/dW (shape (K, n)).  Sec. 3.3.2 (binary cross-entropy for +-1 labels)."""
    X3, y, K = _check_data(patterns, labels, K)
    W = _check_W(W, K, X3.shape[2])
    lam = float(check_range("lam", lam, 0.0, lo_open=True))
    return _loss_grad(X3, y, W, lam)


def _hessian(X3, y, W, lam):
    P, K, n = X3.shape
    h = _fields(X3, W)
    th = np.tanh(h)
    d1 = 1.0 - th * th                 # tanh'
    d2 = -2.0 * th * d1                # tanh''
    t = y * lam * th.sum(axis=1)
    l1 = _TCM.tcm_dell_v(t)            # d ell / dt
    l2 = _TCM.tcm_ddell_v(t)           # d2 ell / dt2
    # d2 ell / dh_j dh_k = lam^2 l2 d1_j d1_k + delta_jk sigma lam l1 d2_j   (sigma^2 = 1):
    # the branches couple only through the output (rank one in j, k), plus a diagonal term.
    s = 1.0 / (P * n)
    U = X3 * (lam * d1)[:, :, None]                               # lam tanh'(h_j) xi_j
    c_diag = (lam * lam * l2[:, None] * d1 * d1 + (y * lam * l1)[:, None] * d2) * s
    Hm = np.empty((K * n, K * n))
    for j in range(K):
        Xj = X3[:, j, :]
        # a GEMM of A^T B with A = B is not bitwise symmetric (the kernel's blocking, FMA and
        # summation order differ between (r, c) and (c, r)): keep its upper triangle, mirror it
        D = (Xj.T * c_diag[:, j]) @ Xj
        iu = np.triu_indices(n, 1)
        D.T[iu] = D[iu]
        Hm[j * n:(j + 1) * n, j * n:(j + 1) * n] = D
        if j < K - 1:                  # all blocks (j, k > j) of the row in one GEMM
            B = (U[:, j, :].T * (l2 * s)) @ U[:, j + 1:, :].reshape(P, -1)
            Hm[j * n:(j + 1) * n, (j + 1) * n:] = B
            Hm[(j + 1) * n:, j * n:(j + 1) * n] = B.T
    return Hm


def tcm_hessian(W, patterns, labels, K, lam=1.0):
    r"""Exact Hessian d^2 L / dW dW of the surrogate loss (thesis Eq. 3.17, computed in closed form).

    With ``h_j = w_j . xi_j / sqrt(n)``, ``t = sigma lam sum_j tanh(h_j)``:
    ``d^2 L / dw_j dw_k = (1/(P n)) sum_mu [lam^2 ell''(t) tanh'(h_j) tanh'(h_k)
    + delta_jk sigma lam ell'(t) tanh''(h_j)] xi_j xi_k^T``: the branches couple only through
    the output, so each diagonal block and each row of off-diagonal blocks is one GEMM over the
    patterns (on one BLAS thread).  Returns the (N, N) matrix in the flattened order of W (unit
    by unit), exactly symmetric by construction (each diagonal block's upper triangle is mirrored,
    each off-diagonal block is placed with its transpose), whatever the BLAS.
    """
    X3, y, K = _check_data(patterns, labels, K)
    W = _check_W(W, K, X3.shape[2])
    lam = float(check_range("lam", lam, 0.0, lo_open=True))
    with single_thread_blas(2.0 * X3.shape[0] * W.size ** 2):
        return _hessian(X3, y, W, lam)


# --------------------------------------------------------------------------- training
@dataclass(frozen=True, repr=False)
class TCMResult(Simulation):
    """Outcome of :func:`tcm_train`: ``weights`` (K, n), ``solved`` (zero errors of the sign
    TCM), ``errors`` (the headline, an exact count), ``epochs``, ``history`` (per-epoch
    ``errors`` and ``loss`` of the returned configuration), ``params``, ``residual`` (max-norm of
    the gradient of the surrogate loss at ``weights``).

    Protocol: ``converged`` = ``solved`` (the stopping criterion, zero training errors, was met
    within the epoch budget: a per-run outcome, not an exception); ``iterations`` = ``epochs``;
    ``error`` 0.0; ``ansatz`` ``"-"``.
    """
    method: str
    weights: np.ndarray
    solved: bool
    errors: int
    epochs: int
    history: dict = field(default_factory=dict)
    params: dict = field(default_factory=dict)
    residual: float = 0.0

    headline = "errors"
    error = 0.0

    @property
    def converged(self):
        """Zero training errors within the epoch budget (= ``solved``)."""
        return bool(self.solved)

    @property
    def iterations(self):
        """The epochs run."""
        return int(self.epochs)


def tcm_train(patterns, labels, K, *, method="gd", seed=None, eta=None, epochs=500, batch=None,
              workers=2, coupling=0.2, lam=1.0, init_scale=1.0, W0=None):
    r"""Train a TCM on the surrogate loss; stop as soon as the sign TCM makes no training error.

    ``method``:
      * ``"gd"``: full-batch gradient descent ``W <- W - eta dL/dW``.
      * ``"sgd"``: minibatch SGD (``batch`` patterns, reshuffled every epoch).
      * ``"easgd"``: elastic-averaging SGD in the form of thesis Eqs. 3.12-3.13: ``workers``
        replicas, each ``w_p <- w_p - eta dL_batch/dw_p - coupling (w_p - w_hat)`` with
        ``w_hat = <w_p>_p``; the returned configuration is the centre ``w_hat`` (the
        configuration the replicas collapse to).

    Defaults: ``eta = 2.0`` for gd, ``0.5`` for sgd/easgd; ``batch = max(1, P // 10)``.  Initial
    weights Gaussian with std ``init_scale`` (independent per replica).  Reproducible from ``seed``.
    """
    X3, y, K = _check_data(patterns, labels, K)
    P, _, n = X3.shape
    check_choice("method", method, ("gd", "sgd", "easgd"))
    epochs = check_int("epochs", epochs, 1)
    eta = (2.0 if method == "gd" else 0.5) if eta is None else float(check_range("eta", eta, 0.0, lo_open=True))
    batch = max(1, P // 10) if batch is None else min(P, check_int("batch", batch, 1))
    workers = check_int("workers", workers, 1) if method == "easgd" else 1
    coupling = float(check_range("coupling", coupling, 0.0, 1.0))
    lam = float(check_range("lam", lam, 0.0, lo_open=True))
    init_scale = float(check_range("init_scale", init_scale, 0.0, lo_open=True))
    rng = np.random.default_rng(seed)
    if W0 is not None:
        Ws = np.repeat(_check_W(W0, K, n, "W0")[None], workers, axis=0)
    else:
        Ws = init_scale * rng.standard_normal((workers, K, n))
    h_err, h_loss = [], []

    def centre():
        return Ws.mean(axis=0)

    err = int(np.count_nonzero(_predict(X3, centre()) != y))
    ep = 0
    while err > 0 and ep < epochs:
        if method == "gd":
            _, g = _loss_grad(X3, y, Ws[0], lam)
            Ws[0] -= eta * g
        else:
            orders = [rng.permutation(P) for _ in range(workers)]
            for b0 in range(0, P, batch):
                wh = centre()
                for p in range(workers):
                    idx = orders[p][b0:b0 + batch]
                    _, g = _loss_grad(X3[idx], y[idx], Ws[p], lam)
                    Ws[p] -= eta * g
                    if method == "easgd":
                        Ws[p] -= coupling * (Ws[p] - wh)
        ep += 1
        Wc = centre()
        err = int(np.count_nonzero(_predict(X3, Wc) != y))
        h_err.append(err)
        h_loss.append(_loss_grad(X3, y, Wc, lam)[0])
    params = {"seed": seed, "eta": eta, "epochs": epochs, "batch": batch, "workers": workers,
              "coupling": coupling, "lam": lam, "init_scale": init_scale, "K": K}
    Wc = centre()
    grad = _loss_grad(X3, y, Wc, lam)[1]
    return TCMResult(method, Wc, err == 0, err, ep,
                     {"errors": np.array(h_err, dtype=np.int64), "loss": np.array(h_loss)}, params,
                     float(np.max(np.abs(grad))))


# --------------------------------------------------------------------------- paths
@dataclass(frozen=True, repr=False)
class TCMPath(Simulation):
    """Errors along the straight line v(t) and the relaxed path Gamma(t) between two solutions.

    ``t_line`` with ``line_train_errors``/``line_test_errors`` (fractions) along v(t) (Eq. 3.14;
    the test arrays are None when no test set was given);
    ``t_path`` (progress ``1 - |W_b - W*| / |W_b - W_a|``) with ``path_train_errors``,
    ``path_test_errors``, ``path_loss``, ``path_norm`` along Gamma(t); ``hess_t`` and
    ``hess_eigenvalues`` (rows: ascending eigenvalues of the exact Hessian at those points);
    ``reached`` (Gamma ended within ``tol`` of W_b), ``max_path_train_errors`` (the headline:
    the largest training-error fraction along Gamma, 0 for a path inside the version space).

    Protocol: ``converged`` = ``reached`` (a per-run outcome, not an exception);
    ``iterations`` = ``steps``; ``stability`` = the Hessian eigenvalues of the surrogate loss
    (ascending; positive = locally convex, a minimum) at the last point of Gamma where they
    were computed (at W_b when ``reached`` and ``n_hessian >= 1``), None without Hessian points;
    ``error`` 0.0 (exact error fractions); ``residual`` 0.0; ``ansatz`` ``"-"``.
    """
    t_line: np.ndarray
    line_train_errors: np.ndarray
    line_test_errors: np.ndarray
    t_path: np.ndarray
    path_train_errors: np.ndarray
    path_test_errors: np.ndarray
    path_loss: np.ndarray
    path_norm: np.ndarray
    hess_t: np.ndarray
    hess_eigenvalues: np.ndarray
    reached: bool
    steps: int
    params: dict = field(default_factory=dict)

    headline = "max_path_train_errors"
    error = 0.0
    residual = 0.0

    @property
    def converged(self):
        """Gamma(t) reached W_b (= ``reached``)."""
        return bool(self.reached)

    @property
    def iterations(self):
        """The elastic steps taken (= ``steps``)."""
        return int(self.steps)

    @property
    def stability(self):
        """Ascending Hessian eigenvalues at the last Hessian point of Gamma (None if there is none)."""
        ev = np.asarray(self.hess_eigenvalues)
        return ev[-1] if ev.ndim == 2 and ev.shape[0] else None

    @property
    def max_path_train_errors(self):
        return float(np.max(self.path_train_errors))

    @property
    def max_line_train_errors(self):
        return float(np.max(self.line_train_errors))


def tcm_path(W_a, W_b, patterns, labels, K, *, test_patterns=None, test_labels=None, eta=0.5,
             coupling=0.01, norm_constraint=True, max_steps=5000, tol=1e-3, n_line=101,
             n_hessian=11, lam=1.0, descent_on="errors", max_inner=20):
    r"""Explore the version space between two solutions W_a, W_b of the same training set.

    ``descent_on="errors"`` (default) computes the GD step on the currently misclassified
    training patterns only (mean loss over them), so the loss force vanishes inside the
    version space and only pushes W* back when it leaves it; up to ``max_inner`` such GD
    steps are taken after each elastic step until the training error is zero again.  With
    ``"all"`` one GD step on the whole training set is taken per elastic step; its force
    balances the elastic pull before W_b is reached (the trap described in Sec. 3.3.1).

    * Straight line (Eq. 3.14): ``v(t) = W_a + t (W_b - W_a)``, t in [0, 1] (``n_line`` points).
    * Relaxed path Gamma(t) (Sec. 3.3.1): start at ``W* = W_a``; each step does one GD step on
      the surrogate loss and the elastic pull Eq. 3.15, ``W* <- W* - eta dL/dW* + coupling
      (W_b - W*)``, then (``norm_constraint``) rescales W* to the norm of Eq. 3.16,
      ``|W*| = |W_b| - (|W_b| - |W_a|) |W_b - W*| / |W_b - W_a|`` (linear in the distance to
      W_b, so the norm interpolates between the endpoints).  Stops when
      ``|W_b - W*| <= tol |W_b - W_a|``.
    * Exact Hessian eigenvalues (:func:`tcm_hessian`) at ``n_hessian`` points of Gamma(t)
      equally spaced in progress (Fig. 3.9).

    Errors are fractions of the training (and test) sets.  Returns :class:`TCMPath`.
    """
    X3, y, K = _check_data(patterns, labels, K)
    n = X3.shape[2]
    Wa = _check_W(W_a, K, n, "W_a")
    Wb = _check_W(W_b, K, n, "W_b")
    eta = float(check_range("eta", eta, 0.0))
    coupling = float(check_range("coupling", coupling, 0.0, 1.0, lo_open=True))
    max_steps = check_int("max_steps", max_steps, 1)
    tol = float(check_range("tol", tol, 0.0, 1.0, lo_open=True))
    n_line = check_int("n_line", n_line, 2)
    n_hessian = check_int("n_hessian", n_hessian, 0)
    lam = float(check_range("lam", lam, 0.0, lo_open=True))
    check_choice("descent_on", descent_on, ("errors", "all"))
    max_inner = check_int("max_inner", max_inner, 0)
    D = float(np.linalg.norm(Wb - Wa))
    if D == 0.0:
        raise ValueError("W_a and W_b must differ")
    if test_patterns is not None and len(test_patterns):
        Xt3, yt, _ = _check_data(test_patterns, test_labels, K)
    else:
        Xt3 = yt = None

    def errs(W):
        tr = float(np.mean(_predict(X3, W) != y))
        te = float(np.mean(_predict(Xt3, W) != yt)) if Xt3 is not None else -1.0
        return tr, te

    t_line = np.linspace(0.0, 1.0, n_line)
    line = np.array([errs(Wa + t * (Wb - Wa)) for t in t_line])
    na, nb = float(np.linalg.norm(Wa)), float(np.linalg.norm(Wb))
    W = Wa.copy()
    tp, tr_e, te_e, loss, norms = [], [], [], [], []
    hess_targets = list(np.linspace(0.0, 1.0, n_hessian)) if n_hessian else []
    hess_t, hess_ev = [], []

    def record(W):
        prog = 1.0 - float(np.linalg.norm(Wb - W)) / D
        a, b = errs(W)
        tp.append(prog)
        tr_e.append(a)
        te_e.append(b)
        loss.append(_loss_grad(X3, y, W, lam)[0])
        norms.append(float(np.linalg.norm(W)))
        while hess_targets and prog >= hess_targets[0] - tol:
            hess_targets.pop(0)
            hess_t.append(prog)
            with single_thread_blas(2.0 * X3.shape[0] * W.size ** 2 + 10.0 * W.size ** 3):
                hess_ev.append(np.linalg.eigvalsh(_hessian(X3, y, W, lam)))
        return prog

    record(W)
    reached = False
    steps = 0
    for steps in range(1, max_steps + 1):
        if descent_on == "all":
            W = W - eta * _loss_grad(X3, y, W, lam)[1]
        W = W + coupling * (Wb - W)
        if descent_on == "errors":
            for _ in range(max_inner):
                bad = _predict(X3, W) != y
                if not bad.any():
                    break
                W = W - eta * _loss_grad(X3[bad], y[bad], W, lam)[1]
        if norm_constraint:
            target = nb - (nb - na) * float(np.linalg.norm(Wb - W)) / D
            nw = float(np.linalg.norm(W))
            if nw > 0.0 and target > 0.0:
                W = W * (target / nw)
        prog = record(W)
        if 1.0 - prog <= tol:
            reached = True
            break
    params = {"eta": eta, "coupling": coupling, "norm_constraint": norm_constraint, "tol": tol,
              "lam": lam, "K": K, "descent_on": descent_on}
    has_test = Xt3 is not None
    return TCMPath(t_line, line[:, 0], line[:, 1] if has_test else None, np.array(tp), np.array(tr_e),
                   np.array(te_e) if has_test else None,
                   np.array(loss), np.array(norms), np.array(hess_t),
                   np.array(hess_ev) if hess_ev else np.empty((0, K * n)), reached, steps, params)
