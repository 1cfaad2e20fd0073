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

__all__ = ["atomic_write_text", "atomic_write_bytes", "atomic_write_json", "atomic_path"]


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
