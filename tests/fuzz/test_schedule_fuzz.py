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
schedules per workload, ~100 in all, and the ``slow`` test of 100 per workload, ~1200 in
all), ``thorough`` (random seeds, 2000 per workload).

Where the time goes (CPU time per schedule, measured with ``time.process_time``): about
200 ms, of which LLVM's O3 pipeline ~110 ms, parsing + machine code ~65 ms, LLVM IR
generation ~11 ms, both trace replays with their lowering ~13 ms, lowering ~3 ms and
drawing the steps ~2 ms. So ~1200 schedules take ~4 CPU-minutes: ~2 minutes with
``pytest -n 2`` on an idle two-core runner (much more on a loaded one). 100, not 170: the
default suite, grown by 43 topi operators' tests and by loop partitioning's extra code
(more pieces to compile), stays under 20 minutes on two cores.
"""

from __future__ import annotations

import json
import os

import pytest
from fuzz_workloads import NAMES, check_schedule, replay_json, workload
from hypothesis import HealthCheck, given, note, settings, strategies as st
from schedule_gen import Fuzzer, HypothesisChooser

from ansor_lab.errors import ScheduleError

PROFILE = os.environ.get("ANSOR_FUZZ_PROFILE", "ci")
#: examples per workload of the quick and the slow test (12 workloads)
QUICK, FULL = {"ci": (8, 100), "thorough": (100, 2000)}.get(PROFILE, (8, 100))
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
        note(
            f"trace JSON (replay: fuzz_workloads.replay_json({name!r}, <json>)):\n"
            f"{json.dumps(sch.trace.as_json())}"
        )
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


# --------------------------------------------------------------------------------------
# Bugs the fuzzer found, minimized. Each case applies a few steps and returns the last
# one, which must either succeed and give a correct program, or raise ScheduleError
# (matching ``error``) and leave a schedule that still builds correctly.


def _stale_region_after_reorder(sch):
    # C computed at M's reduction loop r; reordering M's loops puts j inside r, so C's
    # region there grows from 1x1 to a row (lowering kept the stale 1x1 region)
    sch.compute_at(sch.get_block("C"), sch.get_loops(sch.get_block("M"))[1])
    j, r = sch.get_loops(sch.get_block("M"))
    return lambda: sch.reorder(r, j)


def _stale_region_conv(sch):
    conv = sch.get_block("conv2d_nchw")
    sch.compute_at(sch.get_block("pad_temp"), sch.get_loops(conv)[4])
    n, f, y, x, rc, ry, rx = sch.get_loops(conv)
    return lambda: sch.reorder(rc, n, f, ry, y)


def _stale_region_pool(sch):
    pool = sch.get_block("pool_max")
    sch.compute_at(sch.get_block("pad_temp"), sch.get_loops(pool)[3])
    loops = sch.get_loops(pool)
    return lambda: sch.reorder(loops[3], loops[4], loops[2], loops[1])


def _nested_parallel(sch):
    loops = sch.get_loops(sch.get_block("pool_max"))
    sch.parallel(loops[1])
    return lambda: sch.parallel(loops[2])


def _nested_parallel_by_compute_at(sch):
    c, d = sch.get_block("C"), sch.get_block("D")
    sch.parallel(sch.get_loops(c)[0])
    loops = sch.get_loops(d)
    sch.parallel(loops[0])
    return lambda: sch.compute_at(c, loops[1])


def _cache_read_inside_producer(sch):
    # pool_avg runs inside pool_sum's loops; a top-level copy of pool_sum cannot exist
    avg = sch.get_block("pool_avg")
    sch.reverse_compute_at(avg, sch.get_loops(sch.get_block("pool_sum"))[0])
    return lambda: sch.cache_read(avg, 0, "local")


def _rfactor_with_block_at_reduce_loop(sch):
    m = sch.get_block("M")
    sch.compute_at(sch.get_block("S"), sch.get_loops(m)[1])
    return lambda: sch.rfactor(sch.get_loops(m)[1], 0)


def _strided_reverse_compute_at(sch):
    # T_multiply after T_add.i1_1 while i1_0 (the outer part of i1) runs inside it:
    # one iteration writes every 6th column
    mul, add = sch.get_block("T_multiply"), sch.get_block("T_add")
    sch.compute_inline(sch.get_block("T_relu"))
    i0, i1 = sch.get_loops(add)
    i1_0, i1_1 = sch.split(i1, [None, 6])
    sch.reverse_compute_at(mul, i1_1)
    return lambda: sch.reorder(i1_1, i1_0)


def _ragged_reverse_compute_at(sch):
    # a fused loop cut mid-row: one iteration of the outer part writes a ragged run
    mul, add = sch.get_block("T_multiply"), sch.get_block("T_add")
    sch.compute_inline(sch.get_block("T_relu"))
    outer, _ = sch.split(sch.fuse(*sch.get_loops(add)), [None, 8])
    return lambda: sch.reverse_compute_at(mul, outer)


def _aligned_fused_reverse_compute_at(sch):
    # ... and cut at whole rows it is a box: allowed, and correct
    mul, add = sch.get_block("T_multiply"), sch.get_block("T_add")
    sch.compute_inline(sch.get_block("T_relu"))
    outer, _ = sch.split(sch.fuse(*sch.get_loops(add)), [None, 56])
    return lambda: sch.reverse_compute_at(mul, outer)


def _softmax_sum_inside_norm(sch):
    # T_softmax_expsum computed inside T_softmax_norm; both read T_softmax_exp
    norm = sch.get_block("T_softmax_norm")
    sch.compute_at(sch.get_block("T_softmax_expsum"), sch.get_loops(norm)[0])
    return norm, sch.get_loops(sch.get_block("T_softmax_exp"))


def _norm_after_exp_column(sch):
    # after exp's column loop only one element of the row is written; the sum needs it all
    norm, (_, i1) = _softmax_sum_inside_norm(sch)
    return lambda: sch.reverse_compute_at(norm, i1)


def _norm_after_exp_row(sch):
    # ... after the row loop the whole row is written: allowed, and correct
    norm, (i0, _) = _softmax_sum_inside_norm(sch)
    return lambda: sch.reverse_compute_at(norm, i0)


def _reorder_exp_under_norm(sch):
    # the row placement made wrong by a later step: exp's loops swapped, so the loop norm
    # follows runs down a column
    norm, (i0, i1) = _softmax_sum_inside_norm(sch)
    sch.reverse_compute_at(norm, i0)
    return lambda: sch.reorder(i1, i0)


REGRESSIONS = {
    "stale_region_after_reorder": ("int_reduce", _stale_region_after_reorder, None),
    "stale_region_conv": ("conv2d", _stale_region_conv, None),
    "stale_region_pool": ("max_pool", _stale_region_pool, None),
    "nested_parallel": ("max_pool", _nested_parallel, "nested parallel"),
    "nested_parallel_by_compute_at": (
        "mm_exp_mm",
        _nested_parallel_by_compute_at,
        "nested parallel",
    ),
    "cache_read_inside_producer": ("avg_pool", _cache_read_inside_producer, "no top-level copy"),
    "rfactor_with_block_at_reduce_loop": (
        "guarded_reduce",
        _rfactor_with_block_at_reduce_loop,
        "computed at reduction loop",
    ),
    "strided_reverse_compute_at": ("broadcast_chain", _strided_reverse_compute_at, "strided"),
    "ragged_reverse_compute_at": ("broadcast_chain", _ragged_reverse_compute_at, "ragged"),
    "aligned_fused_reverse_compute_at": (
        "broadcast_chain",
        _aligned_fused_reverse_compute_at,
        None,
    ),
    "norm_after_exp_column": ("softmax", _norm_after_exp_column, "beyond what one iteration"),
    "norm_after_exp_row": ("softmax", _norm_after_exp_row, None),
    "reorder_exp_under_norm": ("softmax", _reorder_exp_under_norm, "beyond what one iteration"),
}


@pytest.mark.parametrize("case", list(REGRESSIONS))
def test_schedule_fuzz_regressions(case: str) -> None:
    """Minimized fuzzer findings: the last step is right, or refused with a clear error."""
    name, steps, error = REGRESSIONS[case]
    w = workload(name)
    sch = w.fresh()
    last = steps(sch)
    if error is None:
        last()
    else:
        with pytest.raises(ScheduleError, match=error):
            last()
    check_schedule(w, sch)


FOUND = os.path.join(os.path.dirname(__file__), "found")


def test_thorough_fuzz_trace_softmax_sum_inside_norm_is_refused() -> None:
    """The thorough fuzz's trace that computed a wrong softmax (294 of 351 elements) now
    stops at its last step, reverse_compute_at of T_softmax_norm (carrying the exp-sum)
    at the column loop of T_softmax_exp, with our error."""
    with open(os.path.join(FOUND, "softmax_reverse_compute_at_past_expsum.json")) as fh:
        trace = json.load(fh)
    assert trace["insts"][-1][0] == "ReverseComputeAt"
    with pytest.raises(ScheduleError, match="T_softmax_expsum.*beyond what one iteration"):
        replay_json("softmax", trace)
    trace["insts"] = trace["insts"][:-1]  # everything before that step is fine
    replay_json("softmax", trace)
