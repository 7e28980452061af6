"""A CUDA compile is held to a memory cap: a kernel ptxas would need gigabytes for (the
search writes some: a 4-thread conv2d block unrolling its cooperative fetch took 1.6 GB)
is a clear CodegenError or error record, never an out-of-memory kill of the machine."""

from __future__ import annotations

import resource

import numpy as np
import pytest

from ansor_lab import te, tir
from ansor_lab.codegen import cuda_compile
from ansor_lab.codegen.cuda_compile import (
    DEFAULT_COMPILE_MB,
    capped_memory,
    compile_cuda,
    compile_memory_mb,
    nvcc_path,
)
from ansor_lab.dsl.serialize import dag_to_json
from ansor_lab.errors import CodegenError
from ansor_lab.measure.records import ErrorNo
from ansor_lab.measure.workers import build_worker

needs_nvcc = pytest.mark.skipif(nvcc_path() is None, reason="nvcc is not on this machine")

SMALL = """
extern "C" __global__ void scale(float* __restrict__ a) {
  a[threadIdx.x] = a[threadIdx.x] * 2.0f + 1.0f;
}
"""


def payload() -> dict:
    """A builder request: a vector add bound to 4 blocks of 256 threads."""
    A = te.placeholder((1024,), name="A")
    B = te.compute((1024,), lambda i: A[i] + 1.0, name="B")
    sch = tir.Schedule(te.create_prim_func([A, B]))
    (i,) = sch.get_loops(sch.get_block("B"))
    bx, tx = sch.split(i, [4, 256])
    sch.bind(bx, "blockIdx.x")
    sch.bind(tx, "threadIdx.x")
    return {"dag": dag_to_json([A, B]), "trace": sch.trace.as_json(), "target": "cuda",
            "num_threads": 1}  # fmt: skip


def test_the_cap_is_768_mb_unless_the_environment_says(monkeypatch):
    monkeypatch.delenv("ANSOR_LAB_CUDA_COMPILE_MB", raising=False)
    assert compile_memory_mb() == DEFAULT_COMPILE_MB == 768
    monkeypatch.setenv("ANSOR_LAB_CUDA_COMPILE_MB", "2048")
    assert compile_memory_mb() == 2048
    for bad in ("lots", "12", "-5", "1.5"):
        monkeypatch.setenv("ANSOR_LAB_CUDA_COMPILE_MB", bad)
        with pytest.raises(CodegenError, match="whole number of at least 64"):
            compile_memory_mb()


def test_capped_memory_refuses_what_is_over_and_restores_the_limit():
    before = resource.getrlimit(resource.RLIMIT_DATA)
    with capped_memory(64):
        inside = resource.getrlimit(resource.RLIMIT_DATA)[0]
        assert inside != resource.RLIM_INFINITY
        with pytest.raises(MemoryError):
            np.ones(256 << 20, np.uint8)  # 256 MB: over the 64 MB on top of what is used
        small = np.ones(16 << 20, np.uint8)  # 16 MB: under
        assert int(small[-1]) == 1
    assert resource.getrlimit(resource.RLIMIT_DATA) == before
    assert int(np.ones(256 << 20, np.uint8)[-1]) == 1  # the process is whole again


@needs_nvcc
def test_nvcc_compiles_a_kernel_under_the_default_cap(monkeypatch):
    monkeypatch.delenv("ANSOR_LAB_CUDA_COMPILE_MB", raising=False)
    out = compile_cuda(SMALL, "sm_80", "nvcc")
    assert out.cubin[:4] == b"\x7fELF" and "scale" in out.resources


@needs_nvcc
def test_nvcc_over_the_cap_is_an_error_that_names_the_cap_and_the_remedy(monkeypatch):
    monkeypatch.setenv("ANSOR_LAB_CUDA_COMPILE_MB", "64")  # nvcc's front end needs ~100
    with pytest.raises(CodegenError) as info:
        compile_cuda(SMALL, "sm_80", "nvcc")
    msg = str(info.value)
    assert "nvcc ran out of the 64 MB one CUDA compile may use" in msg
    assert "pragma_auto_unroll_max_step" in msg and "$ANSOR_LAB_CUDA_COMPILE_MB" in msg


@needs_nvcc
def test_a_candidate_over_the_cap_is_an_error_record_of_the_builder(monkeypatch):
    # the builder's path: tvm.build for CUDA, then the compile under the cap (nvcc here)
    monkeypatch.setattr(cuda_compile, "nvrtc_available", lambda: False)
    monkeypatch.setenv("ANSOR_LAB_CUDA_COMPILE_MB", "64")
    r = build_worker(payload())
    assert r["error_no"] == int(ErrorNo.COMPILE_DEVICE)
    assert "ran out of the 64 MB" in r["error_msg"]
    assert "obj" not in r
    monkeypatch.setenv("ANSOR_LAB_CUDA_COMPILE_MB", "768")
    r = build_worker(payload())
    assert r["error_no"] == 0, r["error_msg"]
    assert r["obj"]["cubin"][:4] == b"\x7fELF"


def test_what_reads_as_out_of_memory():
    oom = cuda_compile._out_of_memory
    assert oom("ptxas fatal   : Memory allocation failure\nptxas fatal   : aborted")
    assert oom("LLVM ERROR: out of memory\nAborted", 134)
    assert oom("ptxas fatal   : Ptx assembly aborted due to errors")  # NVRTC's words
    assert not oom('kernel.cu(3): error: identifier "x" is undefined', 1)
    assert not oom("ptxas error   : Entry function 'k' uses too much shared data\n"
                   "ptxas fatal   : Ptx assembly aborted due to errors")  # fmt: skip
