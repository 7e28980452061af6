"""GPU lowering: shared tiles sized per block, allocated at block level, barriers placed."""

import sys
from pathlib import Path

import numpy as np
import pytest

import ansor_lab as tvm
from ansor_lab import te, tir
from ansor_lab.dsl import expr as E
from ansor_lab.ir import gpu, nodes as N
from ansor_lab.ir.storage_sync import insert_barriers
from ansor_lab.ir.visitor import IRMutator, walk_stmts

sys.path.insert(0, str(Path(__file__).parent))
from gpu_interp import RaceError, run_gpu  # noqa: E402


def allocs(func):
    return {s.buffer.name: s.buffer for s in walk_stmts(func.body) if isinstance(s, N.Allocate)}


def barrier_lines(func):
    """Printed lines of the function, barriers as 'SYNC', stripped."""
    return [ln.strip() for ln in str(func).splitlines()]


def matmul_schedule(n, block, thread, k_tile, coop=True):
    """TVM's tiled GPU matmul: block tiles of ``block``, per-thread tiles of ``thread``."""
    A = te.placeholder((n, n), name="A")
    B = te.placeholder((n, n), name="B")
    k = te.reduce_axis((0, n), name="k")
    C = te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    s = te.create_schedule(C.op)
    AA = s.cache_read(A, "shared", [C])
    BB = s.cache_read(B, "shared", [C])
    CL = s.cache_write(C, "local")
    i, j = s[C].op.axis
    bi, i = s[C].split(i, factor=block)
    ti, ii = s[C].split(i, factor=thread)
    bj, j = s[C].split(j, factor=block)
    tj, jj = s[C].split(j, factor=thread)
    s[C].reorder(bi, bj, ti, tj, ii, jj)
    tx, ty = te.thread_axis("threadIdx.x"), te.thread_axis("threadIdx.y")
    s[C].bind(bi, te.thread_axis("blockIdx.x"))
    s[C].bind(bj, te.thread_axis("blockIdx.y"))
    s[C].bind(ti, ty)
    s[C].bind(tj, tx)
    s[CL].compute_at(s[C], tj)
    ko, ki = s[CL].split(s[CL].op.reduce_axis[0], factor=k_tile)
    s[CL].reorder(ko, ki, *s[CL].op.axis)
    s[AA].compute_at(s[CL], ko)
    s[BB].compute_at(s[CL], ko)
    nthreads = block // thread
    if coop:  # cooperative fetching: every thread of the block copies its part
        for S in (AA, BB):
            f = s[S].fuse(*s[S].op.axis)
            o, _ = s[S].split(f, factor=block * k_tile // nthreads**2)
            o1, o2 = s[S].split(o, nparts=nthreads)
            s[S].bind(o1, ty)
            s[S].bind(o2, tx)
    return s, [A, B, C]


def test_matmul_shared_tiles_are_the_blocks():
    s, args = matmul_schedule(128, 64, 8, 8)
    f = tvm.lower(s, args)["main"]
    bufs = allocs(f)
    # the tiled matmul: per block 64x8 of A and 8x64 of B, not one thread's 8x8
    assert bufs["A_shared"].shape == (64, 8) and bufs["A_shared"].scope == "shared"
    assert bufs["B_shared"].shape == (8, 64)
    assert bufs["C_local"].shape == (8, 8) and bufs["C_local"].scope == "local"
    text = str(tvm.lower(f))
    lines = text.splitlines()
    at = {
        name: next(k for k, ln in enumerate(lines) if name in ln)
        for name in (
            "A_shared = T.alloc_buffer",
            "threadIdx.y",
            "blockIdx.y",
            "C_local = T.alloc_buffer",
        )
    }
    # shared: inside the blockIdx loops, outside the thread loops; local: inside them
    assert at["blockIdx.y"] < at["A_shared = T.alloc_buffer"] < at["threadIdx.y"]
    assert at["threadIdx.y"] < at["C_local = T.alloc_buffer"]


def test_matmul_barriers_exact_positions():
    s, args = matmul_schedule(128, 64, 8, 8)
    lines = [ln.strip() for ln in str(tvm.lower(s, args)["main"]).splitlines()]
    sync = 'T.tvm_storage_sync("shared")'
    assert lines.count(sync) == 2
    k0 = lines.index("for k_0 in range(16):")
    # top of the k_0 body (the last tile's readers before the refill), then after both fills
    assert lines[k0 + 1] == sync
    assert lines[k0 + 2] == '# stage "A_shared"'
    second = lines.index(sync, k0 + 2)
    assert lines[second - 1].startswith("B_shared[")
    assert lines[second + 1] == "for k_1 in range(8):"


def test_matmul_runs_right_with_cuda_semantics():
    s, args = matmul_schedule(16, 8, 2, 4)
    f = tvm.lower(s, args)["main"]
    rng = np.random.default_rng(0)
    a, b = rng.random((16, 16), "float32"), rng.random((16, 16), "float32")
    c = np.zeros((16, 16), "float32")
    run_gpu(f, [a, b, c])
    np.testing.assert_allclose(c, a @ b, rtol=1e-5)


def test_missing_barrier_is_a_race_in_the_interpreter():
    # the interpreter is what the barrier tests trust: without the barriers it must fail
    s, args = matmul_schedule(16, 8, 2, 4)
    f = tvm.lower(s, args)["main"]

    class NoSync(IRMutator):
        def stmt_SeqStmt(self, s):
            return N.seq(*[self.visit_stmt(x) for x in s.seq if not gpu.is_barrier(x)])

    bare = f.with_body(NoSync().visit_stmt(f.body))
    a = np.ones((16, 16), "float32")
    with pytest.raises(RaceError, match="A_shared|B_shared"):
        run_gpu(bare, [a, a.copy(), np.zeros_like(a)])


def test_window_sum_shared_tile_covers_the_block():
    n = 256
    A = te.placeholder((n + 2,), name="A")
    B = te.compute((n,), lambda i: A[i] + A[i + 1] + A[i + 2], name="B")
    s = te.create_schedule(B.op)
    AA = s.cache_read(A, "shared", [B])
    bx, tx = s[B].split(B.op.axis[0], factor=64)
    s[B].bind(bx, te.thread_axis("blockIdx.x"))
    s[B].bind(tx, te.thread_axis("threadIdx.x"))
    s[AA].compute_at(s[B], tx)
    f = tvm.lower(s, [A, B])["main"]
    assert allocs(f)["A_shared"].shape == (66,)  # 64 threads' windows of 3, not 3
    lines = [ln.strip() for ln in str(f).splitlines()]
    sync = 'T.tvm_storage_sync("shared")'
    assert lines.count(sync) == 1
    assert lines[lines.index(sync) + 1].startswith("B[")
    a = np.arange(n + 2, dtype="float32")
    b = np.zeros(n, "float32")
    run_gpu(f, [a, b])
    np.testing.assert_allclose(b, a[:-2] + a[1:-1] + a[2:])


def test_block_style_shared_tile_is_relaxed_too():
    n = 128
    A = te.placeholder((n, n), name="A")
    B = te.placeholder((n, n), name="B")
    k = te.reduce_axis((0, n), name="k")
    C = te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    sch = tir.Schedule(te.create_prim_func([A, B, C]))
    blk = sch.get_block("C")
    i, j, kk = sch.get_loops(blk)
    bi, ti, ii = sch.split(i, [None, 8, 8])
    bj, tj, jj = sch.split(j, [None, 8, 8])
    ko, ki = sch.split(kk, [None, 8])
    sch.reorder(bi, bj, ti, tj, ko, ki, ii, jj)
    sch.bind(bi, "blockIdx.x")
    sch.bind(bj, "blockIdx.y")
    sch.bind(ti, "threadIdx.y")
    sch.bind(tj, "threadIdx.x")
    AA = sch.cache_read(blk, 0, "shared")
    sch.compute_at(AA, ko)
    f = sch.mod["main"]
    assert allocs(f)["A_shared"].shape == (64, 8)
    text = str(tvm.lower(f))
    assert text.index("A_shared = T.alloc_buffer") < text.index("threadIdx.y")
    assert text.count("T.tvm_storage_sync") == 2


def test_local_cache_gets_no_barrier():
    n = 64
    A = te.placeholder((n,), name="A")
    B = te.compute((n,), lambda i: A[i] * 2.0, name="B")
    s = te.create_schedule(B.op)
    AL = s.cache_read(A, "local", [B])
    bx, tx = s[B].split(B.op.axis[0], factor=16)
    s[B].bind(bx, te.thread_axis("blockIdx.x"))
    s[B].bind(tx, te.thread_axis("threadIdx.x"))
    s[AL].compute_at(s[B], tx)
    f = tvm.lower(s, [A, B])["main"]
    assert allocs(f)["A_local"].shape == (1,)  # one thread's element
    assert "tvm_storage_sync" not in str(f)


# -- the barrier pass on hand-written kernels: exactly where threads hand data over ---------
tx_var, i_var = E.Var("tx"), E.Var("i")
S = N.Buffer("S", (64,), "float32", "shared")
G = N.Buffer("G", (64,), "float32")


def kernel(*stmts, extent=64):
    body = N.seq(*stmts)
    loop = N.For(tx_var, E.IntImm(0), E.IntImm(extent), "thread_binding", body, "threadIdx.x")
    bx = N.For(
        E.Var("bx"), E.IntImm(0), E.IntImm(1), "thread_binding", N.Allocate(S, loop), "blockIdx.x"
    )
    return N.PrimFunc((G,), bx, "k")


def body_of(func):
    loop = func.body.body.body
    return loop.body.seq if isinstance(loop.body, N.SeqStmt) else (loop.body,)


def store(buf, idx, value):
    return N.BufferStore(buf, value, (idx,))


def load(buf, idx):
    return N.BufferLoad(buf, (idx,), "float32")


def add(a, b):
    return E.Add(a, b, "int32")


def test_same_thread_write_then_read_needs_no_barrier():
    f = kernel(store(S, tx_var, E.FloatImm(1.0)), store(G, tx_var, load(S, tx_var)))
    assert not any(gpu.is_barrier(x) for x in body_of(insert_barriers(f)))


def test_neighbour_read_gets_one_barrier_between():
    f = kernel(
        store(S, tx_var, E.FloatImm(1.0)),
        store(G, tx_var, load(S, E.FloorMod(add(tx_var, E.IntImm(1)), E.IntImm(64), "int32"))),
    )
    out = body_of(insert_barriers(f))
    assert [gpu.is_barrier(x) for x in out] == [False, True, False]
    # idempotent: a second run adds nothing
    assert body_of(insert_barriers(insert_barriers(f))) == out


def test_write_after_read_in_a_loop_gets_a_barrier_at_the_top():
    loop = N.For(
        i_var,
        E.IntImm(0),
        E.IntImm(4),
        "serial",
        N.seq(
            store(S, tx_var, E.FloatImm(1.0)),
            store(G, tx_var, load(S, E.IntImm(0))),
        ),
    )
    out = body_of(insert_barriers(kernel(loop)))
    body = out[0].body.seq
    assert [gpu.is_barrier(x) for x in body] == [True, False, True, False]


def test_private_cells_over_inner_loops():
    # thread tx owns S[4tx .. 4tx+3]: written in one loop, read in another, no barrier
    inner = E.Var("j")
    w = N.For(
        inner,
        E.IntImm(0),
        E.IntImm(4),
        "serial",
        store(S, add(E.Mul(tx_var, E.IntImm(4), "int32"), inner), E.FloatImm(1.0)),
    )
    r = N.For(
        inner,
        E.IntImm(0),
        E.IntImm(4),
        "serial",
        store(G, tx_var, load(S, add(E.Mul(tx_var, E.IntImm(4), "int32"), inner))),
    )
    f = kernel(w, r, extent=16)
    assert not any(gpu.is_barrier(x) for x in body_of(insert_barriers(f)))
    # a stride of 2 makes neighbouring threads' cells overlap: a barrier
    r2 = N.For(
        inner,
        E.IntImm(0),
        E.IntImm(4),
        "serial",
        store(G, tx_var, load(S, add(E.Mul(tx_var, E.IntImm(2), "int32"), inner))),
    )
    w2 = N.For(
        inner,
        E.IntImm(0),
        E.IntImm(4),
        "serial",
        store(S, add(E.Mul(tx_var, E.IntImm(2), "int32"), inner), E.FloatImm(1.0)),
    )
    out = body_of(insert_barriers(kernel(w2, r2, extent=16)))
    assert [gpu.is_barrier(x) for x in out] == [False, True, False]


def test_no_barrier_inside_a_thread_guard():
    cond = E.LT(tx_var, E.IntImm(32))
    guarded = N.IfThenElse(
        cond,
        N.seq(
            store(S, tx_var, E.FloatImm(1.0)), store(G, tx_var, load(S, add(tx_var, E.IntImm(1))))
        ),
    )
    out = body_of(insert_barriers(kernel(guarded)))
    assert not any(gpu.is_barrier(x) for x in out)  # a divergent barrier would deadlock


def test_storage_align_vectorize_unroll_inside_threads():
    s, args = matmul_schedule(16, 8, 2, 4)
    # the stages are found by their tensors' names, as the TVM tutorials hold them
    stages = {st.op.name: st for st in s.stages}
    AA, CL = stages["A_shared"], stages["C_local"]
    AA.storage_align(AA.op.axis[0], 8, 1)  # pad the rows: 4 -> stride 9 (bank conflicts)
    AA.vectorize(AA.leaf_iter_vars[-1])
    CL.unroll(CL.leaf_iter_vars[-1])
    f = tvm.lower(s, args)["main"]
    text = str(tvm.lower(f))
    assert allocs(f)["A_shared"].padded_strides == (9, 1)
    assert "T.vectorized(" in text and "T.unroll(" in text
    assert text.count('T.tvm_storage_sync("shared")') == 2
    rng = np.random.default_rng(4)
    a, b = rng.random((16, 16), "float32"), rng.random((16, 16), "float32")
    c = np.zeros((16, 16), "float32")
    run_gpu(f, [a, b, c])
    np.testing.assert_allclose(c, a @ b, rtol=1e-5)


def test_bind_after_compute_at_refreshes_the_shared_region():
    # block style, bind last: the shared tile's displayed loops grow to the block's
    n = 64
    A = te.placeholder((n, n), name="A")
    B = te.placeholder((n, n), name="B")
    k = te.reduce_axis((0, n), name="k")
    C = te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    sch = tir.Schedule(te.create_prim_func([A, B, C]))
    blk = sch.get_block("C")
    i, j, kk = sch.get_loops(blk)
    bi, ti = sch.split(i, [None, 16])
    ko, ki = sch.split(kk, [None, 4])
    sch.reorder(bi, ti, ko, ki, j)
    AA = sch.cache_read(blk, 0, "shared")
    sch.compute_at(AA, ko)
    # as TVM's compute_at, no loop of extent 1 is shown for the moved block
    assert [(sch.get(lp).block, sch.get(lp).extent) for lp in sch.get_loops(AA)[-2:]] == [
        ("C", 16),
        ("A_shared", 4),
    ]
    sch.bind(bi, "blockIdx.x")
    sch.bind(ti, "threadIdx.x")
    assert [sch.get(lp).extent for lp in sch.get_loops(AA)[-2:]] == [16, 4]
    assert allocs(sch.mod["main"])["A_shared"].shape == (16, 4)


def test_accesses_after_a_barrier_in_a_branch_stay_pending():
    # if (uniform): S[tx] = ..; SYNC; S[tx] = ..   then G = S[tx + 1]: the write after the
    # branch's barrier still needs one before the read
    cond = E.EQ(E.Var("bx"), E.IntImm(0))
    branch = N.IfThenElse(
        cond,
        N.seq(store(S, tx_var, E.FloatImm(1.0)), gpu.barrier(), store(S, tx_var, E.FloatImm(2.0))),
    )
    read = store(G, tx_var, load(S, E.FloorMod(add(tx_var, E.IntImm(1)), E.IntImm(64), "int32")))
    out = body_of(insert_barriers(kernel(branch, read)))
    assert [gpu.is_barrier(x) for x in out] == [False, True, False]


def test_block_style_cooperative_fetch_runs_right():
    n = 16
    A = te.placeholder((n, n), name="A")
    B = te.placeholder((n, n), name="B")
    k = te.reduce_axis((0, n), name="k")
    C = te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    sch = tir.Schedule(te.create_prim_func([A, B, C]))
    blk = sch.get_block("C")
    i, j, kk = sch.get_loops(blk)
    bi, ti, ii = sch.split(i, [None, 4, 2])
    bj, tj, jj = sch.split(j, [None, 4, 2])
    ko, ki = sch.split(kk, [None, 4])
    sch.reorder(bi, bj, ti, tj, ko, ki, ii, jj)
    sch.bind(bi, "blockIdx.x")
    sch.bind(bj, "blockIdx.y")
    sch.bind(ti, "threadIdx.y")
    sch.bind(tj, "threadIdx.x")
    for index in (0, 1):
        cache = sch.cache_read(blk, index, "shared")
        sch.compute_at(cache, ko)
        fused = sch.fuse(*sch.get_loops(cache)[-2:])  # 8 x 4 (or 4 x 8) = 32 elements
        ty, tx, _ = sch.split(fused, [4, 4, None])
        sch.bind(ty, "threadIdx.y")
        sch.bind(tx, "threadIdx.x")
    f = sch.mod["main"]
    bufs = allocs(f)
    assert bufs["A_shared"].shape == (8, 4) and bufs["B_shared"].shape == (4, 8)
    assert str(tvm.lower(f)).count('T.tvm_storage_sync("shared")') == 2
    rng = np.random.default_rng(6)
    a, b = rng.random((n, n), "float32"), rng.random((n, n), "float32")
    c = np.zeros((n, n), "float32")
    run_gpu(f, [a, b, c])
    np.testing.assert_allclose(c, a @ b, rtol=1e-5)
