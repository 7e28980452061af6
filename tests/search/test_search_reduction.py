"""The reduction rules (issue 21): partial results in vector lanes, rows fused with the
reductions that feed them; each sampled program is checked against the reference."""

from __future__ import annotations

from search_helpers import check_numeric
from workloads import FAST_PARAMS, make_task, matmul, row_sum, softmax

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
    assert lanes <= {8, 16, 32, 64} and len(lanes) >= 2  # the lane count is searched


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
    assert 'expv = T.alloc_buffer((1, 96), "float32")' in sch.mod.script()


def test_the_vector_rule_applies_to_row_reductions_and_gemv_not_to_matmul():
    def applies(tensors, block):
        sch = make_task(tensors).make_schedule()
        return vector_reduction(sch.state, sch.state.stage(block))

    assert applies(row_sum(4, 512), "S") == ("k", (8, 16, 32, 64))
    x, w = te.placeholder((1, 96), name="x"), te.placeholder((40, 96), name="w")
    gemv = topi.nn.dense(x, w)
    assert applies([x, w, gemv], gemv.op.name) == ("k", (8, 16, 32))
    assert applies(matmul(32), "C") is None  # B[k, j]: k is not the contiguous index
    xb = te.placeholder((16, 96), name="xb")
    dense = topi.nn.dense(xb, w)  # both inputs reused across outputs: tiling serves it
    assert applies([xb, w, dense], dense.op.name) is None
    assert applies(row_sum(4, 13), "S") is None  # no lane count divides 13
