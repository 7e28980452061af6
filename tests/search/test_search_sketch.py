"""Sketch generation: which structures each rule produces on small DAGs."""

from __future__ import annotations

import re

import pytest
from search_helpers import WORKLOADS, check_numeric
from workloads import (
    conv2d_bias_relu,
    elementwise,
    fast_policy,
    make_task,
    matmul,
    matmul_relu,
    row_sum,
    scaled_matmul,
    softmax,
)

import ansor_lab as tvm
from ansor_lab import auto_scheduler, te, topi
from ansor_lab.schedule.inlined_reads import effective_reads
from ansor_lab.schedule.state import After, At
from ansor_lab.search import sketch as S


def sketches_of(tensors, rules=None, target=None):
    task = make_task(tensors) if target is None else make_task(tensors, target)
    return S.generate_sketches(
        lambda: task.make_schedule(seed=0),
        rules=rules,
        annotate=lambda sch: S.annotate_sampling(sch, task.hardware_params.num_cores),
    )


def described(sketches) -> list[str]:
    return [s.describe() for s in sketches]


def rule(name: str) -> S.SketchRule:
    return next(r for r in S.RULES if r.name == name)


# -- the full rule set ----------------------------------------------------------------


def test_matmul_gets_tile_and_cache_write_tile():
    assert described(sketches_of(matmul())) == ["C: tile", "C: cache_write+tile"]


def test_long_row_matmul_also_gets_packed_variants():
    # B's rows are 256 floats = 1 KiB: each tiling alternative gets a "+pack(B)" twin
    assert described(sketches_of(matmul(256))) == [
        "C: tile",
        "C: cache_write+tile",
        "C: tile+pack(B)",
        "C: cache_write+tile+pack(B)",
    ]
    # 128 floats = 512 B rows: a tile of B is read near-contiguously, no packing
    assert described(sketches_of(matmul(128))) == ["C: tile", "C: cache_write+tile"]


def test_packing_tiles_j_outermost_and_copies_each_panel_of_b_once():
    args = matmul(256)
    sk = next(s for s in sketches_of(args) if s.describe() == "C: cache_write+tile+pack(B)")
    sch = make_task(args).make_schedule()
    sch.replay(sk.trace)
    c = sch.state.stage("C")
    # j's two outer levels go outside i's: all row tiles reuse one panel of B
    assert c.leaves[:4] == ["j_0", "j_1", "i_0", "i_1"]
    packed = sch.state.stage("B_global")
    assert packed.op.tag == "cache"
    assert packed.attach == At("C", "j_1")
    assert {p.op.name for p in sch.state.producers("C")} == {"A", "B_global"}
    # the register tile's write-back still follows the outer tile (now ending with i_1)
    assert sch.state.stage("C_local").attach == After("C", "i_1")
    # without packing the order is Ansor's: i_0 j_0 i_1 j_1
    plain = next(s for s in sketches_of(args) if s.describe() == "C: cache_write+tile")
    sch = make_task(args).make_schedule()
    sch.replay(plain.trace)
    assert sch.state.stage("C").leaves[:4] == ["i_0", "j_0", "i_1", "j_1"]


@pytest.mark.parametrize("target", ["llvm -num-cores=1", "llvm -num-cores=2"])
def test_packed_programs_compute_the_matmul(target):
    # on two cores the fused j_0 j_1 loop is parallel: each thread packs its own panel
    args = matmul(256)
    policy = fast_policy(make_task(args, target), seed=5)
    packed = [i for i, s in enumerate(policy.sketches) if "pack(B)" in s.describe()]
    assert len(packed) == 2
    for k in packed:
        for seed in range(2):
            drawn = policy.space.sample(sketch=k)
            assert drawn is not None
            assert drawn[0].sketch == k
            check_numeric(drawn[1], args, seed=seed)


