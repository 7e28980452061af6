"""Malformed traces and records get our errors, naming the instruction and field.

A trace file may be truncated, edited by hand or written by another program: reading and
replaying it raises ScheduleError (RecordError for a record line, naming the line), never
a raw TypeError, KeyError, IndexError, AttributeError or JSONDecodeError. The fuzz test
applies random mutations to every golden trace and checks that each failure is ours.
"""

from __future__ import annotations

import json
import random
import warnings
from pathlib import Path

import pytest
from golden_workloads import fresh_schedule
from trace_mutations import mutate

from ansor_lab import tir
from ansor_lab.errors import AnsorLabError, RecordError, ScheduleError
from ansor_lab.measure.records import decode, load_records

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
CASES = sorted(p.name[: -len(".json")] for p in (GOLDEN / "traces").glob("*.json"))


def _matmul_trace(*insts: list) -> dict:
    head = [
        ["GetBlock", [["name", "C"], ["func_name", "main"]], ["b0"], None],
        ["GetLoops", [["block", {"rv": "b0"}]], ["l1", "l2", "l3"], None],
    ]
    return {"version": 1, "insts": head + list(insts)}


SPLIT = ["Split", [["loop", {"rv": "l1"}], ["factors", [None, 8]]], ["l4", "l5"], None]

BAD = [
    ("not JSON", '{"version": 1, "insts": [', "not JSON"),
    ("truncated string", '{"version": 1, "ins', "not JSON"),
    ("a JSON list", "[1, 2]", "a JSON object is expected, got list"),
    ("a JSON number", "3", "a JSON object is expected, got int"),
    ("wrong version", {"version": 2, "insts": []}, "format version 2"),
    ("version as a string", {"version": "1", "insts": []}, "format version '1'"),
    ("no insts", {"version": 1}, "field 'insts' (the instruction list) is missing"),
    ("insts not a list", {"version": 1, "insts": {"a": 1}}, "field 'insts': a list"),
    ("instruction not a list", _matmul_trace("Split"), "instruction 2: [kind, args"),
    ("missing field", _matmul_trace(SPLIT[:3]), "instruction 2: [kind, args, outputs"),
    ("unknown kind", _matmul_trace(["Splitt", [], [], None]), "unknown instruction kind"),
    ("kind not a string", _matmul_trace([["Split"], [], [], None]), "unknown instruction"),
    (
        "unknown argument",
        _matmul_trace(["Split", [["lop", {"rv": "l1"}], ["factors", [None, 8]]], [], None]),
        "unknown argument 'lop'",
    ),
    (
        "missing argument",
        _matmul_trace(["Split", [["factors", [None, 8]]], ["l4", "l5"], None]),
        "argument 'loop' is missing",
    ),
    (
        "argument given twice",
        _matmul_trace(["Split", [*SPLIT[1], ["factors", [4, 8]]], ["l4", "l5"], None]),
        "argument 'factors' is given twice",
    ),
    ("args not a list", _matmul_trace(["Split", {"loop": 1}, [], None]), "[name, value]"),
    ("arg not a pair", _matmul_trace(["Split", [["loop"]], [], None]), "[name, value]"),
    (
        "handle used before defined",
        _matmul_trace(["Parallel", [["loop", {"rv": "l9"}]], [], None]),
        "uses l9 before it is defined",
    ),
    (
        "handle not a dict of rv",
        _matmul_trace(["Parallel", [["loop", {"rv": "l1", "x": 2}]], [], None]),
        "a handle is {'rv': name}",
    ),
    (
        "outputs not a list",
        _matmul_trace(["Split", SPLIT[1], "l4", None]),
        "the outputs are a list of handle names",
    ),
    (
        "output not a handle name",
        _matmul_trace(["Split", SPLIT[1], ["l4", "x5"], None]),
        "output 'x5' is not a handle name",
    ),
    (
        "output defined twice",
        _matmul_trace(["Split", SPLIT[1], ["l4", "l1"], None]),
        "output l1 is defined twice",
    ),
    (
        "a dict value",
        _matmul_trace(["Split", [["loop", {"rv": "l1"}], ["factors", {"a": 1}]], [], None]),
        "a handle is {'rv': name}",
    ),
]

