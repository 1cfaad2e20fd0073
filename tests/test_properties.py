"""Property tests over the public solvers of every model.

For random valid inputs a solver either converges (``converged`` True, no NaN anywhere
in the result) or raises ConvergenceError; for invalid inputs it raises a ValueError
whose message names the offending argument.
"""
import math
from dataclasses import fields, is_dataclass

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st

from statmech import ConvergenceError, SaddlePoint
from statmech import perceptron, scm, committee, franz_parisi, activations

SETTINGS = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# solvers that take seconds per point: a few examples by default, more under -m slow
FEW = settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.too_slow])
MANY = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _numbers(obj):
    """Yield every float found in a (nested) result object."""
    if obj is None or isinstance(obj, (str, bool, np.bool_)):
        return
    if isinstance(obj, (int, float, np.integer, np.floating)):
        yield float(obj)
    elif isinstance(obj, np.ndarray):
        if obj.dtype.kind in "fiu":
            yield from obj.astype(float).ravel().tolist()
        elif obj.dtype == object:
            for v in obj.ravel():
                yield from _numbers(v)
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from _numbers(v)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            yield from _numbers(v)
    elif is_dataclass(obj):
        for f in fields(obj):
            yield from _numbers(getattr(obj, f.name))


def assert_clean(result):
    """Converged and NaN-free (infinities are allowed only where they are physical, e.g. q_hat at R = 1)."""
    results = result if isinstance(result, (list, tuple)) else [result]
    for r in results:
        if isinstance(r, SaddlePoint):
            assert np.all(r.converged), r
        vals = list(_numbers(r))
        assert not any(math.isnan(v) for v in vals), r


def converges_or_raises(fn, *args, **kw):
    try:
        res = fn(*args, **kw)
    except ConvergenceError:
        return None
    assert_clean(res)
    return res


# ----------------------------------------------------------------- perceptron
@SETTINGS
@given(kappa=st.floats(-1.0, 2.0), frac=st.floats(0.0, 0.97))
def test_spherical_storage_property(kappa, frac):
    alpha = frac * float(perceptron.gardner_capacity(kappa))
    r = converges_or_raises(perceptron.spherical_storage, alpha, kappa)
    if r is not None:
        assert 0.0 <= r.q < 1.0


@SETTINGS
@given(alpha=st.floats(0.0, 30.0))
def test_spherical_teacher_student_property(alpha):
    r = converges_or_raises(perceptron.spherical_teacher_student, alpha)
    if r is not None:
        assert 0.0 <= r.R < 1.0 and 0.0 < r.generalization_error <= 0.5


@SETTINGS
@given(kappa=st.floats(0.0, 1.5), frac=st.floats(0.0, 0.95))
def test_binary_storage_property(kappa, frac):
    alpha = frac * float(perceptron.binary_capacity(kappa, method="gardner_derrida"))
    converges_or_raises(perceptron.binary_storage, alpha, kappa)


@SETTINGS
@given(alpha=st.floats(0.0, 5.0))
def test_binary_teacher_student_property(alpha):
    r = converges_or_raises(perceptron.binary_teacher_student, alpha)
    if r is not None:
        assert 0.0 <= r.R <= 1.0


@pytest.mark.parametrize("fn,args,name", [
    (perceptron.spherical_storage, (-0.5,), "alpha"),
    (perceptron.spherical_storage, (float("nan"),), "alpha"),
    (perceptron.spherical_storage, (0.5, float("nan")), "kappa"),
    (perceptron.gardner_capacity, (float("inf"),), "kappa"),
    (perceptron.binary_storage, (-1.0,), "alpha"),
    (perceptron.binary_capacity, (0.0, "nonsense"), "method"),
    (perceptron.spherical_teacher_student, (float("nan"),), "alpha"),
    (perceptron.binary_teacher_student, (-2.0,), "alpha"),
])
def test_perceptron_invalid_inputs(fn, args, name):
    with pytest.raises(ValueError, match=name):
        fn(*args)


# ----------------------------------------------------------------- soft committee machine
@SETTINGS
@given(alpha=st.floats(0.0, 80.0), K=st.sampled_from([2, 3, 5]), act=st.sampled_from(["erf", "relu"]))
def test_scm_equilibria_property(alpha, K, act):
    res = converges_or_raises(scm.equilibria, alpha, K, act)
    if res is not None:
        assert len(res) >= 1
        for r in res:
            assert 0.0 <= r.generalization_error <= 1.0


