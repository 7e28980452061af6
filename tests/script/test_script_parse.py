"""TVMScript in: programs written as TVM prints them parse, build and match numpy."""

from __future__ import annotations

import numpy as np
import pytest
from script_corpus import HAND_FUSED

import ansor_lab as tvm
from ansor_lab import te
from ansor_lab.errors import ScheduleError, ScriptError
from ansor_lab.script import from_source, ir as I, tir as T  # noqa: N812 - TVM's aliases


@I.ir_module
class MatmulRelu:
    @T.prim_func
    def mm_relu(
        A: T.Buffer((64, 48), "float32"),
        B: T.Buffer((48, 32), "float32"),
        C: T.Buffer((64, 32), "float32"),
    ):
        T.func_attr({"global_symbol": "mm_relu", "tir.noalias": True})
        Y = T.alloc_buffer((64, 32), dtype="float32")
        for i, j, k in T.grid(64, 32, 48):
            with T.block("Y"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                T.reads(A[vi, vk], B[vk, vj])
                T.writes(Y[vi, vj])
                with T.init():
                    Y[vi, vj] = T.float32(0)
                Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
        for i, j in T.grid(64, 32):
            with T.block("C"):
                vi = T.axis.spatial(64, i)
                vj = T.axis.spatial(32, j)
                C[vi, vj] = T.max(Y[vi, vj], T.float32(0))


def _rand(*shape: int) -> np.ndarray:
    return np.random.default_rng(sum(shape)).standard_normal(shape).astype("float32")


def test_ir_module_class_parses_schedules_and_builds():
    func = MatmulRelu["mm_relu"]
    assert [b.name for b in func.params] == ["A", "B", "C"]
    sch = tvm.tir.Schedule(MatmulRelu)
    i, j, k = sch.get_loops(sch.get_block("Y", func_name="mm_relu"))
    j0, j1 = sch.split(j, factors=[None, 4])
    sch.reorder(j0, k, j1)
    sch.vectorize(j1)
    a, b, c = _rand(64, 48), _rand(48, 32), np.empty((64, 32), "float32")
    tvm.build(sch.mod, target="llvm")(a, b, c)
    np.testing.assert_allclose(c, np.maximum(a @ b, 0), rtol=1e-4, atol=1e-5)
    assert "j_0 * 4 + j_1" in sch.mod.script()  # loops named after the script's loops


def test_prim_func_with_match_buffer_and_intrinsics():
    @T.prim_func
    def softplus(a: T.handle, b: T.handle):
        A = T.match_buffer(a, (16, 8), "float32")
        B = T.match_buffer(b, (16, 8), "float32")
        for i, j in T.grid(16, 8):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = T.log(T.exp(A[vi, vj]) + T.float32(1)) * T.if_then_else(
                    vi % 2 == 0, T.float32(1), T.float32(-1)
                )

    a, b = _rand(16, 8), np.empty((16, 8), "float32")
    tvm.build(softplus)(a, b)
    sign = np.where(np.arange(16)[:, None] % 2 == 0, 1.0, -1.0)
    np.testing.assert_allclose(b, np.log1p(np.exp(a)) * sign, rtol=1e-5)
    tvm.tir.Schedule(softplus)  # a plain program: schedulable


def test_parsed_function_equals_create_prim_func():
    A = te.placeholder((32, 16), name="A")
    k = te.reduce_axis((0, 16), name="k")
    S = te.compute((32,), lambda i: te.sum(A[i, k], axis=k), name="S")
    text = """
@T.prim_func
def main(A: T.Buffer((32, 16), "float32"), S: T.Buffer((32,), "float32")):
    for i, k in T.grid(32, 16):
        with T.block("S"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                S[vi] = T.float32(0)
            S[vi] = S[vi] + A[vi, vk]
"""
    parsed = from_source(text)
    tvm.ir.assert_structural_equal(parsed, te.create_prim_func([A, S]))


def test_hand_fused_module_builds_as_written_and_times_by_default_name():
    mod = from_source(HAND_FUSED)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((32, 64)).astype("float32") / 8
    b = rng.standard_normal((64, 32)).astype("float32") / 8
    e = rng.standard_normal((32, 48)).astype("float32")
    f = np.empty((32, 48), "float32")
    lib = tvm.build(mod, target="llvm")
    lib(a, b, e, f)
    np.testing.assert_allclose(f, np.exp(a @ b) @ e, rtol=1e-4, atol=1e-4)
    timer = lib.time_evaluator("__tvm_main__", tvm.cpu(), number=1, repeat=1)
    assert timer(a, b, e, f).mean > 0
    with pytest.raises(ScheduleError, match="own loop nest"):
        tvm.tir.Schedule(mod).rfactor  # noqa: B018 - no rfactor on a loop program


def test_legacy_flat_buffers_and_lets_as_tvm_lower_prints_them():
    text = """
@I.ir_module
class Module:
    @T.prim_func
    def main(A: T.Buffer((8, 16), "float32"), B: T.Buffer((16, 8), "float32"),
             C: T.Buffer((8, 8), "float32")):
        T.func_attr({"from_legacy_te_schedule": T.bool(True), "tir.noalias": T.bool(True)})
        C_1 = T.Buffer((64,), data=C.data)
        for m, l in T.grid(8, 8):
            C_1[m * 8 + l] = T.float32(0.0)
            for rk in range(16):
                cse_var_1: T.int32 = m * 8 + l
                A_1 = T.Buffer((128,), data=A.data)
                B_1 = T.Buffer((128,), data=B.data)
                C_1[cse_var_1] = C_1[cse_var_1] + A_1[m * 16 + rk] * B_1[rk * 8 + l]
"""
    mod = from_source(text)
    a, b, c = _rand(8, 16), _rand(16, 8), np.empty((8, 8), "float32")
    tvm.build(mod)(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)


def test_allocate_with_buffer_view():
    text = """
@T.prim_func
def main(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    T_tmp = T.allocate([16], "float32", "global")
    tmp = T.Buffer((16,), data=T_tmp)
    for i in range(16):
        tmp[i] = A[i] * T.float32(3)
    for i in T.parallel(16):
        B[i] = tmp[15 - i] + T.float32(1)
"""
    a, b = _rand(16), np.empty(16, "float32")
    tvm.build(from_source(text))(a, b)
    np.testing.assert_allclose(b, a[::-1] * 3 + 1, rtol=1e-6)


@pytest.mark.parametrize(
    ("body", "line", "needle"),
    [
        ("    B[i] = A[i] + q\n", 4, "name 'q' is not defined"),
        ("    B[i, 0] = A[i]\n", 4, "has 1 dimensions"),
        ("    B[i] = A[i] @ A[i]\n", 4, "MatMult is not supported"),
        ("    B[i] = foo(A[i])\n", 4, "only T.* intrinsics"),
        ("    while True:\n        pass\n", 4, "While statements"),
    ],
)
def test_malformed_scripts_point_at_line_and_column(body: str, line: int, needle: str):
    text = (
        '@T.prim_func\ndef main(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):\n'
        "  for i in range(4):\n" + "".join("  " + ln + "\n" for ln in body.splitlines())
    )
    with pytest.raises(ScriptError, match=needle) as err:
        from_source(text, filename="bad.py")
    assert f"bad.py:{line}:" in str(err.value)
    assert err.value.lineno == line


def test_a_float_shape_variable_is_refused_with_advice():
    text = """
@T.prim_func
def main(a: T.handle):
    n = T.float32()
    A = T.match_buffer(a, (n,), "float32")
"""
    with pytest.raises(ScriptError, match=r"shape variable 'n' must be T.int32\(\)"):
        from_source(text)


def test_decorated_body_is_never_executed():
    calls: list = []
    with pytest.raises(ScriptError, match=r"only T\.\* intrinsics"):

        @T.prim_func
        def main(A: T.Buffer((4,), "float32")):
            for i in range(4):
                A[i] = T.float32(1)
            calls.append(1)  # parsed and refused, never run

    assert calls == []


def test_structural_equal_detects_a_changed_constant():
    a = from_source(
        '@T.prim_func\ndef f(A: T.Buffer((4,), "float32")):\n'
        "    for i in range(4):\n        A[i] = T.float32(1)\n"
    )
    b = from_source(
        '@T.prim_func\ndef f(X: T.Buffer((4,), "float32")):\n'
        "    for j in range(4):\n        X[j] = T.float32(2)\n"
    )
    assert not tvm.ir.structural_equal(a, b)
    with pytest.raises(AssertionError, match=r"body\.body\.value"):
        tvm.ir.assert_structural_equal(a, b)


def test_older_tvmscript_subscripted_buffer_types_parse_and_build():
    """TVM before 0.13 and the MLC course write ``A: T.Buffer[(128,), "float32"]``."""

    @T.prim_func
    def main(
        A: T.Buffer[(8, 4), "float32"],  # noqa: F821, UP037 - a dtype, not a forward reference
        B: T.Buffer[(8,), "float32"],  # noqa: F821, UP037
        C: T.Buffer[(8,)],
    ):
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        for i, k in T.grid(8, 4):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    B[vi] = 0.0
                B[vi] = B[vi] + A[vi, vk]
        for i in T.grid(8):
            with T.block("C"):
                vi = T.axis.remap("S", [i])
                C[vi] = B[vi] * 2.0

    assert [(b.shape, b.dtype) for b in main.params] == [
        ((8, 4), "float32"),
        ((8,), "float32"),
        ((8,), "float32"),
    ]
    a = np.random.default_rng(0).random((8, 4), dtype="float32")
    b, c = np.zeros(8, "float32"), np.zeros(8, "float32")
    tvm.build(main, target="llvm")(a, b, c)
    np.testing.assert_allclose(c, 2 * a.sum(axis=1), rtol=1e-6)
    # Python evaluates the annotation itself where annotations are not postponed
    ann = T.Buffer[(128, 64), "int8"]
    assert (ann.shape, ann.dtype) == ((128, 64), "int8")
    assert T.Buffer[(16,)].dtype == "float32" and T.Buffer((16,), "float16").dtype == "float16"


def test_a_sum_nested_to_the_right_prints_its_parentheses_and_parses_back():
    # float addition is not associative: a + (b + c) printed as a + b + c would parse
    # back as (a + b) + c, another program
    A = te.placeholder((8,), name="A")
    B = te.compute((8,), lambda i: A[i] + (A[i] * 2.0 + A[7 - i]), name="B")
    func = te.create_prim_func([A, B])
    text = func.script()
    assert "A[v_i] + (A[v_i] * T.float32(2.0) + A[7 - v_i])" in text, text
    tvm.ir.assert_structural_equal(func, from_source(text))


def test_a_guarded_split_under_rfactor_parses_back():
    # the guard of a three-way split (k_0 * 2 + k_1 * 2 + k_2 < 23) is built nested to
    # the left, as the text parses: built to the right it printed the same and parsed as
    # another tree (the round-trip fuzzer's find)
    A = te.placeholder((17, 23), name="A")
    B = te.placeholder((23, 19), name="B")
    sch = tvm.tir.Schedule(te.create_prim_func([A, B, tvm.topi.nn.matmul(A, B)]))
    *_, k = sch.get_loops(sch.get_block("T_matmul_NN"))
    k0, _, _ = sch.split(k, factors=[None, 1, 2])
    sch.rfactor(k0, 0)
    text = sch.mod.script()
    assert "if v_k_0 * 2 + v_k_1 * 2 + v_k_2 < 23:" in text, text
    tvm.ir.assert_structural_equal(sch.mod["main"], from_source(text))
