"""Which CPU code built for a target needs, and whether a machine has it.

Used by the Dask runner (``measure.hardware``: code is only ever timed on the CPU it was
built for) and by ``runtime.Module`` (code built for another CPU is probed in a child
process before it runs in the caller's).
"""

from __future__ import annotations

from typing import Any

from .target import as_target, host_cpu


def enabled_features(features: str) -> frozenset[str]:
    """The names of the enabled features in an LLVM feature string ("+avx2,-sse4a")."""
    return frozenset(f[1:] for f in features.split(",") if f.startswith("+"))


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


def host_machine() -> dict:
    """This machine as ``mismatch`` reads it: {cpu, features (enabled, comma-separated)}."""
    name, features = host_cpu()
    return {"cpu": name, "features": ",".join(sorted(enabled_features(features)))}


def foreign_reason(target: Any) -> str | None:
    """Why code built for ``target`` may not run on this CPU (None: it is this CPU's).

    Foreign means: its ``-mcpu`` is not this machine's CPU name, or its ``-mattr``
    enables a feature this machine does not have.
    """
    return mismatch(target_needs(target), host_machine())
