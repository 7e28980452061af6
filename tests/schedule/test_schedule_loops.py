"""Loop primitives of ``tir.Schedule``: split, fuse, reorder, tile, parallel, vectorize,
unroll, bind, annotate; and the getters (get_block, get_loops, get_child_blocks, get)."""

from __future__ import annotations

import pytest
from schedule_helpers import (
    check,
    check_te,
    elementwise3,
    matmul,
    matmul_exp,
    run_and_compare,
    schedule,
    verify_trace_roundtrip,
)

import ansor_lab as tvm
from ansor_lab import te, tir
from ansor_lab.errors import IRError
from ansor_lab.schedule.attachment import ROOT


def test_unscheduled_matmul_lowers_to_the_naive_nest():
    A, B, C = matmul()
    sch = schedule([A, B, C])
    check(
        sch,
        [A, B, C],
        contains=[
            'def main(A: T.Buffer((64, 32), "float32"), B: T.Buffer((32, 48), "float32"), '
            'C: T.Buffer((64, 48), "float32")):',
            "    for i in range(64):\n"
            "        for j in range(48):\n"
            "            C[i, j] = T.float32(0.0)\n"
            "            for k in range(32):\n"
            "                C[i, j] = C[i, j] + A[i, k] * B[k, j]",
        ],
    )


# -- split ----------------------------------------------------------------------------


def test_split_divisible_with_inferred_outer_factor():
    A, B, C = matmul()
    sch = schedule([A, B, C])
    i, j, k = sch.get_loops(sch.get_block("C"))
    io, ii = sch.split(i, factors=[None, 16])
    assert (sch.get(io).extent, sch.get(ii).extent) == (4, 16)
    assert (sch.get(io).name, sch.get(ii).name) == ("i_0", "i_1")
    check(
        sch,
        [A, B, C],
        contains=[
            "for i_0 in range(4):\n        for i_1 in range(16):",
            "C[i_0 * 16 + i_1, j] = C[i_0 * 16 + i_1, j] + A[i_0 * 16 + i_1, k] * B[k, j]",
        ],
        absent=["if "],
    )


def test_split_non_divisible_is_guarded():
    A, B, C = matmul()
    sch = schedule([A, B, C])
    i, j, k = sch.get_loops(sch.get_block("C"))
    jo, ji = sch.split(j, factors=[None, 10])  # 48 = 4 * 10 + 8
    assert [sch.get(x).extent for x in (jo, ji)] == [5, 10]
    check(
        sch,
        [A, B, C],
        contains=[
            "for j_0 in range(5):",
            "for j_1 in range(10):",
            "if j_0 * 10 + j_1 < 48:",
        ],
    )


def test_split_factors_past_the_extent_keep_their_loops_as_in_tvm():
    # TVM refuses only factors that multiply to less than the extent; the loops are the
    # ones written, the iterations past the extent guarded off
    A, B, C = matmul()
    sch = schedule([A, B, C])
    i, j, k = sch.get_loops(sch.get_block("C"))
    jo, ji = sch.split(j, factors=[6, 10])  # 60 >= 48: j_0 = 5 is guarded off whole
    assert [sch.get(x).extent for x in (jo, ji)] == [6, 10]
    jo2, ji2 = sch.split(ji, factors=[7, 2])  # 14 >= 10
    assert [sch.get(x).extent for x in (jo2, ji2)] == [7, 2]
    text = check(sch, [A, B, C], contains=["for j_0 in range(6):", "for j_1_0 in range(7):"])
    assert "j_1_0 * 2 + j_1_1 < 10" in text and "< 48" in text, text
    script = sch.mod.script()
    assert "for i, j_0, j_1_0, j_1_1, k in T.grid(64, 6, 7, 2, 32):" in script, script
    assert "T.where(j_1_0 * 2 + j_1_1 < 10 and j_0 * 10 + j_1_0 * 2 + j_1_1 < 48)" in script


def test_split_factors_short_of_the_extent_say_what_to_write():
    A, B, C = matmul()
    sch = schedule([A, B, C])
    i, j, k = sch.get_loops(sch.get_block("C"))
    with pytest.raises(tvm.tir.ScheduleError, match="multiply to at least the extent"):
        sch.split(j, factors=[4, 10])  # 40 < 48


