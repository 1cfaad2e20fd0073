"""Proximal operators of the spec's one-variable functions, inside numba.

Not imported for its functions: :mod:`statmech.glm._codegen` appends this text to the
generated kernel module of a model, after the generated dispatchers

* ``fn_nbreaks(k)``, ``fn_breaks(k, par, out)`` -- candidate kinks of function ``k``,
* ``fn_which(k, t, par)`` -- the piece active at ``t``,
* ``fn_val(k, i, t, par)`` -- ``(f, f', f'')`` of piece ``i`` at ``t``,
* ``fn_closed(k, i, a, V, par)`` -- ``(True, P)`` where piece ``i`` has a closed-form prox,
* ``fn_kind(k)`` -- 0 convex, 1 step (piecewise constant).

A function's *structure* at the parameter values (:func:`fn_struct`) is computed once per solve:
its kinks sorted and merged, the piece of every interval, the one-sided values and slopes at
the kinks.  :func:`prox` then returns ``P = argmin_t f(t) + (t - a)^2/(2V)`` with ``f(P)``,
``f'(P)``, ``dP/da`` and ``dP/dV``:

* convex functions: the kink ``c`` is the prox of every ``a`` in
  ``[c + V f'(c-), c + V f'(c+)]`` (``dP/da = dP/dV = 0`` there); elsewhere the interval is
  found by comparing ``a`` with these break values, and ``P + V f'(P) = a`` is solved on it in
  closed form or by Newton's method safeguarded by bisection on the bracket (the equation is
  increasing in P), to ``|dP| <= 4 eps (1 + |P|)``;
  ``dP/da = 1/(1 + V f''(P))``, ``dP/dV = -f'(P)/(1 + V f''(P))``;
* step functions (constant ``C_j`` on interval j): the candidate of interval j is ``a`` clipped
  to it, with envelope ``C_j + dist(a, I_j)^2/(2V)``; the least envelope wins.  The prox jumps
  where two candidates tie (:func:`fn_abreaks` returns those points with their jumps).
"""
import math
import typing

import numba
import numpy as np

if typing.TYPE_CHECKING:
    from statmech.glm._codegen import fn_breaks, fn_closed, fn_kind, fn_nbreaks, fn_val, fn_which

MAXK = 16                  # kinks per function (after merging)
SL = 2 + 7 * MAXK          # length of a structure row
PROX_MAXIT = 200
NEWTON_DONE = 1e-9         # a Newton step this small (relative) is the last one needed
EPS = 2.220446049250313e-16


@numba.njit(cache=True)
def _sort_small(v, n):
    for i in range(1, n):
        x = v[i]
        j = i - 1
        while j >= 0 and v[j] > x:
            v[j + 1] = v[j]
            j -= 1
        v[j + 1] = x


@numba.njit(cache=True)
def fn_struct(k, par, st):
    """Fill the structure row ``st`` (length SL) of function ``k`` at parameters ``par``.

    Layout: st[0] = number of kinks nk; st[1 + j] kinks c_j; st[1 + MAXK + j] piece of interval
    j (j = 0..nk); st[2 + 2 MAXK + j], st[2 + 3 MAXK + j]: f(c_j-), f(c_j+);
    st[2 + 4 MAXK + j], st[2 + 5 MAXK + j]: f'(c_j-), f'(c_j+); st[2 + 6 MAXK + j]: spare."""
    nb = fn_nbreaks(k)
    raw = np.empty(max(nb, 1))
    m = fn_breaks(k, par, raw)
    # keep finite values, sort, drop duplicates
    n = 0
    for i in range(m):
        if math.isfinite(raw[i]):
            raw[n] = raw[i]
            n += 1
    _sort_small(raw, n)
    c = np.empty(max(n, 1))
    nc = 0
    for i in range(n):
        if nc == 0 or raw[i] > c[nc - 1]:
            c[nc] = raw[i]
            nc += 1
    # piece of every interval; merge kinks between equal pieces
    nk = 0
    prev = -1
    for j in range(nc + 1):
        if nc == 0:
            mid = 0.0
        elif j == 0:
            mid = c[0] - 1.0
        elif j == nc:
            mid = c[nc - 1] + 1.0
        else:
            mid = 0.5 * (c[j - 1] + c[j])
        pc = fn_which(k, mid, par)
        if j == 0:
            st[1 + MAXK] = pc
            prev = pc
            continue
        if pc != prev:
            cj = c[j - 1]
            st[1 + nk] = cj
            st[1 + MAXK + nk + 1] = pc
            fl, dl, _ = fn_val(k, prev, cj, par)
            fr, dr, _ = fn_val(k, pc, cj, par)
            st[2 + 2 * MAXK + nk] = fl
            st[2 + 3 * MAXK + nk] = fr
            st[2 + 4 * MAXK + nk] = dl
            st[2 + 5 * MAXK + nk] = dr
            nk += 1
            prev = pc
    st[0] = nk


