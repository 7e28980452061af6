"""Fault injection into the real worker processes: setup failures, late deaths, last words.

Every fault here is real: a setup request the worker cannot serve, a kernel that arms a
timer killing its process after it returned, a kernel that writes to stderr and aborts,
a kernel that returns without writing its output. The runner and the tuner must turn each
into an error record that says what happened, blame only the guilty candidate, and go on.
"""

from __future__ import annotations

import dataclasses

from test_measure_isolation import _CRASH_BODY, _NOOP_BODY, bad_object
from workloads import fast_options, fast_policy

from ansor_lab import auto_scheduler
from ansor_lab.measure.measure import BuildResult, LocalRunner
from ansor_lab.measure.records import ErrorNo

# arms a 0.3 s timer whose default action kills the process: the death comes while the
# *next* candidate runs (a stand-in for a corrupted heap or a stray thread)
_LATE_DEATH_BODY = """
  %r = call i32 @ualarm(i32 300000, i32 0)
  ret i32 0
"""
_LATE_DEATH_DECL = "declare i32 @ualarm(i32, i32)"

# what LLVM or libgomp do on a fatal error: a message on stderr, then abort()
_LAST_WORDS_BODY = """
  %w = call i64 @write(i32 2, ptr @msg, i64 36)
  call void @abort()
  unreachable
"""
_LAST_WORDS_DECL = """
@msg = private constant [36 x i8] c"LLVM ERROR: injected fatal fault 42\\0A"
declare i64 @write(i32, ptr, i64)
declare void @abort()
"""

SETUP_FAULT = ("injected", [-1], "float32")  # a parameter no runner can allocate


def _with(build: BuildResult, body: str, decl: str = "") -> BuildResult:
    return dataclasses.replace(build, obj=bad_object(body, 3, decl))


def test_setup_failure_after_a_restart_is_an_error_not_none(task, good_build):
    runner = LocalRunner(timeout=20, number=1, min_repeat_ms=0, check_correctness=True)
    runner.setup(task, good_build.params, [2])
    assert runner.setup_error is None
    crash = _with(good_build, _CRASH_BODY)
    # the fault: the restarted process cannot be set up (here a parameter it cannot make)
    runner._setup_msg["params"] = [*good_build.params, SETUP_FAULT]
    try:
        # the crash is the fresh process's first run: it is the crash's own fault
        out = runner.run([crash] + [good_build] * 4)
    finally:
        runner.close()
    kinds = [ErrorNo(r["error_no"]).name for r in out]
    assert kinds == ["RUNTIME_DEVICE"] * 5
    assert "crashed the runner process" in out[0]["error_msg"]
    for r in out[1:]:  # the innocent candidates are told why, and it is not them
        assert "not this candidate's fault" in r["error_msg"]
        assert "could not be set up" in r["error_msg"] and "negative" in r["error_msg"]
        assert "NoneType" not in r["error_msg"]
    assert runner.setup_key is None  # the next batch sets up again


class _SetupFails(LocalRunner):
    """A runner whose first ``fail`` setups the worker cannot serve."""

    def __init__(self, fail: int, **kw) -> None:
        super().__init__(**kw)
        self.fail = fail

    def setup(self, task, params, outputs):
        if self.fail > 0:
            self.fail -= 1
            params = [*params, SETUP_FAULT]
        super().setup(task, params, outputs)


def test_setup_failure_on_the_first_batch_is_records_not_the_end_of_tune(task, tmp_path):
    log = str(tmp_path / "setup.json")
    runner = _SetupFails(fail=1, timeout=10, number=1, min_repeat_ms=1)
    result = task.tune(
        fast_options(log, trials=6, per_round=3, runner=runner),
        search_policy=fast_policy(task, seed=3),
    )
    records = list(auto_scheduler.load_records(log))
    kinds = [r.error_kind for _, r in records]
    assert kinds[:3] == ["RUNTIME_DEVICE"] * 3
    assert all("could not be set up" in r.error_msg for _, r in records[:3])
    assert kinds[3:] == ["NO_ERROR"] * 3  # the second batch set up again and measured
    assert result.stats.trials == 6 and result.stats.errors == 3


class _Wrong(LocalRunner):
    """Replaces the first candidate of each batch by one that never writes its output."""

    def run(self, builds, on_result=None):
        builds = [dataclasses.replace(builds[0], obj=bad_object(_NOOP_BODY, 3)), *builds[1:]]
        return super().run(builds, on_result=on_result)


def test_wrong_answer_in_tuning_is_a_record_not_a_crash(task, tmp_path):
    log = str(tmp_path / "wrong.json")
    runner = _Wrong(timeout=10, number=1, min_repeat_ms=1)
    options = fast_options(log, trials=4, per_round=2, runner=runner)
    options.check_correctness = True
    result = task.tune(options, search_policy=fast_policy(task, seed=4))
    kinds = [r.error_kind for _, r in auto_scheduler.load_records(log)]
    assert kinds == ["WRONG_ANSWER", "NO_ERROR"] * 2
    assert result.stats.errors == 2 and result.best_trace is not None


def test_an_innocent_candidate_is_not_blamed_for_a_late_death(task, good_build):
    late = _with(good_build, _LATE_DEATH_BODY, _LATE_DEATH_DECL)
    # each timing run lasts 0.6 s: the timer armed by `late` fires during the next one
    runner = LocalRunner(timeout=20, number=1, min_repeat_ms=600)
    runner.setup(task, good_build.params, [2])
    try:
        pid = runner._worker.proc.pid
        out = runner.run([late, good_build])
        assert runner._worker.proc.pid != pid  # the process did die
    finally:
        runner.close()
    assert [ErrorNo(r["error_no"]).name for r in out] == ["NO_ERROR", "NO_ERROR"]
    assert out[1]["costs"][0] > 0


def test_a_crash_in_a_used_process_is_still_blamed_on_the_guilty(task, good_build):
    runner = LocalRunner(timeout=20, number=1, min_repeat_ms=0)
    runner.setup(task, good_build.params, [2])
    crash = _with(good_build, _CRASH_BODY)
    try:
        out = runner.run([good_build, crash, good_build])
    finally:
        runner.close()
    assert [ErrorNo(r["error_no"]).name for r in out] == ["NO_ERROR", "RUNTIME_DEVICE", "NO_ERROR"]


def test_a_dead_workers_stderr_is_in_its_error_record(task, good_build):
    runner = LocalRunner(timeout=20, number=1, min_repeat_ms=0)
    runner.setup(task, good_build.params, [2])
    try:
        out = runner.run([_with(good_build, _LAST_WORDS_BODY, _LAST_WORDS_DECL), good_build])
    finally:
        runner.close()
    msg = out[0]["error_msg"]
    assert ErrorNo(out[0]["error_no"]).name == "RUNTIME_DEVICE"
    assert "SIGABRT" in msg and "LLVM ERROR: injected fatal fault 42" in msg
    assert len(msg) < 2000  # bounded
    assert out[1]["costs"]
