"""The storage steps of ``tir.Schedule``: cache_read, cache_write, rfactor,
decompose_reduction, storage_align, set_scope, transform_layout.

A mixin of :class:`~ansor_lab.schedule.tir_schedule.Schedule`.
"""

from __future__ import annotations

from typing import Any

from ..dsl import expr as E
from ..errors import ScheduleError
from . import primitives as P
from .init_block import InitBlock
from .instruction_kind import instruction
from .trace import BlockRV, LoopRV


def _index_map_text(perm: list) -> str:
    """A permutation of axes as the index map TVM prints: ``lambda i0, i1: (i1, i0)``."""
    names = [f"i{d}" for d in range(len(perm))]
    out = ", ".join(names[a] for a in perm) + ("," if len(perm) == 1 else "")
    return f"lambda {', '.join(names)}: ({out})"


class StorageSteps:
    """Caches, reduction factoring and buffer layout (mixed into ``tir.Schedule``)."""

    # -- caches, rfactor, storage -----------------------------------------------------
    @instruction(
        "CacheRead",
        inputs=("block", "consumer_blocks"),
        attrs=("read_buffer_index", "storage_scope"),
        outputs="one",
    )
    def cache_read(
        self,
        block: Any,
        read_buffer_index: int | str,
        storage_scope: str,
        consumer_blocks: Any = None,
    ) -> BlockRV:
        """A block copying the ``read_buffer_index``-th tensor ``block`` reads into
        ``storage_scope``; ``block`` then reads the copy.

        The copy block (returned, named ``<tensor>_<scope>``) runs at the top level over the whole
        tensor; ``compute_at`` it into a loop of the reader to copy one tile at a time.
        ``read_buffer_index`` counts the tensors the block reads, in order of first read (a tensor
        name is accepted too); ``consumer_blocks`` lists other readers that should read the copy as
        well.

        Example
        -------
        Before::

            @T.prim_func
            def main(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
                for i, j, k in T.grid(16, 16, 16):
                    with T.block("C"):
                        v_i, v_j, v_k = T.axis.remap("SSR", [i, j, k])
                        T.reads(A[v_i, v_k], B[v_k, v_j])
                        T.writes(C[v_i, v_j])
                        with T.init():
                            C[v_i, v_j] = T.float32(0.0)
                        C[v_i, v_j] = C[v_i, v_j] + A[v_i, v_k] * B[v_k, v_j]

        Schedule::

            sch = tir.Schedule(before)
            sch.cache_read(sch.get_block("C"), 0, "local")

        After::

            @T.prim_func
            def main(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
                A_local = T.alloc_buffer((16, 16), "float32", scope="local")
                for ax0, ax1 in T.grid(16, 16):
                    with T.block("A_local"):
                        v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
                        T.reads(A[v_ax0, v_ax1])
                        T.writes(A_local[v_ax0, v_ax1])
                        A_local[v_ax0, v_ax1] = A[v_ax0, v_ax1]
                for i, j, k in T.grid(16, 16, 16):
                    with T.block("C"):
                        v_i, v_j, v_k = T.axis.remap("SSR", [i, j, k])
                        T.reads(A_local[v_i, v_k], B[v_k, v_j])
                        T.writes(C[v_i, v_j])
                        with T.init():
                            C[v_i, v_j] = T.float32(0.0)
                        C[v_i, v_j] = C[v_i, v_j] + A_local[v_i, v_k] * B[v_k, v_j]
        """  # noqa: E501
        b = self._block(block, "cache_read")
        others = [self._block(c, "cache_read") for c in (consumer_blocks or [])]
        args = {
            "block": block,
            "read_buffer_index": read_buffer_index,
            "storage_scope": storage_scope,
        }
        if consumer_blocks:
            args["consumer_blocks"] = list(consumer_blocks)
        return self._step(
            "CacheRead",
            args,
            lambda s: P.cache_read(s, b, read_buffer_index, storage_scope, others),
            lambda n: [self._new(BlockRV, n)],
        )[0]

    @instruction(
        "CacheWrite",
        inputs=("block",),
        attrs=("write_buffer_index", "storage_scope", "te_style"),
        outputs="one",
    )
    def cache_write(
        self,
        block: Any,
        write_buffer_index: int = 0,
        storage_scope: str = "local",
        te_style: bool = False,
    ) -> BlockRV:
        """``block`` computes into a ``storage_scope`` buffer; the returned block copies it out.

        (``te_style=True`` gives TE's ``s.cache_write`` instead: the returned block computes.)

        The computation keeps the block's name and loops but writes the ``<tensor>_<scope>`` buffer;
        the returned block copies that buffer into the original one. Move the copy next to the
        computation with ``reverse_compute_at`` to write one tile at a time.

        Example
        -------
        Before::

            @T.prim_func
            def main(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
                for i, j, k in T.grid(16, 16, 16):
                    with T.block("C"):
                        v_i, v_j, v_k = T.axis.remap("SSR", [i, j, k])
                        T.reads(A[v_i, v_k], B[v_k, v_j])
                        T.writes(C[v_i, v_j])
                        with T.init():
                            C[v_i, v_j] = T.float32(0.0)
                        C[v_i, v_j] = C[v_i, v_j] + A[v_i, v_k] * B[v_k, v_j]

        Schedule::

            sch = tir.Schedule(before)
            sch.cache_write(sch.get_block("C"), 0, "local")

        After::

            @T.prim_func
            def main(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
                C_local = T.alloc_buffer((16, 16), "float32", scope="local")
                for i, j, k in T.grid(16, 16, 16):
                    with T.block("C"):
                        v_i, v_j, v_k = T.axis.remap("SSR", [i, j, k])
                        T.reads(A[v_i, v_k], B[v_k, v_j])
                        T.writes(C_local[v_i, v_j])
                        with T.init():
                            C_local[v_i, v_j] = T.float32(0.0)
                        C_local[v_i, v_j] = C_local[v_i, v_j] + A[v_i, v_k] * B[v_k, v_j]
                for i_1, j_1 in T.grid(16, 16):
                    with T.block("C_local"):
                        v_i, v_j = T.axis.remap("SS", [i_1, j_1])
                        T.reads(C_local[v_i, v_j])
                        T.writes(C[v_i, v_j])
                        C[v_i, v_j] = C_local[v_i, v_j]
        """  # noqa: E501
        b = self._block(block, "cache_write")
        if write_buffer_index != 0:
            raise ScheduleError("cache_write: a block writes one buffer; use index 0")
        args = {
            "block": block,
            "write_buffer_index": write_buffer_index,
            "storage_scope": storage_scope,
        }
        if te_style:
            args["te_style"] = True
        return self._step(
            "CacheWrite",
            args,
            lambda s: P.cache_write(s, b, storage_scope, te_style),
            lambda n: [self._new(BlockRV, n)],
        )[0]

    @instruction("RFactor", inputs=("loop",), attrs=("factor_axis",), outputs="one")
    def rfactor(self, loop: LoopRV, factor_axis: int = 0) -> BlockRV:
        """Factor a reduction loop out into a new block of partial results (returned).

        The new block ``<tensor>_rf`` computes, for every iteration of ``loop``, a partial result
        over the other reduction loops, stored with the loop's index as axis ``factor_axis``; the
        original block then reduces the partial results. The partial results' loop is spatial, so it
        can be parallelized or vectorized.

        Example
        -------
        Before::

            @T.prim_func
            def main(A: T.Buffer((16, 64), "float32"), B: T.Buffer((16,), "float32")):
                for i, k in T.grid(16, 64):
                    with T.block("B"):
                        v_i, v_k = T.axis.remap("SR", [i, k])
                        T.reads(A[v_i, v_k])
                        T.writes(B[v_i])
                        with T.init():
                            B[v_i] = T.float32(0.0)
                        B[v_i] = B[v_i] + A[v_i, v_k]

        Schedule::

            sch = tir.Schedule(before)
            i, k = sch.get_loops(sch.get_block("B"))
            k_0, k_1 = sch.split(k, factors=[None, 4])
            sch.rfactor(k_1, 0)

        After::

            @T.prim_func
            def main(A: T.Buffer((16, 64), "float32"), B: T.Buffer((16,), "float32")):
                B_rf = T.alloc_buffer((4, 16), "float32")
                for k_1, i, k_0 in T.grid(4, 16, 16):
                    with T.block("B_rf"):
                        v_k_1, v_i, v_k_0 = T.axis.remap("SSR", [k_1, i, k_0])
                        T.reads(A[v_i, v_k_0 * 4 + v_k_1])
                        T.writes(B_rf[v_k_1, v_i])
                        with T.init():
                            B_rf[v_k_1, v_i] = T.float32(0.0)
                        B_rf[v_k_1, v_i] = B_rf[v_k_1, v_i] + A[v_i, v_k_0 * 4 + v_k_1]
                for i_1, k_1_v in T.grid(16, 4):
                    with T.block("B"):
                        v_i, v_k_1_v = T.axis.remap("SR", [i_1, k_1_v])
                        T.reads(B_rf[v_k_1_v, v_i])
                        T.writes(B[v_i])
                        with T.init():
                            B[v_i] = T.float32(0.0)
                        B[v_i] = B[v_i] + B_rf[v_k_1_v, v_i]
        """
        block, name = self._loop(loop, "rfactor")
        return self._step(
            "RFactor",
            {"loop": loop, "factor_axis": factor_axis},
            lambda s: P.rfactor(s, block, name, factor_axis),
            lambda n: [self._new(BlockRV, n)],
        )[0]

    @instruction("DecomposeReduction", inputs=("block", "loop"), outputs="one")
    def decompose_reduction(self, block: Any, loop: LoopRV) -> BlockRV:
        """Move the reduction's initialisation before ``loop``.

        The initialisation (``C[i, j] = 0``) gets its own copy of the spatial loops from ``loop``
        inward, placed just before ``loop``; the update keeps the original nest. ``loop`` is a loop
        of ``block`` that is not nested inside one of its reduction loops.

        Example
        -------
        Before::

            @T.prim_func
            def main(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
                for i, j, k in T.grid(16, 16, 16):
                    with T.block("C"):
                        v_i, v_j, v_k = T.axis.remap("SSR", [i, j, k])
                        T.reads(A[v_i, v_k], B[v_k, v_j])
                        T.writes(C[v_i, v_j])
                        with T.init():
                            C[v_i, v_j] = T.float32(0.0)
                        C[v_i, v_j] = C[v_i, v_j] + A[v_i, v_k] * B[v_k, v_j]

        Schedule::

            sch = tir.Schedule(before)
            C = sch.get_block("C")
            i, j, k = sch.get_loops(C)
            sch.decompose_reduction(C, i)

        After::

            @T.prim_func
            def main(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
                for i_init, j_init in T.grid(16, 16):
                    with T.block("C_init"):
                        v_i, v_j = T.axis.remap("SS", [i_init, j_init])
                        T.reads()
                        T.writes(C[v_i, v_j])
                        C[v_i, v_j] = T.float32(0.0)
                for i, j, k in T.grid(16, 16, 16):
                    with T.block("C_update"):
                        v_i, v_j, v_k = T.axis.remap("SSR", [i, j, k])
                        T.reads(C[v_i, v_j], A[v_i, v_k], B[v_k, v_j])
                        T.writes(C[v_i, v_j])
                        C[v_i, v_j] = C[v_i, v_j] + A[v_i, v_k] * B[v_k, v_j]
        """  # noqa: E501
        b = self._block(block, "decompose_reduction")
        owner, name = self._loop(loop, "decompose_reduction")
        if owner != b:
            raise ScheduleError(
                f"decompose_reduction: loop {name!r} belongs to {owner!r}, not to {b!r}"
            )
        return self._step(
            "DecomposeReduction",
            {"block": block, "loop": loop},
            lambda s: P.decompose_reduction(s, b, name),
            lambda n: [self._new(BlockRV, InitBlock(b))],
        )[0]

    @instruction(
        "StorageAlign",
        inputs=("block",),
        attrs=("buffer_index", "axis", "factor", "offset"),
        ignored={"buffer_index": 0},
    )
    def storage_align(
        self, block: Any, buffer_index: int, axis: int, factor: int, offset: int
    ) -> None:
        """Pad the written buffer so stride(axis) % factor == offset (avoids bank conflicts).

        The buffer keeps its shape; its allocation gets padded strides, printed as
        ``strides=(...)``. Only buffers of intermediate blocks can be aligned (a function argument's
        layout is fixed). ``buffer_index`` is always 0: a block writes one buffer.

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
            sch.storage_align(sch.get_block("B"), 0, 0, 16, 1)

        After::

            @T.prim_func
            def main(A: T.Buffer((64, 64), "float32"), C: T.Buffer((64, 64), "float32")):
                B = T.alloc_buffer((64, 64), "float32", strides=(65, 1))
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
        b = self._block(block, "storage_align")
        self._step(
            "StorageAlign",
            {
                "block": block,
                "buffer_index": buffer_index,
                "axis": axis,
                "factor": factor,
                "offset": offset,
            },
            lambda s: P.storage_align(s, b, axis, factor, offset),
        )

    @instruction(
        "SetScope",
        inputs=("block",),
        attrs=("buffer_index", "storage_scope"),
        ignored={"buffer_index": 0},
    )
    def set_scope(self, block: Any, buffer_index: int, storage_scope: str) -> None:
        """Change the storage scope of the buffer ``block`` writes.

        Only the buffer of an intermediate block can move (a function argument stays global).
        ``buffer_index`` is always 0: a block writes one buffer.

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
            sch.set_scope(sch.get_block("B"), 0, "local")

        After::

            @T.prim_func
            def main(A: T.Buffer((64, 64), "float32"), C: T.Buffer((64, 64), "float32")):
                B = T.alloc_buffer((64, 64), "float32", scope="local")
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
        b = self._block(block, "set_scope")
        self._step(
            "SetScope",
            {"block": block, "buffer_index": buffer_index, "storage_scope": storage_scope},
            lambda s: P.set_scope(s, b, storage_scope),
        )

    @instruction(
        "TransformLayout",
        inputs=("block",),
        attrs=("buffer", "index_map"),
        printers={"index_map": _index_map_text},
    )
    def transform_layout(
        self,
        block: Any,
        buffer: Any,
        index_map: Any,
        pad_value: Any = None,
        assume_injective_transform: bool = False,
    ) -> None:
        """Store a buffer with its axes permuted, as TVM's ``transform_layout``.

        ``buffer`` is ``("write", 0)``, ``("read", i)`` or a tensor name; ``index_map`` a
        function of the axes returning them permuted, e.g. ``lambda n, c, h, w: (n, h, w,
        c)`` (or the permutation as a list, ``[0, 2, 3, 1]``, as traces record it). Only
        permutations of intermediate buffers are supported (no padding, no splitting of an
        axis: ``split`` the loops and let the buffer follow); a permutation is injective,
        so ``assume_injective_transform`` changes nothing.

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
            sch.transform_layout(sch.get_block("B"), ("write", 0), lambda i, j: (j, i))

        After::

            @T.prim_func
            def main(A: T.Buffer((64, 64), "float32"), C: T.Buffer((64, 64), "float32")):
                B = T.alloc_buffer((64, 64), "float32")
                for i, j in T.grid(64, 64):
                    with T.block("B"):
                        v_i, v_j = T.axis.remap("SS", [i, j])
                        T.reads(A[v_i, v_j])
                        T.writes(B[v_j, v_i])
                        B[v_j, v_i] = A[v_i, v_j] * T.float32(2.0)
                for i_1, j_1 in T.grid(64, 64):
                    with T.block("C"):
                        v_i, v_j = T.axis.remap("SS", [i_1, j_1])
                        T.reads(B[v_j, v_i])
                        T.writes(C[v_i, v_j])
                        C[v_i, v_j] = B[v_j, v_i] + T.float32(1.0)
        """
        b = self._block(block, "transform_layout")
        if pad_value is not None:
            raise ScheduleError(
                "transform_layout: pad_value is not supported; only "
                "permutations of the axes (no padding)"
            )
        owner = P.buffer_block(self.state, b, buffer, "transform_layout")
        ndim = len(self.state.stage(owner).op.axis)
        perm = _permutation(index_map, ndim)
        self._step(
            "TransformLayout",
            {"block": block, "buffer": buffer, "index_map": perm},
            lambda s: P.transform_layout(s, owner, perm),
        )

    @instruction("EnterPostproc", pure=True)
    def enter_postproc(self) -> None:
        """Mark the start of post-processing steps (``remove_postproc`` stops here)."""
        self._step("EnterPostproc", {}, lambda s: None)


