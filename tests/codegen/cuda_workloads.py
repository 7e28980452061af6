"""Hand-scheduled GPU workloads for the CUDA C tests (TE schedules: bind, local caches,
unroll, float4, several kernels with global temporaries).

Each builder returns ``(schedule, args)``; ``WORKLOADS`` names them. Sizes are small so
the CPU run of the generated C (``cuda_shim``) stays quick. ``SHARED_WORKLOADS`` use
shared memory (tiles relaxed over the block's threads, barriers from the GPU lowering):
TVM's tiled GEMM with vectorized cooperative fetching and cross-thread reductions.
"""

from __future__ import annotations

from ansor_lab import te

BX, TX = te.thread_axis("blockIdx.x"), te.thread_axis("threadIdx.x")


def _bx():
    return te.thread_axis("blockIdx.x")


def _tx():
    return te.thread_axis("threadIdx.x")


def bind_flat(s, t, threads: int = 64, vector: int = 0) -> None:
    """Fuse every axis of ``t``, then blocks x threads (x a vectorized tail of ``vector``)."""
    f = s[t].fuse(*t.op.axis)
    if vector:
        f, v = s[t].split(f, factor=vector)
    bo, ti = s[t].split(f, factor=threads)
    s[t].bind(bo, _bx())
    s[t].bind(ti, _tx())
    if vector:
        s[t].vectorize(v)


def matmul(n: int = 64):
    """16x16 block tiles, 8x8 threads, 2x2 per thread accumulated in registers."""
    A = te.placeholder((n, n), name="A")
    B = te.placeholder((n, n), name="B")
    k = te.reduce_axis((0, n), name="k")
    C = te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    s = te.create_schedule(C.op)
    CL = s.cache_write(C, "local")
    i, j = C.op.axis
    by, ty = s[C].split(i, factor=16)
    bx, tx = s[C].split(j, factor=16)
    ty, yi = s[C].split(ty, nparts=8)
    tx, xi = s[C].split(tx, nparts=8)
    s[C].reorder(by, bx, ty, tx, yi, xi)
    s[C].bind(by, te.thread_axis("blockIdx.y"))
    s[C].bind(bx, te.thread_axis("blockIdx.x"))
    s[C].bind(ty, te.thread_axis("threadIdx.y"))
    s[C].bind(tx, te.thread_axis("threadIdx.x"))
    s[CL].compute_at(s[C], tx)
    ko, ki = s[CL].split(s[CL].op.reduce_axis[0], factor=4)
    a, b = s[CL].op.axis
    s[CL].reorder(ko, ki, a, b)
    s[CL].unroll(ki)
    return s, [A, B, C]


def batch_matmul(b: int = 4, n: int = 32):
    """Batch on blockIdx.z, rows on blockIdx.x, columns on threads."""
    A = te.placeholder((b, n, n), name="A")
    B = te.placeholder((b, n, n), name="B")
    k = te.reduce_axis((0, n), name="k")
    C = te.compute((b, n, n), lambda z, i, j: te.sum(A[z, i, k] * B[z, k, j], axis=k), name="C")
    s = te.create_schedule(C.op)
    z, i, j = C.op.axis
    s[C].bind(z, te.thread_axis("blockIdx.z"))
    s[C].bind(i, _bx())
    s[C].bind(j, _tx())
    return s, [A, B, C]


def conv2d_nchw(n=1, c=8, h=10, w=10, f=16, kh=3):
    """Padding is its own kernel (a global temporary); the conv accumulates in a register."""
    X = te.placeholder((n, c, h, w), name="X")
    W = te.placeholder((f, c, kh, kh), name="W")
    P = te.compute(
        (n, c, h + 2, w + 2),
        lambda a, b, y, x: te.if_then_else(
            te.all(y >= 1, y <= h, x >= 1, x <= w), X[a, b, y - 1, x - 1], 0.0
        ),
        name="pad",
    )
    rc = te.reduce_axis((0, c), name="rc")
    ry = te.reduce_axis((0, kh), name="ry")
    rx = te.reduce_axis((0, kh), name="rx")
    Y = te.compute(
        (n, f, h, w),
        lambda a, o, y, x: te.sum(P[a, rc, y + ry, x + rx] * W[o, rc, ry, rx], axis=[rc, ry, rx]),
        name="conv",
    )
    s = te.create_schedule(Y.op)
    bind_flat(s, P, 64)
    YL = s.cache_write(Y, "local")
    a, o, y, x = Y.op.axis
    s[Y].bind(s[Y].fuse(a, o), _bx())
    s[Y].bind(s[Y].fuse(y, x), _tx())
    s[YL].compute_at(s[Y], s[Y].leaf_iter_vars[-1])
    s[YL].unroll(s[YL].op.reduce_axis[2])
    return s, [X, W, Y]


