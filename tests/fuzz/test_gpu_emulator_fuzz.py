"""Differential fuzzer of GPU schedules on the emulator.

Random GPU schedules (``gpu_schedule_gen``: split factors, block / vthread / thread
binds, local accumulators, shared tiles with cooperative fetching) of small workloads are
lowered (shared tiles relaxed over the block's threads, barriers inserted), checked by
the GPU verifier, and emulated in check mode; every output must match the numpy
reference and no check may fire (a race, an out-of-bounds access or a divergent barrier
in a program the lowering made is a bug of the lowering or the emulator). Every fifth
program also runs without checks, blocks in parallel, and must give the same result.

A second property tests the checks themselves: one barrier of a random program with
shared tiles is removed; check mode must then either report an error of ours or still
give the right result (the barrier was not needed), never a silently wrong output.

The quick tier runs ~20 programs (and 8 with a barrier removed); the slow tier
(``-m slow``) 150 (and 60).
"""

from __future__ import annotations

import numpy as np
import pytest
from fuzz_workloads import compare, workload
from gpu_schedule_gen import random_gpu_schedule
from hypothesis import HealthCheck, event, given, note, settings, strategies as st
from schedule_gen import HypothesisChooser

import ansor_lab as tvm
from ansor_lab import te
from ansor_lab.codegen.emulator import emulate
from ansor_lab.codegen.gpu_verify import check_gpu_program
from ansor_lab.errors import GPUEmulationError, GPUScheduleError, LoweringError, ScheduleError
from ansor_lab.ir import gpu, nodes as N
from ansor_lab.ir.visitor import IRMutator, walk_stmts

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


def _lowered(name: str, chooser):
    w = workload(name)
    try:
        gs = random_gpu_schedule(w.args, chooser)
        func = tvm.lower(gs.sched, w.args)["main"]
        check_gpu_program(func, "cuda")
    except (ScheduleError, LoweringError, GPUScheduleError) as err:
        note(f"refused: {err}")
        return w, None
    note(f"{name}: {'; '.join(gs.notes)}")
    note(str(func))
    return w, func


def fuzz_one(name: str, chooser, parallel_too: bool) -> bool:
    """Schedule, lower, emulate and compare one random program; False when the random
    schedule is one the library refuses (with its own error)."""
    w, func = _lowered(name, chooser)
    if func is None:
        return False
    arrays, outs = _arrays(w)
    emulate(func, arrays, check=True)
    compare(w, outs)
    if parallel_too:
        arrays, outs = _arrays(w)
        emulate(func, arrays, check=False)
        compare(w, outs)
    return True


class _DropBarrier(IRMutator):
    def __init__(self, k: int) -> None:
        self.k = k

    def stmt_Evaluate(self, s: N.Evaluate) -> N.Stmt:
        if gpu.is_barrier(s):
            self.k -= 1
            if self.k == -1:
                return N.NOP
        return s


def fuzz_dropped_barrier(name: str, chooser, pick: int) -> str:
    """Remove barrier number ``pick`` (modulo their count) of a random program; check
    mode reports an error or the output is still right. Returns what happened."""
    w, func = _lowered(name, chooser)
    if func is None:
        return "refused"
    count = sum(1 for s in walk_stmts(func.body) if gpu.is_barrier(s))
    if not count:
        return "no barrier"
    func = func.with_body(_DropBarrier(pick % count).visit_stmt(func.body))
    arrays, outs = _arrays(w)
    try:
        emulate(func, arrays, check=True)
    except GPUEmulationError as err:
        note(f"caught: {err}")
        return type(err).__name__
    compare(w, outs)
    return "still right"


SHARED_NAMES = ["matmul", "batch_matmul", "conv2d", "depthwise_conv2d", "int_reduce"]


def _run_dropped(data) -> None:
    name = data.draw(st.sampled_from(SHARED_NAMES), label="workload")
    pick = data.draw(st.integers(0, 7), label="barrier")
    event(f"{name}: {fuzz_dropped_barrier(name, _SharedChooser(data), pick)}")


class _SharedChooser(HypothesisChooser):
    """Always a local accumulator with shared tiles (the programs that have barriers)."""

    def boolean(self, label: str = "") -> bool:
        if label in ("local cache", "shared inputs"):
            return True
        return super().boolean(label)


def _run(data, n_label: str) -> None:
    name = data.draw(st.sampled_from(GPU_NAMES), label="workload")
    parallel_too = data.draw(st.integers(0, 4), label="also unchecked") == 0
    ran = fuzz_one(name, HypothesisChooser(data), parallel_too)
    event(f"{name}: {'emulated' if ran else 'refused'}")


@settings(
    max_examples=20,
    deadline=None,
    derandomize=True,
    suppress_health_check=list(HealthCheck),
)
@given(st.data())
def test_gpu_schedules_emulate_equal_to_numpy(data):
    _run(data, "quick")


# 150 schedules (58 s on 2 shared cores at 300): the suite stays under 20 minutes
@pytest.mark.slow
@settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    suppress_health_check=list(HealthCheck),
)
@given(st.data())
def test_gpu_schedules_emulate_equal_to_numpy_slow(data):
    _run(data, "slow")


@settings(max_examples=8, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_a_dropped_barrier_is_reported_or_harmless(data):
    _run_dropped(data)


@pytest.mark.slow
@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_a_dropped_barrier_is_reported_or_harmless_slow(data):
    _run_dropped(data)