def _permutation(index_map: Any, ndim: int) -> list[int]:
    """The axis permutation an index map (a function or a list of ints) describes."""
    if isinstance(index_map, (list, tuple)):
        perm = [int(a) for a in index_map]
    elif callable(index_map):
        axes = [E.Var(f"i{d}", "int32") for d in range(ndim)]
        try:
            out = index_map(*axes)
        except TypeError as err:
            raise ScheduleError(
                f"transform_layout: index_map must take the buffer's {ndim} axes: {err}"
            ) from None
        out = list(out) if isinstance(out, (list, tuple)) else [out]
        perm = []
        for e in out:
            match = [d for d, v in enumerate(axes) if e is v]
            if not match:
                raise ScheduleError(
                    "transform_layout: only permutations of the axes are supported, e.g. "
                    f"lambda n, c, h, w: (n, h, w, c); got an output {e}"
                )
            perm.append(match[0])
    else:
        raise ScheduleError(
            "transform_layout: index_map must be a function of the axes, "
            f"e.g. lambda i, j: (j, i), got {index_map!r}"
        )
    if sorted(perm) != list(range(ndim)):
        raise ScheduleError(
            f"transform_layout: index_map must return each of the {ndim} "
            f"axes exactly once, got the permutation {perm}"
        )
    return perm
