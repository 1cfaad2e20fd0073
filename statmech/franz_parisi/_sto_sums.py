"""Outer quadrature loops of the stochastic-perceptron reference (numba).

Not imported directly: ``@kernels(include=("statmech.franz_parisi._rules",
"statmech.franz_parisi._sto_sums"))`` on ``statmech.franz_parisi._equations._STO`` appends this
text to the generated kernel module, where ``sto_x`` (the sympy integrand) and the inner rules
of :mod:`._rules` are module globals; call them as ``_STO.sto_sum_x``, ``_STO.sto_site_moments``.
"""
import math
import typing

import numba
import numpy as np

if typing.TYPE_CHECKING:
    from statmech.franz_parisi._equations import sto_m, sto_x
    from statmech.franz_parisi._rules import breaks2, fill_nodes
    from statmech.gaussian import log_H_nb


@numba.njit(cache=True)
def sto_sum_x(zo, wo, qm, qs, beta, frame, x, xc, w, lz, lw, rz, rw):
    """``(E_z log E_x H(u)^beta, its q_m derivative)`` over the outer nodes ``(zo, wo)``: per
    node the inner rule with a break at the layer ``x = -sqrt(q_m) z/sqrt(q_star - q_m)`` and
    the shift ``c = max beta log H(u)`` over its nodes of positive weight (the former Python
    loop of ``stochastic._sto_pattern_term`` with ``_x_nodes`` and ``_x_shift``)."""
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
        # c = max over the nodes of positive weight of beta log H(u): u decreases with x and
        # log H is decreasing, so the maximum sits at the largest such node (one log H, not k)
        jm = -1
        for j in range(k):
            if wx[j] > 0 and (jm < 0 or xs[j] > xs[jm]):
                jm = j
        c = beta * log_H_nb(-(sqm * z + s * xs[jm]) / s1) if jm >= 0 else -np.inf
        S0, S1 = sto_x(xs[:k], wx[:k], z, qm, qs, beta, c)
        G += wo[i] * (c + math.log(S0))
        dG += wo[i] * S1 / S0
    return G, dG


@numba.njit(cache=True)
def sto_site_moments(zs, sq, A, mp, mn, wm, out):
    """Per outer node ``z``: log zeta, <m>, <m^2>, <sign m>, <|m|> of the site measure
    ``exp(-A m^2/2 + h m)`` on [-1, 1], ``h = sq z`` (into ``out``, shape ``(len(zs), 5)``),
    from the halves ``m > 0`` (nodes ``mp``) and ``m < 0`` (``mn``), shifted by the maximum
    ``c`` of the exponent."""
    for i in range(zs.size):
        h = sq * zs[i]
        if A > 0 and abs(h / A) <= 1.0:
            c = h * h / (2 * A)
        else:
            c = -A / 2 + abs(h)
        Zp, Mp, Qp = sto_m(mp, wm, A, h, c)
        Zn, Mn, Qn = sto_m(mn, wm, A, h, c)
        Z = Zp + Zn
        out[i, 0] = c + math.log(Z)
        out[i, 1] = (Mp + Mn) / Z
        out[i, 2] = (Qp + Qn) / Z
        out[i, 3] = (Zp - Zn) / Z
        out[i, 4] = (Mp - Mn) / Z
