"""transform_layout: an intermediate buffer stored with its axes permuted (TVM's
``sch.transform_layout`` restricted to permutations)."""

from __future__ import annotations

from schedule_helpers import (
    assert_step_fails,
    check,
    elementwise3,
    matmul,
    matmul_exp,
    schedule,
)

from ansor_lab import te


def test_transpose_an_intermediate_permutes_its_buffer_and_every_access():
    A, B, C = elementwise3(16, 24)
    sch = schedule([A, C])
    sch.transform_layout(sch.get_block("B"), ("write", 0), lambda i, j: (j, i))
    check(
        sch,
        [A, C],
        contains=[
            'B = T.alloc_buffer((24, 16), "float32")',
            "B[j, i] = A[i, j] * T.float32(2.0)",
            "C[i_1, j_1] = B[j_1, i_1] + T.float32(1.0)",
        ],
    )


def test_the_layout_of_a_read_buffer_by_index_and_by_name():
    A, B, C = elementwise3(16, 24)
    for buffer in (("read", 0), "B"):
        sch = schedule([A, C])
        sch.transform_layout(sch.get_block("C"), buffer, lambda i, j: (j, i))
        check(sch, [A, C], contains=['B = T.alloc_buffer((24, 16), "float32")'])


def test_a_cache_read_panel_stored_transposed_inside_the_tile():
    # the packing the conv sketch does: the copy of B's panel made at the row tile,
    # stored [j, k] and its loops in that order, so the copy writes contiguously
    A, B, C = matmul(32, 48, 16)
    sch = schedule([A, B, C])
    c = sch.get_block("C")
    i, j, k = sch.get_loops(c)
    j0, j1 = sch.split(j, [None, 8])
    sch.reorder(j0, i, k, j1)
    cache = sch.cache_read(c, "B", "global")
    sch.transform_layout(cache, ("write", 0), [1, 0])
    sch.compute_at(cache, j0)
    a0, a1 = sch.get_loops(cache)[-2:]
    sch.reorder(a1, a0)
    check(
        sch,
        [A, B, C],
        contains=[
            'B_global = T.alloc_buffer((8, 16), "float32")',
            "        for ax1 in range(8):\n"
            "            for ax0 in range(16):\n"
            "                B_global[ax1, ax0] = B[ax0, j_0 * 8 + ax1]",
            "C[i, j_0 * 8 + j_1] = C[i, j_0 * 8 + j_1] + A[i, k] * B_global[j_1, k]",
        ],
    )


def test_a_compacted_tile_keeps_its_permuted_layout():
    # C computed in tiles that D (fused after it) reads: the tile buffer is permuted too
    A, B, C, D = matmul_exp(16, 24, 8)
    sch = schedule([A, B, D])
    c = sch.get_block("C")
    i, j, k = sch.get_loops(c)
    i0, i1 = sch.split(i, [None, 4])
    sch.reorder(i0, j, k, i1)
    sch.reverse_compute_at(sch.get_block("D"), i0)
    sch.transform_layout(c, ("write", 0), lambda i, j: (j, i))
    sch.vectorize(i1)
    check(
        sch,
        [A, B, D],
        contains=[
            'C = T.alloc_buffer((24, 4), "float32")',
            "C[j, i_1] = C[j, i_1] + A[i_0 * 4 + i_1, k] * B[k, j]",
        ],
    )


def test_identity_permutation_leaves_the_program_unchanged():
    A, B, C = elementwise3(8, 8)
    plain = schedule([A, C]).mod.script()
    sch = schedule([A, C])
    sch.transform_layout(sch.get_block("B"), ("write", 0), lambda i, j: (i, j))
    assert sch.mod.script() == plain


def test_the_trace_prints_the_index_map_as_tvm_does():
    A, B, C = elementwise3(8, 8)
    sch = schedule([A, C])
    sch.transform_layout(sch.get_block("B"), ("write", 0), lambda i, j: (j, i))
    assert (
        'sch.transform_layout(block=b0, buffer=["write", 0], index_map=lambda i0, i1: (i1, i0))'
    ) in str(sch.trace)


def test_layouts_that_cannot_be_changed_are_refused_with_what_to_do():
    A, B, C = elementwise3(8, 8)
    sch = schedule([A, C])
    b, c = sch.get_block("B"), sch.get_block("C")
    assert_step_fails(
        sch,
        lambda: sch.transform_layout(c, ("write", 0), lambda i, j: (j, i)),
        "function argument.*cache_read or cache_write copy",
    )
    assert_step_fails(
        sch,
        lambda: sch.transform_layout(b, ("read", 0), lambda i, j: (j, i)),
        "'A' is an input of the function.*cache_read it",
    )
    assert_step_fails(
        sch,
        lambda: sch.transform_layout(b, ("write", 0), lambda i, j: (i + 1, j)),
        "only permutations of the axes",
    )
    assert_step_fails(
        sch,
        lambda: sch.transform_layout(b, ("write", 0), lambda i, j: (i, i)),
        "each of the 2 axes exactly once",
    )
    assert_step_fails(
        sch,
        lambda: sch.transform_layout(b, ("write", 0), [1, 0], pad_value=0.0),
        "pad_value is not supported",
    )
    assert_step_fails(
        sch, lambda: sch.transform_layout(b, ("write", 1), [1, 0]), r"use \('write', 0\)"
    )
    sch.storage_align(b, 0, 0, 16, 1)
    assert_step_fails(sch, lambda: sch.transform_layout(b, ("write", 0), [1, 0]), "storage_align")


def test_three_axes_rotated():
    A = te.placeholder((3, 5, 7), name="A")
    B = te.compute((3, 5, 7), lambda x, y, z: A[x, y, z] + 1.0, name="B")
    C = te.compute((3, 5, 7), lambda x, y, z: B[x, y, z] * B[x, y, 6 - z], name="C")
    sch = schedule([A, C])
    sch.transform_layout(sch.get_block("B"), ("write", 0), lambda x, y, z: (z, x, y))
    check(
        sch,
        [A, C],
        contains=[
            'B = T.alloc_buffer((7, 3, 5), "float32")',
            "B[z, x, y] = A[x, y, z] + T.float32(1.0)",
            "C[x_1, y_1, z_1] = B[z_1, x_1, y_1] * B[z_1 * -1 + 6, x_1, y_1]",
        ],
    )
