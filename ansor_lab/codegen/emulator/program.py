"""A whole KernelProgram as one CPU function, compiled by the LLVM backend.

``translate`` builds ``emulate_<name>(params..., temporaries..., report)``: the kernels one
after another (a launch ends before the next starts), each a loop over its blocks whose
body is the block-level nest made by ``fission``. Per block, each shared buffer is one
copy (allocated once around the block loop: blocks run one after another, or inside the
block loop when blocks run in parallel, one copy per CPU thread). In check mode the
shared buffers are poisoned at each block's start (NaN for floats, a large value for
integers) so a read of an element the block never wrote cannot pass for a right answer,
and the race shadows and the epoch counter (see ``checks``) are allocated and zeroed.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass, field

import numpy as np

from ...dsl import dtypes, expr as E
from ...ir import nodes as N
from ...ir.passes import relabel_loops
from .. import failures
from ..kernel_form import Kernel, KernelProgram
from ..llvm import CodegenOptions, compile_func
from ..pipeline import prepare
from ..target import as_target
from .checks import Instrument, Shadow
from .fission import Fission
from .report import Reporter, raise_report, report_buffer
from .spmd import Indices, to_spmd

#: LLVM's optimization level in check mode (settable for measurements): its programs
#: are compiled for a run or two, and O1 compiles several times faster than O3
OPT_LEVEL = 1
#: the integer poison of shared memory in check mode (a float one is NaN)
INT_POISON = 0x5EADBEEF


def _const(value: float | int, dtype: str) -> E.PrimExpr:
    if dtypes.is_float(dtype):
        return E.FloatImm(float(value), dtype)
    if dtypes.is_bool(dtype):
        return E.IntImm(1, "bool")
    lo, hi = dtypes.int_range(dtype)
    return E.IntImm(max(lo, min(hi, int(value))), dtype)


def fill(buf: N.Buffer, value: float | int) -> N.Stmt:
    """Store ``value`` into every element of ``buf``."""
    loop_vars = [E.Var(f"{buf.name}_i{d}", "int32") for d in range(len(buf.shape))]
    s: N.Stmt = N.BufferStore(buf, _const(value, buf.dtype), tuple(loop_vars))
    for var, extent in reversed(list(zip(loop_vars, buf.shape))):
        s = N.For(var, E.IntImm(0, "int32"), E.IntImm(extent, "int32"), "serial", s)
    return s


def _allocate(buffers: list, body: N.Stmt) -> N.Stmt:
    for buf in reversed(buffers):
        body = N.Allocate(buf, body)
    return body


@dataclass
class _Shared:
    """What the program assembly collects across kernels."""

    report: N.Buffer
    epoch: N.Buffer
    #: buffers by report number
    buffers: list = field(default_factory=list)
    #: allocated around everything (check mode: shadows, zeroed once)
    outer: list = field(default_factory=list)
    outer_init: list = field(default_factory=list)


def _kernel(k: int, kernel: Kernel, check: bool, parallel: bool, sh: _Shared) -> N.Stmt:
    idx = Indices.make(kernel.grid, kernel.block)
    body, shared = to_spmd(kernel.body, idx, kernel.name, check)
    reporter = None
    epoch = None
    if check:
        reporter = Reporter(sh.report, k, idx, sh.buffers)
        shadows = {b: Shadow.of(b) for b in shared}
        for shadow in shadows.values():
            sh.outer += [shadow.writer, shadow.reader]
            sh.outer_init += [fill(shadow.writer, 0), fill(shadow.reader, 0)]
        epoch = (sh.epoch, E.Var("epoch", "int64"), E.Var("block_epoch", "int64"))
        body = Instrument(reporter, shadows, epoch[1], epoch[2]).stmt(body)
    fission = Fission(idx, kernel.name, reporter, epoch)
    block_body = fission.level(body)
    if check:
        start = [fission.block_start()] + [fill(b, _poison(b.dtype)) for b in shared]
        block_body = N.seq(*start, block_body, reporter.pending())
    # the linear block number -> (x, y, z)
    b = E.Var("block", "int32")
    gx, gy, _ = kernel.grid
    coords = (
        E.FloorMod(b, E.IntImm(gx, "int32"), "int32"),
        E.FloorMod(E.FloorDiv(b, E.IntImm(gx, "int32"), "int32"), E.IntImm(gy, "int32"), "int32"),
        E.FloorDiv(b, E.IntImm(gx * gy, "int32"), "int32"),
    )
    for var, value in reversed(list(zip(idx.block, coords))):
        block_body = N.LetStmt(var, value, block_body)
    private = list(shared) + fission.allocs
    if parallel:
        block_body = _allocate(private, block_body)
    kind = "parallel" if parallel and kernel.num_blocks > 1 else "serial"
    loop = N.For(b, E.IntImm(0, "int32"), E.IntImm(kernel.num_blocks, "int32"), kind, block_body)
    return loop if parallel else _allocate(private, loop)


def _poison(dtype: str) -> float | int:
    return float("nan") if dtypes.is_float(dtype) else INT_POISON


def translate(program: KernelProgram, check: bool, parallel: bool) -> tuple[N.PrimFunc, list]:
    """(the CPU function emulating ``program``, buffers by report number)."""
    func = program.func
    sh = _Shared(report_buffer(), N.Buffer("__emulator_epoch", (2,), "int64"))
    kernels = [_kernel(k, kernel, check, parallel, sh) for k, kernel in enumerate(program.kernels)]
    body = N.seq(*kernels)
    if check:
        init = [fill(sh.epoch, 0), *sh.outer_init]
        body = _allocate([sh.epoch, *sh.outer], N.seq(*init, body))
    params = (*func.params, *program.temporaries, sh.report)
    return N.PrimFunc(params, body, f"emulate_{func.name}"), sh.buffers


class EmulatedProgram:
    """A KernelProgram compiled for the CPU: call it with the arrays of its parameters."""

    def __init__(self, program: KernelProgram, check: bool = True, parallel: bool = False):
        self.program = program
        self.check = check
        func, self._buffers = translate(program, check, parallel and not check)
        if check:
            # it runs once: unrolled loops as loops, the same program in a fraction of the
            # code (a kernel unrolled by pragma_auto_unroll_max_step, every access checked,
            # was 8 MB of LLVM IR, a 24 s compile, for a 7x7x32 conv2d)
            func = relabel_loops(func, "unrolled", "serial")
        target = as_target("llvm")
        # check mode tests every access itself, with the block and thread in the report
        self.func = prepare(func, target, bounds=not check, partition=not check)
        threads = max(1, target.num_cores) if parallel and not check else 1
        self.compiled = compile_func(
            self.func,
            target,
            CodegenOptions(num_threads=threads, opt_level=OPT_LEVEL if check else 3),
        )
        n = len(self.func.params)
        self._entry = ctypes.CFUNCTYPE(ctypes.c_int32, *([ctypes.c_void_p] * n))(
            self.compiled.entry_address
        )

    def __call__(self, arrays: list) -> None:
        """Run on ``arrays`` (the function's parameters, in order), in place."""
        params = self.program.func.params
        temps = [
            np.full(t.shape, np.nan, dtypes.to_numpy(t.dtype))
            if dtypes.is_float(t.dtype)
            else np.zeros(t.shape, dtypes.to_numpy(t.dtype))
            for t in self.program.temporaries
        ]
        report = np.zeros(report_buffer().shape, np.int64)
        ptrs = [a.ctypes.data for a in (*arrays, *temps, report)]
        assert len(ptrs) == len(self.func.params), (len(ptrs), len(params))
        rc = self._entry(*ptrs)
        if rc == failures.REPORTED:
            raise_report(report, self.program.kernels, self._buffers)
        if rc != 0:
            raise failures.failure(rc, self.func.name)
