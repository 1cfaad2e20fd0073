r"""Online-learning integrals for any activation g: tensor Gauss--Hermite rules (numpy).

An integral E[F(u)] over the d <= 4 *distinct* fields of an integrand (the fields of I2, I3,
I4, J2 after merging repeated indices) is computed in the eigen-coordinates of their covariance,
u = V sqrt(Lambda) z with z standard normal in r = rank dimensions, by the tensor product of
probabilists' Gauss--Hermite rules.  I3 = E[g'(u_a) u_b g(u_c)] is first reduced to the two
fields (u_a, u_c) by replacing u_b with its projection on them (the rest is independent and has
mean zero).  Orders (nodes per dimension) 96, 64, 32, 16 for r = 1, 2, 3, 4: exact for
polynomials of degree 2n - 1.  The error of a 4-dimensional I4 with O(1) covariances is ~6e-6 for
erf (entire but steep for large variance: the Hermite coefficients decay like (s/(1+s))^n), ~3e-4
for tanh and ESP(3) (poles at distance ~1 from the real axis: exp(-2 d sqrt(2n)) convergence),
and algebraic for kinks (use the ReLU closed forms); in the ODE right-hand sides the errors are
smaller (erf run through this path agrees with the closed forms to 2e-9 ... 4e-5 at K = M = 2:
``tests/test_online.py``).  :func:`eval_plan_generic` also returns an error *estimate*: the
largest difference between the rule and one of order ~3/4 n, over all integrals of the plan.

g' comes from ``g.derivative(x)`` when the activation object has one (``statmech.activations.ESP``
does); otherwise from the 4th-order central difference with step 1e-4 max(1, |x|) (truncation
~1e-17, rounding ~1e-12 relative for smooth g).  This path is slow: a right-hand side of the
K = M = 2 ODEs costs ~0.1-1 s (10^5 times the closed forms).
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from ._online_odes import K_I2, K_I3, K_I4, K_J2

#: nodes per dimension of the tensor rules, by dimension
ORDERS = {1: 96, 2: 64, 3: 32, 4: 16}
_MAX_POINTS = 2_000_000          # batch size bound (entries x nodes) of one vectorized evaluation


@lru_cache(maxsize=32)
def _grid(r, n):
    """Tensor Gauss--Hermite nodes (n^r x r) and weights for r standard normal variables."""
    from ..gaussian import gauss_hermite
    z, w = gauss_hermite(n)
    if r == 0:
        return np.zeros((1, 0)), np.ones(1)
    Z = np.stack(np.meshgrid(*([z] * r), indexing="ij"), axis=-1).reshape(-1, r)
    W = np.ones(1)
    for _ in range(r):
        W = np.multiply.outer(W, w).ravel()
    return Z, W


def derivative_of(g):
    """g' of the activation: ``g.derivative`` or an 8th-order central difference."""
    d = getattr(g, "derivative", None)
    if callable(d):
        return d
    c = np.array([2 / 3, -1 / 12])

    def dg(x):
        x = np.asarray(x, dtype=float)
        h = 1e-4 * np.maximum(1.0, np.abs(x))
        acc = np.zeros_like(x)
        for k, ck in enumerate(c, start=1):
            acc += ck * (np.asarray(g(x + k * h), dtype=float) - np.asarray(g(x - k * h), dtype=float))
        return acc / h
    return dg


class Activation:
    """g and g' of a generic activation, evaluated on arrays (with a check of the values)."""

    def __init__(self, g, name="g"):
        self.g = g
        self.dg = derivative_of(g)
        self.name = name

    def values(self, x, derivative=False):
        """g(x) (or g'(x)) on an array, checked."""
        v = np.asarray(self.dg(x) if derivative else self.g(x), dtype=float)
        if v.shape != x.shape:
            raise ValueError(f"activation {self.name} must map arrays elementwise (shape {x.shape})")
        if not np.all(np.isfinite(v)):
            raise ValueError(f"activation {self.name} returned non-finite values")
        return v


def _fields(kind, c, ids):
    """The distinct fields of an integrand and the roles of its factors.

    Returns (cov of the distinct fields, list of (field, factor) with factor 'g' / 'dg' / 'u').
    I3 is reduced to (u_a, u_c): the factor u_b becomes beta_a u_a + beta_c u_c (returned as
    ('lin', beta_a, beta_c) on the fields of a and c)."""
    if kind == K_I2:
        pos, fac = (0, 1), ("g", "g")
    elif kind == K_J2:
        pos, fac = (0, 1), ("dg", "dg")
    elif kind == K_I4:
        pos, fac = (0, 1, 2, 3), ("dg", "dg", "g", "g")
    else:
        pos, fac = (0, 2), ("dg", "g")
    label = {}
    for p in pos:
        label.setdefault(ids[p], p)
    reps = sorted(set(label.values()))
    where = {p: reps.index(label[ids[p]]) for p in pos}
    cov = c[np.ix_(reps, reps)]
    factors = [(where[p], f) for p, f in zip(pos, fac)]
    lin = None
    if kind == K_I3:
        ia, ic = where[0], where[2]
        if ia == ic:
            caa = c[0, 0]
            lin = (ia, c[0, 1] / caa if caa > 0 else 0.0, ic, 0.0)
        else:
            sub = c[np.ix_((0, 2), (0, 2))]
            beta = np.linalg.lstsq(sub, c[1, (0, 2)], rcond=None)[0]
            lin = (ia, beta[0], ic, beta[1])
    return cov, factors, lin


