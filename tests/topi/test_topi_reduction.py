"""Reductions (topi.sum/max/min/prod/all/any/argmax/argmin) against numpy."""

import numpy as np
import pytest

import ansor_lab as tvm
from ansor_lab import auto_scheduler, te, topi
from ansor_lab.errors import DSLError
from ansor_lab.topi import reduction as topi_reduction

CASES = [
    ((4, 5), 1, False),
    ((4, 5), 0, True),
    ((2, 3, 4), (0, 2), False),
    ((2, 3, 4), -1, True),
    ((3, 5), None, True),
    ((2, 3, 4), (), False),
]


@pytest.mark.parametrize(("shape", "axis", "keepdims"), CASES, ids=str)
@pytest.mark.parametrize("name", ["sum", "max", "min"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
def test_reduce(shape, axis, keepdims, name, dtype, check_op, rand):
    a = te.placeholder(shape, dtype, "a")
    x = rand(shape, dtype)
    out = getattr(topi, name)(a, axis=axis, keepdims=keepdims)
    assert out.op.tag == "comm_reduce"
    want = getattr(np, name)(x, axis=axis, keepdims=keepdims).astype(dtype)
    check_op([a, out], [x], want)


def test_full_reduction_without_keepdims_is_0d():
    a = te.placeholder((3, 4), "float32", "a")
    out = topi.sum(a)
    assert out.shape == ()
    assert [iv.dom.extent.value for iv in out.op.reduce_axis] == [3, 4]


def test_reduce_errors():
    a = te.placeholder((3, 4), "float32", "a")
    with pytest.raises(DSLError, match=r"topi.sum: axis 2 is out of range for a 2-D tensor"):
        topi.sum(a, axis=2)
    with pytest.raises(DSLError, match=r"names an axis twice"):
        topi.max(a, axis=(1, -1))


# -- prod, all, any ------------------------------------------------------------------------

#: odd and prime extents, negative axes, tuples, None, and the empty tuple (a copy)
MORE_CASES = [
    ((3, 7), 1, False),
    ((5, 3), -2, True),
    ((2, 3, 5), (0, -1), False),
    ((2, 3, 5), (2, 1), True),
    ((3, 5), None, False),
    ((2, 3, 5), None, True),
    ((2, 3, 4), (), False),
]


@pytest.mark.parametrize(("shape", "axis", "keepdims"), MORE_CASES, ids=str)
@pytest.mark.parametrize("dtype", ["float32", "int32", "float16"])
def test_prod(shape, axis, keepdims, dtype, check_op, rand):
    a = te.placeholder(shape, dtype, "a")
    # near 1 so a float16 product of 30 factors stays in range; int32 ones may wrap, and
    # wrap the same way in numpy (multiplication modulo 2**32 is exact in any order)
    x = rand(shape, dtype, -1, 1) if dtype == "int32" else rand(shape, dtype, 0.6, 1.4)
    out = topi.prod(a, axis=axis, keepdims=keepdims)
    wide = x.astype("int64" if dtype == "int32" else "float64")
    want = np.asarray(np.prod(wide, axis=axis, keepdims=keepdims)).astype(dtype)
    # float16 rounds after every one of up to 30 products
    check_op([a, out], [x], want, rtol=2e-2 if dtype == "float16" else None)


def test_prod_propagates_nan_and_zero(check_op):
    a = te.placeholder((3, 4), "float32", "a")
    x = np.array([[1, 2, np.nan, 3], [0, 5, 6, 7], [1, -1, 2, -2]], "float32")
    check_op([a, topi.prod(a, axis=1)], [x], np.prod(x, axis=1))


@pytest.mark.parametrize(("shape", "axis", "keepdims"), MORE_CASES, ids=str)
@pytest.mark.parametrize("name", ["all", "any"])
def test_all_any(shape, axis, keepdims, name, check_op):
    a = te.placeholder(shape, "bool", "a")
    # mostly true for all, mostly false for any, so both answers occur
    p = 0.8 if name == "all" else 0.2
    x = np.random.default_rng(1).random(shape) < p
    out = getattr(topi, name)(a, axis=axis, keepdims=keepdims)
    assert out.dtype == "bool"
    check_op([a, out], [x], np.asarray(getattr(np, name)(x, axis=axis, keepdims=keepdims)))


@pytest.mark.parametrize("name", ["all", "any"])
def test_all_any_of_constant_rows(name, check_op):
    a = te.placeholder((2, 5), "bool", "a")
    x = np.array([[True] * 5, [False] * 5])
    check_op([a, getattr(topi, name)(a, axis=-1)], [x], getattr(np, name)(x, axis=-1))


# -- argmax, argmin ------------------------------------------------------------------------


def arg_reference(name, x, axis, keepdims, select_last_index):
    """numpy's argmax/argmin over TVM's axes (None, an int or a tuple): the reduced axes
    moved last and flattened row-major; the last index by the reversed-array trick."""
    axes = range(x.ndim) if axis is None else np.atleast_1d(axis) % x.ndim
    axes = sorted(set(int(a) for a in axes))
    kept = [d for d in range(x.ndim) if d not in axes]
    rows = np.transpose(x, kept + axes).reshape([x.shape[d] for d in kept] + [-1])
    pick = getattr(np, name)
    if select_last_index:
        idx = rows.shape[-1] - 1 - pick(rows[..., ::-1], axis=-1)
    else:
        idx = pick(rows, axis=-1)
    if keepdims:
        idx = np.expand_dims(idx, tuple(axes))
    return np.asarray(idx, "int32")


ARG_CASES = [
    ((4, 7), 1, False),
    ((5, 3), 0, True),
    ((3, 5, 7), -1, False),
    ((3, 5, 7), -2, True),
    ((3, 5, 7), (0, 2), False),
    ((2, 3, 5), None, False),
    ((2, 3, 5), None, True),
    ((3, 1000), 1, False),  # rows of 512 or more are searched by chunks (a tail of 40)
    ((2, 2, 1024), -1, True),  # chunks that divide the row
    ((700,), 0, False),  # one row
]


@pytest.mark.parametrize(("shape", "axis", "keepdims"), ARG_CASES, ids=str)
@pytest.mark.parametrize("select_last_index", [False, True], ids=["first", "last"])
@pytest.mark.parametrize("name", ["argmax", "argmin"])
@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_arg_reduction(shape, axis, keepdims, select_last_index, name, dtype, check_op, rand):
    a = te.placeholder(shape, dtype, "a")
    x = rand(shape, dtype, -2, 2).round().astype(dtype)  # few distinct values: many ties
    out = getattr(topi, name)(a, axis, keepdims, select_last_index)
    assert out.dtype == "int32" and out.op.tag == "comm_reduce_idx"
    want = arg_reference(name, x, axis, keepdims, select_last_index)
    if axis is None or isinstance(axis, int):  # the reference agrees with numpy's own
        if not select_last_index:
            np.testing.assert_array_equal(want, getattr(np, name)(x, axis, keepdims=keepdims))
    check_op([a, out], [x], want)


SPECIAL_ROWS = [
    [1, 3, 3, 2, 3, -1, -1],  # ties of the maximum and of the minimum
    [4, 4, 4, 4, 4, 4, 4],  # all equal
    [1, np.nan, 2, np.nan, -1, 0, 1],  # NaNs: numpy answers the first (last: the last) NaN
    [np.nan] * 7,
    [-np.inf, np.inf, 0, np.inf, -np.inf, 2, 2],
    [-0.0, 0.0, -0.0, 0.0, 0.5, -0.5, np.nan],  # -0 == 0; a NaN at the end
]


@pytest.mark.parametrize("select_last_index", [False, True], ids=["first", "last"])
@pytest.mark.parametrize("name", ["argmax", "argmin"])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_arg_reduction_ties_and_nan(select_last_index, name, dtype, check_op):
    x = np.array(SPECIAL_ROWS, dtype)
    a = te.placeholder(x.shape, dtype, "a")
    want = arg_reference(name, x, 1, False, select_last_index)
    if not select_last_index:
        np.testing.assert_array_equal(want, getattr(np, name)(x, axis=1))
    if name == "argmax":
        assert list(want) == (
            [1, 0, 1, 0, 1, 6] if not select_last_index else [4, 6, 3, 6, 3, 6]
        ), "the rows no longer test what they say"
    check_op([a, getattr(topi, name)(a, axis=1, select_last_index=select_last_index)], [x], want)


@pytest.mark.parametrize("select_last_index", [False, True], ids=["first", "last"])
@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_arg_reduction_of_long_rows_finds_ties_and_nans_across_chunks(
    select_last_index, name, check_op
):
    # rows of 1000 are cut into chunks of 64 (the last one 40 long): extrema and NaNs on
    # the chunks' first and last elements, in the tail, and in several chunks at once
    n = 1000
    assert topi_reduction._chunk_length(n) == 64
    x = np.zeros((6, n), "float32")
    x[0, [63, 64, 999]] = 5.0  # ties of the maximum on both sides of a chunk boundary
    x[1, [0, 960, 999]] = -5.0  # the minimum at the first element and in the tail
    x[2, [300, 700]] = np.nan  # the first (last) NaN, in two chunks
    x[3, 961] = np.nan  # a NaN in the tail only
    x[3, 5] = 9.0
    x[4] = np.arange(n)[::-1]  # the maximum first, the minimum last
    x[5, [127, 128]] = [np.inf, -np.inf]
    a = te.placeholder(x.shape, "float32", "a")
    out = getattr(topi, name)(a, axis=1, select_last_index=select_last_index)
    stages = {st.op.name for st in te.create_schedule(out.op).stages}
    assert stages >= {f"T_{name}_chunk", f"T_{name}_chunk_{name[3:]}"}, stages
    want = arg_reference(name, x, 1, False, select_last_index)
    if not select_last_index:
        np.testing.assert_array_equal(want, getattr(np, name)(x, axis=1))
    check_op([a, out], [x], want)


def test_arg_reduction_over_no_axis_is_zero(check_op):
    a = te.placeholder((2, 3), "float32", "a")
    x = np.arange(6, dtype="float32").reshape(2, 3)
    check_op([a, topi.argmax(a, axis=())], [x], np.zeros((2, 3), "int32"))


def _argmax_policy(shape):
    """The argmax over rows of ``shape``, its search policy (a small first population)."""
    a = te.placeholder(shape, "float32", "a")
    out = topi.argmax(a, axis=1)
    task = auto_scheduler.SearchTask(
        compute_dag=auto_scheduler.ComputeDAG([a, out]), target="llvm -num-cores=1"
    )
    params = {"population": 16, "generations": 1, "sample_init_min_population": 8}
    return out, auto_scheduler.SketchPolicy(task, params=params, seed=0, verbose=0)


def _population_matches_numpy(policy, out, x):
    """Every program of the first population, built and compared with numpy on ``x``."""
    population = policy.sample_initial_population()
    assert len(population) == 8
    want = np.argmax(x, axis=1).astype("int32")
    for cand in population:
        sch = policy.space.schedule(cand)
        got = np.full(out.shape, 99, "int32")
        tvm.build(sch.mod, target="llvm")(x, got)
        np.testing.assert_array_equal(got, want, err_msg=str(sch.trace))
    return population


def test_argmax_search_population_matches_numpy():
    # wide enough rows that both reductions get rfactor sketches, which split the index
    # reduction; every sampled program is built and compared with numpy
    out, policy = _argmax_policy((3, 256))
    x = np.random.default_rng(0).integers(-3, 4, (3, 256)).astype("float32")
    x[1, [7, 200]] = np.nan  # the first NaN wins
    x[2] = 1.0  # all equal: index 0
    population = _population_matches_numpy(policy, out, x)
    assert len({cand.sketch for cand in population}) > 1


def test_a_long_row_argmax_search_vectorizes_the_chunks_and_matches_numpy():
    # rows of 600: chunks of 64, the last 24 long; the chunks' maxima read x[i, c * 64 + k]
    # and the rescan x[i, at[i] * 64 + k]: both are contiguous in k, so both get the
    # vector-lanes sketch; every sampled program is built and compared with numpy
    out, policy = _argmax_policy((3, 600))
    names = {s.describe() for s in policy.sketches}
    assert "T_argmax_chunk_max: rfactor(k, vector lanes)" in names, names
    assert "T_argmax: rfactor(kk, vector lanes)" in names, names
    x = np.random.default_rng(1).integers(-3, 4, (3, 600)).astype("float32")
    x[0, [100, 599]] = 7.0  # the first of two maxima
    x[1, [590, 63]] = np.nan  # the first NaN wins, in an earlier chunk
    x[2, 580] = 9.0  # the maximum in the tail
    assert list(np.argmax(x, axis=1)) == [100, 63, 580]
    _population_matches_numpy(policy, out, x)


def test_new_reduction_errors():
    scalar = te.placeholder((), "float32", "s")
    for op in (topi.prod, topi.argmax, topi.argmin):
        with pytest.raises(DSLError, match=r"data is 0-D; .*Pass a tensor of at least one"):
            op(scalar)
    a = te.placeholder((3, 4), "float32", "a")
    with pytest.raises(DSLError, match=r"topi.argmax: axis -3 is out of range .* in \[-2, 1\]"):
        topi.argmax(a, axis=-3)
    with pytest.raises(DSLError, match=r"topi.prod: axis 2 is out of range"):
        topi.prod(a, axis=(0, 2))
    with pytest.raises(DSLError, match=r"topi.argmin: axis \(0, -2\) names an axis twice"):
        topi.argmin(a, axis=(0, -2))
    flags = te.placeholder((3, 4), "bool", "flags")
    for name in ("prod", "argmax", "argmin"):
        with pytest.raises(DSLError, match=rf"topi.{name} of a bool tensor: cast it with topi"):
            getattr(topi, name)(flags)
    for name in ("all", "any"):
        with pytest.raises(
            DSLError, match=rf"topi.{name} expects a bool tensor, got float32 .*compare it first"
        ):
            getattr(topi, name)(a, axis=1)
    bool_scalar = te.placeholder((), "bool", "b")
    with pytest.raises(DSLError, match=r"topi.all: data is 0-D"):
        topi.all(bool_scalar)
