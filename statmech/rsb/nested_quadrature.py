r"""A second discretisation of the jammed k-step functional of a kernel perceptron (cross-checks).

The production code evaluates the nested average (K1) of ``docs/rsb.md`` on nested uniform field
lattices (trapezoid rule, :mod:`statmech.rsb._lattice`) with the channel tabulated from sympy
(:mod:`statmech.rsb.channels`).  This module evaluates the same functional a different way and
shares no code with them (it imports numpy, ``scipy.special.log_ndtr`` and the argument checks of the cores only):

* every level i lives on its own set of **Gauss--Legendre panel nodes** ``X_i`` in the *field*
  (a Nystrom discretisation: ``f_{i-1}`` is needed only at the nodes of the next outer integral,
  so no function is ever interpolated or continued beyond a window);
* the innermost (frozen) level is evaluated in closed form at every node of ``X_{k-1}``;
* each step ``f_{i-1}(x) = (1/yh_i) log sum_j w_j N(x_j; x, v_i) exp(yh_i f_i(x_j))`` is a
  dense log-sum-exp over the nodes ``x_j`` (rows in blocks, no cut-off of the exponent);
* the entropic term is written out directly from the eigenvalues of the Parisi matrix.

Functional (the jamming point of an infinitely wide tree committee, docs/committee.md, Eqs.
KI.3 and KS.1--KS.4): breakpoints ``q_0 < ... < q_{k-1} < q_k = 1`` of the weight overlaps,
output overlaps ``Q_i = Q(q_i)``, energetic Parisi parameters ``yh_1 .. yh_k`` and the entropic
ones ``y_i = s yh_i`` (``s = Q'(1)``)::

    R = s S / (-Phi)
    S = 1/2 [sum_i (1/y_i) log(L_i/L_{i+1}) + q_0/L_1],  L_{k+1} = 1,  L_i = L_{i+1} + y_i (q_i - q_{i-1})
    Phi = E_{x ~ N(0, Q_0)} f_0(x)
    f_{i-1}(x) = (1/yh_i) log E_{x' ~ N(x, Q_i - Q_{i-1})} exp(yh_i f_i(x'))        i = k-1 .. 1
    f_{k-1}(x) = (1/yh_k) log E_{x' ~ N(x, 1 - Q_{k-1})} exp(-yh_k (x')_-^2/2)        (closed form)

The node density is set by the widths of the tilted Gaussians (``panels_per_width`` panels of
``nodes`` Gauss--Legendre points per width); the field windows reach ``span`` standard deviations
beyond every level's support.  Accuracy is checked by doubling the density
(:func:`jamming_ratio_quadrature` returns the change as ``error`` when asked).  Cost: the dense
steps are ``O(n^2)`` per level with ``n`` ~ 10^3 nodes (a few tenths of a second per evaluation);
this is a reference, not a solver.
"""
from __future__ import annotations

import math

import numpy as np
from scipy.special import log_ndtr

from ..errors import check_int, check_range
from ..result import check_real

__all__ = ["frozen_soft_hinge", "frozen_cubic_moment", "jammed_spherical_entropic", "nested_jamming_average",
           "jamming_ratio_quadrature"]

_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
SPAN = 12.0            # window half-widths in standard deviations (Gaussian weight e^-72 beyond)
ROW_BLOCK = 256        # rows of a dense step evaluated at once


def _check_level(function, x, var, yh):
    check_real("x", x, function=function)
    x = np.asarray(check_range("x", x), dtype=float)
    var = float(check_range("var", check_real("var", var, function=function), 0.0, lo_open=True))
    yh = float(check_range("yh", check_real("yh", yh, function=function), 0.0, lo_open=True))
    return x, var, yh


