"""TVM tutorial spellings: ``tvm.testing``, tir intrinsics, ``nd.empty(n)``,
``create_prim_func``'s TVM signature and function names kept through IRModules."""

from __future__ import annotations

import importlib
import json

import numpy as np
import pytest

import ansor_lab as tvm
from ansor_lab import te, tir
from ansor_lab.errors import IRError, LoweringError, RuntimeArgumentError, ScheduleError

# -- tvm.testing ----------------------------------------------------------------------


def test_testing_is_importable_both_ways():
    mod = importlib.import_module("ansor_lab.testing")
    assert tvm.testing is mod
    assert mod.assert_allclose is tvm.testing.assert_allclose


def test_assert_allclose_takes_ndarrays_and_numpy():
    x = np.arange(1, 7, dtype="float32").reshape(2, 3)
    tvm.testing.assert_allclose(tvm.nd.array(x), x)
    tvm.testing.assert_allclose(x, tvm.nd.array(x + 1e-6), rtol=1e-5)
    off_by_one = x.copy()
    off_by_one[1, 2] += 1
    with pytest.raises(AssertionError, match="Mismatched elements: 1 / 6"):
        tvm.testing.assert_allclose(tvm.nd.array(x), off_by_one)


def test_assert_allclose_default_atol_is_tvms():
    # numpy's own default atol is 0, which would reject this
    tvm.testing.assert_allclose(np.array([0.0]), np.array([5e-8]))
    with pytest.raises(AssertionError):
        tvm.testing.assert_allclose(np.array([0.0]), np.array([5e-7]))


def test_assert_allclose_checks_shapes_without_broadcasting():
    with pytest.raises(AssertionError, match=r"shapes differ: actual \(4,\), desired \(1, 4\)"):
        tvm.testing.assert_allclose(np.zeros(4), np.zeros((1, 4)))
    with pytest.raises(AssertionError, match="shapes differ"):
        tvm.testing.assert_allclose(np.zeros(3), 0.0)


# -- tir intrinsics -------------------------------------------------------------------


def test_tir_float_intrinsics_compute_numpys_values():
    A = te.placeholder((8,), name="A")
    B = te.compute(
        (8,),
        lambda i: tir.if_then_else(
            tir.all(i >= 2, i < 6),
            tir.exp(A[i]) + tir.log(A[i]),
            tir.if_then_else(tir.any(i == 0, i == 7), tir.tanh(A[i]), tir.sigmoid(A[i]))
            + tir.sqrt(A[i]),
        ),
        name="B",
    )
    f = tvm.build(te.create_schedule(B.op), [A, B], target="llvm")
    a = np.linspace(0.5, 2.0, 8).astype("float32")
    b = np.empty(8, "float32")
    f(a, b)
    i = np.arange(8)
    mid = np.exp(a) + np.log(a)
    edge = np.where((i == 0) | (i == 7), np.tanh(a), 1 / (1 + np.exp(-a))) + np.sqrt(a)
    np.testing.assert_allclose(b, np.where((i >= 2) & (i < 6), mid, edge), rtol=1e-5)


