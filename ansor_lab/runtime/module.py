"""Built modules: callable on numpy arrays, timed by ``time_evaluator``."""

from __future__ import annotations

import ctypes
import statistics
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..codegen import failures
from ..codegen.cpu_match import foreign_reason
from ..codegen.llvm import CompiledLLVM
from ..codegen.target import Target
from ..codegen.vector_form import vector_view
from ..errors import (
    IgnoredArgumentWarning,
    RuntimeArgumentError,
    UnknownKeywordError,
)
from ..ir import nodes as N
from ..ir.visitor import walk_stmts
from . import foreign as _foreign
from .data_address import data_address
from .fast_call import NOT_FAST, fast_call
from .ndarray import Device, as_numpy_view, cpu


@dataclass(frozen=True)
class BenchmarkResult:
    """Times of each repeat in seconds (each the mean over ``number`` runs)."""

    results: tuple

    @property
    def mean(self) -> float:
        """Mean over repeats."""
        return statistics.fmean(self.results)

    @property
    def median(self) -> float:
        """Median over repeats."""
        return statistics.median(self.results)

    @property
    def min(self) -> float:
        """Fastest repeat."""
        return min(self.results)

    @property
    def max(self) -> float:
        """Slowest repeat."""
        return max(self.results)

    @property
    def std(self) -> float:
        """Standard deviation over repeats (0 for one repeat)."""
        return statistics.pstdev(self.results) if len(self.results) > 1 else 0.0

    def __str__(self) -> str:
        return (
            f"Execution time summary:\n mean (ms)   median (ms)    max (ms)     min (ms)     "
            f"std (ms)\n {self.mean * 1e3:10.4f}  {self.median * 1e3:10.4f}  "
            f"{self.max * 1e3:10.4f}  {self.min * 1e3:10.4f}  {self.std * 1e3:10.4f}"
        )


ProfileResult = BenchmarkResult


def written_params(func: N.PrimFunc) -> set:
    """Parameters the function stores into (its outputs)."""
    params = set(func.params)
    return {
        s.buffer
        for s in walk_stmts(func.body)
        if isinstance(s, N.BufferStore) and s.buffer in params
    }


def _c_layout(shape: tuple, dtype: np.dtype) -> tuple:
    """``(strides, nbytes)`` numpy gives a C-contiguous array of ``shape`` ((None, None)
    where the shape is not all ints)."""
    if not all(isinstance(d, int) for d in shape):
        return None, None
    strides, step = [], dtype.itemsize
    for d in reversed(shape):
        strides.append(step)
        step *= d
    return tuple(reversed(strides)), step


