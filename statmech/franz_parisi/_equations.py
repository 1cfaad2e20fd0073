"""The equations of the Franz--Parisi package, each written once in sympy.

Four kernel namespaces (:func:`statmech.symbolic.kernels`), one per theory; gradients and
Hessians come from :func:`sympy.diff`.  Notation and derivations: ``docs/franz_parisi.md``.

``_REF``
    The reference systems: Gardner RS of the Ising and spherical perceptron
    (``ref_S``, ``ref_E``, ``sph_S``), used by :mod:`.reference`.
``_FP``
    The FP functional around a typical reference: entropic term of Ising weights
    (``fp_S``), energetic term of both weight types (``fp_E``), entropic term of spherical
    weights (``sph_fp_S``), used by :mod:`.binary`, :mod:`.spherical` and :mod:`._common`;
    compiled together with the outer quadrature loops of :mod:`._fp_sums` (``fp_sum_S``,
    ``fp_sum_E``).
``_STO``
    The stochastic-perceptron reference, thesis Eqs. 2.49, 2.53, 2.54 corrected
    (``sto_m``, ``sto_x``, ``sto_err``), used by :mod:`.stochastic`; compiled together with the
    outer loop of :mod:`._sto_sums` (``sto_sum_x``).
``_STFP``
    The FP functional around ``sign(m)`` of the stochastic perceptron, thesis Eqs. 2.55--2.56
    (``stfp_S``, ``stfp_E``), compiled together with the hand-written quadrature sums of
    :mod:`._sums` (``stfp_sum_S``, ``stfp_sum_E``); used by :mod:`.stochastic_fp`.

Where an integrand is a function of a field affine in the innermost Gaussian variable, the
quadrature loops use it in moment form (``*_uv``, ``*_mom``, ``*_row``: six moments of the inner
field per outer node and the chain rule, :func:`_affine_chain`); the per-node kernels
(``fp_S``, ``stfp_S``, ``stfp_E``) remain the definition they are tested against.  ``fp_E`` and
``sph_fp_S`` also return the ``p``-derivative of their gradients: the exact tangent of the FP
branch in ``p`` (the predictor of the continuation in :mod:`._common`).
"""
from __future__ import annotations

import sympy as sp

from ..symbolic import H, Expectation, Log2Cosh, LogH, Scalar, kernels


def _d2_log_H(arg):
    """d^2/du^2 log H(u) at ``u = arg`` (enters the replicon (AT) eigenvalues squared)."""
    u = sp.Symbol("u", real=True)
    return sp.diff(LogH(u), u, 2).subs(u, arg)


def _grad_hess(f, xs):
    """Gradient of ``f`` in ``xs`` and the upper triangle of its Hessian, row by row."""
    g = [sp.diff(f, v) for v in xs]
    n = len(xs)
    return g, [sp.diff(g[i], xs[j]) for i in range(n) for j in range(i, n)]


# ------------------------------------------------------------------ Gaussian-smoothed affine fields
# Several integrands are a function F of a field affine in the innermost Gaussian variable y,
# F(u + v y), with u, v functions of the order parameters (and of the outer nodes).  Their
# E_y, gradients and Hessians need only six moments per outer node,
#   Phi = E_y F,  Phi_u = E_y F',  Phi_v = E_y y F',  Phi_uu = E_y F'',  Phi_uv = E_y y F'',
#   Phi_vv = E_y y^2 F''   (F evaluated at u + v y),
# (:func:`_affine_moments`, one transcendental evaluation per node instead of the whole
# gradient and Hessian per node) and the chain rule at the outer node (:func:`_affine_chain`).
_MOM = sp.symbols("M0 M_u M_v M_uu M_uv M_vv", real=True)


def _affine_moments(F, extra=()):
    """``Expectation`` spec of the six moments of ``F(u + v y)``, then ``E_y e(u + v y)`` for each
    function ``e`` in ``extra``; arguments ``(u, v)``."""
    y, u, v = sp.symbols("y u v", real=True)
    f = F(u + v * y)
    fu, fv = sp.diff(f, u), sp.diff(f, v)
    return Expectation(y, (u, v), (f, fu, fv, sp.diff(fu, u), sp.diff(fu, v), sp.diff(fv, v),
                                   *(e(u + v * y) for e in extra)))


