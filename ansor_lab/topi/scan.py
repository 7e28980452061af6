"""Cumulative sums and products (``topi.cumsum``, ``topi.cumprod``), TVM's signatures.

TVM builds them with ``te.extern`` (a serial loop per row). Here they are ``te.compute``
stages the auto-scheduler tunes (``te.scan`` carries a running total too, but the search
takes no scan), so no stage carries a running total from one element to the next: each
element is its own reduction. A short scanned axis (n <=
``BLOCKED_ABOVE`` = 64, a model's axis) is one masked reduction, ``out[..., i, ...] =
te.sum(x[..., k, ...], axis=k, where=k <= i)``: O(n^2), one stage; unscheduled it adds
k = 0, 1, ... in order, as a serial scan does (a tuned program may reassociate it, as
its schedule states). A longer axis is scanned by blocks of B elements (a power of two
from 8, ``_block_length``), in four stages (products alike, with ``*`` and 1):

    cumsum_block[..., b]    = sum(x[..., b*B + k] for k < B if b*B + k < n)
    cumsum_before[..., b]   = sum(cumsum_block[..., c] for c < b)        (0 for b = 0)
    cumsum_in_block[..., i] = sum(x[..., i - i%B + j] for j <= i%B)      (j < i%B: exclusive)
    cumsum_generic[..., i]  = cumsum_before[..., i // B] + cumsum_in_block[..., i]

The work is about n B + (n/B)^2 + 3n, not O(n): without a carried total each element
re-adds the prefix of its block (B) and each block the totals before it (n/B). B near
sqrt(n) would make it O(n sqrt n) (the n B term); B near (2n)^(1/3), the least of the
two terms' sum, makes it O(n^(4/3)): a 1-D cumsum of 10^5 elements (B = 64) does ~10^7
additions instead of 10^10. The blocked sum adds in another order than a serial scan
(the totals of the blocks, then inside the block): floats equal numpy's up to rounding,
integers exactly (wrap-around is associative).
"""

from __future__ import annotations

import math
from typing import Any

from ..dsl import dtypes, intrin
from ..dsl.construct import const
from ..dsl.tensor import Tensor, compute, reduce_axis
from ..dsl.unsupported import comm_reducer
from ..errors import DSLError
from .utils import check_tensor, get_const_tuple, normalize_axis

# TVM's prod reducer (as topi.prod): builds on every backend, the auto-scheduler refuses it
_PROD = comm_reducer(lambda x, y: x * y, lambda dtype: const(1, dtype), name="prod")

#: a scanned axis longer than this is scanned by blocks (``_blocked``); a shorter one,
#: a model's axis, stays one masked reduction (one stage, as TVM users tune it)
BLOCKED_ABOVE = 64


def _unravel(flat: Any, shape: tuple[int, ...]) -> tuple:
    """The index into ``shape`` (row-major) of the flat position ``flat``."""
    index = []
    stride = 1
    for d in reversed(range(len(shape))):
        if shape[d] == 1:
            index.append(0)
        else:
            q = flat // stride if stride != 1 else flat
            index.append(q % shape[d] if d > 0 else q)
        stride *= shape[d]
    return tuple(reversed(index))


