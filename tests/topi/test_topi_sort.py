"""topi.sort, topi.argsort and topi.topk against numpy's stable sort.

TVM has no ``topi.testing`` reference for them (its tests call ``np.sort`` /
``np.argsort``); the references here are ``np.sort`` and ``np.argsort(kind="stable")``
(ascending, NaN last) and, for descending, the stable reverse order with NaN first (see
``ansor_lab.topi.sort``). Values are small integers, so equal values meet and the
stable index order is checked.
"""

from __future__ import annotations

import importlib
import re

import numpy as np
import pytest
from workloads import FAST_PARAMS, fast_options

import ansor_lab as tvm
from ansor_lab import auto_scheduler, te, topi
from ansor_lab.dsl.reference import evaluate
from ansor_lab.errors import DSLError, OutOfScopeError


def _ties(rng, shape, dtype="float32"):
    """Small integers (-3..3) in ``dtype``: many equal values in every row."""
    return rng.integers(-3, 4, size=shape).astype(dtype)


def order_ref(x: np.ndarray, axis: int, ascend: bool) -> np.ndarray:
    """The stable order along ``axis``: ascending with NaN last (``np.argsort``), or
    descending with NaN first; equal values in index order either way."""
    if ascend:
        return np.argsort(x, axis=axis, kind="stable")
    first = np.argsort(-x.astype("float64"), axis=axis, kind="stable")  # NaN last
    nan = np.isnan(x) if x.dtype.kind == "f" else np.zeros(x.shape, bool)
    nan_first = np.argsort(~np.take_along_axis(nan, first, axis), axis=axis, kind="stable")
    return np.take_along_axis(first, nan_first, axis)


def topk_ref(x, k, axis, ascend, dtype):
    n = x.shape[axis]
    idx = np.take(order_ref(x, axis, ascend), range(k if k >= 1 else n), axis=axis)
    return np.take_along_axis(x, idx, axis), idx.astype(dtype)


def test_the_descending_reference_is_numpy_reversed_on_distinct_values():
    x = np.random.default_rng(0).permutation(12).reshape(3, 4).astype("float32")
    assert np.array_equal(order_ref(x, 1, False), np.argsort(x, 1)[:, ::-1])
    assert np.array_equal(order_ref(x, 1, False), np.argsort(-x, 1, kind="stable"))


@pytest.mark.parametrize(
    "shape,axis", [((17,), 0), ((5, 13), 1), ((5, 13), 0), ((3, 7, 4), 1), ((2, 3, 9), -1)]
)
@pytest.mark.parametrize("ascend", [True, False])
def test_sort_and_argsort_match_numpy(shape, axis, ascend, check_op):
    x = _ties(np.random.default_rng(len(shape) + axis), shape)
    data = te.placeholder(shape, "float32", "data")
    s = topi.sort(data, axis=axis, is_ascend=ascend)
    a = topi.argsort(data, axis=axis, is_ascend=ascend)  # TVM's default dtype: float32
    order = order_ref(x, axis, ascend)
    want = [np.take_along_axis(x, order, axis), order.astype("float32")]
    check_op([data, s, a], [x], want, rtol=0, atol=0)


@pytest.mark.parametrize("dtype", ["int32", "int8", "int64", "float64", "bool"])
def test_sort_dtypes(dtype, check_op):
    rng = np.random.default_rng(3)
    x = rng.integers(0, 2, (4, 11)).astype(dtype) if dtype == "bool" else _ties(rng, (4, 11), dtype)
    data = te.placeholder(x.shape, dtype, "data")
    for ascend in (True, False):
        order = order_ref(x.astype("int32") if dtype == "bool" else x, 1, ascend)
        outs = [
            topi.sort(data, is_ascend=ascend),
            topi.argsort(data, is_ascend=ascend, dtype="int32"),
        ]
        want = [np.take_along_axis(x, order, 1), order.astype("int32")]
        check_op([data, *outs], [x], want, rtol=0, atol=0)


def test_nan_inf_and_signed_zero():
    # NaN above +inf: last ascending, first descending; -0.0 == 0.0 keep index order, and
    # values are read, not summed: -0.0 stays -0.0
    x = np.array(
        [[np.nan, 1, -np.inf, np.inf, -0.0, 0.0, np.nan, 1, -1, 0.0, -0.0]], dtype="float32"
    )
    data = te.placeholder(x.shape, "float32", "data")
    outs = [
        topi.sort(data),
        topi.argsort(data, dtype="int32"),
        topi.sort(data, is_ascend=False),
        topi.argsort(data, is_ascend=False, dtype="int32"),
    ]
    f = tvm.build(te.create_schedule([o.op for o in outs]), [data, *outs], "llvm")
    got = [np.full(o.shape, 7, o.dtype) for o in outs]
    f(x, *got)
    up = [2, 8, 4, 5, 9, 10, 1, 7, 3, 0, 6]
    down = [0, 6, 3, 1, 7, 4, 5, 9, 10, 8, 2]
    assert got[1].tolist() == [up] == np.argsort(x, 1, kind="stable").tolist()
    assert got[3].tolist() == [down] == order_ref(x, 1, False).tolist()
    for values, order in ((got[0], up), (got[2], down)):
        want = x[:, order]
        assert np.array_equal(values, want, equal_nan=True)
        assert np.array_equal(np.signbit(values), np.signbit(want))  # -0.0 where it was
    np.testing.assert_array_equal(got[0], np.sort(x, 1))


