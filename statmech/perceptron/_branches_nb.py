"""The RS branches of the four perceptron theories and their solves over many points, in numba.

Not imported for its functions: ``@kernels(include=(...))`` on
:data:`statmech.perceptron._equations._K` appends this text to the generated kernel module
after :mod:`statmech.perceptron._quadrature_nb` (channel averages ``*_at``) and
:mod:`statmech.perceptron._newton_nb` (the driver ``_solve``, ``_predict``).  The RS files
call the entry points ``ss_solve``, ``sts_solve``, ``bs_solve``, ``bts_solve``,
``bs_capacity`` and ``bts_transition`` through ``_K``, and import the column names below.

Branch maps (equation labels of ``docs/perceptron.md``), each ``f(y) = log alpha(y) - log alpha``
along the explicit RS branch:

* SS  (S2): ``y = logit q``, ``alpha(q) = q/((1-q) E IM(u)^2)``;
* STS (T2): ``y = logit R``, ``alpha(R) = R/E[2 G IM]``;
* BS  (B2): ``y = log q_hat``, ``q = E tanh^2``, ``alpha(q_hat) = q_hat (1-q)/E IM(u)^2``;
* BTS (G2): ``y = log R_hat``, ``alpha(R_hat) = R_hat (1-R)/E[2 G IM]`` (Nishimori line);

and, for the capacity and the transition, the entropy (B1) along the BS branch (BS_ENT), the
entropy (G1) and ``d log alpha/d log R_hat`` along the BTS branch (BTS_ENT, BTS_SLOPE).

Entry points take the points as rows of ``pts`` and fill one row of ``out`` per point (the
columns ``*_COLS``; the last two are the iterations and the residual).  They return
``(i, status, y, |f|, iterations)`` of the first point that failed (``i = -1``: none).
Points are visited in order, each solve started from the previous solution -- on a grid
(same kappa, steps in alpha comparable to the last) from the prediction of ``_predict``.
"""
import math
import typing

import numba
import numpy as np

if typing.TYPE_CHECKING:
    from statmech._nb import rt_bool, rt_int
    from statmech.gaussian import inv_mills_nb, log_H_nb
    from statmech.perceptron._newton_nb import (ENTROPY_POSITIVE, FB_EXPAND, FB_EXPAND_NEG, FB_POOR, FB_UNSTABLE,
                                                NO_SPINODAL, NST, OK, RAISED, ST, _brentq, _f, _forget, _history, _newton,
                                                _predict, _remember, _solve)
    from statmech.perceptron._quadrature_nb import (is_in_at, is_step_at, st_out_at, st_step_at, ts_in_at, ts_out_at,
                                                    ts_step_at)

# branch functions f(y) of _branch
SS = 0          # spherical storage: log alpha(q) - log alpha, y = logit q
STS = 1         # spherical teacher-student: log alpha(R) - log alpha, y = logit R
BS = 2          # binary storage: log alpha(q_hat) - log alpha, y = log q_hat
BTS = 3         # binary teacher-student: log alpha(R_hat) - log alpha, y = log R_hat
BS_ENT = 4      # binary storage: entropy along the branch (capacity)
BTS_SLOPE = 5   # binary teacher-student: d log alpha/d log R_hat (spinodal)
BTS_ENT = 6     # binary teacher-student: entropy along the branch (transition)

# output columns; every row ends with TAIL_COLS (the residual last: _common._run checks it)
TAIL_COLS = ("step_passes", "full_passes", "iterations", "residual")
SS_COLS = ("q", "one_q", "entropy", "gradient", "hessian", "replicon") + TAIL_COLS
STS_COLS = ("R", "one_r", "entropy", "generalization_error", "hessian", "replicon") + TAIL_COLS
BS_COLS = ("q", "q_hat", "one_q", "entropy", "eig0", "eig1", "replicon") + TAIL_COLS
BTS_COLS = ("R", "R_hat", "one_r", "entropy", "generalization_error", "eig0", "eig1", "replicon") + TAIL_COLS
TINY_ALPHA = 1e-100   # below this the O(alpha^2) corrections are below double precision


