"""Replaying and lowering a 30-step trace of the matmul-exp-matmul chain.

    .venv/bin/python bench/bench_replay.py [--size 512] [--repeat 5]

Builds one schedule of ``C = A @ B; D = exp(C); F = D @ E`` with 30 schedule steps
(tiling by sampled perfect tiles, reorder, compute_at, cache_write, reverse_compute_at,
vectorize, parallel, unroll annotations, decompose_reduction; the get_block / get_loops
lookups come on top), saves its trace as JSON text, then times, median of ``--repeat``:

- replay: ``Trace.from_json(text)`` applied to a fresh ``tir.Schedule`` (what a records
  file, a script or the search pays per candidate before lowering);
- lower: ``sch.mod`` of a freshly replayed schedule (bound inference, loop nests,
  simplification, verification).

Not part of the test suite: numbers depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import statistics
import time

from ansor_lab import te, tir

GETTERS = ("GetBlock", "GetLoops", "GetChildBlocks")


def workload(n: int) -> list:
    """The notebook chain: C = A @ B, D = exp(C), F = D @ E, all n x n float32."""
    A = te.placeholder((n, n), name="A")
    B = te.placeholder((n, n), name="B")
    E = te.placeholder((n, n), name="E")
    k = te.reduce_axis((0, n), name="k")
    C = te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    D = te.compute((n, n), lambda i, j: te.exp(C[i, j]), name="D")
    r = te.reduce_axis((0, n), name="r")
    F = te.compute((n, n), lambda i, j: te.sum(D[i, r] * E[r, j], axis=r), name="F")
    return [A, B, E, F]


def schedule(func: object) -> tir.Schedule:
    """A 30-step schedule of the chain, deterministic (fixed seed and decisions)."""
    sch = tir.Schedule(func, seed=7)
    f = sch.get_block("F")
    i, j, r = sch.get_loops(f)
    i_t = sch.sample_perfect_tile(i, 4, 16)  # 1
    j_t = sch.sample_perfect_tile(j, 4, 16)  # 2
    r_t = sch.sample_perfect_tile(r, 2, 16)  # 3
    i0, i1, i2, i3 = sch.split(i, i_t)  # 4
    j0, j1, j2, j3 = sch.split(j, j_t)  # 5
    r0, r1 = sch.split(r, r_t)  # 6
    sch.reorder(i0, j0, i1, j1, r0, i2, j2, r1, i3, j3)  # 7
    f_local = sch.cache_write(f, 0, "local")  # 8
    sch.reverse_compute_at(f_local, j1)  # 9
    d = sch.get_block("D")
    sch.compute_inline(d)  # 10
    c = sch.get_block("C")
    sch.compute_at(c, r0)  # 11
    ci, cj, ck = sch.get_loops(c)[-3:]
    ck_t = sch.sample_perfect_tile(ck, 2, 16)  # 12
    ck0, ck1 = sch.split(ck, ck_t)  # 13
    cj0, cj1 = sch.split(cj, [None, 8])  # 14
    sch.reorder(ck0, ci, cj0, ck1, cj1)  # 15
    sch.vectorize(cj1)  # 16
    sch.unroll(ck1)  # 17
    sch.decompose_reduction(c, ck0)  # 18
    fused = sch.fuse(i0, j0)  # 19
    sch.parallel(fused)  # 20
    sch.vectorize(j3)  # 21
    sch.unroll(i3)  # 22
    sch.annotate(f, "pragma_auto_unroll_max_step", 64)  # 23
    sch.decompose_reduction(f, r0)  # 24
    w_loops = sch.get_loops(f_local)
    wi, wj = w_loops[-2:]
    wj0, wj1 = sch.split(wj, [None, 4])  # 25
    sch.vectorize(wj1)  # 26
    sch.unroll(wi)  # 27
    step = sch.sample_categorical([0, 16, 64, 512], [0.25, 0.25, 0.25, 0.25])  # 28
    sch.annotate(c, "pragma_auto_unroll_max_step", step)  # 29
    sch.storage_align(c, 0, 0, 16, 4)  # 30
    return sch


def median_time(fn, repeat: int) -> float:
    """Median wall time of ``repeat`` calls of ``fn`` (seconds)."""
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> None:
    """Build the trace, then time its replay and its lowering."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=512, help="n of the n x n matrices")
    ap.add_argument("--repeat", type=int, default=5, help="timings per median")
    opts = ap.parse_args()
    func = te.create_prim_func(workload(opts.size))
    sch = schedule(func)
    text = sch.trace.dumps()
    steps = [i for i in sch.trace.insts if i.kind not in GETTERS]
    assert len(steps) == 30, f"the schedule has {len(steps)} steps, not 30"
    expected = sch.mod.script()

    def replay() -> tir.Schedule:
        fresh = tir.Schedule(func)
        tir.Trace.from_json(text).apply_to_schedule(fresh)
        return fresh

    assert replay().mod.script() == expected, "the replayed schedule lowers differently"
    replay_s = median_time(replay, opts.repeat)
    schedules = [replay() for _ in range(opts.repeat)]  # lower each fresh (sch.mod caches)
    it = iter(schedules)
    lower_s = median_time(lambda: next(it).mod, opts.repeat)
    print(
        f"matmul-exp-matmul {opts.size}x{opts.size}: a trace of {len(steps)} steps "
        f"({len(sch.trace.insts)} instructions with lookups), {len(text)} bytes of JSON"
    )
    print(f"  replay (JSON -> fresh schedule): {replay_s * 1e3:8.2f} ms  (median of {opts.repeat})")
    print(f"  lower (sch.mod):                 {lower_s * 1e3:8.2f} ms  (median of {opts.repeat})")


if __name__ == "__main__":
    main()
