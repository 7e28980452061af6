"""TVM's "Reduction" tutorial (how_to/work_with_schedules/reduction.py), its steps.

Over symbolic n and m: split, bind, rfactor, a cross-thread reduction with a store
predicate (CUDA source generated without a GPU), a 2-D reduction (a convolution) and a
commutative reducer of our own (a product). Added to the text: the CPU builds of the last
two are checked against numpy, and the GPU run, the tutorial's middle step, comes last so
that without a GPU every other step runs before it stops with our GPUUnavailableError.
"""

import numpy as np
import tvm
import tvm.testing
from tvm import te

n = te.var("n")
m = te.var("m")
A = te.placeholder((n, m), name="A")
k = te.reduce_axis((0, m), "k")
B = te.compute((n,), lambda i: te.sum(A[i, k], axis=k), name="B")

s = te.create_schedule(B.op)
print(tvm.lower(s, [A, B], simple_mode=True))

ko, ki = s[B].split(B.op.reduce_axis[0], factor=16)
xo, xi = s[B].split(B.op.axis[0], factor=32)
print(tvm.lower(s, [A, B], simple_mode=True))

s[B].bind(xo, te.thread_axis("blockIdx.x"))
s[B].bind(xi, te.thread_axis("threadIdx.x"))
print(tvm.lower(s, [A, B], simple_mode=True))

# reduction factoring
s = te.create_schedule(B.op)
ko, ki = s[B].split(B.op.reduce_axis[0], factor=16)
BF = s.rfactor(B, ki)
print(tvm.lower(s, [A, B], simple_mode=True))
print(s[B].op.body)

# cross-thread reduction
xo, xi = s[B].split(s[B].op.axis[0], factor=32)
s[B].bind(xo, te.thread_axis("blockIdx.x"))
s[B].bind(xi, te.thread_axis("threadIdx.y"))
tx = te.thread_axis("threadIdx.x")
s[B].bind(s[B].op.reduce_axis[0], tx)
s[BF].compute_at(s[B], s[B].op.reduce_axis[0])
s[B].set_store_predicate(tx.var.equal(0))
fcuda = tvm.build(s, [A, B], "cuda")
print(fcuda.imported_modules[0].get_source())

# describe convolution via 2D reduction
n = te.var("n")
Input = te.placeholder((n, n), name="Input")
Filter = te.placeholder((3, 3), name="Filter")
di = te.reduce_axis((0, 3), name="di")
dj = te.reduce_axis((0, 3), name="dj")
Output = te.compute(
    (n - 2, n - 2),
    lambda i, j: te.sum(Input[i + di, j + dj] * Filter[di, dj], axis=[di, dj]),
    name="Output",
)
s = te.create_schedule(Output.op)
print(tvm.lower(s, [Input, Filter, Output], simple_mode=True))
conv = tvm.build(s, [Input, Filter, Output])
x = np.random.uniform(size=(10, 10)).astype("float32")
w = np.random.uniform(size=(3, 3)).astype("float32")
y = tvm.nd.array(np.zeros((8, 8), "float32"))
conv(tvm.nd.array(x), tvm.nd.array(w), y)
want = sum(x[a : a + 8, b : b + 8] * w[a, b] for a in range(3) for b in range(3))
tvm.testing.assert_allclose(y.numpy(), want, rtol=1e-5)

# define general commutative reduction operation
n = te.var("n")
m = te.var("m")
product = te.comm_reducer(lambda x, y: x * y, lambda t: tvm.tir.const(1, dtype=t), name="product")
A = te.placeholder((n, m), name="A")
k = te.reduce_axis((0, m), name="k")
B = te.compute((n,), lambda i: product(A[i, k], axis=k), name="B")
s = te.create_schedule(B.op)
print(tvm.lower(s, [A, B], simple_mode=True))
fprod = tvm.build(s, [A, B])
a = np.random.uniform(0.5, 1.5, size=(6, 11)).astype("float32")
b = tvm.nd.array(np.zeros(6, "float32"))
fprod(tvm.nd.array(a), b)
tvm.testing.assert_allclose(b.numpy(), np.prod(a, axis=1), rtol=1e-5)

# the cross-thread reduction, run on the GPU
nn = 128
dev = tvm.cuda(0)
a = tvm.nd.array(np.random.uniform(size=(nn, nn)).astype(A.dtype), dev)
b = tvm.nd.array(np.zeros(nn, dtype=B.dtype), dev)
fcuda(a, b)
tvm.testing.assert_allclose(b.numpy(), np.sum(a.numpy(), axis=1), rtol=1e-4)
