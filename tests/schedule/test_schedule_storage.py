"""Caches, rfactor and storage: cache_read, cache_write, rfactor, decompose_reduction,
storage_align, set_scope."""

from __future__ import annotations

from schedule_helpers import chain, check, elementwise3, matmul, matmul_exp, row_sum, schedule

from ansor_lab import te
from ansor_lab.ir import nodes as N

# -- cache_read -----------------------------------------------------------------------


def test_cache_read_by_index_adds_a_copy_stage():
    A, B, C = elementwise3()
    sch = schedule([A, C])
    cache = sch.cache_read(sch.get_block("B"), 0, "shared")
    info = sch.get(cache)
    assert (info.name, info.writes, info.scope) == ("A_shared", "A_shared", "shared")
    check(
        sch,
        [A, C],
        contains=[
            '    A_shared = T.alloc_buffer((64, 64), "float32", scope="shared")',
            '    # stage "A_shared"\n'
            "    for ax0 in range(64):\n"
            "        for ax1 in range(64):\n"
            "            A_shared[ax0, ax1] = A[ax0, ax1]",
            "B[i, j] = A_shared[i, j] * T.float32(2.0)",
        ],
    )


def test_cache_read_by_name_of_an_intermediate_with_extra_consumers():
    A, B, E, C, D, F = chain(16)
    sch = schedule([A, B, E, F])
    cache = sch.cache_read(sch.get_block("C"), "B", "local")
    assert sch.get(cache).name == "B_local"
    shared = sch.cache_read(sch.get_block("D"), "C", "shared")
    assert sch.get(shared).name == "C_shared"
    check(
        sch,
        [A, B, E, F],
        contains=[
            'B_local = T.alloc_buffer((16, 16), "float32", scope="local")',
            "C[i, j] = C[i, j] + A[i, k] * B_local[k, j]",
            # a computed tensor's cache copies with that tensor's axis names
            "C_shared[i_1, j_1] = C[i_1, j_1]",
            "D[i_2, j_2] = T.exp(C_shared[i_2, j_2]",
        ],
    )


def test_cache_read_shared_by_two_consumer_blocks():
    A = te.placeholder((16, 16), name="A")
    B = te.compute((16, 16), lambda i, j: A[i, j] * 2.0, name="B")
    C = te.compute((16, 16), lambda i, j: A[j, i] + B[i, j], name="C")
    sch = schedule([A, C])
    sch.cache_read(sch.get_block("B"), "A", "shared", consumer_blocks=[sch.get_block("C")])
    text = check(
        sch,
        [A, C],
        contains=[
            "B[i, j] = A_shared[i, j] * T.float32(2.0)",
            "C[i_1, j_1] = A_shared[j_1, i_1] + B[i_1, j_1]",
        ],
    )
    assert text.count("A_shared[ax0, ax1] = A[ax0, ax1]") == 1


def test_cache_read_computed_at_the_reduction_tile():
    A, B, C = matmul()
    sch = schedule([A, B, C])
    c = sch.get_block("C")
    a_shared = sch.cache_read(c, 0, "shared")
    b_local = sch.cache_read(c, 1, "local")
    i, j, k = sch.get_loops(c)
    xo, yo, _, _ = sch.tile(i, j, 16, 8)
    ko, ki = sch.split(k, [None, 8])
    loops = sch.get_loops(c)
    sch.reorder(loops[0], loops[1], ko, ki, loops[2], loops[3])
    sch.compute_at(a_shared, ko)
    sch.compute_at(b_local, ki)
    check(
        sch,
        [A, B, C],
        contains=[
            "            for k_0 in range(4):\n"
            '                A_shared = T.alloc_buffer((16, 8), "float32", scope="shared")\n'
            '                # stage "A_shared"\n'
            "                for ax0 in range(16):\n"
            "                    for ax1 in range(8):\n"
            "                        A_shared[ax0, ax1] = A[i_0 * 16 + ax0, k_0 * 8 + ax1]\n"
            "                for k_1 in range(8):",
            'B_local = T.alloc_buffer((1, 8), "float32", scope="local")',
            "B_local[0, ax1_1] = B[k_0 * 8 + k_1, j_0 * 8 + ax1_1]",
        ],
    )


