"""The Newton solves of the GLM saddle points, one driver for every theory, inside numba.

Not imported for its functions: appended to a family's generated kernel module by
:mod:`statmech.glm._codegen`.  ``_eval(th, y, alpha, ...)`` is the theory's residual and Jacobian
(``th`` = 0: ERM, :func:`statmech.glm._erm_nb.erm_eval`; 1: Gibbs learning,
:func:`statmech.glm._gibbs_nb.gib_eval`), each returning ``F`` scaled to relative size and the
state of the point (order parameters, conjugates, averages, observables) in ``st``.  On top:

* :func:`sv_newton` -- Newton's method with backtracking on ``max|F|`` (Armijo factor 1e-4, 40
  halvings), converged when ``max|F| <= 1e-13`` and the last step or the next Newton correction
  (from the Jacobian at hand) is below ``1e-13 (1 + max|y|)``; also accepted at ``max|F| <= 1e-11``
  when no step decreases ``|F|`` (round-off floor);
* :func:`sv_cold` -- a solve from nothing: Newton along ``alpha_k`` growing geometrically from
  ``1e-3 alpha`` (ERM: after ten plain fixed-point steps at the first point, a contraction there);
* :func:`sv_curve` -- a whole curve in one call: each point predicted by Lagrange extrapolation in
  ``log alpha`` through the last three, then Newton; a failed point is bridged from the previous
  one by geometric sub-steps.
"""
import math
import typing

import numba
import numpy as np

from statmech._linalg_nb import lu_solve

if typing.TYPE_CHECKING:
    from statmech.glm._erm_nb import E_DOMAIN, E_FLOOR, E_MAXIT, E_NEWTON, E_OK, E_PATH, E_PROX, E_TOL, E_XTOL
    from statmech.glm._erm_nb import ch_test_error, erm_eval
    from statmech.glm._gibbs_nb import gib_eval
    from statmech.glm._erm_nb import E_NFUN
    from statmech.glm._prox_nb import fn_struct


@numba.njit(cache=True)
def _eval(th, yv, alpha, kind, rho, beta, md, rule, F, J, st):
    if th == 0:
        return erm_eval(yv, alpha, kind == 1, rho, md, rule, F, J, st)
    return gib_eval(yv, alpha, kind, rho, beta, md, rule, F, J, st)


@numba.njit(cache=True)
def _maxabs(F):
    s = 0.0
    for i in range(F.shape[0]):
        a = abs(F[i])
        if not a <= 1.7976931348623157e308:
            return math.inf
        if a > s:
            s = a
    return s


@numba.njit(cache=True)
def sv_newton(th, yv, alpha, kind, rho, beta, md, rule, st, info):
    """Newton's method with backtracking on max|F| from ``yv`` (updated in place).
    ``info`` <- (status, residual, iterations)."""
    F = np.empty(3)
    J = np.empty((3, 3))
    Ft = np.empty(3)
    Jt = np.empty((3, 3))
    stt = np.empty(15)
    yt = np.empty(3)
    status = _eval(th, yv, alpha, kind, rho, beta, md, rule, F, J, st)
    if status != E_OK:
        info[0] = status
        info[1] = math.inf
        info[2] = 0
        return
    norm = _maxabs(F)
    step_ok = False
    it = 0
    for it in range(1, E_MAXIT + 1):
        if norm <= E_TOL and (step_ok or norm <= 1e-2 * E_TOL):
            info[0] = E_OK
            info[1] = norm
            info[2] = it - 1
            return
        M = J.copy()
        dy = -F.copy()
        if not lu_solve(M, dy):
            break
        lam = 1.0
        accepted = False
        for _ in range(40):
            for i in range(3):
                yt[i] = yv[i] + lam * dy[i]
            s2 = _eval(th, yt, alpha, kind, rho, beta, md, rule, Ft, Jt, stt)
            if s2 == E_OK:
                nn = _maxabs(Ft)
                if nn <= (1.0 - 1e-4 * lam) * norm or nn <= E_TOL:
                    accepted = True
                    break
            lam *= 0.5
        if not accepted:
            if norm <= E_FLOOR:
                info[0] = E_OK
                info[1] = norm
                info[2] = it
                return
            break
        stepn = 0.0
        ymax = 0.0
        for i in range(3):
            stepn = max(stepn, abs(yt[i] - yv[i]))
            ymax = max(ymax, abs(yt[i]))
            yv[i] = yt[i]
        step_ok = stepn <= E_XTOL * (1.0 + ymax)
        for i in range(3):
            F[i] = Ft[i]
            for j in range(3):
                J[i, j] = Jt[i, j]
        for i in range(15):
            st[i] = stt[i]
        norm = nn
        if norm <= E_TOL and step_ok:
            info[0] = E_OK
            info[1] = norm
            info[2] = it
            return
        if norm <= E_TOL:
            # the next Newton correction, from the Jacobian at hand: within the step tolerance?
            M = J.copy()
            dy = -F.copy()
            if lu_solve(M, dy) and _maxabs(dy) <= E_XTOL * (1.0 + ymax):
                info[0] = E_OK
                info[1] = norm
                info[2] = it
                return
        if step_ok and norm <= E_FLOOR:
            info[0] = E_OK
            info[1] = norm
            info[2] = it
            return
    info[0] = E_OK if norm <= E_FLOOR else E_NEWTON
    info[1] = norm
    info[2] = it


