"""The contract (numbers or an exception, never None or NaN), over every public name of the model packages and the continuation core.

Every public solver, called with arguments drawn across its documented domain (K from 1.01 to 1e6
and inf, every activation, alpha from 0 to 1e4, kappa from -5 to 5), either returns a result in
which every documented numeric field is a finite number, or raises ConvergenceError / ValueError.
None is accepted only in fields documented as optional (a dataclass field annotated ``... | None``;
a SaddlePoint's ``hessian_eigenvalues``, ``replicon``, ``rs_stable``), infinity only where the
case says the docstring documents it.  A transition's ``order`` is never None.

``CASES`` holds one entry per public callable; ``EXEMPT`` the names that are not solvers (classes,
constants, plotting) with the reason.  ``test_every_public_name_is_covered`` fails when a public
name is added without a contract.  The default run draws a few examples per solver; the
``slow`` sweep draws many and adds the solvers that take minutes.
"""
import dataclasses
import math
import typing

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from statmech import ConvergenceError, SaddlePoint
from statmech import activations, committee, continuation, franz_parisi, glm, perceptron, scm

PACKAGES = {"perceptron": perceptron, "perceptron.advanced": perceptron.advanced, "scm": scm,
            "scm.advanced": scm.advanced,
            "committee": committee, "committee.advanced": committee.advanced, "franz_parisi": franz_parisi,
            "activations": activations, "continuation": continuation, "glm": glm}

# ------------------------------------------------------------------------------- the domains
KAPPA = st.sampled_from([-1.0, 0.5]) | st.floats(-5.0, 5.0)      # both signs in the first few draws
ALPHA = st.floats(0.0, 1e4) | st.floats(0.0, 10.0)          # the whole range, and the interesting part
UNIT = st.floats(0.0, 1.0)
K_REAL = st.floats(math.log(1.01), math.log(1e6)).map(math.exp) | st.just(math.inf)
ESPS = {b: activations.ESP(b) for b in (0.5, 3.0)}     # one object each (m is cached per object)
SCM_ACT = st.sampled_from(["erf", "relu", "linear", *ESPS.values()])
ODD_K = st.sampled_from([1, 3, 5]) | st.integers(0, 500_000).map(lambda n: 2 * n + 1) | st.just(math.inf)
EVEN_K = st.sampled_from([2, 4]) | st.just(math.inf)
BETA = st.floats(0.0, 1e4) | st.just(math.inf)
H = st.floats(-1e6, 1e6)


def args(*strategies, **kw):
    """Strategy of (args, kwargs)."""
    return st.tuples(st.tuples(*strategies), st.fixed_dictionaries(kw))


# ------------------------------------------------------------------------------- the check
_SADDLE_OPTIONAL = {"hessian_eigenvalues", "replicon", "rs_stable", "headline", "stability"}


def _optional_fields(obj):
    """Fields annotated ``... | None`` or defaulting to None."""
    hints = typing.get_type_hints(type(obj))
    return {f.name for f in dataclasses.fields(obj) if "None" in str(hints.get(f.name, "")) or f.default is None}


def check(obj, allow_inf=(), path="result", allow_none=()):
    """Every number in ``obj`` finite (inf allowed at fields named in ``allow_inf``), no None
    outside the documented optional fields (and the keys named in ``allow_none``)."""
    name = path.rpartition(".")[2].split("[")[0]
    if obj is None:
        assert name in allow_none, f"{path} is None"
        return
    if isinstance(obj, (str, bool, np.bool_, type)) or callable(obj) and not isinstance(obj, np.ndarray):
        return
    if isinstance(obj, (int, float, np.integer, np.floating)):
        v = float(obj)
        assert not math.isnan(v), f"{path} is NaN"
        assert math.isfinite(v) or name in allow_inf, f"{path} = {v}"
        return
    if isinstance(obj, np.ma.MaskedArray):
        return check(obj.compressed(), allow_inf, path, allow_none)
    if isinstance(obj, np.ndarray):
        if obj.dtype.kind in "fiuc":
            assert not np.isnan(obj).any(), f"{path} has NaN"
            assert np.isfinite(obj).all() or name in allow_inf, f"{path} has inf"
        elif obj.dtype == object:
            for i, v in enumerate(obj.ravel()):
                check(v, allow_inf, f"{path}[{i}]", allow_none)
        return
    if isinstance(obj, dict):
        for k, v in obj.items():
            check(v, allow_inf, f"{path}.{k}", allow_none)
        return
    if isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            check(v, allow_inf, f"{path}[{i}]", allow_none)
        return
    if dataclasses.is_dataclass(obj):
        optional = _SADDLE_OPTIONAL if isinstance(obj, SaddlePoint) else _optional_fields(obj)
        for f in dataclasses.fields(obj):
            v = getattr(obj, f.name)
            if v is None and f.name in optional:
                continue
            if isinstance(v, tuple) and isinstance(f.default, tuple) and None in f.default:
                v = tuple(x for x in v if x is not None)      # e.g. CoexistencePoint.branches
            check(v, allow_inf, f"{path}.{f.name}", allow_none)
        if isinstance(obj, SaddlePoint):
            assert np.all(obj.converged), f"{path} not converged"
            assert obj.ansatz in ("rs", "1rsb", "2rsb", "frsb") or obj.ansatz.endswith("rsb"), obj.ansatz
            if obj.rs_stable is not None and obj.replicon is not None and obj.ansatz == "rs" \
                    and "reference_replicon" not in obj.extra:
                # stability is computed: the flag is the sign of the replicon (0: marginal, either)
                rep, ok = np.asarray(obj.replicon, dtype=float), np.asarray(obj.rs_stable)
                assert np.all(np.where(ok, rep >= 0, rep <= 0)), path
        if hasattr(obj, "order") and not isinstance(obj, SaddlePoint):
            assert obj.order is not None, f"{path}.order is None"
        return
    raise AssertionError(f"{path}: unexpected type {type(obj).__name__}")


