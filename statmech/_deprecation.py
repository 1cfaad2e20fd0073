"""Moved public names keep working: a module ``__getattr__`` that warns and forwards.

A public name, once released, keeps its import path.  When a name moves (to a model's
``advanced`` namespace, say), its old module keeps answering for it with a
``DeprecationWarning`` that names the new call::

    __getattr__ = moved(__name__, {"binary_storage_1rsb": "statmech.perceptron.advanced"})
"""
from __future__ import annotations

import importlib
import warnings

__all__ = ["moved"]


def moved(module, names, *, replacement=None):
    """Module ``__getattr__`` for ``names`` (``{old name: new module}``) moved out of ``module``.

    ``replacement`` may map an old name to the call that replaces it (a sentence), e.g.
    ``{"tcm_capacity_1rsb_point": "committee.tcm_capacity_point(K, 'sign', '1rsb')"}``.
    """
    replacement = dict(replacement or {})

    def __getattr__(name):
        if name in names:
            target = names[name]
            new = replacement.get(name, f"{target}.{name}")
            warnings.warn(f"{module}.{name} has moved: use {new}", DeprecationWarning, stacklevel=2)
            return getattr(importlib.import_module(target), name)
        raise AttributeError(f"module {module!r} has no attribute {name!r}")
    return __getattr__
