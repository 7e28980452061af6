"""Illegal steps: each raises ScheduleError with a message naming the primitive, the
block/loop and the reason, and leaves the program and the trace exactly as they were."""

from __future__ import annotations

import pytest
from schedule_helpers import (
    assert_step_fails,
    chain,
    check,
    elementwise3,
    matmul,
    matmul_exp,
    schedule,
)

import ansor_lab as tvm
from ansor_lab import te, tir
from ansor_lab.errors import IRError, ScheduleError


def _mm():
    A, B, C = matmul()
    sch = schedule([A, B, C])
    return sch, sch.get_loops(sch.get_block("C"))


def _mm_exp():
    A, B, C, D = matmul_exp()
    sch = schedule([A, B, D])
    return sch, sch.get_loops(sch.get_block("C")), sch.get_loops(sch.get_block("D"))


# -- split ----------------------------------------------------------------------------


def test_split_factors_must_multiply_to_the_extent():
    sch, (i, _, _) = _mm()
    assert_step_fails(
        sch,
        lambda: sch.split(i, [3, 16]),
        r"split: block 'C', loop 'i': factors \[3, 16\] multiply to 48 but the "
        r"loop has extent 64; .*put None for the one to infer",
    )


def test_split_allows_only_one_none():
    sch, (i, _, _) = _mm()
    assert_step_fails(
        sch,
        lambda: sch.split(i, [None, None, 4]),
        r"split: .*at most one factor may be None, got \[None, None, 4\]",
    )


def test_split_needs_two_positive_factors():
    sch, (i, _, _) = _mm()
    assert_step_fails(sch, lambda: sch.split(i, [64]), "needs at least two factors")
    assert_step_fails(sch, lambda: sch.split(i, [None, 0]), "positive ints or None, got 0")
    assert_step_fails(sch, lambda: sch.split(i), "give factors=")


# -- reorder / fuse -------------------------------------------------------------------


def test_reorder_of_loops_from_different_nests():
    sch, (i, _, _), (_, dj) = _mm_exp()
    assert_step_fails(
        sch,
        lambda: sch.reorder(i, dj),
        r"reorder: the loops come from different loop nests \(blocks "
        r"\['C', 'D'\]\)",
    )


def test_reorder_lists_a_loop_twice():
    sch, (i, j, _) = _mm()
    assert_step_fails(sch, lambda: sch.reorder(i, j, i), "a loop is listed twice")


def test_fuse_of_non_adjacent_loops():
    sch, (i, _, k) = _mm()
    assert_step_fails(
        sch,
        lambda: sch.fuse(i, k),
        r"fuse: block 'C', loop 'i': loops \['i', 'k'\] are not adjacent and in "
        r"order \(current order: \['i', 'j', 'k'\]\); reorder them first",
    )


def test_fuse_of_loops_in_the_wrong_order():
    sch, (i, j, _) = _mm()
    assert_step_fails(sch, lambda: sch.fuse(j, i), "not adjacent and in order")


def test_fuse_of_a_spatial_with_a_reduction_loop():
    sch, (_, j, k) = _mm()
    assert_step_fails(
        sch,
        lambda: sch.fuse(j, k),
        "fuse: block 'C', loop 'j': cannot fuse a spatial loop with a reduction",
    )


def test_fuse_of_loops_of_two_blocks():
    sch, (i, _, _), (di, _) = _mm_exp()
    assert_step_fails(sch, lambda: sch.fuse(i, di), "belong to different blocks")


def test_fuse_would_remove_a_compute_at_point():
    A, B, C = elementwise3()
    sch = schedule([A, C])
    i, j = sch.get_loops(sch.get_block("C"))
    sch.compute_at(sch.get_block("B"), i)
    assert_step_fails(
        sch,
        lambda: sch.fuse(i, j),
        r"fuse: block 'C', loop 'i': block\(s\) B are computed at this loop",
    )


# -- compute_at -----------------------------------------------------------------------


