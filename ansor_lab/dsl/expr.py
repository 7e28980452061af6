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
* Integer division by zero is undefined behaviour, as in C.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import DSLError, DTypeError
from . import dtypes

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

    def __and__(self, other):
        return logical_and(self, other)

    def __rand__(self, other):
        return logical_and(other, self)

    def __or__(self, other):
        return logical_or(self, other)

    def __ror__(self, other):
        return logical_or(other, self)

    def __invert__(self):
        return logical_not(self)

    def astype(self, dtype: str) -> PrimExpr:
        """Cast this expression to ``dtype``."""
        return cast(self, dtype)

    def __bool__(self) -> bool:
        raise DSLError(
            "a symbolic expression cannot be used as a Python bool (in `if`, `and`, `or`, "
            "`not`); use te.if_then_else(cond, a, b), te.all(...) / te.any(...) or & | ~"
        )


class PrimExpr(ExprOp):
    """Base class of scalar expressions; every node has a ``dtype``."""

    __slots__ = ()
    dtype: str

    def __hash__(self) -> int:
        return structural_hash(self)

    def __repr__(self) -> str:
        from .printer import expr_to_str

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
class Div(BinaryOp):
    """a / b: true division for floats, truncated division for integers."""


@_node
class Mod(BinaryOp):
    """Truncated modulo (C's %): the remainder has the sign of the dividend."""


@_node
class FloorDiv(BinaryOp):
    """Floor division (Python's //)."""


@_node
class FloorMod(BinaryOp):
    """Floor modulo (Python's %): the remainder has the sign of the divisor."""


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
    """An intrinsic call by name (``exp``, ``if_then_else``, ``pow``...)."""

    op: str
    args: tuple
    dtype: str


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
        return f"range(min={int(self.min)}, ext={int(self.extent)})"


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
    if type(a) is not type(b):
        return False
    if isinstance(a, Var):
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
    """A hash consistent with :func:`structural_equal`."""
    if isinstance(e, Var):
        return id(e)
    return hash((type(e).__name__,) + tuple(_value_hash(getattr(e, f)) for f in node_fields(e)))


# --------------------------------------------------------------------------------------
# Construction helpers with dtype checking

_PY_SCALARS = (bool, int, float, np.bool_, np.integer, np.floating)


def _convertible(x: object) -> bool:
    return isinstance(x, (ExprOp,) + _PY_SCALARS)


def const(value: object, dtype: str | None = None) -> PrimExpr:
    """A constant; the dtype defaults to int32 for ints, float32 for floats, bool for bools."""
    if dtype is None:
        if isinstance(value, (bool, np.bool_)):
            dtype = "bool"
        elif isinstance(value, (int, np.integer)):
            dtype = "int32"
        elif isinstance(value, (float, np.floating)):
            dtype = "float32"
        else:
            raise DSLError(f"cannot make a constant from {value!r} of type {type(value).__name__}")
    dtype = dtypes.canonical(dtype)
    if dtypes.is_float(dtype):
        return FloatImm(float(value), dtype)
    if isinstance(value, (float, np.floating)) and not float(value).is_integer():
        raise DTypeError(f"constant {value!r} is not an integer and cannot have dtype {dtype}")
    ivalue = int(value)
    if dtypes.is_bool(dtype):
        return IntImm(int(bool(ivalue)), "bool")
    lo, hi = dtypes.int_range(dtype)
    if not lo <= ivalue <= hi:
        raise DTypeError(f"constant {ivalue} is out of the range of {dtype} [{lo}, {hi}]")
    return IntImm(ivalue, dtype)


def as_expr(x: object) -> PrimExpr:
    """Convert a Python scalar, IterVar or expression to a PrimExpr."""
    if isinstance(x, PrimExpr):
        return x
    if isinstance(x, ExprOp):
        return x._as_operand()
    if isinstance(x, _PY_SCALARS):
        return const(x)
    raise DSLError(
        f"expected an expression or a number, got {type(x).__name__} {x!r}"
        + (
            "; a tensor must be indexed, e.g. A[i, j]"
            if hasattr(x, "op") and hasattr(x, "shape")
            else ""
        )
    )


