"""topi.einsum, topi.nn.pool1d / pool3d and topi.cumsum / cumprod against numpy.

Every case is built with ``tvm.build(te.create_schedule(out.op), ...)`` on llvm and run
by the reference evaluator (``check_op``), then compared with ``np.einsum``, a numpy
pooling reference written here (checked against ``topi.testing.pool2d_python``) and
``np.cumsum`` / ``np.cumprod``.
"""

from __future__ import annotations

import itertools
import re

import numpy as np
import pytest
from workloads import FAST_PARAMS, fast_options

import ansor_lab as tvm
from ansor_lab import auto_scheduler, te, topi
from ansor_lab.errors import DSLError, TaskError
from ansor_lab.ir import nodes as N
from ansor_lab.ir.visitor import walk_stmts
from ansor_lab.topi import testing

# -- einsum -----------------------------------------------------------------------------

EINSUM_CASES = [
    ("ij,jk->ik", [(7, 11), (11, 13)]),
    ("ij,jk", [(3, 5), (5, 2)]),  # implicit: the labels that occur once, sorted
    ("ij, jk -> ik", [(5, 1), (1, 3)]),  # spaces are ignored
    ("bij,bjk->bik", [(3, 5, 7), (3, 7, 2)]),
    ("ij->ji", [(5, 7)]),
    ("ba", [(5, 7)]),  # implicit output "ab": a transpose
    ("i,j->ij", [(5,), (7,)]),
    ("ii->i", [(5, 5)]),
    ("ii", [(7, 7)]),  # the trace, a 0-D result
    ("ii->", [(3, 3)]),
    ("i->", [(13,)]),
    ("ij,ij->", [(3, 5), (3, 5)]),
    ("ij,ij->ij", [(3, 5), (3, 5)]),
    ("ij,jk,kl->il", [(3, 4), (4, 5), (5, 2)]),  # three operands, one reduction over j, k
    ("ijk,jl,kl->il", [(3, 5, 2), (5, 7), (2, 7)]),
    ("iij,jk->ik", [(3, 3, 5), (5, 2)]),  # diagonal and contraction at once
    ("Ab,bC->CA", [(3, 5), (5, 2)]),  # upper-case labels
    ("Ab,bc", [(3, 5), (5, 2)]),  # implicit output "Ac": upper case sorts first
    ("ij,jk->ik", [(3, 1), (5, 4)]),  # label j: extent 1 broadcasts (TVM and numpy)
    ("...ij,...jk->...ik", [(2, 3, 5, 7), (7, 4)]),  # batch matmul with broadcast batch
    ("...ij,...jk->...ik", [(2, 1, 3, 5), (3, 5, 2)]),  # batch dims (2, 1) x (3,): (2, 3)
    ("...ii->...i", [(2, 3, 3)]),
    ("i...->...", [(3, 2, 5)]),
    ("...j,j", [(2, 3, 5), (5,)]),  # implicit with an ellipsis: it comes first
    ("i,...->i...", [(3,), (2, 5)]),
]


def _inputs(shapes, dtype, rand):
    return [te.placeholder(s, dtype, f"x{k}") for k, s in enumerate(shapes)], [
        rand(s, dtype) for s in shapes
    ]


