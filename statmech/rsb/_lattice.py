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
def _peak(fin, n, t, s2, m, d):
    """Argmax over t of ``-(t d)^2/(2 s2) + m f(n + t)`` by hill climbing from ``t``.

    For a concave f the exponent is strictly concave in t (also on the lattice), so the
    climb ends at the global maximum; returns ``(t*, exponent at t*)``."""
    g = -0.5 * (t * d) ** 2 / s2 + m * _at(fin, n + t)
    while True:
        gl = -0.5 * ((t - 1) * d) ** 2 / s2 + m * _at(fin, n + t - 1)
        if gl <= g:
            break
        t -= 1
        g = gl
    while True:
        gr = -0.5 * ((t + 1) * d) ** 2 / s2 + m * _at(fin, n + t + 1)
        if gr <= g:
            break
        t += 1
        g = gr
    return t, g


@numba.njit(cache=True, fastmath=False)
def _window(fin, n, T0, s2, m, d, concave, tprev):
    """Summation window ``[lo, hi]`` (offsets from input point n) of one output point and the
    exponent to subtract (its maximum, or 0).

    * m = 0: the Gaussian window ``|t| <= T0``.
    * concave f (``concave``): centred on the peak t* of the tilted Gaussian
      ``exp(-(t d)^2/(2 s2) + m f(n + t))``.  Its log is strongly concave with modulus
      ``d^2/s2`` (the Gaussian's), so the weight beyond ``|t - t*| > T0`` is below the
      Gaussian's beyond ``|t| > T0`` (~e^{-L^2/2} relative): the same accuracy as the plain
      window, with ``2 T0 + 1`` terms however far the tilt moves the peak.  ``tprev`` is the
      peak of the previous output point (the peak position ``h + t* d`` is increasing in h
      with slope <= 1, so the climb from there takes at most one output stride).
    * otherwise: ``|t| <= T0`` widened by the largest shift of the peak (see :func:`_halfwidth`).
    """
    if m == 0.0:
        return -T0, T0, 0.0, 0
    if concave:
        tp, g = _peak(fin, n, tprev, s2, m, d)
        return tp - T0, tp + T0, g, tp
    T = _halfwidth(fin, n, T0, s2, m, d)
    mx = -np.inf
    for t in range(-T, T + 1):
        x = t * d
        v = -0.5 * x * x / s2 + m * _at(fin, n + t)
        if v > mx:
            mx = v
    return -T, T, mx, 0


@numba.njit(cache=True, fastmath=False)
def _step(fin, lo_in, lo_out, r, s2, m, d, L, fout, concave=False):
    """One Parisi step: fout (stride r * input stride) from fin (see module docstring).

    ``fin[j]`` is the input at lattice index ``lo_in + j`` (spacing d), ``fout[j]`` the
    output at index ``lo_out + j`` of the output level (spacing r d)."""
    if s2 <= 0.0:  # empty interval: the identity
        for no in range(fout.shape[0]):
            fout[no] = _at(fin, (lo_out + no) * r - lo_in)
        return
    T0, ltot, abar = gauss_norm(s2, d, L)
    N = fin.shape[0]
    tp = 0
    for no in range(fout.shape[0]):
        n = (lo_out + no) * r - lo_in
        lo, hi, mx, tp = _window(fin, n, T0, s2, m, d, concave, tp)
        inside = n + lo >= 0 and n + hi < N
        s = 0.0
        if m == 0.0:
            for t in range(lo, hi + 1):
                x = t * d
                v = fin[n + t] if inside else _at(fin, n + t)
                s += math.exp(-0.5 * x * x / s2 - ltot) * v
            fout[no] = s
        else:
            for t in range(lo, hi + 1):
                x = t * d
                v = fin[n + t] if inside else _at(fin, n + t)
                s += math.exp(-0.5 * x * x / s2 + m * v - mx)
            fout[no] = (mx - ltot + math.log(s)) / m


@numba.njit(cache=True, fastmath=False)
def _step_adjoint(fin, fout, lo_in, lo_out, r, s2, m, d, L, Pout, Pin, concave=False):
    """Adjoint of _step: accumulate Pin and return (dPhi/ds2, dPhi/dm) of this step.

    The tilted weights ``w_t exp(m (f_i - f_{i-1}))`` are formed as one exponential of
    ``log w_t + m (f_i - f_{i-1}) <= 0`` (never ``0 * inf`` where ``w_t`` underflows); the
    windows are those of the forward step."""
    g_s2 = 0.0
    g_m = 0.0
    if s2 <= 0.0:
        for no in range(fout.shape[0]):
            p = Pout[no]
            if p == 0.0:
                continue
            n = (lo_out + no) * r - lo_in
            # s2 = 0: d/ds2 = (f'' + m f'^2)/2 by central differences on the input lattice
            f0 = _at(fin, n)
            fp = _at(fin, n + 1)
            fm = _at(fin, n - 1)
            g_s2 += p * 0.5 * ((fp - 2.0 * f0 + fm) / (d * d) + m * ((fp - fm) / (2.0 * d)) ** 2)
            _scatter(Pin, n, p)
        return g_s2, g_m
    T0, ltot, abar = gauss_norm(s2, d, L)
    N = fin.shape[0]
    tp = 0
    for no in range(fout.shape[0]):
        p = Pout[no]
        n = (lo_out + no) * r - lo_in
        if p == 0.0:
            if concave and m != 0.0:  # keep the peak tracking of the forward pass
                tp = _peak(fin, n, tp, s2, m, d)[0]
            continue
        lo, hi, _, tp = _window(fin, n, T0, s2, m, d, concave, tp)
        inside = n + lo >= 0 and n + hi < N
        fo = fout[no]
        sd = 0.0
        sf = 0.0
        for t in range(lo, hi + 1):
            x = t * d
            v = fin[n + t] if inside else _at(fin, n + t)
            pt = math.exp(-0.5 * x * x / s2 - ltot + m * (v - fo))
            ct = 0.5 * x * x / (s2 * s2) - abar
            if m == 0.0:
                sd += ct * pt * v
            else:
                sd += ct * pt
                sf += pt * v
            if inside:
                Pin[n + t] += p * pt
            else:
                _scatter(Pin, n + t, p * pt)
        if m == 0.0:
            g_s2 += p * sd
        else:
            g_s2 += p * sd / m
            g_m += p * (sf - fo) / m
    return g_s2, g_m


