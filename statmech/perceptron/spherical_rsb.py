r"""Spherical perceptron beyond replica symmetry: 1RSB and full RSB, kappa < 0 included.

Storage of ``P = alpha N`` random patterns with stability ``kappa`` (``h > kappa``; the
*negative perceptron* is ``kappa < 0``, where the solution space is non-convex and RS is
wrong near capacity).  Every equation is derived in ``docs/rsb.md``; the numerics are
those of the RSB core :mod:`statmech.rsb`.

Free entropy (log of the fraction of the sphere), k-step, minimized over its parameters::

    phi = S(q, m) + alpha E_z f(q_0, sqrt(q_0) z),   f(q_k, h) = log H((kappa - h)/sqrt(1 - q_k))  (P1)

with ``S`` the spherical entropic term (``statmech.rsb.spherical_entropic``).

SAT/UNSAT (jamming) point.  As ``q_k -> 1`` with ``m_i = y_i (1 - q_k)``,
``phi = A(q, y; alpha)/(1 - q_k) + O(log(1 - q_k))`` with
``A = S~(q, y) + alpha Phi~(q, y)``, ``S~`` the jammed entropic term and ``Phi~`` the
nested average with the frozen soft-hinge channel (terminal ``-(kappa - h)_+^2/2``).
``A`` is affine in alpha with ``Phi~ < 0``, so the jamming line is (docs/rsb.md (J4))::

    alpha_J = min_{q, y}  R(q, y),   R = S~ / (-Phi~)                                           (J4)

RS is ``y = 0``: ``R = 1/E_t (kappa - t)_+^2``, Gardner's capacity.  1RSB minimizes over
``(q_0, y)``, k-RSB over free breakpoints, full RSB over ``y(q)`` on graded grids with the
``K -> inf`` extrapolation.  Where the RS replicon at jamming, ``1 - alpha_c H(-kappa)``
(docs/rsb.md (J6)), is >= 0 (``kappa >= 0``) the RS point is stable against breaking,
no RSB minimum exists, and the 1RSB/full-RSB results collapse to RS (``q_0 = q_1 = 1``).

Public names: :func:`gardner_capacity_point`, :func:`gardner_capacity_rsb`,
:func:`spherical_storage_rsb`, :func:`jamming_kstep`.
"""
from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from ..errors import ConvergenceError, check_choice, check_int, check_range
from ..gaussian import H
from ..rsb import kstep, parisi
from ..result import Estimate
from ..saddle import SaddlePoint, stack
from .spherical_storage_rs import gardner_capacity, spherical_storage

__all__ = ["gardner_capacity_point", "gardner_capacity_rsb", "spherical_storage_rsb", "jamming_kstep",
           "JammingProblem", "LogJammingProblem", "StorageProblem", "jamming_replicon"]

_ANSATZ = ("rs", "1rsb", "frsb")
#: lower end of kappa for the RSB solvers (1RSB and full RSB, jamming and finite alpha): tested on a
#: grid down to here (tests/test_perceptron_rsb.py); below, the 1RSB minimum has q_0 < 0.02 and
#: its lattice no longer settles (kappa = -3.5).  alpha_J^RS(-3) = 4916, alpha_J^1RSB(-3) = 2526.
KAPPA_MIN_RSB = -3.0
FRSB_KS = (4, 8, 16)   # default grids of the full-RSB solves (error ~K^-2, extrapolated)
KAPPA_JAMMING = 1.41574   # jamming exponent (Charbonneau et al. 2014); x(q) ~ ((1-q)/eps)^(-1/KAPPA_JAMMING)


