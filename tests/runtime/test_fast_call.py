"""The native call of a kernel (``runtime.fast_call``): taken for exactly the arrays the
Python path passes as is, never for one it would refuse, and the same results."""

import numpy as np
import pytest

import ansor_lab as tvm
from ansor_lab import te
from ansor_lab.errors import KernelDivisionByZeroError, RuntimeArgumentError
from ansor_lab.runtime import fast_call as fc
from ansor_lab.runtime.module import Module


def _axpy():
    """C = A * 2 + B over (4, 6) float32; A, B read, C written."""
    A = te.placeholder((4, 6), name="A")
    B = te.placeholder((4, 6), name="B")
    C = te.compute((4, 6), lambda i, j: A[i, j] * 2.0 + B[i, j], name="C")
    return tvm.build(te.create_schedule(C.op), [A, B, C], target="llvm")


def _refuse_python_path(monkeypatch):
    def refused(self, args):
        raise AssertionError("the Python path ran")

    monkeypatch.setattr(Module, "_pointers", refused)


def test_the_array_layout_is_found_on_cpython():
    assert fc.LAYOUT == fc.Layout(data=16, nd=24, dims=32, strides=40, descr=56, flags=64)


def test_plain_arrays_and_ndarrays_take_the_native_call(monkeypatch):
    f = _axpy()
    a = np.arange(24, dtype="float32").reshape(4, 6)
    b = np.full((4, 6), 0.5, "float32")
    c = np.zeros((4, 6), "float32")
    _refuse_python_path(monkeypatch)
    f(a, b, c)
    np.testing.assert_array_equal(c, a * 2 + b)
    nd = [tvm.nd.array(x) for x in (b, a, np.zeros((4, 6), "float32"))]
    f(*nd)
    np.testing.assert_array_equal(nd[2].numpy(), b * 2 + a)


def test_views_that_start_inside_their_buffer_are_read_at_their_offset(monkeypatch):
    f = _axpy()
    big = np.arange(100, dtype="float32")
    out = np.zeros(100, "float32")
    _refuse_python_path(monkeypatch)
    f(big[3:27].reshape(4, 6), big[50:74].reshape(4, 6), out[10:34].reshape(4, 6))
    np.testing.assert_array_equal(out[10:34], big[3:27] * 2 + big[50:74])
    assert not out[:10].any() and not out[34:].any()


