"""tir.Schedule on hand-written loop programs: the loop primitives, with TVM's legality."""

from __future__ import annotations

import numpy as np
import pytest
from script_corpus import HAND_FUSED

import ansor_lab as tvm
from ansor_lab.errors import ScheduleError
from ansor_lab.schedule.loop_program import LoopProgramSchedule
from ansor_lab.script import from_source


def _fused_inputs():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((32, 64)).astype("float32") / 8
    b = rng.standard_normal((64, 32)).astype("float32") / 8
    e = rng.standard_normal((32, 48)).astype("float32")
    return a, b, e, np.exp(a @ b) @ e


def _run(mod, a, b, e) -> np.ndarray:
    f = np.empty((32, 48), "float32")
    tvm.build(mod, target="llvm")(a, b, e, f)
    return f


def test_the_mlc_article_vectorizes_the_hand_fused_module():
    tir_sch = tvm.tir.Schedule(from_source(HAND_FUSED))
    assert isinstance(tir_sch, LoopProgramSchedule)
    (*_, li) = tir_sch.get_loops("C")
    tir_sch.vectorize(li)
    (*_, ni) = tir_sch.get_loops("F")
    tir_sch.vectorize(ni)
    assert tir_sch.mod.script().count("T.vectorized(8)") == 2
    assert "sch.vectorize(loop=" in str(tir_sch.trace)
    # the block bindings (v_l = l_0_m * 8 + l_1) are substituted: contiguous SIMD, no gathers
    report = tvm.build(tir_sch.mod).loop_report()
    assert report.count("vector_loads") == 2 and "gathers" not in report
    a, b, e, want = _fused_inputs()
    np.testing.assert_allclose(_run(tir_sch.mod, a, b, e), want, rtol=1e-4, atol=1e-4)


def test_split_fuse_reorder_unroll_keep_the_result():
    sch = tvm.tir.Schedule(from_source(HAND_FUSED))
    loops = sch.get_loops("D")
    outer, inner = sch.split(loops[-1], factors=[None, 3])  # 8 = 3 * 3 - 1: guarded
    assert "if " in sch.mod.script()
    sch.reorder(inner, outer)
    fused = sch.fuse(*sch.get_loops("D")[-2:])
    sch.unroll(fused)
    sch.annotate(sch.get_loops("F")[0], "pragma_auto_unroll_max_step", 16)
    a, b, e, want = _fused_inputs()
    np.testing.assert_allclose(_run(sch.mod, a, b, e), want, rtol=1e-4, atol=1e-4)


def test_illegal_loop_kinds_are_refused_with_the_reason():
    sch = tvm.tir.Schedule(from_source(HAND_FUSED))
    with pytest.raises(ScheduleError, match="reduction variable v_rk"):
        sch.vectorize(sch.get_loops("C")[2])
    with pytest.raises(ScheduleError, match="not perfectly nested"):
        loops = sch.get_loops("D")
        sch.reorder(loops[-1], loops[0])
    with pytest.raises(ScheduleError, match="not available on a hand-written loop program"):
        sch.rfactor  # noqa: B018 - the access raises
    # the program is unchanged by the refused steps
    a, b, e, want = _fused_inputs()
    np.testing.assert_allclose(_run(sch.mod, a, b, e), want, rtol=1e-4, atol=1e-4)


def test_parallel_over_one_block_is_allowed():
    text = """
@T.prim_func
def main(A: T.Buffer((64, 32), "float32"), B: T.Buffer((64,), "float32")):
    for i, j in T.grid(64, 32):
        with T.block("B"):
            vi, vj = T.axis.remap("SR", [i, j])
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vj] * T.float32(2)
    for i in range(64):
        B[i] = B[i] + T.float32(1)
"""
    sch = tvm.tir.Schedule(from_source(text))
    i, j = sch.get_loops("B")
    sch.parallel(i)
    with pytest.raises(ScheduleError, match="reduction variable"):
        sch.parallel(j)
    a = np.random.default_rng(1).random((64, 32), dtype="float32")
    out = np.empty(64, "float32")
    tvm.build(sch.mod)(a, out)
    np.testing.assert_allclose(out, 2 * a.sum(1) + 1, rtol=1e-5)
