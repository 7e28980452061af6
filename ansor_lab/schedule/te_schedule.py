"""The TE-style schedule: ``s = te.create_schedule(C.op)``, ``s[C].split(...)``.

A thin layer over the block-style engine (``tir_schedule.Schedule``): every TE call is
translated into block-style instructions, so a TE schedule has the same State, the same
lowering and the same replayable trace (``s.trace``).

Two differences from the block style follow TVM's TE:

- compute_at placement is checked when lowering, not after each step: a stage may be
  computed at a loop while one of its readers still runs outside it, as long as the
  reader is moved inside before ``lower``/``build`` (the GPU GEMM tutorial's
  ``s[AA].compute_at(s[C], ko); s[AL].compute_at(s[C], ki)``). Such a trace replays onto a
  TE schedule's engine (``te.create_schedule(...).engine``); a ``tir.Schedule`` checks
  every step and refuses it at the first of those steps.
- a stage passed as a function argument may still be computed at or inlined: computed at
  a loop, it is written in place, region by region (and must be written whole, see
  ``lower``); inlined, it is left unwritten.
"""

from __future__ import annotations

from typing import Any

from ..dsl import expr as E
from ..dsl.tensor import Operation, Tensor, multi_output_siblings
from ..errors import ScheduleError
from .cross_thread import thread_reduce_leaves
from .state import State, derive_extents
from .tir_out_of_scope import OutOfScopeScheduleSteps, OutOfScopeStageSteps
from .tir_schedule import Schedule as BlockSchedule
from .trace import LoopRV, Trace


def _tensors(ops: object) -> list[Tensor]:
    """The output tensors of ``ops``; every output of a multi-output compute (TVM's
    ``B0.op`` is one op computing ``B0`` and ``B1``; here they are sibling ops)."""
    items = ops if isinstance(ops, (list, tuple)) else [ops]
    out: list[Tensor] = []
    for x in items:
        if isinstance(x, Tensor):
            x = x.op
        if not isinstance(x, Operation):
            raise ScheduleError(
                f"create_schedule takes operations (C.op) or a list of them, got {x!r}"
            )
        for op in multi_output_siblings(x):
            if all(t.op is not op for t in out):
                out.append(op.output(0))
    return out


def _has_axis(op: Operation, iv: E.IterVar) -> bool:
    """Whether ``iv`` is (this very IterVar) one of ``op``'s axes or reduce axes."""
    axes = (*getattr(op, "axis", ()), *getattr(op, "reduce_axis", ()))
    return any(a is iv for a in axes)


class Loop:
    """A loop handle returned by TE primitives (``xo, xi = s[C].split(...)``)."""

    def __init__(self, stage: Stage, rv: LoopRV, name: str) -> None:
        self.stage = stage
        self.rv = rv
        self.var = E.Var(name)

    @property
    def name(self) -> str:
        """The loop's name."""
        return self.var.name

    @property
    def dom(self) -> E.Range:
        """The loop's range (0, extent)."""
        info = self.stage.schedule.engine.get(self.rv)
        return E.Range.of(0, info.extent)

    def __repr__(self) -> str:
        return f"Loop({self.stage.name}.{self.name})"


