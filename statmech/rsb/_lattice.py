"""Numba kernels of the RSB core: the nested Gaussian averages on nested lattices.

One *step* of the Parisi recursion with a constant Parisi parameter ``m`` on an
interval of overlaps of length ``s2 = q_i - q_{i-1}`` is::

    f_{i-1}(h) = (1/m) log E_z exp(m f_i(h + sqrt(s2) z))          (m > 0)
    f_{i-1}(h) = E_z f_i(h + sqrt(s2) z)                             (m = 0)

It is evaluated in log space (log-sum-exp, no shift or cut-off of the exponent) by the
trapezoid rule on a uniform lattice ``h = j * delta``: the function of level ``i`` is
stored on the sub-lattice of stride ``strides[i]`` (a power of two; inner levels are
finer), and the Gaussian weights ``w_t ~ exp(-(t d)^2 / (2 s2))``, ``d = strides[i] delta``,
are normalized to sum to one over ``|t d| <= L sqrt(s2)`` (``L = GAUSS_L = 10``: the
omitted Gaussian mass is ~1e-23).  The tilted sums run over that window widened by
``m s2 max|f_i'|`` (the largest shift of the peak of ``exp(-z^2/2 + m f_i(h + sqrt(s2) z))``),
point by point, so the tilted peak is always inside the window.  For an integrand that is
analytic in a strip of half-width ``a`` (in ``h``) the trapezoid rule converges like
``exp(-2 pi a / d)`` (spectral accuracy), which is why the lattice spacing is chosen as a
fraction of the smoothness scale of ``f_i`` and of the width of the tilted Gaussian.

Values needed beyond the ends of a level's lattice are continued by the quadratic
through the last three lattice values: the far-field behaviour of every terminal
condition in the package is linear (``|h|``, SK) or quadratic (perceptron family,
``log H`` and the soft hinge) up to exponentially small terms, so the continuation is
exact to that order; the lattice extends many standard deviations beyond where the
final Gaussian average has weight.

The adjoint (reverse) pass gives the exact gradient of the *discrete* functional:
the measures ``P_i`` (``P_i(h') = sum_h P_{i-1}(h) w_t exp(m (f_i(h') - f_{i-1}(h)))``,
the tilted forward measures of the Parisi solution) and the derivatives with respect to
every ``s2`` and ``m``.  The derivative with respect to ``s2`` differentiates the
normalized discrete weights (``dw_t/ds2 = w_t (a_t - sum_u w_u a_u)``,
``a_t = (t d)^2 / (2 s2^2)``), so it is consistent with the value to rounding.
"""
import math

import numba
import numpy as np

GAUSS_L = 10.0


@numba.njit(cache=True, fastmath=False)
def gauss_norm(s2, d, L):
    """``T0 = ceil(L sqrt(s2)/d)``, ``log sum_{|t|<=T0} exp(-(t d)^2/(2 s2))`` and the mean of
    ``a_t = (t d)^2/(2 s2^2)`` under the normalized weights (the derivative in s2 of a
    normalized weight is ``w_t (a_t - mean a)``)."""
    T0 = int(math.ceil(L * math.sqrt(s2) / d))
    tot = 0.0
    sa = 0.0
    for t in range(-T0, T0 + 1):
        x = t * d
        v = math.exp(-0.5 * x * x / s2)
        tot += v
        sa += v * 0.5 * x * x / (s2 * s2)
    return T0, math.log(tot), sa / tot


@numba.njit(cache=True, fastmath=False)
def _halfwidth(fin, n, T0, s2, m, d):
    """Kernel half-width at output point n: T0 plus the shift of the tilted Gaussian,
    ``m s2 max|f'|`` over the window (|f'| is largest at an end of the window, f being
    concave or convex for every channel of the package)."""
    if m == 0.0:
        return T0
    g1 = abs(_at(fin, n - T0 + 1) - _at(fin, n - T0 - 1)) / (2.0 * d)
    g2 = abs(_at(fin, n + T0 + 1) - _at(fin, n + T0 - 1)) / (2.0 * d)
    return T0 + int(math.ceil(m * s2 * max(g1, g2) / d))