def _affine_chain(u, v, xs):
    """``E_y F(u + v y)`` (the moment symbol), its gradient in ``xs`` and the upper triangle of
    its Hessian, in terms of the moments ``_MOM`` (chain rule through ``u(xs)``, ``v(xs)``)."""
    M0, Mu, Mv, Muu, Muv, Mvv = _MOM
    du, dv = [sp.diff(u, a) for a in xs], [sp.diff(v, a) for a in xs]
    g = [Mu * du[i] + Mv * dv[i] for i in range(len(xs))]
    H = [Muu * du[i] * du[j] + Muv * (du[i] * dv[j] + du[j] * dv[i]) + Mvv * dv[i] * dv[j]
         + Mu * sp.diff(du[i], xs[j]) + Mv * sp.diff(dv[i], xs[j])
         for i in range(len(xs)) for j in range(i, len(xs))]
    return [M0] + g + H


@kernels
def _REF():
    """Reference systems: Gardner RS, Ising and spherical weights (Gardner & Derrida 1988)."""
    z = sp.Symbol("z", real=True)
    q, qh, kappa = sp.symbols("q q_hat kappa", real=True)
    # Ising entropic term E_z log 2cosh(sqrt(q_hat) z) (thesis Eq. 2.33 family)
    Sref = Log2Cosh(sp.sqrt(qh) * z)
    Sref_d = sp.diff(Sref, qh)
    # energetic term E_z log H((kappa - sqrt(q) z)/sqrt(1-q))
    uref = (kappa - sp.sqrt(q) * z) / sp.sqrt(1 - q)
    Eref = LogH(uref)
    Eref_d = sp.diff(Eref, q)
    # spherical entropic term: 1/2 log(1-q) + q/(2(1-q))
    Ssph = sp.log(1 - q) / 2 + q / (2 * (1 - q))
    return {
        "ref_S": Expectation(z, (qh,), (Sref, Sref_d, sp.diff(Sref_d, qh),
                                        (1 - sp.tanh(sp.sqrt(qh) * z) ** 2) ** 2)),
        "ref_E": Expectation(z, (q, kappa), (Eref, Eref_d, sp.diff(Eref_d, q), _d2_log_H(uref) ** 2)),
        "sph_S": Scalar((q,), (Ssph, sp.diff(Ssph, q), sp.diff(Ssph, q, 2))),
    }


@kernels(include=("statmech.franz_parisi._rules", "statmech.franz_parisi._fp_sums"))
def _FP():
    """FP functional around a typical reference (binary and spherical weights)."""
    z, y, e = sp.symbols("z y e", real=True)
    kappa = sp.Symbol("kappa", real=True)
    q0, qh0, q1, qh1, t, th, ph, p = sp.symbols("q0 q_hat0 q1 q_hat1 t t_hat p_hat p", real=True)

    # ---- entropic term, Ising weights.  Shared field sqrt(qh0) z of the reference, the
    # reference spin is taken +1 (weight (1 + tanh(sqrt(qh0) z)), symmetry W~ -> -W~, z -> -z),
    # local field of a constrained spin:
    #   h = (t_hat/sqrt(qh0)) z + (p_hat - t_hat) + sqrt(q_hat1 - t_hat^2/qh0) y
    uS, vS = th / sp.sqrt(qh0) * z + (ph - th), sp.sqrt(qh1 - th ** 2 / qh0)
    h = uS + vS * y
    wS = 1 + sp.tanh(sp.sqrt(qh0) * z)
    fS = wS * Log2Cosh(h)
    gS, HS = _grad_hess(fS, (qh1, th, ph))
    repS = wS * (1 - sp.tanh(h) ** 2) ** 2
    # the same per outer node z from the moments of log 2cosh(uS + vS y) (fast path, _fp_sums)
    Mrep, M1 = sp.symbols("M_rep M_1", real=True)
    rowS = [wS * c for c in _affine_chain(uS, vS, (qh1, th, ph))] + [wS * Mrep, wS * M1]

    # ---- energetic term (Ising and spherical weights alike).  Given the shared field z:
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
    gE, HE = _grad_hess(fE, XE)
    gEp = sp.diff(fE, p)
    repE = wE * _d2_log_H(b) ** 2

    # ---- entropic term, spherical weights (Schur complement of the overlap matrix)
    C = (p ** 2 - t ** 2) / (1 - q0) - q0 * (p - t) ** 2 / (1 - q0) ** 2
    sS = sp.log(1 - q1) / 2 + (q1 - C) / (2 * (1 - q1))
    gsS, HsS = _grad_hess(sS, XE)
    return {
        "fp_S": Expectation(y, (z, qh0, qh1, th, ph), (fS, *gS, *HS, repS, wS)),
        "fp_S_uv": Scalar((z, qh0, qh1, th, ph), (uS, vS)),
        "fp_S_row": Scalar((z, qh0, qh1, th, ph, *_MOM, Mrep, M1), rowS),
        "fp_S_mom": _affine_moments(Log2Cosh, (lambda x: (1 - sp.tanh(x) ** 2) ** 2, lambda x: sp.Integer(1))),
        "fp_E": Expectation(e, (z, q0, t, p, q1, kappa, la0),
                            (fE, *gE, *HE, gEp, repE, wE, *(sp.diff(g, p) for g in gE))),
        "sph_fp_S": Scalar((q0, t, p, q1), (sS, *gsS, *HsS, sp.diff(sS, p), *(sp.diff(g, p) for g in gsS))),
    }


