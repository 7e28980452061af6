"""``tvm.target``: targets (a face over ``codegen.target``), so ``tvm.target.Target("llvm")``
in TVM material works unchanged."""

from .codegen.target import Target, TargetError, TargetKind

__all__ = ["Target", "TargetError", "TargetKind"]
