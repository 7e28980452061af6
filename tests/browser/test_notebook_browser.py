"""The notebook experience in a real browser: JupyterLab + Debian's Chromium via Playwright.

A temporary notebook tunes a small matmul with the live tuning widget and opens the
schedule explorer on it. The test runs all cells from JupyterLab's menu and reads the
page: the tuning plot has points, the progress bar advanced, the explorer's IR pane shows
the program, and clicking Apply (a split) changes the IR. A screenshot is saved as an
artifact (its path is printed: $ANSOR_LAB_ARTIFACTS, or ansor_lab_artifacts/ in the temp dir).

Skipped, with the reason, where /usr/bin/chromium or Playwright for Python is missing
(``apt-get install -y chromium``; ``pip install playwright``; never ``playwright install``).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
if not os.path.exists(CHROMIUM):
    pytest.skip(f"{CHROMIUM} is missing (apt-get install -y chromium)", allow_module_level=True)
sync_api = pytest.importorskip(
    "playwright.sync_api", reason="Playwright for Python is missing (pip install playwright)"
)
pytest.importorskip("jupyterlab", reason="JupyterLab is missing (pip install -e '.[jupyter]')")
pytest.importorskip("ipywidgets", reason="ipywidgets is missing (pip install -e '.[jupyter]')")
nbformat = pytest.importorskip("nbformat")
pytest.importorskip("ipykernel")

import ansor_lab  # noqa: E402

ROOT = Path(ansor_lab.__file__).resolve().parents[1]

SETUP = """\
from ansor_lab import auto_scheduler, te
from ansor_lab.jupyter import ScheduleExplorer

