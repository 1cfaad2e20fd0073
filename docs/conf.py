"""Sphinx configuration of the statmech documentation site.

Build with ``python -m sphinx -W -b html docs docs/_build/html`` (``pip install -e ".[docs]"``).

Generated at build time, never committed (see .gitignore):

* ``docs/api/`` -- one page per public module, listing every name of its ``__all__``
  (written by :func:`write_api_pages`), and ``docs/api/generated/`` -- one page per public
  name (autosummary stubs);
* ``docs/notebooks/`` -- copies of ``notebooks/*.ipynb`` (committed unexecuted), executed by
  myst-nb during the build, and their index page;
* ``docs/models/index.md`` -- the section page listing every model document ``docs/*.md``
  (a new document appears there by itself, in :data:`MODEL_ORDER` or after those);
* ``docs/_build/`` -- the site, and the notebook execution cache when ``cache`` mode is on.

Environment variables (for working on the docs; the defaults are what the test builds):

``STATMECH_DOCS_EXECUTE``
    myst-nb execution mode: ``force`` (default: every notebook runs at every build, so the
    plots always come from the current code), ``cache`` (re-run a notebook only when its code
    cells change; cache in ``docs/_build/.jupyter_cache``) or ``off``.
``STATMECH_DOCS_SKIP_API``
    Comma-separated module names relative to ``statmech`` (``scm,committee,simulate.tcm``) whose
    API pages are left out, to get a clean build while a module is being rewritten.
"""
from __future__ import annotations

import importlib
import importlib.util
import inspect
import json
import os
import pkgutil
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
# the statmech of this checkout, installed or not, here and in the notebook kernels
sys.path.insert(0, str(ROOT))
os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
# The notebook kernels inherit this environment: with MPLBACKEND set (the test suite sets it to
# Agg) ipykernel would not install its inline backend and the plots would be lost.
os.environ.pop("MPLBACKEND", None)

import statmech  # noqa: E402

project = "statmech"
author = "the statmech developers"
copyright = "the statmech developers"
release = version = statmech.__version__

extensions = [
    "myst_nb",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "numpydoc",
]

exclude_patterns = ["_build", "**.ipynb_checkpoints", "Thumbs.db", ".DS_Store"]
templates_path = ["_templates"]
root_doc = "index"

# ---------------------------------------------------------------- MyST and notebooks
# The model documents write mathematics as $...$, $$...$$ (also across lines) and
# indented blocks of Unicode formulas (kept as preformatted text, not highlighted).
myst_enable_extensions = ["dollarmath", "amsmath"]
myst_dmath_double_inline = True
myst_heading_anchors = 3
highlight_language = "none"

nb_execution_mode = os.environ.get("STATMECH_DOCS_EXECUTE", "force")
nb_execution_cache_path = str(DOCS / "_build" / ".jupyter_cache")
nb_execution_timeout = 900          # seconds per cell; the longest cells take ~1-2 min on a busy 2-core machine
nb_execution_raise_on_error = True  # a failing cell fails the build
nb_execution_show_tb = True
nb_merge_streams = True

# ---------------------------------------------------------------- API reference
autosummary_generate = True
autosummary_generate_overwrite = False
autodoc_typehints = "none"           # signatures as written; types are in the numpydoc sections
add_module_names = False
numpydoc_show_class_members = False  # class pages list their members themselves (template)
numpydoc_class_members_toctree = False

# ---------------------------------------------------------------- HTML
html_theme = "pydata_sphinx_theme"
html_title = f"statmech {release}"
html_theme_options = {
    "navbar_align": "left",
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version", "theme-version"],
}
html_show_sourcelink = False
html_static_path: list[str] = []

# Modules that are not library API: the command line and the figure scripts.
NOT_API = {"cli", "commands", "figures", "__main__"}
SKIP_API = {m.strip() for m in os.environ.get("STATMECH_DOCS_SKIP_API", "").split(",") if m.strip()}