# -- cache_write ----------------------------------------------------------------------


def test_cache_write_block_style_keeps_the_loops_and_copies_out():
    A, B, C = matmul()
    sch = schedule([A, B, C])
    c = sch.get_block("C")
    copy = sch.cache_write(c, 0, "local")
    # TIR semantics: block "C" keeps computing (into C_local); the new block copies out
    assert sch.get(c).writes == "C_local" and sch.get(c).scope == "local"
    assert (sch.get(copy).name, sch.get(copy).writes) == ("C_local", "C")
    check(
        sch,
        [A, B, C],
        contains=[
            'C_local = T.alloc_buffer((64, 48), "float32", scope="local")',
            '    # stage "C"\n'
            "    for i in range(64):\n"
            "        for j in range(48):\n"
            "            C_local[i, j] = T.float32(0.0)",
            '    # stage "C_local"\n'
            "    for i_1 in range(64):\n"
            "        for j_1 in range(48):\n"
            "            C[i_1, j_1] = C_local[i_1, j_1]",
        ],
    )


def test_cache_write_local_tile_with_reverse_compute_at():
    A, B, C = matmul()
    sch = schedule([A, B, C])
    c = sch.get_block("C")
    copy = sch.cache_write(c, 0, "local")
    i, j, k = sch.get_loops(c)
    xo, yo, xi, yi = sch.tile(i, j, 16, 8)
    sch.reorder(xo, yo, k, xi, yi)
    sch.reverse_compute_at(copy, yo)
    check(
        sch,
        [A, B, C],
        contains=[
            # the local accumulator shrinks to one tile, allocated inside the tile loops
            "        for j_0 in range(6):\n"
            '            C_local = T.alloc_buffer((16, 8), "float32", scope="local")',
            "C_local[i_1, j_1] = C_local[i_1, j_1] + A[i_0 * 16 + i_1, k] * B[k, j_0 * 8 + j_1]",
            '            # stage "C_local"\n'
            "            for i in range(16):\n"
            "                for j in range(8):\n"
            "                    C[i_0 * 16 + i, j_0 * 8 + j] = C_local[i, j]",
        ],
    )


def test_cache_write_te_style_on_a_tir_schedule():
    A, B, C = matmul(16, 16, 16)
    sch = schedule([A, B, C])
    compute = sch.cache_write(sch.get_block("C"), 0, "local", te_style=True)
    assert sch.get(compute).name == "C_local"
    check(
        sch,
        [A, B, C],
        contains=[
            '    # stage "C_local"\n    for i in range(16):',
            "C_local[i, j] = C_local[i, j] + A[i, k] * B[k, j]",
            "C[i_1, j_1] = C_local[i_1, j_1]",
        ],
    )


# -- rfactor --------------------------------------------------------------------------


def test_rfactor_inner_split_gives_a_partial_sum_buffer():
    A, C = row_sum(16, 64)
    sch = schedule([A, C])
    _, k = sch.get_loops(sch.get_block("C"))
    _, ki = sch.split(k, [None, 8])
    rf = sch.rfactor(ki, 0)
    assert sch.get(rf).name == "C_rf"
    assert [(sch.get(x).name, sch.get(x).extent, sch.get(x).kind) for x in sch.get_loops(rf)] == [
        ("k_1", 8, "spatial"),
        ("i", 16, "spatial"),
        ("k_0", 8, "reduce"),
    ]
    assert [sch.get(x).name for x in sch.get_loops(sch.get_block("C"))] == ["i", "k_1_v"]
    check(
        sch,
        [A, C],
        contains=[
            'C_rf = T.alloc_buffer((8, 16), "float32")',
            "C_rf[k_1, i] = C_rf[k_1, i] + A[i, k_0 * 8 + k_1]",
            "for k_1_v in range(8):\n            C[i_1] = C[i_1] + C_rf[k_1_v, i_1]",
        ],
    )