# =========================================================================== problems
class JammingProblem(parisi.Problem):
    """``R(q, y) = S~/(-Phi~)`` of (J4), minimized; ``alpha_J = min R``.

    On the graded grids of full RSB the minimizing y grows at fixed q like
    ``eps_K^-(1 - 1/KAPPA_JAMMING)`` (measured 0.296-0.300 at kappa = -1 against 0.2937,
    docs/rsb.md section 6): the warm start of the next K carries that growth."""
    q0_fixed = None
    x_growth = 1.0 - 1.0 / KAPPA_JAMMING

    def __init__(self, kappa):
        self.kappa = float(kappa)
        self.channel = kstep.HingeFrozen(self.kappa)
        self.name = f"perceptron jamming (kappa={self.kappa:g})"

    def _parts(self, q, y, lattice, grad):
        r = kstep.kstep_average(q, y, self.channel, lattice=lattice, grad=grad)
        S, gq, gy = kstep.spherical_entropic(q, y, jammed=True)
        E = r.value
        if not (E < 0.0 and S > 0.0):
            raise ConvergenceError(f"{self.name}: the jammed functional left its domain (S~ = {S:.3g} must be > 0, "
                                   f"Phi~ = {E:.3g} < 0)", x=np.concatenate([q, y]))
        return r, S, gq, gy, E

    def evaluate(self, q, y, lattice, grad=True):
        r, S, gq, gy, E = self._parts(q, y, lattice, grad)
        return -S / E, -(gq * E - S * r.dq) / E ** 2, -(gy * E - S * r.dm) / E ** 2


class LogJammingProblem(JammingProblem):
    """``log R`` of :class:`JammingProblem`, the functional the solvers minimize.

    The logarithm makes it scale-free: ``alpha_J`` grows like ``e^{kappa^2/2}``, and with ``R``
    itself the absolute gradient tolerance of the minimizer was unreachable below kappa ~ -2.5.
    Same minimizer; its Hessian there is that of ``R`` divided by ``alpha_J``."""

    def evaluate(self, q, y, lattice, grad=True):
        r, S, gq, gy, E = self._parts(q, y, lattice, grad)
        return math.log(S) - math.log(-E), gq / S - r.dq / E, gy / S - r.dm / E


class StorageProblem(parisi.Problem):
    """Free entropy (P1) at finite alpha, minimized over ``q_0 .. q_k`` and ``m``."""
    q0_fixed = None

    def __init__(self, alpha, kappa):
        self.alpha, self.kappa = float(alpha), float(kappa)
        self.channel = kstep.LogHTerminal(self.kappa)
        self.name = f"perceptron storage (alpha={self.alpha:g}, kappa={self.kappa:g})"

    def evaluate(self, q, m, lattice, grad=True):
        r = kstep.kstep_average(q, m, self.channel, lattice=lattice, grad=grad)
        S, gq, gm = kstep.spherical_entropic(q, m)
        return S + self.alpha * r.value, gq + self.alpha * r.dq, gm + self.alpha * r.dm


def jamming_replicon(kappa):
    """RS replicon at the RS jamming point: ``1 - alpha_c(kappa) H(-kappa)`` (docs/rsb.md (J6)).

    Limit q -> 1 of ``1 - alpha E_t[(IM(u)(IM(u) - u))^2]``: the bracket tends to 1 where
    ``t < kappa`` and to 0 elsewhere.  Zero at kappa = 0 (isostatic), < 0 for kappa < 0.
    """
    k = np.asarray(kappa, dtype=float)
    return 1.0 - gardner_capacity(k) * H(-k)


# =========================================================================== jamming line
def _rs_point(kappa, ansatz="rs"):
    ac = float(gardner_capacity(kappa))
    rep = float(jamming_replicon(kappa))
    op = {"q": 1.0} if ansatz == "rs" else {"q0": 1.0, "q1": 1.0, "y": 0.0}
    extra = {"collapsed_to_rs": ansatz != "rs"}
    if ansatz == "frsb":
        op = {"q_min": 1.0, "q_max": 1.0}
        extra.update({"q": np.array([1.0, 1.0]), "y": np.array([0.0]), "error": 0.0})
    return SaddlePoint("perceptron.spherical_jamming", {"kappa": kappa}, op, {"alpha_c": ac},
                       True, 0.0, 0, None, rep, bool(rep >= 0), extra, ansatz, headline="alpha_c")


