"""Run small dense linear algebra on one BLAS thread.

OpenBLAS splits every GEMM / LAPACK call over its threads, whose workers busy-wait for
each other.  On a machine with fewer free cores than threads (a shared 2-core box, or
several processes each with its own BLAS pool) a small call then waits for a descheduled
thread: measured on the project's 2-core machine under load, a 101x152x101 GEMM takes
22-32 ms on 2 threads against 0.08 ms on one, ``eigvalsh`` of a 303x303 matrix 2.3 s
against 11 ms, and even a 1000x500x1000 GEMM is not faster on 2 threads.  The dense
kernels of the simulations (exact Hessians, their spectra, training steps) are small,
so they pin BLAS to one thread with :func:`single_thread_blas`; calls above
``SMALL_WORK`` flops keep the user's BLAS threading.

Uses ``threadpoolctl`` (a run-time dependency; the controller is built once: 10 us per
call instead of several ms for ``threadpool_limits``); does nothing if it is missing.
"""
from __future__ import annotations

import contextlib
import functools

__all__ = ["SMALL_WORK", "single_thread_blas"]

#: estimated flops of a call below which BLAS runs on one thread
SMALL_WORK = 1e9


@functools.lru_cache(maxsize=1)
def _controller():
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:  # pragma: no cover - depends on the environment
        return None
    return ThreadpoolController()


def single_thread_blas(work=0.0):
    """Context manager: BLAS on one thread if ``work`` (estimated flops) <= SMALL_WORK."""
    if work > SMALL_WORK:
        return contextlib.nullcontext()
    ctl = _controller()
    if ctl is None:  # pragma: no cover - depends on the environment
        return contextlib.nullcontext()
    return ctl.limit(limits=1, user_api="blas")
