"""``topi.image.grid_sample`` and ``topi.image.affine_grid`` (spatial transformer
networks; PyTorch's ``F.grid_sample`` / ``F.affine_grid``), under TVM's signatures.

``grid[n, :, y, x]`` holds normalised coordinates in [-1, 1] (x first, then y, then z):
-1 and 1 are the centres of the corner pixels with ``align_corners`` and their outer
edges without. Where a tap falls outside the input it reads 0; ``padding_mode`` "border"
clips the coordinate into the input first, "reflection" mirrors it at the edges (then
clips). The grid is data: every read is clamped into the input as well.
"""

from __future__ import annotations

from typing import Any

from ...dsl import dtypes, intrin
from ...dsl.construct import select
from ...dsl.intrin_extra import fmod
from ...dsl.tensor import Tensor, compute
from ...errors import DSLError
from ..utils import check_tensor
from .common import (
    accumulation_dtype,
    check_choice,
    check_method,
    check_sizes,
    clamp,
    const_of,
    interpolate,
    to_index,
)

_METHODS = ("bilinear", "nearest", "bicubic")
_HINTS = {
    "linear": "bilinear",
    "trilinear": "bilinear",
    "nearest_neighbor": "nearest",
    "cubic": "bicubic",
}
_PADDINGS = ("zeros", "border", "reflection")
_LAYOUTS = {2: "NCHW", 3: "NCDHW"}
#: PyTorch's (and TVM's) bicubic coefficient of grid_sample
_A = -0.75


def _check_float(t: Tensor, what: str, op: str) -> None:
    if not dtypes.is_float(t.dtype):
        raise DSLError(f"{op}: {what} must be a float tensor, got {t.dtype}; cast it first")


def _cubic_weights(t: Any) -> list[Any]:
    """PyTorch's cubic-convolution weights (A = -0.75) of taps at -1, 0, 1, 2."""

    def near(s):  # |s| <= 1
        return ((s * (_A + 2.0) - (_A + 3.0)) * s) * s + 1.0

    def far(s):  # 1 < |s| < 2
        return ((s * _A - 5.0 * _A) * s + 8.0 * _A) * s - 4.0 * _A

    return [far(t + 1.0), near(t), near(1.0 - t), far(2.0 - t)]