def _guess_1rsb(kappa):
    # rough start for (q_0, y): the minimum has q_0 = 0.95, 0.86, 0.66, 0.27 and y = 42, 18, 12, 20
    # at kappa = -0.25, -0.5, -1, -2; Newton converges from this start over that range
    return min(0.9, 0.8 + 0.15 * kappa), 12.4 * (-kappa) ** 0.6 if kappa < 0 else 1.0


def _own_stability(sol):
    """``rs_stable`` of a k-step / full-RSB result: the ansatz's own stability -- its stationary
    point is a minimum of the functional (every Hessian eigenvalue > 0).  (Stability against a
    further step of breaking is not computed; the next ansatz's value says whether it moves.)"""
    h = sol.hessian_eigenvalues
    return None if h is None else bool(np.all(np.asarray(h) > 0))


def _alpha_kstep(sol):
    """A k-step solution of ``log R`` with ``value`` = alpha_J (and its lattice error in alpha)."""
    a = math.exp(sol.value)
    return replace(sol, value=a, lattice_error=a * sol.lattice_error)


def _one_rsb_jamming(kappa, guess=None):
    prob = LogJammingProblem(kappa)
    q0, y = guess if guess is not None else _guess_1rsb(kappa)
    return prob, parisi.solve_kstep(prob, [q0, 1.0], [y])


def _jamming_one(kappa, ansatz, Ks, guess=None):
    if ansatz == "rs" or float(jamming_replicon(kappa)) >= 0.0:
        return _rs_point(kappa, ansatz)
    prob, s1 = _one_rsb_jamming(kappa, guess)
    a1 = math.exp(s1.value)
    if ansatz == "1rsb":
        return SaddlePoint("perceptron.spherical_jamming", {"kappa": kappa},
                           {"q0": float(s1.q[0]), "q1": 1.0, "y": float(s1.m[0])},
                           {"alpha_c": a1}, True, s1.residual, s1.iterations, s1.hessian_eigenvalues,
                           None, _own_stability(s1), {"lattice_error": a1 * s1.lattice_error,
                                                      "alpha_rs": float(gardner_capacity(kappa))},
                           "1rsb", error=a1 * s1.lattice_error, headline="alpha_c")
    q0, y1 = float(s1.q[0]), float(s1.m[0])
    sol = parisi.solve_frsb(prob, q0, 1.0, lambda qm: 0.5 * y1 * np.sqrt((1 - q0) / (1 - qm)), Ks=tuple(Ks))
    a_f = math.exp(sol.value)
    return SaddlePoint("perceptron.spherical_jamming", {"kappa": kappa},
                       {"q_min": float(sol.q[0]), "q_max": 1.0},
                       {"alpha_c": a_f}, True, sol.residual, sol.iterations, sol.hessian_eigenvalues,
                       None, _own_stability(sol),
                       {"q": sol.q, "y": sol.x, "error": a_f * sol.error, "order": sol.p, "Ks": sol.Ks,
                        "alpha_K": tuple(math.exp(v) for v in sol.values),
                        "lattice_error": a_f * sol.lattice_error,
                        "lattice_points": sol.lattice_points, "alpha_1rsb": a1,
                        "alpha_rs": float(gardner_capacity(kappa))}, "frsb", error=a_f * sol.error,
                       headline="alpha_c")


def _stack(res, shape, model):
    """``saddle.stack`` of per-point results whose Hessian spectra may differ in length (RS
    collapse vs RSB): then the spectra are dropped; each point's ``extra`` is kept in
    ``extra["points"]`` (flat list, C order)."""
    if len({None if r.hessian_eigenvalues is None else np.shape(r.hessian_eigenvalues) for r in res}) > 1:
        res = [replace(r, hessian_eigenvalues=None) for r in res]
    return replace(stack(res, shape, model=model), extra={"points": [r.extra for r in res]})


