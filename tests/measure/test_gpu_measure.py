"""Nothing is recorded under a target it was not built and run for (issue 24, "fix first").

A CUDA task is built for CUDA, timed only by a runner of a GPU (or estimated by the
emulated runner, and marked so); without a GPU the first step that needs one raises
GPUUnavailableError before any work, naming the emulated runner. These tests force the
"no GPU" answer (ANSOR_LAB_NO_GPU=1), so they run the same on a machine that has one.
"""

from __future__ import annotations

import json

import pytest
from workloads import fast_policy, make_task, matmul

import ansor_lab as tvm
from ansor_lab import auto_scheduler
from ansor_lab.errors import GPUUnavailableError, MeasureError, TaskError
from ansor_lab.measure.measure import BuildResult, ProgramMeasurer, ProgramRunner
from ansor_lab.measure.workers import build_worker
from ansor_lab.runtime import cuda_support


@pytest.fixture
def no_gpu(monkeypatch):
    monkeypatch.setenv("ANSOR_LAB_NO_GPU", "1")
    cuda_support.cuda_unavailable_reason.cache_clear()
    yield
    cuda_support.cuda_unavailable_reason.cache_clear()


@pytest.fixture(scope="module")
def cuda_task():
    return make_task(matmul(16), target="cuda")


class SpyBuilder(auto_scheduler.ProgramBuilder):
    """A builder that counts what it was asked to build (nothing, before a refusal)."""

    def __init__(self) -> None:
        self.calls = 0

    def build(self, payloads):
        self.calls += len(payloads)
        raise AssertionError("nothing may be built for a task that cannot be measured")


def _options(log, runner, builder=None):
    return auto_scheduler.TuningOptions(
        num_measure_trials=4,
        num_measures_per_round=4,
        verbose=0,
        runner=runner,
        builder=builder or SpyBuilder(),
        measure_callbacks=[auto_scheduler.RecordToFile(str(log))],
    )


@pytest.mark.parametrize("how", ["default", "rpc_context", "local_runner"])
def test_a_cuda_task_without_a_gpu_is_refused_before_any_work(no_gpu, cuda_task, tmp_path, how):
    runner = {
        "default": "local",
        "rpc_context": lambda: auto_scheduler.LocalRPCMeasureContext(min_repeat_ms=300).runner,
        "local_runner": lambda: auto_scheduler.LocalRunner(),
    }[how]
    runner = runner() if callable(runner) else runner
    builder = SpyBuilder()
    log = tmp_path / "conv.json"
    with pytest.raises(GPUUnavailableError) as err:
        cuda_task.tune(_options(log, runner, builder))
    assert "auto_scheduler.EmulatedRunner()" in str(err.value)
    assert builder.calls == 0 and not log.exists()  # nothing built, nothing recorded


def test_the_measure_context_refuses_inside_a_cuda_target_scope(no_gpu):
    with tvm.target.Target("cuda"), pytest.raises(GPUUnavailableError, match="EmulatedRunner"):
        auto_scheduler.LocalRPCMeasureContext(min_repeat_ms=300)
    auto_scheduler.LocalRPCMeasureContext()  # outside it: the task is not known yet


def test_a_cpu_only_runner_is_refused_for_a_cuda_task(cuda_task, tmp_path):
    class CPUOnly(ProgramRunner):
        def setup(self, task, params, outputs):
            pass

        def run(self, builds):
            return [{"error_no": 0, "costs": [1e-3]} for _ in builds]

    with pytest.raises(MeasureError, match="times CPU programs.*EmulatedRunner"):
        cuda_task.tune(_options(tmp_path / "x.json", CPUOnly()))


def test_the_emulated_runner_is_refused_for_a_cpu_task(tmp_path):
    task = make_task(matmul(16))
    with pytest.raises(TaskError, match="estimates CUDA kernels.*LocalRunner"):
        task.tune(_options(tmp_path / "x.json", auto_scheduler.EmulatedRunner(isolated=False)))


def test_a_cost_from_another_device_becomes_an_error_record(cuda_task, tmp_path):
    """The last line of defence: a runner that answers a CUDA build with a CPU time."""

    class Liar(ProgramRunner):
        setup_key = None

        def check_task(self, task):
            pass

        def setup(self, task, params, outputs):
            self.setup_key = task.workload_key

        def run(self, builds):
            return [{"error_no": 0, "costs": [1e-3]} for _ in builds]  # no "device": a CPU

    class Builder(auto_scheduler.ProgramBuilder):
        def build(self, payloads):
            return [
                BuildResult({"cuda": True}, "main", [], 0, "", 0.0, p["target"], p)
                for p in payloads
            ]

    log = tmp_path / "lie.json"
    inputs = fast_policy(cuda_task).next_batch(2)
    measurer = ProgramMeasurer(Builder(), Liar(), [auto_scheduler.RecordToFile(str(log))], 1)
    results = measurer.measure(cuda_task, None, inputs)
    assert [r.error_kind for r in results] == ["RUNTIME_DEVICE"] * 2
    assert all("timed it on a 'llvm' device" in r.error_msg for r in results)
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert [r["costs"] for r in records] == [[], []] and all(r["error_no"] == 4 for r in records)


def test_a_cuda_candidate_is_built_for_cuda(cuda_task):
    cpu_task = make_task(matmul(16))
    cpu_trace = fast_policy(cpu_task).next_batch(1)[0].trace
    gpu_trace = fast_policy(cuda_task).next_batch(1)[0].trace
    target = str(cuda_task.target)
    # a CPU schedule under a CUDA target is not bound to threads: refused, not built for a CPU
    r = build_worker(
        {"dag": cuda_task.dag_json, "trace": cpu_trace, "target": target, "num_threads": 1}
    )
    assert r["error_no"] == 1 and "not bound to GPU threads" in r["error_msg"]
    r = build_worker(
        {"dag": cuda_task.dag_json, "trace": gpu_trace, "target": target, "num_threads": 1}
    )
    assert r["error_no"] == 0, r["error_msg"]
    assert isinstance(r["obj"], dict) and r["obj"]["cuda"]
    assert "__global__" in r["obj"]["source"]
    builder = auto_scheduler.LocalBuilder(n_parallel=1)
    try:
        builds = builder.build(
            [{"dag": cuda_task.dag_json, "trace": gpu_trace, "target": target, "num_threads": 1}]
        )
    finally:
        builder.close()
    assert builds[0].target == target and builds[0].payload["trace"] == gpu_trace
