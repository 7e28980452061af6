"""Intrinsics beyond the basic math of ``intrin``: float functions of two arguments, float
classification, and integer bit operations (``te.atan2``, ``te.isnan``, ``x & 15``...).

Semantics are numpy's, on every backend:

* ``atan2 fmod hypot copysign nextafter``: numpy's ``arctan2 fmod hypot copysign
  nextafter`` (``fmod``'s result has the sign of the dividend, as C's).
* ``isnan isinf isfinite``: bool; of an integer they are constants (False, False, True),
  as in TVM.
* ``bitwise_and / _or / _xor / _not`` (``& | ^ ~`` on integers): two's complement.
* ``shift_left / shift_right`` (``<< >>``): ``>>`` is arithmetic on signed integers; a
  shift by a negative amount or by at least the width gives 0 (``>>`` of a negative value:
  -1), as numpy's ``left_shift`` / ``right_shift`` -- C and LLVM leave it undefined, so the
  code generators test the amount.
* ``popcount``: set bits of the two's complement value, in the operand's dtype; ``clz``:
  leading zero bits, an int32 (TVM's dtypes).

A shift right by a constant is built as the floor division it equals, and ``x & (2**k -
1)`` as the floor modulo, so index expressions like ``A[i >> 1]`` get exact bounds.
"""

from __future__ import annotations

from ..errors import DTypeError
from . import dtypes, expr as E

#: Float intrinsics of two arguments (``pow`` lives in ``intrin``).
FLOAT_BINARY = ("atan2", "fmod", "hypot", "copysign", "nextafter")
#: Float classification: bool results.
FLOAT_PREDICATES = ("isnan", "isinf", "isfinite")
#: Integer bit operations.
INT_UNARY = ("popcount", "clz", "bitwise_not")
INT_BINARY = ("bitwise_and", "bitwise_or", "bitwise_xor", "shift_left", "shift_right")


def _float_pair(name: str, x: object, y: object) -> tuple[E.PrimExpr, E.PrimExpr]:
    a, b = E.match_operands(x, y, name)
    if not dtypes.is_float(a.dtype):
        raise DTypeError(f"te.{name} expects float operands, got {a.dtype}; cast them first")
    return a, b


def _float_binary(name: str):
    def fn(x: object, y: object) -> E.PrimExpr:
        a, b = _float_pair(name, x, y)
        if name == "nextafter" and a.dtype == "float16":
            # computed in float32 (as half math is), it would step by a float32 ulp
            raise DTypeError(
                "te.nextafter of float16 is not supported; compute it in float32: "
                "te.nextafter(x.astype('float32'), y.astype('float32'))"
            )
        return E.Call(name, (a, b), a.dtype)

    fn.__name__ = name
    fn.__doc__ = f"Elementwise {name} of two float expressions (numpy's semantics)."
    return fn


atan2 = _float_binary("atan2")
fmod = _float_binary("fmod")
hypot = _float_binary("hypot")
copysign = _float_binary("copysign")
nextafter = _float_binary("nextafter")


def _predicate(name: str, for_ints: bool):
    def fn(x: object) -> E.PrimExpr:
        e = E.as_expr(x)
        if not dtypes.is_float(e.dtype):
            return E.IntImm(int(for_ints), "bool")
        return E.Call(name, (e,), "bool")

    fn.__name__ = name
    fn.__doc__ = f"``{name}(x)`` as a bool expression ({for_ints} for an integer ``x``)."
    return fn


isnan = _predicate("isnan", False)
isinf = _predicate("isinf", False)
isfinite = _predicate("isfinite", True)


def _int_operand(name: str, x: object) -> E.PrimExpr:
    e = E.as_expr(x)
    if not dtypes.is_int(e.dtype):
        raise DTypeError(
            f"{name} expects an integer expression, got {e.dtype} ({e}); "
            + ("use & | ~ on bool conditions" if e.dtype == "bool" else "cast it first")
        )
    return e


def _int_pair(name: str, x: object, y: object) -> tuple[E.PrimExpr, E.PrimExpr]:
    a, b = E.match_operands(x, y, name)
    _int_operand(name, a)
    return a, b


def popcount(x: object) -> E.PrimExpr:
    """The number of set bits of an integer (two's complement), in its dtype."""
    e = _int_operand("popcount", x)
    return E.Call("popcount", (e,), e.dtype)


def clz(x: object) -> E.PrimExpr:
    """The number of leading zero bits of an integer (its width for 0), an int32."""
    e = _int_operand("clz", x)
    return E.Call("clz", (e,), "int32")


def bitwise_not(x: object) -> E.PrimExpr:
    """``~x`` of an integer: every bit flipped (``-x - 1``)."""
    e = _int_operand("bitwise_not", x)
    return E.Call("bitwise_not", (e,), e.dtype)


def _low_mask_bits(e: E.PrimExpr) -> int | None:
    """k when ``e`` is the constant 2**k - 1 (k >= 1), else None."""
    v = e.value if isinstance(e, E.IntImm) else None
    if isinstance(v, int) and v > 0 and (v + 1) & v == 0:
        return (v + 1).bit_length() - 1
    return None


def bitwise_and(x: object, y: object) -> E.PrimExpr:
    """``x & y`` of integers; ``x & (2**k - 1)`` is built as ``x % 2**k`` (equal in two's
    complement, and understood by bounds and the simplifier)."""
    a, b = _int_pair("bitwise_and", x, y)
    for p, q in ((a, b), (b, a)):
        k = _low_mask_bits(q)
        if k is not None and k < dtypes.bits(p.dtype) - 1:
            return E.FloorMod(p, E.const(1 << k, p.dtype), p.dtype)
    return E.Call("bitwise_and", (a, b), a.dtype)


def bitwise_or(x: object, y: object) -> E.PrimExpr:
    """``x | y`` of integers."""
    a, b = _int_pair("bitwise_or", x, y)
    return E.Call("bitwise_or", (a, b), a.dtype)


def bitwise_xor(x: object, y: object) -> E.PrimExpr:
    """``x ^ y`` of integers."""
    a, b = _int_pair("bitwise_xor", x, y)
    return E.Call("bitwise_xor", (a, b), a.dtype)


def shift_left(x: object, y: object) -> E.PrimExpr:
    """``x << y``: 0 when ``y`` is negative or at least the width (numpy's rule)."""
    a, b = _int_pair("shift_left", x, y)
    return E.Call("shift_left", (a, b), a.dtype)


def shift_right(x: object, y: object) -> E.PrimExpr:
    """``x >> y``, arithmetic for signed integers; by a constant ``0 <= y < width`` it is
    built as ``x // 2**y`` (equal, and understood by bounds and the simplifier)."""
    a, b = _int_pair("shift_right", x, y)
    v = b.value if isinstance(b, E.IntImm) else None
    if isinstance(v, int) and 0 <= v < dtypes.bits(a.dtype) - 1:
        return a if v == 0 else E.FloorDiv(a, E.const(1 << v, a.dtype), a.dtype)
    return E.Call("shift_right", (a, b), a.dtype)


#: Each function above by intrinsic name (the TVMScript parser and call_pure_extern).
BY_NAME = {
    name: globals()[name] for name in FLOAT_BINARY + FLOAT_PREDICATES + INT_UNARY + INT_BINARY
}
