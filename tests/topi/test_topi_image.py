"""topi.image (resize1d/2d/3d, crop_and_resize, grid_sample, affine_grid) against numpy.

Every case is built with ``tvm.build(te.create_schedule(out.op), ...)`` on llvm and run
by the reference evaluator (``check_op``), then compared with ``topi.testing``'s numpy
references; a few are also checked against values derived by hand (index arithmetic,
PyTorch's documented results, identities of the operators).
"""

from __future__ import annotations

import numpy as np
import pytest

from ansor_lab import te, topi
from ansor_lab.errors import DSLError, MissingOperatorError
from ansor_lab.topi import testing

METHODS = ("nearest_neighbor", "linear", "cubic")
MODES = (
    "half_pixel",
    "align_corners",
    "asymmetric",
    "pytorch_half_pixel",
    "tf_half_pixel_for_nn",
    "tf_crop_and_resize",
)
CROP = "tf_crop_and_resize"
#: a region of interest partly outside the image: extrapolated pixels at both ends of W
ROI2 = [0.1, -0.2, 0.8, 1.1]


def _channels_last(shape_ncx: tuple, layout: str) -> tuple:
    """An (N, C, spatial...) shape in ``layout``."""
    if layout[1] == "C":
        return shape_ncx
    return (shape_ncx[0],) + tuple(shape_ncx[2:]) + (shape_ncx[1],)


# -- resize against the reference ------------------------------------------------------


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("method", METHODS)
def test_resize2d_matches_the_reference(method, mode, layout, check_op, rand):
    # H upscaled 5 -> 9 and W downscaled 11 -> 4, at once
    shape = _channels_last((2, 3, 5, 11), layout)
    x = te.placeholder(shape, "float32", "x")
    xs = rand(shape)
    out = topi.image.resize2d(x, ROI2, (9, 4), layout, method, mode, extrapolation_value=-7.0)
    assert out.op.name == "resize" and out.op.tag == "injective"
    want = testing.resize2d_python(
        xs, None, layout, method, mode, size=(9, 4), roi=ROI2, extrapolation_value=-7.0
    )
    assert want.shape == _channels_last((2, 3, 9, 4), layout)
    got = check_op([x, out], [xs], want)[0]
    if mode == "tf_crop_and_resize":  # x = -0.2 * 10 + o * 13 / 3: o = 0 and 3 fall outside
        assert (got[..., 0] == -7.0).all() if layout == "NCHW" else (got[:, :, 0] == -7.0).all()


@pytest.mark.parametrize("layout", ["NCW", "NWC"])
@pytest.mark.parametrize("mode", ["half_pixel", "tf_crop_and_resize"])
@pytest.mark.parametrize("method", METHODS)
def test_resize1d_matches_the_reference(method, mode, layout, check_op, rand):
    shape = _channels_last((2, 3, 7), layout)
    x = te.placeholder(shape, "float32", "x")
    xs = rand(shape)
    for size in (13, 3):
        out = topi.image.resize1d(x, [-0.1, 0.9], (size,), layout, method, mode)
        want = testing.resize1d_python(
            xs, None, layout, method, mode, size=(size,), roi=[-0.1, 0.9]
        )
        check_op([x, out], [xs], want)


@pytest.mark.parametrize(
    "method,layout,mode,size",
    [
        ("nearest_neighbor", "NDHWC", "tf_crop_and_resize", (5, 3, 7)),
        ("linear", "NCDHW", "tf_crop_and_resize", (5, 3, 7)),
        ("linear", "NDHWC", "half_pixel", (2, 7, 3)),
        # H kept at 4 under align_corners: one tap there, 4 x 1 x 4 in all (a quicker build)
        ("cubic", "NCDHW", "align_corners", (5, 4, 7)),
    ],
)
def test_resize3d_matches_the_reference(method, layout, mode, size, check_op, rand):
    shape = _channels_last((1, 2, 3, 4, 5), layout)
    x = te.placeholder(shape, "float32", "x")
    xs = rand(shape)
    roi = [0.0, 0.1, -0.1, 1.0, 0.7, 1.2]
    out = topi.image.resize3d(x, roi, size, layout, method, mode, extrapolation_value=9)
    want = testing.resize3d_python(
        xs, None, layout, method, mode, size=size, roi=roi, extrapolation_value=9
    )
    check_op([x, out], [xs], want)


