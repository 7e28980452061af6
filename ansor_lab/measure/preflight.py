"""Nothing is recorded under a target it was not built and run for.

Three checks, from the earliest to the last line of defence:

1. ``check_runner(task, runner)`` before a search does any work (``task.tune``, the task
   scheduler): a CUDA task needs a runner that times on a GPU — ``LocalRunner`` /
   ``LocalRPCMeasureContext().runner`` with pycuda and a GPU here, else GPUUnavailableError
   naming ``auto_scheduler.EmulatedRunner()`` — or that estimates GPU time
   (``EmulatedRunner``); a CPU task refuses the emulated runner; a runner whose
   ``device_kinds`` (default: CPU only) lack the target's is refused.
2. ``require_gpu(who)`` where a GPU must exist now (LocalRunner.setup for a CUDA task).
3. ``wrong_device(build, reply, target)`` on every result: the build must be for the
   task's target and the reply must come from that kind of device ("device" in the reply,
   "cpu" when absent); otherwise the result becomes an error record, never a cost.
"""

from __future__ import annotations

from typing import Any

from ..errors import MeasureError, TaskError

EMULATED_HINT = (
    "Without a GPU, tune with runner=auto_scheduler.EmulatedRunner(): it checks each "
    "candidate on the GPU emulator and records an estimated time (marked as estimated)."
)


def require_gpu(who: str) -> None:
    """Raise GPUUnavailableError unless pycuda sees a CUDA GPU here (naming the emulator)."""
    from ..runtime import cuda_support  # noqa: PLC0415 - its pycuda import is lazy

    cuda_support.require_gpu(who)


def runner_device_kinds(runner: Any) -> tuple:
    """The target kinds a runner can time ("llvm", "cuda"); CPU only unless it says."""
    return tuple(getattr(runner, "device_kinds", ("llvm",)))


def check_runner(task: Any, runner: Any) -> None:
    """Refuse, before any search work, a runner that cannot time this task's target."""
    kind = task.target.kind
    name = type(runner).__name__
    if getattr(runner, "timing", "measured") == "estimated":
        if kind != "cuda":
            raise TaskError(
                f"{name} estimates CUDA kernels on the GPU emulator; this task targets "
                f"{task.target}. Measure CPU programs with the default runner (LocalRunner)."
            )
        return
    if kind == "cuda":
        if getattr(runner, "times_gpu", False) or "cuda" in runner_device_kinds(runner):
            require_gpu(f"task.tune with {name}")
            return
        raise MeasureError(
            f"{name} times CPU programs; this task targets {task.target}. Use "
            f"LocalRunner / LocalRPCMeasureContext().runner on a GPU machine. {EMULATED_HINT}"
        )
    if kind not in runner_device_kinds(runner):
        raise MeasureError(f"{name} cannot time programs for {task.target}")


def wrong_device(build: Any, reply: dict, target: Any) -> str:
    """Why a successful reply must not be recorded for ``target`` ("" when it may)."""
    built = getattr(build, "target", "") or ""
    kind = target.kind
    if built and built.split()[:1] != [kind]:
        return f"not recorded: the candidate was built for {built!r}, the task targets {target}"
    device = reply.get("device", "llvm")
    device = "llvm" if device == "cpu" else device
    if device != kind:
        return (
            f"not recorded: the runner timed it on a {device!r} device, the task targets "
            f"{target}. {EMULATED_HINT if kind == 'cuda' else ''}"
        ).strip()
    return ""
