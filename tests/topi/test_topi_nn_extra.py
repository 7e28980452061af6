"""Normalisations, adaptive pooling, upsampling, rearrangements and the small nn operators
against the numpy references (``topi.testing``), at odd shapes, plus their argument errors.

Each DAG runs on the reference evaluator and as LLVM code built by ``tvm.build`` with the
default schedule (``check_op``).
"""

import numpy as np
import pytest

import ansor_lab as tvm
from ansor_lab import te, topi
from ansor_lab.errors import DSLError
from ansor_lab.topi import testing

nn = topi.nn


def _ph(shape, name="x", dtype="float32"):
    return te.placeholder(shape, dtype, name)


# -- prelu, flatten, dilate, fast_softmax -------------------------------------------------


@pytest.mark.parametrize("axis,slope_len", [(1, 5), (-1, 7), (1, 1)])
def test_prelu(axis, slope_len, check_op, rand):
    x, slope = _ph((3, 5, 7)), _ph((slope_len,), "slope")
    out = nn.prelu(x, slope, axis)
    assert out.op.tag == "broadcast"
    xv, sv = rand((3, 5, 7)), rand((slope_len,))
    shape = [1, 1, 1]
    shape[axis] = slope_len
    want = np.where(xv > 0, xv, xv * sv.reshape(shape)).astype("float32")
    check_op([x, slope, out], [xv, sv], want)
    if slope_len == 1:  # TVM's extra stage broadcasting a single slope
        assert "slope_broadcasted" in [t.op.name for t in out.op.input_tensors]


def test_prelu_errors():
    with pytest.raises(DSLError, match="one slope per channel"):
        nn.prelu(_ph((3, 5, 7)), _ph((4,), "s"))
    with pytest.raises(DSLError, match="must be 1-D"):
        nn.prelu(_ph((3, 5)), _ph((5, 1), "s"))
    with pytest.raises(DSLError, match="out of range"):
        nn.prelu(_ph((3, 5)), _ph((5,), "s"), axis=2)


@pytest.mark.parametrize("shape", [(3, 5, 7, 2), (4, 1, 3), (5,)])
def test_flatten(shape, check_op, rand):
    x = _ph(shape)
    out = nn.flatten(x)
    assert out.shape == (shape[0], int(np.prod(shape[1:])))
    assert out.op.tag == "injective"
    xv = rand(shape)
    check_op([x, out], [xv], xv.reshape(shape[0], -1))


@pytest.mark.parametrize(
    "shape,strides,value,dtype",
    [
        ((3, 4), (2, 3), 0.0, "float32"),
        ((2, 3, 5), (1, 2, 1), -1.5, "float64"),
        ((3, 2), (3, 1), 7, "int32"),
    ],
)
def test_dilate(shape, strides, value, dtype, check_op, rand):
    x = _ph(shape, dtype=dtype)
    out = nn.dilate(x, strides, value)
    assert out.op.name == "DilatedInput" and out.op.tag == "injective,dilate"
    xv = rand(shape, dtype)
    check_op([x, out], [xv], testing.dilate_python(xv, strides, value))


def test_dilate_errors():
    with pytest.raises(DSLError, match="one stride per dimension"):
        nn.dilate(_ph((3, 4)), (2,))
    with pytest.raises(DSLError, match="positive"):
        nn.dilate(_ph((3, 4)), (0, 1))


@pytest.mark.parametrize("axis", [-1, 0])
def test_fast_softmax_equals_softmax(axis, check_op, rand):
    x = _ph((7, 13))
    out = nn.fast_softmax(x, axis)
    assert out.op.name == "T_softmax_norm" and out.op.tag == "fast_softmax_output"
    xv = rand((7, 13))
    check_op([x, out], [xv], testing.softmax_python(xv, axis))


# -- normalisations -----------------------------------------------------------------------


@pytest.mark.parametrize("training", [False, True])
@pytest.mark.parametrize(
    "shape,axis,center,scale",
    [((2, 5, 3, 7), None, True, True), ((3, 7, 5), -1, False, True), ((9, 4), 1, True, False)],
)
def test_batch_norm(shape, axis, center, scale, training, check_op, rand):
    ax = 1 if axis is None else axis % len(shape)
    c = shape[ax]
    x = _ph(shape)
    g, b, mm, mv = (_ph((c,), n) for n in ("gamma", "beta", "mean", "var"))
    outs = nn.batch_norm(x, g, b, mm, mv, axis, 1e-3, center, scale, training, 0.25)
    assert isinstance(outs, list) and len(outs) == 3
    vals = [rand(shape), rand((c,)), rand((c,)), rand((c,)), rand((c,), low=0.5, high=2.0)]
    want = testing.batch_norm(*vals, ax, 1e-3, center, scale, training, 0.25)
    check_op([x, g, b, mm, mv, *outs], vals, want, rtol=1e-4, atol=1e-5)


