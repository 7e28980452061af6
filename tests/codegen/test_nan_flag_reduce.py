"""Min/max reduction nests emitted with their NaN test in a flag (``nan_flag_reduce``):
the same results as numpy, NaN included wherever it enters (first, last, in the initial
value), for max and min, either operand order, every float dtype; nests that do not fit
keep ``llvm.maximum``."""

from __future__ import annotations

import numpy as np
import pytest

import ansor_lab as tvm
from ansor_lab import te, tir, topi
from ansor_lab.codegen.access import vector_chunks
from ansor_lab.script import from_source


def _pool(dtype: str = "float32", parallel: bool = False):
    x = te.placeholder((1, 4, 12, 12), name="x", dtype=dtype)
    out = topi.nn.pool2d(x, (3, 3), (2, 2), (1, 1), (1, 1, 1, 1), "max")
    sch = tir.Schedule(te.create_prim_func([x, out]))
    if parallel:
        sch.parallel(sch.get_loops(sch.get_block(out.op.name))[1])
    return sch


def _np_pool(x: np.ndarray) -> np.ndarray:
    p = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)), constant_values=-np.inf)
    win = np.lib.stride_tricks.sliding_window_view(p, (3, 3), axis=(2, 3))[:, :, ::2, ::2]
    return win.max(axis=(-2, -1))


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("parallel", [False, True])
def test_a_max_pool_propagates_every_nan_like_numpy(dtype, parallel):
    f = tvm.build(_pool(dtype, parallel).mod, target="llvm -num-cores=2")
    assert "max reduction, NaN test in a flag" in f.loop_report()
    ll = f.get_source("ll-unopt")
    assert "nan_flag" in ll and "fcmp ord" in ll and "llvm.maximum" not in ll
    x = np.random.default_rng(0).standard_normal((1, 4, 12, 12)).astype(dtype)
    x[0, 0, 0, 0] = np.nan  # the first element of a window (and the only one of a row)
    x[0, 1, 4, 5] = np.nan  # the last element of one window, the first of the next
    x[0, 2, 11, 11] = np.nan  # the window at the corner
    x[0, 3, 6, :] = np.inf
    x[0, 3, 8, :3] = -np.inf
    out = np.zeros((1, 4, 6, 6), dtype)
    f(x, out)
    want = _np_pool(x)
    np.testing.assert_array_equal(out, want)  # NaN where numpy has NaN, nowhere else
    assert np.isnan(out).sum() == np.isnan(want).sum() > 3


def _row(kind: str, swapped: bool, init: str, value: str = "A[i, k]"):
    """S[i] = init; for k: S[i] = op(S[i], value) (or op(value, S[i])), as TVMScript."""
    step = f"T.{kind}({value}, S[i])" if swapped else f"T.{kind}(S[i], {value})"
    src = f"""
@T.prim_func
def main(A: T.Buffer((5, 16), "float32"), S: T.Buffer((5,), "float32")):
    for i in range(5):
        S[i] = T.float32({init})
        for k in range(16):
            S[i] = {step}
"""
    return from_source(src)


@pytest.mark.parametrize("kind", ["max", "min"])
@pytest.mark.parametrize("swapped", [False, True])
@pytest.mark.parametrize("init_nan", [False, True])
def test_either_operand_order_and_a_nan_initial_value(kind, swapped, init_nan):
    f = tvm.build(_row(kind, swapped, "'nan'" if init_nan else "0.5"), target="llvm")
    assert f"k (extent 16): serial -> {kind} reduction, NaN test in a flag" in f.loop_report()
    a = np.random.default_rng(1).uniform(-1, 1, (5, 16)).astype("float32")
    a[1, 0] = a[2, 15] = a[3, 7] = np.nan
    out = np.zeros(5, "float32")
    f(a, out)
    init = np.full((5, 1), np.nan if init_nan else 0.5, "float32")
    want = (np.max if kind == "max" else np.min)(np.concatenate([init, a], axis=1), axis=1)
    np.testing.assert_array_equal(out, want)


def test_nests_that_do_not_fit_keep_the_propagating_max():
    # the value reads the running result: a stale non-NaN would leak into it
    f = tvm.build(_row("max", False, "0.0", "A[i, k] + S[i] * T.float32(0.5)"), target="llvm")
    assert "NaN test in a flag" not in f.loop_report()
    assert "llvm.maximum" in f.get_source("ll-unopt")
    a = np.random.default_rng(2).uniform(-1, 1, (5, 16)).astype("float32")
    a[3, 4] = np.nan
    out = np.zeros(5, "float32")
    f(a, out)
    want = np.zeros(5, "float32")
    for r in range(5):
        for c in range(16):
            want[r] = np.maximum(want[r], a[r, c] + want[r] * np.float32(0.5))
    np.testing.assert_array_equal(out, want)


def test_a_different_element_per_iteration_is_not_a_reduction():
    x = te.placeholder((64,), name="x")
    y = te.placeholder((64,), name="y")
    z = te.compute((64,), lambda i: te.max(x[i], y[i]), name="z")
    f = tvm.build(tir.Schedule(te.create_prim_func([x, y, z])).mod, target="llvm")
    assert "NaN test in a flag" not in f.loop_report()
    a, b = np.arange(64, dtype="float32"), np.full(64, 10, "float32")
    a[5] = np.nan
    out = np.zeros(64, "float32")
    f(a, b, out)
    np.testing.assert_array_equal(out, np.maximum(a, b))


