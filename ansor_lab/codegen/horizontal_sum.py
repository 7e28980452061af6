"""The horizontal sum of partial results: one vector load and a shuffle tree per output.

A reduction whose partial results live in vector lanes (the search's ``rfactor`` onto a
vectorized loop, ``search/sketch_reduction.py``) ends with a loop that adds the ``L``
partial results of each output::

    for v in range(L):                       # annotated HORIZONTAL_SUM
        out[j] = out[j] + partial[j, v]      # partial[j, 0:L] contiguous

Emitted as written, that is ``L`` dependent scalar adds per output; left to LLVM, its
loop vectorizer took the loop around it and summed 768 GEMV rows with gathers (the
horizontal sum then cost more than streaming the 9 MiB weight matrix). The annotation
says the order of these additions may change (the partial results were reassociated
already: the rfactor block states it with ``ansor.fp_reassociation``), so the loop is
emitted as one ``<L x float>`` load and ``llvm.vector.reduce.fadd`` with ``reassoc``
(a log2(L)-deep tree of vector adds and shuffles), added to ``out[j]``.
"""

from __future__ import annotations

from dataclasses import dataclass

from llvmlite import ir

from ..dsl import dtypes, expr as E
from ..ir import nodes as N
from ..ir.simplify import linear_form, simplify_expr
from .access import const_int

#: the loop annotation the rfactor rule sets on the lane loop of the final sum
HORIZONTAL_SUM = "pragma_horizontal_sum"
#: the widest sum emitted as one vector (more lanes stay a loop)
MAX_LANES = 256


@dataclass(frozen=True)
class HorizontalSum:
    """A matched loop: ``store`` accumulates ``partial`` (contiguous in ``loop``'s var)."""

    loop: N.For
    store: N.BufferStore
    partial: N.BufferLoad
    lanes: int


def match(s: N.For, flat_index) -> HorizontalSum | None:
    """The horizontal sum ``s`` is, or None (then it is emitted as any loop)."""
    if not any(k == HORIZONTAL_SUM for k, _ in s.annotations):
        return None
    lanes, lo = const_int(s.extent), const_int(s.min)
    if lanes is None or lo != 0 or not 2 <= lanes <= MAX_LANES:
        return None
    body = s.body
    if not isinstance(body, N.BufferStore) or body.buffer.dtype not in ("float32", "float64"):
        return None
    v = s.loop_var
    if any(v in E.free_vars(i) for i in body.indices):
        return None
    value = body.value
    if not isinstance(value, E.Add):
        return None
    own = [
        x
        for x in (value.a, value.b)
        if isinstance(x, N.BufferLoad) and x.buffer is body.buffer and x.indices == body.indices
    ]
    other = [x for x in (value.a, value.b) if not own or x is not own[0]]
    if len(own) != 1 or len(other) != 1:
        return None
    part = other[0]
    if not isinstance(part, N.BufferLoad) or part.buffer is body.buffer:
        return None
    if part.dtype != body.buffer.dtype:
        return None
    form = linear_form(simplify_expr(flat_index(part.buffer, part.indices)))
    if form is None:
        return None
    coeffs, _ = form
    if coeffs.get(v, 0) != 1 or any(t is not v and v in E.free_vars(t) for t in coeffs):
        return None
    return HorizontalSum(s, body, part, lanes)


def emit(fb, m: HorizontalSum, memory_type) -> None:
    """``out = out + reduce_fadd(partial[..., 0:L])`` with builder ``fb``."""
    b = fb.b
    v = m.loop.loop_var
    zero = {v: E.IntImm(0, v.dtype)}
    dt = m.store.buffer.dtype
    mt = memory_type(dt)
    vt = ir.VectorType(mt, m.lanes)
    src = fb.address(m.partial.buffer, tuple(E.substitute(i, zero) for i in m.partial.indices))
    parts = b.load(src, typ=vt, align=dtypes.itemsize(dt))
    suffix = "f32" if dt == "float32" else "f64"
    reduce = fb.ctx.declare(f"llvm.vector.reduce.fadd.v{m.lanes}{suffix}", mt, [mt, vt])
    dst = fb.address(m.store.buffer, m.store.indices)
    start = b.load(dst, typ=mt, align=dtypes.itemsize(dt))
    total = b.call(reduce, [start, parts], fastmath=("reassoc", "contract"))
    b.store(total, dst, align=dtypes.itemsize(dt))
