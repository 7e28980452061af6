"""Differential fuzzer of GPU schedules on the emulator.

Random GPU schedules (``gpu_schedule_gen``: split factors, block / vthread / thread
binds, local accumulators, shared tiles with cooperative fetching) of small workloads are
lowered (shared tiles relaxed over the block's threads, barriers inserted), checked by
the GPU verifier, and emulated in check mode; every output must match the numpy
reference and no check may fire (a race, an out-of-bounds access or a divergent barrier
in a program the lowering made is a bug of the lowering or the emulator). Every fifth
program also runs without checks, blocks in parallel, and must give the same result.

The quick tier runs ~20 programs; the slow tier (``-m slow``) 300 and more.
"""

from __future__ import annotations

import numpy as np
import pytest
from fuzz_workloads import compare, workload
from gpu_schedule_gen import random_gpu_schedule
from hypothesis import HealthCheck, given, note, settings, strategies as st
from schedule_gen import HypothesisChooser

import ansor_lab as tvm
from ansor_lab import te
from ansor_lab.codegen.emulator import emulate
from ansor_lab.codegen.gpu_verify import check_gpu_program
from ansor_lab.errors import GPUScheduleError, LoweringError, ScheduleError

GPU_NAMES = [
    "matmul",
    "batch_matmul",
    "conv2d",
    "depthwise_conv2d",
    "max_pool",
    "avg_pool",
    "softmax",
    "layer_norm",
    "broadcast_chain",
    "int_reduce",
]


def _arrays(w) -> tuple[list, list]:
    arrays, outs = [], []
    it = iter(w.inputs)
    for t in w.args:
        if isinstance(t.op, te.PlaceholderOp):
            arrays.append(next(it).copy())
        else:
            out = np.full(t.shape, np.nan if t.dtype.startswith("float") else -123456789, t.dtype)
            arrays.append(out)
            outs.append(out)
    return arrays, outs


def fuzz_one(name: str, chooser, parallel_too: bool) -> bool:
    """Schedule, lower, emulate and compare one random program; False when the random
    schedule is one the library refuses (with its own error)."""
    w = workload(name)
    try:
        gs = random_gpu_schedule(w.args, chooser)
        func = tvm.lower(gs.sched, w.args)["main"]
        check_gpu_program(func, "cuda")
    except (ScheduleError, LoweringError, GPUScheduleError) as err:
        note(f"refused: {err}")
        return False
    note(f"{name}: {'; '.join(gs.notes)}")
    note(str(func))
    arrays, outs = _arrays(w)
    emulate(func, arrays, check=True)
    compare(w, outs)
    if parallel_too:
        arrays, outs = _arrays(w)
        emulate(func, arrays, check=False)
        compare(w, outs)
    return True


def _run(data, n_label: str) -> None:
    name = data.draw(st.sampled_from(GPU_NAMES), label="workload")
    parallel_too = data.draw(st.integers(0, 4), label="also unchecked") == 0
    fuzz_one(name, HypothesisChooser(data), parallel_too)


@settings(
    max_examples=20,
    deadline=None,
    derandomize=True,
    suppress_health_check=list(HealthCheck),
)
@given(st.data())
def test_gpu_schedules_emulate_equal_to_numpy(data):
    _run(data, "quick")


@pytest.mark.slow
@settings(
    max_examples=330,
    deadline=None,
    derandomize=True,
    suppress_health_check=list(HealthCheck),
)
@given(st.data())
def test_gpu_schedules_emulate_equal_to_numpy_slow(data):
    _run(data, "slow")
