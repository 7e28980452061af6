"""Where blocks are computed: compute_at, reverse_compute_at, compute_inline,
reverse_compute_inline, compute_root."""

from __future__ import annotations

from schedule_helpers import chain, check, elementwise3, matmul_exp, schedule

from ansor_lab import te
from ansor_lab.schedule.attachment import INLINE, ROOT, After, At


def test_compute_at_allocates_the_region_inside_the_loop():
    A, B, C = elementwise3()
    sch = schedule([A, C])
    i, _ = sch.get_loops(sch.get_block("C"))
    io, _ = sch.split(i, [None, 8])
    sch.compute_at(sch.get_block("B"), io)
    assert sch.get(sch.get_block("B")).attach == At("C", "i_0")
    check(
        sch,
        [A, C],
        contains=[
            "    for i_0 in range(8):\n"
            '        B = T.alloc_buffer((8, 64), "float32")\n'
            '        # stage "B"\n'
            "        for i in range(8):\n"
            "            for j in range(64):\n"
            "                B[i, j] = A[i_0 * 8 + i, j] * T.float32(2.0)\n"
            "        for i_1 in range(8):\n"
            "            for j_1 in range(64):\n"
            "                C[i_0 * 8 + i_1, j_1] = B[i_1, j_1] + T.float32(1.0)",
        ],
        absent=["B = T.alloc_buffer((64, 64)"],
    )


def test_compute_at_innermost_loop_gives_a_one_element_buffer():
    A, B, C = elementwise3()
    sch = schedule([A, C])
    _, j = sch.get_loops(sch.get_block("C"))
    sch.compute_at(sch.get_block("B"), j)
    check(
        sch,
        [A, C],
        contains=[
            'B = T.alloc_buffer((1, 1), "float32")',
            # B's own loops have extent 1 and vanish (their names stay taken: i_1, j_1)
            "for j_1 in range(64):\n"
            '            B = T.alloc_buffer((1, 1), "float32")\n'
            '            # stage "B"\n'
            "            B[0, 0] = A[i_1, j_1] * T.float32(2.0)\n"
            "            C[i_1, j_1] = B[0, 0] + T.float32(1.0)",
        ],
    )


def test_compute_at_a_stencil_reads_a_halo_and_guards_the_edge():
    A = te.placeholder((32,), name="A")
    B = te.compute((32,), lambda i: A[i] * 2.0, name="B")
    C = te.compute((30,), lambda i: B[i] + B[i + 1] + B[i + 2], name="C")
    sch = schedule([A, C])
    (i,) = sch.get_loops(sch.get_block("C"))
    io, _ = sch.split(i, [None, 8])
    sch.compute_at(sch.get_block("B"), io)
    check(
        sch,
        [A, C],
        contains=[
            'B = T.alloc_buffer((10,), "float32")',  # 8 outputs need 8 + 2 inputs
            "for i in range(10):\n            if i_0 * 8 + i < 32:",
            "C[i_0 * 8 + i_1] = B[i_1] + B[i_1 + 1] + B[i_1 + 2]",
        ],
    )


def test_compute_at_through_a_transposed_read():
    A = te.placeholder((16, 24), name="A")
    B = te.compute((16, 24), lambda i, j: A[i, j] + 1.0, name="B")
    C = te.compute((24, 16), lambda i, j: B[j, i] * 3.0, name="C")
    sch = schedule([A, C])
    i, _ = sch.get_loops(sch.get_block("C"))
    io, _ = sch.split(i, [None, 5])
    sch.compute_at(sch.get_block("B"), io)
    check(
        sch,
        [A, C],
        contains=[
            'B = T.alloc_buffer((16, 5), "float32")',
            "B[i, j] = A[i, i_0 * 5 + j] + T.float32(1.0)",
            "C[i_0 * 5 + i_1, j_1] = B[j_1, i_1] * T.float32(3.0)",
        ],
    )


def test_compute_at_a_reduction_producer_into_its_consumer_tile():
    A, B, E, C, D, F = chain(16)
    sch = schedule([A, B, E, F])
    sch.compute_inline(sch.get_block("D"))
    i, j, _ = sch.get_loops(sch.get_block("F"))
    sch.compute_at(sch.get_block("C"), i)
    check(
        sch,
        [A, B, E, F],
        contains=[
            "for i_1 in range(16):\n"
            '        C = T.alloc_buffer((1, 16), "float32")\n'
            '        # stage "C"\n'
            "        for j in range(16):\n"
            "            C[0, j] = T.float32(0.0)\n"
            "            for k in range(16):\n"
            "                C[0, j] = C[0, j] + A[i_1, k] * B[k, j]",
            "T.exp(C[0, k2] * T.float32(0.0625)) * E[k2, j_1]",
        ],
    )


