"""``tvm.arith``: the integer analyzer (``Analyzer``: simplify, can_prove, bind,
const_int_bound, modular_set) over our simplifier.

A face: it only re-exports; TVM's other arith names (integer sets, iterator maps, linear
equation solvers) raise an error saying what to use.
"""

from __future__ import annotations

from .ir.arith import Analyzer, ConstIntBound, ModularSet, ProofStrength
from .missing_names import ARITH, module_getattr

__all__ = ["Analyzer", "ConstIntBound", "ModularSet", "ProofStrength"]

__getattr__ = module_getattr(__name__, ARITH)
