"""The schedule-dispatch helpers of TVM's topi tests (``topi.testing.get_injective_schedule``).

``dispatch(target, dispatch_map)`` picks the entry of the first of the target's keys the
map has (``("cpu",)`` for llvm, ``("cuda", "gpu")`` for CUDA), else ``"generic"``, as
TVM's ``python/tvm/topi/testing/common.py``.
"""

from __future__ import annotations

from typing import Any

from .. import nn
from . import cuda, generic, x86

_INJECTIVE = {
    "generic": generic.schedule_injective,
    "cpu": x86.schedule_injective,
    "gpu": cuda.schedule_injective,
}
_REDUCE = {
    "generic": generic.schedule_reduce,
    "cpu": x86.schedule_reduce,
    "gpu": cuda.schedule_reduce,
}
_CONV2D_NCHW = {
    "generic": (nn.conv2d_nchw, generic.schedule_conv2d_nchw),
    "cpu": (x86.conv2d_nchw, x86.schedule_conv2d_nchw),
    "gpu": (cuda.conv2d_nchw, cuda.schedule_conv2d_nchw),
}


def dispatch(target: Any, dispatch_map: dict) -> Any:
    """The entry of ``dispatch_map`` for ``target`` (a Target or its string)."""
    from ...codegen.target import Target  # noqa: PLC0415 - topi sits on the DSL alone

    tgt = target if isinstance(target, Target) else Target(target)
    for key in tgt.keys:
        if key in dispatch_map:
            return dispatch_map[key]
    return dispatch_map["generic"]


def get_injective_schedule(target: Any) -> Any:
    """The injective schedule for ``target`` (x86 for llvm, cuda for CUDA)."""
    return dispatch(target, _INJECTIVE)


def get_reduce_schedule(target: Any) -> Any:
    """The reduction schedule for ``target``."""
    return dispatch(target, _REDUCE)


get_broadcast_schedule = get_injective_schedule
get_elemwise_schedule = get_injective_schedule


def get_conv2d_nchw_implement(target: Any) -> tuple:
    """``(compute, schedule)`` of conv2d NCHW for ``target``."""
    return dispatch(target, _CONV2D_NCHW)
