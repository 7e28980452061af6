"""The reduction rules (issue 21): partial results in vector lanes, rows fused with the
reductions that feed them; each sampled program is checked against the reference."""

from __future__ import annotations

import numpy as np
from search_helpers import check_numeric
from workloads import FAST_PARAMS, make_task, matmul, row_sum, softmax

import ansor_lab as tvm
from ansor_lab import auto_scheduler, te, topi
from ansor_lab.search.sketch_reduction import REASSOCIATION, vector_reduction


def policy_of(tensors, seed=0):
    task = make_task(tensors)
    return auto_scheduler.SketchPolicy(task, params=dict(FAST_PARAMS), seed=seed, verbose=0)


def sketch_named(policy, needle):
    return next(s.index for s in policy.sketches if needle in s.describe())


def layer_norm(rows=6, cols=96):
    x = te.placeholder((rows, cols), name="x")
    k1 = te.reduce_axis((0, cols), name="k1")
    s1 = te.compute((rows,), lambda i: te.sum(x[i, k1], axis=k1), name="sum1")
    k2 = te.reduce_axis((0, cols), name="k2")
    s2 = te.compute((rows,), lambda i: te.sum(x[i, k2] * x[i, k2], axis=k2), name="sum2")
    rstd = te.compute(
        (rows,),
        lambda i: te.rsqrt(s2[i] / cols - s1[i] * s1[i] / (cols * cols) + 1e-5),
        name="rstd",
    )
    out = te.compute((rows, cols), lambda i, j: (x[i, j] - s1[i] / cols) * rstd[i], name="out")
    return [x, out]


def test_row_sum_partial_sums_live_in_vector_lanes_and_the_reassociation_is_stated():
    policy = policy_of(row_sum(4, 512))
    k = sketch_named(policy, "S: rfactor(k, vector lanes)")
    lanes = set()
    for _ in range(6):
        cand, sch = policy.space.sample(k)
        check_numeric(sch, sch.args)
        script = sch.mod.script()
        assert "T.vectorized(" in script and "S_rf" in script
        # the float reassociation is in the trace (and so in every record), never silent
        trace = str(sch.trace)
        assert REASSOCIATION in trace and "sum over k reassociated" in trace
        rf = next(i for i in sch.trace.insts if i.kind == "RFactor")
        lanes.add(sch.state.stage("S_rf").op.shape[-1])
        assert rf is not None
    assert lanes <= {16, 32, 64} and len(lanes) >= 2  # the lane count is searched


def test_layer_norm_rows_are_fused_with_both_sums():
    policy = policy_of(layer_norm())
    k = sketch_named(policy, "out: fuse rows")
    cand, sch = policy.space.sample(k)
    check_numeric(sch, sch.args)
    state = sch.state
    for name in ("sum1_rf", "sum1", "sum2_rf", "sum2", "rstd"):
        chain = [s.name for s in state.attach_chain(name)]
        assert chain[-1] == "out", f"{name} is not computed inside out's row loop: {chain}"
    script = sch.mod.script()
    assert script.count("T.vectorized(") >= 3  # both sums' lanes and the output row


def test_softmax_fused_rows_hold_the_exponentials_of_one_row():
    policy = policy_of(softmax(5, 96))
    k = sketch_named(policy, "softmax: fuse rows")
    _, sch = policy.space.sample(k)
    check_numeric(sch, sch.args)
    assert 'expv = T.alloc_buffer((1, 96), "float32")' in tvm.lower(sch.mod).script()


def test_the_vector_rule_applies_to_row_reductions_and_gemv_not_to_matmul():
    def applies(tensors, block):
        sch = make_task(tensors).make_schedule()
        return vector_reduction(sch.state, sch.state.stage(block))

    assert applies(row_sum(4, 512), "S") == (("k",), (16, 32, 64))
    assert applies(row_sum(4, 24), "S") == (("k",), (8,))  # 16 would leave one round
    # nothing of 16 or more divides 1000: the wide counts, with a masked last round
    assert applies(row_sum(4, 1000), "S") == (("k",), (16, 32, 64))
    x, w = te.placeholder((1, 96), name="x"), te.placeholder((40, 96), name="w")
    gemv = topi.nn.dense(x, w)
    assert applies([x, w, gemv], gemv.op.name) == (("k",), (16, 32))
    assert applies(matmul(32), "C") is None  # B[k, j]: k is not the contiguous index
    xb = te.placeholder((16, 96), name="xb")
    dense = topi.nn.dense(xb, w)  # both inputs reused across outputs: tiling serves it
    assert applies([xb, w, dense], dense.op.name) is None
    assert applies(row_sum(4, 13), "S") is None  # no lane count divides 13


