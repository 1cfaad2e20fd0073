"""Inner piecewise tanh--sinh rules of the FP integrals, built inside numba loops.

Not imported directly: included (``@kernels(include=("statmech.franz_parisi._rules", ...))``)
in the kernel modules of ``_equations._FP``, ``_equations._STO`` and ``_equations._STFP``, whose
outer loops (:mod:`._fp_sums`, :mod:`._sto_sums`) build per outer node the same rule as
:func:`statmech.franz_parisi._quadrature._nodes` (same nodes, same arithmetic): tanh--sinh on
every finite piece between breakpoints inside the frame ``[-F, F]``, cached
probability-scale tails beyond (the arguments come from ``_quadrature._inner_rule``).
"""
import math

import numba
import numpy as np


@numba.njit(cache=True)
def fill_nodes(brk, nb, frame, x, xc, w, lz, lw, rz, rw, zs, ws):
    """Fill ``zs, ws`` with the rule of ``_quadrature._nodes(brk[:nb])`` (``brk`` sorted,
    de-duplicated, inside the frame); returns the number of nodes."""
    k = 0
    for i in range(lz.size):
        zs[k] = lz[i]
        ws[k] = lw[i]
        k += 1
    a = -frame
    for j in range(nb + 1):
        b = brk[j] if j < nb else frame
        L = b - a
        for i in range(x.size):
            z = a + L * x[i] if x[i] < 0.5 else a + L - L * xc[i]
            zs[k] = z
            ws[k] = L * w[i] * math.exp(-0.5 * z * z) / math.sqrt(2.0 * math.pi)
            k += 1
        a = b
    for i in range(rz.size):
        zs[k] = rz[i]
        ws[k] = rw[i]
        k += 1
    return k


@numba.njit(cache=True)
def breaks2(v0, v1, frame, brk):
    """``_quadrature._breaks(v0, v1)`` restricted to ``|b| < frame - 1e-9`` (as in ``_nodes``),
    written to ``brk``; returns how many."""
    vals = np.empty(2)
    n = 0
    if math.isfinite(v0):
        vals[n] = v0
        n += 1
    if math.isfinite(v1):
        vals[n] = v1
        n += 1
    if n == 0:
        vals[0] = 0.0
        n = 1
    if n == 2 and vals[1] < vals[0]:
        vals[0], vals[1] = vals[1], vals[0]
    m = 0
    for i in range(n):
        if i > 0 and not vals[i] - vals[i - 1] > 1e-12 * (1.0 + abs(vals[i])):
            continue
        if abs(vals[i]) < frame - 1e-9:
            brk[m] = vals[i]
            m += 1
    return m


# nodes whose weight (times the outer weight and a bound of the integrand's reweighting) is
# below W_MIN are skipped at the ends of an inner rule (:func:`support`): the integrands there
# grow at most polynomially, so the sums change at the level of double-precision rounding
# (measured on every point of the FP figures: entropies change by < 5e-15)
W_MIN = 1e-22


@numba.njit(cache=True)
def support(ws, k, wmin):
    """``(k0, k1)``: nodes ``k0 <= i < k1`` of ``ws[:k]`` span every node of weight >= ``wmin``."""
    k0 = 0
    while k0 < k and ws[k0] < wmin:
        k0 += 1
    k1 = k
    while k1 > k0 and ws[k1 - 1] < wmin:
        k1 -= 1
    return k0, k1
