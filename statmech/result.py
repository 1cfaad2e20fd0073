"""The result protocol: one base for every solver result, one vocabulary for ``ansatz``.

Every solver of statmech returns an object derived from :class:`Result`.  Whatever the model,
the result answers the same questions under the same names:

``converged``
    bool (or bool array for vectorized calls): the solver reached its tolerance.  A solver that
    does not converge raises :class:`statmech.ConvergenceError` instead of returning, so on a
    returned result this is True unless the docstring says otherwise.
``residual``
    float: the final residual norm of the equations solved (max-norm, or ``max|grad|`` for a
    minimisation), 0.0 for closed forms.
``iterations``
    int: iterations (Newton steps, function evaluations or sample batches, as documented).
``ansatz``
    str: the replica ansatz the numbers belong to: ``"rs"``, ``"1rsb"``, ``"2rsb"``, ...
    (k-step breaking) or ``"frsb"`` (full, Parisi).  ``"-"`` for results that are not replica
    computations (online-learning trajectories, simulations).
``rs_stable``
    bool or None: the stability of the ansatz *itself* at this point -- for an RS result, the
    sign of the replicon (AT) eigenvalue; for a k-step result, whether its own stationary point
    is a stable extremum of the k-step functional.  ``None`` only where it is not computed, and
    the docstring of the function says so.
``error``
    float: the numerical error estimate of the headline value (quadrature, discretisation,
    extrapolation or Monte-Carlo standard error), 0.0 when exact to rounding.
``stability``
    array or None: eigenvalues of the stability matrix at the solution, ascending, with one sign
    convention everywhere: **positive = stable**.  ``None`` where not computed (documented).

and offers ``to_dict()`` (JSON-ready: arrays become lists, non-finite floats become ``None``), a
bounded ``repr`` (arrays summarised, never more than :data:`REPR_LIMIT` characters) and
``_repr_html_`` for Jupyter.  The headline value (``headline`` names it) is printed to the digits
its ``error`` supports.
"""
from __future__ import annotations

import dataclasses
import html
import math
import numbers
from typing import ClassVar

import numpy as np

from .errors import check_real

__all__ = ["Result", "Estimate", "flat", "PROTOCOL", "REPR_LIMIT", "check_ansatz", "check_real", "format_value", "jsonable",
           "short"]

#: the fields every result carries
PROTOCOL = ("converged", "residual", "iterations", "ansatz", "rs_stable", "error", "stability")
#: hard bound on ``repr(result)``
REPR_LIMIT = 2000


