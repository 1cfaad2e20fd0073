"""Activations of the SCM: the pair moment m(rho) = E[g(u) g(v)] in closed form or by quadrature."""
from __future__ import annotations

import math
import weakref
from dataclasses import dataclass

import numpy as np

from ..errors import check_choice, check_range
from ..result import check_real
from ._equations import _kern

ACTIVATIONS = ("erf", "relu", "linear")
_CODES = {"erf": 0, "relu": 1, "linear": 2}
_CHEB_DEG = 96


@dataclass(frozen=True)
class Activation:
    """Resolved activation: pair moment m(rho) = E[g(u) g(v)] at unit variances.

    ``code`` 0/1/2 = erf/relu/linear closed forms, 3 = Chebyshev interpolant ``cc`` of a generic g
    (rows: coefficients of m, dm/dtheta, d^2m/dtheta^2 in x = theta / (pi/2), rho = sin theta; row 3: the
    theta-derivatives at the ends (``_end_derivatives``), at 6 the flag 1.0 for a continuous g, at 7 and 8
    the x-slopes of row 0 at x = 1 and -1 summed exactly (``_exact_end_slope``), at 9 and 10 the theta-slopes
    faded out near the ends for a continuous g (``_end_slopes``)).  ``m0 = m(0) = E[g]^2``,
    ``m1 = m(1) = E[g^2]``, ``dm0 = m'(0) = E[g']^2``.
    """
    name: str
    code: int
    cc: np.ndarray
    m0: float
    m1: float
    dm0: float
    func: object = None

    def m(self, rho):
        """m(rho) (vectorized)."""
        rho = np.asarray(rho, dtype=float)
        if self.code < 3:
            return getattr(_kern, f"pmv_{self.name}_v")(rho)
        return _m_generic(self.cc, rho)


_GENERIC_CACHE: dict = {}


def _pair_expect(g, sa, sb, r, level=3):
    """E[g(sa x) g(sb (r x + sqrt(1 - r^2) z))] for independent standard x, z.

    Piecewise tanh--sinh nodes (statmech.gaussian.piecewise_nodes) with the breakpoints where
    the arguments of g vanish (x = 0 and z = -r x / sqrt(1 - r^2)): exact to ~1e-12 for
    smooth g and for g with kinks at 0 (ReLU, leaky ReLU, ``|x|``, ...); no cut-off.
    """
    from ..gaussian import piecewise_nodes
    xs, wx = piecewise_nodes([0.0], level)
    keep = wx > 0
    xs, wx = xs[keep], wx[keep]
    gx = np.asarray(g(sa * xs), dtype=float)
    s = math.sqrt(max(0.0, 1.0 - r * r))
    if s == 0.0:
        return float(np.dot(wx, gx * np.asarray(g(sb * r * xs), dtype=float)))
    tot = 0.0
    for x, w, gxx in zip(xs, wx, gx):
        if gxx == 0.0:
            continue
        zs, wz = piecewise_nodes([-r * x / s], level)
        tot += w * gxx * float(np.dot(wz, np.asarray(g(sb * (r * x + s * zs)), dtype=float)))
    return tot


def _generic_pair_moment_grid(g, rhos, level=3):
    """E[g(u) g(v)] at correlations rhos (unit variances), see :func:`_pair_expect`."""
    z = np.linspace(-3, 3, 7)
    gx = np.asarray(g(z), dtype=float)
    if gx.shape != z.shape or not np.all(np.isfinite(gx)):
        raise ValueError("activation must be a vectorized callable g(x) returning finite values of the input's shape")
    return np.array([_pair_expect(g, 1.0, 1.0, float(r), level) for r in rhos])


#: width in theta of the end zones where a generic g's spurious end slope is faded out (``_end_slopes``)
END_ZONE = 0.05