@numba.njit(cache=True, fastmath=False)
def _at(f, n):
    """f[n], continued beyond both ends by the quadratic through the three end values."""
    N = f.shape[0]
    if n >= 0 and n < N:
        return f[n]
    if n < 0:
        x = float(n)
        return f[0] * (x - 1.0) * (x - 2.0) * 0.5 - f[1] * x * (x - 2.0) + f[2] * x * (x - 1.0) * 0.5
    x = float(N - 1 - n)  # distance inside from the right end, negative
    return f[N - 1] * (x - 1.0) * (x - 2.0) * 0.5 - f[N - 2] * x * (x - 2.0) + f[N - 3] * x * (x - 1.0) * 0.5


@numba.njit(cache=True, fastmath=False)
def _scatter(P, n, v):
    """Adjoint of _at: add v * d f[n]/d f[.] to P."""
    N = P.shape[0]
    if n >= 0 and n < N:
        P[n] += v
        return
    if n < 0:
        x = float(n)
        P[0] += v * (x - 1.0) * (x - 2.0) * 0.5
        P[1] -= v * x * (x - 2.0)
        P[2] += v * x * (x - 1.0) * 0.5
        return
    x = float(N - 1 - n)
    P[N - 1] += v * (x - 1.0) * (x - 2.0) * 0.5
    P[N - 2] -= v * x * (x - 2.0)
    P[N - 3] += v * x * (x - 1.0) * 0.5


@numba.njit(cache=True, fastmath=False)
def _step(fin, Jin, Jout, r, s2, m, d, L, fout):
    """One Parisi step: fout (stride r * input stride) from fin (see module docstring)."""
    if s2 <= 0.0:  # empty interval: the identity
        for no in range(2 * Jout + 1):
            fout[no] = _at(fin, Jin + (no - Jout) * r)
        return
    T0, ltot, abar = gauss_norm(s2, d, L)
    for no in range(2 * Jout + 1):
        n = Jin + (no - Jout) * r
        T = _halfwidth(fin, n, T0, s2, m, d)
        if m == 0.0:
            s = 0.0
            for t in range(-T, T + 1):
                x = t * d
                s += math.exp(-0.5 * x * x / s2 - ltot) * _at(fin, n + t)
            fout[no] = s
        else:
            mx = -np.inf
            for t in range(-T, T + 1):
                x = t * d
                v = -0.5 * x * x / s2 - ltot + m * _at(fin, n + t)
                if v > mx:
                    mx = v
            s = 0.0
            for t in range(-T, T + 1):
                x = t * d
                s += math.exp(-0.5 * x * x / s2 - ltot + m * _at(fin, n + t) - mx)
            fout[no] = (mx + math.log(s)) / m


@numba.njit(cache=True, fastmath=False)
def _step_adjoint(fin, fout, Jin, Jout, r, s2, m, d, L, Pout, Pin):
    """Adjoint of _step: accumulate Pin and return (dPhi/ds2, dPhi/dm) of this step.

    The tilted weights ``w_t exp(m (f_i - f_{i-1}))`` are formed as one exponential of
    ``log w_t + m (f_i - f_{i-1}) <= 0`` (never ``0 * inf`` where ``w_t`` underflows)."""
    g_s2 = 0.0
    g_m = 0.0
    if s2 <= 0.0:
        for no in range(2 * Jout + 1):
            p = Pout[no]
            if p == 0.0:
                continue
            n = Jin + (no - Jout) * r
            # s2 = 0: d/ds2 = (f'' + m f'^2)/2 by central differences on the input lattice
            f0 = _at(fin, n)
            fp = _at(fin, n + 1)
            fm = _at(fin, n - 1)
            g_s2 += p * 0.5 * ((fp - 2.0 * f0 + fm) / (d * d) + m * ((fp - fm) / (2.0 * d)) ** 2)
            _scatter(Pin, n, p)
        return g_s2, g_m
    T0, ltot, abar = gauss_norm(s2, d, L)
    for no in range(2 * Jout + 1):
        p = Pout[no]
        if p == 0.0:
            continue
        n = Jin + (no - Jout) * r
        T = _halfwidth(fin, n, T0, s2, m, d)
        fo = fout[no]
        sd = 0.0
        sf = 0.0
        for t in range(-T, T + 1):
            x = t * d
            v = _at(fin, n + t)
            pt = math.exp(-0.5 * x * x / s2 - ltot + m * (v - fo))
            ct = 0.5 * x * x / (s2 * s2) - abar
            if m == 0.0:
                sd += ct * pt * v
            else:
                sd += ct * pt
                sf += pt * v
            _scatter(Pin, n + t, p * pt)
        if m == 0.0:
            g_s2 += p * sd
        else:
            g_s2 += p * sd / m
            g_m += p * (sf - fo) / m
    return g_s2, g_m


