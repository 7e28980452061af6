"""The few CUDA driver calls the GPU runtime makes, from pycuda or from cuda-python.

pycuda is the chosen binding (the ``gpu`` extra), but ``pip install pycuda`` compiles it
against a local CUDA toolkit and driver; cuda-python's ``cuda.bindings.driver`` ships as
wheels and is often installed already (the ``cuda`` extra uses its NVRTC). ``driver()``
returns the first of the two that imports and starts the driver, behind one interface:

- devices: ``device_count()``, ``compute_capability(i)``, ``device_name(i)``,
  ``attributes(i)`` (name -> value, names as in ``CU_DEVICE_ATTRIBUTE_<NAME>``);
- ``primary_context(i)``, ``push(ctx)``, ``pop()``;
- ``load(cubin, [(kernel name, number of pointer args)])`` -> (module, functions);
- ``alloc(nbytes)`` -> handle, ``pointer(handle)``, ``free(handle)``, ``upload(handle,
  array)``, ``download(array, handle)``;
- ``pack(pointers)`` -> a kernel's arguments, made once per set of buffers (a timing
  loop launches thousands of times), ``launch(fn, grid, block, packed)``,
  ``synchronize()``;
- ``event()``, ``record(ev)``, ``wait(ev)``, ``elapsed_ms(start, end)``,
  ``destroy_event(ev)``; ``unload(module)``.

Every failed call raises ``CUDADriverError`` carrying the driver's own message.
``ANSOR_LAB_CUDA_DRIVER=pycuda`` (or ``cuda-python``) allows that one alone.
"""

from __future__ import annotations

import ctypes
import functools
import os
from collections.abc import Sequence

import numpy as np

#: The bindings tried, in order.
BINDINGS = ("pycuda", "cuda-python")


class CUDADriverError(RuntimeError):
    """A CUDA driver call failed; the message is the driver's."""


class CUDADriverUnavailable(RuntimeError):
    """Neither binding can start a CUDA driver here; the message says why, for each."""


