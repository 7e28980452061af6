"""Random GPU schedules (TE style) for the emulator's fuzzer.

Every stage of a workload is either inlined or bound to the GPU. The output stage gets
the classic GPU tiling with random factors (divisible or not: a split that does not
divide leaves guarded threads): each spatial axis split into block / vthread / thread /
inner parts, the block parts bound to blockIdx (one fused axis or x and y), the vthread
parts to vthread, the thread parts to threadIdx; a reduction may accumulate in a "local"
cache computed at the thread loop, its reduction split, and its inputs fetched into
"shared" tiles at the outer reduction loop, cooperatively (fused, split by the block's
threadIdx.x extent, maybe also threadIdx.y). Other stages are bound simply
(blockIdx x threadIdx over their fused axes). Choices come from a fuzz ``Chooser``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from schedule_gen import Chooser

from ansor_lab import te

THREAD_FACTORS = (1, 2, 3, 4, 5, 8, 16)
INNER_FACTORS = (1, 2, 3)


@dataclass
class GPUSchedule:
    """A TE schedule and what was chosen (printed when a check fails)."""

    sched: object
    notes: list = field(default_factory=list)


def _bind(s, stage, axis, tag: str) -> None:
    s[stage].bind(axis, te.thread_axis(tag))


def _compute_ops(outputs: list) -> list:
    """The compute ops reachable from ``outputs``, producers first."""
    seen: set = set()
    order: list = []

    def visit(t) -> None:
        op = t.op
        if id(op) in seen or isinstance(op, te.PlaceholderOp):
            return
        seen.add(id(op))
        for inp in op.input_tensors:
            visit(inp)
        order.append(op)

    for t in outputs:
        visit(t)
    return order


def simple_bind(s, tensor, choose: Chooser, notes: list) -> None:
    """All spatial axes fused, split by a thread count, bound to blockIdx.x/threadIdx.x."""
    stage = s[tensor]
    axes = list(tensor.op.axis)
    fused = stage.fuse(*axes) if len(axes) > 1 else axes[0]
    threads = choose.choice((1, 4, 7, 32, 64), "simple threads")
    bo, ti = stage.split(fused, factor=threads)
    _bind(s, tensor, bo, "blockIdx.x")
    _bind(s, tensor, ti, "threadIdx.x")
    notes.append(f"{tensor.op.name}: simple x{threads}")


def tile_output(s, out, choose: Chooser, notes: list) -> None:
    """The multi-level GPU tiling of the output stage (see the module doc)."""
    op = out.op
    local = bool(op.reduce_axis) and choose.boolean("local cache")
    CL = s.cache_write(out, "local") if local else None
    shared_inputs = []
    if local and choose.boolean("shared inputs"):
        for inp in CL.op.input_tensors:
            shared_inputs.append(s.cache_read(inp, "shared", [CL]))
    stage = s[out]
    axes = list(op.axis)
    # the leading axes beyond two are fused into the first one (batch, channels)
    if len(axes) > 2:
        axes = [stage.fuse(*axes[:-1]), axes[-1]]
    levels = []
    factors = []
    for k, ax in enumerate(axes):
        fi = choose.choice(INNER_FACTORS, f"inner{k}")
        ft = choose.choice(THREAD_FACTORS, f"thread{k}")
        fv = choose.choice((1, 2), f"vthread{k}")
        factors.append(ft)
        rest, inner = stage.split(ax, factor=fi)
        rest, thr = stage.split(rest, factor=ft)
        blk, vth = stage.split(rest, factor=fv)
        levels.append((blk, vth, thr, inner))
        notes.append(f"axis{k}: inner {fi} thread {ft} vthread {fv}")
    order = [lv[i] for i in range(4) for lv in levels]
    stage.reorder(*order)
    blocks = [lv[0] for lv in levels]
    threads = [lv[2] for lv in levels]
    if len(levels) == 2 and choose.boolean("2d binding"):
        _bind(s, out, blocks[0], "blockIdx.y")
        _bind(s, out, blocks[1], "blockIdx.x")
        _bind(s, out, threads[0], "threadIdx.y")
        _bind(s, out, threads[1], "threadIdx.x")
        thread_tags = ("threadIdx.y", "threadIdx.x")
        last_thread = threads[1]
        extent_x, extent_y = factors[1], factors[0]
    else:
        _bind(s, out, stage.fuse(*blocks) if len(blocks) > 1 else blocks[0], "blockIdx.x")
        last_thread = stage.fuse(*threads) if len(threads) > 1 else threads[0]
        _bind(s, out, last_thread, "threadIdx.x")
        thread_tags = ("threadIdx.x",)
        extent_x, extent_y = _product(factors), 1
    vtags = ("vthread",) if len(levels) == 1 else ("vthread.y", "vthread.x")
    for lv, tag in zip(levels, vtags):
        _bind(s, out, lv[1], tag)
    notes.append(f"binding {thread_tags}")
    if choose.boolean("unroll inner"):
        stage.unroll(levels[-1][3])
    if CL is None:
        return
    s[CL].compute_at(s[out], last_thread)
    reds = list(CL.op.reduce_axis)
    outer_red = []
    inner_red = []
    for k, r in enumerate(reds):
        f = choose.choice((1, 2, 3, 4), f"reduce{k}")
        ro, ri = s[CL].split(r, factor=f)
        outer_red.append(ro)
        inner_red.append(ri)
        notes.append(f"reduce{k} inner {f}")
    s[CL].reorder(*outer_red, *inner_red, *CL.op.axis)
    for T in shared_inputs:
        s[T].compute_at(s[CL], outer_red[-1])
        fetch_axes = list(T.op.axis)
        fused = s[T].fuse(*fetch_axes) if len(fetch_axes) > 1 else fetch_axes[0]
        # at most the block's threads: a fetch bound to more threadIdx.x than its
        # consumer runs it with is run by the consumer's threads only (the rest of the
        # tile stays unwritten: GPUUninitializedError)
        tx = choose.choice(
            sorted({v for v in (1, 2, 4, 8, 16) if v <= extent_x} | {extent_x}), "fetch threadIdx.x"
        )
        rest, fx = s[T].split(fused, factor=tx)
        _bind(s, T, fx, "threadIdx.x")
        if "threadIdx.y" in thread_tags and choose.boolean("fetch threadIdx.y"):
            ty = choose.choice(
                sorted({v for v in (1, 2, 4) if v <= extent_y} | {extent_y}), "fetch threadIdx.y"
            )
            _, fy = s[T].split(rest, factor=ty)
            _bind(s, T, fy, "threadIdx.y")
            notes.append(f"fetch {T.op.name}: x{tx} y{ty}")
        else:
            notes.append(f"fetch {T.op.name}: x{tx}")


def _product(xs: list) -> int:
    out = 1
    for x in xs:
        out *= x
    return out


def random_gpu_schedule(args: list, choose: Chooser) -> GPUSchedule:
    """A random GPU schedule of the workload whose tensors are ``args``."""
    outputs = [t for t in args if not isinstance(t.op, te.PlaceholderOp)]
    s = te.create_schedule([t.op for t in outputs])
    notes: list = []
    for op in _compute_ops(outputs):
        tensor = op.output(0)
        if any(op is t.op for t in outputs):
            continue
        if not op.reduce_axis and choose.boolean(f"inline {op.name}"):
            s[tensor].compute_inline()
            notes.append(f"{op.name}: inline")
        else:
            simple_bind(s, tensor, choose, notes)
    for t in outputs:
        if t is outputs[-1]:
            tile_output(s, t, choose, notes)
        else:
            simple_bind(s, t, choose, notes)
    return GPUSchedule(s, notes)
