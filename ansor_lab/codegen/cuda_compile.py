"""Compile CUDA C to PTX and cubin without a GPU: NVRTC (the ``cuda`` extra) or nvcc.

``compile_cuda(source, "sm_80")`` returns a :class:`CompiledCUDA` with the PTX, the cubin
for exactly that ``sm_XX`` (a driver refuses PTX newer than it knows; a cubin for the
device's arch always loads), and the resource usage of every kernel as ptxas reports it
(``-Xptxas -v`` for nvcc, ``--ptxas-options=-v`` for NVRTC, parsed from the log):
registers per thread, static shared memory, spill stores and loads, stack frame.

NVRTC comes from PyPI (``pip install ansor_lab[cuda]``: ``cuda-python`` and
``cuda-toolkit[nvrtc,cudart]``; the cudart wheel carries ``cuda_fp16.h``) and is imported
lazily. nvcc is used when it is on PATH (or under ``/usr/local/cuda/bin``). A compile
failure is a CodegenError quoting the compiler's log and the source lines it names.
``check_resources`` holds the result to a target's limits (GPUScheduleError).

Memory: ptxas can need gigabytes for a kernel the search wrote with a large unrolled body
(a 4-thread conv2d block that unrolls its cooperative fetch into 1,000 stores took 46 s
and 1.6 GB), and on a 2 GB Binder pod that kills the notebook's kernel. nvcc therefore
runs under a data-size cap (``RLIMIT_DATA``, ``compile_memory_mb()``: 768 MB, or
``$ANSOR_LAB_CUDA_COMPILE_MB``), and the measurement builders hold an in-process NVRTC
compile to the same cap (``capped_memory``). A compile over it is a CodegenError that
says so, never an out-of-memory kill.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ..errors import CodegenError, GPUScheduleError

try:  # POSIX only: elsewhere (Windows) compiles run without the memory cap
    import resource
except ImportError:  # pragma: no cover - not on the machines we test
    resource = None

COMPILERS = ("nvrtc", "nvcc")


@dataclass(frozen=True)
class KernelResources:
    """What ptxas reports for one kernel."""

    name: str
    registers: int = 0
    shared_bytes: int = 0
    spill_stores: int = 0
    spill_loads: int = 0
    stack_bytes: int = 0
    barriers: int = 0

    def __str__(self) -> str:
        return (
            f"{self.name}: {self.registers} registers, {self.shared_bytes} B shared, "
            f"{self.spill_stores} B spill stores, {self.spill_loads} B spill loads, "
            f"{self.stack_bytes} B stack"
        )


@dataclass(frozen=True)
class CompiledCUDA:
    """PTX text, cubin bytes and per-kernel resources (a dict by kernel name)."""

    ptx: str
    cubin: bytes
    resources: dict = field(default_factory=dict)
    compiler: str = ""
    seconds: float = 0.0
    arch: str = ""
    log: str = ""


# -- finding the compilers ------------------------------------------------------------


@functools.cache
def nvrtc_available() -> bool:
    """True when cuda-python's NVRTC bindings import and the NVRTC library loads."""
    try:
        from cuda.bindings import nvrtc  # noqa: PLC0415 - optional, heavy

        err, _major, _minor = nvrtc.nvrtcVersion()
        return int(err) == 0
    except Exception:  # not installed, or libnvrtc missing
        return False


@functools.cache
def nvcc_path() -> str | None:
    """The nvcc executable, or None."""
    found = shutil.which("nvcc")
    if found:
        return found
    default = "/usr/local/cuda/bin/nvcc"
    return default if os.access(default, os.X_OK) else None


@functools.cache
def cuda_include_dirs() -> tuple:
    """Directories holding ``cuda_fp16.h`` for NVRTC (the cudart wheel, a local toolkit)."""
    dirs = []
    try:
        import nvidia  # noqa: PLC0415 - namespace package of the NVIDIA wheels

        for base in list(nvidia.__path__):
            for sub in ("cu13/include", "cu12/include", "cuda_runtime/include"):
                path = os.path.join(base, sub)
                if os.path.exists(os.path.join(path, "cuda_fp16.h")):
                    dirs.append(path)
    except ImportError:
        pass
    for path in ("/usr/local/cuda/include",):
        if os.path.exists(os.path.join(path, "cuda_fp16.h")):
            dirs.append(path)
    return tuple(dirs)


