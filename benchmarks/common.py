"""Timing helper shared by the benchmark files."""
import time


def best_time(fn, repeat=5, number=None, min_time=0.2):
    """Best wall time per call of ``fn()`` (after one warm-up call)."""
    fn()
    if number is None:
        number = 1
        while True:
            t0 = time.perf_counter()
            for _ in range(number):
                fn()
            dt = time.perf_counter() - t0
            if dt >= min_time or number >= 1 << 20:
                break
            number *= 4
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - t0) / number)
    return best
