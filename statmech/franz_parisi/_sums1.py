"""Quadrature sums of the FP integrands on a 1RSB stochastic reference (numba).

Not imported directly: ``@kernels(include=("statmech.franz_parisi._rules",
"statmech.franz_parisi._sums1"))`` on ``statmech.franz_parisi._equations._STFP1`` appends this text
to the generated kernel module, where ``l2c_der`` and ``logH_der`` (``F`` and its first six
derivatives, sympy) and the inner rules of :mod:`._rules` are module globals; call the functions
as ``_STFP1.dtable_S``, ``_STFP1.dtable_E`` and ``_STFP1.fp1_sums``.

Both FP terms are ``sum_n W_n E_y F(u_n + v y)`` with ``u_n = sum_a c_a C[n, a]`` linear in the
node coordinates ``C`` (docs/franz_parisi.md).  With ``D_k(u) = E_y F^(k)(u + v y)``::

    d/dc_a = sum W D_1 C_a,   d/dv = v sum W D_2,
    d2/dc_a dc_b = sum W D_2 C_a C_b,   d2/dc_a dv = v sum W D_3 C_a,   d2/dv2 = sum W (D_2 + v^2 D_4)

(Stein's lemma, ``E[y f(u + v y)] = v E f'``).  ``D_0 .. D_6`` are tabulated on a uniform grid in
``u`` (each entry an inner sum with a breakpoint at the layer ``y = -u/v``: :func:`dtable_S`,
:func:`dtable_E`) and ``D_0 .. D_4`` interpolated at every node by the quintic Hermite polynomial
of its cell from ``(D_k, D_k+1, D_k+2)`` (:func:`fp1_sums`): one table per evaluation instead of
an inner sum per node.
"""
import math
import typing

import numba
import numpy as np

if typing.TYPE_CHECKING:
    from statmech.franz_parisi._equations import l2c_der, logH_der
    from statmech.franz_parisi._rules import breaks2, fill_nodes


@numba.njit(cache=True)
def dtable_S(u0, hs, n, sig, frame, x, xc, w, lz, lw, rz, rw):
    """``D_k(u0 + j hs) = E_y F^(k)(u + sig y)``, ``F = log 2cosh``, k = 0..6, j < n."""
    out = np.zeros((7, n))
    nmax = lz.size + rz.size + 2 * x.size
    ys = np.empty(nmax)
    wy = np.empty(nmax)
    brk = np.empty(2)
    for j in range(n):
        u = u0 + j * hs
        nb = breaks2(-u / sig, np.inf, frame, brk)
        k = fill_nodes(brk, nb, frame, x, xc, w, lz, lw, rz, rw, ys, wy)
        for i in range(k):
            if wy[i] == 0.0:
                continue
            r = l2c_der(u + sig * ys[i])
            for a in range(7):
                out[a, j] += wy[i] * r[a]
    return out


@numba.njit(cache=True)
def dtable_E(u0, hs, n, sig, frame, x, xc, w, lz, lw, rz, rw):
    """``D_k(u0 + j hs) = E_e F^(k)(u + sig e)``, ``F = log H``, k = 0..6, j < n."""
    out = np.zeros((7, n))
    nmax = lz.size + rz.size + 2 * x.size
    ys = np.empty(nmax)
    wy = np.empty(nmax)
    brk = np.empty(2)
    for j in range(n):
        u = u0 + j * hs
        nb = breaks2(-u / sig, np.inf, frame, brk)
        k = fill_nodes(brk, nb, frame, x, xc, w, lz, lw, rz, rw, ys, wy)
        for i in range(k):
            if wy[i] == 0.0:
                continue
            r = logH_der(u + sig * ys[i])
            for a in range(7):
                out[a, j] += wy[i] * r[a]
    return out


@numba.njit(cache=True)
def u_range(C, coef):
    """Smallest and largest ``u = C @ coef`` over the nodes."""
    lo = np.inf
    hi = -np.inf
    for i in range(C.shape[0]):
        u = 0.0
        for a in range(C.shape[1]):
            u += coef[a] * C[i, a]
        lo = min(lo, u)
        hi = max(hi, u)
    return lo, hi


@numba.njit(cache=True)
def fp1_sums(W, C, coef, T, u0, hs):
    """``(S0, S1[a], S2, S2[a, b], S3[a], S4)`` = sums of ``W D_0``, ``W D_1 C_a``, ``W D_2``,
    ``W D_2 C_a C_b``, ``W D_3 C_a``, ``W D_4`` over the nodes, ``D_k`` interpolated from the
    table ``T`` (rows k = 0..6 on ``u0 + j hs``)."""
    d = C.shape[1]
    ng = T.shape[1]
    S0 = 0.0
    S2 = 0.0
    S4 = 0.0
    S1 = np.zeros(d)
    S3 = np.zeros(d)
    S22 = np.zeros((d, d))
    h2 = hs * hs
    for i in range(W.size):
        wg = W[i]
        if wg == 0.0:
            continue
        u = 0.0
        for a in range(d):
            u += coef[a] * C[i, a]
        s = (u - u0) / hs
        j = int(math.floor(s))
        if j < 0:
            j = 0
        if j > ng - 2:
            j = ng - 2
        t = s - j
        t2 = t * t
        t3 = t2 * t
        t4 = t3 * t
        t5 = t4 * t
        b00 = 1.0 - 10.0 * t3 + 15.0 * t4 - 6.0 * t5
        b10 = t - 6.0 * t3 + 8.0 * t4 - 3.0 * t5
        b20 = 0.5 * (t2 - 3.0 * t3 + 3.0 * t4 - t5)
        b01 = 10.0 * t3 - 15.0 * t4 + 6.0 * t5
        b11 = -4.0 * t3 + 7.0 * t4 - 3.0 * t5
        b21 = 0.5 * (t3 - 2.0 * t4 + t5)
        D0 = (b00 * T[0, j] + b10 * hs * T[1, j] + b20 * h2 * T[2, j]
              + b01 * T[0, j + 1] + b11 * hs * T[1, j + 1] + b21 * h2 * T[2, j + 1])
        D1 = (b00 * T[1, j] + b10 * hs * T[2, j] + b20 * h2 * T[3, j]
              + b01 * T[1, j + 1] + b11 * hs * T[2, j + 1] + b21 * h2 * T[3, j + 1])
        D2 = (b00 * T[2, j] + b10 * hs * T[3, j] + b20 * h2 * T[4, j]
              + b01 * T[2, j + 1] + b11 * hs * T[3, j + 1] + b21 * h2 * T[4, j + 1])
        D3 = (b00 * T[3, j] + b10 * hs * T[4, j] + b20 * h2 * T[5, j]
              + b01 * T[3, j + 1] + b11 * hs * T[4, j + 1] + b21 * h2 * T[5, j + 1])
        D4 = (b00 * T[4, j] + b10 * hs * T[5, j] + b20 * h2 * T[6, j]
              + b01 * T[4, j + 1] + b11 * hs * T[5, j + 1] + b21 * h2 * T[6, j + 1])
        S0 += wg * D0
        S2 += wg * D2
        S4 += wg * D4
        for a in range(d):
            ca = C[i, a]
            S1[a] += wg * D1 * ca
            S3[a] += wg * D3 * ca
            for b in range(a, d):
                S22[a, b] += wg * D2 * ca * C[i, b]
    for a in range(d):
        for b in range(a):
            S22[a, b] = S22[b, a]
    return S0, S1, S2, S22, S3, S4
