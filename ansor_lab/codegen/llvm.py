"""LLVM code generation (llvmlite): loop IR to native code for the host CPU.

The generated function is ``i32 name(ptr noalias A, ptr noalias B, ...)``: one pointer per
buffer parameter, 0 returned on success and a negative code on failure (an allocation
that failed). A second entry ``name__repeat(i64 n, args...)`` calls it ``n`` times, so
the timer measures the kernel, not Python's call overhead.

Semantics follow ``dsl.expr``: integer ``/`` truncates, ``//`` and ``%`` floor; float
min/max propagate NaN like numpy (``llvm.minimum`` / ``llvm.maximum``); ``round`` rounds
half to even; comparisons are ordered except ``!=`` (true for NaN, as in numpy).
No fast-math flags are set, so float results are those of the program as written.
"""

from __future__ import annotations

from dataclasses import dataclass

import llvmlite.binding as llvm
import numpy as np
from llvmlite import ir

from ..dsl import dtypes
from ..dsl import expr as E
from ..errors import CodegenError
from ..ir import nodes as N
from .target import Target, host_cpu

#: Buffers up to this size live on the stack; larger ones on an aligned heap.
STACK_LIMIT_BYTES = 16 * 1024
#: Loops marked "unrolled" with more trips than this stay loops (code size guard).
MAX_UNROLL = 512
ALIGN = 64

_I1, _I8, _I32, _I64 = ir.IntType(1), ir.IntType(8), ir.IntType(32), ir.IntType(64)
_PTR = ir.PointerType()


def llvm_type(dtype: str) -> ir.Type:
    """The LLVM register type of a scalar dtype."""
    return {
        "bool": _I1, "int8": _I8, "int32": _I32, "int64": _I64,
        "float16": ir.HalfType(), "float32": ir.FloatType(), "float64": ir.DoubleType(),
    }[dtype]


def memory_type(dtype: str) -> ir.Type:
    """The LLVM type of a scalar dtype in memory (bool takes a byte, as in numpy)."""
    return _I8 if dtype == "bool" else llvm_type(dtype)


_FLOAT_SUFFIX = {"float16": "f16", "float32": "f32", "float64": "f64"}
_LIBM = {"float32": "f", "float64": ""}
_INTRINSIC = {
    "exp": "llvm.exp", "log": "llvm.log", "sqrt": "llvm.sqrt", "floor": "llvm.floor",
    "ceil": "llvm.ceil", "round": "llvm.roundeven", "abs": "llvm.fabs", "pow": "llvm.pow",
}
_FCMP = {E.EQ: "==", E.NE: "!=", E.LT: "<", E.LE: "<=", E.GT: ">", E.GE: ">="}


