"""TOPI's per-target schedule namespaces (``topi.cuda``, ``topi.x86``, ``topi.generic``...),
which ansor_lab does not provide: reaching one names what to write instead.

TVM's introduction to TOPI calls ``topi.cuda.schedule_reduce(g)`` under
``with tvm.target.cuda():``. Here a schedule is written with ``te.create_schedule`` and its
primitives, or found by the auto-scheduler; the operators themselves are in ``topi`` and
``topi.nn``.
"""

from __future__ import annotations

from typing import Any

from ..errors import OutOfScopeError

#: TVM's per-target TOPI namespaces
NAMESPACES = ("cuda", "x86", "generic", "arm_cpu", "rocm", "mali", "intel_graphics", "hls",
              "adreno", "bifrost", "vision", "hexagon")  # fmt: skip

_ADVICE = (
    "TOPI's hand-written per-target schedules and compute variants are not part of "
    "ansor_lab: take the operator from topi / topi.nn (topi.sum, topi.nn.softmax, "
    "topi.nn.conv2d_nchw) and schedule it yourself (s = te.create_schedule(out.op); "
    "s[out].split / bind / parallel / vectorize), or let the auto-scheduler find a schedule "
    "(auto_scheduler.SearchTask(func=..., args=..., target=...).tune(...); without a GPU, "
    "runner=auto_scheduler.EmulatedRunner())"
)


class PerTargetNamespace:
    """``topi.cuda`` and the like: any attribute raises OutOfScopeError with the advice."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)  # tools probe dunders; keep them ordinary
        raise OutOfScopeError(f"topi.{self._name}.{attr}: {_ADVICE}")

    def __repr__(self) -> str:
        return f"<topi.{self._name}: not provided by ansor_lab>"
