"""TVM's "Schedule Primitives in TVM" tutorial (how_to/work_with_schedules), its steps.

split (factor, nparts), tile, fuse, reorder, bind, compute_at, compute_inline and
compute_root on symbolic shapes, each printed with tvm.lower; then built and checked.
"""

import numpy as np
import tvm
from tvm import te

n = te.var("n")
m = te.var("m")

A = te.placeholder((m, n), name="A")
B = te.placeholder((m, n), name="B")
C = te.compute((m, n), lambda i, j: A[i, j] * B[i, j], name="C")
s = te.create_schedule([C.op])
print(tvm.lower(s, [A, B, C], simple_mode=True))

A = te.placeholder((m,), name="A")
B = te.compute((m,), lambda i: A[i] * 2, name="B")
s = te.create_schedule(B.op)
xo, xi = s[B].split(B.op.axis[0], factor=32)
print(tvm.lower(s, [A, B], simple_mode=True))
s = te.create_schedule(B.op)
bx, tx = s[B].split(B.op.axis[0], nparts=32)
print(tvm.lower(s, [A, B], simple_mode=True))
f = tvm.build(s, [A, B])
a = np.random.rand(100).astype("float32")
b = np.zeros(100, "float32")
f(a, b)
np.testing.assert_allclose(b, a * 2)

A = te.placeholder((m, n), name="A")
B = te.compute((m, n), lambda i, j: A[i, j], name="B")
s = te.create_schedule(B.op)
xo, yo, xi, yi = s[B].tile(B.op.axis[0], B.op.axis[1], x_factor=10, y_factor=5)
print(tvm.lower(s, [A, B], simple_mode=True))
fused = s[B].fuse(xi, yi)
print(tvm.lower(s, [A, B], simple_mode=True))
s = te.create_schedule(B.op)
xo, yo, xi, yi = s[B].tile(B.op.axis[0], B.op.axis[1], x_factor=10, y_factor=5)
s[B].reorder(xi, yo, xo, yi)
print(tvm.lower(s, [A, B], simple_mode=True))
f = tvm.build(s, [A, B])
a = np.random.rand(23, 17).astype("float32")
b = np.zeros((23, 17), "float32")
f(a, b)
np.testing.assert_allclose(b, a)

A = te.placeholder((n,), name="A")
B = te.compute(A.shape, lambda i: A[i] * 2, name="B")
s = te.create_schedule(B.op)
bx, tx = s[B].split(B.op.axis[0], factor=64)
s[B].bind(bx, te.thread_axis("blockIdx.x"))
s[B].bind(tx, te.thread_axis("threadIdx.x"))
print(tvm.lower(s, [A, B], simple_mode=True))

for step in ("root", "compute_at", "compute_inline", "compute_root"):
    A = te.placeholder((m,), name="A")
    B = te.compute((m,), lambda i: A[i] + 1, name="B")
    C = te.compute((m,), lambda i: B[i] * 2, name="C")
    s = te.create_schedule(C.op)
    if step in ("compute_at", "compute_root"):
        s[B].compute_at(s[C], C.op.axis[0])
    if step == "compute_inline":
        s[B].compute_inline()
    if step == "compute_root":
        s[B].compute_root()
    print(tvm.lower(s, [A, B, C], simple_mode=True))
    f = tvm.build(s, [A, B, C])
    a = np.random.rand(50).astype("float32")
    b = np.zeros(50, "float32")
    c = np.zeros(50, "float32")
    f(a, b, c)
    np.testing.assert_allclose(c, (a + 1) * 2, rtol=1e-6)
