"""Symbolic programs print with their shape variables, as TVM prints them, and the text
parses back to a program that builds and runs at any size."""

from __future__ import annotations

import numpy as np
import pytest

import ansor_lab as tvm
from ansor_lab import te, tir
from ansor_lab.schedule.symbolic_print import symbolize

RNG = np.random.default_rng(0)


def _vecadd():
    n = te.var("n")
    A = te.placeholder((n,), name="A")
    B = te.placeholder((n,), name="B")
    C = te.compute(A.shape, lambda i: A[i] + B[i], name="C")
    return n, A, B, C


def _run_vecadd(f, sizes=(1, 31, 32, 100)):
    for size in sizes:
        a, b = RNG.random(size, dtype="float32"), RNG.random(size, dtype="float32")
        c = np.full(size, np.nan, "float32")
        f(a, b, c)
        np.testing.assert_allclose(c, a + b)


def _matmul_relu():
    n, m, K = te.var("n"), te.var("m"), te.var("K")
    A = te.placeholder((n, K), name="A")
    B = te.placeholder((K, m), name="B")
    k = te.reduce_axis((0, K), name="k")
    C = te.compute((n, m), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    D = te.compute((n, m), lambda i, j: te.max(C[i, j], 0.0), name="D")
    return (n, m, K), A, B, D


def _run_matmul_relu(f, sizes=((5, 7, 3), (33, 17, 40), (64, 64, 64))):
    for n, m, k in sizes:
        a = RNG.random((n, k), dtype="float32") - 0.5
        b = RNG.random((k, m), dtype="float32") - 0.5
        d = np.full((n, m), np.nan, "float32")
        f(a, b, d)
        np.testing.assert_allclose(d, np.maximum(a @ b, 0), rtol=1e-4, atol=1e-5)


def test_create_prim_func_prints_shape_variables_and_parses_back_equal():
    _, A, B, D = _matmul_relu()
    func = te.create_prim_func([A, B, D])
    text = func.script()
    head = [
        "def main(var_A: T.handle, var_B: T.handle, var_D: T.handle):",
        "    n = T.int32()\n    K = T.int32()\n    m = T.int32()",
        "    A = T.match_buffer(var_A, (n, K))",
        "    D = T.match_buffer(var_D, (n, m))",
        '    C = T.alloc_buffer((n, m), "float32")',
        "    for i, j, k in T.grid(n, m, K):",
    ]
    for line in head:
        assert line in text, text
    parsed = tvm.script.from_source(text)
    tvm.ir.assert_structural_equal(func, parsed)
    assert parsed.script() == text  # print -> parse -> print is a fixed point
    _run_matmul_relu(tvm.build(parsed, target="llvm"))


def test_one_axis_grid_prints_as_range():
    _, A, B, C = _vecadd()
    text = te.create_prim_func([A, B, C]).script()
    assert "    for i in range(n):" in text and "A = T.match_buffer(var_A, (n,))" in text


def test_lower_of_a_split_prints_ceildiv_and_the_guard():
    n, A, B, C = _vecadd()
    s = te.create_schedule(C.op)
    xo, xi = s[C].split(C.op.axis[0], factor=32)
    s[C].parallel(xo)
    s[C].vectorize(xi)
    text = tvm.lower(s, [A, B, C, n]).script()
    expected = """\
    # stage "C"
    for i_0 in T.parallel(T.ceildiv(n, 32)):
        for i_1 in T.vectorized(32):
            if i_0 * 32 + i_1 < n:
                C[i_0 * 32 + i_1] = A[i_0 * 32 + i_1] + B[i_0 * 32 + i_1]"""
    assert expected in text, text
    parsed = tvm.script.from_source(text)
    _run_vecadd(tvm.build(parsed, target="llvm"))
    _run_vecadd(tvm.build(s, [A, B, C, n]))


def test_tiled_transpose_and_compute_at_print_and_rebuild():
    (n, m, K), A, B, D = _matmul_relu()
    s = te.create_schedule(D.op)
    i, j = D.op.axis
    io, jo, ii, ji = s[D].tile(i, j, 8, 16)
    C = D.op.input_tensors[0]
    s[C].compute_at(s[D], jo)
    ko, ki = s[C].split(C.op.reduce_axis[0], factor=4)
    s[D].parallel(s[D].fuse(io, jo))
    text = tvm.lower(s, [A, B, D, n, m, K]).script()
    for line in [
        "for i_0_j_0_fused in T.parallel(T.ceildiv(n, 8) * T.ceildiv(m, 16)):",
        "for k_0 in range(T.ceildiv(K, 4)):",
        "if k_0 * 4 + k_1 < K and ",
    ]:
        assert line in text, text
    _run_matmul_relu(tvm.build(tvm.script.from_source(text), target="llvm"))


def test_tir_schedule_module_prints_symbolically():
    n, A, B, C = _vecadd()
    sch = tir.Schedule(te.create_prim_func([A, B, C]))
    (i,) = sch.get_loops(sch.get_block("C"))
    sch.split(i, factors=[None, 8])
    text = sch.mod.script()
    assert "for i_0 in range(T.ceildiv(n, 8)):" in text and "if i_0 * 8 + i_1 < n:" in text
    _run_vecadd(tvm.build(tvm.script.from_source(text), target="llvm"))


def test_a_shape_variable_named_like_a_loop_is_renamed():
    n, k_dim = te.var("n"), te.var("k")
    A = te.placeholder((n, k_dim), name="A")
    k = te.reduce_axis((0, k_dim), name="k")
    S = te.compute((n,), lambda i: te.sum(A[i, k], axis=k), name="S")
    text = te.create_prim_func([A, S]).script()
    assert "k_s = T.int32()" in text and "for i, k in T.grid(n, k_s):" in text
    f = tvm.build(tvm.script.from_source(text), target="llvm")
    a, out = RNG.random((6, 9), dtype="float32"), np.zeros(6, "float32")
    f(a, out)
    np.testing.assert_allclose(out, a.sum(1), rtol=1e-5)


def test_what_cannot_be_recovered_prints_at_the_probe_and_says_so():
    # a split factor as large as the printing sizes: its constants could be shapes
    n, A, B, C = _vecadd()
    s = te.create_schedule(C.op)
    s[C].split(C.op.axis[0], factor=1024)
    text = tvm.lower(s, [A, B, C]).script()
    assert text.startswith("# symbolic shapes (n): printed at the probe values n = 64")


@pytest.mark.parametrize(
    ("texts", "expected"),
    [
        (["x < 1009", "x < 2003", "x < 3001"], "x < n"),
        (["range(1008)", "range(2002)", "range(3000)"], "range(n - 1)"),
        # the factor is a constant of the program (here the 32 every text has)
        (["f(32, 32)", "f(63, 32)", "f(94, 32)"], "f(T.ceildiv(n, 32), 32)"),
        (["a * 1022117", "a * 4028033", "a * 9036011"], "a * (n * m)"),
        (["x + 1", "x + 2", "y + 3"], None),  # differ in more than numbers
        (["x + 5", "x + 7", "x + 8"], None),  # no expression of n and m
    ],
)
def test_symbolize_fits_each_literal(texts, expected):
    points = [[1009, 1013], [2003, 2011], [3001, 3011]]
    assert symbolize(texts, ["n", "m"], points) == expected
