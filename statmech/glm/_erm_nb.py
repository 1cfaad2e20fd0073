"""Empirical risk minimisation, replica symmetric: the channel and penalty averages and the
Newton solve, inside numba (``docs/glm.md``, section "ERM").

Not imported for its functions: appended to a model's generated kernel module by
:mod:`statmech.glm._codegen` after the model's kernels (``zstar``, ``fn_*``, ``asm_*``) and
:mod:`statmech.glm._prox_nb`, :mod:`statmech.glm._quad_nb`.

The free entropy of the zero-temperature limit (minus the training energy per weight) is::

    psi = -m mh + (q Vh - qh V)/2 + Phi_w(mh, qh, Vh) + alpha Phi_out(m, q, V)            (E1)
    Phi_out = E_{y, z, omega}[ -M_V loss(y, .)(omega) ],   (z, omega) ~ N(0, [[rho, m], [m, q]])
    Phi_w   = E_{w*, xi} max_w [ (mh w* + sqrt(qh) xi) w - Vh w^2/2 - r(w) ]

and its stationary point is a fixed point of x = (m, q, V) -> hats -> x'::

    mh = alpha dPhi_out/dm,  qh = 2 alpha dPhi_out/dV,  Vh = -2 alpha dPhi_out/dq          (E2)
    m' = dPhi_w/dmh,         q' = -2 dPhi_w/dVh,        V' = 2 dPhi_w/dqh                  (E3)

solved by Newton's method on F(x) = x - x'(hats(x)) with the exact Jacobian
``I - (dx'/dhats)(dhats/dx)``: both factors are Hessians of the averages, assembled from the
primitives by the sympy chain rules of :mod:`statmech.glm._assembly`.  Unknowns
``y = (c, log q, log V)`` with ``m = sqrt(rho q) tanh c`` keep ``|m| < sqrt(rho q)``, ``q, V > 0``;
with a constrained student (spherical, Ising) ``q = 1`` and the unknowns are ``(c, log V)``.

Channel average (binary labels): ``Phi_out = sum_terms w_t E_xi[ Z(y_t, m xi/sqrt q, rho - m^2/q)
g_t(s_t sqrt(q) xi, V) ]`` with ``g = -M_V f`` (``f`` the term's loss function of the margin or
of h), on the piecewise tanh--sinh rule split at ``xi = 0`` (the sign layer) and at the prox
breaks; jumps of a step loss's prox add the boundary terms of the Hessian
``-[d_xi I] d_i xi_b d_j xi_b G(xi_b)`` (``docs/glm.md``).  Real labels: ``Phi_out =
E_xi g(sqrt(rho + Delta - 2m + q) xi, V)`` (residual losses).
"""
import math
import typing

import numba
import numpy as np

from statmech._linalg_nb import lu_solve
from statmech.gaussian import G_nb

if typing.TYPE_CHECKING:
    from statmech.glm._codegen import (asm_ising, cls_combine, cls_mono, pen_combine, pen_mono, reg_combine,
                                       reg_mono, zstar, NM_CLS, NM_PEN, NM_REG)
    from statmech.glm._prox_nb import fn_abreaks, fn_struct, fn_val, fn_which, prox, SL, MAXK
    from statmech.glm._quad_nb import build_rule, rule_size

# cfg indices (statmech.glm._codegen)
E_CHANNEL, E_PENALTY, E_PEN_FID, E_NTERMS, E_LAYER, E_LAM, E_DELTA, E_NFUN, E_CHCODE = 0, 1, 2, 3, 4, 5, 6, 7, 8
E_BINARY, E_RANDOM, E_REAL = 0, 1, 2
E_RIDGE, E_SPHERE, E_ISING, E_FUN = 0, 1, 2, 3
NBR = 96                 # breakpoints per average
E_TOL = 1e-13            # Newton: relative residual
E_XTOL = 1e-13           # Newton: step in the unknowns
E_FLOOR = 1e-11          # a residual below this with a round-off-level step is accepted
E_MAXIT = 60
# status codes
E_OK, E_NEWTON, E_DOMAIN, E_PROX, E_PATH = 0, 1, 2, 3, 4


@numba.njit(cache=True)
def erm_structs(cfg, par):
    """Structure rows of every one-variable function of the model (``fn_struct``)."""
    nf = cfg[E_NFUN]
    sts = np.zeros((max(nf, 1), SL))
    for k in range(nf):
        fn_struct(k, par, sts[k])
    return sts


