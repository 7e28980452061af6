"""Targets: what hardware code is generated for, with the parameters the search reads.

``Target("llvm")`` is this machine's CPU (its LLVM name and features, core count, SIMD
width, cache sizes); ``Target("cuda")`` a CUDA GPU (arch, threads per block, shared
memory, warp size). TVM's string form ``"llvm -mcpu=skylake-avx512 -num-cores=2"`` and
its dict form ``{"kind": "llvm", "mcpu": ..., "num-cores": 2}`` are both accepted.
"""

from __future__ import annotations

import dataclasses
import functools
import os
from dataclasses import dataclass, field
from typing import Any

import llvmlite.binding as llvm

from ..errors import TargetError
from .gpu_targets import GENERIC, profile, profile_from_device
from .target_check import (
    CUDA_KEYS,
    LLVM_KEYS,
    MAX_CORES,
    check_arch,
    check_codegen,
    check_keys,
    check_mattr,
    check_mcpu,
    check_triple,
    fast_math_flags,
    int_option,
)

KINDS = ("llvm", "cuda")


#: TVM target kinds we do not generate code for (each named in a clear error)
_OTHER_TVM_KINDS = ("opencl", "vulkan", "metal", "rocm", "webgpu", "c", "hexagon", "spirv")


@functools.cache
def host_cpu() -> tuple[str, str]:
    """(LLVM CPU name, feature string) of this machine."""

    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    name = llvm.get_host_cpu_name()
    try:
        features = llvm.get_host_cpu_features().flatten()
    except RuntimeError:
        features = ""
    return name, features


def _usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _cache_bytes(level: int, kind: str = "") -> int:
    """Size of the CPU cache of ``level`` from sysfs, or a common default."""
    base = "/sys/devices/system/cpu/cpu0/cache"
    defaults = {1: 32 * 1024, 2: 1024 * 1024, 3: 8 * 1024 * 1024}
    try:
        for entry in sorted(os.listdir(base)):
            path = os.path.join(base, entry)
            with open(os.path.join(path, "level")) as f:
                if int(f.read()) != level:
                    continue
            with open(os.path.join(path, "type")) as f:
                ctype = f.read().strip()
            if level == 1 and ctype not in ("Data", "Unified"):
                continue
            with open(os.path.join(path, "size")) as f:
                text = f.read().strip()
            mult = {"K": 1024, "M": 1024 * 1024}.get(text[-1], 1)
            return int(text.rstrip("KM")) * mult
    except (OSError, ValueError):
        pass
    return defaults[level]


def _vector_bytes(features: str) -> int:
    feats = set(features.split(","))
    if "+avx512f" in feats:
        return 64
    if "+avx" in feats or "+avx2" in feats:
        return 32
    return 16


class TargetKind(str):
    """A target's kind, a plain string ("llvm", "cuda") that also has TVM's ``.name``."""

    __slots__ = ()

    @property
    def name(self) -> str:
        """The kind's name, as ``target.kind.name`` in TVM."""
        return str.__str__(self)


