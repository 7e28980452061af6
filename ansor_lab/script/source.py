"""Where a script came from, and errors that point at the user's line and column."""

from __future__ import annotations

import ast
import inspect
import textwrap
from dataclasses import dataclass

from ..errors import ScriptError


@dataclass(frozen=True)
class ScriptSource:
    """The text of a script and where its first line sits in the user's file."""

    text: str
    filename: str = "<script>"
    line_offset: int = 0

    @staticmethod
    def of(obj: object) -> ScriptSource:
        """The source of a decorated function or class (never executing its body)."""
        try:
            lines, first = inspect.getsourcelines(obj)
            filename = inspect.getsourcefile(obj) or "<script>"
        except (OSError, TypeError) as err:
            raise ScriptError(
                f"cannot read the source of {getattr(obj, '__name__', obj)!r} ({err}); "
                "define it in a file or a notebook cell, or pass its text to "
                "tvm.script.from_source(text)"
            ) from None
        return ScriptSource(textwrap.dedent("".join(lines)), filename, max(0, first - 1))

    def parse(self) -> ast.Module:
        """The Python AST of the text, or a positioned ScriptError."""
        try:
            return ast.parse(self.text)
        except SyntaxError as err:
            raise ScriptError(
                self.where_line(err.lineno or 1, (err.offset or 1) - 1)
                + f": not valid Python: {err.msg}"
            ) from None

    def where_line(self, lineno: int, col: int) -> str:
        """``file:line:col`` in the user's file."""
        return f"{self.filename}:{lineno + self.line_offset}:{col + 1}"

    def error(self, node: ast.AST, message: str) -> ScriptError:
        """A ScriptError at ``node`` quoting the offending line."""
        lineno = getattr(node, "lineno", 1)
        col = getattr(node, "col_offset", 0)
        lines = self.text.splitlines()
        quoted = lines[lineno - 1] if 0 < lineno <= len(lines) else ""
        caret = " " * col + "^"
        return ScriptError(
            f"{self.where_line(lineno, col)}: {message}\n    {quoted}\n    {caret}",
            lineno=lineno + self.line_offset,
            col=col + 1,
        )