@pytest.mark.parametrize("mode", ["half_pixel", "asymmetric", "align_corners"])
@pytest.mark.parametrize(
    "rounding", ["", "round", "floor", "ceil", "round_prefer_floor", "round_prefer_ceil"]
)
def test_nearest_rounding_methods_match_the_reference(rounding, mode, check_op, rand):
    # the first size puts coordinates on exact halves: asymmetric 4 -> 8 and align_corners
    # 4 -> 7 at o / 2, half_pixel 4 -> 3 at (o + 0.5) * 4 / 3 - 0.5 = 1.5 for o = 1
    x = te.placeholder((1, 2, 4), "float32", "x")
    xs = rand((1, 2, 4))
    for size in {"asymmetric": (8, 3), "align_corners": (7, 3), "half_pixel": (3, 9)}[mode]:
        out = topi.image.resize1d(
            x, None, (size,), method="nearest_neighbor",
            coordinate_transformation_mode=mode, rounding_method=rounding,
        )  # fmt: skip
        want = testing.resize1d_python(
            xs, None, "NCW", "nearest_neighbor", mode, size=(size,), rounding_method=rounding
        )
        check_op([x, out], [xs], want)


def test_cubic_with_alpha_and_exclude_matches_the_reference(check_op, rand):
    x = te.placeholder((1, 6, 5, 2), "float32", "x")
    xs = rand((1, 6, 5, 2))
    out = topi.image.resize2d(
        x, None, (4, 9), "NHWC", "cubic", "half_pixel", bicubic_alpha=-0.75, bicubic_exclude=1
    )
    want = testing.resize2d_python(
        xs, None, "NHWC", "cubic", "half_pixel", size=(4, 9), bicubic_alpha=-0.75,
        bicubic_exclude=1,
    )  # fmt: skip
    check_op([x, out], [xs], want)


def test_resize_dtypes(check_op, rand):
    x = te.placeholder((1, 2, 5, 3), "int32", "x")
    xs = rand((1, 2, 5, 3), "int32", -50, 50)
    out = topi.image.resize2d(x, None, (7, 4), method="nearest_neighbor")
    assert out.dtype == "int32"
    want = testing.resize2d_python(xs, None, "NCHW", "nearest_neighbor", "half_pixel", size=(7, 4))
    check_op([x, out], [xs], want)
    # linear on ints works in float32 and truncates toward zero; out_dtype keeps floats
    out = topi.image.resize2d(x, None, (7, 4), out_dtype="float32")
    want = testing.resize2d_python(
        xs, None, "NCHW", "linear", "half_pixel", size=(7, 4), out_dtype="float32"
    )
    check_op([x, out], [xs], want)
    y = te.placeholder((1, 2, 5, 3), "float64", "y")
    ys = rand((1, 2, 5, 3), "float64")
    out = topi.image.resize2d(y, None, (7, 4), method="cubic")
    assert out.dtype == "float64"
    want = testing.resize2d_python(ys, None, "NCHW", "cubic", "half_pixel", size=(7, 4))
    check_op([y, out], [ys], want)


# -- resize against values derived by hand ---------------------------------------------


def test_nearest_asymmetric_is_index_arithmetic(check_op, rand):
    x = te.placeholder((2, 3, 5, 11), "float32", "x")
    xs = rand((2, 3, 5, 11))
    out = topi.image.resize2d(
        x, None, (9, 4), method="nearest_neighbor", coordinate_transformation_mode="asymmetric"
    )
    rows = np.arange(9) * 5 // 9  # floor(o * in / out)
    cols = np.arange(4) * 11 // 4
    check_op([x, out], [xs], xs[:, :, rows][:, :, :, cols])