def test_compute_at_three_producers_of_one_consumer():
    A = te.placeholder((32, 32), name="A")
    B = te.compute((32, 32), lambda i, j: A[i, j] * 2.0, name="B")
    C = te.compute((32, 32), lambda i, j: B[i, j] + 1.0, name="C")
    D = te.compute((32, 32), lambda i, j: B[i, j] * 3.0, name="D")
    E = te.compute((32, 32), lambda i, j: C[i, j] + D[i, j], name="E")
    sch = schedule([A, E])
    i, _ = sch.get_loops(sch.get_block("E"))
    io, _ = sch.split(i, [None, 16])
    # consumers first: B may go inside only once all its readers are inside
    sch.compute_at(sch.get_block("C"), io)
    sch.compute_at(sch.get_block("D"), io)
    sch.compute_at(sch.get_block("B"), io)
    check(
        sch,
        [A, E],
        contains=[
            "    for i_0 in range(2):\n"
            '        B = T.alloc_buffer((16, 32), "float32")\n'
            '        C = T.alloc_buffer((16, 32), "float32")\n'
            '        D = T.alloc_buffer((16, 32), "float32")\n'
            '        # stage "B"',
        ],
    )


def test_compute_at_into_a_non_divisible_tile_guards_the_producer():
    A, B, C = elementwise3(30, 30)
    sch = schedule([A, C])
    i, j = sch.get_loops(sch.get_block("C"))
    _, yo, _, _ = sch.tile(i, j, 8, 8)
    sch.compute_at(sch.get_block("B"), yo)
    check(
        sch,
        [A, C],
        contains=[
            'B = T.alloc_buffer((8, 8), "float32")',
            "if i_0 * 8 + i < 30 and j_0 * 8 + j < 30:",
        ],
    )


def test_reverse_compute_at_fuses_the_epilogue_into_the_matmul_tile():
    A, B, C, D = matmul_exp()
    sch = schedule([A, B, D])
    i, j, _ = sch.get_loops(sch.get_block("C"))
    _, yo, _, _ = sch.tile(i, j, 16, 8)
    sch.reverse_compute_at(sch.get_block("D"), yo)
    assert sch.get(sch.get_block("D")).attach == After("C", "j_0")
    check(
        sch,
        [A, B, D],
        contains=[
            # C shrinks to the tile, computed then consumed inside the (i_0, j_0) loops
            "    for i_0 in range(4):\n"
            "        for j_0 in range(6):\n"
            '            C = T.alloc_buffer((16, 8), "float32")\n'
            "            for i_1 in range(16):",
            '            # stage "D"\n'
            "            for i in range(16):\n"
            "                for j in range(8):\n"
            "                    D[i_0 * 16 + i, j_0 * 8 + j] = "
            "T.exp(C[i, j] * T.float32(0.03125))",
        ],
    )


def test_reverse_compute_at_a_non_divisible_tile():
    A, B, C, D = matmul_exp()
    sch = schedule([A, B, D])
    i, j, _ = sch.get_loops(sch.get_block("C"))
    _, yo, _, _ = sch.tile(i, j, 10, 7)
    sch.reverse_compute_at(sch.get_block("D"), yo)
    check(
        sch,
        [A, B, D],
        contains=[
            'C = T.alloc_buffer((10, 7), "float32")',
            "if i_0 * 10 + i < 64 and j_0 * 7 + j < 48:\n"
            "                        D[i_0 * 10 + i, j_0 * 7 + j]",
        ],
    )


def test_reverse_compute_at_then_schedule_the_consumer_loops():
    A, B, C, D = matmul_exp()
    sch = schedule([A, B, D])
    i, j, _ = sch.get_loops(sch.get_block("C"))
    xo, yo, _, _ = sch.tile(i, j, 16, 8)
    sch.parallel(xo)
    d = sch.get_block("D")
    sch.reverse_compute_at(d, yo)
    loops = sch.get_loops(d)
    assert [sch.get(x).name for x in loops] == ["i_0", "j_0", "i", "j"]
    sch.vectorize(loops[-1])
    check(sch, [A, B, D], contains=["for i_0 in T.parallel(4):", "for j in T.vectorized(8):"])


def test_compute_inline_substitutes_into_every_reader():
    A = te.placeholder((16, 16), name="A")
    B = te.compute((16, 16), lambda i, j: A[i, j] * 2.0, name="B")
    C = te.compute((16, 16), lambda i, j: B[i, j] + B[j, i], name="C")
    D = te.compute((16, 16), lambda i, j: B[i, j] - C[i, j], name="D")
    sch = schedule([A, D])
    sch.compute_inline(sch.get_block("B"))
    assert sch.get(sch.get_block("B")).attach == INLINE
    check(
        sch,
        [A, D],
        contains=[
            "C[i, j] = A[i, j] * T.float32(2.0) + A[j, i] * T.float32(2.0)",
            "D[i_1, j_1] = A[i_1, j_1] * T.float32(2.0) - C[i_1, j_1]",
        ],
        absent=["B = T.alloc_buffer", '# stage "B"'],
    )


