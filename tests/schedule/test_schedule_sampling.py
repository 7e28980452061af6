"""Sampling instructions, seeds, decisions, replays with changed decisions, copy()."""

from __future__ import annotations

import json
import math

import pytest
from schedule_helpers import (
    check,
    elementwise3,
    matmul,
    matmul_exp,
    replay_json,
    replay_python,
    schedule,
    verify_trace_roundtrip,
)

import ansor_lab as tvm
from ansor_lab import te, tir
from ansor_lab.errors import ScheduleError


def _tile_trace(seed: int, n: int = 3, max_innermost: int = 16) -> tuple[list, tir.Schedule]:
    A, B, C = matmul(64, 48, 32)
    sch = schedule([A, B, C], seed=seed)
    i, j, k = sch.get_loops(sch.get_block("C"))
    decisions = []
    for loop in (i, j, k):
        vs = sch.sample_perfect_tile(loop, n=n, max_innermost_factor=max_innermost)
        decisions.append([sch.get(v) for v in vs])
    verify_trace_roundtrip(sch)
    return decisions, sch


@pytest.mark.parametrize("max_innermost", [4, 16])
def test_sample_perfect_tile_multiplies_to_the_extent_and_bounds_the_innermost(max_innermost):
    seen = set()
    for seed in range(40):
        decisions, _ = _tile_trace(seed, 3, max_innermost)
        for extent, d in zip((64, 48, 32), decisions):
            assert len(d) == 3 and math.prod(d) == extent and min(d) >= 1
            assert d[-1] <= max_innermost
            seen.add((extent, tuple(d)))
    assert len(seen) > 30  # the draws really vary


def test_sample_perfect_tile_of_a_prime_extent_and_n_1():
    A, B, C = elementwise3(7, 13)
    sch = schedule([A, C], seed=3)
    i, j = sch.get_loops(sch.get_block("C"))
    assert [sch.get(v) for v in sch.sample_perfect_tile(i, 1)] == [7]
    d = [sch.get(v) for v in sch.sample_perfect_tile(j, 2, max_innermost_factor=4)]
    assert d == [13, 1]  # 13 is the only other factor, and it is above the limit
    verify_trace_roundtrip(sch)


def test_sampled_tiles_drive_a_split():
    A, B, C = matmul()
    sch = schedule([A, B, C], seed=5)
    i, j, _ = sch.get_loops(sch.get_block("C"))
    vi = sch.sample_perfect_tile(i, n=3, max_innermost_factor=8)
    vj = sch.sample_perfect_tile(j, n=2, max_innermost_factor=8)
    li = sch.split(i, vi)
    lj = sch.split(j, vj)
    assert [sch.get(x).extent for x in li] == [sch.get(v) for v in vi]
    assert [sch.get(x).extent for x in lj] == [sch.get(v) for v in vj]
    sch.reorder(li[0], lj[0], li[1], lj[1], li[2])
    sch.parallel(li[0])
    text = check(sch, [A, B, C], absent=["if "])
    assert f"for i_0 in T.parallel({sch.get(vi[0])}):" in text


def test_same_seed_same_decisions_and_different_seeds_differ():
    first, sch1 = _tile_trace(11)
    again, sch2 = _tile_trace(11)
    assert first == again
    assert str(sch1.trace) == str(sch2.trace)
    assert len({json.dumps(_tile_trace(s)[0]) for s in range(8)}) > 1


def test_fork_seed_is_deterministic_and_seeds_a_child():
    _, a = _tile_trace(21)
    _, b = _tile_trace(21)
    seed_a, seed_b = a.fork_seed(), b.fork_seed()
    assert seed_a == seed_b and seed_a > 0
    assert _tile_trace(seed_a)[0] == _tile_trace(seed_b)[0]
    # forking advances the generator: the next fork differs
    assert a.fork_seed() != seed_a


