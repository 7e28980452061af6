"""LLVM types and constants of code generation, the options, loop reports, and the state
shared by the function builders of one LLVM module."""

from __future__ import annotations

import operator
from dataclasses import dataclass, field

from llvmlite import ir

from ..dsl import expr as E

#: Buffers up to this size live on the stack; larger ones on an aligned heap.
STACK_LIMIT_BYTES = 16 * 1024
#: Loops marked "unrolled" with more trips than this stay loops (code size guard).
MAX_UNROLL = 512
ALIGN = 64

I1, I8, I32, I64 = ir.IntType(1), ir.IntType(8), ir.IntType(32), ir.IntType(64)
PTR = ir.PointerType()


def llvm_type(dtype: str) -> ir.Type:
    """The LLVM register type of a scalar dtype."""
    return {
        "bool": I1,
        "int8": I8,
        "int32": I32,
        "int64": I64,
        "float16": ir.HalfType(),
        "float32": ir.FloatType(),
        "float64": ir.DoubleType(),
    }[dtype]


def memory_type(dtype: str) -> ir.Type:
    """The LLVM type of a scalar dtype in memory (bool takes a byte, as in numpy)."""
    return I8 if dtype == "bool" else llvm_type(dtype)


@dataclass
class CodegenOptions:
    """Knobs of code generation."""

    num_threads: int = 1
    fast_math: bool = False  # all fast-math flags; by default only FMA contraction
    record_thread_ids: bool = False  # debug hook: remember which threads ran parallel code
    #: debug: check every buffer access against the buffer's shape at run time (TVM's
    #: ``tir.instrument_bound_checkers``); a failed check returns from the call with an error
    instrument_bound_checkers: bool = False
    #: LLVM's optimization level (3; 1 compiles much faster: the GPU emulator's check
    #: mode, whose programs run once)
    opt_level: int = 3


@dataclass
class LoopReport:
    """What code generation did with one annotated loop."""

    name: str
    kind: str
    extent: int | None
    outcome: str
    detail: dict = field(default_factory=dict)

    def __str__(self) -> str:
        extra = ", ".join(f"{k}={v}" for k, v in self.detail.items())
        ext = f" (extent {self.extent})" if self.extent is not None else ""
        return f"{self.name}{ext}: {self.kind} -> {self.outcome}" + (f" [{extra}]" if extra else "")


@dataclass
class Vector:
    """The vectorized loop being emitted: its variable, lanes (of this chunk), the value
    of lane 0, the current lane mask, the lane-dependent variables and access counts."""

    var: E.Var
    lanes: int
    base: ir.Value
    mask: ir.Value | None = None
    varying: set = field(default_factory=set)
    stats: dict = field(default_factory=dict)


class ModuleContext:
    """State shared by the builders of one LLVM module."""

    def __init__(self, module: ir.Module, options: CodegenOptions) -> None:
        self.module = module
        self.options = options
        self.reports: list[LoopReport] = []
        self.outlined = 0
        self.thread_ids: ir.GlobalVariable | None = None
        self.quiet = 0  # > 0 while emitting the 2nd, 3rd... copy of an unrolled body
        #: id(expr node) -> (node, its variables) for pure integer index arithmetic, or
        #: (node, None); the node is kept so that its id is not reused while we run
        self.index_vars: dict[int, tuple] = {}
        #: (id(indices), id(vector var)) -> (indices, var, indices at lane 0)
        self.lane0: dict[tuple[int, int], tuple] = {}
        #: what each run-time bound check tests (``failures.bounds_code(k)`` names check k)
        self.bound_checks: list[str] = []
        #: the target scales by powers of two in one instruction (AVX-512 ``vscalefps``):
        #: the vector exp ends with ``llvm.ldexp`` (``vector_math``)
        self.scalef = False
        #: the buffers the function stores to: their addresses are emitted as one variable
        #: part plus a constant (``MemoryEmitter.address``)
        self.written: set = set()
        #: the buffers the function loads from (a store to one it never reads may be a
        #: masked store of the next power of two: ``MemoryEmitter.whole_width``)
        self.read: set = set()
        #: the fast-math flags of float arithmetic: ``("fast",)`` with
        #: ``build(fast_math=True)``, else multiply-adds fused (``contract``) plus those of
        #: the target's ``-fast-math*`` options (set by ``llvm._generate``)
        self.float_flags: tuple = ("fast",) if options.fast_math else ("contract",)

    def report(self, r: LoopReport) -> None:
        """Record what happened to a loop (once, not once per unrolled copy)."""
        if not self.quiet:
            self.reports.append(r)

    def declare(self, name: str, ret: ir.Type, args: list) -> ir.Function:
        existing = self.module.globals.get(name)
        if existing is not None:
            return existing
        return ir.Function(self.module, ir.FunctionType(ret, args), name=name)

    def thread_id_table(self) -> ir.GlobalVariable:
        if self.thread_ids is None:
            ty = ir.ArrayType(I32, 64)
            g = ir.GlobalVariable(self.module, ty, name="__ansor_thread_ids")
            g.initializer = ir.Constant(ty, None)
            g.type = PTR  # opaque, like allocas: element addresses come from a typed gep
            self.thread_ids = g
        return self.thread_ids


def vname(vt: ir.VectorType) -> str:
    el = vt.element
    if isinstance(el, ir.IntType):
        return f"v{vt.count}i{el.width}"
    name = {ir.HalfType: "f16", ir.FloatType: "f32", ir.DoubleType: "f64"}[type(el)]
    return f"v{vt.count}{name}"


#: what ``_int_op`` computes when both operands are constants (before wrapping)
INT_FOLD = {"add": operator.add, "sub": operator.sub, "mul": operator.mul}


def int_constant(v: ir.Value) -> int | None:
    """The value of a scalar integer constant, else None."""
    if (
        isinstance(v, ir.Constant)
        and isinstance(v.type, ir.IntType)
        and isinstance(v.constant, int)
        and not isinstance(v.constant, bool)
    ):
        return v.constant
    return None
