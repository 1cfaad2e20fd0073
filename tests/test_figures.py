"""The figure scheduler: bundles of groups and parts (statmech.figures.make_all)."""
import pytest

from statmech import figures as F


def test_bundles_cover_every_part_of_every_group_once():
    names = F.available()
    entries = [e for b in F._bundles(names) for e in b]
    assert len(entries) == len(set(entries))
    covered = {}
    for e in entries:
        name, _, part = e.partition(":")
        covered.setdefault(name, set()).add(part or "*")
    for n in names:
        parts = set(F._parts(n))
        assert covered[n] == {"*"} or covered[n] == parts, (n, covered[n], parts)
    # every bundle entry names an existing group (and one of its PARTS): a typo would drop it
    for _, bundle in F._BUNDLES:
        for e in bundle:
            name, _, part = e.partition(":")
            assert name in names and (not part or part in F._parts(name)), e
    # a subset keeps the bundle order and drops the groups not asked for
    sub = F._bundles(["activations", "committee"])
    assert [e for b in sub for e in b] == ["activations:_functions", "activations:_phase_diagram",
                                           "activations:_digits", "committee", "activations:_hessian",
                                           "activations:_hessian_spectra"]


def test_make_group_rejects_unknown_parts_and_groups(tmp_path):
    with pytest.raises(ValueError, match="parts of figure group 'activations' must be among"):
        F.make_group("activations", tmp_path, parts=("_nope",))
    with pytest.raises(ValueError, match="only must name figure groups"):
        F.make_all(tmp_path, only=["no_such_group"])


@pytest.mark.slow
def test_make_all_runs_the_parts_of_a_group_in_two_processes(tmp_path):
    timings = {}
    paths = F.make_all(tmp_path, only=["activations"], workers=2, timings=timings)
    assert {p.name for p in paths} >= {"activations_functions.png", "activations_scm_phase_diagram.png",
                                       "activations_hessian_loss.png",
                                       "activations_eigenvalue_histograms.png"}
    assert all(p.stat().st_size > 10_000 for p in paths)
    wall, cpu = timings["activations"]
    assert wall > 0 and cpu > 0


@pytest.mark.parametrize("group", F.available())
def test_every_figure_is_laid_out_cleanly(group, tmp_path):
    """Render every figure of the group and check its layout (statmech.figures._layout): no text
    overlaps another text or covers a curve, and nothing is clipped."""
    from statmech.figures import _layout
    paths, _ = F.make_group(group, tmp_path)
    assert paths, f"figure group {group!r} made no figure"
    bad = {p: _layout.PROBLEMS[p] for p in paths if p in _layout.PROBLEMS}
    assert not bad, "layout problems:\n" + "\n".join(f"{p}: {m}" for p, ms in bad.items() for m in ms)
