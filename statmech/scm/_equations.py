"""The SCM equations, written once in sympy and generated into numba kernels by
:mod:`statmech.symbolic`; the hand-written numba loops of :mod:`statmech.scm._solver` are
compiled into the same module (``include=``), so ``_kern.newton``, ``_kern.trace``, ... exist too."""
from __future__ import annotations

from ..symbolic import Scalar, kernels


@kernels(include=("statmech.scm._solver", "statmech.scm._ends", "statmech.scm._charts",
                  "statmech.scm._chart_solve"))
def _kern():
    """SCM equations, written once.

    pm2_<act>(a, b, c): E[g(x) g(y)] for a centred Gaussian pair with variances a, b and
    covariance c (erf: Saad & Solla 1995 / Oostwal et al. (2019) Eq. 26; ReLU: Oostwal et al. (2019) Eq. 27).
    pm_<act>(rho): (m, m', m'') at unit variances; pmv_<act>: m only.
    fe: site-symmetric beta f = alpha K eps_g - s (Oostwal et al. 2019, Eqs. 19-20, eps_g corrected),
    its gradient and Hessian in (R, S, C), eps_g and s; the pair moments enter as
    arguments so that any activation uses the same expression.
    finf: the K -> infinity free energy per hidden unit in (R, sigma = K S, gamma = K C);
    finf_red: the same on the optimal manifold sigma = 1 - R, gamma = 0.
    fes: the same beta f in the scaled variables (delta, t, v) of docs/scm.md ("Any K"), written
    without cancellation at large K: with u = sqrt(1 + v - e^t) = R + (K-1) S, e^t the smallest
    eigenvalue 1 + (K-1) C - u^2 of the overlap matrix, v = (K-1) C, delta = R - S and
    q(x) = m(x) - m(0) - m'(0) x, beta f = alpha K (m(1) - m(0) - m'(0)) + alpha E - s with
    E = K [m'(0) (v (v - w) / (2 (1 + u)^2) + w / (1 + u)) - q(R) - (K-1) q(S) + (K-1)/2 q(C)], w = e^t, and
    s = t/2 + (K-1)/2 log1p(-C - delta^2); returns (E, s), their gradients and Hessians
    (upper triangles) in (delta, t, v).  The Taylor remainders q, q' = m' - m'(0), q'' = m''
    enter as arguments (statmech.scm._solver.taylor_moments computes them without cancellation).
    """
    import sympy as sp
    a, b, c, rho = sp.symbols("a b c rho", real=True)
    pm2 = {
        "erf": 2 / sp.pi * sp.asin(c / sp.sqrt((1 + a) * (1 + b))),
        "relu": c / 4 + (sp.sqrt(a * b - c ** 2) + c * sp.asin(c / sp.sqrt(a * b))) / (2 * sp.pi),
        "linear": c,
    }
    specs = {}
    for name, e in pm2.items():
        specs[f"pm2_{name}"] = Scalar((a, b, c), e)
        m = sp.simplify(e.xreplace({a: sp.Integer(1), b: sp.Integer(1)}).xreplace({c: rho}))
        specs[f"pm_{name}"] = Scalar((rho,), (m, sp.diff(m, rho), sp.diff(m, rho, 2)))
        specs[f"pmv_{name}"] = Scalar((rho,), m)

    alpha, K, R, S, C = sp.symbols("alpha K R S C", real=True)
    specs["fe"] = Scalar(*_site_free_energy(sp, alpha, K, R, S, C))

    # K -> infinity: S = sig/K, C = gam/K; (K-1)(m(C)+m(0)-2m(S)) -> m'(0)(gam - 2 sig)
    sig, gam, dm0, w = sp.symbols("sigma gamma dm0 w", real=True)
    q1R, dR, d2R = sp.symbols("q1R dR d2R", real=True)
    Q1 = sp.Function("Q1")   # Q1(R) = m(1) - m(R), passed in without cancellation
    W = sp.Function("W")     # W(R) = 1 - R^2 = (1 - R)(1 + R), passed in
    eps_inf = Q1(R) + dm0 * (gam - 2 * sig) / 2
    s_inf = sp.log(W(R)) / 2
    finf = alpha * eps_inf - s_inf
    rep = {sp.Derivative(Q1(R), (R, 2)): -d2R, sp.Derivative(Q1(R), R): -dR, Q1(R): q1R,
           sp.Derivative(W(R), (R, 2)): -2, sp.Derivative(W(R), R): -2 * R, W(R): w}

    def sub(e):
        e = e.doit()
        for k in sorted(rep, key=lambda t: -sp.count_ops(t)):  # derivatives first
            e = e.subs(k, rep[k])
        return e
    Y = (R, sig, gam)
    ginf = [sp.diff(finf, y) for y in Y]
    hinf = [sp.diff(finf, Y[i], Y[j]) for i in range(3) for j in range(i, 3)]
    specs["finf"] = Scalar((alpha, R, sig, gam, dm0, w, q1R, dR, d2R),
                           tuple(sub(e) for e in [finf] + ginf + hinf + [eps_inf, s_inf]))
    fred = finf.subs({sig: 1 - R, gam: 0})
    specs["finf_red"] = Scalar((alpha, R, dm0, w, q1R, dR, d2R),
                               tuple(sub(e) for e in (fred, sp.diff(fred, R), sp.diff(fred, R, 2),
                                                       eps_inf.subs({sig: 1 - R, gam: 0}), s_inf)))
    specs["fes"] = Scalar(*_scaled_free_energy(sp, K))
    specs["fet"] = Scalar(*_top_free_energy(sp, alpha, K))
    specs["fea"] = Scalar(*_anti_free_energy(sp, alpha, K))
    return specs


