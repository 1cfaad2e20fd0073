"""Simulation backends that check the theory independently.

One submodule per backend (linear programming, exhaustive enumeration, Monte Carlo,
version-space sampling, learning algorithms ...).  Every public name listed in a
submodule's ``__all__`` is re-exported here lazily, so ``statmech.simulate.X`` works
without importing every backend (and compiling its numba kernels) up front.
"""
from __future__ import annotations

import importlib
import pkgutil

_INDEX = None


def _index():
    global _INDEX
    if _INDEX is None:
        idx = {}
        for info in pkgutil.iter_modules(__path__):
            if info.name.startswith("_"):
                continue
            mod = importlib.import_module(f"{__name__}.{info.name}")
            for name in getattr(mod, "__all__", ()):
                idx[name] = mod
        _INDEX = idx
    return _INDEX


def __getattr__(name):
    # private names (submodules such as ``_gd_kernels`` imported with ``from . import``) are
    # never looked up in the index: building it while a submodule is half-imported would
    # cache an index without that submodule's names
    if name.startswith("_"):
        raise AttributeError(name)
    mod = _index().get(name)
    if mod is None:
        raise AttributeError(f"module 'statmech.simulate' has no attribute {name!r}")
    return getattr(mod, name)


def __dir__():
    return sorted(set(globals()) | set(_index()))
