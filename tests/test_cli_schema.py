"""One command line: every subcommand documents every option, enforces its enumerations, names
its metavars in the same words, and prints the one JSON schema of ``statmech.cli.emit_results``.

The argparse tree of :func:`statmech.cli.build_parser` is walked, so a new subcommand is checked
as soon as it is registered -- and fails ``test_every_subcommand_has_a_cheap_invocation`` until
it has an entry in ``INVOCATIONS`` (a small argument list that runs in about a second).

The schema (docs/cli.md): ``--json`` prints one JSON object with ``"command"`` (the subcommand's
words) and either the flat record of one result (``statmech.result.flat``) or ``"results"``, a
list of such records; every record carries ``converged``, ``ansatz`` and ``error`` (and the rest
of the protocol: ``residual``, ``iterations``, ``rs_stable``, ``stability``).
"""
import argparse
import json
import math
import re

import pytest

from statmech.cli import build_parser, main
from statmech.result import check_ansatz

# one cheap invocation per subcommand (``--json`` is appended); keep each about a second
INVOCATIONS = {
    "activations eval": ["--h", "-1", "0", "2", "--beta", "inf"],
    "activations pair": ["--rho", "0.3", "1", "--beta", "2", "--order", "1"],
    "activations transitions": ["--K", "2", "--beta", "0", "inf"],
    "committee capacity": ["--K", "inf", "--activation", "relu", "--ansatz", "rs"],
    "committee ladder": ["--activation", "quadratic", "--kmax", "1", "--Ks", "2", "4"],
    "committee storage": ["--alpha", "0.1", "--K", "3"],      # ~13 s: the cheapest there is today
    "figures": ["--list"],
    "franz-parisi crossing": ["--alpha", "0.5"],
    "franz-parisi entropy": ["--alpha", "0.5", "--d", "0.1"],
    "franz-parisi stochastic": ["--alpha", "0.5", "--q-star", "0.5", "--d", "0.1"],
    "franz-parisi stochastic-energy": ["--alpha", "0.5", "--q-star", "0.5"],
    "franz-parisi stochastic-reference": ["--alpha", "0.5", "--q-star", "0.5"],
    "glm bayes": ["--prior", "ising", "--alpha", "2"],
    "glm erm": ["--loss", "logistic", "--lam", "0.1", "--alpha", "2", "--noise", "0.1"],
    "glm thresholds": ["--prior", "ising"],
    "perceptron at-line": ["--kappa", "-0.5"],
    "perceptron capacity": ["--kappa", "0.5"],
    "perceptron storage": ["--alpha", "0.5"],
    "perceptron teacher-student": ["--alpha", "1.0"],
    "perceptron transition": [],
    "phase-diagram perceptron": ["--kappa", "0:0.5"],
    "phase-diagram scm": ["--activation", "relu", "--K", "2:4"],
    "scm curve": ["--K", "2", "--activation", "relu", "--alpha-max", "12", "--n", "3"],
    "scm equilibria": ["--alpha", "2", "--K", "2", "--activation", "relu"],
    "scm large-alpha": ["--K", "5", "--activation", "relu"],
    "scm free-energy": ["--alpha", "2", "--R", "0.5", "--S", "0.1", "--C", "0.1", "--K", "2", "--activation", "relu"],
    "scm mc": ["--alpha", "1", "--K", "2", "--N", "20", "--chains", "2", "--sweeps", "10"],
    "scm online": ["--K", "2", "--M", "2", "--lr", "1", "--t-max", "10", "--n", "3"],
    "scm online-asymptotics": ["--K", "2", "--M", "2"],
    "scm online-plateau": ["--K", "2", "--M", "2", "--lr", "1"],
    "scm transitions": ["--K", "2", "--activation", "relu"],
    "simulate clipped-hebb": ["--N", "101", "--alpha", "0.1"],
    "simulate delta-rule": ["--N", "101", "--alpha", "0.3", "--activation", "linear"],
    "simulate metropolis": ["--N", "51", "--alpha", "0.3", "--sweeps", "50"],
    "simulate perceptron-rule": ["--N", "101", "--alpha", "0.3", "--teacher"],
    "simulate stochastic-perceptron": ["--N", "101", "--alpha", "0.3"],
    "simulate success-rate": ["--N", "51", "--alpha", "0.2", "0.6", "0.9", "--runs", "4", "--max-epochs", "100"],
    "simulate tcm-train": ["--N", "27", "--K", "3", "--alpha", "0.3", "--epochs", "20"],
}

# Subcommands whose module is being migrated to the schema in another branch (the soft committee
# machine and its online learning, the tree committee machine, Franz-Parisi, the phase diagrams):
# expected to fail here (non-strict xfail).  Remove an entry when its branch is merged; the test
# then guards it.
PENDING_SUBCOMMANDS: set[str] = set()

