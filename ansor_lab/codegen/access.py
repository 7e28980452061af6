"""Memory-access analysis of vectorized loops, on the loop IR (no LLVM here).

Inside a vectorized loop every access is one of: ``scalar`` (its address does not depend
on the lanes: one load, broadcast), ``contiguous`` (unit stride in the vector variable:
one vector load/store) or ``gather`` (anything else: gather/scatter). An access under a
lane-dependent condition is also ``masked``. The code generator and the legalisation
pass (``codegen.pipeline``) both ask these functions, so what the prepared IR says about
a loop is what the generator does with it. ``AccessWalker`` lists a vector body's accesses
in emission order; ``codegen.vector_form`` reuses its walk to read the printed form back.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..dsl import dtypes, expr as E
from ..dsl.dtypes import INDEX_MAX
from ..ir import nodes as N
from ..ir.bound_check import form_range
from ..ir.simplify import linear_form, simplify_expr
from ..ir.visitor import walk_stmts

#: Vectorized loops wider than this are emitted as scalar loops.
MAX_LANES = 256
#: A vectorized loop up to this width is one vector of its own width; a wider one is
#: emitted in pieces (``vector_chunks``)
MAX_WHOLE_LANES = 16

#: How an access inside a vectorized loop is done ("strided": loads only, lanes 2-4
#: elements apart, read as one masked load of their span and a shuffle).
ACCESS_KINDS = ("scalar", "contiguous", "strided", "gather")

#: widest span a strided load reads at once (bytes): past it a gather is no worse
STRIDED_SPAN_BYTES = 256
_STRIDED_DTYPES = ("float32", "float64", "int32", "int64")


def strided_load_ok(stride: int, dtype: str, lanes: int) -> bool:
    """Whether a load whose lanes are ``stride`` elements apart is a strided load."""
    return (
        2 <= stride <= 4
        and dtype in _STRIDED_DTYPES
        and lanes * stride * dtypes.itemsize(dtype) <= STRIDED_SPAN_BYTES
    )


def load_stride(form: tuple | None, var: E.Var, varying: set) -> int | None:
    """The constant element distance between the lanes of an access whose flat index is
    linear in ``var`` with lane-invariant other terms (None otherwise)."""
    if form is None:
        return None
    terms, _ = form
    coeff = terms.get(var, 0)
    if not isinstance(coeff, int) or any(
        t is not var and bool(E.free_vars(t) & varying) for t in terms
    ):
        return None
    return coeff


def flat_index(buf: N.Buffer, indices: tuple) -> E.PrimExpr:
    """The element offset of ``buf[indices]`` as an expression (int32, int64 if any
    index is, or if the buffer has more elements than an int32 can count)."""
    wide = buf.size > INDEX_MAX
    terms = None
    for idx, stride in zip(indices, buf.strides):
        if wide and idx.dtype != "int64":
            idx = E.Cast(idx, "int64")
        sdt = "int64" if idx.dtype == "int64" else "int32"
        t = idx if stride == 1 else E.Mul(idx, E.IntImm(stride, sdt), idx.dtype)
        if t.dtype != "int32":
            t = E.Cast(t, "int64") if t.dtype != "int64" else t
        terms = t if terms is None else E.Add(terms, _match_int(t, terms), _wider(t, terms))
    return terms if terms is not None else E.IntImm(0)


#: (id(buffer), id(indices)) -> facts of that access. Shared by the legalisation pass and
#: the code generator, which analyse the same access nodes one after the other (the
#: analysis simplifies each access's offset: done twice, it cost a build 2-4%). Entries
#: hold the nodes, so their ids are not reused while cached; cleared past the cap.
_FACTS: dict = {}
_FACTS_CAP = 50_000


def flat_facts(buf: N.Buffer, indices: tuple) -> tuple:
    """(flat index, its variables, its linear form) of an access, worked out once per
    access node: the copies of an unrolled body, and the passes, share them."""
    key = (id(buf), id(indices))
    facts = _FACTS.get(key)
    if facts is None:
        flat = flat_index(buf, indices)
        facts = (
            buf,  # kept so that the ids in the key are not reused while the entry lives
            indices,
            flat,
            frozenset(E.free_vars(flat)),
            linear_form(simplify_expr(flat)),
        )
        if len(_FACTS) >= _FACTS_CAP:
            _FACTS.clear()
        _FACTS[key] = facts
    return facts[2:]


def classify(flat_vars: frozenset, form: tuple | None, var: E.Var, varying: set) -> str:
    """How an access is done in a loop vectorized over ``var`` (one of ``ACCESS_KINDS``);
    ``varying`` holds the variables whose values differ between lanes (``var`` and the
    lets bound to lane-dependent values)."""
    if not flat_vars & varying:
        return "scalar"
    if form is not None:
        terms, _ = form
        coeff = terms.get(var, 0)
        rest_varying = any(t is not var and bool(E.free_vars(t) & varying) for t in terms)
        if coeff == 1 and not rest_varying:
            return "contiguous"
    return "gather"


def in_bounds(form: tuple | None, ranges: dict, size: int) -> bool:
    """True when every element the linear ``form`` can address, with the variables in
    ``ranges`` (var -> (min, max)), lies inside a buffer of ``size`` elements."""
    span = form_range(form, ranges)
    return span is not None and 0 <= span[0] and span[1] < size


def const_int(e: E.PrimExpr) -> int | None:
    """The value of an integer constant, else None."""
    return int(e.value) if isinstance(e, E.IntImm) else None


def vector_chunks(lanes: int, register_lanes: int = MAX_WHOLE_LANES) -> list[tuple[int, int]]:
    """(offset, width) pieces of a vectorized loop of ``lanes``: up to ``MAX_WHOLE_LANES``
    (or one register of the target, ``register_lanes``, when that is narrower) one piece
    of the loop's own width (LLVM's x86 backend widens a <7 x float> to one register);
    wider, powers of two over the whole groups of that width and the rest as one piece
    (44 = 32 + 12 with AVX-512's 16 lanes; 32 + 8 + 4 with AVX2's 8).

    Only the width and the target decide, never the body: the statements of one register
    tile (its zeroing, its padded multiply-add) must cut a row alike, or LLVM cannot
    forward a 12-lane store to an 8- and a 4-lane load and keeps the accumulators in
    memory. On AVX-512 a 28-lane row is 16 + 12, two registers an operation, where
    16 + 8 + 4 took three (a depthwise convolution's 2 x 28 tile spent a third of its
    multiply-adds on the narrow pieces). On AVX2 a piece wider than a register must be
    whole registers: LLVM carries a <12 x float> or <14 x float> accumulator across a loop
    lane by lane (a 192^3 matmul's 4 x 12 tile: 72 single-lane inserts, 13 GFLOPS; cut
    8 + 4, 44; 4 x 14 as 8 + 6: 10 against 55). No mask is wider than
    ``MAX_WHOLE_LANES``: one as wide as <48 x i1> living across blocks makes LLVM
    scalarize every select and masked access that uses it."""
    whole_lanes = max(1, min(MAX_WHOLE_LANES, register_lanes))
    if lanes <= whole_lanes:
        return [(0, lanes)]
    whole = lanes - lanes % whole_lanes
    tail = [(whole, lanes - whole)] if whole < lanes else []
    return _pow2_chunks(whole) + tail


def planned_chunks(loop: N.For, key: str = "llvm.vectorize") -> list[tuple[int, int]]:
    """The pieces ``codegen.pipeline`` planned for the vectorized ``loop`` (its mark
    ``x28 (16+8+4): ...`` names them; ``vector_chunks`` for the target decided them), so
    the view, the generator and the NaN flags cut the row as the plan did."""
    lanes = const_int(loop.extent)
    mark = loop.annotation(key)
    found = re.match(r"x(\d+) \(([\d+]+)\)", mark) if isinstance(mark, str) else None
    if lanes is None or found is None or int(found.group(1)) != lanes:
        return vector_chunks(lanes) if lanes is not None else []
    out, offset = [], 0
    for width in (int(w) for w in found.group(2).split("+")):
        out.append((offset, width))
        offset += width
    return out if offset == lanes else vector_chunks(lanes)


def _pow2_chunks(lanes: int) -> list[tuple[int, int]]:
    """(offset, width) pieces of ``lanes``, powers of two, widest first: 56 -> 32, 16, 8."""
    out, offset = [], 0
    while offset < lanes:
        n = 1 << ((lanes - offset).bit_length() - 1)
        out.append((offset, n))
        offset += n
    return out


def loop_bounds(s: N.For) -> tuple[int, int] | None:
    """(first, last) value of a loop's variable when its bounds are constants."""
    lo, ext = const_int(s.min), const_int(s.extent)
    return None if lo is None or ext is None or ext < 1 else (lo, lo + ext - 1)


