"""Equilibria: every local minimum of the site-symmetric beta f at (alpha, K), with its
stability in (R, S, C) and in the full space of individual overlaps."""
from __future__ import annotations

import math

import numpy as np

from ..errors import ConvergenceError
from ..saddle import SaddlePoint
from ._activation import activation_info
from ._common import _classify, _stationary_points, _unspecialized_path
from ._free_energy import _check_alpha, _check_K
from ._full_space import _full_blocks
from ._infinite_k import _equilibria_inf


def _point(info, alpha, K, row, branch, iterations=0, full=True):
    R, S, C = map(float, row[:3])
    ev = np.asarray(row[6:9], dtype=float)
    ss_stable = bool(ev[0] > 0)
    full_ev = None
    full_stable = None
    blocks = None
    if full and math.isfinite(K) and K == int(K):
        blocks = _full_blocks(info, alpha, K, R, S, C)
        full_ev = np.sort(np.concatenate([b[0] for b in blocks.values()]))
        full_stable = bool(full_ev[0] > 0)
    extra = {"branch": branch, "site_symmetric_stable": ss_stable, "full_space_eigenvalues": full_ev,
             "full_space_stable": full_stable,
             "full_space_blocks": None if blocks is None else {k: (v[0], v[1]) for k, v in blocks.items()},
             "activation": info.name}
    return SaddlePoint("scm.equilibrium", {"alpha": alpha, "K": K},
                       {"R": R, "S": S, "C": C},
                       {"free_energy": float(row[3]), "generalization_error": float(row[4]), "entropy": float(row[5])},
                       converged=True, residual=float(row[11]) if len(row) > 11 else 0.0, iterations=int(iterations),
                       hessian_eigenvalues=ev, replicon=None,
                       rs_stable=full_stable if full_stable is not None else ss_stable, extra=extra)



def equilibria(alpha, K, activation="erf", *, include_saddles=False, full_space=True):
    r"""Every local minimum of the site-symmetric beta f (seed Eq. 20) at (alpha, K).

    Unspecialized (R = S, traced from alpha = 0), specialized (R > S) and anti-specialized
    (R < S) stationary points are found by Newton from a grid of starts (plus the traced
    R = S branch), deduplicated, and classified by the Hessian of beta f in (R, S, C)
    (``hessian_eigenvalues``) and, for integer K, in the full space of the K^2 + K(K-1)/2
    individual overlaps (``extra['full_space_eigenvalues']``, by S_K symmetry blocks;
    ``rs_stable`` = full-space stability; for non-integer K and K = inf, or ``full_space=False``,
    ``extra['full_space_eigenvalues']``, ``['full_space_stable']`` and ``['full_space_blocks']`` are None and
    ``rs_stable`` is the site-symmetric stability).  Returns a tuple of :class:`SaddlePoint` sorted by
    free energy (the first is the thermodynamic state).  ``include_saddles`` also returns the
    stationary points that are not minima in the site-symmetric space.

    K = inf: minima of the reduced :math:`\varphi(R)` (see the module docstring); the
    free energy is per hidden unit and S, C report sigma = K S and gamma = K C.
    """
    alpha = _check_alpha(alpha)
    K = _check_K(K)
    info = activation_info(activation)
    if math.isinf(K):
        if info.dm0 <= 0:
            raise ValueError("activation must have E[g'(z)] != 0 for K = inf")
        return tuple(_equilibria_inf(info, alpha))
    rows = _stationary_points(info, alpha, K)
    try:
        u = _unspecialized_path(info, K, alpha)
        if not any(np.max(np.abs(u[:3] - r[:3])) < 1e-7 for r in rows):
            rows.append(u)
    except ConvergenceError:
        pass
    res = []
    for row in rows:
        if row[6] > 0 or include_saddles:
            res.append(_point(info, alpha, K, row, _classify(row[0], row[1]), full=full_space))
    return tuple(sorted(res, key=lambda p: p.free_energy))

