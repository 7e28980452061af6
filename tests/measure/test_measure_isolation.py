"""Isolated measurement: a crashing or hanging kernel is an error record, never a dead search.

The bad kernels are hand-written LLVM IR compiled into object files with the same entry
points as generated code (``main`` and ``main__repeat``), so the runner process links and
calls them exactly as it would a candidate.
"""

from __future__ import annotations

import dataclasses

import llvmlite.binding as llvm
from workloads import fast_options, fast_policy

from ansor_lab import auto_scheduler
from ansor_lab.codegen.llvm import target_machine
from ansor_lab.codegen.target import Target
from ansor_lab.measure.measure import LocalRunner
from ansor_lab.measure.records import ErrorNo
from ansor_lab.measure.workers import build_worker

_CRASH_BODY = """
  %p = inttoptr i64 16 to ptr
  %v = load volatile i32, ptr %p
  ret i32 %v
"""

# returns success without writing the output: only the correctness check can tell
_NOOP_BODY = """
  ret i32 0
"""

# reports a failure, as generated code does when an allocation fails
_FAIL_BODY = """
  ret i32 -1
"""

# a volatile store per iteration: the loop has a side effect, so LLVM keeps it
_HANG_BODY = """
  %slot = alloca i32
  br label %loop
loop:
  store volatile i32 1, ptr %slot
  br label %loop
"""


def bad_object(body: str, n_args: int, decls: str = "") -> bytes:
    """An object file whose ``main`` runs ``body`` (and ``main__repeat`` calls it n times)."""
    named = ", ".join(f"ptr %a{k}" for k in range(n_args))
    text = f"""
{decls}
define i32 @main({named}) {{
entry:
{body}
}}

define i32 @main__repeat(i64 %n, {named}) {{
entry:
  br label %loop
loop:
  %i = phi i64 [0, %entry], [%next, %body]
  %done = icmp sge i64 %i, %n
  br i1 %done, label %exit, label %body
body:
  %rc = call i32 @main({", ".join(f"ptr %a{k}" for k in range(n_args))})
  %next = add i64 %i, 1
  %bad = icmp ne i32 %rc, 0
  br i1 %bad, label %fail, label %loop
fail:
  ret i32 %rc
exit:
  ret i32 0
}}
"""
    target = Target("llvm")
    tm = target_machine(target.mcpu, target.mattr)
    mod = llvm.parse_assembly(text)
    mod.triple = tm.triple
    mod.data_layout = str(tm.target_data)
    mod.verify()
    return tm.emit_object(mod)


def _runner(task, good_build, timeout: float) -> LocalRunner:
    runner = LocalRunner(timeout=timeout, number=1, min_repeat_ms=0, check_correctness=True)
    runner.setup(task, good_build.params, [2])
    return runner


def test_crashing_kernel_is_an_error_and_the_runner_goes_on(task, good_build):
    def bad(body):
        return dataclasses.replace(good_build, obj=bad_object(body, 3))

    crash, noop, fail = bad(_CRASH_BODY), bad(_NOOP_BODY), bad(_FAIL_BODY)
    runner = _runner(task, good_build, timeout=20)
    try:
        first_pid = runner._worker.proc.pid
        out = runner.run([good_build, crash, good_build, noop, fail, crash, good_build])
        last_pid = runner._worker.proc.pid
    finally:
        runner.close()
    kinds = [ErrorNo(r["error_no"]).name for r in out]
    assert kinds == [
        "NO_ERROR",
        "RUNTIME_DEVICE",
        "NO_ERROR",
        "WRONG_ANSWER",
        "RUNTIME_DEVICE",
        "RUNTIME_DEVICE",
        "NO_ERROR",
    ]
    assert "crashed the runner process" in out[1]["error_msg"]
    assert "SIGSEGV" in out[1]["error_msg"]  # exit code -11, named
    assert "output 2 differs from the reference" in out[3]["error_msg"]
    # the kernel returned -1 (a failed allocation): the record says so and what to do
    assert "failed with code -1 (a buffer allocation failed" in out[4]["error_msg"]
    # the replacement process was set up again: the next good kernel is checked and timed
    assert out[2]["costs"] and out[6]["costs"]
    assert last_pid != first_pid


def test_hanging_kernel_times_out_and_the_runner_goes_on(task, good_build):
    hang = dataclasses.replace(good_build, obj=bad_object(_HANG_BODY, 3))
    runner = _runner(task, good_build, timeout=3)
    try:
        out = runner.run([hang, good_build])
    finally:
        runner.close()
    assert [ErrorNo(r["error_no"]).name for r in out] == ["RUN_TIMEOUT", "NO_ERROR"]
    assert "longer than 3 s" in out[0]["error_msg"]
    assert out[1]["costs"][0] > 0


def test_build_errors_come_back_as_records(task):
    bad_trace = {
        "version": 1,
        "insts": [["GetBlock", [["name", "nope"], ["func_name", "main"]], ["b0"], None]],
    }
    r = build_worker(
        {"dag": task.dag_json, "trace": bad_trace, "target": str(task.target), "num_threads": 1}
    )
    assert ErrorNo(r["error_no"]).name == "INSTANTIATION_ERROR"
    assert "nope" in r["error_msg"]


class _InjectOnce(LocalRunner):
    """Replaces the first two candidates of the first batch by a hang and a crash."""

    injected = False

    def run(self, builds, on_result=None):
        if not self.injected and len(builds) >= 2:
            self.injected = True
            builds = [
                dataclasses.replace(builds[0], obj=bad_object(_HANG_BODY, 3)),
                dataclasses.replace(builds[1], obj=bad_object(_CRASH_BODY, 3)),
                *builds[2:],
            ]
        return super().run(builds, on_result=on_result)


def test_search_survives_a_hang_and_a_crash(task, tmp_path):
    log = str(tmp_path / "bad.json")
    runner = _InjectOnce(timeout=3, number=1, min_repeat_ms=5)
    result = task.tune(
        fast_options(log, trials=6, per_round=3, runner=runner),
        search_policy=fast_policy(task, seed=5),
    )
    records = list(auto_scheduler.load_records(log))
    kinds = [r.error_kind for _, r in records]
    assert kinds[:2] == ["RUN_TIMEOUT", "RUNTIME_DEVICE"]
    assert kinds[2:] == ["NO_ERROR"] * 4, [r.error_msg for _, r in records]
    assert result.stats.trials == 6 and result.stats.errors == 2
    assert result.best_cost == min(r.mean_cost for _, r in records)
    assert not result.stopped_early
