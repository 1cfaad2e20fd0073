"""Outer quadrature loops of the FP integrals around a typical reference (numba).

Not imported directly: ``@kernels(include=("statmech.franz_parisi._rules",
"statmech.franz_parisi._fp_sums"))`` on ``statmech.franz_parisi._equations._FP`` appends this
text (after the inner rules of :mod:`._rules`) to the generated kernel module,
where ``fp_E`` (the sympy energetic integrand with its gradient and Hessian, summed over inner
nodes) and ``fp_S_uv``, ``fp_S_mom``, ``fp_S_row`` (the entropic term of ``fp_S`` from six moments
of its inner affine field, see ``_equations._affine_chain``) are module globals; call the loops
as ``_FP.fp_sum_S`` and ``_FP.fp_sum_E``.

Each loop runs over the outer Gauss--Hermite nodes ``z`` and, per node, builds the inner
piecewise tanh--sinh rule of :func:`statmech.franz_parisi._quadrature._nodes` (same nodes,
same arithmetic: breakpoints at the sharp layers inside the frame ``[-F, F]``, cached
probability-scale tails beyond) and accumulates ``w_z * fp_X(inner rule, z, ...)`` in the
order of the former Python loop (``_common._fp_energetic``, ``binary._fp_entropic``), skipping
the inner nodes at the ends of the rule whose weight is negligible (``_rules.support``).
"""
import math
import typing

import numba
import numpy as np

if typing.TYPE_CHECKING:
    from statmech.franz_parisi._equations import fp_E, fp_S_mom, fp_S_row, fp_S_uv
    from statmech.franz_parisi._rules import W_MIN, breaks2, fill_nodes, support


@numba.njit(cache=True)
def _work(n_max):
    """Node and weight buffers of an inner rule with up to n_max nodes, and two break slots."""
    return np.empty(n_max), np.empty(n_max), np.empty(2)


@numba.njit(cache=True)
def fp_sum_S(zo, wo, qh0, qh1, th, ph, frame, x, xc, w, lz, lw, rz, rw):
    """Ising entropic term: sum_z w_z fp_S(inner rule with a break at -A/B, z, ...), per z from the
    moments over y of log 2cosh(u + v y) (``fp_S_mom``) and the chain rule (``fp_S_row``)."""
    B = math.sqrt(qh1 - th * th / qh0)
    sq = math.sqrt(qh0)
    ys, wy, brk = _work(lz.size + rz.size + 2 * x.size)
    acc = np.zeros(12)
    for i in range(zo.size):
        z = zo[i]
        A = th / sq * z + ph - th
        nb = breaks2(-A / B, np.inf, frame, brk)
        k = fill_nodes(brk, nb, frame, x, xc, w, lz, lw, rz, rw, ys, wy)
        u, v = fp_S_uv(z, qh0, qh1, th, ph)
        k0, k1 = support(wy, k, W_MIN / wo[i])  # (the weight 1 + tanh is at most 2)
        m0, mu, mv, muu, muv, mvv, mrep, m1 = fp_S_mom(ys[k0:k1], wy[k0:k1], u, v)
        r = fp_S_row(z, qh0, qh1, th, ph, m0, mu, mv, muu, muv, mvv, mrep, m1)
        for a in range(12):
            acc[a] += wo[i] * r[a]
    return acc


@numba.njit(cache=True)
def fp_sum_E(zo, wo, la0, q0, t, p, q1, kappa, smooth, eg, wg, frame, x, xc, w, lz, lw, rz, rw):
    """Energetic term: sum_z w_z fp_E(inner rule, z, ...); the inner rule is ``(eg, wg)``
    (Gauss--Hermite) when ``smooth``, else piecewise with breaks at both layers."""
    v = q1 - t * t / q0
    sv = math.sqrt(v)
    sq0 = math.sqrt(q0)
    n_max = lz.size + rz.size + 3 * x.size
    es, we, brk = _work(n_max if n_max > eg.size else eg.size)
    if smooth:  # the same rule at every z, copied to the work buffers: fp_E is compiled once
        for k in range(eg.size):  # (not again for read-only arrays; an element loop, since a
            es[k] = eg[k]  # slice assignment would compile numba's shape-error formatting)
            we[k] = wg[k]
    acc = np.zeros(11)
    for i in range(zo.size):
        z = zo[i]
        # the reweighting H(a)/H(a0) is at most 1/H(a0)
        wmin = W_MIN * math.exp(la0[i]) / wo[i]
        if smooth:
            k = eg.size
        else:
            eb = (kappa - t / sq0 * z) / sv
            ea = (kappa - sq0 * z) * sv / (p - t) if p != t else np.inf
            nb = breaks2(eb, ea, frame, brk)
            k = fill_nodes(brk, nb, frame, x, xc, w, lz, lw, rz, rw, es, we)
        k0, k1 = support(we, k, wmin)
        r = fp_E(es[k0:k1], we[k0:k1], z, q0, t, p, q1, kappa, la0[i])
        for a in range(11):
            acc[a] += wo[i] * r[a]
    return acc
