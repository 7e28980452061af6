"""The worked example of every schedule primitive, kept in one table.

Each ``Example`` names a primitive, a small workload and the schedule lines that apply it.
``render`` runs the lines and prints the example as the text that both the golden file
``tests/golden/primitives/<name>.txt`` and the primitive's docstring hold (an ``Example``
section: ``Before::`` the printed IR, ``Schedule::`` the lines, ``After::`` the printed IR).
``tests/schedule/test_primitive_docs.py`` checks that the three agree and that before and
after compute the same numbers.

Run as a script to rewrite both from the code after a change of the printer or a primitive::

    PYTHONPATH=$PWD python tests/schedule/primitive_examples.py [--docs-only]

It writes every golden file (not with ``--docs-only``), then replaces the ``Example``
section of every documented docstring in ``tir_schedule.py`` and ``te_schedule.py`` with
its golden file's text (nothing else in those files); review the diff.
"""

from __future__ import annotations

import ast
import inspect
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import ansor_lab as tvm
from ansor_lab import te, tir
from ansor_lab.dsl.tensor import Tensor
from ansor_lab.ir.printer import loop_form
from ansor_lab.schedule import te_schedule, tir_schedule

GOLDEN_DIR = Path(__file__).resolve().parents[1] / "golden" / "primitives"
HEADER = "Example\n-------\n"
# a docstring line the printer makes longer than ruff's limit gets this on its closing quotes
NOQA = "  # noqa: E501"
LINE_LIMIT = 100


# -- workloads (small, so the printed IR is short) --------------------------------------


def scale(n: int = 64, m: int = 64) -> list[Tensor]:
    """B = A * 2."""
    A = te.placeholder((n, m), name="A")
    B = te.compute((n, m), lambda i, j: A[i, j] * 2.0, name="B")
    return [A, B]


def scale_add(n: int = 64, m: int = 64) -> list[Tensor]:
    """B = A * 2; C = B + 1: a producer and its elementwise consumer."""
    A = te.placeholder((n, m), name="A")
    B = te.compute((n, m), lambda i, j: A[i, j] * 2.0, name="B")
    C = te.compute((n, m), lambda i, j: B[i, j] + 1.0, name="C")
    return [A, C]


def two_scales(n: int = 64, m: int = 64) -> list[Tensor]:
    """B = A * 2; C = A * 3: two independent nests (TVM's ``merge`` example)."""
    A = te.placeholder((n, m), name="A")
    B = te.compute((n, m), lambda i, j: A[i, j] * 2.0, name="B")
    C = te.compute((n, m), lambda i, j: A[i, j] * 3.0, name="C")
    return [A, B, C]


def matmul(n: int = 16) -> list[Tensor]:
    """C = A @ B, square."""
    A = te.placeholder((n, n), name="A")
    B = te.placeholder((n, n), name="B")
    k = te.reduce_axis((0, n), name="k")
    C = te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    return [A, B, C]


def row_sum(n: int = 16, m: int = 64) -> list[Tensor]:
    """B[i] = sum_k A[i, k]."""
    A = te.placeholder((n, m), name="A")
    k = te.reduce_axis((0, m), name="k")
    B = te.compute((n,), lambda i: te.sum(A[i, k], axis=k), name="B")
    return [A, B]


# -- the table --------------------------------------------------------------------------


@dataclass(frozen=True)
class Example:
    """One primitive's worked example.

    ``name`` is the golden file's stem; ``owner`` and ``method`` the documented method
    (``owner`` is ``tir_schedule.Schedule``, ``te_schedule.Schedule`` or
    ``te_schedule.Stage``); ``code`` the schedule lines, run with ``before`` (the PrimFunc,
    block style) or the workload's tensors by name (TE style) in scope. ``numeric`` is False
    only where an LLVM build cannot run the result (a GPU thread binding). Lines above a
    ``BEFORE_MARK`` line set the Before program up (it is printed where the mark is). A TE example
    whose program is the block-style one's names it in ``same_as``: it then documents only
    its lines and points to that example, and the test checks that the programs agree.
    """

    name: str
    owner: type
    method: str
    workload: Callable[[], list[Tensor]]
    code: str
    numeric: bool = True
    same_as: str = ""

    @property
    def te_style(self) -> bool:
        """Whether the example is a TE schedule (``s[B].split(...)``)."""
        return self.owner is not tir_schedule.Schedule


