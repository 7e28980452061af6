"""``lower`` and ``build``: from a schedule (or PrimFunc) to an IRModule and a Module."""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..codegen.llvm import CodegenOptions, compile_func
from ..codegen.pipeline import prepare
from ..codegen.target import Target, as_target
from ..dsl import expr as E
from ..dsl.tensor import Tensor
from ..errors import CodegenError, LoweringError, UnknownKeywordError
from ..ir import nodes as N
from ..ir.builders import is_default_buffer_of
from ..ir.passes import relabel_loops
from ..ir.tir_transform import apply_lower_passes
from ..ir.transform import PassContext
from ..schedule.block_view import without_block_view
from ..schedule.lower import lower_state
from ..schedule.symbolic_schedule import symbolic_program
from ..schedule.te_schedule import Schedule
from .module import Module
from .symbolic_module import SymbolicModule, lower_symbolic

if TYPE_CHECKING:
    from .cuda_module import CUDAModule


def _lower_func(
    inp: Any, args: Sequence[Tensor] | None, name: str, check: bool = True
) -> N.PrimFunc:
    if isinstance(inp, N.PrimFunc):
        return (
            inp
            if inp.name == name or name == "main"
            else N.PrimFunc(inp.params, inp.body, name, inp.attrs, inp.source)
        )
    if isinstance(inp, N.IRModule):
        funcs = list(inp.functions.values())
        if len(funcs) != 1:
            raise LoweringError("build one function at a time: pass mod['name']")
        return funcs[0]
    if isinstance(inp, Schedule):
        if args is None:
            raise LoweringError(
                "lower/build of a TE schedule needs the argument list: "
                "tvm.lower(s, [A, B, C]) / tvm.build(s, [A, B, C])"
            )
        return lower_state(inp.state, list(args), name, check=check)
    if hasattr(inp, "mod") and hasattr(inp, "trace"):  # a tir.Schedule
        return _lower_func(inp.mod, args, name, check)
    raise LoweringError(
        f"cannot lower a {type(inp).__name__}; pass a te schedule with its args, a PrimFunc "
        "(te.create_prim_func) or a tir.Schedule"
    )


def lower(
    inp: Any,
    args: Sequence[Tensor] | None = None,
    name: str = "main",
    binds: Any = None,
    simple_mode: bool = False,
) -> N.IRModule:
    """The loop IR of a schedule, as an IRModule (print it, or ``.show()``).

    ``binds`` ({tensor: tir.decl_buffer(...)}) is accepted where each buffer is the dense
    row-major one the tensor gets anyway, else a LoweringError.

    With symbolic shapes it prints the probe specialization (every shape variable at
    ``dsl.symbolic.PROBE_VALUE``) under a comment saying so: loops print with numbers only.
    """
    _check_binds(binds)
    args = _without_shape_vars(args)
    program = symbolic_program(inp, args)
    if program is not None:
        return lower_symbolic(program, name)
    func = _lower_func(inp, args, name)
    func = without_block_view(apply_lower_passes(func, PassContext.current().lower_passes()))
    return N.IRModule({func.name: func})


def _without_shape_vars(args: Sequence | None) -> list | None:
    """``args`` without shape variables (``tvm.lower(s, [A, B, n])``: TVM lists them too;
    here a call reads them from the arrays' shapes)."""
    if args is None:
        return None
    return [a for a in args if not isinstance(a, E.Var)]


#: The keywords ``build`` takes, for the message about one it does not.
BUILD_KEYWORDS = (
    "args",
    "target",
    "name",
    "target_host",
    "binds",
    "runtime",
    "num_threads",
    "fast_math",
    "record_thread_ids",
    "instrument_bound_checkers",
)


