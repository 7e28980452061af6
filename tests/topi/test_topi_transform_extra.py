"""Comparisons, logic, where, creation, indexing, slicing and layout operators against numpy."""

import operator

import numpy as np
import pytest

from ansor_lab import te, topi
from ansor_lab.dsl import expr as E
from ansor_lab.errors import DSLError

# -- comparisons and logic -----------------------------------------------------------------

COMPARISONS = {
    "greater": operator.gt,
    "less": operator.lt,
    "equal": operator.eq,
    "not_equal": operator.ne,
    "greater_equal": operator.ge,
    "less_equal": operator.le,
}


@pytest.mark.parametrize("name", sorted(COMPARISONS))
@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_comparison_broadcasts_to_bool(name, dtype, check_op, rand):
    a, b = te.placeholder((3, 1, 5), dtype, "a"), te.placeholder((4, 1), dtype, "b")
    x, y = rand((3, 1, 5), dtype), rand((4, 1), dtype)
    y[0, 0] = x[0, 0, 0]  # at least one tie
    out = getattr(topi, name)(a, b)
    assert (out.dtype, out.op.tag, out.op.name) == ("bool", "broadcast", f"T_{name}")
    check_op([a, b, out], [x, y], COMPARISONS[name](x, y))


def test_comparison_with_scalars(check_op, rand):
    a = te.placeholder((5, 3), "float32", "a")
    x = rand((5, 3))
    check_op([a, topi.greater(a, 0.25)], [x], x > np.float32(0.25))
    check_op([a, topi.less_equal(0.0, a)], [x], x >= 0)
    assert isinstance(topi.less(1, 2), E.PrimExpr)  # two scalars: an expression, as in TVM


LOGICAL = {
    "logical_and": np.logical_and,
    "logical_or": np.logical_or,
    "logical_xor": np.logical_xor,
}


@pytest.mark.parametrize("name", sorted(LOGICAL))
def test_logical_binary(name, check_op, rand):
    a, b = te.placeholder((2, 7), "float32", "a"), te.placeholder((7,), "int32", "b")
    x, y = rand((2, 7)), rand((7,), "int32")
    out = getattr(topi, name)(topi.greater(a, 0.0), topi.not_equal(b, 0))
    assert out.dtype == "bool" and out.op.name == f"T_{name}"
    check_op([a, b, out], [x, y], LOGICAL[name](x > 0, y != 0))


def test_logical_not_and_sign(check_op, rand):
    a = te.placeholder((4, 5), "float32", "a")
    x = rand((4, 5))
    x[0, :2] = 0.0
    check_op([a, topi.logical_not(topi.less(a, 0.5))], [x], ~(x < 0.5))
    out = topi.sign(a)
    assert (out.op.name, out.op.tag) == ("T_sign", "elemwise")
    check_op([a, out], [x], np.sign(x))
    i = te.placeholder((7,), "int32", "i")
    xi = np.array([-3, 0, 2, -1, 5, 0, 1], "int32")
    check_op([i, topi.sign(i)], [xi], np.sign(xi))


def test_logical_errors():
    a = te.placeholder((3,), "float32", "a")
    with pytest.raises(DSLError, match=r"topi.logical_and: .*expects a bool condition"):
        topi.logical_and(a, a)
    with pytest.raises(DSLError, match=r"topi.logical_not expects a bool tensor.*not_equal"):
        topi.logical_not(a)
    with pytest.raises(DSLError, match=r"topi.greater: shapes \(3,\) and \(2,\) do not broadcast"):
        topi.greater(a, te.placeholder((2,), "float32", "b"))


# -- where, full, full_like, arange ----------------------------------------------------------