# ----------------------------------------------------------------------------- helpers
@numba.njit(cache=True)
def _expit(y):
    if y >= 0:
        return 1.0 / (1.0 + math.exp(-y))
    return math.exp(y) / (1.0 + math.exp(y))


@numba.njit(cache=True)
def _logit(q):
    return math.log(q) - math.log1p(-q)


@numba.njit(cache=True)
def _put(st, i, e):
    for v in e:
        st[i] = v
        i += 1


@numba.njit(cache=True)
def _count(st, full):
    st[st.size - 1 if full else st.size - 2] += 1


@numba.njit(cache=True)
def _record(st, into, full, ok, e, ei):
    """Count the pass; on a ``full`` successful pass store the output and input channel
    averages e, ei in ``st[into:into + 10]``.  Returns ok."""
    _count(st, full)
    if ok and full:
        _put(st, into, e)
        _put(st, into + 5, ei)
    return ok


@numba.njit(cache=True)
def _eigvalsh2(a, b, d):
    """Ascending eigenvalues of the symmetric 2x2 matrix [[a, b], [b, d]] (LAPACK, as numpy)."""
    m = np.empty((2, 2))
    m[0, 0] = a
    m[0, 1] = b
    m[1, 0] = b
    m[1, 1] = d
    return np.linalg.eigvalsh(m)


@numba.njit(cache=True)
def _max_abs2(a, b):
    """max(|a|, |b|), NaN if either is NaN (np.max of the gradient)."""
    a = abs(a)
    b = abs(b)
    if a != a or b != b:
        return math.nan
    return a if a >= b else b


@numba.njit(cache=True)
def _eg(R, p):
    """arccos(R)/pi, as arcsin(sqrt((1-R)(1+R)))/pi near R = 1 with 1 - R = p kept exactly."""
    return math.acos(R) / math.pi if R < 0.5 else math.asin(math.sqrt(p * (1 + R))) / math.pi


# ----------------------------------------------------------------------------- branch maps
@numba.njit(cache=True)
def _bin_point(qh, kappa, tab, off, full):
    """Binary-storage branch at q_hat: (ok, q, 1-q, E_t (5), E_z (5), alpha); unless
    ``full`` only the averages a Newton step needs (E_t [1:3], E_z [1, 2, 4]; others 0)."""
    if full:
        ei = is_in_at(qh, tab, off)
    else:
        s2, ds2, t2 = is_step_at(qh, tab, off)
        ei = (0.0, s2, ds2, 0.0, t2)
    q = ei[4]
    p = ei[1]
    if not (q > 0.0 and p > 0.0):
        return False, q, p, (0.0, 0.0, 0.0, 0.0, 0.0), ei, 0.0
    if full:
        e = st_out_at(q, p, kappa, tab, off)
    else:
        e1, e2 = st_step_at(q, p, kappa, tab, off)
        e = (0.0, e1, e2, 0.0, 0.0)
    if e[1] == 0.0:
        return False, q, p, e, ei, 0.0
    return True, q, p, e, ei, qh * p / e[1]


@numba.njit(cache=True)
def _bts_point(rh, tab, off, full):
    """Binary teacher-student (Nishimori) branch at R_hat: (ok, R, 1-R, E_t (5), E_z (7), alpha).
    R = E tanh = E tanh^2 and 1 - R = E sech^2: R is E tanh^2 for small R and 1 - E sech^2
    near 1 (positive integrands, no cancellation).  Unless ``full`` only the averages a
    Newton step needs (E_t [1:3], E_z [2, 4, 6]; others 0)."""
    ei = ts_in_at(rh, tab, off, full)
    p = ei[2]
    R = ei[6] if ei[6] < 0.5 else 1.0 - p
    if not (R > 0.0 and p > 0.0):
        return False, R, p, (0.0, 0.0, 0.0, 0.0, 0.0), ei, 0.0
    if full:
        e = ts_out_at(R, p, tab, off)
    else:
        e1, e2 = ts_step_at(R, p, tab, off)
        e = (0.0, e1, e2, 0.0, 0.0)
    if e[1] == 0.0:
        return False, R, p, e, ei, 0.0
    return True, R, p, e, ei, rh * p / e[1]


