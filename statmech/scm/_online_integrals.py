r"""Gaussian integrals of online learning: I2, I3, I4 for erf, ReLU, linear (numba) and any g.

For a zero-mean Gaussian vector u with covariance C (the fields of the students and teachers):

    I2(a, b)       = E[g(u_a) g(u_b)]
    I3(a, b, c)    = E[g'(u_a) u_b g(u_c)]
    I4(a, b, c, d) = E[g'(u_a) g'(u_b) g(u_c) g(u_d)]

erf, g(x) = erf(x / sqrt 2), g'(x) = sqrt(2/pi) exp(-x^2/2).  The Gaussian factors g' reweight
the measure: E[exp(-u_S^2/2) F(u)] = det(I + C_SS)^(-1/2) E'[F], where E' has the covariance
C' = C - C_.S (I + C_SS)^-1 C_S. (S the indices of the g' factors).  With the pair moment
E[g(v) g(w)] = (2/pi) asin(C_vw / sqrt((1 + C_vv)(1 + C_ww))) and Stein's lemma for the
factor u_b this gives

    I2 = (2/pi) asin(C_ab / sqrt((1 + C_aa)(1 + C_bb)))
    I3 = (2/pi) [C_bc (1 + C_aa) - C_ab C_ac] / [(1 + C_aa) sqrt((1 + C_aa)(1 + C_cc) - C_ac^2)]
    I4 = (2/pi)^2 Lambda4^(-1/2) asin(C'_cd / sqrt((1 + C'_cc)(1 + C'_dd))),
         Lambda4 = (1 + C_aa)(1 + C_bb) - C_ab^2,

the closed forms of Saad & Solla (1995, Phys. Rev. E 52, 4225, Eqs. (A5)-(A7)) written through
the reweighted covariance (tests check them against Saad & Solla's Lambda form and quadrature).

linear, g(x) = x: I2 = C_ab, I3 = C_bc, I4 = C_cd.

ReLU, g(x) = max(x, 0), g' = Theta (Theta(0) = 1/2 for a field of zero variance).  Stein's lemma
E[u_l F(u)] = sum_j C_lj E[d_j F] turns every ReLU factor u Theta(u) into step functions and
delta functions; a delta function conditions the Gaussian on u_j = 0 (factor
phi_j = (2 pi C_jj)^(-1/2), covariance C - C_.j C_j. / C_jj).  What remains are orthant
probabilities P_n of n = 1 ... 4 variables:

    I2 = [sqrt(C_aa C_bb - C_ab^2) + C_ab (pi - acos rho_ab)] / (2 pi)
    I3 = C_ab sqrt(C_aa C_cc - C_ac^2) / (2 pi C_aa) + C_bc (pi - acos rho_ac) / (2 pi)
    I4 = C_ca phi_a J(b,c,d | a) + C_cb phi_b J(a,c,d | b) + C_cc phi_c J(a,b,d | c) + C_cd P4(a,b,c,d)

with J(x,y,z) = E[Theta_x Theta_y relu_z] = sum_{w in x,y,z} C_zw phi_w P2(the other two | w)
(all distinct; coinciding indices reduce first: Theta_a Theta_a = Theta_a, Theta_a relu_a = relu_a).
P2 = 1/4 + asin(rho)/(2 pi), P3 = 1/8 + sum asin(rho)/(4 pi); P4 has no elementary form.
Plackett's identity dP4/drho_ij = phi_2(0, 0; rho_ij) P2(k, l | i, j) integrated along
R(t) = I + t (R - I), with t rho_ij = sin(theta), gives the one-dimensional integral

    P4 = 1/16 + sum_{i<j} asin(rho_ij)/(8 pi)
         + (1/(4 pi^2)) sum_{i<j} int_0^{asin rho_ij} asin(rho_{kl.ij}(sin(theta)/rho_ij)) dtheta

(rho_{kl.ij}(t) the partial correlation of k, l given i, j on the path), whose integrand is
bounded; a tanh-sinh rule (level 5, 257 nodes) gives P4 to ~1e-15 (tests: exchangeable
correlations P4 = 1/5 at rho = 1/2, factorised pairs, Monte Carlo-free brute force).  Distinct
fields that are exactly proportional (``|rho| >= 1 - 1e-13``, e.g. a student equal to its
teacher) are merged first (rho = -1: the product of their positive parts vanishes).

Any other g: :func:`generic_integrals` evaluates the integrals by tensor Gauss--Hermite rules in
the eigen-coordinates of the covariance of the distinct fields (I3 first reduced to two
dimensions by projecting u_b on (u_a, u_c)), with an error estimate from a second, lower order.
"""
from __future__ import annotations