def answers_or_raises(fn, a, kw, allow_inf=(), post=None, allow_none=()):
    try:
        res = fn(*a, **kw)
    except (ConvergenceError, ValueError):
        return None
    check(res, allow_inf, allow_none=allow_none)
    if post is not None:
        post(res, *a, **kw)
    return res


# ------------------------------------------------------------------------------- physics checks
def _rs_stable_iff_kappa_nonnegative(r, kappa, *a, **k):
    if abs(kappa) > 1e-9:
        assert bool(r.rs_stable) == (kappa > 0), (kappa, r.replicon)


def _order_never_none(t, *a, **k):
    orders = np.atleast_1d(t["order"] if isinstance(t, dict) else t.order)
    assert all(o is not None for o in orders)


def _flag_matches_at_line(r, kappa=0.0, method="zero_entropy"):
    assert bool(r.rs_stable) == bool(r.alpha_c <= r.alpha_AT * (1 + 1e-12))


# ------------------------------------------------------------------------------- continuation problems
def _cubic():
    """x^3 - x + p = 0 (two folds at p = +-2/(3 sqrt 3))."""
    return continuation.Problem(free_energy=lambda x, p: x[0] ** 4 / 4 - x[0] ** 2 / 2 - p * x[0], x0=[-1.5], p0=-1.0)


def _tricritical():
    import sympy as sp
    x, p, q = sp.symbols("x p q")
    return continuation.Problem.from_sympy(-p * x ** 2 / 2 - q * x ** 3 / 3 + x ** 4 / 4, [x], p, params=[q],
                                           param_values={"q": 1.0}, x0=[0.0], p0=-1.0, tol=1e-12)


def _trace(p_max, ds):
    return continuation.trace(_cubic(), -1.0, p_max, ds=ds)


def _switch(ds):
    prob = _tricritical()
    br = continuation.trace(prob, -1.0, 1.0, ds=0.05)
    return continuation.switch_branch(prob, br.points("branch_point")[0], -1.0, 1.0, ds=ds)


def _coexistence(ds):
    return continuation.coexistence(continuation.trace(_cubic(), -1.0, 1.0, ds=ds))


def _continue_point(q_max):
    prob = _tricritical()
    an = continuation.analyze(prob, -1.0, 1.0, ds=0.05)
    return continuation.continue_point(prob, an.points("fold")[0], "q", 0.3, q_max, ds=0.05)


def _intersections(q_max):
    line = _continue_point(q_max)
    return continuation.curve_intersections(line, line)


def _online(K, M, activation, lr, convention):
    """scm.online from fixed small random overlaps (a Gram matrix for every K, M <= 3)."""
    R0 = 1e-2 * np.random.default_rng(K + 7 * M).standard_normal((K, M))
    return scm.online(K, M, activation, lr, [0.0, 1.0, 10.0], Q0=0.3 * np.eye(K), R0=R0, convention=convention,
                      estimate_error=False)


ONLINE_ACT = st.sampled_from(["erf", "relu", "linear"])
CONV = st.sampled_from(["saad-solla", "normalized"])


def _fields(parity):
    """Local fields t of K hidden units, K odd (parity 1, sign) or even (0, ReLU)."""
    return st.integers(1, 4).flatmap(lambda n: st.lists(st.floats(-1e3, 1e3), min_size=2 * n - parity,
                                                        max_size=2 * n - parity)).map(np.array)


def _free_entropy_x(kind):
    q = st.floats(0.0, 1.0, exclude_max=True)
    return {"sph": st.tuples(q).map(list), "bin": st.tuples(q, st.floats(0.0, 1e4)).map(list)}[kind]


GLM_LOSS = st.sampled_from(["square", "logistic", "hinge", "squared_hinge", "exponential"])
GLM_LAM = st.floats(1e-3, 10.0)
GLM_NOISE = st.floats(0.0, 0.45)