@numba.njit(cache=True, fastmath=False)
def nested_average(ftop, J, delta, strides, s2, m, L, want_grad):
    """Value and gradient of ``E_z f_0(sqrt(s2[0]) z)`` with f_k = ftop (see module docstring).

    Parameters
    ----------
    ftop : values of the innermost function f_k on the lattice of stride strides[k]
        (length 2 J/strides[k] + 1, centred at h = 0)
    J : half-size of the master lattice (a multiple of every stride), delta its spacing
    strides : int array (k+1,), strides[i] of level i, non-increasing, each divisible by the next
    s2 : (k+1,) variances; s2[0] of the final average, s2[i] = q_i - q_{i-1} of step i
    m : (k+1,) Parisi parameters of the steps (m[0] unused, the final average has m = 0)
    Returns
    -------
    value, g_s2 (k+1,), g_m (k+1,), P_top (sensitivity of the value to each ftop entry)
    """
    k = strides.shape[0] - 1
    sizes = np.empty(k + 1, dtype=np.int64)
    offs = np.empty(k + 2, dtype=np.int64)
    offs[0] = 0
    for i in range(k + 1):
        sizes[i] = 2 * (J // strides[i]) + 1
        offs[i + 1] = offs[i] + sizes[i]
    F = np.empty(offs[k + 1])
    F[offs[k]:offs[k + 1]] = ftop
    for i in range(k, 0, -1):
        _step(F[offs[i]:offs[i + 1]], J // strides[i], J // strides[i - 1], strides[i - 1] // strides[i],
              s2[i], m[i], strides[i] * delta, L, F[offs[i - 1]:offs[i]])
    # final average at h = 0 with variance s2[0] (m = 0): one output point of a step
    f0 = F[offs[0]:offs[1]]
    J0 = J // strides[0]
    d0 = strides[0] * delta
    out = np.empty(1)
    if s2[0] <= 0.0:
        out[0] = f0[J0]
    else:
        _step(f0, J0, 0, 1, s2[0], 0.0, d0, L, out)
    val = out[0]
    g_s2 = np.zeros(k + 1)
    g_m = np.zeros(k + 1)
    if not want_grad:
        return val, g_s2, g_m, np.zeros(0)
    P = np.zeros(offs[k + 1])
    one = np.ones(1)
    g_s2[0], _ = _step_adjoint(f0, out, J0, 0, 1, s2[0], 0.0, d0, L, one, P[offs[0]:offs[1]])
    for i in range(1, k + 1):
        gs, gm = _step_adjoint(F[offs[i]:offs[i + 1]], F[offs[i - 1]:offs[i]], J // strides[i],
                               J // strides[i - 1], strides[i - 1] // strides[i], s2[i], m[i],
                               strides[i] * delta, L, P[offs[i - 1]:offs[i]], P[offs[i]:offs[i + 1]])
        g_s2[i] = gs
        g_m[i] = gm
    return val, g_s2, g_m, P[offs[k]:offs[k + 1]].copy()
