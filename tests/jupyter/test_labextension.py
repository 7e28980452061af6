"""The JupyterLab extension's Python side: the committed bundle matches extension/'s
sources, the printing table matches the instruction declarations, the displays emit our
MIME types beside their fallbacks, and (slow) a wheel carries the prebuilt extension that
a fresh venv lists as enabled, with no node involved."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest
from workloads import fast_options, fast_policy, make_task, matmul

import ansor_lab
from ansor_lab import te, tir
from ansor_lab.jupyter import labext
from ansor_lab.jupyter.display import (
    irmodule_bundle,
    module_bundle,
    primfunc_bundle,
    trace_bundle,
)
from ansor_lab.jupyter.mime import (
    LOWERED_MIME,
    RECORD_MIME,
    SOURCE_MIME,
    TRACE_MIME,
    RecordDisplay,
    loop_outline,
)
from ansor_lab.measure.records import load_records

ROOT = Path(__file__).resolve().parents[2]
EXT = ROOT / "extension"
REBUILD = "cd extension && jlpm install && jlpm build:prod (then commit ansor_lab/labextension)"


def _matmul_schedule(n: int = 32) -> tuple:
    A = te.placeholder((n, n), name="A")
    B = te.placeholder((n, n), name="B")
    k = te.reduce_axis((0, n), name="k")
    C = te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    sch = tir.Schedule(te.create_prim_func([A, B, C]))
    i, j, kk = sch.get_loops(sch.get_block("C"))
    io, ii = sch.split(i, factors=[None, 8])
    sch.parallel(io)
    sch.vectorize(j)
    return sch, (A, B, C)


def test_committed_bundle_was_built_from_these_sources():
    digest = labext.bundled_digest()
    assert digest is not None, f"no built extension in {labext.BUNDLE}: {REBUILD}"
    assert digest == labext.source_digest(EXT), (
        f"extension/ changed since ansor_lab/labextension was built: {REBUILD}"
    )


def test_bundle_declares_both_entry_points_and_its_files_exist():
    meta = json.loads((labext.BUNDLE / "package.json").read_text())
    assert meta["name"] == labext.NAME
    build = meta["jupyterlab"]["_build"]
    assert build["extension"] == "./extension" and build["mimeExtension"] == "./mimeExtension"
    assert (labext.BUNDLE / build["load"]).is_file()
    assert (labext.BUNDLE / "static" / "style.js").is_file()


def test_printing_table_matches_the_instruction_declarations():
    """Every kind the bundle knows prints as its declaration says; a kind declared later
    prints by the bundle's guess (snake_case name) until the table is regenerated."""
    committed = json.loads((EXT / "src" / "kinds.json").read_text())
    declared = labext.instruction_table()
    stale = sorted(k for k, v in committed.items() if declared.get(k) != v)
    assert not stale, (
        f"extension/src/kinds.json disagrees with the declarations of {stale}: write "
        "labext.instruction_table() to it (json.dumps(..., indent=1, sort_keys=True)) and "
        f"rebuild: {REBUILD}"
    )
    assert committed["Split"] == {
        "method": "split",
        "varargs": None,
        "sampling": False,
        "outputs": "list",
    }
    assert {"Split", "Fuse", "SamplePerfectTile", "GetLoops", "Annotate"} <= set(committed)


def test_packaging_maps_the_bundle_to_share_and_never_needs_node_when_it_exists():
    tomllib = pytest.importorskip("tomllib", reason="Python 3.11+ reads pyproject.toml")
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    wheel = meta["tool"]["hatch"]["build"]["targets"]["wheel"]
    assert wheel["shared-data"]["ansor_lab/labextension"] == (
        f"share/jupyter/labextensions/{labext.NAME}"
    )
    hook = meta["tool"]["hatch"]["build"]["hooks"]["jupyter-builder"]
    assert "ansor_lab/labextension/static/style.js" in hook["skip-if-exists"]
    assert hook["optional-editable-build"] == "true"
    paths = ansor_lab._jupyter_labextension_paths()
    assert paths == [{"src": "labextension", "dest": labext.NAME}]
    assert (Path(ansor_lab.__file__).parent / paths[0]["src"]).is_dir()


def test_trace_bundle_carries_the_trace_and_its_python():
    sch, _ = _matmul_schedule()
    bundle = trace_bundle(sch.trace)
    assert {"text/plain", "text/html", TRACE_MIME} <= set(bundle)
    data = bundle[TRACE_MIME]
    assert data["python"] == str(sch.trace)
    assert [inst[0] for inst in data["trace"]["insts"]] == [
        "GetBlock",
        "GetLoops",
        "Split",
        "Parallel",
        "Vectorize",
    ]
    json.dumps(data)  # plain JSON: a notebook saves it as is


