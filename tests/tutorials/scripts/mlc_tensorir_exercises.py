"""The MLC course's TensorIR exercises (chapter 2): broadcast add and a 2D convolution in
TVMScript, built and checked against numpy; then the batch matmul + ReLU transformed step
by step (parallel, split, reverse_compute_at, vectorize, unroll, decompose_reduction and the
init's own vectorized loop) until it is structurally equal to the course's target module."""

import numpy as np
import tvm
from tvm.ir.module import IRModule
from tvm.script import tir as T

a = np.arange(16).reshape(4, 4); b = np.arange(4, 0, -1).reshape(4)
c_np = a + b
@tvm.script.ir_module
class MyAdd:
    @T.prim_func
    def add(A: T.Buffer((4, 4), "int64"), B: T.Buffer((4,), "int64"), C: T.Buffer((4, 4), "int64")):
        T.func_attr({"global_symbol": "add", "tir.noalias": True})
        for i, j in T.grid(4, 4):
            with T.block("C"):
                vi = T.axis.spatial(4, i)
                vj = T.axis.spatial(4, j)
                C[vi, vj] = A[vi, vj] + B[vj]
rt_lib = tvm.build(MyAdd, target="llvm")
a_tvm = tvm.nd.array(a); b_tvm = tvm.nd.array(b); c_tvm = tvm.nd.array(np.empty((4, 4), dtype=np.int64))
rt_lib["add"](a_tvm, b_tvm, c_tvm)
np.testing.assert_allclose(c_tvm.numpy(), c_np, rtol=1e-5)

N, CI, H, W, CO, K = 1, 1, 8, 8, 2, 3
OUT_H, OUT_W = H - K + 1, W - K + 1
data = np.arange(N*CI*H*W).reshape(N, CI, H, W)
weight = np.arange(CO*CI*K*K).reshape(CO, CI, K, K)
@tvm.script.ir_module
class MyConv:
    @T.prim_func
    def conv(A: T.Buffer((1, 1, 8, 8), "int64"), B: T.Buffer((2, 1, 3, 3), "int64"), C: T.Buffer((1, 2, 6, 6), "int64")):
        T.func_attr({"global_symbol": "conv", "tir.noalias": True})
        for n, c, h, w, i, k1, k2 in T.grid(1, 2, 6, 6, 1, 3, 3):
            with T.block("C"):
                vn, vc, vh, vw, vi, vk1, vk2 = T.axis.remap("SSSSRRR", [n, c, h, w, i, k1, k2])
                with T.init():
                    C[vn, vc, vh, vw] = T.int64(0)
                C[vn, vc, vh, vw] = C[vn, vc, vh, vw] + A[vn, vi, vh + vk1, vw + vk2] * B[vc, vi, vk1, vk2]
rt_lib = tvm.build(MyConv, target="llvm")
data_tvm = tvm.nd.array(data); weight_tvm = tvm.nd.array(weight); conv_tvm = tvm.nd.array(np.empty((N, CO, OUT_H, OUT_W), dtype=np.int64))
rt_lib["conv"](data_tvm, weight_tvm, conv_tvm)
import itertools
ref = np.zeros((N, CO, OUT_H, OUT_W), np.int64)
for n_, co, h, w, ci, k1, k2 in itertools.product(range(N), range(CO), range(OUT_H), range(OUT_W), range(CI), range(K), range(K)):
    ref[n_, co, h, w] += data[n_, ci, h+k1, w+k2] * weight[co, ci, k1, k2]
np.testing.assert_allclose(conv_tvm.numpy(), ref)