def test_compute_at_a_loop_of_a_block_that_does_not_read_the_producer():
    A, B, E, C, D, F = chain(16)
    sch = schedule([A, B, E, F])
    c = sch.get_block("C")
    ci, _, _ = sch.get_loops(c)
    # D consumes C; C's loop is no place to compute D, as C never reads D
    blk_d = sch.get_block("D")
    assert_step_fails(
        sch,
        lambda: sch.compute_at(blk_d, ci),
        r"compute_at: block 'D', loop 'i': 'C' does not read 'D'",
    )


def test_compute_at_when_another_reader_is_outside_the_loop():
    A = te.placeholder((32, 32), name="A")
    B = te.compute((32, 32), lambda i, j: A[i, j] * 2.0, name="B")
    C = te.compute((32, 32), lambda i, j: B[i, j] + 1.0, name="C")
    D = te.compute((32, 32), lambda i, j: B[i, j] * 3.0, name="D")
    E = te.compute((32, 32), lambda i, j: C[i, j] + D[i, j], name="E")
    sch = schedule([A, E])
    b = sch.get_block("B")
    ci, _ = sch.get_loops(sch.get_block("C"))
    assert_step_fails(
        sch,
        lambda: sch.compute_at(b, ci),
        r"compute_at: block 'B': stage 'B' is computed at C.i but stage 'D' "
        r"reads it outside that loop; compute_at the reader too",
    )
    ei, _ = sch.get_loops(sch.get_block("E"))
    assert_step_fails(
        sch,
        lambda: sch.compute_at(b, ei),
        r"stage 'B' is computed at E.i but stage 'C' reads it outside",
    )


def test_compute_at_of_an_output_or_an_input():
    sch, (i, _, _), (di, _) = _mm_exp()
    blk_d = sch.get_block("D")
    assert_step_fails(
        sch, lambda: sch.compute_at(blk_d, i), "compute_at: block 'D': is an output of the function"
    )
    assert_step_fails(
        sch, lambda: sch.compute_at("A", di), "compute_at: block 'A': is an input placeholder"
    )


def test_compute_at_of_an_inlined_block():
    A, B, E, C, D, F = chain(16)
    sch = schedule([A, B, E, F])
    d = sch.get_block("D")
    fi, _, _ = sch.get_loops(sch.get_block("F"))
    sch.compute_inline(d)
    assert_step_fails(
        sch, lambda: sch.compute_at(d, fi), r"compute_at: block 'D': was inlined \(compute_inline\)"
    )


# -- loop kinds -----------------------------------------------------------------------


def test_vectorize_of_a_reduction_loop():
    sch, (_, _, k) = _mm()
    assert_step_fails(
        sch,
        lambda: sch.vectorize(k),
        r"vectorize: block 'C', loop 'k': cannot vectorize a reduction loop: its "
        r"iterations all update the same element of 'C'; .*rfactor",
    )


def test_parallel_of_a_reduction_loop():
    sch, (_, _, k) = _mm()
    assert_step_fails(
        sch,
        lambda: sch.parallel(k),
        r"parallel: block 'C', loop 'k': cannot parallelize a reduction loop",
    )


def test_bind_errors():
    sch, (i, j, k) = _mm()
    # threadIdx may share a reduction (a cross-thread reduction); blocks and vthreads not
    assert_step_fails(
        sch, lambda: sch.bind(k, "blockIdx.x"), "only threadIdx.* can share a reduction"
    )
    assert_step_fails(sch, lambda: sch.bind(k, "vthread"), "bound to vthread would race")
    assert_step_fails(sch, lambda: sch.bind(i, "threadIdx.w"), "unknown thread 'threadIdx.w'")
    sch.bind(i, "threadIdx.x")
    assert_step_fails(
        sch, lambda: sch.bind(j, "threadIdx.x"), "threadIdx.x is already bound to loop 'i'"
    )


