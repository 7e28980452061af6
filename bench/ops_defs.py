"""The operators of bench/bench_ops.py, written against a ``(te, topi)`` pair.

No ansor_lab import here: the MetaSchedule side (``tvm_side/ms_tune.py``, in an apache-tvm
venv) builds the very same computations from this module with ``tvm.te`` / ``tvm.topi``.
Each operator has a numpy reference (also the correctness check, in float64) and, where
PyTorch has it, a PyTorch function.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


def _gemm(te, topi):
    a, w = te.placeholder((128, 768), name="a"), te.placeholder((768, 768), name="w")
    return [a, w, topi.nn.matmul(a, w)]


def _dense(te, topi):
    x, w = te.placeholder((128, 768), name="x"), te.placeholder((3072, 768), name="w")
    return [x, w, topi.nn.dense(x, w)]  # x @ w^T: BERT FFN up-projection, nn.Linear's layout


def _bmm(te, topi):
    q, k = te.placeholder((12, 128, 64), name="q"), te.placeholder((12, 128, 64), name="k")
    return [q, k, topi.nn.batch_matmul(q, k)]  # q @ k^T per head (BERT attention)


def _conv(shape, kshape, stride, pad, dilation=1, groups=1, depthwise=False):
    def build(te, topi):
        data, kernel = te.placeholder(shape, name="data"), te.placeholder(kshape, name="kernel")
        if depthwise:
            out = topi.nn.depthwise_conv2d_nchw(data, kernel, stride, pad, dilation)
        elif groups > 1:
            out = topi.nn.group_conv2d_nchw(data, kernel, stride, pad, dilation, groups)
        else:
            out = topi.nn.conv2d_nchw(data, kernel, stride, pad, dilation)
        return [data, kernel, out]

    return build


def _gemv(te, topi):
    x, w = te.placeholder((1, 3072), name="x"), te.placeholder((768, 3072), name="w")
    return [x, w, topi.nn.dense(x, w)]  # BERT FFN down-projection, batch 1: 9 MiB of weights


def _softmax(te, topi):
    x = te.placeholder((768, 512), name="x")
    return [x, topi.nn.softmax(x)]


def _layer_norm(te, topi):
    x = te.placeholder((128, 768), name="x")
    g, b = te.placeholder((768,), name="g"), te.placeholder((768,), name="b")
    return [x, g, b, topi.nn.layer_norm(x, g, b, axis=[-1])]


def _rms_norm(te, topi):
    x, g = te.placeholder((128, 4096), name="x"), te.placeholder((4096,), name="g")
    k = te.reduce_axis((0, 4096), name="k")
    ss = te.compute((128,), lambda i: te.sum(x[i, k] * x[i, k], axis=k), name="sumsq")
    out = te.compute(
        (128, 4096),
        lambda i, j: x[i, j] * te.rsqrt(ss[i] * (1.0 / 4096) + 1e-6) * g[j],
        name="rms_norm",
    )
    return [x, g, out]


def _pool(te, topi):
    x = te.placeholder((1, 64, 112, 112), name="x")
    return [x, topi.nn.pool2d(x, (3, 3), (2, 2), (1, 1), (1, 1, 1, 1), "max")]


def _row_sum(te, topi):
    x = te.placeholder((1024, 1024), name="x")
    return [x, topi.sum(x, axis=1)]


def _col_sum(te, topi):
    x = te.placeholder((1024, 1024), name="x")
    return [x, topi.sum(x, axis=0)]


def _bias_gelu(te, topi):
    x, b = te.placeholder((128, 3072), name="x"), te.placeholder((3072,), name="b")
    y = topi.add(x, b)
    # topi.nn.gelu's computation, spelled out: TVM's topi has no gelu
    gelu = te.compute(
        y.shape,
        lambda i, j: y[i, j] * 0.5 * (1.0 + te.erf(y[i, j] * (1.0 / math.sqrt(2.0)))),
        name="T_gelu",
    )
    return [x, b, gelu]


def _transpose(te, topi):
    x = te.placeholder((128, 12, 64), name="x")
    return [x, topi.transpose(x, (1, 0, 2))]  # BERT heads: [seq, head, dim] -> [head, seq, dim]


# numpy and PyTorch references (inputs in argument order; float64 for the check)


def _np_conv(d, w, stride, pad, dilation=1, groups=1):
    n, c, h, wd = d.shape
    f, cg, r, s = w.shape
    x = np.pad(d, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh = (h + 2 * pad - dilation * (r - 1) - 1) // stride + 1
    ow = (wd + 2 * pad - dilation * (s - 1) - 1) // stride + 1
    out = np.zeros((n, f, oh, ow), d.dtype)
    fg = f // groups
    for g in range(groups):
        xs = x[:, g * cg : (g + 1) * cg]
        for ry in range(r):
            for rx in range(s):
                y0, x0 = ry * dilation, rx * dilation
                patch = xs[:, :, y0 : y0 + stride * oh : stride, x0 : x0 + stride * ow : stride]
                out[:, g * fg : (g + 1) * fg] += np.einsum(
                    "nchw,fc->nfhw", patch, w[g * fg : (g + 1) * fg, :, ry, rx], optimize=True
                )
    return out


def _np_pool(x):
    p = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)), constant_values=-np.inf)
    v = np.lib.stride_tricks.sliding_window_view(p, (3, 3), axis=(2, 3))[:, :, ::2, ::2]
    return v.max(axis=(4, 5))


def _np_ln(x, g, b):
    m = x.mean(1, keepdims=True)
    v = ((x - m) ** 2).mean(1, keepdims=True)
    return (x - m) / np.sqrt(v + 1e-5) * g + b


def _np_softmax(x):
    e = np.exp(x - x.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)


def _np_gelu(x, b):
    y = x + b
    return 0.5 * y * (1.0 + _erf(y / math.sqrt(2.0)))


def _erf(x):
    # Abramowitz-Stegun 7.1.26 is 1e-7 accurate: enough for the timing and a 1e-3 check
    s = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    y = 1.0 - (
        ((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t + 0.254829592
    ) * t * np.exp(-a * a)
    return s * y


@dataclass(frozen=True)
class Op:
    """One benchmarked operator."""

    name: str
    family: str
    build: Callable  # (te, topi) -> tensors, inputs first
    numpy_fn: Callable
    torch_fn: Callable | None  # (torch, *tensors) -> tensor
    flops: float


def _t_conv(stride, pad, dilation=1, groups=1):
    return lambda torch, d, w: torch.nn.functional.conv2d(
        d, w, stride=stride, padding=pad, dilation=dilation, groups=groups
    )


OPS = [
    Op("gemm_bert_qkv", "gemm", _gemm, lambda a, w: a @ w, lambda t, a, w: a @ w,
       2.0 * 128 * 768 * 768),
    Op("dense_bert_ffn", "gemm", _dense, lambda x, w: x @ w.T,
       lambda t, x, w: torch_linear(t, x, w), 2.0 * 128 * 768 * 3072),
    Op("bmm_attention", "batch_gemm", _bmm, lambda q, k: q @ k.transpose(0, 2, 1),
       lambda t, q, k: q @ k.transpose(1, 2), 2.0 * 12 * 128 * 128 * 64),
    Op("conv_resnet_s2", "conv", _conv((1, 64, 56, 56), (128, 64, 3, 3), 2, 1),
       lambda d, w: _np_conv(d, w, 2, 1), _t_conv(2, 1), 2.0 * 128 * 28 * 28 * 64 * 9),
    Op("conv_resnet_last", "conv", _conv((1, 512, 7, 7), (512, 512, 3, 3), 1, 1),
       lambda d, w: _np_conv(d, w, 1, 1), _t_conv(1, 1), 2.0 * 512 * 49 * 512 * 9),
    Op("conv_1x1", "conv", _conv((1, 256, 28, 28), (128, 256, 1, 1), 1, 0),
       lambda d, w: _np_conv(d, w, 1, 0), _t_conv(1, 0), 2.0 * 128 * 784 * 256),
    Op("conv_depthwise", "conv", _conv((1, 256, 28, 28), (256, 1, 3, 3), 1, 1, depthwise=True),
       lambda d, w: _np_conv(d, w, 1, 1, groups=256), _t_conv(1, 1, groups=256),
       2.0 * 256 * 784 * 9),
    Op("conv_grouped", "conv", _conv((1, 128, 28, 28), (128, 4, 3, 3), 1, 1, groups=32),
       lambda d, w: _np_conv(d, w, 1, 1, groups=32), _t_conv(1, 1, groups=32),
       2.0 * 128 * 784 * 4 * 9),
    Op("conv_dilated", "conv", _conv((1, 64, 28, 28), (64, 64, 3, 3), 1, 2, dilation=2),
       lambda d, w: _np_conv(d, w, 1, 2, 2), _t_conv(1, 2, 2), 2.0 * 64 * 784 * 64 * 9),
    Op("gemv_ffn", "gemv", _gemv, lambda x, w: x @ w.T,
       lambda t, x, w: torch_linear(t, x, w), 2.0 * 768 * 3072),
    Op("softmax_rows", "softmax", _softmax, _np_softmax, lambda t, x: t.softmax(x, -1),
       4.0 * 768 * 512),
    Op("layer_norm_bert", "layer_norm", _layer_norm, _np_ln,
       lambda t, x, g, b: t.nn.functional.layer_norm(x, (768,), g, b), 8.0 * 128 * 768),
    Op("rms_norm_llm", "rms_norm", _rms_norm,
       lambda x, g: x / np.sqrt((x * x).mean(1, keepdims=True) + 1e-6) * g,
       lambda t, x, g: x * t.rsqrt((x * x).mean(1, keepdim=True) + 1e-6) * g,
       4.0 * 128 * 4096),
    Op("maxpool_resnet", "pool", _pool, _np_pool,
       lambda t, x: t.nn.functional.max_pool2d(x, 3, 2, 1), 9.0 * 64 * 56 * 56),
    Op("row_sum", "reduce", _row_sum, lambda x: x.sum(1), lambda t, x: x.sum(1), 1024.0 * 1024),
    Op("col_sum", "reduce", _col_sum, lambda x: x.sum(0), lambda t, x: x.sum(0), 1024.0 * 1024),
    Op("bias_gelu", "elementwise", _bias_gelu, _np_gelu,
       lambda t, x, b: t.nn.functional.gelu(x + b), 20.0 * 128 * 3072),
    Op("transpose_heads", "transpose", _transpose, lambda x: x.transpose(1, 0, 2).copy(),
       lambda t, x: x.transpose(0, 1).contiguous(), 128.0 * 12 * 64),
]  # fmt: skip
BY_NAME = {op.name: op for op in OPS}


def torch_linear(torch, x, w):
    """PyTorch's ``linear`` (oneDNN / BLAS: a GEMV at batch 1, a GEMM above)."""
    return torch.nn.functional.linear(x, w)