class Module:
    """A compiled PrimFunc. Call it with numpy arrays (or NDArrays), outputs included."""

    def __init__(self, func: N.PrimFunc, target: Target, compiled: CompiledLLVM) -> None:
        self.func = func
        self.target = target
        self.compiled = compiled
        self.entry_name = func.name
        self.type_key = "llvm"
        self.imported_modules: list = []
        self._outputs = written_params(func)
        # (name, shape, dtype, written, C strides, bytes) per parameter, and the pairs
        # that must not overlap
        self._specs = [
            (b.name, shape, dtype, b in self._outputs, *_c_layout(shape, dtype))
            for b in func.params
            for shape, dtype in [(tuple(b.shape), np.dtype(b.dtype))]
        ]
        self._pairs = [
            (i, j)
            for i in range(len(self._specs))
            for j in range(i + 1, len(self._specs))
            if self._specs[i][3] or self._specs[j][3]
        ]
        #: why this machine may lack what the code needs (None: built for this CPU);
        #: a foreign module is probed in a child process on its first call
        self.foreign = foreign_reason(target) if target.kind == "llvm" else None
        self._probed = self.foreign is None
        n = len(func.params)
        self._entry = ctypes.CFUNCTYPE(ctypes.c_int32, *([ctypes.c_void_p] * n))(
            compiled.entry_address
        )
        self._repeat = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_int64, *([ctypes.c_void_p] * n))(
            compiled.repeat_address
        )
        self._fast: Callable | None | bool = False  # made on the first call (None: no fast path)

    # -- calling --------------------------------------------------------------------
    def _pointers(self, args: Sequence[object]) -> list[int]:
        # the checks run on every call, so the common case costs little: a plain array of
        # the parameter's shape, dtype and C strides (compared as tuples, computed once)
        # needs no other test; anything else takes ``_checked`` (flags, messages)
        specs = self._specs
        if len(args) != len(specs):
            names = ", ".join(b.name for b in self.func.params)
            raise RuntimeArgumentError(
                f"{self.entry_name} takes {len(specs)} arrays ({names}), got {len(args)}"
            )
        ptrs = []
        for a, spec in zip(args, specs):
            arr = a if type(a) is np.ndarray else as_numpy_view(a)
            if (
                arr.shape != spec[1]
                or arr.strides != spec[4]
                or arr.dtype != spec[2]
                or (spec[3] and not arr.flags.writeable)
            ):
                self._checked(arr, spec)  # raises, or passes a contiguous array
            ptrs.append(data_address(arr))
        # C-contiguous arrays share memory exactly when their byte ranges overlap (their
        # sizes are the parameters': shape and dtype were checked)
        for i, j in self._pairs:
            lo, hi = ptrs[i], ptrs[j]
            if lo < hi + specs[j][5] and hi < lo + specs[i][5]:
                raise RuntimeArgumentError(
                    f"arguments {specs[i][0]!r} and {specs[j][0]!r} share memory; "
                    "the kernel assumes distinct buffers, pass separate arrays"
                )
        return ptrs

    @staticmethod
    def _checked(arr: np.ndarray, spec: tuple) -> None:
        """Raise the error ``arr`` earns as the parameter ``spec``; return if it is fine
        (C-contiguous with other strides: a dimension of extent 1 may have any)."""
        name, shape, dtype, written = spec[:4]
        if arr.shape != shape:
            raise RuntimeArgumentError(f"argument {name!r} has shape {arr.shape}, expected {shape}")
        if arr.dtype != dtype:
            if arr.dtype.newbyteorder("=") == dtype:
                # the same type in the other byte order: its dtype.name reads the same
                # (refused, not converted, as a non-contiguous array is: no hidden copy)
                order = "big-endian" if arr.dtype.byteorder == ">" else "little-endian"
                raise RuntimeArgumentError(
                    f"argument {name!r} is {order} ({arr.dtype.str!r}), not in this "
                    f"machine's byte order, which the kernel reads; pass "
                    f"a.astype({dtype.name!r}) or np.ascontiguousarray(a, "
                    f"dtype={dtype.name!r})"
                    + (" and copy the result back after the call" if written else "")
                )
            raise RuntimeArgumentError(
                f"argument {name!r} has dtype {arr.dtype.name}, expected {dtype.name}; "
                f"convert it with .astype('{dtype.name}')"
            )
        flags = arr.flags
        if not flags.c_contiguous:
            raise RuntimeArgumentError(
                f"argument {name!r} is not C-contiguous (a transposed view or slice?); "
                "pass np.ascontiguousarray(x)"
            )
        if written and not flags.writeable:
            raise RuntimeArgumentError(f"output argument {name!r} is read-only")

    def __call__(self, *args: object) -> None:
        fast = self._fast
        if fast is False:
            fast = self._make_fast()
        if fast is not None and len(args) == len(self._specs):
            # the checks and the call in one native step; what it does not pass as is
            # (NOT_FAST) takes the Python path below, which accepts or explains it
            if type(args[0]) is np.ndarray:
                rc = fast(*args)
            else:  # NDArrays: their arrays
                rc = fast(*[as_numpy_view(a) for a in args])
            if rc != NOT_FAST:
                self._check(rc)
                return
        ptrs = self._pointers(args)
        self._ensure_runs_here(args)
        rc = self._entry(*ptrs)
        self._check(rc)

    def _make_fast(self) -> Callable | None:
        """The native call (``runtime.fast_call``), once code built elsewhere ran here."""
        if not self._probed:
            return None
        self._fast = fast_call(self._specs, self.compiled.entry_address)
        return self._fast

    def _ensure_runs_here(self, args: Sequence[object]) -> None:
        """Code built for another CPU runs here only once a child process survived it."""
        if not self._probed:
            _foreign.probe(self, [as_numpy_view(a) for a in args])
            self._probed = True

    def _check(self, rc: int) -> None:
        if rc != 0:
            raise failures.failure(rc, self.entry_name, self.compiled.bound_checks)

    # -- TVM-compatible accessors ---------------------------------------------------
    def __getitem__(self, name: str) -> Module:
        return self.get_function(name)

    def get_function(self, name: str) -> Module:
        """The function ``name`` (a module holds one); ``"__tvm_main__"`` is the default one."""
        if name != self.entry_name and name != "__tvm_main__":
            raise RuntimeArgumentError(
                f"module has no function {name!r}; its function is {self.entry_name!r}"
            )
        return self

    def get_source(self, fmt: str = "ll") -> str:
        """``"ll"``: optimized LLVM IR; ``"ll-unopt"``; ``"asm"``/``"s"``: assembly; ``"tir"``."""
        if fmt in ("ll", "llvm"):
            return self.compiled.optimized_ir
        if fmt in ("ll-unopt", "ll_unopt"):
            return self.compiled.ir_text
        if fmt in ("asm", "s"):
            return self.compiled.assembly()
        if fmt in ("tir", "", "script"):  # what runs: SIMD loops as vector statements
            return vector_view(self.func).script()
        raise RuntimeArgumentError(f"unknown source format {fmt!r}; use 'll', 'asm' or 'tir'")

    def loop_report(self) -> str:
        """Which loops became SIMD, parallel or unrolled code (and which could not)."""
        lines = [str(r) for r in self.compiled.reports]
        return "\n".join(lines) if lines else "no vectorized, parallel or unrolled loops"

    def threads_seen(self) -> list[int]:
        """Thread numbers that ran parallel code (build with ``record_thread_ids=True``)."""
        return self.compiled.threads_seen()

    def export_library(self, file_name: str, fcompile: object = None, **kwargs: object) -> None:
        """Write a shared library (``.so``, linked by the system's C compiler) or a ``.tar``
        holding the object; ``tvm.runtime.load_module(path)`` loads it back."""
        from .export import export_library  # noqa: PLC0415 - export imports this module

        self._check_exportable()
        export_library(self, file_name, fcompile, **kwargs)

    def save(self, file_name: str, fmt: str = "") -> None:
        """Write the code: ``.o`` (object, loadable with load_module), ``.ll`` or ``.s``."""
        from .export import save  # noqa: PLC0415 - export imports this module

        self._check_exportable()
        save(self, file_name, fmt)

    def _check_exportable(self) -> None:
        if getattr(self, "loaded_from", False):
            raise RuntimeArgumentError("a loaded module cannot be saved again; keep its file")

    # -- timing ---------------------------------------------------------------------
    def time_evaluator(
        self,
        func_name: str | None = None,
        dev: Device | None = None,
        number: int = 10,
        repeat: int = 1,
        min_repeat_ms: float = 0,
        limit_zero_time_iterations: int = 100,
        cooldown_interval_ms: float = 0,
        repeats_to_cooldown: int = 1,
        cache_flush_bytes: int = 0,
        f_preproc: str = "",
        *,
        enable_cpu_cache_flush: bool = False,
        **unknown: object,
    ) -> Callable[..., BenchmarkResult]:
        """A function that runs the kernel and returns a BenchmarkResult (TVM's signature).

        One warm-up call first; then ``repeat`` measurements, each the mean of ``number``
        back-to-back runs (raised until a repeat lasts ``min_repeat_ms``, giving up after
        ``limit_zero_time_iterations`` runs that measured no time). The loop runs in
        native code, so Python's call overhead (about a microsecond) is paid once per
        repeat, not per run. The CPU caches are flushed before every repeat with
        ``enable_cpu_cache_flush`` or ``f_preproc="cache_flush_cpu_non_first_arg"`` (use it
        with number=1 to time a cold kernel), or ``cache_flush_bytes`` of them;
        ``cooldown_interval_ms`` of sleep follow every ``repeats_to_cooldown`` repeats.
        A keyword TVM does not have is an error naming it.
        """
        if unknown:
            raise UnknownKeywordError.of("time_evaluator", unknown, TIME_EVALUATOR_KEYWORDS)
        if func_name not in (None, self.entry_name):
            self.get_function(func_name)
        dev = dev or cpu()
        if number < 1 or repeat < 1:
            raise RuntimeArgumentError("number and repeat must be at least 1")
        if limit_zero_time_iterations < 0 or repeats_to_cooldown < 1 or cache_flush_bytes < 0:
            raise RuntimeArgumentError(
                "limit_zero_time_iterations and cache_flush_bytes must be at least 0 and "
                f"repeats_to_cooldown at least 1, got {limit_zero_time_iterations}, "
                f"{cache_flush_bytes} and {repeats_to_cooldown}"
            )
        flush_all = enable_cpu_cache_flush or f_preproc == CACHE_FLUSH_PREPROC
        if f_preproc not in ("", CACHE_FLUSH_PREPROC):
            warnings.warn(
                f"time_evaluator: f_preproc={f_preproc!r} is ignored: ansor_lab has no registry "
                f"of packed functions; only {CACHE_FLUSH_PREPROC!r} (a cache flush before "
                "every repeat) is understood",
                IgnoredArgumentWarning,
                stacklevel=2,
            )
        flush = None
        if flush_all:
            flush = CacheFlusher(self.target)
        elif cache_flush_bytes > 0:
            flush = CacheFlusher(self.target, cache_flush_bytes)

        def evaluate(*args: object) -> BenchmarkResult:
            ptrs = self._pointers(args)
            self._ensure_runs_here(args)
            self._check(self._entry(*ptrs))  # warm-up
            costs = time_repeats(
                lambda n: self._check(self._repeat(n, *ptrs)),
                number,
                repeat,
                min_repeat_ms,
                flush,
                cooldown_interval_ms,
                limit_zero_time_iterations=limit_zero_time_iterations,
                repeats_to_cooldown=repeats_to_cooldown,
            )
            return BenchmarkResult(tuple(costs))

        return evaluate

    def __repr__(self) -> str:
        return f"Module({self.entry_name}, target={self.target})"


