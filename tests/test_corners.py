"""The corners a researcher reaches on a first afternoon: each answers with a correct number or a
clear ValueError / ConvergenceError naming the argument or the point, never a raw numpy/scipy
exception, and never silently wrong."""
import json
import math

import pytest

import statmech.perceptron as P
from statmech import ConvergenceError
from statmech.cli import main


@pytest.mark.parametrize("kappa", [-6, -8, -10, -50])
@pytest.mark.parametrize("ansatz", ["1rsb", "frsb"])
def test_rsb_capacity_below_its_domain(kappa, ansatz):
    with pytest.raises(ValueError, match=r"kappa must be >= -3"):
        P.gardner_capacity(kappa, ansatz=ansatz)


def test_cli_reports_a_domain_error_without_warnings(capsys):
    assert main(["perceptron", "capacity", "--kappa", "-6", "--ansatz", "1rsb"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "kappa must be >= -3" in err and "Warning" not in err


@pytest.mark.parametrize("ansatz", ["1rsb", "frsb"])
def test_storage_above_the_rsb_capacity_fails_fast(ansatz):
    with pytest.raises(ValueError, match=r"alpha must be < alpha_J\^1RSB"):
        P.spherical_storage(13.0, kappa=-1, ansatz=ansatz)


@pytest.mark.parametrize("kappa", [-30, -50])
def test_at_line_outside_the_storage_domain(kappa):
    with pytest.raises(ValueError, match=r"kappa must be >= -5"):
        P.spherical_storage_at_line(kappa)


def test_gardner_capacity_overflows_only_where_documented():
    # alpha_c > 1.8e308 below kappa ~ -37.4: inf, as the docstring says; finite just above
    from statmech.perceptron import spherical_storage_rs
    assert math.isfinite(P.gardner_capacity(-37.3)) and math.isinf(P.gardner_capacity(-37.5))
    assert "-37.4" in P.gardner_capacity.__doc__ and "-37.4" in spherical_storage_rs.gardner_capacity.__doc__


def test_cli_infinity_is_not_a_result(capsys):
    assert main(["perceptron", "capacity", "--kappa", "-38", "--json"]) == 1
    out = capsys.readouterr()
    assert out.out == "" and out.err.count("\n") >= 1 and "infinity" in out.err


@pytest.mark.parametrize("argv", [
    ["phase-diagram", "perceptron", "--kappa", "-1:2", "--out", "{tmp}/kappa.json"],
    ["perceptron", "capacity", "--kappa", "-1", "--json"],
    ["perceptron", "storage", "--alpha", "0.5", "--kappa", "-0.25", "--json"],
])
def test_negative_numbers_and_ranges_as_option_values(argv, tmp_path, capsys):
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    assert main(argv) == 0


def test_storage_inside_the_fold_window_is_the_global_minimum():
    """kappa = -4, alpha = 0.9 alpha_c: q = 0.980, phi = -10.5104 (the small-q point q = 0.0056,
    phi = -9.2242, is the other, higher minimum)."""
    r = P.spherical_storage(0.9 * P.gardner_capacity(-4.0), -4.0)
    assert r.q == pytest.approx(0.97964796, rel=1e-6) and r.entropy == pytest.approx(-10.5104026, rel=1e-6)
    assert r.extra["other_minimum"]["entropy"] == pytest.approx(-9.2241658, rel=1e-6)
    assert not r.rs_stable
