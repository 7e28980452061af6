"""Where a stage is computed: a small sum type.

A stage is computed at the top level of the function (``Root``), substituted into its
readers (``Inline``), inside another block's loop before that loop's body (``At``,
``compute_at``), or inside it after the body (``After``, ``reverse_compute_at``). The
last two share ``Nested``; ``Merged`` (``merge``) is an ``After`` whose merged loops
run as the host's loops, which names the block and the loop. Values are frozen and
compare by content, so ``stage.attach == At("C", "j_1")`` is how tests and call sites
ask; ``State`` has the queries that look across stages (``attached_to``,
``attach_chain``, ``is_inlined``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class Root:
    """Computed at the top level of the function, over its whole domain (the default)."""

    def __str__(self) -> str:
        return "root"


@dataclass(frozen=True)
class Inline:
    """Substituted into every reader (``compute_inline``): the stage has no loops."""

    def __str__(self) -> str:
        return "inline"


@dataclass(frozen=True)
class Nested:
    """Computed inside loop ``loop`` of block ``block`` (the base of ``At`` and ``After``)."""

    block: str
    loop: str

    def moved_to(self, loop: str) -> Nested:
        """The same placement at another loop of the same block (after a split or fuse)."""
        return replace(self, loop=loop)

    def retargeted(self, block: str, loop: str) -> Nested:
        """The same placement (before or after the body) at ``block``'s ``loop``."""
        return replace(self, block=block, loop=loop)


@dataclass(frozen=True)
class At(Nested):
    """``compute_at``: computed inside the loop, before its body, on the region read there."""

    def __str__(self) -> str:
        return f"at {self.block}.{self.loop}"


@dataclass(frozen=True)
class After(Nested):
    """``reverse_compute_at``: computed inside the loop, after its body, on what it wrote."""

    def __str__(self) -> str:
        return f"after {self.block}.{self.loop}"


@dataclass(frozen=True)
class Merged(After):
    """``merge``: computed after the loop's body, its loops ``axes`` merged into the host's.

    ``axes`` holds, outer first, ``(axis, loop)``: the block's spatial axis number ``axis``
    runs as the host block's loop ``loop`` (one iteration each); the other axes run whole.
    """

    axes: tuple = ()

    def __str__(self) -> str:
        return f"merged into {self.block}.{self.loop}"


#: where a stage is computed
Attachment = Root | Inline | At | After | Merged

#: the two placements without a loop (values carry no data, so one of each suffices)
ROOT = Root()
INLINE = Inline()

__all__ = ["Root", "Inline", "Nested", "At", "After", "Merged", "Attachment", "ROOT", "INLINE"]
