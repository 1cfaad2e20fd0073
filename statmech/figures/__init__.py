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

__all__ = ["available", "make_all", "make_group", "save", "legend_outside", "data_sets", "recompute", "load_data"]

# Bundles: groups (or parts "group:part" of a group that lists its PARTS) that share numba
# kernels run one after the other in the same process, so each kernel is compiled (or loaded
# from the cache) once: the SCM solver (scm, phase diagrams, the ESP phase diagram of
# activations), the perceptron kernels (with their simulation figures and rsb), the
# Franz-Parisi kernels (franz_parisi, algorithms).  The bundles are submitted to the process
# pool largest first, with their CPU seconds on a cold cache (fresh clone, 2026-11-24) as the
# size (the small plotting-only parts last, to even out the two processes' ends); a group
# missing here runs as a bundle of its own.
_BUNDLES = ((32.0, ("scm", "phase_diagrams", "activations:_functions", "activations:_phase_diagram",
                    "activations:_digits")),
            (22.0, ("perceptron", "perceptron_simulation", "rsb")),
            (20.0, ("franz_parisi", "algorithms")),
            (16.0, ("committee",)),
            (25.0, ("online",)),
            (3.9, ("activations:_hessian",)),
            (1.6, ("activations:_hessian_spectra",)))


def available():
    """Names of the figure groups."""
    return sorted(m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_"))


def save(fig, path):
    """Save a matplotlib figure atomically and close it; returns the Path.

    The figure's layout is checked first (:func:`._layout.problems`: no text over another text or
    a curve, nothing clipped); problems are recorded in ``_layout.PROBLEMS`` under the path."""
    import matplotlib.pyplot as plt
    from ..io import atomic_path
    from . import _layout
    path = Path(path)
    found = _layout.problems(fig)
    if found:
        _layout.PROBLEMS[str(path)] = found
    else:
        _layout.PROBLEMS.pop(str(path), None)
    with atomic_path(path, suffix=path.suffix) as tmp:
        fig.savefig(tmp, dpi=130, bbox_inches="tight", format=path.suffix.lstrip(".") or "png")
    plt.close(fig)
    return path


def legend_outside(ax, where="right", **kwargs):
    """A legend beside (``"right"``) or under (``"below"``) the axes, where it covers no data.

    Use it in a figure made with ``layout="constrained"``, which keeps the legend clear of the
    neighbouring panels and labels (the layout check of :func:`save` verifies that)."""
    kwargs.setdefault("fontsize", 7)
    if where == "right":
        return ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0, **kwargs)
    if where == "below":
        kwargs.setdefault("ncols", 2)
        return ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), borderaxespad=0.0, **kwargs)
    raise ValueError(f"where must be 'right' or 'below', got {where!r}")


def _parts(name):
    """The parts of group ``name``: its ``PARTS`` (functions ``fn(out) -> list[Path]``), or
    ``("make",)``."""
    return getattr(importlib.import_module(f"{__name__}.{name}"), "PARTS", ("make",))


def make_group(name, out_dir="figures", parts=None):
    """Regenerate one figure group (or only its ``parts``, names in the module's ``PARTS``)
    into ``out_dir``; returns ``(paths, (wall, cpu))`` (seconds)."""
    import time

    import matplotlib
    matplotlib.use("Agg")
    t0, c0 = time.perf_counter(), time.process_time()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    module = importlib.import_module(f"{__name__}.{name}")
    known = _parts(name)
    parts = known if parts is None else tuple(parts)
    unknown = sorted(set(parts) - set(known))
    if unknown:
        raise ValueError(f"parts of figure group {name!r} must be among {list(known)}, got {unknown}")
    paths = [p for part in parts for p in getattr(module, part)(out)]
    return [str(p) for p in paths], (time.perf_counter() - t0, time.process_time() - c0)


def _make_bundle(entries, out_dir):
    """Run the entries ("group" or "group:part") of one bundle in order; returns
    ``[(group, paths, (wall, cpu)), ...]``."""
    done = []
    for e in entries:
        name, _, part = e.partition(":")
        paths, t = make_group(name, out_dir, parts=(part,) if part else None)
        done.append((name, paths, t))
    return done


def _bundles(names):
    """The bundles of entries for the groups ``names``, largest first."""
    taken = set()
    out = []
    for _, entries in sorted(_BUNDLES, key=lambda b: -b[0]):
        keep = tuple(e for e in entries if e.partition(":")[0] in names)
        taken |= {e.partition(":")[0] for e in keep}
        if keep:
            out.append(keep)
    # a group named in no bundle, or with parts no bundle lists, runs (the rest of it) alone
    for n in names:
        listed = {e.partition(":")[2] for _, b in _BUNDLES for e in b if e.partition(":")[0] == n}
        if n not in taken:
            out.append((n,))
        elif "" not in listed:
            rest = tuple(f"{n}:{p}" for p in _parts(n) if p not in listed)
            if rest:
                out.append(rest)
    return out


def make_all(out_dir="figures", only=None, workers=None, timings=None):
    """Regenerate every figure group (or those in ``only``) into ``out_dir``.

    The groups run in parallel on a process pool of ``workers`` processes (default: the
    number of cores; ``workers=1`` runs them in this process), groups sharing numba kernels
    in the same process (``_BUNDLES``).  ``timings``, if a dict, receives ``(wall, cpu)``
    seconds of each group (summed over its parts).  Returns the list of written paths.
    """
    import concurrent.futures as cf
    import os
    names = available()
    if only:
        unknown = sorted(set(only) - set(names))
        if unknown:
            raise ValueError(f"only must name figure groups among {names}, got {unknown}")
        names = [n for n in names if n in only]
    bundles = _bundles(names)
    workers = min(len(bundles), workers or os.cpu_count() or 1)
    done = []
    if workers <= 1:
        for b in bundles:
            done += _make_bundle(b, out_dir)
    else:
        with cf.ProcessPoolExecutor(max_workers=workers) as ex:
            for f in [ex.submit(_make_bundle, b, out_dir) for b in bundles]:
                done += f.result()
    paths, spent = {}, {}
    for name, ps, (wall, cpu) in done:
        paths.setdefault(name, []).extend(ps)
        w0, c0 = spent.get(name, (0.0, 0.0))
        spent[name] = (w0 + wall, c0 + cpu)
    if timings is not None:
        timings.update(spent)
    return [Path(p) for n in available() if n in paths for p in sorted(paths[n])]


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
