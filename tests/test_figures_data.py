"""Figure data files (figures/data): recorded provenance, and regeneration by the recorded command.

Every data set is checked to be reproducible by the command recorded in its file: the cheap
ones on a small instance (``--small``: a subset of the stored calls, or a prefix of the
stored instances) in the normal suite, every one in full under ``slow``.
"""
import json
import subprocess
import sys

import numpy as np
import pytest

from statmech import __version__
from statmech.figures import _data as D
from statmech.figures import available, data_sets

SPECS = D.specs()
# small instances that take a few seconds (the others, and every full run, are slow)
QUICK = ("perceptron_lp", "perceptron_enumeration", "fp_enumeration", "committee_relu_1rsb", "committee_exact")


def test_every_group_data_set_is_stored_with_its_provenance():
    assert {s.group for s in SPECS.values()} <= set(available())
    for name, spec in SPECS.items():
        raw = json.loads((D.data_dir() / f"{name}.json").read_text())
        meta = raw["meta"]
        assert meta["command"] == f"statmech figures --recompute {name}"
        assert meta["group"] == spec.group and meta["format"] == D.FORMAT
        assert meta["version"] == __version__, f"{name} was written by statmech {meta['version']}: recompute it"
        seeded = any("seed" in c["kwargs"] for c in spec.calls)
        assert bool(meta["seed"]) == seeded, name        # the seeds of the random data are recorded
        assert all(k in meta for k in ("N", "K", "n_instances", "description")), name
        assert not meta.get("small"), f"{name} holds a --small run"
        # the stored calls are exactly those the figures ask for: a changed call needs a recompute
        assert raw["points"] == json.loads(json.dumps(list(spec.calls))), name
        assert len(raw["results"]) == len(spec.calls)


def test_encoding_round_trip_and_errors():
    from statmech.simulate.lp import SphericalStorageSample
    s = SphericalStorageSample(N=5, kappa=0.0, dist="gaussian", seed=1, P_max=20, capacity=np.array([3, 7]))
    obj = {"a": (1, 2.5), "b": np.array([[np.nan, np.inf], [1.0, -np.inf]]), ("k", 2): [s], "m": np.float32(1.5)}
    back = D.decode(json.loads(json.dumps(D.encode(obj))))
    assert back["a"] == (1, 2.5) and back[("k", 2)][0].capacity.dtype == s.capacity.dtype
    np.testing.assert_array_equal(back["b"], obj["b"])
    D._same(back, {**obj, "m": 1.5}, (), 0.0)
    with pytest.raises(AssertionError):
        D._same(back, {**obj, "b": np.zeros((2, 2))}, (), 1e-9)
    with pytest.raises(TypeError, match="cannot store"):
        D.encode(object())
    with pytest.raises(ValueError, match="recompute must name"):
        data_sets(["no_such_group"])
    with pytest.raises(FileNotFoundError, match="--recompute nowhere"):
        D.load("nowhere", directory="/nonexistent")


def _regenerate(name, tmp_path, small):
    cmd = SPECS[name].command().split()[1:] + ["--data-dir", str(tmp_path), "--data-only", "--workers", "1"]
    if small:
        cmd.append("--small")
    subprocess.run([sys.executable, "-m", "statmech", *cmd], check=True, capture_output=True, timeout=36000)
    new = D.load(name, tmp_path)
    assert new.meta["command"] == SPECS[name].command() and bool(new.meta.get("small")) == small
    cost = new.meta["cost"]                              # the run's measured cost is recorded
    assert cost["workers"] == 1 and cost["resumed"] is False and 0 <= cost["wall_seconds"] < 36000
    D.compare(SPECS[name], D.load(name), new)


@pytest.mark.parametrize("name", QUICK)
def test_small_instance_regenerated_by_recorded_command(name, tmp_path):
    _regenerate(name, tmp_path, small=True)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(set(SPECS) - set(QUICK)))
def test_small_instance_regenerated_slow(name, tmp_path):
    _regenerate(name, tmp_path, small=True)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SPECS))
def test_full_data_set_regenerated_by_recorded_command(name, tmp_path):
    _regenerate(name, tmp_path, small=False)


def test_compare_detects_a_changed_result():
    spec = SPECS["committee_relu_1rsb"]
    stored = D.load(spec.name)
    bad = D.Data(stored.meta, stored.points[:1], [{**stored.results[0], "alpha_c": stored.results[0]["alpha_c"] + 1e-6}])
    with pytest.raises(AssertionError, match="alpha_c"):
        D.compare(spec, stored, bad)
    D.compare(spec, stored, D.Data(stored.meta, stored.points[:1], stored.results[:1]))


def test_rsb_jamming_data_is_ordered_and_below_rs():
    """Stored SAT/UNSAT line (kappa < 0): alpha_FRSB < alpha_1RSB < alpha_RS (Gardner), the
    full-RSB extrapolation error far below the gaps, and the RS value is Gardner's closed form."""
    from statmech.perceptron import gardner_capacity
    jam = D.load("rsb_jamming")
    for p, r in zip(jam.points, jam.results):
        kappa = p["kwargs"]["kappa"]
        a_f, a_1, a_rs = r.thermo["alpha_c"], r.extra["alpha_1rsb"], r.extra["alpha_rs"]
        assert r.ansatz == "frsb" and r.converged and kappa < 0
        assert a_f < a_1 < a_rs, kappa
        assert r.extra["error"] < 0.5 * (a_1 - a_f), kappa
        assert abs(a_rs - gardner_capacity(kappa)) < 1e-10 * a_rs
