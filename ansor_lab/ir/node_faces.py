"""IR nodes under TVM's names with TVM's constructors: ``tir.Ramp(base, stride, lanes)``,
``tir.Broadcast(value, lanes)``, ``tir.BufferLoad(buffer, indices)``, ``tir.For(...,
thread_binding=, annotations={...})`` and ``tir.SeqStmt([...])``.

Inside the package these nodes are built with every field, the vector dtype last
(``N.Ramp(base, stride, 8, "int32x8")``). The names users reach derive it, as TVM does,
and stay the classes of ``isinstance`` checks (see ``dsl.node_faces``):

    >>> r = tir.Ramp(0, 1, 8)
    >>> (r.dtype, isinstance(r, tir.Ramp), tir.Broadcast(1.5, 4).dtype)
    ('int32x8', True, 'float32x4')
"""

from __future__ import annotations

from typing import Any

from ..dsl import dtypes, expr as E
from ..dsl.construct import as_expr, match_operands
from ..dsl.node_faces import _NodeFace
from ..errors import IRError
from . import nodes as N


def _lanes(lanes: Any, what: str) -> int:
    value = lanes.value if isinstance(lanes, E.IntImm) else lanes
    if isinstance(value, bool) or not isinstance(value, int) or value < 2:
        raise IRError(
            f"tir.{what}: lanes must be an int >= 2 (a vector of 2 or more lanes), got {lanes!r}"
        )
    return value


def _scalar(e: E.PrimExpr, what: str) -> E.PrimExpr:
    if "x" in e.dtype:
        raise IRError(f"tir.{what}: takes a scalar, got {e} of dtype {e.dtype}")
    return e


class _RampFace(_NodeFace):
    def __call__(cls, base: Any, stride: Any, lanes: Any, span: Any = None) -> N.Ramp:
        b, s = match_operands(base, stride, "tir.Ramp")
        _scalar(b, "Ramp(base, stride, lanes)")
        if not dtypes.is_int(b.dtype):
            raise IRError(
                f"tir.Ramp(base, stride, lanes): base and stride are indices (integers), "
                f"got {b.dtype}; e.g. tir.Ramp(i * 8, 1, 8)"
            )
        n = _lanes(lanes, "Ramp(base, stride, lanes)")
        return N.Ramp(b, s, n, f"{b.dtype}x{n}")


class Ramp(metaclass=_RampFace):
    """``tir.Ramp(base, stride, lanes)``, as TVM: ``[base, base + stride, ...]``."""

    _node = N.Ramp


class _BroadcastFace(_NodeFace):
    def __call__(cls, value: Any, lanes: Any, span: Any = None) -> N.Broadcast:
        v = _scalar(as_expr(value), "Broadcast(value, lanes)")
        n = _lanes(lanes, "Broadcast(value, lanes)")
        return N.Broadcast(v, n, f"{v.dtype}x{n}")


class Broadcast(metaclass=_BroadcastFace):
    """``tir.Broadcast(value, lanes)``, as TVM: ``value`` in every lane."""

    _node = N.Broadcast


class _BufferLoadFace(_NodeFace):
    def __call__(
        cls, buffer: Any, indices: Any, predicate: Any = None, span: Any = None
    ) -> N.BufferLoad:
        if not isinstance(buffer, N.Buffer):
            raise IRError(
                f"tir.BufferLoad(buffer, indices): buffer must be a tir.Buffer "
                f"(tir.decl_buffer), got {type(buffer).__name__}"
            )
        if predicate is not None:
            raise IRError("tir.BufferLoad: a predicated load is not supported; use if_then_else")
        idx = tuple(
            as_expr(i) for i in (indices if isinstance(indices, (list, tuple)) else [indices])
        )
        if len(idx) != len(buffer.shape):
            raise IRError(
                f"tir.BufferLoad: buffer {buffer.name!r} has {len(buffer.shape)} dimensions, "
                f"got {len(idx)} indices"
            )
        floats = [i for i in idx if not dtypes.is_int(i.dtype)]
        if floats:
            raise IRError(
                f"tir.BufferLoad: indices are integers, got {floats[0]} of dtype "
                f"{floats[0].dtype}; cast it, e.g. tir.Cast('int32', x)"
            )
        lanes = {i.lanes for i in idx if isinstance(i, (N.Ramp, N.Broadcast))}
        if len(lanes) > 1:
            raise IRError(f"tir.BufferLoad: indices of different lanes {sorted(lanes)}")
        dtype = f"{buffer.dtype}x{lanes.pop()}" if lanes else buffer.dtype
        return N.BufferLoad(buffer, idx, dtype)


class BufferLoad(metaclass=_BufferLoadFace):
    """``tir.BufferLoad(buffer, indices)``, as TVM: ``buffer[indices]`` (a vector where
    an index is a ``Ramp``)."""

    _node = N.BufferLoad


class _ForFace(_NodeFace):
    def __call__(
        cls,
        loop_var: Any,
        min: Any,  # noqa: A002 - TVM's parameter name
        extent: Any,
        kind: Any,
        body: Any,
        thread_binding: Any = None,
        annotations: Any = None,
        step: Any = None,
        span: Any = None,
    ) -> N.For:
        if step is not None and not (isinstance(step, int) and step == 1):
            raise IRError(
                f"tir.For: a loop steps by 1 here, got step={step!r}; iterate over "
                "range(extent) and multiply the index instead (i * step)"
            )
        tag = ""
        if thread_binding is not None:  # TVM passes the IterVar of te.thread_axis
            tag = getattr(thread_binding, "thread_tag", thread_binding)
            if not isinstance(tag, str):
                raise IRError(
                    "tir.For: thread_binding must be te.thread_axis('threadIdx.x') (or its "
                    f"tag), got {thread_binding!r}"
                )
        pairs = ()
        if annotations:
            items = annotations.items() if isinstance(annotations, dict) else annotations
            pairs = tuple(sorted((str(k), v) for k, v in items))
        return N.For(loop_var, min, extent, kind, body, tag, pairs)


class For(metaclass=_ForFace):
    """``tir.For(loop_var, min, extent, kind, body, thread_binding=None,
    annotations=None)``, as TVM: ``kind`` a ``tir.ForKind``, ``annotations`` a dict."""

    _node = N.For


class _SeqStmtFace(_NodeFace):
    def __call__(cls, seq: Any, span: Any = None) -> N.SeqStmt:
        if isinstance(seq, N.Stmt):
            seq = [seq]
        stmts = tuple(seq)
        bad = [s for s in stmts if not isinstance(s, N.Stmt)]
        if bad:
            raise IRError(
                f"tir.SeqStmt(seq): every element must be a statement, got "
                f"{type(bad[0]).__name__}; wrap an expression as tir.Evaluate(e)"
            )
        return N.SeqStmt(stmts)


class SeqStmt(metaclass=_SeqStmtFace):
    """``tir.SeqStmt([s1, s2, ...])``, as TVM: the statements in order."""

    _node = N.SeqStmt
