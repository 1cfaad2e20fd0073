"""One library: every public solver's result follows the one result protocol, every public name
is listed once and documented, the vocabulary is the same everywhere.

``SAMPLES`` holds one cheap call per public solver of each API module; ``NOT_SOLVERS`` the public
names that are not solvers (classes, constants, functionals returning plain numbers, float
conveniences with a ``*_point`` twin), each with the reason.  A public name in neither fails
``test_every_public_name_is_classified``.
"""
import importlib
import inspect
import json
import math

import numpy as np
import pytest

import statmech
from statmech.result import PROTOCOL, REPR_LIMIT, Result

# the API modules whose names are classified here (the others follow as they join the protocol)
MODULES = ["statmech.perceptron", "statmech.perceptron.advanced", "statmech.rsb", "statmech.activations",
           "statmech.continuation"]

P = "statmech.perceptron."
SAMPLES = {
    P + "gardner_capacity_point": lambda m: m.gardner_capacity_point(-1.0, "1rsb"),
    P + "spherical_storage": lambda m: m.spherical_storage(1.0, 0.0),
    P + "spherical_teacher_student": lambda m: m.spherical_teacher_student(2.0),
    P + "binary_storage": lambda m: m.binary_storage(0.5),
    P + "binary_capacity_point": lambda m: m.binary_capacity_point(0.0),
    P + "binary_teacher_student": lambda m: m.binary_teacher_student(1.0),
    P + "binary_teacher_student_transition": lambda m: m.binary_teacher_student_transition(),
    P + "spherical_storage_at_line_point": lambda m: m.spherical_storage_at_line_point(-0.5),
    P + "binary_storage_at_line_point": lambda m: m.binary_storage_at_line_point(0.0),
    P + "spherical_storage_reference": lambda m: m.spherical_storage_reference(1.0),
    P + "advanced.binary_storage_1rsb": lambda m: m.binary_storage_1rsb(0.5),
    P + "advanced.binary_capacity_1rsb": lambda m: m.binary_capacity_1rsb(0.0),
    P + "advanced.jamming_kstep": lambda m: m.jamming_kstep(-1.0, 2),
    "statmech.rsb.sk_ground_state": lambda m: m.sk_ground_state("2rsb"),
    "statmech.rsb.solve_kstep": lambda m: m.sk_ground_state("1rsb").solution,
    "statmech.rsb.solve_frsb": lambda m: m.sk_ground_state("frsb", Ks=(4, 8)).solution,
    "statmech.rsb.minimize": lambda m: m.minimize(lambda x: float(x @ x), lambda x: 2 * x, np.array([1.0, -2.0])),
    "statmech.activations.scm_transitions": lambda m: m.scm_transitions(2, [0.5, 2.0]),
    "statmech.continuation.trace": lambda m: m.trace(_fold_problem(m), -1.0, 1.0, ds=0.05),
    "statmech.continuation.analyze": lambda m: m.analyze(_fold_problem(m), -1.0, 1.0, starts=[[-1.5], [1.5]],
                                                         ds=0.05),
    "statmech.continuation.switch_branch": lambda m: m.switch_branch(
        _pitchfork(m), m.trace(_pitchfork(m), -1.0, 1.0, ds=0.05).points("branch_point")[0], ds=0.05),
    "statmech.continuation.deflate": lambda m: m.deflate(_fold_problem(m), 0.0, starts=[[-1.2]])[0],
    "statmech.continuation.coexistence": lambda m: m.analyze(_first_order(m), -1.0, 1.0, starts=[[0.0]],
                                                             ds=0.01).coexistence[0],
    "statmech.continuation.continue_point": lambda m: m.continue_point(
        _fold_two(m), m.trace(_fold_two(m), -1.0, 1.0, ds=0.05).points("fold")[0], "a", 0.8, 1.2, ds=0.05),
}


def _fold_problem(m):
    import sympy as sp
    x, p = sp.symbols("x p")
    return m.Problem.from_sympy(x ** 4 / 4 - x ** 2 / 2 - p * x, [x], p, x0=[-1.5], p0=-1.0)


def _pitchfork(m):
    import sympy as sp
    x, p = sp.symbols("x p")
    return m.Problem.from_sympy(-p * x ** 2 / 2 + x ** 4 / 4, [x], p, x0=[0.0], p0=-1.0)


def _first_order(m):
    import sympy as sp
    x, p = sp.symbols("x p")
    return m.Problem.from_sympy(-p * x ** 2 / 2 - x ** 3 / 3 + x ** 4 / 4, [x], p, x0=[0.0], p0=-1.0)


def _fold_two(m):
    import sympy as sp
    x, p, a = sp.symbols("x p a")
    return m.Problem.from_sympy(x ** 4 / 4 - a * x ** 2 / 2 - p * x, [x], p, params=(a,), x0=[-1.5], p0=-1.0,
                                param_values={"a": 1.0})