def _end_slopes(c, top, bottom):
    """(v_top, v_bot, continuous): the interpolant's dm/dtheta at theta = +-pi/2 (from its exactly summed
    x-slopes ``top``, ``bottom``), and whether g is taken as continuous.

    dm/dtheta = m'(rho) cos theta vanishes at rho = +-1 whenever m'(+-1) = E[g'^2] is finite (g continuous);
    the fit leaves ~1e-11 (smooth g) to ~4e-8 (a kink), which near rho = 1 would make m'(rho) grow like
    v / sqrt(2 (1 - rho)) and m'' like its cube -- the regime of the specialized states at large alpha.
    For a continuous g (``|v|`` < 1e-6 of the end curvature) the evaluation removes it within the end zones
    p = pi/2 - ``|theta|`` < 0.05 by adding +-v 0.05 W(p / 0.05), W(t) = t - 3t^2 + 3t^3 - t^4 (W' = (1-t)^2
    (1-4t): the slope at the end is cancelled, W(1) = W'(1) = 0: m is unchanged outside the zones, at the
    ends and in its C^1 join); m'' changes by ~6 v / 0.05 <= 5e-6 inside them.  A series correction would
    instead change m'' by ~v everywhere.  A discontinuous g (dm/dtheta = 2/pi for sign) is left as it is."""
    from numpy.polynomial import chebyshev as Ch
    # from the exactly summed x-slopes (``top`` = sum k^2 c_k, ``bottom`` = sum k^2 (-1)^k c_k), so that the
    # fade cancels the linear part of the series' fall to the last bit (``_solver.q_top_e``)
    vt, vb = top / (0.5 * np.pi), -bottom / (0.5 * np.pi)
    dd = Ch.chebder(c, 2)
    scale = max(abs(float(Ch.chebval(1.0, dd))), abs(float(Ch.chebval(-1.0, dd)))) / (0.5 * np.pi) ** 2
    return vt, vb, max(abs(vt), abs(vb)) <= 1e-6 * max(scale, 1e-300)


def _fade(t):
    """(W, W', W'') of the end-zone fade W(t) = t - 3t^2 + 3t^3 - t^4 on [0, 1] (0 beyond)."""
    t = np.asarray(t, dtype=float)
    inside = t < 1.0
    W = np.where(inside, t - 3 * t ** 2 + 3 * t ** 3 - t ** 4, 0.0)
    W1 = np.where(inside, (1 - t) ** 2 * (1 - 4 * t), 0.0)
    W2 = np.where(inside, -6 + 18 * t - 12 * t ** 2, 0.0)
    return W, W1, W2


def _m_generic(cc, rho):
    """m(rho) of a generic g: the Chebyshev series with the end-zone fade of ``_end_slopes`` (vectorized)."""
    from numpy.polynomial import chebyshev as Ch
    rho = np.clip(np.asarray(rho, dtype=float), -1.0, 1.0)
    th = np.arcsin(rho)
    m = Ch.chebval(th / (0.5 * np.pi), cc[0])
    p = 0.5 * np.pi - np.abs(th)
    W = _fade(p / END_ZONE)[0]
    return m + np.where(th > 0, cc[3, 9], -cc[3, 10]) * END_ZONE * W


def _exact_end_slope(c):
    """sum_k k^2 c_k (the x-derivative of the series at x = 1) summed exactly (rational arithmetic), rounded
    once (floating-point summation would leave ~1e-16, which near the end would dominate the series' fall)."""
    from fractions import Fraction
    return float(sum(Fraction(k * k) * Fraction(float(x)) for k, x in enumerate(c)))