@numba.njit(cache=True)
def _gprims(P, f, a, V, Pa, PV):
    """(g, g_a, g_V, g_aa, g_aV, g_VV) of g = -M_V f at a from the prox (P, f(P), dP/da, dP/dV)."""
    d = P - a
    g = -(f + d * d / (2.0 * V))
    ga = d / V
    gV = d * d / (2.0 * V * V)
    gaa = (Pa - 1.0) / V
    gaV = PV / V - d / (V * V)
    gVV = d * PV / (V * V) - d * d / (V * V * V)
    return g, ga, gV, gaa, gaV, gVV


@numba.njit(cache=True)
def ch_pass(m, q, V, rho, md, rule, out, obs):
    """Phi_out and its gradient and Hessian in (m, q, V) into ``out[0:10]``, and the observables into
    ``out[10:16]``: training loss, training error, E[(dP/da - 1)^2/V^2] (replicon factor; inf with
    a jumping prox), 0 (the test error: :func:`ch_test_error`), E[P^2] (real labels: training
    mean-squared residual), 0.  ``obs`` is unused.  Returns False if a prox failed."""
    cfg, terms, tw, par, sts, tmix = md
    for i in range(16):
        out[i] = 0.0
    br = np.empty(NBR)
    ab = np.empty(NBR)
    jmp = np.empty((NBR, 3))
    # jumps: (xi_b, dP, dxi/dq, dxi/dV, weight term index) kept for the boundary terms
    jb = np.empty((NBR, 6))
    nj = 0
    nb = 0
    sq = math.sqrt(q)
    real = cfg[E_CHANNEL] == E_REAL
    sr = 1.0
    if real:
        sr = math.sqrt(rho + par[cfg[E_DELTA]] - 2.0 * m + q)
    if cfg[E_LAYER] == 1:
        br[nb] = 0.0
        nb += 1
    nterm = cfg[E_NTERMS]
    for it in range(nterm):
        fid = terms[it, 1]
        s = terms[it, 2]
        n = fn_abreaks(fid, sts[fid], V, par, ab, jmp)
        # where the prediction changes sign, P(a) = 0 at a = V f'(0) (a kink's ends are already
        # breaks): the training error's indicator jumps there, and for a smooth loss it is where
        # the prox bends most (a break there keeps the rule accurate when V is large)
        pc = fn_which(fid, 0.0, par)
        _, d1, _ = fn_val(fid, pc, 0.0, par)
        if n + 3 <= NBR:
            ab[n] = V * d1
            jmp[n, 2] = 0.0
            n += 1
        for i in range(n):
            if nb >= NBR:
                break
            xb = ab[i] / sr if real else s * ab[i] / sq
            br[nb] = xb
            nb += 1
            if jmp[i, 2] != 0.0 and nj < NBR:
                jb[nj, 0] = xb
                jb[nj, 1] = jmp[i, 0]
                jb[nj, 2] = jmp[i, 1]
                jb[nj, 3] = ab[i]
                jb[nj, 4] = it
                jb[nj, 5] = s
                nj += 1
    nmax = rule_size(nb, rule[0], rule[3])
    zs = np.empty(nmax)
    ws = np.empty(nmax)
    nn = build_rule(br, nb, rule[0], rule[1], rule[2], rule[3], rule[4], zs, ws)
    v = rho - m * m / q
    ok = True
    acc = np.zeros(max(NM_CLS, NM_REG))
    hints = np.full(max(nterm, 1), math.nan)
    for kk in range(nn):
        wq = ws[kk]
        if wq == 0.0:
            continue
        xi = zs[kk]
        if real:
            a = sr * xi
            P, f, d1, Pa, PV, okp = prox(terms[0, 1], sts[terms[0, 1]], a, V, par, hints[0])
            hints[0] = P
            ok = ok and okp
            g, ga, gV, gaa, gaV, gVV = _gprims(P, f, a, V, Pa, PV)
            mo = reg_mono(xi, g, ga, gV, gaa, gaV, gVV)
            for i in range(NM_REG):
                acc[i] += wq * mo[i]
            out[10] += wq * f
            out[12] += wq * (Pa - 1.0) * (Pa - 1.0) / (V * V)
            out[14] += wq * P * P
            continue
        mu = m * xi / sq
        for it in range(nterm):
            lab = terms[it, 0]
            fid = terms[it, 1]
            s = terms[it, 2]
            wt = tw[it]
            Z0, Z1, Z2, Z11, Z12, Z22 = zstar(cfg[E_CHCODE], lab, mu, v, par)
            a = s * sq * xi
            P, f, d1, Pa, PV, okp = prox(fid, sts[fid], a, V, par, hints[it])
            hints[it] = P
            ok = ok and okp
            g, ga, gV, gaa, gaV, gVV = _gprims(P, f, a, V, Pa, PV)
            mo = cls_mono(xi, float(s), Z0, Z1, Z2, Z11, Z12, Z22, g, ga, gV, gaa, gaV, gVV)
            c = wq * wt
            for i in range(NM_CLS):
                acc[i] += c * mo[i]
            out[10] += c * Z0 * f
            wrong = P < 0.0 if terms[it, 3] == 0 else lab * P < 0.0
            if wrong:
                out[11] += c * Z0
            out[12] += c * Z0 * (Pa - 1.0) * (Pa - 1.0) / (V * V)
    r = reg_combine(m, q, V, rho, par[cfg[E_DELTA]], acc) if real else cls_combine(m, q, V, rho, acc)
    for i in range(10):
        out[i] = r[i]
    # boundary terms of the Hessian at the jumps of a step loss's prox
    for j in range(nj):
        xb = jb[j, 0]
        dP = jb[j, 1]
        dbdV = jb[j, 2]
        it = int(jb[j, 4])
        s = jb[j, 5]
        if real:
            jx = sr * dP / V
            dxm = jb[j, 3] / (sr * sr * sr)
            dxq = -jb[j, 3] / (2.0 * sr * sr * sr)
            dxV = dbdV / sr
            wgt = 1.0
        else:
            Z0 = zstar(cfg[E_CHCODE], terms[it, 0], m * xb / sq, v, par)[0]
            jx = tw[it] * Z0 * sq * dP / V
            dxm = 0.0
            dxq = -xb / (2.0 * q)
            dxV = s * dbdV / sq
            wgt = 1.0
        gd = G_nb(xb) * wgt * jx
        dx = (dxm, dxq, dxV)
        k = 4
        for i1 in range(3):
            for i2 in range(i1, 3):
                out[k] -= gd * dx[i1] * dx[i2]
                k += 1
        out[12] = math.inf
    return ok


