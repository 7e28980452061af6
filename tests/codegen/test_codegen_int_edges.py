"""Integer edge semantics of compiled code (``dsl.expr``): wrapping INT_MIN // -1,
saturating float -> int casts, guarded zero divisors, int64 offsets of huge buffers,
and bound-checked builds that compute the same as unchecked ones."""

from __future__ import annotations

import numpy as np
import pytest

import ansor_lab as tvm
from ansor_lab import te
from ansor_lab.codegen.access import flat_index
from ansor_lab.dsl.reference import evaluate
from ansor_lab.ir import nodes as N

SCHEDULES = ("serial", "vectorize", "parallel")


def _build(out, args, how, **kw):
    s = te.create_schedule(out.op)
    if how == "vectorize":
        s[out].vectorize(out.op.axis[0])
    elif how == "parallel":
        s[out].parallel(out.op.axis[0])
    return tvm.build(s, args, num_threads=2, **kw)


@pytest.mark.parametrize("how", SCHEDULES)
@pytest.mark.parametrize("op", ["//", "%", "truncdiv", "truncmod"])
def test_int_min_by_minus_one_wraps_like_the_reference(how, op):
    fns = {"//": lambda x, y: x // y, "%": lambda x, y: x % y}
    fn = fns.get(op) or getattr(te, op)
    a, c = te.placeholder((8,), "int32", name="A"), te.placeholder((8,), "int32", name="C")
    b = te.compute((8,), lambda i: fn(a[i], c[i]), name="B")
    x = np.array([-(2**31), 2**31 - 1, -7, 7, -(2**31), 5, 0, -1], "int32")
    y = np.array([-1, -1, -1, 2, 3, -3, -1, -1], "int32")
    got = np.zeros(8, "int32")
    _build(b, [a, c, b], how)(x, y, got)
    np.testing.assert_array_equal(got, evaluate([b], {a: x, c: y})[b])
    if op in ("//", "truncdiv"):
        assert got[0] == -(2**31)  # wraps, as numpy does, instead of SIGFPE


@pytest.mark.parametrize("how", SCHEDULES)
def test_guarded_zero_divisor_is_not_evaluated(how):
    a, c = te.placeholder((8,), "int32", name="A"), te.placeholder((8,), "int32", name="C")
    b = te.compute((8,), lambda i: te.if_then_else(c[i] != 0, a[i] // c[i], -5), name="B")
    x, y = np.arange(8, dtype="int32") * 3, np.array([1, 0, 2, 0, 3, 0, -1, 0], "int32")
    got = np.zeros(8, "int32")
    _build(b, [a, c, b], how)(x, y, got)
    np.testing.assert_array_equal(got, [0, -5, 3, -5, 4, -5, -18, -5])


@pytest.mark.parametrize("how", SCHEDULES)
def test_float_to_int_casts_saturate(how):
    f = te.placeholder((8,), "float32", name="F")
    b = te.compute((8,), lambda i: f[i].astype("int32"), name="B")
    x = np.array([np.inf, -np.inf, np.nan, 3e9, -3e9, -2.7, 2.7, 2.0**31], "float32")
    got = np.zeros(8, "int32")
    _build(b, [f, b], how)(x, got)
    top, bottom = 2**31 - 1, -(2**31)
    np.testing.assert_array_equal(got, [top, bottom, 0, top, bottom, -2, 2, top])
    np.testing.assert_array_equal(got, evaluate([b], {f: x})[b])


def test_offsets_of_a_buffer_beyond_int32_are_int64():
    i, j = te.var("i"), te.var("j")
    huge = N.Buffer("H", (65536, 65536), "int8")
    assert flat_index(huge, (i, j)).dtype == "int64"
    small = N.Buffer("S", (64, 64), "int8")
    assert flat_index(small, (i, j)).dtype == "int32"


@pytest.mark.parametrize("how", SCHEDULES)
def test_bound_checked_build_computes_the_same(how):
    x, idx = te.placeholder((16,), name="X"), te.placeholder((16,), "int32", name="I")
    b = te.compute((16,), lambda i: x[idx[i]] * 2, name="B")
    f = _build(b, [x, idx, b], how, instrument_bound_checkers=True)
    xs, where = np.arange(16, dtype="float32"), np.arange(16, dtype="int32")[::-1].copy()
    got = np.zeros(16, "float32")
    f(xs, where, got)
    np.testing.assert_array_equal(got, xs[where] * 2)
    assert "check.ok" in f.get_source("ll-unopt")
    assert "write of B[i] outside its shape (16,)" in f.compiled.bound_checks  # all checked
    # a default build checks the one index nothing proves: the value read from I
    plain = _build(b, [x, idx, b], how)
    assert [c.split("[")[0] for c in plain.compiled.bound_checks] == ["read of X"]
    plain(xs, where, got)
    np.testing.assert_array_equal(got, xs[where] * 2)
