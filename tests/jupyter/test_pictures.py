"""Iteration-order numbers and the roofline's numbers and plotted positions."""

from __future__ import annotations

import json
import re
import time

import numpy as np
import pytest

import ansor_lab as tvm
from ansor_lab import te, tir
from ansor_lab.jupyter.iteration import (
    IterationOrderError,
    iteration_order,
    iteration_order_svg,
    visit_order,
)
from ansor_lab.jupyter.roofline import (
    MachinePeaks,
    arithmetic_intensity,
    flops_and_bytes,
    kernel_point,
    log_points,
    measure_peaks,
    roofline_figure,
)


def matmul(n: int = 4, extra_exp: bool = False):
    A = te.placeholder((n, n), name="A")
    B = te.placeholder((n, n), name="B")
    k = te.reduce_axis((0, n), name="k")
    C = te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    if not extra_exp:
        return te.create_prim_func([A, B, C])
    D = te.compute((n, n), lambda i, j: te.exp(C[i, j]), name="D")
    return te.create_prim_func([A, B, D])


def split_j(sch: tir.Schedule, factor: int = 2) -> tuple:
    i, j, k = sch.get_loops(sch.get_block("C"))
    jo, ji = sch.split(j, [None, factor])
    return i, jo, ji, k


# -- iteration order ------------------------------------------------------------------


def test_visit_order_of_a_4x4_matmul_is_row_major() -> None:
    vo = visit_order(tir.Schedule(matmul()), block="C")
    assert vo.buffer == "C" and vo.shape == (4, 4)
    assert vo.order.tolist() == np.arange(16).reshape(4, 4).tolist()
    # one init store and 4 reduction updates per element, each a step
    assert vo.steps == 16 * 5 and vo.visits == 16
    assert vo.first_step.tolist() == (np.arange(16) * 5).reshape(4, 4).tolist()


def test_a_split_alone_keeps_the_order_and_a_reorder_changes_it() -> None:
    sch = tir.Schedule(matmul())
    i, jo, ji, k = split_j(sch)
    assert visit_order(sch, "C").order.tolist() == np.arange(16).reshape(4, 4).tolist()
    sch.reorder(jo, i, ji)  # column pairs first: (j_0, i, j_1)
    assert visit_order(sch, "C").order.tolist() == [
        [0, 1, 8, 9],
        [2, 3, 10, 11],
        [4, 5, 12, 13],
        [6, 7, 14, 15],
    ]


def test_vectorized_lanes_share_a_step_and_reorder_transposes() -> None:
    sch = tir.Schedule(matmul())
    i, jo, ji, k = split_j(sch)
    sch.vectorize(ji)
    vo = visit_order(sch)  # the output buffer by default
    assert vo.order.tolist() == [[0, 0, 1, 1], [2, 2, 3, 3], [4, 4, 5, 5], [6, 6, 7, 7]]
    assert vo.visits == 8 and vo.vector_steps == 8
    t = tir.Schedule(matmul())
    i, j, k = t.get_loops(t.get_block("C"))
    t.reorder(j, i, k)
    assert visit_order(t, "C").order.tolist() == np.arange(16).reshape(4, 4).T.tolist()


def test_tile_and_guarded_split() -> None:
    sch = tir.Schedule(matmul())
    i, j, k = sch.get_loops(sch.get_block("C"))
    sch.tile(i, j, 2, 2)
    assert visit_order(sch, "C").order.tolist() == [
        [0, 1, 4, 5],
        [2, 3, 6, 7],
        [8, 9, 12, 13],
        [10, 11, 14, 15],
    ]
    g = tir.Schedule(matmul())
    split_j(g, 3)  # 4 = 3 + 1: the guarded tail visits nothing twice
    assert "if j_0 * 3 + j_1 < 4:" in tvm.lower(g.mod).script()
    assert visit_order(g, "C").order.tolist() == np.arange(16).reshape(4, 4).tolist()


def test_compute_at_block_is_visited_inside_its_consumer() -> None:
    sch = tir.Schedule(matmul(extra_exp=True))
    i, j = sch.get_loops(sch.get_block("D"))
    sch.compute_at(sch.get_block("C"), i)
    assert visit_order(sch, "D").order.tolist() == np.arange(16).reshape(4, 4).tolist()
    c = visit_order(sch, "C")  # C shrank to one row, rewritten for every row of D
    assert c.shape == (1, 4) and c.order.tolist() == [[0, 1, 2, 3]]
    assert c.steps == 4 * 4 * 5
    with pytest.raises(IterationOrderError, match="blocks: D, C"):
        visit_order(sch, "X")


def test_pictures_show_the_same_numbers() -> None:
    sch = tir.Schedule(matmul())
    i, jo, ji, k = split_j(sch)
    sch.reorder(jo, i, ji)
    vo = visit_order(sch, "C")
    fig = iteration_order(sch, "C")
    assert np.array_equal(np.asarray(fig.data[0].z, dtype=float), vo.order)
    assert len(fig.frames) == 16 and fig.layout.sliders[0].steps[-1].label == "15"
    frame3 = np.asarray(fig.frames[3].data[0].z, dtype=float)
    assert np.array_equal(np.isnan(frame3), vo.order > 3)
    svg = iteration_order_svg(("before", tir.Schedule(matmul())), ("after", sch), block="C")
    visits = [int(v) for v in re.findall(r'class="cell" data-visit="(-?\d+)"', svg.svg)]
    assert visits == list(range(16)) + vo.order.ravel().tolist()
    assert svg._repr_svg_().startswith("<svg") and ">before<" in svg.svg


