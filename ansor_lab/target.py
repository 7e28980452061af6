"""``tvm.target``: targets (a face over ``codegen.target``), so ``tvm.target.Target("llvm")``
in TVM material works unchanged."""

from .codegen.target import Target, TargetError, TargetKind, cuda, target_from_device

__all__ = ["Target", "TargetError", "TargetKind", "cuda", "target_from_device"]
