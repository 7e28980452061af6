"""``tvm.s_tir``: newer TVM's (>= 0.22) home of the schedule: ``Schedule``, ``Trace`` and
``meta_schedule``, as ``tvm.tir`` and ``tvm.meta_schedule`` have them here.

Its blocks are "sblocks": ``sch.get_sblock("Y")`` is ``get_block``, ``T.sblock`` in
TVMScript is ``T.block``.
"""

from __future__ import annotations

from . import meta_schedule
from .schedule.tir_schedule import BlockInfo, LoopInfo, Schedule
from .schedule.trace import BlockRV, ExprRV, Instruction, LoopRV, Trace

SBlockRV = BlockRV

__all__ = [
    "BlockInfo",
    "BlockRV",
    "ExprRV",
    "Instruction",
    "LoopInfo",
    "LoopRV",
    "SBlockRV",
    "Schedule",
    "Trace",
    "meta_schedule",
]
