"""EmulatedRunner: each CUDA candidate checked on the GPU emulator against numpy, then
timed by the analytic model; a wrong result or an emulator report is an error record."""

from __future__ import annotations

import pytest
from workloads import fast_policy, make_task, matmul

from ansor_lab import auto_scheduler
from ansor_lab.codegen.kernel_form import split_kernels
from ansor_lab.codegen.pipeline import prepare
from ansor_lab.errors import GPURaceError
from ansor_lab.measure import emulate_worker
from ansor_lab.measure.measure import BuildResult
from ansor_lab.measure.workers import build_worker, rebuild_schedule
from ansor_lab.search.gpu_model import estimate


@pytest.fixture(scope="module")
def task():
    return make_task(matmul(16), target="cuda")


@pytest.fixture(scope="module")
def builds(task):
    out = []
    for inp in fast_policy(task).next_batch(2):
        payload = {
            "dag": task.dag_json,
            "trace": inp.trace,
            "target": str(task.target),
            "num_threads": 1,
        }
        r = build_worker(payload)
        assert r["error_no"] == 0, r["error_msg"]
        out.append(
            BuildResult(r["obj"], r["entry"], r["params"], 0, "", 0.0, payload["target"], payload)
        )
    return out


def _outputs(task):
    return [len(task.args) - 1]


@pytest.mark.parametrize("isolated", [False, True])
def test_correct_candidates_get_the_models_estimate(task, builds, isolated):
    runner = auto_scheduler.EmulatedRunner(isolated=isolated)
    try:
        runner.setup(task, builds[0].params, _outputs(task))
        assert runner.setup_key == task.workload_key
        replies = runner.run(builds)
    finally:
        runner.close()
    for b, reply in zip(builds, replies):
        assert reply["error_no"] == 0, reply.get("error_msg")
        assert reply["estimated"] and reply["device"] == "cuda"
        sch = rebuild_schedule(b.payload["dag"], b.payload["trace"])
        program = split_kernels(prepare(sch.mod.main_function(), task.target))
        # with ptxas's registers where the builder compiled the kernels (NVRTC or nvcc)
        regs = b.obj.get("resources") or None
        assert reply["costs"] == [estimate(program, task.target, regs).seconds]
        assert "analytic model" in reply["estimate"]


def test_a_wrong_result_is_an_error_record(task, builds, monkeypatch):
    def zeros(program, arrays, check=True):  # an emulator whose kernel computes nothing
        pass

    monkeypatch.setattr(emulate_worker, "emulator", lambda: zeros)
    runner = auto_scheduler.EmulatedRunner(isolated=False)
    runner.setup(task, builds[0].params, _outputs(task))
    (reply,) = runner.run(builds[:1])
    assert reply["error_no"] == 5 and not reply.get("costs")
    assert "differs from the numpy reference on the GPU emulator" in reply["error_msg"]


def test_an_emulator_report_is_an_error_record(task, builds, monkeypatch):
    def racing(program, arrays, check=True):
        raise GPURaceError(
            "race on A_shared[3]", kernel="k0", block=(0, 0, 0), thread=(1, 0, 0),
            buffer="A_shared", index=(3,),
        )  # fmt: skip

    monkeypatch.setattr(emulate_worker, "emulator", lambda: racing)
    runner = auto_scheduler.EmulatedRunner(isolated=False)
    runner.setup(task, builds[0].params, _outputs(task))
    (reply,) = runner.run(builds[:1])
    assert reply["error_no"] == 4 and reply["error_msg"] == "emulator: race on A_shared[3]"


def test_a_cpu_build_is_never_emulated(task, builds):
    runner = auto_scheduler.EmulatedRunner(isolated=False)
    runner.setup(task, builds[0].params, _outputs(task))
    cpu = BuildResult(b"obj", "main", [], 0, "", 0.0, "llvm -num-cores=1", builds[0].payload)
    (reply,) = runner.run([cpu])
    assert reply["error_no"] == 4 and "runs CUDA builds" in reply["error_msg"]
