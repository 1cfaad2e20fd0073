"""Errors and argument validation shared by every model.

Every public function validates its arguments with the helpers below, so that a
bad value always raises a :class:`ValueError` whose message names the argument,
the allowed range and the value received, e.g. ``alpha must be >= 0, got -1.0``.
A solver that fails to converge raises :class:`ConvergenceError` carrying its
last iterate and residual instead of returning a wrong number.
"""
from __future__ import annotations

import math
import numbers

import numpy as np

__all__ = [
    "ConvergenceError",
    "check_finite",
    "check_range",
    "check_odd_int",
    "check_int",
    "check_choice",
    "check_real",
    "as_float_array",
]


class ConvergenceError(RuntimeError):
    """A solver did not reach its tolerance.

    Attributes
    ----------
    x : the last iterate (array or None)
    residual : the last residual norm (float or None)
    iterations : the number of iterations performed
    diagnostics : a dict of solver-specific information (parameters, history)
    """

    def __init__(self, message, *, x=None, residual=None, iterations=None, diagnostics=None):
        self.x = None if x is None else np.array(x, dtype=float, copy=True)
        self.residual = residual
        self.iterations = iterations
        self.diagnostics = dict(diagnostics or {})
        details = []
        if residual is not None:
            details.append(f"residual={residual:.3e}")
        if iterations is not None:
            details.append(f"iterations={iterations}")
        if self.x is not None and self.x.size <= 8:
            details.append("x=" + np.array2string(self.x, precision=6))
        for k, v in self.diagnostics.items():
            if isinstance(v, (numbers.Number, str)):
                details.append(f"{k}={v}")
        super().__init__(message + (" (" + ", ".join(details) + ")" if details else ""))


def _fmt(value):
    if isinstance(value, np.ndarray):
        return np.array2string(value, threshold=6)
    return repr(value)


_NOT_NUMBERS = (str, bytes, bool, np.bool_, complex, np.complexfloating)


def _not_a_number(value):
    """True for what must not pass as a real number: None, strings, booleans, complex numbers (or
    a list/tuple/object array holding one)."""
    if value is None or isinstance(value, _NOT_NUMBERS):
        return True
    if isinstance(value, (list, tuple)):
        return any(_not_a_number(v) for v in value)
    if isinstance(value, np.ndarray):
        return value.dtype.kind in "USbcO" and (value.dtype.kind != "O" or any(_not_a_number(v) for v in value.flat))
    return False


def check_real(name, value, *, function=None):
    """Reject what is not a real number (or array of them) with a ``TypeError`` naming ``name``.

    Python and numpy integers and floats, and arrays/sequences of them, pass through unchanged;
    None, strings, bytes, booleans and complex numbers raise (the rule :func:`as_float_array`,
    which every argument check uses, applies too).
    """
    if _not_a_number(value) or not isinstance(value, (numbers.Real, np.integer, np.floating, list, tuple,
                                                          np.ndarray)):
        where = f"{function}: " if function else ""
        raise TypeError(f"{where}{name} must be a real number, got {type(value).__name__} {value!r}")
    return value


def as_float_array(name, value):
    """Convert ``value`` to a float ndarray.

    Raises ``TypeError`` naming ``name`` for what is not a real number (None, a string, a bool, a
    complex number -- numbers are numbers: ``"1"`` is not coerced) and ``ValueError`` for anything
    else numpy cannot read as reals."""
    if _not_a_number(value):
        raise TypeError(f"{name} must be a real number (or an array of real numbers), "
                        f"got {type(value).__name__} {value!r}")
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a real number or array of real numbers, got {value!r}") from None
    return arr


def check_finite(name, value):
    """Raise ValueError unless every element of ``value`` is finite (no NaN, no inf)."""
    arr = as_float_array(name, value)
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite (no NaN or inf), got {_fmt(value)}")
    return arr


def check_range(name, value, lo=-math.inf, hi=math.inf, *, lo_open=False, hi_open=False,
                allow_inf=False):
    """Raise ValueError unless ``lo <= value <= hi`` elementwise (``<`` for open ends).

    NaN is always rejected; infinities are rejected unless ``allow_inf``.
    Returns the value as a float ndarray (0-d for scalars).
    """
    arr = as_float_array(name, value)
    if np.any(np.isnan(arr)):
        raise ValueError(f"{name} must not be NaN, got {_fmt(value)}")
    if not allow_inf and np.any(np.isinf(arr)):
        raise ValueError(f"{name} must be finite, got {_fmt(value)}")
    bad_lo = (arr <= lo) if lo_open else (arr < lo)
    bad_hi = (arr >= hi) if hi_open else (arr > hi)
    if np.any(bad_lo) or np.any(bad_hi):
        if math.isinf(hi):
            rng = f"> {lo:g}" if lo_open else f">= {lo:g}"
        elif math.isinf(lo):
            rng = f"< {hi:g}" if hi_open else f"<= {hi:g}"
        else:
            rng = f"in {'(' if lo_open else '['}{lo:g}, {hi:g}{')' if hi_open else ']'}"
        bad = arr[bad_lo | bad_hi] if arr.ndim else arr
        shown = float(bad.flat[0]) if arr.ndim else float(arr)
        raise ValueError(f"{name} must be {rng}, got {shown!r}")
    return arr


def check_int(name, value, lo=None):
    """Raise ValueError unless ``value`` is an integer (>= lo when given); TypeError if it is not
    a number at all (None, a string, a bool)."""
    if _not_a_number(value) or not isinstance(value, (numbers.Real, np.integer, np.floating)):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__} {value!r}")
    if isinstance(value, (float, np.floating)) and (not math.isfinite(value) or value != int(value)):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    v = int(value)
    if lo is not None and v < lo:
        raise ValueError(f"{name} must be an integer >= {lo}, got {value!r}")
    return v


def check_odd_int(name, value, lo=1):
    """Raise ValueError unless ``value`` is an odd integer >= lo."""
    v = check_int(name, value, lo)
    if v % 2 == 0:
        raise ValueError(f"{name} must be an odd integer >= {lo} (majority vote), got {value!r}")
    return v


def check_choice(name, value, choices):
    """Raise ValueError unless ``value`` is one of ``choices``."""
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))}, got {value!r}")
    return value