def _end_derivatives(cc):
    """(M2, M3, M4, L2, L3, L4): d^k m / d theta^k at theta = pi/2 (M) and -pi/2 (L), k = 2, 3, 4, for the
    large-alpha law and the Taylor forms of m'' within 1e-3 of the ends (``_solver.cheb_end_moments``).

    M2, L2: the faded interpolant's own end curvature (the series' end value of d^2m/dtheta^2 and the fade's
    -6 v / 0.05).  M3, M4, L3, L4: read off the series' fall from its end values, m(pi/2 - p) - m(pi/2) =
    M2 p^2/2 - M3 p^3/6 + M4 p^4/24 - ... (and m(-pi/2 + p) - m(-pi/2) = L2 p^2/2 + L3 p^3/6 + ...),
    divided by p^2 and fitted by a degree-12 polynomial in p on 41 points in (0, 0.5) (the fade changes
    these by < 1e-3 relative).  The interpolant fixes them only so far: M3 to ~1e-5, M4 to ~1e-3 relative
    (its ~1e-16 tail coefficients enter the k-th end derivative amplified by ~N^(2k)); a third derivative
    below 1e-2 of the second is set to 0 (a smooth g, for which m(sin theta) is even about +-pi/2; a kink
    gives ``|M3/M2|`` ~ 0.6)."""
    from numpy.polynomial import chebyshev as Ch
    c = cc[0]
    p = 0.25 * (1.0 - np.cos(np.pi * (np.arange(41) + 0.5) / 41))      # in (0, 0.5)
    t = p / 0.5
    V = np.vander(t, 13, increasing=True)
    out = []
    for side, v in ((1.0, cc[3, 9]), (-1.0, cc[3, 10])):
        x = side * (1.0 - p / (0.5 * np.pi))
        diff = (Ch.chebval(x, c) - Ch.chebval(side, c)) / p ** 2
        a = np.linalg.lstsq(V, diff, rcond=None)[0]
        a1, a2 = a[1] / 0.5, a[2] / 0.25
        sg = -1.0 if side > 0 else 1.0        # odd powers of p change sign at the top end
        curv = (2.0 / np.pi) ** 2 * Ch.chebval(side, Ch.chebder(c, 2)) - 6.0 * side * v / END_ZONE
        M = [curv, sg * 6.0 * a1, 24.0 * a2]
        if abs(M[1]) < 1e-2 * abs(M[0]):
            M[1] = 0.0
        out += M
    return out


