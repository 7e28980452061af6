"""Ansor's GPU sketch rules, GPU annotation and post-processing, the validity filter.

Every workload of the issue's list gets sketches; a random initial population of each is
lowered and cut into kernels within the target's limits (and, where the GPU emulator is
in the checkout, computes what the numpy reference computes).
"""

from __future__ import annotations

import pytest
from gpu_search_helpers import GPU_WORKLOADS, check_gpu_program, policy_of
from workloads import FAST_PARAMS, make_task, matmul, row_sum

from ansor_lab import auto_scheduler, te
from ansor_lab.codegen.kernel_form import split_kernels
from ansor_lab.errors import ScheduleError
from ansor_lab.schedule.loop_kinds import ThreadBinding
from ansor_lab.schedule.lower import lower_state
from ansor_lab.schedule.state import At
from ansor_lab.search import sketch as S
from ansor_lab.search.gpu_check import program_problems, state_problems
from ansor_lab.search.gpu_sketch import (
    COOP_FETCH_KEY,
    GPU_UNROLL_CHOICES,
    annotate_gpu,
    gpu_rules,
    needs_cross_thread_reduction,
    thread_choices,
)
from ansor_lab.search.space import Candidate


def reduce_binding_supported() -> bool:
    """Whether the schedule accepts a reduction loop bound to threadIdx.x (the cross-thread
    reduction, whose lowering the GPU-lowering branch brings)."""
    sch = make_task(row_sum(4, 256), "cuda").make_schedule()
    (_, k) = sch.get_loops(sch.get_block("S"))
    try:
        sch.bind(k, "threadIdx.x")
    except ScheduleError:
        return False
    return True


# -- sketches ---------------------------------------------------------------------------


EXPECTED_SKETCHES = {
    "matmul": ["C: cache_write+tile"],
    "matmul_relu": ["C: cache_write+tile", "C: tile+fuse(D)"],
    "batch_matmul": ["T_batch_matmul_NT: cache_write+tile"],
    "conv2d": ["conv: cache_write+tile; pad: inline", "conv: tile+fuse(relu); pad: inline"],
    "depthwise": ["DepthwiseConv2d: cache_write+tile; PaddedInput: inline"],
    "pooling": ["pad_temp: inline"],
    "row_sum": ["S: cross_thread_reduction", "default loops"],
    "softmax": [
        "T_softmax_expsum: cross_thread_reduction; T_softmax_exp: inline; "
        "T_softmax_maxelem: cross_thread_reduction",
        "T_softmax_expsum: cross_thread_reduction; T_softmax_exp: inline",
        "T_softmax_exp: inline; T_softmax_maxelem: cross_thread_reduction",
        "T_softmax_exp: inline",
    ],
    "transpose": ["default loops"],
    "elementwise_chain": ["b: inline; a: inline"],
}


@pytest.mark.parametrize("name", sorted(GPU_WORKLOADS))
def test_every_workload_gets_gpu_sketches(name):
    policy = policy_of(name)
    described = [s.describe() for s in policy.sketches]
    assert described
    if name in EXPECTED_SKETCHES:
        want = EXPECTED_SKETCHES[name]
        if not reduce_binding_supported():  # the cross-thread sketches need the GPU lowering
            want = [d for d in want if "cross_thread" not in d]
        assert described == want
    for sk in policy.sketches:
        text = str(sk)
        assert text.startswith(f"sketch {sk.index}: ")
        assert 'thread_axis="blockIdx.x"' in text  # every sketch binds its kernels


def test_cross_thread_reduction_condition_is_tvms():
    task = make_task(row_sum(4, 1024), "cuda")
    sch = task.make_schedule()
    st = sch.state.stage("S")
    assert needs_cross_thread_reduction(sch.state, st, 1024, 32)  # 1024 > a warp
    short = make_task(row_sum(4, 16), "cuda").make_schedule()
    assert not needs_cross_thread_reduction(short.state, short.state.stage("S"), 1024, 32)
    # a matmul with many outputs tiles instead; with few outputs and a long k, both
    big = make_task(matmul(64), "cuda").make_schedule()
    assert not needs_cross_thread_reduction(big.state, big.state.stage("C"), 1024, 32)
    thin = make_task(matmul(4, 4, 512), "cuda").make_schedule()
    assert needs_cross_thread_reduction(thin.state, thin.state.stage("C"), 1024, 32)


@pytest.mark.skipif(
    not reduce_binding_supported(),
    reason="binding a reduction loop to threadIdx.x comes with the GPU lowering branch",
)
def test_cross_thread_reduction_sketch_binds_the_reduction():
    policy = policy_of("row_sum")
    described = [s.describe() for s in policy.sketches]
    assert "S: cross_thread_reduction" in described
    k = described.index("S: cross_thread_reduction")
    cand, sch = policy.space.sample(sketch=k)
    st = sch.state.stage("S")
    tags = {n: str(a) for n, a in st.annotations.items() if isinstance(a, ThreadBinding)}
    assert sorted(tags.values()) == ["blockIdx.x", "threadIdx.x"]
    (red,) = [n for n, t in tags.items() if t == "threadIdx.x"]
    assert st.iters[red].kind == "reduce"
    check_gpu_program(sch, policy.task.hardware_params)


