"""The driver interface of the GPU runtime (``codegen.cuda_driver``) without a GPU: the
cuda-python calls it makes (through a stand-in for ``cuda.bindings.driver``), how a
failed call reads, and which binding is chosen. On a GPU the same interface runs the
kernels of tests/codegen/test_cuda_on_gpu.py."""

from __future__ import annotations

import ctypes
import enum
import types

import numpy as np
import pytest

import ansor_lab as tvm
from ansor_lab.codegen import cuda_driver
from ansor_lab.codegen.cuda_driver import (
    CUDADriverError,
    CUDADriverUnavailable,
    CudaPythonDriver,
)
from ansor_lab.errors import TargetError
from ansor_lab.runtime import cuda_support


class CUresult(enum.IntEnum):
    CUDA_SUCCESS = 0
    CUDA_ERROR_INVALID_VALUE = 1
    CUDA_ERROR_ILLEGAL_ADDRESS = 700


class CUattr(enum.IntEnum):
    CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76
    CU_DEVICE_ATTRIBUTE_UNKNOWN_TO_THIS_DRIVER = 999


def fake_bindings(memory: dict, log: list):
    """A stand-in for cuda.bindings.driver: one device (sm_90), host-side 'device memory'."""
    ok = CUresult.CUDA_SUCCESS
    attrs = {1: 1024, 75: 9, 76: 0}

    def named(fn):
        def call(*args):
            log.append(fn.__name__)
            return fn(*args)

        call.__name__ = fn.__name__
        return call

    def cuInit(flags):
        return (ok,)

    def cuDeviceGet(i):
        return (ok, 100 + i) if i == 0 else (CUresult.CUDA_ERROR_INVALID_VALUE, None)

    def cuDeviceGetAttribute(attr, dev):
        if int(attr) not in attrs:
            return (CUresult.CUDA_ERROR_INVALID_VALUE, None)
        return (ok, attrs[int(attr)])

    def cuDeviceGetName(n, dev):
        return (ok, b"Fake H200\0\0\0")

    def cuMemAlloc(nbytes):
        ptr = 0x1000 * (len(memory) + 1)
        memory[ptr] = bytearray(nbytes)
        return (ok, ptr)

    def cuMemcpyHtoD(dst, src, nbytes):
        memory[dst][:nbytes] = ctypes.string_at(src, nbytes)
        return (ok,)

    def cuMemcpyDtoH(dst, src, nbytes):
        ctypes.memmove(dst, bytes(memory[src][:nbytes]), nbytes)
        return (ok,)

    def cuMemFree(ptr):
        del memory[ptr]
        return (ok,)

    def cuLaunchKernel(fn, gx, gy, gz, bx, by, bz, shared, stream, params, extra):
        # read the kernel's arguments as the driver does: params -> N pointers -> values
        n = fn["nargs"]
        slots = (ctypes.c_void_p * n).from_address(params)
        args = [ctypes.c_void_p.from_address(slots[i]).value for i in range(n)]
        log.append(("launch", fn["name"], (gx, gy, gz), (bx, by, bz), shared, args, extra))
        if fn["name"] == "faulty":
            return (CUresult.CUDA_ERROR_ILLEGAL_ADDRESS,)
        return (ok,)

    def cuGetErrorString(err):
        return (ok, {700: b"an illegal memory access was encountered"}.get(int(err), b"?"))

    def cuModuleLoadData(image):
        assert image[:4] == b"\x7fELF"
        return (ok, "module")

    def cuModuleGetFunction(module, name):
        return (ok, {"name": name.decode(), "nargs": 2})

    def cuModuleUnload(module):
        return (ok,)

    events: dict = {}

    def cuEventCreate(flags):
        events[len(events)] = 0.0
        return (ok, len(events) - 1)

    def cuEventRecord(ev, stream):
        # a fake clock: 0.5 ms per launch since the last record
        events[ev] = sum(1 for e in log if isinstance(e, tuple)) * 0.5
        return (ok,)

    def cuEventSynchronize(ev):
        return (ok,)

    def cuEventElapsedTime(start, end):
        return (ok, events[end] - events[start])

    def cuEventDestroy(ev):
        del events[ev]
        return (ok,)

    return types.SimpleNamespace(
        CUresult=CUresult,
        CUdevice_attribute=CUattr,
        **{
            f.__name__: named(f)
            for f in (
                cuInit, cuDeviceGet, cuDeviceGetAttribute, cuDeviceGetName, cuMemAlloc,
                cuMemcpyHtoD, cuMemcpyDtoH, cuMemFree, cuLaunchKernel, cuGetErrorString,
                cuModuleLoadData, cuModuleGetFunction, cuModuleUnload, cuEventCreate,
                cuEventRecord, cuEventSynchronize, cuEventElapsedTime, cuEventDestroy,
            )
        },
    )  # fmt: skip


@pytest.fixture
def fake():
    memory: dict = {}
    log: list = []
    return CudaPythonDriver(fake_bindings(memory, log)), memory, log


def test_device_queries(fake):
    drv, _, _ = fake
    assert drv.compute_capability(0) == (9, 0)
    assert drv.device_name(0) == "Fake H200"
    # attributes by name without the CU_DEVICE_ATTRIBUTE_ prefix; unknown ones are skipped
    assert drv.attributes(0) == {
        "MAX_THREADS_PER_BLOCK": 1024,
        "COMPUTE_CAPABILITY_MAJOR": 9,
        "COMPUTE_CAPABILITY_MINOR": 0,
    }


