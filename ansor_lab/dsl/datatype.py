"""TVM's ``tvm.DataType``: a dtype string that also answers ``type_code``, ``bits`` and
``lanes`` (a ``str``, as newer TVM's, so it compares and prints as its name)."""

from __future__ import annotations

import re

import numpy as np

from ..errors import DTypeError

_FORM = re.compile(r"^(int|uint|float|bfloat|handle|bool)(\d*)(?:x(\d+))?$")


class DataType(str):
    """A dtype name with its DLPack code, width in bits and vector lanes."""

    INT = 0
    UINT = 1
    FLOAT = 2
    HANDLE = 3
    BFLOAT = 4

    _CODES = {"int": INT, "uint": UINT, "float": FLOAT, "handle": HANDLE, "bfloat": BFLOAT}
    _DEFAULT_BITS = {"int": 32, "uint": 32, "float": 32, "handle": 64, "bfloat": 16}

    type_code: int
    bits: int
    lanes: int

    def __new__(cls, dtype: object) -> DataType:
        if isinstance(dtype, DataType):
            return dtype
        text = dtype if isinstance(dtype, str) else _numpy_name(dtype)
        match = _FORM.match(text)
        if match is None:
            raise DTypeError(
                f"DataType({dtype!r}): not a dtype name; write e.g. 'float32', 'int8', "
                "'uint8', 'bool' or 'float32x4'"
            )
        kind, bits, lanes = match.group(1), match.group(2), match.group(3)
        if kind == "bool":
            if bits:
                raise DTypeError(f"DataType({dtype!r}): 'bool' takes no width")
            code, nbits = cls.UINT, 1
        else:
            code, nbits = cls._CODES[kind], int(bits) if bits else cls._DEFAULT_BITS[kind]
        nlanes = int(lanes) if lanes else 1
        if nbits <= 0 or nlanes <= 0:
            raise DTypeError(f"DataType({dtype!r}): bits and lanes must be positive")
        name = "bool" if kind == "bool" else "handle" if kind == "handle" else f"{kind}{nbits}"
        self = super().__new__(cls, name + (f"x{nlanes}" if nlanes > 1 else ""))
        self.type_code, self.bits, self.lanes = code, nbits, nlanes
        return self

    @property
    def itemsize(self) -> int:
        """Bytes of one element of all lanes (bool takes one byte per lane)."""
        return max(1, self.bits // 8) * self.lanes

    def with_lanes(self, lanes: int) -> DataType:
        """The same element type with ``lanes`` vector lanes."""
        base = str(self).split("x")[0] if self.lanes > 1 else str(self)
        return DataType(base if lanes == 1 else f"{base}x{lanes}")

    def __repr__(self) -> str:
        return f"DataType({str(self)!r})"

    def __reduce__(self) -> tuple:
        return (DataType, (str(self),))


def _numpy_name(dtype: object) -> str:
    if dtype is bool:
        return "bool"
    try:
        return np.dtype(dtype).name
    except TypeError:
        return str(dtype)
