"""Adaptive max/avg pooling (``topi.nn.adaptive_pool``, ``adaptive_pool1d``, ``adaptive_pool3d``).

Output element o of a pooled axis covers the inputs [floor(o * in / out),
ceil((o + 1) * in / out)), as TVM and PyTorch. TVM reduces over an axis whose extent
depends on o; the loop IR here wants constant extents, so when ``out`` does not divide
``in`` the windows are read through the widest one, the taps past a window's end
masked (the max's lowest value, the sum's zero). When it divides, every window is the
plain ``in / out`` taps at stride ``in / out``.
"""

from __future__ import annotations

from typing import Any

from ...dsl import expr as E, intrin
from ...dsl.tensor import Tensor, compute, reduce_axis
from ...errors import DSLError
from ..tag import ELEMWISE
from ..utils import check_tensor, get_const_int
from .utils import layout_axes


def _window(o: Any, size: int, out: int, rv: Any) -> tuple[Any, Any, Any]:
    """(input index, mask or None, tap count) of tap ``rv`` of output ``o`` along an axis."""
    if size % out == 0:
        step = size // out
        start = o * step if step != 1 else o
        return (start + rv if step != 1 else start), None, step
    start = (o * size) // out
    # start + rv < ceil((o + 1) * size / out)  <=>  (start + rv) * out < (o + 1) * size
    valid = (start + rv) * out < (o + 1) * size
    end = ((o + 1) * size + out - 1) // out
    return intrin.min(start + rv, size - 1), valid, end - start


def _widest(size: int, out: int) -> int:
    return max(-(-(o + 1) * size // out) - (o * size) // out for o in range(out))


def _adaptive_pool(
    data: Tensor, output_size: Any, pool_type: str, layout: str, letters: str, op: str
) -> Tensor:
    check_tensor(data, f"{op}: data")
    if pool_type not in ("max", "avg"):
        raise DSLError(f"{op}: pool_type {pool_type!r} is not supported; use 'max' or 'avg'")
    axes = layout_axes(layout, data.ndim, letters, op)
    k = len(axes)
    sizes = output_size if isinstance(output_size, (list, tuple)) else (output_size,) * k
    if len(sizes) == 1 and k > 1:
        sizes = tuple(sizes) * k
    if len(sizes) != k:
        raise DSLError(
            f"{op}: output_size {output_size!r} must be an int or {k} ints (one per pooled axis)"
        )
    outs = tuple(data.shape[a] if s is None else get_const_int(s) for a, s in zip(axes, sizes))
    if any(o < 1 for o in outs):
        raise DSLError(f"{op}: output_size {outs} must be positive integers (>= 1)")
    ins = tuple(data.shape[a] for a in axes)
    out_shape = list(data.shape)
    for a, o in zip(axes, outs):
        out_shape[a] = o
    out_shape = tuple(out_shape)
    rvs = [
        reduce_axis((0, _widest(s, o)), name=f"rv{n}") for n, (s, o) in enumerate(zip(ins, outs))
    ]

    def taps(i: tuple) -> tuple[tuple, list, list]:
        idx, masks, counts = list(i), [], []
        for a, s, o, rv in zip(axes, ins, outs, rvs):
            idx[a], valid, count = _window(i[a], s, o, rv)
            counts.append(count)
            if valid is not None:
                masks.append(valid)
        return tuple(idx), masks, counts

    def source(i: tuple, identity: Any) -> Any:
        idx, masks, _ = taps(i)
        value = data[idx]
        return E.select(intrin.all(*masks), value, identity) if masks else value

    if pool_type == "max":
        lowest = intrin.min_value(data.dtype)
        return compute(
            out_shape,
            lambda *i: intrin.max(source(i, lowest), axis=rvs),
            name="adaptive_pool_max",
            tag="adaptive_pool_max",
        )
    zero = E.const(0, data.dtype)
    pool_sum = compute(
        out_shape,
        lambda *i: intrin.sum(source(i, zero), axis=rvs),
        name="adaptive_pool_sum",
        tag="adaptive_pool_sum",
    )

    def average(*i):
        counts = [c for a, s, o in zip(axes, ins, outs) for c in [_window(i[a], s, o, 0)[2]]]
        count = counts[0]
        for c in counts[1:]:
            count = count * c
        return pool_sum[i] / count

    return compute(out_shape, average, name="adaptive_pool_avg", tag=ELEMWISE)


def adaptive_pool(
    data: Tensor, output_size: Any, pool_type: str = "max", layout: str = "NCHW"
) -> Tensor:
    """Max or avg pooling of H and W of ``layout`` down to ``output_size`` (oh, ow).

    An int is both sizes; None keeps an axis. Averages divide by each window's own tap
    count; integer averages divide as TVM's ``div`` (truncating). ``pool_type`` defaults
    to "max" here, as ``global_pool``; TVM requires it.
    """
    return _adaptive_pool(data, output_size, pool_type, layout, "HW", "topi.nn.adaptive_pool")


def adaptive_pool1d(
    data: Tensor, output_size: Any, pool_type: str = "max", layout: str = "NCW"
) -> Tensor:
    """Adaptive pooling of the W axis of ``layout`` (see ``adaptive_pool``)."""
    return _adaptive_pool(data, output_size, pool_type, layout, "W", "topi.nn.adaptive_pool1d")


def adaptive_pool3d(
    data: Tensor, output_size: Any, pool_type: str = "max", layout: str = "NCDHW"
) -> Tensor:
    """Adaptive pooling of D, H and W of ``layout`` (see ``adaptive_pool``)."""
    return _adaptive_pool(data, output_size, pool_type, layout, "DHW", "topi.nn.adaptive_pool3d")
