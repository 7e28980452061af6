"""ComputeDAG: the ops of a tensor program in topological order, with analyses."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from ..errors import DSLError, TaskError
from . import dtypes, expr as E
from .intrin import FLOAT_UNARY, ROUNDING
from .scan import refuse_scan
from .serialize import dag_to_json, structure_hash
from .symbolic import SymbolicComputeOp, SymbolicPlaceholderOp, dim_vars
from .tensor import ComputeOp, Operation, PlaceholderOp, Tensor
from .tuple_reduce import group_adjacent

#: Intrinsics Ansor treats as expensive: an op using them is not inlined blindly.
EXPENSIVE_CALLS = frozenset(FLOAT_UNARY) - set(ROUNDING) | {"pow", "atan2", "fmod", "hypot"}


def _as_tensors(items: object) -> list[Tensor]:
    if isinstance(items, (Tensor, Operation)):
        items = [items]
    out = []
    for t in items:  # type: ignore[union-attr]
        if isinstance(t, Operation):
            t = t.output(0)
        if not isinstance(t, Tensor):
            raise DSLError(f"expected tensors or operations, got {type(t).__name__} {t!r}")
        out.append(t)
    return out


def topo_order(tensors: Iterable[Tensor]) -> list[Operation]:
    """Every op reachable from ``tensors``, producers before consumers (deterministic)."""
    order: list[Operation] = []
    seen: set[int] = set()
    for root in tensors:
        stack: list[tuple[Operation, bool]] = [(root.op, False)]
        while stack:
            op, expanded = stack.pop()
            if expanded:
                if id(op) not in seen:
                    seen.add(id(op))
                    order.append(op)
                continue
            if id(op) in seen:
                continue
            stack.append((op, True))
            for t in reversed(op.input_tensors):
                if id(t.op) not in seen:
                    stack.append((t.op, False))
    return group_adjacent(order)  # a tuple reduction's outputs, together (tuple_reduce)


def count_flops(op: Operation) -> float:
    """Floating-point operations of one op, counted the way Ansor does.

    Each arithmetic, min/max and comparison node counts 1, index arithmetic inside loads
    counts 0, a reduction multiplies its body (plus one for the combiner) by its trip
    count. Unlike Ansor, an intrinsic call (exp, tanh...) counts 1, so that an
    elementwise exp has a throughput to report.
    """
    if not isinstance(op, ComputeOp):
        return 0.0
    out_kind = "float" if dtypes.is_float(op.dtype) else "int"

    def ops(e: E.PrimExpr) -> float:
        if isinstance(e, (E.Var, E.IntImm, E.FloatImm, E.TensorLoad)):
            return 0.0
        if isinstance(e, E.Reduce):
            trips = 1
            for a in e.axis:
                trips *= int(a.dom.extent)
            cond = ops(e.condition) if e.condition is not None else 0.0
            return trips * (1.0 + ops(e.source) + cond)
        own = 0.0
        if isinstance(e, (E.BinaryOp, E.CmpOp)):
            kind = "float" if dtypes.is_float(e.a.dtype) else "int"
            own = 1.0 if kind == out_kind else 0.0
        elif isinstance(e, E.Call) and e.op != "if_then_else":
            own = 1.0
        return own + sum(ops(c) for c in E.children(e))

    points = 1
    for extent in op.shape:
        points *= extent
    return float(points) * ops(op.body[0])


@dataclass
class AccessAnalysis:
    """Who reads whom and how, per op (Ansor's AccessAnalyzer).

    ``read_from[op][producer]`` and ``read_by[producer][op]`` list index tuples of the
    accesses; the boolean maps are what sketch rules consult.
    """

    read_from: dict = field(default_factory=dict)
    read_by: dict = field(default_factory=dict)
    is_simple_access: dict = field(default_factory=dict)
    is_injective: dict = field(default_factory=dict)
    is_strictly_inlineable: dict = field(default_factory=dict)
    needs_multi_level_tiling: dict = field(default_factory=dict)
    is_output: dict = field(default_factory=dict)
    has_expensive_op: dict = field(default_factory=dict)


def _analyze(ops: Sequence[Operation], outputs: Sequence[Operation]) -> AccessAnalysis:
    a = AccessAnalysis()
    for op in ops:
        a.read_from[op] = {}
        a.read_by.setdefault(op, {})
    for op in ops:
        a.is_output[op] = any(op is o for o in outputs)
        if not isinstance(op, ComputeOp):
            for key in (
                "is_simple_access",
                "is_injective",
                "is_strictly_inlineable",
                "needs_multi_level_tiling",
                "has_expensive_op",
            ):
                getattr(a, key)[op] = key == "is_simple_access"
            continue
        body = op.body[0]
        axis_vars = [iv.var for iv in op.axis]
        simple = True
        expensive = False
        for node in E.post_order(body):
            if isinstance(node, E.TensorLoad):
                producer = node.tensor.op
                a.read_from[op].setdefault(producer, []).append(node.indices)
                a.read_by.setdefault(producer, {}).setdefault(op, []).append(node.indices)
                # simple: the indices are exactly the op's own axes, in order
                if len(node.indices) != len(axis_vars) or any(
                    not (isinstance(i, E.Var) and i is v) for i, v in zip(node.indices, axis_vars)
                ):
                    simple = False
            elif isinstance(node, E.Call) and node.op in EXPENSIVE_CALLS:
                expensive = True
        injective = not op.reduce_axis
        a.is_simple_access[op] = simple
        a.is_injective[op] = injective
        a.has_expensive_op[op] = expensive
        a.is_strictly_inlineable[op] = injective and not expensive
        missing = 0
        for accesses in a.read_from[op].values():
            for index in accesses:
                used = set()
                for i in index:
                    used |= E.free_vars(i)
                missing += sum(1 for v in axis_vars if v not in used)
        a.needs_multi_level_tiling[op] = bool(op.reduce_axis) and missing >= 2
    return a


def _refuse_symbolic(ops: list) -> None:
    """The auto-scheduler measures concrete programs: a symbolic DAG is refused, by name."""
    sym = [op for op in ops if isinstance(op, (SymbolicPlaceholderOp, SymbolicComputeOp))]
    if sym:
        names = ", ".join(v.name for v in dim_vars([d for op in sym for d in op.shape]))
        raise TaskError(
            f"the auto-scheduler needs static shapes: {sym[0].name!r} has shape "
            f"{tuple(sym[0].shape)} (shape variables: {names or 'in a reduce axis'}); define "
            "the workload with numbers (e.g. n = 1024), or schedule the symbolic DAG by hand "
            "with te.create_schedule"
        )


class ComputeDAG:
    """The ops producing some tensors, in topological order, with FLOPs and accesses.

    ``ComputeDAG([A, B, C])`` (or from the outputs alone) is what a SearchTask wraps.
    """

    def __init__(self, tensors: object) -> None:
        self.tensors: list[Tensor] = _as_tensors(tensors)
        self.ops: list[Operation] = topo_order(self.tensors)
        _refuse_symbolic(self.ops)
        refuse_scan(self.ops, "auto_scheduler.ComputeDAG")
        outputs = [t.op for t in self.tensors if isinstance(t.op, ComputeOp)]
        # the outputs are the computes nobody else in the DAG reads
        readers = {id(t.op) for op in self.ops for t in op.input_tensors}
        self.output_ops: list[Operation] = [
            op for op in self.ops if isinstance(op, ComputeOp) and id(op) not in readers
        ] or outputs
        self.access = _analyze(self.ops, self.output_ops)
        self.flop_ct: float = sum(count_flops(op) for op in self.ops)

    @property
    def placeholders(self) -> list[PlaceholderOp]:
        """The input ops, in topological order."""
        return [op for op in self.ops if isinstance(op, PlaceholderOp)]

    @property
    def compute_ops(self) -> list[ComputeOp]:
        """The compute ops, producers first."""
        return [op for op in self.ops if isinstance(op, ComputeOp)]

    def op(self, name: str) -> Operation:
        """The op named ``name``."""
        for op in self.ops:
            if op.name == name:
                return op
        raise DSLError(f"no op named {name!r}; ops: {', '.join(o.name for o in self.ops)}")

    def to_json(self) -> dict:
        """The DAG's structure as JSON data (see ``serialize``)."""
        return dag_to_json(self.tensors)

    def workload_key(self) -> str:
        """A stable hash of the structure, shapes, dtypes and names."""
        return structure_hash(self.tensors)

    def __str__(self) -> str:
        lines = []
        for op in self.ops:
            if isinstance(op, PlaceholderOp):
                lines.append(f"{op.name} = PLACEHOLDER {list(op.shape)} {op.dtype}")
                continue
            idx = ", ".join(iv.var.name for iv in op.axis)
            body = op.body[0]
            if isinstance(body, E.Reduce):
                red = ", ".join(f"{a.var.name}:{int(a.dom.extent)}" for a in body.axis)
                where = f" where {body.condition}" if body.condition is not None else ""
                rhs = f"{body.combiner}({body.source}) over [{red}]{where}"
            else:
                rhs = str(body)
            lines.append(f"{op.name}[{idx}] = {rhs}")
        return "\n".join(lines)

    __repr__ = __str__

    def _repr_pretty_(self, p, cycle) -> None:  # IPython plain-text display
        p.text(str(self))
