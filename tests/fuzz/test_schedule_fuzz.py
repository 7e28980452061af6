"""Differential fuzzing of schedules: random traces built with LLVM vs the numpy reference.

Hypothesis draws a random sequence of block-style primitives over one of the workloads
of ``fuzz_workloads`` (matmul, batch matmul, conv2d with its padding stage, depthwise
conv2d, max and avg pooling, softmax, layer norm, the matmul-exp-matmul chain, a
broadcasting elementwise chain, guarded reductions, an exact integer reduction):
split (divisible, non-divisible, with and without None, or driven by
sample_perfect_tile), fuse, reorder, parallel / vectorize / unroll, annotate, compute_at
(chosen or by sample_compute_location), reverse_compute_at, compute_inline and
reverse_compute_inline, compute_root, cache_read / cache_write, rfactor,
decompose_reduction and storage_align. Most steps aim at legal targets, some at random
ones. A step that raises ScheduleError is skipped, and must have left the schedule and
its trace exactly as they were; any other exception is a failure.

Each final schedule is built with LLVM, run on fixed random inputs (outputs start as NaN
so unwritten elements show) and compared with ``ansor_lab.dsl.reference``; then its trace
is replayed as printed Python and as JSON onto fresh schedules, which must lower to the
same program. On failure the trace JSON is printed; ``fuzz_workloads.replay_json``
reproduces it.

Profiles (``ANSOR_FUZZ_PROFILE``): ``ci`` (default, deterministic: a quick test of 8
schedules per workload, ~100 in all, and the ``slow`` test of 170 per workload, ~2000 in
all), ``thorough`` (random seeds, 2000 per workload).

Where the time goes (CPU time per schedule, measured with ``time.process_time``): about
200 ms, of which LLVM's O3 pipeline ~110 ms, parsing + machine code ~65 ms, LLVM IR
generation ~11 ms, both trace replays with their lowering ~13 ms, lowering ~3 ms and
drawing the steps ~2 ms. So ~2000 schedules take ~7 CPU-minutes: ~3.5 minutes with
``pytest -n 2`` on an idle two-core runner (much more on a loaded one).
"""

from __future__ import annotations

import json
import os

import pytest
from fuzz_workloads import NAMES, check_schedule, workload
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st
from schedule_gen import Fuzzer, HypothesisChooser


PROFILE = os.environ.get("ANSOR_FUZZ_PROFILE", "ci")
#: examples per workload of the quick and the slow test (12 workloads)
QUICK, FULL = {"ci": (8, 170), "thorough": (100, 2000)}.get(PROFILE, (8, 170))
#: schedule steps per example, at most (each may make a few schedule calls)
MAX_STEPS = 14
COMMON = dict(
    deadline=None,
    database=None,
    derandomize=PROFILE != "thorough",
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def fuzz_one(name: str, data: st.DataObject) -> None:
    """Draw, apply and check one random schedule of workload ``name``."""
    w = workload(name)
    sch = w.fresh(seed=data.draw(st.integers(1, 2**31 - 2), label="seed"))
    fz = Fuzzer(sch, HypothesisChooser(data))
    try:
        for _ in range(data.draw(st.integers(1, MAX_STEPS), label="steps")):
            fz.step()
        check_schedule(w, sch)
    except BaseException:
        note(f"steps: {fz.applied}; last schedule call: {fz.last_call}")
        note(f"trace JSON (replay: fuzz_workloads.replay_json({name!r}, <json>)):\n"
             f"{json.dumps(sch.trace.as_json())}")
        raise


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=QUICK, **COMMON)
@given(data=st.data())
def test_schedule_fuzz_quick(name: str, data: st.DataObject) -> None:
    """A few random schedules per workload: built, compared, and replayed both ways."""
    fuzz_one(name, data)


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=FULL, **COMMON)
@given(data=st.data())
def test_schedule_fuzz(name: str, data: st.DataObject) -> None:
    """Thousands of random schedules in all (the CI run)."""
    fuzz_one(name, data)
