"""The documentation site: builds with ``-W``, every public name has its page, every notebook
page shows its plots, the model documents' mathematics is rendered.

One full build (the notebooks are executed: ~9 min on the 2-core machine under load), so the test
is slow.
Needs the ``docs`` extra: ``pip install -e ".[docs]"``.
"""
import importlib
import inspect
import os
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import pytest

for _mod in ("sphinx", "myst_nb", "numpydoc", "pydata_sphinx_theme"):
    pytest.importorskip(_mod, reason=f"{_mod} missing: the docs extra is not installed (pip install -e '.[docs]')")

import statmech  # noqa: E402

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
# the modules the API reference must cover at least (new public modules are found too)
REQUIRED = {"statmech", "statmech.gaussian", "statmech.saddle", "statmech.symbolic", "statmech.errors",
            "statmech.io", "statmech.sweep", "statmech.continuation", "statmech.perceptron", "statmech.scm",
            "statmech.committee", "statmech.franz_parisi", "statmech.activations", "statmech.simulate"}
NOT_API = {"cli", "commands", "figures", "__main__"}  # command line and figure scripts


def public_modules():
    mods = {"statmech"} | {f"statmech.{i.name}" for i in pkgutil.iter_modules(statmech.__path__)
                           if not i.name.startswith("_") and i.name not in NOT_API}
    assert REQUIRED <= mods
    return sorted(mods)


def public_names(modname):
    """Every public name of a module: its ``__all__`` (submodules aside), or, for a package that
    re-exports its submodules lazily (``statmech.simulate``), the union of theirs."""
    mod = importlib.import_module(modname)
    if hasattr(mod, "__all__"):
        return [n for n in mod.__all__ if not n.startswith("__") and not inspect.ismodule(getattr(mod, n))]
    names = set()
    for info in pkgutil.iter_modules(mod.__path__):
        if not info.name.startswith("_"):
            names |= set(getattr(importlib.import_module(f"{modname}.{info.name}"), "__all__", ()))
    assert names, f"{modname} has neither __all__ nor public submodules with one"
    return sorted(names)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    out = tmp_path_factory.mktemp("site")
    env = {k: v for k, v in os.environ.items()
           if k not in ("MPLBACKEND", "STATMECH_DOCS_EXECUTE", "STATMECH_DOCS_SKIP_API")}
    cmd = [sys.executable, "-m", "sphinx", "-W", "-b", "html", "-d", str(out / "doctrees"),
           str(DOCS), str(out / "html")]
    r = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=3600)
    assert r.returncode == 0, f"{' '.join(cmd)} failed:\n{r.stderr[-20000:]}"
    return out / "html"


def test_every_public_name_has_a_page(site):
    missing = [f"{m}.{n}" for m in public_modules() for n in public_names(m)
               if not (site / "api" / "generated" / f"{m}.{n}.html").is_file()]
    assert not missing, f"no API page for {missing}"
    for m in public_modules():
        assert (site / "api" / f"{m}.html").is_file()


def test_a_page_documents_its_object(site):
    page = (site / "api" / "generated" / "statmech.perceptron.spherical_storage.html").read_text()
    assert 'id="statmech.perceptron.spherical_storage"' in page
    assert "Parameters" in page and "alpha" in page  # the numpydoc sections are rendered


def test_every_notebook_page_shows_a_plot(site):
    assert NOTEBOOKS
    for nb in NOTEBOOKS:
        page = (site / "notebooks" / f"{nb.stem}.html").read_text()
        images = re.findall(r'<img\s[^>]*src="([^"]+\.png)"', page)
        assert images, f"{nb.name}: no rendered image"
        for src in images:
            assert (site / "notebooks" / src).resolve().is_file(), f"{nb.name}: {src} not in the site"
        assert "Traceback" not in page


def test_model_documents_render_their_mathematics(site):
    for doc in sorted(DOCS.glob("*.md")):
        page = (site / f"{doc.stem}.html").read_text()
        prose = re.sub(r"```.*?```|`[^`\n]*`", "", doc.read_text(), flags=re.S)  # code is not math
        if "$" in prose:
            assert 'class="math' in page, f"{doc.name}: no rendered mathematics"
            text = re.sub(r"<(pre|code)\b.*?</\1>", "", page, flags=re.S)
            assert "$$" not in text, f"{doc.name}: unrendered $$"