def test_a_global_pool_window_is_fused_into_one_run_read_with_a_masked_tail():
    x = te.placeholder((1, 24, 7, 7), name="x")
    pooled = topi.nn.global_pool(x, "avg")
    sch = make_task([x, pooled]).make_schedule()
    # the 7x7 window is 49 contiguous floats: one run, split into 16 lanes (3 full rounds
    # and a guarded one, which loop partitioning narrows to the 1 lane left); 8 is
    # dropped where 16 fits
    assert vector_reduction(sch.state, sch.state.stage("adaptive_pool_sum")) == (
        ("rv0", "rv1"),
        (16,),
    )
    policy = policy_of([x, pooled])
    k = sketch_named(policy, "adaptive_pool_sum: rfactor(rv0*rv1, vector lanes)")
    for _ in range(4):
        _, sch = policy.space.sample(k)
        check_numeric(sch, sch.args)
        f = tvm.build(sch.mod, target="llvm")
        report = str(f.loop_report())
        # the window's offset c * 49 + (k // 7) * 7 + k % 7 is read as contiguous lanes
        assert "SIMD x16 [vector_loads=" in report, report
        assert "gathers" not in report and "masked" not in report, report


def test_a_strided_window_or_a_partial_row_is_not_fused_with_the_axis_inside_it():
    x = te.placeholder((2, 9, 40), name="x")
    rh, rw = te.reduce_axis((0, 3), name="rh"), te.reduce_axis((0, 40), name="rw")
    strided = te.compute(
        (3,), lambda i: te.sum(x[0, 3 * i + rh, rw], axis=[rh, rw]), name="strided"
    )
    sch = make_task([x, strided]).make_schedule()
    # rows 3i + rh are not one run with rw: only rw's 40, in 16 lanes and a masked tail
    assert vector_reduction(sch.state, sch.state.stage("strided")) == (("rw",), (16,))
    rh2, rw2 = te.reduce_axis((0, 9), name="rh2"), te.reduce_axis((0, 32), name="rw2")
    part = te.compute((2,), lambda i: te.sum(x[i, rh2, rw2], axis=[rh2, rw2]), name="part")
    sch = make_task([x, part]).make_schedule()
    # rw2 covers 32 of a row's 40: rh2 and rw2 are not one run either
    assert vector_reduction(sch.state, sch.state.stage("part")) == (("rw2",), (16,))
    rw3 = te.reduce_axis((0, 40), name="rw3")
    whole = te.compute((2,), lambda i: te.sum(x[i, rh2, rw3], axis=[rh2, rw3]), name="whole")
    sch = make_task([x, whole]).make_schedule()
    assert vector_reduction(sch.state, sch.state.stage("whole")) == (
        ("rh2", "rw3"),
        (16, 32, 64),  # 360 = 9 * 40: 8 divides, nothing wider does
    )


def test_a_group_norm_variance_reading_its_group_mean_still_gets_vector_lanes():
    x = te.placeholder((1, 16, 7, 8), name="x")
    g, b = te.placeholder((16,), name="g"), te.placeholder((16,), name="b")
    out = topi.nn.group_norm(x, g, b, 4, 1, [2, 3])
    sch = make_task([x, g, b, out]).make_schedule()
    # the variance reads the mean at (c * 4 + rc) // 4: by rc, not by the window's run
    for name in ("T_group_norm_sum", "T_group_norm_varsum"):
        assert vector_reduction(sch.state, sch.state.stage(name)) == (("k2", "k3"), (16,))
    policy = policy_of([x, g, b, out])
    k = sketch_named(policy, "T_group_norm_varsum: rfactor(k2*k3, vector lanes)")
    for _ in range(3):
        _, sch = policy.space.sample(k)
        check_numeric(sch, sch.args)


def test_rows_no_wide_lane_count_divides_are_exact_with_a_masked_tail():
    policy = policy_of(row_sum(3, 1000))
    k = sketch_named(policy, "S: rfactor(k, vector lanes)")
    lanes = set()
    for _ in range(6):
        _, sch = policy.space.sample(k)
        check_numeric(sch, sch.args)
        lanes.add(sch.state.stage("S_rf").op.shape[-1])
    assert lanes <= {16, 32, 64} and len(lanes) >= 2


