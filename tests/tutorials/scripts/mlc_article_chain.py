# The MLC-style article this project grew from (../shared/seeds/003): matmul -> exp ->
# matmul scheduled in TE and TensorIR, a hand-fused TVMScript module, a stochastic
# schedule tuned with MetaSchedule. As written, with the sizes scaled down 8x (the
# article's take minutes on one core) and asserts added where it printed.
import tempfile

import numpy as np
import tvm
from tvm import te
from tvm import tir
from tvm.script import ir as I
from tvm.script import tir as T
from tvm import meta_schedule as ms

M = 128
K = 256
L = 128
N = 384

A = te.placeholder((M, K), name='A')
B = te.placeholder((K, L), name='B')
rk = te.reduce_axis((0, K), name='rk')
C = te.compute((M, L), lambda m, l: te.sum(A[m, rk] * B[rk, l], axis=[rk]), name='C')
D = te.compute((M, L), lambda m, l: te.exp(C[m, l]), name='D')
E = te.placeholder((L, N), name='E')
rl = te.reduce_axis((0, L), name='rl')
F = te.compute((M, N), lambda m, n: te.sum(D[m, rl] * E[rl, n], axis=[rl]), name='F')

tir_sch = te.create_schedule([C.op, D.op, F.op])
tvm.lower(tir_sch, [A, B, E]).show()

a_nd = tvm.nd.array((np.random.randn(M, K) / 16).astype(np.float32))
b_nd = tvm.nd.array((np.random.randn(K, L) / 16).astype(np.float32))
e_nd = tvm.nd.array(np.random.randn(L, N).astype(np.float32))

rt_lib = tvm.build(tir_sch, [A, B, E], target="llvm")
f_timer = rt_lib.time_evaluator("__tvm_main__", tvm.cpu(), number=3)
t_unscheduled = f_timer(a_nd, b_nd, e_nd).mean
print(f"Time cost of the unscheduled program {t_unscheduled} sec")

# 1. loop reorder
tir_sch = te.create_schedule([C.op, D.op, F.op])
m, l = C.op.axis
(k,) = C.op.reduce_axis
tir_sch[C].reorder(m, k, l)
m, n = F.op.axis
(l,) = F.op.reduce_axis
tir_sch[F].reorder(m, l, n)
rt_lib = tvm.build(tir_sch, [A, B, E], target="llvm")
f_timer = rt_lib.time_evaluator("__tvm_main__", tvm.cpu())
t_reordered = f_timer(a_nd, b_nd, e_nd).mean
print(f"Time cost of transformed sch.mod {t_reordered} sec")
# the unscheduled program's work is done (F is not an argument, yet it is computed)
assert t_unscheduled > 0.5 * t_reordered, (t_unscheduled, t_reordered)

# TensorIR: the same schedule with tir, F an argument now
prim_func = te.create_prim_func([A, B, E, F])
prim_func.show()
f_nd = tvm.nd.empty((M, N), dtype="float32")


def schedule_mm(tir_sch: tvm.tir.Schedule, jfactor=4):
    m, l, k = tir_sch.get_loops('C')
    mo, mi = tir_sch.split(m, [None, 16])
    ko, ki = tir_sch.split(k, [None, 8])
    lo, li = tir_sch.split(l, [None, 8])
    tir_sch.reorder(mo, lo, ko, mi, ki, li)
    return tir_sch


tir_sch = tvm.tir.Schedule(prim_func)
tir_sch = schedule_mm(tir_sch)
rt_lib = tvm.build(tir_sch.mod, target="llvm")
f_timer = rt_lib.time_evaluator("__tvm_main__", tvm.cpu())
print(f"Time cost of transformed sch.mod {f_timer(a_nd, b_nd, e_nd, f_nd).mean} sec")
tir_sch.mod.show()
print(tir_sch.trace)
reference = np.exp(a_nd.numpy() @ b_nd.numpy()) @ e_nd.numpy()
np.testing.assert_allclose(f_nd.numpy(), reference, rtol=1e-3, atol=1e-3)


