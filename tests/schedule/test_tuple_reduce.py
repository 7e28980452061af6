"""Tuple reducers (``te.comm_reducer`` over tuples: argmax, argmin), as TVM's tutorials
write them: the reference, the default and hand schedules, printing, refusals."""

from __future__ import annotations

import numpy as np
import pytest
from schedule_helpers import verify_trace_roundtrip

import ansor_lab as tvm
from ansor_lab import auto_scheduler, te, tir
from ansor_lab.dsl.reference import evaluate
from ansor_lab.errors import DSLError, ScheduleError, TaskError

M, N = 24, 37


def _argmax():
    def fcombine(x, y):
        lhs = tir.Select((x[1] >= y[1]), x[0], y[0])
        rhs = tir.Select((x[1] >= y[1]), x[1], y[1])
        return lhs, rhs

    def fidentity(t0, t1):
        return tir.const(-1, t0), tvm.te.min_value(t1)

    return te.comm_reducer(fcombine, fidentity, name="argmax")


def _argmin():
    def fcombine(x, y):
        keep = x[1] <= y[1]
        return tir.Select(keep, x[0], y[0]), tir.Select(keep, x[1], y[1])

    return te.comm_reducer(
        fcombine, lambda t0, t1: (tir.const(-1, t0), te.max_value(t1)), name="argmin"
    )


def _idx_val(name: str = "T", reducer=None):
    idx = te.placeholder((M, N), name="idx", dtype="int32")
    val = te.placeholder((M, N), name="val", dtype="float32")
    k = te.reduce_axis((0, N), "k")
    red = reducer or _argmax()
    T0, T1 = te.compute((M,), lambda i: red((idx[i, k], val[i, k]), axis=k), name=name)
    return idx, val, T0, T1


def _k_val(name: str = "T"):
    val = te.placeholder((M, N), name="val", dtype="float32")
    k = te.reduce_axis((0, N), "k")
    T0, T1 = te.compute((M,), lambda i: _argmax()((k, val[i, k]), axis=k), name=name)
    return val, T0, T1


def _inputs(seed: int = 0):
    rng = np.random.default_rng(seed)
    # few distinct values: every row has ties, which TVM's select order resolves
    val = rng.integers(0, 4, (M, N)).astype("float32")
    idx = np.tile(np.arange(N, dtype="int32"), (M, 1))
    return idx, val


def _run(built, *inputs):
    o0, o1 = np.full(M, -7, "int32"), np.full(M, np.nan, "float32")
    built(*inputs, o0, o1)
    return o0, o1


def test_reference_is_numpy_argmax_with_first_index_on_ties():
    idx, val, T0, T1 = _idx_val()
    iv, vv = _inputs()
    got = evaluate([T0, T1], {idx: iv, val: vv})
    np.testing.assert_array_equal(got[T0], np.argmax(vv, axis=1))
    np.testing.assert_array_equal(got[T1], vv.max(axis=1))
    idx, val, T0, T1 = _idx_val(reducer=_argmin())
    got = evaluate([T0, T1], {idx: iv, val: vv})
    np.testing.assert_array_equal(got[T0], np.argmin(vv, axis=1))


@pytest.mark.parametrize("form", ["idx_val", "k_val"])
def test_default_schedule_builds_and_matches_numpy(form):
    iv, vv = _inputs(1)
    if form == "idx_val":
        idx, val, T0, T1 = _idx_val()
        args, inputs = [idx, val, T0, T1], (iv, vv)
    else:
        val, T0, T1 = _k_val()
        args, inputs = [val, T0, T1], (vv,)
    s = te.create_schedule(T0.op)  # TVM's T0.op is both outputs: T1 comes along
    text = str(tvm.lower(s, args))
    assert text.count("for k in range(37)") == 1  # one nest updates both outputs
    o0, o1 = _run(tvm.build(s, args), *inputs)
    np.testing.assert_array_equal(o0, np.argmax(vv, axis=1))
    np.testing.assert_array_equal(o1, vv.max(axis=1))