def activation_info(activation) -> Activation:
    """Resolve ``activation`` ("erf", "relu", "linear" or a callable g(x)) to an :class:`Activation`.

    A callable may provide ``pair_moment(rho)`` (E[g(u)g(v)] at unit variances and
    correlation rho, vectorized) and ``mean()`` (E[g(z)]); otherwise m(rho) is computed
    by 2-D piecewise tanh-sinh quadrature (breakpoints where the arguments of g vanish) and
    interpolated by a degree-96 Chebyshev series
    in theta = arcsin(rho) (the sqrt(1 - rho^2) end-point singularities of kinked activations such
    as ReLU are analytic in theta, so the interpolation converges spectrally), with dm/dtheta = 0 imposed at
    rho = +-1 for a continuous g (``_end_slopes``).

    Domain: one of :data:`ACTIVATIONS`, an :class:`Activation`, or a vectorized callable g(x) with
    finite second moment (ValueError otherwise).  A generic g is represented to ~1e-13 in m(rho); near
    rho = 1, where the specialized states sit at large alpha, its end curvature m'(1) to ~1e-8.
    """
    if isinstance(activation, Activation):
        return activation
    if isinstance(activation, str):
        check_choice("activation", activation, ACTIVATIONS)
        code = _CODES[activation]
        pm = getattr(_kern, f"pmv_{activation}")
        d0 = getattr(_kern, f"pm_{activation}")(0.0)[1]
        return Activation(activation, code, np.zeros((3, 1)), float(pm(0.0)), float(pm(1.0)), float(d0))
    if not callable(activation):
        raise ValueError(f"activation must be one of 'erf', 'relu', 'linear' or a callable g(x), got {activation!r}")
    key = id(activation)
    hit = _GENERIC_CACHE.get(key)
    if hit is not None and hit[0]() is activation:
        return hit[1]
    from numpy.polynomial import chebyshev as Ch
    xk = np.cos(np.pi * (np.arange(_CHEB_DEG + 1) + 0.5) / (_CHEB_DEG + 1))
    nodes = np.sin(0.5 * np.pi * xk)          # rho = sin(theta), theta = (pi/2) x
    if hasattr(activation, "pair_moment"):
        vals = np.asarray(activation.pair_moment(nodes), dtype=float)
        m1 = float(np.asarray(activation.pair_moment(np.array([1.0])), dtype=float).ravel()[0])
    else:
        vals = _generic_pair_moment_grid(activation, nodes)
        m1 = float(_generic_pair_moment_grid(activation, [1.0])[0])
    if hasattr(activation, "mean"):
        m0 = float(activation.mean()) ** 2
    else:
        from ..gaussian import piecewise_nodes
        z, w = piecewise_nodes([0.0], 6)
        m0 = float(np.dot(w, np.asarray(activation(z), dtype=float))) ** 2
    if not (np.all(np.isfinite(vals)) and math.isfinite(m1) and math.isfinite(m0)):
        raise ValueError("activation's pair moment is not finite (g must have finite second moment)")
    c0 = Ch.chebfit(xk, vals, _CHEB_DEG)
    c1 = Ch.chebder(c0)
    c2 = Ch.chebder(c1)
    n = c0.size
    cc = np.zeros((4, n))
    cc[0] = c0
    cc[1, :c1.size] = c1
    cc[2, :c2.size] = c2
    cc[3, 7] = _exact_end_slope(c0)                                   # sum k^2 c_k, exactly
    cc[3, 8] = _exact_end_slope(c0 * (-1.0) ** np.arange(c0.size))    # the same at the bottom end
    vt, vb, continuous = _end_slopes(c0, cc[3, 7], cc[3, 8])
    cc[3, 6] = 1.0 if continuous else 0.0
    cc[3, 9] = vt if continuous else 0.0                               # the end slopes faded out
    cc[3, 10] = vb if continuous else 0.0
    cc[3, :6] = _end_derivatives(cc)
    dm0 = float(Ch.chebval(0.0, c1)) / (0.5 * np.pi)  # dm/drho = dm/dtheta at rho = 0
    name = getattr(activation, "__name__", type(activation).__name__)
    info = Activation(str(name), 3, cc, m0, m1, dm0, activation)
    try:
        ref = weakref.ref(activation)
    except TypeError:
        ref = (lambda a=activation: a)
    _GENERIC_CACHE[key] = (ref, info)
    return info


def pair_moment(rho, activation="erf"):
    """m(rho) = E[g(u) g(v)] for unit-variance Gaussians u, v with correlation rho (``|rho| <= 1``).

    erf: (2/pi) arcsin(rho/2); ReLU: rho/4 + (sqrt(1-rho^2) + rho arcsin rho)/(2 pi)
    (Oostwal et al. 2019, Eq. 27); linear: rho; a callable: the Chebyshev interpolant (see activation_info).
    Domain: rho in [-1, 1] (ValueError otherwise, TypeError for a string or None).
    """
    check_real("rho", rho)
    rho = check_range("rho", rho, -1.0, 1.0)
    return activation_info(activation).m(rho)[()]


def _pm2(info, a, b, c):
    """E[g(x) g(y)] for centred Gaussians of variances a, b and covariance c (broadcast)."""
    if info.code < 3:
        return getattr(_kern, f"pm2_{info.name}_v")(a, b, c)
    # generic g: 2-D piecewise tanh-sinh quadrature with the given covariance
    g = info.func
    a, b, c = np.broadcast_arrays(np.asarray(a, float), np.asarray(b, float), np.asarray(c, float))
    out = np.empty(a.shape)
    for idx in np.ndindex(a.shape):
        sa, sb = math.sqrt(a[idx]), math.sqrt(b[idx])
        r = c[idx] / (sa * sb) if sa > 0 and sb > 0 else 0.0
        out[idx] = _pair_expect(g, sa, sb, min(1.0, max(-1.0, r)), 3)
    return out

