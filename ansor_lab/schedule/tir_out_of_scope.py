"""``tir.Schedule`` primitives of TVM that ansor_lab does not have: each says what to write."""

from __future__ import annotations

from typing import Any

from ..errors import OutOfScopeError


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
    def refuse(self: Any, *args: Any, **kwargs: Any) -> None:
        raise OutOfScopeError(f"Stage.{name} is not supported here: {why}")

    refuse.__name__ = name
    refuse.__doc__ = f"Not provided: {why}"
    return refuse


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
