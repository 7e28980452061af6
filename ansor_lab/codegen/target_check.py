"""Target values checked before any code is generated.

LLVM does not refuse a CPU or feature name it does not know: it prints a warning and
carries on, and code generation for an unknown CPU then aborts the whole process
("LLVM ERROR: 64-bit code requested on a subtarget that doesn't support it!"). So a
target's ``-mcpu`` and ``-mattr`` are checked against the names LLVM knows, and its
numbers (cores, vector width, CUDA limits) against what hardware can have, when the
Target is made; each refusal is a TargetError saying what to write instead.

The names LLVM knows are what it prints for CPU "help". That is printed once per process,
on the C stderr, so a short child process asks for them (about 0.1 s, once per process,
and only for a CPU or feature this machine's own description does not already name).
"""

from __future__ import annotations

import difflib
import functools
import re
import subprocess
import sys
from typing import Any

import llvmlite.binding as llvm

from ..errors import TargetError

#: more threads than any machine has; a larger value would make the OpenMP runtime abort
MAX_CORES = 4096
#: keys of TVM's llvm target we accept and ignore (besides the ones we read)
LLVM_KEYS = frozenset(
    "mcpu mattr num_cores vector_bytes opt_level mtriple mfloat_abi mabi cl_opt jit "
    "vector_width fast_math fast_math_nnan fast_math_ninf fast_math_nsz fast_math_arcp "
    "fast_math_contract fast_math_reassoc keys libs device model tag from_device "
    "link_params system_lib runtime host executor interface_api unpacked_api".split()
)
#: keys of TVM's cuda target we accept (besides the ones we read, which ``_cuda`` pops)
CUDA_KEYS = frozenset(
    "arch max_num_threads max_threads_per_block max_shared_memory_per_block "
    "thread_warp_size warp_size max_local_memory_per_block registers_per_block "
    "l2_cache_size_bytes max_function_args keys libs device model tag host from_device "
    "mcpu sm_count max_shared_memory_per_sm registers_per_sm max_threads_per_sm "
    "memory_bandwidth_gbs peak_gflops_fp32 l2_bytes".split()
)

# Lists the names (LLVM prints them for CPU "help", once per process), then compiles a
# small function for the CPU and features asked about: LLVM aborts the process for some
# (a 32-bit CPU, -64bit), which must happen in this child and not in the user's process.
_PROBE_SCRIPT = """
import sys
import llvmlite.binding as llvm
llvm.initialize_native_target()
llvm.initialize_native_asmprinter()
t = llvm.Target.from_triple(llvm.get_process_triple())
t.create_target_machine(cpu="help", features="", opt=0)
cpu, feats = sys.argv[1], sys.argv[2]
if cpu:
    tm = t.create_target_machine(cpu=cpu, features=feats, opt=2, codemodel="jitdefault")
    mod = llvm.parse_assembly(sys.stdin.read())
    mod.triple = llvm.get_process_triple()
    tm.emit_object(mod)
print("ok")
"""
# float, double, vector and 64-bit integer work, as every kernel has
_PROBE_IR = """
define void @probe(ptr %a, ptr %b, i64 %n) {
entry:
  %x = load <8 x float>, ptr %a
  %y = fadd <8 x float> %x, %x
  store <8 x float> %y, ptr %b
  %d = load double, ptr %a
  %e = fmul double %d, 2.0
  store double %e, ptr %b
  %m = mul i64 %n, %n
  store i64 %m, ptr %a
  ret void
}
"""


def _parse_help(text: str) -> tuple[frozenset[str], frozenset[str]]:
    """The CPU and feature names of LLVM's "help" listing."""
    cpus: set[str] = set()
    feats: set[str] = set()
    into: set[str] | None = None
    for line in text.splitlines():
        if line.startswith("Available CPUs"):
            into = cpus
        elif line.startswith("Available features"):
            into = feats
        elif line.startswith("Use +feature"):
            into = None
        elif into is not None:
            m = re.match(r"\s+(\S+)\s+- ", line)
            if m:
                into.add(m.group(1))
    return frozenset(cpus), frozenset(feats)