@pytest.mark.parametrize("subscripts,shapes", EINSUM_CASES, ids=[c[0] for c in EINSUM_CASES])
def test_einsum_matches_numpy(subscripts, shapes, check_op, rand):
    ts, xs = _inputs(shapes, "float32", rand)
    out = topi.einsum(subscripts, *ts)
    want = np.asarray(np.einsum(subscripts, *[x.astype("float64") for x in xs]), "float32")
    assert out.shape == want.shape and out.op.name == "T_einsum" and out.op.tag == "einsum"
    check_op([*ts, out], xs, want, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("dtype", ["int32", "float64"])
@pytest.mark.parametrize("subscripts,shapes", EINSUM_CASES[:4] + EINSUM_CASES[13:14])
def test_einsum_dtypes(subscripts, shapes, dtype, check_op, rand):
    ts, xs = _inputs(shapes, dtype, rand)
    out = topi.einsum(subscripts, *ts)
    assert out.dtype == dtype
    check_op([*ts, out], xs, np.asarray(np.einsum(subscripts, *xs), dtype))


def test_einsum_is_one_reduction_over_every_summed_label():
    a, b, c = (
        te.placeholder(s, "float32", n) for s, n in [((3, 4), "a"), ((4, 5), "b"), ((5, 2), "c")]
    )
    out = topi.einsum("ij,jk,kl->il", a, b, c)
    assert [iv.var.name for iv in out.op.axis] == ["i", "l"]
    assert [iv.var.name for iv in out.op.reduce_axis] == ["j", "k"]
    assert [int(iv.dom.extent) for iv in out.op.reduce_axis] == [4, 5]
    transpose = topi.einsum("ij->ji", a)
    assert transpose.shape == (4, 3) and not transpose.op.reduce_axis  # no reduction


def test_einsum_takes_tvm_documented_tuple_form(check_op):
    a = te.placeholder((2, 3), "float32", "a")
    b = te.placeholder((3, 2), "float32", "b")
    x = np.arange(6, dtype="float32").reshape(2, 3)
    y = np.arange(6, dtype="float32").reshape(3, 2) - 2
    check_op([a, b, topi.einsum("ij,jk->ik", (a, b))], [x, y], x @ y)
    # by hand: [[0 1 2], [3 4 5]] @ [[-2 -1], [0 1], [2 3]]
    np.testing.assert_array_equal(x @ y, [[4, 7], [4, 16]])


def test_einsum_sums_ellipsis_dims_missing_from_an_explicit_output(check_op, rand):
    # TVM sums them; numpy refuses "...i->i", so compare with the sum over the batch
    a = te.placeholder((2, 3, 5), "float32", "a")
    x = rand((2, 3, 5))
    check_op([a, topi.einsum("...i->i", a)], [x], x.sum(axis=(0, 1)), atol=1e-5)


EINSUM_ERRORS = [
    ("ij,jk->ik", [(3, 4)], r"name 2 operand\(s\) but 1 tensor\(s\) were given; write one"),
    ("ij->ij", [(3, 4), (4, 5)], r"name 1 operand\(s\) but 2 tensor\(s\)"),
    (
        "ij,jk->ik",
        [(3, 4, 2), (4, 5)],
        r"operand 0's term 'ij' has 2 dimension\(s\) but operand 0 has shape \(3, 4, 2\)",
    ),
    (
        "ij",
        [(3,)],
        r"has 2 dimension\(s\) but operand 0 has shape \(3,\) \(1-D\); write one label",
    ),
    ("...ijk", [(3, 4)], r"has at least 3 dimension\(s\)"),
    (
        "ij,jk->ik",
        [(3, 4), (5, 6)],
        r"label 'j' has extent 4 in operand 0 \(axis 1\) but 5 in operand 1 \(axis 0\); "
        ".*same extent",
    ),
    (
        "ii->i",
        [(3, 4)],
        r"label 'i' has extent 3 in operand 0 \(axis 0\) but 4 in operand 0 \(axis 1\)",
    ),
    ("ij->ik", [(3, 4)], r"output label 'k' is in no input term; .*e\.g\. 'ij->i'"),
    ("ij->ii", [(3, 4)], r"output label 'i' occurs 2 times; name each output dimension once"),
    ("i1,jk", [(3, 4), (4, 5)], r"the character '1'; labels are the letters a-z and A-Z"),
    ("ij->j->i", [(3, 4)], r"have 2 arrows; write one '->'"),
    ("ij>i", [(3, 4)], r"a '>' outside '->'"),
    ("..ij", [(3, 4)], r"a '\.' that is not part of an ellipsis; write '\.\.\.'"),
    ("...i...", [(3, 4)], r"two ellipses"),
    (
        "...ij,...jk->...ik",
        [(2, 3, 4), (5, 4, 6)],
        r"under '\.\.\.' of operand 1 \(5,\) do not broadcast",
    ),
]


@pytest.mark.parametrize(
    "subscripts,shapes,match", EINSUM_ERRORS, ids=[e[0] for e in EINSUM_ERRORS]
)
def test_einsum_bad_subscripts_say_what_to_write(subscripts, shapes, match):
    ts = [te.placeholder(s, "float32", f"x{k}") for k, s in enumerate(shapes)]
    with pytest.raises(DSLError, match=match) as err:
        topi.einsum(subscripts, *ts)
    assert "topi.einsum" in str(err.value)


def test_einsum_bad_operands_say_what_to_write():
    a = te.placeholder((3, 4), "float32", "a")
    b = te.placeholder((4, 5), "float64", "b")
    with pytest.raises(
        DSLError,
        match=r"operand 1 \('b'\) is float64 but operand 0 \('a'\) is float32; "
        r".*topi\.cast\(b, 'float32'\)",
    ):
        topi.einsum("ij,jk->ik", a, b)
    with pytest.raises(DSLError, match="cast them to an integer dtype"):
        topi.einsum("ij->", te.placeholder((3, 4), "bool", "m"))
    with pytest.raises(DSLError, match="subscripts must be a str"):
        topi.einsum(["ij"], a)
    with pytest.raises(DSLError, match="needs at least one tensor"):
        topi.einsum("ij")
    with pytest.raises(DSLError, match="operand 1 must be a te.Tensor"):
        topi.einsum("ij,jk", a, np.ones((4, 5)))


def test_einsum_matmul_tunes_like_a_matmul(tmp_path):
    A = te.placeholder((32, 48), "float32", "A")
    B = te.placeholder((48, 40), "float32", "B")
    C = topi.einsum("ij,jk->ik", A, B)
    task = auto_scheduler.SearchTask(
        compute_dag=auto_scheduler.ComputeDAG([A, B, C]), target="llvm -num-cores=1"
    )
    policy = auto_scheduler.SketchPolicy(task, params=dict(FAST_PARAMS), seed=0, verbose=0)
    assert "T_einsum: tile" in {s.describe() for s in policy.sketches}  # multi-level tiling
    log = str(tmp_path / "einsum.json")
    result = task.tune(fast_options(log, 8, 8), search_policy=policy)
    assert result.stats.trials == 8 and result.stats.errors == 0
    sch, args = task.apply_best(log)
    f = tvm.build(sch, args, "llvm")
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (32, 48)).astype("float32")
    b = rng.uniform(-1, 1, (48, 40)).astype("float32")
    c = np.full((32, 40), np.nan, "float32")
    f(a, b, c)
    np.testing.assert_allclose(c, np.einsum("ij,jk->ik", a, b), rtol=1e-4, atol=1e-4)


