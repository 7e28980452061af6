"""CUDA-scheduled programs built by hand with IR nodes (shared tiles, barriers, planted
faults), for the emulator's tests.

They are written the way the GPU lowering writes them (``ir.gpu``): loops bound to
``blockIdx``/``threadIdx`` with min 0, shared buffers allocated inside the block loops,
``barrier()`` between the cooperative fill of a tile and its use.
"""

from __future__ import annotations

from ansor_lab.dsl import expr as E
from ansor_lab.ir import gpu, nodes as N


def i32(v: int) -> E.IntImm:
    """An int32 constant."""
    return E.IntImm(v, "int32")


def bound(name: str, extent: int, tag: str, body_fn) -> N.For:
    """A loop bound to ``tag``; ``body_fn(var)`` makes its body."""
    v = E.Var(name, "int32")
    return N.For(v, i32(0), i32(extent), "thread_binding", body_fn(v), tag)


def serial(name: str, extent: int, body_fn, kind: str = "serial") -> N.For:
    """A serial loop; ``body_fn(var)`` makes its body."""
    v = E.Var(name, "int32")
    return N.For(v, i32(0), i32(extent), kind, body_fn(v))


def tiled_matmul(
    n: int = 32,
    tile: int = 8,
    *,
    first_barrier: bool = True,
    second_barrier: bool = True,
    a_shift: int = 0,
    racing_write: bool = False,
) -> N.PrimFunc:
    """C = A @ B with (tile x tile) shared tiles of A and B, one output per thread.

    The faults: no barrier between the fill and the use (``first_barrier=False``), none
    between the use and the next fill (``second_barrier=False``), the A tile read one
    column to the right (``a_shift=1``: out of bounds at the last tile), every thread of
    a row writing the tile's first column (``racing_write``).
    """
    A = N.Buffer("A", (n, n), "float32")
    B = N.Buffer("B", (n, n), "float32")
    C = N.Buffer("C", (n, n), "float32")
    As = N.Buffer("A_shared", (tile, tile), "float32", "shared")
    Bs = N.Buffer("B_shared", (tile, tile), "float32", "shared")
    acc = N.Buffer("acc", (1,), "float32", "local")
    zero = (i32(0),)

    def threads(by, bx):
        def inner(ty, tx):
            def k_outer(ko):
                col = i32(0) if racing_write else tx
                fill = N.seq(
                    N.BufferStore(As, A[by * tile + ty, ko * tile + tx + a_shift], (ty, col)),
                    N.BufferStore(Bs, B[ko * tile + ty, bx * tile + tx], (ty, tx)),
                )
                use = serial(
                    "ki",
                    tile,
                    lambda ki: N.BufferStore(acc, acc[zero] + As[ty, ki] * Bs[ki, tx], zero),
                )
                return N.seq(
                    fill,
                    gpu.barrier() if first_barrier else None,
                    use,
                    gpu.barrier() if second_barrier else None,
                )

            body = N.seq(
                N.BufferStore(acc, E.FloatImm(0.0, "float32"), zero),
                serial("ko", n // tile, k_outer),
                N.BufferStore(C, acc[zero], (by * tile + ty, bx * tile + tx)),
            )
            return N.Allocate(acc, body)

        rows = bound(
            "ty",
            tile,
            "threadIdx.y",
            lambda ty: bound("tx", tile, "threadIdx.x", lambda tx: inner(ty, tx)),
        )
        return N.Allocate(As, N.Allocate(Bs, rows))

    body = bound(
        "by",
        n // tile,
        "blockIdx.y",
        lambda by: bound("bx", n // tile, "blockIdx.x", lambda bx: threads(by, bx)),
    )
    return N.PrimFunc((A, B, C), N.Block("C", body), "tiled_matmul")


def block_sum(n_blocks: int = 4, threads: int = 32, *, divergent: str = "") -> N.PrimFunc:
    """Out[b] = sum(X[b, :]) by a shared-memory tree reduction in each block.

    ``divergent``: "static" puts the barrier of the tree under ``if tx < threads / 2``;
    "dynamic" under a condition that reads the input (``X[b, tx] < 2``).
    """
    X = N.Buffer("X", (n_blocks, threads), "float32")
    out = N.Buffer("Out", (n_blocks,), "float32")
    red = N.Buffer("red", (threads,), "float32", "shared")

    def body(b, tx):
        steps = []
        s = threads // 2
        while s >= 1:
            add = N.IfThenElse(
                E.LT(tx, i32(s), "bool"),
                N.BufferStore(red, red[tx] + red[tx + s], (tx,)),
            )
            bar = gpu.barrier()
            if divergent == "static" and s == threads // 2:
                bar = N.IfThenElse(E.LT(tx, i32(threads // 2), "bool"), bar)
            if divergent == "dynamic" and s == threads // 2:
                bar = N.IfThenElse(E.LT(X[b, tx], E.FloatImm(2.0, "float32"), "bool"), bar)
            steps += [add, bar]
            s //= 2
        return N.seq(
            N.BufferStore(red, X[b, tx], (tx,)),
            gpu.barrier(),
            *steps,
            N.IfThenElse(E.EQ(tx, i32(0), "bool"), N.BufferStore(out, red[i32(0)], (b,))),
        )

    func_body = bound(
        "b",
        n_blocks,
        "blockIdx.x",
        lambda b: N.Allocate(red, bound("tx", threads, "threadIdx.x", lambda tx: body(b, tx))),
    )
    return N.PrimFunc((X, out), func_body, "block_sum")


def transpose_shared(n: int = 32, tile: int = 8, *, barrier: bool = True) -> N.PrimFunc:
    """B = A.T through a shared tile (tile+1 columns: no bank conflicts), with a
    per-thread let that lives across the barrier."""
    A = N.Buffer("A", (n, n), "float32")
    B = N.Buffer("B", (n, n), "float32")
    T = N.Buffer("T", (tile, tile + 1), "float32", "shared")

    def inner(by, bx, ty, tx):
        row = E.Var("row", "int32")
        return N.LetStmt(
            row,
            by * tile + ty,
            N.seq(
                N.BufferStore(T, A[row, bx * tile + tx], (ty, tx)),
                gpu.barrier() if barrier else None,
                N.BufferStore(
                    B, T[tx, ty] + E.Cast(row - row, "float32"), (bx * tile + ty, by * tile + tx)
                ),
            ),
        )

    body = bound(
        "by",
        n // tile,
        "blockIdx.y",
        lambda by: bound(
            "bx",
            n // tile,
            "blockIdx.x",
            lambda bx: N.Allocate(
                T,
                bound(
                    "ty",
                    tile,
                    "threadIdx.y",
                    lambda ty: bound("tx", tile, "threadIdx.x", lambda tx: inner(by, bx, ty, tx)),
                ),
            ),
        ),
    )
    return N.PrimFunc((A, B), body, "transpose_shared")


def short_loop_kernel(barrier_inside: bool = False) -> N.PrimFunc:
    """One kernel, threadIdx.x launched 32 wide by its first loop; the second loop binds
    only 24 threads, so threads 24..31 skip it (the guard)."""
    X = N.Buffer("X", (2, 32), "float32")
    Y = N.Buffer("Y", (2, 32), "float32")

    def body(b):
        first = bound("t", 32, "threadIdx.x", lambda t: N.BufferStore(Y, X[b, t], (b, t)))

        def short(t):
            store = N.BufferStore(Y, X[b, t] * E.FloatImm(10.0, "float32"), (b, t))
            return N.seq(gpu.barrier(), store) if barrier_inside else store

        return N.seq(first, bound("u", 24, "threadIdx.x", short))

    return N.PrimFunc((X, Y), bound("b", 2, "blockIdx.x", body), "short_loop")
