"""TVM's surface where it used to swallow mistakes: ignored keywords warn once,
``decompose_reduction`` returns the init block, a trace read from JSON prints itself."""

from __future__ import annotations

import json
import warnings

import pytest
from golden_workloads import WORKLOADS, fresh_schedule

import ansor_lab as tvm
from ansor_lab import te, tir
from ansor_lab.errors import IgnoredArgumentWarning, ScheduleError
from ansor_lab.schedule import ignored


@pytest.fixture(autouse=True)
def _fresh_warning_memory():
    ignored.reset()
    yield
    ignored.reset()


def _warnings(step) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        step()
    return [str(w.message) for w in caught if issubclass(w.category, IgnoredArgumentWarning)]


# -- ignored TVM keywords ----------------------------------------------------------------


def test_split_and_fuse_preserve_unit_iters():
    sch = fresh_schedule("matmul")
    i, j, k = sch.get_loops(sch.get_block("C"))
    assert _warnings(lambda: sch.split(i, [None, 8], preserve_unit_iters=True)) == []
    (msg,) = _warnings(lambda: sch.split(j, [None, 8], preserve_unit_iters=False))
    assert msg.startswith(
        "tir.Schedule.split: preserve_unit_iters=False is accepted for TVM compatibility but "
        "ignored: ansor_lab behaves as with preserve_unit_iters=True"
    )
    # once per keyword per process; positionally too
    assert _warnings(lambda: sch.split(k, [None, 4], False)) == []
    i0, i1, *_ = sch.get_loops(sch.get_block("C"))
    (msg,) = _warnings(lambda: sch.fuse(i0, i1, preserve_unit_iters=False))
    assert "tir.Schedule.fuse: preserve_unit_iters=False" in msg


def test_compute_at_keywords_warn_each_once_and_change_nothing():
    def schedule(**kw):
        sch = fresh_schedule("matmul_exp")
        i0, _ = sch.split(sch.get_loops(sch.get_block("D"))[0], [None, 16])
        sch.compute_at(sch.get_block("C"), i0, **kw)
        return sch.mod.script()

    expected = schedule()
    assert _warnings(lambda: schedule(preserve_unit_loops=False, index=-1)) == []
    msgs = _warnings(lambda: schedule(preserve_unit_loops=True, index=0))
    assert [m.split(" is accepted")[0] for m in msgs] == [
        "tir.Schedule.compute_at: preserve_unit_loops=True",
        "tir.Schedule.compute_at: index=0",
    ]
    assert _warnings(lambda: schedule(preserve_unit_loops=True)) == []
    assert schedule(preserve_unit_loops=True, index=0) == expected


def test_buffer_index_of_storage_align_and_set_scope():
    sch = fresh_schedule("chain")
    c = sch.get_block("C")
    assert _warnings(lambda: sch.storage_align(c, 0, 0, 16, 1)) == []
    (msg,) = _warnings(lambda: sch.storage_align(c, buffer_index=1, axis=0, factor=16, offset=2))
    assert "tir.Schedule.storage_align: buffer_index=1" in msg
    d = sch.get_block("D")
    assert _warnings(lambda: sch.set_scope(d, 0, "shared")) == []
    (msg,) = _warnings(lambda: sch.set_scope(d, 2, "shared"))
    assert "tir.Schedule.set_scope: buffer_index=2" in msg


def test_create_prim_func_index_dtype():
    args = WORKLOADS["matmul"]()
    assert _warnings(lambda: te.create_prim_func(args, "int32")) == []
    assert _warnings(lambda: te.create_prim_func(args)) == []
    (msg,) = _warnings(lambda: te.create_prim_func(args, "int64"))
    assert msg.startswith("create_prim_func: index_dtype_override='int64' is accepted")
    assert _warnings(lambda: te.create_prim_func(args, "int64")) == []


def test_the_warning_points_at_the_callers_line():
    sch = fresh_schedule("matmul")
    i = sch.get_loops(sch.get_block("C"))[0]
    with pytest.warns(IgnoredArgumentWarning) as caught:
        sch.split(i, [None, 8], preserve_unit_iters=False)
    assert caught[0].filename == __file__


# -- decompose_reduction returns the init ------------------------------------------------


def test_decompose_reduction_returns_the_init_block():
    sch = fresh_schedule("matmul")
    c = sch.get_block("C")
    i, j, k = sch.get_loops(c)
    init = sch.decompose_reduction(c, k)
    assert isinstance(init, tir.BlockRV) and init != c
    info = sch.get(init)
    assert (info.name, info.writes) == ("C_init", "C")
    again = sch.get_block("C_init")
    assert sch.get(again).name == "C_init"
    lines = str(sch.trace).splitlines()
    assert lines[-2:] == [
        "  b4 = sch.decompose_reduction(block=b0, loop=l3)",
        '  b5 = sch.get_block(name="C_init", func_name="main")',
    ]
    # the trace replays, handles and all
    fresh = fresh_schedule("matmul").replay(sch.trace.as_json())
    assert fresh.get(fresh.trace.insts[-1].outputs[0]).name == "C_init"
    assert fresh.mod.script() == sch.mod.script()


def test_the_init_handle_is_refused_by_primitives_with_what_to_do():
    sch = fresh_schedule("matmul")
    c = sch.get_block("C")
    init = sch.decompose_reduction(c, sch.get_loops(c)[1])
    with pytest.raises(ScheduleError, match=r"cache_write: b\d is 'C_init', the init .* schedule "):
        sch.cache_write(init, 0, "global")
    # its loops (as TVM's C_init has them): the update's outside the decomposition point,
    # then its own copies of the spatial loops inside, which can only be annotated
    i, j_init = sch.get_loops(init)
    assert (sch.get(i).block, sch.get(j_init).block) == ("C", "C_init")
    with pytest.raises(ScheduleError, match=r"split: .* is a loop of C_init.*annotated"):
        sch.split(j_init, [None, 4])
    sch.vectorize(j_init)
    lowered = tvm.lower(sch.mod).script()
    assert lowered.count("T.vectorized(48)") == 1  # the init's copy only, not the update's
    assert (
        sch.get(j_init).annotation == "vectorize" and sch.get(sch.get_loops(c)[1]).annotation == ""
    )
    with pytest.raises(ScheduleError, match=r"no block|unknown|C_init"):
        fresh_schedule("matmul").get_block("C_init")  # no init before decomposing


# -- a trace read from JSON prints itself --------------------------------------------------


def test_trace_from_json_prints_apply_trace():
    sch = fresh_schedule("matmul")
    c = sch.get_block("C")
    i, j, k = sch.get_loops(c)
    sch.split(i, [None, 8])
    text = json.dumps(sch.trace.as_json())
    read = tir.Trace.from_json(text)
    assert isinstance(read, tir.Trace)
    assert str(read) == str(sch.trace)
    assert str(read).splitlines() == [
        "def apply_trace(sch):",
        '  b0 = sch.get_block(name="C", func_name="main")',
        "  l1, l2, l3 = sch.get_loops(block=b0)",
        "  l4, l5 = sch.split(loop=l1, factors=[None, 8])",
    ]
