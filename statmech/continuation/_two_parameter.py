"""Two-parameter continuation of special points (lines of a phase diagram) and their crossings."""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..errors import ConvergenceError, check_finite, check_range
from ..result import Result
from ._coexistence import _coexistence_jacobian, _coexistence_residual, _on_sheet, _sheets
from ._corrector import _EPS
from ._problem import Problem, _dJ_dx, _J_p
from ._results import Branch, CoexistencePoint
from ._special_points import _bp_jacobian, _bp_residual
from ._trace import trace


@dataclass(frozen=True, repr=False)
class Curve(Result):
    """A line of special points in the (q, p) plane (see :func:`continue_point`).

    Protocol: every node was accepted by the corrector (``converged`` True, ``residual`` the
    tolerance), ``iterations`` the nodes, ``ansatz`` "-", ``rs_stable``/``stability`` None,
    ``error`` 0.0 (nodes exact to the tolerance; :meth:`p_at` re-solves between them)."""
    headline = None
    converged = True
    ansatz = "-"
    rs_stable = None
    stability = None
    error = 0.0
    kind: str
    param: str
    q: np.ndarray
    p: np.ndarray
    x: np.ndarray
    x2: np.ndarray | None
    b: np.ndarray | None
    status: tuple
    branch: Branch = field(repr=False, default=None)
    problem: Problem = field(repr=False, default=None)
    accept: object = field(repr=False, default=None)  # the trace's point test, also applied by p_at

    def p_at(self, q):
        """Exact p of the line at parameter value q (re-solved from the nearest node)."""
        q = float(check_finite("q", q))
        br = self.branch
        if not (min(br.p) <= q <= max(br.p)):
            raise ValueError(f"q must be within the traced range [{min(br.p)}, {max(br.p)}], got {q}")
        for sh in _sheets(br) if br.p.size > 1 else [(0, 0)]:
            z = _on_sheet(br.problem, br, sh, q)
            if z is not None and self.accept is not None and self.accept(np.append(z, q)):
                z = None  # e.g. a fold line's re-solve landing on a branch point
            if z is not None:
                return float(z[self._ip])
        raise ConvergenceError("Curve.p_at: re-solve failed", diagnostics={"q": q})

    @property
    def iterations(self):
        return int(self.q.size)

    @property
    def residual(self):
        return float(self.problem.tol) if self.problem is not None else 0.0

    @property
    def _ip(self):
        n = self.x.shape[1]
        return {"fold": 2 * n, "branch_point": 2 * n, "stability_change": n, "event": n,
                "coexistence": 2 * n}[self.kind]