# ------------------------------------------------------------------------------- the cases
# name -> (callable, strategy of (args, kwargs), options); options: n = examples in the default run
# (0: slow sweep only), inf = fields where the docstring documents infinity, post = a physics check
P, S, C, F, A = perceptron, scm, committee, franz_parisi, activations
CASES = {
    # perceptron
    "perceptron.gardner_capacity": (P.gardner_capacity, args(KAPPA), {"inf": ("result",)}),
    "perceptron.gardner_capacity_point": (P.gardner_capacity_point, args(KAPPA),
                                          {"post": _rs_stable_iff_kappa_nonnegative}),
    "perceptron.advanced.jamming_kstep": (P.advanced.jamming_kstep, args(st.floats(-2.0, -0.2), st.just(1)), {"n": 0}),
    "perceptron.advanced.jamming_replicon": (P.advanced.jamming_replicon, args(KAPPA), {}),
    "perceptron.spherical_storage": (P.spherical_storage, args(ALPHA, KAPPA), {}),
    "perceptron.spherical_teacher_student": (P.spherical_teacher_student, args(ALPHA), {}),
    "perceptron.spherical_teacher_student_asymptotic": (P.spherical_teacher_student_asymptotic, args(ALPHA),
                                                        {"inf": ("one_minus_R", "generalization_error")}),
    "perceptron.binary_storage": (P.binary_storage, args(ALPHA, KAPPA), {}),
    "perceptron.binary_capacity": (P.binary_capacity, args(KAPPA, st.sampled_from(["zero_entropy", "gardner_derrida"])),
                                   {}),
    "perceptron.binary_capacity_point": (P.binary_capacity_point,
                                         args(st.floats(-2.0, 2.0), st.sampled_from(["zero_entropy", "gardner_derrida"])),
                                         {"post": _flag_matches_at_line, "n": 1}),
    "perceptron.binary_teacher_student": (P.binary_teacher_student,
                                          args(ALPHA, st.sampled_from(["equilibrium", "poor", "perfect", "unstable"])),
                                          {"inf": ("q_hat", "R_hat")}),
    "perceptron.spherical_storage_at_line": (P.spherical_storage_at_line, args(KAPPA), {}),
    "perceptron.binary_storage_at_line": (P.binary_storage_at_line, args(st.floats(-2.0, 2.0)), {"n": 1}),
    "perceptron.spherical_storage_at_line_point": (P.spherical_storage_at_line_point, args(KAPPA), {"n": 2}),
    "perceptron.binary_storage_at_line_point": (P.binary_storage_at_line_point, args(st.floats(-2.0, 2.0)),
                                                {"n": 1}),
    "perceptron.binary_teacher_student_transition": (P.binary_teacher_student_transition, args(), {"n": 1}),
    **{f"perceptron.{m}_{w}": (getattr(P, f"{m}_{w}"), args(_free_entropy_x("sph" if m.startswith("spherical") else "bin"),
                                                           ALPHA, *([KAPPA] if m.endswith("storage") else [])), {})
       for m in ("spherical_storage", "spherical_teacher_student", "binary_storage", "binary_teacher_student")
       for w in ("free_entropy", "gradient", "hessian", "residual")},
    "perceptron.advanced.binary_storage_problem": (P.advanced.binary_storage_problem, args(KAPPA), {"n": 1}),
    "perceptron.perceptron_lines": (P.perceptron_lines, args(st.just(-0.5), st.just(1.0), st.just(7)), {"n": 0}),
    # soft committee machine
    "scm.activation_info": (S.activation_info, args(SCM_ACT), {}),
    "scm.pair_moment": (S.pair_moment, args(st.floats(-1.0, 1.0), SCM_ACT), {}),
    "scm.generalization_error": (S.generalization_error, args(st.floats(-1, 1), st.floats(-1, 1), st.floats(-1, 1), SCM_ACT),
                                 {}),
    "scm.entropy": (S.entropy, args(st.floats(-1, 1), st.floats(-1, 1), st.floats(-1, 1)), {}),
    "scm.free_energy": (S.free_energy, args(ALPHA, K_REAL, st.floats(-1, 1), st.floats(-1, 1), st.floats(-1, 1), SCM_ACT),
                        {}),
    "scm.advanced.full_hessian": (S.advanced.full_hessian, args(ALPHA, st.sampled_from([2, 3, 5]), st.floats(-1, 1), st.floats(-1, 1),
                                              st.floats(-1, 1), SCM_ACT), {}),
    "scm.advanced.continuation_problem": (S.advanced.continuation_problem, args(K_REAL, SCM_ACT), {"n": 1}),
    "scm.equilibria": (S.equilibria, args(ALPHA, st.sampled_from([1.5, 2, 3, 7.5, 26]), SCM_ACT),
                       {"n": 1, "none": ("full_space_eigenvalues", "full_space_stable", "full_space_blocks"), "inf": ("K",)}),
    "scm.learning_curve": (S.learning_curve, args(st.sampled_from([2, 3.5]), SCM_ACT,
                                                  st.just(np.linspace(0.0, 60.0, 7))), {"n": 0}),
    "scm.transitions": (S.transitions, args(K_REAL, SCM_ACT, method=st.sampled_from(["auto", "direct", "continuation"])),
                        {"inf": ("alpha_d", "K"), "none": ("anti_specialized_fold",), "post": _order_never_none,
                         "n": 2}),
    "scm.advanced.alpha_of_R_single_unit": (S.advanced.alpha_of_R_single_unit, args(UNIT, SCM_ACT), {"inf": ("result",)}),
    "scm.single_unit": (S.single_unit, args(ALPHA, SCM_ACT), {}),
    "scm.large_alpha": (S.large_alpha, args(K_REAL, SCM_ACT), {"n": 2, "inf": ("K",)}),
    "scm.advanced.infinite_K_branch": (S.advanced.infinite_K_branch, args(UNIT, SCM_ACT), {}),
    "scm.advanced.scm_problem": (S.advanced.scm_problem, args(st.floats(1.01, 100.0), SCM_ACT), {"n": 1}),
    "scm.advanced.scm_transitions": (S.advanced.scm_transitions, args(st.floats(1.5, 30.0), st.sampled_from(["erf", "relu"])),
                            {"post": _order_never_none, "n": 1, "none": ("fold", "coexistence")}),
    "scm.advanced.scm_point": (S.advanced.scm_point, args(st.fixed_dictionaries({"K": st.floats(1.5, 30.0),
                                                               "activation": st.sampled_from(["erf", "relu"])})),
                      {"post": _order_never_none, "n": 1}),
    # online learning: trajectories, plateaus, asymptotics (documented inf: lr_max of a linearisation
    # that never loses stability; the escape rate of identical ReLU students, where the flow is not
    # differentiable)
    "scm.online": (_online, args(st.sampled_from([1, 2, 3]), st.sampled_from([1, 2, 3]), ONLINE_ACT,
                                 st.floats(1e-3, 5.0), CONV), {"n": 2}),
    "scm.online_plateau": (S.online_plateau, args(st.sampled_from([1, 2, 3]), st.sampled_from([1, 2, 3]), ONLINE_ACT,
                                                  st.floats(1e-3, 3.0), convention=CONV), {"n": 2, "inf": ("escape_rate",)}),
    "scm.online_asymptotics": (lambda K, act, conv: S.online_asymptotics(K, K, act, convention=conv),
                               args(st.sampled_from([1, 2, 3]), SCM_ACT, CONV), {"n": 2, "inf": ("lr_max",)}),
    # tree committee machine
    "committee.tcm_storage": (C.tcm_storage, args(ALPHA, st.sampled_from([1, 3])), {"n": 1}),
    "committee.tcm_capacity": (C.tcm_capacity, args(ODD_K), {"inf": ("result",)}),
    "committee.tcm_capacity_point": (C.tcm_capacity_point, args(st.sampled_from([1, 3]), st.just("sign"), st.just("rs")),
                                      {"n": 1}),
    "committee.tcm_at_line": (C.tcm_at_line, args(st.sampled_from([1, 3])), {"n": 1}),
    "committee.tcm_at_line_point": (C.tcm_at_line_point, args(st.sampled_from([1, 3])), {"n": 1}),
    "committee.advanced.tcm_capacity_1rsb_point": (C.advanced.tcm_capacity_1rsb_point, args(st.sampled_from([1, 3])), {"n": 0}),
    "committee.advanced.tcm_capacity_1rsb_rqmc": (C.advanced.tcm_capacity_1rsb_rqmc, args(st.just(7)), {"n": 0}),
    "committee.advanced.rs_large_K_coefficient": (C.advanced.rs_large_K_coefficient, args(), {"n": 1}),
    "committee.advanced.monasson_zecchina": (C.advanced.monasson_zecchina, args(ODD_K), {"inf": ("result", "alpha_c")}),
    "committee.advanced.one_rsb_large_K_coefficient": (C.advanced.one_rsb_large_K_coefficient, args(), {"n": 1}),
    "committee.advanced.tcm_1rsb_large_K": (C.advanced.tcm_1rsb_large_K, args(st.floats(10.0, 1e6)), {"n": 1}),
    "committee.advanced.relu_kernel_Q": (C.advanced.relu_kernel_Q, args(st.floats(-1.0, 1.0)), {}),
    "committee.advanced.relu_rs_capacity_error": (C.advanced.relu_rs_capacity_error, args(st.sampled_from([2, 4])), {"n": 1}),
    "committee.advanced.sign_flip_cost": (C.advanced.sign_flip_cost, args(_fields(1)), {}),
    "committee.advanced.relu_flip_cost": (C.advanced.relu_flip_cost, args(_fields(0)), {}),
    "committee.advanced.relu_capacity_1rsb_point": (C.advanced.relu_capacity_1rsb_point, args(st.just(2)), {"n": 0}),
    "committee.advanced.relu_at_line": (C.advanced.relu_at_line, args(st.just(2)), {"n": 1}),
    "committee.advanced.relu_1rsb_alpha_rqmc": (C.advanced.relu_1rsb_alpha_rqmc, args(st.floats(0.1, 0.9), st.floats(0.1, 5.0)), {"n": 0}),
    "committee.advanced.relu_capacity_1rsb_rqmc": (C.advanced.relu_capacity_1rsb_rqmc, args(st.just(4), progress=st.just(False)), {"n": 0}),
    # merged from main (RSB at K = inf, Ising 1RSB): the slow sweep only, their cost is not measured here
    "committee.sign_capacity_large_K": (C.sign_capacity_large_K, args(st.floats(10.0, 1e6)), {"n": 0}),
    "committee.sign_capacity_large_K_point": (C.sign_capacity_large_K_point, args(st.floats(10.0, 1e6)), {"n": 0}),
    "committee.advanced.tcm_capacity_inf_point": (C.advanced.tcm_capacity_inf_point, args(st.sampled_from(["relu", "erf", "quadratic"]),
                                                                        st.sampled_from(["rs", "1rsb", "2rsb", "frsb"])),
                                         {"n": 0, "inf": ("K",)}),
    "committee.advanced.tcm_kstep_inf": (C.advanced.tcm_kstep_inf, args(st.sampled_from(["relu", "erf", "quadratic"]), st.sampled_from([1, 2]),
                                                      check=st.booleans()), {"n": 0, "inf": ("K",)}),
    "committee.advanced.relu_large_K_correction": (C.advanced.relu_large_K_correction, args(st.sampled_from(["rs", "1rsb", "2rsb"])),
                                          {"n": 2}),
    "committee.advanced.relu_large_K_fit": (C.advanced.relu_large_K_fit, args(st.just([8, 10, 12, 16, 24]),
                                                            st.just([2.8746, 2.8934, 2.8984, 2.9016, 2.9060]),
                                                            st.lists(st.floats(1e-4, 1e-2), min_size=5, max_size=5),
                                                            st.sampled_from(["rs", "1rsb"]),
                                                            fix_a=st.booleans()), {"n": 2}),
    "committee.advanced.tcm_1rsb_point": (C.advanced.tcm_1rsb_point, args(st.sampled_from([3, 5, 7]), st.floats(0.9, 0.99),
                                                        progress=st.just(False)), {"n": 0}),
    "committee.advanced.tcm_2rsb_alpha": (C.advanced.tcm_2rsb_alpha, args(st.floats(0.4, 0.7), st.floats(0.85, 0.95), st.floats(10.0, 25.0),
                                                        st.floats(25.0, 45.0)), {"n": 0, "inf": ("result",)}),
    "committee.advanced.tcm_output_kernel": (C.advanced.tcm_output_kernel, args(st.floats(-1.0, 1.0), st.sampled_from(["relu", "erf", "quadratic"])),
                                    {"n": 2}),
    "perceptron.advanced.binary_capacity_1rsb": (P.advanced.binary_capacity_1rsb, args(st.floats(0.0, 2.0)), {"n": 0}),
    "perceptron.advanced.binary_rsb_free_entropy": (P.advanced.binary_rsb_free_entropy, args(st.just(0.2), st.just(0.6), st.just(0.5),
                                                                           st.just(2.0), UNIT, st.floats(0.0, 1.0)),
                                           {"n": 0}),
    "perceptron.advanced.binary_storage_1rsb": (P.advanced.binary_storage_1rsb, args(st.floats(0.0, 1.0), st.floats(0.0, 1.0)), {"n": 0}),
    "perceptron.spherical_storage_reference": (P.spherical_storage_reference, args(ALPHA, KAPPA), {"n": 0}),
    # Franz-Parisi
    "franz_parisi.binary_perceptron": (F.binary_perceptron, args(st.floats(0.0, 1.0), st.floats(0.0, 0.5), st.floats(0.0, 1.0)),
                                       {"n": 1}),
    # minutes at some (alpha, d, kappa) on a loaded machine (the march in d): slow sweep only
    "franz_parisi.spherical_perceptron": (F.spherical_perceptron, args(st.floats(0.0, 5.0), st.floats(0.0, 0.5), KAPPA),
                                          {"n": 0}),
    "franz_parisi.binary_zero_crossing": (F.binary_zero_crossing, args(st.floats(0.2, 0.8)), {"n": 1}),
    "franz_parisi.equilibrium_binary": (F.equilibrium_binary, args(ALPHA, KAPPA), {}),
    "franz_parisi.equilibrium_spherical": (F.equilibrium_spherical, args(ALPHA, KAPPA), {}),
    "franz_parisi.stochastic_reference": (F.stochastic_reference, args(st.floats(0.0, 1.0), UNIT, BETA), {"n": 1}),
    "franz_parisi.stochastic_energy": (F.stochastic_energy, args(st.floats(0.0, 1.0), UNIT, BETA), {"n": 1}),
    "franz_parisi.stochastic_perceptron": (F.stochastic_perceptron, args(st.floats(0.3, 0.7), st.floats(0.0, 0.5),
                                                                         st.floats(0.3, 0.9), st.just(20.0)), {"n": 1}),
    "franz_parisi.binary_entropy_free": (F.binary_entropy_free, args(st.floats(0.0, 0.5)), {}),
    # activations
    **{f"activations.{n}": (getattr(A, n), args(H, BETA), {})
       for n in ("gate_expectation", "esp", "esp_derivative", "esp_variance",
                 "gate_variance", "esp_parameter_derivatives", "gate_derivatives")},
    # documented: Z overflows to inf for beta h > 709.78; log Z = inf at beta = inf, h > 0
    "activations.partition_function": (A.partition_function, args(H, BETA), {"inf": ("result",)}),
    "activations.log_partition": (A.log_partition, args(H, BETA), {"inf": ("result",)}),
    # documented: beta = inf given is echoed; log Z = inf at beta = inf, h > 0; the ReLU m'' = inf at |rho| = 1
    "activations.channel_values": (A.channel_values, args(st.lists(H, min_size=1, max_size=3), BETA),
                                   {"inf": ("beta", "log_partition")}),
    "activations.esp_pair_moment_point": (A.esp_pair_moment_point, args(st.lists(st.floats(-1.0, 1.0), min_size=1,
                                                                                 max_size=2), BETA,
                                                                        st.sampled_from([0, 1, 2])),
                                          {"inf": ("beta", "pair_moment")}),
    "activations.relu_pair_moment": (A.relu_pair_moment, args(st.floats(-1.0, 1.0), st.sampled_from([0, 1, 2])), {}),
    "activations.scm_transitions": (A.scm_transitions, args(st.sampled_from([2, 5]), st.lists(st.floats(0.0, 50.0), min_size=1,
                                                                                              max_size=2)),
                                    {"inf": ("alpha_s", "alpha_c", "alpha_d"), "post": _order_never_none, "n": 0}),
    # continuation (on problems with exact answers; the physics is in tests/test_continuation.py)
    "continuation.trace": (_trace, args(st.floats(-0.5, 1.0), st.floats(0.01, 0.2)), {"n": 1}),
    "continuation.analyze": (lambda p_max: continuation.analyze(_cubic(), -1.0, p_max, ds=0.05),
                             args(st.floats(-0.5, 1.0)), {"n": 1}),
    "continuation.deflate": (lambda p: continuation.deflate(_cubic(), p, starts=[[0.3]]), args(st.floats(-1.0, 1.0)), {}),
    "continuation.switch_branch": (_switch, args(st.floats(0.02, 0.1)), {"n": 1}),
    "continuation.coexistence": (_coexistence, args(st.floats(0.02, 0.1)), {"n": 1}),
    "continuation.continue_point": (_continue_point, args(st.floats(0.5, 1.5)), {"n": 1, "inf": ("margin",)}),
    "continuation.curve_intersections": (_intersections, args(st.floats(0.5, 1.5)), {"n": 1, "inf": ("margin",)}),
    # glm (the physics is in tests/test_glm.py); losses x ridge x label noise x alpha
    "glm.erm": (lambda loss, lam, p, a: glm.erm(glm.Model(loss=loss, penalty=glm.ridge(lam), noise=p), a),
                args(GLM_LOSS, GLM_LAM, GLM_NOISE, ALPHA), {}),
    "glm.learning_curve": (lambda loss, lam, p, a: glm.learning_curve(
        glm.Model(loss=loss, penalty=glm.ridge(lam), noise=p), a),
        args(GLM_LOSS, GLM_LAM, GLM_NOISE, st.lists(st.floats(0.01, 50.0), min_size=1, max_size=4)), {"n": 2}),
    "glm.regularisation_path": (lambda loss, p, a, lams: glm.regularisation_path(
        glm.Model(loss=loss, penalty=glm.ridge(1.0), noise=p), a, sorted(lams, reverse=True)),
        args(GLM_LOSS, GLM_NOISE, st.floats(0.1, 20.0), st.lists(GLM_LAM, min_size=1, max_size=4)), {"n": 2}),
    "glm.optimal_lam": (lambda loss, p, a: glm.optimal_lam(glm.Model(loss=loss, penalty=glm.ridge(1.0), noise=p), a,
                                                           xatol=1e-3),
                        args(GLM_LOSS, GLM_NOISE, st.floats(0.1, 20.0)), {"n": 1}),
    "glm.gibbs": (lambda kappa, a: glm.gibbs(glm.Model(channel="random", loss=glm.margin_counting(kappa),
                                                       penalty="spherical"), a),
                  args(st.floats(-1.0, 2.0), ALPHA), {}),
    "glm.bayes_optimal": (lambda prior, p, a: glm.bayes_optimal(prior, glm.sign(p), a),
                          args(st.sampled_from(["gaussian", "ising"]), GLM_NOISE, ALPHA), {"inf": ("q_hat",)}),
    "glm.bayes_transition": (lambda p: glm.bayes_transition("ising", glm.sign(p)), args(st.floats(0.0, 0.3)),
                             {"n": 2}),
    "glm.thresholds": (lambda p: glm.thresholds(prior="ising", channel=glm.sign(p)), args(st.floats(0.0, 0.3)),
                       {"n": 1}),
    "glm.sat_unsat_rsb": (lambda kappa: glm.sat_unsat_rsb(glm.Model(channel="random", loss=glm.margin_counting(kappa),
                                                                    penalty="spherical"), "1rsb"),
                          args(st.floats(-1.5, 1.0)), {"n": 1, "inf": ("zero_set",)}),   # [kappa, inf)
    "glm.storage_rsb": (lambda kappa, a: glm.storage_rsb(glm.Model(channel="random", loss=glm.margin_counting(kappa),
                                                                   penalty="spherical"), a, "rs"),
                        args(st.floats(-1.0, 1.0), st.floats(0.0, 5.0)), {"n": 2, "inf": ("zero_set",)}),
}