def frozen_soft_hinge(x, var, yh):
    """``(1/yh) log E_z exp(-yh (x + sqrt(var) z)_-^2/2)`` in closed form (``yh > 0``, ``var > 0``).

    With ``u = 1 + yh var``: the part of the Gaussian on the violated side, completed to a square,
    is ``u^-1/2 exp(-yh x^2/(2u)) Phi(-x/sqrt(u var))``; the satisfied side is ``Phi(x/sqrt(var))``.
    Both logs by ``log_ndtr`` (no underflow however deep ``x`` is).  Domain: x finite (array),
    var > 0, yh > 0 (ValueError naming the argument otherwise).
    """
    x, var, yh = _check_level("frozen_soft_hinge", x, var, yh)
    sd = math.sqrt(var)
    u = 1.0 + yh * var
    a = log_ndtr(x / sd)
    b = -0.5 * math.log(u) - 0.5 * yh * x * x / u + log_ndtr(-x / (sd * math.sqrt(u)))
    return np.logaddexp(a, b) / yh


def frozen_cubic_moment(x, var, yh):
    """``E_t[(x')_-^3]`` under the frozen level's tilted measure ``N(x'; x, var) exp(-yh (x')_-^2/2)``
    (normalized): the derivative of :func:`frozen_soft_hinge` with respect to ``-eps`` when the terminal
    ``-(x')_-^2/2`` becomes ``-(x')_-^2/2 - eps (x')_-^3``.

    On the violated side the tilted Gaussian is ``N(x/u, var/u)`` with weight
    ``u^-1/2 exp(-yh x^2/(2u))`` (``u = 1 + yh var``); for ``W ~ N(m, t^2)``,
    ``E[W^3; W > 0] = (m^3 + 3 m t^2) Phi(m/t) + t (m^2 + 2 t^2) phi(m/t)`` with ``m = -x/u``.
    Domain as :func:`frozen_soft_hinge`.
    """
    x, var, yh = _check_level("frozen_cubic_moment", x, var, yh)
    sd = math.sqrt(var)
    u = 1.0 + yh * var
    t = sd / math.sqrt(u)
    m = -x / u
    la = log_ndtr(x / sd)                                                    # satisfied side
    lb = -0.5 * math.log(u) - 0.5 * yh * x * x / u + log_ndtr(m / t)         # violated side
    lz = np.logaddexp(la, lb)
    # E[W^3; W > 0] / P(W > 0) for W ~ N(m, t^2), written with the inverse Mills ratio (no 0/0 deep in the tail)
    r = np.exp(-0.5 * (m / t) ** 2 - _LOG_SQRT_2PI - log_ndtr(m / t))       # phi(m/t)/Phi(m/t)
    cond = m ** 3 + 3.0 * m * t * t + t * (m * m + 2.0 * t * t) * r
    return np.exp(lb - lz) * cond


def jammed_spherical_entropic(q, y):
    """``S = 1/2 [sum_i (1/y_i) log(L_i/L_{i+1}) + q_0/L_1]`` with ``L_{k+1} = 1``,
    ``L_i = L_{i+1} + y_i (q_i - q_{i-1})``, ``q_k = 1`` (the coefficient of ``1/(1 - q_k)`` of
    ``(1/2n) log det`` of the jammed Parisi matrix, docs/committee.md Eq. KS.2).

    Domain: q non-decreasing in [0, 1] with ``len(y) + 1`` entries, the last 1; y > 0 (ValueError
    naming the argument otherwise)."""
    check_real("q", q, function="jammed_spherical_entropic")
    check_real("y", y, function="jammed_spherical_entropic")
    q = np.atleast_1d(np.asarray(check_range("q", q, 0.0, 1.0), dtype=float))
    y = np.atleast_1d(np.asarray(check_range("y", y, 0.0, lo_open=True), dtype=float))
    k = y.size
    if q.size != k + 1 or q[-1] != 1.0 or np.any(np.diff(q) < 0):
        raise ValueError(f"q must be non-decreasing with len(y) + 1 = {k + 1} entries ending with 1, got {q!r}")
    L = np.empty(k + 2)
    L[k + 1] = 1.0
    for i in range(k, 0, -1):
        L[i] = L[i + 1] + y[i - 1] * (q[i] - q[i - 1])
    S = q[0] / L[1]
    for i in range(1, k + 1):
        S += math.log(L[i] / L[i + 1]) / y[i - 1]
    return 0.5 * S


