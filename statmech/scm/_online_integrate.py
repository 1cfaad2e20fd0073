"""Dormand--Prince 8(5,3) with dense output, entirely in numba, for the online-learning ODEs.

The method of Hairer, Norsett & Wanner (Solving ODEs I, Sec. II.10, code DOP853): 12 stages,
order 8, the error estimate built from the 5th- and 3rd-order embedded formulas, step control
h_new = h min(10, max(0.2, 0.9 err^(-1/8))), and the 7th-order continuous extension (3 extra
stages) evaluated only in the steps that contain requested output points.  The Butcher tableau
is read from scipy (``scipy.integrate._ivp.dop853_coefficients``, the published coefficients)
and passed to the kernel as arrays.  One call integrates from ``t0`` to ``t_end`` and returns
the state at every output point in between; :func:`statmech.scm.online` chains calls between
checkpoints.
"""
from __future__ import annotations

import math

import numba
import numpy as np

from ._online_odes import rhs

_TABLEAU = None


def tableau():
    """(A, B, C, E3, E5, D) of DOP853 as float arrays (cached)."""
    global _TABLEAU
    if _TABLEAU is None:
        from scipy.integrate._ivp import dop853_coefficients as d
        _TABLEAU = tuple(np.ascontiguousarray(np.asarray(x, dtype=float))
                         for x in (d.A, d.B, d.C, d.E3, d.E5, d.D))
    return _TABLEAU


@numba.njit(cache=True)
def _norm(v, scale):
    s = 0.0
    for j in range(v.size):
        x = v[j] / scale[j]
        s += x * x
    return math.sqrt(s / v.size)


@numba.njit(cache=True)
def _f(mode, code, y, K, M, T, a, b, lr, noise2, out):
    rhs(mode, code, y, K, M, T, a, b, lr, noise2, out)


