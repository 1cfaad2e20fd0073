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
           "statmech.continuation", "statmech.simulate", "statmech.scm", "statmech.scm.advanced",
           "statmech.glm", "statmech.glm.advanced", "statmech.franz_parisi", "statmech.committee",
           "statmech.committee.advanced"]

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
    "statmech.activations.channel_values": lambda m: m.channel_values([-1.0, 0.0, 2.0], 1.5),
    "statmech.activations.esp_pair_moment_point": lambda m: m.esp_pair_moment_point([0.3, 0.9], 2.0, order=1),
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

# ---- statmech.scm: one cheap call per result-returning function (numba kernels cached)
M_ = "statmech.scm."
SAMPLES.update({
    M_ + "free_energy": lambda m: m.free_energy(10.0, 5, 0.5, 0.1, 0.0, derivatives=True),
    M_ + "equilibria": lambda m: m.equilibria(10.0, 2)[0],
    M_ + "learning_curve": lambda m: m.learning_curve(2, "erf", [1.0, 30.0]),
    M_ + "transitions": lambda m: m.transitions(2),
    M_ + "single_unit": lambda m: m.single_unit(2.0),
    M_ + "large_alpha": lambda m: m.large_alpha(5),
    M_ + "online": lambda m: m.online(2, 2, "erf", 0.5, [0.0, 1.0], Q0=0.3 * np.eye(2), R0=[[1e-3, 0.0], [0.0, 2e-3]]),
    M_ + "online_plateau": lambda m: m.online_plateau(2, 2, "erf", 0.5),
    M_ + "online_asymptotics": lambda m: m.online_asymptotics(2, 2, "erf"),
})

# ---- statmech.committee: cheap calls (the K = 3 sign results and the K = inf closed forms)
CM = "statmech.committee."
CA = CM + "advanced."


def _cheap_1rsb_rule(m):
    return m.Rule(inner=("sorted", 4, 2, 1), outer=("gh", 6))


SAMPLES.update({
    CM + "tcm_capacity_point": lambda m: m.tcm_capacity_point(3),
    CM + "tcm_storage": lambda m: m.tcm_storage(1.0, 3),
    CM + "tcm_at_line_point": lambda m: m.tcm_at_line_point(1),
    CM + "sign_capacity_large_K_point": lambda m: m.sign_capacity_large_K_point(1e3, ansatz="1rsb"),
    CA + "tcm_capacity_1rsb_point": lambda m: m.tcm_capacity_1rsb_point(3, progress=False),
    CA + "tcm_capacity_1rsb_rqmc": lambda m: m.tcm_capacity_1rsb_rqmc(7, log2_points=6, reps=2, progress=False),
    CA + "relu_capacity_1rsb_point": lambda m: m.relu_capacity_1rsb_point(2),
    CA + "relu_capacity_1rsb_rqmc": lambda m: m.relu_capacity_1rsb_rqmc(4, progress=False),
    CA + "relu_large_K_correction": lambda m: m.relu_large_K_correction("rs"),
    CA + "relu_large_K_fit": lambda m: m.relu_large_K_fit([8, 10, 12, 16, 24], [2.8746, 2.8934, 2.8984, 2.9016, 2.9060],
                                                          [2e-3] * 5, "rs"),
    CA + "tcm_capacity_inf_point": lambda m: m.tcm_capacity_inf_point("relu", "rs"),
    CA + "tcm_kstep_inf": lambda m: m.tcm_kstep_inf("relu", 1),
    CA + "tcm_1rsb_large_K": lambda m: m.tcm_1rsb_large_K(1e3),
    CA + "tcm_1rsb_point": lambda m: m.tcm_1rsb_point(3, 0.99, rule=_cheap_1rsb_rule(m), check=False, progress=False),
    CA + "tcm_1rsb_branch": lambda m: m.tcm_1rsb_branch(3, (0.01, 0.02, 0.04, 0.08), rule=_cheap_1rsb_rule(m),
                                                        progress=False),
    CA + "tcm_2rsb_search": lambda m: m.tcm_2rsb_search(n_outer=6, n_middle=24, checks=False, progress=False),
})
#: samples that take a minute or more (RQMC searches, finite-alpha 1RSB solves): in the slow suite
SLOW_SAMPLES = {CA + "relu_capacity_1rsb_rqmc", CA + "tcm_1rsb_point", CA + "tcm_1rsb_branch",
                CA + "tcm_2rsb_search"}


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