@numba.njit(cache=True)
def _solve_piece(k, i, a, V, lo, hi, par, hint):
    """P in (lo, hi) with P + V f_i'(P) = a (increasing in P): closed form or safeguarded Newton
    started from ``hint`` (the solution at a nearby point, e.g. the previous quadrature node) when
    it lies in the interval, else from ``a``."""
    ok, P = fn_closed(k, i, a, V, par)
    if ok:
        if P < lo:
            P = lo
        elif P > hi:
            P = hi
        return P, True
    # plain Newton from the hint: phi' = 1 + V f'' >= 1, so from a nearby start it converges
    # quadratically; a step of relative size <= NEWTON_DONE leaves an error ~ step^2
    if hint > lo and hint < hi:
        P = hint
        for _ in range(6):
            f, d1, d2 = fn_val(k, i, P, par)
            den = 1.0 + V * d2
            if not den > 0.0:
                break
            dP = -(P + V * d1 - a) / den
            Pn = P + dP
            if not (Pn > lo and Pn < hi):
                break
            P = Pn
            if abs(dP) <= NEWTON_DONE * (1.0 + abs(P)):
                return P, True
    # bracket [bl, bh] with phi(bl) <= 0 <= phi(bh)
    bl = lo
    bh = hi
    P = hint if (hint > lo and hint < hi) else a
    if P <= lo or P >= hi:
        if math.isfinite(lo) and math.isfinite(hi):
            P = 0.5 * (lo + hi)
        elif math.isfinite(lo):
            P = lo + 1.0 + abs(lo) * 1e-3
        else:
            P = hi - 1.0 - abs(hi) * 1e-3
    f, d1, d2 = fn_val(k, i, P, par)
    phi = P + V * d1 - a
    # expand to a bracket where an end is infinite
    step = 1.0 + abs(phi)
    for _ in range(2000):
        if phi > 0.0:
            bh = P
            if math.isfinite(bl):
                break
            P2 = P - step
        elif phi < 0.0:
            bl = P
            if math.isfinite(bh):
                break
            P2 = P + step
        else:
            return P, True
        # a Newton step if it moves the right way, else the expansion step
        den = 1.0 + V * d2
        if den > 0.0:
            Pn = P - phi / den
            if (phi > 0.0 and Pn < P) or (phi < 0.0 and Pn > P):
                P2 = Pn if abs(Pn - P) < 4.0 * step else P2
        P = P2
        step *= 2.0
        f, d1, d2 = fn_val(k, i, P, par)
        phi = P + V * d1 - a
    if not (math.isfinite(bl) and math.isfinite(bh)):
        return P, False
    # safeguarded Newton inside [bl, bh]; the equation is known to rounding when |phi| is within
    # a few ulps of its terms (P, a, V f'(P))
    prev = math.inf
    for _ in range(PROX_MAXIT):
        scale = abs(P) + abs(a) + abs(V * d1) + 1.0
        if phi == 0.0:
            return P, True
        if phi > 0.0:
            bh = P
        else:
            bl = P
        den = 1.0 + V * d2
        Pn = P - phi / den if den > 0.0 else 0.5 * (bl + bh)
        # bisection when Newton leaves the bracket or |phi| did not halve (rtsafe)
        if not (Pn > bl and Pn < bh) or abs(phi) > 0.5 * prev:
            Pn = 0.5 * (bl + bh)
        prev = abs(phi)
        dP = Pn - P
        P = Pn
        f, d1, d2 = fn_val(k, i, P, par)
        phi = P + V * d1 - a
        if abs(dP) <= 4.0 * EPS * (1.0 + abs(P)) or bh - bl <= 4.0 * EPS * (1.0 + abs(P)) \
                or (abs(phi) <= 8.0 * EPS * scale and abs(dP) <= 64.0 * EPS * scale):
            return P, True
    return P, abs(phi) <= 64.0 * EPS * (abs(P) + abs(a) + abs(V * d1) + 1.0)


