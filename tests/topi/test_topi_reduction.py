"""Reductions (topi.sum/max/min) against numpy."""

import numpy as np
import pytest

from ansor_lab import te, topi
from ansor_lab.errors import DSLError

CASES = [
    ((4, 5), 1, False),
    ((4, 5), 0, True),
    ((2, 3, 4), (0, 2), False),
    ((2, 3, 4), -1, True),
    ((3, 5), None, True),
    ((2, 3, 4), (), False),
]


@pytest.mark.parametrize(("shape", "axis", "keepdims"), CASES, ids=str)
@pytest.mark.parametrize("name", ["sum", "max", "min"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
def test_reduce(shape, axis, keepdims, name, dtype, check_op, rand):
    a = te.placeholder(shape, dtype, "a")
    x = rand(shape, dtype)
    out = getattr(topi, name)(a, axis=axis, keepdims=keepdims)
    assert out.op.tag == "comm_reduce"
    want = getattr(np, name)(x, axis=axis, keepdims=keepdims).astype(dtype)
    check_op([a, out], [x], want)


def test_full_reduction_without_keepdims_is_0d():
    a = te.placeholder((3, 4), "float32", "a")
    out = topi.sum(a)
    assert out.shape == ()
    assert [iv.dom.extent.value for iv in out.op.reduce_axis] == [3, 4]


def test_reduce_errors():
    a = te.placeholder((3, 4), "float32", "a")
    with pytest.raises(DSLError, match=r"topi.sum: axis 2 is out of range for a 2-D tensor"):
        topi.sum(a, axis=2)
    with pytest.raises(DSLError, match=r"names an axis twice"):
        topi.max(a, axis=(1, -1))
