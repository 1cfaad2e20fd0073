"""Small dense linear algebra in numba, shared by the cores and the models' kernels.

:func:`lu_solve`: Gaussian elimination with partial pivoting, in place, for the n <= ~10
systems of Newton steps and bordered continuation systems, where numpy's per-call overhead
(argument checks, a LAPACK call, temporaries) and numba's LAPACK binding (compile time) cost
more than the arithmetic."""
import numba

__all__ = ["lu_solve", "pivot", "swap_rows"]


@numba.njit(cache=True)
def pivot(M, k):
    """(row i >= k with the largest |M[i, k]|, that magnitude): partial pivoting at step k."""
    piv = k
    big = abs(M[k, k])
    for i in range(k + 1, M.shape[0]):
        v = abs(M[i, k])
        if v > big:
            big = v
            piv = i
    return piv, big


@numba.njit(cache=True)
def swap_rows(M, a, b):
    """Exchange rows a and b of M in place."""
    for j in range(M.shape[1]):
        M[a, j], M[b, j] = M[b, j], M[a, j]


@numba.njit(cache=True)
def lu_solve(M, b):
    """Solve M u = b in place (M, b overwritten) by Gaussian elimination with partial pivoting.
    Returns False when a pivot is exactly zero."""
    n = M.shape[0]
    for k in range(n):
        piv, big = pivot(M, k)
        if big == 0.0:
            return False
        if piv != k:
            swap_rows(M, k, piv)
            b[k], b[piv] = b[piv], b[k]
        for i in range(k + 1, n):
            m = M[i, k] / M[k, k]
            if m != 0.0:
                for j in range(k + 1, n):
                    M[i, j] -= m * M[k, j]
                b[i] -= m * b[k]
    for k in range(n - 1, -1, -1):
        s = b[k]
        for j in range(k + 1, n):
            s -= M[k, j] * b[j]
        b[k] = s / M[k, k]
    return True
