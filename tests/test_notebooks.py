"""Execute every notebook in notebooks/ with nbclient and check that its figures render.

Notebooks are committed without outputs; each ends with assertions on the numbers its
conclusion cites, so executing it is the test. A notebook that needs modules not in
this checkout lists them in its metadata (``simnet.requires``) and is skipped without them.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))
TIMEOUT_S = 120


def test_there_are_four_notebooks():
    assert [path.stem[:2] for path in NOTEBOOKS] == ["01", "02", "03", "04"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_is_committed_without_outputs(path):
    notebook = nbformat.read(path, as_version=4)
    nbformat.validate(notebook)
    for cell in notebook.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, f"{path.name}: strip the outputs"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_executes_and_renders_its_figures(path):
    notebook = nbformat.read(path, as_version=4)
    for module in notebook.metadata.get("simnet", {}).get("requires", []):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{path.name} needs {module}, which this checkout does not have")
    client = nbclient.NotebookClient(
        notebook, kernel_name="python3", timeout=TIMEOUT_S, resources={"metadata": {"path": str(path.parent)}}
    )
    client.execute()
    outputs = [output for cell in notebook.cells if cell.cell_type == "code" for output in cell.outputs]
    assert not [output for output in outputs if output.output_type == "error"]
    figures = [output for output in outputs if "image/png" in output.get("data", {})]
    assert figures, f"{path.name} rendered no figure"
    assert "## Conclusion" in "".join(cell.source for cell in notebook.cells if cell.cell_type == "markdown")
