"""print -> parse is the identity (up to structural equality) for every primitive's IR.

Unscheduled functions print in TVM's block form and parse back to compute definitions;
a schedule's module prints the block form TVM's schedule module has (full buffers, one
``T.block`` per stage under its loops, ``T.where`` for guards), parses back to a function
structurally equal to it, and that parsed program builds and computes the same numbers.
The TE examples are lowered modules: they print (and compare) in the loop form.
"""

from __future__ import annotations

import numpy as np
import pytest
from primitive_examples import EXAMPLES, run
from schedule_helpers import ATOL, RTOL

import ansor_lab as tvm
from ansor_lab.dsl.reference import evaluate
from ansor_lab.dsl.tensor import PlaceholderOp
from ansor_lab.ir import nodes as N
from ansor_lab.ir.visitor import IRMutator
from ansor_lab.script import from_source


class _WithoutStageMarkers(IRMutator):
    def stmt_Block(self, s: N.Block) -> N.Stmt:
        return self.visit_stmt(s.body)


def expected_after_parse(func: N.PrimFunc) -> N.PrimFunc:
    """What parsing ``func.script()`` must give back (a lowered module's markers are
    comments; everything else prints in a form that parses back to itself)."""
    if getattr(func.source, "block_view", None) is not None or func.source is not None:
        return func
    return func.with_body(_WithoutStageMarkers().visit_stmt(func.body))


def roundtrip(func: N.PrimFunc) -> N.PrimFunc:
    """Assert that ``func``'s text parses back to ``func``; the parsed function."""
    parsed = from_source(func.script())
    tvm.ir.assert_structural_equal(expected_after_parse(func), parsed)
    return parsed


def _main(mod: object) -> N.PrimFunc:
    return mod["main"] if isinstance(mod, N.IRModule) else mod


@pytest.mark.parametrize("ex", EXAMPLES, ids=[ex.name for ex in EXAMPLES])
def test_before_and_after_each_primitive_roundtrip(ex):
    _, before, after = run(ex)
    for mod in (before, after):
        roundtrip(_main(mod))


@pytest.mark.parametrize("ex", [ex for ex in EXAMPLES if ex.numeric], ids=lambda e: e.name)
def test_parsed_block_form_builds_and_matches_numpy(ex):
    tensors, _, after = run(ex)
    parsed = roundtrip(_main(after))
    rng = np.random.default_rng(1)
    inputs = {
        t: rng.uniform(-1.0, 1.0, t.shape).astype(t.dtype)
        for t in tensors
        if isinstance(t.op, PlaceholderOp)
    }
    expected = evaluate([t for t in tensors if t not in inputs], inputs)
    arrays = [inputs.get(t, np.full(t.shape, np.nan, t.dtype)) for t in tensors]
    tvm.build(parsed, target="llvm")(*arrays)
    for t, got in zip(tensors, arrays):
        if t not in inputs:
            np.testing.assert_allclose(got, expected[t], rtol=RTOL, atol=ATOL)