def _gl_nodes(lo, hi, width, panels_per_width, nodes):
    """Gauss--Legendre panel nodes and weights on [lo, hi], panels no wider than width/panels_per_width."""
    n_pan = max(1, int(math.ceil((hi - lo) * panels_per_width / width)))
    g, w = np.polynomial.legendre.leggauss(nodes)
    edges = np.linspace(lo, hi, n_pan + 1)
    half = 0.5 * np.diff(edges)
    mid = 0.5 * (edges[1:] + edges[:-1])
    return (mid[:, None] + half[:, None] * g[None, :]).ravel(), (half[:, None] * w[None, :]).ravel()


def _step(x_out, x_in, logw_in, f_in, var, yh, d_in=None):
    """``(1/yh) log sum_j w_j N(x_j; x, var) exp(yh f_j)`` for every ``x`` in ``x_out`` (dense, by row
    blocks); with ``d_in`` (a derivative of ``f_in``) also the tilted average ``sum_j P_j(x) d_j``."""
    out = np.empty(x_out.size)
    dout = None if d_in is None else np.empty(x_out.size)
    base = logw_in + yh * f_in - 0.5 * math.log(var) - _LOG_SQRT_2PI
    for a in range(0, x_out.size, ROW_BLOCK):
        xo = x_out[a:a + ROW_BLOCK, None]
        e = base[None, :] - 0.5 * (x_in[None, :] - xo) ** 2 / var
        m = e.max(axis=1)
        p = np.exp(e - m[:, None])
        tot = p.sum(axis=1)
        out[a:a + ROW_BLOCK] = (m + np.log(tot)) / yh
        if d_in is not None:
            dout[a:a + ROW_BLOCK] = (p @ d_in) / tot
    return out, dout


def nested_jamming_average(Q, yh, *, panels_per_width=1.0, nodes=10, span=SPAN, cubic=False):
    """``Phi`` of the module docstring for output breakpoints ``Q = (Q_0, ..., Q_{k-1}, 1)`` and ``yh``.

    Parameters
    ----------
    Q : increasing breakpoints in (0, 1], the last equal to 1 (k = len(Q) - 1 >= 1)
    yh : k energetic Parisi parameters, all > 0 (non-decreasing for a physical Parisi function,
        not required here)
    panels_per_width, nodes : node density (Gauss--Legendre panels per tilted width, points per panel)
    span : window half-widths in standard deviations
    cubic : also return ``dPhi/d eps`` for the terminal ``-(x)_-^2/2 - eps (x)_-^3`` at eps = 0,
        i.e. minus the cubic moment ``E[(x)_-^3]`` under the nested tilted measure (each step's tilted
        weights carry the derivative outwards; exact for the discretised functional)

    Returns
    -------
    float, or ``(Phi, dPhi/d eps)`` with ``cubic=True``
    """
    check_real("Q", Q, function="nested_jamming_average")
    check_real("yh", yh, function="nested_jamming_average")
    Q = np.atleast_1d(np.asarray(check_range("Q", Q, 0.0, 1.0), dtype=float))
    yh = np.atleast_1d(np.asarray(check_range("yh", yh), dtype=float))
    panels_per_width = float(check_range("panels_per_width", panels_per_width, 0.0, lo_open=True))
    nodes = check_int("nodes", nodes, 2)
    span = float(check_range("span", span, 1.0))
    k = yh.size
    if Q.size != k + 1 or Q[-1] != 1.0:
        raise ValueError(f"Q must have len(yh) + 1 = {k + 1} entries ending with 1, got {Q!r}")
    if not (np.all(np.diff(Q) > 0) and Q[0] > 0):
        raise ValueError(f"Q must be increasing in (0, 1], got {Q!r}")
    if not np.all(yh > 0):
        raise ValueError(f"yh must be > 0, got {yh!r}")
    var = np.diff(Q)                     # var[i-1] = Q_i - Q_{i-1}, i = 1 .. k (var[k-1]: the frozen step)
    sd0 = math.sqrt(Q[0])
    # curvature scales: |f_i''| <= 1/lam[i], lam[k] = 1 (terminal -x_-^2/2), lam[i-1] = lam[i] + yh_i var_i
    lam = np.empty(k + 1)
    lam[k] = 1.0
    for i in range(k, 0, -1):
        lam[i - 1] = lam[i] + yh[i - 1] * var[i - 1]
    # windows: level i (i = 0 .. k-1) holds fields of variance Q_i around 0
    sds = np.concatenate([[sd0], np.sqrt(var[:-1])])
    half = span * np.cumsum(sds)
    grids = []
    for i in range(k):
        if i == 0:
            width = min(sd0, math.sqrt(lam[0]))
        else:
            s = sds[i]
            width = min(s / math.sqrt(1.0 + yh[i - 1] * s * s / lam[i]), math.sqrt(lam[i]))
        grids.append(_gl_nodes(-half[i], half[i], width, panels_per_width, nodes))
    x, w = grids[k - 1]
    f = frozen_soft_hinge(x, var[k - 1], yh[k - 1])
    d = -frozen_cubic_moment(x, var[k - 1], yh[k - 1]) if cubic else None
    for i in range(k - 1, 0, -1):
        xo, wo = grids[i - 1]
        f, d = _step(xo, x, np.log(w), f, var[i - 1], yh[i - 1], d)
        x, w = xo, wo
    dens = np.exp(-0.5 * x * x / Q[0] - _LOG_SQRT_2PI) / sd0
    phi = float(np.dot(w * dens, f))
    return (phi, float(np.dot(w * dens, d))) if cubic else phi


