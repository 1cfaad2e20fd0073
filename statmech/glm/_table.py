"""Starts of single solves from a tabulated branch (built once per model and parameter values).

A single ERM or Gibbs point solved from nothing continues from ``1e-3 alpha`` (tens of Newton
steps).  The first single solve of a model instead tabulates its branch on ``GRID`` (one numba
continuation, :func:`statmech.glm._solve_nb.sv_curve`); every single solve then starts from the
linear interpolation of the unknowns in ``log alpha`` and needs two or three Newton steps (the
perceptron's solvers start the same way from their tabulated branches).  Outside the tabulated
range (or where the table stopped: a failed continuation, a capacity) the cold path is used.
"""
from __future__ import annotations

import numpy as np

__all__ = ["table_start", "GRID"]

#: alpha grid of the tables (10 points per decade)
GRID = np.geomspace(1e-3, 1e3, 61)
_TABLES = {}


def table_start(key, ks, th, y0, kind, rho, beta, md, rule, alpha):
    """``y`` interpolated at ``alpha`` from the table of ``key`` (built on first use), or None."""
    tab = _TABLES.get(key)
    if tab is None:
        out = np.zeros((GRID.size, 14))
        obs = np.zeros((GRID.size, 7))
        ks.sv_curve(th, GRID, y0.copy(), kind, rho, beta, md, rule, out, obs, True)
        ok = out[:, 0] == 0
        n = int(np.argmin(ok)) if not ok.all() else ok.size      # the table ends at the first failure
        tab = (np.log(GRID[:n]), out[:n, 3:6].copy())
        if len(_TABLES) > 256:
            _TABLES.pop(next(iter(_TABLES)))
        _TABLES[key] = tab
    la, ys = tab
    x = float(np.log(alpha))
    if la.size < 2 or not la[0] <= x <= la[-1]:
        return None
    return np.array([np.interp(x, la, ys[:, j]) for j in range(3)])