def test_reseeding_restarts_the_draws():
    decisions, sch = _tile_trace(2)
    sch.seed(2)
    A, B, C = matmul(64, 48, 32)
    i = sch.get_loops(sch.get_block("C"))[0]
    assert [sch.get(v) for v in sch.sample_perfect_tile(i, n=3)] == decisions[0]


def test_with_decision_replay_changes_the_split():
    A, B, C = matmul()
    sch = schedule([A, B, C], seed=0)
    i, _, _ = sch.get_loops(sch.get_block("C"))
    vs = sch.sample_perfect_tile(i, n=2, max_innermost_factor=16, decision=[16, 4])
    io, ii = sch.split(i, vs)
    sch.parallel(io)
    check(sch, [A, B, C], contains=["for i_0 in T.parallel(16):", "for i_1 in range(4):"])
    trace = sch.trace
    inst = next(x for x in trace.insts if x.kind == "SamplePerfectTile")
    assert trace.decisions[inst] == [16, 4] == trace.get_decision(inst)
    new_trace = trace.with_decision(inst, [4, 16])
    assert "decision=[4, 16]" in str(new_trace) and "decision=[16, 4]" in str(trace)
    func = te.create_prim_func([A, B, C])
    for replay in (replay_python, replay_json):
        fresh = replay(new_trace, tir.Schedule(func))
        text = tvm.lower(fresh.mod).script()
        assert "for i_0 in T.parallel(4):" in text and "for i_1 in range(16):" in text
    # by index too; a non-sampling instruction has no decision to change
    k = trace.insts.index(inst)
    assert "decision=[8, 8]" in str(trace.with_decision(k, [8, 8]))
    with pytest.raises(ScheduleError, match="makes no decision"):
        trace.with_decision(0, 3)


def test_replaying_an_impossible_decision_fails():
    A, B, C = matmul()
    sch = schedule([A, B, C])
    i, _, _ = sch.get_loops(sch.get_block("C"))
    sch.sample_perfect_tile(i, n=2, decision=[8, 8])
    inst = sch.trace.insts[-1]
    bad = sch.trace.with_decision(inst, [5, 5])
    with pytest.raises(ScheduleError, match=r"decision \[5, 5\] does not split loop 'i'"):
        bad.apply_to_schedule(tir.Schedule(te.create_prim_func([A, B, C])))
    verify_trace_roundtrip(sch)


def test_sample_categorical():
    A, B, C = elementwise3(8, 8)
    sch = schedule([A, C], seed=4)
    draws = [sch.get(sch.sample_categorical([16, 64, 512], [0.5, 0.0, 0.5])) for _ in range(60)]
    assert set(draws) == {16, 512}  # a zero-probability candidate is never drawn
    v = sch.sample_categorical([0, 16, 64], [0.2, 0.3, 0.5], decision=2)
    assert sch.get(v) == 64
    _, j = sch.get_loops(sch.get_block("C"))
    sch.annotate(j, "pragma_auto_unroll_max_step", v)
    assert (
        "sch.sample_categorical(candidates=[0, 16, 64], probs=[0.2, 0.3, 0.5], decision=2)"
    ) in str(sch.trace)
    check(sch, [A, C], contains=['annotations={"pragma_auto_unroll_max_step": 64}'])
    inst = [x for x in sch.trace.insts if x.kind == "SampleCategorical"][-1]
    changed = sch.trace.with_decision(inst, 0)
    fresh = replay_json(changed, tir.Schedule(te.create_prim_func([A, C])))
    assert '"pragma_auto_unroll_max_step": 0' in fresh.mod.script()


