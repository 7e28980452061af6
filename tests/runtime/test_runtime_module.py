"""Built modules: argument checking, NDArrays, the timer and the sources."""

from __future__ import annotations

import numpy as np
import pytest

import ansor_lab as tvm
from ansor_lab import te
from ansor_lab.errors import LoweringError, RuntimeArgumentError


@pytest.fixture(scope="module")
def add_one():
    A = te.placeholder((3, 4), "float32", name="A")
    B = te.compute((3, 4), lambda i, j: A[i, j] + 1.0, name="B")
    return tvm.build(te.create_schedule(B.op), [A, B], target="llvm")


@pytest.fixture(scope="module")
def two_outputs():
    A = te.placeholder((4,), "int32", name="A")
    B = te.compute((4,), lambda i: A[i] * 2, name="B")
    C = te.compute((4,), lambda i: A[i] + 7, name="C")
    return tvm.build(te.create_schedule([B.op, C.op]), [A, B, C], target="llvm")


def test_call_with_numpy_arrays(add_one):
    a = np.arange(12, dtype="float32").reshape(3, 4)
    b = np.zeros((3, 4), "float32")
    assert add_one(a, b) is None
    np.testing.assert_array_equal(b, a + 1)


def test_call_with_nd_arrays(add_one):
    dev = tvm.cpu(0)
    a = tvm.nd.array(np.arange(12, dtype="float32").reshape(3, 4), dev)
    b = tvm.nd.empty((3, 4), "float32", dev)
    add_one(a, b)
    out = b.numpy()
    assert isinstance(out, np.ndarray) and out.dtype == np.float32
    np.testing.assert_array_equal(out, a.numpy() + 1)
    assert b.asnumpy().tolist() == out.tolist()
    assert (a.shape, a.dtype, str(a.device)) == ((3, 4), "float32", "cpu(0)")
    # nd.array copies: changing the source later does not change the NDArray
    src = np.ones(3, "float32")
    arr = tvm.nd.array(src)
    src[:] = 5
    assert arr.numpy().tolist() == [1, 1, 1]
    # numpy() returns a copy, too
    arr.numpy()[0] = 9
    assert arr.numpy()[0] == 1


def test_nd_array_rejects_unsupported_dtypes():
    with pytest.raises(RuntimeArgumentError, match="dtype uint16 is not supported; use one of"):
        tvm.nd.array(np.zeros(3, "uint16"))


def test_wrong_argument_count(add_one):
    with pytest.raises(RuntimeArgumentError, match=r"main takes 2 arrays \(A, B\), got 1"):
        add_one(np.zeros((3, 4), "float32"))
    with pytest.raises(RuntimeArgumentError, match=r"main takes 2 arrays \(A, B\), got 3"):
        add_one(*[np.zeros((3, 4), "float32")] * 3)


def test_wrong_shape(add_one):
    with pytest.raises(
        RuntimeArgumentError, match=r"argument 'B' has shape \(4, 3\), expected \(3, 4\)"
    ):
        add_one(np.zeros((3, 4), "float32"), np.zeros((4, 3), "float32"))


def test_wrong_dtype(add_one):
    with pytest.raises(
        RuntimeArgumentError,
        match=r"argument 'A' has dtype float64, expected float32; convert it with "
        r"\.astype\('float32'\)",
    ):
        add_one(np.zeros((3, 4)), np.zeros((3, 4), "float32"))


def test_non_contiguous(add_one):
    a = np.zeros((4, 3), "float32").T  # a transposed view
    with pytest.raises(
        RuntimeArgumentError,
        match=r"argument 'A' is not C-contiguous .*np.ascontiguousarray\(x\)",
    ):
        add_one(a, np.zeros((3, 4), "float32"))
    add_one(np.ascontiguousarray(a), np.zeros((3, 4), "float32"))  # the suggested fix


def test_contiguous_arrays_with_other_strides_are_accepted():
    # the call's quick check compares strides with C's; numpy leaves a dimension of
    # extent 1 any stride, so a C-contiguous array may have others: it passes the full
    # check and runs. Arrays that are not contiguous are still refused.
    A = te.placeholder((1, 4), name="A")
    B = te.compute((1, 4), lambda i, j: A[i, j] * 2.0, name="B")
    double = tvm.build(te.create_schedule(B.op), [A, B], "llvm")
    grid = np.arange(16, dtype="float32").reshape(4, 4)
    row = grid[2::4]  # row 2, shape (1, 4), stride 64 bytes over its extent-1 axis
    assert row.strides == (64, 4) and row.flags.c_contiguous
    out = np.zeros((1, 4), "float32")
    double(row, out)
    assert out.tolist() == [[16.0, 18.0, 20.0, 22.0]]
    column = grid[:1, ::2]  # shape (1, 2) read as every other element: refused
    with pytest.raises(RuntimeArgumentError, match=r"argument 'A' has shape \(1, 2\)"):
        double(column, out)
    spaced = np.lib.stride_tricks.as_strided(grid, (1, 4), (64, 8))
    with pytest.raises(RuntimeArgumentError, match=r"argument 'A' is not C-contiguous"):
        double(spaced, out)
    with pytest.raises(RuntimeArgumentError, match=r"argument 'A' is big-endian"):
        double(row.astype(">f4"), out)


