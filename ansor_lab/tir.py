"""The loop IR and the block-style schedule under TVM's names (``from ansor_lab import tir``).

A face: it only re-exports.
"""

from .dsl.expr import (
    EQ, GE, GT, LE, LT, NE, Add, And, Call, Cast, Div, FloatImm, FloorDiv, FloorMod, IntImm,
    IterVar, Max, Min, Mod, Mul, Not, Or, PrimExpr, Select, Sub, Var, const, if_then_else,
)
from .dsl.intrin import (
    abs, all, any, ceil, erf, exp, floor, floordiv, floormod, indexdiv, indexmod, log, max,
    max_value, min, min_value, pow, power, round, rsqrt, sigmoid, sqrt, sum, tanh, truncdiv,
    truncmod,
)
from .errors import ScheduleError
from .ir.nodes import (
    Allocate, Block, Broadcast, Buffer, BufferLoad, BufferStore, Evaluate, For, IfThenElse,
    IRModule, LetStmt, PrimFunc, Ramp, SeqStmt, Stmt,
)
from .ir.simplify import simplify
from .ir.verify import verify
from .schedule.tir_schedule import BlockInfo, LoopInfo, Schedule
from .schedule.trace import BlockRV, ExprRV, Instruction, LoopRV, Trace

__all__ = [
    "EQ", "GE", "GT", "LE", "LT", "NE", "Add", "And", "Call", "Cast", "Div", "FloatImm",
    "FloorDiv", "FloorMod", "IntImm", "IterVar", "Max", "Min", "Mod", "Mul", "Not", "Or",
    "PrimExpr", "Select", "Sub", "Var", "const", "if_then_else", "abs", "all", "any", "ceil",
    "erf", "exp", "floor", "floordiv", "floormod", "indexdiv", "indexmod", "log", "max",
    "max_value", "min", "min_value", "pow", "power", "round", "rsqrt", "sigmoid", "sqrt", "sum",
    "tanh", "truncdiv", "truncmod", "ScheduleError", "Allocate", "Block",
    "Broadcast", "Buffer", "BufferLoad", "BufferStore", "Evaluate", "For", "IfThenElse",
    "IRModule", "LetStmt", "PrimFunc", "Ramp", "SeqStmt", "Stmt", "simplify", "verify",
    "BlockInfo", "LoopInfo", "Schedule", "BlockRV", "ExprRV", "Instruction", "LoopRV", "Trace",
]
