"""``lower`` and ``build``: from a schedule (or PrimFunc) to an IRModule and a Module."""

from __future__ import annotations

from typing import Any
from collections.abc import Sequence

from ..codegen.llvm import CodegenOptions, compile_func
from ..codegen.target import Target, as_target
from ..dsl.tensor import Tensor
from ..errors import CodegenError, LoweringError
from ..ir import nodes as N
from ..ir.passes import unroll_by_pragma
from ..ir.verify import verify
from ..schedule.lower import lower_state
from ..schedule.te_schedule import Schedule
from .module import Module


def _lower_func(inp: Any, args: Sequence[Tensor] | None, name: str) -> N.PrimFunc:
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
        return lower_state(inp.state, list(args), name)
    if hasattr(inp, "mod") and hasattr(inp, "trace"):  # a tir.Schedule
        return _lower_func(inp.mod, args, name)
    raise LoweringError(
        f"cannot lower a {type(inp).__name__}; pass a te schedule with its args, a PrimFunc "
        "(te.create_prim_func) or a tir.Schedule"
    )


def lower(
    inp: Any, args: Sequence[Tensor] | None = None, name: str = "main", simple_mode: bool = False
) -> N.IRModule:
    """The loop IR of a schedule, as an IRModule (print it, or ``.show()``)."""
    func = _lower_func(inp, args, name)
    return N.IRModule({func.name: func})


def build(
    inp: Any,
    args: Sequence[Tensor] | None = None,
    target: Any = None,
    name: str = "main",
    *,
    num_threads: int | None = None,
    fast_math: bool = False,
    record_thread_ids: bool = False,
    **unused: Any,
) -> Module:
    """Compile a schedule (or PrimFunc / IRModule) for ``target`` ("llvm" by default).

    The result is called with numpy arrays or NDArrays, one per argument, outputs
    included: ``f(a, b, c)``. Parallel loops use ``num_threads`` threads (default: the
    target's ``num_cores``); ``fast_math`` allows reassociation and other fast-math
    rewrites; ``record_thread_ids`` is a debug hook recording which threads ran
    parallel code (``f.threads_seen()``).
    """
    if isinstance(args, (str, Target)) and target is None:
        args, target = None, args  # tvm.build(mod, "llvm")
    tgt = as_target(target)
    func = _lower_func(inp, args, name)
    if tgt.kind != "llvm":
        raise CodegenError(
            f"building for {tgt.kind!r} is not available yet; build for target='llvm'"
        )
    verify(func, tgt.kind)
    func = unroll_by_pragma(func, tgt.vector_bytes)
    threads = num_threads if num_threads is not None else max(1, tgt.num_cores)
    options = CodegenOptions(int(threads), fast_math, record_thread_ids)
    return Module(func, tgt, compile_func(func, tgt, options))
