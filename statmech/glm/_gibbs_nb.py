"""Gibbs learning at a temperature, replica symmetric: the channel and prior averages, inside numba
(``docs/glm.md``, section "Gibbs learning").

Not imported for its functions: appended to a family's generated kernel module by
:mod:`statmech.glm._codegen` (it calls ``zstar``, the step-loss structures of
:mod:`statmech.glm._prox_nb`, the assembly ``gib_mono``/``gib_combine`` and ``pen_mono``/
``pen_combine``).  The student's weights are spherical (``||w||^2 = N``) or Ising, and the Gibbs
measure is ``P_0(w) exp(-beta sum_mu loss(y_mu, h_mu))``.  RS free entropy (Gardner 1988;
Engel & Van den Broeck 2001, Eqs. 2.43, 6.11 and A5.x; ``docs/glm.md`` Eqs. G1-G3)::

    phi = G_S(m, q) + alpha Psi_out(m, q)                                                  (G1)
    spherical: G_S = log(1 - q)/2 + (q - m^2)/(2 (1 - q))
    Ising:     G_S = extr_{mh, qh} [ -m mh - qh (1 - q)/2 + E_{w*, xi} log 2cosh(mh w* + sqrt(qh) xi) ]
    Psi_out = E_xi sum_y Z(y, m xi/sqrt q, rho - m^2/q) log Z_loss(y, sqrt(q) xi, 1 - q)
    Z_loss(y, omega, v) = E_t exp(-beta loss(y, omega + sqrt(v) t))                         (G2)

For a step loss (constant ``C_j`` on intervals ``[lo_j, hi_j]`` of the margin) ``Z_loss`` is
``sum_j e^{-beta (C_j - C_min)} [H((lo_j - a)/sqrt v) - H((hi_j - a)/sqrt v)]`` (the constant
``-beta C_min`` is dropped; at ``T = 0`` only the intervals of least cost remain: the version
space).  A single semi-infinite interval (every margin-counting cost at T = 0) is evaluated
through ``log H`` and the inverse Mills ratio, accurate deep in the tails.
"""
import math
import typing

import numba
import numpy as np

from statmech.gaussian import G_nb, H_nb, inv_mills_nb, log_2cosh_nb, log_H_nb

if typing.TYPE_CHECKING:
    from statmech.glm._codegen import NM_GIB, NM_PEN, gib_combine, gib_mono, pen_combine, pen_mono, zstar
    from statmech.glm._erm_nb import E_CHCODE, E_DOMAIN, E_LAYER, E_NTERMS, E_OK, E_PROX, NBR
    from statmech.glm._prox_nb import MAXK, _interval, _step_value
    from statmech.glm._quad_nb import GH_A2, GH_PRIOR, build_rule, gh_rule, rule_size

G_SPHERE, G_ISING = 0, 1


@numba.njit(cache=True)
def _hparts(x, v):
    """(H, dH/da, dH/dv, d2H/da2, d2H/dadv, d2H/dv2) of H((x - a)/sqrt v) at the given point;
    ``x`` may be +-inf."""
    if x == math.inf:
        return 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
    if x == -math.inf:
        return 1.0, 0.0, 0.0, 0.0, 0.0, 0.0
    A = x
    g = G_nb(A)
    sv = math.sqrt(v)
    return (H_nb(A), g / sv, g * A / (2.0 * v), A * g / v, g * (A * A - 1.0) / (2.0 * v * sv),
            g * A * (A * A - 3.0) / (4.0 * v * v))


