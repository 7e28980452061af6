"""Whether a CUDA GPU can be used here (pycuda is optional and imported lazily).

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
    "emulator, estimated times). With an NVIDIA GPU: pip install pycuda."
)


@functools.cache
def cuda_unavailable_reason() -> str:
    """Why no CUDA GPU can be used here ("" when one can)."""
    if os.environ.get("ANSOR_LAB_NO_GPU", "") not in ("", "0"):
        return "ANSOR_LAB_NO_GPU is set"
    try:
        import pycuda.driver as drv  # noqa: PLC0415 - optional, heavy
    except Exception as err:  # not installed, or no driver library  # noqa: BLE001
        return f"pycuda cannot be imported: {type(err).__name__}: {err}"
    try:
        drv.init()
        if drv.Device.count() == 0:
            return "the CUDA driver sees no device"
    except Exception as err:  # the driver raises rather than returning an error  # noqa: BLE001
        return f"the CUDA driver did not start: {err}"
    return ""


def cuda_available() -> bool:
    """True when pycuda imports and finds at least one device."""
    return not cuda_unavailable_reason()


def require_gpu(what: str) -> None:
    """Raise GPUUnavailableError (before any work) when ``what`` cannot run here."""
    reason = cuda_unavailable_reason()
    if reason:
        raise GPUUnavailableError(
            f"{what} needs a CUDA GPU, and none is usable here ({reason}). {NO_GPU_ADVICE}"
        )