def test_te_split_by_nparts_keeps_the_parts_as_in_tvm():
    # TVM's TE: nparts=6 of 10 is 6 x ceil(10 / 6) = 6 x 2, the last part guarded off
    A = te.placeholder((10,), name="A")
    B = te.compute((10,), lambda i: A[i] + 1.0, name="B")
    s = te.create_schedule(B.op)
    outer, inner = s[B].split(B.op.axis[0], nparts=6)
    text = check_te(s, [A, B], contains=["for i_0 in range(6):", "for i_1 in range(2):"])
    assert "if i_0 * 2 + i_1 < 10:" in text, text


def test_split_non_divisible_reduction_loop_guards_the_update_only():
    A, B, C = matmul()
    sch = schedule([A, B, C])
    _, _, k = sch.get_loops(sch.get_block("C"))
    sch.split(k, factors=[None, 5])  # 32 = 6 * 5 + 2
    text = check(
        sch,
        [A, B, C],
        contains=[
            "C[i, j] = T.float32(0.0)\n            for k_0 in range(7):",
            "if k_0 * 5 + k_1 < 32:\n"
            "                        C[i, j] = C[i, j] + A[i, k_0 * 5 + k_1]",
        ],
    )
    assert text.count("if ") == 1


def test_split_three_ways_with_the_none_in_the_middle():
    A, B, C = matmul()
    sch = schedule([A, B, C])
    i, j, k = sch.get_loops(sch.get_block("C"))
    loops = sch.split(i, factors=[2, None, 4])
    assert [sch.get(x).extent for x in loops] == [2, 8, 4]
    check(
        sch,
        [A, B, C],
        contains=[
            "for i_0 in range(2):\n        for i_1 in range(8):\n            for i_2 in range(4):",
            "C[i_0 * 32 + i_1 * 4 + i_2, j]",
        ],
    )


def test_split_with_factor_and_nparts_keywords():
    A, B, C = matmul()
    sch = schedule([A, B, C])
    i, j, _ = sch.get_loops(sch.get_block("C"))
    io, ii = sch.split(i, factor=8)
    jo, ji = sch.split(j, nparts=3)
    assert [sch.get(x).extent for x in (io, ii, jo, ji)] == [8, 8, 3, 16]
    text = check(sch, [A, B, C], contains=["for j_0 in range(3):", "for j_1 in range(16):"])
    # the keywords are recorded as the factors they mean
    assert "factors=[None, 8]" in str(sch.trace) and "factors=[3, None]" in str(sch.trace)
    assert "i_0 * 8 + i_1" in text


def test_split_of_a_split_child_and_of_a_fused_loop():
    A, B, C = matmul()
    sch = schedule([A, B, C])
    i, j, _ = sch.get_loops(sch.get_block("C"))
    io, ii = sch.split(i, [None, 16])
    iio, iii = sch.split(ii, [None, 4])
    f = sch.fuse(iii, j)
    fo, fi = sch.split(f, [None, 7])  # 4 * 48 = 192 is not a multiple of 7
    assert [sch.get(x).extent for x in (io, iio, fo, fi)] == [4, 4, 28, 7]
    check(
        sch,
        [A, B, C],
        contains=[
            "for i_1_1_j_fused_0 in range(28):",
            "for i_1_1_j_fused_1 in range(7):",
            "if i_1_1_j_fused_0 * 7 + i_1_1_j_fused_1 < 192:",
        ],
    )


# -- fuse / reorder / tile ------------------------------------------------------------


def test_fuse_two_spatial_loops():
    A, B, C = elementwise3()
    sch = schedule([A, C])
    i, j = sch.get_loops(sch.get_block("C"))
    f = sch.fuse(i, j)
    assert (sch.get(f).name, sch.get(f).extent) == ("i_j_fused", 4096)
    check(
        sch,
        [A, C],
        contains=[
            "for i_j_fused in range(4096):",
            "C[i_j_fused // 64, i_j_fused % 64] = B[i_j_fused // 64, i_j_fused % 64]",
        ],
    )


def test_fuse_three_loops_including_split_children():
    A, B, C = matmul()
    sch = schedule([A, B, C])
    i, j, _ = sch.get_loops(sch.get_block("C"))
    io, ii = sch.split(i, [None, 4])
    f = sch.fuse(io, ii, j)
    assert sch.get(f).extent == 64 * 48
    check(sch, [A, B, C], contains=["for i_0_i_1_j_fused in range(3072):"])