# ---- statmech.simulate: small instances, a second or less each (numba kernels cached)
S = "statmech.simulate."


def _teacher_instance(m, N=11, alpha=0.3, seed=1):
    X, y, _ = m.random_binary_instance(N, alpha, seed=seed, teacher=True)
    return X, y


def _gaussian_instance(P, N, seed=0):
    rng = np.random.default_rng(seed)
    w = rng.standard_normal(N)
    X = rng.standard_normal((P, N))
    return X, np.sign(X @ w), w


def _gd_data():
    """A synthetic negative-margin data set (the format of negative_margin_data): two sizes at one
    kappa, success counts falling through 1/2."""
    cells = []
    for N, ks in ((40, (6, 5, 2, 0)), (80, (6, 4, 1, 0))):
        for a, k in zip((3.6, 4.1, 4.6, 5.1), ks):
            cells.append({"kappa": -0.5, "N": N, "alpha": a, "P": int(round(a * N)), "n": 6, "n_sat": k,
                          "instances": [{"seconds": 0.01}] * 6})
    return {"cells": cells}


def _tcm_two_solutions(m):
    d = m.tcm_instance(15, 3, 0.4, seed=3, teacher=True)
    a = m.tcm_train(d["patterns"], d["labels"], 3, seed=1, epochs=200)
    b = m.tcm_train(d["patterns"], d["labels"], 3, seed=2, epochs=200)
    return m.tcm_path(a.weights, b.weights, d["patterns"], d["labels"], 3, coupling=0.05, max_steps=400, n_line=5,
                     n_hessian=2)


def _storage_samples(m):
    rng = np.random.default_rng(0)
    return [m.SphericalStorageSample(N=N, kappa=0.0, dist="gaussian", seed=0, P_max=3 * N + 20,
                                     capacity=np.round(2 * N + rng.standard_normal(20) * N ** 0.5).astype(np.int64))
            for N in (10, 20, 40)]


SAMPLES.update({
    S + "stochastic_perceptron": lambda m: m.stochastic_perceptron(*_teacher_instance(m), seed=0, max_epochs=200),
    S + "perceptron_rule": lambda m: m.perceptron_rule(*_teacher_instance(m), seed=0),
    S + "delta_rule": lambda m: m.delta_rule(*_teacher_instance(m), seed=0, max_epochs=200),
    S + "clipped_hebb": lambda m: m.clipped_hebb(*_teacher_instance(m), seed=0),
    S + "metropolis_annealing": lambda m: m.metropolis_annealing(*_teacher_instance(m), seed=0, sweeps=300),
    S + "success_rate": lambda m: m.success_rate([0.2, 0.4], 11, 2, seed=0, max_epochs=100),
    S + "algorithmic_capacity": lambda m: m.algorithmic_capacity([0.5, 0.6, 0.7, 0.8], [10, 7, 3, 0], [10] * 4),
    S + "prefix_counts": lambda m: m.prefix_counts(*_teacher_instance(m, 9, 1.0)),
    S + "binary_storage_enumeration": lambda m: m.binary_storage_enumeration(9, 4, 1.5, progress=False),
    S + "binary_teacher_student_enumeration": lambda m: m.binary_teacher_student_enumeration(9, 4, 1.0,
                                                                                             progress=False),
    S + "fp_enumeration": lambda m: m.fp_enumeration(9, 0.3, 4, 3, dist="binary"),
    S + "max_stability": lambda m: m.max_stability(*_gaussian_instance(8, 10)[:2]),
    S + "spherical_storage_lp": lambda m: m.spherical_storage_lp(6, 3, progress=False),
    S + "capacity_extrapolation": lambda m: m.capacity_extrapolation(_storage_samples(m), estimator="mean"),
    S + "transition_point": lambda m: m.transition_point(np.array([1.0, 1.5, 2.0, 2.5]), np.array([19, 14, 5, 1]),
                                                         np.array([20] * 4)),
    S + "extrapolate": lambda m: m.extrapolate([10, 20, 40, 80], [2.1, 2.05, 2.02, 2.012], [0.01] * 4),
    S + "gibbs_scm": lambda m: m.gibbs_scm(1.0, 2, N=10, n_chains=2, n_sweeps=4, n_burn=2, n_inner=3),
    S + "sample_version_space": lambda m: m.sample_version_space(*_gaussian_instance(3, 6, 2), n_sweeps=80),
    S + "spherical_teacher_student_sampling": lambda m: m.spherical_teacher_student_sampling(
        6, [0.5], 2, n_sweeps=80, progress=False),
    S + "gd_minimize": lambda m: m.gd_minimize(_gaussian_instance(20, 40)[0], 0.0, seed=0),
    S + "gd_thresholds": lambda m: m.gd_thresholds(_gd_data())[0],
    S + "gd_extrapolation": lambda m: m.gd_extrapolation(_gd_data())[-0.5],
    S + "online_sgd": lambda m: m.online_sgd(1, 1, "erf", 0.5, [0.0, 1.0], N=20, n_seeds=2, n_record=10,
                                             executor="serial", progress=False),
    S + "train_network": lambda m: m.train_network(m.linear_task(12), (3,), "esp", epochs=5, n_checkpoints=2),
    S + "storable_exact": lambda m: m.storable_exact(*_gaussian_instance(4, 6, 3)[:2], 3),
    S + "storage_fraction_exact": lambda m: m.storage_fraction_exact([0.5, 1.0], 3, 6, 2, progress=False),
    S + "storage_fraction": lambda m: m.storage_fraction([0.5, 1.0], 3, 9, 3, max_sweeps=100),
    S + "fifty_percent_point": lambda m: m.fifty_percent_point([4, 6, 8, 10], np.array(
        [[1, 1, 0, 0], [1, 1, 1, 0], [1, 0, 0, 0], [1, 1, 1, 0]]), 5, n_boot=100),
    S + "extrapolate_inverse_N": lambda m: m.extrapolate_inverse_N([6, 9, 12, 15], [2.0, 2.33, 2.5, 2.6], [0.1] * 4),
    S + "tcm_train": lambda m: m.tcm_train(*_tcm_xy(m), 3, seed=0, epochs=100),
    S + "tcm_path": _tcm_two_solutions,
})

