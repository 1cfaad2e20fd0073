r"""Franz--Parisi entropy of the spherical perceptron around a typical solution, RS.

Stationary point in ``(q1, t)`` of (``docs/franz_parisi.md``)

``S_FP = log(1 - q1)/2 + (q1 - C)/(2(1 - q1)) + alpha G_E(q0, t, p, q1)``,
``C = (p^2 - t^2)/(1 - q0) - q0 (p - t)^2/(1 - q0)^2``

(the Schur complement of the replica overlap matrix) with the reference of
:func:`.reference.equilibrium_spherical`; the energetic term ``G_E`` and the continuation in
``d`` are shared with the Ising weights (:mod:`._common`).
"""
from __future__ import annotations

import numpy as np

from ..errors import check_range
from ..result import check_real
from ._common import _Q, _fp_energetic, _Problem, _q1t_domain, _q1t_from_y, _q1t_margins, _q1t_to_y, _solve_family
from ._equations import _FP
from .reference import check_spherical_alpha

_D_MIN = 1e-4  # smallest distance of the documented domain (see spherical_perceptron)


def _spherical_eval(x, p, ref, alpha, kappa, quad=_Q):
    """Gradient F, Hessian J of the spherical FP functional at x = (q1, t), plus the
    entropic (closed form) and energetic terms."""
    q1, t = x
    s = _FP.sph_fp_S(ref.q0, t, p, q1)
    E = _fp_energetic(ref.q0, t, p, q1, kappa, level=quad.level, n_outer=quad.n_E)
    F = np.array([s[1] + alpha * E[1], s[2] + alpha * E[2]])
    J = np.array([[s[3] + alpha * E[3], s[4] + alpha * E[4]],
                  [s[4] + alpha * E[4], s[5] + alpha * E[5]]])
    return F, J, np.array(s), E


class _SphericalProblem(_Problem):
    kind = "franz_parisi.spherical_perceptron"
    names = ("q1", "t")
    ref_kind = "spherical"
    evaluate = staticmethod(_spherical_eval)

    def in_domain(self, x, p):
        return _q1t_domain(x[0], x[1], p, self.ref.q0)

    def margins(self, x, p):
        return _q1t_margins(x[0], x[1], p, self.ref.q0)

    def typical(self):
        return np.array([self.ref.q0, self.ref.q0])

    def to_y(self, x, p):
        return np.array(_q1t_to_y(x[0], x[1], p, self.ref.q0))

    def from_y(self, y, p):
        return np.array(_q1t_from_y(y[0], y[1], p, self.ref.q0))

    def first_guess(self, dp):
        return np.array([self.ref.q0 + abs(dp), self.ref.q0])

    def ref_params(self):
        return {"q0": self.ref.q0}

    def dF_dp(self, x, p):
        _, _, s, E = self.eval(x, p)
        return np.array([s[7] + self.alpha * E[9], s[8] + self.alpha * E[10]])

    def thermo(self, x, p):
        F, J, s, E = self.eval(x, p)
        ent = s[0] + self.alpha * E[0]
        dS_dp = s[6] + self.alpha * E[6]
        rep = 1.0 - self.alpha * E[7]
        return ent, dS_dp, rep, J, {"norm_E": E[8]}


def spherical_perceptron(alpha, d, kappa=0.0):
    r"""RS Franz--Parisi entropy of the spherical perceptron around a typical solution.

    Same construction as :func:`~statmech.franz_parisi.binary_perceptron` (thesis Eqs.
    2.41--2.42 with the Euclidean distance) for weights on the sphere ``|W|^2 = N``.  The
    distance is defined from the overlap ``p = W.W~/N`` as ``d = (1 - p)/2 = |W - W~|^2/(4N)``
    (the same map as the Hamming distance of Ising weights).  The entropy is the log of the
    *fraction of the sphere* (per weight):
    ``S_FP = log(1 - q1)/2 + (q1 - C)/(2(1 - q1)) + alpha E_z E_e[H(a)/H(a0) log H(b)]``
    with ``C = (p^2 - t^2)/(1 - q0) - q0 (p - t)^2/(1 - q0)^2`` (Schur complement of the
    replica overlap matrix, derived in docs/franz_parisi.md), stationary in ``(q1, t)``.
    At ``alpha -> 0`` it is ``log(1 - p^2)/2 = log(4 d (1 - d))/2``.

    Parameters: ``alpha`` in (0, alpha_c(kappa)) (Gardner's RS capacity, 2 at kappa = 0; ValueError
    above), ``d`` in [1e-4, 0.5] (the continuation towards d -> 0, where ``q1 -> 1``, loses the
    resolution of its inner quadrature below ~3e-5), ``kappa`` in [-3, 3].
    Returns a SaddlePoint as :func:`~statmech.franz_parisi.binary_perceptron` (order
    parameters ``q1, t, q0``); the reference is Gardner's RS solution
    (:func:`equilibrium_spherical`), unstable above the AT line for ``kappa < 0``
    (:func:`statmech.perceptron.spherical_storage_at_line`), where ``rs_stable`` is False.
    """
    for name, v in (("alpha", alpha), ("d", d), ("kappa", kappa)):
        check_real(name, v, function="spherical_perceptron")
    alpha = float(check_range("alpha", alpha, 0.0, lo_open=True))
    kappa = float(check_range("kappa", kappa, -3.0, 3.0))
    check_range("d", d, _D_MIN, 0.5)
    check_spherical_alpha(alpha, kappa, "spherical_perceptron")
    return _solve_family(_SphericalProblem(alpha, kappa), d)
