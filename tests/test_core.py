"""Saddle-point core, symbolic layer, errors and CLI plumbing."""
import math
import subprocess
import sys

import numpy as np
import pytest
import sympy as sp

from statmech import ConvergenceError, SaddlePoint
from statmech import gaussian as g
from statmech import saddle, symbolic
from statmech.errors import check_odd_int, check_range


# --------------------------------------------------------------- saddle
def test_newton_quadratic_convergence_and_report():
    F = lambda x: np.array([x[0] ** 2 + x[1] ** 2 - 4.0, x[0] - x[1]])
    J = lambda x: np.array([[2 * x[0], 2 * x[1]], [1.0, -1.0]])
    info = saddle.newton(F, [1.0, 0.5], J, tol=1e-14)
    assert info.converged and info.residual <= 1e-14
    assert np.allclose(info.x, [math.sqrt(2)] * 2, rtol=0, atol=1e-15)
    assert info.iterations < 10
    info_fd = saddle.newton(F, [1.0, 0.5], tol=1e-12)
    assert np.allclose(info_fd.x, info.x, atol=1e-12)


def test_newton_raises_with_diagnostics():
    F = lambda x: np.array([x[0] ** 2 + 1.0])  # no real root
    with pytest.raises(ConvergenceError) as ei:
        saddle.newton(F, [1.0], lambda x: np.array([[2 * x[0]]]), maxiter=30)
    assert ei.value.residual is not None and ei.value.residual >= 1.0
    assert ei.value.x is not None


def test_newton_respects_domain():
    # root of log(x) + x - 2 on x > 0, started far so the plain step would leave the domain
    F = lambda x: np.array([math.log(x[0]) + x[0] - 2.0]) if x[0] > 0 else np.array([np.nan])
    info = saddle.newton(F, [1e-3], lambda x: np.array([[1 / x[0] + 1]]), in_domain=lambda x: x[0] > 0)
    assert abs(math.log(info.x[0]) + info.x[0] - 2) < 1e-12


def test_fixed_point_and_failure():
    info = saddle.fixed_point(lambda x: np.cos(x), [0.5], damping=0.7, tol=1e-13)
    assert info.x[0] == pytest.approx(0.7390851332151607, abs=1e-12)
    with pytest.raises(ConvergenceError):
        saddle.fixed_point(lambda x: 2 * x + 1, [0.0], damping=1.0, maxiter=50)


def test_root_scalar_brackets():
    info = saddle.root_scalar(lambda x: x ** 3 - 2, (0, 2))
    assert info.x[0] == pytest.approx(2 ** (1 / 3), rel=1e-15)
    with pytest.raises(ConvergenceError, match="bracket"):
        saddle.root_scalar(lambda x: x * x + 1, (0, 2))


def test_fd_derivatives():
    f = lambda x: x[0] ** 2 * x[1] + math.sin(x[1])
    Hm = saddle.hessian_fd(f, np.array([1.0, 0.5]))
    assert np.allclose(Hm, [[1.0, 2.0], [2.0, -math.sin(0.5)]], atol=1e-6)


def test_saddlepoint_attribute_access_and_stack():
    r = [SaddlePoint("m", {"alpha": a}, {"q": a / 2}, {"entropy": -a}, True, 1e-14, 3,
                     np.array([1.0, 2.0]), 0.5, True) for a in (0.0, 1.0, 2.0)]
    assert r[1].q == 0.5 and r[1].entropy == -1.0 and r[1].alpha == 1.0
    with pytest.raises(AttributeError):
        r[0].nonexistent
    s = saddle.stack(r, (3,))
    assert s.q.shape == (3,) and s.hessian_eigenvalues.shape == (3, 2)
    assert np.all(s.converged) and s.rs_stable.dtype == bool
    assert s.to_dict()["order_params"]["q"] == [0.0, 0.5, 1.0]


# --------------------------------------------------------------- symbolic
@pytest.mark.parametrize("fn,ref", [
    (symbolic.H, lambda x: g.H(x)), (symbolic.LogH, lambda x: g.log_H(x)),
    (symbolic.InvMills, lambda x: g.inv_mills(x)), (symbolic.Gauss, lambda x: g.G(x)),
    (symbolic.Log2Cosh, lambda x: g.log_2cosh(x)),
])
def test_symbolic_derivatives_match_finite_differences(fn, ref):
    x = sp.Symbol("x")
    d1 = sp.lambdify(x, sp.diff(fn(x), x).rewrite(sp.erfc).rewrite(sp.exp).rewrite(sp.cosh), "mpmath")
    for x0 in (-2.0, -0.3, 0.4, 3.0):
        h = 1e-5
        fd = (float(ref(x0 + h)) - float(ref(x0 - h))) / (2 * h)
        assert float(d1(x0)) == pytest.approx(fd, rel=1e-7, abs=1e-9)