# Subcommands that compute no solver result, with the reason; their JSON has "command" and their
# own keys, no protocol record.
NOT_RESULTS = {
    "figures": "writes image files; --json lists the files and the seconds per group (--list: the groups)",
    "phase-diagram perceptron": "lines of the continuation engine (curves with their special points), not one solver "
                                "result; --json has command, model, the lines and the table",
    "phase-diagram scm": "lines of the continuation engine (curves with their special points) and the table at "
                         "integer K, not one solver result; --json has command, model, the lines and the table",
}

# option destinations that name an enumeration: they must have ``choices=``
ENUMERATIONS = {"activation", "ansatz", "weights", "method", "branch", "model", "convention", "algorithm", "order",
                "only"}
# the metavar of a group of subcommands: COMMAND, or MODEL where each subcommand names a model
SUBCOMMAND_METAVARS = {"COMMAND", "MODEL"}
_METAVAR = re.compile(r"^[A-Z][A-Z0-9_]*$")


def _walk(parser, words=(), groups=()):
    """(words, leaf parser, the metavars of the subcommand groups on the way) of every subcommand."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield " ".join(words), parser, groups
    for action in subs:
        for name, sub in action.choices.items():
            yield from _walk(sub, words + (name,), groups + ((" ".join(words) or "statmech", action.metavar),))


PARSER = build_parser()
LEAVES = {name: (parser, groups) for name, parser, groups in _walk(PARSER)}


def _params():
    out = []
    for name in sorted(LEAVES):
        marks = [pytest.mark.xfail(reason="migrated to the one schema in another branch", strict=False)] \
            if name in PENDING_SUBCOMMANDS else []
        out.append(pytest.param(name, marks=marks, id=name.replace(" ", "-")))
    return out


def _options(parser):
    return [a for a in parser._actions if not isinstance(a, (argparse._HelpAction, argparse._VersionAction))]


def test_every_subcommand_has_a_cheap_invocation():
    missing = sorted(set(LEAVES) - set(INVOCATIONS))
    assert not missing, f"add a cheap invocation to INVOCATIONS for the new subcommand(s) {missing}"
    assert not sorted(set(INVOCATIONS) - set(LEAVES)), "INVOCATIONS names a subcommand that does not exist"
    assert PENDING_SUBCOMMANDS <= set(LEAVES) and set(NOT_RESULTS) <= set(LEAVES)
    assert len(LEAVES) >= 30      # the walk found the tree (8 commands, their subcommands)


def test_the_top_level_parser():
    groups = [a for a in PARSER._actions if isinstance(a, argparse._SubParsersAction)]
    assert len(groups) == 1 and groups[0].metavar == "COMMAND"
    for action in _options(PARSER):
        assert action.help, action.option_strings


def _groups(parser, words=("statmech",)):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            yield " ".join(words), action
            for name, sub in action.choices.items():
                yield from _groups(sub, words + (name,))


def test_every_subcommand_has_a_one_line_help():
    for where, action in _groups(PARSER):
        helps = {a.dest: a.help for a in action._choices_actions}
        for name in action.choices:
            assert helps.get(name), f"'{where} --help' shows no help for {name}"


@pytest.mark.parametrize("name", _params())
def test_every_option_has_help_and_a_physics_metavar(name):
    parser, groups = LEAVES[name]
    for where, metavar in groups:
        assert metavar in SUBCOMMAND_METAVARS, f"{where}: subcommand metavar {metavar!r} (use COMMAND or MODEL)"
    options = _options(parser)
    assert any("--json" in a.option_strings for a in options), f"{name}: no --json"
    for a in options:
        assert a.help and a.help != argparse.SUPPRESS and len(a.help) > 5, f"{name} {a.option_strings}: no help"
        if a.nargs == 0:        # a flag
            continue
        metavar = a.metavar if a.metavar is not None else (None if a.choices is not None else a.dest.upper())
        assert isinstance(metavar, str) and _METAVAR.match(metavar), \
            f"{name} {a.option_strings}: metavar {metavar!r} (an UPPERCASE name of the quantity)"


@pytest.mark.parametrize("name", _params())
def test_enumerations_have_choices(name):
    parser, _ = LEAVES[name]
    for a in _options(parser):
        if a.dest in ENUMERATIONS:
            assert a.choices is not None, f"{name} {a.option_strings}: an enumeration without choices="
        if a.dest == "ansatz":
            for c in a.choices:     # the one vocabulary of statmech.result
                check_ansatz(c, ("rs", "krsb", "frsb"))


def _numbers(v):
    """The leaves of a nested list (one record may hold an array per quantity)."""
    if isinstance(v, list):
        return [x for item in v for x in _numbers(item)]
    return [v]


@pytest.mark.parametrize("name", _params())
def test_json_follows_the_one_schema(name, capsys):
    argv = name.split() + INVOCATIONS[name] + ["--json"]
    rc = main(argv)
    captured = capsys.readouterr()
    assert rc == 0, f"statmech {' '.join(argv)}: exit {rc}: {captured.err.strip()[-300:]}"
    d = json.loads(captured.out)
    assert isinstance(d, dict) and d.get("command") == name, f"{name}: 'command' is {d.get('command')!r}"
    if name in NOT_RESULTS:
        return
    records = d["results"] if "results" in d else [d]
    assert records and all(isinstance(r, dict) for r in records)
    nulls = d.get("null_reasons", {})
    for r in records:
        missing = {"converged", "ansatz", "error", "residual", "iterations", "rs_stable", "stability"} - set(r)
        assert not missing, f"{name}: the record has no {sorted(missing)}"
        assert all(isinstance(c, bool) for c in _numbers(r["converged"])), f"{name}: converged {r['converged']!r}"
        assert isinstance(r["ansatz"], str)
        if r["ansatz"] != "-":      # "-": not a replica computation (a simulation, a closed form)
            check_ansatz(r["ansatz"], ("rs", "krsb", "frsb"))
        for e in _numbers(r["error"]):
            assert (e is None and "error" in nulls) or (isinstance(e, (int, float)) and not isinstance(e, bool)
                                                        and math.isfinite(e) and e >= 0), f"{name}: error {e!r}"


# the examples of docs/cli.md, by their "command", and the run that printed them
DOC_EXAMPLES = {
    "perceptron capacity": ["perceptron", "capacity", "--kappa", "-1", "--ansatz", "1rsb", "--json"],
    "simulate perceptron-rule": ["simulate", "perceptron-rule", "--N", "101", "--alpha", "0.3", "--teacher", "--json"],
    "activations eval": ["activations", "eval", "--h", "-1", "0", "2", "--beta", "inf", "--json"],
}


def _close(a, b, path=""):
    if isinstance(a, dict):
        assert isinstance(b, dict) and set(a) == set(b), f"{path}: keys {sorted(set(a) ^ set(b))}"
        for k in a:
            if k != "seconds":      # wall time
                _close(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            _close(x, y, f"{path}[{i}]")
    elif isinstance(a, float) and not isinstance(b, bool):
        # a converged solver at its tolerance, not the last bit: residuals and errors agree to their size;
        # Hessian eigenvalues of the RSB minimizers come from finite differences of the gradient
        # (statmech.rsb.fd_hessian, step 1e-6: 2e-8 relative apart between the two CI dependency legs)
        rel = 1e-5 if ".stability" in path or ".hessian_eigenvalues" in path else 1e-8
        assert b == pytest.approx(a, rel=rel, abs=1e-12), path
    else:
        assert a == b, path


def test_the_documented_examples_are_what_the_commands_print(capsys):
    from pathlib import Path
    text = (Path(__file__).resolve().parent.parent / "docs" / "cli.md").read_text()
    blocks = [json.loads(b) for b in re.findall(r"```json\n(.*?)```", text, flags=re.S)]
    assert sorted(b["command"] for b in blocks) == sorted(DOC_EXAMPLES)
    for documented in blocks:
        assert main(DOC_EXAMPLES[documented["command"]]) == 0
        _close(json.loads(capsys.readouterr().out), documented, documented["command"])


def test_emit_results_nulls_only_documented_values(capsys):
    from statmech.activations import channel_values
    from statmech.cli import emit_results
    args = argparse.Namespace(json=True, command_name="activations eval", beta=math.inf)
    r = channel_values([1.0, -1.0], math.inf)          # log Z = inf at h = 1 (documented)
    assert emit_results(args, r) == 1                  # without a reason the null is not a result
    assert capsys.readouterr().out == ""
    assert emit_results(args, r, null_reasons={"log_partition": "diverges"}, omit=("gate",)) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["log_partition"] == [None, 0.0] and "gate" not in d
    assert d["null_reasons"] == {"beta": "beta = inf as given", "log_partition": "diverges"}


def test_success_rate_without_a_crossing_says_why(capsys):
    assert main(["simulate", "success-rate", "--N", "51", "--alpha", "0.1", "0.2", "--runs", "2", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["successes"] == [2, 2] and d["p"] == [1.0, 1.0]      # far below the capacity: every run solves
    assert d["algorithmic_capacity"] is None and "not identifiable" in d["null_reasons"]["algorithmic_capacity"]
