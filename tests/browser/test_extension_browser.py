"""The JupyterLab extension in a real browser (JupyterLab + Debian's Chromium, Playwright).

JupyterLab loads the prebuilt bundle of this checkout (ansor_lab/labextension, put on
JUPYTER_PATH), so the test checks what the wheel ships. A short real tune of a tiny matmul
writes a records log; the tests open it in the tuning-log viewer (by default for
``*.records.jsonl``, and by Open With -> Tuning log for a ``.json``) and read the page:
one curve point per valid record, one table row per record, the selected record's trace
as ``str(Trace)`` prints it, sorting, and the view following the file while a second tune
appends to it. A notebook executed by a real kernel and opened with no kernel running
shows the MIME renderers. A hostile log and hostile outputs (script tags, onerror images,
javascript: names) show as text and run nothing. Screenshots are saved as artifacts
($ANSOR_LAB_ARTIFACTS, or ansor_lab_artifacts/ in the temp dir; the paths are printed).
"""

from __future__ import annotations

import contextlib
import json
import os
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
nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

from workloads import fast_options, fast_policy, make_task, matmul  # noqa: E402

import ansor_lab  # noqa: E402
from ansor_lab.jupyter.labext import BUNDLE, NAME  # noqa: E402
from ansor_lab.jupyter.mime import RECORD_MIME, TRACE_MIME  # noqa: E402
from ansor_lab.measure.records import load_records  # noqa: E402
from ansor_lab.schedule.trace import Trace  # noqa: E402

ROOT = Path(ansor_lab.__file__).resolve().parents[1]
pytestmark = pytest.mark.slow

#: what the hostile log and outputs try to run: each sets window.__pwned
HOSTILE = {
    "workload": "<script>window.__pwned=1</script>",
    "error": '<img src=x onerror="window.__pwned=2">',
    "target": "javascript:window.__pwned=3",
    "sketch": "<b onmouseover=window.__pwned=4>bold</b>",
    "kind": "<img src=x onerror=window.__pwned=5>",
    "arg": "</pre><script>window.__pwned=6</script>",
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def artifact_dir() -> Path:
    """$ANSOR_LAB_ARTIFACTS, else a fixed folder under the temp dir."""
    chosen = os.environ.get("ANSOR_LAB_ARTIFACTS")
    out = Path(chosen) if chosen else Path(tempfile.gettempdir()) / "ansor_lab_artifacts"
    out.mkdir(parents=True, exist_ok=True)
    return out


@contextlib.contextmanager
def lab_with_extension(tmp: Path) -> Iterator[tuple[str, str, Path]]:
    """JupyterLab with this checkout's bundle on JUPYTER_PATH: (url, token, root dir).

    No kernel starts by itself (autoStartDefaultKernel off); the app is exposed as
    ``window.jupyterapp`` for the checks that read JupyterLab's own state."""
    root, runtime, settings, workspaces, data = (
        tmp / d for d in ("root", "runtime", "settings", "workspaces", "share")
    )
    for d in (root, runtime, workspaces, data / "labextensions"):
        d.mkdir(parents=True)
    (data / "labextensions" / NAME).symlink_to(BUNDLE, target_is_directory=True)
    for rel, value in (
        ("notebook-extension/tracker", {"autoStartDefaultKernel": False}),
        ("apputils-extension/notification", {"fetchNews": "false"}),
    ):
        path = settings / "@jupyterlab" / f"{rel}.jupyterlab-settings"
        path.parent.mkdir(parents=True)
        path.write_text(json.dumps(value))
    token, port = secrets.token_hex(16), free_port()
    env = dict(os.environ)
    env.update(
        JUPYTER_RUNTIME_DIR=str(runtime),
        JUPYTERLAB_SETTINGS_DIR=str(settings),
        JUPYTERLAB_WORKSPACES_DIR=str(workspaces),
        JUPYTER_PATH=os.pathsep.join([str(data), *filter(None, [env.get("JUPYTER_PATH")])]),
        PYTHONPATH=os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])]),
        OMP_NUM_THREADS="1",
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
        f"--ServerApp.root_dir={root}",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        "--LabApp.expose_app_in_browser=True",
    ]
    log = open(tmp / "lab.log", "w")  # noqa: SIM115 - closed below
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
                        "JupyterLab did not start:\n" + (tmp / "lab.log").read_text()[-3000:]
                    ) from None
                time.sleep(0.3)
        yield url, token, root
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


