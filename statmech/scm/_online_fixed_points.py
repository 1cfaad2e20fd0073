r"""Symmetric fixed points of the online-learning ODEs: the plateau and the identical students.

``online_plateau(K, M, activation, lr)`` solves the full ODEs restricted to the states invariant
under separate permutations of the students and of the teachers (R_in = R for all i, n;
Q_ii = Q, Q_i!=k = C), which the full flow leaves invariant, by Newton's method to a residual
below 1e-12 (in practice ~1e-16): the unspecialized plateau, Q > C at lr > 0, reached from small
symmetric initial overlaps (the start of Newton is the end of such an integration), and the
identical-students fixed point Q = C (an invariant set of the full ODEs: identical students stay
identical).  As lr -> 0 both tend to the gradient-flow plateau, for K = M and erf
Q = C = 1/(2K - 1), R = 1/sqrt(K (2K - 1)) (Saad & Solla 1995).

Stability.  The Jacobian of the full ODEs (K(K+1)/2 + KM variables) commutes with the group
S_K x S_M, so it is block diagonal in the isotypic components (irreducible representations):

    triv x triv      Q_ii, Q_i!=k, R (all equal)              block 3 (2 for K = 1), 1 copy
    std_K x triv     Q_ii = u_i, Q_ik = u_i + u_k, R_in = u_i  block 3 (2 for K = 2), K - 1 copies
    triv x std_M     R_in = v_n                                block 1, M - 1 copies
    std_K x std_M    R_in = u_i v_n  (specialization)          block 1, (K - 1)(M - 1) copies
    [K-2, 2] x triv  Q_ik = x_ik (zero row sums)               block 1, K(K - 3)/2 copies

(sum u = sum v = 0).  Each block is obtained from Jacobian-vector products (central differences
of the full right-hand side with Richardson extrapolation, error ~1e-12) along one vector of each
copy, so the cost does not grow with the number of copies.  ``eigenvalues`` lists every
eigenvalue of the full Jacobian with its multiplicity; the largest real part is the escape rate
from the plateau (positive: unstable), and ``escape_mode`` names its component.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..errors import ConvergenceError
from ..result import Result
from ._online_common import (check_convention, check_lr, check_noise, check_sizes, check_teacher, expand, generic_rhs,
                             pack, resolve_activation, teacher_parts, weights)
from ._online_integrate import dop853, tableau
from ._online_odes import eps_state, eval_plan, n_state, plan_entries, rhs, unpack_full

__all__ = ["online_plateau", "OnlinePlateau"]


# ------------------------------------------------------------------ right-hand sides
class _System:
    """The ODEs of one problem (K, M, activation, lr, convention, noise, T)."""

    def __init__(self, K, M, act, lr, a, b, noise2, T):
        self.K, self.M, self.act, self.lr, self.a, self.b, self.noise2, self.T = K, M, act, lr, a, b, noise2, T
        self.quad_error = 0.0

    def f(self, mode, y, estimate=False, rough=False):
        y = np.ascontiguousarray(y, dtype=float)
        if self.act.code < 3:
            out = np.empty(n_state(mode, self.K, self.M))
            rhs(mode, self.act.code, y, self.K, self.M, self.T, self.a, self.b, self.lr, self.noise2, out)
            return out
        out, _, err = generic_rhs(mode, self.act, y, self.K, self.M, self.T, self.a, self.b, self.lr, self.noise2,
                                  estimate, 0.75 if rough else 1.0)
        if estimate:
            self.quad_error = max(self.quad_error, err)
        return out

    def eps(self, mode, y):
        y = np.ascontiguousarray(y, dtype=float)
        if self.act.code < 3:
            return float(eps_state(mode, self.act.code, y, self.K, self.M, self.T, self.a, self.b))
        return float(generic_rhs(mode, self.act, y, self.K, self.M, self.T, self.a, self.b, 0.0, 0.0)[1])


def _newton(fun, x0, jac, tol=1e-16, maxiter=60, function="online_plateau", point=None):
    """Newton's method on fun(x) = 0 with a difference Jacobian.

    Returns (x, residual, iterations, error): ``error`` is the max norm of the next Newton step
    J^-1 f(x) (an estimate of the distance to the root; it includes the ill-conditioning)."""
    x = np.array(x0, dtype=float)
    f = fun(x)
    res = float(np.abs(f).max())
    it = 0
    for it in range(1, maxiter + 1):
        J = jac(x)
        try:
            dx = np.linalg.solve(J, -f)
        except np.linalg.LinAlgError:
            raise ConvergenceError(f"{function}: singular Jacobian at {point}", x=x, residual=res,
                                   iterations=it) from None
        if not np.all(np.isfinite(dx)):
            raise ConvergenceError(f"{function}: singular Jacobian at {point}", x=x, residual=res, iterations=it)
        lam = 1.0
        while True:
            xn = x + lam * dx
            fn = fun(xn)
            rn = float(np.abs(fn).max())
            if np.all(np.isfinite(fn)) and (rn < res or rn <= tol or lam < 1e-3):
                break
            lam *= 0.5
        step = float(np.abs(lam * dx).max())
        stalled = rn > 0.5 * res
        x, f, res = xn, fn, rn
        # iterate to the rounding floor: stop when the residual no longer halves (and is <= 1e-12)
        if res <= tol or ((stalled or step <= 1e-15 * max(1.0, float(np.abs(x).max()))) and res <= 1e-12):
            break
    if res > 1e-12:
        raise ConvergenceError(f"{function}: Newton did not reach the residual 1e-12 at {point}", x=x, residual=res,
                               iterations=it)
    try:
        err = float(np.abs(np.linalg.solve(jac(x), f)).max())
    except np.linalg.LinAlgError:
        err = math.inf
    return x, res, it, err


def _fd_jac(fun, x, h=1e-6):
    n = x.size
    J = np.empty((n, n))
    for j in range(n):
        e = np.zeros(n)
        e[j] = h * max(1.0, abs(x[j]))
        J[:, j] = (fun(x + e) - fun(x - e)) / (2.0 * e[j])
    return J


# ------------------------------------------------------------------ symmetry blocks
def _entries(sys, y, targets):
    """Selected entries of the full right-hand side at the full state y (see plan_entries)."""
    K, M = sys.K, sys.M
    U = K + M
    Cm = np.empty((U, U))
    unpack_full(np.ascontiguousarray(y, dtype=float), K, M, sys.T, Cm)
    nt = targets.shape[0]
    n = nt * (2 * U + U * (U + 1) // 2 + 1)
    pk = np.empty(n, np.int64)
    pc = np.empty((n, 4, 4))
    pi = np.empty((n, 4), np.int64)
    pt = np.empty(n, np.int64)
    pf = np.empty(n)
    m = plan_entries(Cm, K, M, sys.a, sys.b, sys.lr, sys.noise2, targets, pk, pc, pi, pt, pf)
    out = np.zeros(nt)
    if sys.act.code < 3:
        eval_plan(sys.act.code, m, pk, pc, pi, pt, pf, out)
    else:
        from ._online_generic import eval_plan_generic
        eval_plan_generic(sys.act.generic, m, pk, pc, pi, pt, pf, out)
    return out


def _blocks(sys, x):
    """Eigenvalues of the full Jacobian at the S_K x S_M symmetric state x = (Q, C, R):
    {component: (eigenvalues of the block, multiplicity)}.

    For each component, the Jacobian maps the basis vectors b_j (one copy of each occurrence of
    the irreducible representation) into their span; J b_j is read off at as many entries of the
    right-hand side as the block has rows (central differences of those entries only, with one
    Richardson step), so the cost is O((K + M)^2) integrals per block at any K."""
    K, M = sys.K, sys.M
    Q, R = expand(1, x, K, M)
    y = pack(Q, R)
    iu = np.triu_indices(K)
    scale = 1e-3 * max(1.0, float(np.abs(y).max()))

    def vec(dQ, dR):
        return np.concatenate([dQ[iu], dR.ravel()])

    def block(basis, readout):
        """basis: list of (dQ, dR); readout: targets (kind, i, k|n) where basis values form an invertible matrix."""
        tg = np.array(readout, dtype=np.int64)
        Bv = np.array([[dQ[t[1], t[2]] if t[0] == 0 else dR[t[1], t[2]] for t in readout] for dQ, dR in basis]).T
        cols = []
        for dQ, dR in basis:
            v = vec(dQ, dR)
            d = [(_entries(sys, y + s * v, tg) - _entries(sys, y - s * v, tg)) / (2.0 * s) for s in (scale, 0.5 * scale)]
            cols.append((4.0 * d[1] - d[0]) / 3.0)
        coef = np.linalg.solve(Bv, np.column_stack(cols))
        return np.linalg.eigvals(coef)

    out = {}
    # triv x triv: the symmetric subspace (reduced Jacobian)
    red = (lambda z: sys.f(1, z))
    Jr = (4.0 * _fd_jac(red, x, 5e-4) - _fd_jac(red, x, 1e-3)) / 3.0
    if K == 1:
        Jr = Jr[np.ix_([0, 2], [0, 2])]
    out["triv x triv"] = (np.linalg.eigvals(Jr), 1)
    ZQ, ZR = np.zeros((K, K)), np.zeros((K, M))
    if K >= 2:
        u = np.zeros(K)
        u[0], u[1] = 1.0, -1.0
        basis = [(np.diag(u), ZR)]
        readout = [(0, 0, 0)]
        if K >= 3:
            off = u[:, None] + u[None, :]
            np.fill_diagonal(off, 0.0)
            basis.append((off, ZR))
            readout.append((0, 0, 2))
        basis.append((ZQ, np.repeat(u[:, None], M, axis=1)))
        readout.append((1, 0, 0))
        out["std_K x triv"] = (block(basis, readout), K - 1)
    if M >= 2:
        v = np.zeros(M)
        v[0], v[1] = 1.0, -1.0
        out["triv x std_M"] = (block([(ZQ, np.repeat(v[None, :], K, axis=0))], [(1, 0, 0)]), M - 1)
        if K >= 2:
            out["std_K x std_M"] = (block([(ZQ, np.outer(u, v))], [(1, 0, 0)]), (K - 1) * (M - 1))
    if K >= 4:
        X = np.zeros((K, K))
        X[0, 1] = X[1, 0] = X[2, 3] = X[3, 2] = 1.0
        X[0, 2] = X[2, 0] = X[1, 3] = X[3, 1] = -1.0
        out["[K-2,2] x triv"] = (block([(X, ZR)], [(0, 0, 1)]), K * (K - 3) // 2)
    assert sum(len(e) * m for e, m in out.values()) == K * (K + 1) // 2 + K * M
    return out


def _spectrum(blocks):
    ev, mult, comp = [], [], []
    for name, (e, m) in blocks.items():
        for lam in e:
            ev.append(complex(lam))
            mult.append(m)
            comp.append(name)
    order = np.argsort([-z.real for z in ev], kind="stable")
    ev = np.array(ev)[order]
    return (np.where(np.abs(ev.imag) > 1e-12 * np.maximum(1.0, np.abs(ev)), ev, ev.real + 0j), np.array(mult)[order],
            tuple(comp[i] for i in order))


@dataclass(frozen=True, repr=False)
class OnlinePlateau(Result):
    """A symmetric fixed point of the online-learning ODEs (:func:`online_plateau`).

    Attributes
    ----------
    kind : str
        ``"unspecialized"`` (Q > C at lr > 0: the plateau reached from small symmetric initial
        overlaps) or ``"identical-students"`` (Q = C).
    Q, C, R : float
        Q_ii, Q_i!=k and every R_in at the fixed point (C = Q for identical students; C is 0.0 for K = 1).
    eps_g : float
        The generalization error there (the plateau height).
    eigenvalues : ndarray of complex
        Every eigenvalue of the full Jacobian, largest real part first; ``multiplicities`` and
        ``components`` (the S_K x S_M isotypic component of each) alongside.
    escape_rate : float
        The largest real part of the eigenvalues (positive: the fixed point is unstable and
        trajectories leave it like exp(escape_rate alpha)); ``escape_mode`` its component.
    identical_students : OnlinePlateau or None
        For the unspecialized plateau, the identical-students fixed point of the same problem
        (None for K = 1).  For ReLU its ``escape_rate`` is ``inf``: the flow is not
        differentiable across Q = C (the SGD noise term separates identical ReLU students at a
        rate ~ lr^2 sqrt(Q - C)), and ``eigenvalues`` are those of the Jacobian restricted to the
        identical-students subspace.
    stability : ndarray
        Minus the real parts of all eigenvalues (with multiplicity), ascending: positive = stable.
    error : float
        Error estimate of eps_g: the last Newton step (closed-form activations) plus the quadrature
        error propagated through the Jacobian (any other g).
    """
    K: int
    M: int
    activation: str
    convention: str
    lr: float
    noise: float
    kind: str
    Q: float
    C: float
    R: float
    eps_g: float
    eigenvalues: np.ndarray
    multiplicities: np.ndarray
    components: tuple
    escape_rate: float
    escape_mode: str
    residual: float
    iterations: int
    error: float
    identical_students: "OnlinePlateau | None" = None
    converged: bool = True
    ansatz: str = "-"
    rs_stable: "bool | None" = field(default=None)
    T: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))

    headline = "eps_g"

    @property
    def stability(self):
        re = -np.repeat(self.eigenvalues.real, self.multiplicities)
        return np.sort(re)


def _state_ok(x, K):
    q, c = x[0], x[1]
    return q > 0 and (K == 1 or (-q / max(K - 1, 1) - 1e-12 < c <= q + 1e-12))


def _solve(sys, kind, x_start, point):
    K = sys.K
    # the equations (dx/dalpha) / lr = F1 + lr F2 = 0: a residual independent of the scale of lr
    if kind == "identical-students":
        def fun(z):
            f = sys.f(1, np.array([z[0], z[0], z[1]])) / sys.lr
            return np.array([f[0], f[2]])
        z0 = np.array([x_start[0], x_start[2]])
        z, res, it, step = _newton(fun, z0, lambda z: _fd_jac(fun, z), point=point)
        x = np.array([z[0], z[0], z[1]])
    else:
        def fun(z):
            f = sys.f(1, z) / sys.lr
            return f if K > 1 else f[[0, 2]]

        def full(z):
            return z if K > 1 else np.array([z[0], 0.0, z[1]])
        z0 = x_start if K > 1 else x_start[[0, 2]]
        z, res, it, step = _newton(lambda w: fun(full(w)), z0, lambda w: _fd_jac(lambda v: fun(full(v)), w),
                                   point=point)
        x = full(z)
    return x, res, it, step


def _relax(sys, x0, identical):
    """Integrate the symmetric ODEs from x0 until the state stops moving (Newton's start)."""
    A, B, C, E3, E5, D = tableau()
    T = sys.T
    x = np.array(x0, dtype=float)
    t_end = 200.0 / sys.lr
    for _ in range(8):
        if sys.act.code < 3:
            out = dop853(1, sys.act.code, x, 0.0, t_end, np.array([t_end]), sys.K, sys.M, T, sys.a, sys.b, sys.lr,
                         sys.noise2, 1e-9, 1e-12, 0.0, 200000, A, B, C, E3, E5, D)
            xn = out[1]
        else:
            # any g: pseudo-transient continuation (implicit Euler steps of growing length) on the
            # symmetric flow with rough quadrature -- a few dozen right-hand sides instead of thousands
            xn = x.copy()
            dt = 10.0 / sys.lr
            for _ in range(25):
                f = sys.f(1, xn, rough=True)
                J = _fd_jac(lambda z: sys.f(1, z, rough=True), xn, 1e-5)
                try:
                    xn = xn + np.linalg.solve(np.eye(xn.size) / dt - J, f)
                except np.linalg.LinAlgError:
                    break
                dt *= 3.0
            if identical:
                xn[1] = xn[0]
            return xn
        if identical:
            xn[1] = xn[0]
        f = sys.f(1, xn, rough=True)
        x = xn
        if float(np.abs(f).max()) * t_end <= 1e-6 * max(1.0, float(np.abs(x).max())):
            break
    return x


_LR_CONTINUE = 0.05


def _plateau(sys, Td, point):
    """The unspecialized plateau: relaxation of the symmetric flow from small overlaps, then Newton.
    Below lr = 0.05 the Q - C mode relaxes at a rate ~ lr^2 (its Jacobian eigenvalue divided by lr
    vanishes like lr): the start comes from continuation in lr from 0.05 (factors of 4)."""
    if sys.lr >= _LR_CONTINUE:
        return _solve(sys, "unspecialized", _relax(sys, _start(sys, Td), identical=False), point)
    lrs = [_LR_CONTINUE]
    while lrs[-1] / 4.0 > sys.lr:
        lrs.append(lrs[-1] / 4.0)
    lrs.append(sys.lr)
    prev = None
    for j, lr in enumerate(lrs):
        s = _System(sys.K, sys.M, sys.act, lr, sys.a, sys.b, sys.noise2, sys.T)
        if j == 0:
            x0 = _relax(s, _start(s, Td), identical=False)
        elif prev is not None and j >= 2:
            (l1, x1), (l2, x2) = prev
            x0 = x2 + (x2 - x1) * (lr - l2) / (l2 - l1)            # linear extrapolation in lr
        else:
            x0 = prev[-1][1]
        out = _solve(s, "unspecialized", x0, point)
        prev = ([(lrs[j - 1], prev[-1][1])] if prev else []) + [(lr, out[0])]
    return out


def _start(sys, Td):
    # small symmetric initial overlaps: |w_i|^2/N = 0.1 T_d, independent students, no teacher overlap
    return np.array([0.1 * Td, 0.0, 0.0])


def online_plateau(K, M, activation, lr, *, convention="saad-solla", noise=0.0, T=None):
    """The symmetric unspecialized fixed point (plateau) of the online-learning ODEs, with its stability.

    Parameters
    ----------
    K, M : int
        Student and teacher hidden units (>= 1).
    activation : str or callable
        ``"erf"`` (g = erf(x/sqrt 2)), ``"relu"``, ``"linear"``, or any g(x) (see
        :func:`statmech.scm.online`).
    lr : float
        Learning rate (> 0).
    convention : {"saad-solla", "normalized"}
        Output scale (see :func:`statmech.scm.online`).
    noise : float
        Standard deviation of the teacher's output noise (>= 0).
    T : array_like, optional
        Teacher overlaps; must be invariant under permutations of the teachers
        (T = t_d I + t_o (J - I)); default I.

    Returns
    -------
    OnlinePlateau
        The unspecialized plateau (``kind="unspecialized"``), with the identical-students fixed
        point in ``identical_students``.  Newton's residual is below 1e-12.

    Raises
    ------
    ValueError
        lr <= 0, K or M < 1, an unknown convention or activation, T not permutation invariant.
    ConvergenceError
        Newton did not converge, or converged to a state with Q <= C (the plateau does not exist
        at these parameters).
    """
    fn = "online_plateau"
    K, M = check_sizes(K, M, fn)
    lr = check_lr(lr, fn)
    convention = check_convention(convention, fn)
    noise = check_noise(noise, fn)
    act = resolve_activation(activation, fn)
    T = check_teacher(T, M, fn)
    Td, To = teacher_parts(T)
    if M > 1 and not np.allclose(T, To + (Td - To) * np.eye(M), rtol=0.0, atol=1e-14 * max(1.0, abs(Td))):
        raise ValueError(f"{fn}: T must be invariant under permutations of the teachers (T = t_d I + t_o (J - I)), "
                         f"got {T!r}")
    a, b = weights(convention, K, M)
    sys = _System(K, M, act, lr, a, b, noise * noise, T)
    point = f"K={K}, M={M}, activation={act.name}, lr={lr:g}, convention={convention}"
    x, res, it, step = _plateau(sys, Td, point)
    if K > 1 and not (x[0] - x[1] > 0.0 and _state_ok(x, K)):
        raise ConvergenceError(f"{fn}: no plateau with Q > C resolved at {point} (for small lr the Q - C mode has "
                               f"a Jacobian eigenvalue ~ lr^2: rounding moves Q - C by ~1e-16/lr; here the error "
                               f"estimate is {step:.2g})", x=x, residual=res, iterations=it)
    ident = None
    if K > 1:
        ident = _identical(sys, x, convention, noise, point)
    return _result(sys, "unspecialized", x, res, it, step, convention, noise, ident)


def _identical(sys, x_plateau, convention, noise, point):
    """The identical-students fixed point: K equal students act as one student of output weight
    K a (sigma = K a g(x)) learning at lr / K, so it is the fixed point of that K = 1 system."""
    K = sys.K
    one = _System(1, sys.M, sys.act, sys.lr / K, K * sys.a, sys.b, sys.noise2, sys.T)
    Td = float(sys.T[0, 0])
    z0 = _relax(one, np.array([x_plateau[0], 0.0, x_plateau[2]]), identical=False)
    z, res, it, step = _solve(one, "unspecialized", z0, point + " (identical students)")
    x = np.array([z[0], z[0], z[2]])
    if not x[0] > 0.0:
        raise ConvergenceError(f"online_plateau: the identical-students fixed point has Q <= 0 at {point}",
                               x=x, residual=res, iterations=it)
    if sys.act.code == 1:
        # ReLU: the flow is not differentiable across Q = C (the SGD noise separates identical
        # students at a rate ~ lr^2 sqrt(Q - C)); only the restricted Jacobian exists
        Jr = (4.0 * _fd_jac(lambda w: one.f(1, np.array([w[0], 0.0, w[1]]))[[0, 2]], z[[0, 2]], 5e-4)
              - _fd_jac(lambda w: one.f(1, np.array([w[0], 0.0, w[1]]))[[0, 2]], z[[0, 2]], 1e-3)) / 3.0
        ev = np.sort_complex(np.linalg.eigvals(Jr).astype(complex))[::-1]
        return OnlinePlateau(K=K, M=sys.M, activation=sys.act.name, convention=convention, lr=sys.lr, noise=noise,
                             kind="identical-students", Q=float(x[0]), C=float(x[1]), R=float(x[2]),
                             eps_g=sys.eps(1, x), eigenvalues=ev, multiplicities=np.ones(ev.size, dtype=int),
                             components=("identical-students subspace",) * ev.size, escape_rate=math.inf,
                             escape_mode="Q - C (not differentiable)", residual=float(res), iterations=int(it),
                             error=float(step), identical_students=None, T=sys.T.copy())
    return _result(sys, "identical-students", x, res, it, step, convention, noise, None)


def _result(sys, kind, x, res, it, step, convention, noise, ident):
    blocks = _blocks(sys, x)
    ev, mult, comp = _spectrum(blocks)
    lead = int(np.argmax(ev.real))
    # rounding of the right-hand side (~1e-16 relative) through the symmetric Jacobian: at small lr
    # its Q - C eigenvalue is ~ lr^2, and the fixed point is ill-conditioned in that direction
    tt = np.abs(blocks["triv x triv"][0]) / sys.lr
    err = max(step, 1e-16 * max(1.0, float(np.abs(x).max())) / max(float(tt.min()), 1e-300))
    if sys.act.code >= 3:
        sys.quad_error = 0.0
        sys.f(1, x, estimate=True)
        Jr = _fd_jac(lambda z: sys.f(1, z), x)
        try:
            err += float(np.abs(np.linalg.inv(Jr)).sum(axis=1).max()) * sys.quad_error
        except np.linalg.LinAlgError:
            err = math.inf
    return OnlinePlateau(K=sys.K, M=sys.M, activation=sys.act.name, convention=convention, lr=sys.lr, noise=noise,
                         kind=kind, Q=float(x[0]), C=float(x[1]) if sys.K > 1 else 0.0, R=float(x[2]),
                         eps_g=sys.eps(1, x), eigenvalues=ev, multiplicities=mult, components=comp,
                         escape_rate=float(ev[lead].real), escape_mode=comp[lead], residual=float(res), iterations=int(it),
                         error=float(err), identical_students=ident, T=sys.T.copy())
