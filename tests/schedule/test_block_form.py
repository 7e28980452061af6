"""A schedule's module is TVM's TensorIR block form: printed, compared, parsed, built.

``sch.mod`` prints (``script`` / ``show`` / ``str``) the form TVM's schedule module has
before lowering, and ``tvm.ir.assert_structural_equal(sch.mod, Expected)`` compares
that form with a hand-written ``Expected`` the way TVM tutorials do. The Expected texts
below are written as TVM prints them (its names: ``vi``, ``ax0``, ``T.float32(0)``,
``T.alloc_buffer`` without a dtype); the frozen text of our own printing for every
primitive is in ``tests/golden/primitives``. The function still builds its optimized
lowering (``tvm.lower(sch.mod)`` prints that loop form).
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from schedule_helpers import run_and_compare

import ansor_lab as tvm
from ansor_lab import te, tir
from ansor_lab.script import from_source, ir as I, tir as T  # noqa: N812 - TVM's names


@I.ir_module
class MyModule:
    """The MLC course's mm_relu, as the course writes it."""

    @T.prim_func
    def mm_relu(
        A: T.Buffer((128, 128), "float32"),
        B: T.Buffer((128, 128), "float32"),
        C: T.Buffer((128, 128), "float32"),
    ):
        T.func_attr({"global_symbol": "mm_relu", "tir.noalias": True})
        Y = T.alloc_buffer((128, 128), dtype="float32")
        for i, j, k in T.grid(128, 128, 128):
            with T.block("Y"):
                vi = T.axis.spatial(128, i)
                vj = T.axis.spatial(128, j)
                vk = T.axis.reduce(128, k)
                with T.init():
                    Y[vi, vj] = T.float32(0)
                Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
        for i, j in T.grid(128, 128):
            with T.block("C"):
                vi = T.axis.spatial(128, i)
                vj = T.axis.spatial(128, j)
                C[vi, vj] = T.max(Y[vi, vj], T.float32(0))


@I.ir_module
class Expected:
    """What the MLC course shows after split / reorder / reverse_compute_at / decompose."""

    @T.prim_func
    def mm_relu(
        A: T.Buffer((128, 128), "float32"),
        B: T.Buffer((128, 128), "float32"),
        C: T.Buffer((128, 128), "float32"),
    ):
        T.func_attr({"global_symbol": "mm_relu", "tir.noalias": T.bool(True)})
        # with T.block("root"):
        Y = T.alloc_buffer((128, 128))
        for i, j_0 in T.grid(128, 32):
            for j_1_init in range(4):
                with T.block("Y_init"):
                    vi = T.axis.spatial(128, i)
                    vj = T.axis.spatial(128, j_0 * 4 + j_1_init)
                    T.reads()
                    T.writes(Y[vi, vj])
                    Y[vi, vj] = T.float32(0)
            for k, j_1 in T.grid(128, 4):
                with T.block("Y_update"):
                    vi = T.axis.spatial(128, i)
                    vj = T.axis.spatial(128, j_0 * 4 + j_1)
                    vk = T.axis.reduce(128, k)
                    T.reads(Y[vi, vj], A[vi, vk], B[vk, vj])
                    T.writes(Y[vi, vj])
                    Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
            for ax0 in range(4):
                with T.block("C"):
                    vi = T.axis.spatial(128, i)
                    vj = T.axis.spatial(128, j_0 * 4 + ax0)
                    T.reads(Y[vi, vj])
                    T.writes(C[vi, vj])
                    C[vi, vj] = T.max(Y[vi, vj], T.float32(0))


def _mlc_schedule() -> tir.Schedule:
    sch = tir.Schedule(MyModule)
    block_Y = sch.get_block("Y", func_name="mm_relu")
    i, j, k = sch.get_loops(block_Y)
    j0, j1 = sch.split(j, factors=[None, 4])
    sch.reorder(j0, k, j1)
    sch.reverse_compute_at(sch.get_block("C", "mm_relu"), j0)
    sch.decompose_reduction(block_Y, k)
    return sch


