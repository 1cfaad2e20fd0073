"""Result objects: special points, branches, coexistence points, analyses."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..result import Result
from ._problem import Problem

#: kinds of special point that :func:`trace` detects and locates (``SpecialPoint.kind``)
KINDS = ("fold", "branch_point", "stability_change", "event")


class _EngineResult(Result):
    """The protocol for the continuation engine's results (not replica computations: ``ansatz``
    is ``"-"``, ``rs_stable`` None): every point was accepted by the corrector at the problem's
    tolerance, so ``converged`` is True; ``error`` is 0.0 (each point is exact to that tolerance)."""
    __slots__ = ()
    converged = True
    ansatz = "-"
    rs_stable = None
    error = 0.0


@dataclass(frozen=True, repr=False)
class SpecialPoint(_EngineResult):
    """A located special point on a branch (see the :mod:`statmech.continuation` docstring).

    Protocol: ``residual`` of the located point, ``p`` the headline, ``stability`` None (the
    ``stable_before`` / ``stable_after`` flags say what changes there)."""
    headline = "p"
    iterations = 0
    stability = None
    kind: str
    p: float
    x: np.ndarray
    f: float | None = None
    s: float = 0.0
    stable_before: bool | None = None
    stable_after: bool | None = None
    tangent: np.ndarray | None = None
    residual: float = 0.0
    name: str | None = None
    coincides: str | None = None
    branch: int | None = None
    names: tuple | None = field(default=None, repr=False)

    def value(self, name):
        """One order parameter by name (or index)."""
        if isinstance(name, str):
            if self.names is None or name not in self.names:
                raise ValueError(f"name must be one of {self.names}, got {name!r}")
            name = self.names.index(name)
        return float(self.x[name])


@dataclass(frozen=True, repr=False)
class Branch(_EngineResult):
    """A traced solution branch (see the :mod:`statmech.continuation` docstring).

    ``margin``: :meth:`Problem.margin` at every point (> 0 stable; inf where stability is not
    assessed, NaN where it could not be evaluated); it is also ``stability`` (positive = stable).
    Protocol: ``iterations`` the accepted steps, ``residual`` the corrector tolerance every point
    met.
    """
    headline = None
    p: np.ndarray
    x: np.ndarray
    stable: np.ndarray
    f: np.ndarray | None
    s: np.ndarray
    tangent: np.ndarray
    margin: np.ndarray
    special_points: tuple
    status: tuple
    complete: bool
    steps: int
    rejected: int
    problem: Problem = field(repr=False, default=None)
    unlocated: tuple = ()

    def __len__(self):
        return self.p.size

    @property
    def iterations(self):
        return int(self.steps)

    @property
    def residual(self):
        return float(self.problem.tol) if self.problem is not None else 0.0

    @property
    def stability(self):
        return self.margin

    def __getitem__(self, name):
        names = self.problem.names if self.problem is not None else None
        if isinstance(name, str):
            if name == (self.problem.p_name if self.problem else "p"):
                return self.p
            if names is None or name not in names:
                raise KeyError(f"{name!r} is not an order parameter name ({names})")
            name = names.index(name)
        return self.x[:, name]

    def points(self, kind=None):
        """Special points (of one kind)."""
        return [sp for sp in self.special_points if kind is None or sp.kind == kind]

    def plot(self, ax=None, y=0, **kw):
        """Plot component ``y`` (index, name, or callable(branch) -> array) against p; dashed where unstable."""
        from ._plots import plot_branches
        return plot_branches([self], ax=ax, y=y, **kw)


@dataclass(frozen=True, repr=False)
class CoexistencePoint(_EngineResult):
    """A first-order transition point: two solutions with equal free energy at the same p.

    Protocol: ``p`` the headline, ``residual`` of the refined point, ``stability`` None (the
    ``stable1`` / ``stable2`` flags give the two states' stability).

    ``branches``: the indices of the two branches in :attr:`Analysis.branches` when the point
    comes from :func:`analyze`; ``(None, None)`` when it comes from :func:`coexistence` called
    directly (the branches are then the ones passed in, which have no index).
    """
    p: float
    x1: np.ndarray
    x2: np.ndarray
    f: float
    stable1: bool
    stable2: bool
    residual: float
    branches: tuple = (None, None)
    kind: str = "coexistence"
    headline = "p"
    iterations = 0
    stability = None


@dataclass(frozen=True, repr=False)
class Analysis(_EngineResult):
    """All branches, special points and coexistence points of a problem over a p range.

    Protocol: ``iterations`` the steps of all branches, ``residual`` the largest of the
    branches', ``stability`` None (each branch carries its margins)."""
    headline = None
    stability = None
    branches: tuple
    special_points: tuple
    coexistence: tuple
    p_min: float
    p_max: float

    @property
    def iterations(self):
        return int(sum(b.steps for b in self.branches))

    @property
    def residual(self):
        return max((b.residual for b in self.branches), default=0.0)

    def points(self, kind=None, branch=None):
        """Special points (of one kind, on one branch)."""
        return [sp for sp in self.special_points
                if (kind is None or sp.kind == kind) and (branch is None or sp.branch == branch)]

    def stable_branches(self):
        return [i for i, b in enumerate(self.branches) if np.any(b.stable)]

    def plot(self, ax=None, y=0, **kw):
        from ._plots import plot_branches
        return plot_branches(self, ax=ax, y=y, **kw)