_FUNCTIONAL = "a functional or its derivative at a given point (a number or an array)"
_FLOAT = "a float convenience; its *_point twin returns the result"
NOT_SOLVERS = {
    P + "gardner_capacity": _FLOAT, P + "binary_capacity": _FLOAT,
    P + "spherical_storage_at_line": _FLOAT, P + "binary_storage_at_line": _FLOAT,
    P + "spherical_teacher_student_asymptotic": "a closed form (dict of arrays)",
    P + "SPHERICAL_TS_ASYMPTOTIC_CONSTANT": "a number",
    P + "BinaryTeacherStudentTransition": "a result class",
    P + "perceptron_lines": "the continuation engine's lines in the (kappa, alpha) plane (a dict of curves)",
    P + "advanced.jamming_replicon": "a closed form (a number)",
    P + "advanced.binary_rsb_free_entropy": _FUNCTIONAL,
    P + "advanced.binary_storage_problem": "a continuation problem (input of statmech.continuation)",
    **{P + f"{m}_{w}": _FUNCTIONAL for m in ("spherical_storage", "spherical_teacher_student", "binary_storage",
                                            "binary_teacher_student")
       for w in ("free_entropy", "gradient", "hessian", "residual")},
}
_RSB_BUILDING_BLOCKS = ("Channel", "HingeFrozen", "AbsFrozen", "LogHTerminal", "Lattice", "KStepAverage",
                        "MinimizeInfo", "kstep_average", "make_lattice", "spherical_entropic", "ising_entropic_t0",
                        "fd_hessian", "Problem", "KStepSolution", "ParisiSolution", "graded_grid", "richardson",
                        "SKGroundState", "PowerHingeFrozen", "kernel_kstep_average", "KernelJammingProblem",
                        "identity_kernel", "IsingTerminal", "IsingFrozen", "HardFrozen", "IsingEntropic",
                        "ising_entropic", "ising_lattice", "Stationary", "solve_stationary",
                        "frozen_cubic_moment", "frozen_soft_hinge", "jammed_spherical_entropic",
                        "jamming_ratio_quadrature", "nested_jamming_average")
NOT_SOLVERS.update({f"statmech.rsb.{n}": "a building block of the RSB core (channels, lattices, averages, "
                                          "problem and result classes)" for n in _RSB_BUILDING_BLOCKS})
_ACT = "a function of the channel model evaluated element-wise (numbers), or its class/constant"
NOT_SOLVERS.update({f"statmech.activations.{n}": _ACT for n in (
    "Sigmoid", "Softplus", "partition_function", "gate_expectation", "esp", "esp_derivative", "log_partition",
    "esp_variance", "gate_variance", "esp_parameter_derivatives", "gate_derivatives", "relu_pair_moment", "ESP",
    "ESPTransitions", "SWISH_MIN_X", "SWISH_MIN_VALUE")})
NOT_SOLVERS.update({f"statmech.continuation.{n}": "a class, constant or plotting function of the engine" for n in (
    "KINDS", "Problem", "Branch", "SpecialPoint", "CoexistencePoint", "Analysis", "Curve", "plot_branches",
    "plot_phase_diagram", "curve_intersections")})


def _public(modname):
    mod = importlib.import_module(modname)
    return {f"{modname}.{n}": getattr(mod, n) for n in mod.__all__ if not inspect.ismodule(getattr(mod, n))}


def _module_of(name):
    return importlib.import_module(name.rsplit(".", 1)[0])


# --------------------------------------------------------------------------- the surface
@pytest.mark.parametrize("modname", MODULES)
def test_all_is_listed_once_and_documented(modname):
    mod = importlib.import_module(modname)
    names = list(mod.__all__)
    assert len(names) == len(set(names)), f"{modname}.__all__ lists a name twice"
    assert mod.__doc__ and mod.__doc__.strip(), f"{modname} has no docstring"
    for n in names:
        obj = getattr(mod, n)
        if callable(obj) and not inspect.ismodule(obj):
            assert (obj.__doc__ or "").strip(), f"{modname}.{n} has no docstring"


def test_every_public_name_is_classified():
    public = {n for m in MODULES for n in _public(m)}
    missing = public - set(SAMPLES) - set(NOT_SOLVERS)
    assert not missing, f"public names neither sampled nor classified: {sorted(missing)}"
    stale = (set(SAMPLES) | set(NOT_SOLVERS)) - public
    assert not stale, f"classified names that are not public: {sorted(stale)}"


def test_advanced_namespaces_are_documented():
    import sys
    sys.path.insert(0, "docs")
    try:
        conf = importlib.import_module("conf")
    except Exception:   # the docs extra is not installed (sphinx): the namespaces are still listed below
        conf = None
    finally:
        sys.path.pop(0)
    if conf is not None:
        assert "statmech.perceptron.advanced" in conf.api_modules()


