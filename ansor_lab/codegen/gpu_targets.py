"""Named NVIDIA GPUs: the hardware parameters of a CUDA target.

Numbers are NVIDIA's published ones (CUDA C Programming Guide, "Compute capabilities"
table, and each product's datasheet / whitepaper). ``max_shared_memory_per_block`` is the
static limit (48 KiB) a kernel gets without ``cudaFuncSetAttribute`` opt-in, as TVM's
target tags use: our generated kernels declare their shared buffers statically.

The plain ``Target("cuda")`` gets :data:`GENERIC`, a sm_80-like profile (A100's limits,
which every GPU since Volta meets for threads/shared/registers per block) so that
limits and estimates are meaningful without naming a GPU.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from ..errors import TargetError


@dataclass(frozen=True)
class GPUProfile:
    """The hardware parameters of one GPU model."""

    model: str
    arch: str
    sm_count: int
    max_threads_per_block: int
    max_shared_memory_per_block: int
    max_shared_memory_per_sm: int
    registers_per_sm: int
    registers_per_block: int
    warp_size: int
    max_threads_per_sm: int
    memory_bandwidth_gbs: float
    peak_gflops_fp32: float
    l2_bytes: int

    def as_options(self) -> dict:
        """The profile as target options (field name -> value)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


KIB = 1024
MIB = 1024 * 1024

#: A100 SXM4 80GB: 108 SMs, 164 KiB shared per SM, 2039 GB/s HBM2e, 19.5 TFLOPS FP32, 40 MiB L2
A100 = GPUProfile("a100", "sm_80", 108, 1024, 48 * KIB, 164 * KIB, 65536, 65536, 32, 2048,
                  2039.0, 19500.0, 40 * MIB)  # fmt: skip
#: H100 SXM5 80GB: 132 SMs, 228 KiB shared per SM, 3350 GB/s HBM3, 67 TFLOPS FP32, 50 MiB L2
H100 = GPUProfile("h100", "sm_90", 132, 1024, 48 * KIB, 228 * KIB, 65536, 65536, 32, 2048,
                  3350.0, 66900.0, 50 * MIB)  # fmt: skip
#: GeForce RTX 4090 (AD102): 128 SMs, 100 KiB shared per SM, 1536 threads per SM,
#: 1008 GB/s GDDR6X, 82.6 TFLOPS FP32, 72 MiB L2
RTX4090 = GPUProfile("rtx4090", "sm_89", 128, 1024, 48 * KIB, 100 * KIB, 65536, 65536, 32,
                     1536, 1008.0, 82580.0, 72 * MIB)  # fmt: skip
#: Tesla T4 (TU104): 40 SMs, 64 KiB shared per SM, 1024 threads per SM, 320 GB/s GDDR6,
#: 8.1 TFLOPS FP32, 4 MiB L2
T4 = GPUProfile("t4", "sm_75", 40, 1024, 48 * KIB, 64 * KIB, 65536, 65536, 32, 1024,
                320.0, 8100.0, 4 * MIB)  # fmt: skip
#: the plain "cuda" target: A100's numbers under the model name "generic"
GENERIC = GPUProfile("generic", "sm_80", 108, 1024, 48 * KIB, 164 * KIB, 65536, 65536, 32,
                     2048, 2039.0, 19500.0, 40 * MIB)  # fmt: skip

#: short model names (``-model=``) -> profile
MODELS = {"a100": A100, "h100": H100, "rtx4090": RTX4090, "4090": RTX4090, "t4": T4,
          "generic": GENERIC, "unknown": GENERIC}  # fmt: skip
#: TVM's target tags -> profile
TAGS = {
    "nvidia/nvidia-a100": A100,
    "nvidia/a100": A100,
    "nvidia/nvidia-h100": H100,
    "nvidia/h100": H100,
    "nvidia/geforce-rtx-4090": RTX4090,
    "nvidia/rtx4090": RTX4090,
    "nvidia/tesla-t4": T4,
    "nvidia/t4": T4,
}