def available_compilers() -> tuple:
    """The compilers usable here, preferred first."""
    return tuple(
        c for c, ok in (("nvrtc", nvrtc_available()), ("nvcc", nvcc_path() is not None)) if ok
    )


def _check_arch(arch: str) -> str:
    if not re.fullmatch(r"sm_\d{2,3}[af]?", str(arch)):
        raise CodegenError(f"arch {arch!r} is not a CUDA architecture; write e.g. 'sm_80'")
    return arch


# -- the memory cap -------------------------------------------------------------------

#: MB of data one CUDA compile may use (typical kernels need ~100; see the module doc)
DEFAULT_COMPILE_MB = 768
_ENV_COMPILE_MB = "ANSOR_LAB_CUDA_COMPILE_MB"
#: the cap in force in this process (``capped_memory``), for the error message
_active_cap_mb: list = []


def compile_memory_mb() -> int:
    """MB of data one CUDA compile may use: ``$ANSOR_LAB_CUDA_COMPILE_MB`` or 768."""
    text = os.environ.get(_ENV_COMPILE_MB, "").strip()
    if not text:
        return DEFAULT_COMPILE_MB
    try:
        mb = int(text)
    except ValueError:
        mb = 0
    if mb < 64:
        raise CodegenError(
            f"${_ENV_COMPILE_MB}={text!r}: give the MB one CUDA compile may use, a whole "
            f"number of at least 64 (default {DEFAULT_COMPILE_MB})"
        )
    return mb


def _data_bytes() -> int:
    """This process's data segment now (VmData), in bytes; 0 where /proc is missing."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmData:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _cap_data(limit: int) -> tuple | None:
    """Lower this process's soft RLIMIT_DATA to ``limit`` bytes; the old limits, or
    None when the limit cannot be set (a hard limit below it, no such limit here)."""
    if resource is None:
        return None
    try:
        soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
        if hard != resource.RLIM_INFINITY and hard < limit:
            return None
        if soft != resource.RLIM_INFINITY and soft <= limit:
            return None  # already as tight: keep it
        resource.setrlimit(resource.RLIMIT_DATA, (limit, hard))
        return soft, hard
    except (OSError, ValueError):
        return None


@contextlib.contextmanager
def capped_memory(mb: int | None = None) -> Iterator[None]:
    """Hold this process's data to its size now plus ``mb`` MB (default
    ``compile_memory_mb()``) while the block runs: an in-process NVRTC compile then fails
    instead of growing without bound (a CodegenError from its ptxas; its front end, LLVM,
    aborts the process). The cap is process-wide, so this is for worker processes that do
    nothing else meanwhile (the builders, whose death is an error record)."""
    mb = compile_memory_mb() if mb is None else mb
    used = _data_bytes()
    old = _cap_data(used + (mb << 20)) if used else None
    _active_cap_mb.append(mb)
    try:
        yield
    finally:
        _active_cap_mb.pop()
        if old is not None:
            resource.setrlimit(resource.RLIMIT_DATA, old)


def _limit_child(mb: int):  # noqa: ANN202 - a preexec_fn, or None without rlimits
    if resource is None:
        return None

    def apply() -> None:
        soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
        limit = mb << 20
        if hard == resource.RLIM_INFINITY or hard >= limit:
            resource.setrlimit(resource.RLIMIT_DATA, (limit, hard))

    return apply


_OUT_OF_MEMORY = ("memory allocation failure", "out of memory", "std::bad_alloc")


def _out_of_memory(log: str, returncode: int | None = None) -> bool:
    """True when a failed compile's log (or an abort) reads as the memory cap reached."""
    low = log.lower()
    if any(s in low for s in _OUT_OF_MEMORY):
        return True
    # NVRTC's in-process ptxas says only "aborted" when an allocation fails; cicc aborts
    if "ptxas fatal" in low and not _ERR_LINE.search(log) and "error   :" not in low:
        return True
    return returncode in (-6, 134) and not _ERR_LINE.search(log)