import math

import numba
import numpy as np

_PI = math.pi
_2PI = 2.0 * math.pi
_2_PI = 2.0 / math.pi
_SQ2PI = math.sqrt(2.0 * math.pi)
_MERGE = 1e-13          # |rho| >= 1 - _MERGE: the fields are the same (up to a positive scale)


def _ts_rule(level):
    """tanh-sinh nodes on (0, 1) and weights (numpy, at import: a fixed 257-node rule)."""
    h = 2.0 ** (-level)
    t = np.arange(-4.0, 4.0 + 0.5 * h, h)
    s = 0.5 * math.pi * np.sinh(t)
    x = 1.0 / (1.0 + np.exp(-2.0 * s))
    w = h * 0.5 * math.pi * np.cosh(t) / (2.0 * np.cosh(s) ** 2)
    return x, w


#: tanh-sinh rule on (0, 1) for the one-dimensional P4 integral (level 5)
_TS_X, _TS_W = _ts_rule(5)


# ============================================================================ erf and linear
@numba.njit(cache=True)
def i2_erf(caa, cbb, cab):
    """E[g(u_a) g(u_b)], g = erf(x / sqrt 2)."""
    x = cab / math.sqrt((1.0 + caa) * (1.0 + cbb))
    return _2_PI * math.asin(min(1.0, max(-1.0, x)))


@numba.njit(cache=True)
def i3_erf(caa, cab, cac, cbc, ccc):
    """E[g'(u_a) u_b g(u_c)], g = erf(x / sqrt 2)."""
    l3 = (1.0 + caa) * (1.0 + ccc) - cac * cac
    return _2_PI * (cbc * (1.0 + caa) - cab * cac) / ((1.0 + caa) * math.sqrt(l3))


@numba.njit(cache=True)
def i4_erf(caa, cbb, ccc, cdd, cab, cac, cad, cbc, cbd, ccd):
    """E[g'(u_a) g'(u_b) g(u_c) g(u_d)], g = erf(x / sqrt 2), by the reweighted covariance."""
    l4 = (1.0 + caa) * (1.0 + cbb) - cab * cab
    # (I + C_SS)^-1 = [[1 + cbb, -cab], [-cab, 1 + caa]] / l4
    p = (1.0 + cbb) / l4
    q = -cab / l4
    r = (1.0 + caa) / l4
    ccc2 = ccc - (cac * (p * cac + q * cbc) + cbc * (q * cac + r * cbc))
    cdd2 = cdd - (cad * (p * cad + q * cbd) + cbd * (q * cad + r * cbd))
    ccd2 = ccd - (cac * (p * cad + q * cbd) + cbc * (q * cad + r * cbd))
    x = ccd2 / math.sqrt((1.0 + ccc2) * (1.0 + cdd2))
    return _2_PI * _2_PI / math.sqrt(l4) * math.asin(min(1.0, max(-1.0, x)))


# ============================================================================ ReLU
@numba.njit(cache=True)
def _rho(cxx, cyy, cxy):
    d = cxx * cyy
    if d <= 0.0:
        return 0.0
    return min(1.0, max(-1.0, cxy / math.sqrt(d)))