def test_batch_norm_defaults_and_errors(check_op, rand):
    x, c = _ph((2, 3, 5)), 3
    params = [_ph((c,), n) for n in ("g", "b", "m", "v")]
    out, mean, var = nn.batch_norm(x, *params)  # axis 1, eps 1e-5, inference
    assert out.op.name == "T_batch_norm"
    vals = [rand((2, 3, 5)), rand((c,)), rand((c,)), rand((c,)), rand((c,), low=0.5)]
    want = testing.batch_norm(*vals, 1, 1e-5, True, True, False, 0.1)
    check_op([x, *params, out, mean, var], vals, want, rtol=1e-4, atol=1e-5)
    with pytest.raises(DSLError, match=r"moving_var has shape \(4,\)"):
        nn.batch_norm(x, *params[:3], _ph((4,), "v"))
    with pytest.raises(DSLError, match="momentum"):
        nn.batch_norm(x, *params, training=True, momentum=1.5)
    with pytest.raises(DSLError, match="float tensor"):
        nn.batch_norm(_ph((2, 3), dtype="int32"), *params)


@pytest.mark.parametrize(
    "shape,channel_axis,axis,with_beta",
    [((2, 3, 5, 7), 1, None, True), ((2, 5, 7, 3), 3, [1, 2], False), ((3, 4, 11), 1, (2,), True)],
)
def test_instance_norm(shape, channel_axis, axis, with_beta, check_op, rand):
    c = shape[channel_axis]
    x, g = _ph(shape), _ph((c,), "gamma")
    b = _ph((c,), "beta") if with_beta else None
    out = nn.instance_norm(x, g, b, channel_axis, axis, 1e-4)
    assert out.op.name == "T_instance_norm"
    red = [a for a in range(len(shape)) if a not in (0, channel_axis)] if axis is None else axis
    xv, gv, bv = rand(shape), rand((c,)), rand((c,))
    want = testing.instance_norm_python(
        xv, gv, bv if with_beta else None, red, 1e-4, channel_axis=channel_axis
    )
    args, inputs = ([x, g, b, out], [xv, gv, bv]) if with_beta else ([x, g, out], [xv, gv])
    check_op(args, inputs, want, rtol=1e-4, atol=1e-5)


def test_instance_norm_errors():
    x, g = _ph((2, 3, 5, 7)), _ph((3,), "g")
    with pytest.raises(DSLError, match="channel_axis"):
        nn.instance_norm(x, g, None, [2, 3])
    with pytest.raises(DSLError, match="gamma has shape"):
        nn.instance_norm(x, _ph((5,), "g"), None)
    with pytest.raises(DSLError, match="no axis to normalise"):
        nn.instance_norm(_ph((4, 3)), g, None)


@pytest.mark.parametrize(
    "shape,groups,channel_axis,axes,affine",
    [
        ((2, 6, 5, 3), 3, 1, [2, 3], True),
        ((3, 7, 8), 4, 2, [1], True),
        ((2, 9, 5), 9, 1, [2], False),
        ((1, 4, 5), 1, 1, [], True),
    ],
)
def test_group_norm(shape, groups, channel_axis, axes, affine, check_op, rand):
    c = shape[channel_axis]
    x = _ph(shape)
    g, b = (_ph((c,), "gamma"), _ph((c,), "beta")) if affine else (None, None)
    out = nn.group_norm(x, g, b, groups, channel_axis, axes, 1e-4)
    assert out.op.name == "T_group_norm" and out.op.tag == "injective"
    xv, gv, bv = rand(shape), rand((c,)), rand((c,))
    gb = (gv, bv) if affine else (None, None)
    want = testing.group_norm_python(xv, *gb, groups, channel_axis, axes, 1e-4)
    args, inputs = ([x, g, b, out], [xv, gv, bv]) if affine else ([x, out], [xv])
    check_op(args, inputs, want, rtol=1e-4, atol=1e-5)