@pytest.fixture(scope="module")
def lab(tmp_path_factory) -> Iterator[tuple[str, str, Path]]:
    with lab_with_extension(tmp_path_factory.mktemp("lab")) as server:
        yield server


@pytest.fixture
def page(tmp_path: Path):
    with sync_api.sync_playwright() as pw:
        ctx = pw.chromium.launch_persistent_context(
            str(tmp_path / "profile"),
            executable_path=CHROMIUM,
            headless=True,
            args=CHROMIUM_ARGS,
            viewport={"width": 1400, "height": 1100},
        )
        pg = ctx.pages[0] if ctx.pages else ctx.new_page()
        pg.set_default_timeout(120_000)  # patient: CI runs other tests on the same cores
        try:
            yield pg
        finally:
            ctx.close()


def tune_into(log: Path, trials: int, seed: int = 0) -> None:
    """A short real tune of a 16x16 matmul, appending to ``log`` (RecordToFile)."""
    task = make_task(matmul(16))
    task.tune(fast_options(str(log), trials, 4), search_policy=fast_policy(task, seed=seed))


def shot(pg, name: str) -> Path:
    path = artifact_dir() / name
    pg.screenshot(path=str(path), full_page=True)
    print(f"screenshot: {path}")
    return path


def no_script_ran(pg, root: str) -> None:
    """Nothing hostile executed and no active markup got into the page under ``root``."""
    assert pg.evaluate("() => window.__pwned") is None
    found = pg.evaluate(
        """(sel) => {
           const all = [...document.querySelector(sel).querySelectorAll('*')];
           const active = ['SCRIPT', 'IMG', 'IFRAME', 'OBJECT', 'A', 'B'];
           return { tags: all.filter(e => active.includes(e.tagName)).length,
                    handlers: all.filter(e => [...e.attributes].some(
                      a => a.name.startsWith('on') || /javascript:/i.test(a.value))).length };
        }""",
        root,
    )
    assert found == {"tags": 0, "handlers": 0}


def best_record(log: Path) -> tuple:
    valid = [(inp, res) for inp, res in load_records(str(log)) if res.error_no == 0]
    return min(valid, key=lambda pair: pair[1].mean_cost)


def test_log_viewer_shows_a_real_log_and_follows_it(lab, page, tmp_path: Path) -> None:
    url, token, root = lab
    log = root / "mm.records.jsonl"
    tune_into(log, 8)
    records = list(load_records(str(log)))
    valid = [r for r in records if r[1].error_no == 0]
    assert len(records) == 8 and valid
    best_inp, _ = best_record(log)
    pg = page
    pg.goto(f"{url}/lab/tree/{log.name}?token={token}&reset")
    view = pg.locator(".al-logviewer .al-logview")
    view.locator(".al-row").first.wait_for()
    assert view.locator(".al-row").count() == len(records)
    assert view.locator("circle.al-point").count() == len(valid)
    assert view.locator("circle.al-measured").count() == len(valid)
    assert view.locator("line.al-error").count() == len(records) - len(valid)
    caption = view.locator(".al-log-caption").inner_text()
    assert f"{len(records)} records" in caption and "1 workload" in caption
    # the best record is selected first: its trace as str(Trace) prints it
    trace = view.locator(".al-detail .al-trace").inner_text()
    assert trace == str(Trace.from_json(best_inp.trace))
    # sorted by GFLOPS, fastest first; the header flips it
    gflops = [float(t) for t in view.locator(".al-row .al-col-gflops").all_inner_texts()[:3]]
    assert gflops == sorted(gflops, reverse=True)
    view.locator("th.al-sort[data-key='gflops']").click()
    view.locator("th.al-sort[data-key='gflops']:has-text('▲')").wait_for()
    cells = view.locator(".al-row .al-col-gflops").all_inner_texts()
    numbers = [float(t) for t in cells if t != "–"]
    assert numbers == sorted(numbers)
    # a clicked row shows that record
    row = view.locator(".al-row").last
    index = int(row.get_attribute("data-index"))
    row.click()
    view.locator(f".al-row.al-selected[data-index='{index}']").wait_for()
    inp = records[index - 1][0]
    assert view.locator(".al-detail .al-trace").inner_text() == str(Trace.from_json(inp.trace))
    shot(pg, "log_viewer.png")
    # a second tune appends to the file: the open view follows it
    tune_into(log, 4, seed=1)
    total = len(list(load_records(str(log))))
    assert total == 12
    pg.wait_for_function(
        "(n) => document.querySelectorAll('.al-logviewer .al-row').length === n", arg=total
    )
    valid_now = sum(1 for _, res in load_records(str(log)) if res.error_no == 0)
    assert view.locator("circle.al-point").count() == valid_now
    shot(pg, "log_viewer_followed.png")
    # any .json log opens with Open With -> Tuning log
    (root / "copy.json").write_text(log.read_text())
    pg.locator(".jp-DirListing-item[data-file-type]", has_text="copy.json").click(button="right")
    pg.locator(".lm-Menu-item", has_text="Open With").hover()
    pg.locator(".lm-Menu-item", has_text="Tuning log").click()
    pg.locator(".al-logviewer .al-log-caption", has_text="copy.json").wait_for()
    assert pg.locator(".al-logviewer:visible .al-row").count() == total