@numba.njit(cache=True)
def _exp_arg(y):
    """(ok, e^y): ok is False where e^y overflows or underflows to 0 (outside the branch)."""
    v = math.exp(y)
    return 0.0 < v < math.inf, v


@numba.njit(cache=True)
def _branch_bs(model, y, la, kappa, tab, off, full, st, into):
    ok, h = _exp_arg(y)
    if not ok:
        return math.nan, math.nan, False
    full = full or model == BS_ENT
    ok, q, p, e, ei, alpha = _bin_point(h, kappa, tab, off, full)
    if not _record(st, into, full, ok, e, ei):
        return math.nan, math.nan, False
    dla = 1.0 + h * ei[2] * (1.0 / p + e[2] / e[1])  # d log alpha/d log q_hat
    if model == BS_ENT:  # envelope theorem: d phi/dy = alpha E log H d log alpha/dy
        return -0.5 * h * p + ei[0] + alpha * e[0], alpha * e[0] * dla, True
    if alpha <= 0.0:
        return math.nan, math.nan, False
    return math.log(alpha) - la, dla, True


@numba.njit(cache=True)
def _branch_bts(model, y, la, tab, off, full, st, into):
    ok, h = _exp_arg(y)
    if not ok:
        return math.nan, math.nan, False
    full = full or model == BTS_ENT
    ok, R, p, e, ei, alpha = _bts_point(h, tab, off, full)
    if not _record(st, into, full, ok, e, ei):
        return math.nan, math.nan, False
    D = ei[4]  # d(1-R)/dR_hat
    slope = 1.0 + h * D / p + h * e[2] * D / e[1]  # d log alpha/d log R_hat
    if model == BTS_SLOPE:
        return slope, math.nan, True
    if model == BTS_ENT:  # envelope theorem: d phi/dy = alpha E[2 H log H] d log alpha/dy
        return -0.5 * h * (1 + R) + ei[0] + alpha * e[0], alpha * e[0] * slope, True
    if alpha <= 0.0:
        return math.nan, math.nan, False
    return math.log(alpha) - la, slope, True


@numba.njit(cache=True)
def _branch(model, y, la, kappa, tab, off, full, st, into):
    """(f, f', ok) of branch function ``model`` at y; ok = False where the branch map is
    undefined (f is then not used: the solver falls back or fails).  ``full``: evaluate the
    full channel averages and store them in ``st[into:into + ST]`` (else the step kernels);
    the pass is counted in ``st[-2]`` (step) or ``st[-1]`` (full)."""
    if model == SS or model == STS:
        R = _expit(y)  # q or R
        p = _expit(-y)
        if not (R > 0.0 and p > 0.0):
            return math.nan, math.nan, False
        _count(st, full)
        if full:
            e = st_out_at(R, p, kappa, tab, off) if model == SS else ts_out_at(R, p, tab, off)
            _put(st, into, e)
            e1, e2 = e[1], e[2]
        elif model == SS:
            e1, e2 = st_step_at(R, p, kappa, tab, off)
        else:
            e1, e2 = ts_step_at(R, p, tab, off)
        if e1 <= 0.0:
            return math.nan, math.nan, False
        if model == SS:
            return (y - math.log(e1)) - la, 1.0 - e2 / e1 * R * p, True
        return math.log(R) - math.log(e1) - la, p - e2 / e1 * R * p, True
    if model == BS or model == BS_ENT:
        return _branch_bs(model, y, la, kappa, tab, off, full, st, into)
    return _branch_bts(model, y, la, tab, off, full, st, into)


