"""Expression nodes under TVM's names with TVM's constructors: ``tir.IntImm(dtype,
value)``, ``tir.FloatImm(dtype, value)``, ``tir.Cast(dtype, value)``, ``tir.Add(a, b)``
(and ``Sub Mul Div Mod FloorDiv FloorMod Min Max``), the comparisons ``tir.EQ(a, b)``
(``NE LT LE GT GE``), ``tir.And(a, b)``, ``tir.Or(a, b)``, ``tir.Not(a)``,
``tir.Select(cond, a, b)`` and ``tir.Call(dtype, op, args)``.

Inside the package the nodes are dataclasses built with every field, ``E.IntImm(value,
dtype)``, ``E.Add(a, b, dtype)``. The names users reach take TVM's arguments (the dtype
first for constants and casts, operands alone for arithmetic, its dtype derived and the
operands matched as ``a + b`` matches them) and are the classes of ``isinstance`` checks
(``isinstance(loop.extent, tvm.tir.IntImm)``, as TVM's passes and tutorials write), true
of every such node:

    >>> c = tir.IntImm("int32", 4)
    >>> (c.value, c.dtype, isinstance(c, tir.IntImm))
    (4, 'int32', True)
    >>> tir.Add(c, 1).dtype
    'int32'

A constant's value is checked as ``tir.const`` checks it (an integer in the dtype's range).
"""

from __future__ import annotations

from typing import Any

from ..errors import DSLError
from . import dtypes, expr as E
from .construct import as_expr, binary, const, logical_and, logical_not, logical_or, select
from .extern_calls import call_intrin


class _NodeFace(type):
    """``isinstance`` and ``issubclass`` against the node class ``_node``."""

    _node: type

    def __instancecheck__(cls, obj: object) -> bool:
        return isinstance(obj, cls._node)

    def __subclasscheck__(cls, sub: type) -> bool:
        return issubclass(sub, cls._node)


class _ConstantFace(_NodeFace):
    """A constructor in TVM's argument order (dtype first); ``_kind``: "int" or "float"."""

    _kind: str

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


class _BinaryFace(_NodeFace):
    def __call__(cls, a: Any, b: Any, span: Any = None) -> E.PrimExpr:
        if isinstance(span, str):
            raise DSLError(
                f"tir.{cls.__name__}(a, b) takes the two operands, as TVM (the dtype is "
                f"theirs): write tir.{cls.__name__}(a, b), not a third argument {span!r}"
            )
        return binary(cls._node, a, b, f"tir.{cls.__name__}")


def _binary_face(node: type) -> type:
    doc = f"``tir.{node.__name__}(a, b)``, as TVM: the operands matched, the dtype theirs."
    return _BinaryFace(node.__name__, (), {"_node": node, "__doc__": doc})


Add, Sub, Mul, Div, Mod, FloorDiv, FloorMod, Min, Max = (
    _binary_face(n)
    for n in (E.Add, E.Sub, E.Mul, E.Div, E.Mod, E.FloorDiv, E.FloorMod, E.Min, E.Max)
)
# a comparison's operands are matched too: tir.LT(i, 10) compares with an int32 constant
EQ, NE, LT, LE, GT, GE = (_binary_face(n) for n in (E.EQ, E.NE, E.LT, E.LE, E.GT, E.GE))


class _LogicalFace(_NodeFace):
    _build: Any

    def __call__(cls, *operands: Any, span: Any = None) -> E.PrimExpr:
        arity = 1 if cls._node is E.Not else 2
        if len(operands) == arity + 1 and not isinstance(operands[-1], (E.PrimExpr, bool)):
            operands = operands[:-1]  # TVM's positional span
        if len(operands) != arity:
            shown = "a" if arity == 1 else "a, b"
            raise DSLError(
                f"tir.{cls.__name__}({shown}) takes {arity} bool operand(s), as TVM; "
                f"got {len(operands)}"
            )
        return cls._build(*operands)


def _logical_face(node: type, build: Any, shown: str) -> type:
    doc = f"``tir.{node.__name__}({shown})``, as TVM: bool operands, a bool result."
    attrs = {"_node": node, "_build": staticmethod(build), "__doc__": doc}
    return _LogicalFace(node.__name__, (), attrs)


And = _logical_face(E.And, logical_and, "a, b")
Or = _logical_face(E.Or, logical_or, "a, b")
Not = _logical_face(E.Not, logical_not, "a")


class _SelectFace(_NodeFace):
    def __call__(
        cls, condition: Any, true_value: Any, false_value: Any, span: Any = None
    ) -> E.PrimExpr:
        return select(condition, true_value, false_value)


class Select(metaclass=_SelectFace):
    """``tir.Select(condition, true_value, false_value)``, as TVM: both values evaluated."""

    _node = E.Select


class _CallFace(_NodeFace):
    def __call__(cls, dtype: Any, op: Any, args: Any, span: Any = None) -> E.PrimExpr:
        if isinstance(args, str) or (not isinstance(dtype, str) and isinstance(op, str)):
            raise DSLError(
                "tir.Call(dtype, op, args) takes the dtype first, as TVM: write "
                "tir.Call('float32', 'tir.exp', [x])"
            )
        if not isinstance(args, (list, tuple)):
            raise DSLError(f"tir.Call(dtype, op, args): args must be a list, got {args!r:.60}")
        name = op if isinstance(op, str) else getattr(op, "name", op)  # an Op: its name
        return call_intrin(dtypes.canonical(dtype), name, *args)


class Call(metaclass=_CallFace):
    """``tir.Call(dtype, op, args)``, as TVM: an intrinsic by name (``"tir.exp"``) or a
    declared one (``register_op_attr``); the node ``op.op``, ``op.args``, ``op.dtype``."""

    _node = E.Call


class _CastFace(_NodeFace):
    def __call__(cls, dtype: Any, value: Any, span: Any = None) -> E.PrimExpr:
        if not isinstance(dtype, str) and isinstance(value, str):
            raise DSLError(
                f"tir.Cast(dtype, value) takes the dtype first, as TVM: write "
                f"tir.Cast({value!r}, ...)"
            )
        return E.Cast(as_expr(value), dtypes.canonical(dtype))


class Cast(metaclass=_CastFace):
    """``tir.Cast(dtype, value)``, as TVM: ``value`` converted to ``dtype``."""

    _node = E.Cast


class _RangeFace(_NodeFace):
    def __call__(cls, begin: Any, end: Any = None, span: Any = None) -> E.Range:
        if end is None:  # Range(n): [0, n), as TVM
            begin, end = 0, begin
        if isinstance(begin, int) and isinstance(end, int):
            return E.Range(const(begin, "int32"), const(end - begin, "int32"))
        lo, hi = as_expr(begin), as_expr(end)
        zero = isinstance(lo, E.IntImm) and lo.value == 0
        return E.Range(lo, hi if zero else binary(E.Sub, hi, lo, "Range"))


class Range(metaclass=_RangeFace):
    """``tvm.ir.Range(begin, end)``, as TVM: ``[begin, end)`` (``Range(n)``: ``[0, n)``);
    ``.min`` and ``.extent``. ``Range.from_min_extent(min, extent)``."""

    _node = E.Range

    @staticmethod
    def from_min_extent(min_value: Any, extent: Any, span: Any = None) -> E.Range:
        """The range ``[min_value, min_value + extent)``."""
        return E.Range(as_expr(min_value), as_expr(extent))
