"""The block-style schedule ``tir.Schedule`` (TVM's API), recording every step.

Every public method is one instruction: it resolves its handles, applies the primitive
to a copy of the State, and only when that succeeds adopts the copy, registers the new
handles and appends the instruction to the trace. A failing step raises ScheduleError
and leaves the schedule and its trace exactly as they were.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any
from collections.abc import Callable, Sequence

from ..dsl import expr as E
from ..errors import IRError, ScheduleError
from ..ir import nodes as N
from . import primitives as P
from .instruction_kind import REGISTRY, instruction
from .lower import lower_state
from .sampling import sample_categorical as _draw_categorical
from .sampling import sample_perfect_tile as _draw_tile
from .state import INLINE, ROOT, Attachment, Nested, State, derive_extents
from .trace import BlockRV, ExprRV, Instruction, LoopRV, RV, Trace, TraceData


def _index_map_text(perm: list) -> str:
    """A permutation of axes as the index map TVM prints: ``lambda i0, i1: (i1, i0)``."""
    names = [f"i{d}" for d in range(len(perm))]
    out = ", ".join(names[a] for a in perm) + ("," if len(perm) == 1 else "")
    return f"lambda {', '.join(names)}: ({out})"


#: kind name -> declaration, read without loading (this module is what fills it)
_DECLARED = REGISTRY.declared
_ROOT = ROOT  # the special loops sample_compute_location returns; get() names them
_INLINE = INLINE
_SPECIAL_NAME = {ROOT: "__root__", INLINE: "__inline__"}


@dataclass(frozen=True)
class _InitBlock:
    """What the handle ``decompose_reduction`` returns stands for: the init of ``block``.

    TVM returns the new init block ("C_init"). Here the init is not a block of the State:
    it is emitted inside the reduction block's own loop nest, before the chosen loop, and
    follows that block's loop schedule. So the handle names the init (``sch.get(rv).name``
    is "C_init", ``get_block("C_init")`` returns it once the reduction is decomposed, and
    traces record and replay it), and a primitive given it says to schedule the reduction
    block instead, rather than silently acting on the reduction block.
    """

    block: str

    @property
    def name(self) -> str:
        """The init's name, as TVM names the init block."""
        return f"{self.block}_init"


@dataclass(frozen=True)
class LoopInfo:
    """What ``sch.get(loop_rv)`` returns: the loop as it is now."""

    block: str
    name: str
    extent: int
    kind: str
    annotation: str

    def __repr__(self) -> str:
        ann = f", {self.annotation}" if self.annotation else ""
        return f"Loop({self.block}.{self.name}, extent={self.extent}, {self.kind}{ann})"


@dataclass(frozen=True)
class BlockInfo:
    """What ``sch.get(block_rv)`` returns."""

    name: str
    writes: str
    scope: str
    attach: Attachment


