r"""Monte Carlo of the high-temperature Gibbs measure of a soft committee machine.

The measure is :math:`P(W) \propto \exp(-N\alpha K\,\epsilon_g(W))` on the product of the K
spheres :math:`|w_i|^2 = N`, with the teacher the first K coordinate axes scaled to norm
:math:`\sqrt N` (orthonormal, T = I).  :math:`\epsilon_g` is computed *exactly* from the
sampled overlaps :math:`R_{in} = w_i\cdot w^*_n/N`, :math:`Q_{ij} = w_i\cdot w_j/N` with the
pair moments of :mod:`statmech.scm` (Oostwal, Straat & Biehl, arXiv:1910.07476, Eqs. 13-16 at
beta -> 0: the energy is
:math:`\beta\langle E\rangle = N\alpha K\epsilon_g`).

Algorithm (exact Gibbs-within-Metropolis, vectorized over independent chains): the energy
depends on :math:`w_i` only through its projection on the d = 2K-1 dimensional space
V spanned by the teacher vectors and the other students.  Writing
:math:`w_i = \sqrt N\,(\sum_k a_k v_k) + w_\perp`, the uniform measure on the sphere gives a
the density :math:`(1-|a|^2)^{(N-d-2)/2}` and :math:`w_\perp` uniform on its sphere.  Each
update of unit i runs ``n_inner`` Metropolis steps on a (d dimensions, Gaussian proposals)
and then draws a fresh :math:`w_\perp` exactly; one sweep updates every unit once.  This
decorrelates in O(1) sweeps instead of the O(N^2) single-coordinate moves of a naive
Metropolis on the N-sphere.

Public: :func:`gibbs_scm` -> :class:`SCMSample`, :func:`energy` (N alpha K eps_g of a
configuration).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import check_int, check_range
from ._result import Simulation

__all__ = ["gibbs_scm", "SCMSample", "energy", "site_symmetric_overlaps"]


def _m(info, rho):
    return info.m(np.clip(rho, -1.0, 1.0))


def energy(W, alpha, activation="erf"):
    """N alpha K eps_g of student weights W (K x N, rows of norm sqrt N) for the teacher
    made of the first K coordinate axes (norm sqrt N): the exponent of the Gibbs measure."""
    from .. import scm
    W = np.asarray(W, dtype=float)
    K, N = W.shape
    R = W[:, :K] / math.sqrt(N)
    Q = W @ W.T / N
    return N * alpha * K * scm.generalization_error(R, Q, np.eye(K), activation)


def site_symmetric_overlaps(R, Q, anti=False):
    """(R, S, C) of one configuration: R the mean diagonal after relabelling the students by
    the assignment maximizing (or, with ``anti``, minimizing) sum_i R_{i pi(i)}."""
    from itertools import permutations
    K = R.shape[0]
    perms = list(permutations(range(K))) if K <= 7 else None
    if perms is None:
        from scipy.optimize import linear_sum_assignment
        r, c = linear_sum_assignment(R if anti else -R)
        best = c[np.argsort(r)]
    else:
        scores = [sum(R[i, p[i]] for i in range(K)) for p in perms]
        best = perms[int(np.argmin(scores) if anti else np.argmax(scores))]
    diag = np.array([R[i, best[i]] for i in range(K)])
    Rd = diag.mean()
    S = (R.sum() - diag.sum()) / (K * (K - 1))
    C = (Q.sum() - np.trace(Q)) / (K * (K - 1))
    return Rd, S, C


@dataclass(frozen=True, repr=False)
class SCMSample(Simulation):
    """Result of :func:`gibbs_scm`.

    ``R, S, C, generalization_error`` means over chains and measurement sweeps, ``*_err``
    the standard errors from the spread of the independent chain means; ``chains`` the
    per-chain means (n_chains x 4: R, S, C, eps_g); ``acceptance`` of the inner moves;
    ``params`` (alpha, K, N, activation, sweeps ...).

    Protocol: the headline is ``generalization_error`` with ``error`` =
    ``generalization_error_err``; ``iterations`` = the sweeps of each chain (burn-in and
    measurement); ``converged`` True and ``residual`` 0.0 (a fixed number of sweeps: compare
    chains started from different states to judge equilibration); ``ansatz`` ``"-"``.
    """
    R: float
    S: float
    C: float
    generalization_error: float
    R_err: float
    S_err: float
    C_err: float
    generalization_error_err: float
    chains: np.ndarray
    acceptance: float
    params: dict

    headline = "generalization_error"
    converged = True
    residual = 0.0

    @property
    def error(self):
        """The standard error of ``generalization_error``."""
        return self.generalization_error_err

    @property
    def iterations(self):
        """Sweeps per chain (burn-in and measurement)."""
        return int(self.params.get("n_burn", 0)) + int(self.params.get("n_sweeps", 0))


def gibbs_scm(alpha, K, activation="erf", N=200, *, n_chains=16, n_sweeps=400, n_burn=150, n_inner=30,
              seed=0, init="random", anti=False, progress=False):
    """Sample the high-temperature Gibbs measure exp(-N alpha K eps_g) of a K-unit SCM student.

    Parameters
    ----------
    alpha : alpha = beta P / (K N) >= 0;  K : integer >= 1;  N : input dimension (>= 4K)
    activation : "erf", "relu", "linear" or a callable (as in :mod:`statmech.scm`)
    n_chains : independent chains (vectorized); n_sweeps : measurement sweeps after
    n_burn thermalization sweeps; n_inner : Metropolis steps on the projection per update
    init : "random" (uniform on the spheres) or "teacher" (w_i = teacher i, specialized) or
    "anti" (w_i near -teacher i) -- to follow a metastable state
    anti : measure R with the assignment minimizing sum R (anti-specialized states)
    """
    from .. import scm
    alpha = float(check_range("alpha", alpha, 0.0))
    K = check_int("K", K, 1)
    N = check_int("N", N, 4 * K)
    n_chains = check_int("n_chains", n_chains, 2)
    n_sweeps = check_int("n_sweeps", n_sweeps, 1)
    n_burn = check_int("n_burn", n_burn, 0)
    n_inner = check_int("n_inner", n_inner, 1)
    if init not in ("random", "teacher", "anti"):
        raise ValueError(f"init must be one of 'random', 'teacher', 'anti', got {init!r}")
    info = scm.activation_info(activation)
    rng = np.random.default_rng(seed)
    B = n_chains
    sq = math.sqrt(N)
    W = rng.normal(size=(B, K, N))
    if init in ("teacher", "anti"):
        sgn = 1.0 if init == "teacher" else -1.0
        for i in range(K):
            W[:, i, :] *= 0.3
            W[:, i, i] += sgn * sq
    W *= sq / np.linalg.norm(W, axis=2, keepdims=True)
    d = 2 * K - 1
    expo = 0.5 * (N - d - 2)
    # proposal width ~ the conditional width of a: 1/sqrt(N (1 + alpha |m''|))
    sig = 0.7 / math.sqrt(N * (1.0 + alpha))
    acc = 0
    tot = 0
    rec = []
    it = range(n_burn + n_sweeps)
    if progress:
        from tqdm.auto import tqdm
        it = tqdm(it, desc=f"SCM Gibbs K={K} alpha={alpha:g}")
    for sweep in it:
        for i in range(K):
            others = [j for j in range(K) if j != i]
            # orthonormal basis of the other students' components orthogonal to the teacher axes
            U = W[:, others, K:].copy()                       # (B, K-1, N-K)
            if K > 1:
                Qo, _ = np.linalg.qr(np.transpose(U, (0, 2, 1)))  # (B, N-K, K-1)
                Ub = np.transpose(Qo, (0, 2, 1))             # (B, K-1, N-K)
            wi = W[:, i, :]
            a = np.empty((B, d))
            a[:, :K] = wi[:, :K] / sq
            if K > 1:
                a[:, K:] = np.einsum("bkn,bn->bk", Ub, wi[:, K:]) / sq
                # Q_ij = sum_n a_n w_j[n]/sqrt N + sum_k a_{K+k} (u_k . w_j[K:])/sqrt N
                Lt = W[:, others, :K] / sq                   # (B, K-1, K)
                Lu = np.einsum("bkn,bjn->bjk", Ub, W[:, others, K:]) / sq  # (B, K-1, K-1)
                L = np.concatenate([Lt, Lu], axis=2)         # (B, K-1, d)

            def logp(a):
                r2 = np.sum(a * a, axis=1)
                ok = r2 < 1.0
                e = -np.sum(_m(info, a[:, :K]), axis=1)
                if K > 1:
                    q = np.einsum("bjd,bd->bj", L, a)
                    e = e + np.sum(_m(info, q), axis=1)
                with np.errstate(divide="ignore", invalid="ignore"):
                    lp = expo * np.log(np.where(ok, 1.0 - r2, 1.0)) - N * alpha * e
                return np.where(ok, lp, -np.inf)
            lp = logp(a)
            for _ in range(n_inner):
                prop = a + sig * rng.normal(size=a.shape)
                lq = logp(prop)
                take = np.log(rng.random(B)) < (lq - lp)
                a[take] = prop[take]
                lp[take] = lq[take]
                acc += int(take.sum())
                tot += B
            # rebuild w_i: projection part + a fresh uniform perpendicular part
            new = np.zeros((B, N))
            new[:, :K] = a[:, :K] * sq
            if K > 1:
                new[:, K:] = np.einsum("bk,bkn->bn", a[:, K:], Ub) * sq
            g = rng.normal(size=(B, N))
            g[:, :K] = 0.0
            if K > 1:
                g[:, K:] -= np.einsum("bk,bkn->bn", np.einsum("bkn,bn->bk", Ub, g[:, K:]), Ub)
            r2 = np.sum(a * a, axis=1)
            g *= (sq * np.sqrt(np.maximum(1.0 - r2, 0.0)) / np.linalg.norm(g, axis=1))[:, None]
            W[:, i, :] = new + g
        if sweep >= n_burn:
            Rm = W[:, :, :K] / sq
            Qm = np.einsum("bin,bjn->bij", W, W) / N
            eps = np.array([scm.generalization_error(Rm[b], Qm[b], np.eye(K), info) for b in range(B)])
            rec.append((Rm, Qm, eps))
    # relabel the students of each chain once, from its time-averaged R matrix (a per-sample
    # assignment would bias R upwards by the fluctuations in the unspecialized state)
    chains = np.empty((B, 4))
    for b in range(B):
        Rbar = np.mean([r[0][b] for r in rec], axis=0)
        Qbar = np.mean([r[1][b] for r in rec], axis=0)
        chains[b, :3] = site_symmetric_overlaps(Rbar, Qbar, anti=anti)
        chains[b, 3] = np.mean([r[2][b] for r in rec])
    mean = chains.mean(axis=0)
    err = chains.std(axis=0, ddof=1) / math.sqrt(B)
    return SCMSample(*map(float, mean), *map(float, err), chains, acc / max(tot, 1),
                     {"alpha": alpha, "K": K, "N": N, "activation": info.name, "n_chains": B,
                      "n_sweeps": n_sweeps, "n_burn": n_burn, "n_inner": n_inner, "seed": seed, "init": init})
