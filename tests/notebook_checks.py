"""What each course notebook must print once executed: the content checks shared by
test_notebooks.py (nbclient), test_binder.py (Binder's venv, one core) and
test_course_browser.py (JupyterLab in Chromium)."""

from __future__ import annotations

import re
from typing import Any

from ansor_lab.search.features import FEATURE_NAMES


def text_of(nb: Any) -> str:
    """All stream and plain-text outputs of the executed notebook, in order.

    Consecutive pieces of one stream in a cell are joined as a terminal shows them: the
    kernel may flush one print in two messages ("... identical:" then " True", seen on
    a loaded machine), and a newline between them would break a line the checks read.
    """
    parts = []
    for cell in nb.cells:
        last_stream = None
        for out in cell.get("outputs", []):
            if out.output_type == "stream":
                if last_stream == out.name:
                    parts[-1] += out.text
                else:
                    parts.append(out.text)
                last_stream = out.name
                continue
            last_stream = None
            if "data" in out and "text/plain" in out.data:
                parts.append(out.data["text/plain"])
    return "\n".join(parts)


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
    assert "Exercise 1 (dense + ReLU): not yet: no answer yet" in text  # ships unsolved


def check_02(text: str) -> None:
    """Content of 02_manual_scheduling: every step correct, the trace replays, fusion."""
    assert "67.2 MFLOP per run" in text
    assert "replayed program is identical: True" in text
    assert "after the mutation, C's outer i loop has extent 8" in text
    assert "for i_0 in T.parallel(8):" in text
    assert 'C = T.alloc_buffer((32, 64), "float32")' in text
    assert text.count("(correct)") >= 12
    assert "Exercise 1 (tile and fuse): not yet: no answer yet" in text


def check_03(text: str) -> None:
    """Content of 03_auto_scheduling: sketches, a tune without errors, resume, conv2d."""
    assert "sketch 1: C: cache_write+tile" in text and "sch.enter_postproc()" in text
    assert re.search(r"16 programs measured, \d+ errors", text)
    assert "the log now holds 24 records, 24 different programs" in text
    assert "T_add: inline; conv2d_nchw: tile+fuse(T_relu)\n" in text
    assert "(matches the numpy reference)" in text
    for label in ("auto-scheduled", "hand schedule", "numpy (BLAS)", "naive"):
        assert re.search(rf"{re.escape(label)}:\s+[0-9.]+ ms", text)
    assert "Exercise 1 (tune it): not yet: no answer yet" in text


def check_04(text: str) -> None:
    """Content of 04_reading_the_search: features, predictions, sketches, explanations,
    roofline, the explorer and the iteration-order numbers."""
    assert "16 records, best" in text and f"{len(FEATURE_NAMES)} features" in text
    assert re.search(r"pairwise accuracy [01]\.\d\d", text)
    assert "C: cache_write+tile" in text and "best GFLOPS" in text
    assert "(rank 1)" in text and "same trace as the best record" in text
    assert "Exercise 1 (intensity): not yet: no answer yet" in text
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


def check_00(text: str) -> None:
    """00_why_scheduling: five correct programs far apart, the hierarchy, the roofline."""
    assert text.count("(correct)") == 5
    ratio = float(re.search(r"the slowest program takes (\d+)x", text).group(1))
    assert ratio >= 20, ratio  # ~100x and more on an idle core; loose for busy CI machines
    assert re.search(r"L1d:\s+[0-9.]+ GB/s", text) and "data caches: L1d" in text
    assert re.search(r"multiply-add loop: [0-9.]+ GFLOPS on one core", text)
    assert "Exercise 1 (loop order): not yet: no answer yet" in text


def check_07(text: str) -> None:
    """07_gemm_story: eight correct steps, roofline fractions, the pack sketches, numpy."""
    assert text.count("(correct)") == 8
    gflops = {
        m.group(1): float(m.group(2))
        for m in re.finditer(r"^(\d) [^\n]*?\s+[0-9.]+ ms\s+([0-9.]+) GFLOPS", text, re.M)
    }
    assert len(gflops) == 8 and gflops["7"] > 5 * gflops["0"], gflops
    assert re.search(r"step 7: +[0-9.]+ GFLOPS = +[0-9.]+% of peak", text)
    assert "C: cache_write+tile+pack(B)" in text
    assert "Exercise 1 (register blocking): not yet: no answer yet" in text


def check_08(text: str) -> None:
    """08_tuning_a_network: four tasks tuned with one budget, end to end, scripts replayed."""
    assert "tuned network matches numpy" in text
    assert re.search(r"ansor_lab \(tuned\)\s+[0-9.]+ us", text)
    assert re.search(r"numpy[^\n]*\s+[0-9.]+ us", text)
    assert "PyTorch is not installed" in text or re.search(r"PyTorch \(1 thread\)", text)
    assert re.search(r"rounds went to tasks: \[0, 1, 2, 3", text)  # a warm-up round each
    assert text.count(": exit 0;") == 4 and text.count("(OK)") == 4
    assert "Exercise 1 (a conv by hand): not yet: no answer yet" in text


def check_06(text: str) -> None:
    """06_tensorir: TVMScript parsed and built, five correct steps, the trace replays, the
    stochastic search and tune_tir, the hand-fused module and its refused parallel loop."""
    assert "as written:" in text and "equal to numpy" in text
    assert text.count("(correct)") == 5
    assert "replayed: the same program" in text
    assert re.search(r"j split as\s+\d+ x \d+\s*:\s+[0-9.]+ ms", text)
    assert "sample_perfect_tile(loop=" in text and "decision=" in text
    assert re.search(r"best of the automatic space\s*:\s+[0-9.]+ ms", text)
    assert "hand-fused:" in text and "parallel m_0: accepted" in text
    assert "refused: parallel: loop rk feeds reduction variable v_rk" in text
    assert "Exercise 1 (a faster mm_relu): not yet: no answer yet" in text


CHECKS = {
    "06_tensorir.ipynb": check_06,
    "00_why_scheduling.ipynb": check_00,
    "07_gemm_story.ipynb": check_07,
    "08_tuning_a_network.ipynb": check_08,
    "01_tensor_expressions.ipynb": check_01,
    "02_manual_scheduling.ipynb": check_02,
    "03_auto_scheduling.ipynb": check_03,
    "04_reading_the_search.ipynb": check_04,
    "05_gpu_scheduling.ipynb": check_05,
}