@pytest.mark.parametrize(
    "rounding,index",
    [  # asymmetric 4 -> 8: input coordinate o / 2; the last index clamps to 3
        ("floor", [0, 0, 1, 1, 2, 2, 3, 3]),
        ("ceil", [0, 1, 1, 2, 2, 3, 3, 3]),
        ("round", [0, 1, 1, 2, 2, 3, 3, 3]),  # half away from zero
        ("round_prefer_floor", [0, 0, 1, 1, 2, 2, 3, 3]),
        ("round_prefer_ceil", [0, 1, 1, 2, 2, 3, 3, 3]),
    ],
)
def test_nearest_rounding_by_hand(rounding, index, check_op):
    x = te.placeholder((1, 1, 4), "float32", "x")
    xs = np.array([[[10.0, 11.0, 12.0, 13.0]]], "float32")
    out = topi.image.resize1d(
        x, None, (8,), method="nearest_neighbor", coordinate_transformation_mode="asymmetric",
        rounding_method=rounding,
    )  # fmt: skip
    check_op([x, out], [xs], xs[:, :, index])


@pytest.mark.parametrize("mode", ["half_pixel", "pytorch_half_pixel"])
def test_bilinear_equals_pytorch_interpolate_without_align_corners(mode, check_op):
    # F.interpolate(torch.tensor([[[[1., 2.], [3., 4.]]]]), size=(4, 4), mode="bilinear",
    # align_corners=False): input x = (o + 0.5) / 2 - 0.5 = -0.25, 0.25, 0.75, 1.25, so
    # each axis takes p0, (3 p0 + p1) / 4, (p0 + 3 p1) / 4, p1
    x = te.placeholder((1, 1, 2, 2), "float32", "x")
    out = topi.image.resize2d(x, None, (4, 4), coordinate_transformation_mode=mode)
    want = np.array(
        [
            [1.0, 1.25, 1.75, 2.0],
            [1.5, 1.75, 2.25, 2.5],
            [2.5, 2.75, 3.25, 3.5],
            [3.0, 3.25, 3.75, 4.0],
        ],
        "float32",
    ).reshape(1, 1, 4, 4)
    check_op([x, out], [np.array([[[[1, 2], [3, 4]]]], "float32")], want)


def test_bilinear_align_corners_by_hand(check_op):
    # align_corners: x = o * (2 - 1) / (3 - 1): 0, 0.5, 1 on both axes
    x = te.placeholder((1, 2, 2, 1), "float32", "x")
    out = topi.image.resize2d(
        x, None, (3, 3), "NHWC", coordinate_transformation_mode="align_corners"
    )
    want = np.array([[1.0, 1.5, 2.0], [2.0, 2.5, 3.0], [3.0, 3.5, 4.0]], "float32")
    xs = np.array([[1, 2], [3, 4]], "float32").reshape(1, 2, 2, 1)
    check_op([x, out], [xs], want.reshape(1, 3, 3, 1))


def test_catmull_rom_cubic_reproduces_a_ramp(check_op):
    # alpha = -0.5 reproduces linear data wherever the four taps are inside the image
    x = te.placeholder((1, 1, 9), "float32", "x")
    xs = (2.0 * np.arange(9) + 1.0).astype("float32").reshape(1, 1, 9)
    out = topi.image.resize1d(
        x, None, (17,), method="cubic", coordinate_transformation_mode="align_corners"
    )
    want = testing.resize1d_python(xs, None, "NCW", "cubic", "align_corners", size=(17,))
    got = check_op([x, out], [xs], want)[0]
    coord = np.arange(17) * 8 / 16  # o / 2
    interior = (coord >= 1) & (coord < 7)
    np.testing.assert_allclose(got[0, 0, interior], 2.0 * coord[interior] + 1.0, rtol=1e-6)