def _map(fn, items, executor, progress=False, desc=""):
    """``[fn(x) for x in items]``, one task per item on ``executor`` when given: anything
    with ``submit`` (a ``concurrent.futures`` executor or a ``dask.distributed`` client, the
    convention of :mod:`statmech.sweep`), with a tqdm progress bar when ``progress``.  One task
    per kappa balances the load best: warm starts from a neighbouring kappa were measured to cost
    more gradient evaluations than the cold K ladder (docs/rsb.md section 8), so points are
    independent."""
    from tqdm.auto import tqdm
    bar = tqdm(total=len(items), desc=desc, disable=not progress)
    try:
        if executor is None:
            out = []
            for x in items:
                out.append(fn(x))
                bar.update()
            return out
        if not hasattr(executor, "submit"):
            raise ValueError("executor must be a concurrent.futures.Executor or a dask Client (with submit())")
        futures = [executor.submit(fn, x) for x in items]
        out = []
        for f in futures:
            out.append(f.result())
            bar.update()
        return out
    finally:
        bar.close()


class _JamTask:
    def __init__(self, ansatz, Ks):
        self.ansatz, self.Ks = ansatz, tuple(Ks)

    def __call__(self, kappa):
        return _jamming_one(float(kappa), self.ansatz, self.Ks)


def gardner_capacity_point(kappa=0.0, ansatz="rs", *, Ks=FRSB_KS, executor=None, progress=False):
    r"""SAT/UNSAT (jamming) point of the spherical perceptron as a SaddlePoint.

    Parameters
    ----------
    kappa : float or array, finite
    ansatz : ``"rs"`` (Gardner), ``"1rsb"`` (``q_0``, ``q_1 = 1``, ``y = m/(1-q_1)``) or
        ``"frsb"`` (``y(q) = x(q)/(1 - q_max)`` on graded grids ``Ks``, extrapolated)
    executor : optional ``concurrent.futures`` executor or ``dask.distributed`` client for
        arrays of kappa (one task per kappa)
    progress : bool
        A progress bar over the kappa of an array (a full-RSB point costs ~0.6 s).

    Returns
    -------
    SaddlePoint (model ``perceptron.spherical_jamming``) with ``thermo["alpha_c"]``, the
    order parameters, ``replicon`` and ``rs_stable`` for RS (the replicon at jamming
    ``1 - alpha_c H(-kappa)``, negative for kappa < 0), ``hessian_eigenvalues`` of ``R``
    at its minimum (all > 0); for full RSB ``extra`` holds ``q``, ``y`` (the Parisi
    function, ``x = y (1 - q_max)``), the sequence ``alpha_K``, the fitted ``order``
    and the ``error`` estimate.  Where RS is stable at jamming (kappa >= 0) the RSB
    ansätze collapse to RS (``extra["collapsed_to_rs"]``).
    """
    check_choice("ansatz", ansatz, _ANSATZ)
    k = check_range("kappa", kappa, KAPPA_MIN_RSB if ansatz != "rs" else -math.inf)
    Ks = tuple(check_int("Ks", K, 1) for K in Ks)
    if k.ndim == 0:
        return _jamming_one(float(k), ansatz, Ks)
    res = _map(_JamTask(ansatz, Ks), k.ravel().tolist(), executor, progress, f"alpha_J {ansatz}")
    return _stack(res, k.shape, "perceptron.spherical_jamming")


def gardner_capacity_rsb(kappa=0.0, ansatz="rs", *, Ks=FRSB_KS, executor=None, progress=False):
    """``alpha_J(kappa)`` in the given ansatz (float or array); see :func:`gardner_capacity_point`."""
    if ansatz == "rs":
        check_range("kappa", kappa)
        return gardner_capacity(kappa)
    r = gardner_capacity_point(kappa, ansatz, Ks=Ks, executor=executor, progress=progress)
    a = r.thermo["alpha_c"]
    if np.ndim(a) == 0:   # a float carrying its error estimate (statmech.result.Estimate)
        return Estimate(a, r.error) if r.error else float(a)
    return np.asarray(a, dtype=float)