def _sqrt_cov(cov):
    lam, V = np.linalg.eigh(0.5 * (cov + cov.T))
    top = max(float(lam.max()), 0.0)
    keep = lam > 1e-13 * max(top, 1e-300)
    return V[:, keep] * np.sqrt(lam[keep])


def _prepare(kind, c, ids, order_scale):
    """(S, factors, lin, n): the square root of the distinct fields' covariance, the factors,
    the I3 projection and the rule order."""
    cov, factors, lin = _fields(kind, c, ids)
    S = _sqrt_cov(cov)
    r = S.shape[1]
    n = max(2, int(round(ORDERS.get(r, 20) * order_scale))) if r else 1
    return S, factors, lin, n


def _batch(act, preps):
    """Values of a batch of prepared integrals with the same rank and order."""
    S0, _, _, n = preps[0]
    r = S0.shape[1]
    Z, W = _grid(r, n)
    out = np.empty(len(preps))
    step = max(1, _MAX_POINTS // max(1, W.size * 4))
    for lo in range(0, len(preps), step):
        chunk = preps[lo:lo + step]
        d = max(p[0].shape[0] for p in chunk)
        Sb = np.zeros((len(chunk), d, r))
        for j, p in enumerate(chunk):
            Sb[j, :p[0].shape[0]] = p[0]
        U = np.einsum("nr,jdr->jnd", Z, Sb)          # entries x nodes x fields
        gx = np.zeros_like(U)
        dx = np.zeros_like(U)
        for f in range(d):                            # g and g' only where a factor needs them
            if any(fi == f and fac == "g" for p in chunk for fi, fac in p[1]):
                gx[:, :, f] = act.values(U[:, :, f])
            if any(fi == f and fac == "dg" for p in chunk for fi, fac in p[1]):
                dx[:, :, f] = act.values(U[:, :, f], derivative=True)
        for j, (S, factors, lin, _) in enumerate(chunk):
            val = np.ones(W.size)
            for f_idx, fac in factors:
                val = val * (gx[j, :, f_idx] if fac == "g" else dx[j, :, f_idx])
            if lin is not None:
                ia, ba, ic, bc = lin
                val = val * (ba * U[j, :, ia] + bc * U[j, :, ic])
            out[lo + j] = W @ val
    return out


def _key(kind, c, ids):
    """Entries with the same kind, label pattern and covariance are the same integral."""
    first = {}
    pattern = tuple(first.setdefault(x, len(first)) for x in ids)
    return kind, pattern, np.round(c, 15).tobytes()


def _values(act, n, pk, pc, pi, order_scale=1.0):
    """The integrals of the first n plan entries (duplicates computed once, batched by rank and order)."""
    uniq = {}
    where = np.empty(n, dtype=np.int64)
    reps = []
    for j in range(n):
        ids = tuple(int(x) for x in pi[j])
        k = _key(int(pk[j]), pc[j], ids)
        if k not in uniq:
            uniq[k] = len(reps)
            reps.append(j)
        where[j] = uniq[k]
    preps = [_prepare(int(pk[j]), pc[j], tuple(int(x) for x in pi[j]), order_scale) for j in reps]
    groups = {}
    for u, p in enumerate(preps):
        groups.setdefault((p[0].shape[1], p[3]), []).append(u)
    vals = np.empty(len(reps))
    for idx in groups.values():
        vals[idx] = _batch(act, [preps[u] for u in idx])
    return vals[where]


def eval_plan_generic(act, n, pk, pc, pi, pt, pf, out, estimate=False, order_scale=1.0):
    """out[t] += coef * integral for the plan entries (any g); returns (eps_g sum, error
    estimate: max |coef| |I_n - I_{3n/4}| over the entries, 0.0 unless ``estimate``).
    ``order_scale`` < 1: lower orders (a rough evaluation, e.g. to relax towards a fixed point)."""
    vals = _values(act, n, pk, pc, pi, order_scale)
    err = 0.0
    if estimate:
        low = _values(act, n, pk, pc, pi, 0.75)
        err = float(np.max(np.abs(pf[:n]) * np.abs(vals - low))) if n else 0.0
    eps = 0.0
    for j in range(n):
        if pt[j] < 0:
            eps += pf[j] * vals[j]
        else:
            out[pt[j]] += pf[j] * vals[j]
    return eps, err


def expectation(act, cov, factors):
    """E[prod of factors] for a small covariance: ``factors`` a list of (field, 'g' | 'dg' | 'u')."""
    S = _sqrt_cov(np.asarray(cov, dtype=float))
    r = S.shape[1]
    Z, W = _grid(r, ORDERS.get(r, 20) if r else 1)
    U = Z @ S.T
    val = np.ones(W.size)
    for f_idx, fac in factors:
        val = val * (U[:, f_idx] if fac == "u" else act.values(U[:, f_idx], derivative=(fac == "dg")))
    return float(W @ val)
