"""Test helpers with TVM's semantics (``tvm.testing.assert_allclose``)."""

from __future__ import annotations

import numpy as np

from .ndarray import NDArray


def _as_numpy(x: object) -> np.ndarray:
    return x.numpy() if isinstance(x, NDArray) else np.asanyarray(x)


def assert_allclose(
    actual: object, desired: object, rtol: float = 1e-7, atol: float = 1e-7
) -> None:
    """Assert two arrays (numpy arrays or NDArrays) have one shape and close values.

    As TVM's: the shapes must match exactly (no broadcasting, so a scalar does not
    stand for an array), then ``numpy.testing.assert_allclose`` compares the values
    with both tolerances (TVM's default atol is 1e-7, numpy's is 0).
    """
    a, d = _as_numpy(actual), _as_numpy(desired)
    if a.shape != d.shape:
        raise AssertionError(f"shapes differ: actual {a.shape}, desired {d.shape}")
    np.testing.assert_allclose(a, d, rtol=rtol, atol=atol, verbose=True)
