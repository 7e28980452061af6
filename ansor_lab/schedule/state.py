"""The schedule state: stages, their loops, the relations between loops, attachments.

A ``State`` is what primitives transform and what lowering reads. It is plain data,
cheap to copy: a primitive works on a copy and the schedule adopts the copy only when the
step succeeded, which is what makes every primitive atomic.

Loops ("iters") are named within their stage; a loop handle is (stage name, iter name),
so a trace replays on a fresh state of the same workload.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..dsl.dag import ComputeDAG, topo_order
from ..dsl.tensor import ComputeOp, Operation, PlaceholderOp, Tensor
from ..errors import ScheduleError


@dataclass(frozen=True)
class Iter:
    """One loop of a stage: its name, extent (in the full, unattached domain) and kind."""

    name: str
    extent: int
    kind: str  # "spatial" or "reduce"


@dataclass(frozen=True)
class Split:
    """``parent`` becomes ``children`` (outer to inner); ``factors`` are the inner extents.

    The outermost child's extent is ``ceil(parent / prod(factors))``; when that does not
    divide evenly, lowering guards the body with ``parent < extent``.
    """

    parent: str
    children: tuple
    factors: tuple


@dataclass(frozen=True)
class Fuse:
    """``children`` (outer to inner, adjacent loops) become one loop ``fused``."""

    children: tuple
    fused: str


@dataclass
class Stage:
    """The schedule of one compute op."""

    op: Operation
    root: tuple  # root iters: the op's axes, then its reduction axes
    iters: dict  # every iter by name, root and derived
    leaves: list  # the current loop order, outer to inner
    relations: list = field(default_factory=list)
    # leaf -> "parallel" | "vectorize" | "unroll" | a thread tag
    annotations: dict = field(default_factory=dict)
    pragmas: dict = field(default_factory=dict)  # leaf -> {key: value}
    attach: tuple = ("root",)  # ("root",) | ("inline",) | ("at", stage name, iter name)
    scope: str = "global"
    storage_align: dict = field(default_factory=dict)  # axis -> (factor, offset)

    @property
    def name(self) -> str:
        """The stage's (op's) name."""
        return self.op.name

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

    def copy(self) -> Stage:
        """A copy whose lists and dicts can be changed independently."""
        return Stage(
            self.op, self.root, dict(self.iters), list(self.leaves), list(self.relations),
            dict(self.annotations), {k: dict(v) for k, v in self.pragmas.items()},
            self.attach, self.scope, dict(self.storage_align),
        )


def make_stage(op: Operation) -> Stage:
    """The unscheduled stage of ``op``: one loop per axis, reductions innermost."""
    if not isinstance(op, ComputeOp):
        return Stage(op, (), {}, [])
    root = tuple(Iter(iv.var.name, int(iv.dom.extent), "spatial") for iv in op.axis) + tuple(
        Iter(iv.var.name, int(iv.dom.extent), "reduce") for iv in op.reduce_axis
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
    return Stage(op, root, {it.name: it for it in root}, [it.name for it in root])


@dataclass
class State:
    """Stages in topological order plus the function signature they compute.

    ``args`` are the tensors of the function signature (inputs then outputs, as the user
    listed them); ``outputs`` the tensors the schedule was created for.
    """

    stages: dict  # name -> Stage, in topological order
    outputs: list
    args: list | None = None

    @staticmethod
    def create(outputs: list[Tensor], args: list[Tensor] | None = None) -> State:
        """The default state for the ops producing ``outputs`` (and reading ``args``)."""
        roots = list(outputs) + [t for t in (args or []) if t not in outputs]
        stages: dict[str, Stage] = {}
        for op in topo_order(roots):
            if op.name in stages:
                raise ScheduleError(
                    f"two operations are both named {op.name!r}; give each te.compute / "
                    "te.placeholder a unique name= so schedule steps can refer to it"
                )
            stages[op.name] = make_stage(op)
        return State(stages, list(outputs), list(args) if args is not None else None)

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

    def consumers(self, name: str) -> list[Stage]:
        """Stages whose op reads stage ``name``'s output."""
        op = self.stage(name).op
        return [
            s for s in self.stages.values()
            if s.is_compute and any(t.op is op for t in s.op.input_tensors)
        ]

    def producers(self, name: str) -> list[Stage]:
        """Compute stages read by stage ``name``."""
        op = self.stage(name).op
        return [self.stages[t.op.name] for t in op.input_tensors if t.op.name in self.stages]

    def copy(self) -> State:
        """A copy that primitives may change without touching this one."""
        return State(
            {n: s.copy() for n, s in self.stages.items()}, list(self.outputs),
            list(self.args) if self.args is not None else None,
        )

    def dag(self) -> ComputeDAG:
        """The current DAG (it changes when cache stages or rfactor add ops)."""
        return ComputeDAG(self.outputs)

    def __deepcopy__(self, memo):  # ops are shared, never copied
        return self.copy()


__all__ = ["Iter", "Split", "Fuse", "Stage", "State", "make_stage"]