def _tir(name: str, workload: Callable, code: str, method: str = "", **kw) -> Example:
    return Example(name, tir_schedule.Schedule, method or name, workload, code.strip(), **kw)


def _te(name: str, workload: Callable, code: str, same_as: str = "", **kw) -> Example:
    owner = te_schedule.Schedule if name in ("cache_read", "cache_write", "rfactor") else None
    owner = owner or te_schedule.Stage
    return Example(f"te_{name}", owner, name, workload, code.strip(), same_as=same_as, **kw)


#: in an example's code, the line after which the Before program is printed
BEFORE_MARK = "# (Before is the program at this point)"

_B_LOOPS = 'sch = tir.Schedule(before)\ni, j = sch.get_loops(sch.get_block("B"))\n'

EXAMPLES: list[Example] = [
    # loops
    _tir("split", scale, _B_LOOPS + "sch.split(i, factors=[None, 16])"),
    _tir("fuse", scale, _B_LOOPS + "sch.fuse(i, j)"),
    _tir("reorder", scale, _B_LOOPS + "sch.reorder(j, i)"),
    _tir("tile", scale, _B_LOOPS + "sch.tile(i, j, 16, 8)"),
    _tir("parallel", scale, _B_LOOPS + "sch.parallel(i)"),
    _tir(
        "vectorize",
        scale,
        _B_LOOPS + "j_0, j_1 = sch.split(j, factors=[None, 8])\nsch.vectorize(j_1)",
    ),
    _tir("unroll", scale, _B_LOOPS + "j_0, j_1 = sch.split(j, factors=[None, 4])\nsch.unroll(j_1)"),
    _tir(
        "bind",
        scale,
        _B_LOOPS + 'sch.bind(i, "blockIdx.x")\nsch.bind(j, "threadIdx.x")',
        numeric=False,
    ),
    _tir("annotate", scale, _B_LOOPS + 'sch.annotate(i, "pragma_auto_unroll_max_step", 16)'),
    _tir(
        "merge",
        two_scales,
        'sch = tir.Schedule(before)\ni1, _ = sch.get_loops(sch.get_block("B"))\n'
        'i2, _ = sch.get_loops(sch.get_block("C"))\nsch.merge(i1, i2)',
    ),
    # compute locations
    _tir(
        "compute_at",
        scale_add,
        'sch = tir.Schedule(before)\ni, j = sch.get_loops(sch.get_block("C"))\n'
        'sch.compute_at(sch.get_block("B"), i)',
    ),
    _tir(
        "reverse_compute_at", scale_add, _B_LOOPS + 'sch.reverse_compute_at(sch.get_block("C"), i)'
    ),
    _tir(
        "compute_inline",
        scale_add,
        'sch = tir.Schedule(before)\nsch.compute_inline(sch.get_block("B"))',
    ),
    _tir(
        "reverse_compute_inline",
        scale_add,
        'sch = tir.Schedule(before)\nsch.reverse_compute_inline(sch.get_block("C"))',
    ),
    _tir(
        "compute_root",
        scale_add,
        'sch = tir.Schedule(before)\ni, j = sch.get_loops(sch.get_block("C"))\n'
        f'sch.compute_at(sch.get_block("B"), i)\n{BEFORE_MARK}\n'
        'sch.compute_root(sch.get_block("B"))',
    ),
    # caches, rfactor, storage
    _tir(
        "cache_read",
        matmul,
        'sch = tir.Schedule(before)\nsch.cache_read(sch.get_block("C"), 0, "local")',
    ),
    _tir(
        "cache_write",
        matmul,
        'sch = tir.Schedule(before)\nsch.cache_write(sch.get_block("C"), 0, "local")',
    ),
    _tir(
        "rfactor",
        row_sum,
        'sch = tir.Schedule(before)\ni, k = sch.get_loops(sch.get_block("B"))\n'
        "k_0, k_1 = sch.split(k, factors=[None, 4])\nsch.rfactor(k_1, 0)",
    ),
    _tir(
        "decompose_reduction",
        matmul,
        'sch = tir.Schedule(before)\nC = sch.get_block("C")\ni, j, k = sch.get_loops(C)\n'
        "sch.decompose_reduction(C, i)",
    ),
    _tir(
        "storage_align",
        scale_add,
        'sch = tir.Schedule(before)\nsch.storage_align(sch.get_block("B"), 0, 0, 16, 1)',
    ),
    _tir(
        "set_scope",
        scale_add,
        'sch = tir.Schedule(before)\nsch.set_scope(sch.get_block("B"), 0, "local")',
    ),
    _tir(
        "transform_layout",
        scale_add,
        "sch = tir.Schedule(before)\n"
        'sch.transform_layout(sch.get_block("B"), ("write", 0), lambda i, j: (j, i))',
    ),
    # sampling: a drawn decision, given here so the example is fixed
    _tir(
        "sample_perfect_tile",
        scale,
        _B_LOOPS + "i_factors = sch.sample_perfect_tile(i, n=2, decision=[4, 16])\n"
        "sch.split(i, factors=i_factors)",
    ),
    _tir(
        "sample_categorical",
        scale,
        _B_LOOPS + "v = sch.sample_categorical([0, 16, 64], [0.4, 0.3, 0.3], decision=1)\n"
        'sch.annotate(i, "pragma_auto_unroll_max_step", v)',
    ),
    _tir(
        "sample_compute_location",
        scale_add,
        'sch = tir.Schedule(before)\nB = sch.get_block("B")\n'
        "loc = sch.sample_compute_location(B, decision=0)\nsch.compute_at(B, loc)",
    ),
    # the TE style: s[B].split(...) and s.cache_read(...)
    _te(
        "split",
        scale,
        "s = te.create_schedule(B.op)\ni_0, i_1 = s[B].split(B.op.axis[0], factor=16)",
        same_as="split",
    ),
    _te(
        "fuse",
        scale,
        "s = te.create_schedule(B.op)\ns[B].fuse(B.op.axis[0], B.op.axis[1])",
        same_as="fuse",
    ),
    _te(
        "reorder",
        scale,
        "s = te.create_schedule(B.op)\ni, j = B.op.axis\ns[B].reorder(j, i)",
        same_as="reorder",
    ),
    _te(
        "tile",
        scale,
        "s = te.create_schedule(B.op)\n"
        "i_0, j_0, i_1, j_1 = s[B].tile(B.op.axis[0], B.op.axis[1], 16, 8)",
        same_as="tile",
    ),
    _te(
        "parallel",
        scale,
        "s = te.create_schedule(B.op)\ns[B].parallel(B.op.axis[0])",
        same_as="parallel",
    ),
    _te(
        "vectorize",
        scale,
        "s = te.create_schedule(B.op)\n"
        "j_0, j_1 = s[B].split(B.op.axis[1], factor=8)\ns[B].vectorize(j_1)",
        same_as="vectorize",
    ),
    _te(
        "unroll",
        scale,
        "s = te.create_schedule(B.op)\n"
        "j_0, j_1 = s[B].split(B.op.axis[1], factor=4)\ns[B].unroll(j_1)",
        same_as="unroll",
    ),
    _te(
        "bind",
        scale,
        "s = te.create_schedule(B.op)\n"
        's[B].bind(B.op.axis[0], te.thread_axis("blockIdx.x"))\n'
        's[B].bind(B.op.axis[1], te.thread_axis("threadIdx.x"))',
        same_as="bind",
        numeric=False,
    ),
    _te(
        "pragma",
        scale,
        's = te.create_schedule(B.op)\ns[B].pragma(B.op.axis[0], "auto_unroll_max_step", 16)',
        same_as="annotate",
    ),
    _te(
        "compute_at",
        scale_add,
        "s = te.create_schedule(C.op)\ns[B].compute_at(s[C], C.op.axis[0])",
        same_as="compute_at",
    ),
    _te(
        "compute_inline",
        scale_add,
        "s = te.create_schedule(C.op)\ns[B].compute_inline()",
        same_as="compute_inline",
    ),
    _te(
        "compute_root",
        scale_add,
        f"s = te.create_schedule(C.op)\ns[B].compute_at(s[C], C.op.axis[0])\n{BEFORE_MARK}\n"
        "s[B].compute_root()",
        same_as="compute_root",
    ),
    _te(
        "storage_align",
        scale_add,
        "s = te.create_schedule(C.op)\ns[B].storage_align(B.op.axis[0], 16, 1)",
        same_as="storage_align",
    ),
    _te(
        "set_scope",
        scale_add,
        's = te.create_schedule(C.op)\ns[B].set_scope("local")',
        same_as="set_scope",
    ),
    _te(
        "cache_read",
        matmul,
        's = te.create_schedule(C.op)\nA_local = s.cache_read(A, "local", [C])',
        same_as="cache_read",
    ),
    _te("cache_write", matmul, 's = te.create_schedule(C.op)\nC_local = s.cache_write(C, "local")'),
    _te(
        "rfactor",
        row_sum,
        "s = te.create_schedule(B.op)\n"
        "k_0, k_1 = s[B].split(B.op.reduce_axis[0], factor=4)\nB_rf = s.rfactor(B, k_1)",
        same_as="rfactor",
    ),
]


