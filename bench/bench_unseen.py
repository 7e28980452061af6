"""Operators the other benches never tuned: shapes a new user brings, against PyTorch and numpy.

    .venv/bin/python bench/bench_unseen.py --torch-site $TORCH_VENV/lib/python3.11/site-packages
    .venv/bin/python bench/bench_unseen.py --ops bmm_vit,dense_tokens --trials 64 --seed 0
    .venv/bin/python bench/bench_unseen.py --threads 2 --torch-site ...   # every library on 2

``bench_ops.py`` holds the operators the search was developed on; these are the check
that it was not fitted to them: prime and odd extents (a ViT's 197 tokens, CLIP's 77, a
127 x 509 x 251 matmul), a dense layer on 4 tokens with 64 MiB of weights, a 7x7 stem
convolution on 3 channels, a 32000-wide softmax, a log-softmax over 1000 classes, layer
norms of 197 and 512 rows, pools and depthwise convolutions of MobileNet shapes, an NHWC
convolution, a batch-8 1x1 convolution, a 1-D convolution, a dense layer with bias and
ReLU, SiLU, batch norm + ReLU, a group norm, a channel sum, an argmax, a ViT's dense layer
and attention softmax over 197 tokens, NCHW to NHWC, and a transposed convolution. Each is tuned
once (``--threads``, ``--trials``, ``--seed``), rebuilt, checked against numpy in float64
and timed (median; on one thread the process CPU clock, on several the wall clock) with
PyTorch and numpy on as many threads in the same run (``bench_ops``' timers). Printed
per operator: our time, PyTorch's and numpy's time over ours (above 1: we are faster),
the relative error, the tuning wall time.
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from bench_ops import load_torch, time_numpy, time_ours, time_torch, tune  # noqa: E402
from ops_defs import Op, _np_conv, _t_conv  # noqa: E402


def _conv(shape, kshape, stride, pad, depthwise=False):
    def build(te, topi):
        d, k = te.placeholder(shape, name="data"), te.placeholder(kshape, name="kernel")
        if depthwise:
            return [d, k, topi.nn.depthwise_conv2d_nchw(d, k, stride, pad, 1)]
        return [d, k, topi.nn.conv2d_nchw(d, k, stride, pad, 1)]

    return build


def _matmul(m, k, n):
    def build(te, topi):
        a, b = te.placeholder((m, k), name="a"), te.placeholder((k, n), name="b")
        return [a, b, topi.nn.matmul(a, b)]

    return build


def _bmm_nt(batch, tokens, depth):
    def build(te, topi):
        q = te.placeholder((batch, tokens, depth), name="q")
        k = te.placeholder((batch, tokens, depth), name="k")
        return [q, k, topi.nn.batch_matmul(q, k)]

    return build


def _dense(m, k, n):
    def build(te, topi):
        x, w = te.placeholder((m, k), name="x"), te.placeholder((n, k), name="w")
        return [x, w, topi.nn.dense(x, w)]

    return build


def _softmax(rows, cols, log=False):
    def build(te, topi):
        x = te.placeholder((rows, cols), name="x")
        return [x, (topi.nn.log_softmax if log else topi.nn.softmax)(x)]

    return build


def _layer_norm(rows, cols):
    def build(te, topi):
        x = te.placeholder((rows, cols), name="x")
        g, b = te.placeholder((cols,), name="g"), te.placeholder((cols,), name="b")
        return [x, g, b, topi.nn.layer_norm(x, g, b, axis=[-1])]

    return build


def _avg_pool(te, topi):
    x = te.placeholder((1, 128, 56, 56), name="x")
    return [x, topi.nn.pool2d(x, (2, 2), (2, 2), (1, 1), (0, 0, 0, 0), "avg")]


def _global_pool(te, topi):
    x = te.placeholder((1, 2048, 7, 7), name="x")
    return [x, topi.nn.global_pool(x, "avg")]


def _conv_nhwc(te, topi):
    d = te.placeholder((1, 56, 56, 64), name="data")
    k = te.placeholder((3, 3, 64, 64), name="kernel")  # HWIO
    return [d, k, topi.nn.conv2d_nhwc(d, k, 1, 1, 1)]


def _np_conv_nhwc(d, k):
    return _np_conv(d.transpose(0, 3, 1, 2), k.transpose(3, 2, 0, 1), 1, 1).transpose(0, 2, 3, 1)


def _t_conv_nhwc(t, d, k):
    out = t.nn.functional.conv2d(d.permute(0, 3, 1, 2), k.permute(3, 2, 0, 1), padding=1)
    return out.permute(0, 2, 3, 1)


def _conv1d(te, topi):
    d = te.placeholder((1, 256, 1024), name="data")
    k = te.placeholder((256, 256, 3), name="kernel")
    return [d, k, topi.nn.conv1d_ncw(d, k, 1, 1, 1)]


def _np_conv1d(d, k):
    x = np.pad(d, ((0, 0), (0, 0), (1, 1)))
    width = d.shape[2]
    return sum(np.einsum("fc,ncw->nfw", k[:, :, t], x[:, :, t : t + width]) for t in range(3))


def _silu(te, topi):
    x = te.placeholder((256, 4096), name="x")
    return [x, te.compute(x.shape, lambda i, j: x[i, j] / (1.0 + te.exp(-x[i, j])), name="silu")]


def _bn_relu(te, topi):
    x = te.placeholder((1, 64, 112, 112), name="x")
    s, b = te.placeholder((64,), name="scale"), te.placeholder((64,), name="shift")
    y = te.compute(x.shape, lambda n, c, h, w: te.max(x[n, c, h, w] * s[c] + b[c], 0.0), name="y")
    return [x, s, b, y]


def _np_bn_relu(x, s, b):
    return np.maximum(x * s[None, :, None, None] + b[None, :, None, None], 0)


def _group_norm(te, topi):
    x = te.placeholder((1, 256, 28, 28), name="x")
    g, b = te.placeholder((256,), name="g"), te.placeholder((256,), name="b")
    return [x, g, b, topi.nn.group_norm(x, g, b, 32, 1, [2, 3])]


def _np_group_norm(x, g, b):
    groups = x.reshape(x.shape[0], 32, -1)
    m, v = groups.mean(-1, keepdims=True), groups.var(-1, keepdims=True)
    normed = ((groups - m) / np.sqrt(v + 1e-5)).reshape(x.shape)
    return normed * g[None, :, None, None] + b[None, :, None, None]


def _argmax(te, topi):
    x = te.placeholder((128, 1000), name="x")
    return [x, topi.argmax(x, axis=1)]


def _dense_bias_relu(te, topi):
    x, w = te.placeholder((64, 1024), name="x"), te.placeholder((1024, 1024), name="w")
    b = te.placeholder((1024,), name="b")
    return [x, w, b, topi.nn.relu(topi.add(topi.nn.dense(x, w), b))]


def _rms_norm(te, topi):
    x, g = te.placeholder((64, 4096), name="x"), te.placeholder((4096,), name="g")
    return [x, g, topi.nn.rms_norm(x, g, axis=[1])]


def _channel_sum(te, topi):
    x = te.placeholder((1, 512, 28, 28), name="x")
    return [x, topi.sum(x, axis=(1,))]


def _np_softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _nchw_to_nhwc(te, topi):
    x = te.placeholder((1, 256, 56, 56), name="x")
    return [x, topi.transpose(x, (0, 2, 3, 1))]


def _conv_transpose(te, topi):
    d = te.placeholder((1, 64, 28, 28), name="data")
    k = te.placeholder((64, 32, 4, 4), name="kernel")  # in, out, kh, kw
    return [d, k, topi.nn.conv2d_transpose_nchw(d, k, (2, 2), (1, 1), "float32", (0, 0))]


def _np_conv_transpose(d, k, stride=2, pad=1):
    """Each input pixel scatters its kernel-weighted channels onto a stride-spaced grid."""
    n, _, h, w = d.shape
    _, o, kh, kw = k.shape
    full = np.zeros((n, o, (h - 1) * stride + kh, (w - 1) * stride + kw))
    for a in range(kh):
        for b in range(kw):
            tap = np.einsum("nchw,co->nohw", d, k[:, :, a, b])
            rows, cols = slice(a, a + (h - 1) * stride + 1, stride), slice(b, None, stride)
            full[:, :, rows, cols][..., :w] += tap
    return full[:, :, pad : full.shape[2] - pad, pad : full.shape[3] - pad]


def _np_log_softmax(x):
    m = x.max(-1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(-1, keepdims=True))


def _np_layer_norm(x, g, b):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) / np.sqrt(v + 1e-5) * g + b


def _np_avg_pool(x):
    n, c, h, w = x.shape
    return x.reshape(n, c, h // 2, 2, w // 2, 2).mean((3, 5))


def _t_layer_norm(cols):
    return lambda t, x, g, b: t.nn.functional.layer_norm(x, (cols,), g, b)


OPS = [
    Op("stem_conv", "conv", _conv((1, 3, 224, 224), (64, 3, 7, 7), 2, 3),
       lambda d, w: _np_conv(d, w, 2, 3), _t_conv(2, 3), 2.0 * 64 * 112 * 112 * 3 * 49),
    Op("conv5x5", "conv", _conv((1, 32, 28, 28), (64, 32, 5, 5), 1, 2),
       lambda d, w: _np_conv(d, w, 1, 2), _t_conv(1, 2), 2.0 * 64 * 784 * 32 * 25),
    Op("dw_s2_mobilenet", "conv", _conv((1, 96, 112, 112), (96, 1, 3, 3), 2, 1, True),
       lambda d, w: _np_conv(d, w, 2, 1, groups=96), _t_conv(2, 1, groups=96),
       2.0 * 96 * 56 * 56 * 9),
    Op("dw5x5", "conv", _conv((1, 72, 28, 28), (72, 1, 5, 5), 1, 2, True),
       lambda d, w: _np_conv(d, w, 1, 2, groups=72), _t_conv(1, 2, groups=72),
       2.0 * 72 * 784 * 25),
    Op("mm_odd", "gemm", _matmul(127, 509, 251), lambda a, b: a @ b,
       lambda t, a, b: a @ b, 2.0 * 127 * 509 * 251),
    Op("mm127", "gemm", _matmul(127, 127, 127), lambda a, b: a @ b,
       lambda t, a, b: a @ b, 2.0 * 127**3),
    Op("bmm_vit", "batch_gemm", _bmm_nt(12, 197, 64), lambda q, k: q @ k.transpose(0, 2, 1),
       lambda t, q, k: q @ k.transpose(1, 2), 2.0 * 12 * 197 * 197 * 64),
    Op("bmm_clip", "batch_gemm", _bmm_nt(8, 77, 64), lambda q, k: q @ k.transpose(0, 2, 1),
       lambda t, q, k: q @ k.transpose(1, 2), 2.0 * 8 * 77 * 77 * 64),
    Op("dense_tokens", "gemv", _dense(4, 4096, 4096), lambda x, w: x @ w.T,
       lambda t, x, w: t.nn.functional.linear(x, w), 2.0 * 4 * 4096 * 4096),
    Op("softmax_vocab", "softmax", _softmax(32, 32000), _np_softmax,
       lambda t, x: t.softmax(x, -1), 4.0 * 32 * 32000),
    Op("log_softmax", "softmax", _softmax(64, 1000, log=True), _np_log_softmax,
       lambda t, x: t.log_softmax(x, -1), 4.0 * 64 * 1000),
    Op("ln_vit", "layer_norm", _layer_norm(197, 768), _np_layer_norm, _t_layer_norm(768),
       8.0 * 197 * 768),
    Op("ln_1024", "layer_norm", _layer_norm(512, 1024), _np_layer_norm, _t_layer_norm(1024),
       8.0 * 512 * 1024),
    Op("avgpool2", "pool", _avg_pool, _np_avg_pool,
       lambda t, x: t.nn.functional.avg_pool2d(x, 2, 2), 4.0 * 128 * 28 * 28),
    Op("global_pool", "pool", _global_pool, lambda x: x.mean((2, 3), keepdims=True),
       lambda t, x: x.mean((2, 3), keepdim=True), 2048 * 49.0),
    # added 2026-11-29: layouts, batches, fused epilogues and index reductions
    Op("conv_nhwc", "conv", _conv_nhwc, _np_conv_nhwc, _t_conv_nhwc, 2.0 * 3136 * 64 * 64 * 9),
    Op("conv_b8_1x1", "conv", _conv((8, 256, 14, 14), (64, 256, 1, 1), 1, 0),
       lambda d, w: _np_conv(d, w, 1, 0), lambda t, d, w: t.nn.functional.conv2d(d, w),
       2.0 * 8 * 196 * 256 * 64),
    Op("conv1d", "conv", _conv1d, _np_conv1d,
       lambda t, d, k: t.nn.functional.conv1d(d, k, padding=1), 2.0 * 256 * 256 * 3 * 1024),
    Op("dense_bias_relu", "gemm", _dense_bias_relu, lambda x, w, b: np.maximum(x @ w.T + b, 0),
       lambda t, x, w, b: t.relu(t.nn.functional.linear(x, w, b)), 2.0 * 64 * 1024 * 1024),
    Op("silu", "elementwise", _silu, lambda x: x / (1 + np.exp(-x)),
       lambda t, x: t.nn.functional.silu(x), 4.0 * 256 * 4096),
    Op("bn_relu", "elementwise", _bn_relu, _np_bn_relu,
       lambda t, x, s, b: t.relu(x * s[None, :, None, None] + b[None, :, None, None]),
       2.0 * 64 * 112 * 112),
    Op("group_norm", "layer_norm", _group_norm, _np_group_norm,
       lambda t, x, g, b: t.nn.functional.group_norm(x, 32, g, b), 8.0 * 256 * 784),
    Op("rms_norm_topi", "layer_norm", _rms_norm,
       lambda x, g: x / np.sqrt((x * x).mean(-1, keepdims=True) + 1e-5) * g,
       lambda t, x, g: t.nn.functional.rms_norm(x, (4096,), g, 1e-5), 4.0 * 64 * 4096),
    Op("channel_sum", "reduce", _channel_sum, lambda x: x.sum(1), lambda t, x: x.sum(1),
       512 * 784.0),
    Op("argmax", "reduce", _argmax, lambda x: x.argmax(1), lambda t, x: t.argmax(x, 1),
       128 * 1000.0),
    # added 2026-11-29, later: a ViT's 197 tokens under full vectors, a layout change,
    # a transposed convolution (the softmax is the attention's 12 x 197 x 197, as rows)
    Op("dense_vit", "gemm", _dense(197, 768, 2304), lambda x, w: x @ w.T,
       lambda t, x, w: t.nn.functional.linear(x, w), 2.0 * 197 * 768 * 2304),
    Op("softmax_attn_vit", "softmax", _softmax(12 * 197, 197), _np_softmax,
       lambda t, x: t.softmax(x, -1), 4.0 * 12 * 197 * 197),
    Op("nchw_to_nhwc", "transpose", _nchw_to_nhwc,
       lambda x: np.ascontiguousarray(x.transpose(0, 2, 3, 1)),
       lambda t, x: x.permute(0, 2, 3, 1).contiguous(), 256 * 3136.0),
    Op("conv_transpose", "conv", _conv_transpose, _np_conv_transpose,
       lambda t, d, k: t.nn.functional.conv_transpose2d(d, k, stride=2, padding=1),
       2.0 * 64 * 32 * 16 * 28 * 28),
]  # fmt: skip
BY_NAME = {op.name: op for op in OPS}


def main(argv: list[str] | None = None) -> int:
    """Tune and time each operator (see the module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--ops", default=",".join(BY_NAME))
    ap.add_argument("--trials", type=int, default=64)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--torch-site", default=None)
    ap.add_argument("--threads", type=int, default=1, help="threads for every library")
    args = ap.parse_args(argv)
    threads = args.threads
    torch = load_torch(args.torch_site)
    if torch is not None:
        torch.set_num_threads(threads)
    print(f"load: {os.getloadavg()}; torch: {getattr(torch, '__version__', 'not importable')}; "
          f"{threads} thread(s), {'process CPU' if threads == 1 else 'wall'} clock")  # fmt: skip
    head = ("operator", "ours us", "torch", "numpy", "rel err", "tune s")
    print(" ".join(f"{h:{w}}" for h, w in zip(head, ("18s", ">9s", ">6s", ">7s", ">8s", ">6s"))))
    worst = 0.0
    for name in args.ops.split(","):
        op = BY_NAME[name]
        task, snaps, _ = tune(op, threads, [args.trials], args.seed, None)
        trace, _cost, wall, _invalid = snaps[args.trials]
        ours = time_ours(task, trace, threads, op)
        # one thread: the process CPU clock (load on a shared machine left out); several:
        # the wall clock, the only one that shows the threads' overlap
        clock = "cpu_s" if threads == 1 else "s"
        t_ours = ours.get("ours_cpu_s", ours["ours_s"])
        t_torch = time_torch(torch, op, task.args, threads)
        t_numpy = time_numpy(op, task.args, threads)
        vs_torch = f"{t_torch[clock] / t_ours:5.2f}x" if t_torch else "    -"
        vs_numpy = t_numpy[clock] / t_ours
        worst = max(worst, ours["rel_error"])
        print(f"{name:18s} {t_ours * 1e6:9.1f} {vs_torch:>6s} {vs_numpy:6.2f}x "
              f"{ours['rel_error']:8.1e} {wall:6.0f}", flush=True)  # fmt: skip
    print(f"load: {os.getloadavg()}")
    return 0 if worst < 1e-3 else 1


if __name__ == "__main__":
    sys.exit(main())
