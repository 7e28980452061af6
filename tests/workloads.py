"""The test workloads of every test directory, written once.

Each builder returns the tensors of a small compute DAG as a list, inputs first and the
outputs last (what ``te.create_prim_func`` and ``SearchTask`` take); sizes and names are
parameters, so each directory picks its shapes without writing its own copy. Beside them:
a search task of a tensor list and the tuning options that keep a search to seconds.

Importable as ``workloads`` from any test directory: pytest puts the directory of
``tests/conftest.py`` on ``sys.path`` when it imports it (the default "prepend" import
mode), in every worker under ``-n`` too.
"""

from __future__ import annotations

import pytest

from ansor_lab import auto_scheduler, te
from ansor_lab.dsl.tensor import Tensor
from ansor_lab.runtime import cuda_support

#: skips a test (or, as ``pytestmark``, a module) where no CUDA binding sees a GPU
needs_gpu = pytest.mark.skipif(
    not cuda_support.cuda_available(),
    reason=f"no usable CUDA GPU here ({cuda_support.cuda_unavailable_reason()})",
)

#: Search tasks target one core: parallel loops add only thread wake-ups to a test.
TARGET = "llvm -num-cores=1"
#: SketchPolicy parameters that keep a round to a few seconds.
FAST_PARAMS = {"population": 16, "generations": 1, "sample_init_min_population": 8}


# -- matmul and what is built around it ---------------------------------------------------


def matmul(n: int = 32, m: int | None = None, k: int | None = None, dtype: str = "float32"):
    """C[i, j] = sum_k A[i, k] * B[k, j], A n x k, B k x m (square by default)."""
    m = n if m is None else m
    k = n if k is None else k
    A = te.placeholder((n, k), name="A", dtype=dtype)
    B = te.placeholder((k, m), name="B", dtype=dtype)
    r = te.reduce_axis((0, k), name="k")
    C = te.compute((n, m), lambda i, j: te.sum(A[i, r] * B[r, j], axis=r), name="C")
    return [A, B, C]


def matmul_relu(n: int = 32) -> list[Tensor]:
    """D = relu(A @ B): a reduction with a fusible elementwise consumer."""
    A, B, C = matmul(n)
    D = te.compute((n, n), lambda i, j: te.max(C[i, j], te.const(0.0, "float32")), name="D")
    return [A, B, D]


def matmul_exp(n: int = 64, m: int = 48, k: int = 32) -> list[Tensor]:
    """C = A @ B; D = exp(C / k): an elementwise epilogue on a reduction (C kept too)."""
    A, B, C = matmul(n, m, k)
    D = te.compute((n, m), lambda i, j: te.exp(C[i, j] * (1.0 / k)), name="D")
    return [A, B, C, D]


def scaled_matmul(n: int = 32) -> list[Tensor]:
    """C = (2 A) @ B: a cheap, branch-free elementwise producer (always inlined)."""
    A = te.placeholder((n, n), name="A")
    B = te.placeholder((n, n), name="B")
    As = te.compute((n, n), lambda i, k: A[i, k] * 2.0, name="As")
    k = te.reduce_axis((0, n), name="k")
    C = te.compute((n, n), lambda i, j: te.sum(As[i, k] * B[k, j], axis=k), name="C")
    return [A, B, C]


def chain(n: int = 32) -> list[Tensor]:
    """The course's chain: C = A @ B; D = exp(C / n); F = D @ E (every stage returned)."""
    A = te.placeholder((n, n), name="A")
    B = te.placeholder((n, n), name="B")
    E = te.placeholder((n, n), name="E")
    k = te.reduce_axis((0, n), name="k")
    C = te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    D = te.compute((n, n), lambda i, j: te.exp(C[i, j] * (1.0 / n)), name="D")
    k2 = te.reduce_axis((0, n), name="k2")
    F = te.compute((n, n), lambda i, j: te.sum(D[i, k2] * E[k2, j], axis=k2), name="F")
    return [A, B, E, C, D, F]


def mm_exp_mm(n: int = 16, k: int = 24, m: int = 18, p: int = 20) -> list[Tensor]:
    """C = A @ B; D = exp(C); F = D @ E, unscaled and rectangular: only F is an output."""
    A = te.placeholder((n, k), name="A")
    B = te.placeholder((k, m), name="B")
    E = te.placeholder((m, p), name="E")
    r1 = te.reduce_axis((0, k), name="k")
    C = te.compute((n, m), lambda i, j: te.sum(A[i, r1] * B[r1, j], axis=r1), name="C")
    D = te.compute((n, m), lambda i, j: te.exp(C[i, j]), name="D")
    r2 = te.reduce_axis((0, m), name="r")
    F = te.compute((n, p), lambda i, j: te.sum(D[i, r2] * E[r2, j], axis=r2), name="F")
    return [A, B, E, F]


def int_matmul_colmax(n: int = 11, k: int = 21, m: int = 14) -> list[Tensor]:
    """Integer matmul, then the max of each column plus its index: exact results."""
    A = te.placeholder((n, k), name="A", dtype="int32")
    B = te.placeholder((k, m), name="B", dtype="int32")
    r = te.reduce_axis((0, k), name="k")
    C = te.compute((n, m), lambda i, j: te.sum(A[i, r] * B[r, j], axis=r), name="C")
    rr = te.reduce_axis((0, n), name="r")
    M = te.compute((m,), lambda j: te.max(C[rr, j] + j, axis=rr), name="M")
    return [A, B, M]