def batch_matmul_long_rows() -> list:
    A = te.placeholder((2, 16, 64), name="A")
    B = te.placeholder((2, 64, 256), name="B")
    k = te.reduce_axis((0, 64), name="k")
    C = te.compute((2, 16, 256), lambda b, i, j: te.sum(A[b, i, k] * B[b, k, j], axis=k), name="C")
    return [A, B, C]


def conv2d_nhwc_wide() -> list:
    data = te.placeholder((1, 6, 6, 16), name="data")
    kernel = te.placeholder((3, 3, 16, 256), name="kernel")  # HWIO: rows of 1 KiB along O
    return [data, kernel, topi.nn.conv2d_nhwc(data, kernel, 1, 1, 1, out_dtype="float32")]


def test_batch_matmul_packs_per_batch_and_column_panel():
    args = batch_matmul_long_rows()
    sk = next(s for s in sketches_of(args) if s.describe() == "C: tile+pack(B)")
    sch = make_task(args).make_schedule()
    sch.replay(sk.trace)
    # B[b, k, j] is indexed by b and j: both go outside i
    assert sch.state.stage("C").leaves[:6] == ["b_0", "j_0", "b_1", "j_1", "i_0", "i_1"]
    assert sch.state.stage("B_global").attach == At("C", "j_1")


@pytest.mark.parametrize(
    "workload, tensor", [(batch_matmul_long_rows, "B"), (conv2d_nhwc_wide, "kernel")]
)
def test_packed_programs_of_other_layouts_are_correct_in_parallel(workload, tensor):
    args = workload()
    policy = fast_policy(make_task(args, "llvm -num-cores=2"), seed=3)
    packed = [i for i, s in enumerate(policy.sketches) if f"pack({tensor})" in s.describe()]
    assert len(packed) == 2
    for k in packed:
        for seed in range(2):
            drawn = policy.space.sample(sketch=k)
            assert drawn is not None
            check_numeric(drawn[1], args, seed=seed)


def test_matmul_relu_gets_tile_with_fused_consumer():
    (sk,) = sketches_of(matmul_relu())
    assert sk.describe() == "C: tile+fuse(D)"
    assert sk.steps == (("C", "multi_level_tiling_with_fusion", "tile+fuse(D)"),)
    # D is computed right after C's second spatial tile level (i_0, j_0, i_1, j_1)
    sch = make_task(matmul_relu()).make_schedule()
    sch.replay(sk.trace)
    assert sch.state.stage("D").attach == After("C", "j_1")
    assert sch.state.stage("C").leaves[:4] == ["i_0", "j_0", "i_1", "j_1"]


def test_conv2d_leaves_padding_to_location_sampling_and_fuses_bias_relu():
    (sk,) = sketches_of(conv2d_bias_relu())
    # the padding has a branch: no rule inlines it (MetaSchedule's CPU AutoInline with
    # disallow_if_then_else); its place is a sampled decision instead
    assert sk.steps == (("conv", "multi_level_tiling_with_fusion", "tile+fuse(relu)"),)
    (loc,) = [i for i in sk.trace.insts if i.kind == "SampleComputeLocation"]
    assert loc.arg("block") is not None
    # 4 spatial loops split in 4, the channel reduction in 2; the 3x3 window is not
    # split (SMALL_REDUCTION): it runs whole in the inner reduction level
    tiles = [i for i in sk.trace.insts if i.kind == "SamplePerfectTile"]
    assert sorted(i.arg("n") for i in tiles) == [2, 4, 4, 4, 4]
    sch = make_task(conv2d_bias_relu()).make_schedule()
    sch.replay(sk.trace)
    # relu runs right after the second spatial tile level of conv (8 loops: b, o, y, x x 2)
    leaves = sch.state.stage("conv").leaves
    assert leaves[:8] == ["b_0", "o_0", "y_0", "x_0", "b_1", "o_1", "y_1", "x_1"]
    # ... then rc_0, the third spatial level, rc_1 and the window, the register tile
    assert leaves[8:] == [
        "rc_0",
        "b_2",
        "o_2",
        "y_2",
        "x_2",
        "rc_1",
        "ry",
        "rx",
        "b_3",
        "o_3",
        "y_3",
        "x_3",
    ]
    assert sch.state.stage("relu").attach == After("conv", "x_1")


