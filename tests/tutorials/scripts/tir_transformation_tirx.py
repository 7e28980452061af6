"""TVM's (>= 0.22) "Transformation" deep-dive tutorial, its steps: a root sblock with
T.sblock_alloc_buffer, tvm.tirx.build, tvm.s_tir.Schedule with get_sblock, split, reorder,
reverse_compute_at, decompose_reduction (each result checked against numpy), the trace."""

import tvm
from tvm.script import ir as I, tirx as T


@I.ir_module
class MyModule:
    @T.prim_func
    def main(
        A: T.Buffer((128, 128), "float32"),
        B: T.Buffer((128, 128), "float32"),
        C: T.Buffer((128, 128), "float32"),
    ):
        T.func_attr({"tirx.noalias": True})
        with T.sblock("root"):
            T.reads()
            T.writes()
            Y = T.sblock_alloc_buffer((128, 128))
            for i, j, k in T.grid(128, 128, 128):
                with T.sblock("Y"):
                    vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                    with T.init():
                        Y[vi, vj] = T.float32(0)
                    Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
            for i, j in T.grid(128, 128):
                with T.sblock("C"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    C[vi, vj] = T.max(Y[vi, vj], T.float32(0))


import numpy as np

a_np = np.random.uniform(size=(128, 128)).astype("float32")
b_np = np.random.uniform(size=(128, 128)).astype("float32")
c_np = np.maximum(a_np @ b_np, 0)
a_nd = tvm.runtime.tensor(a_np)
b_nd = tvm.runtime.tensor(b_np)
c_nd = tvm.runtime.tensor(np.zeros((128, 128), dtype="float32"))


def evaluate(mod):
    lib = tvm.tirx.build(mod, target="llvm")
    lib(a_nd, b_nd, c_nd)
    np.testing.assert_allclose(c_nd.numpy(), c_np, rtol=1e-5)
    f_timer = lib.time_evaluator("main", tvm.cpu())
    print(f_timer(a_nd, b_nd, c_nd))


evaluate(MyModule)
sch = tvm.s_tir.Schedule(MyModule)
block_Y = sch.get_sblock("Y")
i, j, k = sch.get_loops(block_Y)
j0, j1 = sch.split(j, factors=[None, 8])
sch.mod.show()
sch.reorder(j0, k, j1)
sch.mod.show()
evaluate(sch.mod)
block_C = sch.get_sblock("C")
sch.reverse_compute_at(block_C, j0)
sch.mod.show()
sch.decompose_reduction(block_Y, k)
sch.mod.show()
evaluate(sch.mod)
sch.trace.show()
sch.show()