def _ext_problem(problem, point, param):
    """Extended system for two-parameter continuation in ``param``."""
    n = problem.n
    q0 = float(problem.params[param])

    memo = {}

    def P(q):
        pr = memo.get(q)
        if pr is None:
            if len(memo) > 8:
                memo.clear()
            pr = memo[q] = problem.with_params(**{param: q})
        return pr

    if isinstance(point, CoexistencePoint):
        scale = max(1.0, abs(point.f))

        def G(z, q):
            return _coexistence_residual(P(q), z, scale)

        def JG(z, q):
            return _coexistence_jacobian(P(q), z, scale)
        z0 = np.concatenate([point.x1, point.x2, [point.p]])
        return "coexistence", G, JG, z0, q0
    kind = point.kind
    y = np.append(point.x, point.p)
    J = problem.J(point.x, point.p)
    if kind == "stability_change" and point.coincides is not None:
        kind = point.coincides
    if kind == "fold":
        ev, evec = np.linalg.eig(J)
        v = np.real(evec[:, int(np.argmin(np.abs(ev)))])
        v = v / np.linalg.norm(v)
        sJ = max(1.0, float(np.max(np.abs(J))))

        def G(z, q):
            pr = P(q)
            x, vv, p = z[:n], z[n:2 * n], z[-1]
            return np.concatenate([pr.F(x, p), pr.J(x, p) @ vv / sJ, [vv @ vv - 1.0]])

        def JG(z, q):
            pr = P(q)
            x, vv, p = z[:n], z[n:2 * n], z[-1]
            Jx = pr.J(x, p)
            M = np.zeros((2 * n + 1, 2 * n + 1))
            M[:n, :n] = Jx
            M[:n, 2 * n] = pr.Fp(x, p)
            M[n:2 * n, :n] = _dJ_dx(pr, x, p, vv) / sJ
            M[n:2 * n, n:2 * n] = Jx / sJ
            M[n:2 * n, 2 * n] = _J_p(pr, x, p) @ vv / sJ
            M[2 * n, n:2 * n] = 2 * vv
            return M
        return "fold", G, JG, np.concatenate([point.x, v, [point.p]]), q0
    if kind == "branch_point":
        u, s, vt = np.linalg.svd(J.T)
        phi = vt[-1]  # left null vector of J
        phi = phi / np.linalg.norm(phi)
        sJ = max(1.0, float(np.max(np.abs(J))))
        sP = max(1.0, float(np.max(np.abs(problem.Fp(point.x, point.p)))))

        def G(z, q):
            x, ph, p, b = z[:n], z[n:2 * n], z[2 * n], z[2 * n + 1]
            return _bp_residual(P(q), x, ph, p, b, sJ, sP)[0]

        def JG(z, q):
            pr = P(q)
            x, ph, p, b = z[:n], z[n:2 * n], z[2 * n], z[2 * n + 1]
            M = _bp_jacobian(pr, x, ph, p, b, pr.J(x, p), pr.Fp(x, p), sJ, sP,
                             _dJ_dx(pr, x, p, ph, transpose=True) / sJ)
            if not pr.affine_in_p:  # d(F_p.phi)/dp
                h = 1e-5 * max(1.0, abs(p))
                M[2 * n, 2 * n] = (pr.Fp(x, p + h) - pr.Fp(x, p - h)) @ ph / (2 * h * sP)
            return M
        return "branch_point", G, JG, np.concatenate([point.x, phi, [point.p, 0.0]]), q0
    if kind == "stability_change":
        def G(z, q):
            pr = P(q)
            x, p = z[:n], z[-1]
            return np.concatenate([pr.F(x, p), [pr.margin(x, p)]])
        return "stability_change", G, None, y.copy(), q0
    if kind == "event":
        g = problem.events[point.name]

        def G(z, q):
            pr = P(q)
            x, p = z[:n], z[-1]
            try:
                gv = float(g(x, p, **pr.params))
            except ValueError:
                gv = math.nan
            return np.concatenate([pr.F(x, p), [gv]])
        return "event", G, None, y.copy(), q0
    raise ValueError(f"point must be a fold, branch_point, stability_change, event or CoexistencePoint, got {kind!r}")


def _fold_transversality(problem, point, param, tol):
    """``accept`` of a fold line: a fold needs phi . F_p != 0 (phi the left null vector of F_x).
    A branch point of the problem solves the fold system too (F = 0, F_x v = 0) but has
    phi . F_p = 0, so where the fold and a branch point approach each other (a fold line ending
    on a branch-point line) a long step can land on the branch point; such a point, or a fold
    whose ``|phi . F_p|`` is below ``tol`` max(``|F_p|``, ``|F_p|`` at the start) (not distinguishable from
    the branch point), is refused."""
    n = problem.n
    f0 = float(np.linalg.norm(problem.Fp(point.x, point.p)))

    def accept(z):
        x, p = z[:n], z[2 * n]
        pr = problem.with_params(**{param: float(z[-1])})
        Fp = pr.Fp(x, p)
        phi = np.linalg.svd(pr.J(x, p))[0][:, -1]
        nf = max(float(np.linalg.norm(Fp)), f0)
        return "fold_degenerate" if not abs(phi @ Fp) > tol * nf else None
    return accept


