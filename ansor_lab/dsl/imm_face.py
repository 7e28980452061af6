"""TVM's ``tir.IntImm(dtype, value)`` and ``tir.FloatImm(dtype, value)``.

Inside the package a constant node is built as ``E.IntImm(value, dtype)``, the dataclass's
field order. The names users reach, ``tir.IntImm`` / ``tir.FloatImm``, take TVM's order,
dtype first, and are the classes of ``isinstance`` checks (``isinstance(loop.extent,
tvm.tir.IntImm)``, as TVM's passes and tutorials write), true of every such constant:

    >>> c = tir.IntImm("int32", 4)
    >>> (c.value, c.dtype, isinstance(c, tir.IntImm))
    (4, 'int32', True)

The value is checked as ``tir.const`` checks it (an integer in the dtype's range).
"""

from __future__ import annotations

from typing import Any

from ..errors import DSLError
from . import dtypes, expr as E
from .construct import const


class _ConstantFace(type):
    """A constructor in TVM's argument order that is also the node class for isinstance."""

    _node: type
    _kind: str

    def __instancecheck__(cls, obj: object) -> bool:
        return isinstance(obj, cls._node)

    def __subclasscheck__(cls, sub: type) -> bool:
        return issubclass(sub, cls._node)

    def __call__(cls, dtype: Any, value: Any, span: Any = None) -> E.PrimExpr:
        name = cls.__name__
        if not isinstance(dtype, str) and isinstance(value, str):
            raise DSLError(
                f"tir.{name}(dtype, value) takes the dtype first, as TVM: write "
                f"tir.{name}({value!r}, {dtype!r})"
            )
        dt = dtypes.canonical(dtype)
        wanted = dtypes.is_float(dt) if cls._kind == "float" else not dtypes.is_float(dt)
        if not wanted:
            other = "FloatImm" if cls._kind == "int" else "IntImm"
            kind = "an integer" if cls._kind == "int" else "a float"
            raise DSLError(
                f"tir.{name}({dtype!r}, {value!r}): {dt} is not {kind} dtype; use "
                f"tir.{other}({dtype!r}, {value!r}) or tir.const({value!r}, {dtype!r})"
            )
        return const(value, dt)


class IntImm(metaclass=_ConstantFace):
    """An integer (or bool) constant: ``tir.IntImm("int32", 4)``, as TVM."""

    _node = E.IntImm
    _kind = "int"


class FloatImm(metaclass=_ConstantFace):
    """A float constant: ``tir.FloatImm("float32", 0.5)``, as TVM."""

    _node = E.FloatImm
    _kind = "float"
