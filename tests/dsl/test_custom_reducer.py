"""te.comm_reducer with a combine function that is not a sum, max or min (TVM's reduction
tutorial: a product), lowered as a one-element tuple reducer."""

from __future__ import annotations

import numpy as np
import pytest

import ansor_lab as tvm
from ansor_lab import te
from ansor_lab.errors import DSLError


def _product_of_rows(n: int, m: int, dtype: str = "float32"):
    product = te.comm_reducer(lambda x, y: x * y, lambda t: tvm.tir.const(1, dtype=t), "product")
    A = te.placeholder((n, m), dtype, name="A")
    k = te.reduce_axis((0, m), name="k")
    return A, te.compute((n,), lambda i: product(A[i, k], axis=k), name="B")


@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_a_product_reducer_matches_numpy_under_hand_schedules(dtype):
    A, B = _product_of_rows(9, 13, dtype)
    rng = np.random.default_rng(0)
    a = (
        (rng.random((9, 13)) + 0.5).astype(dtype)
        if dtype == "float32"
        else rng.integers(-2, 3, size=(9, 13)).astype(dtype)
    )
    for split in (None, 4, 5):
        s = te.create_schedule(B.op)
        if split is not None:
            s[B].split(B.op.reduce_axis[0], factor=split)  # 13 is not a multiple: guarded
            s[B].parallel(B.op.axis[0])
        b = np.zeros(9, dtype)
        tvm.build(s, [A, B])(a, b)
        np.testing.assert_allclose(b, np.prod(a, axis=1), rtol=1e-5)


def test_a_product_prints_as_a_block_with_its_init_and_builds_from_the_text():
    A, B = _product_of_rows(4, 6)
    func = te.create_prim_func([A, B])
    text = func.script()
    assert "with T.init():" in text and "B[v_i] = T.float32(1.0)" in text
    assert "* A[v_i, v_k]" in text
    parsed = tvm.script.from_source(text)
    a = np.random.rand(4, 6).astype("float32") + 0.5
    b = np.zeros(4, "float32")
    tvm.build(parsed, target="llvm")(a, b)
    np.testing.assert_allclose(b, np.prod(a, axis=1), rtol=1e-5)


def test_a_product_over_symbolic_shapes_says_to_give_numbers():
    n, m = te.var("n"), te.var("m")
    product = te.comm_reducer(lambda x, y: x * y, lambda t: tvm.tir.const(1, dtype=t), "product")
    A = te.placeholder((n, m), name="A")
    k = te.reduce_axis((0, m), name="k")
    with pytest.raises(DSLError, match="needs static shapes.*n = 128"):
        te.compute((n,), lambda i: product(A[i, k], axis=k), name="B")
