"""TVM's "Compute and Reduce with Tuple Inputs" tutorial (how_to/work_with_schedules), its
steps, over symbolic m and n: a compute with two outputs, an argmax written with
te.comm_reducer, and a schedule of a multi-output compute moved under its consumer.
Added to the text: each built function is checked against numpy at two shapes.
"""

import numpy as np
import tvm
from tvm import te

n = te.var("n")
m = te.var("m")
A0 = te.placeholder((m, n), name="A0")
A1 = te.placeholder((m, n), name="A1")
B0, B1 = te.compute((m, n), lambda i, j: (A0[i, j] + 2, A1[i, j] * 3), name="B")

# The generated IR code would be:
s = te.create_schedule(B0.op)
print(tvm.lower(s, [A0, A1, B0, B1], simple_mode=True))
f = tvm.build(s, [A0, A1, B0, B1])
for shape in [(3, 5), (8, 2)]:
    a0, a1 = np.random.rand(*shape).astype("float32"), np.random.rand(*shape).astype("float32")
    b0, b1 = np.zeros(shape, "float32"), np.zeros(shape, "float32")
    f(a0, a1, b0, b1)
    np.testing.assert_allclose(b0, a0 + 2, rtol=1e-6)
    np.testing.assert_allclose(b1, a1 * 3, rtol=1e-6)


# x and y are the operands of reduction, both of them is a tuple of index
# and value.
def fcombine(x, y):
    lhs = tvm.tir.Select((x[1] >= y[1]), x[0], y[0])
    rhs = tvm.tir.Select((x[1] >= y[1]), x[1], y[1])
    return lhs, rhs


# our identity element also need to be a tuple, so `fidentity` accepts
# two types as inputs.
def fidentity(t0, t1):
    return tvm.tir.const(-1, t0), tvm.te.min_value(t1)


argmax = te.comm_reducer(fcombine, fidentity, name="argmax")

# describe the reduction computation
m = te.var("m")
n = te.var("n")
idx = te.placeholder((m, n), name="idx", dtype="int32")
val = te.placeholder((m, n), name="val", dtype="int32")
k = te.reduce_axis((0, n), "k")
T0, T1 = te.compute((m,), lambda i: argmax((idx[i, k], val[i, k]), axis=k), name="T")

# the generated IR code would be:
s = te.create_schedule(T0.op)
print(tvm.lower(s, [idx, val, T0, T1], simple_mode=True))
f = tvm.build(s, [idx, val, T0, T1])
for rows, cols in [(4, 9), (7, 3)]:
    iv = np.tile(np.arange(cols, dtype="int32"), (rows, 1))
    vv = np.random.randint(-50, 50, size=(rows, cols)).astype("int32")
    t0, t1 = np.zeros(rows, "int32"), np.zeros(rows, "int32")
    f(iv, vv, t0, t1)
    np.testing.assert_array_equal(t0, vv.argmax(axis=1))
    np.testing.assert_array_equal(t1, vv.max(axis=1))

n = te.var("n")
m = te.var("m")
A0 = te.placeholder((m, n), name="A0")
B0, B1 = te.compute((m, n), lambda i, j: (A0[i, j] + 2, A0[i, j] * 3), name="B")
A1 = te.placeholder((m, n), name="A1")
C = te.compute((m, n), lambda i, j: A1[i, j] + B0[i, j], name="C")

s = te.create_schedule(C.op)
s[B0].compute_at(s[C], C.op.axis[0])
# as you can see in the below generated IR code:
print(tvm.lower(s, [A0, A1, C], simple_mode=True))
f = tvm.build(s, [A0, A1, C])
a0, a1 = np.random.rand(5, 6).astype("float32"), np.random.rand(5, 6).astype("float32")
c = np.zeros((5, 6), "float32")
f(a0, a1, c)
np.testing.assert_allclose(c, a1 + a0 + 2, rtol=1e-6)
