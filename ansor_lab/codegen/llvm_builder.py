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
from . import failures
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
from .vector_form import HAND_BUILT_VECTOR
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
            "Ramp": HAND_BUILT_VECTOR,
            "Broadcast": HAND_BUILT_VECTOR,
        }
    )
    error_class = CodegenError

    def __init__(self, ctx: ModuleContext, fn: ir.Function, buffers: dict, vars: dict) -> None:
        self.ctx = ctx
        self.fn = fn
        self.entry = fn.append_basic_block("entry")
        self.alloca_builder = ir.IRBuilder(self.entry)
        self.b = ir.IRBuilder(fn.append_basic_block("body"))
        self.buffers = dict(buffers)
        self.vars = dict(vars)
        #: return code -> the block returning it (``fail_block``); the function returns i32
        self.error_blocks: dict[int, ir.Block] = {}
        self.vec: Vector | None = None
        self.in_parallel = False
        #: loop variables with constant bounds: var -> (min, max), to prove accesses in bounds
        self.ranges: dict = {}
        #: buffers allocated by this function: private to the thread running it
        self.own: set = set()
        #: stores of min/max reduction nests being emitted with a NaN flag:
        #: id(store) -> (``nan_flag_reduce.NanFlagReduce``, {width: its flag alloca})
        self.nan_flags: dict = {}
        self.nsw = False
        self.flags = ctx.float_flags
        #: flags of float divisions (``arcp`` added inside a loop annotated
        #: ``pragma_fp_reciprocal``, see ``horizontal_reduce.RECIPROCAL``)
        self.div_flags = self.flags
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

    def fail_block(self, code: int = failures.ALLOC_FAILED) -> ir.Block:
        """The block returning failure ``code`` (one per code, made on first use)."""
        block = self.error_blocks.get(code)
        if block is None:
            block = self.fn.append_basic_block(f"fail{-code}")
            ir.IRBuilder(block).ret(ir.Constant(I32, code))
            self.error_blocks[code] = block
        return block

    def fail_with(self, code: ir.Value) -> None:
        """Return the i32 ``code`` (a run-time value) when it is not 0, else go on."""
        block = self.fn.append_basic_block("fail.code")
        ir.IRBuilder(block).ret(code)
        ok = self.fn.append_basic_block("ok")
        self.b.cbranch(self.b.icmp_signed("!=", code, ir.Constant(I32, 0)), block, ok)
        self.b.position_at_end(ok)

    def fail_if(self, cond: ir.Value, code: int) -> None:
        """Return ``code`` when ``cond`` holds on some lane that is on (the current mask),
        else go on; ``cond`` is an i1 or, in a vectorized loop, a vector of i1."""
        bld = self.b
        mask = self.vec.mask if self.vec is not None else None
        if isinstance(cond.type, ir.VectorType):
            if mask is not None:
                cond = bld.and_(cond, mask)
            lanes = cond.type.count
            cond = bld.icmp_unsigned(
                "!=", bld.bitcast(cond, ir.IntType(lanes)), ir.Constant(ir.IntType(lanes), 0)
            )
        elif mask is not None:
            cond = bld.and_(cond, self._any_lane())
        ok = self.fn.append_basic_block("check.ok")
        bld.cbranch(cond, self.fail_block(code), ok)
        bld.position_at_end(ok)
