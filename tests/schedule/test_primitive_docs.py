"""Every schedule primitive's docstring example is the program it claims, run and checked.

The examples live in one table, ``primitive_examples.EXAMPLES``. For each one:

- its rendered text (Before / Schedule / After, printed by our printer) equals the golden
  file ``tests/golden/primitives/<name>.txt``;
- the documented method's docstring holds that golden text verbatim (after dedenting);
- the program before and the program after compute the same numbers on random inputs
  (both built with LLVM, compared with each other and with the numpy reference);
- a TE example that points to a block-style one prints exactly that one's Before and After.

After a change to a primitive or to the printer, regenerate everything with one command
(it renders each example, writes its golden file, then rewrites the ``Example`` section of
each docstring from the golden file; review the diff)::

    PYTHONPATH=$PWD python tests/schedule/primitive_examples.py

``pytest --update-golden`` rewrites only the golden files; then
``python tests/schedule/primitive_examples.py --docs-only`` copies them into the docstrings.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest
from primitive_examples import (
    EXAMPLES,
    Example,
    docstring_of,
    examples_by_name,
    golden_path,
    loop_text,
    render,
    rewrite_docstring,
    rewritten_sources,
    run,
)
from schedule_helpers import ATOL, RTOL

import ansor_lab as tvm
from ansor_lab.dsl.reference import evaluate
from ansor_lab.dsl.tensor import PlaceholderOp
from ansor_lab.schedule import te_schedule, tir_schedule
from ansor_lab.schedule.tir_out_of_scope import (
    REFUSED_PRIMITIVES,
    OutOfScopeScheduleSteps,
    OutOfScopeStageSteps,
)

IDS = [ex.name for ex in EXAMPLES]

#: public methods of the schedule classes that do not change the program (no example)
READ_ONLY = {
    tir_schedule.Schedule: {
        "copy",
        "compute_location_candidates",
        "enter_postproc",  # a marker in the trace
        "fork_seed",
        "from_state",
        "get",
        "get_block",
        "get_sblock",
        "get_child_blocks",
        "get_consumers",
        "get_loops",
        "get_producers",
        "remove_rv",
        "replay",
        "seed",
        "show",
        "work_on",  # checks the name of the one function a schedule holds
        # out of scope: they raise OutOfScopeError (tests/test_out_of_scope.py)
        "blockize",
        "tensorize",
        *REFUSED_PRIMITIVES,
    },
    te_schedule.Schedule: {
        "normalize",  # hands back the schedule: nothing to rebase
        # out of scope: it raises OutOfScopeError (tests/test_out_of_scope.py)
        *(name for name in vars(OutOfScopeScheduleSteps) if not name.startswith("_")),
    },
    # set_store_predicate only accepts the thread-0 store a cross-thread reduction already has
    te_schedule.Stage: {
        "loop",
        "set_store_predicate",
        # out of scope: they raise OutOfScopeError (tests/test_out_of_scope.py)
        *(name for name in vars(OutOfScopeStageSteps) if not name.startswith("_")),
    },
}


@pytest.mark.parametrize("ex", EXAMPLES, ids=IDS)
def test_example_matches_its_golden_file(ex: Example, golden) -> None:
    golden.check(f"primitives/{ex.name}.txt", render(ex))


@pytest.mark.parametrize("ex", EXAMPLES, ids=IDS)
def test_docstring_shows_the_golden_example(ex: Example, golden) -> None:
    if golden.update:
        pytest.skip("updating goldens: copy them into the docstrings with primitive_examples.py")
    text = golden_path(ex).read_text().rstrip("\n")
    doc = docstring_of(ex)
    assert text in doc, (
        f"{ex.owner.__name__}.{ex.method}'s docstring does not show {golden_path(ex).name}; "
        "run `PYTHONPATH=$PWD python tests/schedule/primitive_examples.py --docs-only`"
    )
    assert doc.index("Example\n-------\n") < doc.index(text)


@pytest.mark.parametrize("ex", [ex for ex in EXAMPLES if ex.same_as], ids=lambda e: e.name)
def test_te_example_is_the_block_style_program(ex: Example) -> None:
    _, before, after = run(ex)
    _, tir_before, tir_after = run(examples_by_name()[ex.same_as])
    # the TE programs are lowered modules, the block style's print TVM's block form:
    # compare both in the loop form
    assert loop_text(before) == loop_text(tir_before)
    assert loop_text(after) == loop_text(tir_after)


@pytest.mark.parametrize("ex", [ex for ex in EXAMPLES if ex.numeric], ids=lambda e: e.name)
def test_before_and_after_compute_the_same(ex: Example) -> None:
    tensors, before, after = run(ex)
    assert after.script() != before.script(), "the example does not change the program"
    rng = np.random.default_rng(0)
    inputs = {
        t: rng.uniform(-1.0, 1.0, t.shape).astype(t.dtype)
        for t in tensors
        if isinstance(t.op, PlaceholderOp)
    }
    expected = evaluate([t for t in tensors if t not in inputs], inputs)
    results = []
    for program in (before, after):
        # NaN in every output shows an element the program forgot to write
        arrays = [inputs.get(t, np.full(t.shape, np.nan, t.dtype)) for t in tensors]
        tvm.build(program, target="llvm")(*arrays)
        results.append(arrays)
    for k, t in enumerate(tensors):
        if t not in inputs:
            np.testing.assert_allclose(results[1][k], results[0][k], rtol=RTOL, atol=ATOL)
            np.testing.assert_allclose(results[1][k], expected[t], rtol=RTOL, atol=ATOL)


def test_bind_example_is_refused_by_a_cpu_build() -> None:
    # the one example without a numeric check: a GPU binding does not build for LLVM
    _, _, after = run(examples_by_name()["bind"])
    with pytest.raises(Exception, match="bind"):
        tvm.build(after, target="llvm")


@pytest.mark.parametrize("owner", list(READ_ONLY), ids=lambda c: f"{c.__module__}.{c.__name__}")
def test_every_transforming_method_has_an_example(owner: type) -> None:
    # inherited too: tir.Schedule's steps live in mixins, one module per section
    public = {
        name
        for name, _ in inspect.getmembers(owner, inspect.isfunction)
        if not name.startswith("_")
    }
    documented = {ex.method for ex in EXAMPLES if ex.owner is owner}
    assert documented <= public
    assert public - READ_ONLY[owner] == documented


def test_docstring_rewrite_changes_nothing_now() -> None:
    # the rewriter, fed today's golden files, reproduces the sources byte for byte: docstrings
    # and goldens agree, and the rewriter touches nothing but the Example sections
    sources = rewritten_sources()
    assert len(sources) >= 2  # tir_schedule.py and te_schedule.py (or the modules split from them)
    for path, (original, rewritten) in sources.items():
        assert rewritten == original, f"{path}: run primitive_examples.py --docs-only"


def test_rewrite_docstring_replaces_only_the_example_section() -> None:
    source = (
        "class K:\n"
        "    def f(self):  # a comment\n"
        '        """Summary.\n\n        More.\n\n        Example\n        -------\n'
        '        old\n        """\n'
        "        return 1\n"
    )
    out = rewrite_docstring(source, "K", "f", "Before::\n\n    new\n")
    assert out == (
        "class K:\n"
        "    def f(self):  # a comment\n"
        '        """Summary.\n\n        More.\n\n        Example\n        -------\n'
        '        Before::\n\n            new\n        """\n'
        "        return 1\n"
    )
    # a docstring without an Example section gets one at its end
    bare = 'class K:\n    def f(self):\n        """Summary."""\n        return 1\n'
    assert rewrite_docstring(bare, "K", "f", "x\n") == (
        'class K:\n    def f(self):\n        """Summary.\n\n'
        '        Example\n        -------\n        x\n        """\n        return 1\n'
    )
