"""A serial loop whose guards are decided on most of its iterations is split there
(``ir.loop_partition``): the middle piece runs without the test, the results stay
numpy's, and the loops it must not split (equalities, parallel loops, more than three
pieces) stay whole; a vector loop whose guard refuses its last lanes loses them."""

from __future__ import annotations

import numpy as np
import pytest
from workloads import matmul

import ansor_lab as tvm
from ansor_lab import te, tir, topi
from ansor_lab.codegen.pipeline import prepare
from ansor_lab.dsl import expr as E
from ansor_lab.dsl.printer import text
from ansor_lab.ir import nodes as N
from ansor_lab.ir.loop_partition import guard_comparisons, partition_guarded_loops
from ansor_lab.ir.printer import func_to_str as script
from ansor_lab.ir.visitor import walk_stmts


def _loop_nodes(s: N.Stmt, name: str) -> list[N.For]:
    """Every loop over variable ``name`` under ``s``, in program order."""
    return [x for x in walk_stmts(s) if isinstance(x, N.For) and x.loop_var.name == name]


def _loops(func: N.PrimFunc, name: str) -> list[tuple[int, int]]:
    """(min, extent) of every loop over variable ``name``, in program order."""
    return [(s.min.value, s.extent.value) for s in _loop_nodes(func.body, name)]


def _pool_reference(a: np.ndarray, out_hw: int) -> np.ndarray:
    padded = np.pad(a, ((0, 0), (0, 0), (1, 1), (1, 1)), constant_values=-np.inf)
    want = np.full(a.shape[:2] + (out_hw, out_hw), -np.inf, "float32")
    for dy in range(3):
        for dx in range(3):
            window = padded[:, :, dy : dy + 2 * out_hw : 2, dx : dx + 2 * out_hw : 2]
            want = np.maximum(want, window)
    return want


def _inlined_pool(size: int, lanes: int | None):
    x = te.placeholder((1, 3, size, size), name="x")
    pool = topi.nn.pool2d(x, (3, 3), (2, 2), (1, 1), (1, 1, 1, 1), "max")
    sch = tir.Schedule(te.create_prim_func([x, pool]))
    sch.compute_inline(sch.get_block("pad_temp"))
    n, c, h, w, r0, r1 = sch.get_loops(sch.get_block(pool.op.name))
    if lanes is None:
        sch.reorder(n, c, h, w, r0, r1)
    else:
        wo, wi = sch.split(w, [None, lanes])
        sch.reorder(n, c, h, wo, r0, r1, wi)
        sch.vectorize(wi)
    return sch


@pytest.mark.parametrize(("size", "lanes"), [(20, None), (20, 5), (23, 4), (112, 8)])
def test_an_inlined_padding_leaves_the_middle_rows_unguarded(rand, size, lanes):
    sch = _inlined_pool(size, lanes)
    prepared = prepare(tvm.lower(sch.mod)["main"], "llvm")
    out_hw = (size + 2 - 3) // 2 + 1
    # the first output row reads the top padding, an odd size's last row the bottom one
    last = (size - 2) // 2
    assert _loops(prepared, "i2") == [(1, last)]
    (middle,) = _loop_nodes(prepared.body, "i2")
    assert all("i2" not in text(g) for g in guard_comparisons(middle))
    if lanes is not None and out_hw // lanes >= 4:
        # the first column tile reads the left padding; the later ones test nothing
        (tiles,) = _loop_nodes(middle, "i3_0")
        assert tiles.min.value == 1 and not guard_comparisons(tiles)
    f = tvm.build(sch.mod, target="llvm")
    a = rand((1, 3, size, size))
    out = np.empty((1, 3, out_hw, out_hw), "float32")
    f(a, out)
    np.testing.assert_array_equal(out, _pool_reference(a, out_hw))


def test_a_split_that_does_not_divide_runs_its_whole_tiles_unmasked(rand):
    A = te.placeholder((100,), name="A")
    B = te.compute((100,), lambda i: A[i] * 2.0, name="B")
    sch = tir.Schedule(te.create_prim_func([A, B]))
    (i,) = sch.get_loops(sch.get_block("B"))
    _, ii = sch.split(i, [None, 16])
    sch.vectorize(ii)
    prepared = prepare(tvm.lower(sch.mod)["main"], "llvm")
    assert _loops(prepared, "i_0") == [(0, 6)]  # 6 whole tiles, then the 4 left
    # the last tile's vector loop keeps the 4 lanes its guard allows: no mask left
    (tail,) = [s for s in _loop_nodes(prepared.body, "i_1") if s.extent.value == 4]
    assert not guard_comparisons(tail)
    f = tvm.build(sch.mod, target="llvm")
    report = f.loop_report().splitlines()
    assert len(report) == 2 and "SIMD x16" in report[0] and "SIMD x4" in report[1]
    assert "masked" not in f.loop_report()
    a = rand((100,))
    b = np.empty(100, "float32")
    f(a, b)
    np.testing.assert_array_equal(b, a * np.float32(2.0))


