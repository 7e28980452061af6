"""DESIGN.md's layering: imports between the internal packages point down only.

Each package's allowed imports are the ones DESIGN.md names, closed transitively (search
may use ir because it may use schedule, which may use ir). The faces (``te.py``,
``tir.py``, ...), ``jupyter`` and ``cli`` sit on top and may import anything; the leaves
``errors`` and ``missing_names`` (import-free tables of errors) anyone may import.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "ansor_lab"

#: DESIGN.md, "Who may import whom" (before the transitive closure)
DIRECT = {
    "dsl": set(),
    "topi": {"dsl"},
    "ir": {"dsl"},
    "schedule": {"dsl", "ir"},
    "script": {"ir", "schedule", "dsl"},
    "codegen": {"ir", "dsl"},
    "runtime": {"codegen", "schedule"},
    "measure": {"runtime", "codegen", "schedule", "dsl"},
    "search": {"measure", "schedule", "dsl", "runtime"},
}
LEAVES = {"errors", "missing_names", "__version__"}

#: imports against the layering kept on purpose, each made inside a function so that
#: importing the lower package never loads the higher one: (file, package) -> why
EXCEPTIONS = {
    ("topi/schedules/common.py", "schedule"): (
        "TVM's topi.cuda/x86/generic schedules build a te Schedule (create_schedule)"
    ),
    ("topi/schedules/common.py", "codegen"): (
        "the schedules read the current Target's thread limits, as TVM's do"
    ),
    ("topi/schedules/dispatch.py", "codegen"): (
        "topi.testing.dispatch picks a schedule by the current Target, as TVM's does"
    ),
}


def _closure(direct: dict) -> dict:
    allowed = {k: set(v) for k, v in direct.items()}
    changed = True
    while changed:
        changed = False
        for deps in allowed.values():
            more = set().union(*(allowed.get(d, set()) for d in deps)) - deps
            if more:
                deps |= more
                changed = True
    return allowed


def _imported_packages(path: Path, package: Path = PACKAGE) -> list[tuple[str, bool]]:
    """(top-level ansor_lab package, imported inside a function?) of every import."""
    rel = path.relative_to(package).parts
    out: list = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inner = in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)
            if isinstance(child, ast.ImportFrom):
                if child.level:
                    base = list(rel[:-1])[: len(rel) - child.level]
                    parts = base + (child.module.split(".") if child.module else [])
                    if not parts:  # `from .. import x` at the package root
                        parts = [child.names[0].name]
                elif child.module and child.module.split(".")[0] == "ansor_lab":
                    parts = child.module.split(".")[1:] or [child.names[0].name]
                else:
                    parts = []
                if parts:
                    out.append((parts[0].removesuffix(".py"), inner))
            visit(child, inner)

    visit(ast.parse(path.read_text()), False)
    return out


def layering_problems(package: Path = PACKAGE) -> list[str]:
    allowed = _closure(DIRECT)
    problems = []
    for path in sorted(package.rglob("*.py")):
        rel = path.relative_to(package)
        me = rel.parts[0]
        if me not in allowed:
            continue  # a face or a top layer
        for target, in_function in _imported_packages(path, package):
            if target in (me, *LEAVES) or target in allowed[me]:
                continue
            key = (rel.as_posix(), target)
            if key in EXCEPTIONS and in_function:
                continue
            where = "" if key not in EXCEPTIONS else " at module level (import it in a function)"
            problems.append(f"ansor_lab/{rel.as_posix()}: {me} imports {target}{where}")
    return problems


def test_imports_point_down_the_layers():
    assert layering_problems() == []


def test_every_exception_is_still_needed_and_says_why():
    for (file, target), why in EXCEPTIONS.items():
        assert len(why) > 20
        imports = _imported_packages(PACKAGE / file)
        assert (target, True) in imports, f"{file} no longer imports {target}: drop it"


def test_the_check_catches_an_upward_import(tmp_path):
    (tmp_path / "ir").mkdir()
    (tmp_path / "ir" / "bad.py").write_text("from ..search import tune\n")
    (tmp_path / "dsl").mkdir()
    (tmp_path / "dsl" / "lazy.py").write_text("def f():\n    from ansor_lab.schedule import x\n")
    (tmp_path / "search").mkdir()
    (tmp_path / "search" / "ok.py").write_text("from ..ir import nodes\nfrom .. import errors\n")
    assert layering_problems(tmp_path) == [
        "ansor_lab/dsl/lazy.py: dsl imports schedule",
        "ansor_lab/ir/bad.py: ir imports search",
    ]
