#!/usr/bin/env python3
"""The line budget, tinygrad style: no file of the package over BUDGET lines.

Prints every file over the budget and the package's total line count. Fails (exit 1) on a
file over the budget that EXCEPTIONS does not list, and on a listed file that is back
under the budget (take it off the list, so the list only ever shrinks).

    python .ci/line_budget.py            # from the repository root
"""

from __future__ import annotations

import sys
from pathlib import Path

#: The most lines one module of ansor_lab/ may have.
BUDGET = 600

#: Files allowed over the budget for now, each with the reason (paths under ansor_lab/).
EXCEPTIONS = {}

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "ansor_lab"


def line_counts(package: Path = PACKAGE) -> dict[str, int]:
    """Lines of every Python file under ``package``, keyed by its path relative to it."""
    return {
        path.relative_to(package).as_posix(): len(path.read_text().splitlines())
        for path in sorted(package.rglob("*.py"))
    }


def check(
    counts: dict[str, int], budget: int = BUDGET, exceptions: dict[str, str] = EXCEPTIONS
) -> list[str]:
    """The problems: files over budget not excepted, excepted files no longer over it."""
    problems = [
        f"ansor_lab/{name}: {n} lines, over the budget of {budget}; split it along its jobs"
        for name, n in counts.items()
        if n > budget and name not in exceptions
    ]
    problems += [
        f"ansor_lab/{name}: listed in EXCEPTIONS but "
        + (f"{counts[name]} lines now" if name in counts else "gone")
        + "; take it off the list in .ci/line_budget.py"
        for name in exceptions
        if counts.get(name, 0) <= budget
    ]
    return problems


def main() -> int:
    """Print the report; 1 when the budget is broken."""
    counts = line_counts()
    over = {name: n for name, n in counts.items() if n > BUDGET}
    for name, n in sorted(over.items(), key=lambda item: -item[1]):
        print(f"{n:6d}  ansor_lab/{name}  ({EXCEPTIONS.get(name, 'NOT EXCEPTED')})")
    total = sum(counts.values())
    print(f"{total:6d}  lines in {len(counts)} files of ansor_lab/ (budget {BUDGET} per file)")
    problems = check(counts)
    for p in problems:
        print(f"line budget: {p}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