# -- pool1d / pool3d ----------------------------------------------------------------------


def _out_len(size, k, s, d, before, after, ceil_mode):
    span = size + before + after - ((k - 1) * d + 1)
    if not ceil_mode:
        return span // s + 1
    out = -(-span // s) + 1
    return out - 1 if (out - 1) * s >= size + before else out  # no window starts in padding


def pool_nd_python(x, kernel, stride, dilation, padding, pool_type, ceil_mode, include_pad, axes):
    """Pooling over ``axes`` of ``x``; padding is all the begins, then all the ends.

    A max ignores padded taps; an average divides by the taps inside the given padding
    (``include_pad``) or inside the data (at least 1); integer averages truncate to zero.
    """
    n = len(axes)
    begin, end = padding[:n], padding[n:]
    data = np.moveaxis(x, axes, range(x.ndim - n, x.ndim))
    sizes = data.shape[x.ndim - n :]
    outs = [_out_len(*a, ceil_mode) for a in zip(sizes, kernel, stride, dilation, begin, end)]
    out = np.zeros(data.shape[: x.ndim - n] + tuple(outs), x.dtype)
    is_float = np.issubdtype(x.dtype, np.floating)
    for pos in itertools.product(*[range(o) for o in outs]):
        taps = [
            [p * s - b + t * d for t in range(k)]
            for p, s, b, d, k in zip(pos, stride, begin, dilation, kernel)
        ]
        inside = [[c for c in tp if 0 <= c < size] for tp, size in zip(taps, sizes)]
        padded = [
            [c for c in tp if -b <= c < size + e] for tp, b, e, size in zip(taps, begin, end, sizes)
        ]
        window = data[(Ellipsis, *np.ix_(*inside))] if all(inside) else None
        last = tuple(range(-n, 0))
        if pool_type == "max":
            if window is None:
                out[(Ellipsis, *pos)] = -np.inf if is_float else np.iinfo(x.dtype).min
            else:
                out[(Ellipsis, *pos)] = window.max(axis=last)
            continue
        total = (
            0
            if window is None
            else window.astype(np.float64 if is_float else np.int64).sum(axis=last)
        )
        count = (
            np.prod([len(p) for p in padded])
            if include_pad
            else max(np.prod([len(i) for i in inside]), 1)
        )
        out[(Ellipsis, *pos)] = (
            total / count if is_float else np.sign(total) * (np.abs(total) // count)
        )
    return np.moveaxis(out, range(x.ndim - n, x.ndim), axes)


@pytest.mark.parametrize("pool_type", ["max", "avg"])
@pytest.mark.parametrize("include_pad", [True, False])
@pytest.mark.parametrize("ceil_mode", [False, True])
def test_the_numpy_reference_agrees_with_pool2d_python(pool_type, include_pad, ceil_mode, rand):
    x = rand((2, 3, 9, 7))
    for kernel, stride, dilation, padding in [
        ((3, 2), (2, 1), (1, 1), (1, 0, 2, 1)),
        ((2, 3), (3, 2), (2, 1), (1, 1, 0, 1)),
    ]:
        want = testing.pool2d_python(
            x, kernel, stride, dilation, padding, pool_type, ceil_mode, include_pad
        )
        got = pool_nd_python(
            x, kernel, stride, dilation, padding, pool_type, ceil_mode, include_pad, (2, 3)
        )
        np.testing.assert_allclose(got, want, rtol=1e-6)


# (NCW shape, kernel, stride, dilation, padding (left, right), ceil_mode)
POOL1D_CASES = [
    ((2, 3, 11), 3, 2, 1, (1, 1), False),
    ((1, 2, 13), (4,), (3,), (2,), (2, 1), True),
    ((1, 1, 7), 7, 1, 1, (0, 0), False),
    ((2, 5, 17), 2, 2, 1, (0, 1), True),
    ((1, 2, 10), 3, 3, 2, (3, 2), True),
]
# (NCDHW shape, kernel, stride, dilation, padding (front, top, left, back, bottom, right), ceil)
POOL3D_CASES = [
    ((1, 2, 5, 7, 6), (2, 3, 2), (2, 2, 1), (1, 1, 1), (0, 1, 1, 1, 1, 0), False),
    ((1, 1, 7, 5, 9), (3, 3, 3), (2, 2, 2), (1, 2, 1), (1, 1, 1, 1, 1, 1), True),
    ((2, 3, 4, 4, 4), (2, 2, 2), (2, 2, 2), (1, 1, 1), (0, 0, 0, 0, 0, 0), False),
    ((1, 2, 5, 5, 3), (3, 2, 3), (1, 3, 2), (1, 1, 1), (2, 0, 1, 0, 1, 1), True),
]
POOL_OPS = {"pool1d": (POOL1D_CASES, "NCW", (2,)), "pool3d": (POOL3D_CASES, "NCDHW", (2, 3, 4))}


def _pool_params(op):
    cases, _, _ = POOL_OPS[op]
    return [pytest.param(op, c, id=f"{op}-case{k}") for k, c in enumerate(cases)]


@pytest.mark.parametrize("op,case", _pool_params("pool1d") + _pool_params("pool3d"))
@pytest.mark.parametrize("pool_type,include_pad", [("max", True), ("avg", True), ("avg", False)])
def test_pool1d_pool3d_match_numpy(op, case, pool_type, include_pad, check_op, rand):
    shape, kernel, stride, dilation, padding, ceil_mode = case
    _, layout, axes = POOL_OPS[op]
    n = len(axes)
    data = te.placeholder(shape, "float32", "data")
    out = getattr(topi.nn, op)(
        data, kernel, stride, dilation, padding, pool_type, ceil_mode, layout, include_pad
    )
    assert out.op.tag == ("pool_max" if pool_type == "max" else "elemwise")
    x = rand(shape)
    tup = [tuple(v) if isinstance(v, tuple) else (v,) * n for v in (kernel, stride, dilation)]
    want = pool_nd_python(x, *tup, padding, pool_type, ceil_mode, include_pad, axes)
    check_op([data, out], [x], want)


@pytest.mark.parametrize("pool_type", ["max", "avg"])
def test_pool_int32_and_channels_last(pool_type, check_op, rand):
    x1 = rand((2, 13, 3), "int32", -20, 20)  # NWC
    d1 = te.placeholder(x1.shape, "int32", "d1")
    out1 = topi.nn.pool1d(d1, 3, 2, 1, (1, 1), pool_type, False, "NWC")
    want1 = pool_nd_python(x1, (3,), (2,), (1,), (1, 1), pool_type, False, True, (1,))
    check_op([d1, out1], [x1], want1)
    x3 = rand((1, 5, 7, 4, 3))  # NDHWC
    d3 = te.placeholder(x3.shape, "float32", "d3")
    pads = (1, 0, 1, 0, 1, 1)
    out3 = topi.nn.pool3d(d3, (2, 3, 2), (2, 2, 1), 1, pads, pool_type, True, "NDHWC", False)
    want3 = pool_nd_python(
        x3, (2, 3, 2), (2, 2, 1), (1, 1, 1), pads, pool_type, True, False, (1, 2, 3)
    )
    check_op([d3, out3], [x3], want3)


def test_pool1d_and_pool3d_by_hand(check_op):
    d1 = te.placeholder((1, 1, 5), "float32", "d1")
    x1 = np.array([[[1, 5, 2, 8, 3]]], "float32")
    # windows of 2, stride 2, one pad left: [pad 1] [5 2] [8 3]
    check_op(
        [d1, topi.nn.pool1d(d1, 2, 2, 1, (1, 0), "max")], [x1], np.array([[[1, 5, 8]]], "float32")
    )
    avg = np.array([[[0.5, 3.5, 5.5]]], "float32")  # the pad tap counts
    check_op([d1, topi.nn.pool1d(d1, 2, 2, 1, (1, 0), "avg")], [x1], avg)
    d3 = te.placeholder((1, 1, 2, 2, 2), "float32", "d3")
    x3 = np.arange(8, dtype="float32").reshape(1, 1, 2, 2, 2)
    check_op(
        [d3, topi.nn.pool3d(d3, 2, 1, 1, 0, "avg")], [x3], np.full((1, 1, 1, 1, 1), 3.5, "float32")
    )
    check_op(
        [d3, topi.nn.pool3d(d3, 2, 1, 1, 0, "max")], [x3], np.full((1, 1, 1, 1, 1), 7, "float32")
    )


def test_pool1d_pool3d_errors_say_what_to_write():
    d1 = te.placeholder((1, 2, 9), "float32", "d1")
    d3 = te.placeholder((1, 2, 4, 4, 4), "float32", "d3")
    with pytest.raises(DSLError, match=r"padding \(1, 2, 3\) has 3 entries; .*two per axis \(2"):
        topi.nn.pool1d(d1, 2, 1, 1, (1, 2, 3), "max")
    with pytest.raises(
        DSLError, match=r"padding \(1, 1, 1, 1\) has 4 entries; .*\(3\) or two per axis \(6"
    ):
        topi.nn.pool3d(d3, 2, 1, 1, (1, 1, 1, 1), "max")
    with pytest.raises(
        DSLError, match=r"topi\.nn\.pool3d: layout 'NCHW' does not describe a 5-D .*'NCDHW'"
    ):
        topi.nn.pool3d(d3, 2, 1, 1, 0, "max", layout="NCHW")
    with pytest.raises(
        DSLError, match=r"topi\.nn\.pool1d: pool_type 'sum' is not supported; use 'max' or 'avg'"
    ):
        topi.nn.pool1d(d1, 2, 1, 1, 0, "sum")
    with pytest.raises(DSLError, match=r"topi\.nn\.pool1d: the dilated kernel \(11\) is larger"):
        topi.nn.pool1d(d1, 6, 1, 2, 0, "max")
    with pytest.raises(DSLError, match=r"topi\.nn\.pool3d: kernel must be an int or 3 ints"):
        topi.nn.pool3d(d3, (2, 2), 1, 1, 0, "max")
    with pytest.raises(DSLError, match=r"topi\.nn\.pool3d: stride \(1, 0, 1\) must be positive"):
        topi.nn.pool3d(d3, 2, (1, 0, 1), 1, 0, "max")


# -- cumsum / cumprod ---------------------------------------------------------------------


def _scan_ref(fn, x, axis, dtype, exclusive):
    """numpy's cumsum / cumprod; exclusive: shifted by one, the identity first."""
    x = x.reshape(-1) if axis is None else x
    axis = 0 if axis is None else axis
    out = fn(x.astype(dtype), axis=axis, dtype=dtype)
    if not exclusive:
        return out
    first = np.full_like(np.take(out, [0], axis=axis), 0 if fn is np.cumsum else 1)
    return np.concatenate([first, np.delete(out, -1, axis=axis)], axis=axis)


SCAN_CASES = [
    ((7,), None),
    ((7,), 0),
    ((3, 5), None),
    ((3, 5), 0),
    ((3, 5), 1),
    ((3, 5), -1),
    ((2, 3, 13), 1),
    ((2, 3, 13), 2),
    ((2, 3, 13), None),
]


# an axis over 64 is scanned by blocks (see scan.py)
LONG_SCAN_CASES = [
    ((65,), 0),  # B = 8 does not divide n: the last block is guarded
    ((128,), 0),  # B = 8 divides n
    ((100,), None),
    ((2, 257), 1),
    ((4, 250), None),  # axis None on a 2-D input: 1000 elements, B = 16
    ((2, 130, 3), 1),  # a middle axis
    ((3, 512), -1),  # B = 8 divides n
    ((4099,), 0),  # B = 16
]


@pytest.mark.parametrize(
    "shape,axis,long", [(*c, False) for c in SCAN_CASES] + [(*c, True) for c in LONG_SCAN_CASES]
)
@pytest.mark.parametrize("exclusive", [None, True])
@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
def test_cumsum_cumprod_match_numpy(name, shape, axis, long, exclusive, check_op, rand):
    """Short axes (one masked reduction) and long ones (by blocks) against numpy."""
    data = te.placeholder(shape, "float32", "data")
    out = getattr(topi, name)(data, axis, exclusive=exclusive)
    assert out.op.name == out.op.tag == f"{name}_generic"
    # long products of values near 1 neither overflow nor underflow over 4099 elements
    low, high = (0.99, 1.01) if long else (0.5, 1.5)
    x = rand(shape, low=low, high=high) if name == "cumprod" else rand(shape)
    want = _scan_ref(getattr(np, name), x.astype("float64"), axis, "float64", exclusive)
    assert out.shape == want.shape == ((x.size,) if axis is None else shape)
    tol = dict(rtol=1e-4, atol=1e-3) if long else dict(rtol=1e-5, atol=1e-5)
    check_op([data, out], [x], want.astype("float32"), **tol)


@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
@pytest.mark.parametrize(
    "in_dtype,dtype,out_dtype",
    [
        ("int32", None, "int32"),
        ("int32", "float64", "float64"),
        ("float32", "", "float32"),
        ("float64", "int64", "int64"),
    ],
)
def test_scan_dtypes(name, in_dtype, dtype, out_dtype, check_op, rand):
    data = te.placeholder((3, 7), in_dtype, "data")
    x = rand((3, 7), in_dtype, -3, 3)
    for axis, exclusive in [(1, False), (0, True)]:
        out = getattr(topi, name)(data, axis, dtype, exclusive)
        assert out.dtype == out_dtype
        want = _scan_ref(getattr(np, name), x, axis, out_dtype, exclusive)
        check_op([data, out], [x], want, rtol=1e-5, atol=1e-5)


def test_scan_by_hand(check_op):
    data = te.placeholder((4,), "int32", "data")
    x = np.array([3, -1, 4, 2], "int32")
    check_op([data, topi.cumsum(data)], [x], np.array([3, 2, 6, 8], "int32"))
    check_op([data, topi.cumsum(data, exclusive=True)], [x], np.array([0, 3, 2, 6], "int32"))
    check_op([data, topi.cumprod(data, 0)], [x], np.array([3, -3, -12, -24], "int32"))
    check_op([data, topi.cumprod(data, 0, exclusive=True)], [x], np.array([1, 3, -3, -12], "int32"))
    flags = te.placeholder((2, 3), "bool", "flags")  # counting Trues needs an int dtype
    m = np.array([[True, False, True], [True, True, False]])
    check_op(
        [flags, topi.cumsum(flags, 1, "int32")], [m], np.array([[1, 1, 2], [1, 2, 2]], "int32")
    )
    scalar = te.placeholder((), "float32", "scalar")  # 0-D, axis None: shape (1,)
    out = topi.cumsum(scalar)
    f = tvm.build(te.create_schedule(out.op), [scalar, out], target="llvm")
    got = np.zeros(1, "float32")
    f(np.array(2.5, "float32"), got)  # (check_op would pass the 0-D input as 1-D)
    np.testing.assert_array_equal(got, [2.5])


def test_scan_is_one_masked_reduction():
    data = te.placeholder((3, 5), "float32", "data")
    out = topi.cumsum(data, 1)
    assert [int(iv.dom.extent) for iv in out.op.reduce_axis] == [5]
    assert out.op.body[0].condition is not None  # k <= i


def test_scan_errors_say_what_to_write():
    data = te.placeholder((3, 5), "float32", "data")
    with pytest.raises(DSLError, match=r"topi\.cumsum: axis 2 is out of range for a 2-D tensor"):
        topi.cumsum(data, 2)
    with pytest.raises(DSLError, match=r"topi\.cumprod: data is 0-D; .*axis=None"):
        topi.cumprod(te.placeholder((), "float32", "s"), 0)
    with pytest.raises(DSLError, match=re.escape("topi.cumsum in bool: pass dtype='int32'")):
        topi.cumsum(te.placeholder((3,), "bool", "b"))
    with pytest.raises(DSLError, match=r"topi\.cumsum: data must be a te\.Tensor"):
        topi.cumsum(np.ones(3))


def test_cumprod_is_refused_by_the_search_but_cumsum_is_searched():
    data = te.placeholder((4, 33), "float32", "data")
    target = "llvm -num-cores=1"
    summed = auto_scheduler.SearchTask(
        compute_dag=auto_scheduler.ComputeDAG([data, topi.cumsum(data, 1)]), target=target
    )
    assert auto_scheduler.SketchPolicy(summed, params=dict(FAST_PARAMS), seed=0, verbose=0).sketches
    with pytest.raises(TaskError, match="'cumprod_generic' is a tuple reduction") as err:
        auto_scheduler.SearchTask(
            compute_dag=auto_scheduler.ComputeDAG([data, topi.cumprod(data, 1)]), target=target
        )
    assert "Schedule it by hand" in str(err.value)


# an axis over 64 is scanned by blocks of B (power of two, about (2n)^(1/3)) in 4 stages
@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
@pytest.mark.parametrize("dtype", [None, "int64", "float64"])
def test_long_integer_scans_are_exact(name, dtype, check_op, rand):
    x = rand((3, 1000), "int32", -3, 3)  # -6 .. 6
    if name == "cumprod":
        x = np.where(x > 0, 1, -1).astype("int32")  # products of +-1 stay exact
    data = te.placeholder(x.shape, "int32", "data")
    for axis, exclusive in [(1, False), (None, True)]:  # blocks of 16 in rows of 1000, 3000
        out = getattr(topi, name)(data, axis, dtype, exclusive)
        assert out.dtype == (dtype or "int32")
        want = _scan_ref(getattr(np, name), x, axis, dtype or "int32", exclusive)
        check_op([data, out], [x], want, rtol=0, atol=0)


def _trip_count(stmt):
    """Iterations of the innermost loops under ``stmt``: each nest's extents multiplied."""
    loops = [s for s in walk_stmts(stmt) if isinstance(s, N.For)]
    nested = {id(s) for f in loops for s in walk_stmts(f.body) if isinstance(s, N.For)}
    return sum(f.extent.value * (_trip_count(f.body) or 1) for f in loops if id(f) not in nested)


@pytest.mark.parametrize("n,length", [(64, None), (65, 8), (4099, 16), (100_000, 64)])
def test_long_scans_do_subquadratic_work(n, length):
    data = te.placeholder((n,), "float32", "data")
    out = topi.cumsum(data)
    stages, todo = {}, [out.op]
    while todo:
        op = todo.pop()
        stages[op.name] = [int(iv.dom.extent) for iv in op.reduce_axis]
        todo += [t.op for t in op.input_tensors if t.op.name != "data"]
    trips = _trip_count(tvm.lower(te.create_schedule(out.op), [data, out])["main"].body)
    if length is None:  # a short axis: one masked reduction over the whole axis
        assert stages == {"cumsum_generic": [n]} and trips >= n * n
        return
    blocks = -(-n // length)
    assert stages == {
        "cumsum_generic": [],
        "cumsum_in_block": [length],
        "cumsum_before": [blocks],
        "cumsum_block": [length],
    }
    # each element re-adds its block's prefix, each block the totals before it
    assert trips <= n * length + blocks * blocks + 3 * n + 2 * blocks
    assert trips <= 3 * n ** (4 / 3) and trips * 5 < n * n  # n = 10**5: 9e6 vs 1e10


def test_long_cumsum_tunes_and_is_correct(tmp_path):
    x = te.placeholder((2, 300), "float32", "x")
    out = topi.cumsum(x, 1)
    task = auto_scheduler.SearchTask(
        compute_dag=auto_scheduler.ComputeDAG([x, out]), target="llvm -num-cores=1"
    )
    policy = auto_scheduler.SketchPolicy(task, params=dict(FAST_PARAMS), seed=0, verbose=0)
    log = str(tmp_path / "cumsum.json")
    result = task.tune(fast_options(log, 8, 8), search_policy=policy)
    assert result.stats.trials == 8 and result.stats.errors == 0
    sch, args = task.apply_best(log)
    f = tvm.build(sch, args, "llvm")
    a = np.random.default_rng(0).uniform(-1, 1, (2, 300)).astype("float32")
    got = np.full((2, 300), np.nan, "float32")
    f(a, got)
    np.testing.assert_allclose(got, np.cumsum(a, axis=1), rtol=1e-4, atol=1e-4)
    with pytest.raises(TaskError, match="'cumprod_block' is a tuple reduction"):
        auto_scheduler.SearchTask(
            compute_dag=auto_scheduler.ComputeDAG([x, topi.cumprod(x, 1)]), target="llvm"
        )