@pytest.mark.parametrize(
    "shape,axis,k",
    [((13,), 0, 4), ((5, 9), 1, 1), ((5, 9), 0, 0), ((3, 8, 4), 1, -1), ((3, 8, 4), -1, 4)],
)
@pytest.mark.parametrize("ascend", [False, True])
def test_topk_matches_numpy(shape, axis, k, ascend, check_op):
    x = _ties(np.random.default_rng(k + 5), shape)
    x.flat[::7] = np.nan
    data = te.placeholder(shape, "float32", "data")
    values, indices = topi.topk(data, k, axis=axis, is_ascend=ascend)
    assert indices.dtype == "int64"  # TVM's default
    check_op(
        [data, values, indices], [x], list(topk_ref(x, k, axis, ascend, "int64")), rtol=0, atol=0
    )


@pytest.mark.parametrize("ret_type", ["values", "indices"])
@pytest.mark.parametrize("dtype", ["int32", "float32"])
def test_topk_ret_types_and_dtypes(ret_type, dtype, check_op):
    x = _ties(np.random.default_rng(1), (4, 10), "int32")
    data = te.placeholder(x.shape, "int32", "data")
    out = topi.topk(data, 3, axis=1, ret_type=ret_type, dtype=dtype)
    assert isinstance(out, te.Tensor)
    values, indices = topk_ref(x, 3, 1, False, dtype)
    check_op([data, out], [x], values if ret_type == "values" else indices, rtol=0, atol=0)
    both = topi.topk(data, 3, axis=1, dtype=dtype)
    assert isinstance(both, list) and [t.dtype for t in both] == ["int32", dtype]


def test_argsort_is_two_reductions_and_sort_reads_the_values():
    data = te.placeholder((4, 6), "float32", "data")
    a = topi.argsort(data)
    assert a.name == "argsort_index" and a.dtype == "float32"
    assert [t.name for t in a.op.input_tensors] == ["argsort_rank"]
    s = topi.sort(data)
    assert s.name == "sort_values" and s.dtype == "float32"
    assert sorted(t.name for t in s.op.input_tensors) == ["data", "sort_index"]


@pytest.mark.parametrize(
    ("k", "stage", "inputs"),
    [
        (4, "topk_rank", lambda rng: _ties(rng, (3, 12))),  # 4 k > n: the ranks
        (2, "topk_round1_index", lambda rng: _special(rng, (3, 12), "float32")),  # rounds
    ],
)
def test_topk_tunes_and_equals_numpy(k, stage, inputs, tmp_path):
    data = te.placeholder((3, 12), "float32", "data")
    values, indices = topi.topk(data, k)
    assert stage in _stage_names(values, indices)
    task = auto_scheduler.SearchTask(
        compute_dag=auto_scheduler.ComputeDAG([data, values, indices]),
        target="llvm -num-cores=1",
    )
    policy = auto_scheduler.SketchPolicy(task, params=dict(FAST_PARAMS), seed=0, verbose=0)
    log = str(tmp_path / "topk.json")
    opts = fast_options(log, 4, 4)  # check_correctness: each measured program vs reference
    result = task.tune(opts, search_policy=policy)
    assert result.stats.trials == 4 and result.stats.errors == 0
    sch, args = task.apply_best(log)
    f = tvm.build(sch, args, "llvm")
    x = inputs(np.random.default_rng(k))
    got = [np.full((3, k), 7, "float32"), np.full((3, k), -1, "int64")]
    f(x, *got)
    want = topk_ref(x, k, 1, False, "int64")
    np.testing.assert_array_equal(got[1], want[1])
    assert got[0].tobytes() == want[0].tobytes()  # read, never computed: NaN bits too


def test_bad_arguments_say_what_to_write():
    data = te.placeholder((3, 5), "float32", "data")
    with pytest.raises(DSLError, match=r"topi\.sort: axis 2 is out of range for a 2-D tensor"):
        topi.sort(data, axis=2)
    with pytest.raises(DSLError, match=r"topi\.argsort: axis -3 is out of range"):
        topi.argsort(data, axis=-3)
    with pytest.raises(DSLError, match=re.escape("topi.topk: ret_type 'value' is not one of")):
        topi.topk(data, ret_type="value")
    with pytest.raises(DSLError, match=re.escape("topi.topk: k=6 is larger than axis 1 of 5")):
        topi.topk(data, 6)
    with pytest.raises(DSLError, match="needs a constant int k"):
        topi.topk(data, te.placeholder((1,), "int32", "k"))
    with pytest.raises(OutOfScopeError, match=r"topi\.argsort: valid_count is not provided"):
        topi.argsort(data, valid_count=te.placeholder((3,), "int32", "vc"))
    with pytest.raises(DSLError, match=r"topi\.sort: data is 0-D"):
        topi.sort(te.placeholder((), "float32", "s"))
    with pytest.raises(DSLError, match="cannot hold the index 299 of an axis of 300"):
        topi.argsort(te.placeholder((300,), "float32", "x"), dtype="int8")
    with pytest.raises(DSLError, match="dtype bool cannot hold indices"):
        topi.topk(data, dtype="bool")
    with pytest.raises(DSLError, match="is_ascend must be a bool"):
        topi.sort(data, is_ascend="yes")
    with pytest.raises(DSLError, match=r"topi\.sort: data must be a te\.Tensor"):
        topi.sort(np.ones((3, 5)))


