"""What the GPU search tests share: their workloads (the issue's list, small enough to
emulate in milliseconds), CUDA tasks of them, and the checks of a sampled GPU program
(lowered, cut into kernels, within the target's limits, and equal to the numpy reference
on the GPU emulator where the emulator exists)."""

from __future__ import annotations

import functools
import importlib.util

import numpy as np
from serial_oracle import serial_check
from workloads import conv2d_bias_relu, make_task, matmul, matmul_relu, row_sum

from ansor_lab import auto_scheduler, te, topi
from ansor_lab.codegen.kernel_form import split_kernels
from ansor_lab.dsl.reference import reference_outputs
from ansor_lab.dsl.tensor import PlaceholderOp, Tensor
from ansor_lab.ir import gpu
from ansor_lab.ir.visitor import walk_stmts
from ansor_lab.measure.workers import random_inputs
from ansor_lab.schedule.lower import lower_state

#: the CUDA target of the tests (a generic one: 1024 threads, 48 KiB shared per block)
GPU_TARGET = "cuda"


def batch_matmul(b: int = 2, m: int = 32, n: int = 24, k: int = 40) -> list[Tensor]:
    """topi's batch_matmul: x [b, m, k] @ y [b, n, k]^T."""
    x = te.placeholder((b, m, k), name="x")
    y = te.placeholder((b, n, k), name="y")
    return [x, y, topi.nn.batch_matmul(x, y)]


def depthwise(c: int = 8, hw: int = 10) -> list[Tensor]:
    """topi's depthwise_conv2d_nchw, 3x3, stride 1, pad 1."""
    data = te.placeholder((1, c, hw, hw), name="data")
    kernel = te.placeholder((c, 1, 3, 3), name="kernel")
    return [data, kernel, topi.nn.depthwise_conv2d_nchw(data, kernel, 1, 1, 1)]


def softmax(rows: int = 6, cols: int = 200) -> list[Tensor]:
    """topi's softmax over the last axis."""
    x = te.placeholder((rows, cols), name="x")
    return [x, topi.nn.softmax(x)]


def layer_norm(rows: int = 6, cols: int = 96) -> list[Tensor]:
    """topi's layer_norm over the last axis."""
    x = te.placeholder((rows, cols), name="x")
    gamma = te.placeholder((cols,), name="gamma")
    beta = te.placeholder((cols,), name="beta")
    return [x, gamma, beta, topi.nn.layer_norm(x, gamma, beta, axis=[1])]


def pooling(c: int = 8, hw: int = 12) -> list[Tensor]:
    """topi's 3x3 max pooling, stride 2, pad 1."""
    data = te.placeholder((1, c, hw, hw), name="data")
    return [data, topi.nn.pool2d(data, (3, 3), (2, 2), (1, 1), (1, 1, 1, 1), "max")]


def transpose(n: int = 48, m: int = 40) -> list[Tensor]:
    """topi's transpose of a matrix."""
    x = te.placeholder((n, m), name="x")
    return [x, topi.transpose(x)]


def elementwise_chain(n: int = 40, m: int = 72) -> list[Tensor]:
    """relu(exp(2 x + 1) - y): three elementwise stages, one output."""
    x = te.placeholder((n, m), name="x")
    y = te.placeholder((n, m), name="y")
    a = te.compute((n, m), lambda i, j: x[i, j] * 2.0 + 1.0, name="a")
    b = te.compute((n, m), lambda i, j: te.exp(a[i, j] * 0.1) - y[i, j], name="b")
    c = te.compute((n, m), lambda i, j: te.max(b[i, j], te.const(0.0, "float32")), name="c")
    return [x, y, c]


#: the GPU tests' workloads by name (the issue's list, plus a row sum and a fused matmul)
GPU_WORKLOADS = {
    "matmul": lambda: matmul(64),
    "matmul_relu": lambda: matmul_relu(48),
    "batch_matmul": batch_matmul,
    "conv2d": lambda: conv2d_bias_relu(1, 16, 7, 16, 3),  # the tutorial's conv, shrunk
    "depthwise": depthwise,
    "softmax": softmax,
    "layer_norm": layer_norm,
    "pooling": pooling,
    "transpose": transpose,
    "elementwise_chain": elementwise_chain,
    "row_sum": lambda: row_sum(4, 1024),
}


def gpu_task(name: str, target: str = GPU_TARGET):
    """A CUDA search task of workload ``name``."""
    return make_task(GPU_WORKLOADS[name](), target)


@functools.cache
def policy_of(name: str, target: str = GPU_TARGET):
    """The SketchPolicy of a CUDA task of workload ``name`` (one per test process)."""
    return auto_scheduler.SketchPolicy(gpu_task(name, target), seed=0, verbose=0)


def has_emulator() -> bool:
    """Whether the GPU emulator (codegen.emulator) is in this checkout."""
    return importlib.util.find_spec("ansor_lab.codegen.emulator") is not None


def check_gpu_program(sch, hw, *, emulate: bool = True, serial: bool = True, seed: int = 0):
    """Lower ``sch``, cut it into kernels, check every stage runs in a kernel within the
    limits of ``hw``, compare its outputs with the reference with its thread loops run
    serially on the CPU (``serial_oracle``) and, with the emulator, on the emulator.
    Returns the kernel program."""
    func = lower_state(sch.state, sch.args)
    program = split_kernels(func)
    assert program.kernels, "no kernel"
    for k in program.kernels:
        assert 1 <= k.threads_per_block <= hw.max_threads_per_block, (k.name, k.block)
        assert k.shared_bytes() <= hw.max_shared_memory_per_block, (k.name, k.shared_bytes())
    computed = {st.name for st in sch.state.compute_stages() if not st.is_inlined}
    in_kernels = {n for k in program.kernels for n in k.stage_names}
    assert computed <= in_kernels, (computed - in_kernels, str(sch.trace))
    # run one thread after another, a cross-thread reduction's tree (which waits at
    # barriers for the other threads' partials) computes nothing sensible: the serial
    # oracle is for programs without barriers, the emulator for all
    if serial and not any(gpu.is_barrier(s) for s in walk_stmts(func.body)):
        serial_check(sch, seed)
    if emulate and has_emulator():
        from ansor_lab.codegen.emulator import emulate as run  # noqa: PLC0415 - optional piece

        args = sch.args
        params = [(t.name, list(t.shape), t.dtype) for t in args]
        arrays = random_inputs(params, seed)
        for t, a in zip(args, arrays):
            if not isinstance(t.op, PlaceholderOp):
                a[...] = 99.0
        run(program, arrays)
        want = reference_outputs(args, arrays)
        for t, got, exp in zip(args, arrays, want):
            if not isinstance(t.op, PlaceholderOp):
                np.testing.assert_allclose(
                    got, exp, rtol=1e-4, atol=1e-4, err_msg=f"output {t.name} of\n{sch.trace}"
                )
    return program