def test_where_broadcasts_condition_and_values(check_op, rand):
    c = te.placeholder((3, 1, 1), "bool", "c")
    x, y = te.placeholder((1, 4, 5), "float32", "x"), te.placeholder((5,), "float32", "y")
    vc = np.array([True, False, True]).reshape(3, 1, 1)
    vx, vy = rand((1, 4, 5)), rand((5,))
    out = topi.where(c, x, y)
    assert (out.shape, out.op.name, out.op.tag) == ((3, 4, 5), "T_where", "broadcast")
    check_op([c, x, y, out], [vc, vx, vy], np.where(vc, vx, vy))


def test_where_with_a_number_condition(check_op, rand):
    c, x = te.placeholder((6,), "int32", "c"), te.placeholder((6,), "int32", "x")
    y = te.placeholder((6,), "int32", "y")
    vc = np.array([0, 2, -1, 0, 5, 0], "int32")
    vx, vy = rand((6,), "int32"), rand((6,), "int32")
    check_op([c, x, y, topi.where(c, x, y)], [vc, vx, vy], np.where(vc != 0, vx, vy))


def test_where_errors():
    c = te.placeholder((3,), "bool", "c")
    x, y = te.placeholder((3,), "float32", "x"), te.placeholder((3,), "int32", "y")
    with pytest.raises(DSLError, match=r"topi.where: x is float32 but y is int32.*topi.cast"):
        topi.where(c, x, y)
    with pytest.raises(DSLError, match=r"topi.where: y must be a te.Tensor"):
        topi.where(c, x, 0.0)


def test_full_and_full_like(check_op, rand):
    out = topi.full((3, 5), "int32", 7)
    assert (out.op.name, out.op.tag, out.dtype) == ("T_full", "elemwise", "int32")
    check_op([out], [], np.full((3, 5), 7, "int32"))
    a = te.placeholder((2, 3), "float64", "a")
    like = topi.full_like(a, -1.5)
    assert like.op.name == "T_full_like"
    check_op([a, like], [rand((2, 3), "float64")], np.full((2, 3), -1.5))


@pytest.mark.parametrize(
    ("args", "dtype"),
    [
        ((7,), "float32"),
        ((2, 11, 3), "int32"),
        ((5, -4, -2), "int64"),
        ((0.5, 3.0, 0.75), "float32"),
    ],
    ids=str,
)
def test_arange(args, dtype, check_op):
    out = topi.arange(*args, dtype=dtype)
    assert (out.op.name, out.dtype) == ("T_arange", dtype)
    check_op([out], [], np.arange(*args, dtype=dtype))


def test_arange_errors():
    with pytest.raises(DSLError, match=r"topi.arange: start=3, stop=3, step=1 is empty"):
        topi.arange(3, 3)
    with pytest.raises(DSLError, match=r"topi.arange: stop must be a Python number"):
        topi.arange(0, te.var("n"))


# -- take, gather, gather_nd, one_hot --------------------------------------------------------


@pytest.mark.parametrize("mode", ["clip", "wrap", "fast"])
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_take(mode, axis, check_op, rand):
    a = te.placeholder((3, 5, 2), "float32", "a")
    ind = te.placeholder((2, 3), "int32", "ind")
    x = rand((3, 5, 2))
    n = x.size if axis is None else x.shape[axis]
    ix = np.array([[0, n - 1, 1], [-1, n + 3, -n - 2]], "int32")  # out of range on row 1
    out = topi.take(a, ind, axis=axis, mode=mode)
    assert (out.op.name, out.op.tag) == ("T_take", "injective")
    np_mode = "clip" if mode == "fast" else mode  # fast clamps here (documented)
    want = np.take(x, ix, axis=axis, mode=np_mode)
    if mode != "wrap":  # numpy's clip keeps a negative index at 0, as ours does
        want = np.take(x, np.clip(ix, 0, n - 1), axis=axis)
    check_op([a, ind, out], [x, ix], want)


