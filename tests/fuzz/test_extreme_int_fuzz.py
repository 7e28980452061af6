"""Differential fuzzing at the edges of the integers: compiled code vs the reference.

``test_expr_fuzz`` keeps values well-conditioned; this one goes where C and LLVM leave
behaviour undefined and our semantics (``dsl.expr``) define it: int32 and int64 inputs
at and near their limits, negative values, zero and -1 divisors (``INT_MIN // -1``
wraps; a zero divisor is an error in both evaluators), wrapping ``+ - *``, negation
and ``abs`` of ``INT_MIN``, truncating and widening casts, and float -> int casts of huge,
infinite and NaN values (saturating, NaN -> 0). Each case is built with a random schedule
(serial, vectorized or parallel) and must agree with ``dsl.reference.evaluate`` bit for
bit, or both must refuse with a division-by-zero error (where the simplifier dropped the
zero divisor's sub-expression, the reference of the simplified expression decides).

The fast tier runs a deterministic smoke sample; the slow tier (``-m slow``) many more.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings, strategies as st

import ansor_lab as tvm
from ansor_lab import te
from ansor_lab.dsl.reference import evaluate
from ansor_lab.errors import KernelDivisionByZeroError, ReferenceEvaluationError
from ansor_lab.ir import simplify_expr

N = 8
INTS = ("int32", "int64")


def edges(dtype: str) -> list[int]:
    """Values where integer arithmetic goes wrong first."""
    info = np.iinfo(dtype)
    lo, hi = int(info.min), int(info.max)
    return [lo, lo + 1, lo // 2, -(2**16), -7, -2, -1, 0, 1, 2, 3, 7, 2**16, hi // 2, hi - 1, hi]


FLOAT_EDGES = [0.0, -0.0, 0.5, -1.5, 2.0**31, -(2.0**31), 2.0**31 - 128, 3e9, -3e9, 1e19,
               -1e19, float("inf"), float("-inf"), float("nan")]  # fmt: skip


@dataclass(frozen=True)
class Gen:
    """A generated integer expression: how to build it from the inputs, and its dtype."""

    build: Callable
    dtype: str


def leaf(draw, dtype: str) -> Gen:
    kind = draw(st.sampled_from(["load", "load", "other", "const"]))
    if kind == "const":
        c = draw(st.sampled_from(edges(dtype)))
        return Gen(lambda env: te.const(c, dtype), dtype)
    name = ("a" if kind == "load" else "b") + dtype[3:]
    return Gen(lambda env: env[name][env["i"]], dtype)


def gen(draw, dtype: str, depth: int) -> Gen:
    if depth <= 0 or draw(st.integers(0, 5)) == 0:
        return leaf(draw, dtype)
    op = draw(
        st.sampled_from(
            [
                "+",
                "-",
                "*",
                "//",
                "%",
                "truncdiv",
                "truncmod",
                "min",
                "max",
                "neg",
                "abs",
                "cast",
                "fcast",
                "guarded//",
                "choice",
            ]  # fmt: skip
        )
    )
    if op == "cast":  # through the other width: truncation or sign extension
        other = "int64" if dtype == "int32" else "int32"
        a = gen(draw, other, depth - 1)
        return Gen(lambda env: a.build(env).astype(dtype), dtype)
    if op == "fcast":
        f = draw(st.sampled_from(["fa", "fb"]))
        fdt = draw(st.sampled_from(["float32", "float64"]))
        return Gen(lambda env: env[f][env["i"]].astype(fdt).astype(dtype), dtype)
    a = gen(draw, dtype, depth - 1)
    if op == "neg":
        return Gen(lambda env: -a.build(env), dtype)
    if op == "abs":
        return Gen(lambda env: te.abs(a.build(env)), dtype)
    b = gen(draw, dtype, depth - 1)
    if op == "choice":
        c = gen(draw, dtype, depth - 1)
        lazy = draw(st.booleans())
        pick = te.if_then_else if lazy else te.select
        return Gen(lambda env: pick(c.build(env) < b.build(env), a.build(env), b.build(env)), dtype)
    if op == "guarded//":  # the documented way to divide by a value that may be zero
        return Gen(
            lambda env: te.if_then_else(
                b.build(env) != 0, a.build(env) // b.build(env), te.const(0, dtype)
            ),
            dtype,
        )
    fns = {
        "+": lambda x, y: x + y,
        "-": lambda x, y: x - y,
        "*": lambda x, y: x * y,
        "//": lambda x, y: x // y,
        "%": lambda x, y: x % y,
        "truncdiv": te.truncdiv,
        "truncmod": te.truncmod,
        "min": te.min,
        "max": te.max,
    }
    fn = fns[op]
    if op in ("//", "%", "truncdiv", "truncmod") and draw(st.booleans()):
        c = draw(st.sampled_from([v for v in edges(dtype) if v != 0]))  # a constant divisor
        return Gen(lambda env: fn(a.build(env), te.const(c, dtype)), dtype)
    return Gen(lambda env: fn(a.build(env), b.build(env)), dtype)


@st.composite
def arrays(draw, dtype: str) -> np.ndarray:
    if dtype.startswith("float"):
        pool = FLOAT_EDGES
    else:
        pool = edges(dtype)
    return np.array([draw(st.sampled_from(pool)) for _ in range(N)], dtype=dtype)


def run_case(draw) -> None:
    dtype = draw(st.sampled_from(INTS))
    expr = gen(draw, dtype, draw(st.integers(1, 4)))
    inputs = {
        "a32": te.placeholder((N,), "int32", name="a32"),
        "b32": te.placeholder((N,), "int32", name="b32"),
        "a64": te.placeholder((N,), "int64", name="a64"),
        "b64": te.placeholder((N,), "int64", name="b64"),
        "fa": te.placeholder((N,), "float32", name="fa"),
        "fb": te.placeholder((N,), "float64", name="fb"),
    }
    out = te.compute((N,), lambda i: expr.build({**inputs, "i": i}), name="out")
    values = {k: draw(arrays(t.dtype)) for k, t in inputs.items()}
    s = te.create_schedule(out.op)
    how = draw(st.sampled_from(["serial", "vectorize", "parallel"]))
    if how == "vectorize":
        s[out].vectorize(out.op.axis[0])
    elif how == "parallel":
        s[out].parallel(out.op.axis[0])
    args = list(inputs.values()) + [out]
    f = tvm.build(s, args, num_threads=2)

    want = ref_error = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # numpy on wrapping scalars
        try:
            want = evaluate([out], {inputs[k]: v for k, v in values.items()})[out]
        except ReferenceEvaluationError as err:
            assert "division by zero" in str(err)
            ref_error = err
    if ref_error is not None:
        # the simplifier may drop a sub-expression whose value cannot matter (x % 1) and
        # a zero divisor with it (``dsl.expr``): then the simplified expression decides
        simple = te.compute(
            (N,),
            lambda i: simplify_expr(expr.build({**inputs, "i": i}), {i: (0, N - 1)}),
            name="simple",
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            try:
                want = evaluate([simple], {inputs[k]: v for k, v in values.items()})[simple]
                ref_error = None
            except ReferenceEvaluationError:
                pass
    got = np.full(N, 123, dtype=dtype)
    try:
        f(*values.values(), got)
        got_error = None
    except KernelDivisionByZeroError as err:
        got_error = err
    context = f"{out.op.body[0]} [{how}] on {values}"
    assert (ref_error is None) == (got_error is None), (
        f"reference: {ref_error}, compiled: {got_error}: {context}"
    )
    if ref_error is None:
        np.testing.assert_array_equal(got, want, err_msg=context)


COMMON = dict(
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@settings(max_examples=40, derandomize=True, **COMMON)
@given(data=st.data())
def test_extreme_integers_smoke(data):
    """A deterministic sample in the fast tier."""
    run_case(data.draw)


@pytest.mark.slow
# no shrinking: a failure's message already names the expression, schedule and inputs
@settings(max_examples=600, derandomize=True, phases=[Phase.generate], **COMMON)
@given(data=st.data())
def test_extreme_integers_thorough(data):
    run_case(data.draw)
