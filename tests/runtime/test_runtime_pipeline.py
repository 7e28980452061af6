"""One pass pipeline: ``tvm.build`` and the tuner's builder worker hand the code generator
the same function (``codegen.pipeline.prepare``), and the vector form ``get_source("tir")``
prints (``codegen.vector_form``) agrees with what the generator emits."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
import vector_agreement

import ansor_lab as tvm
from ansor_lab import te, tir
from ansor_lab.codegen import llvm as codegen_llvm
from ansor_lab.codegen.pipeline import UNROLL_KEY, prepare
from ansor_lab.codegen.vector_form import vector_view
from ansor_lab.dsl import expr as E
from ansor_lab.dsl.serialize import dag_to_json
from ansor_lab.errors import CodegenError, LoweringError, UnknownKeywordError
from ansor_lab.ir import nodes as N
from ansor_lab.ir.visitor import walk_stmts
from ansor_lab.measure.workers import build_worker


def _traced_matmul(n: int = 64):
    """A tiled, parallel, unrolled, vectorized matmul as a tir.Schedule with its trace."""
    A = te.placeholder((n, n), name="A")
    B = te.placeholder((n, n), name="B")
    k = te.reduce_axis((0, n), name="k")
    C = te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    sch = tir.Schedule(te.create_prim_func([A, B, C]))
    i, j, kk = sch.get_loops(sch.get_block("C"))
    i0, i1 = sch.split(i, factors=[None, 4])
    j0, j1 = sch.split(j, factors=[None, 16])
    sch.reorder(i0, j0, kk, i1, j1)
    sch.parallel(i0)
    sch.vectorize(j1)
    sch.annotate(i0, "pragma_auto_unroll_max_step", 16)
    return [A, B, C], sch


def test_build_and_builder_worker_emit_identical_llvm_ir(monkeypatch):
    args, sch = _traced_matmul()
    target = tvm.Target("llvm")
    built = tvm.build(sch.mod, target=target, num_threads=2)

    # the tuner's path: the trace and the DAG as JSON (as records store them), replayed
    # on a fresh schedule in the builder worker, which makes an object file
    seen: list[str] = []
    generate_ir = codegen_llvm.generate_ir

    def spy(func, tgt, options=None):
        text, reports = generate_ir(func, tgt, options)
        seen.append(text)
        return text, reports

    monkeypatch.setattr(codegen_llvm, "generate_ir", spy)
    payload = {
        "dag": json.loads(json.dumps(dag_to_json(args))),
        "trace": json.loads(json.dumps(sch.trace.as_json())),
        "target": str(target),
        "num_threads": 2,
    }
    result = build_worker(payload)
    assert result["error_no"] == 0, result["error_msg"]
    assert len(seen) == 1
    assert seen[0] == built.get_source("ll-unopt")
    # and it is the program the schedule asked for
    assert "GOMP_parallel" in seen[0]
    assert "<16 x float>" in seen[0]
    assert built.loop_report().count("i_1 (extent 4): unrolled -> unrolled") == 2

    a, b = np.random.default_rng(0).uniform(-1, 1, (2, 64, 64)).astype("float32")
    c = np.zeros((64, 64), "float32")
    built(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)


def test_prepared_form_is_what_build_compiles_and_prints():
    _, sch = _traced_matmul()
    lowered = sch.mod.main_function()
    prepared = prepare(lowered, "llvm")
    built = tvm.build(sch.mod, target="llvm")
    # the generator receives the loop form, marked; the module prints its vector form
    assert built.func.script() == prepared.script()
    assert built.get_source("tir") == vector_view(prepared).script()
    # tvm.lower stays the schedule's view: no legalisation there
    assert "llvm." not in tvm.lower(sch.mod).script()
    text = prepared.script()
    assert "T.unroll(4, annotations={\"llvm.unroll\": 'x4'})" in text
    assert "'x16: load C contiguous, load A scalar, load B contiguous, store C contiguous'" in text
    assert "'x16: store C contiguous'" in text


def test_printed_form_of_a_tiled_matmul_is_vector_statements():
    _, sch = _traced_matmul()
    text = tvm.build(sch.mod, target="llvm").get_source("tir")
    assert "T.vectorized" not in text and "llvm.vectorize" not in text
    ramp = "T.Ramp(j_0 * 16, 1, 16)"
    lines = [line.strip() for line in text.splitlines()]
    assert f"C[i_0 * 4 + i_1, {ramp}] = T.Broadcast(T.float32(0.0), 16)" in lines
    assert (
        f"C[i_0 * 4 + i_1, {ramp}] = C[i_0 * 4 + i_1, {ramp}] + "
        f"T.Broadcast(A[i_0 * 4 + i_1, k], 16) * B[k, {ramp}]"
    ) in lines
    assert "for i_1 in T.unroll(4, annotations={\"llvm.unroll\": 'x4'}):" in lines


# ---------------------------------------------------------------------------------------
# the printed vector form agrees with the generator's loop report


def _assert_agree(func: N.PrimFunc, target: str = "llvm") -> tuple[list[str], str]:
    """(each vectorized loop's outcome, the printed vector form), after asserting that
    the vector form agrees with what the generator emitted (``vector_agreement``)."""
    prepared = prepare(func, target)
    built = tvm.build(func, target=target, num_threads=1)
    outcomes = vector_agreement.check(prepared, built.compiled.reports)
    unrolls = [
        s.annotation(UNROLL_KEY)
        for s in walk_stmts(prepared.body)
        if isinstance(s, N.For) and s.annotation(UNROLL_KEY) is not None
    ]
    assert all(u == "x4" or u.startswith("kept") for u in unrolls)
    return outcomes, built.get_source("tir")


def _sched(shape, fcompute, inputs=1):
    ins = [te.placeholder(shape, name=n) for n in "AB"[:inputs]]
    out = te.compute(shape, lambda *i: fcompute(*ins, *i), name="C")
    return tir.Schedule(te.create_prim_func([*ins, out]))


def _body(text: str) -> list[str]:
    """The statements of a printed function after its stage comment."""
    lines = text.splitlines()
    return [line.strip() for line in lines[lines.index('    # stage "C"') + 1 :]]


def test_vector_form_agrees_with_codegen_matmul():
    _, sch = _traced_matmul()
    outcomes, _ = _assert_agree(sch.mod.main_function())
    assert outcomes == ["SIMD x16", "SIMD x16"]


def test_vector_form_of_a_narrowed_tail():
    sch = _sched((50,), lambda A, B, i: A[i] + B[i], inputs=2)
    (i,) = sch.get_loops(sch.get_block("C"))
    _, i1 = sch.split(i, factors=[None, 16])
    sch.vectorize(i1)
    outcomes, text = _assert_agree(sch.mod.main_function())
    # the three whole tiles run unmasked (the loop is partitioned); the last one keeps
    # the 2 lanes its guard allows, unmasked too
    assert outcomes == ["SIMD x16", "SIMD x2"]
    ramp, tail = "T.Ramp(i0_0 * 16, 1, 16)", "T.Ramp(48, 1, 2)"
    assert _body(text) == [
        "for i0_0 in range(3):",
        f"C[{ramp}] = A[{ramp}] + B[{ramp}]",
        f"C[{tail}] = A[{tail}] + B[{tail}]",
    ]


def test_vector_form_of_gather_chunks_and_select():
    sch = _sched((8, 48), lambda A, i, j: A[(j * 5) % 8, i] + 1.0)
    _, j = sch.get_loops(sch.get_block("C"))
    sch.vectorize(j)
    outcomes, text = _assert_agree(sch.mod.main_function())
    assert outcomes == ["SIMD x48 (32+16)"]
    assert _body(text)[1:] == [
        "C[i0, T.Ramp(0, 1, 32)] = A[T.Ramp(0, 5, 32) % T.Broadcast(8, 32), i0] + "
        "T.Broadcast(T.float32(1.0), 32)",
        "C[i0, T.Ramp(32, 1, 16)] = A[T.Ramp(160, 5, 16) % T.Broadcast(8, 16), i0] + "
        "T.Broadcast(T.float32(1.0), 16)",
    ]
    # a row is cut by its width and the target alone, a select or not: 28 = 16 + 12 with
    # AVX-512's 16 lanes, 16 + 8 + 4 with AVX2's 8 (no piece is part of a register more)
    sch = _sched((8, 28), lambda A, i, j: te.if_then_else(j < 5, A[i, j], 0.0))
    _, j = sch.get_loops(sch.get_block("C"))
    sch.vectorize(j)
    outcomes, _ = _assert_agree(sch.mod.main_function(), "llvm -vector-bytes=32")
    assert outcomes == ["SIMD x28 (16+8+4)"]
    outcomes, text = _assert_agree(sch.mod.main_function(), "llvm -vector-bytes=64")
    assert outcomes == ["SIMD x28 (16+12)"]
    assert _body(text)[1:] == [
        "C[i0, T.Ramp(0, 1, 16)] = T.if_then_else(T.Ramp(0, 1, 16) < T.Broadcast(5, 16), "
        "A[i0, T.Ramp(0, 1, 16)], T.Broadcast(T.float32(0.0), 16))",
        "C[i0, T.Ramp(16, 1, 12)] = T.if_then_else(T.Ramp(16, 1, 12) < T.Broadcast(5, 12), "
        "A[i0, T.Ramp(16, 1, 12)], T.Broadcast(T.float32(0.0), 12))",
    ]


def test_vector_form_keeps_a_transposed_copy_marked():
    A = te.placeholder((16, 32), name="A")
    D = te.compute((32, 16), lambda c, f: A[f, c], name="D")
    sch = tir.Schedule(te.create_prim_func([A, D]))
    _, f = sch.get_loops(sch.get_block("D"))
    sch.vectorize(f)
    outcomes, text = _assert_agree(sch.mod.main_function())
    assert outcomes == ["transposed copy 16x16"]
    assert "T.vectorized(16, annotations={\"llvm.vectorize\": 'transposed copy 16x16'})" in text


def test_vector_form_keeps_a_scalar_fallback_loop():
    sch = _sched((4, 300), lambda A, i, j: A[i, j] * 2.0)
    _, j = sch.get_loops(sch.get_block("C"))
    sch.vectorize(j)
    outcomes, text = _assert_agree(sch.mod.main_function())
    assert outcomes == ["scalar loop (extent 300 outside 2..256)"]
    assert "'scalar loop (extent 300 outside 2..256)'" in text and "T.Ramp" not in text


def test_vector_form_of_a_vector_let_and_a_scatter():
    # a lane-dependent let binds a vector variable; a store to one address of a value that
    # differs between lanes is a scatter (the last lane wins), printed with a vector index
    v = E.Var("v", "int32")
    a = N.Buffer("A", (16,), "float32")
    c = N.Buffer("C", (1,), "float32")
    x = E.Var("x", "float32")
    body = N.LetStmt(x, a[v] * 2.0, N.BufferStore(c, x + 1.0, (E.IntImm(0),)))
    func = N.PrimFunc((a, c), N.For(v, E.IntImm(0), E.IntImm(16), "vectorized", body))
    built = tvm.build(func, target="llvm")
    assert vector_agreement.check(prepare(func, "llvm"), built.compiled.reports) == ["SIMD x16"]
    assert built.get_source("tir").splitlines()[2:] == [
        "    x: T.float32x16 = A[T.Ramp(0, 1, 16)] * T.Broadcast(T.float32(2.0), 16)",
        "    C[T.Broadcast(0, 16)] = x + T.Broadcast(T.float32(1.0), 16)",
    ]


# ---------------------------------------------------------------------------------------
# build's keywords


def _small():
    A = te.placeholder((8,), name="A")
    B = te.compute((8,), lambda i: A[i] + 1.0, name="B")
    return te.create_schedule(B.op), [A, B]


def test_build_rejects_a_misspelt_keyword():
    s, args = _small()
    with pytest.raises(UnknownKeywordError) as err:
        tvm.build(s, args, "llvm", num_thread=2)
    msg = str(err.value)
    assert "'num_thread'" in msg and "did you mean 'num_threads'" in msg
    assert "target_host" in msg and "record_thread_ids" in msg
    assert isinstance(err.value, TypeError)


def test_build_takes_tvms_keywords():
    s, args = _small()
    a = np.arange(8, dtype="float32")
    b = np.zeros(8, "float32")
    f = tvm.build(s, args, target="llvm", target_host="llvm", name="add_one", binds=None)
    f(a, b)
    np.testing.assert_array_equal(b, a + 1)
    assert f.entry_name == "add_one"
    tvm.build(s, args, "llvm", target_host=tvm.Target("llvm"), binds={})
    with pytest.raises(CodegenError, match="target_host='cuda'"):
        tvm.build(s, args, "llvm", target_host="cuda")
    with pytest.raises(LoweringError, match="binds"):
        tvm.build(s, args, "llvm", binds={args[0]: object()})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tvm.build(s, args, "llvm", runtime="cpp")
    assert any("runtime='cpp'" in str(w.message) for w in caught)