def _memory_error(compiler: str, arch: str, mb: int, log: str) -> CodegenError:
    return CodegenError(
        f"{compiler} ran out of the {mb} MB one CUDA compile may use, compiling for {arch} "
        f"(its log: {log.strip()[-300:]!r}). The kernel is too big for the compiler: most "
        "often a large unrolled body (lower pragma_auto_unroll_max_step, or use smaller "
        f"tiles or more threads per block). To allow more, set ${_ENV_COMPILE_MB} "
        f"(MB, default {DEFAULT_COMPILE_MB})"
    )


# -- reading ptxas -v ----------------------------------------------------------------

_ENTRY = re.compile(r"(?:Compiling entry function|Function properties for) '?([\w$]+)'?")
_STACK = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_USED = re.compile(r"Used (\d+) registers")
_BARRIERS = re.compile(r"used (\d+) barriers")
_SMEM = re.compile(r"(\d+) bytes smem")


def parse_resource_usage(log: str) -> dict:
    """Per-kernel resources from ptxas' verbose output (NVRTC's log or nvcc's stderr)."""
    found: dict[str, dict] = {}
    current = None
    for line in log.splitlines():
        m = _ENTRY.search(line)
        if m:
            current = m.group(1)
            found.setdefault(current, {"name": current})
            continue
        if current is None:
            continue
        info = found[current]
        m = _STACK.search(line)
        if m:
            info.update(
                stack_bytes=int(m.group(1)),
                spill_stores=int(m.group(2)),
                spill_loads=int(m.group(3)),
            )
        m = _USED.search(line)
        if m:
            info["registers"] = int(m.group(1))
            b = _BARRIERS.search(line)
            s = _SMEM.search(line)
            info["barriers"] = int(b.group(1)) if b else 0
            info["shared_bytes"] = int(s.group(1)) if s else 0
    return {name: KernelResources(**info) for name, info in found.items()}


# -- errors --------------------------------------------------------------------------

_ERR_LINE = re.compile(r"\((\d+)\): (?:error|catastrophic error)")


def _compile_error(compiler: str, arch: str, log: str, source: str) -> CodegenError:
    lines = source.splitlines()
    quoted = []
    for num in sorted({int(m.group(1)) for m in _ERR_LINE.finditer(log)}):
        if 1 <= num <= len(lines):
            quoted.append(f"  line {num}: {lines[num - 1].strip()}")
    where = ("\nsource lines named:\n" + "\n".join(quoted)) if quoted else ""
    return CodegenError(
        f"{compiler} failed to compile the CUDA C for {arch}:\n{log.strip()}{where}\n"
        "(print the source with mod.get_source('cuda'); a construct the generator printed "
        "wrongly is a bug worth reporting with that source)"
    )


# -- NVRTC ---------------------------------------------------------------------------


def _nvrtc_check(result: Any, what: str) -> Any:
    err = result[0]
    if int(err) != 0:
        raise CodegenError(f"NVRTC {what} failed: {err!r}")
    return result[1] if len(result) > 1 else None


