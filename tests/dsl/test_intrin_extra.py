"""TVM's math functions and integer bit operations beyond the basics (``te.sin``,
``te.atan2``, ``te.isnan``, ``x & 15``, ``x << k``, ``tir.popcount``...): built for the CPU,
scalar and vectorized, equal to numpy and to the reference evaluator, whatever the inputs
(NaN, infinities, signed zeros, shifts out of range)."""

from __future__ import annotations

import os
import tempfile

import numpy as np
import pytest

import ansor_lab as tvm
from ansor_lab import te, tir, topi
from ansor_lab.errors import DTypeError

N = 64
RNG = np.random.default_rng(11)
TOL = {"float16": 2e-3, "float32": 2e-6, "float64": 1e-12}


def _floats(low: float, high: float, specials: bool = True) -> np.ndarray:
    x = RNG.uniform(low, high, N)
    if specials:
        x[:6] = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-30]
    return x


#: name -> (te function, inputs, numpy reference)
UNARY = {
    "exp2": (te.exp2, _floats(-5, 5), np.exp2),
    "exp10": (te.exp10, _floats(-3, 3), lambda x: np.power(x.dtype.type(10), x)),
    "log2": (te.log2, _floats(0.1, 9), np.log2),
    "log10": (te.log10, _floats(0.1, 9), np.log10),
    "log1p": (te.log1p, _floats(-0.9, 9), np.log1p),
    "sin": (te.sin, _floats(-7, 7), np.sin),
    "cos": (te.cos, _floats(-7, 7), np.cos),
    "tan": (te.tan, _floats(-1.5, 1.5), np.tan),
    "sinh": (te.sinh, _floats(-4, 4), np.sinh),
    "cosh": (te.cosh, _floats(-4, 4), np.cosh),
    "asin": (te.asin, _floats(-1, 1), np.arcsin),
    "acos": (te.acos, _floats(-1, 1), np.arccos),
    "atan": (te.atan, _floats(-9, 9), np.arctan),
    "asinh": (te.asinh, _floats(-9, 9), np.arcsinh),
    "acosh": (te.acosh, _floats(1, 9), np.arccosh),
    "atanh": (te.atanh, _floats(-0.99, 0.99), np.arctanh),
    "trunc": (te.trunc, _floats(-9, 9), np.trunc),
    "nearbyint": (te.nearbyint, np.round(_floats(-9, 9) * 2) / 2, np.rint),  # halves: even
}
BINARY = {
    "atan2": (te.atan2, np.arctan2),
    "fmod": (te.fmod, np.fmod),
    "hypot": (te.hypot, np.hypot),
    "copysign": (te.copysign, np.copysign),
    "nextafter": (te.nextafter, np.nextafter),
}


def _build_all(outs: list, ins: list, vectorize: bool):
    s = te.create_schedule([o.op for o in outs])
    if vectorize:
        for o in outs:
            _, inner = s[o].split(o.op.axis[0], factor=16)
            s[o].vectorize(inner)
    return tvm.build(s, [*ins, *outs])


def _run(outs: list, ins: list, arrays: list, vectorize: bool) -> list:
    f = _build_all(outs, ins, vectorize)
    results = [tvm.nd.empty(o.shape, o.dtype) for o in outs]
    f(*[tvm.nd.array(a) for a in arrays], *results)
    reference = te.evaluate(outs, dict(zip(ins, arrays)))
    return [(r.numpy(), reference[o]) for r, o in zip(results, outs)]


