"""The result protocol of the simulation backends (:class:`statmech.result.Result`).

A simulation is not a replica computation, so every simulation result has ``ansatz = "-"``,
``rs_stable = None`` (no replica ansatz whose stability could be tested) and, unless the
result holds Hessian eigenvalues, ``stability = None``: :class:`Simulation` sets these three.
Each result class documents its own ``converged``, ``residual``, ``iterations`` and ``error``
(the standard error, or confidence half-width, of its headline value; 0.0 where the headline
is exact, e.g. an enumeration count).

:class:`DictResult` is for the functions that have always returned a plain ``dict``: it *is*
that dict (keys, ``[]``, ``json.dumps``, the figure data encoding see nothing new) and answers
the protocol as well (the keys are also attributes).
"""
from __future__ import annotations

from ..result import PROTOCOL, Result

__all__ = ["Simulation", "DictResult"]


class Simulation(Result):
    """Base of the simulation results: ``ansatz = "-"``, ``rs_stable = None``, ``stability = None``."""
    __slots__ = ()
    ansatz = "-"
    rs_stable = None
    stability = None


class DictResult(Simulation, dict):
    """A ``dict`` result that follows the protocol; its keys are also attributes."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        try:
            return self[name]
        except KeyError:
            raise AttributeError(f"{type(self).__name__} has no attribute {name!r}") from None

    def _items(self):
        items = list(self.items())
        for k in PROTOCOL:
            if k not in self:
                items.append((k, getattr(self, k, None)))
        return items

    def __reduce__(self):
        return (type(self), (dict(self),))
