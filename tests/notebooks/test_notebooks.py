"""The course notebooks execute top to bottom in a fresh kernel and print what they teach.

The kernel is this test's own Python (a kernelspec installed into a temporary directory and
put first on JUPYTER_PATH), so CI checks the notebooks against the venv under test, never
against some other ``python3`` kernel found on the machine.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

import ansor_lab  # noqa: E402
from notebook_checks import CHECKS, text_of  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
CELL_TIMEOUT_S = 600


def execute(nb: nbformat.NotebookNode, kernel: str, cwd: Path) -> nbformat.NotebookNode:
    """Run every cell; nbclient raises CellExecutionError on the first failing cell."""
    client = nbclient.NotebookClient(
        nb,
        kernel_name=kernel,
        timeout=CELL_TIMEOUT_S,
        allow_errors=False,
        resources={"metadata": {"path": str(cwd)}},
    )
    client.execute()
    return nb


def test_there_are_notebooks() -> None:
    assert NOTEBOOKS, "notebooks/*.ipynb is empty"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_is_committed_without_outputs(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    assert nb.metadata.kernelspec.name == "python3"
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, (
                f"{path.name}: cell {cell.id} has outputs; clear them before committing"
            )


def test_kernel_is_this_python(kernel_name: str, tmp_path: Path) -> None:
    nb = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell(
                "import sys, ansor_lab; print(sys.prefix); print(ansor_lab.__file__)"
            )
        ]
    )
    out = text_of(execute(nb, kernel_name, tmp_path)).split()
    assert out[0] == sys.prefix
    assert Path(out[1]).resolve() == Path(ansor_lab.__file__).resolve()


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_runs_and_teaches(path: Path, kernel_name: str) -> None:
    nb = execute(nbformat.read(path, as_version=4), kernel_name, path.parent)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.execution_count is not None, f"cell {cell.id} did not run"
            assert not [o for o in cell.outputs if o.output_type == "error"]
    text = text_of(nb)
    assert "Traceback" not in text
    CHECKS.get(path.name, lambda _: None)(text)


def test_every_notebook_has_content_checks() -> None:
    missing = [p.name for p in NOTEBOOKS if p.name not in CHECKS]
    assert not missing, f"add a content check for {missing} to CHECKS"