@SETTINGS
@given(R=st.floats(-0.5, 0.9), S=st.floats(-0.3, 0.3), C=st.floats(-0.3, 0.5), act=st.sampled_from(["erf", "relu", "linear"]))
def test_scm_free_energy_domain(R, S, C, act):
    """Inside the domain of the entropy the free energy is finite; outside, ValueError."""
    K = 3
    a = 1 + (K - 1) * C - (R + (K - 1) * S) ** 2
    b = 1 - C - (R - S) ** 2
    if a > 1e-9 and b > 1e-9:
        f = scm.free_energy(1.0, K, R, S, C, act)
        assert np.all(np.isfinite(f))
    elif a < -1e-9 or b < -1e-9:
        with pytest.raises(ValueError):
            scm.free_energy(1.0, K, R, S, C, act)


@pytest.mark.parametrize("fn,args,name", [
    (scm.equilibria, (-1.0, 2), "alpha"),
    (scm.equilibria, (1.0, 0.5), "K"),
    (scm.equilibria, (1.0, 2, "nonsense"), "activation"),
    (scm.free_energy, (1.0, 2, 0.5, 0.1, 1.5), "C"),
    (scm.free_energy, (1.0, 2, float("nan"), 0.1, 0.1), "R"),
    (scm.transitions, (float("nan"),), "K"),
])
def test_scm_invalid_inputs(fn, args, name):
    with pytest.raises(ValueError, match=name):
        fn(*args)


# ----------------------------------------------------------------- tree committee machine
def _tcm_storage_property(K, frac):
    alpha = frac * committee.tcm_capacity(K)
    r = converges_or_raises(committee.tcm_storage, alpha, K)
    if r is not None:
        assert 0.0 <= r.q < 1.0


TCM_ARGS = dict(K=st.sampled_from([1, 3, 5]), frac=st.floats(0.0, 0.9))
test_tcm_storage_property = FEW(given(**TCM_ARGS)(_tcm_storage_property))
test_tcm_storage_property_many = pytest.mark.slow(MANY(given(**TCM_ARGS)(_tcm_storage_property)))


@pytest.mark.parametrize("fn,args,name", [
    (committee.tcm_capacity, (4,), "K"),
    (committee.tcm_capacity, (0,), "K"),
    (committee.tcm_capacity, (3, "tanh"), "activation"),
    (committee.tcm_storage, (-1.0, 3), "alpha"),
    (committee.tcm_storage, (float("nan"), 3), "alpha"),
])
def test_tcm_invalid_inputs(fn, args, name):
    with pytest.raises(ValueError, match=name):
        fn(*args)


# ----------------------------------------------------------------- Franz-Parisi
def _franz_parisi_binary_property(alpha, d):
    r = converges_or_raises(franz_parisi.binary_perceptron, alpha, d)
    if r is not None:
        # the Franz-Parisi entropy never exceeds the equilibrium entropy of the solution space
        assert r.entropy <= r.entropy_equilibrium + 1e-9


FP_ARGS = dict(alpha=st.floats(0.05, 0.8), d=st.floats(0.005, 0.45))
test_franz_parisi_binary_property = FEW(given(**FP_ARGS)(_franz_parisi_binary_property))
test_franz_parisi_binary_property_many = pytest.mark.slow(MANY(given(**FP_ARGS)(_franz_parisi_binary_property)))


@pytest.mark.parametrize("fn,args,name", [
    (franz_parisi.binary_perceptron, (0.5, -0.1), "d"),
    (franz_parisi.binary_perceptron, (float("nan"), 0.1), "alpha"),
    (franz_parisi.spherical_perceptron, (-0.5, 0.1), "alpha"),
])
def test_franz_parisi_invalid_inputs(fn, args, name):
    with pytest.raises(ValueError, match=name):
        fn(*args)


# ----------------------------------------------------------------- activations
@SETTINGS
@given(h=st.floats(-1e6, 1e6), beta=st.floats(0.0, 1e4))
def test_activations_never_nan(h, beta):
    for f in (activations.gate_expectation, activations.esp, activations.esp_derivative):
        v = f(h, beta)
        assert np.all(np.isfinite(v))


@pytest.mark.parametrize("args,name", [((float("nan"), 1.0), "h"), ((1.0, -1.0), "beta")])
def test_activations_invalid_inputs(args, name):
    with pytest.raises(ValueError, match=name):
        activations.esp(*args)
