"""Numba helpers shared by the cores and the models' kernels.

:func:`rt_int` and :func:`rt_bool` pass a constant through as a run-time value.  Numba types
a constant argument (a module-level int code, ``False``, an offset) as a *literal*, and a
jitted function called from another with a literal is compiled once per literal value --
together with everything it calls.  In a solver chain (driver -> Newton -> branch map ->
quadrature) that multiplies the compile time of a cold cache by the number of distinct
constants (the perceptron kernels compiled 23 copies of their branch map: a minute).  Passed
through these helpers, each function of the chain is compiled once.  An arithmetic result or
a comparison is never a literal (``return v`` would keep the literal type).
"""
import numba

__all__ = ["rt_int", "rt_bool"]


@numba.njit(cache=True)
def rt_int(v):
    """The int ``v`` typed as a run-time ``int64`` (not a literal)."""
    return v + 0


@numba.njit(cache=True)
def rt_bool(v):
    """The bool ``v`` typed as a run-time ``bool`` (not a literal)."""
    return v == True  # noqa: E712 -- a comparison, hence not a literal
