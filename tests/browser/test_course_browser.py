"""Every course notebook, opened in JupyterLab in Debian's Chromium and run top to bottom.

One JupyterLab server (this venv) serves a copy of notebooks/ for the whole module; each
notebook gets a fresh page, Run -> Run All Cells, and waits until every code cell shows an
execution count. The notebook is then saved from the page and read back from disk: every
code cell ran, no output is an error, and its printed content passes the checks of
``notebook_checks.CHECKS`` (the ones test_notebooks.py applies to an nbclient run). The
key picture of each notebook (a cell chosen by a snippet of its code) is saved as a PNG
in the artifacts dir ($ANSOR_LAB_ARTIFACTS, else ansor_lab_artifacts/ in the temp dir).

Skipped, with the reason, where Chromium or Playwright is missing (see
test_notebook_browser.py, whose server and browser helpers this test reuses).
"""

from __future__ import annotations

import json
import re
import shutil
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from notebook_checks import CHECKS, text_of
from test_notebook_browser import (
    CHROMIUM,
    CHROMIUM_ARGS,
    artifact_dir,
    jupyterlab_server,
    nbformat,
    sync_api,
)

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))

#: notebook -> snippets of the code cells whose output is its key picture
KEY_PICTURES = {
    "00_why_scheduling.ipynb": [
        "hierarchy_figure(points, levels)",
        "hierarchical_roofline_figure(",
    ],
    "01_tensor_expressions.ipynb": ["show(dag)"],
    "02_manual_scheduling.ipynb": ["GFLOPS per step (higher is better)"],
    "03_auto_scheduling.ipynb": ["the search curve (GFLOPS"],
    "04_reading_the_search.ipynb": ["roofline_figure(kernels, peaks"],
    "05_gpu_scheduling.ipynb": ["picture = thread_map(mod3)"],
    "06_tensorir.ipynb": ["mm_relu 128x128, one core", "a random search over the stochastic"],
    "07_gemm_story.ipynb": ["iteration_order_svg(*panels", "roofline_figure(points, peaks"],
    "08_tuning_a_network.ipynb": ["the task scheduler's allocation"],
}

ALL_RAN = """() => {
  const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
  if (!panel) return false;
  const prompts = [...panel.querySelectorAll('.jp-CodeCell .jp-InputPrompt')];
  return prompts.length > 0 && prompts.every(p => /\\[\\d+\\]/.test(p.textContent));
}"""


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str, Path]]:
    """One server for every notebook; cells rendered all at once (no windowing), so that
    every cell's prompt and output is in the page."""
    tmp = tmp_path_factory.mktemp("course_lab")
    with jupyterlab_server(tmp) as (url, token, nbdir):
        tracker = (
            tmp / "settings" / "@jupyterlab" / "notebook-extension" / "tracker.jupyterlab-settings"
        )
        tracker.write_text(json.dumps({"autoStartDefaultKernel": True, "windowingMode": "none"}))
        for nb in NOTEBOOKS:
            shutil.copy(nb, nbdir / nb.name)
        yield url, token, nbdir


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator:
    profile = tmp_path_factory.mktemp("profile")
    with sync_api.sync_playwright() as pw:
        ctx = pw.chromium.launch_persistent_context(
            str(profile),
            executable_path=CHROMIUM,
            headless=True,
            args=CHROMIUM_ARGS,
            viewport={"width": 1400, "height": 1600},
        )
        try:
            yield ctx
        finally:
            ctx.close()


def shut_down_kernels(url: str, token: str) -> None:
    """Free the core for the next notebook."""
    with urllib.request.urlopen(f"{url}/api/kernels?token={token}", timeout=10) as r:
        kernels = json.load(r)
    for k in kernels:
        req = urllib.request.Request(f"{url}/api/kernels/{k['id']}?token={token}", method="DELETE")
        urllib.request.urlopen(req, timeout=30).close()


def test_every_notebook_has_a_key_picture() -> None:
    assert {p.name for p in NOTEBOOKS} <= set(KEY_PICTURES)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_runs_in_jupyterlab(path: Path, lab, browser) -> None:
    url, token, nbdir = lab
    out = artifact_dir() / "course"
    out.mkdir(exist_ok=True)
    stem = path.stem
    page = browser.new_page()
    page.set_default_timeout(240_000)
    try:
        page.goto(f"{url}/lab/tree/{path.name}?token={token}&reset")
        page.wait_for_selector(".jp-Notebook .jp-Cell", state="visible")
        page.get_by_text(re.compile(r"\| Idle")).first.wait_for()
        page.get_by_role("menuitem", name="Run", exact=True).click()
        page.get_by_role("menuitem", name="Run All Cells", exact=True).click()
        page.wait_for_function(ALL_RAN, timeout=480_000, polling=1000)
        page.get_by_text(re.compile(r"\| Idle")).first.wait_for()
        page.wait_for_timeout(1500)  # plotly draws after the output arrives
        shots = []
        for k, snippet in enumerate(KEY_PICTURES[path.name]):
            cell = page.locator(".jp-CodeCell", has_text=snippet).first
            cell.scroll_into_view_if_needed()
            page.wait_for_timeout(500)
            shot = out / f"{stem}_{k}.png"
            cell.locator(".jp-OutputArea").first.screenshot(path=str(shot))
            shots.append(shot)
        page.keyboard.press("Control+s")
        page.wait_for_timeout(2000)
    except Exception:
        page.screenshot(path=str(out / f"{stem}_failure.png"), full_page=True)
        raise
    finally:
        page.close()
        shut_down_kernels(url, token)
    nb = nbformat.read(nbdir / path.name, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.execution_count for c in code), "a cell did not run (or the save failed)"
    errors = [o for c in code for o in c.outputs if o.output_type == "error"]
    assert not errors, [f"{o.ename}: {o.evalue}" for o in errors]
    # what the notebook teaches, as test_notebooks.py checks it (which this test replaces
    # where both are collected: tests/conftest.py)
    CHECKS[path.name](text_of(nb))
    for shot in shots:
        assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 5_000
        print(f"key picture: {shot}")
