"""The root finders of the perceptron's saddle-point solves, inside numba: one generic driver.

Not imported for its functions: ``@kernels(include=(...))`` on
:data:`statmech.perceptron._equations._K` appends this text to the generated kernel module
after :mod:`statmech.perceptron._quadrature_nb`, before :mod:`statmech.perceptron._branches_nb`,
whose ``_branch(model, y, ...)`` -- ``(f, f', ok)`` of the branch function ``model`` at ``y``
-- is the one function called here.  :mod:`statmech.perceptron._common` imports the status
codes below.

Every model is solved as one scalar root ``f(y) = 0`` along its RS branch:

* ``_newton`` -- Newton with backtracking on ``|f|`` from :func:`statmech.saddle.newton`
  (tolerances 1e-14 on ``|f|`` and on the step, Armijo factor 1e-4, 40 halvings, domain
  ``y < hi``; a trial step where the branch map is undefined, e.g. q underflowing to 0, is
  halved like a step that does not decrease ``|f|``), with two more ways to stop: at a
  point with ``|f| <= 1e-14`` whose Newton correction ``|f/f'|`` is within the step
  tolerance (<= 1e-14 (1 + |y|)), where ``saddle.newton`` would take that last step and
  stop (the step itself changes y by no more than that), so that a solve started on the
  root (the predicted start of a grid point) costs one quadrature pass; at a point where
  ``|f|`` is at round-off (<= 4 eps (1 + |y| + |log alpha|)), the root known as well as f
  determines it (where f' -> 0, e.g. q -> 1, the correction f/f' of that noise exceeds the
  step tolerance); and where a step from ``|f| <= 1e-14`` does not halve ``|f|``.  Far from the root the
  branch is evaluated with the step kernels (``E IM^2`` and its derivative only); once
  ``|f| <= 1e-7`` with the full kernels, whose channel averages at the accepted point are
  kept in ``st`` for the result (no pass is repeated);
* on failure the bracketed fallback: expansion from the start (``_expand``) or a walk from
  the spinodal (``_walk``), then ``_brentq``, a transcription of scipy's ``brentq``
  (``scipy/optimize/Zeros/brentq.c``; xtol 1e-15, rtol 4 eps) as used by
  :func:`statmech.saddle.root_scalar`;
* ``_predict`` -- the start of the next point of a grid from the last two solutions
  (cubic Hermite in ``log alpha`` with the slopes ``dy/d log alpha = 1/f'``, corrected by
  the error of the last such prediction).
"""
import math
import typing

import numba
import numpy as np

from statmech._nb import rt_bool, rt_int

if typing.TYPE_CHECKING:
    from statmech.perceptron._branches_nb import _branch

# status codes (messages in statmech.perceptron._common._FAILURES)
OK = 0
NEWTON_FAILED = 1     # newton did not converge (internal: the fallback runs)
RAISED = 2            # the branch map left its domain (log of a non-positive number, overflow)
NOT_BRACKETED = 3     # bracket expansion / walk did not find a sign change
NO_SIGN_CHANGE = 4    # Brent called on an interval without a sign change
BRENT_NAN = 5         # Brent met a NaN
BRENT_MAXITER = 6     # Brent did not converge in maxiter iterations
NO_SPINODAL = 7       # d log alpha/d log R_hat stays positive
ENTROPY_POSITIVE = 8  # poor-branch entropy positive at the spinodal

# fallbacks of _solve
FB_EXPAND = 0      # bracket expansion from the start, then Brent
FB_EXPAND_NEG = 1  # the same on -f, from y = 0 (capacity)
FB_POOR = 2        # walk down from the spinodal, then Brent (poor branch)
FB_UNSTABLE = 3    # no Newton: walk up from the spinodal, then Brent (unstable branch)

NEWTON_TOL = 1e-14    # on |f| (f is a log alpha or an entropy: O(1))
NEWTON_XTOL = 1e-14   # on the last step, relative to 1 + |y|
ROUNDOFF = 2e-15      # a prediction error below ROUNDOFF (1 + |y|) is round-off (_predict)
FLOOR = 4 * 2.220446049250313e-16   # |f| <= FLOOR (1 + |y| + |log alpha|): f at round-off
NEAR = 1e-7           # |f| below which the next evaluation is expected to be the last
MAX_BACKTRACK = 40
EXPAND_MAX = 60
BRENT_XTOL = 1e-15
BRENT_RTOL = 4 * 2.220446049250313e-16
ST = 12               # length of the state (channel averages) of one branch point
NST = 2 * ST + 2      # the work array st: state of the result, of a trial, pass counters


