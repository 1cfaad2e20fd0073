r"""Perceptron: Gardner analysis of storage and teacher--student learning (replica symmetric).

Spherical weights (``W.W = N``) and Ising weights (``W_i = +-1``); random +-1 labels
(storage, stability ``kappa``) or labels from a teacher of the same kind
(Gibbs learning in the version space).  Every formula below was re-derived (see
``docs/perceptron.md``); the corrections to the thesis (E. Tartaglione, "From Statistical
Physics to Algorithms in Deep Neural Systems", PhD thesis, Politecnico di Torino, 2019,
chapter 2) are stated where they apply.

Notation
--------
``Dt`` is the standard Gaussian measure, ``H(x) = int_x^inf Dt``, ``G`` the
Gaussian density, ``IM(x) = G(x)/H(x)`` the inverse Mills ratio, and for storage
``u(t) = (kappa - sqrt(q) t)/sqrt(1-q)``; for teacher--student ``a = sqrt(R/(1-R))``.

RS free entropies (typical ``(1/N) <log Z>``; the value at the saddle is the entropy)
--------------------------------------------------------------------------------------
spherical storage, ``x = [q]`` (log of the *fraction* of the sphere; 0 at alpha = 0)::

    phi = 1/2 log(1-q) + q/(2(1-q)) + alpha E_t log H(u)                       (S1)
    d phi/dq = q/(2(1-q)^2) - alpha E_t[IM(u)^2]/(2(1-q))  =>  q/(1-q) = alpha E_t IM(u)^2   (S2)

(S2) is thesis Eq. 2.29 *corrected*: the thesis prints the prefactor ``alpha/pi``;
the correct one is ``alpha/(2 pi)`` (``IM^2 = e^{-u^2}/(2 pi H^2)``), as required by the
``q -> 1`` limit ``1/alpha_c = int_{-inf}^kappa Dt (kappa-t)^2`` (Eq. 2.30, correct).

spherical teacher--student (Gibbs learning, Nishimori line ``q = R``), ``x = [R]``::

    phi = 1/2 log(1-R) + R/2 + 2 alpha E_t[H(-a t) log H(-a t)]                 (T1)
    d phi/dR = (alpha E_t[2 G(a t) IM(-a t)] - R)/(2(1-R))  =>  R = alpha E_t[2 G(a t) IM(-a t)]   (T2)

(T2) is equivalent to thesis Eq. 2.25 (``R/sqrt(1-R) = (alpha/pi) int Dt e^{-R t^2/2}/H(sqrt(R) t)``,
correct as printed) after the substitution ``t -> t sqrt(1-R)``.

binary (Ising) storage, ``x = [q, q_hat]`` (log of the *number* of solutions; log 2 at alpha = 0)::

    phi = -q_hat (1-q)/2 + E_z log 2cosh(sqrt(q_hat) z) + alpha E_t log H(u)         (B1)
    q = E_z tanh^2(sqrt(q_hat) z),   q_hat = alpha E_t[IM(u)^2]/(1-q)               (B2)

thesis Eqs. 2.38-2.40 (correct as printed; Gardner & Derrida 1988).

binary teacher--student (Györgyi 1990), Nishimori line ``q = R``, ``q_hat = R_hat``, ``x = [R, R_hat]``::

    phi = -R_hat (1+R)/2 + E_z log 2cosh(sqrt(R_hat) z + R_hat) + 2 alpha E_t[H(-a t) log H(-a t)]   (G1)
    R = E tanh(b) = E tanh^2(b),   R_hat = alpha E_t[2 G(a t) IM(-a t)]/(1-R),   b = sqrt(R_hat) z + R_hat   (G2)

(stationarity of (G1) in R_hat gives ``R = 2 E tanh - E tanh^2``, equal to both by the
Nishimori identity ``E tanh(b) = E tanh^2(b)``; R is computed as ``E tanh^2`` for small R
and ``1 - E sech^2`` near 1, positive integrands without cancellation.)

(the thesis has no equation for this case).  The perfect-generalization state ``R = 1``
(``R_hat = inf``) has entropy 0; the first-order transition ``alpha_c`` is where the
poor-generalization branch's entropy crosses 0, the spinodal ``alpha_spinodal`` is the
fold where that branch ends.

Stability
---------
``hessian_eigenvalues`` are those of the Hessian of ``phi`` in ``x`` at the saddle.
``replicon`` is the (dimensionless) AT eigenvalue; RS is locally stable when it is > 0::

    replicon = 1 - alpha E_out[(d^2_h log Z_out)^2] E_in[(d^2_b log Z_in)^2]

which is ``1 - alpha E_t[(IM(u)(IM(u)-u))^2]`` for spherical storage (Gardner & Derrida 1988;
< 0 for kappa < 0 near capacity) and ``1 - alpha E_t[(IM(u)(IM(u)-u))^2] E_z[sech^4]/(1-q)^2``
for Ising weights.  For teacher--student ``E_out`` averages over the teacher's label.

How the saddle points are solved
--------------------------------
Every model's saddle-point equations are eliminated to one explicit map
``alpha = A(p)`` along the solution branch (``p = q`` or ``R`` for spherical weights,
``p = q_hat`` for Ising weights), and ``A(p) = alpha`` is solved in ``y = logit p`` or
``log p``.  The whole solve runs in numba, one call per public call
(``_common.newton`` calls an entry point of ``_branches_nb.py``; the root finders are one
generic driver in ``_newton_nb.py``): Newton with backtracking -- the algorithm of
``statmech.saddle.newton`` (tolerance 1e-14 on ``log A(p) - log alpha`` and on the step),
derivative from the sympy kernels, domain bound on the binary teacher--student poor branch
-- which also stops where the Newton correction is within the step tolerance
(``<= 1e-14 (1 + |y|)``, where ``saddle.newton`` would take that step and stop); on
failure bracket expansion + Brent (scipy's ``brentq``, transcribed; the same iterates as
``_common._bracket_solve`` and ``scipy.optimize.brentq``, tested).  The convergence test,
the order parameters, the entropy, the Hessian and the replicon of the result are computed
in the same call from the channel averages of the accepted Newton point (no quadrature
pass is repeated); Python only checks the arguments and builds the result.  The Ising
capacity (zero entropy along the branch) and the binary teacher--student transition (zero
poor-branch entropy, its derivative from the envelope theorem; the spinodal where
``d log alpha/d log R_hat = 0``) are Newton solves of the same driver, with Brent as their
fallback.  ``residual`` is the (scaled) max-norm of the gradient of ``phi`` at the result; a
residual >= 1e-10 or a failed solve raises ``ConvergenceError`` with the last iterate, the
residual and the iterations (so a returned result always has ``converged = True``).

A single solve starts from the model's cold start (spherical and binary storage: 5 Newton
step passes and one full pass at the benchmark points) or, for spherical teacher--student
and the binary teacher--student poor branch, from the branch tabulated once (512 points,
cubic Hermite in ``log alpha``): one step pass and one full pass.

Arrays of parameters are solved in the same single numba call, point after point, each
started from the previous solution -- on a grid (same kappa, comparable steps in alpha)
from a cubic Hermite extrapolation in ``log alpha`` of the last two, which typically needs
one quadrature pass per point.  A single solve costs a few quadrature passes (the numba
solve counts them: ``step_passes``, ``full_passes``); ``benchmarks/bench_perceptron.py``
reports each single solve against the cost of its passes (the limit).

Quadrature: Gaussian expectations over ``t`` use Gauss--Hermite (48-128 nodes, by q) while the
integrand is smooth (``q <= 0.6``) and otherwise a tanh--sinh rule split at the sharp
layer ``t = kappa/sqrt(q)`` (``statmech.gaussian.piecewise_nodes``), shifted so that the
rule's nodes are cached: ``E_t f(t) = E_s[f(s + c) e^{-c s - c^2/2}]``.  Tested against
mpmath to <= 1e-13 relative for 0 <= q <= 1 - 1e-10 (``tests/test_perceptron.py``).

Free-entropy functionals for the continuation engine
----------------------------------------------------
``<model>_free_entropy(x, alpha[, kappa])``, ``<model>_gradient(...)`` (alias
``<model>_residual``: the saddle-point equations) and ``<model>_hessian(...)`` for
``model`` in ``spherical_storage``,
``spherical_teacher_student``, ``binary_storage``, ``binary_teacher_student``.
All are affine in ``alpha`` (``phi = phi_entropic(x) + alpha phi_energetic(x)``).

Files
-----
One file per model and ansatz (the replica-symmetric theories are ``*_rs.py``, the broken
ones ``*_rsb.py`` on the RSB core :mod:`statmech.rsb`), on top of shared private modules:

``_equations.py``
    the sympy integrands of all four free entropies (one ``@kernels`` set, ``_K``, which
    includes the three numba modules below)
``_quadrature_nb.py``
    (numba) the quadrature rule of each channel average at a point, and the sums
``_newton_nb.py``
    (numba) the generic root finders: Newton, bracket expansion, Brent, the grid predictor
``_branches_nb.py``
    (numba) the branch maps of the four theories and the solves over many points
``_quadrature.py``
    the node table and the channel averages ``_st_out``, ``_ts_out``, ``_is_in``, ``_ts_in``
``_common.py``
    argument checks, the call of the numba solves and their failure reports, the residual
    check, the AT-line root
``spherical_storage_rs.py``
    (S1)-(S4): ``gardner_capacity``, ``spherical_storage``, ``spherical_storage_at_line``
``spherical_teacher_student_rs.py``
    (T1)-(T3): ``spherical_teacher_student``, ``spherical_teacher_student_asymptotic``
``binary_storage_rs.py``
    (B1)-(B3): ``binary_storage``, ``binary_capacity``, ``binary_storage_at_line``
``binary_teacher_student_rs.py``
    (G1)-(G2): ``binary_teacher_student``, ``binary_teacher_student_transition``
``spherical_rsb.py``
    1RSB and full RSB of the spherical perceptron, kappa < 0 included: the jamming line
    (``gardner_capacity_point``, ``jamming_kstep``, ``jamming_replicon``) and storage at
    finite alpha (docs/rsb.md, Eqs. P1, J4, J6)
``binary_rsb.py``
    1RSB of the Ising perceptron on the RSB core (docs/rsb.md "Binary perceptron"):
    ``binary_capacity_1rsb`` (Krauth--Mézard from the frozen general equations),
    ``binary_storage_1rsb``, ``binary_rsb_free_entropy``
``spherical_storage_reference.py``
    (S1)-(S2) again, written only with the cores (sympy kernel, Gaussian rule, bracketed root):
    the template a new model copies (README, "Adding a model") and the cross-check of the
    numba path (``spherical_storage_reference``)
``api.py``
    ``gardner_capacity``, ``spherical_storage``, ``binary_storage``, ``binary_capacity``:
    choose the theory by ``ansatz``
``phase_diagram.py``
    ``binary_storage_problem`` (the continuation problem of (B1)) and ``perceptron_lines``
    (capacities in the (kappa, alpha) plane by the continuation engine)
"""
from __future__ import annotations