@numba.njit(cache=True)
def prox(k, st, a, V, par, hint):
    """``(P, f(P), f'(P), dP/da, dP/dV, ok)`` of function ``k`` (structure ``st``) at ``a``, ``V > 0``;
    ``hint``: a guess of P (NaN for none)."""
    nk = int(st[0])
    if fn_kind(k) == 1:
        return _prox_step(k, st, a, V, par)
    for j in range(nk):
        c = st[1 + j]
        lo_b = c + V * st[2 + 4 * MAXK + j]
        hi_b = c + V * st[2 + 5 * MAXK + j]
        if a < lo_b:
            lo = st[j] if j > 0 else -math.inf
            pc = int(st[1 + MAXK + j])
            P, ok = _solve_piece(k, pc, a, V, lo, c, par, hint)
            f, d1, d2 = fn_val(k, pc, P, par)
            den = 1.0 + V * d2
            return P, f, d1, 1.0 / den, -d1 / den, ok
        if a <= hi_b:
            # on the kink: f'(P) is the subgradient (a - c)/V
            f = min(st[2 + 2 * MAXK + j], st[2 + 3 * MAXK + j])
            return c, f, (a - c) / V, 0.0, 0.0, True
    lo = st[nk] if nk > 0 else -math.inf
    pc = int(st[1 + MAXK + nk])
    P, ok = _solve_piece(k, pc, a, V, lo, math.inf, par, hint)
    f, d1, d2 = fn_val(k, pc, P, par)
    den = 1.0 + V * d2
    return P, f, d1, 1.0 / den, -d1 / den, ok


@numba.njit(cache=True)
def _interval(st, j):
    nk = int(st[0])
    lo = st[j] if j > 0 else -math.inf
    hi = st[1 + j] if j < nk else math.inf
    return lo, hi


@numba.njit(cache=True)
def _step_value(k, st, j, par):
    lo, hi = _interval(st, j)
    if math.isfinite(lo) and math.isfinite(hi):
        mid = 0.5 * (lo + hi)
    elif math.isfinite(lo):
        mid = lo + 1.0
    elif math.isfinite(hi):
        mid = hi - 1.0
    else:
        mid = 0.0
    f, _, _ = fn_val(k, int(st[1 + MAXK + j]), mid, par)
    return f


@numba.njit(cache=True)
def _prox_step(k, st, a, V, par):
    nk = int(st[0])
    best = math.inf
    Pb = a
    fb = 0.0
    for j in range(nk + 1):
        lo, hi = _interval(st, j)
        P = a
        if P < lo:
            P = lo
        elif P > hi:
            P = hi
        C = _step_value(k, st, j, par)
        M = C + (P - a) * (P - a) / (2.0 * V)
        if M < best:
            best = M
            Pb = P
            fb = C
    inside = 1.0 if Pb == a else 0.0
    return Pb, fb, (a - Pb) / V, inside, 0.0, True


@numba.njit(cache=True)
def _env_coef(C, lo, hi, V, s0, s1):
    """Quadratic coefficients (A, B, D) of C + dist(a, [lo, hi])^2/(2V) on the segment (s0, s1)."""
    mid = 0.5 * (s0 + s1) if math.isfinite(s0) and math.isfinite(s1) else \
        (s1 - 1.0 if math.isfinite(s1) else (s0 + 1.0 if math.isfinite(s0) else 0.0))
    if mid < lo:
        return 1.0 / (2.0 * V), -lo / V, C + lo * lo / (2.0 * V)
    if mid > hi:
        return 1.0 / (2.0 * V), -hi / V, C + hi * hi / (2.0 * V)
    return 0.0, 0.0, C


