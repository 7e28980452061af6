"""TVMScript-like text of loop IR (``T.Buffer``, ``T.parallel``, ``T.alloc_buffer``)."""

from __future__ import annotations

from ..dsl.expr import IntImm
from ..dsl.printer import text as expr_text
from ..dsl.visitor import STMT, Visitor
from ..errors import IRError
from . import nodes as N
from .gpu import is_barrier

_KIND_CALL = {
    "parallel": "T.parallel",
    "vectorized": "T.vectorized",
    "unrolled": "T.unroll",
    "thread_binding": "T.thread_binding",
}


def _range_text(loop: N.For) -> str:
    lo, ext = loop.min, loop.extent
    if isinstance(lo, IntImm) and lo.value == 0:
        args = expr_text(ext)
    elif isinstance(lo, IntImm) and isinstance(ext, IntImm):
        args = f"{lo.value}, {lo.value + ext.value}"
    else:
        args = f"{expr_text(lo)}, {expr_text(lo)} + {expr_text(ext)}"
    extras = []
    if loop.kind == "thread_binding":
        extras.append(f'thread="{loop.thread_tag}"')
    if loop.annotations:
        items = ", ".join(f'"{k}": {v!r}' for k, v in loop.annotations)
        extras.append(f"annotations={{{items}}}")
    call = _KIND_CALL.get(loop.kind)
    if call is None and not extras:
        return f"range({args})"
    return f"{call or 'T.serial'}({', '.join([args] + extras)})"


def _buffer_decl(b: N.Buffer) -> str:
    shape = ", ".join(str(s) for s in b.shape)
    shape = f"({shape},)" if len(b.shape) == 1 else f"({shape})"
    return shape


class _Printer(Visitor):
    """Prints statements as indented lines: ``stmt_X(s, indent)``."""

    error_class = IRError

    def __init__(self) -> None:
        self.lines: list[str] = []

    def emit(self, indent: int, line: str) -> None:
        self.lines.append("    " * indent + line)

    def stmt(self, s: N.Stmt, indent: int) -> None:
        self.handler(STMT, s)(s, indent)

    def stmt_SeqStmt(self, s: N.SeqStmt, indent: int) -> None:
        if not s.seq:
            self.emit(indent, "T.evaluate(0)")
        for item in s.seq:
            self.stmt(item, indent)

    def stmt_For(self, s: N.For, indent: int) -> None:
        self.emit(indent, f"for {s.loop_var.name} in {_range_text(s)}:")
        self.stmt(s.body, indent + 1)

    def stmt_BufferStore(self, s: N.BufferStore, indent: int) -> None:
        idx = ", ".join(expr_text(i) for i in s.indices)
        self.emit(indent, f"{s.buffer.name}[{idx}] = {expr_text(s.value)}")

    def stmt_Allocate(self, s: N.Allocate, indent: int) -> None:
        b = s.buffer
        scope = f', scope="{b.scope}"' if b.scope != "global" else ""
        # padded strides (storage_align) are part of the buffer, so they are printed
        strides = f", strides={tuple(b.padded_strides)}" if b.padded_strides else ""
        decl = f'{_buffer_decl(b)}, "{b.dtype}"{strides}{scope}'
        self.emit(indent, f"{b.name} = T.alloc_buffer({decl})")
        self.stmt(s.body, indent)

    def stmt_IfThenElse(self, s: N.IfThenElse, indent: int) -> None:
        self.emit(indent, f"if {expr_text(s.condition)}:")
        self.stmt(s.then_case, indent + 1)
        if s.else_case is not None:
            self.emit(indent, "else:")
            self.stmt(s.else_case, indent + 1)

    def stmt_LetStmt(self, s: N.LetStmt, indent: int) -> None:
        self.emit(indent, f"{s.var.name}: T.{s.var.dtype} = {expr_text(s.value)}")
        self.stmt(s.body, indent)

    def stmt_Evaluate(self, s: N.Evaluate, indent: int) -> None:
        if is_barrier(s):  # TVM prints the block barrier this way
            self.emit(indent, 'T.tvm_storage_sync("shared")')
            return
        self.emit(indent, f"T.evaluate({expr_text(s.value)})")

    def stmt_Block(self, s: N.Block, indent: int) -> None:
        note = "".join(f", {k}={v!r}" for k, v in s.annotations)
        self.emit(indent, f'# stage "{s.name}"{note}')
        self.stmt(s.body, indent)


def stmt_to_str(s: N.Stmt) -> str:
    """The text of a statement."""
    p = _Printer()
    p.stmt(s, 0)
    return "\n".join(p.lines)


#: functions ``f -> text | None`` that print some PrimFuncs another way (the schedule layer
#: registers TVM's block form for unscheduled ``create_prim_func`` results)
SCRIPT_HOOKS: list = []


def func_to_str(f: N.PrimFunc) -> str:
    """The text of a PrimFunc, as a ``@T.prim_func`` definition."""
    for hook in SCRIPT_HOOKS:
        text = hook(f)
        if text is not None:
            return text
    return loop_form(f)


def loop_form(f: N.PrimFunc) -> str:
    """The loop-form text of a PrimFunc (stage markers as comments), whatever made it."""
    params = ", ".join(f'{b.name}: T.Buffer({_buffer_decl(b)}, "{b.dtype}")' for b in f.params)
    p = _Printer()
    p.emit(0, "@T.prim_func")
    p.emit(0, f"def {f.name}({params}):")
    p.stmt(f.body, 1)
    return "\n".join(p.lines)
