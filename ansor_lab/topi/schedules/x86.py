"""``topi.x86``: TVM's x86 CPU schedules (``python/tvm/topi/x86/``), for an ``llvm`` target.

As in TVM: ``schedule_injective`` fuses the outer axes into one parallel loop and splits
the innermost by 16 into a vectorized loop; ``schedule_reduce`` inlines the injective
producers and parallelises the output's outer axes (up to 128-way); ``schedule_softmax``
parallelises the axes before the softmax axis and computes the statistics under them.

Simpler than TVM (each stated on the function): the convolution and dense schedules are
direct ones (parallel outer loops, injective consumers fused in), not TVM's NCHWc /
autotvm-tiled packed kernels, and ``dense_pack`` computes what ``dense_nopack`` does
(``topi.nn.dense``) without packing the weight. They need no target (as in TVM).
"""

from __future__ import annotations

from typing import Any

from .. import nn
from ..per_target import missing_per_target
from ..tag import is_broadcast, is_injective
from ..utils import get_const_int
from .common import (
    as_list,
    auto_inline_injective,
    const_size,
    create_schedule,
    fuse_all,
    is_compute,
    is_placeholder,
    traverse_inline,
    unsupported_operator,
)
from .softmax_parts import softmax_parts

__all__ = [
    "conv2d_nchw",
    "dense_nopack",
    "dense_pack",
    "schedule_broadcast",
    "schedule_conv2d_nchw",
    "schedule_dense_nopack",
    "schedule_dense_pack",
    "schedule_elemwise",
    "schedule_injective",
    "schedule_injective_from_existing",
    "schedule_reduce",
    "schedule_softmax",
]


def schedule_injective_from_existing(sch: Any, out: Any) -> Any:
    """Parallelise ``out``'s outer axes (fused, 1 to 3 of them) and vectorize its
    innermost axis split by 16 (TVM's x86 recipe); returns ``sch``."""
    stage = sch[out]
    axes = list(stage.op.axis)
    if len(axes) >= 5:
        stage.parallel(stage.fuse(*axes[:3]))
    elif len(axes) >= 3:
        stage.parallel(stage.fuse(*axes[:2]))
    elif axes:
        stage.parallel(axes[0])
    if axes:
        lo, li = stage.split(axes[-1], factor=16)
        stage.vectorize(li)
        if len(axes) == 1:  # the split broke the parallel loop: parallelise its outer part
            stage.parallel(lo)
    return sch


def schedule_injective(outs: Any) -> Any:
    """x86 schedule of injective ops: producers inlined, the first output parallel and
    vectorized."""
    outs = as_list(outs, "topi.x86.schedule_injective")
    s = create_schedule(outs)
    auto_inline_injective(s)
    if const_size(outs[0].shape) != 0:
        schedule_injective_from_existing(s, outs[0])
    return s


schedule_elemwise = schedule_injective
schedule_broadcast = schedule_injective


def _schedule_reduce_stage(sch: Any, out: Any) -> None:
    stage = sch[out]
    axes = list(stage.op.axis)
    if not axes:
        return  # a full reduction to a scalar: one serial loop nest
    if const_size(out.shape) is not None:
        # fuse outer axes until 128-way parallelism (TVM's heuristic)
        fused, par = [], 1
        while len(fused) < len(axes) and par < 128:
            par *= get_const_int(out.shape[len(fused)])
            fused.append(axes[len(fused)])
    else:
        fused = axes[:3] if len(axes) >= 5 else axes
    stage.parallel(fuse_all(stage, fused))


def schedule_reduce(outs: Any) -> Any:
    """x86 schedule of a reduction: the injective producers inlined, the outer output
    axes parallel; injective consumers (``sum(x) / n``) get the injective recipe."""
    outs = as_list(outs, "topi.x86.schedule_reduce")
    s = create_schedule(outs)
    done: set[int] = set()

    def before_reduce(op: Any) -> None:
        if is_placeholder(op) or id(op) in done:
            return
        done.add(id(op))
        if is_compute(op) and not op.reduce_axis and is_injective(op.tag):
            s[op].compute_inline()
            for t in op.input_tensors:
                before_reduce(t.op)
        elif is_compute(op) and op.reduce_axis:
            after_reduce(op)  # another reduction feeding this one: its own loop nest
        else:
            raise unsupported_operator(
                "topi.x86.schedule_reduce", op, "injective ops around reductions"
            )

    def after_reduce(op: Any) -> None:
        if is_placeholder(op):
            return
        done.add(id(op))
        if is_compute(op) and op.reduce_axis:
            _schedule_reduce_stage(s, op.output(0))
            for t in op.input_tensors:
                before_reduce(t.op)
        elif is_compute(op) and is_broadcast(op.tag):
            schedule_injective_from_existing(s, op.output(0))
            for t in op.input_tensors:
                if id(t.op) not in done:
                    after_reduce(t.op)
        else:
            raise unsupported_operator(
                "topi.x86.schedule_reduce", op, "injective ops around reductions"
            )

    after_reduce(outs[0].op)
    return s


