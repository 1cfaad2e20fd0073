"""Sweeps: executors (serial, threads, processes, dask), checkpoint/resume after a kill,
atomic output under concurrent writers."""
import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from statmech.sweep import checkpoint_path, grid, load, sweep

WORKER = textwrap.dedent('''
    import math, time

    def heavy(point):
        """A deterministic function of the point (a few digits of physics-like output)."""
        a, k = point["alpha"], point["K"]
        return {"value": math.sin(a) * k + math.log1p(a * k), "inf": float("inf") if a > 10 else a}

    def slow(point):
        time.sleep(0.05)
        return heavy(point)
''')

RUNNER = textwrap.dedent('''
    import sys
    sys.path.insert(0, sys.argv[1])
    import sweep_worker
    from statmech.sweep import sweep, grid
    pts = grid(K=[1, 2, 3, 4], alpha=[0.5 * i for i in range(10)])
    sweep(getattr(sweep_worker, sys.argv[3]), pts, sys.argv[2], executor=sys.argv[4],
          workers=2, checkpoint_every=0.0, progress=False)
''')


@pytest.fixture
def worker(tmp_path, monkeypatch):
    d = tmp_path / "mod"
    d.mkdir()
    (d / "sweep_worker.py").write_text(WORKER)
    (d / "runner.py").write_text(RUNNER)
    monkeypatch.syspath_prepend(str(d))
    import importlib
    import sweep_worker
    importlib.reload(sweep_worker)
    return d, sweep_worker


def points():
    return grid(K=[1, 2, 3, 4], alpha=[0.5 * i for i in range(10)])


def test_grid_order_and_validation():
    g = grid(K=[2, 3], alpha=[1.0, 2.0, 3.0])
    assert g[0] == {"K": 2, "alpha": 1.0} and g[1] == {"K": 2, "alpha": 2.0} and g[3] == {"K": 3, "alpha": 1.0}
    assert len(g) == 6 and all(isinstance(v, (int, float)) for p in g for v in p.values())
    with pytest.raises(ValueError, match="axis"):
        grid(K=[])
    with pytest.raises(ValueError, match="grid"):
        grid()


@pytest.mark.parametrize("executor", ["serial", "thread", "process"])
def test_executors_agree_with_direct_evaluation(worker, tmp_path, executor):
    _, mod = worker
    out = tmp_path / f"{executor}.json"
    res = sweep(mod.heavy, points(), out, executor=executor, workers=2, progress=False)
    expect = [mod.heavy(p) for p in points()]
    assert [r["value"] for r in res] == [e["value"] for e in expect]
    pts, stored = load(out)
    assert pts == points() and stored == res
    assert stored[-1]["inf"] == "inf" or stored[-1]["inf"] == points()[-1]["alpha"]
    assert not checkpoint_path(out).exists()


def test_dask_client_works_unchanged(worker, tmp_path):
    distributed = pytest.importorskip("distributed")
    _, mod = worker
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        res = sweep(mod.heavy, points(), tmp_path / "dask.json", executor=client, progress=False)
    ref = sweep(mod.heavy, points(), tmp_path / "serial.json", executor="serial", progress=False)
    assert res == ref
    assert json.loads((tmp_path / "dask.json").read_text())["results"] == \
        json.loads((tmp_path / "serial.json").read_text())["results"]


def _run(d, out, fn, executor, **kw):
    return subprocess.Popen([sys.executable, str(d / "runner.py"), str(d), str(out), fn, executor],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True, **kw)


def test_kill_and_resume_gives_identical_file(worker, tmp_path):
    d, mod = worker
    ref = tmp_path / "ref.json"
    sweep(mod.heavy, points(), ref, executor="serial", progress=False)
    out = tmp_path / "killed.json"
    ck = checkpoint_path(out)
    proc = _run(d, out, "slow", "process")
    n_done = 0
    try:
        t0 = time.time()
        while time.time() - t0 < 60:
            if ck.exists():
                try:
                    n_done = len(json.loads(ck.read_text())["done"])
                except ValueError:  # pragma: no cover - atomic writes make this impossible
                    pytest.fail("checkpoint file was read while partially written")
                if n_done >= 8:
                    break
            time.sleep(0.02)
        os.killpg(proc.pid, signal.SIGKILL)  # the runner and its pool workers, mid-sweep
    finally:
        proc.wait(timeout=30)
    assert 8 <= n_done < len(points()), "the sweep must have been killed halfway"
    assert not out.exists() and ck.exists()
    n_ckpt = len(json.loads(ck.read_text())["done"])
    assert n_done <= n_ckpt < len(points())
    # resume: a new run picks up the checkpoint and computes only the rest
    calls = []

    def counting(p):
        calls.append(p)
        return mod.heavy(p)
    counting.__module__, counting.__qualname__ = mod.slow.__module__, mod.slow.__qualname__  # same fingerprint
    sweep(counting, points(), out, executor="serial", progress=False)
    assert len(calls) == len(points()) - n_ckpt  # only the missing points are computed
    # identical to the uninterrupted run (same fn name in the header)
    sweep(mod.slow, points(), tmp_path / "uninterrupted.json", executor="thread", workers=4, progress=False)
    assert out.read_bytes() == (tmp_path / "uninterrupted.json").read_bytes()
    assert not ck.exists()


def test_concurrent_writers_leave_no_corrupt_file(worker, tmp_path):
    d, mod = worker
    out = tmp_path / "shared.json"
    procs = [_run(d, out, "heavy", "thread") for _ in range(2)]
    # read the directory while they run: every visible file is complete JSON
    t0 = time.time()
    while any(p.poll() is None for p in procs) and time.time() - t0 < 60:
        for f in tmp_path.glob("*.json"):
            try:
                json.loads(f.read_text())
            except FileNotFoundError:
                pass
        time.sleep(0.005)
    for p in procs:
        p.wait(timeout=60)
        assert p.returncode == 0, p.stderr.read().decode()
    ref = tmp_path / "ref.json"
    sweep(mod.heavy, points(), ref, executor="serial", progress=False)
    assert json.loads(out.read_text())["results"] == json.loads(ref.read_text())["results"]
    leftovers = [f.name for f in tmp_path.iterdir() if f.name.endswith(".tmp")]
    assert leftovers == []


def test_bad_arguments(worker, tmp_path):
    _, mod = worker
    with pytest.raises(ValueError, match="executor"):
        sweep(mod.heavy, points(), tmp_path / "x.json", executor="gpu")
    with pytest.raises(ValueError, match="points"):
        sweep(mod.heavy, [], tmp_path / "x.json")
    with pytest.raises(ValueError, match="checkpoint_every"):
        sweep(mod.heavy, points(), tmp_path / "x.json", checkpoint_every=-1)
    with pytest.raises(TypeError, match="JSON"):
        sweep(lambda p: object(), [1], tmp_path / "x.json", executor="serial", progress=False)


def test_a_finished_sweep_is_not_recomputed(tmp_path):
    calls = []

    def f(p):
        calls.append(p)
        return p * p

    out = tmp_path / "sq.json"
    assert sweep(f, [1, 2, 3], out, executor="serial", progress=False) == [1, 4, 9]
    assert sweep(f, [1, 2, 3], out, executor="serial", progress=False) == [1, 4, 9]
    assert calls == [1, 2, 3]                      # the second call read the finished file
    assert sweep(f, [1, 2, 4], out, executor="serial", progress=False) == [1, 4, 16]   # other points
    assert sweep(f, [1, 2, 4], out, executor="serial", progress=False, resume=False) == [1, 4, 16]
    assert calls == [1, 2, 3, 1, 2, 4, 1, 2, 4]
