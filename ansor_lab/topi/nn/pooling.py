"""2-D max/avg pooling (``topi.nn.pool2d``, ``max_pool2d``, ``avg_pool2d``, ``global_pool``)."""

from __future__ import annotations

from typing import Any

from ...dsl import intrin
from ...dsl.tensor import Tensor, compute, reduce_axis
from ...errors import DSLError
from ..tag import ELEMWISE
from ..utils import check_tensor, int_tuple
from .pad import pad
from .utils import check_positive, get_pad_tuple, layout_axes


def _out_size(
    size: int, k: int, s: int, d: int, before: int, after: int, ceil_mode: bool, op: str
) -> int:
    dilated = (k - 1) * d + 1
    span = size + before + after - dilated
    if span < 0:
        raise DSLError(
            f"{op}: the dilated kernel ({dilated}) is larger than the padded input "
            f"({size} + {before + after} padding); use a smaller kernel or more padding"
        )
    if not ceil_mode:
        return span // s + 1
    out = -(-span // s) + 1
    if (out - 1) * s >= size + before:  # the last window would start in the padding
        out -= 1
    return out


def _div(x: Any, d: int) -> Any:
    return x // d if d != 1 else x


def _window_count(
    o: Any, size: int, k: int, s: int, d: int, before: int, after: int, out: int, include_pad: bool
) -> Any:
    """How many of a window's k taps fall inside the counted region, as an expression of o."""
    lo, hi = (-before, size + after - 1) if include_pad else (0, size - 1)
    start = o * s - before if s != 1 else o - before
    first_static = lo + before <= 0  # every window starts inside the region
    last_static = hi - ((out - 1) * s - before) >= (k - 1) * d
    if first_static and last_static:
        return k
    # clamp before dividing (floor(max(x, 0) / d) == max(floor(x / d), 0)): a dividend that
    # is a min/max rather than a linear `a*o + c` dodges ir.simplify folding
    # `(a*o + c) // d` wrongly when c >= d and d does not divide a
    k0 = 0 if first_static else _div(intrin.max(lo - start + d - 1, 0), d)
    k1 = k - 1 if last_static else _div(intrin.min(hi - start, (k - 1) * d), d)
    return intrin.max(k1 - k0 + 1, 0)


def pool2d(
    data: Tensor,
    kernel: Any,
    stride: Any,
    dilation: Any,
    padding: Any,
    pool_type: str = "max",
    ceil_mode: bool = False,
    layout: str = "NCHW",
    count_include_pad: bool = True,
) -> Tensor:
    """Max or avg pooling over H and W of ``layout``; padding is (top, left, bottom, right).

    Windows follow PyTorch/TVM: with ``ceil_mode`` the output rounds up but no window
    starts in the bottom/right padding; an average divides by the taps inside the padded
    input (``count_include_pad``) or inside the real input (at least 1).
    """
    op = "topi.nn.pool2d"
    check_tensor(data, f"{op}: data")
    if pool_type not in ("max", "avg"):
        raise DSLError(f"{op}: pool_type {pool_type!r} is not supported; use 'max' or 'avg'")
    h_axis, w_axis = layout_axes(layout, data.ndim, "HW", op)
    kh, kw = int_tuple(kernel, 2, f"{op}: kernel")
    check_positive((kh, kw), "kernel", op)
    sh, sw = int_tuple(stride, 2, f"{op}: stride")
    dh, dw = int_tuple(dilation, 2, f"{op}: dilation")
    check_positive((sh, sw), "stride", op)
    check_positive((dh, dw), "dilation", op)
    top, left, bottom, right = get_pad_tuple(padding, ((kh - 1) * dh + 1, (kw - 1) * dw + 1))
    in_h, in_w = data.shape[h_axis], data.shape[w_axis]
    out_h = _out_size(in_h, kh, sh, dh, top, bottom, ceil_mode, op)
    out_w = _out_size(in_w, kw, sw, dw, left, right, ceil_mode, op)
    # ceil_mode's last window may reach past the given padding: pad a little more
    extra_h = max(0, (out_h - 1) * sh + (kh - 1) * dh + 1 - (in_h + top + bottom))
    extra_w = max(0, (out_w - 1) * sw + (kw - 1) * dw + 1 - (in_w + left + right))
    before, after = [0] * data.ndim, [0] * data.ndim
    before[h_axis], before[w_axis] = top, left
    after[h_axis], after[w_axis] = bottom + extra_h, right + extra_w
    pad_value = intrin.min_value(data.dtype) if pool_type == "max" else 0
    padded = pad(data, before, after, pad_value, name="pad_temp") if any(before + after) else data
    out_shape = list(data.shape)
    out_shape[h_axis], out_shape[w_axis] = out_h, out_w
    out_shape = tuple(out_shape)
    rh = reduce_axis((0, kh), name="rv0")
    rw = reduce_axis((0, kw), name="rv1")

    def source(i):
        idx = list(i)
        idx[h_axis] = (i[h_axis] * sh if sh != 1 else i[h_axis]) + (rh * dh if dh != 1 else rh)
        idx[w_axis] = (i[w_axis] * sw if sw != 1 else i[w_axis]) + (rw * dw if dw != 1 else rw)
        return padded[tuple(idx)]

    if pool_type == "max":
        return compute(
            out_shape,
            lambda *i: intrin.max(source(i), axis=[rh, rw]),
            name="pool_max",
            tag="pool_max",
        )
    pool_sum = compute(
        out_shape, lambda *i: intrin.sum(source(i), axis=[rh, rw]), name="pool_sum", tag="pool_sum"
    )

    def average(*i):
        count_h = _window_count(i[h_axis], in_h, kh, sh, dh, top, bottom, out_h, count_include_pad)
        count_w = _window_count(i[w_axis], in_w, kw, sw, dw, left, right, out_w, count_include_pad)
        count = count_h * count_w
        if not count_include_pad and not isinstance(count, int):
            count = intrin.max(count, 1)
        return pool_sum[i] / count

    return compute(out_shape, average, name="pool_avg", tag=ELEMWISE)


def max_pool2d(
    data: Tensor,
    pool_size: Any,
    strides: Any = 1,
    dilation: Any = 1,
    padding: Any = 0,
    layout: str = "NCHW",
    ceil_mode: bool = False,
) -> Tensor:
    """Max pooling: ``pool2d(..., pool_type="max")``."""
    return pool2d(data, pool_size, strides, dilation, padding, "max", ceil_mode, layout)


def avg_pool2d(
    data: Tensor,
    pool_size: Any,
    strides: Any = 1,
    dilation: Any = 1,
    padding: Any = 0,
    layout: str = "NCHW",
    ceil_mode: bool = False,
    count_include_pad: bool = True,
) -> Tensor:
    """Average pooling: ``pool2d(..., pool_type="avg")``."""
    return pool2d(
        data, pool_size, strides, dilation, padding, "avg", ceil_mode, layout, count_include_pad
    )


def global_pool(data: Tensor, pool_type: str = "max", layout: str = "NCHW") -> Tensor:
    """Max or average over the whole H x W plane; H and W become 1 (TVM's global_pool)."""
    op = "topi.nn.global_pool"
    check_tensor(data, f"{op}: data")
    if pool_type not in ("max", "avg"):
        raise DSLError(f"{op}: pool_type {pool_type!r} is not supported; use 'max' or 'avg'")
    h_axis, w_axis = layout_axes(layout, data.ndim, "HW", op)
    in_h, in_w = data.shape[h_axis], data.shape[w_axis]
    rh = reduce_axis((0, in_h), name="rv0")
    rw = reduce_axis((0, in_w), name="rv1")
    out_shape = tuple(1 if d in (h_axis, w_axis) else e for d, e in enumerate(data.shape))

    def source(i):
        idx = list(i)
        idx[h_axis], idx[w_axis] = rh, rw
        return data[tuple(idx)]

    if pool_type == "max":
        return compute(
            out_shape,
            lambda *i: intrin.max(source(i), axis=[rh, rw]),
            name="adaptive_pool_max",
            tag="adaptive_pool_max",
        )
    pool_sum = compute(
        out_shape,
        lambda *i: intrin.sum(source(i), axis=[rh, rw]),
        name="adaptive_pool_sum",
        tag="adaptive_pool_sum",
    )
    return compute(
        out_shape, lambda *i: pool_sum[i] / (in_h * in_w), name="adaptive_pool_avg", tag=ELEMWISE
    )