def test_conv2d_padding_location_is_sampled_inline_root_and_in_tiles():
    args = conv2d_bias_relu()
    task = make_task(args)
    policy = fast_policy(task, seed=3)
    places = set()
    for k in range(60):
        drawn = policy.space.sample()
        if drawn is None:
            continue
        attach = type(drawn[1].state.stage("pad").attach).__name__
        if attach not in places:  # each kind of place runs correctly
            check_numeric(drawn[1], args, seed=k)
        places.add(attach)
    assert {"Inline", "Root", "At"} <= places, places


def test_softmax_like_gets_rfactor_variants_of_each_reduction():
    sketches = sketches_of(softmax(2, 32768))  # 128 KiB rows: fusing them is a choice
    names = described(sketches)
    assert "default loops" in names
    assert "softmax: fuse rows" in names  # max, exp-sum and normalize in one row loop
    for stage, k in (("rowmax", "k1"), ("rowsum", "k2")):
        assert f"{stage}: rfactor(outer)" in names
        assert f"{stage}: rfactor({k}, vector lanes)" in names
        # the vector rfactor replaces Ansor's scalar rfactor(inner)
        assert f"{stage}: rfactor(inner)" not in names
    # fused rows, and every combination: (skip, outer, vector) x (skip, outer, vector)
    assert len(names) == 10 == len(set(names))
    # the expensive exp is never inlined
    assert not any(b == "expv" for s in sketches for b, _, _ in s.steps)


def test_a_softmax_with_rows_in_cache_gets_only_the_fused_row_sketch():
    # max, exp-sum and normalize in one row loop read the row once; apart, three times,
    # each from beyond L2 (2 MiB); a problem that fits in L2 keeps the choice
    assert described(sketches_of(softmax(512, 1024))) == ["softmax: fuse rows"]
    assert len(sketches_of(softmax(64, 1024))) > 1


def test_row_sum_rfactor_sketches_compute_the_partial_sums_somewhere():
    sketches = sketches_of(row_sum())
    assert described(sketches) == [
        "default loops",
        "S: rfactor(outer)",
        "S: rfactor(k, vector lanes)",
    ]
    for sk in sketches[1:]:
        kinds = [i.kind for i in sk.trace.insts]
        assert "RFactor" in kinds
        assert "SampleComputeLocation" in kinds  # where S_rf lives is a decision


def test_elementwise_gets_the_default_sketch():
    (sk,) = sketches_of(elementwise())
    assert sk.describe() == "default loops"
    assert [i.kind for i in sk.trace.insts if i.is_sampling] == ["SampleCategorical"]


def test_print_sketch_shows_trace_with_sampling_instructions(capsys):
    policy = fast_policy(make_task(matmul()))
    sketches = policy.generate_sketches(print_for_debug=True)
    out = capsys.readouterr().out
    assert out.count("def apply_trace(sch):") == len(sketches) == 2
    assert "sketch 1: C: cache_write+tile" in out
    for needle in (
        "sample_perfect_tile(",
        "sample_categorical(",
        "decision=",
        'cache_write(block=b0, write_buffer_index=0, storage_scope="local")',
    ):
        assert needle in out
    assert "enter_postproc" not in out  # a sketch has its numbers open, no post-processing
    assert str(sketches[0]).startswith("sketch 0: C: tile\ndef apply_trace(sch):")


def test_multicore_target_samples_a_parallel_depth():
    (sk, _) = sketches_of(matmul(), target="llvm -num-cores=4")
    anns = [i for i in sk.trace.insts if i.kind == "Annotate"]
    assert [a.arg("ann_key") for a in anns] == ["ansor.unroll", "ansor.parallel"]
    (sk1, _) = sketches_of(matmul())
    assert [a.arg("ann_key") for a in sk1.trace.insts if a.kind == "Annotate"] == ["ansor.unroll"]


