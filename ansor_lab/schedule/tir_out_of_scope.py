"""``tir.Schedule`` primitives of TVM that ansor_lab does not have: each says what to write."""

from __future__ import annotations

from typing import Any

from ..errors import OutOfScopeError


def _refusal(owner: str, name: str, why: str):
    """A method ``owner.name`` that raises OutOfScopeError saying ``why``."""

    def refuse(self: Any, *args: Any, **kwargs: Any) -> None:
        raise OutOfScopeError(f"{owner}.{name} is not supported here: {why}")

    refuse.__name__ = name
    refuse.__doc__ = f"Not provided: {why}"
    return refuse


class OutOfScopeSteps:
    """Tensor-core and block-restructuring primitives (out of scope): clear errors."""

    def tensorize(self, *args: Any, **kwargs: Any) -> None:
        """Not provided: hardware tensor intrinsics (VNNI, Tensor Cores)."""
        raise OutOfScopeError(
            "Schedule.tensorize is out of scope: ansor_lab has no tensor intrinsics; "
            "vectorize the innermost spatial loop (sch.vectorize) and let LLVM pick the "
            "vector instructions"
        )

    def blockize(self, *args: Any, **kwargs: Any) -> None:
        """Not provided: blocks are the stages of the program."""
        raise OutOfScopeError(
            "Schedule.blockize is out of scope: blocks are the program's stages here; "
            "use compute_at / reverse_compute_at to move a stage under a loop"
        )


_NO_DTYPE_CHANGE = (
    "a buffer's dtype is its tensor's; declare it in the compute definition "
    "(te.compute(..., lambda ...: x.astype('float16')), te.placeholder(shape, dtype))"
)
_NO_ACCESS_ANNOTATION = (
    "the regions a block reads and writes are derived from its body here; there is "
    "nothing to annotate or hide"
)
_PADDING = (
    "padding is inlined into the consumer's loads (sch.compute_inline(pad_block)) or "
    "computed at its loop (sch.compute_at); the code generator splits the guarded loops "
    "where their guards are decided"
)

#: TVM ``tir.Schedule`` primitives we lack, with why and what to write instead
REFUSED_PRIMITIVES = {
    "reindex": (
        "stage the buffer with sch.cache_read(block, index, 'global') or "
        "sch.cache_write(block, index, 'global') and order the loops with sch.reorder"
    ),
    "unannotate": (
        "an annotation stays once made; annotate the loop again with the value you want "
        "(sch.annotate(loop, key, value)), or leave the annotation out of the schedule"
    ),
    "transform_block_layout": (
        "reorder, split and fuse the block's loops (sch.reorder, sch.split, sch.fuse)"
    ),
    "reorder_block_iter_var": "reorder the block's loops instead (sch.reorder)",
    "set_axis_separator": "buffers here are flat arrays in the order of their axes",
    "pad_einsum": (
        "split with a factor that does not divide the extent (sch.split(loop, [None, 16])): "
        "the tail is guarded (T.where); or pad the tensors in the definition (topi.nn.pad)"
    ),
    "rolling_buffer": (
        "compute the producer at the consumer's loop (sch.compute_at(block, loop)) for a "
        "buffer the size of one tile"
    ),
    "add_unit_loop": "split a loop with a unit factor instead (sch.split(loop, [1, None]))",
    "loop_partition": (
        "the code generator partitions guarded loops itself (a split's tail is split off "
        "where its guard is decided); split the loop (sch.split)"
    ),
    "decompose_padding": _PADDING,
    "can_decompose_padding": _PADDING,
    "cache_inplace": "use sch.cache_read and sch.cache_write",
    "cache_index": "index expressions are simplified and hoisted by the code generator",
    "set_dtype": _NO_DTYPE_CHANGE,
    "unsafe_set_dtype": _NO_DTYPE_CHANGE,
    "annotate_buffer_access": _NO_ACCESS_ANNOTATION,
    "hide_buffer_access": _NO_ACCESS_ANNOTATION,
    "unsafe_hide_buffer_access": _NO_ACCESS_ANNOTATION,
    "sample_partitioned_tile": "sample the tile with sch.sample_perfect_tile(loop, n)",
    "get_sref": (
        "the schedule's internal state is not exposed; use sch.get(rv), sch.mod and sch.trace"
    ),
}
for _name, _why in REFUSED_PRIMITIVES.items():
    setattr(OutOfScopeSteps, _name, _refusal("Schedule", _name, _why))


class TensorIntrin:
    """TVM's tensor-intrinsic registry: out of scope (its methods raise OutOfScopeError)."""

    @staticmethod
    def register(*args: Any, **kwargs: Any) -> None:
        """Not provided."""
        OutOfScopeSteps().tensorize()

    @staticmethod
    def get(*args: Any, **kwargs: Any) -> None:
        """Not provided."""
        OutOfScopeSteps().tensorize()


def _stage_refusal(name: str, why: str):
    return _refusal("Stage", name, why)


class OutOfScopeScheduleSteps:
    """TE ``Schedule`` methods of TVM that ansor_lab does not have: each says what to write."""

    def create_group(self, *args: Any, **kwargs: Any) -> None:
        """Not provided: a group's stages are placed one by one."""
        raise OutOfScopeError(
            "Schedule.create_group is not supported here: compute each stage of the group "
            "at the consumer's loop, one by one (s[P].compute_at(s[C], axis))"
        )


class OutOfScopeStageSteps:
    """TE ``Stage`` primitives of TVM that ansor_lab does not have: each says what to write."""

    double_buffer = _stage_refusal(
        "double_buffer",
        "it only overlaps a GPU's loads with its compute and never changes the result; "
        "leave it out",
    )
    prefetch = _stage_refusal(
        "prefetch",
        "the CPU's hardware prefetchers follow the loops' strided accesses; leave it out "
        "(the result is the same)",
    )
    env_threads = _stage_refusal(
        "env_threads",
        "bind the stage's own loops with s[T].bind(axis, te.thread_axis('threadIdx.x'))",
    )
    rolling_buffer = _stage_refusal(
        "rolling_buffer",
        "compute the producer at the consumer's loop (s[P].compute_at(s[C], axis)) for "
        "a buffer the size of one tile",
    )
    transform_layout = _stage_refusal(
        "transform_layout",
        "use tir.Schedule(te.create_prim_func(...)).transform_layout(block, buffer, index_map)",
    )
    set_axis_separators = _stage_refusal(
        "set_axis_separators", "buffers here are flat arrays in the order of their axes"
    )
    tensorize = _stage_refusal(
        "tensorize",
        "ansor_lab has no tensor intrinsics; vectorize the innermost spatial loop "
        "(s[T].vectorize(axis)) and let LLVM pick the vector instructions",
    )
