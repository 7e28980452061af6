"""An analytic GPU model: how long a CUDA-scheduled program would take on a target's GPU.

``estimate(program, target) -> GPUEstimate(seconds, breakdown)`` is what
``EmulatedRunner`` records (marked *estimated*) for a candidate checked on the GPU
emulator. It is a roofline with efficiencies, per kernel:

1. **Work** (``gpu_access``): FLOPs; global-memory traffic in 32-byte sectors per warp
   instruction (coalescing: a warp reading 32 consecutive floats moves 4 sectors, with a
   stride of 8 floats or more 32); shared-memory wavefronts per warp instruction (bank
   conflicts: the most distinct words one of the 32 banks serves). Reuse through shared
   and local memory shows as fewer global accesses executed.
2. **Resources**: registers per thread from ptxas when the kernel was compiled, else
   ~ ``REG_BASE`` + the 4-byte words of the thread's local buffers (capped at 255; the
   rest spills to local memory, counted as global traffic); shared bytes per block
   (+1 KiB reserved per block from sm_80).
3. **Occupancy**: blocks per SM = the least of the limits on threads, blocks, registers
   and shared memory per SM (``limiter`` names it); resident warps per SM; waves of
   blocks over the SMs, and the tail efficiency of the last wave.
4. **Time** = max(compute, memory, shared) + launch, where
   - compute = FLOPs / (peak FP32 x active-SM share x min(1, warps / ``COMPUTE_WARPS``)),
   - memory = DRAM bytes / (bandwidth x efficiency) + the rest of the sector traffic /
     (``L2_FACTOR`` x bandwidth x efficiency); DRAM bytes are the kernel's global
     footprint (each byte once from DRAM) when it fits in L2, all sector traffic when it
     does not. The efficiency is Little's law: an SM must keep bandwidth-per-SM x
     ``MEMORY_LATENCY_S`` bytes in flight, and has resident warps x ``LOADS_IN_FLIGHT``
     x (bytes per warp instruction) — so more warps and wider (coalesced, vectorized)
     loads both help a latency-bound kernel,
   - shared = wavefronts / (active SMs x clock),
   - launch = ``LAUNCH_S`` per kernel;
   each rate is scaled by the tail efficiency. A program's time is the sum over kernels.

Hardware numbers come from the target's attributes (``sm_count``,
``memory_bandwidth_gbs``, ``peak_gflops_fp32``, ``registers_per_sm``...) and, where a
target lacks one, from ``ARCH_DEFAULTS`` for its arch (a typical GPU of that generation).
The model orders programs by the effects it names; its absolute numbers are estimates —
which is why records made from it are marked and never mixed with measured ones.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from .gpu_access import BANK_BYTES, WARP, kernel_work

#: per-kernel launch overhead, seconds
LAUNCH_S = 5e-6
#: registers every thread needs besides its local buffers (indices, addresses, loop counters)
REG_BASE = 16
MAX_REGS = 255
#: resident warps per SM at which the FP32 units are kept busy (4 schedulers x ~2)
COMPUTE_WARPS = 8
#: DRAM latency, seconds, and the global loads a warp keeps in flight (Little's law)
MEMORY_LATENCY_S = 600e-9
LOADS_IN_FLIGHT = 4
#: L2 bandwidth as a multiple of DRAM bandwidth
L2_FACTOR = 3.0

#: typical GPU of each arch: (name, sm_count, max_threads_per_sm, max_blocks_per_sm,
#: registers_per_sm, registers_per_block, max_shared_memory_per_sm, bandwidth GB/s,
#: peak FP32 GFLOPS, L2 bytes, clock GHz)
ARCH_DEFAULTS = {
    "sm_75": ("T4", 40, 1024, 16, 65536, 65536, 65536, 320, 8141, 4 << 20, 1.59),
    "sm_80": ("A100", 108, 2048, 32, 65536, 65536, 167936, 1555, 19500, 40 << 20, 1.41),
    "sm_86": ("RTX 3090", 82, 1536, 16, 65536, 65536, 102400, 936, 35580, 6 << 20, 1.70),
    "sm_89": ("RTX 4090", 128, 1536, 24, 65536, 65536, 102400, 1008, 82580, 72 << 20, 2.52),
    "sm_90": ("H100", 132, 2048, 32, 65536, 65536, 233472, 3350, 66900, 50 << 20, 1.98),
}


@dataclass(frozen=True)
class GPUSpec:
    """The hardware numbers the model uses."""

    name: str
    sm_count: int
    max_threads_per_sm: int
    max_blocks_per_sm: int
    registers_per_sm: int
    registers_per_block: int
    max_shared_memory_per_sm: int
    bandwidth_gbs: float
    peak_gflops: float
    l2_bytes: int
    clock_ghz: float
    arch: str

    @classmethod
    def of(cls, target: Any) -> GPUSpec:
        """The spec of a CUDA target: its attributes, else its arch's defaults."""
        arch = getattr(target, "arch", "") or "sm_80"
        d = ARCH_DEFAULTS.get(arch) or ARCH_DEFAULTS["sm_90" if arch > "sm_90" else "sm_80"]

        def attr(name: str, default: Any) -> Any:
            v = getattr(target, name, None)
            return v if v else default

        return cls(
            attr("model", d[0]),
            int(attr("sm_count", d[1])),
            int(attr("max_threads_per_sm", d[2])),
            int(attr("max_blocks_per_sm", d[3])),
            int(attr("registers_per_sm", d[4])),
            int(attr("registers_per_block", d[5])),
            int(attr("max_shared_memory_per_sm", d[6])),
            float(attr("memory_bandwidth_gbs", d[7])),
            float(attr("peak_gflops_fp32", d[8])),
            int(attr("l2_bytes", d[9])),
            float(attr("clock_ghz", d[10])),
            arch,
        )


