"""``ms.space_generator``: where candidate programs come from.

``PostOrderApply`` is the automatic space (here: Ansor's sketches with random annotation,
the auto-scheduler's search); ``ScheduleFn(fn)`` is a user's stochastic schedule function
(the MLC course's ``stochastic_schedule_mm``): every candidate is ``fn`` replayed on a
fresh schedule with fresh random decisions.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..errors import TaskError


class SpaceGenerator:
    """Base class of the search spaces ``tune_tir(space=...)`` takes."""


@dataclass
class ScheduleFn(SpaceGenerator):
    """A stochastic schedule function ``fn(sch) -> sch | None | list[sch]`` as the space."""

    sch_fn: Callable
    sch_rules: Any = None
    postprocs: Any = None
    mutator_probs: Any = None

    def __post_init__(self) -> None:
        if not callable(self.sch_fn):
            raise TaskError(
                "ScheduleFn takes a function of a tir.Schedule, e.g. "
                "ms.space_generator.ScheduleFn(stochastic_schedule_mm)"
            )


@dataclass
class PostOrderApply(SpaceGenerator):
    """The automatic space: the schedule rules applied to every block (Ansor's sketches).

    A custom ``sch_rules`` / ``postprocs`` / ``mutator_probs`` selects which of our sketch
    rules, annotations and mutations run (see ``rule_set.py`` for the mapping)."""

    f_block_filter: Any = None
    sch_rules: Any = "from-target"
    postprocs: Any = "from-target"
    mutator_probs: Any = "from-target"

    def check_supported(self) -> None:
        """A custom rule list is mapped onto our sketch rules (``rule_set.py``)."""
        if self.f_block_filter is not None:
            raise TaskError("PostOrderApply(f_block_filter=...) is not supported; leave it out")


def as_space(space: Any) -> SpaceGenerator:
    """``tune_tir``'s ``space=``: a generator, a function, or "post-order-apply"."""
    if space in (None, "post-order-apply"):
        return PostOrderApply()
    if isinstance(space, SpaceGenerator):
        return space
    if callable(space):
        return ScheduleFn(space)
    raise TaskError(
        f"space={space!r}: pass 'post-order-apply', a ScheduleFn(fn) or a schedule function"
    )