class _FunctionBuilder:
    """Emits one PrimFunc into an llvmlite module."""

    def __init__(self, module: ir.Module, func: N.PrimFunc) -> None:
        self.module = module
        self.func = func
        fnty = ir.FunctionType(_I32, [_PTR] * len(func.params))
        self.fn = ir.Function(module, fnty, name=func.name)
        self.fn.attributes.add("noinline")
        self.fn.attributes.add("nounwind")
        for arg, buf in zip(self.fn.args, func.params):
            arg.name = buf.name
            arg.add_attribute("noalias")
        self.entry = self.fn.append_basic_block("entry")
        self.alloca_builder = ir.IRBuilder(self.entry)
        body_block = self.fn.append_basic_block("body")
        self.b = ir.IRBuilder(body_block)
        self.error_block = None
        self.vars: dict = {}
        self.buffers: dict = {b: a for b, a in zip(func.params, self.fn.args)}

    # -- helpers ----------------------------------------------------------------------
    def declare(self, name: str, ret: ir.Type, args: list) -> ir.Function:
        existing = self.module.globals.get(name)
        if existing is not None:
            return existing
        return ir.Function(self.module, ir.FunctionType(ret, args), name=name)

    def intrinsic(self, name: str, dtype: str, n_args: int = 1) -> ir.Function:
        t = llvm_type(dtype)
        suffix = _FLOAT_SUFFIX.get(dtype) or f"i{dtypes.bits(dtype)}"
        return self.declare(f"{name}.{suffix}", t, [t] * n_args)

    def fail_block(self) -> ir.Block:
        if self.error_block is None:
            self.error_block = self.fn.append_basic_block("fail")
            ir.IRBuilder(self.error_block).ret(ir.Constant(_I32, -1))
        return self.error_block

    # -- expressions ------------------------------------------------------------------
    def expr(self, e: E.PrimExpr) -> ir.Value:
        method = getattr(self, "e_" + type(e).__name__, None)
        if method is None:
            raise CodegenError(f"the LLVM backend cannot generate {type(e).__name__}: {e}")
        return method(e)

    def e_Var(self, e: E.Var) -> ir.Value:
        try:
            return self.vars[e]
        except KeyError:
            raise CodegenError(f"variable {e.name!r} is not bound") from None

    def e_IntImm(self, e: E.IntImm) -> ir.Value:
        return ir.Constant(llvm_type(e.dtype), int(e.value))

    def e_FloatImm(self, e: E.FloatImm) -> ir.Value:
        # Round once, with numpy, to the constant's own precision: that is what the
        # reference evaluator does, it maps overflow to inf (llvmlite's struct packing
        # would raise), and half constants need no fptrunc constexpr (LLVM rejects those).
        with np.errstate(over="ignore"):
            value = float(dtypes.to_numpy(e.dtype).type(e.value))
        return ir.Constant(llvm_type(e.dtype), value)

    def cast(self, v: ir.Value, src: str, dst: str) -> ir.Value:
        b = self.b
        if src == dst:
            return v
        st, dt = llvm_type(src), llvm_type(dst)
        if dst == "bool":
            if dtypes.is_float(src):
                return b.fcmp_unordered("!=", v, ir.Constant(st, 0.0))
            return b.icmp_signed("!=", v, ir.Constant(st, 0))
        if src == "bool":
            return b.uitofp(v, dt) if dtypes.is_float(dst) else b.zext(v, dt)
        if dtypes.is_int(src) and dtypes.is_int(dst):
            if dtypes.bits(src) < dtypes.bits(dst):
                return b.sext(v, dt)
            return b.trunc(v, dt)
        if dtypes.is_int(src):
            return b.sitofp(v, dt)
        if dtypes.is_int(dst):
            return b.fptosi(v, dt)
        if dtypes.bits(src) < dtypes.bits(dst):
            return b.fpext(v, dt)
        return b.fptrunc(v, dt)

    def e_Cast(self, e: E.Cast) -> ir.Value:
        return self.cast(self.expr(e.value), e.value.dtype, e.dtype)

    def _ab(self, e) -> tuple[ir.Value, ir.Value]:
        return self.expr(e.a), self.expr(e.b)

    def e_Add(self, e):
        a, b = self._ab(e)
        return self.b.fadd(a, b) if dtypes.is_float(e.dtype) else self.b.add(a, b)

    def e_Sub(self, e):
        a, b = self._ab(e)
        return self.b.fsub(a, b) if dtypes.is_float(e.dtype) else self.b.sub(a, b)

    def e_Mul(self, e):
        a, b = self._ab(e)
        return self.b.fmul(a, b) if dtypes.is_float(e.dtype) else self.b.mul(a, b)

    def e_Div(self, e):
        a, b = self._ab(e)
        return self.b.fdiv(a, b) if dtypes.is_float(e.dtype) else self.b.sdiv(a, b)

    def e_Mod(self, e):
        a, b = self._ab(e)
        return self.b.frem(a, b) if dtypes.is_float(e.dtype) else self.b.srem(a, b)

    def e_FloorDiv(self, e):
        a, b = self._ab(e)
        bld = self.b
        if dtypes.is_float(e.dtype):
            return bld.call(self.intrinsic("llvm.floor", e.dtype), [bld.fdiv(a, b)])
        t = llvm_type(e.dtype)
        q = bld.sdiv(a, b)
        r = bld.srem(a, b)
        # q - 1 when the remainder is non-zero and has the opposite sign of the divisor
        nonzero = bld.icmp_signed("!=", r, ir.Constant(t, 0))
        signs = bld.icmp_signed("<", bld.xor(r, b), ir.Constant(t, 0))
        return bld.select(bld.and_(nonzero, signs), bld.sub(q, ir.Constant(t, 1)), q)

    def e_FloorMod(self, e):
        a, b = self._ab(e)
        bld = self.b
        if dtypes.is_float(e.dtype):
            q = bld.call(self.intrinsic("llvm.floor", e.dtype), [bld.fdiv(a, b)])
            return bld.fsub(a, bld.fmul(q, b))
        t = llvm_type(e.dtype)
        r = bld.srem(a, b)
        nonzero = bld.icmp_signed("!=", r, ir.Constant(t, 0))
        signs = bld.icmp_signed("<", bld.xor(r, b), ir.Constant(t, 0))
        return bld.select(bld.and_(nonzero, signs), bld.add(r, b), r)

    def _minmax(self, e, is_min: bool):
        a, b = self._ab(e)
        if dtypes.is_float(e.dtype):
            name = "llvm.minimum" if is_min else "llvm.maximum"
            return self.b.call(self.intrinsic(name, e.dtype, 2), [a, b])
        cmp = self.b.icmp_signed("<" if is_min else ">", a, b)
        return self.b.select(cmp, a, b)

    def e_Min(self, e):
        return self._minmax(e, True)

    def e_Max(self, e):
        return self._minmax(e, False)

    def _cmp(self, e):
        a, b = self._ab(e)
        op = _FCMP[type(e)]
        dt = e.a.dtype
        if dtypes.is_float(dt):
            if op == "!=":
                return self.b.fcmp_unordered(op, a, b)
            return self.b.fcmp_ordered(op, a, b)
        if dt == "bool":
            return self.b.icmp_unsigned(op, a, b)
        return self.b.icmp_signed(op, a, b)

    e_EQ = e_NE = e_LT = e_LE = e_GT = e_GE = _cmp

    def e_And(self, e):
        a, b = self._ab(e)
        return self.b.and_(a, b)

    def e_Or(self, e):
        a, b = self._ab(e)
        return self.b.or_(a, b)

    def e_Not(self, e):
        return self.b.xor(self.expr(e.a), ir.Constant(_I1, 1))

    def e_Select(self, e):
        c = self.expr(e.condition)
        t = self.expr(e.true_value)
        f = self.expr(e.false_value)
        return self.b.select(c, t, f)

    def e_Call(self, e: E.Call) -> ir.Value:
        if e.op == "if_then_else":
            return self._if_then_else(e)
        args = [self.expr(a) for a in e.args]
        dt = e.dtype
        bld = self.b
        if e.op == "abs" and not dtypes.is_float(dt):
            zero = ir.Constant(llvm_type(dt), 0)
            neg = bld.sub(zero, args[0])
            return bld.select(bld.icmp_signed("<", args[0], zero), neg, args[0])
        if e.op in _INTRINSIC:
            return bld.call(self.intrinsic(_INTRINSIC[e.op], dt, len(args)), args)
        one = ir.Constant(llvm_type(dt), 1.0)
        if e.op == "rsqrt":
            return bld.fdiv(one, bld.call(self.intrinsic("llvm.sqrt", dt), args))
        if e.op == "sigmoid":
            ex = bld.call(self.intrinsic("llvm.exp", dt), [bld.fneg(args[0])])
            return bld.fdiv(one, bld.fadd(one, ex))
        if e.op in ("tanh", "erf"):
            return self._libm(e.op, dt, args[0])
        raise CodegenError(f"the LLVM backend has no intrinsic {e.op!r}")

    def _libm(self, name: str, dt: str, x: ir.Value) -> ir.Value:
        # float16 goes through float: libm has no half functions
        work = "float32" if dt == "float16" else dt
        if dt == "float16":
            x = self.b.fpext(x, ir.FloatType())
        fn = self.declare(name + _LIBM[work], llvm_type(work), [llvm_type(work)])
        out = self.b.call(fn, [x])
        return self.b.fptrunc(out, ir.HalfType()) if dt == "float16" else out

    def _if_then_else(self, e: E.Call) -> ir.Value:
        cond = self.expr(e.args[0])
        bld = self.b
        then_bb = self.fn.append_basic_block("ite.then")
        else_bb = self.fn.append_basic_block("ite.else")
        end_bb = self.fn.append_basic_block("ite.end")
        bld.cbranch(cond, then_bb, else_bb)
        bld.position_at_end(then_bb)
        t = self.expr(e.args[1])
        then_end = bld.block
        bld.branch(end_bb)
        bld.position_at_end(else_bb)
        f = self.expr(e.args[2])
        else_end = bld.block
        bld.branch(end_bb)
        bld.position_at_end(end_bb)
        phi = bld.phi(llvm_type(e.dtype))
        phi.add_incoming(t, then_end)
        phi.add_incoming(f, else_end)
        return phi

    def address(self, buf: N.Buffer, indices: tuple) -> ir.Value:
        ptr = self.buffers.get(buf)
        if ptr is None:
            raise CodegenError(f"buffer {buf.name!r} is not allocated here")
        offset = None
        for idx, stride in zip(indices, buf.strides):
            v = self.expr(idx)
            v = self.b.sext(v, _I64) if v.type.width < 64 else v
            term = v if stride == 1 else self.b.mul(v, ir.Constant(_I64, stride))
            offset = term if offset is None else self.b.add(offset, term)
        if offset is None:
            offset = ir.Constant(_I64, 0)
        return self.b.gep(ptr, [offset], source_etype=memory_type(buf.dtype))

    def e_BufferLoad(self, e: N.BufferLoad) -> ir.Value:
        addr = self.address(e.buffer, e.indices)
        v = self.b.load(addr, typ=memory_type(e.buffer.dtype), align=dtypes.itemsize(e.dtype))
        if e.buffer.dtype == "bool":
            return self.b.icmp_unsigned("!=", v, ir.Constant(_I8, 0))
        return v

    # -- statements -------------------------------------------------------------------
    def stmt(self, s: N.Stmt) -> None:
        method = getattr(self, "s_" + type(s).__name__, None)
        if method is None:
            raise CodegenError(f"the LLVM backend cannot generate {type(s).__name__}")
        method(s)

    def s_SeqStmt(self, s: N.SeqStmt) -> None:
        for item in s.seq:
            self.stmt(item)

    def s_Block(self, s: N.Block) -> None:
        self.stmt(s.body)

    def s_Evaluate(self, s: N.Evaluate) -> None:
        self.expr(s.value)

    def s_BufferStore(self, s: N.BufferStore) -> None:
        value = self.expr(s.value)
        addr = self.address(s.buffer, s.indices)
        if s.buffer.dtype == "bool":
            value = self.b.zext(value, _I8)
        self.b.store(value, addr, align=dtypes.itemsize(s.buffer.dtype))

    def s_LetStmt(self, s: N.LetStmt) -> None:
        self.vars[s.var] = self.expr(s.value)
        self.stmt(s.body)
        del self.vars[s.var]

    def s_IfThenElse(self, s: N.IfThenElse) -> None:
        cond = self.expr(s.condition)
        bld = self.b
        then_bb = self.fn.append_basic_block("if.then")
        end_bb = self.fn.append_basic_block("if.end")
        else_bb = self.fn.append_basic_block("if.else") if s.else_case is not None else end_bb
        bld.cbranch(cond, then_bb, else_bb)
        bld.position_at_end(then_bb)
        self.stmt(s.then_case)
        bld.branch(end_bb)
        if s.else_case is not None:
            bld.position_at_end(else_bb)
            self.stmt(s.else_case)
            bld.branch(end_bb)
        bld.position_at_end(end_bb)

    def s_For(self, s: N.For) -> None:
        if s.kind == "thread_binding":
            raise CodegenError(
                f"loop {s.loop_var.name!r} is bound to {s.thread_tag}; the LLVM (CPU) backend "
                "has no GPU threads: build with target='cuda' or remove the bind"
            )
        extent = s.extent
        if (
            s.kind == "unrolled"
            and isinstance(extent, E.IntImm)
            and isinstance(s.min, E.IntImm)
            and extent.value <= MAX_UNROLL
        ):
            vt = llvm_type(s.loop_var.dtype)
            for k in range(extent.value):
                self.vars[s.loop_var] = ir.Constant(vt, s.min.value + k)
                self.stmt(s.body)
            self.vars.pop(s.loop_var, None)
            return
        self.serial_loop(s)

    def serial_loop(self, s: N.For) -> None:
        bld = self.b
        vt = llvm_type(s.loop_var.dtype)
        lo = self.expr(s.min)
        hi = bld.add(lo, self.expr(s.extent))
        pre = bld.block
        head = self.fn.append_basic_block(f"for.{s.loop_var.name}")
        body = self.fn.append_basic_block(f"for.{s.loop_var.name}.body")
        end = self.fn.append_basic_block(f"for.{s.loop_var.name}.end")
        bld.branch(head)
        bld.position_at_end(head)
        phi = bld.phi(vt, name=s.loop_var.name)
        phi.add_incoming(lo, pre)
        bld.cbranch(bld.icmp_signed("<", phi, hi), body, end)
        bld.position_at_end(body)
        self.vars[s.loop_var] = phi
        self.stmt(s.body)
        nxt = bld.add(phi, ir.Constant(vt, 1), flags=["nsw"])
        phi.add_incoming(nxt, bld.block)
        bld.branch(head)
        bld.position_at_end(end)
        del self.vars[s.loop_var]

    def s_Allocate(self, s: N.Allocate) -> None:
        buf = s.buffer
        nbytes = buf.nbytes
        etype = memory_type(buf.dtype)
        heap = nbytes > STACK_LIMIT_BYTES
        if not heap:
            # allocas live in the entry block so loops do not grow the stack
            ptr = self.alloca_builder.alloca(etype, size=buf.size, name=buf.name)
            ptr.align = ALIGN
        else:
            size = -(-nbytes // ALIGN) * ALIGN
            alloc = self.declare("aligned_alloc", _PTR, [_I64, _I64])
            ptr = self.b.call(alloc, [ir.Constant(_I64, ALIGN), ir.Constant(_I64, size)],
                              name=buf.name)
            ok = self.fn.append_basic_block(f"alloc.{buf.name}.ok")
            isnull = self.b.icmp_unsigned("==", ptr, ir.Constant(_PTR, None))
            self.b.cbranch(isnull, self.fail_block(), ok)
            self.b.position_at_end(ok)
        self.buffers[buf] = ptr
        self.stmt(s.body)
        del self.buffers[buf]
        if heap:
            self.b.call(self.declare("free", ir.VoidType(), [_PTR]), [ptr])

    # -- driver -----------------------------------------------------------------------
    def build(self) -> None:
        self.stmt(self.func.body)
        self.b.ret(ir.Constant(_I32, 0))
        self.alloca_builder.branch(self.fn.blocks[1])

    def build_repeat(self) -> None:
        """``name__repeat(i64 n, args...)``: call the kernel n times (for the timer)."""
        n_args = len(self.func.params)
        fnty = ir.FunctionType(_I32, [_I64] + [_PTR] * n_args)
        fn = ir.Function(self.module, fnty, name=self.func.name + "__repeat")
        entry = fn.append_basic_block("entry")
        head = fn.append_basic_block("head")
        body = fn.append_basic_block("body")
        done = fn.append_basic_block("done")
        bld = ir.IRBuilder(entry)
        bld.branch(head)
        bld.position_at_end(head)
        i = bld.phi(_I64)
        i.add_incoming(ir.Constant(_I64, 0), entry)
        bld.cbranch(bld.icmp_signed("<", i, fn.args[0]), body, done)
        bld.position_at_end(body)
        rc = bld.call(self.fn, list(fn.args[1:]))
        failed = bld.icmp_signed("!=", rc, ir.Constant(_I32, 0))
        cont = fn.append_basic_block("cont")
        fail = fn.append_basic_block("fail")
        bld.cbranch(failed, fail, cont)
        bld.position_at_end(fail)
        bld.ret(rc)
        bld.position_at_end(cont)
        i.add_incoming(bld.add(i, ir.Constant(_I64, 1)), cont)
        bld.branch(head)
        bld.position_at_end(done)
        bld.ret(ir.Constant(_I32, 0))


def target_machine(mcpu: str, mattr: str):
    """A new LLVM TargetMachine for this host (O3, JIT code model).

    Deliberately not cached: MCJIT takes ownership of the machine it is given and deletes
    it with its engine, so a shared machine would dangle once the first module is freed.
    Creating one costs well under a millisecond.
    """
    name, features = host_cpu()
    triple = llvm.get_process_triple()
    tgt = llvm.Target.from_triple(triple)
    feats = features if mcpu == name and not mattr else mattr
    return tgt.create_target_machine(cpu=mcpu, features=feats, opt=3, codemodel="jitdefault")


def generate_ir(func: N.PrimFunc, target: Target) -> str:
    """Unoptimized LLVM IR text of ``func`` (plus its ``__repeat`` entry)."""
    module = ir.Module(name=func.name)
    module.triple = llvm.get_process_triple()
    fb = _FunctionBuilder(module, func)
    fb.build()
    fb.build_repeat()
    return str(module)


def optimize(mod: llvm.ModuleRef, tm) -> None:
    """Run LLVM's O3 pipeline (loop and SLP vectorizers on) over ``mod`` in place."""
    pto = llvm.create_pipeline_tuning_options(speed_level=3)
    pto.loop_vectorization = True
    pto.slp_vectorization = True
    pto.loop_unrolling = True
    pb = llvm.create_pass_builder(tm, pto)
    mpm = pb.getModulePassManager()
    mpm.run(mod, pb)


@dataclass
class CompiledLLVM:
    """A JIT-compiled module: the engine (kept alive), entry addresses and sources."""

    engine: object
    entry_address: int
    repeat_address: int
    ir_text: str
    optimized_ir: str
    target_machine: object
    module_ref: object

    def assembly(self) -> str:
        """Assembly of the optimized module."""
        return self.target_machine.emit_assembly(self.module_ref)


def compile_func(func: N.PrimFunc, target: Target) -> CompiledLLVM:
    """Generate, optimize and JIT-compile ``func`` for ``target``."""
    text = generate_ir(func, target)
    try:
        mod = llvm.parse_assembly(text)
        mod.verify()
    except RuntimeError as err:  # an internal bug: show the IR that LLVM rejected
        raise CodegenError(f"LLVM rejected the generated IR: {err}\n{text[:4000]}") from err
    tm = target_machine(target.mcpu, target.mattr)
    mod.triple = tm.triple
    mod.data_layout = str(tm.target_data)
    optimize(mod, tm)
    optimized = str(mod)
    engine = llvm.create_mcjit_compiler(mod, tm)
    engine.finalize_object()
    entry = engine.get_function_address(func.name)
    repeat = engine.get_function_address(func.name + "__repeat")
    if not entry:
        raise CodegenError(f"JIT compilation produced no function {func.name!r}")
    return CompiledLLVM(engine, entry, repeat, text, optimized, tm, mod)
