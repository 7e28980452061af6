"""Argument normalisation shared by the numpy references (kept apart from the DSL's helpers)."""

from __future__ import annotations

from typing import Any

import numpy as np


def ntuple(value: Any, n: int) -> tuple[int, ...]:
    """An int or a 1- or n-sequence as n ints (one per spatial axis)."""
    if isinstance(value, (tuple, list)):
        return tuple(int(value[0]) for _ in range(n)) if len(value) == 1 else tuple(map(int, value))
    return (int(value),) * n


def pair(value: Any) -> tuple[int, int]:
    """An int or a 1/2-sequence as (h, w)."""
    return ntuple(value, 2)  # type: ignore[return-value]


def pads_nd(padding: Any, dilated_kernel: tuple) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(begins, ends) per axis from an int, n ints, 2n ints (begins then ends) or a mode."""
    n = len(dilated_kernel)
    if isinstance(padding, str):
        if padding.upper() == "VALID":
            return (0,) * n, (0,) * n
        totals = [k - 1 for k in dilated_kernel]
        begins = tuple(-(-t // 2) for t in totals)
        return begins, tuple(t - b for t, b in zip(totals, begins))
    if isinstance(padding, (tuple, list)) and len(padding) == 2 * n:
        return tuple(map(int, padding[:n])), tuple(map(int, padding[n:]))
    each = ntuple(padding, n)
    return each, each


def pad4(padding: Any, dilated_kernel: tuple[int, int]) -> tuple[int, int, int, int]:
    """(top, left, bottom, right) from an int, (h, w), 4-tuple, or 'SAME' / 'VALID'."""
    begins, ends = pads_nd(padding, dilated_kernel)
    return begins + ends  # type: ignore[return-value]


def acc_dtype(dtype: np.dtype) -> np.dtype:
    """A wide accumulator: float64 for floats, int64 for integers."""
    return np.dtype(np.float64) if np.issubdtype(dtype, np.floating) else np.dtype(np.int64)


def result_dtype(out_dtype: Any, *arrays: np.ndarray) -> np.dtype:
    """``out_dtype`` if given, else the dtype the inputs share."""
    if out_dtype is not None:
        return np.dtype(out_dtype)
    return np.result_type(*arrays)
