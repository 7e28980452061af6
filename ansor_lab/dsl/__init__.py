"""The tensor-expression DSL: expressions, tensors, ComputeDAG and the numpy reference.

Imports nothing of ansor_lab but ``errors``; the public spelling is ``ansor_lab.te``.
"""

from . import dtypes, expr, intrin
from .dag import ComputeDAG
from .reference import evaluate, reference_outputs
from .tensor import ComputeOp, Operation, PlaceholderOp, Tensor, compute, placeholder

__all__ = [
    "dtypes",
    "expr",
    "intrin",
    "ComputeDAG",
    "evaluate",
    "reference_outputs",
    "ComputeOp",
    "Operation",
    "PlaceholderOp",
    "Tensor",
    "compute",
    "placeholder",
]
