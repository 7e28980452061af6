"""The block-style schedule ``tir.Schedule`` (TVM's API), recording every step.

Every public method is one instruction: it resolves its handles, applies the primitive
to a copy of the State, and only when that succeeds adopts the copy, registers the new
handles and appends the instruction to the trace. A failing step raises ScheduleError
and leaves the schedule and its trace exactly as they were.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..errors import IRError, ScheduleError
from ..ir import nodes as N
from . import primitives as P
from .block_view import scheduled_func
from .init_block import InitBlock, InitLoop
from .instruction_kind import REGISTRY, instruction
from .loop_kinds import REDUCE
from .loop_program import LoopProgramSchedule
from .lower import lower_state
from .state import INLINE, ROOT, Attachment, Nested, State, derive_extents
from .tir_location import LocationSteps
from .tir_loops import LoopSteps
from .tir_merge import MergeSteps
from .tir_out_of_scope import OutOfScopeSteps
from .tir_sampling import SamplingSteps
from .tir_storage import StorageSteps
from .trace import RV, BlockRV, ExprRV, Instruction, LoopRV, Trace, TraceData

#: kind name -> declaration, read without loading (this module is what fills it)
_DECLARED = REGISTRY.declared
_ROOT = ROOT  # the special loops sample_compute_location returns; get() names them
_INLINE = INLINE
_SPECIAL_NAME = {ROOT: "__root__", INLINE: "__inline__"}


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


class Schedule(LoopSteps, LocationSteps, StorageSteps, SamplingSteps, MergeSteps, OutOfScopeSteps):
    """``tir.Schedule(func)``: schedule a PrimFunc made by ``te.create_prim_func``."""

    def __new__(cls, mod: Any = None, *args: Any, **kwargs: Any) -> Any:
        # a parsed hand-written loop program gets the loop primitives (loop_program.py)
        func = mod
        if isinstance(mod, N.IRModule):
            try:
                func = mod.main_function()
            except IRError:
                func = None  # __init__ says what is wrong
        source = getattr(func, "source", None)
        if cls is Schedule and getattr(source, "loop_program", False):
            return LoopProgramSchedule(func, source.iter_kinds)
        if cls is Schedule and getattr(source, "symbolic_args", None):
            from .symbolic_schedule import SymbolicBlockSchedule  # noqa: PLC0415 - cycle

            return super().__new__(SymbolicBlockSchedule)  # symbolic shapes: a probe
        return super().__new__(cls)

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
        if not isinstance(func, N.PrimFunc) or getattr(func.source, "args", None) is None:
            why = getattr(getattr(func, "source", None), "reason", "")
            raise ScheduleError(
                f"tir.Schedule cannot schedule this parsed function: {why}. It schedules "
                "programs whose blocks each have their own loop nest (as te.create_prim_func "
                "makes them); tvm.build(mod) builds this one as written"
                if why
                else "tir.Schedule needs a PrimFunc made by te.create_prim_func([A, B, C]) "
                f"or parsed from TVMScript; got {type(mod).__name__}"
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
        #: blocks moved by compute_at / reverse_compute_at with preserve_unit_loops=True
        self._unit_loops_kept: set[str] = set()
        self._show_unit_loops = False
        self._replay_loop_count: int | None = None  # set by Trace replay for GetLoops
        #: the choices of each sample_compute_location, in call order: the search mutates
        #: a compute location within the places that exist (not into a refused decision)
        self.location_choices: list[tuple[int, ...]] = []

    @property
    def show_unit_loops(self) -> bool:
        """Whether ``get_loops`` lists the loops of extent 1 a moved block keeps here.

        Off (TVM's behaviour): a block moved by compute_at / reverse_compute_at without
        ``preserve_unit_loops`` shows no loop of extent 1. The search's schedules turn it on
        (its sketch rules count every loop of a stage); their traces say so, and replay
        turns it on too.
        """
        return self._show_unit_loops

    @show_unit_loops.setter
    def show_unit_loops(self, value: bool) -> None:
        self._show_unit_loops = bool(value)
        self._trace.unit_loops = bool(value)

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
        if isinstance(value, InitLoop):
            raise ScheduleError(
                f"{prim}: {rv.name} is a loop of {value.block}_init, the init "
                f"decompose_reduction split off block {value.block!r}; its loops follow "
                f"{value.block!r}'s and can only be annotated (vectorize, unroll, parallel)"
            )
        return value

    def _block(self, rv: Any, prim: str) -> str:
        if isinstance(rv, str):
            return self.state.stage(rv).name
        value = self._lookup(rv, BlockRV, prim)
        if isinstance(value, InitBlock):
            raise ScheduleError(
                f"{prim}: {rv.name} is {value.name!r}, the init decompose_reduction split off "
                f"block {value.block!r}; it runs in {value.block!r}'s loop nest and follows its "
                f"loop schedule, so schedule block {value.block!r} instead"
            )
        return value

    def _init_block(self, name: str) -> InitBlock | None:
        """The init of a decomposed reduction called ``name`` ("C_init"), if there is one
        (a real block of that name wins)."""
        if not name.endswith("_init") or name in self.state.stages:
            return None
        owner = self.state.stages.get(name[: -len("_init")])
        return InitBlock(owner.name) if owner is not None and owner.init_at else None

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
        try:
            if decl.pure:
                result = fn(self.state)
            else:
                new_state = self.state.copy()
                result = fn(new_state)
                self.state = new_state
        except RecursionError:
            # te.compute bounds each body's depth; inlining a long chain of stages can
            # still nest the program past what the checks walk
            raise ScheduleError(
                f"{decl.method}: the program would nest too deeply (expressions hundreds of "
                "levels deep, e.g. a long chain of inlined stages); compute some of the "
                "stages at root instead"
            ) from None
        out_rvs = outputs(result) if outputs is not None else []
        self._trace.append(Instruction(kind, tuple(args.items()), tuple(out_rvs), decision))
        return out_rvs

    # -- the program ------------------------------------------------------------------
    @property
    def func_name(self) -> str:
        """The name of the scheduled function ("main" unless its IRModule named it)."""
        return self.func.name if self.func is not None else "main"

    def work_on(self, func_name: str) -> None:
        """Schedule function ``func_name`` (TVM's ``work_on``): the one function this
        schedule holds, so it checks the name; for another function of a module, make a
        schedule of it, ``tir.Schedule(mod[func_name])``."""
        if func_name != self.func_name:
            raise ScheduleError(
                f"work_on({func_name!r}): this schedule holds function {self.func_name!r} "
                f"only; schedule the other one with tvm.tir.Schedule(mod[{func_name!r}])"
            )

    @property
    def mod(self) -> N.IRModule:
        """The program of the current state, as an IRModule under ``func_name``.

        Its function is the optimized lowering (what ``tvm.build`` compiles); it prints,
        and compares under ``tvm.ir.structural_equal``, as TVM's TensorIR block form.
        """
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
            if not getattr(source, "symbolic_args", None):  # symbolic: the probe prints
                func = scheduled_func(func, source, self.state, self.args)
            self._mod_cache = (0, N.IRModule({name: func}))
            self._mod_state = self.state
        return self._mod_cache[1]

    @property
    def trace(self) -> Trace:
        """The steps applied so far (prints as ``def apply_trace(sch): ...``)."""
        return self._trace

    def show(self) -> None:
        """Print the program (TVM's block form; ``tvm.lower(sch.mod)`` is the loop form)."""
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
        other._unit_loops_kept = set(self._unit_loops_kept)
        other._show_unit_loops = self._show_unit_loops
        other._replay_loop_count = None
        other.location_choices = list(self.location_choices)
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
            if isinstance(value, InitBlock):
                st = self.state.stage(value.block)
                return BlockInfo(value.name, st.op.name, st.scope, st.attach)
            st = self.state.stage(value)
            return BlockInfo(st.name, st.op.name, st.scope, st.attach)
        if isinstance(rv, LoopRV):
            value = self._lookup(rv, LoopRV, "get")
            if value in (_ROOT, _INLINE):
                return _SPECIAL_NAME[value]
            if isinstance(value, InitLoop):
                st = P.leaf(self.state, value.block, value.loop, "get")
                return LoopInfo(
                    f"{value.block}_init",
                    value.loop,
                    derive_extents(st)[value.loop],
                    st.iters[value.loop].kind,
                    str(st.init_annotations.get(value.loop, "")),
                )
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
        if not isinstance(name, str):  # the lookups below take a str and fail obscurely
            raise ScheduleError(
                f"get_block: give the block's name as a str, e.g. sch.get_block('C'), "
                f"not {type(name).__name__} {name!r:.60}"
            )
        init = self._init_block(name)
        # the update of a decomposed reduction prints as "C_update", as in TVM
        owner = name[: -len("_update")] if name.endswith("_update") else None
        target = owner if owner in self.state.stages and name not in self.state.stages else name
        if init is None:
            self.state.stage(target)  # raises with the list of blocks when unknown
        func_name = self.func_name if func_name is None else func_name
        return self._step(
            "GetBlock",
            {"name": name, "func_name": func_name},
            lambda s: init or target,
            lambda b: [self._new(BlockRV, b)],
        )[0]

    def _enclosing_loops(self, block: str) -> list[tuple[str, str]]:
        st = P.compute_stage(self.state, block, "get_loops")
        hidden = P.merged_leaves(self.state, block)  # they run as another block's loops
        own = [(block, lp) for lp in st.leaves if lp not in hidden]
        loops = self.state.enclosing_loops(block) + own
        count = self._replay_loop_count
        if self.show_unit_loops and count in (None, len(loops)):
            return loops  # the search's hot path: no extents derived
        shown = self._without_unit_loops(loops)
        preferred, other = (loops, shown) if self.show_unit_loops else (shown, loops)
        if count is not None and len(preferred) != count and len(other) == count:
            # a trace replays as it was recorded, with or without unit loops; a trace of
            # the search's leaves this schedule listing them, as it was made
            if other is loops:
                self.show_unit_loops = True
            return other
        return preferred

    def _init_loops(self, block: str) -> list:
        """The loops around a decomposed reduction's init: the block's loops outside the
        decomposition point, then the init's own copies of the spatial loops inside it."""
        st = P.compute_stage(self.state, block, "get_loops")
        at = st.leaves.index(st.init_at)
        outer = self.state.enclosing_loops(block) + [(block, lp) for lp in st.leaves[:at]]
        own = [InitLoop(block, lp) for lp in st.leaves[at:] if st.iters[lp].kind != REDUCE]
        return self._without_unit_loops(outer) + own

    def _without_unit_loops(self, loops: list) -> list:
        """``loops`` without the unit loops TVM would not have: compute_at and
        reverse_compute_at without ``preserve_unit_loops`` make no loop of extent 1 for
        the block they move (our stage keeps its axes, which lowering drops)."""
        extents: dict = {}  # per moved stage, derived once
        out = []
        for block, loop in loops:
            if block not in extents:
                st = self.state.stages.get(block)
                moved = (
                    st is not None
                    and isinstance(st.attach, Nested)
                    and block not in self._unit_loops_kept
                )
                extents[block] = derive_extents(st) if moved else None
            if extents[block] is None or extents[block].get(loop) != 1:
                out.append((block, loop))
        return out

    #: TVM >= 0.22 calls blocks "sblocks" (``tvm.s_tir.Schedule.get_sblock``)
    get_sblock = get_block

    @instruction("GetLoops", inputs=("block",), pure=True, outputs="list")
    def get_loops(self, block: Any) -> list[LoopRV]:
        """The loops around ``block``, outermost first (those of the block it is computed at
        included)."""
        init = self._lookup(block, BlockRV, "get_loops") if isinstance(block, BlockRV) else None
        if isinstance(init, InitBlock):
            loops = self._init_loops(init.block)
        else:
            loops = self._enclosing_loops(self._block(block, "get_loops"))
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

    # -- traces -----------------------------------------------------------------------
    def replay(self, trace: Trace | TraceData | dict | str) -> Schedule:
        """Apply a trace (object or JSON) to this schedule; returns self."""
        if isinstance(trace, (dict, str)):
            trace = Trace.from_json(trace)
        trace.apply_to_schedule(self)
        return self

    def __repr__(self) -> str:
        return f"tir.Schedule({len(self._trace.insts)} steps)\n{self.mod.script()}"