def test_tf_crop_and_resize_over_the_whole_image_is_align_corners(check_op, rand):
    x = te.placeholder((1, 2, 5, 7), "float32", "x")
    xs = rand((1, 2, 5, 7))
    corners = testing.resize2d_python(xs, None, "NCHW", "linear", "align_corners", size=(9, 3))
    out = topi.image.resize2d(x, [0, 0, 1, 1], (9, 3), coordinate_transformation_mode=CROP)
    check_op([x, out], [xs], corners)
    # a roi twice the image: the outer quarters are extrapolated on each axis
    roi = [-0.5, -0.5, 1.5, 1.5]
    kw = dict(coordinate_transformation_mode=CROP, extrapolation_value=5.0)
    out = topi.image.resize2d(x, roi, (9, 9), **kw)
    want = testing.resize2d_python(xs, None, "NCHW", "linear", size=(9, 9), roi=roi, **kw)
    got = check_op([x, out], [xs], want)[0]
    inside_rows = (np.arange(9) >= 2) & (np.arange(9) <= 6)  # y = -2 + o: inside for 2..6
    assert (got[:, :, ~inside_rows] == 5.0).all() and (got[:, :, :, [0, 1, 7, 8]] == 5.0).all()
    assert (got[:, :, 2:7, 2:7] != 5.0).all()


# -- crop_and_resize -----------------------------------------------------------------------

BOXES = np.array(
    [
        [0.1, 0.2, 0.9, 0.7],
        [0.5, -0.3, 1.2, 0.4],  # partly outside: extrapolated
        [0.8, 0.9, 0.2, 0.1],  # flipped
        [0.0, 0.0, 1.0, 1.0],
    ],
    "float32",
)


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("method", ["bilinear", "nearest_neighbor"])
def test_crop_and_resize_matches_the_reference(method, layout, check_op, rand):
    shape = _channels_last((2, 3, 7, 9), layout)
    x = te.placeholder(shape, "float32", "x")
    boxes = te.placeholder((4, 4), "float32", "boxes")
    indices = te.placeholder((4,), "int32", "indices")
    xs = rand(shape)
    ind = np.array([1, 0, 5, -2], "int32")  # out of range: clamped into the batch
    for crop in ((5, 4), (1, 3)):
        out = topi.image.crop_and_resize(
            x, boxes, indices, crop, layout, method, extrapolation_value=-3.0
        )
        assert out.op.name == "crop_and_resize"
        want = testing.crop_and_resize_python(
            xs, BOXES, ind, crop, layout, method, extrapolation_value=-3.0
        )
        assert want.shape == _channels_last((4, 3) + crop, layout)
        check_op([x, boxes, indices, out], [xs, BOXES, ind], want)


def test_crop_and_resize_by_hand(check_op, rand):
    x = te.placeholder((2, 1, 3, 4), "float32", "x")
    boxes = te.placeholder((3, 4), "float32", "boxes")
    indices = te.placeholder((3,), "int32", "indices")
    xs = rand((2, 1, 3, 4))
    bx = np.array([[0, 0, 1, 1], [1, 0, 0, 1], [-1, 0, 0, 1]], "float32")
    out = topi.image.crop_and_resize(x, boxes, indices, (3, 4), extrapolation_value=None)
    want = np.stack(
        [
            xs[1],  # the whole image, at its own size: a copy
            xs[0, :, ::-1],  # y1 = 1, y2 = 0: upside down
            # y = -2 + o: rows 0, 1 outside (0, the default), row 2 reads row 0
            np.concatenate([np.zeros((1, 2, 4), "float32"), xs[1, :, :1]], axis=1),
        ]
    )
    check_op([x, boxes, indices, out], [xs, bx, np.array([1, 0, 1], "int32")], want)


# -- grid_sample and affine_grid -----------------------------------------------------------


