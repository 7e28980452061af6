"""Property: every random schedule's program prints as TVMScript that parses back to it.

The schedule fuzzer's random block-style schedules (``schedule_gen``) over its workloads;
for each, ``sch.mod.script()`` (TVM's block form) is parsed with
``tvm.script.from_source`` and must be structurally equal to ``sch.mod["main"]`` (which
compares as its block form). Parsing is cheap (nothing is compiled); one schedule in four
also builds the parsed text with LLVM and checks its outputs against the reference (the
text is a program that runs, as written). The quick tier checks 6 schedules per workload,
the slow tier 60.
"""

from __future__ import annotations

import pytest
from fuzz_workloads import NAMES, compare, run_built, workload
from hypothesis import HealthCheck, given, note, settings, strategies as st
from schedule_gen import Fuzzer, HypothesisChooser

import ansor_lab as tvm
from ansor_lab.script import from_source

COMMON = dict(
    deadline=None,
    database=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def _roundtrip_one(name: str, data: st.DataObject) -> None:
    w = workload(name)
    sch = w.fresh(seed=data.draw(st.integers(1, 2**31 - 2), label="seed"))
    fz = Fuzzer(sch, HypothesisChooser(data))
    for _ in range(data.draw(st.integers(1, 10), label="steps")):
        fz.step()
    func = sch.mod["main"]
    text = func.script()
    note(text)
    parsed = from_source(text)
    tvm.ir.assert_structural_equal(func, parsed)
    if data.draw(st.integers(0, 3), label="build the parsed text") == 0:
        compare(w, run_built(w, parsed))


@settings(max_examples=6 * len(NAMES), **COMMON)
@given(data=st.data())
def test_printed_schedules_parse_back_quick(data: st.DataObject) -> None:
    _roundtrip_one(data.draw(st.sampled_from(NAMES), label="workload"), data)


@pytest.mark.slow
@settings(max_examples=60 * len(NAMES), **COMMON)
@given(data=st.data())
def test_printed_schedules_parse_back(data: st.DataObject) -> None:
    _roundtrip_one(data.draw(st.sampled_from(NAMES), label="workload"), data)
