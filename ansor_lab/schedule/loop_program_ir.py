"""The anatomy of a hand-written loop program, for its schedule primitives.

A TensorIR block of the loop IR (``ir.nodes.Block``) is taken apart into its iteration
variables (kind, domain, binding), predicate, init and body, and put back together the
same way the TVMScript parser builds it, so every primitive keeps the Block contract
(``axes`` = the leading lets, ``has_where``, ``has_init``). Also here: the blocks of a
program in order with what they read and write, the statements enclosing a node, and
tree edits (remove a statement and the loops it leaves empty, insert into a loop body).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..dsl import expr as E
from ..dsl.construct import logical_and
from ..errors import ScheduleError
from ..ir import nodes as N
from ..ir.simplify import _StmtSimplifier
from ..ir.visitor import IRMutator, post_order_visit, walk_stmts


@dataclass(frozen=True)
class IterVar:
    """One block iteration variable: its kind ("S"/"R"), domain and binding."""

    var: E.Var
    kind: str
    min: int
    extent: int
    binding: E.PrimExpr


@dataclass(frozen=True)
class BlockParts:
    """A block taken apart (``pack`` puts it back together)."""

    name: str
    iters: tuple
    where: E.PrimExpr | None
    init: N.Stmt | None
    body: N.Stmt
    annotations: tuple = ()

    def replace(self, **changes: object) -> BlockParts:
        """A copy with some parts changed."""
        values = {k: getattr(self, k) for k in self.__dataclass_fields__}
        values.update(changes)
        return BlockParts(**values)


def unpack(blk: N.Block, prim: str = "") -> BlockParts:
    """The parts of ``blk``; ScheduleError when it declares no iteration variables."""
    if not blk.axes:
        raise ScheduleError(
            f"{prim}: block {blk.name!r} declares no iteration variables, so what it reads "
            "and writes per iteration is unknown; declare them with T.axis.spatial/reduce/remap"
        )
    s, iters = blk.body, []
    for axis in blk.axes:
        iters.append(IterVar(s.var, axis.kind, axis.min, axis.extent, s.value))
        s = s.body
    where = None
    if blk.has_where:
        where, s = s.condition, s.then_case
    init = None
    if blk.has_init:
        items = list(s.seq) if isinstance(s, N.SeqStmt) else [s]
        init, s = items[0].then_case, N.seq(*items[1:])
    return BlockParts(blk.name, tuple(iters), where, init, s, blk.annotations)


def pack(p: BlockParts) -> N.Block:
    """The block of ``p``, built as the TVMScript parser builds one."""
    inner = p.body
    if p.init is not None:
        first = None
        for iv in p.iters:
            if iv.kind == "R":
                term = iv.var == iv.min
                first = term if first is None else logical_and(first, term)
        if first is None:
            raise ScheduleError(f"block {p.name!r}: an init needs a reduction variable")
        inner = N.seq(N.IfThenElse(first, p.init), inner)
    if p.where is not None:
        inner = N.IfThenElse(p.where, inner)
    for iv in reversed(p.iters):
        inner = N.LetStmt(iv.var, iv.binding, inner)
    axes = tuple(N.BlockAxis(iv.kind, iv.min, iv.extent) for iv in p.iters)
    return N.Block(p.name, inner, p.annotations, axes, p.where is not None, p.init is not None)


# --------------------------------------------------------------------------------------
# reads and writes


def loads(node: object, buf: N.Buffer | None = None) -> list[N.BufferLoad]:
    """Every load under a statement or expression (of ``buf`` only, when given)."""
    out: list = []

    def visit(n: object) -> None:
        if isinstance(n, N.BufferLoad) and (buf is None or n.buffer is buf):
            out.append(n)

    if isinstance(node, N.Stmt):
        post_order_visit(node, visit)
    else:
        for x in E.post_order(node):
            visit(x)
    return out


def stores(node: N.Stmt, buf: N.Buffer | None = None) -> list[N.BufferStore]:
    """Every store under a statement (to ``buf`` only, when given)."""
    return [
        s
        for s in walk_stmts(node)
        if isinstance(s, N.BufferStore) and (buf is None or s.buffer is buf)
    ]


def written(blk: N.Stmt) -> list[N.Buffer]:
    """The buffers a block writes, in order of first store."""
    return list(dict.fromkeys(s.buffer for s in stores(blk)))


def read(blk: N.Block) -> list[N.Buffer]:
    """The buffers a block reads, in order of first load; a reduction's own output is not
    counted (as TVM's ``T.reads`` of a reduction block lists only its inputs)."""
    own = set(written(blk)) if blk.has_init else set()
    return [b for b in dict.fromkeys(x.buffer for x in loads(blk)) if b not in own]


def reads_any(blk: N.Stmt, bufs: set) -> bool:
    """Whether a block loads any of ``bufs``."""
    return any(x.buffer in bufs for x in loads(blk))


def blocks_of(body: N.Stmt) -> list[N.Block]:
    """The blocks under ``body`` in program order."""
    return [s for s in walk_stmts(body) if isinstance(s, N.Block)]


def find_block(body: N.Stmt, name: str) -> N.Block | None:
    """The block called ``name``."""
    return next((b for b in blocks_of(body) if b.name == name), None)


def find_loop(body: N.Stmt, var: E.Var) -> N.For | None:
    """The loop over ``var``."""
    return next((s for s in walk_stmts(body) if isinstance(s, N.For) and s.loop_var is var), None)


# --------------------------------------------------------------------------------------
# where a statement is, and tree edits


def path_to(body: N.Stmt, target: N.Stmt) -> list[N.Stmt] | None:
    """The statements from ``body`` down to ``target`` (both included), or None."""
    if body is target:
        return [body]
    for name in body.__dataclass_fields__:
        v = getattr(body, name)
        kids = [v] if isinstance(v, N.Stmt) else list(v) if isinstance(v, tuple) else []
        for kid in kids:
            if isinstance(kid, N.Stmt):
                found = path_to(kid, target)
                if found is not None:
                    return [body, *found]
    return None


def loops_above(body: N.Stmt, target: N.Stmt) -> list[N.For]:
    """The loops enclosing ``target`` (outermost first)."""
    path = path_to(body, target) or []
    return [s for s in path[:-1] if isinstance(s, N.For)]


def items(s: N.Stmt) -> list[N.Stmt]:
    """The statements of a sequence (one statement is a sequence of one)."""
    return list(s.seq) if isinstance(s, N.SeqStmt) else [s]


def peel_allocs(body: N.Stmt) -> tuple[list[N.Buffer], N.Stmt]:
    """The top-level allocations of a function body and what they hold."""
    allocs = []
    while isinstance(body, N.Allocate):
        allocs.append(body.buffer)
        body = body.body
    return allocs, body


def wrap_allocs(allocs: list[N.Buffer], body: N.Stmt) -> N.Stmt:
    """``body`` under the allocations (outermost first)."""
    for buf in reversed(allocs):
        body = N.Allocate(buf, body)
    return body


class Replace(IRMutator):
    """Replace one statement (by identity)."""

    def __init__(self, old: N.Stmt, new: N.Stmt) -> None:
        self.old, self.new = old, new

    def visit_stmt(self, s: N.Stmt) -> N.Stmt:
        if s is self.old:
            return self.new
        return super().visit_stmt(s)


def _empty(s: N.Stmt | None) -> bool:
    return s is None or (isinstance(s, N.SeqStmt) and not s.seq)


def remove(body: N.Stmt, target: N.Stmt) -> N.Stmt:
    """``body`` without ``target``, and without the loops, ifs and lets it leaves empty."""

    def go(s: N.Stmt) -> N.Stmt | None:
        if s is target:
            return None
        if isinstance(s, N.SeqStmt):
            kept = [go(x) for x in s.seq]
            return (
                N.seq(*[k for k in kept if not _empty(k)])
                if any(k is not x for k, x in zip(kept, s.seq))
                else s
            )
        if isinstance(s, (N.For, N.LetStmt, N.Allocate, N.Block)):
            new = go(s.body)
            if new is s.body:
                return s
            if _empty(new) and not isinstance(s, N.Allocate):
                return None
            return _with_body(s, new if not _empty(new) else N.NOP)
        if isinstance(s, N.IfThenElse):
            then = go(s.then_case)
            other = go(s.else_case) if s.else_case is not None else None
            if then is s.then_case and other is s.else_case:
                return s
            if _empty(then) and _empty(other):
                return None
            return N.IfThenElse(s.condition, then if not _empty(then) else N.NOP, other)
        return s

    out = go(body)
    return N.NOP if out is None else out


def _with_body(s: N.Stmt, body: N.Stmt) -> N.Stmt:
    import dataclasses  # noqa: PLC0415 - only here

    return dataclasses.replace(s, body=body)


def insert_in_loop(body: N.Stmt, loop: N.Stmt | None, index: int, new: N.Stmt) -> N.Stmt:
    """``new`` placed at ``index`` among the statements of ``loop``'s body (a For's, or
    an IfThenElse's then-branch; the function's top level, inside its allocations, when
    ``loop`` is None)."""
    if loop is None:
        allocs, inner = peel_allocs(body)
        seq = items(inner)
        return wrap_allocs(allocs, N.seq(*seq[:index], new, *seq[index:]))
    seq = container_items(body, loop)
    inner = N.seq(*seq[:index], new, *seq[index:])
    if isinstance(loop, N.IfThenElse):
        changed = N.IfThenElse(loop.condition, inner, loop.else_case)
    else:
        changed = _with_body(loop, inner)
    return Replace(loop, changed).visit_stmt(body)


def container_items(body: N.Stmt, loop: N.Stmt | None) -> list[N.Stmt]:
    """The statements of ``loop``'s body (see insert_in_loop)."""
    if loop is None:
        return items(peel_allocs(body)[1])
    return items(loop.then_case if isinstance(loop, N.IfThenElse) else loop.body)


def item_index(seq: list[N.Stmt], node: N.Stmt) -> int | None:
    """Which of ``seq`` holds ``node``."""
    for k, item in enumerate(seq):
        if path_to(item, node) is not None:
            return k
    return None


def fresh_name(base: str, taken: set) -> str:
    """``base``, or ``base_1``, ``base_2``... when taken; the name is then taken."""
    name, k = base, 0
    while name in taken:
        k += 1
        name = f"{base}_{k}"
    taken.add(name)
    return name


def var_names(body: N.Stmt) -> set:
    """The names of the loop and let variables of a program."""
    return {
        s.loop_var.name if isinstance(s, N.For) else s.var.name
        for s in walk_stmts(body)
        if isinstance(s, (N.For, N.LetStmt))
    }


# --------------------------------------------------------------------------------------
# simplification that keeps blocks and loops


class KeepBlocks(_StmtSimplifier):
    """``simplify_stmt`` that keeps every block's lets, predicate and init (the Block
    contract) and every loop (a unit loop is a schedule handle, as in TVM)."""

    def stmt_For(self, s: N.For) -> N.Stmt:
        lo, ext = self.visit_expr(s.min), self.visit_expr(s.extent)
        l_lo, l_hi = self.an.bound(lo)
        _, e_hi = self.an.bound(ext)
        saved = self.an.var_bounds.get(s.loop_var)
        self.an.bind(s.loop_var, l_lo, l_hi + max(e_hi, 1) - 1)
        body = self.visit_stmt(s.body)
        if saved is None:
            del self.an.var_bounds[s.loop_var]
        else:
            self.an.var_bounds[s.loop_var] = saved
        if body is s.body and lo is s.min and ext is s.extent:
            return s
        return N.For(s.loop_var, lo, ext, s.kind, body, s.thread_tag, s.annotations)

    def stmt_Block(self, s: N.Block) -> N.Stmt:
        if not s.axes:
            return N.Block(s.name, self.visit_stmt(s.body), s.annotations)
        p = unpack(s)
        iters = []
        for iv in p.iters:
            binding = self.visit_expr(iv.binding)
            iters.append(IterVar(iv.var, iv.kind, iv.min, iv.extent, binding))
            # the binding's range, not the domain: a predicate may be what keeps it inside
            self.an.bind(iv.var, *self.an.bound(binding))
        where = self.visit_expr(p.where) if p.where is not None else None
        if isinstance(where, E.IntImm) and where.value:
            where = None
        init = self.visit_stmt(p.init) if p.init is not None else None
        return pack(p.replace(iters=tuple(iters), where=where, init=init,
                              body=self.visit_stmt(p.body)))  # fmt: skip


def simplify_program(body: N.Stmt) -> N.Stmt:
    """Simplify a loop program's expressions, keeping its blocks and loops."""
    return KeepBlocks().visit_stmt(body)
