"""Compiling the generated CUDA C without a GPU: NVRTC (the ``cuda`` extra) and nvcc, PTX
and cubin per arch, resource usage read back from ptxas, clear compile errors, limits."""

from __future__ import annotations

import functools

import pytest
from cuda_programs import shared_rowsum_float4, shared_transpose
from cuda_workloads import ALL_WORKLOADS as WORKLOADS

import ansor_lab as tvm
from ansor_lab.codegen.cuda_compile import (
    CompiledCUDA,
    KernelResources,
    check_resources,
    compile_cuda,
    nvcc_path,
    nvrtc_available,
    parse_resource_usage,
)
from ansor_lab.errors import CodegenError, GPUScheduleError

needs_nvrtc = pytest.mark.skipif(
    not nvrtc_available(), reason="NVRTC is not installed (pip install 'ansor_lab[cuda]')"
)
needs_nvcc = pytest.mark.skipif(nvcc_path() is None, reason="nvcc is not on this machine")
ARCHS = ("sm_75", "sm_80", "sm_90")
HAND = {"shared_transpose": shared_transpose, "shared_rowsum": shared_rowsum_float4}


@functools.cache
def source(name: str) -> tuple:
    """(CUDA C, kernel form) of a workload or hand program."""
    if name in WORKLOADS:
        s, args = WORKLOADS[name]()
        mod = tvm.build(s, args, target="cuda")
    else:
        mod = tvm.build(HAND[name](),
                        target="cuda")  # fmt: skip
    return mod.get_source("cuda"), mod.kernel_program


@functools.cache
def compiled(name: str, arch: str, compiler: str) -> CompiledCUDA:
    return compile_cuda(source(name)[0], arch, compiler)


def _check(out: CompiledCUDA, name: str, arch: str) -> None:
    program = source(name)[1]
    assert out.cubin[:4] == b"\x7fELF"
    assert f".target {arch}" in out.ptx
    assert sorted(out.resources) == sorted(k.name for k in program.kernels)
    for k in program.kernels:
        res = out.resources[k.name]
        assert 1 <= res.registers <= 255
        assert res.shared_bytes == k.shared_bytes()
        assert f".entry {k.name}(" in out.ptx
    check_resources(out, program.kernels, tvm.target.Target(f"cuda -arch={arch}"))


@needs_nvrtc
@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_nvrtc_compiles_every_workload(name):
    out = compiled(name, "sm_80", "nvrtc")
    assert out.compiler == "nvrtc" and out.arch == "sm_80" and out.seconds > 0
    _check(out, name, "sm_80")


@needs_nvcc
@pytest.mark.parametrize("name", ["matmul", "half_scale", "transpose"])
def test_nvcc_agrees_with_nvrtc_on_resources(name):
    out = compiled(name, "sm_80", "nvcc")
    assert out.compiler == "nvcc"
    _check(out, name, "sm_80")
    if nvrtc_available():
        other = compiled(name, "sm_80", "nvrtc")
        for k, res in out.resources.items():
            assert res.shared_bytes == other.resources[k].shared_bytes


@pytest.mark.slow
@pytest.mark.parametrize("compiler", ["nvrtc", "nvcc"])
@pytest.mark.parametrize("arch", ARCHS)
def test_every_workload_for_every_arch(compiler, arch):
    if compiler == "nvrtc" and not nvrtc_available():
        pytest.skip("NVRTC is not installed (pip install 'ansor_lab[cuda]')")
    if compiler == "nvcc" and nvcc_path() is None:
        pytest.skip("nvcc is not on this machine")
    for name in [*sorted(WORKLOADS), *HAND]:
        _check(compiled(name, arch, compiler), name, arch)


@needs_nvrtc
def test_shared_memory_and_barriers_read_back():
    out = compiled("shared_transpose", "sm_90", "nvrtc")
    res = out.resources["transpose_kernel0"]
    assert res.shared_bytes == 16 * 17 * 4 and res.barriers == 1
    assert res.spill_stores == res.spill_loads == 0
    assert "1088 B shared" in str(res)


@needs_nvrtc
def test_fast_math_compiles():
    s, args = WORKLOADS["elementwise_chain"]()
    mod = tvm.build(s, args, target="cuda -arch=sm_80", fast_math=True)
    out = mod.compiled
    assert "__expf(" in mod.get_source() and out.arch == "sm_80"
    assert out.resources["main_kernel0"].registers > 0
    assert "ex2.approx" in out.ptx  # the fast exponential


@pytest.mark.parametrize(
    "compiler",
    [pytest.param("nvrtc", marks=needs_nvrtc), pytest.param("nvcc", marks=needs_nvcc)],
)
def test_compile_error_quotes_the_log_and_the_line(compiler):
    src = source("shared_transpose")[0]
    lines = src.splitlines()
    bad_line = next(i for i, line in enumerate(lines) if "__syncthreads" in line)
    lines[bad_line] = "  __syncthreads(;"
    with pytest.raises(CodegenError) as info:
        compile_cuda("\n".join(lines), "sm_80", compiler)
    msg = str(info.value)
    assert (
        f"{'NVRTC' if compiler == 'nvrtc' else 'nvcc'} failed to compile the CUDA C for sm_80"
        in msg
    )
    assert f"line {bad_line + 1}: __syncthreads(;" in msg
    assert "error" in msg


