"""The tensor-expression DSL under TVM's names (``from ansor_lab import te``).

A face: it only re-exports. ``create_schedule`` and ``create_prim_func`` come from the
schedule layer; everything else from ``ansor_lab.dsl``.
"""

from .dsl.dag import ComputeDAG
from .dsl.expr import (
    Cast,
    FloatImm,
    IntImm,
    IterVar,
    PrimExpr,
    Range,
    Var,
    const,
    if_then_else,
    select,
)
from .dsl.intrin import (
    abs,
    all,
    any,
    ceil,
    erf,
    exp,
    floor,
    floordiv,
    floormod,
    indexdiv,
    indexmod,
    log,
    max,
    max_value,
    min,
    min_value,
    pow,
    power,
    round,
    rsqrt,
    sigmoid,
    sqrt,
    sum,
    tanh,
    truncdiv,
    truncmod,
)
from .dsl.reference import evaluate
from .dsl.unsupported import comm_reducer, extern, scan, size_var
from .schedule.te_schedule import Schedule, create_schedule
from .schedule.create import create_prim_func
from .dsl.tensor import (
    ComputeOp,
    Operation,
    PlaceholderOp,
    Tensor,
    compute,
    placeholder,
    reduce_axis,
    thread_axis,
    var,
)

__all__ = [
    "ComputeDAG", "Cast", "FloatImm", "IntImm", "IterVar", "PrimExpr", "Range", "Var",
    "const", "if_then_else", "select", "abs", "all", "any", "ceil", "erf", "exp", "floor",
    "floordiv", "floormod", "indexdiv", "indexmod", "log", "max", "max_value", "min",
    "min_value", "pow", "power", "round", "rsqrt", "sigmoid", "sqrt", "sum", "tanh",
    "truncdiv", "truncmod", "evaluate", "comm_reducer", "extern", "scan", "size_var",
    "ComputeOp", "Operation", "PlaceholderOp", "Tensor", "compute", "placeholder",
    "reduce_axis", "thread_axis", "var", "Schedule", "create_schedule", "create_prim_func",
]
