"""Every notebook in notebooks/ runs top to bottom (each within 60 s by default)."""
import os
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NB_DIR = Path(__file__).resolve().parent.parent / "notebooks"
NOTEBOOKS = sorted(NB_DIR.glob("*.ipynb"))


# the tree-committee notebook runs RQMC 1RSB points (~1 min on 2 cores): slow
_RUNS = [pytest.param(p, marks=pytest.mark.slow) if p.name.startswith("03_") else p for p in NOTEBOOKS]


@pytest.mark.parametrize("path", _RUNS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs(path, tmp_path):
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=int(os.environ.get("STATMECH_NB_TIMEOUT", "60")),
                            kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}})
    client.execute()
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_is_committed_unexecuted(path):
    """Executed copies come from the documentation build (docs/conf.py), never from git."""
    nb = nbformat.read(path, as_version=4)
    assert not [c for c in nb.cells if c.cell_type == "code" and (c.get("outputs") or c.get("execution_count"))]
