"""``topi.cuda``'s operator schedules: direct conv2d NCHW, small-batch dense, pools.

Simpler than TVM's where TVM asks autotvm for tiles (stated on each function): the
schedules use fixed tiles picked from the shapes, so they need no tuning log and always
run; ``auto_scheduler`` finds faster ones.
"""

from __future__ import annotations

from typing import Any

from ...dsl.tensor import thread_axis
from ...errors import ScheduleError
from .. import nn
from ..tag import is_injective
from .common import (
    as_list,
    create_schedule,
    divisor_tile,
    fuse_all,
    is_compute,
    max_threads,
    traverse_inline,
)
from .cuda_injective import schedule_injective_from_existing

#: conv2d thread tile of the output (out channels, rows, columns): at most 4 x 8 x 16
_CONV_TILE = (4, 8, 16)


def conv2d_nchw(
    data: Any, kernel: Any, strides: Any, padding: Any, dilation: Any, out_dtype: Any = "float32"
) -> Any:
    """The CUDA compute of conv2d NCHW: ``topi.nn.conv2d_nchw`` (TVM's direct one is the
    same convolution; its out_dtype defaults to float32, as here)."""
    return nn.conv2d_nchw(data, kernel, strides, padding, dilation, out_dtype)


def schedule_conv2d_nchw(outs: Any) -> Any:
    """CUDA schedule of a direct NCHW convolution (and injective ops after it, e.g. relu).

    TVM's tiles the output with autotvm's configuration (virtual threads, shared-memory
    caches of the data and the kernel); this one uses a fixed tile: the padding inlined,
    each thread accumulating one output element in a local register, a block of up to
    4 x 8 x 16 threads over (out channel, row, column), the blocks over
    (batch * channel tiles, row tiles, column tiles), the consumer written from the
    register (the convolution computed at its thread).
    """
    outs = as_list(outs, "topi.cuda.schedule_conv2d_nchw")
    s = create_schedule(outs)
    max_threads("topi.cuda.schedule_conv2d_nchw")  # a target is required, as TVM's

    def callback(op: Any) -> None:
        if op.tag == "conv2d_nchw":
            _schedule_direct_conv(s, op.output(0), outs[0])

    traverse_inline(s, outs, callback)
    return s


def _schedule_direct_conv(s: Any, conv: Any, output: Any) -> None:
    for t in conv.op.input_tensors:
        if is_compute(t.op) and is_injective(t.op.tag):
            s[t].compute_inline()  # the padding (and a dilated kernel)
    fused_in = output.op is not conv.op and tuple(output.shape) == tuple(conv.shape)
    if output.op is conv.op:
        local, out = s.cache_write(conv, "local"), conv
    elif fused_in:
        s[conv].set_scope("local")
        local, out = conv, output
    else:  # a consumer of another shape: the convolution is its own kernel
        local, out = s.cache_write(conv, "local"), conv
        schedule_injective_from_existing(s, output)
    stage = s[out]
    n, f, y, x = stage.op.axis
    _, channels, rows, cols = (int(d) for d in out.shape)
    tiles = [divisor_tile(e, cap) for e, cap in zip((channels, rows, cols), _CONV_TILE)]
    fo, fi = stage.split(f, factor=tiles[0])
    yo, yi = stage.split(y, factor=tiles[1])
    xo, xi = stage.split(x, factor=tiles[2])
    stage.reorder(n, fo, yo, xo, fi, yi, xi)
    stage.bind(stage.fuse(n, fo), thread_axis("blockIdx.z"))
    stage.bind(yo, thread_axis("blockIdx.y"))
    stage.bind(xo, thread_axis("blockIdx.x"))
    stage.bind(fi, thread_axis("threadIdx.z"))
    stage.bind(yi, thread_axis("threadIdx.y"))
    stage.bind(xi, thread_axis("threadIdx.x"))
    s[local].compute_at(stage, xi)


def dense_small_batch(data: Any, weight: Any, bias: Any = None, out_dtype: Any = None) -> Any:
    """The CUDA dense compute for a small batch: ``topi.nn.dense``."""
    return nn.dense(data, weight, bias, out_dtype)


def schedule_dense_small_batch(outs: Any) -> Any:
    """CUDA dense for a small batch (TVM's recipe): one block per output element, the
    reduction split by 64 and rfactored into a cross-thread reduction on threadIdx.x.

    TVM computes dense inside a consumer's (bias add's) block, its store predicated on
    thread 0; here the consumer is its own kernel (injective recipe), dense a
    separate one, the values the same.
    """
    outs = as_list(outs, "topi.cuda.schedule_dense_small_batch")
    s = create_schedule(outs)
    max_threads("topi.cuda.schedule_dense_small_batch")

    def callback(op: Any) -> None:
        if op.tag != "dense":
            return
        C = op.output(0)
        _, kf = s[C].split(C.op.reduce_axis[0], factor=64)
        CF = s.rfactor(C, kf)
        s[C].bind(s[C].op.axis[0], thread_axis("blockIdx.y"))
        s[C].bind(s[C].op.axis[1], thread_axis("blockIdx.x"))
        tx = s[C].op.reduce_axis[0]
        thread_x = thread_axis("threadIdx.x")
        s[C].bind(tx, thread_x)
        s[CF].compute_at(s[C], tx)
        s[C].set_store_predicate(thread_x.var.equal(0))
        if outs[0].op is not op:
            schedule_injective_from_existing(s, outs[0])

    traverse_inline(s, outs, callback)
    return s


def schedule_pool(outs: Any, layout: str = "NCHW") -> Any:
    """CUDA schedule of a pool (TVM's recipe): the padding inlined, the output's loops
    fused over blockIdx.x / threadIdx.x, each thread reducing its window in a register."""
    return _schedule_pools(outs, "topi.cuda.schedule_pool")


def schedule_adaptive_pool(outs: Any, layout: str = "NCHW") -> Any:
    """CUDA schedule of an adaptive pool: as ``schedule_pool``."""
    return _schedule_pools(outs, "topi.cuda.schedule_adaptive_pool")


def _schedule_pools(outs: Any, what: str) -> Any:
    outs = as_list(outs, what)
    s = create_schedule(outs)
    num_thread = max_threads(what)
    out_ops = {t.op for t in outs}

    def schedule_one(pool: Any) -> None:
        padded = pool.op.input_tensors[0]
        if is_compute(padded.op) and is_injective(padded.op.tag):
            s[padded].compute_inline()
        if pool.op in out_ops:
            out, local = pool, s.cache_write(pool, "local")
        else:
            out, local = outs[0], pool
            s[pool].set_scope("local")
        fused = fuse_all(s[out], s[out].op.axis)
        bx, tx = s[out].split(fused, factor=num_thread)
        s[out].bind(bx, thread_axis("blockIdx.x"))
        s[out].bind(tx, thread_axis("threadIdx.x"))
        s[local].compute_at(s[out], tx)

    done: set[int] = set()

    def traverse(op: Any) -> None:
        done.add(id(op))
        if is_compute(op) and "pool" in op.tag and op.reduce_axis:
            schedule_one(op.output(0))
        elif is_compute(op) and is_injective(op.tag):
            if op not in out_ops:
                s[op].compute_inline()
            for t in op.input_tensors:
                if is_compute(t.op) and id(t.op) not in done:
                    traverse(t.op)
        else:
            raise ScheduleError(
                f"{what}: unsupported operator {op.name!r} (tag {op.tag!r}); the recipe "
                "handles a topi.nn pool and injective ops after it"
            )

    traverse(outs[0].op)
    return s