def grid_sample(
    data: Tensor,
    grid: Tensor,
    method: str = "bilinear",
    layout: str = "NCHW",
    padding_mode: str = "zeros",
    align_corners: bool = True,
) -> Tensor:
    """Sample ``data`` at the positions of ``grid``.

    ``data`` is "NCHW" ``[N, C, H, W]`` with ``grid`` ``[N, 2, OH, OW]`` (or "NCDHW"
    with ``[N, 3, OD, OH, OW]``); the result is ``[N, C, *grid.shape[2:]]``, in the data's
    dtype. ``method``: "bilinear", "nearest" (rounds half to even) or, in 2-D, "bicubic"
    (PyTorch's A = -0.75); ``padding_mode``: "zeros", "border" or "reflection".
    """
    op = "topi.image.grid_sample"
    check_tensor(data, f"{op}: data")
    check_tensor(grid, f"{op}: grid")
    k = data.ndim - 2
    if k not in _LAYOUTS:
        raise DSLError(
            f"{op}: data must be 4-D NCHW or 5-D NCDHW, got {data.ndim}-D tensor "
            f"{data.name!r} of shape {data.shape}"
        )
    if layout != _LAYOUTS[k]:
        raise DSLError(
            f"{op}: layout {layout!r} is not supported for {data.ndim}-D data; use "
            f"{_LAYOUTS[k]!r} (transpose channels-last data first, e.g. "
            "topi.transpose(x, (0, 3, 1, 2)) for NHWC)"
        )
    method = check_method(method, _METHODS, _HINTS, op)
    if method == "bicubic" and k == 3:
        raise DSLError(f"{op}: bicubic is 2-D only (as in TVM); use 'bilinear' or 'nearest'")
    padding = check_choice(padding_mode, _PADDINGS, "padding_mode", op)
    _check_float(data, "data", op)
    _check_float(grid, "grid", op)
    batch, channels = data.shape[:2]
    if grid.ndim != k + 2 or grid.shape[:2] != (batch, k):
        raise DSLError(
            f"{op}: grid must have shape [{batch}, {k}, out spatial...] for data "
            f"{data.shape} ({k} coordinates per output position), got {grid.shape}"
        )
    corners = bool(align_corners)
    acc = accumulation_dtype(data.dtype, grid.dtype)
    extents = data.shape[2:]
    zero = const_of(0.0, acc)

    def unnormalize(g: Any, n: int) -> Any:
        if corners:
            return (g + 1.0) * ((n - 1) / 2.0)
        return (g + 1.0) * (n / 2.0) - 0.5

    def clip(x: Any, n: int) -> Any:
        return intrin.min(intrin.max(x, 0.0), float(n - 1))

    def reflect(x: Any, n: int) -> Any:
        if corners and n == 1:
            return zero
        low, span = (0.0, float(n - 1)) if corners else (-0.5, float(n))
        d = intrin.abs(x - low)
        extra = fmod(d, span)
        odd = fmod(d, 2.0 * span) >= span  # an odd number of spans: mirrored
        return select(odd, (span - extra) + low, extra + low)

    def pad(x: Any, n: int) -> Any:
        if padding == "reflection":
            return clip(reflect(x, n), n)
        if padding == "border":
            return clip(x, n)
        return x

    def axis_taps(x: Any, n: int) -> list:
        if method == "nearest":
            return [(to_index(intrin.nearbyint(pad(x, n)), n), None)]
        if method == "bilinear":
            x = pad(x, n)
            xf = intrin.floor(x)
            t = x - xf
            x0 = to_index(xf, n)
            return [(x0, 1.0 - t), (x0 + 1, t)]
        xf = intrin.floor(x)  # bicubic: the taps, not the coordinate, are padded
        t = x - xf
        taps = []
        for i, w in enumerate(_cubic_weights(t)):
            tap = pad(xf + float(i - 1), n)
            taps.append((to_index(tap, n, margin=3), w))
        return taps

    def body(n, c, *o):
        taps = []
        for j, extent in enumerate(extents):
            g = grid[(n, k - 1 - j) + tuple(o)].astype(acc)  # x is component 0
            taps.append(axis_taps(unnormalize(g, extent), extent))

        def read(spatial, weighted):
            inside = None
            idx = [n, c]
            for s, extent in zip(spatial, extents):
                ok = (s >= 0) & (s < extent)
                inside = ok if inside is None else inside & ok
                idx.append(clamp(s, extent))
            value = data[tuple(idx)].astype(acc)
            return select(inside, value, zero)

        return interpolate(read, taps, acc).astype(data.dtype)

    shape = (batch, channels) + tuple(grid.shape[2:])
    return compute(shape, body, name="grid_sample", tag="grid_sample")


def affine_grid(data: Tensor, target_shape: Any, align_corners: bool = True) -> Tensor:
    """The sampling grid of the affine maps ``data`` (``[N, 2, 3]``) over an output of
    ``target_shape`` = (H, W): ``[N, 2, H, W]``, x then y, for ``grid_sample``.

    Output pixel (i, j) sits at normalised (x, y) = (-1 + 2j / (W - 1), -1 + 2i / (H - 1))
    with ``align_corners`` (``(2j + 1) / W - 1`` without; 0 along an axis of size 1, as
    PyTorch), and the grid holds ``data[n] @ (x, y, 1)``.
    """
    op = "topi.image.affine_grid"
    check_tensor(data, f"{op}: data", ndim=3)
    if data.shape[1:] != (2, 3):
        raise DSLError(f"{op}: data must have shape [batch, 2, 3], got {data.shape}")
    _check_float(data, "data", op)
    height, width = check_sizes(target_shape, 2, "target_shape", op)
    dtype = data.dtype

    def position(i: Any, n: int) -> Any:
        if n == 1:
            return const_of(0.0, dtype)
        if align_corners:
            return (i * 2 - (n - 1)).astype(dtype) / float(n - 1)
        return (i * 2 + (1 - n)).astype(dtype) / float(n)

    def body(n, d, i, j):
        x, y = position(j, width), position(i, height)
        return data[n, d, 0] * x + data[n, d, 1] * y + data[n, d, 2]

    shape = (data.shape[0], 2, height, width)
    return compute(shape, body, name="affine_grid", tag="affine_grid")