def test_mlc_mm_relu_schedule_equals_the_course_expected_module():
    # before any step, the schedule's module is the module it was made from
    tvm.ir.assert_structural_equal(tir.Schedule(MyModule).mod, MyModule)
    sch = _mlc_schedule()
    tvm.ir.assert_structural_equal(sch.mod, Expected)
    assert tvm.ir.structural_equal(sch.mod["mm_relu"], Expected["mm_relu"])
    # one step less is a different program, and the message says where
    fewer = tir.Schedule(MyModule)
    j0, j1 = fewer.split(fewer.get_loops(fewer.get_block("Y"))[1], factors=[None, 4])
    assert not tvm.ir.structural_equal(fewer.mod, Expected)
    with pytest.raises(AssertionError, match="body"):
        tvm.ir.assert_structural_equal(fewer.mod, Expected)


def test_mlc_printed_module_parses_back_builds_and_matches_numpy():
    sch = _mlc_schedule()
    text = sch.mod.script()
    for line in ('with T.block("Y_init"):', 'with T.block("Y_update"):', "T.reads()"):
        assert line in text
    assert "vj = T.axis.spatial(128, j_0 * 4 + j_1)".replace("vj", "v_j") in text
    parsed = from_source(text)
    tvm.ir.assert_structural_equal(sch.mod["mm_relu"], parsed)
    rng = np.random.default_rng(0)
    a, b = (rng.uniform(-1, 1, (128, 128)).astype("float32") for _ in range(2))
    want = np.maximum(a @ b, 0)
    for program in (sch.mod, parsed):
        c = np.full((128, 128), np.nan, "float32")
        tvm.build(program, target="llvm")(a, b, c)
        np.testing.assert_allclose(c, want, rtol=1e-4, atol=1e-4)


def _scale_add() -> list:
    A = te.placeholder((64, 64), name="A")
    B = te.compute((64, 64), lambda i, j: A[i, j] * 2.0, name="B")
    C = te.compute((64, 64), lambda i, j: B[i, j] + 1.0, name="C")
    return [A, B, C]


COMPUTE_AT_PARALLEL_VECTORIZE = """
@T.prim_func
def main(A: T.Buffer((64, 64), "float32"), C: T.Buffer((64, 64), "float32")):
    B = T.alloc_buffer((64, 64))
    for i_0 in T.parallel(4):
        for ax0, ax1 in T.grid(16, 64):
            with T.block("B"):
                v_i = T.axis.spatial(64, i_0 * 16 + ax0)
                v_j = T.axis.spatial(64, ax1)
                T.reads(A[v_i, v_j])
                T.writes(B[v_i, v_j])
                B[v_i, v_j] = A[v_i, v_j] * T.float32(2)
        for i_1 in range(16):
            for j in T.vectorized(64):
                with T.block("C"):
                    v_i = T.axis.spatial(64, i_0 * 16 + i_1)
                    v_j = T.axis.spatial(64, j)
                    T.reads(B[v_i, v_j])
                    T.writes(C[v_i, v_j])
                    C[v_i, v_j] = B[v_i, v_j] + T.float32(1)
"""


def test_compute_at_parallel_vectorize_as_tvm_prints_it():
    A, B, C = _scale_add()
    sch = tir.Schedule(te.create_prim_func([A, C]))
    i, j = sch.get_loops(sch.get_block("C"))
    i0, i1 = sch.split(i, [None, 16])
    sch.compute_at(sch.get_block("B"), i0)
    sch.parallel(i0)
    sch.vectorize(j)
    tvm.ir.assert_structural_equal(sch.mod["main"], from_source(COMPUTE_AT_PARALLEL_VECTORIZE))
    run_and_compare(tvm.build(from_source(sch.mod.script()), target="llvm"), [A, C])


