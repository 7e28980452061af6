"""Every ``topi`` operator at odd and prime shapes, as search fuzzer cases.

One case per public operator of ``topi`` and ``topi.nn`` (plus the convolution variants:
strided, dilated, 1x1, grouped, depthwise, NHWC); ``test_every_topi_operator_has_a_case``
keeps the table complete when an operator is added. Inputs of operators defined on part
of the real line (log, sqrt, rsqrt, power) go through ``abs(x) + 0.5`` first.
"""

from __future__ import annotations

from dag_gen import DagCase

from ansor_lab import te, topi

nn = topi.nn


def _x(shape: tuple, name: str = "x", dtype: str = "float32") -> te.Tensor:
    return te.placeholder(shape, name=name, dtype=dtype)


def _positive(x: te.Tensor) -> te.Tensor:
    return topi.add(topi.abs(x), 0.5)


def _unary(op):
    def build():
        x = _x((7, 13))
        return [x, op(x)]

    return build


def _positive_unary(op):
    def build():
        x = _x((5, 17))
        return [x, op(_positive(x))]

    return build


def _binary(op, positive_b: bool = False):
    def build():
        a, b = _x((11, 1, 9), "a"), _x((5, 1), "b")  # broadcasts to (11, 5, 9)
        return [a, b, op(a, _positive(b) if positive_b else b)]

    return build


def _int_unary(op):
    def build():
        x = _x((7, 13), dtype="int32")
        return [x, op(x)]

    return build


def _int_binary(op):
    def build():
        a, b = _x((11, 1, 9), "a", "int32"), _x((5, 1), "b", "int32")
        return [a, b, op(a, b)]  # shifts by any amount: out of range gives 0 (or the sign)

    return build


def _conv(stride=1, pad=1, dilation=1, k=3, c=5, f=7, hw=11):
    def build():
        data, kernel = _x((1, c, hw, hw - 2), "data"), _x((f, c, k, k), "kernel")
        return [data, kernel, nn.conv2d_nchw(data, kernel, stride, pad, dilation)]

    return build


def _conv_nhwc():
    data, kernel = _x((1, 9, 7, 5), "data"), _x((3, 3, 5, 6), "kernel")
    return [data, kernel, nn.conv2d_nhwc(data, kernel, 2, 1, 1)]


def _conv_generic():
    data, kernel = _x((1, 3, 9, 9), "data"), _x((4, 3, 3, 3), "kernel")
    return [data, kernel, nn.conv2d(data, kernel, 1, 0, 1, data_layout="NCHW")]


def _group_conv():
    data, kernel = _x((1, 6, 9, 7), "data"), _x((9, 2, 3, 3), "kernel")
    return [data, kernel, nn.group_conv2d_nchw(data, kernel, 1, 1, 1, groups=3)]


def _depthwise():
    data, kernel = _x((1, 5, 13, 11), "data"), _x((5, 1, 3, 3), "kernel")
    return [data, kernel, nn.depthwise_conv2d_nchw(data, kernel, 2, 1, 1)]


