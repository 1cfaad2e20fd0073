"""The command line as a user meets it: --help everywhere, --json, one-line errors."""
import json
import subprocess
import sys

import pytest

from statmech.cli import build_parser, main


def _subcommands(parser):
    import argparse
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield name, sub
                for n2, s2 in _subcommands(sub):
                    yield f"{name} {n2}", s2


def test_every_command_has_help_text():
    parser = build_parser()
    names = dict(_subcommands(parser))
    for top in ("perceptron", "scm", "committee", "franz-parisi", "phase-diagram", "simulate", "activations", "figures"):
        assert top in names, top
    for name, sub in names.items():
        text = sub.format_help()
        assert "usage:" in text and len(text) > 80, name


def test_scm_transitions_single_K_is_flat_json(capsys):
    assert main(["scm", "transitions", "--K", "5", "--activation", "erf", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert set(d) >= {"alpha_s", "alpha_c", "alpha_d", "order"}
    assert d["alpha_s"] == pytest.approx(44.3378030, rel=1e-8) and d["order"] == 1


def test_perceptron_capacity_json(capsys):
    assert main(["perceptron", "capacity", "--kappa", "1", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["alpha_c"] == pytest.approx(0.519572229605, rel=1e-11)


def test_perceptron_capacity_ansatz_json(capsys):
    out = {}
    for ansatz in ("rs", "1rsb", "frsb"):
        assert main(["perceptron", "capacity", "--kappa", "-1", "--ansatz", ansatz, "--json"]) == 0
        out[ansatz] = d = json.loads(capsys.readouterr().out)
        assert {"alpha_c", "ansatz", "converged", "residual", "rs_stable", "error", "command"} <= set(d)
        assert "alpha" not in d     # one key for one quantity
        # rs_stable: the stability of the ansatz itself -- RS is unstable at kappa = -1, the 1RSB and
        # full-RSB solutions are minima of their functionals
        assert d["ansatz"] == ansatz and d["converged"] is True and d["rs_stable"] is (ansatz != "rs")
    # each further breaking lowers the jamming line (R is minimized over nested ansatze)
    assert out["frsb"]["alpha_c"] + out["frsb"]["error"] < out["1rsb"]["alpha_c"] < out["rs"]["alpha_c"]
    assert out["rs"]["alpha_c"] == pytest.approx(13.27320, rel=1e-6)  # Gardner: 1/int Dt (kappa - t)_+^2
    # kappa >= 0: RS is stable at jamming and full RSB collapses to Gardner
    assert main(["perceptron", "capacity", "--kappa", "0.5", "--ansatz", "frsb", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["rs_stable"] is True and d["alpha_c"] == pytest.approx(0.961205, rel=1e-6)


@pytest.mark.parametrize("argv", [
    ["perceptron", "capacity", "--kappa", "abc"],
    ["perceptron", "capacity", "--kappa", "-1", "--ansatz", "2rsb"],
    ["perceptron", "capacity", "--weights", "binary", "--ansatz", "frsb"],
    ["perceptron", "capacity", "--weights", "ternary"],
    ["scm", "transitions", "--K", "5", "--activation", "tanh"],
    ["committee", "capacity", "--K", "4", "--activation", "sign"],
    ["franz-parisi", "entropy", "--alpha", "0.5", "--d", "0.9"],
    ["nonsense"],
])
def test_bad_arguments_one_line_exit_2(argv):
    p = subprocess.run([sys.executable, "-m", "statmech", *argv], capture_output=True, text=True)
    assert p.returncode == 2, (argv, p.stderr)
    assert len(p.stderr.strip().splitlines()) == 1 and "Traceback" not in p.stderr, p.stderr


@pytest.mark.parametrize("argv, stable", [
    (["perceptron", "capacity", "--kappa", "-1", "--json"], False),     # RS above the AT line (replicon -1.106)
    (["perceptron", "capacity", "--kappa", "0.5", "--json"], True),
    (["perceptron", "capacity", "--weights", "binary", "--method", "gardner_derrida", "--json"], False),
    (["perceptron", "storage", "--alpha", "1.1", "--weights", "binary", "--json"], False),  # alpha_AT = 1.0147
    (["perceptron", "storage", "--alpha", "0.9", "--weights", "binary", "--json"], True),
])
def test_rs_results_carry_the_validity_flag(capsys, argv, stable):
    assert main(argv) == 0
    captured = capsys.readouterr()
    d = json.loads(captured.out)
    assert d["rs_stable"] is stable and d["ansatz"] == "rs"
    notes = [l for l in captured.err.splitlines() if "unstable" in l]
    assert len(notes) == (0 if stable else 1)


def test_not_a_result_exits_1(capsys):
    import argparse
    from statmech.cli import emit
    args = argparse.Namespace(json=True)
    assert emit(args, {"alpha_c": float("nan")}) == 1
    assert emit(args, {"rows": [{"alpha_s": 1.0}, {"alpha_s": float("nan")}]}) == 1
    assert emit(args, None) == 1
    out = capsys.readouterr()
    assert out.out == "" and "rows[1].alpha_s" in out.err
    assert emit(args, {"alpha_c": float("inf"), "replicon": None}) == 1     # infinity is not a result ...
    capsys.readouterr()
    # ... unless it is a documented value: JSON null with the reason
    assert emit(args, {"alpha_d": float("inf"), "K": 1.0}, null_reasons={"alpha_d": "never unstable"}) == 0
    assert json.loads(capsys.readouterr().out) == {"alpha_d": None, "K": 1.0, "null_reasons": {"alpha_d": "never unstable"}}
    assert emit(args, {"alpha_c": None}) == 1 and emit(args, {"rows": [{"order": None}]}) == 1