@numba.njit(cache=True, fastmath=False)
def nested_average(ftop, J, delta, strides, s2, m, L, want_grad, concave=False):
    """Value and gradient of ``E_z f_0(sqrt(s2[0]) z)`` with f_k = ftop (see module docstring),
    every level on the symmetric range ``|h| <= J delta`` (:func:`nested_average_ranges`).

    Parameters
    ----------
    ftop : values of the innermost function f_k on the lattice of stride strides[k]
        (length 2 J/strides[k] + 1, centred at h = 0)
    J : half-size of the master lattice (a multiple of every stride), delta its spacing
    strides : int array (k+1,), strides[i] of level i, non-increasing, each divisible by the next
    s2 : (k+1,) variances; s2[0] of the final average, s2[i] = q_i - q_{i-1} of step i
    m : (k+1,) Parisi parameters of the steps (m[0] unused, the final average has m = 0)
    concave : ftop is concave in h (then so is every level, by Prekopa's theorem): the tilted
        sums run over windows centred on their peaks (:func:`_window`), much shorter when
        ``m s2 |f'|`` is large
    Returns
    -------
    value, g_s2 (k+1,), g_m (k+1,), P_top (sensitivity of the value to each ftop entry)
    """
    k = strides.shape[0] - 1
    lo = np.empty(k + 1, dtype=np.int64)
    size = np.empty(k + 1, dtype=np.int64)
    for i in range(k + 1):
        lo[i] = -(J // strides[i])
        size[i] = 2 * (J // strides[i]) + 1
    return nested_average_ranges(ftop, lo, size, delta, strides, s2, m, L, want_grad, concave)


@numba.njit(cache=True, fastmath=False)
def nested_average_ranges(ftop, lo, size, delta, strides, s2, m, L, want_grad, concave):
    """:func:`nested_average` with level i on the indices ``lo[i] .. lo[i] + size[i] - 1``
    (``h = j strides[i] delta``); values beyond a level's ends are continued by :func:`_at`,
    so a level need only cover where its function is not yet quadratic (see
    ``kstep.make_lattice``).  ``ftop`` has ``size[k]`` entries."""
    k = strides.shape[0] - 1
    offs = np.empty(k + 2, dtype=np.int64)
    offs[0] = 0
    for i in range(k + 1):
        offs[i + 1] = offs[i] + size[i]
    F = np.empty(offs[k + 1])
    F[offs[k]:offs[k + 1]] = ftop
    for i in range(k, 0, -1):
        _step(F[offs[i]:offs[i + 1]], lo[i], lo[i - 1], strides[i - 1] // strides[i],
              s2[i], m[i], strides[i] * delta, L, F[offs[i - 1]:offs[i]], concave)
    # final average at h = 0 with variance s2[0] (m = 0): one output point of a step
    f0 = F[offs[0]:offs[1]]
    d0 = strides[0] * delta
    out = np.empty(1)
    if s2[0] <= 0.0:
        out[0] = _at(f0, -lo[0])
    else:
        _step(f0, lo[0], 0, 1, s2[0], 0.0, d0, L, out)
    val = out[0]
    g_s2 = np.zeros(k + 1)
    g_m = np.zeros(k + 1)
    if not want_grad:
        return val, g_s2, g_m, np.zeros(0)
    P = np.zeros(offs[k + 1])
    one = np.ones(1)
    g_s2[0], _ = _step_adjoint(f0, out, lo[0], 0, 1, s2[0], 0.0, d0, L, one, P[offs[0]:offs[1]])
    for i in range(1, k + 1):
        gs, gm = _step_adjoint(F[offs[i]:offs[i + 1]], F[offs[i - 1]:offs[i]], lo[i], lo[i - 1],
                               strides[i - 1] // strides[i], s2[i], m[i], strides[i] * delta, L,
                               P[offs[i - 1]:offs[i]], P[offs[i]:offs[i + 1]], concave)
        g_s2[i] = gs
        g_m[i] = gm
    return val, g_s2, g_m, P[offs[k]:offs[k + 1]].copy()