# --------------------------------------------------------------------------- formatting
def format_value(value, error=0.0):
    """``value`` to the digits ``error`` supports: ``3.908 ± 0.002``; the full repr when exact.

    >>> format_value(3.907677192041548, 1.8e-3)
    '3.9077 ± 0.0018'
    >>> format_value(2.0, 0.0)
    '2.0'
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Real, np.floating, np.integer)):
        return short(value)
    v = float(value)
    try:
        e = abs(float(error)) if error is not None else 0.0
    except (TypeError, ValueError):
        e = 0.0
    if not math.isfinite(v) or not math.isfinite(e) or e == 0.0:
        return repr(v) if not e or not math.isfinite(e) else f"{v!r} ± {e:.2g}"
    # the value to the significant digits the error supports (two digits of the error)
    lead = math.floor(math.log10(abs(v))) if v != 0.0 else math.floor(math.log10(e))
    n_sig = max(1, min(17, lead - math.floor(math.log10(e)) + 2))
    return f"{v:.{n_sig}g} ± {e:.2g}"


def short(v, depth=0):
    """A bounded one-line summary of any value (arrays summarised by shape and range)."""
    if isinstance(v, Result):
        return f"<{type(v).__name__}>" if depth else repr(v)
    if isinstance(v, np.ndarray):
        if v.size <= 6 and v.ndim <= 1:
            return np.array2string(v, precision=6, separator=", ")
        if v.dtype.kind in "fiu" and v.size:
            finite = v[np.isfinite(v)] if v.dtype.kind == "f" else v
            rng = f", {float(finite.min()):.4g}..{float(finite.max()):.4g}" if finite.size else ""
            return f"array(shape={v.shape}{rng})"
        return f"array(shape={v.shape}, dtype={v.dtype})"
    if isinstance(v, (list, tuple)):
        if len(v) <= 6 and depth < 1:
            inner = ", ".join(short(x, depth + 1) for x in v)
            return f"[{inner}]" if isinstance(v, list) else f"({inner}{',' if len(v) == 1 else ''})"
        return f"{type(v).__name__}(len={len(v)})"
    if isinstance(v, dict):
        if len(v) <= 8 and depth < 1:
            return "{" + ", ".join(f"{k!r}: {short(x, depth + 1)}" for k, x in v.items()) + "}"
        return f"dict(len={len(v)})"
    if isinstance(v, (float, np.floating)):
        return repr(float(v))
    s = repr(v)
    return s if len(s) <= 80 else s[:77] + "..."


def jsonable(v):
    """``v`` as plain JSON types: arrays -> lists, numpy scalars -> Python, non-finite -> None.

    ``json.loads(json.dumps(jsonable(v))) == jsonable(v)`` for every result.
    """
    if isinstance(v, Result):
        return v.to_dict()
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return {f.name: jsonable(getattr(v, f.name)) for f in dataclasses.fields(v)}
    if isinstance(v, np.ndarray):
        return [jsonable(x) for x in v.tolist()] if v.dtype.kind in "fcO" else v.tolist()
    if isinstance(v, (np.bool_, bool)):
        return bool(v)
    if isinstance(v, (np.integer, int)):
        return int(v)
    if isinstance(v, (np.floating, float)):
        f = float(v)
        return f if math.isfinite(f) else None
    if isinstance(v, complex):
        return [jsonable(v.real), jsonable(v.imag)]
    if isinstance(v, dict):
        return {str(k): jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [jsonable(x) for x in v]
    if v is None or isinstance(v, str):
        return v
    return repr(v)


class Estimate(float):
    """A float that carries its numerical error estimate.

    The convenience functions that return a bare number return this where the number has a
    non-negligible error (Monte-Carlo, extrapolation): it *is* the float (arithmetic, comparisons,
    numpy and JSON see the value), and ``.error`` holds the estimate; ``repr`` prints the digits
    the error supports (``3.9077 ± 0.0018``).

    >>> a = Estimate(3.907677192041548, 1.8e-3)
    >>> a
    3.9077 ± 0.0018
    >>> a + 0.0, a.error
    (3.907677192041548, 0.0018)
    """

    def __new__(cls, value, error=0.0):
        obj = float.__new__(cls, value)
        obj.error = float(error)
        return obj

    def __repr__(self):
        return format_value(float(self), self.error)

    __str__ = __repr__

    def __reduce__(self):
        return (Estimate, (float(self), self.error))


# --------------------------------------------------------------------------- the base
class Result:
    """Base of every solver result (see the module docstring for the protocol).

    Subclasses are usually frozen dataclasses that carry the protocol fields
    (:data:`PROTOCOL`) as fields or properties, and set the class attribute ``headline`` to the
    name of their headline value (``"alpha_c"``, ``"q"``, ``"energy"``...).
    """
    __slots__ = ()
    headline: ClassVar[str | None] = None

    # ---- the headline
    def headline_value(self):
        """The headline value (``getattr(self, self.headline)``), or None when there is none."""
        return None if self.headline is None else getattr(self, self.headline)

    # ---- serialisation
    def _items(self):
        """(name, value) pairs: the dataclass fields (or public attributes), then protocol fields."""
        if dataclasses.is_dataclass(self):
            items = [(f.name, getattr(self, f.name)) for f in dataclasses.fields(self) if f.repr]
        else:
            items = [(k, v) for k, v in vars(self).items() if not k.startswith("_")]
        names = {k for k, _ in items}
        for k in PROTOCOL:
            if k not in names:
                items.append((k, getattr(self, k, None)))
        return items

    def to_dict(self):
        """Plain JSON-ready dict: every field, the protocol fields, ``type`` and ``headline``.

        Arrays become lists, numpy scalars Python numbers, non-finite floats ``None``; nested
        results become dicts.  ``json.loads(json.dumps(r.to_dict())) == r.to_dict()``.
        """
        d = {"type": type(self).__name__}
        if self.headline is not None:
            d["headline"] = self.headline
        for k, v in self._items():
            d[k] = jsonable(v)
        return d

    # ---- display
    def _summary_items(self):
        """The items shown by repr: headline first (with its error), the protocol, then the rest."""
        items = self._items()
        out = []
        head = self.headline
        if head is not None:
            try:
                out.append((head, format_value(self.headline_value(), getattr(self, "error", 0.0))))
            except Exception:  # noqa: BLE001 -- a display must never raise
                pass
        for k in PROTOCOL:
            if k == "error":
                continue
            out.append((k, short(getattr(self, k, None), 1)))
        shown = {k for k, _ in out} | {"error"}
        for k, v in items:
            if k not in shown:
                out.append((k, short(v, 1)))
        return out

    def __repr__(self):
        parts = []
        total = len(type(self).__name__) + 2
        items = self._summary_items()
        for i, (k, s) in enumerate(items):
            piece = f"{k}={s}"
            if total + len(piece) + 2 > REPR_LIMIT - 40:
                parts.append(f"... {len(items) - i} more")
                break
            parts.append(piece)
            total += len(piece) + 2
        return f"{type(self).__name__}({', '.join(parts)})"

    def _repr_html_(self):
        rows = "".join(f"<tr><th style='text-align:left'>{html.escape(str(k))}</th>"
                       f"<td style='text-align:left'><code>{html.escape(s)}</code></td></tr>"
                       for k, s in self._summary_items())
        return f"<table><caption>{html.escape(type(self).__name__)}</caption>{rows}</table>"


def flat(result):
    """One flat, JSON-ready record of a result: the schema of the command line's ``--json``.

    A :class:`statmech.SaddlePoint` gives its control parameters, order parameters and
    thermodynamics at the top level (``alpha``, ``kappa``, ``q``, ``entropy``, ``alpha_c``...),
    then ``model``, the protocol fields (:data:`PROTOCOL`), ``replicon`` and its scalar ``extra``
    entries under ``"extra"``; any other :class:`Result` gives its :meth:`Result.to_dict` without
    ``type``.  The same quantity has the same key in every record.
    """
    if hasattr(result, "order_params") and hasattr(result, "thermo") and hasattr(result, "params"):
        d = {"model": result.model}
        for part in (result.params, result.order_params, result.thermo):
            d.update({k: jsonable(v) for k, v in part.items()})
        for k in PROTOCOL + ("replicon",):
            d[k] = jsonable(getattr(result, k, None))
        scalars = {k: jsonable(v) for k, v in result.extra.items()
                   if isinstance(v, (str, bool, int, float, np.bool_, np.integer, np.floating))}
        if scalars:
            d["extra"] = scalars
        return d
    d = result.to_dict() if isinstance(result, Result) else jsonable(result)
    if isinstance(d, dict):
        d.pop("type", None)
    return d


# --------------------------------------------------------------------------- vocabulary
_KSTEP = {"1rsb": 1, "2rsb": 2, "3rsb": 3, "4rsb": 4, "5rsb": 5, "6rsb": 6, "7rsb": 7, "8rsb": 8}


def check_ansatz(ansatz, supported, *, k=None, function=None):
    """Normalise ``ansatz`` (and ``k`` for ``"krsb"``) against what a model supports.

    ``supported`` lists the model's ansatze in the common vocabulary (``"rs"``, ``"1rsb"``,
    ``"2rsb"``, ..., ``"krsb"`` meaning any number of steps, ``"frsb"``).  ``"krsb"`` with ``k``
    is spelled out (``"krsb", k=2`` -> ``"2rsb"``); a ``k`` with any other ansatz must agree with
    it.  Returns ``(ansatz, k)`` with ``k`` = 0 for RS, the number of steps for k-step breaking and
    ``math.inf`` for full RSB.  Raises ``TypeError`` for a non-string and ``ValueError`` listing
    the supported values otherwise.
    """
    where = f"{function}: " if function else ""
    if not isinstance(ansatz, str):
        raise TypeError(f"{where}ansatz must be a string, one of {', '.join(map(repr, supported))}; "
                        f"got {ansatz!r}")
    a = ansatz.strip().lower()
    if k is not None:
        if isinstance(k, bool) or not isinstance(k, (numbers.Integral, np.integer)) or k < 0:
            raise ValueError(f"{where}k must be a non-negative integer (the number of RSB steps), got {k!r}")
        k = int(k)
        if a == "krsb":
            a = "rs" if k == 0 else f"{k}rsb"
    steps = 0 if a == "rs" else math.inf if a == "frsb" else _KSTEP.get(a)
    if a == "krsb":
        raise ValueError(f"{where}ansatz='krsb' needs k= (the number of steps)")
    ok = a in supported or (steps not in (None, 0, math.inf) and "krsb" in supported)
    if steps is None or not ok:
        raise ValueError(f"{where}ansatz must be one of {', '.join(map(repr, supported))}, got {ansatz!r}"
                         + (f" with k={k}" if k is not None else ""))
    if k is not None and ansatz.strip().lower() != "krsb" and k != steps:
        raise ValueError(f"{where}k={k} contradicts ansatz={ansatz!r}")
    return a, steps
