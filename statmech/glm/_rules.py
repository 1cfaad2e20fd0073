"""The quadrature rule arrays handed to the numba averages (``docs/glm.md``, "Quadrature")."""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from ..gaussian import gauss_hermite, piecewise_nodes, tanh_sinh_rule

__all__ = ["quadrature_rule", "TAIL", "TAIL_LEVEL"]

#: the tails (-inf, -TAIL] and [TAIL, inf) carry Gaussian mass 9.5e-18 each
TAIL = 8.5
#: tanh-sinh level of the tail rules (65 nodes per tail; the tails' mass is 9.5e-18)
TAIL_LEVEL = 3
#: Gauss--Hermite order of the smooth averages (see statmech.glm._quad_nb.GH_A2)
GH_ORDER = 96


@lru_cache(maxsize=8)
def quadrature_rule(level):
    """``(x, 1 - x, w, tail_nodes, tail_weights, gh_nodes, gh_weights)``: the tanh--sinh rule of
    ``level`` on (0, 1) for the finite pieces, the nodes and weights of both tails beyond ``+-TAIL``,
    and the Gauss--Hermite rule of order ``GH_ORDER`` for averages whose integrand is smooth."""
    x, xc, wts = tanh_sinh_rule(int(level))
    z, wz = piecewise_nodes([-TAIL, TAIL], TAIL_LEVEL)
    n = tanh_sinh_rule(TAIL_LEVEL)[0].size
    tz = np.ascontiguousarray(np.concatenate([z[:n], z[2 * n:]]))
    tw = np.ascontiguousarray(np.concatenate([wz[:n], wz[2 * n:]]))
    tz.setflags(write=False)
    tw.setflags(write=False)
    gz, gw = gauss_hermite(GH_ORDER)
    return x, xc, wts, tz, tw, gz, gw