def test_bind_on_a_cpu_target_fails_at_build():
    A, B, C = elementwise3(8, 8)
    sch = schedule([A, C])
    i, _ = sch.get_loops(sch.get_block("C"))
    sch.bind(i, "threadIdx.x")
    with pytest.raises(
        IRError,
        match=r"loop 'i_1' is bound to threadIdx.x, which only a GPU "
        r"target has; build for target='cuda' or remove the bind",
    ):
        tvm.build(sch.mod, target="llvm")


def test_annotate_with_a_bad_value():
    sch, (i, _, _) = _mm()
    assert_step_fails(
        sch,
        lambda: sch.annotate(i, "pragma_x", [1, 2]),
        "annotation value must be a number or string",
    )
    assert_step_fails(sch, lambda: sch.annotate(i, "", 1), "non-empty string")


# -- handles --------------------------------------------------------------------------


def test_loop_handle_from_another_schedule():
    sch, _ = _mm()
    other, (oi, _, _) = _mm()
    assert_step_fails(
        sch,
        lambda: sch.split(oi, [None, 4]),
        r"split: handle l1 does not belong to this schedule \(it came from "
        r"another tir.Schedule\)",
    )


def test_stale_loop_handle_after_split():
    sch, (i, _, _) = _mm()
    sch.split(i, [None, 4])
    assert_step_fails(
        sch,
        lambda: sch.split(i, [None, 2]),
        r"split: block 'C', loop 'i': this loop handle is stale: an earlier "
        r"split or fuse replaced the loop; use the loops that step returned",
    )
    assert_step_fails(sch, lambda: sch.parallel(i), "parallel: .*stale")


def test_stale_loop_handle_after_fuse():
    sch, (i, j, _) = _mm()
    sch.fuse(i, j)
    assert_step_fails(sch, lambda: sch.vectorize(j), r"vectorize: block 'C', loop 'j': .*stale")


def test_wrong_kind_of_handle():
    sch, (i, _, _) = _mm()
    blk = sch.get_block("C")
    assert_step_fails(
        sch, lambda: sch.split(blk, [None, 4]), r"split: expected a LoopRV, got BlockRV b4"
    )
    assert_step_fails(sch, lambda: sch.get_loops(i), "get_loops: expected a BlockRV")


def test_unknown_block_name_lists_the_blocks():
    A, B, E, C, D, F = chain(16)
    sch = schedule([A, B, E, F])
    assert_step_fails(
        sch, lambda: sch.get_block("G"), r"no stage \(block\) named 'G'; the stages are C, D, F"
    )


# -- inlining -------------------------------------------------------------------------


def test_compute_inline_of_a_reduction():
    sch, _, _ = _mm_exp()
    blk_c = sch.get_block("C")
    assert_step_fails(
        sch,
        lambda: sch.compute_inline(blk_c),
        "compute_inline: block 'C': is a reduction and cannot be inlined; "
        "compute_at it into its consumer instead",
    )


def test_compute_inline_of_an_output():
    sch, _, _ = _mm_exp()
    blk_d = sch.get_block("D")
    assert_step_fails(
        sch,
        lambda: sch.compute_inline(blk_d),
        "compute_inline: block 'D': is an output of the function",
    )


def test_compute_inline_of_a_block_others_are_computed_in():
    A = te.placeholder((16,), name="A")
    B = te.compute((16,), lambda i: A[i] + 1.0, name="B")
    C = te.compute((16,), lambda i: B[i] * 2.0, name="C")
    D = te.compute((16,), lambda i: C[i] - 1.0, name="D")
    sch = schedule([A, D])
    (ci,) = sch.get_loops(sch.get_block("C"))
    sch.compute_at(sch.get_block("B"), ci)
    blk_c = sch.get_block("C")
    assert_step_fails(
        sch,
        lambda: sch.compute_inline(blk_c),
        r"compute_inline: block 'C': blocks \['B'\] are computed inside it",
    )


def test_reverse_compute_inline_into_a_reduction():
    sch, _, _ = _mm_exp()
    blk_d = sch.get_block("D")
    assert_step_fails(
        sch,
        lambda: sch.reverse_compute_inline(blk_d),
        "reverse_compute_inline: block 'D': its producer 'C' is a reduction: the "
        "epilogue would run on partial sums; use reverse_compute_at",
    )


