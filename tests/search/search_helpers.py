"""Shared pieces of the search tests: tiny workloads, fast options, the numeric check.

Every workload is small enough that a candidate builds in well under a second and runs
in microseconds; every search uses a small population and one generation, so a tuning
round costs a few seconds. Tasks target ``llvm -num-cores=1``: parallel loops only add
thread wake-ups (milliseconds on a busy CI machine) and nothing to what is tested here.
"""

from __future__ import annotations

import numpy as np

import ansor_lab as tvm
from ansor_lab import auto_scheduler, te
from ansor_lab.dsl.reference import reference_outputs
from ansor_lab.dsl.tensor import PlaceholderOp, Tensor
from ansor_lab.measure.workers import random_inputs

TARGET = "llvm -num-cores=1"
#: SketchPolicy parameters that keep a round to a few seconds.
FAST_PARAMS = {"population": 16, "generations": 1, "sample_init_min_population": 8}


# -- workloads ------------------------------------------------------------------------


def matmul(n: int = 32, m: int | None = None, k: int | None = None) -> list[Tensor]:
    """C[i, j] = sum_k A[i, k] * B[k, j]."""
    m = n if m is None else m
    k = n if k is None else k
    A = te.placeholder((n, k), name="A")
    B = te.placeholder((k, m), name="B")
    r = te.reduce_axis((0, k), name="k")
    C = te.compute((n, m), lambda i, j: te.sum(A[i, r] * B[r, j], axis=r), name="C")
    return [A, B, C]


def matmul_relu(n: int = 32) -> list[Tensor]:
    """D = relu(A @ B): a reduction with a fusible elementwise consumer."""
    A, B, C = matmul(n)
    D = te.compute((n, n), lambda i, j: te.max(C[i, j], te.const(0.0, "float32")), name="D")
    return [A, B, D]


def conv2d_bias_relu(n: int = 1, c: int = 8, hw: int = 8, f: int = 8, k: int = 3) -> list[Tensor]:
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


def scaled_matmul(n: int = 32) -> list[Tensor]:
    """C = (2 A) @ B: a cheap, branch-free elementwise producer (always inlined)."""
    A = te.placeholder((n, n), name="A")
    B = te.placeholder((n, n), name="B")
    As = te.compute((n, n), lambda i, k: A[i, k] * 2.0, name="As")
    k = te.reduce_axis((0, n), name="k")
    C = te.compute((n, n), lambda i, j: te.sum(As[i, k] * B[k, j], axis=k), name="C")
    return [A, B, C]


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


def row_sum(rows: int = 4, cols: int = 512) -> list[Tensor]:
    """S[i] = sum_k A[i, k]."""
    A = te.placeholder((rows, cols), name="A")
    k = te.reduce_axis((0, cols), name="k")
    S = te.compute((rows,), lambda i: te.sum(A[i, k], axis=k), name="S")
    return [A, S]


def elementwise(n: int = 64) -> list[Tensor]:
    """B = 2 A + 1."""
    A = te.placeholder((n, n), name="A")
    B = te.compute((n, n), lambda i, j: A[i, j] * 2.0 + 1.0, name="B")
    return [A, B]


WORKLOADS = {
    "matmul": matmul,
    "matmul_relu": matmul_relu,
    "conv2d": conv2d_bias_relu,
    "softmax": softmax,
    "row_sum": row_sum,
    "elementwise": elementwise,
    "scaled_matmul": scaled_matmul,
}


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


# -- the numeric check ----------------------------------------------------------------


def check_numeric(sch, args: list[Tensor], seed: int = 0) -> None:
    """Build ``sch`` with LLVM, run it on random inputs, compare with the reference.

    Output arrays start filled with garbage, so an element the program forgets to write
    shows up as a mismatch.
    """
    f = tvm.build(sch.mod, target="llvm")
    params = [(t.name, list(t.shape), t.dtype) for t in args]
    arrays = random_inputs(params, seed)
    for t, a in zip(args, arrays):
        if not isinstance(t.op, PlaceholderOp):
            a[...] = 99.0
    f(*arrays)
    want = reference_outputs(args, arrays)
    for t, got, exp in zip(args, arrays, want):
        if not isinstance(t.op, PlaceholderOp):
            np.testing.assert_allclose(
                got, exp, rtol=1e-4, atol=1e-4, err_msg=f"output {t.name} of\n{sch.trace}"
            )


def record_key(inp) -> tuple:
    """(sketch, decisions) of a record, hashable (the search's candidate identity)."""
    return (inp.sketch, _freeze(inp.decisions))


def _freeze(x):
    if isinstance(x, (list, tuple)):
        return tuple(_freeze(v) for v in x)
    return x
