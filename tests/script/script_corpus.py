"""TVMScript programs shared by the script tests (as TVM prints them)."""

#: the MLC-style article's hand-fused module (two matmuls sharing the m loop), scaled down
HAND_FUSED = """
from tvm.script import ir as I
from tvm.script import tir as T

@I.ir_module
class Module:
  @T.prim_func
  def main(A: T.Buffer((32, 64), "float32"), B: T.Buffer((64, 32), "float32"),
           E: T.Buffer((32, 48), "float32"), F: T.Buffer((32, 48), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    C = T.alloc_buffer((32, 32))
    D = T.alloc_buffer((32, 32))
    for m_0_m in T.grid(4):
      for l_0_m in T.grid(4):
        for rk_0, m_1, rk_1, l_1 in T.grid(8, 8, 8, 8):
          with T.block("C"):
            v_m = T.axis.spatial(32, m_0_m * 8 + m_1)
            v_l = T.axis.spatial(32, l_0_m * 8 + l_1)
            v_rk = T.axis.reduce(64, rk_0 * 8 + rk_1)
            T.reads(A[v_m, v_rk], B[v_rk, v_l])
            T.writes(C[v_m, v_l])
            with T.init():
              C[v_m, v_l] = T.float32(0.0)
            C[v_m, v_l] = C[v_m, v_l] + A[v_m, v_rk] * B[v_rk, v_l]
        for m_1, l_1 in T.grid(8, 8):
          with T.block("D"):
            v_m = T.axis.spatial(32, m_0_m * 8 + m_1)
            v_l = T.axis.spatial(32, l_0_m * 8 + l_1)
            D[v_m, v_l] = T.exp(C[v_m, v_l])
      for n_0, rl_0, m_1, rl_1, n_1 in T.grid(6, 4, 8, 8, 8):
        with T.block("F"):
          v_m = T.axis.spatial(32, m_0_m * 8 + m_1)
          v_n = T.axis.spatial(48, n_0 * 8 + n_1)
          v_rl = T.axis.reduce(32, rl_0 * 8 + rl_1)
          with T.init():
            F[v_m, v_n] = T.float32(0.0)
          F[v_m, v_n] = F[v_m, v_n] + D[v_m, v_rl] * E[v_rl, v_n]
"""