@numba.njit(cache=True)
def step_logz(k, st, a, v, beta, par):
    """(L, L_a, L_v, L_aa, L_av, L_vv, <loss>) of L = log Z_loss(a, v) for the step function ``k``
    (structure ``st``) at inverse temperature ``beta`` (inf allowed)."""
    nk = int(st[0])
    cmin = math.inf
    for j in range(nk + 1):
        c = _step_value(k, st, j, par)
        if c < cmin:
            cmin = c
    sv = math.sqrt(v)
    # count the intervals with non-zero weight
    nw = 0
    jlast = 0
    for j in range(nk + 1):
        c = _step_value(k, st, j, par)
        if c == cmin or beta < math.inf:
            nw += 1
            jlast = j
    if nw == 1:
        lo, hi = _interval(st, jlast)
        c = _step_value(k, st, jlast, par)
        if not math.isfinite(lo) and math.isfinite(hi):
            # Z = H((a - hi)/sqrt v): mirror of the case below
            A = (a - hi) / sv
            r = inv_mills_nb(A)
            L = log_H_nb(A)
            La = -r / sv
            Lv = r * A / (2.0 * v)
            Laa = (A * r - r * r) / v
            Lav = -r * (A * A - 1.0) / (2.0 * v * sv) - La * Lv
            Lvv = r * A * (A * A - 3.0) / (4.0 * v * v) - Lv * Lv
            return L, La, Lv, Laa, Lav, Lvv, c
        if math.isfinite(lo) and not math.isfinite(hi):
            A = (lo - a) / sv
            r = inv_mills_nb(A)
            L = log_H_nb(A)
            La = r / sv
            Lv = r * A / (2.0 * v)
            Laa = (A * r - r * r) / v
            Lav = r * (A * A - 1.0) / (2.0 * v * sv) - La * Lv
            Lvv = r * A * (A * A - 3.0) / (4.0 * v * v) - Lv * Lv
            return L, La, Lv, Laa, Lav, Lvv, c
    Z = 0.0
    Za = 0.0
    Zv = 0.0
    Zaa = 0.0
    Zav = 0.0
    Zvv = 0.0
    El = 0.0
    for j in range(nk + 1):
        c = _step_value(k, st, j, par)
        if beta == math.inf:
            wj = 1.0 if c == cmin else 0.0
        else:
            wj = math.exp(-beta * (c - cmin))
        if wj == 0.0:
            continue
        lo, hi = _interval(st, j)
        A0, A1, A2, A3, A4, A5 = _hparts((lo - a) / sv if math.isfinite(lo) else lo, v)
        B0, B1, B2, B3, B4, B5 = _hparts((hi - a) / sv if math.isfinite(hi) else hi, v)
        P = A0 - B0
        Z += wj * P
        Za += wj * (A1 - B1)
        Zv += wj * (A2 - B2)
        Zaa += wj * (A3 - B3)
        Zav += wj * (A4 - B4)
        Zvv += wj * (A5 - B5)
        El += wj * P * c
    if not Z > 0.0:
        return -math.inf, 0.0, 0.0, 0.0, 0.0, 0.0, cmin
    La = Za / Z
    Lv = Zv / Z
    return math.log(Z), La, Lv, Zaa / Z - La * La, Zav / Z - La * Lv, Zvv / Z - Lv * Lv, El / Z


@numba.njit(cache=True)
def gib_pass(m, q, p1, rho, beta, md, rule, out):
    """Psi_out and its gradient and Hessian in (m, q) into out[0:6]; out[6] = E <loss> (mean cost
    per sample), out[7] = E sum_y Z (d^2_a L)^2 (replicon factor).  ``p1 = 1 - q`` (accurate)."""
    cfg, terms, tw, par, sts, tmix = md
    for i in range(8):
        out[i] = 0.0
    sq = math.sqrt(q)
    br = np.empty(NBR)
    nb = 0
    if cfg[E_LAYER] == 1:
        br[nb] = 0.0
        nb += 1
    nterm = cfg[E_NTERMS]
    for it in range(nterm):
        fid = terms[it, 1]
        s = terms[it, 2]
        st = sts[fid]
        nk = int(st[0])
        for j in range(nk):
            if nb < NBR:
                br[nb] = s * st[1 + j] / sq
                nb += 1
    n = max(rule_size(nb, rule[0], rule[3]), rule[5].shape[0])
    zs = np.empty(n)
    ws = np.empty(n)
    v = rho - m * m / q
    # smooth: the loss layers (width sqrt((1-q)/q)) and the teacher's (width sqrt(v q)/|m|) wide
    if q <= GH_A2 * p1 and (cfg[E_LAYER] == 0 or m * m <= GH_A2 * v * q):
        nn = gh_rule(rule, zs, ws)
    else:
        nn = build_rule(br, nb, rule[0], rule[1], rule[2], rule[3], rule[4], zs, ws)
    acc = np.zeros(NM_GIB)
    for kk in range(nn):
        wq = ws[kk]
        if wq == 0.0:
            continue
        xi = zs[kk]
        mu = m * xi / sq
        for it in range(nterm):
            lab = terms[it, 0]
            fid = terms[it, 1]
            s = terms[it, 2]
            Z0, Z1, Z2, Z11, Z12, Z22 = zstar(cfg[E_CHCODE], lab, mu, v, par)
            a = s * sq * xi
            L, La, Lv, Laa, Lav, Lvv, El = step_logz(fid, sts[fid], a, p1, beta, par)
            if not math.isfinite(L):
                if Z0 * wq > 0.0:
                    return False
                continue
            mo = gib_mono(xi, float(s), Z0, Z1, Z2, Z11, Z12, Z22, L, La, Lv, Laa, Lav, Lvv)
            c = wq * tw[it]
            for i in range(NM_GIB):
                acc[i] += c * mo[i]
            out[6] += c * Z0 * El
            out[7] += c * Z0 * Laa * Laa
    r = gib_combine(m, q, rho, acc)
    for i in range(6):
        out[i] = r[i]
    return True