def _group_norm():
    x = te.placeholder((1, 64, 8, 8), name="x")
    g, b = te.placeholder((64,), name="g"), te.placeholder((64,), name="b")
    return [x, g, b, topi.nn.group_norm(x, g, b, 8, 1, [2, 3])]


def test_a_stage_sampled_to_the_root_runs_in_parallel():
    """A stage whose place is sampled has parallel and unroll decisions wherever the
    sketch put it: a sample that moves it to the root runs it on every core (a group
    norm's second pass, left at the root without them, ran serial on two cores)."""
    policy = fast_policy(make_task(_group_norm(), "llvm -num-cores=4"))
    space, moved = policy.space, 0
    for k in range(len(space.sketches)):
        cand, _ = space.sample(k)
        for p, inst in enumerate(space._kinds[k]):
            if inst.kind != "SampleComputeLocation":
                continue
            decisions = list(cand.decisions)
            decisions[p] = -1  # the root
            sch = space.try_schedule(type(cand)(k, tuple(decisions)))
            if sch is None:  # a later place refused this one: not the case under test
                continue
            script = sch.mod.script()
            root_nests = re.findall(r"^    for (.*)$", script, flags=re.M)
            assert all("T.parallel" in ln for ln in root_nests), script
            check_numeric(sch, sch.args)
            moved += 1
    assert moved >= 4


def test_sketches_are_deterministic():
    a = sketches_of(softmax())
    b = sketches_of(softmax())
    assert [s.trace.as_json() for s in a] == [s.trace.as_json() for s in b]


# -- each rule alone ------------------------------------------------------------------


def test_always_inline_alone_only_inlines():
    (sk,) = sketches_of(scaled_matmul(), rules=[rule("always_inline")])
    assert sk.steps == (("As", "always_inline", "inline"),)
    assert not any(i.kind == "Split" for i in sk.trace.insts)


def test_multi_level_tiling_alone_does_not_fuse():
    names = described(sketches_of(matmul_relu(), rules=[rule("multi_level_tiling")]))
    assert names == ["C: tile", "C: cache_write+tile"]


def test_tiling_with_fusion_alone_needs_a_fusible_consumer():
    only = [rule("multi_level_tiling_with_fusion")]
    assert described(sketches_of(matmul_relu(), rules=only)) == ["C: tile+fuse(D)"]
    assert described(sketches_of(matmul(), rules=only)) == ["default loops"]
    # the padding is a producer, not a consumer: conv still fuses its relu
    assert described(sketches_of(conv2d_bias_relu(), rules=only)) == ["conv: tile+fuse(relu)"]


def test_rfactor_alone():
    only = [rule("add_rfactor")]
    assert described(sketches_of(row_sum(), rules=only)) == [
        "default loops",
        "S: rfactor(inner)",
        "S: rfactor(outer)",
    ]
    # a big-spatial reduction (matmul 32x32) is not an rfactor candidate
    assert described(sketches_of(matmul(), rules=only)) == ["default loops"]
    # neither is a short reduction
    assert described(sketches_of(row_sum(4, 64), rules=only)) == ["default loops"]


def test_no_rules_gives_one_default_sketch():
    for name, wl in WORKLOADS.items():
        (sk,) = sketches_of(wl(), rules=[])
        assert sk.describe() == "default loops", name


# -- rule conditions ------------------------------------------------------------------