@dataclass(frozen=True)
class Target:
    """A code-generation target and its hardware parameters."""

    kind: str = "llvm"
    mcpu: str = ""
    mattr: str = ""
    num_cores: int = 0
    vector_bytes: int = 0
    l1_bytes: int = 0
    l2_bytes: int = 0
    l3_bytes: int = 0
    # CUDA
    arch: str = ""
    max_threads_per_block: int = 0
    max_shared_memory_per_block: int = 0
    warp_size: int = 0
    max_local_memory_per_block: int = 0
    model: str = ""
    sm_count: int = 0
    max_shared_memory_per_sm: int = 0
    registers_per_sm: int = 0
    registers_per_block: int = 0
    max_threads_per_sm: int = 0
    memory_bandwidth_gbs: float = 0.0
    peak_gflops_fp32: float = 0.0
    #: LLVM fast-math flags every float operation carries (TVM's ``-fast-math``: all of
    #: them, ``("fast",)``; ``-fast-math-nnan`` ...: those named); () = exact IEEE
    #: arithmetic with multiply-adds fused
    fast_math: tuple = field(default=())
    extra: tuple = field(default=())

    def __init__(self, target: Any = "llvm", host: Any = None, **kwargs: Any) -> None:  # noqa: D107
        # TVM's signature, Target(target, host=None): the host of a CPU target is itself,
        # and a CUDA kernel's host code is generated for this machine's CPU either way
        if host is not None and str(host).split()[:1] != ["llvm"]:
            raise TargetError(
                f"host {host!r}: the host is always this machine's CPU; "
                "pass host='llvm' or leave it out"
            )
        if isinstance(target, Target) and not kwargs:
            values = {f: getattr(target, f) for f in target.__dataclass_fields__}
        else:
            values = _parse(target, kwargs)
        values["kind"] = TargetKind(values["kind"])
        for key, value in values.items():
            object.__setattr__(self, key, value)

    # -- TVM-like accessors ---------------------------------------------------------
    @property
    def keys(self) -> tuple[str, ...]:
        """("cpu",) or ("cuda", "gpu"), as in TVM."""
        return ("cpu",) if self.kind == "llvm" else ("cuda", "gpu")

    @property
    def attrs(self) -> dict:
        """The target's attributes by TVM's names."""
        out = {"mcpu": self.mcpu, "num-cores": self.num_cores}
        if self.kind == "cuda":
            out.update(
                arch=self.arch,
                max_num_threads=self.max_threads_per_block,
                thread_warp_size=self.warp_size,
                max_shared_memory_per_block=self.max_shared_memory_per_block,
                model=self.model,
                registers_per_block=self.registers_per_block,
                l2_cache_size_bytes=self.l2_bytes,
            )
        return out

    @property
    def host(self) -> Target | None:
        """The host target of a CUDA target (this CPU); None for a CPU target, as in TVM."""
        return Target("llvm") if self.kind == "cuda" else None

    @property
    def vector_lanes_f32(self) -> int:
        """float32 lanes of one SIMD register."""
        return max(1, self.vector_bytes // 4)

    def with_(self, **changes: Any) -> Target:
        """A copy with some fields changed."""
        t = object.__new__(Target)
        for name in self.__dataclass_fields__:
            object.__setattr__(t, name, changes.pop(name, getattr(self, name)))
        if changes:
            raise TargetError(f"Target has no field(s) {', '.join(changes)}")
        return t

    def __str__(self) -> str:
        if self.kind == "llvm":
            parts = ["llvm", f"-mcpu={self.mcpu}", f"-num-cores={self.num_cores}"]
            if self.mattr:
                parts.append(f"-mattr={self.mattr}")
            parts += [f"-fast-math-{f}" if f != "fast" else "-fast-math" for f in self.fast_math]
            return " ".join(parts)
        text = self.__dict__.get("_text")
        if text is None:
            text = self._cuda_text()
            object.__setattr__(self, "_text", text)  # not a field: eq and hash ignore it
        return text

    def _cuda_text(self) -> str:
        """The short form when it reads back as this target (a named GPU, maybe with a
        few options), else every parameter written out (a GPU read from a device, or a
        named one with options changed): the builder and runner processes and the
        records rebuild the target from this text, so it must read back exactly."""
        model = f" -model={self.model}" if self.model not in ("", "generic") else ""
        short = f"cuda{model} -arch={self.arch} -max_num_threads={self.max_threads_per_block}"
        try:
            if Target(short) == self:
                return short
        except TargetError:  # a model no profile knows
            pass
        values = (
            ("max_shared_memory_per_block", self.max_shared_memory_per_block),
            ("thread_warp_size", self.warp_size),
            ("max_local_memory_per_block", self.max_local_memory_per_block),
            ("sm_count", self.sm_count),
            ("max_shared_memory_per_sm", self.max_shared_memory_per_sm),
            ("registers_per_sm", self.registers_per_sm),
            ("registers_per_block", self.registers_per_block),
            ("max_threads_per_sm", self.max_threads_per_sm),
            ("memory_bandwidth_gbs", self.memory_bandwidth_gbs),
            ("peak_gflops_fp32", self.peak_gflops_fp32),
            ("l2_cache_size_bytes", self.l2_bytes),
            *self.extra,
        )
        return short + "".join(f" -{k}={v}" for k, v in values)

    def __repr__(self) -> str:
        return f"Target({str(self)!r})"

    def __enter__(self) -> Target:
        _CURRENT.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        _CURRENT.pop()

    @staticmethod
    def current(allow_none: bool = True) -> Target | None:
        """The target of the innermost ``with Target(...)`` block."""
        if _CURRENT:
            return _CURRENT[-1]
        if not allow_none:
            raise TargetError("no target is set; pass target= or use `with Target('llvm'):`")
        return None


_CURRENT: list[Target] = []
#: the session default (``%ansor_target`` sets it): used when no target is given and no
#: ``with Target(...)`` block is active
_DEFAULT: list[Target] = []


def set_default_target(target: Any) -> Target | None:
    """Make ``target`` the default for calls given none (None clears it); returns the old one."""
    old = _DEFAULT[0] if _DEFAULT else None
    _DEFAULT.clear()
    if target is not None:
        _DEFAULT.append(target if isinstance(target, Target) else Target(target))
    return old


def default_target() -> Target:
    """The target used when none is given: ``with Target`` block, session default, or llvm."""
    return Target.current() or (_DEFAULT[0] if _DEFAULT else None) or Target("llvm")


def _parse(spec: Any, kwargs: dict) -> dict:
    opts: dict[str, Any] = {}
    if isinstance(spec, Target):
        opts = {"kind": spec.kind, "mcpu": spec.mcpu}
        opts.update({_fast_math_key(f): "true" for f in spec.fast_math})
        if spec.kind == "cuda":
            opts.update(model=spec.model, arch=spec.arch)
    elif isinstance(spec, dict):
        opts = {str(k).replace("-", "_"): v for k, v in spec.items()}
    elif isinstance(spec, str):
        words = spec.split()
        if not words:
            raise TargetError("empty target string; use 'llvm' or 'cuda'")
        opts["kind"] = words[0]
        if "/" in words[0]:  # a TVM tag: "nvidia/nvidia-a100"
            opts["kind"], opts["tag"] = "cuda", words[0]
        for w in words[1:]:
            if not w.startswith("-") or "=" not in w:
                if w.startswith("-fast-math"):  # TVM's boolean flags: -fast-math-nnan
                    opts[w[1:].replace("-", "_")] = "true"
                    continue
                if w.startswith("-"):
                    continue  # flags like -link-params are accepted and ignored
                raise TargetError(f"cannot read target option {w!r} in {spec!r}")
            key, value = w.lstrip("-").split("=", 1)
            opts[key.replace("-", "_")] = value
    else:
        raise TargetError(f"a target is a string, dict or Target, got {type(spec).__name__}")
    opts.update({k.replace("-", "_"): v for k, v in kwargs.items()})
    kind = opts.pop("kind", "llvm")
    if kind not in KINDS:
        if kind in _OTHER_TVM_KINDS:
            raise TargetError(
                f"target {kind!r} is out of scope: ansor_lab generates code for the CPU "
                "(target='llvm') and NVIDIA GPUs (target='cuda'); write one of those"
            )
        raise TargetError(f"unknown target kind {kind!r}; ansor_lab generates code for {KINDS}")
    if kind == "llvm":
        return _llvm(opts)
    return _cuda(opts)


def _fast_math_key(flag: str) -> str:
    return "fast_math" if flag == "fast" else f"fast_math_{flag}"


def _llvm(opts: dict) -> dict:
    name, features = host_cpu()
    check_keys("llvm", opts, LLVM_KEYS)
    check_triple(opts)
    mcpu = opts.pop("mcpu", "") or name
    if mcpu == "native":
        mcpu = name
    mcpu = check_mcpu(mcpu, name)
    mattr = check_mattr(opts.pop("mattr", ""), features)
    feats = features if mcpu == name else mattr
    if mcpu != name or mattr:
        # the CPU and features code generation uses (codegen.llvm.target_machine)
        check_codegen(mcpu, mattr)
    cores = opts.pop("num_cores", None)
    hint = f" (the threads a kernel may use; this machine has {_usable_cores()} usable cores)"
    cores = _usable_cores() if cores is None else int_option("num-cores", cores, 1, MAX_CORES, hint)
    vector_bytes = opts.pop("vector_bytes", None)
    vector_bytes = (
        _vector_bytes(feats or mattr or features)
        if vector_bytes is None
        else int_option("vector-bytes", vector_bytes, 1, 1024)
    )
    out = dict(
        kind="llvm",
        mcpu=mcpu,
        mattr=mattr,
        num_cores=cores,
        vector_bytes=vector_bytes,
        l1_bytes=_cache_bytes(1),
        l2_bytes=_cache_bytes(2),
        l3_bytes=_cache_bytes(3),
        arch="",
        max_threads_per_block=0,
        max_shared_memory_per_block=0,
        warp_size=0,
        max_local_memory_per_block=0,
    )
    out["fast_math"] = fast_math_flags(opts)
    if opts.get("opt_level") is not None:  # accepted as TVM does; LLVM has levels 0-3
        int_option("opt-level", opts["opt_level"], 0, 3, " (LLVM's optimisation levels)")
    opts.pop("opt_level", None)
    out["extra"] = tuple(sorted((k, str(v)) for k, v in opts.items()))
    return out


def _cuda(opts: dict) -> dict:
    check_keys("cuda", opts, CUDA_KEYS)
    tag = str(opts.pop("tag", "") or "")
    from_device = opts.pop("from_device", None)
    if from_device is not None:
        prof = profile_from_device(int(from_device))
    else:
        model = str(opts.pop("model", "") or "")
        try:
            prof = profile(model, tag)
        except TargetError:
            # TVM takes any -model; here an unknown one needs the parameters written out
            # (as str() of a target read from a device does), starting from the generic
            if tag or "arch" not in opts:
                raise
            prof = dataclasses.replace(GENERIC, model=model)
    opts.pop("model", None)
    # options written explicitly override the profile of the named GPU
    arch = check_arch(opts.pop("arch", prof.arch))
    threads = opts.pop("max_num_threads", opts.pop("max_threads_per_block", None))
    threads = prof.max_threads_per_block if threads is None else threads
    threads = int_option("max_num_threads", threads, 1, 4096)
    shared = opts.pop("max_shared_memory_per_block", prof.max_shared_memory_per_block)
    warp = opts.pop("thread_warp_size", opts.pop("warp_size", prof.warp_size))
    local = opts.pop("max_local_memory_per_block", 2**31 - 1)
    regs = opts.pop("registers_per_block", prof.registers_per_block)
    l2 = opts.pop("l2_cache_size_bytes", opts.pop("l2_bytes", prof.l2_bytes))
    big = 1 << 40

    def num(name: str, default: Any, lo: int = 1) -> int:
        return int_option(name, opts.pop(name, default), lo, big)

    def real(name: str, default: float) -> float:
        value = opts.pop(name, default)
        try:
            out = float(value)
        except (TypeError, ValueError):
            out = -1.0
        if out < 0:
            raise TargetError(f"cuda option -{name}={value!r} should be a number >= 0")
        return out

    out = dict(
        kind="cuda",
        mcpu="",
        mattr="",
        num_cores=0,
        vector_bytes=16,
        l1_bytes=0,
        l2_bytes=int_option("l2_cache_size_bytes", l2, 0, big),
        l3_bytes=0,
        arch=arch,
        max_threads_per_block=threads,
        max_shared_memory_per_block=int_option("max_shared_memory_per_block", shared, 1, 1 << 24),
        warp_size=int_option("thread_warp_size", warp, 1, 128),
        max_local_memory_per_block=int_option("max_local_memory_per_block", local, 1, 2**31 - 1),
        # one word ("NVIDIA H200" read from a device -> "NVIDIA-H200"), so that the
        # target's text (-model=...) reads back
        model="-".join(prof.model.split()),
        sm_count=num("sm_count", prof.sm_count),
        max_shared_memory_per_sm=num("max_shared_memory_per_sm", prof.max_shared_memory_per_sm),
        registers_per_sm=num("registers_per_sm", prof.registers_per_sm),
        registers_per_block=int_option("registers_per_block", regs, 1, big),
        max_threads_per_sm=num("max_threads_per_sm", prof.max_threads_per_sm),
        memory_bandwidth_gbs=real("memory_bandwidth_gbs", prof.memory_bandwidth_gbs),
        peak_gflops_fp32=real("peak_gflops_fp32", prof.peak_gflops_fp32),
    )
    out["extra"] = tuple(sorted((k, str(v)) for k, v in opts.items()))
    return out


def cuda(model: str = "unknown", arch: str | None = None, options: Any = None) -> Target:
    """A CUDA target for a GPU model (TVM's ``tvm.target.cuda(model=, arch=, options=)``)."""
    spec = f"cuda -model={model}" + (f" -arch={arch}" if arch else "")
    if isinstance(options, str):
        spec += " " + options
    elif options:
        spec += " " + " ".join(str(o) for o in options)
    return Target(spec)


def target_from_device(device_id: int = 0) -> Target:
    """The CUDA target of the GPU pycuda sees (TVM's ``Target("cuda -from_device=0")``)."""
    return Target({"kind": "cuda", "from_device": device_id})


def as_target(target: Any) -> Target:
    """Turn a string, dict, Target or None (the current / default target) into a Target."""
    if target is None:
        return default_target()
    if isinstance(target, Target):
        return target
    return Target(target)