@numba.njit(cache=True)
def ising_in(mh, qh, tmix, rule, out):
    """Phi_in = E_{w*, xi} log 2cosh(mh w* + sqrt(qh) xi) and its gradient and Hessian in (mh, qh)
    into out[0:6] (value, d_mh, d_qh, d_mh mh, d_mh qh, d_qh qh); out[6] = E sech^4 (replicon),
    out[7] = E sech^2 = 1 - q (accurate)."""
    for i in range(8):
        out[i] = 0.0
    br = np.empty(1)
    for c in range(tmix.shape[0]):
        pw, mu0, var0 = tmix[c, 0], tmix[c, 1], tmix[c, 2]
        sk = math.sqrt(mh * mh * var0 + qh)
        br[0] = -mh * mu0 / sk if sk > 0.0 else 0.0
        n = max(rule_size(1, rule[0], rule[3]), rule[5].shape[0])
        zs = np.empty(n)
        ws = np.empty(n)
        if sk * sk <= GH_PRIOR:
            nn = gh_rule(rule, zs, ws)      # log 2cosh(b) analytic in a strip wide enough
        else:
            nn = build_rule(br, 1, rule[0], rule[1], rule[2], rule[3], rule[4], zs, ws)
        acc = np.zeros(NM_PEN)
        for kk in range(nn):
            wq = ws[kk]
            if wq == 0.0:
                continue
            xi = zs[kk]
            b = mh * mu0 + sk * xi
            ab = abs(b)
            e = math.exp(-2.0 * ab)
            t = (1.0 - e) / (1.0 + e)
            t = t if b >= 0.0 else -t
            s2 = 4.0 * e / ((1.0 + e) * (1.0 + e))   # sech^2
            mo = pen_mono(xi, log_2cosh_nb(b), t, 0.0, s2, 0.0, 0.0)
            for i in range(NM_PEN):
                acc[i] += wq * mo[i]
            out[6] += pw * wq * s2 * s2
            out[7] += pw * wq * s2
        r = pen_combine(mh, qh, 0.0, mu0, var0, acc)
        # pen layout: 0 value, 1 mh, 2 qh, 3 Vh, 4 mh mh, 5 mh qh, 6 mh Vh, 7 qh qh, ...
        out[0] += pw * r[0]
        out[1] += pw * r[1]
        out[2] += pw * r[2]
        out[3] += pw * r[4]
        out[4] += pw * r[5]
        out[5] += pw * r[7]
    return True