def test_tir_index_division_intrinsics():
    A = te.placeholder((3, 4), "int32", name="A")
    flat = te.compute((12,), lambda i: A[tir.indexdiv(i, 4), tir.indexmod(i, 4)], name="flat")
    V = te.placeholder((6,), "int32", name="V")
    D = te.compute(
        (6, 4),
        lambda i, j: tir.if_then_else(
            j == 0,
            tir.truncdiv(V[i], 4),
            tir.if_then_else(
                j == 1,
                tir.truncmod(V[i], 4),
                tir.if_then_else(j == 2, tir.floordiv(V[i], 4), tir.floormod(V[i], 4)),
            ),
        ),
        name="D",
    )
    a = np.arange(12, dtype="int32").reshape(3, 4)
    out = np.empty(12, "int32")
    tvm.build(te.create_schedule(flat.op), [A, flat], target="llvm")(a, out)
    np.testing.assert_array_equal(out, a.reshape(-1))
    v = np.array([-9, -7, -1, 0, 5, 11], "int32")
    d = np.empty((6, 4), "int32")
    tvm.build(te.create_schedule(D.op), [V, D], target="llvm")(v, d)
    trunc = np.trunc(v / 4).astype("int32")
    np.testing.assert_array_equal(d, np.stack([trunc, v - 4 * trunc, v // 4, v % 4], axis=1))


def test_tir_max_min_value_and_const():
    assert tir.max_value("int8").value == 127
    assert tir.min_value("int32").value == -(2**31)
    assert tir.max_value("float32").dtype == "float32"
    assert tir.min_value("float32").value == -np.inf
    c = tir.const(3, "int64")
    assert (c.value, c.dtype) == (3, "int64")


def test_int_and_float_imm_take_the_dtype_first_as_tvm():
    from ansor_lab.errors import DSLError, DTypeError  # noqa: PLC0415

    c = tir.IntImm("int32", 4)
    assert (c.value, c.dtype) == (4, "int32")
    f = tir.FloatImm("float32", 0.5)
    assert (f.value, f.dtype) == (0.5, "float32")
    assert tir.IntImm("bool", 1).dtype == "bool"
    # the names are the classes of isinstance checks, true of every such constant
    assert isinstance(c, tir.IntImm) and isinstance(tir.const(3, "int64"), tir.IntImm)
    assert isinstance(f, tir.FloatImm) and not isinstance(f, tir.IntImm)
    assert isinstance(c, tir.PrimExpr) and te.IntImm is tir.IntImm
    x = te.placeholder((4, tir.IntImm("int32", 1000)), name="x")  # a shape of constants
    assert x.shape == (4, 1000)
    with pytest.raises(DSLError, match=r"dtype first, as TVM: write tir.IntImm\('int32', 4\)"):
        tir.IntImm(4, "int32")
    with pytest.raises(DSLError, match=r"float32 is not an integer dtype; use tir.FloatImm"):
        tir.IntImm("float32", 1)
    with pytest.raises(DSLError, match=r"int32 is not a float dtype; use tir.IntImm"):
        tir.FloatImm("int32", 1.0)
    with pytest.raises(DTypeError, match="out of the range of int8"):
        tir.IntImm("int8", 300)


def test_arithmetic_nodes_and_cast_take_tvms_arguments():
    from ansor_lab.errors import DSLError  # noqa: PLC0415

    a = tir.Var("a", "int32")
    add = tir.Add(a, 3)  # the operands alone; the dtype is theirs
    assert add.dtype == "int32" and str(add) == "a + 3"
    assert isinstance(add, tir.Add) and isinstance(a + 3, tir.Add)
    assert not isinstance(a - 3, tir.Add) and isinstance(a - 3, tir.Sub)
    assert str(tir.FloorDiv(a, 2)) == "a // 2" and tir.Max(1.5, tir.const(2.0)).dtype == "float32"
    cast = tir.Cast("float32", a)  # the dtype first
    assert cast.dtype == "float32" and cast.value is a and isinstance(cast, tir.Cast)
    assert te.Cast is tir.Cast
    with pytest.raises(DSLError, match=r"takes the two operands, as TVM.*write tir.Sub\(a, b\)"):
        tir.Sub(a, 3, "int32")
    with pytest.raises(DSLError, match=r"dtype first, as TVM: write tir.Cast\('float32'"):
        tir.Cast(a, "float32")


def test_comparisons_logic_select_and_call_take_tvms_arguments():
    from ansor_lab.errors import DSLError  # noqa: PLC0415

    i = tir.Var("i", "int32")
    lt = tir.LT(i, 10)  # the int operand becomes an int32 constant, as with i < 10
    assert isinstance(lt.b, tir.IntImm) and lt.b.value == 10 and lt.dtype == "bool"
    assert isinstance(i < 10, tir.LT) and not isinstance(i < 10, tir.GE)
    assert str(tir.And(tir.GE(i, 0), tir.NE(i, 5))) == "i >= 0 and i != 5"
    assert str(tir.Not(tir.EQ(i, 3))) == "not i == 3" and isinstance(tir.Not(i < 1), tir.Not)
    sel = tir.Select(lt, 1.0, tir.const(2.0))
    assert isinstance(sel, tir.Select) and sel.dtype == "float32"
    x = tir.Var("x", "float32")
    call = tir.Call("float32", "tir.exp", [x])  # TVM's order: dtype, op, args
    assert isinstance(call, tir.Call) and call.op == "exp" and call.args == (x,)
    A, B = _exp_of_tensor()
    fn = tvm.build(te.create_schedule(B.op), [A, B], target="llvm")
    a = np.linspace(-2, 2, 8, dtype="float32")
    out = np.empty(8, "float32")
    fn(a, out)
    np.testing.assert_allclose(out, np.exp(a), rtol=1e-6)
    with pytest.raises(DSLError, match=r"dtype first, as TVM"):
        tir.Call("exp", (x,), "float32")  # our old field order
    with pytest.raises(DSLError, match=r"tir.And\(a, b\) takes 2 bool"):
        tir.And(i < 3)


def _exp_of_tensor():
    """B[j] = exp(A[j]), the call built by tir.Call."""
    A = te.placeholder((8,), name="A")
    return A, te.compute((8,), lambda j: tir.Call("float32", "tir.exp", [A[j]]), name="B")


def test_ramp_broadcast_and_buffer_load_take_tvms_arguments():
    from ansor_lab.errors import CodegenError, IRError  # noqa: PLC0415

    o = tir.Var("o", "int32")
    ramp = tir.Ramp(o * 8, 1, 8)  # the vector dtype derived
    assert ramp.dtype == "int32x8" and isinstance(ramp, tir.Ramp) and ramp.lanes == 8
    bcast = tir.Broadcast(tir.FloatImm("float32", 1.0), 4)
    assert bcast.dtype == "float32x4" and isinstance(bcast, tir.Broadcast)
    buf = tir.decl_buffer((4, 16), "float32", name="A")
    assert tir.BufferLoad(buf, [o, 3]).dtype == "float32"
    vec = tir.BufferLoad(buf, [o, ramp])
    assert (
        vec.dtype == "float32x8"
        and isinstance(vec, tir.BufferLoad)
        and str(vec) == ("A[o, T.Ramp(o * 8, 1, 8)]")
    )
    both = tvm.arith.Analyzer().simplify(ramp + ramp)  # left as it is, not linearized
    assert both.dtype == "int32x8" and str(both) == "T.Ramp(o * 8, 1, 8) + T.Ramp(o * 8, 1, 8)"
    with pytest.raises(IRError, match="lanes must be an int >= 2"):
        tir.Ramp(0, 1, 1)
    with pytest.raises(IRError, match="base and stride are indices"):
        tir.Ramp(0.5, 1.0, 4)
    with pytest.raises(IRError, match=r"indices are integers, got .* float32"):
        tir.BufferLoad(buf, [o, 1.5])
    with pytest.raises(IRError, match="has 2 dimensions, got 1 indices"):
        tir.BufferLoad(buf, [o])
    # a hand-built vector is refused by code generation with what to write instead
    A = te.placeholder((64,), name="A")
    B = te.compute((64,), lambda j: A[j] + 1.0, name="B")
    func = tvm.lower(te.create_schedule(B.op), [A, B])["main"]
    store = func.body
    while not isinstance(store, tir.BufferStore):
        store = store.body
    idx = tir.Ramp(o * 8, 1, 8)
    value = tir.Add(tir.BufferLoad(store.value.a.buffer, [idx]), tir.Broadcast(1.0, 8))
    body = tir.For(o, 0, 8, tir.ForKind.SERIAL, tir.BufferStore(store.buffer, value, [idx]))
    with pytest.raises(CodegenError, match=r"ForKind.VECTORIZED"):
        tvm.build(func.with_body(body), target="llvm")


def test_tir_max_value_as_a_reduction_identity():
    A = te.placeholder((4, 5), name="A")
    k = te.reduce_axis((0, 5), name="k")
    M = te.compute(
        (4,),
        lambda i: te.max(tir.if_then_else(A[i, k] > 0, A[i, k], tir.min_value("float32")), axis=k),
        name="M",
    )
    a = np.array(
        [[1, -2, 3, 0.5, -1], [-1, -2, -3, -4, -5], [0, 0, 7, 0, 0], [2, 2, 2, 2, 2]], "float32"
    )
    m = np.empty(4, "float32")
    tvm.build(te.create_schedule(M.op), [A, M], target="llvm")(a, m)
    np.testing.assert_array_equal(m, [3, -np.inf, 7, 2])


# -- nd.empty -------------------------------------------------------------------------


def test_nd_empty_takes_an_int_shape():
    x = tvm.nd.empty(4)
    assert x.shape == (4,) and x.dtype == "float32"
    y = tvm.nd.empty(np.int64(3), "int32")
    assert y.shape == (3,) and y.dtype == "int32"
    x.copyfrom(np.arange(4, dtype="float32"))
    np.testing.assert_array_equal(x.numpy(), [0, 1, 2, 3])


def test_nd_empty_rejects_a_non_shape_clearly():
    with pytest.raises(RuntimeArgumentError, match="shape must be an int or a tuple of ints"):
        tvm.nd.empty("four")


# -- create_prim_func's TVM signature -------------------------------------------------


def _double():
    A = te.placeholder((4, 4), name="A")
    B = te.compute((4, 4), lambda i, j: A[i, j] * 2.0, name="B")
    return A, B


@pytest.mark.parametrize("override", [None, "int32", "int64"])
def test_create_prim_func_second_argument_is_index_dtype_override(override):
    A, B = _double()
    func = te.create_prim_func([A, B], override)
    assert func.name == "main"
    a = np.arange(16, dtype="float32").reshape(4, 4)
    b = np.empty((4, 4), "float32")
    tvm.build(func, target="llvm")(a, b)
    np.testing.assert_array_equal(b, a * 2)


def test_create_prim_func_name_is_keyword_only_and_bad_override_is_clear():
    A, B = _double()
    assert te.create_prim_func([A, B], name="double").name == "double"
    assert te.create_prim_func(ops=[A, B], index_dtype_override="int64").name == "main"
    with pytest.raises(
        LoweringError,
        match="index_dtype_override must be None, 'int32' or 'int64', got 'double'.*keyword name=",
    ):
        te.create_prim_func([A, B], "double")


# -- function names through IRModule, Schedule, lower and build ----------------------


def _mm_relu(n: int = 16):
    A = te.placeholder((n, n), name="A")
    B = te.placeholder((n, n), name="B")
    k = te.reduce_axis((0, n), name="k")
    Y = te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="Y")
    C = te.compute((n, n), lambda i, j: te.max(Y[i, j], 0.0), name="C")
    return A, B, C


def _inputs(n: int = 16):
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (n, n)).astype("float32")
    b = rng.uniform(-1, 1, (n, n)).astype("float32")
    return a, b, np.maximum(a @ b, 0)


def test_top_level_and_ir_irmodule():
    assert tvm.IRModule is tvm.ir.IRModule is tir.IRModule


def test_irmodule_key_names_the_built_function():
    A, B, C = _mm_relu()
    m = tvm.ir.IRModule({"mm_relu": te.create_prim_func([A, B, C])})
    assert m.get_global_vars() == ["mm_relu"] and m["mm_relu"].name == "mm_relu"
    assert "def mm_relu(" in m.script()
    lib = tvm.build(m, target="llvm")
    assert lib.entry_name == "mm_relu"
    a, b, want = _inputs()
    c = tvm.nd.empty((16, 16))
    lib["mm_relu"](tvm.nd.array(a), tvm.nd.array(b), c)
    tvm.testing.assert_allclose(c, want, rtol=1e-5, atol=1e-6)
    res = lib.time_evaluator("mm_relu", tvm.cpu(), number=2, repeat=3)(a, b, c)
    assert len(res.results) == 3 and res.mean > 0
    res = lib.time_evaluator(lib.entry_name, tvm.cpu(), number=1)(a, b, c)
    assert len(res.results) == 1
    with pytest.raises(RuntimeArgumentError, match="its function is 'mm_relu'"):
        lib["main"]


def test_with_attr_global_symbol_renames_as_in_the_mlc_course():
    A, B, C = _mm_relu()
    f = te.create_prim_func([A, B, C]).with_attr({"global_symbol": "mm_relu"})
    assert f.name == "mm_relu"
    lib = tvm.build(tvm.IRModule({"mm_relu": f}), target="llvm")
    a, b, want = _inputs()
    c = np.empty((16, 16), "float32")
    lib["mm_relu"](a, b, c)
    np.testing.assert_allclose(c, want, rtol=1e-5, atol=1e-6)
    assert f.with_attr("tir.noalias", True).attrs == (("tir.noalias", True),)


def test_irmodule_rejects_non_functions_and_bad_names():
    A, B, C = _mm_relu()
    with pytest.raises(IRError, match="maps to a Tensor; give PrimFuncs"):
        tvm.IRModule({"f": C})
    with pytest.raises(IRError, match="must be a non-empty string"):
        tvm.IRModule({"": te.create_prim_func([A, B, C])})
    with pytest.raises(IRError, match="must be a non-empty string"):
        te.create_prim_func([A, B, C]).with_attr("global_symbol", 7)


def test_irmodule_from_expr_and_names_as_in_tvm():
    A, B, C = _mm_relu()
    f = te.create_prim_func([A, B, C])
    assert tvm.IRModule.from_expr(f).get_global_vars() == ["main"]
    m = tvm.IRModule({"mm_relu": f})
    assert "main" not in m and "mm_relu" in m
    # as in TVM, a renamed function is found by its name only
    with pytest.raises(IRError, match="module has no function 'main'; it has mm_relu"):
        m["main"]
    with pytest.raises(IRError, match="module has no function 'other'; it has mm_relu"):
        m["other"]
    # our tools that take "a module of one function" find it whatever its name
    assert m.main_function() is m["mm_relu"]
    two = tvm.IRModule({"a": f, "b": f})
    with pytest.raises(IRError, match="no 'main' and 2 functions"):
        two.main_function()


def test_tir_schedule_keeps_the_module_function_name():
    A, B, C = _mm_relu()
    m = tvm.ir.IRModule({"mm_relu": te.create_prim_func([A, B, C])})
    sch = tir.Schedule(m)
    assert sch.mod.get_global_vars() == ["mm_relu"]
    blk = sch.get_block("Y", func_name="mm_relu")
    _, j, _ = sch.get_loops(blk)
    sch.split(j, factors=[None, 4])
    sch.get_block("C")  # the default func_name is the scheduled function's
    assert sch.mod.get_global_vars() == ["mm_relu"]
    assert sch.mod["mm_relu"].name == "mm_relu"
    assert 'sch.get_block(name="C", func_name="mm_relu")' in str(sch.trace)
    lib = tvm.build(sch.mod, target="llvm")
    assert lib.entry_name == "mm_relu"
    assert list(tvm.lower(sch).functions) == ["mm_relu"]
    a, b, want = _inputs()
    c = np.empty((16, 16), "float32")
    lib["mm_relu"](a, b, c)
    np.testing.assert_allclose(c, want, rtol=1e-5, atol=1e-6)


def test_named_trace_replays_from_json_on_fresh_schedules():
    A, B, C = _mm_relu()
    sch = tir.Schedule(tvm.IRModule({"mm_relu": te.create_prim_func([A, B, C])}))
    blk = sch.get_block("Y", func_name="mm_relu")
    i, j, k = sch.get_loops(blk)
    j0, j1 = sch.split(j, factors=[None, 4])
    sch.reorder(i, j0, k, j1)
    sch.vectorize(j1)
    text = sch.mod.script()
    data = json.loads(json.dumps(sch.trace.as_json()))
    # onto a fresh schedule of the same module: the same program, name included
    same = tir.Schedule(tvm.IRModule({"mm_relu": te.create_prim_func([A, B, C])}))
    tir.Trace.from_json(data).apply_to_schedule(same)
    assert same.mod.script() == text
    assert str(same.trace) == str(sch.trace)
    # onto the search's "main" function of the same workload: the same loops
    main = tir.Schedule(te.create_prim_func([A, B, C]))
    tir.Trace.from_json(data).apply_to_schedule(main)
    assert main.mod.get_global_vars() == ["main"]
    assert main.mod.script() == text.replace("def mm_relu(", "def main(")


def test_schedule_of_a_bare_primfunc_is_main_and_multi_function_modules_are_refused():
    A, B, C = _mm_relu()
    f = te.create_prim_func([A, B, C])
    assert tir.Schedule(f).mod.get_global_vars() == ["main"]
    two = tvm.IRModule({"f": f, "g": te.create_prim_func([A, B, C])})
    with pytest.raises(
        ScheduleError,
        match=r"schedules one function: module has no 'main' "
        r"and 2 functions \(f, g\): pick one with mod\['name'\]",
    ):
        tir.Schedule(two)
    with pytest.raises(ScheduleError, match="module has no functions"):
        tir.Schedule(tvm.IRModule({}))
    assert tir.Schedule(two["g"]).mod.get_global_vars() == ["g"]


def test_notebook_views_of_a_renamed_function():
    # MLC code names its function; the rich display, the iteration picture and the
    # worker that builds a schedule's module must find it under that name
    from ansor_lab.jupyter.display import schedule_bundle
    from ansor_lab.jupyter.iteration import _as_func

    A, B, C = _mm_relu()
    sch = tvm.tir.Schedule(tvm.IRModule({"mm_relu": te.create_prim_func([A, B, C])}))
    i, j, k = sch.get_loops(sch.get_block("Y"))
    sch.split(j, factors=[None, 4])
    bundle = schedule_bundle(sch)
    assert "lowering failed" not in bundle["text/plain"] and "al-loopnest" in bundle["text/html"]
    assert _as_func(sch).name == "mm_relu" and _as_func(sch.mod) is sch.mod["mm_relu"]


def test_small_expression_helpers_of_te_and_tir():
    n = 37
    A = te.placeholder((n,), "int32", name="A")
    B = te.compute(
        (n,),
        lambda i: (
            te.div(A[i], 4)
            + tir.div(-A[i], 3)
            + tir.ceildiv(i + 1, 5)
            + te.multiply(te.add(A[i], 1), te.subtract(2, i))
        ),
        name="B",
    )
    C = te.compute((n,), lambda i: tir.if_then_else(tir.likely(A[i] > 0), A[i], 0), name="C")
    s = te.create_schedule([B.op, C.op])
    assert isinstance(s[B], te.Stage)
    f = tvm.build(s, [A, B, C])
    a = np.arange(-18, 19, dtype="int32")
    b, c = tvm.nd.empty((n,), "int32"), tvm.nd.empty((n,), "int32")
    f(tvm.nd.array(a), b, c)
    i = np.arange(n)
    trunc = lambda p, q: np.trunc(p / q).astype("int32")  # noqa: E731 - C's division
    want = trunc(a, 4) + trunc(-a, 3) + (i + 1 + 4) // 5 + (a + 1) * (2 - i)
    np.testing.assert_array_equal(b.numpy(), want)
    np.testing.assert_array_equal(c.numpy(), np.maximum(a, 0))
    assert tir.comm_reducer is te.comm_reducer and tir.Reduce.__name__ == "Reduce"


def test_tag_scope_tags_the_computes_made_inside():
    A = te.placeholder((4,), name="A")

    @te.tag_scope(tag="elemwise")
    def double(x):
        return te.compute(x.shape, lambda i: x[i] * 2.0, name="double")

    with te.tag_scope("broadcast"):
        inner = te.compute((4,), lambda i: A[i] + 1.0, name="inner")
        own = te.compute((4,), lambda i: A[i] - 1.0, name="own", tag="mine")
        nested = double(A)
    after = te.compute((4,), lambda i: A[i], name="after")
    assert (inner.op.tag, own.op.tag, nested.op.tag, after.op.tag) == (
        "broadcast",
        "mine",
        "elemwise",
        "",
    )


@pytest.mark.parametrize("name, advice", [("gradient", "backward"), ("hybrid", "TVMScript")])
def test_te_features_we_lack_say_what_to_write(name, advice):
    from ansor_lab.errors import DSLError  # noqa: PLC0415

    with pytest.raises(DSLError, match=advice):
        getattr(te, name)(lambda: None)


def test_schedule_work_on_names_its_function():
    A = te.placeholder((8,), name="A")
    B = te.compute((8,), lambda i: A[i] * 2.0, name="B")
    sch = tir.Schedule(tvm.IRModule({"double": te.create_prim_func([A, B])}))
    sch.work_on("double")
    sch.vectorize(sch.get_loops(sch.get_block("B"))[0])
    assert "T.vectorized(8)" in sch.mod.script()
    with pytest.raises(ScheduleError, match=r"tir\.Schedule\(mod\['main'\]\)"):
        sch.work_on("main")


def test_a_calls_op_carries_tvms_name():
    x = tir.Var("x", "float32")
    call = tir.exp(x)
    assert call.op == "exp" and call.op.name == "tir.exp"  # the package's name and TVM's
    assert call.op.same_as(tvm.ir.Op.get("tir.exp")) and not call.op.same_as(
        tvm.ir.Op.get("tir.log")
    )
    built = tir.Call("float32", tvm.ir.Op.get("tir.sqrt"), [x])  # an Op as TVM passes it
    assert isinstance(built, tir.Call) and built.op.name == "tir.sqrt" and str(built) == "T.sqrt(x)"
    assert tir.if_then_else(x > 0, x, 0.0).op.name == "tir.if_then_else"


def test_for_and_seq_stmt_take_tvms_arguments():
    from ansor_lab.errors import IRError  # noqa: PLC0415

    i = te.var("i")
    A = tir.decl_buffer((8,), "float32", name="A")
    store = tir.BufferStore(A, tir.Cast("float32", i), [i])
    loop = tir.For(i, 0, 8, tir.ForKind.SERIAL, store, annotations={"pragma_unroll_explicit": 0})
    assert isinstance(loop, tir.For) and loop.annotation("pragma_unroll_explicit") == 0
    assert loop.annotations == (("pragma_unroll_explicit", 0),)  # a dict as TVM takes it
    bound = tir.For(i, 0, 8, tir.ForKind.THREAD_BINDING, store, te.thread_axis("threadIdx.x"))
    assert bound.thread_tag == "threadIdx.x"  # TVM's thread_binding: the IterVar
    seq = tir.SeqStmt([store, tir.Evaluate(0)])  # a list, as TVM
    assert isinstance(seq, tir.SeqStmt) and len(seq.seq) == 2
    with pytest.raises(IRError, match="wrap an expression as tir.Evaluate"):
        tir.SeqStmt([store, i + 1])
    with pytest.raises(IRError, match="steps by 1 here"):
        tir.For(i, 0, 8, tir.ForKind.SERIAL, store, step=2)
    fn = tvm.build(tir.PrimFunc((A,), tir.For(i, 0, 8, tir.ForKind.SERIAL, store)))
    out = np.zeros(8, "float32")
    fn(out)
    np.testing.assert_array_equal(out, np.arange(8))


def test_ir_range_takes_begin_and_end_as_tvm():
    r = tvm.ir.Range(2, 10)  # [2, 10): extent 8
    assert (int(r.min), int(r.extent)) == (2, 8) and isinstance(r, tvm.ir.Range)
    assert te.Range is tvm.ir.Range and int(tvm.ir.Range(16).extent) == 16
    assert (int(tvm.ir.Range.from_min_extent(3, 5).min), int(tvm.ir.Range(3, 5).extent)) == (3, 2)
    n = te.var("n")
    assert str(tvm.ir.Range(1, n).extent) == "n - 1"
    k = te.reduce_axis(tvm.ir.Range(2, 10), "k")
    A = te.placeholder((10,), name="A")
    s = te.compute((1,), lambda i: te.sum(A[k], axis=k), name="s")
    f = tvm.build(te.create_schedule(s.op), [A, s])
    a = np.arange(10, dtype="float32")
    out = np.zeros(1, "float32")
    f(a, out)
    assert out[0] == a[2:].sum()
    assert isinstance(A[0] + 1.0, tvm.ir.PrimExpr)


def test_ir_names_we_lack_say_what_to_write():
    from ansor_lab.errors import MissingNameError  # noqa: PLC0415

    with pytest.raises(
        MissingNameError, match=r"tvm.ir.save_json is not provided.*func.script\(\)"
    ):
        _ = tvm.ir.save_json
    with pytest.raises(MissingNameError, match=r"tvm.IRModule\(\{'main': f\}\)"):
        _ = tvm.ir.GlobalVar
    assert not hasattr(tvm.ir, "Array")
