"""``topi.generic``: TVM's fallback CPU schedules (``python/tvm/topi/generic/``).

Each takes the output Tensor (or a list of them) and returns a TE schedule for a CPU
target; as in TVM, a schedule that checks the target refuses one that is not ``llvm`` /
``c`` (here with ``TargetError``, naming the ``topi.cuda`` / ``topi.x86`` schedule to use),
and needs a target to be set (``with tvm.target.Target("llvm"):``).

- ``schedule_injective`` (and its aliases ``schedule_elemwise``, ``schedule_broadcast``):
  the injective producers inlined (``AutoInlineInjective``), the first output's loops fused.
- ``schedule_reduce``: the same (TVM's ``default_schedule(outs, auto_inline=True)``).
- the operator schedules (``schedule_softmax``, ``schedule_conv2d_nchw``, ``schedule_dense``,
  ``schedule_pool``...): the default schedule, nothing inlined (TVM's
  ``default_schedule(outs, False)``): every stage a plain loop nest, always correct.
- ``schedule_extern``: the default schedule of an extern op.
"""

from __future__ import annotations

from typing import Any

from ..per_target import missing_per_target
from .common import (
    as_list,
    auto_inline_injective,
    create_schedule,
    fuse_all,
    require_cpu_target,
)

__all__ = [
    "default_schedule",
    "schedule_adaptive_pool",
    "schedule_batch_matmul",
    "schedule_broadcast",
    "schedule_conv2d_nchw",
    "schedule_conv2d_nhwc",
    "schedule_dense",
    "schedule_depthwise_conv2d_nchw",
    "schedule_elemwise",
    "schedule_extern",
    "schedule_injective",
    "schedule_injective_from_existing",
    "schedule_pool",
    "schedule_reduce",
    "schedule_softmax",
]


def schedule_injective_from_existing(sch: Any, out: Any) -> Any:
    """Fuse all the loops of ``out``'s stage in ``sch`` (returns ``sch``)."""
    fuse_all(sch[out], sch[out].op.axis)
    return sch


def default_schedule(outs: Any, auto_inline: bool, name: str = "default_schedule") -> Any:
    """TVM's generic ``default_schedule``: a CPU target only; with ``auto_inline``, the
    injective producers inlined and the first output's loops fused."""
    require_cpu_target(f"topi.generic.{name}")
    outs = as_list(outs, f"topi.generic.{name}")
    s = create_schedule(outs)
    if auto_inline:
        auto_inline_injective(s)
        schedule_injective_from_existing(s, outs[0])
    return s


def schedule_injective(outs: Any) -> Any:
    """Schedule injective ops for a CPU: producers inlined, the output's loops fused."""
    return default_schedule(outs, True, "schedule_injective")


schedule_elemwise = schedule_injective
schedule_broadcast = schedule_injective


def schedule_reduce(outs: Any) -> Any:
    """Schedule a reduction for a CPU: injective producers inlined, output loops fused."""
    return default_schedule(outs, True, "schedule_reduce")


def schedule_softmax(outs: Any) -> Any:
    """The default CPU schedule of softmax (each stage its own loop nest)."""
    return default_schedule(outs, False, "schedule_softmax")


def schedule_conv2d_nchw(outs: Any) -> Any:
    """The default CPU schedule of an NCHW convolution."""
    return default_schedule(outs, False, "schedule_conv2d_nchw")


def schedule_conv2d_nhwc(outs: Any) -> Any:
    """The default CPU schedule of an NHWC convolution."""
    return default_schedule(outs, False, "schedule_conv2d_nhwc")


def schedule_depthwise_conv2d_nchw(outs: Any) -> Any:
    """The default CPU schedule of a depthwise NCHW convolution."""
    return default_schedule(outs, False, "schedule_depthwise_conv2d_nchw")


def schedule_dense(outs: Any) -> Any:
    """The default CPU schedule of dense."""
    return default_schedule(outs, False, "schedule_dense")


def schedule_batch_matmul(outs: Any) -> Any:
    """The default CPU schedule of batch_matmul."""
    return default_schedule(outs, False, "schedule_batch_matmul")


def schedule_pool(outs: Any, layout: str = "NCHW") -> Any:
    """The default CPU schedule of a pool (``layout`` accepted, as TVM's)."""
    return default_schedule(outs, False, "schedule_pool")


def schedule_adaptive_pool(outs: Any) -> Any:
    """The default CPU schedule of an adaptive pool."""
    return default_schedule(outs, False, "schedule_adaptive_pool")


def schedule_extern(outs: Any) -> Any:
    """The default CPU schedule of an extern op (TVM's ``generic.schedule_extern``)."""
    return default_schedule(outs, False, "schedule_extern")


def __getattr__(name: str) -> Any:
    # topi.generic.schedule_lrn...: not provided, say what to write instead
    raise missing_per_target("generic", name, __all__)
