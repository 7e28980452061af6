"""The exceptions of ansor_lab.

A leaf module (it imports nothing of ours) so that every layer may raise these; each
message says what went wrong and what to write instead.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence


class AnsorLabError(Exception):
    """Base class of every error ansor_lab raises on purpose."""


class DSLError(AnsorLabError, ValueError):
    """A tensor expression is malformed (wrong arity, dtype mismatch, bad index...)."""


class DTypeError(DSLError, TypeError):
    """Two operands or a value and its destination disagree on dtype."""


class IRError(AnsorLabError, ValueError):
    """A loop-IR program is malformed; raised by the verifier and IR constructors."""


class ScheduleError(AnsorLabError, ValueError):
    """An illegal schedule step; the schedule and its trace are left unchanged."""


class LoweringError(AnsorLabError, ValueError):
    """A schedule cannot be lowered to loop IR."""


class CodegenError(AnsorLabError, RuntimeError):
    """The backend could not generate or compile code for a program."""


class RuntimeArgumentError(AnsorLabError, ValueError):
    """A built function was called with arrays of the wrong shape, dtype or layout."""


class KernelRuntimeError(AnsorLabError, RuntimeError):
    """A compiled kernel reported a failure while running (e.g. out of memory)."""


class ForeignTargetError(KernelRuntimeError):
    """A kernel built for another CPU died (SIGILL, ...) when probed on this one."""


class KernelDivisionByZeroError(KernelRuntimeError, ZeroDivisionError):
    """A compiled kernel met an integer divisor that was 0 at run time."""


class KernelBoundsError(KernelRuntimeError, IndexError):
    """A kernel built with ``instrument_bound_checkers=True`` met an out-of-bounds access."""


class ReferenceEvaluationError(AnsorLabError, ValueError):
    """The numpy reference evaluator met an invalid access (e.g. an out-of-range read)."""


class TargetError(AnsorLabError, ValueError):
    """A target string or dict could not be understood, or names a CPU, feature or value
    LLVM or the hardware cannot have."""


class RecordError(AnsorLabError, ValueError):
    """A records-log line or the trace inside it is malformed (the message names the line
    and the field)."""


class IgnoredArgumentWarning(UserWarning):
    """A TVM keyword was given a value that would change TVM's result, and ansor_lab
    ignores it (said once per keyword per process)."""


class UnknownKeywordError(AnsorLabError, TypeError):
    """A public function was given a keyword it does not take (a misspelling?)."""

    @classmethod
    def of(cls, function: str, unknown: Iterable[str], accepted: Sequence[str]):
        """The error naming each unknown keyword, its closest accepted one, and all accepted."""
        parts = []
        for name in sorted(unknown):
            close = difflib.get_close_matches(name, accepted, n=1)
            parts.append(f"{name!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
        return cls(
            f"{function}() got unknown keyword{'s' if len(parts) > 1 else ''} "
            f"{', '.join(parts)}; it accepts {', '.join(accepted)}"
        )


class TaskError(AnsorLabError, ValueError):
    """A task or its tuning options are malformed."""


class LogFileError(AnsorLabError, OSError):
    """A records log path names no file, a directory, or a file that cannot be read."""


class CommandLineError(AnsorLabError, ValueError):
    """A wrong use of the ``ansor-lab`` command (a bad argument or input file): exit code 2."""


class RecordWarning(UserWarning):
    """A records-log line was skipped (corrupt, implausible, or for another setting); the
    message names the file and the line."""


class MeasureError(AnsorLabError, RuntimeError):
    """Measurement cannot be set up: a missing optional library, an unreachable Dask
    scheduler, or no worker whose hardware matches the task's target."""


class GPUScheduleError(ScheduleError):
    """A schedule a GPU cannot run as written (unbound stage, thread limits, shared memory)."""


class GPUUnavailableError(AnsorLabError, RuntimeError):
    """A step needs a CUDA GPU (and pycuda) and this machine has none usable; the message
    names what runs without one (``mod.emulate(...)``, ``auto_scheduler.EmulatedRunner()``)."""


class MixedTimingError(RecordError):
    """Records of one task mix estimated (emulated GPU) and measured costs, which are not
    comparable; the message says how many of each and how to keep one kind."""


class GPUEmulationError(KernelRuntimeError):
    """The GPU emulator met what a GPU would hit; says where: ``kernel`` (name), ``block``
    and ``thread`` ((x, y, z) tuples, None when it holds for every one), ``buffer`` (name
    or None) and ``index`` (the element's index tuple or None)."""

    def __init__(
        self,
        message: str,
        *,
        kernel: str | None = None,
        block: tuple | None = None,
        thread: tuple | None = None,
        buffer: str | None = None,
        index: tuple | None = None,
    ) -> None:
        super().__init__(message)
        self.kernel = kernel
        self.block = block
        self.thread = thread
        self.buffer = buffer
        self.index = index


class GPURaceError(GPUEmulationError):
    """Two threads of a block touched one shared-memory element between two barriers, at
    least one of them writing (a missing ``__syncthreads()`` or a racing write)."""


class GPUOutOfBoundsError(GPUEmulationError, IndexError):
    """A thread read or wrote outside a buffer (an illegal address on a GPU)."""


class GPUBarrierError(GPUEmulationError):
    """A barrier not reached by every thread of a block (a divergent ``__syncthreads()``)."""


class ScriptError(AnsorLabError, SyntaxError):
    """TVMScript the parser cannot read; the message points at the line and column."""

    def __init__(self, message: str, lineno: int | None = None, col: int | None = None) -> None:
        super().__init__(message)
        self.msg = message
        self.lineno = lineno
        self.offset = col

    def __str__(self) -> str:
        return self.msg


class OutOfScopeError(AnsorLabError, NotImplementedError):
    """A TVM name ansor_lab does not provide (relax, relay, tensorize...): says what to use."""


class MissingNameError(OutOfScopeError, AttributeError):
    """A TVM public name (``tir.call_packed``, ``te.decl_tensor_intrin``...) ansor_lab does
    not provide. An AttributeError too, so ``hasattr(tir, name)`` stays False; the message
    opens as Python's own, then says why and what to write instead."""


class MissingOperatorError(MissingNameError):
    """A TVM ``topi`` operator ansor_lab does not provide. An AttributeError too, so that
    ``hasattr(topi.nn, name)`` stays False; the message names what to write instead."""


class RegistryError(AnsorLabError, ValueError):
    """``tvm.get_global_func`` found no function of that name, or ``tvm.register_func``
    would replace one without ``override=True``."""


class UnusedCallbackWarning(UserWarning):
    """A TVM callback was registered (``tvm.register_func("tvm_callback_...")``) that
    ansor_lab never calls; the message says what it does instead."""


class DiscardedResultWarning(UserWarning):
    """A computed buffer is not an argument: its work is done, its values are thrown away."""


class GPUUninitializedError(GPUEmulationError):
    """A thread read a shared-memory element no thread of its block had written (a GPU
    reads garbage there: a cooperative fetch that covers less than its readers use)."""


class BandwidthError(AnsorLabError, ValueError):
    """A bandwidth measurement was asked for with arguments it cannot use."""