def test_fast_math_keeps_its_own_max():
    f = tvm.build(_pool().mod, target="llvm", fast_math=True)
    assert "NaN test in a flag" not in f.loop_report()


def _lanes(kind: str, rows: int, cols: int, lanes: int, dtype: str = "float32"):
    """A row max (min) with partial results in ``lanes`` vector lanes, as the search's
    vector rfactor leaves it: ``for ko: for ki (vectorized): part[i, ki] = op(part, x)``,
    ``cols`` not a multiple of ``lanes`` giving a masked last round."""
    x = te.placeholder((rows, cols), name="x", dtype=dtype)
    k = te.reduce_axis((0, cols), name="k")
    red = te.max if kind == "max" else te.min
    out = te.compute((rows,), lambda i: red(x[i, k], axis=k), name="out")
    sch = tir.Schedule(te.create_prim_func([x, out]))
    _, ki = sch.split(sch.get_loops(sch.get_block("out"))[1], [None, lanes])
    rf = sch.rfactor(ki, 1)
    i, ki, ko = sch.get_loops(rf)
    sch.reorder(i, ko, ki)
    sch.vectorize(ki)
    return sch


@pytest.mark.parametrize("kind", ["max", "min"])
@pytest.mark.parametrize(("cols", "lanes"), [(96, 32), (100, 16), (128, 64)])
def test_partial_results_in_vector_lanes_propagate_nan_from_any_lane(kind, cols, lanes):
    f = tvm.build(_lanes(kind, 6, cols, lanes).mod, target="llvm")
    assert f"{kind} reduction, NaN test in a flag" in f.loop_report()
    x = np.random.default_rng(1).standard_normal((6, cols)).astype("float32")
    x[1, 0] = np.nan  # the first lane of the first round
    x[2, cols - 1] = np.nan  # the last element: the masked round where cols % lanes
    x[3, lanes + 3] = x[3, 5] = np.nan  # two NaN in two lanes
    x[4, :] = -np.inf if kind == "max" else np.inf  # a row of the neutral value
    x[5, lanes - 1] = np.inf if kind == "max" else -np.inf
    out = np.zeros(6, "float32")
    f(x, out)
    want = x.max(axis=1) if kind == "max" else x.min(axis=1)
    np.testing.assert_array_equal(out, want)
    assert np.isnan(out).tolist() == [False, True, True, True, False, False]


def test_vector_lanes_in_double_and_half_keep_every_nan():
    for dtype in ("float64", "float16"):
        f = tvm.build(_lanes("max", 3, 48, 16, dtype).mod, target="llvm")
        x = np.random.default_rng(2).standard_normal((3, 48)).astype(dtype)
        x[0, 47] = np.nan
        out = np.zeros(3, dtype)
        f(x, out)
        np.testing.assert_array_equal(out, x.max(axis=1))


def test_a_window_nest_around_a_row_vector_in_chunks_keeps_every_nan():
    # the windows outside a 26-wide output row, a guard (the padding) inside: the row is
    # emitted in chunks (16 + 10 with AVX-512's 16 lanes, 16 + 8 + 2 with AVX2's 8), each
    # with a mask flag of its own width
    x = te.placeholder((1, 3, 20, 52), name="x")
    pool = topi.nn.pool2d(x, (3, 3), (2, 2), (1, 1), (1, 1, 1, 1), "max")
    sch = tir.Schedule(te.create_prim_func([x, pool]))
    sch.compute_inline(sch.get_block("pad_temp"))
    n, c, h, w, r0, r1 = sch.get_loops(sch.get_block(pool.op.name))
    sch.reorder(n, c, h, r0, r1, w)
    sch.vectorize(w)
    f = tvm.build(sch.mod, target="llvm")
    lanes = tvm.target.Target("llvm").vector_bytes // 4
    chunks = "+".join(str(n) for _, n in vector_chunks(26, lanes))
    assert chunks == ("16+10" if lanes >= 16 else "16+8+2")
    assert f"chunks={chunks}" in f.loop_report() and "NaN test in a flag" in f.loop_report()
    a = np.random.default_rng(4).standard_normal((1, 3, 20, 52)).astype("float32")
    a[0, 0, 5, 51] = np.nan  # read by the last output column only: the last chunk
    a[0, 1, 0, 0] = np.nan  # the first column, the first row
    a[0, 2, 10, 7] = np.nan
    out = np.empty((1, 3, 10, 26), "float32")
    f(a, out)
    padded = np.pad(a, ((0, 0), (0, 0), (1, 1), (1, 1)), constant_values=-np.inf)
    win = np.lib.stride_tricks.sliding_window_view(padded, (3, 3), axis=(2, 3))[:, :, ::2, ::2]
    want = win.max(axis=(-2, -1))
    np.testing.assert_array_equal(out, want)
    assert np.isnan(out).sum() == np.isnan(want).sum() == 5
