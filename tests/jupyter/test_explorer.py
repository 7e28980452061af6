"""The schedule explorer, driven from Python: its steps are the schedule's trace, its IR
pane is the schedule's program, undo/redo replay trace prefixes, illegal steps change
nothing and show an inline error, and Measure stores the right GFLOPS."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("ipywidgets")

from ansor_lab import te, tir  # noqa: E402
from ansor_lab.jupyter import ScheduleExplorer  # noqa: E402
from ansor_lab.jupyter.explorer import divisors  # noqa: E402
from ansor_lab.schedule.block_view import lowered_script  # noqa: E402

GETTERS = {"GetBlock", "GetLoops", "GetChildBlocks"}


def matmul_exp(n: int = 32, m: int = 24, k: int = 16):
    A = te.placeholder((n, k), name="A")
    B = te.placeholder((k, m), name="B")
    r = te.reduce_axis((0, k), name="k")
    C = te.compute((n, m), lambda i, j: te.sum(A[i, r] * B[r, j], axis=r), name="C")
    D = te.compute((n, m), lambda i, j: te.exp(C[i, j] * 0.1), name="D")
    return te.create_prim_func([A, B, D])


def kinds(sch: tir.Schedule) -> list[str]:
    return [inst.kind for inst in sch.trace.insts if inst.kind not in GETTERS]


@pytest.fixture
def ex() -> ScheduleExplorer:
    return ScheduleExplorer(matmul_exp(), display=False)


def test_steps_are_the_trace_and_the_ir_is_the_schedules(ex: ScheduleExplorer) -> None:
    assert ex.blocks == ["C", "D"] and ex.block == "D"
    assert [(i.name, i.extent) for i in ex.loops()] == [("i", 32), ("j", 24)]
    ex.select("C")
    assert ex.apply("split", loop="j", factor=8) is not None
    assert ex.apply("reorder", loops=["j_0", "i", "k", "j_1"]) is not None
    assert ex.apply("vectorize", loop="j_1") is not None
    ex.select("D")
    assert ex.apply("parallel", loop="i") is not None
    assert [s.op for s in ex.steps] == ["split", "reorder", "vectorize", "parallel"]
    assert kinds(ex.schedule) == ["Split", "Reorder", "Vectorize", "Parallel"]
    assert ex.steps[-1].trace_len == len(ex.schedule.trace.insts)
    # the IR pane is the schedule's program, with the last change highlighted
    assert ex.ir_text == lowered_script(ex.schedule.mod)
    assert "for j_1 in T.vectorized(8):" in ex.ir_text
    assert "for i_1 in T.parallel(32):" in ex.ir_text
    changed = [ex.ir_text.splitlines()[k] for k in ex.changed_lines]
    assert changed == ["    for i_1 in T.parallel(32):"]
    assert ex.ir_html().count("ansor-ir-changed") == 1
    # the exported Python and JSON replay to the same program
    ns = {"func": ex.func}
    exec(compile(ex.export_python(), "export", "exec"), ns)  # our own generated text
    assert lowered_script(ns["sch"].mod) == ex.ir_text
    fresh = tir.Schedule(ex.func).replay(ex.export_json())
    assert lowered_script(fresh.mod) == ex.ir_text and str(fresh.trace) == str(ex.schedule.trace)
    assert json.loads(ex.export_json())["version"] == 1


def test_undo_and_redo_replay_trace_prefixes(ex: ScheduleExplorer) -> None:
    base_ir = ex.ir_text
    ex.apply("split", loop="j", factor=4)
    after_one, trace_one = ex.ir_text, str(ex.schedule.trace)
    ex.apply("split", loop="i", factor=8)
    after_two, trace_two = ex.ir_text, str(ex.schedule.trace)
    assert ex.undo() and ex.ir_text == after_one and str(ex.schedule.trace) == trace_one
    assert ex.undo() and ex.ir_text == base_ir and ex.schedule.trace.insts == []
    assert not ex.undo() and ex.error == "nothing to undo"
    assert ex.redo() and ex.redo()
    assert ex.ir_text == after_two and str(ex.schedule.trace) == trace_two
    assert ex.ir_text == lowered_script(ex.schedule.mod)
    # a new step after an undo drops the undone future
    ex.undo()
    ex.apply("unroll", loop="j_1")
    assert [s.op for s in ex.steps] == ["split", "unroll"] and not ex.can_redo


def test_illegal_step_is_an_inline_error_and_changes_nothing(ex: ScheduleExplorer) -> None:
    assert ex.widget is not None  # the UI shows the error too
    ex.apply("split", loop="j", factor=4)
    before_trace, before_ir = str(ex.schedule.trace), ex.ir_text
    n_insts, sch = len(ex.schedule.trace.insts), ex.schedule
    # D is the function's output: it cannot be computed inside C
    assert ex.apply("compute_at", target=("C", "i")) is None
    assert "compute_at" in ex.error and "output" in ex.error
    assert "output" in ex._ui.error.value and "#b00020" in ex._ui.error.value
    assert ex.schedule is sch and len(sch.trace.insts) == n_insts
    assert str(ex.schedule.trace) == before_trace and ex.ir_text == before_ir
    # an unknown loop, a missing factor, an unknown primitive
    assert ex.apply("split", loop="nope", factor=2) is None and "no loop 'nope'" in ex.error
    assert ex.apply("split", loop="i") is None and "factor" in ex.error
    assert ex.apply("transpose") is None and "unknown step" in ex.error
    assert str(ex.schedule.trace) == before_trace and len(ex.steps) == 1
    # the next good step clears the error
    ex.apply("vectorize", loop="j_1")
    assert ex.error == "" and ex._ui.error.value == ""


def test_only_legal_compute_at_targets_are_offered(ex: ScheduleExplorer) -> None:
    assert ex.legal_targets("compute_at", "C") == [("D", "i"), ("D", "j")]
    # D follows C's tile only outside C's reduction loop
    assert ex.legal_targets("reverse_compute_at", "D") == [("C", "i"), ("C", "j")]
    ex.select("C")
    assert ex.apply("compute_at", target=("D", "i")) is not None
    assert kinds(ex.schedule) == ["ComputeAt"]
    # C's own i has extent 1 under D's i: as in TVM, compute_at leaves no unit loop
    assert [(i.block, i.name) for i in ex.loops("C")] == [
        ("D", "i"),
        ("C", "j"),
        ("C", "k"),
    ]


def test_measure_checks_against_numpy_and_stores_gflops(ex: ScheduleExplorer) -> None:
    flops = 32 * 24 * 16 * 2 + 32 * 24 * 2  # the matmul, then exp(C * 0.1)
    assert ex.flop_ct == flops
    assert ex.widget is not None
    m0 = ex.measure()
    ex.select("C")
    ex.apply("split", loop="j", factor=8)
    ex.apply("vectorize", loop="j_1")
    m1 = ex.measure()
    for m, step in ((m0, 0), (m1, 2)):
        assert m.correct and m.max_error < 1e-4 and m.step == step
        assert m.seconds > 0 and m.gflops == pytest.approx(flops / m.seconds / 1e9)
    assert ex.measurements == [m0, m1] and m1.label == "vectorize(C, loop=C.j_1)"
    trace = ex._ui.fig.data[0]
    assert list(trace.x) == [0, 2] and list(trace.y) == pytest.approx([m0.gflops, m1.gflops])
    ex._ui.metric.value = "time (ms)"
    assert list(ex._ui.fig.data[0].y) == pytest.approx([m0.seconds * 1e3, m1.seconds * 1e3])


def test_the_widget_drives_the_same_methods(ex: ScheduleExplorer) -> None:
    assert ex.widget is not None
    ui = ex._ui
    assert "ansor-explorer" in ex.widget._dom_classes
    assert ui.block.options == ("C", "D") and ui.block.value == "D"
    assert [v for _, v in ui.loop.options] == [("D", "i"), ("D", "j")]
    assert list(ui.factor.options) == divisors(32) == [1, 2, 4, 8, 16, 32]
    ui.loop.value = ("D", "j")
    assert list(ui.factor.options) == [1, 2, 3, 4, 6, 8, 12, 24]
    ui.factor.value = 6
    ui.apply_btn.click()
    assert ex.steps[-1].params == {"loop": ("D", "j"), "factor": 6}
    assert "for j_1 in range(6):" in ui.ir.value and "ansor-ir-changed" in ui.ir.value
    assert "split(D, loop=D.j, factor=6)" in ui.history.value
    ui.block.value = "C"
    assert ex.block == "C"
    ui.op.value = "compute_at"
    assert ui.target.layout.display == "" and ui.loop.layout.display == "none"
    assert [v for _, v in ui.target.options] == ex.legal_targets("compute_at", "C")
    ui.op.value = "reorder"
    assert list(ui.order.value) == ["i", "j", "k"]
    ui.order.value = ["j", "i", "k"]
    ui.apply_btn.click()
    assert ex.steps[-1].op == "reorder" and kinds(ex.schedule) == ["Split", "Reorder"]
    ui.undo_btn.click()
    assert len(ex.steps) == 1 and not ui.redo_btn.disabled
    ui.redo_btn.click()
    assert len(ex.steps) == 2 and ui.redo_btn.disabled
    ui.export_py_btn.click()
    assert ui.export.layout.display == "" and "def apply_trace(sch):" in ui.export.value
    ui.export_json_btn.click()
    assert json.loads(ui.export.value) == ex.schedule.trace.as_json()


def test_tile_fuse_cache_write_and_inline(ex: ScheduleExplorer) -> None:
    ex.select("C")
    assert ex.apply("tile", x="i", y="j", x_factor=8, y_factor=4) is not None
    assert [i.name for i in ex.loops()] == ["i_0", "j_0", "i_1", "j_1", "k"]
    assert ex.apply("fuse", loops=["i_0", "j_0"]) is not None
    assert ex.apply("cache_write", scope="local") is not None
    assert "C_local" in ex.blocks
    assert kinds(ex.schedule) == ["Split", "Split", "Reorder", "Fuse", "CacheWrite"]
    ex2 = ScheduleExplorer(matmul_exp(), display=False)
    ex2.select("C")
    assert ex2.apply("compute_inline") is None and "compute_inline" in ex2.error
    m = ex.measure()
    assert m is not None and m.correct


def test_explorer_needs_a_prim_func() -> None:
    with pytest.raises(ValueError, match="create_prim_func"):
        ScheduleExplorer("not a function", display=False)
    assert np.all(np.array(divisors(12)) == [1, 2, 3, 4, 6, 12])