def _block_length(n: int) -> int:
    """The block length ``B`` for a scanned axis of ``n``: the power of two from 8 (so
    ``i // B`` and ``i % B`` are a shift and a mask) at which the work of the blocked scan,
    ``n * B`` (each element re-combines its block's prefix) plus ``(n / B)^2`` (each block
    re-combines the totals before it), is least: about ``(2 n)^(1/3)``."""

    def work(length: int) -> int:
        return n * length + (-(-n // length)) ** 2

    length = 8
    while work(2 * length) < work(length):
        length *= 2
    return length


def _blocked(
    src: Any, out_shape: tuple, ax: int, exclusive: bool, reducer: Any, op_name: str
) -> Tensor:
    """The scan along ``ax`` by blocks, in four stages (see the module); ``src(index)``
    is the element at a full output index, already in the output dtype."""
    n = out_shape[ax]
    length = _block_length(n)
    blocks = -(-n // length)
    prefix = op_name.removesuffix("_generic")
    k = reduce_axis((0, length), name="k")

    def block(*i: Any) -> Any:
        at = i[ax] * length + k
        value = src(i[:ax] + (at,) + i[ax + 1 :])
        return reducer(value, axis=k, where=at < n if n % length else None)

    block_shape = out_shape[:ax] + (blocks,) + out_shape[ax + 1 :]
    totals = compute(block_shape, block, name=f"{prefix}_block")
    c = reduce_axis((0, blocks), name="c")

    def before(*i: Any) -> Any:
        return reducer(totals[i[:ax] + (c,) + i[ax + 1 :]], axis=c, where=c < i[ax])

    carried = compute(block_shape, before, name=f"{prefix}_before")
    j = reduce_axis((0, length), name="j")

    def within(*i: Any) -> Any:
        offset = i[ax] % length
        value = src(i[:ax] + (i[ax] - offset + j,) + i[ax + 1 :])
        return reducer(value, axis=j, where=j < offset if exclusive else j <= offset)

    partial = compute(out_shape, within, name=f"{prefix}_in_block")

    def fcompute(*i: Any) -> Any:
        carry = carried[i[:ax] + (i[ax] // length,) + i[ax + 1 :]]
        return carry + partial[i] if reducer is intrin.sum else carry * partial[i]

    return compute(out_shape, fcompute, name=op_name, tag=op_name)


def scanop(
    data: Tensor,
    combiner: str,
    op_name: str,
    axis: Any = None,
    dtype: str | None = None,
    exclusive: bool | None = None,
) -> Tensor:
    """The cumulative sum (``combiner`` "sum") or product ("prod") of ``data`` along
    ``axis`` (None: of the flattened data, a 1-D result), in ``dtype`` (None: data's).

    ``exclusive``: element j combines the first j elements only (element 0 is the
    identity, 0 or 1). The result is a ``te.compute`` named and tagged ``op_name``: for
    an axis of n <= ``BLOCKED_ABOVE`` elements, a reduction over the scanned axis with the
    condition ``k <= i`` (``k < i`` when exclusive), O(n^2); for a longer one, the last of
    the four stages of the blocked scan (see the module), O(n^(4/3)).
    """
    what = f"topi.{op_name.removesuffix('_generic')}"
    check_tensor(data, f"{what}: data")
    out_dtype = data.dtype if dtype is None or dtype == "" else dtypes.canonical(dtype)
    if out_dtype == "bool":
        raise DSLError(
            f"{what} in bool: pass dtype='int32' (or a float dtype) to count the True values"
        )
    exclusive = bool(exclusive)
    shape = get_const_tuple(data.shape)
    if axis is None:
        out_shape: tuple[int, ...] = (math.prod(shape),)
        ax = 0

        def element(i: tuple) -> Any:
            return data[_unravel(i[0], shape)]

    else:
        if data.ndim == 0:
            raise DSLError(
                f"{what}: data is 0-D; there is no axis {axis}. Pass axis=None (a 1-D result) "
                "or a tensor of at least one dimension"
            )
        ax = normalize_axis(axis, data.ndim, what)
        out_shape = shape

        def element(i: tuple) -> Any:
            return data[i]

    def src(i: tuple) -> Any:
        value = element(i)
        return value if out_dtype == data.dtype else value.astype(out_dtype)

    reducer = intrin.sum if combiner == "sum" else _PROD
    if out_shape[ax] > BLOCKED_ABOVE:
        return _blocked(src, out_shape, ax, exclusive, reducer, op_name)
    k = reduce_axis((0, out_shape[ax]), name="k")

    def fcompute(*i: Any) -> Any:
        value = src(i[:ax] + (k,) + i[ax + 1 :])
        return reducer(value, axis=k, where=k < i[ax] if exclusive else k <= i[ax])

    return compute(out_shape, fcompute, name=op_name, tag=op_name)


def cumsum(
    data: Tensor, axis: Any = None, dtype: str | None = None, exclusive: bool | None = None
) -> Tensor:
    """numpy-style cumulative sum of ``data`` along ``axis`` (TVM's ``topi.cumsum``).

    ``axis`` None sums over the flattened data (a 1-D result); ``dtype`` is the result's
    and the accumulator's (default: data's; integers wrap around); ``exclusive`` leaves
    each element out of its own sum (the first is 0). An axis of n <= 64 elements is one
    masked ``te.sum`` (O(n^2) work); a longer one is summed by blocks of B ~ (2n)^(1/3)
    elements in four stages, O(n^(4/3)) work (see the module: O(n) needs a carried total,
    which ``te.compute`` cannot express). The auto-scheduler tunes it as any reduction.
    """
    return scanop(data, "sum", "cumsum_generic", axis, dtype, exclusive)


def cumprod(
    data: Tensor, axis: Any = None, dtype: str | None = None, exclusive: bool | None = None
) -> Tensor:
    """numpy-style cumulative product of ``data`` along ``axis`` (TVM's ``topi.cumprod``).

    Arguments as ``cumsum`` (the exclusive first element is 1), and the same stages and
    work: one masked product reduction for n <= 64, O(n^2), else by blocks, O(n^(4/3)).
    The product is a ``te.comm_reducer`` as in ``topi.prod``: it builds and runs with any
    schedule, but the auto-scheduler refuses it (a TaskError naming the first product
    stage: it does not search tuple reductions).
    """
    return scanop(data, "prod", "cumprod_generic", axis, dtype, exclusive)


__all__ = ["cumprod", "cumsum"]