def test_hostile_log_shows_as_text_and_runs_nothing(lab, page) -> None:
    url, token, root = lab
    h = HOSTILE
    trace = {
        "version": 1,
        "insts": [
            [h["kind"], [["name", h["arg"]]], ["b0"], None],
            ["Split", [["loop", {"rv": "l1"}], ["factors", [None, h["arg"]]]], ["l2"], None],
        ],
    }
    base = {"v": 1, "workload_key": h["workload"], "target": h["target"], "flop_ct": 1e6}
    lines = [
        {**base, "costs": [1e-3], "error_no": 0, "sketch": h["sketch"], "trace": trace},
        {**base, "costs": [], "error_no": 5, "error_msg": h["error"], "trace": trace},
        {**base, "workload_key": {"toString": h["workload"]}, "costs": [2e-3], "error_no": 0},
    ]
    text = "\n".join(json.dumps(x) for x in lines) + "\n<script>window.__pwned=8</script>\n"
    (root / "hostile.records.jsonl").write_text(text + json.dumps(lines[0]) + "\n")
    pg = page
    pg.goto(f"{url}/lab/tree/hostile.records.jsonl?token={token}&reset")
    view = pg.locator(".al-logviewer .al-logview")
    view.locator(".al-row").first.wait_for()
    assert view.locator(".al-row").count() == 4
    assert "1 unreadable lines skipped" in view.locator(".al-log-caption").inner_text()
    view.locator(".al-row", has_text="WRONG_ANSWER").click()
    view.locator(".al-error-msg").wait_for()
    assert view.locator(".al-error-msg").inner_text() == h["error"]
    detail = view.locator(".al-detail").inner_text()
    assert h["workload"] in detail and h["target"] in detail
    trace_text = view.locator(".al-detail .al-trace").inner_text()
    assert json.dumps(h["arg"]) in trace_text and h["kind"] in trace_text
    sketches = view.locator(".al-col-sketch").all_inner_texts()
    assert h["sketch"] in sketches
    no_script_ran(pg, ".al-logviewer")
    shot(pg, "log_viewer_hostile.png")


