"""A schedule State as TVM's schedule module shows it: TensorIR blocks, before lowering.

``lower.py`` emits what runs (compacted buffers, the reduction init hoisted out of the
block, stage markers). This module emits, from the same bound inference and the same
loop nests, the form a ``tir.Schedule``'s module has in TVM before ``tvm.lower``:

- every intermediate buffer keeps its full shape and is allocated at the function's top
  (``T.alloc_buffer`` in the root block), so a stage reads and writes whole tensors;
- each stage's innermost statement is an ``N.Block`` with ``axes``: its body binds the
  block variables to the loop expressions (``LetStmt``), then stores in block variables
  (``C[v_i, v_j] = C[v_i, v_j] + A[v_i, v_k] * B[v_k, v_j]``);
- a reduction keeps its init inside the block (``has_init``, ``T.init()``), until
  ``decompose_reduction`` makes it a block of its own ("C_init", spatial axes only,
  under loops ``*_init``) and the update "C_update";
- the guards of splits that do not divide become the block's ``T.where``.

The result is exactly what the TVMScript parser builds from its printed text, and it
runs (``Block`` is a marker; the lets and the where are ordinary statements), so that
text builds and computes what the schedule computes.
"""

from __future__ import annotations

import dataclasses

from ..dsl import expr as E
from ..dsl.construct import logical_and
from ..dsl.intrin import reduce_identity
from ..dsl.tensor import Tensor
from ..dsl.tuple_reduce import tuple_combiner
from ..errors import AnsorLabError
from ..ir import nodes as N
from ..ir.simplify import simplify_expr
from .bounds import aligned_strides, permute
from .cross_thread import thread_reduce_leaves
from .loop_kinds import REDUCE, SPATIAL
from .lower import _Lowerer
from .state import After, At, Inline, Nested, Stage, State


class BlockFormUnavailable(AnsorLabError):
    """The state cannot be shown as TensorIR blocks (the message says why)."""


def _conjuncts(e: E.PrimExpr) -> list:
    if isinstance(e, E.And):
        return _conjuncts(e.a) + _conjuncts(e.b)
    if isinstance(e, E.IntImm) and e.dtype == "bool" and e.value:
        return []
    return [e]


def _and_all(conds: list) -> E.PrimExpr | None:
    """One left-nested conjunction (how ``a and b and c`` parses back), trivia dropped."""
    flat = [x for c in conds for x in _conjuncts(c)]
    out = None
    for c in flat:
        out = c if out is None else E.And(out, c)
    return out