@numba.njit(cache=True)
def sv_cold(th, alpha, kind, y0, rho, beta, md, rule, st, info, frac=1e-3):
    """Solve at ``alpha`` from the small-alpha end: Newton along alpha_k = alpha0 r^k (geometric,
    the step shrunk when Newton fails, the start predicted linearly in log alpha); ``y0`` is the
    starting guess at alpha0 = alpha 10^-3, improved first by ten plain fixed-point steps (a
    contraction at small alpha).  Result in ``y0`` (in place)."""
    a0 = alpha * frac
    F = np.empty(3)
    J = np.empty((3, 3))
    # a few plain fixed-point steps at a0 (each maps x to x'(hats(x)))
    for _ in range(10 if th == 0 else 0):
        s = _eval(th, y0, a0, kind, rho, beta, md, rule, F, J, st)
        if s != E_OK:
            break
        m, q, V = st[0], st[1], st[2]
        mp = m - F[0] * math.sqrt(rho * q)
        qp = q - F[1] * q
        Vp = V - F[2] * V
        if not (qp > 0.0 and Vp > 0.0):
            break
        tq = mp / math.sqrt(rho * qp)
        if not abs(tq) < 1.0:
            break
        y0[0] = math.atanh(tq)
        if kind == 0:
            y0[1] = math.log(qp)
        y0[2] = math.log(Vp)
    sv_newton(th, y0, a0, kind, rho, beta, md, rule, st, info)
    if info[0] != E_OK:
        return
    la = math.log(a0)
    lt = math.log(alpha)
    h = 0.5 * math.log(10.0)
    yp = y0.copy()
    lp = la
    have_prev = False
    ys = np.empty(3)
    total = info[2]
    while la < lt:
        ln = min(la + h, lt)
        for i in range(3):
            ys[i] = y0[i]
            if have_prev:
                y0[i] = y0[i] + (y0[i] - yp[i]) * (ln - la) / (la - lp)
        sv_newton(th, y0, math.exp(ln), kind, rho, beta, md, rule, st, info)
        total += info[2]
        if info[0] != E_OK:
            for i in range(3):
                y0[i] = ys[i]
            h *= 0.5
            if h < 1e-4:
                info[0] = E_PATH
                return
            continue
        for i in range(3):
            yp[i] = ys[i]
        lp = la
        la = ln
        have_prev = True
        h = min(h * 1.5, 1.2)
    info[2] = total


@numba.njit(cache=True)
def sv_curve(th, alphas, y0, kind, rho, beta, md, rule, out, obs, cold):
    """Solutions at the increasing ``alphas`` (one call): the first from ``y0`` (cold path when
    ``cold``), each next one from the linear prediction in log alpha.  ``out[i]`` =
    (status, residual, iterations, y0, y1, y2, m, q, V, mh, qh, Vh, Phi_out, Phi_w); ``obs[i]``
    the observables (as :func:`erm_observe`) at the accepted point."""
    st = np.empty(15)
    info = np.empty(3)
    y = y0.copy()
    hist = np.empty((3, 3))     # the last three solutions (rows: newest first)
    lh = np.empty(3)            # their log alpha
    nh = 0
    for i in range(alphas.shape[0]):
        a = alphas[i]
        ysave = y.copy()
        if i == 0 and cold:
            sv_cold(th, a, kind, y, rho, beta, md, rule, st, info)
        else:
            # predictor: Lagrange extrapolation in log alpha through the last (up to) three solutions
            la = math.log(a)
            if nh >= 2:
                npt = 3 if nh >= 3 else 2
                for j in range(3):
                    val = 0.0
                    for k in range(npt):
                        wk = 1.0
                        for l in range(npt):
                            if l != k:
                                wk *= (la - lh[l]) / (lh[k] - lh[l])
                        val += wk * hist[k, j]
                    y[j] = val
            sv_newton(th, y, a, kind, rho, beta, md, rule, st, info)
            if info[0] != E_OK:
                # retry: the path from the previous solution
                for j in range(3):
                    y[j] = ysave[j]
                if i > 0:
                    _bridge(th, alphas[i - 1], a, y, kind, rho, beta, md, rule, st, info)
                else:
                    sv_cold(th, a, kind, y, rho, beta, md, rule, st, info)
        out[i, 0] = info[0]
        out[i, 1] = info[1]
        out[i, 2] = info[2]
        for j in range(3):
            out[i, 3 + j] = y[j]
        for j in range(8):
            out[i, 6 + j] = st[j]
        if info[0] != E_OK:
            for k in range(i + 1, alphas.shape[0]):
                out[k, 0] = E_PATH
            return
        for j in range(7):
            obs[i, j] = st[8 + j]
        obs[i, 3] = ch_test_error(st[0], st[1], rho, md, rule)
        for k in range(2, 0, -1):
            lh[k] = lh[k - 1]
            for j in range(3):
                hist[k, j] = hist[k - 1, j]
        lh[0] = math.log(a)
        for j in range(3):
            hist[0, j] = y[j]
        nh = min(nh + 1, 3)