def examples_by_name() -> dict[str, Example]:
    """The table keyed by golden name."""
    return {ex.name: ex for ex in EXAMPLES}


# -- rendering --------------------------------------------------------------------------


def _indent(text: str) -> str:
    return "\n".join("    " + line if line else "" for line in text.splitlines())


def _program(ex: Example, tensors: list[Tensor], namespace: dict) -> tvm.IRModule:
    if ex.te_style:
        return tvm.lower(namespace["s"], tensors)
    return namespace["sch"].mod


def run(ex: Example) -> tuple[list[Tensor], object, tvm.IRModule]:
    """Build the workload and run the example's lines: (tensors, before, after)."""
    tensors = ex.workload()
    if ex.te_style:
        outputs = [t for t in tensors if t.op.__class__.__name__ == "ComputeOp"]
        before = tvm.lower(te.create_schedule([t.op for t in outputs]), tensors)
        namespace = {"te": te, **{t.name: t for t in _all_tensors(outputs)}}
    else:
        before = te.create_prim_func(tensors)
        namespace = {"tir": tir, "before": before}
    setup, mark, code = ex.code.rpartition(BEFORE_MARK)
    if mark:
        _exec(setup, ex, namespace)
        before = _program(ex, tensors, namespace)
    _exec(code, ex, namespace)
    return tensors, before, _program(ex, tensors, namespace)