def test_memory_round_trip(fake):
    drv, memory, _ = fake
    a = np.arange(12, dtype="float32").reshape(3, 4)
    h = drv.alloc(a.nbytes)
    drv.upload(h, a.T)  # a non-contiguous view is copied contiguous first
    back = np.empty((4, 3), "float32")
    drv.download(back, h)
    np.testing.assert_array_equal(back, a.T)
    with pytest.raises(CUDADriverError, match="C-contiguous"):
        drv.download(np.empty((3, 4), "float32").T, h)
    drv.free(h)
    assert memory == {}


def test_launch_passes_each_pointer_by_address(fake):
    drv, _, log = fake
    _, (fn,) = drv.load(b"\x7fELF....", [("main_kernel0", 2)])
    drv.launch(fn, (7, 2), (64,), drv.pack([0xDEAD000, 0xBEEF000]))
    (launch,) = [e for e in log if isinstance(e, tuple)]
    assert launch == ("launch", "main_kernel0", (7, 2, 1), (64, 1, 1), 0, [0xDEAD000, 0xBEEF000], 0)


def test_a_failed_call_carries_the_drivers_message(fake):
    drv, _, _ = fake
    bad = {"name": "faulty", "nargs": 2}
    with pytest.raises(CUDADriverError, match="cuLaunchKernel failed: "
                       "CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access"):  # fmt: skip
        drv.launch(bad, (1,), (1,), drv.pack([0, 0]))
    with pytest.raises(CUDADriverError, match="cuDeviceGet failed: CUDA_ERROR_INVALID_VALUE"):
        drv.compute_capability(3)


def test_the_executor_runs_through_the_interface(fake, monkeypatch):
    """GPUExecutor's upload / launch / download / free sequence, on the stand-in."""
    from ansor_lab.runtime import cuda_run  # noqa: PLC0415

    drv, memory, log = fake
    drv.primary_context = lambda index: "ctx"
    drv.push = lambda ctx: log.append("push")
    drv.pop = lambda: log.append("pop")
    drv.synchronize = lambda: log.append("sync")
    monkeypatch.setattr(cuda_run, "driver", lambda: drv)
    launch = types.SimpleNamespace(name="k0", grid=(4, 1, 1), block=(32, 1, 1), args=("A", "T"))
    ex = cuda_run.GPUExecutor(b"\x7fELF", [launch], [("T", "float32", 8)], ["A"])
    a = np.arange(5, dtype="float32")
    ex.run([a])
    np.testing.assert_array_equal(a, np.arange(5, dtype="float32"))
    (entry,) = [e for e in log if isinstance(e, tuple)]
    assert entry[1:4] == ("k0", (4, 1, 1), (32, 1, 1)) and len(set(entry[5])) == 2
    assert memory == {}  # the parameter and the temporary were freed
    assert log.count("push") == log.count("pop") == 2  # load, run
    ex.close()  # the runner unloads each candidate's module
    assert log[-3:] == ["push", "cuModuleUnload", "pop"] and ex.module is None


def test_choosing_a_binding(monkeypatch):
    monkeypatch.setenv("ANSOR_LAB_CUDA_DRIVER", "cupy")
    cuda_driver.driver.cache_clear()
    try:
        with pytest.raises(CUDADriverUnavailable, match="write one of pycuda, cuda-python"):
            cuda_driver.driver()
    finally:
        monkeypatch.delenv("ANSOR_LAB_CUDA_DRIVER")
        cuda_driver.driver.cache_clear()


@pytest.mark.skipif(cuda_support.cuda_available(), reason="this machine has a usable GPU")
def test_without_a_gpu_each_binding_says_why():
    with pytest.raises(CUDADriverUnavailable) as info:
        cuda_driver.driver()
    assert "pycuda: " in str(info.value) and "cuda-python: " in str(info.value)
    assert "no CUDA binding starts a driver" in cuda_support.cuda_unavailable_reason()
    with pytest.raises(TargetError, match="needs pycuda or cuda-python and an NVIDIA GPU"):
        tvm.target.target_from_device(0)


def test_the_executor_times_launches_with_events(fake, monkeypatch):
    """time(): one warm-up, then ``number`` launches per repeat between two events, raised
    until a repeat lasts ``min_repeat_ms``; the arguments packed once; events freed."""
    from ansor_lab.runtime import cuda_run  # noqa: PLC0415

    drv, memory, log = fake
    drv.primary_context = lambda index: "ctx"
    drv.push = drv.pop = drv.synchronize = lambda *a: None
    packs = []
    pack = drv.pack
    drv.pack = lambda pointers: packs.append(pointers) or pack(pointers)
    monkeypatch.setattr(cuda_run, "driver", lambda: drv)
    launch = types.SimpleNamespace(name="k0", grid=(4, 1, 1), block=(32, 1, 1), args=("A", "B"))
    ex = cuda_run.GPUExecutor(b"\x7fELF", [launch], [], ["A", "B"])
    a, b = np.zeros(4, "float32"), np.zeros(4, "float32")
    costs = ex.time([a, b], number=3, repeat=2)
    assert costs == [0.5e-3, 0.5e-3]  # 1.5 ms over 3 launches, in seconds per launch
    assert len([e for e in log if isinstance(e, tuple)]) == 1 + 2 * 3 and len(packs) == 1
    log.clear()
    # 0.5 ms a launch, at least 4 ms a repeat: 2 launches, then 2 * 4 / 1 * 1.2 + 1 = 10
    assert ex.time([a, b], number=2, repeat=1, min_repeat_ms=4) == [0.5e-3]
    assert len([e for e in log if isinstance(e, tuple)]) == 1 + 2 + 10
    assert memory == {} and "cuEventDestroy" in log
