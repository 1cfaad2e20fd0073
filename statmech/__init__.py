"""statmech: the statistical mechanics of learning, computed.

Order parameters, capacities, entropies, free energies and phase diagrams of
perceptrons, committee machines and soft committee machines, each solver returning
a :class:`SaddlePoint` with a convergence and stability report, and each result
cross-checked by simulation backends in :mod:`statmech.simulate`.

Model modules are imported lazily (``statmech.perceptron``, ``statmech.scm``, ...),
so ``import statmech`` is fast and numba kernels compile on first use (cached).
"""
from __future__ import annotations

import importlib

from .errors import ConvergenceError
from .gaussian import H, log_H, inv_mills, log_2cosh, gauss_hermite, expect, expect2
from .saddle import SaddlePoint

__version__ = "0.1.0"

_SUBMODULES = {
    "gaussian", "saddle", "symbolic", "errors", "io", "perceptron", "scm", "committee",
    "franz_parisi", "activations", "continuation", "simulate", "sweep", "figures", "cli", "rsb",
}

__all__ = ["ConvergenceError", "SaddlePoint", "H", "log_H", "inv_mills", "log_2cosh",
           "gauss_hermite", "expect", "expect2", "__version__"] + sorted(_SUBMODULES)


def __getattr__(name):
    if name in _SUBMODULES:
        mod = importlib.import_module(f".{name}", __name__)
        globals()[name] = mod
        return mod
    raise AttributeError(f"module 'statmech' has no attribute {name!r}")
