"""The stages of a ``topi.nn`` softmax (max, exp, sum, output) and its axis.

TVM's softmax schedules read the axis from the output op's ``attrs["axis"]``; ours finds
it in the max stage: the input position its reduction variable indexes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...dsl import expr as E
from ...errors import ScheduleError

#: the output tags of topi.nn.softmax, fast_softmax and log_softmax
SOFTMAX_TAGS = ("softmax_output", "fast_softmax_output", "log_softmax_output")


@dataclass(frozen=True)
class SoftmaxParts:
    """The tensors of one softmax: ``exp`` None for log_softmax, ``delta`` for fast_softmax."""

    output: Any
    max_elem: Any
    expsum: Any
    exp: Any
    delta: Any
    axis: int


def softmax_parts(op: Any, what: str) -> SoftmaxParts:
    """Split the softmax whose output op is ``op`` into its stages (TVM's tag dispatch)."""
    ins = op.input_tensors
    exp = delta = None
    if op.tag == "softmax_output":
        exp, expsum = ins[0], ins[1]
        max_elem = exp.op.input_tensors[1]
    elif op.tag == "fast_softmax_output":
        exp, expsum = ins[0], ins[1]
        delta = exp.op.input_tensors[0]
        max_elem = delta.op.input_tensors[1]
    elif op.tag == "log_softmax_output":
        max_elem, expsum = ins[1], ins[2]
    else:
        raise ScheduleError(
            f"{what}: expected the output of topi.nn.softmax, fast_softmax or log_softmax "
            f"(tag one of {', '.join(SOFTMAX_TAGS)}), got {op.name!r} with tag {op.tag!r}"
        )
    return SoftmaxParts(op.output(0), max_elem, expsum, exp, delta, _axis(max_elem))


def _axis(max_elem: Any) -> int:
    body = max_elem.op.body[0]
    source = body.source if isinstance(body, E.Reduce) else None
    if isinstance(source, E.TensorLoad) and len(body.axis) == 1:
        red = body.axis[0].var
        for k, index in enumerate(source.indices):
            if isinstance(index, E.Var) and index.name == red.name:
                return k
    raise ScheduleError(
        f"softmax stage {max_elem.name!r} is not a one-axis max of the input; "
        "schedule it with te.create_schedule"
    )
