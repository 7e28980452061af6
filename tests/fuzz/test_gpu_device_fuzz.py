"""Random GPU schedules (the emulator fuzzer's generator) run on a real GPU: every output
must equal the numpy reference. Skipped where no CUDA binding sees a GPU; without one
the same programs are checked on the emulator (test_gpu_emulator_fuzz.py)."""

from __future__ import annotations

import pytest
from fuzz_workloads import compare
from hypothesis import HealthCheck, event, given, note, settings, strategies as st
from schedule_gen import HypothesisChooser
from test_gpu_emulator_fuzz import GPU_NAMES, _arrays, _lowered
from workloads import needs_gpu

import ansor_lab as tvm

pytestmark = needs_gpu


def _run_on_gpu(data) -> None:
    name = data.draw(st.sampled_from(GPU_NAMES), label="workload")
    w, func = _lowered(name, HypothesisChooser(data))
    if func is None:
        event(f"{name}: refused")
        return
    mod = tvm.build(func, target="cuda")
    note(mod.get_source())
    arrays, outs = _arrays(w)
    mod(*arrays)
    compare(w, outs)
    event(f"{name}: ran on the GPU")


SETTINGS = {"deadline": None, "derandomize": True, "suppress_health_check": list(HealthCheck)}


@settings(max_examples=40, **SETTINGS)
@given(st.data())
def test_random_gpu_schedules_on_the_gpu_equal_numpy(data):
    _run_on_gpu(data)


@pytest.mark.slow
@settings(
    max_examples=300, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck)
)
@given(st.data())
def test_random_gpu_schedules_on_the_gpu_equal_numpy_slow(data):
    _run_on_gpu(data)
