"""The loop IR: immutable nodes, printer, simplifier, verifier and a mutator base."""

from ..dsl.expr import PrimExpr
from ..dsl.intrin_rules import register_intrin_lowering, register_op_attr
from ..dsl.node_faces import Range
from ..dsl.op import Op
from ..missing_names import IR, module_getattr
from . import transform
from .nodes import (
    NOP,
    Allocate,
    Block,
    Broadcast,
    Buffer,
    BufferLoad,
    BufferStore,
    Evaluate,
    For,
    IfThenElse,
    IRModule,
    LetStmt,
    PrimFunc,
    Ramp,
    SeqStmt,
    Stmt,
    seq,
)
from .simplify import Analyzer, simplify, simplify_expr, simplify_stmt, substitute_stmt
from .structural_equal import StructuralDifference, assert_structural_equal, structural_equal
from .verify import verify
from .visitor import IRMutator, post_order_visit, walk_stmts

__all__ = [
    "Op",
    "PrimExpr",
    "Range",
    "transform",
    "register_intrin_lowering",
    "register_op_attr",
    "StructuralDifference",
    "assert_structural_equal",
    "structural_equal",
    "NOP",
    "Allocate",
    "Block",
    "Broadcast",
    "Buffer",
    "BufferLoad",
    "BufferStore",
    "Evaluate",
    "For",
    "IfThenElse",
    "IRModule",
    "LetStmt",
    "PrimFunc",
    "Ramp",
    "SeqStmt",
    "Stmt",
    "seq",
    "Analyzer",
    "simplify",
    "simplify_expr",
    "simplify_stmt",
    "substitute_stmt",
    "verify",
    "IRMutator",
    "post_order_visit",
    "walk_stmts",
]

__getattr__ = module_getattr(__name__, IR)  # TVM names not provided: say what to write
