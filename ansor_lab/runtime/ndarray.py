"""Devices and NDArrays with TVM's spelling (``tvm.cpu()``, ``tvm.nd.array(x, dev)``)."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

import numpy as np

from ..dsl import dtypes
from ..errors import RuntimeArgumentError
from .cuda_support import cuda_available, require_gpu


@dataclass(frozen=True)
class Device:
    """A device: ``kind`` "cpu" or "cuda" and its index."""

    kind: str = "cpu"
    index: int = 0

    @property
    def device_type(self) -> int:
        """TVM's numeric device type (1 = cpu, 2 = cuda)."""
        return 1 if self.kind == "cpu" else 2

    @property
    def device_id(self) -> int:
        """The index of the device."""
        return self.index

    @property
    def exist(self) -> bool:
        """Whether this device is present on the machine."""
        if self.kind == "cpu":
            return True

        return cuda_available()

    def sync(self) -> None:
        """Wait for work on the device to finish (CPU work is synchronous)."""

    def __str__(self) -> str:
        return f"{self.kind}({self.index})"


def cpu(index: int = 0) -> Device:
    """The host CPU."""
    return Device("cpu", index)


def cuda(index: int = 0) -> Device:
    """A CUDA GPU (``.exist`` says whether one is present)."""
    return Device("cuda", index)


gpu = cuda

#: TVM's device names (``tvm.device("llvm", 0)`` is the CPU, as in TVM)
_DEVICE_KINDS = {"cpu": "cpu", "llvm": "cpu", "c": "cpu", "cuda": "cuda", "gpu": "cuda"}


def device(dev_type: object, index: int = 0) -> Device:
    """A device by name (``"cpu"``, ``"llvm"``, ``"cuda"``, ``"gpu"``) or TVM's number (1, 2)."""
    if isinstance(dev_type, int) and not isinstance(dev_type, bool):
        kinds = {1: "cpu", 2: "cuda"}
        if dev_type not in kinds:
            raise RuntimeArgumentError(f"unknown device type {dev_type}: use 1 (cpu) or 2 (cuda)")
        return Device(kinds[dev_type], index)
    name = str(dev_type).split()[0] if str(dev_type).strip() else ""
    if name not in _DEVICE_KINDS:
        raise RuntimeArgumentError(
            f"unknown device {dev_type!r}: use tvm.device('cpu') or tvm.device('cuda')"
        )
    return Device(_DEVICE_KINDS[name], index)


#: Byte alignment of arrays allocated here (TVM's kAllocAlignment): numpy's own large
#: arrays start 16 bytes into a page, so every 64-byte vector load of a row would
#: straddle two cache lines (a tiled matmul runs ~15% slower on such inputs).
ALLOC_ALIGNMENT = 64


def aligned_empty(shape: object, dtype: str = "float32") -> np.ndarray:
    """An uninitialised numpy array whose data starts on an ALLOC_ALIGNMENT boundary."""
    if isinstance(shape, (int, np.integer)):  # nd.empty(4), as numpy and TVM allow
        shape = (shape,)
    try:
        shape = tuple(int(d) for d in shape)  # type: ignore[union-attr]
    except (TypeError, ValueError):
        raise RuntimeArgumentError(
            f"shape must be an int or a tuple of ints, got {shape!r}; e.g. nd.empty((4, 8))"
        ) from None
    if any(d < 0 for d in shape):
        # the byte count would go negative and reshape silently gives a (0,) array
        raise RuntimeArgumentError(
            f"shape {shape} has a negative dimension; every dimension is >= 0, e.g. "
            "nd.empty((4, 8))"
        )
    dt = np.dtype(dtypes.to_numpy(dtypes.canonical(dtype)))
    nbytes = math.prod(shape) * dt.itemsize  # Python ints: np.prod wraps around on int64
    gib = nbytes / 2**30
    if nbytes > _physical_memory():
        raise RuntimeArgumentError(
            f"an array of shape {shape} and dtype {dt.name} needs {gib:,.1f} GiB, more than "
            f"this machine's {_physical_memory() / 2**30:,.1f} GiB of memory; use a "
            "smaller shape"
        )
    try:
        raw = np.empty(nbytes + ALLOC_ALIGNMENT, np.uint8)
    except MemoryError:
        raise RuntimeArgumentError(
            f"cannot allocate {gib:,.2f} GiB for an array of shape {shape} and dtype "
            f"{dt.name}: not enough free memory; use a smaller shape"
        ) from None
    start = (-raw.ctypes.data) % ALLOC_ALIGNMENT
    return raw[start : start + nbytes].view(dt).reshape(shape)