def test_lowered_bundle_lists_params_and_the_loop_nest_with_depths():
    sch, _ = _matmul_schedule()
    func = sch.mod.main_function()
    data = primfunc_bundle(func)[LOWERED_MIME]
    assert data["kind"] == "PrimFunc" and data["script"] == func.script()
    assert data["params"] == [
        {"name": n, "shape": [32, 32], "dtype": "float32"} for n in ("A", "B", "C")
    ]
    loops = [(x["var"], x["extent"], x["kind"], x["depth"]) for x in data["loops"]]
    assert loops == [
        ("i_0", "4", "parallel", 0),
        ("i_1", "8", "serial", 1),
        ("j", "32", "vectorized", 2),
        ("k", "32", "serial", 3),
    ]
    assert irmodule_bundle(sch.mod)[LOWERED_MIME]["loops"] == data["loops"]
    assert len(loop_outline(func.body, max_loops=2)) == 2


def test_module_bundle_carries_every_source_view():
    sch, args = _matmul_schedule(16)
    mod = ansor_lab.build(sch.mod, list(args), target="llvm")
    data = module_bundle(mod)[SOURCE_MIME]
    titles = [s["title"] for s in data["sources"]]
    assert titles == ["LLVM IR", "Assembly", "Loop report", "TIR"]
    by_title = {s["title"]: s for s in data["sources"]}
    assert by_title["LLVM IR"]["language"] == "llvm"
    assert "define" in by_title["LLVM IR"]["text"]
    assert by_title["TIR"]["text"] == mod.func.script()
    assert data["name"] == mod.entry_name and data["target"] == str(mod.target)


def test_record_display_from_a_real_log(tmp_path: Path):
    log = tmp_path / "mm.records.jsonl"
    task = make_task(matmul(8))
    task.tune(fast_options(str(log), 4, 4), search_policy=fast_policy(task))
    inp, res = next(iter(load_records(str(log))))
    shown = RecordDisplay.from_pair(inp, res)
    bundle = shown._repr_mimebundle_()
    assert {"text/plain", "text/html", RECORD_MIME} <= set(bundle)
    line = json.loads(log.read_text().splitlines()[0])
    for key in ("workload_key", "target", "costs", "error_no", "trace", "sketch"):
        assert bundle[RECORD_MIME]["record"][key] == line[key]
    assert bundle[RECORD_MIME]["python"].startswith("def apply_trace(sch):\n")
    assert "GFLOPS" in repr(shown) or "failed" in repr(shown)


def _fresh_venv_lists_it(venv: Path, env: dict, tmp_path: Path) -> None:
    """The venv's Jupyter (this interpreter's packages on its path) lists the extension
    from the venv's share/ as enabled and OK."""
    env = dict(
        env,
        PYTHONPATH=sysconfig.get_paths()["purelib"],
        JUPYTER_PATH="",
        JUPYTER_DATA_DIR=str(tmp_path / "data"),
    )
    listed = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "jupyterlab.labextensions", "list"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    text = listed.stdout + listed.stderr
    line = next((x for x in text.splitlines() if labext.NAME in x), "")
    assert str(venv / "share" / "jupyter" / "labextensions") in text, text
    assert "enabled" in line and "OK" in line and "ansor_lab" in line, text


def _no_node_env() -> dict:
    """This environment with PATH cut to python's folder and /bin: no node, no jlpm."""
    env = {k: v for k, v in os.environ.items() if k not in ("PATH", "PYTHONPATH")}
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), "/bin"])
    return env


def _pip_into(venv: Path, *args: str, env: dict) -> None:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    cmd = [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install"]
    out = subprocess.run(
        [*cmd, "--no-deps", "-q", *args], env=env, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr[-3000:]


@pytest.mark.slow
def test_wheel_carries_the_prebuilt_extension_a_fresh_venv_lists_enabled(tmp_path: Path):
    """`pip wheel .` with no node on PATH; the wheel installed into a fresh venv."""
    pytest.importorskip("jupyterlab")
    wheels, env = tmp_path / "wheels", _no_node_env()
    out = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(ROOT), "-w", str(wheels), "--no-deps", "-q"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    (wheel,) = wheels.glob("ansor_lab-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    share = f"ansor_lab-{ansor_lab.__version__}.data/data/share/jupyter/labextensions/ansor-lab/"
    assert share + "package.json" in names and share + "install.json" in names
    assert share + "source-digest.json" in names
    assert any(n.startswith(share + "static/remoteEntry.") for n in names)
    assert not any(n.startswith("ansor_lab/labextension/") for n in names)  # once only
    _pip_into(tmp_path / "venv", str(wheel), env=env)
    _fresh_venv_lists_it(tmp_path / "venv", env, tmp_path)


@pytest.mark.slow
def test_editable_install_needs_no_node_and_jupyter_finds_the_extension(tmp_path: Path):
    """`pip install -e .` (what CI runs) with no node on PATH."""
    pytest.importorskip("jupyterlab")
    env = _no_node_env()
    _pip_into(tmp_path / "venv", "-e", str(ROOT), env=env)
    installed = tmp_path / "venv" / "share" / "jupyter" / "labextensions" / labext.NAME
    assert labext.bundled_digest(installed) == labext.bundled_digest()
    _fresh_venv_lists_it(tmp_path / "venv", env, tmp_path)
