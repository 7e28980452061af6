"""Vectorized loops become real SIMD code: wide vector loads, arithmetic and FMAs in the
optimized LLVM IR, and zmm/ymm instructions in the assembly on AVX-512/AVX2 hosts."""

from __future__ import annotations

import re

import numpy as np
import pytest
from tiled_matmul import matmul_schedule, tile_matmul

import ansor_lab as tvm
from ansor_lab import te, tir


def _vector_widths(ll: str, op: str, elem: str) -> list[int]:
    """Lane counts of every ``op`` (load, fadd, fmul, add...) on ``<N x elem>`` in ``ll``."""
    if op == "load":
        pattern = rf"= load <(\d+) x {elem}>"
    else:
        pattern = rf"= {op}(?: [a-z]+)* <(\d+) x {elem}>"
    return [int(n) for n in re.findall(pattern, ll)]


def _elementwise(n: int = 8, m: int = 256, lanes: int = 64, dtype: str = "float32"):
    A = te.placeholder((n, m), dtype, name="A")
    B = te.placeholder((n, m), dtype, name="B")
    one = te.const(1, dtype)
    C = te.compute((n, m), lambda i, j: A[i, j] * B[i, j] + one, name="C")
    sch = tir.Schedule(te.create_prim_func([A, B, C]))
    _, j = sch.get_loops(sch.get_block("C"))
    _, ji = sch.split(j, [None, lanes])
    sch.vectorize(ji)
    return sch


def _matmul_tiled(n: int = 128, dtype: str = "float32"):
    """The hand schedule that reaches numpy speed (register tile 4 x 64, packed B)."""
    return tile_matmul(matmul_schedule(n, n, n, dtype), 4, 64)