def test_reverse_compute_inline_of_a_shifted_read():
    A = te.placeholder((16,), name="A")
    B = te.compute((17,), lambda i: A[te.min(i, 15)] + 1.0, name="B")
    C = te.compute((16,), lambda i: B[i + 1] * 2.0, name="C")
    sch = schedule([A, C])
    blk_c = sch.get_block("C")
    assert_step_fails(
        sch,
        lambda: sch.reverse_compute_inline(blk_c),
        r"reads 'B' at \[i \+ 1\]; it must read it at its own loop variables",
    )


# -- reverse_compute_at ---------------------------------------------------------------


def test_reverse_compute_at_inside_the_producers_reduction():
    sch, (_, _, k), _ = _mm_exp()
    blk_d = sch.get_block("D")
    assert_step_fails(
        sch,
        lambda: sch.reverse_compute_at(blk_d, k),
        r"reverse_compute_at: block 'D', loop 'k': loop 'k' of 'C' is inside its "
        r"reduction loop 'k': 'D' would read partial results",
    )


def test_reverse_compute_at_below_a_reduction_loop_after_reorder():
    sch, (i, j, k), _ = _mm_exp()
    sch.reorder(i, k, j)
    blk_d = sch.get_block("D")
    assert_step_fails(
        sch,
        lambda: sch.reverse_compute_at(blk_d, j),
        "loop 'j' of 'C' is inside its reduction loop 'k'",
    )


def test_reorder_that_would_put_an_epilogue_inside_the_reduction():
    sch, (i, j, k), _ = _mm_exp()
    sch.reverse_compute_at(sch.get_block("D"), j)
    assert_step_fails(
        sch,
        lambda: sch.reorder(k, j),
        r"reorder: block 'C': block 'D' is computed after loop 'j', which would "
        r"now be inside a reduction loop",
    )


def test_reverse_compute_at_of_a_reduction_consumer():
    A, B, E, C, D, F = chain(16)
    sch = schedule([A, B, E, F])
    di, _ = sch.get_loops(sch.get_block("D"))
    blk_f = sch.get_block("F")
    assert_step_fails(
        sch,
        lambda: sch.reverse_compute_at(blk_f, di),
        "reverse_compute_at: block 'F': has a reduction",
    )


def test_reverse_compute_at_of_a_block_that_does_not_read_the_target():
    A = te.placeholder((16,), name="A")
    B = te.compute((16,), lambda i: A[i] + 1.0, name="B")
    C = te.compute((16,), lambda i: B[i] * 2.0, name="C")
    D = te.compute((16,), lambda i: C[i] - 1.0, name="D")
    sch = schedule([A, D])
    (bi,) = sch.get_loops(sch.get_block("B"))
    blk_d = sch.get_block("D")
    assert_step_fails(
        sch,
        lambda: sch.reverse_compute_at(blk_d, bi),
        "reverse_compute_at: block 'D', loop 'i': does not read 'B'",
    )


# -- caches, rfactor, storage ---------------------------------------------------------


def test_cache_read_of_a_tensor_the_block_does_not_read():
    sch, _, _ = _mm_exp()
    blk_d = sch.get_block("D")
    assert_step_fails(
        sch,
        lambda: sch.cache_read(blk_d, "A", "shared"),
        r"cache_read: block 'D': does not read 'A'; it reads \['C'\]",
    )
    blk_d = sch.get_block("D")
    assert_step_fails(
        sch, lambda: sch.cache_read(blk_d, 3, "shared"), r"read buffer index 3 out of range"
    )


def test_cache_read_and_write_with_an_unknown_scope():
    sch, _, _ = _mm_exp()
    c = sch.get_block("C")
    assert_step_fails(
        sch,
        lambda: sch.cache_read(c, 0, "texture"),
        r"cache_read: block 'C': unknown storage scope 'texture'",
    )
    assert_step_fails(
        sch, lambda: sch.cache_write(c, 0, "register"), r"unknown storage scope 'register'"
    )
    assert_step_fails(sch, lambda: sch.cache_write(c, 1, "local"), "use index 0")


