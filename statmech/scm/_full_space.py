"""Stability beyond site symmetry: the Hessian in the K^2 + K(K-1)/2 individual overlaps.

At a site-symmetric point the Hessian commutes with simultaneous permutations of student
and teacher units, so it block-diagonalizes on the isotypic components of S_K (see
docs/scm.md, "Numerical method").
"""
from __future__ import annotations

import numpy as np

from ._activation import activation_info
from ._equations import _kern
from ._free_energy import _check_alpha, _check_K


def _full_matrices(K, R, S, C):
    k = int(K)
    Rm = np.full((k, k), S) + (R - S) * np.eye(k)
    Qm = np.full((k, k), C) + (1 - C) * np.eye(k)
    return Rm, Qm


def _full_moments(info, X):
    if info.code < 3:
        out = np.array([getattr(_kern, f"pm_{info.name}")(float(x)) for x in X.ravel()])
    else:
        out = np.array([_kern.moments(3, float(x), info.cc) for x in X.ravel()])
    return [out[:, i].reshape(X.shape) for i in range(3)]


def _full_gradient(info, alpha, Rm, Qm):
    """Gradient of beta f in the individual overlaps: (dR (K x K), dQ (K x K, off-diagonal used))."""
    A = Qm - Rm @ Rm.T
    B = np.linalg.inv(A)
    _, dmR, _ = _full_moments(info, Rm)
    _, dmQ, _ = _full_moments(info, Qm - np.eye(Qm.shape[0]))
    gR = -alpha * dmR + B @ Rm
    gQ = alpha * dmQ - B
    np.fill_diagonal(gQ, 0.0)
    return gR, gQ


def _full_bilinear(info, alpha, Rm, Qm, d2R, d2Q, dirs1, dirs2):
    """Matrix of second derivatives u^T H v for lists of directions (dR, dQ).

    beta f = -alpha sum_in m(R_in) + alpha sum_{i<j} m(Q_ij) - (1/2) ln det(Q - R R^T) + const
    (T = I, K = M); d2(-s)[u, v] = (1/2)[tr(B dA_u B dA_v) - tr(B d2A_uv)], B = A^{-1},
    dA = dQ - dR R^T - R dR^T, d2A_uv = -(dR_u dR_v^T + dR_v dR_u^T).
    """
    A = Qm - Rm @ Rm.T
    B = np.linalg.inv(A)
    out = np.empty((len(dirs1), len(dirs2)))
    dA1 = [dQ - dR @ Rm.T - Rm @ dR.T for dR, dQ in dirs1]
    dA2 = [dQ - dR @ Rm.T - Rm @ dR.T for dR, dQ in dirs2]
    BdA1 = [B @ a for a in dA1]
    BdA2 = [B @ a for a in dA2]
    for i, (u, bu) in enumerate(zip(dirs1, BdA1)):
        for j, (v, bv) in enumerate(zip(dirs2, BdA2)):
            d2A = -(u[0] @ v[0].T + v[0] @ u[0].T)
            ent = 0.5 * (np.sum(bu * bv.T) - np.sum(B * d2A.T))
            en = -alpha * np.sum(d2R * u[0] * v[0]) + 0.5 * alpha * np.sum(d2Q * u[1] * v[1])
            out[i, j] = ent + en
    return out


def _full_basis(K):
    """Coordinate basis of the K^2 + K(K-1)/2 individual overlaps as (dR, dQ) pairs."""
    dirs = []
    for i in range(K):
        for n in range(K):
            dR = np.zeros((K, K))
            dR[i, n] = 1.0
            dirs.append((dR, np.zeros((K, K))))
    for i in range(K):
        for j in range(i + 1, K):
            dQ = np.zeros((K, K))
            dQ[i, j] = dQ[j, i] = 1.0
            dirs.append((np.zeros((K, K)), dQ))
    return dirs


