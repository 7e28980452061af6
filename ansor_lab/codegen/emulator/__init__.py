"""The GPU emulator: a CUDA-scheduled program run on the CPU with CUDA semantics.

``emulate(program, arrays, check=True)`` runs every kernel of a ``KernelProgram`` (or of
a CUDA-scheduled PrimFunc, cut by ``kernel_form.split_kernels``) in place on numpy
arrays: a grid of blocks; the threads of a block each run up to a barrier and wait
there; per-thread locals; per-block shared memory. It is compiled, not interpreted: each
kernel becomes ordinary CPU loop IR by thread-loop fission (``fission``: each
barrier-free region a loop over the block's threads; MCUDA / POCL) and goes through the
LLVM backend (``pipeline.prepare`` and ``llvm.compile_func``).

With ``check=True`` (the default) it reports, as ``errors.GPUEmulationError``
subclasses with the kernel, block, thread, buffer and index, what a GPU would hit: an
access out of bounds (``GPUOutOfBoundsError``), a shared-memory race between two barriers
(``GPURaceError``), a barrier not reached by every thread of a block
(``GPUBarrierError``; found before running when the condition is a function of the
thread indices). ``check=False`` runs without the checks (a divergent barrier then takes
thread (0, 0, 0)'s path) and spreads the blocks over the CPU's cores.

Modules: ``spmd`` (the per-thread program), ``checks`` (check-mode instrumentation),
``uniform`` (the same value for every thread?), ``fission`` (the block-level loop nest),
``program`` (the whole program, compiled), ``report`` (what a failed check says).
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence

import numpy as np

from ...errors import RuntimeArgumentError
from ...ir import nodes as N
from ..kernel_form import KernelProgram, split_kernels
from .program import EmulatedProgram

__all__ = ["EmulatedProgram", "compile_program", "emulate"]

#: compiled programs by (function, check, parallel): emulating one program again (a test
#: against several inputs, a runner repeating a candidate) does not compile it again
_CACHE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def compile_program(
    program: KernelProgram | N.PrimFunc, *, check: bool = True, parallel: bool | None = None
) -> EmulatedProgram:
    """The program compiled for the emulator (cached per function and mode).

    ``parallel`` (default: ``not check``) runs the blocks of each kernel on the CPU's
    cores; check mode always runs them one after another.
    """
    if isinstance(program, N.PrimFunc):
        program = split_kernels(program)
    if not isinstance(program, KernelProgram):
        raise RuntimeArgumentError(
            f"emulate takes a KernelProgram or a CUDA-scheduled PrimFunc, got "
            f"{type(program).__name__}; lower the schedule first: tvm.lower(s, args)['main']"
        )
    parallel = (not check) if parallel is None else bool(parallel and not check)
    key = (bool(check), parallel)
    per_func = _CACHE.setdefault(program.func, {})
    found = per_func.get(key)
    if found is None or found.program != program:
        found = EmulatedProgram(program, check=check, parallel=parallel)
        per_func[key] = found
    return found


def check_arrays(func: N.PrimFunc, arrays: Sequence[object]) -> list[np.ndarray]:
    """The arrays as numpy arrays fit for ``func``'s parameters, or a clear error."""
    params = func.params
    if len(arrays) != len(params):
        names = ", ".join(b.name for b in params)
        raise RuntimeArgumentError(
            f"{func.name} takes {len(params)} arrays ({names}), got {len(arrays)}"
        )
    out = []
    for arr, buf in zip(arrays, params):
        if not isinstance(arr, np.ndarray):
            raise RuntimeArgumentError(
                f"argument {buf.name!r} is a {type(arr).__name__}; pass a numpy array (the "
                "emulator writes its results into it), e.g. nd_array.numpy()"
            )
        if arr.shape != tuple(buf.shape):
            raise RuntimeArgumentError(
                f"argument {buf.name!r} has shape {arr.shape}, expected {tuple(buf.shape)}"
            )
        if arr.dtype.name != buf.dtype:
            raise RuntimeArgumentError(
                f"argument {buf.name!r} has dtype {arr.dtype.name}, expected {buf.dtype}; "
                f"convert it with .astype('{buf.dtype}')"
            )
        if not arr.flags.c_contiguous or not arr.flags.writeable:
            raise RuntimeArgumentError(
                f"argument {buf.name!r} must be a writeable C-contiguous array; pass "
                "np.ascontiguousarray(x) (a copy)"
            )
        out.append(arr)
    return out


def emulate(
    program: KernelProgram | N.PrimFunc, arrays: Sequence[np.ndarray], *, check: bool = True
) -> None:
    """Run a CUDA-scheduled program on the CPU with CUDA semantics, in place on ``arrays``
    (its parameters, in order; temporaries are allocated here). See the module doc."""
    compiled = compile_program(program, check=check)
    compiled(check_arrays(compiled.program.func, arrays))