@numba.njit(cache=True)
def gib_eval(yv, alpha, kind, rho, beta, md, rule, F, J, st):
    """Gibbs residual and Jacobian in y = (c, t, -) with m = sqrt(rho q) tanh c, q = 1/(1 + e^-t)
    (third row the identity).  Spherical: F = ((1-q) dphi/dm/sqrt(rho), 2 (1-q)^2 dphi/dq);
    Ising: F = ((m - m')/sqrt(rho q), (p1 - p1')/p1) with the prior map m' = dPhi_in/dmh,
    1 - q' = 2 dPhi_in/dqh at mh = alpha dPsi/dm, qh = -2 alpha dPsi/dq."""
    c = yv[0]
    t = yv[1]
    if not (abs(c) < 15.0 and abs(t) < 60.0):
        return E_DOMAIN
    q = 1.0 / (1.0 + math.exp(-t))
    p1 = 1.0 / (1.0 + math.exp(t))
    if not (q > 0.0 and p1 > 0.0):
        return E_DOMAIN
    th = math.tanh(c)
    sqr = math.sqrt(rho * q)
    m = sqr * th
    co = np.empty(8)
    if not gib_pass(m, q, p1, rho, beta, md, rule, co):
        return E_PROX
    # dx/dy: rows (m, q), cols (c, t)
    D00 = sqr * (1.0 - th * th)
    D01 = 0.5 * m * p1
    D11 = q * p1
    for i in range(3):
        F[i] = 0.0
        for j in range(3):
            J[i, j] = 0.0
    J[2, 2] = 1.0
    Jx = np.empty((2, 2))
    if kind == G_SPHERE:
        gm = -m / p1 + alpha * co[1]
        gq = (q - m * m) / (2.0 * p1 * p1) + alpha * co[2]
        hmm = -1.0 / p1 + alpha * co[3]
        hmq = -m / (p1 * p1) + alpha * co[4]
        hqq = (p1 + 2.0 * (q - m * m)) / (2.0 * p1 * p1 * p1) + alpha * co[5]
        s0 = p1 / math.sqrt(rho)
        s1 = 2.0 * p1 * p1
        F[0] = s0 * gm
        F[1] = s1 * gq
        Jx[0, 0] = s0 * hmm
        Jx[0, 1] = s0 * hmq
        Jx[1, 0] = s1 * hmq
        Jx[1, 1] = s1 * hqq
        phi_in = 0.5 * math.log(p1) + (q - m * m) / (2.0 * p1)
        mh = m / p1
        qh = (q - m * m) / (p1 * p1)
        rep_in = p1 * p1
    else:
        mh = alpha * co[1]
        qh = -2.0 * alpha * co[2]
        if not qh > 0.0:
            return E_DOMAIN
        pin = np.empty(8)
        ising_in(mh, qh, md[5], rule, pin)
        mp = pin[1]
        p1p = pin[7]
        # d hats/d x: rows (mh, qh), cols (m, q)
        dh00 = alpha * co[3]
        dh01 = alpha * co[4]
        dh10 = -2.0 * alpha * co[4]
        dh11 = -2.0 * alpha * co[5]
        # d (m', p1')/d hats
        dx00 = pin[3]
        dx01 = pin[4]
        dx10 = 2.0 * pin[4]
        dx11 = 2.0 * pin[5]
        F[0] = (m - mp) / sqr
        F[1] = (p1 - p1p) / p1
        # F1 = (p1 - p1')/p1 with p1 = 1 - q: d/dq of p1 is -1
        Jx[0, 0] = (1.0 - (dx00 * dh00 + dx01 * dh10)) / sqr
        Jx[0, 1] = -(dx00 * dh01 + dx01 * dh11) / sqr
        Jx[1, 0] = -(dx10 * dh00 + dx11 * dh10) / p1
        Jx[1, 1] = (-1.0 - (dx10 * dh01 + dx11 * dh11)) / p1
        phi_in = -m * mh - 0.5 * qh * p1 + pin[0]
        rep_in = pin[6]
    J[0, 0] = Jx[0, 0] * D00
    J[0, 1] = Jx[0, 0] * D01 + Jx[0, 1] * D11
    J[1, 0] = Jx[1, 0] * D00
    J[1, 1] = Jx[1, 0] * D01 + Jx[1, 1] * D11
    # derivatives of the scale factors in t (zero at a root; kept so that J is exact)
    if kind == G_SPHERE:
        J[0, 1] -= q * F[0]
        J[1, 1] -= 2.0 * q * F[1]
    else:
        J[0, 1] -= 0.5 * p1 * F[0]
        J[1, 1] += q * F[1]
    st[0] = m
    st[1] = q
    st[2] = p1
    st[3] = mh
    st[4] = qh
    st[5] = 0.0
    st[6] = co[0]
    st[7] = phi_in
    st[8] = co[6]
    st[9] = 0.0
    st[10] = co[7]
    st[11] = 0.0
    st[12] = 0.0
    st[13] = 0.0
    st[14] = rep_in
    for i in range(2):
        if not math.isfinite(F[i]):
            return E_DOMAIN
    return E_OK
