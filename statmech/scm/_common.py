"""Shared pieces of the SCM solvers: numba-traced branches of stationary points of the
site-symmetric beta f (the R = S branch from alpha = 0, multistart Newton), and the
:class:`Transitions` result."""
from __future__ import annotations

import contextlib
import itertools
import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..errors import ConvergenceError
from ..result import Result
from ._equations import _kern

_TOL = 1e-13
_MAXIT = 100


def _trace(info, K, alphas, x0, unspec):
    alphas = np.ascontiguousarray(alphas, dtype=float)
    out = np.empty((alphas.size, 12))
    _kern.trace(info.code, info.cc, info.m0, info.m1, float(K), alphas, np.asarray(x0, dtype=float),
                bool(unspec), _TOL, _MAXIT, out)
    return out


def _unspecialized_path(info, K, alpha, n=24):
    """Trace the R = S branch from alpha = 0 (R = S = C = 0) to alpha; returns the final row."""
    grid = np.concatenate([[0.0], alpha * (np.arange(1, n + 1) / n) ** 2]) if alpha > 0 else np.array([0.0])
    out = _trace(info, K, grid, np.zeros(3), True)
    if out[-1, 9] != 1.0:
        raise ConvergenceError("unspecialized branch: Newton failed", x=out[:, :3][np.isfinite(out[:, 0])][-1:],
                               diagnostics={"alpha": alpha, "K": K})
    return out[-1]


def _starts(K):
    pts = [s for s in itertools.product(np.linspace(-0.95, 0.95, 13), np.linspace(-0.6, 0.9, 11),
                                        (-0.2, -0.05, 0.0, 0.05, 0.2, 0.5))
           if _kern.in_domain(K, *s)]
    Kf = K if math.isfinite(K) else 1e6
    # collective-overlap starts for large K (S = O(1/K), C = O(1/K^2))
    for R in np.linspace(-0.95, 0.95, 21):
        for u in (0.5, 0.9, 0.99):
            s = (u - R) / (Kf - 1)
            for c in (0.0, 1.0 / Kf ** 2, -1.0 / Kf ** 2):
                if _kern.in_domain(K, R, s, c):
                    pts.append((R, s, c))
    return np.array(pts, dtype=float)


def _stationary_points(info, alpha, K):
    starts = _starts(K)
    out = np.empty((len(starts), 12))
    _kern.multistart(info.code, info.cc, info.m0, info.m1, float(alpha), float(K), starts, _TOL, _MAXIT, out)
    ok = out[out[:, 9] == 1.0]
    uniq = []
    for row in ok[np.argsort(ok[:, 3])]:
        if not any(np.max(np.abs(row[:3] - u[:3])) < 1e-7 for u in uniq):
            uniq.append(row)
    return uniq


def _spec_starts_at(info, K, alpha):
    """Minima with R > S and R < S at alpha (lowest free energy of each sign)."""
    rows = _stationary_points(info, alpha, K)
    best = {}
    for r in rows:
        if r[6] <= 0:
            continue
        c = _classify(r[0], r[1])
        if c != "unspecialized" and c not in best:
            best[c] = r
    return best


def _classify(R, S, tol=1e-7):
    if abs(R - S) <= tol * (1 + abs(R)):
        return "unspecialized"
    return "specialized" if R > S else "anti-specialized"


@contextlib.contextmanager
def at_point(function, **point):
    """Run a public solver: a ConvergenceError names ``function`` and the point (prefixed where its message
    does not start with the function's name), and a numerical exception of numpy, scipy or numba
    (LinAlgError, ZeroDivisionError, FloatingPointError, OverflowError) becomes a ConvergenceError too."""
    where = f"{function}({', '.join(f'{k}={v!r}' for k, v in point.items())})"
    try:
        yield
    except ConvergenceError as exc:
        msg = str(exc)
        if msg.startswith(where):
            raise
        new = ConvergenceError(f"{where}: {msg}")
        new.x, new.residual, new.iterations = exc.x, exc.residual, exc.iterations
        new.diagnostics = dict(exc.diagnostics)
        raise new from exc
    except (np.linalg.LinAlgError, ZeroDivisionError, FloatingPointError, OverflowError) as exc:
        raise ConvergenceError(f"{where}: {type(exc).__name__}: {exc}") from exc


def _check_specializes(info):
    """ValueError if m(rho) is linear (m'' = 0): beta f = alpha K eps_g - s is then linear minus strictly
    concave (ln det of an overlap matrix affine in R, S, C), so its unique minimum is R = S at every alpha."""
    if all(abs(_kern.moments(info.code, r, info.cc)[2]) < 1e-14 for r in (-0.5, 0.0, 0.5)):
        raise ValueError(f"activation must have a nonlinear pair moment for a specialization transition, got "
                         f"{info.name!r} (m(rho) linear: R = S is the only minimum at every alpha)")




@dataclass(frozen=True, repr=False)
class Transitions(Result):
    """Specialization transitions of the site-symmetric SCM at fixed K (:func:`statmech.scm.transitions`).

    ``alpha_s``: the specialized (R > S) minimum appears (fold; = alpha_c for a continuous
    transition); ``alpha_c``: equal free energies of the specialized and unspecialized
    minima, or the second-order point; ``alpha_d``: the unspecialized (R = S) minimum loses
    stability (site-symmetric Hessian); ``order``: 1 or 2.  Always numbers, alpha_s <= alpha_c
    <= alpha_d; finite except alpha_d = inf at K = inf for m''(0) = 0 (erf).  ``details``:
    branch data at the points (R, S, C), the anti-specialized fold (None if it has none), the
    solver ("continuation", "direct", "Landau reduction", ...) and accuracy.

    Protocol fields: ``converged`` True (a failure raises), ``residual`` 0.0 and ``iterations`` 0 (the
    solvers' own residuals are in ``details``), ``ansatz`` "rs", ``rs_stable`` None (the transitions
    are properties of the site-symmetric theory), ``stability`` None, ``error``: the accuracy of
    alpha_c -- the direct solver's resolution of the free-energy crossing (at least 1e-12 alpha_c), 2e-9
    alpha_c for the engine, 0.13 (alpha_d - alpha_c) / K^2 for the Landau reduction, 1e-14 alpha_c at K = inf.
    """
    K: float
    activation: str
    alpha_s: float
    alpha_c: float
    alpha_d: float
    order: int
    details: dict
    converged: bool = True
    residual: float = 0.0
    iterations: int = 0
    ansatz: str = "rs"
    rs_stable: object = None
    error: float = None
    stability: object = None
    headline: ClassVar[str] = "alpha_c"

    def __post_init__(self):
        if self.error is None:
            object.__setattr__(self, "error", _accuracy(self))


def _accuracy(t):
    solver = str(t.details.get("solver", ""))
    ac = abs(float(t.alpha_c))
    if math.isinf(t.K):
        return 1e-14 * ac
    if solver.startswith("Landau"):
        return 0.13 * abs(float(t.alpha_d) - ac) / t.K ** 2 + 1e-15 * ac
    if solver.startswith("continuation"):
        return 2e-9 * ac
    return max(float(t.details.get("alpha_c_resolution", 0.0) or 0.0), 1e-12 * ac)