# 3. loop fusion, written by hand in TVMScript (two matmuls share the m loop)
@I.ir_module
class Module:
  @T.prim_func
  def main(A: T.Buffer((128, 256), "float32"), B: T.Buffer((256, 128), "float32"), E: T.Buffer((128, 384), "float32"), F: T.Buffer((128, 384), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    C = T.alloc_buffer((128, 128))
    D = T.alloc_buffer((128, 128))
    for m_0_m in T.grid(8):
      for l_0_m in T.grid(16):
        for rk_0, m_1, rk_1, l_1 in T.grid(32, 16, 8, 8):
          with T.block("C"):
            v_m = T.axis.spatial(128, m_0_m * 16 + m_1)
            v_l = T.axis.spatial(128, l_0_m * 8 + l_1)
            v_rk = T.axis.reduce(256, rk_0 * 8 + rk_1)
            T.reads(A[v_m, v_rk], B[v_rk, v_l])
            T.writes(C[v_m, v_l])
            with T.init():
              C[v_m, v_l] = T.float32(0.0)
            C[v_m, v_l] = C[v_m, v_l] + A[v_m, v_rk] * B[v_rk, v_l]
        for m_1, l_1 in T.grid(16, 8):
          with T.block("D"):
            v_m = T.axis.spatial(128, m_0_m * 16 + m_1)
            v_l = T.axis.spatial(128, l_0_m * 8 + l_1)
            T.reads(C[v_m, v_l])
            T.writes(D[v_m, v_l])
            D[v_m, v_l] = T.exp(C[v_m, v_l])
      for n_0, rl_0, m_1, rl_1, n_1 in T.grid(48, 16, 16, 8, 8):
        with T.block("F"):
          v_m = T.axis.spatial(128, m_0_m * 16 + m_1)
          v_n = T.axis.spatial(384, n_0 * 8 + n_1)
          v_rl = T.axis.reduce(128, rl_0 * 8 + rl_1)
          T.reads(D[v_m, v_rl], E[v_rl, v_n])
          T.writes(F[v_m, v_n])
          with T.init():
            F[v_m, v_n] = T.float32(0.0)
          F[v_m, v_n] = F[v_m, v_n] + D[v_m, v_rl] * E[v_rl, v_n]


rt_lib = tvm.build(Module, target="llvm")
f_timer = rt_lib.time_evaluator("__tvm_main__", tvm.cpu())
print(f"Time cost of transformed sch.mod {f_timer(a_nd, b_nd, e_nd, f_nd).mean} sec")
np.testing.assert_allclose(f_nd.numpy(), reference, rtol=1e-3, atol=1e-3)

# SIMD
tir_sch = tir.Schedule(Module)
(*_, li) = tir_sch.get_loops('C')
tir_sch.vectorize(li)
(*_, ni) = tir_sch.get_loops('F')
tir_sch.vectorize(ni)
rt_lib = tvm.build(tir_sch.mod, target="llvm")
f_timer = rt_lib.time_evaluator("__tvm_main__", tvm.cpu())
print(f"Time cost of transformed sch.mod {f_timer(a_nd, b_nd, e_nd, f_nd).mean} sec")
tir_sch.mod.show()
np.testing.assert_allclose(f_nd.numpy(), reference, rtol=1e-3, atol=1e-3)


# automatic optimization: a stochastic schedule searched by MetaSchedule
def stochastic_schedule_mm(s: tvm.tir.Schedule):
  m, l, k = s.get_loops('C')
  m_factors = s.sample_perfect_tile(loop=m, n=2)
  mo, mi = s.split(m, m_factors)
  k_factors = s.sample_perfect_tile(loop=k, n=2)
  ko, ki = s.split(k, k_factors)
  l_factors = s.sample_perfect_tile(loop=l, n=2)
  lo, li = s.split(l, l_factors)
  s.reorder(mo, lo, ko, mi, ki, li)
  return s


sch = tvm.tir.Schedule(prim_func)
sch = stochastic_schedule_mm(sch)
print(sch.trace)
database = ms.tune_tir(
    mod=prim_func,
    target="llvm --num-cores=1",
    max_trials_global=6,
    num_trials_per_iter=6,
    space=ms.space_generator.ScheduleFn(stochastic_schedule_mm),
    work_dir=tempfile.mkdtemp(),
)
sch = ms.tir_integration.compile_tir(database, prim_func, "llvm --num-cores=1")
print(sch.trace)
rt_lib = tvm.build(sch.mod, target="llvm")
rt_lib(a_nd, b_nd, e_nd, f_nd)
np.testing.assert_allclose(f_nd.numpy(), reference, rtol=1e-3, atol=1e-3)
