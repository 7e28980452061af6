"""The fast data address a kernel call passes: the same as ``ctypes.data`` for every array."""

import numpy as np
import pytest

import ansor_lab as tvm
from ansor_lab import te
from ansor_lab.runtime import data_address as da


class _Sub(np.ndarray):
    """A user's ndarray subclass (its fields follow numpy's)."""

    extra = 1


def _arrays():
    base = np.arange(60, dtype="float32")
    return [
        np.empty(0, "float32"),
        np.zeros((), "float64"),
        base,
        base[7:],
        base[::-1],
        base.reshape(6, 10)[2:, 3:],
        np.asfortranarray(base.reshape(6, 10)),
        base.reshape(6, 10).view(_Sub)[1:],
        np.ones(5, "int8")[1:],
        tvm.nd.array(np.ones(9, "float32")).numpy(),
    ]


def test_the_field_is_found_on_cpython():
    assert da._OFFSET is not None


@pytest.mark.parametrize("index", range(10))
def test_matches_ctypes_data(index):
    a = _arrays()[index]
    assert da.data_address(a) == a.ctypes.data


def test_fallback_is_ctypes_data(monkeypatch):
    monkeypatch.setattr(da, "_OFFSET", None)
    a = np.arange(10.0)[3:]
    assert da.data_address(a) == a.ctypes.data


def _plus_one(n):
    x = te.placeholder((n,), name="x")
    y = te.compute((n,), lambda i: x[i] + 1.0, name="y")
    return tvm.build(te.create_prim_func([x, y]), target="llvm")


def test_a_kernel_reads_and_writes_views_at_their_offset():
    f = _plus_one(16)
    src = np.arange(40, dtype="float32")
    dst = np.zeros(40, "float32")
    f(src[9:25], dst[20:36])  # contiguous views that start inside their buffers
    expected = np.zeros(40, "float32")
    expected[20:36] = np.arange(9, 25) + 1
    np.testing.assert_array_equal(dst, expected)


def test_a_kernel_called_with_the_fallback_computes_the_same(monkeypatch):
    f = _plus_one(8)
    x, y = np.arange(8, dtype="float32"), np.zeros(8, "float32")
    monkeypatch.setattr(da, "_OFFSET", None)
    f(x, y)
    np.testing.assert_array_equal(y, x + 1)
