"""The IR verifier rejects malformed programs with a message naming the culprit."""

from __future__ import annotations

import pytest

import ansor_lab as tvm
from ansor_lab.dsl import expr as E
from ansor_lab.errors import IRError
from ansor_lab.ir import nodes as N, verify


def _I(v):
    return E.IntImm(v)


A = N.Buffer("A", (4, 4), "float32")
i, j = E.Var("i"), E.Var("j")


def func(body, params=(A,)):
    return N.PrimFunc(tuple(params), body, "f")


def loop(var, body, kind="serial", tag=""):
    return N.For(var, _I(0), _I(4), kind, body, tag)


def store(value=None, indices=None, buf=A):
    return N.BufferStore(
        buf,
        value if value is not None else E.FloatImm(1.0),
        indices if indices is not None else (i, j),
    )


def test_a_well_formed_function_passes():
    tmp = N.Buffer("tmp", (4,), "float32", "local")
    body = loop(
        i,
        N.Allocate(
            tmp,
            N.seq(
                loop(j, N.BufferStore(tmp, A[i, j], (j,)), "vectorized"),
                loop(j, store(tmp[j] * 2.0), "unrolled"),
            ),
        ),
        "parallel",
    )
    verify(func(body), "llvm")  # no exception
    verify(
        func(
            loop(
                i, loop(j, store(), "thread_binding", "threadIdx.x"), "thread_binding", "blockIdx.x"
            )
        ),
        "cuda",
    )


def test_undefined_variable():
    with pytest.raises(
        IRError,
        match=r"invalid IR in function 'f': variable 'j' is used in the store to 'A' but not "
        r"defined here",
    ):
        verify(func(loop(i, store())))


def test_loop_variable_out_of_its_loop():
    body = N.seq(loop(i, loop(j, store())), store())
    with pytest.raises(IRError, match="variable 'i' is used in the store to 'A' but not defined"):
        verify(func(body))


def test_buffer_not_allocated():
    tmp = N.Buffer("tmp", (4,), "float32")
    with pytest.raises(
        IRError,
        match=r"buffer 'tmp' is accessed in the store to 'A' but is neither a parameter nor "
        r"allocated around this point",
    ):
        verify(func(loop(i, loop(j, store(tmp[j])))))
    # allocated only around a sibling: still out of scope here
    body = N.seq(
        N.Allocate(tmp, loop(j, N.BufferStore(tmp, E.FloatImm(0.0), (j,)))),
        loop(i, loop(j, store(tmp[j]))),
    )
    with pytest.raises(IRError, match="buffer 'tmp' is accessed"):
        verify(func(body))


def test_wrong_index_arity():
    with pytest.raises(
        IRError, match=r"buffer 'A' has 2 dimensions but is indexed with 1 in the store to 'A'"
    ):
        verify(func(loop(i, store(indices=(i,)))))
    with pytest.raises(IRError, match="buffer 'A' has 2 dimensions but is indexed with 3"):
        verify(func(loop(i, loop(j, store(A[i, j, j])))))


def test_store_dtype_mismatch():
    with pytest.raises(
        IRError, match=r"the store to 'A' writes a float64 value into a float32 buffer"
    ):
        verify(func(loop(i, loop(j, store(E.FloatImm(1.0, "float64"))))))
    with pytest.raises(IRError, match="writes a int32 value into a float32 buffer"):
        verify(func(loop(i, loop(j, store(i + j)))))


def test_mixed_dtypes_inside_an_expression():
    bad = E.Add(A[i, j], E.FloatImm(1.0, "float64"), "float32")
    with pytest.raises(IRError, match=r"Add in the store to 'A' mixes float32 and float64"):
        verify(func(loop(i, loop(j, store(bad)))))


def test_float_index_and_non_bool_condition():
    with pytest.raises(
        IRError, match=r"index T.float32\(1.0\) of 'A' in the store to 'A' is float32"
    ):
        verify(func(loop(i, store(indices=(i, E.FloatImm(1.0))))))
    with pytest.raises(IRError, match=r"if condition i is int32, not bool"):
        verify(func(loop(i, loop(j, N.IfThenElse(i, store())))))


def test_nested_parallel_on_llvm():
    body = loop(i, loop(j, store(), "parallel"), "parallel")
    with pytest.raises(
        IRError,
        match=r"loop 'j' is parallel inside another parallel loop; parallelize only the outer "
        r"one \(fuse the loops first to parallelize both\)",
    ):
        verify(func(body), "llvm")
    verify(func(body))  # without a target this is only a performance question


def test_thread_binding_on_llvm():
    body = loop(i, loop(j, store()), "thread_binding", "threadIdx.x")
    with pytest.raises(
        IRError,
        match=r"loop 'i' is bound to threadIdx.x, which only a GPU target has; build for "
        r"target='cuda' or remove the bind",
    ):
        verify(func(body), "llvm")
    # build() verifies for its target before generating code
    with pytest.raises(IRError, match="loop 'i' is bound to threadIdx.x"):
        tvm.build(func(body), target="llvm")


def test_variable_bound_twice_and_buffer_passed_twice():
    with pytest.raises(IRError, match=r"loop variable 'i' is bound twice"):
        verify(func(loop(i, loop(i, store(indices=(i, i))))))
    with pytest.raises(IRError, match="invalid IR in function 'f': a buffer is passed twice"):
        verify(func(loop(i, loop(j, store())), params=(A, A)))


def test_let_dtype_mismatch_and_double_allocation():
    t = E.Var("t", "int64")
    with pytest.raises(IRError, match=r"let 't': int64 bound to a int32 value"):
        verify(func(loop(i, N.LetStmt(t, i, loop(j, store())))))
    tmp = N.Buffer("tmp", (4,), "float32")
    inner = N.Allocate(tmp, loop(j, N.BufferStore(tmp, E.FloatImm(0.0), (j,))))
    with pytest.raises(IRError, match="buffer 'tmp' is allocated twice"):
        verify(func(N.Allocate(tmp, inner)))
