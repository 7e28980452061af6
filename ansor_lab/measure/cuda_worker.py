"""The CUDA side of the measurement workers: build a candidate to a cubin, time it with pycuda.

Builder process (``build_cuda_candidate``): the same path as ``tvm.build(...,
target="cuda")`` (prepare, GPU checks, kernel form, CUDA C), compiled with NVRTC or nvcc
for the target's ``sm_XX``; a compile failure or a resource overflow is an error record
(COMPILE_DEVICE / INSTANTIATION_ERROR), never a CPU program in disguise. The build's
``obj`` is a plain dict (source, cubin, launch plan).

Runner process (``run_cuda_candidate``): loads the cubin (recompiled from the source
for the device's own arch when the target names another), checks the outputs against
the reference when asked, then times the launch sequence with CUDA events (``number``,
``repeat``, ``min_repeat_ms``). A kernel fault kills the process's CUDA context: the
reply is an error record with ``restart_worker`` set, and ``LocalRunner`` replaces the
process before the next candidate. A hang is the runner's timeout, as for CPU kernels.
"""

from __future__ import annotations

import time
import traceback
from typing import Any

import numpy as np

from .records import ErrorNo


def build_cuda_candidate(func: Any, target: Any, start: float) -> dict:
    """Build one candidate for a CUDA target (runs in a builder process)."""
    from ..codegen.cuda_compile import available_compilers, capped_memory  # noqa: PLC0415
    from ..errors import AnsorLabError, CodegenError, GPUScheduleError  # noqa: PLC0415
    from ..runtime.cuda_module import build_cuda  # noqa: PLC0415 - builder side only

    def error(kind: ErrorNo, msg: str) -> dict:
        return {"error_no": int(kind), "error_msg": msg, "time": time.perf_counter() - start}

    try:
        # build_cuda compiles where a compiler is installed (NVRTC or nvcc); without one
        # (Binder, a laptop) the source is still checked on the GPU emulator
        # (EmulatedRunner), which needs no cubin, and a GPU runner compiles it there. The
        # cap: a candidate ptxas needs gigabytes for is an error record, not an
        # out-of-memory kill of the machine's other processes (the user's kernel)
        with capped_memory():
            mod = build_cuda(func, target)
            compiled = mod.compiled if available_compilers() else None
    except GPUScheduleError as err:  # not bound, over the target's registers or shared memory
        return error(ErrorNo.INSTANTIATION_ERROR, str(err))
    except CodegenError as err:  # the CUDA C or its compile failed
        return error(ErrorNo.COMPILE_DEVICE, str(err))
    except AnsorLabError as err:
        return error(ErrorNo.INSTANTIATION_ERROR, str(err))
    except Exception:  # noqa: BLE001 - any bug becomes an error record
        return error(ErrorNo.COMPILE_DEVICE, traceback.format_exc(limit=8))
    plan = mod.launch_plan
    obj = {
        "cuda": True,
        "source": mod.source,
        "cubin": compiled.cubin if compiled is not None else None,
        "arch": target.arch,
        "launches": plan.launches,
        "temporaries": plan.temporaries,
        "params": plan.params,
        "resources": ({k: v.registers for k, v in compiled.resources.items()} if compiled else {}),
    }
    return {
        "error_no": 0,
        "error_msg": "",
        "obj": obj,
        "entry": mod.entry_name,
        "params": [(b.name, list(b.shape), b.dtype) for b in mod.func.params],
        "time": time.perf_counter() - start,
    }


def _compare(got: np.ndarray, want: np.ndarray) -> bool:
    tol = 1e-3 if got.dtype in (np.float32, np.float16) else 1e-6
    if got.dtype.kind == "f":
        scale = max(1.0, float(np.abs(want).max(initial=0.0)))
        return bool(np.allclose(got, want, rtol=tol, atol=tol * scale, equal_nan=True))
    return bool(np.array_equal(got, want))


def run_cuda_candidate(state: Any, msg: dict) -> dict:
    """Check and time one CUDA build on the GPU (runs in the runner process)."""
    from ..codegen.cuda_compile import capped_memory, compile_cuda  # noqa: PLC0415
    from ..codegen.cuda_driver import CUDADriverError  # noqa: PLC0415
    from ..errors import CodegenError  # noqa: PLC0415
    from ..runtime.cuda_run import GPUExecutor, GPUKernelError, device_arch  # noqa: PLC0415
    from ..runtime.cuda_support import cuda_unavailable_reason  # noqa: PLC0415

    obj = msg["obj"]
    reason = cuda_unavailable_reason()
    if reason:
        return {
            "error_no": int(ErrorNo.RUNTIME_DEVICE),
            "error_msg": f"no GPU in the runner process ({reason}); use "
            "auto_scheduler.EmulatedRunner() on a machine without one",
        }
    try:
        arch = device_arch(0)
        cubin = obj["cubin"]
        if cubin is None or arch != obj["arch"]:  # a cubin loads only on its own arch
            with capped_memory():
                cubin = compile_cuda(obj["source"], arch, "auto").cubin
        executor = GPUExecutor(cubin, obj["launches"], obj["temporaries"], obj["params"])
    except (GPUKernelError, CUDADriverError) as err:  # a dead context: a fresh process
        return {"error_no": int(ErrorNo.RUNTIME_DEVICE), "error_msg": str(err),
                "restart_worker": True}  # fmt: skip
    except CodegenError as err:  # the recompile for this device's arch failed
        return {"error_no": int(ErrorNo.COMPILE_DEVICE), "error_msg": str(err)}
    try:
        arrays = [a.copy() for a in state.arrays]
        for k in state.outputs:
            arrays[k][...] = 0
        executor.run(arrays)
        if state.expected is not None:
            for k in state.outputs:
                if not _compare(arrays[k], state.expected[k]):
                    diff = np.abs(arrays[k].astype(float) - state.expected[k].astype(float))
                    return {
                        "error_no": int(ErrorNo.WRONG_ANSWER),
                        "error_msg": f"output {k} differs from the reference on the GPU "
                        f"(max abs err {float(np.nanmax(diff))})",
                    }
        costs = executor.time(arrays, msg["number"], msg["repeat"], msg["min_repeat_ms"])
    except GPUKernelError as err:
        return {
            "error_no": int(ErrorNo.RUNTIME_DEVICE),
            "error_msg": str(err),
            "restart_worker": True,
        }
    finally:
        executor.close()
    return {"error_no": 0, "costs": costs}
