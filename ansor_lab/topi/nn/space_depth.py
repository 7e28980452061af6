"""Rearrangements between space and channels (``topi.nn.depth_to_space``,
``topi.nn.space_to_depth``), NCHW or NHWC."""

from __future__ import annotations

from ...dsl.tensor import Tensor, compute
from ...errors import DSLError
from ..tag import INJECTIVE
from ..utils import check_tensor, get_const_int


def _prepare(data: Tensor, block_size: int, layout: str, op: str) -> tuple[int, tuple]:
    check_tensor(data, f"{op}: data", ndim=4)
    if layout not in ("NCHW", "NHWC"):
        raise DSLError(f"{op}: layout {layout!r} is not supported; use 'NCHW' or 'NHWC'")
    bs = get_const_int(block_size)
    if bs < 1:
        raise DSLError(f"{op}: block_size {block_size} must be a positive integer")
    if layout == "NCHW":
        n, c, h, w = data.shape
    else:
        n, h, w, c = data.shape
    return bs, (n, c, h, w)


def _layout_shape(layout: str, n: int, c: int, h: int, w: int) -> tuple:
    return (n, c, h, w) if layout == "NCHW" else (n, h, w, c)


def depth_to_space(
    data: Tensor, block_size: int, layout: str = "NCHW", mode: str = "DCR"
) -> Tensor:
    """Move channel blocks into bs x bs spatial blocks: (N, C, H, W) to
    (N, C / bs**2, H * bs, W * bs). ``mode`` "DCR" (TensorFlow: depth, column, row) or
    "CDR" (PyTorch's pixel shuffle). C must be a multiple of bs**2 (TVM drops the rest)."""
    op = "topi.nn.depth_to_space"
    bs, (n, c, h, w) = _prepare(data, block_size, layout, op)
    if mode not in ("DCR", "CDR"):
        raise DSLError(f"{op}: mode {mode!r} is not supported; use 'DCR' or 'CDR'")
    if c % (bs * bs):
        raise DSLError(
            f"{op}: {c} channels are not a multiple of block_size**2 = {bs * bs}; pass a "
            f"block_size whose square divides the channels"
        )
    factor = c // (bs * bs)

    def fcompute(*i):
        b, ch, y, x = (i[0], i[1], i[2], i[3]) if layout == "NCHW" else (i[0], i[3], i[1], i[2])
        offset = bs * (y % bs) + x % bs
        channel = factor * offset + ch if mode == "DCR" else ch * (bs * bs) + offset
        if layout == "NCHW":
            return data[b, channel, y // bs, x // bs]
        return data[b, y // bs, x // bs, channel]

    shape = _layout_shape(layout, n, factor, h * bs, w * bs)
    return compute(shape, fcompute, name="depth_to_space", tag=INJECTIVE)


def space_to_depth(data: Tensor, block_size: int, layout: str = "NCHW") -> Tensor:
    """Move bs x bs spatial blocks into channels: (N, C, H, W) to
    (N, C * bs**2, H / bs, W / bs), the inverse of ``depth_to_space`` in "DCR" mode.
    H and W must be multiples of bs (TVM drops the rest)."""
    op = "topi.nn.space_to_depth"
    bs, (n, c, h, w) = _prepare(data, block_size, layout, op)
    if h % bs or w % bs:
        raise DSLError(
            f"{op}: the spatial size {h}x{w} is not a multiple of block_size {bs}; pad or "
            f"crop it (topi.nn.pad) to a multiple of {bs} first"
        )

    def fcompute(*i):
        b, ch, y, x = (i[0], i[1], i[2], i[3]) if layout == "NCHW" else (i[0], i[3], i[1], i[2])
        block = ch // c
        channel = ch % c
        yy = y * bs + block // bs
        xx = x * bs + block % bs
        if layout == "NCHW":
            return data[b, channel, yy, xx]
        return data[b, yy, xx, channel]

    shape = _layout_shape(layout, n, c * bs * bs, h // bs, w // bs)
    return compute(shape, fcompute, name="space_to_depth", tag=INJECTIVE)