@dataclass(frozen=True)
class KernelEstimate:
    """The model's numbers for one kernel (times in seconds, bytes, counts)."""

    name: str
    grid: tuple
    block: tuple
    flops: float
    useful_bytes: float  # what the threads asked of global memory
    global_bytes: float  # moved in whole 32-byte sectors (coalescing)
    dram_bytes: float
    l2_bytes: float
    shared_wavefronts: float
    worst_bank_conflict: int  # the most wavefronts one shared access needs over the
    # fewest its bytes could take (1: none; a float4 access needs 4 without a conflict)
    registers: int
    spilled_words: int
    shared_bytes: int
    blocks_per_sm: int  # the most blocks an SM can hold (``limiter`` says why)
    limiter: str  # what bounds blocks per SM: threads, blocks, registers or shared
    occupancy: float  # resident warps / max warps per SM
    waves: int
    t_compute: float
    t_memory: float
    t_shared: float
    t_launch: float
    by_buffer: tuple = ()  # (global buffer, bytes moved in sectors), largest first
    resident_blocks: int = 0  # blocks on a busy SM (fewer than allowed in a small grid)

    @property
    def seconds(self) -> float:
        """max(compute, memory, shared) + launch."""
        return max(self.t_compute, self.t_memory, self.t_shared) + self.t_launch

    @property
    def bound(self) -> str:
        """Which work term is the largest: "compute", "memory" or "shared"."""
        terms = {"compute": self.t_compute, "memory": self.t_memory, "shared": self.t_shared}
        return max(terms, key=terms.get)

    @property
    def coalescing(self) -> float:
        """useful / moved global bytes (1: every byte of every sector was used)."""
        return self.useful_bytes / self.global_bytes if self.global_bytes else 1.0


@dataclass(frozen=True)
class GPUEstimate:
    """An estimated time (seconds) and the per-kernel breakdown behind it."""

    seconds: float
    breakdown: tuple  # KernelEstimate per kernel, in launch order
    gpu: str = ""

    def __str__(self) -> str:
        lines = [f"estimated {self.seconds * 1e6:.1f} us on {self.gpu} (analytic model)"]
        for k in self.breakdown:
            lines.append(
                f"  {k.name}: grid {k.grid} block {k.block}: {k.seconds * 1e6:.1f} us, "
                f"{k.bound}-bound; occupancy {k.occupancy:.0%} ({k.resident_blocks} blocks on "
                f"an SM, {k.blocks_per_sm} fit by {k.limiter}); {k.registers} regs, "
                f"{k.shared_bytes} B shared; "
                f"coalescing {k.coalescing:.0%}, worst bank conflict {k.worst_bank_conflict}-way"
            )
        return "\n".join(lines)


def _occupancy(k: Any, regs: int, shared: int, spec: GPUSpec) -> tuple[int, str]:
    warps = math.ceil(k.threads_per_block / WARP)
    regs_per_warp = math.ceil(regs * WARP / 256) * 256  # allocated per warp in units of 256
    limits = {
        "threads": spec.max_threads_per_sm // (warps * WARP),
        "blocks": spec.max_blocks_per_sm,
        "registers": spec.registers_per_sm // (regs_per_warp * warps),
        "shared": spec.max_shared_memory_per_sm // shared if shared else 1 << 30,
    }
    limiter = min(limits, key=limits.get)
    return limits[limiter], limiter