# -- convolution ------------------------------------------------------------------------


def conv2d_bias_relu(n: int = 1, c: int = 8, hw: int = 8, f: int = 8, k: int = 3) -> list:
    """relu(conv2d(pad(data), kernel) + bias), NCHW, stride 1, 'same' padding."""
    p = k // 2
    data = te.placeholder((n, c, hw, hw), name="data")
    kernel = te.placeholder((f, c, k, k), name="kernel")
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
    ry = te.reduce_axis((0, k), name="ry")
    rx = te.reduce_axis((0, k), name="rx")
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


# -- reductions and elementwise ---------------------------------------------------------


def softmax(rows: int = 4, cols: int = 512) -> list[Tensor]:
    """Row softmax: small spatial extent, long reductions (the rfactor case)."""
    A = te.placeholder((rows, cols), name="A")
    k1 = te.reduce_axis((0, cols), name="k1")
    mx = te.compute((rows,), lambda i: te.max(A[i, k1], axis=k1), name="rowmax")
    ex = te.compute((rows, cols), lambda i, j: te.exp(A[i, j] - mx[i]), name="expv")
    k2 = te.reduce_axis((0, cols), name="k2")
    sm = te.compute((rows,), lambda i: te.sum(ex[i, k2], axis=k2), name="rowsum")
    out = te.compute((rows, cols), lambda i, j: ex[i, j] / sm[i], name="softmax")
    return [A, out]


def row_sum(rows: int = 4, cols: int = 512, name: str = "S") -> list[Tensor]:
    """name[i] = sum_k A[i, k]."""
    A = te.placeholder((rows, cols), name="A")
    k = te.reduce_axis((0, cols), name="k")
    S = te.compute((rows,), lambda i: te.sum(A[i, k], axis=k), name=name)
    return [A, S]


def guarded_reduce(rows: int = 29, cols: int = 13, taps: int = 7) -> list[Tensor]:
    """A 1-D stencil along rows, zero-padded with if_then_else, then a max over columns."""
    A = te.placeholder((rows, cols), name="A")
    W = te.placeholder((taps,), name="W")
    half = taps // 2
    k = te.reduce_axis((0, taps), name="k")
    S = te.compute(
        (rows, cols),
        lambda i, j: te.sum(
            te.if_then_else(
                te.all(i + k >= half, i + k - half < rows),
                A[i + k - half, j],
                te.const(0.0, "float32"),
            )
            * W[k],
            axis=k,
        ),
        name="S",
    )
    c = te.reduce_axis((0, cols), name="c")
    M = te.compute(
        (rows,),
        lambda i: te.max(te.if_then_else(c % 2 == 0, S[i, c], S[i, c] * 0.5), axis=c),
        name="M",
    )
    return [A, W, M]


def elementwise(n: int = 64) -> list[Tensor]:
    """B = 2 A + 1."""
    A = te.placeholder((n, n), name="A")
    B = te.compute((n, n), lambda i, j: A[i, j] * 2.0 + 1.0, name="B")
    return [A, B]


def elementwise3(n: int = 64, m: int = 64) -> list[Tensor]:
    """B = A * 2; C = B + 1: two elementwise stages (both returned)."""
    A = te.placeholder((n, m), name="A")
    B = te.compute((n, m), lambda i, j: A[i, j] * 2.0, name="B")
    C = te.compute((n, m), lambda i, j: B[i, j] + 1.0, name="C")
    return [A, B, C]


# -- tasks and fast tuning ----------------------------------------------------------------


def make_task(tensors: list[Tensor], target: str = TARGET) -> auto_scheduler.SearchTask:
    """A search task of a tensor list (no registration needed)."""
    return auto_scheduler.SearchTask(compute_dag=auto_scheduler.ComputeDAG(tensors), target=target)


def fast_options(log_file: str | None, trials: int, per_round: int, **kw) -> object:
    """TuningOptions for tests: short runs, results checked against the reference."""
    runner = kw.pop("runner", None) or auto_scheduler.LocalRunner(
        timeout=kw.pop("run_timeout", 10), min_repeat_ms=5, number=1
    )
    # a generous build timeout: a candidate with a 512-step unroll budget can take seconds
    # to compile, and CI machines are busy; a timeout here would be noise, not a finding
    builder = auto_scheduler.LocalBuilder(timeout=120)
    callbacks = [auto_scheduler.RecordToFile(log_file)] if log_file else []
    return auto_scheduler.TuningOptions(
        num_measure_trials=trials,
        num_measures_per_round=per_round,
        verbose=0,
        measure_callbacks=callbacks,
        builder=builder,
        runner=runner,
        check_correctness=True,
        **kw,
    )


def fast_policy(task, seed: int = 0, **kw) -> auto_scheduler.SketchPolicy:
    """A SketchPolicy with FAST_PARAMS."""
    return auto_scheduler.SketchPolicy(task, params=dict(FAST_PARAMS), seed=seed, verbose=0, **kw)
