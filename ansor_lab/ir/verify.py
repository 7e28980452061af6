"""The IR verifier: rejects malformed programs with a message naming the culprit."""

from __future__ import annotations

from ..dsl import dtypes, expr as E
from ..dsl.visitor import EXPR, STMT, Visitor
from ..errors import IRError
from . import nodes as N


class _Verifier(Visitor):
    """Checks a function: ``expr_X(node, where)`` per sub-expression, ``stmt_X(s)``."""

    # constants, casts and vector nodes have nothing to check beyond their children
    GENERIC_KINDS = frozenset({"IntImm", "FloatImm", "Cast", "Ramp", "Broadcast"})
    error_class = IRError

    def __init__(self, func: N.PrimFunc, target_kind: str | None) -> None:
        self.func = func
        self.target_kind = target_kind
        self.buffers: set[N.Buffer] = set(func.params)
        self.vars: set[E.Var] = set()
        self.parallel_depth = 0

    def fail(self, msg: str) -> None:
        raise IRError(f"invalid IR in function {self.func.name!r}: {msg}")

    # -- expressions ----------------------------------------------------------------
    def expr(self, e: E.PrimExpr, where: str) -> None:
        for node in E.post_order(e):
            check = self.handler(EXPR, node)
            if check is not None:
                check(node, where)

    def expr_Var(self, node: E.Var, where: str) -> None:
        if node not in self.vars:
            self.fail(f"variable {node.name!r} is used in {where} but not defined here")

    def expr_BufferLoad(self, node: N.BufferLoad, where: str) -> None:
        self.access(node.buffer, node.indices, where)
        if node.dtype != node.buffer.dtype and not _is_vector_of(node.dtype, node.buffer):
            self.fail(f"load of {node.buffer.name} has dtype {node.dtype}")

    def expr_TensorLoad(self, node: E.TensorLoad, where: str) -> None:
        self.fail(f"{where} reads tensor {node.tensor.name!r}: lower it to buffers first")

    def expr_Reduce(self, node: E.Reduce, where: str) -> None:
        self.fail(f"{where} holds an unlowered reduction")

    def _binary(self, node: E.BinaryOp, where: str) -> None:
        if not (node.a.dtype == node.b.dtype == node.dtype):
            self.fail(
                f"{type(node).__name__} in {where} mixes {node.a.dtype} and "
                f"{node.b.dtype} into {node.dtype}: {node}"
            )

    expr_Add = expr_Sub = expr_Mul = expr_Div = expr_Mod = _binary
    expr_FloorDiv = expr_FloorMod = expr_Min = expr_Max = _binary

    def _cmp(self, node: E.CmpOp, where: str) -> None:
        if node.a.dtype != node.b.dtype:
            self.fail(f"comparison in {where} mixes {node.a.dtype} and {node.b.dtype}")

    expr_EQ = expr_NE = expr_LT = expr_LE = expr_GT = expr_GE = _cmp

    def _logical(self, node: E.PrimExpr, where: str) -> None:
        for x in (node.a,) if isinstance(node, E.Not) else (node.a, node.b):
            if not dtypes.is_bool(x.dtype):
                self.fail(f"logical operator in {where} applied to {x.dtype}: {node}")

    expr_And = expr_Or = expr_Not = _logical

    def expr_Select(self, node: E.Select, where: str) -> None:
        if not dtypes.is_bool(node.condition.dtype):
            self.fail(f"select condition in {where} is {node.condition.dtype}")

    def expr_Call(self, node: E.Call, where: str) -> None:
        if node.op == "if_then_else" and not dtypes.is_bool(node.args[0].dtype):
            self.fail(f"if_then_else condition in {where} is {node.args[0].dtype}")

    def access(self, buf: N.Buffer, indices: tuple, where: str) -> None:
        if buf not in self.buffers:
            self.fail(
                f"buffer {buf.name!r} is accessed in {where} but is neither a parameter nor "
                "allocated around this point"
            )
        if len(indices) != len(buf.shape):
            self.fail(
                f"buffer {buf.name!r} has {len(buf.shape)} dimensions but is indexed with "
                f"{len(indices)} in {where}"
            )
        for i in indices:
            if not dtypes.is_int(i.dtype):
                self.fail(f"index {i} of {buf.name!r} in {where} is {i.dtype}, not an integer")

    # -- statements -----------------------------------------------------------------
    def stmt(self, s: N.Stmt) -> None:
        self.handler(STMT, s)(s)

    def stmt_SeqStmt(self, s: N.SeqStmt) -> None:
        for item in s.seq:
            self.stmt(item)

    def stmt_For(self, s: N.For) -> None:
        name = s.loop_var.name
        self.expr(s.min, f"the range of loop {name!r}")
        self.expr(s.extent, f"the range of loop {name!r}")
        if not dtypes.is_int(s.extent.dtype):
            self.fail(f"loop {name!r} has a non-integer extent {s.extent}")
        if s.loop_var in self.vars:
            self.fail(f"loop variable {name!r} is bound twice (nested loops share it)")
        if s.kind == "thread_binding" and self.target_kind == "llvm":
            self.fail(
                f"loop {name!r} is bound to {s.thread_tag}, which only a GPU target "
                "has; build for target='cuda' or remove the bind"
            )
        nested_parallel = s.kind == "parallel" and self.parallel_depth > 0
        if nested_parallel and self.target_kind == "llvm":
            self.fail(
                f"loop {name!r} is parallel inside another parallel loop; parallelize "
                "only the outer one (fuse the loops first to parallelize both)"
            )
        self.vars.add(s.loop_var)
        self.parallel_depth += s.kind == "parallel"
        self.stmt(s.body)
        self.parallel_depth -= s.kind == "parallel"
        self.vars.discard(s.loop_var)

    def stmt_BufferStore(self, s: N.BufferStore) -> None:
        where = f"the store to {s.buffer.name!r}"
        self.access(s.buffer, s.indices, where)
        for i in s.indices:
            self.expr(i, where)
        self.expr(s.value, where)
        if s.value.dtype != s.buffer.dtype and not _is_vector_of(s.value.dtype, s.buffer):
            self.fail(f"{where} writes a {s.value.dtype} value into a {s.buffer.dtype} buffer")

    def stmt_Allocate(self, s: N.Allocate) -> None:
        if s.buffer in self.buffers:
            self.fail(f"buffer {s.buffer.name!r} is allocated twice")
        self.buffers.add(s.buffer)
        self.stmt(s.body)
        self.buffers.discard(s.buffer)

    def stmt_IfThenElse(self, s: N.IfThenElse) -> None:
        self.expr(s.condition, "an if condition")
        if not dtypes.is_bool(s.condition.dtype):
            self.fail(f"if condition {s.condition} is {s.condition.dtype}, not bool")
        self.stmt(s.then_case)
        if s.else_case is not None:
            self.stmt(s.else_case)

    def stmt_LetStmt(self, s: N.LetStmt) -> None:
        self.expr(s.value, f"the value of {s.var.name!r}")
        if s.var.dtype != s.value.dtype:
            self.fail(f"let {s.var.name!r}: {s.var.dtype} bound to a {s.value.dtype} value")
        self.vars.add(s.var)
        self.stmt(s.body)
        self.vars.discard(s.var)

    def stmt_Evaluate(self, s: N.Evaluate) -> None:
        self.expr(s.value, "an evaluate statement")

    def stmt_Block(self, s: N.Block) -> None:
        self.stmt(s.body)


def _is_vector_of(dtype: str, buf: N.Buffer) -> bool:
    return dtype.startswith(buf.dtype + "x")


def verify(func: N.PrimFunc, target_kind: str | None = None) -> None:
    """Raise IRError if ``func`` is malformed (for ``target_kind`` "llvm"/"cuda" if given)."""
    if len({id(b) for b in func.params}) != len(func.params):
        raise IRError(f"invalid IR in function {func.name!r}: a buffer is passed twice")
    _Verifier(func, target_kind).stmt(func.body)
