"""Figure groups: one module per model, each with ``make(out_dir) -> list[Path]``.

``statmech figures`` (and :func:`make_all`) regenerates all of them from the public
API.  Every image is written atomically (:func:`save`).
"""
from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

__all__ = ["available", "make_all", "save"]


def available():
    """Names of the figure groups."""
    return sorted(m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_"))


def save(fig, path):
    """Save a matplotlib figure atomically and close it; returns the Path."""
    import matplotlib.pyplot as plt
    from ..io import atomic_path
    path = Path(path)
    with atomic_path(path, suffix=path.suffix) as tmp:
        fig.savefig(tmp, dpi=130, bbox_inches="tight", format=path.suffix.lstrip(".") or "png")
    plt.close(fig)
    return path


def make_all(out_dir="figures", only=None):
    """Regenerate every figure group (or those in ``only``) into ``out_dir``."""
    import matplotlib
    matplotlib.use("Agg")
    names = available()
    if only:
        unknown = sorted(set(only) - set(names))
        if unknown:
            raise ValueError(f"only must name figure groups among {names}, got {unknown}")
        names = [n for n in names if n in only]
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for name in names:
        mod = importlib.import_module(f"{__name__}.{name}")
        paths.extend(mod.make(out))
    return paths
