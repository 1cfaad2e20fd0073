"""Special points between two accepted steps: detection by sign changes of the test functions
(dp/ds, the bordered determinant, the stability margin, the events), location by Brent's
method along the arclength, and the polish of branch points on Govaerts' regular system."""
from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from ..errors import ConvergenceError
from . import _kernels
from ._corrector import _EPS, _Corrector, _tangent, _wnorm
from ._problem import _dJ_dx, _Eval, _J_p
from ._results import SpecialPoint


def _sgn(v):
    return 1 if v > 0 else (-1 if v < 0 else 0)


class _Locator:
    """Detection and location of the special points between two accepted steps of a trace
    (the base of the tracer, :class:`statmech.continuation._trace._Tracer`, which adds the
    step loop)."""

    def __init__(self, prob, detect):
        self.prob = prob
        self.w = prob.w
        self.detect = set(detect)
        self.corr = _Corrector(prob)
        self.loc_tol = max(prob.tol * 1e-2, 1e-14)
        self.unlocated = []

    # --------------------------------------------------------------- location
    def _y_at(self, a, sigma, cache, interp=False, evals=None):
        """Corrected point at projected arclength sigma from accepted point a (along a.t); the
        evaluation there goes into ``evals`` (sigma -> evaluation) when given."""
        key = float(sigma)
        if key in cache:
            return cache[key]
        y_pred = a.y + sigma * a.t
        start = None
        if cache:
            nearest = min(cache, key=lambda k: abs(k - key))
            start = cache[nearest] + (sigma - nearest) * a.t
        r = self.corr(y_pred, a.t, self.loc_tol, y_start=start)
        if r is None:
            r = self.corr(y_pred, a.t, self.prob.tol, y_start=None)
        if r is None and interp:
            # next to a branch point the bordered corrector is singular: interpolate between
            # the nearest corrected points on either side (the point is polished afterwards)
            lo = max((k for k in cache if k < key), default=None)
            hi = min((k for k in cache if k > key), default=None)
            if lo is not None and hi is not None:
                lam = (key - lo) / (hi - lo)
                return (1 - lam) * cache[lo] + lam * cache[hi]
        if r is None:
            raise ConvergenceError("continuation: corrector failed while locating a special point",
                                   x=y_pred, diagnostics={"sigma": sigma})
        cache[key] = r[0]
        if evals is not None and r[3] is not None:
            evals[key] = r[3]
        return r[0]

    def _tau(self, kind, idx, a, y, e=None):
        """Test function of ``kind`` at y (``e``: the evaluation at y, if at hand)."""
        prob, w = self.prob, self.w
        x, p = y[:-1], y[-1]
        if kind == "event":
            return float(list(prob.events.values())[idx](x, p, **prob.params))
        if e is None:
            e = _Eval.at(prob, y)
        if kind == "stability_change":
            return prob.margin(x, p, e.J)
        if kind == "branch_point":
            sg, ld = _kernels.bordered_slogdet(e.J, e.Fp, w * a.t)
            return float(sg * math.exp(min(ld - a.logdet, 700.0)))
        t = _tangent(e, w * a.t, w)
        return float(t[-1]) if t is not None else 0.0

    def _locate(self, kind, idx, a, b, h):
        """Zero of the test function of ``kind`` between the accepted points a and b (step h):
        Brent along the arclength (its end values are those the detection saw), to 1e-14 in the
        arclength -- 1e-12 for a fold, where p is quadratic in it, and 1e-7 h for a branch point,
        which is then polished on Govaerts' regular system (its test function is rounding noise
        within ~1e-7 h of it: the bordered corrector is singular there; Brent resumes to 1e-14
        if the polish fails).  Returns (y, tangent, sigma, residual)."""
        from scipy.optimize import brentq
        cache = {0.0: a.y, float(h): b.y}
        evals = {}
        bp = kind == "branch_point"
        taus = {0.0: _end_value(kind, idx, a, a), float(h): _end_value(kind, idx, a, b)}

        def phi(sg):
            sg = float(sg)
            v = taus.get(sg)
            if v is None:
                y = self._y_at(a, sg, cache, interp=bp, evals=evals)
                v = taus[sg] = self._tau(kind, idx, a, y, evals.get(sg))
            return v
        f0, f1 = phi(0.0), phi(h)
        if f0 == 0.0:
            sig = 0.0
        elif f1 == 0.0:
            sig = float(h)
        elif f0 * f1 > 0:
            # the test function did not change sign on the corrected segment: take the
            # end with the smaller value (should not happen; recorded as residual)
            sig = 0.0 if abs(f0) < abs(f1) else float(h)
        else:
            xtol = {"fold": 1e-12, "branch_point": 1e-7 * h}.get(kind, 1e-14)
            sig = brentq(phi, 0.0, h, xtol=xtol, rtol=4 * _EPS, maxiter=200)
        y = self._y_at(a, sig, cache, interp=bp, evals=evals)
        if bp:
            y_pol = _polish_branch_point(self.prob, y, self.loc_tol, max_move=max(h, _wnorm(self.w, b.y - a.y)))
            if y_pol is None and f0 * f1 < 0:
                # not polished: the tightest bracket seen, then Brent to the rounding level
                lo = max(k for k, v in taus.items() if v * f0 > 0)
                hi = min(k for k, v in taus.items() if v * f1 > 0)
                if lo < hi:
                    sig = brentq(phi, lo, hi, xtol=1e-14, rtol=4 * _EPS, maxiter=200)
                y = self._y_at(a, sig, cache, interp=bp, evals=evals)
            elif y_pol is not None:
                y = y_pol
        e = evals.get(float(sig)) if y is cache.get(float(sig)) else None
        if e is None:
            e = _Eval.at(self.prob, y)
        if kind == "branch_point":
            # the tangent is continuous through a branch point but the bordered system is
            # singular there: project the interpolated tangent on the null space of [F_x, F_p]
            lam = sig / h if h else 0.0
            ti = (1 - lam) * a.t + lam * b.t
            _, _, vt = np.linalg.svd(e.A)
            basis = vt[-2:]
            t = basis.T @ (basis @ ti)
            t = t / _wnorm(self.w, t)
        else:
            t = _tangent(e, self.w * a.t, self.w)
        if t is None:
            t = a.t
        res = float(np.max(np.abs(e.F))) if e.F.size else 0.0
        return y, t, sig, res, e

    def _detect(self, a, b, h, s0):
        prob, w = self.prob, self.w
        found = []
        if "fold" in self.detect and _sgn(a.t[-1]) * _sgn(b.t[-1]) < 0:
            found.append(("fold", -1))
        if "branch_point" in self.detect and _sgn(a.det) * _sgn(b.det) < 0:
            found.append(("branch_point", -1))
        stab = prob.stability_mode != "none"
        if "stability_change" in self.detect and stab and _sgn(a.margin) * _sgn(b.margin) < 0:
            found.append(("stability_change", -1))
        if "event" in self.detect:
            for i in range(a.ev.size):
                if _sgn(a.ev[i]) * _sgn(b.ev[i]) < 0 or (b.ev[i] == 0 and a.ev[i] != 0):
                    found.append(("event", i))
        out = []
        names = list(prob.events)
        gradient = prob.stability_mode in ("min", "max")
        for kind, idx in found:
            if kind == "stability_change" and gradient:
                q = self._at_singular_point(out, a, b, h)
                if q is not None:
                    out.append(q)
                    continue
            try:
                y, t, sig, res, e = self._locate(kind, idx, a, b, h)
            except ConvergenceError:
                # bracketed but not located (corrector failure inside the step): report the
                # bracket, never a wrong point
                self.unlocated.append((kind, float(a.y[-1]), float(b.y[-1])))
                continue
            out.append(SpecialPoint(
                kind=kind, p=float(y[-1]), x=y[:-1].copy(), f=e.f,
                s=s0 + _wnorm(w, y - a.y), stable_before=bool(a.margin > 0), stable_after=bool(b.margin > 0),
                tangent=t, residual=res, name=names[idx] if kind == "event" else None, names=prob.names))
        # stability changes at folds / branch points
        for i, sp_ in enumerate(out):
            if sp_.kind != "stability_change" or sp_.coincides is not None:
                continue
            for other in out:
                if other.kind in ("fold", "branch_point") and \
                        _wnorm(w, np.append(other.x - sp_.x, other.p - sp_.p)) <= 1e-6 * (1 + _wnorm(w, np.append(sp_.x, sp_.p))):
                    out[i] = replace(sp_, coincides=other.kind)
                    break
        return sorted(out, key=lambda q: q.s)

    def _at_singular_point(self, out, a, b, h):
        """A stability change of a gradient system (the Hessian's smallest eigenvalue crossing 0)
        in a step where a branch point or a fold was located: the Hessian is singular there, so it
        is that point -- taken as is, not located again.  Next to a branch point the bordered
        corrector is ill-conditioned, so the (polished) branch point is always taken; a fold is
        taken if the margin there is 0 to within what a linear margin across the step puts
        within 1e-6 (1 + |y|_W) of it (the proximity test below).  None otherwise."""
        bps = [q for q in out if q.kind == "branch_point"]
        folds = [q for q in out if q.kind == "fold"]
        for q in bps + folds:
            if q.kind == "fold":
                yq = np.append(q.x, q.p)
                m = self.prob.margin(q.x, q.p)
                slope = (abs(a.margin) + abs(b.margin)) / h if h else math.inf
                if not abs(m) <= 1e-6 * (1 + _wnorm(self.w, yq)) * slope:
                    continue
            return replace(q, kind="stability_change", stable_before=bool(a.margin > 0),
                           stable_after=bool(b.margin > 0), coincides=q.kind, name=None)
        return None


