"""Golden traces: traces written by an earlier version replay to the same program.

Each ``tests/golden/traces/<workload>.<case>.json`` was written once by
make_trace_goldens.py (sketches the auto-scheduler sampled, and hand-written block- and
TE-style schedules). On every run it is replayed onto a fresh schedule of its workload
(golden_workloads.py) and must give the lowered IR and the Python rendering stored beside
it, and reproduce itself byte for byte through JSON. ``--update-golden`` rewrites the IR
and Python text, never the JSON: that is the on-disk form being frozen.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from golden_workloads import fresh_schedule

import ansor_lab as tvm
from ansor_lab import tir
from ansor_lab.schedule.trace import KINDS
from ansor_lab.script import from_source

TRACES = Path(__file__).resolve().parents[1] / "golden" / "traces"
CASES = sorted(p.name[: -len(".json")] for p in TRACES.glob("*.json"))


def _json_text(data: dict) -> str:
    """The form the golden JSON files are written in."""
    return json.dumps(data, indent=1) + "\n"


def test_the_goldens_use_every_instruction_kind():
    used = set()
    for case in CASES:
        used |= {inst[0] for inst in json.loads((TRACES / f"{case}.json").read_text())["insts"]}
    assert len(CASES) >= 20
    assert sorted(set(KINDS) - used) == [], "an instruction kind has no golden trace"


@pytest.mark.parametrize("case", CASES)
def test_golden_trace_replays_to_the_same_program(case, golden):
    text = (TRACES / f"{case}.json").read_text()
    data = json.loads(text)
    # JSON -> Trace -> JSON is the identity
    assert _json_text(tir.Trace.from_json(data).as_json()) == text
    assert _json_text(tir.Trace.from_json(text).as_json()) == text

    sch = fresh_schedule(case)
    sch.replay(data)
    golden.check(f"traces/{case}.ir.txt", tvm.lower(sch.mod).script())
    python = str(sch.trace) + "\n"
    golden.check(f"traces/{case}.py.txt", python)
    # replay records the same instructions, handles and decisions again; a search trace
    # whose get_loops listed unit loops (written before traces marked it) gains the mark
    replayed = sch.trace.as_json()
    assert replayed.pop("unit_loops", False) == ("show_unit_loops = True" in python)
    assert _json_text(replayed) == text
    # a trace read from JSON prints the same ``apply_trace(sch)``, once marked
    assert str(tir.Trace.from_json(sch.trace.as_json())) + "\n" == python


@pytest.mark.parametrize("case", CASES)
def test_golden_trace_python_replays_to_the_same_program(case, golden):
    python = golden.path(f"traces/{case}.py.txt").read_text()
    namespace: dict = {}
    exec(compile(python, f"<{case}.py.txt>", "exec"), namespace)  # noqa: S102 - our golden
    sch = fresh_schedule(case)
    namespace["apply_trace"](sch)
    assert tvm.lower(sch.mod).script() == golden.path(f"traces/{case}.ir.txt").read_text()
    assert str(sch.trace) + "\n" == python


@pytest.mark.parametrize("case", CASES)
def test_golden_trace_block_form_parses_back(case):
    # the programs the search sketches and the hand-written cases make print as TVM's
    # block form (or, where a cross-thread reduction has none, the loop form with a comment
    # saying so), and that text parses back to the same function
    sch = fresh_schedule(case)
    sch.replay((TRACES / f"{case}.json").read_text())
    text = sch.mod.script()
    if text.startswith("# no block form ("):
        assert "cross-thread reduction" in text.splitlines()[0]
        return
    tvm.ir.assert_structural_equal(sch.mod.main_function(), from_source(text))
