"""Atomic file output: every file statmech writes goes through these helpers.

A file is written to a temporary file in the destination directory, flushed,
fsync'ed and renamed over the destination (``os.replace`` is atomic on POSIX), so
a reader or a concurrent writer never sees a partial file.

:func:`cached_json` keeps expensive results (constants that take seconds to minutes, such as
randomized-QMC capacities) on disk next to the numba kernel cache, keyed by their arguments,
the package and numpy/scipy versions and the source of the code that computes them.
"""
from __future__ import annotations

import json
import os
import tempfile
from contextlib import contextmanager
from pathlib import Path

__all__ = ["atomic_write_text", "atomic_write_bytes", "atomic_write_json", "atomic_path", "cached_json",
           "environment"]


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextmanager
def atomic_path(path, suffix=""):
    """Context manager yielding a temporary path; renamed to ``path`` on success.

    Use it for writers that want a file name (``savefig``, ``np.savez``)::

        with atomic_path("figures/a.png", suffix=".png") as tmp:
            fig.savefig(tmp)
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix="." + path.name + ".", suffix=".tmp" + suffix, dir=path.parent)
    os.close(fd)
    os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; give the mode a plain open() would
    try:
        yield tmp
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def atomic_write_bytes(path, data: bytes):
    """Write ``data`` to ``path`` atomically."""
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as fh:
            fh.write(data)


def atomic_write_text(path, text: str):
    """Write ``text`` to ``path`` atomically."""
    atomic_write_bytes(path, text.encode())


def atomic_write_json(path, obj, **kw):
    """Write ``obj`` as JSON to ``path`` atomically."""
    atomic_write_text(path, json.dumps(obj, indent=kw.pop("indent", 1), sort_keys=kw.pop("sort_keys", True), **kw))


# --------------------------------------------------------------------------- on-disk cache of results
def _source_digest(modules):
    """sha256 of the source files of ``modules`` (dotted names; a package: every .py file in it)."""
    import hashlib
    import importlib.util
    h = hashlib.sha256()
    for name in sorted(set(modules)):
        spec = importlib.util.find_spec(name)
        if spec is None or spec.origin is None:
            raise ValueError(f"sources: no module named {name!r}")
        origin = Path(spec.origin)
        files = sorted(origin.parent.rglob("*.py")) if origin.name == "__init__.py" else [origin]
        for f in files:
            h.update(str(f.relative_to(origin.parent.parent) if origin.name == "__init__.py" else f.name).encode())
            h.update(f.read_bytes())
    return h.hexdigest()


def cached_json(namespace, key, compute, *, sources=()):
    """The JSON value ``compute()`` for ``key``, cached on disk next to the numba kernels.

    The file is ``<cache_dir>/results/<namespace>/<digest>.json`` (``cache_dir`` of
    :mod:`statmech.symbolic`: ``$STATMECH_CACHE_DIR`` or ``~/.cache/statmech``).  The digest covers
    ``key`` (a JSON-serialisable dict of the arguments), the package version, the numpy and scipy
    versions and the source text of ``sources`` (module or package names: any edit of the code
    that computes the value invalidates it).  The stored key is compared on load (no collision
    can return a wrong value), and the file is written atomically, so concurrent processes
    never read a partial entry.  An unreadable entry is recomputed.  Set
    ``STATMECH_RESULT_CACHE=off`` to bypass the cache (always compute, never write).
    """
    import hashlib

    import numpy
    import scipy

    from . import __version__
    from .symbolic import cache_dir

    full = {"key": key, "version": __version__, "numpy": numpy.__version__, "scipy": scipy.__version__,
            "sources": _source_digest(sources)}
    text = json.dumps(full, sort_keys=True)
    if os.environ.get("STATMECH_RESULT_CACHE", "").lower() in ("off", "0", "no"):
        return compute()
    path = cache_dir() / "results" / namespace / (hashlib.sha256(text.encode()).hexdigest()[:32] + ".json")
    try:
        stored = json.loads(path.read_text())
        if json.dumps(stored["id"], sort_keys=True) == text:
            return stored["value"]
    except (OSError, ValueError, KeyError, TypeError):
        pass
    value = compute()
    try:
        atomic_write_json(path, {"id": full, "value": value})
    except (OSError, TypeError, ValueError):
        pass       # an unwritable cache (read-only home) or a value JSON cannot hold: compute every time
    return value


def environment():
    """What made a result: the versions of statmech, Python and the numerical stack, and the CPU.

    Recorded in every ``figures/data`` file (``meta.environment``) and in the benchmark table, so
    that a number can be traced to the machine and the library versions that produced it.
    """
    import importlib.metadata as md
    import os
    import platform

    from . import __version__
    versions = {"statmech": __version__, "python": platform.python_version()}
    for pkg in ("numpy", "scipy", "numba", "llvmlite", "sympy", "mpmath"):
        try:
            versions[pkg] = md.version(pkg)
        except md.PackageNotFoundError:
            versions[pkg] = None
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {"versions": versions, "cpu": cpu, "machine": platform.machine(), "cores": os.cpu_count(),
            "system": platform.system()}