@pytest.mark.parametrize(
    "method,padding,align_corners",
    [
        ("bilinear", "zeros", True),
        ("bilinear", "border", False),
        ("bilinear", "reflection", False),
        ("nearest", "zeros", False),
        ("nearest", "reflection", True),
        ("bicubic", "zeros", False),
        ("bicubic", "border", True),
        ("bicubic", "reflection", True),
    ],
)
def test_grid_sample_matches_the_reference(method, padding, align_corners, check_op, rand):
    data = te.placeholder((2, 3, 5, 7), "float32", "data")
    grid = te.placeholder((2, 2, 4, 6), "float32", "grid")
    ds, gs = rand((2, 3, 5, 7)), rand((2, 2, 4, 6), low=-2.5, high=2.5)  # much of it outside
    out = topi.image.grid_sample(data, grid, method, "NCHW", padding, align_corners)
    assert out.shape == (2, 3, 4, 6) and out.op.tag == "grid_sample"
    want = testing.grid_sample_python(ds, gs, method, "NCHW", padding, align_corners)
    check_op([data, grid, out], [ds, gs], want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("method,padding", [("bilinear", "zeros"), ("nearest", "reflection")])
def test_grid_sample_3d_matches_the_reference(method, padding, check_op, rand):
    data = te.placeholder((1, 2, 3, 4, 5), "float32", "data")
    grid = te.placeholder((1, 3, 2, 3, 4), "float32", "grid")
    ds, gs = rand((1, 2, 3, 4, 5)), rand((1, 3, 2, 3, 4), low=-1.5, high=1.5)
    out = topi.image.grid_sample(data, grid, method, "NCDHW", padding, False)
    want = testing.grid_sample_python(ds, gs, method, "NCDHW", padding, False)
    check_op([data, grid, out], [ds, gs], want, rtol=1e-4, atol=1e-4)


def test_affine_grid_by_hand_and_against_the_reference(check_op, rand):
    theta = te.placeholder((1, 2, 3), "float32", "theta")
    out = topi.image.affine_grid(theta, (3, 5))
    assert out.shape == (1, 2, 3, 5)
    identity = np.array([[[1, 0, 0], [0, 1, 0]]], "float32")
    xs = np.tile(np.array([-1.0, -0.5, 0.0, 0.5, 1.0], "float32"), (3, 1))
    ys = np.tile(np.array([[-1.0], [0.0], [1.0]], "float32"), (1, 5))
    check_op([theta, out], [identity], np.stack([xs, ys])[None])
    for align, target in ((True, (4, 1)), (False, (3, 6))):
        out = topi.image.affine_grid(theta, target, align)
        ts = rand((1, 2, 3))
        check_op([theta, out], [ts], testing.affine_grid_python(ts, target, align))
    # without align_corners the centres of 4 pixels sit at -0.75, -0.25, 0.25, 0.75
    out = topi.image.affine_grid(theta, (1, 4), align_corners=False)
    want = np.array([[[[-0.75, -0.25, 0.25, 0.75]], [[0.0] * 4]]], "float32")
    check_op([theta, out], [identity], want)


def test_identity_grid_samples_the_input_and_a_shift_pads_with_zeros(check_op, rand):
    data = te.placeholder((1, 2, 4, 5), "float32", "data")
    theta = te.placeholder((1, 2, 3), "float32", "theta")
    grid = topi.image.affine_grid(theta, (4, 5))
    out = topi.image.grid_sample(data, grid)  # bilinear, zeros, align_corners
    ds = rand((1, 2, 4, 5))
    check_op([data, theta, out], [ds, np.array([[[1, 0, 0], [0, 1, 0]]], "float32")], ds)
    # x + 0.5 in normalised units is one pixel (of 4 steps over [-1, 1]) to the right
    shifted = np.concatenate([ds[..., 1:], np.zeros((1, 2, 4, 1), "float32")], axis=-1)
    check_op([data, theta, out], [ds, np.array([[[1, 0, 0.5], [0, 1, 0]]], "float32")], shifted)


# -- what is refused, and how --------------------------------------------------------------

X2 = te.placeholder((1, 3, 5, 7), "float32", "x2")
#: resize2d(X2, ...) keywords that are refused, and what the error says
RESIZE_BAD = [
    (dict(method="bilinear"), "write method='linear'"),
    (dict(method="area"), "use one of 'nearest_neighbor'"),
    (dict(layout="NCHW4c"), r"layout_transform\(x, 'NCHW4c', 'NCHW'\)"),
    (dict(layout="HWCN"), "use 'NCHW' or 'NHWC'"),
    (dict(coordinate_transformation_mode="tf"), "coordinate_transformation_mode 'tf' is not"),
    (dict(rounding_method="nearest"), "rounding_method 'nearest' is not supported"),
    (dict(coordinate_transformation_mode=CROP), "needs roi, 4 numbers"),
    (dict(coordinate_transformation_mode=CROP, roi=[0, 0, te.var("n"), 1]), "constant number"),
    (dict(size=(3,)), "size must be 2 ints"),
    (dict(size=(3, 0)), "must be positive"),
    (dict(output_shape=(1, 3, 3, 4)), "leave output_shape None"),
    (dict(method="cubic", out_dtype="float32", bicubic_alpha="x"), "bicubic_alpha must be"),
]


@pytest.mark.parametrize("kwargs,match", RESIZE_BAD)
def test_unsupported_resize_arguments_say_what_to_write(kwargs, match):
    kwargs = dict(kwargs)
    roi, size = kwargs.pop("roi", None), kwargs.pop("size", (3, 3))
    with pytest.raises(DSLError, match=match):
        topi.image.resize2d(X2, roi, size, **kwargs)


OTHER_BAD = [
    (lambda: topi.image.resize1d(X2, None, (3,)), "must be 3-D"),
    (lambda: topi.image.resize3d(X2, None, (3, 3, 3)), "must be 5-D"),
    (lambda: topi.image.grid_sample(X2, X2), r"grid must have shape \[1, 2, out spatial"),
    (lambda: topi.image.grid_sample(X2, X2, layout="NHWC"), "use 'NCHW'"),
    (lambda: topi.image.grid_sample(X2, X2, padding_mode="wrap"), "padding_mode 'wrap'"),
    (lambda: topi.image.grid_sample(X2, X2, "cubic"), "write method='bicubic'"),
    (lambda: topi.image.affine_grid(X2, (3, 3)), "must be 3-D"),
]


@pytest.mark.parametrize("make,match", OTHER_BAD)
def test_unsupported_arguments_say_what_to_write(make, match):
    with pytest.raises(DSLError, match=match):
        make()


def test_crop_and_resize_and_grid_sample_refusals():
    boxes = te.placeholder((2, 4), "float32", "boxes")
    indices = te.placeholder((2,), "int32", "indices")
    with pytest.raises(DSLError, match="write method='bilinear'"):
        topi.image.crop_and_resize(X2, boxes, indices, (3, 3), method="linear")
    with pytest.raises(DSLError, match=r"boxes must have shape \[num_boxes, 4\] = \(3, 4\)"):
        topi.image.crop_and_resize(X2, boxes, te.placeholder((3,), "int32", "i3"), (3, 3))
    with pytest.raises(DSLError, match="box_indices must be an int tensor"):
        topi.image.crop_and_resize(X2, boxes, te.placeholder((2,), "float32", "f"), (3, 3))
    vol = te.placeholder((1, 2, 3, 4, 5), "float32", "vol")
    grid = te.placeholder((1, 3, 2, 2, 2), "float32", "grid")
    with pytest.raises(DSLError, match="bicubic is 2-D only"):
        topi.image.grid_sample(vol, grid, "bicubic", "NCDHW")


def test_an_unknown_image_operator_is_a_missing_operator():
    with pytest.raises(MissingOperatorError) as err:
        topi.image.resize  # noqa: B018 - TVM's pre-0.8 name: the access is the test
    msg = str(err.value)
    assert "topi.image.resize is not provided" in msg and "resize2d" in msg
    assert not hasattr(topi.image, "dilation2d")