def test_take_batch_dims_and_int64(check_op, rand):
    a = te.placeholder((2, 5, 3), "float32", "a")
    ind = te.placeholder((2, 4), "int64", "ind")
    x = rand((2, 5, 3))
    ix = np.array([[0, 4, 2, 9], [1, 1, -3, 3]], "int64")
    out = topi.take(a, ind, axis=1, batch_dims=1)
    assert out.shape == (2, 4, 3)
    clipped = np.clip(ix, 0, 4)
    want = np.stack([x[b][clipped[b]] for b in range(2)])
    check_op([a, ind, out], [x, ix], want)


def test_take_errors():
    a = te.placeholder((3, 4), "float32", "a")
    fi = te.placeholder((2,), "float32", "fi")
    ind = te.placeholder((2,), "int32", "ind")
    with pytest.raises(DSLError, match=r"topi.take: indices must be an int32 or int64 tensor"):
        topi.take(a, fi)
    with pytest.raises(DSLError, match=r"topi.take: mode 'nan' is not one of"):
        topi.take(a, ind, mode="nan")
    with pytest.raises(DSLError, match=r"topi.take: axis 2 is out of range"):
        topi.take(a, ind, axis=2)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_gather(axis, check_op, rand):
    data = te.placeholder((3, 5, 4), "float32", "data")
    shape = [3, 5, 4]
    shape[axis] = 7
    ind = te.placeholder(tuple(shape), "int32", "ind")
    x = rand((3, 5, 4))
    rng = np.random.default_rng(1)
    ix = rng.integers(0, x.shape[axis], size=shape).astype("int32")
    out = topi.gather(data, axis, ind)
    assert (out.shape, out.op.name) == (tuple(shape), "T_gather")
    check_op([data, ind, out], [x, ix], np.take_along_axis(x, ix, axis))


def test_gather_clamps_and_smaller_indices(check_op, rand):
    data = te.placeholder((4, 5), "float32", "data")
    ind = te.placeholder((2, 3), "int32", "ind")
    x = rand((4, 5))
    ix = np.array([[0, -2, 7], [3, 1, 4]], "int32")
    want = np.take_along_axis(x[:, :3], np.clip(ix, 0, 3), 0)
    check_op([data, ind, topi.gather(data, 0, ind)], [x, ix], want)
    with pytest.raises(DSLError, match=r"topi.gather: indices is 1-D but data is 2-D"):
        topi.gather(data, 0, te.placeholder((3,), "int32", "i1"))
    with pytest.raises(DSLError, match=r"larger than data \(4, 5\) in dimension 1"):
        topi.gather(data, 0, te.placeholder((2, 6), "int32", "i2"))


def test_gather_nd(check_op, rand):
    data = te.placeholder((3, 4, 5), "float32", "data")
    ind = te.placeholder((2, 3, 2), "int32", "ind")  # M=2 coordinates, Y=(3, 2)
    x = rand((3, 4, 5))
    ix = np.array([[[0, 2], [1, 1], [2, 0]], [[3, 0], [1, 2], [0, 3]]], "int32")
    out = topi.gather_nd(data, ind)
    assert (out.shape, out.op.name) == ((3, 2, 5), "T_gather_nd")
    check_op([data, ind, out], [x, ix], x[tuple(ix)])
    full = te.placeholder((3, 4), "int64", "full")  # all 3 coordinates: one element each
    fx = np.array([[0, 2, 1, 9], [3, 0, -1, 1], [4, 1, 0, 2]], "int64")  # 9, -1 clamp
    clamped = [np.clip(fx[k], 0, n - 1) for k, n in enumerate(x.shape)]
    check_op([data, full, topi.gather_nd(data, full)], [x, fx], x[tuple(clamped)])