# well-formed JSON whose values have the wrong type: caught when the step is replayed
WRONG_TYPES = [
    (
        "a string where a loop handle is expected",
        ["Split", [["loop", "l1"], ["factors", [None, 8]]], ["l4", "l5"], None],
        "split",
    ),
    (
        "a block where a loop is expected",
        ["Split", [["loop", {"rv": "b0"}], ["factors", [None, 8]]], ["l4", "l5"], None],
        "split",
    ),
    (
        "an int where a list of factors is expected",
        ["Split", [["loop", {"rv": "l1"}], ["factors", 8]], ["l4", "l5"], None],
        "factors must be a list",
    ),
    (
        "a list where an int is expected",
        ["SamplePerfectTile", [["loop", {"rv": "l1"}], ["n", [2]]], ["v4", "v5"], [8, 8]],
        "n must be an int",
    ),
    (
        "a string decision",
        ["SamplePerfectTile", [["loop", {"rv": "l1"}], ["n", 2]], ["v4", "v5"], "8,8"],
        "decision must be a list",
    ),
    (
        "a string factor",
        ["Split", [["loop", {"rv": "l1"}], ["factors", ["8", None]]], ["l4", "l5"], None],
        "factors must be positive ints",
    ),
    (
        "fuse of an int",
        ["Fuse", [["loops", 7]], ["l4"], None],
        "argument 'loops': a list is expected",
    ),
]


@pytest.mark.parametrize(("what", "data", "says"), BAD, ids=[b[0] for b in BAD])
def test_malformed_trace_is_a_schedule_error_naming_where(what, data, says):
    with pytest.raises(ScheduleError) as info:
        tir.Trace.from_json(data)
    msg = str(info.value)
    assert says in msg, msg
    assert "malformed trace" in msg and "was the file edited" in msg  # what to check


@pytest.mark.parametrize(("what", "inst", "says"), WRONG_TYPES, ids=[w[0] for w in WRONG_TYPES])
def test_a_value_of_the_wrong_type_is_a_schedule_error(what, inst, says):
    sch = fresh_schedule("matmul.loops")
    with pytest.raises(ScheduleError, match=says) as info:
        sch.replay(_matmul_trace(inst))
    assert (
        "instruction" in str(info.value)
        or "sample_perfect_tile" in str(info.value)
        or ("split" in str(info.value))
    )


def test_a_record_with_a_malformed_trace_is_skipped_naming_line_and_field(tmp_path):
    lines = (GOLDEN / "records" / "matmul_relu_16.jsonl").read_text().splitlines()
    rec = json.loads(lines[0])
    rec["trace"]["insts"][3][1][0][0] = "lop"  # Split's "loop" renamed
    bad = json.dumps(rec)
    with pytest.raises(RecordError, match=r"field 'trace': malformed trace instruction 3"):
        decode(bad)
    log = tmp_path / "log.json"
    log.write_text("\n".join([lines[0], bad, "not json", "[1]", lines[1]]) + "\n")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        records = list(load_records(str(log)))
    assert len(records) == 2
    messages = [str(w.message) for w in caught]
    assert any(
        ":2:" in m and "field 'trace'" in m and "unknown argument 'lop'" in m for m in messages
    )


def _fuzz(mutations_per_case: int, seed: str) -> dict:
    """Apply random mutations to every golden trace; return the outcome counts."""
    counts = {"tried": 0, "replayed": 0, "rejected": 0}
    for case in CASES:
        data = json.loads((GOLDEN / "traces" / f"{case}.json").read_text())
        rng = random.Random(f"{seed}:{case}")
        for _ in range(mutations_per_case):
            what, bad = mutate(data, rng)
            counts["tried"] += 1
            try:
                trace = tir.Trace.from_json(bad)
                sch = fresh_schedule(case)
                sch.replay(trace)
                sch.mod  # noqa: B018 - lowering is part of using a trace
                str(trace)
                counts["replayed"] += 1  # a harmless change (a flag, an unused value)
            except AnsorLabError:
                counts["rejected"] += 1
            except Exception as err:  # noqa: BLE001 - the point: nothing else may escape
                pytest.fail(f"{case}: {what}: raw {type(err).__name__}: {err}")
    return counts


@pytest.mark.filterwarnings("ignore::ansor_lab.errors.IgnoredArgumentWarning")
def test_fuzzed_golden_traces_fail_only_with_our_errors():
    counts = _fuzz(40, "fast")
    assert counts["tried"] == 40 * len(CASES) >= 1000
    assert counts["rejected"] > counts["tried"] // 2


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::ansor_lab.errors.IgnoredArgumentWarning")
def test_fuzzed_golden_traces_fail_only_with_our_errors_many():
    counts = _fuzz(400, "slow")
    print(f"malformed-trace fuzz: {counts}")
    assert counts["tried"] == 400 * len(CASES)
    assert counts["rejected"] > counts["tried"] // 2
