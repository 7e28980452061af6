"""kill -9 of a real tuner mid-batch, then resume; a killed tuner leaves no worker behind.

The tuner runs in its own process (a script), measuring a stream of candidates that each
take ~0.3 s; the test kills it with SIGKILL in the middle of its first batch of 16.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from workloads import fast_policy, make_task, matmul

from ansor_lab import auto_scheduler

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]

_TUNER = """
import sys
sys.path[:0] = [sys.argv[3], sys.argv[3] + "/.."]
from workloads import fast_policy, make_task, matmul
from ansor_lab import auto_scheduler

log, side = sys.argv[1], sys.argv[2]

class Runner(auto_scheduler.LocalRunner):
    def run(self, builds, on_result=None):
        def reply(k, r):  # a measurement came back: say so, then let it be recorded
            with open(side, "a") as f:
                f.write("%d\\n" % k)
            on_result(k, r)
        return super().run(builds, on_result=reply)

task = make_task(matmul(16))
options = auto_scheduler.TuningOptions(
    num_measure_trials=64, num_measures_per_round=16, verbose=0,
    runner=Runner(timeout=10, number=1, min_repeat_ms=300),
    builder=auto_scheduler.LocalBuilder(timeout=120),
    measure_callbacks=[auto_scheduler.RecordToFile(log)],
)
task.tune(options, search_policy=fast_policy(task, seed=1))
"""

_HUNG_PARENT = """
import sys, dataclasses
sys.path[:0] = [sys.argv[1], sys.argv[1] + "/.."]
from test_measure_isolation import _HANG_BODY, bad_object
from workloads import fast_policy, make_task, matmul
from ansor_lab.measure.measure import BuildResult, LocalRunner
from ansor_lab.measure.workers import build_worker
task = make_task(matmul(8))
inp = fast_policy(task).next_batch(1)[0]
r = build_worker({"dag": task.dag_json, "trace": inp.trace, "target": str(task.target),
                  "num_threads": 1})
build = BuildResult(bad_object(_HANG_BODY, 3), r["entry"], r["params"], 0, "", 0.0)
runner = LocalRunner(timeout=600, number=1, min_repeat_ms=0)
runner.setup(task, build.params, [2])
print(runner._worker.proc.pid, flush=True)
runner.run([build])  # spins forever
"""


def _lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines() if path.exists() else []


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _children(pid: int) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    if int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                        out.append(int(entry))
            except (OSError, IndexError, ValueError):
                pass
    return out


def _wait_gone(pids: list[int], seconds: float) -> list[int]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and any(_alive(p) for p in pids):
        time.sleep(0.1)
    return [p for p in pids if _alive(p)]


def _env() -> dict:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_kill_9_mid_batch_loses_no_measurement_and_resume_reads_them_all(tmp_path):
    log, side = tmp_path / "tune.json", tmp_path / "replies.txt"
    tuner = subprocess.Popen(
        [sys.executable, "-c", _TUNER, str(log), str(side), str(HERE)], cwd=ROOT, env=_env()
    )
    try:
        deadline = time.monotonic() + 240
        while len(_lines(log)) < 5 and time.monotonic() < deadline and tuner.poll() is None:
            time.sleep(0.05)
        workers = _children(tuner.pid)
        os.kill(tuner.pid, signal.SIGKILL)
        tuner.wait(timeout=10)
    finally:
        if tuner.poll() is None:
            tuner.kill()
    written, replied = _lines(log), _lines(side)
    # killed inside the first batch of 16: a batch-at-a-time log would hold nothing yet
    assert 5 <= len(written) < 16, (len(written), len(replied))
    # every measurement that came back is on disk (the kill may land in the microseconds
    # between a reply and its write, never later)
    assert len(written) >= len(replied) - 1
    assert [json.loads(line)["v"] for line in written] == [1] * len(written)
    # the workers died with the tuner: none lingers
    assert workers and _wait_gone(workers, 5) == []

    # resume: every record on disk is read back as measured, and tuning goes on after them
    task = make_task(matmul(16))
    policy = fast_policy(task, init_search_callbacks=[auto_scheduler.PreloadMeasuredStates(log)])
    assert len(policy.measured) == len(written)
    best = min(json.loads(line)["costs"][0] for line in written if json.loads(line)["costs"])
    assert policy.best_cost == pytest.approx(best)
    runner = auto_scheduler.LocalRunner(timeout=10, number=1, min_repeat_ms=1)
    task.tune(
        auto_scheduler.TuningOptions(
            num_measure_trials=3,
            num_measures_per_round=3,
            verbose=0,
            runner=runner,
            measure_callbacks=[auto_scheduler.RecordToFile(str(log))],
        ),
        search_policy=policy,
    )
    after = list(auto_scheduler.load_records(str(log)))
    assert len(after) == len(written) + 3


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_runner_in_a_hung_kernel_dies_with_its_killed_parent(tmp_path):
    parent = subprocess.Popen(
        [sys.executable, "-c", _HUNG_PARENT, str(HERE)],
        cwd=ROOT,
        env=_env(),
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        worker = int(parent.stdout.readline())
        time.sleep(0.5)  # the worker is spinning in the kernel now
        assert _alive(worker)
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait(timeout=10)
        assert _wait_gone([worker], 5) == []  # the watchdog notices within a second
    finally:
        if parent.poll() is None:
            parent.kill()
        try:
            os.kill(worker, signal.SIGKILL)
        except (OSError, UnboundLocalError):
            pass
