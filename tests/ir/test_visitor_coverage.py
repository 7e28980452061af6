"""Every visitor handles every IR node kind, by the one ``expr_X`` / ``stmt_X`` convention.

The node kinds are found by introspection (the concrete subclasses of ``PrimExpr`` and
``Stmt`` in ansor_lab), so a new node class is checked against every visitor without
editing this file. "Handled" means the visitor has the ``expr_X`` / ``stmt_X`` method or
names the kind in its ``GENERIC_KINDS`` or ``REFUSED_KINDS``.
"""

from __future__ import annotations

import importlib

import numpy as np
import pytest

from ansor_lab.dsl import expr as E, printer as dsl_printer, reference
from ansor_lab.errors import DSLError, IRError, ReferenceEvaluationError
from ansor_lab.ir import nodes as N, printer as ir_printer
from ansor_lab.ir.visitor import (
    EXPR,
    STMT,
    IRMutator,
    expr_kinds,
    stmt_kinds,
    unhandled_kinds,
)

# ansor_lab.ir re-exports the functions simplify and verify under the modules' names
simplify = importlib.import_module("ansor_lab.ir.simplify")
verify = importlib.import_module("ansor_lab.ir.verify")


def _codegen_builder():
    from ansor_lab.codegen.llvm_builder import FunctionBuilder

    return FunctionBuilder


# (visitor name, the class, family); the reference evaluator runs DAG expressions only
VISITORS = [
    ("printer", lambda: dsl_printer.ExprPrinter, EXPR),
    ("printer", lambda: ir_printer._Printer, STMT),
    ("simplifier", lambda: simplify._ExprSimplifier, EXPR),
    ("simplifier", lambda: simplify._StmtSimplifier, STMT),
    ("verifier", lambda: verify._Verifier, EXPR),
    ("verifier", lambda: verify._Verifier, STMT),
    ("reference evaluator", lambda: reference._Evaluator, EXPR),
    ("mutator base", lambda: IRMutator, EXPR),
    ("mutator base", lambda: IRMutator, STMT),
    ("llvm codegen", _codegen_builder, EXPR),
    ("llvm codegen", _codegen_builder, STMT),
]


def _id(v) -> str | None:
    return None if callable(v) else str(v).replace(" ", "_")


def _kinds(family: str) -> list[type]:
    return expr_kinds() if family == EXPR else stmt_kinds()


def test_node_kinds_are_found_by_introspection():
    exprs = {k.__name__ for k in expr_kinds()}
    stmts = {k.__name__ for k in stmt_kinds()}
    # the DSL's and the IR's expression nodes, without the abstract bases
    assert {"Var", "Add", "GE", "Select", "Reduce", "TensorLoad", "BufferLoad", "Ramp"} <= exprs
    assert {"Broadcast", "Call", "Cast", "FloorMod", "Not"} <= exprs
    assert not exprs & {"PrimExpr", "BinaryOp", "CmpOp", "IterVar"}
    assert stmts == {
        "For",
        "BufferStore",
        "Allocate",
        "IfThenElse",
        "LetStmt",
        "SeqStmt",
        "Evaluate",
        "Block",
    }
    assert len(exprs) == len(expr_kinds()) == 29


@pytest.mark.parametrize("name, get_cls, family", VISITORS, ids=_id)
def test_every_visitor_handles_every_node_kind(name, get_cls, family):
    cls = get_cls()
    missing = unhandled_kinds(cls, family, _kinds(family))
    assert not missing, (
        f"the {name} ({cls.__qualname__}) handles no {family} node of kind {missing}: add "
        f"{family}_<Kind> methods or name the kinds in GENERIC_KINDS / REFUSED_KINDS"
    )


