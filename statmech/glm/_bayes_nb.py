"""Bayes-optimal inference on the Nishimori line: the state-evolution averages, inside numba
(``docs/glm.md``, section "Bayes-optimal").

Not imported for its functions: appended to a family's generated kernel module by
:mod:`statmech.glm._codegen` (it calls the family's ``zstar``).  The replica free entropy
(Barbier, Krzakala, Macris, Miolane, Zdeborová 2019, PNAS 116, 5451, Eq. 12) is::

    f(q, qh) = psi_in(qh) + alpha Psi_out(q) - q qh/2                                       (B1)
    psi_in(qh) = E_{w*, xi} log Z_in(qh w* + sqrt(qh) xi, qh),   Z_in(B, A) = E_w e^{B w - A w^2/2}
    Psi_out(q) = E_xi sum_y Z(y, sqrt(q) xi, rho - q) log Z(y, sqrt(q) xi, rho - q)

with ``Z(y, omega, v) = E_t P(y | omega + sqrt(v) t)`` (the family's ``zstar``).  Stationarity::

    q = E_{w*, xi} [d_B log Z_in]^2 = q_in(qh),   qh = alpha E_xi sum_y Z (d_omega log Z)^2 = alpha g(q)   (B2)

so along the solution branch ``alpha(qh) = qh/g(q_in(qh))`` is explicit.  The prior is a mixture
of Gaussians and point masses (rows weight, mean, variance); ``log Z_in`` is the log-sum-exp of
the components' closed forms, its B-derivatives the posterior moments.
"""
import math
import typing

import numba
import numpy as np

from statmech.gaussian import G_nb, H_nb

if typing.TYPE_CHECKING:
    from statmech.glm._codegen import zstar
    from statmech.glm._quad_nb import GH_A2, GH_PRIOR, build_rule, gh_rule, rule_size

NBB = 64
B_OK, B_DOMAIN = 0, 2


@numba.njit(cache=True)
def _mix_log(B, A, tmix, lw):
    """log of each component's weight in Z_in(B, A) into ``lw``; returns the log-sum-exp."""
    mx = -math.inf
    for k in range(tmix.shape[0]):
        pw, mu, var = tmix[k, 0], tmix[k, 1], tmix[k, 2]
        if pw <= 0.0:
            lw[k] = -math.inf
            continue
        d = 1.0 + A * var
        lw[k] = math.log(pw) - 0.5 * math.log(d) + (B * B * var + 2.0 * B * mu - A * mu * mu) / (2.0 * d)
        if lw[k] > mx:
            mx = lw[k]
    s = 0.0
    for k in range(tmix.shape[0]):
        s += math.exp(lw[k] - mx)
    return mx + math.log(s)


@numba.njit(cache=True)
def mix_moments(B, A, tmix, lw):
    """(log Z_in, <w>, Var(w), d<w>/dA, dVar/dB... ) at (B, A): returns
    (L, L_B, L_BB, L_BA) with L_B = posterior mean, L_BB = posterior variance,
    L_BA = d mean/dA = -(E w^3 - <w> E w^2)/2 (E under the posterior)."""
    L = _mix_log(B, A, tmix, lw)
    m1 = 0.0
    m2 = 0.0
    m3 = 0.0
    for k in range(tmix.shape[0]):
        if lw[k] == -math.inf:
            continue
        r = math.exp(lw[k] - L)
        var = tmix[k, 2]
        d = 1.0 + A * var
        mk = (tmix[k, 1] + B * var) / d       # posterior mean of component k
        vk = var / d                          # posterior variance of component k
        m1 += r * mk
        m2 += r * (vk + mk * mk)
        m3 += r * (mk * mk * mk + 3.0 * mk * vk)
    vpost = m2 - m1 * m1
    if vpost < 0.0:
        vpost = 0.0
    return L, m1, vpost, -0.5 * (m3 - m1 * m2)


