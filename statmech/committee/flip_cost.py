"""The q -> 1 flip costs C(t) of the tree committee machine (Eq. RS.4), sign and ReLU units.

C(t) is the minimal squared displacement of the hidden fields t that makes the output
correct.  It sets the RS capacity (1/alpha_c^RS = E_t C(t), Eq. RS.4) and the 1RSB inner
average at capacity (exp(-y C/2), Eq. 1RSB.1).  Sign units (:func:`sign_flip_cost`):
the (K+1)/2 - n_+ negative units of smallest ``|t|`` are flipped.  Balanced ReLU units
(:func:`relu_flip_cost`): exact water filling over the number of switched-on inactive
positive units (``_relu_proj`` also returns the nearest correct point, used by the
importance sampler of :mod:`.relu_1rsb`).
"""
from __future__ import annotations

import numba
import numpy as np

from ..result import check_real

__all__ = ["sign_flip_cost", "relu_flip_cost"]


@numba.njit(cache=True)
def _sign_cost(t):
    """Minimal sum of squared displacements making majority(sign(t)) = +1 (the q -> 1 cost)."""
    K = t.shape[0]
    m = (K + 1) // 2
    npos = 0
    for i in range(K):
        if t[i] > 0:
            npos += 1
    need = m - npos
    if need <= 0:
        return 0.0
    neg = np.empty(K - npos)
    j = 0
    for i in range(K):
        if t[i] <= 0:
            neg[j] = t[i] * t[i]
            j += 1
    neg.sort()
    c = 0.0
    for i in range(need):
        c += neg[i]
    return c


@numba.njit(cache=True)
def _relu_proj(t, half, out):
    """Nearest point ``out`` of the closed correct region to t; returns the squared distance (the ReLU flip cost).

    Water filling, see :func:`_relu_cost`.  + units: active t + nu, the k
    switched-on ones max(nu - s_i, 0) (s_i = -t_i), others unchanged; active - units
    max(t - nu, 0).
    """
    K = t.shape[0]
    for i in range(K):
        out[i] = t[i]
    A = 0.0
    nap = 0
    ni = 0
    sin = np.empty(half)
    for i in range(half):
        if t[i] > 0:
            A += t[i]
            nap += 1
        else:
            sin[ni] = -t[i]
            ni += 1
    B = 0.0
    tm = np.empty(K - half)
    nm = 0
    for i in range(half, K):
        if t[i] > 0:
            B += t[i]
            tm[nm] = t[i]
            nm += 1
    if A > B:
        return 0.0
    D = B - A
    s = np.sort(sin[:ni])
    tms = tm[:nm]
    best = np.inf
    bk = 0
    bnu = 0.0
    kmin = 0 if nap > 0 else 1
    for k in range(kmin, ni + 1):
        lo = 0.0
        hi = D + 1.0
        for i in range(k):
            hi += s[i]
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            gsum = nap * mid
            for i in range(k):
                if mid > s[i]:
                    gsum += mid - s[i]
            for i in range(nm):
                gsum += mid if mid < tms[i] else tms[i]
            if gsum >= D:
                hi = mid
            else:
                lo = mid
            if hi - lo <= 1e-16 * (1.0 + hi):
                break
        nu = hi
        c = nap * nu * nu
        for i in range(k):
            v = nu if nu > s[i] else s[i]
            c += v * v
        for i in range(nm):
            v = nu if nu < tms[i] else tms[i]
            c += v * v
        if c < best:
            best = c
            bk = k
            bnu = nu
    thr = s[bk - 1] if bk > 0 else -1.0
    for i in range(half):
        if t[i] > 0:
            out[i] = t[i] + bnu
        elif bk > 0 and -t[i] <= thr:
            out[i] = bnu + t[i] if bnu + t[i] > 0.0 else 0.0
    for i in range(half, K):
        if t[i] > 0:
            out[i] = t[i] - bnu if t[i] - bnu > 0.0 else 0.0
    return best


@numba.njit(cache=True)
def _relu_cost(t, half):
    """Minimal sum of squared displacements making sum_{l<half} relu - sum_{l>=half} relu > 0.

    Units 0..half-1 have c = +1, the others c = -1.  Exact: for each number k of inactive
    positive units that are switched on (those with the smallest ``|t|``), the remaining problem
    is convex and solved by water filling (shift nu on active +, max(nu, s_i) on switched-on,
    min(nu, t_l) on active - units); the minimum over k is the global minimum.  The water
    filling (and the minimizer) is in :func:`_relu_proj`.
    """
    return _relu_proj(t, half, np.empty(t.shape[0]))


def _check_fields(t, function):
    """t as a finite 1-d float array (TypeError for non-numbers, ValueError naming t otherwise)."""
    check_real("t", t, function=function)
    arr = np.asarray(t, dtype=float)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{function}: t must be a 1-d array of the K hidden fields, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{function}: t must be finite (no NaN or inf), got {t!r}")
    return np.ascontiguousarray(arr)


def sign_flip_cost(t):
    """C(t) for majority vote (RS.4): sum of t_l^2 of the (K+1)/2 - n_+ smallest-``|t|`` negatives.

    Domain: t a finite 1-d array of odd length K (the hidden fields of the K sign units)."""
    t = _check_fields(t, "sign_flip_cost")
    if t.size % 2 == 0:
        raise ValueError(f"sign_flip_cost: t must have an odd length K (majority vote), got {t.size}")
    return float(_sign_cost(t))


def relu_flip_cost(t):
    """C(t) for the balanced ReLU TCM (RS.4); first half of ``t`` has c = +1.

    Domain: t a finite 1-d array of even length K (the hidden fields of the K ReLU units)."""
    t = _check_fields(t, "relu_flip_cost")
    if t.size % 2:
        raise ValueError(f"relu_flip_cost: t must have an even length K (balanced ReLU machine), got {t.size}")
    return float(_relu_cost(t, t.size // 2))