@pytest.mark.parametrize("name, get_cls, family", VISITORS, ids=_id)
def test_declarations_name_real_kinds_without_overlap(name, get_cls, family):
    cls = get_cls()
    every = {k.__name__ for k in expr_kinds()} | {k.__name__ for k in stmt_kinds()}
    generic = set(getattr(cls, "GENERIC_KINDS", ()))
    refused = set(getattr(cls, "REFUSED_KINDS", {}))
    assert generic <= every and refused <= every, (generic | refused) - every
    assert not generic & refused
    for kind in _kinds(family):
        if hasattr(cls, f"{family}_{kind.__name__}"):
            assert kind.__name__ not in refused, f"{kind.__name__} is both handled and refused"


# -- a node kind nobody knows fails at run time with our error, naming visitor and node


@E._node
class Mystery(E.PrimExpr):
    """An expression node kind no visitor knows."""

    value: E.PrimExpr
    dtype: str


@N._stmt
class MysteryStmt(N.Stmt):
    """A statement kind no visitor knows."""

    body: N.Stmt


def _mystery() -> Mystery:
    return Mystery(E.IntImm(1, "int32"), "int32")


def test_unknown_kinds_are_not_picked_up_from_tests():
    # node kinds are ansor_lab's own: a test's stand-in does not count as a kind
    assert "Mystery" not in {k.__name__ for k in expr_kinds()}
    assert unhandled_kinds(IRMutator, EXPR, [Mystery]) == ["Mystery"]


def test_unknown_expr_fails_in_the_printer():
    with pytest.raises(DSLError, match="ExprPrinter has no handler for the expr node Mystery"):
        dsl_printer.text(_mystery() + 1)


def test_unknown_expr_fails_in_the_simplifier():
    with pytest.raises(IRError, match="_ExprSimplifier has no handler for the expr node Mystery"):
        simplify.simplify_expr(_mystery())


def test_unknown_expr_fails_in_the_mutator_base():
    with pytest.raises(IRError, match="IRMutator has no handler for the expr node Mystery"):
        IRMutator().visit_expr(E.Add(_mystery(), E.IntImm(1, "int32"), "int32"))


def test_unknown_expr_fails_in_the_verifier():
    func = N.PrimFunc((), N.Evaluate(_mystery()))
    with pytest.raises(IRError, match="_Verifier has no handler for the expr node Mystery"):
        verify.verify(func)


def test_unknown_expr_fails_in_the_reference_evaluator():
    ev = reference._Evaluator({}, {})
    with pytest.raises(ReferenceEvaluationError, match="_Evaluator has no handler .* Mystery"):
        ev.run(_mystery(), None)


def test_refused_kind_says_why():
    ev = reference._Evaluator({}, {})
    buf = N.Buffer("A", (4,), "float32")
    with pytest.raises(ReferenceEvaluationError, match="_Evaluator refuses expr node BufferLoad"):
        ev.run(buf[E.IntImm(0, "int32")], None)


def test_unknown_stmt_fails_in_printer_simplifier_verifier_and_mutator():
    s = MysteryStmt(N.Evaluate(E.IntImm(0, "int32")))
    with pytest.raises(IRError, match="_Printer has no handler for the stmt node MysteryStmt"):
        ir_printer.stmt_to_str(s)
    with pytest.raises(IRError, match="_StmtSimplifier has no handler .* MysteryStmt"):
        simplify.simplify_stmt(s)
    with pytest.raises(IRError, match="_Verifier has no handler .* MysteryStmt"):
        verify.verify(N.PrimFunc((), s))
    with pytest.raises(IRError, match="IRMutator has no handler .* MysteryStmt"):
        IRMutator().visit_stmt(s)


def test_handled_kinds_still_work_through_the_dispatch():
    # the dispatch changed, not the answers: one expression through every visitor
    i = E.Var("i", "int32")
    e = (i * 4 + 8) // 4
    assert dsl_printer.text(e) == "(i * 4 + 8) // 4"
    assert dsl_printer.text(simplify.simplify_expr(e, {i: (0, 9)})) == "i + 2"
    env = {i: np.arange(3, dtype=np.int32)}
    assert reference._Evaluator(env, {}).run(e, None).tolist() == [2, 3, 4]
