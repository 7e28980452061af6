"""float16 conversions on CPUs without the instructions (codegen/half_support.py).

``-mcpu=x86-64`` has neither F16C nor AVX512-FP16, so every conversion below is a call
into the software helpers; without them the JIT code would call address 0 and kill the
test process. Results must equal numpy's ``astype`` bit for bit (round to nearest, ties
to even), NaN aside (any NaN is accepted for a NaN).
"""

from __future__ import annotations

import numpy as np
import pytest

import ansor_lab as tvm
from ansor_lab import te
from ansor_lab.codegen.half_support import HALF_LIBCALLS, install_half_support

GENERIC = "llvm -mcpu=x86-64"


def convert(values: np.ndarray, dst: str, target: str = GENERIC, lanes: int = 1) -> np.ndarray:
    """``values.astype(dst)`` computed by a kernel built for ``target``."""
    n = values.size
    X = te.placeholder((n,), str(values.dtype), name="X")
    Y = te.compute((n,), lambda i: X[i].astype(dst), name="Y")
    sch = te.create_schedule(Y.op)
    if lanes > 1:
        _, inner = sch[Y].split(Y.op.axis[0], factor=lanes)
        sch[Y].vectorize(inner)
    f = tvm.build(sch, [X, Y], target)
    out = np.zeros(n, dst)
    f(values, out)
    return out


def assert_same_bits(got: np.ndarray, want: np.ndarray) -> None:
    nan = np.isnan(want)
    np.testing.assert_array_equal(np.isnan(got), nan)
    uint = {2: np.uint16, 4: np.uint32, 8: np.uint64}[got.itemsize]
    bad = np.flatnonzero(got[~nan].view(uint) != want[~nan].view(uint))
    assert bad.size == 0, (
        f"{bad.size} values differ, first: {got[~nan][bad[:5]]} vs {want[~nan][bad[:5]]}"
    )


def halfway_points() -> np.ndarray:
    """Every value exactly between two adjacent finite halves (the ties), as float64."""
    h = np.arange(0, 0x7C00, dtype=np.uint16).view(np.float16).astype(np.float64)
    mids = (h[:-1] + h[1:]) / 2  # exact in float64
    return np.concatenate([mids, -mids])


def test_the_helpers_are_registered_once():
    first = install_half_support()
    assert set(first) == set(HALF_LIBCALLS) and all(first.values())
    assert install_half_support() is first


def test_every_half_widens_exactly():
    bits = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
    halves = bits.view(np.float16)
    assert_same_bits(convert(halves, "float32"), halves.astype(np.float32))


@pytest.mark.parametrize("lanes", [1, 8])
def test_float_to_half_rounds_to_nearest_even(lanes):
    rng = np.random.default_rng(0)
    random_bits = rng.integers(0, 1 << 32, 1 << 16, dtype=np.uint64).astype(np.uint32)
    ties = halfway_points().astype(np.float32)  # exact: halves have 11 significant bits
    specials = np.array(
        [
            0.0,
            -0.0,
            np.inf,
            -np.inf,
            np.nan,
            65504,
            65519.99,
            65520,
            2.0**-24,
            2.0**-25,
            3 * 2.0**-26,
            2.0**-14,
            1e-40,
        ],
        np.float32,
    )
    x = np.concatenate(
        [
            random_bits.view(np.float32),
            ties,
            np.nextafter(ties, 0),
            np.nextafter(ties, np.inf),
            specials,
        ]
    )
    with np.errstate(over="ignore", invalid="ignore"):
        want = x.astype(np.float16)
    assert_same_bits(convert(x, "float16", lanes=lanes), want)


@pytest.mark.parametrize("target", [GENERIC, "llvm"])
def test_double_to_half_rounds_once(target):
    """Just above or below a tie, rounding to float first would land on the tie and round
    to even the wrong way: the helper rounds to odd first."""
    ties = halfway_points()
    rng = np.random.default_rng(1)
    x = np.concatenate(
        [
            ties,
            np.nextafter(ties, 0),
            np.nextafter(ties, np.inf),
            rng.uniform(-70000, 70000, 1 << 14),
            rng.standard_normal(1 << 14) * 1e-5,
            [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-300, -1e-300, 1e300, 65519.999, 65520.0],
        ]
    )
    with np.errstate(over="ignore"):
        want = x.astype(np.float16)
    got = convert(x, "float16", target=target)
    assert_same_bits(got, want)
    # the case the first rounding to float would get wrong, spelled out
    above_tie = np.nextafter(1 + 2.0**-11, 2.0)  # just above the tie between 1 and 1+2^-10
    assert convert(np.array([above_tie]), "float16", target=target)[0] == 1 + 2.0**-10


def test_half_arithmetic_without_f16c():
    x = np.linspace(-8, 8, 64).astype(np.float16)
    X = te.placeholder((64,), "float16", name="X")
    Y = te.compute((64,), lambda i: X[i] * X[i] + X[i], name="Y")
    f = tvm.build(te.create_schedule(Y.op), [X, Y], GENERIC)
    out = np.zeros(64, np.float16)
    f(x, out)
    # computed in float and rounded once per operation, like numpy's float16 arithmetic
    want = (x * x) + x
    np.testing.assert_array_equal(out, want)


def test_generic_x86_code_calls_the_helpers():
    """What the tests above exercise: without F16C every conversion is a libcall."""
    X = te.placeholder((4,), "float64", name="X")
    H = te.placeholder((4,), "float16", name="H")
    outs = [
        te.compute((4,), lambda i: X[i].astype("float16"), name="a"),
        te.compute((4,), lambda i: H[i].astype("float32"), name="b"),
        te.compute((4,), lambda i: X[i].astype("float32").astype("float16"), name="c"),
    ]
    f = tvm.build(te.create_schedule([o.op for o in outs]), [X, H, *outs], GENERIC)
    asm = f.get_source("asm")
    for name in HALF_LIBCALLS:
        assert name in asm