# ---- statmech.glm: one cheap point each (kernels cached on disk)
G = "statmech.glm."


def _glm_logistic(m):
    import statmech.glm as g
    return g.Model(loss="logistic", penalty=g.ridge(0.1), noise=0.1)


SAMPLES.update({
    G + "erm": lambda m: m.erm(_glm_logistic(m), 2.0),
    G + "gibbs": lambda m: m.gibbs(m.Model(channel="random", loss=m.margin_counting(0.0), penalty="spherical"), 1.0),
    G + "bayes_optimal": lambda m: m.bayes_optimal("ising", m.sign(0.1), 1.0),
    G + "bayes_transition": lambda m: m.bayes_transition("ising", m.sign(0.0)),
    G + "thresholds": lambda m: m.thresholds(prior="ising", channel="sign"),
    G + "sat_unsat_rsb": lambda m: m.sat_unsat_rsb(m.Model(channel="random", loss=m.margin_counting(-0.5),
                                                           penalty="spherical"), "1rsb"),
    G + "storage_rsb": lambda m: m.storage_rsb(m.Model(channel="random", loss=m.margin_counting(-0.5),
                                                       penalty="spherical"), 2.0, "rs"),
    G + "learning_curve": lambda m: m.learning_curve(_glm_logistic(m), [0.5, 1.0, 2.0]),
    G + "regularisation_path": lambda m: m.regularisation_path(_glm_logistic(m), 2.0, [1.0, 0.3, 0.1]),
    G + "optimal_lam": lambda m: m.optimal_lam(_glm_logistic(m), 2.0, xatol=1e-3),
    G + "advanced.parameter_path": lambda m: m.parameter_path(_glm_logistic(m), 2.0, "noise", [0.1, 0.2]),
    S + "glm_simulation": lambda m: m.glm_simulation(_glm_logistic(m), 2.0, Ns=(20, 40), instances=3, progress=False),
    S + "glm_simulation_point": lambda m: m.glm_simulation_point("square", 0.1, 0.1, 2.0, Ns=(20, 40), instances=3),
})

FP = "statmech.franz_parisi."
SAMPLES.update({
    FP + "binary_perceptron": lambda m: m.binary_perceptron(0.5, 0.1),
    FP + "spherical_perceptron": lambda m: m.spherical_perceptron(0.5, 0.1),
    FP + "binary_zero_crossing": lambda m: m.binary_zero_crossing(0.5),
    FP + "equilibrium_binary": lambda m: m.equilibrium_binary(0.5),
    FP + "equilibrium_spherical": lambda m: m.equilibrium_spherical(0.5),
    FP + "stochastic_reference": lambda m: m.stochastic_reference(0.55, 0.3),
    FP + "stochastic_energy": lambda m: m.stochastic_energy(0.55, 0.3),
    FP + "stochastic_perceptron": lambda m: m.stochastic_perceptron(0.55, 0.2, 0.3),
})