@functools.cache
def _probe(mcpu: str, mattr: str) -> tuple[frozenset[str], frozenset[str], int, str]:
    """(CPU names, feature names, exit status, stderr) of a child that lists LLVM's names
    and, given ``mcpu``, compiles a small function for ``mcpu``/``mattr``."""
    try:
        proc = subprocess.run(
            [sys.executable, "-c", _PROBE_SCRIPT, mcpu, mattr],
            input=_PROBE_IR,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as err:
        return frozenset(), frozenset(), -1, str(err)
    cpus, feats = _parse_help(proc.stderr)
    ok = proc.returncode == 0 and proc.stdout.strip() == "ok"
    return cpus, feats, 0 if ok else (proc.returncode or -1), proc.stderr


def llvm_names() -> tuple[frozenset[str], frozenset[str]]:
    """(CPU names, feature names) LLVM knows for this machine's architecture."""
    cpus, feats, _, err = _probe("", "")
    if not cpus:
        raise TargetError(
            "could not list the CPUs LLVM knows, to check -mcpu/-mattr "
            f"({err.strip()[-200:]}); leave -mcpu and -mattr out to compile for this machine"
        )
    return cpus, feats


def check_codegen(mcpu: str, features: str) -> None:
    """TargetError if LLVM cannot generate code for ``mcpu`` with ``features`` here (it
    would abort the process): tried once per pair, in a child process."""
    _, _, status, err = _probe(mcpu, features)
    if status != 0:
        lines = [ln for ln in err.splitlines() if "ERROR" in ln or "rror:" in ln]
        why = (lines[-1] if lines else err.strip()[-200:]) or f"exit status {status}"
        why = why.strip().rstrip("!.")
        raise TargetError(
            f"LLVM cannot generate code for -mcpu={mcpu} -mattr={features or '(none)'} on "
            f"{llvm.get_process_triple()}: {why}. Choose a CPU of this architecture "
            "(a 64-bit one on a 64-bit machine) without disabling its basic features, or "
            "leave -mcpu and -mattr out"
        )


def _host_feature_names(host_features: str) -> set[str]:
    return {f[1:] for f in host_features.split(",") if f[:1] in "+-" and len(f) > 1}


def _close(name: str, known: frozenset[str]) -> str:
    close = difflib.get_close_matches(name, sorted(known), n=5, cutoff=0.6)
    return f" (did you mean {', '.join(close)}?)" if close else ""


def check_mcpu(mcpu: Any, host_name: str) -> str:
    """``mcpu`` if LLVM knows it as a CPU of this architecture; TargetError otherwise."""
    if not isinstance(mcpu, str):
        raise TargetError(f"-mcpu must be a CPU name string, got {type(mcpu).__name__}")
    if mcpu == host_name:
        return mcpu
    cpus, _ = llvm_names()
    if mcpu not in cpus:
        raise TargetError(
            f"-mcpu={mcpu!r} is not a CPU LLVM knows for {llvm.get_process_triple()}"
            f"{_close(mcpu, cpus)}; leave -mcpu out (or write -mcpu=native) for this "
            f"machine's CPU, {host_name!r}"
        )
    return mcpu


def check_mattr(mattr: Any, host_features: str) -> str:
    """``mattr`` (comma-separated ``+feature``/``-feature``) if LLVM knows every feature."""
    if isinstance(mattr, (list, tuple)):
        mattr = ",".join(str(a) for a in mattr)
    if not isinstance(mattr, str):
        raise TargetError(
            f"-mattr must be a string like '+avx2,-fma' or a list, got {type(mattr).__name__}"
        )
    items = [a.strip() for a in mattr.split(",") if a.strip()]
    known_here = _host_feature_names(host_features)
    for item in items:
        if item[:1] not in ("+", "-") or len(item) < 2:
            raise TargetError(
                f"-mattr entry {item!r} must be +feature or -feature (e.g. -mattr=+avx2,-fma)"
            )
        name = item[1:]
        if name in known_here:
            continue
        _, feats = llvm_names()
        if name not in feats:
            raise TargetError(
                f"-mattr: {name!r} is not a feature LLVM knows for "
                f"{llvm.get_process_triple()}{_close(name, feats)}; remove it, or leave "
                "-mattr out to use this machine's features"
            )
    return ",".join(items)


def int_option(key: str, value: Any, lo: int, hi: int, hint: str = "") -> int:
    """``value`` (an int or a decimal string) as an int in ``[lo, hi]``; TargetError else.

    ``key`` is the option as users write it (``num-cores``, ``max_num_threads``)."""
    n: int | None = None
    if isinstance(value, int) and not isinstance(value, bool):
        n = value
    elif isinstance(value, float) and value.is_integer():
        n = int(value)
    elif isinstance(value, str) and re.fullmatch(r"\s*[+-]?[0-9]{1,30}\s*", value):
        n = int(value)
    if n is None:
        raise TargetError(f"-{key}={value!r} is not a whole number{hint}")
    if not lo <= n <= hi:
        raise TargetError(
            f"-{key}={value!r} is out of range: it must be between {lo} and {hi}{hint}"
        )
    return n


def check_keys(kind: str, opts: dict, accepted: frozenset[str]) -> None:
    """TargetError naming the first option no ``kind`` target has (with close names)."""
    for key in opts:
        if key not in accepted:
            close = difflib.get_close_matches(key, sorted(accepted), n=3)
            hint = f" (did you mean {', '.join('-' + c.replace('_', '-') for c in close)}?)"
            raise TargetError(
                f"unknown {kind} target option -{key.replace('_', '-')}"
                f"{hint if close else ''}; {kind} targets take "
                f"{', '.join('-' + k.replace('_', '-') for k in sorted(accepted))}"
            )


#: TVM's llvm fast-math options -> the LLVM flag each sets on float operations
FAST_MATH_OPTIONS = {
    "fast_math": "fast",
    "fast_math_nnan": "nnan",
    "fast_math_ninf": "ninf",
    "fast_math_nsz": "nsz",
    "fast_math_arcp": "arcp",
    "fast_math_contract": "contract",
    "fast_math_reassoc": "reassoc",
}


def fast_math_flags(opts: dict) -> tuple[str, ...]:
    """Pop TVM's ``-fast-math*`` options from ``opts``: the LLVM fast-math flags they
    turn on, in a fixed order (``("fast",)`` for ``-fast-math``, which implies the rest).
    A value is a boolean (``-fast-math``, ``-fast-math=1``, ``-fast-math-nnan=false``)."""
    flags = []
    for key, flag in FAST_MATH_OPTIONS.items():
        if key not in opts:
            continue
        value = str(opts.pop(key)).strip().lower()
        if value not in ("1", "true", "0", "false"):
            raise TargetError(
                f"-{key.replace('_', '-')}={value}: a fast-math option is on or off; "
                f"write -{key.replace('_', '-')} (or =true / =false)"
            )
        if value in ("1", "true"):
            flags.append(flag)
    return ("fast",) if "fast" in flags else tuple(flags)


def check_triple(opts: dict) -> None:
    """Refuse ``-mtriple`` naming another machine: code is JIT-compiled for this one."""
    triple = opts.get("mtriple")
    if triple is None:
        return
    here = llvm.get_process_triple()
    if str(triple).split("-")[:1] != here.split("-")[:1]:
        raise TargetError(
            f"-mtriple={triple!r}: ansor_lab compiles for and runs on this machine ({here}); "
            "leave -mtriple out"
        )


def check_arch(arch: Any) -> str:
    """A CUDA arch ``sm_XY`` (optionally with a letter suffix, ``sm_90a``)."""
    if not isinstance(arch, str) or not re.fullmatch(r"sm_[1-9][0-9]{1,2}[a-z]?", arch):
        raise TargetError(f"cuda arch {arch!r} should look like 'sm_90' (sm_ and the version)")
    return arch
