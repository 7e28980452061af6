"""Memory: addresses, loads and stores (scalar, vector, masked, gather/scatter, as the
access analysis decides) and allocations (stack or aligned heap)."""

from __future__ import annotations

from llvmlite import ir

from ..dsl import dtypes, expr as E
from ..errors import CodegenError
from ..ir import nodes as N
from ..ir.bound_check import interval
from ..ir.simplify import linear_form
from . import access as A, failures, nan_flag_reduce
from .llvm_types import (
    ALIGN,
    I1,
    I8,
    I32,
    I64,
    PTR,
    STACK_LIMIT_BYTES,
    int_constant,
    memory_type,
    vname,
)


class MemoryEmitter:
    """Builder methods for buffer accesses (``expr_BufferLoad``, ``stmt_BufferStore``) and
    ``stmt_Allocate``."""

    def flat_index(self, buf: N.Buffer, indices: tuple) -> E.PrimExpr:
        """The element offset of an access, as an expression (``access.flat_index``)."""
        return A.flat_index(buf, indices)

    def address(self, buf: N.Buffer, indices: tuple, extra: ir.Value | None = None) -> ir.Value:
        """Scalar address of an element; the offset is computed in i64 so LLVM can widen
        induction variables and fold the arithmetic into addressing modes.

        In a buffer the function writes, a linear offset is emitted as its variable part
        plus its constant, added last: the elements of an unrolled register tile
        (``C[i*7 + 1, j]``, ``C[i*7 + 2, j]``) then share one variable part, and LLVM's
        alias analysis sees constant distances between them. Summed per dimension
        (``sext(i*7 + 1) * 28``), each element had its own variable part, LLVM could not
        tell the accumulators apart inside a loop and kept every one in memory: a
        depthwise convolution's tile ran 2.7x slower unless its whole loop nest was
        unrolled. Read-only inputs keep the per-dimension sum: only what is stored needs
        telling apart, and the inputs' addressing was measured good as it is.
        """
        linear = indices and buf in self.ctx.written
        form = self._flat_facts(buf, indices)[2] if linear else None
        saved, self.nsw = self.nsw, True
        try:
            if form is None:
                terms = [self._offset_term(i, stride) for i, stride in zip(indices, buf.strides)]
                terms.append(extra)
            else:  # the variable part first, then the lane offset and the constant
                const = ir.Constant(I64, form[1]) if form[1] else None
                terms = [self._variable_offset(form[0]), extra, const]
            offset = None
            for term in terms:
                if term is not None:
                    offset = term if offset is None else self._int_op("add", offset, term)
        finally:
            self.nsw = saved
        if offset is None:
            offset = ir.Constant(I64, 0)
        return self.b.gep(self.base_pointer(buf), [offset], source_etype=memory_type(buf.dtype))

    def _variable_offset(self, terms: dict) -> ir.Value | None:
        """The sum of ``coeff * term`` of a linear offset's variable terms, made once per
        region for the same variables (the unrolled copies of a tile share it)."""
        terms = {t: c for t, c in terms.items() if c}
        keys = []
        for node, coeff in terms.items():
            k = self._binding(node) if isinstance(node, E.Var) else self._memo_key(node)
            keys.append(None if k is None else (k, coeff))
        key = ("linear",) + tuple(keys) if keys and None not in keys else None
        hit = None if key is None else self._reusable(key)
        if hit is not None:
            return hit
        offset = None
        for node, coeff in terms.items():
            term = self._offset_term(node, coeff)
            offset = term if offset is None else self._int_op("add", offset, term)
        if key is not None:
            self.memo[-1][key] = offset
        return offset

    def _offset_term(self, idx: E.PrimExpr, stride: int) -> ir.Value:
        """``idx * stride`` in i64 (nsw), reused like ``expr`` reuses index arithmetic."""
        inner = self._memo_key(idx)
        key = None if inner is None else ("term", stride) + inner
        hit = None if key is None else self._reusable(key)
        if hit is not None:
            return hit
        v = self._as_i64(self.expr(idx))
        term = v if stride == 1 else self._int_op("mul", v, ir.Constant(I64, stride))
        if key is not None:
            self.memo[-1][key] = term
        return term

    def base_pointer(self, buf: N.Buffer) -> ir.Value:
        """The pointer to element 0 of ``buf`` in this function."""
        ptr = self.buffers.get(buf)
        if ptr is None:
            raise CodegenError(f"buffer {buf.name!r} is not allocated here")
        return ptr

    def access(self, buf: N.Buffer, indices: tuple, load: bool = False):
        """How an access is done: ("scalar", addr) | ("contiguous", addr) | ("gather", ptrs)
        | for a load, ("strided", (addr of lane 0, stride))."""
        if self.vec is None:
            return "scalar", self.address(buf, indices)
        flat, flat_vars, form = self._flat_facts(buf, indices)
        vec = self.vec
        how = A.classify(flat_vars, form, vec.var, vec.varying)
        if how == "scalar":
            return "scalar", self.address(buf, indices)
        if how == "contiguous":
            base_idx = self._lane0_indices(indices, vec.var)
            return "contiguous", self.address(buf, base_idx, self._as_i64(vec.base))
        stride = A.load_stride(form, vec.var, vec.varying) if load else None
        if stride is not None and A.strided_load_ok(stride, buf.dtype, vec.lanes):
            base_idx = self._lane0_indices(indices, vec.var)
            first = self._int_op("mul", self._as_i64(vec.base), ir.Constant(I64, stride))
            return "strided", (self.address(buf, base_idx, first), stride)
        idx = self.expr(flat)
        lanes = vec.lanes
        idx64 = self.b.sext(idx, ir.VectorType(I64, lanes)) if idx.type.element != I64 else idx
        size = dtypes.itemsize(buf.dtype)
        base = self.b.ptrtoint(self.base_pointer(buf), I64)
        offs = self.b.mul(idx64, self.const(idx64.type, size))
        addrs = self.b.add(self.splat(base, lanes), offs)
        return "gather", self.b.inttoptr(addrs, ir.VectorType(PTR, lanes))

    def _flat_facts(self, buf: N.Buffer, indices: tuple) -> tuple:
        """(flat index, its variables, its linear form) of an access (cached)."""
        return A.flat_facts(buf, indices)

    def _lane0_indices(self, indices: tuple, var: E.Var) -> tuple:
        """``indices`` with the vector variable at 0, made once per access node (the same
        node objects each time, so their arithmetic is reused across unrolled copies)."""
        key = (id(indices), id(var))
        hit = self.ctx.lane0.get(key)
        if hit is None:
            zero = {var: E.IntImm(0, var.dtype)}
            hit = (indices, var, tuple(E.substitute(i, zero) for i in indices))
            self.ctx.lane0[key] = hit
        return hit[2]

    def in_bounds(self, buf: N.Buffer, indices: tuple) -> bool:
        """True when every lane's element of this access provably lies inside ``buf``
        (from the constant bounds of the loops around it), whatever the guards say."""
        return A.in_bounds(self._flat_facts(buf, indices)[2], self.ranges, buf.size)

    def _as_i64(self, v: ir.Value) -> ir.Value:
        if v.type == I64:
            return v
        c = int_constant(v)
        return ir.Constant(I64, c) if c is not None else self.b.sext(v, I64)

    def _count(self, key: str) -> None:
        if self.vec is not None:
            self.vec.stats[key] = self.vec.stats.get(key, 0) + 1

    def expr_BufferLoad(self, e: N.BufferLoad) -> ir.Value:
        saved, self.nsw = self.nsw, False
        try:
            return self._load(e)
        finally:
            self.nsw = saved

    def check_access(self, what: str, buf: N.Buffer, indices: tuple) -> None:
        """Return a bounds failure from the kernel when an index (of a lane that is on)
        leaves its dimension: every access with ``instrument_bound_checkers``, else those
        whose index is not linear and not provably inside its dimension (``A[B[i]]``,
        ``A[(i * 5) % 9]`` of an 8-element ``A``, ``A[te.if_then_else(c, 400000000, 0)]``):
        a wrong index in those would read or write another object's memory, or kill the
        process. A linear index is proved or refused before (``ir.bound_check``), or sits
        under a guard that keeps it in range (a padding's)."""
        if not self.ctx.options.instrument_bound_checkers and not self._unproven(buf, indices):
            return
        checks = self.ctx.bound_checks
        text = ", ".join(str(i) for i in indices)
        number = len(checks)  # taken before the indices' own loads add theirs
        checks.append(f"{what} {buf.name}[{text}] outside its shape {tuple(buf.shape)}")
        bld = self.b
        bad = None
        saved, self.nsw = self.nsw, False
        try:
            values = [self.expr(idx) for idx in indices]
        finally:
            self.nsw = saved
        lanes = max((self.lanes_of(v) for v in values), default=0)
        for v, extent in zip(values, buf.shape):
            v = self.splat(v, lanes)
            low = bld.icmp_signed("<", v, self.const(v.type, 0))
            high = bld.icmp_signed(">=", v, self.const(v.type, extent))
            out = bld.or_(low, high)
            bad = out if bad is None else bld.or_(bad, out)
        if bad is not None:
            self.fail_if(bad, failures.bounds_code(number))

    def _unproven(self, buf: N.Buffer, indices: tuple) -> bool:
        """Is some index of the access neither linear nor provably inside its dimension?"""
        for idx, extent in zip(indices, buf.shape):
            form = linear_form(idx)  # terms may be opaque: i * 5 % 9 is one
            if form is not None and form[0] and all(isinstance(t, E.Var) for t in form[0]):
                continue
            # a constant too: loop partitioning turns A[if_then_else(i > 3, 400000000, 0)]
            # into A[0] and A[400000000] after the static check saw a select
            span = interval(idx, self.ranges)
            if span is None or span[0] < 0 or span[1] >= extent:
                return True
        return False

    def _load(self, e: N.BufferLoad) -> ir.Value:
        buf = e.buffer
        self.check_access("read of", buf, e.indices)
        mt = memory_type(buf.dtype)
        align = dtypes.itemsize(buf.dtype)
        how, addr = self.access(buf, e.indices, load=True)
        if how == "scalar":
            self._count("scalar_loads")
            if (
                self.vec is not None
                and self.vec.mask is not None
                and not self.in_bounds(buf, e.indices)
            ):
                # a lane-invariant load under a lane-dependent guard is valid only when some
                # lane is on (a row past the end of a non-divisible tile, say); otherwise
                # read element 0 instead, which always exists, and is never used
                addr = self.b.select(self._any_lane(), addr, self.base_pointer(buf))
            v = self.b.load(addr, typ=mt, align=align)
        else:
            lanes = self.vec.lanes
            vt = ir.VectorType(mt, lanes)
            mask = self.vec.mask
            passthru = ir.Constant(vt, None)
            if how == "contiguous" and (mask is None or self.in_bounds(buf, e.indices)):
                # (under a guard that only hides lanes whose elements exist: read them all,
                # cheaper, and a plain load of a local tile lets LLVM keep it in registers)
                v = self._whole_load(buf, addr, vt, align)
            elif how == "contiguous":
                self._count("masked_loads")
                v = self._masked_load(addr, vt, align, mask)
            elif how == "strided":
                v = self._strided_load(addr, vt, align, mask)
            else:
                self._count("gathers")
                m = mask if mask is not None else self.const(ir.VectorType(I1, lanes), 1)
                fn = self.ctx.declare(
                    f"llvm.masked.gather.{vname(vt)}.v{lanes}p0",
                    vt,
                    [ir.VectorType(PTR, lanes), I32, ir.VectorType(I1, lanes), vt],
                )
                v = self.b.call(fn, [addr, ir.Constant(I32, align), m, passthru])
        if buf.dtype == "bool":
            return self.b.icmp_unsigned("!=", v, self.const(v.type, 0))
        return v

    def _whole_load(self, buf: N.Buffer, addr: ir.Value, vt: ir.VectorType, align: int):
        """A contiguous vector load of every lane (``whole_width``)."""
        wide = self.whole_width(vt, buf not in self.ctx.written)
        if wide is None:
            self._count("vector_loads")
            return self.b.load(addr, typ=vt, align=align)
        self._count("padded_loads")
        wt = ir.VectorType(vt.element, wide)
        w = self._masked_load(addr, wt, align, _first_lanes(vt.count, wide))
        lanes = ir.Constant(ir.VectorType(I32, vt.count), list(range(vt.count)))
        return self.b.shuffle_vector(w, ir.Constant(wt, None), lanes)

    def _whole_store(self, buf: N.Buffer, value: ir.Value, addr: ir.Value, align: int) -> None:
        """A contiguous vector store of every lane (``whole_width``)."""
        vt = value.type
        wide = self.whole_width(vt, buf not in self.ctx.read)
        if wide is None:
            self._count("vector_stores")
            self.b.store(value, addr, align=align)
            return
        self._count("padded_stores")
        self._masked_store(self._widened(value, wide), addr, align, _first_lanes(vt.count, wide))

    def _masked_load(self, addr: ir.Value, vt: ir.VectorType, align: int, mask) -> ir.Value:
        """``llvm.masked.load`` of ``vt`` at ``addr``: the lanes ``mask`` turns off read
        nothing (and are zero). Always emitted at a power of two (``_padded_mask``)."""
        n, wide = vt.count, _power_of_two(vt.count)
        wt = ir.VectorType(vt.element, wide)
        fn = self.ctx.declare(
            f"llvm.masked.load.{vname(wt)}.p0", wt, [PTR, I32, ir.VectorType(I1, wide), wt]
        )
        args = [addr, ir.Constant(I32, align), self._padded_mask(mask, n), ir.Constant(wt, None)]
        v = self.b.call(fn, args)
        if wide == n:
            return v
        lanes = ir.Constant(ir.VectorType(I32, n), list(range(n)))
        return self.b.shuffle_vector(v, ir.Constant(wt, None), lanes)

    def _masked_store(self, value: ir.Value, addr: ir.Value, align: int, mask) -> None:
        """``llvm.masked.store`` of ``value`` at ``addr``: the lanes ``mask`` turns off
        write nothing. Always emitted at a power of two (``_padded_mask``)."""
        n, wide = value.type.count, _power_of_two(value.type.count)
        value = self._widened(value, wide)
        vt = value.type
        fn = self.ctx.declare(
            f"llvm.masked.store.{vname(vt)}.p0",
            ir.VoidType(),
            [vt, PTR, I32, ir.VectorType(I1, wide)],
        )
        self.b.call(fn, [value, addr, ir.Constant(I32, align), self._padded_mask(mask, n)])

    def _padded_mask(self, mask: ir.Value, n: int) -> ir.Value:
        """``mask`` (``n`` lanes) widened to the next power of two, the added lanes off.

        LLVM's x86 backend splits a masked access of an odd width into legal pieces and,
        tuned for Zen 3 (``-mcpu=znver3``; ``haswell`` was right), lost the mask of the
        odd piece: a ``<9 x float>`` masked load whose ninth lane was off read that lane
        anyway in one of two unrolled copies (a padded 7-wide convolution row took the
        next row's first element). Padded to 16 lanes, the split is two plain halves."""
        return self._widened(mask, _power_of_two(n))

    def _widened(self, v: ir.Value, wide: int) -> ir.Value:
        """``v`` with lanes added up to ``wide``, each zero (a mask's: off)."""
        n = v.type.count
        if wide == n:
            return v
        picks = ir.Constant(ir.VectorType(I32, wide), [min(k, n) for k in range(wide)])
        return self.b.shuffle_vector(v, ir.Constant(v.type, None), picks)

    def whole_width(self, vt: ir.VectorType, untied: bool) -> int | None:
        """The power of two a contiguous access of every lane of ``vt`` is emitted at, as a
        masked access of its first lanes, or None for a plain access.

        LLVM splits a plain load or store of an odd width into powers of two: 14 floats
        are 8 + 4 + 2 accesses plus inserts and extracts, which cost a grouped
        convolution's 14-lane tiles 15% (35.8 against 30.9 us for the 28-lane tile of as
        many accumulators; 34.2 with the loads masked). Where AVX-512 masks 32- and 64-bit
        lanes, such an access is one masked instruction instead, when it is ``untied``: a
        load of a buffer the function never writes, a store to one it never reads. LLVM
        forwards stores to loads and keeps a register tile in registers only through
        plain loads and stores."""
        lanes = vt.count
        wide = _power_of_two(lanes)
        if not untied or not self.ctx.scalef or wide == lanes or lanes < 3:
            return None
        element = vt.element  # AVX-512F masks 32- and 64-bit lanes (8- and 16-bit: BW)
        if isinstance(element, ir.IntType):
            return wide if element.width in (32, 64) else None
        return wide if isinstance(element, (ir.FloatType, ir.DoubleType)) else None

    def _strided_load(self, where: tuple, vt: ir.VectorType, align: int, mask) -> ir.Value:
        """Lanes ``stride`` elements apart (a stride-2 pooling window or convolution): one
        masked load of the span, only the lanes' elements enabled, and a shuffle that picks
        them (LLVM makes it two or three vector loads and a permute; a gather loads
        element by element)."""
        self._count("strided_loads")
        addr, stride = where
        lanes = vt.count
        span = ir.VectorType(vt.element, lanes * stride)
        picks = [k // stride if k % stride == 0 else lanes for k in range(lanes * stride)]
        if mask is None:
            wide_mask = ir.Constant(ir.VectorType(I1, lanes * stride), [p < lanes for p in picks])
        else:
            off = ir.Constant(ir.VectorType(I1, lanes), [0] * lanes)
            wide_mask = self.b.shuffle_vector(
                mask, off, ir.Constant(ir.VectorType(I32, lanes * stride), picks)
            )
        wide = self._masked_load(addr, span, align, wide_mask)
        every = ir.Constant(ir.VectorType(I32, lanes), [k * stride for k in range(lanes)])
        return self.b.shuffle_vector(wide, ir.Constant(span, None), every)

    def stmt_BufferStore(self, s: N.BufferStore) -> None:
        buf = s.buffer
        flagged = self.nan_flags.get(id(s)) if self.nan_flags else None
        if flagged is not None:  # a min/max reduction's step (``nan_flag_reduce``)
            value = nan_flag_reduce.flagged_value(self, *flagged)
        else:
            value = self.expr(s.value)
        self.check_access("write of", buf, s.indices)
        align = dtypes.itemsize(buf.dtype)
        how, addr = self.access(buf, s.indices)
        if how == "scalar" and not self.lanes_of(value):
            if self.vec is not None and self.vec.mask is not None:
                # a lane-invariant store under a lane-dependent guard: store if any lane is on
                self._store_if_any(value, addr, buf, align)
                return
            self._count("scalar_stores")
            self.b.store(self._to_memory(value, buf), addr, align=align)
            return
        lanes = self.vec.lanes
        value = self._to_memory(self.splat(value, lanes), buf)
        vt = value.type
        mask = self.vec.mask
        if how == "contiguous" and mask is None:
            self._whole_store(buf, value, addr, align)
        elif how == "contiguous" and buf in self.own and self.in_bounds(buf, s.indices):
            # a buffer private to this thread, every lane's element exists: blend the new
            # lanes into the old vector and store it whole (SROA can then promote a
            # register tile, and AVX-512 folds the blend into masked arithmetic)
            self._count("blend_stores")
            old = self.b.load(addr, typ=vt, align=align)
            self.b.store(self.b.select(mask, value, old), addr, align=align)
        elif how == "contiguous":
            self._count("masked_stores")
            self._masked_store(value, addr, align, mask)
        else:
            self._count("scatters")
            if how == "scalar":  # every lane writes one address: the last lane wins
                ptr = self.b.ptrtoint(addr, I64)
                addr = self.b.inttoptr(self.splat(ptr, lanes), ir.VectorType(PTR, lanes))
            m = mask if mask is not None else self.const(ir.VectorType(I1, lanes), 1)
            fn = self.ctx.declare(
                f"llvm.masked.scatter.{vname(vt)}.v{lanes}p0",
                ir.VoidType(),
                [vt, ir.VectorType(PTR, lanes), I32, ir.VectorType(I1, lanes)],
            )
            self.b.call(fn, [value, addr, ir.Constant(I32, align), m])

    def _any_lane(self) -> ir.Value:
        """i1: is any lane of the current mask on?"""
        lanes = self.vec.lanes
        bits = self.b.bitcast(self.vec.mask, ir.IntType(lanes))
        return self.b.icmp_unsigned("!=", bits, ir.Constant(ir.IntType(lanes), 0))

    def _store_if_any(self, value, addr, buf, align) -> None:
        anyon = self._any_lane()
        with self.b.if_then(anyon):
            self.b.store(self._to_memory(value, buf), addr, align=align)

    def _to_memory(self, value: ir.Value, buf: N.Buffer) -> ir.Value:
        if buf.dtype == "bool":
            lanes = self.lanes_of(value)
            return self.b.zext(value, ir.VectorType(I8, lanes) if lanes else I8)
        return value

    #: names of buffers written and never read that must survive optimization
    kept: frozenset = frozenset()

    def stmt_Allocate(self, s: N.Allocate) -> None:
        buf = s.buffer
        etype = memory_type(buf.dtype)
        heap = buf.nbytes > STACK_LIMIT_BYTES
        if not heap:
            # allocas live in the entry block so loops do not grow the stack
            ptr = self.alloca_builder.alloca(etype, size=buf.size, name=buf.name)
            ptr.align = ALIGN
            ptr.type = PTR  # an opaque pointer, like the arguments (vector accesses use it)
        else:
            size = -(-buf.nbytes // ALIGN) * ALIGN
            alloc = self.ctx.declare("aligned_alloc", PTR, [I64, I64])
            ptr = self.b.call(
                alloc, [ir.Constant(I64, ALIGN), ir.Constant(I64, size)], name=buf.name
            )
            ok = self.fn.append_basic_block(f"alloc.{buf.name}.ok")
            isnull = self.b.icmp_unsigned("==", ptr, ir.Constant(PTR, None))
            self.b.cbranch(isnull, self.fail_block(), ok)
            self.b.position_at_end(ok)
        self.buffers[buf] = ptr
        self.own.add(buf)
        self.stmt(s.body)
        if buf.name in self.kept:  # a result nobody reads: make its stores observable
            escape = ir.InlineAsm(ir.FunctionType(ir.VoidType(), [PTR]), "", "r,~{memory}", True)
            self.b.call(escape, [ptr])
        del self.buffers[buf]
        self.own.discard(buf)
        if heap:
            self.b.call(self.ctx.declare("free", ir.VoidType(), [PTR]), [ptr])


def _power_of_two(n: int) -> int:
    """The smallest power of two >= ``n``."""
    return 1 << (n - 1).bit_length()


def _first_lanes(lanes: int, wide: int) -> ir.Constant:
    """The mask of a ``wide``-lane access whose first ``lanes`` lanes are on."""
    return ir.Constant(ir.VectorType(I1, wide), [k < lanes for k in range(wide)])
