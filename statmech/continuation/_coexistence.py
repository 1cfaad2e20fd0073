"""First-order transitions: equal free energy of two branches (or two sheets of one branch)."""
from __future__ import annotations

import math

import numpy as np

from ..saddle import newton
from . import _kernels
from ._corrector import _EPS, _Corrector, _newton_retry, _scaled_ok
from ._problem import _Eval, _fixed_p, _memo_last
from ._results import CoexistencePoint


def _sheets(br):
    """Index ranges [i0, i1] on which p is monotone along the branch (split at folds)."""
    dp = np.diff(br.p)
    out = []
    i0 = 0
    for i in range(1, dp.size):
        if (dp[i] > 0) != (dp[i - 1] > 0) and dp[i] != 0 and dp[i - 1] != 0:
            out.append((i0, i))
            i0 = i
    out.append((i0, br.p.size - 1))
    return [(a, b) for a, b in out if b > a]


def _sheet_guess(br, sheet, p):
    """(guess, size of the enclosing step) for the point of sheet (i0, i1) of br at parameter p,
    from the Hermite interpolant of the two nodes around p; None if p is outside the sheet."""
    i0, i1 = sheet
    ps = br.p[i0:i1 + 1]
    lo, hi = min(ps[0], ps[-1]), max(ps[0], ps[-1])
    if not lo <= p <= hi:
        return None
    inc = ps[-1] >= ps[0]
    k = int(np.searchsorted(ps if inc else -ps, p if inc else -p))
    k = min(max(k, 1), ps.size - 1)
    return _hermite_guess(br, i0 + k - 1, p), float(np.max(np.abs(br.x[i0 + k] - br.x[i0 + k - 1]))) + 1e-12


def _on_sheet(prob, br, sheet, p):
    """Exact point of sheet (i0, i1) of br at parameter p (None if outside or failing)."""
    guess = _sheet_guess(br, sheet, p)
    if guess is None:
        return None
    xg, seg = guess
    F, J = _fixed_p(prob, p)
    r = newton(F, xg, J, tol=prob.tol, maxiter=30, raise_on_fail=False)
    # accept a Newton stalled at the rounding floor of F (within 1000 tol, or a componentwise
    # backward error below rtol)
    if not (r.converged or r.residual <= 1e3 * prob.tol or _scaled_ok(prob, r.x, p)) or \
            np.max(np.abs(r.x - xg)) > 2 * seg:
        return None
    return r.x


def _sheet_sample(prob, br, sheet, p, corr):
    """The point of a sheet at p for tabulating f1 - f2 (None if outside or failing): the
    corrector ``corr`` at fixed p (the bordering row fixes p: Newton on F(., p) = 0 with the
    noise-floor acceptance of the corrector) from the Hermite guess, to the problem's tol --
    f is stationary, so its error is second order in that of x -- with the guess within two
    steps of the branch (the branch-jump guard of :func:`_on_sheet`).  Returns (x, f)."""
    guess = _sheet_guess(br, sheet, p)
    if guess is None:
        return None
    xg, seg = guess
    t = np.zeros(prob.n + 1)
    t[-1] = 1.0 / math.sqrt(corr.w[-1])
    r = corr(np.append(xg, p), t, prob.tol)
    if r is None:
        # the undamped corrector can diverge from a poor guess (a long step near the domain's
        # edge): Newton with a line search (:func:`_on_sheet`) then
        x = _on_sheet(prob, br, sheet, p)
        return None if x is None else (x, prob.f(x, p))
    if np.max(np.abs(r[0][:-1] - xg)) > 2 * seg:
        return None
    return r[0][:-1], (r[3].f if r[3] is not None else prob.f(r[0][:-1], p))


def _hermite_guess(br, j, p):
    """x at parameter p between the nodes j and j + 1 of a branch: the cubic Hermite interpolant
    of y = (x, p) in the arclength through both nodes and their tangents (error O(h^4) in the
    step h, against O(h^2) for the chord), at the arclength where its p-component equals p
    (:func:`_kernels.hermite_at_p`); the chord's x when that fails or leaves the problem's domain
    (a long step along a branch near the domain's edge, where the cubic overshoots)."""
    pa, pb = br.p[j], br.p[j + 1]
    h = br.s[j + 1] - br.s[j]
    if h > 0:
        x, ok = _kernels.hermite_at_p(br.x[j], pa, br.x[j + 1], pb, br.tangent[j], br.tangent[j + 1], h, p)
        if ok and (br.problem is None or br.problem.ok(x, p)):
            return x
    lam = 0.0 if pb == pa else (p - pa) / (pb - pa)
    return (1 - lam) * br.x[j] + lam * br.x[j + 1]