class _BlockEmitter(_Lowerer):
    """The loop nests of ``_Lowerer`` with a TensorIR block at the bottom of each."""

    def full_buffers(self) -> None:
        """Every intermediate keeps the tensor's shape: no compaction, no region buffers."""
        for s in self.stages:
            if isinstance(s.attach, Inline) or s.op.name in self.arg_buffer:
                continue
            info = self.info[s.name]
            shape = permute(tuple(int(x) for x in s.op.shape), s.layout)
            strides = aligned_strides(shape, s.storage_align)
            info.buffer = N.Buffer(s.op.name, shape, s.op.dtype, self.scope_of(s), strides)
            info.buf_min = None
            info.alloc_at = None

    def find_dropped(self) -> None:
        """Loops of one iteration that compute_at made: TVM's compute_at makes none."""
        self.dropped: dict = {}
        self.bounds: dict = {}
        for s in self.stages:
            if isinstance(s.attach, Inline):
                continue
            info = self.info[s.name]
            for lp in s.leaves:
                var = info.leaf_vars[lp]
                self.bounds[var] = (0, info.extents[lp] - 1)
                plain = lp not in s.annotations and lp not in s.pragmas
                plain = plain and not (lp == s.leaves[0] and s.pragmas.get(""))
                if isinstance(s.attach, Nested) and info.extents[lp] == 1 and plain:
                    self.dropped[var] = E.IntImm(0)

    def block_vars(self, stage: Stage) -> dict:
        """Root variable -> the block variable standing for it (``v_i``)."""
        out = {}
        for var in self.root_vars(stage):
            name = f"v_{var.name}"
            while name in self.used_names:  # never shadow a loop variable of the text
                name = f"{name}_"
            out[var] = E.Var(name, var.dtype)
        return out

    def axis_lets(self, stage: Stage, bvars: dict, sub: dict, spatial_only: bool) -> list:
        """(block var, binding, BlockAxis) per axis, bindings over the loop variables."""
        values = self.root_values(stage)
        op = stage.op
        out = []
        for iv, kind in [(iv, "S") for iv in op.axis] + [(iv, "R") for iv in op.reduce_axis]:
            if spatial_only and kind == "R":
                continue
            binding = self.simplify(E.substitute(values[iv.var], {**self.dropped, **sub}))
            lo, ext = int(iv.dom.min.value), int(iv.dom.extent.value)
            out.append((bvars[iv.var], binding, N.BlockAxis(kind, lo, ext)))
        return out

    def simplify(self, e: E.PrimExpr) -> E.PrimExpr:
        """Simplified knowing every loop's range (trivial guards disappear)."""
        return simplify_expr(e, self.bounds)

    def make_loop(self, stage: Stage, leaf: str, body: N.Stmt, init_sub: dict | None = None):
        """The loop of ``leaf`` around ``body``, or ``body`` where the loop is dropped."""
        var = self.info[stage.name].leaf_vars[leaf]
        if var in self.dropped:
            return body
        loop = self.loop(stage, leaf, body, for_init=init_sub is not None)
        if init_sub is not None:
            loop = dataclasses.replace(loop, loop_var=init_sub[var])
        return loop

    def make_block(
        self, name: str, lets: list, where: E.PrimExpr | None, inner: N.Stmt, has_init: bool
    ) -> N.Block:
        if where is not None:
            inner = N.IfThenElse(where, inner)
        for var, binding, _ in reversed(lets):
            inner = N.LetStmt(var, binding, inner)
        axes = tuple(ax for _, _, ax in lets)
        return N.Block(name, inner, axes=axes, has_where=where is not None, has_init=has_init)

    def stage_blocks(self, stage: Stage, decomposed: bool, init_sub: dict) -> tuple:
        """(update block, init block or None) of ``stage``, stores in block variables."""
        info = self.info[stage.name]
        op = stage.op
        bvars = self.block_vars(stage)
        out_idx = permute(tuple(bvars[iv.var] for iv in op.axis), stage.layout)
        buf = info.buffer
        body = self.body(stage)
        where = _and_all([self.simplify(E.substitute(g, self.dropped)) for g, _ in info.guards])
        lets = self.axis_lets(stage, bvars, {}, False)
        if not isinstance(body, E.Reduce):
            store = N.BufferStore(buf, self.translate(body, bvars), out_idx)
            return self.make_block(stage.name, lets, where, store, False), None
        cur = N.BufferLoad(buf, out_idx, buf.dtype)
        src = self.translate(body.source, bvars)
        combine = {"sum": E.Add, "max": E.Max, "min": E.Min}[body.combiner]
        update: N.Stmt = N.BufferStore(buf, combine(cur, src, buf.dtype), out_idx)
        if body.condition is not None:
            update = N.IfThenElse(self.translate(body.condition, bvars), update)
        init = N.BufferStore(buf, reduce_identity(body.combiner, buf.dtype), out_idx)
        if not decomposed:
            first = None
            for var, _, ax in lets:
                if ax.kind == "R":
                    term = var == ax.min  # as the parser builds T.init's condition
                    first = term if first is None else logical_and(first, term)
            inner = N.seq(N.IfThenElse(first, init), update)
            return self.make_block(stage.name, lets, where, inner, True), None
        init_lets = self.axis_lets(stage, bvars, init_sub, True)
        reduce_vars = {info.leaf_vars[lp] for lp in stage.leaves if stage.iters[lp].kind == REDUCE}
        if any(E.free_vars(b) & reduce_vars for _, b, _ in init_lets):
            raise BlockFormUnavailable(f"the init of {stage.name!r} depends on a reduction loop")
        sub = {**self.dropped, **init_sub}
        spatial = [self.simplify(E.substitute(g, sub)) for g, red in info.guards if not red]
        init_block = self.make_block(
            f"{stage.name}_init", init_lets, _and_all(spatial), init, False
        )
        update_block = self.make_block(f"{stage.name}_update", lets, where, update, False)
        return update_block, init_block

    def emit(self, stage: Stage) -> N.Stmt:
        if thread_reduce_leaves(stage):
            raise BlockFormUnavailable(
                f"stage {stage.name!r} is a cross-thread reduction (a reduction loop bound "
                "to threads), which TVM's block form writes with intrinsics we do not print"
            )
        if tuple_combiner(self.body(stage)) is not None:
            raise BlockFormUnavailable(
                f"stage {stage.name!r} is a te.comm_reducer reduction (argmax, product), "
                "whose scheduled block form is not printed"
            )
        info = self.info[stage.name]
        leaves = stage.leaves
        is_reduce = bool(stage.op.reduce_axis) and isinstance(self.body(stage), E.Reduce)
        decomposed = is_reduce and stage.init_at is not None and stage.init_at in leaves
        first_reduce = None
        init_sub: dict = {}
        if decomposed:
            first_reduce = next(
                (k for k, lp in enumerate(leaves) if stage.iters[lp].kind == REDUCE), None
            )
            at = leaves.index(stage.init_at)
            if first_reduce is None or at <= first_reduce:
                first_reduce = at
            for lp in leaves[first_reduce:]:
                var = info.leaf_vars[lp]
                if stage.iters[lp].kind == SPATIAL and var not in self.dropped:
                    init_sub[var] = E.Var(self.fresh(f"{var.name}_init"), var.dtype)
                    self.bounds[init_sub[var]] = self.bounds[var]
        update, init = self.stage_blocks(stage, decomposed, init_sub)
        stmt: N.Stmt = update
        for k in range(len(leaves) - 1, -1, -1):
            leaf = leaves[k]
            stmt = self.make_loop(stage, leaf, self.with_attached(stage, leaf, stmt))
            if decomposed and k == first_reduce:
                init_nest: N.Stmt = init
                for leaf2 in reversed(leaves[k:]):
                    if stage.iters[leaf2].kind == SPATIAL:
                        init_nest = self.make_loop(stage, leaf2, init_nest, init_sub)
                stmt = N.seq(init_nest, stmt)
        if decomposed and first_reduce is None:
            stmt = N.seq(init, stmt)
        return stmt

    def with_attached(self, stage: Stage, leaf: str, inner: N.Stmt) -> N.Stmt:
        attached = self.attached.get((stage.name, leaf))
        if not attached:
            return inner
        before = [self.emit(p) for p in attached if isinstance(p.attach, At)]
        after = [self.emit(c) for c in attached if isinstance(c.attach, After)]
        return N.seq(*before, inner, *after)

    def run(self) -> N.PrimFunc:
        """The block form of the whole state."""
        for s in self.stages:
            if isinstance(s.attach, Nested):
                target = self.by_name.get(s.attach.block)
                if target is None or s.attach.loop not in target.leaves:
                    raise BlockFormUnavailable(f"stage {s.name!r} is attached to a lost loop")
        self.infer()
        self.full_buffers()
        self.find_dropped()
        body = N.seq(*[self.emit(s) for s in self.stages if s.is_root])
        for s in reversed(self.stages):
            if not isinstance(s.attach, Inline) and s.op.name not in self.arg_buffer:
                body = N.Allocate(self.info[s.name].buffer, body)
        return N.PrimFunc(tuple(self.params), body, self.name)


def block_form_func(
    state: State, args: list[Tensor], name: str = "main", attrs: tuple = ()
) -> N.PrimFunc:
    """The TensorIR block form of ``state`` over ``args``; BlockFormUnavailable if none."""
    args = [state.tensor(t) for t in args]
    try:
        func = _BlockEmitter(state, list(args), name).run()
    except BlockFormUnavailable:
        raise
    except AnsorLabError as err:  # a state only lowering can judge (TE-style placements)
        raise BlockFormUnavailable(str(err)) from None
    return N.PrimFunc(func.params, func.body, name, attrs)
