"""print -> parse is the identity (up to structural equality) for every primitive's IR.

Unscheduled functions print in TVM's block form and parse back to compute definitions;
scheduled ones print in the loop form, whose stage markers are comments, so they parse
back to the same loops without the markers.
"""

from __future__ import annotations

import pytest
from primitive_examples import EXAMPLES, run

import ansor_lab as tvm
from ansor_lab.ir import nodes as N
from ansor_lab.ir.visitor import IRMutator
from ansor_lab.script import from_source


class _WithoutStageMarkers(IRMutator):
    def stmt_Block(self, s: N.Block) -> N.Stmt:
        return self.visit_stmt(s.body)


def expected_after_parse(func: N.PrimFunc) -> N.PrimFunc:
    """What parsing ``func.script()`` must give back."""
    if getattr(func.source, "body", None) is func.body:  # block form: the same function
        return func
    return func.with_body(_WithoutStageMarkers().visit_stmt(func.body))


def roundtrip(func: N.PrimFunc) -> None:
    """Assert that ``func``'s text parses back to ``func`` (naming the first difference)."""
    parsed = from_source(func.script())
    tvm.ir.assert_structural_equal(expected_after_parse(func), parsed)


@pytest.mark.parametrize("ex", EXAMPLES, ids=[ex.name for ex in EXAMPLES])
def test_before_and_after_each_primitive_roundtrip(ex):
    _, before, after = run(ex)
    for mod in (before, after):
        roundtrip(mod["main"] if isinstance(mod, N.IRModule) else mod)