def test_mime_renderers_in_a_saved_notebook_with_no_kernel(lab, page, tmp_path: Path) -> None:
    url, token, root = lab
    log = tmp_path / "one.records.jsonl"
    tune_into(log, 4)
    cells = [
        "from ansor_lab import te, tir, build\n"
        "from ansor_lab.jupyter import show, RecordDisplay\n"
        "from ansor_lab.measure.records import load_records\n"
        "A = te.placeholder((16, 16), name='A')\nB = te.placeholder((16, 16), name='B')\n"
        "k = te.reduce_axis((0, 16), name='k')\n"
        "C = te.compute((16, 16), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name='C')\n"
        "sch = tir.Schedule(te.create_prim_func([A, B, C]))\n"
        "i, j, kk = sch.get_loops(sch.get_block('C'))\n"
        "io, ii = sch.split(i, factors=[None, 4])\nsch.parallel(io)",
        "show(sch.trace)",
        "show(sch.mod.main_function())",
        "show(build(sch.mod, [A, B, C], target='llvm'))",
        f"RecordDisplay.from_pair(*next(iter(load_records({str(log)!r}))))",
    ]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    nb.metadata.kernelspec = {"name": "python3", "display_name": "Python 3", "language": "python"}
    env = dict(
        os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    )
    old = dict(os.environ)
    os.environ.update(env)
    try:
        nbclient.NotebookClient(nb, timeout=300, kernel_name="python3").execute()
    finally:
        os.environ.clear()
        os.environ.update(old)
    # hostile outputs, as a shared notebook could carry them
    h = HOSTILE
    bad_trace = {"version": 1, "insts": [[h["kind"], [["name", h["arg"]]], ["b0"], None]]}
    bad = {"workload_key": h["workload"], "target": h["target"], "costs": [1e-3], "error_no": 0}
    nb.cells.append(
        nbformat.v4.new_code_cell(
            "# hostile",
            outputs=[
                nbformat.v4.new_output(
                    "display_data", data={TRACE_MIME: {"trace": bad_trace}, "text/plain": "t"}
                ),
                nbformat.v4.new_output(
                    "display_data",
                    data={RECORD_MIME: {"record": {**bad, "trace": bad_trace}}, "text/plain": "r"},
                ),
            ],
        )
    )
    # saved with no kernel to start: JupyterLab picks one by kernelspec or language
    del nb.metadata["kernelspec"]
    nb.metadata.pop("language_info", None)
    nbformat.write(nb, root / "saved.ipynb")
    outputs = [o for c in nb.cells for o in c.get("outputs", [])]
    assert sum("application/vnd.ansor-lab.lowered+json" in o.get("data", {}) for o in outputs) == 1
    pg = page
    pg.goto(f"{url}/lab/tree/saved.ipynb?token={token}&reset")
    pg.locator(".jp-Notebook .jp-Cell").first.wait_for()
    dialog = pg.locator(".jp-Dialog button", has_text="No Kernel")
    with contextlib.suppress(sync_api.TimeoutError):
        dialog.click(timeout=10_000)
    area = pg.locator(".jp-Notebook")
    trace_view = area.locator(".jp-OutputArea .al-trace-view").first
    trace_view.wait_for()
    with urllib.request.urlopen(f"{url}/api/kernels?token={token}") as resp:
        assert json.load(resp) == []  # rendered from the saved outputs alone
    python = next(o["data"][TRACE_MIME]["python"] for o in outputs if TRACE_MIME in o["data"])
    assert trace_view.locator(".al-trace").inner_text() == python
    assert "l4, l5 = sch.split(loop=l1, factors=[None, 4])" in python
    lowered = area.locator(".jp-OutputArea .al-lowered-view")
    assert "i_0 in range(4)  parallel" in lowered.locator(".al-loops").inner_text()
    assert "@T.prim_func" in lowered.locator(".al-script").inner_text()
    source = area.locator(".jp-OutputArea .al-source-view")
    assert "define" in source.locator(".al-source").inner_text()
    source.locator("button.al-tab", has_text="TIR").click()
    assert "@T.prim_func" in source.locator(".al-source").inner_text()
    records = area.locator(".jp-OutputArea .al-record-view")
    assert records.count() == 2
    assert "def apply_trace(sch):" in records.first.locator(".al-trace").inner_text()
    assert h["workload"] in records.last.inner_text()
    hostile_trace = area.locator(".jp-OutputArea .al-trace-view").last.inner_text()
    assert h["kind"] in hostile_trace and json.dumps(h["arg"]) in hostile_trace
    no_script_ran(pg, ".jp-Notebook")
    shot(pg, "mime_renderers_notebook.png")
    for name, element in (
        ("mime_lowered.png", lowered),
        ("mime_source.png", source),
        ("mime_record.png", records.first),
        ("mime_hostile.png", area.locator(".jp-Cell").last),
    ):
        element.scroll_into_view_if_needed()
        element.screenshot(path=str(artifact_dir() / name))
        print(f"screenshot: {artifact_dir() / name}")