@numba.njit(cache=True)
def i2_relu(caa, cbb, cab):
    """E[relu(u_a) relu(u_b)] = [sqrt(C_aa C_bb - C_ab^2) + C_ab (pi - acos rho)] / (2 pi)."""
    if caa <= 0.0 or cbb <= 0.0:
        return 0.0
    rho = _rho(caa, cbb, cab)
    s = math.sqrt(caa * cbb)
    return (s * math.sqrt(max(0.0, (1.0 - rho) * (1.0 + rho))) + cab * (_PI - math.acos(rho))) / _2PI


@numba.njit(cache=True)
def i3_relu(caa, cab, cac, cbc, ccc):
    """E[Theta(u_a) u_b relu(u_c)] (Stein on u_b)."""
    if ccc <= 0.0:
        return 0.0
    if caa <= 0.0:
        return 0.5 * cbc * 0.5     # u_a = 0: Theta(0) = 1/2, E[u_b relu(u_c)] = C_bc / 2
    rho = _rho(caa, ccc, cac)
    det = max(0.0, caa * ccc - cac * cac)
    return cab * math.sqrt(det) / (_2PI * caa) + cbc * (_PI - math.acos(rho)) / _2PI


@numba.njit(cache=True)
def _p2(c, x, y):
    """P(u_x > 0, u_y > 0)."""
    return 0.25 + math.asin(_rho(c[x, x], c[y, y], c[x, y])) / _2PI


@numba.njit(cache=True)
def _p3(c, x, y, z):
    return 0.125 + (math.asin(_rho(c[x, x], c[y, y], c[x, y])) + math.asin(_rho(c[x, x], c[z, z], c[x, z]))
                    + math.asin(_rho(c[y, y], c[z, z], c[y, z]))) / (4.0 * _PI)


@numba.njit(cache=True)
def _partial(r, t, i, j, k, l):
    """Partial correlation of k, l given i, j for the correlation matrix I + t (r - I)."""
    rij = t * r[i, j]
    det = 1.0 - rij * rij
    if det <= 0.0:
        return 0.0
    rki, rkj, rli, rlj = t * r[k, i], t * r[k, j], t * r[l, i], t * r[l, j]
    # Schur complement of the (i, j) block
    skk = 1.0 - (rki * rki - 2.0 * rij * rki * rkj + rkj * rkj) / det
    sll = 1.0 - (rli * rli - 2.0 * rij * rli * rlj + rlj * rlj) / det
    skl = t * r[k, l] - (rki * rli - rij * (rki * rlj + rkj * rli) + rkj * rlj) / det
    d = skk * sll
    if d <= 0.0:
        return 0.0
    return min(1.0, max(-1.0, skl / math.sqrt(d)))


@numba.njit(cache=True)
def p4_corr(r):
    """Orthant probability P(u_0 > 0, ..., u_3 > 0) for a 4x4 correlation matrix ``r``
    (Plackett's one-dimensional integral, tanh-sinh rule, ~1e-15)."""
    tot = 1.0 / 16.0
    acc = 0.0
    for i in range(4):
        for j in range(i + 1, 4):
            rij = r[i, j]
            th = math.asin(min(1.0, max(-1.0, rij)))
            tot += th / (8.0 * _PI)
            if rij == 0.0:
                continue
            # the complementary pair (k, l)
            k = -1
            l = -1
            for m in range(4):
                if m != i and m != j:
                    if k < 0:
                        k = m
                    else:
                        l = m
            s = 0.0
            for n in range(_TS_X.size):
                t = math.sin(th * _TS_X[n]) / rij
                s += _TS_W[n] * math.asin(_partial(r, t, i, j, k, l))
            acc += th * s
    return tot + acc / (4.0 * _PI * _PI)


