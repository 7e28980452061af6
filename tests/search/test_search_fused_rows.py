"""Fused-row programs (issue 21, item 2): the sketch rules produce them for softmax, layer
norm and RMS norm (asserted on the trace steps), they compute the reference, the analytic
prior ranks them above the unfused ones, and a short seeded tune of a softmax measures and
keeps one."""

from __future__ import annotations

import numpy as np
from search_helpers import check_numeric
from workloads import FAST_PARAMS, fast_options, make_task, softmax

from ansor_lab import auto_scheduler, te, topi
from ansor_lab.codegen.horizontal_reduce import HORIZONTAL, REASSOCIATE, RECIPROCAL
from ansor_lab.search.sketch_reduction import REASSOCIATION


def policy_of(tensors, seed=0):
    return auto_scheduler.SketchPolicy(
        make_task(tensors), params=dict(FAST_PARAMS), seed=seed, verbose=0
    )


def fused_sketch(policy):
    return next(s for s in policy.sketches if "fuse rows" in s.describe())


def topi_layer_norm(rows=8, cols=128):
    x = te.placeholder((rows, cols), name="x")
    g, b = te.placeholder((cols,), name="g"), te.placeholder((cols,), name="b")
    return [x, g, b, topi.nn.layer_norm(x, g, b, axis=[-1])]


def rms_norm(rows=8, cols=256):
    x, g = te.placeholder((rows, cols), name="x"), te.placeholder((cols,), name="g")
    k = te.reduce_axis((0, cols), name="k")
    ss = te.compute((rows,), lambda i: te.sum(x[i, k] * x[i, k], axis=k), name="sumsq")
    out = te.compute(
        (rows, cols),
        lambda i, j: x[i, j] * te.rsqrt(ss[i] * (1.0 / cols) + 1e-6) * g[j],
        name="rms",
    )
    return [x, g, out]


def steps(trace, kind):
    return [i for i in trace.insts if i.kind == kind]


def annotations(trace):
    return [i.arg("ann_key") for i in steps(trace, "Annotate")]


def check_fused_rows(tensors, output, reductions, divides, held=()):
    """The fused-row sketch: every reduction rfactored onto vector lanes (stated), its
    partial results and horizontal step computed inside the output's row loop; sampled
    programs equal the reference."""
    policy = policy_of(tensors)
    sketch = fused_sketch(policy)
    trace = sketch.trace
    rf = steps(trace, "RFactor")
    assert len(rf) == len(reductions)
    keys = annotations(trace)
    assert keys.count(REASSOCIATION) == len(reductions)  # the float reassociation, stated
    assert keys.count(REASSOCIATE) == len(reductions)  # its loops, for the code generator
    assert keys.count(HORIZONTAL) == len(reductions)  # each horizontal step: a tree
    assert (RECIPROCAL in keys) == divides
    for _ in range(3):
        _, sch = policy.space.sample(sketch.index)
        check_numeric(sch, sch.args)
        for name in reductions:  # both the partial results and the horizontal step
            for stage in (f"{name}_rf", name, *held):
                chain = [s.name for s in sch.state.attach_chain(stage)]
                assert chain[-1] == output, f"{stage} is not inside {output}'s rows: {chain}"
        script = sch.mod.script()
        assert script.count("pragma_horizontal_reduce") == len(reductions)
    return policy


def test_softmax_fused_rows_max_exp_sum_and_normalize_in_one_row_loop():
    # the exponentials of one row are held in cache, between the sum and the output
    check_fused_rows(softmax(6, 128), "softmax", ["rowmax", "rowsum"], divides=True, held=("expv",))


def test_layer_norm_fused_rows_both_sums_in_the_row_loop():
    tensors = topi_layer_norm()
    out = tensors[-1].op.name
    # (x - mean) / sqrt(var + eps): divided by a per-row value, once per row
    check_fused_rows(tensors, out, ["T_layer_norm_sum", "T_layer_norm_varsum"], divides=True)


def test_rms_norm_fused_rows():
    check_fused_rows(rms_norm(), "rms", ["sumsq"], divides=False)


def test_the_prior_ranks_fused_rows_with_full_vectors_first():
    """The horizontal trees are cheap and an exp split into 2-lane vectors is slow: the
    analytic prior sees both, so the fused-row programs with whole vectors lead."""
    policy = policy_of(softmax(4, 32768), seed=3)  # rows too long for cache: unfused too
    best = {}
    narrow_exp, wide_exp = [], []
    for s in policy.sketches:
        for _ in range(12):
            r = policy.space.sample(s.index)
            if r is None:
                continue
            cand, sch = r
            policy._remember(cand, sch)
            score = policy._priors[cand.key]
            best[s.describe()] = max(best.get(s.describe(), 0.0), score)
            if "fuse rows" in s.describe():
                lanes = [
                    int(ln.split("T.vectorized(")[1].split(")")[0])
                    for ln in sch.mod.script().splitlines()
                    if "T.vectorized(" in ln and "expv[" in ln
                ]
                (narrow_exp if lanes and min(lanes) < 8 else wide_exp).append(score)
    fused = max(v for k, v in best.items() if "fuse rows" in k)
    assert fused == max(best.values())
    assert best["default loops"] < fused / 5
    if narrow_exp and wide_exp:
        assert max(narrow_exp) < max(wide_exp)


def test_a_short_seeded_tune_of_softmax_keeps_a_fused_row_program(tmp_path):
    tensors = softmax(512, 1024)  # 2 MiB: the passes of an unfused program miss L2
    task = make_task(tensors)
    log = str(tmp_path / "softmax.json")
    policy = auto_scheduler.SketchPolicy(task, params=dict(FAST_PARAMS), seed=0, verbose=0)
    result = task.tune(fast_options(log, trials=12, per_round=6), search_policy=policy)
    best_sketch = None
    best_cost = np.inf
    for inp, res in auto_scheduler.load_records(log):
        if res.error_no == 0 and np.median(res.costs) < best_cost:
            best_cost, best_sketch = np.median(res.costs), inp.sketch
    assert "fuse rows" in policy.sketches[best_sketch].describe()
    assert RECIPROCAL in str(result.best_trace) or "pragma_fp_reciprocal" in str(result.best_trace)
    sch = task.make_schedule()
    from ansor_lab.schedule.trace import Trace  # noqa: PLC0415 - this test's need

    Trace.from_json(result.best_trace).apply_to_schedule(sch)
    check_numeric(sch, list(task.args))


def test_features_see_the_horizontal_tree_and_the_streams_a_fusion_saves():
    from ansor_lab.search.features import FEATURE_NAMES  # noqa: PLC0415 - this test's need

    policy = policy_of(softmax(8, 32768))  # 1 MiB input, 128 KiB rows: unfused too
    fused = fused_sketch(policy).index
    apart = next(s.index for s in policy.sketches if s.describe() == "default loops")
    feats = {}
    for k in (fused, apart):
        cand, sch = policy.space.sample(k)
        feats[k] = dict(zip(FEATURE_NAMES, policy._remember(cand, sch)))
    assert feats[fused]["max.horizontal"] == 1.0 and feats[apart]["max.horizontal"] == 0.0
    # fused: the input read once and the output written once (1 MiB each), and the row of
    # exponentials (128 KiB: beyond L1); apart: more (the input read by two passes, the
    # exponentials written and read where the sampled compute locations leave them)
    assert feats[fused]["streamed_bytes"] == np.log2(1 + 2 * 2**20 + 2**17)
    assert feats[apart]["streamed_bytes"] > feats[fused]["streamed_bytes"] + 0.5
