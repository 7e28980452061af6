"""Data types of the DSL: names, numpy equivalents, classification and promotion."""

from __future__ import annotations

import functools

import numpy as np

from ..errors import DTypeError

#: dtypes a tensor or expression may have.
SUPPORTED = ("bool", "int8", "int32", "int64", "float16", "float32", "float64")

_BITS = {
    "bool": 1,
    "int8": 8,
    "int32": 32,
    "int64": 64,
    "float16": 16,
    "float32": 32,
    "float64": 64,
}

_ALIASES = {
    "float": "float32",
    "int": "int32",
    "uint1": "bool",
    "half": "float16",
    "double": "float64",
}


def canonical(dtype: object) -> str:
    """Return the canonical name of ``dtype`` (a string, numpy dtype or Python type)."""
    if dtype is bool:
        return "bool"
    if dtype is int:
        return "int32"
    if dtype is float:
        return "float32"
    if isinstance(dtype, str):
        name = _ALIASES.get(dtype, dtype)
    else:
        try:
            name = np.dtype(dtype).name
        except TypeError:
            name = str(dtype)
    if name not in _BITS:
        raise DTypeError(f"unsupported dtype {dtype!r}; ansor_lab supports {', '.join(SUPPORTED)}")
    return name


def is_float(dtype: str) -> bool:
    """True for float16/32/64."""
    return dtype.startswith("float")


def is_int(dtype: str) -> bool:
    """True for signed integer dtypes (not bool)."""
    return dtype.startswith("int")


def is_bool(dtype: str) -> bool:
    """True for bool."""
    return dtype == "bool"


def bits(dtype: str) -> int:
    """Width in bits (bool counts as 1)."""
    return _BITS[dtype]


def itemsize(dtype: str) -> int:
    """Bytes one element occupies in memory (bool takes one byte, as in numpy)."""
    return max(1, _BITS[dtype] // 8)


def to_numpy(dtype: str) -> np.dtype:
    """The numpy dtype with the same storage."""
    return np.dtype(dtype)


#: The largest loop extent, split factor, fused extent or tensor dimension: loop indices
#: are int32 (as TVM's default index type), so every index value must fit in one.
INDEX_MAX = 2**31 - 1


@functools.cache  # np.iinfo builds an object per call: half a million calls in one search
def int_range(dtype: str) -> tuple[int, int]:
    """The inclusive value range of an integer dtype."""
    info = np.iinfo(dtype)
    return int(info.min), int(info.max)


def promote(a: str, b: str, what: str = "operands") -> str:
    """The dtype two operands are brought to before a binary arithmetic operation.

    Rules (those of TVM's binary_op_match_type): equal dtypes stay; an integer meeting a
    float becomes that float; two integers widen to the wider one. Two different float
    widths do not mix silently, and bool does not take part in arithmetic.
    """
    if a == b:
        return a
    if is_bool(a) or is_bool(b):
        raise DTypeError(
            f"{what}: cannot mix bool with {b if is_bool(a) else a}; "
            "cast the bool with .astype('int32') (or the dtype you want) first"
        )
    if is_float(a) and is_float(b):
        raise DTypeError(
            f"{what}: {a} and {b} do not match; cast one side explicitly, "
            f"e.g. x.astype('{max(a, b, key=bits)}')"
        )
    if is_float(a):
        return a
    if is_float(b):
        return b
    return a if bits(a) >= bits(b) else b


def min_value(dtype: str) -> float | int:
    """The smallest value of ``dtype`` (-inf for floats): the identity of max."""
    if is_float(dtype):
        return float("-inf")
    if is_bool(dtype):
        return 0
    return int_range(dtype)[0]


def max_value(dtype: str) -> float | int:
    """The largest value of ``dtype`` (+inf for floats): the identity of min."""
    if is_float(dtype):
        return float("inf")
    if is_bool(dtype):
        return 1
    return int_range(dtype)[1]