def jamming_kstep(kappa, k):
    """k-step RSB jamming point with free breakpoints (``k`` >= 1), for the k -> inf study.

    Returns the :class:`statmech.rsb.KStepSolution` of ``log R`` with ``value`` converted to
    alpha_J^{kRSB} (and ``lattice_error`` to alpha).  Domain: ``KAPPA_MIN_RSB <= kappa < 0``.
    """
    k = check_int("k", k, 1)
    kappa = float(check_range("kappa", kappa, KAPPA_MIN_RSB))
    if float(jamming_replicon(kappa)) >= 0.0:
        raise ValueError(f"kappa must be < 0 (RS is stable at jamming for kappa={kappa:g})")
    prob, prev = _one_rsb_jamming(kappa)
    for _ in range(2, k + 1):
        q = np.concatenate([prev.q[:-1], [0.5 * (prev.q[-2] + 1.0)], [1.0]])
        y = np.concatenate([prev.m, [3.0 * prev.m[-1]]])
        prev = parisi.solve_kstep(prob, q, y)
    return _alpha_kstep(prev)


# =========================================================================== storage
def _check_below_jamming(alpha, kappa, ansatz, Ks):
    """ValueError unless alpha lies below the SAT/UNSAT point of ``ansatz`` (fast: the 1RSB point
    costs ~10 ms and bounds the full-RSB one from above; the full-RSB point is solved only when
    alpha lies between the two)."""
    a1 = float(_jamming_one(kappa, "1rsb", Ks).thermo["alpha_c"])
    if alpha >= a1:
        raise ValueError(f"alpha must be < alpha_J^1RSB(kappa={kappa:g}) = {a1:.10g} for ansatz={ansatz!r} "
                         f"(no solutions above it), got {alpha!r}")
    if ansatz == "frsb":
        p = _jamming_one(kappa, "frsb", Ks)
        af = float(p.thermo["alpha_c"])
        if alpha >= af - p.extra["error"]:
            raise ValueError(f"alpha must be < alpha_J^FRSB(kappa={kappa:g}) = {af:.8g} +- {p.extra['error']:.1g} "
                             f"for ansatz='frsb', got {alpha!r}")


