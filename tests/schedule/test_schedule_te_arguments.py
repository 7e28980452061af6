"""TE stages that are computed at / inlined and are function arguments too.

TVM's "schedule primitives" tutorial lowers ``s[B].compute_at(s[C], ...)`` and
``s[B].compute_inline()`` with B in the argument list. As in TVM, a computed-at argument
is written in place, region by region at its attach point, and an inlined argument is
left unwritten. Where the readers need only part of a computed-at argument (TVM leaves
the rest unwritten) ansor_lab refuses the program instead of returning garbage.

Arrays handed to the built functions start as NaN (or a sentinel), so any element the
program fails to write shows up.
"""

from __future__ import annotations

import numpy as np
import pytest
from schedule_helpers import assert_step_fails

import ansor_lab as tvm
from ansor_lab import te, tir
from ansor_lab.errors import LoweringError

M = 64


def _inputs(*shapes: tuple) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    return [rng.uniform(-1.0, 1.0, sh).astype("float32") for sh in shapes]


def _nan(shape: tuple) -> np.ndarray:
    return np.full(shape, np.nan, dtype="float32")


def _tutorial(m: int = M):
    A = te.placeholder((m,), name="A")
    B = te.compute((m,), lambda i: A[i] + 1.0, name="B")
    C = te.compute((m,), lambda i: B[i] * 2.0, name="C")
    return A, B, C


def test_tutorial_compute_at_writes_the_argument_in_place():
    A, B, C = _tutorial()
    s = te.create_schedule(C.op)
    s[B].compute_at(s[C], C.op.axis[0])
    text = tvm.lower(s, [A, B, C], simple_mode=True).script()
    # one loop: B written in place at the attach point, no temporary for B
    assert text.count("for ") == 1 and "alloc_buffer" not in text, text
    assert "B[i_1] = A[i_1] + T.float32(1.0)" in text
    assert "C[i_1] = B[i_1] * T.float32(2.0)" in text
    (a,) = _inputs((M,))
    b, c = _nan((M,)), _nan((M,))
    tvm.build(s, [A, B, C])(a, b, c)
    np.testing.assert_allclose(b, a + 1.0, rtol=1e-6)
    np.testing.assert_allclose(c, (a + 1.0) * 2.0, rtol=1e-6)


@pytest.mark.parametrize("m", [64, 60])  # 60: the split does not divide, tail guarded
def test_tiled_compute_at_of_an_argument_writes_all_of_it(m):
    A, B, C = _tutorial(m)
    s = te.create_schedule(C.op)
    xo, xi = s[C].split(C.op.axis[0], factor=8)
    s[B].compute_at(s[C], xo)
    text = tvm.lower(s, [A, B, C]).script()
    assert "B[i_0 * 8 + " in text and "alloc_buffer" not in text, text
    (a,) = _inputs((m,))
    b, c = _nan((m,)), _nan((m,))
    tvm.build(s, [A, B, C])(a, b, c)
    np.testing.assert_allclose(b, a + 1.0, rtol=1e-6)
    np.testing.assert_allclose(c, (a + 1.0) * 2.0, rtol=1e-6)


def _stencil(m: int = M):
    A = te.placeholder((m,), name="A")
    B = te.compute((m,), lambda i: A[i] * 3.0, name="B")
    C = te.compute((m - 1,), lambda i: B[i] + B[i + 1], name="C")
    return A, B, C


@pytest.mark.parametrize("parallel", [False, True])
def test_stencil_reads_overlapping_windows_of_the_argument(parallel):
    A, B, C = _stencil()
    s = te.create_schedule(C.op)
    xo, xi = s[C].split(C.op.axis[0], factor=8)
    s[B].compute_at(s[C], xo)
    if parallel:
        s[C].parallel(xo)
    text = tvm.lower(s, [A, B, C]).script()
    assert ("T.parallel(8)" in text) == parallel
    assert "for i in range(9):" in text  # a window of 9 elements of B per tile of 8
    (a,) = _inputs((M,))
    for _ in range(3 if parallel else 1):
        b, c = _nan((M,)), _nan((M - 1,))
        tvm.build(s, [A, B, C], num_threads=2)(a, b, c)
        np.testing.assert_allclose(b, a * 3.0, rtol=1e-6)
        np.testing.assert_allclose(c, a[:-1] * 3.0 + a[1:] * 3.0, rtol=1e-6)