@numba.njit(cache=True)
def _norm(v):
    """|v|, inf if v is not finite (the max-norm of statmech.saddle for one unknown)."""
    a = abs(v)
    return a if a <= 1.7976931348623157e308 else math.inf


@numba.njit(cache=True)
def _newton(model, y0, hi, la, kappa, tab, off, maxiter, full0, st):
    """Newton on f = ``_branch(model, .)`` from y0 below hi (module docstring).
    ``st[:ST]`` receives the state at the result when it was evaluated with the full
    kernels, ``st[ST:2 ST]`` is scratch, ``st[2 ST:]`` counts the passes (see ``_branch``).
    Returns (status, y, f(y), iterations, f'(y), full)."""
    x = y0
    if hi < math.inf and not x < hi:
        return NEWTON_FAILED, x, math.nan, 0, math.nan, False
    full = full0
    f, d, ok = _branch(model, x, la, kappa, tab, off, full, st, rt_int(0))
    if not ok:
        return RAISED, x, math.nan, 0, math.nan, False
    norm = _norm(f)
    step_ok = False
    it = 0
    while it < maxiter:
        it += 1
        if not norm < math.inf:
            break
        if norm <= NEWTON_TOL and (step_ok or norm <= FLOOR * (1.0 + _norm(x) + abs(la))
                                   or _norm(f / d) <= NEWTON_XTOL * (1.0 + _norm(x))):
            return OK, x, f, it - 1, d, full
        dx = -f / d if d != 0.0 else math.nan
        if not _norm(dx) < math.inf:
            break
        lam = 1.0
        accepted = False
        trial_full = norm <= NEAR
        xn = fn = dn = nn = 0.0
        for _ in range(MAX_BACKTRACK):
            xn = x + lam * dx
            if hi == math.inf or xn < hi:
                fn, dn, ok = _branch(model, xn, la, kappa, tab, off, trial_full, st, rt_int(ST))
                nn = _norm(fn)
                if ok and (nn <= (1 - 1e-4 * lam) * norm or nn <= NEWTON_TOL):
                    accepted = True
                    break
            lam *= 0.5
        if not accepted:
            if norm <= NEWTON_TOL:
                return OK, x, f, it, d, full
            break
        step_ok = _norm(xn - x) <= NEWTON_XTOL * (1.0 + _norm(xn))
        # |f| <= tol already and the step did not halve it: f is at its round-off floor
        # (where f' -> 0, e.g. q -> 1, the correction f/f' of that noise exceeds the step
        # tolerance and the iteration would wander until maxiter)
        stalled = norm <= NEWTON_TOL and nn > 0.5 * norm
        x, f, d, norm, full = xn, fn, dn, nn, trial_full
        if full:
            for j in range(ST):  # element loop (docs/developing.md: no array-to-slice assignment)
                st[j] = st[ST + j]
        if norm <= NEWTON_TOL and (step_ok or stalled):
            return OK, x, f, it, d, full
    if norm <= NEWTON_TOL:
        return OK, x, f, it, d, full
    return NEWTON_FAILED, x, f, it, d, False


@numba.njit(cache=True)
def _f(model, sgn, y, la, kappa, tab, off, st):
    """sgn * f(y), NaN where the branch map is undefined."""
    f, _, ok = _branch(model, y, la, kappa, tab, off, rt_bool(False), st, rt_int(ST))
    return sgn * f if ok else math.nan