def cast(x: object, dtype: str) -> PrimExpr:
    """Convert ``x`` to ``dtype``; a no-op when it already has it."""
    dtype = dtypes.canonical(dtype)
    e = as_expr(x)
    if e.dtype == dtype:
        return e
    if isinstance(e, (IntImm, FloatImm)) and not dtypes.is_bool(dtype):
        value = const_value(e)
        if dtypes.is_int(dtype):
            if isinstance(value, float) and not np.isfinite(value):
                return Cast(e, dtype)  # no integer holds inf or NaN: leave it to run time
            value = int(value)  # float -> int truncates, as Cast does
            lo, hi = dtypes.int_range(dtype)
            if lo <= value <= hi:
                return IntImm(value, dtype)
        elif dtypes.is_float(dtype):
            return FloatImm(float(value), dtype)
    return Cast(e, dtype)


def const_value(e: IntImm | FloatImm) -> int | float:
    """The value a constant really has: a FloatImm keeps the number it was written with,
    so round it to its dtype first (``const(0.1, "float32")`` is 0.10000000149...)."""
    if isinstance(e, FloatImm):
        with np.errstate(over="ignore"):
            return float(np.dtype(e.dtype).type(e.value))
    return int(e.value)


def _const_for(value: object, other: PrimExpr, what: str) -> tuple[PrimExpr, PrimExpr]:
    """Turn a Python scalar into a constant matching ``other``; may widen ``other``."""
    if isinstance(value, (bool, np.bool_)):
        if dtypes.is_bool(other.dtype):
            return IntImm(int(value), "bool"), other
        value = int(value)
    if isinstance(value, (float, np.floating)) and not dtypes.is_float(other.dtype):
        if dtypes.is_bool(other.dtype):
            raise DTypeError(f"operator {what}: cannot mix bool with a float constant")
        return FloatImm(float(value), "float32"), cast(other, "float32")
    if dtypes.is_bool(other.dtype) and what not in ("==", "!="):
        raise DTypeError(
            f"operator {what}: bool does not take part in arithmetic; cast it with .astype('int32')"
        )
    return const(value, other.dtype), other


def match_operands(a: object, b: object, what: str) -> tuple[PrimExpr, PrimExpr]:
    """Convert both operands and bring them to a common dtype (see ``dtypes.promote``)."""
    a_py = isinstance(a, _PY_SCALARS)
    b_py = isinstance(b, _PY_SCALARS)
    if a_py and b_py:
        return as_expr(a), as_expr(b)
    if a_py:
        ca, eb = _const_for(a, as_expr(b), what)
        return ca, eb
    if b_py:
        cb, ea = _const_for(b, as_expr(a), what)
        return ea, cb
    ea, eb = as_expr(a), as_expr(b)
    if ea.dtype == eb.dtype:
        return ea, eb
    if what in ("==", "!=") and dtypes.is_bool(ea.dtype) and dtypes.is_bool(eb.dtype):
        return ea, eb
    target = dtypes.promote(ea.dtype, eb.dtype, f"operator {what}")
    return cast(ea, target), cast(eb, target)


def binary(cls: type, a: object, b: object, what: str) -> PrimExpr:
    """Build ``cls(a, b)`` after operand conversion and dtype matching."""
    ea, eb = match_operands(a, b, what)
    if issubclass(cls, CmpOp):
        return cls(ea, eb)
    if dtypes.is_bool(ea.dtype):
        raise DTypeError(
            f"operator {what}: bool does not take part in arithmetic; cast with .astype('int32')"
        )
    return cls(ea, eb, ea.dtype)


def _as_bool(x: object, what: str) -> PrimExpr:
    if isinstance(x, (bool, np.bool_)):
        return IntImm(int(x), "bool")
    e = as_expr(x)
    if not dtypes.is_bool(e.dtype):
        raise DTypeError(
            f"{what} expects a bool condition, got {e.dtype} expression {e}; "
            "compare it first, e.g. x != 0"
        )
    return e


def logical_and(a: object, b: object) -> PrimExpr:
    """Logical and of two bool expressions."""
    return And(_as_bool(a, "and (&)"), _as_bool(b, "and (&)"))