@numba.njit(cache=True)
def pen_pass(mh, qh, Vh, rho, md, rule, out, obs):
    """Phi_w and its gradient and Hessian in (mh, qh, Vh) into ``out[0:10]``; with ``obs`` also
    ``out[10]`` = E r(w_hat) (penalty per weight), ``out[11]`` = E[(d w_hat/d b)^2] (replicon
    factor).  Returns False outside the domain (e.g. lam + Vh <= 0)."""
    cfg, terms, tw, par, sts, tmix = md
    for i in range(12):
        out[i] = 0.0
    kind = cfg[E_PENALTY]
    if kind == E_RIDGE:
        lam = par[cfg[E_LAM]]
        D = lam + Vh
        if not D > 0.0:
            return False
        B = mh * mh * rho + qh
        out[0] = B / (2.0 * D)
        out[1] = mh * rho / D
        out[2] = 0.5 / D
        out[3] = -B / (2.0 * D * D)
        out[4] = rho / D
        out[5] = 0.0
        out[6] = -mh * rho / (D * D)
        out[7] = 0.0
        out[8] = -0.5 / (D * D)
        out[9] = B / (D * D * D)
        if obs:
            # E w_hat^2 = B/D^2
            out[10] = 0.5 * lam * B / (D * D)
            out[11] = 1.0 / (D * D)
        return True
    if kind == E_SPHERE:
        B = mh * mh * rho + qh
        if not B > 0.0:
            return False
        S = math.sqrt(B)
        out[0] = S - 0.5 * Vh
        out[1] = mh * rho / S
        out[2] = 0.5 / S
        out[3] = -0.5
        out[4] = rho / S - mh * mh * rho * rho / (S * S * S)
        out[5] = -0.5 * mh * rho / (S * S * S)
        out[6] = 0.0
        out[7] = -0.25 / (S * S * S)
        out[8] = 0.0
        out[9] = 0.0
        if obs:
            out[11] = 1.0 / B
        return True
    if kind == E_ISING:
        if not qh > 0.0:
            return False
        for c in range(tmix.shape[0]):
            pw = tmix[c, 0]
            r = asm_ising(mh, qh, tmix[c, 1], tmix[c, 2])
            out[0] += pw * r[0]
            out[1] += pw * r[1]
            out[2] += pw * r[2]
            out[4] += pw * r[3]
            out[5] += pw * r[4]
            out[7] += pw * r[5]
        out[0] -= 0.5 * Vh
        out[3] = -0.5
        if obs:
            out[11] = math.inf
        return True
    # a separable penalty through its prox at V = 1/Vh
    if not (Vh > 0.0 and qh >= 0.0):
        return False
    fid = cfg[E_PEN_FID]
    st = sts[fid]
    Vp = 1.0 / Vh
    br = np.empty(NBR)
    ab = np.empty(NBR)
    jmp = np.empty((NBR, 3))
    ok = True
    for c in range(tmix.shape[0]):
        pw = tmix[c, 0]
        mu0 = tmix[c, 1]
        var0 = tmix[c, 2]
        sk = math.sqrt(mh * mh * var0 + qh)
        n = fn_abreaks(fid, st, Vp, par, ab, jmp)
        nb = 0
        for i in range(n):
            if nb < NBR:
                br[nb] = (Vh * ab[i] - mh * mu0) / sk if sk > 0.0 else 0.0
                nb += 1
        nmax = rule_size(nb, rule[0], rule[3])
        zs = np.empty(nmax)
        ws = np.empty(nmax)
        nn = build_rule(br, nb, rule[0], rule[1], rule[2], rule[3], rule[4], zs, ws)
        acc = np.zeros(NM_PEN)
        hint = math.nan
        for kk in range(nn):
            wq = ws[kk]
            if wq == 0.0:
                continue
            xi = zs[kk]
            b = mh * mu0 + sk * xi
            a = b * Vp
            P, f, d1, Pa, PV, okp = prox(fid, st, a, Vp, par, hint)
            hint = P
            ok = ok and okp
            f0 = b * P - 0.5 * Vh * P * P - f
            fb = P
            fV = -0.5 * P * P
            fbb = Pa * Vp
            fbV = -(Pa * b + PV) * Vp * Vp
            fVV = -P * fbV
            mo = pen_mono(xi, f0, fb, fV, fbb, fbV, fVV)
            for i in range(NM_PEN):
                acc[i] += wq * mo[i]
            if obs:
                out[10] += pw * wq * f
                out[11] += pw * wq * fbb * fbb
        r = pen_combine(mh, qh, Vh, mu0, var0, acc)
        for i in range(10):
            out[i] += pw * r[i]
    return ok