@numba.njit(cache=True)
def fn_abreaks(k, st, V, par, out, jump):
    """Break values of the prox of function ``k`` in its argument ``a`` at ``V``: the ends of the
    kink plateaus (convex) or the kinks and the candidate ties (step); returns their number.
    ``jump[i, 0:3]`` = (P(a-) - P(a+), d(break)/dV, is a jump) for every break ``out[i]``."""
    nk = int(st[0])
    n = 0
    if fn_kind(k) != 1:
        for j in range(nk):
            c = st[1 + j]
            for s in (st[2 + 4 * MAXK + j], st[2 + 5 * MAXK + j]):
                out[n] = c + V * s
                jump[n, 0] = 0.0
                jump[n, 1] = s
                jump[n, 2] = 0.0
                n += 1
        return n
    for j in range(nk):
        out[n] = st[1 + j]
        jump[n, 0] = 0.0
        jump[n, 1] = 0.0
        jump[n, 2] = 0.0
        n += 1
    # ties between the envelopes of the candidates of intervals j1 < j2
    pts = np.empty(4)
    for j1 in range(nk + 1):
        lo1, hi1 = _interval(st, j1)
        C1 = _step_value(k, st, j1, par)
        for j2 in range(j1 + 1, nk + 1):
            lo2, hi2 = _interval(st, j2)
            C2 = _step_value(k, st, j2, par)
            pts[0] = lo1
            pts[1] = hi1
            pts[2] = lo2
            pts[3] = hi2
            _sort_small(pts, 4)
            for sgi in range(5):
                s0 = pts[sgi - 1] if sgi > 0 else -math.inf
                s1 = pts[sgi] if sgi < 4 else math.inf
                if not s1 > s0:
                    continue
                A1, B1, D1 = _env_coef(C1, lo1, hi1, V, s0, s1)
                A2, B2, D2 = _env_coef(C2, lo2, hi2, V, s0, s1)
                A = A1 - A2
                B = B1 - B2
                D = D1 - D2
                nr = 0
                r0 = 0.0
                r1 = 0.0
                if A == 0.0:
                    if B != 0.0:
                        r0 = -D / B
                        nr = 1
                else:
                    disc = B * B - 4.0 * A * D
                    if disc >= 0.0:
                        sq = math.sqrt(disc)
                        qq = -0.5 * (B + (sq if B >= 0.0 else -sq))
                        r0 = qq / A
                        r1 = D / qq if qq != 0.0 else r0
                        nr = 2
                for ir in range(nr):
                    r = r0 if ir == 0 else r1
                    if not (r > s0 and r < s1) or n >= out.shape[0]:
                        continue
                    # a true switch of the global minimum?
                    P1 = min(max(r, lo1), hi1)
                    P2 = min(max(r, lo2), hi2)
                    E1 = C1 + (P1 - r) ** 2 / (2.0 * V)
                    isjump = 1.0
                    for j3 in range(nk + 1):
                        if j3 == j1 or j3 == j2:
                            continue
                        lo3, hi3 = _interval(st, j3)
                        P3 = min(max(r, lo3), hi3)
                        E3 = _step_value(k, st, j3, par) + (P3 - r) ** 2 / (2.0 * V)
                        if E3 < E1 - 1e-14 * (1.0 + abs(E1)):
                            isjump = 0.0
                    # which candidate wins just left of r: the one with the larger slope dE/da
                    g1 = (r - P1) / V
                    g2 = (r - P2) / V
                    Pl = P1 if g1 > g2 else P2
                    Pr = P2 if g1 > g2 else P1
                    d1s = (P1 - r) ** 2
                    d2s = (P2 - r) ** 2
                    den = 2.0 * V * (P2 - P1)
                    out[n] = r
                    jump[n, 0] = Pl - Pr
                    jump[n, 1] = (d1s - d2s) / den if den != 0.0 else 0.0
                    jump[n, 2] = isjump if P1 != P2 else 0.0
                    n += 1
    return n
