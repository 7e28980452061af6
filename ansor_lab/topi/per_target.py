"""TOPI's per-target schedule namespaces: the ones ansor_lab provides and the others.

``topi.generic``, ``topi.x86`` and ``topi.cuda`` hold TVM's classic hand-written schedules
(``topi.cuda.schedule_reduce(g)`` under ``with tvm.target.cuda():``, as TVM's introduction
to TOPI calls it; see ``topi.schedules``); a name they lack raises MissingOperatorError
saying what to write instead. The other namespaces (``topi.arm_cpu``, ``topi.rocm``...)
are not provided: any attribute raises OutOfScopeError with the same advice. Here a
schedule is written with ``te.create_schedule`` and its primitives, or found by the
auto-scheduler; the operators themselves are in ``topi`` and ``topi.nn``.
"""

from __future__ import annotations

from typing import Any

from ..errors import MissingOperatorError, OutOfScopeError

#: TVM's per-target TOPI namespaces ansor_lab does not provide
NAMESPACES = ("arm_cpu", "rocm", "mali", "intel_graphics", "hls", "adreno", "bifrost",
              "vision", "hexagon")  # fmt: skip
#: the ones it provides (``topi.schedules``)
PROVIDED = ("cuda", "x86", "generic")

_WHAT_TO_DO = (
    "take the operator from topi / topi.nn (topi.sum, topi.nn.softmax, "
    "topi.nn.conv2d_nchw) and schedule it yourself (s = te.create_schedule(out.op); "
    "s[out].split / bind / parallel / vectorize), or let the auto-scheduler find a schedule "
    "(auto_scheduler.SearchTask(func=..., args=..., target=...).tune(...); without a GPU, "
    "runner=auto_scheduler.EmulatedRunner())"
)
_ADVICE = (
    "TOPI's hand-written per-target schedules and compute variants are not part of "
    f"ansor_lab: {_WHAT_TO_DO}"
)


def missing_per_target(namespace: str, attr: str, provided: list[str]) -> AttributeError:
    """The error for a name ``topi.<namespace>`` (cuda, x86, generic) lacks: the advice and
    what the namespace does provide; dunder probes get a plain AttributeError."""
    if attr.startswith("__") and attr.endswith("__"):
        return AttributeError(f"module 'topi.{namespace}' has no attribute {attr!r}")
    return MissingOperatorError(
        f"topi.{namespace}.{attr}: not provided by ansor_lab, whose topi.{namespace} holds "
        f"only TVM's classic schedules ({', '.join(sorted(provided))}); {_WHAT_TO_DO}"
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