def _physical_memory() -> float:
    """Bytes of memory this machine has (inf where the OS does not say)."""
    try:
        return float(os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (AttributeError, OSError, ValueError):
        return math.inf


def aligned_copy(a: np.ndarray) -> np.ndarray:
    """A copy of ``a`` (C order) in an aligned array."""
    out = aligned_empty(a.shape, a.dtype.name)
    out[...] = a
    return out


class NDArray:
    """A contiguous array on a device; on the CPU it wraps a numpy array without copying.

    ``nd.array`` and ``nd.empty`` allocate 64-byte aligned storage, as TVM does."""

    def __init__(self, data: np.ndarray, device: Device | None = None) -> None:
        # (np.ascontiguousarray would turn a 0-d array into a 1-d one)
        contiguous = isinstance(data, np.ndarray) and data.flags["C_CONTIGUOUS"]
        self._data = data if contiguous else np.ascontiguousarray(data)
        self.device = device or cpu()

    @property
    def shape(self) -> tuple:
        """The array's shape."""
        return self._data.shape

    @property
    def dtype(self) -> str:
        """The dtype name."""
        return self._data.dtype.name

    def numpy(self) -> np.ndarray:
        """A numpy copy of the contents."""
        return self._data.copy()

    asnumpy = numpy

    def copyfrom(self, source: object) -> NDArray:
        """Overwrite the contents from a numpy array or NDArray of the same shape."""
        src = source.numpy() if isinstance(source, NDArray) else np.asarray(source)
        if src.shape != self.shape:
            raise RuntimeArgumentError(f"copyfrom: shape {src.shape} != {self.shape}")
        self._data[...] = src
        return self

    def copyto(self, target: object) -> NDArray:
        """Copy into another NDArray, or to a new one on a device."""
        if isinstance(target, NDArray):
            return target.copyfrom(self)
        _check_device(target, "NDArray.copyto(...)")  # type: ignore[arg-type]
        return NDArray(self._data.copy(), target)  # type: ignore[arg-type]

    def __array__(self, dtype=None, copy=None):
        return self._data if dtype is None else self._data.astype(dtype)

    def __repr__(self) -> str:
        return f"<NDArray {self.shape} {self.dtype} @ {self.device}>\n{self._data!r}"


def _check_device(device: Device | None, what: str) -> None:
    """Arrays on a CUDA device need a GPU: without one this is the first step that fails.

    An NDArray on ``tvm.cuda()`` keeps its contents in host memory; a CUDA module copies
    them to the GPU for each call (``runtime.cuda_module``).
    """
    if device is not None and device.kind == "cuda":
        require_gpu(f"{what} on {device}")


def array(data: object, device: Device | None = None) -> NDArray:
    """An NDArray holding a copy of ``data`` (on ``tvm.cuda()`` only where a GPU is usable:
    else GPUUnavailableError, as TVM fails to allocate on a missing device)."""
    _check_device(device, "tvm.nd.array(...)")
    arr = np.asarray(data.numpy() if isinstance(data, NDArray) else data)
    if arr.dtype.name not in dtypes.SUPPORTED:
        raise RuntimeArgumentError(
            f"dtype {arr.dtype.name} is not supported; use one of {', '.join(dtypes.SUPPORTED)}"
        )
    return NDArray(aligned_copy(arr), device)


def empty(shape: object, dtype: str = "float32", device: Device | None = None) -> NDArray:
    """An uninitialised NDArray (on ``tvm.cuda()`` only where a GPU is usable)."""
    _check_device(device, "tvm.nd.empty(...)")
    return NDArray(aligned_empty(shape, dtype), device)


def as_numpy_view(x: object) -> np.ndarray:
    """The numpy array behind an argument (NDArray or numpy array), without copying."""
    if isinstance(x, NDArray):
        return x._data
    if isinstance(x, np.ndarray):
        return x
    raise RuntimeArgumentError(
        f"kernel arguments are numpy arrays or ansor_lab.nd arrays, got {type(x).__name__}"
    )
