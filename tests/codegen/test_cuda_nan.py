"""NaN through CUDA max / min: numpy's answers on the GPU and on the GPU emulator.

CUDA's ``fmaxf`` returns the other operand where one is NaN; numpy's ``maximum`` / ``max``
and the CPU backend return NaN, and ``argmax`` answers the first NaN. The CUDA source
calls ``fmax_nan_`` / ``fmin_nan_`` instead. A row max, a row min, a ReLU and an argmax
over rows of 1000 (chunked: each chunk's max, the first chunk holding the row's, a rescan)
with NaNs placed in them, built for CUDA with one thread per row, are compared with numpy
on the emulator here and on a GPU where there is one.
"""

from __future__ import annotations

import numpy as np
import pytest
from workloads import needs_gpu

import ansor_lab as tvm
from ansor_lab import te, topi

ROWS, COLS = 6, 1000


def _build():
    x = te.placeholder((ROWS, COLS), name="x")
    outs = [
        topi.max(x, axis=1),
        topi.min(x, axis=1),
        topi.nn.relu(x),
        topi.argmax(x, axis=1),
        topi.argmin(x, axis=1),
    ]
    s = te.create_schedule([o.op for o in outs])
    for st in s.stages:  # a thread per row; the ReLU's elements in blocks of 128
        axes = st.op.axis
        if len(axes) == 1:
            st.bind(axes[0], te.thread_axis("threadIdx.x"))
            continue
        bx, tx = st.split(st.fuse(*axes), factor=128)
        st.bind(bx, te.thread_axis("blockIdx.x"))
        st.bind(tx, te.thread_axis("threadIdx.x"))
    return tvm.build(s, [x, *outs], target="cuda")


def _data():
    x = np.random.default_rng(0).uniform(-1, 1, (ROWS, COLS)).astype("float32")
    x[1, 700] = np.nan  # after the row's maximum and minimum (placed below)
    x[1, 10], x[1, 20] = 5.0, -5.0
    x[2, [0, 999]] = np.nan  # first and last
    x[3, 640] = np.nan  # the first element of a chunk
    x[4] = np.nan  # all NaN
    return x


def _check(mod, run):
    x = _data()
    outs = [
        np.full(ROWS, 7.0, "float32"),
        np.full(ROWS, 7.0, "float32"),
        np.full((ROWS, COLS), 7.0, "float32"),
        np.full(ROWS, -3, "int32"),
        np.full(ROWS, -3, "int32"),
    ]
    run(mod, x, *outs)
    np.testing.assert_array_equal(outs[0], np.max(x, axis=1))
    np.testing.assert_array_equal(outs[1], np.min(x, axis=1))
    np.testing.assert_array_equal(outs[2], np.maximum(x, 0))
    np.testing.assert_array_equal(outs[3], np.argmax(x, axis=1))
    np.testing.assert_array_equal(outs[4], np.argmin(x, axis=1))
    assert list(outs[3][1:5]) == [700, 0, 640, 0], "the rows no longer test what they say"


def test_the_cuda_source_propagates_nan_through_max_and_min():
    mod = _build()
    src = mod.get_source()
    assert "fmax_nan_<float>(" in src and "fmin_nan_<float>(" in src
    assert "fmaxf(" not in src and "fminf(" not in src
    assert "T fmax_nan_(T a, T b)" in src  # the helper is defined in the source
    assert mod.compile(arch="sm_80").ptx  # and the compiler takes it


def test_nan_through_max_min_relu_argmax_on_the_emulator():
    _check(_build(), lambda mod, *arrays: mod.emulate(*arrays))


@needs_gpu
def test_nan_through_max_min_relu_argmax_on_the_gpu():
    _check(_build(), lambda mod, *arrays: mod(*arrays))


@pytest.mark.parametrize("dtype", ["float64", "float16"])
def test_nan_max_of_other_float_types_on_the_emulator(dtype):
    x = te.placeholder((4, 64), dtype, name="x")
    m = topi.max(x, axis=1)
    s = te.create_schedule(m.op)
    s[m].bind(m.op.axis[0], te.thread_axis("threadIdx.x"))
    mod = tvm.build(s, [x, m], target="cuda")
    helper = "fmax_nan_<double>(" if dtype == "float64" else "fmax_nan_<float>(__half2float("
    assert helper in mod.get_source()
    a = np.random.default_rng(1).uniform(-1, 1, (4, 64)).astype(dtype)
    a[2, 33] = np.nan
    out = np.zeros(4, dtype)
    mod.emulate(a, out)
    np.testing.assert_array_equal(out, np.max(a, axis=1))