def _conv1d(layout: str, groups: int = 1):
    def build():
        shape = (1, 6, 23) if layout == "NCW" else (1, 23, 6)
        kshape = (9, 6 // groups, 3) if layout == "NCW" else (3, 6 // groups, 8)
        data, kernel = _x(shape, "data"), _x(kshape, "kernel")
        out = nn.conv1d(data, kernel, 2, 1, 1, groups=groups, data_layout=layout)
        return [data, kernel, out]

    return build


def _conv1d_named(op, layout: str):
    def build():
        data = _x((1, 5, 17) if layout == "NCW" else (1, 17, 5), "data")
        kernel = _x((7, 5, 3) if layout == "NCW" else (3, 5, 7), "kernel")
        return [data, kernel, op(data, kernel, 1, "SAME", 2)]

    return build


def _conv3d(layout: str):
    def build():
        if layout == "NCDHW":
            data, kernel = _x((1, 3, 5, 7, 6), "data"), _x((4, 3, 3, 3, 3), "kernel")
            return [data, kernel, nn.conv3d_ncdhw(data, kernel, 1, 1, 1, 1)]
        data, kernel = _x((1, 5, 7, 6, 3), "data"), _x((3, 3, 3, 3, 4), "kernel")
        return [data, kernel, nn.conv3d_ndhwc(data, kernel, (1, 2, 1), 1, 1, 1)]

    return build


def _conv2d_transpose(k: int = 4, stride=2):
    def build():
        data, kernel = _x((1, 5, 7, 6), "data"), _x((5, 3, k, k), "kernel")
        return [data, kernel, nn.conv2d_transpose_nchw(data, kernel, stride, 1, "float32", 1)]

    return build


def _dense():
    x, w, b = _x((3, 29), "x"), _x((13, 29), "w"), _x((13,), "b")
    return [x, w, b, nn.dense(x, w, b)]


def _gemv():
    x, w = _x((1, 300), "x"), _x((17, 300), "w")
    return [x, w, nn.dense(x, w)]


def _matmul():
    a, b = _x((19, 11), "a"), _x((13, 11), "b")
    return [a, b, nn.matmul(a, b, transpose_b=True)]


def _batch_matmul():
    a, b = _x((3, 7, 11), "a"), _x((3, 5, 11), "b")
    return [a, b, nn.batch_matmul(a, b)]


def _dense_reused():  # enough rows for the transposed-operand packing sketch
    x, w = _x((11, 29), "x"), _x((13, 29), "w")
    return [x, w, nn.dense(x, w)]


def _batch_matmul_reused():  # idem: k[b, j, r] packed with j last
    a, b = _x((2, 9, 7), "a"), _x((2, 13, 7), "b")
    return [a, b, nn.batch_matmul(a, b)]


def _layer_norm():
    x, g, b = _x((7, 31)), _x((31,), "g"), _x((31,), "b")
    return [x, g, b, nn.layer_norm(x, g, b, axis=[-1])]


def _pool(kind):
    def build():
        x = _x((1, 3, 13, 11))
        if kind == "pool2d":
            return [x, nn.pool2d(x, (3, 3), (2, 2), (1, 1), (1, 1, 1, 1), "avg")]
        if kind == "max":
            return [x, nn.max_pool2d(x, 3, 2, 1, 1)]
        if kind == "avg":
            return [x, nn.avg_pool2d(x, 3, 1, 1, (1, 1, 1, 1), count_include_pad=False)]
        return [x, nn.global_pool(x, "avg")]

    return build


def _reduce(op):
    def build():
        x = _x((5, 7, 11))
        return [x, op(x, axis=(0, 2), keepdims=True)]

    return build


def _logical_reduce(op):
    def build():
        x = _x((5, 7, 11))
        positive = te.compute(x.shape, lambda *i: x[i] > 0.3, name="positive")
        return [x, op(positive, axis=(0, 2), keepdims=True)]

    return build


def _row_reduce_long():
    x = _x((3, 521))
    return [x, topi.sum(x, axis=1)]


def _pad():
    x = _x((5, 7))
    return [x, nn.pad(x, [1, 2], [3, 0], 0.5)]


def _concatenate():
    a, b = _x((3, 5), "a"), _x((4, 5), "b")
    return [a, b, topi.concatenate([a, b], axis=0)]


def _elemwise_sum():
    a, b, c = _x((3, 5), "a"), _x((3, 5), "b"), _x((3, 5), "c")
    return [a, b, c, topi.elemwise_sum([a, b, c])]


def _compare(op):
    def build():
        a, b = _x((11, 1, 9), "a"), _x((5, 1), "b")
        return [a, b, op(a, b)]

    return build


def _logical(op):
    def build():
        a, b = _x((11, 1, 9), "a"), _x((5, 1), "b")
        return [a, b, op(topi.greater(a, 0.0), topi.less(b, 0.5))]

    return build


def _where():
    c, a, b = _x((7, 1), "c"), _x((7, 13), "a"), _x((13,), "b")
    return [c, a, b, topi.where(topi.greater(c, 0.0), a, b)]


def _index(shape: tuple, name: str = "ind", dtype: str = "int32") -> te.Tensor:
    return _x(shape, name, dtype)  # random in [-4, 4]: out of range too, clamped or wrapped


def _take(axis, mode):
    def build():
        a, ind = _x((7, 5), "a"), _index((3, 4))
        return [a, ind, topi.take(a, ind, axis=axis, mode=mode)]

    return build


def _gather():
    data, ind = _x((5, 7), "data"), _index((5, 4))
    return [data, ind, topi.gather(data, 1, ind)]


def _gather_nd():
    data, ind = _x((5, 7, 3), "data"), _index((2, 9))
    return [data, ind, topi.gather_nd(data, ind)]


def _one_hot():
    ind = _index((5, 3))
    return [ind, topi.one_hot(ind, 1.5, -0.5, 7, 1, "float32")]


def _plus(make):
    """``x + make(x)``: a creation operator (full, arange...) read by a computed tensor."""

    def build():
        x = _x((7, 13))
        return [x, topi.add(x, make(x))]

    return build


def _split():
    x = _x((9, 5))
    return [x, *topi.split(x, 3, axis=0)]


def _split_indices():
    x = _x((5, 11))
    return [x, *topi.split(x, [2, 7], axis=-1)]


def _stack():
    a, b = _x((5, 7), "a"), _x((5, 7), "b")
    return [a, b, topi.stack([a, b], 1)]


def _layout(src: str, dst: str, shape: tuple):
    def build():
        x = _x(shape)
        return [x, topi.layout_transform(x, src, dst)]

    return build


def _topi_matmul():
    a, b = _x((11, 7), "a"), _x((13, 7), "b")
    return [a, b, topi.matmul(a, b, transp_b=True)]


#: name -> builder of [inputs..., outputs...]
def _batch_norm(training: bool = False):
    def build():
        x = _x((2, 5, 7, 3))
        g, b, m, v = _x((5,), "g"), _x((5,), "b"), _x((5,), "m"), _x((5,), "v")
        outs = nn.batch_norm(x, g, b, m, _positive(v), axis=1, training=training)
        return [x, g, b, m, v, *outs]

    return build


def _instance_norm():
    x, g, b = _x((2, 3, 5, 7)), _x((3,), "g"), _x((3,), "b")
    return [x, g, b, nn.instance_norm(x, g, b, 1, [2, 3])]


def _group_norm():
    x, g, b = _x((2, 6, 5, 3)), _x((6,), "g"), _x((6,), "b")
    return [x, g, b, nn.group_norm(x, g, b, 3, 1, [2, 3])]


def _rms_norm():
    x, w = _x((7, 31)), _x((31,), "w")
    return [x, w, nn.rms_norm(x, w, [-1])]


def _prelu():
    x, s = _x((3, 5, 7)), _x((5,), "slope")
    return [x, s, nn.prelu(x, s, 1)]


def _adaptive_pool(op, shape, size, kind, layout):
    def build():
        x = _x(shape)
        return [x, getattr(nn, op)(x, size, kind, layout)]

    return build


def _upsampling(method, align_corners):
    def build():
        x = _x((1, 3, 5, 4))
        return [x, nn.upsampling(x, 2, 1.5, "NCHW", method, align_corners)]

    return build


def _einsum(subscripts, *shapes):
    def build():
        xs = [_x(s, f"x{k}") for k, s in enumerate(shapes)]
        return [*xs, topi.einsum(subscripts, *xs)]

    return build


def _scan(op):
    def build():
        x = _x((5, 17))
        return [x, op(x, 1)]

    return build


def _sort(op, shape, **kw):
    """A sort along an axis; ``ties`` rounds 3x first, so equal values meet (stable order)."""
    ties = kw.pop("ties", False)

    def build():
        x = _x(shape)
        out = op(topi.round(topi.multiply(x, 3.0)) if ties else x, **kw)
        return [x, *(out if isinstance(out, list) else [out])]

    return build


def _pool_nd(kind):
    def build():
        if kind == "pool1d":
            x = _x((1, 3, 17))
            return [x, nn.pool1d(x, 3, 2, 1, (1, 1), "avg")]
        x = _x((1, 2, 7, 9, 5))
        return [x, nn.pool3d(x, 3, 2, 1, 1, "max")]

    return build


def _nn_unary(op, shape, *args):
    def build():
        x = _x(shape)
        return [x, op(x, *args)]

    return build


def _resize2d(layout, size, method, mode):
    def build():
        x = _x((1, 3, 5, 7) if layout == "NCHW" else (1, 5, 7, 3))
        return [x, topi.image.resize2d(x, None, size, layout, method, mode)]

    return build


def _resize_nd(op, shape, size, layout, method, mode):
    def build():
        x = _x(shape)
        return [x, op(x, None, size, layout, method, mode)]

    return build


def _grid_sample(method, padding_mode):
    def build():
        # grid in [-1.5, 1.5): samples outside the image meet the padding mode
        data, grid = _x((1, 2, 5, 6), "data"), _x((1, 2, 4, 7), "grid")
        g = topi.multiply(grid, 1.5)
        return [data, grid, topi.image.grid_sample(data, g, method, "NCHW", padding_mode)]

    return build


def _affine_grid():
    theta = _x((2, 2, 3), "theta")
    return [theta, topi.image.affine_grid(theta, (5, 3))]


def _crop_and_resize():
    # boxes in [-1, 1): much of each crop falls outside (extrapolated); box indices in
    # [-4, 4]: clamped into the batch
    data, boxes, ind = _x((2, 3, 7, 9), "data"), _x((3, 4), "boxes"), _index((3,))
    out = topi.image.crop_and_resize(data, boxes, ind, (5, 4), extrapolation_value=0.5)
    return [data, boxes, ind, out]


CASES = {
    "elemwise_sum": _elemwise_sum,
    "abs": _unary(topi.abs),
    "ceil": _unary(topi.ceil),
    "floor": _unary(topi.floor),
    "round": _unary(topi.round),
    "negative": _unary(topi.negative),
    "identity": _unary(topi.identity),
    "exp": _unary(topi.exp),
    "erf": _unary(topi.erf),
    "tanh": _unary(topi.tanh),
    "sigmoid": _unary(topi.sigmoid),
    "clip": _unary(lambda x: topi.clip(x, -0.3, 0.4)),
    "cast": _unary(lambda x: topi.cast(x, "float64")),
    "sin": _unary(topi.sin),
    "cos": _unary(topi.cos),
    "tan": _unary(topi.tan),
    "sinh": _unary(topi.sinh),
    "cosh": _unary(topi.cosh),
    "atan": _unary(topi.atan),
    "asinh": _unary(topi.asinh),
    "asin": _unary(lambda x: topi.asin(topi.multiply(x, 0.5))),
    "acos": _unary(lambda x: topi.acos(topi.multiply(x, 0.5))),
    "atanh": _unary(lambda x: topi.atanh(topi.multiply(x, 0.5))),
    "acosh": _unary(lambda x: topi.acosh(topi.add(topi.abs(x), 1.0))),
    "trunc": _unary(lambda x: topi.trunc(topi.multiply(x, 7.0))),
    "fast_exp": _unary(topi.fast_exp),
    "fast_tanh": _unary(topi.fast_tanh),
    "fast_erf": _unary(topi.fast_erf),
    "isnan": _unary(lambda x: topi.isnan(topi.log(x))),  # NaN where x < 0
    "isinf": _unary(lambda x: topi.isinf(topi.divide(1.0, topi.floor(x)))),  # 1/0 where 0 <= x < 1
    "isfinite": _unary(lambda x: topi.isfinite(topi.log(x))),
    "log2": _positive_unary(topi.log2),
    "log10": _positive_unary(topi.log10),
    "bitwise_not": _int_unary(topi.bitwise_not),
    "bitwise_and": _int_binary(topi.bitwise_and),
    "bitwise_or": _int_binary(topi.bitwise_or),
    "bitwise_xor": _int_binary(topi.bitwise_xor),
    "left_shift": _int_binary(topi.left_shift),
    "right_shift": _int_binary(topi.right_shift),
    "log": _positive_unary(topi.log),
    "sqrt": _positive_unary(topi.sqrt),
    "rsqrt": _positive_unary(topi.rsqrt),
    "add": _binary(topi.add),
    "subtract": _binary(topi.subtract),
    "multiply": _binary(topi.multiply),
    "divide": _binary(topi.divide, positive_b=True),
    "maximum": _binary(topi.maximum),
    "minimum": _binary(topi.minimum),
    "power": _binary(lambda a, b: topi.power(_positive(a), b)),
    "floor_divide": _binary(topi.floor_divide, positive_b=True),
    "floor_mod": _binary(topi.floor_mod, positive_b=True),
    "broadcast_to": lambda: (lambda x: [x, topi.broadcast_to(x, (3, 5, 7))])(_x((5, 1))),
    "sum": _reduce(topi.sum),
    "max": _reduce(topi.max),
    "min": _reduce(topi.min),
    "prod": _reduce(topi.prod),
    "all": _logical_reduce(topi.all),
    "any": _logical_reduce(topi.any),
    "argmax": lambda: (lambda x: [x, topi.argmax(x, axis=1)])(_x((5, 37))),
    "argmin": _reduce(lambda x, **kw: topi.argmin(x, select_last_index=True, **kw)),
    "sum_long_row": _row_reduce_long,
    "transpose": lambda: (lambda x: [x, topi.transpose(x, (2, 0, 1))])(_x((3, 5, 7))),
    "reshape": lambda: (lambda x: [x, topi.reshape(x, (5, 21))])(_x((15, 7))),
    "expand_dims": lambda: (lambda x: [x, topi.expand_dims(x, 1, 2)])(_x((5, 7))),
    "squeeze": lambda: (lambda x: [x, topi.squeeze(x, 1)])(_x((5, 1, 7))),
    "concatenate": _concatenate,
    "greater": _compare(topi.greater),
    "less": _compare(topi.less),
    "equal": _compare(lambda a, b: topi.equal(topi.round(a), topi.round(b))),
    "not_equal": _compare(lambda a, b: topi.not_equal(topi.round(a), topi.round(b))),
    "greater_equal": _compare(topi.greater_equal),
    "less_equal": _compare(topi.less_equal),
    "logical_and": _logical(topi.logical_and),
    "logical_or": _logical(topi.logical_or),
    "logical_xor": _logical(topi.logical_xor),
    "logical_not": _unary(lambda x: topi.logical_not(topi.greater(x, 0.0))),
    "sign": _unary(lambda x: topi.sign(topi.round(x))),  # zeros too
    "where": _where,
    "full": _plus(lambda x: topi.full(x.shape, "float32", 1.5)),
    "full_like": _plus(lambda x: topi.full_like(x, -2.0)),
    "arange": _plus(lambda x: topi.arange(0.5, 13.5, 1.0)),
    "take": _take(1, "clip"),
    "take_wrap_flat": _take(None, "wrap"),
    "take_fast": _take(0, "fast"),
    "gather": _gather,
    "gather_nd": _gather_nd,
    "one_hot": _one_hot,
    "strided_slice": lambda: (lambda x: [x, topi.strided_slice(x, [1, 12], [10, -14], [2, -3])])(
        _x((11, 13))
    ),
    "split": _split,
    "split_indices": _split_indices,
    "stack": _stack,
    "tile": lambda: (lambda x: [x, topi.tile(x, (2, 3))])(_x((3, 5))),
    "repeat": lambda: (lambda x: [x, topi.repeat(x, 3, 1)])(_x((5, 7))),
    "flip": lambda: (lambda x: [x, topi.flip(x, 1)])(_x((5, 7, 3))),
    "layout_transform": _layout("NCHW", "NHWC", (1, 5, 7, 3)),
    "layout_transform_packed": _layout("NCHW", "NCHW4c", (1, 6, 5, 7)),
    "matmul": _topi_matmul,
    "nn.relu": _unary(nn.relu),
    "nn.leaky_relu": _unary(lambda x: nn.leaky_relu(x, 0.1)),
    "nn.gelu": _unary(nn.gelu),
    "nn.softmax": lambda: (lambda x: [x, nn.softmax(x)])(_x((7, 37))),
    "nn.log_softmax": lambda: (lambda x: [x, nn.log_softmax(x, axis=0)])(_x((13, 5))),
    "nn.layer_norm": _layer_norm,
    "nn.pad": _pad,
    "nn.dense": _dense,
    "nn.dense_gemv": _gemv,
    "nn.matmul": _matmul,
    "nn.batch_matmul": _batch_matmul,
    "nn.batch_matmul_reused": _batch_matmul_reused,
    "nn.dense_reused": _dense_reused,
    "nn.conv2d_nchw": _conv(),
    "nn.conv2d_nchw_strided": _conv(stride=2),
    "nn.conv2d_nchw_dilated": _conv(dilation=2, pad=2),
    "nn.conv2d_nchw_1x1": _conv(k=1, pad=0, c=13, f=9),
    "nn.conv2d_nhwc": _conv_nhwc,
    "nn.conv2d": _conv_generic,
    "nn.group_conv2d_nchw": _group_conv,
    "nn.conv1d": _conv1d("NCW", groups=3),
    "nn.conv1d_nwc_grouped": _conv1d("NWC", groups=2),
    "nn.conv1d_ncw": _conv1d_named(nn.conv1d_ncw, "NCW"),
    "nn.conv1d_nwc": _conv1d_named(nn.conv1d_nwc, "NWC"),
    "nn.conv3d_ncdhw": _conv3d("NCDHW"),
    "nn.conv3d_ndhwc": _conv3d("NDHWC"),
    "nn.conv2d_transpose_nchw": _conv2d_transpose(),
    "nn.conv2d_transpose_nchw_ragged_taps": _conv2d_transpose(k=3, stride=(2, 3)),
    "nn.depthwise_conv2d_nchw": _depthwise,
    "einsum": _einsum("bij,bjk->bik", (3, 7, 13), (3, 13, 5)),
    "cumsum": _scan(topi.cumsum),
    "cumprod": _scan(topi.cumprod),
    "sort": _sort(topi.sort, (5, 17), axis=1),
    "argsort": _sort(topi.argsort, (13, 7), axis=0, is_ascend=False, dtype="int32", ties=True),
    "topk": _sort(topi.topk, (3, 13, 5), k=4, axis=1, ties=True),
    "topk_rounds": _sort(topi.topk, (6, 40), k=2, ties=True),  # small k: selection rounds
    "topk_rounds_k5": _sort(topi.topk, (3, 24), k=5, axis=1, is_ascend=True, ties=True),
    "nn.pool1d": _pool_nd("pool1d"),
    "nn.pool3d": _pool_nd("pool3d"),
    "nn.pool2d": _pool("pool2d"),
    "nn.max_pool2d": _pool("max"),
    "nn.avg_pool2d": _pool("avg"),
    "nn.global_pool": _pool("global"),
    "nn.prelu": _prelu,
    "nn.fast_softmax": _nn_unary(nn.fast_softmax, (7, 37)),
    "nn.flatten": _nn_unary(nn.flatten, (3, 5, 7)),
    "nn.dilate": _nn_unary(nn.dilate, (3, 5, 7), (1, 2, 3), 0.5),
    "nn.batch_norm": _batch_norm(),
    "nn.batch_norm_training": _batch_norm(training=True),
    "nn.instance_norm": _instance_norm,
    "nn.group_norm": _group_norm,
    "nn.rms_norm": _rms_norm,
    "nn.l2_normalize": _nn_unary(nn.l2_normalize, (5, 13, 3), 1e-6, [1]),
    "nn.lrn": _nn_unary(nn.lrn, (1, 7, 5, 3), 5, 1, 0.01, 0.75, 1.5),
    "nn.adaptive_pool": _adaptive_pool("adaptive_pool", (1, 3, 13, 11), (4, 5), "avg", "NCHW"),
    "nn.adaptive_pool_max_nhwc": _adaptive_pool(
        "adaptive_pool", (1, 9, 7, 3), (3, 2), "max", "NHWC"
    ),
    "nn.adaptive_pool1d": _adaptive_pool("adaptive_pool1d", (2, 3, 17), 5, "max", "NCW"),
    "nn.adaptive_pool3d": _adaptive_pool(
        "adaptive_pool3d", (1, 2, 5, 7, 6), (2, 3, 4), "avg", "NCDHW"
    ),
    "nn.upsampling": _upsampling("nearest_neighbor", False),
    "nn.upsampling_bilinear": _upsampling("bilinear", True),
    "nn.depth_to_space": _nn_unary(nn.depth_to_space, (1, 12, 5, 3), 2, "NCHW", "CDR"),
    "nn.space_to_depth": _nn_unary(nn.space_to_depth, (1, 9, 6, 5), 3, "NHWC"),
    "image.resize2d": _resize2d("NCHW", (9, 4), "linear", "half_pixel"),
    "image.resize2d_nearest": _resize2d("NHWC", (3, 11), "nearest_neighbor", "asymmetric"),
    "image.crop_and_resize": _crop_and_resize,
    "image.resize1d": _resize_nd(
        topi.image.resize1d, (2, 3, 7), (11,), "NCW", "cubic", "align_corners"
    ),
    "image.resize3d": _resize_nd(
        topi.image.resize3d, (1, 2, 3, 5, 4), (2, 7, 3), "NCDHW", "linear", "pytorch_half_pixel"
    ),
    "image.grid_sample": _grid_sample("bilinear", "zeros"),
    "image.grid_sample_nearest": _grid_sample("nearest", "reflection"),
    "image.affine_grid": _affine_grid,
}

#: operators the auto-scheduler refuses, with the start of its error (tuple reductions)
NOT_SEARCHED = {
    "prod": "op 'T_prod' is a tuple reduction (prod)",
    "cumprod": "op 'cumprod_generic' is a tuple reduction (prod)",
}

#: public names that are helpers, not operators
NOT_OPERATORS = {
    "image",
    "nn",
    "tag",
    "testing",
    "utils",
    "get_pad_tuple",
    "cuda",
    "generic",
    "x86",
}


def topi_cases() -> list[DagCase]:
    """One DagCase per entry of ``CASES`` the auto-scheduler searches."""
    return [
        DagCase(f"topi.{name}", list(build()))
        for name, build in CASES.items()
        if name not in NOT_SEARCHED
    ]