def test_elementwise_vector_loads_and_arithmetic(rand):
    f = tvm.build(_elementwise().mod, target="llvm")
    ll = f.get_source("ll")
    assert max(_vector_widths(ll, "load", "float"), default=0) >= 16, ll
    assert max(_vector_widths(ll, "fmul", "float"), default=0) >= 16, ll
    # one vector load per operand, no per-lane scalar code
    assert "SIMD x64 [vector_loads=2, vector_stores=1]" in f.loop_report()
    a, b = rand((8, 256)), rand((8, 256))
    c = np.empty_like(a)
    f(a, b, c)
    np.testing.assert_allclose(c, a * b + 1, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize(("dtype", "elem"), [("int32", "i32"), ("float64", "double")])
def test_other_dtypes_vectorize(rand, dtype, elem):
    f = tvm.build(_elementwise(dtype=dtype, lanes=16).mod, target="llvm")
    ll = f.get_source("ll")
    op = "mul" if dtype == "int32" else "fmul"
    assert max(_vector_widths(ll, op, elem), default=0) >= 8, ll
    a, b = rand((8, 256), dtype), rand((8, 256), dtype)
    c = np.empty_like(a)
    f(a, b, c)
    if dtype == "int32":
        np.testing.assert_array_equal(c, a * b + 1)
    else:
        np.testing.assert_allclose(c, a * b + 1, rtol=1e-12)


def test_elementwise_assembly_uses_wide_registers(cpu_features):
    f = tvm.build(_elementwise().mod, target="llvm")
    asm = f.get_source("asm")
    if "avx512f" in cpu_features:
        assert re.search(r"\bv\w+ps\b.*%zmm", asm), "AVX-512 host but no zmm instruction"
    elif "avx2" in cpu_features:
        assert re.search(r"\bv\w+ps\b.*%ymm", asm), "AVX2 host but no ymm instruction"
    else:
        pytest.skip("host CPU has neither AVX-512 nor AVX2")


def test_matmul_tile_is_fma_on_vectors_with_broadcast(cpu_features, rand):
    f = tvm.build(_matmul_tiled().mod, target="llvm", num_threads=1)
    ll = f.get_source("ll")
    # multiply-add on vectors, marked contractible (or already fused)
    fused = re.search(r"@llvm\.fmuladd\.v\d+f32|@llvm\.fma\.v\d+f32", ll)
    contract = re.search(r"fmul contract <(\d+) x float>", ll) and re.search(
        r"fadd contract <(\d+) x float>", ll
    )
    assert fused or contract, ll
    assert max(_vector_widths(ll, "load", "float"), default=0) >= 16
    # the accumulator tile C_local was compacted and promoted to registers: no stack slot
    assert not re.search(r"= alloca ", ll), "the register tile stayed in memory"
    report = f.loop_report()
    # A[i, k] is the same for every lane: one scalar load, broadcast
    assert "[scalar_loads=1, vector_loads=2, vector_stores=1]" in report, report
    asm = f.get_source("asm")
    if "avx512f" in cpu_features and "fma" in cpu_features:
        assert re.search(r"vfmadd\d+ps\s+.*%zmm", asm), "no AVX-512 FMA in the matmul"
        assert re.search(r"vbroadcastss|\{1to16\}", asm), "A[i, k] is not broadcast"
    elif "avx2" in cpu_features and "fma" in cpu_features:
        assert re.search(r"vfmadd\d+ps\s+.*%ymm", asm), "no AVX2 FMA in the matmul"
    else:
        pytest.skip("host CPU has no AVX2/AVX-512 FMA: only the IR was checked")
    a, b = rand((128, 128)), rand((128, 128))
    c = np.empty_like(a)
    f(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)


def test_contract_by_default_fast_math_on_request():
    default = tvm.build(_elementwise().mod, target="llvm").get_source("ll-unopt")
    assert "fmul contract" in default and "fast" not in default
    fast = tvm.build(_elementwise().mod, target="llvm", fast_math=True).get_source("ll-unopt")
    assert "fmul fast" in fast and "fadd fast" in fast


def test_wide_vector_loop_is_reported_and_too_wide_one_stays_scalar():
    sch = _elementwise(n=2, m=512, lanes=512)  # 512 lanes: beyond MAX_LANES (256)
    f = tvm.build(sch.mod, target="llvm")
    assert "scalar loop (extent 512 outside 2..256)" in f.loop_report()


@pytest.mark.parametrize(("dtype", "max_ulp"), [("float32", 3), ("float64", 1), ("float16", 1)])
def test_vector_exp_is_inline_simd_and_accurate(dtype, max_ulp):
    """LLVM lowers ``llvm.exp`` on a vector to one libm call per lane; the backend instead
    emits a range reduction and a polynomial, so no call is left in the vector loop."""
    n = 4096 + 16
    A = te.placeholder((n,), dtype, name="A")
    D = te.compute((n,), lambda i: te.exp(A[i]), name="D")
    sch = tir.Schedule(te.create_prim_func([A, D]))
    (i,) = sch.get_loops(sch.get_block("D"))
    _, ii = sch.split(i, [None, 16])
    sch.vectorize(ii)
    f = tvm.build(sch.mod, target="llvm")
    ll = f.get_source("ll")
    assert "@llvm.exp." not in ll and "@expf" not in ll and "@exp(" not in ll
    info = np.finfo(dtype)
    lo, hi = float(np.log(info.smallest_subnormal)) - 1, float(np.log(info.max)) + 1
    rng = np.random.default_rng(7)
    x = rng.uniform(lo, hi, n).astype(dtype)
    x[:12] = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-4, hi - 1.5, hi, lo, lo + 1.5, 1.0, -1.0]
    y = np.empty_like(x)
    f(x, y)
    with np.errstate(over="ignore", under="ignore"):
        want = np.exp(x)
    special = ~np.isfinite(want) | (want == 0)
    np.testing.assert_array_equal(y[special], want[special])  # inf, 0 and NaN exactly
    normal = ~special & (want >= info.tiny)
    ulp = np.abs(y[normal].astype(np.float64) - want[normal]) / np.spacing(want[normal])
    assert ulp.max() <= max_ulp, ulp.max()