def _tcm_xy(m):
    d = m.tcm_instance(15, 3, 0.4, seed=3, teacher=True)
    return d["patterns"], d["labels"]


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
NOT_SOLVERS.update({M_ + n: "a result class (sampled through the function that returns it)" for n in (
    "FreeEnergy", "Branch", "LearningCurve", "Transitions", "LargeAlpha", "OnlineTrajectory", "OnlinePlateau",
    "OnlineAsymptotics")})
NOT_SOLVERS.update({
    M_ + "PlateauPassage": "the plateau passage held by OnlineTrajectory.plateau",
    M_ + "ACTIVATIONS": "a constant (the names of the closed-form activations)",
    M_ + "Activation": "a resolved activation (pair moment m(rho) and its constants)",
    M_ + "activation_info": "resolves an activation (an Activation)",
    M_ + "pair_moment": "a closed form or quadrature of m(rho) (numbers)",
    M_ + "generalization_error": _FUNCTIONAL, M_ + "entropy": _FUNCTIONAL,
    M_ + "scm_lines": "the continuation engine's lines in the (K, alpha) plane (a dict of curves)",
    M_ + "advanced.full_hessian": _FUNCTIONAL,
    M_ + "advanced.infinite_K_branch": "a closed form alpha(R) at K = inf (a dict of arrays)",
    M_ + "advanced.alpha_of_R_single_unit": "a closed form alpha(R) at K = 1 (numbers)",
    M_ + "advanced.continuation_problem": "a continuation problem (input of statmech.continuation)",
    M_ + "advanced.scm_problem": "a continuation problem (input of statmech.continuation)",
    M_ + "advanced.scm_transitions": "the engine's full analysis (a dict); scm.transitions returns the result",
    M_ + "advanced.scm_point": "one point of the sweep scm_grid (a JSON-ready dict)",
    M_ + "advanced.scm_grid": "a checkpointed sweep over K (a list of JSON-ready dicts)",
})
_RSB_BUILDING_BLOCKS = ("Channel", "HingeFrozen", "AbsFrozen", "LogHTerminal", "Lattice", "KStepAverage",
                        "MinimizeInfo", "kstep_average", "make_lattice", "spherical_entropic", "ising_entropic_t0",
                        "fd_hessian", "Problem", "KStepSolution", "ParisiSolution", "graded_grid", "richardson",
                        "SKGroundState", "PowerHingeFrozen", "kernel_kstep_average", "KernelJammingProblem",
                        "identity_kernel", "IsingTerminal", "IsingFrozen", "HardFrozen", "IsingEntropic",
                        "ising_entropic", "ising_lattice", "Stationary", "solve_stationary",
                        "frozen_cubic_moment", "frozen_soft_hinge", "jammed_spherical_entropic",
                        "jamming_ratio_quadrature", "nested_jamming_average",
                        "BoxTerminal", "BoxEntropic", "box_entropic", "box_site")
NOT_SOLVERS.update({f"statmech.rsb.{n}": "a building block of the RSB core (channels, lattices, averages, "
                                          "problem and result classes)" for n in _RSB_BUILDING_BLOCKS})
_ACT = "a function of the channel model evaluated element-wise (numbers), or its class/constant"
NOT_SOLVERS.update({f"statmech.activations.{n}": _ACT for n in (
    "Sigmoid", "Softplus", "partition_function", "gate_expectation", "esp", "esp_derivative", "log_partition",
    "esp_variance", "gate_variance", "esp_parameter_derivatives", "gate_derivatives", "relu_pair_moment", "ESP",
    "ESPTransitions", "SWISH_MIN_X", "SWISH_MIN_VALUE", "ChannelValues", "PairMoment")})
NOT_SOLVERS.update({f"statmech.continuation.{n}": "a class, constant or plotting function of the engine" for n in (
    "KINDS", "Problem", "Branch", "SpecialPoint", "CoexistencePoint", "Analysis", "Curve", "plot_branches",
    "plot_phase_diagram", "curve_intersections")})