def test_gather_nd_batch_dims(check_op, rand):
    data = te.placeholder((2, 3, 4), "float32", "data")
    ind = te.placeholder((1, 2), "int32", "ind")  # one coordinate per batch
    x = rand((2, 3, 4))
    ix = np.array([[2, 0]], "int32")
    out = topi.gather_nd(data, ind, batch_dims=1)
    assert out.shape == (2, 4)
    check_op([data, ind, out], [x, ix], np.stack([x[0, 2], x[1, 0]]))
    with pytest.raises(DSLError, match=r"indices.shape\[0\] \+ batch_dims must be at most"):
        topi.gather_nd(data, te.placeholder((4, 2), "int32", "i4"))


@pytest.mark.parametrize("axis", [-1, 0, 1, -2])
def test_one_hot(axis, check_op):
    ind = te.placeholder((2, 3), "int32", "ind")
    ix = np.array([[0, 3, 1], [4, -1, 2]], "int32")  # 4 and -1 match nothing
    out = topi.one_hot(ind, 1.0, -2.0, 4, axis, "float32")
    hot = (ix[..., None] == np.arange(4)).astype("float32") * 3.0 - 2.0
    want = np.moveaxis(hot, -1, axis)
    assert (out.shape, out.op.name) == (want.shape, "T_one_hot")
    check_op([ind, out], [ix], want)


def test_one_hot_errors():
    ind = te.placeholder((2,), "int32", "ind")
    with pytest.raises(DSLError, match=r"topi.one_hot: depth must be >= 1"):
        topi.one_hot(ind, 1, 0, 0, -1, "int32")
    with pytest.raises(DSLError, match=r"topi.one_hot: axis 2 is out of range for a 2-D"):
        topi.one_hot(ind, 1, 0, 3, 2, "int32")


# -- strided_slice, split, stack, tile, repeat, flip -----------------------------------------

SLICES = [
    ([1, 0], [3, 5], None, None, np.s_[1:3, 0:5]),
    ([0, 4], [4, -7], [2, -1], None, np.s_[0:4:2, 4:-7:-1]),
    ([-3], [100], [1], None, np.s_[-3:100]),
    ([6, 1], [-100, 4], [-3, 2], None, np.s_[6:-100:-3, 1:4:2]),
    ([1], [-1], None, [1], np.s_[:, 1:-1]),
    ([-1, 3], [-6, 0], [-2, -1], [1, 0], np.s_[3:0:-1, -1:-6:-2]),
]


@pytest.mark.parametrize(("begin", "end", "strides", "axes", "want"), SLICES, ids=str)
def test_strided_slice(begin, end, strides, axes, want, check_op, rand):
    a = te.placeholder((7, 6), "float32", "a")
    x = rand((7, 6))
    out = topi.strided_slice(a, begin, end, strides, axes)
    assert out.op.name == ("T_strided_slice_with_axes" if axes else "T_strided_slice")
    check_op([a, out], [x], x[want].copy())


def test_strided_slice_size_mode_and_default_end(check_op, rand):
    a = te.placeholder((5, 4, 3), "int32", "a")
    x = rand((5, 4, 3), "int32")
    out = topi.strided_slice(a, [1, -3], [2, -1], slice_mode="size")
    check_op([a, out], [x], x[1:3, 1:].copy())
    # an omitted end with a negative stride stops before 0, as TVM's does
    out = topi.strided_slice(a, [None], [None], [-1])
    check_op([a, out], [x], x[:0:-1].copy())


def test_strided_slice_errors():
    a = te.placeholder((5, 4), "float32", "a")
    b = te.placeholder((2,), "int32", "b")
    with pytest.raises(DSLError, match=r"begin must be Python ints .*pass a list"):
        topi.strided_slice(a, b, [3, 3])
    with pytest.raises(DSLError, match=r"select nothing of axis 0 \(size 5\)"):
        topi.strided_slice(a, [3], [1])
    with pytest.raises(DSLError, match=r"stride of axis 1 is 0"):
        topi.strided_slice(a, [0, 0], [2, 2], [1, 0])


