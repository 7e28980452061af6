"""Differential check of SIMD/parallel/unroll-heavy schedules against numpy.

Each case is a workload with a schedule that exercises the fast paths together (register
tiles kept in vectors, packed copies, gathers and strided loads, masked tails of
non-divisible splits, unrolled bodies, parallel loops on two threads). Integer results
must be bit-for-bit equal; float results agree within a tolerance (FMA contraction
changes the rounding).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest
from tiled_matmul import tile_matmul
from workloads import matmul

import ansor_lab as tvm
from ansor_lab import te, tir, topi
from ansor_lab.topi import testing as ref


@dataclass
class Case:
    args: list  # tensors in call order, outputs last
    schedule: Callable[[tir.Schedule], None]  # applies the steps in place
    reference: Callable[..., list]  # numpy inputs -> expected outputs
    n_out: int = 1
    rtol: float = 1e-5
    paths: tuple = ()  # loop-report words the schedule must produce


def _loops(sch, block):
    return sch.get_loops(sch.get_block(block))


def _named(sch, block):
    loops = _loops(sch, block)
    return {sch.get(lp).name: lp for lp in loops}


# -- matmul variants --------------------------------------------------------------------
def _matmul_args(m, n, k, dtype):
    return matmul(m, n, k, dtype)


def _mm_ref(a, b):
    return [
        (a.astype(np.float64) @ b.astype(np.float64)).astype(a.dtype)
        if a.dtype.kind == "f"
        else a @ b
    ]


def _mm_register_tile(ti, tj, parallel=True, pack=True):
    return lambda sch: tile_matmul(sch, ti, tj, pack=pack, parallel=parallel)


def _mm_k_unrolled(sch):
    c = sch.get_block("C")
    i, j, kk = sch.get_loops(c)
    j0, j1 = sch.split(j, [None, 8])
    k0, k1 = sch.split(kk, [None, 4])
    sch.reorder(i, j0, k0, k1, j1)
    sch.unroll(k1)
    sch.vectorize(j1)
    sch.parallel(i)


def _mm_auto_unroll(sch):
    c = sch.get_block("C")
    i, j, kk = sch.get_loops(c)
    i0, i1 = sch.split(i, [None, 2])
    j0, j1 = sch.split(j, [None, 16])
    sch.reorder(i0, j0, kk, i1, j1)
    sch.vectorize(j1)
    sch.annotate(i0, "pragma_auto_unroll_max_step", 64)
    sch.parallel(i0)


# -- convolutions -----------------------------------------------------------------------
def _conv_nhwc_case():
    data = te.placeholder((1, 9, 9, 32), name="data")
    wt = te.placeholder((3, 3, 32, 40), name="wt")
    out = topi.nn.conv2d_nhwc(data, wt, 1, 1, 1)
    name = out.op.name

    def apply(sch):
        cb = sch.get_block(name)
        L = _named(sch, name)
        ko, ki = sch.split(L["ff"], [None, 16])  # 40 = 2.5 x 16: a masked tail
        sch.reorder(L["nn"], ko, L["yy"], L["ry"], L["rx"], L["rc"], L["xx"], ki)
        cl = sch.cache_write(cb, 0, "local")
        sch.reverse_compute_at(cl, L["yy"])
        sch.unroll(L["xx"])
        sch.vectorize(ki)
        wb = sch.cache_read(cb, "wt", "global")
        sch.compute_at(wb, ko)
        sch.vectorize(sch.get_loops(wb)[-1])
        sch.parallel(ko)

    return Case(
        [data, wt, out],
        apply,
        lambda d, w: [ref.conv2d_nhwc_python(d, w, 1, 1)],
        rtol=1e-4,
        paths=("masked_loads", "parallel -> 2 threads", "unrolled"),
    )


def _conv_nchw_strided_case():
    data = te.placeholder((1, 8, 13, 13), name="data")
    wt = te.placeholder((12, 8, 3, 3), name="wt")
    out = topi.nn.conv2d_nchw(data, wt, 2, 1, 1)
    name = out.op.name

    def apply(sch):
        L = _named(sch, name)
        sch.reorder(L["nn"], L["ff"], L["yy"], L["rc"], L["ry"], L["rx"], L["xx"])
        sch.vectorize(L["xx"])  # stride 2 along x: the input is read by strided loads
        sch.unroll(L["rx"])
        sch.parallel(L["ff"])

    return Case(
        [data, wt, out],
        apply,
        lambda d, w: [ref.conv2d_nchw_python(d, w, 2, 1)],
        rtol=1e-4,
        paths=("strided_loads", "parallel -> 2 threads"),
    )


def _depthwise_case():
    data = te.placeholder((1, 24, 15, 15), name="data")
    wt = te.placeholder((24, 1, 3, 3), name="wt")
    out = topi.nn.depthwise_conv2d_nchw(data, wt, 1, 1, 1)
    name = out.op.name

    def apply(sch):
        pad = sch.get_block("PaddedInput")
        L = _named(sch, name)
        names = list(L)  # b, c, i, j, di, dj
        b, c, y, x, di, dj = (L[n] for n in names)
        x0, x1 = sch.split(x, [None, 8])  # 15 = 8 + 7: masked tail
        sch.reorder(b, c, y, x0, di, dj, x1)
        sch.unroll(di)
        sch.unroll(dj)
        sch.vectorize(x1)
        sch.compute_at(pad, c)
        sch.vectorize(sch.get_loops(pad)[-1])
        sch.parallel(c)

    return Case(
        [data, wt, out],
        apply,
        lambda d, w: [ref.depthwise_conv2d_python_nchw(d, w, 1, 1)],
        rtol=1e-5,
        paths=("masked_loads", "unrolled", "parallel -> 2 threads"),
    )


# -- softmax, broadcasting elementwise, integer arithmetic, float64 ----------------------
def _softmax_case():
    x = te.placeholder((37, 53), name="x")
    out = topi.nn.softmax(x)

    def apply(sch):
        i, j = _loops(sch, "T_softmax_norm")
        _, j1 = sch.split(j, [None, 16])  # 53 = 3 * 16 + 5: the tail is a 5-lane vector
        sch.vectorize(j1)
        for stage in ("T_softmax_expsum", "T_softmax_exp", "T_softmax_maxelem"):
            sch.compute_at(sch.get_block(stage), i)
        _, e1 = sch.split(_loops(sch, "T_softmax_exp")[-1], [None, 16])
        sch.vectorize(e1)
        sch.parallel(i)

    return Case(
        [x, out],
        apply,
        lambda a: [ref.softmax_python(a)],
        rtol=1e-5,
        paths=("SIMD x16", "SIMD x5", "parallel -> 2 threads"),
    )


def _broadcast_case():
    A = te.placeholder((5, 7, 45), name="A")
    s = te.placeholder((5,), name="s")
    bias = te.placeholder((45,), name="bias")
    out = te.compute((5, 7, 45), lambda i, j, k: A[i, j, k] * s[i] + bias[k], name="out")

    def apply(sch):
        i, j, k = _loops(sch, "out")
        f = sch.fuse(i, j)
        k0, k1 = sch.split(k, [None, 16])
        sch.unroll(k0)
        sch.vectorize(k1)
        sch.parallel(f)

    return Case(
        [A, s, bias, out],
        apply,
        lambda a, s_, b: [a * s_[:, None, None] + b[None, None, :]],
        rtol=1e-6,
        # 45 = 16 + 16 + 13: the unrolled k_0 is split where the guard k_0 * 16 + k_1 < 45
        # is decided, and the last copy's vector loop loses the lanes the guard refuses:
        # 13 lanes, unmasked
        paths=("SIMD x16", "SIMD x13", "scalar_loads", "unrolled", "parallel -> 2 threads"),
    )


def _int_arith_case():
    A = te.placeholder((6, 50), "int32", name="A")
    B = te.placeholder((6, 50), "int32", name="B")
    three = te.const(3, "int32")
    out = te.compute(
        (6, 50),
        lambda i, j: (
            te.max(te.floordiv(A[i, j], three) * B[i, j], te.floormod(A[i, j], 7))
            + te.if_then_else(A[i, j] > B[i, j], A[i, j] - B[i, j], te.min(A[i, j], 4))
        ),
        name="out",
    )

    def apply(sch):
        i, j = _loops(sch, "out")
        _, j1 = sch.split(j, [None, 16])
        sch.vectorize(j1)
        sch.parallel(i)

    def expect(a, b):
        return [np.maximum((a // 3) * b, a % 7) + np.where(a > b, a - b, np.minimum(a, 4))]

    # 50 = 3 * 16 + 2: the guarded last tile is a 2-lane vector, unmasked
    return Case([A, B, out], apply, expect, paths=("SIMD x16", "SIMD x2", "parallel -> 2 threads"))


def _colsum_f64_case():
    A = te.placeholder((33, 70), "float64", name="A")
    r = te.reduce_axis((0, 33), name="r")
    out = te.compute((70,), lambda j: te.sum(A[r, j] * A[r, j], axis=r), name="out")

    def apply(sch):
        j, rr = _loops(sch, "out")
        j0, j1 = sch.split(j, [None, 8])
        sch.reorder(j0, rr, j1)
        sch.vectorize(j1)
        sch.parallel(j0)

    return Case(
        [A, out],
        apply,
        lambda a: [(a * a).sum(axis=0)],
        rtol=1e-12,
        paths=("masked_loads", "parallel -> 2 threads"),
    )


def _exp_chain_case():
    """C = A @ B, D = exp(C), F = D @ E with both matmuls tiled and exp vectorized."""
    n = 48
    A = te.placeholder((n, n), name="A")
    B = te.placeholder((n, n), name="B")
    E = te.placeholder((n, n), name="E")
    k1 = te.reduce_axis((0, n), name="k1")
    C = te.compute((n, n), lambda i, j: te.sum(A[i, k1] * B[k1, j], axis=k1), name="C")
    D = te.compute((n, n), lambda i, j: te.exp(C[i, j] * 0.1), name="D")
    k2 = te.reduce_axis((0, n), name="k2")
    F = te.compute((n, n), lambda i, j: te.sum(D[i, k2] * E[k2, j], axis=k2), name="F")

    def apply(sch):
        for blk in ("C", "F"):
            i, j, kk = _loops(sch, blk)
            i0, i1 = sch.split(i, [None, 4])
            j0, j1 = sch.split(j, [None, 16])
            sch.reorder(i0, j0, kk, i1, j1)
            sch.unroll(i1)
            sch.vectorize(j1)
            sch.parallel(i0)
        _, dj = _loops(sch, "D")
        sch.vectorize(dj)

    def expect(a, b, e):
        d = np.exp((a.astype(np.float64) @ b) * 0.1)
        return [(d @ e).astype(np.float32)]

    return Case([A, B, E, F], apply, expect, rtol=1e-4, paths=("SIMD x48", "unrolled"))


CASES = {
    "matmul_tile4x64_packed_parallel": lambda: Case(
        _matmul_args(128, 128, 128, "float32"),
        _mm_register_tile(4, 64),
        _mm_ref,
        rtol=1e-4,
        paths=("SIMD x64", "unrolled", "parallel -> 2 threads"),
    ),
    "matmul_nondivisible_tile3x32": lambda: Case(
        _matmul_args(100, 100, 70, "float32"),
        _mm_register_tile(3, 32),
        _mm_ref,
        rtol=1e-4,
        paths=("masked_loads", "masked_stores", "unrolled", "parallel -> 2 threads"),
    ),
    "matmul_tile_no_pack_serial": lambda: Case(
        _matmul_args(64, 80, 96, "float32"),
        _mm_register_tile(6, 16, parallel=False, pack=False),
        _mm_ref,
        rtol=1e-4,
        paths=("SIMD x16", "unrolled"),
    ),
    "matmul_k_unrolled_float64": lambda: Case(
        _matmul_args(40, 48, 36, "float64"),
        _mm_k_unrolled,
        _mm_ref,
        rtol=1e-12,
        paths=("SIMD x8", "unrolled", "parallel -> 2 threads"),
    ),
    "matmul_int32_tile": lambda: Case(
        _matmul_args(36, 52, 44, "int32"),
        _mm_register_tile(4, 16),
        _mm_ref,
        paths=("masked_loads", "unrolled", "parallel -> 2 threads"),
    ),
    "matmul_auto_unroll_pragma": lambda: Case(
        _matmul_args(64, 64, 64, "float32"),
        _mm_auto_unroll,
        _mm_ref,
        rtol=1e-4,
        paths=("unrolled", "SIMD x16", "parallel -> 2 threads"),
    ),
    "conv2d_nhwc_register_tile": _conv_nhwc_case,
    "conv2d_nchw_stride2_strided_load": _conv_nchw_strided_case,
    "depthwise_conv2d_nchw": _depthwise_case,
    "softmax_rows": _softmax_case,
    "elementwise_broadcast": _broadcast_case,
    "int32_divmod_select": _int_arith_case,
    "float64_column_sums": _colsum_f64_case,
    "matmul_exp_matmul_chain": _exp_chain_case,
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_schedule_matches_numpy(name, rand):
    case = CASES[name]()
    sch = tir.Schedule(te.create_prim_func(case.args))
    case.schedule(sch)
    f = tvm.build(sch.mod, target="llvm", num_threads=2)
    report = f.loop_report()
    for word in case.paths:
        assert word in report, f"{name}: expected {word!r} in the loop report:\n{report}"
    inputs = [rand(tuple(t.shape), t.dtype) for t in case.args[: -case.n_out]]
    outputs = [np.full(tuple(t.shape), 123, t.dtype) for t in case.args[-case.n_out :]]
    f(*inputs, *outputs)
    for got, want in zip(outputs, case.reference(*inputs)):
        if got.dtype.kind == "f":
            np.testing.assert_allclose(got, want, rtol=case.rtol, atol=case.rtol)
        else:
            np.testing.assert_array_equal(got, want)
