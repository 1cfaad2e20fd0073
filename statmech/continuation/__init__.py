r"""Continuation engine: branches, folds, branch points, first-order transitions.

A general pseudo-arclength continuation engine for the saddle-point equations of
every model in statmech.  Given a free energy (or a residual) depending on order
parameters ``x`` (a vector) and a control parameter ``p`` (alpha, kappa, ...), it
traces solution branches through folds, finds and locates (to ~1e-10) folds
(spinodals), branch points (pitchfork, transcritical), stability changes and user
events, switches branches at branch points, finds *all* solutions at fixed ``p``
by deflation, locates first-order transitions by equality of the free energy
between branches, and continues folds, branch points and coexistence points in a
second parameter (phase-transition lines, e.g. alpha_c(K) with K continuous).
No model-specific code: a model only supplies its free energy.

Public API
----------
``Problem(residual=F, x0=..., p0=..., jacobian=None, dFdp=None, free_energy=None, params={}, ...)`` / ``Problem(free_energy=f, gradient=None, hessian=None, x0=..., p0=..., sense="min", ...)``
    Frozen dataclass describing ``F(x, p) = 0``.  Every callable is called as
    ``fn(x, p, **params)`` with ``x`` a 1-d float array and ``p`` a float.
    Free-energy form: ``F = grad_x f`` (``gradient``; central differences of ``f`` as
    fallback) and Jacobian = Hessian (``hessian``; differences of ``F`` as fallback);
    a solution is stable when the Hessian is positive definite (``sense="min"``) or
    negative definite (``sense="max"``, for a free *entropy*).  Residual form: stable
    when all eigenvalues of the Jacobian have negative real part (``dx/dt = F``),
    unless ``stability`` says otherwise: ``"min" | "max" | "flow" | "none"`` or a callable
    ``margin(x, p, **params) -> float`` (> 0 stable, e.g. a replicon eigenvalue).
    ``dFdp`` defaults to central differences in ``p``.  Optional: ``events`` (dict
    name -> ``g(x, p, **params)``; zeros are located), ``names`` (order-parameter
    names), ``p_name``, ``weights`` (length n+1, the weighted norm on (x, p)),
    ``in_domain(x, p) -> bool``, ``tol`` (absolute residual tolerance, default 1e-10),
    ``rtol`` (default 1e-10: when Newton stagnates above ``tol`` because the terms of F are
    large -- rounding floor ``~eps |F_x| |x|`` -- a point is still accepted if its componentwise
    backward error ``max_i |F_i| / (|F_x| |x| + |F_p| |p|)_i`` is <= rtol; 0 disables this),
    ``affine_in_p`` (F linear in p, as for every free energy ``f = f_0(x) + alpha f_1(x)``
    of the models: ``F_p = F(x, p+1) - F(x, p)`` exactly; otherwise 4th-order differences).
    A ``ValueError`` raised by a model function (point outside its domain) is read as NaN
    and makes the step fail, so models can validate their arguments.
    ``Problem.from_sympy(expr, xs, p, params=(), kind="free_energy"|"residual", ...)``
    derives gradient and Hessian (or the Jacobian) with ``sympy.diff``.
    ``problem.with_params(**kw)`` / ``problem.with_start(x0, p0)`` return modified copies.

``trace(problem, p_min=-inf, p_max=inf, ds=0.01, *, direction=None, ds_min=None, ds_max=None, max_steps=2000, s_max=inf, max_angle=0.25, detect=KINDS, tangent=None, accept=None) -> Branch``
    Pseudo-arclength continuation from ``(problem.x0, problem.p0)`` (first corrected
    at fixed ``p0``).  ``direction`` +1 / -1 starts towards increasing / decreasing p,
    ``None`` traces both ways when ``p0`` is inside ``(p_min, p_max)``.  Bordered
    (n+1)x(n+1) solves for corrector and tangent, tangent orientation carried by the
    bordering row, adaptive step ``ds_min <= ds <= ds_max``, steps whose corrector
    fails, whose correction exceeds ``ds/2`` or whose tangent turns by more than
    ``max_angle`` (radians, weighted norm) are rejected (branch-jumping guard), and a
    hard cap of ``max_steps`` accepted (4x that attempted) steps.  ``accept(y)``, if
    given, vets each corrected point y = (x, p): a returned reason (a str) rejects the
    step like a branch jump, and is the end's status when the step size then falls
    below ``ds_min``.  The branch ends exactly on ``p_min`` / ``p_max`` when it reaches them.

``Branch`` (frozen): arrays ``p`` (m,), ``x`` (m, n), ``stable`` (m,) bool, ``f`` (m,) or
    None, ``s`` (arclength), ``tangent`` (m, n+1), ``margin`` (stability margin);
    ``special_points`` (tuple of SpecialPoint, in arclength order), ``status``
    (why each end stopped), ``complete`` (both ends stopped at a p bound, a closed
    loop or the domain boundary), ``steps``, ``rejected``, ``problem``, ``unlocated``
    (special points bracketed between two steps whose location failed: (kind, p_a, p_b));
    ``branch[name]`` gives one order parameter as an array, ``branch.points(kind)``
    the special points of one kind, ``branch.plot(ax, y=...)``.

``SpecialPoint`` (frozen)
    ``kind`` in ``KINDS = ("fold", "branch_point", "stability_change", "event")``, ``p``, ``x``, ``f``, ``s``, ``stable_before`` /
    ``stable_after`` (along increasing arclength), ``tangent``, ``residual``,
    ``name`` (event name), ``coincides`` (for a stability change: "fold" or
    "branch_point" if it happens there), ``branch`` (index in an Analysis), and
    ``value(name)``.  Folds are zeros of dp/ds, branch points zeros of the bordered
    determinant det[[F_x, F_p], [t^T]], stability changes zeros of the stability
    margin (smallest Hessian eigenvalue), events zeros of ``g``; each zero is
    bracketed between two accepted steps and located by Brent's method along the
    arclength with the corrector at tolerance ``tol/100``.

``switch_branch(problem, point, p_min, p_max, ds=..., **trace_kw) -> Branch``
    The other branch through a branch point (both halves), started along the null
    direction of ``[F_x, F_p]`` orthogonal to the known tangent.

``deflate(problem, p, starts=None, max_solutions=20, power=2.0, shift=1.0) -> list[SaddlePoint]``
    All solutions of ``F(x, p) = 0`` reachable from the starts by deflated Newton
    (Farrell et al. 2015): ``M(x) F(x)`` with ``M = prod_i (|x - x_i|^-power + shift)``,
    each root polished on the undeflated system.

``coexistence(branch_a, branch_b=None) -> list[CoexistencePoint]``
    First-order transitions: the free-energy difference between two branches (or
    between two monotone sheets of one branch when ``branch_b`` is None) is evaluated
    exactly at every point of ``branch_a`` (the partner point is re-solved at the
    same p), sign changes are found along the arclength of ``branch_a``, and each
    is refined by Newton on ``F(x1, p) = F(x2, p) = 0, f(x1, p) = f(x2, p)``.
    ``CoexistencePoint``: ``p``, ``x1``, ``x2``, ``f``, ``stable1``, ``stable2``,
    ``branches`` (indices in an Analysis), ``residual``.

``analyze(problem, p_min, p_max, *, starts=None, scan=3, ds=None, max_branches=20, deflation=True, **trace_kw) -> Analysis``
    Everything at once: deflation from the starts at ``p0`` and ``scan`` values of p
    (``deflation=False``: one Newton solve from the first start instead; ``ds`` defaults
    to 0.005), trace of
    every new solution, branch switching at every branch point, repeated until no new
    branch appears; then all coexistence points.  ``Analysis`` (frozen):
    ``branches``, ``special_points`` (all, each tagged with ``.branch``),
    ``coexistence``, ``points(kind)``, ``stable_branches()``, ``plot(ax, y=...)``.

``continue_point(problem, point, param, q_min, q_max, ds=..., fold_tol=1e-4, **trace_kw) -> Curve``
    Two-parameter continuation of a fold (``F = 0, F_x v = 0, v.v = 1``), a branch point
    (``F + b phi = 0, F_x^T phi = 0, F_p.phi = 0, |phi| = 1``, Govaerts' unfolded
    system; ``b`` stays 0 while the branch point persists), a stability change
    (``F = 0, margin = 0``), an event (``F = 0, g = 0``) or a coexistence point
    (``F(x1) = F(x2) = 0, f1 = f2``) in
    the problem parameter ``param`` (a key of ``problem.params``), e.g. alpha_c(K).
    A branch point of the problem also solves the fold system; a fold line therefore
    accepts only points with ``|phi.F_p| > fold_tol |F_p|`` (phi the left null vector of
    F_x) and ends with status "fold_degenerate" where it cannot be told from a branch
    point (e.g. the SCM alpha_s line near K = 2, tangent there to alpha_d).
    ``Curve`` (frozen): ``kind``, ``param``, ``q``, ``p``, ``x``, ``x2``, ``b``, ``status``,
    ``branch`` (the extended-system branch, whose special points are folds of the
    line in ``q`` etc.); ``curve.p_at(q)`` re-solves exactly at one ``q``.
``curve_intersections(curve_a, curve_b) -> list[(q, p)]`` where two lines meet in the
    ``(q, p)`` plane, refined by Brent on ``p_a(q) - p_b(q)`` with exact re-solves.

Plot helpers: ``plot_branches(branches_or_analysis, ax=None, y=0)``,
``plot_phase_diagram(curves, ax=None)``.

Failures raise :class:`statmech.ConvergenceError` (starting point not converging,
location failing), bad arguments ``ValueError``.

Files (private modules; import from ``statmech.continuation``)
--------------------------------------------------------------
======================  ====================================================================================
``_problem.py``         ``Problem`` and difference derivatives of its functions (d/dp, dF_x/dp, d(F_x v)/dx)
``_results.py``         ``KINDS``, ``SpecialPoint``, ``Branch``, ``CoexistencePoint``, ``Analysis``
``_corrector.py``       weighted norms, equilibrated bordered solves, backward error, tangents,
                        the pseudo-arclength Newton corrector
``_special_points.py``  detection and location of special points between two steps (Brent on the
                        test functions), Govaerts' branch-point system and its polish
``_trace.py``           ``trace``: start point, step loop and step control, p bounds, assembly
``_switching.py``       ``switch_branch`` (algebraic bifurcation equation)
``_deflation.py``       ``deflate``
``_coexistence.py``     ``coexistence``: monotone sheets, exact re-solves at fixed p, refinement
``_analyze.py``         ``analyze``
``_two_parameter.py``   ``Curve``, ``continue_point`` (extended systems), ``curve_intersections``
``_plots.py``           ``plot_branches``, ``plot_phase_diagram``
======================  ====================================================================================
"""
from ._analyze import analyze
from ._coexistence import coexistence
from ._deflation import deflate
from ._plots import plot_branches, plot_phase_diagram
from ._problem import Problem
from ._results import KINDS, Analysis, Branch, CoexistencePoint, SpecialPoint
from ._switching import switch_branch
from ._trace import trace
from ._two_parameter import Curve, continue_point, curve_intersections

__all__ = ["KINDS", "Problem", "Branch", "SpecialPoint", "CoexistencePoint", "Analysis", "Curve",
           "trace", "switch_branch", "deflate", "coexistence", "analyze", "continue_point",
           "curve_intersections", "plot_branches", "plot_phase_diagram"]
