"""numpy references of adaptive pooling, upsampling and the space/depth rearrangements."""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np

_SPATIAL = {1: "W", 2: "HW", 3: "DHW"}


def adaptive_pool(np_data: np.ndarray, out_size: Any, pool_type: str, layout: str) -> np.ndarray:
    """Adaptive max/avg pooling (TVM's ``topi.testing.adaptive_pool``): output o of an axis
    of n inputs pools [floor(o * n / out), ceil((o + 1) * n / out)). Any layout naming
    W (1-D), H and W (2-D) or D, H and W (3-D); an int ``out_size`` is every pooled axis'
    size; integer averages truncate."""
    spatial = sum(c in layout for c in "DHW")
    sizes = (out_size,) * spatial if isinstance(out_size, int) else tuple(out_size)
    axes = [layout.index(c) for c in _SPATIAL[len(sizes)]]
    data = np.moveaxis(np_data, axes, range(-len(axes), 0))
    ins = data.shape[-len(axes) :]
    out = np.zeros(data.shape[: -len(axes)] + sizes, np_data.dtype)
    is_float = np.issubdtype(np_data.dtype, np.floating)
    for pos in itertools.product(*(range(o) for o in sizes)):
        window = tuple(slice(p * n // o, -(-(p + 1) * n // o)) for p, n, o in zip(pos, ins, sizes))
        taps = data[(..., *window)]
        flat = taps.reshape(taps.shape[: -len(axes)] + (-1,))
        if pool_type == "max":
            out[(..., *pos)] = flat.max(axis=-1)
        elif is_float:
            out[(..., *pos)] = flat.astype(np.float64).mean(axis=-1)
        else:
            total = flat.astype(np.int64).sum(axis=-1)
            out[(..., *pos)] = np.sign(total) * (np.abs(total) // flat.shape[-1])
    return np.moveaxis(out, range(-len(axes), 0), axes)


def _source(o: int, n: int, out: int, align_corners: bool) -> float:
    if align_corners:
        return o * (n - 1) / (out - 1) if out > 1 else 0.0
    return o * n / out


def upsampling_python(
    data: np.ndarray,
    scale: Any,
    layout: str = "NCHW",
    method: str = "nearest_neighbor",
    align_corners: bool = False,
) -> np.ndarray:
    """Upsampling of H and W by ``scale`` = (scale_h, scale_w) to round(n * scale) pixels.

    Output y reads input y * n / out (``align_corners``: y * (n - 1) / (out - 1)): the
    nearest pixel below it (rounded half up with ``align_corners``), or the bilinear mix
    of the two around it (the upper one clamped to the edge).
    """
    h_axis, w_axis = layout.index("H"), layout.index("W")
    x = np.moveaxis(data.astype(np.float64), (h_axis, w_axis), (-2, -1))
    n_h, n_w = x.shape[-2:]
    o_h, o_w = round(n_h * float(scale[0])), round(n_w * float(scale[1]))
    out = np.zeros(x.shape[:-2] + (o_h, o_w))
    for y in range(o_h):
        sy = _source(y, n_h, o_h, align_corners)
        for xx in range(o_w):
            sx = _source(xx, n_w, o_w, align_corners)
            if method == "nearest_neighbor":
                round_ = (lambda v: math.floor(v + 0.5)) if align_corners else math.floor
                out[..., y, xx] = x[..., round_(sy), round_(sx)]
                continue
            y0, x0 = math.floor(sy), math.floor(sx)
            fy, fx = sy - y0, sx - x0
            y1, x1 = min(y0 + 1, n_h - 1), min(x0 + 1, n_w - 1)
            top = x[..., y0, x0] * (1 - fx) + x[..., y0, x1] * fx
            bottom = x[..., y1, x0] * (1 - fx) + x[..., y1, x1] * fx
            out[..., y, xx] = top * (1 - fy) + bottom * fy
    return np.moveaxis(out, (-2, -1), (h_axis, w_axis)).astype(data.dtype)


def depth_to_space_python(
    data: np.ndarray, block_size: int, mode: str = "DCR", layout: str = "NCHW"
) -> np.ndarray:
    """(N, C, H, W) to (N, C / b**2, H * b, W * b): "DCR" takes channel (by, bx, c),
    "CDR" channel (c, by, bx)."""
    b = block_size
    x = data if layout == "NCHW" else data.transpose(0, 3, 1, 2)
    n, c, h, w = x.shape
    if mode == "DCR":
        t = x.reshape(n, b, b, c // (b * b), h, w).transpose(0, 3, 4, 1, 5, 2)
    else:
        t = x.reshape(n, c // (b * b), b, b, h, w).transpose(0, 1, 4, 2, 5, 3)
    out = t.reshape(n, c // (b * b), h * b, w * b)
    return out if layout == "NCHW" else out.transpose(0, 2, 3, 1)


def space_to_depth_python(data: np.ndarray, block_size: int, layout: str = "NCHW") -> np.ndarray:
    """(N, C, H, W) to (N, C * b**2, H / b, W / b); output channel (by, bx, c)."""
    b = block_size
    x = data if layout == "NCHW" else data.transpose(0, 3, 1, 2)
    n, c, h, w = x.shape
    t = x.reshape(n, c, h // b, b, w // b, b).transpose(0, 3, 5, 1, 2, 4)
    out = t.reshape(n, c * b * b, h // b, w // b)
    return out if layout == "NCHW" else out.transpose(0, 2, 3, 1)
