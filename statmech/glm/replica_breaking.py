r"""Beyond replica symmetry: 1RSB and full RSB of a specification through :mod:`statmech.rsb`.

What is built (``docs/glm.md``, "Beyond RS"):

* **SAT/UNSAT of a margin loss, spherical student, random labels** (:func:`sat_unsat_rsb`).  The
  jamming point depends on the loss only through its zero set ``[kappa, inf)``
  (:func:`statmech.glm.zero_set`): as ``q_k -> 1`` with ``m_i = y_i (1 - q_k)`` the k-step
  functional becomes ``A/(1 - q_k)`` with ``A = S~(q, y) + alpha Phi~(q, y)``, ``S~`` the jammed
  spherical entropic term and ``Phi~`` the nested average with the frozen soft-hinge terminal
  ``-(kappa - h)_+^2/2`` (the squared distance to the zero set); ``alpha_J = min_{q, y} S~/(-Phi~)``.
  Built from the cores (``rsb.kstep.HingeFrozen``, ``rsb.kstep.spherical_entropic``,
  ``rsb.parisi.solve_kstep`` / ``solve_frsb``): the margin-counting, hinge and squared-hinge specs
  give back the negative-perceptron values of ``perceptron.gardner_capacity(kappa, ansatz)``.
* **Storage at finite alpha** (:func:`storage_rsb`): Gibbs learning at T = 0 of a spherical student
  with a step cost of zero set ``[kappa, inf)`` (the Gardner volume): terminal
  ``log H((kappa - h)/sqrt(1 - q_k))``.

Out of reach, and why:

* a **teacher** (any channel other than random labels): the RSB core's nested average
  ``E_z f(q_0, sqrt(q_0) z)`` has one field; a teacher adds a second (its field, correlated with the
  outermost level through ``m``), i.e. a weight ``Z(y, m z/sqrt(q_0), rho - m^2/q_0)`` inside the
  outermost average and one more order parameter -- a change of the core's outer level, not of a
  channel;
* **ERM at finite alpha with a smooth loss** (logistic, square...), and the Ising student under ERM:
  the zero-temperature k-step functional needs a frozen terminal for each loss, the Moreau envelope
  ``-M_V loss`` continued through the last step, of which the core has the soft hinge and ``|h|``
  only (convex losses with a ridge penalty are RS-stable anyway: their replicon is positive);
* **Ising students** beyond the frozen 1RSB of the storage problem (``perceptron.binary_rsb``):
  finite-temperature and full-RSB Ising channels are not in the core.
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import ConvergenceError, check_choice
from ..rsb import kstep, parisi
from ..saddle import SaddlePoint
from .spec import Model
from .thresholds import sat_unsat, zero_set

__all__ = ["sat_unsat_rsb", "storage_rsb", "JammingProblem", "StorageProblem", "FRSB_KS"]

FRSB_KS = (4, 8, 16)
_ANSATZ = ("rs", "1rsb", "frsb")
# the full-RSB x(q) at jamming grows like eps^(-(1 - 1/kappa_J)), kappa_J = 1.41574 (Charbonneau et al. 2014)
_X_GROWTH = 1.0 - 1.0 / 1.41574


class JammingProblem(parisi.Problem):
    """``R(q, y) = S~/(-Phi~)`` at the SAT/UNSAT point of a zero set ``[kappa, inf)``; minimized."""
    q0_fixed = None
    x_growth = _X_GROWTH

    def __init__(self, kappa):
        self.kappa = float(kappa)
        self.channel = kstep.HingeFrozen(self.kappa)
        self.name = f"glm jamming (zero set [{self.kappa:g}, inf))"

    def evaluate(self, q, y, lattice, grad=True):
        r = kstep.kstep_average(q, y, self.channel, lattice=lattice, grad=grad)
        S, gq, gy = kstep.spherical_entropic(q, y, jammed=True)
        E = r.value
        if not E < 0.0:
            raise ValueError("energetic term of the jammed functional must be negative")
        return -S / E, -(gq * E - S * r.dq) / E ** 2, -(gy * E - S * r.dm) / E ** 2


class StorageProblem(parisi.Problem):
    """Gardner volume (log of the fraction of the sphere) at finite alpha, zero set [kappa, inf)."""
    q0_fixed = None

    def __init__(self, alpha, kappa):
        self.alpha, self.kappa = float(alpha), float(kappa)
        self.channel = kstep.LogHTerminal(self.kappa)
        self.name = f"glm storage (alpha={self.alpha:g}, kappa={self.kappa:g})"

    def evaluate(self, q, m, lattice, grad=True):
        r = kstep.kstep_average(q, m, self.channel, lattice=lattice, grad=grad)
        S, gq, gm = kstep.spherical_entropic(q, m)
        return S + self.alpha * r.value, gq + self.alpha * r.dq, gm + self.alpha * r.dm


def _stable(sol):
    """``rs_stable`` of a k-step or full-RSB result: its own stationary point is a minimum of the
    functional (every Hessian eigenvalue > 0), the protocol of :mod:`statmech.result`."""
    ev = np.asarray(sol.hessian_eigenvalues, dtype=float)
    return bool(ev.size and np.all(ev > 0))


def _halfline(model, what):
    if not isinstance(model, Model):
        raise TypeError(f"{what}: model must be a glm.Model, got {type(model).__name__}")
    if model.channel.labels != "random":
        raise ValueError(f"{what}: RSB is implemented for random labels (storage) only; with a teacher the "
                         "core's outer average would need the teacher's field (docs/glm.md, 'Beyond RS')")
    if model.penalty.constraint != "spherical":
        raise ValueError(f"{what}: RSB is implemented for the spherical student only")
    kind, a, b = zero_set(model.loss)
    if kind != "interval" or math.isfinite(b) or not math.isfinite(a):
        raise ValueError(f"{what}: the zero set of the loss must be a half-line [kappa, inf), got {(kind, a, b)}")
    return a


def sat_unsat_rsb(model, ansatz="1rsb", *, Ks=FRSB_KS):
    """SAT/UNSAT point of a margin loss (spherical student, random labels) in ``ansatz``.

    Returns a :class:`statmech.SaddlePoint` (model ``glm.jamming``) with ``thermo["alpha_c"]``; 1RSB:
    ``q0``, ``y``; full RSB: the Parisi function in ``extra`` (``q``, ``y``), the ``K -> inf``
    extrapolation ``error``.  Where the RS replicon at jamming ``1 - alpha_c H(-kappa)`` is >= 0
    (``kappa >= 0``) RS is stable and the broken ansätze collapse to it.
    """
    check_choice("ansatz", ansatz, _ANSATZ)
    kappa = _halfline(model, "glm.sat_unsat_rsb")
    a_rs, _ = sat_unsat(model)
    from ..gaussian import H
    rep = 1.0 - a_rs * float(H(-kappa))
    params = {"kappa": kappa}
    if ansatz == "rs" or rep >= 0.0:
        op = {"q": 1.0} if ansatz == "rs" else {"q0": 1.0, "q1": 1.0, "y": 0.0}
        return SaddlePoint("glm.jamming", params, op, {"alpha_c": a_rs}, True, 0.0, 0, None, rep, bool(rep >= 0),
                           {"collapsed_to_rs": ansatz != "rs", "zero_set": ("interval", kappa, math.inf)}, ansatz,
                           stability=np.array([rep]), headline="alpha_c")
    prob = JammingProblem(kappa)
    # start of (q0, y): the minimum has q0 = 0.95, 0.86, 0.66, 0.27 and y = 42, 18, 12, 20 at
    # kappa = -0.25, -0.5, -1, -2 (docs/rsb.md); Newton converges from this start on that range
    q0, y0 = min(0.9, 0.8 + 0.15 * kappa), 12.4 * (-kappa) ** 0.6
    s1 = parisi.solve_kstep(prob, [q0, 1.0], [y0])
    if ansatz == "1rsb":
        return SaddlePoint("glm.jamming", params, {"q0": float(s1.q[0]), "q1": 1.0, "y": float(s1.m[0])},
                           {"alpha_c": s1.value}, True, s1.residual, s1.iterations, s1.hessian_eigenvalues, rep,
                           _stable(s1), {"lattice_error": s1.lattice_error, "alpha_rs": a_rs}, "1rsb",
                           error=s1.lattice_error, stability=np.sort(np.asarray(s1.hessian_eigenvalues)),
                           headline="alpha_c")
    qa, ya = float(s1.q[0]), float(s1.m[0])
    sol = parisi.solve_frsb(prob, qa, 1.0, lambda qm: 0.5 * ya * np.sqrt((1 - qa) / (1 - qm)), Ks=tuple(Ks))
    return SaddlePoint("glm.jamming", params, {"q_min": float(sol.q[0]), "q_max": 1.0}, {"alpha_c": sol.value},
                       True, sol.residual, sol.iterations, sol.hessian_eigenvalues, rep, _stable(sol),
                       {"q": sol.q, "y": sol.x, "order": sol.p, "Ks": sol.Ks, "alpha_K": sol.values,
                        "alpha_1rsb": s1.value, "alpha_rs": a_rs}, "frsb", error=sol.error,
                       stability=np.sort(np.asarray(sol.hessian_eigenvalues)), headline="alpha_c")


def storage_rsb(model, alpha, ansatz="1rsb", *, Ks=FRSB_KS):
    """The Gardner volume of a margin loss's zero set at finite ``alpha`` in ``ansatz`` (spherical
    student, random labels, T = 0): RS from :func:`statmech.glm.gibbs`, collapsing to it where the RS
    replicon is positive; otherwise 1RSB (``q0, q1, m``) or full RSB on the RSB core."""
    from .gibbs import gibbs
    check_choice("ansatz", ansatz, _ANSATZ)
    kappa = _halfline(model, "glm.storage_rsb")
    rs = gibbs(model, alpha)
    params = {"alpha": float(alpha), "kappa": kappa}
    if ansatz == "rs" or rs.rs_stable:
        op = {"q": rs.q} if ansatz == "rs" else {"q0": rs.q, "q1": rs.q, "m": 0.0}
        return SaddlePoint("glm.storage", params, op, {"entropy": rs.free_entropy}, True, rs.residual, rs.iterations,
                           None, rs.replicon, bool(rs.rs_stable), {"collapsed_to_rs": ansatz != "rs"}, ansatz,
                           stability=np.array([rs.replicon]), headline="entropy")
    prob = StorageProblem(alpha, kappa)
    q = rs.q
    s1 = parisi.solve_kstep(prob, [0.8 * q, min(q + 0.5 * (1 - q), 1 - 1e-3 * (1 - q))], [0.3])
    m = float(s1.m[0])
    if m > 1.0 - 1e-6:
        raise ConvergenceError("glm.storage_rsb: the 1RSB minimum is on the boundary m = 1", x=np.concatenate(
            [s1.q, s1.m]), residual=s1.residual, diagnostics={"alpha": alpha, "kappa": kappa})
    if ansatz == "1rsb":
        return SaddlePoint("glm.storage", params, {"q0": float(s1.q[0]), "q1": float(s1.q[1]), "m": m},
                           {"entropy": s1.value, "entropy_rs": rs.free_entropy}, True, s1.residual, s1.iterations,
                           s1.hessian_eigenvalues, rs.replicon, _stable(s1), {"lattice_error": s1.lattice_error},
                           "1rsb",
                           error=s1.lattice_error, stability=np.sort(np.asarray(s1.hessian_eigenvalues)),
                           headline="entropy")
    sol = parisi.solve_frsb(prob, float(s1.q[0]), float(s1.q[1]), lambda qm: np.full(qm.shape, m), Ks=tuple(Ks))
    return SaddlePoint("glm.storage", params, {"q_min": float(sol.q[0]), "q_max": float(sol.q[-1])},
                       {"entropy": sol.value, "entropy_1rsb": s1.value, "entropy_rs": rs.free_entropy}, True,
                       sol.residual, sol.iterations, sol.hessian_eigenvalues, rs.replicon, _stable(sol),
                       {"q": sol.q, "x": sol.x, "order": sol.p, "Ks": sol.Ks, "entropy_K": sol.values}, "frsb",
                       error=sol.error, stability=np.sort(np.asarray(sol.hessian_eigenvalues)), headline="entropy")