def test_fuse_of_one_loop_is_that_loop():
    A, B, C = matmul()
    sch = schedule([A, B, C])
    i, _, _ = sch.get_loops(sch.get_block("C"))
    f = sch.fuse(i)
    assert sch.get(f).name == "i"
    check(sch, [A, B, C], contains=["for i in range(64):"])


def test_reorder_spatial_and_reduction_loops():
    A, B, C = matmul()
    sch = schedule([A, B, C])
    i, j, k = sch.get_loops(sch.get_block("C"))
    sch.reorder(k, i)  # the listed loops swap places; j stays in between
    assert [sch.get(x).name for x in sch.get_loops(sch.get_block("C"))] == ["k", "j", "i"]
    check(
        sch,
        [A, B, C],
        contains=[
            # the init nest goes before the first reduction loop, which is now outermost
            "for k in range(32):\n        for j in range(48):\n            for i in range(64):",
        ],
    )


def test_reorder_to_the_cache_friendly_ikj_order():
    A, B, C = matmul()
    sch = schedule([A, B, C])
    i, j, k = sch.get_loops(sch.get_block("C"))
    sch.reorder(i, k, j)
    check(
        sch,
        [A, B, C],
        contains=[
            "for i in range(64):\n        for j in range(48):\n"
            "            C[i, j] = T.float32(0.0)\n"
            "        for k in range(32):\n            for j in range(48):\n"
            "                C[i, j] = C[i, j] + A[i, k] * B[k, j]",
        ],
    )


def test_tile_is_split_split_reorder():
    A, B, C = matmul()
    sch = schedule([A, B, C])
    i, j, _ = sch.get_loops(sch.get_block("C"))
    xo, yo, xi, yi = sch.tile(i, j, 16, 8)
    kinds = [inst.kind for inst in sch.trace.insts]
    assert kinds[-3:] == ["Split", "Split", "Reorder"]
    assert [sch.get(x).name for x in sch.get_loops(sch.get_block("C"))] == [
        "i_0",
        "j_0",
        "i_1",
        "j_1",
        "k",
    ]
    check(
        sch,
        [A, B, C],
        contains=[
            "for i_0 in range(4):\n        for j_0 in range(6):\n"
            "            for i_1 in range(16):\n                for j_1 in range(8):",
        ],
    )


# -- loop kinds -----------------------------------------------------------------------


def test_parallel_outer_loop():
    A, B, C = matmul()
    sch = schedule([A, B, C])
    i, _, _ = sch.get_loops(sch.get_block("C"))
    io, _ = sch.split(i, [4, None])
    sch.parallel(io)
    assert sch.get(io).annotation == "parallel"
    check(sch, [A, B, C], contains=["for i_0 in T.parallel(4):"])


def test_parallel_fused_loop():
    A, B, C = elementwise3()
    sch = schedule([A, C])
    i, j = sch.get_loops(sch.get_block("C"))
    jo, ji = sch.split(j, [None, 16])
    f = sch.fuse(i, jo)
    sch.parallel(f)
    check(sch, [A, C], contains=["for i_j_0_fused in T.parallel(256):", "for j_1 in range(16):"])


def test_vectorize_inner_loop():
    A, B, C = matmul()
    sch = schedule([A, B, C])
    i, j, k = sch.get_loops(sch.get_block("C"))
    jo, ji = sch.split(j, [None, 8])
    sch.reorder(i, jo, k, ji)
    sch.vectorize(ji)
    assert sch.get(ji).annotation == "vectorize"
    check(
        sch,
        [A, B, C],
        contains=["for k in range(32):\n                for j_1 in T.vectorized(8):"],
    )


def test_vectorize_non_divisible_inner_loop_keeps_the_guard():
    A, B, C = elementwise3(8, 20)
    sch = schedule([A, C])
    _, j = sch.get_loops(sch.get_block("C"))
    _, ji = sch.split(j, [None, 8])
    sch.vectorize(ji)
    check(sch, [A, C], contains=["for j_1 in T.vectorized(8):", "if j_0 * 8 + j_1 < 20:"])


def test_unroll_inner_loop():
    A, B, C = matmul()
    sch = schedule([A, B, C])
    _, _, k = sch.get_loops(sch.get_block("C"))
    _, ki = sch.split(k, [None, 4])
    sch.unroll(ki)
    assert sch.get(ki).annotation == "unroll"
    check(sch, [A, B, C], contains=["for k_1 in T.unroll(4):"])


