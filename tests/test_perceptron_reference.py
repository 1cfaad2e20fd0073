"""The plain, cores-only template model agrees with the fast numba solver of the same equations."""
import numpy as np
import pytest

from statmech import ConvergenceError
from statmech.perceptron import gardner_capacity, spherical_storage, spherical_storage_reference


@pytest.mark.parametrize("alpha, kappa", [(0.05, 0.0), (0.5, 0.0), (1.0, 0.0), (1.9, 0.0), (0.5, 0.5),
                                          (0.3, 1.0), (3.0, -0.5), (8.0, -1.0), (1.0, -1.0)])
def test_reference_agrees_with_numba_solver(alpha, kappa):
    ref, fast = spherical_storage_reference(alpha, kappa), spherical_storage(alpha, kappa)
    assert ref.converged and ref.residual < 1e-10
    assert ref.q == pytest.approx(fast.q, abs=1e-12)
    assert ref.entropy == pytest.approx(fast.entropy, rel=1e-11, abs=1e-12)
    assert ref.replicon == pytest.approx(fast.replicon, abs=1e-10)
    assert ref.rs_stable == fast.rs_stable
    assert ref.hessian_eigenvalues[0] == pytest.approx(fast.hessian_eigenvalues[0], rel=1e-5)


def test_reference_replicon_changes_sign_at_the_at_line():
    # kappa = -1: RS is unstable at capacity (13.27), stable at small alpha
    assert spherical_storage_reference(1.0, -1.0).rs_stable
    assert not spherical_storage_reference(0.98 * gardner_capacity(-1.0), -1.0).rs_stable


def test_reference_contract():
    with pytest.raises(ConvergenceError):
        spherical_storage_reference(1.01 * gardner_capacity(0.5), 0.5)   # no RS solution above capacity
    with pytest.raises(ValueError, match="alpha"):
        spherical_storage_reference(-1.0)
    with pytest.raises(ValueError, match="kappa"):
        spherical_storage_reference(1.0, np.nan)
    assert spherical_storage_reference(0.0).q == 0.0