def build(
    inp: Any,
    args: Sequence[Tensor] | None = None,
    target: Any = None,
    name: str = "main",
    *,
    target_host: Any = None,
    binds: Any = None,
    runtime: Any = None,
    num_threads: int | None = None,
    fast_math: bool = False,
    record_thread_ids: bool = False,
    instrument_bound_checkers: bool = False,
    **unknown: Any,
) -> Module | CUDAModule:
    """Compile a schedule (or PrimFunc / IRModule) for ``target`` ("llvm" by default).

    The result is called with numpy arrays or NDArrays, one per argument, outputs
    included: ``f(a, b, c)``. Parallel loops use ``num_threads`` threads (default: the
    target's ``num_cores``); ``fast_math`` allows reassociation and other fast-math
    rewrites; ``record_thread_ids`` is a debug hook recording which threads ran
    parallel code (``f.threads_seen()``). ``instrument_bound_checkers=True`` (TVM's
    ``tir.instrument_bound_checkers`` pass option) checks every buffer access against its
    buffer's shape at run time: an access out of bounds raises ``KernelBoundsError`` from
    the call instead of corrupting memory or crashing (accesses that are out of bounds on
    every run are refused at build time, with or without it). TVM's ``target_host`` is
    accepted when it is an LLVM (CPU) target, the host of every program built here;
    ``binds`` may only bind dense row-major buffers of the tensors' shapes (buffers are
    always laid out so; anything else is a LoweringError); ``runtime`` is
    ignored with a warning. Any other keyword is an ``UnknownKeywordError``.

    For a CUDA target (``target="cuda"``, ``"cuda -arch=sm_80"``) the result is a
    ``runtime.cuda_module.CUDAModule``: ``get_source("cuda")``, ``compiled``, ``emulate``;
    calling it needs a GPU and pycuda (else GPUUnavailableError); ``fast_math`` selects
    the fast float32 intrinsics and ``--use_fast_math``.

    The lowered function goes through ``codegen.pipeline.prepare`` (verify, unroll,
    legalise), as in the tuner's builder; ``f.get_source("tir")`` prints that form with
    its SIMD loops as vector statements (``codegen.vector_form``).
    """
    _check_keywords(unknown)
    _check_name(name)
    if isinstance(args, (str, Target)) and target is None:
        args, target = None, args  # tvm.build(mod, "llvm")
    tgt = as_target(target)
    _check_tvm_keywords(tgt, target_host, binds, runtime)
    context = PassContext.current()  # TVM's pass options, where they mean something here
    instrument_bound_checkers = instrument_bound_checkers or context.flag(
        "tir.instrument_bound_checkers"
    )
    threads = num_threads if num_threads is not None else max(1, tgt.num_cores)
    if (
        not isinstance(threads, numbers.Integral)
        or isinstance(threads, bool)
        or not 1 <= threads <= 4096
    ):
        raise CodegenError(f"num_threads must be an int from 1 to 4096, got {threads!r}")
    if not isinstance(args, (str, Target)):
        args = _without_shape_vars(args)
    program = symbolic_program(inp, args)
    if program is not None:  # symbolic shapes: compiled per shape when called
        name = program.func_name if name == "main" else name
        opts = {"num_threads": threads, "fast_math": fast_math}
        opts.update(
            record_thread_ids=record_thread_ids,
            instrument_bound_checkers=bool(instrument_bound_checkers),
        )
        return SymbolicModule(program, name, lambda f: build(f, None, tgt, name, **opts))
    try:
        # lowering's target-free check is skipped: prepare verifies for the target, once
        func = _lower_func(inp, args, name, check=False)
        func = apply_lower_passes(func, context.lower_passes())
        if context.flag("tir.disable_vectorize"):
            func = relabel_loops(func, "vectorized", "serial")
        if tgt.kind == "cuda":
            from .cuda_module import build_cuda  # noqa: PLC0415 - CUDA codegen on demand

            return build_cuda(func, tgt, fast_math)
        if tgt.kind != "llvm":
            raise CodegenError(
                f"building for {tgt.kind!r} is not available yet; build for target='llvm'"
            )
        func = prepare(func, tgt)
        options = CodegenOptions(
            int(threads), fast_math, record_thread_ids, bool(instrument_bound_checkers)
        )
        return Module(func, tgt, compile_func(func, tgt, options))
    except RecursionError:
        # the limits on expressions and loops keep programs far from this; it can still
        # come from a long chain of inlined stages
        raise CodegenError(
            "the program nests too deeply to compile (expressions or loops thousands of "
            "levels deep); compute some stages at root instead of inlining them, or use "
            "fewer loop levels"
        ) from None


def _check_name(name: Any) -> None:
    """The function's name becomes a symbol of the compiled code (and of an exported
    library): refuse what LLVM would stop on later with its own error."""
    if (
        not isinstance(name, str)
        or not name
        or not name.isascii()
        or not name.isprintable()
        or any(c.isspace() for c in name)
    ):
        raise CodegenError(
            f"build(name={name!r}): the function's name must be a non-empty ASCII str "
            "without spaces; best a C identifier (what export_library and CUDA need), "
            "e.g. name='matmul'"
        )


def _check_keywords(unknown: dict) -> None:
    """A keyword ``build`` does not take is a mistake: name it and the accepted ones."""
    if unknown:
        raise UnknownKeywordError.of("build", unknown, BUILD_KEYWORDS)


def _check_tvm_keywords(tgt: Target, target_host: Any, binds: Any, runtime: Any) -> None:
    """TVM's keywords of ``tvm.build``: honoured where they mean what they mean here."""
    if target_host is not None:
        host = as_target(target_host)
        if host.kind != "llvm":
            raise CodegenError(
                f"target_host={host.kind!r}: host code is generated by LLVM for this CPU; "
                "pass target_host='llvm' or leave it out"
            )
    _check_binds(binds)
    if runtime is not None:
        warnings.warn(
            f"build(runtime={runtime!r}) is ignored: ansor_lab builds one callable function "
            "per program (TVM's default C++ runtime behaviour)",
            stacklevel=3,
        )


def _check_binds(binds: Any) -> None:
    """TVM's ``binds={tensor: buffer}``: honoured when each buffer is the one the tensor
    gets anyway (dense, row-major, global); any other layout is refused."""
    if not binds:
        return
    for tensor, buf in dict(binds).items():
        try:
            shape = tuple(int(d) for d in tensor.shape)
        except (AttributeError, TypeError):  # not a tensor, or a symbolic shape
            shape = None
        if not (
            isinstance(tensor, Tensor) and shape and is_default_buffer_of(buf, shape, tensor.dtype)
        ):
            raise LoweringError(
                f"binds={{{getattr(tensor, 'name', tensor)!r}: {buf!r}}}: buffers here are "
                "dense, row-major and global, of their tensor's shape and dtype; bind "
                "tir.decl_buffer(T.shape, T.dtype) or leave binds out"
            )
