"""The builder's CUDA path: a candidate of a CUDA task is built for CUDA, never for the CPU.

``build_cuda(func, target)`` takes the prepared PrimFunc to the kernel form
(``codegen.kernel_form.split_kernels``), checks each kernel's launch against the target's
limits, generates CUDA C (``codegen.cuda_c``) and, where a CUDA compiler is installed
(NVRTC from the ``cuda`` extra, or nvcc), compiles it to a cubin for the target's arch.
An unbound stage or a launch over the limits is an instantiation error, a generator or
compiler failure a device-compile error: either is an error record, and the search goes on.
"""

from __future__ import annotations

import traceback
from typing import Any

from ..errors import AnsorLabError, GPUScheduleError
from .records import ErrorNo


def _error(kind: ErrorNo, msg: str) -> dict:
    return {"error_no": int(kind), "error_msg": msg}


def launch_problems(program: Any, target: Any) -> list[str]:
    """What in a kernel program the target cannot launch (empty: it can)."""
    problems = []
    max_threads = getattr(target, "max_threads_per_block", 0) or 1024
    max_shared = getattr(target, "max_shared_memory_per_block", 0) or 49152
    for k in program.kernels:
        if k.threads_per_block > max_threads:
            problems.append(
                f"kernel {k.name} launches {k.threads_per_block} threads per block "
                f"(block {k.block}); {target} allows {max_threads}"
            )
        if k.shared_bytes() > max_shared:
            problems.append(
                f"kernel {k.name} uses {k.shared_bytes()} bytes of shared memory per block; "
                f"{target} allows {max_shared}"
            )
    return problems


def _compile(source: str, target: Any) -> tuple[bytes | None, Any]:
    """(cubin, resources) from the installed CUDA compiler; (None, None) when none is."""
    try:
        from ..codegen.cuda_compile import compile_cuda  # noqa: PLC0415 - cuda-python, lazy
    except ImportError:
        return None, None
    try:
        compiled = compile_cuda(source, target.arch)
    except ImportError:  # no NVRTC and no nvcc on this machine: emulation needs neither
        return None, None
    return getattr(compiled, "cubin", None), getattr(compiled, "resources", None)


def build_cuda(func: Any, target: Any) -> dict:
    """Build one prepared CUDA-scheduled function: {error_no, source, obj (cubin), ...}."""
    from ..codegen.kernel_form import split_kernels  # noqa: PLC0415 - only CUDA tasks

    try:
        program = split_kernels(func)
    except GPUScheduleError as err:
        return _error(ErrorNo.INSTANTIATION_ERROR, str(err))
    problems = launch_problems(program, target)
    if problems:
        return _error(ErrorNo.INSTANTIATION_ERROR, "; ".join(problems))
    source, cubin, resources = "", None, None
    try:
        from ..codegen import cuda_c  # noqa: PLC0415 - the CUDA C generator
    except ImportError:
        cuda_c = None
    try:
        if cuda_c is not None:
            source = cuda_c.generate(program, target)
            cubin, resources = _compile(source, target)
    except AnsorLabError as err:
        return _error(ErrorNo.COMPILE_DEVICE, str(err))
    except Exception:  # noqa: BLE001 - a generator/compiler bug is an error record
        return _error(ErrorNo.COMPILE_DEVICE, traceback.format_exc(limit=8))
    return {
        "error_no": 0,
        "error_msg": "",
        "obj": cubin,
        "source": source,
        "resources": resources,
        "target": str(target),
        "kernels": [(k.name, k.grid, k.block, k.shared_bytes()) for k in program.kernels],
    }