#: The one TVM preprocessor ``time_evaluator`` understands: flush the caches per repeat.
CACHE_FLUSH_PREPROC = "cache_flush_cpu_non_first_arg"

#: The keywords of TVM's ``Module.time_evaluator`` and ours.
TIME_EVALUATOR_KEYWORDS = (
    "func_name",
    "dev",
    "number",
    "repeat",
    "min_repeat_ms",
    "limit_zero_time_iterations",
    "cooldown_interval_ms",
    "repeats_to_cooldown",
    "cache_flush_bytes",
    "f_preproc",
    "enable_cpu_cache_flush",
)


def time_repeats(
    run_n,
    number: int,
    repeat: int,
    min_repeat_ms: float = 0,
    flush=None,
    cooldown_interval_ms: float = 0,
    *,
    limit_zero_time_iterations: int = 100,
    repeats_to_cooldown: int = 1,
    clock: Callable[[], float] | None = None,
) -> list[float]:
    """Seconds per run for each repeat; ``run_n(n)`` runs the kernel n times natively.

    The count grows until a repeat lasts ``min_repeat_ms`` (TVM's rule: at least
    doubling, aiming 1.618x past the minimum; a repeat that measured no time at all counts
    toward ``limit_zero_time_iterations``, after which it is taken as it is); ``flush``
    runs before every repeat, and ``cooldown_interval_ms`` of sleep after every
    ``repeats_to_cooldown`` repeats but the last. ``clock`` reads seconds: the wall clock
    (TVM's, the default), or ``time.thread_time`` for a kernel that runs on the calling
    thread only (the measuring runner's choice, ``LocalRunner(clock=...)``): a repeat then
    lasts ``min_repeat_ms`` of that clock.
    """
    clock = clock or time.perf_counter  # looked up now: a test may replace it
    n = number
    results = []
    for r in range(repeat):
        if flush is not None:
            flush()
        zero_times = 0
        while True:
            start = clock()
            run_n(n)
            elapsed = clock() - start
            if elapsed * 1e3 >= min_repeat_ms or min_repeat_ms <= 0:
                break
            if elapsed == 0:
                zero_times += 1
                if zero_times >= limit_zero_time_iterations:
                    break
            n = max(n * 2, int(n * min_repeat_ms / max(elapsed * 1e3, 1e-3) * 1.618))
        results.append(elapsed / n)
        cool = (r + 1) % repeats_to_cooldown == 0 and r + 1 < repeat
        if cooldown_interval_ms > 0 and cool:
            time.sleep(cooldown_interval_ms / 1e3)
    return results


class CacheFlusher:
    """Evicts the CPU caches by streaming through a buffer larger than the last level."""

    def __init__(self, target: Target, nbytes: int | None = None) -> None:
        # by default twice the largest cache; ``nbytes`` (TVM's cache_flush_bytes) exactly
        size = max(target.l3_bytes, target.l2_bytes, 8 << 20) * 2 if nbytes is None else nbytes
        self.buf = np.zeros(max(1, -(-size // 8)), dtype=np.float64)

    def __call__(self) -> None:
        self.buf += 1.0