@pytest.mark.parametrize(
    "workload, stage, inline, tiling, fusible",
    [
        (matmul_relu, "C", False, True, "D"),
        (matmul_relu, "D", False, False, None),  # an output: never inlined
        (conv2d_bias_relu, "pad", False, False, None),  # a branch: location is sampled
        (scaled_matmul, "As", True, False, None),
        (conv2d_bias_relu, "conv", False, True, "relu"),
        (softmax, "expv", False, False, None),  # exp is expensive
        (softmax, "rowsum", False, False, None),  # its consumer reads it broadcast
        (row_sum, "S", False, False, None),  # one loop variable missing: no reuse
    ],
)
def test_rule_conditions(workload, stage, inline, tiling, fusible):
    sch = make_task(workload()).make_schedule()
    st = sch.state.stage(stage)
    assert S.is_strictly_inlineable(sch.state, st) is inline
    assert S.needs_multi_level_tiling(sch.state, st) is tiling
    c = S.fusible_consumer(sch.state, st)
    assert (c.name if c is not None else None) == fusible


def test_packable_read_is_the_long_row_input_walked_along_the_reduction():
    def packable(args, stage):
        sch = make_task(args).make_schedule()
        return S.packable_read(sch.state, sch.state.stage(stage))

    assert packable(matmul(256), "C") == "B"  # B[k, j]: rows of 1 KiB, k walks rows
    assert packable(matmul(32), "C") is None  # 128-byte rows
    # C[i, j] = sum_k A[i, k] * Bt[j, k]: the inner index is the reduction, already
    # contiguous along k
    A = te.placeholder((64, 512), name="A")
    Bt = te.placeholder((64, 512), name="Bt")
    r = te.reduce_axis((0, 512), name="k")
    C = te.compute((64, 64), lambda i, j: te.sum(A[i, r] * Bt[j, r], axis=r), name="C")
    assert packable([A, Bt, C], "C") is None
    # NCHW convolution with the padding inlined, so conv reads the 1200-byte rows of data
    # itself: data's inner index is x + s (not the bare axis x), the kernel's is the
    # reduction s; neither is a column walk
    args = conv2d_bias_relu(c=8, hw=300, f=8)
    sch = make_task(args).make_schedule()
    sch.compute_inline(sch.get_block("pad"))
    conv = sch.state.stage("conv")
    assert effective_reads(sch.state, conv, sch.state.stage("data"))  # data is seen
    assert S.packable_read(sch.state, sch.state.stage("conv")) is None


def test_relayout_read_is_a_weight_indexed_by_one_non_innermost_axis():
    def relayout(args, stage="conv"):
        sch = make_task(args).make_schedule()
        return S.relayout_read(sch.state, sch.state.stage(stage))

    # 7x7 output rows (7 of 8 lanes): vectorize the output channel o over kernel[o, ...]
    assert relayout(conv2d_bias_relu(c=8, hw=7, f=16)) == ("kernel", 0, 1)
    assert relayout(conv2d_bias_relu(c=8, hw=8, f=16)) is None  # rows fill the vectors
    assert relayout(conv2d_bias_relu(c=8, hw=7, f=12)) is None  # channels do not
    assert relayout(matmul(256), "C") is None  # j is innermost and 256 long
    # a 7x7 matmul's A[i, k] qualifies but for i's extent: 7 rows fill no vector either
    assert relayout(matmul(7), "C") is None
    # a depthwise convolution reads its data at the channel too: vectors of it would
    # gather, so no relayout
    data = te.placeholder((1, 16, 9, 9), name="data")
    w = te.placeholder((16, 1, 3, 3), name="w")
    dw = topi.nn.depthwise_conv2d_nchw(data, w, 1, 1, 1)
    sch = make_task([data, w, dw]).make_schedule()
    conv = [st for st in sch.state.compute_stages() if st.op.reduce_axis][0]
    assert S.relayout_read(sch.state, conv) is None
    # a stride-2 convolution's full rows are read two elements apart (x[..., 2 * xx +
    # rx]): vectors along xx gather, vectors of the output channels do not (the 7x7 stem
    # of a ResNet on 3 channels: 1066 -> 955 us, 0.92x -> 1.10x PyTorch)
    data = te.placeholder((1, 3, 32, 32), name="data")
    k = te.placeholder((16, 3, 3, 3), name="kernel")
    for stride, expected in ((2, ("kernel", 0, 1)), (1, None)):
        out = topi.nn.conv2d_nchw(data, k, stride, 1, 1)
        sch = make_task([data, k, out]).make_schedule()
        sch.compute_inline(sch.get_block("pad_temp"))
        assert S.relayout_read(sch.state, sch.state.stage(out.op.name)) == expected, stride


