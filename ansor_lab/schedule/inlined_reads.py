"""What a stage reads once the inlined stages are substituted: its body and its loads.

Sketch rules, primitives' checks and bound inference ask these questions of every stage
pair at every step, on states that differ only in loops and attachments: the answer
depends on nothing but the stage's operation and the inlined operations (by identity:
cache_read and cache_write give a stage a new op under its old name). Ops are shared by
all copies of a state (never copied), so one cache serves every state of a search: a
chain of eight row reductions spent 21 of its 25 s of sketch generation substituting the
same inlined bodies again.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from ..dsl import expr as E
from .attachment import Inline

#: (id(op), {(name, id(op)) inlined}) -> (op, inlined body, {op name: [read index
#: tuples]}, the inlined ops): the entry holds every op its key names, so no id in a live
#: key can be reused by a new object
_CACHE: OrderedDict = OrderedDict()
_CACHE_SIZE = 4096
# a search runs in a background thread (the notebook's tune widget) while the user lowers
# in the main one: the cache's bookkeeping is done under this lock (the work is not)
_LOCK = threading.Lock()


def _inline_ops(state) -> dict:
    # (isinstance rather than the properties: this runs for every stage at every step)
    return {
        s.op.name: s for s in state.stages.values() if isinstance(s.attach, Inline) and s.is_compute
    }


def _key(inline_ops: dict) -> frozenset:
    return frozenset((name, id(st.op)) for name, st in inline_ops.items())


def _inlined(op, inline_ops: dict, key: frozenset) -> tuple:
    with _LOCK:
        hit = _CACHE.get((id(op), key))
        if hit is not None and hit[0] is op:
            _CACHE.move_to_end((id(op), key))
            return hit[1], hit[2]

    def visit(e):
        if isinstance(e, E.TensorLoad) and e.tensor.op.name in inline_ops:
            producer = inline_ops[e.tensor.op.name].op
            pbody = _inlined(producer, inline_ops, key)[0]
            idx = tuple(visit(i) for i in e.indices)
            return E.substitute(pbody, {iv.var: i for iv, i in zip(producer.axis, idx)})
        return E.map_children(e, visit)

    body = visit(op.body[0])
    reads: dict = {}
    for n in E.post_order(body):
        if isinstance(n, E.TensorLoad):
            reads.setdefault(n.tensor.op.name, []).append(n.indices)
    with _LOCK:
        _CACHE[(id(op), key)] = (op, body, reads, tuple(st.op for st in inline_ops.values()))
        while len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    return body, reads


def _lookup(state, stage) -> tuple:
    inline_ops = _inline_ops(state)
    return _inlined(stage.op, inline_ops, _key(inline_ops))


def inlined_body(state, stage) -> E.PrimExpr:
    """``stage``'s expression with the bodies of inlined producers substituted in."""
    return _lookup(state, stage)[0]


def read_table(state, stage) -> dict:
    """{op name: [index tuples]} of what ``stage`` reads once inlined stages are
    substituted. Shared by every state with the same inlined set: do not modify it."""
    return _lookup(state, stage)[1]


def read_ops(state, stage) -> set[str]:
    """Names of the operations ``stage`` reads once inlined stages are substituted."""
    return set(_lookup(state, stage)[1])


def effective_reads(state, reader, producer) -> list[tuple]:
    """Index tuples with which ``reader`` reads ``producer`` once inlined stages are
    substituted (an inlined stage in between reads on the reader's behalf)."""
    return list(_lookup(state, reader)[1].get(producer.op.name, ()))


def effective_consumers(state, block: str) -> list:
    """Non-inlined compute stages that read ``block`` directly or through inlined stages."""
    producer = state.stage(block)
    inline_ops = _inline_ops(state)
    key = _key(inline_ops)
    return [
        s
        for s in state.stages.values()
        if not isinstance(s.attach, Inline)
        and s.is_compute
        and s is not producer
        and producer.op.name in _inlined(s.op, inline_ops, key)[1]
    ]
