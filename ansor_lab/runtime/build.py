"""``lower`` and ``build``: from a schedule (or PrimFunc) to an IRModule and a Module."""

from __future__ import annotations

from typing import Any
from collections.abc import Sequence

from ..codegen.llvm import compile_func
from ..codegen.target import Target, as_target
from ..dsl.tensor import Tensor
from ..errors import AnsorLabError, CodegenError, LoweringError
from ..ir import nodes as N
from ..ir.verify import verify
from ..schedule.lower import lower_state
from ..schedule.te_schedule import Schedule
from .module import Module


def _lower_func(inp: Any, args: Sequence[Tensor] | None, name: str) -> N.PrimFunc:
    if isinstance(inp, N.PrimFunc):
        return inp if inp.name == name or name == "main" else N.PrimFunc(
            inp.params, inp.body, name, inp.attrs, inp.source)
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


def lower(inp: Any, args: Sequence[Tensor] | None = None, name: str = "main",
          simple_mode: bool = False) -> N.IRModule:
    """The loop IR of a schedule, as an IRModule (print it, or ``.show()``)."""
    func = _lower_func(inp, args, name)
    return N.IRModule({func.name: func})


def build(inp: Any, args: Sequence[Tensor] | None = None, target: Any = None,
          name: str = "main", **unused: Any) -> Module:
    """Compile a schedule (or PrimFunc / IRModule) for ``target`` ("llvm" by default).

    The result is called with numpy arrays or NDArrays, one per argument, outputs
    included: ``f(a, b, c)``.
    """
    if isinstance(args, (str, Target)) and target is None:
        args, target = None, args  # tvm.build(mod, "llvm")
    tgt = as_target(target)
    func = _lower_func(inp, args, name)
    if tgt.kind != "llvm":
        raise CodegenError(
            f"building for {tgt.kind!r} is not available yet; build for target='llvm'"
        )
    try:
        verify(func, tgt.kind)
    except AnsorLabError:
        raise
    return Module(func, tgt, compile_func(func, tgt))
