"""Whether a CUDA GPU can be used here (pycuda is optional and imported lazily)."""

from __future__ import annotations

import functools


@functools.cache
def cuda_available() -> bool:
    """True when pycuda imports and finds at least one device."""
    try:
        import pycuda.driver as drv  # noqa: PLC0415 - optional, heavy
    except Exception:  # not installed, or no driver library
        return False
    try:
        drv.init()
        return drv.Device.count() > 0
    except Exception:  # the driver raises rather than returning an error without a GPU
        return False