def _wider(a: E.PrimExpr, b: E.PrimExpr) -> str:
    return "int64" if "int64" in (a.dtype, b.dtype) else "int32"


def _match_int(t: E.PrimExpr, other: E.PrimExpr) -> E.PrimExpr:
    if _wider(t, other) == "int64" and t.dtype != "int64":
        return E.Cast(t, "int64")
    return t


def not_vectorizable(s: N.For, extent: int | None) -> str | None:
    """Why a vectorized loop must stay scalar, or None when SIMD code can be made."""
    if extent is None:
        return "extent is not a constant"
    if extent < 2 or extent > MAX_LANES:
        return f"extent {extent} outside 2..{MAX_LANES}"
    for node in walk_stmts(s.body):
        if isinstance(node, (N.For, N.Allocate)):
            return "its body contains a loop or an allocation"
    return None


@dataclass(frozen=True)
class Access:
    """One memory access of a vectorized loop body, as the generator will do it."""

    op: str  # "load" | "store"
    buffer: str
    kind: str  # one of ACCESS_KINDS
    masked: bool = False  # under a lane-dependent condition

    def __str__(self) -> str:
        kind = "scatter" if self.op == "store" and self.kind == "gather" else self.kind
        return f"{self.op} {self.buffer} {kind}" + (" masked" if self.masked else "")


