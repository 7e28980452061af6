"""The instruction-kind registry: one declaration per primitive, beside its method."""

from __future__ import annotations

import json

import pytest
from golden_workloads import fresh_schedule

from ansor_lab import tir
from ansor_lab.errors import ScheduleError
from ansor_lab.schedule.instruction_kind import InstructionKind, instruction, instruction_kind
from ansor_lab.schedule.trace import KINDS, Instruction, LoopRV, Trace


def test_every_kind_is_declared_on_its_method():
    assert len(KINDS) >= 27
    for name, decl in KINDS.items():
        method = getattr(tir.Schedule, decl.method)
        assert method.instruction is decl, name
        assert decl.name == name


def test_the_tables_derived_from_the_declarations():
    pure = {name for name, decl in KINDS.items() if decl.pure}
    # the getters, the sampling instructions and the post-processing marker read the state
    assert {
        "GetBlock",
        "GetLoops",
        "GetChildBlocks",
        "SamplePerfectTile",
        "SampleCategorical",
        "SampleComputeLocation",
        "EnterPostproc",
    } <= pure
    assert not pure & {"Split", "Fuse", "ComputeAt", "CacheRead", "DecomposeReduction"}
    sampling = {name for name, decl in KINDS.items() if decl.sampling}
    assert sampling == {"SamplePerfectTile", "SampleCategorical", "SampleComputeLocation"}
    assert KINDS["Split"].method == "split"
    assert KINDS["Fuse"].varargs == "loops"
    assert KINDS["Split"].outputs == "list" and KINDS["RFactor"].outputs == "one"
    assert Instruction("SampleCategorical", (), ()).is_sampling
    assert not Instruction("Split", (), ()).is_sampling


def _split_trace(arg_name: str) -> dict:
    return {
        "version": 1,
        "insts": [
            ["GetBlock", [["name", "C"], ["func_name", "main"]], ["b0"], None],
            ["GetLoops", [["block", {"rv": "b0"}]], ["l1", "l2", "l3"], None],
            ["Split", [["loop", {"rv": "l1"}], [arg_name, [None, 8]]], ["l4", "l5"], None],
        ],
    }


def test_an_unknown_stored_argument_is_our_error_naming_it():
    with pytest.raises(ScheduleError, match=r"instruction Split: unknown argument 'factor_list'"):
        Trace.from_json(_split_trace("factor_list"))
    with pytest.raises(ScheduleError, match=r"unknown argument 'factor_list'"):
        fresh_schedule("matmul").replay(json.dumps(_split_trace("factor_list")))
    # a trace built in memory is checked on replay too (never a TypeError)
    trace = Trace.from_json(_split_trace("factors"))
    bad = trace.insts[2]
    trace.insts[2] = Instruction("Split", (bad.args[0], ("nparts_", 4)), bad.outputs)
    with pytest.raises(ScheduleError, match=r"instruction Split: unknown argument 'nparts_'"):
        trace.apply_to_schedule(fresh_schedule("matmul"))


def test_an_unknown_kind_is_our_error():
    with pytest.raises(ScheduleError, match="unknown instruction kind 'Tile'"):
        instruction_kind("Tile")
    with pytest.raises(ScheduleError, match="malformed trace instruction"):
        Trace.from_json({"version": 1, "insts": [["Tile", [], [], None]]})


def test_replay_passes_arguments_under_the_declared_keyword():
    # a method whose keyword was renamed: the stored name "loop" is passed as loop_rv
    calls = []

    class Fake:
        def split(self, loop_rv, factors=None):
            calls.append((loop_rv, factors))
            return ["a", "b"]

    decl = InstructionKind(
        "Split", "split", inputs=("loop", "factors"), outputs="list", keywords={"loop": "loop_rv"}
    )
    assert decl.call(Fake(), [("loop", "L"), ("factors", [None, 4])]) == ["a", "b"]
    assert calls == [("L", [None, 4])]


def test_a_declaration_must_match_its_method():
    with pytest.raises(TypeError, match="has no parameter 'loop' for stored argument 'loop'"):

        @instruction("NotAKind", inputs=("loop",))
        def renamed(self, loop_rv):
            return None

    with pytest.raises(TypeError, match=r"no \*parameter 'loops'"):

        @instruction("NotAKind2", inputs=("loops",), varargs="loops")
        def not_varargs(self, loops):
            return None

    assert "NotAKind" not in KINDS and "NotAKind2" not in KINDS


def test_sample_decision_is_passed_back_through_the_declaration():
    sch = fresh_schedule("matmul")
    loop = sch.get_loops(sch.get_block("C"))[0]
    sch.sample_perfect_tile(loop, n=2, decision=[8, 8])
    data = sch.trace.as_json()
    fresh = fresh_schedule("matmul")
    Trace.from_json(data).apply_to_schedule(fresh, decisions={2: [4, 16]})
    assert fresh.trace.insts[2].decision == [4, 16]
    assert isinstance(fresh.trace.insts[1].outputs[0], LoopRV)
