"""Resource bombs are bounded: each hostile input below finishes, or is refused with our
error, within a time bound — never a RecursionError, never memory without end."""

from __future__ import annotations

import json
import random
import time
import warnings
from pathlib import Path

import numpy as np
import pytest

import ansor_lab as tvm
from ansor_lab import te, tir
from ansor_lab.errors import CodegenError, DSLError, ScheduleError
from ansor_lab.measure.records import load_records
from ansor_lab.schedule.primitives.loops import MAX_LOOP_NAME
from ansor_lab.schedule.sampling import count_tiles, sample_perfect_tile

SECONDS = 5.0


class _Within:
    """``with _Within(s):`` fails the test when the block takes longer than ``s`` seconds."""

    def __init__(self, seconds: float = SECONDS) -> None:
        self.seconds = seconds

    def __enter__(self) -> None:
        self.start = time.perf_counter()

    def __exit__(self, *exc: object) -> None:
        took = time.perf_counter() - self.start
        assert took < self.seconds, f"took {took:.1f} s (bound {self.seconds} s)"


def _vector(n: int = 1024):
    A = te.placeholder((n,), name="A")
    B = te.compute((n,), lambda i: A[i] + 1.0, name="B")
    return A, B


def test_thirty_rounds_of_fuse_split_keep_names_short_and_build():
    A, B = _vector()
    sch = tir.Schedule(te.create_prim_func([A, B]))
    (loop,) = sch.get_loops(sch.get_block("B"))
    names = []
    with _Within():
        for _ in range(30):
            outer, inner = sch.split(loop, [None, 2])
            loop = sch.fuse(outer, inner)
            names.append(sch.state.stage("B").leaves[0])
        f = tvm.build(sch.mod)
    # TVM's names while they are short (golden traces and docs keep theirs) ...
    assert names[0] == "i_0_i_1_fused"
    assert names[1] == "i_0_i_1_fused_0_i_0_i_1_fused_1_fused"
    # ... then a counter instead of doubling (it was 1 GB of name at round 24)
    assert max(len(n) for n in names) <= MAX_LOOP_NAME
    assert len(set(names)) == len(names)
    a = np.arange(1024, dtype="float32")
    b = np.zeros(1024, dtype="float32")
    f(a, b)
    np.testing.assert_array_equal(b, a + 1)
    # the index is the fused loop itself again, not a tree that doubles each round
    assert "//" not in sch.mod.script()


def test_rounds_that_grow_the_index_are_refused_at_the_step():
    A = te.placeholder((4096, 4096), name="A")
    B = te.compute((4096, 4096), lambda i, j: A[i, j] + 1.0, name="B")
    sch = tir.Schedule(te.create_prim_func([A, B]))
    loop, j = sch.get_loops(sch.get_block("B"))
    with _Within(), pytest.raises(ScheduleError, match="index would be an expression") as info:
        for _ in range(40):  # each round uses the fused loop twice in the next index
            a, b = sch.split(loop, [None, 2])
            c, j = sch.split(j, [2, None])
            loop = sch.fuse(a, b, c)
    assert "split and fuse the original loops once" in str(info.value)
    # the refused step changed nothing: the schedule still lowers
    assert "for" in sch.mod.script()


@pytest.mark.parametrize("style", ["split", "sample_perfect_tile"])
def test_a_thousand_way_split_is_refused(style):
    A, B = _vector()
    sch = tir.Schedule(te.create_prim_func([A, B]))
    (loop,) = sch.get_loops(sch.get_block("B"))
    with _Within(1.0), pytest.raises(ScheduleError, match="64") as info:
        if style == "split":
            sch.split(loop, factors=[1] * 999 + [None])
        else:
            sch.sample_perfect_tile(loop, n=1000)
    assert "fewer parts" in str(info.value) or "tile sizes to draw" in str(info.value)
    assert len(sch.trace.insts) == 2  # get_block, get_loops: nothing recorded


