"""The vector erf and tanh (codegen/vector_special.py) against math.erf / math.tanh."""

from __future__ import annotations

import math

import numpy as np
import pytest

import ansor_lab as tvm
from ansor_lab import te

N = 1 << 16


def _vector_kernel(fn, n: int = N, lanes: int = 16):
    X = te.placeholder((n,), "float32", name="X")
    Y = te.compute((n,), lambda i: fn(X[i]), name="Y")
    s = te.create_schedule(Y.op)
    _, inner = s[Y].split(Y.op.axis[0], factor=lanes)
    s[Y].vectorize(inner)
    return tvm.build(s, [X, Y], target="llvm")


def _points(rng) -> np.ndarray:
    """Edge values, a dense grid over the interesting range, and random float32 bit patterns."""
    edges = np.array(
        [
            0.0,
            -0.0,
            np.inf,
            -np.inf,
            np.nan,
            1e-45,
            -1e-45,
            1e-38,
            3.4028235e38,
            -3.4028235e38,
            0.921875,
            -0.921875,
            2.0,
            -2.0,
            3.92,
            -3.92,
            3.9199998,
            0.625,
            9.02,
            1e-4,
            -1e-30,
        ],
        dtype=np.float32,
    )
    grid = np.linspace(-6, 6, N // 2, dtype=np.float32)
    bits = rng.integers(0, 2**32, size=N, dtype=np.uint64).astype(np.uint32).view(np.float32)
    bits = bits[np.isfinite(bits)]
    pts = np.concatenate([edges, grid, bits])
    return pts[: (pts.size // N) * N] if pts.size >= N else np.resize(pts, N)


def _ulps(got: np.ndarray, x: np.ndarray, ref) -> np.ndarray:
    """|got - f(x)| in units of the float32 ulp at the correctly rounded f(x)."""
    exact = np.array([ref(float(v)) for v in x], dtype=np.float64)
    rounded = exact.astype(np.float32)
    ulp = np.spacing(np.abs(rounded)).astype(np.float64)
    ulp = np.maximum(ulp, np.spacing(np.float32(0)))
    return np.abs(got.astype(np.float64) - exact) / ulp


@pytest.mark.parametrize(
    ("name", "te_fn", "ref", "max_ulps"),
    [("erf", te.erf, math.erf, 1.0), ("tanh", te.tanh, math.tanh, 2.0)],
)
def test_vector_function_accuracy(name, te_fn, ref, max_ulps):
    rng = np.random.default_rng(21)
    f = _vector_kernel(te_fn)
    x = np.resize(_points(rng), N).astype(np.float32)
    y = np.empty_like(x)
    f(x, y)
    finite = ~np.isnan(x)
    err = _ulps(y[finite], x[finite], ref)
    worst = int(np.argmax(err))
    assert err.max() <= max_ulps, (name, float(x[finite][worst]), float(y[finite][worst]))
    assert np.isnan(y[~finite]).all()
    # exact values at the ends of the range and the sign of zero
    z = np.zeros(N, np.float32)
    z[:6] = [np.inf, -np.inf, 0.0, -0.0, 50.0, -50.0]
    f(z, y)
    assert y[:6].tolist() == [1.0, -1.0, 0.0, -0.0, 1.0, -1.0]
    assert math.copysign(1.0, y[3]) == -1.0


def test_vector_erf_is_not_a_libm_call_per_lane():
    f = _vector_kernel(te.erf)
    ir_text = f.get_source("ll")
    assert "@erff" not in ir_text
    assert "<16 x float>" in ir_text


def test_gelu_vectorized_matches_numpy():
    from ansor_lab import topi

    X = te.placeholder((4, 1024), "float32", name="X")
    Y = topi.nn.gelu(X)
    s = te.create_schedule(Y.op)
    _, inner = s[Y].split(Y.op.axis[1], factor=16)
    s[Y].vectorize(inner)
    f = tvm.build(s, [X, Y], target="llvm")
    x = np.random.default_rng(0).normal(0, 3, size=(4, 1024)).astype(np.float32)
    y = np.empty_like(x)
    f(x, y)
    erf = np.vectorize(math.erf)
    want = 0.5 * x.astype(np.float64) * (1 + erf(x.astype(np.float64) / math.sqrt(2)))
    np.testing.assert_allclose(y, want, rtol=3e-7, atol=1e-7)
