"""Run-time bound checks of a default build: only for indices that are not linear and
not provably inside their dimension (``MemoryEmitter.check_access``), so a gather or a
modulo that leaves the buffer raises ``KernelBoundsError`` while ordinary kernels, whose
fused and split indices are divisions and modulos of loop variables, carry none."""

from __future__ import annotations

import numpy as np
import pytest

import ansor_lab as tvm
from ansor_lab import te, tir
from ansor_lab.errors import KernelBoundsError
from ansor_lab.ir.bound_check import interval
from ansor_lab.script import tir as T


def _read(index, n: int = 8):
    x = te.placeholder((n,), name="X")
    b = te.compute((8,), lambda i: x[index(i)], name="B")
    return tvm.build(te.create_schedule(b.op), [x, b])


@pytest.mark.parametrize(
    ("index", "want"),
    [
        (lambda i: (i * 5) % 8, lambda i: (i * 5) % 8),
        (lambda i: i // 2 + 4, lambda i: i // 2 + 4),
        (lambda i: te.min(i * 2, 7), lambda i: np.minimum(i * 2, 7)),
        (lambda i: te.if_then_else(i > 3, 7, 0), lambda i: np.where(i > 3, 7, 0)),
        (lambda i: te.max(i - 3, 0), lambda i: np.maximum(i - 3, 0)),
    ],
    ids=["mod", "div", "min", "select", "max"],
)
def test_an_index_proved_inside_its_buffer_is_not_checked(index, want):
    f = _read(index)
    assert f.compiled.bound_checks == ()
    x = np.arange(10, 18, dtype="float32")
    out = np.zeros(8, "float32")
    f(x, out)
    np.testing.assert_array_equal(out, x[want(np.arange(8))])


def test_a_fused_split_vectorized_kernel_carries_no_check():
    a = te.placeholder((6, 10, 12), name="A")
    b = te.compute(a.shape, lambda i, j, k: a[i, j, k] * 2.0, name="B")
    sch = tir.Schedule(te.create_prim_func([a, b]))
    i, j, k = sch.get_loops(sch.get_block("B"))
    fused = sch.fuse(i, j, k)
    outer, inner = sch.split(fused, [None, 16])
    sch.parallel(outer)
    sch.vectorize(inner)
    f = tvm.build(sch.mod, target="llvm")
    assert f.compiled.bound_checks == ()
    x = np.random.default_rng(0).standard_normal((6, 10, 12)).astype("float32")
    out = np.zeros_like(x)
    f(x, out)
    np.testing.assert_array_equal(out, x * 2)


def test_an_index_that_may_leave_is_checked_and_reported():
    f = _read(lambda i: (i * 5) % 9)
    assert len(f.compiled.bound_checks) == 1
    with pytest.raises(KernelBoundsError, match=r"read of X\[i \* 5 % 9\] outside its shape"):
        f(np.zeros(8, "float32"), np.zeros(8, "float32"))
    # a wider buffer holds every value: no check, the right answer
    g = _read(lambda i: (i * 5) % 9, n=9)
    assert g.compiled.bound_checks == ()
    out = np.zeros(8, "float32")
    g(np.arange(9, dtype="float32"), out)
    np.testing.assert_array_equal(out, (np.arange(8) * 5) % 9)


def test_a_block_axis_is_proved_through_its_binding():
    @T.prim_func
    def main(A: T.Buffer((8,), "float32"), B: T.Buffer((16,), "float32")):
        for i in range(16):
            with T.block("B"):
                vi = T.axis.spatial(16, i)
                B[vi] = A[vi % 8]

    f = tvm.build(main, target="llvm")
    assert f.compiled.bound_checks == ()
    out = np.zeros(16, "float32")
    f(np.arange(8, dtype="float32"), out)
    np.testing.assert_array_equal(out, np.arange(16) % 8)


def test_interval_bounds():
    i, j = te.var("i"), te.var("j")
    ranges = {i: (0, 9), j: (-3, 3)}
    assert interval(te.floormod(i, 4), ranges) == (0, 3)
    assert interval(te.floormod(i, 16), ranges) == (0, 9)
    assert interval(te.floordiv(j, 2), ranges) == (-2, 1)
    assert interval(te.truncdiv(j, 2), ranges) == (-1, 1)
    assert interval(te.truncmod(j, 2), ranges) == (-1, 1)
    assert interval(i * j, ranges) == (-27, 27)
    assert interval(i - j, ranges) == (-3, 12)
    assert interval(te.min(i, 5), ranges) == (0, 5)
    assert interval(te.max(j, 0), ranges) == (0, 3)
    assert interval(tir.Select(i > 3, tir.const(7), j), ranges) == (-3, 7)
    assert interval(te.floordiv(i, j), ranges) is None  # a divisor that varies
    assert interval(te.var("k"), ranges) is None  # no range known