# a typical point, drawn first, so that a few default examples are not all outside the domain
TYPICAL = {
    "franz_parisi.binary_perceptron": (0.5, 0.1, 0.0), "franz_parisi.equilibrium_spherical": (0.5, 0.0),
    "franz_parisi.stochastic_energy": (0.55, 0.5, 20.0), "franz_parisi.stochastic_reference": (0.55, 0.5, 20.0),
    "franz_parisi.stochastic_perceptron": (0.55, 0.1, 0.7, 20.0), "scm.entropy": (0.3, 0.5, 0.4),
    "continuation.continue_point": (1.0,), "continuation.curve_intersections": (1.0,),
    "scm.transitions": (26, "erf"), "scm.equilibria": (10.0, 2, "erf"), "scm.online": (2, 2, "erf", 0.5, "saad-solla"),
    "scm.online_asymptotics": (2, "erf", "saad-solla"), "committee.tcm_storage": (1.0, 3),
    "glm.erm": ("logistic", 0.1, 0.1, 2.0), "glm.bayes_optimal": ("ising", 0.0, 2.0), "glm.gibbs": (0.0, 1.0),
    "glm.sat_unsat_rsb": (-0.5,), "glm.storage_rsb": (0.0, 1.0),
}

EXEMPT = {
    "perceptron.advanced": "the namespace of the method-specific entry points (each has its case)",
    "perceptron.SPHERICAL_TS_ASYMPTOTIC_CONSTANT": "a number (checked finite below)",
    "perceptron.BinaryTeacherStudentTransition": "result class",
    "scm.ACTIVATIONS": "tuple of names", "scm.Activation": "result class", "scm.FreeEnergy": "result class",
    "scm.Branch": "result class", "scm.LargeAlpha": "result class", "scm.LearningCurve": "result class", "scm.Transitions": "result class",
    "scm.scm_lines": "the continuation engine over K (minutes); its transitions are scm.scm_transitions",
    "scm.advanced": "the namespace of the method-specific entry points (each has its case)",
    "scm.advanced.scm_grid": "a checkpointed sweep of scm.scm_point (writes files)",
    "scm.OnlineTrajectory": "result class", "scm.PlateauPassage": "result class", "scm.OnlinePlateau": "result class",
    "scm.OnlineAsymptotics": "result class",
    "activations.Sigmoid": "numpy-style class (its values are gate_expectation's)",
    "activations.Softplus": "numpy-style class (its values are log_partition's)",
    "activations.ESP": "activation class (drawn as an activation of every scm solver)",
    "activations.ESPTransitions": "result class", "activations.ChannelValues": "result class",
    "activations.PairMoment": "result class", "activations.SWISH_MIN_X": "a number (checked finite below)",
    "activations.SWISH_MIN_VALUE": "a number (checked finite below)",
    "continuation.KINDS": "tuple of names", "continuation.Problem": "problem class", "continuation.Branch": "result class",
    "continuation.SpecialPoint": "result class", "continuation.CoexistencePoint": "result class",
    "continuation.Analysis": "result class", "continuation.Curve": "result class",
    "committee.advanced": "the namespace module of the method-specific entry points (its names have cases)",
    "committee.advanced.Rule": "a quadrature rule (an input of committee.advanced.tcm_1rsb_point)",
    "committee.advanced.TCMRSBPoint": "result class", "committee.advanced.TCM2RSBResult": "result class",
    "committee.advanced.TCM1RSBBranch": "result class",
    "committee.advanced.tcm_1rsb_branch": "traces committee.tcm_1rsb_point (covered) at five or six q1: tens of minutes",
    "committee.advanced.tcm_2rsb_search": "a Nelder-Mead search over committee.tcm_2rsb_alpha (covered): minutes to hours",
    "continuation.plot_branches": "plotting", "continuation.plot_phase_diagram": "plotting",
    **{f"glm.{n}": "a component of a specification (sympy-backed), not a solver" for n in (
        "Model", "Loss", "Penalty", "Prior", "Channel", "LOSSES", "square", "logistic", "hinge", "squared_hinge",
        "exponential", "margin_counting", "margin_loss", "ridge", "l1", "elastic_net", "spherical", "ising",
        "gaussian", "gauss_bernoulli", "random_labels", "sign", "probit", "linear", "y", "h", "z", "w", "u")},
    **{f"glm.{n}": "result class" for n in ("ERMResult", "GibbsResult", "BayesResult", "BayesTransition",
                                            "Thresholds")},
}

