"""The compute-location steps of ``tir.Schedule``: compute_at, reverse_compute_at,
compute_inline, reverse_compute_inline, compute_root.

A mixin of :class:`~ansor_lab.schedule.tir_schedule.Schedule`.
"""

from __future__ import annotations

from typing import Any

from . import primitives as P
from .instruction_kind import instruction
from .state import INLINE, ROOT
from .trace import LoopRV


class LocationSteps:
    """Where each block is computed (mixed into ``tir.Schedule``)."""

    # -- compute locations ------------------------------------------------------------
    @instruction(
        "ComputeAt",
        inputs=("block", "loop"),
        attrs=("preserve_unit_loops",),
        ignored={"preserve_unit_loops": False, "index": -1},
    )
    def compute_at(
        self, block: Any, loop: LoopRV, preserve_unit_loops: bool = False, index: int = -1
    ) -> None:
        """Compute ``block`` inside ``loop`` of one of its consumers (only the region used).

        Each iteration of ``loop`` computes only the region of the producer that iteration reads,
        into a buffer shrunk to that region (``(1, 64)`` below). ``loop`` may also be the root or
        inline location drawn by ``sample_compute_location``.

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
            i, j = sch.get_loops(sch.get_block("C"))
            sch.compute_at(sch.get_block("B"), i)

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
        b = self._block(block, "compute_at")
        value = self._lookup(loop, LoopRV, "compute_at")
        self._keep_unit_loops(b, preserve_unit_loops)
        args = {"block": block, "loop": loop, "preserve_unit_loops": preserve_unit_loops}
        if value == ROOT:
            self._step("ComputeAt", args, lambda s: P.compute_root(s, b))
        elif value == INLINE:
            self._step("ComputeAt", args, lambda s: P.compute_inline(s, b))
        else:
            target, name = value
            self._step("ComputeAt", args, lambda s: P.compute_at(s, b, target, name))

    @instruction(
        "ReverseComputeAt",
        inputs=("block", "loop"),
        attrs=("preserve_unit_loops",),
        ignored={"preserve_unit_loops": False, "index": -1},
    )
    def reverse_compute_at(
        self, block: Any, loop: LoopRV, preserve_unit_loops: bool = False, index: int = -1
    ) -> None:
        """Compute consumer ``block`` right after ``loop`` of its producer, on its output.

        The consumer moves under ``loop`` of the block it reads, and each iteration consumes the
        region just produced, so the intermediate shrinks to that region. ``loop`` must be outside
        the producer's reduction loops.

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
            i, j = sch.get_loops(sch.get_block("B"))
            sch.reverse_compute_at(sch.get_block("C"), i)

        After::

            @T.prim_func
            def main(A: T.Buffer((64, 64), "float32"), C: T.Buffer((64, 64), "float32")):
                B = T.alloc_buffer((64, 64), "float32")
                for i in range(64):
                    for j in range(64):
                        with T.block("B"):
                            v_i, v_j = T.axis.remap("SS", [i, j])
                            T.reads(A[v_i, v_j])
                            T.writes(B[v_i, v_j])
                            B[v_i, v_j] = A[v_i, v_j] * T.float32(2.0)
                    for j_1 in range(64):
                        with T.block("C"):
                            v_i, v_j = T.axis.remap("SS", [i, j_1])
                            T.reads(B[v_i, v_j])
                            T.writes(C[v_i, v_j])
                            C[v_i, v_j] = B[v_i, v_j] + T.float32(1.0)
        """
        b = self._block(block, "reverse_compute_at")
        target, name = self._loop(loop, "reverse_compute_at")
        self._keep_unit_loops(b, preserve_unit_loops)
        self._step(
            "ReverseComputeAt",
            {"block": block, "loop": loop, "preserve_unit_loops": preserve_unit_loops},
            lambda s: P.reverse_compute_at(s, b, target, name),
        )

    def _keep_unit_loops(self, block: str, keep: bool) -> None:
        # get_loops hides the moved block's unit loops unless asked to keep them, as TVM
        if keep:
            self._unit_loops_kept.add(block)
        else:
            self._unit_loops_kept.discard(block)

    @instruction("ComputeInline", inputs=("block",))
    def compute_inline(self, block: Any) -> None:
        """Inline an elementwise block into its consumers.

        Every read of the block's buffer is replaced by the block's expression and the buffer
        disappears. Only elementwise (non-reduction) blocks that are not outputs of the function can
        be inlined.

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
            sch.compute_inline(sch.get_block("B"))

        After::

            @T.prim_func
            def main(A: T.Buffer((64, 64), "float32"), C: T.Buffer((64, 64), "float32")):
                for i, j in T.grid(64, 64):
                    with T.block("C"):
                        v_i, v_j = T.axis.remap("SS", [i, j])
                        T.reads(A[v_i, v_j])
                        T.writes(C[v_i, v_j])
                        C[v_i, v_j] = A[v_i, v_j] * T.float32(2.0) + T.float32(1.0)
        """
        b = self._block(block, "compute_inline")
        self._step("ComputeInline", {"block": block}, lambda s: P.compute_inline(s, b))

    @instruction("ReverseComputeInline", inputs=("block",))
    def reverse_compute_inline(self, block: Any) -> None:
        """Inline an elementwise consumer into its producer's loops.

        The consumer must read exactly one computed block, which is not a reduction and not an
        output: the producer's loops then store the consumer's expression of the produced value, and
        the intermediate buffer disappears.

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
            sch.reverse_compute_inline(sch.get_block("C"))

        After::

            @T.prim_func
            def main(A: T.Buffer((64, 64), "float32"), C: T.Buffer((64, 64), "float32")):
                for i, j in T.grid(64, 64):
                    with T.block("C"):
                        v_i, v_j = T.axis.remap("SS", [i, j])
                        T.reads(A[v_i, v_j])
                        T.writes(C[v_i, v_j])
                        C[v_i, v_j] = A[v_i, v_j] * T.float32(2.0) + T.float32(1.0)
        """
        b = self._block(block, "reverse_compute_inline")
        self._step(
            "ReverseComputeInline", {"block": block}, lambda s: P.reverse_compute_inline(s, b)
        )

    @instruction("ComputeRoot", inputs=("block",))
    def compute_root(self, block: Any) -> None:
        """Compute ``block`` at the top level.

        Undoes a ``compute_at`` or ``reverse_compute_at``: the block gets its own loop nest again,
        at the top level, over its whole buffer.

        Example
        -------
        Before::

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

        Schedule::

            sch = tir.Schedule(before)
            i, j = sch.get_loops(sch.get_block("C"))
            sch.compute_at(sch.get_block("B"), i)
            # (Before is the program at this point)
            sch.compute_root(sch.get_block("B"))

        After::

            @T.prim_func
            def main(A: T.Buffer((64, 64), "float32"), C: T.Buffer((64, 64), "float32")):
                B = T.alloc_buffer((64, 64), "float32")
                for i, j in T.grid(64, 64):
                    with T.block("B"):
                        v_i, v_j = T.axis.remap("SS", [i, j])
                        T.reads(A[v_i, v_j])
                        T.writes(B[v_i, v_j])
                        B[v_i, v_j] = A[v_i, v_j] * T.float32(2.0)
                for i_1, j_1 in T.grid(64, 64):
                    with T.block("C"):
                        v_i, v_j = T.axis.remap("SS", [i_1, j_1])
                        T.reads(B[v_i, v_j])
                        T.writes(C[v_i, v_j])
                        C[v_i, v_j] = B[v_i, v_j] + T.float32(1.0)
        """
        b = self._block(block, "compute_root")
        self._step("ComputeRoot", {"block": block}, lambda s: P.compute_root(s, b))
