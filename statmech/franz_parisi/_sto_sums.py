"""Outer quadrature loop of the stochastic-perceptron pattern term (numba).

Not imported directly: ``@kernels(include=("statmech.franz_parisi._rules",
"statmech.franz_parisi._sto_sums"))`` on ``statmech.franz_parisi._equations._STO`` appends this
text to the generated kernel module, where ``sto_x`` (the sympy integrand) and the inner rules
of :mod:`._rules` are module globals; call it as ``_STO.sto_sum_x``.
"""
import math
import typing

import numba
import numpy as np

if typing.TYPE_CHECKING:
    from statmech.franz_parisi._equations import sto_x
    from statmech.franz_parisi._rules import breaks2, fill_nodes
    from statmech.gaussian import log_H_nb


@numba.njit(cache=True)
def sto_sum_x(zo, wo, qm, qs, beta, frame, x, xc, w, lz, lw, rz, rw):
    """``(E_z log E_x H(u)^beta, its q_m derivative)`` over the outer nodes ``(zo, wo)``: per
    node the inner rule with a break at the layer ``x = -sqrt(q_m) z/sqrt(q_star - q_m)`` and
    the shift ``c = max beta log H(u)`` over its nodes of positive weight (the loop of
    ``stochastic._sto_pattern_term``)."""
    s = math.sqrt(qs - qm)
    sqm = math.sqrt(qm)
    s1 = math.sqrt(1 - qs)
    n_max = lz.size + rz.size + 2 * x.size
    xs = np.empty(n_max)
    wx = np.empty(n_max)
    brk = np.empty(2)
    G = 0.0
    dG = 0.0
    for i in range(zo.size):
        z = zo[i]
        nb = breaks2(-sqm * z / s, np.inf, frame, brk)
        k = fill_nodes(brk, nb, frame, x, xc, w, lz, lw, rz, rw, xs, wx)
        c = -np.inf
        for j in range(k):
            if wx[j] > 0:
                lv = beta * log_H_nb(-(sqm * z + s * xs[j]) / s1)
                if lv > c:
                    c = lv
        S0, S1 = sto_x(xs[:k], wx[:k], z, qm, qs, beta, c)
        G += wo[i] * (c + math.log(S0))
        dG += wo[i] * S1 / S0
    return G, dG