@numba.njit(cache=True)
def erm_eval(yv, alpha, fixq, rho, md, rule, F, J, st):
    """F(y) (scaled: relative to sqrt(rho q), q, V) and its Jacobian in y into ``F``, ``J``
    (3 rows/cols; with ``fixq`` the q row/column is the identity), and the state ``st``
    (x, hats, the averages) of the point.  Returns a status code."""
    c = yv[0]
    if not (abs(yv[1]) < 200.0 and abs(yv[2]) < 200.0 and abs(c) < 15.0):
        return E_DOMAIN
    q = 1.0 if fixq else math.exp(yv[1])
    V = math.exp(yv[2])
    th = math.tanh(c)
    sqr = math.sqrt(rho * q)
    m = sqr * th
    co = np.empty(16)
    if not ch_pass(m, q, V, rho, md, rule, co, False):
        return E_PROX
    mh = alpha * co[1]
    qh = 2.0 * alpha * co[3]
    Vh = -2.0 * alpha * co[2]
    dh = np.empty((3, 3))
    # rows (mh, qh, Vh), cols (m, q, V); Hessian entries: 4 mm, 5 mq, 6 mV, 7 qq, 8 qV, 9 VV
    dh[0, 0] = alpha * co[4]
    dh[0, 1] = alpha * co[5]
    dh[0, 2] = alpha * co[6]
    dh[1, 0] = 2.0 * alpha * co[6]
    dh[1, 1] = 2.0 * alpha * co[8]
    dh[1, 2] = 2.0 * alpha * co[9]
    dh[2, 0] = -2.0 * alpha * co[5]
    dh[2, 1] = -2.0 * alpha * co[7]
    dh[2, 2] = -2.0 * alpha * co[8]
    po = np.empty(12)
    if not pen_pass(mh, qh, Vh, rho, md, rule, po, True):
        return E_DOMAIN
    mp = po[1]
    qp = -2.0 * po[3]
    Vp = 2.0 * po[2]
    dx = np.empty((3, 3))
    # rows (m', q', V'), cols (mh, qh, Vh); Hessian entries: 4 mm, 5 mq, 6 mV, 7 qq, 8 qV, 9 VV
    dx[0, 0] = po[4]
    dx[0, 1] = po[5]
    dx[0, 2] = po[6]
    dx[1, 0] = -2.0 * po[6]
    dx[1, 1] = -2.0 * po[8]
    dx[1, 2] = -2.0 * po[9]
    dx[2, 0] = 2.0 * po[5]
    dx[2, 1] = 2.0 * po[7]
    dx[2, 2] = 2.0 * po[8]
    if fixq:
        qp = 1.0
        for j in range(3):
            dx[1, j] = 0.0
    if not (math.isfinite(mp) and math.isfinite(qp) and math.isfinite(Vp) and Vp > 0.0 and qp > 0.0):
        return E_DOMAIN
    Jx = np.empty((3, 3))
    for i in range(3):
        for j in range(3):
            s = 0.0
            for k in range(3):
                s += dx[i, k] * dh[k, j]
            Jx[i, j] = (1.0 if i == j else 0.0) - s
    # dx/dy
    D = np.zeros((3, 3))
    D[0, 0] = sqr * (1.0 - th * th)
    if not fixq:
        D[0, 1] = 0.5 * m
        D[1, 1] = q
    D[2, 2] = V
    scale = (sqr, q, V)
    Fx = (m - mp, q - qp, V - Vp)
    for i in range(3):
        F[i] = Fx[i] / scale[i]
        for j in range(3):
            s = 0.0
            for k in range(3):
                s += Jx[i, k] * D[k, j]
            J[i, j] = s / scale[i]
    # the scales depend on y too: d(1/s_i)/dy_j terms (zero at a root; kept so that J is exact)
    if not fixq:
        J[0, 1] -= 0.5 * F[0]
        J[1, 1] -= F[1]
    J[2, 2] -= F[2]
    if fixq:
        F[1] = 0.0
        for j in range(3):
            J[1, j] = 0.0
            J[j, 1] = 0.0
        J[1, 1] = 1.0
    st[0] = m
    st[1] = q
    st[2] = V
    st[3] = mh
    st[4] = qh
    st[5] = Vh
    st[6] = co[0]
    st[7] = po[0]
    for i in range(5):
        st[8 + i] = co[10 + i]
    st[13] = po[10]
    st[14] = po[11]
    for i in range(F.shape[0]):
        if not math.isfinite(F[i]):
            return E_DOMAIN
    return E_OK