# ---------------------------------------------------------------- public names
def api_modules():
    """The documented modules: ``statmech`` and every public submodule (``rsb`` too once it exists)."""
    names = ["statmech"]
    for info in pkgutil.iter_modules(statmech.__path__):
        if not info.name.startswith("_") and info.name not in NOT_API and info.name not in SKIP_API:
            names.append(f"statmech.{info.name}")
            # a model's ``advanced`` namespace (its method-specific entry points) has its own page
            if info.ispkg and importlib.util.find_spec(f"statmech.{info.name}.advanced") is not None:
                names.append(f"statmech.{info.name}.advanced")
    return names


def _kind(obj):
    if inspect.isclass(obj):
        return "Classes"
    if callable(obj):
        return "Functions"
    return "Constants"


def public_names(modname):
    """``{section title: [public names]}`` of a module, from ``__all__``.

    A package without ``__all__`` that re-exports its submodules' ``__all__`` lazily
    (``statmech.simulate``) is documented at its own import path, one section per
    submodule (the submodule that defines the object, for re-exported ones).
    Submodule entries of ``statmech.__all__`` are left out (they have their own page).
    """
    mod = importlib.import_module(modname)
    sections: dict[str, list[str]] = {}
    if hasattr(mod, "__all__"):
        for name in mod.__all__:
            obj = getattr(mod, name)
            if inspect.ismodule(obj) or name.startswith("__"):
                continue
            sections.setdefault(_kind(obj), []).append(name)
        order = ("Classes", "Functions", "Constants")
        return {k: sections[k] for k in order if k in sections}
    seen = set()
    subs = [i.name for i in pkgutil.iter_modules(mod.__path__) if not i.name.startswith("_")]
    for sub in sorted(subs):
        if f"{modname}.{sub}".removeprefix("statmech.") in SKIP_API:
            continue
        submod = importlib.import_module(f"{modname}.{sub}")
        for name in getattr(submod, "__all__", ()):
            obj = getattr(submod, name)
            home = getattr(obj, "__module__", None)
            if name in seen or (home and home != submod.__name__ and home.rsplit(".", 1)[-1] in subs):
                continue  # documented with the submodule that defines it
            seen.add(name)
            sections.setdefault(f"{modname}.{sub}", []).append(name)
    return sections


def _write_if_changed(path: Path, text: str):
    if not path.exists() or path.read_text() != text:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def _title(text, char="="):
    return f"{text}\n{char * len(text)}\n"


def write_api_pages():
    """Write docs/api/index.rst and one page per module listing its public names."""
    api = DOCS / "api"
    mods = api_modules()
    index = [_title("API reference"), "Every public name of statmech, one page each, generated from the",
             "docstrings and the modules' ``__all__``.\n", ".. toctree::", "   :maxdepth: 1\n"]
    index += [f"   {m}" for m in mods]
    _write_if_changed(api / "index.rst", "\n".join(index) + "\n")
    stubs = set()
    for modname in mods:
        lines = [_title(modname), f".. automodule:: {modname}\n", f".. currentmodule:: {modname}\n"]
        for section, names in public_names(modname).items():
            stubs |= {f"{modname}.{n}" for n in names}
            lines.append(_title(section, "-"))
            if "." in section:  # a submodule of a lazily re-exporting package
                lines.append(f"Defined in ``{section}``.\n")
            lines += [".. autosummary::", "   :toctree: generated", "   :nosignatures:", ""]
            lines += [f"   {n}" for n in names]
            lines.append("")
        _write_if_changed(api / f"{modname}.rst", "\n".join(lines))
    for stale in api.glob("statmech*.rst"):
        if stale.stem not in mods:
            stale.unlink()
    for stale in api.glob("generated/*.rst"):  # a name removed from an __all__, or a skipped module
        if stale.stem not in stubs:
            stale.unlink()


#: order of the model documents on the "Models and methods" page; any other docs/*.md follows
MODEL_ORDER = ["perceptron", "scm", "online", "committee", "rsb", "franz_parisi", "negative_margin", "activations",
               "continuation", "algorithms", "simulation"]
