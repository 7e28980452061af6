"""LLVM's own vectorizer gets no gathers or scatters on x86 (codegen.llvm.X86_TUNING).

TVM's GEMM tutorial's blocked step (32x32 tiles, the 32-wide inner loop left scalar):
LLVM fully unrolled that loop, then vectorized the loop around it along the rows with
gathers and scatters, 10x slower than leaving it; its time went from 4.9 s to 0.46 s at
1024. Here at 256, checked in the assembly, and the result against numpy."""

from __future__ import annotations

import platform

import numpy as np
import pytest

import ansor_lab as tvm
from ansor_lab import te

pytestmark = pytest.mark.skipif(
    platform.machine() not in ("x86_64", "AMD64"), reason="x86 tuning only"
)


def test_the_gemm_tutorials_blocked_step_has_no_gather_or_scatter():
    n = 256
    k = te.reduce_axis((0, n), "k")
    A = te.placeholder((n, n), name="A")
    B = te.placeholder((n, n), name="B")
    C = te.compute((n, n), lambda m, j: te.sum(A[m, k] * B[k, j], axis=k), name="C")
    s = te.create_schedule(C.op)
    mo, no, mi, ni = s[C].tile(C.op.axis[0], C.op.axis[1], 32, 32)
    ko, ki = s[C].split(s[C].op.reduce_axis[0], factor=4)
    s[C].reorder(mo, no, ko, ki, mi, ni)
    f = tvm.build(s, [A, B, C], target="llvm")
    asm = f.get_source("asm")
    assert "gather" not in asm and "scatter" not in asm
    rng = np.random.default_rng(0)
    a, b = rng.random((n, n), dtype="float32"), rng.random((n, n), dtype="float32")
    c = np.zeros((n, n), "float32")
    f(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4)


def test_the_tuning_is_added_on_x86_only():
    from ansor_lab.codegen.llvm import X86_TUNING, with_tuning

    assert with_tuning("+avx2,+fma", "x86_64-unknown-linux-gnu") == f"+avx2,+fma,{X86_TUNING}"
    assert with_tuning("", "x86_64-pc-linux") == X86_TUNING
    assert with_tuning("+neon", "aarch64-unknown-linux-gnu") == "+neon"
