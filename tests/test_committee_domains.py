"""The tree committee at the door and in the cache (issue: trust beyond the tested points).

* every public committee function states its K (and alpha) domain and rejects what lies outside
  at once with a ValueError naming the argument and the limit (TypeError for non-numbers);
* a Hessian promised symmetric is symmetric by construction (one triangle, mirrored);
* expensive constants (RQMC capacities, the multiset 1RSB search, the AT line) are cached on
  disk, keyed by their arguments and the source, and a second process reads them back.
"""
import json
import math
import os
import subprocess
import sys
import time

import numpy as np
import pytest

from statmech import committee as c
from statmech.committee import _common
from statmech.io import cached_json

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# --------------------------------------------------------------------------- domains
BAD = [
    (lambda: c.tcm_capacity(10 ** 7 + 1, "sign", "1rsb"), ValueError, r"^tcm_capacity: K must be <= 201"),
    (lambda: c.tcm_storage(1.0, 10 ** 7 + 1), ValueError, r"^tcm_storage: K must be <= 201"),
    (lambda: c.tcm_capacity(10 ** 11 + 1, "sign", "rs"), ValueError, r"K must be <= 10000000000"),
    (lambda: c.tcm_capacity(102, "relu", "rs"), ValueError, r"K must be <= 100"),
    (lambda: c.tcm_capacity(14, "relu", "1rsb"), ValueError, r"K must be 2, 4, 6, 8, 10, 12 or math.inf"),
    (lambda: c.tcm_at_line(203), ValueError, r"K must be <= 201"),
    (lambda: c.advanced.tcm_capacity_1rsb_rqmc(203), ValueError, r"K must be <= 201"),
    (lambda: c.advanced.tcm_capacity_1rsb_point(10 ** 7 + 1), ValueError, r"sign_capacity_large_K"),
    (lambda: c.advanced.relu_1rsb_alpha_rqmc(0.7, 10.0, 18), ValueError, r"K must be <= 16"),
    (lambda: c.tcm_capacity(-math.inf), ValueError, r"K must be a positive integer or math.inf"),
    (lambda: c.tcm_capacity(float("nan")), ValueError, r"K must be"),
    (lambda: c.tcm_capacity(3.5), ValueError, r"K must be an odd integer"),
    (lambda: c.tcm_capacity(4), ValueError, r"odd integer"),
    (lambda: c.tcm_capacity(3, "relu"), ValueError, r"even integer"),
    (lambda: c.tcm_storage(4.5, 3), ValueError, r"alpha must be < alpha_c\^RS\(K=3\)"),
    (lambda: c.tcm_storage([0.5, 4.5], 3), ValueError, r"alpha must be < alpha_c\^RS"),
    (lambda: c.tcm_storage(1.4, 2, "relu"), ValueError, r"alpha must be < alpha_c\^RS\(K=2, relu\) = 4/3"),
    (lambda: c.tcm_storage(float("nan"), 3), ValueError, r"alpha"),
    (lambda: c.advanced.sign_flip_cost([1.0, 2.0]), ValueError, r"odd length"),
    (lambda: c.advanced.sign_flip_cost([np.nan, 1.0, 2.0]), ValueError, r"finite"),
    (lambda: c.advanced.sign_flip_cost([[1.0, 2.0, 3.0]]), ValueError, r"1-d"),
    (lambda: c.advanced.relu_flip_cost([np.inf, 1.0]), ValueError, r"finite"),
    (lambda: c.tcm_capacity("3"), TypeError, r"K must be a real number"),
    (lambda: c.tcm_capacity(None), TypeError, r"K must be a real number"),
    (lambda: c.tcm_capacity(True), TypeError, r"K must be a real number"),
    (lambda: c.tcm_storage("1", 3), TypeError, r"alpha must be a real number"),
    (lambda: c.tcm_storage(None, 3), TypeError, r"alpha"),
    (lambda: c.advanced.monasson_zecchina("3"), TypeError, r"K must be a real number"),
    (lambda: c.advanced.relu_kernel_Q("a"), TypeError, r"q must be a real number"),
    (lambda: c.advanced.relu_flip_cost(None), TypeError, r"t must be"),
    (lambda: c.advanced.tcm_1rsb_large_K("x"), TypeError, r"K must be a real number"),
]


@pytest.mark.parametrize("call,exc,match", BAD)
def test_outside_the_domain_fails_fast_and_names_the_argument(call, exc, match):
    t = time.perf_counter()
    with pytest.raises(exc, match=match):
        call()
    assert time.perf_counter() - t < 2.0      # at the door: no computation before the check


def test_inside_the_domain_still_answers():
    assert c.tcm_capacity(10 ** 7 + 1, "sign", "rs") == pytest.approx(4.787307 * math.sqrt(10 ** 7 + 1), rel=1e-3)
    assert c.tcm_capacity(5.0) == pytest.approx(5.768750901258, rel=1e-12)      # an integral float is an integer
    assert c.tcm_capacity(math.inf, "sign", "1rsb") == math.inf
    assert c.advanced.sign_flip_cost([-0.5, -1.0, 2.0]) == pytest.approx(0.25, abs=0)


