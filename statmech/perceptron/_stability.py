"""Stability eigenvalues of the perceptron results, one convention: positive = stable.

* Spherical storage, RS: ``d^2 phi/dq^2`` -- the replica limit minimizes the free entropy over the
  inter-replica overlap q (the rule under which RSB lowers phi, docs/rsb.md), so a stable RS point
  has a positive second derivative.  The k-step and full-RSB results are minima of their
  functionals too (``hessian_eigenvalues`` of the minimizer, all positive at a minimum).
* Ising storage, RS: ``phi(q, q_hat)`` is a saddle in (q, conjugate); eliminating ``q_hat`` by its
  own equation leaves ``psi(q)``, minimized: the stability is the Schur complement
  ``H_qq - H_{q qh}^2 / H_{qh qh}`` (checked against a finite difference of psi in
  tests/test_result_protocol.py).
* Teacher--student (Gibbs learning on the Nishimori line q = R): the free entropy is maximized over
  the teacher overlap R (the equilibrium branch of Gyorgyi's transition is the larger one), so the
  stability is minus the second derivative: ``-phi''(R)`` (spherical), minus the Schur complement in
  ``(R, R_hat)`` (Ising).  The 'unstable' branch of the Ising transition is negative, as it must be.
* The Ising 1RSB results and the Gardner--Derrida point (q -> 1, no finite Hessian): None.
"""
from __future__ import annotations

import numpy as np

from ..saddle import register_stability, signed_eigenvalues
from .binary_storage_rs import binary_storage_hessian
from .binary_teacher_student_rs import binary_teacher_student_hessian


def _pointwise(r, fn):
    """``fn(point index) -> float`` over the (possibly vectorized) result, as an array (..., 1)."""
    shape = np.shape(r.converged)
    if shape == ():
        return np.array([fn(())])
    out = np.empty(shape + (1,))
    for idx in np.ndindex(shape):
        out[idx + (0,)] = fn(idx)
    return out


def _schur(H):
    return H[0, 0] - H[0, 1] * H[1, 0] / H[1, 1]


def _binary_storage(r):
    if r.ansatz != "rs" or "q_hat" not in r.order_params or r.params.get("method") == "gardner_derrida":
        return None
    a = r.params["alpha"] if "alpha" in r.params else r.thermo["alpha_c"]
    k = r.params["kappa"]
    return _pointwise(r, lambda i: _schur(binary_storage_hessian(
        [np.asarray(r.q)[i], np.asarray(r.q_hat)[i]], np.asarray(a)[i], np.asarray(k)[i])))


def _binary_ts(r):
    def one(i):
        R = float(np.asarray(r.R)[i])
        if not 0.0 < R < 1.0:
            return np.nan   # the perfect state R = 1 (or R = 0 at alpha = 0): no interior Hessian
        return -_schur(binary_teacher_student_hessian([R, float(np.asarray(r.R_hat)[i])],
                                                      float(np.asarray(r.alpha)[i])))
    out = _pointwise(r, one)
    return None if np.all(np.isnan(out)) else out


register_stability("perceptron.spherical_storage", signed_eigenvalues(+1))
register_stability("perceptron.spherical_storage_reference", signed_eigenvalues(+1))
register_stability("perceptron.spherical_jamming", signed_eigenvalues(+1))
register_stability("perceptron.spherical_teacher_student", signed_eigenvalues(-1))
register_stability("perceptron.binary_storage", _binary_storage)
register_stability("perceptron.binary_capacity", _binary_storage)
register_stability("perceptron.binary_teacher_student", _binary_ts)
