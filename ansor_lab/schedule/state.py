"""The schedule state: stages, their loops, the relations between loops, attachments.

A ``State`` is what primitives transform and what lowering reads. It is plain data,
cheap to copy: a primitive works on a copy and the schedule adopts the copy only when the
step succeeded, which is what makes every primitive atomic.

Loops ("iters") are named within their stage; a loop handle is (stage name, iter name),
so a trace replays on a fresh state of the same workload.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from operator import attrgetter

from ..dsl import expr as E
from ..dsl.dag import topo_order
from ..dsl.scan import ScanOp, rebuilt_scan, scan_cell_ops, with_companions
from ..dsl.tensor import ComputeOp, Operation, PlaceholderOp, Tensor
from ..errors import ScheduleError
from .attachment import INLINE, ROOT, After, At, Attachment, Inline, Nested, Root
from .loop_kinds import REDUCE, SPATIAL, Annotation, IterKind, LoopKind, ThreadBinding


@dataclass(frozen=True)
class Iter:
    """One loop of a stage: its name, extent (in the full, unattached domain) and kind."""

    name: str
    extent: int
    kind: IterKind


@dataclass(frozen=True)
class Split:
    """``parent`` becomes ``children`` (outer to inner); ``factors`` are the inner extents.

    The outermost child's extent is ``ceil(parent / prod(factors))``, or ``outer`` where
    the split was given a larger one (TVM keeps ``split(l, factors=[8, 16])`` of a loop
    of 100 as 8 x 16); it never covers less than the parent (its root extent may change
    later, as a stage computed at a loop gets the region it needs). When the children
    cover more than the parent, lowering guards the body with ``parent < extent``.
    """

    parent: str
    children: tuple[str, ...]
    factors: tuple[int, ...]
    outer: int | None = None

    def outer_extent(self, parent_extent: int) -> int:
        """The outermost child's extent for a parent of ``parent_extent``."""
        inner = 1
        for f in self.factors:
            inner *= f
        needed = -(-parent_extent // inner)
        return needed if self.outer is None else max(self.outer, needed)


@dataclass(frozen=True)
class Fuse:
    """``children`` (outer to inner, adjacent loops) become one loop ``fused``."""

    children: tuple[str, ...]
    fused: str


@dataclass
class Stage:
    """The schedule of one compute op.

    ``block`` is the name schedule steps use (``sch.get_block``); the op's name is the
    name of the tensor (buffer) it writes. They are equal except after ``cache_write``
    in block style, where, as in TVM, block "C" keeps computing but writes "C_local".
    """

    block: str
    op: Operation
    root: tuple[Iter, ...]  # root iters: the op's axes, then its reduction axes
    iters: dict[str, Iter]  # every iter by name, root and derived
    leaves: list[str]  # the current loop order, outer to inner
    relations: list[Split | Fuse] = field(default_factory=list)
    annotations: dict[str, Annotation] = field(default_factory=dict)  # leaf -> how it runs
    # leaf -> {key: value}; the key "" holds the block's own annotations
    pragmas: dict[str, dict[str, object]] = field(default_factory=dict)
    attach: Attachment = ROOT
    scope: str = "global"
    storage_align: dict[int, tuple[int, int]] = field(default_factory=dict)  # axis -> (f, off)
    init_at: str | None = None  # decompose_reduction: the loop the init goes before
    # decompose_reduction: leaf -> how the init's copy of that loop runs, where it was
    # annotated on its own (``get_loops`` of the init block, as TVM's "C_init")
    init_annotations: dict[str, Annotation] = field(default_factory=dict)
    # transform_layout: storage dim k holds spatial axis layout[k] (None: axis order)
    layout: tuple[int, ...] | None = None

    @property
    def name(self) -> str:
        """The block name."""
        return self.block

    @property
    def is_compute(self) -> bool:
        """True for compute ops (placeholders have nothing to schedule)."""
        return isinstance(self.op, ComputeOp)

    def iter(self, name: str) -> Iter:
        """The iter called ``name``."""
        try:
            return self.iters[name]
        except KeyError:
            raise ScheduleError(f"stage {self.name!r} has no loop {name!r}") from None

    def fresh_name(self, base: str) -> str:
        """An iter name not used in this stage yet."""
        if base not in self.iters:
            return base
        k = 1
        while f"{base}_{k}" in self.iters:
            k += 1
        return f"{base}_{k}"

    @property
    def is_inlined(self) -> bool:
        """True after ``compute_inline``: the stage has no loops of its own."""
        return isinstance(self.attach, Inline)

    @property
    def is_root(self) -> bool:
        """True when the stage is computed at the top level of the function."""
        return isinstance(self.attach, Root)

    @property
    def nested(self) -> Nested | None:
        """Where the stage runs inside another block's loop (``At`` / ``After``), or None."""
        return self.attach if isinstance(self.attach, Nested) else None

    def copy(self) -> Stage:
        """A copy whose lists and dicts can be changed independently.

        Every field is carried over (read by ``_STAGE_FIELDS``, made from the dataclass's
        fields, so a new field needs no change here), then the mutable containers are
        replaced by copies. This is ``dataclasses.replace`` at the speed of a positional
        constructor: a state is copied at every schedule step, and ``replace`` made trace
        replay 25% slower.
        """
        new = Stage(*_STAGE_FIELDS(self))
        new.iters = dict(self.iters)
        new.leaves = list(self.leaves)
        new.relations = list(self.relations)
        new.annotations = dict(self.annotations)
        new.pragmas = {k: dict(v) for k, v in self.pragmas.items()}
        new.storage_align = dict(self.storage_align)
        new.init_annotations = dict(self.init_annotations)
        return new

    def uses(self, iter_name: str) -> bool:
        """True if ``iter_name`` is a current loop of this stage."""
        return iter_name in self.leaves


#: all fields of a Stage, in constructor order (``Stage.copy`` carries each one over)
_STAGE_FIELDS = attrgetter(*(f.name for f in fields(Stage)))


def make_stage(op: Operation, block: str | None = None) -> Stage:
    """The unscheduled stage of ``op``: one loop per axis, reductions innermost."""
    block = block or op.name
    if not isinstance(op, ComputeOp):
        return Stage(block, op, (), {}, [])
    root = tuple(Iter(iv.var.name, int(iv.dom.extent), SPATIAL) for iv in op.axis) + tuple(
        Iter(iv.var.name, int(iv.dom.extent), REDUCE) for iv in op.reduce_axis
    )
    names = [it.name for it in root]
    if len(set(names)) != len(names):
        # two axes share a name (e.g. two reduce_axis called "k"): rename for handles
        seen: dict[str, int] = {}
        renamed = []
        for it in root:
            n = seen.get(it.name, 0)
            seen[it.name] = n + 1
            renamed.append(Iter(it.name if n == 0 else f"{it.name}_{n}", it.extent, it.kind))
        root = tuple(renamed)
    return Stage(block, op, root, {it.name: it for it in root}, [it.name for it in root])


def attach_scan_cells(stages: dict[str, Stage]) -> None:
    """Each ``te.scan``'s cell (its updates and the stages between them and the state
    placeholders) starts computed at the scan's time loop, as TVM's scan group does."""
    for st in stages.values():
        if isinstance(st.op, ScanOp) and st.op.is_driver:
            for op in scan_cell_ops(st.op):
                cell = stages.get(op.name)
                if cell is not None and cell.op is op and cell.is_root:
                    cell.attach = At(st.name, st.leaves[0])


@dataclass
class State:
    """Stages in topological order plus the function signature they compute.

    ``args`` are the tensors of the function signature (inputs then outputs, as the user
    listed them); ``outputs`` the tensors the schedule was created for.
    """

    stages: dict[str, Stage]  # block name -> Stage, in topological order
    outputs: list[Tensor]
    args: list[Tensor] | None = None
    # id(user's tensor) -> the tensor the state uses (they differ when names were made
    # unique, see ``unique_names``)
    tensor_map: dict[int, Tensor] = field(default_factory=dict)
    # TE style: a step whose bound inference fails is kept, and lowering checks the final
    # state (TVM's TE schedule infers bounds only then); block style checks every step
    defer_bound_checks: bool = False

    @staticmethod
    def create(outputs: list[Tensor], args: list[Tensor] | None = None) -> State:
        """The default state for the ops producing ``outputs`` (and reading ``args``)."""
        roots = list(outputs) + [t for t in (args or []) if t not in outputs]
        roots = with_companions(roots, topo_order(roots))
        tensor_map = unique_names(roots)
        outputs = [tensor_map.get(id(t), t) for t in outputs]
        if args is not None:
            args = [tensor_map.get(id(t), t) for t in args]
        roots = [tensor_map.get(id(t), t) for t in roots]
        stages: dict[str, Stage] = {}
        for op in topo_order(roots):
            stages[op.name] = make_stage(op)
        attach_scan_cells(stages)
        return State(stages, list(outputs), list(args) if args is not None else None, tensor_map)

    def tensor(self, t: Tensor) -> Tensor:
        """The state's tensor for a tensor of the user's DAG."""
        return self.tensor_map.get(id(t), t)

    def stage(self, name: str) -> Stage:
        """The stage called ``name``."""
        try:
            return self.stages[name]
        except KeyError:
            known = ", ".join(n for n, s in self.stages.items() if s.is_compute)
            raise ScheduleError(
                f"no stage (block) named {name!r}; the stages are {known}"
            ) from None

    @property
    def ops(self) -> list[Operation]:
        """The ops of every stage, in topological order."""
        return [s.op for s in self.stages.values()]

    def compute_stages(self) -> list[Stage]:
        """Stages of compute ops, producers first."""
        return [s for s in self.stages.values() if s.is_compute]

    def placeholders(self) -> list[PlaceholderOp]:
        """Input ops."""
        return [s.op for s in self.stages.values() if isinstance(s.op, PlaceholderOp)]

    def is_output(self, st: Stage) -> bool:
        """True when ``st`` writes an output or argument tensor (it must stay computed)."""
        names = {t.name for t in self.outputs} | {t.name for t in (self.args or [])}
        return st.op.name in names

    def by_op_name(self, op_name: str) -> Stage:
        """The stage writing the tensor called ``op_name``."""
        for s in self.stages.values():
            if s.op.name == op_name:
                return s
        raise ScheduleError(f"no stage writes a tensor named {op_name!r}")

    def consumers(self, name: str) -> list[Stage]:
        """Compute stages whose op reads stage ``name``'s output (tensors match by name)."""
        op_name = self.stage(name).op.name
        return [
            s
            for s in self.stages.values()
            if s.is_compute and any(t.op.name == op_name for t in s.op.input_tensors)
        ]

    def producers(self, name: str) -> list[Stage]:
        """Stages (compute or placeholder) read by stage ``name``."""
        return [self.by_op_name(t.op.name) for t in self.stage(name).op.input_tensors]

    def insert_before(self, block: str, stage: Stage) -> None:
        """Add ``stage`` just before ``block`` in the topological order."""
        items = list(self.stages.items())
        pos = [n for n, _ in items].index(block)
        items.insert(pos, (stage.block, stage))
        self.stages = dict(items)

    def insert_after(self, block: str, stage: Stage) -> None:
        """Add ``stage`` just after ``block`` in the topological order."""
        items = list(self.stages.items())
        pos = [n for n, _ in items].index(block)
        items.insert(pos + 1, (stage.block, stage))
        self.stages = dict(items)

    def fresh_block_name(self, base: str) -> str:
        """A block (and tensor) name not used yet."""
        used = set(self.stages) | {s.op.name for s in self.stages.values()}
        if base not in used:
            return base
        k = 1
        while f"{base}_{k}" in used:
            k += 1
        return f"{base}_{k}"

    # -- attachments ------------------------------------------------------------------
    def is_inlined(self, block: str) -> bool:
        """True when block ``block`` was inlined into its readers."""
        return self.stage(block).is_inlined

    def attached_to(self, block: str, loop: str | None = None) -> list[Stage]:
        """Stages computed inside ``block``'s loop ``loop`` (any of its loops when None),
        before its body (``At``) or after it (``After``), in topological order."""
        return [
            s
            for s in self.stages.values()
            if isinstance(s.attach, Nested)
            and s.attach.block == block
            and (loop is None or s.attach.loop == loop)
        ]

    def attach_chain(self, block: str) -> list[Stage]:
        """``block``'s stage and the stages it is computed inside, innermost first; the
        last one is computed at root (or inlined). A cycle stops after every stage."""
        chain = [self.stage(block)]
        while isinstance(chain[-1].attach, Nested) and len(chain) <= len(self.stages):
            chain.append(self.stage(chain[-1].attach.block))
        return chain

    def enclosing_loops(self, block: str) -> list[tuple[str, str]]:
        """(block, loop) of the loops of other blocks that ``block`` runs inside, outer
        first: those of each enclosing block down to the loop it is attached at."""
        loops: list[tuple[str, str]] = []
        st = self.stage(block)
        while isinstance(st.attach, Nested):
            target = self.stage(st.attach.block)
            pos = target.leaves.index(st.attach.loop)
            loops = [(target.name, lp) for lp in target.leaves[: pos + 1]] + loops
            st = target
        return loops

    def move_attachments(self, block: str, old: str, new: str) -> None:
        """Stages computed at ``block``'s loop ``old`` follow it to loop ``new``."""
        for s in self.attached_to(block, old):
            s.attach = s.attach.moved_to(new)

    def copy(self) -> State:
        """A copy that primitives may change without touching this one (every field carried
        over as in ``Stage.copy``, then fresh containers for the ones primitives change)."""
        new = State(*_STATE_FIELDS(self))
        new.stages = {n: s.copy() for n, s in self.stages.items()}
        new.outputs = list(self.outputs)
        new.args = list(self.args) if self.args is not None else None
        return new

    def __deepcopy__(self, memo):  # ops are shared, never copied
        return self.copy()


#: all fields of a State, in constructor order (``State.copy`` carries each one over)
_STATE_FIELDS = attrgetter(*(f.name for f in fields(State)))

__all__ = [
    "Iter",
    "Split",
    "Fuse",
    "Stage",
    "State",
    "make_stage",
    "Attachment",
    "Root",
    "Inline",
    "Nested",
    "At",
    "After",
    "ROOT",
    "INLINE",
    "IterKind",
    "LoopKind",
    "ThreadBinding",
    "Annotation",
]


def unique_names(roots: list[Tensor]) -> dict:
    """Give every op of the DAG a distinct name, renaming copies of the DAG if needed.

    Schedule steps name blocks, so two ops named alike (TVM's default "compute", or two
    ``topi.add``) get suffixes in topological order: "compute", "compute_1"... The user's
    ops are left untouched; returns id(old tensor) -> new tensor for every op that was
    rebuilt (empty when all names were distinct already).
    """

    order = topo_order(roots)
    counts: dict[str, int] = {}
    for op in order:
        counts[op.name] = counts.get(op.name, 0) + 1
    if all(c == 1 for c in counts.values()):
        return {}
    used: set[str] = set()
    new_op: dict[int, Operation] = {}
    mapping: dict[int, Tensor] = {}
    for op in order:
        name, k = op.name, 0
        while name in used:
            k += 1
            name = f"{op.name}_{k}"
        used.add(name)
        if isinstance(op, PlaceholderOp):
            op2 = PlaceholderOp(name, op.shape, op.dtype, op.tag, dict(op.attrs))
        else:

            def visit(e):
                if isinstance(e, E.TensorLoad) and id(e.tensor.op) in new_op:
                    t = new_op[id(e.tensor.op)].output(0)
                    return E.TensorLoad(t, tuple(visit(i) for i in e.indices), e.dtype)
                return E.map_children(e, visit)

            if isinstance(op, ScanOp):
                op2 = rebuilt_scan(op, name, visit(op.body[0]), _renamed(mapping), new_op)
            else:
                op2 = ComputeOp(
                    name, op.axis, op.reduce_axis, (visit(op.body[0]),), op.tag, dict(op.attrs)
                )
        new_op[id(op)] = op2
        mapping[id(op.output(0))] = op2.output(0)
    return mapping


def _renamed(mapping: dict):
    return lambda t: mapping.get(id(t), t)


def derive_extents(stage: Stage, root_extents: list[int] | None = None) -> dict:
    """Extent of every iter of ``stage`` given its root extents (default: the stored ones)."""
    roots = root_extents if root_extents is not None else [it.extent for it in stage.root]
    extents = {it.name: ext for it, ext in zip(stage.root, roots)}
    for rel in stage.relations:
        if isinstance(rel, Split):
            extents[rel.children[0]] = rel.outer_extent(extents[rel.parent])
            for child, f in zip(rel.children[1:], rel.factors):
                extents[child] = f
        else:
            total = 1
            for child in rel.children:
                total *= extents[child]
            extents[rel.fused] = total
    return extents


def pass_up(stage: Stage, leaf_values: dict, extents: dict) -> tuple[dict, list]:
    """Values of every iter from the values of the leaves, and the split guards.

    Returns ``(values, guards)``: ``values[name]`` is an int32 expression over the leaf
    values; each guard is ``(condition, is_reduce)`` for a split that does not divide its
    loop (``parent < extent`` must hold for the iteration to be real).
    """

    values = dict(leaf_values)
    guards = []
    # child -> (fused iter, position) for the children of a fuse: a split of exactly those
    # children takes the fused value back whole, (x // e) * e + x % e being x, instead of
    # a tree that uses x twice (rounds of ``fuse(split(l, 2))`` would double it each time)
    fused_from: dict = {}
    for rel in reversed(stage.relations):
        if isinstance(rel, Split):
            if _undoes_fuse(rel, fused_from):
                acc = values[fused_from[rel.children[0]][0]]
            else:
                # outer to inner, nested to the left (((a * 8 + b * 4) + c), as TVM and
                # as the printed text parses back: a tree nested to the right prints the
                # same and parses as another one
                strides, stride = [], 1
                for child in reversed(rel.children):
                    strides.append(stride)
                    stride *= extents[child]
                acc = None
                for child, stride in zip(rel.children, reversed(strides)):
                    v = values[child]
                    term = v if stride == 1 else E.Mul(v, E.IntImm(stride), "int32")
                    acc = term if acc is None else E.Add(acc, term, "int32")
            values[rel.parent] = acc
            inner = 1
            for child in rel.children:
                inner *= extents[child]
            if inner != extents[rel.parent]:
                cond = E.LT(acc, E.IntImm(extents[rel.parent]))
                guards.append((cond, stage.iters[rel.parent].kind == REDUCE))
        else:
            fused = values[rel.fused]
            stride = 1
            for k, child in reversed(list(enumerate(rel.children))):
                v = fused if stride == 1 else E.FloorDiv(fused, E.IntImm(stride), "int32")
                if k > 0:
                    v = E.FloorMod(v, E.IntImm(extents[child]), "int32")
                values[child] = v
                fused_from[child] = (rel.fused, k, len(rel.children))
                stride *= extents[child]
    return values, guards


def index_tree_size(stage: Stage) -> int:
    """The largest root-iter index ``pass_up`` builds for ``stage``, in expression nodes
    counted as a tree (a value used twice counts twice: what lowering walks)."""
    sizes: dict = {}
    fused_from: dict = {}
    for rel in reversed(stage.relations):
        if isinstance(rel, Split):
            if _undoes_fuse(rel, fused_from):
                sizes[rel.parent] = sizes.get(fused_from[rel.children[0]][0], 1)
            else:
                n = len(rel.children)
                sizes[rel.parent] = sum(sizes.get(c, 1) for c in rel.children) + 3 * n
        else:
            for k, child in enumerate(rel.children):
                sizes[child] = sizes.get(rel.fused, 1) + 4
                fused_from[child] = (rel.fused, k, len(rel.children))
    return max((sizes.get(it.name, 1) for it in stage.root), default=1)


def _undoes_fuse(rel: Split, fused_from: dict) -> bool:
    """True when a split's children are, in order, all the children of one fuse (walking
    from the leaves up): the split's parent then has the fused loop's value."""
    first = fused_from.get(rel.children[0])
    if first is None or first[2] != len(rel.children):
        return False
    return all(fused_from.get(c) == (first[0], k, first[2]) for k, c in enumerate(rel.children))