@kernels(include=("statmech.franz_parisi._rules", "statmech.franz_parisi._sto_sums"))
def _STO():
    """Stochastic-perceptron reference (thesis Eqs. 2.49, 2.53, 2.54, corrected)."""
    z, m, x = sp.symbols("z m x", real=True)
    # site measure of a magnetization m in [-1, 1]: exp(-A m^2/2 + h m - c), h = sqrt(q_hat) z
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
    Perr = H(((ts / sp.sqrt(qm)) * z + rho_b * x) / sig_b)
    return {
        "sto_m": Expectation(m, (A, hm, c), (Wm, Wm * m, Wm * m ** 2)),
        "sto_x": Expectation(x, (z, qm, qs, beta, c), (Wx, sp.diff(Wx, qm))),
        "sto_err": Expectation(x, (z, qm, qs, beta, c, ts, M1), (Wx, Wx * Perr)),
    }


@kernels(include=("statmech.franz_parisi._rules", "statmech.franz_parisi._sums"))
def _STFP():
    """FP entropy around sign(m) of the stochastic perceptron (thesis Eqs. 2.55-2.56 with the
    reference of Eq. 2.53; derived in docs/franz_parisi.md)."""
    z, m, x, y, e = sp.symbols("z m x y e", real=True)
    qh, q1, qh1, t, th, ph = sp.symbols("q_hat q1 q_hat1 t t_hat p_hat", real=True)
    qm, qs = sp.symbols("q_m q_star", real=True)
    Rh, Rs, sg = sp.symbols("R_hat R s_g", real=True)
    # entropic integrand given the reference's shared field z, its magnetization m (sign sg)
    # and the Gaussian y:
    #   h = (t_hat/sqrt(q_hat)) z + (R_hat - t_hat) m + p_hat sg + sqrt(q_hat1 - t_hat^2/q_hat) y
    uST, vST = th / sp.sqrt(qh) * z + (Rh - th) * m + ph * sg, sp.sqrt(qh1 - th ** 2 / qh)
    fST = Log2Cosh(uST + vST * y)
    gST, hST = _grad_hess(fST, (qh1, th, Rh, ph))
    # energetic integrand given the reference fields (z, x): constrained field
    #   v = (t/sqrt(q_m)) z + (R - t)/sqrt(q_star - q_m) x + s_v e + sqrt(1 - q1) w,
    #   s_v^2 = q1 - t^2/q_m - (R - t)^2/(q_star - q_m);  log P(v > 0 | z, x, e) = log H(b)
    svst = sp.sqrt(q1 - t ** 2 / qm - (Rs - t) ** 2 / (qs - qm))
    uET = -(t / sp.sqrt(qm) * z + (Rs - t) / sp.sqrt(qs - qm) * x) / sp.sqrt(1 - q1)
    vET = -svst / sp.sqrt(1 - q1)
    fET = LogH(uET + vET * e)
    gET, hET = _grad_hess(fET, (q1, t, Rs))
    # stfp_S, stfp_E: the integrands per node (the definition); the sums of _sums use the same
    # per reference node (z, m) or (z, x) from the moments over y (or e) of the affine field
    return {"stfp_S": Scalar((z, m, sg, y, qh, qh1, th, Rh, ph), [fST] + gST + hST),
            "stfp_E": Scalar((z, x, e, qm, qs, q1, t, Rs), [fET] + gET + hET),
            "stfp_S_uv": Scalar((z, m, sg, qh, qh1, th, Rh, ph), (uST, vST)),
            "stfp_S_row": Scalar((qh, qh1, th, Rh, ph, z, m, sg, *_MOM), _affine_chain(uST, vST, (qh1, th, Rh, ph))),
            "l2c_mom": _affine_moments(Log2Cosh),
            "stfp_E_uv": Scalar((z, x, qm, qs, q1, t, Rs), (uET, vET)),
            "stfp_E_row": Scalar((qm, qs, q1, t, Rs, z, x, *_MOM), _affine_chain(uET, vET, (q1, t, Rs))),
            "logH_mom": _affine_moments(LogH)}