def depthwise_conv(c=16, h=12, w=12, kh=3):
    """Valid (no padding) depthwise conv, one output row per thread."""
    X = te.placeholder((1, c, h, w), name="X")
    W = te.placeholder((c, 1, kh, kh), name="W")
    ry = te.reduce_axis((0, kh), name="ry")
    rx = te.reduce_axis((0, kh), name="rx")
    oh, ow = h - kh + 1, w - kh + 1
    Y = te.compute(
        (1, c, oh, ow),
        lambda a, b, y, x: te.sum(X[a, b, y + ry, x + rx] * W[b, 0, ry, rx], axis=[ry, rx]),
        name="dw",
    )
    s = te.create_schedule(Y.op)
    a, b, y, x = Y.op.axis
    s[Y].bind(s[Y].fuse(a, b), _bx())
    s[Y].bind(y, _tx())
    return s, [X, W, Y]


def softmax(rows=32, cols=64):
    """Max, exp, sum, divide: four kernels, two global temporaries."""
    X = te.placeholder((rows, cols), name="X")
    k1 = te.reduce_axis((0, cols), name="k1")
    M = te.compute((rows,), lambda i: te.max(X[i, k1], axis=k1), name="rowmax")
    E = te.compute((rows, cols), lambda i, j: te.exp(X[i, j] - M[i]), name="exps")
    k2 = te.reduce_axis((0, cols), name="k2")
    S = te.compute((rows,), lambda i: te.sum(E[i, k2], axis=k2), name="rowsum")
    Y = te.compute((rows, cols), lambda i, j: E[i, j] / S[i], name="softmax")
    s = te.create_schedule(Y.op)
    for t in (M, S):
        bo, ti = s[t].split(t.op.axis[0], factor=16)
        s[t].bind(bo, _bx())
        s[t].bind(ti, _tx())
    bind_flat(s, E, 64, vector=4)
    bind_flat(s, Y, 64, vector=4)
    return s, [X, Y]


def layer_norm(rows=16, cols=64):
    """Mean and variance per row (two kernels), then normalise and scale."""
    X = te.placeholder((rows, cols), name="X")
    G = te.placeholder((cols,), name="gamma")
    k1 = te.reduce_axis((0, cols), name="k1")
    mean = te.compute((rows,), lambda i: te.sum(X[i, k1] / float(cols), axis=k1), name="mean")
    k2 = te.reduce_axis((0, cols), name="k2")
    var = te.compute(
        (rows,),
        lambda i: te.sum((X[i, k2] - mean[i]) * (X[i, k2] - mean[i]) / float(cols), axis=k2),
        name="var",
    )
    Y = te.compute(
        (rows, cols),
        lambda i, j: (X[i, j] - mean[i]) * te.rsqrt(var[i] + 1e-5) * G[j],
        name="ln",
    )
    s = te.create_schedule(Y.op)
    for t in (mean, var):
        s[t].bind(t.op.axis[0], _tx())
    s[Y].bind(Y.op.axis[0], _bx())
    s[Y].bind(Y.op.axis[1], _tx())
    return s, [X, G, Y]


