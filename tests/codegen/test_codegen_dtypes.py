"""Every dtype through the LLVM backend, compared with numpy written independently.

Integers must match exactly (wrapping included). Float results are compared with a
tolerance of a few ulps: the backend lets LLVM fuse a multiply into the add that consumes
it (as TVM does) and calls libm for transcendental functions.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from ansor_lab import te

INTS = ("int8", "int32", "int64")
FLOATS = ("float16", "float32", "float64")


def ulps(dtype: str, n: float = 4) -> float:
    return n * float(np.finfo(dtype).eps)


def rand(shape, dtype, seed=0, low=-2.0, high=2.0):
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.integers(0, 2, size=shape).astype(bool)
    if np.issubdtype(np.dtype(dtype), np.integer):
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, size=shape, endpoint=True, dtype=dtype)
    return rng.uniform(low, high, size=shape).astype(dtype)


# --------------------------------------------------------------------------------------
# Elementwise arithmetic in every dtype


@pytest.mark.parametrize("dtype", INTS + FLOATS)
def test_elementwise_arithmetic(run_llvm, dtype):
    A = te.placeholder((5, 7), dtype, name="A")
    B = te.placeholder((5, 7), dtype, name="B")
    C = te.compute((5, 7), lambda i, j: A[i, j] * B[i, j] + A[i, j] - B[i, j], name="C")
    D = te.compute(
        (5, 7), lambda i, j: te.max(A[i, j], B[i, j]) - te.min(A[i, j], B[i, j]), name="D"
    )
    a, b = rand((5, 7), dtype, 1), rand((5, 7), dtype, 2)
    (c, d), _ = run_llvm([C, D], [A, B], [a, b])
    with np.errstate(over="ignore"):
        want_c = a * b + a - b  # integer arrays wrap in numpy too
        want_d = np.maximum(a, b) - np.minimum(a, b)
    assert c.dtype == d.dtype == np.dtype(dtype)
    if dtype in INTS:
        np.testing.assert_array_equal(c, want_c)
        np.testing.assert_array_equal(d, want_d)
    else:
        # |a*b + a - b| <= 8: a fused multiply-add differs by at most an ulp of 8
        np.testing.assert_allclose(c, want_c, rtol=0, atol=8 * ulps(dtype))
        np.testing.assert_array_equal(d, want_d)


@pytest.mark.parametrize("dtype", INTS)
def test_integer_arithmetic_wraps(run_llvm, dtype):
    info = np.iinfo(dtype)
    a = np.array([info.max, info.min, info.max, info.min, 100, -3], dtype)
    b = np.array([1, -1, info.max, 2, 100, info.min], dtype)
    A = te.placeholder((6,), dtype, name="A")
    B = te.placeholder((6,), dtype, name="B")
    outs = [
        te.compute((6,), lambda i: A[i] + B[i], name="add"),
        te.compute((6,), lambda i: A[i] - B[i], name="sub"),
        te.compute((6,), lambda i: A[i] * B[i], name="mul"),
        te.compute((6,), lambda i: -A[i], name="neg"),
        te.compute((6,), lambda i: te.abs(A[i]), name="abs"),
        te.compute((6,), lambda i: A[i] + 1 > A[i], name="gt"),
    ]
    got, ref = run_llvm(outs, [A, B], [a, b])
    with np.errstate(over="ignore"):
        want = [a + b, a - b, a * b, -a, np.abs(a), (a + np.ones((), dtype)) > a]
    for out, g, r, w in zip(outs, got, ref, want):
        np.testing.assert_array_equal(g, w, err_msg=out.name)
        np.testing.assert_array_equal(r, w, err_msg=f"reference {out.name}")
    assert got[-1].tolist() == [False, True, False, True, True, True]


def test_int8_wrapping_is_not_simplified_away(run_llvm):
    # (a * 4 + 2) // 4 is a for exact integers, not for int8 where a * 4 wraps
    A = te.placeholder((4,), "int8", name="A")
    D = te.compute((4,), lambda i: (A[i] * 4 + 2) // 4, name="D")
    a = np.array([1, 100, -100, 127], "int8")
    (d,), (r,) = run_llvm(D, [A], [a])
    with np.errstate(over="ignore"):
        want = (a * np.int8(4) + np.int8(2)) // np.int8(4)
    np.testing.assert_array_equal(d, want)
    np.testing.assert_array_equal(r, want)
    assert d.tolist() == [1, -28, 28, -1]


# --------------------------------------------------------------------------------------
# Reductions


@pytest.mark.parametrize("dtype", INTS + FLOATS)
@pytest.mark.parametrize("combiner", ["sum", "max", "min"])
def test_reductions_with_where(run_llvm, dtype, combiner):
    n, m = 6, 8
    A = te.placeholder((n, m), dtype, name="A")
    k = te.reduce_axis((0, m), name="k")
    reducer = {"sum": te.sum, "max": te.max, "min": te.min}[combiner]
    # row i reduces over k <= i + 1; the last rows reduce over everything
    R = te.compute((n,), lambda i: reducer(A[i, k], axis=k, where=k <= i + 1), name="R")
    a = rand((n, m), dtype, 3, low=0.0, high=1.0)
    (got,), (ref,) = run_llvm(R, [A], [a])
    mask = np.arange(m)[None, :] <= np.arange(n)[:, None] + 1
    if combiner == "sum":
        with np.errstate(over="ignore"):
            want = np.where(mask, a, 0).astype(dtype).sum(axis=1, dtype=dtype)
    elif combiner == "max":
        want = np.where(mask, a, a.min()).max(axis=1)
    else:
        want = np.where(mask, a, a.max()).min(axis=1)
    assert got.dtype == np.dtype(dtype)
    if dtype in INTS or combiner != "sum":
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(ref, want)
    else:
        # sequential summation of <= m terms in [0, 1): error <= m * eps * sum
        atol = m * float(np.finfo(dtype).eps) * m
        np.testing.assert_allclose(got.astype("float64"), want.astype("float64"), rtol=0, atol=atol)


def test_reduction_over_two_axes_and_empty_where(run_llvm):
    A = te.placeholder((3, 4, 5), "float64", name="A")
    k = te.reduce_axis((0, 4), name="k")
    r = te.reduce_axis((0, 5), name="r")
    S = te.compute((3,), lambda i: te.sum(A[i, k, r] * 2.0, axis=[k, r]), name="S")
    k2 = te.reduce_axis((0, 4), name="k2")
    E = te.compute((3,), lambda i: te.max(A[i, k2, 0], axis=k2, where=k2 > 9), name="E")
    Ints = te.placeholder((4,), "int32", name="I")
    k3 = te.reduce_axis((0, 4), name="k3")
    M = te.compute((1,), lambda i: te.min(Ints[k3], axis=k3, where=k3 < 0), name="M")
    a = rand((3, 4, 5), "float64", 4)
    (s, e, m), _ = run_llvm([S, E, M], [A, Ints], [a, np.arange(4, dtype="int32")])
    np.testing.assert_allclose(s, (a * 2.0).sum(axis=(1, 2)), rtol=1e-14)
    assert e.tolist() == [-math.inf] * 3  # the identity of max
    assert m.tolist() == [np.iinfo("int32").max]


# --------------------------------------------------------------------------------------
# bool


def test_bool_tensors_in_and_out(run_llvm):
    P = te.placeholder((6,), "bool", name="P")
    Q = te.placeholder((6,), "bool", name="Q")
    X = te.placeholder((6,), "float32", name="X")
    L = te.compute((6,), lambda i: (P[i] & ~Q[i]) | (X[i] > 0.5), name="L")
    E = te.compute((6,), lambda i: P[i] == Q[i], name="E")
    S = te.compute((6,), lambda i: te.select(P[i], Q[i], X[i] != X[i]), name="S")
    k = te.reduce_axis((0, 6), name="k")
    N = te.compute(
        (1,), lambda i: te.sum(P[k].astype("int32") + Q[k].astype("int32"), axis=k), name="N"
    )
    p = np.array([1, 1, 0, 0, 1, 0], bool)
    q = np.array([1, 0, 1, 0, 0, 0], bool)
    x = np.array([0.0, 1.0, np.nan, 0.7, 0.2, np.nan], "float32")
    (logic, e, s, n), _ = run_llvm([L, E, S, N], [P, Q, X], [p, q, x])
    assert logic.dtype == e.dtype == s.dtype == np.bool_
    np.testing.assert_array_equal(logic, (p & ~q) | (x > 0.5))
    np.testing.assert_array_equal(e, p == q)
    np.testing.assert_array_equal(s, np.where(p, q, x != x))
    assert n.tolist() == [int(p.sum() + q.sum())]
    # every stored bool is a clean 0/1 byte, as numpy expects
    assert set(logic.view(np.uint8).tolist()) <= {0, 1}


# --------------------------------------------------------------------------------------
# float16


def test_float16_storage_and_arithmetic(run_llvm):
    H = te.placeholder((8,), "float16", name="H")
    G = te.placeholder((8,), "float16", name="G")
    C = te.compute((8,), lambda i: H[i] * G[i] + H[i] / G[i] - te.const(0.1, "float16"), name="C")
    T = te.compute(
        (8,), lambda i: te.tanh(H[i]) + te.exp(G[i] * te.const(0.5, "float16")), name="T"
    )
    W = te.compute((8,), lambda i: H[i].astype("float32") * 3.0, name="W")
    h = np.array([0.1, 1000, -3.5, 60000, 1e-4, 2, -0.0, 7], "float16")
    g = np.array([0.2, 2, 1.25, 2, 3e-4, 3, 1, -7], "float16")
    (c, t, w), _ = run_llvm([C, T, W], [H, G], [h, g])
    assert c.dtype == t.dtype == np.float16 and w.dtype == np.float32
    with np.errstate(over="ignore"):
        want_c = h * g + h / g - np.float16(0.1)
    # 60000 * 2 overflows float16 to inf, in both
    assert np.isinf(c[3]) and np.isinf(want_c[3])
    np.testing.assert_allclose(c, want_c, rtol=ulps("float16", 2))
    want_t = np.tanh(h.astype("float64")) + np.exp(g.astype("float64") * 0.5)
    np.testing.assert_allclose(t, want_t, rtol=ulps("float16", 4))
    np.testing.assert_array_equal(w, h.astype("float32") * np.float32(3.0))


def test_float16_constants_are_rounded_once(run_llvm):
    # 1 + 2**-11 + 2**-40 rounds up to 1 + 2**-10 in float16; rounding it to float32
    # first would land exactly halfway and round to 1.0 instead
    value = 1 + 2**-11 + 2**-40
    H = te.placeholder((1,), "float16", name="H")
    Y = te.compute((1,), lambda i: H[i] + te.const(value, "float16"), name="Y")
    Z = te.compute((1,), lambda i: H[i] + te.const(1e6, "float16"), name="Z")  # -> inf
    (y, z), _ = run_llvm([Y, Z], [H], [np.zeros(1, "float16")])
    assert y[0] == np.float16(value) == np.float16(1 + 2**-10)
    assert np.isinf(z[0])


# --------------------------------------------------------------------------------------
# Casts


def test_float_to_int_casts_truncate(run_llvm):
    X = te.placeholder((8,), "float32", name="X")
    x = np.array([1.9, -1.9, 2.5, -2.5, 0.1, -0.1, 100.7, -100.99], "float32")
    outs = [te.compute((8,), lambda i, d=d: X[i].astype(d), name=f"to_{d}") for d in INTS]
    got, _ = run_llvm(outs, [X], [x])
    for d, g in zip(INTS, got):
        assert g.dtype == np.dtype(d)
        assert g.tolist() == [1, -1, 2, -2, 0, 0, 100, -100]


def test_other_casts(run_llvm):
    X = te.placeholder((6,), "float64", name="X")
    Ints = te.placeholder((6,), "int64", name="I")
    P = te.placeholder((6,), "bool", name="P")
    x = np.array([0.0, -0.0, np.nan, 1e-300, 65519.0, 1e6])
    i = np.array([2**53 + 1, -(2**40), 0, 7, -1, 3], "int64")
    p = np.array([1, 0, 1, 1, 0, 0], bool)
    outs = [
        te.compute((6,), lambda t: X[t].astype("bool"), name="f2b"),
        te.compute((6,), lambda t: X[t].astype("float16"), name="f2h"),
        te.compute((6,), lambda t: Ints[t].astype("float64"), name="i2f"),
        te.compute((6,), lambda t: Ints[t].astype("int8"), name="i2i8"),
        te.compute((6,), lambda t: P[t].astype("float32") * 2.0, name="b2f"),
        te.compute((6,), lambda t: (Ints[t] != 0).astype("int32"), name="b2i"),
    ]
    (f2b, f2h, i2f, i2i8, b2f, b2i), _ = run_llvm(outs, [X, Ints, P], [x, i, p])
    np.testing.assert_array_equal(f2b, x.astype(bool))  # NaN is true, -0.0 is false
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(f2h, x.astype("float16"))
    np.testing.assert_array_equal(i2f, i.astype("float64"))
    np.testing.assert_array_equal(i2i8, i.astype("int8"))  # keeps the low byte
    np.testing.assert_array_equal(b2f, p.astype("float32") * 2)
    np.testing.assert_array_equal(b2i, (i != 0).astype("int32"))


# --------------------------------------------------------------------------------------
# Integer division with negative operands


DIVIDENDS = [7, -7, 7, -7, 0, 6, -6, 5, -5, 1, -1, 100]
DIVISORS = [2, 2, -2, -2, 3, 3, -3, -5, 5, -1, 1, 7]
NUMPY_DIV = {
    "floordiv": lambda a, b: a // b,
    "floormod": lambda a, b: a % b,
    "truncdiv": lambda a, b: (np.trunc(a / b)).astype(a.dtype),
    "truncmod": np.fmod,
}
TE_DIV = {
    "floordiv": lambda a, b: a // b,
    "floormod": lambda a, b: a % b,
    "truncdiv": te.truncdiv,
    "truncmod": te.truncmod,
}


@pytest.mark.parametrize("dtype", INTS)
@pytest.mark.parametrize("op", list(NUMPY_DIV))
def test_integer_division_with_negative_operands(run_llvm, dtype, op):
    a = np.array(DIVIDENDS, dtype)
    b = np.array(DIVISORS, dtype)
    A = te.placeholder((12,), dtype, name="A")
    B = te.placeholder((12,), dtype, name="B")
    fn = TE_DIV[op]
    by_var = te.compute((12,), lambda i: fn(A[i], B[i]), name="by_var")
    by_consts = [
        te.compute(
            (12,), lambda i, c=c: fn(A[i], te.const(c, dtype)), name=f"by_{c}".replace("-", "m")
        )
        for c in (3, -3, 16)
    ]
    got, ref = run_llvm([by_var] + by_consts, [A, B], [a, b])
    want = [NUMPY_DIV[op](a, b)] + [NUMPY_DIV[op](a, np.full_like(a, c)) for c in (3, -3, 16)]
    for g, r, w in zip(got, ref, want):
        np.testing.assert_array_equal(g, w)
        np.testing.assert_array_equal(r, w)


def test_slash_on_ints_truncates(run_llvm):
    A = te.placeholder((4,), "int32", name="A")
    Q = te.compute((4,), lambda i: A[i] / 2, name="Q")
    (q,), _ = run_llvm(Q, [A], [np.array([7, -7, 3, -3], "int32")])
    assert q.tolist() == [3, -3, 1, -1]


# --------------------------------------------------------------------------------------
# Float semantics: NaN, rounding, math functions


def test_nan_propagation_of_max_and_min_like_numpy(run_llvm):
    nan = np.nan
    a = np.array([nan, 1, nan, -0.0, 2, -3], "float32")
    b = np.array([1, nan, nan, 0.0, 5, -4], "float32")
    A = te.placeholder((6,), "float32", name="A")
    B = te.placeholder((6,), "float32", name="B")
    mx = te.compute((6,), lambda i: te.max(A[i], B[i]), name="mx")
    mn = te.compute((6,), lambda i: te.min(A[i], B[i]), name="mn")
    R = te.placeholder((3, 4), "float32", name="R")
    r = np.array([[1, nan, 3, 4], [1, 2, 3, 4], [nan, nan, nan, nan]], "float32")
    k = te.reduce_axis((0, 4), name="k")
    rmax = te.compute((3,), lambda i: te.max(R[i, k], axis=k), name="rmax")
    k2 = te.reduce_axis((0, 4), name="k2")
    rmin = te.compute((3,), lambda i: te.min(R[i, k2], axis=k2), name="rmin")
    (gmx, gmn, grmax, grmin), _ = run_llvm([mx, mn, rmax, rmin], [A, B, R], [a, b, r])
    np.testing.assert_array_equal(gmx, np.maximum(a, b))
    np.testing.assert_array_equal(gmn, np.minimum(a, b))
    np.testing.assert_array_equal(grmax, r.max(axis=1))
    np.testing.assert_array_equal(grmin, r.min(axis=1))
    assert np.isnan(gmx[:3]).all() and np.isnan(grmax[[0, 2]]).all() and grmax[1] == 4


def test_nan_comparisons_like_numpy(run_llvm):
    A = te.placeholder((3,), "float64", name="A")
    B = te.placeholder((3,), "float64", name="B")
    a = np.array([np.nan, 1.0, np.nan])
    b = np.array([1.0, np.nan, np.nan])
    outs = [
        te.compute((3,), lambda i, f=f: f(A[i], B[i]), name=name)
        for name, f in [
            ("lt", lambda x, y: x < y),
            ("ge", lambda x, y: x >= y),
            ("eq", lambda x, y: x == y),
            ("ne", lambda x, y: x != y),
        ]
    ]
    (lt, ge, eq, ne), _ = run_llvm(outs, [A, B], [a, b])
    assert not lt.any() and not ge.any() and not eq.any()
    assert ne.all()


@pytest.mark.parametrize("dtype", FLOATS)
def test_round_half_to_even_floor_ceil(run_llvm, dtype):
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.5, 2.25, -7.75, 0.0], dtype)
    X = te.placeholder((10,), dtype, name="X")
    outs = [
        te.compute((10,), lambda i, f=f: f(X[i]), name=f.__name__)
        for f in (te.round, te.floor, te.ceil)
    ]
    (r, f, c), _ = run_llvm(outs, [X], [x])
    np.testing.assert_array_equal(r, np.round(x))
    assert r[:7].tolist() == [0, 2, 2, -0.0, -2, -2, 4]
    np.testing.assert_array_equal(f, np.floor(x))
    np.testing.assert_array_equal(c, np.ceil(x))


MATH = {
    "exp": (te.exp, np.exp),
    "log": (lambda x: te.log(te.abs(x) + 0.5), lambda x: np.log(np.abs(x) + 0.5)),
    "sqrt": (lambda x: te.sqrt(te.abs(x)), lambda x: np.sqrt(np.abs(x))),
    "rsqrt": (lambda x: te.rsqrt(te.abs(x) + 0.5), lambda x: 1 / np.sqrt(np.abs(x) + 0.5)),
    "tanh": (te.tanh, np.tanh),
    "sigmoid": (te.sigmoid, lambda x: 1 / (1 + np.exp(-x))),
    "erf": (te.erf, np.vectorize(math.erf)),
    "abs": (te.abs, np.abs),
    "pow": (lambda x: te.power(te.abs(x) + 0.5, x), lambda x: np.power(np.abs(x) + 0.5, x)),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", list(MATH))
def test_math_functions(run_llvm, dtype, name):
    te_fn, np_fn = MATH[name]
    x = rand((64,), dtype, 5, low=-3, high=3)
    X = te.placeholder((64,), dtype, name="X")
    Y = te.compute((64,), lambda i: te_fn(X[i]), name="Y")
    (y,), (ref,) = run_llvm(Y, [X], [x])
    want = np_fn(x.astype("float64"))
    # libm and numpy are each within a couple of ulps of the exact value
    np.testing.assert_allclose(y, want, rtol=ulps(dtype, 8), atol=ulps(dtype, 8))
    np.testing.assert_allclose(ref, want, rtol=ulps(dtype, 8), atol=ulps(dtype, 8))


def test_guarded_reads_at_the_borders(run_llvm):
    # a 3-point stencil with zero padding: the guarded reads are never executed outside
    A = te.placeholder((1000,), "float32", name="A")
    S = te.compute(
        (1000,),
        lambda i: (
            te.if_then_else(i > 0, A[i - 1], 0.0) + A[i] + te.if_then_else(i < 999, A[i + 1], 0.0)
        ),
        name="S",
    )
    a = rand((1000,), "float32", 6)
    (s,), (ref,) = run_llvm(S, [A], [a])
    zero = np.zeros(1, "float32")
    want = np.concatenate([zero, a[:-1]]) + a + np.concatenate([a[1:], zero])
    np.testing.assert_array_equal(s, want)  # same order of additions: bit-identical
    np.testing.assert_array_equal(s, ref)
