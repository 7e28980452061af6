"""Named GPU targets carry NVIDIA's published limits; the plain "cuda" target a generic one."""

import pytest

import ansor_lab as tvm
from ansor_lab.codegen.gpu_targets import profile_from_attributes
from ansor_lab.errors import TargetError

Target = tvm.target.Target


@pytest.mark.parametrize(
    "spec, arch, sms, per_sm_shared, threads_per_sm, bandwidth, peak, l2",
    [
        ("nvidia/nvidia-a100", "sm_80", 108, 164 * 1024, 2048, 2039.0, 19500.0, 40 << 20),
        ("nvidia/nvidia-h100", "sm_90", 132, 228 * 1024, 2048, 3350.0, 66900.0, 50 << 20),
        ("nvidia/geforce-rtx-4090", "sm_89", 128, 100 * 1024, 1536, 1008.0, 82580.0, 72 << 20),
        ("nvidia/tesla-t4", "sm_75", 40, 64 * 1024, 1024, 320.0, 8100.0, 4 << 20),
    ],
)
def test_named_gpu(spec, arch, sms, per_sm_shared, threads_per_sm, bandwidth, peak, l2):
    t = Target(spec)
    assert t.kind.name == "cuda" and t.keys == ("cuda", "gpu")
    assert (t.arch, t.sm_count, t.max_shared_memory_per_sm) == (arch, sms, per_sm_shared)
    assert (t.max_threads_per_sm, t.memory_bandwidth_gbs, t.peak_gflops_fp32) == (
        threads_per_sm,
        bandwidth,
        peak,
    )
    assert t.l2_bytes == l2
    assert (t.max_threads_per_block, t.max_shared_memory_per_block, t.warp_size) == (
        1024,
        49152,
        32,
    )
    assert (t.registers_per_sm, t.registers_per_block) == (65536, 65536)
    # the printed form names the model and reads back to the same target
    assert Target(str(t)) == t


def test_short_model_names_and_constructor():
    assert Target("cuda -model=a100") == Target("nvidia/nvidia-a100")
    assert tvm.target.cuda(model="t4") == Target("nvidia/tesla-t4")
    assert tvm.target.cuda(model="h100", arch="sm_90a").arch == "sm_90a"
    assert (
        str(Target("cuda -model=rtx4090"))
        == "cuda -model=rtx4090 -arch=sm_89 -max_num_threads=1024"
    )


def test_plain_cuda_is_generic_sm80():
    t = Target("cuda")
    assert (t.model, t.arch, t.sm_count, t.max_threads_per_block) == ("generic", "sm_80", 108, 1024)
    assert str(t) == "cuda -arch=sm_80 -max_num_threads=1024"
    assert Target("cuda -arch=sm_75").arch == "sm_75"


def test_explicit_options_override_the_profile():
    t = Target("nvidia/tesla-t4 -max_num_threads=256 -max_shared_memory_per_block=16384")
    assert (t.arch, t.max_threads_per_block, t.max_shared_memory_per_block) == ("sm_75", 256, 16384)
    assert Target(t, max_num_threads=128).max_threads_per_block == 128
    assert Target(t, max_num_threads=128).model == "t4"


def test_unknown_gpu_says_what_is_known():
    with pytest.raises(TargetError, match="known tags: .*nvidia/nvidia-a100"):
        Target("nvidia/quadro-x")
    with pytest.raises(TargetError, match="known models: .*a100"):
        Target("cuda -model=v999")
    with pytest.raises(TargetError, match="number >= 0"):
        Target("cuda -peak_gflops_fp32=fast")