def _sheet_point(prob, br, sheet, p, corr):
    """(x, f) of a sheet at p: the node when p is one, else :func:`_sheet_sample` (None if failing)."""
    i0, i1 = sheet
    hit = np.nonzero(br.p[i0:i1 + 1] == p)[0]
    if hit.size:
        return br.x[i0 + hit[0]], br.f[i0 + hit[0]]
    return _sheet_sample(prob, br, sheet, p, corr)


def _sample(prob, branch_a, sa, branch_b, sb, p, corr):
    """(f1 - f2, x1, x2, p) of two sheets at p, or None when a sheet is missing there or both
    meet (x1 = x2 to 1e-7)."""
    a = _sheet_point(prob, branch_a, sa, p, corr)
    b = _sheet_point(prob, branch_b, sb, p, corr)
    if a is None or b is None or np.max(np.abs(b[0] - a[0])) <= 1e-7 * (1 + np.max(np.abs(b[0]))):
        return None
    return a[1] - b[1], a[0], b[0], p


def _coexistence_evals(prob, z):
    """The problem evaluated at both points of z = (x1, x2, p)."""
    n = prob.n
    return _Eval(prob, z[:n], z[-1]), _Eval(prob, z[n:2 * n], z[-1])


def _coexistence_residual(prob, z, scale, evals=None):
    """Coexistence system at z = (x1, x2, p): F(x1) = F(x2) = 0, (f(x1) - f(x2))/scale = 0
    (``evals``: :func:`_coexistence_evals` at z, if at hand)."""
    ea, eb = evals or _coexistence_evals(prob, z)
    return np.concatenate([ea.F, eb.F, [(ea.f - eb.f) / scale]])


def _coexistence_jacobian(prob, z, scale, evals=None):
    """Jacobian of :func:`_coexistence_residual` (bordered by the p column and the f-difference row)."""
    n = prob.n
    ea, eb = evals or _coexistence_evals(prob, z)
    M = np.zeros((2 * n + 1, 2 * n + 1))
    M[:n, :n] = ea.J
    M[:n, -1] = ea.Fp
    M[n:2 * n, n:2 * n] = eb.J
    M[n:2 * n, -1] = eb.Fp
    M[-1, :n] = ea.grad_f / scale
    M[-1, n:2 * n] = -eb.grad_f / scale
    M[-1, -1] = (ea.f_p - eb.f_p) / scale
    return M


def _refine_coexistence(prob, x1, x2, p):
    scale = max(1.0, abs(prob.f(x1, p)))
    ev = _memo_last(lambda z: _coexistence_evals(prob, z))

    def G(z):
        return _coexistence_residual(prob, z, scale, ev(z))

    def JG(z):
        return _coexistence_jacobian(prob, z, scale, ev(z))

    z0 = np.concatenate([x1, x2, [p]])
    return _newton_retry(G, z0, JG, (max(prob.tol * 1e-2, 1e-14), prob.tol), maxiter=40)


def _sheets_cross(d0, d1):
    """Do the two sheets cross between the samples d0 and d1 (each (df, x1, x2, p))?  Their
    difference x2 - x1, interpolated linearly, nearly vanishes inside (it turns by more than ~150
    degrees: at a transversal crossing it reverses).  f1 - f2 then changes sign at the crossing
    (as (p - p_c)^3 at a transcritical branch point) without any first-order transition."""
    a, b = d0[2] - d0[1], d1[2] - d1[1]
    d = b - a
    dd = float(d @ d)
    u = min(max(-float(a @ d) / dd, 0.0), 1.0) if dd > 0 else 0.0
    gap = np.linalg.norm(a + u * d)
    return bool(gap <= 0.25 * min(np.linalg.norm(a), np.linalg.norm(b)))


