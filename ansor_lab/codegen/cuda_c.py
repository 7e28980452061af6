"""CUDA C from the kernel form (``codegen.kernel_form.KernelProgram``).

Each kernel becomes one ``extern "C" __global__`` function::

    extern "C" __global__ void __launch_bounds__(64) main_kernel0(
        float* __restrict__ A, float* __restrict__ B, float* __restrict__ C) {
      __shared__ __align__(16) float A_shared[512];     // every shared buffer, at the top
      float C_local[1];                                 // local: where it is allocated
      ...  ((int)blockIdx.x) ... ((int)threadIdx.x) ...  // a bound loop is its index
      __syncthreads();                                  // ir.gpu.barrier()
    }

How the loop IR reads (``ir.gpu``): a loop bound to a thread tag is not a loop: its
variable is the hardware index, and when the loop is shorter than the kernel's launch
extent for that tag its body is guarded (``if (((int)threadIdx.x) < 7)``). Unrolled loops
get ``#pragma unroll``; vectorized loops become float4/float2 accesses where contiguous
and aligned (``codegen.cuda_vector``), else a scalar loop under ``#pragma unroll``.
Expressions and their semantics are ``codegen.cuda_expr``'s.

A program with several root stages is several kernels launched in order, after the
global temporaries are allocated: ``launch_plan`` gives that host-side sequence, and the
source starts with it as a comment.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..dsl import expr as E
from ..errors import CodegenError
from ..ir import gpu, nodes as N
from ..ir.simplify import simplify_expr
from ..ir.visitor import STMT
from . import cuda_intrin_extra
from .access import flat_index
from .cuda_expr import HELPERS, MATH, ExprPrinter, c_type
from .cuda_vector import LANE_FIELDS, plan_vector_loop
from .kernel_form import Kernel, KernelProgram

# -- the host side --------------------------------------------------------------------


@dataclass(frozen=True)
class KernelLaunch:
    """One launch of the host sequence: kernel name, grid, block, static shared bytes, args."""

    name: str
    grid: tuple
    block: tuple
    shared_bytes: int
    args: tuple  # buffer names, in the kernel's parameter order


@dataclass(frozen=True)
class LaunchPlan:
    """What the host does: allocate ``temporaries`` (name, dtype, elements), then launch."""

    function: str
    params: tuple
    temporaries: tuple
    launches: tuple

    def describe(self) -> str:
        """The plan as comment lines (without the ``//``)."""
        lines = [f"host: {self.function}({', '.join(self.params)})"]
        for name, dtype, size in self.temporaries:
            lines.append(f"  allocate global {dtype} {name}[{size}]")
        for k in self.launches:
            g, b = ", ".join(map(str, k.grid)), ", ".join(map(str, k.block))
            lines.append(
                f"  launch {k.name}<<<dim3({g}), dim3({b})>>>({', '.join(k.args)})"
                f"  // {k.shared_bytes} bytes of static shared memory per block"
            )
        return "\n".join(lines)


def launch_plan(program: KernelProgram) -> LaunchPlan:
    """The host-side launch sequence of ``program``."""
    return LaunchPlan(
        function=program.func.name,
        params=tuple(b.name for b in program.func.params),
        temporaries=tuple((b.name, b.dtype, b.size) for b in program.temporaries),
        launches=tuple(
            KernelLaunch(k.name, k.grid, k.block, k.shared_bytes(), tuple(b.name for b in k.params))
            for k in program.kernels
        ),
    )


# -- names ----------------------------------------------------------------------------


def _c_ident(name: str) -> str:
    out = "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in name) or "v"
    return out if not out[0].isdigit() else f"v_{out}"


_RESERVED = frozenset(
    "int float double char bool long short signed unsigned void half if else for while do "
    "return break continue const static extern inline true false max min abs exp log sqrt "
    "threadIdx blockIdx blockDim gridDim".split()
    # the rest of C++'s keywords (CUDA C is C++: a tensor named "and", "new" or "default"
    # broke the compile)
    + "and and_eq asm auto bitand bitor case catch char16_t char32_t class compl constexpr "
    "const_cast decltype default delete dynamic_cast enum explicit export friend goto "
    "mutable namespace new noexcept not not_eq nullptr operator or or_eq private protected "
    "public register reinterpret_cast restrict sizeof static_assert static_cast struct "
    "switch template this thread_local throw try typedef typeid typename union using "
    "virtual volatile wchar_t xor xor_eq alignas alignof warpSize".split()
    # a buffer named like a function the generated code calls would shadow it
    + [name for names in MATH.values() for name in names]
    + list(HELPERS)
    + list(cuda_intrin_extra.CALLED)
)


class _Scopes:
    """Unique C names for variables: a name is taken while the scope that declared it lasts."""

    def __init__(self, taken: set[str]) -> None:
        self.stack: list[set[str]] = [set(taken)]

    def fresh(self, base: str) -> str:
        base = _c_ident(base)
        if base in _RESERVED:
            base = f"{base}_"
        name, n = base, 1
        while any(name in level for level in self.stack):
            name, n = f"{base}_{n}", n + 1
        self.stack[-1].add(name)
        return name

    def push(self) -> None:
        self.stack.append(set())

    def pop(self) -> None:
        self.stack.pop()


# -- kernels --------------------------------------------------------------------------


class _KernelEmitter(ExprPrinter):
    """Prints one kernel; ``helpers`` / ``uses_half`` tell the file header what it needs."""

    REFUSED_KINDS = ExprPrinter.REFUSED_KINDS

    def __init__(self, kernel: Kernel, fast_math: bool) -> None:
        super().__init__()
        self.kernel = kernel
        self.fast_math = fast_math
        self.lines: list[str] = []
        self.depth = 1
        self.names: dict = {}  # Var -> C text
        self.buffers: dict = {}  # Buffer -> C name
        taken: set[str] = set()
        for b in kernel.params + kernel.shared:
            name = _c_ident(b.name)
            while name in taken or name in _RESERVED:
                name = f"{name}_"
            taken.add(name)
            self.buffers[b] = name
        self.scopes = _Scopes(taken)

    # -- output helpers ---------------------------------------------------------------
    def line(self, text: str) -> None:
        self.lines.append("  " * self.depth + text)

    def open(self, head: str) -> None:
        self.line(f"{head} {{" if head else "{")
        self.depth += 1
        self.scopes.push()

    def close(self) -> None:
        self.scopes.pop()
        self.depth -= 1
        self.line("}")

    # -- names ------------------------------------------------------------------------
    def name_of(self, v: E.Var) -> str:
        try:
            return self.names[v]
        except KeyError:
            raise CodegenError(
                f"kernel {self.kernel.name}: variable {v.name!r} is used outside the loop "
                "or let that binds it"
            ) from None

    def bind(self, v: E.Var, nonneg: bool) -> str:
        name = self.names[v] = self.scopes.fresh(v.name)
        if nonneg:
            self.nonneg.add(v)
        return name

    def buffer_name(self, b: N.Buffer) -> str:
        try:
            return self.buffers[b]
        except KeyError:
            raise CodegenError(
                f"kernel {self.kernel.name}: buffer {b.name!r} is used outside its allocation"
            ) from None

    def offset(self, buf: N.Buffer, indices: tuple) -> str:
        return self.expr(simplify_expr(flat_index(buf, indices)))

    def load_text(self, e: N.BufferLoad) -> str:
        return f"{self.buffer_name(e.buffer)}[{self.offset(e.buffer, e.indices)}]"

    # -- the kernel -------------------------------------------------------------------
    def emit(self) -> str:
        k = self.kernel
        params = ", ".join(f"{c_type(b.dtype)}* __restrict__ {self.buffers[b]}" for b in k.params)
        head = (
            f'extern "C" __global__ void __launch_bounds__({k.threads_per_block}) '
            f"{k.name}({params}) {{"
        )
        for b in k.shared:
            self.line(f"__shared__ __align__(16) {c_type(b.dtype)} {self.buffers[b]}[{b.size}];")
        self.stmt(k.body)
        stages = f"stages {', '.join(k.stage_names)}; " if k.stage_names else ""
        g, b = ", ".join(map(str, k.grid)), ", ".join(map(str, k.block))
        comment = f"// {stages}grid ({g}), block ({b}), {k.shared_bytes()} shared bytes"
        return "\n".join([comment, head, *self.lines, "}"])

    def stmt(self, s: N.Stmt) -> None:
        self.handler(STMT, s)(s)

    def stmt_SeqStmt(self, s: N.SeqStmt) -> None:
        for x in s.seq:
            self.stmt(x)

    def stmt_Block(self, s: N.Block) -> None:
        self.line(f'// stage "{s.name}"')
        self.stmt(s.body)

    def stmt_Evaluate(self, s: N.Evaluate) -> None:
        if gpu.is_barrier(s):
            self.line("__syncthreads();")
        elif not isinstance(s.value, (E.IntImm, E.FloatImm, E.Var)):
            self.line(f"(void){self.expr(s.value)};")

    def stmt_BufferStore(self, s: N.BufferStore) -> None:
        self.line(
            f"{self.buffer_name(s.buffer)}[{self.offset(s.buffer, s.indices)}] = "
            f"{self.expr(s.value)};"
        )

    def stmt_IfThenElse(self, s: N.IfThenElse) -> None:
        self.open(f"if ({self.expr(s.condition)})")
        self.stmt(s.then_case)
        if s.else_case is not None:
            self.scopes.pop()
            self.depth -= 1
            self.line("} else {")
            self.depth += 1
            self.scopes.push()
            self.stmt(s.else_case)
        self.close()

    def stmt_LetStmt(self, s: N.LetStmt) -> None:
        value = self.expr(s.value)
        nonneg = self.is_nonneg(s.value)
        self.line(f"{c_type(s.var.dtype)} {self.bind(s.var, nonneg)} = {value};")
        self.stmt(s.body)

    def stmt_Allocate(self, s: N.Allocate) -> None:
        b = s.buffer
        if b.scope == "shared":
            if b not in self.buffers:
                raise CodegenError(f"shared buffer {b.name!r} is not one of its kernel's")
        elif b.scope == "local":
            self.buffers[b] = self.scopes.fresh(b.name)
            align = "__align__(16) " if b.nbytes >= 16 else ""
            self.line(f"{align}{c_type(b.dtype)} {self.buffers[b]}[{b.size}];")
        else:
            raise CodegenError(
                f"kernel {self.kernel.name}: global buffer {b.name!r} is allocated inside a "
                "kernel; global temporaries must be allocated at the root of the function"
            )
        self.stmt(s.body)

    def stmt_For(self, s: N.For) -> None:
        if s.kind == "thread_binding":
            return self._bound(s)
        if s.kind == "parallel":
            raise CodegenError(
                f"loop {s.loop_var.name!r} is parallel: a CUDA kernel has no CPU threads; "
                "bind it to blockIdx/threadIdx instead of parallel()"
            )
        if s.kind == "vectorized":
            plan = plan_vector_loop(s)
            if plan is not None:
                return self._vector(plan)
        lo, ext = s.min, s.extent
        if s.kind in ("unrolled", "vectorized"):
            self.line("#pragma unroll")
        ctype = c_type(s.loop_var.dtype)
        lo_text = self.expr(lo)
        end = simplify_expr(E.Add(lo, ext, lo.dtype))
        nonneg = self.is_nonneg(lo)
        end_text = self.expr(end)
        self.scopes.push()  # the loop variable belongs to the loop
        var = self.bind(s.loop_var, nonneg)
        self.open(f"for ({ctype} {var} = {lo_text}; {var} < {end_text}; ++{var})")
        self.stmt(s.body)
        self.close()
        self.scopes.pop()

    def _bound(self, s: N.For) -> None:
        tag = s.thread_tag
        if gpu.is_vthread_tag(tag):
            raise CodegenError(f"loop {s.loop_var.name!r}: vthread loops must be serial here")
        index = f"((int){tag})"
        self.names[s.loop_var] = index
        self.nonneg.add(s.loop_var)
        extent = s.extent.value
        if extent < self.kernel.extent(tag):
            self.open(f"if ({index} < {extent})")
            self.stmt(s.body)
            self.close()
        else:
            self.stmt(s.body)

    def _vector(self, plan) -> None:
        """One vectorized loop as vector loads and one vector store."""
        self.open("")  # a block: the vector temporaries are local to it
        vt, lanes = plan.vtype, plan.lanes
        self.nonneg.add(plan.var)
        first = {plan.var: E.IntImm(0, plan.var.dtype)}

        def pointer(buf: N.Buffer, indices: tuple) -> str:
            at = tuple(E.substitute(i, first) for i in indices)  # the address of lane 0
            return f"{self.buffer_name(buf)} + {self.offset(buf, at)}"

        temps = {}
        for load, placeholder in plan.loads:
            name = self.scopes.fresh(placeholder.name)
            self.line(f"{vt} {name} = *({vt}*)({pointer(load.buffer, load.indices)});")
            temps[placeholder] = name
        st = plan.store
        ptr = pointer(st.buffer, st.indices)
        if len(plan.loads) == 1 and plan.value is plan.loads[0][1]:
            value = temps[plan.value]
        else:
            parts = []
            for lane in range(lanes):
                for placeholder, name in temps.items():
                    self.names[placeholder] = f"{name}.{LANE_FIELDS[lane]}"
                lane_value = E.substitute(plan.value, {plan.var: E.IntImm(lane, plan.var.dtype)})
                parts.append(self.expr(simplify_expr(lane_value)))
            value = f"make_{vt}({', '.join(parts)})"
        self.line(f"*({vt}*)({ptr}) = {value};")
        self.close()


# -- the file -------------------------------------------------------------------------


def generate(program: KernelProgram, target: Any = None, *, fast_math: bool = False) -> str:
    """The CUDA C source of ``program``: header, device helpers, one function per kernel.

    ``target`` (a CUDA Target) is named in the header; ``fast_math`` prints the fast
    float32 intrinsics (``__expf``...), see ``codegen.cuda_expr``.
    """
    if not isinstance(program, KernelProgram):
        raise CodegenError(
            f"generate() takes a KernelProgram (codegen.kernel_form.split_kernels(func)), "
            f"got {type(program).__name__}"
        )
    bodies, helpers, half = [], set(), False
    for k in program.kernels:
        em = _KernelEmitter(k, fast_math)
        bodies.append(em.emit())
        helpers |= em.helpers
        half = half or em.uses_half or any(b.dtype == "float16" for b in k.params + k.shared)
    arch = getattr(target, "arch", "") or "any"
    header = [
        f"// CUDA C generated by ansor_lab for {program.func.name} (arch {arch}"
        f"{', fast math' if fast_math else ''})",
        *(f"// {line}" for line in launch_plan(program).describe().splitlines()),
    ]
    if half:
        header.append("#include <cuda_fp16.h>")
    parts = ["\n".join(header)]
    parts += [HELPERS[h] for h in sorted(helpers)]
    parts += bodies
    return "\n\n".join(parts) + "\n"