class AccessWalker:
    """Lists a vector body's accesses in the order the generator emits them, tracking
    which variables are lane-dependent and where a lane mask is on (as the generator).

    ``varies`` and ``store_kind``/``kind`` are the hooks: ``codegen.vector_form`` reads
    its printed vector statements back with the same walk and its own hooks."""

    def __init__(self, var: E.Var | None, lanes: int | None = None) -> None:
        self.var = var
        self.lanes = lanes  # the widest chunk: whether a small stride is a strided load
        self.varying = {var}
        self.found: list[Access] = []

    def varies(self, e: E.PrimExpr) -> bool:
        return bool(E.free_vars(e) & self.varying)

    def kind(self, buf: N.Buffer, indices: tuple) -> str:
        _, flat_vars, form = flat_facts(buf, indices)
        return classify(flat_vars, form, self.var, self.varying)

    def load_kind(self, buf: N.Buffer, indices: tuple) -> str:
        kind = self.kind(buf, indices)
        if kind == "gather" and self.lanes is not None:
            _, _, form = flat_facts(buf, indices)
            stride = load_stride(form, self.var, self.varying)
            if stride is not None and strided_load_ok(stride, buf.dtype, self.lanes):
                return "strided"
        return kind

    def store_kind(self, s: N.BufferStore) -> str:
        kind = self.kind(s.buffer, s.indices)
        if kind == "scalar" and self.varies(s.value):
            kind = "gather"  # one address, every lane writes it: a scatter
        return kind

    def expr(self, e: E.PrimExpr, masked: bool) -> None:
        if isinstance(e, N.BufferLoad):
            for i in e.indices:  # an index may load too (emitted with the address)
                self.expr(i, masked)
            kind = self.load_kind(e.buffer, e.indices)
            self.found.append(Access("load", e.buffer.name, kind, masked))
            return
        if isinstance(e, E.Call) and e.op == "if_then_else":
            cond, t, f = e.args
            self.expr(cond, masked)
            inner = masked or self.varies(cond)
            self.expr(t, inner)
            self.expr(f, inner)
            return
        for child in E.children(e):
            self.expr(child, masked)

    def stmt(self, s: N.Stmt, masked: bool) -> None:
        if isinstance(s, N.BufferStore):
            self.expr(s.value, masked)
            for i in s.indices:
                self.expr(i, masked)
            self.found.append(Access("store", s.buffer.name, self.store_kind(s), masked))
        elif isinstance(s, N.LetStmt):
            self.expr(s.value, masked)
            if self.varies(s.value):
                self.varying.add(s.var)
            self.stmt(s.body, masked)
        elif isinstance(s, N.IfThenElse):
            self.expr(s.condition, masked)
            inner = masked or self.varies(s.condition)
            self.stmt(s.then_case, inner)
            if s.else_case is not None:
                self.stmt(s.else_case, inner)
        elif isinstance(s, N.SeqStmt):
            for item in s.seq:
                self.stmt(item, masked)
        elif isinstance(s, N.Block):
            self.stmt(s.body, masked)
        elif isinstance(s, N.Evaluate):
            self.expr(s.value, masked)