def test_rfactor_factor_axis_last_and_non_divisible_split():
    A, C = row_sum(16, 60)
    sch = schedule([A, C])
    _, k = sch.get_loops(sch.get_block("C"))
    _, ki = sch.split(k, [None, 8])
    rf = sch.rfactor(ki, 1)
    i, ki2, ko = sch.get_loops(rf)
    sch.reorder(ko, ki2)
    sch.vectorize(ki2)  # the partial sums are a spatial axis now
    check(
        sch,
        [A, C],
        contains=[
            'C_rf = T.alloc_buffer((16, 8), "float32")',
            "for k_0 in range(8):\n"
            "            for k_1 in T.vectorized(8):\n"
            "                if k_0 * 8 + k_1 < 60:\n"
            "                    C_rf[i, k_1] = C_rf[i, k_1] + A[i, k_0 * 8 + k_1]",
            "C[i_1] = C[i_1] + C_rf[i_1, k_1_v]",
        ],
    )


def test_rfactor_of_a_fused_two_axis_max_reduction():
    A = te.placeholder((8, 12, 10), name="A")
    r1 = te.reduce_axis((0, 12), name="r")
    r2 = te.reduce_axis((0, 10), name="s")
    C = te.compute((8,), lambda i: te.max(A[i, r1, r2], axis=[r1, r2]), name="C")
    sch = schedule([A, C])
    _, a, b = sch.get_loops(sch.get_block("C"))
    f = sch.fuse(a, b)
    _, fi = sch.split(f, [None, 16])
    sch.rfactor(fi, 0)
    check(
        sch,
        [A, C],
        contains=[
            'C_rf = T.alloc_buffer((16, 8), "float32")',
            "C_rf[r_s_fused_1, i] = T.float32(-inf)",
            "if r_s_fused_0 * 16 + r_s_fused_1 < 120:",
            "C[i_1] = T.max(C[i_1], C_rf[r_s_fused_1_v, i_1])",
        ],
    )


def test_rfactor_of_the_whole_reduction_loop():
    A, C = row_sum(8, 12)
    sch = schedule([A, C])
    _, k = sch.get_loops(sch.get_block("C"))
    sch.rfactor(k, 0)
    check(
        sch,
        [A, C],
        contains=[
            'C_rf = T.alloc_buffer((12, 8), "float32")',
            "C_rf[k, i] = A[i, k]",
        ],
    )


# -- decompose_reduction --------------------------------------------------------------


def test_decompose_reduction_at_the_outer_loop_makes_an_init_nest():
    A, B, C = matmul(16, 16, 16)
    sch = schedule([A, B, C])
    c = sch.get_block("C")
    i, _, _ = sch.get_loops(c)
    sch.decompose_reduction(c, i)
    check(
        sch,
        [A, B, C],
        contains=[
            '    # stage "C"\n'
            "    for i in range(16):\n"
            "        for j in range(16):\n"
            "            C[i, j] = T.float32(0.0)\n"
            "    for i in range(16):\n"
            "        for j in range(16):\n"
            "            for k in range(16):",
        ],
    )
    assert "sch.decompose_reduction(block=b0, loop=l1)" in str(sch.trace)


def test_decompose_reduction_before_a_reordered_reduction_tile():
    A, B, C = matmul(16, 16, 16)
    sch = schedule([A, B, C])
    c = sch.get_block("C")
    i, j, k = sch.get_loops(c)
    ko, ki = sch.split(k, [None, 4])
    sch.reorder(i, ko, j, ki)
    sch.decompose_reduction(c, ko)
    check(
        sch,
        [A, B, C],
        contains=[
            "    for i in range(16):\n"
            "        for j in range(16):\n"
            "            C[i, j] = T.float32(0.0)\n"
            "        for k_0 in range(4):\n"
            "            for j in range(16):\n"
            "                for k_1 in range(4):",
        ],
    )


