"""Hand-written numba loops that tabulate the innermost level of the Parisi recursion.

Included in the kernel module of :mod:`statmech.rsb.channels` (``@kernels(include=...)``),
where the sympy-generated scalar kernels ``hinge_terms``, ``abs_terms`` and
``logh_terms`` are module globals.  Each loop fills, on the lattice ``h = h0 + j d``
(j = 0 .. n-1), the innermost function and its derivatives with respect to its
parameters.  The two exponentials of a frozen level are combined by a log-sum-exp and
the derivatives by the corresponding softmax weights, so nothing overflows.
"""
import math
import typing

import numba
import numpy as np

if typing.TYPE_CHECKING:  # generated kernels (module globals at run time)
    from statmech.rsb.channels import abs_terms, abs_terms0, hinge_terms, hinge_terms0, logh_terms  # noqa: F401


@numba.njit(cache=True, fastmath=False)
def _lse2(a, b):
    """log(e^a + e^b) and the weight e^a / (e^a + e^b)."""
    if a >= b:
        e = math.exp(b - a)
        return a + math.log1p(e), 1.0 / (1.0 + e)
    e = math.exp(a - b)
    return b + math.log1p(e), e / (1.0 + e)


@numba.njit(cache=True, fastmath=False)
def hinge_frozen_grid(h0, d, n, s2, y, kappa):
    """F(h) = (1/y) log E_z exp(-y (kappa - h - sqrt(s2) z)_+^2 / 2), dF/ds2, dF/dy."""
    F = np.empty(n)
    Fs = np.empty(n)
    Fy = np.empty(n)
    if y == 0.0:  # m -> 0: plain average; dF/dy is not used there
        for j in range(n):
            F[j], Fs[j] = hinge_terms0(h0 + j * d, s2, kappa)
            Fy[j] = 0.0
        return F, Fs, Fy
    for j in range(n):
        A, B, As, Bs, By = hinge_terms(h0 + j * d, s2, y, kappa)
        L, pa = _lse2(A, B)
        pb = 1.0 - pa
        F[j] = L / y
        Fs[j] = (pa * As + pb * Bs) / y
        Fy[j] = (pb * By - F[j]) / y
    return F, Fs, Fy


@numba.njit(cache=True, fastmath=False)
def abs_frozen_grid(h0, d, n, s2, y):
    """F(h) = (1/y) log E_z exp(y |h + sqrt(s2) z|), dF/ds2, dF/dy."""
    F = np.empty(n)
    Fs = np.empty(n)
    Fy = np.empty(n)
    if y == 0.0:
        for j in range(n):
            F[j], Fs[j] = abs_terms0(h0 + j * d, s2)
            Fy[j] = 0.0
        return F, Fs, Fy
    for j in range(n):
        A, B, As, Bs, Ay, By = abs_terms(h0 + j * d, s2, y)
        L, pa = _lse2(A, B)
        pb = 1.0 - pa
        F[j] = 0.5 * y * s2 + L / y
        Fs[j] = 0.5 * y + (pa * As + pb * Bs) / y
        Fy[j] = 0.5 * s2 - L / (y * y) + (pa * Ay + pb * By) / y
    return F, Fs, Fy


@numba.njit(cache=True, fastmath=False)
def logh_terminal_grid(h0, d, n, p, kappa):
    """f(h) = log H((kappa - h)/sqrt(p)) and df/dp (p = 1 - q_k)."""
    F = np.empty(n)
    Fp = np.empty(n)
    for j in range(n):
        F[j], Fp[j] = logh_terms(h0 + j * d, p, kappa)
    return F, Fp
