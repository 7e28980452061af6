"""Constant padding of a tensor (``topi.nn.pad``); convolutions and pools pad with it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...dsl import expr as E, intrin
from ...dsl.tensor import Tensor, compute
from ...errors import DSLError
from ..utils import check_tensor, get_const_int


def pad(
    data: Tensor,
    pad_before: Sequence[int],
    pad_after: Sequence[int] | None = None,
    pad_value: Any = 0.0,
    name: str = "PadInput",
) -> Tensor:
    """``data`` padded with ``pad_value``, pad_before[d] / pad_after[d] around dimension d."""
    check_tensor(data, "topi.nn.pad: data")
    n = data.ndim
    pad_after = pad_before if pad_after is None else pad_after
    for what, pads in (("pad_before", pad_before), ("pad_after", pad_after)):
        if not isinstance(pads, (list, tuple)) or len(pads) != n:
            raise DSLError(
                f"topi.nn.pad: {what} must list one padding per dimension ({n} for shape "
                f"{data.shape}), got {pads!r}"
            )
    before = [get_const_int(p) for p in pad_before]
    after = [get_const_int(p) for p in pad_after]
    if any(p < 0 for p in before + after):
        raise DSLError(
            f"topi.nn.pad: paddings must be >= 0, got pad_before={tuple(before)}, "
            f"pad_after={tuple(after)}"
        )
    try:
        value = (
            E.cast(pad_value, data.dtype)
            if isinstance(pad_value, E.PrimExpr)
            else (E.const(pad_value, data.dtype))
        )
    except DSLError as err:
        raise DSLError(
            f"topi.nn.pad: pad_value {pad_value!r} does not fit {data.dtype}: {err}"
        ) from None
    shape = tuple(e + b + a for e, b, a in zip(data.shape, before, after))

    def fcompute(*i):
        conds = []
        idx = []
        for k in range(n):
            idx.append(i[k] - before[k] if before[k] else i[k])
            if before[k]:
                conds.append(i[k] >= before[k])
            if after[k]:
                conds.append(i[k] < before[k] + data.shape[k])
        if not conds:
            return data[tuple(idx)]
        return E.if_then_else(intrin.all(*conds), data[tuple(idx)], value)

    return compute(shape, fcompute, name=name, tag="injective,pad")
