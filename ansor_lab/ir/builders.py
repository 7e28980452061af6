"""TVM's small IR constructors: ``tir.decl_buffer``, ``tir.stmt_seq``, ``tir.stmt_list``,
``tir.convert``.

They build our nodes: ``decl_buffer`` a dense ``Buffer`` (a PrimFunc parameter, or a
``binds=`` entry of ``tvm.lower`` / ``tvm.build``); TVM's options that would change the
memory layout (padded strides, offsets, aliasing) are refused with what to write instead.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from ..dsl import dtypes, expr as E
from ..dsl.construct import ExprOp, as_expr, const
from ..errors import DSLError, IRError
from . import nodes as N


def _dims(shape: Any, name: str) -> tuple:
    items = shape if isinstance(shape, (tuple, list)) else (shape,)
    dims = []
    for d in items:
        if isinstance(d, E.IntImm) or (isinstance(d, numbers.Integral) and not isinstance(d, bool)):
            dims.append(int(d))
        else:
            raise IRError(
                f"tir.decl_buffer({name!r}): dimension {d!r} must be a positive int; buffers "
                "here have static shapes (a te.var shape is specialized when the built "
                "function is called: declare the tensor with te.placeholder instead)"
            )
    return tuple(dims)


def decl_buffer(
    shape: Any,
    dtype: str | None = None,
    name: str = "buffer",
    data: Any = None,
    strides: Any = None,
    elem_offset: Any = None,
    scope: str = "",
    data_alignment: int = -1,
    offset_factor: int = 0,
    buffer_type: str = "",
    axis_separators: Any = None,
    span: Any = None,
) -> N.Buffer:
    """A new buffer (TVM's ``tir.decl_buffer``; float32 by default): dense and row-major
    (``strides``, when given, must be the row-major ones).

    ``data_alignment`` and ``offset_factor`` are layout hints TVM uses for tensorize: they
    are accepted and change nothing here. ``data=`` (aliasing another buffer's storage), a
    non-zero ``elem_offset``, ``buffer_type="auto_broadcast"`` and ``axis_separators`` are
    refused with an IRError.
    """
    dims = _dims(shape, name)
    dtype = dtypes.canonical(dtype or "float32")
    refused = {
        "data": data is not None,
        "elem_offset": elem_offset is not None and not _is_zero(elem_offset),
        "buffer_type": buffer_type not in ("", "default"),
        "axis_separators": bool(axis_separators),
    }
    bad = [k for k, v in refused.items() if v]
    if bad:
        raise IRError(
            f"tir.decl_buffer({name!r}, {', '.join(f'{k}=...' for k in bad)}): buffers here "
            "own dense storage that starts at element 0; leave these out (to view one "
            "buffer with another shape, use T.Buffer(shape, data=A.data) in TVMScript)"
        )
    buf = N.Buffer(str(name), dims, dtype, scope or "global")
    if strides and tuple(_stride(s, name) for s in strides) != buf.strides:
        raise IRError(
            f"tir.decl_buffer({name!r}, strides={list(strides)}): arrays are passed dense "
            f"and row-major (strides {list(buf.strides)} here); leave strides out, and pad a "
            "buffer the program allocates with sch.storage_align / s[T].storage_align"
        )
    return buf


def _stride(s: Any, name: str) -> int:
    if isinstance(s, E.IntImm) or (isinstance(s, numbers.Integral) and not isinstance(s, bool)):
        return int(s)
    raise IRError(
        f"tir.decl_buffer({name!r}, strides=...): stride {s!r} must be an int; buffers here "
        "have constant strides (leave strides out for a dense row-major buffer)"
    )


def _is_zero(x: Any) -> bool:
    return isinstance(x, (int, E.IntImm)) and not isinstance(x, bool) and int(x) == 0


def is_default_buffer_of(buf: Any, shape: tuple, dtype: str) -> bool:
    """True when ``buf`` lays out a tensor of ``shape`` and ``dtype`` as the buffer made
    for it anyway (global, dense, row-major): binding it changes nothing."""
    return (
        isinstance(buf, N.Buffer)
        and tuple(buf.shape) == tuple(shape)
        and buf.dtype == dtype
        and buf.scope == "global"
        and buf.strides == N.Buffer(buf.name, buf.shape, buf.dtype).strides
    )


def stmt_seq(*args: Any) -> N.Stmt:
    """A sequence of statements (TVM's ``tir.stmt_seq``); expressions become Evaluate."""
    stmts = [a if isinstance(a, N.Stmt) else N.Evaluate(as_expr(a)) for a in args]
    return stmts[0] if len(stmts) == 1 else N.SeqStmt(tuple(stmts))


def stmt_list(stmt: N.Stmt) -> list:
    """The statements of a (nested) SeqStmt as a flat list (TVM's ``tir.stmt_list``)."""
    if isinstance(stmt, N.SeqStmt):
        return [s for part in stmt.seq for s in stmt_list(part)]
    return [stmt]


def convert(value: Any, span: Any = None) -> Any:
    """A Python value as IR values (TVM's ``tvm.tir.convert``): numbers become IntImm /
    FloatImm (ints beyond int32 are int64, as TVM), lists and dicts are converted item by
    item; expressions, strings and None pass unchanged."""
    if value is None or isinstance(value, (str, E.PrimExpr, N.Stmt, N.Buffer)):
        return value
    if isinstance(value, ExprOp):
        return as_expr(value)
    if isinstance(value, (bool, np.bool_)):
        return const(bool(value), "bool")
    if isinstance(value, (numbers.Integral, np.integer)):
        lo, hi = dtypes.int_range("int32")
        return const(int(value), "int32" if lo <= int(value) <= hi else "int64")
    if isinstance(value, (numbers.Real, np.floating)):
        return const(float(value), "float32")
    if isinstance(value, (list, tuple)):
        return [convert(v) for v in value]
    if isinstance(value, dict):
        return {convert(k): convert(v) for k, v in value.items()}
    raise DSLError(
        f"tir.convert: cannot convert {type(value).__name__} {value!r} to an IR value; "
        "pass a number, an expression, a string, or a list / dict of them"
    )