@numba.njit(cache=True)
def ch_test_error(m, q, rho, md, rule):
    """P(y != sign(omega)) for a fresh sample with its (noisy) label: ``E_xi Z(-sign xi, ...)``;
    for real labels 0 (the mean-squared errors are closed forms)."""
    cfg = md[0]
    par = md[3]
    if cfg[E_CHANNEL] == E_REAL:
        return 0.0
    br = np.empty(1)
    br[0] = 0.0
    n = rule_size(1, rule[0], rule[3])
    zs = np.empty(n)
    ws = np.empty(n)
    nn = build_rule(br, 1, rule[0], rule[1], rule[2], rule[3], rule[4], zs, ws)
    sq = math.sqrt(q)
    v = rho - m * m / q
    s = 0.0
    for kk in range(nn):
        if ws[kk] == 0.0:
            continue
        xi = zs[kk]
        lab = -1 if xi > 0.0 else 1
        s += ws[kk] * zstar(cfg[E_CHCODE], lab, m * xi / sq, v, par)[0]
    return s


@numba.njit(cache=True)
def erm_observe(m, q, V, mh, qh, Vh, rho, md, rule, out):
    """Observables at a solution: out = (training loss, training error, channel replicon factor,
    test error, E P^2, penalty per weight, prior replicon factor)."""
    co = np.empty(16)
    ok = ch_pass(m, q, V, rho, md, rule, co, True)
    po = np.empty(12)
    ok2 = pen_pass(mh, qh, Vh, rho, md, rule, po, True)
    out[0] = co[10]
    out[1] = co[11]
    out[2] = co[12]
    out[3] = ch_test_error(m, q, rho, md, rule)
    out[4] = co[14]
    out[5] = po[10]
    out[6] = po[11]
    return ok and ok2