def test_transposed_read_is_an_input_whose_contiguous_index_is_the_reduction():
    def transposed(args, stage):
        sch = make_task(args).make_schedule()
        return S.transposed_read(sch.state, sch.state.stage(stage))

    q = te.placeholder((3, 32, 16), name="q")
    k = te.placeholder((3, 40, 16), name="k")
    bmm = topi.nn.batch_matmul(q, k)  # q @ k^T: k[b, j, r], j vectorized, r contiguous
    assert transposed([q, k, bmm], bmm.op.name) == ("k", 1)
    x = te.placeholder((16, 64), name="x")
    w = te.placeholder((48, 64), name="w")
    dense = topi.nn.dense(x, w)  # x @ w^T: w[j, r]
    assert transposed([x, w, dense], dense.op.name) == ("w", 0)
    assert transposed(matmul(64), "C") is None  # B[k, j]: j is contiguous already
    # batch 1: each weight element is used once, a copy would only add traffic
    x1 = te.placeholder((1, 64), name="x1")
    gemv = topi.nn.dense(x1, w)
    assert transposed([x1, w, gemv], gemv.op.name) is None
    assert transposed(conv2d_bias_relu(c=8, hw=8, f=16), "conv") is None


@pytest.mark.parametrize(
    "build",
    [
        lambda: (lambda q, k: [q, k, topi.nn.batch_matmul(q, k)])(
            te.placeholder((3, 24, 16), name="q"), te.placeholder((3, 40, 16), name="k")
        ),
        lambda: (lambda x, w: [x, w, topi.nn.dense(x, w)])(
            te.placeholder((24, 32), name="x"), te.placeholder((48, 32), name="w")
        ),
    ],
    ids=["batch_matmul", "dense"],
)
def test_transposed_operand_gets_a_packed_sketch_whose_programs_are_correct(build):
    args = build()
    names = described(sketches_of(args))
    tensor = args[1].op.name
    assert any(n.endswith(f"+pack({tensor}, transposed)") for n in names), names
    policy = fast_policy(make_task(args), seed=1)
    k = next(i for i, s in enumerate(policy.sketches) if "transposed" in s.describe())
    for seed in range(3):
        drawn = policy.space.sample(sketch=k)
        assert drawn is not None
        check_numeric(drawn[1], args, seed=seed)
        text = tvm.lower(drawn[1].mod).script()
        # the copy stores the vectorized axis last and the tile reads it there
        assert re.search(rf"{tensor}_global\[[^\]]*\] = {tensor}\[", text), text
        copy = drawn[1].state.stage(f"{tensor}_global")
        assert copy.layout is not None and copy.layout[-1] == len(args[1].shape) - 2


def test_short_row_conv_gets_a_sketch_vectorizing_channels_over_a_repacked_kernel():
    args = conv2d_bias_relu(c=8, hw=7, f=16)
    assert described(sketches_of(args)) == [
        "conv: tile+fuse(relu)",
        "conv: tile+fuse(relu)+pack(kernel, vectorize o)",
    ]
    sk = sketches_of(args)[1]
    sch = make_task(args).make_schedule()
    sch.replay(sk.trace)
    conv = sch.state.stage("conv")
    assert conv.leaves[-1] == "o_3"  # the vectorized loop is the channel's innermost
    assert conv.leaves[:2] == ["o_0", "o_1"]  # channel tiles outermost
    assert conv.layout == (0, 2, 3, 1)  # the tile is stored [b, y, x, o]
    copy = sch.state.stage("kernel_global")
    assert copy.attach == At("conv", "o_1") and copy.layout == (1, 2, 3, 0)
    assert copy.leaves[-1].startswith("ax0")  # copied in storage order: o last