def test_thread_choices_stop_at_the_extent_and_the_limit():
    assert thread_choices(4, 1024) == [32]
    assert thread_choices(100, 1024) == [32, 64, 128]
    assert thread_choices(10**6, 256) == [32, 64, 128, 256]


# -- the structure of a tiled GPU program -------------------------------------------------


def test_matmul_program_is_sssrrsrs_bound_with_shared_and_local_caches():
    policy = policy_of("matmul")
    cand, sch = policy.space.sample(sketch=0)
    st = sch.state.stage("C")
    tags = [str(st.annotations[n]) for n in st.leaves[:3]]
    assert tags == ["blockIdx.x", "vthread", "threadIdx.x"]
    # after the three bound levels: R0 R1 S3 R2 S4 -> k_0 k_1 i_3 j_3 k_2 i_4 j_4
    assert st.leaves[3:] == ["k_0", "k_1", "i_3", "j_3", "k_2", "i_4", "j_4"]
    assert st.scope == "local"  # the reduction accumulates in registers
    tx = st.leaves[2]
    assert sch.state.stage("C_local").attach.loop == tx  # written back by each thread
    for name in ("A_shared", "B_shared"):
        cache = sch.state.stage(name)
        assert cache.scope == "shared"
        assert cache.attach == At("C", "k_0")  # at the outer reduction tile
        assert COOP_FETCH_KEY in cache.pragmas[""]
        # cooperative fetch: the fill loops fused, split, the middle bound to threadIdx.x
        bound = [n for n, a in cache.annotations.items() if a == ThreadBinding("threadIdx.x")]
        assert len(bound) == 1
        ext = sch.get(sch.get_loops(sch.get_block("C"))[2]).extent
        fill = [sch.get(lp) for lp in sch.get_loops(sch.get_block(name))[-3:]]
        assert [lp.annotation for lp in fill if lp.annotation == "threadIdx.x"]
        assert next(lp.extent for lp in fill if lp.annotation == "threadIdx.x") == ext
    unroll = sch.state.stage("C").pragmas[st.leaves[0]]["pragma_auto_unroll_max_step"]
    assert unroll in GPU_UNROLL_CHOICES
    program = check_gpu_program(sch, policy.task.hardware_params)
    (kernel,) = program.kernels
    assert kernel.stage_names[0] == "C"
    assert {b.name for b in kernel.shared} == {"A_shared", "B_shared"}
    assert kernel.threads_per_block == ext


def test_fused_consumer_reads_the_registers():
    policy = policy_of("matmul_relu")
    k = [s.describe() for s in policy.sketches].index("C: tile+fuse(D)")
    cand, sch = policy.space.sample(sketch=k)
    d = sch.state.stage("D")
    c = sch.state.stage("C")
    assert d.attach.block == "C" and str(c.annotations[d.attach.loop]) == "threadIdx.x"
    assert "C_local" not in sch.state.stages or sch.state.stage("C_local").is_inlined
    (kernel,) = check_gpu_program(sch, policy.task.hardware_params).kernels
    assert kernel.stage_names[0] == "C" and "D" in kernel.stage_names


def test_cooperative_fetch_vectorizes_when_it_divides():
    policy = policy_of("matmul")
    vectorized = 0
    for _ in range(30):
        r = policy.space.sample(sketch=0)
        if r is None:
            continue
        _, sch = r
        for name in ("A_shared", "B_shared"):
            cache = sch.state.stage(name)
            want = int(cache.pragmas[""][COOP_FETCH_KEY])
            kinds = [str(a) for a in cache.annotations.values()]
            if "vectorize" in kinds:
                vectorized += 1
                (vec,) = [n for n, a in cache.annotations.items() if str(a) == "vectorize"]
                lanes = sch.get(sch.get_loops(sch.get_block(name))[-1]).extent
                assert cache.leaves[-1] == vec and 1 < lanes <= want
    assert vectorized > 0


def test_elementwise_rule_fuses_splits_and_binds():
    policy = policy_of("transpose")
    _, sch = policy.space.sample(sketch=0)
    (out,) = [st for st in sch.state.compute_stages() if not st.is_inlined]
    assert [str(out.annotations[n]) for n in out.leaves] == ["blockIdx.x", "threadIdx.x"]
    (kernel,) = check_gpu_program(sch, policy.task.hardware_params).kernels
    assert kernel.threads_per_block in thread_choices(48 * 40, 1024)
    assert kernel.threads_per_block * kernel.num_blocks >= 48 * 40


