"""The arithmetic simplifier: folding, linear canonical form, div/mod and comparisons by bounds."""

from __future__ import annotations

import math

import pytest

from ansor_lab import te
from ansor_lab.dsl import expr as E
from ansor_lab.errors import DSLError
from ansor_lab.ir import Analyzer, nodes as N, simplify, simplify_expr, simplify_stmt


def s(e, bounds=None) -> str:
    return str(simplify_expr(e, bounds))


@pytest.fixture
def ij():
    i, j = te.var("i"), te.var("j")
    return i, j, {i: (0, 7), j: (0, 15)}


def test_constant_folding():
    assert s(te.const(3) + 4 * 5) == "23"
    assert s(te.const(7) // -2) == "-4"
    assert s(te.const(-7) % 3) == "2"
    assert s(te.truncdiv(te.const(-7), 2)) == "-3"
    assert s(te.truncmod(te.const(-7), 2)) == "-1"
    assert s(te.const(2.5) * te.const(4.0)) == "T.float32(10.0)"
    # folded in the expression's own precision, not in Python's double
    assert s(te.const(0.1) + te.const(0.2)) == "T.float32(0.30000001192092896)"
    f64 = te.const(0.1, "float64") + te.const(0.2, "float64")
    assert s(f64) == "T.float64(0.30000000000000004)"
    assert s(te.const(7) < 9) == "True"
    # a constant zero divisor is refused when built, so the simplifier never meets one
    with pytest.raises(DSLError, match="division by the constant 0"):
        te.const(1) // 0


def test_constant_min_max_propagate_nan_in_either_position():
    nan, one = te.const(float("nan")), te.const(1.0)
    for folded in (te.min(nan, one), te.min(one, nan), te.max(nan, one), te.max(one, nan)):
        value = simplify_expr(folded)
        assert isinstance(value, E.FloatImm) and math.isnan(value.value), str(folded)
    assert s(te.min(te.const(-0.5), te.const(2.0))) == "T.float32(-0.5)"


def test_linear_canonical_form_orders_largest_coefficients_first():
    i, j, k = te.var("i"), te.var("j"), te.var("k")
    assert s(j + i * 4 + 3 - i + k * 16) == "k * 16 + i * 3 + j + 3"
    assert s(i - i) == "0"
    assert s((i + 1) * 3 - 3) == "i * 3"
    assert s(2 * (i + j) - j) == "i * 2 + j"
    assert s(j - i * 2 - 5) == "i * -2 + j - 5"


def test_div_mod_of_tiled_index_under_bounds(ij):
    i, j, b = ij
    assert s((i * 16 + j) // 16, b) == "i"
    assert s((i * 16 + j) % 16, b) == "j"
    assert s((i * 16 + j + 16) // 16, b) == "i + 1"
    assert s(te.truncdiv(i * 16 + j, 16), b) == "i"
    assert s(te.truncmod(i * 16 + j, 16), b) == "j"
    assert s((i * 32 + j + 3) // 16, b) == "i * 2 + (j + 3) // 16"
    assert s((i + 1) // 1) == "i + 1" and s((i + 1) % 1) == "0"


def test_a_quotient_and_its_remainder_recombine_into_the_dividend():
    i, k = te.var("i"), te.var("k")
    # a fused 7x7 window split into lanes reads row k // 7, column k % 7: offset k
    assert s(i * 49 + (k // 7) * 7 + k % 7) == "i * 49 + k"
    assert s(te.truncdiv(k + 3, 5) * 5 + te.truncmod(k + 3, 5)) == "k + 3"
    assert s(((k * 2) // 3) * 6 + ((k * 2) % 3) * 2) == "k * 4"  # scaled by 2
    # not a pair: a different divisor, a floor quotient with a truncated remainder, or
    # the remainder's scale not the quotient's over the divisor
    assert s((k // 7) * 7 + k % 5) == "k // 7 * 7 + k % 5"
    assert s((k // 7) * 7 + te.truncmod(k, 7)) == "k // 7 * 7 + T.truncmod(k, 7)"
    assert s((k // 7) * 14 + k % 7) == "k // 7 * 14 + k % 7"


def test_div_mod_without_bounds_are_kept(ij):
    i, j, _ = ij
    # j may be negative or larger than 15 here, so nothing can be dropped
    assert s((i * 16 + j) // 16) == "(i * 16 + j) // 16"
    assert s((i * 16 + j) % 16) == "(i * 16 + j) % 16"
    # a truncated division of something that may be negative is not a floor division
    assert s(te.truncdiv(i * 16 + j, 16), {i: (-1, 7), j: (0, 15)}) == "T.truncdiv(i * 16 + j, 16)"


def test_comparisons_proven_by_bounds(ij):
    i, j, b = ij
    assert s(i * 16 + j < 128, b) == "True"
    assert s(i * 16 + j < 127, b) == "i * 16 + j < 127"
    assert s(i * 16 + j >= 128, b) == "False"
    assert s(i >= 0, b) == "True"
    assert s(i > 7, b) == "False"
    assert s(i == i) == "True" and s(i < i) == "False"
    assert s((i < 8) & (j < i), b) == "j < i"
    assert s((i > 7) | (j < i), b) == "j < i"
    x = te.var("x", "float32")
    assert s(te.if_then_else(i < 8, x, 0.0), b) == "x"
    assert s(te.select(i > 9, x, 0.0), b) == "T.float32(0.0)"


def test_min_max_by_bounds(ij):
    i, j, b = ij
    assert s(te.min(i, j + 8), b) == "i"
    assert s(te.max(i, 10), b) == "10"
    assert s(te.min(i, 3), b) == "T.min(i, 3)"
    x = te.var("x", "float32")
    assert s(te.max(x, x)) == "x"


def test_truncated_division_bounds_of_negative_values():
    x = te.var("x")
    an = Analyzer({x: (-5, -5)})
    assert an.bound(te.truncdiv(x, 2)) == (-2, -2)  # -5 / 2 truncates to -2, not -3
    assert an.bound(te.truncmod(x, 2)) == (-1, 0)  # the sign of the dividend
    assert s(te.truncdiv(x, 2) == -2, {x: (-5, -5)}) == "True"
    assert Analyzer({x: (-9, 9)}).bound(te.truncdiv(x, 4)) == (-2, 2)
    assert Analyzer({x: (-9, -1)}).bound(te.truncmod(x, 4)) == (-3, 0)


def test_wrapping_integer_arithmetic_is_not_simplified_as_exact():
    # int8 arithmetic wraps; identities of exact integers must not be applied to it
    a = te.var("a", "int8")
    assert s((a * 4 + 2) // 4) == "(a * T.int8(4) + T.int8(2)) // T.int8(4)"
    assert s(a + 1 > a) == "a + T.int8(1) > a"
    # with bounds that rule out wrapping, the same rules apply
    assert s((a * 4 + 2) // 4, {a: (-20, 20)}) == "a"
    assert s(a + 1 > a, {a: (-20, 20)}) == "True"
    # a sum that wraps makes a consumer's bounds unknown, not wrong
    b = te.var("b", "int8")
    assert Analyzer({b: (100, 120)}).bound(te.min(b * 2, te.const(5, "int8"))) == (-math.inf, 5)
    assert s(te.max(b * 2, te.const(0, "int8")), {b: (100, 120)}) == (
        "T.max(b * T.int8(2), T.int8(0))"
    )


def test_linear_constants_stay_in_the_dtype_range():
    a = te.var("a", "int8")
    # 100 * 3 = 300 wraps to 44 in int8: same value, representable constant
    assert s(a * 100 * 3) == "a * T.int8(44)"
    assert s(a + te.const(100, "int8") + te.const(100, "int8")) == "a - T.int8(56)"
    assert s(a * -128 + te.const(-128, "int8")) == "a * T.int8(-128) + T.int8(-128)"


def test_casts_fold():
    assert s(te.const(3).astype("float32")) == "T.float32(3.0)"
    assert s(E.Cast(te.const(3.7), "int32")) == "3"
    assert s(E.Cast(te.const(-3.7), "int32")) == "-3"
    assert s(E.Cast(te.const(2), "bool")) == "True"
    assert s(E.Cast(te.const(1e10), "int32")) == 'T.Cast("int32", T.float32(10000000000.0))'


def _I(v):
    return E.IntImm(v)


def test_one_trip_loops_are_removed_and_their_variable_substituted():
    A = N.Buffer("A", (4, 4), "float32")
    i, j = E.Var("i"), E.Var("j")
    body = N.For(
        i,
        _I(0),
        _I(4),
        "serial",
        N.For(j, _I(2), _I(1), "serial", N.BufferStore(A, E.FloatImm(1.0), (i, j))),
    )
    assert str(simplify_stmt(body)) == "for i in range(4):\n    A[i, 2] = T.float32(1.0)"
    empty = N.For(i, _I(0), _I(0), "serial", N.BufferStore(A, E.FloatImm(1.0), (i, i)))
    assert simplify_stmt(empty) == N.NOP


def test_loop_bounds_drive_guards_and_indices():
    A = N.Buffer("A", (64,), "float32")
    io, ii = E.Var("io"), E.Var("ii")
    index = (io * 16 + ii) // 16 * 16 + (io * 16 + ii) % 16
    store = N.BufferStore(A, E.FloatImm(0.0), (index,))
    guarded = N.IfThenElse(E.LT(io * 16 + ii, _I(64)), store)
    func = N.PrimFunc(
        (A,), N.For(io, _I(0), _I(4), "serial", N.For(ii, _I(0), _I(16), "serial", guarded))
    )
    assert str(simplify(func).body) == (
        "for io in range(4):\n    for ii in range(16):\n        A[io * 16 + ii] = T.float32(0.0)"
    )
    # the same guard with a loop that overshoots stays
    over = N.For(io, _I(0), _I(5), "serial", N.For(ii, _I(0), _I(16), "serial", guarded))
    assert "if io * 16 + ii < 64:" in str(simplify_stmt(over))


def test_dead_branches_and_constant_lets():
    A = N.Buffer("A", (4,), "int32")
    i, t = E.Var("i"), E.Var("t")
    body = N.For(
        i,
        _I(0),
        _I(4),
        "serial",
        N.seq(
            N.IfThenElse(
                E.GE(i, _I(4)), N.BufferStore(A, _I(1), (i,)), N.BufferStore(A, _I(2), (i,))
            ),
            N.LetStmt(t, _I(3), N.BufferStore(A, A[i] + t, (i,))),
        ),
    )
    assert str(simplify_stmt(body)) == "for i in range(4):\n    A[i] = 2\n    A[i] = A[i] + 3"


def test_constants_are_folded_at_their_own_precision():
    # a float32 constant is the float32 value, not the double it was written with
    tie = 1 + 2**-11 + 2**-40  # float32 rounds it to 1 + 2**-11: a float16 tie -> 1.0
    folded = simplify_expr(E.Cast(E.FloatImm(tie, "float32"), "float16"))
    assert isinstance(folded, E.FloatImm) and E.const_value(folded) == 1.0
    just_below_3 = E.FloatImm(2.9999999999, "float32")  # float32(...) == 3.0
    assert s(E.Cast(just_below_3, "int32")) == "3"
    assert s(E.EQ(E.FloatImm(0.1), E.FloatImm(0.1000000001))) == "True"
    widened = simplify_expr(E.Cast(E.FloatImm(0.1), "float64"))
    assert widened.value == 0.10000000149011612
    with_overflow = simplify_expr(E.Cast(E.FloatImm(1e6), "float16"))
    assert with_overflow.value == math.inf
