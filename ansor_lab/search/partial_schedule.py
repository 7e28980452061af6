"""Warm-starting a search from the steps a user is sure of (``SketchPolicy(partial_schedule=)``).

A user who knows part of a good schedule (inline this stage, pack that input, split the
reduction by 16) gives it as a function of a ``tir.Schedule`` or as a trace; the search
starts every sketch from it, so the sketch rules and random annotation fill in the rest
and every candidate keeps the user's steps (they are at the head of its trace). Rules
that no longer apply to the partially scheduled stages are dropped and counted like any
refused step; with none left, the user's program itself is annotated and searched.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..errors import TaskError
from ..schedule.trace import Trace


def as_partial_schedule(partial: Any) -> Callable[[Any], None] | None:
    """A function applying the user's steps to a schedule (None: start from scratch)."""
    if partial is None:
        return None
    if isinstance(partial, (dict, str)):
        partial = Trace.from_json(partial)
    if isinstance(partial, Trace):
        trace = partial

        def apply(sch: Any) -> None:
            trace.apply_to_schedule(sch)

        return apply
    if callable(partial):

        def call(sch: Any) -> None:
            partial(sch)

        return call
    raise TaskError(
        "partial_schedule takes a function of a tir.Schedule (def steps(sch): ...), a Trace "
        f"or its JSON, got {type(partial).__name__}"
    )


def starting_schedule(task: Any, partial: Callable[[Any], None] | None) -> Callable[[], Any]:
    """The sketch generator's factory: a fresh schedule with the user's steps applied."""

    def make() -> Any:
        sch = task.make_schedule(seed=0)
        if partial is not None:
            partial(sch)
        return sch

    if partial is not None:  # refuse a partial schedule that fails on its own, up front
        try:
            make()
        except Exception as err:  # noqa: BLE001 - reported with its class, whatever it is
            raise TaskError(
                f"the partial schedule fails on a fresh schedule of the task: "
                f"{type(err).__name__}: {err}"
            ) from err
    return make