def test_profile_from_pycuda_attributes():
    # the keys pycuda's get_attributes() returns are enums printing as device_attribute.NAME
    attrs = {
        "device_attribute.COMPUTE_CAPABILITY_MAJOR": 8,
        "device_attribute.COMPUTE_CAPABILITY_MINOR": 6,
        "device_attribute.MULTIPROCESSOR_COUNT": 84,
        "device_attribute.MAX_THREADS_PER_BLOCK": 1024,
        "device_attribute.MAX_SHARED_MEMORY_PER_BLOCK": 49152,
        "device_attribute.MAX_SHARED_MEMORY_PER_MULTIPROCESSOR": 102400,
        "device_attribute.MAX_REGISTERS_PER_MULTIPROCESSOR": 65536,
        "device_attribute.MAX_REGISTERS_PER_BLOCK": 65536,
        "device_attribute.WARP_SIZE": 32,
        "device_attribute.MAX_THREADS_PER_MULTIPROCESSOR": 1536,
        "device_attribute.CLOCK_RATE": 1695000,
        "device_attribute.MEMORY_CLOCK_RATE": 9751000,
        "device_attribute.GLOBAL_MEMORY_BUS_WIDTH": 384,
        "device_attribute.L2_CACHE_SIZE": 6 << 20,
    }
    p = profile_from_attributes("NVIDIA GeForce RTX 3090", attrs)
    assert (p.arch, p.sm_count, p.max_threads_per_sm, p.l2_bytes) == ("sm_86", 84, 1536, 6 << 20)
    assert p.memory_bandwidth_gbs == pytest.approx(936.096)  # 2 * 9751 MHz * 384 bit / 8
    assert p.peak_gflops_fp32 == pytest.approx(2 * 84 * 128 * 1.695)  # 35.6 TFLOPS


def test_target_from_a_real_device():
    from ansor_lab.runtime import cuda_support  # noqa: PLC0415

    if not cuda_support.cuda_available():
        pytest.skip(f"no usable CUDA GPU here ({cuda_support.cuda_unavailable_reason()})")
    t = tvm.target.target_from_device(0)
    assert t.kind.name == "cuda" and t.sm_count > 0 and t.arch.startswith("sm_")
    assert t.max_threads_per_block >= 256 and t.warp_size == 32
    from ansor_lab.runtime.cuda_run import device_arch  # noqa: PLC0415

    assert t.arch == device_arch(0)


def _h200_profile():
    attrs = {
        "COMPUTE_CAPABILITY_MAJOR": 9,
        "COMPUTE_CAPABILITY_MINOR": 0,
        "MULTIPROCESSOR_COUNT": 132,
        "MAX_THREADS_PER_BLOCK": 1024,
        "MAX_SHARED_MEMORY_PER_BLOCK": 49152,
        "MAX_SHARED_MEMORY_PER_MULTIPROCESSOR": 233472,
        "WARP_SIZE": 32,
        "MAX_THREADS_PER_MULTIPROCESSOR": 2048,
        "CLOCK_RATE": 1980000,
        "MEMORY_CLOCK_RATE": 2619000,
        "GLOBAL_MEMORY_BUS_WIDTH": 6144,
        "L2_CACHE_SIZE": 60 << 20,
    }
    return profile_from_attributes("NVIDIA H200", attrs)


def test_a_target_read_from_a_device_reads_back_from_its_text(monkeypatch):
    """Builders, runners and records rebuild a target from str(target): a GPU no profile
    names (read from the device) must come back with every parameter."""
    from ansor_lab.codegen import target as target_module  # noqa: PLC0415

    monkeypatch.setattr(target_module, "profile_from_device", lambda i: _h200_profile())
    t = tvm.target.target_from_device(0)
    text = str(t)
    assert text.startswith("cuda -model=NVIDIA-H200 -arch=sm_90 -max_num_threads=1024 ")
    assert "-sm_count=132" in text and "-l2_cache_size_bytes=62914560" in text
    back = Target(text)
    assert back == t and str(back) == text
    assert (back.sm_count, back.max_shared_memory_per_sm, back.model) == (132, 233472, t.model)


def test_a_named_gpu_with_a_changed_option_keeps_it_in_its_text():
    assert str(Target("nvidia/nvidia-a100")) == "cuda -model=a100 -arch=sm_80 -max_num_threads=1024"
    t = Target("cuda -model=a100 -sm_count=20")
    assert "-sm_count=20" in str(t) and Target(str(t)) == t
    # an unknown model is refused unless the parameters are written out (arch at least)
    with pytest.raises(TargetError, match="known models"):
        Target("cuda -model=h200")
    assert Target("cuda -model=h200 -arch=sm_90").model == "h200"
    spaced = Target({"kind": "cuda", "model": "NVIDIA  H200 ", "arch": "sm_90"})
    assert spaced.model == "NVIDIA-H200" and Target(str(spaced)) == spaced
