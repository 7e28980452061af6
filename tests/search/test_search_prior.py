"""The analytic register-tile prior: what it rewards and penalises, and when the policy
ranks by it (only while the cost model cannot rank)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from workloads import FAST_PARAMS, TARGET, matmul

import ansor_lab as tvm
from ansor_lab import auto_scheduler, te, tir
from ansor_lab.search import prior
from ansor_lab.search.cost_model import RandomForestModel, RandomModel
from ansor_lab.search.policy import SketchPolicy
from ansor_lab.search.prior import LATENCY_ACCUMULATORS, analytic_score
from ansor_lab.search.space import Candidate

N = 256


def _matmul_schedule(
    ti: int,
    tj: int,
    tk: int = 32,
    vectorize: bool = True,
    unroll_budget: int = 64,
    cache_local: bool = True,
) -> tir.Schedule:
    """C = A @ B with a (ti x tj) register tile and an innermost reduction loop of tk."""
    A, B, C = matmul(N)
    sch = tir.Schedule(te.create_prim_func([A, B, C]))
    blk = sch.get_block("C")
    i, j, k = sch.get_loops(blk)
    i0, i1 = sch.split(i, [None, ti])
    j0, j1 = sch.split(j, [None, tj])
    k0, k1 = sch.split(k, [None, tk])
    sch.reorder(i0, j0, k0, k1, i1, j1)
    if cache_local:
        sch.reverse_compute_at(sch.cache_write(blk, 0, "local"), j0)
    if vectorize:
        sch.vectorize(j1)
    sch.annotate(i0, "pragma_auto_unroll_max_step", unroll_budget)
    return sch


def _score(sch: tir.Schedule, vector_bytes: int = 64, cores: int = 1) -> float:
    return analytic_score(tvm.lower(sch.mod)["main"], vector_bytes, cores)


@pytest.fixture
def compute_only(monkeypatch):
    """The register-tile side of the prior alone (no memory streams): these tests pin its
    ratios on small elementwise programs whose time the streams would otherwise set."""
    monkeypatch.setattr(prior, "CACHE_TIERS", ())


def test_a_full_register_tile_scores_near_peak_and_a_scalar_loop_near_nothing():
    good = _score(_matmul_schedule(4, 64))  # 16 zmm accumulators, 32-step reduction
    naive = tir.Schedule(te.create_prim_func(matmul(N)))
    assert 0.7 < good <= 1.0
    assert _score(naive) < 0.02  # scalar, one accumulator, nothing unrolled


def test_lane_use_follows_the_vector_width():
    # a 16-lane vector loop fills AVX-512 but needs only half an AVX-512 register per row
    # when it is 8 lanes: same tile rows, half the lanes used
    full = _score(_matmul_schedule(8, 16))
    half = _score(_matmul_schedule(8, 8))
    # (up to the init and write-back stores, a few % of the work)
    assert full == pytest.approx(2 * half, rel=0.03)
    # on AVX2 (32-byte vectors) the 8-lane loop fills its registers
    assert _score(_matmul_schedule(8, 8), vector_bytes=32) > half


def test_too_few_or_too_many_accumulators_cost():
    mid = _score(_matmul_schedule(8, 32))  # 16 accumulators
    few = _score(_matmul_schedule(2, 16))  # 2: the multiply-add latency is exposed
    spill = _score(_matmul_schedule(16, 64, unroll_budget=512))  # 64: spills
    assert few < mid / 2
    assert spill < mid / 2


def _split_reduction_schedule(tk: int) -> tir.Schedule:
    """A 4 x 64 tile whose reduction is split around a spatial loop (k0 i_mid k1 i1 j1, the
    SSRSRS shape): the tile is stored and reloaded around every run of ``tk`` steps."""
    A, B, C = matmul(N)
    sch = tir.Schedule(te.create_prim_func([A, B, C]))
    blk = sch.get_block("C")
    i, j, k = sch.get_loops(blk)
    i0, i_mid, i1 = sch.split(i, [None, 4, 4])
    j0, j1 = sch.split(j, [None, 64])
    k0, k1 = sch.split(k, [None, tk])
    sch.reorder(i0, j0, k0, i_mid, k1, i1, j1)
    sch.vectorize(j1)
    sch.annotate(i0, "pragma_auto_unroll_max_step", 64)
    return sch


def test_a_short_reduction_loop_and_a_huge_unrolled_body_cost():
    long_k = _score(_split_reduction_schedule(32))
    short_k = _score(_split_reduction_schedule(2))
    assert short_k < 0.5 * long_k
    small_body = _score(_matmul_schedule(8, 32, tk=64, unroll_budget=16))
    huge_body = _score(_matmul_schedule(8, 32, tk=64, unroll_budget=512))
    assert huge_body < 0.5 * small_body


def test_a_run_of_reduction_loops_keeps_its_accumulators_in_registers():
    # k0 k1 directly around the tile: LLVM keeps the accumulators in registers across both
    # loops, so a 2-step k1 is no shorter a reduction than a 32-step one (measured on a
    # 256 matmul with a 4 x 64 tile: 140 GFLOPS at tk=2, 129 at tk=32, 133 at tk=256)
    short_k = _score(_matmul_schedule(4, 64, tk=2))
    long_k = _score(_matmul_schedule(4, 64, tk=32))
    assert short_k == pytest.approx(long_k, rel=0.02)
    assert short_k > 0.75


def test_short_reductions_inside_spatial_loops_overlap(monkeypatch):
    # one accumulator (a 16-lane row) over a 2-step reduction, inside a 16-row loop: the
    # rows are independent, and 2-step bodies are short enough for the core to run 8+
    # of them at once, which hides the multiply-add latency a lone accumulator exposes
    A, B, C = matmul(N)
    sch = tir.Schedule(te.create_prim_func([A, B, C]))
    i, j, k = sch.get_loops(sch.get_block("C"))
    i0, i1 = sch.split(i, [None, 16])
    j0, j1 = sch.split(j, [None, 16])
    k0, k1 = sch.split(k, [None, 2])
    sch.reorder(i0, j0, k0, i1, k1, j1)
    sch.vectorize(j1)
    sch.annotate(i0, "pragma_auto_unroll_max_step", 64)
    overlapped = _score(sch)
    monkeypatch.setattr(prior, "OOO_WINDOW", 0)  # no overlap: one chain in flight
    alone = _score(sch)
    # alone, the latency bounds it (1/8 of peak); overlapped, the ports do: 2 loads (a
    # broadcast, a vector) per multiply-add
    ports = min(1.0, prior.LOADS_PER_FMA / 2) / (1 + prior.LOAD_SHARE * 2)
    assert overlapped == pytest.approx(LATENCY_ACCUMULATORS * ports * alone, rel=0.05)
    assert overlapped > 1.5 * alone


def test_a_tile_left_as_loops_scores_lower_than_an_unrolled_one():
    unrolled = _score(_matmul_schedule(8, 32, unroll_budget=16))
    rolled = _score(_matmul_schedule(8, 32, unroll_budget=0))
    assert rolled == pytest.approx(unrolled / 2, rel=0.03)  # (init and write-back stores)


def test_vectorizing_a_strided_axis_scores_below_a_contiguous_one(compute_only):
    A = te.placeholder((N, N), name="A")
    B = te.compute((N, N), lambda i, j: A[j, i] + 1.0, name="B")  # transposed read
    C = te.compute((N, N), lambda i, j: A[i, j] + 1.0, name="C")
    scores = []
    for out in (B, C):
        sch = tir.Schedule(te.create_prim_func([A, out]))
        _, j = sch.get_loops(sch.get_block(out.op.name))
        _, j1 = sch.split(j, [None, 16])
        sch.vectorize(j1)
        scores.append(_score(sch))
    assert scores[0] == pytest.approx(scores[1] / 4)


def test_a_strided_store_scores_like_a_gather(compute_only):
    # B = A transposed, vectorized along B's rows: contiguous loads, scattered stores
    A = te.placeholder((N, N), name="A")
    B = te.compute((N, N), lambda i, j: A[j, i] + 1.0, name="B")
    C = te.compute((N, N), lambda i, j: A[i, j] + 1.0, name="C")
    scores = []
    for out, walk_rows in ((C, False), (B, True)):
        sch = tir.Schedule(te.create_prim_func([A, out]))
        i, j = sch.get_loops(sch.get_block(out.op.name))
        if walk_rows:
            sch.reorder(j, i)
            i, j = j, i
        _, v = sch.split(j, [None, 16])
        sch.vectorize(v)
        scores.append(_score(sch))
    assert scores[1] == pytest.approx(scores[0] / 4)


def test_a_producer_recomputed_inside_its_consumer_is_not_a_reduction(compute_only):
    # B is recomputed for every row block of C: the row loop is redundant work for B's
    # store, not a reduction whose "register tile" would be all of B (and spill)
    A = te.placeholder((64, 64), name="A")
    B = te.compute((64, 64), lambda i, j: A[i, j] * 2.0, name="B")
    C = te.compute((N, 64), lambda i, j: B[i % 64, j] + 1.0, name="C")
    sch = tir.Schedule(te.create_prim_func([A, C]))
    i, j = sch.get_loops(sch.get_block("C"))
    i0, _ = sch.split(i, [4, None])
    sch.compute_at(sch.get_block("B"), i0)
    for blk in ("B", "C"):
        inner = sch.get_loops(sch.get_block(blk))[-1]
        _, v = sch.split(inner, [None, 16])
        sch.vectorize(v)
    # every store is a contiguous full-width vector: nothing to lose but the lanes
    assert _score(sch) == pytest.approx(1.0)


def test_parallel_extent_that_does_not_divide_among_cores_costs(compute_only):
    def par(extent_i):
        sch = _matmul_schedule(4, 64)
        i0 = sch.get_loops(sch.get_block("C"))[0]
        sch.parallel(i0)
        assert int(sch.get(i0).extent) == extent_i
        return sch

    even = _score(par(N // 4), cores=2)
    sch3 = _matmul_schedule(4, 64)
    assert even == pytest.approx(_score(sch3), rel=1e-6)
    # 64 iterations on 3 cores: 22 rounds for 21.3 of work
    assert _score(par(N // 4), cores=3) == pytest.approx(even * 64 / 66, rel=1e-6)


def _task(n: int = 64):
    return auto_scheduler.SearchTask(func=matmul, args=(n,), target=TARGET)


def test_policy_ranks_by_the_prior_only_until_the_model_is_fitted():
    task = _task()
    pol = SketchPolicy(
        task, RandomForestModel(min_samples=4), params=FAST_PARAMS, seed=3, verbose=0
    )
    assert pol.uses_prior
    pop = pol.sample_initial_population(12)
    scores = pol.predict(pop)
    assert np.all((scores > 0) & (scores <= 1))
    assert len(set(np.round(scores, 6))) > 1  # the prior tells programs apart
    for c, s in zip(pop, scores):
        assert s == pytest.approx(pol._priors[c.key])
    # teach the forest costs that rank the programs the other way round
    pol.model.update([pol.features_of(c) for c in pop], [float(x) for x in scores])
    assert pol.model.ready and not pol.uses_prior
    assert not np.allclose(pol.predict(pop), scores)


def test_random_model_and_the_off_switch_keep_ansors_random_start():
    assert not SketchPolicy(_task(), RandomModel(), params=FAST_PARAMS, verbose=0).uses_prior
    off = {**FAST_PARAMS, "analytic_prior": 0}
    assert not SketchPolicy(_task(), params=off, verbose=0).uses_prior


def test_first_batch_leans_to_high_prior_programs():
    task = _task(128)
    pol = SketchPolicy(
        task, params={**FAST_PARAMS, "sample_init_min_population": 32}, seed=5, verbose=0
    )
    inputs = pol.next_batch(8)
    chosen = [pol._priors[Candidate(i.sketch, i.decisions).key] for i in inputs]
    population = list(pol._priors.values())
    # 6 of 8 are picked by the prior (2 at random, prior_random_ratio 0.25)
    assert sorted(chosen)[-6] >= np.median(population)
    assert max(chosen) == pytest.approx(max(population))


def test_a_fused_row_reads_a_large_input_once_and_scores_above_separate_passes():
    """Each root loop nest streams the large buffers it touches (the softmax's input, its
    exponentials) from beyond L2; computed inside the output's row loop, the statistics
    and the exponentials of a row reuse it from cache: one stream instead of four."""
    from workloads import softmax  # noqa: PLC0415 - this test's workload

    def lowered(fused: bool):
        A, out = softmax(512, 1024)  # 2 MiB input: larger than the L2 tier
        sch = tir.Schedule(te.create_prim_func([A, out]))
        for name in ("expv", "softmax"):
            _, j = sch.get_loops(sch.get_block(name))
            _, j1 = sch.split(j, [None, 16])
            sch.vectorize(j1)
        if fused:
            row = sch.get_loops(sch.get_block("softmax"))[0]
            for name in ("rowsum", "expv", "rowmax"):
                sch.compute_at(sch.get_block(name), row)
        return tvm.lower(sch.mod)["main"]

    def large_streams(func) -> int:
        walker = prior._PriorWalker(16, 32, 1)
        walker.visit(func.body)
        return len([b for _, b in walker.streams if b.nbytes > (1 << 20)])

    apart, fused = lowered(False), lowered(True)
    # apart: A read by two nests, expv written by one and read by two, the output: 6;
    # fused: A and the output
    assert large_streams(apart) == 6
    assert large_streams(fused) == 2
    assert analytic_score(fused) > analytic_score(apart)


def test_index_arithmetic_is_not_work():
    """A dilated convolution's ``y + 2 * ry`` is address computation: its multiply-add weighs
    two operations, as a plain one does. Counted as work, the index adds made the
    multiply-add weigh 18 copies, and a padded-input copy recomputed inside the register
    tile (a search's worst programs, 13 GFLOPS) ranked above the copy done once per row
    block (100 GFLOPS)."""
    from ansor_lab.ir.visitor import post_order_visit  # noqa: PLC0415 - this test's helper

    A = te.placeholder((N + 8,), name="A")
    plain = te.compute((N,), lambda i: A[i] * 2.0, name="plain")
    strided = te.compute((N,), lambda i: A[(i * 3 + 2) % N + 4] * 2.0, name="strided")
    for out in (plain, strided):
        stores: list = []
        func = tvm.lower(tir.Schedule(te.create_prim_func([A, out])).mod)["main"]
        post_order_visit(func.body, lambda n, found=stores: _keep_stores(n, found))
        assert [prior._flops(s) for s in stores] == [1.0]


def _keep_stores(node, found: list) -> None:
    if isinstance(node, tir.BufferStore):
        found.append(node)


def _copied_panel_schedule(at: str) -> tir.Schedule:
    """The 4 x 64 tile of ``_matmul_schedule`` with A's rows copied (``cache_read``) at
    loop ``at``: "i0" (once per row block), "j0" (again for every column block) or "k1"
    (inside the reduction, next to the multiply-adds)."""
    sch = _matmul_schedule(4, 64, tk=32, cache_local=False)
    blk = sch.get_block("C")
    copy = sch.cache_read(blk, 0, "global")
    i0, j0, k0, k1 = sch.get_loops(blk)[:4]
    sch.compute_at(copy, {"i0": i0, "j0": j0, "k1": k1}[at])
    return sch


def test_a_copy_is_time_not_work():
    # A's row panel copied once per row block, or again for each of the 4 column blocks:
    # the copies are not work, so the redundant ones can only lower the score (counted as
    # work at full speed, they raised it)
    once = _score(_copied_panel_schedule("i0"))
    again = _score(_copied_panel_schedule("j0"))
    # (scalar copies: 4 x 256 of them at 1/16 of a vector's speed per 4 x 64 x 256
    # multiply-adds, 3 more rounds: 0.94 -> 0.87)
    assert again < 0.95 * once


def test_a_stage_computed_inside_the_reduction_keeps_the_accumulators_in_memory():
    # the copy's stores between the multiply-adds: the accumulators are stored and loaded
    # around each (a padded input copied inside a convolution's tile ran at 0.13-0.45x)
    outside = _score(_copied_panel_schedule("j0"))
    inside = _score(_copied_panel_schedule("k1"))
    assert inside < 0.6 * outside


def test_a_tile_needing_more_loads_than_multiply_adds_costs():
    # two load ports beside two multiply-add units: 8 rows x 1 vector takes 9 loads (8
    # broadcasts, 1 vector) for 8 multiply-adds; 4 rows x 2 vectors 6 for 8
    narrow = _score(_matmul_schedule(8, 16))
    wide = _score(_matmul_schedule(4, 32))
    share = prior.LOAD_SHARE
    assert narrow == pytest.approx(
        wide * 8 / 9 * (1 + share * 6 / 8) / (1 + share * 9 / 8), rel=0.02
    )


def test_fewer_loads_per_multiply_add_rank_higher():
    """BERT's 128x768x768 matmul, one thread, CPU clock, one run: register tiles 8x48,
    4x64, 8x32, 4x32 ran at 179, 167, 165 and 153 GFLOPS (11, 8, 10 and 6 loads per 24,
    16, 16 and 8 multiply-adds); the prior ranks them in that order."""
    a, w = te.placeholder((128, 768), name="a"), te.placeholder((768, 768), name="w")
    k = te.reduce_axis((0, 768), name="k")
    c = te.compute((128, 768), lambda i, j: te.sum(a[i, k] * w[k, j], axis=k), name="c")

    def score(ti: int, tj: int) -> float:
        sch = tir.Schedule(te.create_prim_func([a, w, c]))
        i, j, kk = sch.get_loops(sch.get_block("c"))
        i0, i1 = sch.split(i, [None, ti])
        j0, j1 = sch.split(j, [None, tj])
        sch.reorder(j0, i0, kk, i1, j1)
        sch.vectorize(j1)
        sch.annotate(j0, "pragma_auto_unroll_max_step", 64)
        return _score(sch)

    scores = [score(8, 48), score(4, 64), score(8, 32), score(4, 32)]
    assert scores == sorted(scores, reverse=True)
    assert scores[-1] < 0.95 * scores[0]


def test_while_the_prior_ranks_each_sketch_breeds_an_equal_share():
    from ansor_lab.search.policy import _per_sketch  # noqa: PLC0415 - the rule's helper

    # two programs of sketch 0 weighing 1 each, one of sketch 1 weighing 8: each sketch
    # gets half of the parents
    assert _per_sketch(np.array([1.0, 1.0, 8.0]), [0, 0, 1]).tolist() == [0.5, 0.5, 1.0]
    task = _task(128)
    counts = {}
    for balance in (0, 1):
        params = {**FAST_PARAMS, "sample_init_min_population": 32, "prior_sketch_balance": balance}
        pol = SketchPolicy(task, params=params, seed=3, verbose=0)
        pol.evolutionary_search(pol.sample_initial_population(), 8)
        per = np.bincount([c.sketch for c in pol._last_ranked], minlength=len(pol.sketches))
        counts[balance] = per
    # balanced, the sketch the prior likes least still gets bred
    assert counts[1].min() > counts[0].min()  # (16 and 31 bred unbalanced, 21 and 27)
    assert counts[1].min() > 0


def _grouped_conv_tile(channels: int, rows: int, width: int = 16) -> tir.Schedule:
    """A grouped convolution (4 output channels per group) whose register tile holds
    ``channels`` output channels x ``rows`` rows x a whole row of ``width`` lanes."""
    from ansor_lab import topi  # noqa: PLC0415

    data = te.placeholder((1, 16, 16, width), name="data")
    kernel = te.placeholder((16, 4, 3, 3), name="kernel")
    out = topi.nn.group_conv2d_nchw(data, kernel, 1, 1, 1, 4)
    sch = tir.Schedule(te.create_prim_func([data, kernel, out]))
    _, ff, yy, xx, rc, ry, rx = sch.get_loops(sch.get_block(out.op.name))
    f0, f1 = sch.split(ff, [None, channels])
    y0, y1 = sch.split(yy, [None, rows])
    sch.reorder(f0, y0, rc, ry, rx, f1, y1, xx)
    sch.vectorize(xx)
    sch.annotate(f0, "pragma_auto_unroll_max_step", 64)
    return sch


def test_output_channels_of_one_group_share_their_input_loads(compute_only):
    """A grouped convolution reads input channel ``ff // 4 * 4 + rc``: 8 channels x 2 rows
    load 4 input vectors and 8 weights per step, 1 channel x 16 rows 16 vectors and 1
    weight. Counted once per channel (16 + 8), the wider tile ranked below the taller one,
    and the search kept one-channel tiles that ran up to 1.66x slower."""
    assert _score(_grouped_conv_tile(8, 2)) > 1.1 * _score(_grouped_conv_tile(1, 16))
    ff, rc = tir.Var("ff", "int32"), tir.Var("rc", "int32")
    channel = (ff // 4) * 4 + rc
    loops = [SimpleNamespace(var=ff, extent=8)]
    assert prior._distinct((channel,), loops) == 2
    assert prior._distinct((ff * 4 + rc,), loops) == 8  # linear: one element per point


def _depthwise(
    shape: tuple,
    rows: int,
    width: int,
    stride: int = 1,
    padded_at: str | None = "j0",
    unroll: int = 16,
    vector_bytes: int = 64,
    channels: int = 1,
) -> float:
    """The score of a 3x3 depthwise convolution over ``shape`` whose register tile is
    ``channels`` channels x ``rows`` rows x ``width`` lanes under its window, its padded
    input copied per tile (``padded_at="j0"``), per channel (``"c"``) or inlined (None)."""
    from ansor_lab import topi  # noqa: PLC0415

    data = te.placeholder(shape, name="data")
    kernel = te.placeholder((shape[1], 1, 3, 3), name="kernel")
    out = topi.nn.depthwise_conv2d_nchw(data, kernel, stride, 1, 1)
    sch = tir.Schedule(te.create_prim_func([data, kernel, out]))
    n, c, i, j, di, dj = sch.get_loops(sch.get_block(out.op.name))
    i0, i1 = sch.split(i, [None, rows])
    j0, j1 = sch.split(j, [None, width])
    c, c1 = sch.split(c, [None, channels])
    sch.reorder(n, c, i0, j0, di, dj, c1, i1, j1)
    pad = sch.get_block("PaddedInput")
    if padded_at is None:
        sch.compute_inline(pad)
    else:
        sch.compute_at(pad, {"j0": j0, "c": c}[padded_at])
    sch.vectorize(j1)
    sch.annotate(n, "pragma_auto_unroll_max_step", unroll)
    return _score(sch, vector_bytes)


def _depthwise_tile(rows: int, width: int) -> float:
    """``rows`` x ``width`` lanes under the window left to LLVM (budget 16)."""
    return _depthwise((1, 8, 28, 32), rows, width)


def test_a_sliding_window_keeps_its_rows_live(compute_only):
    """Unrolled, a 3x3 window over a 7-row x 2-vector tile loads 9 rows x 3 shifts x 2
    vectors once each and keeps them live beside its 14 accumulators: 68 vectors in 28
    free registers. Measured (one thread, 256 channels of 28x28): tiles of 4 x 14 lanes
    ran at 25 us, 7 x 14 at 34, 7 x 28 at 53-60; without the window the prior ranked
    them the other way round."""
    small = _depthwise_tile(4, 16)  # 4 accumulators + 6 x 3 rows: fits
    assert _depthwise_tile(7, 32) < 0.7 * small  # 14 + 54
    assert _depthwise_tile(14, 16) < 0.75 * small  # 14 + 48
    assert _depthwise_tile(7, 16) <= 1.01 * small  # 7 + 27: just over


def _strided_read(step: int) -> float:
    """An elementwise read of every ``step``-th element, vectorized 16 lanes wide."""
    A = te.placeholder((N * step,), name="A")
    B = te.compute((N,), lambda i: A[i * step] + 1.0, name="B")
    sch = tir.Schedule(te.create_prim_func([A, B]))
    (i,) = sch.get_loops(sch.get_block("B"))
    _, v = sch.split(i, [None, 16])
    sch.vectorize(v)
    return _score(sch)


def test_a_stride_two_read_is_a_span_and_a_shuffle_not_a_gather(compute_only):
    # codegen reads lanes 2-4 elements apart as one masked load of their span and a
    # shuffle (codegen.access.strided_load_ok); wider steps gather element by element
    contiguous = _strided_read(1)
    assert _strided_read(2) == pytest.approx(contiguous)
    assert _strided_read(8) == pytest.approx(contiguous / 4)


def _stride2_depthwise(width: int) -> float:
    """Stride 2 (padding inlined), 2 rows x ``width`` lanes along the strided columns."""
    return _depthwise((1, 8, 32, 64), 2, width, stride=2, padded_at=None, unroll=64)


def test_a_stride_two_convolution_ranks_full_vectors_first():
    """Measured (one thread, MobileNet's 96-channel 112x112 stride-2 depthwise layer):
    tiles of 2 x 8 lanes ran at 134 us, 4 x 2 lanes at 282 us; with its input counted as
    a gather (one load per lane), the prior ranked the 2-lane tiles first."""
    assert _stride2_depthwise(16) > 1.5 * _stride2_depthwise(2)
    assert _stride2_depthwise(8) > 1.5 * _stride2_depthwise(2)


def test_a_window_too_long_to_unroll_keeps_only_its_inner_steps_live(compute_only):
    """LLVM unrolls a short window loop only while the body stays small: 16 accumulators
    (4 channels x 2 rows x 2 vectors) under a 3x3 window make 144 multiply-adds, so only
    the 3-step inner loop becomes straight code and its 12 operand vectors fit beside the
    accumulators. Counted over the whole window (24 vectors, 40 in 28 registers), these
    tiles ranked 0.7x the 1-row tiles they ran 1.14x faster than (ResNeXt-like grouped
    layer, 128 channels of 28 x 28, one thread: 31.6 against 36.0 us)."""
    two_rows = _score(_grouped_conv_tile(4, 2, width=32))
    one_row = _score(_grouped_conv_tile(4, 1, width=32))
    assert two_rows > 1.05 * one_row  # (0.8x with the whole window counted)


def _depthwise_4x14(padded_per_tile: bool) -> float:
    """4 rows x 14 lanes over 28 x 28 channels, the padded input copied per tile (rows of
    14 + 2 = 16 floats, one cache line) or per channel (rows of 30 floats)."""
    return _depthwise((1, 8, 28, 28), 4, 14, padded_at="j0" if padded_per_tile else "c", unroll=64)


def test_a_load_across_a_cache_line_costs_two(compute_only):
    """Measured (one thread, 256 channels of 28 x 28): 22 us with the per-tile copy, whose
    shifted 14-lane loads each stay inside one 64-byte line, 41 us reading the padded
    channel, where most of them straddle two; the prior ranked them alike."""
    assert _depthwise_4x14(True) > 1.15 * _depthwise_4x14(False)


def _dw_tile(rows: int, width: int, vector_bytes: int) -> float:
    """``rows`` x ``width`` lanes over 28 x 28 channels, padded input copied per tile."""
    return _depthwise((1, 8, 28, 28), rows, width, unroll=64, vector_bytes=vector_bytes)


def test_odd_width_accumulators_spill_early(compute_only):
    """A 14-lane vector is no whole number of 16-byte registers (LLVM's <14 x float>):
    past half the free registers such accumulators spill lane by lane. Measured, one
    thread, 256 channels of 28 x 28: on AVX2 (12 free registers) the 7-row x 14-lane tile
    (14 accumulators) built 560 single-lane inserts and ran at 609 us, the 1-row x 28-lane
    tile at 121; on AVX-512 (28 free) 28 rows x 14 lanes ran at 77 us, 4 rows at 23-48.
    The prior ranked both slow tiles first."""
    assert _dw_tile(7, 14, 32) < 0.5 * _dw_tile(1, 28, 32)
    assert _dw_tile(28, 14, 64) < 0.5 * _dw_tile(4, 14, 64)
    # whole widths and a few odd accumulators keep their scores: 7 x 16 lanes on AVX2
    # (14 accumulators of whole vectors) pays only the plain spill, 7 x 14 on AVX-512
    # (7 accumulators) nothing
    before = prior.ODD_WIDTH_ROOM
    try:
        prior.ODD_WIDTH_ROOM = 1.0
        unchanged = [_dw_tile(7, 16, 32), _dw_tile(7, 14, 64), _dw_tile(1, 28, 32)]
    finally:
        prior.ODD_WIDTH_ROOM = before
    assert [_dw_tile(7, 16, 32), _dw_tile(7, 14, 64), _dw_tile(1, 28, 32)] == unchanged


def _dw_channels(channels: int, width: int, padded_at: str | None) -> float:
    """AVX2: ``channels`` x 1 row x ``width`` lanes over 28 x 28 channels."""
    return _depthwise(
        (1, 8, 28, 28),
        1,
        width,
        padded_at=padded_at,
        unroll=64,
        vector_bytes=32,
        channels=channels,
    )


def test_an_odd_width_row_loads_as_its_power_of_two_parts(compute_only):
    """On AVX2 a 14-lane row is 8 + 6 lanes and LLVM loads the 6 as 4 + 2 joined by an
    insert. Measured (one thread, 256 channels of 28 x 28, timed in turns): 2 channels x
    14 lanes ran at 189-246 us wherever the padding was computed, 1 channel x 28 lanes at
    109-131 us; counted as ceil(14 / 8) = 2 loads a row, the prior ranked 2 x 14 first."""
    for at in (None, "j0"):
        assert _dw_channels(2, 14, at) < 0.8 * _dw_channels(1, 28, at)
    walker = prior._PriorWalker(8, 16, 1)
    assert [walker._row_moves(n) for n in (8, 14, 16, 28)] == [1, 4, 2, 4]
    # AVX-512 loads a read-only buffer's 14 lanes as one masked instruction
    wide = prior._PriorWalker(16, 32, 1, masks=True)
    assert (wide._row_moves(14), wide._row_moves(14, untied=True)) == (5, 1)


def test_channels_sharing_a_vector_at_one_step_keep_nothing_live(compute_only):
    """The channels of one group read the same input vector at a window step and never
    again: nothing stays live between steps. Counted as a sliding window's rows, the
    2-channel x 28-lane tiles of a grouped convolution (128 channels of 28 x 28, AVX2)
    ranked 0.4x the 4 x 28 tiles (16 accumulators for 12 free registers); they ran at
    143-154 us, the 4 x 28 tiles at 204-347."""
    two = _score(_grouped_conv_tile(2, 1, width=28), vector_bytes=32)
    four = _score(_grouped_conv_tile(4, 1, width=28), vector_bytes=32)
    assert two > 1.2 * four
