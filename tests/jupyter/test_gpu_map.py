"""The thread-hierarchy picture: which block and thread computes which element, and the
shared tiles' fetch steps, read from a hand-scheduled GPU matmul."""

from __future__ import annotations

import numpy as np

import ansor_lab as tvm
from ansor_lab import te
from ansor_lab.jupyter.gpu_map import thread_map


def tiled_matmul(n: int = 32):
    """16x16 outputs per block, 2x2 per thread (8x8 threads), 8-wide k tiles in shared."""
    A = te.placeholder((n, n), name="A")
    B = te.placeholder((n, n), name="B")
    k = te.reduce_axis((0, n), name="k")
    C = te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    s = te.create_schedule(C.op)
    CL = s.cache_write(C, "local")
    i, j = C.op.axis
    bi, ti = s[C].split(i, factor=16)
    bj, tj = s[C].split(j, factor=16)
    ty, ii = s[C].split(ti, factor=2)
    tx, jj = s[C].split(tj, factor=2)
    s[C].reorder(bi, bj, ty, tx, ii, jj)
    for ax, tag in (
        (bi, "blockIdx.y"),
        (bj, "blockIdx.x"),
        (ty, "threadIdx.y"),
        (tx, "threadIdx.x"),
    ):
        s[C].bind(ax, te.thread_axis(tag))
    s[CL].compute_at(s[C], tx)
    ko, ki = s[CL].split(s[CL].op.reduce_axis[0], factor=8)
    s[CL].reorder(ko, ki, *s[CL].op.axis)
    for X in (s.cache_read(A, "shared", [CL]), s.cache_read(B, "shared", [CL])):
        s[X].compute_at(s[CL], ko)
        f = s[X].fuse(*s[X].op.axis)
        _, rest = s[X].split(f, factor=64)
        y, x = s[X].split(rest, factor=8)
        s[X].bind(y, te.thread_axis("threadIdx.y"))
        s[X].bind(x, te.thread_axis("threadIdx.x"))
    return tvm.build(s, [A, B, C], "cuda")


def test_blocks_threads_and_tiles_of_a_tiled_matmul():
    mod = tiled_matmul(32)
    m = thread_map(mod)
    assert (m.grid, m.block) == ((2, 2, 1), (8, 8, 1))
    # block (x=j//16, y=i//16) -> linear id x + 2y; thread (x=(j%16)//2, y=(i%16)//2)
    i, j = np.indices((32, 32))
    assert (m.block_of == (j // 16) + 2 * (i // 16)).all()
    assert (m.thread_of == ((j % 16) // 2) + 8 * ((i % 16) // 2)).all()
    (a_name, a_steps), (b_name, b_steps) = m.tiles
    assert (a_name, b_name) == ("A", "B")
    # block 0 holds rows 0..15 of A, fetched 8 columns per k step; B's rows 8 per step
    assert (a_steps[:16] == (np.arange(32) // 8)[None, :]).all() and (a_steps[16:] == -1).all()
    assert (b_steps[:, :16] == (np.arange(32) // 8)[:, None]).all()
    assert (b_steps[:, 16:] == -1).all()
    text = m.summary()
    assert "1024 elements computed by 4 blocks of 64 threads; each thread computes 4-4" in text
    assert "block 0 fetches 512 elements of A into shared memory in 4 step(s)" in text
    svg = m._repr_html_()
    assert svg.count("<svg") == 3 and "colour = block" in svg


def test_the_picture_of_a_picked_block():
    m = thread_map(tiled_matmul(32), block=3)
    a_steps = dict(m.tiles)["A"]
    assert (a_steps[16:] >= 0).all() and (a_steps[:16] == -1).all()
