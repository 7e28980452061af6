"""Every notebook's exercise checker accepts a right answer and rejects a wrong one.

The exercise cells of a notebook (tagged ``exercise``) are self-contained: they import what
they need and set the exercise up. The cell tagged ``answer`` ships blank (``answer =
None``: the full-notebook run checks that the checker then says "not yet" without an
error); its metadata ``ansor_lab.solution`` and ``ansor_lab.wrong`` hold a right and a wrong
answer. Here the exercise cells run in a fresh kernel with the right answer, then the answer
and checker cells again with the wrong one.
"""

from __future__ import annotations

from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def exercise_cells(path: Path) -> list:
    nb = nbformat.read(path, as_version=4)
    return [c for c in nb.cells if "exercise" in c.metadata.get("tags", [])]


def checker_outputs(nb) -> list[str]:
    """The text of every checker result (the check_schedule / check_value displays)."""
    out = []
    for cell in nb.cells:
        for o in cell.get("outputs", []):
            text = o.get("data", {}).get("text/plain", "")
            if "correct" in text or "not yet" in text:
                out.append(text)
    return out


def test_every_notebook_has_a_checked_exercise() -> None:
    course = [p for p in NOTEBOOKS if p.name[:2] in {"00", "01", "02", "03", "04", "07", "08"}]
    assert len(course) == 7, [p.name for p in NOTEBOOKS]
    for path in course:
        cells = exercise_cells(path)
        answers = [c for c in cells if "answer" in c.metadata.get("tags", [])]
        assert answers, f"{path.name}: no cell tagged exercise+answer"
        for c in answers:
            meta = c.metadata.get("ansor_lab", {})
            assert "answer = None" in c.source, f"{path.name}: the answer must ship blank"
            assert meta.get("solution") and meta.get("wrong"), path.name


@pytest.mark.slow
@pytest.mark.parametrize("path", [p for p in NOTEBOOKS if exercise_cells(p)], ids=lambda p: p.name)
def test_checker_accepts_right_and_rejects_wrong(path: Path, kernel_name: str) -> None:
    cells = exercise_cells(path)
    run = []
    for c in cells:
        if "answer" in c.metadata.get("tags", []):
            run.append(nbformat.v4.new_code_cell(c.metadata["ansor_lab"]["solution"]))
        else:
            run.append(nbformat.v4.new_code_cell(c.source))
    # then every answer again, wrong this time, each followed by the cell after it (its check)
    for k, c in enumerate(cells):
        if "answer" in c.metadata.get("tags", []):
            run.append(nbformat.v4.new_code_cell(c.metadata["ansor_lab"]["wrong"]))
            run.append(nbformat.v4.new_code_cell(cells[k + 1].source))
    nb = nbformat.v4.new_notebook(cells=run)
    client = nbclient.NotebookClient(
        nb,
        kernel_name=kernel_name,
        timeout=300,
        allow_errors=False,
        resources={"metadata": {"path": str(path.parent)}},
    )
    client.execute()
    results = checker_outputs(nb)
    n = sum("answer" in c.metadata.get("tags", []) for c in cells)
    assert len(results) == 2 * n, results
    for text in results[:n]:
        assert ": correct:" in text, f"{path.name}: the right answer was refused: {text}"
    for text in results[n:]:
        assert ": not yet:" in text, f"{path.name}: the wrong answer was accepted: {text}"
