"""Typed loop kinds and loop annotations of a stage.

An iter is spatial or a reduction (``IterKind``); a leaf loop may be annotated to run in
parallel, vectorized or unrolled (``LoopKind``) or be bound to a GPU thread axis
(``ThreadBinding``). The enums are string-valued, so they compare equal to, print as and
serialize as the spellings users write ("reduce", "parallel"); ``annotation`` turns a
user's string into the typed value and ``str`` turns it back.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class _StrEnum(str, Enum):
    """A string-valued enum that prints and reprs as its value (as the strings did)."""

    def __str__(self) -> str:
        return self.value

    def __repr__(self) -> str:
        return repr(self.value)


class IterKind(_StrEnum):
    """What an iter runs over: an output axis or a reduction axis."""

    SPATIAL = "spatial"
    REDUCE = "reduce"


class LoopKind(_StrEnum):
    """How a leaf loop runs (a loop without an annotation is serial)."""

    PARALLEL = "parallel"
    VECTORIZE = "vectorize"
    UNROLL = "unroll"


# Python 3.11 finds an enum member on its class through a descriptor (about 65 ns, five
# times a global); the checks that run over every loop at every step compare with these.
SPATIAL, REDUCE = IterKind.SPATIAL, IterKind.REDUCE
PARALLEL, VECTORIZE, UNROLL = LoopKind.PARALLEL, LoopKind.VECTORIZE, LoopKind.UNROLL


@dataclass(frozen=True)
class ThreadBinding:
    """The loop is bound to a GPU thread axis such as "threadIdx.x" (``bind``)."""

    tag: str

    def __str__(self) -> str:
        return self.tag


#: what a leaf loop may be annotated with
Annotation = LoopKind | ThreadBinding


def annotation(text: str) -> Annotation:
    """The typed annotation a user's string names ("parallel"... or a thread tag)."""
    try:
        return LoopKind(text)
    except ValueError:
        return ThreadBinding(text)


__all__ = [
    "IterKind",
    "LoopKind",
    "ThreadBinding",
    "Annotation",
    "annotation",
    "SPATIAL",
    "REDUCE",
    "PARALLEL",
    "VECTORIZE",
    "UNROLL",
]