_SIM_CLASSES = ("AlgorithmResult", "CapacityEstimate", "SuccessRate", "BinaryStorageSample",
                "BinaryTeacherStudentSample", "PrefixCounts", "Extrapolation", "TransitionFit", "FPEnumeration",
                "SphericalStorageSample", "StabilityResult", "GDResult", "GDThreshold", "OnlineSimulation",
                "SCMSample", "TrainingRun", "ExactStorage", "ExactStorageFraction", "FiftyPercentPoint",
                "InverseNFit", "StorageFraction", "TCMPath", "TCMResult", "TeacherStudentSample",
                "VersionSpaceInstance")
NOT_SOLVERS[FP + "binary_entropy_free"] = "a closed form (the alpha = 0 curve, numbers)"
NOT_SOLVERS.update({S + n: "a result class (sampled through the function that returns it)" for n in _SIM_CLASSES})
NOT_SOLVERS.update({
    CM + "tcm_capacity": _FLOAT, CM + "tcm_at_line": _FLOAT, CM + "sign_capacity_large_K": _FLOAT,
    **{CA + n: "a result class (sampled through the function that returns it)"
       for n in ("TCMRSBPoint", "TCM1RSBBranch", "TCM2RSBResult")},
    CA + "Rule": "a quadrature rule (an input of tcm_1rsb_point)",
    CA + "tcm_2rsb_alpha": _FUNCTIONAL, CA + "relu_1rsb_alpha_rqmc": _FUNCTIONAL + " with its RQMC error",
    CA + "tcm_output_kernel": _FUNCTIONAL, CA + "relu_kernel_Q": _FUNCTIONAL,
    CA + "sign_flip_cost": _FUNCTIONAL, CA + "relu_flip_cost": _FUNCTIONAL,
    CA + "relu_at_line": "a closed form (a number: 4/3)", CA + "relu_rs_capacity_error": "an error estimate (a number)",
    CA + "rs_large_K_coefficient": "a closed form (a number)", CA + "one_rsb_large_K_coefficient": "a closed form (a number)",
    CA + "monasson_zecchina": "a closed form (numbers)",
})
NOT_SOLVERS.update({S + n: why for n, why in {
    "ChainDiagnostics": "the mixing report held by VersionSpaceInstance.diagnostics",
    "Network": "a network model (parameters, loss, gradient, Hessian)",
    "Task": "a data set (inputs and targets)",
    "MAX_N": "a constant", "ACTIVATIONS": "a constant", "DATA_FILE": "a constant (the stored data file)",
    "GD_SETTINGS": "a constant", "PLAN": "a constant", "SMALL_PLAN": "a constant",
    "random_binary_instance": "a random instance (arrays)", "random_patterns": "random patterns (an array)",
    "tcm_instance": "a random instance (a dict of arrays)", "instance_rng": "a random generator",
    "linear_task": "a data set (Task)", "nonlinear_task": "a data set (Task)", "digits_task": "a data set (Task)",
    "training_errors": "a count (an int)", "tcm_errors": "a count (an int)", "count_solutions": "a count (an int)",
    "instance_capacity": "a count (an int); spherical_storage_lp returns the result over instances",
    "is_storable": "a decision (a bool); max_stability returns the result",
    "lp_separable": "a decision and its certificate (bool, w); max_stability returns the result",
    "solutions_bitmask": "the solutions (an array of codes); prefix_counts returns the result",
    "codes_to_weights": "a conversion (an array)", "weights_to_codes": "a conversion (an array)",
    "hamming_distances": "distances (an array)", "pair_distance_histogram": "a histogram (an array)",
    "fp_counts": "counts (an array)", "binomial_interval": "an interval (arrays)",
    "cover_probability": "a closed form (numbers)",
    "binary_teacher_student_annealed": "a closed form (numbers)",
    "censored_normal_fit": "a fit as numbers (mu, mu_err, sigma, sigma_err), used by the samples' alpha_50()",
    "map_tasks": "a map over an executor (a list)",
    "stochastic_perceptron_loss": _FUNCTIONAL, "hinge_cost": _FUNCTIONAL, "tcm_loss": _FUNCTIONAL,
    "tcm_hessian": "a Hessian matrix (an array)", "tcm_output": "network outputs (an array)",
    "energy": "an energy (a number)", "site_symmetric_overlaps": "overlaps (numbers)",
    "hessian_indices": "fractions of eigenvalues (numbers)", "initial_overlaps": "random overlaps (arrays)",
    "autocorr_time": "a diagnostic (a number)", "gelman_rubin": "a diagnostic (a number)",
    "hit_and_run": "a chain (trace, final point); sample_version_space returns the result",
    "verify_solution": "a check (ok, certified margin)",
    "train_least_action": "a learner returning (W, stored, sweeps); storage_fraction returns the result",
    "gd_instance": "a sweep task (a JSON-ready dict)",
    "negative_margin_data": "writes the data file (returns its dict)",
    "load_negative_margin_data": "reads the data file (a dict)",
    "lp_agreement": "a comparison table (a list of tuples)",
    "hessian_study": "train_network over a grid (a dict of TrainingRun results)",
}.items()})

