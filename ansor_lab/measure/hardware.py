"""Which machine measured a candidate, and whether a machine may measure for a target.

A measuring process (a Dask worker, or this process) describes itself with
``machine_info()``: host name, LLVM CPU name, enabled CPU features and usable cores, read
by the same host detection as ``Target("llvm")``. Records carry that description, so a
log says where each number was measured. ``target_needs`` and ``mismatch`` decide whether
a machine may measure for a task: code is only ever timed on the CPU it was built for.
"""

from __future__ import annotations

import socket
from typing import Any

from ..codegen.target import _usable_cores, as_target, host_cpu


def enabled_features(features: str) -> frozenset[str]:
    """The names of the enabled features in an LLVM feature string ("+avx2,-sse4a")."""
    return frozenset(f[1:] for f in features.split(",") if f.startswith("+"))


def machine_info() -> dict:
    """This machine: {host, cpu, features (enabled, comma-separated), cores}."""
    name, features = host_cpu()
    return {
        "host": socket.gethostname(),
        "cpu": name,
        "features": ",".join(sorted(enabled_features(features))),
        "cores": _usable_cores(),
    }


def target_needs(target: Any) -> tuple[str, frozenset[str]]:
    """(CPU name, features) a machine needs to run code built for ``target``.

    The CPU is the target's ``-mcpu``; the features are its ``-mattr`` ones, or, for a
    target of this machine's CPU given without ``-mattr``, this machine's features (what
    the code generator may use when it builds for the host).
    """
    t = as_target(target)
    if t.kind != "llvm":
        raise ValueError(f"only llvm (CPU) targets are measured on CPU machines, not {t}")
    if t.mattr:
        return t.mcpu, enabled_features(t.mattr)
    name, features = host_cpu()
    return t.mcpu, enabled_features(features) if t.mcpu == name else frozenset()


def mismatch(needs: tuple[str, frozenset[str]], machine: dict) -> str | None:
    """Why ``machine`` cannot measure for ``needs`` (None when it can)."""
    cpu, features = needs
    if machine.get("cpu") != cpu:
        return f"CPU {machine.get('cpu')!r}, not {cpu!r}"
    have = {f for f in str(machine.get("features", "")).split(",") if f}
    missing = sorted(features - have)
    if missing:
        more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
        return f"CPU {cpu!r} without {', '.join(missing[:5])}{more}"
    return None
