"""Run and time a compiled CUDA program on a real GPU with pycuda (imported lazily).

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

from collections.abc import Callable, Sequence

import numpy as np

from ..errors import KernelRuntimeError


class GPUKernelError(KernelRuntimeError):
    """A CUDA error while running kernels (launch failure, illegal address...)."""

    context_lost = True


def device_arch(index: int = 0) -> str:
    """``sm_XX`` of CUDA device ``index`` (pycuda must be usable)."""
    import pycuda.driver as drv  # noqa: PLC0415 - optional, heavy

    drv.init()
    major, minor = drv.Device(index).compute_capability()
    return f"sm_{major}{minor}"


class GPUExecutor:
    """A loaded CUDA program: ``run(arrays)`` and ``time(arrays, ...)`` on device ``index``.

    ``cubin`` is compiled for the device's arch; ``launches`` and ``temporaries`` come from
    ``codegen.cuda_c.launch_plan``; ``params`` are the program's parameter names in order.
    """

    def __init__(
        self, cubin: bytes, launches: Sequence, temporaries: Sequence, params: Sequence,
        index: int = 0,
    ) -> None:  # fmt: skip
        import pycuda.driver as drv  # noqa: PLC0415 - optional, heavy

        self.drv = drv
        drv.init()
        self.device = drv.Device(index)
        self.context = self.device.retain_primary_context()
        self.params = tuple(params)
        self.temporaries = tuple(temporaries)
        self.launches = tuple(launches)
        with self._active():
            self.module = drv.module_from_buffer(cubin)
            self.functions = []
            for k in self.launches:
                fn = self.module.get_function(k.name)
                fn.prepare("P" * len(k.args))
                self.functions.append(fn)

    def _active(self):
        executor = self

        class _Ctx:
            def __enter__(self):
                executor.context.push()

            def __exit__(self, *exc):
                executor.drv.Context.pop()

        return _Ctx()

    def _error(self, err: Exception, doing: str) -> GPUKernelError:
        return GPUKernelError(
            f"CUDA error while {doing}: {err}. The GPU context is unusable after a kernel "
            "fault: check the schedule on the emulator (mod.emulate(...)) to find the "
            "out-of-bounds access or race"
        )

    def _upload(self, arrays: Sequence[np.ndarray]) -> dict:
        drv = self.drv
        buffers = {}
        for name, a in zip(self.params, arrays):
            buffers[name] = drv.mem_alloc(max(1, a.nbytes))
            drv.memcpy_htod(buffers[name], np.ascontiguousarray(a))
        for name, dtype, size in self.temporaries:
            buffers[name] = drv.mem_alloc(max(1, size * np.dtype(dtype).itemsize))
        return buffers

    def _launch_all(self, buffers: dict) -> None:
        for k, fn in zip(self.launches, self.functions):
            fn.prepared_call(k.grid, k.block, *(int(buffers[a]) for a in k.args))

    def run(self, arrays: Sequence[np.ndarray]) -> None:
        """Run the kernels once; every array is written back in place."""
        with self._active():
            try:
                buffers = self._upload(arrays)
                self._launch_all(buffers)
                self.drv.Context.synchronize()
                for name, a in zip(self.params, arrays):
                    host = np.empty_like(a)
                    self.drv.memcpy_dtoh(host, buffers[name])
                    a[...] = host
            except self.drv.Error as err:
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
        out = []
        with self._active():
            try:
                buffers = self._upload(arrays)
                self._launch_all(buffers)  # warm-up
                drv.Context.synchronize()
                start, end = drv.Event(), drv.Event()
                for _ in range(repeat):
                    n = number
                    while True:
                        start.record()
                        for _ in range(n):
                            self._launch_all(buffers)
                        end.record()
                        end.synchronize()
                        ms = end.time_since(start)
                        if ms >= min_repeat_ms or n >= 1 << 24:
                            break
                        # aim past min_repeat_ms with one more try, as TVM does
                        n = max(n * 2, int(n * min_repeat_ms / max(ms, 1e-3) * 1.2) + 1)
                    out.append(ms / 1e3 / n)
                    if on_repeat is not None:
                        on_repeat()
            except drv.Error as err:
                raise self._error(err, "timing the kernels") from None
        return out
