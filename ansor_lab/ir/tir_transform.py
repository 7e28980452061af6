"""``tvm.tir.transform``: passes over the PrimFuncs of an IRModule written in Python.

``prim_func_pass`` turns ``f(func, mod, ctx) -> func`` into a pass (``pass_(mod)`` gives
the new module); such a pass runs in ``tvm.lower`` / ``tvm.build`` when it is listed in
``PassContext(config={"tir.add_lower_pass": [(phase, pass_)]})``, after ansor_lab's own
lowering (every phase: the passes run in phase order, on the lowered loop nest).
``Simplify()`` is ansor_lab's simplifier as such a pass.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import nodes as N
from .simplify import simplify_stmt
from .transform import PassContext


class PrimFuncPass:
    """A pass applying ``fn(func, mod, ctx)`` to every PrimFunc of a module."""

    def __init__(self, fn: Callable, name: str, opt_level: int = 0) -> None:
        self.fn = fn
        self.name = name
        self.opt_level = opt_level

    def __call__(self, mod: N.IRModule) -> N.IRModule:
        """The module with each function replaced by what the pass returned for it."""
        if isinstance(mod, N.PrimFunc):
            mod = N.IRModule({mod.name: mod})
        out = {}
        for name, func in mod.functions.items():
            new = self.fn(func, mod, PassContext.current())
            if not isinstance(new, N.PrimFunc):
                raise TypeError(
                    f"pass {self.name!r} returned {type(new).__name__} for {name!r}; a "
                    "prim_func_pass returns a PrimFunc (func.with_body(new_body))"
                )
            out[name] = new
        return N.IRModule(out)

    def __repr__(self) -> str:
        return f"PrimFuncPass({self.name}, opt_level={self.opt_level})"


def prim_func_pass(
    pass_func: Callable | None = None,
    opt_level: int = 0,
    name: str | None = None,
    required: Any = None,
    traceable: bool = False,
) -> Any:
    """A PrimFunc pass from ``pass_func(func, mod, ctx)``; a decorator with or without
    arguments (``@prim_func_pass(opt_level=0)``), as TVM's."""

    def make(fn: Callable) -> PrimFuncPass:
        return PrimFuncPass(fn, name or getattr(fn, "__name__", "pass"), opt_level)

    return make if pass_func is None else make(pass_func)


def Simplify() -> PrimFuncPass:  # noqa: N802 - TVM's name
    """ansor_lab's simplifier as a pass (TVM's ``tir.transform.Simplify()``)."""
    return PrimFuncPass(lambda f, mod, ctx: f.with_body(simplify_stmt(f.body)), "Simplify")


def apply_lower_passes(func: N.PrimFunc, passes: list) -> N.PrimFunc:
    """``func`` after the ``(phase, pass)`` entries of ``tir.add_lower_pass``, in phase order."""
    for _, pass_ in sorted(passes, key=lambda entry: entry[0]):
        mod = pass_(N.IRModule({func.name: func}))
        (func,) = mod.functions.values()
    return func
