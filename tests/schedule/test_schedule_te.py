"""The TE-style schedule (``s = te.create_schedule(C.op); s[C].split(...)``).

Every TE call records block-style instructions, so each test also replays ``s.trace``
onto a ``tir.Schedule`` of the same tensors (``check_te``).
"""

from __future__ import annotations

import pytest
from schedule_helpers import chain, check_te, elementwise3, matmul, matmul_exp, row_sum

import ansor_lab as tvm
from ansor_lab import te
from ansor_lab.errors import IRError, ScheduleError
from ansor_lab.ir import nodes as N


def test_te_split_factor_and_nparts():
    A, B, C = matmul()
    s = te.create_schedule(C.op)
    xo, xi = s[C].split(C.op.axis[0], factor=16)
    yo, yi = s[C].split(C.op.axis[1], nparts=5)  # 48 = 5 * 10 - 2: guarded
    assert (xo.name, xi.name, xo.dom.extent.value, yi.dom.extent.value) == ("i_0", "i_1", 4, 10)
    check_te(
        s,
        [A, B, C],
        contains=[
            "for i_0 in range(4):",
            "for j_0 in range(5):",
            "if j_0 * 10 + j_1 < 48:",
        ],
    )
    assert "factors=[5, None]" in str(s.trace)


def test_te_tile_and_reorder():
    A, B, C = matmul()
    s = te.create_schedule(C.op)
    xo, yo, xi, yi = s[C].tile(C.op.axis[0], C.op.axis[1], 16, 8)
    (k,) = C.op.reduce_axis
    s[C].reorder(xo, yo, k, xi, yi)
    assert [lp.name for lp in s[C].leaf_iter_vars] == ["i_0", "j_0", "k", "i_1", "j_1"]
    check_te(
        s,
        [A, B, C],
        contains=[
            "for i_0 in range(4):\n        for j_0 in range(6):\n"
            "            for i_1 in range(16):\n                for j_1 in range(8):\n"
            "                    C[i_0 * 16 + i_1, j_0 * 8 + j_1] = T.float32(0.0)\n"
            "            for k in range(32):\n                for i_1 in range(16):",
        ],
    )


def test_te_fuse_parallel_vectorize_unroll():
    A, B, C = elementwise3()
    s = te.create_schedule(C.op)
    s[B].compute_inline()
    i, j = C.op.axis
    jo, ji = s[C].split(j, factor=8)
    jio, jii = s[C].split(ji, factor=2)
    f = s[C].fuse(i, jo)
    s[C].parallel(f)
    s[C].vectorize(jii)
    s[C].unroll(jio)
    assert f.name == "i_j_0_fused" and f.dom.extent.value == 512
    check_te(
        s,
        [A, C],
        contains=[
            "for i_j_0_fused in T.parallel(512):",
            "for j_1_0 in T.unroll(4):",
            "for j_1_1 in T.vectorized(2):",
        ],
    )


def test_te_pragma_adds_the_pragma_prefix():
    A, B, C = elementwise3(8, 8)
    s = te.create_schedule(C.op)
    xo, _ = s[C].split(C.op.axis[0], factor=4)
    s[C].pragma(xo, "auto_unroll_max_step", 16)
    s[C].pragma(xo, "pragma_unroll_explicit", 0)
    check_te(
        s,
        [A, C],
        contains=[
            'for i_0 in T.serial(2, annotations={"pragma_auto_unroll_max_step": 16, '
            '"pragma_unroll_explicit": 0}):',
        ],
    )


def test_te_compute_at_and_compute_root():
    A, B, C = elementwise3()
    s = te.create_schedule(C.op)
    xo, _ = s[C].split(C.op.axis[0], factor=8)
    s[B].compute_at(s[C], xo)
    check_te(
        s,
        [A, C],
        contains=[
            'for i_0 in range(8):\n        B = T.alloc_buffer((8, 64), "float32")',
        ],
    )
    s[B].compute_root()
    check_te(s, [A, C], contains=['    B = T.alloc_buffer((64, 64), "float32")'])


def test_te_compute_inline_of_the_chain_exp():
    A, B, E, C, D, F = chain(16)
    s = te.create_schedule(F.op)
    s[D].compute_inline()
    xo, yo, _, _ = s[F].tile(F.op.axis[0], F.op.axis[1], 4, 4)
    s[C].compute_at(s[F], xo)
    check_te(
        s,
        [A, B, E, F],
        contains=[
            'C = T.alloc_buffer((4, 16), "float32")',
            "T.exp(C[i_1, k2] * T.float32(0.0625)) * E[k2, j_0 * 4 + j_1]",
        ],
    )