def test_special_compute_location_rule():
    a = te.placeholder((16, 16), name="a")
    w = te.compute((16, 16), lambda i, j: a[i, j] * 2.0, name="w")
    k = te.reduce_axis((0, 16), name="k")
    out = te.compute(
        (16, 16),
        lambda i, j: te.sum(w[i, k] * a[k, j], axis=k),
        name="out",
        attrs={"ansor.simplify_const_tensor_indices": 1},
    )
    task = make_task([a, out], "cuda")
    sch = task.make_schedule()
    rule = next(r for r in gpu_rules() if r.name == "special_compute_location")
    assert rule.condition(sch.state, sch.state.stage("w"))
    assert not rule.condition(sch.state, sch.state.stage("out"))
    ((alt, fn),) = rule.alternatives(sch.state, sch.state.stage("w"))
    fn(sch, "w")
    assert sch.state.stage("w").attach == At("out", "j")  # the last outer spatial loop


# -- random annotation within the target's limits -------------------------------------------


@pytest.mark.parametrize("name", sorted(GPU_WORKLOADS))
def test_random_population_lowers_into_kernels(name):
    policy = policy_of(name)
    pop = policy.sample_initial_population(4)
    assert len(pop) == 4
    for cand in pop:
        check_gpu_program(policy.space.schedule(cand), policy.task.hardware_params)


def test_small_target_limits_are_kept_and_invalid_candidates_counted():
    policy = policy_of("matmul", "cuda -max_num_threads=64")
    hw = policy.task.hardware_params
    assert hw.max_threads_per_block == 64
    pop = policy.sample_initial_population(10)
    assert len(pop) == 10
    for cand in pop:
        sch = policy.space.schedule(cand)
        program = check_gpu_program(sch, hw, emulate=False, serial=False)
        assert all(k.threads_per_block <= 64 for k in program.kernels)
    # a uniform tile draw asks for more than 64 threads or 8 vthreads often: counted
    assert sum(policy.invalid_counts.values()) > 0
    assert set(policy.invalid_counts) <= {"threads per block", "virtual threads", "replay"}


def test_program_problems_names_each_limit():
    policy = policy_of("matmul")
    bad = None
    for _ in range(200):
        r = policy.space.sample(sketch=0)
        if r is None:
            continue
        func = lower_state(r[1].state, r[1].args)
        problems, _ = program_problems(func, policy.task.hardware_params)
        if problems:
            bad = problems
            break
    assert bad is not None and "virtual threads > 8" in bad[0]


def test_mutations_keep_programs_valid_or_drop_them():
    policy = policy_of("conv2d")
    hw = policy.task.hardware_params
    pop = policy.sample_initial_population(5)
    kinds = set()
    checked = 0
    for cand in pop:
        for _ in range(5):
            child = policy.space.mutate(cand)
            if child is None:
                continue
            changed = [i for i, (a, b) in enumerate(zip(cand.decisions, child.decisions)) if a != b]
            kinds |= {policy.space._kinds[cand.sketch][i].kind for i in changed}
            if policy.features_of(child) is None:
                continue  # invalid: dropped (counted), never returned by the search
            # every 4th child is run (serially and on the emulator), all are lowered
            run = checked % 4 == 0
            check_gpu_program(policy.space.schedule(child), hw, emulate=run, serial=run)
            checked += 1
    assert checked > 8
    assert kinds == {"SamplePerfectTile", "SampleCategorical"}


def test_search_returns_only_valid_programs():
    task = policy_of("batch_matmul").task
    policy = auto_scheduler.SketchPolicy(task, seed=0, verbose=0, params=FAST_PARAMS)
    pop = policy.sample_initial_population(8)
    best = policy.evolutionary_search(pop, 6)
    assert len(best) == 6
    for cand in best:
        assert isinstance(cand, Candidate)
        program = split_kernels(lower_state(policy.space.schedule(cand).state, policy.task.args))
        assert program_problems(program.func, policy.task.hardware_params)[0] == []


def test_next_batch_traces_replay_into_gpu_programs():
    policy = policy_of("elementwise_chain")
    inputs = policy.next_batch(4)
    assert len(inputs) == 4
    for inp in inputs:
        sch = policy.task.make_schedule()
        sch.replay(inp.trace)
        check_gpu_program(sch, policy.task.hardware_params)


def test_cpu_tasks_keep_the_cpu_rules():
    task = make_task(matmul(32))
    policy = auto_scheduler.SketchPolicy(task, seed=0, verbose=0)
    assert not policy.is_gpu
    assert [s.describe() for s in policy.sketches] == ["C: tile", "C: cache_write+tile"]
    assert all("bind" not in str(s.trace) for s in policy.sketches)
    assert annotate_gpu is not S.annotate_sampling


def test_state_check_agrees_with_the_lowered_program():
    # the cheap filter (read from the schedule state) finds what the lowered kernels show
    policy = policy_of("conv2d")
    hw = policy.task.hardware_params
    seen = {True: 0, False: 0}
    for _ in range(40):
        r = policy.space.sample()
        if r is None:
            continue
        func = lower_state(r[1].state, r[1].args)
        from_state = state_problems(r[1].state, hw)
        from_program, _ = program_problems(func, hw)
        assert bool(from_state) == bool(from_program), (from_state, from_program)
        seen[bool(from_state)] += 1
    assert seen[True] and seen[False]
