"""matmul, dense and batch_matmul against the numpy references."""

import numpy as np
import pytest

from ansor_lab import te, topi
from ansor_lab.errors import DSLError
from ansor_lab.topi import testing

MNK = [(4, 5, 6), (1, 7, 3), (9, 2, 11), (16, 16, 16)]


@pytest.mark.parametrize(("m", "n", "k"), MNK, ids=str)
@pytest.mark.parametrize("transpose_a", [False, True])
@pytest.mark.parametrize("transpose_b", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
def test_matmul(m, n, k, transpose_a, transpose_b, dtype, check_op, rand):
    a_shape = (k, m) if transpose_a else (m, k)
    b_shape = (n, k) if transpose_b else (k, n)
    a = te.placeholder(a_shape, dtype, "A")
    b = te.placeholder(b_shape, dtype, "B")
    out = topi.nn.matmul(a, b, transpose_a=transpose_a, transpose_b=transpose_b)
    assert out.op.name == f"T_matmul_{'T' if transpose_a else 'N'}{'T' if transpose_b else 'N'}"
    assert out.op.tag == "matmul"
    x, y = rand(a_shape, dtype), rand(b_shape, dtype)
    want = testing.matmul(x, y, transpose_a=transpose_a, transpose_b=transpose_b)
    check_op([a, b, out], [x, y], want)


@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_matmul_bias(dtype, check_op, rand):
    a = te.placeholder((5, 3), dtype, "A")
    b = te.placeholder((3, 7), dtype, "B")
    c = te.placeholder((7,), dtype, "bias")
    out = topi.nn.matmul(a, b, bias=c)
    assert out.op.tag == "broadcast"
    x, y, z = rand((5, 3), dtype), rand((3, 7), dtype), rand((7,), dtype)
    check_op([a, b, c, out], [x, y, z], testing.matmul(x, y, z))


def test_matmul_out_dtype(check_op, rand):
    a = te.placeholder((6, 8), "int8", "A")
    b = te.placeholder((8, 3), "int8", "B")
    out = topi.nn.matmul(a, b, out_dtype="int32")
    assert out.dtype == "int32"
    x = rand((6, 8), "int8", -100, 100)
    y = rand((8, 3), "int8", -100, 100)
    want = testing.matmul(x, y, out_dtype="int32")
    assert np.abs(want).max() > 127  # the int32 accumulator matters here
    check_op([a, b, out], [x, y], want)


@pytest.mark.parametrize(("batch", "n_in", "n_out"), [(4, 5, 3), (1, 16, 10), (7, 1, 2)], ids=str)
@pytest.mark.parametrize("with_bias", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_dense(batch, n_in, n_out, with_bias, dtype, check_op, rand):
    data = te.placeholder((batch, n_in), dtype, "data")
    weight = te.placeholder((n_out, n_in), dtype, "weight")
    x, w = rand((batch, n_in), dtype), rand((n_out, n_in), dtype)
    args, arrays, bias_np = [data, weight], [x, w], None
    bias = None
    if with_bias:
        bias = te.placeholder((n_out,), dtype, "bias")
        bias_np = rand((n_out,), dtype)
        args, arrays = args + [bias], arrays + [bias_np]
    out = topi.nn.dense(data, weight, bias)
    check_op(args + [out], arrays, testing.dense(x, w, bias_np))


@pytest.mark.parametrize(
    ("xb", "yb", "m", "n", "k"), [(2, 2, 3, 4, 5), (3, 1, 2, 5, 7), (1, 4, 6, 1, 3)], ids=str
)
@pytest.mark.parametrize(("trans_a", "trans_b"), [(False, True), (False, False), (True, True)])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
def test_batch_matmul(xb, yb, m, n, k, trans_a, trans_b, dtype, check_op, rand):
    x_shape = (xb, k, m) if trans_a else (xb, m, k)
    y_shape = (yb, n, k) if trans_b else (yb, k, n)
    x = te.placeholder(x_shape, dtype, "x")
    y = te.placeholder(y_shape, dtype, "y")
    out = topi.nn.batch_matmul(x, y, transpose_a=trans_a, transpose_b=trans_b)
    assert out.shape == (max(xb, yb), m, n)
    xa, ya = rand(x_shape, dtype), rand(y_shape, dtype)
    want = testing.batch_matmul(
        np.broadcast_to(xa, (max(xb, yb),) + x_shape[1:]),
        np.broadcast_to(ya, (max(xb, yb),) + y_shape[1:]),
        trans_x=trans_a,
        trans_y=trans_b,
    )
    check_op([x, y, out], [xa, ya], want)


def test_batch_matmul_default_is_nt(check_op, rand):
    x = te.placeholder((2, 3, 4), "float32", "x")
    y = te.placeholder((2, 5, 4), "float32", "y")
    out = topi.nn.batch_matmul(x, y)
    assert out.op.name == "T_batch_matmul_NT"
    xa, ya = rand((2, 3, 4)), rand((2, 5, 4))
    check_op(
        [x, y, out], [xa, ya], (xa.astype("float64") @ ya.transpose(0, 2, 1)).astype("float32")
    )


def test_matmul_errors():
    a = te.placeholder((4, 5), "float32", "A")
    b = te.placeholder((6, 3), "float32", "B")
    c = te.placeholder((5, 3), "float64", "C")
    with pytest.raises(DSLError, match=r"gives K=5 but B \(6, 3\) gives K=6"):
        topi.nn.matmul(a, b)
    with pytest.raises(DSLError, match="operands are float32 and float64; pass out_dtype="):
        topi.nn.matmul(a, c)
    with pytest.raises(DSLError, match=r"topi.nn.matmul: A must be 2-D, got 3-D"):
        topi.nn.matmul(te.placeholder((2, 4, 5), "float32", "A3"), c)
    good = te.placeholder((5, 3), "float32", "B2")
    with pytest.raises(DSLError, match=r"bias has 4 entries but the output has 3 columns"):
        topi.nn.matmul(a, good, bias=te.placeholder((4,), "float32", "bias"))


def test_dense_errors():
    data = te.placeholder((4, 5), "float32", "data")
    with pytest.raises(
        DSLError, match=r"weight must be \[out_dim, 5\] \(TVM layout, not \[in, out\]\)"
    ):
        topi.nn.dense(data, te.placeholder((5, 3), "float32", "w"))
    with pytest.raises(DSLError, match=r"data \[batch, in_dim\] must be 2-D"):
        topi.nn.dense(te.placeholder((5,), "float32", "v"), data)


def test_batch_matmul_errors():
    x = te.placeholder((2, 3, 4), "float32", "x")
    with pytest.raises(DSLError, match="batch sizes 2 and 3 differ"):
        topi.nn.batch_matmul(x, te.placeholder((3, 5, 4), "float32", "y"))
    with pytest.raises(
        DSLError, match=r"with the default transpose_b=True, y must be \[batch, N, K\]"
    ):
        topi.nn.batch_matmul(x, te.placeholder((2, 4, 5), "float32", "y"))
