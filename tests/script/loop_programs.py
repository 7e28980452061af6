"""Small hand-written loop programs (blocks sharing loops or tiled by hand) with their
numpy references, for the schedule primitives of loop programs."""

from __future__ import annotations

import numpy as np

#: an elementwise chain whose first block is tiled by hand (so it is a loop program)
ELEMWISE = """
@T.prim_func
def main(A: T.Buffer((64, 16), "float32"), D: T.Buffer((64, 16), "float32")):
    B = T.alloc_buffer((64, 16))
    C = T.alloc_buffer((64, 16))
    for io, ii, j in T.grid(8, 8, 16):
        with T.block("B"):
            vi = T.axis.spatial(64, io * 8 + ii)
            vj = T.axis.spatial(16, j)
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(64, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + T.float32(1)
    for i, j in T.grid(64, 16):
        with T.block("D"):
            vi, vj = T.axis.remap("SS", [i, j])
            D[vi, vj] = T.max(C[vi, vj], T.float32(0.5))
"""

#: matmul + relu fused over the rows by hand
MM_RELU = """
@T.prim_func
def main(A: T.Buffer((32, 64), "float32"), B: T.Buffer((64, 32), "float32"),
         D: T.Buffer((32, 32), "float32")):
    C = T.alloc_buffer((32, 32))
    for i in range(32):
        for j, k in T.grid(32, 64):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
        for j in range(32):
            with T.block("D"):
                vi, vj = T.axis.remap("SS", [i, j])
                D[vi, vj] = T.max(C[vi, vj], T.float32(0))
"""

#: a 3-point stencil over a doubled input, its consumer tiled by hand with a predicate
STENCIL = """
@T.prim_func
def main(A: T.Buffer((64,), "float32"), C: T.Buffer((62,), "float32")):
    B = T.alloc_buffer((64,))
    for i in range(64):
        with T.block("B"):
            vi = T.axis.spatial(64, i)
            B[vi] = A[vi] * T.float32(2)
    for io, ii in T.grid(8, 8):
        with T.block("C"):
            vi = T.axis.spatial(62, io * 8 + ii)
            T.where(io * 8 + ii < 62)
            C[vi] = B[vi] + B[vi + 1] + B[vi + 2]
"""


def inputs(name: str, seed: int = 0) -> tuple[list, np.ndarray]:
    """The arguments of program ``name`` (outputs zeroed) and its expected output."""
    rng = np.random.default_rng(seed)
    if name == "ELEMWISE":
        a = rng.standard_normal((64, 16)).astype("float32")
        return [a, np.zeros((64, 16), "float32")], np.maximum(a * 2 + 1, 0.5)
    if name == "MM_RELU":
        a = rng.standard_normal((32, 64)).astype("float32")
        b = rng.standard_normal((64, 32)).astype("float32")
        return [a, b, np.zeros((32, 32), "float32")], np.maximum(a @ b, 0)
    if name == "STENCIL":
        a = rng.standard_normal(64).astype("float32")
        b = 2 * a
        return [a, np.zeros(62, "float32")], b[:-2] + b[1:-1] + b[2:]
    if name == "HAND_FUSED":
        a = rng.standard_normal((32, 64)).astype("float32") / 8
        b = rng.standard_normal((64, 32)).astype("float32") / 8
        e = rng.standard_normal((32, 48)).astype("float32")
        return [a, b, e, np.zeros((32, 48), "float32")], np.exp(a @ b) @ e
    raise KeyError(name)