@numba.njit(cache=True)
def dop853(mode, code, y0, t0, t_end, t_out, K, M, T, a, b, lr, noise2, rtol, atol, h_init, max_steps,
           A, B, C, E3, E5, D):
    """Integrate from t0 towards t_end.

    Returns (Y, y, h, t, n_out, steps, rejected, n_rhs, status, err_sum): the states at the
    first ``n_out`` output points ``t_out`` (sorted, >= t0), the state ``y`` at the time ``t``
    reached, the next step size, the counters, ``status`` (0 = t_end reached, 1 = ``max_steps``
    steps taken (continue from (t, y, h)), 2 = step size underflow, 3 = non-finite state) and the
    sum of the accepted steps' local error estimates (absolute, max norm)."""
    n = y0.size
    nout = t_out.size
    Y = np.empty((nout, n))
    Kx = np.empty((16, n))
    y = y0.copy()
    ynew = np.empty(n)
    ytmp = np.empty(n)
    scale = np.empty(n)
    err5 = np.empty(n)
    err3 = np.empty(n)
    F = np.empty((7, n))
    t = t0
    nf = 0
    _f(mode, code, y, K, M, T, a, b, lr, noise2, Kx[0])
    nf += 1
    # initial step (Hairer's heuristic) unless given
    h = h_init
    if h <= 0.0:
        for j in range(n):
            scale[j] = atol + abs(y[j]) * rtol
        d0 = _norm(y, scale)
        d1 = _norm(Kx[0], scale)
        h0 = 1e-6 if (d0 < 1e-5 or d1 < 1e-5) else 0.01 * d0 / d1
        h0 = min(h0, t_end - t0)
        for j in range(n):
            ytmp[j] = y[j] + h0 * Kx[0, j]
        _f(mode, code, ytmp, K, M, T, a, b, lr, noise2, Kx[1])
        nf += 1
        for j in range(n):
            err5[j] = Kx[1, j] - Kx[0, j]
        d2 = _norm(err5, scale) / h0
        if d1 <= 1e-15 and d2 <= 1e-15:
            h1 = max(1e-6, h0 * 1e-3)
        else:
            h1 = (0.01 / max(d1, d2)) ** (1.0 / 8.0)
        h = min(100.0 * h0, h1)
    h = min(h, t_end - t0)
    steps = 0
    rejected = 0
    status = 0
    err_sum = 0.0
    io = 0
    while io < nout and t_out[io] <= t:
        for j in range(n):
            Y[io, j] = y[j]
        io += 1
    hmin = 1e-14 * max(1.0, abs(t_end))
    while t < t_end:
        if steps >= max_steps:
            status = 1
            break
        if h < hmin:
            status = 2
            break
        last = False
        if t + h >= t_end or t + 1.0001 * h >= t_end:
            h = t_end - t
            last = True
        # stages 1..11
        for s in range(1, 12):
            for j in range(n):
                acc = 0.0
                for r in range(s):
                    acc += A[s, r] * Kx[r, j]
                ytmp[j] = y[j] + h * acc
            _f(mode, code, ytmp, K, M, T, a, b, lr, noise2, Kx[s])
        nf += 11
        ok = True
        for j in range(n):
            acc = 0.0
            for r in range(12):
                acc += B[r] * Kx[r, j]
            ynew[j] = y[j] + h * acc
            if not math.isfinite(ynew[j]):
                ok = False
        if not ok:
            h *= 0.2
            rejected += 1
            if rejected > 50 + 10 * steps:
                status = 3
                break
            continue
        _f(mode, code, ynew, K, M, T, a, b, lr, noise2, Kx[12])
        nf += 1
        emax = 0.0
        for j in range(n):
            scale[j] = atol + max(abs(y[j]), abs(ynew[j])) * rtol
            e5 = 0.0
            e3 = 0.0
            for r in range(13):
                e5 += E5[r] * Kx[r, j]
                e3 += E3[r] * Kx[r, j]
            err5[j] = e5 / scale[j]
            err3[j] = e3 / scale[j]
        n5 = 0.0
        n3 = 0.0
        for j in range(n):
            n5 += err5[j] * err5[j]
            n3 += err3[j] * err3[j]
        if n5 == 0.0 and n3 == 0.0:
            en = 0.0
        else:
            en = h * n5 / math.sqrt((n5 + 0.01 * n3) * n)
        if en < 1.0:
            # the absolute local error (max norm), for the accumulated indicator
            corr = 0.0 if n5 == 0.0 else math.sqrt(n5) / math.sqrt(n5 + 0.01 * n3)
            for j in range(n):
                x = abs(h * err5[j] * scale[j] * corr)
                if x > emax:
                    emax = x
            err_sum += emax
            # dense output for the output points in (t, t + h]
            tn = t + h
            if io < nout and t_out[io] <= tn:
                for s in range(13, 16):
                    for j in range(n):
                        acc = 0.0
                        for r in range(s):
                            acc += A[s, r] * Kx[r, j]
                        ytmp[j] = y[j] + h * acc
                    _f(mode, code, ytmp, K, M, T, a, b, lr, noise2, Kx[s])
                nf += 3
                for j in range(n):
                    dy = ynew[j] - y[j]
                    F[0, j] = dy
                    F[1, j] = h * Kx[0, j] - dy
                    F[2, j] = 2.0 * dy - h * (Kx[12, j] + Kx[0, j])
                    for q in range(4):
                        acc = 0.0
                        for r in range(16):
                            acc += D[q, r] * Kx[r, j]
                        F[3 + q, j] = h * acc
                while io < nout and t_out[io] <= tn:
                    x = (t_out[io] - t) / h
                    for j in range(n):
                        v = F[6, j]
                        v = F[5, j] + x * v
                        v = F[4, j] + (1.0 - x) * v
                        v = F[3, j] + x * v
                        v = F[2, j] + (1.0 - x) * v
                        v = F[1, j] + x * v
                        v = F[0, j] + (1.0 - x) * v
                        Y[io, j] = y[j] + x * v
                    io += 1
            t = tn if not last else t_end
            for j in range(n):
                y[j] = ynew[j]
                Kx[0, j] = Kx[12, j]
            steps += 1
            fac = 10.0 if en == 0.0 else min(10.0, max(0.2, 0.9 * en ** (-1.0 / 8.0)))
            h = h * fac
        else:
            rejected += 1
            h = h * max(0.2, 0.9 * en ** (-1.0 / 8.0))
    return Y, y, h, t, io, steps, rejected, nf, status, err_sum