@tvm.script.ir_module
class MyBmmRelu:
    @T.prim_func
    def bmm_relu(A: T.Buffer((16, 128, 128), "float32"), B: T.Buffer((16, 128, 128), "float32"), C: T.Buffer((16, 128, 128), "float32")):
        T.func_attr({"global_symbol": "bmm_relu", "tir.noalias": True})
        Y = T.alloc_buffer((16, 128, 128), dtype="float32")
        for n, i, j, k in T.grid(16, 128, 128, 128):
            with T.block("Y"):
                vn, vi, vj, vk = T.axis.remap("SSSR", [n, i, j, k])
                with T.init():
                    Y[vn, vi, vj] = T.float32(0)
                Y[vn, vi, vj] = Y[vn, vi, vj] + A[vn, vi, vk] * B[vn, vk, vj]
        for n, i, j in T.grid(16, 128, 128):
            with T.block("C"):
                vn, vi, vj = T.axis.remap("SSS", [n, i, j])
                C[vn, vi, vj] = T.max(Y[vn, vi, vj], T.float32(0))

@tvm.script.ir_module
class TargetModule:
    @T.prim_func
    def bmm_relu(A: T.Buffer((16, 128, 128), "float32"), B: T.Buffer((16, 128, 128), "float32"), C: T.Buffer((16, 128, 128), "float32")) -> None:
        T.func_attr({"global_symbol": "bmm_relu", "tir.noalias": True})
        Y = T.alloc_buffer([16, 128, 128], dtype="float32")
        for i0 in T.parallel(16):
            for i1, i2_0 in T.grid(128, 16):
                for ax0_init in T.vectorized(8):
                    with T.block("Y_init"):
                        n, i = T.axis.remap("SS", [i0, i1])
                        j = T.axis.spatial(128, i2_0 * 8 + ax0_init)
                        Y[n, i, j] = T.float32(0)
                for ax1_0 in T.serial(32):
                    for ax1_1 in T.unroll(4):
                        for ax0 in T.serial(8):
                            with T.block("Y_update"):
                                n, i = T.axis.remap("SS", [i0, i1])
                                j = T.axis.spatial(128, i2_0 * 8 + ax0)
                                k = T.axis.reduce(128, ax1_0 * 4 + ax1_1)
                                Y[n, i, j] = Y[n, i, j] + A[n, i, k] * B[n, k, j]
                for i2_1 in T.vectorized(8):
                    with T.block("C"):
                        n, i = T.axis.remap("SS", [i0, i1])
                        j = T.axis.spatial(128, i2_0 * 8 + i2_1)
                        C[n, i, j] = T.max(Y[n, i, j], T.float32(0))

sch = tvm.tir.Schedule(MyBmmRelu)
Y = sch.get_block("Y", func_name="bmm_relu")
C = sch.get_block("C", func_name="bmm_relu")
n, i, j, k = sch.get_loops(Y)
sch.parallel(n)
j0, j1 = sch.split(j, factors=[None, 8])
sch.reverse_compute_at(C, j0)
nc, ic, jc0, jc1 = sch.get_loops(C)
sch.vectorize(jc1)
k0, k1 = sch.split(k, factors=[None, 4])
sch.reorder(k0, k1, j1)
sch.unroll(k1)
Y_init = sch.decompose_reduction(Y, k0)
ax = sch.get_loops(Y_init)
sch.vectorize(ax[-1])
print(sch.mod.script())
tvm.ir.assert_structural_equal(sch.mod, TargetModule)
print("Pass")
before_rt_lib = tvm.build(MyBmmRelu, target="llvm")
after_rt_lib = tvm.build(sch.mod, target="llvm")
a_tvm = tvm.nd.array(np.random.rand(16, 128, 128).astype("float32"))
b_tvm = tvm.nd.array(np.random.rand(16, 128, 128).astype("float32"))
c_tvm = tvm.nd.array(np.random.rand(16, 128, 128).astype("float32"))
after_rt_lib["bmm_relu"](a_tvm, b_tvm, c_tvm)
np.testing.assert_allclose(c_tvm.numpy(), np.maximum(np.matmul(a_tvm.numpy(), b_tvm.numpy()), 0), rtol=1e-4)
before_timer = before_rt_lib.time_evaluator("bmm_relu", tvm.cpu())
print("Before transformation:"); print(before_timer(a_tvm, b_tvm, c_tvm))
f_timer = after_rt_lib.time_evaluator("bmm_relu", tvm.cpu())
print("After transformation:"); print(f_timer(a_tvm, b_tvm, c_tvm))
