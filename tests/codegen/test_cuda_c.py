"""CUDA C generation: the text (launch bounds, barriers, float4, helpers, types) and what
it computes, run on the CPU through g++ with a CUDA shim (real threads and barriers)."""

from __future__ import annotations

import functools
import math
import re

import numpy as np
import pytest
from cuda_programs import shared_rowsum_float4, shared_transpose
from cuda_shim import compile_many, run_on_cpu, shim_available
from cuda_workloads import ALL_WORKLOADS, WORKLOADS

import ansor_lab as tvm
from ansor_lab import te
from ansor_lab.codegen.cuda_c import generate, launch_plan
from ansor_lab.codegen.cuda_expr import C_TYPES, float_literal
from ansor_lab.codegen.kernel_form import split_kernels
from ansor_lab.dsl.reference import reference_outputs
from ansor_lab.errors import CodegenError, GPUScheduleError
from ansor_lab.ir import nodes as N
from ansor_lab.measure.workers import random_inputs

needs_gxx = pytest.mark.skipif(not shim_available(), reason="g++ (C++20) is not installed")


@functools.cache
def built(name: str):
    """(module, args) of a workload, built once per test session."""
    s, args = ALL_WORKLOADS[name]()
    return tvm.build(s, args, target="cuda"), args


@pytest.fixture(scope="module")
def on_cpu():
    """Every program of this file compiled for the CPU in one g++ run; then run_on_cpu."""
    mods = {name: built(name)[0] for name in ALL_WORKLOADS}
    mods.update({m.__name__: tvm.build(m(), target="cuda") for m in HAND_PROGRAMS})
    compile_many(mods)
    return run_on_cpu


HAND_PROGRAMS = (shared_transpose, shared_rowsum_float4)


def inputs_for(name: str, args) -> list[np.ndarray]:
    arrays = random_inputs([(t.name, list(t.shape), t.dtype) for t in args])
    if name == "int_index_math":
        arrays[0][...] = np.arange(-128, 128, dtype="int32")  # negative dividends
    if name == "mixed_dtypes":  # the whole int8 range, negative int64 dividends
        arrays[2][...] = np.arange(-128, 128)
        arrays[3][...] = np.arange(-128, 128).astype("int8")
    return arrays


def test_ten_workloads_at_least():
    assert len(ALL_WORKLOADS) >= 10


@pytest.mark.parametrize("name", sorted(ALL_WORKLOADS))
def test_kernel_signatures(name):
    mod, _ = built(name)
    src = mod.get_source("cuda")
    kernels = mod.kernel_program.kernels
    assert src.count('extern "C" __global__ void') == len(kernels)
    for k in kernels:
        params = ", ".join(
            f"{C_TYPES[b.dtype]}"
            f"* __restrict__ {b.name}{'_' if b.name in ('exp', 'max', 'min') else ''}"
            for b in k.params  # a name C or CUDA already uses takes a "_"
        )
        assert f"__launch_bounds__({k.threads_per_block}) {k.name}({params})" in src
    barriers = str(mod.func).count('T.tvm_storage_sync("shared")')
    assert src.count("__syncthreads();") == barriers  # one for each barrier of the IR
    if name in WORKLOADS:
        assert barriers == 0 and "__shared__" not in src  # no shared memory: no barrier


@needs_gxx
@pytest.mark.parametrize("name", sorted(ALL_WORKLOADS))
def test_generated_c_computes_the_reference(name, on_cpu):
    mod, args = built(name)
    arrays = inputs_for(name, args)
    want = reference_outputs(args, arrays)
    on_cpu(mod, arrays)
    for t, got, ref in zip(args, arrays, want):
        if t.op.__class__.__name__ == "PlaceholderOp":
            continue
        if got.dtype.kind == "f":
            np.testing.assert_allclose(got, ref, rtol=2e-3 if got.dtype == np.float16 else 1e-5,
                                       atol=1e-5)  # fmt: skip
        else:
            np.testing.assert_array_equal(got, ref)


def test_several_root_stages_are_several_kernels_with_temporaries():
    mod, _ = built("softmax")
    plan = mod.launch_plan
    assert [k.name for k in plan.launches] == [f"main_kernel{i}" for i in range(4)]
    assert [t[0] for t in plan.temporaries] == ["rowmax", "exps", "rowsum"]
    assert plan.temporaries[1] == ("exps", "float32", 32 * 64)
    # the host sequence heads the source, in launch order
    src = mod.get_source()
    assert "//   allocate global float32 exps[2048]" in src
    assert "//   launch main_kernel1<<<dim3(8, 1, 1), dim3(64, 1, 1)>>>(X, rowmax, exps)" in src
    assert plan.launches[3].args == ("softmax", "exps", "rowsum")  # params, then temporaries