@numba.njit(cache=True)
def _tail(row, st, full, it, res):
    """The last columns (TAIL_COLS): quadrature passes of the solve (with the full pass of
    the result when the solve's last one was a step pass), iterations, residual."""
    n = row.size
    row[n - 4] = st[st.size - 2]
    row[n - 3] = st[st.size - 1] + (0.0 if full else 1.0)
    row[n - 2] = it
    row[n - 1] = res


@numba.njit(cache=True)
def _start(y0, yprev, h, la, good):
    """(start, predicted, full first evaluation): the grid prediction, else the previous
    solution, else ``y0`` (the model's cold start).  A prediction is evaluated with the full
    kernels first while the predictions are ``good`` (the last one was accepted as it was:
    one pass per point), else with the step kernels (a Newton step, then the full pass)."""
    yp = _predict(la, h)
    if yp == yp:
        return yp, True, good
    return (yprev, False, False) if yprev == yprev else (y0, False, False)


# ----------------------------------------------------------------------------- entry points
@numba.njit(cache=True)
def ss_solve(pts, q0, tab, off, nmax, bmax, out):
    """Spherical storage (S1)-(S2) at the rows (alpha, kappa, alpha_c(kappa)) of pts
    (0 <= alpha < alpha_c), the first started from q0 if in (0, 1).  Columns SS_COLS."""
    st = np.empty(NST)
    h = _history()
    good = rt_bool(True)
    # run-time values, not literals (statmech._nb): the solver chain is compiled once
    model, fb, cold = rt_int(SS), rt_int(FB_EXPAND), rt_bool(False)
    yprev = _logit(q0) if 0.0 < q0 < 1.0 else math.nan
    kprev = math.nan
    for i in range(pts.shape[0]):
        a, k, ac = pts[i, 0], pts[i, 1], pts[i, 2]
        row = out[i]
        if k != kprev:
            _forget(h)
        kprev = k
        row[:] = 0.0
        if a < TINY_ALPHA:
            # alpha = 0, or first order in alpha (exact in double precision):
            # q/(1-q) = alpha IM(kappa)^2 (S2), entropy = alpha log H(kappa) (S1)
            q = a * inv_mills_nb(k) ** 2
            row[0] = q
            row[1] = 1.0
            row[2] = a * log_H_nb(k) if a > 0.0 else 0.0
            row[4] = 0.5
            row[5] = 1.0
            yprev = _logit(q) if q > 0.0 else math.nan
            _forget(h)
            continue
        la = math.log(a)
        # cold: q/(1-q) ~ alpha IM(kappa)^2 at small alpha, 1/(1-q) ~ 1/(alpha_c - alpha) near capacity
        y0 = min(la + 2 * math.log(inv_mills_nb(k)), -math.log1p(-a / ac))
        y0, predicted, full0 = _start(y0, yprev, h, la, good)
        st[NST - 2:] = 0.0
        status, y, r, it, d, full = _solve(model, y0, math.inf, la, k, tab, off, nmax, bmax, fb, 0.0, full0, st)
        if status != OK and predicted:  # a bad prediction: start again from the previous solution
            status, y, r, it, d, full = _solve(model, yprev, math.inf, la, k, tab, off, nmax, bmax, fb, 0.0, cold, st)
        if status != OK:
            return i, status, y, abs(r), it
        q = _expit(y)
        p = _expit(-y)
        e = (st[0], st[1], st[2], st[3], st[4]) if full else st_out_at(q, p, k, tab, off)
        row[0] = q
        row[1] = p
        row[2] = 0.5 * math.log(p) + 0.5 * q / p + a * e[0]
        row[3] = 0.5 * q / (p * p) - 0.5 * a * e[1] / p
        row[4] = 0.5 * (1 + q) / (p * p * p) - 0.5 * a * (e[1] / (p * p) + e[2] / p)
        row[5] = 1.0 - a * e[3]
        s = q / p  # residual of (S2) in its natural units: q/(1-q) - alpha E IM^2
        _tail(row, st, full, it, abs(s - a * e[1]) / max(1.0, s))
        _remember(h, la, y, r, d)
        good = it == 0
        yprev = y
    return -1, OK, 0.0, 0.0, 0