def test_the_largest_split_allowed_builds():
    A, B = _vector(64)
    sch = tir.Schedule(te.create_prim_func([A, B]))
    (loop,) = sch.get_loops(sch.get_block("B"))
    with _Within():
        sch.split(loop, factors=[1] * 57 + [None] + [2] * 6)
        f = tvm.build(sch.mod)
    a = np.arange(64, dtype="float32")
    b = np.zeros(64, dtype="float32")
    f(a, b)
    np.testing.assert_array_equal(b, a + 1)


@pytest.mark.parametrize("depth", [10_000, 100_000])
def test_deeply_nested_expression_is_refused(depth):
    A = te.placeholder((16,), name="A")

    def body(i):
        e = A[i]
        for _ in range(depth):
            e = e + 1.0
        return e

    with _Within(), pytest.raises(DSLError, match="nests more than 150") as info:
        te.compute((16,), body, name="B")
    assert "split it into several te.compute stages" in str(info.value)


def test_inlining_a_long_chain_is_refused_not_a_recursion_error():
    A = te.placeholder((16,), name="A")
    prev, stages = A, []
    for s in range(12):

        def body(i, prev=prev):
            e = prev[i]
            for _ in range(100):
                e = e + 1.0
            return e

        prev = te.compute((16,), body, name=f"S{s}")
        stages.append(prev)
    sch = te.create_schedule(prev.op)
    with _Within(), pytest.raises((ScheduleError, CodegenError), match="nest too deeply"):
        for st in stages[:-1]:
            sch[st].compute_inline()
        tvm.build(sch, [A, prev])


def _deep_trace_text(depth: int) -> str:
    return (
        '{"version": 1, "insts": [["GetBlock", [["name", '
        + "[" * depth
        + "]" * depth
        + '], ["func_name", "main"]], ["b0"], null]]}'
    )


def test_a_hundred_thousand_deep_trace_is_refused():
    with _Within(), pytest.raises(ScheduleError, match="nested too deeply"):
        tir.Trace.from_json(_deep_trace_text(100_000))
    with _Within(), pytest.raises(ScheduleError, match="nested more than 4 deep"):
        tir.Trace.from_json(_deep_trace_text(50))


def test_a_hundred_thousand_deep_record_line_is_skipped(tmp_path):
    good = _golden_record_line()
    log = tmp_path / "log.json"
    deep = '{"v": 1, "trace": ' + "[" * 100_000 + "]" * 100_000 + "}"
    log.write_text(good + "\n" + deep + "\n" + good + "\n")
    with _Within(), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        records = list(load_records(str(log)))
    assert len(records) == 2
    assert any(":2:" in str(w.message) for w in caught), [str(w.message) for w in caught]


def _golden_record_line() -> str:
    path = Path(__file__).resolve().parents[1] / "golden" / "records" / "matmul_relu_16.jsonl"
    return path.read_text().splitlines()[0]


def test_a_million_instruction_trace_is_refused():
    inst = ["EnterPostproc", [], [], None]
    data = {"version": 1, "insts": [inst] * 1_000_000}
    with _Within(), pytest.raises(ScheduleError, match="more than 100000"):
        tir.Trace.from_json(data)
    text = '{"version": 1, "insts": [' + ",".join([json.dumps(inst)] * 1_000_000) + "]}"
    with _Within(1.0), pytest.raises(ScheduleError, match="characters, more than"):
        tir.Trace.from_json(text)  # refused before parsing 32 MB


def test_a_long_trace_within_the_limit_replays_in_linear_time():
    A, B = _vector(8)
    n = 20_000
    get = ["GetBlock", [["name", "B"], ["func_name", "main"]]]
    data = {"version": 1, "insts": [[*get, [f"b{k}"], None] for k in range(n)]}
    with _Within():
        sch = tir.Schedule(te.create_prim_func([A, B])).replay(data)
    assert len(sch.trace.insts) == n


def test_tile_sampling_never_lists_a_huge_space():
    assert count_tiles(2**30, 8) > 10**6
    with _Within(1.0):
        tiles = [sample_perfect_tile(random.Random(s), 2**30, 8, 1) for s in range(20)]
    for t in tiles:
        assert len(t) == 8 and t[-1] == 1 and int(np.prod(t)) == 2**30
