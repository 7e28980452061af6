"""A small reference interpreter of the kernel form with CUDA semantics (tests only).

Every thread of a block is a Python generator that yields at each barrier; the block
runs its threads up to the next barrier in turn, so a missing barrier shows as a read
of shared memory another thread wrote in the same phase (``RaceError``), and a barrier
not reached by every thread as ``BarrierError``. Slow (pure Python): small shapes only.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from ansor_lab.codegen.kernel_form import split_kernels
from ansor_lab.dsl import expr as E
from ansor_lab.ir import gpu, nodes as N


class RaceError(AssertionError):
    """A thread read shared memory another thread wrote since the last barrier."""


class BarrierError(AssertionError):
    """Threads of a block reached different numbers of barriers."""


_BIN = {
    E.Add: lambda a, b: a + b,
    E.Sub: lambda a, b: a - b,
    E.Mul: lambda a, b: a * b,
    E.Min: min,
    E.Max: max,
    E.EQ: lambda a, b: a == b,
    E.NE: lambda a, b: a != b,
    E.LT: lambda a, b: a < b,
    E.LE: lambda a, b: a <= b,
    E.GT: lambda a, b: a > b,
    E.GE: lambda a, b: a >= b,
    E.FloorDiv: lambda a, b: a // b,
    E.FloorMod: lambda a, b: a % b,
}
_CALLS = {"exp": np.exp, "log": np.log, "sqrt": np.sqrt, "tanh": np.tanh, "fabs": np.abs}


def _strides(buf: N.Buffer) -> tuple:
    if buf.padded_strides:
        return tuple(buf.padded_strides)
    out, acc = [], 1
    for n in reversed(buf.shape):
        out.append(acc)
        acc *= int(n)
    return tuple(reversed(out))


class _Thread:
    def __init__(self, block, tid: dict, mem: dict, log: dict) -> None:
        self.block, self.tid, self.mem, self.log = block, tid, dict(mem), log

    def ev(self, e, env):
        t = type(e)
        if t is E.IntImm or t is E.FloatImm:
            return e.value if t is E.IntImm else np.float32(e.value)
        if t is E.Var:
            return env[e]
        if t in _BIN:
            a, b = self.ev(e.a, env), self.ev(e.b, env)
            return _BIN[t](a, b)
        if t is E.Div:
            a, b = self.ev(e.a, env), self.ev(e.b, env)
            return a / b if e.dtype.startswith("float") else int(a / b)
        if t is E.And:
            return bool(self.ev(e.a, env)) and bool(self.ev(e.b, env))
        if t is E.Or:
            return bool(self.ev(e.a, env)) or bool(self.ev(e.b, env))
        if t is E.Not:
            return not self.ev(e.a, env)
        if t is E.Select:
            c = self.ev(e.condition, env)
            return self.ev(e.true_value if c else e.false_value, env)
        if t is E.Cast:
            v = self.ev(e.value, env)
            return np.float32(v) if e.dtype.startswith("float") else int(v)
        if t is E.Call:
            return np.float32(_CALLS[e.op](*[self.ev(a, env) for a in e.args]))
        if t is N.BufferLoad:
            buf = e.buffer
            flat = self.flat(buf, e.indices, env)
            if buf.scope == "shared":
                writer = self.log.get((buf.name, flat))
                if writer is not None and writer != self.key:
                    raise RaceError(
                        f"thread {self.key} reads {buf.name}[{flat}] written by thread "
                        f"{writer} with no barrier between"
                    )
            return self.mem[buf][flat]
        raise NotImplementedError(type(e).__name__)

    @property
    def key(self):
        return tuple(self.tid.get(t, 0) for t in gpu.THREAD_TAGS)

    def flat(self, buf, indices, env) -> int:
        idx = [int(self.ev(i, env)) for i in indices]
        for i, n in zip(idx, buf.shape):
            if not 0 <= i < int(n):
                raise IndexError(f"{buf.name}{idx} out of bounds {buf.shape}")
        return sum(i * s for i, s in zip(idx, _strides(buf)))

    def run(self, s, env):
        t = type(s)
        if t is N.SeqStmt:
            for c in s.seq:
                yield from self.run(c, env)
        elif t is N.Block:
            yield from self.run(s.body, env)
        elif t is N.Allocate:
            if s.buffer.scope != "shared":
                self.mem[s.buffer] = np.zeros(s.buffer.size, s.buffer.dtype)
            yield from self.run(s.body, env)
        elif t is N.For:
            lo, n = int(self.ev(s.min, env)), int(self.ev(s.extent, env))
            if s.kind == "thread_binding" and not gpu.is_vthread_tag(s.thread_tag):
                src = self.block if gpu.is_block_tag(s.thread_tag) else self.tid
                v = src.get(s.thread_tag, 0)
                if v < n:
                    yield from self.run(s.body, {**env, s.loop_var: v})
                return
            for v in range(lo, lo + n):
                yield from self.run(s.body, {**env, s.loop_var: v})
        elif t is N.IfThenElse:
            if self.ev(s.condition, env):
                yield from self.run(s.then_case, env)
            elif s.else_case is not None:
                yield from self.run(s.else_case, env)
        elif t is N.LetStmt:
            yield from self.run(s.body, {**env, s.var: self.ev(s.value, env)})
        elif t is N.BufferStore:
            value = self.ev(s.value, env)
            flat = self.flat(s.buffer, s.indices, env)
            self.mem[s.buffer][flat] = value
            if s.buffer.scope == "shared":
                self.log[(s.buffer.name, flat)] = self.key
        elif t is N.Evaluate:
            if gpu.is_barrier(s):
                yield "barrier"
        else:
            raise NotImplementedError(t.__name__)


def run_gpu(func: N.PrimFunc, arrays: list) -> None:
    """Run ``func`` (CUDA-scheduled) on numpy ``arrays`` in place, with CUDA semantics."""
    prog = split_kernels(func)
    mem = {b: a.reshape(-1) for b, a in zip(func.params, arrays)}
    for b in prog.temporaries:
        mem[b] = np.zeros(math.prod(b.shape), b.dtype)
    for k in prog.kernels:
        for bidx in itertools.product(*(range(n) for n in reversed(k.grid))):
            block = dict(zip(reversed(gpu.BLOCK_TAGS), bidx))
            shared = {b: np.zeros(b.size, b.dtype) for b in k.shared}
            log: dict = {}
            threads = []
            for tidx in itertools.product(*(range(n) for n in reversed(k.block))):
                tid = dict(zip(reversed(gpu.THREAD_TAGS), tidx))
                th = _Thread(block, tid, {**mem, **shared}, log)
                threads.append(th.run(k.body, {}))
            live = threads
            while live:
                done = []
                for g in live:
                    try:
                        next(g)
                    except StopIteration:
                        done.append(g)
                if done and len(done) != len(live):
                    raise BarrierError(
                        "some threads of a block passed a barrier others never reach"
                    )
                live = [g for g in live if g not in done]
                log.clear()