def test_parallel_vectorize_unroll_together():
    A, B, C, D = matmul_exp()
    sch = schedule([A, B, D])
    i, j = sch.get_loops(sch.get_block("D"))
    io, ii = sch.split(i, [None, 2])
    jo, ji = sch.split(j, [None, 8])
    sch.reorder(io, jo, ii, ji)
    sch.parallel(io)
    sch.unroll(ii)
    sch.vectorize(ji)
    check(
        sch,
        [A, B, D],
        contains=[
            "for i_0 in T.parallel(32):",
            "for i_1 in T.unroll(2):",
            "for j_1 in T.vectorized(8):",
            "D[i_0 * 2 + i_1, j_0 * 8 + j_1] = T.exp(C[i_0 * 2 + i_1, j_0 * 8 + j_1]",
        ],
    )


def test_bind_lowers_to_thread_binding_and_cpu_build_refuses_it():
    A, B, C = matmul(16, 16, 8)
    sch = schedule([A, B, C])
    i, j, _ = sch.get_loops(sch.get_block("C"))
    sch.bind(i, "blockIdx.x")
    sch.bind(j, "threadIdx.x")
    assert sch.get(j).annotation == "threadIdx.x"
    text = sch.mod.script()
    assert 'for i in T.thread_binding(16, thread="blockIdx.x"):' in text
    assert 'for j in T.thread_binding(16, thread="threadIdx.x"):' in text
    verify_trace_roundtrip(sch, [A, B, C])
    assert 'sch.bind(loop=l1, thread_axis="blockIdx.x")' in str(sch.trace)
    with pytest.raises(IRError, match=r"blockIdx\.x.*only a GPU target.*cuda.*remove the bind"):
        tvm.build(sch.mod, target="llvm")


def test_bind_accepts_a_thread_axis_object():
    from ansor_lab import te

    A, B, C = elementwise3(4, 32)
    sch = schedule([A, C])
    _, j = sch.get_loops(sch.get_block("C"))
    sch.bind(j, te.thread_axis("threadIdx.x"))
    assert 'T.thread_binding(32, thread="threadIdx.x")' in sch.mod.script()
    verify_trace_roundtrip(sch, [A, C])


def test_annotate_loop_and_block():
    A, B, C = matmul()
    sch = schedule([A, B, C])
    blk = sch.get_block("C")
    i, j, _ = sch.get_loops(blk)
    io, _ = sch.split(i, [None, 8])
    sch.annotate(io, "pragma_auto_unroll_max_step", 16)
    # a block annotation lands on the block's outermost loop
    sch.annotate(blk, "pragma_unroll_explicit", 1)
    check(
        sch,
        [A, B, C],
        contains=[
            'for i_0 in T.serial(8, annotations={"pragma_auto_unroll_max_step": 16, '
            '"pragma_unroll_explicit": 1}):',
        ],
    )
    assert (
        'sch.annotate(block_or_loop=l4, ann_key="pragma_auto_unroll_max_step", ann_val=16)'
    ) in str(sch.trace)


def test_annotate_inner_loop_with_string_value():
    A, B, C = elementwise3(8, 8)
    sch = schedule([A, C])
    _, j = sch.get_loops(sch.get_block("C"))
    sch.annotate(j, "note", "hello")
    check(sch, [A, C], contains=["for j_1 in T.serial(8, annotations={\"note\": 'hello'}):"])


# -- getters --------------------------------------------------------------------------


def test_get_block_and_get_loops_and_get():
    A, B, C = matmul()
    sch = schedule([A, B, C])
    blk = sch.get_block("C")
    info = sch.get(blk)
    assert (info.name, info.writes, info.scope, info.attach) == ("C", "C", "global", ROOT)
    loops = sch.get_loops(blk)
    infos = [sch.get(x) for x in loops]
    assert [(x.name, x.extent, x.kind) for x in infos] == [
        ("i", 64, "spatial"),
        ("j", 48, "spatial"),
        ("k", 32, "reduce"),
    ]
    assert repr(infos[2]) == "Loop(C.k, extent=32, reduce)"
    # handles print with TVM's prefixes
    assert (blk.name, loops[0].name) == ("b0", "l1")
    assert str(sch.trace) == (
        "def apply_trace(sch):\n"
        '  b0 = sch.get_block(name="C", func_name="main")\n'
        "  l1, l2, l3 = sch.get_loops(block=b0)"
    )
    # get_loops may also be given the block's name
    assert [sch.get(x).name for x in sch.get_loops("C")] == ["i", "j", "k"]
    verify_trace_roundtrip(sch, [A, B, C])