FAST = sorted(n for n, c in CASES.items() if c[2].get("n", 3))
ALL = sorted(CASES)
_HC = [HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large]


def test_every_public_name_is_covered():
    public = {f"{p}.{n}" for p, m in PACKAGES.items() for n in m.__all__}
    assert public - set(CASES) - set(EXEMPT) == set(), "public names without a contract case"
    assert set(CASES) | set(EXEMPT) <= public, "cases for names that are not public"
    for name in ("perceptron.SPHERICAL_TS_ASYMPTOTIC_CONSTANT", "activations.SWISH_MIN_X", "activations.SWISH_MIN_VALUE"):
        pkg, attr = name.rsplit(".", 1)
        assert math.isfinite(getattr(PACKAGES[pkg], attr))


def _run(name, data):
    fn, strategy, opts = CASES[name]
    if name in TYPICAL:
        strategy = st.just((TYPICAL[name], {})) | strategy
    a, kw = data.draw(strategy, label="arguments")
    return answers_or_raises(fn, a, kw, opts.get("inf", ()), opts.get("post"), opts.get("none", ())) is not None


@pytest.mark.parametrize("name", FAST)
def test_contract(name):
    """A few examples per solver (``n`` of its case, default 3), the same every run; at least one
    of them must answer (a solver that only raises would pass vacuously)."""
    answered = []

    @settings(max_examples=CASES[name][2].get("n", 3), deadline=None, suppress_health_check=_HC, derandomize=True,
              database=None)
    @given(data=st.data())
    def run(data):
        answered.append(_run(name, data))
    run()
    assert any(answered), f"{name}: every drawn example raised"


