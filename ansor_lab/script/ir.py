"""``from ansor_lab.script import ir as I``: ``@I.ir_module`` on a class of prim_funcs."""

from __future__ import annotations

from typing import Any

from ..errors import ScriptError
from ..ir.nodes import IRModule, PrimFunc

__all__ = ["ir_module"]


def ir_module(cls: Any = None, *, check_well_formed: bool = True) -> Any:
    """``@I.ir_module class Module:`` -> an IRModule of the class's ``@T.prim_func`` methods."""
    if cls is None:
        return lambda c: ir_module(c)
    if not isinstance(cls, type):
        raise ScriptError("@I.ir_module decorates a class whose methods are @T.prim_func")
    funcs = {k: v for k, v in vars(cls).items() if isinstance(v, PrimFunc)}
    if not funcs:
        raise ScriptError(
            f"@I.ir_module class {cls.__name__}: no @T.prim_func methods found; decorate each "
            "function with @T.prim_func"
        )
    return IRModule(funcs)
