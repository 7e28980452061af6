"""``tir.Schedule.merge``: loops of different blocks merged into one (a mixin)."""

from __future__ import annotations

from ..errors import ScheduleError
from . import primitives as P
from .instruction_kind import instruction
from .trace import LoopRV


class MergeSteps:
    """``merge`` (mixed into ``tir.Schedule``)."""

    @instruction("Merge", inputs=("loops",), varargs="loops", outputs="one")
    def merge(self, *loops: LoopRV) -> LoopRV:
        """Merge loops of the same extent at the same depth, from different blocks, into one.

        As TVM requires: the loops start at 0, have the same extent and nesting depth,
        and carry no annotation or thread binding; merge outer loops before inner ones.
        The later blocks run inside the first block's loop, after its body, one index of
        the merged loop per iteration; a block may read only what that same iteration of
        the first block wrote.

        Example
        -------
        Before::

            @T.prim_func
            def main(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"), C: T.Buffer((64, 64), "float32")):
                for i, j in T.grid(64, 64):
                    with T.block("B"):
                        v_i, v_j = T.axis.remap("SS", [i, j])
                        T.reads(A[v_i, v_j])
                        T.writes(B[v_i, v_j])
                        B[v_i, v_j] = A[v_i, v_j] * T.float32(2.0)
                for i, j in T.grid(64, 64):
                    with T.block("C"):
                        v_i, v_j = T.axis.remap("SS", [i, j])
                        T.reads(A[v_i, v_j])
                        T.writes(C[v_i, v_j])
                        C[v_i, v_j] = A[v_i, v_j] * T.float32(3.0)

        Schedule::

            sch = tir.Schedule(before)
            i1, _ = sch.get_loops(sch.get_block("B"))
            i2, _ = sch.get_loops(sch.get_block("C"))
            sch.merge(i1, i2)

        After::

            @T.prim_func
            def main(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"), C: T.Buffer((64, 64), "float32")):
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
                            T.reads(A[v_i, v_j])
                            T.writes(C[v_i, v_j])
                            C[v_i, v_j] = A[v_i, v_j] * T.float32(3.0)
        """  # noqa: E501
        resolved = [self._loop(lp, "merge") for lp in loops]
        if len(resolved) < 2:
            raise ScheduleError("merge: needs at least two loops (of different blocks)")
        return self._step(
            "Merge",
            {"loops": list(loops)},
            lambda s: P.merge(s, resolved),
            lambda host: [self._new(LoopRV, host)],
        )[0]
