"""The stationary points of the site-symmetric beta f at one (alpha, K), finite K: multistart in the charts of
:mod:`statmech.scm._charts` from a grid of starts over the whole domain (scaled to alpha and K) and the
large-alpha law, the R = S state exactly, deduplication and classification."""
from __future__ import annotations

import math

import numpy as np

from ._charts import ROW
from ._equations import _kern
from ._large_alpha import _coefficients, theta_derivatives

_MAXIT = 200
#: row columns (see ``_charts.chart_solve``)
COL = dict(R=3, S=4, C=5, f=6, eps=7, s=8, lam=9, conv=12, its=13, step=14, chart=15, noise=16, t1=17, t2=18,
           omr=19)


def ref_moments(info):
    """(m(0), m(1)) consistent with the kernels (``_kern.ref_moments``)."""
    return tuple(float(x) for x in _kern.ref_moments(info.code, info.cc, float(info.m0), float(info.m1)))


def _args(info):
    m0, m1 = ref_moments(info)
    return info.code, info.cc, m0, m1, float(info.dm0)


def chart_of(K, R, S, C, y):
    """The chart for a start at (R, S, C) (the rules of ``_charts.switch_chart``); fills y; -1 outside."""
    a1, a2 = _kern.eigen_gaps(K, R, S, C)
    if not (a1 > 0.0 and a2 > 0.0 and abs(C) < 1.0):
        return -1
    n = K - 1.0
    ru = (R + n * S) / math.sqrt(1.0 + n * C)
    if a2 < 0.05 and R > 0.3:
        ch = 1
    elif a2 < 0.05 and R < S and ru > 0.2:
        ch = 2
    elif ru >= 0.1:
        ch = 0
    else:
        ch = 3
    _kern.to_chart(ch, K, R, S, C, a1, a2, y)
    return ch


def starts(info, alpha, K):
    """{chart: array of starts}: the large-alpha law (scaled by 0.3 ... 30) and a grid over the domain in
    the collective coordinates -- v = (K-1) C, a1 (giving u = sqrt(1 + v - a1)) and a2 (giving
    delta = +-sqrt(1 - C - a2)), with a1, a2 on the scales 1/(1 + alpha K m'(0)) and 1/(1 + alpha B) that
    the minima take at large alpha and K."""
    out = {0: [], 1: [], 2: [], 3: []}
    y = np.empty(3)
    n = K - 1.0
    B = -theta_derivatives(info)[0] - info.dm0      # m'(1) - m'(0) >= 0
    if alpha > 0.0 and B > 1e-12 and (info.code != 3 or info.cc[3, 6] == 1.0):
        c = _coefficients(info, K)
        if c["a2"] > 0 and c["a1"] > 0:
            for fac in (1.0, 0.3, 3.0, 10.0, 30.0):
                a1, a2, S = fac * c["a1"] / alpha, fac * c["a2"] / alpha, fac * c["S"] / alpha
                if n * S * S + (n * a2 + a1) / K < 1.0:
                    out[1].append(np.array([math.log(a1), math.log(a2), S]))
    B = max(B, 1e-3)
    for v in (-0.5 * min(1.0, n), 0.0, 0.3, 0.02 * n, 0.2 * n):
        C = v / n
        if not (-1.0 < C < 0.95 and v > -1.0):
            continue
        a1s = [(1 + v) * c for c in (0.99, 0.5, 0.1)] + \
              [(1 + v) * min(0.995, c / (1.0 + alpha * K * info.dm0)) for c in (0.3, 3.0)]
        a2s = [(1 - C) * c for c in (0.99, 0.84, 0.51, 0.19, 0.02)] + \
              [(1 - C) * min(0.995, c / (1.0 + alpha * B)) for c in (0.3, 3.0)]
        for a1 in a1s:
            u = math.sqrt(1.0 + v - a1)
            for a2 in a2s:
                ad = math.sqrt(1.0 - C - a2)
                for dl in (ad, -ad):
                    ch = chart_of(K, (u + n * dl) / K, (u - dl) / K, C, y)
                    if ch >= 0:
                        out[ch].append(y.copy())
    return {k: np.array(v) for k, v in out.items() if v}


def solve_from(info, alpha, K, chart, y0s, minimize, maxit=_MAXIT):
    """Rows of ``_kern.chart_solve`` from the starts ``y0s`` in ``chart``."""
    y0s = np.ascontiguousarray(y0s, dtype=float)
    out = np.empty((y0s.shape[0], ROW))
    _kern.chart_multistart(chart, *_args(info), float(alpha), float(K), y0s, bool(minimize), maxit, out)
    return out


def unspecialized_row(info, alpha, K):
    """The R = S stationary point (a minimum or a saddle): the bracketed root of the scaled R = S
    equations (``_kern.unspec_state``), polished in chart 0 at delta = 0 (where the gradient in delta
    vanishes by symmetry, so Newton stays on R = S); alpha = 0 is R = S = C = 0 (chart 3).  None if the
    root is not found."""
    if alpha == 0.0:
        return solve_from(info, 0.0, K, 3, np.zeros((1, 3)), False, 5)[0]
    v, t, u, ok = _kern.unspec_state(info.code, info.cc, float(alpha), float(K))
    if not ok:
        return None
    chart = 0 if u / math.sqrt(1.0 + v) >= 0.1 else 3
    y0 = np.array([0.0, t, v]) if chart == 0 else np.array([0.0, u, v])
    row = solve_from(info, alpha, K, chart, y0[None, :], False, 20)[0]
    return row if row[COL["conv"]] == 1.0 else None


def classify(row):
    d = row[COL["R"]] - row[COL["S"]]
    if abs(d) <= 1e-9 * (1.0 + abs(row[COL["R"]])):
        return "unspecialized"
    return "specialized" if d > 0 else "anti-specialized"


def _same(a, b):
    return (abs((a[COL["R"]] - a[COL["S"]]) - (b[COL["R"]] - b[COL["S"]])) <= 1e-6
            and abs(a[COL["t1"]] - b[COL["t1"]]) <= 1e-3 and abs(a[COL["t2"]] - b[COL["t2"]]) <= 1e-3)


def dedupe(rows):
    """One row per distinct stationary point (same delta to 1e-6, ln a1 and ln a2 to 1e-3), the best
    converged (smallest Newton step) kept; rows sorted by beta f."""
    out = []
    for r in sorted(rows, key=lambda r: r[COL["step"]]):
        if not any(_same(r, u) for u in out):
            out.append(r)
    return sorted(out, key=lambda r: r[COL["f"]])


def stationary_points(info, alpha, K, *, minima=True, saddles=False):
    """Distinct converged stationary points at (alpha, K) (finite K): the local minima (descent from
    every start) and, with ``saddles``, the other stationary points Newton reaches from the same starts;
    the R = S point always (exact).  Rows sorted by beta f."""
    rows = []
    st = starts(info, alpha, K)
    for flag, want in ((True, minima), (False, saddles)):
        if not want:
            continue
        for chart, y0s in st.items():
            out = solve_from(info, alpha, K, chart, y0s, flag)
            rows.extend(r for r in out if r[COL["conv"]] == 1.0)
    u = unspecialized_row(info, alpha, K)
    if u is not None:
        u = u.copy()
        u[COL["step"]] = -1.0       # preferred representative of R = S (exact symmetry)
        rows = [r for r in rows if not (classify(r) == "unspecialized" and _same(r, u))] + [u]
    pts = dedupe(rows)
    for r in pts:
        if r[COL["step"]] < 0:
            r[COL["step"]] = 0.0
    return pts
