"""Write the golden trace JSON files of tests/golden/traces/ (run once, by hand).

    PYTHONPATH=$PWD python tests/schedule/make_trace_goldens.py

The JSON files are inputs frozen on the day they were written: test_trace_golden.py
replays them and compares with the IR and Python text beside them (those it may rewrite
with ``--update-golden``; the JSON files only this script writes). Rerunning it after a
change of the search or the schedule would overwrite the evidence that old traces still
replay, so add new cases under new names instead of rewriting old ones.

Cases: one sampled candidate of every sketch the auto-scheduler makes for a few
workloads (sampling instructions with decisions, the post-processing marker and the
steps after it), and hand-written block-style and TE-style schedules that between them
use every instruction kind.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from golden_workloads import WORKLOADS, fresh_schedule

from ansor_lab import auto_scheduler, te
from ansor_lab.search import sketch as S
from ansor_lab.search.space import SearchSpace

OUT = Path(__file__).resolve().parents[1] / "golden" / "traces"


# -- one sampled candidate per sketch ----------------------------------------------------


def sketch_cases(workload: str, seed: int) -> dict:
    """``{<workload>.sketch<k>: trace JSON}`` for every sketch of the workload."""
    task = auto_scheduler.SearchTask(
        compute_dag=auto_scheduler.ComputeDAG(WORKLOADS[workload]()),
        target="llvm -num-cores=4",
    )
    sketches = S.generate_sketches(
        lambda: task.make_schedule(seed=0),
        annotate=lambda sch: S.annotate_sampling(sch, 4),
    )
    space = SearchSpace(sketches, lambda: task.make_schedule(seed=0), seed=seed)
    out = {}
    for k in range(len(sketches)):
        for _ in range(50):  # a few draws may not fit; take the first that does
            drawn = space.sample(k)
            if drawn is not None:
                break
        else:
            raise RuntimeError(f"no valid sample of sketch {k} of {workload}")
        out[f"{workload}.sketch{k}"] = drawn[1].trace.as_json()
    return out


# -- hand-written block-style schedules ---------------------------------------------------


def matmul_loops():
    """Split (factors with None), reorder, fuse, parallel, vectorize, unroll, annotate,
    decompose_reduction."""
    sch = fresh_schedule("matmul")
    c = sch.get_block("C")
    i, j, k = sch.get_loops(c)
    i0, i1 = sch.split(i, [None, 8])
    j0, j1 = sch.split(j, [6, None])
    k0, k1 = sch.split(k, factors=[None, 4])
    sch.reorder(i0, j0, k0, i1, k1, j1)
    f = sch.fuse(i0, j0)
    sch.parallel(f)
    sch.unroll(k1)
    sch.vectorize(j1)
    sch.annotate(k0, "pragma_auto_unroll_max_step", 16)
    sch.annotate(c, "ansor.note", "hand")
    sch.decompose_reduction(c, k0)
    return sch


def matmul_sampled():
    """SamplePerfectTile feeding splits, SampleCategorical feeding an annotation, the
    post-processing marker and steps after it."""
    sch = fresh_schedule("matmul")
    c = sch.get_block("C")
    i, j, k = sch.get_loops(c)
    ti = sch.sample_perfect_tile(i, n=3, max_innermost_factor=8, decision=[4, 2, 8])
    tj = sch.sample_perfect_tile(j, n=2, max_innermost_factor=16, decision=[3, 16])
    i0, i1, i2 = sch.split(i, ti)
    j0, j1 = sch.split(j, tj)
    sch.reorder(i0, j0, i1, k, i2, j1)
    v = sch.sample_categorical([0, 16, 64], [0.25, 0.5, 0.25], decision=2)
    sch.annotate(c, "ansor.unroll", v)
    sch.enter_postproc()
    loops = sch.get_loops(c)
    sch.parallel(sch.fuse(loops[0], loops[1]))
    sch.vectorize(sch.get_loops(c)[-1])
    sch.annotate(sch.get_loops(c)[0], "pragma_auto_unroll_max_step", 64)
    return sch


def matmul_exp_locations():
    """ComputeAt, ReverseComputeAt, SampleComputeLocation, ComputeRoot, GetChildBlocks."""
    sch = fresh_schedule("matmul_exp")
    c, d = sch.get_block("C"), sch.get_block("D")
    i, j = sch.get_loops(d)
    i0, i1 = sch.split(i, [None, 16])
    sch.compute_at(c, i0)
    sch.get_child_blocks(i0)
    sch.compute_root(c)
    ci, cj, ck = sch.get_loops(c)
    ci0, ci1 = sch.split(ci, [None, 8])
    sch.reverse_compute_at(d, ci0)
    sch.get_child_blocks(c)
    return sch


def matmul_exp_sampled_location():
    """SampleComputeLocation's loop handle used by compute_at."""
    sch = fresh_schedule("matmul_exp")
    c, d = sch.get_block("C"), sch.get_block("D")
    i, j = sch.get_loops(d)
    sch.split(j, [None, 8])
    loc = sch.sample_compute_location(c, decision=1)
    sch.compute_at(c, loc)
    return sch