def _coexistence_from(prob, d0, d1, idx, out):
    """Refine a bracketed sign change of f1 - f2 (samples (df, x1, x2, p)) into a CoexistencePoint,
    or None (Newton failing, a degenerate solution, or a duplicate of one in ``out``)."""
    n = prob.n
    lam = d0[0] / (d0[0] - d1[0]) if d0[0] != d1[0] else 0.0
    x1 = (1 - lam) * d0[1] + lam * d1[1]
    x2 = (1 - lam) * d0[2] + lam * d1[2]
    p = (1 - lam) * d0[3] + lam * d1[3]
    r = _refine_coexistence(prob, x1, x2, p)
    if not r.converged:
        return None
    z = r.x
    x1r, x2r, pr = z[:n], z[n:2 * n], float(z[-1])
    # a degenerate solution (two sheets meeting at a branch point or fold, where
    # f1 - f2 vanishes to high order and Newton stops within tolerance of it):
    # no jump in x, or no jump in df/dp (no latent heat)
    if np.max(np.abs(x1r - x2r)) <= 1e-5 * (1 + np.max(np.abs(x1r))):
        return None
    e1, e2 = _Eval(prob, x1r, pr), _Eval(prob, x2r, pr)
    fp1, fp2 = e1.f_p, e2.f_p
    if abs(fp1 - fp2) <= 1e-10 * (1 + abs(fp1)):
        return None
    # |f1 - f2| / latent heat estimates the error in p: with a tiny latent heat a residual
    # within tol can still leave p off by much more than tol (rounding floor of f excepted)
    f1 = e1.f
    if abs(f1 - e2.f) > max(1e-9 * abs(fp1 - fp2) * max(1.0, abs(pr)), 64 * _EPS * max(1.0, abs(f1))):
        return None
    if any(abs(c.p - pr) <= 1e-9 * (1 + abs(pr)) and
           np.max(np.abs(c.x1 - x1r)) + np.max(np.abs(c.x2 - x2r)) <= 1e-7 for c in out):
        return None
    return CoexistencePoint(p=pr, x1=x1r, x2=x2r, f=f1, stable1=bool(prob.margin(x1r, pr, e1.J) > 0),
                            stable2=bool(prob.margin(x2r, pr, e2.J) > 0), residual=float(r.residual), branches=idx)


def coexistence(branch_a, branch_b=None, *, _idx=(None, None)):
    """First-order transition points between two branches (or within one branch).

    See the :mod:`statmech.continuation` docstring.  Requires a problem with a free energy.
    """
    prob = branch_a.problem
    if prob is None or prob.free_energy is None:
        raise ValueError("branch_a must come from a Problem with a free_energy")
    same = branch_b is None
    branch_b = branch_a if same else branch_b
    out = []
    corr = _Corrector(prob, maxit=30)
    sheets_a = _sheets(branch_a)
    sheets_b = _sheets(branch_b)
    for ia, sa in enumerate(sheets_a):
        for ib, sb in enumerate(sheets_b):
            if same and ib <= ia:
                continue
            pa_, pb_ = branch_a.p[sa[0]:sa[1] + 1], branch_b.p[sb[0]:sb[1] + 1]
            lo, hi = max(pa_.min(), pb_.min()), min(pa_.max(), pb_.max())
            if not lo < hi:
                continue
            # sample both sheets at every node of either inside the overlap; each sheet is
            # monotone in p, so p parametrizes its arclength
            grid = np.unique(np.concatenate([pa_[(pa_ >= lo) & (pa_ <= hi)], pb_[(pb_ >= lo) & (pb_ <= hi)],
                                             [lo, hi]]))
            samples = [_sample(prob, branch_a, sa, branch_b, sb, pv, corr) for pv in grid]
            for j in range(len(samples) - 1):
                d0, d1 = samples[j], samples[j + 1]
                if d0 is None or d1 is None or d0[0] * d1[0] > 0 or _sheets_cross(d0, d1):
                    continue
                # Newton from the linear interpolation of f1 - f2 between the two nodes; if that
                # fails or degenerates (a tiny latent heat: the interpolation may land next to a
                # fold, where the coexistence system is nearly singular), shrink the bracket by
                # bisection along the two sheets (both re-solved exactly at each p) and retry
                c = _coexistence_from(prob, d0, d1, _idx, out)
                if c is None:
                    for _ in range(40):
                        if abs(d1[3] - d0[3]) <= 1e-8 * (1 + abs(d0[3])):
                            break
                        dm = _sample(prob, branch_a, sa, branch_b, sb, 0.5 * (d0[3] + d1[3]), corr)
                        if dm is None or not math.isfinite(dm[0]):
                            break
                        if dm[0] == 0.0 or ((dm[0] > 0) == (d0[0] > 0) and d0[0] != 0.0):
                            d0 = dm
                        else:
                            d1 = dm
                    c = _coexistence_from(prob, d0, d1, _idx, out)
                if c is not None:
                    out.append(c)
    out.sort(key=lambda c: c.p)
    return out