def test_an_argmax_position_pass_is_fused_by_rows_with_the_row_maximum():
    x = te.placeholder((6, 96), name="x")
    out = topi.argmax(x, axis=1)
    policy = policy_of([x, out])
    names = [s.describe() for s in policy.sketches]
    # the fused sketch is added; the unfused ones the vector rule offers stay
    assert "T_argmax: fuse rows" in names
    assert "T_argmax: rfactor(k1, vector lanes)" in names
    k = sketch_named(policy, "T_argmax: fuse rows")
    for _ in range(3):
        _, sch = policy.space.sample(k)
        check_numeric(sch, sch.args)
        for name in ("T_argmax_max_rf", "T_argmax_max", "T_argmax_rf"):
            chain = [s.name for s in sch.state.attach_chain(name)]
            assert chain[-1] == "T_argmax", f"{name} is not in the row loop: {chain}"
    data = np.random.default_rng(0).standard_normal((6, 96)).astype("float32")
    data[2, 40] = np.nan  # the first NaN is the answer, as numpy's
    data[4, 10] = data[4, 70] = 9.0  # the first of two maxima
    got = np.zeros(6, "int32")
    tvm.build(sch.mod, target="llvm")(data, got)
    np.testing.assert_array_equal(got, np.argmax(data, axis=1))


def test_a_matmul_reading_a_row_statistic_is_tiled_not_fused_by_rows():
    x, w = te.placeholder((8, 32), name="x"), te.placeholder((16, 32), name="w")
    k = te.reduce_axis((0, 32), name="k")
    norm = te.compute((8,), lambda i: te.sum(x[i, k], axis=k), name="norm")
    scaled = te.compute((8, 32), lambda i, j: x[i, j] / norm[i], name="scaled")
    out = topi.nn.dense(scaled, w)
    names = [s.describe() for s in policy_of([x, w, out]).sketches]
    assert not any("fuse rows" in n for n in names), names


def test_column_sums_accumulate_a_vector_of_partial_sums_across_rows():
    A = te.placeholder((37, 96), name="A")
    S = topi.sum(A, axis=0)
    policy = policy_of([A, S])
    assert [s.describe() for s in policy.sketches] == [
        f"{S.op.name}: tile(SRS)",
        f"{S.op.name}: tile(RSS)",
    ]
    tiles = set()
    for _ in range(6):
        _, sch = policy.space.sample(0)
        check_numeric(sch, sch.args)
        loops = _for_lines(sch)
        # i0_0, (init), k0, then the contiguous tile of i0 innermost, inside the reduction
        assert loops[-2].startswith("for k0 in range(37)")
        assert loops[-1].startswith("for i0_1 in")
        tiles.add(loops[-1])
    assert any("T.vectorized" in t for t in tiles)
    for _ in range(4):  # R S S: the rows of A in memory order, a row of partial sums inside
        _, sch = policy.space.sample(1)
        check_numeric(sch, sch.args)
        loops = _for_lines(sch)
        assert loops[2].startswith("for k0 in")  # after the init's two loops
        assert loops[-1].startswith("for i0_1 in")


def test_column_sums_on_two_cores_give_each_thread_a_column_slice_read_row_by_row():
    A = te.placeholder((37, 96), name="A")
    S = topi.sum(A, axis=0)
    task = make_task([A, S], "llvm -num-cores=2")
    policy = auto_scheduler.SketchPolicy(task, params=dict(FAST_PARAMS), seed=0, verbose=0)
    names = [s.describe() for s in policy.sketches]
    assert names[-1] == f"{S.op.name}: tile(SRSS)", names
    k = len(names) - 1
    seen_parallel = False
    for _ in range(6):
        _, sch = policy.space.sample(k)
        check_numeric(sch, sch.args)
        loops = _for_lines(sch)
        update = loops[loops.index(next(ln for ln in loops if ln.startswith("for k0 in"))) :]
        # the column slice outside the rows, the column levels inside them (a level of
        # extent 1 leaves no loop)
        assert update[0].startswith("for k0 in"), loops
        assert 1 <= len(update) - 1 <= 2, loops
        assert all(ln.split()[1] in ("i0_1", "i0_2") for ln in update[1:]), loops
        if loops[0].startswith("for i0_0 in"):  # (a slice of extent 1 leaves no loop)
            seen_parallel |= "T.parallel" in loops[0]
    assert seen_parallel
    # one core: no thread slice
    assert "tile(SRSS)" not in [s.describe().split(": ")[1] for s in policy_of([A, S]).sketches]


