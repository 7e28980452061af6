"""Index arithmetic is emitted once per region and reused: smaller IR, same answers.

The LLVM builder reuses an integer index expression's value where it dominates (the
straight-line part of the current loop body or an enclosing one) and folds arithmetic
on constants (the indices of an unrolled copy). These tests pin the three ways that can
go wrong: a value reused where it does not dominate (LLVM rejects the IR), a value reused
across unrolled copies whose loop variable differs (a wrong answer), and arithmetic on
constants that survives into the IR (the build is slow again).
"""

from __future__ import annotations

import re

import numpy as np

import ansor_lab as tvm
from ansor_lab import te
from ansor_lab.codegen.llvm import CodegenOptions, generate_ir
from ansor_lab.dsl import expr as E
from ansor_lab.ir import nodes as N
from ansor_lab.ir.passes import unroll_by_pragma


def I(v: int) -> E.IntImm:  # noqa: E743 - short on purpose, IR literals read better
    return E.IntImm(v)


def tiled_matmul(n: int = 32, unroll: bool = True):
    """A register-tiled matmul: i and j split 4 x 8, k split by 4, inner tile unrolled."""
    A = te.placeholder((n, n), "float32", name="A")
    B = te.placeholder((n, n), "float32", name="B")
    k = te.reduce_axis((0, n), name="k")
    C = te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    s = te.create_schedule(C.op)
    i, j = s[C].op.axis
    io, ii = s[C].split(i, factor=4)
    jo, ji = s[C].split(j, factor=8)
    ko, ki = s[C].split(s[C].op.reduce_axis[0], factor=4)
    s[C].reorder(io, jo, ko, ki, ii, ji)
    if unroll:
        s[C].unroll(ki)
        s[C].unroll(ii)
    s[C].vectorize(ji)
    return s, [A, B, C]


def ir_text(s, args) -> str:
    func = unroll_by_pragma(tvm.lower(s, args)["main"])
    text, _ = generate_ir(func, tvm.Target("llvm"), CodegenOptions(num_threads=1))
    return text


def run(func_or_sched, args, arrays):
    f = (
        tvm.build(func_or_sched, args, "llvm")
        if args is not None
        else tvm.build(func_or_sched, target="llvm")
    )
    f(*arrays)


def test_unrolled_tile_is_correct_and_has_no_constant_arithmetic():
    s, args = tiled_matmul()
    rng = np.random.default_rng(0)
    a, b = (rng.uniform(-1, 1, (32, 32)).astype("float32") for _ in range(2))
    c = np.full((32, 32), 99, "float32")
    run(s, args, [a, b, c])
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)

    text = ir_text(s, args)
    # no instruction whose operands are both constants: 16 unrolled copies of the body
    # used to compute "2 * 8 + 3" and "sext i32 0" in each
    const_op = re.compile(r"= (add|sub|mul)( nsw)? i(32|64) -?\d+, -?\d+$", re.M)
    assert const_op.findall(text) == []
    assert re.findall(r"sext i32 -?\d+ to", text) == []
    # the parts of an offset that do not depend on the unrolled variables (i_o * 4 * 32,
    # k_o * 4, j_o * 8) are computed once per k_o iteration, not once per unrolled copy:
    # fewer multiplies than loads (30 for 48 here; 204 when every copy made its own)
    muls = len(re.findall(r"= mul ", text))
    loads = len(re.findall(r"= load ", text))
    assert loads >= 3 * 16  # every copy loads A's element, B's vector and C's vector
    assert muls < loads, f"{muls} multiplies for {loads} loads: index arithmetic not reused"


def test_reuse_shrinks_the_ir_against_the_same_schedule_without_unrolling():
    s_u, args_u = tiled_matmul(unroll=True)
    s_r, args_r = tiled_matmul(unroll=False)
    unrolled, rolled = ir_text(s_u, args_u), ir_text(s_r, args_r)
    # 16 copies of the body: 4.7x the rolled function's text with reuse, 7.5x without
    assert len(unrolled) < 6 * len(rolled)