def _site_free_energy(sp, alpha, K, R, S, C):
    """(args, exprs) of the ``fe`` kernel: beta f = alpha K eps_g - s in (R, S, C), its gradient and
    Hessian (upper triangle), eps_g and s, arranged so that no large terms cancel.

    eps_g = Q1(R) + (K-1)/2 [m'(0) (C - 2S) + q(C) - 2 q(S)] with Q1(R) = m(1) - m(R) and the Taylor
    remainder q(x) = m(x) - m(0) - m'(0) x (values and derivatives passed in, computed without
    cancellation by ``statmech.scm._solver``); s = ln(a1)/2 + (K-1)/2 ln(a2) with the two eigenvalues
    a1 = 1 + (K-1) C - (R + (K-1) S)^2 and a2 = 1 - C - (R - S)^2 passed in (computed from 1 - R, so
    that they keep their digits where they are small), their derivatives taken from the polynomials."""
    d1, a1, a2 = sp.symbols("d1 a1 a2", real=True)
    names = {"R": sp.symbols("q1R dR d2R", real=True)}
    for v in ("S", "C"):
        names[v] = sp.symbols(f"q{v} q1{v} q2{v}", real=True)
    Q1 = sp.Function("Q1")
    q = sp.Function("q")
    eps = Q1(R) + (K - 1) / 2 * (d1 * (C - 2 * S) + q(C) - 2 * q(S))
    rep = {sp.Derivative(Q1(R), (R, 2)): -names["R"][2], sp.Derivative(Q1(R), R): -names["R"][1],
           Q1(R): names["R"][0]}
    for v, x in (("S", S), ("C", C)):
        rep[sp.Derivative(q(x), (x, 2))] = names[v][2]
        rep[sp.Derivative(q(x), x)] = names[v][1]
        rep[q(x)] = names[v][0]
    P = {a1: 1 + (K - 1) * C - (R + (K - 1) * S) ** 2, a2: 1 - C - (R - S) ** 2}
    s = sp.log(a1) / 2 + (K - 1) / 2 * sp.log(a2)
    X = (R, S, C)

    def D(e, x):  # total derivative: a1, a2 stand for the polynomials P
        return sp.diff(e, x) + sum(sp.diff(e, a) * sp.diff(p, x) for a, p in P.items())

    def sub(e):
        e = e.doit()
        for k in sorted(rep, key=lambda t: -sp.count_ops(t)):  # derivatives first
            e = e.subs(k, rep[k])
        return e
    ge = [sp.diff(eps, x) for x in X]
    he = [sp.diff(eps, X[i], X[j]) for i in range(3) for j in range(i, 3)]
    gs = [D(s, x) for x in X]
    hs = [D(gs[i], X[j]) for i in range(3) for j in range(i, 3)]
    # the value of s from the logarithms passed in (ln a computed as log1p(a - 1) near a = 1, where
    # (K-1)/2 ln a2 and ln a1 / 2 nearly cancel at large K and small overlaps)
    la1, la2 = sp.symbols("la1 la2", real=True)
    s_val = la1 / 2 + (K - 1) / 2 * la2
    f = alpha * K * eps - s_val
    exprs = ([f] + [alpha * K * g - h for g, h in zip(ge, gs)] + [alpha * K * g - h for g, h in zip(he, hs)]
             + [eps, s_val])
    args = (alpha, K, R, S, C, d1, a1, a2, la1, la2) + names["R"] + names["S"] + names["C"]
    return args, tuple(sub(e) for e in exprs)