@pytest.mark.parametrize(("sections", "axis"), [(3, 0), ([1, 4], 1), ([2], -1), (1, 1)])
def test_split(sections, axis, check_op, rand):
    a = te.placeholder((6, 5, 3), "float32", "a")
    x = rand((6, 5, 3))
    outs = topi.split(a, sections, axis)
    assert isinstance(outs, list)
    want = np.split(x, sections, axis)
    assert len(outs) == len(want)
    assert outs[0].op.name == ("T_split" if isinstance(sections, list) else "T_split_sections")
    check_op([a, *outs], [x], [w.copy() for w in want])


def test_split_errors():
    a = te.placeholder((6, 5), "float32", "a")
    with pytest.raises(DSLError, match=r"4 sections do not divide axis 0 of size 6"):
        topi.split(a, 4)
    with pytest.raises(DSLError, match=r"strictly increasing and inside \(0, 5\)"):
        topi.split(a, [3, 2], axis=1)


@pytest.mark.parametrize("axis", [0, 1, 2, -1, -3])
def test_stack(axis, check_op, rand):
    ts = [te.placeholder((3, 5), "int32", f"t{k}") for k in range(3)]
    xs = [rand((3, 5), "int32") for _ in ts]
    out = topi.stack(ts, axis)
    assert out.op.name == "T_stack"
    check_op([*ts, out], xs, np.stack(xs, axis))


def test_stack_errors():
    a, b = te.placeholder((3,), "float32", "a"), te.placeholder((4,), "float32", "b")
    with pytest.raises(DSLError, match=r"topi.stack: a\[1\] is float32\[4\] but a\[0\]"):
        topi.stack([a, b], 0)
    with pytest.raises(DSLError, match=r"topi.stack: axis 2 is out of range"):
        topi.stack([a, a], 2)


@pytest.mark.parametrize("reps", [(2, 3), (3,), (2, 1, 2), (1, 1)], ids=str)
def test_tile(reps, check_op, rand):
    a = te.placeholder((3, 5), "float32", "a")
    x = rand((3, 5))
    out = topi.tile(a, reps)
    assert (out.op.name, out.op.tag) == ("T_tile", "broadcast")
    check_op([a, out], [x], np.tile(x, reps))


@pytest.mark.parametrize(("repeats", "axis"), [(3, 0), (2, -1), (1, 1)])
def test_repeat(repeats, axis, check_op, rand):
    a = te.placeholder((3, 5), "float32", "a")
    x = rand((3, 5))
    out = topi.repeat(a, repeats, axis)
    assert out.op.name == "T_repeat"
    check_op([a, out], [x], np.repeat(x, repeats, axis))


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_flip(axis, check_op, rand):
    a = te.placeholder((3, 5, 2), "float32", "a")
    x = rand((3, 5, 2))
    out = topi.flip(a, axis)
    assert out.op.name == "T_reverse_sequence"
    check_op([a, out], [x], np.flip(x, axis).copy())


def test_tile_repeat_errors():
    a = te.placeholder((3, 5), "float32", "a")
    with pytest.raises(DSLError, match=r"topi.tile: reps \(2, 0\) must be"):
        topi.tile(a, (2, 0))
    with pytest.raises(DSLError, match=r"topi.repeat: repeats must be >= 1"):
        topi.repeat(a, 0, 0)
    with pytest.raises(DSLError, match=r"topi.flip: axis 2 is out of range"):
        topi.flip(a, 2)


# -- layout_transform and matmul -------------------------------------------------------------


def test_layout_transform_permutation(check_op, rand):
    a = te.placeholder((2, 3, 5, 7), "float32", "a")
    x = rand((2, 3, 5, 7))
    out = topi.layout_transform(a, "NCHW", "NHWC")
    assert (out.shape, out.op.name) == ((2, 5, 7, 3), "T_layout_trans")
    check_op([a, out], [x], x.transpose(0, 2, 3, 1).copy())
    assert topi.layout_transform(a, "NCHW", "NCHW") is a