class Schedule:
    """``tir.Schedule(func)``: schedule a PrimFunc made by ``te.create_prim_func``."""

    def __init__(
        self,
        mod: Any,
        seed: int | None = None,
        debug_mask: Any = None,
        error_render_level: Any = None,
    ) -> None:
        func = mod
        if isinstance(mod, N.IRModule):
            try:
                func = mod.main_function()
            except IRError as err:
                raise ScheduleError(f"tir.Schedule schedules one function: {err}") from None
        if not isinstance(func, N.PrimFunc) or func.source is None:
            raise ScheduleError(
                "tir.Schedule needs a PrimFunc made by te.create_prim_func([A, B, C]); "
                f"got {type(mod).__name__}"
            )
        self._init(
            func,
            list(func.source.args),
            State.create(func.source.outputs(), list(func.source.args)),
            seed,
        )

    @classmethod
    def from_state(
        cls, state: State, args: list | None = None, seed: int | None = None
    ) -> Schedule:
        """A schedule over an existing State (the TE facade uses this; args come later)."""
        sch = cls.__new__(cls)
        sch._init(None, list(args) if args is not None else None, state, seed)
        return sch

    def _init(
        self, func: N.PrimFunc | None, args: list | None, state: State, seed: int | None
    ) -> None:
        self.func = func
        self.args = args
        self.state = state
        self._trace = Trace()
        self._table: dict[RV, Any] = {}
        self._counter = 0
        self._rng = random.Random(seed if seed is not None and seed >= 0 else None)
        self._mod_cache: tuple[int, N.IRModule] | None = None
        self._mod_state: State | None = None

    # -- infrastructure ---------------------------------------------------------------
    def _new(self, cls: type, value: Any) -> RV:
        rv = cls(self._counter)
        self._counter += 1
        self._table[rv] = value
        return rv

    def _lookup(self, rv: Any, cls: type, prim: str) -> Any:
        if not isinstance(rv, cls):
            shown = rv.name if isinstance(rv, RV) else repr(rv)
            raise ScheduleError(
                f"{prim}: expected a {cls.__name__}, got {type(rv).__name__} {shown}"
            )
        try:
            return self._table[rv]
        except KeyError:
            raise ScheduleError(
                f"{prim}: handle {rv.name} does not belong to this schedule (it came from "
                "another tir.Schedule); get handles from this one with get_block/get_loops"
            ) from None

    def _loop(self, rv: Any, prim: str) -> tuple[str, str]:
        value = self._lookup(rv, LoopRV, prim)
        if value in (_ROOT, _INLINE):
            raise ScheduleError(f"{prim}: {rv.name} is the special root/inline location")
        return value

    def _block(self, rv: Any, prim: str) -> str:
        if isinstance(rv, str):
            return self.state.stage(rv).name
        value = self._lookup(rv, BlockRV, prim)
        if isinstance(value, _InitBlock):
            raise ScheduleError(
                f"{prim}: {rv.name} is {value.name!r}, the init decompose_reduction split off "
                f"block {value.block!r}; it runs in {value.block!r}'s loop nest and follows its "
                f"loop schedule, so schedule block {value.block!r} instead"
            )
        return value

    def _init_block(self, name: str) -> _InitBlock | None:
        """The init of a decomposed reduction called ``name`` ("C_init"), if there is one
        (a real block of that name wins)."""
        if not name.endswith("_init") or name in self.state.stages:
            return None
        owner = self.state.stages.get(name[: -len("_init")])
        return _InitBlock(owner.name) if owner is not None and owner.init_at else None

    def _int(self, v: Any, prim: str) -> Any:
        if isinstance(v, ExprRV):
            return self._lookup(v, ExprRV, prim)
        return v

    def _step(
        self,
        kind: str,
        args: dict,
        fn: Callable[[State], Any],
        outputs: Callable[[Any], list] | None = None,
        decision: Any = None,
    ) -> Any:
        """Apply ``fn`` to a copy of the state; commit and record only if it succeeds."""
        decl = _DECLARED[kind]
        if not args.keys() <= decl.param_names:  # what is recorded must replay
            decl.check_args(args)
        if decl.pure:
            result = fn(self.state)
        else:
            new_state = self.state.copy()
            result = fn(new_state)
            self.state = new_state
        out_rvs = outputs(result) if outputs is not None else []
        self._trace.append(Instruction(kind, tuple(args.items()), tuple(out_rvs), decision))
        return out_rvs

    # -- the program ------------------------------------------------------------------
    @property
    def func_name(self) -> str:
        """The name of the scheduled function ("main" unless its IRModule named it)."""
        return self.func.name if self.func is not None else "main"

    @property
    def mod(self) -> N.IRModule:
        """The lowered program of the current state, as an IRModule under ``func_name``."""
        if self.args is None:
            raise ScheduleError(
                "this schedule has no argument list yet: lower it with tvm.lower(s, [A, B, C])"
            )
        if self._mod_state is not self.state:
            name = self.func_name
            func = lower_state(self.state, self.args, name)
            source = self.func.source if self.func is not None else None
            attrs = self.func.attrs if self.func is not None else func.attrs
            func = N.PrimFunc(func.params, func.body, name, attrs, source)
            self._mod_cache = (0, N.IRModule({name: func}))
            self._mod_state = self.state
        return self._mod_cache[1]

    @property
    def trace(self) -> Trace:
        """The steps applied so far (prints as ``def apply_trace(sch): ...``)."""
        return self._trace

    def show(self) -> None:
        """Print the lowered program."""
        self.mod.show()

    def copy(self) -> Schedule:
        """An independent copy; handles of this schedule stay valid on the copy."""
        other = Schedule.__new__(Schedule)
        other.func = self.func
        other.args = list(self.args) if self.args is not None else None
        other.state = self.state.copy()
        other._trace = self._trace.copy()
        other._table = dict(self._table)
        other._counter = self._counter
        other._rng = random.Random()
        other._rng.setstate(self._rng.getstate())
        other._mod_cache = None
        other._mod_state = None
        return other

    def seed(self, seed: int) -> None:
        """Reseed the random generator of the sampling instructions."""
        self._rng.seed(seed)

    def fork_seed(self) -> int:
        """A new seed drawn from this schedule's generator (for a child schedule)."""
        return self._rng.randrange(1, 2**31 - 1)

    def get(self, rv: Any) -> Any:
        """The value behind a handle: an int for sampled values, a Loop/BlockInfo otherwise."""
        if isinstance(rv, ExprRV):
            return self._lookup(rv, ExprRV, "get")
        if isinstance(rv, BlockRV):
            value = self._lookup(rv, BlockRV, "get")
            if isinstance(value, _InitBlock):
                st = self.state.stage(value.block)
                return BlockInfo(value.name, st.op.name, st.scope, st.attach)
            st = self.state.stage(value)
            return BlockInfo(st.name, st.op.name, st.scope, st.attach)
        if isinstance(rv, LoopRV):
            value = self._lookup(rv, LoopRV, "get")
            if value in (_ROOT, _INLINE):
                return _SPECIAL_NAME[value]
            block, name = value
            st = P.leaf(self.state, block, name, "get")
            return LoopInfo(
                block,
                name,
                derive_extents(st)[name],
                st.iters[name].kind,
                str(st.annotations.get(name, "")),
            )
        raise ScheduleError(f"get: not a schedule handle: {rv!r}")

    def remove_rv(self, rv: RV) -> None:
        """Forget a handle."""
        self._table.pop(rv, None)

    # -- getters ----------------------------------------------------------------------
    @instruction("GetBlock", attrs=("name", "func_name"), pure=True, outputs="one")
    def get_block(self, name: str, func_name: str | None = None) -> BlockRV:
        """The block computing ``name`` (``func_name`` defaults to the scheduled function).

        A schedule holds one function, so ``func_name`` selects nothing; it is recorded
        and accepted whatever it says, so a trace taken on a function of one name replays
        on a fresh schedule of the same workload under another (the search's "main").
        """
        init = self._init_block(name)
        if init is None:
            self.state.stage(name)  # raises with the list of blocks when unknown
        func_name = self.func_name if func_name is None else func_name
        return self._step(
            "GetBlock",
            {"name": name, "func_name": func_name},
            lambda s: init or name,
            lambda b: [self._new(BlockRV, b)],
        )[0]

    def _enclosing_loops(self, block: str) -> list[tuple[str, str]]:
        st = P.compute_stage(self.state, block, "get_loops")
        return self.state.enclosing_loops(block) + [(block, lp) for lp in st.leaves]

    @instruction("GetLoops", inputs=("block",), pure=True, outputs="list")
    def get_loops(self, block: Any) -> list[LoopRV]:
        """The loops around ``block``, outermost first (those of the block it is computed at
        included)."""
        b = self._block(block, "get_loops")
        loops = self._enclosing_loops(b)
        return self._step(
            "GetLoops",
            {"block": block},
            lambda s: loops,
            lambda ls: [self._new(LoopRV, x) for x in ls],
        )

    @instruction("GetChildBlocks", inputs=("block_or_loop",), pure=True, outputs="list")
    def get_child_blocks(self, block_or_loop: Any) -> list[BlockRV]:
        """Blocks nested under a block's loops or under one loop, in program order."""
        if isinstance(block_or_loop, LoopRV):
            owner, lp = self._loop(block_or_loop, "get_child_blocks")
            st = P.leaf(self.state, owner, lp, "get_child_blocks")  # rejects a stale handle
            inner = set(st.leaves[st.leaves.index(lp) :])
            found = {owner}
        else:
            owner = self._block(block_or_loop, "get_child_blocks")
            inner = set(P.compute_stage(self.state, owner, "get_child_blocks").leaves)
            found = set()
        stages = list(self.state.stages.values())
        todo = [
            s.name
            for s in stages
            if isinstance(s.attach, Nested) and s.attach.block == owner and s.attach.loop in inner
        ]
        while todo:  # a block computed inside a nested block is nested too
            name = todo.pop()
            if name not in found:
                found.add(name)
                todo += [s.name for s in self.state.attached_to(name)]
        names = [s.name for s in stages if s.name in found]
        return self._step(
            "GetChildBlocks",
            {"block_or_loop": block_or_loop},
            lambda s: names,
            lambda ns: [self._new(BlockRV, n) for n in ns],
        )

    @instruction("GetProducers", inputs=("block",), pure=True, outputs="list")
    def get_producers(self, block: Any) -> list[BlockRV]:
        """The blocks whose output ``block`` reads, in program order (an inlined block
        is no block: its own producers count instead; inputs are no blocks either)."""
        b = self._block(block, "get_producers")
        P.compute_stage(self.state, b, "get_producers")
        found, todo = set(), [st.name for st in self.state.producers(b)]
        while todo:
            st = self.state.stage(todo.pop())
            if st.is_inlined:
                todo += [p.name for p in self.state.producers(st.name)]
            elif st.is_compute:
                found.add(st.name)
        names = [name for name in self.state.stages if name in found]
        return self._step(
            "GetProducers",
            {"block": block},
            lambda s: names,
            lambda ns: [self._new(BlockRV, n) for n in ns],
        )

    @instruction("GetConsumers", inputs=("block",), pure=True, outputs="list")
    def get_consumers(self, block: Any) -> list[BlockRV]:
        """The blocks that read ``block``'s output, in program order (through inlined
        blocks, which are no blocks any more)."""
        b = self._block(block, "get_consumers")
        P.compute_stage(self.state, b, "get_consumers")
        found, todo = set(), [st.name for st in self.state.consumers(b)]
        while todo:
            st = self.state.stage(todo.pop())
            if st.is_inlined:
                todo += [c.name for c in self.state.consumers(st.name)]
            else:
                found.add(st.name)
        names = [name for name in self.state.stages if name in found]
        return self._step(
            "GetConsumers",
            {"block": block},
            lambda s: names,
            lambda ns: [self._new(BlockRV, n) for n in ns],
        )

    # -- loop transformations ---------------------------------------------------------
    @instruction(
        "Split",
        inputs=("loop", "factors"),
        outputs="list",
        ignored={"preserve_unit_iters": True},
    )
    def split(
        self,
        loop: LoopRV,
        factors: Sequence[Any] | None = None,
        preserve_unit_iters: bool = True,
        nparts: int | None = None,
        factor: int | None = None,
    ) -> list[LoopRV]:
        """Split a loop: ``factors=[None, 16]`` (one None is inferred; with no None they must
        multiply to the extent). Non-dividing factors give guarded code.

        The loop is replaced by one loop per factor, outermost first, named ``<loop>_0``,
        ``<loop>_1``, ...; the block's indices become ``i_0 * 16 + i_1``. ``factor=`` and
        ``nparts=`` (TE's spelling) are accepted too. A factor may be a value drawn by
        ``sample_perfect_tile``. Blocks computed at the loop move to the innermost new loop.

        Example
        -------
        Before::

            @T.prim_func
            def main(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32")):
                # stage "B"
                for i in range(64):
                    for j in range(64):
                        B[i, j] = A[i, j] * T.float32(2.0)

        Schedule::

            sch = tir.Schedule(before)
            i, j = sch.get_loops(sch.get_block("B"))
            sch.split(i, factors=[None, 16])

        After::

            @T.prim_func
            def main(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32")):
                # stage "B"
                for i_0 in range(4):
                    for i_1 in range(16):
                        for j in range(64):
                            B[i_0 * 16 + i_1, j] = A[i_0 * 16 + i_1, j] * T.float32(2.0)
        """
        block, name = self._loop(loop, "split")
        if factors is None:
            if (factor is None) == (nparts is None):
                raise ScheduleError("split: give factors=[...], or exactly one of factor=/nparts=")
            factors = [None, factor] if factor is not None else [nparts, None]
        values = [self._int(f, "split") for f in factors]
        new = self._step(
            "Split",
            {"loop": loop, "factors": list(factors)},
            lambda s: P.split(s, block, name, values),
            lambda names: [self._new(LoopRV, (block, n)) for n in names],
        )
        return new

    @instruction(
        "Fuse",
        inputs=("loops",),
        varargs="loops",
        outputs="one",
        ignored={"preserve_unit_iters": True},
    )
    def fuse(self, *loops: LoopRV, preserve_unit_iters: bool = True) -> LoopRV:
        """Fuse adjacent loops of one block into one loop.

        The loops must be adjacent, in order, and all spatial or all reduction. The fused loop,
        named ``<a>_<b>_fused``, runs over the product of the extents; the original indices come
        back as ``//`` and ``%`` of it.

        Example
        -------
        Before::

            @T.prim_func
            def main(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32")):
                # stage "B"
                for i in range(64):
                    for j in range(64):
                        B[i, j] = A[i, j] * T.float32(2.0)

        Schedule::

            sch = tir.Schedule(before)
            i, j = sch.get_loops(sch.get_block("B"))
            sch.fuse(i, j)

        After::

            @T.prim_func
            def main(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32")):
                # stage "B"
                for i_j_fused in range(4096):
                    B[i_j_fused // 64, i_j_fused % 64] = A[i_j_fused // 64, i_j_fused % 64] * T.float32(2.0)
        """  # noqa: E501
        resolved = [self._loop(lp, "fuse") for lp in loops]
        blocks = {b for b, _ in resolved}
        if len(blocks) > 1:
            raise ScheduleError(f"fuse: the loops belong to different blocks {sorted(blocks)}")
        if not resolved:
            raise ScheduleError("fuse: needs at least one loop")
        block = resolved[0][0]
        return self._step(
            "Fuse",
            {"loops": list(loops)},
            lambda s: P.fuse(s, block, [n for _, n in resolved]),
            lambda n: [self._new(LoopRV, (block, n))],
        )[0]

    @instruction("Reorder", inputs=("ordered_loops",), varargs="ordered_loops")
    def reorder(self, *ordered_loops: LoopRV) -> None:
        """Reorder loops of one block into the given order.

        The given loops take the positions they already occupy, in the given order; loops not named
        stay where they are. A block computed after one of the loops must stay outside the reduction
        loops.

        Example
        -------
        Before::

            @T.prim_func
            def main(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32")):
                # stage "B"
                for i in range(64):
                    for j in range(64):
                        B[i, j] = A[i, j] * T.float32(2.0)

        Schedule::

            sch = tir.Schedule(before)
            i, j = sch.get_loops(sch.get_block("B"))
            sch.reorder(j, i)

        After::

            @T.prim_func
            def main(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32")):
                # stage "B"
                for j in range(64):
                    for i in range(64):
                        B[i, j] = A[i, j] * T.float32(2.0)
        """
        resolved = [self._loop(lp, "reorder") for lp in ordered_loops]
        blocks = {b for b, _ in resolved}
        if len(blocks) > 1:
            raise ScheduleError(
                f"reorder: the loops come from different loop nests (blocks {sorted(blocks)}); "
                "reorder loops of one block at a time"
            )
        if not resolved:
            return
        block = resolved[0][0]
        self._step(
            "Reorder",
            {"ordered_loops": list(ordered_loops)},
            lambda s: P.reorder(s, block, [n for _, n in resolved]),
        )

    def tile(self, x: LoopRV, y: LoopRV, x_factor: Any, y_factor: Any) -> list[LoopRV]:
        """Sugar: split x and y and reorder to (xo, yo, xi, yi); recorded as those steps.

        Shorthand for two splits and a reorder; the trace records those three steps, so it replays
        on any schedule.

        Example
        -------
        Before::

            @T.prim_func
            def main(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32")):
                # stage "B"
                for i in range(64):
                    for j in range(64):
                        B[i, j] = A[i, j] * T.float32(2.0)

        Schedule::

            sch = tir.Schedule(before)
            i, j = sch.get_loops(sch.get_block("B"))
            sch.tile(i, j, 16, 8)

        After::

            @T.prim_func
            def main(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32")):
                # stage "B"
                for i_0 in range(4):
                    for j_0 in range(8):
                        for i_1 in range(16):
                            for j_1 in range(8):
                                B[i_0 * 16 + i_1, j_0 * 8 + j_1] = A[i_0 * 16 + i_1, j_0 * 8 + j_1] * T.float32(2.0)
        """  # noqa: E501
        xo, xi = self.split(x, [None, x_factor])
        yo, yi = self.split(y, [None, y_factor])
        self.reorder(xo, yo, xi, yi)
        return [xo, yo, xi, yi]

    def _annotate_kind(self, kind_name: str, loop: LoopRV, kind: str) -> None:
        block, name = self._loop(loop, kind_name.lower())
        prim = {"Parallel": "parallel", "Vectorize": "vectorize", "Unroll": "unroll"}.get(
            kind_name, "bind"
        )
        args = {"loop": loop} if kind_name != "Bind" else {"loop": loop, "thread_axis": kind}
        self._step(kind_name, args, lambda s: P.annotate_loop(s, block, name, kind, prim))

    @instruction("Parallel", inputs=("loop",))
    def parallel(self, loop: LoopRV) -> None:
        """Run the loop's iterations on all cores.

        The LLVM backend outlines the loop body and runs its iterations on a thread pool. A
        reduction loop cannot be parallel: its iterations update the same element (rfactor it
        first).

        Example
        -------
        Before::

            @T.prim_func
            def main(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32")):
                # stage "B"
                for i in range(64):
                    for j in range(64):
                        B[i, j] = A[i, j] * T.float32(2.0)

        Schedule::

            sch = tir.Schedule(before)
            i, j = sch.get_loops(sch.get_block("B"))
            sch.parallel(i)

        After::

            @T.prim_func
            def main(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32")):
                # stage "B"
                for i in T.parallel(64):
                    for j in range(64):
                        B[i, j] = A[i, j] * T.float32(2.0)
        """
        self._annotate_kind("Parallel", loop, "parallel")

    @instruction("Vectorize", inputs=("loop",))
    def vectorize(self, loop: LoopRV) -> None:
        """Run the loop as SIMD lanes.

        Usually the innermost loop, split to the target's vector width. The code generator emits
        vector loads and stores where the accesses are contiguous, and gathers or scalar code where
        they are not; a reduction loop cannot be vectorized.

        Example
        -------
        Before::

            @T.prim_func
            def main(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32")):
                # stage "B"
                for i in range(64):
                    for j in range(64):
                        B[i, j] = A[i, j] * T.float32(2.0)

        Schedule::

            sch = tir.Schedule(before)
            i, j = sch.get_loops(sch.get_block("B"))
            j_0, j_1 = sch.split(j, factors=[None, 8])
            sch.vectorize(j_1)

        After::

            @T.prim_func
            def main(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32")):
                # stage "B"
                for i in range(64):
                    for j_0 in range(8):
                        for j_1 in T.vectorized(8):
                            B[i, j_0 * 8 + j_1] = A[i, j_0 * 8 + j_1] * T.float32(2.0)
        """
        self._annotate_kind("Vectorize", loop, "vectorize")

    @instruction("Unroll", inputs=("loop",))
    def unroll(self, loop: LoopRV) -> None:
        """Unroll the loop fully.

        The code generator repeats the body once per iteration; keep the extent small (split first).

        Example
        -------
        Before::

            @T.prim_func
            def main(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32")):
                # stage "B"
                for i in range(64):
                    for j in range(64):
                        B[i, j] = A[i, j] * T.float32(2.0)

        Schedule::

            sch = tir.Schedule(before)
            i, j = sch.get_loops(sch.get_block("B"))
            j_0, j_1 = sch.split(j, factors=[None, 4])
            sch.unroll(j_1)

        After::

            @T.prim_func
            def main(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32")):
                # stage "B"
                for i in range(64):
                    for j_0 in range(16):
                        for j_1 in T.unroll(4):
                            B[i, j_0 * 4 + j_1] = A[i, j_0 * 4 + j_1] * T.float32(2.0)
        """
        self._annotate_kind("Unroll", loop, "unroll")

    @instruction("Bind", inputs=("loop",), attrs=("thread_axis",))
    def bind(self, loop: LoopRV, thread_axis: Any) -> None:
        """Bind the loop to a GPU thread index ("blockIdx.x", "threadIdx.x", "vthread"...).

        Each thread tag is bound to at most one loop of a block. A bound program is for a GPU
        target: an LLVM (CPU) build refuses it and says so.

        Example
        -------
        Before::

            @T.prim_func
            def main(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32")):
                # stage "B"
                for i in range(64):
                    for j in range(64):
                        B[i, j] = A[i, j] * T.float32(2.0)

        Schedule::

            sch = tir.Schedule(before)
            i, j = sch.get_loops(sch.get_block("B"))
            sch.bind(i, "blockIdx.x")
            sch.bind(j, "threadIdx.x")

        After::

            @T.prim_func
            def main(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32")):
                # stage "B"
                for i in T.thread_binding(64, thread="blockIdx.x"):
                    for j in T.thread_binding(64, thread="threadIdx.x"):
                        B[i, j] = A[i, j] * T.float32(2.0)
        """
        tag = getattr(thread_axis, "thread_tag", thread_axis)
        self._annotate_kind("Bind", loop, str(tag))

    @instruction("Annotate", inputs=("block_or_loop", "ann_val"), attrs=("ann_key",))
    def annotate(self, block_or_loop: Any, ann_key: str, ann_val: Any) -> None:
        """Attach an annotation (e.g. "pragma_auto_unroll_max_step": 64) to a loop or block.

        The pair is printed on the loop (``T.serial(..., annotations={...})``; given a block, on its
        outermost loop) and travels with the program to the code generator
        (``pragma_auto_unroll_max_step`` unrolls the loops beneath up to that many steps). A value
        drawn by ``sample_categorical`` may be given; the trace records its handle.

        Example
        -------
        Before::

            @T.prim_func
            def main(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32")):
                # stage "B"
                for i in range(64):
                    for j in range(64):
                        B[i, j] = A[i, j] * T.float32(2.0)

        Schedule::

            sch = tir.Schedule(before)
            i, j = sch.get_loops(sch.get_block("B"))
            sch.annotate(i, "pragma_auto_unroll_max_step", 16)

        After::

            @T.prim_func
            def main(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32")):
                # stage "B"
                for i in T.serial(64, annotations={"pragma_auto_unroll_max_step": 16}):
                    for j in range(64):
                        B[i, j] = A[i, j] * T.float32(2.0)
        """
        if isinstance(block_or_loop, LoopRV):
            block, name = self._loop(block_or_loop, "annotate")
        else:
            block, name = self._block(block_or_loop, "annotate"), None
        value = self._int(ann_val, "annotate")  # a sampled value is recorded as its handle
        self._step(
            "Annotate",
            {"block_or_loop": block_or_loop, "ann_key": ann_key, "ann_val": ann_val},
            lambda s: P.pragma(s, block, name, ann_key, value),
        )

    # -- compute locations ------------------------------------------------------------
    @instruction(
        "ComputeAt",
        inputs=("block", "loop"),
        attrs=("preserve_unit_loops",),
        ignored={"preserve_unit_loops": False, "index": -1},
    )
    def compute_at(
        self, block: Any, loop: LoopRV, preserve_unit_loops: bool = False, index: int = -1
    ) -> None:
        """Compute ``block`` inside ``loop`` of one of its consumers (only the region used).

        Each iteration of ``loop`` computes only the region of the producer that iteration reads,
        into a buffer shrunk to that region (``(1, 64)`` below). ``loop`` may also be the root or
        inline location drawn by ``sample_compute_location``.

        Example
        -------
        Before::

            @T.prim_func
            def main(A: T.Buffer((64, 64), "float32"), C: T.Buffer((64, 64), "float32")):
                B = T.alloc_buffer((64, 64), "float32")
                # stage "B"
                for i in range(64):
                    for j in range(64):
                        B[i, j] = A[i, j] * T.float32(2.0)
                # stage "C"
                for i_1 in range(64):
                    for j_1 in range(64):
                        C[i_1, j_1] = B[i_1, j_1] + T.float32(1.0)

        Schedule::

            sch = tir.Schedule(before)
            i, j = sch.get_loops(sch.get_block("C"))
            sch.compute_at(sch.get_block("B"), i)

        After::

            @T.prim_func
            def main(A: T.Buffer((64, 64), "float32"), C: T.Buffer((64, 64), "float32")):
                # stage "C"
                for i_1 in range(64):
                    B = T.alloc_buffer((1, 64), "float32")
                    # stage "B"
                    for j in range(64):
                        B[0, j] = A[i_1, j] * T.float32(2.0)
                    for j_1 in range(64):
                        C[i_1, j_1] = B[0, j_1] + T.float32(1.0)
        """
        b = self._block(block, "compute_at")
        value = self._lookup(loop, LoopRV, "compute_at")
        args = {"block": block, "loop": loop, "preserve_unit_loops": preserve_unit_loops}
        if value == _ROOT:
            self._step("ComputeAt", args, lambda s: P.compute_root(s, b))
        elif value == _INLINE:
            self._step("ComputeAt", args, lambda s: P.compute_inline(s, b))
        else:
            target, name = value
            self._step("ComputeAt", args, lambda s: P.compute_at(s, b, target, name))

    @instruction(
        "ReverseComputeAt",
        inputs=("block", "loop"),
        attrs=("preserve_unit_loops",),
        ignored={"preserve_unit_loops": False, "index": -1},
    )
    def reverse_compute_at(
        self, block: Any, loop: LoopRV, preserve_unit_loops: bool = False, index: int = -1
    ) -> None:
        """Compute consumer ``block`` right after ``loop`` of its producer, on its output.

        The consumer moves under ``loop`` of the block it reads, and each iteration consumes the
        region just produced, so the intermediate shrinks to that region. ``loop`` must be outside
        the producer's reduction loops.

        Example
        -------
        Before::

            @T.prim_func
            def main(A: T.Buffer((64, 64), "float32"), C: T.Buffer((64, 64), "float32")):
                B = T.alloc_buffer((64, 64), "float32")
                # stage "B"
                for i in range(64):
                    for j in range(64):
                        B[i, j] = A[i, j] * T.float32(2.0)
                # stage "C"
                for i_1 in range(64):
                    for j_1 in range(64):
                        C[i_1, j_1] = B[i_1, j_1] + T.float32(1.0)

        Schedule::

            sch = tir.Schedule(before)
            i, j = sch.get_loops(sch.get_block("B"))
            sch.reverse_compute_at(sch.get_block("C"), i)

        After::

            @T.prim_func
            def main(A: T.Buffer((64, 64), "float32"), C: T.Buffer((64, 64), "float32")):
                # stage "B"
                for i in range(64):
                    B = T.alloc_buffer((1, 64), "float32")
                    for j in range(64):
                        B[0, j] = A[i, j] * T.float32(2.0)
                    # stage "C"
                    for j_1 in range(64):
                        C[i, j_1] = B[0, j_1] + T.float32(1.0)
        """
        b = self._block(block, "reverse_compute_at")
        target, name = self._loop(loop, "reverse_compute_at")
        self._step(
            "ReverseComputeAt",
            {"block": block, "loop": loop, "preserve_unit_loops": preserve_unit_loops},
            lambda s: P.reverse_compute_at(s, b, target, name),
        )

    @instruction("ComputeInline", inputs=("block",))
    def compute_inline(self, block: Any) -> None:
        """Inline an elementwise block into its consumers.

        Every read of the block's buffer is replaced by the block's expression and the buffer
        disappears. Only elementwise (non-reduction) blocks that are not outputs of the function can
        be inlined.

        Example
        -------
        Before::

            @T.prim_func
            def main(A: T.Buffer((64, 64), "float32"), C: T.Buffer((64, 64), "float32")):
                B = T.alloc_buffer((64, 64), "float32")
                # stage "B"
                for i in range(64):
                    for j in range(64):
                        B[i, j] = A[i, j] * T.float32(2.0)
                # stage "C"
                for i_1 in range(64):
                    for j_1 in range(64):
                        C[i_1, j_1] = B[i_1, j_1] + T.float32(1.0)

        Schedule::

            sch = tir.Schedule(before)
            sch.compute_inline(sch.get_block("B"))

        After::

            @T.prim_func
            def main(A: T.Buffer((64, 64), "float32"), C: T.Buffer((64, 64), "float32")):
                # stage "C"
                for i in range(64):
                    for j in range(64):
                        C[i, j] = A[i, j] * T.float32(2.0) + T.float32(1.0)
        """
        b = self._block(block, "compute_inline")
        self._step("ComputeInline", {"block": block}, lambda s: P.compute_inline(s, b))

    @instruction("ReverseComputeInline", inputs=("block",))
    def reverse_compute_inline(self, block: Any) -> None:
        """Inline an elementwise consumer into its producer's loops.

        The consumer must read exactly one computed block, which is not a reduction and not an
        output: the producer's loops then store the consumer's expression of the produced value, and
        the intermediate buffer disappears.

        Example
        -------
        Before::

            @T.prim_func
            def main(A: T.Buffer((64, 64), "float32"), C: T.Buffer((64, 64), "float32")):
                B = T.alloc_buffer((64, 64), "float32")
                # stage "B"
                for i in range(64):
                    for j in range(64):
                        B[i, j] = A[i, j] * T.float32(2.0)
                # stage "C"
                for i_1 in range(64):
                    for j_1 in range(64):
                        C[i_1, j_1] = B[i_1, j_1] + T.float32(1.0)

        Schedule::

            sch = tir.Schedule(before)
            sch.reverse_compute_inline(sch.get_block("C"))

        After::

            @T.prim_func
            def main(A: T.Buffer((64, 64), "float32"), C: T.Buffer((64, 64), "float32")):
                # stage "C"
                for i in range(64):
                    for j in range(64):
                        C[i, j] = A[i, j] * T.float32(2.0) + T.float32(1.0)
        """
        b = self._block(block, "reverse_compute_inline")
        self._step(
            "ReverseComputeInline", {"block": block}, lambda s: P.reverse_compute_inline(s, b)
        )

    @instruction("ComputeRoot", inputs=("block",))
    def compute_root(self, block: Any) -> None:
        """Compute ``block`` at the top level.

        Undoes a ``compute_at`` or ``reverse_compute_at``: the block gets its own loop nest again,
        at the top level, over its whole buffer.

        Example
        -------
        Before::

            @T.prim_func
            def main(A: T.Buffer((64, 64), "float32"), C: T.Buffer((64, 64), "float32")):
                # stage "C"
                for i_1 in range(64):
                    B = T.alloc_buffer((1, 64), "float32")
                    # stage "B"
                    for j in range(64):
                        B[0, j] = A[i_1, j] * T.float32(2.0)
                    for j_1 in range(64):
                        C[i_1, j_1] = B[0, j_1] + T.float32(1.0)

        Schedule::

            sch = tir.Schedule(before)
            i, j = sch.get_loops(sch.get_block("C"))
            sch.compute_at(sch.get_block("B"), i)
            # (Before is the program at this point)
            sch.compute_root(sch.get_block("B"))

        After::

            @T.prim_func
            def main(A: T.Buffer((64, 64), "float32"), C: T.Buffer((64, 64), "float32")):
                B = T.alloc_buffer((64, 64), "float32")
                # stage "B"
                for i in range(64):
                    for j in range(64):
                        B[i, j] = A[i, j] * T.float32(2.0)
                # stage "C"
                for i_1 in range(64):
                    for j_1 in range(64):
                        C[i_1, j_1] = B[i_1, j_1] + T.float32(1.0)
        """
        b = self._block(block, "compute_root")
        self._step("ComputeRoot", {"block": block}, lambda s: P.compute_root(s, b))

    # -- caches, rfactor, storage -----------------------------------------------------
    @instruction(
        "CacheRead",
        inputs=("block", "consumer_blocks"),
        attrs=("read_buffer_index", "storage_scope"),
        outputs="one",
    )
    def cache_read(
        self,
        block: Any,
        read_buffer_index: int | str,
        storage_scope: str,
        consumer_blocks: Any = None,
    ) -> BlockRV:
        """A block copying the ``read_buffer_index``-th tensor ``block`` reads into
        ``storage_scope``; ``block`` then reads the copy.

        The copy block (returned, named ``<tensor>_<scope>``) runs at the top level over the whole
        tensor; ``compute_at`` it into a loop of the reader to copy one tile at a time.
        ``read_buffer_index`` counts the tensors the block reads, in order of first read (a tensor
        name is accepted too); ``consumer_blocks`` lists other readers that should read the copy as
        well.

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

            sch = tir.Schedule(before)
            sch.cache_read(sch.get_block("C"), 0, "local")

        After::

            @T.prim_func
            def main(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
                A_local = T.alloc_buffer((16, 16), "float32", scope="local")
                # stage "A_local"
                for ax0 in range(16):
                    for ax1 in range(16):
                        A_local[ax0, ax1] = A[ax0, ax1]
                # stage "C"
                for i in range(16):
                    for j in range(16):
                        C[i, j] = T.float32(0.0)
                        for k in range(16):
                            C[i, j] = C[i, j] + A_local[i, k] * B[k, j]
        """  # noqa: E501
        b = self._block(block, "cache_read")
        others = [self._block(c, "cache_read") for c in (consumer_blocks or [])]
        args = {
            "block": block,
            "read_buffer_index": read_buffer_index,
            "storage_scope": storage_scope,
        }
        if consumer_blocks:
            args["consumer_blocks"] = list(consumer_blocks)
        return self._step(
            "CacheRead",
            args,
            lambda s: P.cache_read(s, b, read_buffer_index, storage_scope, others),
            lambda n: [self._new(BlockRV, n)],
        )[0]

    @instruction(
        "CacheWrite",
        inputs=("block",),
        attrs=("write_buffer_index", "storage_scope", "te_style"),
        outputs="one",
    )
    def cache_write(
        self,
        block: Any,
        write_buffer_index: int = 0,
        storage_scope: str = "local",
        te_style: bool = False,
    ) -> BlockRV:
        """``block`` computes into a ``storage_scope`` buffer; the returned block copies it out.

        (``te_style=True`` gives TE's ``s.cache_write`` instead: the returned block computes.)

        The computation keeps the block's name and loops but writes the ``<tensor>_<scope>`` buffer;
        the returned block copies that buffer into the original one. Move the copy next to the
        computation with ``reverse_compute_at`` to write one tile at a time.

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

            sch = tir.Schedule(before)
            sch.cache_write(sch.get_block("C"), 0, "local")

        After::

            @T.prim_func
            def main(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
                C_local = T.alloc_buffer((16, 16), "float32", scope="local")
                # stage "C"
                for i in range(16):
                    for j in range(16):
                        C_local[i, j] = T.float32(0.0)
                        for k in range(16):
                            C_local[i, j] = C_local[i, j] + A[i, k] * B[k, j]
                # stage "C_local"
                for i_1 in range(16):
                    for j_1 in range(16):
                        C[i_1, j_1] = C_local[i_1, j_1]
        """  # noqa: E501
        b = self._block(block, "cache_write")
        if write_buffer_index != 0:
            raise ScheduleError("cache_write: a block writes one buffer; use index 0")
        args = {
            "block": block,
            "write_buffer_index": write_buffer_index,
            "storage_scope": storage_scope,
        }
        if te_style:
            args["te_style"] = True
        return self._step(
            "CacheWrite",
            args,
            lambda s: P.cache_write(s, b, storage_scope, te_style),
            lambda n: [self._new(BlockRV, n)],
        )[0]

    @instruction("RFactor", inputs=("loop",), attrs=("factor_axis",), outputs="one")
    def rfactor(self, loop: LoopRV, factor_axis: int = 0) -> BlockRV:
        """Factor a reduction loop out into a new block of partial results (returned).

        The new block ``<tensor>_rf`` computes, for every iteration of ``loop``, a partial result
        over the other reduction loops, stored with the loop's index as axis ``factor_axis``; the
        original block then reduces the partial results. The partial results' loop is spatial, so it
        can be parallelized or vectorized.

        Example
        -------
        Before::

            @T.prim_func
            def main(A: T.Buffer((16, 64), "float32"), B: T.Buffer((16,), "float32")):
                # stage "B"
                for i in range(16):
                    B[i] = T.float32(0.0)
                    for k in range(64):
                        B[i] = B[i] + A[i, k]

        Schedule::

            sch = tir.Schedule(before)
            i, k = sch.get_loops(sch.get_block("B"))
            k_0, k_1 = sch.split(k, factors=[None, 4])
            sch.rfactor(k_1, 0)

        After::

            @T.prim_func
            def main(A: T.Buffer((16, 64), "float32"), B: T.Buffer((16,), "float32")):
                B_rf = T.alloc_buffer((4, 16), "float32")
                # stage "B_rf"
                for k_1 in range(4):
                    for i in range(16):
                        B_rf[k_1, i] = T.float32(0.0)
                        for k_0 in range(16):
                            B_rf[k_1, i] = B_rf[k_1, i] + A[i, k_0 * 4 + k_1]
                # stage "B"
                for i_1 in range(16):
                    B[i_1] = T.float32(0.0)
                    for k_1_v in range(4):
                        B[i_1] = B[i_1] + B_rf[k_1_v, i_1]
        """
        block, name = self._loop(loop, "rfactor")
        return self._step(
            "RFactor",
            {"loop": loop, "factor_axis": factor_axis},
            lambda s: P.rfactor(s, block, name, factor_axis),
            lambda n: [self._new(BlockRV, n)],
        )[0]

    @instruction("DecomposeReduction", inputs=("block", "loop"), outputs="one")
    def decompose_reduction(self, block: Any, loop: LoopRV) -> BlockRV:
        """Move the reduction's initialisation before ``loop``.

        The initialisation (``C[i, j] = 0``) gets its own copy of the spatial loops from ``loop``
        inward, placed just before ``loop``; the update keeps the original nest. ``loop`` is a loop
        of ``block`` that is not nested inside one of its reduction loops.

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

            sch = tir.Schedule(before)
            C = sch.get_block("C")
            i, j, k = sch.get_loops(C)
            sch.decompose_reduction(C, i)

        After::

            @T.prim_func
            def main(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
                # stage "C"
                for i in range(16):
                    for j in range(16):
                        C[i, j] = T.float32(0.0)
                for i in range(16):
                    for j in range(16):
                        for k in range(16):
                            C[i, j] = C[i, j] + A[i, k] * B[k, j]
        """  # noqa: E501
        b = self._block(block, "decompose_reduction")
        owner, name = self._loop(loop, "decompose_reduction")
        if owner != b:
            raise ScheduleError(
                f"decompose_reduction: loop {name!r} belongs to {owner!r}, not to {b!r}"
            )
        return self._step(
            "DecomposeReduction",
            {"block": block, "loop": loop},
            lambda s: P.decompose_reduction(s, b, name),
            lambda n: [self._new(BlockRV, _InitBlock(b))],
        )[0]

    @instruction(
        "StorageAlign",
        inputs=("block",),
        attrs=("buffer_index", "axis", "factor", "offset"),
        ignored={"buffer_index": 0},
    )
    def storage_align(
        self, block: Any, buffer_index: int, axis: int, factor: int, offset: int
    ) -> None:
        """Pad the written buffer so stride(axis) % factor == offset (avoids bank conflicts).

        The buffer keeps its shape; its allocation gets padded strides, printed as
        ``strides=(...)``. Only buffers of intermediate blocks can be aligned (a function argument's
        layout is fixed). ``buffer_index`` is always 0: a block writes one buffer.

        Example
        -------
        Before::

            @T.prim_func
            def main(A: T.Buffer((64, 64), "float32"), C: T.Buffer((64, 64), "float32")):
                B = T.alloc_buffer((64, 64), "float32")
                # stage "B"
                for i in range(64):
                    for j in range(64):
                        B[i, j] = A[i, j] * T.float32(2.0)
                # stage "C"
                for i_1 in range(64):
                    for j_1 in range(64):
                        C[i_1, j_1] = B[i_1, j_1] + T.float32(1.0)

        Schedule::

            sch = tir.Schedule(before)
            sch.storage_align(sch.get_block("B"), 0, 0, 16, 1)

        After::

            @T.prim_func
            def main(A: T.Buffer((64, 64), "float32"), C: T.Buffer((64, 64), "float32")):
                B = T.alloc_buffer((64, 64), "float32", strides=(65, 1))
                # stage "B"
                for i in range(64):
                    for j in range(64):
                        B[i, j] = A[i, j] * T.float32(2.0)
                # stage "C"
                for i_1 in range(64):
                    for j_1 in range(64):
                        C[i_1, j_1] = B[i_1, j_1] + T.float32(1.0)
        """
        b = self._block(block, "storage_align")
        self._step(
            "StorageAlign",
            {
                "block": block,
                "buffer_index": buffer_index,
                "axis": axis,
                "factor": factor,
                "offset": offset,
            },
            lambda s: P.storage_align(s, b, axis, factor, offset),
        )

    @instruction(
        "SetScope",
        inputs=("block",),
        attrs=("buffer_index", "storage_scope"),
        ignored={"buffer_index": 0},
    )
    def set_scope(self, block: Any, buffer_index: int, storage_scope: str) -> None:
        """Change the storage scope of the buffer ``block`` writes.

        Only the buffer of an intermediate block can move (a function argument stays global).
        ``buffer_index`` is always 0: a block writes one buffer.

        Example
        -------
        Before::

            @T.prim_func
            def main(A: T.Buffer((64, 64), "float32"), C: T.Buffer((64, 64), "float32")):
                B = T.alloc_buffer((64, 64), "float32")
                # stage "B"
                for i in range(64):
                    for j in range(64):
                        B[i, j] = A[i, j] * T.float32(2.0)
                # stage "C"
                for i_1 in range(64):
                    for j_1 in range(64):
                        C[i_1, j_1] = B[i_1, j_1] + T.float32(1.0)

        Schedule::

            sch = tir.Schedule(before)
            sch.set_scope(sch.get_block("B"), 0, "local")

        After::

            @T.prim_func
            def main(A: T.Buffer((64, 64), "float32"), C: T.Buffer((64, 64), "float32")):
                B = T.alloc_buffer((64, 64), "float32", scope="local")
                # stage "B"
                for i in range(64):
                    for j in range(64):
                        B[i, j] = A[i, j] * T.float32(2.0)
                # stage "C"
                for i_1 in range(64):
                    for j_1 in range(64):
                        C[i_1, j_1] = B[i_1, j_1] + T.float32(1.0)
        """
        b = self._block(block, "set_scope")
        self._step(
            "SetScope",
            {"block": block, "buffer_index": buffer_index, "storage_scope": storage_scope},
            lambda s: P.set_scope(s, b, storage_scope),
        )

    @instruction(
        "TransformLayout",
        inputs=("block",),
        attrs=("buffer", "index_map"),
        printers={"index_map": _index_map_text},
    )
    def transform_layout(
        self,
        block: Any,
        buffer: Any,
        index_map: Any,
        pad_value: Any = None,
        assume_injective_transform: bool = False,
    ) -> None:
        """Store a buffer with its axes permuted, as TVM's ``transform_layout``.

        ``buffer`` is ``("write", 0)``, ``("read", i)`` or a tensor name; ``index_map`` a
        function of the axes returning them permuted, e.g. ``lambda n, c, h, w: (n, h, w,
        c)`` (or the permutation as a list, ``[0, 2, 3, 1]``, as traces record it). Only
        permutations of intermediate buffers are supported (no padding, no splitting of an
        axis: ``split`` the loops and let the buffer follow); a permutation is injective,
        so ``assume_injective_transform`` changes nothing.

        Example
        -------
        Before::

            @T.prim_func
            def main(A: T.Buffer((64, 64), "float32"), C: T.Buffer((64, 64), "float32")):
                B = T.alloc_buffer((64, 64), "float32")
                # stage "B"
                for i in range(64):
                    for j in range(64):
                        B[i, j] = A[i, j] * T.float32(2.0)
                # stage "C"
                for i_1 in range(64):
                    for j_1 in range(64):
                        C[i_1, j_1] = B[i_1, j_1] + T.float32(1.0)

        Schedule::

            sch = tir.Schedule(before)
            sch.transform_layout(sch.get_block("B"), ("write", 0), lambda i, j: (j, i))

        After::

            @T.prim_func
            def main(A: T.Buffer((64, 64), "float32"), C: T.Buffer((64, 64), "float32")):
                B = T.alloc_buffer((64, 64), "float32")
                # stage "B"
                for i in range(64):
                    for j in range(64):
                        B[j, i] = A[i, j] * T.float32(2.0)
                # stage "C"
                for i_1 in range(64):
                    for j_1 in range(64):
                        C[i_1, j_1] = B[j_1, i_1] + T.float32(1.0)
        """
        b = self._block(block, "transform_layout")
        if pad_value is not None:
            raise ScheduleError(
                "transform_layout: pad_value is not supported; only "
                "permutations of the axes (no padding)"
            )
        owner = P.buffer_block(self.state, b, buffer, "transform_layout")
        ndim = len(self.state.stage(owner).op.axis)
        perm = _permutation(index_map, ndim)
        self._step(
            "TransformLayout",
            {"block": block, "buffer": buffer, "index_map": perm},
            lambda s: P.transform_layout(s, owner, perm),
        )

    @instruction("EnterPostproc", pure=True)
    def enter_postproc(self) -> None:
        """Mark the start of post-processing steps (``remove_postproc`` stops here)."""
        self._step("EnterPostproc", {}, lambda s: None)

    # -- sampling ---------------------------------------------------------------------
    @instruction(
        "SamplePerfectTile",
        inputs=("loop",),
        attrs=("n", "max_innermost_factor"),
        sampling=True,
        pure=True,
        outputs="list",
    )
    def sample_perfect_tile(
        self,
        loop: LoopRV,
        n: int,
        max_innermost_factor: int = 16,
        decision: Sequence[int] | None = None,
    ) -> list[ExprRV]:
        """Draw ``n`` tile sizes whose product is the loop's extent (a recorded decision).

        Pass the returned values to ``split`` as its factors. Unless ``decision`` is given, the tile
        sizes are drawn at random among those whose innermost one is at most
        ``max_innermost_factor``; the decision is recorded in the trace, where the search mutates
        it.

        Example
        -------
        Before::

            @T.prim_func
            def main(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32")):
                # stage "B"
                for i in range(64):
                    for j in range(64):
                        B[i, j] = A[i, j] * T.float32(2.0)

        Schedule::

            sch = tir.Schedule(before)
            i, j = sch.get_loops(sch.get_block("B"))
            i_factors = sch.sample_perfect_tile(i, n=2, decision=[4, 16])
            sch.split(i, factors=i_factors)

        After::

            @T.prim_func
            def main(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32")):
                # stage "B"
                for i_0 in range(4):
                    for i_1 in range(16):
                        for j in range(64):
                            B[i_0 * 16 + i_1, j] = A[i_0 * 16 + i_1, j] * T.float32(2.0)
        """
        block, name = self._loop(loop, "sample_perfect_tile")
        extent = derive_extents(P.leaf(self.state, block, name, "sample_perfect_tile"))[name]
        if n < 1:
            raise ScheduleError("sample_perfect_tile: n must be at least 1")
        if decision is None:
            decision = _draw_tile(self._rng, extent, n, max_innermost_factor)
        decision = [int(d) for d in decision]
        prod = 1
        for d in decision:
            prod *= d
        if len(decision) != n or prod != extent or min(decision) < 1:
            raise ScheduleError(
                f"sample_perfect_tile: decision {decision} does not split loop {name!r} of "
                f"extent {extent} into {n} factors"
            )
        return self._step(
            "SamplePerfectTile",
            {"loop": loop, "n": n, "max_innermost_factor": max_innermost_factor},
            lambda s: decision,
            lambda ds: [self._new(ExprRV, d) for d in ds],
            decision=list(decision),
        )

    @instruction(
        "SampleCategorical",
        attrs=("candidates", "probs"),
        sampling=True,
        pure=True,
        outputs="one",
    )
    def sample_categorical(
        self, candidates: Sequence[int], probs: Sequence[float], decision: int | None = None
    ) -> ExprRV:
        """Draw one of ``candidates`` with probabilities ``probs`` (a recorded decision).

        The returned value is used like an int, e.g. as an annotation value; the decision is the
        index of the chosen candidate, recorded in the trace.

        Example
        -------
        Before::

            @T.prim_func
            def main(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32")):
                # stage "B"
                for i in range(64):
                    for j in range(64):
                        B[i, j] = A[i, j] * T.float32(2.0)

        Schedule::

            sch = tir.Schedule(before)
            i, j = sch.get_loops(sch.get_block("B"))
            v = sch.sample_categorical([0, 16, 64], [0.4, 0.3, 0.3], decision=1)
            sch.annotate(i, "pragma_auto_unroll_max_step", v)

        After::

            @T.prim_func
            def main(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32")):
                # stage "B"
                for i in T.serial(64, annotations={"pragma_auto_unroll_max_step": 16}):
                    for j in range(64):
                        B[i, j] = A[i, j] * T.float32(2.0)
        """
        candidates = [int(c) for c in candidates]
        probs = [float(p) for p in probs]
        if len(candidates) != len(probs) or not candidates:
            raise ScheduleError("sample_categorical: candidates and probs must have one length")
        if decision is None:
            decision = _draw_categorical(self._rng, probs)
        if not 0 <= int(decision) < len(candidates):
            raise ScheduleError(f"sample_categorical: decision {decision} out of range")
        d = int(decision)
        return self._step(
            "SampleCategorical",
            {"candidates": candidates, "probs": probs},
            lambda s: candidates[d],
            lambda v: [self._new(ExprRV, v)],
            decision=d,
        )[0]

    def compute_location_candidates(self, block: Any) -> list[tuple[str, str]]:
        """Loops ``block`` may be computed at: every loop of its single consumer."""
        b = self._block(block, "sample_compute_location")
        consumers = [c for c in self.state.consumers(b) if not c.is_inlined]
        if len(consumers) != 1:
            return []
        c = consumers[0]
        # every loop of the single consumer encloses its reads, so each is a legal place;
        # (trying compute_at on each would cost a bound inference per loop)
        return [(c.name, lp) for lp in c.leaves]

    @instruction(
        "SampleComputeLocation",
        inputs=("block",),
        sampling=True,
        pure=True,
        outputs="one",
    )
    def sample_compute_location(self, block: Any, decision: int | None = None) -> LoopRV:
        """Draw where to compute ``block``: -2 inline, -1 root, k the k-th candidate loop.

        The candidates are the loops of the block's single consumer; pass the returned location to
        ``compute_at``, which then computes the block there (or inlines it, or leaves it at the
        root). The decision is recorded in the trace.

        Example
        -------
        Before::

            @T.prim_func
            def main(A: T.Buffer((64, 64), "float32"), C: T.Buffer((64, 64), "float32")):
                B = T.alloc_buffer((64, 64), "float32")
                # stage "B"
                for i in range(64):
                    for j in range(64):
                        B[i, j] = A[i, j] * T.float32(2.0)
                # stage "C"
                for i_1 in range(64):
                    for j_1 in range(64):
                        C[i_1, j_1] = B[i_1, j_1] + T.float32(1.0)

        Schedule::

            sch = tir.Schedule(before)
            B = sch.get_block("B")
            loc = sch.sample_compute_location(B, decision=0)
            sch.compute_at(B, loc)

        After::

            @T.prim_func
            def main(A: T.Buffer((64, 64), "float32"), C: T.Buffer((64, 64), "float32")):
                # stage "C"
                for i_1 in range(64):
                    B = T.alloc_buffer((1, 64), "float32")
                    # stage "B"
                    for j in range(64):
                        B[0, j] = A[i_1, j] * T.float32(2.0)
                    for j_1 in range(64):
                        C[i_1, j_1] = B[0, j_1] + T.float32(1.0)
        """
        b = self._block(block, "sample_compute_location")
        cands = self.compute_location_candidates(block)
        st = self.state.stage(b)
        inlinable = not st.op.reduce_axis and not self.state.is_output(st)
        choices = ([-2] if inlinable else []) + [-1] + list(range(len(cands)))
        if decision is None:
            decision = self._rng.choice(choices)
        if decision not in choices:
            raise ScheduleError(
                f"sample_compute_location: decision {decision} is not one of {choices}"
            )
        value = _INLINE if decision == -2 else _ROOT if decision == -1 else cands[decision]
        return self._step(
            "SampleComputeLocation",
            {"block": block},
            lambda s: value,
            lambda v: [self._new(LoopRV, v)],
            decision=int(decision),
        )[0]

    # -- traces -----------------------------------------------------------------------
    def replay(self, trace: Trace | TraceData | dict | str) -> Schedule:
        """Apply a trace (object or JSON) to this schedule; returns self."""
        if isinstance(trace, (dict, str)):
            trace = Trace.from_json(trace)
        trace.apply_to_schedule(self)
        return self

    def __repr__(self) -> str:
        return f"tir.Schedule({len(self._trace.insts)} steps)\n{self.mod.script()}"