def test_float4_where_contiguous_and_aligned():
    src = built("elementwise_chain")[0].get_source()
    assert src.count("float4 vec") == 2  # A and B loaded once each
    assert src.count("*(float4*)(relu + ") == 1
    assert "make_float4(" in src and "expf(vec0.x)" in src
    assert "#pragma unroll" not in src  # the vector loop is gone
    soft = built("softmax")[0].get_source()
    assert soft.count("*(float4*)") == 2 + 2  # X -> exps, exps -> softmax
    # the row sum is one value for the 4 lanes: the same text in each
    assert soft.count("/ rowsum[((((int)blockIdx.x) * 4) + ((((int)threadIdx.x) * 4) / 64))]") == 4


def test_unaligned_vector_loop_stays_scalar():
    n = 66  # rows of 66 floats: the 2-lane tail is contiguous but not 16-byte aligned
    A = te.placeholder((4, n), name="A")
    B = te.compute((4, n), lambda i, j: A[i, j] * 2.0, name="B")
    s = te.create_schedule(B.op)
    jo, ji = s[B].split(B.op.axis[1], factor=3)
    s[B].bind(B.op.axis[0], te.thread_axis("blockIdx.x"))
    s[B].bind(jo, te.thread_axis("threadIdx.x"))
    s[B].vectorize(ji)
    src = tvm.build(s, [A, B], target="cuda").get_source()
    assert "float4" not in src and "float2" not in src
    assert "#pragma unroll" in src


def test_unroll_pragmas():
    assert built("matmul")[0].get_source().count("#pragma unroll") == 1
    assert built("row_reduction")[0].get_source().count("#pragma unroll") == 1
    assert built("conv2d_nchw")[0].get_source().count("#pragma unroll") == 1


def test_integer_division_helpers_only_where_signs_matter():
    src = built("int_index_math")[0].get_source()
    assert "floordiv_<int>(A[" in src and "floormod_<int>(A[" in src
    assert "T floordiv_(T a, T b)" in src and "T floormod_(T a, T b)" in src
    assert "(A[i_fused] / 4)" in src.replace("((int)blockIdx.x) * 64) + ((int)threadIdx.x)", "")\
        or re.search(r"\(A\[[^\]]+\] / 4\)", src)  # fmt: skip
    # index arithmetic of non-negative loop indices stays plain / and %
    chain = built("max_pool")[0].get_source()
    assert "floordiv_" not in chain and " / " in chain and " % " in chain


def test_half_types_and_header():
    src = built("half_scale")[0].get_source()
    assert "#include <cuda_fp16.h>" in src
    assert "__half* __restrict__ A" in src
    assert "__float2half_rn(" in src and "__half2float(A[" in src


def test_mixed_dtypes_text():
    src = built("mixed_dtypes")[0].get_source()
    assert "floordiv_<long long>(I[" in src and "3LL" in src
    assert "floordiv_<signed char>(Q[" in src and "((signed char)(" in src  # int8 wraps
    assert "((signed char)max(-128, min(127, __float2int_rz(" in src  # saturating cast
    assert "__float2half_rn(fmax_nan_<float>(__half2float(" in src


def test_fast_math_switch():
    s, args = WORKLOADS["elementwise_chain"]()
    fast = tvm.build(s, args, target="cuda", fast_math=True).get_source()
    slow = built("elementwise_chain")[0].get_source()
    assert "__expf(" in fast and "__expf(" not in slow and "expf(" in slow
    assert "fast math" in fast.splitlines()[0]


def test_float_literals():
    assert float_literal(1.0, "float32") == "1.0f"
    assert float_literal(0.1, "float32") == "0.100000001f"
    assert float_literal(1e-5, "float32") == "9.99999975e-06f"
    assert float_literal(math.inf, "float32") == "__int_as_float(0x7f800000)"
    assert float_literal(-math.inf, "float32") == "__int_as_float(0xff800000)"
    assert float_literal(math.nan, "float32").startswith("__int_as_float(0x7fc")
    assert float_literal(2.5, "float64") == "2.5"
    assert float_literal(math.inf, "float64") == "__longlong_as_double(9218868437227405312LL)"
    assert float_literal(1.0, "float16") == "__float2half_rn(1.0f)"


# -- shared memory, barriers, guards ----------------------------------------------------


def test_tiled_matmul_shared_tiles_barriers_and_float4_fetch():
    src = built("matmul_shared")[0].get_source()
    assert "__shared__ __align__(16) float A_shared[256];" in src  # the block's 32 x 8 tile
    assert "__shared__ __align__(16) float B_shared[256];" in src
    assert "__align__(16) float C_local[16];" in src  # 4 x 4 per thread, in registers
    assert src.count("__syncthreads();") == 2
    body = src[src.index("for (int k_0 = 0; k_0 < 16; ++k_0) {") :]
    # a barrier before the tiles are overwritten and one before they are read
    first = body.index("__syncthreads")
    second = body.index("__syncthreads", first + 1)
    assert first < body.index('// stage "A_shared"')
    assert body.index("*(float4*)(B_shared + ") < second < body.index("#pragma unroll")
    assert src.count("float4 vec0 = *(float4*)(") == 2  # one float4 fetch per tile
    assert "*(float4*)(A_shared + " in src