def _top_free_energy(sp, alpha, K):
    """(args, exprs) of the ``fet`` kernel: beta f in the chart y = (t1, t2, S) of the states with
    R != 0, t1 = ln a1, t2 = ln a2 (the two eigenvalues of the overlap matrix, see ``fe``), the sign
    sg = +-1 of R a parameter.

    From a1, a2 and S: 1 - R^2 = D = (K-1) S^2 + ((K-1) a2 + a1) / K, R = sg sqrt(1 - D),
    1 - R = D / (1 + |R|) (sg = 1) or 1 + |R| (sg = -1), and C - 2S = (K-2) S^2 + (a1 - a2) / K - 2 (1 - R) S,
    so that nothing cancels as R -> 1, S, C -> 0 (large alpha; docs/scm.md, "Large alpha").
    beta f = alpha K eps_g - s with
    eps_g = Q1(R) + (K-1)/2 [m'(0) (C - 2S) + q(C) - 2 q(S)], s = t1/2 + (K-1)/2 t2.
    Returns beta f, its gradient and Hessian (upper triangle) in y, eps_g and s."""
    t1, t2, S, d1, sg = sp.symbols("t1 t2 S d1 sg", real=True)
    Y = (t1, t2, S)
    a1, a2 = sp.exp(t1), sp.exp(t2)
    D = (K - 1) * S ** 2 + ((K - 1) * a2 + a1) / K
    r = sp.sqrt(1 - D)
    R = sg * r
    one_minus_R = (1 + sg) / 2 * D / (1 + r) + (1 - sg) / 2 * (1 + r)   # exact for sg = +-1
    c0 = (K - 2) * S ** 2 + (a1 - a2) / K - 2 * one_minus_R * S
    point = {"R": R, "S": S, "C": 2 * S + c0}
    # (value, first, second derivative) of Q1(R) = m(1) - m(R), q(S), q(C) at the point
    q = {"R": sp.symbols("q1R n1R n2R", real=True)}
    for x in ("S", "C"):
        q[x] = sp.symbols(f"q{x} q1{x} q2{x}", real=True)
    eps = q["R"][0] + (K - 1) / 2 * (d1 * c0 + q["C"][0] - 2 * q["S"][0])
    s = t1 / 2 + (K - 1) / 2 * t2
    f = alpha * K * eps - s

    def Dt(e, y):  # total derivative d e / d y
        out = sp.diff(e, y)
        for x, (q0, q1, q2) in q.items():
            dx = sp.diff(point[x], y)
            out += (sp.diff(e, q0) * q1 + sp.diff(e, q1) * q2) * dx
        return out
    g = [Dt(f, y) for y in Y]
    h = [Dt(g[i], Y[j]) for i in range(3) for j in range(i, 3)]
    args = (alpha, K, sg, t1, t2, S, d1) + q["R"] + q["S"] + q["C"]
    return args, tuple([f] + g + h + [eps, s])