def test_value_first_made_inside_a_branch_is_made_again_after_it():
    """``row`` (= i * 8 + 3) is first emitted inside the then-branch, which does not
    dominate the store after the if: that store must compute it again (else LLVM
    rejects the IR: 'Instruction does not dominate all uses')."""
    A = N.Buffer("A", (32,), "float32")
    B = N.Buffer("B", (32,), "float32")
    i = E.Var("i")
    row = i * 8 + 3  # one node object, used in the branch and after it
    body = N.For(
        i,
        I(0),
        I(4),
        "serial",
        N.seq(
            N.IfThenElse(E.LT(i, I(2)), N.BufferStore(B, A[row] * E.FloatImm(2.0), (row,))),
            N.BufferStore(A, A[row] + E.FloatImm(1.0), (row,)),
        ),
    )
    func = N.PrimFunc((A, B), N.Block("k", body), "k")
    a = np.arange(32, dtype="float32")
    b = np.zeros(32, "float32")
    run(func, None, [a, b])
    want_a = np.arange(32, dtype="float32")
    want_b = np.zeros(32, "float32")
    for k in range(4):
        if k < 2:
            want_b[k * 8 + 3] = want_a[k * 8 + 3] * 2
        want_a[k * 8 + 3] += 1
    np.testing.assert_array_equal(a, want_a)
    np.testing.assert_array_equal(b, want_b)


def test_value_first_made_inside_a_select_branch_is_made_again_after_it():
    """The same for the branches of an if_then_else expression (a padded read)."""
    A = N.Buffer("A", (32,), "float32")
    B = N.Buffer("B", (32,), "float32")
    i = E.Var("i")
    row = i * 8 + 5
    guarded = E.Call("if_then_else", (E.LT(i, I(2)), A[row], E.FloatImm(0.0)), "float32")
    body = N.For(
        i,
        I(0),
        I(4),
        "serial",
        N.BufferStore(B, E.Add(guarded, A[row] * E.FloatImm(3.0), "float32"), (row,)),
    )
    func = N.PrimFunc((A, B), N.Block("k", body), "k")
    a = np.arange(32, dtype="float32")
    b = np.zeros(32, "float32")
    run(func, None, [a, b])
    want = np.zeros(32, "float32")
    for k in range(4):
        want[k * 8 + 5] = (a[k * 8 + 5] if k < 2 else 0) + a[k * 8 + 5] * 3
    np.testing.assert_array_equal(b, want)


def test_value_first_made_inside_a_loop_is_made_again_after_it():
    """A value emitted inside an inner loop's body does not dominate the code after the
    loop (the body may run zero times)."""
    A = N.Buffer("A", (16,), "int32")
    i, j = E.Var("i"), E.Var("j")
    cell = i * 4 + 1
    body = N.For(
        i,
        I(0),
        I(4),
        "serial",
        N.seq(
            N.For(j, I(0), I(3), "serial", N.BufferStore(A, A[cell] + j, (cell,))),
            N.BufferStore(A, A[cell] * I(10), (cell,)),
        ),
    )
    func = N.PrimFunc((A,), N.Block("k", body), "k")
    a = np.zeros(16, "int32")
    run(func, None, [a])
    want = np.zeros(16, "int32")
    want[[1, 5, 9, 13]] = (0 + 1 + 2) * 10
    np.testing.assert_array_equal(a, want)


def test_unrolled_copies_do_not_share_values_of_their_own_variable():
    """The same index node in every unrolled copy: the copies must each use their own
    constant for u, and may share only the part that does not depend on u."""
    A = N.Buffer("A", (8, 8), "int32")
    i, u = E.Var("i"), E.Var("u")
    col = (i * 2 + u) % 8  # a FloorMod of the loop variables, the same node in every copy
    body = N.For(
        i,
        I(0),
        I(8),
        "serial",
        N.For(u, I(0), I(4), "unrolled", N.BufferStore(A, A[i, col] + (u + 1) * 100 + i, (i, col))),
    )
    func = N.PrimFunc((A,), N.Block("k", body), "k")
    a = np.zeros((8, 8), "int32")
    run(func, None, [a])
    want = np.zeros((8, 8), "int32")
    for ii in range(8):
        for uu in range(4):
            want[ii, (ii * 2 + uu) % 8] += (uu + 1) * 100 + ii
    np.testing.assert_array_equal(a, want)


def test_constant_folding_wraps_like_the_machine():
    """Index constants folded at build time wrap to their type's width, as the
    instruction would: (2**31 - 1) + 1 in int32 is -2**31."""
    A = N.Buffer("A", (4,), "int32")
    u = E.Var("u")
    big = E.IntImm(2**31 - 1)
    body = N.For(u, I(0), I(1), "unrolled", N.BufferStore(A, E.Add(big, u + 1, "int32"), (I(0),)))
    func = N.PrimFunc((A,), N.Block("k", body), "k")
    a = np.zeros(4, "int32")
    run(func, None, [a])
    assert int(a[0]) == -(2**31)
