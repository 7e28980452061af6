"""Differential fuzzing: random expressions built by the LLVM backend vs the numpy reference.

Hypothesis draws random expression trees (arithmetic, division, min/max, comparisons,
``if_then_else`` / ``select``, casts, math intrinsics, guarded out-of-range reads) and
random reductions over one or two axes with optional ``where=``. Each case is built with
the default schedule and compared with ``ansor_lab.dsl.reference.evaluate``.

Every generated node carries a static bound on its magnitude and on how far two correct
implementations may drift apart (``err``): integer code and IEEE-exact float code
(``+ - * /``, sqrt, min/max, casts) must match bit for bit; only transcendental functions
(whose libm and numpy implementations differ in the last ulp), sums of products (the
backend lets LLVM fuse a multiply into the add that consumes it, as TVM does, which skips
one rounding) and sum reductions (sequential vs numpy's pairwise order) get a tolerance,
derived from those bounds. Values
are kept well-conditioned: inputs in [-2, 2], exp only of tanh, divisions by
``x * x + 1`` or by non-zero constants, integer magnitudes far from overflow, and no
comparison, float->int cast or sqrt of an inexact value (a last-ulp difference there
would be amplified, not a bug).

Profiles: ``ANSOR_FUZZ_PROFILE=ci`` (default: deterministic, 3 x 200 cases, about 40 s of
CPU) or ``thorough`` (random seed, 3 x 3000 cases).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import ansor_lab as tvm
from ansor_lab import te
from ansor_lab.dsl.dag import ComputeDAG
from ansor_lab.dsl.reference import evaluate

settings.register_profile(
    "expr-fuzz-ci",
    max_examples=200,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "expr-fuzz-thorough",
    max_examples=3000,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
PROFILE_NAME = os.environ.get("ANSOR_FUZZ_PROFILE", "ci")
PROFILE = settings.get_profile(
    "expr-fuzz-thorough" if PROFILE_NAME == "thorough" else "expr-fuzz-ci"
)

FLOATS = ("float32", "float64")
#: Largest integer magnitude an int node may reach (int32 never overflows).
INT_LIMIT = 1 << 20
#: Largest float magnitude a node may reach (x * x + 1 stays finite in float32).
FLOAT_LIMIT = 1e4


def eps(dtype: str) -> float:
    """Machine epsilon of a float dtype (0 for integers: they are exact)."""
    return float(np.finfo(dtype).eps) if dtype.startswith("float") else 0.0


@dataclass(frozen=True)
class Node:
    """A generated expression: how to build it, its dtype, |value| bound and drift bound.

    ``err`` bounds the absolute difference between two correct evaluations (0 means the
    result is bit-exact in both); ``fma`` is non-zero for a product (or its negation or
    widening), which the backend may fuse into an add that consumes it; ``build`` takes
    the environment of index variables and tensors and returns the DSL expression.
    """

    build: Callable
    dtype: str
    mag: float
    err: float = 0.0
    fma: float = 0.0  # a product: what fusing it into a consuming add/sub may change

    @property
    def exact(self) -> bool:
        """True when both evaluations must agree bit for bit."""
        return self.err == 0.0


@dataclass
class Env:
    """What expressions may refer to while being built inside te.compute."""

    spatial: list
    reduce: list
    inputs: dict  # dtype -> tensor of the full grid shape (spatial + reduce)
    grid: tuple

    def index(self) -> list:
        return list(self.spatial) + list(self.reduce)


# --------------------------------------------------------------------------------------
# Generators: each takes hypothesis' draw, the wanted dtype and the remaining depth.


def gen_leaf(draw, dtype: str) -> Node:
    kind = draw(st.sampled_from(["load", "load", "load", "const", "guarded", "reversed"]))
    if kind == "const":
        if dtype == "int32":
            c = draw(st.integers(-5, 5))
            return Node(lambda env: te.const(c, "int32"), dtype, abs(c))
        value = draw(st.integers(-200, 200)) / 100
        rounded = float(np.dtype(dtype).type(value))
        return Node(lambda env: te.const(value, dtype), dtype, abs(rounded))
    mag = 5.0 if dtype == "int32" else 2.0
    if kind == "load":
        return Node(lambda env: env.inputs[dtype][tuple(env.index())], dtype, mag)
    if kind == "reversed":

        def build(env):
            idx = env.index()
            idx[0] = env.grid[0] - 1 - idx[0]
            return env.inputs[dtype][tuple(idx)]

        return Node(build, dtype, mag)
    # a read one past the end, guarded by a lazy if_then_else (never evaluated there)
    fill = draw(st.integers(-2, 2))

    def build(env):
        idx = env.index()
        cond = idx[0] + 1 < env.grid[0]
        idx[0] = idx[0] + 1
        return te.if_then_else(cond, env.inputs[dtype][tuple(idx)], te.const(fill, dtype))

    return Node(build, dtype, mag)


def gen_bool(draw, depth: int) -> Node:
    kind = draw(st.sampled_from(["cmp", "cmp", "index", "logic"] if depth > 0 else ["index"]))
    if kind == "index":
        c = draw(st.integers(0, 3))
        which = draw(st.sampled_from(["lt", "parity"]))

        def build(env):
            idx = env.index()
            v = idx[c % len(idx)]
            if which == "lt":
                return v < c + 1
            return (v + idx[0]) % 2 == 0

        return Node(build, "bool", 1.0)
    if kind == "logic":
        op = draw(st.sampled_from(["and", "or", "not"]))
        a = gen_bool(draw, depth - 1)
        if op == "not":
            return Node(lambda env: ~a.build(env), "bool", 1.0)
        b = gen_bool(draw, depth - 1)
        fn = (lambda x, y: x & y) if op == "and" else (lambda x, y: x | y)
        return Node(lambda env: fn(a.build(env), b.build(env)), "bool", 1.0)
    dtype = draw(st.sampled_from(("int32",) + FLOATS))
    # only exact operands: a last-ulp drift must not flip a comparison
    a = gen_exact(draw, dtype, depth - 1)
    b = gen_exact(draw, dtype, depth - 1)
    op = draw(st.sampled_from(["<", "<=", ">", ">=", "==", "!="]))
    fns = {
        "<": lambda x, y: x < y,
        "<=": lambda x, y: x <= y,
        ">": lambda x, y: x > y,
        ">=": lambda x, y: x >= y,
        "==": lambda x, y: x == y,
        "!=": lambda x, y: x != y,
    }
    fn = fns[op]
    return Node(lambda env: fn(a.build(env), b.build(env)), "bool", 1.0)


def gen_exact(draw, dtype: str, depth: int) -> Node:
    """A node of ``dtype`` that evaluates bit-exactly (retries, then falls back to a leaf)."""
    for _ in range(3):
        node = gen(draw, dtype, depth)
        if node.exact:
            return node
    return gen_leaf(draw, dtype)


def gen(draw, dtype: str, depth: int) -> Node:
    if depth <= 0 or draw(st.integers(0, 4)) == 0:
        return gen_leaf(draw, dtype)
    if dtype == "int32":
        return gen_int(draw, depth)
    return gen_float(draw, dtype, depth)


def _choice(draw, a: Node, b: Node, depth: int) -> Node:
    cond = gen_bool(draw, depth - 1)
    lazy = draw(st.booleans())
    pick = te.if_then_else if lazy else te.select
    return Node(
        lambda env: pick(cond.build(env), a.build(env), b.build(env)),
        a.dtype,
        max(a.mag, b.mag),
        max(a.err, b.err),
    )


def gen_int(draw, depth: int) -> Node:
    d = "int32"
    op = draw(
        st.sampled_from(
            [
                "+",
                "-",
                "*",
                "//c",
                "%c",
                "truncdiv",
                "truncmod",
                "/c",
                "//sq",
                "%sq",
                "min",
                "max",
                "abs",
                "neg",
                "choice",
                "fcast",
                "bcast",
            ]
        )
    )
    if op == "bcast":  # a condition counted as 0 / 1
        cond = gen_bool(draw, depth - 1)
        return Node(lambda env: cond.build(env).astype(d), d, 1.0)
    if op == "fcast":
        fd = draw(st.sampled_from(FLOATS))
        a = gen_exact(draw, fd, depth - 1)
        if a.mag >= INT_LIMIT:
            return gen_leaf(draw, d)
        return Node(lambda env: a.build(env).astype(d), d, math.floor(a.mag))
    a = gen(draw, d, depth - 1)
    if op in ("abs", "neg"):
        fn = te.abs if op == "abs" else (lambda x: -x)
        return Node(lambda env: fn(a.build(env)), d, a.mag)
    if op in ("//c", "%c", "truncdiv", "truncmod", "/c"):
        c = draw(st.sampled_from([-7, -3, -2, -1, 1, 2, 3, 4, 5, 16]))
        fns = {
            "//c": lambda x: x // c,
            "%c": lambda x: x % c,
            "truncdiv": lambda x: te.truncdiv(x, c),
            "truncmod": lambda x: te.truncmod(x, c),
            "/c": lambda x: x / c,
        }
        fn = fns[op]
        mag = a.mag if op in ("//c", "truncdiv", "/c") else min(a.mag, abs(c) - 1)
        return Node(lambda env: fn(a.build(env)), d, mag)
    b = gen(draw, d, depth - 1)
    if op in ("//sq", "%sq"):
        if b.mag > 1000:
            return a
        # b * b + 1 >= 1: a divisor that is never zero
        if op == "//sq":
            return Node(lambda env: a.build(env) // (b.build(env) * b.build(env) + 1), d, a.mag)
        return Node(
            lambda env: a.build(env) % (b.build(env) * b.build(env) + 1),
            d,
            min(a.mag, b.mag * b.mag),
        )
    if op == "choice":
        return _choice(draw, a, b, depth)
    if op in ("min", "max"):
        fn = te.min if op == "min" else te.max
        return Node(lambda env: fn(a.build(env), b.build(env)), d, max(a.mag, b.mag))
    if op == "*":
        if a.mag * b.mag >= INT_LIMIT:
            return a
        return Node(lambda env: a.build(env) * b.build(env), d, a.mag * b.mag)
    if a.mag + b.mag >= INT_LIMIT:
        return a
    fn = (lambda x, y: x + y) if op == "+" else (lambda x, y: x - y)
    return Node(lambda env: fn(a.build(env), b.build(env)), d, a.mag + b.mag)


def gen_float(draw, d: str, depth: int) -> Node:
    e = eps(d)
    op = draw(
        st.sampled_from(
            [
                "+",
                "-",
                "*",
                "div",
                "min",
                "max",
                "abs",
                "neg",
                "sqrt",
                "exp",
                "tanh",
                "sigmoid",
                "choice",
                "icast",
                "fcast",
            ]
        )
    )
    if op == "icast":
        a = gen(draw, "int32", depth - 1)
        return Node(lambda env: a.build(env).astype(d), d, a.mag)  # |a| < 2**20: exact
    if op == "fcast":
        other = "float64" if d == "float32" else "float32"
        a = gen(draw, other, depth - 1)
        rounding = a.mag * e if d == "float32" else 0.0  # float64 -> float32 rounds
        err = a.err + rounding if a.err else 0.0  # same rounding on both sides when exact
        fma = a.fma if d == "float64" else 0.0  # fadd(fpext(fmul)) may still fuse
        return Node(lambda env: a.build(env).astype(d), d, a.mag, err, fma)
    if op == "sqrt":
        a = gen_exact(draw, d, depth - 1)  # sqrt magnifies drift near zero: exact inputs only
        return Node(lambda env: te.sqrt(te.abs(a.build(env))), d, math.sqrt(a.mag))
    a = gen(draw, d, depth - 1)
    if op == "abs":
        return Node(lambda env: te.abs(a.build(env)), d, a.mag, a.err)
    if op == "neg":  # fneg(fmul) still fuses into an add (as fnmadd)
        return Node(lambda env: -a.build(env), d, a.mag, a.err, a.fma)
    if op in ("exp", "tanh", "sigmoid"):
        # libm and numpy may differ in the last ulps: a few ulp of the result, plus the
        # input drift times the function's Lipschitz constant (e, 1, 1/4)
        if op == "exp":
            return Node(
                lambda env: te.exp(te.tanh(a.build(env))),
                d,
                math.e,
                math.e * (a.err + 4 * e) + 4 * e * math.e,
            )
        fn, lip = (te.tanh, 1.0) if op == "tanh" else (te.sigmoid, 0.25)
        return Node(lambda env: fn(a.build(env)), d, 1.0, lip * a.err + 4 * e)
    b = gen(draw, d, depth - 1)
    if op == "choice":
        return _choice(draw, a, b, depth)
    if op in ("min", "max"):
        fn = te.min if op == "min" else te.max
        return Node(
            lambda env: fn(a.build(env), b.build(env)), d, max(a.mag, b.mag), max(a.err, b.err)
        )
    drift = a.err > 0 or b.err > 0
    if op == "div":
        if b.mag * b.mag >= FLOAT_LIMIT * FLOAT_LIMIT:
            return a
        # a / (b*b + 1): the denominator is >= 1, so |result| <= |a|; b*b + 1 may be one
        # fused multiply-add, which rounds once instead of twice (e * b.mag**2 apart)
        den_err = 2 * b.mag * b.err + b.err * b.err + 2 * e * (b.mag * b.mag + 1)
        err = a.err + a.mag * den_err + 2 * e * a.mag
        return Node(lambda env: a.build(env) / (b.build(env) * b.build(env) + 1.0), d, a.mag, err)
    if op == "*":
        mag = a.mag * b.mag
        if mag >= FLOAT_LIMIT:
            return a
        err = (a.err * b.mag + b.err * a.mag + a.err * b.err + 2 * e * mag) if drift else 0.0
        return Node(lambda env: a.build(env) * b.build(env), d, mag, err, e * mag)
    mag = a.mag + b.mag
    if mag >= FLOAT_LIMIT:
        return a
    fused = a.fma + b.fma
    err = (a.err + b.err + fused + 2 * e * mag) if drift or fused else 0.0
    fn = (lambda x, y: x + y) if op == "+" else (lambda x, y: x - y)
    return Node(lambda env: fn(a.build(env), b.build(env)), d, mag, err)


# --------------------------------------------------------------------------------------
# Building, running and comparing one case


@st.composite
def shapes(draw, n_reduce: int) -> tuple[tuple, tuple]:
    n_spatial = draw(st.integers(1, 2))
    spatial = tuple(draw(st.integers(1, 5)) for _ in range(n_spatial))
    red = tuple(draw(st.integers(1, 5)) for _ in range(n_reduce))
    return spatial, red


def make_inputs(grid: tuple) -> dict:
    return {d: te.placeholder(grid, d, name=f"in_{d}") for d in ("int32",) + FLOATS}


def random_arrays(tensors: list, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    out = []
    for t in tensors:
        if t.dtype == "int32":
            out.append(rng.integers(-5, 6, size=t.shape).astype("int32"))
        else:
            out.append(rng.uniform(-2, 2, size=t.shape).astype(t.dtype))
    return out


def check(out: te.Tensor, err: float, seed: int) -> None:
    """Build ``out`` with the default schedule, run it and compare with the reference."""
    placeholders = [op.output(0) for op in ComputeDAG([out]).placeholders]
    args = placeholders + [out]
    func = tvm.build(te.create_schedule(out.op), args, target="llvm")
    arrays = random_arrays(placeholders, seed)
    got = np.full(out.shape, 123, dtype=out.dtype)  # garbage: every element must be written
    func(*arrays, got)
    want = evaluate([out], dict(zip(placeholders, arrays)))[out]
    assert got.dtype == want.dtype
    try:
        if err == 0.0:
            np.testing.assert_array_equal(got, want)
        else:
            # 4x the static drift bound; rtol 0: the bound is already absolute
            np.testing.assert_allclose(got, want, rtol=0, atol=4 * err)
    except AssertionError as failure:
        text = tvm.lower(te.create_schedule(out.op), args).script()
        raise AssertionError(f"{failure}\n{ComputeDAG([out])}\n{text}") from None


def elementwise_case(draw) -> tuple[te.Tensor, float]:
    spatial, _ = draw(shapes(0))
    dtype = draw(st.sampled_from(("int32",) + FLOATS))
    node = gen(draw, dtype, draw(st.integers(1, 4)))
    inputs = make_inputs(spatial)

    def body(*idx):
        return node.build(Env(list(idx), [], inputs, spatial))

    return te.compute(spatial, body, name="out"), node.err


def reduction_case(draw, inputs_override: Callable | None = None) -> tuple[te.Tensor, float]:
    n_red = draw(st.integers(1, 2))
    spatial, red = draw(shapes(n_red))
    grid = spatial + red
    combiner = draw(st.sampled_from(["sum", "max", "min"]))
    dtype = draw(st.sampled_from(("int32",) + FLOATS))
    node = gen(draw, dtype, draw(st.integers(0, 3)))
    cond = gen_bool(draw, 1) if draw(st.booleans()) else None
    inputs = make_inputs(grid) if inputs_override is None else inputs_override(grid)
    reducer = {"sum": te.sum, "max": te.max, "min": te.min}[combiner]

    def body(*idx):
        axes = [te.reduce_axis((0, n), name=f"k{r}") for r, n in enumerate(red)]
        env = Env(list(idx), [a.var for a in axes], inputs, grid)
        where = None if cond is None else cond.build(env)
        return reducer(node.build(env), axis=axes, where=where)

    terms = math.prod(red)
    if combiner == "sum":
        # sequential vs pairwise summation: each partial sum may round differently
        err = terms * node.err + (terms * eps(dtype) * node.mag * terms if dtype != "int32" else 0)
    else:
        err = node.err
    return te.compute(spatial, body, name="out"), err


@PROFILE
@given(data=st.data(), seed=st.integers(0, 2**16))
def test_elementwise_matches_reference(data, seed):
    out, err = elementwise_case(data.draw)
    check(out, err, seed)


@PROFILE
@given(data=st.data(), seed=st.integers(0, 2**16))
def test_reduction_matches_reference(data, seed):
    out, err = reduction_case(data.draw)
    check(out, err, seed)


@PROFILE
@given(data=st.data(), seed=st.integers(0, 2**16))
def test_chain_through_intermediate_matches_reference(data, seed):
    """A random elementwise stage feeds a random reduction: an intermediate buffer."""
    draw = data.draw
    stage_dtype = draw(st.sampled_from(("int32",) + FLOATS))
    first = gen(draw, stage_dtype, draw(st.integers(1, 3)))
    if not first.exact:
        first = gen_exact(draw, stage_dtype, 2)  # its output feeds comparisons below
    made = {}

    lo, hi = (-5, 5) if stage_dtype == "int32" else (-2.0, 2.0)

    def inputs_for(grid):
        base = make_inputs(grid)

        def body(*idx):
            # clamped to the input range, so the generators' magnitude bounds still hold
            value = first.build(Env(list(idx), [], base, grid))
            return te.max(te.min(value, te.const(hi, stage_dtype)), te.const(lo, stage_dtype))

        mid = te.compute(grid, body, name="mid")
        made["mid"] = mid
        return {**base, stage_dtype: mid}

    out, err = reduction_case(draw, inputs_for)
    assert "mid" in made
    check(out, err, seed)


def test_fuzz_profile_is_deterministic_in_ci():
    """The CI profile must replay the same cases every run (no flaky fuzzing in CI)."""
    if PROFILE_NAME == "thorough":
        pytest.skip("a non-CI fuzz profile is active")
    assert PROFILE.derandomize is True
    assert PROFILE.deadline is None
    assert PROFILE.max_examples >= 150
