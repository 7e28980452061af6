"""TVM public names: each works as TVM's does, or stops with our error saying what to write."""

from __future__ import annotations

import importlib
import pickle
import uuid

import numpy as np
import pytest

import ansor_lab as tvm
from ansor_lab import te, tir
from ansor_lab.errors import (
    DSLError,
    IRError,
    LoweringError,
    MissingNameError,
    MissingOperatorError,
    OutOfScopeError,
    RegistryError,
    UnusedCallbackWarning,
)

# --------------------------------------------------------------------------------------
# names out of scope: an AttributeError of ours, with Python's opening and advice

MISSING = [
    ("te", "SpecializedCondition", "specialize"),
    ("te", "TensorSlice", "A[i, j]"),
    ("te", "decl_tensor_intrin", "vectorize"),
    ("te", "extern_primfunc", "te.compute"),
    ("tir", "ProducerLoad", "A[i, j]"),
    ("tir", "ProducerStore", "A[i, j]"),
    ("tir", "Shuffle", "vectorize"),
    ("tir", "Let", "LetStmt"),
    ("tir", "Any", "te.var"),
    ("tir", "AssertStmt", "in Python before calling"),
    ("tir", "While", "For loop"),
    ("tir", "AllocateConst", "argument"),
    ("tir", "AttrStmt", "sch.annotate"),
    ("tir", "DeclBuffer", "tir.Allocate"),
    ("tir", "Prefetch", "leave it out"),
    ("tir", "BufferRegion", "T.reads"),
    ("tir", "MatchBufferRegion", "index the outer buffer"),
    ("tir", "BlockRealize", "T.block"),
    ("tir", "IndexMap", "lambda i, j"),
    ("tir", "call_packed", "call it"),
    ("tir", "call_tir", "packed-function"),
    ("tir", "ret", "output buffer"),
    ("tir", "trace", "tvm.lower"),
    ("tir", "ldexp", "exp2"),
    ("tir", "reinterpret", "arr.view"),
    ("tir", "q_multiply_shift", "float32"),
    ("tir", "vscale", "fixed"),
    ("tir", "BlockScope", "get_block"),
    ("tir", "StmtSRef", "get_loops"),
    ("tir", "ScheduleState", "sch.mod"),
    ("tir", "analysis", "tir.verify"),
    ("tir", "StringImm", "call_extern"),
    ("tir", "bijective_layout", "layout_transform"),
    ("tir", "BijectiveLayout", "layout_transform"),
    ("tir", "layout", "layout_transform"),
    ("tir", "Layout", "layout_transform"),
    ("tirx", "call_packed", "call it"),  # newer TVM's name for tir says the same
    ("", "instrument", "time_evaluator"),
    ("arith", "IntSet", "const_int_bound"),
    ("arith", "detect_iter_map", "can_prove"),
]


@pytest.mark.parametrize(("face", "name", "advice"), MISSING)
def test_missing_names_explain(face: str, name: str, advice: str):
    module = importlib.import_module(f"ansor_lab.{face}" if face else "ansor_lab")
    assert not hasattr(module, name)
    with pytest.raises(MissingNameError) as info:
        getattr(module, name)
    err = info.value
    assert isinstance(err, OutOfScopeError) and isinstance(err, AttributeError)
    shown = "ansor_lab.tir" if face == "tirx" else module.__name__
    assert str(err).startswith(f"module {shown!r} has no attribute {name!r}: tvm.")
    assert advice in str(err)


def test_other_names_stay_plain_attribute_errors():
    for module in (tvm, te, tir, tvm.arith):
        with pytest.raises(AttributeError) as info:
            module.no_such_name  # noqa: B018 - the access itself must raise
        assert type(info.value) is AttributeError
        assert not hasattr(module, "__wrapped__")
    # the topi error is one of these too
    assert issubclass(MissingOperatorError, MissingNameError)


# --------------------------------------------------------------------------------------
# names provided