_SPEC = "a component of a specification (sympy-backed loss, penalty, prior, channel or symbol)"
NOT_SOLVERS.update({G + n: _SPEC for n in (
    "Model", "Loss", "Penalty", "Prior", "Channel", "square", "logistic", "hinge", "squared_hinge", "exponential",
    "margin_counting", "margin_loss", "ridge", "l1", "elastic_net", "spherical", "ising", "gaussian",
    "gauss_bernoulli", "random_labels", "sign", "probit", "linear", "y", "h", "z", "w", "u")})
NOT_SOLVERS.update({G + n: "a result class (sampled through the function that returns it)" for n in (
    "ERMResult", "GibbsResult", "BayesResult", "BayesTransition", "Thresholds")})
NOT_SOLVERS.update({G + n: why for n, why in {
    "LOSSES": "a constant (the names of the built-in losses)",
    "advanced.as_loss": _SPEC, "advanced.as_penalty": _SPEC, "advanced.as_prior": _SPEC, "advanced.as_channel": _SPEC,
    "advanced.ridge_closed_form": "a closed form (a dict of numbers)",
    "advanced.bayes_branches": "a table of all fixed points (a dict of arrays); bayes_optimal returns the result",
    "advanced.zero_set": "a description of the loss's zero set (a tuple)",
    "advanced.sat_unsat": "numbers (alpha_c, R); thresholds returns the result",
    "advanced.jamming_ratio": _FUNCTIONAL,
    "advanced.separability": "numbers (alpha_sep, R); thresholds returns the result",
    "advanced.max_margin": "numbers (kappa_max, R, eps_g)",
    "advanced.ridge_peak": "numbers (alpha_peak, eps_g)",
    "advanced.separability_line": "the continuation engine's line alpha_sep(p) (a dict of arrays)",
    "advanced.ridge_peak_line": "the continuation engine's line of the double-descent peak (a dict of arrays)",
    "advanced.optimal_lam_curve": "optimal_lam along alpha (a dict of arrays)",
    "advanced.erm_problem": "a continuation problem (input of statmech.continuation)",
    "advanced.Denoisers": "compiled denoisers for finite-N algorithms (a class)",
}.items()})
NOT_SOLVERS.update({S + n: why for n, why in {
    "GLMSimulation": "a result class (sampled through the function that returns it)",
    "glm_instance": "a random instance (arrays)",
    "erm_fit": "a minimiser (an array); glm_simulation returns the result",
    "gamp": "an estimate (w, iterations, converged); glm_simulation(route='gamp') returns the result",
    "observables": "overlaps of one estimate (a dict of numbers)",
}.items()})


def _public(modname):
    mod = importlib.import_module(modname)
    # a callable module (statmech.simulate.fp_enumeration, a module callable as its function) is public
    return {f"{modname}.{n}": getattr(mod, n) for n in mod.__all__
            if not inspect.ismodule(getattr(mod, n)) or callable(getattr(mod, n))}


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
        assert "statmech.scm.advanced" in conf.api_modules()


# --------------------------------------------------------------------------- the protocol
@pytest.fixture(scope="module")
def results():
    return {}


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in SLOW_SAMPLES else n
                                  for n in sorted(SAMPLES)])
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


def test_scm_moved_names_warn_and_work():
    import statmech.scm as S_
    for name in S_.advanced.__all__:
        with pytest.warns(DeprecationWarning, match=f"statmech.scm.advanced.{name}"):
            f = getattr(S_, name)
        assert f is getattr(S_.advanced, name)


def test_scm_learning_curve_repr_is_bounded():
    import statmech.scm as S_
    lc = S_.learning_curve(5, "erf", np.linspace(0.0, 1e4, 101))
    assert len(repr(lc)) < REPR_LIMIT
    d = lc.to_dict()
    assert json.loads(json.dumps(d, allow_nan=False)) == d


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
