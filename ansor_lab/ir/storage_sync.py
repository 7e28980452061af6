"""Barrier insertion: ``__syncthreads()`` exactly where a shared buffer changes hands.

TVM's ``storage_sync`` pass is the model. Inside each kernel the statements are walked in
program order, keeping the shared-memory accesses made since the last barrier. A new
access that conflicts with one of them (a read after another thread's write, a write
after another thread's read; two writes are not ordered by barriers, as in TVM) gets a
barrier just before the statement holding it, at the innermost level where every
thread of the block runs the same statements:

- a barrier is never put inside a region some threads skip (an ``if`` on a thread
  index, a thread loop shorter than its launch extent, a vectorized loop): the whole
  region counts as one statement and the barrier goes before it;
- a loop is checked against itself: the accesses left unsynchronized at the end of an
  iteration against those before the first barrier of the next (a tile refilled while
  other threads still read the last one gets a barrier at the top of the loop body);
- accesses of one thread only to what only it touches need none. Two accesses are
  thread-private when their flat indices are the same linear function of the thread
  indices, and the cells of different threads (the span each covers over its inner
  loops) cannot overlap. Everything else conflicts (conservative, as TVM).

"local" buffers belong to one thread and are never synchronized. The pass is
idempotent: barriers already in the function count as synchronization.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..dsl import expr as E
from . import gpu, nodes as N
from .simplify import Analyzer, linear_form
from .visitor import stmt_exprs, walk_stmts

SHARED_SCOPES = ("shared", "shared.dyn")


@dataclass(frozen=True)
class _Access:
    buffer: N.Buffer
    write: bool
    #: (thread coefficients {tag: c}, symbolic rest, lo, hi) of the flat index, or None
    form: tuple | None


@dataclass
class _Ctx:
    launch: dict  # tag -> launch extent of the kernel
    threads: dict  # thread loop var -> tag (threadIdx.* only)
    ranges: dict  # serial loop var -> (lo, hi): relaxed in an access's cell
    lets: dict  # let var -> value


def insert_barriers(func: N.PrimFunc) -> N.PrimFunc:
    """``func`` with a block barrier wherever threads hand shared memory to each other."""
    body = _map_kernels(func.body, _sync_kernel)
    return func if body is func.body else func.with_body(body)


def _map_kernels(body: N.Stmt, fn) -> N.Stmt:
    """Apply ``fn`` to every root statement below the global temporaries."""
    if isinstance(body, N.Allocate) and body.buffer.scope == "global":
        inner = _map_kernels(body.body, fn)
        return body if inner is body.body else replace(body, body=inner)
    if isinstance(body, N.SeqStmt):
        parts = tuple(_map_kernels(s, fn) for s in body.seq)
        return body if all(a is b for a, b in zip(parts, body.seq)) else N.seq(*parts)
    return fn(body)


def launch_extents(stmt: N.Stmt) -> dict:
    """Tag -> launch extent (the largest constant extent of a loop bound to it)."""
    out: dict = {}
    for s in walk_stmts(stmt):
        if isinstance(s, N.For) and s.kind == "thread_binding" and isinstance(s.extent, E.IntImm):
            out[s.thread_tag] = max(out.get(s.thread_tag, 1), s.extent.value)
    return out


def _sync_kernel(stmt: N.Stmt) -> N.Stmt:
    launch = launch_extents(stmt)
    if not any(gpu.is_thread_tag(t) and n > 1 for t, n in launch.items()):
        return stmt  # one thread per block (or not a kernel): nothing to hand over
    if not any(
        isinstance(s, N.Allocate) and s.buffer.scope in SHARED_SCOPES for s in walk_stmts(stmt)
    ):
        return stmt
    new, *_ = _plan(stmt, _Ctx(launch, {}, {}, {}))
    return new


# -- the planner: (new statement, head, tail, synced) ----------------------------------
# head: accesses before the first barrier inside; tail: accesses after the last one;
# synced: whether a barrier runs inside on every path (else head == tail == all)


def _plan(s: N.Stmt, ctx: _Ctx) -> tuple:
    if gpu.is_barrier(s):
        return s, [], [], True
    if isinstance(s, N.SeqStmt):
        return _plan_seq(s.seq, ctx)
    if isinstance(s, (N.Allocate, N.Block)):
        body, head, tail, synced = _plan(s.body, ctx)
        return (s if body is s.body else replace(s, body=body)), head, tail, synced
    if isinstance(s, N.LetStmt):
        lets = {**ctx.lets, s.var: E.substitute(s.value, ctx.lets) if ctx.lets else s.value}
        sub = _Ctx(ctx.launch, ctx.threads, ctx.ranges, lets)
        if not _uniform(s.value, ctx):
            return s, *_atomic(s, sub)
        body, head, tail, synced = _plan(s.body, sub)
        return (s if body is s.body else replace(s, body=body)), head, tail, synced
    if isinstance(s, N.IfThenElse):
        if not _uniform(s.condition, ctx):
            return s, *_atomic(s, ctx)
        then, h1, t1, s1 = _plan(s.then_case, ctx)
        if s.else_case is None:
            # the branch may not run: what is pending before it stays pending after it
            every = h1 + t1 if s1 else h1
            return replace(s, then_case=then), every, every, False
        other, h2, t2, s2 = _plan(s.else_case, ctx)
        new = replace(s, then_case=then, else_case=other)
        if s1 and s2:
            return new, h1 + h2, t1 + t2, True
        every = h1 + t1 + h2 + t2
        return new, every, every, False
    if isinstance(s, N.For):
        return _plan_for(s, ctx)
    return s, *_atomic(s, ctx)


def _plan_seq(stmts: tuple, ctx: _Ctx) -> tuple:
    out: list = []
    pending: list = []
    head: list = []
    synced = False
    for child in stmts:
        if gpu.is_barrier(child):
            if not synced:
                head, synced = pending, True
            pending = []
            out.append(child)
            continue
        new, h, t, s = _plan(child, ctx)
        if _conflict(pending, h, ctx):
            out.append(gpu.barrier())
            if not synced:
                head, synced = pending, True
            pending = []
        out.append(new)
        if s:
            if not synced:
                head, synced = pending + h, True
            pending = list(t)
        else:
            pending = pending + h
    if not synced:
        head = pending
    return N.seq(*out), head, pending, synced


def _plan_for(s: N.For, ctx: _Ctx) -> tuple:
    tag = s.thread_tag if s.kind == "thread_binding" else ""
    if gpu.is_thread_tag(tag):
        full = isinstance(s.extent, E.IntImm) and s.extent.value == ctx.launch.get(tag, 1)
        threads = {**ctx.threads, s.loop_var: tag}
        sub = _Ctx(ctx.launch, threads, ctx.ranges, ctx.lets)
        if not full:  # some threads skip it: no barrier may go inside
            return s, *_atomic(s, sub)
        body, head, tail, synced = _plan(s.body, sub)
        return (s if body is s.body else replace(s, body=body)), head, tail, synced
    if gpu.is_block_tag(tag):
        body, head, tail, synced = _plan(s.body, ctx)
        return (s if body is s.body else replace(s, body=body)), head, tail, synced
    bounds = _range(s, ctx)
    sub = _Ctx(ctx.launch, ctx.threads, {**ctx.ranges, s.loop_var: bounds}, ctx.lets)
    if (
        s.kind == "vectorized"
        or bounds is None
        or not (_uniform(s.min, ctx) and _uniform(s.extent, ctx))
    ):
        return s, *_atomic(s, sub)
    body, head, tail, synced = _plan(s.body, sub)
    if bounds[1] > bounds[0] and _conflict(tail, head, ctx):
        # the next iteration's first accesses race with this one's last: sync at the top
        body = N.seq(gpu.barrier(), body)
        tail = tail if synced else head
        head, synced = [], True
    return (s if body is s.body else replace(s, body=body)), head, tail, synced


def _range(s: N.For, ctx: _Ctx) -> tuple | None:
    an = Analyzer(ctx.ranges)
    lo, _ = an.bound(s.min)
    _, hi = an.bound(E.Add(s.min, s.extent, "int32"))
    if lo == float("-inf") or hi == float("inf"):
        return None
    return int(lo), int(hi) - 1


def _uniform(e: E.PrimExpr, ctx: _Ctx) -> bool:
    """Whether every thread of a block sees the same value of ``e``."""
    free = E.free_vars(E.substitute(e, ctx.lets) if ctx.lets else e)
    return not (free & ctx.threads.keys())


def _atomic(s: N.Stmt, ctx: _Ctx) -> tuple:
    acc = _accesses(s, ctx)
    return acc, acc, False


def _accesses(s: N.Stmt, ctx: _Ctx) -> list:
    """Shared-memory accesses of ``s``, each with its thread-relative flat index."""
    out: list = []
    seen: set = set()

    def add(buf: N.Buffer, indices: tuple, write: bool, inner: dict, threads: dict) -> None:
        if buf.scope not in SHARED_SCOPES:
            return
        acc = _Access(buf, write, _form(buf, indices, inner, threads, ctx))
        if acc not in seen:
            seen.add(acc)
            out.append(acc)

    def visit(node: N.Stmt, inner: dict, threads: dict) -> None:
        if isinstance(node, N.For):
            if node.kind == "thread_binding" and gpu.is_thread_tag(node.thread_tag):
                threads = {**threads, node.loop_var: node.thread_tag}
            else:
                lo, hi = _range(node, _Ctx(ctx.launch, threads, inner, ctx.lets)) or (0, 0)
                inner = {**inner, node.loop_var: (lo, hi)}
        for e in stmt_exprs(node):
            for sub in E.post_order(e):
                if isinstance(sub, N.BufferLoad):
                    add(sub.buffer, sub.indices, False, inner, threads)
        if isinstance(node, N.BufferStore):
            add(node.buffer, node.indices, True, inner, threads)
        for name in ("body", "then_case", "else_case"):
            child = getattr(node, name, None)
            if isinstance(child, N.Stmt):
                visit(child, inner, threads)
        if isinstance(node, N.SeqStmt):
            for child in node.seq:
                visit(child, inner, threads)

    visit(s, dict(ctx.ranges), dict(ctx.threads))
    return out


def _strides(buf: N.Buffer) -> tuple:
    if buf.padded_strides:
        return tuple(buf.padded_strides)
    out, acc = [], 1
    for n in reversed(buf.shape):
        out.append(acc)
        acc *= int(n)
    return tuple(reversed(out))


def _form(buf: N.Buffer, indices: tuple, ranges: dict, threads: dict, ctx: _Ctx):
    """(thread coefficients, symbolic rest, lo, hi) of the flat index, or None."""
    flat: E.PrimExpr = E.IntImm(0)
    for idx, stride in zip(indices, _strides(buf)):
        if isinstance(idx, (N.Ramp, N.Broadcast)):
            return None
        flat = E.Add(flat, E.Mul(idx, E.IntImm(stride), "int32"), "int32")
    if ctx.lets:
        flat = E.substitute(flat, ctx.lets)
    form = linear_form(flat)
    if form is None:
        return None
    terms, const = form
    coeffs: dict = {}
    sym: list = []
    lo = hi = const
    an = Analyzer(ranges)
    for term, c in terms.items():
        if isinstance(term, E.Var) and term in threads:
            tag = threads[term]
            coeffs[tag] = coeffs.get(tag, 0) + c
            continue
        free = E.free_vars(term)
        if free & threads.keys():
            return None  # a thread index inside a non-linear term: unknown cells
        if free & ranges.keys():
            if not free <= ranges.keys():
                return None
            t_lo, t_hi = an.bound(term)
            if t_lo == float("-inf") or t_hi == float("inf"):
                return None
            lo, hi = lo + min(c * t_lo, c * t_hi), hi + max(c * t_lo, c * t_hi)
        else:
            sym.append((repr(term), c))
    coeffs = tuple(sorted((t, c) for t, c in coeffs.items() if c))
    return coeffs, tuple(sorted(sym)), int(lo), int(hi)


def _private(a: _Access, b: _Access, ctx: _Ctx) -> bool:
    """Whether only one thread ever touches what both ``a`` and ``b`` touch."""
    if a.form is None or b.form is None:
        return False
    (ca, sa, lo_a, hi_a), (cb, sb, lo_b, hi_b) = a.form, b.form
    if ca != cb or sa != sb:
        return False
    coeffs = dict(ca)
    width = max(hi_a, hi_b) - min(lo_a, lo_b) + 1
    spread = 0  # the largest distance the smaller thread indices can add
    for c, n in sorted(
        (abs(coeffs.get(t, 0)), n) for t, n in ctx.launch.items() if n > 1 and gpu.is_thread_tag(t)
    ):
        if c < spread + width:
            return False
        spread += c * (n - 1)
    return True


def _conflict(earlier: list, later: list, ctx: _Ctx) -> bool:
    for b in later:
        for a in earlier:
            # read after write, or write after read; two writes are a race no barrier
            # between them fixes (as TVM, none is put there)
            if a.buffer == b.buffer and a.write != b.write and not _private(a, b, ctx):
                return True
    return False
