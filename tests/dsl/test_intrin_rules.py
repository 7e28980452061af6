"""User intrinsics and lowering rules (TVM's "Intrinsics and Math Functions" tutorial)."""

from __future__ import annotations

import numpy as np
import pytest

import ansor_lab as tvm
from ansor_lab import te
from ansor_lab.dsl import intrin_rules
from ansor_lab.errors import CodegenError, DSLError
from ansor_lab.ir import register_intrin_lowering, register_op_attr


@pytest.fixture(autouse=True)
def _clean_registry():
    rules, attrs = (
        dict(intrin_rules._RULES),
        {k: dict(v) for k, v in intrin_rules._OP_ATTRS.items()},
    )
    yield
    intrin_rules._RULES.clear()
    intrin_rules._RULES.update(rules)
    intrin_rules._OP_ATTRS.clear()
    intrin_rules._OP_ATTRS.update(attrs)


def _mylog(x):
    return tvm.tir.call_intrin(x.dtype, "tir.mylog", x)


def _log_rule(op):
    assert isinstance(op, tvm.tir.Call)
    assert op.op.name == "tir.mylog"
    if op.dtype == "float32":
        return tvm.tir.call_pure_extern("float32", "logf", op.args[0])
    return op


def _elementwise(fn, n=37):
    A = te.placeholder((n,), name="A")
    B = te.compute(A.shape, lambda i: fn(A[i]), name="B")
    return A, B, te.create_schedule(B.op)


def test_a_user_intrinsic_runs_through_its_llvm_rule():
    register_op_attr("tir.mylog", "TCallEffectKind", tvm.tir.CallEffectKind.Pure)
    register_intrin_lowering("tir.mylog", target="llvm", f=_log_rule, level=99)
    A, B, s = _elementwise(_mylog)
    f = tvm.build(s, [A, B], "llvm")
    a = np.random.uniform(0.5, 3.0, size=37).astype("float32")
    b = np.zeros(37, "float32")
    f(a, b)
    np.testing.assert_allclose(b, np.log(a), rtol=1e-6)


def test_a_cuda_rule_shapes_the_cuda_source():
    register_op_attr("tir.mylog", "TCallEffectKind", tvm.tir.CallEffectKind.Pure)
    register_intrin_lowering("tir.mylog", target="cuda", f=_log_rule, level=99)
    A, B, s = _elementwise(_mylog, 128)
    bx, tx = s[B].split(B.op.axis[0], factor=64)
    s[B].bind(bx, te.thread_axis("blockIdx.x"))
    s[B].bind(tx, te.thread_axis("threadIdx.x"))
    src = tvm.build(s, [A, B], "cuda", name="mylog").imported_modules[0].get_source()
    assert "logf(A[" in src


def test_a_user_intrinsic_without_a_rule_for_the_target_is_a_clear_error():
    register_op_attr("tir.mylog", "TCallEffectKind", tvm.tir.CallEffectKind.Pure)
    register_intrin_lowering("tir.mylog", target="cuda", f=_log_rule)
    A, B, s = _elementwise(_mylog)
    with pytest.raises(CodegenError, match=r"no lowering rule for target 'llvm'.*register_intrin"):
        tvm.build(s, [A, B], "llvm")


def test_a_rule_overrides_a_builtin_and_returning_the_call_keeps_it():
    seen = []

    def exp_as_tanh(op):
        seen.append((op.op.name, op.dtype))
        if op.dtype == "float32":
            return tvm.tir.call_pure_extern("float32", "tanhf", op.args[0])
        return op  # no translation: the built-in stays

    register_intrin_lowering("tir.exp", target="llvm", f=exp_as_tanh, level=99)
    A, B, s = _elementwise(te.exp)
    a = np.linspace(-2, 2, 37).astype("float32")
    b = np.zeros(37, "float32")
    tvm.build(s, [A, B], "llvm")(a, b)
    np.testing.assert_allclose(b, np.tanh(a), rtol=1e-6)
    assert seen and seen[0] == ("tir.exp", "float32")
    A64 = te.placeholder((5,), "float64", name="A")
    B64 = te.compute((5,), lambda i: te.exp(A64[i]), name="B")
    a64, b64 = np.linspace(0, 1, 5), np.zeros(5)
    tvm.build(te.create_schedule(B64.op), [A64, B64], "llvm")(a64, b64)
    np.testing.assert_allclose(b64, np.exp(a64), rtol=1e-12)


def test_a_lower_level_does_not_replace_a_higher_one_and_decorators_work():
    @register_intrin_lowering("tir.exp", target="llvm", level=50)
    def to_sqrt(op):
        return tvm.tir.call_pure_extern("float32", "sqrtf", op.args[0])

    register_intrin_lowering("tir.exp", target="llvm", f=lambda op: op.args[0], level=10)
    A, B, s = _elementwise(te.exp)
    a = np.linspace(0, 4, 37).astype("float32")
    b = np.zeros(37, "float32")
    tvm.build(s, [A, B], "llvm")(a, b)
    np.testing.assert_allclose(b, np.sqrt(a), rtol=1e-6)


def test_undeclared_intrinsics_and_bad_rules_say_what_to_write():
    with pytest.raises(DSLError, match="register_op_attr"):
        tvm.tir.call_intrin("float32", "tir.undeclared_op", te.var("x", "float32"))
    register_op_attr("tir.myop", "TCallEffectKind", tvm.tir.CallEffectKind.Pure)
    register_intrin_lowering("tir.myop", target="llvm", f=lambda op: "not an expression")
    A, B, s = _elementwise(lambda x: tvm.tir.call_intrin("float32", "tir.myop", x))
    with pytest.raises(CodegenError, match="returns an expression"):
        tvm.build(s, [A, B], "llvm")