def test_sample_compute_location_inline_root_and_loops():
    A, B, C = elementwise3(16, 16)
    func = te.create_prim_func([A, C])
    expected = {
        -2: ["C[i, j] = A[i, j] * T.float32(2.0) + T.float32(1.0)"],
        -1: ['    B = T.alloc_buffer((16, 16), "float32")'],
        0: ['for i_1 in range(16):\n        B = T.alloc_buffer((1, 16), "float32")'],
        1: ['B = T.alloc_buffer((1, 1), "float32")'],
    }
    for decision, contains in expected.items():
        sch = tir.Schedule(func, seed=0)
        b = sch.get_block("B")
        sch.get_loops(sch.get_block("C"))
        assert sch.compute_location_candidates(b) == [("C", "i"), ("C", "j")]
        loc = sch.sample_compute_location(b, decision=decision)
        assert sch.get(loc) == {-2: "__inline__", -1: "__root__"}.get(decision, sch.get(loc))
        sch.compute_at(b, loc)
        check(sch, [A, C], contains=contains)


def test_sample_compute_location_draws_only_legal_choices():
    A, B, C, D = matmul_exp(16, 16, 16)
    func = te.create_prim_func([A, B, D])
    seen = set()
    for seed in range(25):
        sch = tir.Schedule(func, seed=seed)
        c = sch.get_block("C")
        loc = sch.sample_compute_location(c)
        decision = sch.trace.insts[-1].decision
        seen.add(decision)
        sch.compute_at(c, loc)  # a reduction can go to root or a loop, never inline
        verify_trace_roundtrip(sch)
    assert seen == {-1, 0, 1}
    sch = tir.Schedule(func)
    with pytest.raises(ScheduleError, match=r"decision -2 is not one of \[-1, 0, 1\]"):
        sch.sample_compute_location(sch.get_block("C"), decision=-2)


def test_sample_compute_location_draws_tvm_candidates_and_replays_any_loop():
    """Draws skip the consumer's loops of extent 1 and its reduction loops inside its
    spatial ones, as TVM's SampleComputeLocation; a recorded decision may name them."""
    A = te.placeholder((4, 1, 64), name="A")
    B = te.compute((4, 1, 64), lambda i, u, k: A[i, u, k] * 2.0, name="B")
    k = te.reduce_axis((0, 64), name="k")
    S = te.compute((4, 1), lambda i, u: te.sum(B[i, u, k], axis=k), name="S")
    func = te.create_prim_func([A, S])
    seen = set()
    for seed in range(30):
        sch = tir.Schedule(func, seed=seed)
        loc = sch.sample_compute_location(sch.get_block("B"))
        seen.add(sch.trace.insts[-1].decision)
        sch.compute_at(sch.get_block("B"), loc)
    # S's loops are i, u (extent 1) and k (a reduction after the last spatial loop)
    assert seen == {-2, -1, 0}
    assert sch.location_choices[-1] == (-2, -1, 0)
    for decision in (1, 2):  # still places, when a trace names them
        sch = tir.Schedule(func, seed=0)
        b = sch.get_block("B")
        sch.compute_at(b, sch.sample_compute_location(b, decision=decision))
        check(sch, [A, S])
    for bad in (3, 1.0, "0"):  # a hand-edited trace: our error, never a TypeError
        sch = tir.Schedule(func)
        with pytest.raises(ScheduleError, match=r"is not one of \[-2, -1, 0, 1, 2\]"):
            sch.sample_compute_location(sch.get_block("B"), decision=bad)


@pytest.mark.parametrize(
    ("candidates", "probs", "decision", "message"),
    [
        (["a"], [1.0], None, "candidates are ints"),
        ([1], ["x"], None, "probs are numbers"),
        ([1, 2], [0.5, -0.5], None, "at least 0 and not all 0"),
        ([1, 2], [0, 0], None, "not all 0"),
        ([1, 2], [float("nan"), 1], None, "must be finite"),
        (3, [1], None, "are lists"),
        ([1, 2], [0.5, 0.5], "x", "out of range: it is an index of the 2 candidates"),
        ([1, 2], [0.5, 0.5], 1.5, "out of range"),
        ([1, 2], [0.5, 0.5], 2, "out of range"),
    ],
)
def test_sample_categorical_refuses_bad_arguments_with_our_error(
    candidates, probs, decision, message
):
    A, B, C = elementwise3(8, 8)
    sch = tir.Schedule(te.create_prim_func([A, C]))
    with pytest.raises(ScheduleError, match=message):
        sch.sample_categorical(candidates, probs, decision=decision)