def test_te_hand_schedule_split_reorder_parallel_and_reduction_split():
    val, T0, T1 = _k_val()
    s = te.create_schedule(T0.op)
    io, ii = s[T0].split(T0.op.axis[0], factor=8)
    ko, ki = s[T0].split(T0.op.reduce_axis[0], factor=16)  # 37 = 2 * 16 + 5: guarded
    s[T0].reorder(io, ko, ii, ki)
    s[T0].parallel(io)
    text = str(tvm.lower(s, [val, T0, T1]))
    assert "T.parallel(3)" in text and "if k_0 * 16 + k_1 < 37" in text
    vv = _inputs(2)[1]
    o0, o1 = _run(tvm.build(s, [val, T0, T1]), vv)
    np.testing.assert_array_equal(o0, np.argmax(vv, axis=1))
    np.testing.assert_array_equal(o1, vv.max(axis=1))


def test_tir_schedule_steps_replay_and_build():
    idx, val, T0, T1 = _idx_val(name="argmax")
    sch = tir.Schedule(te.create_prim_func([idx, val, T0, T1]))
    b = sch.get_block("argmax")
    i, k = sch.get_loops(b)
    i0, i1 = sch.split(i, [None, 4])
    k0, k1 = sch.split(k, [None, 8])
    sch.reorder(i0, k0, i1, k1)
    sch.parallel(i0)
    sch.unroll(k1)
    verify_trace_roundtrip(sch, [idx, val, T0, T1])
    iv, vv = _inputs(3)
    o0, o1 = _run(tvm.build(sch.mod, target="llvm"), iv, vv)
    np.testing.assert_array_equal(o0, np.argmax(vv, axis=1))
    np.testing.assert_array_equal(o1, vv.max(axis=1))


def test_a_consumer_reads_both_outputs():
    val, T0, T1 = _k_val()
    D = te.compute((M,), lambda i: T0[i].astype("float32") * 10.0 + T1[i], name="D")
    s = te.create_schedule(D.op)
    vv = _inputs(4)[1]
    out = np.empty(M, "float32")
    tvm.build(s, [val, D])(vv, out)
    np.testing.assert_allclose(out, np.argmax(vv, axis=1) * 10.0 + vv.max(axis=1))


def test_create_prim_func_prints_both_updates_in_one_block_and_parses_back():
    idx, val, T0, T1 = _idx_val(name="argmax")
    text = te.create_prim_func([idx, val, T0, T1]).script()
    for line in [
        'with T.block("argmax"):',
        'v_i, v_k = T.axis.remap("SR", [i, k])',
        "T.writes(argmax[v_i], argmax_v1[v_i])",
        "argmax[v_i] = -1",
        "argmax_v1[v_i] = T.float32(-inf)",
        "v_argmax: T.int32 = T.Select(argmax_v1[v_i] >= val[v_i, v_k], argmax[v_i], idx[v_i, v_k])",
        "argmax[v_i] = v_argmax",
        "argmax_v1[v_i] = v_argmax_v1",
    ]:
        assert line in text, text
    assert text.count("T.block(") == 1
    parsed = tvm.script.from_source(text)
    iv, vv = _inputs(5)
    o0, o1 = _run(tvm.build(parsed, target="llvm"), iv, vv)
    np.testing.assert_array_equal(o0, np.argmax(vv, axis=1))
    np.testing.assert_array_equal(o1, vv.max(axis=1))


def test_refusals_name_the_tuple_reduction():
    val, T0, T1 = _k_val()
    s = te.create_schedule(T0.op)
    with pytest.raises(ScheduleError, match="output 1 of tuple reduction 'T'.*schedule 'T'"):
        s[T1].split(T1.op.axis[0], factor=4)
    with pytest.raises(ScheduleError, match="compute_inline: block 'T': is a tuple reduction"):
        s[T0].compute_inline()
    sch = tir.Schedule(te.create_prim_func([val, T0, T1]))
    with pytest.raises(ScheduleError, match="rfactor: block 'T': is a tuple reduction"):
        sch.rfactor(sch.get_loops(sch.get_block("T"))[1], 0)
    with pytest.raises(TaskError, match="tuple reduction \\(argmax\\).*by hand"):
        auto_scheduler.SearchTask(
            compute_dag=auto_scheduler.ComputeDAG([val, T0, T1]), target="llvm"
        )
    bad = te.comm_reducer(lambda x, y: (x[0],), lambda t0, t1: (0, 0.0), name="bad")
    k = te.reduce_axis((0, N), "k2")
    with pytest.raises(DSLError, match="must return 2 values"):
        te.compute((M,), lambda i: bad((k, val[i, k]), axis=k))
