"""The SCM equations, written once in sympy and generated into numba kernels by
:mod:`statmech.symbolic`; the hand-written numba loops of :mod:`statmech.scm._solver` are
compiled into the same module (``include=``), so ``_kern.newton``, ``_kern.trace``, ... exist too."""
from __future__ import annotations

from ..symbolic import Scalar, kernels


@kernels(include=("statmech.scm._solver",))
def _kern():
    """SCM equations, written once.

    pm2_<act>(a, b, c): E[g(x) g(y)] for a centred Gaussian pair with variances a, b and
    covariance c (erf: Saad & Solla 1995 / seed Eq. 26; ReLU: seed Eq. 27).
    pm_<act>(rho): (m, m', m'') at unit variances; pmv_<act>: m only.
    fe: site-symmetric beta f = alpha K eps_g - s (seed Eqs. 19-20, eps_g corrected),
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
    m = sp.Function("m")
    m0, m1 = sp.symbols("m0 m1", real=True)
    eps = m(1) - m(R) + (K - 1) / 2 * (m(C) + m(0) - 2 * m(S))
    s = sp.log(1 + (K - 1) * C - (R + (K - 1) * S) ** 2) / 2 + (K - 1) / 2 * sp.log(1 - C - (R - S) ** 2)
    f = alpha * K * eps - s
    X = (R, S, C)
    names = {}
    for v, tag in ((R, "R"), (S, "S"), (C, "C")):
        names[v] = sp.symbols(f"m{tag} d{tag} d2{tag}", real=True)

    def sub(e):
        rep = {m(0): m0, m(1): m1}
        for v, (mv, dv, d2v) in names.items():
            rep[sp.Derivative(m(v), (v, 2))] = d2v
            rep[sp.Derivative(m(v), v)] = dv
            rep[m(v)] = mv
        e = e.doit()
        for k in sorted(rep, key=lambda t: -sp.count_ops(t)):  # derivatives first
            e = e.subs(k, rep[k])
        return e

    grad = [sp.diff(f, x) for x in X]
    hess = [sp.diff(f, X[i], X[j]) for i in range(3) for j in range(i, 3)]
    margs = tuple(x for v in X for x in names[v])
    specs["fe"] = Scalar((alpha, K, R, S, C, m0, m1) + margs,
                         tuple(sub(e) for e in [f] + grad + hess + [eps, s]))

    # K -> infinity: S = sig/K, C = gam/K; (K-1)(m(C)+m(0)-2m(S)) -> m'(0)(gam - 2 sig)
    sig, gam, dm0 = sp.symbols("sigma gamma dm0", real=True)
    eps_inf = m(1) - m(R) + dm0 * (gam - 2 * sig) / 2
    s_inf = sp.log(1 - R ** 2) / 2
    finf = alpha * eps_inf - s_inf
    Y = (R, sig, gam)
    ginf = [sp.diff(finf, y) for y in Y]
    hinf = [sp.diff(finf, Y[i], Y[j]) for i in range(3) for j in range(i, 3)]
    specs["finf"] = Scalar((alpha, R, sig, gam, m1, dm0) + names[R],
                           tuple(sub(e) for e in [finf] + ginf + hinf + [eps_inf, s_inf]))
    fred = finf.subs({sig: 1 - R, gam: 0})
    specs["finf_red"] = Scalar((alpha, R, m1, dm0) + names[R],
                               tuple(sub(e) for e in (fred, sp.diff(fred, R), sp.diff(fred, R, 2),
                                                       eps_inf.subs({sig: 1 - R, gam: 0}), s_inf)))
    specs["fes"] = Scalar(*_scaled_free_energy(sp, K))
    return specs


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