def _anti_free_energy(sp, alpha, K):
    """(args, exprs) of the ``fea`` kernel: beta f in the chart y = (t1, t2, v) of the states with
    u = R + (K-1) S > 0 and delta = R - S < 0, t1 = ln a1, t2 = ln a2, v = (K-1) C (the
    anti-specialized states, where a1 and a2 can both vanish at large alpha).

    ``|delta|`` = sqrt(1 - C - a2), u = sqrt(1 + v - a1), 1 + R = [(K-1)(1 - |delta|) + 1 + u] / K with
    1 - ``|delta|`` = (C + a2) / (1 + ``|delta|``), S = (u + ``|delta|``) / K.  Returns beta f, its gradient and
    Hessian (upper triangle) in y, eps_g and s."""
    t1, t2, v, d1 = sp.symbols("t1 t2 v d1", real=True)
    Y = (t1, t2, v)
    a1, a2 = sp.exp(t1), sp.exp(t2)
    n = K - 1
    C = v / n
    ad = sp.sqrt(1 - C - a2)
    u = sp.sqrt(1 + v - a1)
    R = (n * (C + a2) / (1 + ad) + 1 + u) / K - 1
    S = (u + ad) / K
    point = {"R": R, "S": S, "C": C}
    q = {"R": sp.symbols("q1R n1R n2R", real=True)}
    for x in ("S", "C"):
        q[x] = sp.symbols(f"q{x} q1{x} q2{x}", real=True)
    eps = q["R"][0] + n / 2 * (d1 * (C - 2 * S) + q["C"][0] - 2 * q["S"][0])
    s = t1 / 2 + n / 2 * t2
    f = alpha * K * eps - s

    def Dt(e, y):  # total derivative d e / d y
        out = sp.diff(e, y)
        for x, (q0, q1, q2) in q.items():
            dx = sp.diff(point[x], y)
            out += (sp.diff(e, q0) * q1 + sp.diff(e, q1) * q2) * dx
        return out
    g = [Dt(f, y) for y in Y]
    h = [Dt(g[i], Y[j]) for i in range(3) for j in range(i, 3)]
    args = (alpha, K, t1, t2, v, d1) + q["R"] + q["S"] + q["C"]
    return args, tuple([f] + g + h + [eps, s])


def _scaled_free_energy(sp, K):
    """(args, exprs) of the ``fes`` kernel (see :func:`_kern`): total derivatives by the chain rule
    through R(delta, t, v), S(delta, t, v), C(v), with dq/dx = q', dq'/dx = q''."""
    from sympy.codegen.cfunctions import log1p
    dl, t, v, d1 = sp.symbols("delta t v d1", real=True)
    Y = (dl, t, v)
    n = K - 1
    u = sp.sqrt(1 + v - sp.exp(t))
    point = {"R": (u + n * dl) / K, "S": (u - dl) / K, "C": v / n}
    q = {x: sp.symbols(f"q{x} q1{x} q2{x}", real=True) for x in point}
    w = sp.exp(t)
    # m'(0) [v/2 - (u - 1)] with u - 1 = (v - w) / (1 + u), arranged so that no derivative cancels
    E = K * (d1 * (v * (v - w) / (2 * (1 + u) ** 2) + w / (1 + u)) - q["R"][0] - n * q["S"][0] + n / 2 * q["C"][0])
    s = t / 2 + n / 2 * log1p(-v / n - dl ** 2)

    def D(e, y):  # total derivative d e / d y
        out = sp.diff(e, y)
        for x, (q0, q1, q2) in q.items():
            dx = sp.diff(point[x], y)
            out += (sp.diff(e, q0) * q1 + sp.diff(e, q1) * q2) * dx
        return out

    grads = {f: [D(f, y) for y in Y] for f in (E, s)}
    exprs = [E, s] + grads[E] + grads[s]
    for f in (E, s):
        exprs += [D(grads[f][i], Y[j]) for i in range(3) for j in range(i, 3)]
    args = (K, dl, t, v, d1) + q["R"] + q["S"] + q["C"]
    return args, tuple(exprs)