def _coef_spec(args, coefs, theta):
    """``Scalar`` of every coefficient in ``coefs`` with its gradient and Hessian (upper triangle)
    in ``theta``: ``[c_0, grad c_0, hess c_0, c_1, ...]``."""
    out = []
    for c in coefs:
        g, Hs = _grad_hess(c, theta)
        out += [c] + g + Hs
    return Scalar(args, out)


@kernels(include=("statmech.franz_parisi._rules", "statmech.franz_parisi._sums1"))
def _STFP1():
    """FP entropy around sign(m) on a 1RSB stochastic reference (docs/franz_parisi.md, "FP on a
    1RSB reference").  Both terms are sums of ``E_y F(u + v y)`` over reference nodes, with ``u``
    linear in the node coordinates; the coefficients of that linear form (and ``v``) are the
    functions of the order parameters below, written once here with their first and second
    derivatives.  ``F`` is ``log 2cosh`` (entropic) or ``log H`` (energetic); its first six
    derivatives build the tables of ``D_k(u) = E_y F^(k)(u + v y)`` of :mod:`._sums1`."""
    w = sp.Symbol("w", real=True)
    derivs = {}
    for name, F in (("l2c_der", Log2Cosh(w)), ("logH_der", LogH(w))):
        fs = [F]
        for _ in range(6):
            fs.append(sp.diff(fs[-1], w))
        derivs[name] = Scalar((w,), fs)
    qh0, dqh, Qh, th0, th1, Rh, ph, th = sp.symbols("q_hat0 dq_hat Q_hat t_hat0 t_hat1 R_hat p_hat t_hat", real=True)
    q0, dq, ds, ds0, Q, t0, t1, R, t = sp.symbols("q0 dq ds ds0 Q t0 t1 R t", real=True)
    # entropic: u = d0 z0 + d1 z1 + a m + p_hat sign(m), v = sigma (coordinates (z0, z1, m, sign m))
    d0, d1 = th0 / sp.sqrt(qh0), (th1 - th0) / sp.sqrt(dqh)
    coefS1 = (d0, d1, Rh - th1, ph, sp.sqrt(Qh - d0 ** 2 - d1 ** 2))
    coefS0 = (th / sp.sqrt(qh0), sp.Integer(0), Rh - th, ph, sp.sqrt(Qh - th ** 2 / qh0))
    # energetic: u = e0 z0 + e1 z1 + e2 x, v = e_v (coordinates (z0, z1, x)); the constrained field
    # is c0 z0 + c1 z1 + c2 x + s_v e + sqrt(1 - Q) w and log P(field > 0) = log H(-(...)/sqrt(1 - Q))
    c0, c1, c2 = t0 / sp.sqrt(q0), (t1 - t0) / sp.sqrt(dq), (R - t1) / sp.sqrt(ds)
    sQ = sp.sqrt(1 - Q)
    coefE1 = (-c0 / sQ, -c1 / sQ, -c2 / sQ, -sp.sqrt(Q - c0 ** 2 - c1 ** 2 - c2 ** 2) / sQ)
    cr0, cr2 = t / sp.sqrt(q0), (R - t) / sp.sqrt(ds0)
    coefE0 = (-cr0 / sQ, sp.Integer(0), -cr2 / sQ, -sp.sqrt(Q - cr0 ** 2 - cr2 ** 2) / sQ)
    return {**derivs,
            "coefS1": _coef_spec((qh0, dqh, Qh, th0, th1, Rh, ph), coefS1, (Qh, th0, th1, Rh, ph)),
            "coefS0": _coef_spec((qh0, Qh, th, Rh, ph), coefS0, (Qh, th, Rh, ph)),
            "coefE1": _coef_spec((q0, dq, ds, Q, t0, t1, R), coefE1, (Q, t0, t1, R)),
            "coefE0": _coef_spec((q0, ds0, Q, t, R), coefE0, (Q, t, R))}