# --------------------------------------------------------------------------- Hessians symmetric by construction
def test_stationary_2d_hessian_is_exactly_symmetric():
    """The (1, 0) and (0, 1) stencils sum the same four values in a different order; mirrored, the
    Hessian is symmetric bit for bit, and it is the Hessian (central differences, O(h^2))."""
    a, b, cc = 1.3, 0.7, 0.37
    f = lambda p: a * (p[0] - 0.2) ** 2 + b * (p[1] + 0.1) ** 2 + cc * math.sin(3 * p[0]) * math.sin(5 * p[1])
    info, Hm = _common._stationary_2d(f, np.array([0.3, -0.2]))
    np.testing.assert_array_equal(Hm, Hm.T)      # exact by construction: one triangle, mirrored
    x, y = info.x
    exact = np.array([[2 * a - 9 * cc * math.sin(3 * x) * math.sin(5 * y), 15 * cc * math.cos(3 * x) * math.cos(5 * y)],
                      [15 * cc * math.cos(3 * x) * math.cos(5 * y), 2 * b - 25 * cc * math.sin(3 * x) * math.sin(5 * y)]])
    np.testing.assert_allclose(Hm, exact, atol=1e-4)     # h = 1e-3: truncation ~ h^2 f''''/12 ~ 1e-5


# --------------------------------------------------------------------------- the disk cache
def test_cached_json_computes_once_and_keys_by_arguments(tmp_path, monkeypatch):
    monkeypatch.setenv("STATMECH_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("STATMECH_RESULT_CACHE", raising=False)
    calls = []

    def compute(v):
        calls.append(v)
        return {"alpha": v, "sets": [v, v + 1e-17]}
    r1 = cached_json("test", {"K": 3}, lambda: compute(1.25), sources=("statmech.committee",))
    r2 = cached_json("test", {"K": 3}, lambda: compute(9.0), sources=("statmech.committee",))
    r3 = cached_json("test", {"K": 5}, lambda: compute(2.5), sources=("statmech.committee",))
    assert r1 == r2 == {"alpha": 1.25, "sets": [1.25, 1.25 + 1e-17]} and r3["alpha"] == 2.5
    assert calls == [1.25, 2.5]
    files = list((tmp_path / "results" / "test").glob("*.json"))
    assert len(files) == 2 and all(json.loads(f.read_text())["id"]["key"]["K"] in (3, 5) for f in files)
    # a damaged entry is recomputed, never returned
    for f in files:
        f.write_text("{not json")
    assert cached_json("test", {"K": 3}, lambda: compute(7.0), sources=("statmech.committee",))["alpha"] == 7.0
    monkeypatch.setenv("STATMECH_RESULT_CACHE", "off")
    assert cached_json("test", {"K": 3}, lambda: compute(8.0), sources=("statmech.committee",))["alpha"] == 8.0
    assert calls == [1.25, 2.5, 7.0, 8.0]


_CHILD = """
import os, time, json
t0 = time.perf_counter()
from statmech import committee as c
t1 = time.perf_counter()
r = c.advanced.tcm_capacity_1rsb_rqmc(3, log2_points=6, reps=2, seed=int(os.environ["TCM_TEST_SEED"]), progress=False)
t2 = time.perf_counter()
print(json.dumps({"alpha": r.alpha_c, "stderr": r.extra["stderr"], "import": t1 - t0, "call": t2 - t1}))
"""


def test_a_second_process_reads_the_rqmc_capacity_from_disk():
    """A fresh key (a seed of this run) in the user's cache: the first process computes it, the
    second reads it back in well under a second (the entry is removed afterwards)."""
    from statmech.symbolic import cache_dir
    seed = 10 ** 6 + (os.getpid() * 7919 + int(time.time())) % 10 ** 6
    env = {**os.environ, "PYTHONPATH": ROOT, "TCM_TEST_SEED": str(seed)}
    env.pop("STATMECH_RESULT_CACHE", None)
    run = lambda: json.loads(subprocess.run([sys.executable, "-c", _CHILD], env=env, capture_output=True, text=True,
                                            check=True).stdout.strip().splitlines()[-1])
    folder = cache_dir() / "results" / "committee" / "sign_1rsb_rqmc"
    before = set(folder.glob("*.json")) if folder.exists() else set()
    written = []
    try:
        first = run()
        written = [f for f in set(folder.glob("*.json")) - before
                   if json.loads(f.read_text())["id"]["key"]["seed"] == seed]
        second = run()
    finally:
        for f in set(folder.glob("*.json")) - before:
            if json.loads(f.read_text())["id"]["key"]["seed"] == seed:
                f.unlink()
    assert len(written) == 1          # the first process wrote the entry of its key
    assert second["alpha"] == first["alpha"] and second["stderr"] == first["stderr"]
    # the second process reads instead of computing (a read is milliseconds, the RQMC run >= 0.4 s on
    # every machine seen; no absolute bound on the first call, which depends on the machine)
    assert second["call"] < min(0.5, first["call"] / 3)
