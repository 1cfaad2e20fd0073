"""Public entry points that choose the theory by ``ansatz`` (``"rs"``, ``"1rsb"``, ``"frsb"``).

The replica-symmetric theories live in ``spherical_storage_rs.py``; the broken ones in
``spherical_rsb.py`` (on the RSB core :mod:`statmech.rsb`).  ``ansatz`` has the same
meaning in every model of the package.
"""
from __future__ import annotations

import numpy as np

from ..errors import check_choice
from ..result import check_ansatz

from . import binary_rsb, binary_storage_rs, spherical_rsb, spherical_storage_rs

__all__ = ["gardner_capacity", "spherical_storage", "binary_storage", "binary_capacity"]

ANSATZE = ("rs", "1rsb", "frsb")


def _options(function, options, allowed):
    """TypeError naming the public ``function`` for an option it does not take."""
    bad = sorted(set(options) - set(allowed))
    if bad:
        raise TypeError(f"{function}() got an unexpected keyword argument {bad[0]!r} (it takes "
                        f"{', '.join(map(repr, sorted(allowed))) or 'no options'} here)")


def gardner_capacity(kappa=0.0, ansatz="rs", **options):
    r"""SAT/UNSAT capacity ``alpha_c(kappa)`` of the spherical perceptron (float or array).

    Parameters
    ----------
    kappa : float or array
        Stability (margin); ``kappa < 0`` is the non-convex negative perceptron.
    ansatz : {"rs", "1rsb", "frsb"}
        ``"rs"``: Gardner's closed form
        ``1/alpha_c = int_{-inf}^kappa Dt (kappa - t)^2`` (thesis Eq. 2.30, Gardner 1988;
        ``alpha_c(0) = 2``, ``alpha_c(1) = 0.519572229605``), exact for ``kappa >= 0`` and
        AT-unstable (an upper bound) for ``kappa < 0``.  ``"1rsb"`` and ``"frsb"``: the
        jamming line of ``docs/rsb.md`` (Eq. J4), equal to RS for ``kappa >= 0``.
    **options
        Passed to :func:`gardner_capacity_point` for the RSB ansätze (``Ks``, ``executor``).

    Returns
    -------
    float or ndarray
        ``alpha_c``; ``inf`` where the RS value exceeds the float range (kappa < -37.4: alpha_c > 1.8e308).
        :func:`gardner_capacity_point` returns the full result (order parameters,
        ``rs_stable``, replicon, convergence report).
    """
    ansatz, _ = check_ansatz(ansatz, ANSATZE, function="gardner_capacity")
    _options("gardner_capacity", options, ("Ks", "executor", "progress") if ansatz != "rs" else ())
    if ansatz == "rs":
        return spherical_storage_rs.gardner_capacity(kappa)
    return spherical_rsb.gardner_capacity_rsb(kappa, ansatz, **options)


def spherical_storage(alpha, kappa=0.0, ansatz="rs", **options):
    r"""Typical solution space of the spherical storage problem at load ``alpha``.

    Parameters
    ----------
    alpha : float or array, ``0 <= alpha < gardner_capacity(kappa)``
    kappa : float or array (broadcast with alpha)
    ansatz : {"rs", "1rsb", "frsb"}
        ``"rs"``: Gardner's RS saddle point (thesis Eq. 2.29, corrected prefactor), with
        ``replicon`` and ``rs_stable`` (False beyond the AT line, which exists for
        kappa < 0).  ``"1rsb"`` / ``"frsb"``: the broken solution (``q0, q1, m`` /
        ``x(q)`` in ``extra``), which collapses to RS where RS is stable.
    **options
        For the RSB ansätze: ``Ks`` (graded grids of the full-RSB solve).

    Returns
    -------
    SaddlePoint
        Order parameters, ``entropy`` (log of the fraction of the sphere that stores all
        patterns), convergence report and stability; ``ansatz`` says which theory.
    """
    ansatz, _ = check_ansatz(ansatz, ANSATZE, function="spherical_storage")
    _options("spherical_storage", options, ("Ks",) if ansatz == "frsb" else ())
    if ansatz == "rs":
        return spherical_storage_rs.spherical_storage(alpha, kappa)
    return spherical_rsb.spherical_storage_rsb(alpha, kappa, ansatz, **options)


BINARY_ANSATZE = ("rs", "1rsb")


def binary_storage(alpha, kappa=0.0, ansatz="rs", **options):
    r"""Solution space of the Ising-perceptron storage problem at load ``alpha``.

    ``ansatz="rs"``: Gardner--Derrida's RS saddle point
    (:func:`statmech.perceptron.binary_storage_rs.binary_storage`, vectorized).
    ``ansatz="1rsb"``: the general 1RSB equations (``q0, q1, m``; docs/rsb.md section
    "Binary perceptron"), scalar alpha and kappa:
    :func:`statmech.perceptron.binary_rsb.binary_storage_1rsb` (frozen states ``q1 = 1``
    with their complexity; the ``q1 < 1`` branch collapses to RS, ``extra["collapse"]``);
    ``options`` are passed to it (``m``).  Full RSB is not implemented for Ising weights.
    """
    ansatz, _ = check_ansatz(ansatz, BINARY_ANSATZE, function="binary_storage")
    _options("binary_storage", options, ("m", "tol", "collapse_m", "collapse_tol", "collapse_maxiter")
             if ansatz == "1rsb" else ())
    if ansatz == "rs":
        return binary_storage_rs.binary_storage(alpha, kappa)
    return binary_rsb.binary_storage_1rsb(alpha, kappa, **options)


def binary_capacity(kappa=0.0, method="zero_entropy", ansatz="rs"):
    r"""Storage capacity of the Ising perceptron (float, or array for array kappa).

    ``ansatz="rs"``: :func:`statmech.perceptron.binary_storage_rs.binary_capacity`
    (``method="zero_entropy"``: where the RS entropy vanishes, Krauth--Mézard;
    ``"gardner_derrida"``: where the RS q -> 1).  ``ansatz="1rsb"``: the same
    Krauth--Mézard number computed from the frozen limit of the general 1RSB equations
    (:func:`statmech.perceptron.binary_rsb.binary_capacity_1rsb`; ``method`` must be
    ``"zero_entropy"``), 0.8330785997396 at kappa = 0.
    """
    ansatz, _ = check_ansatz(ansatz, BINARY_ANSATZE, function="binary_capacity")
    if ansatz == "rs":
        return binary_storage_rs.binary_capacity(kappa, method)
    check_choice("method", method, ("zero_entropy",))
    k = np.asarray(kappa, dtype=float)
    f = lambda kk: binary_rsb.binary_capacity_1rsb(kk).thermo["alpha_c"]  # noqa: E731
    return float(f(float(k))) if k.ndim == 0 else np.vectorize(f, otypes=[float])(k)