def max_pool(c=8, h=16, w=16):
    """2x2 max pooling, stride 2; the thread split leaves a guard (extent not divisible)."""
    X = te.placeholder((1, c, h, w), name="X")
    ry = te.reduce_axis((0, 2), name="ry")
    rx = te.reduce_axis((0, 2), name="rx")
    Y = te.compute(
        (1, c, h // 2, w // 2),
        lambda a, b, y, x: te.max(X[a, b, y * 2 + ry, x * 2 + rx], axis=[ry, rx]),
        name="pool",
    )
    s = te.create_schedule(Y.op)
    bind_flat(s, Y, 96)
    return s, [X, Y]


def transpose(n=64, m=32):
    """B = A^T, one column of A per thread block."""
    A = te.placeholder((n, m), name="A")
    B = te.compute((m, n), lambda i, j: A[j, i], name="T")
    s = te.create_schedule(B.op)
    s[B].bind(B.op.axis[0], _bx())
    s[B].bind(B.op.axis[1], _tx())
    return s, [A, B]


def elementwise_chain(n=4096):
    """relu(exp(a) * b + 1) as one inlined stage, float4 loads and stores."""
    A = te.placeholder((n,), name="A")
    B = te.placeholder((n,), name="B")
    E1 = te.compute((n,), lambda i: te.exp(A[i]), name="e1")
    E2 = te.compute((n,), lambda i: E1[i] * B[i] + 1.0, name="e2")
    Y = te.compute((n,), lambda i: te.max(E2[i], 0.0), name="relu")
    s = te.create_schedule(Y.op)
    s[E1].compute_inline()
    s[E2].compute_inline()
    bind_flat(s, Y, 128, vector=4)
    return s, [A, B, Y]


def row_reduction(rows=64, cols=128):
    """Row sums, 4-way unrolled inner loop, one row per thread."""
    A = te.placeholder((rows, cols), name="A")
    k = te.reduce_axis((0, cols), name="k")
    S = te.compute((rows,), lambda i: te.sum(A[i, k], axis=k), name="S")
    s = te.create_schedule(S.op)
    bo, ti = s[S].split(S.op.axis[0], factor=32)
    s[S].bind(bo, _bx())
    s[S].bind(ti, _tx())
    ko, ki = s[S].split(S.op.reduce_axis[0], factor=4)
    s[S].unroll(ki)
    return s, [A, S]


def int_index_math(n=256):
    """Integer floor division and modulo of negative values (the helpers' semantics)."""
    A = te.placeholder((n,), name="A", dtype="int32")
    Y = te.compute((n,), lambda i: (A[i] // 3) * 10 + A[i] % 7 - te.truncdiv(A[i], 4), name="Y")
    s = te.create_schedule(Y.op)
    bind_flat(s, Y, 64)
    return s, [A, Y]


def half_scale(n=512):
    """float16 in, float32 math, float16 out."""
    A = te.placeholder((n,), name="A", dtype="float16")
    Y = te.compute(
        (n,), lambda i: (te.sigmoid(A[i].astype("float32")) * 2.0).astype("float16"), name="Y"
    )
    s = te.create_schedule(Y.op)
    bind_flat(s, Y, 64)
    return s, [A, Y]


def mixed_dtypes(n: int = 256):
    """half arithmetic and max, int64 floor division, int8 wrapping, saturating casts."""
    A = te.placeholder((n,), name="A", dtype="float16")
    B = te.placeholder((n,), name="B", dtype="float16")
    eye = te.placeholder((n,), name="I", dtype="int64")
    Q = te.placeholder((n,), name="Q", dtype="int8")
    C = te.compute((n,), lambda i: te.max(A[i] * B[i] + A[i], B[i]) - te.exp(A[i]), name="C")
    D = te.compute(
        (n,),
        lambda i: te.if_then_else(
            A[i] > B[i],
            (eye[i] // 3 + eye[i] % 5).astype("float32"),
            te.sqrt(te.abs(B[i].astype("float32"))),
        ),
        name="D",
    )
    E = te.compute((n,), lambda i: (Q[i] * Q[i] + (Q[i] // 2)).astype("int8"), name="E")
    F = te.compute((n,), lambda i: (A[i].astype("float32") * 300.0).astype("int8"), name="F")
    s = te.create_schedule([C.op, D.op, E.op, F.op])
    for t in (C, D, E, F):
        bind_flat(s, t, 64)
    return s, [A, B, eye, Q, C, D, E, F]


def matmul_shared(n: int = 128, block: int = 32, thread: int = 4, k_tile: int = 8):
    """TVM's GPU GEMM recipe: 32x32 block tiles, 8x8 threads of 4x4, shared A/B tiles of
    the block fetched cooperatively (fused, float4-vectorized, split over the threads)."""
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
    s[C].bind(bi, te.thread_axis("blockIdx.y"))
    s[C].bind(bj, te.thread_axis("blockIdx.x"))
    s[C].bind(ti, ty)
    s[C].bind(tj, tx)
    s[CL].compute_at(s[C], tj)
    ko, ki = s[CL].split(s[CL].op.reduce_axis[0], factor=k_tile)
    s[CL].reorder(ko, ki, *s[CL].op.axis)
    s[CL].unroll(ki)
    s[AA].compute_at(s[CL], ko)
    s[BB].compute_at(s[CL], ko)
    nthreads = block // thread
    for S in (AA, BB):
        f = s[S].fuse(*s[S].op.axis)
        o, v = s[S].split(f, factor=4)
        o, t = s[S].split(o, factor=nthreads * nthreads)
        t1, t2 = s[S].split(t, nparts=nthreads)
        s[S].bind(t1, ty)
        s[S].bind(t2, tx)
        s[S].vectorize(v)
    return s, [A, B, C]


def softmax_cross_thread(n: int = 8, m: int = 64, num_thread: int = 16):
    """TVM's topi.cuda softmax: max and sum as cross-thread reductions (rfactor + bind)."""
    x = te.placeholder((n, m), name="x")
    k = te.reduce_axis((0, m), name="k")
    max_elem = te.compute((n,), lambda i: te.max(x[i, k], axis=k), name="max_elem")
    e = te.compute((n, m), lambda i, j: te.exp(x[i, j] - max_elem[i]), name="exp")
    k2 = te.reduce_axis((0, m), name="k2")
    expsum = te.compute((n,), lambda i: te.sum(e[i, k2], axis=k2), name="expsum")
    out = te.compute((n, m), lambda i, j: e[i, j] / expsum[i], name="softmax")
    s = te.create_schedule(out.op)
    block_x = te.thread_axis("blockIdx.x")
    thread_x = te.thread_axis((0, num_thread), "threadIdx.x")
    xo, xi = s[out].split(out.op.axis[1], nparts=num_thread)
    s[out].bind(xo, thread_x)
    s[out].bind(out.op.axis[0], block_x)
    for red in (expsum, max_elem):
        ko, ki = s[red].split(red.op.reduce_axis[0], factor=num_thread)
        RF = s.rfactor(red, ki)
        s[red].bind(s[red].op.axis[0], block_x)
        s[red].bind(s[red].op.reduce_axis[0], thread_x)
        s[RF].compute_at(s[red], s[red].op.reduce_axis[0])
        s[red].set_store_predicate(thread_x.var.equal(0))
    s[e].bind(e.op.axis[0], block_x)
    _, xi = s[e].split(e.op.axis[1], factor=num_thread)
    s[e].bind(xi, thread_x)
    return s, [x, out]


def row_sum_cross_thread(n: int = 6, m: int = 100, threads: int = 32):
    """Row sums with the reduction loop bound to threadIdx.x (a shared-memory tree)."""
    A = te.placeholder((n, m), name="A")
    k = te.reduce_axis((0, m), name="k")
    B = te.compute((n,), lambda i: te.sum(A[i, k], axis=k), name="B")
    s = te.create_schedule(B.op)
    _, ki = s[B].split(B.op.reduce_axis[0], factor=threads)
    s[B].bind(B.op.axis[0], te.thread_axis("blockIdx.x"))
    s[B].bind(ki, te.thread_axis("threadIdx.x"))
    return s, [A, B]


SHARED_WORKLOADS = {
    "matmul_shared": matmul_shared,
    "softmax_cross_thread": softmax_cross_thread,
    "row_sum_cross_thread": row_sum_cross_thread,
}

WORKLOADS = {
    "matmul": matmul,
    "batch_matmul": batch_matmul,
    "conv2d_nchw": conv2d_nchw,
    "depthwise_conv": depthwise_conv,
    "softmax": softmax,
    "layer_norm": layer_norm,
    "max_pool": max_pool,
    "transpose": transpose,
    "elementwise_chain": elementwise_chain,
    "row_reduction": row_reduction,
    "int_index_math": int_index_math,
    "half_scale": half_scale,
    "mixed_dtypes": mixed_dtypes,
}

#: every workload of the CUDA tests
ALL_WORKLOADS = {**WORKLOADS, **SHARED_WORKLOADS}