def test_layout_transform_split_axes(check_op, rand):
    a = te.placeholder((1, 8, 3, 5), "float32", "a")
    x = rand((1, 8, 3, 5))
    packed = topi.layout_transform(a, "NCHW", "NCHW4c")
    assert packed.shape == (1, 2, 3, 5, 4)
    want = x.reshape(1, 2, 4, 3, 5).transpose(0, 1, 3, 4, 2)
    check_op([a, packed], [x], want.copy())
    back = topi.layout_transform(packed, "NCHW4c", "NHWC")
    check_op([a, back], [x], x.transpose(0, 2, 3, 1).copy())
    # a split that does not divide the axis pads with zeros, as TVM's
    odd = te.placeholder((1, 6, 2, 2), "float32", "odd")
    xo = rand((1, 6, 2, 2))
    out = topi.layout_transform(odd, "NCHW", "NCHW4c")
    padded = np.concatenate([xo, np.zeros((1, 2, 2, 2), "float32")], axis=1)
    check_op([odd, out], [xo], padded.reshape(1, 2, 4, 2, 2).transpose(0, 1, 3, 4, 2).copy())


def test_layout_transform_errors():
    a = te.placeholder((2, 3, 5, 7), "float32", "a")
    with pytest.raises(DSLError, match=r"cannot convert 'NCHW' to 'NCDH'"):
        topi.layout_transform(a, "NCHW", "NCDH")
    with pytest.raises(DSLError, match=r"'NCHW4' is not a layout|ends in a number"):
        topi.layout_transform(a, "NCHW", "NCHW4")
    with pytest.raises(DSLError, match=r"src_layout 'NCH' has 3 axes but array is 4-D"):
        topi.layout_transform(a, "NCH", "NHC")


@pytest.mark.parametrize("transp_a", [False, True])
@pytest.mark.parametrize("transp_b", [False, True])
def test_matmul(transp_a, transp_b, check_op, rand):
    sa, sb = ((7, 3) if transp_a else (3, 7)), ((5, 7) if transp_b else (7, 5))
    a, b = te.placeholder(sa, "float32", "a"), te.placeholder(sb, "float32", "b")
    x, y = rand(sa), rand(sb)
    out = topi.matmul(a, b, transp_a, transp_b)
    assert (out.shape, out.op.name, out.op.tag) == ((3, 5), "T_matmul", "matmul")
    want = (x.T if transp_a else x).astype("float64") @ (y.T if transp_b else y)
    check_op([a, b, out], [x, y], want.astype("float32"))


def test_matmul_errors():
    a, b = te.placeholder((3, 4), "float32", "a"), te.placeholder((5, 6), "float32", "b")
    with pytest.raises(DSLError, match=r"topi.matmul: reduction sizes differ"):
        topi.matmul(a, b)
    with pytest.raises(DSLError, match=r"topi.matmul: a is float32 but b is int32"):
        topi.matmul(a, te.placeholder((4, 2), "int32", "c"))


def test_narrow_and_float_indices(check_op, rand):
    a = te.placeholder((2, 200), "float32", "a")
    ind = te.placeholder((3,), "int8", "ind")  # int8 data indexing an axis of 200
    x, ix = rand((2, 200)), np.array([-5, 99, 127], "int8")
    check_op([a, ind, topi.take(a, ind, axis=1)], [x, ix], x[:, [0, 99, 127]])
    fi = te.placeholder((2, 2), "float32", "fi")  # gather_nd truncates float indices
    fx = np.array([[1.7, 0.2], [199.9, 3.5]], "float32")
    check_op([a, fi, topi.gather_nd(a, fi)], [x, fx], x[[1, 0], [199, 3]])
    out = topi.arange(E.const(2), E.const(9), E.const(3), "int32")  # constants, as TVM allows
    check_op([out], [], np.arange(2, 9, 3, dtype="int32"))
