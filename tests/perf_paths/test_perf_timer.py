"""The timer: ``time_evaluator`` runs the kernel in a native loop, grows ``number`` until a
repeat lasts ``min_repeat_ms``, can flush the CPU caches before each repeat, and adds
almost nothing per call to what it measures."""

from __future__ import annotations

import time

import numpy as np
import pytest

import ansor_lab as tvm
from ansor_lab import te, tir
from ansor_lab.runtime import module as runtime_module


def _tiny():
    """A kernel that copies 16 floats: its own cost is a few nanoseconds."""
    A = te.placeholder((16,), name="A")
    B = te.compute((16,), lambda i: A[i] + 1.0, name="B")
    sch = tir.Schedule(te.create_prim_func([A, B]))
    (i,) = sch.get_loops(sch.get_block("B"))
    sch.vectorize(i)
    return tvm.build(sch.mod, target="llvm")


@pytest.fixture(scope="module")
def tiny():
    return _tiny()


def _args():
    return np.ones(16, np.float32), np.zeros(16, np.float32)


def test_results_are_positive_per_run_times(tiny):
    res = tiny.time_evaluator(number=7, repeat=4)(*_args())
    assert len(res.results) == 4
    assert all(r > 0 for r in res.results)
    assert res.min <= res.median <= res.max and res.min <= res.mean <= res.max
    assert "median (ms)" in str(res)


def test_min_repeat_ms_grows_number(tiny):
    """With number=1 and a 20 ms minimum, each repeat must run the kernel until 20 ms have
    passed: the call lasts at least repeat x 20 ms, yet each result (seconds per run) is
    tiny, so ``number`` was raised (to thousands) rather than the kernel timed once."""
    min_ms, repeat = 20.0, 3
    evaluate = tiny.time_evaluator(number=1, repeat=repeat, min_repeat_ms=min_ms)
    start = time.perf_counter()
    res = evaluate(*_args())
    wall = time.perf_counter() - start
    assert wall >= repeat * min_ms / 1e3 * 0.95
    assert all(0 < r < 1e-4 for r in res.results), res.results
    # runs per repeat implied by the results: far more than the number=1 asked for
    assert min_ms / 1e3 / max(res.results) > 100


def test_per_call_overhead_is_below_5_microseconds(tiny):
    """What is measured. With ``number=2000`` one native loop (the ``__repeat`` entry) calls
    the kernel 2000 times, so each result is the kernel's own time plus one native call
    (nanoseconds here), Python's call overhead being paid once per repeat and divided by
    2000. With ``number=1`` every result is one run timed from Python: the kernel plus one
    ctypes call and two clock reads (about 2 us). Both must stay below 5 us for a kernel
    that copies 16 floats; the fastest of the repeats is taken, so a busy machine cannot
    fail the test."""
    many = tiny.time_evaluator(number=2000, repeat=5)(*_args())
    assert many.min < 5e-6, many.results
    assert many.min < 1e-6, "the native loop should cost nanoseconds per call"
    single = tiny.time_evaluator(number=1, repeat=50)(*_args())
    assert single.min < 5e-6, single.results


def test_cache_flush_runs_before_every_repeat(tiny, monkeypatch):
    flusher = getattr(runtime_module, "CacheFlusher", None) or runtime_module._CacheFlusher
    calls = []
    original = flusher.__call__
    monkeypatch.setattr(flusher, "__call__", lambda self: (calls.append(1), original(self)))
    res = tiny.time_evaluator(number=1, repeat=3, enable_cpu_cache_flush=True)(*_args())
    assert len(calls) == 3
    assert len(res.results) == 3 and all(r > 0 for r in res.results)


def test_cache_flusher_covers_the_last_level_cache():
    flusher = getattr(runtime_module, "CacheFlusher", None) or runtime_module._CacheFlusher
    target = tvm.Target("llvm")
    f = flusher(target)
    nbytes = sum(v.nbytes for v in vars(f).values() if isinstance(v, np.ndarray))
    assert nbytes >= max(target.l2_bytes, target.l3_bytes)


def test_timed_kernel_computes_into_the_arguments(tiny):
    a, b = _args()
    tiny.time_evaluator(number=3, repeat=2)(a, b)
    np.testing.assert_array_equal(b, a + 1)


def test_bad_counts_are_refused(tiny):
    with pytest.raises(ValueError, match="number and repeat"):
        tiny.time_evaluator(number=0)
