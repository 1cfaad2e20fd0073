r"""Linearisation of the online-learning ODEs at the perfect solution (K = M): lr_max and lr_opt.

At the perfect solution w_i = B_i (Q = R = T) every error field e_j = x_j - y_j vanishes.  In the
deviations r_in = R_in - T_in and s_ik = E[e_i e_k] = Q_ik - R_ik - R_ki + T_ik (exactly linear in
the order parameters), expanding the Gaussian expectations of the ODEs to first order in the
covariances of e (Price's theorem; docs/online.md) gives, with lr' = lr a^2 (a = 1 or K^-1/2),

    ds/dalpha = -lr' (G s + s G) + lr'^2 W(s),        W(s)_ik = sum_jl W_ikjl s_jl
    dr/dalpha = -lr' Kr(r) + lr' A_rs(s),

G_il = E[g'(y_i) g'(y_l)], W_ikjl = E[g'(y_i) g'(y_k) g'(y_j) g'(y_l)],
Kr_(in),(jm) = sum_p (T^-1)_mp E[y_p y_n g'(y_i) g'(y_j)]: the s-block does not see r, so the
Jacobian is block triangular and its eigenvalues are those of the two diagonal blocks.  In the
coordinates (s_ii, sqrt 2 s_i<k) the operators L = G . + . G and W are symmetric (W positive
semidefinite); for T = I, Kr is symmetric too.  Hence (decay rates = minus eigenvalues):

    r-block:  lr' kappa_j,  kappa_j = eig(Kr)                (linear in lr)
    s-block:  lr' h_j(lr'), h_j(lr') = eig(L - lr' W)        (a symmetric pencil)

* ``lr_max``: the s-block loses stability where L - lr' W becomes singular: the smallest root of
  the generalized eigenvalue problem L v = lr' W v (lr_max = lr'/a^2).
* ``lr_opt`` maximises the slowest rate rho(lr') = lr' min(kappa_min, h(lr')), h = lambda_min(L - lr' W).
  h is concave (a minimum of linear functions), so f = lr' h(lr') is concave on [0, lr'_max] with one
  maximum, at f'(lr') = h + lr' h' = 0 (h' = -v.W v by Hellmann--Feynman; found by Brent's method
  on the monotone f').  If the r-block is slower there (h > kappa_min), the optimum is where
  h(lr') = kappa_min: the smallest root of the generalized eigenvalue problem
  (L - kappa_min I) v = lr' W v.
* eps_g = (a^2/2) sum_jl G_jl s_jl + O(r^2, s^2) decays like exp(-min(rho_s, 2 rho_r) alpha):
  ``lr_opt_eps`` and ``rate_opt_eps`` are the same construction with kappa_min -> 2 kappa_min.

Directions in which the perfect solution is not isolated (zero eigenvalues of Kr, or of L with W
vanishing there: linear g, where only sum_i w_i is determined) are left out and counted in
``n_neutral``.  The expectations are closed forms for erf (Gaussian g'), ReLU (orthant
probabilities) and linear g, and quadrature for any other g.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

import numpy as np

from ..errors import ConvergenceError
from ..result import Result
from ._online_common import check_convention, check_sizes, check_teacher, resolve_activation, weights
from ._online_integrals import p4_corr

__all__ = ["online_asymptotics", "OnlineAsymptotics"]


# ------------------------------------------------------------------ expectations at covariance T
def _corr(T, idx):
    d = np.sqrt(np.diag(T)[list(idx)])
    return T[np.ix_(idx, idx)] / np.outer(d, d)


def _orthant(T, idx):
    """P(y_i > 0 for the distinct i in idx)."""
    S = sorted(set(idx))
    n = len(S)
    if n == 1:
        return 0.5
    Rm = _corr(T, S)
    if n == 2:
        return 0.25 + math.asin(Rm[0, 1]) / (2 * math.pi)
    if n == 3:
        return 0.125 + (math.asin(Rm[0, 1]) + math.asin(Rm[0, 2]) + math.asin(Rm[1, 2])) / (4 * math.pi)
    return float(p4_corr(np.ascontiguousarray(Rm)))


def _erf_moment(T, idx, pq=None):
    """E[prod_{a in idx} g'(y_a) (y_p y_q)] for erf: g' = sqrt(2/pi) exp(-y^2/2) reweights the measure."""
    S = sorted(set(idx))
    n = np.array([idx.count(s) for s in S], dtype=float)
    TS = T[np.ix_(S, S)]
    A = np.eye(len(S)) + TS * n[None, :]
    val = (2.0 / math.pi) ** (len(idx) / 2.0) / math.sqrt(np.linalg.det(A))
    if pq is None:
        return val
    p, q = pq
    # C' = T - T_.S (N^-1 + T_SS)^-1 T_S. = T - T_.S N (I + T_SS N)^-1 T_S.
    Cp = T - T[:, S] @ np.linalg.solve(np.eye(len(S)) + np.diag(n) @ TS, np.diag(n)) @ T[S, :]
    return val * Cp[p, q]


def _relu_yy(T, p, n, i, j):
    """E[y_p y_n Theta(y_i) Theta(y_j)] (Stein's lemma on y_p)."""
    if i == j:
        return 0.5 * T[p, n]
    val = T[p, n] * _orthant(T, [i, j])
    for a, c in ((i, j), (j, i)):
        if T[p, a] == 0.0:
            continue
        caa = T[a, a]
        cnc = T[n, c] - T[n, a] * T[c, a] / caa
        ccc = T[c, c] - T[c, a] ** 2 / caa
        if ccc > 0.0:
            val += T[p, a] / math.sqrt(2 * math.pi * caa) * cnc / math.sqrt(2 * math.pi * ccc)
    return val


class _Moments:
    """G, W and the r-block moments for one activation at teacher overlaps T."""

    def __init__(self, act, T):
        self.act, self.T = act, T

    def gprod(self, idx):
        """E[prod g'(y_a)] over the list idx (repetitions allowed)."""
        code, T = self.act.code, self.T
        if code == 0:
            return _erf_moment(T, list(idx))
        if code == 1:
            return _orthant(T, list(idx))
        if code == 2:
            return 1.0
        return self._generic([(a, "dg") for a in idx])

    def yy(self, p, n, i, j):
        """E[y_p y_n g'(y_i) g'(y_j)]."""
        code, T = self.act.code, self.T
        if code == 0:
            return _erf_moment(T, [i, j], (p, n))
        if code == 1:
            return _relu_yy(T, p, n, i, j)
        if code == 2:
            return float(T[p, n])
        return self._generic([(p, "u"), (n, "u"), (i, "dg"), (j, "dg")])

    def _generic(self, factors):
        from ._online_generic import expectation
        fields = sorted({f for f, _ in factors})
        where = {f: k for k, f in enumerate(fields)}
        cov = self.T[np.ix_(fields, fields)]
        return expectation(self.act.generic, cov, [(where[f], kind) for f, kind in factors])


def _sym_basis(K):
    return [(i, k) for i in range(K) for k in range(i, K)]


def _operators(mom, K):
    """L, W (symmetric, on (s_ii, sqrt2 s_i<k)) and Kr (K^2 x K^2) at the perfect solution."""
    G = np.array([[mom.gprod([i, l]) for l in range(K)] for i in range(K)])
    Wt = np.zeros((K, K, K, K))
    cache = {}
    for i, k, j, l in itertools.product(range(K), repeat=4):
        key = tuple(sorted((i, k, j, l)))
        if key not in cache:
            cache[key] = mom.gprod(list(key))
        Wt[i, k, j, l] = cache[key]
    pairs = _sym_basis(K)
    n = len(pairs)
    w = np.array([1.0 if i == k else math.sqrt(2.0) for i, k in pairs])

    def mat(v):
        s = np.zeros((K, K))
        for x, (i, k), f in zip(v, pairs, w):
            s[i, k] = s[k, i] = x / f
        return s

    def vec(s):
        return np.array([s[i, k] * f for (i, k), f in zip(pairs, w)])
    L = np.empty((n, n))
    W = np.empty((n, n))
    for c in range(n):
        e = np.zeros(n)
        e[c] = 1.0
        s = mat(e)
        L[:, c] = vec(G @ s + s @ G)
        W[:, c] = vec(np.einsum("ikjl,jl->ik", Wt, s))
    L = 0.5 * (L + L.T)
    W = 0.5 * (W + W.T)
    Tinv = np.linalg.inv(mom.T)
    M = K
    E = np.zeros((K, M, K, M))            # E[y_p y_n g'_i g'_j] -> Kr
    yy = {}
    for i, n_, j in itertools.product(range(K), range(M), range(K)):
        for p in range(M):
            key = (tuple(sorted((p, n_))), tuple(sorted((i, j))))
            if key not in yy:
                yy[key] = mom.yy(p, n_, i, j)
            for m in range(M):
                E[i, n_, j, m] += Tinv[m, p] * yy[key]
    Kr = E.reshape(K * M, K * M)
    return G, L, W, Kr


@dataclass(frozen=True, repr=False)
class OnlineAsymptotics(Result):
    """The linearised convergence to the perfect solution (:func:`statmech.scm.online_asymptotics`).

    Attributes
    ----------
    lr_max : float
        The largest stable learning rate (``inf`` if the linearisation is stable at every lr, as
        for no activation studied here).
    lr_opt, rate_opt : float
        The learning rate that maximises the slowest decay rate of the order parameters, and that
        rate (the order parameters approach the perfect solution like exp(-rate_opt alpha)).
    limited_by : str
        ``"s-block"`` (the optimum is the maximum of lr' lambda_min(L - lr' W)) or ``"r-block"``
        (where lambda_min(L - lr' W) meets the slowest r-block rate).
    lr_opt_eps, rate_opt_eps : float
        The same for eps_g, which decays like exp(-min(rho_s, 2 rho_r) alpha).
    L, W : ndarray
        The s-block operators on (s_ii, sqrt 2 s_i<k): the Jacobian there is lr'(-L + lr' W),
        lr' = lr a^2.
    Kr : ndarray
        The r-block: the Jacobian there is -lr' Kr.
    G : ndarray
        E[g'(y_i) g'(y_l)].
    a2 : float
        a^2 (1 for saad-solla, 1/K normalized): lr' = lr a2.
    n_neutral : int
        Directions in which the perfect solution is not isolated (left out of the rates).
    stability : ndarray
        The decay rates at lr_opt (minus the eigenvalues, ascending; positive = stable).
    """
    K: int
    M: int
    activation: str
    convention: str
    lr_max: float
    lr_opt: float
    rate_opt: float
    limited_by: str
    lr_opt_eps: float
    rate_opt_eps: float
    G: np.ndarray
    L: np.ndarray
    W: np.ndarray
    Kr: np.ndarray
    a2: float
    n_neutral: int
    iterations: int
    error: float
    T: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    converged: bool = True
    residual: float = 0.0
    ansatz: str = "-"
    rs_stable: "bool | None" = None

    headline = "lr_opt"

    def eigenvalues(self, lr):
        """Every eigenvalue of the linearisation at the learning rate ``lr`` (real: the r-block,
        -lr' Kr, and the s-block, lr'(-L + lr' W)), ascending."""
        from ._online_common import check_lr
        lr = check_lr(lr, "OnlineAsymptotics.eigenvalues")
        lp = lr * self.a2
        ev_s = lp * np.linalg.eigvalsh(-self.L + lp * self.W)
        ev_r = -lp * np.linalg.eigvals(self.Kr).real
        return np.sort(np.concatenate([ev_s, ev_r]))

    def rates(self, lr):
        """(rho_s, rho_r): the slowest decay rates of the two blocks at ``lr`` (neutral directions left out)."""
        lp = float(lr) * self.a2
        return lp * _hmin(self._Lr, self._Wr, lp), lp * _kmin(self.Kr)

    @property
    def stability(self):
        lp = self.lr_opt * self.a2
        ev_s = lp * np.linalg.eigvalsh(self._Lr - lp * self._Wr)
        kap = np.linalg.eigvals(self.Kr).real
        kap = kap[np.abs(kap) > 1e-12 * max(1.0, np.abs(kap).max())]
        return np.sort(np.concatenate([ev_s, lp * kap]))

    @property
    def _Lr(self):
        return _reduce(self.L, self.W)[0]

    @property
    def _Wr(self):
        return _reduce(self.L, self.W)[1]


def _reduce(L, W):
    """L, W on the orthogonal complement of the null space of L (where W vanishes too)."""
    lam, V = np.linalg.eigh(L)
    keep = lam > 1e-12 * max(1.0, lam.max())
    if keep.all():
        return L, W, 0
    Vk = V[:, keep]
    return Vk.T @ L @ Vk, Vk.T @ W @ Vk, int((~keep).sum())


def _hmin(L, W, lp):
    return float(np.linalg.eigvalsh(L - lp * W)[0])


def _kmin(Kr):
    kap = np.linalg.eigvals(Kr).real
    kap = kap[np.abs(kap) > 1e-12 * max(1.0, np.abs(kap).max())]
    return float(kap.min())


def _gep_min(A, W):
    """Smallest positive root lr' of det(A - lr' W) = 0 (A positive definite): 1 / max eig of W v = mu A v."""
    from scipy.linalg import eigh
    mu = eigh(W, A, eigvals_only=True)
    top = float(mu.max())
    return math.inf if top <= 0 else 1.0 / top


def _slope(L, W, lp):
    """f'(lr') = h + lr' h' with h = lambda_min(L - lr' W), h' = -max over its eigenspace of v.W v."""
    lam, V = np.linalg.eigh(L - lp * W)
    h = lam[0]
    near = lam <= h + 1e-10 * max(1.0, abs(h))
    Vs = V[:, near]
    hp = -float(np.linalg.eigvalsh(Vs.T @ W @ Vs).max())
    return h + lp * hp


def _optimum(L, W, kappa, lp_max):
    """(lr'_opt, rate, which) maximising lr' min(kappa, h(lr'))."""
    from scipy.optimize import brentq
    if math.isinf(lp_max):
        hi = 1.0
        while _slope(L, W, hi) > 0:
            hi *= 2.0
            if hi > 1e12:
                raise ConvergenceError("online_asymptotics: the slowest rate grows without bound with lr")
    else:
        hi = lp_max
    lp1 = brentq(lambda x: _slope(L, W, x), 0.0, hi, xtol=1e-15, rtol=1e-15, maxiter=200)
    h1 = _hmin(L, W, lp1)
    if h1 <= kappa:
        return lp1, lp1 * h1, "s-block"
    lpc = _gep_min(L - kappa * np.eye(L.shape[0]), W)
    return lpc, lpc * kappa, "r-block"


def online_asymptotics(K, M, activation, *, convention="saad-solla", T=None):
    """Convergence to the perfect solution: eigenvalues(lr), lr_max, lr_opt and the optimal rate.

    Parameters
    ----------
    K, M : int
        Hidden units of student and teacher; the perfect solution w_i = B_i needs K = M.
    activation : str or callable
        ``"erf"``, ``"relu"``, ``"linear"`` or any g(x) (see :func:`statmech.scm.online`).
    convention : {"saad-solla", "normalized"}
        Output scale; the normalized rates equal the saad-solla ones at lr/K.
    T : array_like, optional
        Teacher overlaps (symmetric positive definite), default I.

    Returns
    -------
    OnlineAsymptotics
        ``lr_max`` from the generalized eigenvalue problem L v = lr' W v; ``lr_opt`` and
        ``rate_opt`` from the concave maximisation (or the generalized eigenvalue problem
        (L - kappa_min I) v = lr' W v) described in the module documentation; ``eigenvalues(lr)``.

    Raises
    ------
    ValueError
        K != M, K or M < 1, an unknown convention or activation, T not positive definite.
    """
    fn = "online_asymptotics"
    K, M = check_sizes(K, M, fn)
    if K != M:
        raise ValueError(f"{fn}: K must equal M (the perfect solution w_i = B_i); got K={K}, M={M}")
    convention = check_convention(convention, fn)
    act = resolve_activation(activation, fn)
    T = check_teacher(T, M, fn)
    a, _ = weights(convention, K, M)
    a2 = a * a
    G, L, W, Kr = _operators(_Moments(act, T), K)
    Lr, Wr, nn = _reduce(L, W)
    kap = np.linalg.eigvals(Kr).real
    n_r = int(np.sum(np.abs(kap) <= 1e-12 * max(1.0, np.abs(kap).max())))
    kappa = _kmin(Kr)
    lp_max = _gep_min(Lr, Wr)
    lp_opt, rate, which = _optimum(Lr, Wr, kappa, lp_max)
    lp_eps, rate_eps, _ = _optimum(Lr, Wr, 2.0 * kappa, lp_max)
    return OnlineAsymptotics(K=K, M=M, activation=act.name, convention=convention, lr_max=lp_max / a2,
                             lr_opt=lp_opt / a2, rate_opt=float(rate), limited_by=which, lr_opt_eps=lp_eps / a2,
                             rate_opt_eps=float(rate_eps), G=G, L=L, W=W, Kr=Kr, a2=a2, n_neutral=nn + n_r,
                             iterations=0, error=0.0, T=T.copy())