class PyCUDADriver:
    """The interface over ``pycuda.driver``."""

    name = "pycuda"

    def __init__(self) -> None:
        import pycuda.driver as drv  # noqa: PLC0415 - optional, heavy

        drv.init()
        self.drv = drv

    def _call(self, fn, *args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except self.drv.Error as err:
            raise CUDADriverError(str(err)) from None

    def device_count(self) -> int:
        return self._call(self.drv.Device.count)

    def compute_capability(self, index: int) -> tuple[int, int]:
        return self._call(lambda: self.drv.Device(index).compute_capability())

    def device_name(self, index: int) -> str:
        return self._call(lambda: self.drv.Device(index).name())

    def attributes(self, index: int) -> dict[str, int]:
        attrs = self._call(lambda: self.drv.Device(index).get_attributes())
        # pycuda's keys are enums printing as device_attribute.NAME
        return {str(k).rsplit(".", 1)[-1].upper(): int(v) for k, v in attrs.items()}

    def primary_context(self, index: int):
        return self._call(lambda: self.drv.Device(index).retain_primary_context())

    def push(self, ctx) -> None:
        self._call(ctx.push)

    def pop(self) -> None:
        self._call(self.drv.Context.pop)

    def load(self, cubin: bytes, kernels: Sequence[tuple[str, int]]):
        module = self._call(self.drv.module_from_buffer, cubin)
        functions = []
        for name, nargs in kernels:
            fn = self._call(module.get_function, name)
            fn.prepare("P" * nargs)
            functions.append(fn)
        return module, functions

    def alloc(self, nbytes: int):
        return self._call(self.drv.mem_alloc, max(1, nbytes))

    def pointer(self, handle) -> int:
        return int(handle)

    def free(self, handle) -> None:
        self._call(handle.free)

    def upload(self, handle, array: np.ndarray) -> None:
        self._call(self.drv.memcpy_htod, handle, np.ascontiguousarray(array))

    def download(self, array: np.ndarray, handle) -> None:
        self._call(self.drv.memcpy_dtoh, array, handle)

    def pack(self, pointers: Sequence[int]) -> tuple:
        return tuple(pointers)

    def launch(self, fn, grid, block, packed: tuple) -> None:
        self._call(fn.prepared_call, tuple(grid), tuple(block), *packed)

    def synchronize(self) -> None:
        self._call(self.drv.Context.synchronize)

    def event(self):
        return self._call(self.drv.Event)

    def record(self, event) -> None:
        self._call(event.record)

    def wait(self, event) -> None:
        self._call(event.synchronize)

    def elapsed_ms(self, start, end) -> float:
        return float(self._call(end.time_since, start))

    def destroy_event(self, event) -> None:
        """Nothing to do: pycuda frees an event with its last reference."""

    def unload(self, module) -> None:
        """Nothing to do: pycuda unloads a module with its last reference."""


class CudaPythonDriver:
    """The interface over cuda-python's ``cuda.bindings.driver`` (installs as wheels)."""

    name = "cuda-python"

    def __init__(self, bindings=None) -> None:
        if bindings is None:  # tests pass a stand-in for ``cuda.bindings.driver``
            from cuda.bindings import driver as bindings  # noqa: PLC0415 - optional, heavy
        self.cu = bindings
        self._call(bindings.cuInit, 0)

    def _call(self, fn, *args):
        # each binding returns (CUresult, values...); a driver that is not installed at
        # all raises instead (RECIPES: "is there a GPU?" must catch exceptions)
        out = fn(*args)
        err = out[0]
        if err != self.cu.CUresult.CUDA_SUCCESS:
            _, text = self.cu.cuGetErrorString(err)
            detail = text.decode() if isinstance(text, bytes) else str(text)
            raise CUDADriverError(f"{fn.__name__} failed: {err.name}: {detail}")
        return out[1] if len(out) == 2 else out[1:] or None

    def device_count(self) -> int:
        return int(self._call(self.cu.cuDeviceGetCount))

    def _device(self, index: int):
        return self._call(self.cu.cuDeviceGet, index)

    def _attribute(self, attr, index: int) -> int:
        return int(self._call(self.cu.cuDeviceGetAttribute, attr, self._device(index)))

    def compute_capability(self, index: int) -> tuple[int, int]:
        a = self.cu.CUdevice_attribute
        return (
            self._attribute(a.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, index),
            self._attribute(a.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, index),
        )

    def device_name(self, index: int) -> str:
        raw = self._call(self.cu.cuDeviceGetName, 256, self._device(index))
        return bytes(raw).split(b"\0", 1)[0].decode()

    def attributes(self, index: int) -> dict[str, int]:
        out = {}
        for attr in self.cu.CUdevice_attribute:
            name = attr.name.removeprefix("CU_DEVICE_ATTRIBUTE_")
            if name == "MAX":
                continue
            try:
                out[name] = self._attribute(attr, index)
            except CUDADriverError:  # an attribute this driver does not know
                continue
        return out

    def primary_context(self, index: int):
        return self._call(self.cu.cuDevicePrimaryCtxRetain, self._device(index))

    def push(self, ctx) -> None:
        self._call(self.cu.cuCtxPushCurrent, ctx)

    def pop(self) -> None:
        self._call(self.cu.cuCtxPopCurrent)

    def load(self, cubin: bytes, kernels: Sequence[tuple[str, int]]):
        module = self._call(self.cu.cuModuleLoadData, bytes(cubin))
        get = self.cu.cuModuleGetFunction
        functions = [self._call(get, module, name.encode()) for name, _ in kernels]
        return module, functions

    def alloc(self, nbytes: int):
        return self._call(self.cu.cuMemAlloc, max(1, nbytes))

    def pointer(self, handle) -> int:
        return int(handle)

    def free(self, handle) -> None:
        self._call(self.cu.cuMemFree, handle)

    def upload(self, handle, array: np.ndarray) -> None:
        host = np.ascontiguousarray(array)
        self._call(self.cu.cuMemcpyHtoD, handle, host.ctypes.data, host.nbytes)

    def download(self, array: np.ndarray, handle) -> None:
        if not array.flags.c_contiguous:
            raise CUDADriverError("download needs a C-contiguous host array")
        self._call(self.cu.cuMemcpyDtoH, array.ctypes.data, handle, array.nbytes)

    def pack(self, pointers: Sequence[int]) -> tuple:
        """kernelParams: an array of pointers, each to one argument's value (a device
        pointer); the ctypes arrays travel with the address so they stay alive."""
        n, width = len(pointers), ctypes.sizeof(ctypes.c_void_p)
        values = (ctypes.c_void_p * n)(*pointers)
        slots = (ctypes.c_void_p * n)(*(ctypes.addressof(values) + i * width for i in range(n)))
        return (ctypes.addressof(slots), values, slots)

    def launch(self, fn, grid, block, packed: tuple) -> None:
        gx, gy, gz = (tuple(grid) + (1, 1, 1))[:3]
        bx, by, bz = (tuple(block) + (1, 1, 1))[:3]
        self._call(self.cu.cuLaunchKernel, fn, gx, gy, gz, bx, by, bz, 0, 0, packed[0], 0)

    def synchronize(self) -> None:
        self._call(self.cu.cuCtxSynchronize)

    def event(self):
        return self._call(self.cu.cuEventCreate, 0)

    def record(self, event) -> None:
        self._call(self.cu.cuEventRecord, event, 0)

    def wait(self, event) -> None:
        self._call(self.cu.cuEventSynchronize, event)

    def elapsed_ms(self, start, end) -> float:
        return float(self._call(self.cu.cuEventElapsedTime, start, end))

    def destroy_event(self, event) -> None:
        self._call(self.cu.cuEventDestroy, event)

    def unload(self, module) -> None:
        self._call(self.cu.cuModuleUnload, module)


_IMPLEMENTATIONS = {"pycuda": PyCUDADriver, "cuda-python": CudaPythonDriver}


@functools.cache
def driver() -> PyCUDADriver | CudaPythonDriver:
    """The first binding that imports and starts the CUDA driver (cached per process).

    Raises CUDADriverUnavailable naming why each binding could not be used.
    """
    wanted = os.environ.get("ANSOR_LAB_CUDA_DRIVER", "").strip()
    if wanted and wanted not in _IMPLEMENTATIONS:
        raise CUDADriverUnavailable(
            f"ANSOR_LAB_CUDA_DRIVER={wanted!r}; write one of {', '.join(BINDINGS)} or unset it"
        )
    reasons = []
    for name in (wanted,) if wanted else BINDINGS:
        try:
            return _IMPLEMENTATIONS[name]()
        except Exception as err:  # not installed, no driver library, no device  # noqa: BLE001
            reasons.append(f"{name}: {type(err).__name__}: {err}")
    raise CUDADriverUnavailable("; ".join(reasons))