@pytest.mark.slow
@pytest.mark.parametrize("name", ALL)
@settings(max_examples=25, deadline=None, suppress_health_check=_HC)
@given(data=st.data())
def test_contract_sweep(name, data):
    _run(name, data)


# ---------------------------------------------------------------------------------------- the flags
def test_validity_flags_are_computed():
    """gardner_capacity(-1) = 13.27 is the RS value above the AT line; binary storage above alpha_AT = 1.0147."""
    g = perceptron.gardner_capacity_point(-1.0)
    assert g.alpha_c == pytest.approx(13.2731998370, rel=1e-9) and g.replicon < 0 and g.rs_stable is False
    assert perceptron.gardner_capacity_point(0.5).rs_stable is True
    a_at = perceptron.binary_storage_at_line(0.0)
    assert a_at == pytest.approx(1.01465361, rel=1e-7)
    below, above = perceptron.binary_storage(a_at * 0.99), perceptron.binary_storage(a_at * 1.01)
    assert below.rs_stable and not above.rs_stable and below.replicon > 0 > above.replicon
    gd = perceptron.binary_capacity_point(0.0, "gardner_derrida")
    ze = perceptron.binary_capacity_point(0.0)
    assert gd.rs_stable is False and gd.alpha_c == pytest.approx(4 / math.pi, rel=1e-14)
    assert ze.rs_stable is True and ze.entropy == pytest.approx(0.0, abs=1e-12) and ze.replicon > 0
    t3 = committee.tcm_capacity_point(3, "sign", "rs")
    assert t3.alpha_c == pytest.approx(committee.tcm_capacity(3), rel=1e-14) and t3.rs_stable is False
    assert committee.tcm_capacity_point(1, "sign", "rs").rs_stable is True
    ref = franz_parisi.equilibrium_spherical(12.0, -1.0)        # above the AT line of kappa = -1
    assert ref.replicon < 0 and ref.rs_stable is False


def test_binary_storage_functional_at_small_q_hat():
    """q_hat = 0 (alpha = 0) and subnormal q_hat (R_hat for teacher-student) used to divide by zero;
    below 1e-8 the exact series is used, continuous with the quadrature across the switch."""
    P = perceptron
    for fn, kw in [(f, {"kappa": 0.5}) for f in (P.binary_storage_free_entropy, P.binary_storage_gradient,
                                                 P.binary_storage_hessian)] + \
                  [(f, {}) for f in (P.binary_teacher_student_free_entropy, P.binary_teacher_student_gradient,
                                     P.binary_teacher_student_hessian)]:
        for qh in (0.0, 5e-324, 1e-300, 1e-12):
            assert np.all(np.isfinite(fn([0.3, qh], 0.7, **kw)))
        below, above = fn([0.3, 0.99999e-8], 0.7, **kw), fn([0.3, 1.00001e-8], 0.7, **kw)
        assert np.allclose(below, above, rtol=0, atol=1e-9)
    assert perceptron.binary_storage_free_entropy([0.3, 0.0], 0.0) == pytest.approx(math.log(2.0), abs=1e-15)