def elementwise3_inline():
    """ComputeInline."""
    sch = fresh_schedule("elementwise3")
    sch.compute_inline(sch.get_block("B"))
    return sch


def elementwise3_reverse_inline():
    """ReverseComputeInline after a producer split."""
    sch = fresh_schedule("elementwise3")
    b = sch.get_block("B")
    i, j = sch.get_loops(b)
    sch.split(j, [None, 16])
    sch.reverse_compute_inline(sch.get_block("C"))
    return sch


def elementwise3_merge():
    """Merge of the outer loops of two nests, then of their inner loops."""
    sch = fresh_schedule("elementwise3")
    b, c = sch.get_block("B"), sch.get_block("C")
    sch.merge(sch.get_loops(b)[0], sch.get_loops(c)[0])
    sch.merge(sch.get_loops(b)[1], sch.get_loops(c)[1])
    return sch


def chain_storage():
    """CacheRead (by index, by name, with consumer blocks), CacheWrite, StorageAlign,
    SetScope, TransformLayout."""
    sch = fresh_schedule("chain")
    c, d, f = sch.get_block("C"), sch.get_block("D"), sch.get_block("F")
    sch.cache_read(c, 1, "local")
    sch.cache_read(d, "C", "shared", consumer_blocks=[])
    sch.cache_write(f, 0, "local")
    sch.storage_align(c, 0, 0, 16, 1)
    sch.set_scope(d, 0, "shared")
    sch.transform_layout(d, ("write", 0), lambda i, j: (j, i))
    return sch


def elementwise3_shared_cache():
    """CacheRead with a consumer_blocks list; TransformLayout of a read buffer by index."""
    sch = fresh_schedule("elementwise3")
    _b, c = sch.get_block("B"), sch.get_block("C")
    sch.cache_read(c, "B", "shared")
    sch.transform_layout(c, ("read", 0), [1, 0])
    return sch


def row_sum_rfactor():
    """RFactor of a split reduction loop, then GetChildBlocks and a split of the new block."""
    sch = fresh_schedule("row_sum")
    s = sch.get_block("S")
    i, k = sch.get_loops(s)
    k0, k1 = sch.split(k, [None, 8])
    rf = sch.rfactor(k1, factor_axis=0)
    sch.get_loops(rf)
    sch.parallel(sch.get_loops(s)[0])
    return sch


def matmul_bind():
    """Bind (GPU thread axes, recorded by tag) and DecomposeReduction at the outer loop."""
    sch = fresh_schedule("matmul")
    c = sch.get_block("C")
    i, j, k = sch.get_loops(c)
    i0, i1 = sch.split(i, [None, 16])
    j0, j1 = sch.split(j, [None, 16])
    sch.reorder(i0, j0, i1, j1)
    sch.bind(i0, "blockIdx.x")
    sch.bind(j0, "blockIdx.y")
    sch.bind(i1, te.thread_axis("threadIdx.x"))
    sch.bind(j1, "threadIdx.y")
    return sch


def matmul_cache_write_tiled():
    """The auto-scheduler's cache_write + tile structure, written by hand."""
    sch = fresh_schedule("matmul_relu")
    c = sch.get_block("C")
    cw = sch.cache_write(c, 0, "global")
    i, j, k = sch.get_loops(c)
    i0, i1 = sch.split(i, [None, 4])
    j0, j1 = sch.split(j, [None, 8])
    sch.reorder(i0, j0, k, i1, j1)
    sch.reverse_compute_at(cw, j0)
    return sch


