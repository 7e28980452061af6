"""The workloads of the golden traces (tests/golden/traces/), frozen.

A golden trace ``<workload>.<case>.json`` replays onto a fresh ``tir.Schedule`` of
``WORKLOADS[<workload>]()``; the goldens prove that a trace written today replays to the
same IR next year, so these definitions never change (add a new workload instead).
They are deliberately not shared with other test helpers, which are free to change.

``make_trace_goldens.py`` (beside this file) wrote the JSON files once, from the search's
sketches and from the hand-written schedules below; the test never regenerates them.
"""

from __future__ import annotations

from collections.abc import Callable

from ansor_lab import te, tir
from ansor_lab.dsl.tensor import Tensor


def matmul() -> list[Tensor]:
    """C[i, j] = sum_k A[i, k] * B[k, j], 64 x 48 x 32."""
    A = te.placeholder((64, 32), name="A")
    B = te.placeholder((32, 48), name="B")
    k = te.reduce_axis((0, 32), name="k")
    C = te.compute((64, 48), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    return [A, B, C]


def matmul_relu() -> list[Tensor]:
    """D = relu(A @ B), 32 x 32 x 32: a reduction with a fusible consumer."""
    A = te.placeholder((32, 32), name="A")
    B = te.placeholder((32, 32), name="B")
    k = te.reduce_axis((0, 32), name="k")
    C = te.compute((32, 32), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    D = te.compute((32, 32), lambda i, j: te.max(C[i, j], te.const(0.0, "float32")), name="D")
    return [A, B, D]


def matmul_exp() -> list[Tensor]:
    """C = A @ B; D = exp(C / 32), 64 x 48 x 32: an elementwise epilogue on a reduction."""
    A, B, C = matmul()
    D = te.compute((64, 48), lambda i, j: te.exp(C[i, j] * (1.0 / 32)), name="D")
    return [A, B, D]


def chain() -> list[Tensor]:
    """The course's chain, 16 x 16: C = A @ B; D = exp(C); F = D @ E."""
    n = 16
    A = te.placeholder((n, n), name="A")
    B = te.placeholder((n, n), name="B")
    E = te.placeholder((n, n), name="E")
    k = te.reduce_axis((0, n), name="k")
    C = te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    D = te.compute((n, n), lambda i, j: te.exp(C[i, j] * (1.0 / n)), name="D")
    k2 = te.reduce_axis((0, n), name="k2")
    F = te.compute((n, n), lambda i, j: te.sum(D[i, k2] * E[k2, j], axis=k2), name="F")
    return [A, B, E, F]


def elementwise3() -> list[Tensor]:
    """B = A * 2; C = B + 1, 64 x 64: two elementwise stages."""
    A = te.placeholder((64, 64), name="A")
    B = te.compute((64, 64), lambda i, j: A[i, j] * 2.0, name="B")
    C = te.compute((64, 64), lambda i, j: B[i, j] + 1.0, name="C")
    return [A, C]


def conv2d_bias_relu() -> list[Tensor]:
    """relu(conv2d(pad(data), kernel) + bias): NCHW 1x8x8x8, 8 filters 3x3, 'same'."""
    n, c, hw, f, ks = 1, 8, 8, 8, 3
    p = ks // 2
    data = te.placeholder((n, c, hw, hw), name="data")
    kernel = te.placeholder((f, c, ks, ks), name="kernel")
    bias = te.placeholder((f,), name="bias")
    pad = te.compute(
        (n, c, hw + 2 * p, hw + 2 * p),
        lambda b, ch, y, x: te.if_then_else(
            te.all(y >= p, y < hw + p, x >= p, x < hw + p),
            data[b, ch, y - p, x - p],
            te.const(0.0, "float32"),
        ),
        name="pad",
    )
    rc = te.reduce_axis((0, c), name="rc")
    ry = te.reduce_axis((0, ks), name="ry")
    rx = te.reduce_axis((0, ks), name="rx")
    conv = te.compute(
        (n, f, hw, hw),
        lambda b, o, y, x: te.sum(
            pad[b, rc, y + ry, x + rx] * kernel[o, rc, ry, rx], axis=[rc, ry, rx]
        ),
        name="conv",
    )
    out = te.compute(
        (n, f, hw, hw),
        lambda b, o, y, x: te.max(conv[b, o, y, x] + bias[o], te.const(0.0, "float32")),
        name="relu",
    )
    return [data, kernel, bias, out]


def softmax() -> list[Tensor]:
    """Row softmax, 4 x 512: small spatial extent, long reductions (the rfactor case)."""
    rows, cols = 4, 512
    A = te.placeholder((rows, cols), name="A")
    k1 = te.reduce_axis((0, cols), name="k1")
    mx = te.compute((rows,), lambda i: te.max(A[i, k1], axis=k1), name="rowmax")
    ex = te.compute((rows, cols), lambda i, j: te.exp(A[i, j] - mx[i]), name="expv")
    k2 = te.reduce_axis((0, cols), name="k2")
    sm = te.compute((rows,), lambda i: te.sum(ex[i, k2], axis=k2), name="rowsum")
    out = te.compute((rows, cols), lambda i, j: ex[i, j] / sm[i], name="softmax")
    return [A, out]


def row_sum() -> list[Tensor]:
    """S[i] = sum_k A[i, k], 16 x 64."""
    A = te.placeholder((16, 64), name="A")
    k = te.reduce_axis((0, 64), name="k")
    S = te.compute((16,), lambda i: te.sum(A[i, k], axis=k), name="S")
    return [A, S]


WORKLOADS: dict[str, Callable[[], list[Tensor]]] = {
    "matmul": matmul,
    "matmul_relu": matmul_relu,
    "matmul_exp": matmul_exp,
    "chain": chain,
    "elementwise3": elementwise3,
    "conv2d_bias_relu": conv2d_bias_relu,
    "softmax": softmax,
    "row_sum": row_sum,
}


def workload_of(case: str) -> str:
    """The workload of a golden case name ``<workload>.<case>``."""
    return case.split(".", 1)[0]


def fresh_schedule(case: str) -> tir.Schedule:
    """A fresh block-style schedule of the workload a golden case was written for."""
    return tir.Schedule(te.create_prim_func(WORKLOADS[workload_of(case)]()))
