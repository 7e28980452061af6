"""What ``tvm.build(..., target="cuda")`` returns: the CUDA C, compiled on demand.

A ``CUDAModule`` holds the prepared function, its kernel form (``.kernel_program``), the
host launch sequence (``.launch_plan``) and the CUDA C source. Everything that needs no
GPU works everywhere:

- ``mod.get_source()`` / ``mod.get_source("cuda")`` and, as in TVM, the device module
  ``mod.imported_modules[0].get_source()``: the CUDA C; ``get_source("tir")`` the loop IR;
- ``mod.compiled``: PTX, cubin and per-kernel resources for the target's ``sm_XX``
  (NVRTC when installed, else nvcc; compiled once, on first use) held to the target's
  limits (GPUScheduleError);
- ``mod.emulate(a, b, c)``: the GPU emulator on numpy arrays (outputs written in place).

``mod(a, b, c)`` and ``mod.time_evaluator(...)`` run on a real GPU with pycuda; where
none is usable they raise GPUUnavailableError before doing anything, naming the emulator
and ``auto_scheduler.EmulatedRunner``. On a GPU the cubin is compiled for the device's own
arch (a cubin for another arch does not load), and NDArrays on ``tvm.cuda()`` — host
memory here — are copied to the device for each call.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..codegen.cuda_c import generate, launch_plan
from ..codegen.cuda_compile import CompiledCUDA, check_resources, compile_cuda
from ..codegen.kernel_form import KernelProgram
from ..codegen.target import Target
from ..errors import RuntimeArgumentError, UnknownKeywordError
from ..ir import nodes as N
from .cuda_support import require_gpu
from .module import TIME_EVALUATOR_KEYWORDS, BenchmarkResult
from .ndarray import Device, as_numpy_view


class CUDASourceModule:
    """The device module (TVM's imported "cuda" module): it holds the CUDA C."""

    type_key = "cuda"

    def __init__(self, source: str) -> None:
        self._source = source

    def get_source(self, fmt: str = "cuda") -> str:
        """The CUDA C source ("cuda" or "cu")."""
        if fmt not in ("", "cuda", "cu"):
            raise RuntimeArgumentError(f"the device module has CUDA source only, not {fmt!r}")
        return self._source

    def __repr__(self) -> str:
        return "Module(cuda)"


class CUDAModule:
    """A program built for a CUDA target (see the module docstring)."""

    type_key = "cuda_host"

    def __init__(
        self, func: N.PrimFunc, target: Target, program: KernelProgram, fast_math: bool = False
    ) -> None:
        self.func = func
        self.target = target
        self.kernel_program = program
        self.fast_math = fast_math
        self.launch_plan = launch_plan(program)
        self.source = generate(program, target, fast_math=fast_math)
        self.imported_modules = [CUDASourceModule(self.source)]
        self._executor = None

    @property
    def entry_name(self) -> str:
        """The name of the built function."""
        return self.func.name

    def get_source(self, fmt: str = "cuda") -> str:
        """The CUDA C ("cuda", "cu" or ""), the PTX ("ptx") or the loop IR ("tir")."""
        if fmt in ("", "cuda", "cu"):
            return self.source
        if fmt == "ptx":
            return self.compiled.ptx
        if fmt == "tir":
            return self.func.script()
        raise RuntimeArgumentError(f"get_source: format {fmt!r}; use 'cuda', 'ptx' or 'tir'")

    @functools.cached_property
    def compiled(self) -> CompiledCUDA:
        """PTX, cubin and resources for the target's arch (compiled on first use)."""
        return self.compile()

    def compile(self, compiler: str = "auto", arch: str | None = None) -> CompiledCUDA:
        """Compile the source with ``compiler`` ("nvrtc", "nvcc", "auto") for ``arch``
        (the target's by default), checking the resources against the target."""
        out = compile_cuda(
            self.source, arch or self.target.arch, compiler, fast_math=self.fast_math
        )
        check_resources(out, self.kernel_program.kernels, self.target)
        return out

    def __getitem__(self, name: str) -> CUDAModule:
        return self.get_function(name)

    def get_function(self, name: str) -> CUDAModule:
        """The built function ``name`` (a module holds one)."""
        if name != self.entry_name:
            raise RuntimeArgumentError(
                f"module has no function {name!r}; it has {self.entry_name!r}"
            )
        return self

    # -- running --------------------------------------------------------------------
    def _arrays(self, args: Sequence[object]) -> list[np.ndarray]:
        params = self.func.params
        if len(args) != len(params):
            raise RuntimeArgumentError(
                f"{self.entry_name} takes {len(params)} arrays "
                f"({', '.join(b.name for b in params)}), got {len(args)}"
            )
        out = []
        for b, a in zip(params, args):
            arr = as_numpy_view(a)
            if tuple(arr.shape) != tuple(b.shape) or arr.dtype != np.dtype(b.dtype):
                raise RuntimeArgumentError(
                    f"argument {b.name}: expected shape {tuple(b.shape)} {b.dtype}, got "
                    f"{tuple(arr.shape)} {arr.dtype}"
                )
            out.append(arr)
        return out

    def emulate(self, *arrays: object, check: bool = True) -> None:
        """Run the program on the GPU emulator (CPU, CUDA semantics), outputs in place."""
        from ..codegen.emulator import emulate  # noqa: PLC0415 - written alongside; lazy

        emulate(self.kernel_program, self._arrays(arrays), check=check)

    def _gpu(self):
        if self._executor is None:
            from .cuda_run import GPUExecutor, device_arch  # noqa: PLC0415 - pycuda is lazy

            arch = device_arch(0)
            compiled = self.compiled if arch == self.target.arch else self.compile(arch=arch)
            plan = self.launch_plan
            self._executor = GPUExecutor(
                compiled.cubin, plan.launches, plan.temporaries, plan.params
            )
        return self._executor

    def __call__(self, *args: object) -> None:
        """Run on the GPU (pycuda); outputs are written into the arrays passed."""
        require_gpu(f"running {self.entry_name}")
        self._gpu().run(self._arrays(args))

    def time_evaluator(
        self,
        func_name: str | None = None,
        dev: Device | None = None,
        number: int = 10,
        repeat: int = 1,
        min_repeat_ms: float = 0,
        **kwargs: Any,
    ) -> Callable[..., BenchmarkResult]:
        """TVM's timer: kernel time by CUDA events (mean of ``number`` runs per repeat).

        Needs a GPU: without one it raises GPUUnavailableError here, before any work.
        The CPU-only keywords of ``Module.time_evaluator`` are accepted and ignored.
        """
        unknown = {k: v for k, v in kwargs.items() if k not in TIME_EVALUATOR_KEYWORDS}
        if unknown:
            raise UnknownKeywordError.of("time_evaluator", unknown, TIME_EVALUATOR_KEYWORDS)
        if func_name not in (None, self.entry_name):
            self.get_function(func_name)
        if number < 1 or repeat < 1:
            raise RuntimeArgumentError("number and repeat must be at least 1")
        require_gpu(f"timing {self.entry_name}")

        def evaluate(*args: object) -> BenchmarkResult:
            arrays = self._arrays(args)
            costs = self._gpu().time(arrays, number, repeat, min_repeat_ms)
            return BenchmarkResult(tuple(costs))

        return evaluate

    def __repr__(self) -> str:
        return f"CUDAModule({self.entry_name}, target={self.target})"


def build_cuda(func: N.PrimFunc, target: Target, fast_math: bool = False) -> CUDAModule:
    """``tvm.build`` for a CUDA target: prepare, check, cut into kernels, print CUDA C,
    and compile it for the target's arch where a compiler (NVRTC or nvcc) is installed, so
    a compile failure or a resource overflow is an error of ``build`` (CodegenError /
    GPUScheduleError). Without a compiler the module still has its source and emulates;
    ``mod.compiled`` then says what to install. ``prepare`` runs the GPU legality checks.
    """
    from ..codegen.cuda_compile import available_compilers  # noqa: PLC0415 - light import
    from ..codegen.kernel_form import split_kernels  # noqa: PLC0415 - keep import light
    from ..codegen.pipeline import prepare  # noqa: PLC0415

    func = prepare(func, target)  # for a CUDA target: barriers, codegen.gpu_verify checks
    mod = CUDAModule(func, target, split_kernels(func), fast_math)
    if available_compilers():
        mod.compiled  # noqa: B018 - compile now (cached): failures belong to build
    return mod