@numba.njit(cache=True)
def sts_solve(pts, R0, ys, tbl, tab, off, nmax, bmax, out):
    """Spherical teacher-student (T1)-(T2) at the rows (alpha,) of pts, the first started
    from R0 if in (0, 1); a point that is not continued from a grid starts from the
    tabulated branch (ys, tbl) of ``branch_table`` (y = logit R).  Columns STS_COLS."""
    st = np.empty(NST)
    h = _history()
    good = rt_bool(True)
    # run-time values, not literals (statmech._nb): the solver chain is compiled once
    model, fb, cold = rt_int(STS), rt_int(FB_EXPAND), rt_bool(False)
    yprev = _logit(R0) if 0.0 < R0 < 1.0 else math.nan
    for i in range(pts.shape[0]):
        a = pts[i, 0]
        row = out[i]
        row[:] = 0.0
        if a < TINY_ALPHA:
            # first order in alpha is exact in double precision: R = 2 alpha/pi (T2 at R -> 0),
            # entropy = -alpha log 2 (T1), eps = 1/2 - R/pi
            R = 2.0 * a / math.pi
            row[0] = R
            row[1] = 1.0
            row[2] = -a * math.log(2.0)
            row[3] = 0.5 - R / math.pi
            row[4] = -0.5
            row[5] = 1.0
            yprev = _logit(R) if R > 0.0 else math.nan
            _forget(h)
            continue
        la = math.log(a)
        if a < 0.5:  # R ~ 2 alpha/pi at small alpha
            y0 = _logit(2 * a / math.pi)
        elif a > 20:  # 1 - R ~ (pi c/alpha)^2/2 at large alpha
            y0 = 2 * math.log(a) - math.log(0.5 * (math.pi * 0.6246582) ** 2)
        else:
            y0 = _logit(min(0.95, 2 * a / math.pi / (1 + 2 * a / math.pi)))
        yt = math.nan if i == 0 and yprev == yprev else _table_start(la, ys, tbl)
        y0, predicted, full0 = _start(y0, yt if yt == yt else yprev, h, la, good)
        st[NST - 2:] = 0.0
        status, y, r, it, d, full = _solve(model, y0, math.inf, la, 0.0, tab, off, nmax, bmax, fb, 0.0, full0, st)
        if status != OK and predicted:
            status, y, r, it, d, full = _solve(model, yprev, math.inf, la, 0.0, tab, off, nmax, bmax, fb, 0.0, cold, st)
        if status != OK:
            return i, status, y, abs(r), it
        R = _expit(y)
        p = _expit(-y)
        e = (st[0], st[1], st[2], st[3], st[4]) if full else ts_out_at(R, p, tab, off)
        row[0] = R
        row[1] = p
        row[2] = 0.5 * math.log(p) + 0.5 * R + a * e[0]
        row[3] = _eg(R, p)
        row[4] = 0.5 * (a * e[1] - 1.0) / (p * p) + 0.5 * a * e[2] / p
        row[5] = 1.0 - a * e[3]
        _tail(row, st, full, it, abs(R - a * e[1]))  # (T2); R ~ 1 sets the scale
        _remember(h, la, y, r, d)
        good = it == 0
        yprev = y
    return -1, OK, 0.0, 0.0, 0


