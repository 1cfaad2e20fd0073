r"""Franz--Parisi entropy of the Ising (binary) perceptron around a typical solution, RS.

Stationary point in ``(q1, t, q1_hat, t_hat, p_hat)`` of (``docs/franz_parisi.md``)

``S_FP = t_hat t - p_hat p + q1_hat (q1 - 1)/2 + E_z (1 + tanh(sqrt(q_hat0) z)) E_y log 2cosh(h)
+ alpha E_z E_e [H(a)/H(a0) log H(b)]``

with the reference of :func:`.reference.equilibrium_binary`; the energetic term and the
continuation in ``d`` are shared with the spherical weights (:mod:`._common`).  Also the zero
crossing ``d0`` of ``S_FP`` and the ``alpha = 0`` curve (the binary entropy of ``d``).
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import ConvergenceError, check_range
from ..result import check_real
from ..gaussian import gauss_hermite
from ..saddle import SaddlePoint, stack
from ._common import (_EDGE, _Q, _assemble, _continue, _fp_energetic, _march, _Problem, _q1t_domain, _q1t_from_y,
                      _q1t_margins, _q1t_to_y, _solve_family)
from ._equations import _FP
from ._quadrature import _LEVEL, _N_OUTER, _inner_rule
from .reference import check_binary_alpha


def binary_entropy_free(d):
    """S_FP at alpha = 0 for Ising weights: -d log d - (1-d) log(1-d) (all 2^N configurations)."""
    d = np.asarray(d, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = -np.where(d > 0, d * np.log(np.where(d > 0, d, 1.0)), 0.0) \
              - np.where(d < 1, (1 - d) * np.log1p(-np.where(d < 1, d, 0.0)), 0.0)
    return out if out.ndim else float(out)


def _fp_entropic(qh0, qh1, th, ph, level=_LEVEL, n_outer=_N_OUTER):
    """E_z E_y of the Ising FP entropic integrand and its derivatives (see _equations._FP: fp_S)."""
    zs, ws = gauss_hermite(n_outer)
    return np.array(_FP.fp_sum_S(zs, ws, qh0, qh1, th, ph, *_inner_rule(level)))


def _binary_eval(x, p, ref, alpha, kappa, quad=_Q):
    """Gradient F, Hessian J of the Ising FP functional Phi at x = (q1, t, q1_hat, t_hat, p_hat),
    plus the integrals (for the entropy and diagnostics)."""
    q1, t, qh1, th, ph = x
    S = _fp_entropic(ref.qh0, qh1, th, ph, level=quad.level, n_outer=quad.n_S)
    E = _fp_energetic(ref.q0, t, p, q1, kappa, level=quad.level, n_outer=quad.n_E)
    F = np.array([qh1 / 2 + alpha * E[1],
                  th + alpha * E[2],
                  q1 / 2 - 0.5 + S[1],
                  t + S[2],
                  -p + S[3]])
    # S Hessian entries: (11, 1t, 1p, tt, tp, pp) = S[4:10]; E Hessian (q1q1, q1t, tt) = E[3:6]
    J = np.array([
        [alpha * E[3], alpha * E[4], 0.5, 0.0, 0.0],
        [alpha * E[4], alpha * E[5], 0.0, 1.0, 0.0],
        [0.5, 0.0, S[4], S[5], S[6]],
        [0.0, 1.0, S[5], S[7], S[8]],
        [0.0, 0.0, S[6], S[8], S[9]]])
    return F, J, S, E


def _binary_domain(x, p, ref):
    """Inside the RS domain by a relative margin ``_EDGE`` (see ``_common._q1t_domain``): the
    entropic kernel divides by ``sqrt(q1_hat - t_hat^2/q_hat0)``."""
    q1, t, qh1, th, ph = x
    return qh1 > 0.0 and _q1t_domain(q1, t, p, ref.q0) and qh1 - th * th / ref.qh0 > _EDGE * qh1


def _binary_margins(x, p, ref):
    """Relative distances of a solution from the boundary of the RS domain (all must be > 0)."""
    q1, t, qh1, th, ph = x
    return {**_q1t_margins(q1, t, p, ref.q0), "(q1_hat-t_hat^2/q_hat0)/q1_hat": (qh1 - th * th / ref.qh0) / qh1}


class _BinaryProblem(_Problem):
    kind = "franz_parisi.binary_perceptron"
    names = ("q1", "t", "q1_hat", "t_hat", "p_hat")
    ref_kind = "binary"
    evaluate = staticmethod(_binary_eval)

    def in_domain(self, x, p):
        return _binary_domain(x, p, self.ref)

    def margins(self, x, p):
        return _binary_margins(x, p, self.ref)

    def typical(self):
        r = self.ref
        return np.array([r.q0, r.q0, r.qh0, r.qh0, r.qh0])

    def to_y(self, x, p):
        q1, t, qh1, th, ph = x
        qh0 = self.ref.qh0
        with np.errstate(all="ignore"):
            c = th / math.sqrt(qh0 * qh1) if qh1 > 0 else np.nan
            return np.array([*_q1t_to_y(q1, t, p, self.ref.q0),
                             math.log(qh1) if qh1 > 0 else np.nan, np.arctanh(c) if abs(c) < 1 else np.nan, ph])

    def from_y(self, y, p):
        qh1 = math.exp(y[2])
        return np.array([*_q1t_from_y(y[0], y[1], p, self.ref.q0), qh1,
                         math.tanh(y[3]) * math.sqrt(self.ref.qh0 * qh1), y[4]])

    def first_guess(self, dp):
        r = self.ref
        a = abs(dp)
        return np.array([r.q0 + a, r.q0, r.qh0 * (1 + a), r.qh0, r.qh0 * (1 + 2 * dp)])

    def ref_params(self):
        return {"q0": self.ref.q0, "q_hat0": self.ref.qh0}

    # ---- the freezing distance: towards small d the RS constrained replicas freeze, 1 - q1 -> 0
    # linearly in d - d_f at a finite d_f (docs/franz_parisi.md, "Small d"); below it the RS
    # equations have no solution with q1 < 1
    _FREEZE = 3e-3  # 1 - q1 below which the approach to d_f is extrapolated

    def freezing_distance(self, hist):
        """Estimate of the freezing distance from the branch ``hist`` (list of (p, x)) when its
        last solution has ``1 - q1 < _FREEZE`` and the branch moves towards d -> 0: the root of
        the quadratic (linear with two points) through ``(p, 1 - q1)`` of the last points; else None."""
        pts = [(pp, 1.0 - xx[0]) for pp, xx in hist[-3:]]
        if len(pts) < 2 or pts[-1][1] >= self._FREEZE or not pts[-1][0] > pts[-2][0]:
            return None
        ps, es = np.array(pts).T
        c = np.polyfit(ps - ps[-1], es, min(len(ps) - 1, 2))
        roots = [r.real for r in np.roots(c) if abs(r.imag) < 1e-12 and r.real > 0]
        if not roots:
            return None
        return (1.0 - (ps[-1] + min(roots))) / 2.0

    def check_reachable(self, hist, p_goal):
        d_f = self.freezing_distance(hist)
        d_goal = (1.0 - p_goal) / 2.0
        if d_f is not None and d_goal < 0.8 * d_f:
            raise ValueError(f"{self.kind}: d = {d_goal:.3g} is below the freezing distance of the RS Franz-Parisi solution at "
                             f"alpha = {self.alpha:g}, kappa = {self.kappa:g}, d_f ~ {d_f:.3g} (extrapolated): there "
                             "the constrained replicas freeze (1 - q1 -> 0) and RS has no solution for d < d_f; "
                             "d must be above d_f")

    def failure_note(self, hist):
        d_f = self.freezing_distance(hist)
        return "" if d_f is None else f" (close to the freezing distance d_f ~ {d_f:.3g}, where 1 - q1 -> 0)"

    def dF_dp(self, x, p):
        E = self.eval(x, p)[3]
        return np.array([self.alpha * E[9], self.alpha * E[10], 0.0, 0.0, -1.0])

    def thermo(self, x, p):
        F, J, S, E = self.eval(x, p)
        q1, t, qh1, th, ph = x
        ent = th * t - ph * p + qh1 * q1 / 2 + S[0] - qh1 / 2 + self.alpha * E[0]
        dS_dp = -ph + self.alpha * E[6]
        rep = 1.0 - self.alpha * E[7] * S[10] / (1.0 - q1) ** 2
        return ent, dS_dp, rep, J, {"norm_S": S[11], "norm_E": E[8]}


def binary_perceptron(alpha, d, kappa=0.0):
    r"""RS Franz--Parisi entropy of the Ising perceptron around a typical solution.

    Implements thesis Eqs. 2.55--2.56 (Huang & Kabashima 2014) with the reference drawn
    from the uniform measure over solutions (``beta -> infinity``), in the replica-symmetric
    ansatz derived in ``docs/franz_parisi.md`` (thesis Eq. 2.42 as printed is ambiguous: the sum over
    references must be normalized, i.e. it is the *quenched average over the equilibrium
    measure*, ``E_xi <log Z_FP(d, W~)>_{W~}``).  The entropy is ::

        S_FP = t_hat t - p_hat p + q1_hat (q1 - 1)/2
               + E_z (1 + tanh(sqrt(q_hat0) z)) E_y log 2cosh(h)
               + alpha E_z E_e [H(a)/H(a0) log H(b)]

    at its stationary point in ``(q1, t, q1_hat, t_hat, p_hat)`` with ``p = 1 - 2d``
    (notation in the package docstring and docs).

    Parameters
    ----------
    alpha : float in (0, alpha_KM(kappa)), the Krauth--Mezard capacity (0.8330786 at kappa = 0;
        above it there are no solutions: ValueError)
    d : float or array in (d_f, 0.5], normalized Hamming distance from the reference.  d_f is the
        *freezing distance* of the RS solution (docs/franz_parisi.md, "Small d"): as d decreases
        to d_f the constrained replicas freeze, ``1 - q1 -> 0`` linearly in ``d - d_f``, and below
        it the RS equations have no solution (d_f = 4.7e-4 at alpha = 0.5, 4e-3 at alpha = 0.8,
        5e-5 at alpha = 0.2, kappa = 0).  A d well below d_f raises ValueError naming the
        extrapolated d_f once the branch has approached it (1 - q1 < 3e-3), in about a second;
        next to d_f the continuation may fail with ConvergenceError (naming d_f).
    kappa : stability threshold in [0, 3]

    Returns
    -------
    SaddlePoint with ``entropy`` (S_FP(d), in nats per weight, counting configurations,
    so ``S_FP -> -d log d - (1-d) log(1-d)`` as alpha -> 0), ``entropy_equilibrium``,
    ``d_typical = (1 - q0)/2``, ``dS_dd``; order parameters ``q1, t, q1_hat, t_hat, p_hat``
    and the reference's ``q0, q_hat0``; ``replicon`` = AT eigenvalue of the constrained
    replicas (``1 - alpha gamma_E gamma_S/(1-q1)^2``); ``rs_stable`` is True only where both
    that replicon and the replicon of the RS reference (:func:`equilibrium_binary`,
    ``extra['reference_replicon']``, ``extra['reference_rs_stable']``) are positive -- above the
    reference's AT line the typical solutions themselves are not RS; ``hessian_eigenvalues`` of
    the RS functional (None exactly at the typical distance, where the parametrization is
    degenerate; for an array of d containing it, None and the per-point spectra in
    ``extra['hessian_eigenvalues']``); ``extra['margins']`` = distances from the boundary of the
    RS domain (scalar d).
    """
    for name, v in (("alpha", alpha), ("d", d), ("kappa", kappa)):
        check_real(name, v, function="binary_perceptron")
    alpha = float(check_range("alpha", alpha, 0.0, lo_open=True))
    kappa = float(check_range("kappa", kappa, 0.0, 3.0))
    check_range("d", d, 0.0, 0.5, lo_open=True)
    check_binary_alpha(alpha, kappa, "binary_perceptron")
    return _solve_family(_BinaryProblem(alpha, kappa), d)


# =============================================================================== zero crossing
def _solve_near(problem, p, known):
    """Solve at overlap p by continuation from the nearest known solutions (list of (p, x),
    the first entry being the degenerate typical point)."""
    if len(known) == 1:
        return _march(problem, [p], known[0][0], known[0][1], problem.first_guess)[p]
    ks = sorted({k[0]: k for k in known[1:]}.values(), key=lambda k: abs(k[0] - p))
    if len(ks) == 1:
        ks = ks + [known[0]]
    hist = [ks[1], ks[0]]
    return _continue(problem, hist, [p])[p]


def _bracketed_newton(f, lo, hi, f_lo, f_hi, xtol, maxiter=60):
    """Root of ``f(d) -> (value, derivative)`` in ``[lo, hi]`` (``f_lo < 0 < f_hi``): Newton steps
    from the regula-falsi point, bisection whenever a step leaves the current bracket; stops
    when a step is below ``xtol`` and returns the point after it."""
    a, b = lo, hi
    d = lo + (hi - lo) * (-f_lo) / (f_hi - f_lo)
    for _ in range(maxiter):
        s, ds = f(d)
        if s == 0.0:
            return d
        if s < 0:
            a = d
        else:
            b = d
        dn = d - s / ds if ds != 0.0 else math.nan
        if not a < dn < b:
            dn = 0.5 * (a + b)
        if abs(dn - d) <= xtol:
            return dn
        d = dn
    raise ConvergenceError("binary_zero_crossing: the root of S_FP(d) was not reached",
                           diagnostics={"bracket": (a, b), "d": d})


def binary_zero_crossing(alpha, kappa=0.0, *, xtol=1e-9):
    """Smallest distance d0 > 0 where the RS Franz--Parisi entropy of the Ising perceptron
    (:func:`binary_perceptron`) crosses zero: for d < d0 the RS count of solutions around a
    typical solution is negative (no solutions at those distances: typical solutions are
    isolated), for d0 < d < d_typical it is positive.

    Newton's method on ``S_FP(d)`` (with its analytic derivative ``dS_dd``) safeguarded by the
    bracket found on a geometric grid; each evaluation is a warm-started Newton solve.  ``d0`` is
    resolved to ``xtol`` relative to the bracket.  Returns a SaddlePoint (the FP solution at ``d = d0``) with ``d0`` in
    ``thermo['d_zero']``; the bracketing grid and the entropy there are in ``extra``.
    ``alpha`` may be an array (one crossing per value).

    Domain: ``kappa`` in [0, 3], ``alpha`` in (0, alpha_KM(kappa)) (ValueError outside).  The grid
    halves d from d_typ down to 1e-9; ConvergenceError (naming alpha) if no sign change is found
    above the freezing distance (:func:`binary_perceptron`), which happens only at small alpha.
    """
    check_real("alpha", alpha, function="binary_zero_crossing")
    check_real("kappa", kappa, function="binary_zero_crossing")
    a_arr = check_range("alpha", alpha, 0.0, lo_open=True)
    kappa = float(check_range("kappa", kappa, 0.0, 3.0))
    for a in np.ravel(a_arr):
        check_binary_alpha(float(a), kappa, "binary_zero_crossing")
    if a_arr.ndim:
        res = [binary_zero_crossing(float(a), kappa, xtol=xtol) for a in a_arr.ravel()]
        return stack(res, a_arr.shape, model="franz_parisi.binary_zero_crossing")
    alpha = float(a_arr)
    prob = _BinaryProblem(alpha, kappa)
    d_typ = (1.0 - prob.ref.q0) / 2.0
    grid = [d for d in d_typ * 0.5 ** np.arange(1, 40) if d > 1e-9]
    known = [(prob.ref.q0, prob.typical())]
    ent = {}
    hi = None
    lo = None
    for d in grid:  # descending in d, ascending in p
        p = 1.0 - 2.0 * d
        info = _solve_near(prob, p, known)
        known.append((p, info.x))
        s = prob.thermo(info.x, p)[0]
        ent[d] = s
        if s < 0:
            lo = d
            break
        hi = d
    if lo is None or hi is None:
        raise ConvergenceError("binary_zero_crossing: no sign change of S_FP found on the grid",
                               diagnostics={"alpha": alpha, "smallest d": grid[-1]})

    def f(d):  # S_FP and dS_FP/dd (analytic: -2 dS/dp)
        p = 1.0 - 2.0 * d
        info = _solve_near(prob, p, known)
        known.append((p, info.x))
        s, dS_dp = prob.thermo(info.x, p)[:2]
        return s, -2.0 * dS_dp

    d0 = _bracketed_newton(f, lo, hi, ent[lo], ent[hi], xtol * lo)
    info = _solve_near(prob, 1.0 - 2.0 * d0, known)
    sp_ = _assemble(prob, d0, 1.0 - 2.0 * d0, info, info.x, prob.ref.entropy, d_typ)
    thermo = dict(sp_.thermo)
    thermo["d_zero"] = float(d0)
    return SaddlePoint("franz_parisi.binary_zero_crossing", sp_.params, sp_.order_params, thermo,
                       sp_.converged, sp_.residual, sp_.iterations, sp_.hessian_eigenvalues,
                       sp_.replicon, sp_.rs_stable, {"grid_entropy": ent, **sp_.extra}, headline="d_zero")
