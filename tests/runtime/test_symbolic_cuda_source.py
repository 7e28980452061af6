"""A symbolic CUDA build shows its kernel source as TVM's host module does."""

from __future__ import annotations

import ansor_lab as tvm
from ansor_lab import te


def test_symbolic_cuda_build_has_the_kernel_source_in_imported_modules():
    n = te.var("n")
    A = te.placeholder((n,), name="A")
    B = te.compute((n,), lambda i: A[i] * 2.0, name="B")
    s = te.create_schedule(B.op)
    bx, tx = s[B].split(B.op.axis[0], factor=64)
    s[B].bind(bx, te.thread_axis("blockIdx.x"))
    s[B].bind(tx, te.thread_axis("threadIdx.x"))
    f = tvm.build(s, [A, B], "cuda")
    assert len(f.imported_modules) == 1
    src = f.imported_modules[0].get_source()
    assert "__global__" in src and "threadIdx.x" in src and "blockIdx.x" in src
    # the probe specialization is what is shown before any call
    assert "* 2" in src or "*2" in src


def test_symbolic_llvm_build_has_no_device_modules():
    n = te.var("n")
    A = te.placeholder((n,), name="A")
    B = te.compute((n,), lambda i: A[i] + 1.0, name="B")
    f = tvm.build(te.create_schedule(B.op), [A, B], "llvm")
    assert f.imported_modules == []
