"""``topi.cuda``: TVM's classic CUDA schedules (``python/tvm/topi/cuda/``), under a CUDA target.

Call them inside ``with tvm.target.Target("cuda"):`` (or ``tvm.target.cuda()``): like
TVM's they read the target's threads per block. Every one lowers, compiles (NVRTC/nvcc)
and runs on the GPU or on the GPU emulator (``tvm.build(s, args, "cuda").emulate(...)``).

- ``schedule_injective`` (``schedule_elemwise``, ``schedule_broadcast``): producers
  inlined, the output's loops fused and split over blockIdx.x / threadIdx.x, as TVM's.
- ``schedule_reduce``: TVM's recipe: the injective producers inlined, the reduction axes
  fused, split by the thread count and rfactored into a cross-thread reduction on
  threadIdx.x, over all the target's threads for a reduction to a scalar; a row
  reduction puts 32 output elements of a block on threadIdx.y, the last block's extra
  threads guarded (they join the shared-memory tree with the identity and store
  nothing), as TVM's. argmax / argmin, two
  plain reductions here (a tuple reduction in TVM), get the same recipe each.
- ``schedule_softmax``: TVM's GPU recipe for 2-D softmax, both the max and the sum as
  cross-thread reductions of a block per row (TVM's CUDA one uses warp shuffles); other
  ranks get the injective recipe on each stage, as TVM's.
- ``conv2d_nchw`` / ``schedule_conv2d_nchw``, ``dense_small_batch`` /
  ``schedule_dense_small_batch``, ``schedule_pool`` / ``schedule_adaptive_pool``: see
  ``cuda_nn``.
"""

from __future__ import annotations

from typing import Any

from ...dsl.tensor import thread_axis
from ..per_target import missing_per_target
from ..tag import COMM_REDUCE, COMM_REDUCE_IDX, is_broadcast, is_injective
from .common import (
    as_list,
    create_schedule,
    fuse_all,
    is_compute,
    is_placeholder,
    max_threads,
    traverse_inline,
    unsupported_operator,
)
from .cuda_injective import schedule_injective, schedule_injective_from_existing
from .cuda_nn import (
    conv2d_nchw,
    dense_small_batch,
    schedule_adaptive_pool,
    schedule_conv2d_nchw,
    schedule_dense_small_batch,
    schedule_pool,
)
from .softmax_parts import SOFTMAX_TAGS, softmax_parts

__all__ = [
    "conv2d_nchw",
    "dense_small_batch",
    "schedule_adaptive_pool",
    "schedule_broadcast",
    "schedule_conv2d_nchw",
    "schedule_dense_small_batch",
    "schedule_elemwise",
    "schedule_injective",
    "schedule_injective_from_existing",
    "schedule_pool",
    "schedule_reduce",
    "schedule_softmax",
]

schedule_elemwise = schedule_injective
schedule_broadcast = schedule_injective


def _schedule_reduce_stage(sch: Any, out: Any) -> None:
    """One reduction as TVM's ``_schedule_reduce``: rfactor + cross-thread reduction."""
    stage = sch[out]
    if stage.op.axis:
        all_reduce, num_thread = False, 32
    else:
        all_reduce, num_thread = True, max_threads("topi.cuda.schedule_reduce")
    thread_x = thread_axis((0, num_thread), "threadIdx.x")
    fused_reduce = fuse_all(stage, stage.op.reduce_axis)
    _, ki = stage.split(fused_reduce, factor=num_thread)
    rf = sch.rfactor(out, ki)
    tx = sch[out].op.reduce_axis[0]
    sch[out].bind(tx, thread_x)
    sch[rf].compute_at(sch[out], tx)
    if not all_reduce:
        fused_outer = fuse_all(sch[out], sch[out].op.axis)
        bx, outer_in = sch[out].split(fused_outer, factor=num_thread)
        sch[out].bind(outer_in, thread_axis((0, num_thread), "threadIdx.y"))
        sch[out].bind(bx, thread_axis("blockIdx.x"))
    sch[out].set_store_predicate(thread_x.var.equal(0))