def logical_or(a: object, b: object) -> PrimExpr:
    """Logical or of two bool expressions."""
    return Or(_as_bool(a, "or (|)"), _as_bool(b, "or (|)"))


def logical_not(a: object) -> PrimExpr:
    """Logical negation of a bool expression."""
    return Not(_as_bool(a, "not (~)"))


def select(condition: object, true_value: object, false_value: object) -> PrimExpr:
    """Eager choice between two values of one dtype (both are evaluated)."""
    cond = _as_bool(condition, "select")
    t, f = match_operands(true_value, false_value, "select")
    return Select(cond, t, f, t.dtype)


def if_then_else(condition: object, true_value: object, false_value: object) -> PrimExpr:
    """Lazy choice: only the branch selected by ``condition`` is evaluated.

    Guarded reads are therefore safe: ``if_then_else(i < n, A[i], 0.0)`` never reads
    ``A[n]``.
    """
    cond = _as_bool(condition, "if_then_else")
    t, f = match_operands(true_value, false_value, "if_then_else")
    return Call("if_then_else", (cond, t, f), t.dtype)


# --------------------------------------------------------------------------------------
# Generic traversal


#: Field names that may hold sub-expressions (others hold names, dtypes, tensors...).
_CHILD_NAMES = frozenset(
    {
        "a",
        "b",
        "value",
        "condition",
        "true_value",
        "false_value",
        "args",
        "indices",
        "source",
        "base",
        "stride",
    }
)
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


def _child_fields(cls: type) -> tuple[str, ...]:
    names = _CHILD_FIELDS.get(cls)
    if names is None:
        names = tuple(f for f in _fields(cls) if f in _CHILD_NAMES)
        _CHILD_FIELDS[cls] = names
    return names


def children(e: PrimExpr) -> list[PrimExpr]:
    """The direct sub-expressions of ``e``, in field order."""
    out = []
    for f in _child_fields(type(e)):
        v = getattr(e, f)
        if isinstance(v, PrimExpr):
            out.append(v)
        elif isinstance(v, tuple):
            out.extend(item for item in v if isinstance(item, PrimExpr))
    return out


def _collect(e: PrimExpr, out: list) -> None:
    for f in _child_fields(type(e)):
        v = getattr(e, f)
        if isinstance(v, PrimExpr):
            _collect(v, out)
        elif isinstance(v, tuple):
            for item in v:
                if isinstance(item, PrimExpr):
                    _collect(item, out)
    out.append(e)


def post_order(e: PrimExpr) -> list[PrimExpr]:
    """Every sub-expression of ``e`` (``e`` last), children before parents."""
    out: list[PrimExpr] = []
    _collect(e, out)
    return out


def map_children(e: PrimExpr, fn) -> PrimExpr:
    """Rebuild ``e`` with ``fn`` applied to each direct sub-expression (same node if unchanged)."""
    changed = False
    values = {}
    for f in node_fields(e):
        v = getattr(e, f)
        if isinstance(v, PrimExpr):
            nv = fn(v)
            changed |= nv is not v
            values[f] = nv
        elif isinstance(v, tuple) and any(isinstance(item, PrimExpr) for item in v):
            nv = tuple(fn(item) if isinstance(item, PrimExpr) else item for item in v)
            changed |= any(p is not q for p, q in zip(nv, v))
            values[f] = nv
        else:
            values[f] = v
    if not changed:
        return e
    return type(e)(**values)


def substitute(e: PrimExpr, mapping: dict) -> PrimExpr:
    """Replace variables in ``e`` by expressions (keys are Var objects)."""
    if not mapping:
        return e
    memo: dict[int, PrimExpr] = {}

    def visit(node: PrimExpr) -> PrimExpr:
        if isinstance(node, Var):
            return mapping.get(node, node)
        key = id(node)
        hit = memo.get(key)
        if hit is not None:
            return hit
        out = map_children(node, visit)
        memo[key] = out
        return out

    return visit(e)


def free_vars(e: PrimExpr) -> set:
    """The set of Var objects appearing in ``e``."""
    return {n for n in post_order(e) if isinstance(n, Var)}