class Schedule(OutOfScopeScheduleSteps):
    """A TE schedule over the ops producing some outputs."""

    def __init__(self, outputs: object) -> None:
        self.outputs = _tensors(outputs)
        state = State.create(self.outputs)
        state.defer_bound_checks = True  # checked at lower/build time, as in TVM
        self.engine = BlockSchedule.from_state(state)
        self.engine.show_unit_loops = True  # a TE stage's loops are all its iterators
        self._stages: dict[str, Stage] = {}

    @property
    def state(self) -> State:
        """The engine's current State."""
        return self.engine.state

    @property
    def trace(self) -> Trace:
        """The recorded steps, as block-style instructions."""
        return self.engine.trace

    def __getitem__(self, key: object) -> Stage:
        if isinstance(key, Operation):
            key = key.output(0)
        looked_up_by = key.op if isinstance(key, Tensor) else None
        if isinstance(key, Tensor):
            key = self.state.tensor(key)
        name = key.name if isinstance(key, Tensor) else str(key)
        try:
            st = self.state.by_op_name(name)
        except ScheduleError:
            st = self.state.stage(name)
        if not st.is_compute:
            raise ScheduleError(f"{name!r} is a placeholder; only compute stages are scheduled")
        if st.name not in self._stages:
            self._stages[st.name] = Stage(self, st.name)
        stage = self._stages[st.name]
        if looked_up_by is not None and all(op is not looked_up_by for op in stage.known_ops):
            stage.known_ops.append(looked_up_by)
        return stage

    def normalize(self) -> Schedule:
        """This schedule: its loops already start at 0 (TVM's rebase has nothing to do)."""
        return self

    @property
    def stages(self) -> list[Stage]:
        """Handles of every compute stage, producers first."""
        return [self[s.name] for s in self.state.compute_stages()]

    def _tensor(self, block: str) -> Tensor:
        return self.state.stage(block).op.output(0)

    def cache_read(self, tensor: Tensor, scope: str, readers: list) -> Tensor:
        """A ``scope`` copy of ``tensor`` read by ``readers`` instead (returns the copy).

        The TE spelling of ``tir.Schedule.cache_read``; returns the copy's tensor.

        Example
        -------
        Schedule (Before and After as in ``tir.Schedule.cache_read``)::

            s = te.create_schedule(C.op)
            A_local = s.cache_read(A, "local", [C])
        """
        readers = readers if isinstance(readers, (list, tuple)) else [readers]
        if not readers:
            raise ScheduleError("cache_read: give the list of readers, e.g. [C]")
        stages = [self[r] for r in readers]
        rv = self.engine.cache_read(
            stages[0].block_rv,
            self.state.tensor(tensor).name,
            scope,
            consumer_blocks=[st.block_rv for st in stages[1:]],
        )
        return self._tensor(self.engine.get(rv).name)

    def cache_write(self, tensor: Tensor, scope: str) -> Tensor:
        """Compute ``tensor`` in a ``scope`` buffer (the returned tensor); ``s[tensor]``
        becomes the copy-out stage and keeps its spatial loops.

        Unlike ``tir.Schedule.cache_write``, the returned tensor (``C_local`` below) is the stage
        that computes, as in TVM's TE; ``s[C_local].compute_at(s[C], ...)`` then computes one tile
        at a time into the ``scope`` buffer.

        Example
        -------
        Before::

            @T.prim_func
            def main(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
                # stage "C"
                for i in range(16):
                    for j in range(16):
                        C[i, j] = T.float32(0.0)
                        for k in range(16):
                            C[i, j] = C[i, j] + A[i, k] * B[k, j]

        Schedule::

            s = te.create_schedule(C.op)
            C_local = s.cache_write(C, "local")

        After::

            @T.prim_func
            def main(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
                C_local = T.alloc_buffer((16, 16), "float32", scope="local")
                # stage "C_local"
                for i in range(16):
                    for j in range(16):
                        C_local[i, j] = T.float32(0.0)
                        for k in range(16):
                            C_local[i, j] = C_local[i, j] + A[i, k] * B[k, j]
                # stage "C"
                for i_1 in range(16):
                    for j_1 in range(16):
                        C[i_1, j_1] = C_local[i_1, j_1]
        """  # noqa: E501
        rv = self.engine.cache_write(self[tensor].block_rv, 0, scope, te_style=True)
        return self._tensor(self.engine.get(rv).name)

    def rfactor(self, tensor: Tensor, axis: Any, factor_axis: int = 0) -> Tensor:
        """Factor reduction loop ``axis`` out into a new tensor of partial results.

        The TE spelling of ``tir.Schedule.rfactor``; returns the partial results' tensor.

        Example
        -------
        Schedule (Before and After as in ``tir.Schedule.rfactor``)::

            s = te.create_schedule(B.op)
            k_0, k_1 = s[B].split(B.op.reduce_axis[0], factor=4)
            B_rf = s.rfactor(B, k_1)
        """
        stage = self[tensor]
        rv = self.engine.rfactor(stage.loop(axis), factor_axis)
        return self._tensor(self.engine.get(rv).name)