def test_copy_is_independent_and_keeps_handles_and_generator():
    A, B, C = matmul()
    sch = schedule([A, B, C], seed=9)
    i, j, k = sch.get_loops(sch.get_block("C"))
    io, ii = sch.split(i, [None, 16])
    before = sch.mod.script()
    dup = sch.copy()
    dup.parallel(io)  # handles of the original are valid on the copy
    dup.split(j, [None, 8])
    assert sch.mod.script() == before
    assert len(sch.trace.insts) + 2 == len(dup.trace.insts)
    assert "T.parallel" in dup.mod.script() and "T.parallel" not in before
    # the original's handle j still refers to the unsplit loop in the original
    assert sch.get(j).extent == 48
    with pytest.raises(ScheduleError, match="stale"):
        dup.get(j)
    # both continue the same random stream
    assert [sch.get(v) for v in sch.sample_perfect_tile(k, 3)] == [
        dup.get(v) for v in dup.sample_perfect_tile(k, 3)
    ]
    check(dup, [A, B, C], contains=["for i_0 in T.parallel(4):", "for j_1 in range(8):"])
    check(sch, [A, B, C], contains=["for i_0 in range(4):"])


def test_trace_json_format_and_errors():
    A, B, C = matmul(16, 16, 16)
    sch = schedule([A, B, C])
    i, _, _ = sch.get_loops(sch.get_block("C"))
    vs = sch.sample_perfect_tile(i, 2, decision=[4, 4])
    sch.split(i, vs)
    data = sch.trace.as_json()
    assert data["version"] == 1
    assert data["insts"][0] == ["GetBlock", [["name", "C"], ["func_name", "main"]], ["b0"], None]
    assert data["insts"][2][3] == [4, 4]
    assert data["insts"][3] == [
        "Split",
        [["loop", {"rv": "l1"}], ["factors", [{"rv": "v4"}, {"rv": "v5"}]]],
        ["l6", "l7"],
        None,
    ]
    assert json.loads(sch.trace.dumps()) == data
    verify_trace_roundtrip(sch)
    func = te.create_prim_func([A, B, C])
    fresh = tir.Schedule(func).replay(sch.trace.dumps())  # JSON text replays too
    assert fresh.mod.script() == sch.mod.script()
    with pytest.raises(ScheduleError, match="format version"):
        tir.Trace.from_json({"version": 99, "insts": []})
    with pytest.raises(ScheduleError, match="malformed trace instruction"):
        tir.Trace.from_json({"version": 1, "insts": [["Exec", [], [], None]]})
    with pytest.raises(ScheduleError, match="uses l9 before it is defined"):
        tir.Trace.from_json(
            {"version": 1, "insts": [["Parallel", [["loop", {"rv": "l9"}]], [], None]]}
        ).apply_to_schedule(tir.Schedule(func))


def test_enter_postproc_and_without_postproc():
    A, B, C = elementwise3(8, 8)
    sch = schedule([A, C])
    i, j = sch.get_loops(sch.get_block("C"))
    v = sch.sample_categorical([1, 2], [0.5, 0.5], decision=1)
    sch.enter_postproc()
    sch.parallel(i)
    assert sch.trace.insts[-2].kind == "EnterPostproc"
    short = sch.trace.without_postproc()
    assert [x.kind for x in short.insts][-1] == "SampleCategorical"
    # with_decision drops the post-processing by default, like TVM
    inst = sch.trace.insts[2]
    assert sch.get(v) == 2
    assert "parallel" not in str(sch.trace.with_decision(inst, 0))
    assert "parallel" in str(sch.trace.with_decision(inst, 0, remove_postproc=False))
    check(sch, [A, C], contains=["for i_1 in T.parallel(8):"])