def test_the_kernels_own_error_code_comes_through_the_native_call(monkeypatch):
    a = te.placeholder((4,), name="a", dtype="int32")
    b = te.placeholder((4,), name="b", dtype="int32")
    q = te.compute((4,), lambda i: a[i] // b[i], name="q")
    f = tvm.build(te.create_schedule(q.op), [a, b, q], target="llvm")
    _refuse_python_path(monkeypatch)
    with pytest.raises(KernelDivisionByZeroError, match="division or modulo by zero"):
        f(np.ones(4, "int32"), np.array([1, 0, 1, 1], "int32"), np.zeros(4, "int32"))


def _python_passes_as_is(f, args):
    """What ``Module._pointers`` accepts without its slow checks (the native call's
    contract: it may refuse more, never less)."""
    ptr = []
    for arg, spec in zip(args, f._specs):
        if type(arg) is not np.ndarray:
            return False
        if arg.shape != spec[1] or arg.strides != spec[4] or arg.dtype != spec[2]:
            return False
        if spec[3] and not arg.flags.writeable:
            return False
        ptr.append((arg.ctypes.data, spec[5], spec[3]))
    for i in range(len(ptr)):
        for j in range(i + 1, len(ptr)):
            (p, n, w), (q, m, v) = ptr[i], ptr[j]
            if (w or v) and p < q + m and q < p + n:
                return False
    return True


def _candidates(rng, pool):
    """A (4, 6) float32 argument, or one of the ways an argument differs."""
    kind = rng.integers(0, 18)
    if kind >= 9:
        return np.zeros((4, 6), "float32")
    if kind == 0:
        return pool[rng.integers(0, len(pool))]  # maybe the same array twice
    if kind == 1:
        return np.zeros((6, 4), "float32").T  # transposed
    if kind == 2:
        return np.zeros((4, 12), "float32")[:, ::2]  # strided
    if kind == 3:
        return np.zeros((4, 6), "float64")
    if kind == 4:
        return np.zeros((4, 6), ">f4")  # byte-swapped
    if kind == 5:
        x = np.zeros((4, 6), "float32")
        x.flags.writeable = False
        return x
    if kind == 6:
        return np.zeros((4, 6), "float32").view(np.recarray)  # a subclass
    if kind == 7:
        buf = pool[rng.integers(0, len(pool))].reshape(-1)
        return buf.base[1:25].reshape(4, 6) if buf.base is not None and buf.base.size > 24 else buf
    return np.zeros((2, 12), "float32")


def test_the_native_call_runs_only_what_the_python_path_passes_as_is():
    f = _axpy()
    call = f._make_fast()
    rng = np.random.default_rng(0)
    taken = refused = 0
    for _ in range(400):
        pool = [np.arange(48, dtype="float32")[:24].reshape(4, 6) for _ in range(2)]
        args = [_candidates(rng, pool) for _ in range(3)]
        rc = call(*args)
        if rc == fc.NOT_FAST:
            refused += 1
            continue
        assert _python_passes_as_is(f, args), [a.__array_interface__ for a in args]
        assert rc == 0
        taken += 1
    assert taken >= 10 and refused >= 100  # both sides were exercised


def test_what_the_native_call_refuses_gets_the_python_paths_answer():
    f = _axpy()
    a = np.ones((4, 6), "float32")
    c = np.zeros((4, 6), "float32")
    with pytest.raises(RuntimeArgumentError, match=r"argument 'A' has shape \(6, 4\)"):
        f(np.ones((6, 4), "float32"), a, c)
    with pytest.raises(RuntimeArgumentError, match=r"arguments 'A' and 'C' share memory"):
        f(c, a, c)
    with pytest.raises(RuntimeArgumentError, match=r"takes 3 arrays \(A, B, C\), got 2"):
        f(a, c)
    with pytest.raises(RuntimeArgumentError, match="numpy arrays or ansor_lab.nd arrays"):
        f([[1.0] * 6] * 4, a, c)
    # C-contiguous with another stride on an extent-1 axis: accepted by the Python path
    one = te.placeholder((1, 6), name="X")
    twice = te.compute((1, 6), lambda i, j: one[i, j] * 2.0, name="Y")
    g = tvm.build(te.create_schedule(twice.op), [one, twice], target="llvm")
    x = np.arange(12, dtype="float32").reshape(2, 6)[:1]
    x2 = np.lib.stride_tricks.as_strided(x, strides=(999 * 4, 4))
    y = np.zeros((1, 6), "float32")
    assert g._make_fast()(x2, y) == fc.NOT_FAST
    g(x2, y)
    np.testing.assert_array_equal(y, x * 2)


def test_zero_dim_and_many_parameters():
    xs = [te.placeholder((), name=f"x{k}") for k in range(5)]
    s = te.compute((), lambda: xs[0]() + xs[1]() * xs[2]() - xs[3]() + xs[4](), name="s")
    f = tvm.build(te.create_schedule(s.op), [*xs, s], target="llvm")
    vals = [np.array(v, "float32") for v in (1.0, 2.0, 3.0, 4.0, 5.0)]
    out = np.zeros((), "float32")
    assert f._make_fast()(*vals, out) == 0
    assert float(out) == 1 + 2 * 3 - 4 + 5


def test_without_a_known_layout_the_python_path_runs(monkeypatch):
    monkeypatch.setattr(fc, "LAYOUT", None)
    f = _axpy()
    a = np.ones((4, 6), "float32")
    c = np.zeros((4, 6), "float32")
    f(a, a, c)
    assert f._fast is None
    np.testing.assert_array_equal(c, 3 * a)


def test_calls_leave_reference_counts_and_the_keep_table_as_they_were():
    import gc  # noqa: PLC0415
    import sys  # noqa: PLC0415

    f = _axpy()
    a = np.ones((4, 6), "float32")
    c = np.zeros((4, 6), "float32")
    call = f._make_fast()
    before = sys.getrefcount(a), sys.getrefcount(c)
    for _ in range(1000):
        assert call(a, a, c) == 0
    assert (sys.getrefcount(a), sys.getrefcount(c)) == before
    assert call(a, c) == fc.NOT_FAST  # the wrong number of arrays: the Python path's error
    key = id(call)
    assert key in fc._KEEP
    del f, call
    gc.collect()
    assert key not in fc._KEEP