def schedule_softmax(outs: Any) -> Any:
    """x86 softmax: the axes before the softmax axis fused into one parallel loop, under
    which the max, the exponentials and their sum are computed (TVM's recipe)."""
    outs = as_list(outs, "topi.x86.schedule_softmax")
    s = create_schedule(outs)
    softmax = outs[0]
    parts = softmax_parts(softmax.op, "topi.x86.schedule_softmax")
    outer = list(s[softmax].op.axis)[: parts.axis]
    if not outer:
        return s  # softmax along the first axis: each stage its own loop nest
    fused = fuse_all(s[softmax], outer)
    s[softmax].parallel(fused)
    if parts.delta is not None:  # fast_softmax: delta and exp are elementwise steps
        s[parts.exp].compute_inline()
        s[parts.delta].compute_inline()
    s[parts.max_elem].compute_at(s[softmax], fused)
    s[parts.expsum].compute_at(s[softmax], fused)
    if parts.exp is not None and parts.delta is None:
        s[parts.exp].compute_at(s[softmax], fused)
    return s


def conv2d_nchw(
    data: Any, kernel: Any, strides: Any, padding: Any, dilation: Any, out_dtype: Any = None
) -> Any:
    """The x86 compute of conv2d NCHW: ``topi.nn.conv2d_nchw`` (TVM's is the same direct
    convolution, its schedule's tiling chosen by autotvm)."""
    return nn.conv2d_nchw(data, kernel, strides, padding, dilation, out_dtype)


def schedule_conv2d_nchw(outs: Any) -> Any:
    """x86 schedule of an NCHW convolution (simpler than TVM's NCHWc one): the padding
    inlined, (batch, out channel) fused into one parallel loop of the output, the
    convolution computed under it, an injective consumer (relu) vectorized."""
    outs = as_list(outs, "topi.x86.schedule_conv2d_nchw")
    s = create_schedule(outs)

    def callback(op: Any) -> None:
        if op.tag != "conv2d_nchw":
            return
        conv = op.output(0)
        for t in op.input_tensors:
            if is_compute(t.op) and ("pad" in t.op.tag or "dilate" in t.op.tag):
                s[t].compute_inline()
        _parallel_outer(s, conv, outs[0], 2)

    traverse_inline(s, outs, callback)
    return s


def _parallel_outer(s: Any, core: Any, out: Any, n_outer: int) -> None:
    """``out``'s first ``n_outer`` axes fused and parallel; ``core`` (the reduction)
    computed under that loop when ``out`` is an injective consumer of the same shape."""
    stage = s[out]
    axes = list(stage.op.axis)
    fused = fuse_all(stage, axes[:n_outer])
    stage.parallel(fused)
    if out.op is not core.op:
        if tuple(out.shape) == tuple(core.shape):
            s[core].compute_at(stage, fused)
        else:
            sc = s[core]
            sc.parallel(fuse_all(sc, list(sc.op.axis)[:n_outer]))
        if len(axes) > n_outer:
            _, inner = stage.split(axes[-1], factor=16)
            stage.vectorize(inner)


def dense_nopack(data: Any, weight: Any, bias: Any = None, out_dtype: Any = None) -> Any:
    """The x86 dense compute without weight packing: ``topi.nn.dense``."""
    return nn.dense(data, weight, bias, out_dtype)


def dense_pack(data: Any, weight: Any, bias: Any = None, out_dtype: Any = None) -> Any:
    """The x86 dense compute TVM packs the weight for; here ``topi.nn.dense`` (no packing:
    same values, the weight read in place)."""
    return nn.dense(data, weight, bias, out_dtype)


def _schedule_dense(outs: Any, what: str) -> Any:
    outs = as_list(outs, what)
    s = create_schedule(outs)

    def callback(op: Any) -> None:
        if op.tag == "dense":
            _parallel_outer(s, op.output(0), outs[0], 1)

    traverse_inline(s, outs, callback)
    return s


def schedule_dense_nopack(outs: Any) -> Any:
    """x86 dense schedule (simpler than TVM's tiled one): rows parallel, the bias add
    (an injective consumer) fused in and vectorized."""
    return _schedule_dense(outs, "topi.x86.schedule_dense_nopack")


def schedule_dense_pack(outs: Any) -> Any:
    """x86 schedule for ``dense_pack`` (no packed weight here): the nopack schedule."""
    return _schedule_dense(outs, "topi.x86.schedule_dense_pack")


def __getattr__(name: str) -> Any:
    # topi.x86.schedule_conv2d_nchwc...: not provided, say what to write instead
    raise missing_per_target("x86", name, __all__)