CACHE_WRITE_NON_DIVIDING_SPLIT = """
@T.prim_func
def main(A: T.Buffer((64, 32), "float32"), B: T.Buffer((32, 48), "float32"),
         C: T.Buffer((64, 48), "float32")):
    C_local = T.alloc_buffer((64, 48), scope="local")
    for i_0, i_1, j, k in T.grid(7, 10, 48, 32):
        with T.block("C"):
            v_i = T.axis.spatial(64, i_0 * 10 + i_1)
            v_j, v_k = T.axis.remap("SR", [j, k])
            T.where(i_0 * 10 + i_1 < 64)
            T.reads(A[v_i, v_k], B[v_k, v_j])
            T.writes(C_local[v_i, v_j])
            with T.init():
                C_local[v_i, v_j] = T.float32(0)
            C_local[v_i, v_j] = C_local[v_i, v_j] + A[v_i, v_k] * B[v_k, v_j]
    for ax0, ax1 in T.grid(64, 48):
        with T.block("C_local"):
            v0, v1 = T.axis.remap("SS", [ax0, ax1])
            T.reads(C_local[v0, v1])
            T.writes(C[v0, v1])
            C[v0, v1] = C_local[v0, v1]
"""


def test_cache_write_and_a_guarded_split_as_tvm_prints_them():
    A = te.placeholder((64, 32), name="A")
    B = te.placeholder((32, 48), name="B")
    k = te.reduce_axis((0, 32), name="k")
    C = te.compute((64, 48), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    sch = tir.Schedule(te.create_prim_func([A, B, C]))
    block = sch.get_block("C")
    sch.cache_write(block, 0, "local")
    sch.split(sch.get_loops(block)[0], [None, 10])
    tvm.ir.assert_structural_equal(sch.mod["main"], from_source(CACHE_WRITE_NON_DIVIDING_SPLIT))
    assert "T.where(i_0 * 10 + i_1 < 64)" in sch.mod.script()
    run_and_compare(tvm.build(from_source(sch.mod.script()), target="llvm"), [A, B, C])


RFACTOR = """
@T.prim_func
def main(X: T.Buffer((16, 64), "float32"), Y: T.Buffer((16,), "float32")):
    Y_rf = T.alloc_buffer((4, 16))
    for k_1, i, k_0 in T.grid(4, 16, 16):
        with T.block("Y_rf"):
            vk_1, vi, vk_0 = T.axis.remap("SSR", [k_1, i, k_0])
            T.reads(X[vi, vk_0 * 4 + vk_1])
            T.writes(Y_rf[vk_1, vi])
            with T.init():
                Y_rf[vk_1, vi] = T.float32(0)
            Y_rf[vk_1, vi] = Y_rf[vk_1, vi] + X[vi, vk_0 * 4 + vk_1]
    for ax0, ax1 in T.grid(16, 4):
        with T.block("Y"):
            vi, vk_1 = T.axis.remap("SR", [ax0, ax1])
            T.reads(Y_rf[vk_1, vi])
            T.writes(Y[vi])
            with T.init():
                Y[vi] = T.float32(0)
            Y[vi] = Y[vi] + Y_rf[vk_1, vi]
"""


def test_rfactor_as_tvm_prints_it():
    X = te.placeholder((16, 64), name="X")
    k = te.reduce_axis((0, 64), name="k")
    Y = te.compute((16,), lambda i: te.sum(X[i, k], axis=k), name="Y")
    sch = tir.Schedule(te.create_prim_func([X, Y]))
    _, kk = sch.get_loops(sch.get_block("Y"))
    _, k1 = sch.split(kk, [None, 4])
    sch.rfactor(k1, 0)
    tvm.ir.assert_structural_equal(sch.mod["main"], from_source(RFACTOR))


def test_build_lower_and_pickling_keep_the_optimized_lowering():
    A, B, C = _scale_add()
    sch = tir.Schedule(te.create_prim_func([A, C]))
    i, _ = sch.get_loops(sch.get_block("C"))
    i0, _ = sch.split(i, [None, 16])
    sch.compute_at(sch.get_block("B"), i0)
    func = sch.mod["main"]
    lowered = tvm.lower(sch.mod)["main"]
    assert lowered.body is func.body  # tvm.build compiles exactly what it did before
    text = str(tvm.lower(sch.mod))
    assert 'B = T.alloc_buffer((16, 64), "float32")' in text and "T.block" not in text
    assert 'B = T.alloc_buffer((64, 64), "float32")' in str(sch.mod)  # not compacted
    again = pickle.loads(pickle.dumps(func))
    assert again.script() == func.script()
    tvm.ir.assert_structural_equal(again, func)
    run_and_compare(tvm.build(sch.mod, target="llvm"), [A, C])


def test_a_cross_thread_reduction_prints_its_loop_form_and_says_why():
    X = te.placeholder((16, 64), name="X")
    k = te.reduce_axis((0, 64), name="k")
    Y = te.compute((16,), lambda i: te.sum(X[i, k], axis=k), name="Y")
    sch = tir.Schedule(te.create_prim_func([X, Y]))
    i, kk = sch.get_loops(sch.get_block("Y"))
    sch.bind(i, "blockIdx.x")
    sch.bind(kk, "threadIdx.x")
    text = sch.mod.script()
    assert text.startswith("# no block form (") and "cross-thread reduction" in text
    assert "T.block" not in text and "T.tvm_storage_sync" in text


HAND_WRITTEN = """
@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("init"):
            vi = T.axis.spatial(8, i)
            B[vi] = T.float32(0)
        for j in range(8):
            with T.block("acc"):
                vi, vj = T.axis.remap("SR", [i, j])
                B[vi] = B[vi] + A[vi, vj]
"""


def test_a_hand_written_loop_program_prints_as_blocks_and_round_trips():
    func = from_source(HAND_WRITTEN)
    text = func.script()
    assert 'with T.block("acc"):' in text and "# stage" not in text
    assert 'vi, vj = T.axis.remap("SR", [i, j])' in text
    assert "T.reads(B[vi], A[vi, vj])" in text and "T.writes(B[vi])" in text
    again = from_source(text)
    tvm.ir.assert_structural_equal(func, again)
    a = np.arange(64, dtype="float32").reshape(8, 8)
    b = np.full(8, np.nan, "float32")
    tvm.build(again, target="llvm")(a, b)
    np.testing.assert_allclose(b, a.sum(axis=1))


def test_a_block_over_inner_loops_reads_and_writes_regions():
    reads = from_source(
        """
@T.prim_func
def main(A: T.Buffer((4, 16), "float32"), B: T.Buffer((4,), "float32")):
    for i in range(4):
        with T.block("B"):
            vi = T.axis.spatial(4, i)
            B[vi] = T.float32(0)
            for k in range(16):
                B[vi] = B[vi] + A[vi, k]
"""
    ).script()
    assert "T.reads(B[vi], A[vi, 0:16])" in reads and "T.writes(B[vi])" in reads


PLAIN = """
@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
    B = T.alloc_buffer((8, 8), scope="local")
    for i, j in T.grid(8, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i in T.parallel(8):
        for j in range(8):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = B[vi, vj] + T.float32(1)
"""


def test_a_parsed_program_prints_and_compares_as_written():
    # its compute definitions (what tir.Schedule schedules) drop the loop kind and the
    # scope; the function prints and compares as written
    func = from_source(PLAIN)
    tir.Schedule(func)  # a plain program: schedulable
    text = func.script()
    assert 'B = T.alloc_buffer((8, 8), "float32", scope="local")' in text
    assert "for i in T.parallel(8):" in text
    tvm.ir.assert_structural_equal(func, from_source(text))
    assert not tvm.ir.structural_equal(
        func, from_source(PLAIN.replace("T.parallel(8)", "range(8)"))
    )


def test_the_printed_block_names_are_handles():
    sch = _mlc_schedule()
    loops = sch.get_loops(sch.get_block("Y_update"))
    assert [sch.get(lp).name for lp in loops] == ["i", "j_0", "k", "j_1"]
    sch.vectorize(loops[-1])
    assert "for j_1 in T.vectorized(4):" in sch.mod.script()
    tvm.ir.assert_structural_equal(sch.mod["mm_relu"], from_source(sch.mod.script()))