def _end_value(kind, idx, a, pt):
    """The test function of ``kind`` at an accepted point pt of the step from a, as the detection
    saw it (None where it must be evaluated: the branch-point determinant is taken relative to
    a's bordered matrix, which is 1 at a)."""
    if kind == "fold":
        return float(pt.t[-1])
    if kind == "stability_change":
        return float(pt.margin)
    if kind == "event":
        return float(pt.ev[idx])
    return float(pt.det) if pt is a else None


def _bp_residual(prob, x, ph, p, b, sJ, sP):
    """Govaerts' regular system for a branch point in the unknowns (x, phi, p, b): F + b phi = 0,
    F_x^T phi = 0, F_p.phi = 0, |phi|^2 = 1 (the F_x^T phi rows scaled by the size sJ of F_x, the
    F_p.phi row by that of F_p).  Returns the residual, F_x and F_p."""
    e = _Eval(prob, x, p)
    F, Jx, Fp = e.F, e.J, e.Fp
    return np.concatenate([F + b * ph, Jx.T @ ph / sJ, [Fp @ ph / sP, ph @ ph - 1.0]]), Jx, Fp


def _bp_jacobian(prob, x, ph, p, b, Jx, Fp, sJ, sP, d3):
    """Jacobian of :func:`_bp_residual` from F_x, F_p and d3 = d(F_x^T phi)/dx / sJ (third
    derivatives, by differences of F_x); dF_x/dp by :func:`_J_p`.  The entry d(F_p.phi)/dp is
    left 0 (it vanishes when F is affine in p)."""
    n = x.size
    Jpp = _J_p(prob, x, p)
    M = np.zeros((2 * n + 2, 2 * n + 2))
    M[:n, :n] = Jx
    M[:n, n:2 * n] = b * np.eye(n)
    M[:n, 2 * n] = Fp
    M[:n, 2 * n + 1] = ph
    M[n:2 * n, :n] = d3
    M[n:2 * n, n:2 * n] = Jx.T / sJ
    M[n:2 * n, 2 * n] = Jpp.T @ ph / sJ
    M[2 * n, :n] = (Jpp.T @ ph) / sP  # d(F_p.phi)/dx = (dF_x/dp)^T phi
    M[2 * n, n:2 * n] = Fp / sP
    M[2 * n + 1, n:2 * n] = 2 * ph
    return M


