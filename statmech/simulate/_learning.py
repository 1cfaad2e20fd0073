"""Shared pieces of the perceptron learning algorithms (:mod:`statmech.simulate.algorithms`):
the result type, the data checks, random instances, training errors and the seeding.

Public names here are re-exported by :mod:`statmech.simulate.algorithms` (and
:mod:`statmech.simulate`); import them from there.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..errors import check_int, check_range
from ._result import Simulation


# --------------------------------------------------------------------------- results
@dataclass(frozen=True, repr=False)
class AlgorithmResult(Simulation):
    """Outcome of a learning algorithm.

    Attributes
    ----------
    algorithm : name of the algorithm
    weights : final weights (+-1 int8 for binary algorithms, float for continuous ones)
    solved : True when ``weights`` classify every training pattern correctly (stability > kappa)
    errors : number of misclassified training patterns of ``weights`` (the headline; exact)
    epochs : number of passes over the training set (sweeps for Metropolis)
    history : dict of 1-d arrays, one entry per epoch (e.g. ``q_star``, ``errors``, ``loss``, ``gamma``)
    params : the hyper-parameters used (including the seed)
    extra : anything else (e.g. the final magnetizations ``m``)
    converged : the algorithm stopped on its own criterion within its budget (a per-run outcome,
        not an exception): zero training errors for the perceptron rule, the stochastic
        perceptron and Metropolis annealing (= ``solved``); zero errors *or* a converged loss
        for the Delta rule; always True for the one-shot clipped Hebb rule
    residual : max-norm of the gradient of the loss at ``weights`` for the Delta rule; 0.0 for
        the rules that do not descend a loss to a tolerance (their criterion is ``errors = 0``)

    The protocol (:class:`statmech.result.Result`): ``iterations`` = ``epochs``, ``error`` = 0.0
    (``errors`` is an exact count), ``ansatz`` = ``"-"``, ``rs_stable`` and ``stability`` None.
    """
    algorithm: str
    weights: np.ndarray
    solved: bool
    errors: int
    epochs: int
    history: dict = field(default_factory=dict)
    params: dict = field(default_factory=dict)
    extra: dict = field(default_factory=dict)
    converged: bool | None = None
    residual: float = 0.0

    headline = "errors"

    def __post_init__(self):
        if self.converged is None:
            object.__setattr__(self, "converged", bool(self.solved))

    @property
    def iterations(self):
        """The epochs (sweeps for Metropolis) run."""
        return int(self.epochs)

    @property
    def error(self):
        """0.0: the headline ``errors`` is an exact count."""
        return 0.0

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        for d in ("extra", "params"):
            dd = object.__getattribute__(self, d)
            if name in dd:
                return dd[name]
        raise AttributeError(f"AlgorithmResult has no {name!r}")

    def summary(self):
        """A JSON-friendly dict without the weight vector."""
        out = {"algorithm": self.algorithm, "solved": bool(self.solved), "errors": int(self.errors),
               "epochs": int(self.epochs)}
        out.update({k: v for k, v in self.params.items()})
        for k, v in self.history.items():
            if len(v):
                out[f"final_{k}"] = v[-1].item() if hasattr(v[-1], "item") else v[-1]
        return out


# --------------------------------------------------------------------------- helpers
def _check_data(patterns, labels):
    X = np.asarray(patterns)
    if X.ndim != 2 or X.shape[0] < 1 or X.shape[1] < 1:
        raise ValueError(f"patterns must be a 2-d array of shape (P, N) with P, N >= 1, got shape {X.shape}")
    X = np.ascontiguousarray(X, dtype=np.float64)
    if not np.all(np.isfinite(X)):
        raise ValueError("patterns must be finite (no NaN or inf)")
    y = np.asarray(labels, dtype=np.float64).ravel()
    if y.shape[0] != X.shape[0]:
        raise ValueError(f"labels must have length P = {X.shape[0]}, got {y.shape[0]}")
    if not np.all(np.abs(y) == 1.0):
        raise ValueError("labels must be +1 or -1")
    return X, np.ascontiguousarray(y)


def random_binary_instance(N, alpha, *, seed=None, teacher=False):
    """Random +-1 patterns (P = round(alpha N), N) and +-1 labels.

    With ``teacher=True`` the labels are ``sign(T . xi)`` for a random binary teacher T
    (returned as the third item, else None), so the instance is solvable (T solves it).
    N must be odd so that no field is zero.
    """
    N = check_int("N", N, 1)
    if N % 2 == 0:
        raise ValueError(f"N must be an odd integer >= 1 (no zero fields), got {N}")
    alpha = float(check_range("alpha", alpha, 0.0, lo_open=True))
    P = max(1, int(round(alpha * N)))
    rng = np.random.default_rng(seed)
    X = rng.choice(np.array([-1, 1], dtype=np.int8), size=(P, N))
    if teacher:
        T = rng.choice(np.array([-1, 1], dtype=np.int8), size=N)
        y = np.sign(X.astype(np.int64) @ T.astype(np.int64)).astype(np.int8)
        return X, y, T
    y = rng.choice(np.array([-1, 1], dtype=np.int8), size=P)
    return X, y, None


def training_errors(weights, patterns, labels, kappa=0.0):
    """Number of patterns whose stability sigma (w.xi) / sqrt(N) is <= kappa."""
    X, y = _check_data(patterns, labels)
    w = np.asarray(weights, dtype=np.float64).ravel()
    if w.shape[0] != X.shape[1]:
        raise ValueError(f"weights must have length N = {X.shape[1]}, got {w.shape[0]}")
    stab = y * (X @ w) / math.sqrt(X.shape[1])
    return int(np.count_nonzero(stab <= kappa))


def _init_rng_and_loop_seed(seed):
    """(numpy Generator for the initial state, int seed of the numba loop), both from ``seed``."""
    ss = np.random.SeedSequence(seed)
    s_init, s_loop = ss.spawn(2)
    return np.random.default_rng(s_init), int(np.random.default_rng(s_loop).integers(0, 2**31 - 1))
