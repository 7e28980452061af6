"""Which clock times a candidate: the thread CPU clock for one-thread CPU programs.

On a loaded machine the wall clock counts the time other jobs held the core, so one
descheduled stretch of the runner's single timing window made a fast program look slow
(issue 21: the same 16 programs re-measured under load varied 2.5x on the wall clock,
1.08x on the thread CPU clock). The sleeping kernel below is the extreme case: all of its
wall time is spent off the CPU.
"""

from __future__ import annotations

import dataclasses
import time

import pytest
from test_measure_isolation import bad_object

from ansor_lab.errors import RuntimeArgumentError
from ansor_lab.measure.measure import LocalRunner
from ansor_lab.runtime.module import time_repeats

# sleeps 20 ms per run (usleep from the C library the runner process has loaded)
_SLEEP_BODY = """
  %rc = call i32 @usleep(i32 20000)
  ret i32 0
"""
_SLEEP_DECL = "declare i32 @usleep(i32)"


def _built_for(build, threads: int, target: str = "llvm -num-cores=1"):
    payload = {"num_threads": threads, "target": target}
    return dataclasses.replace(build, payload=payload, target=target)


def test_clock_for_picks_the_cpu_clock_only_for_one_thread_cpu_programs(good_build):
    auto, wall = LocalRunner(), LocalRunner(clock="wall")
    try:
        assert auto.clock == "auto"  # what the search uses
        assert auto.clock_for(_built_for(good_build, 1)) == "thread_cpu"
        # libgomp's threads are not the runner's thread: their CPU time would be missed
        assert auto.clock_for(_built_for(good_build, 2, "llvm -num-cores=2")) == "wall"
        assert auto.clock_for(good_build) == "wall"  # unknown thread count: TVM's clock
        gpu = dataclasses.replace(_built_for(good_build, 1, "cuda"), obj={"cuda": True})
        assert auto.clock_for(gpu) == "wall"
        assert wall.clock_for(_built_for(good_build, 1)) == "wall"
    finally:
        auto.close()
        wall.close()


def test_an_unknown_clock_is_refused_naming_the_choices():
    with pytest.raises(RuntimeArgumentError, match="'auto'.*'wall'"):
        LocalRunner(clock="cpu")


def test_time_repeats_reads_the_clock_it_is_given():
    ticks = iter(range(0, 1000, 3))  # 3 s pass between two readings

    costs = time_repeats(lambda n: None, 2, 3, 0, clock=lambda: float(next(ticks)))
    assert costs == [1.5, 1.5, 1.5]  # seconds per run, TVM's meaning


def test_time_off_the_cpu_is_left_out_on_one_thread(task, good_build):
    sleeper = _built_for(good_build, 1)
    sleeper = dataclasses.replace(sleeper, obj=bad_object(_SLEEP_BODY, 3, _SLEEP_DECL))
    costs = {}
    for clock in ("auto", "wall"):
        runner = LocalRunner(clock=clock, timeout=20, number=2, min_repeat_ms=0)
        try:
            runner.setup(task, good_build.params, [2])
            reply = runner.run([sleeper])[0]
        finally:
            runner.close()
        assert reply["error_no"] == 0, reply["error_msg"]
        costs[clock] = reply["costs"][0]
    assert costs["wall"] >= 0.019  # it did sleep 20 ms a run
    assert costs["auto"] < 0.005  # and the thread's CPU clock did not count it


def test_the_thread_clock_times_a_real_kernel_plausibly(task, good_build):
    runner = LocalRunner(timeout=20, number=5, repeat=3, min_repeat_ms=5)
    try:
        runner.setup(task, good_build.params, [2])
        start = time.thread_time()
        reply = runner.run([_built_for(good_build, 1)])[0]
        assert time.thread_time() - start < 1.0  # the timing ran in the runner process
    finally:
        runner.close()
    assert reply["error_no"] == 0 and len(reply["costs"]) == 3
    # a 16x16 matmul: well under a millisecond, and never zero
    assert all(1e-8 < c < 1e-3 for c in reply["costs"]), reply["costs"]
