"""``tvm.nd``: NDArrays (a face over ``runtime.ndarray``)."""

from .runtime.ndarray import NDArray, array, empty

__all__ = ["NDArray", "array", "empty"]
