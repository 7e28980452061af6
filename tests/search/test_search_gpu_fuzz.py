"""A differential fuzzer of GPU programs: random sketches, random annotation, mutations.

Hypothesis draws a workload, one of its GPU sketches, the sampling seed and a few
mutations; the program must replay, or be dropped as invalid by the search's own filter
(``gpu_check``), and every valid one must lower, split into kernels within the target's
limits and (where the GPU emulator is in the checkout) compute the numpy reference.
Quick tier: 20 programs; slow tier: 150.
"""

from __future__ import annotations

import pytest
from gpu_search_helpers import GPU_WORKLOADS, check_gpu_program, has_emulator, policy_of
from hypothesis import HealthCheck, Phase, given, settings, strategies as st

from ansor_lab.errors import LoweringError, ScheduleError
from ansor_lab.schedule.lower import lower_state
from ansor_lab.search.gpu_check import program_problems

COMMON = dict(
    deadline=None,
    database=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
OUTCOMES: dict[str, int] = {}


def run_case(draw, thorough: bool = False) -> str:
    name = draw(st.sampled_from(sorted(GPU_WORKLOADS)), label="workload")
    policy = policy_of(name)
    sketch = draw(st.integers(0, len(policy.sketches) - 1), label="sketch")
    policy.space.rng.seed(draw(st.integers(0, 2**31 - 1), label="seed"))
    r = policy.space.sample(sketch=sketch)
    if r is None:
        return "refused by replay"
    cand = r[0]
    for _ in range(draw(st.integers(0, 3), label="mutations")):
        cand = policy.space.mutate(cand) or cand
    try:
        sch = policy.space.schedule(cand)
    except (ScheduleError, LoweringError):
        return "refused by replay"
    hw = policy.task.hardware_params
    problems, _ = program_problems(lower_state(sch.state, sch.args), hw)
    if problems:
        assert policy.features_of(cand) is None  # the search drops exactly these
        return "over the limits"
    # the slow tier runs every program on the emulator where there is one, else one in
    # five serially on the CPU (an LLVM build each); the quick tier runs all of them both ways
    n = OUTCOMES.get("valid", 0)
    serial = not thorough or (not has_emulator() and n % 5 == 0)
    check_gpu_program(sch, hw, serial=serial)
    return "valid"


def _record(outcome: str) -> None:
    OUTCOMES[outcome] = OUTCOMES.get(outcome, 0) + 1


@settings(max_examples=20, **COMMON)
@given(data=st.data())
def test_gpu_programs_quick(data):
    _record(run_case(data.draw))


# 150 programs (82 s on 2 shared cores at 300): the suite stays under 20 minutes
@pytest.mark.slow
@settings(max_examples=150, phases=[Phase.generate], **COMMON)
@given(data=st.data())
def test_gpu_programs_thorough(data):
    _record(run_case(data.draw, thorough=True))


def test_most_fuzzed_programs_are_valid():
    # runs after the quick tier in this module: most draws give a valid program
    if not OUTCOMES:
        pytest.skip("run with the fuzz tests of this module")
    assert OUTCOMES.get("valid", 0) >= sum(OUTCOMES.values()) // 2, OUTCOMES
