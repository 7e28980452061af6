"""The sampling steps of ``tir.Schedule``: sample_perfect_tile, sample_categorical,
sample_compute_location, and the postproc marker.

A mixin of :class:`~ansor_lab.schedule.tir_schedule.Schedule`; a sampling instruction
records its decision in the trace, and replaying with another decision is how the search
mutates programs.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from typing import Any

from ..errors import ScheduleError
from . import primitives as P
from .instruction_kind import instruction
from .sampling import sample_categorical as _draw_categorical, sample_perfect_tile as _draw_tile
from .state import INLINE, ROOT, derive_extents
from .trace import ExprRV, LoopRV


class SamplingSteps:
    """The sampling instructions of a block-style schedule (mixed into ``tir.Schedule``)."""

    # -- sampling ---------------------------------------------------------------------
    @instruction(
        "SamplePerfectTile",
        inputs=("loop",),
        attrs=("n", "max_innermost_factor"),
        sampling=True,
        pure=True,
        outputs="list",
    )
    def sample_perfect_tile(
        self,
        loop: LoopRV,
        n: int,
        max_innermost_factor: int = 16,
        decision: Sequence[int] | None = None,
    ) -> list[ExprRV]:
        """Draw ``n`` tile sizes whose product is the loop's extent (a recorded decision).

        Pass the returned values to ``split`` as its factors. Unless ``decision`` is given, the tile
        sizes are drawn at random among those whose innermost one is at most
        ``max_innermost_factor``; the decision is recorded in the trace, where the search mutates
        it.

        Example
        -------
        Before::

            @T.prim_func
            def main(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32")):
                for i, j in T.grid(64, 64):
                    with T.block("B"):
                        v_i, v_j = T.axis.remap("SS", [i, j])
                        T.reads(A[v_i, v_j])
                        T.writes(B[v_i, v_j])
                        B[v_i, v_j] = A[v_i, v_j] * T.float32(2.0)

        Schedule::

            sch = tir.Schedule(before)
            i, j = sch.get_loops(sch.get_block("B"))
            i_factors = sch.sample_perfect_tile(i, n=2, decision=[4, 16])
            sch.split(i, factors=i_factors)

        After::

            @T.prim_func
            def main(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32")):
                for i_0, i_1, j in T.grid(4, 16, 64):
                    with T.block("B"):
                        v_i = T.axis.spatial(64, i_0 * 16 + i_1)
                        v_j = T.axis.spatial(64, j)
                        T.reads(A[v_i, v_j])
                        T.writes(B[v_i, v_j])
                        B[v_i, v_j] = A[v_i, v_j] * T.float32(2.0)
        """
        block, name = self._loop(loop, "sample_perfect_tile")
        extent = derive_extents(P.leaf(self.state, block, name, "sample_perfect_tile"))[name]
        if not _is_int(n) or not 1 <= n <= P.MAX_LOOPS:
            raise ScheduleError(
                f"sample_perfect_tile: n must be an int from 1 to {P.MAX_LOOPS} (the number of "
                f"tile sizes to draw), got {n!r}"
            )
        if not _is_int(max_innermost_factor):
            raise ScheduleError(
                "sample_perfect_tile: max_innermost_factor must be an int (<= 0: no limit), "
                f"got {max_innermost_factor!r}"
            )
        if decision is None:
            decision = _draw_tile(self._rng, extent, n, max_innermost_factor)
        if not isinstance(decision, (list, tuple)) or not all(_is_int(d) for d in decision):
            raise ScheduleError(
                f"sample_perfect_tile: the decision must be a list of {n} ints, got {decision!r}"
            )
        decision = [int(d) for d in decision]
        prod = 1
        for d in decision:
            prod *= d
        if len(decision) != n or prod != extent or min(decision, default=0) < 1:
            raise ScheduleError(
                f"sample_perfect_tile: decision {decision} does not split loop {name!r} of "
                f"extent {extent} into {n} factors; give {n} positive factors whose product "
                f"is {extent}, or no decision to draw one"
            )
        return self._step(
            "SamplePerfectTile",
            {"loop": loop, "n": n, "max_innermost_factor": max_innermost_factor},
            lambda s: decision,
            lambda ds: [self._new(ExprRV, d) for d in ds],
            decision=list(decision),
        )

    @instruction(
        "SampleCategorical",
        attrs=("candidates", "probs"),
        sampling=True,
        pure=True,
        outputs="one",
    )
    def sample_categorical(
        self, candidates: Sequence[int], probs: Sequence[float], decision: int | None = None
    ) -> ExprRV:
        """Draw one of ``candidates`` with probabilities ``probs`` (a recorded decision).

        The returned value is used like an int, e.g. as an annotation value; the decision is the
        index of the chosen candidate, recorded in the trace.

        Example
        -------
        Before::

            @T.prim_func
            def main(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32")):
                for i, j in T.grid(64, 64):
                    with T.block("B"):
                        v_i, v_j = T.axis.remap("SS", [i, j])
                        T.reads(A[v_i, v_j])
                        T.writes(B[v_i, v_j])
                        B[v_i, v_j] = A[v_i, v_j] * T.float32(2.0)

        Schedule::

            sch = tir.Schedule(before)
            i, j = sch.get_loops(sch.get_block("B"))
            v = sch.sample_categorical([0, 16, 64], [0.4, 0.3, 0.3], decision=1)
            sch.annotate(i, "pragma_auto_unroll_max_step", v)

        After::

            @T.prim_func
            def main(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32")):
                for i in T.serial(64, annotations={"pragma_auto_unroll_max_step": 16}):
                    for j in range(64):
                        with T.block("B"):
                            v_i, v_j = T.axis.remap("SS", [i, j])
                            T.reads(A[v_i, v_j])
                            T.writes(B[v_i, v_j])
                            B[v_i, v_j] = A[v_i, v_j] * T.float32(2.0)
        """
        candidates, probs = _categorical_args(candidates, probs)
        if decision is None:
            decision = _draw_categorical(self._rng, probs)
        if not _is_int(decision) or not 0 <= int(decision) < len(candidates):
            raise ScheduleError(
                f"sample_categorical: decision {decision!r} out of range: it is an index of "
                f"the {len(candidates)} candidates, an int from 0 to {len(candidates) - 1}"
            )
        d = int(decision)
        return self._step(
            "SampleCategorical",
            {"candidates": candidates, "probs": probs},
            lambda s: candidates[d],
            lambda v: [self._new(ExprRV, v)],
            decision=d,
        )[0]

    def _single_consumer(self, block: Any) -> Any:
        """The one stage that reads ``block`` (inlined ones left out), or None."""
        b = self._block(block, "sample_compute_location")
        consumers = [c for c in self.state.consumers(b) if not c.is_inlined]
        return consumers[0] if len(consumers) == 1 else None

    def compute_location_candidates(self, block: Any) -> list[tuple[str, str]]:
        """Loops ``block`` may be computed at: every loop of its single consumer."""
        c = self._single_consumer(block)
        # every loop of the single consumer encloses its reads, so each is a legal place;
        # (trying compute_at on each would cost a bound inference per loop)
        return [] if c is None else [(c.name, lp) for lp in c.leaves]

    def _drawable_locations(self, block: Any) -> list[int]:
        """The consumer loops a draw may pick, by TVM's rules (``CollectComputeLocation``):
        no loop of extent 1 (the same place as the loop around it), none after a
        reduction loop once a spatial loop follows it, and no reduction loop after the
        last spatial one (inside a row sum's lane loop, a vector partial sum would be
        computed one lane at a time). A recorded decision may still name any loop."""
        c = self._single_consumer(block)
        if c is None:
            return []
        extents = derive_extents(c)
        spatial = [c.iters[lp].kind == "spatial" for lp in c.leaves]
        last_spatial = max((k for k, sp in enumerate(spatial) if sp), default=-1)
        drawable, seen_reduce = [], False
        for k, (lp, sp) in enumerate(zip(c.leaves, spatial)):
            if extents.get(lp) == 1:
                continue
            if sp and seen_reduce:
                break
            if not sp:
                seen_reduce = True
                if k > last_spatial:
                    break
            drawable.append(k)
        return drawable

    @instruction(
        "SampleComputeLocation",
        inputs=("block",),
        sampling=True,
        pure=True,
        outputs="one",
    )
    def sample_compute_location(self, block: Any, decision: int | None = None) -> LoopRV:
        """Draw where to compute ``block``: -2 inline, -1 root, k the k-th candidate loop.

        The candidates are the loops of the block's single consumer; pass the returned location to
        ``compute_at``, which then computes the block there (or inlines it, or leaves it at the
        root). The decision is recorded in the trace. A draw skips the loops TVM's
        SampleComputeLocation skips (extent 1, and reduction loops inside the consumer's
        spatial ones); a given decision may name any of them.

        Example
        -------
        Before::

            @T.prim_func
            def main(A: T.Buffer((64, 64), "float32"), C: T.Buffer((64, 64), "float32")):
                B = T.alloc_buffer((64, 64), "float32")
                for i, j in T.grid(64, 64):
                    with T.block("B"):
                        v_i, v_j = T.axis.remap("SS", [i, j])
                        T.reads(A[v_i, v_j])
                        T.writes(B[v_i, v_j])
                        B[v_i, v_j] = A[v_i, v_j] * T.float32(2.0)
                for i, j in T.grid(64, 64):
                    with T.block("C"):
                        v_i, v_j = T.axis.remap("SS", [i, j])
                        T.reads(B[v_i, v_j])
                        T.writes(C[v_i, v_j])
                        C[v_i, v_j] = B[v_i, v_j] + T.float32(1.0)

        Schedule::

            sch = tir.Schedule(before)
            B = sch.get_block("B")
            loc = sch.sample_compute_location(B, decision=0)
            sch.compute_at(B, loc)

        After::

            @T.prim_func
            def main(A: T.Buffer((64, 64), "float32"), C: T.Buffer((64, 64), "float32")):
                B = T.alloc_buffer((64, 64), "float32")
                for i_1 in range(64):
                    for j in range(64):
                        with T.block("B"):
                            v_i, v_j = T.axis.remap("SS", [i_1, j])
                            T.reads(A[v_i, v_j])
                            T.writes(B[v_i, v_j])
                            B[v_i, v_j] = A[v_i, v_j] * T.float32(2.0)
                    for j_1 in range(64):
                        with T.block("C"):
                            v_i, v_j = T.axis.remap("SS", [i_1, j_1])
                            T.reads(B[v_i, v_j])
                            T.writes(C[v_i, v_j])
                            C[v_i, v_j] = B[v_i, v_j] + T.float32(1.0)
        """
        b = self._block(block, "sample_compute_location")
        cands = self.compute_location_candidates(block)
        st = self.state.stage(b)
        # inline only where compute_inline accepts it: never a block that others are
        # computed inside (a layer norm's sum2 in its rstd) or one nothing reads
        inlinable = (
            not st.op.reduce_axis
            and not self.state.is_output(st)
            and not self.state.attached_to(st.name)
            and bool(self.state.consumers(st.name))
        )
        places = ([-2] if inlinable else []) + [-1]
        choices = places + self._drawable_locations(block)
        self.location_choices.append(tuple(choices))
        if decision is None:
            decision = self._rng.choice(choices)
        if not _is_int(decision) or (decision not in places and not 0 <= decision < len(cands)):
            raise ScheduleError(
                f"sample_compute_location: decision {decision} is not one of "
                f"{places + list(range(len(cands)))}"
            )
        value = INLINE if decision == -2 else ROOT if decision == -1 else cands[decision]
        return self._step(
            "SampleComputeLocation",
            {"block": block},
            lambda s: value,
            lambda v: [self._new(LoopRV, v)],
            decision=int(decision),
        )[0]


def _is_int(x: Any) -> bool:
    return isinstance(x, numbers.Integral) and not isinstance(x, bool)


def _categorical_args(candidates: Any, probs: Any) -> tuple[list[int], list[float]]:
    """``sample_categorical``'s candidates as ints and probs as weights, or our error."""
    try:
        candidates, probs = list(candidates), list(probs)
    except TypeError:
        raise ScheduleError("sample_categorical: candidates and probs are lists") from None
    if not candidates or len(candidates) != len(probs):
        raise ScheduleError(
            f"sample_categorical: candidates and probs must have one length, got "
            f"{len(candidates)} and {len(probs)}: give one probability per candidate"
        )
    if not all(_is_int(c) or (isinstance(c, float) and c.is_integer()) for c in candidates):
        raise ScheduleError(f"sample_categorical: candidates are ints, got {candidates!r}")
    if not all(isinstance(p, numbers.Real) and not isinstance(p, bool) for p in probs):
        raise ScheduleError(f"sample_categorical: probs are numbers, got {probs!r}")
    weights = [float(p) for p in probs]
    if not all(math.isfinite(p) and p >= 0 for p in weights) or sum(weights) <= 0:
        raise ScheduleError(
            f"sample_categorical: probs {weights} must be finite, at least 0 and not all 0"
        )
    return [int(c) for c in candidates], weights
