"""Whether a CUDA GPU can be used here (pycuda or cuda-python, optional, imported lazily).

``ANSOR_LAB_NO_GPU=1`` makes this machine count as having no GPU (to try the GPU-free
path, and the errors it gives, on a machine that has one).
"""

from __future__ import annotations

import functools
import os

from ..errors import GPUUnavailableError

#: What runs without a GPU, named by every "no GPU" error.
NO_GPU_ADVICE = (
    "Without a GPU: mod.get_source('cuda') and mod.compiled (NVRTC or nvcc) work anywhere; "
    "check results on the GPU emulator with mod.emulate(a, b, c) (numpy arrays, outputs "
    "written in place); tune with runner=auto_scheduler.EmulatedRunner() (checked on the "
    "emulator, estimated times). With an NVIDIA GPU: pip install pycuda (or cuda-python)."
)


@functools.cache
def cuda_unavailable_reason() -> str:
    """Why no CUDA GPU can be used here ("" when one can)."""
    if os.environ.get("ANSOR_LAB_NO_GPU", "") not in ("", "0"):
        return "ANSOR_LAB_NO_GPU is set"
    from ..codegen.cuda_driver import CUDADriverError, CUDADriverUnavailable, driver  # noqa: PLC0415

    try:
        if driver().device_count() == 0:
            return "the CUDA driver sees no device"
    except CUDADriverUnavailable as err:
        return f"no CUDA binding starts a driver ({err})"
    except CUDADriverError as err:
        return f"the CUDA driver did not start: {err}"
    return ""


def cuda_available() -> bool:
    """True when a CUDA binding (pycuda, else cuda-python) finds at least one device."""
    return not cuda_unavailable_reason()


def require_gpu(what: str) -> None:
    """Raise GPUUnavailableError (before any work) when ``what`` cannot run here."""
    reason = cuda_unavailable_reason()
    if reason:
        raise GPUUnavailableError(
            f"{what} needs a CUDA GPU, and none is usable here ({reason}). {NO_GPU_ADVICE}"
        )