@numba.njit(cache=True)
def _bridge(th, a_from, a_to, y, kind, rho, beta, md, rule, st, info):
    """Newton along geometric steps from a converged y at a_from to a_to (halving on failure)."""
    la = math.log(a_from)
    lt = math.log(a_to)
    h = (lt - la) * 0.5
    ys = np.empty(3)
    total = 0.0
    for _ in range(200):
        if abs(lt - la) <= 1e-15 * (1.0 + abs(lt)):
            break
        ln = la + h if abs(h) < abs(lt - la) else lt
        for i in range(3):
            ys[i] = y[i]
        sv_newton(th, y, math.exp(ln), kind, rho, beta, md, rule, st, info)
        total += info[2]
        if info[0] != E_OK:
            for i in range(3):
                y[i] = ys[i]
            h *= 0.5
            if abs(h) < 1e-6:
                info[0] = E_PATH
                return
            continue
        la = ln
        h *= 1.5
    info[2] = total




@numba.njit(cache=True)
def refresh_structs(md):
    """Recompute the structure rows of every function in place (after a change of ``par``)."""
    cfg, terms, tw, par, sts, tmix = md
    for k in range(cfg[E_NFUN]):
        fn_struct(k, par, sts[k])


@numba.njit(cache=True)
def sv_path(th, alpha, pidx, pvals, logp, y0, kind, rho, beta, md, rule, out, obs, cold):
    """Solutions at fixed ``alpha`` along the parameter ``par[pidx]`` = ``pvals`` (in order), each
    predicted by Lagrange extrapolation (in ``log`` of the parameter when ``logp``) through the
    last three, a failed point bridged by halved sub-steps from the previous one.  ``out``/``obs``
    as in :func:`sv_curve`.  ``par[pidx]`` is left at the last value solved."""
    par = md[3]
    st = np.empty(15)
    info = np.empty(3)
    y = y0.copy()
    hist = np.empty((3, 3))
    lh = np.empty(3)
    nh = 0
    for i in range(pvals.shape[0]):
        v = pvals[i]
        ysave = y.copy()
        if i == 0:
            par[pidx] = v
            refresh_structs(md)
            if cold:
                sv_cold(th, alpha, kind, y, rho, beta, md, rule, st, info)
            else:
                sv_newton(th, y, alpha, kind, rho, beta, md, rule, st, info)
        else:
            lv = math.log(v) if logp else v
            if nh >= 2:
                npt = 3 if nh >= 3 else 2
                for j in range(3):
                    val = 0.0
                    for k in range(npt):
                        wk = 1.0
                        for l in range(npt):
                            if l != k:
                                wk *= (lv - lh[l]) / (lh[k] - lh[l])
                        val += wk * hist[k, j]
                    y[j] = val
            par[pidx] = v
            refresh_structs(md)
            sv_newton(th, y, alpha, kind, rho, beta, md, rule, st, info)
            if info[0] != E_OK:
                # bridge from the previous value by sub-steps
                for j in range(3):
                    y[j] = ysave[j]
                v0 = pvals[i - 1]
                t = 0.0
                h = 0.5
                total = 0.0
                for _ in range(200):
                    if t >= 1.0:
                        break
                    tn = min(1.0, t + h)
                    par[pidx] = v0 + (v - v0) * tn if not logp else math.exp(
                        math.log(v0) + (math.log(v) - math.log(v0)) * tn)
                    refresh_structs(md)
                    ys = y.copy()
                    sv_newton(th, y, alpha, kind, rho, beta, md, rule, st, info)
                    total += info[2]
                    if info[0] != E_OK:
                        for j in range(3):
                            y[j] = ys[j]
                        h *= 0.5
                        if h < 1e-6:
                            break
                        continue
                    t = tn
                    h *= 1.5
                info[2] = total
        out[i, 0] = info[0]
        out[i, 1] = info[1]
        out[i, 2] = info[2]
        for j in range(3):
            out[i, 3 + j] = y[j]
        for j in range(8):
            out[i, 6 + j] = st[j]
        if info[0] != E_OK:
            for k in range(i + 1, pvals.shape[0]):
                out[k, 0] = E_PATH
            return
        for j in range(7):
            obs[i, j] = st[8 + j]
        obs[i, 3] = ch_test_error(st[0], st[1], rho, md, rule)
        for k in range(2, 0, -1):
            lh[k] = lh[k - 1]
            for j in range(3):
                hist[k, j] = hist[k - 1, j]
        lh[0] = math.log(v) if logp else v
        for j in range(3):
            hist[0, j] = y[j]
        nh = min(nh + 1, 3)