def test_group_norm_errors():
    x = _ph((2, 6, 5))
    with pytest.raises(DSLError, match="do not split into num_groups=4"):
        nn.group_norm(x, None, None, 4, 1, [2])
    with pytest.raises(DSLError, match="contain the channel axis"):
        nn.group_norm(x, None, None, 3, 1, [1, 2])


@pytest.mark.parametrize(
    "shape,axis,dtype",
    [
        ((5, 13), [-1], "float32"),
        ((3, 4, 7), (1, 2), "float64"),
        ((3, 5), [0, 1], "float32"),
        ((4, 9), 1, "float16"),
    ],
)
def test_rms_norm(shape, axis, dtype, check_op, rand):
    axes = sorted(a % len(shape) for a in (axis if isinstance(axis, (list, tuple)) else [axis]))
    wshape = tuple(shape[a] for a in axes)
    x, w = _ph(shape, dtype=dtype), _ph(wshape, "weight", dtype)
    out = nn.rms_norm(x, w, axis, 1e-5)
    assert out.op.name == "T_rms_norm" and out.dtype == dtype
    xv, wv = rand(shape, dtype), rand(wshape, dtype)
    want = testing.rms_norm_python(xv, wv, axis, 1e-5)
    check_op([x, w, out], [xv, wv], want, rtol=1e-4 if dtype != "float16" else 1e-2)


def test_rms_norm_without_weight_and_errors(check_op, rand):
    x = _ph((3, 7))
    out = nn.rms_norm(x, None, [1])
    xv = rand((3, 7))
    check_op([x, out], [xv], testing.rms_norm_python(xv, None, [1]), rtol=1e-4)
    with pytest.raises(DSLError, match="weight has shape"):
        nn.rms_norm(x, _ph((3,), "w"), [1])
    with pytest.raises(DSLError, match="axis is empty"):
        nn.rms_norm(x, None, [])


@pytest.mark.parametrize(
    "shape,axis,eps", [((2, 5, 3), (1,), 1e-3), ((3, 7), None, 1e-12), ((4, 3, 5), [0, 2], 10.0)]
)
def test_l2_normalize(shape, axis, eps, check_op, rand):
    x = _ph(shape)
    out = nn.l2_normalize(x, eps, axis)
    xv = rand(shape)
    check_op([x, out], [xv], testing.l2_normalize_python(xv, eps, axis), rtol=1e-4)


@pytest.mark.parametrize(
    "shape,size,axis",
    [((2, 7, 3, 5), 5, 1), ((1, 3, 4, 6), 3, 3), ((2, 5, 3, 3), 1, 1), ((3, 4, 9), 11, -1)],
)
def test_lrn(shape, size, axis, check_op, rand):
    x = _ph(shape)
    out = nn.lrn(x, size, axis, 0.01, 0.75, 1.5)
    assert out.op.name == "T_lrn"
    xv = rand(shape)
    want = testing.lrn_python(xv, size, axis, 1.5, 0.01, 0.75)
    check_op([x, out], [xv], want, rtol=1e-4)


def test_lrn_errors():
    with pytest.raises(DSLError, match="odd"):
        nn.lrn(_ph((1, 4, 3, 3)), 4)
    with pytest.raises(DSLError, match="float tensor"):
        nn.lrn(_ph((1, 4, 3, 3), dtype="int32"), 3)


# -- adaptive pooling ---------------------------------------------------------------------


@pytest.mark.parametrize("pool_type", ["max", "avg"])
@pytest.mark.parametrize(
    "op,shape,out_size,layout",
    [
        ("adaptive_pool", (2, 3, 7, 9), (3, 4), "NCHW"),
        ("adaptive_pool", (1, 8, 6, 2), (4, 5), "NHWC"),
        ("adaptive_pool", (1, 2, 5, 5), 1, "NCHW"),
        ("adaptive_pool1d", (2, 3, 11), (4,), "NCW"),
        ("adaptive_pool3d", (1, 5, 4, 7, 2), (2, 3, 3), "NDHWC"),
    ],
)
def test_adaptive_pool(op, shape, out_size, layout, pool_type, check_op, rand):
    x = _ph(shape)
    out = getattr(nn, op)(x, out_size, pool_type, layout)
    assert out.op.name == f"adaptive_pool_{pool_type}"
    xv = rand(shape)
    want = testing.adaptive_pool(xv, out_size, pool_type, layout)
    check_op([x, out], [xv], want)


def test_adaptive_pool_int_avg_truncates(check_op, rand):
    x = _ph((1, 2, 7, 5), dtype="int32")
    out = nn.adaptive_pool(x, (3, 2), "avg")
    xv = rand((1, 2, 7, 5), "int32", -20, 20)
    check_op([x, out], [xv], testing.adaptive_pool(xv, (3, 2), "avg", "NCHW"))