# -- topk by selection rounds (small k): the same order as the ranks, bit for bit -----

SORT = importlib.import_module("ansor_lab.topi.sort")  # the module (topi.sort is the op)


def _special(rng, shape, dtype):
    """Ties everywhere, and for floats NaN, +-inf and -0.0 among them."""
    if dtype == "bool":
        return rng.integers(0, 2, shape).astype(dtype)
    x = _ties(rng, shape, dtype)
    if dtype.startswith("float"):
        u = rng.random(shape)
        for low, value in ((0.0, np.nan), (0.12, np.inf), (0.2, -np.inf), (0.28, -0.0)):
            x[(u >= low) & (u < low + 0.08)] = value
    return x


def _topk_by(path, monkeypatch, x, k, axis, ascend, dtype):
    """topk's [values, indices] with the rounds (``path`` "rounds") or the ranks, built
    and by the reference evaluator: [built, evaluated]."""
    with monkeypatch.context() as m:
        m.setattr(SORT, "_use_rounds", lambda k, n: path == "rounds")
        data = te.placeholder(x.shape, str(x.dtype), "data")
        outs = topi.topk(data, k, axis=axis, is_ascend=ascend, dtype=dtype)
    assert ("topk_round0_index" if path == "rounds" else "topk_rank") in _stage_names(*outs)
    f = tvm.build(te.create_schedule([o.op for o in outs]), [data, *outs], "llvm")
    got = [np.full(o.shape, 7, o.dtype) for o in outs]
    f(x, *got)
    evaluated = evaluate(outs, {data: x})
    return got, [evaluated[o] for o in outs]


@pytest.mark.parametrize(
    "dtype,shape,axis,k",
    [
        ("float32", (40,), 0, 3),
        ("float32", (6, 23), 1, 5),
        ("float32", (5, 17, 3), 1, 2),
        ("float64", (4, 3, 19), -1, 1),
        ("float32", (9, 4), 0, 9),  # the whole axis: every NaN round and the last pick
        ("int32", (7, 15), 1, 4),
        ("int8", (15, 6), 0, 3),
        ("bool", (6, 12), 1, 5),
    ],
)
def test_topk_rounds_equal_the_ranks_bit_for_bit(dtype, shape, axis, k, monkeypatch):
    x = _special(np.random.default_rng(sum(shape) + k), shape, dtype)
    index_dtype = "int32" if dtype.startswith("int") else "int64"  # int32: no cast stage
    for ascend in (False, True):
        want = topk_ref(x.astype("int8") if dtype == "bool" else x, k, axis, ascend, index_dtype)
        want_values = np.take_along_axis(x, want[1], axis)
        for path in ("rounds", "ranks"):
            for values, indices in _topk_by(path, monkeypatch, x, k, axis, ascend, index_dtype):
                assert indices.dtype == index_dtype
                np.testing.assert_array_equal(indices, want[1], err_msg=path)
                # read, never computed: the bits of -0.0 and NaN too
                assert values.dtype == x.dtype and values.tobytes() == want_values.tobytes()


def _stage_names(*outs):
    return {op.name for op in auto_scheduler.ComputeDAG(list(outs)).compute_ops}


def test_topk_takes_rounds_for_a_small_k_on_a_long_axis():
    data = te.placeholder((4, 40), "float32", "data")
    values, indices = topi.topk(data, 2)
    assert (values.name, values.dtype, indices.name, indices.dtype) == (
        "topk_values",
        "float32",
        "topk_indices",
        "int64",
    )
    stages = _stage_names(values, indices)
    assert {"topk_round0_max", "topk_round0_index", "topk_round1_index"} <= stages
    assert not any("rank" in s for s in stages)
    ascending = topi.topk(data, 1, ret_type="indices", is_ascend=True, dtype="int32")
    assert ascending.name == "topk_indices" and ascending.dtype == "int32"
    assert "topk_round0_min" in _stage_names(ascending)
    for k, n in ((SORT._ROUNDS_MAX_K + 1, 400), (2, 7), (0, 40)):  # the ranks
        data = te.placeholder((3, n), "float32", "data")
        out = topi.topk(data, k, ret_type="values")
        assert "topk_rank" in _stage_names(out)
