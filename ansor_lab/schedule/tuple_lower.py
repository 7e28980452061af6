"""Lowering a tuple reduction (``te.comm_reducer`` over tuples, e.g. argmax).

The primary stage's loops update every output together: the old values and the new
sources are bound first (``x0, x1, y0, y1``), then each output is stored from them, so
no store sees another's new value. The companion stages (the other outputs) have no
loops: their buffers are written here, at the same (absolute) indices.
"""

from __future__ import annotations

from ..dsl import expr as E
from ..dsl.tuple_reduce import sources
from ..ir import nodes as N


def _guard(stmt: N.Stmt, conds: list) -> N.Stmt:
    if not conds:
        return stmt
    cond = conds[0]
    for c in conds[1:]:
        cond = E.And(cond, c)
    return N.IfThenElse(cond, stmt)


def tuple_stores(lw, stage, body: E.Reduce, values: dict, out_idx: tuple, guards: list):
    """(update, init) of a tuple reduction's primary stage (see the module docstring)."""
    comb = body.combiner
    targets = []
    for k, op in enumerate(comb.group.ops):
        if k == 0:
            targets.append((lw.info[stage.name].buffer, out_idx))
            continue
        info = lw.info[lw.by_op[op.name].name]
        targets.append((info.buffer, tuple(values[iv.var] for iv in op.axis)))
    srcs = [lw.translate(s, values) for s in sources(body)]
    olds = [N.BufferLoad(buf, idx, buf.dtype) for buf, idx in targets]
    # fresh variables per stage: two tuple reductions in one function bind their own
    xs = [E.Var(f"{stage.name}_{v.name}", v.dtype) for v in comb.lhs]
    ys = [E.Var(f"{stage.name}_{v.name}", v.dtype) for v in comb.rhs]
    rename = dict(zip(comb.lhs, xs)) | dict(zip(comb.rhs, ys))
    stores = [
        N.BufferStore(buf, E.substitute(r, rename), idx)
        for (buf, idx), r in zip(targets, comb.results)
    ]
    update: N.Stmt = N.seq(*stores)
    for var, value in reversed(list(zip(xs + ys, olds + srcs))):
        update = N.LetStmt(var, value, update)
    if body.condition is not None:
        update = N.IfThenElse(lw.translate(body.condition, values), update)
    spatial = [g for g, red in guards if not red]
    init = N.seq(*[N.BufferStore(buf, v, idx) for (buf, idx), v in zip(targets, comb.identities)])
    return _guard(update, [g for g, _ in guards]), _guard(init, spatial)
