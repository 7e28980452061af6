"""The TVMScript-like printer: golden text for hand-built functions and expressions."""

from __future__ import annotations

import ansor_lab as tvm
from ansor_lab import te
from ansor_lab.dsl import expr as E
from ansor_lab.ir import nodes as N


def I(v: int) -> E.IntImm:  # noqa: E743 - short on purpose, IR literals read better
    return E.IntImm(v)


def rowsum_func() -> N.PrimFunc:
    A = N.Buffer("A", (4, 8), "float32")
    B = N.Buffer("B", (4,), "float32")
    tmp = N.Buffer("tmp", (8,), "float32", "local")
    i, j, v, t = E.Var("i"), E.Var("j"), E.Var("v"), E.Var("t")
    body = N.For(
        i,
        I(0),
        I(4),
        "parallel",
        N.Allocate(
            tmp,
            N.seq(
                N.For(
                    v, I(0), I(8), "vectorized", N.BufferStore(tmp, A[i, v] * E.FloatImm(2.0), (v,))
                ),
                N.BufferStore(B, E.FloatImm(0.0), (i,)),
                N.For(
                    j,
                    I(0),
                    I(8),
                    "unrolled",
                    N.IfThenElse(
                        E.LT(j, i * 2),
                        N.BufferStore(B, B[i] + tmp[j], (i,)),
                        N.BufferStore(B, E.Max(B[i], tmp[j], "float32"), (i,)),
                    ),
                ),
                N.LetStmt(t, i * 4 + 1, N.Evaluate(t)),
            ),
        ),
        annotations=(("pragma_auto_unroll_max_step", 16),),
    )
    return N.PrimFunc((A, B), N.Block("rowsum", body), "rowsum")


ROWSUM_TEXT = """\
@T.prim_func
def rowsum(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4,), "float32")):
    # stage "rowsum"
    for i in T.parallel(4, annotations={"pragma_auto_unroll_max_step": 16}):
        tmp = T.alloc_buffer((8,), "float32", scope="local")
        for v in T.vectorized(8):
            tmp[v] = A[i, v] * T.float32(2.0)
        B[i] = T.float32(0.0)
        for j in T.unroll(8):
            if j < i * 2:
                B[i] = B[i] + tmp[j]
            else:
                B[i] = T.max(B[i], tmp[j])
        t: T.int32 = i * 4 + 1
        T.evaluate(t)"""


def test_function_text_is_golden():
    f = rowsum_func()
    assert f.script() == ROWSUM_TEXT
    assert str(f) == ROWSUM_TEXT
    assert str(N.IRModule({"rowsum": f})) == ROWSUM_TEXT


def test_show_prints_the_text(capsys):
    rowsum_func().show()
    assert capsys.readouterr().out == ROWSUM_TEXT + "\n"


def test_loop_ranges_and_kinds():
    i = E.Var("i")
    store = N.Evaluate(I(0))
    cases = [
        (N.For(i, I(0), I(5), "serial", store), "for i in range(5):"),
        (N.For(i, I(2), I(5), "serial", store), "for i in range(2, 7):"),
        (
            N.For(i, I(0), I(32), "thread_binding", store, "threadIdx.x"),
            'for i in T.thread_binding(32, thread="threadIdx.x"):',
        ),
        (
            N.For(i, I(0), I(4), "serial", store, annotations=(("pragma_unroll_explicit", 1),)),
            'for i in T.serial(4, annotations={"pragma_unroll_explicit": 1}):',
        ),
    ]
    for loop, first_line in cases:
        assert str(loop).splitlines() == [first_line, "    T.evaluate(0)"]


def test_expression_text():
    i, j = te.var("i"), te.var("j")
    x = te.var("x", "float32")
    cases = [
        ((i + j) * 2, "(i + j) * 2"),
        (i - (j - 1), "i - (j - 1)"),
        (i - j - 1, "i - j - 1"),
        (i // 4 % 2, "i // 4 % 2"),
        (te.truncdiv(i, 3), "T.truncdiv(i, 3)"),
        (te.truncmod(i, 3), "T.truncmod(i, 3)"),
        (x / (x + 1.0), "x / (x + T.float32(1.0))"),
        (te.min(i, j), "T.min(i, j)"),
        # Python's precedence: comparisons bind tighter than not, not tighter than and
        ((i < j) & ~(j == 0), "i < j and not j == 0"),
        (~((i < j) & (j < 3)), "not (i < j and j < 3)"),
        (((i < j) | (j < 3)) & (i > 0), "(i < j or j < 3) and i > 0"),
        (te.if_then_else(i < 2, x, 0.0), "T.if_then_else(i < 2, x, T.float32(0.0))"),
        (te.select(i < 2, x, x), "T.Select(i < 2, x, x)"),
        (i.astype("int64") * te.const(3, "int64"), 'T.Cast("int64", i) * T.int64(3)'),
        (te.exp(x.astype("float16")), 'T.exp(T.Cast("float16", x))'),
        (te.const(True), "True"),
    ]
    for expr, text in cases:
        assert str(expr) == text


def test_buffer_vector_nodes_print():
    A = N.Buffer("A", (16,), "float32")
    i = E.Var("i")
    ramp = N.Ramp(i * 4, I(1), 4, "int32x4")
    assert str(N.BufferLoad(A, (ramp,), "float32x4")) == "A[T.Ramp(i * 4, 1, 4)]"
    assert str(N.Broadcast(E.FloatImm(1.0), 4, "float32x4")) == "T.Broadcast(T.float32(1.0), 4)"


def test_lowered_default_schedule_text():
    A = te.placeholder((4, 3), name="A")
    k = te.reduce_axis((0, 3), name="k")
    S = te.compute((4,), lambda i: te.sum(A[i, k], axis=k), name="S")
    func = te.create_prim_func([A, S])
    assert (
        tvm.lower(te.create_schedule(S.op), [A, S])["main"].script()
        == """\
@T.prim_func
def main(A: T.Buffer((4, 3), "float32"), S: T.Buffer((4,), "float32")):
    # stage "S"
    for i in range(4):
        S[i] = T.float32(0.0)
        for k in range(3):
            S[i] = S[i] + A[i, k]"""
    )
    # create_prim_func prints as TVM prints TensorIR: blocks, axes, reads/writes, init
    assert (
        func.script()
        == """\
@T.prim_func
def main(A: T.Buffer((4, 3), "float32"), S: T.Buffer((4,), "float32")):
    for i, k in T.grid(4, 3):
        with T.block("S"):
            v_i, v_k = T.axis.remap("SR", [i, k])
            T.reads(A[v_i, v_k])
            T.writes(S[v_i])
            with T.init():
                S[v_i] = T.float32(0.0)
            S[v_i] = S[v_i] + A[v_i, v_k]"""
    )