def test_read_only_output(add_one):
    b = np.zeros((3, 4), "float32")
    b.flags.writeable = False
    with pytest.raises(RuntimeArgumentError, match=r"output argument 'B' is read-only"):
        add_one(np.zeros((3, 4), "float32"), b)
    a = np.zeros((3, 4), "float32")
    a.flags.writeable = False  # a read-only input is fine
    out = np.zeros((3, 4), "float32")
    add_one(a, out)
    assert out.tolist() == [[1.0] * 4] * 3


def test_aliasing_arguments(add_one, two_outputs):
    a = np.zeros((3, 4), "float32")
    with pytest.raises(
        RuntimeArgumentError,
        match=r"arguments 'A' and 'B' share memory; the kernel assumes distinct buffers",
    ):
        add_one(a, a)
    x = np.arange(4, dtype="int32")
    out = np.zeros(8, "int32")
    with pytest.raises(RuntimeArgumentError, match=r"arguments 'B' and 'C' share memory"):
        two_outputs(x, out[:4], out[:4])
    with pytest.raises(RuntimeArgumentError, match=r"arguments 'B' and 'C' share memory"):
        two_outputs(x, out[2:6], out[:4])  # partly overlapping, in either order
    # disjoint halves of one array are fine
    two_outputs(x, out[:4], out[4:])
    assert out.tolist() == [0, 2, 4, 6, 7, 8, 9, 10]


def test_non_array_argument(add_one):
    with pytest.raises(RuntimeArgumentError, match="kernel arguments are numpy arrays or "):
        add_one([[0.0] * 4] * 3, np.zeros((3, 4), "float32"))


def test_time_evaluator(add_one):
    a = np.ones((3, 4), "float32")
    b = np.zeros((3, 4), "float32")
    timer = add_one.time_evaluator(
        add_one.entry_name, tvm.cpu(), number=3, repeat=2, min_repeat_ms=5
    )
    result = timer(a, b)
    assert len(result.results) == 2
    assert all(t > 0 for t in result.results)
    assert result.mean > 0 and result.median > 0
    assert min(result.results) <= result.mean <= max(result.results)
    # each repeat lasted at least min_repeat_ms, so the per-run time is well below it
    assert result.mean < 5e-3
    assert "mean (ms)" in str(result)
    np.testing.assert_array_equal(b, a + 1)  # the kernel really ran


def test_time_evaluator_defaults_and_errors(add_one):
    a, b = np.ones((3, 4), "float32"), np.zeros((3, 4), "float32")
    result = add_one.time_evaluator()(a, b)
    assert len(result.results) == 1 and result.results[0] > 0
    with pytest.raises(
        RuntimeArgumentError, match="module has no function 'nope'; its function is 'main'"
    ):
        add_one.time_evaluator("nope")
    with pytest.raises(RuntimeArgumentError, match="number and repeat must be at least 1"):
        add_one.time_evaluator(number=0)
    with pytest.raises(RuntimeArgumentError, match=r"argument 'A' has shape"):
        add_one.time_evaluator(number=1)(np.ones(3, "float32"), b)


def test_get_source(add_one):
    ll = add_one.get_source("ll")
    assert "define" in ll and add_one.entry_name in ll
    asm = add_one.get_source("asm")
    assert asm.strip() and add_one.entry_name in asm
    assert add_one.get_source("tir").startswith("@T.prim_func")
    with pytest.raises(RuntimeArgumentError, match="unknown source format 'cuda'"):
        add_one.get_source("cuda")


def test_get_function_and_entry_name(add_one):
    assert add_one.entry_name == "main"
    assert add_one["main"] is add_one
    with pytest.raises(RuntimeArgumentError, match="module has no function 'other'"):
        add_one.get_function("other")


def test_lower_and_build_need_args():
    A = te.placeholder((2,), name="A")
    B = te.compute((2,), lambda i: A[i] * 2.0, name="B")
    s = te.create_schedule(B.op)
    with pytest.raises(
        LoweringError, match=r"needs the argument list: tvm.lower\(s, \[A, B, C\]\)"
    ):
        tvm.lower(s)
    mod = tvm.lower(s, [A, B])
    assert mod.get_global_vars() == ["main"]
    assert "B[i] = A[i] * T.float32(2.0)" in str(mod)
    # a PrimFunc from te.create_prim_func builds too, without args
    f = tvm.build(te.create_prim_func([A, B]), target="llvm")
    out = np.zeros(2, "float32")
    f(np.array([1.5, -2.0], "float32"), out)
    assert out.tolist() == [3.0, -4.0]


def test_placeholder_missing_from_args():
    A = te.placeholder((2,), name="A")
    B = te.compute((2,), lambda i: A[i] * 2.0, name="B")
    with pytest.raises(
        LoweringError, match="placeholder 'A' is read but is not in the argument list"
    ):
        tvm.build(te.create_schedule(B.op), [B])
