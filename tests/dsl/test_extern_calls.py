"""tir.call_pure_extern / call_intrin for known math, topi.elemwise_sum."""

from __future__ import annotations

import numpy as np
import pytest

import ansor_lab as tvm
from ansor_lab import te, tir, topi
from ansor_lab.errors import DSLError


def test_extern_math_by_c_and_tvm_names_matches_numpy():
    A = te.placeholder((32,), name="A")
    B = te.compute(
        (32,),
        lambda i: (
            tir.call_pure_extern("float32", "expf", A[i])
            + tir.call_intrin("float32", "tir.sqrt", A[i])
            + tir.call_extern("float32", "powf", A[i], 2.0)
            + tir.call_llvm_pure_intrin("float32", "llvm.fabs.f32", 1, A[i] - 1.0)
        ),
        name="B",
    )
    f = tvm.build(te.create_schedule(B.op), [A, B])
    a = np.random.default_rng(0).random(32, dtype="float32")
    b = np.empty(32, "float32")
    f(a, b)
    np.testing.assert_allclose(b, np.exp(a) + np.sqrt(a) + a**2 + np.abs(a - 1), rtol=1e-5)


def test_unknown_extern_says_what_is_known():
    A = te.placeholder((4,), name="A")
    with pytest.raises(DSLError, match="only these math functions.*exp"):
        te.compute((4,), lambda i: tir.call_pure_extern("float32", "my_kernel", A[i]), name="B")


def test_elemwise_sum_of_three():
    xs = [te.placeholder((3, 5), name=f"X{k}") for k in range(3)]
    S = topi.elemwise_sum(xs)
    f = tvm.build(te.create_schedule(S.op), [*xs, S])
    arrays = [np.random.default_rng(k).random((3, 5), dtype="float32") for k in range(3)]
    out = np.empty((3, 5), "float32")
    f(*arrays, out)
    np.testing.assert_allclose(out, sum(arrays), rtol=1e-6)
    with pytest.raises(DSLError, match="all must match"):
        topi.elemwise_sum([xs[0], te.placeholder((5, 3), name="Y")])