class Stage(OutOfScopeStageSteps):
    """``s[C]``: the stage computing one tensor inside a TE schedule."""

    def __init__(self, schedule: Schedule, block: str) -> None:
        self.schedule = schedule
        self.block = block
        self._block_rv = None
        self._loops: dict[str, LoopRV] = {}
        #: the ops this stage was looked up by (``s[C]``): their axes stay this stage's
        #: after a step replaced its op (cache_write keeps ``C.op.axis`` for ``s[C]``)
        self.known_ops: list[Operation] = []

    @property
    def name(self) -> str:
        """The block name."""
        return self.block

    @property
    def op(self) -> Operation:
        """The stage's operation."""
        return self.schedule.state.stage(self.block).op

    @property
    def block_rv(self):
        """The engine's handle of this block."""
        if self._block_rv is None:
            self._block_rv = self.schedule.engine.get_block(self.block)
        return self._block_rv

    def loop(self, handle: Any) -> LoopRV:
        """The engine loop handle for a TE handle (an axis IterVar or a returned Loop)."""
        if isinstance(handle, Loop):
            if handle.stage.block != self.block:
                raise ScheduleError(
                    f"stage {self.block!r}: loop {handle.name!r} belongs to stage "
                    f"{handle.stage.block!r}; use a loop of s[{self.block}] (its op.axis or "
                    "the loops its own split/fuse returned)"
                )
            return handle.rv
        if isinstance(handle, E.IterVar):
            name = handle.var.name
            owner = self._other_owner(handle)
            if owner is not None:
                raise ScheduleError(
                    f"stage {self.block!r}: axis {name!r} is an axis of stage {owner!r}, not "
                    f"of this stage; use a loop of s[{self.block}]: {self.block}.op.axis, "
                    f"{self.block}.op.reduce_axis or the loops its own split/fuse returned"
                )
        elif isinstance(handle, E.Var):
            name = handle.name
        else:
            raise ScheduleError(
                f"stage {self.block!r}: expected a loop (an axis like C.op.axis[0], or a loop "
                f"returned by split/fuse), got {handle!r}"
            )
        st = self.schedule.state.stage(self.block)
        rv = self._loops.get(name)
        if rv is not None and name in st.leaves:
            return rv
        if name not in st.leaves:
            raise ScheduleError(
                f"stage {self.block!r}: {name!r} is not a current loop (loops: {st.leaves}); "
                "a split or fuse replaced it — use the loops that step returned"
            )
        loops = self.schedule.engine.get_loops(self.block_rv)
        own = loops[len(loops) - len(st.leaves) :]
        self._loops = dict(zip(st.leaves, own))
        return self._loops[name]

    def _other_owner(self, iv: E.IterVar) -> str | None:
        """The other stage ``iv`` is an axis of, when it is none of this stage's.

        Loops are found by name, and every stage has an ``i``: without this, D's axis
        would silently pick E's loop of the same name (TVM refuses it). Only an axis
        known to be another stage's is refused, so axes a step re-created keep working.
        """
        for op in [self.op, *self.known_ops]:
            if any(_has_axis(sib, iv) for sib in multi_output_siblings(op)):
                return None
        for st in self.schedule.state.stages.values():
            if st.name != self.block and st.is_compute and _has_axis(st.op, iv):
                return st.name
        return None

    def _wrap(self, rvs: list[LoopRV]) -> list[Loop]:
        out = []
        for rv in rvs:
            info = self.schedule.engine.get(rv)
            self._loops[info.name] = rv
            out.append(Loop(self, rv, info.name))
        return out

    # -- primitives -----------------------------------------------------------------
    def split(
        self, parent: Any, factor: int | None = None, nparts: int | None = None
    ) -> tuple[Loop, Loop]:
        """Split a loop by ``factor`` (inner extent) or into ``nparts`` (outer extent).

        The TE spelling of ``tir.Schedule.split`` (``factor=`` or ``nparts=``).

        Example
        -------
        Schedule (Before and After as in ``tir.Schedule.split``)::

            s = te.create_schedule(B.op)
            i_0, i_1 = s[B].split(B.op.axis[0], factor=16)
        """
        if (factor is None) == (nparts is None):
            raise ScheduleError("split: give exactly one of factor= or nparts=")
        factors = [None, int(factor)] if factor is not None else [int(nparts), None]
        outer, inner = self._wrap(self.schedule.engine.split(self.loop(parent), factors))
        return outer, inner

    def tile(
        self, x_parent: Any, y_parent: Any, x_factor: int, y_factor: int
    ) -> tuple[Loop, Loop, Loop, Loop]:
        """Split two loops and order them (xo, yo, xi, yi).

        The TE spelling of ``tir.Schedule.tile``; returns the four loops.

        Example
        -------
        Schedule (Before and After as in ``tir.Schedule.tile``)::

            s = te.create_schedule(B.op)
            i_0, j_0, i_1, j_1 = s[B].tile(B.op.axis[0], B.op.axis[1], 16, 8)
        """
        xo, xi = self.split(x_parent, x_factor)
        yo, yi = self.split(y_parent, y_factor)
        self.reorder(xo, yo, xi, yi)
        return xo, yo, xi, yi

    def fuse(self, *args: Any) -> Loop:
        """Fuse adjacent loops into one.

        The TE spelling of ``tir.Schedule.fuse``.

        Example
        -------
        Schedule (Before and After as in ``tir.Schedule.fuse``)::

            s = te.create_schedule(B.op)
            s[B].fuse(B.op.axis[0], B.op.axis[1])
        """
        rv = self.schedule.engine.fuse(*[self.loop(a) for a in args])
        return self._wrap([rv])[0]

    def reorder(self, *args: Any) -> None:
        """Reorder loops of this stage.

        The TE spelling of ``tir.Schedule.reorder``.

        Example
        -------
        Schedule (Before and After as in ``tir.Schedule.reorder``)::

            s = te.create_schedule(B.op)
            i, j = B.op.axis
            s[B].reorder(j, i)
        """
        self.schedule.engine.reorder(*[self.loop(a) for a in args])

    def parallel(self, var: Any) -> None:
        """Run a loop on all cores.

        The TE spelling of ``tir.Schedule.parallel``.

        Example
        -------
        Schedule (Before and After as in ``tir.Schedule.parallel``)::

            s = te.create_schedule(B.op)
            s[B].parallel(B.op.axis[0])
        """
        self.schedule.engine.parallel(self.loop(var))

    def vectorize(self, var: Any) -> None:
        """Run a loop as SIMD lanes.

        The TE spelling of ``tir.Schedule.vectorize``.

        Example
        -------
        Schedule (Before and After as in ``tir.Schedule.vectorize``)::

            s = te.create_schedule(B.op)
            j_0, j_1 = s[B].split(B.op.axis[1], factor=8)
            s[B].vectorize(j_1)
        """
        self.schedule.engine.vectorize(self.loop(var))

    def unroll(self, var: Any) -> None:
        """Unroll a loop.

        The TE spelling of ``tir.Schedule.unroll``.

        Example
        -------
        Schedule (Before and After as in ``tir.Schedule.unroll``)::

            s = te.create_schedule(B.op)
            j_0, j_1 = s[B].split(B.op.axis[1], factor=4)
            s[B].unroll(j_1)
        """
        self.schedule.engine.unroll(self.loop(var))

    def bind(self, ivar: Any, thread_ivar: Any) -> None:
        """Bind a loop to a thread axis (``te.thread_axis("threadIdx.x")``).

        The TE spelling of ``tir.Schedule.bind``.

        Example
        -------
        Schedule (Before and After as in ``tir.Schedule.bind``)::

            s = te.create_schedule(B.op)
            s[B].bind(B.op.axis[0], te.thread_axis("blockIdx.x"))
            s[B].bind(B.op.axis[1], te.thread_axis("threadIdx.x"))
        """
        tag = getattr(thread_ivar, "thread_tag", thread_ivar)
        self.schedule.engine.bind(self.loop(ivar), tag)

    def set_store_predicate(self, predicate: Any) -> None:
        """Accept TVM's ``set_store_predicate(thread_x.var.equal(0))`` of a cross-thread reduction.

        A reduction loop bound to threadIdx is lowered so that thread 0 alone stores the
        result, which is what this predicate asks for; any other predicate is refused.
        """
        st = self.schedule.state.stage(self.block)
        tags = {str(st.annotations[lp]) for lp in thread_reduce_leaves(st)}
        var = getattr(predicate, "a", None)
        zero = getattr(predicate, "b", None)
        if (
            isinstance(predicate, E.EQ)
            and isinstance(var, E.Var)
            and isinstance(zero, E.IntImm)
            and zero.value == 0
            and var.name in tags
        ):
            return
        raise ScheduleError(
            f"set_store_predicate on stage {self.block!r}: only `thread.var.equal(0)` for a "
            "thread axis bound to this stage's reduction loop is supported (a cross-thread "
            "reduction, which already stores from thread 0 alone); bind the reduction loop "
            "to that thread first, or leave the predicate out. Every other stage stores all "
            "the elements of its region: guard the value instead (te.if_then_else(cond, "
            "value, old)), or split with a factor that divides the extent so no guard is needed"
        )

    def pragma(self, var: Any, pragma_type: str, pragma_value: Any = 1) -> None:
        """Annotate a loop, e.g. ``pragma(x, "auto_unroll_max_step", 16)``.

        The TE spelling of ``tir.Schedule.annotate`` on a loop; ``pragma_type`` gets the ``pragma_``
        prefix when it lacks one.

        Example
        -------
        Schedule (Before and After as in ``tir.Schedule.annotate``)::

            s = te.create_schedule(B.op)
            s[B].pragma(B.op.axis[0], "auto_unroll_max_step", 16)
        """
        key = pragma_type if pragma_type.startswith("pragma_") else f"pragma_{pragma_type}"
        self.schedule.engine.annotate(self.loop(var), key, pragma_value)

    def compute_at(self, parent: Stage, scope: Any) -> None:
        """Compute this stage inside loop ``scope`` of stage ``parent``.

        The TE spelling of ``tir.Schedule.compute_at``; as in TVM's TE, whether the placement covers
        every reader is checked when the schedule is lowered, not at this call.

        Example
        -------
        Schedule (Before and After as in ``tir.Schedule.compute_at``)::

            s = te.create_schedule(C.op)
            s[B].compute_at(s[C], C.op.axis[0])
        """
        try:
            loop = parent.loop(scope)
        except ScheduleError as err:
            raise ScheduleError(
                f"compute_at of stage {self.block!r}: the loop must be one of the target "
                f"stage s[{parent.block}]; {err}"
            ) from None
        self.schedule.engine.compute_at(self.block_rv, loop)

    def compute_inline(self) -> None:
        """Inline this elementwise stage into its consumers.

        The TE spelling of ``tir.Schedule.compute_inline``.

        Example
        -------
        Schedule (Before and After as in ``tir.Schedule.compute_inline``)::

            s = te.create_schedule(C.op)
            s[B].compute_inline()
        """
        self.schedule.engine.compute_inline(self.block_rv)

    def compute_root(self) -> None:
        """Compute this stage at the top level.

        The TE spelling of ``tir.Schedule.compute_root``.

        Example
        -------
        Schedule (Before and After as in ``tir.Schedule.compute_root``)::

            s = te.create_schedule(C.op)
            s[B].compute_at(s[C], C.op.axis[0])
            # (Before is the program at this point)
            s[B].compute_root()
        """
        self.schedule.engine.compute_root(self.block_rv)

    def storage_align(self, axis: Any, factor: int, offset: int) -> None:
        """Pad this stage's buffer so stride(axis) % factor == offset.

        The TE spelling of ``tir.Schedule.storage_align``; ``axis`` is an axis of the stage
        (``B.op.axis[0]``) or its position.

        Example
        -------
        Schedule (Before and After as in ``tir.Schedule.storage_align``)::

            s = te.create_schedule(C.op)
            s[B].storage_align(B.op.axis[0], 16, 1)
        """
        if isinstance(axis, E.IterVar):
            names = [iv.var.name for iv in self.op.axis]
            axis = names.index(axis.var.name)
        self.schedule.engine.storage_align(self.block_rv, 0, int(axis), factor, offset)

    def set_scope(self, scope: str) -> None:
        """Change the storage scope of this stage's buffer.

        The TE spelling of ``tir.Schedule.set_scope``.

        Example
        -------
        Schedule (Before and After as in ``tir.Schedule.set_scope``)::

            s = te.create_schedule(C.op)
            s[B].set_scope("local")
        """
        self.schedule.engine.set_scope(self.block_rv, 0, scope)

    @property
    def leaf_iter_vars(self) -> list[Loop]:
        """The current loops, outermost first."""
        st = self.schedule.state.stage(self.block)
        return [Loop(self, self.loop(E.Var(n)), n) for n in st.leaves]

    @property
    def all_iter_vars(self) -> list[str]:
        """Names of every loop this stage ever had (root and derived)."""
        return list(self.schedule.state.stage(self.block).iters)

    def __repr__(self) -> str:
        st = self.schedule.state.stage(self.block)
        ext = derive_extents(st)
        loops = ", ".join(f"{n}:{ext[n]}" for n in st.leaves)
        return f"stage({self.block}, loops=[{loops}])"


def create_schedule(ops: object) -> Schedule:
    """A default schedule for ``ops`` (an op or a list of ops, as in TVM); with symbolic
    shapes (``te.var`` dims), a ``symbolic_schedule.SymbolicSchedule``."""
    from . import symbolic_schedule  # noqa: PLC0415 - it builds on this module

    return symbolic_schedule.create_schedule(ops)