@numba.njit(cache=True)
def _brentq(model, sgn, xa, xb, la, kappa, tab, off, maxiter, st):
    """Root of sgn * f in [xa, xb]: statmech.saddle.root_scalar, i.e. scipy.optimize.brentq
    (xtol = 1e-15, rtol = 4 eps) after checking the sign change.
    Returns (status, root, |f(root)|, iterations)."""
    fpre = _f(model, sgn, xa, la, kappa, tab, off, st)
    fcur = _f(model, sgn, xb, la, kappa, tab, off, st)
    if not (abs(fpre) < math.inf and abs(fcur) < math.inf) or fpre * fcur > 0:
        return NO_SIGN_CHANGE, xb, min(abs(fpre), abs(fcur)), 0
    xpre, xcur = xa, xb
    if fpre == 0:
        return OK, xpre, 0.0, 0
    if fcur == 0:
        return OK, xcur, 0.0, 0
    xblk = fblk = spre = scur = 0.0
    for i in range(maxiter):
        if fpre != 0 and fcur != 0 and ((fpre < 0) != (fcur < 0)):
            xblk = xpre
            fblk = fpre
            spre = scur = xcur - xpre
        if abs(fblk) < abs(fcur):
            xpre = xcur
            xcur = xblk
            xblk = xpre
            fpre = fcur
            fcur = fblk
            fblk = fpre
        delta = (BRENT_XTOL + BRENT_RTOL * abs(xcur)) / 2
        sbis = (xblk - xcur) / 2
        if fcur == 0 or abs(sbis) < delta:
            return OK, xcur, abs(fcur), i + 1
        if abs(spre) > delta and abs(fcur) < abs(fpre):
            if xpre == xblk:  # interpolate
                stry = -fcur * (xcur - xpre) / (fcur - fpre)
            else:  # extrapolate
                dpre = (fpre - fcur) / (xpre - xcur)
                dblk = (fblk - fcur) / (xblk - xcur)
                stry = -fcur * (fblk * dblk - fpre * dpre) / (dblk * dpre * (fblk - fpre))
            if 2 * abs(stry) < min(abs(spre), 3 * abs(sbis) - delta):
                spre = scur  # good short step
                scur = stry
            else:
                spre = sbis
                scur = sbis
        else:
            spre = sbis
            scur = sbis
        xpre = xcur
        fpre = fcur
        if abs(scur) > delta:
            xcur += scur
        else:
            xcur += delta if sbis > 0 else -delta
        fcur = _f(model, sgn, xcur, la, kappa, tab, off, st)
        if math.isnan(fcur):
            return BRENT_NAN, xcur, math.inf, i + 1
    return BRENT_MAXITER, xcur, abs(fcur), maxiter


@numba.njit(cache=True)
def _expand(model, sgn, y0, la, kappa, tab, off, maxiter, st):
    """Bracket a root of the increasing sgn * f by doubling steps from y0, then Brent;
    iterations = expansion steps + Brent iterations."""
    f0 = _f(model, sgn, y0, la, kappa, tab, off, st)
    if f0 == 0.0:
        return OK, y0, 0.0, 0
    a = b = y0
    fa = fb = f0
    n = 0
    step = 1.0
    if f0 < 0:
        while fb < 0:
            a, fa = b, fb
            b = b + step
            fb = _f(model, sgn, b, la, kappa, tab, off, st)
            step *= 2.0
            n += 1
            if n > EXPAND_MAX:
                return NOT_BRACKETED, b, abs(fb), n
    else:
        while fa > 0:
            b, fb = a, fa
            a = a - step
            fa = _f(model, sgn, a, la, kappa, tab, off, st)
            step *= 2.0
            n += 1
            if n > EXPAND_MAX:
                return NOT_BRACKETED, a, abs(fa), n
    status, y, r, it = _brentq(model, sgn, a, b, la, kappa, tab, off, maxiter, st)
    return status, y, r, it + n


@numba.njit(cache=True)
def _walk(model, start, step, limit, end, la, kappa, tab, off, maxiter, st):
    """From ``start``, step by ``step`` while f > 0 (up to ``limit``), then Brent between
    the point reached and ``end`` (the spinodal); iterations = Brent iterations."""
    y = start
    while True:
        fy = _f(model, 1.0, y, la, kappa, tab, off, st)
        if math.isnan(fy):
            return RAISED, y, math.inf, 0
        if not fy > 0:
            break
        y += step
        if (step < 0 and y < limit) or (step > 0 and y > limit):
            return NOT_BRACKETED, y, abs(fy), 0
    if step < 0:
        return _brentq(model, 1.0, y, end, la, kappa, tab, off, maxiter, st)
    return _brentq(model, 1.0, end, y, la, kappa, tab, off, maxiter, st)


