"""The operator library on the DSL, under TVM's names (``from ansor_lab import topi``).

``topi.nn`` holds the neural-network operators, ``topi.testing`` independent numpy
references for each of them; broadcast, elementwise, reduction and layout operators sit
at the top level. Imports only ``ansor_lab.dsl`` and ``ansor_lab.errors``.
"""

from . import nn, tag, testing, utils
from .broadcast import (
    add,
    broadcast_to,
    divide,
    floor_divide,
    floor_mod,
    maximum,
    minimum,
    multiply,
    power,
    subtract,
)
from .elemwise import (
    abs,
    cast,
    ceil,
    clip,
    elemwise_sum,
    erf,
    exp,
    floor,
    identity,
    log,
    negative,
    round,
    rsqrt,
    sigmoid,
    sqrt,
    tanh,
)
from .per_target import NAMESPACES as _PER_TARGET, PerTargetNamespace as _PerTargetNamespace
from .reduction import max, min, sum
from .transform import concatenate, expand_dims, reshape, squeeze, transpose

__all__ = [
    "abs",
    "add",
    "broadcast_to",
    "cast",
    "ceil",
    "elemwise_sum",
    "clip",
    "concatenate",
    "divide",
    "erf",
    "exp",
    "expand_dims",
    "floor",
    "floor_divide",
    "floor_mod",
    "identity",
    "log",
    "max",
    "maximum",
    "min",
    "minimum",
    "multiply",
    "negative",
    "nn",
    "power",
    "reshape",
    "round",
    "rsqrt",
    "sigmoid",
    "sqrt",
    "squeeze",
    "subtract",
    "sum",
    "tag",
    "tanh",
    "testing",
    "transpose",
    "utils",
]


def __getattr__(name: str):
    # topi.cuda.schedule_reduce, topi.x86..., topi.generic...: not provided, say what to write
    if name in _PER_TARGET:
        return _PerTargetNamespace(name)
    raise AttributeError(f"module 'ansor_lab.topi' has no attribute {name!r}")
