"""Versioned simulation data behind the figures (``figures/data/<name>.json``).

Theory curves are computed live when a figure is drawn; expensive simulation data (LP,
enumeration, MILP, algorithm runs, RQMC points, gradient-descent runs) are read from data
files written by :func:`recompute`.  A data set is a list of *calls* of public library
functions (``"module:function"`` with keyword arguments); each call is one point of a
:func:`statmech.sweep.sweep` (progress bar, any executor or dask client, checkpoint and
resume, atomic output).  The file holds::

    {"meta": {"name", "group", "description", "version", "command", "seed", "N",
              "n_instances", "format"},
     "fn": "statmech.figures._data.run_call", "points": [calls], "results": [encoded results]}

Results are encoded generically (:func:`encode`): frozen dataclasses by their class path and
fields, numpy arrays by dtype and nested lists, so :func:`load` gives back the objects the
library returned.  ``statmech figures --recompute NAME`` (the ``command`` recorded in every
file) regenerates a data set; ``--small`` recomputes only its cheapest calls, which must agree
with the stored results (tests/test_figures_data.py).
"""
from __future__ import annotations

import dataclasses
import importlib
import json
import os
from pathlib import Path

import numpy as np

__all__ = ["DataSpec", "Data", "call", "specs", "data_dir", "recompute", "write", "load", "compare", "encode", "decode", "run_call",
           "FORMAT"]

FORMAT = 1
_ROOT = Path(__file__).resolve().parents[2]


def data_dir(path=None):
    """The data directory: ``path``, else ``$STATMECH_FIGURES_DATA``, else ``figures/data`` of the source tree."""
    return Path(path or os.environ.get("STATMECH_FIGURES_DATA") or _ROOT / "figures" / "data")


def call(fn, **kwargs):
    """One point of a data set: the library function ``fn`` ("module:name") with ``kwargs``."""
    return {"call": fn, "kwargs": kwargs}


@dataclasses.dataclass(frozen=True)
class DataSpec:
    """A data set: ``calls`` (from :func:`call`), the figure ``group`` that reads it, and the
    indices of its cheap ``small`` calls (or explicit ``small_calls``), recomputed by the tests and
    compared with the stored results by :func:`compare`, or by ``check`` ("module:name", called
    with the stored and the recomputed :class:`Data`, raising AssertionError on a mismatch)."""
    name: str
    group: str
    description: str
    calls: tuple
    small: tuple = (0,)
    small_calls: tuple = ()
    check: str = ""
    volatile: tuple = ("seconds", "wall_time", "solve_time", "seconds_extra_sets")  # timings: not compared

    def small_points(self):
        return list(self.small_calls) if self.small_calls else [self.calls[i] for i in self.small]

    def command(self):
        return f"statmech figures --recompute {self.name}"


def specs():
    """All data sets, by name (collected from the ``DATASETS`` of every figure group)."""
    from . import available
    out = {}
    for g in available():
        for s in getattr(importlib.import_module(f"{__package__}.{g}"), "DATASETS", ()):
            if s.name in out:
                raise ValueError(f"data set {s.name!r} defined twice")
            out[s.name] = s
    return out


def _resolve(path):
    mod, _, name = path.partition(":")
    obj = importlib.import_module(mod)
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj


# ---------------------------------------------------------------- generic JSON encoding
def encode(obj):
    """JSON-ready form of a library result (dataclasses, numpy arrays, dicts, lists, scalars)."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        cls = type(obj)
        return {"__dataclass__": f"{cls.__module__}:{cls.__qualname__}",
                **{f.name: encode(getattr(obj, f.name)) for f in dataclasses.fields(obj) if f.init}}
    if isinstance(obj, np.ma.MaskedArray):
        return {"__masked__": encode(np.asarray(obj.filled(0))), "mask": encode(np.ma.getmaskarray(obj))}
    if isinstance(obj, np.ndarray):
        return {"__ndarray__": _finite(obj.tolist()), "dtype": obj.dtype.str, "shape": list(obj.shape)}
    if isinstance(obj, dict):
        if not all(isinstance(k, str) for k in obj):
            return {"__items__": [[encode(k), encode(v)] for k, v in obj.items()]}
        return {k: encode(v) for k, v in obj.items()}
    if isinstance(obj, tuple):
        return {"__tuple__": [encode(v) for v in obj]}
    if isinstance(obj, list):
        return [encode(v) for v in obj]
    if isinstance(obj, (np.bool_, bool)):
        return bool(obj)
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, (np.floating, float)):
        return _finite(float(obj))
    if obj is None or isinstance(obj, (int, str)):
        return obj
    raise TypeError(f"cannot store a {type(obj).__name__} in a figure data file")


def _finite(v):
    if isinstance(v, list):
        return [_finite(x) for x in v]
    if isinstance(v, float) and not np.isfinite(v):
        return "nan" if np.isnan(v) else ("inf" if v > 0 else "-inf")
    return v


def _unfinite(v):
    if isinstance(v, list):
        return [_unfinite(x) for x in v]
    return float(v) if isinstance(v, str) and v in ("nan", "inf", "-inf") else v


def decode(obj):
    """Inverse of :func:`encode`."""
    if isinstance(obj, list):
        return [decode(v) for v in obj]
    if not isinstance(obj, dict):
        return obj
    if "__ndarray__" in obj:
        return np.array(_unfinite(obj["__ndarray__"]), dtype=np.dtype(obj["dtype"])).reshape(obj["shape"])
    if "__masked__" in obj:
        return np.ma.MaskedArray(decode(obj["__masked__"]), mask=decode(obj["mask"]))
    if "__tuple__" in obj:
        return tuple(decode(v) for v in obj["__tuple__"])
    if "__items__" in obj:
        return {_hashable(decode(k)): decode(v) for k, v in obj["__items__"]}
    if "__dataclass__" in obj:
        cls = _resolve(obj["__dataclass__"])
        return cls(**{k: decode(v) for k, v in obj.items() if k != "__dataclass__"})
    return {k: decode(v) for k, v in obj.items()}


def _hashable(k):
    return tuple(_hashable(x) for x in k) if isinstance(k, (list, tuple)) else k


def run_call(point):
    """Sweep function: evaluate one call of a data set and encode its result."""
    return encode(_resolve(point["call"])(**point["kwargs"]))


# ---------------------------------------------------------------- writing and reading
def _meta(spec, points):
    from .. import __version__

    def values(*keys):
        vals = {json.dumps(p["kwargs"][k]) for p in points for k in keys if k in p["kwargs"]}
        return [json.loads(v) for v in sorted(vals)]
    from ..io import environment
    return {"name": spec.name, "group": spec.group, "description": spec.description, "version": __version__,
            "command": spec.command(), "seed": values("seed"), "N": values("N"), "K": values("K"),
            "n_instances": values("n_instances", "runs", "n", "reps"), "format": FORMAT,
            "environment": environment()}


def recompute(spec, *, directory=None, executor=None, workers=None, small=False, progress=True):
    """Recompute the data set ``spec`` (a :class:`DataSpec` or its name) into ``directory``.

    ``small``: only the calls ``spec.small`` (quick check that the recorded command still
    reproduces the stored results).  ``executor`` / ``workers`` as in :func:`statmech.sweep.sweep`
    (a dask ``Client`` works).  An interrupted run resumes from the sweep checkpoint.
    Returns the path of the data file.
    """
    import os
    import time

    from ..sweep import sweep
    spec = specs()[spec] if isinstance(spec, str) else spec
    points = spec.small_points() if small else list(spec.calls)
    directory = data_dir(directory)
    work = directory / f".{spec.name}.sweep.json"
    resumed = work.exists()
    t0 = time.perf_counter()
    results = sweep(run_call, points, work, executor=executor, workers=workers, progress=progress,
                    desc=spec.name)
    cost = {"wall_seconds": round(time.perf_counter() - t0, 1), "resumed": resumed,
            "workers": "dask" if executor is not None else (workers or os.cpu_count() or 1)}
    path = write(spec, points, results, directory, small=small, cost=cost)
    work.unlink(missing_ok=True)
    return path


def write(spec, points, results, directory=None, *, small=False, note=None, cost=None):
    """Write the data file of ``spec`` (atomically) from its calls and encoded results.
    ``cost``: how long the computation took (``recompute`` records wall seconds, the
    workers, and whether it resumed from a checkpoint -- then the seconds are those of
    the last run only)."""
    from ..io import atomic_write_text
    meta = _meta(spec, points)
    if small:
        meta["small"] = True
    if note:
        meta["note"] = note
    if cost:
        meta["cost"] = cost
    path = data_dir(directory) / f"{spec.name}.json"
    atomic_write_text(path, json.dumps({"meta": meta, "fn": f"{__name__}.run_call", "points": points,
                                        "results": [encode(r) for r in results]}, sort_keys=True, indent=1,
                                       allow_nan=False) + "\n")
    return path


@dataclasses.dataclass(frozen=True)
class Data:
    """A loaded data set: ``meta``, the calls (``points``) and the decoded ``results``."""
    meta: dict
    points: list
    results: list

    def pick(self, **match):
        """The result of the one call whose keyword arguments include ``match``."""
        hits = [r for p, r in zip(self.points, self.results)
                if all(p["kwargs"].get(k, _MISSING) == v for k, v in match.items())]
        if len(hits) != 1:
            raise KeyError(f"{len(hits)} calls of data set {self.meta.get('name')!r} match {match}")
        return hits[0]


_MISSING = object()


def _same(a, b, volatile, rtol, path="result"):
    if isinstance(a, dict) and isinstance(b, dict):
        keys = (set(a) | set(b)) - set(volatile)
        for k in sorted(keys, key=str):
            if k not in a or k not in b:
                raise AssertionError(f"{path}: key {k!r} only on one side")
            _same(a[k], b[k], volatile, rtol, f"{path}[{k!r}]")
    elif dataclasses.is_dataclass(a) and not isinstance(a, type):
        _same(type(a).__name__, type(b).__name__, volatile, rtol, path)
        _same({f.name: getattr(a, f.name) for f in dataclasses.fields(a)},
              {f.name: getattr(b, f.name) for f in dataclasses.fields(b)}, volatile, rtol, path)
    elif isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        if len(a) != len(b):
            raise AssertionError(f"{path}: lengths {len(a)} != {len(b)}")
        for i, (x, y) in enumerate(zip(a, b)):
            _same(x, y, volatile, rtol, f"{path}[{i}]")
    elif isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        x, y = np.asarray(a), np.asarray(b)
        if x.shape != y.shape:
            raise AssertionError(f"{path}: shapes {x.shape} != {y.shape}")
        if x.dtype.kind in "fc" or y.dtype.kind in "fc":
            if not np.allclose(x, y, rtol=rtol, atol=0.0, equal_nan=True):
                raise AssertionError(f"{path}: arrays differ (max |diff| {np.nanmax(np.abs(x - y))})")
        elif not np.array_equal(x, y):
            raise AssertionError(f"{path}: arrays differ")
    elif isinstance(a, float) or isinstance(b, float):
        if not (a == b or (np.isnan(a) and np.isnan(b)) or abs(a - b) <= rtol * max(abs(a), abs(b))):
            raise AssertionError(f"{path}: {a!r} != {b!r}")
    elif a != b:
        raise AssertionError(f"{path}: {a!r} != {b!r}")


def compare(spec, stored, new, rtol=1e-9):
    """Check that the recomputed data set ``new`` reproduces ``stored`` (both :class:`Data`):
    ``spec.check`` if set, else equal results (to ``rtol``; timings in ``spec.volatile``
    ignored) for every recomputed call.  Raises AssertionError naming the first difference."""
    if spec.check:
        return _resolve(spec.check)(stored, new)
    for p, r in zip(new.points, new.results):
        hits = [s for q, s in zip(stored.points, stored.results) if q == p]
        if len(hits) != 1:
            raise AssertionError(f"{spec.name}: call {p} is not in the stored data set")
        _same(r, hits[0], spec.volatile, rtol, f"{spec.name} {p['kwargs']}")


def load(name, directory=None):
    """Read the data set ``name``; a missing file raises FileNotFoundError naming the command
    that writes it."""
    path = data_dir(directory) / f"{name}.json"
    try:
        raw = json.loads(path.read_text())
    except FileNotFoundError:
        raise FileNotFoundError(f"{path} is missing; write it with `statmech figures --recompute {name}`") \
            from None
    return Data(raw["meta"], raw["points"], [decode(r) for r in raw["results"]])
