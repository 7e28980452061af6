"""Run and time a compiled CUDA program on a real GPU (pycuda or cuda-python, lazily).

``GPUExecutor`` loads a cubin compiled for the device's own ``sm_XX`` into the device's
primary context, allocates the parameters and the global temporaries of the launch plan,
copies the inputs in, launches the kernels in order and copies every parameter back.
``time`` times the kernel launches alone with CUDA events (``number`` back-to-back runs
per repeat, raised until a repeat lasts ``min_repeat_ms``), the data staying on the GPU.

A fault in a kernel (an illegal address, a launch failure) leaves the CUDA context
unusable: it is raised as ``GPUKernelError`` with ``context_lost = True``, and an
isolated measurement worker is replaced after it (``measure.cuda_worker``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence

import numpy as np

from ..codegen.cuda_driver import CUDADriverError, driver
from ..errors import KernelRuntimeError


class GPUKernelError(KernelRuntimeError):
    """A CUDA error while running kernels (launch failure, illegal address...)."""

    context_lost = True


def device_arch(index: int = 0) -> str:
    """``sm_XX`` of CUDA device ``index`` (a CUDA binding must be usable)."""
    major, minor = driver().compute_capability(index)
    return f"sm_{major}{minor}"


class GPUExecutor:
    """A loaded CUDA program: ``run(arrays)`` and ``time(arrays, ...)`` on device ``index``.

    ``cubin`` is compiled for the device's arch; ``launches`` and ``temporaries`` come from
    ``codegen.cuda_c.launch_plan``; ``params`` are the program's parameter names in order.
    The driver calls go through ``codegen.cuda_driver`` (pycuda, else cuda-python).
    """

    def __init__(
        self, cubin: bytes, launches: Sequence, temporaries: Sequence, params: Sequence,
        index: int = 0,
    ) -> None:  # fmt: skip
        self.drv = driver()
        self.context = self.drv.primary_context(index)
        self.params = tuple(params)
        self.temporaries = tuple(temporaries)
        self.launches = tuple(launches)
        with self._active():
            try:
                kernels = [(k.name, len(k.args)) for k in self.launches]
                self.module, self.functions = self.drv.load(cubin, kernels)
            except CUDADriverError as err:
                raise self._error(err, "loading the cubin") from None

    def close(self) -> None:
        """Unload the module (a long tune loads one per candidate in its runner)."""
        module, self.module = getattr(self, "module", None), None
        if module is not None:
            with contextlib.suppress(Exception), self._active():  # a faulted context
                self.drv.unload(module)

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001
            # at interpreter exit this module's globals may be gone already (contextlib
            # is None: "Exception ignored in __del__" on stderr); the process's end
            # releases the module with the context
            return

    @contextlib.contextmanager
    def _active(self):
        self.drv.push(self.context)
        try:
            yield
        finally:
            self.drv.pop()

    def _error(self, err: Exception, doing: str) -> GPUKernelError:
        return GPUKernelError(
            f"CUDA error while {doing} ({self.drv.name}): {err}. The GPU context is unusable "
            "after a kernel fault: check the schedule on the emulator (mod.emulate(...)) to "
            "find the out-of-bounds access or race"
        )

    @contextlib.contextmanager
    def _buffers(self, arrays: Sequence[np.ndarray]):
        """Device copies of ``arrays`` and the temporaries, freed on the way out."""
        drv = self.drv
        handles = {}
        try:
            for name, a in zip(self.params, arrays):
                handles[name] = drv.alloc(a.nbytes)
                drv.upload(handles[name], a)
            for name, dtype, size in self.temporaries:
                handles[name] = drv.alloc(size * np.dtype(dtype).itemsize)
            yield handles
        finally:
            for h in handles.values():
                with contextlib.suppress(CUDADriverError):  # a faulted context cannot free
                    drv.free(h)

    def _packed(self, handles: dict) -> list:
        """Each launch's arguments, packed once for the buffers of one run or timing."""
        drv = self.drv
        return [drv.pack([drv.pointer(handles[a]) for a in k.args]) for k in self.launches]

    def _launch_all(self, packed: list) -> None:
        launch = self.drv.launch
        for k, fn, args in zip(self.launches, self.functions, packed):
            launch(fn, k.grid, k.block, args)

    def run(self, arrays: Sequence[np.ndarray]) -> None:
        """Run the kernels once; every array is written back in place."""
        with self._active():
            try:
                with self._buffers(arrays) as handles:
                    self._launch_all(self._packed(handles))
                    self.drv.synchronize()
                    for name, a in zip(self.params, arrays):
                        host = np.empty_like(a, order="C")
                        self.drv.download(host, handles[name])
                        a[...] = host
            except CUDADriverError as err:
                raise self._error(err, "running the kernels") from None

    def time(
        self,
        arrays: Sequence[np.ndarray],
        number: int = 10,
        repeat: int = 1,
        min_repeat_ms: float = 0,
        on_repeat: Callable | None = None,
    ) -> list[float]:
        """Seconds per run of the whole launch sequence, one value per repeat."""
        drv = self.drv
        out: list[float] = []
        events: list = []
        with self._active():
            try:
                with self._buffers(arrays) as handles:
                    packed = self._packed(handles)
                    self._launch_all(packed)  # warm-up
                    drv.synchronize()
                    start, end = drv.event(), drv.event()
                    events.extend((start, end))
                    for _ in range(repeat):
                        n = number
                        while True:
                            drv.record(start)
                            for _ in range(n):
                                self._launch_all(packed)
                            drv.record(end)
                            drv.wait(end)
                            ms = drv.elapsed_ms(start, end)
                            if ms >= min_repeat_ms or n >= 1 << 24:
                                break
                            # aim past min_repeat_ms with one more try, as TVM does
                            n = max(n * 2, int(n * min_repeat_ms / max(ms, 1e-3) * 1.2) + 1)
                        out.append(ms / 1e3 / n)
                        if on_repeat is not None:
                            on_repeat()
            except CUDADriverError as err:
                raise self._error(err, "timing the kernels") from None
            finally:
                for ev in events:
                    with contextlib.suppress(CUDADriverError):
                        drv.destroy_event(ev)
        return out