def _by_buffer(accesses: list) -> tuple:
    moved: dict[str, float] = {}
    for a in accesses:
        moved[a.buffer] = moved.get(a.buffer, 0.0) + a.moved_bytes
    return tuple(sorted(moved.items(), key=lambda kv: -kv[1]))


def estimate_kernel(k: Any, spec: GPUSpec, registers: int | None = None) -> KernelEstimate:
    """The model for one ``codegen.kernel_form.Kernel`` (see the module docstring);
    ``registers``: ptxas's count per thread, when the kernel was compiled (else estimated)."""
    work = kernel_work(k)
    regs = registers if registers else REG_BASE + work.local_words
    spilled = max(0, regs - MAX_REGS)
    regs = min(regs, MAX_REGS)
    shared = k.shared_bytes() + (1024 if spec.arch >= "sm_80" and k.shared_bytes() else 0)
    bps, limiter = _occupancy(k, regs, shared, spec)
    warps_per_block = math.ceil(k.threads_per_block / WARP)
    glob = [a for a in work.accesses if a.scope == "global"]
    shared_acc = [a for a in work.accesses if a.scope == "shared"]
    useful = sum(a.useful_bytes for a in glob)
    moved = sum(a.moved_bytes for a in glob)
    if spilled:  # spilled words go through local memory each time the thread touches them
        spill_bytes = spilled * BANK_BYTES * 2.0 * k.num_blocks * k.threads_per_block
        moved += spill_bytes
        useful += spill_bytes
    wavefronts = sum(a.warp_instructions * max(1, a.degree) for a in shared_acc)
    worst = max((a.conflict for a in shared_acc), default=1)
    footprint = work.global_footprint
    dram = min(moved, footprint) if footprint <= spec.l2_bytes else moved
    l2 = max(0.0, moved - dram)
    if bps < 1:  # the block cannot be resident at all: a launch failure on the GPU
        inf = float("inf")
        return KernelEstimate(
            k.name, k.grid, k.block, work.flops, useful, moved, dram, l2, wavefronts, worst,
            regs, spilled, shared, 0, limiter, 0.0, 0, inf, inf, inf, LAUNCH_S, _by_buffer(glob),
        )  # fmt: skip
    blocks = k.num_blocks
    per_sm = min(bps, math.ceil(blocks / spec.sm_count))  # resident blocks on a busy SM
    active_sms = min(spec.sm_count, blocks)
    waves = math.ceil(blocks / (active_sms * per_sm))
    tail = blocks / (waves * active_sms * per_sm)
    warps = per_sm * warps_per_block
    occupancy = min(1.0, warps * WARP / spec.max_threads_per_sm)
    sm_share = active_sms / spec.sm_count
    compute_rate = spec.peak_gflops * 1e9 * sm_share * min(1.0, warps / COMPUTE_WARPS) * tail
    instructions = sum(a.warp_instructions for a in glob)
    per_request = moved / instructions if instructions else 128.0  # bytes per warp load
    needed = spec.bandwidth_gbs * 1e9 / spec.sm_count * MEMORY_LATENCY_S  # bytes per SM
    in_flight = active_sms / spec.sm_count * warps * LOADS_IN_FLIGHT * per_request
    mem_eff = min(1.0, in_flight / needed) * tail
    bandwidth = spec.bandwidth_gbs * 1e9 * mem_eff
    t_compute = work.flops / compute_rate if work.flops else 0.0
    t_memory = dram / bandwidth + l2 / (L2_FACTOR * bandwidth)
    t_shared = wavefronts / (active_sms * spec.clock_ghz * 1e9 * tail) if wavefronts else 0.0
    return KernelEstimate(
        k.name, k.grid, k.block, work.flops, useful, moved, dram, l2, wavefronts, worst,
        regs, spilled, shared, bps, limiter, occupancy, waves, t_compute, t_memory, t_shared,
        LAUNCH_S, _by_buffer(glob), per_sm,
    )  # fmt: skip


def estimate(program: Any, target: Any, registers: dict | None = None) -> GPUEstimate:
    """Estimated seconds of a ``KernelProgram`` on ``target`` (see the module docstring).

    ``registers`` (kernel name -> registers per thread, as ptxas reports them) replaces
    the model's own estimate where a compiler has run: unrolled register tiles can need
    far more than their local buffers suggest.
    """
    spec = GPUSpec.of(target)
    registers = registers or {}
    kernels = tuple(estimate_kernel(k, spec, registers.get(k.name)) for k in program.kernels)
    return GPUEstimate(sum(k.seconds for k in kernels), kernels, spec.name)
