"""The TE-style schedule: ``s = te.create_schedule(C.op)``, ``s[C].split(...)``.

It drives the same State as the block-style ``tir.Schedule``; steps are recorded in the
same trace.
"""

from __future__ import annotations

from ..dsl.tensor import Operation, Tensor
from ..errors import ScheduleError
from .state import State


def _tensors(ops: object) -> list[Tensor]:
    items = ops if isinstance(ops, (list, tuple)) else [ops]
    out = []
    for x in items:
        if isinstance(x, Tensor):
            out.append(x)
        elif isinstance(x, Operation):
            out.append(x.output(0))
        else:
            raise ScheduleError(
                f"create_schedule takes operations (C.op) or a list of them, got {x!r}"
            )
    return out


class Schedule:
    """A TE schedule over the ops producing some outputs."""

    def __init__(self, outputs: object) -> None:
        self.outputs = _tensors(outputs)
        self.state = State.create(self.outputs)

    def __getitem__(self, key: object) -> StageHandle:
        name = key.name if isinstance(key, (Tensor, Operation)) else key
        stage = self.state.stage(str(name))
        if not stage.is_compute:
            raise ScheduleError(f"{name!r} is a placeholder; only compute stages are scheduled")
        return StageHandle(self, stage.name)

    @property
    def stages(self) -> list[StageHandle]:
        """Handles of every compute stage, producers first."""
        return [StageHandle(self, s.name) for s in self.state.compute_stages()]


class StageHandle:
    """``s[C]``: the stage of one op inside a TE schedule."""

    def __init__(self, schedule: Schedule, name: str) -> None:
        self.schedule = schedule
        self.name = name

    @property
    def op(self) -> Operation:
        """The stage's operation."""
        return self.schedule.state.stage(self.name).op

    def __repr__(self) -> str:
        return f"stage({self.name})"


def create_schedule(ops: object) -> Schedule:
    """A default schedule for ``ops`` (an op or a list of ops, as in TVM)."""
    return Schedule(ops)
