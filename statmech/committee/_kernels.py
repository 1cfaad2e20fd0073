"""Kernels shared by several tree committee theories.

* ``_eqs`` (sympy, ``@kernels``): every closed form of the TCM, written once -- the RS
  entropic term ``gs_rs`` (Eq. RS.1), the 1RSB entropic term at capacity ``s1rsb``
  (Eq. 1RSB.1), the balanced ReLU kernel ``relu_Q`` and the effective-perceptron 1RSB
  average ``eff_1rsb`` (K = inf);
* the permutation-symmetric multiset rule (numba): K-dimensional Gaussian averages as sums
  over multisets of the nodes of a 1-d rule (sign RS, :mod:`.sign_rs`, and sign 1RSB,
  :mod:`.sign_1rsb`), with the log-factorial table ``_LOGFACT``.
"""
from __future__ import annotations

import math

import numba
import numpy as np
import sympy as sp

from ..symbolic import Expectation, LogH, Scalar, kernels


# --------------------------------------------------------------------------- sympy equations
@kernels
def _eqs():
    """All closed-form equations of the TCM, written once (derivatives by sympy.diff)."""
    q, q0, y, a, b, mu, yp = sp.symbols("q q0 y a b mu yp", real=True)
    # RS entropic term of a spherical branch (per weight) and its q-derivative
    gs_rs = sp.log(1 - q) / 2 + q / (2 * (1 - q))
    # RS conjugate q_hat = 2 dG_S/dq (the field conjugate to q)
    # 1RSB entropic term at capacity: coefficient of 1/(2 eps), eps = 1 - q1 -> 0, m = y eps
    s1 = sp.log(1 + y * (1 - q0)) / y + q0 / (1 + y * (1 - q0))
    # ReLU kernel k(rho) = E[relu(u) relu(v)], corr(u, v) = rho; normalized output overlap Q
    kr = (sp.sqrt(1 - q ** 2) + (sp.pi - sp.acos(q)) * q) / (2 * sp.pi)
    Qr = (kr - 1 / (2 * sp.pi)) / (sp.Rational(1, 2) - 1 / (2 * sp.pi))
    # effective-perceptron inner average E_{t1} exp(-yp h^2 Theta(-h)/2), h ~ N(mu, b^2):
    #   = H(-mu/b) + exp(-yp mu^2/(2(1+yp b^2)))/sqrt(1+yp b^2) H(mu/(b sqrt(1+yp b^2)))
    # returned as the two log terms (combined with logaddexp)
    la = LogH(-mu / b)
    lb = -yp * mu ** 2 / (2 * (1 + yp * b ** 2)) - sp.log(1 + yp * b ** 2) / 2 \
        + LogH(mu / (b * sp.sqrt(1 + yp * b ** 2)))
    z = sp.Symbol("z", real=True)
    mu_z = a * z
    la_z = la.subs(mu, mu_z)
    lb_z = lb.subs(mu, mu_z)
    lse = sp.Max(la_z, lb_z) + sp.log(1 + sp.exp(-sp.Abs(la_z - lb_z)))
    return {
        "gs_rs": Scalar((q,), (gs_rs, sp.diff(gs_rs, q), sp.diff(gs_rs, q, 2))),
        "s1rsb": Scalar((q0, y), (s1, sp.diff(s1, q0), sp.diff(s1, y))),
        "relu_Q": Scalar((q,), (Qr, sp.diff(Qr, q))),
        # E_{t0} ln E_{t1} exp(-yp h^2 Theta(-h)/2), h = a t0 + b t1 (ReLU K = inf, 1RSB)
        "eff_1rsb": Expectation(z, (a, b, yp), lse),
    }


# --------------------------------------------------------------------------- symmetric (multiset) quadrature
@numba.njit(cache=True)
def _multisets_next(idx, n):
    """Advance a non-decreasing index tuple; returns False when exhausted."""
    K = idx.shape[0]
    i = K - 1
    while i >= 0 and idx[i] == n - 1:
        i -= 1
    if i < 0:
        return False
    v = idx[i] + 1
    for j in range(i, K):
        idx[j] = v
    return True


@numba.njit(cache=True)
def _multiset_weight(idx, w, logfact):
    K = idx.shape[0]
    lw = logfact[K]
    run = 1
    for j in range(K):
        lw += math.log(w[idx[j]])
        if j > 0 and idx[j] == idx[j - 1]:
            run += 1
        else:
            if j > 0:
                lw -= logfact[run]
            run = 1
    lw -= logfact[run]
    return math.exp(lw)


@numba.njit(cache=True)
def _multiset_start(K):
    """Index tuple for :func:`_multiset_point` before the first multiset."""
    idx = np.zeros(K, dtype=np.int64)
    idx[0] = -1
    return idx


@numba.njit(cache=True)
def _multiset_point(idx, z, w, scale, logfact, a):
    """Advance ``idx`` to the next multiset of the nodes z with positive weight, fill
    a = scale * z[idx] and return its weight (the product rule of (z, w) summed over the
    permutations of idx); returns 0.0 when the multisets are exhausted.

    The loop over a permutation-symmetric K-dimensional product rule is
    ``idx = _multiset_start(K)`` then ``while (wt := _multiset_point(...)) > 0``."""
    K = idx.shape[0]
    n = z.shape[0]
    while True:
        if idx[0] < 0:
            idx[0] = 0
        elif not _multisets_next(idx, n):
            return 0.0
        wt = _multiset_weight(idx, w, logfact)
        if wt > 0.0:
            for j in range(K):
                a[j] = scale * z[idx[j]]
            return wt


@numba.njit(cache=True)
def _tensor_node(flat, a, s, z, lw, h):
    """Node ``flat`` of the K-fold tensor rule of (z, ln w = lw) shifted to h = a + s z[j]
    (unit 0 runs fastest); fills h and returns the node's log weight."""
    n = z.shape[0]
    f = flat
    lwt = 0.0
    for l in range(a.shape[0]):
        j = f % n
        f //= n
        h[l] = a[l] + s * z[j]
        lwt += lw[j]
    return lwt


_LOGFACT = np.array([math.lgamma(i + 1.0) for i in range(64)])
