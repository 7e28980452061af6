"""Argument normalisation shared by the numpy references (kept apart from the DSL's helpers)."""

from __future__ import annotations

from typing import Any

import numpy as np


def pair(value: Any) -> tuple[int, int]:
    """An int or a 1/2-sequence as (h, w)."""
    if isinstance(value, (tuple, list)):
        return (int(value[0]), int(value[0])) if len(value) == 1 else (int(value[0]), int(value[1]))
    return (int(value), int(value))


def pad4(padding: Any, dilated_kernel: tuple[int, int]) -> tuple[int, int, int, int]:
    """(top, left, bottom, right) from an int, (h, w), 4-tuple, or 'SAME' / 'VALID'."""
    if isinstance(padding, str):
        if padding.upper() == "VALID":
            return (0, 0, 0, 0)
        total_h, total_w = dilated_kernel[0] - 1, dilated_kernel[1] - 1
        top, left = -(-total_h // 2), -(-total_w // 2)
        return (top, left, total_h - top, total_w - left)
    if isinstance(padding, (tuple, list)) and len(padding) == 4:
        return tuple(int(p) for p in padding)  # type: ignore[return-value]
    ph, pw = pair(padding)
    return (ph, pw, ph, pw)


def acc_dtype(dtype: np.dtype) -> np.dtype:
    """A wide accumulator: float64 for floats, int64 for integers."""
    return np.dtype(np.float64) if np.issubdtype(dtype, np.floating) else np.dtype(np.int64)


def result_dtype(out_dtype: Any, *arrays: np.ndarray) -> np.dtype:
    """``out_dtype`` if given, else the dtype the inputs share."""
    if out_dtype is not None:
        return np.dtype(out_dtype)
    return np.result_type(*arrays)
