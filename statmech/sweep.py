"""Parameter sweeps on any ``concurrent.futures``-style executor, with checkpoints.

``sweep(fn, points, out=PATH, executor=None, ...)`` evaluates ``fn(point)`` for every
point of a grid and writes ``{"points": [...], "results": [...]}`` as JSON to ``out``.

* Executors: ``None`` (default) -> a ``ProcessPoolExecutor`` (``workers`` processes),
  ``"thread"`` -> ``ThreadPoolExecutor``, ``"serial"`` -> inline, or any object with
  ``submit(fn, *args) -> future`` whose futures have ``done()`` and ``result()``: a
  ``concurrent.futures.Executor`` or a ``dask.distributed.Client`` work unchanged.
  ``fn`` must be picklable (a module-level function) for process pools and dask.
* Progress: a tqdm bar (``progress=False`` to silence).
* Checkpoints: every ``checkpoint_every`` seconds (and at the end) the completed results
  are written to ``<out>.ckpt.json``; a sweep that is killed resumes from it when started
  again with the same ``fn`` and points (``resume=True``), and the final file is
  byte-identical to that of an uninterrupted run (results are stored by grid index, JSON
  with sorted keys, no timestamps).  The checkpoint is removed when the sweep completes.
* Atomic output: every file (checkpoint and result) is written to a temporary file in the
  same directory and renamed (:mod:`statmech.io`), so a reader, a kill at any moment, or
  two concurrent runs writing the same directory never leave a partial or corrupt file.

``grid(**axes)`` builds the Cartesian product of named axes as a list of dicts (C order);
``load(out)`` reads a finished sweep back.
Results must be JSON-serializable (floats, ints, strings, lists, dicts; numpy scalars
and arrays are converted; NaN/inf are stored as strings ``"nan"``, ``"inf"``, ``"-inf"``).
"""
from __future__ import annotations

import concurrent.futures as cf
import hashlib
import itertools
import json
import math
import os
import time
from pathlib import Path

import numpy as np

from .errors import check_range
from .io import atomic_write_text

__all__ = ["grid", "sweep", "load", "checkpoint_path"]


def grid(**axes):
    """Cartesian product of named 1-d axes: ``grid(K=[2, 3], alpha=[1, 2])`` ->
    ``[{"K": 2, "alpha": 1}, {"K": 2, "alpha": 2}, ...]`` (last axis fastest)."""
    if not axes:
        raise ValueError("grid needs at least one axis, e.g. grid(alpha=[1, 2, 3])")
    names = list(axes)
    vals = []
    for k in names:
        v = np.atleast_1d(np.asarray(axes[k]))
        if v.ndim != 1 or v.size == 0:
            raise ValueError(f"axis {k} must be a non-empty 1-d sequence, got {axes[k]!r}")
        vals.append([_plain(x) for x in v])
    return [dict(zip(names, combo)) for combo in itertools.product(*vals)]


def _plain(v):
    """JSON-friendly copy of v (numpy -> python, non-finite floats -> strings)."""
    if isinstance(v, dict):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if isinstance(v, np.ndarray):
        return _plain(v.tolist())
    if isinstance(v, (np.bool_, bool)):
        return bool(v)
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (np.floating, float)):
        v = float(v)
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return v
    if v is None or isinstance(v, (int, str)):
        return v
    if hasattr(v, "to_dict"):
        return _plain(v.to_dict())
    raise TypeError(f"sweep results must be JSON-serializable, got {type(v).__name__}")


def _dumps(obj):
    return json.dumps(obj, sort_keys=True, indent=1, allow_nan=False) + "\n"


def checkpoint_path(out):
    """The checkpoint file of a sweep writing ``out``."""
    out = Path(out)
    return out.with_name(out.name + ".ckpt.json")


def _fingerprint(fn, points):
    name = f"{getattr(fn, '__module__', '')}.{getattr(fn, '__qualname__', repr(fn))}"
    h = hashlib.sha256((name + "\n" + json.dumps(points, sort_keys=True)).encode()).hexdigest()
    return name, h