from .binary_storage_rs import (binary_capacity_point, binary_storage_at_line, binary_storage_at_line_point,
                                binary_storage_free_entropy, binary_storage_gradient,
                                binary_storage_hessian, binary_storage_residual)
from .binary_teacher_student_rs import (BinaryTeacherStudentTransition, binary_teacher_student,
                                        binary_teacher_student_free_entropy,
                                        binary_teacher_student_gradient, binary_teacher_student_hessian,
                                        binary_teacher_student_residual, binary_teacher_student_transition)
from .phase_diagram import perceptron_lines
from .api import binary_capacity, binary_storage, gardner_capacity, spherical_storage
from .spherical_rsb import gardner_capacity_point
from .spherical_storage_rs import (spherical_storage_at_line, spherical_storage_at_line_point, spherical_storage_free_entropy, spherical_storage_gradient,
                                   spherical_storage_hessian, spherical_storage_residual)
from .spherical_storage_reference import spherical_storage_reference
from . import _stability  # noqa: F401  (registers the stability eigenvalues of the results)
from .spherical_teacher_student_rs import (_ts_asym_constant, spherical_teacher_student,
                                           spherical_teacher_student_asymptotic,
                                           spherical_teacher_student_free_entropy,
                                           spherical_teacher_student_gradient,
                                           spherical_teacher_student_hessian,
                                           spherical_teacher_student_residual)