def full_hessian(alpha, K, R, S, C, activation="erf"):
    """Gradient and Hessian of beta f in the full space of the K^2 + K(K-1)/2 individual overlaps
    {R_in, Q_ij (i<j)} at the site-symmetric point (R, S, C) (integer K = M, T = I, Q_ii = 1).

    beta f = alpha K eps_g({R_in, Q_ij}) - (1/2) ln det(Q - R R^T) (seed Eqs. 18, 20, 25);
    derivatives by matrix calculus (d ln det A = tr(A^-1 dA)).  Returns (gradient, Hessian)
    as a vector and a matrix in the coordinate order R_11, R_12, ..., R_KK, Q_12, ..., Q_(K-1)K.
    Costs O(K^6): meant for small K and tests; stability uses :func:`_full_blocks`.
    """
    alpha = _check_alpha(alpha)
    K = _check_K(K, allow_inf=False)
    if K != int(K):
        raise ValueError(f"K must be an integer for the full space of individual overlaps, got {K!r}")
    info = activation_info(activation)
    k = int(K)
    Rm, Qm = _full_matrices(k, R, S, C)
    gR, gQ = _full_gradient(info, alpha, Rm, Qm)
    iu = np.triu_indices(k, 1)
    grad = np.concatenate([gR.ravel(), gQ[iu]])
    _, _, d2R = _full_moments(info, Rm)
    _, _, d2Q = _full_moments(info, Qm - np.eye(k))  # the diagonal Q_ii = 1 is not a variable
    basis = _full_basis(k)
    Hm = _full_bilinear(info, alpha, Rm, Qm, d2R, d2Q, basis, basis)
    return grad, Hm


def _isotypic_vectors(K):
    """Direction sets spanning one copy-row of each isotypic component of S_K acting on
    (R, Q) by simultaneous permutation of student and teacher units."""
    k = K
    one = np.ones(k)
    I = np.eye(k)
    Z = np.zeros((k, k))
    off = np.ones((k, k)) - I
    comps = {"trivial": ([(I, Z), (off, Z), (Z, off)], 1)}
    x = np.zeros(k)
    x[0], x[1] = 1.0, -1.0
    xq = (x[:, None] + x[None, :]) * off
    comps["standard"] = ([(np.diag(x), Z), (np.outer(x, one), Z), (np.outer(one, x), Z), (Z, xq)], k - 1)
    if k >= 3:
        z = np.zeros((k, k))
        for a, b in ((0, 1), (1, 2), (2, 0)):
            z[a, b] += 1.0
            z[b, a] -= 1.0
        comps["[K-2,1,1]"] = ([(z, Z)], (k - 1) * (k - 2) // 2)
    if k >= 4:
        y = np.zeros((k, k))
        for a, b, sgn in ((0, 1, 1), (2, 3, 1), (0, 2, -1), (1, 3, -1)):
            y[a, b] = y[b, a] = sgn
        comps["[K-2,2]"] = ([(y, Z), (Z, y)], k * (k - 3) // 2)
    return comps


def _full_blocks(info, alpha, K, R, S, C):
    """Distinct Hessian eigenvalues in the full overlap space, by S_K symmetry blocks.

    The Hessian at a site-symmetric point commutes with the simultaneous permutations of
    student and teacher units, so it is block diagonal on the isotypic components
    trivial (3 copies), standard (4), [K-2,1,1] (1), [K-2,2] (2): a 3x3, 4x4, 1x1 and 2x2
    generalized eigenproblem (Gram matrix of the copies; dependent copies removed).
    Returns dict name -> (eigenvalues ascending, multiplicity).
    """
    k = int(K)
    Rm, Qm = _full_matrices(k, R, S, C)
    _, _, d2R = _full_moments(info, Rm)
    _, _, d2Q = _full_moments(info, Qm - np.eye(k))  # the diagonal Q_ii = 1 is not a variable
    out = {}
    for name, (vecs, mult) in _isotypic_vectors(k).items():
        G = np.array([[np.sum(u[0] * v[0]) + 0.5 * np.sum(u[1] * v[1]) for v in vecs] for u in vecs])
        Hb = _full_bilinear(info, alpha, Rm, Qm, d2R, d2Q, vecs, vecs)
        w, U = np.linalg.eigh(G)
        keep = w > 1e-10 * w.max()
        W = U[:, keep] / np.sqrt(w[keep])
        ev = np.linalg.eigvalsh(W.T @ Hb @ W)
        out[name] = (ev, mult)
    return out