def chain_producers_consumers():
    """GetConsumers and GetProducers, their handles used by the steps after them."""
    sch = fresh_schedule("chain")
    c, f = sch.get_block("C"), sch.get_block("F")
    (d,) = sch.get_consumers(c)
    sch.compute_inline(d)  # F now reads C through the inlined D
    (producer,) = sch.get_producers(f)
    i, _, _ = sch.get_loops(f)
    i0, _ = sch.split(i, [None, 4])
    sch.compute_at(producer, i0)
    sch.get_consumers(f)  # an output: no consumers
    return sch


# -- hand-written TE-style schedules ------------------------------------------------------


def _te(workload: str):
    args = WORKLOADS[workload]()
    outs = [t for t in args if not isinstance(t.op, te.PlaceholderOp)]
    return args, te.create_schedule([t.op for t in outs])


def te_matmul_tiled():
    """TE: tile, split by nparts, fuse, parallel, vectorize, unroll, pragma."""
    (A, B, C), s = _te("matmul")
    i, j = C.op.axis
    (k,) = C.op.reduce_axis
    xo, yo, xi, yi = s[C].tile(i, j, 16, 8)
    ko, ki = s[C].split(k, nparts=4)
    s[C].reorder(xo, yo, ko, xi, ki, yi)
    f = s[C].fuse(xo, yo)
    s[C].parallel(f)
    s[C].unroll(ki)
    s[C].vectorize(yi)
    s[C].pragma(f, "auto_unroll_max_step", 8)
    return s


def te_chain_caches():
    """TE: cache_read, cache_write (te_style), compute_at, compute_inline, storage_align,
    set_scope."""
    args, s = _te("chain")
    A, B, E, F = args
    C = F.op.input_tensors[0].op.input_tensors[0]
    D = F.op.input_tensors[0]
    Fl = s.cache_write(F, "local")
    Bs = s.cache_read(B, "shared", [C])
    s[D].compute_inline()
    i, j = F.op.axis
    io, ii = s[F].split(i, factor=4)
    s[Fl].compute_at(s[F], io)
    s[Bs].compute_at(s[C], C.op.axis[0])
    s[C].storage_align(C.op.axis[0], 16, 1)
    s[C].set_scope("global")
    return s


def te_row_sum_rfactor_bind():
    """TE: rfactor, bind to thread axes, compute_root."""
    (A, S_), s = _te("row_sum")
    (k,) = S_.op.reduce_axis
    ko, ki = s[S_].split(k, factor=16)
    SF = s.rfactor(S_, ki)
    (i,) = S_.op.axis
    s[S_].bind(i, te.thread_axis("blockIdx.x"))
    s[SF].compute_root()
    return s


HAND = {
    "matmul.loops": matmul_loops,
    "matmul.sampled": matmul_sampled,
    "matmul.bind": matmul_bind,
    "matmul_exp.locations": matmul_exp_locations,
    "matmul_exp.sampled_location": matmul_exp_sampled_location,
    "matmul_relu.cache_write_tiled": matmul_cache_write_tiled,
    "elementwise3.inline": elementwise3_inline,
    "elementwise3.reverse_inline": elementwise3_reverse_inline,
    "elementwise3.shared_cache": elementwise3_shared_cache,
    "elementwise3.merge": elementwise3_merge,
    "chain.storage": chain_storage,
    "chain.producers_consumers": chain_producers_consumers,
    "row_sum.rfactor": row_sum_rfactor,
    "matmul.te_tiled": te_matmul_tiled,
    "chain.te_caches": te_chain_caches,
    "row_sum.te_rfactor_bind": te_row_sum_rfactor_bind,
}

SKETCHED = {"matmul_relu": 1, "conv2d_bias_relu": 2, "softmax": 3}


def main() -> int:
    """Write every case that does not exist yet (``--force`` rewrites them all)."""
    force = "--force" in sys.argv
    OUT.mkdir(parents=True, exist_ok=True)
    cases = {name: fn().trace.as_json() for name, fn in HAND.items()}
    for workload, seed in SKETCHED.items():
        cases.update(sketch_cases(workload, seed))
    for name, data in cases.items():
        path = OUT / f"{name}.json"
        if path.exists() and not force:
            continue
        path.write_text(json.dumps(data, indent=1) + "\n")
        print("wrote", path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