__all__ = [
    "gardner_capacity", "gardner_capacity_point", "spherical_storage", "spherical_teacher_student",
    "spherical_teacher_student_asymptotic", "SPHERICAL_TS_ASYMPTOTIC_CONSTANT",
    "binary_storage", "binary_capacity", "binary_capacity_point", "binary_teacher_student",
    "spherical_storage_at_line", "spherical_storage_at_line_point", "binary_storage_at_line",
    "binary_storage_at_line_point",
    "binary_teacher_student_transition", "BinaryTeacherStudentTransition",
    "spherical_storage_free_entropy", "spherical_storage_gradient", "spherical_storage_hessian",
    "spherical_teacher_student_free_entropy", "spherical_teacher_student_gradient",
    "spherical_teacher_student_hessian",
    "binary_storage_free_entropy", "binary_storage_gradient", "binary_storage_hessian",
    "binary_teacher_student_free_entropy", "binary_teacher_student_gradient",
    "binary_teacher_student_hessian",
    "spherical_storage_residual", "spherical_teacher_student_residual", "binary_storage_residual",
    "binary_teacher_student_residual",
    "perceptron_lines", "spherical_storage_reference", "advanced",
]

from . import advanced  # noqa: E402  (the method-specific entry points)
from .._deprecation import moved as _moved  # noqa: E402

_MOVED = _moved(__name__, dict.fromkeys(advanced.__all__, "statmech.perceptron.advanced"),
                replacement={"binary_storage_1rsb": "statmech.perceptron.binary_storage(alpha, kappa, ansatz='1rsb') "
                                                    "or statmech.perceptron.advanced.binary_storage_1rsb",
                             "binary_capacity_1rsb": "statmech.perceptron.binary_capacity(kappa, ansatz='1rsb') "
                                                     "or statmech.perceptron.advanced.binary_capacity_1rsb"})


def __getattr__(name):
    # the constant c of (T3), computed on first use (Gauss-Hermite quadrature, cached)
    if name == "SPHERICAL_TS_ASYMPTOTIC_CONSTANT":
        return _ts_asym_constant()
    return _MOVED(name)