def test_fused_parallel_tiles_of_a_2d_argument():
    n = 24
    A = te.placeholder((n, n), name="A")
    B = te.compute((n, n), lambda i, j: A[i, j] - 0.5, name="B")
    C = te.compute((n, n), lambda i, j: B[i, j] * B[i, j], name="C")
    s = te.create_schedule(C.op)
    xo, yo, xi, yi = s[C].tile(C.op.axis[0], C.op.axis[1], 8, 6)
    f = s[C].fuse(xo, yo)
    s[C].parallel(f)
    s[B].compute_at(s[C], f)
    (a,) = _inputs((n, n))
    b, c = _nan((n, n)), _nan((n, n))
    tvm.build(s, [A, B, C], num_threads=2)(a, b, c)
    np.testing.assert_allclose(b, a - 0.5, rtol=1e-6)
    np.testing.assert_allclose(c, (a - 0.5) ** 2, rtol=1e-5)


def _row_sums(n: int = 16, k: int = 8, stencil: bool = False):
    A = te.placeholder((n, k), name="A")
    r = te.reduce_axis((0, k), name="r")
    B = te.compute((n,), lambda i: te.sum(A[i, r], axis=r), name="B")
    if stencil:
        C = te.compute((n - 1,), lambda i: B[i] + B[i + 1], name="C")
    else:
        C = te.compute((n,), lambda i: B[i] * 2.0, name="C")
    return A, B, C


@pytest.mark.parametrize("stencil", [False, True])
def test_reduction_argument_computed_at(stencil):
    """Disjoint tiles may run in parallel; overlapping ones only one after the other."""
    A, B, C = _row_sums(stencil=stencil)
    s = te.create_schedule(C.op)
    xo, xi = s[C].split(C.op.axis[0], factor=4)
    s[B].compute_at(s[C], xo)
    if not stencil:
        s[C].parallel(xo)
    (a,) = _inputs((16, 8))
    b, c = _nan((16,)), _nan(tuple(C.shape))
    tvm.build(s, [A, B, C], num_threads=2)(a, b, c)
    sums = a.sum(axis=1)
    np.testing.assert_allclose(b, sums, rtol=1e-5)
    expected = sums[:-1] + sums[1:] if stencil else sums * 2.0
    np.testing.assert_allclose(c, expected, rtol=1e-5)


def test_reduction_argument_with_overlapping_parallel_tiles_is_refused():
    A, B, C = _row_sums(stencil=True)
    s = te.create_schedule(C.op)
    xo, xi = s[C].split(C.op.axis[0], factor=4)
    s[B].compute_at(s[C], xo)
    s[C].parallel(xo)
    with pytest.raises(
        LoweringError,
        match=r"stage 'B' is a function argument computed at "
        r"C\.i_0 inside the parallel or thread-bound loop C\.i_0.*"
        r"add into the same element",
    ):
        tvm.lower(s, [A, B, C])
    tvm.lower(s, [A, C])  # B an intermediate: each thread has its own copy


