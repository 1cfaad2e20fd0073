r"""Franz--Parisi entropies: the local geometry of perceptron solutions.

The Franz--Parisi (FP) entropy :math:`S_{FP}(d)` is the log-number (per weight) of
solutions ``W`` of a perceptron storage problem at normalized distance ``d`` from a
*reference* solution ``W~`` drawn from an equilibrium measure, averaged over the
patterns and over the reference (thesis Eqs. 2.41--2.42 and 2.55--2.56; Franz &
Parisi 1998; Huang & Kabashima 2014 for the binary perceptron with a typical
reference).  The distance is ``d = (1 - p)/2`` with ``p = W.W~/N`` the overlap; for
Ising weights this is the normalized Hamming distance, for spherical weights
(``|W|^2 = N``) it is ``|W - W~|^2/(4N)``.

Public API
----------
``binary_perceptron(alpha, d, kappa=0.0)``
    RS :math:`S_{FP}(d)` for Ising weights around a typical (uniformly drawn) solution.
``spherical_perceptron(alpha, d, kappa=0.0)``
    The same for spherical weights; the entropy is the log of the *fraction* of the
    sphere (so ``S = log(1 - p^2)/2`` at ``alpha = 0``).
``binary_zero_crossing(alpha, kappa=0.0)``
    The smallest ``d > 0`` where the binary :math:`S_{FP}` becomes positive (below it
    the RS entropy is negative: typical solutions are isolated).
``equilibrium_binary(alpha, kappa)``, ``equilibrium_spherical(alpha, kappa)``
    The reference (Gardner RS) saddle points ``q0, q_hat0`` and entropy.
``stochastic_reference(alpha, q_star, beta)``, ``stochastic_energy(alpha, q_star, beta)``
    The equilibrium theory of the stochastic perceptron (thesis Eqs. 2.53--2.54): RS order
    parameters and the training error of the binarized configuration ``sign(m)``.
``stochastic_perceptron(alpha, d, q_star, beta=20.0)``
    RS :math:`S_{FP}(d)` of Ising solutions around ``sign(m)`` of the stochastic perceptron
    (Eqs. 2.55--2.56 with the reference of Eq. 2.53; the stochastic curves of Fig. 2.7).

Every solver returns a :class:`statmech.saddle.SaddlePoint` (vectorized over ``d``)
and raises :class:`statmech.ConvergenceError` rather than return a wrong number.
Derivations, corrections to the seed equations and validation numbers are in
``docs/franz_parisi.md``.

Replica structure (RS, derived in docs/franz_parisi.md)
-------------------------------------------------------
``n -> 0`` reference replicas, each with ``s -> 0`` constrained replicas.  Order
parameters of the constrained system: ``q1`` (overlap of two constrained replicas of the
same reference), ``t`` (overlap of a constrained replica with *another* reference
replica), the fixed overlap ``p = 1 - 2d`` with its own reference, and their conjugates
``q1_hat, t_hat, p_hat`` (Ising case).  The overlap between constrained replicas of
different references drops out at order ``n s``.  ``t`` is *not* equal to ``q0`` away
from the typical distance: the pair (reference, constrained) is not exchangeable.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import sympy as sp

from .errors import ConvergenceError, check_range
from .gaussian import _ts_rule, gauss_hermite, log_H, piecewise_nodes
from .saddle import SaddlePoint, newton, stack
from .symbolic import Code, Expectation, Log2Cosh, LogH, Scalar, kernels

__all__ = [
    "binary_perceptron", "spherical_perceptron", "binary_zero_crossing",
    "equilibrium_binary", "equilibrium_spherical",
    "stochastic_reference", "stochastic_energy", "stochastic_perceptron",
    "binary_entropy_free",
]

# quadrature settings (accuracy documented in docs/franz_parisi.md, tested in tests/)
_N_OUTER = 64      # Gauss-Hermite order for the outer (shared) Gaussian field
_LEVEL = 5         # tanh-sinh level of the inner piecewise rules (257 nodes per piece)


# =============================================================================== equations
@kernels
def _K():
    """All equations of the module, written once (sympy)."""
    z, y, e, u = sp.symbols("z y e u", real=True)
    q, qh, kappa = sp.symbols("q q_hat kappa", real=True)
    q0, qh0, q1, qh1, t, th, ph, p = sp.symbols("q0 q_hat0 q1 q_hat1 t t_hat p_hat p", real=True)

    phi2 = sp.diff(LogH(u), u, 2)  # d^2/du^2 log H(u), for replicon (AT) eigenvalues

    # ---- reference: Gardner RS, Ising weights (thesis Eq. 2.33 family; Gardner & Derrida 1988)
    Sref = Log2Cosh(sp.sqrt(qh) * z)
    Sref_d = sp.diff(Sref, qh)
    # ---- reference energetic term E_z log H((kappa - sqrt(q) z)/sqrt(1-q))
    uref = (kappa - sp.sqrt(q) * z) / sp.sqrt(1 - q)
    Eref = LogH(uref)
    Eref_d = sp.diff(Eref, q)
    # ---- reference entropic term, spherical: 1/2 log(1-q) + q/(2(1-q))
    Ssph = sp.log(1 - q) / 2 + q / (2 * (1 - q))

    # ---- FP entropic term, Ising weights.  Shared field sqrt(qh0) z of the reference, the
    # reference spin is taken +1 (weight (1 + tanh(sqrt(qh0) z)), symmetry W~ -> -W~, z -> -z),
    # local field of a constrained spin:
    #   h = (t_hat/sqrt(qh0)) z + (p_hat - t_hat) + sqrt(q_hat1 - t_hat^2/qh0) y
    h = th / sp.sqrt(qh0) * z + (ph - th) + sp.sqrt(qh1 - th ** 2 / qh0) * y
    wS = 1 + sp.tanh(sp.sqrt(qh0) * z)
    fS = wS * Log2Cosh(h)
    XS = (qh1, th, ph)
    gS = [sp.diff(fS, v) for v in XS]
    HS = [sp.diff(gS[i], XS[j]) for i in range(3) for j in range(i, 3)]
    repS = wS * (1 - sp.tanh(h) ** 2) ** 2

    # ---- FP energetic term (Ising and spherical weights alike).  Given the shared field z:
    #   reference field u = sqrt(q0) z + x,  x ~ N(0, 1-q0),
    #   constrained field v = (t/sqrt(q0)) z + sv e + sqrt(1-q1) w,  e, w ~ N(0,1),
    #   cov(x, sv e) = p - t.  Integrating x given e:
    #   E_e[ H(a)/H(a0) * log H(b) ]  with
    sv = sp.sqrt(q1 - t ** 2 / q0)
    sx = sp.sqrt(1 - q0 - (p - t) ** 2 / (q1 - t ** 2 / q0))
    a = (kappa - sp.sqrt(q0) * z - (p - t) / sv * e) / sx
    la0 = sp.Symbol("log_H_a0", real=True)  # log H((kappa - sqrt(q0) z)/sqrt(1-q0)), fixed per z
    b = (kappa - t / sp.sqrt(q0) * z - sv * e) / sp.sqrt(1 - q1)
    wE = sp.exp(LogH(a) - la0)
    fE = wE * LogH(b)
    XE = (q1, t)
    gE = [sp.diff(fE, v) for v in XE]
    HE = [sp.diff(gE[i], XE[j]) for i in range(2) for j in range(i, 2)]
    gEp = sp.diff(fE, p)
    repE = wE * phi2.subs(u, b) ** 2

    # ---- FP entropic term, spherical weights (Schur complement of the overlap matrix)
    C = (p ** 2 - t ** 2) / (1 - q0) - q0 * (p - t) ** 2 / (1 - q0) ** 2
    sS = sp.log(1 - q1) / 2 + (q1 - C) / (2 * (1 - q1))
    gsS = [sp.diff(sS, v) for v in XE]
    HsS = [sp.diff(gsS[i], XE[j]) for i in range(2) for j in range(i, 2)]

    # ---- stochastic perceptron (thesis Eqs. 2.49, 2.53, 2.54, corrected), reference measure
    # site measure of a magnetization m in [-1, 1]: exp(-A m^2/2 + h m - c), h = sqrt(q_hat) z
    m, x = sp.symbols("m x", real=True)
    A, hm, c = sp.symbols("A h c", real=True)
    Wm = sp.exp(-A * m ** 2 / 2 + hm * m - c)
    # pattern term: E_x H(u)^beta, u = -(sqrt(qm) z + sqrt(qs - qm) x)/sqrt(1 - qs), shifted by c
    qm, qs, beta, ts, M1 = sp.symbols("q_m q_star beta t_s M1", real=True)
    us = -(sp.sqrt(qm) * z + sp.sqrt(qs - qm) * x) / sp.sqrt(1 - qs)
    Wx = sp.exp(beta * LogH(us) - c)
    # Eq. 2.54: the binarized field u_b = sign(m).xi/sqrt(N) given (z, x) is Gaussian with mean
    # (t_s/sqrt(qm)) z + rho_b x and variance sig_b^2; error probability H(mean/sig_b)
    rho_b = (M1 - ts) / (qs - qm)
    sig_b = sp.sqrt(1 - ts ** 2 / qm - rho_b ** 2 * (qs - qm))
    from .symbolic import H as Hs
    Perr = Hs(((ts / sp.sqrt(qm)) * z + rho_b * x) / sig_b)

    # ---- FP entropy around sign(m) of the stochastic perceptron (thesis Eqs. 2.55-2.56 with the
    # reference of Eq. 2.53; derived in docs/franz_parisi.md).  Entropic integrand given the
    # reference's shared field z, its magnetization m (sign sg) and the Gaussian y:
    #   h = (t_hat/sqrt(q_hat)) z + (R_hat - t_hat) m + p_hat sg + sqrt(q_hat1 - t_hat^2/q_hat) y
    Rh, Rs, sg = sp.symbols("R_hat R s_g", real=True)
    hst = th / sp.sqrt(qh) * z + (Rh - th) * m + ph * sg + sp.sqrt(qh1 - th ** 2 / qh) * y
    fST = Log2Cosh(hst)
    XST = (qh1, th, Rh, ph)
    # energetic integrand given the reference fields (z, x): constrained field
    #   v = (t/sqrt(q_m)) z + (R - t)/sqrt(q_star - q_m) x + s_v e + sqrt(1 - q1) w,
    #   s_v^2 = q1 - t^2/q_m - (R - t)^2/(q_star - q_m);  log P(v > 0 | z, x, e) = log H(b)
    svst = sp.sqrt(q1 - t ** 2 / qm - (Rs - t) ** 2 / (qs - qm))
    bst = -(t / sp.sqrt(qm) * z + (Rs - t) / sp.sqrt(qs - qm) * x + svst * e) / sp.sqrt(1 - q1)
    fET = LogH(bst)
    XET = (q1, t, Rs)
    argsS = (z, m, sg, y, qh, qh1, th, Rh, ph)
    argsE = (z, x, e, qm, qs, q1, t, Rs)
    gST = [sp.diff(fST, v) for v in XST]
    gET = [sp.diff(fET, v) for v in XET]
    hST = [sp.diff(gST[i], XST[j]) for i in range(4) for j in range(i, 4)]
    hET = [sp.diff(gET[i], XET[j]) for i in range(3) for j in range(i, 3)]
    st = {"stfp_S": Scalar(argsS, [fST] + gST + hST),
          "stfp_E": Scalar(argsE, [fET] + gET + hET),
          "stfp_sums": Code("""
            @numba.njit(cache=True)
            def stfp_sum_S(P, Z, M, Sg, Y, WY, qh, qh1, th, Rh, ph):
                out = np.zeros(15)
                for i in range(P.shape[0]):
                    for j in range(P.shape[1]):
                        if P[i, j] == 0.0:
                            continue
                        for k in range(Y.shape[2]):
                            w = P[i, j] * WY[i, j, k]
                            r = stfp_S(Z[i, j], M[i, j], Sg[i, j], Y[i, j, k], qh, qh1, th, Rh, ph)
                            for a in range(15):
                                out[a] += w * r[a]
                return out

            @numba.njit(cache=True)
            def stfp_sum_E(P, Z, X, E, WE, qm, qs, q1, t, R):
                out = np.zeros(10)
                for i in range(P.shape[0]):
                    for j in range(P.shape[1]):
                        if P[i, j] == 0.0:
                            continue
                        for k in range(E.shape[2]):
                            w = P[i, j] * WE[i, j, k]
                            r = stfp_E(Z[i, j], X[i, j], E[i, j, k], qm, qs, q1, t, R)
                            for a in range(10):
                                out[a] += w * r[a]
                return out
            """),
          }

    return {
        **st,
        "sto_m": Expectation(m, (A, hm, c), (Wm, Wm * m, Wm * m ** 2)),
        "sto_x": Expectation(x, (z, qm, qs, beta, c), (Wx, sp.diff(Wx, qm))),
        "sto_err": Expectation(x, (z, qm, qs, beta, c, ts, M1), (Wx, Wx * Perr)),
        "ref_S": Expectation(z, (qh,), (Sref, Sref_d, sp.diff(Sref_d, qh),
                                          (1 - sp.tanh(sp.sqrt(qh) * z) ** 2) ** 2)),
        "ref_E": Expectation(z, (q, kappa), (Eref, Eref_d, sp.diff(Eref_d, q), phi2.subs(u, uref) ** 2)),
        "sph_S": Scalar((q,), (Ssph, sp.diff(Ssph, q), sp.diff(Ssph, q, 2))),
        "fp_S": Expectation(y, (z, qh0, qh1, th, ph), (fS, *gS, *HS, repS, wS)),
        "fp_E": Expectation(e, (z, q0, t, p, q1, kappa, la0), (fE, *gE, *HE, gEp, repE, wE)),
        "sph_fp_S": Scalar((q0, t, p, q1), (sS, *gsS, *HsS, sp.diff(sS, p))),
    }


# =============================================================================== helpers
def binary_entropy_free(d):
    """S_FP at alpha = 0 for Ising weights: -d log d - (1-d) log(1-d) (all 2^N configurations)."""
    d = np.asarray(d, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = -np.where(d > 0, d * np.log(np.where(d > 0, d, 1.0)), 0.0) \
              - np.where(d < 1, (1 - d) * np.log1p(-np.where(d < 1, d, 0.0)), 0.0)
    return out if out.ndim else float(out)


def _ref_energy(q, kappa, level=6):
    """E_z[log H(u), d/dq, d2/dq2, (phi'')^2] with u = (kappa - sqrt(q) z)/sqrt(1-q)."""
    brk = kappa / math.sqrt(q) if q > 0 else kappa
    zs, ws = piecewise_nodes([brk], level)
    return np.array(_K.ref_E(zs, ws, q, kappa))


def _ref_entropy_ising(qh, n=96):
    zs, ws = gauss_hermite(n)
    return np.array(_K.ref_S(zs, ws, qh))


@dataclass(frozen=True)
class _Ref:
    kind: str
    alpha: float
    kappa: float
    q0: float
    qh0: float
    entropy: float
    replicon: float
    residual: float
    iterations: int


_REF_CACHE: dict = {}


def _reference(kind, alpha, kappa):
    key = (kind, float(alpha), float(kappa))
    if key in _REF_CACHE:
        return _REF_CACHE[key]
    if kind == "binary":
        r = _solve_ref_binary(alpha, kappa)
    else:
        r = _solve_ref_spherical(alpha, kappa)
    if len(_REF_CACHE) > 256:
        _REF_CACHE.clear()
    _REF_CACHE[key] = r
    return r


def _solve_ref_binary(alpha, kappa):
    """Gardner RS for Ising weights: stationary point of
    Phi(q, q_hat) = -q_hat (1-q)/2 + E_z log 2cosh(sqrt(q_hat) z) + alpha E_z log H(u)."""
    def both(x):
        q, qh = x
        E = _ref_energy(q, kappa)
        S = _ref_entropy_ising(qh)
        F = np.array([qh / 2 + alpha * E[1], -(1 - q) / 2 + S[1]])
        J = np.array([[alpha * E[2], 0.5], [0.5, S[2]]])
        return F, J, E, S

    # fixed-point warm-up (robust), then Newton
    q, qh = 0.3, 0.5
    for _ in range(60):
        E = _ref_energy(q, kappa)
        S = _ref_entropy_ising(qh)
        qh_new = -2 * alpha * E[1]
        zs, ws = gauss_hermite(96)
        q_new = float(np.sum(ws * np.tanh(math.sqrt(max(qh_new, 1e-300)) * zs) ** 2))
        q, qh = 0.5 * q + 0.5 * min(q_new, 1 - 1e-9), 0.5 * qh + 0.5 * qh_new
    info = newton(lambda x: both(x)[0], [q, qh], lambda x: both(x)[1], tol=1e-12,
                  in_domain=lambda x: 0 < x[0] < 1 and x[1] > 0)
    q, qh = info.x
    F, J, E, S = both(info.x)
    ent = -qh * (1 - q) / 2 + S[0] + alpha * E[0]
    rep = 1.0 - alpha * E[3] * S[3] / (1 - q) ** 2
    return _Ref("binary", alpha, kappa, float(q), float(qh), float(ent), float(rep), info.residual, info.iterations)


def _solve_ref_spherical(alpha, kappa):
    """Gardner RS for spherical weights: stationary point of
    Phi(q) = log(1-q)/2 + q/(2(1-q)) + alpha E_z log H(u)."""
    def F(x):
        E = _ref_energy(x[0], kappa)
        return np.array([_K.sph_S(x[0])[1] + alpha * E[1]])

    def J(x):
        E = _ref_energy(x[0], kappa)
        return np.array([[_K.sph_S(x[0])[2] + alpha * E[2]]])

    # bracket by bisection on the monotone residual, then Newton
    lo, hi = 1e-12, 1 - 1e-12
    if F([lo])[0] > 0:
        raise ConvergenceError("spherical reference: no overlap solution (alpha too small?)",
                               diagnostics={"alpha": alpha, "kappa": kappa})
    x = 0.5
    for _ in range(60):
        x = 0.5 * (lo + hi)
        if F([x])[0] < 0:
            lo = x
        else:
            hi = x
        if hi - lo < 1e-6:
            break
    info = newton(F, [x], J, tol=1e-13, in_domain=lambda v: 0 < v[0] < 1)
    q = float(info.x[0])
    E = _ref_energy(q, kappa)
    ent = float(_K.sph_S(q)[0] + alpha * E[0])
    rep = 1.0 - alpha * E[3]
    return _Ref("spherical", alpha, kappa, q, float("nan"), ent, float(rep), info.residual, info.iterations)


def equilibrium_binary(alpha, kappa=0.0):
    """Typical (equilibrium, RS) solutions of the Ising perceptron: the FP reference.

    Gardner & Derrida (1988) RS, thesis Sec. 2.3 (the entropy of Eq. 2.33 family, corrected
    prefactors): stationary point of
    ``-q_hat (1-q)/2 + E_z log 2cosh(sqrt(q_hat) z) + alpha E_z log H((kappa - sqrt(q) z)/sqrt(1-q))``.
    Returns a SaddlePoint with ``q``, ``q_hat``, ``entropy`` and the replicon (AT) eigenvalue.
    """
    alpha = float(check_range("alpha", alpha, 0.0, lo_open=True))
    kappa = float(check_range("kappa", kappa, 0.0))
    r = _reference("binary", alpha, kappa)
    return SaddlePoint("franz_parisi.equilibrium_binary", {"alpha": alpha, "kappa": kappa},
                       {"q": r.q0, "q_hat": r.qh0}, {"entropy": r.entropy, "d_typical": (1 - r.q0) / 2},
                       True, r.residual, r.iterations, None, r.replicon, bool(r.replicon > 0))


def equilibrium_spherical(alpha, kappa=0.0):
    """Typical solutions of the spherical perceptron (Gardner 1988 RS): the FP reference.

    Stationary point of ``log(1-q)/2 + q/(2(1-q)) + alpha E_z log H((kappa - sqrt(q) z)/sqrt(1-q))``
    (entropy = log of the fraction of the sphere).
    """
    alpha = float(check_range("alpha", alpha, 0.0, lo_open=True))
    kappa = float(check_range("kappa", kappa, -math.inf))
    r = _reference("spherical", alpha, kappa)
    return SaddlePoint("franz_parisi.equilibrium_spherical", {"alpha": alpha, "kappa": kappa},
                       {"q": r.q0}, {"entropy": r.entropy, "d_typical": (1 - r.q0) / 2},
                       True, r.residual, r.iterations, None, r.replicon, bool(r.replicon > 0))


# =============================================================================== FP integrals
def _breaks(*vals):
    v = np.sort(np.array([x for x in vals if np.isfinite(x)], dtype=float))
    if v.size == 0:
        return np.array([0.0])
    keep = np.concatenate(([True], np.diff(v) > 1e-12 * (1.0 + np.abs(v[1:]))))
    return v[keep]


_FRAME = 8.0   # extra breakpoints +-_FRAME (NOT a cut-off: the tails beyond are integrated exactly)


@lru_cache(maxsize=8)
def _frame_tails(level):
    """Tail nodes of piecewise_nodes([-F, F]) (they do not depend on the inner breakpoints)."""
    zs, ws = piecewise_nodes(np.array([-_FRAME, _FRAME]), level)
    n = zs.size // 3
    return zs[:n].copy(), ws[:n].copy(), zs[2 * n:].copy(), ws[2 * n:].copy()


def _nodes(breaks, level):
    """Same rule as ``piecewise_nodes(breaks + [-F, F], level)`` for breaks inside (-F, F) (tanh-sinh on every finite piece,
    probability-scale tanh-sinh on the two tails), with the tails cached: the inner
    breakpoints change at every outer node, the tails do not."""
    b = np.asarray(breaks, dtype=float)
    # a layer beyond the frame carries Gaussian weight < 1e-15: it is integrated by the
    # (cached) tail rule without a breakpoint of its own
    b = b[np.abs(b) < _FRAME - 1e-9]
    lz, lw, rz, rw = _frame_tails(level)
    x, xc, w = _ts_rule(level)
    edges = np.concatenate(([-_FRAME], b, [_FRAME]))
    a, L = edges[:-1, None], np.diff(edges)[:, None]
    z = np.where(x < 0.5, a + L * x, a + L - L * xc)
    wz = L * w * np.exp(-0.5 * z * z) / math.sqrt(2.0 * math.pi)
    return np.concatenate((lz, z.ravel(), rz)), np.concatenate((lw, wz.ravel(), rw))


def _fp_entropic(qh0, qh1, th, ph, level=_LEVEL, n_outer=_N_OUTER):
    """E_z E_y of the Ising FP entropic integrand and its derivatives (see _K: fp_S)."""
    zs, ws = gauss_hermite(n_outer)
    B = math.sqrt(qh1 - th * th / qh0)
    acc = np.zeros(12)
    for z, w in zip(zs, ws):
        A = th / math.sqrt(qh0) * z + ph - th
        ys, wy = _nodes(_breaks(-A / B), level)
        acc += w * np.array(_K.fp_S(ys, wy, z, qh0, qh1, th, ph))
    return acc


def _fp_energetic(q0, t, p, q1, kappa, level=_LEVEL, n_outer=_N_OUTER, n_gh=96):
    """E_z E_e of the FP energetic integrand and its derivatives (see _K: fp_E).

    Inner rule: Gauss-Hermite (``n_gh`` nodes) when both layers of the integrand (the H(a)
    step of width sx*sv/|p-t| and the log H(b) layer of width sqrt(1-q1)/sv, in units of e)
    are wider than 0.4; otherwise piecewise tanh-sinh with breakpoints at both layers.
    """
    zs, ws = gauss_hermite(n_outer)
    v = q1 - t * t / q0
    sv = math.sqrt(v)
    sx = math.sqrt(1.0 - q0 - (p - t) ** 2 / v)
    sq0 = math.sqrt(q0)
    wa = sx * sv / abs(p - t) if p != t else math.inf
    wb = math.sqrt(1.0 - q1) / sv
    smooth = min(wa, wb) >= 0.4
    if smooth:
        eg, wg = gauss_hermite(n_gh)
    acc = np.zeros(9)
    for z, w in zip(zs, ws):
        if smooth:
            es, we = eg, wg
        else:
            eb = (kappa - t / sq0 * z) / sv
            ea = (kappa - sq0 * z) * sv / (p - t) if p != t else np.inf
            es, we = _nodes(_breaks(eb, ea), level)
        la0 = float(log_H((kappa - sq0 * z) / math.sqrt(1.0 - q0)))
        acc += w * np.array(_K.fp_E(es, we, z, q0, t, p, q1, kappa, la0))
    return acc


@dataclass(frozen=True)
class _Quad:
    """Quadrature resolution: outer Gauss-Hermite orders and inner tanh-sinh level."""
    n_S: int = 96
    n_E: int = 32
    level: int = 5

    def finer(self):
        return _Quad(self.n_S + 32, self.n_E + 16, self.level + 1)


_Q = _Quad()


def _binary_eval(x, p, ref, alpha, kappa, quad=_Q):
    """Gradient F, Hessian J of the Ising FP functional Phi at x = (q1, t, q1_hat, t_hat, p_hat),
    plus the integrals (for the entropy and diagnostics)."""
    q1, t, qh1, th, ph = x
    S = _fp_entropic(ref.qh0, qh1, th, ph, level=quad.level, n_outer=quad.n_S)
    E = _fp_energetic(ref.q0, t, p, q1, kappa, level=quad.level, n_outer=quad.n_E)
    F = np.array([qh1 / 2 + alpha * E[1],
                  th + alpha * E[2],
                  q1 / 2 - 0.5 + S[1],
                  t + S[2],
                  -p + S[3]])
    # S Hessian entries: (11, 1t, 1p, tt, tp, pp) = S[4:10]; E Hessian (q1q1, q1t, tt) = E[3:6]
    J = np.array([
        [alpha * E[3], alpha * E[4], 0.5, 0.0, 0.0],
        [alpha * E[4], alpha * E[5], 0.0, 1.0, 0.0],
        [0.5, 0.0, S[4], S[5], S[6]],
        [0.0, 1.0, S[5], S[7], S[8]],
        [0.0, 0.0, S[6], S[8], S[9]]])
    return F, J, S, E


def _binary_domain(x, p, ref):
    q1, t, qh1, th, ph = x
    if not (0.0 < q1 < 1.0 and qh1 > 0.0):
        return False
    v = q1 - t * t / ref.q0
    if not v > 0.0:
        return False
    sx2 = 1.0 - ref.q0 - (p - t) ** 2 / v
    return sx2 > 0.0 and qh1 - th * th / ref.qh0 > 0.0


def _binary_margins(x, p, ref):
    """Relative distances of a solution from the boundary of the RS domain (all must be > 0)."""
    q1, t, qh1, th, ph = x
    v = q1 - t * t / ref.q0
    return {"1-q1": 1.0 - q1,
            "q1-t^2/q0": v / q1,
            "sigma_x^2/(1-q0)": (1.0 - ref.q0 - (p - t) ** 2 / v) / (1.0 - ref.q0) if v > 0 else -1.0,
            "(q1_hat-t_hat^2/q_hat0)/q1_hat": (qh1 - th * th / ref.qh0) / qh1}


# =============================================================================== continuation in p
class _Problem:
    """One FP saddle-point problem family, parametrized by the overlap p = 1 - 2d."""

    kind = ""
    names = ()

    def __init__(self, alpha, kappa, quad=_Q):
        self.alpha, self.kappa, self.quad = alpha, kappa, quad
        self._cache = {}

    def eval(self, x, p):  # -> F, J, aux
        key = (tuple(np.asarray(x, float)), p)
        if key not in self._cache:
            if len(self._cache) > 64:
                self._cache.clear()
            self._cache[key] = self._eval(np.asarray(x, float), p)
        return self._cache[key]

    def solve(self, x0, p):
        if not self.in_domain(x0, p):
            raise ConvergenceError(f"{self.kind}: initial guess outside the RS domain", x=x0,
                                   diagnostics={"p": p})
        info = newton(lambda x: self.eval(x, p)[0], x0, lambda x: self.eval(x, p)[1],
                      tol=5e-10, xtol=1e-9, maxiter=15, in_domain=lambda x: self.in_domain(x, p))
        return info


def _continue(problem, hist, targets, max_step=0.2):
    """Continuation from the solutions in ``hist`` (list of (p, x), the last one current) to
    every p in ``targets`` (all on the same side, sorted in the direction of travel): secant
    extrapolation of the last two solutions, Newton, step halving on failure."""
    out = {}
    p_cur = hist[-1][0]
    for pt in targets:
        side = 1.0 if pt > p_cur else -1.0
        if abs(p_cur - pt) <= 1e-15:
            info = problem.solve(hist[-1][1], pt)
        while abs(p_cur - pt) > 1e-15:
            remaining = pt - p_cur
            room = (1.0 - p_cur) if side > 0 else (p_cur + 1.0)
            last = abs(hist[-1][0] - hist[-2][0])
            step = side * min(abs(remaining), max_step, 0.6 * room, 4.0 * last)
            for _attempt in range(14):
                p_new = p_cur + step if abs(step) < abs(remaining) else pt
                guess = _extrapolate(problem, hist, p_new)
                try:
                    info = problem.solve(guess, p_new)
                    break
                except ConvergenceError:
                    step *= 0.5
            else:
                raise ConvergenceError(f"{problem.kind}: continuation in d failed",
                                       x=hist[-1][1], diagnostics={"p": p_cur, "d": (1 - p_cur) / 2})
            p_cur = p_new
            hist.append((p_cur, info.x))
        out[pt] = info
    return out


def _extrapolate(problem, hist, p_new):
    """Secant predictor in coordinates where the RS domain is automatically satisfied
    (``problem.to_y``/``from_y``); falls back to the last solution."""
    (pa, xa), (pb, xb) = hist[-2], hist[-1]
    if pb != pa:
        try:
            ya, yb = problem.to_y(xa, pa), problem.to_y(xb, pb)
            if np.all(np.isfinite(ya)) and np.all(np.isfinite(yb)):
                for lam in (1.0, 0.5, 0.0):
                    g = problem.from_y(yb + lam * (yb - ya) * (p_new - pb) / (pb - pa), p_new)
                    if problem.in_domain(g, p_new):
                        return g
        except (ValueError, FloatingPointError, ZeroDivisionError):
            pass
    y = problem.to_y(xb, pb)
    if np.all(np.isfinite(y)):
        g = problem.from_y(y, p_new)
        if problem.in_domain(g, p_new):
            return g
    return xb


def _march(problem, p_targets, p_typ, x_typ, first_guess, max_step=0.2):
    """Solve at every p in p_targets by continuation from the typical overlap p_typ.

    Starts at p_typ +- dp0 from ``first_guess(dp0)`` (the typical point itself is degenerate),
    then :func:`_continue` in both directions.  Returns {p: SolveInfo}.
    """
    out = {}
    for side in (+1.0, -1.0):
        tg = sorted([p for p in p_targets if side * (p - p_typ) > 0], key=lambda p: side * (p - p_typ))
        if not tg:
            continue
        dp0 = side * min(0.03, 0.5 * p_typ, abs(tg[0] - p_typ))
        p0 = p_typ + dp0
        info = problem.solve(first_guess(dp0), p0)
        if abs(p0 - tg[0]) < 1e-15:
            out[tg[0]] = info
            tg = tg[1:]
        out.update(_continue(problem, [(p_typ, np.asarray(x_typ, float)), (p0, info.x)], tg, max_step))
    return out


class _BinaryProblem(_Problem):
    kind = "franz_parisi.binary_perceptron"
    names = ("q1", "t", "q1_hat", "t_hat", "p_hat")

    def __init__(self, alpha, kappa, quad=_Q):
        super().__init__(alpha, kappa, quad)
        self.ref = _reference("binary", alpha, kappa)

    def _eval(self, x, p):
        return _binary_eval(x, p, self.ref, self.alpha, self.kappa, self.quad)

    def in_domain(self, x, p):
        return _binary_domain(x, p, self.ref)

    def margins(self, x, p):
        return _binary_margins(x, p, self.ref)

    def typical(self):
        r = self.ref
        return np.array([r.q0, r.q0, r.qh0, r.qh0, r.qh0])

    def to_y(self, x, p):
        q1, t, qh1, th, ph = x
        q0, qh0 = self.ref.q0, self.ref.qh0
        with np.errstate(all="ignore"):
            v = q1 - t * t / q0
            rho = (p - t) / math.sqrt((1 - q0) * v) if v > 0 else np.nan
            c = th / math.sqrt(qh0 * qh1) if qh1 > 0 else np.nan
            return np.array([math.log(v) if v > 0 else np.nan, np.arctanh(rho) if abs(rho) < 1 else np.nan,
                             math.log(qh1) if qh1 > 0 else np.nan, np.arctanh(c) if abs(c) < 1 else np.nan, ph])

    def from_y(self, y, p):
        q0, qh0 = self.ref.q0, self.ref.qh0
        v, rho, qh1 = math.exp(y[0]), math.tanh(y[1]), math.exp(y[2])
        t = p - rho * math.sqrt((1 - q0) * v)
        return np.array([v + t * t / q0, t, qh1, math.tanh(y[3]) * math.sqrt(qh0 * qh1), y[4]])

    def first_guess(self, dp):
        r = self.ref
        a = abs(dp)
        return np.array([r.q0 + a, r.q0, r.qh0 * (1 + a), r.qh0, r.qh0 * (1 + 2 * dp)])

    def thermo(self, x, p):
        F, J, S, E = self.eval(x, p)
        q1, t, qh1, th, ph = x
        ent = th * t - ph * p + qh1 * q1 / 2 + S[0] - qh1 / 2 + self.alpha * E[0]
        dS_dp = -ph + self.alpha * E[6]
        rep = 1.0 - self.alpha * E[7] * S[10] / (1.0 - q1) ** 2
        return ent, dS_dp, rep, J, {"norm_S": S[11], "norm_E": E[8]}


def _assemble(problem, d, p, info_or_none, x, ref_entropy, d_typ):
    """One scalar SaddlePoint from a converged FP solution (checks that it is interior)."""
    params = {"alpha": problem.alpha, "kappa": problem.kappa, "d": d}
    if info_or_none is None:  # exactly at the typical distance: the degenerate solution
        order = dict(zip(problem.names, map(float, x)))
        order.update(problem.ref_params())
        thermo = {"entropy": ref_entropy, "entropy_equilibrium": ref_entropy, "d_typical": d_typ,
                  "dS_dd": 0.0}
        return SaddlePoint(problem.kind, params, order, thermo, True, 0.0, 0, None,
                           problem.ref.replicon, bool(problem.ref.replicon > 0),
                           {"margins": {}, "note": "d equals the typical distance: S_FP = S_eq exactly"})
    ent, dS_dp, rep, J, diag = problem.thermo(x, p)
    margins = problem.margins(x, p)
    bad = {k: v for k, v in margins.items() if not v > 1e-9}
    if bad:
        raise ConvergenceError(f"{problem.kind}: solution on the boundary of the RS domain", x=x,
                               residual=info_or_none.residual, diagnostics={"d": d, **bad})
    for k, v in diag.items():
        if abs(v - 1.0) > 1e-8:
            raise ConvergenceError(f"{problem.kind}: quadrature normalization check failed ({k})",
                                   x=x, diagnostics={"d": d, k: v})
    order = dict(zip(problem.names, map(float, x)))
    order.update(problem.ref_params())
    thermo = {"entropy": float(ent), "entropy_equilibrium": ref_entropy, "d_typical": d_typ,
              "dS_dd": float(-2.0 * dS_dp)}
    if not np.isfinite(ent):
        raise ConvergenceError(f"{problem.kind}: non-finite entropy", x=x, diagnostics={"d": d})
    eig = np.linalg.eigvalsh(0.5 * (J + J.T))
    return SaddlePoint(problem.kind, params, order, thermo, bool(info_or_none.converged),
                       float(info_or_none.residual), int(info_or_none.iterations), eig, float(rep),
                       bool(rep > 0), {"margins": margins})


def _solve_family(problem, d, ref_entropy, q_typ):
    d_arr = np.asarray(d, dtype=float)
    flat = d_arr.ravel()
    p_all = 1.0 - 2.0 * flat
    d_typ = (1.0 - q_typ) / 2.0
    near = np.abs(p_all - q_typ) < 1e-12
    sols = _march(problem, [p for p, n in zip(p_all, near) if not n], q_typ, problem.typical(),
                  problem.first_guess)
    res = []
    for dd, pp, n in zip(flat, p_all, near):
        if n:
            res.append(_assemble(problem, float(dd), float(pp), None, problem.typical(), ref_entropy, d_typ))
        else:
            info = sols[pp]
            res.append(_assemble(problem, float(dd), float(pp), info, info.x, ref_entropy, d_typ))
    if d_arr.ndim == 0:
        return res[0]
    eigs = [r.hessian_eigenvalues for r in res]
    mixed = any(e is None for e in eigs) and not all(e is None for e in eigs)
    if mixed:
        # the exact typical point has no Hessian (degenerate parametrization): never fill with
        # NaN; the per-point eigenvalues (None there) go to extra
        from dataclasses import replace
        n = next(len(e) for e in eigs if e is not None)
        res = [replace(r, hessian_eigenvalues=np.zeros(n)) if r.hessian_eigenvalues is None else r for r in res]
    out = stack(res, d_arr.shape, model=problem.kind)
    if mixed:
        out = replace(out, hessian_eigenvalues=None, extra={"hessian_eigenvalues": eigs})
    return out


def binary_perceptron(alpha, d, kappa=0.0):
    r"""RS Franz--Parisi entropy of the Ising perceptron around a typical solution.

    Implements thesis Eqs. 2.55--2.56 (Huang & Kabashima 2014) with the reference drawn
    from the uniform measure over solutions (``beta -> infinity``), in the replica-symmetric
    ansatz derived in ``docs/franz_parisi.md`` (the seed's Eq. 2.42 is garbled: the sum over
    references must be normalized, i.e. it is the *quenched average over the equilibrium
    measure*, ``E_xi <log Z_FP(d, W~)>_{W~}``).  The entropy is

    ``S_FP = t_hat t - p_hat p + q1_hat (q1 - 1)/2
           + E_z (1 + tanh(sqrt(q_hat0) z)) E_y log 2cosh(h)
           + alpha E_z E_e [H(a)/H(a0) log H(b)]``

    at its stationary point in ``(q1, t, q1_hat, t_hat, p_hat)`` with ``p = 1 - 2d``
    (notation in the module docstring and docs).

    Parameters
    ----------
    alpha : float > 0, below the RS capacity of the Ising perceptron (0.833 at kappa = 0)
    d : float or array in (0, 0.5], normalized Hamming distance from the reference
    kappa : stability threshold >= 0

    Returns
    -------
    SaddlePoint with ``entropy`` (S_FP(d), in nats per weight, counting configurations,
    so ``S_FP -> -d log d - (1-d) log(1-d)`` as alpha -> 0), ``entropy_equilibrium``,
    ``d_typical = (1 - q0)/2``, ``dS_dd``; order parameters ``q1, t, q1_hat, t_hat, p_hat``
    and the reference's ``q0, q_hat0``; ``replicon`` = AT eigenvalue of the constrained
    replicas (``1 - alpha gamma_E gamma_S/(1-q1)^2``), ``hessian_eigenvalues`` of the RS
    functional; ``extra['margins']`` = distances from the boundary of the RS domain.
    """
    alpha = float(check_range("alpha", alpha, 0.0, 0.9, lo_open=True))
    kappa = float(check_range("kappa", kappa, 0.0, 3.0))
    check_range("d", d, 0.0, 0.5, lo_open=True)
    prob = _BinaryProblem(alpha, kappa)
    return _solve_family(prob, d, prob.ref.entropy, prob.ref.q0)


def _binary_ref_params(self):
    return {"q0": self.ref.q0, "q_hat0": self.ref.qh0}


_BinaryProblem.ref_params = _binary_ref_params


# =============================================================================== spherical
def _spherical_eval(x, p, ref, alpha, kappa, quad=_Q):
    q1, t = x
    s = _K.sph_fp_S(ref.q0, t, p, q1)
    E = _fp_energetic(ref.q0, t, p, q1, kappa, level=quad.level, n_outer=quad.n_E)
    F = np.array([s[1] + alpha * E[1], s[2] + alpha * E[2]])
    J = np.array([[s[3] + alpha * E[3], s[4] + alpha * E[4]],
                  [s[4] + alpha * E[4], s[5] + alpha * E[5]]])
    return F, J, np.array(s), E


class _SphericalProblem(_Problem):
    kind = "franz_parisi.spherical_perceptron"
    names = ("q1", "t")

    def __init__(self, alpha, kappa, quad=_Q):
        super().__init__(alpha, kappa, quad)
        self.ref = _reference("spherical", alpha, kappa)

    def _eval(self, x, p):
        return _spherical_eval(x, p, self.ref, self.alpha, self.kappa, self.quad)

    def in_domain(self, x, p):
        q1, t = x
        if not 0.0 < q1 < 1.0:
            return False
        v = q1 - t * t / self.ref.q0
        return v > 0.0 and 1.0 - self.ref.q0 - (p - t) ** 2 / v > 0.0

    def margins(self, x, p):
        q1, t = x
        v = q1 - t * t / self.ref.q0
        return {"1-q1": 1.0 - q1, "q1-t^2/q0": v / q1,
                "sigma_x^2/(1-q0)": (1.0 - self.ref.q0 - (p - t) ** 2 / v) / (1.0 - self.ref.q0) if v > 0 else -1.0}

    def typical(self):
        return np.array([self.ref.q0, self.ref.q0])

    def to_y(self, x, p):
        q1, t = x
        q0 = self.ref.q0
        v = q1 - t * t / q0
        if not v > 0:
            return np.array([np.nan, np.nan])
        rho = (p - t) / math.sqrt((1 - q0) * v)
        return np.array([math.log(v), np.arctanh(rho) if abs(rho) < 1 else np.nan])

    def from_y(self, y, p):
        q0 = self.ref.q0
        v, rho = math.exp(y[0]), math.tanh(y[1])
        t = p - rho * math.sqrt((1 - q0) * v)
        return np.array([v + t * t / q0, t])

    def first_guess(self, dp):
        return np.array([self.ref.q0 + abs(dp), self.ref.q0])

    def ref_params(self):
        return {"q0": self.ref.q0}

    def thermo(self, x, p):
        F, J, s, E = self.eval(x, p)
        ent = s[0] + self.alpha * E[0]
        dS_dp = s[6] + self.alpha * E[6]
        rep = 1.0 - self.alpha * E[7]
        return ent, dS_dp, rep, J, {"norm_E": E[8]}


def spherical_perceptron(alpha, d, kappa=0.0):
    r"""RS Franz--Parisi entropy of the spherical perceptron around a typical solution.

    Same construction as :func:`binary_perceptron` (thesis Eqs. 2.41--2.42 with the
    Euclidean distance) for weights on the sphere ``|W|^2 = N``.  The distance is defined from
    the overlap ``p = W.W~/N`` as ``d = (1 - p)/2 = |W - W~|^2/(4N)`` (the same map as the
    Hamming distance of Ising weights).  The entropy is the log of the *fraction of the sphere*
    (per weight): ``S_FP = log(1 - q1)/2 + (q1 - C)/(2(1 - q1)) + alpha E_z E_e[H(a)/H(a0) log H(b)]``
    with ``C = (p^2 - t^2)/(1 - q0) - q0 (p - t)^2/(1 - q0)^2`` (Schur complement of the
    replica overlap matrix, derived in docs/franz_parisi.md), stationary in ``(q1, t)``.
    At ``alpha -> 0`` it is ``log(1 - p^2)/2 = log(4 d (1 - d))/2``.

    Parameters: ``alpha`` in (0, alpha_c(kappa)), ``d`` in (0, 0.5], ``kappa`` real.
    Returns a SaddlePoint as :func:`binary_perceptron` (order parameters ``q1, t, q0``).
    """
    alpha = float(check_range("alpha", alpha, 0.0, 50.0, lo_open=True))
    kappa = float(check_range("kappa", kappa, -3.0, 3.0))
    check_range("d", d, 0.0, 0.5, lo_open=True)
    prob = _SphericalProblem(alpha, kappa)
    return _solve_family(prob, d, prob.ref.entropy, prob.ref.q0)


# =============================================================================== zero crossing
def _solve_near(problem, p, known):
    """Solve at overlap p by continuation from the nearest known solutions (list of (p, x),
    the first entry being the degenerate typical point)."""
    if len(known) == 1:
        return _march(problem, [p], known[0][0], known[0][1], problem.first_guess)[p]
    ks = sorted({k[0]: k for k in known[1:]}.values(), key=lambda k: abs(k[0] - p))
    if len(ks) == 1:
        ks = ks + [known[0]]
    hist = [ks[1], ks[0]]
    return _continue(problem, hist, [p])[p]


def binary_zero_crossing(alpha, kappa=0.0, *, xtol=1e-9):
    """Smallest distance d0 > 0 where the RS Franz--Parisi entropy of the Ising perceptron
    (:func:`binary_perceptron`) crosses zero: for d < d0 the RS count of solutions around a
    typical solution is negative (no solutions at those distances: typical solutions are
    isolated), for d0 < d < d_typical it is positive.

    Brent's method on ``S_FP(d)`` bracketed on a geometric grid; each evaluation is a warm-started
    Newton solve.  Returns a SaddlePoint (the FP solution at ``d = d0``) with ``d0`` in
    ``thermo['d_zero']``; the bracketing grid and the entropy there are in ``extra``.
    ``alpha`` may be an array (one crossing per value).
    """
    a_arr = check_range("alpha", alpha, 0.0, 0.9, lo_open=True)
    kappa = float(check_range("kappa", kappa, 0.0, 3.0))
    if a_arr.ndim:
        res = [binary_zero_crossing(float(a), kappa, xtol=xtol) for a in a_arr.ravel()]
        return stack(res, a_arr.shape, model="franz_parisi.binary_zero_crossing")
    alpha = float(a_arr)
    prob = _BinaryProblem(alpha, kappa)
    d_typ = (1.0 - prob.ref.q0) / 2.0
    grid = [d for d in d_typ * 0.5 ** np.arange(1, 40) if d > 1e-9]
    known = [(prob.ref.q0, prob.typical())]
    ent = {}
    hi = None
    lo = None
    for d in grid:  # descending in d, ascending in p
        p = 1.0 - 2.0 * d
        info = _solve_near(prob, p, known)
        known.append((p, info.x))
        s = prob.thermo(info.x, p)[0]
        ent[d] = s
        if s < 0:
            lo = d
            break
        hi = d
    if lo is None or hi is None:
        raise ConvergenceError("binary_zero_crossing: no sign change of S_FP found on the grid",
                               diagnostics={"alpha": alpha, "smallest d": grid[-1]})

    def f(d):
        p = 1.0 - 2.0 * d
        info = _solve_near(prob, p, known)
        known.append((p, info.x))
        return prob.thermo(info.x, p)[0]

    from scipy import optimize
    d0 = optimize.brentq(f, lo, hi, xtol=xtol * lo, rtol=1e-12)
    sp_ = _assemble(prob, d0, 1.0 - 2.0 * d0, _solve_near(prob, 1.0 - 2.0 * d0, known),
                    _solve_near(prob, 1.0 - 2.0 * d0, known).x, prob.ref.entropy, d_typ)
    thermo = dict(sp_.thermo)
    thermo["d_zero"] = float(d0)
    return SaddlePoint("franz_parisi.binary_zero_crossing", sp_.params, sp_.order_params, thermo,
                       sp_.converged, sp_.residual, sp_.iterations, sp_.hessian_eigenvalues,
                       sp_.replicon, sp_.rs_stable, {"grid_entropy": ent, **sp_.extra})


# =============================================================================== stochastic perceptron
_N_STO = 64  # outer Gauss-Hermite order for the stochastic-perceptron reference


@lru_cache(maxsize=4)
def _m_nodes(level=6):
    x, xc, w = _ts_rule(level)
    return np.ascontiguousarray(x), np.ascontiguousarray(-x), np.ascontiguousarray(w)


def _site_moments(A, qh, n=_N_STO):
    """Per outer node z: log zeta, <m>, <m^2>, <sign m>, <|m|> of exp(-A m^2/2 + sqrt(qh) z m) on [-1, 1]."""
    zs, ws = gauss_hermite(n)
    mp, mn, wm = _m_nodes()
    out = np.empty((zs.size, 5))
    sq = math.sqrt(qh)
    for i, z in enumerate(zs):
        h = sq * z
        if A > 0 and abs(h / A) <= 1.0:
            c = h * h / (2 * A)
        else:
            c = -A / 2 + abs(h)
        Zp, Mp, Qp = _K.sto_m(mp, wm, A, h, c)
        Zn, Mn, Qn = _K.sto_m(mn, wm, A, h, c)
        Z = Zp + Zn
        out[i] = (c + math.log(Z), (Mp + Mn) / Z, (Qp + Qn) / Z, (Zp - Zn) / Z, (Mp - Mn) / Z)
    return zs, ws, out


def _x_nodes(z, qm, qs, level=_LEVEL):
    s = math.sqrt(qs - qm)
    return _nodes(_breaks(-math.sqrt(qm) * z / s), level)


def _x_shift(xs, wx, z, qm, qs, beta):
    u = -(math.sqrt(qm) * z + math.sqrt(qs - qm) * xs) / math.sqrt(1 - qs)
    lw = beta * log_H(u)
    return float(np.max(lw[wx > 0]))


def _sto_pattern_term(qm, qs, beta, n=_N_STO):
    """E_z log E_x H(u)^beta and its q_m derivative."""
    zs, ws = gauss_hermite(n)
    G = 0.0
    dG = 0.0
    for z, w in zip(zs, ws):
        xs, wx = _x_nodes(z, qm, qs)
        c = _x_shift(xs, wx, z, qm, qs, beta)
        S0, S1 = _K.sto_x(xs, wx, z, qm, qs, beta, c)
        G += w * (c + math.log(S0))
        dG += w * S1 / S0
    return G, dG


@dataclass(frozen=True)
class _StoRef:
    alpha: float
    q_star: float
    beta: float
    q_m: float
    q_hat: float
    A: float
    t_s: float
    M1: float
    free_entropy: float
    residual: float
    iterations: int


def _solve_A(qh, qs):
    """A such that E_z <m^2> = q_star (monotone decreasing in A)."""
    f = lambda A: float(np.sum(gauss_hermite(_N_STO)[1] * _site_moments(A, qh)[2][:, 2])) - qs
    lo, hi = -1.0, 1.0
    while f(lo) < 0:
        lo *= 2.0
        if lo < -1e6:
            raise ConvergenceError("stochastic reference: cannot reach q_star (A -> -inf)", diagnostics={"q_star": qs})
    while f(hi) > 0:
        hi *= 2.0
        if hi > 1e6:
            raise ConvergenceError("stochastic reference: cannot reach q_star (A -> +inf)", diagnostics={"q_star": qs})
    from scipy import optimize
    return optimize.brentq(f, lo, hi, xtol=1e-14, rtol=1e-14)


_STO_CACHE: dict = {}
_STO_START = 0.3  # q_star where the branch is started (unique solution there), then continued


def _sto_residual(x, qs, alpha, beta):
    qm, qh, A = x
    if not (0.0 < qm < qs and qh > 0.0):
        return np.full(3, 1e6)
    ws = gauss_hermite(_N_STO)[1]
    _, _, mom = _site_moments(A, qh)
    _, dG = _sto_pattern_term(qm, qs, beta)
    return np.array([ws @ mom[:, 2] - qs, ws @ mom[:, 1] ** 2 - qm, qh + 2 * alpha * dG])


def _sto_start(alpha, qs, beta):
    """Damped iteration on (q_m, q_hat) with A solved exactly (robust start at small q_star)."""
    ws = gauss_hermite(_N_STO)[1]
    qm, qh = 0.8 * qs, 1.0
    A = _solve_A(qh, qs)
    for _ in range(300):
        _, _, mom = _site_moments(A, qh)
        qm_new = min(float(ws @ mom[:, 1] ** 2), qs * (1 - 1e-9))
        _, dG = _sto_pattern_term(qm, qs, beta)
        qh_new = max(-2 * alpha * dG, 1e-12)
        if abs(qm_new - qm) < 1e-7 and abs(qh_new - qh) < 1e-7 * (1 + qh):
            qm, qh = qm_new, qh_new
            break
        qm, qh = 0.5 * qm + 0.5 * qm_new, 0.5 * qh + 0.5 * qh_new
        A = _solve_A(qh, qs)
    return np.array([qm, qh, _solve_A(qh, qs)])


def _sto_newton(x0, qs, alpha, beta):
    return newton(lambda v: _sto_residual(v, qs, alpha, beta), x0, tol=1e-10, xtol=1e-9, maxiter=30,
                  in_domain=lambda v: 0 < v[0] < qs and v[1] > 0)


def _sto_solution(alpha, qs, beta):
    """Branch of the RS stochastic reference continued in q_star from _STO_START (secant
    predictor, Newton corrector, step halving); every solution is cached."""
    key = (alpha, beta)
    branch = _STO_CACHE.setdefault(key, {})
    if qs in branch:
        return branch[qs]
    if not branch:
        q0 = min(_STO_START, qs)
        info = _sto_newton(_sto_start(alpha, q0, beta), q0, alpha, beta)
        branch[q0] = info
        if q0 == qs:
            return info
    known = sorted(branch)
    # continue from the nearest known solution on the side of qs
    below = [k for k in known if k < qs]
    above = [k for k in known if k > qs]
    seq = below[-2:] if below else above[:2][::-1]
    hist = [(k, branch[k].x) for k in seq]
    q_cur = hist[-1][0]
    step_max = 0.05
    while q_cur != qs:
        step = qs - q_cur
        if abs(step) > step_max:
            step = math.copysign(step_max, step)
        for _ in range(12):
            q_new = q_cur + step if abs(step) < abs(qs - q_cur) else qs
            if len(hist) >= 2 and hist[-1][0] != hist[-2][0]:
                (qa, xa), (qb, xb) = hist[-2], hist[-1]
                guess = xb + (xb - xa) * (q_new - qb) / (qb - qa)
            else:
                guess = hist[-1][1]
            if not (0 < guess[0] < q_new and guess[1] > 0):
                guess = hist[-1][1].copy()
                guess[0] = min(guess[0], 0.99 * q_new)
            try:
                info = _sto_newton(guess, q_new, alpha, beta)
                qh_prev = hist[-1][1][1]
                # branch guard: a jump of q_hat by more than 50% within one small step means
                # Newton landed on another branch (the continued branch folds)
                if abs(info.x[1] - qh_prev) > 0.5 * qh_prev:
                    raise ConvergenceError("branch jump")
                break
            except ConvergenceError:
                step *= 0.5
        else:
            raise ConvergenceError("stochastic reference: the RS branch continued from small q_star "
                                   "could not be followed (fold or jump to another branch)",
                                   x=hist[-1][1], diagnostics={"q_star": q_cur, "alpha": alpha, "beta": beta})
        q_cur = q_new
        branch[q_cur] = info
        hist.append((q_cur, info.x))
    return branch[qs]


def _stochastic_reference(alpha, qs, beta):
    info = _sto_solution(alpha, qs, beta)
    ws = gauss_hermite(_N_STO)[1]
    qm, qh, A = map(float, info.x)
    mom = _site_moments(A, qh)[2]
    G, _ = _sto_pattern_term(qm, qs, beta)
    phi = (A - qh) * qs / 2 + qh * qm / 2 + float(ws @ mom[:, 0]) + alpha * G
    t_s = float(ws @ (mom[:, 3] * mom[:, 1]))
    M1 = float(ws @ mom[:, 4])
    return _StoRef(alpha, qs, beta, qm, qh, A, t_s, M1, phi, info.residual, info.iterations)


def _sto_energy_value(r):
    zs, ws = gauss_hermite(_N_STO)
    E = 0.0
    for z, w in zip(zs, ws):
        xs, wx = _x_nodes(z, r.q_m, r.q_star)
        c = _x_shift(xs, wx, z, r.q_m, r.q_star, r.beta)
        S0, S1 = _K.sto_err(xs, wx, z, r.q_m, r.q_star, r.beta, c, r.t_s, r.M1)
        E += w * S1 / S0
    return float(E)


def _check_sto(alpha, q_star, beta):
    alpha = float(check_range("alpha", alpha, 0.0, 5.0, lo_open=True))
    beta = float(check_range("beta", beta, 0.0, 1e3, lo_open=True))
    qs = check_range("q_star", q_star, 0.0, 1.0, lo_open=True, hi_open=True)
    return alpha, qs, beta


def stochastic_reference(alpha, q_star, beta=20.0):
    r"""Equilibrium (RS) theory of the stochastic perceptron, thesis Eq. 2.53 (corrected).

    Magnetizations ``m in [-1, 1]^N`` with ``sum m_i^2 = q_star N``, Gibbs weight
    ``exp(beta L(m))`` with the log-likelihood of thesis Eq. 2.49 *corrected*: the numerator is
    ``sigma sum_i m_i xi_i`` (the mean pre-activation, not ``w_i``), so
    ``L = sum_mu log H(-Delta_mu / sqrt(1 - q_star))``, ``Delta_mu = sigma_mu m.xi_mu/sqrt(N)``.
    RS order parameters: ``q_m`` (overlap of two magnetization replicas), ``q_hat`` and
    ``A = lambda + q_hat`` (``lambda`` enforces the spherical constraint), solving
    ``E_z<m^2> = q_star``, ``E_z<m>^2 = q_m``, ``q_hat = -2 alpha d/dq_m E_z log E_x H(u)^beta``
    where ``<.>`` is the site measure ``exp(-A m^2/2 + sqrt(q_hat) z m)`` on [-1, 1].
    ``q_star`` may be an array.  ``thermo`` holds the free entropy (per weight, Lebesgue
    measure on the box) and the auxiliary overlaps ``t_s = E_z[<sign m><m>]`` and
    ``M1 = E_z<|m|>`` used by :func:`stochastic_energy`.  Raises ConvergenceError where the
    continued RS branch is unphysical (free entropy above log 2).
    """
    alpha, qs, beta = _check_sto(alpha, q_star, beta)

    def one(q, guess=None):
        r = _stochastic_reference(alpha, float(q), beta)
        if r.free_entropy > math.log(2.0):
            raise ConvergenceError("stochastic_reference: the RS solution is unphysical here (free entropy "
                                   "exceeds log 2, the log-volume of the box [-1, 1]); RS fails at this q_star",
                                   diagnostics={"q_star": float(q), "free_entropy": r.free_entropy})
        return SaddlePoint("franz_parisi.stochastic_reference", {"alpha": alpha, "q_star": float(q), "beta": beta},
                           {"q_m": r.q_m, "q_hat": r.q_hat, "A": r.A, "t_s": r.t_s, "M1": r.M1},
                           {"free_entropy": r.free_entropy}, True, r.residual, r.iterations)

    from .saddle import vectorize_over
    return vectorize_over(one, qs, model="franz_parisi.stochastic_reference")


def stochastic_energy(alpha, q_star, beta=20.0):
    r"""Average training error of the binarized configuration ``sign(m)`` at equilibrium,
    thesis Eq. 2.54 (the quantity of Figs. 2.6 and 2.9), as a function of ``q_star``.

    ``E = E_z [ E_x[H(u)^beta H(((t_s/sqrt(q_m)) z + rho_b x)/sigma_b)] / E_x[H(u)^beta] ]`` with
    ``u = -(sqrt(q_m) z + sqrt(q_star - q_m) x)/sqrt(1 - q_star)``, ``rho_b = (M1 - t_s)/(q_star - q_m)``,
    ``sigma_b^2 = 1 - t_s^2/q_m - rho_b^2 (q_star - q_m)``: the binarized field
    ``sign(m).xi/sqrt(N)`` of a replica is Gaussian, correlated with its own pattern field
    through ``M1 = <|m|>`` and with the other replicas' through ``t_s``; the error is the
    probability that it is negative (labels absorbed in the patterns).
    Returns a SaddlePoint with ``energy`` (fraction of misclassified training patterns).
    ``q_star`` may be an array (sorted values are fastest: the RS branch is continued in q_star).
    Raises ConvergenceError where the continued RS branch becomes unphysical (free entropy above
    log 2; at alpha = 0.55, beta = 20 this happens between q_star = 0.80 and 0.85).
    """
    alpha, qs, beta = _check_sto(alpha, q_star, beta)

    def one(q, guess=None):
        r = _stochastic_reference(alpha, float(q), beta)
        sig2 = 1 - r.t_s ** 2 / r.q_m - ((r.M1 - r.t_s) / (r.q_star - r.q_m)) ** 2 * (r.q_star - r.q_m)
        if not sig2 > 0:
            raise ConvergenceError("stochastic_energy: binarized-field variance not positive",
                                   diagnostics={"q_star": float(q), "sigma_b^2": sig2})
        if r.free_entropy > math.log(2.0):
            raise ConvergenceError("stochastic_energy: the RS solution is unphysical here (free entropy "
                                   "exceeds log 2, the log-volume of the box [-1, 1]); RS fails at this q_star",
                                   diagnostics={"q_star": float(q), "free_entropy": r.free_entropy})
        E = _sto_energy_value(r)
        return SaddlePoint("franz_parisi.stochastic_energy", {"alpha": alpha, "q_star": float(q), "beta": beta},
                           {"q_m": r.q_m, "q_hat": r.q_hat, "A": r.A, "t_s": r.t_s, "M1": r.M1},
                           {"energy": E, "free_entropy": r.free_entropy}, True, r.residual, r.iterations,
                           extra={"sigma_b^2": sig2})

    from .saddle import vectorize_over
    return vectorize_over(one, qs, model="franz_parisi.stochastic_energy")


# =============================================================================== FP around sign(m)
_STFP_NZ = 40        # outer Gauss-Hermite order (reference's shared field z)
_STFP_LEVEL = 4      # tanh-sinh level of the reference-side rules (m on [-1,0],[0,1]; x piecewise)
_STFP_INNER = 4      # tanh-sinh level of the innermost piecewise rules (y, e) when a layer is sharp
_STFP_GH = 48        # Gauss-Hermite order of the innermost rules (y, e) when the integrand is smooth


@dataclass(frozen=True)
class _StfpQuad:
    nz: int = _STFP_NZ
    level: int = _STFP_LEVEL
    inner: int = _STFP_INNER
    n_gh: int = _STFP_GH
    zlevel: int = 2

    def finer(self):
        return _StfpQuad(2 * self.nz, self.level + 1, self.inner + 1, 2 * self.n_gh, self.zlevel + 1)


def _nodes1(b, level):
    """Vectorized ``_nodes([b], level)``: one breakpoint per entry of ``b`` (any shape);
    returns nodes and Gaussian weights of shape ``b.shape + (K,)``."""
    F = _FRAME
    b = np.clip(np.asarray(b, dtype=float), -F + 1e-9, F - 1e-9)[..., None]
    lz, lw, rz, rw = _frame_tails(level)
    x, xc, w = _ts_rule(level)
    L1, L2 = b + F, F - b
    z1 = np.where(x < 0.5, -F + L1 * x, b - L1 * xc)
    z2 = np.where(x < 0.5, b + L2 * x, F - L2 * xc)
    c = 1.0 / math.sqrt(2.0 * math.pi)
    w1 = L1 * w * np.exp(-0.5 * z1 * z1) * c
    w2 = L2 * w * np.exp(-0.5 * z2 * z2) * c
    sh = b.shape[:-1]
    zs = np.concatenate((np.broadcast_to(lz, sh + lz.shape), z1, z2, np.broadcast_to(rz, sh + rz.shape)), axis=-1)
    ws = np.concatenate((np.broadcast_to(lw, sh + lw.shape), w1, w2, np.broadcast_to(rw, sh + rw.shape)), axis=-1)
    return zs, ws


class _StfpRef:
    """The stochastic-perceptron reference (Eq. 2.53, RS) as fixed quadrature weights:
    P_S[z, m] (site measure of the magnetization) and P_E[z, x] (pattern-field measure)."""

    def __init__(self, alpha, q_star, beta, quad=_StfpQuad()):
        r = _stochastic_reference(alpha, q_star, beta)
        self.r, self.quad = r, quad
        self.alpha, self.q_star, self.beta = alpha, q_star, beta
        zs, wz = _stfp_zrule(r.q_hat, quad)
        # entropic: m in [-1, 0) u (0, 1]
        x, xc, w = _ts_rule(quad.level)
        m = np.concatenate((-x[::-1], x))
        wm = np.concatenate((w[::-1], w))
        lw = -r.A * m[None, :] ** 2 / 2 + math.sqrt(r.q_hat) * zs[:, None] * m[None, :]
        lw = lw - lw.max(axis=1, keepdims=True)
        P = wm[None, :] * np.exp(lw)
        self.norm_m = P.sum(axis=1)
        PS = wz[:, None] * P / self.norm_m[:, None]
        mS = np.broadcast_to(m[None, :], P.shape)
        self.PS, self.mS = _compress(PS, mS)
        self.zS = np.broadcast_to(zs[:, None], self.PS.shape).copy()
        self.sS = np.sign(self.mS)
        # energetic: x piecewise around the layer of H(u)^beta
        zs, wz = gauss_hermite(quad.nz)
        s = math.sqrt(q_star - r.q_m)
        bx = -math.sqrt(r.q_m) * zs / s
        xs, wx = _nodes1(bx, quad.level)
        u = -(math.sqrt(r.q_m) * zs[:, None] + s * xs) / math.sqrt(1 - q_star)
        lw = beta * log_H(u)
        lw = lw - lw.max(axis=1, keepdims=True)
        P = wx * np.exp(lw)
        self.PE, self.xE = _compress(wz[:, None] * P / P.sum(axis=1, keepdims=True), xs)
        self.zE = np.broadcast_to(zs[:, None], self.xE.shape).copy()


def _stfp_zrule(q_hat, quad):
    """Outer rule of the entropic term.  The site measure switches from m ~ -1 to m ~ +1 around
    z = 0 within a width ~ 1/(2 sqrt(q_hat)) (0.07 at q_hat = 50): a sharp layer that
    Gauss-Hermite does not resolve (errors 1e-3 in the gradient with 40 nodes), so piecewise
    tanh-sinh (level 2: 264 nodes, S changes by < 1e-7 at level 4) with breakpoints at 0,
    +-2/sqrt(q_hat), +-1.5, +-4 is used."""
    w = 2.0 / math.sqrt(q_hat)
    br = np.unique(np.array([-4.0, -1.5, -w, 0.0, w, 1.5, 4.0]))
    return piecewise_nodes(br, quad.zlevel)


def _compress(P, X):
    """Drop the nodes whose weight is below 1e-18 of the row's largest (they change no digit of
    any integral here: the integrands are at most O(1e2)); rows are padded with zero weights."""
    keep = P > 1e-18 * P.max(axis=1, keepdims=True)
    k = int(keep.sum(axis=1).max())
    order = np.argsort(~keep, axis=1, kind="stable")[:, :k]
    P2 = np.take_along_axis(P, order, axis=1)
    X2 = np.take_along_axis(np.asarray(X), order, axis=1)
    P2 = np.where(np.take_along_axis(keep, order, axis=1), P2, 0.0)
    return np.ascontiguousarray(P2), np.ascontiguousarray(X2)


def _inner_nodes(b, smooth, qd, fairly_smooth=False):
    """Innermost rule: Gauss-Hermite (``n_gh`` nodes) when the integrand's layer (at ``b``) is
    wider than ~1 in units of the Gaussian variable, ``2 n_gh`` nodes when wider than ~0.6
    (measured errors <= 5e-9), else piecewise tanh-sinh with a breakpoint at ``b``."""
    if smooth:
        return gauss_hermite(qd.n_gh)
    if fairly_smooth:
        return gauss_hermite(2 * qd.n_gh)
    return _nodes1(b, qd.inner)


_STFP_NAMES = ("q1", "t", "R", "q1_hat", "t_hat", "R_hat", "p_hat")


def _stfp_terms(x, ref):
    """G_S and its (q1_hat, t_hat, R_hat, p_hat) gradient; G_E and its (q1, t, R) gradient."""
    q1, t, R, qh1, th, Rh, ph = map(float, x)
    r, qd = ref.r, ref.quad
    sig = math.sqrt(qh1 - th * th / r.q_hat)
    c = th / math.sqrt(r.q_hat) * ref.zS + (Rh - th) * ref.mS + ph * ref.sS
    ys, wy = _inner_nodes(-c / sig, sig <= 1.0, qd, sig <= 1.5)
    sh = ref.PS.shape + (ys.shape[-1],)
    GS = _K.stfp_sum_S(ref.PS, ref.zS, ref.mS, ref.sS, np.broadcast_to(ys, sh), np.broadcast_to(wy, sh),
                       r.q_hat, qh1, th, Rh, ph)
    qm, qs = r.q_m, ref.q_star
    sv = math.sqrt(q1 - t * t / qm - (R - t) ** 2 / (qs - qm))
    c = t / math.sqrt(qm) * ref.zE + (R - t) / math.sqrt(qs - qm) * ref.xE
    es, we = _inner_nodes(-c / sv, sv <= 1.5 * math.sqrt(1 - q1), qd, sv <= 3.0 * math.sqrt(1 - q1))
    sh = ref.PE.shape + (es.shape[-1],)
    GE = _K.stfp_sum_E(ref.PE, ref.zE, ref.xE, np.broadcast_to(es, sh), np.broadcast_to(we, sh), qm, qs, q1, t, R)
    return GS, GE


def _stfp_grad(x, p, ref, free_p=False):
    """Gradient of S_FP = t_hat t - R_hat R - p_hat p + q1_hat (q1 - 1)/2 + G_S + alpha G_E
    in (q1, t, R, q1_hat, t_hat, R_hat, p_hat).  With ``free_p`` the p_hat component is
    replaced by p_hat itself (the unconstrained maximum, p_hat = 0)."""
    q1, t, R, qh1, th, Rh, ph = map(float, x)
    GS, GE = _stfp_terms(x, ref)
    a = ref.alpha
    g = np.array([qh1 / 2 + a * GE[1], th + a * GE[2], -Rh + a * GE[3],
                  (q1 - 1) / 2 + GS[1], t + GS[2], -R + GS[3], -p + GS[4]])
    if free_p:
        g[6] = ph
    S = th * t - Rh * R - ph * p + qh1 * (q1 - 1) / 2 + GS[0] + a * GE[0]
    return g, S, GS, GE


def _sym(flat, n):
    M = np.empty((n, n))
    k = 0
    for i in range(n):
        for j in range(i, n):
            M[i, j] = M[j, i] = flat[k]
            k += 1
    return M


def _stfp_hess(GS, GE, alpha, free_p=False):
    """Hessian of S_FP in (q1, t, R, q1_hat, t_hat, R_hat, p_hat) (sympy second derivatives)."""
    J = np.zeros((7, 7))
    J[:3, :3] = alpha * _sym(GE[4:10], 3)
    J[3:, 3:] = _sym(GS[5:15], 4)
    for i, v in ((0, 0.5), (1, 1.0), (2, -1.0)):
        J[i, 3 + i] = J[3 + i, i] = v
    if free_p:
        J[6, :] = 0.0
        J[6, 6] = 1.0
    return J


def _stfp_margins(x, ref):
    q1, t, R, qh1, th, Rh, ph = map(float, x)
    qm, qs = ref.r.q_m, ref.q_star
    return {"q1": q1, "1-q1": 1 - q1,
            "s_v^2/q1": (q1 - t * t / qm - (R - t) ** 2 / (qs - qm)) / q1,
            "sigma^2/q1_hat": (qh1 - th * th / ref.r.q_hat) / qh1 if qh1 > 0 else -1.0}


def _stfp_in_domain(x, ref):
    return all(v > 0 for v in _stfp_margins(x, ref).values())


def _stfp_newton(ref, x0, p, free_p=False, tol=1e-9):
    cache = {}

    def F(v):
        if not _stfp_in_domain(v, ref):
            return np.full(7, 1e6)
        g, S, GS, GE = _stfp_grad(v, p, ref, free_p)
        cache[v.tobytes()] = _stfp_hess(GS, GE, ref.alpha, free_p)
        return g

    def jac(v):
        key = v.tobytes()
        if key not in cache:
            F(v)
        return cache[key]
    return newton(F, x0, jac, tol=tol, xtol=1e-10, maxiter=40, in_domain=lambda v: _stfp_in_domain(v, ref))


_STFP_CACHE: dict = {}


def _stfp_setup(alpha, q_star, beta, quad=_StfpQuad()):
    """Reference weights and the unconstrained FP solution (p_hat = 0): there the constrained
    measure is the uniform measure on Ising solutions, so q1 = q0, q1_hat = q_hat0 of the
    Gardner solution, R = t, R_hat = t_hat, and S_FP = S_eq(binary); (t, t_hat) solve
    t = E[<m> tanh h], t_hat = -alpha dG_E/dt, then all 7 equations are polished."""
    key = (alpha, q_star, beta, quad)
    if key in _STFP_CACHE:
        return _STFP_CACHE[key]
    ref = _StfpRef(alpha, q_star, beta, quad)
    if ref.r.free_entropy > math.log(2.0):
        raise ConvergenceError("stochastic_perceptron: the RS stochastic reference is unphysical at this "
                               "q_star (free entropy exceeds log 2, the log-volume of [-1, 1]); RS fails",
                               diagnostics={"q_star": q_star, "free_entropy": ref.r.free_entropy})
    eq = equilibrium_binary(alpha)
    q0, qh0 = eq.order_params["q"], eq.order_params["q_hat"]

    def full(v):
        return np.array([q0, v[0], v[0], qh0, v[1], v[1], 0.0])

    def F2(v):
        xx = full(v)
        if not _stfp_in_domain(xx, ref):
            return np.full(2, 1e6)
        g = _stfp_grad(xx, 0.0, ref, True)[0]
        return np.array([g[1], g[4]])

    t0 = 0.5 * math.sqrt(q0 * ref.r.q_m)
    x2 = newton(F2, [t0, 0.3], tol=1e-10, xtol=1e-10, maxiter=60,
                in_domain=lambda v: _stfp_in_domain(full(v), ref)).x
    info = _stfp_newton(ref, full(x2), 0.0, free_p=True, tol=1e-10)
    g, S, GS, GE = _stfp_grad(info.x, 0.0, ref, True)
    out = (ref, info.x.copy(), float(GS[4]), float(S), eq.thermo["entropy"])
    _STFP_CACHE[key] = out
    return out


def _stfp_march(ref, x_typ, p_typ, targets, max_step=0.05):
    """Continuation in p from the unconstrained point (secant predictor, Newton corrector,
    step halving)."""
    sols = {}
    for side in (1.0, -1.0):
        tg = sorted([p for p in targets if (p - p_typ) * side > 0], key=lambda p: abs(p - p_typ))
        hist = [(p_typ, x_typ)]
        p_cur = p_typ
        for p_goal in tg:
            while p_cur != p_goal:
                step = p_goal - p_cur
                if abs(step) > max_step:
                    step = math.copysign(max_step, step)
                for _ in range(10):
                    p_new = p_cur + step if abs(step) < abs(p_goal - p_cur) else p_goal
                    if len(hist) >= 2:
                        (pa, xa), (pb, xb) = hist[-2], hist[-1]
                        guess = xb + (xb - xa) * (p_new - pb) / (pb - pa)
                        if not _stfp_in_domain(guess, ref):
                            guess = xb.copy()
                    else:
                        guess = hist[-1][1].copy()
                    try:
                        info = _stfp_newton(ref, guess, p_new)
                        break
                    except ConvergenceError:
                        step *= 0.5
                else:
                    raise ConvergenceError("stochastic_perceptron: the FP branch could not be continued",
                                           x=hist[-1][1], diagnostics={"p": p_cur, "d": (1 - p_cur) / 2})
                p_cur = p_new
                hist.append((p_cur, info.x.copy()))
                if len(hist) > 2:
                    hist.pop(0)
            sols[p_goal] = info
    return sols


def stochastic_perceptron(alpha, d, q_star, beta=20.0):
    r"""RS Franz--Parisi entropy of Ising solutions around ``sign(m)``, the binarized
    configuration of the stochastic perceptron at equilibrium (thesis Eqs. 2.55--2.56 with the
    reference measure of Eq. 2.53, corrected as in :func:`stochastic_reference`; the curves
    labelled "stochastic" in thesis Fig. 2.7).  Derived in docs/franz_parisi.md.

    ``S_FP(d) = lim (1/N) E_xi < log #{W in {-1,1}^N solving all patterns,
    W.sign(m) = N(1 - 2d)} >_m`` with ``m`` drawn from the Gibbs measure
    ``exp(beta L(m))`` on ``[-1,1]^N`` with ``|m|^2 = q_star N``.  RS, stationary in
    ``(q1, t, R, q1_hat, t_hat, R_hat, p_hat)`` (``q1``: overlap of two constrained replicas,
    ``R = W.m/N`` own reference, ``t = W.m'/N`` another reference replica):

    ``S_FP = t_hat t - R_hat R - p_hat p + q1_hat (q1 - 1)/2
    + E_z <E_y log 2cosh((t_hat/sqrt(q_hat)) z + (R_hat - t_hat) m + p_hat sign(m)
    + sqrt(q1_hat - t_hat^2/q_hat) y)>_{m|z}
    + alpha E_z <E_e log H(-(t z/sqrt(q_m) + (R - t) x/sqrt(q_star - q_m) + s_v e)/sqrt(1 - q1))>_{x|z}``

    with ``<.>_{m|z}`` the reference site measure ``exp(-A m^2/2 + sqrt(q_hat) z m)`` on
    [-1, 1], ``<.>_{x|z}`` the reference pattern measure ``H(u)^beta Dx``,
    ``s_v^2 = q1 - t^2/q_m - (R - t)^2/(q_star - q_m)``.

    Parameters
    ----------
    alpha : load in (0, 0.83) (the Ising constrained system must have solutions)
    d : float or array in (0, 0.5], Hamming distance from sign(m)
    q_star : in (0, 1); the RS reference is physical only up to q_star ~ 0.8 at alpha = 0.55,
        beta = 20 (ConvergenceError beyond; see docs)
    beta : inverse temperature of the reference, > 0

    Returns
    -------
    SaddlePoint per d (stacked when d is an array): ``entropy`` (counts configurations, so the
    alpha = 0 curve is the binary entropy of d), ``entropy_equilibrium`` (the Ising Gardner
    entropy, which S_FP attains at ``d_typical``), ``d_typical``, ``dS_dd = 2 p_hat``; order
    parameters above and the reference's ``q_m, q_hat, A``; ``hessian_eigenvalues`` of the
    finite-difference Jacobian of the stationarity equations, ``extra['margins']``.
    """
    alpha = float(check_range("alpha", alpha, 0.0, 0.83, lo_open=True))
    beta = float(check_range("beta", beta, 0.0, 1e3, lo_open=True))
    q_star = float(check_range("q_star", q_star, 0.0, 1.0, lo_open=True, hi_open=True))
    check_range("d", d, 0.0, 0.5, lo_open=True)
    d_arr = np.asarray(d, dtype=float)
    flat = d_arr.ravel()
    ref, x_typ, p_typ, S_typ, S_eq = _stfp_setup(alpha, q_star, beta)
    d_typ = (1 - p_typ) / 2
    p_all = [float(1 - 2 * dd) for dd in flat]
    sols = _stfp_march(ref, x_typ, p_typ, [p for p in p_all if p != p_typ])
    params_ref = {"q_m": ref.r.q_m, "q_hat": ref.r.q_hat, "A": ref.r.A}
    res = []
    for dd, pp in zip(flat, p_all):
        if pp == p_typ:
            x, resid, its = x_typ, 0.0, 0
        else:
            info = sols[pp]
            x, resid, its = info.x, info.residual, info.iterations
        margins = _stfp_margins(x, ref)
        bad = {k: v for k, v in margins.items() if not v > 1e-9}
        if bad:
            raise ConvergenceError("stochastic_perceptron: solution on the boundary of the RS domain", x=x,
                                   diagnostics={"d": float(dd), **bad})
        g, S, GS, GE = _stfp_grad(x, pp, ref)
        if not np.isfinite(S):
            raise ConvergenceError("stochastic_perceptron: non-finite entropy", x=x, diagnostics={"d": float(dd)})
        eig = np.linalg.eigvalsh(_stfp_hess(GS, GE, alpha))
        order = dict(zip(_STFP_NAMES, map(float, x)))
        order.update(params_ref)
        res.append(SaddlePoint("franz_parisi.stochastic_perceptron",
                               {"alpha": alpha, "d": float(dd), "q_star": q_star, "beta": beta}, order,
                               {"entropy": float(S), "entropy_equilibrium": float(S_eq), "d_typical": float(d_typ),
                                "dS_dd": float(2 * x[6])},
                               True, float(max(resid, np.max(np.abs(g)))), int(its),
                               eig, None, None, {"margins": margins}))
    if d_arr.ndim == 0:
        return res[0]
    return stack(res, d_arr.shape, model="franz_parisi.stochastic_perceptron")


def _stfp_jac(x, p, ref, h=1e-6):
    """Central finite-difference Jacobian of the stationarity equations (for the report)."""
    n = len(x)
    J = np.empty((n, n))
    for j in range(n):
        e = np.zeros(n)
        e[j] = h * max(1.0, abs(x[j]))
        J[:, j] = (_stfp_grad(x + e, p, ref)[0] - _stfp_grad(x - e, p, ref)[0]) / (2 * e[j])
    return J
