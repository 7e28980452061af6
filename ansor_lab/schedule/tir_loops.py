"""The loop steps of ``tir.Schedule``: split, fuse, reorder, tile, parallel, vectorize,
unroll, bind, annotate.

A mixin of :class:`~ansor_lab.schedule.tir_schedule.Schedule`; each method is one declared
instruction (see ``instruction_kind``) and relies on the schedule's ``_step`` machinery.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..errors import ScheduleError
from . import primitives as P
from .init_block import InitLoop, annotate_init_loop
from .instruction_kind import instruction
from .trace import LoopRV


class LoopSteps:
    """The loop transformations of a block-style schedule (mixed into ``tir.Schedule``)."""

    # -- loop transformations ---------------------------------------------------------
    @instruction(
        "Split",
        inputs=("loop", "factors"),
        outputs="list",
        ignored={"preserve_unit_iters": True},
    )
    def split(
        self,
        loop: LoopRV,
        factors: Sequence[Any] | None = None,
        preserve_unit_iters: bool = True,
        nparts: int | None = None,
        factor: int | None = None,
    ) -> list[LoopRV]:
        """Split a loop: ``factors=[None, 16]`` (one None is inferred; with no None they must
        multiply to at least the extent, as in TVM). Non-dividing factors give guarded
        code: ``[8, 16]`` of a loop of 100 runs 8 x 16 iterations, those past 100 guarded
        off (``T.where`` in the printed script).

        The loop is replaced by one loop per factor, outermost first, named ``<loop>_0``,
        ``<loop>_1``, ...; the block's indices become ``i_0 * 16 + i_1``. ``factor=`` and
        ``nparts=`` (TE's spelling) are accepted too. A factor may be a value drawn by
        ``sample_perfect_tile``. Blocks computed at the loop move to the innermost new loop.

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
            sch.split(i, factors=[None, 16])

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
        block, name = self._loop(loop, "split")
        if factors is None:
            if (factor is None) == (nparts is None):
                raise ScheduleError("split: give factors=[...], or exactly one of factor=/nparts=")
            factors = [None, factor] if factor is not None else [nparts, None]
        if not isinstance(factors, (list, tuple)):
            raise ScheduleError(
                f"split: factors must be a list such as [None, 16], got {factors!r}"
            )
        values = [self._int(f, "split") for f in factors]
        new = self._step(
            "Split",
            {"loop": loop, "factors": list(factors)},
            lambda s: P.split(s, block, name, values),
            lambda names: [self._new(LoopRV, (block, n)) for n in names],
        )
        return new

    @instruction(
        "Fuse",
        inputs=("loops",),
        varargs="loops",
        outputs="one",
        ignored={"preserve_unit_iters": True},
    )
    def fuse(self, *loops: LoopRV, preserve_unit_iters: bool = True) -> LoopRV:
        """Fuse adjacent loops of one block into one loop.

        The loops must be adjacent, in order, and all spatial or all reduction. The fused loop,
        named ``<a>_<b>_fused``, runs over the product of the extents; the original indices come
        back as ``//`` and ``%`` of it.

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
            sch.fuse(i, j)

        After::

            @T.prim_func
            def main(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32")):
                for i_j_fused in range(4096):
                    with T.block("B"):
                        v_i = T.axis.spatial(64, i_j_fused // 64)
                        v_j = T.axis.spatial(64, i_j_fused % 64)
                        T.reads(A[v_i, v_j])
                        T.writes(B[v_i, v_j])
                        B[v_i, v_j] = A[v_i, v_j] * T.float32(2.0)
        """
        resolved = [self._loop(lp, "fuse") for lp in loops]
        blocks = {b for b, _ in resolved}
        if len(blocks) > 1:
            raise ScheduleError(f"fuse: the loops belong to different blocks {sorted(blocks)}")
        if not resolved:
            raise ScheduleError("fuse: needs at least one loop")
        block = resolved[0][0]
        return self._step(
            "Fuse",
            {"loops": list(loops)},
            lambda s: P.fuse(s, block, [n for _, n in resolved]),
            lambda n: [self._new(LoopRV, (block, n))],
        )[0]

    @instruction("Reorder", inputs=("ordered_loops",), varargs="ordered_loops")
    def reorder(self, *ordered_loops: LoopRV) -> None:
        """Reorder loops of one block into the given order.

        The given loops take the positions they already occupy, in the given order; loops not named
        stay where they are. A block computed after one of the loops must stay outside the reduction
        loops.

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
            sch.reorder(j, i)

        After::

            @T.prim_func
            def main(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32")):
                for j, i in T.grid(64, 64):
                    with T.block("B"):
                        v_i, v_j = T.axis.remap("SS", [i, j])
                        T.reads(A[v_i, v_j])
                        T.writes(B[v_i, v_j])
                        B[v_i, v_j] = A[v_i, v_j] * T.float32(2.0)
        """
        resolved = [self._loop(lp, "reorder") for lp in ordered_loops]
        blocks = {b for b, _ in resolved}
        if len(blocks) > 1:
            raise ScheduleError(
                f"reorder: the loops come from different loop nests (blocks {sorted(blocks)}); "
                "reorder loops of one block at a time"
            )
        if not resolved:
            return
        block = resolved[0][0]
        self._step(
            "Reorder",
            {"ordered_loops": list(ordered_loops)},
            lambda s: P.reorder(s, block, [n for _, n in resolved]),
        )

    def tile(self, x: LoopRV, y: LoopRV, x_factor: Any, y_factor: Any) -> list[LoopRV]:
        """Sugar: split x and y and reorder to (xo, yo, xi, yi); recorded as those steps.

        Shorthand for two splits and a reorder; the trace records those three steps, so it replays
        on any schedule.

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
            sch.tile(i, j, 16, 8)

        After::

            @T.prim_func
            def main(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32")):
                for i_0, j_0, i_1, j_1 in T.grid(4, 8, 16, 8):
                    with T.block("B"):
                        v_i = T.axis.spatial(64, i_0 * 16 + i_1)
                        v_j = T.axis.spatial(64, j_0 * 8 + j_1)
                        T.reads(A[v_i, v_j])
                        T.writes(B[v_i, v_j])
                        B[v_i, v_j] = A[v_i, v_j] * T.float32(2.0)
        """
        xo, xi = self.split(x, [None, x_factor])
        yo, yi = self.split(y, [None, y_factor])
        self.reorder(xo, yo, xi, yi)
        return [xo, yo, xi, yi]

    def _annotate_kind(self, kind_name: str, loop: LoopRV, kind: str) -> None:
        value = self._lookup(loop, LoopRV, kind_name.lower())
        if isinstance(value, InitLoop) and kind_name in ("Parallel", "Vectorize", "Unroll"):
            self._step(kind_name, {"loop": loop}, lambda s: annotate_init_loop(s, value, kind))
            return
        block, name = self._loop(loop, kind_name.lower())
        prim = {"Parallel": "parallel", "Vectorize": "vectorize", "Unroll": "unroll"}.get(
            kind_name, "bind"
        )
        args = {"loop": loop} if kind_name != "Bind" else {"loop": loop, "thread_axis": kind}
        self._step(kind_name, args, lambda s: P.annotate_loop(s, block, name, kind, prim))

    @instruction("Parallel", inputs=("loop",))
    def parallel(self, loop: LoopRV) -> None:
        """Run the loop's iterations on all cores.

        The LLVM backend outlines the loop body and runs its iterations on a thread pool. A
        reduction loop cannot be parallel: its iterations update the same element (rfactor it
        first).

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
            sch.parallel(i)

        After::

            @T.prim_func
            def main(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32")):
                for i in T.parallel(64):
                    for j in range(64):
                        with T.block("B"):
                            v_i, v_j = T.axis.remap("SS", [i, j])
                            T.reads(A[v_i, v_j])
                            T.writes(B[v_i, v_j])
                            B[v_i, v_j] = A[v_i, v_j] * T.float32(2.0)
        """
        self._annotate_kind("Parallel", loop, "parallel")

    @instruction("Vectorize", inputs=("loop",))
    def vectorize(self, loop: LoopRV) -> None:
        """Run the loop as SIMD lanes.

        Usually the innermost loop, split to the target's vector width. The code generator emits
        vector loads and stores where the accesses are contiguous, and gathers or scalar code where
        they are not; a reduction loop cannot be vectorized.

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
            j_0, j_1 = sch.split(j, factors=[None, 8])
            sch.vectorize(j_1)

        After::

            @T.prim_func
            def main(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32")):
                for i, j_0 in T.grid(64, 8):
                    for j_1 in T.vectorized(8):
                        with T.block("B"):
                            v_i = T.axis.spatial(64, i)
                            v_j = T.axis.spatial(64, j_0 * 8 + j_1)
                            T.reads(A[v_i, v_j])
                            T.writes(B[v_i, v_j])
                            B[v_i, v_j] = A[v_i, v_j] * T.float32(2.0)
        """
        self._annotate_kind("Vectorize", loop, "vectorize")

    @instruction("Unroll", inputs=("loop",))
    def unroll(self, loop: LoopRV) -> None:
        """Unroll the loop fully.

        The code generator repeats the body once per iteration; keep the extent small (split first).

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
            j_0, j_1 = sch.split(j, factors=[None, 4])
            sch.unroll(j_1)

        After::

            @T.prim_func
            def main(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32")):
                for i, j_0 in T.grid(64, 16):
                    for j_1 in T.unroll(4):
                        with T.block("B"):
                            v_i = T.axis.spatial(64, i)
                            v_j = T.axis.spatial(64, j_0 * 4 + j_1)
                            T.reads(A[v_i, v_j])
                            T.writes(B[v_i, v_j])
                            B[v_i, v_j] = A[v_i, v_j] * T.float32(2.0)
        """
        self._annotate_kind("Unroll", loop, "unroll")

    @instruction("Bind", inputs=("loop",), attrs=("thread_axis",))
    def bind(self, loop: LoopRV, thread_axis: Any) -> None:
        """Bind the loop to a GPU thread index ("blockIdx.x", "threadIdx.x", "vthread"...).

        Each thread tag is bound to at most one loop of a block. A bound program is for a GPU
        target: an LLVM (CPU) build refuses it and says so.

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
            sch.bind(i, "blockIdx.x")
            sch.bind(j, "threadIdx.x")

        After::

            @T.prim_func
            def main(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32")):
                for i in T.thread_binding(64, thread="blockIdx.x"):
                    for j in T.thread_binding(64, thread="threadIdx.x"):
                        with T.block("B"):
                            v_i, v_j = T.axis.remap("SS", [i, j])
                            T.reads(A[v_i, v_j])
                            T.writes(B[v_i, v_j])
                            B[v_i, v_j] = A[v_i, v_j] * T.float32(2.0)
        """
        tag = getattr(thread_axis, "thread_tag", thread_axis)
        self._annotate_kind("Bind", loop, str(tag))

    @instruction("Annotate", inputs=("block_or_loop", "ann_val"), attrs=("ann_key",))
    def annotate(self, block_or_loop: Any, ann_key: str, ann_val: Any) -> None:
        """Attach an annotation (e.g. "pragma_auto_unroll_max_step": 64) to a loop or block.

        The pair is printed on the loop (``T.serial(..., annotations={...})``; given a block, on its
        outermost loop) and travels with the program to the code generator
        (``pragma_auto_unroll_max_step`` unrolls the loops beneath up to that many steps). A value
        drawn by ``sample_categorical`` may be given; the trace records its handle.

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
            sch.annotate(i, "pragma_auto_unroll_max_step", 16)

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
        if isinstance(block_or_loop, LoopRV):
            block, name = self._loop(block_or_loop, "annotate")
        else:
            block, name = self._block(block_or_loop, "annotate"), None
        value = self._int(ann_val, "annotate")  # a sampled value is recorded as its handle
        if ann_key == "pragma_auto_unroll_max_step" and (
            isinstance(value, bool) or not isinstance(value, int) or value < 0
        ):
            raise ScheduleError(
                f"annotate: {ann_key} takes a non-negative int (the most steps to unroll), "
                f"got {ann_val!r}"
            )
        self._step(
            "Annotate",
            {"block_or_loop": block_or_loop, "ann_key": ann_key, "ann_val": ann_val},
            lambda s: P.pragma(s, block, name, ann_key, value),
        )
