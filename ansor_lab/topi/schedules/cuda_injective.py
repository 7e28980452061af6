"""``topi.cuda``'s injective recipe, shared by its other schedules (TVM's cuda/injective.py)."""

from __future__ import annotations

from typing import Any

from ...dsl.tensor import thread_axis
from ...errors import ScheduleError
from .common import (
    as_list,
    auto_inline_injective,
    const_size,
    create_schedule,
    fuse_all,
    max_threads,
)

#: at most this many blocks before each thread loops over several elements (TVM's)
_MAX_BLOCK = 256


def schedule_injective_from_existing(sch: Any, out: Any) -> Any:
    """Fuse ``out``'s loops and spread them over blockIdx.x / threadIdx.x (TVM's recipe:
    the target's threads per block, each thread looping when more than 256 blocks would
    be needed); returns ``sch``."""
    stage = sch[out]
    num_thread = max_threads("topi.cuda.schedule_injective")
    size = const_size(out.shape)
    if size is None:
        num_thread //= 2  # fewer threads for a dynamic shape, as TVM
    fused = fuse_all(stage, stage.op.axis)
    if fused is None:
        raise ScheduleError(
            f"topi.cuda.schedule_injective: stage {out.name!r} is 0-d (a scalar): it has no "
            "loop to bind to GPU threads (TVM binds a unit loop it makes up). Give it shape "
            "(1,) (topi.reshape(x, (1,))), or compute it on the CPU ('llvm')"
        )
    if size is not None and size > _MAX_BLOCK * num_thread:
        xo, xi = stage.split(fused, factor=num_thread * _MAX_BLOCK)
        bx, tx = stage.split(xi, factor=num_thread)
        stage.reorder(bx, tx, xo)
    else:
        factor = size if size is not None and 0 < size < num_thread else num_thread
        bx, tx = stage.split(fused, factor=factor)
    stage.bind(bx, thread_axis("blockIdx.x"))
    stage.bind(tx, thread_axis("threadIdx.x"))
    return sch


def schedule_injective(outs: Any) -> Any:
    """CUDA schedule of injective ops: producers inlined, each output over blocks/threads."""
    outs = as_list(outs, "topi.cuda.schedule_injective")
    s = create_schedule(outs)
    auto_inline_injective(s)
    for out in outs:
        if const_size(out.shape) != 0:
            schedule_injective_from_existing(s, out)
    return s