def test_an_equality_is_left_to_llvm():
    # one iteration singled out (as an initialisation inside its reduction loop is): no
    # copy of the body for one trip
    A = te.placeholder((64,), name="A")
    B = te.compute((64,), lambda i: te.if_then_else(i == 5, A[i] * 2.0, A[i]), name="B")
    lowered = tvm.lower(tir.Schedule(te.create_prim_func([A, B])).mod)["main"]
    assert "== 5" in script(lowered)
    assert partition_guarded_loops(lowered) is lowered


def test_a_parallel_loop_stays_whole_and_a_loop_around_an_allocation_is_split(rand):
    sch = _inlined_pool(20, None)
    sch.parallel(sch.get_loops(sch.get_block("pool_max"))[2])
    prepared = prepare(tvm.lower(sch.mod)["main"], "llvm")
    assert _loops(prepared, "i2") == [(0, 10)]
    # the padding computed per row into a local buffer: each piece of the row loop
    # allocates the buffer for itself
    x = te.placeholder((1, 3, 20, 20), name="x")
    pool = topi.nn.pool2d(x, (3, 3), (2, 2), (1, 1), (1, 1, 1, 1), "max")
    sch2 = tir.Schedule(te.create_prim_func([x, pool]))
    _, _, h, _, _, _ = sch2.get_loops(sch2.get_block(pool.op.name))
    sch2.compute_at(sch2.get_block("pad_temp"), h)
    assert any(isinstance(s, N.Allocate) for s in walk_stmts(tvm.lower(sch2.mod)["main"].body))
    prepared2 = prepare(tvm.lower(sch2.mod)["main"], "llvm")
    # row 0 reads the top padding: its one-trip piece is folded away
    assert _loops(prepared2, "i2_1") == [(1, 9)]
    assert sum(isinstance(s, N.Allocate) for s in walk_stmts(prepared2.body)) == 2
    for s in (sch, sch2):
        f = tvm.build(s.mod, target="llvm")
        a = rand((1, 3, 20, 20))
        out = np.empty((1, 3, 10, 10), "float32")
        f(a, out)
        np.testing.assert_array_equal(out, _pool_reference(a, 10))


def test_more_than_three_pieces_stay_one_loop():
    # a guard true only on a band in the middle and another cutting the band: 4 pieces
    A = te.placeholder((64,), name="A")
    B = te.compute(
        (64,),
        lambda i: te.if_then_else(
            te.all(i >= 10, i < 50), te.if_then_else(i < 30, A[i], A[i] * 2.0), 0.0
        ),
        name="B",
    )
    sch = tir.Schedule(te.create_prim_func([A, B]))
    prepared = prepare(tvm.lower(sch.mod)["main"], "llvm")
    assert _loops(prepared, "i") == [(0, 64)]
    f = tvm.build(sch.mod, target="llvm")
    a = np.arange(64, dtype="float32")
    b = np.empty(64, "float32")
    f(a, b)
    want = np.where((a >= 10) & (a < 50), np.where(a < 30, a, a * 2), 0).astype("float32")
    np.testing.assert_array_equal(b, want)


def _guarded_copy(guard, kind: str = "vectorized", else_case: bool = False) -> N.PrimFunc:
    """``for j in range(2): for i in <kind>(16): if guard(i, j): B[j, i] = A[j, i] + 1``."""
    a = N.Buffer("A", (2, 16), "float32")
    b = N.Buffer("B", (2, 16), "float32")
    i, j = E.Var("i", "int32"), E.Var("j", "int32")
    plus_one = N.BufferLoad(a, (j, i), "float32") + E.FloatImm(1.0, "float32")
    store = N.BufferStore(b, plus_one, (j, i))
    other = N.BufferStore(b, E.FloatImm(-1.0, "float32"), (j, i)) if else_case else None
    inner = N.For(i, 0, 16, kind, N.IfThenElse(guard(i, j), store, other))
    return N.PrimFunc((a, b), N.For(j, 0, 2, "serial", inner))


