r"""Innermost levels ("channels") of the Parisi recursion, written once in sympy.

A model hands the RSB core the function ``f(q_k, h)`` of its innermost level on the
lattice, with its derivatives with respect to that level's parameters.  Three are
provided (``a = kappa - h``, ``sigma^2 = s2``, ``u = 1 + y s2``):

* **soft hinge, frozen** (perceptron family at the SAT/UNSAT point, derived in
  ``docs/rsb.md`` Eq. (J3)): the last step (variance ``s2 = 1 - q_{k-1}``, parameter
  ``y``) of the terminal ``-(kappa - h)_+^2/2`` done in closed form::

      F = (1/y) log[ H(a/sigma) + u^{-1/2} exp(-y a^2/(2u)) H(-a/(sigma sqrt u)) ]

* **absolute value, frozen** (SK at T = 0, terminal ``|h|``)::

      F = y s2/2 + (1/y) log[ e^{y h} H(-(h + y s2)/sigma) + e^{-y h} H((h - y s2)/sigma) ]

* **log H terminal** (perceptron at finite alpha, ``p = 1 - q_k``)::

      f = log H((kappa - h)/sqrt(p)),   which solves  d_q f = -(f'' + f'^2)/2   (x = 1).

At ``y = 0`` (the ``m -> 0`` limit: a plain Gaussian average, the replica-symmetric
limit) the frozen levels are ``-[(a^2 + s2) H(-a/sigma) + a sigma G(a/sigma)]/2`` and
``h (1 - 2 H(h/sigma)) + 2 sigma G(h/sigma)``.

Each exponential's log and its parameter derivatives come from ``sympy.diff``; the
grid loops in :mod:`statmech.rsb._channel_grids` combine them by log-sum-exp.
"""
from __future__ import annotations

import sympy as sp

from ..symbolic import Gauss, H, LogH, Scalar, kernels

__all__ = ["hinge_frozen", "abs_frozen", "logh_terminal"]


@kernels(include=("statmech.rsb._channel_grids",))
def _K():
    h, s2, y, k, p = sp.symbols("h s2 y kappa p", real=True)
    sig = sp.sqrt(s2)
    a = k - h
    u = 1 + y * s2
    A = LogH(a / sig)
    B = -sp.log(u) / 2 - y * a ** 2 / (2 * u) + LogH(-a / (sig * sp.sqrt(u)))
    hinge = (A, B, sp.diff(A, s2), sp.diff(B, s2), sp.diff(B, y))
    A2 = y * h + LogH(-(h + y * s2) / sig)
    B2 = -y * h + LogH((h - y * s2) / sig)
    absv = (A2, B2, sp.diff(A2, s2), sp.diff(B2, s2), sp.diff(A2, y), sp.diff(B2, y))
    lh = LogH(a / sp.sqrt(p))
    # m -> 0 limits of the frozen steps: plain Gaussian averages (the RS limit)
    hinge0 = -((a ** 2 + s2) * H(-a / sig) + a * sig * Gauss(a / sig)) / 2
    abs0 = h * (1 - 2 * H(h / sig)) + 2 * sig * Gauss(h / sig)
    return {
        "hinge_terms0": Scalar((h, s2, k), (hinge0, sp.diff(hinge0, s2))),
        "abs_terms0": Scalar((h, s2), (abs0, sp.diff(abs0, s2))),
        "hinge_terms": Scalar((h, s2, y, k), hinge),
        "abs_terms": Scalar((h, s2, y), absv),
        "logh_terms": Scalar((h, p, k), (lh, sp.diff(lh, p))),
    }


def hinge_frozen(h0, d, n, s2, y, kappa):
    """Frozen soft-hinge level on ``h0 + d*arange(n)``: arrays F, dF/ds2, dF/dy."""
    return _K.hinge_frozen_grid(float(h0), float(d), int(n), float(s2), float(y), float(kappa))


def abs_frozen(h0, d, n, s2, y):
    """Frozen ``|h|`` level (SK, T = 0) on ``h0 + d*arange(n)``: arrays F, dF/ds2, dF/dy."""
    return _K.abs_frozen_grid(float(h0), float(d), int(n), float(s2), float(y))


def logh_terminal(h0, d, n, p, kappa):
    """``log H((kappa-h)/sqrt(p))`` on ``h0 + d*arange(n)`` and its derivative in p."""
    return _K.logh_terminal_grid(float(h0), float(d), int(n), float(p), float(kappa))
