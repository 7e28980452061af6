"""Passes written in Python: ``tir.stmt_functor`` (visit, transform, substitute),
``tir.transform.prim_func_pass`` and ``tvm.transform.PassContext`` (its honoured config
keys, and our errors for the others)."""

from __future__ import annotations

import numpy as np
import pytest

import ansor_lab as tvm
from ansor_lab import te, tir
from ansor_lab.errors import OutOfScopeError


def vector_add(n: int = 64):
    a, b = te.placeholder((n,), name="a"), te.placeholder((n,), name="b")
    c = te.compute((n,), lambda i: a[i] + b[i], name="c")
    return te.create_schedule(c.op), [a, b, c]


def test_post_order_visit_calls_children_before_their_parent():
    s, args = vector_add()
    func = tvm.lower(s, args)["main"]
    seen = []
    tir.stmt_functor.post_order_visit(func.body, lambda node: seen.append(type(node).__name__))
    assert seen.index("Add") < seen.index("BufferStore") < seen.index("For")
    assert seen[-1] == type(func.body).__name__ and seen.count("For") == 1


def test_ir_transform_pre_and_post_order_and_the_type_filter():
    s, args = vector_add()
    body = tvm.lower(s, args)["main"].body
    # postorder on expressions only: every a + b becomes a - b
    swapped = tir.stmt_functor.ir_transform(body, None, lambda e: tir.Sub(e.a, e.b), ["tir.Add"])
    assert "a[i] - b[i]" in str(swapped) and "+" not in str(swapped)
    # a preorder result replaces the node, its children are not visited
    visited = []

    def pre(node):
        visited.append(type(node).__name__)
        return tir.Evaluate(0) if isinstance(node, tir.For) else None

    out = tir.stmt_functor.ir_transform(body, pre, None)
    assert "For" in visited and "BufferStore" not in visited and "for" not in str(out)
    # None everywhere keeps the very same statement
    assert tir.stmt_functor.ir_transform(body, None, lambda n: None) is body


def test_substitute_in_statements_and_expressions():
    i, k = te.var("i"), te.var("k")
    assert str(tir.stmt_functor.substitute(i * 2 + 1, {i: k + 3})) == "(k + 3) * 2 + 1"
    s, args = vector_add(16)
    loop = tvm.lower(s, args)["main"].body
    while not isinstance(loop, tir.For):
        loop = loop.body
    body = tir.stmt_functor.substitute(loop.body, {loop.loop_var: 15 - k})
    assert "c[15 - k] = a[15 - k] + b[15 - k]" in str(body)


def test_a_python_pass_runs_in_lower_and_build_and_the_result_is_right():
    s, args = vector_add(64)

    @tir.transform.prim_func_pass(opt_level=0)
    def reverse(f, mod, ctx):
        def flip(op):
            if isinstance(op, tir.For):
                k = te.var("k")
                last = op.extent.value - 1
                body = tir.stmt_functor.substitute(op.body, {op.loop_var: last - k})
                return tir.For(k, 0, op.extent, tir.ForKind.SERIAL, body)
            return None

        return f.with_body(tir.stmt_functor.ir_transform(f.body, None, flip, ["tir.For"]))

    assert "63 - k" not in str(tvm.lower(s, args))
    with tvm.transform.PassContext(config={"tir.add_lower_pass": [(2, reverse)]}):
        assert "c[63 - k] = a[63 - k] + b[63 - k]" in str(tvm.lower(s, args))
        f = tvm.build(s, args)
    x, y = np.arange(64, dtype="float32"), np.ones(64, "float32")
    out = tvm.nd.empty((64,), "float32")
    f(tvm.nd.array(x), tvm.nd.array(y), out)
    np.testing.assert_array_equal(out.numpy(), x + 1)
    # a pass is also a function of modules
    mod = reverse(tvm.lower(s, args))
    assert "63 - k" in str(mod)


def test_pass_context_options_reach_the_build():
    s, args = vector_add(64)
    _, inner = s[args[2]].split(args[2].op.axis[0], factor=16)
    s[args[2]].vectorize(inner)
    assert "T.Ramp(" in tvm.build(s, args).get_source("tir")
    with tvm.transform.PassContext(opt_level=3, config={"tir.disable_vectorize": True}) as ctx:
        assert tvm.transform.PassContext.current() is ctx
        assert tvm.ir.transform.PassContext.current() is ctx
        plain = tvm.build(s, args)
        with tvm.transform.PassContext(config={"tir.instrument_bound_checkers": True}):
            checked = tvm.build(s, args)
        assert tvm.transform.PassContext.current() is ctx
    assert tvm.transform.PassContext.current().config == {}
    assert "T.Ramp(" not in plain.get_source("tir") and "range(16)" in plain.get_source("tir")
    assert "check.ok" in checked.get_source("ll-unopt")
    assert "check.ok" not in plain.get_source("ll-unopt")
    x = np.arange(64, dtype="float32")
    for f in (plain, checked):
        out = tvm.nd.empty((64,), "float32")
        f(tvm.nd.array(x), tvm.nd.array(x), out)
        np.testing.assert_array_equal(out.numpy(), 2 * x)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"config": {"relay.backend.use_auto_scheduler": True}}, "tir.disable_vectorize"),
        ({"disabled_pass": ["AlterOpLayout"]}, "leave disabled_pass out"),
        ({"required_pass": ["FastMath"]}, "leave required_pass out"),
    ],
)
def test_pass_context_refuses_what_it_cannot_honour(kwargs, match):
    with pytest.raises(OutOfScopeError, match=match):
        tvm.transform.PassContext(**kwargs)


def test_pass_context_argument_errors():
    with pytest.raises(ValueError, match="from 0 to 4"):
        tvm.transform.PassContext(opt_level=9)
    with pytest.raises(ValueError, match=r"\(phase, pass\)"):
        tvm.transform.PassContext(config={"tir.add_lower_pass": [lambda f, m, c: f]})
    with pytest.raises(ValueError, match="takes a bool"):
        tvm.transform.PassContext(config={"tir.disable_vectorize": "yes"})
    assert set(tvm.transform.PassContext.list_configs()) == {
        "tir.disable_vectorize",
        "tir.instrument_bound_checkers",
        "tir.add_lower_pass",
    }


def test_a_pass_returning_something_else_is_our_error():
    s, args = vector_add(8)
    broken = tir.transform.prim_func_pass(lambda f, mod, ctx: f.body)
    with pytest.raises(TypeError, match="returns a PrimFunc"):
        broken(tvm.lower(s, args))


def test_simplify_pass_and_for_takes_python_ints():
    i = te.var("i")
    loop = tir.For(i, 0, 4, tir.ForKind.UNROLLED, tir.Evaluate(0))
    assert isinstance(loop.extent, tir.IntImm) and loop.extent.value == 4
    assert loop.kind == "unrolled" == tir.ForKind.UNROLLED
    s, args = vector_add(8)
    mod = tir.transform.Simplify()(tvm.lower(s, args))
    assert "c[i] = a[i] + b[i]" in str(mod)
