"""Plain TVMScript programs -> compute definitions, so tir.Schedule and the tuner take them.

A parsed function is "plain" when each block sits alone in its own perfect nest of serial
loops that are exactly its iteration variables (as ``te.create_prim_func`` prints them):
then every block is a ``te.compute`` (a reduction when it has an init and an update
``C[...] = C[...] + x`` / ``T.max(C[...], x)`` / ``T.min``), and the function is
``create_prim_func`` of those tensors. Anything else (hand-fused loops, predicates on
spatial blocks, several writers of one buffer) stays a loop program: it builds as
written, and ``tir.Schedule`` says why it cannot schedule it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..dsl import expr as E, intrin
from ..dsl.tensor import Tensor, compute, placeholder, reduce_axis
from ..ir import nodes as N
from .stmts import BlockInfo


class NotPlain(Exception):
    """Why a parsed function is not a set of compute definitions."""


@dataclass(frozen=True)
class ScriptOnlySource:
    """``PrimFunc.source`` of a parsed loop program: why it is not plain computes, and the
    kind ("S"/"R") of every block iteration variable (tir.Schedule's loop primitives check
    their legality with it)."""

    reason: str
    iter_kinds: dict = field(default_factory=dict, compare=False)
    loop_program: bool = True


def _peel(body: N.Stmt) -> tuple[list, list]:
    allocs = []
    while isinstance(body, N.Allocate):
        allocs.append(body.buffer)
        body = body.body
    roots = list(body.seq) if isinstance(body, N.SeqStmt) else [body]
    return allocs, roots


def _nest(root: N.Stmt) -> tuple[list, N.Block]:
    loops = []
    s = root
    while isinstance(s, N.For):
        if s.kind != "serial":
            raise NotPlain(f"loop {s.loop_var.name} is {s.kind}")
        loops.append(s)
        s = s.body
    if not isinstance(s, N.Block):
        raise NotPlain("a loop nest holds more than one block (hand-fused loops)")
    return loops, s


def _load_of(e: object, buffer: N.Buffer, indices: tuple) -> bool:
    return (
        isinstance(e, N.BufferLoad)
        and e.buffer is buffer
        and all(a is b or (isinstance(a, E.Var) and a is b) for a, b in zip(e.indices, indices))
    )


def _guarded(e: E.PrimExpr, identity: E.PrimExpr) -> tuple | None:
    """(cond, x) for ``T.if_then_else(cond, x, identity)``, else None."""
    if isinstance(e, E.Call) and e.op == "if_then_else" and len(e.args) == 3:
        zero = e.args[2]
        if isinstance(zero, (E.IntImm, E.FloatImm)) and float(zero.value) == float(identity.value):
            return e.args[0], e.args[1]
    return None


def _reads(e: E.PrimExpr) -> set:
    return {x.buffer for x in E.post_order(e) if isinstance(x, N.BufferLoad)}


class _Converter:
    def __init__(self, params: tuple, blocks: list[BlockInfo]) -> None:
        self.params = params
        self.info = {b.node: b for b in blocks}
        self.tensors: dict = {}
        self.written: set = set()

    def tensor_of(self, buf: N.Buffer) -> Tensor:
        if buf not in self.tensors:
            if buf not in self.params:
                raise NotPlain(f"buffer {buf.name!r} is read before any block writes it")
            self.tensors[buf] = placeholder(buf.shape, buf.dtype, buf.name)
        return self.tensors[buf]

    def rewrite(self, e: E.PrimExpr, mapping: dict) -> E.PrimExpr:
        if isinstance(e, E.Var):
            return mapping.get(e, e)
        if isinstance(e, N.BufferLoad):
            idx = tuple(self.rewrite(i, mapping) for i in e.indices)
            return self.tensor_of(e.buffer)[idx]
        return E.map_children(e, lambda c: self.rewrite(c, mapping))

    def block(self, root: N.Stmt) -> None:
        loops, node = _nest(root)
        info = self.info.get(node)
        if (
            info is None
            or info.where is not None
            and not any(iv.kind == "R" for iv in info.iter_vars)
        ):
            raise NotPlain(f"block {node.name!r} has a predicate (T.where) on a spatial block")
        if len(loops) != len(info.iter_vars) or any(
            iv.binding is not loop.loop_var
            or not (isinstance(loop.min, E.IntImm) and loop.min.value == iv.min == 0)
            or not (isinstance(loop.extent, E.IntImm) and loop.extent.value == iv.extent)
            for iv, loop in zip(info.iter_vars, loops)
        ):
            raise NotPlain(f"block {info.name!r}'s loops are not its own axes in order")
        spatial = [iv for iv in info.iter_vars if iv.kind == "S"]
        reduce = [iv for iv in info.iter_vars if iv.kind == "R"]
        if info.iter_vars.index(spatial[-1]) > len(spatial) - 1 if spatial and reduce else False:
            raise NotPlain(f"block {info.name!r} has a spatial loop inside a reduction loop")
        store = info.body
        if not isinstance(store, N.BufferStore):
            raise NotPlain(f"block {info.name!r} does more than one store")
        out = store.buffer
        if out in self.written or len(out.shape) != len(spatial):
            raise NotPlain(f"buffer {out.name!r} is written by several blocks or partially")
        if tuple(store.indices) != tuple(iv.var for iv in spatial) or tuple(out.shape) != tuple(
            iv.extent for iv in spatial
        ):
            raise NotPlain(f"block {info.name!r} does not write {out.name!r} at its own axes")
        value = store.value
        raxes = {iv.var: reduce_axis((0, iv.extent), _axis_name(iv)) for iv in reduce}
        if reduce:
            value = self._reduction(info, store, raxes)
        elif out in _reads(value):
            raise NotPlain(f"block {info.name!r} reads the buffer it writes")
        names = [_axis_name(iv) for iv in spatial]

        def fcompute(*axis_vars: E.Var) -> E.PrimExpr:
            mapping = dict(zip((iv.var for iv in spatial), axis_vars))
            mapping.update({v: ax.var for v, ax in raxes.items()})
            return self.rewrite_top(value, mapping, raxes)

        fcompute.__signature__ = _signature(names)  # type: ignore[attr-defined]
        self.tensors[out] = compute(out.shape, fcompute, info.name)
        self.written.add(out)

    def rewrite_top(self, value: object, mapping: dict, raxes: dict) -> E.PrimExpr:
        if isinstance(value, tuple):  # (combiner, source, condition)
            combiner, source, cond = value
            reducer = {"sum": intrin.sum, "max": intrin.max, "min": intrin.min}[combiner]
            where = self.rewrite(cond, mapping) if cond is not None else None
            axes = list(raxes.values())
            return reducer(self.rewrite(source, mapping), axis=axes, where=where)
        return self.rewrite(value, mapping)

    def _reduction(self, info: BlockInfo, store: N.BufferStore, raxes: dict) -> tuple:
        init = info.init
        if not isinstance(init, N.BufferStore) or init.buffer is not store.buffer:
            raise NotPlain(f"block {info.name!r}: a reduction needs T.init() storing its output")
        if not isinstance(init.value, (E.IntImm, E.FloatImm)):
            raise NotPlain(f"block {info.name!r}: the init value is not a constant")
        v = store.value
        combiner = {E.Add: "sum", E.Max: "max", E.Min: "min"}.get(type(v))
        if combiner is None:
            raise NotPlain(f"block {info.name!r}: the update is not +, T.max or T.min")
        if _load_of(v.a, store.buffer, store.indices):
            source = v.b
        elif _load_of(v.b, store.buffer, store.indices):
            source = v.a
        else:
            raise NotPlain(f"block {info.name!r}: the update does not accumulate into itself")
        identity = intrin.reduce_identity(combiner, store.buffer.dtype)
        if float(init.value.value) != float(identity.value):
            raise NotPlain(f"block {info.name!r}: the init is not the identity of {combiner}")
        if store.buffer in _reads(source):
            raise NotPlain(f"block {info.name!r} reads its output in the reduced value")
        where = info.where
        guarded = _guarded(source, identity)
        if guarded is not None and where is None:  # how a te.sum(..., where=) prints
            where, source = guarded
        return (combiner, source, where)

    def convert(self, body: N.Stmt) -> list[Tensor]:
        _, roots = _peel(body)
        for root in roots:
            self.block(root)
        args = []
        for p in self.params:
            args.append(self.tensors[p] if p in self.tensors else self.tensor_of(p))
        if not any(p in self.written for p in self.params):
            raise NotPlain("no parameter is written")
        return args


def _axis_name(iv: object) -> str:
    """The axis takes the name of the loop the block variable is bound to (``i`` for
    ``vi = T.axis.spatial(8, i)``), so scheduled loops are named as in TVM (``i_0``)."""
    binding = iv.binding
    return binding.name if isinstance(binding, E.Var) else iv.var.name


def _signature(names: list):
    import inspect  # noqa: PLC0415 - only to name te.compute's axes like the script's

    return inspect.Signature(
        [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in names]
    )


def to_tensors(params: tuple, body: N.Stmt, blocks: list[BlockInfo]) -> list[Tensor]:
    """The argument tensors of a plain parsed function; NotPlain says why not."""
    return _Converter(params, blocks).convert(body)