def test_decompose_reduction_follows_later_splits():
    A, B, C = matmul(16, 16, 16)
    sch = schedule([A, B, C])
    c = sch.get_block("C")
    _, j, _ = sch.get_loops(c)
    sch.decompose_reduction(c, j)
    sch.split(j, [None, 4])
    check(
        sch,
        [A, B, C],
        contains=[
            "        for j_0 in range(4):\n"
            "            for j_1 in range(4):\n"
            "                C[i, j_0 * 4 + j_1] = T.float32(0.0)\n"
            "        for j_0 in range(4):",
        ],
    )


# -- storage_align / set_scope --------------------------------------------------------


def _allocations(stmt: N.Stmt) -> dict:
    out = {}

    def visit(s):
        if isinstance(s, N.Allocate):
            out[s.buffer.name] = s.buffer
            visit(s.body)
        elif isinstance(s, N.SeqStmt):
            for x in s.seq:
                visit(x)
        elif isinstance(s, (N.For, N.Block)):
            visit(s.body)
        elif isinstance(s, N.IfThenElse):
            visit(s.then_case)

    visit(stmt)
    return out


def test_storage_align_pads_the_row_stride():
    A, B, C = elementwise3(16, 16)
    sch = schedule([A, C])
    sch.storage_align(sch.get_block("B"), 0, 0, 16, 3)
    check(sch, [A, C], contains=['B = T.alloc_buffer((16, 16), "float32", strides=(19, 1))'])
    buf = _allocations(sch.mod["main"].body)["B"]
    assert buf.strides == (19, 1)  # the first stride >= 16 with stride % 16 == 3
    assert buf.size == 16 * 19


def test_storage_align_of_a_shared_cache_tile():
    A, B, C = matmul(32, 32, 32)
    sch = schedule([A, B, C])
    c = sch.get_block("C")
    a_shared = sch.cache_read(c, 0, "shared")
    sch.storage_align(a_shared, 0, 0, 32, 1)
    i, _, _ = sch.get_loops(c)
    io, _ = sch.split(i, [None, 8])
    sch.compute_at(a_shared, io)
    check(
        sch,
        [A, B, C],
        contains=['A_shared = T.alloc_buffer((8, 32), "float32", strides=(33, 1), scope="shared")'],
    )
    assert _allocations(sch.mod["main"].body)["A_shared"].strides == (33, 1)


def test_set_scope_of_an_intermediate():
    A, B, C = elementwise3(16, 16)
    sch = schedule([A, C])
    b = sch.get_block("B")
    sch.set_scope(b, 0, "shared")
    assert sch.get(b).scope == "shared"
    check(sch, [A, C], contains=['B = T.alloc_buffer((16, 16), "float32", scope="shared")'])
    sch.set_scope(b, 0, "local")
    check(sch, [A, C], contains=['B = T.alloc_buffer((16, 16), "float32", scope="local")'])


def test_decompose_reduction_at_the_outer_loop_then_reverse_compute_at_it():
    # regression: the intermediate was compacted into loop i although the decomposed init
    # nest runs before that loop, so lowering produced IR reading an unallocated buffer
    A, B, C, D = matmul_exp(32, 32, 32)
    sch = schedule([A, B, D])
    c = sch.get_block("C")
    i, _, _ = sch.get_loops(c)
    sch.decompose_reduction(c, i)
    sch.reverse_compute_at(sch.get_block("D"), i)
    check(
        sch,
        [A, B, D],
        contains=[
            '    C = T.alloc_buffer((32, 32), "float32")',
            "            C[i, j] = T.float32(0.0)\n    for i in range(32):",
            '        # stage "D"\n        for j_1 in range(32):',
        ],
    )