# --------------------------------------------------------------------------- the protocol
@pytest.fixture(scope="module")
def results():
    return {}


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_result_protocol(name):
    r = SAMPLES[name](_module_of(name))
    assert isinstance(r, Result), f"{name} returns {type(r).__name__}, not a statmech.Result"
    for f in PROTOCOL:
        assert hasattr(r, f), f"{name}: no {f}"
    assert np.all(r.converged)
    assert isinstance(r.ansatz, str) and (r.ansatz in ("rs", "frsb", "-") or r.ansatz.endswith("rsb"))
    assert r.rs_stable is None or isinstance(r.rs_stable, (bool, np.bool_, np.ndarray))
    err = np.asarray(r.error, dtype=float)
    assert np.all(np.isfinite(err)) and np.all(err >= 0), f"{name}: error = {r.error!r}"
    if r.stability is not None:
        assert np.all(np.isfinite(np.asarray(r.stability, dtype=float)))
    assert int(np.max(r.iterations)) >= 0 and np.all(np.asarray(r.residual, dtype=float) >= 0)
    text = repr(r)
    assert len(text) < REPR_LIMIT, f"{name}: repr is {len(text)} characters"
    assert isinstance(r._repr_html_(), str)
    d = r.to_dict()
    assert json.loads(json.dumps(d, allow_nan=False)) == d
    assert set(PROTOCOL) <= set(d)
    if r.headline is not None:
        v = r.headline_value()
        assert np.all(np.isfinite(np.asarray(v, dtype=float)))


def test_repr_of_a_large_vectorized_result_is_bounded():
    import statmech.perceptron as P_
    r = P_.spherical_storage(np.linspace(0.01, 1.9, 5000))
    assert len(repr(r)) < REPR_LIMIT
    d = r.to_dict()
    assert json.loads(json.dumps(d, allow_nan=False)) == d


def test_estimate_prints_the_supported_digits():
    import statmech.perceptron as P_
    a = P_.gardner_capacity(-1.0, "frsb")
    assert isinstance(a, float) and a.error > 0
    assert repr(a).startswith("12.280") and "±" in repr(a)
    assert math.isclose(a + 0.0, P_.gardner_capacity_point(-1.0, "frsb").alpha_c, rel_tol=1e-15)


# --------------------------------------------------------------------------- the vocabulary
@pytest.mark.parametrize("call", [
    lambda: statmech.perceptron.gardner_capacity("1"),
    lambda: statmech.perceptron.gardner_capacity(None),
    lambda: statmech.perceptron.spherical_storage("0.5"),
    lambda: statmech.perceptron.binary_storage(True),
])
def test_numbers_are_numbers(call):
    with pytest.raises(TypeError, match="must be a real number"):
        call()


def test_options_a_function_does_not_take():
    with pytest.raises(TypeError, match=r"gardner_capacity\(\) got an unexpected keyword argument 'tol'"):
        statmech.perceptron.gardner_capacity(0.0, tol=1e-3)


@pytest.mark.parametrize("call,supported", [
    (lambda: statmech.perceptron.gardner_capacity(-1.0, "2rsb"), "'rs', '1rsb', 'frsb'"),
    (lambda: statmech.perceptron.binary_storage(0.5, 0.0, "frsb"), "'rs', '1rsb'"),
    (lambda: statmech.rsb.sk_ground_state("3rs"), "'rs', 'krsb', 'frsb'"),
])
def test_an_unsupported_ansatz_lists_what_the_model_supports(call, supported):
    with pytest.raises(ValueError, match=supported):
        call()


def test_moved_names_warn_and_work():
    import statmech.perceptron as P_
    with pytest.warns(DeprecationWarning, match="statmech.perceptron.advanced.jamming_kstep"):
        f = P_.jamming_kstep
    assert f is P_.advanced.jamming_kstep
    with pytest.warns(DeprecationWarning, match="binary_storage\\(alpha, kappa, ansatz='1rsb'\\)"):
        assert P_.binary_storage_1rsb is P_.advanced.binary_storage_1rsb


def test_simulate_reexports_exactly_its_submodules_public_names():
    import pkgutil
    import statmech.simulate as S
    found = {}
    for info in pkgutil.iter_modules(S.__path__):
        if not info.name.startswith("_"):
            mod = importlib.import_module(f"statmech.simulate.{info.name}")
            for n in getattr(mod, "__all__", ()):
                found.setdefault(n, info.name)
    assert S._WHERE == found
    stray = {n for n in dir(S) if not n.startswith("_") and not inspect.ismodule(getattr(S, n))} - set(S.__all__)
    assert not stray, f"non-API names in statmech.simulate: {sorted(stray)}"