def test_column_sums_on_several_cores_can_give_each_thread_a_block_of_rows():
    A = te.placeholder((96, 80), name="A")
    S = topi.sum(A, axis=0)
    for cores in (2, 3):
        task = make_task([A, S], f"llvm -num-cores={cores}")
        policy = auto_scheduler.SketchPolicy(task, params=dict(FAST_PARAMS), seed=0, verbose=0)
        needle = f"rfactor(k0, {cores} threads) + tile(RSS)"
        k = sketch_named(policy, needle)
        blocks, inner = set(), set()
        for _ in range(6):
            _, sch = policy.space.sample(k)
            check_numeric(sch, sch.args)
            trace = str(sch.trace)
            assert REASSOCIATION in trace and f"{cores} per-thread partial results" in trace
            loops = _for_lines(sch)
            # per-thread partial sums: the block of rows outermost and parallel, each
            # thread's 96 / cores rows read in order, a row's columns innermost
            assert loops[0].startswith(f"for k0_0 in T.parallel({cores}")
            rows = next(ln for ln in loops if ln.startswith("for k0_1 in"))
            assert f"range({96 // cores})" in rows or f"T.grid({96 // cores}" in rows, loops
            # the adding block: the cores' partial rows outside, the columns inside
            add = loops[loops.index(next(ln for ln in loops if "k0_0_v" in ln)) :]
            assert add[0].startswith(f"for k0_0_v in T.serial({cores}") or add[0].startswith(
                f"for k0_0_v in range({cores})"
            ), add
            blocks.add(sch.state.stage("T_sum_rf").op.shape)
            inner.add(loops[-1])
        assert blocks == {(cores, 80)}
        assert any("T.vectorized" in ln for ln in inner)
    # rows that do not divide among the cores: no such sketch
    B = te.placeholder((37, 80), name="B")
    task = make_task([B, topi.sum(B, axis=0)], "llvm -num-cores=2")
    names = [s.describe() for s in auto_scheduler.SketchPolicy(task, seed=0, verbose=0).sketches]
    assert not any("threads) + tile(RSS)" in n for n in names), names


def test_pooling_gets_a_sketch_with_the_window_outside_a_vectorized_row_tile():
    x = te.placeholder((1, 4, 20, 20), name="x")
    pool = topi.nn.pool2d(x, (3, 3), (2, 2), (1, 1), (1, 1, 1, 1), "max")
    policy = policy_of([x, pool])
    names = [s.describe() for s in policy.sketches]
    # the padding is inlined (no stage of it is tiled for reuse): partitioning takes its
    # guard out of the inner rows and columns
    assert names == ["pad_temp: inline", f"{pool.op.name}: tile(SRS); pad_temp: inline"], names
    vectorized = False
    for _ in range(6):
        _, sch = policy.space.sample(1)
        check_numeric(sch, sch.args)
        loops = _for_lines(sch)
        # the window's loops come before the output's inner tile, the innermost loop (the
        # row's inner tile, or the column's where the sampled row tile is 1 and not printed)
        assert loops[-1].split()[1] in ("i3_1", "i2_1"), loops
        window = [ln.split()[1] for ln in loops if ln.split()[1] in ("rv0", "rv1")]
        assert window == ["rv0", "rv1"], loops
        vectorized |= loops[-1].startswith("for i3_1 in T.vectorized")
    assert vectorized
    # a long reduction is no window
    assert "tile(SRS)" not in " ".join(s.describe() for s in policy_of(row_sum(4, 512)).sketches)


def test_sample_perfect_tile_with_one_level_below_its_extent_is_a_schedule_error():
    import pytest  # noqa: PLC0415 - one test's need

    from ansor_lab import tir  # noqa: PLC0415
    from ansor_lab.errors import ScheduleError  # noqa: PLC0415

    A = te.placeholder((1024,), name="A")
    B = te.compute((1024,), lambda i: A[i] * 2.0, name="B")
    sch = tir.Schedule(te.create_prim_func([A, B]))
    with pytest.raises(ScheduleError, match="use n >= 2 or a larger bound"):
        sch.sample_perfect_tile(sch.get_loops(sch.get_block("B"))[0], n=1, max_innermost_factor=64)


def test_the_analytic_prior_sees_partial_results_in_vector_lanes():
    policy = policy_of(row_sum(64, 768))
    best = {}
    for s in policy.sketches:
        scores = []
        for _ in range(8):
            r = policy.space.sample(s.index)
            if r is not None:
                policy._remember(*r)
                scores.append(policy._priors[r[0].key])
        best[s.describe()] = max(scores)
    # one scalar add chain: 1 lane of 16, a latency-bound chain; vector lanes and several
    # accumulators: an order of magnitude more of the peak
    assert best["S: rfactor(k, vector lanes)"] > 10 * best["default loops"]


def _for_lines(sch) -> list[str]:
    """The ``for`` lines of a schedule's lowered loop program, outer first."""
    lines = tvm.lower(sch.mod).script().splitlines()
    return [ln.strip() for ln in lines if ln.strip().startswith("for")]
