"""Memory-access analysis of vectorized loops, on the loop IR (no LLVM here).

Inside a vectorized loop every access is one of: ``scalar`` (its address does not depend
on the lanes: one load, broadcast), ``contiguous`` (unit stride in the vector variable:
one vector load/store) or ``gather`` (anything else: gather/scatter). An access under a
lane-dependent condition is also ``masked``. The code generator and the legalisation
pass (``codegen.pipeline``) both ask these functions, so what the prepared IR says about
a loop is what the generator does with it.
"""

from __future__ import annotations

from ..dsl import expr as E
from ..dsl.dtypes import INDEX_MAX
from ..ir import nodes as N
from ..ir.simplify import linear_form, simplify_expr
from ..ir.visitor import post_order_visit, walk_stmts

#: Vectorized loops wider than this are emitted as scalar loops.
MAX_LANES = 256
#: A branch-free vectorized loop up to this width is one vector of its own width
MAX_WHOLE_LANES = 16

#: How an access inside a vectorized loop is done.
ACCESS_KINDS = ("scalar", "contiguous", "gather")


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
    if form is None:
        return False
    terms, lo = form
    hi = lo
    for term, coeff in terms.items():
        r = ranges.get(term) if isinstance(term, E.Var) else None
        if r is None:
            return False
        a, b = coeff * r[0], coeff * r[1]
        lo, hi = lo + min(a, b), hi + max(a, b)
    return 0 <= lo and hi < size


def const_int(e: E.PrimExpr) -> int | None:
    """The value of an integer constant, else None."""
    return int(e.value) if isinstance(e, E.IntImm) else None


def vector_chunks(lanes: int, body: N.Stmt) -> list[tuple[int, int]]:
    """(offset, width) pieces of a vectorized loop: one piece of the loop's own width
    when the body has no guard and no branch (LLVM's x86 backend widens a <7 x float> to
    one register), else powers of two (see ``vector_loop``)."""
    if lanes <= MAX_WHOLE_LANES and not _has_branch(body):
        return [(0, lanes)]
    return _pow2_chunks(lanes)


def _has_branch(body: N.Stmt) -> bool:
    """Does ``body`` contain a condition (an if, an if_then_else, a select)?"""
    found = []

    def visit(node) -> None:
        if isinstance(node, (N.IfThenElse, E.Select)) or (
            isinstance(node, E.Call) and node.op == "if_then_else"
        ):
            found.append(node)

    post_order_visit(body, visit)
    return bool(found)


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
