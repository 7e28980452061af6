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