@pytest.mark.parametrize("vectorize", [False, True], ids=["scalar", "vector"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_unary_float_functions_equal_numpy(dtype, vectorize):
    ins, outs, wants = [], [], []
    for name, (fn, values, ref) in UNARY.items():
        x = te.placeholder((N,), dtype, name=f"x_{name}")
        ins.append(x)
        outs.append(te.compute((N,), lambda i, x=x, fn=fn: fn(x[i]), name=name))
        with np.errstate(all="ignore"):
            wants.append((values.astype(dtype), ref(values.astype(dtype)).astype(dtype)))
    got = _run(outs, ins, [w[0] for w in wants], vectorize)
    tol = TOL[dtype]
    for name, (ours, reference), (_, want) in zip(UNARY, got, wants):
        np.testing.assert_allclose(ours, want, rtol=tol, atol=tol, equal_nan=True, err_msg=name)
        np.testing.assert_allclose(reference, want, rtol=tol, atol=tol, equal_nan=True)
    # the specials went through: NaN stays NaN, sin(inf) is NaN, trunc(-0.0) keeps its sign
    assert np.isnan(got[list(UNARY).index("sin")][0][:2]).all()
    assert np.signbit(got[list(UNARY).index("trunc")][0][4])


@pytest.mark.parametrize("vectorize", [False, True], ids=["scalar", "vector"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_binary_float_functions_equal_numpy(dtype, vectorize):
    a = _floats(-3, 3).astype(dtype)
    b = RNG.uniform(-2, 2, N).astype(dtype)
    b[6:10] = [0.0, -0.0, np.nan, np.inf]
    x, y = te.placeholder((N,), dtype, name="x"), te.placeholder((N,), dtype, name="y")
    names = [n for n in BINARY if not (n == "nextafter" and dtype == "float16")]
    outs = [te.compute((N,), lambda i, fn=BINARY[n][0]: fn(x[i], y[i]), name=n) for n in names]
    got = _run(outs, [x, y], [a, b], vectorize)
    for name, (ours, reference) in zip(names, got):
        with np.errstate(all="ignore"):
            want = BINARY[name][1](a, b).astype(dtype)
        tol = TOL[dtype]
        np.testing.assert_allclose(ours, want, rtol=tol, atol=tol, equal_nan=True, err_msg=name)
        np.testing.assert_allclose(reference, want, rtol=tol, atol=tol, equal_nan=True)
    fmod = got[names.index("fmod")][0]
    assert np.isnan(fmod[6]) and np.signbit(fmod[4])  # x % 0 is NaN; -0.0 keeps its sign
    if "nextafter" in names:
        step = got[names.index("nextafter")][0]
        assert step[3] == np.nextafter(np.zeros((), dtype), np.asarray(b[3], dtype)) != 0


@pytest.mark.parametrize("vectorize", [False, True], ids=["scalar", "vector"])
@pytest.mark.parametrize("dtype", ["float32", "float16", "int32"])
def test_classification_is_bool_and_constant_for_integers(dtype, vectorize):
    values = _floats(-3, 3) if dtype != "int32" else np.arange(N)
    x = te.placeholder((N,), dtype, name="x")
    fns = {"isnan": te.isnan, "isinf": te.isinf, "isfinite": te.isfinite}
    outs = [te.compute((N,), lambda i, fn=fn: fn(x[i]), name=n) for n, fn in fns.items()]
    assert all(o.dtype == "bool" for o in outs)
    got = _run(outs, [x], [values.astype(dtype)], vectorize)
    for (name, _), (ours, reference) in zip(fns.items(), got):
        want = getattr(np, name)(values.astype(dtype))
        assert (ours == want).all() and (reference == want).all(), name
    if dtype == "int32":  # TVM's rule: no call, a constant
        assert str(te.isnan(x[0])) == "False" and str(te.isfinite(x[0])) == "True"
    else:
        assert got[0][0][:3].tolist() == [True, False, False]  # nan, inf, -inf
        assert got[1][0][:3].tolist() == [False, True, True]


def _bits_of(v: int, bits: int) -> int:
    return v & ((1 << bits) - 1)


def _signed(v: int, bits: int) -> int:
    v = _bits_of(v, bits)
    return v - (1 << bits) if v >> (bits - 1) else v


def _python_reference(op: str, a: int, b: int, bits: int) -> int:
    """Each operation on Python integers, from its definition (independent of numpy)."""
    if op == "and":
        return _signed(a & b, bits)
    if op == "or":
        return _signed(a | b, bits)
    if op == "xor":
        return _signed(a ^ b, bits)
    if op == "not":
        return _signed(~a, bits)
    if op == "shl":
        return _signed(a << b, bits) if 0 <= b < bits else 0
    if op == "shr":
        return a >> b if 0 <= b < bits else (-1 if a < 0 else 0)
    if op == "popcount":
        return bin(_bits_of(a, bits)).count("1")
    if op == "clz":
        return bits - _bits_of(a, bits).bit_length()
    raise AssertionError(op)


INT_OPS = {
    "and": lambda x, y: x & y,
    "or": lambda x, y: x | y,
    "xor": lambda x, y: x ^ y,
    "not": lambda x, y: ~x,
    "shl": lambda x, y: x << y,
    "shr": lambda x, y: x >> y,
    "popcount": lambda x, y: tir.popcount(x),
    "clz": lambda x, y: tir.clz(x),
}


@pytest.mark.parametrize("vectorize", [False, True], ids=["scalar", "vector"])
@pytest.mark.parametrize("dtype", ["int8", "int32", "int64"])
def test_integer_bit_operations_equal_their_definition(dtype, vectorize):
    bits = np.dtype(dtype).itemsize * 8
    info = np.iinfo(dtype)
    a = RNG.integers(info.min, info.max, N, dtype=dtype, endpoint=True)
    a[:4] = [0, -1, info.min, info.max]
    b = RNG.integers(-3, bits + 3, N).astype(dtype)  # shifts out of range on both sides
    b[:4] = [0, bits - 1, bits, -1]
    x, y = te.placeholder((N,), dtype, name="x"), te.placeholder((N,), dtype, name="y")
    outs = [te.compute((N,), lambda i, fn=fn: fn(x[i], y[i]), name=n) for n, fn in INT_OPS.items()]
    assert outs[-1].dtype == "int32" and outs[-2].dtype == dtype  # clz: int32, as TVM
    got = _run(outs, [x, y], [a, b], vectorize)
    for name, (ours, reference) in zip(INT_OPS, got):
        want = [_python_reference(name, int(p), int(q), bits) for p, q in zip(a, b)]
        assert ours.tolist() == want, name
        assert reference.tolist() == want, name


def test_constant_shifts_and_low_masks_are_index_arithmetic():
    i = te.var("i")
    assert str(i >> 3) == "i // 8" and str(i & 15) == "i % 16" and str(15 & i) == "i % 16"
    assert "shift_right" in str(i >> 31) and "bitwise_and" in str(i & 12)
    # so an index written with them gets exact bounds: each element of A read twice
    A = te.placeholder((N,), "float32", name="A")
    B = te.compute((2 * N,), lambda k: A[k >> 1] + (k & 1).astype("float32"), name="B")
    s = te.create_schedule(B.op)
    outer, inner = s[B].split(B.op.axis[0], factor=8)
    s[B].vectorize(inner)
    f = tvm.build(s, [A, B])
    a = RNG.standard_normal(N).astype("float32")
    out = tvm.nd.empty((2 * N,), "float32")
    f(tvm.nd.array(a), out)
    np.testing.assert_array_equal(out.numpy(), np.repeat(a, 2) + np.tile(np.float32([0, 1]), N))


def test_and_or_not_stay_logical_on_conditions():
    i = te.var("i")
    assert str((i > 1) & (i < 5)) == "i > 1 and i < 5"
    assert str(~(i > 1)) == "not i > 1"
    with pytest.raises(DTypeError, match="bool"):
        te.popcount(i > 1)


def test_wrong_dtypes_are_our_errors_with_advice():
    x = te.placeholder((4,), "int32", name="x")
    f = te.placeholder((4,), "float32", name="f")
    h = te.placeholder((4,), "float16", name="h")
    with pytest.raises(DTypeError, match=r"te\.sin expects a float expression.*astype"):
        te.sin(x[0])
    with pytest.raises(DTypeError, match="integer"):
        tir.popcount(f[0])
    with pytest.raises(DTypeError, match="integer"):
        f[0] << 1
    with pytest.raises(DTypeError, match="float32"):
        te.nextafter(h[0], h[1])
    with pytest.raises(DTypeError, match="float operands"):
        te.atan2(x[0], x[1])


def test_tvmscript_prints_and_parses_them_back():

    text = """
@T.prim_func
def f(A: T.Buffer((16,), "int32"), B: T.Buffer((16,), "int32"), C: T.Buffer((16,), "float32")):
    for i in range(16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            B[vi] = (A[vi] >> 2) & 3 | (A[vi] << 1) ^ ~A[vi] + T.popcount(A[vi])
            a = T.Cast("float32", A[vi])
            C[vi] = T.cos(a) + T.atan2(T.float32(1), a)
"""
    f = tvm.script.from_source(text)
    printed = f.script()
    assert "T.bitwise_or(" in printed and "T.shift_left(A[vi], 1)" in printed
    assert "A[vi] // 4 % 4" in printed and "T.cos(" in printed and "T.atan2(" in printed
    assert tvm.ir.structural_equal(tvm.script.from_source(printed), f)
    m = tvm.build(f, target="llvm")
    a = np.arange(-8, 8, dtype="int32")
    b, c = tvm.nd.empty((16,), "int32"), tvm.nd.empty((16,), "float32")
    m(tvm.nd.array(a), b, c)
    popcount = np.array([bin(int(v) & 0xFFFFFFFF).count("1") for v in a])
    np.testing.assert_array_equal(b.numpy(), ((a >> 2) & 3) | ((a << 1) ^ (~a + popcount)))
    np.testing.assert_allclose(c.numpy(), np.cos(a) + np.arctan2(1, a), rtol=1e-6)


def test_c_names_and_topi_operators():
    x = te.placeholder((N,), "float32", name="x")
    k = te.placeholder((N,), "int32", name="k")
    y = te.compute(
        (N,),
        lambda i: (
            tir.call_pure_extern("float32", "cosf", x[i])
            + tir.call_pure_extern("float32", "atan2f", x[i], 2.0)
        ),
        name="y",
    )
    z = topi.right_shift(topi.bitwise_and(k, 12), 1)
    nan = topi.isnan(topi.log(x))
    s = te.create_schedule([y.op, z.op, nan.op])
    f = tvm.build(s, [x, k, y, z, nan])
    a = RNG.uniform(-2, 2, N).astype("float32")
    ints = np.arange(N, dtype="int32")
    outs = [tvm.nd.empty((N,), "float32"), tvm.nd.empty((N,), "int32"), tvm.nd.empty((N,), "bool")]
    with np.errstate(invalid="ignore"):
        want_nan = np.isnan(np.log(a))
    f(tvm.nd.array(a), tvm.nd.array(ints), *outs)
    np.testing.assert_allclose(outs[0].numpy(), np.cos(a) + np.arctan2(a, 2), rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(outs[1].numpy(), (ints & 12) >> 1)
    np.testing.assert_array_equal(outs[2].numpy(), want_nan)
    assert want_nan.any() and not want_nan.all()


def test_an_exported_library_links_the_math_functions():
    x = te.placeholder((N,), "float32", name="x")
    y = te.compute((N,), lambda i: te.asinh(x[i]) + te.sin(x[i]) + te.fmod(x[i], 0.7), name="y")
    s = te.create_schedule(y.op)
    _, inner = s[y].split(y.op.axis[0], factor=8)
    s[y].vectorize(inner)
    f = tvm.build(s, [x, y], name="mathy")
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "mathy.so")
        f.export_library(path)
        g = tvm.runtime.load_module(path)
        a = RNG.uniform(-3, 3, N).astype("float32")
        out = tvm.nd.empty((N,), "float32")
        g["mathy"](tvm.nd.array(a), out)
    want = np.arcsinh(a) + np.sin(a) + np.fmod(a, np.float32(0.7))
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-5, atol=1e-6)