@numba.njit(cache=True)
def bs_solve(pts, qh0, tab, off, nmax, bmax, out):
    """Binary storage (B1)-(B2) at the rows (alpha, kappa) of pts (alpha below the
    Gardner-Derrida alpha), the first started from qh0 if > 0.  Columns BS_COLS; the
    thermodynamics at the branch's alpha(q_hat) (equal to alpha at the root to |f|)."""
    st = np.empty(NST)
    h = _history()
    good = rt_bool(True)
    # run-time values, not literals (statmech._nb): the solver chain is compiled once
    model, fb, cold = rt_int(BS), rt_int(FB_EXPAND), rt_bool(False)
    yprev = math.log(qh0) if qh0 > 0.0 else math.nan
    kprev = math.nan
    for i in range(pts.shape[0]):
        a, k = pts[i, 0], pts[i, 1]
        row = out[i]
        row[:] = 0.0
        if k != kprev:
            _forget(h)
        kprev = k
        if a < TINY_ALPHA:
            # alpha = 0, or first order in alpha (exact in double precision): q = q_hat = alpha IM^2
            qh = a * inv_mills_nb(k) ** 2
            ev = _eigvalsh2(0.0, 0.5, -0.5)
            row[0] = qh
            row[1] = qh
            row[2] = 1.0
            row[3] = math.log(2.0) + a * log_H_nb(k) if a > 0.0 else math.log(2.0)
            row[4] = ev[0]
            row[5] = ev[1]
            row[6] = 1.0
            yprev = math.log(qh) if qh > 0.0 else math.nan
            _forget(h)
            continue
        la = math.log(a)
        y0, predicted, full0 = _start(la + 2 * math.log(inv_mills_nb(k)), yprev, h, la, good)
        st[NST - 2:] = 0.0
        status, y, r, it, d, full = _solve(model, y0, math.inf, la, k, tab, off, nmax, bmax, fb, 0.0, full0, st)
        if status != OK and predicted:
            status, y, r, it, d, full = _solve(model, yprev, math.inf, la, k, tab, off, nmax, bmax, fb, 0.0, cold, st)
        if status != OK:
            return i, status, y, abs(r), it
        qh = math.exp(y)
        if full:
            e = (st[0], st[1], st[2], st[3], st[4])
            ei = (st[5], st[6], st[7], st[8], st[9])
            q, p = ei[4], ei[1]
            ab = qh * p / e[1]
        else:
            ok, q, p, e, ei, ab = _bin_point(qh, k, tab, off, rt_bool(True))
            if not ok:
                return i, RAISED, y, math.inf, it
        row[0] = q
        row[1] = qh
        row[2] = p
        row[3] = -0.5 * qh * p + ei[0] + ab * e[0]
        ev = _eigvalsh2(-0.5 * ab * (e[1] / (p * p) + e[2] / p), 0.5, 0.5 * ei[2])
        row[4] = ev[0]
        row[5] = ev[1]
        row[6] = 1.0 - ab * e[3] * ei[3] / (p * p)
        # residual: the gradient of (B1) at the alpha asked for (at the branch's alpha(q_hat)
        # its first component vanishes identically)
        _tail(row, st, full, it, _max_abs2(0.5 * qh - 0.5 * a * e[1] / p, 0.5 * (ei[1] - p)) / max(1.0, qh))
        _remember(h, la, y, r, d)
        good = it == 0
        yprev = y
    return -1, OK, 0.0, 0.0, 0


@numba.njit(cache=True)
def bs_capacity(pts, tab, off, nmax, bmax, out):
    """Zero-entropy (Krauth-Mezard) capacity at the rows (kappa,) of pts: the root in
    log q_hat of the RS entropy along the branch, Newton from 0.5 with the envelope-theorem
    derivative, else bracketed from 0 on -phi.  Columns ("alpha",) + TAIL_COLS (residual 0)."""
    st = np.empty(NST)
    model, fb, cold = rt_int(BS_ENT), rt_int(FB_EXPAND_NEG), rt_bool(False)  # run-time values
    for i in range(pts.shape[0]):
        k = pts[i, 0]
        st[NST - 2:] = 0.0
        status, y, r, it, d, full = _solve(model, 0.5, math.inf, 0.0, k, tab, off, nmax, bmax, fb, 0.0, cold, st)
        if status != OK:
            return i, status, y, abs(r), it
        ok, q, p, e, ei, a = _bin_point(math.exp(y), k, tab, off, cold)
        _count(st, cold)
        if not ok:
            return i, RAISED, y, math.inf, it
        out[i, 0] = a
        _tail(out[i], st, rt_bool(True), it, 0.0)
    return -1, OK, 0.0, 0.0, 0


