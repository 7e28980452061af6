"""The operator library on the DSL, under TVM's names (``from ansor_lab import topi``).

``topi.nn`` holds the neural-network operators, ``topi.image`` the resizing and sampling
ones, ``topi.testing`` independent numpy references for each of them; broadcast,
comparison and logical, elementwise, reduction, layout, slicing and indexing (take,
gather, where...) operators, ``einsum``, the cumulative ``cumsum`` / ``cumprod`` and
``sort`` / ``argsort`` / ``topk`` sit at the top level. ``topi.generic``, ``topi.x86`` and
``topi.cuda`` hold TVM's classic per-target schedules (``topi.schedules``); TVM's other
per-target namespaces (``topi.arm_cpu``...) explain that they are not provided.
Imports only ``ansor_lab.dsl`` and ``ansor_lab.errors`` at import time; the schedules
import the TE schedule and the current target when they run (``topi.schedules.common``).
"""

import sys as _sys

from . import image, nn, tag, testing, utils
from .broadcast import (
    add,
    bitwise_and,
    bitwise_or,
    bitwise_xor,
    broadcast_to,
    divide,
    floor_divide,
    floor_mod,
    left_shift,
    maximum,
    minimum,
    multiply,
    power,
    right_shift,
    subtract,
)
from .einsum import einsum
from .elemwise import (
    abs,
    acos,
    acosh,
    asin,
    asinh,
    atan,
    atanh,
    bitwise_not,
    cast,
    ceil,
    clip,
    cos,
    cosh,
    elemwise_sum,
    erf,
    exp,
    fast_erf,
    fast_exp,
    fast_tanh,
    floor,
    identity,
    isfinite,
    isinf,
    isnan,
    log,
    log2,
    log10,
    negative,
    round,
    rsqrt,
    sigmoid,
    sin,
    sinh,
    sqrt,
    tan,
    tanh,
    trunc,
)
from .indexing import gather, gather_nd, one_hot, take, where
from .logical import (
    equal,
    greater,
    greater_equal,
    less,
    less_equal,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    not_equal,
    sign,
)
from .missing import missing_operator
from .per_target import NAMESPACES as _PER_TARGET, PerTargetNamespace as _PerTargetNamespace
from .reduction import all, any, argmax, argmin, max, min, prod, sum
from .scan import cumprod, cumsum
from .schedules import cuda, generic, x86
from .slicing import flip, repeat, split, stack, strided_slice, tile
from .sort import argsort, sort, topk
from .transform import (
    arange,
    concatenate,
    expand_dims,
    full,
    full_like,
    layout_transform,
    matmul,
    reshape,
    squeeze,
    transpose,
)

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
    "image",
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
    "tan",
    "cos",
    "cosh",
    "sin",
    "sinh",
    "acos",
    "acosh",
    "asin",
    "asinh",
    "atan",
    "atanh",
    "log2",
    "log10",
    "trunc",
    "isnan",
    "isinf",
    "isfinite",
    "bitwise_not",
    "fast_exp",
    "fast_tanh",
    "fast_erf",
    "bitwise_and",
    "bitwise_or",
    "bitwise_xor",
    "left_shift",
    "right_shift",
    "prod",
    "all",
    "any",
    "argmax",
    "argmin",
    "greater",
    "less",
    "equal",
    "not_equal",
    "greater_equal",
    "less_equal",
    "logical_and",
    "logical_or",
    "logical_xor",
    "logical_not",
    "sign",
    "where",
    "full",
    "full_like",
    "take",
    "gather",
    "gather_nd",
    "one_hot",
    "strided_slice",
    "split",
    "stack",
    "tile",
    "repeat",
    "flip",
    "arange",
    "layout_transform",
    "matmul",
    "einsum",
    "cumsum",
    "cumprod",
    "sort",
    "argsort",
    "topk",
    "cuda",
    "generic",
    "x86",
]

# `import tvm.topi.cuda` / `from tvm.topi.cuda import schedule_reduce` after the swap
for _ns in (cuda, generic, x86):
    _sys.modules.setdefault(f"{__name__}.{_ns.__name__.rsplit('.', 1)[-1]}", _ns)


def __getattr__(name: str):
    # topi.arm_cpu..., topi.rocm...: not provided, say what to write
    if name in _PER_TARGET:
        return _PerTargetNamespace(name)
    raise missing_operator(__name__, name, __all__)