def _reduce_traversal(s: Any, outs: list, what: str) -> None:
    out_ops = {t.op for t in s.outputs}  # the stages' ops (a symbolic DAG's: its probe's)
    # TVM's _enable_auto_inline: consumers of a reduction are inlined into the outputs
    # unless some intermediate stage is itself a reduction
    auto_inline = not any(
        is_compute(st.op) and st.op not in out_ops and st.op.reduce_axis for st in s.stages
    )
    done: set[int] = set()

    def before_reduce(op: Any) -> None:
        if is_placeholder(op) or id(op) in done:
            return
        if is_compute(op) and op.reduce_axis:
            after_reduce(op)  # a reduction feeding this one: its own kernel
            return
        done.add(id(op))
        if not (is_compute(op) and is_injective(op.tag)):
            raise unsupported_operator(what, op, "injective ops before and after topi reductions")
        s[op].compute_inline()
        for t in op.input_tensors:
            before_reduce(t.op)

    def after_reduce(op: Any) -> None:
        if is_placeholder(op) or id(op) in done:
            return
        done.add(id(op))
        if is_compute(op) and op.tag in (COMM_REDUCE, COMM_REDUCE_IDX) and op.reduce_axis:
            _schedule_reduce_stage(s, op.output(0))
            for t in op.input_tensors:
                before_reduce(t.op)
        elif is_compute(op) and (is_broadcast(op.tag) or op.tag == COMM_REDUCE_IDX):
            schedule_injective_from_existing(s, op.output(0))
            for t in op.input_tensors:
                (before_reduce if auto_inline else after_reduce)(t.op)
        else:
            raise unsupported_operator(what, op, "injective ops before and after topi reductions")

    for out in outs:
        after_reduce(out.op)


def schedule_reduce(outs: Any) -> Any:
    """CUDA schedule of injective -> reduction -> broadcast ops (TVM's recipe)."""
    outs = as_list(outs, "topi.cuda.schedule_reduce")
    s = create_schedule(outs)
    _reduce_traversal(s, outs, "topi.cuda.schedule_reduce")
    return s


def schedule_softmax(outs: Any) -> Any:
    """CUDA schedule of ``topi.nn.softmax`` / ``fast_softmax`` / ``log_softmax``."""
    outs = as_list(outs, "topi.cuda.schedule_softmax")
    s = create_schedule(outs)
    max_threads("topi.cuda.schedule_softmax")  # a target is required, as TVM's

    def callback(op: Any) -> None:
        if op.tag in SOFTMAX_TAGS:
            _schedule_softmax(s, softmax_parts(op, "topi.cuda.schedule_softmax"), outs[0])

    traverse_inline(s, outs, callback)
    return s


def _schedule_softmax(s: Any, parts: Any, output: Any) -> None:
    softmax = parts.output
    stages = [parts.max_elem, parts.expsum, softmax]
    if len(output.shape) != 2:
        stages += [t for t in (parts.delta, parts.exp) if t is not None]
        if output.op is not softmax.op:
            stages.append(output)
        for t in stages:
            schedule_injective_from_existing(s, t)
        return
    axis, num_thread = parts.axis, 64
    other = axis ^ 1
    block_x = thread_axis("blockIdx.x")
    thread_x = thread_axis((0, num_thread), "threadIdx.x")
    if parts.delta is not None:
        s[parts.exp].compute_inline()
        s[parts.delta].compute_inline()
    elif parts.exp is not None:
        s[parts.exp].bind(parts.exp.op.axis[other], block_x)
        _, xi = s[parts.exp].split(parts.exp.op.axis[axis], factor=num_thread)
        s[parts.exp].bind(xi, thread_x)
    for red in (parts.max_elem, parts.expsum):
        _, ki = s[red].split(red.op.reduce_axis[0], factor=num_thread)
        rf = s.rfactor(red, ki)
        s[red].bind(s[red].op.axis[0], block_x)
        s[red].bind(s[red].op.reduce_axis[0], thread_x)
        s[rf].compute_at(s[red], s[red].op.reduce_axis[0])
        s[red].set_store_predicate(thread_x.var.equal(0))
    tx, xi = s[output].split(output.op.axis[axis], nparts=num_thread)
    s[output].bind(output.op.axis[other], block_x)
    s[output].bind(tx, thread_x)
    s[output].reorder(output.op.axis[other], tx, xi)
    if output.op is not softmax.op:
        s[softmax].compute_at(s[output], tx)


def __getattr__(name: str) -> Any:
    # topi.cuda.schedule_conv2d_nchw_winograd...: not provided, say what to write instead
    raise missing_per_target("cuda", name, __all__)