def test_decl_buffer_binds_in_lower_and_build():
    A = te.placeholder((8, 4), name="A")
    B = te.compute((8, 4), lambda i, j: A[i, j] * 2.0 + 1.0, name="B")
    s = te.create_schedule(B.op)
    Ab = tir.decl_buffer(A.shape, A.dtype, name="Ab", offset_factor=1, data_alignment=64)
    Bb = tir.decl_buffer((8, 4), "float32", "Bb", strides=[4, 1])
    assert isinstance(Ab, tir.Buffer) and Ab.shape == (8, 4) and Ab.dtype == "float32"
    assert Bb.strides == (4, 1) and Ab.scope == "global"
    assert "B[i, j] = A[i, j]" in str(tvm.lower(s, [A, B], binds={A: Ab, B: Bb}))
    f = tvm.build(s, [A, B], "llvm", binds={A: Ab})
    a = np.random.default_rng(0).random((8, 4), dtype="float32")
    b = np.empty_like(a)
    f(a, b)
    np.testing.assert_allclose(b, a * 2 + 1, rtol=1e-6)
    # a buffer laid out otherwise than the tensor is refused, not silently ignored
    with pytest.raises(LoweringError, match="dense, row-major"):
        tvm.lower(s, [A, B], binds={A: tir.decl_buffer((4, 8), "float32")})
    with pytest.raises(LoweringError, match="binds"):
        tvm.build(s, [A, B], binds={A: tir.decl_buffer((8, 4), "float32", scope="shared")})


def test_decl_buffer_as_primfunc_params_builds_and_runs():
    X = tir.decl_buffer((16,), "float32", "X")
    Y = tir.decl_buffer((16,), name="Y")  # float32 by default, as TVM
    i = tir.Var("i", "int32")
    store = tir.BufferStore(Y, X[i] * tir.const(3.0, "float32"), (i,))
    f = tvm.build(tir.PrimFunc((X, Y), tir.For(i, 0, 16, tir.ForKind.SERIAL, store)))
    x = np.arange(16, dtype="float32")
    y = np.zeros_like(x)
    f(x, y)
    assert y.tolist() == (x * 3).tolist()


def test_decl_buffer_refuses_what_a_buffer_cannot_hold():
    with pytest.raises(IRError, match="static shapes"):
        tir.decl_buffer((te.var("n"),), "float32")
    with pytest.raises(IRError, match="elem_offset"):
        tir.decl_buffer((4,), "float32", elem_offset=2)
    with pytest.raises(IRError, match="constant strides"):
        tir.decl_buffer((4, 4), "float32", strides=[te.var("s"), 1])
    with pytest.raises(IRError, match="dense and row-major"):  # a padded argument
        tir.decl_buffer((4, 4), "float32", strides=[8, 1])
    assert tir.decl_buffer((4,), elem_offset=0).shape == (4,)


def test_size_var_stmt_seq_stmt_list_convert():
    n = tir.SizeVar("n", "int32")
    assert isinstance(n, tir.Var) and n.name == "n" and n.dtype == "int32"
    e0, e1, e2 = (tir.Evaluate(k) for k in range(3))
    seq = tir.stmt_seq(e0, tir.stmt_seq(e1, 2))
    assert isinstance(seq, tir.SeqStmt) and len(seq.seq) == 2
    assert tir.stmt_seq(e0) is e0
    assert tir.stmt_list(seq) == [e0, e1, e2]
    assert tir.stmt_list(e0) == [e0]
    one, half, yes, big, text = tir.convert([1, 0.5, True, 2**40, "s"])
    assert (one.value, one.dtype) == (1, "int32")
    assert (half.value, half.dtype) == (0.5, "float32")
    assert (yes.value, yes.dtype) == (1, "bool")
    assert (big.value, big.dtype) == (2**40, "int64")
    assert text == "s" and tir.convert(n) is n
    assert tir.convert({"k": 2})["k"].value == 2
    with pytest.raises(DSLError, match="cannot convert"):
        tir.convert(object())


