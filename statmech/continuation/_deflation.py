"""All solutions at fixed p by deflated Newton (Farrell, Birkisson and Funke 2015)."""
from __future__ import annotations

import math

import numpy as np

from ..errors import ConvergenceError, check_finite, check_range
from ..saddle import SaddlePoint, newton
from . import _kernels
from ._corrector import _fixed_p_retry
from ._problem import _Eval, _memo_last


class _Stalled(Exception):
    """Raised inside Newton's Jacobian call when the deflated iteration has stalled."""


def _stall_guard(G, JG, tol):
    """(G, JG) for :func:`statmech.saddle.newton` (tolerance ``tol``) that give up (raise
    :class:`_Stalled`) once the iteration stalls: three consecutive iterations that each needed a
    damped step (lambda < 1) and together reduced max|G| by less than 10%, or a line search
    that has halved 12 times at a point within 10 tol (above tol) -- the rounding floor of G,
    where Newton cannot converge.  Deflated Newton fails the first way once every root reachable
    from the start is deflated -- it sinks into a minimum of |M F| that is not a root, with ever
    smaller steps -- and would otherwise spend up to ``maxiter`` iterations of 40 backtracking
    steps each there.  A converging iteration takes full steps (or halves a few times, with a
    large decrease) and is not affected."""
    hist = []  # (max|G| at the accepted point, number of G evaluations it took)
    count = [0, math.inf]

    def G2(x):
        if count[0] > 12 and hist and tol < hist[-1][0] <= 10 * tol:
            raise _Stalled
        v = G(x)
        count[0] += 1
        count[1] = float(np.max(np.abs(v))) if v.size else 0.0
        return v

    def JG2(x):
        hist.append((count[1], count[0]))
        count[0] = 0
        if len(hist) >= 4 and all(k > 1 for _, k in hist[-3:]) and not hist[-1][0] < 0.9 * hist[-4][0]:
            raise _Stalled
        return JG(x)
    return G2, JG2


def deflate(problem, p, starts=None, max_solutions=20, power=2.0, shift=1.0, maxiter=40):
    """All solutions of ``F(x, p) = 0`` found by deflated Newton from the starts.

    Returns a list of :class:`SaddlePoint` (``order_params`` by name, ``thermo`` with
    the free energy, ``hessian_eigenvalues`` of the Jacobian's symmetric part, and
    ``rs_stable`` = the problem's stability criterion), sorted by the first component.
    """
    p = float(check_finite("p", p))
    max_solutions = int(check_range("max_solutions", max_solutions, 1, 10 ** 4))
    power = float(check_range("power", power, 0.0, lo_open=True))
    shift = float(check_range("shift", shift, 0.0))
    starts = [problem.x0] if starts is None else [np.atleast_1d(np.asarray(s, dtype=float)) for s in starts]
    found = []
    tol = problem.tol
    dom = None if problem.in_domain is None else (lambda xx: problem.ok(xx, p))
    ev = _memo_last(lambda x: _Eval(problem, x, p))
    for x_start in starts:
        if dom is not None and not dom(x_start):
            continue
        for _ in range(max_solutions):
            # M(x) = prod_i (|x - x_i|^-power + shift) over the roots found, and its gradient
            roots = np.array(found, dtype=float).reshape(len(found), x_start.size)
            deflation = _memo_last(lambda x, roots=roots: _kernels.deflation_factor(x, roots, power, shift))

            def G(x):
                m, _ = deflation(x)
                if not math.isfinite(m):
                    return np.full(x.size, math.inf)
                return m * ev(x).F

            def JG(x):
                m, gm = deflation(x)
                e = ev(x)
                return m * e.J + np.outer(e.F, gm)

            try:
                G2, JG2 = _stall_guard(G, JG, tol)
                r = newton(G2, x_start, JG2, tol=tol, maxiter=maxiter, raise_on_fail=False, in_domain=dom)
            except (ConvergenceError, _Stalled):
                break
            if not r.converged:
                break
            # polish on the undeflated system (from a root of the deflated one: Newton takes full
            # steps, and a line search only fails at the rounding floor, below the first tolerance)
            r2 = _fixed_p_retry(problem, p, r.x, (tol * 1e-2, tol), maxiter=30, in_domain=dom, max_backtrack=4)
            if not r2.converged:
                break
            if any(np.max(np.abs(r2.x - q)) <= 1e-8 * (1 + np.max(np.abs(q))) for q in found):
                break
            found.append(r2.x)
            if len(found) >= max_solutions:
                break
        if len(found) >= max_solutions:
            break
    found.sort(key=lambda v: tuple(v))
    names = problem.names or tuple(f"x{i}" for i in range(problem.n))
    out = []
    for x in found:
        e = _Eval(problem, x, p)
        J = e.J
        eig = np.linalg.eigvalsh(0.5 * (J + J.T))
        mg = problem.margin(x, p, J)
        res = float(np.max(np.abs(e.F)))
        thermo = {} if problem.free_energy is None else {"free_energy": e.f}
        out.append(SaddlePoint("continuation.deflate", {problem.p_name: p}, dict(zip(names, map(float, x))),
                               thermo, True, res, 0, eig, None, None if mg == math.inf else bool(mg > 0),
                               {"x": x}))
    return out

