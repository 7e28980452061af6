"""Lanes a few elements apart (stride-2 pooling windows and convolutions) are read with
one masked load of the span and a shuffle, not a gather; only the lanes' own elements
are enabled, so a guarded or padded access never touches memory it would not read."""

from __future__ import annotations

import numpy as np
import pytest

import ansor_lab as tvm
from ansor_lab import te, tir, topi


def _strided(n: int, stride: int, lanes: int, offset: int = 0):
    A = te.placeholder((n * stride + offset,), name="A")
    B = te.compute((n,), lambda i: A[i * stride + offset] * 2.0, name="B")
    sch = tir.Schedule(te.create_prim_func([A, B]))
    (i,) = sch.get_loops(sch.get_block("B"))
    _, ii = sch.split(i, [None, lanes])
    sch.vectorize(ii)
    return sch


@pytest.mark.parametrize("stride", [2, 3, 4])
def test_small_strides_are_one_span_load_and_a_shuffle(rand, stride):
    f = tvm.build(_strided(64, stride, 8, offset=1).mod, target="llvm")
    ll = f.get_source("ll")
    span = 1 << (8 * stride - 1).bit_length()  # masked accesses are emitted at powers of two
    assert f"llvm.masked.load.v{span}f32" in ll and "masked.gather" not in ll
    assert "strided_loads=1" in f.loop_report()
    a = rand((64 * stride + 1,))
    b = np.empty(64, "float32")
    f(a, b)
    np.testing.assert_array_equal(b, a[1::stride] * np.float32(2.0))


def test_a_masked_tail_reads_only_the_lanes_that_are_on(rand):
    # 100 outputs by 16 lanes: the last vector has 4 lanes on; the span it would read
    # runs past the input's end (200 elements), which the mask keeps it from reading
    f = tvm.build(_strided(100, 2, 16).mod, target="llvm")
    assert "strided_loads=1" in f.loop_report()
    a = rand((200,))
    b = np.empty(100, "float32")
    f(a, b)
    np.testing.assert_array_equal(b, a[::2] * np.float32(2.0))


def test_a_wide_stride_stays_a_gather(rand):
    f = tvm.build(_strided(32, 8, 8).mod, target="llvm")
    assert "gathers=1" in f.loop_report() and "strided" not in f.loop_report()
    a = rand((256,))
    b = np.empty(32, "float32")
    f(a, b)
    np.testing.assert_array_equal(b, a[::8] * np.float32(2.0))


def test_padded_stride_two_max_pool_vectorized_over_a_row(rand):
    x = te.placeholder((1, 3, 20, 20), name="x")
    pool = topi.nn.pool2d(x, (3, 3), (2, 2), (1, 1), (1, 1, 1, 1), "max")
    sch = tir.Schedule(te.create_prim_func([x, pool]))
    sch.compute_inline(sch.get_block("pad_temp"))
    n, c, h, w, r0, r1 = sch.get_loops(sch.get_block(pool.op.name))
    sch.reorder(n, c, h, r0, r1, w)
    sch.vectorize(w)
    f = tvm.build(sch.mod, target="llvm")
    assert "strided_loads" in f.loop_report() and "gathers" not in f.loop_report()
    a = rand((1, 3, 20, 20))
    out = np.empty((1, 3, 10, 10), "float32")
    f(a, out)
    padded = np.pad(a, ((0, 0), (0, 0), (1, 1), (1, 1)), constant_values=-np.inf)
    want = np.full((1, 3, 10, 10), -np.inf, "float32")
    for dy in range(3):
        for dx in range(3):
            want = np.maximum(want, padded[:, :, dy : dy + 20 : 2, dx : dx + 20 : 2])
    np.testing.assert_array_equal(out, want)


def test_a_stride_two_store_stays_a_scatter_beside_a_strided_read(rand):
    # the vector runs down a column of a (32, 2) array: both sides are stride 2; the read
    # is one span load, the write a scatter (a span store would overwrite the elements
    # between the lanes)
    A = te.placeholder((32, 2), name="A")
    B = te.compute((32, 2), lambda i, j: A[i, j] * 3.0, name="B")
    sch = tir.Schedule(te.create_prim_func([A, B]))
    i, j = sch.get_loops(sch.get_block("B"))
    sch.reorder(j, i)
    _, ii = sch.split(i, [None, 8])
    sch.vectorize(ii)
    f = tvm.build(sch.mod, target="llvm")
    assert "scatters=1" in f.loop_report() and "strided_loads=1" in f.loop_report()
    a = rand((32, 2))
    b = np.empty_like(a)
    f(a, b)
    np.testing.assert_array_equal(b, a * np.float32(3.0))