def jamming_ratio_quadrature(q, yh, kernel, scale, *, panels_per_width=1.0, nodes=10, span=SPAN, error=False):
    """``R(q, yh) = s S(q, s yh) / (-Phi(Q(q), yh))`` by :func:`nested_jamming_average`.

    Parameters
    ----------
    q : weight-overlap breakpoints ``q_0 < ... < q_{k-1} < q_k = 1``, ``q_0 > 0``
    yh : k energetic Parisi parameters (> 0)
    kernel : callable, ``kernel(q) -> Q`` (scalar or array in, same out; ``Q(1) = 1``)
    scale : ``s = Q'(1)`` (> 0, finite)
    error : also return the change of R when the node density is doubled

    Returns
    -------
    float, or ``(R, change)`` with ``error=True``
    """
    check_real("q", q, function="jamming_ratio_quadrature")
    check_real("yh", yh, function="jamming_ratio_quadrature")
    check_real("scale", scale, function="jamming_ratio_quadrature")
    q = np.atleast_1d(np.asarray(check_range("q", q, 0.0, 1.0), dtype=float))
    yh = np.atleast_1d(np.asarray(check_range("yh", yh, 0.0, lo_open=True), dtype=float))
    if not (scale > 0.0 and math.isfinite(scale)):
        raise ValueError(f"scale must be a finite number > 0, got {scale!r}")
    if not callable(kernel):
        raise TypeError(f"jamming_ratio_quadrature: kernel must be callable q -> Q(q), got {kernel!r}")
    if q.size != yh.size + 1 or q[-1] != 1.0 or not (q[0] > 0.0 and np.all(np.diff(q) > 0)):
        raise ValueError(f"q must be increasing in (0, 1] with len(yh) + 1 entries ending with 1, got {q!r}")
    Q = np.array([float(kernel(float(v))) for v in q[:-1]] + [1.0])
    S = jammed_spherical_entropic(q, scale * yh)

    def ratio(ppw, nn):
        return scale * S / -nested_jamming_average(Q, yh, panels_per_width=ppw, nodes=nn, span=span)
    r = ratio(panels_per_width, nodes)
    if not error:
        return r
    return r, abs(ratio(2.0 * panels_per_width, nodes) - r)
