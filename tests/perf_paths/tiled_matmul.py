"""The register-tiled matmul schedule the performance-path tests share, written once.

``tile_matmul`` is the hand schedule that reaches numpy speed: a ti x tj register tile
of C kept in a local cache, its rows unrolled and its columns vectorized, B packed per
column panel, the panels optionally run in parallel. Tests pick the tile and the options.
"""

from __future__ import annotations

from workloads import matmul

from ansor_lab import te, tir


def matmul_schedule(m: int, n: int, k: int, dtype: str = "float32") -> tir.Schedule:
    """An unscheduled block-style schedule of C[m, n] = A[m, k] @ B[k, n]."""
    return tir.Schedule(te.create_prim_func(matmul(m, n, k, dtype)))


def tile_matmul(
    sch: tir.Schedule,
    ti: int,
    tj: int,
    *,
    vectorize_write_back: bool = True,
    pack: bool = True,
    parallel: bool = False,
) -> tir.Schedule:
    """Tile block C by ti x tj in registers (loops j0, i0, k, i1, j1); returns ``sch``.

    The tile accumulates in ``C_local`` (written back at i0, the write-back vectorized
    unless told not to); with ``pack`` the panel of B a j0 iteration reads is copied
    first (a vectorized copy); with ``parallel`` the j0 loop runs on threads.
    """
    c = sch.get_block("C")
    i, j, kk = sch.get_loops(c)
    i0, i1 = sch.split(i, [None, ti])
    j0, j1 = sch.split(j, [None, tj])
    sch.reorder(j0, i0, kk, i1, j1)
    cl = sch.cache_write(c, 0, "local")
    sch.reverse_compute_at(cl, i0)
    sch.unroll(i1)
    sch.vectorize(j1)
    if vectorize_write_back:
        sch.vectorize(sch.get_loops(sch.get_block("C_local"))[-1])
    if pack:
        bb = sch.cache_read(sch.get_block("C"), "B", "global")
        sch.compute_at(bb, j0)
        sch.vectorize(sch.get_loops(bb)[-1])
    if parallel:
        sch.parallel(j0)
    return sch