def test_adaptive_pool_errors():
    with pytest.raises(DSLError, match="layout 'NCW'"):
        nn.adaptive_pool(_ph((1, 2, 3, 4)), (2, 2), "max", "NCW")
    with pytest.raises(DSLError, match="pool_type 'sum'"):
        nn.adaptive_pool(_ph((1, 2, 3, 4)), (2, 2), "sum")
    with pytest.raises(DSLError, match="must be an int or 2 ints"):
        nn.adaptive_pool(_ph((1, 2, 3, 4)), (2, 2, 2))


# -- upsampling, depth/space --------------------------------------------------------------


@pytest.mark.parametrize("method", ["nearest_neighbor", "bilinear"])
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize(
    "shape,scale,layout",
    [
        ((1, 2, 3, 5), (2, 3), "NCHW"),
        ((2, 5, 4, 3), (1.5, 2.2), "NHWC"),
        ((1, 1, 7, 4), (0.5, 1.0), "NCHW"),
    ],
)
def test_upsampling(shape, scale, layout, method, align_corners, check_op, rand):
    x = _ph(shape)
    out = nn.upsampling(x, scale[0], scale[1], layout, method, align_corners)
    assert out.op.name == "resize" and out.op.tag == "injective"
    xv = rand(shape)
    want = testing.upsampling_python(xv, scale, layout, method, align_corners)
    check_op([x, out], [xv], want)


def test_upsampling_errors():
    x = _ph((1, 2, 3, 4))
    with pytest.raises(DSLError, match="layout 'NCDHW'"):
        nn.upsampling(x, 2, 2, "NCDHW")
    with pytest.raises(DSLError, match="method 'bicubic'"):
        nn.upsampling(x, 2, 2, method="bicubic")
    with pytest.raises(DSLError, match="positive scale"):
        nn.upsampling(x, 0, 2)


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("mode", ["DCR", "CDR"])
def test_depth_to_space(layout, mode, check_op, rand):
    nchw = (2, 12, 3, 5)
    shape = nchw if layout == "NCHW" else (2, 3, 5, 12)
    x = _ph(shape)
    out = nn.depth_to_space(x, 2, layout, mode)
    assert out.op.name == "depth_to_space"
    xv = rand(shape)
    check_op([x, out], [xv], testing.depth_to_space_python(xv, 2, mode, layout))


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_space_to_depth_inverts_depth_to_space(layout, check_op, rand):
    shape = (2, 3, 9, 6) if layout == "NCHW" else (2, 9, 6, 3)
    x = _ph(shape)
    out = nn.space_to_depth(x, 3, layout)
    assert out.op.name == "space_to_depth"
    xv = rand(shape)
    want = testing.space_to_depth_python(xv, 3, layout)
    check_op([x, out], [xv], want)
    np.testing.assert_array_equal(testing.depth_to_space_python(want, 3, "DCR", layout), xv)


def test_depth_space_errors():
    with pytest.raises(DSLError, match="not a multiple of block_size\\*\\*2 = 4"):
        nn.depth_to_space(_ph((1, 6, 2, 2)), 2)
    with pytest.raises(DSLError, match="not a multiple of block_size 2"):
        nn.space_to_depth(_ph((1, 6, 3, 4)), 2)
    with pytest.raises(DSLError, match="layout 'NCW'"):
        nn.space_to_depth(_ph((1, 6, 4, 4)), 2, "NCW")
    with pytest.raises(DSLError, match="mode 'XYZ'"):
        nn.depth_to_space(_ph((1, 8, 2, 2)), 2, mode="XYZ")


def test_a_normalisation_builds_with_tvm_build():
    """The TVM way: create_schedule, tvm.build, call on arrays."""
    x, g, b = _ph((4, 6, 5)), _ph((6,), "g"), _ph((6,), "b")
    out = nn.group_norm(x, g, b, 2, 1, [2])
    s = te.create_schedule(out.op)
    f = tvm.build(s, [x, g, b, out], target="llvm")
    rng = np.random.default_rng(1)
    xv, gv, bv = (rng.standard_normal(t.shape).astype("float32") for t in (x, g, b))
    got = np.empty((4, 6, 5), "float32")
    f(xv, gv, bv, got)
    want = testing.group_norm_python(xv, gv, bv, 2, 1, [2])
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
