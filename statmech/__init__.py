"""statmech: the statistical mechanics of learning, computed.

Order parameters, capacities, entropies, free energies and phase diagrams of
perceptrons, committee machines and soft committee machines, each solver returning
a :class:`SaddlePoint` with a convergence and stability report, and each result
cross-checked by simulation backends in :mod:`statmech.simulate`.

Everything that needs the compiled stack (numba) is imported lazily: the model modules
(``statmech.perceptron``, ``statmech.scm``, ...) and the Gaussian-integral names re-exported
here (``statmech.H``, ``statmech.log_H``, ...).  So ``import statmech`` is fast, the result and
error classes import with numpy and scipy alone, and numba kernels compile on first use
(cached).  A missing runtime dependency is reported on first use with the install command.
"""
from __future__ import annotations

import importlib

from .errors import ConvergenceError
from .result import Result
from .saddle import SaddlePoint

__version__ = "0.1.0"

_SUBMODULES = {
    "gaussian", "saddle", "symbolic", "errors", "io", "result", "perceptron", "scm", "committee",
    "franz_parisi", "activations", "continuation", "simulate", "sweep", "figures", "cli", "rsb", "glm",
}

__all__ = ["ConvergenceError", "Result", "SaddlePoint", "H", "log_H", "inv_mills", "log_2cosh",
           "gauss_hermite", "expect", "expect2", "__version__"] + sorted(_SUBMODULES)


_GAUSSIAN = {"H", "log_H", "inv_mills", "log_2cosh", "gauss_hermite", "expect", "expect2"}
_RUNTIME = ("numba", "numpy", "scipy", "sympy", "mpmath", "matplotlib", "tqdm", "threadpoolctl")


def _import(name):
    try:
        return importlib.import_module(f".{name}", __name__)
    except ModuleNotFoundError as exc:
        if exc.name in _RUNTIME:
            raise ModuleNotFoundError(
                f"statmech.{name} needs {exc.name!r}, a runtime dependency of statmech that is not "
                f"installed in this Python ({exc}); install the package with its dependencies: "
                f"python -m pip install -e .", name=exc.name) from exc
        raise


def __getattr__(name):
    if name in _SUBMODULES:
        mod = _import(name)
        globals()[name] = mod
        return mod
    if name in _GAUSSIAN:
        value = getattr(_import("gaussian"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'statmech' has no attribute {name!r}")
