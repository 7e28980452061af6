"""Which machine measured a candidate, and whether a machine may measure for a target.

A measuring process (a Dask worker, or this process) describes itself with
``machine_info()``: host name, LLVM CPU name, enabled CPU features and usable cores, read
by the same host detection as ``Target("llvm")``. Records carry that description, so a
log says where each number was measured. ``target_needs`` and ``mismatch`` decide whether
a machine may measure for a task: code is only ever timed on the CPU it was built for
(they live in ``codegen.cpu_match``, which ``runtime.Module`` uses too).
"""

from __future__ import annotations

import socket

from ..codegen.cpu_match import enabled_features, mismatch, target_needs
from ..codegen.target import _usable_cores, host_cpu

__all__ = ["enabled_features", "machine_info", "mismatch", "target_needs"]


def machine_info() -> dict:
    """This machine: {host, cpu, features (enabled, comma-separated), cores}."""
    name, features = host_cpu()
    return {
        "host": socket.gethostname(),
        "cpu": name,
        "features": ",".join(sorted(enabled_features(features))),
        "cores": _usable_cores(),
    }