@numba.njit(cache=True)
def _bts_alpha_R(y, tab, off):
    """(alpha, R_hat, R) of the binary teacher-student branch at y = log R_hat."""
    rh = math.exp(y)
    ok, R, p, e, ei, a = _bts_point(rh, tab, off, rt_bool(False))
    return a if ok else math.nan, rh, R


@numba.njit(cache=True)
def bts_transition(tab, off, nmax, bmax):
    """Spinodal (root of d log alpha/d log R_hat, scanned up from log R_hat = -2 in steps of
    1/4, then Brent) and first-order transition (root of the poor-branch entropy below y_sp:
    Newton from y_sp - 0.7, else Brent in (-8, y_sp)).
    Returns (status, y, |f|, (y_sp, alpha_sp, R_hat_sp, R_sp, y_c, alpha_c, R_hat_c, R_c))."""
    st = np.zeros(NST)
    nan = math.nan
    none = (nan, nan, nan, nan, nan, nan, nan, nan)
    slope, ent = rt_int(BTS_SLOPE), rt_int(BTS_ENT)  # run-time values (statmech._nb)
    y = -2.0
    g_prev = _f(slope, 1.0, y, 0.0, 0.0, tab, off, st)
    while g_prev > 0:
        y_new = y + 0.25
        g = _f(slope, 1.0, y_new, 0.0, 0.0, tab, off, st)
        if g <= 0:
            break
        y, g_prev = y_new, g
        if y > 6:
            return NO_SPINODAL, y, g, none
    status, ysp, r, it = _brentq(slope, 1.0, y, y + 0.25, 0.0, 0.0, tab, off, bmax, st)
    if status != OK:
        return status, ysp, r, none
    s = _f(ent, 1.0, ysp, 0.0, 0.0, tab, off, st)
    if not s < 0:
        return ENTROPY_POSITIVE, ysp, s, none
    # Newton from y_sp - 0.7 below y_sp (envelope-theorem derivative), else Brent in (-8, y_sp)
    status, yc, r, it, d, full = _newton(ent, ysp - 0.7, ysp, 0.0, 0.0, tab, off, nmax, rt_bool(False), st)
    if status != OK:
        status, yc, r, it = _brentq(ent, 1.0, -8.0, ysp, 0.0, 0.0, tab, off, bmax, st)
    if status != OK:
        return status, yc, r, none
    asp, rhsp, Rsp = _bts_alpha_R(ysp, tab, off)
    ac, rhc, Rc = _bts_alpha_R(yc, tab, off)
    return OK, yc, r, (ysp, asp, rhsp, Rsp, yc, ac, rhc, Rc)


@numba.njit(cache=True)
def branch_table(model, ys, tab, off, out):
    """The branch ``model`` (STS, or BTS below the spinodal: log alpha increasing in y)
    tabulated at the points ``ys``: rows (log alpha(y), d log alpha/dy)."""
    st = np.zeros(NST)
    for i in range(ys.size):
        f, d, ok = _branch(model, ys[i], 0.0, 0.0, tab, off, rt_bool(False), st, rt_int(ST))
        out[i, 0] = f if ok else math.nan
        out[i, 1] = d if ok else math.nan


