"""numpy values of the intrinsics of ``intrin_extra`` and of the float functions added to
``intrin.FLOAT_UNARY`` after the first ten (the reference evaluator's side of them)."""

from __future__ import annotations

import numpy as np

#: unary float intrinsic -> numpy function
_UNARY = {
    "exp2": np.exp2,
    "log2": np.log2,
    "log10": np.log10,
    "log1p": np.log1p,
    "sin": np.sin,
    "cos": np.cos,
    "tan": np.tan,
    "sinh": np.sinh,
    "cosh": np.cosh,
    "asin": np.arcsin,
    "acos": np.arccos,
    "atan": np.arctan,
    "asinh": np.arcsinh,
    "acosh": np.arccosh,
    "atanh": np.arctanh,
    "trunc": np.trunc,
    "nearbyint": np.rint,
    "isnan": np.isnan,
    "isinf": np.isinf,
    "isfinite": np.isfinite,
}
_BINARY = {
    "atan2": np.arctan2,
    "fmod": np.fmod,
    "hypot": np.hypot,
    "copysign": np.copysign,
    "nextafter": np.nextafter,
    "bitwise_and": np.bitwise_and,
    "bitwise_or": np.bitwise_or,
    "bitwise_xor": np.bitwise_xor,
}
#: popcount of each byte
_BYTE_BITS = np.array([bin(k).count("1") for k in range(256)], np.int64)


def _unsigned(x: np.ndarray) -> np.ndarray:
    """The two's complement bits of ``x`` as unsigned integers of the same width."""
    return x.astype(np.dtype(f"uint{x.dtype.itemsize * 8}"))


def _popcount(x: np.ndarray) -> np.ndarray:
    u = np.ascontiguousarray(_unsigned(x))
    per_byte = _BYTE_BITS[u.view(np.uint8).reshape(*u.shape, u.dtype.itemsize)]
    return per_byte.sum(axis=-1)


def _clz(x: np.ndarray) -> np.ndarray:
    bits = x.dtype.itemsize * 8
    v = _unsigned(x).astype(np.uint64)
    length = np.zeros(v.shape, np.int64)
    for step in (32, 16, 8, 4, 2, 1):
        high = v >= (np.uint64(1) << np.uint64(step))
        length += np.where(high, step, 0)
        v = np.where(high, v >> np.uint64(step), v)
    length += (v > 0).astype(np.int64)
    return bits - length


def _shift(x: np.ndarray, y: np.ndarray, left: bool) -> np.ndarray:
    # numpy's own rule for amounts out of range (0, or the sign for >>), made explicit
    bits = x.dtype.itemsize * 8
    y = np.asarray(y)
    inside = (y >= 0) & (y < bits)
    amount = np.where(inside, y, 0).astype(x.dtype)
    if left:
        return np.where(inside, np.left_shift(x, amount), 0)
    return np.where(inside, np.right_shift(x, amount), np.where(x < 0, -1, 0))


def call_value(op: str, args: list, dtype: str) -> np.ndarray | None:
    """``op`` applied to numpy ``args``, as ``dtype``; None for an op not listed here."""
    out_dtype = np.dtype(dtype)
    with np.errstate(all="ignore"):  # NaN, inf and overflow are values here, as on a CPU
        if op in _UNARY:
            value = _UNARY[op](args[0])
        elif op == "exp10":
            x = args[0]
            value = np.power(np.asarray(10.0, x.dtype), x)
        elif op in _BINARY:
            value = _BINARY[op](*args)
        elif op == "bitwise_not":
            value = np.invert(args[0])
        elif op in ("shift_left", "shift_right"):
            value = _shift(*args, left=op == "shift_left")
        elif op == "popcount":
            value = _popcount(args[0])
        elif op == "clz":
            value = _clz(args[0])
        else:
            return None
    return np.asarray(value).astype(out_dtype)