def test_bad_arch_and_compiler_names():
    with pytest.raises(CodegenError, match="write e.g. 'sm_80'"):
        compile_cuda("", "80")
    with pytest.raises(CodegenError, match="compiler='clang'"):
        compile_cuda("", "sm_80", "clang")


NVRTC_LOG = """ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'main_kernel0' for 'sm_80'
ptxas info    : Function properties for main_kernel0
ptxas         .     24 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads
ptxas info    : Used 255 registers, used 1 barriers, 4352 bytes smem, 360 bytes cmem[0]
ptxas info    : Compiling entry function 'main_kernel1' for 'sm_80'
ptxas info    : Function properties for main_kernel1
ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 12 registers, used 0 barriers, 360 bytes cmem[0]
"""
NVCC_LOG = """ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'k' for 'sm_75'
ptxas info    : Function properties for k
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 4 registers, used 0 barriers, 360 bytes cmem[0]
"""


def test_parse_ptxas_verbose_output():
    res = parse_resource_usage(NVRTC_LOG)
    assert res["main_kernel0"] == KernelResources("main_kernel0", 255, 4352, 8, 12, 24, 1)
    assert res["main_kernel1"] == KernelResources("main_kernel1", 12, 0, 0, 0, 0, 0)
    assert parse_resource_usage(NVCC_LOG) == {"k": KernelResources("k", 4, 0, 0, 0, 0, 0)}


def test_resource_check_against_the_target():
    program = source("matmul")[1]  # 64 threads per block
    (k,) = program.kernels
    target = tvm.target.Target("cuda -arch=sm_80")
    fat = CompiledCUDA("", b"", {k.name: KernelResources(k.name, registers=2048)})
    with pytest.raises(GPUScheduleError, match="2048 registers per thread x 64 threads"):
        check_resources(fat, program.kernels, target)
    big = CompiledCUDA("", b"", {k.name: KernelResources(k.name, 32, shared_bytes=1 << 20)})
    with pytest.raises(GPUScheduleError, match="1048576 bytes of shared memory, over the 49152"):
        check_resources(big, program.kernels, target)
    check_resources(CompiledCUDA("", b"", {k.name: KernelResources(k.name, 32)}),
                    program.kernels, target)  # fmt: skip


class _QuietNVRTC:
    """A stand-in for cuda.bindings.nvrtc whose log is empty (size 1: its NUL), as NVRTC
    13.0 left it on an H200 machine; it refuses an output buffer it must not write."""

    def __init__(self, ptx: str, cubin: bytes) -> None:
        self.ptx, self.cubin = ptx.encode() + b"\0", cubin

    @staticmethod
    def _fill(buf, data: bytes):
        assert isinstance(buf, bytearray), f"NVRTC would write into a {type(buf).__name__}"
        buf[: len(data)] = data
        return (0,)

    def nvrtcCreateProgram(self, *args):
        return (0, "prog")

    def nvrtcCompileProgram(self, prog, n, opts):
        return (0,)

    def nvrtcGetProgramLogSize(self, prog):
        return (0, 1)

    def nvrtcGetProgramLog(self, prog, buf):
        return self._fill(buf, b"\0")

    def nvrtcGetPTXSize(self, prog):
        return (0, len(self.ptx))

    def nvrtcGetPTX(self, prog, buf):
        return self._fill(buf, self.ptx)

    def nvrtcGetCUBINSize(self, prog):
        return (0, len(self.cubin))

    def nvrtcGetCUBIN(self, prog, buf):
        return self._fill(buf, self.cubin)

    def nvrtcDestroyProgram(self, prog):
        return (0,)


@needs_nvrtc
@needs_nvcc
def test_an_empty_nvrtc_log_harms_nothing_and_ptxas_reports_the_resources(monkeypatch):
    """An empty log once made the NVRTC call write its NUL into the interpreter's shared
    b" " (every b" " of the process became b"\\x00"); now the buffers are bytearrays, and
    the resources come from ptxas on the PTX instead."""
    import cuda.bindings  # noqa: PLC0415

    src, _ = source("matmul")
    by_nvcc = compile_cuda(src, "sm_80", "nvcc")  # PTX of nvcc's version, which ptxas reads
    monkeypatch.setattr(cuda.bindings, "nvrtc", _QuietNVRTC(by_nvcc.ptx, by_nvcc.cubin),
                        raising=False)  # fmt: skip
    out = compile_cuda(src, "sm_80", "nvrtc")
    assert b" " == bytes([32]) and b" " == b"\x20"
    assert out.log == "" and out.ptx == by_nvcc.ptx and out.cubin == by_nvcc.cubin
    assert out.resources == by_nvcc.resources and out.resources["main_kernel0"].registers > 0