def test_cross_thread_reductions_use_shared_trees():
    mod = built("softmax_cross_thread")[0]
    src = mod.get_source()
    assert len(mod.kernel_program.kernels) == 4
    assert src.count("__syncthreads();") == 10  # 1 + log2(16) per reduction
    assert src.count("__shared__ __align__(16) float") == 2
    assert [k.shared_bytes() for k in mod.kernel_program.kernels] == [64, 0, 64, 0]


# -- hand-made kernel programs ----------------------------------------------------------


def test_shared_tile_and_barrier_text():
    func = shared_transpose()
    src = generate(split_kernels(func), tvm.target.Target("cuda -arch=sm_80"))
    assert src.count("__syncthreads();") == 1
    assert "__shared__ __align__(16) float tile[272];" in src  # 16 x (16 + 1) padded
    assert "__launch_bounds__(256) transpose_kernel0" in src
    body = src[src.index("{", src.index("transpose_kernel0(")) :]
    # the barrier sits between the shared store and the shared read
    assert body.index("tile[(") < body.index("__syncthreads") < body.index("= tile[")
    assert "arch sm_80" in src.splitlines()[0]


def test_guard_for_loop_shorter_than_launch_and_float4_into_shared():
    src = generate(split_kernels(shared_rowsum_float4()))
    assert "if (((int)threadIdx.x) < 4) {" in src
    assert (
        "float4 vec0 = *(float4*)(A + ((((int)blockIdx.x) * 64) + (((int)threadIdx.x) * 4)));"
        in src
    )
    assert "*(float4*)(row + (((int)threadIdx.x) * 4)) = vec0;" in src
    assert "float acc[1];" in src and src.count("__syncthreads();") == 1


@needs_gxx
@pytest.mark.parametrize("make", HAND_PROGRAMS)
def test_shared_programs_compute_the_reference(make, on_cpu):
    func = make()
    mod = tvm.build(func, target="cuda")
    arrays = [np.random.default_rng(1).random(b.shape, dtype=np.float32) for b in func.params]
    a = arrays[0].copy()
    on_cpu(mod, arrays)
    want = a.T if func.name == "transpose" else a.reshape(8, 4, 16).sum(-1)
    np.testing.assert_allclose(arrays[1], want, rtol=1e-5)


def test_launch_plan_of_a_hand_program():
    plan = launch_plan(split_kernels(shared_transpose()))
    (k,) = plan.launches
    assert (k.grid, k.block, k.shared_bytes, k.args) == ((4, 4, 1), (16, 16, 1), 1088, ("A", "B"))
    assert "launch transpose_kernel0<<<dim3(4, 4, 1), dim3(16, 16, 1)>>>(A, B)" in plan.describe()


# -- errors ------------------------------------------------------------------------------


def test_unbound_stage_is_a_gpu_schedule_error():
    A = te.placeholder((8,), name="A")
    B = te.compute((8,), lambda i: A[i] + 1.0, name="B")
    s = te.create_schedule(B.op)
    with pytest.raises(GPUScheduleError, match="not bound to GPU threads"):
        tvm.build(s, [A, B], target="cuda")


def test_parallel_loop_in_a_kernel_is_refused():
    A = te.placeholder((8, 8), name="A")
    B = te.compute((8, 8), lambda i, j: A[i, j] + 1.0, name="B")
    s = te.create_schedule(B.op)
    s[B].bind(B.op.axis[0], te.thread_axis("threadIdx.x"))
    s[B].parallel(B.op.axis[1])
    with pytest.raises(CodegenError, match="bind it to blockIdx/threadIdx"):
        tvm.build(s, [A, B], target="cuda")


def test_generate_takes_a_kernel_program():
    with pytest.raises(CodegenError, match="split_kernels"):
        generate(shared_transpose())


def test_global_allocation_inside_a_kernel_is_refused():
    func = shared_transpose()
    tmp = N.Buffer("tmp", (4,), "float32", "global")
    inner = func.body.body  # the blockIdx.x loop
    bad = func.with_body(
        N.For(
            func.body.loop_var,
            func.body.min,
            func.body.extent,
            "thread_binding",
            N.Allocate(tmp, inner),
            func.body.thread_tag,
        )  # fmt: skip
    )
    with pytest.raises(CodegenError, match="global buffer 'tmp' is allocated inside a kernel"):
        generate(split_kernels(bad))


@needs_gxx
@pytest.mark.parametrize("name", sorted(ALL_WORKLOADS))
def test_emulator_and_generated_c_agree(name, on_cpu):
    """mod.emulate (the loop IR with CUDA semantics) and the CUDA C run on the CPU give
    the reference, and each other: the C says what the IR says."""
    mod, args = built(name)
    arrays = inputs_for(name, args)
    want = reference_outputs(args, arrays)
    emulated = [a.copy() for a in arrays]
    mod.emulate(*emulated)
    on_cpu(mod, arrays)
    out = len(args) - 1
    tol = 2e-3 if arrays[out].dtype == np.float16 else 1e-5
    np.testing.assert_allclose(emulated[out], want[out], rtol=tol, atol=1e-5)
    np.testing.assert_allclose(arrays[out], emulated[out], rtol=tol, atol=1e-5)
