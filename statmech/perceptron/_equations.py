"""Sympy integrands of the perceptron's RS free entropies (one ``@kernels`` set, ``_K``).

Every Gaussian expectation used by the solvers is written here once, with its derivatives
taken by ``sympy.diff``; :mod:`statmech.perceptron._quadrature` evaluates them on the
quadrature rules.  Equation labels (S1, T2, B1, G2, ...) refer to ``docs/perceptron.md``.
"""
from __future__ import annotations

import sympy as sp

from sympy.codegen.cfunctions import expm1, log1p

from ..symbolic import Expectation, Gauss, H, InvMills, LogH, Log2Cosh, Scalar, kernels


def _one_exp(expr, b):
    """``expr`` with log 2cosh(b), tanh(b), e^{-2m log 2cosh b} and e^{-b - log 2cosh b}
    written through the one exponential E = e^{-2|b|} (exact identities; no cancellation):
    ``log 2cosh b = |b| + log1p(E)``, ``tanh b = -sign(b) expm1(-2|b|)/(1 + E)``,
    ``1/(2 cosh b)^2 = E/(1 + E)^2``, ``e^{-b}/(2 cosh b) = E/(1 + E)`` (b >= 0) or
    ``1/(1 + E)`` (b < 0).  Three special functions per node (exp, expm1, log1p) instead of
    six; the derivatives are taken before, on the functions of ``symbolic``."""
    a = sp.Abs(b)
    E = sp.exp(-2 * a)
    L = Log2Cosh(b)

    def exp_of(arg):
        arg = sp.expand(arg, deep=False)
        k = arg.coeff(L)
        rest = sp.expand(arg - k * L, deep=False)
        if rest == 0 and k.is_integer and k < 0 and k % 2 == 0:
            return (E / (1 + E) ** 2) ** (-k // 2)
        if k == -1 and sp.expand(rest + b) == 0:
            return sp.Piecewise((E / (1 + E), b >= 0), (1 / (1 + E), True))
        raise ValueError(f"no rule for exp({arg})")

    expr = expr.replace(lambda e: isinstance(e, sp.exp) and e.has(L), lambda e: exp_of(e.args[0]))
    return expr.subs({L: a + log1p(E), sp.tanh(b): -sp.sign(b) * expm1(-2 * a) / (1 + E)})


@kernels(include=("statmech.perceptron._quadrature_nb", "statmech.perceptron._newton_nb",
                  "statmech.perceptron._branches_nb"))
def _K():
    """Perceptron integrands (sympy).  ``s`` is the quadrature variable, ``c`` a shift:
    ``t = s + c`` and the weight ``e^{-c s - c^2/2}`` makes ``E_s[f(s+c) w] = E_t[f(t)]``
    (the rules of ``ts_out`` and ``is_in`` are never shifted: no ``c``)."""
    s, q, p, k, c, qh = sp.symbols("s q p kappa c q_hat", real=True)
    # p stands for 1 - q, passed separately so that 1 - q keeps full relative precision
    # near q = 1; total derivatives in q are d/dq = diff(., q) - diff(., p)
    t = s + c
    w = sp.exp(-c * s - c ** 2 / 2)

    def dq(e, n=1):
        for _ in range(n):
            e = sp.diff(e, q) - sp.diff(e, p)
        return e

    # storage output channel, u = (kappa - sqrt(q) t)/sqrt(1-q)
    u = (k - sp.sqrt(q) * t) / sp.sqrt(p)
    im2 = InvMills(u) ** 2
    # log H(u) = -u^2/2 - log(2 pi)/2 - log IM(u) for u > 0 reuses IM(u) (one continued
    # fraction per node instead of two in the Gaussian core for u >= 5); exact identity
    log_h = sp.Piecewise((-u ** 2 / 2 - sp.log(2 * sp.pi) / 2 - sp.log(InvMills(u)), u > 0), (LogH(u), True))
    st_out = (log_h,                                     # E log H(u)           (S1, B1)
              im2,                                       # E IM(u)^2            (S2, B2)
              dq(im2),                                   # d/dq E IM^2          (Jacobian)
              (InvMills(u) * (InvMills(u) - u)) ** 2,    # replicon
              dq(LogH(u)))                       # raw d/dq E log H (test of S2)
    # teacher-student output channel, a = sqrt(R/(1-R)); q stands for R
    a = sp.sqrt(q / p)
    hl = 2 * H(-a * t) * LogH(-a * t)
    gi = 2 * Gauss(a * t) * InvMills(-a * t)
    ts_out = (hl,                                        # (T1, G1)
              gi,                                        # (T2, G2)
              dq(gi),
              2 * H(-a * t) * (InvMills(-a * t) * (InvMills(-a * t) + a * t)) ** 2,   # replicon
              dq(hl))                                    # raw d/dR (test of T2)
    # Ising entropic channel (storage), b = sqrt(q_hat) z, z = t
    b = sp.sqrt(qh) * t
    sech2 = 4 * sp.exp(-2 * Log2Cosh(b))                 # 1 - tanh^2 without cancellation
    is_in = tuple(_one_exp(e, b) for e in (
        Log2Cosh(b), sech2, sp.diff(sech2, qh), sech2 ** 2, sp.tanh(b) ** 2))
    # Ising entropic channel (teacher-student), b = sqrt(q_hat) z + q_hat
    b2 = sp.sqrt(qh) * t + qh
    omt = 2 * sp.exp(-b2 - Log2Cosh(b2))                 # 1 - tanh(b) without cancellation
    sech2b = 4 * sp.exp(-2 * Log2Cosh(b2))
    ts_in = tuple(_one_exp(e, b2) for e in (
        Log2Cosh(b2), omt, sech2b,                         # E log2cosh, E(1 - tanh), E sech^2
        sp.diff(omt, qh), sp.diff(sech2b, qh), sech2b ** 2, sp.tanh(b2) ** 2))
    t0 = {c: 0}
    return {
        "st_out": Expectation(s, (q, p, k, c), tuple(w * e for e in st_out)),
        "ts_out": Expectation(s, (q, p), tuple(e.subs(t0) for e in ts_out)),
        "is_in": Expectation(s, (qh,), tuple(e.subs(t0) for e in is_in)),
        "ts_in": Expectation(s, (qh, c), tuple(w * e for e in ts_in)),
        # the subsets a Newton step of a branch map needs (same expressions, fewer special
        # functions per node): (E IM^2, d/dq), (E 2 G IM, d/dR), (E sech^2, d/dq_hat, E tanh^2)
        "st_step": Expectation(s, (q, p, k, c), tuple(w * e for e in st_out[1:3])),
        "ts_step": Expectation(s, (q, p), tuple(e.subs(t0) for e in ts_out[1:3])),
        "is_step": Expectation(s, (qh,), tuple(is_in[i].subs(t0) for i in (1, 2, 4))),
        "ts_in_step": Expectation(s, (qh, c), tuple(w * ts_in[i] for i in (2, 4, 6))),
        # 1/alpha_c(kappa) = int_{-inf}^kappa Dt (kappa - t)^2  (thesis Eq. 2.30)
        "gardner_inv": Scalar((k,), (1 + k ** 2) * H(-k) + k * Gauss(k)),
    }