def continue_point(problem, point, param, q_min, q_max, ds=0.01, fold_tol=1e-4, **trace_kw):
    """Continue a fold / branch point / stability change / coexistence point in ``param``.

    Returns a :class:`Curve` giving p(q) (and the order parameters) along the line.  A fold line
    accepts only points with ``|phi . F_p|`` > ``fold_tol`` ``|F_p|`` (phi the left null vector of F_x,
    ``|F_p|`` at least its value at the start; ``Curve.p_at`` applies the same test): a branch point
    of the problem also solves the fold system, and where the two lines approach each other a
    step could otherwise land on the branch-point line and follow it.  The end of a fold line
    that stops there has status "fold_degenerate" (fold not distinguishable from the branch
    point at ``fold_tol``).  The default 1e-4 is ~30 times the largest ``|phi . F_p| / |F_p|``
    measured at fold-system points that had landed on the SCM branch point (3e-6).
    """
    if param not in problem.params:
        raise ValueError(f"param must be one of the problem parameters {sorted(problem.params)}, got {param!r}")
    kind, G, JG, z0, q0 = _ext_problem(problem, point, param)
    if kind == "fold":
        fold_tol = float(check_range("fold_tol", fold_tol, 0.0))
        if fold_tol > 0:
            trace_kw.setdefault("accept", _fold_transversality(problem, point, param, fold_tol))
    # weighted norm of the extended unknowns: the problem's weights for x (and x2) and p,
    # 1 for null vectors and the unfolding parameter
    n = problem.n
    if problem.weights is not None:
        wx, wp = problem.weights[:n], problem.weights[n]
    else:
        wx, wp = np.ones(n), 1.0 / max(1.0, abs(float(z0[-1] if kind != "branch_point" else z0[2 * n]))) ** 2
    if kind == "coexistence":
        wz = np.concatenate([wx, wx, [wp]])
    elif kind == "fold":
        wz = np.concatenate([wx, np.ones(n), [wp]])
    elif kind == "branch_point":
        wz = np.concatenate([wx, np.ones(n), [wp, 1.0]])
    else:
        wz = np.concatenate([wx, [wp]])
    L = q_max - q_min
    wq = 1.0 / L ** 2 if math.isfinite(L) and L > 0 else 1.0
    ext = Problem(residual=G, jacobian=JG, x0=z0, p0=q0, stability="none", tol=problem.tol, rtol=problem.rtol,
                  p_name=param, weights=np.append(wz, wq))
    trace_kw.setdefault("detect", ("fold",))
    br = trace(ext, q_min, q_max, ds, **trace_kw)
    if kind == "coexistence":
        x, x2, p, b = br.x[:, :n], br.x[:, n:2 * n], br.x[:, 2 * n], None
    elif kind == "branch_point":
        x, x2, p, b = br.x[:, :n], None, br.x[:, 2 * n], br.x[:, 2 * n + 1]
    elif kind == "fold":
        x, x2, p, b = br.x[:, :n], None, br.x[:, 2 * n], None
    else:  # stability change, event
        x, x2, p, b = br.x[:, :n], None, br.x[:, n], None
    return Curve(kind=kind, param=param, q=br.p.copy(), p=p.copy(), x=x.copy(),
                 x2=None if x2 is None else x2.copy(), b=None if b is None else b.copy(),
                 status=br.status, branch=br, problem=problem, accept=trace_kw.get("accept"))


def curve_intersections(curve_a, curve_b):
    """Points (q, p) where two lines of a phase diagram cross, refined by Brent on the exact
    difference ``p_a(q) - p_b(q)`` (re-solved at each q); crossings of the polylines that the
    exact lines do not confirm are dropped.  Lines that end on each other (a degenerate
    extended system) are detected by comparing end points (see ``Curve.status``)."""
    from scipy.optimize import brentq
    out = []
    qa, pa, qb, pb = curve_a.q, curve_a.p, curve_b.q, curve_b.p
    for i in range(qa.size - 1):
        for j in range(qb.size - 1):
            # segment intersection in the (q, p) plane
            d1 = np.array([qa[i + 1] - qa[i], pa[i + 1] - pa[i]])
            d2 = np.array([qb[j + 1] - qb[j], pb[j + 1] - pb[j]])
            M = np.column_stack([d1, -d2])
            if abs(np.linalg.det(M)) < 1e-300:
                continue
            st = np.linalg.solve(M, np.array([qb[j] - qa[i], pb[j] - pa[i]]))
            if not (0 <= st[0] <= 1 and 0 <= st[1] <= 1):
                continue
            qg = qa[i] + st[0] * d1[0]
            wid = 2 * max(abs(d1[0]), abs(d2[0]))
            lo = max(qg - wid, qa[max(i - 1, 0)] if qa[i + 1] > qa[i] else qa[min(i + 2, qa.size - 1)],
                     qb[max(j - 1, 0)] if qb[j + 1] > qb[j] else qb[min(j + 2, qb.size - 1)])
            hi = min(qg + wid, qa[min(i + 2, qa.size - 1)] if qa[i + 1] > qa[i] else qa[max(i - 1, 0)],
                     qb[min(j + 2, qb.size - 1)] if qb[j + 1] > qb[j] else qb[max(j - 1, 0)])
            q, p = qg, pa[i] + st[0] * d1[1]
            try:
                g = lambda qq: curve_a.p_at(qq) - curve_b.p_at(qq)
                if not (hi > lo and g(lo) * g(hi) < 0):
                    continue  # segments cross but the exact lines do not (ends of degenerate lines)
                q = brentq(g, lo, hi, xtol=1e-14, rtol=4 * _EPS)
                p = curve_a.p_at(q)
                # a sign change of p_a - p_b across a jump (p_at switching between sheets of a
                # line that folds in q) is not a meeting point
                if abs(p - curve_b.p_at(q)) > 1e-7 * (1 + abs(p)):
                    continue
            except (ConvergenceError, ValueError):
                continue
            if not any(abs(q - o[0]) <= 1e-9 * (1 + abs(q)) for o in out):
                out.append((float(q), float(p)))
    return out