@numba.njit(cache=True)
def bo_in(qh, tmix, rule, out):
    """Prior side at ``qh``: out = (q_in, dq_in/dqh, psi_in, E[Var(w|B)^2], E[Var(w|B)]); the
    last is ``rho - q`` (Nishimori), computed as an average of positive terms (full relative
    accuracy as q -> rho)."""
    for i in range(5):
        out[i] = 0.0
    nc = tmix.shape[0]
    lw = np.empty(nc)
    if nc == 1 and tmix[0, 1] == 0.0 and tmix[0, 2] > 0.0:
        # a centred Gaussian N(0, s2): closed forms
        s2 = tmix[0, 2]
        d = 1.0 + qh * s2
        out[0] = qh * s2 * s2 / d
        out[1] = s2 * s2 / (d * d)
        out[2] = 0.5 * (qh * s2 - math.log(d))
        out[3] = (s2 / d) ** 2
        out[4] = s2 / d
        return True
    br = np.empty(NBB)
    for j in range(nc):
        pw, mu, var = tmix[j, 0], tmix[j, 1], tmix[j, 2]
        if pw <= 0.0:
            continue
        sB = math.sqrt(qh * qh * var + qh)
        mB = qh * mu
        # breaks: where two point-mass (equal-variance) components' weights tie, in B
        nb = 0
        for k1 in range(nc):
            for k2 in range(k1 + 1, nc):
                if nb < NBB and tmix[k1, 2] == tmix[k2, 2] and tmix[k1, 1] != tmix[k2, 1] \
                        and tmix[k1, 0] > 0.0 and tmix[k2, 0] > 0.0:
                    d = 1.0 + qh * tmix[k1, 2]
                    m1, m2 = tmix[k1, 1], tmix[k2, 1]
                    Bt = (qh * (m1 * m1 - m2 * m2) / 2.0 - d * math.log(tmix[k1, 0] / tmix[k2, 0])) / (m1 - m2)
                    br[nb] = (Bt - mB) / sB if sB > 0.0 else 0.0
                    nb += 1
        n = max(rule_size(nb, rule[0], rule[3]), rule[5].shape[0])
        zs = np.empty(n)
        ws = np.empty(n)
        if qh * (1.0 + qh * var) <= GH_PRIOR:
            nn = gh_rule(rule, zs, ws)      # posterior moments analytic in a strip wide enough
        else:
            nn = build_rule(br, nb, rule[0], rule[1], rule[2], rule[3], rule[4], zs, ws)
        dB = 0.0
        for kk in range(nn):
            wq = ws[kk] * pw
            if wq == 0.0:
                continue
            z = zs[kk]
            B = mB + sB * z
            dB = mu + (2.0 * qh * var + 1.0) * z / (2.0 * sB) if sB > 0.0 else mu
            L, mean, vpost, dmA = mix_moments(B, qh, tmix, lw)
            out[0] += wq * mean * mean
            out[1] += wq * 2.0 * mean * (vpost * dB + dmA)
            out[2] += wq * L
            out[3] += wq * vpost * vpost
            out[4] += wq * vpost
    return True


@numba.njit(cache=True)
def bo_out(q, v, chcode, real, delta, par, rule, out, sym):
    """Channel side at ``q``: out = (g, dg/dq, Psi_out, E sum_y Z (d^2_omega log Z)^2) with
    g = E sum_y Z (d_omega log Z)^2 (Eq. B2); ``v = rho - q``.  ``sym``: the channel is symmetric,
    ``Z(-y, -omega) = Z(y, omega)``, so the label sum is twice the y = +1 term (xi -> -xi)."""
    for i in range(4):
        out[i] = 0.0
    if not (v > 0.0 and q >= 0.0):
        return False
    if real:
        s = delta + v
        out[0] = 1.0 / s
        out[1] = 1.0 / (s * s)
        out[2] = -0.5 * math.log(2.0 * math.pi * math.e * s)
        out[3] = 1.0 / (s * s)
        return True
    sq = math.sqrt(q)
    br = np.empty(2)
    br[0] = 0.0
    n = max(rule_size(1, rule[0], rule[3]), rule[5].shape[0])
    zs = np.empty(n)
    ws = np.empty(n)
    if q <= GH_A2 * v:
        nn = gh_rule(rule, zs, ws)          # the layer of width sqrt(v/q) >= 1/sqrt(GH_A2): smooth
    else:
        nn = build_rule(br, 1, rule[0], rule[1], rule[2], rule[3], rule[4], zs, ws)
    for kk in range(nn):
        wq = ws[kk]
        if wq == 0.0:
            continue
        xi = zs[kk]
        om = sq * xi
        wl = 2.0 * wq if sym else wq
        for lab in (1, -1):
            if sym and lab < 0:
                break
            Z, Zw, Zv, Zww, Zwv, Zvv = zstar(chcode, lab, om, v, par)
            if not Z > 1e-290:
                continue
            lz = math.log(Z)
            r = Zw / Z
            K = Zw * r
            # d/dq of K(omega = sqrt(q) xi, v = rho - q)
            Kw = 2.0 * r * Zww - r * r * Zw
            Kv = 2.0 * r * Zwv - r * r * Zv
            dK = Kw * xi / (2.0 * sq) - Kv if sq > 0.0 else -Kv
            L2 = Zww / Z - r * r
            out[0] += wl * K
            out[1] += wl * dK
            out[2] += wl * Z * lz
            out[3] += wl * Z * L2 * L2
    return True