def test_arith_analyzer_simplify_and_prove():
    ana = tvm.arith.Analyzer()
    x, y = tir.Var("x", "int32"), tir.Var("y", "int32")
    ana.bind(x, te.Range(0, 16))
    assert ana.simplify((x * 4 + 3) // 4) is x
    assert ana.simplify((x * 4 + 3) % 4).value == 3
    assert ana.can_prove(x < 16) and not ana.can_prove(x < 15)
    assert ana.can_prove(x * 2 + 1 > 0, tvm.arith.ProofStrength.SYMBOLIC_BOUND)
    assert ana.can_prove_equal(x + x, x * 2)
    bound = ana.const_int_bound(x * 2 + 1)
    assert (bound.min_value, bound.max_value) == (1, 31)
    assert ana.const_int_bound(y).max_value == tvm.arith.ConstIntBound.POS_INF
    ms = ana.modular_set(y * 8 + 3)
    assert (ms.coeff, ms.base) == (8, 3)
    ana.bind(y, x + 1)  # an expression: y is replaced by it
    assert ana.can_prove(y <= 16) and not ana.can_prove(y <= 15)
    ana.update(y, tvm.arith.ConstIntBound(0, 3), override=True)
    n, v = tir.SizeVar("n", "int32"), tir.Var("v", "int32")  # a SizeVar is known >= 0
    assert ana.can_prove(n >= 0) and not ana.can_prove(v >= 0)
    assert ana.simplify(n // 4 * 4 + n % 4) is n and te.size_var("m").dtype == "int32"
    with pytest.raises(OutOfScopeError, match="const_int_bound"):
        ana.int_set(x)


def test_register_and_get_global_func():
    name = f"ansor_lab_test.add_one.{uuid.uuid4().hex}"  # fresh in a process that reruns
    assert tvm.get_global_func(name, allow_missing=True) is None
    with pytest.raises(RegistryError, match="no function is registered"):
        tvm.get_global_func(name)

    @tvm.register_func(name)
    def add_one(x):
        return x + 1

    assert tvm.get_global_func(name)(41) == 42
    with pytest.raises(RegistryError, match="override=True"):
        tvm.register_func(name, lambda x: x)
    tvm.register_func(name, lambda x: x - 1, override=True)
    assert tvm.get_global_func(name)(41) == 40

    @tvm.register_func
    def ansor_lab_test_plain():
        return "plain"

    assert tvm.get_global_func("ansor_lab_test_plain")() == "plain"


def test_cuda_compile_callback_is_accepted_with_a_warning():
    with pytest.warns(UnusedCallbackWarning, match="never calls it: CUDA C is compiled by NVRTC"):

        @tvm.register_func("tvm_callback_cuda_compile", override=True)
        def compile_cuda(code, target=None):
            return code

    assert tvm.get_global_func("tvm_callback_cuda_compile") is compile_cuda


def test_datatype():
    for text, code, bits, lanes in [
        ("float32", 2, 32, 1),
        ("int8", 0, 8, 1),
        ("uint8", 1, 8, 1),
        ("bool", 1, 1, 1),
        ("float16x4", 2, 16, 4),
        ("handle", 3, 64, 1),
    ]:
        dt = tvm.DataType(text)
        assert (dt.type_code, dt.bits, dt.lanes) == (code, bits, lanes)
        assert str(dt) == text and dt == text
        assert str(tvm.DataType(str(dt))) == text
    assert tvm.DataType(np.float64) == "float64"
    assert tvm.DataType("float32").with_lanes(8) == "float32x8"
    assert pickle.loads(pickle.dumps(tvm.DataType("int8x4"))).lanes == 4
    with pytest.raises(DSLError, match="not a dtype"):
        tvm.DataType("floaty")


def test_error_classes_catch_ours():
    with pytest.raises(tvm.error.TVMError):
        te.placeholder((4,), dtype="complex64")  # an error of ours
    with pytest.raises(tvm.error.OpNotImplemented):
        tir.call_packed  # noqa: B018
    with pytest.raises(tvm.error.DiagnosticError):
        tvm.script.from_source(42)
    assert issubclass(tvm.error.InternalError, tvm.error.TVMError)
    assert issubclass(tvm.error.OpAttributeRequired, AttributeError)

    @tvm.error.register_error
    class MyError(tvm.error.TVMError):
        pass

    assert MyError.__name__ == "MyError"
