"""TVMScript: ``from ansor_lab.script import tir as T, ir as I`` (``tvm.script`` after the swap).

``@T.prim_func`` and ``@I.ir_module`` parse the decorated source into loop IR (never
running it); ``from_source(text)`` parses text. Plain programs (each block in its own loop
nest, as ``te.create_prim_func`` prints them) come back as scheduled-ready functions that
``tir.Schedule``, ``tvm.build`` and the auto-scheduler take; others build as written.
"""

from __future__ import annotations

import sys

from . import ir, tir
from .ir import ir_module
from .parser import from_source

#: newer TVM (>= 0.22) names ``tvm.script.tir`` ``tvm.script.tirx``
tirx = tir
sys.modules[f"{__name__}.tirx"] = tir

__all__ = ["from_source", "ir", "ir_module", "tir", "tirx"]
