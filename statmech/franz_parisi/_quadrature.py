"""Inner quadrature rules of the FP integrals: piecewise tanh--sinh with breakpoints at the
sharp layers of the integrand inside a fixed frame ``[-_FRAME, _FRAME]``, whose tails (the
probability-scale rule of :func:`statmech.gaussian.piecewise_nodes`, no cut-off) are cached:
the inner breakpoints change at every outer node, the tails do not."""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from ..gaussian import tanh_sinh_rule, piecewise_nodes

# quadrature settings (accuracy documented in docs/franz_parisi.md, tested in tests/)
_N_OUTER = 64      # Gauss-Hermite order for the outer (shared) Gaussian field
_LEVEL = 5         # tanh-sinh level of the inner piecewise rules (257 nodes per piece)
_FRAME = 8.0   # extra breakpoints +-_FRAME (NOT a cut-off: the tails beyond are integrated exactly)


def _breaks(*vals):
    """The finite values among ``vals``, sorted, without (near-)repeats."""
    v = np.sort(np.array([x for x in vals if np.isfinite(x)], dtype=float))
    if v.size == 0:
        return np.array([0.0])
    keep = np.concatenate(([True], np.diff(v) > 1e-12 * (1.0 + np.abs(v[1:]))))
    return v[keep]


@lru_cache(maxsize=8)
def _frame_tails(level):
    """Tail nodes of piecewise_nodes([-F, F]) (they do not depend on the inner breakpoints)."""
    zs, ws = piecewise_nodes(np.array([-_FRAME, _FRAME]), level)
    n = zs.size // 3
    return zs[:n].copy(), ws[:n].copy(), zs[2 * n:].copy(), ws[2 * n:].copy()


@lru_cache(maxsize=8)
def _inner_rule(level):
    """``(frame, x, xc, w, tail nodes and weights)``: the arguments of the numba loops of
    :mod:`._fp_sums`, which build the rule of :func:`_nodes` per outer node."""
    x, xc, w = tanh_sinh_rule(level)
    return (_FRAME, np.ascontiguousarray(x), np.ascontiguousarray(xc), np.ascontiguousarray(w),
            *_frame_tails(level))


def _nodes(breaks, level):
    """Same rule as ``piecewise_nodes(breaks + [-F, F], level)`` for breaks inside (-F, F)
    (tanh-sinh on every finite piece, probability-scale tanh-sinh on the two tails), with the
    tails cached: the inner breakpoints change at every outer node, the tails do not."""
    b = np.asarray(breaks, dtype=float)
    # a layer beyond the frame carries Gaussian weight < 1e-15: it is integrated by the
    # (cached) tail rule without a breakpoint of its own
    b = b[np.abs(b) < _FRAME - 1e-9]
    lz, lw, rz, rw = _frame_tails(level)
    x, xc, w = tanh_sinh_rule(level)
    edges = np.concatenate(([-_FRAME], b, [_FRAME]))
    a, L = edges[:-1, None], np.diff(edges)[:, None]
    z = np.where(x < 0.5, a + L * x, a + L - L * xc)
    wz = L * w * np.exp(-0.5 * z * z) / math.sqrt(2.0 * math.pi)
    return np.concatenate((lz, z.ravel(), rz)), np.concatenate((lw, wz.ravel(), rw))


def _nodes1(b, level):
    """Vectorized ``_nodes([b], level)``: one breakpoint per entry of ``b`` (any shape);
    returns nodes and Gaussian weights of shape ``b.shape + (K,)``."""
    F = _FRAME
    b = np.clip(np.asarray(b, dtype=float), -F + 1e-9, F - 1e-9)[..., None]
    lz, lw, rz, rw = _frame_tails(level)
    x, xc, w = tanh_sinh_rule(level)
    L1, L2 = b + F, F - b
    z1 = np.where(x < 0.5, -F + L1 * x, b - L1 * xc)
    z2 = np.where(x < 0.5, b + L2 * x, F - L2 * xc)
    c = 1.0 / math.sqrt(2.0 * math.pi)
    w1 = L1 * w * np.exp(-0.5 * z1 * z1) * c
    w2 = L2 * w * np.exp(-0.5 * z2 * z2) * c
    sh = b.shape[:-1]
    zs = np.concatenate((np.broadcast_to(lz, sh + lz.shape), z1, z2, np.broadcast_to(rz, sh + rz.shape)), axis=-1)
    ws = np.concatenate((np.broadcast_to(lw, sh + lw.shape), w1, w2, np.broadcast_to(rw, sh + rw.shape)), axis=-1)
    return zs, ws
