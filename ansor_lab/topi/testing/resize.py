"""numpy references of ``topi.image``: resize (1-D to 3-D), crop_and_resize, grid_sample
and affine_grid, under TVM's ``topi.testing`` names.

Resizing is separable: along each axis an (out x in) interpolation matrix, built from the
exact input coordinate of every output index (``fractions.Fraction``; float64 for
tf_crop_and_resize), is applied with ``np.tensordot``. Grid sampling gathers every tap
with fancy indexing, in float64. Results are cast to the output dtype (the input's by
default; integers truncate toward zero).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

_SPATIAL = {1: "W", 2: "HW", 3: "DHW"}
_EPSILON = 1e-5


def _coordinate(o: int, n_in: int, n_out: int, mode: str, start: float, end: float):
    """The input coordinate of output index ``o`` (ONNX Resize's definitions)."""
    if mode in ("half_pixel", "pytorch_half_pixel"):
        if mode == "pytorch_half_pixel" and n_out == 1:
            return Fraction(0)
        return (Fraction(o) + Fraction(1, 2)) * Fraction(n_in, n_out) - Fraction(1, 2)
    if mode == "align_corners":
        return Fraction(o * (n_in - 1), n_out - 1) if n_out > 1 else Fraction(0)
    if mode == "asymmetric":
        return Fraction(o * n_in, n_out)
    if mode == "tf_half_pixel_for_nn":
        return (Fraction(o) + Fraction(1, 2)) * Fraction(n_in, n_out)
    if mode == "tf_crop_and_resize":
        if n_out > 1:
            return start * (n_in - 1) + o * ((end - start) * (n_in - 1)) / (n_out - 1)
        return 0.5 * (start + end) * (n_in - 1)
    raise ValueError(f"unknown coordinate_transformation_mode {mode!r}")


def _nearest(x, rounding: str) -> int:
    """``x`` rounded by an ONNX rounding method (floor/ceil with TVM's 1e-5 slack)."""
    half = Fraction(1, 2) if isinstance(x, Fraction) else 0.5
    eps = Fraction(1, 10**5) if isinstance(x, Fraction) else _EPSILON
    if rounding == "round":  # half away from zero
        return int(math.copysign(math.floor(abs(x) + half), x))
    if rounding == "floor":
        return math.floor(x + eps)
    if rounding == "ceil":
        return math.ceil(x - eps)
    if rounding == "round_prefer_floor":
        return math.ceil(x - half)
    if rounding == "round_prefer_ceil":
        return math.floor(x + half)
    raise ValueError(f"unknown rounding_method {rounding!r}")


def _cubic(t: Any, alpha: float) -> list[Any]:
    """Keys' cubic-convolution weights of the taps at -1, 0, 1, 2 (fraction ``t``, a
    number or an array)."""

    def kernel(s):
        s = np.abs(s)
        near = (alpha + 2) * s**3 - (alpha + 3) * s**2 + 1
        far = alpha * s**3 - 5 * alpha * s**2 + 8 * alpha * s - 4 * alpha
        return np.where(s <= 1, near, np.where(s < 2, far, 0.0))

    return [kernel(t + 1), kernel(t), kernel(1 - t), kernel(2 - t)]


def _axis_matrix(n_in, n_out, method, mode, rounding, alpha, exclude, start, end):
    """(interpolation matrix, outside mask) of one axis."""
    matrix = np.zeros((n_out, n_in))
    outside = np.zeros(n_out, bool)
    for o in range(n_out):
        x = _coordinate(o, n_in, n_out, mode, start, end)
        outside[o] = mode == "tf_crop_and_resize" and not 0 <= x <= n_in - 1
        if method == "nearest_neighbor":
            matrix[o, min(max(_nearest(x, rounding), 0), n_in - 1)] = 1.0
            continue
        x0 = math.floor(x)
        t = float(x - x0)
        if method == "linear":
            taps = [(x0, 1.0 - t), (x0 + 1, t)]
        else:
            taps = list(zip(range(x0 - 1, x0 + 3), _cubic(t, alpha)))
            if exclude:
                taps = [(i, w if 0 <= i < n_in else 0.0) for i, w in taps]
                total = sum(w for _, w in taps)
                taps = [(i, w / total) for i, w in taps]
        for i, w in taps:
            matrix[o, min(max(i, 0), n_in - 1)] += w
    return matrix, outside


def _apply(x: np.ndarray, axis: int, matrix: np.ndarray, nearest: bool) -> np.ndarray:
    if nearest:  # a gather: exact for any dtype
        return np.take(x, matrix.argmax(axis=1), axis=axis)
    return np.moveaxis(np.tensordot(matrix, x, axes=([1], [axis])), 0, axis)


def _cast(values: np.ndarray, dtype: Any) -> np.ndarray:
    dtype = np.dtype(dtype)
    if np.issubdtype(dtype, np.integer) and np.issubdtype(values.dtype, np.floating):
        values = np.trunc(values)
    return values.astype(dtype)


def _resize(
    data, size, layout, method, mode, roi, rounding, alpha, exclude, extrapolation, out_dtype
):  # fmt: skip
    k = data.ndim - 2
    axes = [layout.index(c) for c in _SPATIAL[k]]
    if rounding == "":
        rounding = "round" if mode == "align_corners" else "floor"
    roi = list(roi) if roi is not None else [0.0] * k + [1.0] * k
    nearest = method == "nearest_neighbor"
    out = data if nearest else data.astype(np.float64)
    masks = []
    for j, (axis, n_out) in enumerate(zip(axes, size)):
        matrix, outside = _axis_matrix(
            data.shape[axis], n_out, method, mode, rounding, alpha, exclude, roi[j], roi[k + j]
        )
        out = _apply(out, axis, matrix, nearest)
        masks.append((axis, outside))
    out = _cast(out, out_dtype or data.dtype)
    for axis, outside in masks:
        shape = [1] * out.ndim
        shape[axis] = -1
        out = np.where(outside.reshape(shape), _cast(np.array(extrapolation), out.dtype), out)
    return out


def _size(data: np.ndarray, layout: str, scale: Any, size: Any, k: int) -> tuple[int, ...]:
    if size is not None:
        return tuple(int(s) for s in (size if isinstance(size, (tuple, list)) else [size]))
    scale = scale if isinstance(scale, (tuple, list)) else (scale,) * k
    axes = [layout.index(c) for c in _SPATIAL[k]]
    return tuple(int(round(data.shape[a] * s)) for a, s in zip(axes, scale))


def _make_resize(k: int, default_layout: str):
    def resize_python(
        data: np.ndarray,
        scale: Any = None,
        layout: str = default_layout,
        method: str = "nearest_neighbor",
        coordinate_transformation_mode: str = "align_corners",
        *,
        size: Any = None,
        roi: Any = None,
        rounding_method: str = "",
        bicubic_alpha: float = -0.5,
        bicubic_exclude: int = 0,
        extrapolation_value: float = 0.0,
        out_dtype: Any = None,
    ) -> np.ndarray:
        out_size = _size(data, layout, scale, size, k)
        return _resize(
            data, out_size, layout, method, coordinate_transformation_mode, roi,
            rounding_method, bicubic_alpha, bicubic_exclude, extrapolation_value, out_dtype,
        )  # fmt: skip

    resize_python.__name__ = f"resize{k}d_python"
    resize_python.__doc__ = (
        f"{k}-D resize of ``data`` ({default_layout} or channels-last) to ``size``, or to "
        "round(n * scale) per axis (TVM's positional arguments: scale, layout, method, "
        "coordinate mode). ``roi`` (starts, then ends) is read in tf_crop_and_resize mode."
    )
    return resize_python


resize1d_python = _make_resize(1, "NCW")
resize2d_python = _make_resize(2, "NCHW")
resize3d_python = _make_resize(3, "NCDHW")


def crop_and_resize_python(
    image: np.ndarray,
    boxes: np.ndarray,
    box_indices: np.ndarray,
    crop_size: Any,
    layout: str = "NCHW",
    method: str = "bilinear",
    extrapolation_value: float = 0.0,
    out_dtype: Any = None,
) -> np.ndarray:
    """TensorFlow's crop_and_resize: box n = (y1, x1, y2, x2) of image box_indices[n]
    (clamped into the batch) resampled to ``crop_size``; outside the image:
    ``extrapolation_value``. Nearest rounds half away from zero."""
    axes = [layout.index("H"), layout.index("W")]
    x = np.moveaxis(image, axes, (-2, -1))
    crops = []
    for n, box in enumerate(np.asarray(boxes, np.float64)):
        b = min(max(int(box_indices[n]), 0), image.shape[0] - 1)
        crop = x[b] if method == "nearest_neighbor" else x[b].astype(np.float64)
        masks = []
        for j, (n_in, n_out) in enumerate(zip(x.shape[-2:], crop_size)):
            lo, hi = box[j], box[j + 2]
            if n_out > 1:
                span = (hi - lo) * float(n_in - 1)
                coords = [lo * float(n_in - 1) + span * o / float(n_out - 1) for o in range(n_out)]
            else:
                coords = [(lo + hi) * (0.5 * (n_in - 1))]
            matrix = np.zeros((n_out, n_in))
            for o, c in enumerate(coords):
                if method == "nearest_neighbor":
                    matrix[o, min(max(_nearest(c, "round"), 0), n_in - 1)] = 1.0
                else:
                    c0 = math.floor(c)
                    for i, w in ((c0, 1.0 - (c - c0)), (c0 + 1, c - c0)):
                        matrix[o, min(max(i, 0), n_in - 1)] += w
            crop = _apply(crop, crop.ndim - 2 + j, matrix, method == "nearest_neighbor")
            masks.append(np.array([not 0 <= c <= n_in - 1 for c in coords]))
        crop = _cast(crop, out_dtype or image.dtype)
        outside = masks[0][:, None] | masks[1][None, :]
        crops.append(np.where(outside, _cast(np.array(extrapolation_value), crop.dtype), crop))
    return np.moveaxis(np.stack(crops), (-2, -1), axes)


def _reflect(x: np.ndarray, twice_low: int, twice_high: int) -> np.ndarray:
    """PyTorch's reflect_coordinates: mirror ``x`` into [low, high] (in halves)."""
    if twice_low == twice_high:
        return np.zeros_like(x)
    low = twice_low / 2
    span = (twice_high - twice_low) / 2
    x = np.abs(x - low)
    extra = np.fmod(x, span)
    flips = np.floor(x / span)
    return np.where(flips % 2 == 0, extra + low, span - extra + low)


def grid_sample_python(
    data: np.ndarray,
    grid: np.ndarray,
    method: str = "bilinear",
    layout: str = "NCHW",
    padding_mode: str = "zeros",
    align_corners: bool = True,
) -> np.ndarray:
    """PyTorch's grid_sample of NCHW (NCDHW) ``data`` at ``grid`` ([N, 2 (3), out...],
    x first): "bilinear", "nearest" (half to even) or 2-D "bicubic" (A = -0.75), with
    "zeros", "border" or "reflection" padding."""
    batch = data.shape[0]
    extents = data.shape[2:]
    k = len(extents)
    out_shape = grid.shape[2:]

    def source(j: int) -> np.ndarray:
        g = grid[:, k - 1 - j].astype(np.float64)
        n = extents[j]
        return ((g + 1) / 2) * (n - 1) if align_corners else ((g + 1) * n - 1) / 2

    def pad(x: np.ndarray, n: int) -> np.ndarray:
        if padding_mode == "reflection":
            x = _reflect(x, 0, 2 * (n - 1)) if align_corners else _reflect(x, -1, 2 * n - 1)
        if padding_mode in ("reflection", "border"):
            x = np.clip(x, 0, n - 1)
        return x

    def gather(indices: list[np.ndarray]) -> np.ndarray:
        """data[n, :, idx...] per output position, 0 where outside: [N, C, out...]."""
        inside = np.ones(indices[0].shape, bool)
        clamped = []
        for idx, n in zip(indices, extents):
            inside &= (idx >= 0) & (idx < n)
            clamped.append(np.clip(idx, 0, n - 1))
        b = np.arange(batch).reshape((batch,) + (1,) * k)
        values = data[(b, slice(None), *clamped)]  # [N, out..., C]
        values = np.where(inside[..., None], values.astype(np.float64), 0.0)
        return np.moveaxis(values, -1, 1)

    coords = [source(j) for j in range(k)]
    if method == "nearest":
        out = gather([np.rint(pad(c, n)).astype(np.int64) for c, n in zip(coords, extents)])
    elif method == "bilinear":
        coords = [pad(c, n) for c, n in zip(coords, extents)]
        floors = [np.floor(c) for c in coords]
        out = np.zeros(data.shape[:2] + out_shape)
        for corner in np.ndindex(*(2,) * k):
            weight = np.ones(grid.shape[:1] + out_shape)
            for c, f, bit in zip(coords, floors, corner):
                weight = weight * (c - f if bit else 1 - (c - f))
            taps = [f.astype(np.int64) + bit for f, bit in zip(floors, corner)]
            out += gather(taps) * weight[:, None]
    elif method == "bicubic" and k == 2:
        floors = [np.floor(c) for c in coords]
        weights = [_cubic(c - f, -0.75) for c, f in zip(coords, floors)]
        out = np.zeros(data.shape[:2] + out_shape)
        for i in range(4):
            for j in range(4):
                ys = pad(floors[0] + i - 1, extents[0]).astype(np.int64)
                xs = pad(floors[1] + j - 1, extents[1]).astype(np.int64)
                out += gather([ys, xs]) * (weights[0][i] * weights[1][j])[:, None]
    else:
        raise ValueError(f"grid_sample_python: method {method!r} for {k}-D data")
    return out.astype(data.dtype)


def affine_grid_python(
    data: np.ndarray, target_shape: Any, align_corners: bool = True
) -> np.ndarray:
    """PyTorch's affine_grid, in TVM's layout: [N, 2, H, W] with x first."""

    def linspace(n: int) -> np.ndarray:
        if n <= 1:
            return np.zeros(max(n, 0))
        steps = np.linspace(-1.0, 1.0, n)
        return steps if align_corners else steps * (n - 1) / n

    height, width = target_shape
    ys, xs = np.meshgrid(linspace(height), linspace(width), indexing="ij")
    base = np.stack([xs, ys, np.ones_like(xs)], axis=-1)  # [H, W, 3]
    out = np.einsum("hwk,ndk->ndhw", base, data.astype(np.float64))
    return out.astype(data.dtype)
