"""TVM's "Intrinsics and Math Functions" tutorial (how_to/work_with_schedules), its steps.

Extern math calls, the unified te.exp, a custom CUDA lowering rule for exp and a new
intrinsic `mylog` with its own rule; only the OpenCL build is out of scope (its step is
kept, expecting our error). The CUDA source is generated without a GPU.
"""

import numpy as np
import tvm
from tvm import te
from tvm.ir import register_intrin_lowering, register_op_attr


def gpu_schedule(B):
    s = te.create_schedule(B.op)
    outer, inner = s[B].split(B.op.axis[0], factor=64)
    s[B].bind(outer, te.thread_axis("blockIdx.x"))
    s[B].bind(inner, te.thread_axis("threadIdx.x"))
    return s


n = te.var("n")
A = te.placeholder((n,), name="A")
B = te.compute(A.shape, lambda i: tvm.tir.call_pure_extern("float32", "__expf", A[i]), name="B")
f = tvm.build(gpu_schedule(B), [A, B], "cuda", name="myexp")
print(f.imported_modules[0].get_source())

B = te.compute(A.shape, lambda i: te.exp(A[i]), name="B")
s = gpu_schedule(B)
fcuda = tvm.build(s, [A, B], "cuda", name="myexp")
print(fcuda.imported_modules[0].get_source())
try:
    tvm.build(s, [A, B], "opencl", name="myexp")
    raise AssertionError("opencl must be refused")
except tvm.target.TargetError as err:
    assert "out of scope" in str(err)


def my_cuda_math_rule(op):
    assert isinstance(op, tvm.tir.Call)
    name = op.op.name
    assert name.startswith("tir.")
    if op.dtype == "float32":
        return tvm.tir.call_pure_extern("float32", "%sf" % name[4:], op.args[0])
    return op


register_intrin_lowering("tir.exp", target="cuda", f=my_cuda_math_rule, level=99)
fcuda = tvm.build(s, [A, B], "cuda", name="myexp")
assert "expf(" in fcuda.imported_modules[0].get_source()


def mylog(x):
    return tvm.tir.call_intrin(x.dtype, "tir.mylog", x)


def my_mylog_rule(op):
    if op.dtype == "float32":
        return tvm.tir.call_pure_extern("float32", "logf", op.args[0])
    return op


register_op_attr("tir.mylog", "TCallEffectKind", tvm.tir.CallEffectKind.Pure)
register_intrin_lowering("tir.mylog", target="cuda", f=my_mylog_rule, level=99)
B = te.compute(A.shape, lambda i: mylog(A[i]), name="B")
fcuda = tvm.build(gpu_schedule(B), [A, B], "cuda", name="mylog")
source = fcuda.imported_modules[0].get_source()
print(source)
assert "logf(" in source

# the same intrinsic on the CPU, checked against numpy
register_intrin_lowering("tir.mylog", target="llvm", f=my_mylog_rule, level=99)
fcpu = tvm.build(te.create_schedule(B.op), [A, B], "llvm", name="mylog")
a = np.random.uniform(0.5, 2.0, size=100).astype("float32")
b = np.zeros(100, "float32")
fcpu(a, b)
np.testing.assert_allclose(b, np.log(a), rtol=1e-6)