def test_compute_inline_of_an_argument_leaves_it_unwritten():
    """TVM's behaviour: C is computed from A directly; B keeps what the caller passed."""
    A, B, C = _tutorial()
    s = te.create_schedule(C.op)
    s[B].compute_inline()
    text = tvm.lower(s, [A, B, C]).script()
    assert "C[i] = (A[i] + T.float32(1.0)) * T.float32(2.0)" in text
    assert "B[" not in text.split("):", 1)[1], text  # B is never written nor read
    (a,) = _inputs((M,))
    b, c = np.full((M,), 7.0, dtype="float32"), _nan((M,))
    tvm.build(s, [A, B, C])(a, b, c)
    np.testing.assert_allclose(c, (a + 1.0) * 2.0, rtol=1e-6)
    assert (b == 7.0).all()  # untouched: the caller's contents


def test_argument_needed_only_in_part_is_refused():
    """TVM would write B[0:32] and leave B[32:64] unwritten; we refuse the program."""
    A = te.placeholder((M,), name="A")
    B = te.compute((M,), lambda i: A[i] + 1.0, name="B")
    C = te.compute((M // 2,), lambda i: B[i] * 2.0, name="C")
    s = te.create_schedule(C.op)
    xo, xi = s[C].split(C.op.axis[0], factor=8)
    s[B].compute_at(s[C], xo)
    with pytest.raises(
        LoweringError,
        match=r"stage 'B' is a function argument computed at "
        r"C\.i_0, .*B\[32\] would never be written.*compute_root 'B'",
    ):
        tvm.lower(s, [A, B, C])
    tvm.lower(s, [A, C])  # as an intermediate it is fine
    s[B].compute_root()  # the advice works: all of B, then C
    (a,) = _inputs((M,))
    b, c = _nan((M,)), _nan((M // 2,))
    tvm.build(s, [A, B, C])(a, b, c)
    np.testing.assert_allclose(b, a + 1.0, rtol=1e-6)
    np.testing.assert_allclose(c, (a[:32] + 1.0) * 2.0, rtol=1e-6)


def test_strided_reads_cover_the_span_but_not_every_element():
    """C reads B[2i]: the regions span all of B but skip the odd elements."""
    A = te.placeholder((M,), name="A")
    B = te.compute((M,), lambda i: A[i] + 1.0, name="B")
    C = te.compute((M // 2,), lambda i: B[i * 2] * 2.0, name="C")
    s = te.create_schedule(C.op)
    s[B].compute_at(s[C], C.op.axis[0])
    with pytest.raises(LoweringError, match=r"B\[1\] would never be written"):
        tvm.lower(s, [A, B, C])


def test_2d_argument_with_fused_rows_cut_mid_row_is_checked_jointly():
    """A fused loop ties both axes: the check must enumerate them together."""
    n = 6
    A = te.placeholder((n, n), name="A")
    B = te.compute((n, n), lambda i, j: A[i, j] + 1.0, name="B")
    C = te.compute((n, n), lambda i, j: B[i, j] * 2.0, name="C")
    s = te.create_schedule(C.op)
    f = s[C].fuse(*C.op.axis)
    fo, fi = s[C].split(f, factor=4)  # 4 does not divide a row of 6
    s[B].compute_at(s[C], fo)
    (a,) = _inputs((n, n))
    b, c = _nan((n, n)), _nan((n, n))
    tvm.build(s, [A, B, C])(a, b, c)
    np.testing.assert_allclose(b, a + 1.0, rtol=1e-6)
    np.testing.assert_allclose(c, (a + 1.0) * 2.0, rtol=1e-6)


def test_block_style_refuses_both_on_an_output_block_as_tvm_does():
    """TVM TIR: compute_at / compute_inline of a block writing an argument buffer raise
    "The block ... is an output block"; the failing step changes nothing."""
    A, B, C = _tutorial()
    sch = tir.Schedule(te.create_prim_func([A, B, C]))
    b = sch.get_block("B")
    (i,) = sch.get_loops(sch.get_block("C"))
    assert_step_fails(
        sch, lambda: sch.compute_at(b, i), "compute_at: block 'B': is an output of the function"
    )
    assert_step_fails(
        sch,
        lambda: sch.compute_inline(b),
        "compute_inline: block 'B': is an output of the function",
    )