def test_storage_align_of_an_output():
    sch, _, _ = _mm_exp()
    blk_d = sch.get_block("D")
    assert_step_fails(
        sch,
        lambda: sch.storage_align(blk_d, 0, 0, 16, 1),
        "storage_align: block 'D': writes a function argument, whose layout is fixed",
    )


def test_storage_align_bad_axis_or_factor():
    sch, _, _ = _mm_exp()
    c = sch.get_block("C")
    assert_step_fails(
        sch, lambda: sch.storage_align(c, 0, 1, 16, 1), r"axis must be in \[0, 1\) for a 2-d buffer"
    )
    assert_step_fails(sch, lambda: sch.storage_align(c, 0, 0, 16, 16), "0 <= offset < factor")


def test_set_scope_of_an_output():
    sch, _, _ = _mm_exp()
    blk_d = sch.get_block("D")
    assert_step_fails(
        sch,
        lambda: sch.set_scope(blk_d, 0, "shared"),
        "set_scope: block 'D': writes a function argument, which must stay global",
    )


def test_rfactor_of_a_spatial_loop():
    sch, (i, _, _) = _mm()
    assert_step_fails(
        sch,
        lambda: sch.rfactor(i, 0),
        "rfactor: block 'C', loop 'i': rfactor needs a reduction loop",
    )
    _, _, k = sch.get_loops(sch.get_block("C"))
    assert_step_fails(sch, lambda: sch.rfactor(k, 3), r"factor_axis must be in \[0, 2\]")


def test_decompose_reduction_inside_the_reduction():
    sch, (i, j, k) = _mm()
    ko, ki = sch.split(k, [None, 4])
    c = sch.get_block("C")
    assert_step_fails(
        sch,
        lambda: sch.decompose_reduction(c, ki),
        r"decompose_reduction: block 'C', loop 'k_1': loop 'k_1' is inside the "
        r"reduction loop 'k_0'",
    )


def test_decompose_reduction_of_an_elementwise_block():
    A, B, C = elementwise3()
    sch = schedule([A, C])
    c = sch.get_block("C")
    i, _ = sch.get_loops(c)
    assert_step_fails(sch, lambda: sch.decompose_reduction(c, i), "is not a reduction")


# -- sampling -------------------------------------------------------------------------


def test_sampling_with_impossible_decisions():
    sch, (i, _, _) = _mm()
    assert_step_fails(
        sch,
        lambda: sch.sample_perfect_tile(i, 2, decision=[3, 3]),
        r"decision \[3, 3\] does not split loop 'i' of extent 64 into 2 factors",
    )
    assert_step_fails(
        sch,
        lambda: sch.sample_categorical([1, 2], [0.5, 0.5], decision=2),
        "decision 2 out of range",
    )
    assert_step_fails(sch, lambda: sch.sample_categorical([1, 2], [1.0]), "one length")


# -- an error leaves a usable schedule -------------------------------------------------


def test_after_errors_the_schedule_still_works():
    A, B, C, D = matmul_exp()
    sch = schedule([A, B, D])
    i, j, k = sch.get_loops(sch.get_block("C"))
    for bad in (
        lambda: sch.split(i, [5, 5]),
        lambda: sch.vectorize(k),
        lambda: sch.reverse_compute_at(sch.get_block("D"), k),
        lambda: sch.compute_inline(sch.get_block("C")),
    ):
        with pytest.raises(ScheduleError):
            bad()
    xo, yo, _, _ = sch.tile(i, j, 16, 16)
    sch.reverse_compute_at(sch.get_block("D"), yo)
    sch.parallel(xo)
    check(sch, [A, B, D], contains=["for i_0 in T.parallel(4):"])
    assert "ScheduleError" not in str(sch.trace)
    assert isinstance(sch.trace, tir.Trace)