def _compile_nvrtc(source: str, arch: str, options: list) -> tuple:
    from cuda.bindings import nvrtc  # noqa: PLC0415 - optional, heavy

    opts = [f"--gpu-architecture={arch}", "--ptxas-options=-v", "-std=c++17", *options]
    if "cuda_fp16.h" in source:
        opts += [f"-I{d}" for d in cuda_include_dirs()]
    prog = _nvrtc_check(
        nvrtc.nvrtcCreateProgram(source.encode(), b"kernel.cu", 0, [], []), "create"
    )
    try:
        encoded = [o.encode() for o in opts]
        (err,) = nvrtc.nvrtcCompileProgram(prog, len(encoded), encoded)
        # NVRTC writes into the buffers it is given: they must be mutable and our own.
        # (b" " * size is the interpreter's shared one-byte b" " when the log is empty,
        # size 1: NVRTC's NUL then turned every b" " of the process into b"\x00".)
        size = _nvrtc_check(nvrtc.nvrtcGetProgramLogSize(prog), "log size")
        log = bytearray(size)
        nvrtc.nvrtcGetProgramLog(prog, log)
        log_text = bytes(log).rstrip(b"\x00 ").decode(errors="replace")
        if int(err) != 0:
            if _active_cap_mb and _out_of_memory(log_text):
                raise _memory_error("NVRTC", arch, _active_cap_mb[-1], log_text)
            raise _compile_error("NVRTC", arch, log_text, source)
        size = _nvrtc_check(nvrtc.nvrtcGetPTXSize(prog), "PTX size")
        ptx = bytearray(size)
        _nvrtc_check(nvrtc.nvrtcGetPTX(prog, ptx), "get PTX")
        size = _nvrtc_check(nvrtc.nvrtcGetCUBINSize(prog), "CUBIN size")
        cubin = bytearray(size)
        _nvrtc_check(nvrtc.nvrtcGetCUBIN(prog, cubin), "get CUBIN")
    finally:
        nvrtc.nvrtcDestroyProgram(prog)
    return bytes(ptx).rstrip(b"\x00").decode(), bytes(cubin), log_text


# -- nvcc ----------------------------------------------------------------------------


def _compile_nvcc(source: str, arch: str, options: list) -> tuple:
    nvcc = nvcc_path()
    if nvcc is None:
        raise CodegenError(
            "nvcc is not on this machine: compile with compiler='nvrtc' "
            "(pip install 'ansor_lab[cuda]') or install the CUDA toolkit"
        )
    nvcc_opts = [o.replace("--use_fast_math", "-use_fast_math") for o in options]
    with tempfile.TemporaryDirectory(prefix="ansor_cuda_") as tmp:
        src = os.path.join(tmp, "kernel.cu")
        with open(src, "w") as f:
            f.write(source)
        cmd = [nvcc, "-cubin", f"-arch={arch}", "-Xptxas", "-v", "-std=c++17", "--keep"]
        cmd += ["--keep-dir", tmp, "-o", os.path.join(tmp, "kernel.cubin"), src, *nvcc_opts]
        mb = compile_memory_mb()
        try:
            proc = subprocess.run(
                cmd,
                capture_output=True,
                text=True,
                timeout=300,
                cwd=tmp,
                preexec_fn=_limit_child(mb),  # noqa: PLW1509 - setrlimit only, no locks
            )
        except subprocess.TimeoutExpired:
            raise CodegenError(f"nvcc took over 300 s compiling for {arch}") from None
        log = (proc.stdout + proc.stderr).replace(src, "kernel.cu")
        if proc.returncode != 0:
            if _out_of_memory(log, proc.returncode):
                raise _memory_error("nvcc", arch, mb, log)
            raise _compile_error("nvcc", arch, log, source)
        with open(os.path.join(tmp, "kernel.cubin"), "rb") as f:
            cubin = f.read()
        ptx = ""
        for name in os.listdir(tmp):
            if name.endswith(".ptx"):
                with open(os.path.join(tmp, name)) as f:
                    ptx = f.read()
    return ptx, cubin, log


