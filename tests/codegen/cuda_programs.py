"""Hand-made CUDA-scheduled loop IR (shared tiles, barriers, guards, float4 into shared):
what the GPU lowering will produce, written directly so the generator is tested on it now."""

from __future__ import annotations

from ansor_lab.dsl import expr as E
from ansor_lab.ir import gpu, nodes as N


def _v(name: str) -> E.Var:
    return E.Var(name, "int32")


def _i(x: int) -> E.IntImm:
    return E.IntImm(x, "int32")


def _bound(var: E.Var, extent: int, tag: str, body: N.Stmt) -> N.For:
    return N.For(var, _i(0), _i(extent), "thread_binding", body, tag)


def shared_transpose(n: int = 64, tile: int = 16) -> N.PrimFunc:
    """B = A^T through a padded (tile x tile+1) shared tile: load, barrier, store."""
    A = N.Buffer("A", (n, n), "float32")
    B = N.Buffer("B", (n, n), "float32")
    S = N.Buffer("tile", (tile, tile), "float32", "shared", padded_strides=(tile + 1, 1))
    by, bx, ty, tx, ty2, tx2 = (_v(x) for x in ("by", "bx", "ty", "tx", "ty2", "tx2"))
    t = _i(tile)
    load = _bound(
        ty,
        tile,
        "threadIdx.y",
        _bound(
            tx,
            tile,
            "threadIdx.x",
            N.BufferStore(S, A[by * t + ty, bx * t + tx], (ty, tx)),
        ),
    )
    store = _bound(
        ty2,
        tile,
        "threadIdx.y",
        _bound(
            tx2,
            tile,
            "threadIdx.x",
            N.BufferStore(B, S[tx2, ty2], (bx * t + ty2, by * t + tx2)),
        ),
    )
    body = N.Allocate(S, N.seq(N.Block("tile", load), gpu.barrier(), N.Block("B", store)))
    root = _bound(by, n // tile, "blockIdx.y", _bound(bx, n // tile, "blockIdx.x", body))
    return N.PrimFunc((A, B), root, "transpose")


def shared_rowsum_float4(rows: int = 8, cols: int = 64) -> N.PrimFunc:
    """Per block one row: 16 threads fetch it into shared memory with float4, a barrier,
    then 4 threads (fewer than the launch's 16: guarded) each sum a quarter."""
    A = N.Buffer("A", (rows, cols), "float32")
    out = N.Buffer("P", (rows, 4), "float32")
    S = N.Buffer("row", (cols,), "float32", "shared")
    acc = N.Buffer("acc", (1,), "float32", "local")
    b, t, v, q, k = _v("b"), _v("t"), _v("v"), _v("q"), _v("k")
    lanes = cols // 16
    fetch = _bound(
        t,
        16,
        "threadIdx.x",
        N.For(
            v,
            _i(0),
            _i(lanes),
            "vectorized",
            N.BufferStore(S, A[b, t * _i(lanes) + v], (t * _i(lanes) + v,)),
        ),
    )
    quarter = cols // 4
    sums = _bound(
        q,
        4,
        "threadIdx.x",
        N.Allocate(
            acc,
            N.seq(
                N.BufferStore(acc, E.FloatImm(0.0, "float32"), (_i(0),)),
                N.For(
                    k,
                    _i(0),
                    _i(quarter),
                    "unrolled",
                    N.BufferStore(acc, acc[_i(0)] + S[q * _i(quarter) + k], (_i(0),)),
                ),
                N.BufferStore(out, acc[_i(0)], (b, q)),
            ),
        ),
    )
    body = N.Allocate(S, N.seq(fetch, gpu.barrier(), sums))
    return N.PrimFunc((A, out), _bound(b, rows, "blockIdx.x", body), "rowsum")
