"""The generic chain rules of the replica averages, written once in sympy.

Every channel or prior average of the GLM theories is ``E_xi[ I(xi; theta) ]`` with an
integrand built from two primitives of the model -- the smoothed channel ``Z(mu, v)`` and an
envelope ``g(a, V)`` (ERM), or ``log Z_out`` (Gibbs, Bayes) -- composed with simple functions of
the order parameters ``theta``.  The model supplies the primitives and their partial derivatives
(closed forms from its own sympy expressions, or a prox); the functions here give the value,
gradient and Hessian of the integrand in ``theta`` from them, by ``sympy.diff`` of the explicit
compositions.  The result is a dict of :class:`statmech.symbolic.Scalar` specs, compiled into
every model's kernel module (:mod:`statmech.glm._codegen`).

Notation of the outputs: ``(I, I_1, I_2, I_3, I_11, I_12, I_13, I_22, I_23, I_33)``.

Each integrand (and each of its derivatives) is a polynomial in the node quantities (``xi``, the
primitives, the sign ``s`` with ``s^2 = 1``) whose coefficients depend only on ``theta``.  So each
assembly ``A`` is split by :func:`_split` into ``A_mono`` -- the distinct monomials at a node,
summed over the rule -- and ``A_comb`` -- the ten outputs from those sums, evaluated once per
average: no power of ``q`` is computed at a node.
"""
from __future__ import annotations

from functools import lru_cache

import sympy as sp

from ..symbolic import Scalar

__all__ = ["assembly_specs"]


def _d(F, prims, inner, thetas):
    """Total first and second derivatives of F(inner...) in thetas, F's partials given by ``prims``.

    ``prims``: dict with keys (), (i,), (i, j) (i <= j, indices into ``inner``) -> sympy symbol.
    Returns (value, grads[list], hess[dict (a, b)])."""
    n = len(inner)
    d1 = [[sp.diff(inner[i], t) for t in thetas] for i in range(n)]
    val = prims[()]
    grads = []
    for a in range(len(thetas)):
        grads.append(sum(prims[(i,)] * d1[i][a] for i in range(n)))
    hess = {}
    for a in range(len(thetas)):
        for b in range(a, len(thetas)):
            e = 0
            for i in range(n):
                e += prims[(i,)] * sp.diff(inner[i], thetas[a], thetas[b])
                for j in range(n):
                    key = (min(i, j), max(i, j))
                    e += prims[key] * d1[i][a] * d1[j][b]
            hess[(a, b)] = e
    return val, grads, hess


def _prims(prefix):
    names = {(): "0", (0,): "1", (1,): "2", (0, 0): "11", (0, 1): "12", (1, 1): "22"}
    return {k: sp.Symbol(f"{prefix}{v}", real=True) for k, v in names.items()}


def _product(A, B, nth):
    """(value, grads, hess) of the product of two (value, grads, hess) triples."""
    va, ga, ha = A
    vb, gb, hb = B
    val = va * vb
    grads = [ga[i] * vb + va * gb[i] for i in range(nth)]
    hess = {}
    for a in range(nth):
        for b in range(a, nth):
            hess[(a, b)] = ha[(a, b)] * vb + ga[a] * gb[b] + ga[b] * gb[a] + va * hb[(a, b)]
    return val, grads, hess


def _flat(t, nth=3):
    val, grads, hess = t
    return (val, *grads, *[hess[(a, b)] for a in range(nth) for b in range(a, nth)])


def _split(name, node, theta, outputs, specs, sign=None):
    """Add ``name_mono`` (node -> monomials) and ``name_comb`` (theta, S_0.. -> outputs) to specs;
    returns the number of monomials."""
    monos = []
    combos = []
    for e in outputs:
        p = sp.Poly(sp.expand(e), *node)
        acc = {}
        for mon, coeff in p.terms():
            mon = list(mon)
            if sign is not None:
                mon[node.index(sign)] %= 2
            mon = tuple(mon)
            acc[mon] = acc.get(mon, 0) + coeff
        combos.append(acc)
        for mon in acc:
            if mon not in monos:
                monos.append(mon)
    S = sp.symbols(f"S0:{len(monos)}", real=True)
    mono_exprs = tuple(sp.Mul(*[v ** k for v, k in zip(node, mon)]) for mon in monos)
    outs = tuple(sum(c * S[monos.index(mon)] for mon, c in acc.items()) for acc in combos)
    specs[f"{name}_mono"] = Scalar(tuple(node), mono_exprs)
    specs[f"{name}_comb"] = Scalar((*theta, *S), outs)
    return len(monos)