def profile(model: str = "", tag: str = "") -> GPUProfile:
    """The profile of a ``-model=`` short name or a ``nvidia/...`` tag ("" = generic)."""
    if tag:
        key = tag.lower()
        if key not in TAGS:
            raise TargetError(
                f"unknown GPU tag {tag!r}; known tags: {', '.join(sorted(TAGS))} "
                "(or write 'cuda -arch=sm_XY' with the limits as options)"
            )
        return TAGS[key]
    key = model.lower().replace("nvidia-", "").replace("geforce-", "").replace("rtx-", "rtx")
    key = key.replace("tesla-", "")
    if not key:
        return GENERIC
    if key not in MODELS:
        raise TargetError(
            f"unknown GPU model {model!r}; known models: {', '.join(sorted(MODELS))} "
            "(or write 'cuda -arch=sm_XY' and give the limits as options)"
        )
    return MODELS[key]


def profile_from_device(device_id: int = 0) -> GPUProfile:
    """The profile of CUDA device ``device_id`` as the driver reports it (pycuda or
    cuda-python); raises TargetError without one."""
    from .cuda_driver import driver  # noqa: PLC0415 - optional, only with a GPU

    try:
        drv = driver()
        return profile_from_attributes(drv.device_name(device_id), drv.attributes(device_id))
    except Exception as exc:  # no binding, no driver, no such device  # noqa: BLE001
        raise TargetError(
            f"reading a target from CUDA device {device_id} needs pycuda or cuda-python and "
            f"an NVIDIA GPU ({exc}); use a named target such as Target('nvidia/nvidia-a100') "
            "instead"
        ) from exc


def profile_from_attributes(name: str, attrs: dict) -> GPUProfile:
    """A profile from device attributes: pycuda's ``get_attributes()`` (enum keys) or
    names as in ``CU_DEVICE_ATTRIBUTE_<NAME>``."""
    by_name = {str(k).rsplit(".", 1)[-1].upper(): v for k, v in attrs.items()}

    def get(key: str, default: int = 0) -> int:
        return int(by_name.get(key, default))

    major, minor = get("COMPUTE_CAPABILITY_MAJOR", 8), get("COMPUTE_CAPABILITY_MINOR", 0)
    sms = get("MULTIPROCESSOR_COUNT", 1)
    clock_khz = get("CLOCK_RATE")
    mem_clock_khz, bus_bits = get("MEMORY_CLOCK_RATE"), get("GLOBAL_MEMORY_BUS_WIDTH")
    known = _closest_known(name)
    # DDR: two transfers per memory clock
    bandwidth = 2.0 * mem_clock_khz * 1e3 * bus_bits / 8 / 1e9 if mem_clock_khz else 0.0
    # FP32 lanes per SM are not an attribute: 64 on sm_80/sm_75, 128 on sm_86+/sm_90
    lanes = 64 if (major, minor) in ((8, 0), (7, 0), (7, 5)) else 128
    peak = 2.0 * sms * lanes * clock_khz * 1e3 / 1e9 if clock_khz else 0.0
    return GPUProfile(
        model=name,
        arch=f"sm_{major}{minor}",
        sm_count=sms,
        max_threads_per_block=get("MAX_THREADS_PER_BLOCK", 1024),
        max_shared_memory_per_block=get("MAX_SHARED_MEMORY_PER_BLOCK", 48 * KIB),
        max_shared_memory_per_sm=get("MAX_SHARED_MEMORY_PER_MULTIPROCESSOR", 48 * KIB),
        registers_per_sm=get("MAX_REGISTERS_PER_MULTIPROCESSOR", 65536),
        registers_per_block=get("MAX_REGISTERS_PER_BLOCK", 65536),
        warp_size=get("WARP_SIZE", 32),
        max_threads_per_sm=get("MAX_THREADS_PER_MULTIPROCESSOR", 2048),
        memory_bandwidth_gbs=bandwidth or (known.memory_bandwidth_gbs if known else 0.0),
        peak_gflops_fp32=(known.peak_gflops_fp32 if known else 0.0) or peak,
        l2_bytes=get("L2_CACHE_SIZE", 0),
    )


def _closest_known(name: str) -> GPUProfile | None:
    low = name.lower().replace(" ", "")
    for key, prof in (("a100", A100), ("h100", H100), ("4090", RTX4090), ("t4", T4)):
        if key in low:
            return prof
    return None