#: documents of the root page's own navigation, not model documents
ROOT_DOCS = {"index", "developing"}


def write_section_pages():
    """docs/models/index.md and docs/notebooks/index.md: the sections of the site's navigation."""
    found = sorted(p.stem for p in DOCS.glob("*.md") if p.stem not in ROOT_DOCS)
    order = [d for d in MODEL_ORDER if d in found] + [d for d in found if d not in MODEL_ORDER]
    _write_if_changed(DOCS / "models" / "index.md", "\n".join([
        "# Models and methods", "",
        "One document per model or method: the equations as derived here, the papers they follow",
        "and the corrections to them, and how every number was checked (mpmath quadrature, an independent",
        "solver, simulation).", "", "```{toctree}", ":maxdepth: 1", ""] + [f"/{d}" for d in order] + ["```", ""]))
    _write_if_changed(DOCS / "notebooks" / "index.md", "\n".join([
        "# Notebooks", "",
        "One notebook per model. The notebooks are kept without outputs in the repository",
        "(`notebooks/`); the pages below were executed when this site was built, so every number",
        "and plot comes from the code the site documents.", "",
        "```{toctree}", ":maxdepth: 1", ":glob:", "", "*", "```", ""]))


def copy_notebooks():
    """Copy notebooks/*.ipynb (unexecuted) to docs/notebooks/, where myst-nb executes them.

    A notebook without a kernelspec gets the ``python3`` kernel (the one the test suite uses).
    """
    out = DOCS / "notebooks"
    out.mkdir(exist_ok=True)
    sources = sorted((ROOT / "notebooks").glob("*.ipynb"))
    for src in sources:
        nb = json.loads(src.read_text())
        nb.setdefault("metadata", {}).setdefault(
            "kernelspec", {"display_name": "Python 3", "language": "python", "name": "python3"})
        _write_if_changed(out / src.name, json.dumps(nb, indent=1, ensure_ascii=False) + "\n")
    for stale in out.glob("*.ipynb"):
        if not (ROOT / "notebooks" / stale.name).exists():
            stale.unlink()


write_api_pages()
copy_notebooks()
write_section_pages()


# ---------------------------------------------------------------- constants' docstrings
def _attribute_doc(modname, name):
    """The ``#:`` comment above a module-level constant, looked up in ``modname`` and, when a
    package re-exports the constant (``statmech.continuation.KINDS``,
    ``statmech.simulate.MAX_N``), in the package's submodules."""
    from sphinx.pycode import ModuleAnalyzer
    from sphinx.errors import PycodeError

    mod = importlib.import_module(modname)
    subs = [f"{modname}.{i.name}" for i in pkgutil.iter_modules(getattr(mod, "__path__", []))]
    for candidate in [modname] + subs:
        try:
            docs = ModuleAnalyzer.for_module(candidate).find_attr_docs()
        except PycodeError:
            continue
        if ("", name) in docs:
            return list(docs[("", name)])
    return []


def _document_constant(app, what, name, obj, options, lines):
    """A constant is described by its ``#:`` comment, never by its type's docstring (``int``...)."""
    if what == "data":
        modname, attr = name.rsplit(".", 1)
        lines[:] = _attribute_doc(modname, attr)


def _summaries_keep_references():
    """The summary tables show a docstring's first sentence; autosummary ends it at ". ", so
    "(thesis Eq. 2.29)" would cut it at "Eq.".  Teach it the abbreviations the docstrings use."""
    from sphinx.ext import autosummary

    autosummary.WELL_KNOWN_ABBREVIATIONS = tuple(autosummary.WELL_KNOWN_ABBREVIATIONS) + (
        "Eq.", "Eqs.", "Sec.", "Secs.", "Fig.", "Figs.", "App.", "Ref.", "cf.", "vs.")


def setup(app):
    _summaries_keep_references()
    app.connect("autodoc-process-docstring", _document_constant)