# -- roofline -------------------------------------------------------------------------


def test_intensity_of_a_matmul() -> None:
    func = matmul(64)
    flops, nbytes = flops_and_bytes(func)
    assert flops == 2 * 64**3 and nbytes == 3 * 64 * 64 * 4
    assert arithmetic_intensity(func) == pytest.approx(2 * 64**3 / (3 * 64 * 64 * 4))
    assert arithmetic_intensity(tir.Schedule(func)) == arithmetic_intensity(func)


def test_peaks_are_measured_once_and_cached(tmp_path) -> None:
    path = tmp_path / "roofline.json"
    peaks = measure_peaks(path=path)
    assert peaks.peak_gflops > 0 and peaks.bandwidth_gbs > 0
    assert peaks.ridge_intensity == pytest.approx(peaks.peak_gflops / peaks.bandwidth_gbs)
    cached = json.loads(path.read_text())
    assert list(cached.values())[0]["peak_gflops"] == peaks.peak_gflops
    assert measure_peaks(path=path) == peaks  # read back, not measured again


def test_peaks_cached_by_an_older_method_are_measured_again(tmp_path) -> None:
    path = tmp_path / "roofline.json"
    peaks = measure_peaks(path=path)
    key = peaks.cpu
    stale = dict(
        json.loads(path.read_text())[key],
        peak_gflops=1.0,
        method="numpy float32 matmul 512^3 (BLAS); numpy copy of 64 MiB",
    )
    path.write_text(json.dumps({key: stale}))
    again = measure_peaks(path=path)
    assert again.peak_gflops > 1.0 and again.method.startswith("LLVM multiply-add loop")


def test_multiply_add_loop_keeps_every_chain_in_the_loop() -> None:
    from ansor_lab.jupyter.roofline import _fma_loop_ir

    text = _fma_loop_ir(lanes=8, chains=12)
    body = text.split("body:")[1].split("done:")[0]
    assert body.count("fmul contract <8 x float>") == 12
    assert body.count("fadd contract <8 x float>") == 12
    assert len(re.findall(r"phi\s+<8 x float>", body)) == 12  # 12 independent chains


def test_compute_peak_is_not_below_a_blas_matmul_on_one_core() -> None:
    """The roof must sit above what a good kernel reaches: the multiply-add loop of one
    core is at least about as fast as OpenBLAS's sgemm on one thread (a latency-bound or
    scalar loop would be several times slower)."""
    from threadpoolctl import threadpool_limits

    from ansor_lab.jupyter.roofline import _measure_peak_gflops, multiply_add_peak_gflops

    with threadpool_limits(limits=1):
        blas = _measure_peak_gflops(n=256, repeats=10)
    # on the CPU clock: the other test worker (or job) sharing the cores must not halve it
    fma = multiply_add_peak_gflops(threads=1, seconds=0.05, repeats=5, clock=time.process_time)
    assert fma > 0.6 * blas, (fma, blas)


def test_plotted_points_sit_at_their_intensity_and_gflops(tmp_path) -> None:
    peaks = MachinePeaks(peak_gflops=100.0, bandwidth_gbs=10.0)
    func = matmul(64)
    p = kernel_point(func, 1e-4, "matmul 64")
    assert p.gflops == pytest.approx(2 * 64**3 / 1e-4 / 1e9)
    q = kernel_point(matmul(8), 1e-6, "matmul 8")
    fig = roofline_figure([p, q], peaks)
    names = [t.name for t in fig.data]
    assert names == ["roof", "kernels"]
    kernels = fig.data[1]
    assert list(kernels.x) == pytest.approx([p.intensity, q.intensity])
    assert list(kernels.y) == pytest.approx([p.gflops, q.gflops])
    roof = fig.data[0]
    x, y = np.asarray(roof.x), np.asarray(roof.y)
    assert np.allclose(y, np.minimum(100.0, 10.0 * x))
    assert 10.0 in x.tolist() and y[x.tolist().index(10.0)] == pytest.approx(100.0)
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"


def test_log_candidates_on_the_roofline(tmp_path) -> None:
    from ansor_lab import auto_scheduler
    from ansor_lab.measure.records import MeasureInput, MeasureResult, save_records

    A = te.placeholder((16, 16), name="A")
    B = te.placeholder((16, 16), name="B")
    k = te.reduce_axis((0, 16), name="k")
    C = te.compute((16, 16), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    task = auto_scheduler.SearchTask(
        compute_dag=auto_scheduler.ComputeDAG([A, B, C]), target="llvm"
    )
    trace = task.make_schedule().trace.as_json()
    log = str(tmp_path / "log.json")
    save_records(
        log,
        [MeasureInput(task, trace)] * 3,
        [MeasureResult([1e-5]), MeasureResult([], error_no=4), MeasureResult([2e-5, 4e-5])],
    )
    points = log_points(log)
    assert [p.label for p in points] == ["trial 0", "trial 2"]
    assert [p.seconds for p in points] == pytest.approx([1e-5, 3e-5])
    assert all(p.intensity == pytest.approx(arithmetic_intensity(task)) for p in points)
    fig = roofline_figure(candidates=points, peaks=MachinePeaks(50.0, 5.0))
    assert [t.name for t in fig.data] == ["roof", "tuning candidates"]
    assert list(fig.data[1].y) == pytest.approx([p.gflops for p in points])