def _make_executor(executor, workers):
    if executor is None or executor == "process":
        return cf.ProcessPoolExecutor(max_workers=workers), True
    if executor == "thread":
        return cf.ThreadPoolExecutor(max_workers=workers), True
    if executor == "serial":
        return None, False
    if isinstance(executor, str):
        raise ValueError(f"executor must be None, 'process', 'thread', 'serial' or an executor/dask Client, got {executor!r}")
    if not hasattr(executor, "submit"):
        raise ValueError(f"executor must have a submit(fn, *args) method, got {type(executor).__name__}")
    return executor, False


def _read_checkpoint(path, fingerprint):
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return {}
    if data.get("fingerprint") != fingerprint:
        return {}
    return {int(k): v for k, v in data.get("done", {}).items()}


def sweep(fn, points, out, *, executor=None, workers=None, progress=True, checkpoint_every=1.0,
          resume=True, max_pending=None, desc=None):
    """Evaluate ``fn(point)`` for every point and write the results to ``out`` (see module doc).

    Parameters
    ----------
    fn : callable point -> JSON-serializable result (picklable for process pools / dask)
    points : sequence of points (dicts from :func:`grid`, numbers, lists ...)
    out : path of the JSON result file
    executor : None / "process" (default pool), "thread", "serial", an Executor or a dask Client
    workers : pool size for the built-in pools (default: min(2, cpu count))
    checkpoint_every : seconds between checkpoint writes (0: after every result)
    resume : reuse a matching checkpoint of an interrupted run, and return the results of a
        finished ``out`` written by the same ``fn`` for the same points without recomputing

    Returns the list of results in grid order.
    """
    points = [_plain(p) for p in points]
    if not points:
        raise ValueError("points must be non-empty")
    check_range("checkpoint_every", checkpoint_every, 0.0)
    out = Path(out)
    ckpt = checkpoint_path(out)
    name, fp = _fingerprint(fn, points)
    if resume and out.exists():
        try:
            finished = json.loads(out.read_text())
        except (OSError, ValueError):
            finished = {}
        if finished.get("fn") == name and finished.get("points") == json.loads(_dumps(points)):
            return finished["results"]
    done = _read_checkpoint(ckpt, fp) if resume else {}
    done = {k: v for k, v in done.items() if 0 <= k < len(points)}
    todo = [i for i in range(len(points)) if i not in done]
    workers = workers or max(1, min(2, os.cpu_count() or 1))
    max_pending = max_pending or 4 * workers

    def write_checkpoint():
        atomic_write_text(ckpt, _dumps({"fingerprint": fp, "fn": name, "n": len(points),
                                        "done": {str(k): v for k, v in sorted(done.items())}}))

    from tqdm.auto import tqdm
    bar = tqdm(total=len(points), initial=len(done), desc=desc or f"sweep {name}", disable=not progress,
               leave=False)
    last = time.monotonic()
    ex, owned = _make_executor(executor, workers) if todo else (None, False)
    try:
        if todo and ex is None:
            for i in todo:
                done[i] = _plain(fn(points[i]))
                bar.update(1)
                if time.monotonic() - last >= checkpoint_every:
                    write_checkpoint()
                    last = time.monotonic()
        elif todo:
            queue = list(todo)
            pending = {}
            while queue or pending:
                while queue and len(pending) < max_pending:
                    i = queue.pop(0)
                    pending[ex.submit(fn, points[i])] = i
                futs = list(pending)
                if all(isinstance(f, cf.Future) for f in futs):
                    finished, _ = cf.wait(futs, return_when=cf.FIRST_COMPLETED)
                else:  # dask futures and other future-likes: poll
                    finished = [f for f in futs if f.done()]
                    if not finished:
                        time.sleep(0.01)
                        continue
                for f in finished:
                    i = pending.pop(f)
                    done[i] = _plain(f.result())
                    bar.update(1)
                if time.monotonic() - last >= checkpoint_every:
                    write_checkpoint()
                    last = time.monotonic()
    except BaseException:
        if done:
            write_checkpoint()
        raise
    finally:
        bar.close()
        if owned and ex is not None:
            ex.shutdown(wait=True, cancel_futures=True)
    results = [done[i] for i in range(len(points))]
    atomic_write_text(out, _dumps({"fn": name, "points": points, "results": results}))
    try:
        ckpt.unlink()
    except OSError:
        pass
    return results


def load(out):
    """Read a finished sweep: returns ``(points, results)``."""
    data = json.loads(Path(out).read_text())
    return data["points"], data["results"]