@numba.njit(cache=True)
def _p4(c, a, b, x, y):
    r = np.empty((4, 4))
    idx = (a, b, x, y)
    for m in range(4):
        for n in range(4):
            r[m, n] = _rho(c[idx[m], idx[m]], c[idx[n], idx[n]], c[idx[m], idx[n]]) if m != n else 1.0
    return p4_corr(r)


@numba.njit(cache=True)
def _cond(c, j, out):
    """out = covariance of u given u_j = 0 (4x4, row/column j left as is)."""
    cjj = c[j, j]
    for m in range(4):
        for n in range(4):
            out[m, n] = c[m, n] - c[m, j] * c[n, j] / cjj if cjj > 0.0 else c[m, n]


@numba.njit(cache=True)
def _phi(cjj):
    return 1.0 / math.sqrt(_2PI * cjj)


@numba.njit(cache=True)
def _e_relu(c, y):
    """E[relu(u_y)]."""
    return math.sqrt(max(0.0, c[y, y]) / _2PI)


@numba.njit(cache=True)
def _e_t_relu(c, x, y):
    """E[Theta(u_x) relu(u_y)], x != y."""
    cxx = c[x, x]
    cyy = max(0.0, c[y, y])
    if cxx <= 0.0:
        return 0.5 * math.sqrt(cyy / _2PI)
    return (c[x, y] / math.sqrt(cxx) + math.sqrt(cyy)) / (2.0 * _SQ2PI)


@numba.njit(cache=True)
def _e_tt_relu(c, x, y, z, w):
    """E[Theta_x Theta_y relu_z] (distinct; w: scratch 4x4)."""
    tot = 0.0
    for v, o1, o2 in ((x, y, z), (y, x, z), (z, x, y)):
        czv = c[z, v]
        if czv == 0.0 or c[v, v] <= 0.0:
            continue
        _cond(c, v, w)
        tot += czv * _phi(c[v, v]) * _p2(w, o1, o2)
    return tot


@numba.njit(cache=True)
def _e_t_relu_relu(c, a, x, y, w):
    """E[Theta_a relu_x relu_y] (distinct)."""
    tot = c[x, y] * _p3(c, a, x, y)
    if c[a, a] > 0.0 and c[x, a] != 0.0:
        _cond(c, a, w)
        tot += c[x, a] * _phi(c[a, a]) * _e_t_relu(w, x, y)
    if c[x, x] > 0.0:
        _cond(c, x, w)
        tot += c[x, x] * _phi(c[x, x]) * _e_t_relu(w, a, y)
    return tot


@numba.njit(cache=True)
def _e_t_relu2(c, a, x, w):
    """E[Theta_a relu_x^2] (distinct)."""
    tot = c[x, x] * _p2(c, a, x)
    if c[a, a] > 0.0 and c[x, a] != 0.0:
        _cond(c, a, w)
        tot += c[x, a] * _phi(c[a, a]) * _e_relu(w, x)
    return tot


@numba.njit(cache=True)
def _e_tt_relu2(c, a, b, x, w):
    """E[Theta_a Theta_b relu_x^2] (distinct)."""
    tot = c[x, x] * _p3(c, a, b, x)
    if c[a, a] > 0.0 and c[x, a] != 0.0:
        _cond(c, a, w)
        tot += c[x, a] * _phi(c[a, a]) * _e_t_relu(w, b, x)
    if c[b, b] > 0.0 and c[x, b] != 0.0:
        _cond(c, b, w)
        tot += c[x, b] * _phi(c[b, b]) * _e_t_relu(w, a, x)
    return tot


@numba.njit(cache=True)
def _e_tt_relu_relu(c, a, b, x, y, w, w2):
    """E[Theta_a Theta_b relu_x relu_y] (all distinct)."""
    tot = c[x, y] * _p4(c, a, b, x, y)
    for v, o1, o2 in ((a, b, x), (b, a, x), (x, a, b)):
        cxv = c[x, v]
        if cxv == 0.0 or c[v, v] <= 0.0:
            continue
        _cond(c, v, w)
        tot += cxv * _phi(c[v, v]) * _e_tt_relu(w, o1, o2, y, w2)
    return tot


