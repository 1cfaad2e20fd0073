"""Simulation backends that check the theory independently.

One submodule per backend (linear programming, exhaustive enumeration, Monte Carlo,
version-space sampling, learning algorithms, online SGD ...).  Every public name of a submodule
is re-exported here and imported on first use, so ``statmech.simulate.X`` works without importing
every backend (and compiling its numba kernels) up front.  ``_PUBLIC`` lists them by submodule
(``tests/test_api.py`` checks it against the submodules' ``__all__``).

Every result a backend returns follows the result protocol of :class:`statmech.result.Result`
(``converged``, ``residual``, ``iterations``, ``ansatz``, ``rs_stable``, ``error``, ``stability``,
``to_dict()``, a bounded ``repr``): ``ansatz`` is ``"-"`` and ``rs_stable`` None (a simulation is
not a replica computation); ``error`` is the standard error (or confidence half-width) of the
headline value, 0.0 where it is exact (an enumeration count); ``stability`` holds Hessian
eigenvalues (positive = stable) where the result has them.  Where ``converged`` reports a per-run
outcome (a learning algorithm that stopped on its criterion, chains that mixed, an instance that
was decided) rather than True, the result class says so.  The functions that have always returned
a plain ``dict`` (:func:`success_rate`, :func:`fifty_percent_point`, :func:`extrapolate_inverse_N`)
return a ``dict`` subclass that also follows the protocol.
"""
import importlib as _importlib

_PUBLIC = {
    "algorithms": ('AlgorithmResult', 'CapacityEstimate', 'algorithmic_capacity', 'clipped_hebb', 'delta_rule', 'metropolis_annealing', 'perceptron_rule', 'random_binary_instance', 'stochastic_perceptron', 'stochastic_perceptron_loss', 'success_rate', 'SuccessRate', 'training_errors'),
    "enumeration": ('BinaryStorageSample', 'BinaryTeacherStudentSample', 'MAX_N', 'PrefixCounts', 'binary_storage_enumeration', 'binary_teacher_student_annealed', 'binary_teacher_student_enumeration', 'codes_to_weights', 'count_solutions', 'hamming_distances', 'pair_distance_histogram', 'prefix_counts', 'random_patterns', 'solutions_bitmask', 'weights_to_codes'),
    "finite_size": ('Extrapolation', 'TransitionFit', 'binomial_interval', 'censored_normal_fit', 'extrapolate', 'instance_rng', 'map_tasks', 'transition_point'),
    "fp_enumeration": ('FPEnumeration', 'fp_counts', 'fp_enumeration'),
    "lp": ('SphericalStorageSample', 'StabilityResult', 'capacity_extrapolation', 'cover_probability', 'instance_capacity', 'is_storable', 'lp_separable', 'max_stability', 'spherical_storage_lp'),
    "negative_margin": ('DATA_FILE', 'GDResult', 'GDThreshold', 'GD_SETTINGS', 'PLAN', 'SMALL_PLAN', 'gd_extrapolation', 'gd_instance', 'gd_minimize', 'gd_thresholds', 'hinge_cost', 'load_negative_margin_data', 'lp_agreement', 'negative_margin_data', 'verify_solution'),
    "online": ('OnlineSimulation', 'initial_overlaps', 'online_sgd'),
    "scm_mc": ('SCMSample', 'energy', 'gibbs_scm', 'site_symmetric_overlaps'),
    "small_networks": ('ACTIVATIONS', 'Network', 'Task', 'TrainingRun', 'digits_task', 'hessian_indices', 'hessian_study', 'linear_task', 'nonlinear_task', 'train_network'),
    "tcm": ('ExactStorage', 'ExactStorageFraction', 'FiftyPercentPoint', 'InverseNFit', 'StorageFraction', 'extrapolate_inverse_N', 'fifty_percent_point', 'storable_exact', 'storage_fraction', 'storage_fraction_exact', 'tcm_output', 'train_least_action'),
    "tcm_paths": ('TCMPath', 'TCMResult', 'tcm_errors', 'tcm_hessian', 'tcm_instance', 'tcm_loss', 'tcm_path', 'tcm_train'),
    "version_space": ('ChainDiagnostics', 'TeacherStudentSample', 'VersionSpaceInstance', 'autocorr_time', 'gelman_rubin', 'hit_and_run', 'sample_version_space', 'spherical_teacher_student_sampling'),
}
_WHERE = {name: sub for sub, names in _PUBLIC.items() for name in names}

__all__ = sorted(_WHERE)


def __getattr__(name):
    sub = _WHERE.get(name)
    if sub is None:
        raise AttributeError(f"module 'statmech.simulate' has no attribute {name!r}")
    mod = _importlib.import_module(f"{__name__}.{sub}")
    # a function named like its module (fp_enumeration): the module, which is callable as the
    # function -- the same object in every import order (importing a submodule binds it here)
    return mod if name == sub else getattr(mod, name)


def __dir__():
    return sorted(set(globals()) | set(_WHERE))
