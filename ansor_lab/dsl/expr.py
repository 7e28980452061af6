"""Scalar expression nodes shared by the DSL and the loop IR.

Every node is an immutable value (a frozen dataclass) with a ``dtype``. Equality of two
nodes is structural; variables (``Var``, ``IterVar``) and tensors compare by identity, so
two variables both named ``i`` are different variables. As in TVM, ``a == b`` on
expressions builds an ``EQ`` node, whose truth value is the structural comparison; every
other comparison operator builds a node that refuses to be used as a Python bool.

Division semantics (stated once, used by every backend and the reference evaluator):

* ``a / b``  on floats is true division; on integers it truncates toward zero (C, TVM's
  ``tir.Div``), and ``te.truncdiv`` / ``te.truncmod`` name that explicitly.
* ``a // b`` and ``a % b`` are floor division and floor modulo (Python semantics: the
  remainder has the sign of the divisor), also spelled ``te.floordiv`` / ``te.floormod``.
* Integer division by zero (``/``, ``//``, ``%``, ``truncdiv``, ``truncmod`` on integers):
  a constant zero divisor is refused when the expression is built (a ``DSLError``, as
  TVM's arith refuses "Divide by zero" when it folds constants); a divisor that is zero at
  run time is an error, never a value: the reference evaluator raises
  ``ReferenceEvaluationError`` and a compiled kernel returns from the call with
  ``KernelDivisionByZeroError`` (C and TVM leave it undefined, and x86 kills the process
  with SIGFPE). Lanes that a lazy ``te.if_then_else`` does not take are not evaluated, so
  ``te.if_then_else(b != 0, a // b, 0)`` is the way to guard a divisor; ``te.select``
  evaluates both sides. The simplifier may drop a sub-expression whose value cannot
  matter (``x % 1``, ``x * 0``), and a zero divisor inside it with it: a compiled kernel
  then returns the value the reference gives for the simplified expression. Float
  division by zero follows IEEE 754 (inf or nan).
* The one quotient that does not fit, ``INT_MIN // -1`` (and ``/``), wraps to ``INT_MIN``
  (two's complement, as numpy does); its remainder is 0. Integer ``+ - *`` wrap too.
* A float -> int cast truncates toward zero and saturates: values beyond the integer
  range (and infinities) become its minimum or maximum, NaN becomes 0 (LLVM's
  ``fptosi.sat``; C and TVM leave it undefined).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from ..errors import DSLError, DTypeError
from . import dtypes
from .op import Op
from .unsupported import no_abs, no_pow, no_rpow

# --------------------------------------------------------------------------------------
# Base and operator overloading


class ExprOp:
    """Arithmetic, comparison and logical operators that build expression nodes."""

    __slots__ = ()

    def _as_operand(self) -> PrimExpr:
        return self  # type: ignore[return-value]

    def __add__(self, other):
        return binary(Add, self, other, "+")

    def __radd__(self, other):
        return binary(Add, other, self, "+")

    def __sub__(self, other):
        return binary(Sub, self, other, "-")

    def __rsub__(self, other):
        return binary(Sub, other, self, "-")

    def __mul__(self, other):
        return binary(Mul, self, other, "*")

    def __rmul__(self, other):
        return binary(Mul, other, self, "*")

    def __truediv__(self, other):
        return binary(Div, self, other, "/")

    def __rtruediv__(self, other):
        return binary(Div, other, self, "/")

    def __floordiv__(self, other):
        return binary(FloorDiv, self, other, "//")

    def __rfloordiv__(self, other):
        return binary(FloorDiv, other, self, "//")

    def __mod__(self, other):
        return binary(FloorMod, self, other, "%")

    def __rmod__(self, other):
        return binary(FloorMod, other, self, "%")

    def __neg__(self):
        operand = as_expr(self)
        if dtypes.is_bool(operand.dtype):
            raise DTypeError("cannot negate a bool expression; use te.Not / ~x instead")
        return Sub(const(0, operand.dtype), operand, operand.dtype)

    def __lt__(self, other):
        return binary(LT, self, other, "<")

    def __le__(self, other):
        return binary(LE, self, other, "<=")

    def __gt__(self, other):
        return binary(GT, self, other, ">")

    def __ge__(self, other):
        return binary(GE, self, other, ">=")

    def __eq__(self, other):  # type: ignore[override]
        if not _convertible(other):
            return NotImplemented
        return binary(EQ, self, other, "==")

    def __ne__(self, other):  # type: ignore[override]
        if not _convertible(other):
            return NotImplemented
        return binary(NE, self, other, "!=")

    def equal(self, other):
        """``self == other`` as an expression (TVM's ``PrimExpr.equal``)."""
        return binary(EQ, self, other, "==")

    # & | ~ are logical on bool expressions and bitwise on integers (TVM's rule); ^ << >>
    # are integer operations (see ``intrin_extra``)
    def __and__(self, other):
        return _bit_or_logic("bitwise_and", logical_and, self, other)

    def __rand__(self, other):
        return _bit_or_logic("bitwise_and", logical_and, other, self)

    def __or__(self, other):
        return _bit_or_logic("bitwise_or", logical_or, self, other)

    def __ror__(self, other):
        return _bit_or_logic("bitwise_or", logical_or, other, self)

    def __invert__(self):
        if dtypes.is_int(as_expr(self).dtype):
            return _bits("bitwise_not", self)
        return logical_not(self)

    def __xor__(self, other):
        return _bits("bitwise_xor", self, other)

    def __rxor__(self, other):
        return _bits("bitwise_xor", other, self)

    def __lshift__(self, other):
        return _bits("shift_left", self, other)

    def __rlshift__(self, other):
        return _bits("shift_left", other, self)

    def __rshift__(self, other):
        return _bits("shift_right", self, other)

    def __rrshift__(self, other):
        return _bits("shift_right", other, self)

    # TVM's PrimExpr has no abs() or ** either: each raises, naming the intrinsic to write
    __abs__, __pow__, __rpow__ = no_abs, no_pow, no_rpow

    def astype(self, dtype: str) -> PrimExpr:
        """Cast this expression to ``dtype``."""
        return cast(self, dtype)

    def __bool__(self) -> bool:
        raise DSLError(
            "a symbolic expression cannot be used as a Python bool (in `if`, `and`, `or`, "
            "`not`); use te.if_then_else(cond, a, b), te.all(...) / te.any(...) or & | ~"
        )


def _bits(name: str, *args: object) -> PrimExpr:
    from .intrin_extra import BY_NAME  # noqa: PLC0415 - it builds on this module

    return BY_NAME[name](*args)


def _bit_or_logic(name: str, logical, a: object, b: object) -> PrimExpr:
    """The bitwise operation when an operand is an integer expression, else the logical."""
    exprs = [as_expr(x) for x in (a, b) if isinstance(x, ExprOp)]
    if any(dtypes.is_int(x.dtype) for x in exprs):
        return _bits(name, a, b)
    return logical(a, b)


class PrimExpr(ExprOp):
    """Base class of scalar expressions; every node has a ``dtype``."""

    # the structural hash, computed once per node (``structural_hash``): a slot, not a
    # field, so equality, ``dataclasses.replace`` and pickling (fields only) never see it
    __slots__ = ("_structural_hash",)
    dtype: str

    def __hash__(self) -> int:
        return structural_hash(self)

    def __repr__(self) -> str:
        from .printer import expr_to_str  # noqa: PLC0415 - printer imports expr

        return expr_to_str(self)

    __str__ = __repr__


def _node(cls):
    """Decorator: an immutable, slotted dataclass keeping PrimExpr's eq/hash/repr."""
    return dataclass(frozen=True, eq=False, slots=True, repr=False)(cls)


# --------------------------------------------------------------------------------------
# Leaves


@_node
class Var(PrimExpr):
    """A scalar variable (loop index, shape variable). Compared by identity."""

    name: str
    dtype: str = "int32"

    def __hash__(self) -> int:
        return id(self)


@_node
class IntImm(PrimExpr):
    """An integer (or bool) constant."""

    value: int
    dtype: str = "int32"

    def __int__(self) -> int:
        return int(self.value)

    def __index__(self) -> int:
        return int(self.value)

    def __bool__(self) -> bool:
        return bool(self.value)


@_node
class FloatImm(PrimExpr):
    """A floating-point constant."""

    value: float
    dtype: str = "float32"

    def __float__(self) -> float:
        return float(self.value)

    def __bool__(self) -> bool:
        return bool(self.value)


# --------------------------------------------------------------------------------------
# Compound nodes


@_node
class Cast(PrimExpr):
    """Convert ``value`` to ``dtype`` (float to int truncates toward zero)."""

    value: PrimExpr
    dtype: str


@_node
class BinaryOp(PrimExpr):
    """Base of two-operand arithmetic nodes; both operands already have ``dtype``."""

    a: PrimExpr
    b: PrimExpr
    dtype: str


@_node
class Add(BinaryOp):
    """a + b."""


@_node
class Sub(BinaryOp):
    """a - b."""


@_node
class Mul(BinaryOp):
    """a * b."""


@_node
class _Division(BinaryOp):
    """Base of the four divisions: an integer constant zero divisor is refused here, so
    no way of building one (operators, intrinsics, DAG JSON, the simplifier) gets past."""

    def __post_init__(self) -> None:
        b = self.b
        if isinstance(b, IntImm) and b.value == 0 and dtypes.is_int(self.dtype):
            raise DSLError(
                f"integer division by the constant 0 in ({self.a}) {_DIVISION_SIGN[type(self)]} "
                "0: the result is undefined; divide by a non-zero value, or guard a divisor "
                "that can be zero with te.if_then_else(b != 0, a // b, 0)"
            )


@_node
class Div(_Division):
    """a / b: true division for floats, truncated division for integers."""


@_node
class Mod(_Division):
    """Truncated modulo (C's %): the remainder has the sign of the dividend."""


@_node
class FloorDiv(_Division):
    """Floor division (Python's //)."""


@_node
class FloorMod(_Division):
    """Floor modulo (Python's %): the remainder has the sign of the divisor."""


_DIVISION_SIGN = {Div: "/", Mod: "truncmod", FloorDiv: "//", FloorMod: "%"}


@_node
class Min(BinaryOp):
    """The smaller of a and b."""


@_node
class Max(BinaryOp):
    """The larger of a and b."""


@_node
class CmpOp(PrimExpr):
    """Base of comparisons; the result is bool, operands share a dtype."""

    a: PrimExpr
    b: PrimExpr
    dtype: str = "bool"


@_node
class EQ(CmpOp):
    """a == b. Its Python truth value is the structural equality of a and b."""

    def __bool__(self) -> bool:
        return structural_equal(self.a, self.b)


@_node
class NE(CmpOp):
    """a != b. Its Python truth value is the structural inequality of a and b."""

    def __bool__(self) -> bool:
        return not structural_equal(self.a, self.b)


@_node
class LT(CmpOp):
    """a < b."""


@_node
class LE(CmpOp):
    """a <= b."""


@_node
class GT(CmpOp):
    """a > b."""


@_node
class GE(CmpOp):
    """a >= b."""


@_node
class And(PrimExpr):
    """Logical and of two bools."""

    a: PrimExpr
    b: PrimExpr
    dtype: str = "bool"


@_node
class Or(PrimExpr):
    """Logical or of two bools."""

    a: PrimExpr
    b: PrimExpr
    dtype: str = "bool"


@_node
class Not(PrimExpr):
    """Logical negation of a bool."""

    a: PrimExpr
    dtype: str = "bool"


@_node
class Select(PrimExpr):
    """Eager choice: both values are evaluated, then one is picked by ``condition``."""

    condition: PrimExpr
    true_value: PrimExpr
    false_value: PrimExpr
    dtype: str


@_node
class Call(PrimExpr):
    """An intrinsic call by name (``exp``, ``if_then_else``, ``pow``...); ``op`` an ``Op``."""

    op: str
    args: tuple
    dtype: str

    def __post_init__(self) -> None:
        if type(self.op) is not Op:
            object.__setattr__(self, "op", Op(self.op))


@_node
class TensorLoad(PrimExpr):
    """Reading ``tensor[indices]`` in the DSL (the IR reads buffers instead)."""

    tensor: Any
    indices: tuple
    dtype: str


@_node
class Reduce(PrimExpr):
    """A commutative reduction of ``source`` over ``axis`` where ``condition`` holds."""

    combiner: str  # "sum", "max" or "min"
    source: PrimExpr
    axis: tuple
    condition: PrimExpr | None
    dtype: str


# --------------------------------------------------------------------------------------
# Ranges and iteration variables


@dataclass(frozen=True, slots=True)
class Range:
    """A half-open range ``[min, min + extent)`` of a loop or axis."""

    min: IntImm
    extent: IntImm

    @staticmethod
    def of(lo: int, extent: int) -> Range:
        """A range from plain integers."""
        return Range(IntImm(int(lo)), IntImm(int(extent)))

    def __repr__(self) -> str:
        return f"range(min={self.min}, ext={self.extent})"  # ints, or a shape variable's


@dataclass(frozen=True, eq=False, slots=True)
class IterVar(ExprOp):
    """An iteration axis: a variable with its domain and kind.

    ``kind`` is "spatial" for output axes, "reduce" for reduction axes, "thread" for
    axes made by ``te.thread_axis`` (``thread_tag`` then names the hardware index).
    In expressions an IterVar stands for its variable.
    """

    var: Var
    dom: Range | None
    kind: str = "spatial"
    thread_tag: str = ""

    def _as_operand(self) -> PrimExpr:
        return self.var

    @property
    def name(self) -> str:
        """The variable's name."""
        return self.var.name

    @property
    def dtype(self) -> str:
        """The variable's dtype."""
        return self.var.dtype

    def __hash__(self) -> int:
        return id(self)

    def __repr__(self) -> str:
        dom = f", {self.dom!r}" if self.dom is not None else ""
        return f"IterVar({self.var.name}{dom}, {self.kind})"


# --------------------------------------------------------------------------------------
# Structural equality and hashing


def _fields(cls: type) -> tuple[str, ...]:
    names = _FIELDS.get(cls)
    if names is None:
        names = tuple(f.name for f in dataclasses.fields(cls))
        _FIELDS[cls] = names
    return names


_FIELDS: dict[type, tuple[str, ...]] = {}


def node_fields(node: PrimExpr) -> tuple[str, ...]:
    """Names of a node's fields, in declaration order."""
    return _fields(type(node))


def _value_equal(x: object, y: object) -> bool:
    if x is y:
        return True
    if isinstance(x, PrimExpr):
        return isinstance(y, PrimExpr) and structural_equal(x, y)
    if isinstance(x, tuple):
        return isinstance(y, tuple) and len(x) == len(y) and all(map(_value_equal, x, y))
    if isinstance(x, (str, int, float, type(None))):
        return type(x) is type(y) and x == y
    return False  # IterVars, tensors and buffers compare by identity


def structural_equal(a: PrimExpr, b: PrimExpr) -> bool:
    """True when two expressions have the same structure (variables by identity)."""
    if a is b:
        return True
    if type(a) is not type(b) or isinstance(a, Var):
        return False
    return all(_value_equal(getattr(a, f), getattr(b, f)) for f in node_fields(a))


def _value_hash(x: object) -> int:
    if isinstance(x, PrimExpr):
        return structural_hash(x)
    if isinstance(x, tuple):
        return hash(tuple(_value_hash(v) for v in x))
    if isinstance(x, (str, int, float, type(None))):
        return hash(x)
    return id(x)


def structural_hash(e: PrimExpr) -> int:
    """A hash consistent with :func:`structural_equal` (the variables it depends on by
    identity live as long as the node)."""
    if isinstance(e, Var):
        return id(e)
    h = getattr(e, "_structural_hash", None)  # cached: nodes are immutable
    if h is not None:
        return h
    h = hash((type(e).__name__,) + tuple(_value_hash(getattr(e, f)) for f in node_fields(e)))
    object.__setattr__(e, "_structural_hash", h)
    return h


# construction and traversal live in their own modules (they need the classes above), re-exported
from .construct import (  # noqa: E402
    _convertible as _convertible,
    as_bool as as_bool,
    as_expr as as_expr,
    binary as binary,
    cast as cast,
    const as const,
    const_value as const_value,
    if_then_else as if_then_else,
    logical_and as logical_and,
    logical_not as logical_not,
    logical_or as logical_or,
    match_operands as match_operands,
    select as select,
)
from .traversal import (  # noqa: E402
    children as children,
    free_vars as free_vars,
    map_children as map_children,
    post_order as post_order,
    substitute as substitute,
)
