"""A register tile stays in registers across short reduction loops that are not unrolled.

A depthwise convolution's tile (7 rows x one vector of a row) runs inside its 3x3 window
loops, which the auto-unroll budget leaves as loops; LLVM unrolls them itself, and keeps
the 7 accumulators in registers only when it can tell their addresses apart. Emitted as a
sum per dimension (``sext(i*7 + 1) * 28``) each accumulator had its own variable part,
and LLVM stored and reloaded every one around each multiply-add: 2.7x slower than the same
program with the window unrolled by the schedule."""

from __future__ import annotations

import re

import numpy as np
import pytest

import ansor_lab as tvm
from ansor_lab import te, tir, topi
from ansor_lab.codegen.access import vector_chunks


def _pieces(lanes: int) -> list[int]:
    """The widths codegen cuts a row of ``lanes`` floats into on this host."""
    return [n for _, n in vector_chunks(lanes, tvm.target.Target("llvm").vector_bytes // 4)]


def _depthwise(unroll_budget: int):
    data = te.placeholder((1, 8, 28, 28), name="data")
    kernel = te.placeholder((8, 1, 3, 3), name="kernel")
    out = topi.nn.depthwise_conv2d_nchw(data, kernel, 1, 1, 1)
    sch = tir.Schedule(te.create_prim_func([data, kernel, out]))
    n, c, i, j, di, dj = sch.get_loops(sch.get_block(out.op.name))
    i0, i2, i3 = sch.split(i, [2, 2, 7])
    j0, j3 = sch.split(j, [2, 14])
    sch.reorder(n, c, i0, j0, i2, di, dj, i3, j3)
    sch.compute_at(sch.get_block("PaddedInput"), i2)  # the padded rows, per tile
    sch.vectorize(j3)
    sch.vectorize(sch.get_loops(sch.get_block("PaddedInput"))[-1])
    sch.annotate(n, "pragma_auto_unroll_max_step", unroll_budget)
    return tvm.build(sch.mod, target="llvm -num-cores=1")


@pytest.mark.parametrize("budget", [16, 32, 512])
def test_accumulators_are_not_stored_at_every_step(budget, rand):
    # budget 16 unrolls the 7 rows only, 32 the rows and dj, 512 everything
    f = _depthwise(budget)
    # the accumulators are rows of 14 lanes (one vector on AVX-512, 8 + 6 on AVX2: its
    # last piece counted); the padded rows copied per tile are 16 wide (14 + 2 halo) and
    # are stored once each, however LLVM unrolls the loops around them
    last = _pieces(14)[-1]
    stores = len(re.findall(rf"store <{last} x float>", f.get_source("ll")))
    # in memory, the 7 accumulators take a store per step of the 9-step window: >= 63
    assert 0 < stores < 7 * 9, stores
    a, w = rand((1, 8, 28, 28)), rand((8, 1, 3, 3))
    out = np.zeros((1, 8, 28, 28), "float32")
    f(a, w, out)
    want = topi.testing.depthwise_conv2d_python_nchw(a, w, 1, 1)
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)


def _depthwise_padded_inline(lanes: int):
    """Rows of ``lanes`` read through the padding's guard (the padding inlined): the
    tile's zeroing has no branch, its multiply-add has one."""
    data = te.placeholder((1, 8, 28, 28), name="data")
    kernel = te.placeholder((8, 1, 3, 3), name="kernel")
    out = topi.nn.depthwise_conv2d_nchw(data, kernel, 1, 1, 1)
    sch = tir.Schedule(te.create_prim_func([data, kernel, out]))
    sch.compute_inline(sch.get_block("PaddedInput"))
    n, c, i, j, di, dj = sch.get_loops(sch.get_block(out.op.name))
    i0, i3 = sch.split(i, [None, 2])
    j0, j3 = sch.split(j, [None, lanes])
    sch.reorder(n, c, i0, j0, di, dj, i3, j3)
    sch.vectorize(j3)
    sch.annotate(n, "pragma_auto_unroll_max_step", 512)
    return tvm.build(sch.mod, target="llvm -num-cores=1")


@pytest.mark.parametrize("lanes", [14, 28])
def test_guarded_and_plain_statements_cut_a_row_alike(lanes, rand):
    """A row is cut into pieces by its width and the target alone (14: one vector, 28:
    16 + 12 on AVX-512; 8 + 6 and 16 + 8 + 4 on AVX2). Cut by whether the statement has a
    branch, the zeroing wrote one 14-lane vector and the
    guarded multiply-add read 8 + 4 + 2 lanes of it: LLVM could not forward the store to
    the narrower loads and kept the 2 accumulators in memory, a store per piece and step."""
    f = _depthwise_padded_inline(lanes)
    report = f.loop_report()
    assert f"SIMD x{lanes}" in report
    pieces = _pieces(lanes)
    assert ("chunks=" + "+".join(map(str, pieces)) in report) == (len(pieces) > 1), report
    # the schedule unrolls all but the channel loop: a channel's 28 x 28 outputs are 28
    # rows of 28 // lanes rows of pieces, each stored once when the accumulators stay in
    # registers (56 on AVX-512; cut by branches, 14 lanes took 197 stores)
    stores = len(re.findall(r"store <\d+ x float>", f.get_source("ll")))
    assert 0 < stores <= 28 * (28 // lanes) * len(pieces) + 8, stores
    a, w = rand((1, 8, 28, 28)), rand((8, 1, 3, 3))
    out = np.zeros((1, 8, 28, 28), "float32")
    f(a, w, out)
    want = topi.testing.depthwise_conv2d_python_nchw(a, w, 1, 1)
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)


def _matmul_tile(width: int, target: str):
    """C = A @ B (96^3) with a 4 x ``width`` register tile under the k loop."""
    A = te.placeholder((96, 96), name="A")
    B = te.placeholder((96, 96), name="B")
    k = te.reduce_axis((0, 96), name="k")
    C = te.compute((96, 96), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    sch = tir.Schedule(te.create_prim_func([A, B, C]))
    block = sch.get_block("C")
    i, j, kk = sch.get_loops(block)
    i0, i1 = sch.split(i, [None, 4])
    j0, j1 = sch.split(j, [None, width])
    sch.reorder(i0, j0, kk, i1, j1)
    sch.reverse_compute_at(sch.cache_write(block, 0, "local"), j0)
    sch.vectorize(j1)
    sch.annotate(i0, "pragma_auto_unroll_max_step", 64)
    return tvm.build(sch.mod, target=target)


@pytest.mark.parametrize("width", [12, 24, 32])
def test_a_row_wider_than_a_register_is_whole_registers_across_the_loop(width, rand):
    """With 8-lane registers (AVX2) a 12-lane row is cut 8 + 4: as one <12 x float> piece,
    LLVM carried its accumulators across the k loop lane by lane (72 single-lane inserts
    in a 192^3 matmul's 4 x 12 tile; 13 GFLOPS, 59 cut). 24 = 16 + 8, 32 = 32."""
    f = _matmul_tile(width, "llvm -num-cores=1 -vector-bytes=32")
    want = {12: "8+4", 24: "16+8", 32: None}[width]
    report = f.loop_report()
    assert (f"chunks={want}" in report) if want else "chunks=" not in report, report
    assert "vinsertps" not in f.get_source("asm")
    a, b = rand((96, 96)), rand((96, 96))
    out = np.zeros((96, 96), "float32")
    f(a, b, out)
    np.testing.assert_allclose(out, a @ b, rtol=1e-4, atol=1e-4)