def _permutation(index_map: Any, ndim: int) -> list[int]:
    """The axis permutation an index map (a function or a list of ints) describes."""
    if isinstance(index_map, (list, tuple)):
        perm = [int(a) for a in index_map]
    elif callable(index_map):
        axes = [E.Var(f"i{d}", "int32") for d in range(ndim)]
        try:
            out = index_map(*axes)
        except TypeError as err:
            raise ScheduleError(
                f"transform_layout: index_map must take the buffer's {ndim} axes: {err}"
            ) from None
        out = list(out) if isinstance(out, (list, tuple)) else [out]
        perm = []
        for e in out:
            match = [d for d, v in enumerate(axes) if e is v]
            if not match:
                raise ScheduleError(
                    "transform_layout: only permutations of the axes are supported, e.g. "
                    f"lambda n, c, h, w: (n, h, w, c); got an output {e}"
                )
            perm.append(match[0])
    else:
        raise ScheduleError(
            "transform_layout: index_map must be a function of the axes, "
            f"e.g. lambda i, j: (j, i), got {index_map!r}"
        )
    if sorted(perm) != list(range(ndim)):
        raise ScheduleError(
            f"transform_layout: index_map must return each of the {ndim} "
            f"axes exactly once, got the permutation {perm}"
        )
    return perm