@pytest.mark.parametrize("target", ["llvm -num-cores=1", "llvm -num-cores=2"])
def test_repacked_conv_programs_are_correct(target):
    args = conv2d_bias_relu(c=8, hw=7, f=16)
    policy = fast_policy(make_task(args, target), seed=2)
    k = next(i for i, s in enumerate(policy.sketches) if "vectorize o" in s.describe())
    for seed in range(3):
        drawn = policy.space.sample(sketch=k)
        assert drawn is not None
        check_numeric(drawn[1], args, seed=seed)
        text = tvm.lower(drawn[1].mod).script()
        # the kernel copy is channel-last, and the tile reads it with a channel loop last
        assert re.search(r"kernel_global\[ax1, ax2, ax3, ax0\w*\] = kernel\[", text), text
        assert re.search(r"\* kernel_global\[rc[^,]*, ry, rx, o_\d[^\]]*\]", text), text


def test_cache_write_tile_of_a_short_row_conv_output_is_repacked_too():
    # the conv is the output: its own layout is fixed, so only the cache-write
    # alternative (whose local tile is free) gets the relayout twin
    data = te.placeholder((1, 8, 7, 7), name="data")
    kernel = te.placeholder((16, 8, 3, 3), name="kernel")
    conv = topi.nn.conv2d_nchw(data, kernel, 1, 1, 1, out_dtype="float32")
    args = [data, kernel, conv]
    names = described(sketches_of(args))
    assert [n for n in names if "vectorize" in n] == [
        "conv2d_nchw: cache_write+tile+pack(kernel, vectorize ff)"
    ], names
    policy = fast_policy(make_task(args), seed=1)
    k = next(i for i, s in enumerate(policy.sketches) if "vectorize ff" in s.describe())
    drawn = policy.space.sample(sketch=k)
    assert drawn is not None
    check_numeric(drawn[1], args, seed=0)


def test_expensive_op_detection():
    sch = make_task(softmax()).make_schedule()
    assert S.has_expensive_op(sch.state.stage("expv"))
    assert not S.has_expensive_op(sch.state.stage("softmax"))


def test_policy_exposes_the_rules_under_tvm_names():
    assert [r.name for r in auto_scheduler.RULES] == [
        "always_inline",
        "fuse_rows",
        "vector_rfactor",
        "multi_level_tiling_with_fusion",
        "multi_level_tiling",
        "add_rfactor",
        "column_reduction",
        "window_reduction",
    ]


def test_thinned_keeps_an_evenly_spaced_deterministic_subset():
    items = list(range(100))
    assert S._thinned(items, 200) is items  # few enough: untouched
    kept = S._thinned(items, 5)
    assert kept == [0, 25, 50, 74, 99]  # first and last kept, evenly spaced (rounded)
    assert S._thinned(items, 5) == kept


def test_sketch_combinations_that_explode_are_thinned_per_stage():
    # five chained row sums, each with three sketch choices (rfactor into lanes two
    # ways, or plain): 3^5 = 243 combinations, enumerated in full before the cap
    x = te.placeholder((4, 256), name="x")
    y = x
    for _ in range(5):
        y = topi.add(x, topi.sum(y, axis=1, keepdims=True))
    task = auto_scheduler.SearchTask(
        compute_dag=auto_scheduler.ComputeDAG([x, y]), target="llvm -num-cores=1"
    )
    sketches = S.generate_sketches(task.make_schedule)
    keys = [s.steps for s in sketches]
    assert S.MAX_PREFIXES // 2 < len(keys) <= S.MAX_PREFIXES + 1
    assert len(set(keys)) == len(keys)
    # every row sum still meets each of its three choices among the sketches kept
    sums = {b for key in keys for b, _, _ in key if "sum" in b}
    assert len(sums) == 5
    for stage in sums:
        assert len({a for key in keys for b, _, a in key if b == stage}) == 3
    assert keys == [s.steps for s in S.generate_sketches(task.make_schedule)]  # replays