def test_codegen_kernel_matches_quadrature(tmp_path, monkeypatch):
    monkeypatch.setenv("STATMECH_CACHE_DIR", str(tmp_path))
    z, q, k = sp.symbols("z q kappa")
    e = symbolic.LogH((k - sp.sqrt(q) * z) / sp.sqrt(1 - q))
    specs = {"GE": symbolic.Expectation(z, (q, k), (e, sp.diff(e, q))),
             "cap": symbolic.Scalar((k,), 1 / ((1 + k ** 2) * symbolic.H(-k) + k * symbolic.Gauss(k)))}
    import importlib.util
    path = tmp_path / "gen_kernels_test.py"
    path.write_text(symbolic.generate_source(specs))
    spec = importlib.util.spec_from_file_location("gen_kernels_test", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    ns = vars(mod)
    zs, ws = g.gauss_hermite(80)
    val, dval = ns["GE"](zs, ws, 0.5, 0.0)
    assert val == pytest.approx(-1.0, abs=1e-13)  # E log H(-z) = -1 exactly
    h = 1e-6
    fd = (ns["GE"](zs, ws, 0.5 + h, 0.0)[0] - ns["GE"](zs, ws, 0.5 - h, 0.0)[0]) / (2 * h)
    assert dval == pytest.approx(fd, rel=1e-7)
    assert ns["cap"](1.0) == pytest.approx(0.519572229605, rel=1e-11)
    np.testing.assert_allclose(ns["cap_v"](np.array([0.0, 1.0])), [2.0, 0.519572229605], rtol=1e-11)


def test_kernels_include_compiles_a_real_module_with_the_kernels(tmp_path, monkeypatch):
    """Hand-written numba code in a real .py file calls generated kernels (one module, cached)."""
    monkeypatch.setenv("STATMECH_CACHE_DIR", str(tmp_path / "cache"))
    pkg = tmp_path / "incpkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "_loop.py").write_text(
        "import typing\nimport numba\n\n"
        "if typing.TYPE_CHECKING:\n    from incpkg.model import cap\n\n\n"
        "@numba.njit(cache=True)\ndef cap_sum(ks):\n    s = 0.0\n"
        "    for k in ks:\n        s += cap(k)\n    return s\n")
    (pkg / "model.py").write_text(
        "import sympy as sp\nfrom statmech.symbolic import Scalar, H, Gauss, kernels\n\n\n"
        "@kernels(include=('incpkg._loop',))\ndef K():\n    k = sp.Symbol('kappa')\n"
        "    return {'cap': Scalar((k,), 1 / ((1 + k ** 2) * H(-k) + k * Gauss(k)))}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import importlib
    model = importlib.import_module("incpkg.model")
    assert model.K.cap_sum(np.array([0.0, 1.0])) == pytest.approx(2.519572229605, rel=1e-11)
    key1 = model.K._key()[0]
    (pkg / "_loop.py").write_text((pkg / "_loop.py").read_text().replace("s += cap(k)", "s += 2 * cap(k)"))
    assert model.K._key()[0] != key1              # an edited include regenerates the module
    (pkg / "_bad.py").write_text("from . import model\n")
    with pytest.raises(ValueError, match="absolute imports"):
        symbolic.generate_source({}, include=("incpkg._bad",))


# --------------------------------------------------------------- errors, CLI
def test_validation_messages_name_the_argument():
    with pytest.raises(ValueError, match=r"alpha must be >= 0, got -1.0"):
        check_range("alpha", -1.0, 0.0)
    with pytest.raises(ValueError, match="q must be in"):
        check_range("q", [0.2, 1.5], 0.0, 1.0, hi_open=True)
    with pytest.raises(ValueError, match="alpha must not be NaN"):
        check_range("alpha", float("nan"), 0.0)
    with pytest.raises(ValueError, match="K must be an odd integer"):
        check_odd_int("K", 4)


def test_cli_bad_argument_is_one_line_exit_2():
    p = subprocess.run([sys.executable, "-m", "statmech", "figures", "--bogus"], capture_output=True, text=True)
    assert p.returncode == 2
    assert len(p.stderr.strip().splitlines()) == 1 and "Traceback" not in p.stderr
    p = subprocess.run([sys.executable, "-m", "statmech", "nonsense"], capture_output=True, text=True)
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1


def test_atomic_write_is_complete_and_honours_umask(tmp_path):
    import os
    from statmech.io import atomic_write_json, atomic_write_text
    p = tmp_path / "a.txt"
    atomic_write_text(p, "hello")
    assert p.read_text() == "hello"
    mask = os.umask(0o022)
    os.umask(mask)
    assert (p.stat().st_mode & 0o777) == (0o666 & ~mask)
    atomic_write_json(tmp_path / "b.json", {"x": 1})
    assert (tmp_path / "b.json").read_text().strip().startswith("{")
    assert not [f for f in os.listdir(tmp_path) if f.endswith(".tmp")]


def test_import_without_numba_names_the_missing_dependency():
    """``import statmech`` needs numpy and scipy only; using a compiled module without numba
    raises ModuleNotFoundError naming numba and the install command (not a bare traceback)."""
    import subprocess
    import sys
    code = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path, target=None):\n"
        "        if name == 'numba' or name.startswith('numba.'):\n"
        "            raise ModuleNotFoundError(\"No module named 'numba'\", name='numba')\n"
        "sys.meta_path.insert(0, Block())\n"
        "import statmech\n"
        "assert statmech.ConvergenceError and statmech.SaddlePoint\n"
        "try:\n"
        "    statmech.log_H\n"
        "except ModuleNotFoundError as exc:\n"
        "    assert exc.name == 'numba' and 'pip install' in str(exc), exc\n"
        "    print('named')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "named"
