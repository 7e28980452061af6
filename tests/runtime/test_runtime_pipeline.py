"""One pass pipeline: ``tvm.build`` and the tuner's builder worker hand the code generator
the same function (``codegen.pipeline.prepare``), and the legalisation marks it prints
agree with what the generator emits."""

from __future__ import annotations

import json
import re
import warnings

import numpy as np
import pytest

import ansor_lab as tvm
from ansor_lab import te, tir
from ansor_lab.codegen import llvm as codegen_llvm
from ansor_lab.codegen.pipeline import UNROLL_KEY, VECTORIZE_KEY, prepare
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
    assert built.get_source("tir") == prepared.script()
    # tvm.lower stays the schedule's view: no legalisation marks there
    assert "llvm." not in tvm.lower(sch.mod).script()
    text = prepared.script()
    assert "T.unroll(4, annotations={\"llvm.unroll\": 'x4'})" in text
    assert "'x16: load C contiguous, load A scalar, load B contiguous, store C contiguous'" in text
    assert "'x16: store C contiguous'" in text


# ---------------------------------------------------------------------------------------
# the marks agree with the generator's loop report

_LOAD_KEYS = {"contiguous": "vector_loads", "scalar": "scalar_loads", "gather": "gathers"}
_STORE_KEYS = {"contiguous": "vector_stores", "scalar": "scalar_stores", "scatter": "scatters"}


def _expected(mark: str) -> tuple[dict, dict]:
    """(counts the report must show, masked contiguous accesses that may be plain or
    masked) of one ``llvm.vectorize`` mark."""
    m = re.fullmatch(r"x(\d+)(?: \(([\d+]+)\))?: (.*)", mark)
    assert m, mark
    chunks = len(m.group(2).split("+")) if m.group(2) else 1
    counts: dict = {}
    flexible: dict = {}
    for item in m.group(3).split(", "):
        op, _, kind, *masked = item.split(" ")
        keys = _LOAD_KEYS if op == "load" else _STORE_KEYS
        if masked and kind == "contiguous":
            alt = "masked_loads" if op == "load" else "masked_stores|blend_stores"
            flexible[(keys[kind], alt)] = flexible.get((keys[kind], alt), 0) + chunks
        elif masked and kind == "scalar" and op == "store":
            continue  # stored if any lane is on: not counted
        else:
            counts[keys[kind]] = counts.get(keys[kind], 0) + chunks
    return counts, flexible


def _assert_agree(func: N.PrimFunc, target: str = "llvm") -> list[str]:
    prepared = prepare(func, target)
    marks = [
        s.annotation(VECTORIZE_KEY)
        for s in walk_stmts(prepared.body)
        if isinstance(s, N.For) and s.annotation(VECTORIZE_KEY) is not None
    ]
    reports = [
        r
        for r in tvm.build(func, target=target, num_threads=1).compiled.reports
        if r.kind == "vectorized"
    ]
    assert len(marks) == len(reports), (marks, [str(r) for r in reports])
    for mark, rep in zip(marks, reports):
        if mark.startswith(("scalar loop", "transposed copy")):
            assert rep.outcome == mark, (mark, str(rep))
            continue
        lanes = int(re.match(r"x(\d+)", mark).group(1))
        assert rep.outcome == f"SIMD x{lanes}", (mark, str(rep))
        counts, flexible = _expected(mark)
        got = {k: v for k, v in rep.detail.items() if k != "chunks"}
        for (plain, alts), n in flexible.items():  # masked: plain if provably in bounds
            taken = sum(got.pop(a, 0) for a in alts.split("|"))
            counts[plain] = counts.get(plain, 0) + (n - taken)
            assert 0 <= taken <= n
        assert {k: v for k, v in counts.items() if v} == got, (mark, str(rep))
    unrolls = [
        s.annotation(UNROLL_KEY)
        for s in walk_stmts(prepared.body)
        if isinstance(s, N.For) and s.annotation(UNROLL_KEY) is not None
    ]
    assert all(u == "x4" or u.startswith("kept") for u in unrolls)
    return marks


def _sched(shape, fcompute, inputs=1):
    ins = [te.placeholder(shape, name=n) for n in "AB"[:inputs]]
    out = te.compute(shape, lambda *i: fcompute(*ins, *i), name="C")
    return tir.Schedule(te.create_prim_func([*ins, out]))


def test_marks_agree_with_codegen_matmul():
    _, sch = _traced_matmul()
    marks = _assert_agree(sch.mod.main_function())
    assert marks == [
        "x16: store C contiguous",
        "x16: load C contiguous, load A scalar, load B contiguous, store C contiguous",
    ]


def test_marks_agree_with_codegen_masked_tail():
    sch = _sched((50,), lambda A, B, i: A[i] + B[i], inputs=2)
    (i,) = sch.get_loops(sch.get_block("C"))
    _, i1 = sch.split(i, factors=[None, 16])
    sch.vectorize(i1)
    marks = _assert_agree(sch.mod.main_function())
    assert marks == [
        "x16: load A contiguous masked, load B contiguous masked, store C contiguous masked"
    ]


def test_marks_agree_with_codegen_gather_chunks_and_select():
    sch = _sched((8, 48), lambda A, i, j: A[(j * 5) % 8, i] + 1.0)
    _, j = sch.get_loops(sch.get_block("C"))
    sch.vectorize(j)
    assert _assert_agree(sch.mod.main_function()) == [
        "x48 (32+16): load A gather, store C contiguous"
    ]
    sch = _sched((8, 12), lambda A, i, j: te.if_then_else(j < 5, A[i, j], 0.0))
    _, j = sch.get_loops(sch.get_block("C"))
    sch.vectorize(j)
    assert _assert_agree(sch.mod.main_function()) == [
        "x12 (8+4): load A contiguous masked, store C contiguous"
    ]


def test_marks_agree_with_codegen_transposed_copy():
    A = te.placeholder((16, 32), name="A")
    D = te.compute((32, 16), lambda c, f: A[f, c], name="D")
    sch = tir.Schedule(te.create_prim_func([A, D]))
    _, f = sch.get_loops(sch.get_block("D"))
    sch.vectorize(f)
    assert _assert_agree(sch.mod.main_function()) == ["transposed copy 16x16"]


def test_marks_agree_with_codegen_scalar_fallback():
    sch = _sched((4, 300), lambda A, i, j: A[i, j] * 2.0)
    _, j = sch.get_loops(sch.get_block("C"))
    sch.vectorize(j)
    assert _assert_agree(sch.mod.main_function()) == ["scalar loop (extent 300 outside 2..256)"]


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