def _storage_one(alpha, kappa, ansatz, Ks, guess=None):
    rs = spherical_storage(alpha, kappa)
    if ansatz == "rs":
        return rs
    if not rs.rs_stable:
        _check_below_jamming(alpha, kappa, ansatz, Ks)
    params = {"alpha": alpha, "kappa": kappa}
    if rs.rs_stable:
        op = {"q0": rs.q, "q1": rs.q, "m": 0.0} if ansatz == "1rsb" else {"q_min": rs.q, "q_max": rs.q}
        extra = {"collapsed_to_rs": True}
        if ansatz == "frsb":
            extra.update({"q": np.array([rs.q, rs.q]), "x": np.array([0.0]), "error": 0.0})
        return SaddlePoint("perceptron.spherical_storage", params, op,
                           {"entropy": rs.entropy, "complexity": 0.0}, True, rs.residual, rs.iterations,
                           rs.hessian_eigenvalues, rs.replicon, True, extra, ansatz, headline="entropy")
    prob = StorageProblem(alpha, kappa)
    q = rs.q
    s1 = parisi.solve_kstep(prob, [0.8 * q, min(q + 0.5 * (1 - q), 1 - 1e-3 * (1 - q))], [0.3])
    m = float(s1.m[0])
    if m > 1.0 - 1e-6:  # the core keeps 0 < m < 1 (m = expit(u)); a minimum on m = 1 is not interior
        raise ConvergenceError("1RSB minimum is on the boundary m = 1 of the physical range; "
                               "the m = 1 (dynamical) branch is not implemented",
                               x=np.concatenate([s1.q, s1.m]), residual=s1.residual,
                               diagnostics={"alpha": alpha, "kappa": kappa, "m": m})
    # complexity of the states selected by m: Sigma = -m^2 d phi/dm (phi = Sigma/m + s_internal);
    # it vanishes (to the residual) at an interior minimum in m
    _, _, gm = prob.evaluate(s1.q, s1.m, prob.lattice(s1.q, s1.m))
    sigma = float(-m * m * gm[0])
    if ansatz == "1rsb":
        return SaddlePoint("perceptron.spherical_storage", params,
                           {"q0": float(s1.q[0]), "q1": float(s1.q[1]), "m": m},
                           {"entropy": s1.value, "complexity": sigma, "entropy_rs": rs.entropy}, True,
                           s1.residual, s1.iterations, s1.hessian_eigenvalues, rs.replicon, _own_stability(s1),
                           {"lattice_error": s1.lattice_error}, "1rsb", error=s1.lattice_error, headline="entropy")
    q0, q1 = float(s1.q[0]), float(s1.q[1])
    sol = parisi.solve_frsb(prob, q0, q1, lambda qm: np.full(qm.shape, m), Ks=tuple(Ks))
    return SaddlePoint("perceptron.spherical_storage", params,
                       {"q_min": float(sol.q[0]), "q_max": float(sol.q[-1])},
                       {"entropy": sol.value, "entropy_1rsb": s1.value, "entropy_rs": rs.entropy}, True,
                       sol.residual, sol.iterations, sol.hessian_eigenvalues, rs.replicon, _own_stability(sol),
                       {"q": sol.q, "x": sol.x, "error": sol.error, "order": sol.p, "Ks": sol.Ks,
                        "entropy_K": sol.values, "lattice_error": sol.lattice_error}, "frsb", error=sol.error,
                       headline="entropy")


def spherical_storage_rsb(alpha, kappa=0.0, ansatz="1rsb", *, Ks=FRSB_KS):
    r"""Storage at finite ``alpha`` in ``ansatz`` ``"rs"``, ``"1rsb"`` or ``"frsb"``.

    Below the de Almeida--Thouless line (``statmech.perceptron.spherical_storage_at_line``;
    decided here by the sign of the RS replicon of ``spherical_storage``, the same test)
    the RS solution is stable and the RSB ansätze collapse to it (``q0 = q1``).  Above
    it, 1RSB minimizes (P1) over ``(q_0, q_1, m)`` and full RSB over ``x(q)`` on graded
    grids.  ``thermo["entropy"]`` is the log Gardner volume; ``complexity`` is the
    complexity of the states selected by the equilibrium m (zero at an interior m).
    Vectorized over alpha and kappa (broadcast).  Requires ``alpha < alpha_c^RS(kappa)``
    (the RS capacity) and, where RS is unstable, below the SAT/UNSAT point of the ansatz
    asked for (checked first, in ~10 ms for 1RSB: a ValueError names alpha and that limit).
    Domain of the RSB ansätze: ``kappa >= KAPPA_MIN_RSB`` (-3).
    """
    check_choice("ansatz", ansatz, _ANSATZ)
    a = check_range("alpha", alpha, 0.0)
    k = check_range("kappa", kappa, KAPPA_MIN_RSB if ansatz != "rs" else -math.inf)
    b = np.broadcast_arrays(a, k)
    if b[0].ndim == 0:
        return _storage_one(float(b[0]), float(b[1]), ansatz, Ks)
    out = [_storage_one(float(x), float(y), ansatz, Ks) for x, y in zip(b[0].ravel(), b[1].ravel())]
    return _stack(out, b[0].shape, "perceptron.spherical_storage")