def _run_guarded(func: N.PrimFunc, rand) -> tuple[np.ndarray, np.ndarray]:
    a = rand((2, 16))
    b = np.full((2, 16), 7.0, np.float32)
    tvm.build(func, target="llvm")(a, b)
    return a, b


@pytest.mark.parametrize("kind", ["vectorized", "serial", "unrolled"])
def test_a_loop_loses_the_iterations_its_guard_refuses_at_its_start(rand, kind):
    # i + 2 * j >= 3 refuses i = 0 in both rows (j <= 1): the loop starts at 1; a serial
    # or unrolled loop is then split at i = 3, where the guard holds for every row
    func = _guarded_copy(lambda i, j: i + j * 2 >= 3, kind)
    inner = _loop_nodes(prepare(func, "llvm").body, "i")
    if kind == "vectorized":  # rebased to start at 0: 15 lanes from i = 1, row 0 masked
        assert [(s.min.value, s.extent.value) for s in inner] == [(0, 15)]
    else:
        assert [(s.min.value, s.extent.value) for s in inner] == [(1, 2), (3, 13)]
        assert not guard_comparisons(inner[1])
    a, b = _run_guarded(func, rand)
    want = np.full((2, 16), 7.0, np.float32)
    want[0, 3:] = a[0, 3:] + 1
    want[1, 1:] = a[1, 1:] + 1
    np.testing.assert_array_equal(b, want)
    # decided for every lane: the vector loses its first three lanes and its guard
    func = _guarded_copy(lambda i, j: i >= 3, kind)
    (inner,) = _loop_nodes(prepare(func, "llvm").body, "i")
    assert inner.extent.value == 13 and not guard_comparisons(inner)
    assert inner.min.value == (0 if kind == "vectorized" else 3)
    a, b = _run_guarded(func, rand)
    want = np.full((2, 16), 7.0, np.float32)
    want[:, 3:] = a[:, 3:] + 1
    np.testing.assert_array_equal(b, want)


def test_a_guard_false_everywhere_removes_the_loop_and_holes_and_else_stay(rand):
    never = prepare(_guarded_copy(lambda i, j: i + j > 20), "llvm")
    assert not _loop_nodes(never.body, "i")
    a, b = _run_guarded(_guarded_copy(lambda i, j: i + j > 20), rand)
    np.testing.assert_array_equal(b, np.full((2, 16), 7.0, np.float32))
    # live at both ends, refused in the middle: the guard stays, as a lane mask
    hole = _guarded_copy(lambda i, j: E.Or(i < 4, i >= 12), "vectorized")
    assert [s.extent.value for s in _loop_nodes(prepare(hole, "llvm").body, "i")] == [16]
    # an else branch runs where the guard fails: those iterations are not dropped
    with_else = _guarded_copy(lambda i, j: i >= 5, "vectorized", else_case=True)
    assert [s.extent.value for s in _loop_nodes(prepare(with_else, "llvm").body, "i")] == [16]
    a, b = _run_guarded(with_else, rand)
    want = np.where(np.arange(16) >= 5, a + 1, np.float32(-1.0))
    np.testing.assert_array_equal(b, want)


def test_a_padded_matmul_tile_runs_its_multiply_adds_unmasked(rand):
    """127 x 509 x 251 (every extent prime) tiled in padded 4 x 16 tiles, the column guard
    three loops deep (``j0 * 128 + j1 * 16 + j2 * 8 + lane < 251``, ``j2`` unrolled) under the row
    guard: each level is split where its verdict changes, so no masked access is left
    inside the reduction. With two levels, the half of the columns whose outer tile
    holds the edge kept its accumulators in masked loads and stores (AVX2 has no cheap
    masked store): 8.1 ms against 0.86 ms."""
    M, K, N_ = 127, 509, 251
    sch = tir.Schedule(te.create_prim_func(matmul(M, N_, K)))
    i, j, kk = sch.get_loops(sch.get_block("C"))
    i0, i1 = sch.split(i, [None, 4])
    j0, j1, j2, j3 = sch.split(j, [None, 8, 2, 8])
    sch.reorder(i0, j0, j1, kk, j2, i1, j3)
    sch.vectorize(j3)
    sch.annotate(i0, "pragma_auto_unroll_max_step", 16)  # as the tuner's: j2, i1 unrolled
    f = tvm.build(sch.mod, target="llvm")
    assert "masked" not in f.loop_report()
    a, b = rand((M, K)), rand((K, N_))
    c = np.empty((M, N_), "float32")
    f(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-3)
