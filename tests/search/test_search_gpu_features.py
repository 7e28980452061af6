"""The GPU terms of the cost model's features (and the CPU vector left as it was)."""

from __future__ import annotations

import math

import numpy as np
from gpu_search_helpers import gpu_task
from workloads import make_task, matmul

from ansor_lab import auto_scheduler, te, tir
from ansor_lab.codegen.kernel_form import split_kernels
from ansor_lab.measure.records import MeasureResult, save_records
from ansor_lab.schedule.lower import lower_state
from ansor_lab.search.features import FEATURE_NAMES
from ansor_lab.search.gpu_features import GPU_FEATURE_NAMES, cuda_features, gpu_features


def feature(vec, name):
    return vec[len(FEATURE_NAMES) + GPU_FEATURE_NAMES.index(name)]


def _copy(n, m, transposed: bool, threads: int):
    """out = in (or in^T), rows over blocks, columns over threads."""
    a = te.placeholder((n, m), name="a")
    if transposed:
        out = te.compute((m, n), lambda i, j: a[j, i], name="out")
    else:
        out = te.compute((n, m), lambda i, j: a[i, j], name="out")
    sch = tir.Schedule(te.create_prim_func([a, out]))
    i, j = sch.get_loops(sch.get_block("out"))
    sch.bind(i, "blockIdx.x")
    jo, ji = sch.split(j, [None, threads])
    sch.bind(ji, "threadIdx.x")
    return sch, [a, out]


def _vector(sch, args):
    task = make_task(args, "cuda")
    f, problems, _ = cuda_features(sch.state, args, task.hardware_params)
    assert problems == []
    return f


def test_cpu_features_are_unchanged_and_gpu_features_extend_them():
    cpu = auto_scheduler.SketchPolicy(make_task(matmul(32)), seed=0, verbose=0)
    cand = cpu.sample_initial_population(1)[0]
    assert len(cpu.features_of(cand)) == len(FEATURE_NAMES)
    gpu = auto_scheduler.SketchPolicy(gpu_task("matmul"), seed=0, verbose=0)
    cand = gpu.sample_initial_population(1)[0]
    assert len(gpu.features_of(cand)) == len(FEATURE_NAMES) + len(GPU_FEATURE_NAMES)


def test_launch_shape_and_coalescing_of_a_copy():
    sch, args = _copy(16, 256, False, 64)
    f = _vector(sch, args)
    assert feature(f, "n_kernels") == 1
    assert feature(f, "gpu.top.threads_per_block") == math.log2(65)
    assert feature(f, "gpu.top.blocks") == math.log2(17)
    assert feature(f, "gpu.top.warps_per_block") == math.log2(3)
    assert feature(f, "gpu.top.whole_warps") == 1.0
    assert feature(f, "gpu.top.coalesced_share") == 1.0  # thread t reads a[i, 64 j + t]
    assert feature(f, "gpu.top.mean_log_stride_tx") == 1.0  # log2(1 + 1)
    # each thread moves 256 * 16 / (64 * 16) = 4 floats in and 4 out: 16 bytes each way
    assert feature(f, "gpu.top.global_load_bytes_per_thread") == math.log2(17)
    assert feature(f, "gpu.top.global_store_bytes_per_thread") == math.log2(17)
    assert feature(f, "gpu.top.shared_bytes") == 0.0


def test_a_transposed_read_is_not_coalesced():
    sch, args = _copy(16, 256, True, 16)
    f = _vector(sch, args)
    # the store out[i, 16 j + t] is coalesced, the load a[16 j + t, i] strides by 256
    assert feature(f, "gpu.top.coalesced_share") == 0.5
    assert feature(f, "gpu.top.mean_log_stride_tx") == (1.0 + math.log2(257)) / 2


def test_tiled_matmul_features_read_its_kernel():
    policy = auto_scheduler.SketchPolicy(gpu_task("matmul"), seed=3, verbose=0)
    cand = policy.sample_initial_population(1)[0]
    sch = policy.space.schedule(cand)
    func = lower_state(sch.state, sch.args)
    program = split_kernels(func)
    (k,) = program.kernels
    g = gpu_features(func, program)
    names = list(GPU_FEATURE_NAMES)
    assert g[names.index("gpu.top.threads_per_block")] == math.log2(1 + k.threads_per_block)
    assert g[names.index("gpu.top.shared_bytes")] == math.log2(1 + k.shared_bytes())
    assert g[names.index("gpu.top.local_bytes_per_thread")] > 0  # the register tile
    st = sch.state.stage("C")
    vt = sch.get(sch.get_loops(sch.get_block("C"))[1]).extent
    assert str(st.annotations[st.leaves[1]]) == "vthread"
    assert g[names.index("gpu.top.vthreads")] == math.log2(1 + vt)
    unroll = st.pragmas.get(st.leaves[0], {}).get("pragma_auto_unroll_max_step", 0)
    assert g[names.index("gpu.top.auto_unroll")] == math.log2(1 + unroll)
    # one kernel: the work-weighted mean is that kernel's row
    width = (len(names) - 1) // 2
    np.testing.assert_array_equal(g[1 : 1 + width], g[1 + width :])


def test_a_cuda_log_teaches_the_model_and_resumes_with_gpu_features(tmp_path):
    task = gpu_task("matmul")
    params = {"population": 8, "generations": 1, "sample_init_min_population": 8}
    policy = auto_scheduler.SketchPolicy(task, seed=0, verbose=0, params=params)
    inputs = policy.next_batch(5)
    results = [MeasureResult([1e-3 * (k + 1)]) for k in range(len(inputs))]
    log = str(tmp_path / "gpu.json")
    save_records(log, inputs, results)
    model = auto_scheduler.RandomForestModel()
    assert model.update_from_file(log, task) == 5
    width = len(FEATURE_NAMES) + len(GPU_FEATURE_NAMES)
    assert [len(f) for f in model.features] == [width] * 5
    resumed = auto_scheduler.SketchPolicy(
        task, seed=1, verbose=0, init_search_callbacks=[auto_scheduler.PreloadMeasuredStates(log)]
    )
    assert len(resumed.measured) == 5 and resumed.best_cost == 1e-3
