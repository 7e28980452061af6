"""Measuring CUDA candidates: built as CUDA in the builder (never as CPU code), timed with
pycuda in the runner where a GPU exists, a fault replacing the runner process."""

from __future__ import annotations

import numpy as np
import pytest

from ansor_lab import te, tir
from ansor_lab.codegen.cuda_compile import available_compilers
from ansor_lab.dsl.serialize import dag_to_json
from ansor_lab.measure.measure import LocalRunner
from ansor_lab.measure.records import ErrorNo
from ansor_lab.measure.workers import build_worker
from ansor_lab.runtime import cuda_support

needs_compiler = pytest.mark.skipif(
    not available_compilers(), reason="neither NVRTC (ansor_lab[cuda]) nor nvcc is installed"
)
needs_gpu = pytest.mark.skipif(
    not cuda_support.cuda_available(),
    reason=f"no usable CUDA GPU here ({cuda_support.cuda_unavailable_reason()})",
)


def _payload(bind: bool = True, target: str = "cuda -arch=sm_80") -> dict:
    A = te.placeholder((64, 64), name="A")
    B = te.compute((64, 64), lambda i, j: A[i, j] * 2.0 + 1.0, name="B")
    sch = tir.Schedule(te.create_prim_func([A, B]))
    i, j = sch.get_loops(sch.get_block("B"))
    if bind:
        sch.bind(i, "blockIdx.x")
        sch.bind(j, "threadIdx.x")
    return {
        "dag": dag_to_json([A, B]),
        "trace": sch.trace.as_json(),
        "target": target,
        "num_threads": 1,
    }


@needs_compiler
def test_builder_builds_cuda_for_a_cuda_target():
    r = build_worker(_payload())
    assert r["error_no"] == 0, r["error_msg"]
    obj = r["obj"]
    assert obj["cuda"] is True and obj["arch"] == "sm_80" and obj["cubin"][:4] == b"\x7fELF"
    assert "__launch_bounds__(64) main_kernel0" in obj["source"]
    (launch,) = obj["launches"]
    assert (launch.grid, launch.block, launch.args) == ((64, 1, 1), (64, 1, 1), ("A", "B"))
    assert r["params"] == [("A", [64, 64], "float32"), ("B", [64, 64], "float32")]


def test_unbound_candidate_is_an_error_record_not_a_cpu_program():
    r = build_worker(_payload(bind=False))
    assert r["error_no"] == int(ErrorNo.INSTANTIATION_ERROR)
    assert "not bound to GPU threads" in r["error_msg"]
    assert "obj" not in r


@needs_gpu
@needs_compiler
def test_runner_times_a_cuda_candidate_on_the_gpu():
    from ansor_lab.measure.measure import BuildResult  # noqa: PLC0415

    r = build_worker(_payload())
    build = BuildResult(r["obj"], r["entry"], r["params"], 0, "", r["time"])

    class Task:
        target = __import__("ansor_lab").target.Target("cuda -arch=sm_80")
        dag_json = _payload()["dag"]
        workload_key = "cuda-test"

    runner = LocalRunner(number=5, repeat=2, min_repeat_ms=1, check_correctness=True)
    try:
        runner.setup(Task(), r["params"], [1])
        (reply,) = runner.run([build])
        assert reply["error_no"] == 0, reply.get("error_msg")
        assert len(reply["costs"]) == 2 and all(0 < c < 1e-2 for c in reply["costs"])
    finally:
        runner.close()
    assert np.isfinite(reply["costs"]).all()