@numba.njit(cache=True)
def _table_start(la, ys, tbl):
    """y(log alpha) on a branch by cubic Hermite interpolation of the table of
    ``branch_table`` (slopes dy/d log alpha = 1/(d log alpha/dy)); NaN outside it."""
    n = ys.size
    if not (tbl[0, 0] <= la < tbl[n - 1, 0]):
        return math.nan
    lo, hi = 0, n - 1
    while hi - lo > 1:  # tbl[:, 0] increases along the branch
        mid = (lo + hi) // 2
        if tbl[mid, 0] <= la:
            lo = mid
        else:
            hi = mid
    x0, x1 = tbl[lo, 0], tbl[hi, 0]
    hh = x1 - x0
    t = (la - x0) / hh
    t2 = t * t
    t3 = t2 * t
    y = ((2 * t3 - 3 * t2 + 1) * ys[lo] + (t3 - 2 * t2 + t) * hh / tbl[lo, 1]
         + (3 * t2 - 2 * t3) * ys[hi] + (t3 - t2) * hh / tbl[hi, 1])
    if not (ys[lo] <= y <= ys[hi]):  # no overshoot (near the BTS spinodal the slope diverges)
        y = ys[lo] + t * (ys[hi] - ys[lo])
    return y


@numba.njit(cache=True)
def bts_solve(pts, ysp, asp, ys, tbl, tab, off, nmax, bmax, out):
    """Binary teacher-student (G1)-(G2) at the rows (alpha, unstable) of pts, 0 < alpha <=
    alpha_sp: the poor branch (unstable = 0; Newton below y_sp from the tabulated branch
    (ys, tbl) of ``branch_table``, else from min(log alpha, y_sp - 0.7); on failure a
    walk down from y_sp) or the unstable one (a walk up from y_sp).  Columns BTS_COLS."""
    st = np.empty(NST)
    model, cold = rt_int(BTS), rt_bool(False)  # run-time values (statmech._nb)
    for i in range(pts.shape[0]):
        a = pts[i, 0]
        row = out[i]
        la = math.log(a)
        full = False
        st[NST - 2:] = 0.0
        if a == asp:
            status, y, r, it = OK, ysp, 0.0, 0
        elif pts[i, 1] != 0.0:
            status, y, r, it, d, full = _solve(model, 0.0, math.inf, la, 0.0, tab, off, nmax, bmax, rt_int(FB_UNSTABLE),
                                               ysp, cold, st)
        else:
            y0 = _table_start(la, ys, tbl)
            y0 = min(la, ysp - 0.7) if y0 != y0 else y0
            status, y, r, it, d, full = _solve(model, y0, ysp, la, 0.0, tab, off, nmax, bmax, rt_int(FB_POOR), ysp, cold, st)
        if status != OK:
            return i, status, y, abs(r), it
        rh = math.exp(y)
        if full:
            e = (st[0], st[1], st[2], st[3], st[4])
            ei = (st[5], st[6], st[7], st[8], st[9], st[10], st[11])
            p = ei[2]
            R = ei[6] if ei[6] < 0.5 else 1.0 - p
        else:
            ok, R, p, e, ei, ab = _bts_point(rh, tab, off, rt_bool(True))
            if not ok:
                return i, RAISED, y, math.inf, it
        row[0] = R
        row[1] = rh
        row[2] = p
        row[3] = -0.5 * rh * (1 + R) + ei[0] + a * e[0]
        row[4] = _eg(R, p)
        ev = _eigvalsh2(0.5 * a * (e[1] / (p * p) + e[2] / p), -0.5, 0.5 * (ei[4] - 2 * ei[3]))
        row[5] = ev[0]
        row[6] = ev[1]
        row[7] = 1.0 - a * e[3] * ei[5] / (p * p)
        _tail(row, st, full, it, _max_abs2(-0.5 * rh + 0.5 * a * e[1] / p, 0.5 * (p + ei[2] - 2 * ei[1])) / max(1.0, rh))
    return -1, OK, 0.0, 0.0, 0
