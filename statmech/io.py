"""Atomic file output: every file statmech writes goes through these helpers.

A file is written to a temporary file in the destination directory, flushed,
fsync'ed and renamed over the destination (``os.replace`` is atomic on POSIX), so
a reader or a concurrent writer never sees a partial file.
"""
from __future__ import annotations

import json
import os
import tempfile
from contextlib import contextmanager
from pathlib import Path

__all__ = ["atomic_write_text", "atomic_write_bytes", "atomic_write_json", "atomic_path", "environment"]


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