def compile_cuda(
    source: str,
    arch: str = "sm_80",
    compiler: str = "nvrtc",
    *,
    fast_math: bool = False,
    options: tuple = (),
) -> CompiledCUDA:
    """Compile ``source`` for ``arch`` with ``compiler`` ("nvrtc", "nvcc" or "auto").

    "auto" takes NVRTC when it is installed, else nvcc. Raises CodegenError with the
    compiler's log when the source does not compile or the compiler is missing.
    """
    arch = _check_arch(arch)
    if compiler == "auto":
        have = available_compilers()
        if not have:
            raise CodegenError(
                "no CUDA compiler here: pip install 'ansor_lab[cuda]' for NVRTC "
                "(no GPU or toolkit needed), or put nvcc on PATH"
            )
        compiler = have[0]
    if compiler not in COMPILERS:
        raise CodegenError(f"compiler={compiler!r}: use one of {COMPILERS} or 'auto'")
    opts = list(options) + (["--use_fast_math"] if fast_math else [])
    start = time.perf_counter()
    if compiler == "nvrtc":
        if not nvrtc_available():
            raise CodegenError(
                "NVRTC is not installed: pip install 'ansor_lab[cuda]' (cuda-python and "
                "cuda-toolkit[nvrtc,cudart]), or compile with compiler='nvcc'"
            )
        ptx, cubin, log = _compile_nvrtc(source, arch, opts)
    else:
        ptx, cubin, log = _compile_nvcc(source, arch, opts)
    resources = parse_resource_usage(log)
    if not resources and ptx:
        # some NVRTC builds (13.0, seen on an H200 machine) leave ptxas' report out of the
        # log: ask ptxas itself, where a toolkit is installed
        resources = _ptxas_resources(ptx, arch)
    seconds = time.perf_counter() - start
    return CompiledCUDA(ptx, cubin, resources, compiler, seconds, arch, log)


@functools.cache
def ptxas_path() -> str | None:
    """The ptxas executable (beside nvcc), or None."""
    nvcc = nvcc_path()
    beside = os.path.join(os.path.dirname(nvcc), "ptxas") if nvcc else ""
    if beside and os.access(beside, os.X_OK):
        return beside
    return shutil.which("ptxas")


def _ptxas_resources(ptx: str, arch: str) -> dict:
    """Per-kernel resources from ``ptxas -v`` on the PTX ({} without ptxas or on failure:
    the resources are a report and a check, never a reason to fail a build)."""
    ptxas = ptxas_path()
    if ptxas is None:
        return {}
    with tempfile.TemporaryDirectory(prefix="ansor_ptxas_") as tmp:
        src = os.path.join(tmp, "kernel.ptx")
        with open(src, "w") as f:
            f.write(ptx)
        cmd = [ptxas, "-v", f"-arch={arch}", src, "-o", os.path.join(tmp, "kernel.cubin")]
        try:
            proc = subprocess.run(
                cmd,
                capture_output=True,
                text=True,
                timeout=120,
                preexec_fn=_limit_child(compile_memory_mb()),  # noqa: PLW1509 - setrlimit only
            )
        except (OSError, subprocess.TimeoutExpired, CodegenError):
            return {}
    if proc.returncode != 0:
        return {}
    return parse_resource_usage(proc.stdout + proc.stderr)


def check_resources(compiled: CompiledCUDA, kernels: Any, target: Any) -> None:
    """Refuse kernels that could not launch on ``target`` (GPUScheduleError saying why).

    ``kernels`` are the program's ``kernel_form.Kernel``s (their threads per block);
    limits are read from the target (``registers_per_block``, 65536 when absent;
    ``max_shared_memory_per_block``; 255 registers per thread).
    """
    reg_limit = int(getattr(target, "registers_per_block", 0) or 65536)
    smem_limit = int(getattr(target, "max_shared_memory_per_block", 0) or 49152)
    for k in kernels:
        res = compiled.resources.get(k.name)
        if res is None:
            continue
        threads = k.threads_per_block
        if res.registers * threads > reg_limit:
            raise GPUScheduleError(
                f"kernel {k.name}: {res.registers} registers per thread x {threads} threads "
                f"= {res.registers * threads} registers, over the {reg_limit} a block may use "
                f"on {getattr(target, 'arch', '?')}; use fewer threads per block (smaller "
                "threadIdx splits) or smaller per-thread tiles"
            )
        if res.shared_bytes > smem_limit:
            raise GPUScheduleError(
                f"kernel {k.name}: {res.shared_bytes} bytes of shared memory, over the "
                f"{smem_limit} a block may use; make the shared tiles smaller"
            )
