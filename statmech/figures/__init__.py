"""Figure groups: one module per model, each with ``make(out_dir) -> list[Path]``.

``statmech figures`` (and :func:`make_all`) regenerates all of them from the public
API, the groups in parallel over the available cores.  Theory curves are computed live;
simulation data are read from versioned files in ``figures/data`` (:mod:`._data`; each
group lists its data sets in ``DATASETS``).  Every image is written atomically (:func:`save`).
"""
from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

__all__ = ["available", "make_all", "make_group", "save", "data_sets", "recompute", "load_data"]

# Groups that share numba kernels run one after the other in the same process, so each kernel
# is compiled (or loaded from the cache) once: the SCM solver (scm, activations, phase
# diagrams), the Franz-Parisi kernels (franz_parisi, algorithms), the perceptron kernels.
# Bundles are submitted largest first (warm-cache CPU seconds, 2026-11: franz_parisi 127,
# committee 81, activations 16, phase_diagrams 7, scm 6, the others 1-3 each).
_BUNDLES = (("franz_parisi", "algorithms"),
            ("committee",),
            ("scm", "activations", "phase_diagrams"),
            ("perceptron", "perceptron_simulation", "rsb"))


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


def make_group(name, out_dir="figures"):
    """Regenerate one figure group into ``out_dir``; returns ``(paths, (wall, cpu))`` (seconds)."""
    import time

    import matplotlib
    matplotlib.use("Agg")
    t0, c0 = time.perf_counter(), time.process_time()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = importlib.import_module(f"{__name__}.{name}").make(out)
    return [str(p) for p in paths], (time.perf_counter() - t0, time.process_time() - c0)


def _make_bundle(names, out_dir):
    return {n: make_group(n, out_dir) for n in names}


def make_all(out_dir="figures", only=None, workers=None, timings=None):
    """Regenerate every figure group (or those in ``only``) into ``out_dir``.

    The groups run in parallel on a process pool of ``workers`` processes (default: the
    number of cores; ``workers=1`` runs them in this process), groups sharing numba kernels
    in the same process.  ``timings``, if a dict, receives ``(wall, cpu)`` seconds of each
    group.  Returns the list of written paths.
    """
    import concurrent.futures as cf
    import os
    names = available()
    if only:
        unknown = sorted(set(only) - set(names))
        if unknown:
            raise ValueError(f"only must name figure groups among {names}, got {unknown}")
        names = [n for n in names if n in only]
    bundles = [[n for n in b if n in names] for b in _BUNDLES]
    bundles = [b for b in bundles if b] + [[n] for n in names if not any(n in b for b in _BUNDLES)]
    workers = min(len(bundles), workers or os.cpu_count() or 1)
    done = {}
    if workers <= 1:
        for b in bundles:
            done.update(_make_bundle(b, out_dir))
    else:
        with cf.ProcessPoolExecutor(max_workers=workers) as ex:
            for f in [ex.submit(_make_bundle, b, out_dir) for b in bundles]:
                done.update(f.result())
    if timings is not None:
        timings.update({n: t for n, (_, t) in done.items()})
    return [Path(p) for n in available() if n in done for p in done[n][0]]


def data_sets(names=None):
    """The data sets (:class:`._data.DataSpec`) named in ``names`` -- data set or figure group
    names -- or all of them; a ValueError names any unknown name."""
    from ._data import specs
    every = specs()
    if not names:
        return list(every.values())
    known = set(every) | set(available())
    unknown = sorted(set(names) - known)
    if unknown:
        raise ValueError(f"recompute must name data sets {sorted(every)} or figure groups {available()}, "
                         f"got {unknown}")
    return [s for s in every.values() if s.name in names or s.group in names]


def recompute(names=None, *, directory=None, workers=None, scheduler=None, small=False, progress=True):
    """Recompute the data sets of ``names`` (data sets or groups; default all) into ``directory``
    (default ``figures/data``) with :func:`statmech.sweep.sweep`: on a process pool of ``workers``
    processes, or on the dask.distributed scheduler at address ``scheduler``.  ``small``: only the
    cheap calls of each data set (a reproducibility check).  Returns the paths written."""
    from ._data import recompute as one
    chosen = data_sets(names)
    client = None
    if scheduler:
        from dask.distributed import Client
        client = Client(scheduler)
    try:
        return [one(s, directory=directory, executor=client, workers=workers, small=small, progress=progress)
                for s in chosen]
    finally:
        if client is not None:
            client.close()


def load_data(name, directory=None):
    """The stored data set ``name`` (``figures/data/<name>.json``) as a :class:`._data.Data`:
    ``meta`` (seed, N, instances, version, command), the calls and their decoded results."""
    from ._data import load
    return load(name, directory)