def test_get_of_an_expr_rv_is_the_sampled_int():
    A, B, C = matmul()
    sch = schedule([A, B, C])
    i, _, _ = sch.get_loops(sch.get_block("C"))
    v = sch.sample_categorical([3, 5, 7], [0.0, 1.0, 0.0])
    assert sch.get(v) == 5
    vs = sch.sample_perfect_tile(i, 2, decision=[8, 8])
    assert [sch.get(x) for x in vs] == [8, 8]
    with pytest.raises(tir.ScheduleError, match="sampled value"):
        int(v)
    verify_trace_roundtrip(sch, [A, B, C])


def test_get_child_blocks_of_a_loop_and_of_a_block():
    A, B, C = elementwise3()
    sch = schedule([A, C])
    c = sch.get_block("C")
    i, j = sch.get_loops(c)
    assert sch.get_child_blocks(c) == []
    sch.compute_at(sch.get_block("B"), i)
    # in program order: B is computed first, inside C's loop i
    assert [sch.get(b).name for b in sch.get_child_blocks(i)] == ["B", "C"]
    assert [sch.get(b).name for b in sch.get_child_blocks(c)] == ["B"]
    # the inner loop j of C does not enclose B (B is computed before it)
    assert [sch.get(b).name for b in sch.get_child_blocks(j)] == ["C"]
    check(sch, [A, C])


def test_get_child_blocks_includes_nested_blocks_and_rejects_stale_loops():
    from ansor_lab import te

    A = te.placeholder((16, 16), name="A")
    B = te.placeholder((16, 16), name="B")
    P = te.compute((16, 16), lambda i, j: A[i, j] * 0.5, name="P")
    k = te.reduce_axis((0, 16), name="k")
    C = te.compute((16, 16), lambda i, j: te.sum(P[i, k] * B[k, j], axis=k), name="C")
    D = te.compute((16, 16), lambda i, j: C[i, j] + 1.0, name="D")
    sch = schedule([A, B, D])
    di, _ = sch.get_loops(sch.get_block("D"))
    dio, _ = sch.split(di, [None, 4])
    sch.compute_at(sch.get_block("C"), dio)
    ck = sch.get_loops(sch.get_block("C"))[-1]
    sch.compute_at(sch.get_block("P"), ck)  # P inside C inside D's loop
    assert [sch.get(b).name for b in sch.get_child_blocks(dio)] == ["P", "C", "D"]
    assert [sch.get(b).name for b in sch.get_child_blocks(sch.get_block("D"))] == ["P", "C"]
    check(sch, [A, B, D])
    with pytest.raises(tir.ScheduleError, match="get_child_blocks: .*stale"):
        sch.get_child_blocks(di)


def test_loop_rvs_of_a_computed_at_block_include_the_outer_loops():
    A, B, C = elementwise3()
    sch = schedule([A, C])
    i, _ = sch.get_loops(sch.get_block("C"))
    io, _ = sch.split(i, [None, 8])
    sch.compute_at(sch.get_block("B"), io)
    loops = [sch.get(x) for x in sch.get_loops(sch.get_block("B"))]
    assert [(x.block, x.name, x.extent) for x in loops] == [
        ("C", "i_0", 8),
        ("B", "i", 8),
        ("B", "j", 64),
    ]
    check(sch, [A, C])


def test_schedule_accepts_an_irmodule_and_rejects_other_things():
    A, B, C = matmul(8, 8, 8)
    from ansor_lab import te
    from ansor_lab.ir.printer import loop_form

    func = te.create_prim_func([A, B, C])
    sch = tir.Schedule(tir.IRModule({"main": func}))
    # the unscheduled schedule's program is create_prim_func's: the same lowering, and
    # both print (and compare) as TVM's block form
    assert loop_form(tvm.lower(sch.mod)["main"]) == loop_form(func)
    assert sch.mod.script() == func.script()
    tvm.ir.assert_structural_equal(sch.mod["main"], func)
    run_and_compare(tvm.build(sch.mod, target="llvm"), [A, B, C])
    with pytest.raises(tir.ScheduleError, match="create_prim_func"):
        tir.Schedule("not a function")