A = te.placeholder((32, 32), name="A")
B = te.placeholder((32, 32), name="B")
k = te.reduce_axis((0, 32), name="k")
C = te.compute((32, 32), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
task = auto_scheduler.SearchTask(compute_dag=auto_scheduler.ComputeDAG([A, B, C]),
                                 target="llvm")
"""
TUNE = """\
w = auto_scheduler.tune_widget(
    task, trials=8, num_measures_per_round=4, seed=0,
    runner=auto_scheduler.LocalRunner(number=1, min_repeat_ms=1, timeout=60),
    policy_params={"sample_init_min_population": 8, "population": 16, "generations": 1})
"""
EXPLORE = "ex = ScheduleExplorer(te.create_prim_func([A, B, C]))\n"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def write_settings(settings: Path) -> None:
    """No kernel-selection dialog, no news prompt (see RECIPES)."""
    tracker = settings / "@jupyterlab" / "notebook-extension" / "tracker.jupyterlab-settings"
    tracker.parent.mkdir(parents=True)
    tracker.write_text(json.dumps({"autoStartDefaultKernel": True}))
    news = settings / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings"
    news.parent.mkdir(parents=True)
    news.write_text(json.dumps({"fetchNews": "false"}))


@contextlib.contextmanager
def jupyterlab_server(tmp_path: Path) -> Iterator[tuple[str, str, Path]]:
    """A JupyterLab server of this venv on a free port: (url, token, notebook dir)."""
    nbdir, runtime, settings, workspaces = (
        tmp_path / d for d in ("notebooks", "runtime", "settings", "workspaces")
    )
    for d in (nbdir, runtime, workspaces):
        d.mkdir()
    write_settings(settings)
    token = secrets.token_hex(16)
    port = free_port()
    env = dict(os.environ)
    env.update(
        {
            "JUPYTER_RUNTIME_DIR": str(runtime),
            "JUPYTERLAB_SETTINGS_DIR": str(settings),
            "JUPYTERLAB_WORKSPACES_DIR": str(workspaces),
            "PYTHONPATH": os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])]),
            "OMP_NUM_THREADS": "1",
        }
    )
    cmd = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        "--ip=127.0.0.1",
        f"--port={port}",
        f"--IdentityProvider.token={token}",
        "--allow-root",
        f"--ServerApp.root_dir={nbdir}",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    ]
    log = open(tmp_path / "lab.log", "w")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=2):
                    break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(
                        "JupyterLab did not start:\n" + (tmp_path / "lab.log").read_text()[-3000:]
                    ) from None
                time.sleep(0.3)
        yield url, token, nbdir
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[tuple[str, str, Path]]:
    """The server, stopped after the test."""
    with jupyterlab_server(tmp_path) as server:
        yield server


def write_notebook(nbdir: Path) -> str:
    nb = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell(c) for c in (SETUP, TUNE, EXPLORE)]
    )
    nb.metadata.kernelspec = {
        "name": "python3",
        "display_name": "Python 3 (ipykernel)",
        "language": "python",
    }
    nbformat.write(nb, nbdir / "browser_check.ipynb")
    return "browser_check.ipynb"


def artifact_dir() -> Path:
    """$ANSOR_LAB_ARTIFACTS, else a fixed folder under the temp dir (pytest's own tmp
    folders are rotated away by later runs)."""
    chosen = os.environ.get("ANSOR_LAB_ARTIFACTS")
    out = Path(chosen) if chosen else Path(tempfile.gettempdir()) / "ansor_lab_artifacts"
    out.mkdir(parents=True, exist_ok=True)
    return out


def test_tuning_widget_and_explorer_in_jupyterlab(lab, tmp_path: Path) -> None:
    url, token, nbdir = lab
    name = write_notebook(nbdir)
    shot = artifact_dir() / "notebook_browser.png"
    with sync_api.sync_playwright() as pw:
        ctx = pw.chromium.launch_persistent_context(
            str(tmp_path / "profile"),
            executable_path=CHROMIUM,
            headless=True,
            args=CHROMIUM_ARGS,
            viewport={"width": 1400, "height": 1800},
        )
        page = ctx.pages[0] if ctx.pages else ctx.new_page()
        page.set_default_timeout(240_000)  # patient: CI runs other tests on the same 2 cores
        try:
            page.goto(f"{url}/lab/tree/{name}?token={token}&reset")
            page.wait_for_selector(".jp-Notebook .jp-Cell", state="visible")
            # Run All before the kernel is connected runs nothing: wait for "| Idle"
            page.get_by_text(re.compile(r"\| Idle")).first.wait_for()
            page.get_by_role("menuitem", name="Run", exact=True).click()
            page.get_by_role("menuitem", name="Run All Cells", exact=True).click()

            # the tuning widget: measured points in its plot, its progress bar moved
            tune = page.locator(".jp-Cell").nth(1)
            tune.locator(".js-plotly-plot").first.wait_for(state="visible")
            page.wait_for_function(
                """() => { const c = document.querySelectorAll('.jp-Cell')[1];
                           return c && c.querySelectorAll('.js-plotly-plot .scatterlayer '
                             + 'path.point').length > 0; }""",
                timeout=300_000,
            )
            n_points = (
                tune.locator(".js-plotly-plot").first.locator(".scatterlayer path.point").count()
            )
            bar = tune.locator(".jupyter-widgets .progress .progress-bar").first
            page.wait_for_function(
                """() => { const b = document.querySelectorAll('.jp-Cell')[1]
                             .querySelector('.jupyter-widgets .progress .progress-bar');
                           return b && parseFloat(b.style.width) > 0; }"""
            )
            width = float(bar.evaluate("b => parseFloat(b.style.width)"))

            # the explorer: its IR pane shows the program; a clicked split changes it
            ir = page.locator(".ansor-explorer .ansor-ir").first
            ir.wait_for(state="visible")
            page.get_by_text(re.compile(r"\| Idle")).first.wait_for()  # all cells done
            before = ir.inner_text()
            # make the explorer's cell the active one first: activating a cell scrolls the
            # notebook, and a layout shift between mouse down and up loses a click
            page.locator(".jp-Cell").nth(2).locator(".jp-InputPrompt").click()
            apply = page.locator(".ansor-explorer .ansor-apply").first
            apply.scroll_into_view_if_needed()
            page.wait_for_timeout(500)
            changed = """(old) => { const p = document.querySelector('.ansor-explorer .ansor-ir');
                return p && p.innerText !== old
                       && p.querySelectorAll('.ansor-ir-changed').length > 0; }"""
            for attempt in range(2):
                apply.click()
                try:
                    page.wait_for_function(changed, arg=before, timeout=30_000)
                    break
                except sync_api.TimeoutError:
                    steps = page.locator(".ansor-explorer .ansor-history").first.inner_text()
                    if attempt or "no steps yet" not in steps:
                        raise
            after = ir.inner_text()
            history = page.locator(".ansor-explorer .ansor-history").first.inner_text()
            errors = page.locator(".jp-OutputArea-output[data-mime-type*='error']").count()
            page.screenshot(path=str(shot), full_page=True)
        except Exception:
            page.screenshot(path=str(shot), full_page=True)
            print(f"screenshot of the failure: {shot}")
            raise
        finally:
            ctx.close()
    print(f"screenshot: {shot}")
    assert n_points > 0 and 0 < width <= 100
    assert "@T.prim_func" in before and "for i in range(32):" in before
    assert "for i_0 in range(4):" in after and "for i_1 in range(8):" in after
    assert "split(C, loop=C.i, factor=8)" in history
    assert errors == 0, "a cell raised; see the screenshot"
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000
