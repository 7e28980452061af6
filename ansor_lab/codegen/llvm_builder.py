"""Emitting loop IR into LLVM IR (llvmlite): scalar code, SIMD loops, parallel loops.

One builder emits one LLVM function. Expression methods are type-generic: inside a
vectorized loop an expression that depends on the loop variable becomes a ``<lanes x T>``
vector and everything it meets is broadcast to match, so the same code serves scalar
and SIMD generation. Memory accesses inside a vectorized loop are analysed per access
(``access``): unit stride -> one vector load/store, invariant -> a scalar load broadcast,
anything else -> gather/scatter. Lane-dependent conditions become masks (masked loads and
stores), so guarded tails never touch memory outside the guard.

A parallel loop is outlined into its own function, run by libgomp's ``GOMP_parallel``
on a persistent thread pool; its free variables travel in a closure of i64 slots.

The builder is assembled from one mixin per job; each dispatches on the node class
name (``expr_<Node>``, ``stmt_<Node>``), the convention of ``ir.visitor``:

    llvm_types     LLVM types, constants, options, loop reports, module state
    llvm_expr      expressions (and reuse of index arithmetic)
    vector_math    calls: intrinsics, libm, the vector exp polynomial
    access         which accesses are scalar / contiguous / gather (IR-level analysis)
    llvm_memory    loads, stores, allocations
    llvm_stmt      statements and loops (serial, unrolled, vectorized; the loop emitter)
    llvm_parallel  parallel loops outlined onto libgomp
"""

from __future__ import annotations

from types import MappingProxyType

from llvmlite import ir

from ..dsl.visitor import Visitor
from ..errors import CodegenError
from .access import MAX_LANES, MAX_WHOLE_LANES
from .llvm_expr import ExprEmitter
from .llvm_memory import MemoryEmitter
from .llvm_parallel import ParallelEmitter
from .llvm_stmt import StmtEmitter
from .llvm_types import (
    ALIGN,
    I1,
    I8,
    I32,
    I64,
    MAX_UNROLL,
    PTR,
    STACK_LIMIT_BYTES,
    CodegenOptions,
    LoopReport,
    ModuleContext,
    Vector,
    llvm_type,
    memory_type,
)
from .vector_math import VectorMath

__all__ = [
    "ALIGN",
    "I1",
    "I8",
    "I32",
    "I64",
    "MAX_LANES",
    "MAX_UNROLL",
    "MAX_WHOLE_LANES",
    "PTR",
    "STACK_LIMIT_BYTES",
    "CodegenOptions",
    "FunctionBuilder",
    "LoopReport",
    "ModuleContext",
    "llvm_type",
    "memory_type",
]


class FunctionBuilder(
    ExprEmitter, VectorMath, MemoryEmitter, StmtEmitter, ParallelEmitter, Visitor
):
    """Emits statements into one LLVM function (``stmt(s)``; ``expr(e)`` for values)."""

    # Lowering removes the DSL's nodes and the verifier rejects them. Ramp/Broadcast are
    # the printed vector form (codegen.vector_form, what get_source("tir") shows); the
    # generator receives prepare's loop form and makes the same vectors from a vectorized
    # For's accesses (codegen.access): consuming the vector form is not done yet
    REFUSED_KINDS = MappingProxyType(
        {
            "Reduce": "a DSL reduction; lowering turns it into loops (lower the schedule first)",
            "TensorLoad": "a DSL tensor read; lowering turns it into a BufferLoad",
            "Ramp": "the printed vector form (vector_view); build from prepare's loop form, "
            "where vector lanes come from a vectorized For's accesses",
            "Broadcast": "the printed vector form (vector_view); build from prepare's loop "
            "form, where a lane-invariant value meeting a vector is splatted",
        }
    )
    error_class = CodegenError

    def __init__(
        self, ctx: ModuleContext, fn: ir.Function, buffers: dict, vars: dict, on_error
    ) -> None:
        self.ctx = ctx
        self.fn = fn
        self.entry = fn.append_basic_block("entry")
        self.alloca_builder = ir.IRBuilder(self.entry)
        self.b = ir.IRBuilder(fn.append_basic_block("body"))
        self.buffers = dict(buffers)
        self.vars = dict(vars)
        self.on_error = on_error  # called with a builder positioned in the failure block
        self.error_block: ir.Block | None = None
        self.vec: Vector | None = None
        self.in_parallel = False
        #: loop variables with constant bounds: var -> (min, max), to prove accesses in bounds
        self.ranges: dict = {}
        #: buffers allocated by this function: private to the thread running it
        self.own: set = set()
        self.nsw = False
        self.flags = ("fast",) if ctx.options.fast_math else ("contract",)
        #: values of index arithmetic already emitted, one dict per region whose code
        #: dominates what follows it (see ``expr``); a loop body or an if branch is a new one
        self.memo: list[dict] = [{}]

    def finish(self, ret: ir.Value | None) -> None:
        """Close the body and link the entry block (allocas) to it."""
        if ret is None:
            self.b.ret_void()
        else:
            self.b.ret(ret)
        self.alloca_builder.branch(self.fn.blocks[1])

    def fail_block(self) -> ir.Block:
        """The block a failure branches to (made once; ``on_error`` fills it)."""
        if self.error_block is None:
            self.error_block = self.fn.append_basic_block("fail")
            self.on_error(ir.IRBuilder(self.error_block))
        return self.error_block
