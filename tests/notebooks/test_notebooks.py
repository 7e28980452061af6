"""The course notebooks execute top to bottom in a fresh kernel and print what they teach.

The kernel is this test's own Python (a kernelspec installed into a temporary directory and
put first on JUPYTER_PATH), so CI checks the notebooks against the venv under test, never
against some other ``python3`` kernel found on the machine.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
kernelspec = pytest.importorskip("ipykernel.kernelspec")

import ansor_lab  # noqa: E402
from ansor_lab.search.features import FEATURE_NAMES  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
KERNEL = f"ansor-lab-test-{os.getpid()}"
CELL_TIMEOUT_S = 600


@pytest.fixture(scope="module")
def kernel_name(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A kernelspec running ``sys.executable`` that sees the same ansor_lab as these tests."""
    prefix = tmp_path_factory.mktemp("jupyter")
    kernelspec.install(kernel_name=KERNEL, display_name=KERNEL, prefix=str(prefix))
    package_root = str(Path(ansor_lab.__file__).resolve().parents[1])
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("JUPYTER_PATH", str(prefix / "share" / "jupyter"))
        mp.setenv(
            "PYTHONPATH",
            os.pathsep.join([package_root, *filter(None, [os.environ.get("PYTHONPATH")])]),
        )
        mp.setenv("OMP_NUM_THREADS", "1")  # tests run two at a time on small machines
        yield KERNEL


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


def text_of(nb: nbformat.NotebookNode) -> str:
    """All stream and plain-text outputs of the executed notebook, in order."""
    parts = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            if out.output_type == "stream":
                parts.append(out.text)
            elif "data" in out and "text/plain" in out.data:
                parts.append(out.data["text/plain"])
    return "\n".join(parts)


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


def check_01(text: str) -> None:
    """Content of 01_tensor_expressions: correct results, FLOPs, IR, code and GFLOPS."""
    assert "FLOPs: 33,619,968" in text
    assert "@T.prim_func" in text and "for k in range(256):" in text
    errors = [float(x) for x in re.findall(r"max abs error[^:]*: ([0-9.eE+-]+)", text)]
    assert len(errors) >= 4 and max(errors) < 1e-4, errors
    assert "same result through tvm.nd: True" in text
    assert "for.k.body:" in text  # a slice of the LLVM IR
    gflops = re.findall(r"([0-9]+\.[0-9]+) GFLOPS", text)
    assert len(gflops) == 2 and all(float(g) > 0 for g in gflops)
    assert re.search(r"numpy is [0-9.]+x faster", text)
    assert "tensors evaluated: ['A', 'B', 'C', 'D']" in text
    assert "softmax rows sum to [1. 1. 1. 1.]" in text
    assert "not yet: max abs error" in text  # the exercise ships unsolved, and says so


def check_02(text: str) -> None:
    """Content of 02_manual_scheduling: every step correct, the trace replays, fusion."""
    assert "67.2 MFLOP per run" in text
    assert "replayed program is identical: True" in text
    assert "after the mutation, C's outer i loop has extent 8" in text
    assert "for i_0 in T.parallel(8):" in text
    assert 'C = T.alloc_buffer((32, 64), "float32")' in text
    assert text.count("(correct)") >= 12


def check_03(text: str) -> None:
    """Content of 03_auto_scheduling: sketches, a tune without errors, resume, conv2d."""
    assert "sketch 1: C: cache_write+tile" in text and "sch.enter_postproc()" in text
    assert re.search(r"16 programs measured, \d+ errors", text)
    assert "the log now holds 24 records, 24 different programs" in text
    assert "T_add: inline; conv2d_nchw: tile+fuse(T_relu)\n" in text
    assert "(matches the numpy reference)" in text
    for label in ("auto-scheduled", "hand schedule", "numpy (BLAS)", "naive"):
        assert re.search(rf"{re.escape(label)}:\s+[0-9.]+ ms", text)


def check_04(text: str) -> None:
    """Content of 04_reading_the_search: features, predictions, sketches, explanations,
    roofline, the explorer and the iteration-order numbers."""
    assert "16 records, best" in text and f"{len(FEATURE_NAMES)} features" in text
    assert re.search(r"pairwise accuracy [01]\.\d\d", text)
    assert "C: cache_write+tile" in text and "best GFLOPS" in text
    assert "(rank 1)" in text and "same trace as the best record" in text
    assert "+++ record" in text and "--- your schedule" in text
    assert re.search(r"peak [0-9.]+ GFLOPS, bandwidth [0-9.]+ GB/s", text)
    assert "hand: intensity 10.67 FLOP/byte" in text
    assert "error shown inline: compute_at on block 'C'" in text
    assert "after 3 steps:" in text and "correct: True" in text
    assert " [[ 0  1  2  3 16 17 18 19]" in text  # tile 4x4
    assert " [[ 0  0  0  0  1  1  1  1]" in text  # vectorize 4: lanes share a step


def check_05(text: str) -> None:
    """Content of 05_gpu_scheduling: every hand step correct on the emulator with an
    estimated time, the thread map, float4 loads, and the emulated conv2d tuning."""
    steps = ("1 bind", "2 shared tiles", "3 local accumulation", "4 vectorized loads")
    for label in steps:
        assert f"{label}: correct on the GPU emulator: True" in text
    times = {
        label: float(re.search(rf"{label}: ([0-9.]+) us estimated", text).group(1))
        for label in steps
    }
    # the model's direction: shared tiles and register tiles each make it faster
    assert times["1 bind"] > times["2 shared tiles"] > times["3 local accumulation"]
    assert "__global__" in text and "T.tvm_storage_sync" in text
    assert "C: 65536 elements computed by 64 blocks of 256 threads" in text
    assert "block 0 fetches 8192 elements of A into shared memory in 8 step(s)" in text
    assert "float4 loads: True" in text
    m = re.search(r"(\d+) candidates, (\d+) correct on the emulator, all estimated: True", text)
    assert m and int(m.group(1)) == 6 and int(m.group(2)) >= 1, m
    assert re.search(r"best: [0-9.]+ ms estimated, [0-9.]+ GFLOPS estimated", text)
    assert "// estimated " in text  # print_best marks the estimate


CHECKS = {
    "01_tensor_expressions.ipynb": check_01,
    "02_manual_scheduling.ipynb": check_02,
    "03_auto_scheduling.ipynb": check_03,
    "04_reading_the_search.ipynb": check_04,
    "05_gpu_scheduling.ipynb": check_05,
}


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