@lru_cache(maxsize=1)
def assembly_specs():
    """The assembly kernels (dict name -> Scalar), built once per process."""
    xi, m, q, V, rho, s, dl = sp.symbols("xi m q V rho s Delta", real=True)
    mh, qh, Vh, mu0, var0 = sp.symbols("mh qh Vh mu0 var0", real=True)
    Zp = _prims("Z")
    gp = _prims("g")
    specs = {}

    # ---- ERM, binary labels: I = Z(m xi/sqrt q, rho - m^2/q) g(s sqrt(q) xi, V), theta = (m, q, V)
    th = (m, q, V)
    Zt = _d(None, Zp, (m * xi / sp.sqrt(q), rho - m ** 2 / q), th)
    gt = _d(None, gp, (s * sp.sqrt(q) * xi, V), th)
    specs["asm_cls"] = Scalar((xi, m, q, V, rho, s, *Zp.values(), *gp.values()), _flat(_product(Zt, gt, 3)))
    counts = {}
    counts["cls"] = _split("cls", (xi, s, *Zp.values(), *gp.values()), (m, q, V, rho),
                           specs["asm_cls"].exprs, specs, sign=s)
    # ---- ERM, real labels (residual losses): I = g(sqrt(rho + Delta - 2 m + q) xi, V)
    gr = _d(None, gp, (sp.sqrt(rho + dl - 2 * m + q) * xi, V), th)
    specs["asm_reg"] = Scalar((xi, m, q, V, rho, dl, *gp.values()), _flat(gr))
    counts["reg"] = _split("reg", (xi, *gp.values()), (m, q, V, rho, dl), specs["asm_reg"].exprs, specs)
    # ---- ERM, penalty side: I = phi(mh mu0 + sqrt(mh^2 var0 + qh) xi, Vh), theta = (mh, qh, Vh)
    php = _prims("f")
    ph = _d(None, php, (mh * mu0 + sp.sqrt(mh ** 2 * var0 + qh) * xi, Vh), (mh, qh, Vh))
    specs["asm_pen"] = Scalar((xi, mh, qh, Vh, mu0, var0, *php.values()), _flat(ph))
    counts["pen"] = _split("pen", (xi, *php.values()), (mh, qh, Vh, mu0, var0), specs["asm_pen"].exprs, specs)
    # ---- Gibbs, binary labels: I = Z(m xi/sqrt q, rho - m^2/q) L(s sqrt(q) xi, 1 - q), theta = (m, q)
    Lp = _prims("L")
    th2 = (m, q)
    Zt2 = _d(None, Zp, (m * xi / sp.sqrt(q), rho - m ** 2 / q), th2)
    Lt2 = _d(None, Lp, (s * sp.sqrt(q) * xi, 1 - q), th2)
    specs["asm_gib"] = Scalar((xi, m, q, rho, s, *Zp.values(), *Lp.values()), _flat(_product(Zt2, Lt2, 2), 2))
    counts["gib"] = _split("gib", (xi, s, *Zp.values(), *Lp.values()), (m, q, rho), specs["asm_gib"].exprs,
                           specs, sign=s)
    # ---- ERM, Ising student: E|b| for b ~ N(mh mu0, mh^2 var0 + qh), closed form, theta = (mh, qh)
    from ..symbolic import Gauss, H
    mb = mh * mu0
    sb = sp.sqrt(mh ** 2 * var0 + qh)
    eabs = 2 * sb * Gauss(mb / sb) + mb * (1 - 2 * H(mb / sb))
    g1 = [sp.diff(eabs, t) for t in (mh, qh)]
    g2 = [sp.diff(eabs, a, b) for a, b in ((mh, mh), (mh, qh), (qh, qh))]
    # E[delta(b)] (for the zero-temperature V of the Ising student) = G(mb/sb)/sb
    specs["asm_ising"] = Scalar((mh, qh, mu0, var0), (eabs, *g1, *g2, Gauss(mb / sb) / sb))
    return specs, counts