def _exec(code: str, ex: Example, namespace: dict) -> None:
    exec(compile(code, f"<example {ex.name}>", "exec"), namespace)  # noqa: S102 - our table


def _all_tensors(outputs: list[Tensor]) -> list[Tensor]:
    seen: dict[str, Tensor] = {}
    todo = list(outputs)
    while todo:
        t = todo.pop()
        if t.name not in seen:
            seen[t.name] = t
            todo += t.op.input_tensors
    return list(seen.values())


def render(ex: Example) -> str:
    """The example as documented: Before / Schedule / After (ends with a newline); for a
    ``same_as`` example only its lines, under a pointer to the block-style example."""
    if ex.same_as:
        return (
            f"Schedule (Before and After as in ``tir.Schedule.{ex.same_as}``)::\n\n"
            f"{_indent(ex.code)}\n"
        )
    _, before, after = run(ex)
    return (
        f"Before::\n\n{_indent(_before_text(before))}\n\n"
        f"Schedule::\n\n{_indent(ex.code)}\n\n"
        f"After::\n\n{_indent(after.script())}\n"
    )


def _before_text(program: object) -> str:
    # block style: create_prim_func and a schedule's module both print TVM's block form;
    # TE style: the lowered module prints the loop form
    return program.script()


def loop_text(program: object) -> str:
    """The loop form of a program (stage markers as comments), whatever style made it."""
    func = program.main_function() if isinstance(program, tvm.IRModule) else program
    return loop_form(func)


