"""The value of a buffer store ``B[i] = value`` in the buffer's dtype, or a refusal.

A number literal (``B[i] = 0``, ``T.float32(0)``, ``1`` into a float buffer) is converted
to the buffer's dtype, as TVM does, when the buffer holds it exactly. An expression of
another dtype is converted as TVM's script builder converts it (an int64 index into an
int32 buffer, an int into a float one, float32 into float16), except a float stored into
an integer buffer, which TVM only warns about: it truncates (``A[i] * 1.5`` into int32),
so it is refused and the message writes the ``T.Cast`` that says so on purpose.
"""

from __future__ import annotations

import ast
from typing import Any

import numpy as np

from ..dsl import dtypes, expr as E
from ..dsl.construct import cast, const, const_value
from ..errors import ScriptError


def _literal(value: Any) -> int | float | bool | None:
    if isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, (E.IntImm, E.FloatImm)):
        return bool(value.value) if value.dtype == "bool" else const_value(value)
    return None


def _holds(dtype: str, number: int | float | bool) -> bool:
    """Whether ``dtype`` holds ``number`` exactly (floats: without overflowing)."""
    if dtypes.is_bool(dtype):
        return True  # any number is a truth value (what bool buffers always took)
    if dtypes.is_int(dtype):
        if isinstance(number, float) and not number.is_integer():
            return False
        lo, hi = dtypes.int_range(dtype)
        return lo <= int(number) <= hi
    with np.errstate(over="ignore"):
        rounded = float(np.dtype(dtype).type(number))
    return bool(np.isfinite(rounded)) or not np.isfinite(float(number))


def store_value(target: ast.AST, value_node: ast.AST, dtype: str, value: Any) -> E.PrimExpr:
    """``value`` (a number or an expression) as the ``dtype`` a store to ``target`` needs."""
    where = ast.unparse(target)
    name = ast.unparse(target.value) if isinstance(target, ast.Subscript) else where
    number = _literal(value)
    if number is not None:
        if not _holds(dtype, number):
            raise ScriptError(
                f"buffer {name!r} holds {dtype}, which cannot hold the constant {number!r} "
                f"exactly; store a value it holds, or write {where} = "
                f'T.Cast("{dtype}", {ast.unparse(value_node)}) to convert it on purpose'
            )
        if isinstance(value, E.PrimExpr) and value.dtype == dtype:
            return value
        return cast(const(number), dtype) if dtypes.is_bool(dtype) else const(number, dtype)
    value = E.as_expr(value)
    if value.dtype == dtype:
        return value
    if not (dtypes.is_float(value.dtype) and not dtypes.is_float(dtype)):
        return cast(value, dtype)
    if value.dtype != dtype:
        raise ScriptError(
            f"buffer {name!r} holds {dtype} but the value stored into it is {value.dtype}; "
            f'convert it explicitly: {where} = T.Cast("{dtype}", {ast.unparse(value_node)})'
        )
    return value