def test_compute_inline_exp_into_the_second_matmul():
    A, B, E, C, D, F = chain(16)
    sch = schedule([A, B, E, F])
    sch.compute_inline(sch.get_block("D"))
    check(
        sch,
        [A, B, E, F],
        contains=[
            "F[i_1, j_1] = F[i_1, j_1] + T.exp(C[i_1, k2] * T.float32(0.0625)) * E[k2, j_1]",
        ],
        absent=["D = T.alloc_buffer"],
    )


def test_reverse_compute_inline_keeps_the_producer_schedule():
    A, B, C = elementwise3(32, 32)
    sch = schedule([A, C])
    i, j = sch.get_loops(sch.get_block("B"))
    io, _ = sch.split(i, [None, 8])
    sch.parallel(io)
    _, ji = sch.split(j, [None, 6])
    sch.vectorize(ji)
    sch.reverse_compute_inline(sch.get_block("C"))
    assert [repr(sch.get(x)) for x in sch.get_loops(sch.get_block("C"))] == [
        "Loop(C.i_0, extent=4, spatial, parallel)",
        "Loop(C.i_1, extent=8, spatial)",
        "Loop(C.j_0, extent=6, spatial)",
        "Loop(C.j_1, extent=6, spatial, vectorize)",
    ]
    check(
        sch,
        [A, C],
        contains=[
            "for i_0 in T.parallel(4):",
            "for j_1 in T.vectorized(6):",
            "C[i_0 * 8 + i_1, j_0 * 6 + j_1] = A[i_0 * 8 + i_1, j_0 * 6 + j_1] * T.float32(2.0)"
            " + T.float32(1.0)",
        ],
        absent=['# stage "B"'],
    )


def test_compute_root_undoes_compute_at():
    A, B, C = elementwise3()
    sch = schedule([A, C])
    i, _ = sch.get_loops(sch.get_block("C"))
    io, _ = sch.split(i, [None, 8])
    b = sch.get_block("B")
    sch.compute_at(b, io)
    sch.compute_root(b)
    assert sch.get(b).attach == ROOT
    check(
        sch,
        [A, C],
        contains=[
            '    B = T.alloc_buffer((64, 64), "float32")\n'
            '    # stage "B"\n'
            "    for i in range(64):\n"
            "        for j in range(64):",
        ],
    )


def test_compute_root_after_reverse_compute_at():
    A, B, C, D = matmul_exp()
    sch = schedule([A, B, D])
    i, _, _ = sch.get_loops(sch.get_block("C"))
    d = sch.get_block("D")
    sch.reverse_compute_at(d, i)
    sch.compute_root(d)
    check(
        sch,
        [A, B, D],
        contains=[
            '    # stage "D"\n    for i_1 in range(64):\n        for j_1 in range(48):',
        ],
    )


def test_compute_at_a_fused_loop_is_correct():
    A, B, C = elementwise3(30, 30)
    sch = schedule([A, C])
    i, j = sch.get_loops(sch.get_block("C"))
    fo, _ = sch.split(sch.fuse(i, j), [None, 16])
    sch.compute_at(sch.get_block("B"), fo)
    # (the region of a fused index is not affine: B is not shrunk below the whole tensor)
    check(
        sch,
        [A, C],
        contains=[
            "for i_j_fused_0 in range(57):\n        B = T.alloc_buffer(",
        ],
    )


def test_a_producer_split_before_compute_at_keeps_its_split():
    A, B, C = elementwise3(32, 32)
    sch = schedule([A, C])
    b = sch.get_block("B")
    bi, _ = sch.get_loops(b)
    sch.split(bi, [None, 2])
    i, _ = sch.get_loops(sch.get_block("C"))
    io, ii = sch.split(i, [None, 4])
    sch.compute_at(b, io)
    assert [sch.get(x).extent for x in sch.get_loops(b)] == [8, 2, 2, 32]
    check(
        sch,
        [A, C],
        contains=[
            'B = T.alloc_buffer((4, 32), "float32")',
            "B[i_0 * 2 + i_1, j] = A[i_0_1 * 4 + i_0 * 2 + i_1, j]",
        ],
    )
    sch.compute_at(b, ii)  # move it further in: the region shrinks to one row
    sch.compute_root(b)  # and back out: the whole tensor again
    check(sch, [A, C], contains=['    B = T.alloc_buffer((32, 32), "float32")'])