def golden_path(ex: Example) -> Path:
    """Where the example's golden text lives."""
    return GOLDEN_DIR / f"{ex.name}.txt"


# -- rewriting docstrings ---------------------------------------------------------------


def _docstring_node(tree: ast.Module, owner: str, method: str) -> ast.Constant:
    for cls in tree.body:
        if isinstance(cls, ast.ClassDef) and cls.name == owner:
            for fn in cls.body:
                if isinstance(fn, ast.FunctionDef) and fn.name == method:
                    first = fn.body[0]
                    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                        return first.value
                    raise ValueError(f"{owner}.{method} has no docstring")
    raise ValueError(f"no method {owner}.{method}")


def docstring_text(source: str, owner: str, method: str) -> str:
    """The dedented docstring of ``owner.method`` in ``source``."""
    return inspect.cleandoc(_docstring_node(ast.parse(source), owner, method).value)


def set_docstring(source: str, owner: str, method: str, text: str) -> str:
    """``source`` with the docstring of ``owner.method`` replaced by ``text`` (dedented),
    indented as the old one was; every other line stays as it was."""
    node = _docstring_node(ast.parse(source), owner, method)
    lines = source.splitlines(keepends=True)
    start, end = node.lineno - 1, node.end_lineno  # the docstring's lines, [start, end)
    first = lines[start]
    pad = first[: len(first) - len(first.lstrip())]
    text_lines = text.splitlines()
    out = [f'{pad}"""{text_lines[0]}\n']
    long_line = False
    for line in text_lines[1:]:
        out.append(f"{pad}{line}\n" if line else "\n")
        long_line |= len(pad) + len(line) > LINE_LIMIT
    out.append(f'{pad}"""{NOQA if long_line else ""}\n')
    return "".join(lines[:start] + out + lines[end:])


def rewrite_docstring(source: str, owner: str, method: str, example: str) -> str:
    """``source`` with the ``Example`` section of ``owner.method``'s docstring set to
    ``example`` (added at the end when missing); every other line stays as it was."""
    body = docstring_text(source, owner, method)
    cut = body.find(HEADER)
    if cut >= 0:
        body = body[:cut].rstrip()
    return set_docstring(source, owner, method, f"{body}\n\n{HEADER}{example.rstrip()}")


def docstring_of(ex: Example) -> str:
    """The documented method's docstring, dedented."""
    return inspect.getdoc(getattr(ex.owner, ex.method)) or ""


def write_goldens() -> None:
    """Render every example into its golden file (what ``pytest --update-golden`` does)."""
    for ex in EXAMPLES:
        path = golden_path(ex)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(render(ex))


def defined_in(ex: Example) -> tuple[Path, str]:
    """The source file and class that define the documented method (it may move to a
    mixin module when a schedule file is split; the docstring goes with it)."""
    # unwrap: a declaration may wrap the method (ignored TVM keywords)
    func = inspect.unwrap(getattr(ex.owner, ex.method))
    return Path(inspect.getsourcefile(func)), func.__qualname__.split(".")[0]


def rewritten_sources() -> dict[Path, tuple[str, str]]:
    """Every source file that defines a documented method: (its text, the text with each
    ``Example`` section replaced by the golden file's)."""
    out: dict[Path, tuple[str, str]] = {}
    for ex in EXAMPLES:
        path, owner = defined_in(ex)
        original, source = out.get(path) or (path.read_text(),) * 2
        source = rewrite_docstring(source, owner, ex.method, golden_path(ex).read_text())
        out[path] = (original, source)
    return out


def write_docstrings() -> list[Path]:
    """Copy every golden file into its method's docstring; the source files changed."""
    changed = []
    for path, (original, source) in rewritten_sources().items():
        if source != original:
            path.write_text(source)
            changed.append(path)
    return changed


if __name__ == "__main__":
    if "--docs-only" not in sys.argv[1:]:
        write_goldens()
        print(f"wrote {len(EXAMPLES)} golden files under {GOLDEN_DIR}", file=sys.stderr)
    for changed_path in write_docstrings():
        print(f"rewrote the examples in {changed_path}", file=sys.stderr)
