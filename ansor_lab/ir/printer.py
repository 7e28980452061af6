"""TVMScript-like text of loop IR (``T.Buffer``, ``T.parallel``, ``T.alloc_buffer``)."""

from __future__ import annotations

from ..dsl import expr as E
from ..dsl.expr import IntImm
from ..dsl.printer import text as expr_text
from ..dsl.visitor import STMT, Visitor
from ..errors import IRError
from . import nodes as N
from .block_text import block_parts, reads_writes
from .gpu import is_barrier
from .visitor import walk_stmts

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


def _is_grid_loop(s: N.Stmt) -> bool:
    """A loop ``T.grid`` can print: serial, from 0, no annotations."""
    return (
        isinstance(s, N.For)
        and s.kind == "serial"
        and not s.annotations
        and isinstance(s.min, IntImm)
        and s.min.value == 0
    )


def has_blocks(s: N.Stmt) -> bool:
    """Whether ``s`` holds a TensorIR block with iteration variables (prints as blocks)."""
    return any(isinstance(x, N.Block) and x.axes for x in walk_stmts(s))


class _Printer(Visitor):
    """Prints statements as indented lines: ``stmt_X(s, indent)``.

    ``blocks=True`` prints as TVM prints TensorIR: blocks with their axes, reads and
    writes, and perfectly nested serial loops as one ``T.grid``.
    """

    error_class = IRError

    def __init__(self, blocks: bool = False) -> None:
        self.lines: list[str] = []
        self.blocks = blocks
        self.loops: dict = {}  # enclosing loop var -> the For

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
        nest = [s]
        if self.blocks and _is_grid_loop(s):
            while _is_grid_loop(nest[-1].body) and not (
                E.free_vars(nest[-1].body.extent) & {x.loop_var for x in nest}
            ):
                nest.append(nest[-1].body)
        if len(nest) > 1:
            names = ", ".join(x.loop_var.name for x in nest)
            extents = ", ".join(expr_text(x.extent) for x in nest)
            self.emit(indent, f"for {names} in T.grid({extents}):")
        else:
            self.emit(indent, f"for {s.loop_var.name} in {_range_text(s)}:")
        for x in nest:
            self.loops[x.loop_var] = x
        try:
            self.stmt(nest[-1].body, indent + 1)
        finally:
            for x in nest:
                self.loops.pop(x.loop_var, None)

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
        parts = block_parts(s) if self.blocks else None
        if parts is not None:
            self.block(s, parts, indent)
            return
        note = "".join(f", {k}={v!r}" for k, v in s.annotations)
        self.emit(indent, f'# stage "{s.name}"{note}')
        self.stmt(s.body, indent)

    def remappable(self, var: E.Var, binding: E.PrimExpr, ax: N.BlockAxis) -> bool:
        loop = self.loops.get(binding) if isinstance(binding, E.Var) else None
        return (
            loop is not None
            and isinstance(loop.min, IntImm)
            and isinstance(loop.extent, IntImm)
            and (loop.min.value, loop.extent.value) == (ax.min, ax.extent)
        )

    def axes_lines(self, s: N.Block, parts, indent: int) -> None:
        """One ``T.axis.remap`` per run of plain loop bindings, else ``T.axis.spatial``."""
        run: list[int] = []

        def flush() -> None:
            if len(run) == 1:
                single(run[0])
            elif run:
                names = ", ".join(parts.vars[k].name for k in run)
                kinds = "".join(s.axes[k].kind for k in run)
                loops = ", ".join(parts.bindings[k].name for k in run)
                self.emit(indent, f'{names} = T.axis.remap("{kinds}", [{loops}])')
            run.clear()

        def single(k: int) -> None:
            ax = s.axes[k]
            kind = "spatial" if ax.kind == "S" else "reduce"
            dom = str(ax.extent) if ax.min == 0 else f"({ax.min}, {ax.min + ax.extent})"
            binding = expr_text(parts.bindings[k])
            self.emit(indent, f"{parts.vars[k].name} = T.axis.{kind}({dom}, {binding})")

        for k, (var, binding) in enumerate(zip(parts.vars, parts.bindings)):
            if self.remappable(var, binding, s.axes[k]):
                run.append(k)
                continue
            flush()
            single(k)
        flush()

    def block(self, s: N.Block, parts, indent: int) -> None:
        self.emit(indent, f'with T.block("{s.name}"):')
        self.axes_lines(s, parts, indent + 1)
        if parts.where is not None:
            self.emit(indent + 1, f"T.where({expr_text(parts.where)})")
        reads, writes = reads_writes(parts)
        self.emit(indent + 1, f"T.reads({', '.join(reads)})")
        self.emit(indent + 1, f"T.writes({', '.join(writes)})")
        if s.annotations:
            items = ", ".join(f'"{k}": {v!r}' for k, v in s.annotations)
            self.emit(indent + 1, f"T.block_attr({{{items}}})")
        if parts.init is not None:
            self.emit(indent + 1, "with T.init():")
            self.stmt(parts.init, indent + 2)
        self.stmt(parts.body, indent + 1)


def stmt_to_str(s: N.Stmt) -> str:
    """The text of a statement."""
    p = _Printer(blocks=has_blocks(s))
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
    """The text of a PrimFunc as written: TensorIR blocks where its body has described
    blocks (``Block.axes``), else loops with stage markers as comments."""
    params = ", ".join(f'{b.name}: T.Buffer({_buffer_decl(b)}, "{b.dtype}")' for b in f.params)
    p = _Printer(blocks=has_blocks(f.body))
    p.emit(0, "@T.prim_func")
    p.emit(0, f"def {f.name}({params}):")
    if f.attrs:
        items = ", ".join(f'"{k}": {v!r}' for k, v in f.attrs)
        p.emit(1, f"T.func_attr({{{items}}})")
    p.stmt(f.body, 1)
    return "\n".join(p.lines)
