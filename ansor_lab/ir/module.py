"""``tvm.ir.module``: ``from tvm.ir.module import IRModule`` works after the import swap."""

from __future__ import annotations

from .nodes import IRModule

__all__ = ["IRModule"]