def test_te_cache_read_shared_at_a_loop():
    A, B, C = matmul()
    s = te.create_schedule(C.op)
    AA = s.cache_read(A, "shared", [C])
    assert AA.name == "A_shared" and AA.shape == A.shape
    xo, _ = s[C].split(C.op.axis[0], factor=16)
    s[AA].compute_at(s[C], xo)
    check_te(
        s,
        [A, B, C],
        contains=[
            'A_shared = T.alloc_buffer((16, 32), "float32", scope="shared")',
            "A_shared[ax0, ax1] = A[i_0 * 16 + ax0, ax1]",
            "A_shared[i_1, k] * B[k, j]",
        ],
    )


def test_te_cache_write_local_accumulator_computed_at_the_tile():
    A, B, C = matmul()
    s = te.create_schedule(C.op)
    CL = s.cache_write(C, "local")
    assert CL.name == "C_local"
    xo, yo, _, _ = s[C].tile(C.op.axis[0], C.op.axis[1], 16, 8)
    s[CL].compute_at(s[C], yo)
    ko, ki = s[CL].split(s[CL].op.reduce_axis[0], factor=4)
    x, y = s[CL].op.axis
    s[CL].reorder(ko, ki, x, y)
    s[CL].vectorize(y)
    s[C].parallel(xo)
    check_te(
        s,
        [A, B, C],
        contains=[
            "for i_0 in T.parallel(4):",
            '            C_local = T.alloc_buffer((16, 8), "float32", scope="local")\n'
            '            # stage "C_local"',
            "for k_0 in range(8):\n                for k_1 in range(4):\n"
            "                    for i in range(16):\n"
            "                        for j in T.vectorized(8):",
            "C[i_0 * 16 + i_1, j_0 * 8 + j_1] = C_local[i_1, j_1]",
        ],
    )


def test_te_rfactor_computed_at_the_new_reduction_loop():
    A, C = row_sum(16, 64)
    s = te.create_schedule(C.op)
    _, ki = s[C].split(C.op.reduce_axis[0], factor=8)
    CF = s.rfactor(C, ki)
    assert CF.name == "C_rf" and CF.shape == (8, 16)
    check_te(s, [A, C], contains=['C_rf = T.alloc_buffer((8, 16), "float32")'])
    s[CF].compute_at(s[C], s[C].op.reduce_axis[0])
    check_te(
        s,
        [A, C],
        contains=[
            'for k_1_v in range(8):\n            C_rf = T.alloc_buffer((1, 1), "float32")',
            "C[i_1] = C[i_1] + C_rf[0, 0]",
        ],
    )


def test_te_rfactor_with_factor_axis():
    A, C = row_sum(16, 64)
    s = te.create_schedule(C.op)
    ko, _ = s[C].split(C.op.reduce_axis[0], nparts=4)
    CF = s.rfactor(C, ko, factor_axis=1)
    assert CF.shape == (16, 4)
    check_te(s, [A, C], contains=["C_rf[i, k_0] = C_rf[i, k_0] + A[i, k_0 * 16 + k_1]"])


def test_te_storage_align_set_scope_and_bind():
    A, B, C = elementwise3(16, 16)
    s = te.create_schedule(C.op)
    s[B].storage_align(B.op.axis[0], 8, 1)
    s[B].set_scope("shared")
    check_te(
        s,
        [A, C],
        contains=['B = T.alloc_buffer((16, 16), "float32", strides=(17, 1), scope="shared")'],
    )
    alloc = tvm.lower(s, [A, C])["main"].body
    assert isinstance(alloc, N.Allocate) and alloc.buffer.name == "B"
    assert alloc.buffer.strides == (17, 1)  # 17 % 8 == 1
    assert [x.kind for x in s.trace.insts][-2:] == ["StorageAlign", "SetScope"]
    s[C].bind(C.op.axis[0], te.thread_axis("blockIdx.x"))
    assert 'T.thread_binding(16, thread="blockIdx.x")' in tvm.lower(s, [A, C]).script()
    with pytest.raises(IRError, match="remove the bind"):
        tvm.build(s, [A, C], target="llvm")


def test_te_stage_repr_and_errors():
    A, B, C, D = matmul_exp(16, 16, 16)
    s = te.create_schedule(D.op)
    assert repr(s[C]) == "stage(C, loops=[i:16, j:16, k:16])"
    assert [st.name for st in s.stages] == ["C", "D"]
    xo, xi = s[D].split(D.op.axis[0], factor=4)
    with pytest.raises(ScheduleError, match="not a current loop"):
        s[D].split(D.op.axis[0], factor=2)  # replaced by xo, xi
    with pytest.raises(ScheduleError, match="placeholder"):
        s[A]  # noqa: B018
    with pytest.raises(ScheduleError, match="exactly one of factor= or nparts="):
        s[D].split(xo, factor=2, nparts=2)
    with pytest.raises(Exception, match=r"tvm.lower\(s, \[A, B, C\]\)"):
        tvm.lower(s)