@numba.njit(cache=True)
def _merge(c, ids, scale):
    """Canonical labels: on entry ids[m] is the first position carrying field m's label; on exit
    ids[m] = ids[n] also when fields m, n are proportional (rho >= 1 - 1e-13), with
    scale[m] = sqrt(C_mm / C_nn).  Returns False if two fields are exactly anti-proportional
    (then every product of their positive parts vanishes)."""
    n = ids.size
    for m in range(n):
        scale[m] = 1.0
        if ids[m] != m:                       # the same label as an earlier (final) position
            r = ids[m]
            ids[m] = ids[r]
            scale[m] = scale[r]
            continue
        cmm = c[m, m]
        if cmm <= 0.0:
            continue
        for k in range(m):
            if ids[k] != k or c[k, k] <= 0.0:
                continue
            rho = c[m, k] / math.sqrt(cmm * c[k, k])
            if rho >= 1.0 - _MERGE:
                ids[m] = k
                scale[m] = math.sqrt(cmm / c[k, k])
                break
            if rho <= -1.0 + _MERGE:
                return False
    return True


@numba.njit(cache=True)
def i4_relu(c, ids0, w, w2):
    """E[Theta(u_0) Theta(u_1) relu(u_2) relu(u_3)] for the 4x4 covariance ``c``; ``ids0[m]``
    labels field m (equal labels: the same field).  ``w, w2``: 4x4 scratch arrays."""
    ids = np.empty(4, np.int64)
    scale = np.empty(4)
    # identical labels -> the first position carrying that label
    for m in range(4):
        ids[m] = m
        for k in range(m):
            if ids0[k] == ids0[m]:
                ids[m] = ids[k]
                break
    if not _merge(c, ids, scale):
        return 0.0
    a, b, x, y = ids[0], ids[1], ids[2], ids[3]
    f = scale[2] * scale[3]
    # Theta_a Theta_a = Theta_a ; Theta_a relu_a = relu_a: the step-only fields s0, s1
    s0 = a if a != x and a != y else -1
    s1 = b if b != x and b != y and b != a else -1
    if s0 < 0:
        s0 = s1
        s1 = -1
    if x == y:
        if s0 < 0:
            return f * 0.5 * c[x, x]
        if s1 < 0:
            return f * _e_t_relu2(c, s0, x, w)
        return f * _e_tt_relu2(c, s0, s1, x, w)
    if s0 < 0:
        return f * i2_relu(c[x, x], c[y, y], c[x, y])
    if s1 < 0:
        return f * _e_t_relu_relu(c, s0, x, y, w)
    return f * _e_tt_relu_relu(c, s0, s1, x, y, w, w2)


# ============================================================================ dispatch
#: activation codes of the numba kernels
ERF, RELU, LINEAR, GENERIC = 0, 1, 2, 3


@numba.njit(cache=True)
def i2_code(code, caa, cbb, cab):
    if code == 0:
        return i2_erf(caa, cbb, cab)
    if code == 1:
        return i2_relu(caa, cbb, cab)
    return cab


@numba.njit(cache=True)
def i3_code(code, caa, cab, cac, cbc, ccc):
    if code == 0:
        return i3_erf(caa, cab, cac, cbc, ccc)
    if code == 1:
        return i3_relu(caa, cab, cac, cbc, ccc)
    return cbc


@numba.njit(cache=True)
def i4_code(code, c, ids, w, w2):
    """I4 of the 4x4 covariance ``c`` (fields 0, 1 under g', 2, 3 under g)."""
    if code == 0:
        return i4_erf(c[0, 0], c[1, 1], c[2, 2], c[3, 3], c[0, 1], c[0, 2], c[0, 3], c[1, 2], c[1, 3], c[2, 3])
    if code == 1:
        return i4_relu(c, ids, w, w2)
    return c[2, 3]