@numba.njit(cache=True)
def bo_branch(y, rho, tmix, chcode, real, delta, par, rule, sym, out):
    """The branch point at ``qh = exp(y)``: out = (alpha, d log alpha/dy, q, qh, free entropy,
    state-evolution slope dq'/dq, replicon); returns False outside the domain."""
    qh = math.exp(y)
    pin = np.empty(5)
    bo_in(qh, tmix, rule, pin)
    q = pin[0]
    if not (pin[4] > 0.0 and q >= 0.0):
        return False
    pout = np.empty(4)
    if not bo_out(q, pin[4], chcode, real, delta, par, rule, pout, sym):
        return False
    g = pout[0]
    if not g > 0.0:
        return False
    a = qh / g
    # d log alpha/d log qh = 1 - qh q_in'(qh) g'(q)/g
    dla = 1.0 - qh * pin[1] * pout[1] / g
    out[0] = a
    out[1] = dla
    out[2] = q
    out[3] = qh
    out[4] = pin[2] + a * pout[2] - 0.5 * q * qh
    out[5] = a * pin[1] * pout[1]       # slope of the map q -> q_in(alpha g(q))
    out[6] = 1.0 - a * pout[3] * pin[3]
    return True


@numba.njit(cache=True)
def bo_solve(alpha, y0, lo, hi, inc, rho, tmix, chcode, real, delta, par, rule, sym, out):
    """Root of log alpha(y) = log alpha in (lo, hi), a monotone piece of the branch (increasing when
    ``inc``), from y0: Newton with the bracket kept, bisection when a step leaves it.  out as in
    bo_branch, plus out[7] = |log alpha(y) - log alpha|, out[8] = iterations, out[9] = y."""
    la = math.log(alpha)
    y = y0
    bl, bh = lo, hi
    it = 0
    for it in range(1, 200):
        if not bo_branch(y, rho, tmix, chcode, real, delta, par, rule, sym, out):
            y = 0.5 * (bl + bh)
            continue
        f = math.log(out[0]) - la
        df = out[1]
        if (f < 0.0) == inc:
            bl = y
        else:
            bh = y
        if abs(f) <= 1e-15 or (df != 0.0 and abs(f / df) <= 1e-15 * (1.0 + abs(y)) and abs(f) <= 1e-13):
            out[7] = abs(f)
            out[8] = it
            out[9] = y
            return True
        yn = y - f / df if df != 0.0 else 0.5 * (bl + bh)
        if not (yn > bl and yn < bh):
            yn = 0.5 * (bl + bh)
        if bh - bl <= 1e-15 * (1.0 + abs(y)):
            out[7] = abs(f)
            out[8] = it
            out[9] = y
            return abs(f) <= 1e-12
        y = yn
    out[7] = math.inf
    out[8] = it
    out[9] = y
    return False


@numba.njit(cache=True)
def bo_scan(ys, rho, tmix, chcode, real, delta, par, rule, sym, out):
    """The branch on the grid ``ys`` (log qh): out[i] = bo_branch (NaN where undefined)."""
    for i in range(ys.shape[0]):
        if not bo_branch(ys[i], rho, tmix, chcode, real, delta, par, rule, sym, out[i]):
            for j in range(out.shape[1]):
                out[i, j] = math.nan
