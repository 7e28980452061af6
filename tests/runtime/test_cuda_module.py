"""``tvm.build(..., target="cuda")``: the CUDAModule, what works without a GPU, the clear
error where a GPU is needed, and (on a machine with one) running and timing with pycuda."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

import numpy as np
import pytest

import ansor_lab as tvm
from ansor_lab import te
from ansor_lab.codegen.cuda_compile import available_compilers
from ansor_lab.errors import GPUUnavailableError, RuntimeArgumentError
from ansor_lab.runtime import cuda_support
from ansor_lab.runtime.cuda_module import CUDAModule


def _vector_add(n: int = 1024):
    A = te.placeholder((n,), name="A")
    B = te.placeholder((n,), name="B")
    C = te.compute((n,), lambda i: A[i] + B[i] * 2.0, name="C")
    s = te.create_schedule(C.op)
    bo, ti = s[C].split(C.op.axis[0], factor=128)
    s[C].bind(bo, te.thread_axis("blockIdx.x"))
    s[C].bind(ti, te.thread_axis("threadIdx.x"))
    return s, [A, B, C]


@pytest.fixture
def mod() -> CUDAModule:
    s, args = _vector_add()
    return tvm.build(s, args, target="cuda -arch=sm_80")


@pytest.fixture
def no_gpu(monkeypatch):
    """This machine as one without a GPU, whatever it has."""
    monkeypatch.setenv("ANSOR_LAB_NO_GPU", "1")
    cuda_support.cuda_unavailable_reason.cache_clear()
    yield
    monkeypatch.delenv("ANSOR_LAB_NO_GPU")
    cuda_support.cuda_unavailable_reason.cache_clear()


needs_gpu = pytest.mark.skipif(
    not cuda_support.cuda_available(),
    reason=f"no usable CUDA GPU here ({cuda_support.cuda_unavailable_reason()})",
)
needs_compiler = pytest.mark.skipif(
    not available_compilers(), reason="neither NVRTC (ansor_lab[cuda]) nor nvcc is installed"
)


def test_build_returns_a_cuda_module_with_tvm_source_accessors(mod):
    assert isinstance(mod, CUDAModule)
    src = mod.get_source("cuda")
    assert src == mod.get_source() == mod.imported_modules[0].get_source()
    assert mod.imported_modules[0].type_key == "cuda"
    assert 'extern "C" __global__ void __launch_bounds__(128) main_kernel0(' in src
    assert "float* __restrict__ A, float* __restrict__ B, float* __restrict__ C" in src
    assert "((((int)blockIdx.x) * 128) + ((int)threadIdx.x))" in src
    assert 'T.thread_binding(8, thread="blockIdx.x")' in mod.get_source("tir")
    assert [k.grid for k in mod.kernel_program.kernels] == [(8, 1, 1)]
    assert mod.launch_plan.launches[0].block == (128, 1, 1)
    assert mod["main"] is mod and mod.entry_name == "main"
    with pytest.raises(RuntimeArgumentError, match="'cuda', 'ptx' or 'tir'"):
        mod.get_source("ll")


@needs_compiler
@needs_compiler
def test_compiled_at_build_for_the_target_arch(mod):
    assert "compiled" in mod.__dict__  # build compiled it (a compiler is installed)
    out = mod.compiled
    assert out is mod.compiled  # once
    assert out.arch == "sm_80" and ".target sm_80" in mod.get_source("ptx")
    assert out.resources["main_kernel0"].registers > 0


def test_running_without_a_gpu_says_what_to_do_instead(mod, no_gpu):
    a = np.ones(1024, "float32")
    with pytest.raises(GPUUnavailableError) as info:
        mod(a, a, np.zeros(1024, "float32"))
    msg = str(info.value)
    assert "running main needs a CUDA GPU" in msg
    assert "mod.emulate(a, b, c)" in msg and "auto_scheduler.EmulatedRunner()" in msg
    with pytest.raises(GPUUnavailableError, match="timing main needs a CUDA GPU"):
        mod.time_evaluator(mod.entry_name, tvm.cuda(), min_repeat_ms=500)


def test_arrays_on_cuda_without_a_gpu(no_gpu):
    dev = tvm.cuda()
    assert dev.exist is False
    with pytest.raises(GPUUnavailableError, match=r"tvm.nd.array\(...\) on cuda\(0\)"):
        tvm.nd.array(np.zeros(4, "float32"), dev)
    with pytest.raises(GPUUnavailableError, match=r"tvm.nd.empty"):
        tvm.nd.empty((4,), "float32", dev)
    with pytest.raises(GPUUnavailableError, match="copyto"):
        tvm.nd.array(np.zeros(4, "float32")).copyto(dev)
    assert tvm.nd.array(np.ones(4, "float32"), tvm.cpu()).numpy().sum() == 4  # CPU unchanged


def test_time_evaluator_keywords(mod):
    with pytest.raises(Exception, match="nonsense"):
        mod.time_evaluator(nonsense=1)


def test_no_gpu_measurement_refused_before_building(no_gpu):
    from ansor_lab.measure.measure import LocalRunner  # noqa: PLC0415

    class Task:
        target = tvm.target.Target("cuda")

    with pytest.raises(GPUUnavailableError, match="LocalRunner measuring a CUDA task"):
        LocalRunner().check_task(Task())


@pytest.mark.skipif(
    importlib.util.find_spec("ansor_lab.codegen.emulator") is None,
    reason="the GPU emulator (ansor_lab.codegen.emulator) is not installed",
)
def test_emulate_matches_numpy(mod):
    rng = np.random.default_rng(0)
    a, b = rng.random(1024, dtype=np.float32), rng.random(1024, dtype=np.float32)
    c = np.zeros(1024, "float32")
    mod.emulate(a, b, c)
    np.testing.assert_allclose(c, a + b * 2.0, rtol=1e-6)


# -- on a real GPU -------------------------------------------------------------------------


@needs_gpu
def test_runs_on_the_gpu(mod):
    rng = np.random.default_rng(0)
    a, b = rng.random(1024, dtype=np.float32), rng.random(1024, dtype=np.float32)
    c = tvm.nd.array(np.zeros(1024, "float32"), tvm.cuda())
    mod(tvm.nd.array(a, tvm.cuda()), tvm.nd.array(b, tvm.cuda()), c)
    np.testing.assert_allclose(c.numpy(), a + b * 2.0, rtol=1e-6)


@needs_gpu
def test_time_evaluator_on_the_gpu(mod):
    a = np.ones(1024, "float32")
    res = mod.time_evaluator(mod.entry_name, tvm.cuda(), number=5, repeat=3, min_repeat_ms=1)(
        a, a, np.zeros(1024, "float32")
    )
    assert len(res.results) == 3 and 0 < res.mean < 1e-2


def _oob_module():
    """A kernel storing far out of bounds at a run-time index (hand-made IR)."""
    from ansor_lab.dsl import expr as E  # noqa: PLC0415
    from ansor_lab.ir import nodes as N  # noqa: PLC0415

    A = N.Buffer("A", (4,), "float32")
    idx = N.Buffer("idx", (1,), "int32")  # a run-time index: no build-time bound refusal
    t = E.Var("t", "int32")
    where = E.Mul(t, idx[E.IntImm(0)], "int32")
    store = N.BufferStore(A, E.FloatImm(1.0, "float32"), (where,))
    func = N.PrimFunc((A, idx), N.For(t, E.IntImm(0), E.IntImm(32), "thread_binding", store,
                                      "threadIdx.x"), "oob")  # fmt: skip
    return tvm.build(func, target="cuda")


def test_gpu_kernel_fault_is_an_error_not_a_crash():
    """An out-of-bounds store raises GPUKernelError on a GPU (in a child process)."""
    from ansor_lab.runtime.cuda_run import GPUKernelError  # noqa: PLC0415

    bad = _oob_module()
    assert "A[(((int)threadIdx.x) * idx[0])] = 1.0f;" in bad.get_source()
    if not cuda_support.cuda_available():
        return  # built and printed; the fault itself needs the GPU
    # the fault kills the process's CUDA context: provoke it in a child process
    code = (
        f"import numpy as np, sys; sys.path.insert(0, {os.path.dirname(__file__)!r})\n"
        "from test_cuda_module import _oob_module\n"
        "from ansor_lab.runtime.cuda_run import GPUKernelError\n"
        "try:\n    _oob_module()(np.zeros(4, 'float32'), np.array([1 << 26], 'int32'))\n"
        "except GPUKernelError as e:\n    print('GPUKernelError', e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.startswith("GPUKernelError CUDA error"), out.stdout + out.stderr
    assert GPUKernelError.context_lost


@needs_compiler
def test_a_compile_failure_is_an_error_of_build(monkeypatch):
    from ansor_lab.errors import CodegenError
    from ansor_lab.runtime import cuda_module

    def failing(*args, **kwargs):
        raise CodegenError("nvrtc: error: identifier 'x' is undefined (line 12)")

    monkeypatch.setattr(cuda_module, "compile_cuda", failing)
    s, args = _vector_add()
    with pytest.raises(CodegenError, match="identifier 'x' is undefined"):
        tvm.build(s, args, target="cuda")


def test_an_executor_collected_at_interpreter_exit_stays_quiet(monkeypatch):
    # at interpreter exit the module's globals may be None before the last executor is
    # collected: its __del__ must not print "Exception ignored in ..." (seen on an H200)
    from ansor_lab.runtime import cuda_run  # noqa: PLC0415 - the driver layer is lazy

    ex = object.__new__(cuda_run.GPUExecutor)
    ex.module = object()
    monkeypatch.setattr(cuda_run, "contextlib", None)
    with pytest.raises(AttributeError):
        ex.close()  # what the collector would have printed
    ex.module = object()
    ex.__del__()
    assert ex.module is None
