"""A copy whose vector runs across rows of its source (the conv sketch's weight panel, a
plain transpose) is done as row loads, register shuffles and column stores instead of a
gather; nests it does not fit keep the generic path. Every result is checked exactly."""

from __future__ import annotations

import numpy as np
import pytest

import ansor_lab as tvm
from ansor_lab import te, tir
from ansor_lab.codegen.transpose_copy import transpose_rounds


def _panel(lanes: int, c_in: int, dtype: str = "float32", parallel: bool = False):
    """panel[f1, c, y, x, f3] = kernel[f1 * lanes + f3, c, y, x], f3 vectorized."""
    k = te.placeholder((2 * lanes, c_in, 3, 3), name="kernel", dtype=dtype)
    p = te.compute(
        (2, c_in, 3, 3, lanes), lambda f1, c, y, x, f3: k[f1 * lanes + f3, c, y, x], name="panel"
    )
    sch = tir.Schedule(te.create_prim_func([k, p]))
    f1, _, _, _, f3 = sch.get_loops(sch.get_block("panel"))
    sch.vectorize(f3)
    if parallel:
        sch.parallel(f1)
    return sch


def _panel_reference(k: np.ndarray, lanes: int) -> np.ndarray:
    f, c = k.shape[:2]
    return k.reshape(f // lanes, lanes, c, 3, 3).transpose(0, 2, 3, 4, 1)


def _data(shape, dtype: str, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dtype.startswith("int"):
        return rng.integers(-100, 100, size=shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


@pytest.mark.parametrize(
    "lanes,dtype",
    [
        (4, "float32"),
        (8, "float32"),
        (16, "float32"),
        (8, "float64"),
        (16, "int32"),
        (16, "float16"),
        (16, "int8"),
    ],
)
def test_weight_panel_copy_is_transposed_in_registers(lanes, dtype):
    f = tvm.build(_panel(lanes, c_in=16, dtype=dtype).mod, target="llvm")
    report = f.loop_report()
    assert f"f3 (extent {lanes}): vectorized -> transposed copy {lanes}x{lanes}" in report
    assert f"collapsed=c*y*x, blocks={16 * 9 // lanes}" in report
    assert "gather" not in f.get_source("ll")
    k = _data((2 * lanes, 16, 3, 3), dtype)
    out = np.zeros((2, 16, 3, 3, lanes), dtype)
    f(k, out)
    np.testing.assert_array_equal(out, _panel_reference(k, lanes))


def test_transposed_copy_inside_a_parallel_loop():
    f = tvm.build(_panel(16, c_in=32, parallel=True).mod, target="llvm -num-cores=2")
    assert "transposed copy 16x16" in f.loop_report()
    k = _data((32, 32, 3, 3), "float32", seed=1)
    out = np.zeros((2, 32, 3, 3, 16), "float32")
    f(k, out)
    np.testing.assert_array_equal(out, _panel_reference(k, 16))


def test_plain_transpose_with_the_row_loop_inside():
    n, lanes = 48, 16
    A = te.placeholder((n, n), name="A")
    B = te.compute((n, n), lambda i, j: A[j, i], name="B")
    sch = tir.Schedule(te.create_prim_func([A, B]))
    i, j = sch.get_loops(sch.get_block("B"))
    jo, ji = sch.split(j, [None, lanes])
    sch.reorder(jo, i, ji)  # i walks A's rows contiguously, ji runs down a column of A
    sch.vectorize(ji)
    f = tvm.build(sch.mod, target="llvm")
    assert (
        "j_1 (extent 16): vectorized -> transposed copy 16x16 [collapsed=i, blocks=3]"
        in f.loop_report()
    )
    a = _data((n, n), "float32")
    b = np.zeros_like(a)
    f(a, b)
    np.testing.assert_array_equal(b, a.T)


@pytest.mark.parametrize("case", ["ragged", "two_lanes", "uneven", "arithmetic", "outer_only"])
def test_nests_that_do_not_fit_keep_the_generic_path(case):
    lanes, c_in, dtype = 16, 16, "float32"
    if case == "ragged":
        c_in = 1  # 9 collapsed iterations: not one whole block of 16
    elif case == "two_lanes":
        lanes = 2
    elif case == "uneven":
        lanes = 24  # 24 floats: one and a half 16-lane registers
    if case in ("ragged", "two_lanes", "uneven"):
        sch = _panel(lanes, c_in, dtype)
        want = _panel_reference
    else:
        k = te.placeholder((2 * lanes, c_in, 3, 3), name="kernel")
        if case == "arithmetic":  # not a plain copy
            p = te.compute(
                (2, c_in, 3, 3, lanes),
                lambda f1, c, y, x, f3: k[f1 * lanes + f3, c, y, x] * 2.0,
                name="panel",
            )
        else:  # x before y: the source is not walked contiguously
            p = te.compute(
                (2, c_in, 3, 3, lanes),
                lambda f1, c, x, y, f3: k[f1 * lanes + f3, c, y, x],
                name="panel",
            )
        sch = tir.Schedule(te.create_prim_func([k, p]))
        sch.vectorize(sch.get_loops(sch.get_block("panel"))[-1])

        def want(a, n):
            r = _panel_reference(a, n)
            return r * np.float32(2.0) if case == "arithmetic" else r.transpose(0, 1, 3, 2, 4)

    f = tvm.build(sch.mod, target="llvm")
    assert "transposed copy" not in f.loop_report()
    k_np = _data((2 * lanes, c_in, 3, 3), dtype, seed=2)
    out = np.zeros((2, c_in, 3, 3, lanes), dtype)
    f(k_np, out)
    np.testing.assert_array_equal(out, want(k_np, lanes))


@pytest.mark.parametrize("c_in,dtype", [(5, "float32"), (3, "float64"), (7, "int8")])
def test_a_ragged_walk_is_whole_blocks_then_a_tail(c_in, dtype):
    """45 collapsed steps (c_in=5) in blocks of 16: two blocks, then 13 steps copied
    element by element."""
    lanes = 16 if dtype != "float64" else 8
    f = tvm.build(_panel(lanes, c_in, dtype).mod, target="llvm")
    steps = c_in * 9
    want = f"blocks={steps // lanes}, tail={steps % lanes}"
    assert f"transposed copy {lanes}x{lanes} [collapsed=c*y*x, {want}]" in f.loop_report()
    k = _data((2 * lanes, c_in, 3, 3), dtype, seed=4)
    out = np.zeros((2, c_in, 3, 3, lanes), dtype)
    f(k, out)
    np.testing.assert_array_equal(out, _panel_reference(k, lanes))


@pytest.mark.parametrize("vector", [16, 32])
def test_nchw_to_nhwc_with_rows_in_parallel(vector):
    """NCHW -> NHWC with the image rows in parallel: each thread walks one row of 56
    pixels (three 16-step blocks and a tail of 8). Before the tail, a walk that was not
    whole blocks fell back to gathers, and two threads ran slower than one serial
    transposed copy (88.8 against 63.8 us, 256 x 56 x 56)."""
    x = te.placeholder((1, 64, 56, 56), name="x")
    y = te.compute((1, 56, 56, 64), lambda n, h, w, c: x[n, c, h, w], name="y")
    s = te.create_schedule(y.op)
    n, h, w, c = s[y].op.axis
    _, ci = s[y].split(c, factor=vector)
    s[y].parallel(s[y].fuse(n, h))
    s[y].vectorize(ci)
    f = tvm.build(s, [x, y], "llvm -num-cores=2")
    groups = f", column groups={vector // 16}" if vector > 16 else ""
    assert f"transposed copy 16x16 [collapsed=w, blocks=3, tail=8{groups}]" in f.loop_report()
    a = _data((1, 64, 56, 56), "float32", seed=5)
    out = np.zeros((1, 56, 56, 64), "float32")
    f(a, out)
    np.testing.assert_array_equal(out, a.transpose(0, 2, 3, 1))


@pytest.mark.parametrize("n", [2, 4, 8, 16, 32, 64])
def test_shuffle_rounds_turn_rows_into_columns(n):
    m = np.arange(n * n).reshape(n, n)
    rows = [m[j] for j in range(n)]
    for rnd in transpose_rounds(n):
        new = list(rows)
        for j, p, lo, hi in rnd:
            both = np.concatenate([rows[j], rows[p]])
            new[j], new[p] = both[lo], both[hi]
        rows = new
    np.testing.assert_array_equal(np.array(rows), m.T)
    assert len(transpose_rounds(n)) == int(np.log2(n))


def test_a_loop_inside_the_walk_is_run_outside_it():
    """A 64-channel panel copied 16 channels at a time: the loop over the four vectors
    sits inside the c/y/x walk in the nest, and becomes an outer loop of the copy."""
    k = te.placeholder((64, 16, 3, 3), name="kernel")
    p = te.compute((16, 3, 3, 64), lambda c, y, x, f: k[f, c, y, x], name="panel")
    sch = tir.Schedule(te.create_prim_func([k, p]))
    *_, f = sch.get_loops(sch.get_block("panel"))
    _, fi = sch.split(f, [4, 16])
    sch.vectorize(fi)
    fn = tvm.build(sch.mod, target="llvm")
    assert (
        "f_1 (extent 16): vectorized -> transposed copy 16x16 [collapsed=c*y*x, blocks=9]"
        in fn.loop_report()
    )
    k_np = _data((64, 16, 3, 3), "float32", seed=3)
    out = np.zeros((16, 3, 3, 64), "float32")
    fn(k_np, out)
    np.testing.assert_array_equal(out, k_np.transpose(1, 2, 3, 0))


def test_only_nests_that_write_each_element_once_are_reordered():
    from ansor_lab.codegen.transpose_copy import _injective

    assert _injective([(1, 16), (16, 4), (64, 9)])
    assert _injective([(16, 4), (1, 16), (64, 1), (0, 1)])  # unit loops do not count
    assert not _injective([(1, 16), (8, 4)])  # rows overlap
    assert not _injective([(1, 16), (0, 3)])  # the same element written three times


def _dense_panel(width: int, kind: str, dtype: str = "float32"):
    """The dense sketch's weight panel: ``panel[k, j] = w[j0 * width + j, k]``."""
    w = te.placeholder((2 * width, 64), name="w", dtype=dtype)
    p = te.compute((2, 64, width), lambda j0, k, j: w[j0 * width + j, k], name="panel")
    sch = tir.Schedule(te.create_prim_func([w, p]))
    if kind == "vectorized":
        sch.vectorize(sch.get_loops(sch.get_block("panel"))[-1])
    return sch, w


@pytest.mark.parametrize(
    "width,kind,dtype,lanes,groups",
    [
        (48, "vectorized", "float32", 16, 3),  # three registers side by side
        (16, "vectorized", "float64", 8, 2),  # 16 doubles: two 64-byte registers
        (32, "serial", "float32", 16, 2),  # left unvectorized by the schedule
        (8, "serial", "float32", 8, 1),
        (256, "serial", "float32", 16, 16),
    ],
)
def test_panels_wider_than_a_register_or_serial_are_copied_in_column_groups(
    width, kind, dtype, lanes, groups
):
    sch, _ = _dense_panel(width, kind, dtype)
    f = tvm.build(sch.mod, target="llvm")
    detail = f"collapsed=k, blocks={64 // lanes}"
    detail += f", column groups={groups}" if groups > 1 else ""
    assert (
        f"j (extent {width}): {kind} -> transposed copy {lanes}x{lanes} [{detail}]"
        in f.loop_report()
    )
    w_np = _data((2 * width, 64), dtype, seed=4)
    out = np.zeros((2, 64, width), dtype)
    f(w_np, out)
    np.testing.assert_array_equal(out, w_np.reshape(2, width, 64).transpose(0, 2, 1))


def test_a_serial_copy_with_too_many_column_groups_stays_a_loop():
    sch, _ = _dense_panel(272, "serial")  # 17 groups of 16: past MAX_GROUPS
    f = tvm.build(sch.mod, target="llvm")
    assert "transposed copy" not in f.loop_report()
    w_np = _data((544, 64), "float32", seed=5)
    out = np.zeros((2, 64, 272), "float32")
    f(w_np, out)
    np.testing.assert_array_equal(out, w_np.reshape(2, 272, 64).transpose(0, 2, 1))
