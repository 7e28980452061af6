"""Intermediate buffers (stack and heap), JIT module lifetimes and the generated sources."""

from __future__ import annotations

import gc

import numpy as np

import ansor_lab as tvm
from ansor_lab import te
from ansor_lab.codegen.llvm_builder import STACK_LIMIT_BYTES


def chain(rows: int, cols: int):
    A = te.placeholder((rows, cols), "float32", name="A")
    B = te.compute((rows, cols), lambda i, j: A[i, j] * 2.0, name="B")
    C = te.compute((rows, cols), lambda i, j: B[i, j] + A[i, j], name="C")
    k = te.reduce_axis((0, cols), name="k")
    D = te.compute((rows,), lambda i: te.max(C[i, k], axis=k), name="D")
    return A, B, C, D


def run_chain(rows: int, cols: int):
    A, B, C, D = chain(rows, cols)
    f = tvm.build(te.create_schedule(D.op), [A, D], "llvm")
    a = np.random.default_rng(rows).uniform(-2, 2, (rows, cols)).astype("float32")
    d = np.full(rows, np.nan, "float32")
    f(a, d)
    # 2a + a is exact enough to compare bit for bit: both round the same products
    np.testing.assert_array_equal(d, (a * np.float32(2) + a).max(axis=1))
    return f


def test_chain_of_three_computes_allocates_two_intermediates():
    f = run_chain(4, 8)
    text = f.get_source("tir")
    assert text.count("T.alloc_buffer") == 2
    assert 'B = T.alloc_buffer((4, 8), "float32")' in text
    assert 'C = T.alloc_buffer((4, 8), "float32")' in text


def test_small_intermediates_live_on_the_stack():
    assert 4 * 8 * 4 <= STACK_LIMIT_BYTES
    ll = run_chain(4, 8).get_source("ll-unopt")
    assert '%"B" = alloca float, i32 32' in ll
    assert "aligned_alloc" not in ll and "@free" not in ll.replace('"', "")


def test_large_intermediates_live_on_the_heap_and_are_freed():
    rows, cols = 64, 128  # 32 KiB each, above the stack limit
    assert rows * cols * 4 > STACK_LIMIT_BYTES
    ll = run_chain(rows, cols).get_source("ll-unopt")
    assert '%"B" = call ptr @"aligned_alloc"(i64 64, i64 32768)' in ll
    assert '%"C" = call ptr @"aligned_alloc"(i64 64, i64 32768)' in ll
    assert 'call void @"free"(ptr %"B")' in ll
    assert 'call void @"free"(ptr %"C")' in ll
    # nothing else to allocate: D is the output argument (the max reduction's NaN flag is
    # a one-bit alloca that becomes a register)
    assert [ln.split("=")[1].strip() for ln in ll.splitlines() if "alloca" in ln] in (
        [],
        ["alloca i1"],
    )


def test_heap_intermediate_repeated_runs_are_stable():
    A, B, C, D = chain(70, 100)  # 28000 bytes per intermediate
    f = tvm.build(te.create_schedule(D.op), [A, D], "llvm")
    a = np.random.default_rng(0).uniform(-2, 2, (70, 100)).astype("float32")
    want = (a * np.float32(2) + a).max(axis=1)
    for _ in range(20):  # a leak or a double free would show up as a crash or garbage
        d = np.zeros(70, "float32")
        f(a, d)
        np.testing.assert_array_equal(d, want)
    result = f.time_evaluator(f.entry_name, tvm.cpu(), number=5, repeat=2)(a, d)
    assert len(result.results) == 2
    np.testing.assert_array_equal(d, want)


def test_modules_outlive_the_ones_built_before_them():
    # MCJIT owns the target machine it is given: freeing one module must not break others
    X = te.placeholder((8,), "float64", name="X")
    modules = []
    for step in range(6):
        Y = te.compute((8,), lambda i, s=step: X[i] * float(s + 1), name="Y")
        modules.append((step, tvm.build(te.create_schedule(Y.op), [X, Y], "llvm")))
        if step % 2 == 0:
            modules.pop(0)  # drop an older module while newer ones stay alive
            gc.collect()
    x = np.arange(8, dtype="float64")
    for step, f in modules:
        y = np.zeros(8)
        f(x, y)
        np.testing.assert_array_equal(y, x * (step + 1))
        assert "define" in f.get_source("ll")
        assert f.get_source("asm")


def test_get_source_formats():
    A, B, C, D = chain(4, 8)
    f = tvm.build(te.create_schedule(D.op), [A, D], "llvm", name="chain_kernel")
    assert f.entry_name == "chain_kernel"
    ll = f.get_source("ll")
    assert "define" in ll and "@chain_kernel(" in ll.replace('"', "")
    assert "@chain_kernel__repeat(" in ll.replace('"', "")
    asm = f.get_source("asm")
    assert "chain_kernel" in asm and len(asm.splitlines()) > 10
    assert f.get_source("tir").startswith("@T.prim_func\ndef chain_kernel(")
    assert f.get_source("ll-unopt") != ll  # the optimized module differs from the raw one