@numba.njit(cache=True)
def _solve(model, y0, hi, la, kappa, tab, off, nmax, bmax, fallback, ysp, full0, st):
    """Newton from y0 (below hi), and on failure the bracketed fallback.
    Returns (status, y, f(y), iterations, f'(y) or NaN, full: st[:ST] holds the state at y)."""
    if fallback != FB_UNSTABLE:
        status, y, f, it, d, full = _newton(model, y0, hi, la, kappa, tab, off, nmax, full0, st)
        if status == OK:
            return status, y, f, it, d, full
    if fallback == FB_EXPAND:
        status, y, r, it = _expand(model, 1.0, y0, la, kappa, tab, off, bmax, st)
    elif fallback == FB_EXPAND_NEG:
        status, y, r, it = _expand(model, -1.0, 0.0, la, kappa, tab, off, bmax, st)
    elif fallback == FB_POOR:
        status, y, r, it = _walk(model, ysp - 1.0, -2.0, -750.0, ysp, la, kappa, tab, off, bmax, st)
    else:
        status, y, r, it = _walk(model, ysp + 0.5, 0.5, math.log(700.0), ysp, la, kappa, tab, off, bmax, st)
    return status, y, r, it, math.nan, False


@numba.njit(cache=True)
def _predict(la, h):
    """Start of the root at log alpha = la continued from the last solutions of a grid,
    ``h = [la1, y1, m1, la0, y0, m0, n, e, p]`` (``_history``: the last two solutions, most
    recent first, m = dy/d log alpha = 1/f', n of them known; e the error of the last
    cubic prediction, p the cubic prediction made here): the cubic Hermite extrapolation
    through the last two -- corrected by the last one's error scaled as (step)^4 when that
    error was above round-off (the smooth truncation error of a grid) --, else a Newton step
    from the last one, or NaN (no safe prediction: the step is more than twice the last,
    turns back, or moves y by more than 1/2)."""
    h[8] = math.nan
    n = h[6]
    if n < 1:
        return math.nan
    d1 = la - h[0]
    if n >= 2:
        hh = h[0] - h[3]
        if hh != 0.0 and d1 * hh > 0 and abs(d1) <= 2.0 * abs(hh):
            t = (la - h[3]) / hh
            t2 = t * t
            t3 = t2 * t
            y = ((2 * t3 - 3 * t2 + 1) * h[4] + (t3 - 2 * t2 + t) * hh * h[5]
                 + (3 * t2 - 2 * t3) * h[1] + (t3 - t2) * hh * h[2])
            h[8] = y
            if abs(h[7]) > ROUNDOFF * (1.0 + abs(y)):
                y += h[7] * (d1 / hh) ** 4
            if abs(y - h[1]) <= 0.5:
                return y
    step = d1 * h[2]
    return h[1] + step if abs(step) <= 0.5 else math.nan


@numba.njit(cache=True)
def _history():
    """An empty history of ``_predict``."""
    h = np.zeros(9)
    h[7] = h[8] = math.nan
    return h


@numba.njit(cache=True)
def _forget(h):
    """Restart the history (a new curve: kappa changed, a closed-form point, a fallback)."""
    h[6] = 0.0
    h[7] = math.nan


@numba.njit(cache=True)
def _remember(h, la, y, f, d):
    """Push the solution (la, y, slope 1/f') onto the history of ``_predict``, y corrected
    by the Newton step -f/f' not taken (the root to the round-off of f: a prediction from
    these is not limited by the acceptance tolerance), with the error of its cubic
    prediction; a solution without its derivative (bracketed fallback) restarts the history."""
    if d != 0.0 and abs(d) < math.inf and abs(f) < math.inf:
        yc = y - f / d
        h[7] = yc - h[8]  # NaN unless predicted by the cubic
        for j in range(3):
            h[3 + j] = h[j]
        h[0] = la
        h[1] = yc
        h[2] = 1.0 / d
        h[6] = min(h[6] + 1.0, 2.0)
    else:
        _forget(h)
