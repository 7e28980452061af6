"""NDArrays: 64-byte aligned storage (as TVM's), contents and dtypes preserved."""

from __future__ import annotations

import numpy as np
import pytest

import ansor_lab as tvm
from ansor_lab.measure.workers import random_inputs
from ansor_lab.runtime.ndarray import aligned_empty, as_numpy_view


@pytest.mark.parametrize("dtype", ["float32", "float64", "int8", "int32", "bool", "float16"])
@pytest.mark.parametrize("shape", [(), (1,), (7,), (3, 5), (512, 512), (2, 3, 7, 7)])
def test_nd_arrays_are_aligned_and_hold_their_contents(shape, dtype):
    src = (np.arange(int(np.prod(shape))) % 5).astype(dtype).reshape(shape)
    a = tvm.nd.array(src)
    view = as_numpy_view(a)
    assert view.ctypes.data % 64 == 0
    assert view.shape == shape and view.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(a.numpy(), src)
    src[...] = 0  # a copy: the NDArray does not share the source's memory
    assert (
        a.numpy().shape == shape
        and (a.numpy() == (np.arange(src.size) % 5).astype(dtype).reshape(shape)).all()
    )
    e = tvm.nd.empty(shape, dtype)
    assert as_numpy_view(e).ctypes.data % 64 == 0 and e.shape == shape and e.dtype == dtype


def test_aligned_empty_is_c_contiguous_and_writable():
    x = aligned_empty((33, 17), "float32")
    assert x.flags["C_CONTIGUOUS"] and x.flags["WRITEABLE"]
    x[...] = 1.5
    assert float(x.sum()) == 1.5 * 33 * 17


def test_measured_inputs_are_aligned():
    arrays = random_inputs(
        [("A", [100, 3], "float32"), ("B", [9], "int32"), ("M", [4, 4], "bool")], seed=1
    )
    assert [a.ctypes.data % 64 for a in arrays] == [0, 0, 0]
    assert arrays[0].dtype == np.float32 and -1 <= arrays[0].min() and arrays[0].max() < 1
    assert arrays[2].dtype == np.bool_
    # deterministic by seed
    again = random_inputs([("A", [100, 3], "float32")], seed=1)
    np.testing.assert_array_equal(again[0], arrays[0])
