"""What the per-target schedules share: the schedule and target they work on, graph walks.

``topi`` sits on the DSL alone (DESIGN.md: ``topi`` imports ``dsl``); a schedule recipe
also needs the TE schedule (``ansor_lab.schedule``) and the current target
(``ansor_lab.codegen.target``). Both are imported here, inside the functions that use
them, when a recipe runs: importing ``topi`` still loads only the DSL, and neither of
those layers ever imports ``topi``, so no cycle can form.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...dsl.expr import IntImm
from ...dsl.tensor import ComputeOp, Operation, PlaceholderOp, Tensor
from ...errors import DSLError, ScheduleError, TargetError
from .. import tag as _tag


def as_list(outs: Any, what: str) -> list[Tensor]:
    """TVM's ``outs``: one Tensor or a list of Tensors, as a list."""
    items = [outs] if isinstance(outs, Tensor) else list(outs) if outs is not None else []
    if not items or not all(isinstance(t, Tensor) for t in items):
        raise DSLError(
            f"{what} takes the output Tensor or a list of output Tensors (the result of a "
            f"topi operator), got {type(outs).__name__}"
        )
    return items


def create_schedule(outs: list[Tensor]) -> Any:
    """``te.create_schedule([x.op for x in outs])``."""
    from ...schedule.te_schedule import create_schedule as _create  # noqa: PLC0415 - see top

    return _create([x.op for x in outs])


def current_target(what: str, required: bool = True) -> Any:
    """``tvm.target.Target.current()``; with ``required``, a clear error when none is set."""
    from ...codegen.target import Target  # noqa: PLC0415 - see the module docstring

    tgt = Target.current(allow_none=True)
    if tgt is None and required:
        raise TargetError(
            f"{what} needs a target: call it inside `with tvm.target.Target('cuda'):` "
            "(or 'llvm' for the CPU schedules), as TVM's TOPI schedules are called"
        )
    return tgt


def require_cpu_target(what: str) -> Any:
    """TVM's generic schedules: only for ``llvm`` / ``c`` targets."""
    tgt = current_target(what)
    if str(tgt.kind) not in ("llvm", "c"):
        raise TargetError(
            f"{what} is the generic CPU schedule, not registered for '{tgt}'; under a "
            f"{tgt.kind} target use topi.{'cuda' if tgt.kind == 'cuda' else 'x86'}."
            f"{what.rsplit('.', 1)[-1]} (or call it under `with tvm.target.Target('llvm'):`)"
        )
    return tgt


def max_threads(what: str) -> int:
    """The current (CUDA) target's threads per block (TVM's ``max_num_threads``)."""
    tgt = current_target(what)
    return int(getattr(tgt, "max_threads_per_block", 0) or 1024)


def is_compute(op: Operation) -> bool:
    """A (single-output, non-placeholder) compute op."""
    return isinstance(op, ComputeOp)


def is_placeholder(op: Operation) -> bool:
    """An input of the program."""
    return isinstance(op, PlaceholderOp)


def is_injective_op(op: Operation) -> bool:
    """TVM's ``te.schedule`` notion: a compute op without reduction axes."""
    return is_compute(op) and not op.reduce_axis


def const_size(shape: tuple) -> int | None:
    """The element count of a static shape, None when a dimension is symbolic."""
    n = 1
    for d in shape:
        if isinstance(d, IntImm):
            d = d.value
        if not isinstance(d, int):
            return None
        n *= int(d)
    return n


def auto_inline_injective(s: Any) -> None:
    """TVM's ``te.schedule.AutoInlineInjective``: inline every non-output injective stage."""
    out_ops = {t.op for t in s.outputs}  # the stages' ops (a symbolic DAG's: its probe's)
    for stage in s.stages:
        if stage.op not in out_ops and is_injective_op(stage.op):
            stage.compute_inline()


def fuse_all(stage: Any, axes: list) -> Any:
    """Fuse ``axes`` of ``stage`` into one loop (one axis is returned as is; none: None)."""
    axes = list(axes)
    if not axes:
        return None
    return axes[0] if len(axes) == 1 else stage.fuse(*axes)


def traverse_inline(s: Any, outs: list[Tensor], callback: Callable[[Operation], None]) -> None:
    """TVM's ``topi.utils.traverse_inline``: from ``outs[0]`` down through injective ops,
    inlining those that are not outputs, and call ``callback`` on every op reached."""
    outputs = {t.op for t in outs}
    visited: set[int] = set()

    def visit(op: Operation) -> None:
        if id(op) in visited:
            return
        visited.add(id(op))
        if is_compute(op) and _tag.is_injective(op.tag):
            if op not in outputs and not op.reduce_axis:
                s[op].compute_inline()
            for t in op.input_tensors:
                if is_compute(t.op):
                    visit(t.op)
        callback(op)

    visit(outs[0].op)


def divisor_tile(extent: Any, cap: int) -> int:
    """A tile for a loop of ``extent``: its largest divisor up to ``cap`` (no guard), or
    ``cap`` itself when that divisor is under half of it (a guarded last tile)."""
    if not isinstance(extent, int):
        return cap
    limit = min(extent, cap)
    best = max(d for d in range(1, limit + 1) if extent % d == 0)
    return best if 2 * best >= limit else limit


def unsupported_operator(what: str, op: Operation, handles: str) -> ScheduleError:
    """The error of a recipe meeting an operator it does not handle (``handles`` says what
    it does handle), with the way out."""
    return ScheduleError(
        f"{what}: unsupported operator {op.name!r} (tag {op.tag!r}); the recipe handles "
        f"{handles}. Write the schedule with te.create_schedule (or let the auto-scheduler "
        "find one)"
    )