def _polish_branch_point(prob, y, tol, max_move=math.inf):
    """Newton on Govaerts' regular branch-point system from a located estimate.

    Unknowns (x, phi, p, b): F + b phi = 0, F_x^T phi = 0, F_p.phi = 0, |phi|^2 = 1.  The Jacobian
    uses F_x and F_p exactly and differences of F_x for the third derivatives.  An iterate counts
    once the Newton correction of (x, p) computed there is below 1e-8 relative (a small residual
    alone does not make a branch point: where F_x is nearly singular along the branch the
    residual is small everywhere); Newton stops when the residual reaches ``tol`` or no longer
    drops 4x per step at such an iterate (the rounding floor of F).  Returns the counted iterate
    of smallest residual as (x, p), or None when there is none within 10 prob.tol, b is not ~0
    (no branch point), or the point moved by more than max_move.
    """
    n = prob.n
    x, p = y[:-1].copy(), float(y[-1])
    e = _Eval(prob, x, p)
    J = e.J
    if not np.all(np.isfinite(J)):
        return None
    _, _, vt = np.linalg.svd(J.T)
    ph = vt[-1].copy()
    b = 0.0
    sJ = max(1.0, float(np.max(np.abs(J))))
    sP = max(1.0, float(np.max(np.abs(e.Fp))))

    best = None
    prev = math.inf
    for it in range(25):
        G, Jx, Fp = _bp_residual(prob, x, ph, p, b, sJ, sP)
        if not np.all(np.isfinite(G)):
            break
        res = float(np.max(np.abs(G)))
        if res <= tol:
            best = (res, x.copy(), p, b)
            break
        M = _bp_jacobian(prob, x, ph, p, b, Jx, Fp, sJ, sP, _dJ_dx(prob, x, p, ph, transpose=True, scale=sJ))
        try:
            dz = np.linalg.solve(M, -G)
        except np.linalg.LinAlgError:
            break
        if not np.all(np.isfinite(dz)):
            break
        small = max(float(np.max(np.abs(dz[:n]) / (1 + np.abs(x)))), abs(dz[2 * n]) / (1 + abs(p))) <= 1e-8
        if small and (best is None or res < best[0]):
            best = (res, x.copy(), p, b)
        if small and res > 0.25 * prev and best[0] <= 10 * prob.tol:
            break
        prev = res
        x = x + dz[:n]
        ph = ph + dz[n:2 * n]
        p = p + dz[2 * n]
        b = b + dz[2 * n + 1]
        if np.max(np.abs(dz)) <= 1e-14 * (1 + max(np.max(np.abs(x)), abs(p))):
            G, _, _ = _bp_residual(prob, x, ph, p, b, sJ, sP)
            res = float(np.max(np.abs(G)))
            if best is None or res < best[0]:
                best = (res, x.copy(), p, b)
            break
    if best is None or best[0] > 10 * prob.tol or abs(best[3]) > 1e-8:
        return None
    y_new = np.append(best[1], best[2])
    if _wnorm(prob.w, y_new - y) > max_move:
        return None
    return y_new
