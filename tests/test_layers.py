"""The layers of docs/developing.md, enforced on the import statements of statmech/.

core (gaussian, symbolic, saddle, errors, io, sweep, continuation, rsb)
  -> models (perceptron, scm, committee, franz_parisi, activations)
  -> simulate
  -> figures, commands, cli

A module imports only from its own layer or the layers before it; a package's private
modules and private names (a leading underscore) are used only inside that package.
"""
import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "statmech"

CORE = {"gaussian", "symbolic", "saddle", "errors", "result", "io", "sweep", "continuation", "rsb", "_blas", "_linalg_nb", "_nb", "_deprecation"}
MODELS = {"perceptron", "scm", "committee", "franz_parisi", "activations"}
SIMULATE = {"simulate"}
TOP = {"figures", "commands", "cli", "__main__"}
LAYER = {**{n: 0 for n in CORE}, **{n: 1 for n in MODELS}, **{n: 2 for n in SIMULATE}, **{n: 3 for n in TOP}}


def _modules():
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT.parent).with_suffix("")
        parts = list(rel.parts)
        is_pkg = parts[-1] == "__init__"
        if is_pkg:
            parts = parts[:-1]
        yield path, ".".join(parts), is_pkg


def _imports(path, modname, is_pkg):
    """(module, name or None, line) for every import in the file, and for every attribute
    ``alias._name`` taken from a statmech module bound to ``alias`` by an import."""
    tree = ast.parse(path.read_text(), filename=str(path))
    package = modname if is_pkg else modname.rpartition(".")[0]
    aliases = {}                                   # local name -> statmech module it is bound to
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.asname:
                    aliases[a.asname] = a.name
                yield a.name, None, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            for a in node.names:
                if mod == "statmech" or mod.startswith("statmech."):
                    aliases[a.asname or a.name] = f"{mod}.{a.name}"
                yield mod, a.name, node.lineno
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                and node.attr.startswith("_") and not node.attr.startswith("__") \
                and node.value.id in aliases and aliases[node.value.id].startswith("statmech."):
            yield aliases[node.value.id], node.attr, node.lineno


def _top(modname):
    """The first component below ``statmech`` (``statmech.perceptron._common`` -> perceptron)."""
    parts = modname.split(".")
    return parts[1] if len(parts) > 1 else None


def _violations():
    out = []
    for path, modname, is_pkg in _modules():
        me = _top(modname)
        if me is None:              # statmech/__init__.py: imports the core only (checked below)
            me_layer = 0
        else:
            me_layer = LAYER.get(me)
            assert me_layer is not None, f"{modname}: unknown top-level module, add it to a layer in {__file__}"
        for mod, name, line in _imports(path, modname, is_pkg):
            if not (mod == "statmech" or mod.startswith("statmech.")):
                continue
            target = _top(mod)
            if target is None and name is not None and name.startswith("__"):   # __version__
                continue
            if target is None and name is not None:          # from statmech import x
                target, mod = name, f"statmech.{name}"
                name = None
            if target is None or target == me or {target, me} == {"cli", "commands"}:
                continue                         # cli.py and commands/ are one package
            where = f"{path.relative_to(ROOT.parent)}:{line}"
            t_layer = LAYER.get(target)
            if t_layer is None:
                out.append(f"{where}: imports unknown module {mod}")
                continue
            if t_layer > me_layer:
                out.append(f"{where}: layer {me_layer} ({me}) imports layer {t_layer} ({mod})")
            if me_layer < 3 and target in {"commands", "figures", "cli"}:
                out.append(f"{where}: the library imports {mod}")
            private_module = any(p.startswith("_") for p in mod.split(".")[2:])
            private_name = name is not None and name.startswith("_") and name != "__version__"
            if private_module or private_name:
                out.append(f"{where}: uses the private {mod}{'.' + name if name else ''} of another package")
    return out


def test_the_walk_sees_every_layer():
    tops = {_top(m) for _, m, _ in _modules()} - {None}
    assert tops >= CORE - {"rsb"} | MODELS | SIMULATE | {"figures", "commands", "cli"}


def test_imports_follow_the_layers():
    bad = _violations()
    assert not bad, "layering violations:\n" + "\n".join(bad)


def test_commands_do_not_compute():
    """A command module parses arguments, calls the library and prints: it defines no
    numerics of its own: no scipy/numba/sympy/mpmath, and no use of the continuation engine
    (a model's continuation problem and its lines are built in the model's package).  numpy
    is allowed, for holding and printing the arrays the library returns."""
    bad = []
    for path in sorted((ROOT / "commands").glob("*.py")):
        for mod, name, line in _imports(path, f"statmech.commands.{path.stem}", False):
            if mod.split(".")[0] in {"scipy", "numba", "sympy", "mpmath"} or \
                    mod == "statmech.continuation" or (mod == "statmech" and name == "continuation"):
                bad.append(f"{path.name}:{line}: imports {mod}{'.' + name if name else ''}")
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("snippet, expected", [
    ("from ..perceptron._common import x\n", "private"),
    ("from ..figures import save\n", "the library imports"),
    ("from .. import gaussian as gs\nx = gs._ts_rule(3)\n", "private"),
])
def test_the_checker_catches_violations(tmp_path, monkeypatch, snippet, expected):
    """The checker itself can fail: a planted bad import in a model is reported."""
    pkg = tmp_path / "statmech" / "scm"
    pkg.mkdir(parents=True)
    (tmp_path / "statmech" / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "bad.py").write_text(snippet)
    monkeypatch.setattr(__import__(__name__), "ROOT", tmp_path / "statmech")
    assert any(expected in v for v in _violations())
